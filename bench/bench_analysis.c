/* bench_analysis.c: analyses per second of a SqueezeNet-sized network held in memory
 * (issue #2: target >= 1,000,000 per second on one core). One analysis = Caffe shape
 * inference of every layer + closed-form costs and memory estimates. The yardstick,
 * measured in the same run, is copying the network's layer array once (memcpy): the
 * least work that touches every layer description.
 * Read from ONNX (issue #34: target >= 100,000 per second): dse's own export of SqueezeNet
 * v1.1 (experiments/squeezenet/squeezenet_v1.1.cfg, its input normalization inside, as dse
 * export writes it) held in memory as bytes, parsed by dse_onnx_parse and costed per
 * iteration; the yardstick is the same network read from its .cfg file and costed, and
 * the floor a walk of every field the parse must read (walk_fields).
 * Usage: bench_analysis [iterations per sample, default 200000] (run from the repository
 * root for the ONNX lines) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "base/pb.h"
#include "data/data.h"
#include "engine/model.h"
#include "netfile/netfile.h"
#include "tests/nets.h"
#include "bench/bench.h"

#define V11_CFG "experiments/squeezenet/squeezenet_v1.1.cfg"

/* dse's ONNX export of V11_CFG into *buf (malloc'd), with the weights of a fresh model. */
static int export_v11(uint8_t **buf, size_t *len, int *layers) {
    struct dse_net net;
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    struct dse_data_norm norm;
    if (dse_netfile_load(V11_CFG, NULL, &net, &err)) return fprintf(stderr, "%s\n", err.msg), -1;
    struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA, .inference = 1 };
    dse_data_norm_imagenet(3, &norm);
    struct dse_export_meta meta = { .norm = &norm };
    int rc = dse_model_new(&net, &mo, &m, &err) || dse_onnx_write(m, &meta, buf, len, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    *layers = net.n_layers;
    dse_model_free(m);
    dse_net_deinit(&net);
    return rc ? -1 : 0;
}

/* Every field of an ONNX model a reader of its graph must see, once (base/pb.h's walker):
 * the model's, the graph's (ModelProto.graph 7), each node's (GraphProto.node 1) and
 * its attributes' (NodeProto.attribute 5), each initializer's (GraphProto.initializer 5)
 * and input's (11), the weights' raw_data passed over by its length. The fields counted
 * into *n. What no reader can skip: the floor under dse_onnx_parse. kind: 0 a model, 1 a
 * graph, 2 a node, 3 a message whose fields are not opened. */
static int walk(const uint8_t *p, size_t len, int kind, long *n) {
    struct dse_pb_reader r;
    struct dse_pb_field f;
    int got;
    dse_pb_reader_init(&r, p, len);
    while ((got = dse_pb_next(&r, &f)) == 1) {
        int sub = kind == 0 && f.field == 7 ? 1
                  : kind == 1 && f.field == 1 ? 2
                  : (kind == 1 && (f.field == 5 || f.field == 11)) || (kind == 2 && f.field == 5) ? 3 : -1;
        (*n)++;
        if (sub > 0 && f.wire == DSE_PB_LEN && walk(f.data, f.len, sub, n)) return -1;
    }
    return got;
}

/* Median and minimum ns per iteration of read + cost, over SAMPLES samples after two warm-ups:
 * from the ONNX bytes (onnx = 1) or the .cfg file. */
static int time_reads(int onnx, const uint8_t *buf, size_t len, long iters, double *t);

#define SAMPLES 15

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static volatile int64_t sink;

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 200000;
    struct dse_net net;
    if (iters < 1 || build_squeezenet(&net, 0, DSE_BYPASS_NONE)) {
        fprintf(stderr, "usage: bench_analysis [iterations >= 1]\n");
        return 2;
    }
    struct dse_cost_layer *costs = calloc((size_t)net.n_layers, sizeof *costs);
    struct dse_layer *copy = malloc(sizeof *copy * (size_t)net.n_layers);
    struct dse_cost_totals tot;
    double t_an[SAMPLES], t_cost[SAMPLES], t_copy[SAMPLES];
    char cpu[128] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
                snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
                cpu[strcspn(cpu, "\n")] = '\0';
                break;
            }
        fclose(f);
    }
    printf("machine cores=%ld cpu=\"%s\" threads_used=1\n", sysconf(_SC_NPROCESSORS_ONLN), cpu);

    for (int s = -2; s < SAMPLES; s++) { /* two warm-up samples */
        double t0 = now_ns();
        for (long i = 0; i < iters; i++) {
            dse_net_infer(&net, NULL, NULL);
            dse_cost_net(&net, 1 + (i & 7), costs, &tot, NULL);
            sink += tot.flops;
        }
        double t1 = now_ns();
        for (long i = 0; i < iters; i++) {
            dse_cost_net(&net, 1 + (i & 7), costs, &tot, NULL);
            sink += tot.flops;
        }
        double t2 = now_ns();
        for (long i = 0; i < iters; i++) {
            memcpy(copy, net.layers, sizeof *copy * (size_t)net.n_layers);
            __asm__ __volatile__("" : : "r"(copy) : "memory");
            sink += copy[i % net.n_layers].out_c;
        }
        double t3 = now_ns();
        if (s < 0) continue;
        t_an[s] = (t1 - t0) / (double)iters;
        t_cost[s] = (t2 - t1) / (double)iters;
        t_copy[s] = (t3 - t2) / (double)iters;
    }
    qsort(t_an, SAMPLES, sizeof(double), bench_cmp_double);
    qsort(t_cost, SAMPLES, sizeof(double), bench_cmp_double);
    qsort(t_copy, SAMPLES, sizeof(double), bench_cmp_double);
    double med = t_an[SAMPLES / 2], ymed = t_copy[SAMPLES / 2];
    printf("name=analysis.squeezenet_v1.0 what=infer+cost layers=%d iters=%ld median_ns=%.1f "
           "min_ns=%.1f analyses_per_s=%.0f target_per_s=1000000 yardstick=memcpy_layers "
           "yardstick_ns=%.1f ratio=%.2f\n",
           net.n_layers, iters, med, t_an[0], 1e9 / med, ymed, med / ymed);
    printf("name=analysis.squeezenet_v1.0 what=cost_only layers=%d iters=%ld median_ns=%.1f "
           "min_ns=%.1f analyses_per_s=%.0f yardstick=memcpy_layers yardstick_ns=%.1f ratio=%.2f\n",
           net.n_layers, iters, t_cost[SAMPLES / 2], t_cost[0], 1e9 / t_cost[SAMPLES / 2], ymed,
           t_cost[SAMPLES / 2] / ymed);
    free(costs);
    free(copy);
    dse_net_deinit(&net);

    uint8_t *buf = NULL;
    size_t len = 0;
    int n_cfg = 0;
    double t_onnx[SAMPLES], t_cfg[SAMPLES];
    long it_onnx = iters / 20 > 0 ? iters / 20 : 1, it_cfg = iters / 200 > 0 ? iters / 200 : 1;
    if (export_v11(&buf, &len, &n_cfg) || time_reads(1, buf, len, it_onnx, t_onnx) ||
        time_reads(0, NULL, 0, it_cfg, t_cfg)) {
        free(buf);
        fprintf(stderr, "bench_analysis: the ONNX lines need %s (run from the repository root)\n", V11_CFG);
        return 1;
    }
    printf("name=analysis.onnx.squeezenet_v1.1 what=onnx_parse+cost bytes=%zu layers=%d iters=%ld median_ns=%.1f "
           "min_ns=%.1f analyses_per_s=%.0f target_per_s=100000 yardstick=cfg_load+cost yardstick_ns=%.1f "
           "ratio=%.2f\n",
           len, n_cfg, it_onnx, t_onnx[SAMPLES / 2], t_onnx[0], 1e9 / t_onnx[SAMPLES / 2], t_cfg[SAMPLES / 2],
           t_onnx[SAMPLES / 2] / t_cfg[SAMPLES / 2]);
    printf("name=analysis.cfg.squeezenet_v1.1 what=cfg_load+cost iters=%ld median_ns=%.1f min_ns=%.1f "
           "analyses_per_s=%.0f\n",
           it_cfg, t_cfg[SAMPLES / 2], t_cfg[0], 1e9 / t_cfg[SAMPLES / 2]);
    /* the floor: each field the parse must read, read once and nothing done with it */
    double t_walk[SAMPLES];
    long fields = 0;
    for (int s = -2; s < SAMPLES; s++) {
        double t0 = now_ns();
        for (long i = 0; i < it_onnx; i++) {
            long n = 0;
            if (walk(buf, len, 0, &n)) return free(buf), 1;
            fields = n;
            sink += n;
        }
        if (s >= 0) t_walk[s] = (now_ns() - t0) / (double)it_onnx;
    }
    qsort(t_walk, SAMPLES, sizeof(double), bench_cmp_double);
    printf("name=analysis.onnx.squeezenet_v1.1 what=walk_fields fields=%ld iters=%ld median_ns=%.1f min_ns=%.1f "
           "ns_per_field=%.2f parse_cost_over_walk=%.1f\n",
           fields, it_onnx, t_walk[SAMPLES / 2], t_walk[0], t_walk[SAMPLES / 2] / (double)fields,
           t_onnx[SAMPLES / 2] / t_walk[SAMPLES / 2]);
    /* the network read from ONNX once, then analyzed as a sweep analyzes its candidates */
    struct dse_net on;
    struct dse_cost_layer oc[256];
    double t_on[SAMPLES];
    if (dse_onnx_parse(buf, len, "v1.1.onnx", NULL, &on, NULL) || on.n_layers > 256) return free(buf), 1;
    for (int s = -2; s < SAMPLES; s++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++) {
            dse_net_infer(&on, NULL, NULL);
            dse_cost_net(&on, 1 + (i & 7), oc, &tot, NULL);
            sink += tot.flops;
        }
        if (s >= 0) t_on[s] = (now_ns() - t0) / (double)iters;
    }
    qsort(t_on, SAMPLES, sizeof(double), bench_cmp_double);
    printf("name=analysis.onnx.squeezenet_v1.1 what=read_once_then_infer+cost layers=%d iters=%ld median_ns=%.1f "
           "min_ns=%.1f analyses_per_s=%.0f\n",
           on.n_layers, iters, t_on[SAMPLES / 2], t_on[0], 1e9 / t_on[SAMPLES / 2]);
    dse_net_deinit(&on);
    free(buf);
    return 0;
}

static int time_reads(int onnx, const uint8_t *buf, size_t len, long iters, double *t) {
    struct dse_cost_layer costs[256];
    struct dse_cost_totals tot;
    for (int s = -2; s < SAMPLES; s++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++) {
            struct dse_net net;
            struct dse_err err = { 0 };
            enum dse_status st = onnx ? dse_onnx_parse(buf, len, "v1.1.onnx", NULL, &net, &err)
                                      : dse_netcfg_load(V11_CFG, NULL, &net, &err);
            if (st) return fprintf(stderr, "%s\n", err.msg), -1;
            if (net.n_layers > 256 || dse_cost_net(&net, 1, costs, &tot, &err)) return dse_net_deinit(&net), -1;
            sink += tot.flops;
            dse_net_deinit(&net);
        }
        if (s >= 0) t[s] = (now_ns() - t0) / (double)iters;
    }
    qsort(t, SAMPLES, sizeof(double), bench_cmp_double);
    return 0;
}
