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
 * evaluation count (strategy,seed,evals,hv_frac) for plot_search.py.
 *
 * With --analytic instead of a table, the stand-in for top-1 is the candidate's forward
 * FLOPs, maximized (compute bought per parameter, say): a real trade-off that every
 * candidate of a space too large to train (bench/large_space.cfg: 1.1 million) has exactly,
 * so the strategies can be replayed at that scale.
 *
 * Usage: search_replay SPACE (TABLE.csv | --analytic) [--seeds N] [--pop P] [--workers W]
 *                      [--cost NAME] [--target F] [--budget B] [--curves FILE]
 *                      [--ref-quantile Q] [--aging] [--strata] [--strategy S[,S...]]
 * (S: random, evolution, bo; random and evolution unless told: bo's model grows with the
 * budget, too slow for the large space's 1,500 evaluations). */
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
    int col_index = -1, col_top1 = -1, lineno = 1, rows = 0;
    if (!fgets(line, sizeof line, f)) return fprintf(stderr, "%s: empty\n", path), fclose(f), free(seen), -1;
    int nf = csv_split(line, field, FIELDS_MAX);
    for (int i = 0; i < nf; i++) {
        if (!strcmp(field[i], "index")) col_index = i;
        if (!strcmp(field[i], "top1")) col_top1 = i;
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

static struct dse_evo_result result_of(const struct table *t, uint64_t k) {
    struct dse_evo_result r = { .index = k };
    r.obj[0] = t->top1[k];
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
                      int budget, int workers, struct dse_evo_result *res) {
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
        res[n_res++] = result_of(t, pend[0]);
        memmove(pend, pend + 1, sizeof *pend * (size_t)--n_pend);
        /* workers that find nothing to claim step the search: one proposal each */
        while (n_pend < workers && proposed < budget) {
            if (propose(s, pr, res, n_res, pend, n_pend, 1, pend + n_pend, &got, &err)) goto fail;
            if (!got) break;
            n_pend++, proposed++;
        }
    }
    free(pend);
    return n_res;
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

static void usage(void) {
    fprintf(stderr, "usage: search_replay SPACE (TABLE.csv | --analytic) [--seeds N] [--pop P] [--workers W]\n"
                    "                     [--cost NAME] [--target F] [--budget B] [--curves FILE]\n"
                    "                     [--ref-quantile Q] [--aging] [--strata] [--strategy S[,S...]]\n");
}

int main(int argc, char **argv) {
    const char *space_path = NULL, *table_path = NULL, *curves_path = NULL, *strategies = "random,evolution";
    int seeds = 25, pop = 16, workers = 2, budget = 0, analytic = 0, aging = 0, strata = 0;
    double target = 0.95, ref_q = 0;
    enum dse_evo_cost cost = DSE_EVO_PARAMS;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(), 0;
        if (!strcmp(a, "--analytic")) { analytic = 1; continue; }
        if (!strcmp(a, "--aging")) { aging = 1; continue; }
        if (!strcmp(a, "--strata")) { strata = 1; continue; }
        if (a[0] == '-' && a[1] == '-') {
            if (!v) return fprintf(stderr, "search_replay: %s needs a value\n", a), usage(), 2;
            i++;
            if (!strcmp(a, "--seeds")) seeds = atoi(v);
            else if (!strcmp(a, "--pop")) pop = atoi(v);
            else if (!strcmp(a, "--workers")) workers = atoi(v);
            else if (!strcmp(a, "--budget")) budget = atoi(v);
            else if (!strcmp(a, "--target")) target = atof(v);
            else if (!strcmp(a, "--ref-quantile")) ref_q = atof(v);
            else if (!strcmp(a, "--curves")) curves_path = v;
            else if (!strcmp(a, "--strategy")) strategies = v;
            else if (!strcmp(a, "--cost")) {
                int c = dse_evo_cost_find(v);
                if (c < 0) return fprintf(stderr, "search_replay: --cost %s: not in sweep/objective.def\n", v), 2;
                cost = (enum dse_evo_cost)c;
            } else return fprintf(stderr, "search_replay: unknown option %s\n", a), usage(), 2;
        } else if (!space_path) space_path = a;
        else if (!table_path) table_path = a;
        else return usage(), 2;
    }
    if (!space_path || !table_path == !analytic || !(ref_q >= 0 && ref_q < 1) || seeds < 1 || pop < 1 || workers < 1 || budget < 0 || !(target > 0 && target <= 1))
        return usage(), 2;
    struct dse_space s;
    struct dse_err err = { 0 };
    char msg[600];
    if (dse_space_load(space_path, &s, &err))
        return fprintf(stderr, "search_replay: %s\n", dse_err_format(&err, msg, sizeof msg)), 2;
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
        all[n_all++] = result_of(&t, k);
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
    double hv_grid = dse_evo_hypervolume2(all, n_all, ref_top1, ref_cost);
    if (!(hv_grid > 0))
        return fprintf(stderr, "search_replay: the grid dominates nothing beyond the reference point (top-1 %g): "
                               "lower --ref-quantile\n", ref_top1), 2;
    printf("name=search_replay space=%s table=%s trainable=%d cost=%s seeds=%d pop=%d workers=%d budget=%d "
           "target=%.3f ref_top1=%.4f ref_cost=%.6g hv_grid=%.6g\n",
           s.name, analytic ? "analytic(top1=flops)" : table_path, t.n_feasible, dse_evo_cost_name(cost), seeds, pop, workers, budget, target, ref_top1,
           ref_cost, hv_grid);

    FILE *cf = NULL;
    if (curves_path) {
        if (!(cf = fopen(curves_path, "w"))) return perror(curves_path), 2;
        fprintf(cf, "strategy,seed,evals,hv_frac\n");
    }
    enum { EVOLUTION, RANDOM, BO, N_STRATEGIES };
    static const char *const names[N_STRATEGIES] = { "evolution", "random", "bo" };
    int run[N_STRATEGIES] = { 0 };
    for (const char *p = strategies; *p;) {
        size_t len = strcspn(p, ",");
        int found = 0;
        for (int st = 0; st < N_STRATEGIES; st++)
            if (strlen(names[st]) == len && !strncmp(p, names[st], len)) run[st] = found = 1;
        if (!found) return fprintf(stderr, "search_replay: --strategy %s: expected random, evolution, bo\n", strategies), 2;
        p += len + (p[len] == ',');
    }
    int *need[N_STRATEGIES] = { 0 };
    double *hv_at[N_STRATEGIES] = { 0 }; /* [seed * budget + evals - 1] */
    double t0 = bench_now_ms();
    for (int st = 0; st < N_STRATEGIES; st++) {
        if (!run[st]) continue;
        need[st] = malloc(sizeof **need * (size_t)seeds);
        hv_at[st] = malloc(sizeof **hv_at * (size_t)seeds * (size_t)budget);
        for (int i = 0; i < seeds; i++) {
            uint64_t seed = 1 + (uint64_t)i;
            double *hv = hv_at[st] + (size_t)i * (size_t)budget;
            /* random: a uniform random order of the feasible candidates, the proposer with a
             * population as large as the budget (all of it the initial sample) */
            struct dse_evo_opts o;
            dse_evo_opts_default(&o);
            o.seed = seed, o.n_obj = 2;
            if (st == EVOLUTION) o.pop = pop, o.aging = aging, o.strata = strata ? (int)cost : -1;
            else o.pop = budget;
            struct dse_bo_opts bo;
            dse_bo_opts_default(&bo);
            bo.seed = seed, bo.budget = budget, bo.cost = cost;
            const struct proposer pr = { .evo = st == BO ? NULL : &o, .bo = &bo };
            int n = run_search(&s, &t, &pr, st == BO ? dse_bo_n_init(budget) : o.pop, budget, workers, res);
            if (dse_evo_hv_prefixes(res, n, ref_top1, ref_cost, hv))
                return fprintf(stderr, "search_replay: out of memory\n"), 1;
            for (int b = 1; b <= budget; b++) hv[b - 1] = (b <= n ? hv[b - 1] : hv[n - 1]) / hv_grid;
            need[st][i] = budget + 1; /* not reached within the budget */
            for (int b = 1; b <= budget; b++)
                if (hv[b - 1] >= target - 1e-12) { need[st][i] = b; break; }
            if (cf)
                for (int b = 1; b <= budget; b++)
                    fprintf(cf, "%s,%d,%d,%.6f\n", names[st], (int)seed, b, hv[b - 1]);
        }
    }
    double ms = bench_now_ms() - t0;
    if (cf) fclose(cf);

    int med[N_STRATEGIES];
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
               names[st], budget, mean, budget, var > 0 ? sqrt(var / seeds) : 0, med[st], v[seeds / 4],
               v[(3 * seeds) / 4], reached, seeds);
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
    for (int st = 0; st < N_STRATEGIES; st++) free(need[st]), free(hv_at[st]);
    free(all), free(res), free(t.top1), free(t.cost), free(t.pruned);
    dse_space_free(&s);
    return 0;
}
