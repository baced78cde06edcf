/* sweep.h: `dse sweep`: every candidate of a space generated, costed and checked
 * against the constraints, recorded in a sweep directory built for many concurrent
 * writers (sweep/sweep.c), then trained by any number of workers that claim candidates with
 * leases (sweep/sweep_train.c), with `dse status` (sweep/sweep_status.c). docs/sweep-dir.md. */
#ifndef DSE_SWEEP_SWEEP_H
#define DSE_SWEEP_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#include "sweep/rank.h"
#include "sweep/record.h"
#include "sweep/space.h"
#include "engine/cuda/cuda.h"
#include "engine/dist.h"

struct dse_cost_totals; /* analysis/analysis.h */

struct dse_sweep_summary {
    uint64_t candidates, pruned, kept, skipped; /* skipped: the file existed, left alone */
};

/* Cost every candidate of s and create DIR/sweep.json, DIR/space.cfg and
 * DIR/candidates/<id>.json. Every candidate is built first: an infeasible one (a map
 * that shrinks to nothing) stops the sweep before anything is written. A DIR holding a
 * sweep of another space (another file hash) is refused; files that exist are never
 * replaced (the same space again only adds what is missing; training results stay).
 * Several processes may run this on the same DIR at once. progress (may be NULL) gets a
 * line now and then. */
enum dse_status dse_sweep_analytic(const struct dse_space *s, const char *dir, FILE *progress,
                                   struct dse_sweep_summary *sum, struct dse_err *err);

/* Create DIR/candidates/<id>.json of grid index k's replicate `replicate` (0 <= it <
 * train.replicates; its id: dse_space_rep_id) as the analytic sweep writes it, if it is
 * absent (*existed = 1 then: left alone). */
enum dse_status dse_sweep_candidate_create(const struct dse_space *s, const char *dir, uint64_t k, int replicate,
                                           int *existed, struct dse_err *err);

/* The analytic part of the candidate file of grid index k's replicate `replicate` (every
 * key before "status", the object left open; "replicate" among them where the space has
 * replicates > 1) into buf; *pruned = 1 if a constraint prunes it. */
enum dse_status dse_sweep_candidate_head(const struct dse_space *s, uint64_t k, int replicate, char *buf, int size,
                                         int *len, int *pruned, struct dse_err *err);

/* The "metaparams" object of grid index k's candidate file as JSON text, exactly as the
 * file holds it (malloc'd; NULL if out of memory): what dse export puts in a model's
 * metadata. */
char *dse_sweep_candidate_metaparams(const struct dse_space *s, uint64_t k);

/* ---- training sweeps (sweep/sweep_train.c, docs/sweep-dir.md) ------------------------------ */

/* How a sweep trains, fixed by its first worker in DIR/plan.json: every later worker
 * uses the same (results would not be comparable otherwise). */
struct dse_sweep_plan {
    int                 epochs;      /* R: the full schedule (the learning rate decays over it) */
    enum dse_sweep_halving halving;  /* NONE (0): every candidate to R; SH: synchronous successive
                                        halving; ASHA: asynchronous (promotions as results arrive) */
    int                 eta;         /* halving: the top 1/eta of a rung go on (>= 2) */
    int                 min_epochs;  /* halving: the first rung, r */
    enum dse_sweep_rank rank;        /* halving: how a rung is ranked */
    int                 conv;        /* DSE_ALGO_AUTO (timed once per candidate in fp32) or one
                                        strategy; CPU workers only (on a GPU cuDNN chooses, in
                                        bf16 the CPU's rule) */
    enum dse_cuda_math  precision;   /* conv and fc arithmetic: fp32, bf16 (GPUs, and CPUs with
                                        AVX512-BF16), tf32 or fp16 (GPUs only); all but fp32
                                        change results */
    int                 nondeterministic; /* GPUs: cuDNN may use algorithms that add in a varying
                                        order (--algos any): faster, not bit-identical */
    int                 n_rungs;     /* rungs at r eta^k epochs below R */
    int                 rungs[DSE_SWEEP_RUNGS_MAX];
};

#define DSE_SWEEP_GPUS_MAX 64

#define DSE_SWEEP_COMMAND_ID_MAX 32 /* --command-id: at most this many of [A-Za-z0-9._-] */

struct dse_sweep_opts {
    struct dse_sweep_plan plan;      /* the fields below say which ones the user gave */
    int         set_epochs, set_halving, set_eta, set_min_epochs, set_rank, set_conv, set_precision, set_algos;
    int         workers;             /* worker processes started by this command (default 2); CPU only */
    int         n_gpus;              /* 0: train on the CPU; else on CUDA devices gpus[0 .. n_gpus) */
    int         gpus[DSE_SWEEP_GPUS_MAX]; /* device indices as CUDA numbers them for this process
                                        (after CUDA_VISIBLE_DEVICES), distinct */
    int         gpus_all;            /* --gpus all: every device; dse_sweep_gpus_check fills gpus */
    int         per_gpu;             /* workers per GPU; 0: auto (DSE_SWEEP_PER_GPU_AUTO). A GPU's
                                        workers are threads of one process (one CUDA context:
                                        their kernels run at once, as they would under MPS) */
    int         per_process;         /* CPU: up to this many workers share a process as threads,
                                        as a GPU's do; 0 or 1 (the default): a process each. No
                                        CLI option: for tests of that structure without a GPU */
    int         max_oom;             /* a candidate that runs out of device memory this many times
                                        in a row is marked failed; before that it is re-queued */
    int         threads;             /* the engine's threads per worker (default 1) */
    double      lease_s;             /* a lease's time to live; renewed every lease_s / 10 */
    double      hours;               /* > 0: this command stops after that long (time budget) */
    double      ckpt_every_s;        /* CPU workers: also checkpoint within an epoch this often
                                        (dse_train_opts.ckpt_every_s; default 300), so that a killed
                                        worker's successor resumes within the epoch; 0: not by time */
    int         ckpt_every_steps;    /* ... or every this many steps (0: not by steps) */
    double      progress_every_s;    /* a worker's progress line within an epoch once this many
                                        seconds have passed since its last line (default
                                        DSE_TRAIN_PROGRESS_EVERY_S); 0: epoch lines only */
    int         max_crashes;         /* a candidate whose workers die this many times in a row
                                        without finishing an epoch is marked failed */
    const char *command_id;          /* --command-id: the command's token in its leases (crashes
                                        are counted per command); NULL: a random one */
    const char *data_root;           /* NULL: DSE_DATA_ROOT */
    FILE       *log;                 /* progress lines; NULL: quiet */
    struct dse_dist *dist;           /* --ranks-per-candidate (issue #17): NULL or a group of one:
                                        alone. Else this process is rank 0 of a group that trains
                                        each candidate data-parallel (engine/dist.h): its one CPU
                                        worker claims, records and checkpoints; before every
                                        training run it tells the other ranks, which run
                                        dse_sweep_follow, what to train */
};

/* workers 2, threads 1, lease 60 s, no time budget, max_crashes 3, the CPU (no GPUs),
 * per_gpu auto, max_oom 4; the plan from the space's train section, no halving, eta 3,
 * min_epochs 1, Pareto rank, conv auto, fp32. */
void dse_sweep_opts_default(struct dse_sweep_opts *o);

/* With GPUs (o->n_gpus or o->gpus_all): check in a short-lived child process (this one
 * must not initialize CUDA before it forks the workers: CUDA does not survive fork())
 * that this build has the CUDA backend and that every listed device exists, fill
 * o->gpus for --gpus all, and write one line of facts per device to log (may be NULL).
 * DSE_ERR_UNSUPPORTED: built without CUDA, or no device (the message says why);
 * DSE_ERR_CONFIG: an index this process does not see (the message names
 * CUDA_VISIBLE_DEVICES). Without GPUs: DSE_OK, nothing done. */
enum dse_status dse_sweep_gpus_check(struct dse_sweep_opts *o, FILE *log, struct dse_err *err);

/* Train every unpruned candidate of the sweep in dir (made by dse_sweep_analytic for s)
 * with o->workers worker processes (1: this one), or o->per_gpu workers on each of
 * o->gpus (one process per GPU, each worker a thread of it; this process never touches
 * CUDA). Safe to run any number of times at once, on any machines sharing dir:
 * candidates are claimed with leases, a dead worker's candidate resumes from its last
 * checkpoint. Returns when no candidate is left to train (or the time budget ends).
 * *finished = 1 if every candidate has a final status. */
enum dse_status dse_sweep_train(const struct dse_space *s, const char *dir, const struct dse_sweep_opts *o,
                                int *finished, struct dse_err *err);

/* Ranks 1.. of a --ranks-per-candidate group (o->dist): train, data-parallel with rank 0,
 * what rank 0's worker trains, until dse_sweep_train on rank 0 returns (it tells them).
 * They write nothing. A failure of a run's setup (data, network, checkpoint) is every rank's
 * and rank 0 records it as one worker does; a failure of one rank in the steps ends the group
 * (dse_dist_abort): rank 0's lease then lapses and the candidate is taken over as after kill -9. */
enum dse_status dse_sweep_follow(const struct dse_space *s, const struct dse_sweep_opts *o, struct dse_err *err);

/* Fill o->plan's rungs from its other fields; DSE_ERR_CONFIG if halving has no rung
 * below the budget. */
enum dse_status dse_sweep_plan_rungs(struct dse_sweep_plan *p, struct dse_err *err);

/* `dse status DIR`: counts (done, stopped, diverged, failed, running, waiting, pending),
 * the candidates being trained and by whom, epochs spent against full training, ETA; with
 * json, one line holding a JSON object instead (docs/sweep-dir.md). *finished (may be
 * NULL) = 1 when the sweep has been trained and every unpruned candidate is final. */
enum dse_status dse_sweep_status(FILE *f, const char *dir, int json, int *finished, struct dse_err *err);

/* ---- placing candidates on shared GPUs (docs/sweep-dir.md, "Sweeps on shared GPUs") ---- */

/* Device memory a candidate is given beyond the analyzer's estimate: a fixed margin for
 * the cuDNN and cuBLAS handles and cuDNN's conv workspace (at most 512 MiB by default,
 * docs/gpu.md) plus a share of the estimate for what it leaves out (op state such as
 * pooling argmax and dropout masks, alignment). The worker's own CUDA context is already
 * in use when it looks at free memory. */
#define DSE_SWEEP_GPU_MARGIN_BYTES ((int64_t)768 << 20)
#define DSE_SWEEP_GPU_MARGIN_PCT   10
/* --per-gpu auto: at most this many workers per GPU (and no more than the CPU cores per
 * GPU, nor the candidates); each claims only what fits in the memory free at the time. */
#define DSE_SWEEP_PER_GPU_AUTO     8

enum dse_gpu_fit { DSE_GPU_FITS = 0, DSE_GPU_WAIT, DSE_GPU_NEVER };

/* Device memory to ask for a candidate whose training estimate (at the training batch)
 * is estimate_bytes, after oom_streak out-of-memory failures in a row: each failure adds
 * half the estimate again, so an estimate that is too low grows until the candidate
 * fits (or can never fit):  estimate x (100 + PCT + 50 x oom_streak) / 100 + MARGIN.
 * An unknown estimate (< 0) counts as 0. */
int64_t dse_sweep_gpu_need(int64_t estimate_bytes, int oom_streak);

/* Whether a candidate that needs need_bytes may be started now on a device with
 * free_bytes free (as cudaMemGetInfo reports it: other processes' memory, other users'
 * included, is taken off) and total_bytes in all, while held_bytes are promised to this
 * command's other workers on it that have claimed a candidate and not allocated yet:
 * FITS if need <= free - held; NEVER if need > total (it cannot fit even on the empty
 * device); WAIT otherwise. Pure: no device is asked. */
enum dse_gpu_fit dse_sweep_gpu_fit(uint64_t free_bytes, uint64_t total_bytes, uint64_t held_bytes,
                                   int64_t need_bytes);

/* ---- the door -------------------------------------------------------------------------------
 * This header is the only one of sweep/ that files outside it include (tests/layering.sh
 * checks it; tests may include the floors). Below it, the floors of sweep/, bottom up, each
 * including only headers of its floor or below (tests/layering.sh): the record and the
 * formats (record.h with record.def: a candidate record, its one writer and one reader;
 * json_read.h, objective.h) -> the space (space.h, prefilter.h) -> the search (evolve.h,
 * bo.h, rank.h) -> the directory protocol (lease.h, search.h: the search log, sweep_impl.h: plan,
 * rungs, ASHA, tallies, sweep_read.h: the directory read strictly, slurm.h) -> the workers
 * (worker_impl.h, private to sweep/). */
#include "sweep/json_read.h"
#include "sweep/lease.h"
#include "sweep/prefilter.h"
#include "sweep/search.h"
#include "sweep/slurm.h"
#ifndef DSE_SWEEP_SWEEP_IMPL_H /* not while sweep_impl.h, which needs this header, is read */
#include "sweep/sweep_impl.h"
#include "sweep/sweep_read.h"
#endif

#endif
