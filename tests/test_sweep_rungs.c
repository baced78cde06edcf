/* test_sweep_rungs.c: test_sweep's cases on rungs: successive halving's ranking and plan,
 * pausing at rungs, and asynchronous successive halving (sweep/asha.c): the promotion rule,
 * and 1-worker, killed and 2-worker sweeps against an oracle. */
#include "tests/sweep_util.h"

/* ---- successive halving ------------------------------------------------------------------ */

void test_rank(void) {
    /* a front of three (small and weak, middle, big and strong), one dominated */
    const double top1[] = { 0.60, 0.80, 0.90, 0.70 };
    const int64_t bytes[] = { 100, 200, 400, 300 };
    const char *const ids[] = { "a", "b", "c", "d" };
    int order[4], prank[4];
    dse_sweep_rank_rung(4, top1, bytes, ids, DSE_SWEEP_RANK_PARETO, order, prank);
    CHECK_INT_EQ(prank[0], 0);
    CHECK_INT_EQ(prank[1], 0);
    CHECK_INT_EQ(prank[2], 0);
    CHECK_INT_EQ(prank[3], 1);
    /* the front's ends first (the smallest is not culled for being small), larger top-1 first */
    CHECK_INT_EQ(order[0], 2);
    CHECK_INT_EQ(order[1], 0);
    CHECK_INT_EQ(order[2], 1);
    CHECK_INT_EQ(order[3], 3);
    dse_sweep_rank_rung(4, top1, bytes, ids, DSE_SWEEP_RANK_TOP1, order, NULL);
    CHECK_INT_EQ(order[0], 2);
    CHECK_INT_EQ(order[1], 1);
    CHECK_INT_EQ(order[2], 3);
    CHECK_INT_EQ(order[3], 0);
    /* ties: equal points share a rank; the id decides, so the order never depends on input order */
    const double t2[] = { 0.5, 0.5 };
    const int64_t b2[] = { 10, 10 };
    const char *const i2[] = { "z", "y" };
    dse_sweep_rank_rung(2, t2, b2, i2, DSE_SWEEP_RANK_PARETO, order, prank);
    CHECK_INT_EQ(prank[0], 0);
    CHECK_INT_EQ(prank[1], 0);
    CHECK_INT_EQ(order[0], 1);
    CHECK_INT_EQ(dse_sweep_keep(9, 3), 3);
    CHECK_INT_EQ(dse_sweep_keep(2, 3), 1);
    CHECK_INT_EQ(dse_sweep_keep(0, 3), 0);
    CHECK_INT_EQ(dse_sweep_keep(8, 2), 4);
}

void test_plan(void) {
    struct dse_sweep_plan p;
    struct dse_err err = { 0 };
    memset(&p, 0, sizeof p);
    p.epochs = 10, p.halving = 1, p.eta = 3, p.min_epochs = 1;
    CHECK_OK(dse_sweep_plan_rungs(&p, &err));
    CHECK_INT_EQ(p.n_rungs, 3); /* 1, 3, 9 */
    CHECK_INT_EQ(p.rungs[2], 9);
    p.epochs = 9;
    CHECK_OK(dse_sweep_plan_rungs(&p, &err));
    CHECK_INT_EQ(p.n_rungs, 2);
    p.min_epochs = 9;
    CHECK_INT_EQ(dse_sweep_plan_rungs(&p, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "no rung") != NULL);
    p.halving = 0;
    CHECK_OK(dse_sweep_plan_rungs(&p, &err));
    CHECK_INT_EQ(p.n_rungs, 0);
    /* what to do next, from a record and the rungs */
    struct dse_rec r;
    struct dse_rung rungs[2];
    int target, rung;
    memset(rungs, 0, sizeof rungs);
    dse_rec_init(&r);
    strcpy(r.id, "c1");
    p.halving = 1, p.epochs = 5, p.eta = 3, p.min_epochs = 1;
    CHECK_OK(dse_sweep_plan_rungs(&p, &err)); /* rungs at 1, 3 */
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_TRAIN);
    CHECK_INT_EQ(target, 1);
    struct dse_epoch_result ep = { .train_loss = 1, .test_loss = 1, .top1 = 0.5f, .top5 = 0.9f, .seconds = 1, .img_per_s = 1,
                                .unpredicted = 0 };
    CHECK_OK(dse_rec_set_epoch(&r, 0, &ep, &err));
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_WAIT);
    char promoted[1][DSE_ID_SIZE] = { "c1" };
    rungs[0].decided = 1, rungs[0].promoted = promoted, rungs[0].n_promoted = 1;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_TRAIN);
    CHECK_INT_EQ(target, 3);
    rungs[0].n_promoted = 0;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_STOP);
    CHECK_INT_EQ(rung, 0);
    r.status = DSE_REC_STOPPED;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_NONE);
    dse_rec_deinit(&r);
    /* plan.json round trip: the GPU fields (precision, algos) come back as written */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/plan-rt", scratch());
    CHECK_OK(dse_fs_mkdirs(dir, NULL));
    p.precision = DSE_CUDA_MATH_TF32, p.nondeterministic = 1;
    int existed = -1, missing = -1;
    CHECK_OK(dse_plan_create(dir, &p, "test", &existed, &err));
    CHECK_INT_EQ(existed, 0);
    struct dse_sweep_plan q;
    memset(&q, 0, sizeof q);
    CHECK_OK(dse_plan_read(dir, &q, &missing, &err));
    CHECK_INT_EQ(missing, 0);
    CHECK_INT_EQ(q.precision, DSE_CUDA_MATH_TF32);
    CHECK_INT_EQ(q.nondeterministic, 1);
    CHECK_INT_EQ(q.epochs, p.epochs);
}

/* Pausing at rungs changes nothing: every epoch a halving sweep trained is bit for bit
 * the epoch full training computed (same schedule over R, resumed from the rung's
 * checkpoint). */
void test_pause(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    struct recs full, sh;
    recs_load(reference(0), &full);
    recs_load(reference(1), &sh);
    CHECK_INT_EQ(full.n, 4);
    CHECK_INT_EQ(sh.n, 4);
    int compared = 0;
    for (int i = 0; i < full.n && i < sh.n; i++) {
        const struct dse_rec *f = &full.r[i], *h = &sh.r[i];
        CHECK_STR_EQ(f->id, h->id);
        CHECK(h->n_epochs >= 1 && h->n_epochs <= f->n_epochs);
        for (int e = 0; e < h->n_epochs && e < f->n_epochs; e++, compared++) {
            float a[4] = { f->ep[e].train_loss, f->ep[e].test_loss, f->ep[e].top1, f->ep[e].top5 };
            float b[4] = { h->ep[e].train_loss, h->ep[e].test_loss, h->ep[e].top1, h->ep[e].top5 };
            CHECK(memcmp(a, b, sizeof a) == 0);
        }
    }
    CHECK_INT_EQ(compared, 7);
    /* paused: a candidate left pending and no worker alive. dse status promises no ETA
     * and says how to go on */
    char dir[200], cmd[1200], log[300], *text = NULL;
    snprintf(dir, sizeof dir, "%s.paused", reference(0));
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s' && sed -i 's/\"status\": \"done\"/\"status\": "
             "\"pending\"/' '%s/candidates/%s.json'", dir, reference(0), dir, dir, full.r[0].id);
    CHECK_INT_EQ(system(cmd), 0);
    snprintf(log, sizeof log, "%s.status", dir);
    const char *args[] = { "status", dir, NULL };
    CHECK_INT_EQ(run_dse(log, args, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "Finished 3 of 4") && strstr(text, "No candidate is being trained (no live lease). If "
                                                                    "no dse sweep is running on it, go on with: "
                                                                    "dse sweep SPACE --out "));
    CHECK(text && !strstr(text, "ETA"));
    free(text);
    /* --json: one line; the paused state and no ETA */
    text = NULL;
    const char *jargs[] = { "status", dir, "--json", NULL };
    snprintf(log, sizeof log, "%s.json", dir); /* run_dse appends to its log */
    CHECK_INT_EQ(run_dse(log, jargs, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "\"state\": \"idle\", \"candidates\": 4, \"pruned\": 0, \"finished\": 3, "
                               "\"by_status\": {\"pending\": 1, \"pruned\": 0, \"done\": 3,"));
    CHECK(text && strstr(text, "\"eta_seconds\": null}\n") && count_lines_of(text) == 1);
    free(text);
    /* --watch on a finished sweep reports once and returns */
    text = NULL;
    const char *wargs[] = { "status", reference(0), "--json", "--watch", "5", NULL };
    snprintf(log, sizeof log, "%s.watch", dir);
    CHECK_INT_EQ(run_dse(log, wargs, 4), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "\"state\": \"finished\"") && count_lines_of(text) == 1);
    free(text);
    /* an analytic sweep prints its table and frontier, and the next command */
    const char *aargs[] = { "sweep", "spaces/squeeze_ratio.cfg", "--analytic-only", "--out", dir, NULL };
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_INT_EQ(system(cmd), 0);
    for (int run = 0; run < 2; run++) {
        snprintf(log, sizeof log, "%s.analytic%d", dir, run);
        CHECK_INT_EQ(run_dse(log, aargs, 60), 0);
        text = NULL;
        CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
        CHECK(text && strstr(text, run ? "8 kept, 0 pruned by constraints (8 already there, left as they were)\n"
                                       : "8 kept, 0 pruned by constraints\n"));
        CHECK(text && strstr(text, "## Frontier (min model size, min FLOPs): 1 of 8 candidates"));
        CHECK(text && strstr(text, "next: dse sweep spaces/squeeze_ratio.cfg --out "));
        free(text);
    }
    /* dse train --json: model_bytes is the model file, as in sweeps ((params + buffers) x 4);
     * what the engine allocated is engine_bytes */
    const char *net = "experiments/squeezenet/squeezenet_fmnist.cfg";
    const char *targs[] = { "train", net, "--epochs", "1", "--limit-train", "64", "--limit-test", "64", "--batch",
                            "32", "--json", NULL };
    snprintf(log, sizeof log, "%s.train", dir);
    CHECK_INT_EQ(run_dse(log, targs, 120), 0);
    text = NULL;
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    struct dse_net n;
    struct dse_err e = { 0 };
    if (!dse_netfile_load(net, NULL, &n, &e)) {
        struct dse_cost_layer *cl = calloc((size_t)n.n_layers, sizeof *cl);
        struct dse_cost_totals tot;
        if (cl && !dse_cost_net(&n, 1, cl, &tot, &e)) {
            char want[64];
            snprintf(want, sizeof want, "\"model_bytes\": %lld, \"engine_bytes\": ", (long long)tot.model_bytes);
            CHECK(text && strstr(text, want));
        }
        free(cl);
        dse_net_deinit(&n);
    } else {
        CHECK(0);
    }
    free(text);
    recs_free(&full), recs_free(&sh);
}

/* ---- asynchronous successive halving ----------------------------------------------------- */

/* Results arrive at one rung one at a time; after each, every promotable candidate is
 * promoted (what one worker does: promotions before fresh work). eta 3, by top-1. By hand:
 * a .50, b .70: n < 3, quota 0; c .60: quota 1, b is first: promoted; d .90: quota 1, d
 * first: promoted (b was promoted on less: ASHA's known misstep); e .40: quota 1, d already;
 * f .80: quota 2 (d, f): f promoted; g .30: quota 2, both already. So b, d, f, in that order;
 * closed at n = 7 the quota is still 2: nothing more. */
void test_asha_rule(void) {
    const double top1[] = { 0.50, 0.70, 0.60, 0.90, 0.40, 0.80, 0.30 };
    const int64_t bytes[] = { 10, 10, 10, 10, 10, 10, 10 };
    const char *const ids[] = { "a", "b", "c", "d", "e", "f", "g" };
    const char *const want[] = { "", "", "b", "d", "", "f", "" };
    const int want_quota[] = { 0, 0, 1, 1, 1, 2, 2 };
    int promoted[7] = { 0 }, promotable[7], quota;
    for (int n = 1; n <= 7; n++) {
        int k = dse_asha_promotable(n, top1, bytes, ids, promoted, 3, DSE_SWEEP_RANK_TOP1, 0, promotable, &quota);
        char got[8] = "";
        for (int i = 0; i < n; i++)
            if (promotable[i]) strcat(got, ids[i]), promoted[i] = 1;
        CHECK_STR_EQ(got, want[n - 1]);
        CHECK_INT_EQ(k, (int)strlen(want[n - 1]));
        CHECK_INT_EQ(quota, want_quota[n - 1]);
    }
    CHECK_INT_EQ(dse_asha_promotable(7, top1, bytes, ids, promoted, 3, DSE_SWEEP_RANK_TOP1, 1, promotable, &quota), 0);
    CHECK_INT_EQ(quota, 2);
    /* a rung reached by fewer than eta promotes nobody while open; closed, its best (as SH) */
    const int none[2] = { 0, 0 };
    CHECK_INT_EQ(dse_asha_promotable(2, top1, bytes, ids, none, 3, DSE_SWEEP_RANK_TOP1, 0, promotable, &quota), 0);
    CHECK_INT_EQ(dse_asha_promotable(2, top1, bytes, ids, none, 3, DSE_SWEEP_RANK_TOP1, 1, promotable, &quota), 1);
    CHECK_INT_EQ(promotable[1], 1);
    CHECK_INT_EQ(promotable[0], 0);
    /* by Pareto rank (test_rank's points: the front's ends c and a first), eta 2: a
     * promoted already, so only c */
    const double pt[] = { 0.60, 0.80, 0.90, 0.70 };
    const int64_t pb[] = { 100, 200, 400, 300 };
    const int pp[4] = { 1, 0, 0, 0 };
    CHECK_INT_EQ(dse_asha_promotable(4, pt, pb, ids, pp, 2, DSE_SWEEP_RANK_PARETO, 0, promotable, &quota), 1);
    CHECK_INT_EQ(quota, 2);
    CHECK_INT_EQ(promotable[2], 1);
    /* by top-1 the same four promote c and b */
    const int np[4] = { 0, 0, 0, 0 };
    CHECK_INT_EQ(dse_asha_promotable(4, pt, pb, ids, np, 2, DSE_SWEEP_RANK_TOP1, 0, promotable, &quota), 2);
    CHECK(promotable[2] && promotable[1] && !promotable[0] && !promotable[3]);
    /* the next action from the rungs' state: promotable, paused (open), stopped (closed) */
    struct dse_sweep_plan p;
    struct dse_err err = { 0 };
    memset(&p, 0, sizeof p);
    p.epochs = 4, p.halving = DSE_SWEEP_HALVING_ASHA, p.eta = 2, p.min_epochs = 1;
    CHECK_OK(dse_sweep_plan_rungs(&p, &err)); /* rungs at 1, 2 */
    CHECK_INT_EQ(p.n_rungs, 2);
    struct dse_rec r;
    struct dse_rung rungs[2];
    int target, rung;
    memset(rungs, 0, sizeof rungs);
    dse_rec_init(&r);
    strcpy(r.id, "c1");
    struct dse_epoch_result ep = { .train_loss = 1, .test_loss = 1, .top1 = 0.5f, .top5 = 0.9f, .seconds = 1, .img_per_s = 1,
                                .unpredicted = 0 };
    CHECK_OK(dse_rec_set_epoch(&r, 0, &ep, &err));
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_WAIT);
    CHECK_INT_EQ(rung, 0);
    char ids1[1][DSE_ID_SIZE] = { "c1" };
    rungs[0].promotable = ids1, rungs[0].n_promotable = 1;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_PROMOTE);
    CHECK_INT_EQ(target, 2);
    rungs[0].n_promotable = 0, rungs[0].decided = 1;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_STOP);
    rungs[0].promoted = ids1, rungs[0].n_promoted = 1;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_TRAIN);
    CHECK_INT_EQ(target, 2);
    CHECK_OK(dse_rec_set_epoch(&r, 1, &ep, &err));
    rungs[1].promotable = ids1, rungs[1].n_promotable = 1;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_PROMOTE);
    CHECK_INT_EQ(target, 4); /* the last rung goes on to R */
    CHECK_INT_EQ(rung, 1);
    dse_rec_deinit(&r);
    /* plan.json: none and sh as before ASHA (dse-plan-1, "halving" false or true); asha in a
     * dse-plan-2 file, which a dse from before refuses; each reads back as written */
    for (int h = 0; h < DSE_SWEEP_HALVING_COUNT; h++) {
        char dir[512], path[600], *text = NULL;
        snprintf(dir, sizeof dir, "%s/plan-%s", scratch(), dse_sweep_halving_str((enum dse_sweep_halving)h));
        CHECK_OK(dse_fs_mkdirs(dir, NULL));
        p.halving = (enum dse_sweep_halving)h;
        CHECK_OK(dse_sweep_plan_rungs(&p, &err));
        int existed = -1, missing = -1;
        CHECK_OK(dse_plan_create(dir, &p, "test", &existed, &err));
        snprintf(path, sizeof path, "%s/plan.json", dir);
        CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
        static const char *const head[] = {
            "{\n  \"format\": \"dse-plan-1\",\n  \"epochs\": 4,\n  \"halving\": false,\n  \"eta\": 2,\n",
            "{\n  \"format\": \"dse-plan-1\",\n  \"epochs\": 4,\n  \"halving\": true,\n  \"eta\": 2,\n",
            "{\n  \"format\": \"dse-plan-2\",\n  \"epochs\": 4,\n  \"halving\": \"asha\",\n  \"eta\": 2,\n" };
        CHECK(text && !strncmp(text, head[h], strlen(head[h])));
        free(text);
        struct dse_sweep_plan q;
        CHECK_OK(dse_plan_read(dir, &q, &missing, &err));
        CHECK_INT_EQ(q.halving, h);
        CHECK_INT_EQ(q.n_rungs, h ? 2 : 0);
    }
}

/* ---- ASHA sweeps ------------------------------------------------------------------------ */

/* Replicates under asha: an architecture's fate is its records' together (dse_asha_rungs,
 * dse_asha_gone, dse_sweep_next), on records made here, 2 replicates each, eta 2, rungs at
 * epochs 1 and 2 of 4, ranked by top-1. */
struct fate_rec {
    const char *arch; /* its id: "c" and 16 hex digits */
    int rep, status, retry, epochs;
    double top1;      /* at every epoch it has */
};

static void fate_load(const struct fate_rec *f, int n, struct dse_rec *r, const struct dse_rec **p) {
    for (int i = 0; i < n; i++) {
        dse_rec_init(&r[i]);
        dse_strlcpy(r[i].id, f[i].arch, sizeof r[i].id);
        dse_space_id_replicate(r[i].id, f[i].rep);
        r[i].index = (int64_t)i / 2, r[i].replicate = f[i].rep, r[i].status = f[i].status;
        r[i].failed_retry = f[i].retry, r[i].model_bytes = 1000;
        for (int e = 0; e < f[i].epochs; e++) {
            struct dse_epoch_result v = { .top1 = (float)f[i].top1 };
            CHECK_OK(dse_rec_set_epoch(&r[i], e, &v, NULL));
        }
        p[i] = &r[i];
    }
}

/* What dse_sweep_next says to record i (its rung through *rung), the rungs loaded from dir
 * with per records an architecture. */
static enum dse_action fate_next(const char *dir, const struct dse_sweep_plan *plan, const struct dse_rec **p, int n,
                                 int per, int i, struct dse_rung *rungs, int *target, int *rung) {
    struct dse_err err = { 0 };
    for (int k = 0; k < DSE_SWEEP_RUNGS_MAX; k++) dse_rung_deinit(&rungs[k]);
    CHECK_OK(dse_asha_rungs(dir, plan, p, n, per, rungs, &err));
    return dse_sweep_next(p[i], plan, rungs, target, rung);
}

void test_asha_reps_fate(void) {
    enum { P = DSE_REC_PENDING, S = DSE_REC_STOPPED, F = DSE_REC_FAILED, V = DSE_REC_DIVERGED };
    const char *A = "ca000000000000000", *B = "cb000000000000000", *C = "cc000000000000000", *D = "cd000000000000000";
    struct dse_sweep_plan plan = { .epochs = 4, .halving = DSE_SWEEP_HALVING_ASHA, .eta = 2, .min_epochs = 1,
                                   .rank = DSE_SWEEP_RANK_TOP1, .n_rungs = 2, .rungs = { 1, 2 } };
    struct dse_rung rungs[DSE_SWEEP_RUNGS_MAX];
    struct dse_rec r[8];
    const struct dse_rec *p[8];
    struct dse_err err = { 0 };
    char dir[300], path[400];
    int target, rung;
    memset(rungs, 0, sizeof rungs);
    snprintf(dir, sizeof dir, "%s/asha_fate", scratch());
    CHECK_OK(dse_fs_mkdirs(dir, &err));

    /* 1. A record file missing (B's replicate 1): B has not reached rung 0, whatever its one
     * record says; of A and C (D's replicate 1 is still training) the better goes on. A mean
     * of fewer ranked B first and promoted it. */
    const struct fate_rec missing[] = { { A, 0, P, 0, 1, .80 }, { A, 1, P, 0, 1, .80 }, { B, 0, P, 0, 1, .95 },
                                        { C, 0, P, 0, 1, .50 }, { C, 1, P, 0, 1, .50 }, { D, 0, P, 0, 1, .40 },
                                        { D, 1, P, 0, 0, .40 } };
    fate_load(missing, 7, r, p);
    CHECK_INT_EQ(fate_next(dir, &plan, p, 7, 2, 2, rungs, &target, &rung), DSE_ACT_WAIT);
    CHECK_INT_EQ(rungs[0].n_reached, 2);
    CHECK(rungs[0].n_promotable == 1 && !strcmp(rungs[0].promotable[0], r[0].id));
    for (int i = 0; i < 7; i++) dse_rec_deinit(&r[i]);

    /* 2. A's replicate 0 reopened (failed by crashes before rung 0, then pending again) after
     * rung 0 closed without A and stopped its replicate 1: A is gone. Replicate 0 stops at once,
     * and, had it reached the rung already at the top of it, is still not promoted alone. */
    struct fate_rec reopened[] = { { A, 0, P, 0, 0, .95 }, { A, 1, S, 0, 1, .90 }, { B, 0, P, 0, 1, .60 },
                                   { B, 1, P, 0, 1, .60 }, { C, 0, P, 0, 1, .50 }, { C, 1, P, 0, 1, .50 },
                                   { D, 0, P, 0, 1, .40 }, { D, 1, P, 0, 1, .40 } };
    for (int e = 0; e < 2; e++) {
        reopened[0].epochs = e;
        fate_load(reopened, 8, r, p);
        r[1].stopped_rung = 0, r[1].stopped_epoch = 1;
        CHECK_INT_EQ(fate_next(dir, &plan, p, 8, 2, 0, rungs, &target, &rung), DSE_ACT_STOP);
        CHECK_INT_EQ(rung, 0);
        CHECK(dse_asha_gone(rungs, A) && !strcmp(dse_asha_gone(rungs, A), r[1].id));
        CHECK(!dse_asha_gone(rungs, B));
        for (int j = 0; j < rungs[0].n_promotable; j++) CHECK(strcmp(rungs[0].promotable[j], A));
        CHECK_INT_EQ(rungs[0].n_reached, e ? 4 : 3); /* it reached the rung: it counts in the quota */
        CHECK(rungs[0].decided); /* a gone architecture's records keep no rung open */
        CHECK_INT_EQ(fate_next(dir, &plan, p, 8, 2, 2, rungs, &target, &rung), DSE_ACT_PROMOTE); /* B, the next best */
        for (int i = 0; i < 8; i++) dse_rec_deinit(&r[i]);
    }

    /* 3. A promoted at rung 0, then its replicate 0 diverges (or fails for good) in epoch 2:
     * replicate 1 stops at rung 1 without training to it, or at it without waiting; a replicate
     * failed by crashes (retried by a later command) stops nothing; after the last rung the
     * final stretch goes on. */
    snprintf(path, sizeof path, "%s/rungs/asha-0", dir);
    CHECK_OK(dse_fs_mkdirs(path, &err));
    for (int k = 0; k < 2; k++) { /* B too, and its rung 1 result still to come: rung 1 is open */
        snprintf(path, sizeof path, "%s/rungs/asha-0/%s", dir, k ? B : A);
        CHECK_OK(dse_fs_write_atomic(path, "{}\n", 3, &err));
    }
    const struct { int status, retry, r1_epochs, promoted1; enum dse_action want; int want_rung; } after[] = {
        { V, 0, 1, 0, DSE_ACT_STOP, 1 },   /* diverged: stops short of rung 1 */
        { F, 0, 1, 0, DSE_ACT_STOP, 1 },   /* failed for good: the same */
        { V, 0, 2, 0, DSE_ACT_STOP, 1 },   /* at rung 1: stops, not paused there */
        { F, 1, 1, 0, DSE_ACT_TRAIN, -1 }, /* failed by crashes: trains on to rung 1 */
        { V, 0, 2, 1, DSE_ACT_TRAIN, -1 }, /* promoted at rung 1 too: on to R */
    };
    for (size_t c = 0; c < DSE_ARRAY_LEN(after); c++) {
        struct fate_rec f[] = { { A, 0, after[c].status, after[c].retry, 1, .80 }, { A, 1, P, 0, after[c].r1_epochs, .80 },
                                { B, 0, P, 0, 1, .60 }, { B, 1, P, 0, 1, .60 } };
        fate_load(f, 4, r, p);
        snprintf(path, sizeof path, "%s/rungs/asha-1", dir);
        CHECK_OK(dse_fs_mkdirs(path, &err));
        snprintf(path, sizeof path, "%s/rungs/asha-1/%s", dir, A);
        if (after[c].promoted1) CHECK_OK(dse_fs_write_atomic(path, "{}\n", 3, &err));
        else unlink(path);
        const enum dse_action a = fate_next(dir, &plan, p, 4, 2, 1, rungs, &target, &rung);
        if (a != after[c].want || rung != after[c].want_rung)
            printf("  case %zu: action %d at rung %d, want %d at %d\n", c, a, rung, after[c].want, after[c].want_rung);
        CHECK(a == after[c].want && rung == after[c].want_rung);
        for (int i = 0; i < 4; i++) dse_rec_deinit(&r[i]);
    }

    /* 4. Two architectures gone, in reverse id order in recs, D by two records: each found,
     * each named by its first record in recs; rung 0's stopped list names D once. */
    const struct fate_rec two[] = { { D, 1, S, 0, 1, .40 }, { D, 0, S, 0, 1, .40 }, { C, 0, P, 0, 1, .50 },
                                    { C, 1, V, 0, 1, .50 } };
    fate_load(two, 4, r, p);
    r[0].stopped_rung = r[1].stopped_rung = 0, r[0].stopped_epoch = r[1].stopped_epoch = 1;
    fate_next(dir, &plan, p, 4, 2, 2, rungs, &target, &rung);
    CHECK_INT_EQ(rungs[0].n_gone, 2);
    CHECK(dse_asha_gone(rungs, C) && !strcmp(dse_asha_gone(rungs, C), r[3].id));
    CHECK(dse_asha_gone(rungs, D) && !strcmp(dse_asha_gone(rungs, D), r[0].id));
    CHECK(!dse_asha_gone(rungs, A));
    CHECK(rungs[0].n_stopped == 1 && !strcmp(rungs[0].stopped[0], D));
    for (int i = 0; i < 4; i++) dse_rec_deinit(&r[i]);
    for (int k = 0; k < DSE_SWEEP_RUNGS_MAX; k++) dse_rung_deinit(&rungs[k]);
}

/* tests/spaces/sweep_tiny.cfg (4 candidates, 3 epochs) with --early-stop asha --eta 2: rungs
 * at 1 and 2 epochs. */
#define ASHA_ETA 2
static const int asha_rungs[] = { 1, 2 };
#define ASHA_R 3

static int asha_promoted(const char *dir, int k, const char *id) {
    char path[700];
    if (snprintf(path, sizeof path, "%s/rungs/asha-%d/%s", dir, k, id) >= (int)sizeof path) return 0;
    return access(path, F_OK) == 0;
}

static const struct dse_rec *recs_find(const struct recs *x, const char *id) {
    for (int i = 0; i < x->n; i++)
        if (!strcmp(x->r[i].id, id)) return &x->r[i];
    return NULL;
}

/* Better first by top-1 at epoch e, then the smaller model, then the id (--rank top1). */
static int asha_better(const struct dse_rec *a, const struct dse_rec *b, int e) {
    float ta = a->ep[e - 1].top1, tb = b->ep[e - 1].top1;
    if (ta != tb) return ta > tb;
    if (a->model_bytes != b->model_bytes) return a->model_bytes < b->model_bytes;
    return strcmp(a->id, b->id) < 0;
}

/* What one ASHA worker does with these results, worked out here on its own (the oracle of
 * sweep-asha): stops first, then a promotion at the highest rung, then a fresh candidate, each
 * in grid order; a rung's quota floor(n / eta) of the n there so far, max(1, ...) once closed.
 * epochs[i] and stopped[i] (the rung, or -1) and prom[i][k] of candidate x->r[i]. */
static void asha_oracle(const struct recs *x, int *epochs, int *stopped, int prom[][2]) {
    const int nr = DSE_ARRAY_LEN(asha_rungs);
    int n = x->n, by_index[16];
    for (int i = 0; i < n; i++) epochs[i] = 0, stopped[i] = -1, prom[i][0] = prom[i][1] = 0, by_index[i] = i;
    for (int a = 0; a < n; a++) /* grid order */
        for (int b = a + 1; b < n; b++)
            if (x->r[by_index[b]].index < x->r[by_index[a]].index) {
                int t = by_index[a];
                by_index[a] = by_index[b], by_index[b] = t;
            }
    for (int step = 0; step < 100; step++) {
        int promotable[16][2] = { { 0 } }, closed[2] = { 0, 0 };
        for (int k = 0; k < nr; k++) {
            int set[16], m = 0, below = 0;
            for (int i = 0; i < n; i++) {
                int eligible = k == 0 || prom[i][k - 1];
                if (eligible && epochs[i] >= asha_rungs[k]) set[m++] = i;
                else if (eligible && stopped[i] < 0 && epochs[i] < ASHA_R) below = 1;
            }
            int open_before = k > 0 && !closed[k - 1];
            for (int i = 0; k > 0 && i < n; i++) open_before |= promotable[i][k - 1];
            closed[k] = !below && !open_before;
            for (int a = 0; a < m; a++) /* best first */
                for (int b = a + 1; b < m; b++)
                    if (asha_better(&x->r[set[b]], &x->r[set[a]], asha_rungs[k])) {
                        int t = set[a];
                        set[a] = set[b], set[b] = t;
                    }
            int quota = closed[k] && m > 0 && m / ASHA_ETA < 1 ? 1 : m / ASHA_ETA;
            for (int j = 0; j < quota; j++)
                if (!prom[set[j]][k] && stopped[set[j]] < 0) promotable[set[j]][k] = 1;
        }
        int did = 0;
        for (int j = 0; j < n && !did; j++) { /* a stop */
            int i = by_index[j];
            for (int k = 0; k < nr && !did; k++)
                if (stopped[i] < 0 && epochs[i] == asha_rungs[k] && !prom[i][k] && !promotable[i][k] && closed[k])
                    stopped[i] = k, did = 1;
        }
        for (int k = nr - 1; k >= 0 && !did; k--) /* a promotion, the highest rung first */
            for (int j = 0; j < n && !did; j++) {
                int i = by_index[j];
                if (!promotable[i][k]) continue;
                prom[i][k] = 1;
                epochs[i] = k + 1 < nr ? asha_rungs[k + 1] : ASHA_R;
                did = 1;
            }
        for (int j = 0; j < n && !did; j++) /* a fresh one */
            if (!epochs[by_index[j]]) epochs[by_index[j]] = asha_rungs[0], did = 1;
        if (!did) break;
    }
}

/* Each promotion file of dir justified by what it records: it is the candidate's, its ranking
 * holds candidates that had reached the rung (their top-1 and size as their records have them,
 * each promoted from the rung below), ranked as dse_sweep_rank_rung ranks them, and the
 * candidate within the quota (floor(n / eta), max(1, ...) if closed); a candidate it says was
 * promoted already has its file. Every candidate trained past a rung was promoted there; one
 * stopped at a rung was not. Returns the promotions counted. */
static int asha_justified(const char *dir, const struct recs *x, enum dse_sweep_rank rank) {
    int count = 0;
    for (int i = 0; i < x->n; i++) {
        const struct dse_rec *r = &x->r[i];
        for (int k = 0; k < DSE_ARRAY_LEN(asha_rungs); k++) {
            const int has = asha_promoted(dir, k, r->id);
            if (r->n_epochs > asha_rungs[k]) CHECK(has);
            if (r->status == DSE_REC_STOPPED && r->stopped_rung == k) {
                CHECK(!has);
                CHECK_INT_EQ(r->n_epochs, asha_rungs[k]);
            }
            if (!has) continue;
            count++;
            char path[700];
            struct dse_json_doc *doc = NULL;
            snprintf(path, sizeof path, "%s/rungs/asha-%d/%s", dir, k, r->id);
            CHECK_OK(dse_json_load(path, &doc, NULL));
            if (!doc) continue;
            const struct dse_json *root = dse_json_root(doc), *v;
            const struct dse_json *rk = dse_json_get(root, "ranking");
            CHECK(rk && rk->type == DSE_JSON_ARRAY);
            v = dse_json_get(root, "id");
            CHECK(v && v->type == DSE_JSON_STRING && !strcmp(v->str, r->id));
            v = dse_json_get(root, "rung");
            CHECK(v && v->integer == k);
            const int m = rk ? rk->n : 0;
            v = dse_json_get(root, "closed");
            const int closed = v && v->type == DSE_JSON_BOOL && v->boolean;
            const int quota = closed ? dse_sweep_keep(m, ASHA_ETA) : m / ASHA_ETA;
            v = dse_json_get(root, "quota");
            CHECK(v && v->integer == quota);
            double top1[16];
            int64_t bytes[16];
            const char *ids[16];
            int order[16], pos = -1;
            for (int j = 0; j < m && j < 16; j++) {
                const struct dse_json *e = &rk->items[j], *id = dse_json_get(e, "id");
                const struct dse_json *t = dse_json_get(e, "top1"), *b = dse_json_get(e, "model_bytes");
                const struct dse_json *pr = dse_json_get(e, "promoted");
                CHECK(id && t && b && pr);
                if (!id || !t || !b || !pr) break;
                const struct dse_rec *o = recs_find(x, id->str);
                CHECK(o != NULL);
                if (!o) break;
                CHECK(o->n_epochs >= asha_rungs[k]); /* it had reached the rung */
                CHECK(k == 0 || asha_promoted(dir, k - 1, o->id));
                CHECK((float)t->number == o->ep[asha_rungs[k] - 1].top1);
                CHECK_INT_EQ(b->integer, o->model_bytes);
                if (pr->boolean) CHECK(asha_promoted(dir, k, o->id));
                top1[j] = t->number, bytes[j] = b->integer, ids[j] = id->str;
                if (!strcmp(id->str, r->id)) pos = j;
            }
            if (m > 0 && m <= 16) {
                dse_sweep_rank_rung(m, top1, bytes, ids, rank, order, NULL);
                for (int j = 0; j < m; j++) CHECK_INT_EQ(order[j], j); /* listed best first */
            }
            CHECK(pos >= 0 && pos < quota);
            dse_json_free(doc);
        }
    }
    return count;
}

/* Each candidate's epochs trained once: its stretches follow one another from epoch 0 to its
 * last, none cut short or repeated. */
static void asha_trained_once(const struct recs *x) {
    for (int i = 0; i < x->n; i++) {
        const struct dse_rec *r = &x->r[i];
        CHECK_INT_EQ(r->attempts_total, r->n_att);
        int at = 0;
        for (int j = 0; j < r->n_att; j++) {
            CHECK_INT_EQ(r->att[j].from_epoch, at);
            CHECK(r->att[j].to_epoch > r->att[j].from_epoch);
            CHECK(!strcmp(r->att[j].end, "paused") || !strcmp(r->att[j].end, "done"));
            at = r->att[j].to_epoch;
        }
        CHECK_INT_EQ(at, r->n_epochs);
    }
}

/* Run the 1-worker ASHA sweep of sweep-asha into dir: 0 if it finished. */
static int asha_sweep(const char *dir) {
    char log[460];
    snprintf(log, sizeof log, "%s.log", dir);
    const char *args[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--early-stop",
                           "asha", "--eta", "2", "--rank", "top1", NULL };
    double t0 = now_s();
    int rc = run_dse(log, args, 300);
    if (rc) show_log(log);
    printf("  ASHA, 1 worker: %.1f s\n", now_s() - t0);
    return rc;
}

/* The 1-worker ASHA sweep, run once for the cases that compare with it. */
static const char *asha_reference(void) {
    static char dir[200];
    if (dir[0]) return dir;
    snprintf(dir, sizeof dir, "%s/asha0", scratch());
    CHECK_INT_EQ(asha_sweep(dir), 0);
    return dir;
}

/* ASHA with one worker (--rank top1): every candidate reaches rung 0; the promotions, the
 * stops and who reaches R are what asha_oracle works out from the results; each promotion
 * is justified; a second run gives the same records and promotions, bit for bit (one
 * worker's order is a function of the results). */
void test_asha(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    struct recs x[2];
    char dir[2][200];
    snprintf(dir[0], sizeof dir[0], "%s", asha_reference());
    snprintf(dir[1], sizeof dir[1], "%s/asha1", scratch());
    CHECK_INT_EQ(asha_sweep(dir[1]), 0);
    for (int run = 0; run < 2; run++) recs_load(dir[run], &x[run]);
    CHECK_INT_EQ(x[0].n, 4);
    int epochs[16], stopped[16], prom[16][2], done = 0, trained = 0;
    asha_oracle(&x[0], epochs, stopped, prom);
    for (int i = 0; i < x[0].n; i++) {
        const struct dse_rec *r = &x[0].r[i];
        CHECK(r->n_epochs >= asha_rungs[0]); /* every candidate reached rung 0 */
        CHECK_INT_EQ(r->n_epochs, epochs[i]);
        CHECK_INT_EQ(r->status, epochs[i] == ASHA_R ? DSE_REC_DONE : DSE_REC_STOPPED);
        CHECK_INT_EQ(r->stopped_rung, stopped[i]);
        for (int k = 0; k < 2; k++) CHECK_INT_EQ(asha_promoted(dir[0], k, r->id), prom[i][k]);
        for (int k = 0; k < 2; k++) CHECK_INT_EQ(asha_promoted(dir[1], k, r->id), prom[i][k]);
        done += r->status == DSE_REC_DONE;
        trained += r->n_epochs;
    }
    printf("  ASHA: %d of 4 trained to %d epochs, %d epochs in all\n", done, ASHA_R, trained);
    CHECK(done >= 1);
    CHECK(recs_same(&x[0], &x[1]));
    CHECK(asha_justified(dir[0], &x[0], DSE_SWEEP_RANK_TOP1) >= 2);
    asha_trained_once(&x[0]);
    /* dse status: the rungs' promotions, finished */
    char log[300], *text = NULL;
    snprintf(log, sizeof log, "%s.status", dir[0]);
    const char *st[] = { "status", dir[0], NULL };
    CHECK_INT_EQ(run_dse(log, st, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "Promotions (asynchronous; as results arrive): rung 0 at epoch 1: 4 reached, "));
    CHECK(text && strstr(text, " promoted, closed; rung 1 at epoch 2: "));
    CHECK(text && strstr(text, "Running 0, paused at a rung 0, pending 0"));
    CHECK(text && strstr(text, "Finished.\n"));
    free(text);
    /* dse report --format json names the mode */
    snprintf(log, sizeof log, "%s.json", dir[0]);
    const char *js[] = { "report", dir[0], "--format", "json", NULL };
    CHECK_INT_EQ(run_dse(log, js, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "\"halving\": true, \"early_stop\": \"asha\", \"eta\": 2"));
    free(text);
    /* a sweep trains one way: sh asked of an ASHA sweep is refused */
    snprintf(log, sizeof log, "%s.clash", dir[0]);
    const char *sh[] = { "sweep", TINY, "--out", dir[0], "--early-stop", "sh", NULL };
    CHECK_INT_EQ(run_dse(log, sh, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "plan.json: this sweep was started with --early-stop asha, and this command gives sh"));
    free(text);
    /* evolution with ASHA: refused, as with SH */
    char evo[260];
    snprintf(evo, sizeof evo, "%s/asha_evo", scratch());
    snprintf(log, sizeof log, "%s.log", evo);
    const char *ev[] = { "sweep", EVO, "--out", evo, "--early-stop", "asha", "--budget", "3", "--workers", "1", NULL };
    CHECK_INT_EQ(run_dse(log, ev, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "asynchronous successive halving (--early-stop asha) with strategy \"evolution\" is "
                              "not supported yet"));
    free(text);
    recs_free(&x[0]), recs_free(&x[1]);
}

/* The 1-worker ASHA sweep killed with SIGKILL at random moments (every other time while it
 * holds a lease) and restarted, one worker at a time: what is on disk decides each next step,
 * so it ends with the uninterrupted run's records and promotions, bit for bit. */
void test_asha_crash(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *ref = asha_reference();
    char dir[200], log[260];
    struct dse_pcg32 rng;
    crash_rng(&rng, 7);
    snprintf(dir, sizeof dir, "%s/asha_crash", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *args[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--early-stop",
                           "asha", "--eta", "2", "--rank", "top1", "--max-crashes", "1000", NULL };
    double t0 = now_s();
    pid_t w = spawn(log, args);
    int kills = 0, bad = 0, status;
    for (int round = 0; round < 40 && kills < 5; round++) {
        if (round % 2) holds_lease(dir, w, 3.0);
        nap(0.05 + 0.5 * (double)dse_pcg32_next(&rng) / 4294967296.0);
        pid_t r = waitpid(w, &status, WNOHANG);
        if (r != 0) { /* it ended by itself: every candidate final */
            bad |= r != w || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
            w = 0;
            break;
        }
        kill(w, SIGKILL);
        waitpid(w, &status, 0);
        kills++;
        w = spawn(log, args);
    }
    bad |= w && wait_for(w, 300) != 0;
    CHECK(!bad);
    CHECK_INT_EQ(run_dse(log, args, 120), 0); /* one more finds nothing to do */
    printf("  ASHA, 1 worker: %d SIGKILLs, %.1f s\n", kills, now_s() - t0);
    CHECK(kills >= 2);
    struct recs a, b;
    recs_load(ref, &a);
    recs_load(dir, &b);
    CHECK(recs_same(&a, &b));
    for (int i = 0; i < a.n; i++)
        for (int k = 0; k < DSE_ARRAY_LEN(asha_rungs); k++)
            CHECK_INT_EQ(asha_promoted(dir, k, a.r[i].id), asha_promoted(ref, k, a.r[i].id));
    char slog[300], *st = NULL;
    snprintf(slog, sizeof slog, "%s.status", dir);
    const char *sargs[] = { "status", dir, NULL };
    CHECK_INT_EQ(run_dse(slog, sargs, 60), 0);
    CHECK_OK(dse_fs_read(slog, &st, NULL, NULL));
    CHECK(st && strstr(st, "Finished 4 of 4") && !strstr(st, "Stale"));
    free(st);
    recs_free(&a), recs_free(&b);
    if (check_failures) show_log(log);
}

/* ASHA with two workers (--rank pareto, the default): the sweep finishes; no epoch of any
 * candidate is trained twice; every promotion is justified by the results it records, each
 * epoch is full training's bit for bit. Which candidates go on may differ from run to run. */
void test_asha_multi(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/asha_multi", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *args[] = { "sweep", TINY, "--out", dir, "--workers", "2", "--conv", "gemm_batch", "--early-stop",
                           "asha", "--eta", "2", NULL };
    double t0 = now_s();
    int rc = run_dse(log, args, 300);
    CHECK_INT_EQ(rc, 0);
    if (rc) show_log(log);
    printf("  ASHA, 2 workers: %.1f s\n", now_s() - t0);
    struct recs x, full;
    recs_load(dir, &x);
    recs_load(reference(0), &full);
    CHECK_INT_EQ(x.n, 4);
    int done = 0, trained = 0;
    for (int i = 0; i < x.n; i++) {
        const struct dse_rec *r = &x.r[i];
        CHECK(r->status == DSE_REC_DONE || r->status == DSE_REC_STOPPED);
        CHECK(r->n_epochs >= asha_rungs[0]);
        done += r->status == DSE_REC_DONE;
        trained += r->n_epochs;
        const struct dse_rec *f = recs_find(&full, r->id);
        CHECK(f != NULL);
        for (int e = 0; f && e < r->n_epochs && e < f->n_epochs; e++) {
            float a[4] = { f->ep[e].train_loss, f->ep[e].test_loss, f->ep[e].top1, f->ep[e].top5 };
            float b[4] = { r->ep[e].train_loss, r->ep[e].test_loss, r->ep[e].top1, r->ep[e].top5 };
            CHECK(memcmp(a, b, sizeof a) == 0);
        }
    }
    printf("  ASHA, 2 workers: %d of 4 trained to %d epochs, %d epochs in all\n", done, ASHA_R, trained);
    CHECK(done >= 1);
    CHECK(asha_justified(dir, &x, DSE_SWEEP_RANK_PARETO) >= 2);
    asha_trained_once(&x);
    recs_free(&x), recs_free(&full);
}
