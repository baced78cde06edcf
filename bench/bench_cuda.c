/* bench_cuda.c: the CUDA backend's speed on whole networks (issue #6): per-layer forward
 * and backward time on the GPU, cuDNN's chosen conv algorithms with the time cuDNN's
 * find measured for them (the yardstick: cuDNN's own best), and whole training steps
 * (forward, backward, SGD) in images per second, for FP32 and TF32. One key=value line
 * per measurement (docs/conventions.md#benchmarks); machine facts first; synthetic data. Not a test;
 * the comparison with PyTorch on the same GPU is issue #6 item 6 (TODO).
 * Usage: bench_cuda [--net fmnist|v10|FILE] [--batch B] [--math fp32|tf32|fp16|bf16|all]
 *                   [--iters N] [--device N] [--algos det|any|both] [--api graph|legacy|both]
 *                   [--no-layers]
 * --api: convolutions through cuDNN's graph API (the engine's default) or its legacy API.
 * --algos: cuDNN algorithms deterministic only (det, the engine's default) or any (the
 * fastest find measured, as PyTorch's benchmark mode picks). cuda.passes lines give the
 * host's time to queue a whole forward or backward pass beside the time to finish it: a
 * queue time close to the pass time means the host, not the GPU, sets the pace.
 * Without a CUDA device it prints "skipped: no CUDA device (...)" and exits 77. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "netfile/netfile.h"
#include "engine/cuda/cuda.h"
#include "engine/model.h"
#include "metaparams/metaparams.h"
#include "bench/bench.h"

struct opts {
    const char *net;    /* fmnist, v10 or a network file */
    int         batch;  /* 0: 128 for fmnist, 32 for v10 and files */
    const char *math;   /* fp32, tf32 or both */
    int         iters, device, layers;
    const char *algos;  /* det, any or both: cuDNN algorithms deterministic only, or any */
    const char *api;    /* graph, legacy or both: cuDNN's graph API (default) or legacy API */
};

static int load_net(const char *name, struct dse_net *net, struct dse_err *err) {
    if (!strcmp(name, "v10")) {
        struct dse_mp mp = dse_mp_squeezenet_v10();
        dse_net_init(net, "squeezenet_v1.0", 3, 227, 227);
        return dse_mp_build(&mp, net, err) ? -1 : 0;
    }
    const char *path = !strcmp(name, "fmnist") ? "experiments/squeezenet/squeezenet_fmnist.cfg" : name;
    return dse_netfile_load(path, NULL, net, err) ? -1 : 0;
}

/* "engine70" for a graph-API engine, cuDNN's legacy name (or "fp32") otherwise. */
static const char *algo_name(int dir, int algo, char *buf, int size) {
    if (algo >= DSE_CUDA_CONV_ENGINE) snprintf(buf, (size_t)size, "engine%d", algo - DSE_CUDA_CONV_ENGINE);
    else snprintf(buf, (size_t)size, "%s", dse_cuda_conv_algo_str(dir, algo));
    return buf;
}

/* Time one network at one precision. Returns 0, or 1 after printing why. */
static int bench(const struct opts *o, const struct dse_net *net, enum dse_cuda_math math, int any_algo,
                 int legacy) {
    const int B = o->batch ? o->batch : !strcmp(o->net, "fmnist") ? 128 : 32;
    struct dse_model_opts mo = { .batch = B, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA, .init_std = 0.01f };
    struct dse_model_device_opts dev = { .device = { .kind = DSE_DEVICE_CUDA, .index = o->device }, .math = math,
                                         .nondeterministic = any_algo };
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    if (dse_model_new_on(net, &mo, &dev, &m, &err)) {
        fprintf(stderr, "bench_cuda: %s\n", err.msg);
        return 1;
    }
    m->gpu->legacy_conv = legacy;
    const int n = m->net.n_layers;
    const size_t count = (size_t)dse_tensor_count(&m->input);
    float *x = malloc(count * sizeof *x), loss = 0.0f;
    int *labels = malloc((size_t)B * sizeof *labels), rc = 0;
    double *step = malloc((size_t)o->iters * sizeof *step);
    double *tf = calloc((size_t)(n * o->iters), sizeof *tf), *tb = calloc((size_t)(n * o->iters), sizeof *tb);
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 7, 7);
    for (size_t i = 0; i < count; i++) x[i] = (float)dse_pcg32_next(&r) / 4294967296.0f - 0.5f;
    const int classes = m->nodes[m->loss].in[0]->c;
    for (int b = 0; b < B; b++) labels[b] = b % classes;
    /* Whole steps; two warm-ups (cuDNN's find runs in the first). */
    for (int it = -2; it < o->iters && !rc; it++) {
        const double t0 = bench_now_ms();
        if (dse_model_forward(m, x, labels, &loss, &err) || dse_model_backward(m, &err)) rc = 1;
        dse_model_sgd(m, 1e-6f, 0.9f, 0.0f);
        if (!rc && dse_model_sync(m, &err)) rc = 1;
        if (it >= 0) step[it] = bench_now_ms() - t0;
    }
    /* Whole steps on a batch already on the device (as PyTorch's reference keeps its
     * batch), and the upload of one batch on its own. */
    double *res = calloc((size_t)(2 * o->iters), sizeof *res);
    for (int it = 0; it < o->iters && !rc && res; it++) {
        const double t0 = bench_now_ms();
        if (dse_model_load_batch(m, x, labels, &err) || dse_model_sync(m, &err)) rc = 1;
        const double t1 = bench_now_ms();
        for (int i = 0; i < n && !rc; i++)
            if (dse_model_node_forward(m, i, &err)) rc = 1;
        if (!rc && dse_model_backward(m, &err)) rc = 1;
        dse_model_sgd(m, 1e-6f, 0.9f, 0.0f);
        if (!rc && dse_model_sync(m, &err)) rc = 1;
        res[it] = bench_now_ms() - t1, res[o->iters + it] = t1 - t0;
    }
    /* Whole passes, the time to queue them (the host's share) and to finish them. */
    double *split = calloc((size_t)(4 * o->iters), sizeof *split);
    for (int it = 0; it < o->iters && !rc && split; it++) {
        if (dse_model_load_batch(m, x, labels, &err) || dse_model_sync(m, &err)) rc = 1;
        const double t0 = bench_now_ms();
        for (int i = 0; i < n && !rc; i++)
            if (dse_model_node_forward(m, i, &err)) rc = 1;
        const double t1 = bench_now_ms();
        if (!rc && dse_model_sync(m, &err)) rc = 1;
        const double t2 = bench_now_ms();
        if (!rc && dse_model_backward(m, &err)) rc = 1;
        const double t3 = bench_now_ms();
        if (!rc && dse_model_sync(m, &err)) rc = 1;
        const double t4 = bench_now_ms();
        split[it] = t1 - t0, split[o->iters + it] = t2 - t0;
        split[2 * o->iters + it] = t3 - t2, split[3 * o->iters + it] = t4 - t2;
    }
    /* Layer by layer, each timed between two waits for the device. */
    for (int it = 0; it < o->iters && !rc && o->layers; it++) {
        if (dse_model_load_batch(m, x, labels, &err) || dse_model_sync(m, &err)) rc = 1;
        for (int i = 0; i < n && !rc; i++) {
            const double t0 = bench_now_ms();
            if (dse_model_node_forward(m, i, &err) || dse_model_sync(m, &err)) rc = 1;
            tf[i * o->iters + it] = bench_now_ms() - t0;
        }
        if (!rc && (dse_model_zero_grad(m, &err) || dse_model_sync(m, &err))) rc = 1;
        for (int i = n - 1; i >= 0 && !rc; i--) {
            const double t0 = bench_now_ms();
            if (dse_model_node_backward(m, i, &err) || dse_model_sync(m, &err)) rc = 1;
            tb[i * o->iters + it] = bench_now_ms() - t0;
        }
    }
    if (rc) {
        fprintf(stderr, "bench_cuda: %s\n", err.msg);
    } else {
        const char *mn = dse_cuda_math_str(math), *net_name = m->net.name[0] ? m->net.name : o->net;
        for (int i = 0; i < n && o->layers; i++) {
            struct dse_node *nd = &m->nodes[i];
            qsort(tf + i * o->iters, (size_t)o->iters, sizeof *tf, bench_cmp_double);
            qsort(tb + i * o->iters, (size_t)o->iters, sizeof *tb, bench_cmp_double);
            const double f = tf[i * o->iters + o->iters / 2], b = tb[i * o->iters + o->iters / 2];
            const double fl = (double)dse_node_flops(nd);
            printf("name=cuda.layer.%s net=%s op=%s batch=%d math=%s algos=%s api=%s fwd_median_ms=%.4f bwd_median_ms=%.4f "
                   "fwd_gflops=%.1f bwd_gflops=%.1f", m->net.layers[i].name, net_name, dse_op_str(nd->op), B, mn,
                   any_algo ? "any" : "det", legacy ? "legacy" : "graph", f,
                   b, f > 0 ? fl / f / 1e6 : 0.0, b > 0 ? 2 * fl / b / 1e6 : 0.0);
            struct dse_cuda_conv_choice c;
            char a0[32], a1[32], a2[32];
            if (nd->op == DSE_OP_CONV2D && !dse_cuda_conv2d_choose(m->gpu, nd, &c))
                printf(" algo_fwd=%s yardstick=cudnn_find yardstick_fwd_ms=%.4f algo_bwd_data=%s algo_bwd_filter=%s "
                       "find_bwd_ms=%.4f", algo_name(0, c.algo[0], a0, 32), (double)c.ms[0],
                       algo_name(1, c.algo[1], a1, 32), algo_name(2, c.algo[2], a2, 32),
                       (double)(c.algo[1] >= 0 ? c.ms[1] : 0.0f) + (double)c.ms[2]);
            printf("\n");
        }
        if (split) {
            for (int k = 0; k < 4; k++) qsort(split + k * o->iters, (size_t)o->iters, sizeof *split, bench_cmp_double);
            const int h = o->iters / 2;
            printf("name=cuda.passes net=%s batch=%d math=%s algos=%s api=%s fwd_queue_ms=%.3f fwd_ms=%.3f "
                   "bwd_queue_ms=%.3f bwd_ms=%.3f\n", net_name, B, mn, any_algo ? "any" : "det",
                   legacy ? "legacy" : "graph", split[h], split[o->iters + h],
                   split[2 * o->iters + h], split[3 * o->iters + h]);
        }
        qsort(step, (size_t)o->iters, sizeof *step, bench_cmp_double);
        const double med = step[o->iters / 2];
        double rmed = 0.0, umed = 0.0;
        if (res) {
            qsort(res, (size_t)o->iters, sizeof *res, bench_cmp_double);
            qsort(res + o->iters, (size_t)o->iters, sizeof *res, bench_cmp_double);
            rmed = res[o->iters / 2], umed = res[o->iters + o->iters / 2];
        }
        printf("name=cuda.train net=%s batch=%d math=%s algos=%s api=%s iters=%d median_ms=%.3f min_ms=%.3f img_per_s=%.1f "
               "resident_ms=%.3f resident_img_per_s=%.1f upload_ms=%.3f loss=%.4f device_bytes=%zu conv_finds=%lld "
               "graph_found=%lld graph_taken=%lld nondeterministic=%lld\n", net_name, B, mn,
               any_algo ? "any" : "det", legacy ? "legacy" : "graph", o->iters, med,
               step[0], med > 0 ? 1e3 * B / med : 0.0, rmed, rmed > 0 ? 1e3 * B / rmed : 0.0, umed, (double)loss, dse_model_bytes(m),
               (long long)m->gpu->stats.conv_finds, (long long)m->gpu->stats.conv_graph_found,
               (long long)m->gpu->stats.conv_graph_taken, (long long)m->gpu->stats.conv_nondeterministic);
    }
    free(x), free(labels), free(step), free(tf), free(tb), free(split), free(res);
    dse_model_free(m);
    return rc;
}

int main(int argc, char **argv) {
    struct opts o = { .net = "fmnist", .batch = 0, .math = "both", .iters = 10, .device = 0, .layers = 1,
                      .algos = "det", .api = "graph" };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--net") && v) o.net = v, i++;
        else if (!strcmp(a, "--batch") && v) o.batch = atoi(v), i++;
        else if (!strcmp(a, "--math") && v) o.math = v, i++;
        else if (!strcmp(a, "--iters") && v) o.iters = atoi(v), i++;
        else if (!strcmp(a, "--device") && v) o.device = atoi(v), i++;
        else if (!strcmp(a, "--algos") && v) o.algos = v, i++;
        else if (!strcmp(a, "--api") && v) o.api = v, i++;
        else if (!strcmp(a, "--no-layers")) o.layers = 0;
        else {
            fprintf(stderr, "usage: bench_cuda [--net fmnist|v10|FILE] [--batch B] [--math fp32|tf32|fp16|bf16|all] "
                            "[--iters N] [--device N] [--algos det|any|both] [--api graph|legacy|both] [--no-layers]\n");
            return 2;
        }
    }
    if (o.iters < 1) o.iters = 1;
    char why[256];
    if (dse_cuda_device_count(why, sizeof why) == 0) {
        printf("skipped: no CUDA device (%s)\n", why);
        return 77;
    }
    char info[512];
    struct dse_err err = { 0 };
    if (dse_cuda_device_info(o.device, info, sizeof info, &err)) {
        fprintf(stderr, "bench_cuda: %s\n", err.msg);
        return 1;
    }
    printf("# %s\n", info);
    struct dse_net net;
    if (load_net(o.net, &net, &err)) {
        fprintf(stderr, "bench_cuda: %s\n", err.msg);
        return 1;
    }
    int rc = 0;
    for (int m = 0; m < DSE_CUDA_MATH_COUNT; m++) {
        const char *mn = dse_cuda_math_str((enum dse_cuda_math)m);
        if (strcmp(o.math, "both") && strcmp(o.math, "all") && strcmp(o.math, mn)) continue;
        for (int legacy = 0; legacy < 2; legacy++)
            for (int any = 0; any < 2; any++)
                if ((!strcmp(o.algos, "both") || !strcmp(o.algos, any ? "any" : "det")) &&
                    (!strcmp(o.api, "both") || !strcmp(o.api, legacy ? "legacy" : "graph")))
                    rc |= bench(&o, &net, (enum dse_cuda_math)m, any, legacy);
    }
    dse_net_deinit(&net);
    return rc;
}
