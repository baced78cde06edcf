/* test_sweep_workers.c: test_sweep's cases on workers (sweep/sweep_train.c): GPU placement and
 * out-of-memory re-queues, `dse sweep --gpus`, many workers at once, workers killed at random
 * and restarted (processes, threads, on a GPU), a stalled worker, the conv choice kept across
 * workers, and a worker's progress lines. */
#include "tests/sweep_util.h"

/* ---- GPUs ------------------------------------------------------------------------------ */

#define MiB ((int64_t)1 << 20)
#define GiB ((int64_t)1 << 30)

/* Placement: what a candidate asks for, and fits / wait / never against a device. */
void test_gpu_fit(void) {
    /* 768 MiB for the handles and conv workspace, plus 10% of the estimate; each
     * out-of-memory failure in a row adds half the estimate */
    CHECK_INT_EQ(DSE_SWEEP_GPU_MARGIN_BYTES, 768 * MiB);
    CHECK_INT_EQ(dse_sweep_gpu_need(0, 0), 768 * MiB);
    CHECK_INT_EQ(dse_sweep_gpu_need(-1, 0), 768 * MiB); /* unknown estimate */
    CHECK_INT_EQ(dse_sweep_gpu_need(1000 * MiB, 0), 1100 * MiB + 768 * MiB);
    CHECK_INT_EQ(dse_sweep_gpu_need(1000 * MiB, 1), 1600 * MiB + 768 * MiB);
    CHECK_INT_EQ(dse_sweep_gpu_need(1000 * MiB, 2), 2100 * MiB + 768 * MiB);
    CHECK(dse_sweep_gpu_need(INT64_MAX / 2, 3) == INT64_MAX); /* saturates, never wraps */
    /* an 80 GiB device with 10 GiB free */
    const uint64_t total = 80 * GiB, free_b = 10 * GiB;
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 0, 2 * GiB), DSE_GPU_FITS);
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 0, 10 * GiB), DSE_GPU_FITS);      /* exactly what is free */
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 0, 10 * GiB + 1), DSE_GPU_WAIT);
    /* what the command's other workers on it have claimed and not yet allocated is not free */
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 9 * GiB, 2 * GiB), DSE_GPU_WAIT);
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 8 * GiB, 2 * GiB), DSE_GPU_FITS);
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 20 * GiB, 1), DSE_GPU_WAIT);      /* no underflow */
    /* more than the whole device: never, however much is free */
    CHECK_INT_EQ(dse_sweep_gpu_fit(total, total, 0, 80 * GiB), DSE_GPU_FITS);
    CHECK_INT_EQ(dse_sweep_gpu_fit(total, total, 0, 80 * GiB + 1), DSE_GPU_NEVER);
    CHECK_INT_EQ(dse_sweep_gpu_fit(0, total, 0, 81 * GiB), DSE_GPU_NEVER);
    /* a full device: wait (other users' processes are respected) */
    CHECK_INT_EQ(dse_sweep_gpu_fit(0, total, 0, 1), DSE_GPU_WAIT);
    CHECK_INT_EQ(dse_sweep_gpu_fit(0, total, 0, 0), DSE_GPU_FITS);
    /* a candidate whose estimate was too low: after OOMs it asks for more until it waits */
    const int64_t est = 6 * GiB; /* needs 7.35 GiB, then 10.35 GiB */
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 0, dse_sweep_gpu_need(est, 0)), DSE_GPU_FITS);
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 0, dse_sweep_gpu_need(est, 1)), DSE_GPU_WAIT);
    CHECK_INT_EQ(dse_sweep_gpu_fit(total, total, 0, dse_sweep_gpu_need(est, 40)), DSE_GPU_NEVER);
}

/* Out of memory: the attempt ends "oom" with a note, the candidate stays pending
 * (re-queued) until --max-oom in a row, then fails naming why; progress or another end
 * resets the count; the attempts' device, precision and note survive the file. */
void test_gpu_oom(void) {
    struct dse_rec r;
    dse_rec_init(&r);
    strcpy(r.id, "c1");
    struct dse_rec_attempt *a = dse_rec_push_attempt(&r, "h:1", 1, 1, "cuda:0", "fp32", 0);
    CHECK_STR_EQ(a->device, "cuda:0");
    CHECK_INT_EQ(r.attempts_total, 1);
    CHECK_INT_EQ(dse_rec_oom_streak(&r), 0);
    CHECK_INT_EQ(dse_rec_oom(&r, "cuda:0", 1234, 900, "cudaMalloc: cudaErrorMemoryAllocation", 3), 0);
    CHECK_INT_EQ(r.status, DSE_REC_PENDING);
    CHECK_STR_EQ(r.att[0].end, "oom");
    CHECK_STR_EQ(r.att[0].note, "out of memory on cuda:0 with 1234 MiB free at its claim (given 900 MiB); re-queued");
    CHECK_INT_EQ(dse_rec_oom_streak(&r), 1);
    dse_rec_push_attempt(&r, "h:2", 2, 1, "cuda:1", "fp32", 0);
    CHECK_INT_EQ(dse_rec_oom_streak(&r), 0); /* the new attempt has not ended */
    CHECK_INT_EQ(dse_rec_oom(&r, "cuda:1", 2000, 1400, "x", 3), 0);
    CHECK_INT_EQ(dse_rec_oom_streak(&r), 2);
    /* an attempt that finished an epoch before running out: the count starts again there */
    a = dse_rec_push_attempt(&r, "h:3", 3, 1, "cuda:0", "fp32", 0);
    a->to_epoch = 1;
    CHECK_INT_EQ(dse_rec_oom(&r, "cuda:0", 3000, 1900, "x", 3), 0);
    CHECK_INT_EQ(dse_rec_oom_streak(&r), 1);
    dse_rec_push_attempt(&r, "h:3", 4, 1, "cuda:0", "fp32", 1);
    CHECK_INT_EQ(dse_rec_oom(&r, "cuda:0", 3000, 2400, "x", 3), 0);
    CHECK_INT_EQ(dse_rec_oom_streak(&r), 2);
    CHECK_INT_EQ(r.status, DSE_REC_PENDING);
    dse_rec_push_attempt(&r, "h:3", 5, 1, "cuda:0", "fp32", 1);
    CHECK_INT_EQ(dse_rec_oom(&r, "cuda:0", 3100, 2900, "cudnnConvolutionForward: CUDNN_STATUS_ALLOC_FAILED", 3), 1);
    CHECK_INT_EQ(r.status, DSE_REC_FAILED);
    CHECK(strstr(r.failed_why, "out of memory on a GPU 3 times in a row") != NULL);
    CHECK(strstr(r.failed_why, "CUDNN_STATUS_ALLOC_FAILED") != NULL);
    CHECK(strstr(r.att[r.n_att - 1].note, "; failed") != NULL);
    /* another ending breaks the run of OOMs */
    struct dse_rec q;
    dse_rec_init(&q);
    dse_rec_push_attempt(&q, "h:1", 1, 1, "cuda:0", "fp32", 0);
    dse_rec_oom(&q, "cuda:0", 1, 1, "x", 5);
    a = dse_rec_push_attempt(&q, "h:1", 2, 1, "cuda:0", "fp32", 0);
    strcpy(a->end, "budget");
    dse_rec_push_attempt(&q, "h:1", 3, 1, "cuda:0", "fp32", 0);
    dse_rec_oom(&q, "cuda:0", 1, 1, "x", 5);
    CHECK_INT_EQ(dse_rec_oom_streak(&q), 1);
    /* only the last DSE_REC_ATTEMPTS_MAX are kept; attempts_total counts them all */
    for (int k = 0; k < DSE_REC_ATTEMPTS_MAX + 3; k++) dse_rec_push_attempt(&q, "h:9", 10 + k, 1, "cpu", "fp32", 0);
    CHECK_INT_EQ(q.n_att, DSE_REC_ATTEMPTS_MAX);
    CHECK_INT_EQ(q.attempts_total, 3 + DSE_REC_ATTEMPTS_MAX + 3);
    CHECK_INT_EQ(q.att[DSE_REC_ATTEMPTS_MAX - 1].lease_gen, 10 + DSE_REC_ATTEMPTS_MAX + 2);
    dse_rec_deinit(&q);

    /* through a candidate file and back */
    struct dse_space sp;
    struct dse_sweep_summary sum;
    struct dse_err err = { 0 };
    char dir[200];
    snprintf(dir, sizeof dir, "%s/gpu_oom", scratch());
    CHECK_OK(dse_space_load(TINY, &sp, &err));
    CHECK_OK(dse_sweep_analytic(&sp, dir, NULL, &sum, &err));
    struct recs x;
    recs_load(dir, &x);
    CHECK_INT_EQ(x.n, 4);
    if (x.n == 4) {
        struct dse_rec *w = &x.r[0];
        dse_rec_push_attempt(w, "h:1", 1, 2, "cuda:3", "tf32", 0);
        dse_rec_oom(w, "cuda:3", 512, 800, "out of memory \"quoted\"", 4);
        dse_rec_push_attempt(w, "h:2", 2, 1, "cpu", "fp32", 0);
        strcpy(w->att[1].end, "done");
        CHECK_OK(dse_rec_write(dir, &sp, w, &err));
        struct dse_rec back;
        dse_rec_init(&back);
        CHECK_OK(dse_rec_read(dir, w->id, &back, &err));
        CHECK_INT_EQ(back.n_att, 2);
        CHECK_INT_EQ(back.status, DSE_REC_PENDING);
        CHECK_STR_EQ(back.att[0].device, "cuda:3");
        CHECK_STR_EQ(back.att[0].precision, "tf32");
        CHECK_INT_EQ(back.att[0].threads, 2);
        CHECK_STR_EQ(back.att[0].end, "oom");
        CHECK_STR_EQ(back.att[0].note, w->att[0].note);
        CHECK_STR_EQ(back.att[1].device, "cpu");
        CHECK_STR_EQ(back.att[1].note, "");
        CHECK_INT_EQ(dse_rec_oom_streak(&back), 0);
        /* dse status lists a candidate whose last attempt ran out of memory, with its note */
        dse_rec_push_attempt(w, "h:3", 3, 1, "cuda:1", "fp32", 0);
        dse_rec_oom(w, "cuda:1", 700, 900, "x", 4);
        CHECK_OK(dse_rec_write(dir, &sp, w, &err));
        struct dse_sweep_plan plan;
        memset(&plan, 0, sizeof plan);
        plan.epochs = 3, plan.eta = 3, plan.min_epochs = 1, plan.conv = DSE_ALGO_AUTO;
        int existed = 0;
        CHECK_OK(dse_plan_create(dir, &plan, "test", &existed, &err));
        char *st = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&st, &len);
        CHECK_OK(dse_sweep_status(f, dir, 0, NULL, &err));
        fclose(f);
        CHECK(st && strstr(st, "Re-queued after running out of GPU memory"));
        CHECK(st && strstr(st, "1 in a row; last: out of memory on cuda:1 with 700 MiB free at its claim (given 900 "
                              "MiB); re-queued"));
        free(st);
        dse_rec_deinit(&back);
    }
    recs_free(&x);
    dse_space_free(&sp);
    dse_rec_deinit(&r);
}

/* `dse sweep --gpus`: without a CUDA device (or CUDA in the build) it stops at once, says
 * why, exits 2 and writes nothing; with devices, an index past them is refused naming
 * CUDA_VISIBLE_DEVICES, and (with Fashion-MNIST) a sweep trains on cuda:0, two workers
 * packed on it as threads of one process, each attempt recording the device, precision
 * and its thread. A plan made for tf32
 * refuses CPU workers. */
void test_sweep_gpus(void) {
    char dir[200], log[260], *text = NULL, why[256] = "", path[300];
    snprintf(dir, sizeof dir, "%s/gpus", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const int count = dse_cuda_device_count(why, (int)sizeof why);
    printf("  CUDA devices: %d%s%s\n", count, count ? "" : ": ", why);
    if (count == 0) {
        const char *args[] = { "sweep", TINY, "--out", dir, "--gpus", "0", NULL };
        CHECK_INT_EQ(run_dse(log, args, 60), 2);
        CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
        CHECK(text && (strstr(text, "dse: --gpus: no CUDA device (") ||
                       strstr(text, "dse: --gpus: this dse was built without the CUDA backend")));
        free(text), text = NULL;
        snprintf(path, sizeof path, "%s/sweep.json", dir);
        CHECK(access(path, F_OK) != 0); /* refused before anything was written */
        const char *all[] = { "sweep", TINY, "--out", dir, "--gpus", "all", "--per-gpu", "2", NULL };
        unlink(log);
        CHECK_INT_EQ(run_dse(log, all, 60), 2);
    } else {
        char past[16];
        snprintf(past, sizeof past, "%d", count);
        const char *args[] = { "sweep", TINY, "--out", dir, "--gpus", past, NULL };
        CHECK_INT_EQ(run_dse(log, args, 60), 2);
        CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
        CHECK(text && strstr(text, "there is no CUDA device") && strstr(text, "CUDA_VISIBLE_DEVICES"));
        free(text), text = NULL;
    }
    if (!data_installed()) {
        printf("SKIP (the rest): dataset-fashion-mnist not installed\n");
        return;
    }
    if (count > 0) { /* a real sweep on the GPU: two workers on cuda:0 */
        const char *args[] = { "sweep", TINY, "--out", dir, "--gpus", "0", "--per-gpu", "2", NULL };
        unlink(log);
        int rc = run_dse(log, args, 300);
        CHECK_INT_EQ(rc, 0);
        struct recs x;
        recs_load(dir, &x);
        CHECK_INT_EQ(x.n, 4);
        for (int i = 0; i < x.n; i++) {
            const struct dse_rec *r = &x.r[i];
            CHECK_INT_EQ(r->status, DSE_REC_DONE);
            for (int k = 0; k < r->n_att; k++) {
                CHECK_STR_EQ(r->att[k].device, "cuda:0");
                CHECK_STR_EQ(r->att[k].precision, "fp32");
                const char *colon = strrchr(r->att[k].worker, ':'); /* host:pid.1 or .2: threads of one process */
                CHECK(colon && (strstr(colon, ".1") || strstr(colon, ".2")));
            }
        }
        recs_free(&x);
        /* the plan is fp32: another precision is refused */
        const char *tf32[] = { "sweep", TINY, "--out", dir, "--gpus", "0", "--precision", "tf32", NULL };
        unlink(log);
        CHECK_INT_EQ(run_dse(log, tf32, 60), 2);
        CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
        CHECK(text && strstr(text, "was started with --precision fp32, and this command gives tf32"));
        free(text), text = NULL;
        if (rc) show_log(log);
    }
    /* a sweep whose plan says tf32 cannot take CPU workers */
    char tdir[200];
    struct dse_space sp;
    struct dse_sweep_summary sum;
    struct dse_err err = { 0 };
    snprintf(tdir, sizeof tdir, "%s/tf32", scratch());
    CHECK_OK(dse_space_load(TINY, &sp, &err));
    CHECK_OK(dse_sweep_analytic(&sp, tdir, NULL, &sum, &err));
    struct dse_sweep_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.epochs = sp.train.epochs, plan.eta = 3, plan.min_epochs = 1, plan.conv = DSE_ALGO_AUTO;
    plan.precision = DSE_CUDA_MATH_TF32;
    int existed = 0, missing = 0;
    CHECK_OK(dse_plan_create(tdir, &plan, "test", &existed, &err));
    struct dse_sweep_plan back;
    CHECK_OK(dse_plan_read(tdir, &back, &missing, &err));
    CHECK_INT_EQ(back.precision, DSE_CUDA_MATH_TF32);
    const char *cpu[] = { "sweep", TINY, "--out", tdir, "--workers", "1", NULL };
    unlink(log);
    CHECK_INT_EQ(run_dse(log, cpu, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "plan.json: this sweep trains with --precision tf32, which only GPUs compute; give "
                              "--gpus"));
    free(text);
    dse_space_free(&sp);
}

/* A CPU sweep in bf16 (issue #37): --precision bf16 without --gpus trains every candidate in
 * bf16 on the CPU and each attempt records it; 2 workers of 1 thread repeat 1 worker of 2
 * threads bit for bit (records and report), and the records are not the float32 reference's
 * (bf16 ran). On a CPU without AVX512-BF16 (DSE_CPU_NO_BF16=1 stands in for one)
 * --precision bf16 is a usage error (exit 2, DIR not made), and a worker of a sweep whose
 * plan says bf16 stops with exit 2 before claiming anything; each names why. */
void test_sweep_bf16(void) {
    char a[200], b[200], c[200], log[260];
    snprintf(a, sizeof a, "%s/bf16_one", scratch());
    snprintf(b, sizeof b, "%s/bf16_two", scratch());
    snprintf(c, sizeof c, "%s/bf16_none", scratch());
    snprintf(log, sizeof log, "%s/bf16.log", scratch());
    const char *one[] = { "sweep", TINY, "--out", a, "--workers", "1", "--threads", "2", "--precision", "bf16", NULL };
    const char *two[] = { "sweep", TINY, "--out", b, "--workers", "2", "--threads", "1", "--precision", "bf16", NULL };
    const char *none[] = { "sweep", TINY, "--out", c, "--workers", "1", "--precision", "bf16", NULL };
    const char *again[] = { "sweep", TINY, "--out", a, "--workers", "1", NULL };
    char *text = NULL;
    struct stat st;
    setenv("DSE_CPU_NO_BF16", "1", 1); /* a CPU without it: a usage error, DIR not made */
    CHECK_INT_EQ(run_dse(log, none, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "dse sweep: --precision bf16 on the CPU needs AVX512-BF16: "));
    free(text), text = NULL;
    CHECK(stat(c, &st) != 0);
    unsetenv("DSE_CPU_NO_BF16");
    if (!data_installed()) {
        printf("SKIP: the bf16 sweeps: dataset-fashion-mnist not installed\n");
        return;
    }
    if (dse_cpu_bf16_why()) {
        printf("  skipped the bf16 sweeps: %s\n", dse_cpu_bf16_why());
        return;
    }
    CHECK_INT_EQ(run_dse(log, one, 300), 0);
    CHECK_INT_EQ(run_dse(log, two, 300), 0);
    struct recs ra, rb, rf;
    recs_load(a, &ra), recs_load(b, &rb), recs_load(reference(0), &rf);
    CHECK_INT_EQ(ra.n, 4);
    CHECK(recs_same(&ra, &rb));
    printf("  the float32 reference's records differ, as they must:\n");
    CHECK(!recs_same(&ra, &rf));
    for (int i = 0; i < ra.n; i++) {
        char conv[400];
        CHECK_INT_EQ(ra.r[i].status, DSE_REC_DONE);
        for (int k = 0; k < ra.r[i].n_att; k++) CHECK_STR_EQ(ra.r[i].att[k].precision, "bf16");
        snprintf(conv, sizeof conv, "%s/checkpoints/%s/conv.txt", a, ra.r[i].id); /* bf16 times no strategies */
        CHECK(stat(conv, &st) != 0);
    }
    char *ca = report_csv(a), *cb = report_csv(b);
    CHECK(ca && cb && !strcmp(ca, cb));
    free(ca), free(cb);
    recs_free(&ra), recs_free(&rb), recs_free(&rf);
    CHECK(count_in(log, "compute in float32") >= 1); /* the worker says which convs stay float32 */
    setenv("DSE_CPU_NO_BF16", "1", 1); /* the plan says bf16: a worker here cannot */
    CHECK_INT_EQ(run_dse(log, again, 60), 2);
    unsetenv("DSE_CPU_NO_BF16");
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "/plan.json: this sweep trains in bf16, and this CPU cannot: "));
    free(text);
}

/* ---- whole sweeps ------------------------------------------------------------------------ */

/* The sweep in dir ended as the uninterrupted reference ref did: its 4 records the same bit
 * for bit, the same report and, with halving, the same rung decisions, file for file. b gets
 * dir's records for the caller's own checks (recs_free them). */
static void check_as_reference(const char *ref, const char *dir, int halving, struct recs *b) {
    int before = check_failures;
    struct recs a;
    recs_load(ref, &a);
    recs_load(dir, b);
    CHECK_INT_EQ(b->n, 4);
    CHECK(recs_same(&a, b));
    recs_free(&a);
    char *ca = report_csv(ref), *cb = report_csv(dir);
    CHECK(ca && cb && !strcmp(ca, cb));
    free(ca), free(cb);
    for (int k = 0; halving && k < 2; k++) {
        char pa[300], pb[300], *ta = NULL, *tb = NULL;
        snprintf(pa, sizeof pa, "%s/rungs/rung-%d.json", ref, k);
        snprintf(pb, sizeof pb, "%s/rungs/rung-%d.json", dir, k);
        CHECK_OK(dse_fs_read(pa, &ta, NULL, NULL));
        CHECK_OK(dse_fs_read(pb, &tb, NULL, NULL));
        CHECK(ta && tb && !strcmp(ta, tb));
        free(ta), free(tb);
    }
    if (check_failures > before) fprintf(stderr, "  (%s against the reference %s)\n", dir, ref);
}

/* Four workers at once (one command with --workers 2 and two with --workers 1): every
 * candidate trained exactly once, in one stretch from epoch 0 to 3, and the results
 * those of one lone worker. */
void test_multi(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *ref = reference(0);
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/multi", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *two[] = { "sweep", TINY, "--out", dir, "--workers", "2", "--conv", "gemm_batch", NULL };
    const char *one[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", NULL };
    double t0 = now_s();
    pid_t p[3] = { spawn(log, two), spawn(log, one), spawn(log, one) };
    int bad = 0;
    for (int k = 0; k < 3; k++) bad |= wait_for(p[k], 300) != 0;
    CHECK(!bad);
    printf("  4 workers: %.1f s\n", now_s() - t0);
    struct recs b;
    check_as_reference(ref, dir, 0, &b);
    char workers[4][96];
    int n_workers = 0;
    for (int i = 0; i < b.n; i++) {
        const struct dse_rec *r = &b.r[i];
        CHECK_INT_EQ(r->status, DSE_REC_DONE);
        CHECK_INT_EQ(r->attempts_total, 1); /* trained once */
        CHECK_INT_EQ(r->n_att, 1);
        if (r->n_att != 1) continue;
        CHECK_INT_EQ(r->att[0].from_epoch, 0);
        CHECK_INT_EQ(r->att[0].to_epoch, 3);
        CHECK_STR_EQ(r->att[0].end, "done");
        int seen = 0;
        for (int k = 0; k < n_workers; k++) seen |= !strcmp(workers[k], r->att[0].worker);
        if (!seen) strcpy(workers[n_workers++], r->att[0].worker);
    }
    printf("  candidates trained by %d different workers\n", n_workers);
    recs_free(&b);
    if (bad) show_log(log);
}

/* Two workers; again and again one of them is killed with SIGKILL at a random moment
 * and started again. The sweep (successive halving, so rung decisions and paused
 * candidates are crashed into too) must end with the same records and report as the
 * uninterrupted reference, bit for bit, and nothing left running. */
static int crash_run(int halving, int attempt, struct dse_pcg32 *rng, int *taken_over) {
    const char *ref = reference(halving);
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/crash_%s_%d", scratch(), halving ? "sh" : "full", attempt);
    snprintf(log, sizeof log, "%s.log", dir);
    const char *sh[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--early-stop", "sh",
                         "--eta", "2", "--max-crashes", "1000", NULL };
    const char *full[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--max-crashes",
                           "1000", NULL };
    const char *const *args = halving ? sh : full;
    double t0 = now_s();
    pid_t w[2] = { spawn(log, args), spawn(log, args) };
    int kills = 0, bad = 0;
    for (int round = 0; round < 60 && kills < 8; round++) {
        int k = (int)(dse_pcg32_next(rng) & 1), status;
        /* every other kill waits until the victim holds a lease, so that training itself
         * (not only start-up) is cut; then a random moment */
        if (round % 2) holds_lease(dir, w[k], 3.0);
        double base = round % 2 ? (halving ? 0.2 : 0.35) : 0.02; /* full: past the first epoch's checkpoint */
        nap(base + (round % 2 ? 0.4 : 0.7) * (double)dse_pcg32_next(rng) / 4294967296.0);
        pid_t r = waitpid(w[k], &status, WNOHANG);
        if (r != 0) { /* a worker only ends by itself when every candidate is final */
            bad |= r != w[k] || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
            w[k] = 0;
            break;
        }
        kill(w[k], SIGKILL);
        waitpid(w[k], &status, 0);
        kills++;
        w[k] = spawn(log, args);
    }
    for (int k = 0; k < 2; k++) bad |= w[k] && wait_for(w[k], 300) != 0;
    CHECK(!bad);
    /* one more worker finds nothing to do */
    CHECK_INT_EQ(run_dse(log, args, 120), 0);
    printf("  %s: %d SIGKILLs, %.1f s\n", halving ? "halving" : "full training", kills, now_s() - t0);
    struct recs b;
    check_as_reference(ref, dir, halving, &b);
    for (int i = 0; i < b.n; i++) CHECK(dse_rec_final(&b.r[i]));
    int taken = count_in(log, "taking over from"), resumed = count_in(log, "resumed from its checkpoint");
    printf("  %d candidates taken over from a killed worker; %d stretches resumed from a checkpoint\n", taken, resumed);
    *taken_over += taken; /* test_crash asks for at least one over its attempts */
    /* dse status: finished, nothing running or stale */
    char slog[300], *st = NULL;
    snprintf(slog, sizeof slog, "%s.status", dir);
    const char *sargs[] = { "status", dir, NULL };
    CHECK_INT_EQ(run_dse(slog, sargs, 60), 0);
    CHECK_OK(dse_fs_read(slog, &st, NULL, NULL));
    CHECK(st && strstr(st, "Finished 4 of 4") && strstr(st, "Running 0") && !strstr(st, "Stale"));
    free(st);
    recs_free(&b);
    if (check_failures) show_log(log);
    return kills;
}

void test_crash(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    struct dse_pcg32 rng;
    crash_rng(&rng, 11);
    /* a sweep that finished before enough kills, or before any kill hit a worker holding a
     * lease that another then took over, is run again, in a fresh directory: on an idle
     * machine the full-training sweep ends in about 1.2 s, after 1 or 2 kills, so 3
     * attempts were sometimes not enough (seed 263716280 reached 4 kills), and a short
     * halving run can end after 3 kills none of which was taken over (seed 1402423578) */
    for (int halving = 1; halving >= 0; halving--) {
        int kills = 0, taken = 0;
        for (int attempt = 0; attempt < 8 && (kills < 5 || taken < 1); attempt++)
            kills += crash_run(halving, attempt, &rng, &taken);
        CHECK(kills >= 5);
        CHECK(taken >= 1);
    }
}

/* The default conv choice (auto): the strategies are timed once per candidate and kept
 * with its checkpoints, so a stretch resumed by another worker runs the same ones. A
 * sweep given the first one's choice files and killed mid-training twice ends with the
 * first one's results, bit for bit. */
void test_conv_auto(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char a[200], b[200], log[260];
    snprintf(a, sizeof a, "%s/auto_a", scratch());
    snprintf(b, sizeof b, "%s/auto_b", scratch());
    snprintf(log, sizeof log, "%s/auto.log", scratch());
    const char *args_a[] = { "sweep", TINY, "--out", a, "--workers", "1", NULL };
    const char *args_b[] = { "sweep", TINY, "--out", b, "--workers", "1", "--max-crashes", "100", NULL };
    CHECK_INT_EQ(run_dse(log, args_a, 300), 0);
    struct recs x, y;
    recs_load(a, &x);
    for (int i = 0; i < x.n; i++) { /* hand b the choices a made */
        char from[400], to[400], *text = NULL;
        size_t len;
        snprintf(from, sizeof from, "%s/checkpoints/%s/conv.txt", a, x.r[i].id);
        snprintf(to, sizeof to, "%s/checkpoints/%s", b, x.r[i].id);
        CHECK_OK(dse_fs_mkdirs(to, NULL));
        snprintf(to, sizeof to, "%s/checkpoints/%s/conv.txt", b, x.r[i].id);
        CHECK_OK(dse_fs_read(from, &text, &len, NULL));
        if (text) CHECK_OK(dse_fs_write_atomic(to, text, len, NULL));
        free(text);
    }
    for (int k = 0; k < 2; k++) {
        pid_t p = spawn(log, args_b);
        if (holds_lease(b, p, 30)) nap(0.3);
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
    }
    CHECK_INT_EQ(run_dse(log, args_b, 300), 0);
    recs_load(b, &y);
    CHECK(recs_same(&x, &y));
    recs_free(&x), recs_free(&y);
}

/* ---- worker threads ----------------------------------------------------------------------- */

/* `dse sweep TINY --out dir --workers 2 --conv gemm_batch [--early-stop sh --eta 2]
 * --max-crashes 1000`, with both workers threads of one worker process (per_process 2,
 * which no CLI option sets: the structure the workers of one GPU have), run by a child of
 * this process through the library, stdout and stderr appended to log. */
static pid_t spawn_threaded(const char *log, const char *dir, int halving) {
    fflush(NULL);
    pid_t p = fork();
    if (p != 0) return p;
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    struct dse_space sp;
    struct dse_sweep_summary sum;
    struct dse_sweep_opts o;
    struct dse_err err = { 0 };
    int finished = 0;
    dse_sweep_opts_default(&o);
    o.workers = 2, o.per_process = 2, o.max_crashes = 1000, o.log = stderr;
    o.plan.conv = DSE_CPU_CONV_GEMM_BATCH, o.set_conv = 1;
    if (halving) o.plan.halving = 1, o.set_halving = 1, o.plan.eta = 2, o.set_eta = 1;
    enum dse_status st = dse_space_load(TINY, &sp, &err);
    if (!st) st = dse_sweep_analytic(&sp, dir, NULL, &sum, &err);
    if (!st) st = dse_sweep_train(&sp, dir, &o, &finished, &err);
    if (st) {
        char msg[700];
        fprintf(stderr, "threaded sweep: %s\n", dse_err_format(&err, msg, sizeof msg));
    }
    fflush(NULL);
    _exit(st ? 1 : !finished ? 2 : 0);
}

/* The pid of a child process of parent (its worker process), or 0 (none at this moment). */
static pid_t child_of(pid_t parent) {
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t found = 0;
    while (d && !found && (e = readdir(d))) {
        char path[300], *text = NULL;
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if (dse_fs_read(path, &text, NULL, NULL)) continue;
        const char *close_paren = strrchr(text, ')'); /* "pid (comm) state ppid ..." */
        char state;
        long ppid;
        if (close_paren && sscanf(close_paren + 1, " %c %ld", &state, &ppid) == 2 && ppid == (long)parent &&
            state != 'Z')
            found = (pid_t)atol(e->d_name);
        free(text);
    }
    if (d) closedir(d);
    return found;
}

/* Again and again, at a random moment, either the worker process (both threads at once:
 * its command starts another) or the command with its worker process (started again
 * here) is killed with SIGKILL. The sweep must end with the records, rung decisions and
 * report of the uninterrupted lone worker, bit for bit; attempts name the threads. */
static int threads_run(int halving, int attempt, struct dse_pcg32 *rng) {
    const char *ref = reference(halving);
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/threads_%s_%d", scratch(), halving ? "sh" : "full", attempt);
    snprintf(log, sizeof log, "%s.log", dir);
    double t0 = now_s();
    pid_t cmd = spawn_threaded(log, dir, halving);
    int kills = 0, whole = 0, bad = 0, status;
    for (int round = 0; round < 40 && kills < 6; round++) {
        pid_t host = 0;
        for (double t1 = now_s(); !host && now_s() - t1 < 3; nap(0.005)) host = child_of(cmd);
        if (!host) break; /* finished (or a worker process that never started: checked below) */
        holds_lease(dir, host, 3.0);
        nap((halving ? 0.2 : 0.35) * (double)dse_pcg32_next(rng) / 4294967296.0);
        if (waitpid(cmd, &status, WNOHANG) != 0) { /* ended by itself: every candidate final */
            bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
            cmd = 0;
            break;
        }
        if (round % 3 == 2) { /* the command too; the worker process is then this one's to reap */
            kill(cmd, SIGKILL);
            kill(host, SIGKILL);
            waitpid(cmd, &status, 0);
            waitpid(host, &status, 0);
            cmd = spawn_threaded(log, dir, halving);
            whole++;
        } else {
            kill(host, SIGKILL); /* its command reaps it and starts another */
        }
        kills++;
    }
    if (cmd) bad |= wait_for(cmd, 300) != 0;
    CHECK(!bad);
    /* one more command finds nothing to do */
    cmd = spawn_threaded(log, dir, halving);
    CHECK_INT_EQ(wait_for(cmd, 120), 0);
    printf("  %s: %d SIGKILLs (%d of the command too), %.1f s\n", halving ? "halving" : "full training", kills, whole,
           now_s() - t0);
    struct recs b;
    check_as_reference(ref, dir, halving, &b);
    int threaded = 0;
    for (int i = 0; i < b.n; i++) {
        CHECK(dse_rec_final(&b.r[i]));
        for (int k = 0; k < b.r[i].n_att; k++) { /* host:pid.1 or host:pid.2 */
            const char *dot = strrchr(b.r[i].att[k].worker, '.'), *colon = strrchr(b.r[i].att[k].worker, ':');
            threaded += dot && colon && dot > colon && (!strcmp(dot, ".1") || !strcmp(dot, ".2"));
        }
    }
    CHECK(threaded >= 1);
    int taken = count_in(log, "taking over from");
    printf("  %d candidates taken over from a killed worker process\n", taken);
    CHECK(kills == 0 || taken >= 1);
    recs_free(&b);
    if (check_failures) show_log(log);
    return kills;
}

void test_threads(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    struct dse_pcg32 rng;
    crash_rng(&rng, 13);
    /* a worker process whose command is killed with it becomes this process's child, so
     * that it is reaped at once (a zombie's pid is not gone: its leases would wait out
     * their ttl) */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    for (int halving = 1; halving >= 0; halving--) {
        int kills = 0;
        for (int attempt = 0; attempt < 6 && kills < 4; attempt++) kills += threads_run(halving, attempt, &rng);
        CHECK(kills >= 4);
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/* The epoch lines of a sweep's log ("dse sweep [host:pid]: ID epoch E/R: train loss ...");
 * *pid = the worker that wrote the last one if E < R (it goes on with that candidate), else 0. */
static int epoch_lines(const char *log, pid_t *pid) {
    char *text = NULL;
    int n = 0;
    const char *last = NULL;
    *pid = 0;
    if (dse_fs_read(log, &text, NULL, NULL)) return 0;
    for (const char *p = text; (p = strstr(p, ": train loss ")); p++) n++, last = p;
    if (last) {
        const char *line = last;
        while (line > text && line[-1] != '\n') line--;
        const char *colon = NULL;
        for (const char *q = line; q < last && *q != ']'; q++)
            if (*q == ':') colon = q;
        const char *ep = strstr(line, " epoch ");
        int e = 0, r = 0;
        if (colon && ep && ep < last && sscanf(ep, " epoch %d/%d:", &e, &r) == 2 && e < r)
            *pid = (pid_t)strtol(colon + 1, NULL, 10);
    }
    free(text);
    return n;
}

/* 1 if one of the commands w[0], w[1] has ended (its slot then 0; *bad |= it failed): a
 * command ends by itself only when every candidate is final. */
static int reap(pid_t w[2], int *bad) {
    int any = 0;
    for (int j = 0; j < 2; j++) {
        int status;
        if (w[j] > 0 && waitpid(w[j], &status, WNOHANG) == w[j]) {
            *bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
            w[j] = 0, any = 1;
        }
    }
    return any;
}

/* The crash test on a GPU (`--gpus 0`: two commands, each with one worker process on
 * cuda:0): again and again, just after a worker logged an epoch of a candidate it goes on
 * with, that worker's command and its worker are killed with SIGKILL (the process group)
 * and started again. The first stretch of each candidate pins cuDNN's choices in its folder
 * (cudnn-fp32-det.txt, before its first epoch is recorded) and every later stretch loads them, so
 * the sweep must end with what one uninterrupted GPU worker computes with the same choices:
 * records and final checkpoints bit for bit. That worker, handed the files, finds nothing
 * and rewrites none. */
void test_crash_gpu(void) {
    char why[256] = "";
    if (dse_cuda_device_count(why, (int)sizeof why) == 0) {
        CHECK_SKIP("no CUDA device (%s)", why);
        return;
    }
    if (!data_installed()) {
        CHECK_SKIP("dataset-fashion-mnist not installed");
        return;
    }
    struct dse_pcg32 rng;
    crash_rng(&rng, 13);
    char dir[200], ref[200], log[260], rlog[260];
    snprintf(dir, sizeof dir, "%s/crash_gpu", scratch());
    snprintf(ref, sizeof ref, "%s/ref_gpu", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    snprintf(rlog, sizeof rlog, "%s.log", ref);
    const char *args[] = { "sweep", TINY, "--out", dir, "--gpus", "0", "--per-gpu", "1", "--max-crashes", "1000",
                           NULL };
    double t0 = now_s();
    pid_t w[2] = { spawn_in(log, args, 1), spawn_in(log, args, 1) };
    int kills = 0, bad = 0, seen = 0, ended = 0;
    for (int round = 0; round < 40 && kills < 4 && !ended; round++) {
        pid_t worker = 0;
        int n = seen, k = -1, status;
        for (double tw = now_s(); n == seen && now_s() - tw < 120 && !(ended = reap(w, &bad)); nap(0.005))
            n = epoch_lines(log, &worker);
        if (ended || n == seen) break; /* the sweep ended (or hangs: the waits below say) */
        seen = n;
        for (int j = 0; j < 2; j++)
            if (worker > 0 && w[j] > 0 && getpgid(worker) == w[j]) k = j;
        if (k < 0) continue; /* its candidate's last epoch, or a worker already gone */
        nap(0.05 + 0.25 * (double)dse_pcg32_next(&rng) / 4294967296.0); /* its checkpoint is written by now */
        if ((ended = reap(w, &bad))) break;
        kill(-w[k], SIGKILL);
        waitpid(w[k], &status, 0);
        kills++;
        w[k] = spawn_in(log, args, 1);
    }
    for (int k = 0; k < 2; k++) bad |= w[k] && wait_for(w[k], 300) != 0;
    for (int k = 0; k < 2; k++)
        if (w[k]) kill(-w[k], SIGKILL); /* nothing left behind, whatever happened */
    CHECK(!bad);
    CHECK_INT_EQ(run_dse(log, args, 120), 0); /* one more command finds nothing to do */
    const int resumed = count_in(log, "resumed from its checkpoint"), found = count_in(log, "and pinned in"),
              loaded = count_in(log, "shapes pinned by");
    printf("  %d SIGKILLs, %.1f s; %d stretches resumed from a checkpoint; choices found and pinned %d times, loaded "
           "%d times\n", kills, now_s() - t0, resumed, found, loaded);
    CHECK(kills >= 2);
    CHECK(resumed >= 1);
    CHECK(found >= 1);  /* a candidate's first stretch */
    CHECK(loaded >= 1); /* a stretch after it */
    /* the uninterrupted run, handed the choices the crashed one pinned */
    struct recs a, b;
    recs_load(dir, &b);
    CHECK_INT_EQ(b.n, 4);
    for (int i = 0; i < b.n; i++) {
        char from[400], to[400], *text = NULL;
        size_t len = 0;
        CHECK_INT_EQ(b.r[i].status, DSE_REC_DONE);
        snprintf(from, sizeof from, "%s/checkpoints/%s/cudnn-fp32-det.txt", dir, b.r[i].id);
        snprintf(to, sizeof to, "%s/checkpoints/%s", ref, b.r[i].id);
        CHECK_OK(dse_fs_mkdirs(to, NULL));
        snprintf(to, sizeof to, "%s/checkpoints/%s/cudnn-fp32-det.txt", ref, b.r[i].id);
        CHECK_OK(dse_fs_read(from, &text, &len, NULL));
        if (text) CHECK_OK(dse_fs_write_atomic(to, text, len, NULL));
        free(text);
    }
    const char *rargs[] = { "sweep", TINY, "--out", ref, "--gpus", "0", "--per-gpu", "1", NULL };
    CHECK_INT_EQ(run_dse(rlog, rargs, 300), 0);
    CHECK_INT_EQ(count_in(rlog, "and pinned in"), 0); /* nothing found or taken: all loaded */
    CHECK_INT_EQ(count_in(rlog, "shapes pinned by"), 4); /* one stretch per candidate, each loaded its file */
    recs_load(ref, &a);
    CHECK(recs_same(&a, &b));
    for (int i = 0; i < a.n && i < b.n; i++) { /* the trained models and the pinned choices, byte for byte */
        static const char *const names[2] = { "epoch-3.ckpt", "cudnn-fp32-det.txt" };
        for (int k = 0; k < 2; k++) {
            char pa[400], pb[400], *ta = NULL, *tb = NULL;
            size_t la = 0, lb = 0;
            snprintf(pa, sizeof pa, "%s/checkpoints/%s/%s", ref, a.r[i].id, names[k]);
            snprintf(pb, sizeof pb, "%s/checkpoints/%s/%s", dir, b.r[i].id, names[k]);
            CHECK_OK(dse_fs_read(pa, &ta, &la, NULL));
            CHECK_OK(dse_fs_read(pb, &tb, &lb, NULL));
            CHECK(ta && tb && la == lb && !memcmp(ta, tb, la));
            free(ta), free(tb);
        }
    }
    recs_free(&a), recs_free(&b);
    if (check_failures) show_log(log), show_log(rlog);
}

/* A worker stopped (SIGSTOP) while it holds a lease: another takes the candidate over
 * once the lease has not been renewed for its ttl (same host, but the pid is alive, so
 * only the observation rule applies). When the first wakes up it must notice, write
 * nothing, and leave. */
void test_stall(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *ref = reference(0);
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/stall", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *args[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--lease-seconds", "1",
                           NULL };
    pid_t a = spawn(log, args);
    /* stop a while it holds a lease (a lease file with its pid, not released): it may
     * let go between the look and the stop, so look again once it is stopped */
    int holding = 0;
    for (int tries = 0; tries < 50 && !holding; tries++) {
        if (!holds_lease(dir, a, 60)) break;
        kill(a, SIGSTOP);
        if (!(holding = holds_lease(dir, a, 0))) {
            kill(a, SIGCONT);
            nap(0.01);
        }
    }
    CHECK(holding);
    double t0 = now_s();
    int rc = run_dse(log, args, 300);
    CHECK_INT_EQ(rc, 0);
    printf("  the second worker finished the sweep in %.1f s\n", now_s() - t0);
    kill(a, SIGCONT);
    CHECK_INT_EQ(wait_for(a, 120), 0);
    struct recs x, y;
    recs_load(ref, &x);
    recs_load(dir, &y);
    CHECK(recs_same(&x, &y));
    int taken = 0;
    for (int i = 0; i < y.n; i++) {
        const struct dse_rec *r = &y.r[i];
        CHECK_INT_EQ(r->status, DSE_REC_DONE);
        CHECK(r->n_att >= 1 && !strcmp(r->att[r->n_att - 1].end, "done"));
        taken += r->n_att > 1 || r->lease_gen > 1;
    }
    CHECK(taken >= 1);
    recs_free(&x), recs_free(&y);
    if (check_failures) show_log(log);
}

/* A worker's log within an epoch: with --progress-every S, a line "<id> epoch e/E: iter i/N"
 * once S seconds have passed (here 1 us: after every step); the never-predicted warning
 * once per candidate (a learning rate so small that the classes an untrained net never
 * predicts stay unpredicted every epoch). */
void test_progress_every(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char cfg[300], dir[300], log[300], id[DSE_ID_SIZE], what[120];
    const char *text = "name = \"progress\";\nmetaparams = { base_e = 8; incr_e = 8; freq = 2; pct3x3 = 0.5; "
                       "sr = [0.125, 0.25]; bypass = \"none\"; };\nmacro = { input_c = 1; input_h = 28; input_w = 28; "
                       "classes = 10; conv1_filters = 8; conv1_kernel = 3; conv1_stride = 2; conv1_pad = 1; fires = 4; "
                       "pools = [\"fire3\"]; dropout = 0.5; };\ntrain = { dataset = \"fashion-mnist\"; epochs = 3; "
                       "batch = 32; lr = 1e-9; seed = 7; limit_train = 256; limit_test = 100; };\n";
    snprintf(cfg, sizeof cfg, "%s/progress.cfg", scratch());
    snprintf(dir, sizeof dir, "%s/progress_out", scratch());
    snprintf(log, sizeof log, "%s/progress.log", scratch());
    CHECK_OK(dse_fs_write_atomic(cfg, text, strlen(text), NULL));
    const char *args[] = { "sweep", cfg, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--progress-every",
                           "0.000001", NULL };
    CHECK_INT_EQ(run_dse(log, args, 120), 0);
    struct dse_space sp;
    CHECK_OK(dse_space_load(cfg, &sp, NULL));
    int warned = 0;
    for (uint64_t k = 0; k < 2; k++) {
        struct dse_mp mp;
        dse_space_candidate(&sp, k, &mp);
        dse_space_id(&mp, id);
        for (int e = 1; e <= 3; e++) { /* 8 steps an epoch, a line after each */
            snprintf(what, sizeof what, "%s epoch %d/3: iter ", id, e);
            CHECK_INT_EQ(count_in(log, what), 8);
        }
        char warn[160];
        int n = 0;
        for (int e = 1; e <= 3; e++) {
            snprintf(warn, sizeof warn, "%s epoch %d: warning: ", id, e);
            n += count_in(log, warn);
        }
        CHECK(n <= 1);
        warned += n;
    }
    CHECK(warned >= 1); /* the case the rule is for happened */
    if (check_failures) show_log(log);
    dse_space_free(&sp);
}
