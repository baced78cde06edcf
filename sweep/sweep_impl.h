/* sweep_impl.h: what sweep/sweep_rec.c, sweep/sweep_train.c and sweep/sweep_status.c share:
 * a candidate record (docs/sweep-dir.md; its keys: sweep/record.def), the sweep's
 * plan and its rung decisions, and a tally of a sweep's progress. */
#ifndef DSE_SWEEP_SWEEP_IMPL_H
#define DSE_SWEEP_SWEEP_IMPL_H

#include <stdint.h>
#include <stdio.h>

#include "engine/train.h"
#include "sweep/lease.h"
#include "sweep/space.h"
#include "sweep/sweep.h"

/* A candidate's statuses, each once, with the name candidate files and reports use, in
 * the reports' order. RUNNING is never written by dse: dse status and dse report show a
 * pending candidate whose lease is alive so (dse_rec_read_path reads a file that says
 * running as pending; dse report, which only shows, keeps it). */
#define DSE_REC_STATUSES(X) \
    X(PENDING,  "pending")  \
    X(PRUNED,   "pruned")   \
    X(RUNNING,  "running")  \
    X(DONE,     "done")     \
    X(DIVERGED, "diverged") \
    X(FAILED,   "failed")   \
    X(STOPPED,  "stopped")

enum dse_rec_status {
#define DSE_REC_ENUM(e, name) DSE_REC_##e,
    DSE_REC_STATUSES(DSE_REC_ENUM)
#undef DSE_REC_ENUM
    DSE_REC_COUNT
};

const char *dse_rec_status_str(enum dse_rec_status s);
/* The status named s; -1 if none is. */
int dse_rec_status_from_str(const char *s);

struct dse_json;

/* One epoch's results are engine/train.h's struct dse_epoch_result: the keys and formats
 * of engine/epoch.def. */

/* An epoch whose results are all unknown. */
struct dse_epoch_result dse_rec_epoch_unknown(void);
/* {"epoch": epoch, <epoch.def's keys>} as one JSON object on one line: a candidate
 * record's per_epoch entries and dse train --json's. */
void dse_rec_epoch_write(FILE *f, int epoch, const struct dse_epoch_result *p);
/* One "per_epoch" entry read back (absent keys: unknown). */
struct dse_epoch_result dse_rec_epoch_read(const struct dse_json *o);

#define DSE_REC_ATTEMPTS_MAX 32 /* the last ones are kept; attempts_total counts them all */

/* One stretch of training of a candidate by one worker under one lease. */
struct dse_rec_attempt {
    char    worker[96];     /* host:pid */
    int64_t lease_gen;
    int     threads;        /* the engine's threads: results are bit-identical for equal counts */
    char    device[16];     /* "cpu" or "cuda:N" (N as the worker's process numbered it); "" unknown */
    char    precision[8];   /* "fp32" or "tf32"; "" unknown (files written before GPUs) */
    int     from_epoch, to_epoch;
    double  seconds;
    char    end[16];        /* "paused", "done", "diverged", "failed", "oom", "budget"; "" while
                               training (or cut short: its worker died) */
    char    note[240];      /* "" or why it ended so, e.g. "out of memory on cuda:0 with ..." */
};

/* A candidate record: every key of sweep/record.def, as fields of the same names (the kind
 * gives the C type). */
#define DSE_REC_DECL_ID(field, hi)         char field[DSE_ID_SIZE];
#define DSE_REC_DECL_INDEX(field, hi)      int64_t field;
#define DSE_REC_DECL_COUNT(field, hi)      int64_t field;
#define DSE_REC_DECL_MEM(field, hi)        int64_t field;
#define DSE_REC_DECL_REPLICATE(field, hi)  int field;
#define DSE_REC_DECL_METAPARAMS(field, hi) const char *field;
#define DSE_REC_DECL_MB(field, hi)         /* model_bytes' */
#define DSE_REC_DECL_MIB(field, hi)        /* model_bytes' */
#define DSE_REC_DECL_BATCH(field, hi)      int field;
#define DSE_REC_DECL_STATUS(field, hi)     enum dse_rec_status field;
#define DSE_REC_DECL_STR(field, hi)        char field[(hi) + 1];
#define DSE_REC_DECL_FLOAT(field, hi)      double field;
#define DSE_REC_DECL_FIXED3(field, hi)     double field;
#define DSE_REC_DECL_FIXED1(field, hi)     double field;
#define DSE_REC_DECL_INT(field, hi)        int field;
#define DSE_REC_DECL_INT64(field, hi)      int64_t field;
#define DSE_REC_DECL_UINT64(field, hi)     uint64_t field;
#define DSE_REC_DECL_EPOCHS(field, hi)     /* ep, n_epochs, cap_epochs: below */
#define DSE_REC_DECL_ATTEMPTS(field, hi)   /* att, n_att: below */
struct dse_rec {
#define DSE_REC(key, field, kind, absent, lo, hi, line, when, file, reports) DSE_REC_DECL_##kind(field, hi)
#include "sweep/record.def"
#undef DSE_REC
    int                      replicated;   /* record.def's REPLICATED: its space has replicates > 1 */
    struct dse_epoch_result *ep;           /* "per_epoch": [n_epochs] (epochs with results), owned */
    int                      n_epochs, cap_epochs;
    struct dse_rec_attempt  *att;          /* "attempts": [n_att], room for DSE_REC_ATTEMPTS_MAX; owned */
    int                      n_att;
};

/* Every key absent (record.def's absent values). */
void dse_rec_init(struct dse_rec *r);
/* The one top-1 of a record: its last epoch's once it is done or stopped at a rung, NaN
 * otherwise (before any epoch, or while pending, diverged, failed). dse_rec_write writes it
 * as "top1"; dse export --best reports it. */
double dse_rec_top1(const struct dse_rec *r);
void dse_rec_deinit(struct dse_rec *r);
int  dse_rec_final(const struct dse_rec *r);

/* Read DIR/candidates/<id>.json with the one strict reader (dse_rec_from_json); a record
 * that says running (never written by dse) reads as pending. */
enum dse_status dse_rec_read(const char *dir, const char *id, struct dse_rec *r, struct dse_err *err);
/* Read a candidate file by path (dse status lists the directory). */
enum dse_status dse_rec_read_path(const char *path, struct dse_rec *r, struct dse_err *err);

/* Start an attempt (the oldest is dropped when DSE_REC_ATTEMPTS_MAX are kept) at epoch
 * `from`; returns it, or NULL if out of memory. attempts_total counts it. */
struct dse_rec_attempt *dse_rec_push_attempt(struct dse_rec *r, const char *worker, int64_t lease_gen, int threads,
                                             const char *device, const char *precision, int from);

/* Out-of-memory attempts in a row at the end of r's attempts: counted back from the last
 * one while they ended "oom", stopping after one that finished an epoch (progress
 * resets the count, as it does for --max-crashes). */
int dse_rec_oom_streak(const struct dse_rec *r);

/* The last attempt of r (there must be one) ran out of memory on `device` with free_mib
 * free when the candidate was claimed, where it was given need_mib; why is the engine's
 * message. The attempt ends "oom" with a note saying so. If that makes max_oom in a row
 * (dse_rec_oom_streak), r is failed, failed_why naming the count, the memory and why;
 * else it stays pending: re-queued, and whichever worker claims it next resumes it from
 * its newest checkpoint. Returns 1 if r was failed. */
int dse_rec_oom(struct dse_rec *r, const char *device, double free_mib, double need_mib, const char *why,
                int max_oom);

/* Set epoch e (0-based) and make n_epochs e + 1. */
enum dse_status dse_rec_set_epoch(struct dse_rec *r, int e, const struct dse_epoch_result *v, struct dse_err *err);

/* The attempts of a record's "attempts" array (NULL or not an array: none), the first
 * DSE_REC_ATTEMPTS_MAX of them; attempts_total becomes at least their count. */
enum dse_status dse_rec_attempts_read(struct dse_rec *r, const struct dse_json *v, struct dse_err *err);

/* Replace DIR/candidates/<id>.json (atomic rename) with r, its analytic part (record.def's
 * HEAD keys) recomputed from the space (grid index r->index, replicate r->replicate) into r,
 * after bringing r's summary keys up to date with its epochs and status. The caller holds
 * the lease. */
enum dse_status dse_rec_write(const char *dir, const struct dse_space *s, struct dse_rec *r, struct dse_err *err);

/* Which keys dse_rec_put writes (record.def's `file`): HEAD, the analytic part, the object
 * left open after its last key (no ",\n"); CREATED, the file as the analytic sweep creates
 * it (HEAD and BOTH keys); TRAINED, every key, after bringing r's summary keys up to date. */
enum dse_rec_part { DSE_REC_PUT_HEAD, DSE_REC_PUT_CREATED, DSE_REC_PUT_TRAINED };

/* The one writer of a candidate file (sweep/sweep_rec.c): r's sweep/record.def keys of
 * `part`, and the closing brace unless part is HEAD, to f. r->metaparams is the text of the
 * metaparams object's members (sweep/candidate.c renders it from the space). */
void dse_rec_put(FILE *f, struct dse_rec *r, enum dse_rec_part part);

/* The text of a candidate file as the analytic sweep creates it (sweep/candidate.c): the
 * analytic part of grid index `index`'s replicate `replicate` (id, metaparameters mp, costs
 * one, the training-memory estimate train_mem at train_batch), then "status" (pruned if
 * pruned_by is non-NULL, else pending), "pruned_by", "top1" and "top5". Its length (as
 * snprintf's: buf holds at most size - 1 bytes of it); -1 if out of memory. */
int dse_sweep_candidate_text(char *buf, int size, const struct dse_space *s, const char *id, uint64_t index,
                             int replicate, const struct dse_mp *mp, const struct dse_cost_totals *one,
                             int64_t train_mem, int train_batch, const char *pruned_by);

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
};

void dse_rung_deinit(struct dse_rung *r);
int  dse_rung_promoted(const struct dse_rung *r, const char *id);
enum dse_status dse_rung_read(const char *dir, int k, struct dse_rung *r, int *missing, struct dse_err *err);

/* Every rung of plan p as far as it stands: SH, the decisions written (up to the first
 * missing one); ASHA, dse_asha_rungs. recs[n] (pointers) are the sweep's candidates. */
enum dse_status dse_rungs_load(const char *dir, const struct dse_sweep_plan *p, const struct dse_rec *const *recs,
                               int n, struct dse_rung *rungs, struct dse_err *err);

/* ---- asynchronous successive halving (sweep/asha.c, docs/sweep-dir.md) ------------------- */


/* ASHA's rungs from DIR/rungs/asha-<k>/ and the records recs[n]: each rung's promotions
 * made, candidates reached and stopped there, whether it is closed (rung 0: every unpruned
 * candidate has reached it or ended; rung k: rung k - 1 is closed, none of it is still
 * promotable, and every candidate promoted from it has reached rung k or ended) and its
 * promotable candidates. */
enum dse_status dse_asha_rungs(const char *dir, const struct dse_sweep_plan *p, const struct dse_rec *const *recs,
                               int n, struct dse_rung *rungs, struct dse_err *err);

/* Promote candidate r at rung k: create DIR/rungs/asha-<k>/<id> once (link(): of any number of
 * workers exactly one creates it; a promotion once made stands), holding the rung's ranking
 * as this worker saw it in recs[n] (the justification) and `by` (the worker). *existed = 1
 * if it was there already. The caller holds r's lease and has checked that r is promotable. */
enum dse_status dse_asha_promote(const char *dir, const struct dse_sweep_plan *p, int k, const struct dse_rec *r,
                                 const struct dse_rec *const *recs, int n, const struct dse_rung *rungs,
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
