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
/* Whether candidate c's current lease may be taken (dse_lease_free); *l gets it (*have = 1)
 * if it reads. One that exists but does not read (garbage, empty, a directory) is free
 * once this worker has seen it so for its own lease time (dse_lease_free_unreadable). */
int dse_worker_lease_free(struct worker *w, struct cand *c, struct dse_lease *l, int *have, const char **why);
/* The record of candidate id as last read (arg: the worker); NULL if unknown or unread. */
const struct dse_rec *dse_worker_rec_of(void *arg, const char *id);
/* Reread every candidate that is not final, the leases and the rung decisions. */
enum dse_status dse_worker_refresh(struct worker *w, struct dse_err *err);
/* 1 if every candidate is final (an evolution sweep: and its search has ended). */
int dse_worker_all_final(const struct worker *w);
/* "3 of 9 finished, 2 running, ETA 1m 10s" from the last dse_worker_refresh; self: this worker is
 * training one that was not counted then (its lease came after the refresh: not live; asha
 * refreshes after the claim, and then it was). */
void dse_worker_progress_text(const struct worker *w, int self, char *buf, int size);
/* Rung k can be decided when every candidate that went on from rung k - 1 (every unpruned
 * one for rung 0) has reached its epoch or ended (diverged, failed). The decision is a
 * function of those results only, so whichever worker writes it writes the same; the
 * file is created once (link), and everyone then reads it. */
enum dse_status dse_worker_try_decide(struct worker *w, int k, struct dse_err *err);
/* A worker of the sweep in dir, with its candidates read; dse_worker_deinit frees it. */
enum dse_status dse_worker_init(struct worker *w, const struct dse_space *s, const char *dir,
                                const struct dse_sweep_opts *o, const struct dse_sweep_plan *plan,
                                double deadline, struct dse_err *err);
void dse_worker_deinit(struct worker *w);
/* A CUDA error while training candidate id: 1 if it is the process's first (id is taken
 * for the cause), 0 if another worker's came first (this one most likely only met the
 * broken context). */
int dse_worker_host_break(struct host *h, const char *id);
/* 1 once a worker of this process has met a CUDA error (dse_worker_host_break). */
int dse_worker_host_broken(struct host *h);
/* 1 if path exists (stat). */
int dse_worker_file_exists(const char *path);

/* ---- sweep_gpu.c --------------------------------------------------------------------------- */

/* The command's GPU book, in shared memory for the processes it forks; NULL on failure. */
struct gpu_book *dse_worker_book_new(const struct dse_sweep_opts *o, struct dse_err *err);
void dse_worker_book_free(struct gpu_book *b);
void dse_worker_book_lock(struct gpu_book *b);
void dse_worker_book_unlock(struct gpu_book *b);
/* Its GPU as the worker sees it now (the first time, this creates the CUDA context). */
enum dse_status dse_worker_gpu_look(struct worker *w, struct gpu_view *v, struct dse_err *err);
/* Look again under the lock and, if need_bytes fits, promise it (*ok = 1): the other
 * workers of this command then count it as taken until this one has allocated. */
enum dse_status dse_worker_gpu_reserve(struct worker *w, int64_t need_bytes, struct gpu_view *v, int *ok,
                                       struct dse_err *err);
/* The promise is kept until the candidate's memory is allocated (its first iterations
 * ran) or its training ended. */
void dse_worker_gpu_unreserve(struct worker *w);
/* 1 if need_bytes is more than every GPU of this command has in all (each one's total
 * known): no worker of it can ever train the candidate. 0 while some GPU is not known
 * yet, or one is large enough (its workers will take it). */
int dse_worker_gpu_never_anywhere(struct worker *w, int64_t need_bytes);
/* c's training-memory estimate at the training batch (computed once); -1 if unknown. */
int64_t dse_worker_cand_estimate(struct worker *w, struct cand *c);

/* ---- sweep_ranks.c ------------------------------------------------------------------------- */

/* With --ranks-per-candidate P a rank's model takes its share of the batch (its run of the
 * batch's slices, engine/slices.h): the choices are timed for every size the ranks run, so
 * that every rank and every stretch uses the same strategies. */
enum dse_status dse_worker_pretime_conv(const struct dse_net *net, const struct dse_train_opts *o, const char *path,
                                        struct dse_err *err);
/* The engine's options of a training run of this worker: the space's recipe, the plan's
 * conv strategy and precision, the command's threads and checkpoint cadence. */
void dse_worker_train_opts(const struct worker *w, struct dse_train_opts *o);
/* Rank 0 tells its --ranks-per-candidate group what to train next (grid index, options). */
enum dse_status dse_worker_follow_send(struct dse_dist *d, uint64_t index, const struct dse_train_opts *o,
                                       struct dse_err *err);

/* ---- sweep_stretch.c ----------------------------------------------------------------------- */

/* The iteration of c's checkpoint within its next epoch (epoch-<n+1>.part.ckpt), 0 if
 * there is none or it does not read: how far the work saved inside an epoch has got. */
int64_t dse_worker_saved_iter(const struct worker *w, const struct cand *c);
/* Keep only the newest checkpoint at or below `keep` (the model to resume from, or the
 * trained model); older ones go, and so do temporary files a killed writer left. Only
 * inside the sweep directory: a checkpoints/<id> that is a link is left alone. */
void dse_worker_prune_checkpoints(const struct worker *w, const char *id, int keep);
/* Release the lease; a failure only delays others until it expires. */
void dse_worker_let_go(struct worker *w, struct dse_lease *l);
/* Write c's record under lease l if it is still this worker's (a lost lease: nothing). */
enum dse_status dse_worker_commit(struct worker *w, struct cand *c, struct dse_lease *l, struct dse_err *err);
/* What a plan may not combine with the space yet: halving (halving, not NONE) with
 * replicates or with evolution, and an epochs budget counted at other epochs per candidate
 * than the plan trains (epochs). where: "" or "DIR/plan.json" (prefixes the halving
 * messages); who: what asks for those epochs ("--budget 5e", or the plan file). */
enum dse_status dse_worker_plan_supported(const struct dse_space *s, enum dse_sweep_halving halving, int epochs,
                                          const char *where, const char *who, struct dse_err *err);
/* 1 if the space's search minimizes a measured cost (objective.def's MEASURED): the worker
 * that finishes a candidate measures it into the record. */
int dse_worker_wants_measured(const struct dse_space *s);
/* Train c from its newest checkpoint to `target` epochs (a rung, or R). Errors returned
 * are the worker's (disk, data); the candidate's own (a network the engine cannot run,
 * out of memory) mark it failed. */
enum dse_status dse_worker_train_stretch(struct worker *w, struct cand *c, struct dse_lease *l, int target,
                                         struct dse_err *err);

/* ---- sweep_loop.c -------------------------------------------------------------------------- */

/* One worker, on this thread: on the CPU (no book), or on the GPU of book's slot. thread:
 * 0 if it is its process's only worker, k >= 1 for worker k of several (its name, and
 * its leases', is then host:pid.k). name (may be NULL) gets its name. */
enum dse_status dse_worker_run(const struct worker_job *j, struct host *h, int slot, int thread,
                               int *finished, char *name, int name_size, struct dse_err *err);

#endif
