/* test_dist.c: run under mpirun -np P (tests/mpi_test.sh, P = 2 to 8): engine/dist.c's sums
 * add in the order engine/dist.h states, bit for bit, and every rank ends with the same bits.
 * Each rank's values are PCG32 draws of wide exponents, so that another order of addition
 * gives other bits; every rank makes every rank's values and adds them itself in the stated
 * order: ps ((g0 + g1) + g2) + ..., tree as its binomial levels, doubles in rank order; and
 * the ranks' blocks of a batch's slices add to the slice tree's sum (engine/slices.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pcg32.h"
#include "engine/dist.h"
#include "engine/slices.h"

#define N 4096

static float value(int rank, int i) {
    struct dse_pcg32 g;
    dse_pcg32_seed(&g, (uint64_t)rank * 1000003u + (uint64_t)i, 17);
    const float m = (float)dse_pcg32_next(&g) / 4294967296.0f - 0.5f;
    return ldexpf(m, (int)dse_pcg32_bounded(&g, 40) - 20);
}

/* The tree's sum of ranks [r, r + span) as dist.c's levels add it: rank r's partial, then at
 * each level k (mask 2^k < span) the partial of rank r + 2^k, if it exists. */
static float tree_sum(int r, int mask, int size, int i) {
    if (mask == 1) return value(r, i);
    float s = tree_sum(r, mask / 2, size, i);
    return r + mask / 2 < size ? s + tree_sum(r + mask / 2, mask / 2, size, i) : s;
}

/* The slice tree's sum of block (level, index) of `total` slices, slice s's value being
 * value(200 + s, i): written from the definition (engine/slices.h), not from its stack. */
static float slice_tree(int level, int index, int total, int i) {
    if (level == 0) return value(200 + index, i);
    const float left = slice_tree(level - 1, 2 * index, total, i);
    return ((int64_t)(2 * index + 1) << (level - 1)) < total ? left + slice_tree(level - 1, 2 * index + 1, total, i)
                                                             : left;
}

/* dse_dist_sum_slices: each rank hands in its run's blocks (dse_slice_rank, dse_slice_blocks),
 * each the tree's sum of its slices; every rank must end with the whole tree's sum, for ps
 * and tree (and allreduce with 2 ranks), batches of 24 (16 slices) and 7 (7 slices).
 * Returns the values that differ. */
static int slices_check(struct dse_dist *d, int rank, int size) {
    static float buf[8 * N];
    int bad = 0;
    const int64_t batches[2] = { 24, 7 };
    for (int b = 0; b < 2; b++) {
        if (batches[b] < size) continue;
        const int total = dse_slices(batches[b], size);
        int s0, s1, root = 0;
        int64_t first, count;
        dse_slice_rank(batches[b], rank, size, &s0, &s1, &first, &count);
        while (((int64_t)1 << root) < total) root++;
        struct dse_slice_blk blk[DSE_SLICE_STACK];
        const int nb = dse_slice_blocks(total, s0, s1, blk, NULL);
        for (int how = DSE_DIST_PS; how < DSE_DIST_REDUCE_COUNT; how++) {
            if (how == DSE_DIST_ALLREDUCE && size != 2) continue;
            if (nb > 8) return N; /* more blocks than buf holds: a broken plan */
            for (int k = 0; k < nb; k++)
                for (int i = 0; i < N; i++) buf[k * N + i] = slice_tree(blk[k].level, blk[k].index, total, i);
            struct dse_err err = { 0 };
            if (dse_dist_sum_slices(d, (enum dse_dist_reduce)how, buf, N, total, &err)) {
                fprintf(stderr, "test_dist: %s\n", err.msg);
                dse_dist_abort(d, 1);
            }
            for (int i = 0; i < N; i++) {
                const float want = slice_tree(root, 0, total, i);
                bad += memcmp(&buf[i], &want, sizeof want) != 0;
            }
        }
    }
    return bad;
}

int main(void) {
    struct dse_dist *d;
    struct dse_err err = { 0 };
    if (dse_dist_init(&d, &err)) {
        fprintf(stderr, "test_dist: %s\n", err.msg);
        return 1;
    }
    const int rank = dse_dist_rank(d), size = dse_dist_size(d);
    int top = 1, bad = 0, differ = 0;
    while (top < size) top *= 2;
    static float buf[N], want[N];
    static double dbuf[N], dwant[N];
    for (int how = DSE_DIST_PS; how <= DSE_DIST_TREE; how++) {
        for (int i = 0; i < N; i++) {
            buf[i] = value(rank, i);
            float s = value(0, i);
            for (int r = 1; r < size; r++) s += value(r, i);
            want[i] = how == DSE_DIST_PS ? s : tree_sum(0, top, size, i);
            differ += how == DSE_DIST_TREE && memcmp(&s, &want[i], sizeof s) != 0;
        }
        if (dse_dist_sum(d, (enum dse_dist_reduce)how, buf, N, &err)) {
            fprintf(stderr, "test_dist: %s\n", err.msg);
            dse_dist_abort(d, 1);
        }
        for (int i = 0; i < N; i++) bad += memcmp(&buf[i], &want[i], sizeof buf[i]) != 0;
    }
    for (int i = 0; i < N; i++) {
        dbuf[i] = (double)value(rank, i) * 1e-3 + value(rank + 100, i);
        dwant[i] = 0;
        for (int r = 0; r < size; r++) dwant[i] += (double)value(r, i) * 1e-3 + value(r + 100, i);
    }
    if (dse_dist_sum_d(d, dbuf, N, &err)) dse_dist_abort(d, 1);
    for (int i = 0; i < N; i++) bad += memcmp(&dbuf[i], &dwant[i], sizeof dbuf[i]) != 0;
    bad += slices_check(d, rank, size);
    int all = bad;
    float f = (float)bad;
    if (dse_dist_sum(d, DSE_DIST_PS, &f, 1, &err)) dse_dist_abort(d, 1);
    all = (int)f;
    if (rank == 0) {
        if (all) printf("test_dist: P = %d: %d values differ from the stated order\n", size, all);
        else
            printf("ok: P = %d: ps, tree and doubles add in the stated order on every rank, bit for bit (the tree's "
                   "order differs from rank order in %d of %d values); the slices' blocks add as the slice tree "
                   "does\n", size, differ, N);
    }
    dse_dist_finish(d);
    return all ? 1 : 0;
}
