/* worker_impl.h: what the files of a training sweep's workers share (private to sweep/):
 * the worker and its candidates, the GPU book, the worker threads of one process, and the
 * functions one file of them calls in another. The floors, top down: sweep_train.c (the
 * supervisor: processes, threads, plan) -> sweep_loop.c (claims) -> sweep_stretch.c (one
 * stretch of training) -> sweep_ranks.c (a run's options, ranks) and sweep_gpu.c (GPU
 * placement) -> sweep_worker.c (the worker's view of the directory, rung decisions). */
#ifndef DSE_SWEEP_WORKER_IMPL_H
#define DSE_SWEEP_WORKER_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/train.h"
#include "sweep/search.h"
#include "sweep/sweep_impl.h"

/* ---- the worker's view of the sweep ---------------------------------------------------- */

struct cand {
    char           id[DSE_ID_SIZE];
    uint64_t       index;
    struct dse_rec rec;        /* as last read; a final one is not read again */
    int            read_ok;
    int64_t        lease_gen;  /* highest lease gen at the last scan; 0: none */
    int            live;       /* its lease looked held at the last scan */
    struct dse_lease_obs obs;  /* what this worker has seen of its lease */
    int            est_known;
    int64_t        est_bytes;  /* the analyzer's training memory at the training batch; -1 unknown */
};

struct idref {
    const char *id;
    int         i;
};

/* ---- GPUs shared by one command's workers ------------------------------------------------ */

#define BOOK_SLOTS 512 /* workers one command may start */

/* What the workers of one command share about their GPUs, in memory the command maps
 * (shared) before it forks them: the device of each worker slot, the device memory each
 * has promised to a candidate it claimed and has not allocated yet (two workers on one
 * GPU would otherwise both count the same free memory), and each GPU's total once a
 * worker has seen it. A robust process-shared mutex guards it, so a worker killed while
 * holding it blocks nobody. Other commands and other users are not in it: cudaMemGetInfo
 * counts their memory once they have allocated it, and a race with them ends at worst in
 * an out-of-memory error, which re-queues the candidate. */
struct gpu_book {
    pthread_mutex_t mu;
    int             slot_gpu[BOOK_SLOTS];
    int64_t         slot_held[BOOK_SLOTS];
    int             n_gpus;
    int             gpu[DSE_SWEEP_GPUS_MAX];
    uint64_t        total[DSE_SWEEP_GPUS_MAX]; /* 0: not seen yet */
};

/* ---- the worker threads of one process ------------------------------------------------------ */

/* The workers of one GPU are threads of one process (docs/sweep-dir.md, "Sweeps on shared
 * GPUs"): a process has one CUDA context per device, in which the kernels of its workers'
 * streams run at once, while separate processes only take turns on a GPU (unless the user
 * runs MPS). Each thread is a whole worker: its own model, CUDA stream and handles, lease
 * identity (token; name host:pid.k) and heartbeat. What they share is this: a CUDA error
 * may leave the process's context unusable, so the first worker to meet one fails its
 * candidate (as a lone worker does) and marks the process broken; the others re-queue
 * theirs and stop, and the process exits EXIT_RESTART for a fresh one. */
struct host {
    pthread_mutex_t mu;
    pthread_cond_t  cv;                    /* a worker thread finished */
    int             running;               /* worker threads not finished yet (under mu) */
    atomic_int      broken;                /* set once: a worker met a CUDA error */
    char            culprit[DSE_ID_SIZE];  /* its candidate (under mu) */
    struct dse_cuda_conv_pool *pool;       /* GPU workers: cuDNN's choices, found once per shape
                                              for all the process's candidates (engine/cuda/cuda.h,
                                              "shared choices"); plain host memory */
};

struct worker {
    struct host            *host;        /* the process's workers */
    const struct dse_space *s;
    const char             *dir;
    struct dse_sweep_opts   o;
    struct dse_sweep_plan   plan;
    struct dse_lease_me     me;
    char                    name[128];   /* host:pid, or host:pid.k for thread k of several */
    struct cand            *c;
    int                     n, cap;      /* an evolution sweep's grow as the search proposes */
    int                     evolution;   /* the candidates are the search log's proposals (sweep/search.h) */
    int                     ended;       /* evolution: the log says the search has ended */
    struct idref           *by_id;       /* the candidates sorted by id */
    int                    *order;       /* c[] in the order claims look (claim_order) */
    struct dse_rung         rung[DSE_SWEEP_RUNGS_MAX];
    double                  deadline;    /* monotonic; 0: none */
    struct dse_tally        tally;       /* at the last dse_worker_refresh */
    /* GPU workers (docs/sweep-dir.md, "Sweeps on shared GPUs") */
    int                     gpu;         /* CUDA device index; -1: the CPU */
    int                     slot;        /* this worker's slot in book */
    struct gpu_book        *book;        /* shared with the command's other workers; NULL on the CPU */
    int                     gpu_seen;    /* its memory was looked at (this process has a CUDA context) */
    int64_t                 held;        /* bytes promised in book for a claim, not allocated yet */
    double                  claim_free_mib, claim_need_mib; /* at the last claim */
    int                     restart;     /* this worker's CUDA error broke its process (dse_worker_host_break) */
};

/* ---- this worker's GPU ------------------------------------------------------------------ */

#define MIB(b) ((double)(b) / 1048576.0)

/* Its GPU as the worker sees it now. */
struct gpu_view {
    uint64_t free, total;  /* cudaMemGetInfo: the whole device, other processes included */
    uint64_t held;         /* promised to this command's other workers on it, not allocated yet */
};

/* Under the book's lock: ask the device (the first time, this creates the process's CUDA
 * context), add up what the other slots on it hold, publish its total. */
/* What every worker of one command is given (a worker's own part: its slot, its thread). */
struct worker_job {
    const struct dse_space      *s;
    const char                  *dir;
    const struct dse_sweep_opts *o;
    const struct dse_sweep_plan *plan;
    double                       deadline; /* monotonic; 0: none */
    struct gpu_book             *book;     /* GPU workers: the command's table; NULL on the CPU */
    const char                  *cmd;      /* the command's token (dse_lease_me.cmd) */
};

/* ---- sweep_worker.c ------------------------------------------------------------------------ */

/* One line "dse sweep [name]: ..." to the log, written whole. */
void dse_worker_say(const struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int dse_worker_lease_free(struct worker *w, struct cand *c, struct dse_lease *l, int *have, const char **why);
const struct dse_rec *dse_worker_rec_of(void *arg, const char *id);
enum dse_status dse_worker_refresh(struct worker *w, struct dse_err *err);
int dse_worker_all_final(const struct worker *w);
void dse_worker_progress_text(const struct worker *w, int self, char *buf, int size);
enum dse_status dse_worker_try_decide(struct worker *w, int k, struct dse_err *err);
enum dse_status dse_worker_init(struct worker *w, const struct dse_space *s, const char *dir,
                                const struct dse_sweep_opts *o, const struct dse_sweep_plan *plan,
                                double deadline, struct dse_err *err);
void dse_worker_deinit(struct worker *w);
/* A CUDA error while training candidate id: 1 if it is the process's first (id is taken
 * for the cause), 0 if another worker's came first. */
int dse_worker_host_break(struct host *h, const char *id);
int dse_worker_host_broken(struct host *h);
int dse_worker_file_exists(const char *path);

/* ---- sweep_gpu.c --------------------------------------------------------------------------- */

struct gpu_book *dse_worker_book_new(const struct dse_sweep_opts *o, struct dse_err *err);
void dse_worker_book_free(struct gpu_book *b);
void dse_worker_book_lock(struct gpu_book *b);
void dse_worker_book_unlock(struct gpu_book *b);
enum dse_status dse_worker_gpu_look(struct worker *w, struct gpu_view *v, struct dse_err *err);
enum dse_status dse_worker_gpu_reserve(struct worker *w, int64_t need_bytes, struct gpu_view *v, int *ok,
                                       struct dse_err *err);
void dse_worker_gpu_unreserve(struct worker *w);
int dse_worker_gpu_never_anywhere(struct worker *w, int64_t need_bytes);
int64_t dse_worker_cand_estimate(struct worker *w, struct cand *c);

/* ---- sweep_ranks.c ------------------------------------------------------------------------- */

enum dse_status dse_worker_pretime_conv(const struct dse_net *net, const struct dse_train_opts *o, const char *path,
                                        struct dse_err *err);
void dse_worker_train_opts(const struct worker *w, struct dse_train_opts *o);
enum dse_status dse_worker_follow_send(struct dse_dist *d, uint64_t index, const struct dse_train_opts *o,
                                       struct dse_err *err);

/* ---- sweep_stretch.c ----------------------------------------------------------------------- */

int64_t dse_worker_saved_iter(const struct worker *w, const struct cand *c);
void dse_worker_prune_checkpoints(const struct worker *w, const char *id, int keep);
void dse_worker_let_go(struct worker *w, struct dse_lease *l);
enum dse_status dse_worker_commit(struct worker *w, struct cand *c, struct dse_lease *l, struct dse_err *err);
enum dse_status dse_worker_plan_supported(const struct dse_space *s, enum dse_sweep_halving halving, int epochs,
                                          const char *where, const char *who, struct dse_err *err);
int dse_worker_wants_measured(const struct dse_space *s);
enum dse_status dse_worker_train_stretch(struct worker *w, struct cand *c, struct dse_lease *l, int target,
                                         struct dse_err *err);

/* ---- sweep_loop.c -------------------------------------------------------------------------- */

enum dse_status dse_worker_run(const struct worker_job *j, struct host *h, int slot, int thread,
                               int *finished, char *name, int name_size, struct dse_err *err);

#endif
