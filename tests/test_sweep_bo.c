/* test_sweep_bo.c: test_sweep's cases on the cost-aware model-based proposer (sweep/bo.c),
 * pure functions: the expected hypervolume improvement against a Monte Carlo estimate, the
 * Gaussian process against a 2-point case by hand, determinism and prefix stability, no
 * duplicates in a batch, constraints, the initial design's cost strata, and bo beating
 * random search on experiments/search_bench's 96-candidate table. */
#include "tests/sweep_util.h"

#include "sweep/bo.h"

/* Drive bo as a sweep would: ask for `batch`, "train" them with evo_top1 (every nan_every-th
 * result NaN, a failed training; 0: none), record them in order, until budget results or
 * nothing is left. Returns results made. */
static int bo_drive(const struct evo_grid *g, const struct dse_bo_opts *o, int budget, int batch, int nan_every,
                    struct dse_evo_result *res) {
    struct dse_err err = { 0 };
    int n = 0;
    while (n < budget) {
        uint64_t out[64];
        int want = budget - n < batch ? budget - n : batch, got = 0;
        CHECK_OK(dse_bo_propose(&g->s, o, res, n, NULL, 0, want, out, &got, &err));
        if (!got) break;
        for (int i = 0; i < got; i++) {
            res[n] = (struct dse_evo_result){ .index = out[i] };
            res[n].obj[0] = nan_every && (n + 1) % nan_every == 0 ? NAN : evo_top1(g, out[i]);
            res[n].obj[1] = g->params[out[i]];
            n++;
        }
        if (got < want) break;
    }
    return n;
}

/* A standard normal draw (Box-Muller). */
static double normal(struct dse_pcg32 *r) {
    double u = ((double)dse_pcg32_next(r) + 0.5) / 4294967296.0, v = ((double)dse_pcg32_next(r) + 0.5) / 4294967296.0;
    return sqrt(-2 * log(u)) * cos(2 * 3.14159265358979323846 * v);
}

/* The closed form against the hypervolume itself: with sd = 0, dse_evo_hypervolume2 of the
 * front with the point minus without it, to the last bits; with sd > 0, a Monte Carlo mean
 * of that gain over 200,000 draws, within 4 of its standard errors. Cases: left of the
 * front, between its steps, on a step's cost, right of it, past the reference cost. */
void test_bo_ehvi(void) {
    const double t[4] = { 0.5, 0.7, 0.85, 0.6 }, c[4] = { 1, 2.5, 4, 3 }; /* (0.6, 3) is dominated */
    const double ref_t = 0.3, ref_c = 5;
    struct dse_evo_result r[5];
    for (int i = 0; i < 4; i++) r[i] = (struct dse_evo_result){ .obj = { t[i], c[i] } };
    const double hv0 = dse_evo_hypervolume2(r, 4, ref_t, ref_c);
    static const struct { double c, mu, sd; } q[] = {
        { 0.5, 0.45, 0.10 }, { 2.0, 0.75, 0.10 }, { 2.5, 0.60, 0.20 }, { 4.5, 0.90, 0.05 },
        { 3.5, 0.55, 0.10 }, { 1.0, 0.90, 0.30 },
    };
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
        /* sd = 0: the gain of y = mu exactly */
        r[4] = (struct dse_evo_result){ .obj = { q[i].mu, q[i].c } };
        CHECK_NEAR(dse_bo_ehvi2(t, c, 4, ref_t, ref_c, q[i].c, q[i].mu, 0), dse_evo_hypervolume2(r, 5, ref_t, ref_c) - hv0,
                   1e-12);
        struct dse_pcg32 g;
        dse_pcg32_seed(&g, 7, i);
        double sum = 0, sq = 0;
        const int draws = 200000;
        for (int k = 0; k < draws; k++) {
            r[4].obj[0] = q[i].mu + q[i].sd * normal(&g);
            double gain = dse_evo_hypervolume2(r, 5, ref_t, ref_c) - hv0;
            sum += gain, sq += gain * gain;
        }
        const double mc = sum / draws, se = sqrt((sq / draws - mc * mc) / draws);
        const double e = dse_bo_ehvi2(t, c, 4, ref_t, ref_c, q[i].c, q[i].mu, q[i].sd);
        if (!(fabs(e - mc) <= 4 * se + 1e-12)) printf("  ehvi case %zu: closed %.6g, Monte Carlo %.6g +- %.2g\n", i, e, mc, se);
        CHECK(fabs(e - mc) <= 4 * se + 1e-12);
        CHECK(e > 0);
    }
    /* past the reference cost, or a front that is empty */
    CHECK_NEAR(dse_bo_ehvi2(t, c, 4, ref_t, ref_c, 5.0, 0.9, 0.1), 0, 0);
    CHECK_NEAR(dse_bo_ehvi2(t, c, 0, ref_t, ref_c, 1.0, 0.5, 0), 0.2 * 4, 1e-12);
}

/* Matern-5/2 of r, by hand. */
static double m52(double r, double sf2) {
    const double a = sqrt(5.0) * r;
    return sf2 * (1 + a + a * a / 3) * exp(-a);
}

/* Two points by hand: K = [[sf2 + sn2, k1], [k1, sf2 + sn2]] inverted as a 2 x 2, the mean
 * m + k*^T K^-1 (y - m), the variance sf2 - k*^T K^-1 k*. */
void test_bo_gp(void) {
    const double x[2] = { 0.0, 1.0 }, y[2] = { 0.7, 0.2 }, ell = 1.0, m = 0.5, sf2 = 2.0, sn2 = 0.1;
    const double xq[4] = { 0.0, 0.5, 1.0, 8.0 };
    double mu[4], sd[4];
    struct dse_err err = { 0 };
    CHECK_OK(dse_bo_gp_posterior(x, y, 2, 1, &ell, m, sf2, sn2, xq, 4, mu, sd, &err));
    const double a = sf2 + sn2, b = m52(1.0, sf2), det = a * a - b * b;
    const double inv[2][2] = { { a / det, -b / det }, { -b / det, a / det } };
    CHECK_NEAR(b, 2 * (1 + sqrt(5.0) + 5.0 / 3) * exp(-sqrt(5.0)), 1e-15); /* 1.04799 */
    for (int i = 0; i < 4; i++) {
        const double ks[2] = { m52(fabs(xq[i] - x[0]), sf2), m52(fabs(xq[i] - x[1]), sf2) };
        const double w0 = inv[0][0] * ks[0] + inv[0][1] * ks[1], w1 = inv[1][0] * ks[0] + inv[1][1] * ks[1];
        CHECK_NEAR(mu[i], m + w0 * (y[0] - m) + w1 * (y[1] - m), 1e-12);
        CHECK_NEAR(sd[i], sqrt(sf2 - (w0 * ks[0] + w1 * ks[1])), 1e-12);
    }
    CHECK(mu[0] > mu[1] && mu[1] > mu[2]);  /* between the two, and pulled to the mean far away */
    CHECK_NEAR(mu[3], m, 0.01);
    CHECK(sd[1] > sd[0] && sd[3] > sd[1]);
    /* a repeated point without noise: not positive definite, refused */
    const double x2[2] = { 0.3, 0.3 };
    CHECK_INT_EQ(dse_bo_gp_posterior(x2, y, 2, 1, &ell, m, sf2, 0, xq, 1, mu, sd, &err), DSE_ERR_CONFIG);
}

/* Same inputs, same proposals; prefix-stable; another seed draws another initial design;
 * whole runs repeat; refusals. */
void test_bo_determinism(void) {
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_err err = { 0 };
    struct dse_bo_opts o;
    dse_bo_opts_default(&o);
    o.budget = 24; /* n0 = 6 */
    struct dse_evo_result res[40];
    CHECK_INT_EQ(bo_drive(&g, &o, 24, 4, 7, res), 24);
    uint64_t a[8], b[8], c[8], p[3];
    int na, nb, nc, np;
    for (int n_res = 0; n_res <= 24; n_res += 24) { /* the initial design, then the model's */
        o.seed = 1;
        CHECK_OK(dse_bo_propose(&g.s, &o, res, n_res, NULL, 0, 8, a, &na, &err));
        CHECK_OK(dse_bo_propose(&g.s, &o, res, n_res, NULL, 0, 8, b, &nb, &err));
        CHECK_OK(dse_bo_propose(&g.s, &o, res, n_res, NULL, 0, 3, p, &np, &err));
        CHECK_INT_EQ(na, 8);
        CHECK_INT_EQ(nb, 8);
        CHECK_INT_EQ(np, 3);
        CHECK(!memcmp(a, b, sizeof a)); /* same inputs, same proposals */
        CHECK(!memcmp(a, p, sizeof p)); /* prefix-stable */
        if (n_res == 0) {               /* the strata's draws come from the seed */
            o.seed = 2;
            CHECK_OK(dse_bo_propose(&g.s, &o, res, n_res, NULL, 0, 8, c, &nc, &err));
            CHECK(memcmp(a, c, sizeof a));
        }
    }
    /* two whole runs from the same seed are the same run */
    struct dse_evo_result again[40];
    o.seed = 1;
    CHECK_INT_EQ(bo_drive(&g, &o, 24, 4, 7, again), 24);
    for (int i = 0; i < 24; i++) CHECK_INT_EQ(again[i].index, res[i].index);
    /* refused: an index past the grid, a measured cost */
    res[0].index = g.n;
    CHECK_INT_EQ(dse_bo_propose(&g.s, &o, res, 1, NULL, 0, 1, a, &na, &err), DSE_ERR_CONFIG);
    res[0].index = 0;
    o.cost = DSE_EVO_LATENCY_MS;
    CHECK_INT_EQ(dse_bo_propose(&g.s, &o, res, 1, NULL, 0, 1, a, &na, &err), DSE_ERR_CONFIG);
    evo_grid_free(&g);
}

/* A batch of K from the model (kriging believer) holds no candidate twice, none recorded
 * (NaN results included) or excluded, none the constraints prune; a long run under the
 * constraint proposes only feasible candidates, each once. */
void test_bo_batch(void) {
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_err err = { 0 };
    struct dse_bo_opts o;
    dse_bo_opts_default(&o);
    o.budget = 40;
    struct dse_evo_result *res = malloc(sizeof *res * 320);
    CHECK_INT_EQ(bo_drive(&g, &o, 30, 3, 5, res), 30); /* every fifth a NaN */
    uint64_t excl[6], out[16];
    int ne = 0, got;
    for (uint64_t k = 0; k < g.n && ne < 6; k++)
        if (!g.pruned[k]) excl[ne++] = k;
    CHECK_OK(dse_bo_propose(&g.s, &o, res, 30, excl, ne, 16, out, &got, &err));
    CHECK_INT_EQ(got, 16);
    int hit = 0, dup = 0;
    for (int i = 0; i < got; i++) {
        for (int e = 0; e < ne; e++) hit += out[i] == excl[e];
        for (int r = 0; r < 30; r++) hit += out[i] == res[r].index;
        for (int j = 0; j < i; j++) dup += out[i] == out[j];
        hit += g.pruned[out[i]];
    }
    CHECK_INT_EQ(hit, 0);
    CHECK_INT_EQ(dup, 0);
    /* a long run in batches of 7, past the model's DSE_BO_MODEL_MAX points */
    CHECK(g.n_feasible > 100 && g.n_feasible < 1000);
    int n = bo_drive(&g, &o, 300, 7, 0, res);
    CHECK_INT_EQ(n, 300);
    int bad = 0;
    for (int i = 0; i < n; i++) bad += g.pruned[res[i].index];
    CHECK_INT_EQ(bad, 0);
    CHECK_INT_EQ(evo_dups(res, n), 0);
    free(res);
    evo_grid_free(&g);
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The initial design: member j of n0 from the j-th equal-count slice of the feasible
 * candidates sorted by params (ties by grid index, as bo.c's pool), so the design spans the
 * cost axis, and from the slice's upper half by a compute score (at least the slice's
 * median, bo.c stratum_pick): log forward FLOPs for a design of at most
 * DSE_BO_INIT_FLOPS_MAX, else log FLOPs less the slice's least-squares slope of log FLOPs on
 * log params times log params; n0 from the budget. */
struct by_cost {
    double   params;
    uint64_t k;
};

static int cmp_by_cost(const void *a, const void *b) {
    const struct by_cost *x = a, *y = b;
    if (x->params != y->params) return x->params < y->params ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

void test_bo_strata(void) {
    CHECK_INT_EQ(dse_bo_n_init(0), 8);
    CHECK_INT_EQ(dse_bo_n_init(1), 3);
    CHECK_INT_EQ(dse_bo_n_init(10), 3);
    CHECK_INT_EQ(dse_bo_n_init(19), 4);
    CHECK_INT_EQ(dse_bo_n_init(32), 8);
    CHECK_INT_EQ(dse_bo_n_init(48), 8);
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_err err = { 0 };
    struct by_cost *order = malloc(sizeof *order * g.n);
    double *flops = malloc(sizeof *flops * g.n), *slice = malloc(sizeof *slice * g.n),
           *score = malloc(sizeof *score * g.n);
    const enum dse_evo_cost fc = DSE_EVO_FLOPS;
    int n = 0;
    for (uint64_t k = 0; k < g.n; k++) {
        int pruned;
        CHECK_OK(dse_evo_costs(&g.s, k, &fc, 1, &flops[k], &pruned, &err));
        if (!g.pruned[k]) order[n++] = (struct by_cost){ g.params[k], k };
    }
    qsort(order, (size_t)n, sizeof *order, cmp_by_cost);
    struct dse_bo_opts o;
    dse_bo_opts_default(&o);
    int poor_seen = 0;   /* a slice whose lower half by score is not empty: the check can fail */
    int rules_differ = 0; /* a narrow slice's FLOPs-rich half and score-rich half differ */
    const int designs[] = { 3, DSE_BO_INIT_FLOPS_MAX + 1, 8 };
    for (int d = 0; d < 3; d++)
        for (uint64_t seed = 1; seed <= 4; seed++) {
            const int n0 = designs[d];
            o.seed = seed, o.n_init = n0;
            uint64_t out[8];
            int got = 0, off = 0, poor = 0;
            CHECK_OK(dse_bo_propose(&g.s, &o, NULL, 0, NULL, 0, n0, out, &got, &err));
            CHECK_INT_EQ(got, n0);
            for (int j = 0; j < got; j++) {
                const int lo = n * j / n0, hi = n * (j + 1) / n0;
                double slope = 0, mx = 0, my = 0, sxx = 0, sxy = 0;
                const double x0 = log(order[lo].params);
                if (n0 > DSE_BO_INIT_FLOPS_MAX) { /* the slice's line of log FLOPs on log params */
                    for (int i = lo; i < hi; i++) mx += log(order[i].params) - x0, my += log(flops[order[i].k]);
                    mx /= hi - lo, my /= hi - lo;
                    for (int i = lo; i < hi; i++) {
                        const double dx = log(order[i].params) - x0 - mx;
                        sxx += dx * dx, sxy += dx * (log(flops[order[i].k]) - my);
                    }
                    slope = sxx > 0 ? sxy / sxx : 0;
                }
                int in = 0;
                for (int i = lo; i < hi; i++) {
                    score[order[i].k] = log(flops[order[i].k]) - slope * log(order[i].params);
                    in += order[i].k == out[j], slice[i - lo] = score[order[i].k];
                }
                qsort(slice, (size_t)(hi - lo), sizeof *slice, cmp_dbl);
                const double score_mid = slice[(hi - lo) / 2];
                off += !in;
                if (in) poor += score[out[j]] < score_mid;
                poor_seen += slice[0] < score_mid;
                if (n0 > DSE_BO_INIT_FLOPS_MAX) {
                    for (int i = lo; i < hi; i++) slice[i - lo] = flops[order[i].k];
                    qsort(slice, (size_t)(hi - lo), sizeof *slice, cmp_dbl);
                    for (int i = lo; i < hi; i++)
                        rules_differ += flops[order[i].k] >= slice[(hi - lo) / 2] && score[order[i].k] < score_mid;
                }
            }
            CHECK_INT_EQ(off, 0);
            CHECK_INT_EQ(poor, 0);
        }
    CHECK(poor_seen > 0);
    CHECK(rules_differ > 0);
    free(order), free(flops), free(slice), free(score);
    evo_grid_free(&g);
}

/* A table of experiments/search_bench (every candidate trained): the top-1 of each grid
 * index (with replicates, their mean, as `dse report --format csv` writes it). */
static int table_read(const struct dse_space *s, const char *path, double *top1) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[4096];
    int col_index = -1, col_top1 = -1, rows = 0;
    for (uint64_t k = 0; k < s->count; k++) top1[k] = NAN;
    for (int ln = 0; fgets(line, sizeof line, f); ln++) {
        char *field[64];
        int nf = 0, quoted = 0;
        field[nf++] = line;
        for (char *p = line; *p && nf < 64; p++) { /* commas inside quotes (the pools) are not separators */
            if (*p == '"') quoted = !quoted;
            else if (*p == ',' && !quoted) *p = '\0', field[nf++] = p + 1;
        }
        if (ln == 0) {
            for (int i = 0; i < nf; i++) {
                if (!strcmp(field[i], "index")) col_index = i;
                if (!strcmp(field[i], "top1")) col_top1 = i;
            }
            continue;
        }
        if (col_index < 0 || col_top1 < 0 || nf <= col_top1) break;
        uint64_t k = strtoull(field[col_index], NULL, 10);
        if (k < s->count && field[col_top1][0]) top1[k] = strtod(field[col_top1], NULL), rows++;
    }
    fclose(f);
    return rows;
}

/* On experiments/search_bench's two trained tables (96 candidates, one seed; 36, the mean of
 * two), seeds 1 to 10, each search driven as a sweep drives it with one worker: bo's mean
 * hypervolume fraction beats random search's (a uniform sample of the budget, the evolution
 * proposer with a population as large as the budget, as bench/search_replay measures it).
 * Reference: a quantile of the table's top-1 (0: the lowest) and the highest params x 1.01;
 * bo told that top-1 (opts.ref_top1, a space's search.min_top1) or not. */
#define TABLE1 "experiments/search_bench/table.cfg", "experiments/search_bench/results/table.csv", 96
#define TABLE2 "experiments/search_bench/table2.cfg", "experiments/search_bench/results/table2.csv", 36
static const struct {
    const char *space, *table;
    int         rows;
    const char *name;
    double      quantile; /* the reference top-1 */
    int         tell_bo;  /* opts.ref_top1 = it (else NaN: the lowest recorded) */
    int         budget;
} bo_table_cases[] = {
    { TABLE1, .name = "lowest reference, N/10", .quantile = 0, .tell_bo = 0, .budget = 10 },
    { TABLE1, .name = "median reference told, N/10", .quantile = 0.5, .tell_bo = 1, .budget = 10 },
    { TABLE2, .name = "median reference told, N/5", .quantile = 0.5, .tell_bo = 1, .budget = 7 },
    { TABLE2, .name = "lowest reference, N/3", .quantile = 0, .tell_bo = 0, .budget = 12 },
};

void test_bo_table(void) {
    for (size_t tc = 0; tc < sizeof bo_table_cases / sizeof *bo_table_cases; tc++) {
        struct dse_space s;
        struct dse_err err = { 0 };
        CHECK_OK(dse_space_load(bo_table_cases[tc].space, &s, &err));
        if (check_failures) return;
        const int N = (int)s.count;
        double *top1 = malloc(sizeof *top1 * (size_t)N), *params = malloc(sizeof *params * (size_t)N),
               *sorted = malloc(sizeof *sorted * (size_t)N);
        struct dse_evo_result *all = malloc(sizeof *all * (size_t)N), *res = malloc(sizeof *res * (size_t)N);
        uint64_t *out = malloc(sizeof *out * (size_t)N);
        CHECK_INT_EQ(table_read(&s, bo_table_cases[tc].table, top1), bo_table_cases[tc].rows);
        double ref_lowest = INFINITY, ref_c = 0;
        const enum dse_evo_cost cost = DSE_EVO_PARAMS;
        for (int k = 0; k < N; k++) {
            int pruned;
            CHECK_OK(dse_evo_costs(&s, (uint64_t)k, &cost, 1, &params[k], &pruned, &err));
            all[k] = (struct dse_evo_result){ .index = (uint64_t)k, .obj = { top1[k], params[k] } };
            if (top1[k] < ref_lowest) ref_lowest = top1[k];
            if (params[k] > ref_c) ref_c = params[k];
            sorted[k] = top1[k];
        }
        ref_c *= 1.01;
        qsort(sorted, (size_t)N, sizeof *sorted, cmp_dbl);
        const double q = bo_table_cases[tc].quantile, ref_t = q > 0 ? sorted[(int)(q * (N - 1) + 0.5)] : ref_lowest;
        const double hv_grid = dse_evo_hypervolume2(all, N, ref_t, ref_c);
        const int budget = bo_table_cases[tc].budget, seeds = 10;
        double mean[2] = { 0, 0 };
        for (int strat = 0; strat < 2; strat++) /* 0: bo, 1: random */
            for (int seed = 1; seed <= seeds; seed++) {
                struct dse_bo_opts bo;
                struct dse_evo_opts evo;
                dse_bo_opts_default(&bo);
                dse_evo_opts_default(&evo);
                bo.seed = evo.seed = (uint64_t)seed, bo.budget = budget, evo.pop = budget;
                if (bo_table_cases[tc].tell_bo) bo.ref_top1 = ref_t;
                int n = 0;
                while (n < budget) { /* the initial design (or sample) at once, then one at a time */
                    int want = n == 0 ? (strat ? budget : dse_bo_n_init(budget)) : 1, got = 0;
                    if (strat) CHECK_OK(dse_evo_propose(&s, &evo, res, n, NULL, 0, want, out, &got, &err));
                    else CHECK_OK(dse_bo_propose(&s, &bo, res, n, NULL, 0, want, out, &got, &err));
                    if (!got) break;
                    for (int i = 0; i < got; i++) res[n++] = all[out[i]];
                }
                CHECK_INT_EQ(n, budget);
                mean[strat] += dse_evo_hypervolume2(res, n, ref_t, ref_c) / hv_grid / seeds;
            }
        printf("  %s, %s, budget %d, %d seeds: mean hypervolume fraction bo %.4f, random %.4f\n",
               bo_table_cases[tc].table, bo_table_cases[tc].name, budget, seeds, mean[0], mean[1]);
        CHECK(mean[0] > mean[1]);
        free(top1), free(params), free(sorted), free(all), free(res), free(out);
        dse_space_free(&s);
    }
}

/* A space's search.min_top1 is bo's reference top-1 (dse_search_bo_opts), and only where
 * the file gives it: without, bo takes the lowest top-1 recorded (NaN). */
void test_bo_min_top1(void) {
    struct dse_space s;
    struct dse_err err = { 0 };
    struct dse_bo_opts o;
    CHECK_OK(dse_space_load("tests/spaces/sweep_bo.cfg", &s, &err));
    if (check_failures) return;
    dse_search_bo_opts(&s, &o);
    CHECK(isnan(o.ref_top1));
    CHECK_INT_EQ((int)o.budget, 7);
    s.search.min_top1 = 0.745, s.search.min_top1_line = 22;
    dse_search_bo_opts(&s, &o);
    CHECK(o.ref_top1 == 0.745);
    dse_space_free(&s);
}

/* Multi-fidelity (--early-stop asha): results at a rung (opts.part: top-1 after `epoch` of
 * `of`) are points of the model. Malformed ones are refused; proposals with them are
 * deterministic and prefix-stable, never a recorded or pending candidate; they change what
 * bo proposes (the model sees them), an empty list changes nothing; and before any result
 * of the full schedule, rung results alone give bo its model (no draw from the strata). */
void test_bo_partial(void) {
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_err err = { 0 };
    struct dse_bo_opts o;
    dse_bo_opts_default(&o);
    o.budget = 24, o.n_init = 3;
    struct dse_evo_result res[40];
    CHECK_INT_EQ(bo_drive(&g, &o, 12, 4, 0, res), 12);
    uint64_t pend[8], a[4], b[4], c[4], d[4], p2[2];
    int np, na, nb, nc, nd, n2;
    CHECK_OK(dse_bo_propose(&g.s, &o, res, 12, NULL, 0, 8, pend, &np, &err)); /* 8 pending at the rung */
    CHECK_INT_EQ(np, 8);
    struct dse_bo_partial part[8];
    for (int i = 0; i < 8; i++) /* a rung's top-1 below the full schedule's */
        part[i] = (struct dse_bo_partial){ .index = pend[i], .epoch = 1, .of = 4, .top1 = evo_top1(&g, pend[i]) - 0.1 };
    CHECK_OK(dse_bo_propose(&g.s, &o, res, 12, pend, 8, 4, a, &na, &err));
    o.part = part, o.n_part = 0;
    CHECK_OK(dse_bo_propose(&g.s, &o, res, 12, pend, 8, 4, c, &nc, &err));
    o.n_part = 8;
    CHECK_OK(dse_bo_propose(&g.s, &o, res, 12, pend, 8, 4, b, &nb, &err));
    CHECK_OK(dse_bo_propose(&g.s, &o, res, 12, pend, 8, 4, d, &nd, &err));
    CHECK_OK(dse_bo_propose(&g.s, &o, res, 12, pend, 8, 2, p2, &n2, &err));
    CHECK(na == 4 && nb == 4 && nc == 4 && nd == 4 && n2 == 2);
    CHECK(!memcmp(a, c, sizeof a));  /* no partial results: as without the list */
    CHECK(memcmp(a, b, sizeof a));   /* the model sees them */
    CHECK(!memcmp(b, d, sizeof b));  /* deterministic */
    CHECK(!memcmp(b, p2, sizeof p2)); /* prefix-stable */
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 12; j++) CHECK(b[i] != res[j].index);
        for (int j = 0; j < 8; j++) CHECK(b[i] != pend[j]);
    }
    /* rung results only: a model at once (n0 = 3 already proposed), not the strata */
    o.n_part = 0;
    CHECK_OK(dse_bo_propose(&g.s, &o, NULL, 0, pend, 8, 2, a, &na, &err));
    o.n_part = 8;
    CHECK_OK(dse_bo_propose(&g.s, &o, NULL, 0, pend, 8, 2, b, &nb, &err));
    CHECK(na == 2 && nb == 2 && memcmp(a, b, 2 * sizeof *a));
    /* refused: the full schedule's epoch (or past it), epoch 0, an index past the grid */
    static const struct { int epoch, of; uint64_t past; } bad[] = { { 4, 4, 0 }, { 5, 4, 0 }, { 0, 4, 0 }, { 1, 4, 1 } };
    for (size_t i = 0; i < DSE_ARRAY_LEN(bad); i++) {
        struct dse_bo_partial x = { .index = bad[i].past ? g.n : pend[0], .epoch = bad[i].epoch, .of = bad[i].of,
                                    .top1 = 0.5 };
        o.part = &x, o.n_part = 1;
        CHECK_INT_EQ(dse_bo_propose(&g.s, &o, res, 12, NULL, 0, 1, a, &na, &err), DSE_ERR_CONFIG);
    }
    evo_grid_free(&g);
}
