/* record.h: a candidate record, DIR/candidates/<id>.json (docs/sweep-dir.md): its keys
 * (sweep/record.def), statuses, epochs and attempts, the one writer and the one strict
 * reader (sweep/record.c). The bottom floor of sweep/ with the JSON reader (the floors:
 * docs/architecture.md, "sweep/ in floors"): it includes no sweep header but json_read.h,
 * so the space, the search, the directory protocol and the workers all stand on it. */
#ifndef DSE_SWEEP_RECORD_H
#define DSE_SWEEP_RECORD_H

#include <stdint.h>
#include <stdio.h>

#include "engine/train.h"
#include "sweep/json_read.h"

#define DSE_ID_SIZE              21 /* a candidate id: "c" + 16 hex digits (space.h, DSE_ID_BASE_LEN), and
                                       "r" + a replicate's 1 or 2 digits + NUL */
#define DSE_TRAIN_REPLICATES_MAX 64 /* records of one grid index (a space's train.replicates) */
#define DSE_SWEEP_RUNGS_MAX      32 /* rungs of a training sweep's plan (sweep.h) */

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
    int                      replicated;   /* record.def's REPLICATED: its space has replicates > 1 (set
                                               with the analytic part, sweep/candidate.c; not read) */
    int                      compress;     /* record.def's COMPRESS: its space has a compress section (set
                                               with the analytic part, sweep/candidate.c; not read) */
    struct dse_epoch_result *ep;           /* "per_epoch": [n_epochs] (epochs with results), owned */
    int                      n_epochs, cap_epochs;
    struct dse_rec_attempt  *att;          /* "attempts": [n_att], room for DSE_REC_ATTEMPTS_MAX; owned */
    int                      n_att;
};

/* Every key absent (record.def's absent values). */
void dse_rec_init(struct dse_rec *r);
/* The one top-1 of a record: its last epoch's once it is done or stopped at a rung, NaN
 * otherwise (before any epoch, or while pending, diverged, failed). dse_rec_put writes it
 * as "top1" (a trained record); dse export --best reports it. */
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

/* Which keys dse_rec_put writes (record.def's `file`): HEAD, the analytic part, the object
 * left open after its last key (no ",\n"); CREATED, the file as the analytic sweep creates
 * it (HEAD and BOTH keys); TRAINED, every key, after bringing r's summary keys up to date. */
enum dse_rec_part { DSE_REC_PUT_HEAD, DSE_REC_PUT_CREATED, DSE_REC_PUT_TRAINED };

/* The one writer of a candidate file (sweep/record.c): r's sweep/record.def keys of
 * `part`, and the closing brace unless part is HEAD, to f. r->metaparams is the text of the
 * metaparams object's members (sweep/candidate.c renders it from the space). */
void dse_rec_put(FILE *f, struct dse_rec *r, enum dse_rec_part part);

/* The one reader of a candidate record, DIR/candidates/<id>.json, already parsed from path
 * into root: every key checked (type, range; the id equal to the file name; errors name
 * path and line) and stored into r (initialized: dse_rec_init), every key as
 * sweep/record.def lists them. dse_sweep_read reads each candidate with it, and the
 * workers', dse status's and dse export's reader (dse_rec_read_path) is this one, so all
 * accept the same files. */
enum dse_status dse_rec_from_json(const char *path, const struct dse_json *root, struct dse_rec *r,
                                  struct dse_err *err);

#endif
