/* bench_allreduce.c: the real time of summing a network's weight gradients across MPI ranks
 * (engine/dist.h: parameter server, reduction tree, MPI_Allreduce) beside the communication
 * model's prediction (analysis/comm.c, thesis eqs. 3.3 and 3.4) for the latency a and
 * bandwidth BW measured in the same run: the yardstick is a ping-pong between ranks 0 and 1
 * of 8 bytes (a) and of the gradients' bytes (a + |dW| / BW), fitted once from its medians
 * and once from its minima (docs/conventions.md#benchmarks). Under mpirun, one process per rank;
 * bench/allreduce.sh runs P = 2, 4 and 8. Results and what they show: docs/comm-model.md.
 * Usage: mpirun -np P bench_allreduce [NET] [--reps R]   (NET default SqueezeNet v1.0, R 20) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "analysis/analysis.h"
#include "bench/bench.h"
#include "netfile/netfile.h"
#include "engine/dist.h"

#define WARMUP 2

/* Half the round trip of `bytes` between ranks 0 and 1, in ms, reps times after WARMUP;
 * the other ranks wait at the barrier that follows. Meaningful on rank 0. */
static struct bench_timing ping_pong(char *buf, int bytes, int rank, int reps, double *ms) {
    for (int r = -WARMUP; r < reps; r++) {
        double t0 = bench_now_ms();
        if (rank == 0) {
            MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
        if (r >= 0) ms[r] = 0.5 * (bench_now_ms() - t0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return bench_summarize(ms, reps);
}

/* Every rank's buffer: small integers, so that any summation order gives the exact sum. */
static void fill(float *x, int64_t n, int rank) {
    for (int64_t i = 0; i < n; i++) x[i] = (float)((i + rank) % 8);
}

/* Time dse_dist_sum(how) reps times after WARMUP, the buffer refilled (untimed) before each;
 * a step's time is the slowest rank's. Checks the sum of the last one. 0, or -1 on failure. */
static int time_sum(struct dse_dist *d, enum dse_dist_reduce how, float *x, int64_t n, int reps, double *ms,
                    struct bench_timing *out) {
    const int rank = dse_dist_rank(d), size = dse_dist_size(d);
    struct dse_err err = { 0 };
    for (int r = -WARMUP; r < reps; r++) {
        fill(x, n, rank);
        dse_dist_barrier(d);
        double t0 = bench_now_ms();
        if (dse_dist_sum(d, how, x, n, &err)) {
            fprintf(stderr, "bench_allreduce: rank %d: %s\n", rank, err.msg);
            return -1;
        }
        if (r >= 0) ms[r] = bench_now_ms() - t0;
    }
    long bad = 0;
    for (int64_t i = 0; i < n; i++) {
        float want = 0;
        for (int k = 0; k < size; k++) want += (float)((i + k) % 8);
        bad += x[i] != want;
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, ms, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (bad) {
        if (!rank) fprintf(stderr, "bench_allreduce: %ld values summed wrong\n", bad);
        return -1;
    }
    *out = bench_summarize(ms, reps);
    return 0;
}

int main(int argc, char **argv) {
    const char *path = "experiments/squeezenet/squeezenet_v1.0.cfg";
    int reps = 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (argv[i][0] != '-') path = argv[i];
        else return fprintf(stderr, "usage: mpirun -np P bench_allreduce [NET] [--reps R]\n"), 2;
    }
    if (reps < 1 || reps > 1000) return fprintf(stderr, "bench_allreduce: --reps from 1 to 1000\n"), 2;

    struct dse_err err = { 0 };
    struct dse_dist *d = NULL;
    if (dse_dist_init(&d, &err)) return fprintf(stderr, "bench_allreduce: %s\n", err.msg), 1;
    const int rank = dse_dist_rank(d), size = dse_dist_size(d);
    if (size < 2) {
        if (!rank) printf("SKIP: bench_allreduce needs 2 ranks or more (mpirun -np P)\n");
        dse_dist_finish(d);
        return 77;
    }

    /* |dW| from the analyzer: 4 bytes per parameter */
    struct dse_net net;
    struct dse_cost_totals tot;
    if (dse_netfile_load(path, NULL, &net, &err)) {
        if (!rank) fprintf(stderr, "bench_allreduce: %s\n", err.msg);
        dse_dist_finish(d);
        return 2;
    }
    struct dse_cost_layer *layers = calloc((size_t)net.n_layers, sizeof *layers);
    if (!layers || dse_cost_net(&net, 1, layers, &tot, &err)) return fprintf(stderr, "bench_allreduce: cost\n"), 1;
    free(layers);
    const int64_t n = tot.params;
    float *x = malloc((size_t)n * sizeof *x);
    double *ms = malloc((size_t)reps * sizeof *ms);
    if (!x || !ms) return fprintf(stderr, "bench_allreduce: out of memory\n"), 1;

    if (!rank) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, ",\n")] = '\0';
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        printf("# bench_allreduce: net=%s params=%lld grad_bytes=%lld ranks=%d cores=%ld oversubscribed=%s "
               "mpi=\"%s\" reps=%d warmup=%d\n",
               net.name, (long long)n, (long long)tot.param_bytes, size, cores, size > cores ? "yes" : "no", lib,
               reps, WARMUP);
    }

    /* The yardstick: latency (8 bytes) and bandwidth (|dW| bytes) between ranks 0 and 1. */
    double *pp = malloc((size_t)(3 * reps) * sizeof *pp); /* cheap: 3x the repetitions */
    if (!pp) return fprintf(stderr, "bench_allreduce: out of memory\n"), 1;
    struct bench_timing small = ping_pong((char *)x, 8, rank, 3 * reps, pp);
    struct bench_timing big = ping_pong((char *)x, (int)tot.param_bytes, rank, 3 * reps, pp);
    free(pp);
    /* Two fits of alpha + n / BW: from the medians, and from the minima (the link when nothing
     * else ran: on a shared machine the two differ, and so do the sums' medians and minima). */
    struct dse_comm_opts model[2];
    for (int k = 0; k < 2; k++) {
        double alpha_s = 1e-3 * (k ? small.min_ms : small.median_ms);
        double wire_s  = 1e-3 * (k ? big.min_ms : big.median_ms) - alpha_s;
        if (wire_s <= 0) wire_s = 1e-3 * (k ? big.min_ms : big.median_ms);
        model[k] = (struct dse_comm_opts){ .grad_bytes = tot.param_bytes, .bandwidth = (double)tot.param_bytes / wire_s,
                                           .latency_s = alpha_s, .batch = 1, .img_per_s = 1 };
    }
    MPI_Bcast(model, (int)sizeof model, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (!rank)
        printf("name=p2p p=%d metric=ms bytes=%lld measured=%.3f min=%.3f latency_us=%.1f bandwidth_gbs=%.3f "
               "min_latency_us=%.1f min_bandwidth_gbs=%.3f\n",
               size, (long long)tot.param_bytes, big.median_ms, big.min_ms, 1e6 * model[0].latency_s,
               model[0].bandwidth / 1e9, 1e6 * model[1].latency_s, model[1].bandwidth / 1e9);

    int rc = 0;
    for (int w = 0; w < DSE_DIST_REDUCE_COUNT && !rc; w++) { /* ps, tree, allreduce: engine/dist.h */
        const enum dse_dist_reduce how = (enum dse_dist_reduce)w;
        struct bench_timing t;
        if (time_sum(d, how, x, n, reps, ms, &t)) {
            rc = 1;
            break;
        }
        /* MPI's own algorithm is set against the tree's model (eq. 3.4), the best of the two */
        const int ps = how == DSE_DIST_PS;
        double pred[2];
        for (int k = 0; k < 2; k++)
            pred[k] = 1e3 * (ps ? dse_comm_ps_s(&model[k], size) : dse_comm_tree_s(&model[k], size));
        if (!rank)
            printf("name=allreduce_%s p=%d metric=ms measured=%.3f min=%.3f model=%.3f model_min=%.3f model_eq=%s "
                   "ratio=%.2f ratio_min=%.2f yardstick=p2p\n",
                   how == DSE_DIST_ALLREDUCE ? "mpi" : dse_dist_reduce_name(how), size, t.median_ms, t.min_ms, pred[0],
                   pred[1], ps ? "3.3" : "3.4", t.median_ms / pred[0], t.min_ms / pred[1]);
    }
    free(x);
    free(ms);
    dse_net_deinit(&net);
    dse_dist_finish(d);
    return rc;
}
