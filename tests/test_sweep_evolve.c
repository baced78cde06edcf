/* test_sweep_evolve.c: test_sweep's cases on the multi-objective evolution proposer
 * (sweep/evolve.c), pure functions on a made-up grid: determinism, feasibility, no duplicates,
 * exhaustion, the hypervolume, strata, aging, and evolution beating random search. */
#include "tests/sweep_util.h"

/* ---- multi-objective evolution (sweep/evolve.c) -------------------------------------------- */

/* Drive the proposer as a sweep would: ask for `batch`, "train" them, record them in
 * order, until budget results or the proposer has nothing left. Returns results made. */
static int evo_drive(const struct evo_grid *g, const struct dse_evo_opts *o, int budget, int batch,
                     struct dse_evo_result *res) {
    struct dse_err err = { 0 };
    int n = 0;
    while (n < budget) {
        uint64_t out[64];
        int want = budget - n < batch ? budget - n : batch, got = 0;
        CHECK_OK(dse_evo_propose(&g->s, o, res, n, NULL, 0, want, out, &got, &err));
        if (!got) break;
        for (int i = 0; i < got; i++) {
            res[n] = (struct dse_evo_result){ .index = out[i] };
            res[n].obj[0] = evo_top1(g, out[i]);
            res[n].obj[1] = g->params[out[i]];
            n++;
        }
        if (got < want) break;
    }
    return n;
}

void test_evolve_determinism(void) {
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_err err = { 0 };
    struct dse_evo_opts o;
    dse_evo_opts_default(&o);
    o.pop = 8;
    struct dse_evo_result res[40];
    CHECK_INT_EQ(evo_drive(&g, &o, 24, 4, res), 24); /* 8 initial, 16 evolved */
    uint64_t a[8], b[8], c[8], p[3];
    int na, nb, nc, np;
    for (int n_res = 0; n_res <= 24; n_res += 24) { /* the initial sample, then children */
        o.seed = 1;
        CHECK_OK(dse_evo_propose(&g.s, &o, res, n_res, NULL, 0, 8, a, &na, &err));
        CHECK_OK(dse_evo_propose(&g.s, &o, res, n_res, NULL, 0, 8, b, &nb, &err));
        CHECK_OK(dse_evo_propose(&g.s, &o, res, n_res, NULL, 0, 3, p, &np, &err));
        o.seed = 2;
        CHECK_OK(dse_evo_propose(&g.s, &o, res, n_res, NULL, 0, 8, c, &nc, &err));
        CHECK_INT_EQ(na, 8);
        CHECK_INT_EQ(nb, 8);
        CHECK_INT_EQ(nc, 8);
        CHECK_INT_EQ(np, 3);
        CHECK(!memcmp(a, b, sizeof a));  /* same inputs, same proposals */
        CHECK(!memcmp(a, p, sizeof p));  /* prefix-stable */
        CHECK(memcmp(a, c, sizeof a));   /* another seed, others */
    }
    /* one result fewer: another stream, other proposals */
    o.seed = 1;
    CHECK_OK(dse_evo_propose(&g.s, &o, res, 23, NULL, 0, 8, c, &nc, &err));
    CHECK(memcmp(a, c, sizeof a));
    /* two whole runs from the same seed are the same run */
    struct dse_evo_result again[40];
    o.seed = 1;
    CHECK_INT_EQ(evo_drive(&g, &o, 24, 4, again), 24);
    for (int i = 0; i < 24; i++) CHECK_INT_EQ(again[i].index, res[i].index);
    evo_grid_free(&g);
}

void test_evolve_feasible(void) {
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_err err = { 0 };
    CHECK_INT_EQ(g.n, 1080);
    CHECK(g.n_feasible > 100 && g.n_feasible < 1000); /* the constraint prunes some, not most */
    struct dse_evo_opts o;
    dse_evo_opts_default(&o);
    struct dse_evo_result *res = malloc(sizeof *res * 400);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        o.seed = seed;
        int n = evo_drive(&g, &o, 300, 7, res);
        CHECK_INT_EQ(n, 300);
        int bad = 0;
        for (int i = 0; i < n; i++) bad += g.pruned[res[i].index];
        CHECK_INT_EQ(bad, 0);
        CHECK_INT_EQ(evo_dups(res, n), 0);
    }
    /* exclusions (proposed, not yet recorded) are never proposed again */
    uint64_t excl[16], out[64];
    int ne = 0, got;
    for (uint64_t k = 0; k < g.n && ne < 16; k++)
        if (!g.pruned[k]) excl[ne++] = k;
    CHECK_OK(dse_evo_propose(&g.s, &o, res, 50, excl, ne, 64, out, &got, &err));
    CHECK_INT_EQ(got, 64);
    int hit = 0;
    for (int i = 0; i < got; i++) {
        for (int e = 0; e < ne; e++) hit += out[i] == excl[e];
        for (int r = 0; r < 50; r++) hit += out[i] == res[r].index;
        hit += g.pruned[out[i]];
    }
    CHECK_INT_EQ(hit, 0);
    /* refused: an index past the grid, one objective */
    res[0].index = g.n;
    CHECK_INT_EQ(dse_evo_propose(&g.s, &o, res, 1, NULL, 0, 1, out, &got, &err), DSE_ERR_CONFIG);
    res[0].index = 0;
    o.n_obj = 1;
    CHECK_INT_EQ(dse_evo_propose(&g.s, &o, res, 1, NULL, 0, 1, out, &got, &err), DSE_ERR_CONFIG);
    free(res);
    evo_grid_free(&g);
}

void test_evolve_exhaust(void) {
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_evo_opts o;
    dse_evo_opts_default(&o);
    struct dse_evo_result *res = malloc(sizeof *res * (g.n + 64));
    /* asking past the end gives exactly the feasible candidates, once each */
    int n = evo_drive(&g, &o, (int)g.n, 50, res);
    CHECK_INT_EQ(n, g.n_feasible);
    CHECK_INT_EQ(evo_dups(res, n), 0);
    int bad = 0;
    for (int i = 0; i < n; i++) bad += g.pruned[res[i].index];
    CHECK_INT_EQ(bad, 0);
    uint64_t out[8];
    int got = -1;
    struct dse_err err = { 0 };
    CHECK_OK(dse_evo_propose(&g.s, &o, res, n, NULL, 0, 8, out, &got, &err));
    CHECK_INT_EQ(got, 0);
    free(res);
    evo_grid_free(&g);
    /* a space of four: four, then none */
    if (evo_grid_load(&g, "spaces/fmnist_demo.cfg")) { CHECK(0); return; }
    struct dse_evo_result r4[8];
    CHECK_INT_EQ(evo_drive(&g, &o, 8, 8, r4), 4);
    CHECK_INT_EQ(evo_dups(r4, 4), 0);
    evo_grid_free(&g);
}

void test_evolve_hypervolume(void) {
    /* (top-1, cost): the staircase (0.5, 1), (0.8, 3) against (0, 4): 0.5 x 3 + 0.3 x 1;
     * a dominated point, one past the reference and a NaN add nothing */
    struct dse_evo_result r[5] = {
        { .obj = { 0.8, 3 } }, { .obj = { 0.5, 1 } }, { .obj = { 0.4, 2 } }, { .obj = { 0.9, 5 } },
        { .obj = { NAN, 0 } },
    };
    CHECK_NEAR(dse_evo_hypervolume2(r, 5, 0, 4), 0.5 * 3 + 0.3 * 1, 1e-12);
    CHECK_NEAR(dse_evo_hypervolume2(r, 0, 0, 4), 0, 0);
    /* the curve in recorded order, against the worst top-1 (0.4) and cost 5 x 1.01 */
    double hv[5], rt, rc;
    dse_evo_hv_curve(r, 5, hv, &rt, &rc);
    CHECK_NEAR(rt, 0.4, 0);
    CHECK_NEAR(rc, 5.05, 1e-12);
    CHECK_NEAR(hv[0], 0.4 * 2.05, 1e-12);                     /* (0.8, 3) */
    CHECK_NEAR(hv[1], 0.1 * 4.05 + 0.3 * 2.05, 1e-12);        /* + (0.5, 1) */
    CHECK_NEAR(hv[2], hv[1], 1e-12);                          /* (0.4, 2): on the reference */
    CHECK_NEAR(hv[3], hv[1] + 0.1 * 0.05, 1e-12);             /* + (0.9, 5) */
    CHECK_NEAR(hv[4], hv[3], 0);                              /* NaN */
    CHECK_INT_EQ(dse_evo_hv_curve(r, 5, hv, NULL, NULL), 4);
    /* the one-pass prefixes are dse_evo_hypervolume2's doubles exactly: random points on a
     * coarse grid (ties in cost, in top-1, repeated points), some NaN, some past the reference */
    struct dse_pcg32 g;
    dse_pcg32_seed(&g, 5, 5);
    struct dse_evo_result rr[300];
    double pre[300];
    for (int i = 0; i < 300; i++) {
        rr[i] = (struct dse_evo_result){ .index = (uint64_t)i };
        rr[i].obj[0] = i % 37 == 0 ? NAN : 0.05 * (double)dse_pcg32_bounded(&g, 21);
        rr[i].obj[1] = 0.5 * (double)dse_pcg32_bounded(&g, 25);
    }
    CHECK_INT_EQ(dse_evo_hv_prefixes(rr, 300, 0.2, 11.0, pre), 0);
    int differ = 0;
    for (int i = 0; i < 300; i++) differ += pre[i] != dse_evo_hypervolume2(rr, i + 1, 0.2, 11.0);
    CHECK_INT_EQ(differ, 0);
    CHECK(pre[299] > 0);
    /* no usable result: no reference, nothing dominated */
    CHECK_INT_EQ(dse_evo_hv_curve(r + 4, 1, hv, &rt, &rc), 0);
    CHECK(isnan(rt) && isnan(rc) && hv[0] == 0);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The initial population stratified on params (opts.strata): member j is drawn from the
 * j-th of pop equal-count slices of the feasible candidates sorted by params, so params
 * rise along it; prefix-stable; another seed draws other members of the same slices. On
 * a grid too large to scan (bench/large_space.cfg, 1.1 million) the slices are a random
 * pool's, so params still rise along the population. */
void test_evolve_strata(void) {
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_err err = { 0 };
    double *sorted = malloc(sizeof *sorted * g.n);
    int n = 0;
    for (uint64_t k = 0; k < g.n; k++)
        if (!g.pruned[k]) sorted[n++] = g.params[k];
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    struct dse_evo_opts o;
    dse_evo_opts_default(&o);
    o.pop = 8, o.strata = DSE_EVO_PARAMS;
    uint64_t a[8], b[3], c[8];
    int na, nb, nc;
    CHECK_OK(dse_evo_propose(&g.s, &o, NULL, 0, NULL, 0, 8, a, &na, &err));
    CHECK_OK(dse_evo_propose(&g.s, &o, NULL, 0, NULL, 0, 3, b, &nb, &err));
    o.seed = 2;
    CHECK_OK(dse_evo_propose(&g.s, &o, NULL, 0, NULL, 0, 8, c, &nc, &err));
    CHECK_INT_EQ(na, 8);
    CHECK_INT_EQ(nc, 8);
    CHECK(!memcmp(a, b, sizeof b));
    CHECK(memcmp(a, c, sizeof a));
    for (int j = 0; j < 8; j++) {
        int lo = n * j / 8, hi = n * (j + 1) / 8 - 1;
        CHECK(!g.pruned[a[j]] && !g.pruned[c[j]]);
        CHECK(g.params[a[j]] >= sorted[lo] && g.params[a[j]] <= sorted[hi]);
        CHECK(g.params[c[j]] >= sorted[lo] && g.params[c[j]] <= sorted[hi]);
    }
    /* uniform (strata -1): the same seed's sample is not sorted by params */
    o.seed = 1, o.strata = -1;
    CHECK_OK(dse_evo_propose(&g.s, &o, NULL, 0, NULL, 0, 8, c, &nc, &err));
    int rises = 1;
    for (int j = 1; j < 8; j++) rises &= g.params[c[j]] >= g.params[c[j - 1]];
    CHECK(!rises);
    o.strata = DSE_EVO_COST_COUNT;
    CHECK_INT_EQ(dse_evo_propose(&g.s, &o, NULL, 0, NULL, 0, 8, c, &nc, &err), DSE_ERR_CONFIG);
    free(sorted);
    evo_grid_free(&g);

    struct dse_space big;
    if (dse_space_load("bench/large_space.cfg", &big, &err)) { CHECK(0); return; }
    dse_evo_opts_default(&o);
    o.pop = 12, o.strata = DSE_EVO_PARAMS;
    uint64_t d[12];
    int nd;
    CHECK_OK(dse_evo_propose(&big, &o, NULL, 0, NULL, 0, 12, d, &nd, &err));
    CHECK_INT_EQ(nd, 12);
    double prev = 0;
    for (int j = 0; j < nd; j++) {
        double v;
        int pruned = 1;
        const enum dse_evo_cost cost = DSE_EVO_PARAMS;
        CHECK_OK(dse_evo_costs(&big, d[j], &cost, 1, &v, &pruned, &err));
        CHECK(!pruned);
        CHECK(v >= prev);
        prev = v;
    }
    dse_space_free(&big);
}

/* Aging (regularized) evolution: parents come from the pop most recent usable results
 * only, so its proposals equal NSGA-II's on the same results with every older one made
 * unusable (NaN: seen, never a parent); and they differ from NSGA-II's on the full
 * results once the best are old. */
void test_evolve_aging(void) {
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_err err = { 0 };
    struct dse_evo_opts o;
    dse_evo_opts_default(&o);
    o.pop = 6;
    struct dse_evo_result res[40], masked[40];
    CHECK_INT_EQ(evo_drive(&g, &o, 30, 3, res), 30);
    memcpy(masked, res, sizeof res);
    for (int r = 30 - o.pop; r < 30; r++) CHECK(isfinite(res[r].obj[0]) && isfinite(res[r].obj[1])); /* the equivalence's premise */
    for (int r = 0; r < 30 - o.pop; r++) masked[r].obj[0] = NAN;
    uint64_t a[8], b[8], c[8];
    int na, nb, nc;
    o.aging = 1;
    CHECK_OK(dse_evo_propose(&g.s, &o, res, 30, NULL, 0, 8, a, &na, &err));
    o.aging = 0;
    CHECK_OK(dse_evo_propose(&g.s, &o, masked, 30, NULL, 0, 8, b, &nb, &err));
    CHECK_OK(dse_evo_propose(&g.s, &o, res, 30, NULL, 0, 8, c, &nc, &err));
    CHECK_INT_EQ(na, 8);
    CHECK_INT_EQ(nb, 8);
    CHECK(!memcmp(a, b, sizeof a));
    CHECK(memcmp(a, c, sizeof a));
    evo_grid_free(&g);
}

/* Evolution beats random search on the made-up objective: after BUDGET evaluations the
 * median hypervolume of evolution over seeds exceeds the upper quartile of random
 * search's (the median alone is beaten even by evolution that picks the worst parents).
 * Random search is the same proposer with a population as large as the budget (all of it
 * the initial random sample). */
void test_evolve_quality(void) {
    enum { SEEDS = 15, BUDGET = 60 };
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    double ref_cost = 0;
    for (uint64_t k = 0; k < g.n; k++)
        if (!g.pruned[k] && g.params[k] > ref_cost) ref_cost = g.params[k];
    ref_cost *= 1.01;
    struct dse_evo_result *all = malloc(sizeof *all * g.n);
    int n_all = 0;
    for (uint64_t k = 0; k < g.n; k++)
        if (!g.pruned[k]) all[n_all++] = (struct dse_evo_result){ .index = k, .obj = { evo_top1(&g, k), g.params[k] } };
    double hv_grid = dse_evo_hypervolume2(all, n_all, 0.5, ref_cost);
    double hv[2][SEEDS];
    struct dse_evo_result res[BUDGET];
    double t0 = now_s();
    for (int strategy = 0; strategy < 2; strategy++)
        for (int i = 0; i < SEEDS; i++) {
            struct dse_evo_opts o;
            dse_evo_opts_default(&o);
            o.seed = 100 + (uint64_t)i;
            o.pop = strategy ? 12 : BUDGET;
            CHECK_INT_EQ(evo_drive(&g, &o, BUDGET, 4, res), BUDGET);
            hv[strategy][i] = dse_evo_hypervolume2(res, BUDGET, 0.5, ref_cost) / hv_grid;
        }
    double t = now_s() - t0;
    qsort(hv[0], SEEDS, sizeof **hv, cmp_double);
    qsort(hv[1], SEEDS, sizeof **hv, cmp_double);
    printf("  evolve-quality: %d evaluations, hypervolume / grid's: random median %.4f, upper quartile %.4f "
           "(%.4f .. %.4f), evolution median %.4f (%.4f .. %.4f); %.2f s\n", BUDGET, hv[0][SEEDS / 2],
           hv[0][3 * SEEDS / 4], hv[0][0], hv[0][SEEDS - 1], hv[1][SEEDS / 2], hv[1][0], hv[1][SEEDS - 1], t);
    CHECK(hv[1][SEEDS / 2] > hv[0][3 * SEEDS / 4]);
    CHECK(t < 2);
    free(all);
    evo_grid_free(&g);
}

/* The population a sweep gives evolution when its space sets no pop (dse_evo_pop_for_budget,
 * issue #36 item 2): a third of the budget within 4 to 16; 16 for an unknown budget. From a
 * budget of 12 on, the first generation is never more than a third of it. */
void test_evolve_pop(void) {
    static const struct { int64_t budget; int pop; } c[] = {
        { 0, 16 },  { 1, 4 },   { 7, 4 },   { 11, 4 },  { 12, 4 },     { 14, 4 },
        { 15, 5 },  { 19, 6 },  { 30, 10 }, { 48, 16 }, { 50, 16 },    { 1000000, 16 },
    };
    for (size_t i = 0; i < DSE_ARRAY_LEN(c); i++) {
        const int pop = dse_evo_pop_for_budget(c[i].budget);
        if (pop != c[i].pop) printf("  budget %lld: pop %d, expected %d\n", (long long)c[i].budget, pop, c[i].pop);
        CHECK_INT_EQ(pop, c[i].pop);
        if (c[i].budget >= 12) CHECK(3 * (int64_t)pop <= c[i].budget);
    }
}
