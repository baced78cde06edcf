/* bench_conv.c: forward and backward time of every conv layer of SqueezeNet v1.0 (batch
 * 32) and SqueezeNet-FMNIST (issue #4 item 10; batch 128) for each CPU conv strategy,
 * with the yardstick measured in the same run: one bare cblas_sgemm of the layer's
 * M = K/groups, N = batch*P*Q, K = C/groups*R*S (docs/conventions.md#benchmarks). One line per
 * measurement; machine facts first; per-net totals, then conv2d.efficiency lines: the
 * engine's own choices over all the net's conv layers, their FLOP/s as a share of the
 * sgemm peak (issue #4's target: 60%). supported=0 marks a strategy
 * that cannot run the layer (winograd off 3x3 stride 1): it ran gemm_batch. Not a test.
 * Usage: bench_conv [--net v10|fmnist|all] [--batch B] [--threads T] [--reps R] [--layer NAME] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "engine/engine.h"
#include "metaparams/metaparams.h"
#include "bench/bench.h"

struct opts {
    const char *net;   /* v10, fmnist or all */
    int         batch; /* 0: the net's default */
    int         threads, reps;
    const char *layer; /* only layers whose name contains this */
};

static void fill(float *p, int64_t n, struct dse_pcg32 *r) {
    for (int64_t i = 0; i < n; i++) p[i] = (float)(dse_pcg32_next(r) >> 8) * (1.0f / 16777216.0f) - 0.5f;
}

/* Run forward or backward of n `reps` times after one warm-up. */
static int time_pass(struct dse_cpu_ctx *cx, struct dse_node *n, int bwd, int reps, struct bench_timing *out) {
    double *ms = malloc((size_t)reps * sizeof *ms);
    for (int r = -1; r < reps; r++) {
        if (bwd) { /* the caller zeroes grads per step; not part of the conv's time */
            dse_tensor_zero_grad(n->weight);
            dse_tensor_zero_grad(n->bias);
            dse_tensor_zero_grad(n->in[0]);
        }
        double t0 = bench_now_ms();
        enum dse_status st = bwd ? dse_cpu_backward(cx, n) : dse_cpu_forward(cx, n);
        double t = bench_now_ms() - t0;
        if (st) {
            fprintf(stderr, "bench_conv: %s\n", cx->err.msg);
            free(ms);
            return -1;
        }
        if (r >= 0) ms[r] = t;
    }
    *out = bench_summarize(ms, reps);
    free(ms);
    return 0;
}

/* The yardstick: C[M, N] = A[M, K] B[K, N], as large as the layer's lowered GEMM. */
static double sgemm_gflops(int threads, int M, int N, int K, int groups, int reps, struct bench_timing *out) {
    /* OpenBLAS's own threads for the yardstick; the engine sets it back to one (its
     * kernels split the batch over their own threads, engine/cpu/team.c). */
    openblas_set_num_threads(threads);
    float *a = calloc((size_t)M * K, sizeof *a), *b = calloc((size_t)K * N, sizeof *b);
    float *c = calloc((size_t)M * N, sizeof *c);
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 1, 1);
    fill(a, (int64_t)M * K, &r);
    fill(b, (int64_t)K * N, &r);
    double *ms = malloc((size_t)reps * sizeof *ms);
    for (int i = -1; i < reps; i++) {
        double t0 = bench_now_ms();
        for (int g = 0; g < groups; g++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
        if (i >= 0) ms[i] = bench_now_ms() - t0;
    }
    *out = bench_summarize(ms, reps);
    free(ms);
    free(a), free(b), free(c);
    openblas_set_num_threads(1);
    return 2.0 * M * (double)N * K * groups / (out->median_ms * 1e6);
}

struct totals {
    double ms[2][DSE_CPU_CONV_COUNT]; /* [fwd/bwd][strategy], medians */
    double ms_auto[2], ms_best[2];
    double gflop_auto[2]; /* the layers' FLOPs (1e9) of each pass, for the efficiency line */
};

static int bench_layer(struct dse_cpu_ctx *cx, const char *net_name, const struct dse_layer *l, int first,
                       int batch, int reps, struct totals *tot) {
    struct dse_tensor x, y, w, b;
    struct dse_err err = { 0 };
    memset(&x, 0, sizeof x), memset(&y, 0, sizeof y), memset(&w, 0, sizeof w), memset(&b, 0, sizeof b);
    /* The first conv reads the network input: nobody needs its gradient. */
    if (dse_tensor_init(&x, batch, l->in_c, l->in_h, l->in_w, first ? 0 : DSE_TENSOR_GRAD, &err) ||
        dse_tensor_init(&y, batch, l->out_c, l->out_h, l->out_w, DSE_TENSOR_GRAD, &err) ||
        dse_tensor_init(&w, l->num_output, l->in_c / l->groups, l->kernel_h, l->kernel_w, DSE_TENSOR_GRAD,
                        &err) ||
        (l->bias && dse_tensor_init(&b, 1, l->num_output, 1, 1, DSE_TENSOR_GRAD, &err))) {
        fprintf(stderr, "bench_conv: %s\n", err.msg);
        return -1;
    }
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 7, 7);
    fill(x.data, dse_tensor_count(&x), &r);
    fill(w.data, dse_tensor_count(&w), &r);
    fill(y.grad, dse_tensor_count(&y), &r);
    struct dse_node n;
    dse_node_init(&n, DSE_OP_CONV2D, l);
    n.n_in = 1, n.in[0] = &x, n.out = &y, n.weight = &w, n.bias = l->bias ? &b : NULL;
    if (dse_cpu_node_prepare(cx, &n, &err)) {
        fprintf(stderr, "bench_conv: %s\n", err.msg);
        return -1;
    }
    struct dse_cpu_conv_choice choice;
    if (dse_cpu_conv2d_choose(cx, &n, &choice)) {
        fprintf(stderr, "bench_conv: %s\n", cx->err.msg);
        return -1;
    }
    const int G = l->groups, M = l->num_output / G, K = l->in_c / G * l->kernel_h * l->kernel_w;
    const int N = batch * l->out_h * l->out_w;
    struct bench_timing ty;
    const double y_gflops = sgemm_gflops(cx->threads, M, N, K, G, reps, &ty);
    const double flops = (double)dse_node_flops(&n);
    const double flops_pass[2] = { flops, first ? flops : 2 * flops }; /* bwd: dW (+ dX) */
    static const char *pass_name[2] = { "fwd", "bwd" };
    double best[2] = { 1e300, 1e300 };
    for (int pass = 0; pass < 2; pass++) {
        for (int a = 0; a < DSE_CPU_CONV_COUNT; a++) {
            n.algo_fwd = n.algo_bwd = a;
            /* winograd on a shape it cannot run: timing skipped it (-1) and forcing it runs
             * gemm_batch, which is what this line and the strategy's total then measure. */
            const int supported = (pass ? choice.ms_bwd[a] : choice.ms_fwd[a]) >= 0.0f;
            struct bench_timing t;
            if (time_pass(cx, &n, pass, reps, &t)) return -1;
            const double gflops = flops_pass[pass] / (t.median_ms * 1e6);
            printf("name=conv2d.%s net=%s backend=cpu batch=%d pass=%s strategy=%s median_ms=%.3f min_ms=%.3f "
                   "gflops=%.1f yardstick=sgemm yardstick_gflops=%.1f ratio=%.2f m=%d n=%d k=%d auto=%s "
                   "auto_timed_ms=%.1f supported=%d\n",
                   l->name, net_name, batch, pass_name[pass], dse_cpu_conv_algo_str(a), t.median_ms, t.min_ms,
                   gflops, y_gflops, gflops / y_gflops, M, N, K,
                   dse_cpu_conv_algo_str(pass ? choice.algo_bwd : choice.algo_fwd),
                   (double)(pass ? choice.ms_bwd[a] : choice.ms_fwd[a]), supported);
            tot->ms[pass][a] += t.median_ms;
            if (t.median_ms < best[pass]) best[pass] = t.median_ms;
            if (a == (pass ? choice.algo_bwd : choice.algo_fwd)) {
                tot->ms_auto[pass] += t.median_ms;
                tot->gflop_auto[pass] += flops_pass[pass] * 1e-9;
            }
        }
        tot->ms_best[pass] += best[pass];
    }
    fflush(stdout);
    dse_node_deinit(&n);
    dse_tensor_deinit(&x), dse_tensor_deinit(&y), dse_tensor_deinit(&w), dse_tensor_deinit(&b);
    return 0;
}

static int bench_net(struct dse_cpu_ctx *cx, const char *name, const struct dse_mp *mp, int batch,
                     const struct opts *o, double peak) {
    struct dse_net net;
    struct dse_err err = { 0 };
    dse_net_init(&net, name, 1, 1, 1);
    if (dse_mp_build(mp, &net, &err)) {
        fprintf(stderr, "bench_conv: %s\n", err.msg);
        dse_net_deinit(&net);
        return -1;
    }
    struct totals tot;
    memset(&tot, 0, sizeof tot);
    int first = 1, rc = 0;
    for (int i = 0; i < net.n_layers && !rc; i++) {
        const struct dse_layer *l = &net.layers[i];
        if (l->type != DSE_LAYER_CONV) continue;
        if (!o->layer || strstr(l->name, o->layer)) rc = bench_layer(cx, name, l, first, batch, o->reps, &tot);
        first = 0;
    }
    static const char *pass_name[2] = { "fwd", "bwd" };
    for (int pass = 0; pass < 2 && !rc; pass++) {
        for (int a = 0; a < DSE_CPU_CONV_COUNT; a++)
            printf("name=conv2d.total net=%s backend=cpu batch=%d pass=%s strategy=%s median_ms=%.1f\n", name, batch,
                   pass_name[pass], dse_cpu_conv_algo_str(a), tot.ms[pass][a]);
        printf("name=conv2d.total net=%s backend=cpu batch=%d pass=%s strategy=auto median_ms=%.1f best_ms=%.1f\n",
               name, batch, pass_name[pass], tot.ms_auto[pass], tot.ms_best[pass]);
    }
    /* Issue #4's conv target: every conv layer, with the strategies the engine picks, as a
     * share of the sgemm peak measured at the start of this run. */
    for (int pass = 0; pass < 3 && !rc && !o->layer; pass++) {
        const double ms = pass < 2 ? tot.ms_auto[pass] : tot.ms_auto[0] + tot.ms_auto[1];
        const double gf = pass < 2 ? tot.gflop_auto[pass] : tot.gflop_auto[0] + tot.gflop_auto[1];
        const double gflops = ms > 0 ? gf / (ms * 1e-3) : 0.0;
        printf("name=conv2d.efficiency net=%s backend=cpu batch=%d pass=%s strategy=auto median_ms=%.1f gflops=%.1f "
               "yardstick=sgemm_peak yardstick_gflops=%.1f ratio=%.3f\n", name, batch,
               pass == 0 ? "fwd" : pass == 1 ? "bwd" : "fwd+bwd", ms, gflops, peak, gflops / peak);
    }
    dse_net_deinit(&net);
    return rc;
}

static int usage(void) {
    fprintf(stderr, "usage: bench_conv [--net v10|fmnist|all] [--batch B] [--threads T] [--reps R] [--layer NAME]\n");
    return 2;
}

int main(int argc, char **argv) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    struct opts o = { .net = "all", .batch = 0, .threads = cores > 0 ? (int)cores : 1, .reps = 5, .layer = NULL };
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return usage();
        if (!strcmp(a, "--net")) o.net = v;
        else if (!strcmp(a, "--batch")) o.batch = atoi(v);
        else if (!strcmp(a, "--threads")) o.threads = atoi(v);
        else if (!strcmp(a, "--reps")) o.reps = atoi(v);
        else if (!strcmp(a, "--layer")) o.layer = v;
        else return usage();
    }
    if (o.threads < 1 || o.reps < 1 || o.batch < 0 ||
        (strcmp(o.net, "v10") && strcmp(o.net, "fmnist") && strcmp(o.net, "all")))
        return usage();

    struct dse_cpu_ctx cx;
    struct dse_err err = { 0 };
    if (dse_cpu_ctx_init(&cx, o.threads, 1, &err)) {
        fprintf(stderr, "bench_conv: %s\n", err.msg);
        return 1;
    }
    const char *coretype = getenv("OPENBLAS_CORETYPE");
    printf("machine cores=%ld blas=openblas blas_core=%s threads=%d OPENBLAS_CORETYPE=%s reps=%d\n", cores,
           openblas_get_corename(), o.threads, coretype ? coretype : "(unset)", o.reps);
    printf("blas_config=\"%s\"\n", openblas_get_config());
    /* The sgemm peak: a large square product on OpenBLAS's own threads (as many as ours). */
    struct bench_timing pk;
    double peak = sgemm_gflops(o.threads, 2048, 2048, 2048, 1, o.reps, &pk);
    printf("name=sgemm_peak M=2048 N=2048 K=2048 threads=%d median_ms=%.3f gflops=%.1f\n", o.threads, pk.median_ms,
           peak);

    int rc = 0;
    if (!strcmp(o.net, "v10") || !strcmp(o.net, "all")) {
        struct dse_mp mp = dse_mp_squeezenet_v10();
        rc |= bench_net(&cx, "squeezenet_v1.0", &mp, o.batch ? o.batch : 32, &o, peak);
    }
    if (!rc && (!strcmp(o.net, "fmnist") || !strcmp(o.net, "all"))) {
        /* SqueezeNet-FMNIST (issue #4, item 10): 28x28x1, conv1 3x3/1 pad 1 with 96
         * filters, pools after conv1, fire4 and fire8, 10 classes. */
        struct dse_mp mp = dse_mp_squeezenet_v10();
        mp.input_c = 1, mp.input_h = mp.input_w = 28, mp.classes = 10;
        mp.conv1_filters = 96, mp.conv1_kernel = 3, mp.conv1_stride = 1, mp.conv1_pad = 1;
        rc |= bench_net(&cx, "squeezenet_fmnist", &mp, o.batch ? o.batch : 128, &o, peak);
    }
    dse_cpu_ctx_deinit(&cx);
    return rc ? 1 : 0;
}
