/* dist.h: ranks that train one model together (issue #17; FireCaffe, thesis ch. 3): each
 * rank runs forward and backward on its contiguous share of the global batch, the weight
 * gradients are summed across the ranks, and every rank applies the same SGD step.
 *
 * Built on MPI (Debian's OpenMPI) when CMake finds it (cmake/mpi.cmake, DSE_MPI); without
 * it a process is a group of one, and a process that mpirun started says so as an error.
 * Nothing here is global: the group is a value its caller owns.
 *
 * The sums: every rank ends with the same bits. Three ways to add (DSE_DIST_REDUCES):
 *   ps         a parameter server: rank 0 receives every rank's buffer and adds them, then
 *              sends the sum to each rank (thesis eq. 3.3: |dW| p / BW).
 *   tree       a binomial reduction tree to rank 0 and back (eq. 3.4: |dW| 2 log2(p) / BW):
 *              rank r adds rank r + 2^k's partial sum at level k.
 *   allreduce  MPI_Allreduce: MPI's own algorithm and order (for two ranks a + b = b + a).
 * A training step's gradients go by the batch's slices (engine/slices.h,
 * dse_dist_sum_slices): ps and tree add the ranks' blocks where the slice tree adds them,
 * so P ranks give the bits of one process, with any number of threads in either. A plain
 * buffer (dse_dist_sum) is added in rank order by ps, ((g0 + g1) + g2) + ..., and by tree
 * as P = 4 as (g0 + g1) + (g2 + g3).
 */
#ifndef DSE_ENGINE_DIST_H
#define DSE_ENGINE_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* X(ENUM, name, what) */
#define DSE_DIST_REDUCES(X)                                                                     \
    X(DSE_DIST_PS,        "ps",        "parameter server: rank 0 adds in rank order, sends back") \
    X(DSE_DIST_TREE,      "tree",      "binomial reduction tree and broadcast")                 \
    X(DSE_DIST_ALLREDUCE, "allreduce", "MPI_Allreduce (MPI's order)")
#define DSE_DIST_REDUCE_WORD(e, name, what) name " "
#define DSE_DIST_REDUCE_NAMES DSE_DIST_REDUCES(DSE_DIST_REDUCE_WORD) /* "ps tree allreduce " */

enum dse_dist_reduce {
#define X(e, name, what) e,
    DSE_DIST_REDUCES(X)
#undef X
        DSE_DIST_REDUCE_COUNT
};
const char *dse_dist_reduce_name(enum dse_dist_reduce r);

struct dse_dist;

/* 1 when this build has MPI. */
int dse_dist_built(void);
/* 1 when the process was started by mpirun/srun as one of several ranks (read from the
 * environment MPI launchers set; no MPI call). */
int dse_dist_launched(void);

/* Join the group: MPI_Init when launched, else a group of one. Errors: launched under
 * mpirun by a build without MPI. */
enum dse_status dse_dist_init(struct dse_dist **out, struct dse_err *err);
int dse_dist_rank(const struct dse_dist *d);
int dse_dist_size(const struct dse_dist *d);

/* buf[0..n) summed across the ranks, in place, as `how` adds; every rank ends with the same
 * bits. dse_dist_sum_d: doubles, always in rank order (ps), whatever the floats use. */
enum dse_status dse_dist_sum(struct dse_dist *d, enum dse_dist_reduce how, float *buf, int64_t n,
                             struct dse_err *err);
enum dse_status dse_dist_sum_d(struct dse_dist *d, double *buf, int64_t n, struct dse_err *err);
/* The weight gradients of a batch cut into `total` slices (engine/slices.h), summed across
 * the ranks as the slice tree adds them: buf holds this rank's blocks (dse_slice_blocks of
 * its run dse_slice_rank), n floats each, one after another; on return buf[0 .. n) is the
 * batch's sum on every rank. `ps`: rank 0 receives every rank's blocks and adds them where
 * the tree does; `tree`: the binomial tree, each rank adding the blocks of the ranks below
 * it in the tree after its own, where the tree does. Both give one process's bits, with
 * any number of threads. `allreduce`: each rank adds its blocks left to right, then
 * MPI_Allreduce (MPI's order: one process's bits when each rank's run is one block and
 * MPI adds as the tree does, e.g. 2 ranks). */
enum dse_status dse_dist_sum_slices(struct dse_dist *d, enum dse_dist_reduce how, float *buf, int64_t n, int total,
                                    struct dse_err *err);
/* bytes from rank root to every rank. */
enum dse_status dse_dist_bcast(struct dse_dist *d, void *buf, size_t bytes, int root, struct dse_err *err);
/* Every rank's hash of what it was asked to do: an error on every rank if any differs,
 * naming the first rank that differs from rank 0 and `what`. */
enum dse_status dse_dist_same(struct dse_dist *d, uint64_t hash, const char *what, struct dse_err *err);
/* The end of a phase every rank goes through (a run's setup): st is this rank's outcome.
 * If any rank failed, every rank returns the first failing rank's error (its code, and its
 * message with the file it names, prefixed "rank r: " unless every rank failed); else DSE_OK. So a failure that only
 * some ranks meet (a file one node cannot read) ends every rank's run the same way, and
 * none is left waiting for the others in a sum. */
enum dse_status dse_dist_agree(struct dse_dist *d, enum dse_status st, struct dse_err *err);
void dse_dist_barrier(struct dse_dist *d);
/* A failing rank ends the whole group with `code` (MPI_Abort): the others would wait
 * forever in the next sum. */
void dse_dist_abort(struct dse_dist *d, int code);
/* MPI_Finalize; frees d. NULL: nothing. */
void dse_dist_finish(struct dse_dist *d);

/* Rank r's share [*first, *first + *count) of n items, contiguous, the earlier ranks one
 * larger when n % size != 0: r q + min(r, n % size) with q = n / size. The one split: a
 * batch's slices are cut by it (engine/slices.h), ranks and the CPU engine's threads take
 * their runs of slices by it (dse_slice_rank, dse_cpu_share). */
static inline void dse_dist_share(int64_t n, int r, int size, int64_t *first, int64_t *count) {
    const int64_t q = n / size, m = n % size;
    *first = r * q + (r < m ? r : m);
    *count = q + (r < m);
}

#endif
