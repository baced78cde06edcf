/* sweep_impl.h: the directory floor of sweep/ (docs/architecture.md, "sweep/ in floors"),
 * what sweep/sweep_rec.c, sweep/sweep_train.c and sweep/sweep_status.c share: a record
 * written back into its directory (the record itself: sweep/record.h), the sweep's plan and
 * its rung decisions, ASHA, a tally of a sweep's progress and a candidate's next action. */
#ifndef DSE_SWEEP_SWEEP_IMPL_H
#define DSE_SWEEP_SWEEP_IMPL_H

#include <stdint.h>
#include <stdio.h>

#include "engine/train.h"
#include "sweep/lease.h"
#include "sweep/record.h"
#include "sweep/space.h"
#include "sweep/sweep.h"

/* Replace DIR/candidates/<id>.json (atomic rename) with r, its analytic part (record.def's
 * HEAD keys) recomputed from the space (grid index r->index, replicate r->replicate) into r,
 * after bringing r's summary keys up to date with its epochs and status. The caller holds
 * the lease. */
enum dse_status dse_rec_write(const char *dir, const struct dse_space *s, struct dse_rec *r, struct dse_err *err);

/* The text of a candidate file as the analytic sweep creates it (sweep/candidate.c): the
 * analytic part of grid index `index`'s replicate `replicate` (id, metaparameters mp, costs
 * one, the training-memory estimate train_mem at train_batch, the compressed-size estimate
 * est_compressed: written in a space with a compress section), then "status" (pruned if
 * pruned_by is non-NULL, else pending), "pruned_by", "top1" and "top5". Its length (as
 * snprintf's: buf holds at most size - 1 bytes of it); -1 if out of memory. */
int dse_sweep_candidate_text(char *buf, int size, const struct dse_space *s, const char *id, uint64_t index,
                             int replicate, const struct dse_mp *mp, const struct dse_cost_totals *one,
                             int64_t train_mem, int train_batch, int64_t est_compressed, const char *pruned_by);

/* ---- plan and rungs ---------------------------------------------------------------------- */

/* DIR/plan.json. *missing = 1 (and DSE_OK) if there is none yet. */
enum dse_status dse_plan_read(const char *dir, struct dse_sweep_plan *p, int *missing, struct dse_err *err);
/* Create DIR/plan.json if absent; *existed = 1 if another worker made it first. */
enum dse_status dse_plan_create(const char *dir, const struct dse_sweep_plan *p, const char *by, int *existed,
                                struct dse_err *err);
/* "5 epochs per candidate; successive halving (eta 3) with rungs at 1, 3 epochs, ranked by ..." */
void dse_plan_describe(const struct dse_sweep_plan *p, char *buf, int size);

/* One rung's decision. SH: DIR/rungs/rung-<k>.json, written once. ASHA (sweep/asha.c): the
 * promotions made so far (DIR/rungs/asha-<k>/<id>, one create-only file each), the
 * candidates stopped there, and what the records say now: decided = closed (no candidate
 * can reach the rung any more), promotable = in the rung's top quota and not promoted yet. */
struct dse_rung {
    int    decided;
    int    epoch;
    int    n_promoted, n_stopped, n_out;
    char (*promoted)[DSE_ID_SIZE], (*stopped)[DSE_ID_SIZE];
    int    n_reached, n_promotable;           /* ASHA */
    char (*promotable)[DSE_ID_SIZE];          /* ASHA */
    int    n_gone;                            /* ASHA with replicates, rungs[0] only (the sweep's, not
                                                 one rung's): the architectures that go no further, sorted
                                                 (dse_asha_gone), and the record that ended each */
    char (*gone)[DSE_ID_SIZE], (*gone_by)[DSE_ID_SIZE];
};

void dse_rung_deinit(struct dse_rung *r);
int  dse_rung_promoted(const struct dse_rung *r, const char *id);
enum dse_status dse_rung_read(const char *dir, int k, struct dse_rung *r, int *missing, struct dse_err *err);

/* Every rung of plan p as far as it stands: SH, the decisions written (up to the first
 * missing one); ASHA, dse_asha_rungs. recs[n] (pointers) are the sweep's candidates (every
 * record, replicates included), per the records each architecture has (train.replicates). */
enum dse_status dse_rungs_load(const char *dir, const struct dse_sweep_plan *p, const struct dse_rec *const *recs,
                               int n, int per, struct dse_rung *rungs, struct dse_err *err);

/* ---- asynchronous successive halving (sweep/asha.c, docs/sweep-dir.md) ------------------- */

/* The architecture a candidate id names at a rung: the id without a replicate's suffix
 * (train.replicates = N: an architecture's N records are ranked by their mean top-1 and are
 * promoted, or stopped, together; the promotion file is named by it). */
void dse_asha_arch(const char *id, char out[DSE_ID_SIZE]);

/* An architecture's top-1 at a rung of `epoch` epochs from its n records r[] in replicate
 * order: their mean (one record's own value when n is 1); NaN unless every one has a finite
 * top-1 there. What asha ranks and bo's rung lines record (sweep/search.c). */
double dse_asha_rung_top1(const struct dse_rec *const *r, int n, int epoch);


/* ASHA's rungs from DIR/rungs/asha-<k>/ and the records recs[n] (per of them an
 * architecture): each rung's promotions made, candidates reached and stopped there, whether
 * it is closed (rung 0: every unpruned candidate has reached it or ended; rung k: rung k - 1
 * is closed, none of it is still promotable, and every candidate promoted from it has
 * reached rung k or ended) and its promotable candidates; with replicates, the architectures
 * gone (dse_asha_gone). An architecture reaches a rung when all per records have a result
 * there and is promoted or stopped as one (docs/sweep-dir.md). */
enum dse_status dse_asha_rungs(const char *dir, const struct dse_sweep_plan *p, const struct dse_rec *const *recs,
                               int n, int per, struct dse_rung *rungs, struct dse_err *err);

/* With replicates: the record that ended architecture arch (stopped at a rung, diverged, or
 * failed for good: not for want of a worker that lived), after which its other records stop at the
 * next rung they come to, without training to it, and it is promoted no more (the final
 * stretch after the last rung goes on: no decision is left to make there); NULL if none did.
 * rungs as dse_asha_rungs made them. */
const char *dse_asha_gone(const struct dse_rung *rungs, const char *arch);

/* Promote candidate r at rung k: create DIR/rungs/asha-<k>/<id> once (link(): of any number of
 * workers exactly one creates it; a promotion once made stands), holding the rung's ranking
 * as this worker saw it in recs[n] (the justification) and `by` (the worker). *existed = 1
 * if it was there already. The caller holds r's lease and has checked that r is promotable. */
enum dse_status dse_asha_promote(const char *dir, const struct dse_sweep_plan *p, int k, const struct dse_rec *r,
                                 const struct dse_rec *const *recs, int n, int per, const struct dse_rung *rungs,
                                 const char *by, int *existed, struct dse_err *err);

/* ---- progress ------------------------------------------------------------------------------ */

/* Counts over a sweep's candidates, for progress lines and dse status. */
struct dse_tally {
    int    n, pruned, by_status[DSE_REC_COUNT];
    int    running, waiting;      /* waiting: paused at a rung whose decision is not made yet */
    int    stopped_at[DSE_SWEEP_RUNGS_MAX];
    int    waiting_at[DSE_SWEEP_RUNGS_MAX]; /* waiting, by the rung it is paused at */
    int64_t epochs_done;          /* epochs with results, over all candidates */
    int64_t epochs_full;          /* unpruned candidates x R */
    double  epochs_planned;       /* with halving, the expected total */
    double  seconds;              /* sum of the recorded epochs' seconds */
    double  seconds_full;         /* each candidate's mean epoch time x R, summed (estimate) */
    int     timed;                /* epochs with a time */
    double  flop_epochs_timed;    /* sum over timed epochs of their candidate's forward FLOPs per image */
    double  flop_epochs_left;     /* the same over the epochs left (expected, with halving); 0: a FLOPs unknown */
};

/* recs[n]; rungs[plan->n_rungs] as far as decided; running[i] = 1 if candidate i has a live lease. */
void dse_tally_make(struct dse_tally *t, const struct dse_rec *recs, int n, const struct dse_sweep_plan *p,
                    const struct dse_rung *rungs, const int *running);
/* Seconds left, estimated: the work left in FLOP-epochs (each epoch left weighted by its
 * candidate's forward FLOPs, as the analyzer counts them) x the seconds per FLOP-epoch the
 * timed epochs took, / max(1, running workers); where a candidate's FLOPs are unknown, epochs
 * left x the mean epoch time. -1 until an epoch has been timed (no guess). */
double dse_tally_eta(const struct dse_tally *t);
/* "1h 02m", "3m 10s", "12 s" */
void dse_fmt_duration(char *buf, int size, double s);

/* The next thing to do for a candidate. */
enum dse_action { DSE_ACT_NONE = 0, DSE_ACT_WAIT, DSE_ACT_TRAIN, DSE_ACT_STOP, DSE_ACT_PROMOTE };
/* From its record and the rung decisions so far: TRAIN to *target epochs, STOP at rung
 * *rung, WAIT for a rung decision (*rung: the rung it is paused at), PROMOTE (ASHA: it is
 * promotable at rung *rung; promote it, then train to *target), or NONE (final). */
enum dse_action dse_sweep_next(const struct dse_rec *r, const struct dse_sweep_plan *p, const struct dse_rung *rungs,
                               int *target, int *rung);

#endif
