/* search.c: a searching sweep's log of proposals and results in DIR/search/ (search.h,
 * docs/sweep-dir.md, "Search"): evolution's (sweep/evolve.h) or bo's (sweep/bo.h). */
#include "sweep/search.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "analysis/analysis.h"
#include "sweep/prefilter.h"
#include "sweep/sweep.h"
#include "sweep/sweep_impl.h"
#include "sweep/sweep_read.h"

void dse_search_log_free(struct dse_search_log *lg) {
    free(lg->prop);
    free(lg->res);
    free(lg->part);
    free(lg->text);
    memset(lg, 0, sizeof *lg);
}

void dse_search_evo_opts(const struct dse_space *s, struct dse_evo_opts *o) {
    dse_evo_opts_default(o);
    o->seed = s->search.seed;
    o->pop = s->search.pop ? s->search.pop : dse_evo_pop_for_budget(dse_search_budget_candidates(s));
    o->n_obj = 1 + s->search.n_obj;
}

/* The feasible candidates of s, *n, and those whose network does not build, *broken (a
 * build error is not a failure here: the sweep says it); 0 if the grid is larger than
 * DSE_EVO_SCAN_MAX (not counted), else 1. */
static int count_feasible(const struct dse_space *s, uint64_t *n, uint64_t *broken) {
    *n = 0, *broken = 0;
    if (s->count_overflow || s->count > DSE_EVO_SCAN_MAX) return 0;
    for (uint64_t k = 0; k < s->count; k++) {
        struct dse_cost_totals one;
        int64_t mem;
        int pruned = 1;
        struct dse_err e = { 0 };
        if (dse_sweep_prefilter(s, k, &one, &mem, &pruned, &e)) (*broken)++;
        else *n += !pruned;
    }
    return 1;
}

enum dse_strategy dse_search_auto(const struct dse_space *s, int64_t budget, char *why, int why_size) {
    uint64_t n, broken;
    char b[64], dummy[8];
    if (!why || why_size < 1) why = dummy, why_size = (int)sizeof dummy;
    const int counted = count_feasible(s, &n, &broken);
    const enum dse_evo_cost first = (enum dse_evo_cost)s->search.obj[0];
    if (budget > 0) snprintf(b, sizeof b, "the budget of %lld", (long long)budget);
    else snprintf(b, sizeof b, "budget_hours");
    if (budget > 0 && counted && !broken && (uint64_t)budget >= n) {
        snprintf(why, (size_t)why_size, "%s covers all %llu feasible candidates of the grid of %llu: each trains once",
                 b, (unsigned long long)n, (unsigned long long)s->count);
        return DSE_SEARCH_GRID;
    }
    if (!counted) { /* counted only up to DSE_EVO_SCAN_MAX */
        char c[32] = "more than 2^64";
        if (!s->count_overflow) snprintf(c, sizeof c, "%llu", (unsigned long long)s->count);
        snprintf(why, (size_t)why_size, "the grid of %s candidates is larger than bo's pool (%d): evolution's moves "
                 "reach all of it", c, DSE_BO_SCAN_MAX);
        return DSE_SEARCH_EVOLUTION;
    }
    if (dse_evo_cost_measured(first)) {
        snprintf(why, (size_t)why_size, "the first objective, %s, is measured after training, which bo cannot model",
                 dse_evo_cost_name(first));
        return DSE_SEARCH_EVOLUTION;
    }
    if (s->count > DSE_BO_SCAN_MAX) {
        snprintf(why, (size_t)why_size, "the grid of %llu candidates (%llu feasible) is larger than bo's pool (%d): "
                 "evolution's moves reach all of it", (unsigned long long)s->count, (unsigned long long)n,
                 DSE_BO_SCAN_MAX);
        return DSE_SEARCH_EVOLUTION;
    }
    if (budget > DSE_BO_MODEL_MAX) {
        snprintf(why, (size_t)why_size, "%s is more than bo's model holds (%d points)", b,
                 DSE_BO_MODEL_MAX);
        return DSE_SEARCH_EVOLUTION;
    }
    snprintf(why, (size_t)why_size, "%s %s the %llu feasible candidates, and bo's model sees the whole grid "
             "of %llu: it spends a small budget best", b, budget > 0 ? "is less than" : "may not cover",
             (unsigned long long)n, (unsigned long long)s->count);
    return DSE_SEARCH_BO;
}

/* Append to said what fits. */
__attribute__((format(printf, 3, 4)))
static void say(char *said, int size, const char *fmt, ...) {
    if (!said || size < 1) return;
    size_t len = strlen(said);
    va_list ap;
    va_start(ap, fmt);
    if (len < (size_t)size) vsnprintf(said + len, (size_t)size - len, fmt, ap);
    va_end(ap);
}

enum dse_status dse_search_resolve(struct dse_space *s, char *said, int said_size, struct dse_err *err) {
    enum dse_status st;
    if (said && said_size > 0) said[0] = '\0';
    const int64_t budget = dse_search_budget_candidates(s);
    if (s->search.strategy == DSE_SEARCH_AUTO) {
        char why[400];
        const enum dse_strategy to = dse_search_auto(s, budget, why, (int)sizeof why);
        say(said, said_size, "search: strategy auto chose %s: %s\n", dse_strategy_str(to), why);
        if (to != DSE_SEARCH_BO && s->search.min_top1_line) { /* said, then dropped: nothing uses it */
            say(said, said_size, "search: min_top1 (line %d) is bo's reference; %s does not use it\n",
                s->search.min_top1_line, dse_strategy_str(to));
            s->search.min_top1_line = 0;
        }
        if ((st = dse_space_set_strategy(s, to, err))) return st;
    }
    if (s->search.strategy == DSE_SEARCH_EVOLUTION && budget > 0) {
        struct dse_evo_opts o;
        dse_search_evo_opts(s, &o);
        if (s->search.pop && s->search.pop > dse_evo_pop_for_budget(budget))
            say(said, said_size, "search: pop = %d is more than a third of the budget of %lld: its first %d "
                "proposals are a random sample, %lld evolved (without pop: %d)\n", s->search.pop, (long long)budget,
                (int64_t)s->search.pop < budget ? s->search.pop : (int)budget,
                (long long)(budget > s->search.pop ? budget - s->search.pop : 0), dse_evo_pop_for_budget(budget));
        else if (!s->search.pop)
            say(said, said_size, "search: evolution's population is %d: a third of the budget of %lld, within %d "
                "to %d\n", o.pop, (long long)budget, DSE_EVO_POP_MIN, DSE_EVO_POP);
    }
    if (s->search.strategy == DSE_SEARCH_BO) {
        char v[40];
        dse_fmt_shortest(v, sizeof v, s->search.min_top1, 0);
        say(said, said_size, s->search.min_top1_line ? "search: bo maximizes the hypervolume above top-1 %s "
            "(min_top1)\n" : "search: bo values every result above the lowest top-1 it has seen; if only networks "
            "above some top-1 interest you, say so with min_top1 = 0.7 (say) in the search section: at small "
            "budgets that pays (docs/space-format.md)\n%s", s->search.min_top1_line ? v : "");
    }
    return DSE_OK;
}

void dse_search_bo_opts(const struct dse_space *s, struct dse_bo_opts *o) {
    dse_bo_opts_default(o);
    o->seed = s->search.seed;
    o->budget = dse_search_budget_candidates(s);
    o->cost = (enum dse_evo_cost)s->search.obj[0];
    if (s->search.min_top1_line) o->ref_top1 = s->search.min_top1;
}

enum dse_status dse_search_propose(const struct dse_space *s, const struct dse_evo_result *res, int n_res,
                                   const struct dse_bo_partial *part, int n_part, const uint64_t *excl, int n_excl,
                                   int k, uint64_t *out, int *n_out, struct dse_err *err) {
    if (s->search.strategy == DSE_SEARCH_BO) {
        struct dse_bo_opts o;
        dse_search_bo_opts(s, &o);
        o.part = part, o.n_part = n_part;
        return dse_bo_propose(s, &o, res, n_res, excl, n_excl, k, out, n_out, err);
    }
    struct dse_evo_opts o;
    dse_search_evo_opts(s, &o);
    return dse_evo_propose(s, &o, res, n_res, excl, n_excl, k, out, n_out, err);
}

/* The highest gen of dir/search/log-<gen>; 0 if none. */
static int64_t latest_gen(const char *dir) {
    char path[4200];
    int64_t best = 0;
    snprintf(path, sizeof path, "%s/search", dir);
    DIR *d = opendir(path);
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        if (strncmp(e->d_name, "log-", 4)) continue;
        long long g = strtoll(e->d_name + 4, &end, 10);
        if (*end || g < 1) continue;
        if (g > best) best = g;
    }
    closedir(d);
    return best;
}

static void log_path(const char *dir, int64_t gen, char *buf, int size) {
    snprintf(buf, (size_t)size, "%s/search/log-%lld", dir, (long long)gen);
}

static enum dse_status bad_line(struct dse_err *err, const char *path, int line, const char *what) {
    return dse_err_set(err, DSE_ERR_CONFIG, path, line, "%s; expected the search log of docs/sweep-dir.md", what);
}

/* Room for twice *cap (64 at first) elements of size at *p. -1 if out of memory. */
static int grow(void **p, int *cap, size_t size) {
    const int c = *cap ? *cap * 2 : 64;
    void *q = realloc(*p, size * (size_t)c);
    if (!q) return -1;
    *p = q, *cap = c;
    return 0;
}

/* Parse text (the log of gen) into lg. */
static enum dse_status parse(const char *path, char *text, size_t len, int64_t gen, struct dse_search_log *lg,
                             struct dse_err *err) {
    int line = 0, cap_p = 0, cap_r = 0, cap_q = 0;
    memset(lg, 0, sizeof *lg);
    lg->gen = gen, lg->text = text, lg->len = len;
    for (char *p = text; p && *p; line++) {
        char *nl = strchr(p, '\n');
        if (!nl) return bad_line(err, path, line + 1, "the last line is not ended");
        *nl = '\0';
        char id[64];
        unsigned long long idx;
        int n;
        if (line == 0) {
            if (strncmp(p, "dse-search-1 ", 13)) return bad_line(err, path, 1, "not a dse-search-1 log");
            size_t w = strcspn(p + 13, " ");
            if (w >= sizeof lg->strategy) return bad_line(err, path, 1, "a strategy's name too long");
            memcpy(lg->strategy, p + 13, w);
            lg->strategy[w] = '\0';
            const char *o = strstr(p, " objectives=top1"); /* put_header's format */
            if (!o) return bad_line(err, path, 1, "no objectives=top1,... in the header");
            const char *pp = strstr(p, " pop=");
            if (pp) lg->pop = atoi(pp + 5);
            for (o += strlen(" objectives=top1"); *o == ',' && lg->n_cost < DSE_SEARCH_OBJ_MAX; lg->n_cost++) {
                size_t k = strcspn(++o, ", ");
                if (!k || k >= sizeof lg->cost[0]) return bad_line(err, path, 1, "an objective's name is empty or too long");
                memcpy(lg->cost[lg->n_cost], o, k);
                lg->cost[lg->n_cost][k] = '\0';
                o += k;
            }
        } else if (!strncmp(p, "step ", 5) || !strncmp(p, "end ", 4) || !strncmp(p, "last ", 5)) {
            lg->ended |= p[0] == 'e';
            if (p[0] == 'l' && !lg->closed) lg->closed = strcmp(p, "last exhausted") ? 1 : 2;
            if (p[0] == 'e' && !lg->closed) lg->closed = 1;
        } else if (!strncmp(p, "rung ", 5)) { /* rung ID INDEX EPOCH OF TOP1 */
            int epoch, of, k = -1;
            char *end;
            if (sscanf(p, "rung %63s %llu %d %d%n", id, &idx, &epoch, &of, &n) != 4 || p[n] != ' ')
                return bad_line(err, path, line + 1, "a rung line that is not rung ID INDEX EPOCH OF TOP1");
            double t = strtod(p + n + 1, &end);
            for (int i = 0; i < lg->n_prop && k < 0; i++)
                if (!strcmp(lg->prop[i].id, id)) k = i;
            if (*end || end == p + n + 1 || !isfinite(t) || k < 0 || lg->prop[k].recorded || lg->prop[k].index != idx ||
                epoch < 1 || epoch >= of || (lg->n_part && of != lg->part[0].of) || strcmp(lg->strategy, "bo"))
                return bad_line(err, path, line + 1, "a rung result of no pending proposal, not at a rung below the "
                                "schedule's epochs (one schedule for all), or in a search other than bo's");
            for (int i = 0; i < lg->n_part; i++)
                if (lg->part[i].index == idx && lg->part[i].epoch == epoch)
                    return bad_line(err, path, line + 1, "a rung result recorded twice");
            if (lg->n_part == cap_q && grow((void **)&lg->part, &cap_q, sizeof *lg->part))
                return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            lg->part[lg->n_part++] = (struct dse_bo_partial){ .index = idx, .epoch = epoch, .of = of, .top1 = t };
        } else if (sscanf(p, "propose %63s %llu%n", id, &idx, &n) == 2 && !p[n] && dse_space_id_valid(id)) {
            if (lg->n_prop == cap_p && grow((void **)&lg->prop, &cap_p, sizeof *lg->prop))
                return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            struct dse_search_prop *pr = &lg->prop[lg->n_prop++];
            memset(pr, 0, sizeof *pr);
            dse_strlcpy(pr->id, id, sizeof pr->id);
            pr->index = idx;
        } else if (sscanf(p, "result %63s %llu%n", id, &idx, &n) == 2) {
            int k = -1;
            for (int i = 0; i < lg->n_prop && k < 0; i++)
                if (!strcmp(lg->prop[i].id, id)) k = i;
            if (k < 0 || lg->prop[k].recorded || lg->prop[k].index != idx)
                return bad_line(err, path, line + 1, "a result of no proposal, or recorded twice");
            if (lg->n_res == cap_r && grow((void **)&lg->res, &cap_r, sizeof *lg->res))
                return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            struct dse_evo_result *r = &lg->res[lg->n_res++];
            memset(r, 0, sizeof *r);
            r->index = idx;
            for (int o = 0; o < DSE_EVO_OBJ_MAX; o++) r->obj[o] = NAN;
            char *q = p + n;
            for (int o = 0; o < DSE_EVO_OBJ_MAX && *q == ' '; o++) {
                char *end;
                q++;
                if (!strncmp(q, "null", 4)) r->obj[o] = NAN, end = q + 4;
                else r->obj[o] = strtod(q, &end);
                if (end == q) return bad_line(err, path, line + 1, "a result's objective is not a number");
                q = end;
            }
            if (*q) return bad_line(err, path, line + 1, "a result line does not end after its objectives");
            lg->prop[k].recorded = 1;
        } else {
            return bad_line(err, path, line + 1, "a line that is none of step, propose, rung, result, last, end");
        }
        p = nl + 1;
    }
    /* the text again, whole, for the next gen */
    for (size_t i = 0; i < len; i++)
        if (!text[i]) text[i] = '\n';
    return DSE_OK;
}

enum dse_status dse_search_read(const char *dir, struct dse_search_log *lg, struct dse_err *err) {
    memset(lg, 0, sizeof *lg);
    for (int tries = 0; tries < 100; tries++) {
        int64_t gen = latest_gen(dir);
        char path[4300], *text;
        size_t len;
        struct dse_err e = { 0 };
        if (!gen) return DSE_OK;
        log_path(dir, gen, path, sizeof path);
        enum dse_status st = dse_fs_read(path, &text, &len, &e);
        if (st && access(path, F_OK) != 0) continue; /* removed since: a newer one exists */
        if (st) {
            if (err) *err = e;
            return st;
        }
        if ((st = parse(path, text, len, gen, lg, err))) {
            dse_search_log_free(lg);
            return st;
        }
        return DSE_OK;
    }
    return dse_err_set(err, DSE_ERR_IO, dir, 0, "search/: the log kept changing under this reader");
}

enum dse_status dse_search_files(const struct dse_space *s, const char *dir, const struct dse_search_log *lg,
                                 struct dse_err *err) {
    enum dse_status st;
    for (int i = 0; i < lg->n_prop; i++)
        for (int r = 0; r < s->replicates; r++) { /* a proposal is trained once per replicate */
            char path[4300], id[DSE_ID_SIZE];
            dse_strlcpy(id, lg->prop[i].id, sizeof id);
            dse_space_id_replicate(id, r);
            snprintf(path, sizeof path, "%s/candidates/%s.json", dir, id);
            if (access(path, F_OK) == 0) continue;
            int existed;
            if ((st = dse_sweep_candidate_create(s, dir, lg->prop[i].index, r, &existed, err))) return st;
        }
    return DSE_OK;
}

/* Append to buf (grown as needed). */
struct buf {
    char  *p;
    size_t n, cap;
};

__attribute__((format(printf, 2, 3)))
static int put(struct buf *b, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return -1;
        if (b->p && b->n + (size_t)n < b->cap) {
            b->n += (size_t)n;
            return 0;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *q = realloc(b->p, cap);
        if (!q) return -1;
        b->p = q, b->cap = cap;
    }
}

static void put_num(struct buf *b, double v) {
    if (isfinite(v)) put(b, " %.17g", v);
    else put(b, " null");
}

/* s, or a copy of it in *tmp whose pop is lg's header's: the population an evolution
 * search began with stays its population (dse_evo_pop_for_budget's rule, or pop, may have
 * changed since). */
static const struct dse_space *log_space(const struct dse_space *s, const struct dse_search_log *lg,
                                         struct dse_space *tmp) {
    if (s->search.strategy != DSE_SEARCH_EVOLUTION || lg->pop < 1) return s;
    *tmp = *s;
    tmp->search.pop = lg->pop;
    return tmp;
}

/* Write gen (lg->gen + 1) = lg's text + add. *won = 1 if this worker's link made it. */
static enum dse_status commit(const char *dir, const struct dse_search_log *lg, const struct buf *add, int *won,
                              struct dse_err *err) {
    char path[4300];
    struct buf all = { 0 };
    enum dse_status st;
    int existed = 0;
    if (put(&all, "%.*s%.*s", (int)lg->len, lg->text ? lg->text : "", (int)add->n, add->p ? add->p : ""))
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    snprintf(path, sizeof path, "%s/search", dir);
    if ((st = dse_fs_mkdirs(path, err))) goto out;
    log_path(dir, lg->gen + 1, path, sizeof path);
    if ((st = dse_fs_create_atomic(path, all.p, all.n, &existed, err))) goto out;
    *won = !existed;
    if (*won && latest_gen(dir) > lg->gen + 1) {
        /* this worker read its log so long ago that gen + 1 had come and gone (removed
         * below): its file is stale; take it back, as a lease claimer acting on an old view
         * backs off */
        unlink(path);
        *won = 0;
    }
    if (*won) /* the old gens are whole copies of a prefix of this one: keep the one before */
        for (int64_t g = lg->gen - 1; g >= 1; g--) {
            log_path(dir, g, path, sizeof path);
            if (unlink(path) != 0 && errno == ENOENT) break;
        }
out:
    free(all.p);
    return st;
}

static void put_header(struct buf *b, const struct dse_space *s) {
    struct dse_evo_opts o;
    dse_search_evo_opts(s, &o); /* the population evolution uses (given, or from the budget) */
    put(b, "dse-search-1 %s seed=%llu pop=%d budget=%lld objectives=top1", dse_strategy_str(s->search.strategy),
        (unsigned long long)s->search.seed, o.pop, (long long)s->search.budget);
    for (int i = 0; i < s->search.n_obj; i++) put(b, ",%s", dse_evo_cost_name((enum dse_evo_cost)s->search.obj[i]));
    if (s->search.budget_epochs) put(b, " budget_epochs=%lld", (long long)s->search.budget_epochs);
    if (s->search.budget_hours > 0) put(b, " budget_hours=%g", s->search.budget_hours);
    if (s->search.strategy == DSE_SEARCH_BO && s->search.min_top1_line) put(b, " min_top1=%.17g", s->search.min_top1);
    put(b, "\n");
}

int64_t dse_search_budget_candidates(const struct dse_space *s) {
    int64_t n = s->search.budget ? s->search.budget : INT64_MAX;
    if (s->search.budget_epochs && s->train.epochs > 0) { /* dse_space_load refuses it otherwise */
        int64_t e = s->search.budget_epochs / ((int64_t)s->train.epochs * s->replicates);
        if (e < n) n = e;
    }
    return n == INT64_MAX ? 0 : n;
}

/* plan's rungs when it is asha's (0: none). */
static int asha_rungs(const struct dse_sweep_plan *plan) {
    return plan && plan->halving == DSE_SWEEP_HALVING_ASHA ? plan->n_rungs : 0;
}

/* With asha: the epochs candidate id (of dir), which has trained `done`, is training to or
 * waits at: the first rung at or past done, or, where it has been promoted there (its
 * architecture's file in rungs/asha-<k>/), the next one, else the schedule's end. */
static int next_rung(const char *dir, const struct dse_sweep_plan *plan, const char *id, int done) {
    char arch[DSE_ID_SIZE], path[4400];
    dse_asha_arch(id, arch);
    for (int k = 0; k < plan->n_rungs; k++) {
        if (plan->rungs[k] < done) continue;
        snprintf(path, sizeof path, "%s/rungs/asha-%d/%s", dir, k, arch);
        if (plan->rungs[k] > done || access(path, F_OK) != 0) return plan->rungs[k];
    }
    return plan->epochs;
}

/* What the proposals of lg have spent, replicates included, as rec_of knows their records:
 * *epochs, each record's planned epochs (epochs done where it has ended; the space's
 * train.epochs where nothing is known yet), so that a proposal is made only when its
 * epochs fit; *seconds, training time so far. */
static void budget_spent(const struct dse_space *s, const char *dir, const struct dse_search_log *lg,
                         const struct dse_sweep_plan *plan,
                         const struct dse_rec *(*rec_of)(void *arg, const char *id), void *arg, int64_t *epochs,
                         double *seconds) {
    *epochs = 0, *seconds = 0;
    for (int i = 0; i < lg->n_prop; i++)
        for (int k = 0; k < s->replicates; k++) {
            char id[DSE_ID_SIZE];
            dse_strlcpy(id, lg->prop[i].id, sizeof id);
            dse_space_id_replicate(id, k);
            const struct dse_rec *r = rec_of(arg, id);
            int e = s->train.epochs;
            if (r && dse_rec_final(r)) e = r->epochs_done;
            else if (asha_rungs(plan)) e = next_rung(dir, plan, id, r ? r->n_epochs : 0);
            else if (r && r->epochs_planned > e) e = r->epochs_planned;
            *epochs += e;
            if (r && r->train_seconds > 0) *seconds += r->train_seconds;
        }
}

/* Proposal p's top-1 at each rung of plan (its first n_rungs) that all its replicates have
 * reached and part[0 .. *n_part) does not hold yet, as their files say it, the mean over the
 * replicates (as asha ranks the architecture): appended to part[] and as "rung" lines to
 * add; *added counts them. A rung where a replicate has no top-1 (diverged) ends the list. */
static enum dse_status rung_results(const struct dse_space *s, const char *dir, const struct dse_sweep_plan *plan,
                                    int n_rungs, const struct dse_search_prop *p,
                                    const struct dse_rec *(*rec_of)(void *arg, const char *id), void *arg,
                                    struct dse_bo_partial *part, int *n_part, struct buf *add, int *added,
                                    struct dse_err *err) {
    const int reps = s->replicates;
    int reached = plan->epochs, read = 0;
    char id[DSE_TRAIN_REPLICATES_MAX][DSE_ID_SIZE];
    for (int k = 0; k < reps; k++) { /* the epochs every replicate has (as this worker knows them) */
        dse_strlcpy(id[k], p->id, sizeof id[k]);
        dse_space_id_replicate(id[k], k);
        const struct dse_rec *at = rec_of(arg, id[k]);
        if (!at) return DSE_OK;
        if (at->n_epochs < reached) reached = at->n_epochs;
    }
    struct dse_rec *rr = calloc((size_t)(reps > 0 ? reps : 1), sizeof *rr);
    if (!rr) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int k = 0; k < reps; k++) dse_rec_init(&rr[k]);
    enum dse_status st = DSE_OK;
    for (int r = 0; r < n_rungs && reached >= plan->rungs[r] && !st; r++) {
        const int e = plan->rungs[r];
        int have = 0;
        for (int j = 0; j < *n_part && !have; j++) have = part[j].index == p->index && part[j].epoch == e;
        if (have) continue;
        for (int k = 0; k < reps && !read && !st; k++) st = dse_rec_read(dir, id[k], &rr[k], err);
        read = 1;
        if (st) break;
        const struct dse_rec *rp[DSE_TRAIN_REPLICATES_MAX];
        for (int k = 0; k < reps; k++) rp[k] = &rr[k];
        const double t = dse_asha_rung_top1(rp, reps, e); /* as asha ranks the architecture */
        if (!isfinite(t)) break;
        part[(*n_part)++] = (struct dse_bo_partial){ .index = p->index, .epoch = e, .of = plan->epochs, .top1 = t };
        put(add, "rung %s %llu %d %d %.17g\n", p->id, (unsigned long long)p->index, e, plan->epochs, t);
        (*added)++;
    }
    for (int k = 0; k < reps; k++) dse_rec_deinit(&rr[k]);
    free(rr);
    return st;
}

enum dse_status dse_search_start(const struct dse_space *s, const char *dir, int *n_prop, struct dse_err *err) {
    struct dse_search_log lg;
    enum dse_status st;
    if ((st = dse_search_read(dir, &lg, err))) return st;
    if (!lg.gen) {
        int64_t b = dse_search_budget_candidates(s);
        /* the first proposals at once: evolution's population, bo's initial design */
        struct dse_evo_opts o;
        dse_search_evo_opts(s, &o);
        const int first = s->search.strategy == DSE_SEARCH_BO ? dse_bo_n_init(b) : o.pop;
        int k = b && b < first ? (int)b : first, n = 0;
        uint64_t *out = malloc(sizeof *out * (size_t)(k ? k : 1));
        struct buf add = { 0 };
        int won;
        if (!out) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        st = dse_search_propose(s, NULL, 0, NULL, 0, NULL, 0, k, out, &n, err);
        struct dse_search_log empty = { 0 };
        put_header(&add, s);
        put(&add, "step 1\n");
        for (int i = 0; !st && i < n; i++) {
            struct dse_mp mp;
            char id[DSE_ID_SIZE];
            dse_space_candidate(s, out[i], &mp);
            dse_space_id(&mp, id);
            put(&add, "propose %s %llu\n", id, (unsigned long long)out[i]);
        }
        if (!st && n == 0) put(&add, "end exhausted\n");
        if (!st && !add.p) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        if (!st) st = commit(dir, &empty, &add, &won, err);
        free(out);
        free(add.p);
        if (st || (st = dse_search_read(dir, &lg, err))) return st;
    }
    st = dse_search_files(s, dir, &lg, err);
    *n_prop = lg.n_prop;
    dse_search_log_free(&lg);
    return st;
}

enum dse_status dse_search_step(const struct dse_space *s, const char *dir, const struct dse_sweep_plan *plan,
                                const struct dse_rec *(*rec_of)(void *arg, const char *id), void *arg,
                                int *changed, char *what, int what_size, struct dse_err *err) {
    struct dse_search_log lg;
    enum dse_status st;
    struct buf add = { 0 };
    char said[300] = "";
    *changed = 0;
    if (what && what_size > 0) what[0] = '\0';
    if ((st = dse_search_read(dir, &lg, err))) return st;
    if (!lg.gen || lg.ended) goto out;
    const int n_cost = s->search.n_obj;
    enum dse_evo_cost costs[DSE_SEARCH_OBJ_MAX];
    for (int i = 0; i < n_cost; i++) costs[i] = (enum dse_evo_cost)s->search.obj[i];
    /* results: the log's, then those newly final, in the proposals' order */
    struct dse_evo_result *res = malloc(sizeof *res * (size_t)(lg.n_prop + 1));
    uint64_t *excl = malloc(sizeof *excl * (size_t)(lg.n_prop + 1));
    const int n_rungs = asha_rungs(plan);
    struct dse_bo_partial *part = malloc(sizeof *part * (size_t)(lg.n_part + lg.n_prop * n_rungs + 1));
    if (!res || !excl || !part) {
        free(res), free(excl), free(part);
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto out;
    }
    int n_res = lg.n_res, n_excl = 0, newly = 0, n_part = lg.n_part, rungs_new = 0;
    if (lg.n_res) memcpy(res, lg.res, sizeof *res * (size_t)lg.n_res); /* lg.res is NULL before any result */
    if (lg.n_part) memcpy(part, lg.part, sizeof *part * (size_t)lg.n_part);
    put(&add, "step %lld\n", (long long)lg.gen + 1);
    for (int i = 0; i < lg.n_prop; i++) {
        const struct dse_search_prop *p = &lg.prop[i];
        if (p->recorded) continue;
        /* asha: its top-1 at each rung it has reached, once, as its files say it */
        if (n_rungs && (st = rung_results(s, dir, plan, n_rungs, p, rec_of, arg, part, &n_part, &add, &rungs_new, err)))
            goto free_out;
        /* every replicate's result as its file says it (a worker's own record of what it
         * trained holds top-1 unrounded; the file, the shortest form of the float: every
         * reader agrees); recorded once all are final, top-1 their mean (NaN if one has none) */
        double top1[DSE_TRAIN_REPLICATES_MAX] = { 0 }, lat[DSE_TRAIN_REPLICATES_MAX] = { 0 }, mean, sd,
               comp[DSE_TRAIN_REPLICATES_MAX] = { 0 };
        int    final = 1, n_ok;
        for (int k = 0; k < s->replicates && final; k++) {
            char id[DSE_ID_SIZE];
            dse_strlcpy(id, p->id, sizeof id);
            dse_space_id_replicate(id, k);
            const struct dse_rec *seen = rec_of(arg, id);
            struct dse_rec r;
            dse_rec_init(&r);
            if (seen && dse_rec_final(seen) && (st = dse_rec_read(dir, id, &r, err))) {
                dse_rec_deinit(&r);
                goto free_out;
            }
            final = seen && dse_rec_final(seen) && dse_rec_final(&r);
            top1[k] = r.status == DSE_REC_DONE && isfinite(r.top1) ? r.top1 : NAN;
            lat[k] = r.latency_ms; /* NaN where not measured */
            comp[k] = r.compressed_bytes >= 0 ? (double)r.compressed_bytes / 1e6 : NAN; /* NaN before its .dsez */
            dse_rec_deinit(&r);
        }
        if (!final) {
            excl[n_excl++] = p->index;
            continue;
        }
        dse_sweep_mean_std(top1, s->replicates, &n_ok, &mean, &sd);
        struct dse_evo_result *x = &res[n_res++];
        int pruned = 0;
        memset(x, 0, sizeof *x);
        x->index = p->index;
        for (int j = 0; j < DSE_EVO_OBJ_MAX; j++) x->obj[j] = NAN;
        x->obj[0] = n_ok == s->replicates ? mean : NAN;
        if ((st = dse_evo_costs(s, p->index, costs, n_cost, x->obj + 1, &pruned, err))) goto free_out;
        for (int j = 0; j < n_cost; j++) /* measured costs: the mean over the replicates' records */
            if (dse_evo_cost_measured(costs[j])) {
                int n_lat;
                dse_sweep_mean_std(lat, s->replicates, &n_lat, &x->obj[1 + j], &sd);
                if (n_lat < s->replicates) x->obj[1 + j] = NAN;
            } else if (costs[j] == DSE_EVO_COMPRESSED_MB) { /* the real files' mean, once every one is written */
                int n_comp;
                double real;
                dse_sweep_mean_std(comp, s->replicates, &n_comp, &real, &sd);
                if (n_comp == s->replicates) x->obj[1 + j] = real;
            }
        if (!isfinite(x->obj[0]))
            for (int j = 1; j <= n_cost; j++) x->obj[j] = NAN; /* seen, never a parent */
        put(&add, "result %s %llu", p->id, (unsigned long long)p->index);
        for (int j = 0; j <= n_cost; j++) put_num(&add, x->obj[j]);
        put(&add, "\n");
        newly++;
    }
    int proposed = 0;
    /* the budgets: candidates, epochs (the next proposal's must fit), hours (none once spent) */
    int64_t spent_epochs;
    double spent_s;
    budget_spent(s, dir, &lg, plan, rec_of, arg, &spent_epochs, &spent_s);
    /* what the next proposal trains at once: the schedule (x replicates), or asha's first rung */
    const int64_t one = (int64_t)(n_rungs ? plan->rungs[0] : s->train.epochs) * s->replicates;
    const char *spent = s->search.budget && lg.n_prop >= s->search.budget ? "candidates"
                      : s->search.budget_epochs && spent_epochs + one > s->search.budget_epochs ? "epochs"
                      : s->search.budget_hours > 0 && spent_s >= s->search.budget_hours * 3600 ? "hours" : NULL;
    const int reps = s->replicates;
    int exhausted = lg.closed == 2;
    if (!spent && !lg.closed) {
        uint64_t next;
        int n = 0;
        struct dse_space tmp;
        if ((st = dse_search_propose(log_space(s, &lg, &tmp), res, n_res, part, n_part, excl, n_excl, 1, &next, &n,
                                     err)))
            goto free_out;
        if (n == 1) {
            struct dse_mp mp;
            char id[DSE_ID_SIZE];
            dse_space_candidate(s, next, &mp);
            dse_space_id(&mp, id);
            put(&add, "propose %s %llu\n", id, (unsigned long long)next);
            if (s->search.budget)
                snprintf(said, sizeof said, "proposed %s (index %llu), %d of %lld", id, (unsigned long long)next,
                         lg.n_prop + 1, (long long)s->search.budget);
            else
                snprintf(said, sizeof said, "proposed %s (index %llu), proposal %d", id, (unsigned long long)next,
                         lg.n_prop + 1);
            proposed = 1;
        } else if (!n_excl) {
            put(&add, "end exhausted\n");
            snprintf(said, sizeof said, "ended: the space holds no other feasible candidate");
            proposed = 1;
        } else { /* the pending ones go on (with asha, its first rung closes: dse_asha_rungs) */
            put(&add, "last exhausted\n");
            snprintf(said, sizeof said, "no more proposals: the space holds no other feasible candidate; %d pending",
                     n_excl);
            proposed = 1;
        }
    } else if (!n_excl || !lg.closed) {
        char why[200];
        const char *each_one = reps > 1 ? "an architecture's replicates" : n_rungs ? "a proposal's first rung" : "a candidate";
        char each[80] = ""; /* the budget counts architectures; dse status counts a candidate per replicate */
        if (reps > 1) snprintf(each, sizeof each, " (x %d replicates: %lld candidates)", reps,
                               (long long)s->search.budget * reps);
        if (exhausted) snprintf(why, sizeof why, "the space holds no other feasible candidate");
        else if (!spent) /* spent when proposals ended ("last"); asha's stops have given epochs back since */
            snprintf(why, sizeof why, "the budget is spent");
        else if (!strcmp(spent, "candidates"))
            snprintf(why, sizeof why, "the budget of %lld %s%s is spent", (long long)s->search.budget,
                     reps > 1 ? "architectures" : "candidates", each);
        else if (!strcmp(spent, "epochs"))
            snprintf(why, sizeof why, "%lld of the budget's %lld epochs are spent (%s takes %lld)",
                     (long long)spent_epochs, (long long)s->search.budget_epochs, each_one, (long long)one);
        else
            snprintf(why, sizeof why, "%.3g of the budget's %g hours of training are spent", spent_s / 3600,
                     s->search.budget_hours);
        if (!n_excl) {
            put(&add, "end %s\n", exhausted ? "exhausted" : "budget");
            snprintf(said, sizeof said, "ended: %s", why);
        } else {
            put(&add, "last budget\n");
            snprintf(said, sizeof said, "no more proposals: %s; %d pending", why, n_excl);
        }
        proposed = 1;
    }
    if (!add.p) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    else if (newly || rungs_new || proposed) {
        int won = 0;
        char rungs[64] = "";
        st = commit(dir, &lg, &add, &won, err);
        *changed = !st;
        if (rungs_new) snprintf(rungs, sizeof rungs, " (and %d at a rung)", rungs_new);
        if (!st && won && what)
            snprintf(what, (size_t)what_size, "search step %lld: %d result%s recorded%s%s%s", (long long)lg.gen + 1,
                     newly, newly == 1 ? "" : "s", rungs, said[0] ? "; " : "", said);
        /* tests only (test_sweep sweep-evo-crash): die as a kill -9 would, just after the
         * Nth step this process won, before anything made the new proposal's file */
        const char *kill_at = getenv("DSE_TEST_SEARCH_KILL");
        static int won_steps;
        if (!st && won && kill_at && ++won_steps == atoi(kill_at)) raise(SIGKILL);
    }
free_out:
    free(res), free(excl), free(part);
out:
    free(add.p);
    dse_search_log_free(&lg);
    return st;
}

enum dse_status dse_search_replay(const struct dse_space *s, const struct dse_search_log *lg, int *same,
                                  struct dse_err *err) {
    enum dse_status st = DSE_OK;
    *same = 1;
    /* walk the log's lines: at each step, the results so far and the proposals not yet
     * recorded go in; the step's proposals must come out */
    uint64_t *excl = malloc(sizeof *excl * (size_t)(lg->n_prop + 1)), *out = malloc(sizeof *out * (size_t)(lg->n_prop + 1));
    int *rec_at = calloc((size_t)(lg->n_prop + 1), sizeof *rec_at);
    if (!excl || !out || !rec_at) {
        free(excl), free(out), free(rec_at);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    int n_res = 0, n_prop = 0, n_part = 0, step_first = 0;
    const char *p = lg->text, *end = lg->text + lg->len;
    for (;;) {
        int at_step = p >= end || !strncmp(p, "step ", 5) || !strncmp(p, "end ", 4);
        if (at_step && n_prop > step_first) { /* check the step just read */
            int n_excl = 0, n = 0;
            for (int i = 0; i < step_first; i++)
                if (!rec_at[i]) excl[n_excl++] = lg->prop[i].index;
            struct dse_space tmp;
            if ((st = dse_search_propose(log_space(s, lg, &tmp), lg->res, n_res, lg->part, n_part, excl, n_excl,
                                         n_prop - step_first, out, &n, err)))
                break;
            *same &= n == n_prop - step_first;
            for (int i = 0; *same && i < n; i++) *same &= out[i] == lg->prop[step_first + i].index;
        }
        if (p >= end) break;
        if (at_step && p[0] == 's') step_first = n_prop;
        if (!strncmp(p, "propose ", 8)) n_prop++;
        if (!strncmp(p, "rung ", 5)) n_part++;
        if (!strncmp(p, "result ", 7)) {
            n_res++;
            for (int i = 0; i < n_prop; i++)
                if (lg->prop[i].index == lg->res[n_res - 1].index) rec_at[i] = n_res;
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    free(excl), free(out), free(rec_at);
    return st;
}
