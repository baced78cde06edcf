/* bench_sweep.c: candidates per second of an analytic sweep held in memory (issue #3:
 * target >= 200,000 per second on one core over >= 10^6 candidates). One candidate =
 * grid index -> metaparameters -> network (generator) -> shapes -> costs (at the
 * constraint batch; per-image FLOPs divide out exactly) -> constraints -> stable id. No file I/O. The yardstick
 * in the same run is the bookkeeping alone: index -> metaparameters -> id.
 * Usage: bench_sweep [SPACE] (default bench/large_space.cfg) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "sweep/sweep.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "bench/large_space.cfg";
    struct dse_space s;
    struct dse_err err = { 0 };
    char msg[600];
    if (dse_space_load(path, &s, &err)) {
        fprintf(stderr, "bench_sweep: %s\n", dse_err_format(&err, msg, sizeof msg));
        return 2;
    }
    struct dse_net net;
    struct dse_cost_layer *costs = malloc(sizeof *costs * 1024);
    struct dse_cost_totals one, train;
    uint64_t pruned = 0, failed = 0, sink = 0;
    dse_net_init(&net, s.name, 1, 1, 1);
    printf("machine cores=%ld threads_used=1 space=%s candidates=%llu\n", sysconf(_SC_NPROCESSORS_ONLN),
           s.name, (unsigned long long)s.count);

    double t0 = now_s();
    for (uint64_t k = 0; k < s.count; k++) {
        struct dse_mp mp;
        char id[DSE_ID_SIZE];
        dse_space_candidate(&s, k, &mp);
        dse_space_id(&mp, id);
        sink += (unsigned char)id[5];
    }
    double t1 = now_s();
    for (uint64_t k = 0; k < s.count; k++) {
        struct dse_mp mp;
        char id[DSE_ID_SIZE];
        dse_space_candidate(&s, k, &mp);
        if (dse_space_build(&s, &mp, &net, &err) || net.n_layers > 1024 ||
            dse_cost_net(&net, s.cons.train_mem_batch, costs, &train, &err)) {
            failed++;
            continue;
        }
        one = train; /* as dse sweep: FLOPs are linear in the batch, params do not depend on it */
        one.flops = train.flops / s.cons.train_mem_batch;
        if ((s.cons.max_params && one.params > s.cons.max_params) ||
            (s.cons.max_train_mem_mib > 0 && train.mem_train_bytes / 1048576.0 > s.cons.max_train_mem_mib))
            pruned++;
        dse_space_id(&mp, id);
        sink += (unsigned char)id[5] + (uint64_t)one.flops;
    }
    double t2 = now_s();
    double per_s = (double)s.count / (t2 - t1), y_per_s = (double)s.count / (t1 - t0);
    printf("name=sweep.analytic candidates=%llu pruned=%llu failed=%llu seconds=%.2f "
           "candidates_per_s=%.0f target_per_s=200000 yardstick=enumerate+id yardstick_per_s=%.0f "
           "ratio=%.2f\n", (unsigned long long)s.count, (unsigned long long)pruned,
           (unsigned long long)failed, t2 - t1, per_s, y_per_s, y_per_s / per_s);
    free(costs);
    dse_net_deinit(&net);
    dse_space_free(&s);
    return sink == 42 ? 1 : 0;
}
