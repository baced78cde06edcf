/* sweep_read.h: a sweep directory read whole and checked strictly (docs/sweep-dir.md,
 * docs/report.md "What is read"): the manifest, every candidate file (each key's type and
 * range, the id equal to the file name; errors name file and line), the plan and rungs,
 * the live leases (a pending candidate being trained reads as running), the space's
 * limits, and the Pareto frontier. The one strict reader: dse report formats it, dse
 * status checks every file with it. */
#ifndef DSE_SWEEP_READ_H
#define DSE_SWEEP_READ_H

#include "sweep/json_read.h"
#include "sweep/sweep_impl.h"

#define DSE_SWEEP_VARIED_MAX 32 /* varied metaparameters a manifest may list */

/* One candidate file: its record, and what only the report shows. */
struct dse_cand {
    struct dse_json_doc   *doc;
    char                  *path;
    const struct dse_json *metaparams;        /* borrowed from doc */
    int                    on_front;
    struct dse_rec         rec;               /* every key dse_rec_from_json reads; a pending one
                                                 with a live lease says running */
    /* A sweep with replicates (train.replicates > 1): the view's row of one architecture (grid
     * index) is its replicate 0's record, with status, top1 and top5 those of the group
     * (dse_sweep_group_rec): top1 and top5 the mean over its replicates done with a top-1;
     * compressed_bytes and compressed_top1 the means once every replicate has its .dsez. */
    const struct dse_cand *reps;              /* its records, replicate 0 first (in s->all); NULL: no replicates */
    int                    n_reps;            /* records of the architecture */
    int                    top1_n;            /* replicates done with a top-1 */
    double                 top1_std;          /* their sample standard deviation (n - 1); NaN if top1_n < 2 */
};

struct dse_sweep_view {
    const char          *dir;
    struct dse_json_doc *doc;         /* sweep.json */
    const char          *space;
    int64_t              declared;    /* "candidates" of sweep.json */
    int                  n_varied;
    const char         **varied;
    int                  n;
    struct dse_cand         *c;           /* sorted by index: one per record, or with replicates one row per
                                             architecture (its fields borrowed from `all`) */
    int                  replicates;  /* the most records of one index: 1 if the sweep has no replicates */
    int                  n_all;
    struct dse_cand     *all;         /* with replicates: every record, by index then replicate; else NULL */
    struct dse_cand        **by_size;     /* sorted by model size, then index */
    int                  trained;     /* frontier over top1 instead of FLOPs */
    int                  compressed;  /* the frontier on compressed_bytes instead of model_bytes
                                         (dse_sweep_front_compressed; dse report --size compressed) */
    int                  n_front;
    struct dse_cand        **front;       /* increasing model size */
    int                  has_plan;    /* a training sweep: DIR/plan.json */
    struct dse_sweep_plan plan;
    struct dse_rung      rung[DSE_SWEEP_RUNGS_MAX];
};

/* 1 if the frontier rule ranks c: trained sweeps, a done candidate with a top-1;
 * untrained ones, any candidate not pruned. */
int dse_sweep_ranked(const struct dse_sweep_view *s, const struct dse_cand *c);

/* Mean and sample standard deviation (n - 1) of the values of v[n] that are not NaN; *n_ok
 * counts them. *mean is NaN if there are none, *std NaN if there are fewer than 2. */
void dse_sweep_mean_std(const double *v, int n, int *n_ok, double *mean, double *std);

/* The row of an architecture from its replicates' records reps[n] (replicate 0 first): a
 * copy of reps[0] (its pointers borrowed) with the group's status (running if one is, else
 * pending if one is, else done if one is done with a top-1, else replicate 0's), top1 and
 * top5 the mean over the replicates done with a top-1 (*n_top1 of them; NaN if none), and
 * *top1_std their sample standard deviation. */
struct dse_rec dse_sweep_group_rec(const struct dse_rec *const *reps, int n, int *n_top1, double *top1_std);

/* 1 if two frontier neighbours' mean top-1 differ by less than the larger of their standard
 * deviations: not a win either way ("within noise"). 0 without replicates. */
int dse_sweep_within_noise(const struct dse_cand *a, const struct dse_cand *b);

/* The constraints of DIR/space.cfg a plot can draw (0: none; also when the sweep has no
 * space file, as a hand-made fixture, or one that no longer loads): model MB (max_model_mb,
 * or max_params at 4 bytes each, whichever is tighter) and forward GFLOP (max_flops).
 * Read only when a plot is drawn: it loads the space file. */
struct dse_sweep_limits {
    double mb, gflop;
};
struct dse_sweep_limits dse_sweep_limits(const char *dir);

/* The records each architecture has: DIR/space.cfg's train.replicates, or `seen` (the most
 * records of one index among the files) where the space file is missing or does not load, or
 * says fewer. asha ranks an architecture only with all of them (a file missing is not a mean
 * of fewer), in dse report's and dse status's view as in the workers'. */
int dse_sweep_replicates(const char *dir, int seen);

/* Whether every record's grid index (recs[n]) lies in DIR/space.cfg's space: one past it is
 * DSE_ERR_CONFIG, `DIR/candidates/<id>.json:line: "index" = N is outside the space`. A
 * directory without a space file that loads (a hand-made fixture), or a space too large to
 * count, is not checked. dse_sweep_read and dse status call it. */
enum dse_status dse_sweep_check_indices(const char *dir, const struct dse_rec *const *recs, int n,
                                        struct dse_err *err);

/* Reads dir into *s (dse_sweep_view_free it, also after a failure). */
enum dse_status dse_sweep_read(struct dse_sweep_view *s, const char *dir, struct dse_err *err);
/* The frontier of s taken again on compressed size (a record's compressed_bytes, the .dsez
 * its worker wrote) instead of model size: a candidate without a .dsez is never on it. */
enum dse_status dse_sweep_front_compressed(struct dse_sweep_view *s, struct dse_err *err);
void dse_sweep_view_free(struct dse_sweep_view *s);

/* The most accurate trained candidate (status done, with a top-1) whose model is within
 * max_mb (10^6 bytes; <= 0: any size), ties to the smaller model, then to the smaller id:
 * the rule of dse export --best and of the report's "Next" section. NULL if none; n_done
 * and n_fit count the trained candidates and those within max_mb. */
const struct dse_cand *dse_sweep_best(const struct dse_sweep_view *s, double max_mb, int *n_done, int *n_fit);

#endif
