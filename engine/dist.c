/* dist.c: the group of ranks (engine/dist.h) on MPI, or a group of one without it. The
 * parameter server and the tree are ours, on MPI_Send/MPI_Recv, so that their order of
 * addition is the one dist.h states and their traffic is the one eqs. 3.3 and 3.4 count;
 * allreduce is MPI's. */
#include "engine/dist.h"

#include "engine/slices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DSE_HAVE_MPI
#include <mpi.h>
#endif

static const char *const reduce_names[DSE_DIST_REDUCE_COUNT] = {
#define X(e, name, what) [e] = name,
    DSE_DIST_REDUCES(X)
#undef X
};

const char *dse_dist_reduce_name(enum dse_dist_reduce r) {
    return dse_name_of(reduce_names, DSE_DIST_REDUCE_COUNT, (int)r, "?");
}

int dse_dist_built(void) {
#ifdef DSE_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

/* What OpenMPI's mpirun (OMPI_COMM_WORLD_SIZE) and PMI-1/2 (srun --mpi=pmi2: PMI_SIZE)
 * set: launched as one of several. One process started by a launcher is alone. */
int dse_dist_launched(void) {
    const char *v[] = { getenv("OMPI_COMM_WORLD_SIZE"), getenv("PMI_SIZE") };
    for (int i = 0; i < 2; i++)
        if (v[i] && atoi(v[i]) > 1) return 1;
    return 0;
}

struct dse_dist {
    int    rank, size;
    int    mpi;      /* 1: MPI_Init was called here, MPI_Finalize is ours */
    void  *tmp;      /* a receive buffer, grown on demand */
    size_t tmp_bytes;
};

enum dse_status dse_dist_init(struct dse_dist **out, struct dse_err *err) {
    *out = NULL;
    struct dse_dist *d = calloc(1, sizeof *d);
    if (!d) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    d->size = 1;
    if (dse_dist_launched()) {
#ifdef DSE_HAVE_MPI
        int ok = 0, level = 0;
        MPI_Initialized(&ok);
        /* other threads exist (the engine's, the loader's, a sweep's heartbeat), but only the
         * main thread calls MPI */
        if (!ok && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &level) != MPI_SUCCESS) {
            free(d);
            return dse_err_set(err, DSE_ERR_IO, NULL, 0, "MPI_Init_thread failed");
        }
        d->mpi = !ok;
        MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &d->size);
#else
        free(d);
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "started by an MPI launcher, but this dse was built without MPI: install "
                           "libopenmpi-dev and rebuild (cmake -DDSE_MPI=ON), or run it without mpirun");
#endif
    }
    *out = d;
    return DSE_OK;
}

int dse_dist_rank(const struct dse_dist *d) { return d ? d->rank : 0; }
int dse_dist_size(const struct dse_dist *d) { return d ? d->size : 1; }

#ifdef DSE_HAVE_MPI
static enum dse_status mpi_fail(struct dse_err *err, int rc, const char *what) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
    msg[len] = 0;
    return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s failed: %s", what, len ? msg : "MPI error");
}

static void *tmp_of(struct dse_dist *d, size_t bytes) {
    if (bytes > d->tmp_bytes) {
        void *p = realloc(d->tmp, bytes);
        if (!p) return NULL;
        d->tmp = p, d->tmp_bytes = bytes;
    }
    return d->tmp;
}

/* MPI counts are ints: a buffer goes in pieces of at most 2^30 elements. */
#define PIECE ((int64_t)1 << 30)

static int send_all(const void *buf, int64_t n, MPI_Datatype t, size_t es, int to) {
    for (int64_t o = 0; o < n; o += PIECE) {
        int rc = MPI_Send((const char *)buf + o * es, (int)(n - o < PIECE ? n - o : PIECE), t, to, 17, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

static int recv_all(void *buf, int64_t n, MPI_Datatype t, size_t es, int from) {
    for (int64_t o = 0; o < n; o += PIECE) {
        int rc = MPI_Recv((char *)buf + o * es, (int)(n - o < PIECE ? n - o : PIECE), t, from, 17, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

static void add_f(void *dst, const void *src, int64_t n) {
    float *a = dst;
    const float *b = src;
    for (int64_t i = 0; i < n; i++) a[i] += b[i];
}

static void add_d(void *dst, const void *src, int64_t n) {
    double *a = dst;
    const double *b = src;
    for (int64_t i = 0; i < n; i++) a[i] += b[i];
}

/* Rank 0 adds the others' buffers in rank order and sends the sum to each. */
static int sum_ps(struct dse_dist *d, void *buf, int64_t n, MPI_Datatype t, size_t es,
                  void (*add)(void *, const void *, int64_t), void *tmp) {
    int rc = MPI_SUCCESS;
    if (d->rank == 0) {
        for (int r = 1; r < d->size && rc == MPI_SUCCESS; r++)
            if ((rc = recv_all(tmp, n, t, es, r)) == MPI_SUCCESS) add(buf, tmp, n);
        for (int r = 1; r < d->size && rc == MPI_SUCCESS; r++) rc = send_all(buf, n, t, es, r);
    } else {
        rc = send_all(buf, n, t, es, 0);
        if (rc == MPI_SUCCESS) rc = recv_all(buf, n, t, es, 0);
    }
    return rc;
}

/* The binomial tree's way down: a rank that sent at level k (mask) receives the sum from
 * rank - 2^k, then forwards it to its own children at the levels below k. */
static int tree_down(struct dse_dist *d, float *buf, int64_t n, int mask) {
    const size_t es = sizeof(float);
    int rc = MPI_SUCCESS;
    if (d->rank) rc = recv_all(buf, n, MPI_FLOAT, es, d->rank - mask);
    for (mask >>= 1; mask > 0 && rc == MPI_SUCCESS; mask >>= 1)
        if (d->rank + mask < d->size) rc = send_all(buf, n, MPI_FLOAT, es, d->rank + mask);
    return rc;
}

/* Binomial tree: at level k (mask 2^k) a rank with bit k set sends its partial sum to
 * rank - 2^k and is done; the others add rank + 2^k's. The sum then goes back down the
 * same tree. */
static int sum_tree(struct dse_dist *d, float *buf, int64_t n, float *tmp) {
    const size_t es = sizeof(float);
    int rc = MPI_SUCCESS, mask = 1;
    for (; mask < d->size; mask <<= 1) {
        if (d->rank & mask) {
            rc = send_all(buf, n, MPI_FLOAT, es, d->rank - mask);
            break;
        }
        if (d->rank + mask < d->size) {
            if ((rc = recv_all(tmp, n, MPI_FLOAT, es, d->rank + mask)) != MPI_SUCCESS) return rc;
            add_f(buf, tmp, n);
        }
    }
    return rc == MPI_SUCCESS ? tree_down(d, buf, n, mask) : rc;
}

/* The blocks of ranks [r0, r1)'s runs of slices (engine/slices.h), and their number. */
static int run_blocks(int total, int r0, int r1, int P, struct dse_slice_blk *out) {
    return dse_slice_blocks(total, dse_slice_run_start(total, r0, P), dse_slice_run_start(total, r1, P), out, NULL);
}

/* Push ranks [r0, r1)'s blocks, whose sums lie one after another at src (n floats each). */
static void push_run(struct dse_slice_tree *t, int total, int r0, int r1, int P, float *src, int64_t n) {
    struct dse_slice_blk b[DSE_SLICE_STACK];
    const int nb = run_blocks(total, r0, r1, P, b);
    for (int k = 0; k < nb; k++) dse_slice_push(t, b[k].level, b[k].index, src + k * n, 0, n, NULL, NULL);
}

/* ps: rank 0 pushes every rank's blocks in rank order, then sends the sum. */
static int slices_ps(struct dse_dist *d, float *buf, int64_t n, int total, int nb, float *tmp) {
    const int P = d->size;
    int rc = MPI_SUCCESS;
    if (d->rank) {
        rc = send_all(buf, nb * n, MPI_FLOAT, sizeof(float), 0);
        return rc == MPI_SUCCESS ? recv_all(buf, n, MPI_FLOAT, sizeof(float), 0) : rc;
    }
    struct dse_slice_tree t;
    dse_slice_tree_init(&t, total);
    push_run(&t, total, 0, 1, P, buf, n);
    for (int r = 1; r < P && rc == MPI_SUCCESS; r++) {
        const int nr = run_blocks(total, r, r + 1, P, NULL);
        if ((rc = recv_all(tmp, nr * n, MPI_FLOAT, sizeof(float), r)) == MPI_SUCCESS) push_run(&t, total, r, r + 1, P, tmp, n);
        tmp += nr * n;
    }
    DSE_ASSERT(rc != MPI_SUCCESS || (t.n == 1 && t.b[0].buf == buf));
    for (int r = 1; r < P && rc == MPI_SUCCESS; r++) rc = send_all(buf, n, MPI_FLOAT, sizeof(float), r);
    return rc;
}

/* tree: at level k a rank with bit k set sends the blocks of the ranks it has gathered,
 * packed, to rank - 2^k; the others push those of rank + 2^k's group after their own. */
static int slices_tree(struct dse_dist *d, float *buf, int64_t n, int total, float *tmp, float *out) {
    const int P = d->size;
    int rc = MPI_SUCCESS, mask = 1;
    struct dse_slice_tree t;
    dse_slice_tree_init(&t, total);
    push_run(&t, total, d->rank, d->rank + 1, P, buf, n);
    for (; mask < P; mask <<= 1) {
        if (d->rank & mask) {
            for (int k = 0; k < t.n; k++) memcpy(out + k * n, t.b[k].buf, sizeof(float) * (size_t)n);
            rc = send_all(out, t.n * n, MPI_FLOAT, sizeof(float), d->rank - mask);
            break;
        }
        const int from = d->rank + mask, to = from + mask < P ? from + mask : P;
        if (from >= P) continue;
        const int nr = run_blocks(total, from, to, P, NULL);
        if ((rc = recv_all(tmp, nr * n, MPI_FLOAT, sizeof(float), from)) != MPI_SUCCESS) return rc;
        push_run(&t, total, from, to, P, tmp, n);
        tmp += nr * n;
    }
    if (rc != MPI_SUCCESS) return rc;
    DSE_ASSERT(d->rank || (t.n == 1 && t.b[0].buf == buf));
    return tree_down(d, buf, n, mask);
}
#endif

enum dse_status dse_dist_sum(struct dse_dist *d, enum dse_dist_reduce how, float *buf, int64_t n,
                             struct dse_err *err) {
    if (!d || d->size == 1 || n == 0) return DSE_OK;
#ifdef DSE_HAVE_MPI
    int rc;
    if (how == DSE_DIST_ALLREDUCE) {
        for (int64_t o = 0; o < n; o += PIECE)
            if ((rc = MPI_Allreduce(MPI_IN_PLACE, buf + o, (int)(n - o < PIECE ? n - o : PIECE), MPI_FLOAT, MPI_SUM,
                                    MPI_COMM_WORLD)) != MPI_SUCCESS)
                return mpi_fail(err, rc, "MPI_Allreduce");
        return DSE_OK;
    }
    float *tmp = tmp_of(d, (size_t)n * sizeof(float));
    if (!tmp) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    rc = how == DSE_DIST_TREE ? sum_tree(d, buf, n, tmp) : sum_ps(d, buf, n, MPI_FLOAT, sizeof(float), add_f, tmp);
    return rc == MPI_SUCCESS ? DSE_OK : mpi_fail(err, rc, how == DSE_DIST_TREE ? "the reduction tree" : "the parameter server");
#else
    (void)how, (void)buf;
    return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "several ranks without MPI");
#endif
}

enum dse_status dse_dist_sum_slices(struct dse_dist *d, enum dse_dist_reduce how, float *buf, int64_t n, int total,
                                    struct dse_err *err) {
    if (!d || d->size == 1 || n == 0) return DSE_OK; /* alone: the run is every slice, one block */
#ifdef DSE_HAVE_MPI
    const int P = d->size, nb = run_blocks(total, d->rank, d->rank + 1, P, NULL);
    if (how == DSE_DIST_ALLREDUCE) {
        for (int k = 1; k < nb; k++) add_f(buf, buf + k * n, n);
        return dse_dist_sum(d, how, buf, n, err);
    }
    /* room for every block received (ps: rank 0's; tree: each level's), and one packed send */
    int64_t blocks = 0, sent = 0;
    if (how == DSE_DIST_PS) {
        for (int r = 1; r < P && d->rank == 0; r++) blocks += run_blocks(total, r, r + 1, P, NULL);
    } else {
        int mask = 1;
        for (; mask < P && !(d->rank & mask); mask <<= 1)
            if (d->rank + mask < P)
                blocks += run_blocks(total, d->rank + mask, d->rank + 2 * mask < P ? d->rank + 2 * mask : P, P, NULL);
        if (mask < P) sent = run_blocks(total, d->rank, d->rank + mask < P ? d->rank + mask : P, P, NULL);
    }
    float *tmp = tmp_of(d, (size_t)((blocks + sent) * n) * sizeof(float));
    if (!tmp && blocks + sent) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    int rc = how == DSE_DIST_TREE ? slices_tree(d, buf, n, total, tmp, tmp + blocks * n)
                                  : slices_ps(d, buf, n, total, nb, tmp);
    return rc == MPI_SUCCESS ? DSE_OK : mpi_fail(err, rc, how == DSE_DIST_TREE ? "the reduction tree" : "the parameter server");
#else
    (void)how, (void)buf, (void)total;
    return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "several ranks without MPI");
#endif
}

enum dse_status dse_dist_sum_d(struct dse_dist *d, double *buf, int64_t n, struct dse_err *err) {
    if (!d || d->size == 1 || n == 0) return DSE_OK;
#ifdef DSE_HAVE_MPI
    double *tmp = tmp_of(d, (size_t)n * sizeof(double));
    if (!tmp) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    int rc = sum_ps(d, buf, n, MPI_DOUBLE, sizeof(double), add_d, tmp);
    return rc == MPI_SUCCESS ? DSE_OK : mpi_fail(err, rc, "the parameter server (doubles)");
#else
    (void)buf;
    return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "several ranks without MPI");
#endif
}

enum dse_status dse_dist_bcast(struct dse_dist *d, void *buf, size_t bytes, int root, struct dse_err *err) {
    if (!d || d->size == 1 || bytes == 0) return DSE_OK;
#ifdef DSE_HAVE_MPI
    for (size_t o = 0; o < bytes; o += (size_t)PIECE) {
        int rc = MPI_Bcast((char *)buf + o, (int)(bytes - o < (size_t)PIECE ? bytes - o : (size_t)PIECE), MPI_BYTE,
                           root, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "MPI_Bcast");
    }
    return DSE_OK;
#else
    (void)buf, (void)root;
    return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "several ranks without MPI");
#endif
}

enum dse_status dse_dist_same(struct dse_dist *d, uint64_t hash, const char *what, struct dse_err *err) {
    if (!d || d->size == 1) return DSE_OK;
#ifdef DSE_HAVE_MPI
    uint64_t *all = malloc(sizeof *all * (size_t)d->size);
    if (!all) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    int rc = MPI_Allgather(&hash, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        free(all);
        return mpi_fail(err, rc, "MPI_Allgather");
    }
    int bad = 0;
    for (int r = 1; r < d->size && !bad; r++)
        if (all[r] != all[0]) bad = r;
    free(all);
    if (bad)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "rank %d of %d was given a different %s than rank 0: every rank must run the same "
                           "command on the same files",
                           bad, d->size, what);
    return DSE_OK;
#else
    (void)hash, (void)what;
    return DSE_OK;
#endif
}

enum dse_status dse_dist_agree(struct dse_dist *d, enum dse_status st, struct dse_err *err) {
    if (!d || d->size == 1) return st;
#ifdef DSE_HAVE_MPI
    int mine = (int)st, *all = malloc(sizeof *all * (size_t)d->size);
    if (!all || MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS) {
        free(all);
        dse_dist_abort(d, 1); /* the ranks cannot even agree: end them */
    }
    int f = -1, failed = 0;
    for (int r = 0; r < d->size; r++)
        if (all[r]) failed++, f = f < 0 ? r : f;
    free(all);
    if (f < 0) return DSE_OK;
    char who[32] = ""; /* a failure of every rank is the run's, not one rank's */
    if (failed < d->size) snprintf(who, sizeof who, "rank %d: ", f);
    struct { int code, line; char msg[512]; } e = { .code = 0 };
    if (d->rank == f) {
        char text[512 + 4200];
        if (err && err->file[0]) snprintf(text, sizeof text, "%s%s: %s", who, err->file, err->msg);
        else snprintf(text, sizeof text, "%s%s", who, err ? err->msg : dse_status_str(st));
        e.code = (int)st, e.line = err ? err->line : 0;
        dse_strlcpy(e.msg, text, (int)sizeof e.msg);
    }
    if (MPI_Bcast(&e, (int)sizeof e, MPI_BYTE, f, MPI_COMM_WORLD) != MPI_SUCCESS) dse_dist_abort(d, 1);
    return dse_err_set(err, (enum dse_status)e.code, NULL, 0, "%s", e.msg);
#else
    (void)err;
    return st;
#endif
}

void dse_dist_barrier(struct dse_dist *d) {
#ifdef DSE_HAVE_MPI
    if (d && d->size > 1) MPI_Barrier(MPI_COMM_WORLD);
#else
    (void)d;
#endif
}

void dse_dist_abort(struct dse_dist *d, int code) {
#ifdef DSE_HAVE_MPI
    if (d && d->size > 1) MPI_Abort(MPI_COMM_WORLD, code);
#else
    (void)d;
#endif
    exit(code);
}

void dse_dist_finish(struct dse_dist *d) {
    if (!d) return;
#ifdef DSE_HAVE_MPI
    if (d->mpi) MPI_Finalize();
#endif
    free(d->tmp);
    free(d);
}
