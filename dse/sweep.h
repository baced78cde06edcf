/* sweep.h: `dse sweep`: every candidate of a space generated, costed and checked
 * against the constraints, recorded in a sweep directory built for many concurrent
 * writers (dse/sweep.c), then trained by any number of workers that claim candidates with
 * leases (dse/sweep_train.c), with `dse status` (dse/sweep_status.c). docs/sweep-dir.md. */
#ifndef DSE_CLI_SWEEP_H
#define DSE_CLI_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#include "dse/space.h"

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

/* The analytic part of grid index k's candidate file (every key before "status", the
 * object left open) into buf; *pruned = 1 if a constraint prunes it. */
enum dse_status dse_sweep_candidate_head(const struct dse_space *s, uint64_t k, char *buf, int size, int *len,
                                         int *pruned, struct dse_err *err);

/* ---- training sweeps (dse/sweep_train.c, docs/sweep-dir.md) ------------------------------ */

#define DSE_SWEEP_RUNGS_MAX 32

enum dse_sweep_rank { DSE_SWEEP_RANK_PARETO = 0, DSE_SWEEP_RANK_TOP1 };

/* How a sweep trains, fixed by its first worker in DIR/plan.json: every later worker
 * uses the same (results would not be comparable otherwise). */
struct dse_sweep_plan {
    int                 epochs;      /* R: the full schedule (the learning rate decays over it) */
    int                 halving;     /* 0: every candidate to R; 1: synchronous successive halving */
    int                 eta;         /* halving: the top 1/eta of a rung go on (>= 2) */
    int                 min_epochs;  /* halving: the first rung, r */
    enum dse_sweep_rank rank;        /* halving: how a rung is ranked */
    int                 conv;        /* DSE_ALGO_AUTO (timed once per candidate) or one strategy */
    int                 n_rungs;     /* rungs at r eta^k epochs below R */
    int                 rungs[DSE_SWEEP_RUNGS_MAX];
};

struct dse_sweep_opts {
    struct dse_sweep_plan plan;      /* the fields below say which ones the user gave */
    int         set_epochs, set_halving, set_eta, set_min_epochs, set_rank, set_conv;
    int         workers;             /* worker processes started by this command (default 2) */
    int         threads;             /* the engine's threads per worker (default 1) */
    double      lease_s;             /* a lease's time to live; renewed every lease_s / 10 */
    double      hours;               /* > 0: this command stops after that long (time budget) */
    int         max_crashes;         /* a candidate whose workers die this many times in a row
                                        without finishing an epoch is marked failed */
    const char *data_root;           /* NULL: DSE_DATA_ROOT */
    FILE       *log;                 /* progress lines; NULL: quiet */
};

/* workers 2, threads 1, lease 60 s, no time budget, max_crashes 3; the plan from the
 * space's train section, no halving, eta 3, min_epochs 1, Pareto rank, conv auto. */
void dse_sweep_opts_default(struct dse_sweep_opts *o);

/* Train every unpruned candidate of the sweep in dir (made by dse_sweep_analytic for s)
 * with o->workers processes (1: this one). Safe to run any number of times at once, on
 * any machines sharing dir: candidates are claimed with leases, a dead worker's
 * candidate resumes from its last checkpoint. Returns when no candidate is left to train
 * (or the time budget ends). *finished = 1 if every candidate has a final status. */
enum dse_status dse_sweep_train(const struct dse_space *s, const char *dir, const struct dse_sweep_opts *o,
                                int *finished, struct dse_err *err);

/* Fill o->plan's rungs from its other fields; DSE_ERR_CONFIG if halving has no rung
 * below the budget. */
enum dse_status dse_sweep_plan_rungs(struct dse_sweep_plan *p, struct dse_err *err);

/* `dse status DIR`: counts (done, stopped, diverged, failed, running, waiting, pending),
 * the candidates being trained and by whom, epochs spent against full training, ETA. */
enum dse_status dse_sweep_status(FILE *f, const char *dir, struct dse_err *err);

/* Successive halving's ranking of one rung, best first, written to order[] (indices
 * into the arrays). TOP1: by top-1, then smaller model, then id. PARETO: by Pareto rank
 * on (top-1 up, model size down), within a rank by NSGA-II crowding distance (the front's
 * two ends first), then top-1, model size, id. Deterministic for equal inputs. */
void dse_sweep_rank_rung(int n, const double *top1, const int64_t *model_bytes, const char *const *ids,
                         enum dse_sweep_rank rank, int *order, int *pareto_rank);

/* How many of n go on at a rung: max(1, floor(n / eta)), 0 if n is 0. */
int dse_sweep_keep(int n, int eta);

#endif
