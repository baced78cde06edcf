/* bench_analysis.c: analyses per second of a SqueezeNet-sized network held in memory
 * (issue #2: target >= 1,000,000 per second on one core). One analysis = Caffe shape
 * inference of every layer + closed-form costs and memory estimates. The yardstick,
 * measured in the same run, is copying the network's layer array once (memcpy): the
 * least work that touches every layer description.
 * Usage: bench_analysis [iterations per sample, default 200000] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "tests/nets.h"
#include "bench/bench.h"

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
    return 0;
}
