/* search_replay.c: the search strategies replayed against a tabular benchmark (issue #16,
 * item 5; experiments/search_bench/README.md). A table gives the top-1 of every candidate of
 * a space, trained once (`dse report DIR --format csv` of a grid sweep); this program then
 * runs each strategy many times with different seeds, "training" a candidate by looking it
 * up, and prints the hypervolume of (top-1 up, cost down) against the number of candidates
 * trained, as a fraction of the full grid's.
 *
 *   evolution  dse_evo_propose (sweep/evolve.h), driven as a sweep's workers drive it
 *              (sweep/search.c): the initial population proposed at once, then one proposal
 *              each time a worker finds nothing left to claim; `--workers W` trainings run
 *              at once and finish in proposal order, so W - 1 proposals are still pending
 *              (excluded, their results unknown) when the next one is made.
 *   bo         dse_bo_propose (sweep/bo.h), driven the same way: its initial design (n0 of
 *              the budget) proposed at once, then one proposal per worker that finds nothing.
 *   random     uniform random search without replacement over the feasible candidates,
 *              in one random order per seed (the proposer with a population as large as
 *              the budget: all of it its initial random sample), so the first B of a run
 *              are a uniform sample of B, as `--strategy random` with budget B trains
 *              (that one draws from the whole grid and then prunes, so on a space with
 *              constraints it trains fewer: this is the kinder yardstick).
 *
 * Hypervolume (dse_evo_hypervolume2) against the reference point (lowest top-1 in the
 * table, highest cost x 1.01): the worst corner, so every candidate can count. With
 * --ref-quantile Q the reference top-1 is the table's Q-quantile instead (0.5: the median),
 * so that only the better half of the accuracies counts: how sensitive the figures are to
 * the reference. A target
 * fraction (default 0.95) gives each run the number of evaluations it needed to reach it.
 *
 * Output: `name=... metric=value` lines (bench/ convention; the yardstick, random search,
 * measured in the same run) and, with --curves FILE, one CSV row per strategy, seed and
 * evaluation count (strategy,seed,evals,hv_frac) for plot_search.py, appended (the header
 * only to an empty file; bench/optuna_replay.py appends its own rows the same way).
 *
 * With --analytic instead of a table, the stand-in for top-1 is the candidate's forward
 * FLOPs, maximized (compute bought per parameter, say): a real trade-off that every
 * candidate of a space too large to train (bench/large_space.cfg: 1.1 million) has exactly,
 * so the strategies can be replayed at that scale.
 *
 * The honest benchmark of issue #36 (item 3): with M the budget (--budget, else every
 * feasible candidate), each strategy is run again at the budgets b = M/10, M/5, M/3, M/2
 * (rounded; bo's initial design depends on its budget) with the same seeds, and a
 * `name=search_replay_at` line per strategy and b gives: the mean and the 10th percentile
 * over the seeds of the hypervolume fraction at b; the paired difference to random search
 * (seed for seed) with its 95% confidence interval (Student's t over the seeds); the area
 * under the hypervolume-fraction curve over evaluations 1 .. b, divided by b (1: the whole
 * grid's hypervolume from the first evaluation on); and the best possible subset of b
 * candidates (the exact maximum hypervolume of b of them, best_subset_hv2 below), with the
 * issue's target: at least halfway from random's mean to the best subset's, the paired
 * interval above zero.
 *
 * --ref COST,TOP1 sets the reference point (COST in the --cost objective's units: model_mb,
 * the default, is params x 4 / 10^6, so a fraction of the grid's hypervolume is the same
 * as with params) instead of the table's lowest (or --ref-quantile) top-1 and 1.01 x the
 * highest cost. --dump FILE writes the runs at M as CSV rows `strategy,seed,step,index`
 * (step: proposal order, from 1; index: the grid index, the table's `index` column), so
 * that any table with `index`, `model_mb` and `top1` columns (the only ones read; a
 * model_mb that is not the space's for that index is refused, naming the line) can be
 * scored by another program. --noise SD adds Gaussian noise to every observation a
 * strategy sees, SD times the objective's standard deviation over the feasible candidates,
 * drawn from (seed, index) so every strategy sees the same noisy value of a candidate in a
 * run of the same seed; the hypervolume is scored on the noiseless values (what the
 * candidates chosen are really worth). --bo-ref tells bo the reference top-1
 * (dse_bo_opts.ref_top1: its front's reference and a prior mean rising with size) instead
 * of its own (the lowest recorded).
 *
 * --oracle OTHER.csv: another training of the same grid (another seed: the same space with
 * train.seed changed, its `dse report --format csv`). The best subset above is the oracle
 * that knows this very table's top-1 before training anything, the noise of each training's
 * seed included, which no search can know: it has to train a candidate to learn it. The
 * knowable bound is the best subset chosen by OTHER's top-1 (everything about each
 * architecture a perfect model could know, up to a training's seed; past OTHER's front, the
 * best subset of the candidates left, front after front), scored on this table
 * (`name=search_replay_oracle ... knowable_subset=`), and each strategy's line gains the
 * halfway mark to it (halfway_knowable, met_halfway_knowable).
 *
 * Usage: search_replay SPACE (TABLE.csv | --analytic) [--seeds N] [--pop P] [--workers W]
 *                      [--cost NAME] [--target F] [--budget B] [--curves FILE]
 *                      [--ref-quantile Q | --ref COST,TOP1] [--dump FILE] [--noise SD]
 *                      [--aging] [--strata] [--bo-ref] [--strategy S[,S...]]
 *                      [--rungs RUNG.csv [--eta N]] [--oracle OTHER.csv]
 * (S: random, evolution, bo, auto; random and evolution unless told: bo's model grows with
 * the budget, too slow for the large space's 1,500 evaluations. auto: what `dse sweep`
 * chooses for the space and each budget, dse_search_auto.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "sweep/sweep.h"

#include "bench.h"

#define LINE_MAX_LEN 8192
#define FIELDS_MAX   128

/* Split one CSV line into fields in place (double quotes around a field that holds commas;
 * "" inside them is a quote). Returns the field count. */
static int csv_split(char *line, char **field, int max) {
    int n = 0;
    char *p = line;
    while (n < max) {
        char *out = p;
        field[n++] = p;
        if (*p == '"') {
            char *q = p + 1;
            for (;;) {
                if (!*q) break;
                if (*q == '"' && q[1] == '"') { *out++ = '"'; q += 2; continue; }
                if (*q == '"') { q++; break; }
                *out++ = *q++;
            }
            p = q;
        } else {
            while (*p && *p != ',' && *p != '\n' && *p != '\r') *out++ = *p++;
        }
        int end = *p != ',';
        if (*p) p++;
        *out = 0;
        if (end) break;
    }
    return n;
}

struct table {
    uint64_t n;          /* the grid's size */
    double  *top1;       /* [n]: NaN where the table has no result (failed, diverged) */
    double  *cost;       /* [n] */
    char    *pruned;     /* [n]: the constraints prune it (never trained) */
    int      n_feasible;
    double   noise_sd;   /* the observations' noise, in top-1's units (0: none) */
};

/* The table of path, or with path NULL the analytic stand-in: forward FLOPs maximized in
 * place of top-1 (every candidate of a space too large to train has one, exactly). */
static int table_load(const struct dse_space *s, const char *path, enum dse_evo_cost cost, struct table *t) {
    struct dse_err err = { 0 };
    char msg[600];
    t->n = s->count;
    t->top1 = malloc(sizeof *t->top1 * t->n);
    t->cost = malloc(sizeof *t->cost * t->n);
    t->pruned = calloc(t->n, 1);
    char *seen = calloc(t->n, 1);
    if (!t->top1 || !t->cost || !t->pruned || !seen) return fprintf(stderr, "search_replay: out of memory\n"), -1;
    t->n_feasible = 0;
    for (uint64_t k = 0; k < t->n; k++) {
        int pruned = 0;
        enum dse_evo_cost c[2] = { cost, DSE_EVO_FLOPS };
        double v[2];
        if (dse_evo_costs(s, k, c, path ? 1 : 2, v, &pruned, &err)) {
            fprintf(stderr, "search_replay: candidate %llu: %s\n", (unsigned long long)k,
                    dse_err_format(&err, msg, sizeof msg));
            return -1;
        }
        t->pruned[k] = (char)pruned;
        t->cost[k] = v[0];
        t->top1[k] = path ? NAN : v[1];
        t->n_feasible += !pruned;
    }
    if (!path) {
        free(seen);
        fprintf(stderr, "search_replay: %s analytic: %llu candidates, %d within the constraints\n", s->name,
                (unsigned long long)t->n, t->n_feasible);
        return 0;
    }
    FILE *f = fopen(path, "r");
    if (!f) return perror(path), free(seen), -1;
    char line[LINE_MAX_LEN], *field[FIELDS_MAX];
    int col_index = -1, col_top1 = -1, col_mb = -1, lineno = 1, rows = 0;
    const enum dse_evo_cost mb = (enum dse_evo_cost)dse_evo_cost_find("model_mb");
    if (!fgets(line, sizeof line, f)) return fprintf(stderr, "%s: empty\n", path), fclose(f), free(seen), -1;
    int nf = csv_split(line, field, FIELDS_MAX);
    for (int i = 0; i < nf; i++) {
        if (!strcmp(field[i], "index")) col_index = i;
        if (!strcmp(field[i], "top1")) col_top1 = i;
        if (!strcmp(field[i], "model_mb")) col_mb = i;
    }
    if (col_index < 0 || col_top1 < 0)
        return fprintf(stderr, "%s:1: no \"index\" and \"top1\" columns (dse report DIR --format csv)\n", path),
               fclose(f), free(seen), -1;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        nf = csv_split(line, field, FIELDS_MAX);
        if (nf <= col_index || nf <= col_top1) {
            fprintf(stderr, "%s:%d: %d fields, expected more than %d\n", path, lineno, nf,
                    col_index > col_top1 ? col_index : col_top1);
            return fclose(f), free(seen), -1;
        }
        char *end;
        unsigned long long k = strtoull(field[col_index], &end, 10);
        if (*end || end == field[col_index] || k >= t->n) {
            fprintf(stderr, "%s:%d: index \"%s\" is not a grid index of %s (0 .. %llu)\n", path, lineno,
                    field[col_index], s->path, (unsigned long long)t->n - 1);
            return fclose(f), free(seen), -1;
        }
        if (seen[k]++) return fprintf(stderr, "%s:%d: index %llu twice\n", path, lineno, k), fclose(f), free(seen), -1;
        if (col_mb >= 0 && col_mb < nf && field[col_mb][0]) { /* a table of this space? */
            double want = 0, v = strtod(field[col_mb], &end);
            int pruned = 0;
            if (dse_evo_costs(s, k, &mb, 1, &want, &pruned, &err)) return fclose(f), free(seen), -1;
            if (*end || !(fabs(v - want) <= 1e-3 * want + 1e-6))
                return fprintf(stderr, "%s:%d: model_mb \"%s\" is not candidate %llu's of %s (%.6f)\n", path, lineno,
                               field[col_mb], k, s->path, want),
                       fclose(f), free(seen), -1;
        }
        if (field[col_top1][0]) {
            double v = strtod(field[col_top1], &end);
            if (*end || !(v >= 0 && v <= 1))
                return fprintf(stderr, "%s:%d: top1 \"%s\" is not in [0, 1]\n", path, lineno, field[col_top1]),
                       fclose(f), free(seen), -1;
            t->top1[k] = v;
        }
        rows++;
    }
    fclose(f);
    for (uint64_t k = 0; k < t->n; k++)
        if (!t->pruned[k] && !seen[k]) {
            fprintf(stderr, "%s: grid index %llu of %s is trainable but not in the table (train the whole grid)\n",
                    path, (unsigned long long)k, s->path);
            return free(seen), -1;
        }
    free(seen);
    fprintf(stderr, "search_replay: %s: %d rows; %llu candidates, %d trainable\n", path, rows,
            (unsigned long long)t->n, t->n_feasible);
    return 0;
}

/* A standard normal draw from (seed, k): splitmix64 twice, Box-Muller. */
static double gauss_of(uint64_t seed, uint64_t k) {
    double u[2];
    uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ k;
    for (int i = 0; i < 2; i++) {
        uint64_t z = (x += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        u[i] = ((double)(z >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
    }
    return sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

/* Candidate k as a strategy sees it in the run of seed (noise added), or as it is (seed 0). */
static struct dse_evo_result result_of(const struct table *t, uint64_t k, uint64_t seed) {
    struct dse_evo_result r = { .index = k };
    r.obj[0] = t->top1[k];
    if (seed && t->noise_sd > 0 && isfinite(r.obj[0])) r.obj[0] += t->noise_sd * gauss_of(seed, k);
    r.obj[1] = t->cost[k];
    return r;
}

/* A proposer: evolution's or bo's, with its options. */
struct proposer {
    const struct dse_evo_opts *evo; /* NULL: bo */
    const struct dse_bo_opts  *bo;
};

static enum dse_status propose(const struct dse_space *s, const struct proposer *pr, const struct dse_evo_result *res,
                               int n_res, const uint64_t *excl, int n_excl, int k, uint64_t *out, int *n_out,
                               struct dse_err *err) {
    return pr->evo ? dse_evo_propose(s, pr->evo, res, n_res, excl, n_excl, k, out, n_out, err)
                   : dse_bo_propose(s, pr->bo, res, n_res, excl, n_excl, k, out, n_out, err);
}

/* A search as a sweep drives it: proposals in order, W trained at once, finishing in
 * proposal order. res[0 .. return) in recorded order. */
static int run_search(const struct dse_space *s, const struct table *t, const struct proposer *pr, int first,
                      int budget, int workers, uint64_t seed, struct dse_evo_result *res) {
    struct dse_err err = { 0 };
    char msg[600];
    uint64_t *pend = malloc(sizeof *pend * ((size_t)budget + 1));
    int n_res = 0, n_pend = 0, proposed = 0, got = 0;
    /* the analytic phase: the initial population or design, min(first, budget), at once */
    if (first > budget) first = budget;
    if (propose(s, pr, res, 0, NULL, 0, first, pend, &got, &err)) goto fail;
    n_pend = got, proposed = got;
    while (n_pend) {
        /* the oldest pending training ends and is recorded */
        res[n_res++] = result_of(t, pend[0], seed);
        memmove(pend, pend + 1, sizeof *pend * (size_t)--n_pend);
        /* workers that find nothing to claim step the search: one proposal each */
        while (n_pend < workers && proposed < budget) {
            if (propose(s, pr, res, n_res, pend, n_pend, 1, pend + n_pend, &got, &err)) goto fail;
            if (!got) break;
            n_pend++, proposed++;
        }
    }
    free(pend);
    for (int i = 0; i < n_res; i++) res[i] = result_of(t, res[i].index, 0); /* scored on the true values */
    return n_res;
fail:
    fprintf(stderr, "search_replay: %s\n", dse_err_format(&err, msg, sizeof msg));
    exit(1);
}

/* ---- multi-fidelity: bo under --early-stop asha (--rungs FILE) ---------------------------- */

/* One rung's table: every trainable candidate's top-1 after `epoch` of the schedule's `of`. */
struct rung_table {
    int     epoch, of;
    double *top1;        /* [n]: NaN where unknown */
    int64_t *bytes;      /* [n]: model size, asha's ranking's second objective */
    char   (*id)[DSE_ID_SIZE]; /* [n]: the candidates' ids, asha's ranking's last tie-break */
};

/* FILE: CSV with columns index, epoch, top1 (experiments/search_bench/rung_table.py writes it
 * from a sweep's candidate files: top-1 at that epoch, the mean over the replicates). */
static int rung_load(const struct dse_space *s, const struct table *t, const char *path, struct rung_table *r) {
    FILE *f = fopen(path, "r");
    if (!f) return perror(path), -1;
    char line[LINE_MAX_LEN], *field[FIELDS_MAX];
    int ci = -1, ce = -1, ct = -1, lineno = 1;
    r->epoch = 0, r->of = s->train.epochs;
    r->top1 = malloc(sizeof *r->top1 * t->n), r->bytes = malloc(sizeof *r->bytes * t->n);
    r->id = malloc(sizeof *r->id * t->n);
    if (!r->top1 || !r->bytes || !r->id || !fgets(line, sizeof line, f))
        return fprintf(stderr, "%s: empty (or out of memory)\n", path), fclose(f), -1;
    int nf = csv_split(line, field, FIELDS_MAX);
    for (int i = 0; i < nf; i++) {
        if (!strcmp(field[i], "index")) ci = i;
        if (!strcmp(field[i], "epoch")) ce = i;
        if (!strcmp(field[i], "top1")) ct = i;
    }
    if (ci < 0 || ce < 0 || ct < 0) return fprintf(stderr, "%s:1: expected columns index, epoch, top1\n", path), fclose(f), -1;
    for (uint64_t k = 0; k < t->n; k++) {
        struct dse_mp mp;
        r->top1[k] = NAN;
        r->bytes[k] = (int64_t)llround(t->cost[k] * 1e6); /* model_mb (main refuses --rungs with another cost) */
        dse_space_candidate(s, k, &mp);
        dse_space_id(&mp, r->id[k]);
    }
    while (fgets(line, sizeof line, f)) {
        lineno++;
        nf = csv_split(line, field, FIELDS_MAX);
        char *e1, *e2, *e3;
        unsigned long long k = nf > ci ? strtoull(field[ci], &e1, 10) : 0;
        long ep = nf > ce ? strtol(field[ce], &e2, 10) : 0;
        double v = nf > ct ? strtod(field[ct], &e3) : NAN;
        if (nf <= ci || nf <= ce || nf <= ct || *e1 || *e2 || *e3 || k >= t->n || ep < 1 || ep >= r->of ||
            (r->epoch && ep != r->epoch) || !(v >= 0 && v <= 1))
            return fprintf(stderr, "%s:%d: expected index < %llu, one epoch in 1 .. %d for all rows, top1 in [0, 1]\n",
                           path, lineno, (unsigned long long)t->n, r->of - 1), fclose(f), -1;
        r->epoch = (int)ep;
        r->top1[k] = (double)(float)v; /* as a record holds a per-epoch top-1 (and the search log has it) */
    }
    fclose(f);
    for (uint64_t k = 0; k < t->n; k++)
        if (!t->pruned[k] && isfinite(t->top1[k]) && !isfinite(r->top1[k]))
            return fprintf(stderr, "%s: grid index %llu has a result in the table and none at the rung\n", path,
                           (unsigned long long)k), -1;
    return r->epoch ? 0 : (fprintf(stderr, "%s: no rows\n", path), -1);
}

/* One bo search under asha (one rung: r.epoch of r.of, --eta eta) as a sweep's one worker
 * drives it (sweep/sweep_loop.c, sweep/asha.c, sweep/search.c): stops first, then a
 * promotion (trained on to the end), then a fresh proposal trained to the rung; when none is
 * left, a search step records the rung results and the final ones (top-1 null for a stopped
 * one) in proposal order and proposes one more while the epochs spent (pending proposals at
 * the rung's) plus the rung's fit budget_epochs, else closes the rung ("last") and ends once
 * nothing is pending. full[0 .. return): the results of the full schedule, in recorded
 * order; *proposed, *epochs: proposals made, epochs trained; order[0 .. *proposed) (may be
 * NULL; room for the trainable candidates): the proposals in order. */
struct mf_prop {
    uint64_t k;
    int      phase;     /* 0 fresh, 1 at the rung, 2 trained to the end, 3 stopped */
    int      rung_rec, res_rec;
};

static int run_asha(const struct dse_space *s, const struct table *t, const struct rung_table *r,
                    const struct dse_bo_opts *o0, int budget_epochs, int eta, struct dse_evo_result *full,
                    int *proposed, int *epochs, uint64_t *order) {
    struct dse_err err = { 0 };
    char msg[600];
    const int n_max = t->n_feasible + 1, E = r->of, R = r->epoch;
    struct mf_prop *p = calloc((size_t)n_max, sizeof *p);
    struct dse_evo_result *res = malloc(sizeof *res * (size_t)n_max);
    struct dse_bo_partial *part = malloc(sizeof *part * (size_t)n_max);
    uint64_t *excl = malloc(sizeof *excl * (size_t)n_max), *out = malloc(sizeof *out * (size_t)n_max);
    double *top1 = malloc(sizeof *top1 * (size_t)n_max);
    int64_t *bytes = malloc(sizeof *bytes * (size_t)n_max);
    const char **ids = malloc(sizeof *ids * (size_t)n_max);
    int *promoted = malloc(sizeof *promoted * (size_t)n_max), *promotable = malloc(sizeof *promotable * (size_t)n_max),
        *at = malloc(sizeof *at * (size_t)n_max);
    if (!p || !res || !part || !excl || !out || !top1 || !bytes || !ids || !promoted || !promotable || !at)
        return fprintf(stderr, "search_replay: out of memory\n"), exit(1), 0;
    struct dse_bo_opts o = *o0;
    int n = 0, n_res = 0, n_part = 0, n_full = 0, closed = 0, got = 0;
    *epochs = 0;
    o.part = part;
    /* the initial design at once, as dse_search_start makes it */
    const int b = budget_epochs / E, first = dse_bo_n_init(b) < b ? dse_bo_n_init(b) : b;
    o.n_part = 0;
    if (dse_bo_propose(s, &o, NULL, 0, NULL, 0, first, out, &got, &err)) goto fail;
    for (int i = 0; i < got; i++) p[n++] = (struct mf_prop){ .k = out[i] };
    for (;;) {
        /* the rung: reached by phases 1-3; closed once no proposal can come or is fresh */
        int m = 0, fresh = 0;
        for (int i = 0; i < n; i++) {
            fresh += p[i].phase == 0;
            if (p[i].phase == 0) continue;
            at[m] = i, top1[m] = r->top1[p[i].k], bytes[m] = r->bytes[p[i].k], ids[m] = r->id[p[i].k];
            promoted[m++] = p[i].phase == 2;
        }
        const int rung_closed = closed && !fresh;
        dse_asha_promotable(m, top1, bytes, ids, promoted, eta, DSE_SWEEP_RANK_PARETO, rung_closed, promotable, NULL);
        int acted = 0;
        for (int j = 0; j < m && rung_closed; j++) /* stops first */
            if (p[at[j]].phase == 1 && !promotable[j]) p[at[j]].phase = 3, acted = 1;
        for (int j = 0; j < m && !acted; j++) /* then a promotion, trained to the end */
            if (p[at[j]].phase == 1 && promotable[j]) p[at[j]].phase = 2, *epochs += E - R, acted = 1;
        for (int i = 0; i < n && !acted; i++) /* then a fresh one, to the rung */
            if (p[i].phase == 0) p[i].phase = 1, *epochs += R, acted = 1;
        if (acted) continue;
        /* the search step: rung results, then final ones, in proposal order */
        int n_excl = 0, spent = 0;
        for (int i = 0; i < n; i++) {
            if (p[i].phase >= 1 && !p[i].rung_rec) {
                part[n_part++] = (struct dse_bo_partial){ .index = p[i].k, .epoch = R, .of = E, .top1 = r->top1[p[i].k] };
                p[i].rung_rec = 1;
            }
            if (p[i].phase >= 2 && !p[i].res_rec) {
                res[n_res] = result_of(t, p[i].k, 0);
                if (p[i].phase == 3) res[n_res].obj[0] = NAN;
                else full[n_full++] = res[n_res];
                n_res++, p[i].res_rec = 1;
            }
            if (!p[i].res_rec) excl[n_excl++] = p[i].k;
            spent += p[i].phase == 2 ? E : R; /* final: what it trained; pending: to the rung */
        }
        if (!closed && spent + R <= budget_epochs) {
            o.n_part = n_part;
            if (dse_bo_propose(s, &o, res, n_res, excl, n_excl, 1, out, &got, &err)) goto fail;
            if (got) {
                p[n++] = (struct mf_prop){ .k = out[0] };
                continue;
            }
        }
        closed = 1;
        if (!n_excl) break;
    }
    *proposed = n;
    for (int i = 0; order && i < n; i++) order[i] = p[i].k;
    free(p), free(res), free(part), free(excl), free(out), free(top1), free(bytes), free(ids), free(promoted),
        free(promotable), free(at);
    return n_full;
fail:
    fprintf(stderr, "search_replay: %s\n", dse_err_format(&err, msg, sizeof msg));
    exit(1);
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static double quantile(double *v, int n, double q) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return v[(int)floor(q * (n - 1) + 0.5)];
}

/* The exact maximum hypervolume of b of the points res[0 .. n) against the reference (top-1
 * up, cost down): only Pareto points can be in a best subset (a dominated one adds nothing
 * its dominator does not), and for two objectives a subset's hypervolume, its points
 * sorted by cost (so by top-1 too), is the sum of each one's rectangle (top-1 over the
 * previous chosen one's) x (ref_cost - its cost). So with the P Pareto points sorted by
 * cost, f[k][j] = the best of k points whose dearest is j = max over i < j of
 * f[k-1][i] + (y_j - y_i)(ref_cost - c_j), f[1][j] = (y_j - ref_top1)(ref_cost - c_j): a
 * dynamic program in O(b P^2) time, O(b P) memory (the choices, to name the subset). b >= P:
 * all of them, the grid's. chosen (may be NULL; room b) gets the subset's indices into res,
 * *n_chosen their count. NaN when b P^2 is past max_work (the large space), -1 when out of
 * memory. */
static int cmp_pt(const void *a, const void *b) {
    const double *x = a, *y = b;
    if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]); /* cost up */
    return (x[1] < y[1]) - (x[1] > y[1]);                   /* top-1 down */
}

static double best_subset_hv2(const struct dse_evo_result *res, int n, double ref_top1, double ref_cost, int b,
                              double max_work, int *chosen, int *n_chosen) {
    double *pt = malloc(sizeof *pt * 3 * (size_t)(n + 1)); /* cost, top-1, index into res */
    if (n_chosen) *n_chosen = 0;
    if (!pt) return -1;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(res[i].obj[0]) && res[i].obj[0] > ref_top1 && res[i].obj[1] < ref_cost)
            pt[3 * m] = res[i].obj[1], pt[3 * m + 1] = res[i].obj[0], pt[3 * m + 2] = i, m++;
    qsort(pt, (size_t)m, 3 * sizeof *pt, cmp_pt);
    int p = 0; /* the Pareto points: top-1 strictly rising with cost */
    for (int i = 0; i < m; i++)
        if (!p || pt[3 * i + 1] > pt[3 * (p - 1) + 1]) memmove(&pt[3 * p++], &pt[3 * i], 3 * sizeof *pt);
    if (b >= p) {
        double area = 0, prev = ref_top1;
        for (int j = 0; j < p; j++) {
            area += (pt[3 * j + 1] - prev) * (ref_cost - pt[3 * j]), prev = pt[3 * j + 1];
            if (chosen) chosen[(*n_chosen)++] = (int)pt[3 * j + 2];
        }
        return free(pt), area;
    }
    if ((double)b * p * p > max_work) return free(pt), NAN;
    double *f = malloc(sizeof *f * (size_t)p), *g = malloc(sizeof *g * (size_t)p), best = 0;
    /* from[k][j]: the i of f[k][j], kept only to name the subset */
    int *from = chosen ? malloc(sizeof *from * (size_t)b * (size_t)p) : NULL, last = -1;
    if (!f || !g || (chosen && !from)) return free(pt), free(f), free(g), free(from), -1;
    for (int j = 0; j < p; j++) {
        f[j] = (pt[3 * j + 1] - ref_top1) * (ref_cost - pt[3 * j]);
        if (from) from[j] = -1;
    }
    for (int k = 2; k <= b; k++) {
        for (int j = 0; j < p; j++) {
            int at = -1;
            g[j] = -INFINITY;
            for (int i = k - 2; i < j; i++) { /* f[i] holds k - 1 points only from i = k - 2 on */
                double v = f[i] + (pt[3 * j + 1] - pt[3 * i + 1]) * (ref_cost - pt[3 * j]);
                if (v > g[j]) g[j] = v, at = i;
            }
            if (from) from[(size_t)(k - 1) * p + j] = at;
        }
        double *tmp = f;
        f = g, g = tmp;
    }
    for (int j = 0; j < p; j++)
        if (f[j] > best) best = f[j], last = j;
    for (int k = b, j = last; chosen && k >= 1 && j >= 0; k--) { /* back through the choices */
        chosen[(*n_chosen)++] = (int)pt[3 * j + 2];
        j = from[(size_t)(k - 1) * p + j];
    }
    free(pt), free(f), free(g), free(from);
    return best;
}

/* Student's t quantile 0.975 with df degrees of freedom: the Cornish-Fisher expansion around
 * the normal's (Abramowitz & Stegun 26.7.5), within 0.001 of the tables from df = 4 on. */
static double t975(int df) {
    const double z = 1.959963984540054, z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z, v = df;
    return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
           (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

static void mean_sd(const double *v, int n, double *mean, double *sd) {
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++) sum += v[i];
    *mean = sum / n;
    for (int i = 0; i < n; i++) sq += (v[i] - *mean) * (v[i] - *mean);
    *sd = n > 1 ? sqrt(sq / (n - 1)) : 0;
}

static void usage(void) {
    fprintf(stderr, "usage: search_replay SPACE (TABLE.csv | --analytic) [--seeds N] [--pop P] [--workers W]\n"
                    "                     [--cost NAME] [--target F] [--budget B] [--curves FILE]\n"
                    "                     [--ref-quantile Q | --ref COST,TOP1] [--dump FILE] [--noise SD]\n"
                    "                     [--aging] [--strata] [--bo-ref] [--strategy S[,S...]]\n"
                    "                     [--rungs RUNG.csv [--eta N]] [--oracle OTHER.csv]\n"
                    "S: random, evolution, bo, auto (what dse sweep chooses: dse_search_auto)\n"
                    "P: evolution's population (default: dse sweep's for the budget, dse_evo_pop_for_budget)\n");
}

enum { EVOLUTION, RANDOM, BO, AUTO, N_STRATEGIES };
static const char *const names[N_STRATEGIES] = { "evolution", "random", "bo", "auto" };

/* What a strategy runs as at budget b: auto is what `dse sweep` would choose (said on
 * standard error), the others themselves. */
static int resolve(const struct dse_space *s, int st, int b) {
    if (st != AUTO) return st;
    char why[256];
    enum dse_strategy c = dse_search_auto(s, b, why, sizeof why);
    /* grid (a budget that covers the space) trains everything: any order ends at the whole
     * grid's hypervolume, and random's is the one replayed */
    int r = c == DSE_SEARCH_EVOLUTION ? EVOLUTION : c == DSE_SEARCH_BO ? BO : RANDOM;
    fprintf(stderr, "search_replay: auto at budget %d: %s (%s)\n", b, names[r], why);
    return r;
}

/* One run of strategy st (resolved) at budget b with seed: res[0 .. return) recorded, scored
 * on the true values. */
static double bo_ref_top1 = NAN; /* --bo-ref: bo told the reference top-1 (NaN: its own) */

/* A strategy's name in the output: bo told the reference is "bo_told", so that its curves
 * and dumps sit beside bo's own in one file. */
static const char *label(int st) { return st == BO && isfinite(bo_ref_top1) ? "bo_told" : names[st]; }

static int run_one(const struct dse_space *s, const struct table *t, int st, int b, uint64_t seed, int pop,
                   int workers, int aging, int strata, enum dse_evo_cost cost, struct dse_evo_result *res) {
    /* random: a uniform random order of the feasible candidates, the proposer with a
     * population as large as the budget (all of it the initial sample) */
    struct dse_evo_opts o;
    dse_evo_opts_default(&o);
    o.seed = seed, o.n_obj = 2;
    if (st == EVOLUTION) o.pop = pop ? pop : dse_evo_pop_for_budget(b), o.aging = aging, o.strata = strata ? (int)cost : -1;
    else o.pop = b;
    struct dse_bo_opts bo;
    dse_bo_opts_default(&bo);
    bo.seed = seed, bo.budget = b, bo.cost = cost, bo.ref_top1 = bo_ref_top1;
    const struct proposer pr = { .evo = st == BO ? NULL : &o, .bo = &bo };
    return run_search(s, t, &pr, st == BO ? dse_bo_n_init(b) : o.pop, b, workers, seed, res);
}

int main(int argc, char **argv) {
    const char *space_path = NULL, *table_path = NULL, *curves_path = NULL, *dump_path = NULL,
               *strategies = "random,evolution", *rungs_path = NULL, *oracle_path = NULL;
    int eta = 2;
    int seeds = 25, pop = 0, workers = 2, budget = 0, analytic = 0, aging = 0, strata = 0, have_ref = 0, bo_ref = 0;
    double target = 0.95, ref_q = 0, noise = 0, user_ref[2] = { 0 };
    enum dse_evo_cost cost = (enum dse_evo_cost)dse_evo_cost_find("model_mb");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(), 0;
        if (!strcmp(a, "--analytic")) { analytic = 1; continue; }
        if (!strcmp(a, "--aging")) { aging = 1; continue; }
        if (!strcmp(a, "--strata")) { strata = 1; continue; }
        if (!strcmp(a, "--bo-ref")) { bo_ref = 1; continue; }
        if (a[0] == '-' && a[1] == '-') {
            if (!v) return fprintf(stderr, "search_replay: %s needs a value\n", a), usage(), 2;
            i++;
            if (!strcmp(a, "--seeds")) seeds = atoi(v);
            else if (!strcmp(a, "--pop")) pop = atoi(v);
            else if (!strcmp(a, "--workers")) workers = atoi(v);
            else if (!strcmp(a, "--budget")) budget = atoi(v);
            else if (!strcmp(a, "--target")) target = atof(v);
            else if (!strcmp(a, "--ref-quantile")) ref_q = atof(v);
            else if (!strcmp(a, "--noise")) noise = atof(v);
            else if (!strcmp(a, "--curves")) curves_path = v;
            else if (!strcmp(a, "--dump")) dump_path = v;
            else if (!strcmp(a, "--strategy")) strategies = v;
            else if (!strcmp(a, "--rungs")) rungs_path = v;
            else if (!strcmp(a, "--oracle")) oracle_path = v;
            else if (!strcmp(a, "--eta")) eta = atoi(v);
            else if (!strcmp(a, "--ref")) {
                char *end;
                user_ref[0] = strtod(v, &end);
                int comma = *end == ',';
                if (comma) user_ref[1] = strtod(end + 1, &end);
                if (!comma || *end || !(user_ref[0] > 0) || !isfinite(user_ref[1]))
                    return fprintf(stderr, "search_replay: --ref %s: expected COST,TOP1 (COST > 0)\n", v), 2;
                have_ref = 1;
            } else if (!strcmp(a, "--cost")) {
                int c = dse_evo_cost_find(v);
                if (c < 0) return fprintf(stderr, "search_replay: --cost %s: not in sweep/objective.def\n", v), 2;
                cost = (enum dse_evo_cost)c;
            } else return fprintf(stderr, "search_replay: unknown option %s\n", a), usage(), 2;
        } else if (!space_path) space_path = a;
        else if (!table_path) table_path = a;
        else return usage(), 2;
    }
    if (!space_path || !table_path == !analytic || !(ref_q >= 0 && ref_q < 1) || (have_ref && ref_q > 0) ||
        seeds < 1 || pop < 0 || workers < 1 || budget < 0 || !(target > 0 && target <= 1) || !(noise >= 0) ||
        eta < 2 || (rungs_path && (analytic || noise > 0 || cost != (enum dse_evo_cost)dse_evo_cost_find("model_mb"))) ||
        (oracle_path && analytic))
        return usage(), 2;
    int run[N_STRATEGIES] = { 0 };
    for (const char *p = strategies; *p;) {
        size_t len = strcspn(p, ",");
        int found = 0;
        for (int st = 0; st < N_STRATEGIES; st++)
            if (strlen(names[st]) == len && !strncmp(p, names[st], len)) run[st] = found = 1;
        if (!found)
            return fprintf(stderr, "search_replay: --strategy %s: expected random, evolution, bo, auto\n", strategies), 2;
        p += len + (p[len] == ',');
    }
    struct dse_space s;
    struct dse_err err = { 0 };
    char msg[600];
    if (dse_space_load(space_path, &s, &err))
        return fprintf(stderr, "search_replay: %s\n", dse_err_format(&err, msg, sizeof msg)), 2;
    if (run[AUTO] && resolve(&s, AUTO, 1) < 0)
        return fprintf(stderr, "search_replay: --strategy auto: dse_search_auto is not in this build (issue #36 "
                               "item 2)\n"), 2;
    struct table t;
    if (table_load(&s, table_path, cost, &t)) return 2;
    if (!budget) budget = analytic ? 1000 : t.n_feasible;
    if (budget > t.n_feasible) budget = t.n_feasible;

    /* the reference point and the grid's hypervolume */
    double ref_top1 = INFINITY, ref_cost = 0;
    struct dse_evo_result *all = malloc(sizeof *all * t.n), *res = malloc(sizeof *res * t.n);
    int n_all = 0;
    for (uint64_t k = 0; k < t.n; k++) {
        if (t.pruned[k]) continue;
        all[n_all++] = result_of(&t, k, 0);
        if (t.top1[k] < ref_top1) ref_top1 = t.top1[k];
        if (t.cost[k] > ref_cost) ref_cost = t.cost[k];
    }
    ref_cost *= 1.01;
    if (ref_q > 0) { /* a reference above the failures: the ref_q-quantile of the top-1 */
        double *v = malloc(sizeof *v * (size_t)n_all);
        int m = 0;
        for (int i = 0; i < n_all; i++)
            if (isfinite(all[i].obj[0])) v[m++] = all[i].obj[0];
        if (m) ref_top1 = quantile(v, m, ref_q);
        free(v);
    }
    if (have_ref) ref_cost = user_ref[0], ref_top1 = user_ref[1];
    if (noise > 0) { /* the noise's scale: the objective's spread over the feasible candidates */
        double *v = malloc(sizeof *v * (size_t)n_all), mean, sd;
        int m = 0;
        for (int i = 0; i < n_all; i++)
            if (isfinite(all[i].obj[0])) v[m++] = all[i].obj[0];
        mean_sd(v, m, &mean, &sd);
        t.noise_sd = noise * sd;
        free(v);
    }
    if (bo_ref) bo_ref_top1 = ref_top1;
    double hv_grid = dse_evo_hypervolume2(all, n_all, ref_top1, ref_cost);
    struct dse_evo_result *oth = NULL; /* --oracle: all[] with the other training's top-1 */
    if (oracle_path) {
        struct table t2;
        if (table_load(&s, oracle_path, cost, &t2)) return 2;
        if (!(oth = malloc(sizeof *oth * (size_t)(n_all ? n_all : 1))))
            return fprintf(stderr, "search_replay: out of memory\n"), 1;
        for (int i = 0; i < n_all; i++) oth[i] = all[i], oth[i].obj[0] = t2.top1[all[i].index];
        free(t2.top1), free(t2.cost), free(t2.pruned);
    }
    if (!(hv_grid > 0))
        return fprintf(stderr, "search_replay: the grid dominates nothing beyond the reference point (top-1 %g): "
                               "lower --ref-quantile\n", ref_top1), 2;
    printf("name=search_replay space=%s table=%s trainable=%d cost=%s seeds=%d pop=%d workers=%d budget=%d "
           "target=%.3f ref_top1=%.4f ref_cost=%.6g hv_grid=%.6g noise=%g noise_sd=%.6g\n",
           s.name, analytic ? "analytic(top1=flops)" : table_path, t.n_feasible, dse_evo_cost_name(cost), seeds, pop,
           workers, budget, target, ref_top1, ref_cost, hv_grid, noise, t.noise_sd);

    FILE *cf = NULL, *df = NULL;
    if (curves_path) {
        if (!(cf = fopen(curves_path, "a"))) return perror(curves_path), 2; /* beside other runs' rows */
        if (ftell(cf) == 0) fprintf(cf, "strategy,seed,evals,hv_frac\n");
    }
    if (dump_path) {
        if (!(df = fopen(dump_path, "w"))) return perror(dump_path), 2;
        fprintf(df, "strategy,seed,step,index\n");
    }
    int *need[N_STRATEGIES] = { 0 };
    double *hv_at[N_STRATEGIES] = { 0 }; /* [seed * budget + evals - 1] */
    double t0 = bench_now_ms();
    for (int st = 0; st < N_STRATEGIES; st++) {
        if (!run[st]) continue;
        const int as = resolve(&s, st, budget);
        need[st] = malloc(sizeof **need * (size_t)seeds);
        hv_at[st] = malloc(sizeof **hv_at * (size_t)seeds * (size_t)budget);
        for (int i = 0; i < seeds; i++) {
            uint64_t seed = 1 + (uint64_t)i;
            double *hv = hv_at[st] + (size_t)i * (size_t)budget;
            int n = run_one(&s, &t, as, budget, seed, pop, workers, aging, strata, cost, res);
            if (df)
                for (int j = 0; j < n; j++)
                    fprintf(df, "%s,%d,%d,%llu\n", label(st), (int)seed, j + 1, (unsigned long long)res[j].index);
            if (dse_evo_hv_prefixes(res, n, ref_top1, ref_cost, hv))
                return fprintf(stderr, "search_replay: out of memory\n"), 1;
            for (int b = 1; b <= budget; b++) hv[b - 1] = (b <= n ? hv[b - 1] : hv[n - 1]) / hv_grid;
            need[st][i] = budget + 1; /* not reached within the budget */
            for (int b = 1; b <= budget; b++)
                if (hv[b - 1] >= target - 1e-12) { need[st][i] = b; break; }
            if (cf)
                for (int b = 1; b <= budget; b++)
                    fprintf(cf, "%s,%d,%d,%.6f\n", label(st), (int)seed, b, hv[b - 1]);
        }
    }
    double ms = bench_now_ms() - t0;
    if (cf) fclose(cf);

    int med[N_STRATEGIES];
    /* evaluations to the target: each strategy's mean, and its saving against random search
     * seed for seed (random's count minus its own) with a 95% Student-t interval; a seed
     * that never reached it counts budget + 1, so with such seeds the figures are bounds */
    double need_mean[N_STRATEGIES] = { 0 }, save[N_STRATEGIES] = { 0 }, save_half[N_STRATEGIES] = { 0 };
    double *dn = malloc(sizeof *dn * (size_t)seeds), *nd = malloc(sizeof *nd * (size_t)seeds);
    if (!dn || !nd) return fprintf(stderr, "search_replay: out of memory\n"), 1;
    for (int st = 0; st < N_STRATEGIES; st++) {
        if (!run[st]) continue;
        double sd, dsd;
        for (int i = 0; i < seeds; i++)
            nd[i] = need[st][i], dn[i] = run[RANDOM] ? (double)need[RANDOM][i] - need[st][i] : 0;
        mean_sd(nd, seeds, &need_mean[st], &sd);
        mean_sd(dn, seeds, &save[st], &dsd);
        save_half[st] = seeds > 1 ? t975(seeds - 1) * dsd / sqrt(seeds) : 0;
    }
    free(dn), free(nd);
    for (int st = 0; st < N_STRATEGIES; st++) {
        if (!run[st]) continue;
        /* the mean hypervolume fraction at the budget, with its standard error over the seeds */
        double sum = 0, sq = 0;
        for (int i = 0; i < seeds; i++) {
            double h = hv_at[st][(size_t)i * (size_t)budget + (size_t)budget - 1];
            sum += h, sq += h * h;
        }
        const double mean = sum / seeds, var = seeds > 1 ? (sq - seeds * mean * mean) / (seeds - 1) : 0;
        int *v = need[st];
        qsort(v, (size_t)seeds, sizeof *v, cmp_int);
        med[st] = v[seeds / 2];
        int reached = 0;
        for (int i = 0; i < seeds; i++) reached += v[i] <= budget;
        printf("name=search_replay_%s hv_mean_at_%d=%.4f hv_se_at_%d=%.4f evals_to_target_median=%d "
               "evals_to_target_q1=%d evals_to_target_q3=%d reached=%d/%d",
               label(st), budget, mean, budget, var > 0 ? sqrt(var / seeds) : 0, med[st], v[seeds / 4],
               v[(3 * seeds) / 4], reached, seeds);
        printf(" evals_to_target_mean=%.2f", need_mean[st]);
        if (run[RANDOM] && st != RANDOM)
            printf(" fewer_than_random=%+.2f fewer_ci_lo=%+.2f fewer_ci_hi=%+.2f", save[st], save[st] - save_half[st],
                   save[st] + save_half[st]);
        /* the median hypervolume at a few budgets */
        double *col = malloc(sizeof *col * (size_t)seeds);
        static const double fracs[] = { 0.125, 0.25, 0.5 };
        for (int f = 0; f < 3; f++) {
            int b = (int)(fracs[f] * budget + 0.5);
            if (b < 1) b = 1;
            for (int i = 0; i < seeds; i++) col[i] = hv_at[st][(size_t)i * (size_t)budget + (size_t)b - 1];
            printf(" hv_median_at_%d=%.4f", b, quantile(col, seeds, 0.5));
        }
        printf("\n");
        free(col);
    }
    /* random's median past the budget: it did not reach the target, the ratio is a lower bound */
    if (run[RANDOM] && run[EVOLUTION])
        printf("name=search_replay_ratio random_over_evolution=%.2f lower_bound=%s target_ratio=3 met=%s "
               "replay_ms=%.0f\n", (double)med[RANDOM] / med[EVOLUTION], med[RANDOM] > budget ? "yes" : "no",
               med[EVOLUTION] <= budget && (double)med[RANDOM] >= 3.0 * med[EVOLUTION] ? "yes" : "no", ms);
    else
        printf("name=search_replay_time replay_ms=%.0f\n", ms);

    /* issue #36's statistics at budgets M/10, M/5, M/3, M/2, each strategy run again at each
     * (same seeds), random always run as the paired yardstick */
    static const int divisors[] = { 10, 5, 3, 2 };
    double *h = malloc(sizeof *h * (size_t)seeds * N_STRATEGIES), *area = malloc(sizeof *area * (size_t)seeds),
           *hvp = malloc(sizeof *hvp * (size_t)budget);
    for (int d = 0; d < 4; d++) {
        const int b = (budget + divisors[d] / 2) / divisors[d];
        if (b < 1) continue;
        const double best = best_subset_hv2(all, n_all, ref_top1, ref_cost, b, 4e9, NULL, NULL) / hv_grid;
        /* --oracle: the best subset by another training's top-1, worth what this table says;
         * a budget past that training's front is spent on the best subset of the candidates
         * left, and so on (its next fronts: the insurance an oracle that knows each
         * architecture only up to a seed would buy) */
        double knowable = NAN;
        if (oracle_path) {
            int *pick = malloc(sizeof *pick * (size_t)b), got = 0, *map = malloc(sizeof *map * (size_t)n_all);
            struct dse_evo_result *sub = malloc(sizeof *sub * (size_t)(b > n_all ? b : n_all));
            char *taken = calloc((size_t)n_all + 1, 1);
            if (!pick || !sub || !map || !taken) return fprintf(stderr, "search_replay: out of memory\n"), 1;
            int too_big = 0; /* the program skipped (b P^2 past its work limit): no bound, NaN */
            for (int more = 1; more && got < b;) {
                int left = 0, n_new = 0;
                for (int i = 0; i < n_all; i++)
                    if (!taken[i]) sub[left] = oth[i], map[left++] = i;
                const double v = best_subset_hv2(sub, left, ref_top1, ref_cost, b - got, 4e9, pick + got, &n_new);
                if (v < 0) return fprintf(stderr, "search_replay: out of memory\n"), 1;
                too_big |= isnan(v);
                for (int j = got; j < got + n_new; j++) pick[j] = map[pick[j]], taken[pick[j]] = 1;
                got += n_new, more = n_new > 0 && !too_big;
            }
            for (int j = 0; j < got; j++) sub[j] = all[pick[j]];
            knowable = too_big ? NAN : got ? dse_evo_hypervolume2(sub, got, ref_top1, ref_cost) / hv_grid : 0;
            printf("name=search_replay_oracle budget=%d divisor=%d best_subset=%.4f knowable_subset=%.4f picked=%d\n", b,
                   divisors[d], best, knowable, got);
            free(pick), free(sub), free(map), free(taken);
        }
        double rnd_mean = 0;
        for (int pass = 0; pass < 2; pass++) /* random first: the others' differences need it */
            for (int st = 0; st < N_STRATEGIES; st++) {
                if ((pass == 0) != (st == RANDOM) || (!run[st] && st != RANDOM)) continue;
                const int as = resolve(&s, st, b);
                double *hs = h + (size_t)st * (size_t)seeds;
                for (int i = 0; i < seeds; i++) {
                    int n = run_one(&s, &t, as, b, 1 + (uint64_t)i, pop, workers, aging, strata, cost, res);
                    if (dse_evo_hv_prefixes(res, n, ref_top1, ref_cost, hvp))
                        return fprintf(stderr, "search_replay: out of memory\n"), 1;
                    double a = 0;
                    for (int e = 1; e <= b; e++) a += hvp[(e <= n ? e : n) - 1] / hv_grid;
                    hs[i] = hvp[n - 1] / hv_grid, area[i] = a / b;
                }
                double mean, sd, amean, asd, p10, dmean = 0, dsd = 0;
                mean_sd(hs, seeds, &mean, &sd);
                mean_sd(area, seeds, &amean, &asd);
                double *sorted = malloc(sizeof *sorted * (size_t)seeds), *diff = malloc(sizeof *diff * (size_t)seeds);
                memcpy(sorted, hs, sizeof *sorted * (size_t)seeds);
                p10 = quantile(sorted, seeds, 0.1);
                if (st == RANDOM) rnd_mean = mean;
                for (int i = 0; i < seeds; i++) diff[i] = hs[i] - h[(size_t)RANDOM * (size_t)seeds + (size_t)i];
                mean_sd(diff, seeds, &dmean, &dsd);
                const double half = seeds > 1 ? t975(seeds - 1) * dsd / sqrt(seeds) : 0,
                             halfway = rnd_mean + 0.5 * (best - rnd_mean),
                             halfway_k = rnd_mean + 0.5 * (knowable - rnd_mean);
                printf("name=search_replay_at strategy=%s budget=%d divisor=%d hv_mean=%.4f hv_sd=%.4f hv_p10=%.4f "
                       "auc=%.4f diff_random=%+.4f diff_ci_lo=%+.4f diff_ci_hi=%+.4f best_subset=%.4f "
                       "halfway=%.4f met_halfway=%s met_ci=%s",
                       label(st), b, divisors[d], mean, sd, p10, amean, dmean, dmean - half, dmean + half, best,
                       halfway, mean >= halfway - 1e-12 ? "yes" : "no", dmean - half > 0 ? "yes" : "no");
                if (oracle_path) /* NaN (no bound): "no", never a target met by default */
                    printf(" knowable_subset=%.4f halfway_knowable=%.4f met_halfway_knowable=%s", knowable, halfway_k,
                           mean >= halfway_k - 1e-12 ? "yes" : "no");
                putchar('\n');
                free(sorted), free(diff);
            }
    }
    free(h), free(area), free(hvp);

    /* multi-fidelity (--rungs): at each budget b, b x E epochs for random, bo (b candidates
     * trained to the end) and bo under asha (as many proposals as fit, each first to the
     * rung), one worker, the same seeds; scored on the results of the full schedule only */
    struct rung_table rt = { 0 };
    uint64_t *mf_order = malloc(sizeof *mf_order * t.n);
    if (rungs_path && rung_load(&s, &t, rungs_path, &rt)) return 2;
    for (int d = 0; rungs_path && d < 4; d++) {
        const int b = (budget + divisors[d] / 2) / divisors[d], E = rt.of;
        if (b < 1) continue;
        double *hr = malloc(sizeof *hr * (size_t)seeds * 3), *np = malloc(sizeof *np * (size_t)seeds),
               *nf = malloc(sizeof *nf * (size_t)seeds), *ne = malloc(sizeof *ne * (size_t)seeds);
        for (int i = 0; i < seeds; i++) {
            const uint64_t seed = 1 + (uint64_t)i;
            int n = run_one(&s, &t, RANDOM, b, seed, pop, 1, aging, strata, cost, res);
            hr[i] = dse_evo_hypervolume2(res, n, ref_top1, ref_cost) / hv_grid;
            n = run_one(&s, &t, BO, b, seed, pop, 1, aging, strata, cost, res);
            hr[seeds + i] = dse_evo_hypervolume2(res, n, ref_top1, ref_cost) / hv_grid;
            struct dse_bo_opts bo;
            dse_bo_opts_default(&bo);
            bo.seed = seed, bo.budget = b, bo.cost = cost, bo.ref_top1 = bo_ref_top1;
            int proposed, ep;
            n = run_asha(&s, &t, &rt, &bo, b * E, eta, res, &proposed, &ep, mf_order);
            if (df) /* the proposals, for same_search.py: strategy bo_asha_e<budget_epochs> */
                for (int j = 0; j < proposed; j++)
                    fprintf(df, "bo_asha_e%d,%d,%d,%llu\n", b * E, (int)seed, j + 1, (unsigned long long)mf_order[j]);
            hr[2 * seeds + i] = dse_evo_hypervolume2(res, n, ref_top1, ref_cost) / hv_grid;
            np[i] = proposed, nf[i] = n, ne[i] = ep;
        }
        for (int k = 0; k < 3; k++) {
            static const char *const mf_names[3] = { "random", "bo", "bo_asha" };
            double mean, sd, dm[2], dh[2], *diff = malloc(sizeof *diff * (size_t)seeds), pm, fm, em, x;
            const double *hk = hr + (size_t)k * (size_t)seeds;
            mean_sd(hk, seeds, &mean, &sd);
            for (int y = 0; y < 2; y++) { /* paired against random (0) and bo (1) */
                for (int i = 0; i < seeds; i++) diff[i] = hk[i] - hr[(size_t)y * (size_t)seeds + (size_t)i];
                mean_sd(diff, seeds, &dm[y], &x);
                dh[y] = seeds > 1 ? t975(seeds - 1) * x / sqrt(seeds) : 0;
            }
            mean_sd(np, seeds, &pm, &x), mean_sd(nf, seeds, &fm, &x), mean_sd(ne, seeds, &em, &x);
            printf("name=search_replay_mf strategy=%s%s budget=%d budget_epochs=%d rung=%d/%d eta=%d hv_mean=%.4f "
                   "hv_sd=%.4f diff_random=%+.4f diff_random_ci_lo=%+.4f diff_random_ci_hi=%+.4f diff_bo=%+.4f "
                   "diff_bo_ci_lo=%+.4f diff_bo_ci_hi=%+.4f proposed_mean=%.2f trained_full_mean=%.2f "
                   "epochs_mean=%.2f\n", k == 0 ? "random" : isfinite(bo_ref_top1) ? "bo_told" : mf_names[k],
                   k == 2 ? (isfinite(bo_ref_top1) ? "_asha" : "") : "", b, b * E, rt.epoch, E, eta, mean, sd, dm[0],
                   dm[0] - dh[0], dm[0] + dh[0], dm[1], dm[1] - dh[1], dm[1] + dh[1], k == 2 ? pm : b,
                   k == 2 ? fm : b, k == 2 ? em : (double)b * E);
            free(diff);
        }
        free(hr), free(np), free(nf), free(ne);
    }
    free(rt.top1), free(rt.bytes), free(rt.id), free(mf_order);
    if (df) fclose(df);
    for (int st = 0; st < N_STRATEGIES; st++) free(need[st]), free(hv_at[st]);
    free(all), free(res), free(oth), free(t.top1), free(t.cost), free(t.pruned);
    dse_space_free(&s);
    return 0;
}
