/* space.h: design-space files (libconfig; docs/space-format.md): every metaparameter
 * and macro choice as a value, a list or a range; optional random sampling; constraints
 * that prune candidates before training; the train section later issues use. A loaded
 * space is plain structs: metaparams/ and analysis/ never see libconfig. */
#ifndef DSE_SWEEP_SPACE_H
#define DSE_SWEEP_SPACE_H

#include <stdint.h>

#include "engine/compress.h"
#include "engine/train.h"
#include "metaparams/metaparams.h"
#include "sweep/record.h" /* DSE_ID_SIZE, DSE_TRAIN_REPLICATES_MAX */

/* The keys a space can vary: the metaparameters of metaparams/mp.def, in its order
 * (candidate ids hash them in this order). */
enum dse_axis_key {
#define DSE_MP(E, f, g, T, def, lo, hi, bnd, id, doc) DSE_AX_##E = DSE_MP_##E,
#include "metaparams/mp.def"
#undef DSE_MP
    DSE_AX_COUNT = DSE_MP_COUNT
};

#define DSE_AXIS_MAX_VALUES 100000

struct dse_axis {
    int       n;       /* values, >= 1 */
    double   *values;  /* numbers; bypass as enum dse_bypass; pools: index into masks */
    uint64_t *masks;   /* pools only: DSE_MP_POOL_* bitmasks */
    int       line;    /* where it was set; 0 = default */
};

struct dse_constraints {
    int64_t max_params;        /* 0 = none */
    int64_t max_flops;         /* forward FLOPs per image; 0 = none */
    double  max_model_mb;      /* params x 4 bytes, 10^6; 0 = none */
    double  max_train_mem_mib; /* analyzer's training-memory estimate; 0 = none */
    int     train_mem_batch;   /* batch for that estimate: train.batch, else 64 */
};

/* A space file's train section trains this many epochs unless told (dse train: one). */
#define DSE_SPACE_TRAIN_EPOCHS 10

/* How a sweep chooses its candidates (the space file's `search` section, docs/space-format.md):
 * its name, and whether it is a proposer whose proposals a sweep makes one step at a time
 * through its search log (sweep/search.h: evolution, sweep/evolve.h; bo, sweep/bo.h), or
 * chooses every candidate before training. auto is none of them itself: before a sweep
 * starts, dse_search_resolve (sweep/search.h) replaces it by grid, evolution or bo, chosen
 * from the space and the budget (dse_search_auto); a search section that gives a budget and
 * no strategy means auto. */
#define DSE_SEARCH_STRATEGIES(X)      \
    X(GRID,      "grid",      0)      \
    X(RANDOM,    "random",    0)      \
    X(EVOLUTION, "evolution", 1)      \
    X(BO,        "bo",        1)      \
    X(AUTO,      "auto",      0)

enum dse_strategy {
#define DSE_STRATEGY_ENUM(e, name, logged) DSE_SEARCH_##e,
    DSE_SEARCH_STRATEGIES(DSE_STRATEGY_ENUM)
#undef DSE_STRATEGY_ENUM
    DSE_SEARCH_COUNT
};

/* "grid random evolution bo auto": the names in enum order (dse_word_index gives the value). */
#define DSE_STRATEGY_WORD(e, name, logged) name " "
#define DSE_SEARCH_STRATEGY_NAMES DSE_SEARCH_STRATEGIES(DSE_STRATEGY_WORD)

const char *dse_strategy_str(enum dse_strategy s);
/* The strategy named name, or -1. */
int dse_strategy_find(const char *name);
/* 1 if strategy s proposes through the search log (the table's third column). */
int dse_strategy_logged(enum dse_strategy s);

#define DSE_SEARCH_OBJ_MAX 8
#define DSE_SEARCH_BUDGET_MAX 10000000

struct dse_search {
    int               present;     /* the file has a search section */
    enum dse_strategy strategy;    /* grid (the default): every candidate, or `sample` */
    int64_t           budget;      /* random, evolution, bo: candidates to train (>= 1); 0 unset */
    int               budget_epochs_line; /* where budget_epochs was set; 0 none */
    int64_t           budget_epochs; /* evolution, bo: epochs to train in all, replicates included (>= 1);
                                      random: budget_epochs / (train.epochs x replicates) candidates;
                                      0 unset */
    double            budget_hours;  /* evolution, bo: no proposal once the training time of its
                                      candidates (summed, replicates included) reaches it; 0 unset */
    int               pop;         /* evolution: population size; 0: not given, a third of the budget
                                      (dse_evo_pop_for_budget) */
    uint64_t          seed;        /* random, evolution, bo (default 1) */
    double            min_top1;    /* bo: the top-1 (a fraction) below which a result is worth
                                      nothing to the user: the reference of the hypervolume bo
                                      maximizes (dse_bo_opts.ref_top1); meaningful where
                                      min_top1_line > 0 */
    int               min_top1_line; /* where min_top1 was set; 0 none */
    int               n_obj;       /* costs minimized beside top-1 (objective.def names) */
    int               obj[DSE_SEARCH_OBJ_MAX]; /* enum dse_evo_cost */
    int               line;        /* the search section's line; 0 none */
};

struct dse_space;
/* Set the strategy (dse sweep --strategy overrides the file's): DSE_ERR_CONFIG, naming the
 * file, when random, evolution, bo or auto has no budget, grid would be given a budget, or bo's
 * first objective is measured (its model needs costs known before training). auto stays
 * auto here: dse_search_resolve chooses. */
enum dse_status dse_space_set_strategy(struct dse_space *s, enum dse_strategy st, struct dse_err *err);

struct dse_space {
    char     name[DSE_NAME_MAX];
    const char *path;         /* borrowed: the path given to dse_space_load */
    uint64_t hash;            /* FNV-1a 64 of the file's bytes */
    struct dse_axis axes[DSE_AX_COUNT];
    uint64_t count;           /* grid size: the product of the axes' sizes */
    int      count_overflow;  /* the product exceeds 2^64 */
    int64_t  sample;          /* 0: the whole grid; N: N distinct random candidates */
    uint64_t seed;            /* for sampling */
    struct dse_constraints cons;
    int      cons_line[4];    /* lines of max_params, max_flops, max_model_mb, max_train_mem_mib */
    struct dse_train_opts train; /* the train section's recipe (engine/train.def's fields; the
                                    defaults where it is silent, epochs DSE_SPACE_TRAIN_EPOCHS);
                                    the rest (data, threads, ...) is the worker's to set */
    int      train_present;   /* the file has a train section */
    char     dataset[1024];   /* train.dataset, what --data takes: a name of data/data.h's
                                 DSE_DATA_SETS in its canonical spelling ("cifar10" in the file
                                 reads "cifar-10"), or a path: an IDX or CIFAR directory, an image
                                 pack, an image folder; a relative one joined to the space file's
                                 folder */
    int      dataset_line;    /* where dataset was set; 0 = default */
    int      replicates;      /* train.replicates: seeds each chosen candidate trains with (1 to
                                 DSE_TRAIN_REPLICATES_MAX): replicate r is its own candidate
                                 record, seed + r (dse_space_rep_id) */
    int      replicates_line; /* where replicates was set; 0 = default */
    struct dse_compress_opts compress; /* the compress section's settings (engine/compress.def's
                                    fields; its defaults where the file is silent); the rest
                                    (train, work_dir, ...) is the worker's to set */
    int      compress_line;   /* the compress section's line; 0: the file has none (candidates are
                                 not compressed) */
    struct dse_search search;
    int64_t  file_sample;     /* `sample` as the file gives it (strategy random replaces sample) */
    uint64_t file_seed;
};

const char *dse_axis_name(enum dse_axis_key k);

/* Read and check a space file. Every error reads "path:line: what is wrong; what is
 * allowed"; unknown keys are rejected with a suggestion. On failure *out holds nothing
 * to free. */
enum dse_status dse_space_load(const char *path, struct dse_space *out, struct dse_err *err);
void dse_space_free(struct dse_space *s);

/* Metaparameters of grid index k (0 <= k < count): the first axis varies slowest. */
void dse_space_candidate(const struct dse_space *s, uint64_t k, struct dse_mp *mp);

/* Indices of the candidates a sweep covers, increasing: all of the grid, or `sample`
 * distinct ones drawn with PCG32(seed). *out is malloc'ed (caller frees). Refuses a
 * grid of more than max candidates (asking for sample = N instead). */
enum dse_status dse_space_indices(const struct dse_space *s, uint64_t max, uint64_t **out,
                                  uint64_t *n, struct dse_err *err);

/* Build and check candidate k's network into net; errors name the space file's line of
 * the key at fault when one can be told. */
enum dse_status dse_space_build(const struct dse_space *s, const struct dse_mp *mp,
                                struct dse_net *net, struct dse_err *err);

/* Canonical "key=value\n" text of mp (mp.def's order; integers in decimal, reals such as
 * pct3x3, sr and dropout as the 16 hex digits of their IEEE-754 bits; an IF_SET key only
 * where it differs from its default, so ids from before it was added hold) and the
 * stable candidate id: "c" + its FNV-1a 64 hash in 16 hex digits (collisions are checked
 * per sweep: an id repeated within a sweep is an error, never an overwrite).
 * dse_space_canonical returns the text's length (as snprintf, even if cut). */
#define DSE_ID_BASE_LEN 17 /* "c" + 16 hex digits */
int  dse_space_canonical(const struct dse_mp *mp, char *buf, int size);
void dse_space_id(const struct dse_mp *mp, char id[DSE_ID_SIZE]);
/* The id of replicate r (0 <= r < DSE_TRAIN_REPLICATES_MAX) of candidate mp: replicate 0 is
 * the candidate id itself (a space without replicates has the ids it always had), replicate
 * r >= 1 that id + "r" + r in decimal, e.g. "c0123456789abcdefr2". */
void dse_space_rep_id(const struct dse_mp *mp, int replicate, char id[DSE_ID_SIZE]);
/* The same from a candidate id: id (its first DSE_ID_BASE_LEN characters) becomes replicate r's. */
void dse_space_id_replicate(char id[DSE_ID_SIZE], int replicate);

/* 1 if id has the form of a candidate id ("c" + 16 lower-case hex digits; no replicate
 * suffix), else 0. */
int dse_space_id_valid(const char *id);
/* 1 if id is a candidate id, or one with a replicate's suffix "r1" to "r63" (dse_space_rep_id). */
int dse_space_rep_id_valid(const char *id);

/* The grid index of the candidate whose id is id. Searches the whole grid when it has at
 * most max candidates (dse generate: DSE_SPACE_FIND_MAX, about 10 s), else the space's
 * sample (the candidates a sweep covers). DSE_ERR_CONFIG naming the space when no
 * candidate has that id or the grid is too large to search and has no sample. */
#define DSE_SPACE_FIND_MAX 20000000ULL
enum dse_status dse_space_find_id(const struct dse_space *s, const char *id, uint64_t max, uint64_t *index,
                                  struct dse_err *err);

#endif
