/* options.h: every option of every dse command, each once (DSE_OPTIONS: name, placeholder,
 * parser, range), and one table per command (its usage prose and option lines, each line
 * binding the settings field its value goes to and that field's default) from which the
 * argument parser, dse_opts_bind and the --help text are made. docs/cli.md lists the
 * options, docs/conventions.md ("One fact, one owner") says how lines bind values;
 * dse/main.c and dse/cmd_*.c run the commands. */
#ifndef DSE_CLI_OPTIONS_H
#define DSE_CLI_OPTIONS_H

#include <float.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "base/base.h"
#include "engine/compress.h"
#include "engine/slices.h"
#include "engine/train.h"
#include "sweep/sweep.h"

/* The engine's cap on epochs (engine/train.h): --epochs, --budget and --min-epochs stop there. */
#define DSE_OPT_EPOCHS_MAX DSE_TRAIN_EPOCHS_MAX
#define DSE_OPT_BATCH_MAX  DSE_TRAIN_BATCH_MAX
/* --max-pixels stops at the largest image data/image.h takes (32768 a side). */
#define DSE_OPT_PIXELS_MAX ((int64_t)DSE_IMAGE_DIM_MAX * DSE_IMAGE_DIM_MAX)

/* One value of an engine/compress.def row (DSE_OPT_COMPRESS(bits, HI) is 16): dse compress's
 * ranges are its rows'. */
#define DSE_OPT_COMPRESS_LO_(field, key, kind, def, lo, hi, cli, help) lo
#define DSE_OPT_COMPRESS_HI_(field, key, kind, def, lo, hi, cli, help) hi
#define DSE_OPT_COMPRESS(field, what) DSE_COMPRESS_##field(DSE_OPT_COMPRESS_##what##_)

/* A REAL option's min for "above 0": the smallest positive double, so v >= it is v > 0. */
#define DSE_OPT_ABOVE_0 DBL_TRUE_MIN

/* How an option's value is read. FLAG: no value. TEXT: any text, read by its command.
 * INT: a base-10 integer from min to max. REAL: a number (strtod, all of the text) from min
 * to max. WORD: one of the space-separated words. INTS, REALS: a list, values separated by
 * commas, each an INT or a REAL from min to max, as many as DSE_OPT_LISTS says; or one of
 * the words, if the row has words (--gpus all). PATH: a file or directory name, not empty
 * and shorter than PATH_MAX (the refusal names a directory if the placeholder says DIR).
 * SPAN: MIN-MAX, two base-10 integers from min to max, MIN <= MAX. */
enum dse_opt_kind {
    DSE_OPT_KIND_FLAG,
    DSE_OPT_KIND_TEXT,
    DSE_OPT_KIND_INT,
    DSE_OPT_KIND_REAL,
    DSE_OPT_KIND_WORD,
    DSE_OPT_KIND_INTS,
    DSE_OPT_KIND_REALS,
    DSE_OPT_KIND_PATH,
    DSE_OPT_KIND_SPAN
};

/* Every option, once, with one range everywhere it is taken. X(ENUM, name, placeholder, kind,
 * min, max, words, why): why is what a refused WORD or REAL value "is not" (NULL: "is not one
 * of: <words>", "is not a number from MIN to MAX"); a command may accept fewer words (--format). Options of the same name that
 * mean different things in different commands (data synth's --classes makes classes; the
 * others fit a network to them) are different rows. */
#define DSE_OPTIONS(X)                                                                                       \
    /* ENUM            name               arg        kind  min  max                 words / why */           \
    /* shared by several commands */                                                                         \
    X(BATCH,           "--batch",         "B",       INT,  1,   DSE_OPT_BATCH_MAX,  NULL, NULL)              \
    X(THREADS,         "--threads",       "T",       INT,  1,   256,                NULL, NULL)              \
    X(EPOCHS,          "--epochs",        "E",       INT,  1,   DSE_OPT_EPOCHS_MAX, NULL, NULL)              \
    X(INPUT,           "--input",         "C,H,W",   INTS, 1,   DSE_DIM_MAX,        NULL, "is not C,H,W with integers from 1 to 16777216 (e.g. 3,227,227)") \
    X(CLASSES,         "--classes",       "K",       INT,  1,   DSE_DIM_MAX,        NULL, NULL)              \
    X(FORMAT,          "--format",        "F",       WORD, 0,   0,                  "", NULL)                \
    X(CONV,            "--conv",          "S",       TEXT, 0,   0,                  NULL, NULL)              \
    X(DEVICE,          "--device",        "D",       TEXT, 0,   0,                  NULL, NULL)              \
    X(PRECISION,       "--precision",     "P",       TEXT, 0,   0,                  NULL, NULL)              \
    X(ALGOS,           "--algos",         "A",       WORD, 0,   0,                  "det any", "is not det or any") \
    X(DATA,            "--data",          "D",       TEXT, 0,   0,                  NULL, NULL)              \
    X(SEED,            "--seed",          "S",       INT,  0,   2147483647,         NULL, NULL)              \
    X(OUT,             "--out",           "DIR",     PATH, 0,   0,                  NULL, NULL)              \
    X(CHECKPOINT,      "--checkpoint",    "FILE",    PATH, 0,   0,                  NULL, NULL)              \
    X(LIMIT_TEST,      "--limit-test",    "N",       INT,  1,   1 << 30,            NULL, NULL)              \
    X(AUG,             "--aug",           "A",       WORD, 0,   0,                  DSE_AUG_NAMES, NULL)     \
    X(JSON,            "--json",          "",        FLAG, 0,   0,                  NULL, NULL)              \
    /* analyze, diff, generate */                                                                            \
    X(EXPAND,          "--expand",        "",        FLAG, 0,   0,                  NULL, NULL)              \
    X(SKIP_UNKNOWN,    "--skip-unknown",  "",        FLAG, 0,   0,                  NULL, NULL)              \
    X(COMPRESSED,      "--compressed",    "",        FLAG, 0,   0,                  NULL, NULL)              \
    X(INDEX,           "--index",         "K",       INT,  0,   INT64_MAX,          NULL, NULL)              \
    X(ID,              "--id",            "ID",      TEXT, 0,   0,                  NULL, NULL)              \
    X(ALL,             "--all",           "",        FLAG, 0,   0,                  NULL, NULL)              \
    /* analyze --workers: data-parallel training's communication model (docs/comm-model.md); not  \
       sweep's --workers, which starts worker processes */                                             \
    X(COMM_WORKERS,    "--workers",       "P",       INT,  1,   DSE_COMM_WORKERS_MAX, NULL, NULL)            \
    X(BANDWIDTH,       "--bandwidth",     "GB/s",    REAL, DSE_OPT_ABOVE_0, 1e6,    NULL, "is not a number of GB/s above 0 (at most 1e6)") \
    X(LATENCY,         "--latency",       "US",      REAL, 0,   1e9,                NULL, "is not a number of microseconds, 0 or more") \
    X(IMG_PER_S,       "--img-per-s",     "X",       REAL, DSE_OPT_ABOVE_0, 1e12,   NULL, "is not a number above 0") \
    X(MEASURE,         "--measure",       "",        FLAG, 0,   0,                  NULL, NULL)              \
    /* sweep */                                                                                              \
    X(ANALYTIC_ONLY,   "--analytic-only", "",        FLAG, 0,   0,                  NULL, NULL)              \
    X(WORKERS,         "--workers",       "N",       INT,  1,   256,                NULL, NULL)              \
    X(BUDGET,          "--budget",        "B",       TEXT, 0,   0,                  NULL, NULL)              \
    X(EARLY_STOP,      "--early-stop",    "S",       WORD, 0,   0,                  DSE_SWEEP_HALVING_NAMES, "is not none, sh (successive halving) or asha (asynchronous)") \
    X(ETA,             "--eta",           "N",       INT,  2,   1000,               NULL, NULL)              \
    X(MIN_EPOCHS,      "--min-epochs",    "R",       INT,  1,   DSE_OPT_EPOCHS_MAX, NULL, NULL)              \
    X(RANK,            "--rank",          "K",       WORD, 0,   0,                  DSE_SWEEP_RANK_NAMES, "is not pareto or top1") \
    X(STRATEGY,        "--strategy",      "S",       WORD, 0,   0,                  DSE_SEARCH_STRATEGY_NAMES, "is not grid, random, evolution, bo or auto") \
    X(LEASE_SECONDS,   "--lease-seconds", "S",       REAL, 0.5, 86400,              NULL, NULL)              \
    X(MAX_CRASHES,     "--max-crashes",   "N",       INT,  1,   1000000,            NULL, NULL)              \
    X(COMMAND_ID,      "--command-id",    "ID",      TEXT, 0,   0,                  NULL, NULL)              \
    X(RANKS_PER_CAND,  "--ranks-per-candidate", "P", INT,  1,   4096,               NULL, NULL)              \
    X(DATA_ROOT,       "--data-root",     "DIR",     PATH, 0,   0,                  NULL, NULL)              \
    X(GPUS,            "--gpus",          "LIST",    INTS, 0,   1023,               "all", "is not all or a comma-separated list of CUDA device indices (e.g. 0 or 0,2)") \
    X(PER_GPU,         "--per-gpu",       "K",       TEXT, 0,   0,                  NULL, NULL)              \
    X(MAX_OOM,         "--max-oom",       "N",       INT,  1,   1000000,            NULL, NULL)              \
    X(SLURM,           "--slurm",         "",        FLAG, 0,   0,                  NULL, NULL)              \
    X(ARRAY,           "--array",         "N",       INT,  1,   DSE_SLURM_ARRAY_MAX, NULL, NULL)             \
    X(GPUS_PER_TASK,   "--gpus-per-task", "K",       INT,  1,   DSE_SLURM_GPUS_MAX, NULL, NULL)              \
    X(SBATCH,          "--sbatch",        "ARGS",    TEXT, 0,   0,                  NULL, NULL)              \
    X(DRY_RUN,         "--dry-run",       "",        FLAG, 0,   0,                  NULL, NULL)              \
    X(CANCEL,          "--cancel",        "",        FLAG, 0,   0,                  NULL, NULL)              \
    /* status */                                                                                             \
    X(WATCH,           "--watch",         "S",       INT,  1,   86400,              NULL, NULL)              \
    /* report */                                                                                             \
    X(PLOT,            "--plot",          "FILE.svg", PATH, 0,  0,                  NULL, NULL)              \
    X(PLOT_FLOPS,      "--plot-flops",    "FILE.svg", PATH, 0,  0,                  NULL, NULL)              \
    X(CURVES,          "--curves",        "FILE.svg", PATH, 0,  0,                  NULL, NULL)              \
    X(SIZE,            "--size",          "KIND",    WORD, 0,   0,                  "float compressed", "is not one of float, compressed") \
    /* train, bench, profile, eval, predict */                                                               \
    /* --lr and --clip-norm: engine/train.def's ranges (--lr any rate above 0, as it always took) */         \
    X(LR,              "--lr",            "L",       REAL, DSE_OPT_ABOVE_0, DSE_TRAIN_HI(lr), NULL,              \
      "is not a number in (0, " DSE_TRAIN_HI_STR(lr) "]")                                                     \
    X(LR_POLICY,       "--lr-policy",     "P",       WORD, 0,   0,                  DSE_TRAIN_WORDS(policy), "is not one of fixed, step, poly, linear") \
    X(LIMIT_TRAIN,     "--limit-train",   "N",       INT,  1,   1 << 30,            NULL, NULL)              \
    X(INIT,            "--init",          "I",       WORD, 0,   0,                  "msra xavier", "is not one of xavier, msra") \
    X(CHECKPOINT_DIR,  "--checkpoint-dir", "DIR",    PATH, 0,   0,                  NULL, NULL)              \
    X(RESUME,          "--resume",        "FILE",    PATH, 0,   0,                  NULL, NULL)              \
    X(CKPT_EVERY,      "--checkpoint-every", "N",    TEXT, 0,   0,                  NULL, NULL)              \
    X(PROGRESS_EVERY,  "--progress-every", "S",      TEXT, 0,   0,                  NULL, NULL)              \
    X(CONV_CACHE,      "--conv-cache",    "F",       TEXT, 0,   0,                  NULL, NULL)              \
    X(CLIP_NORM,       "--clip-norm",     "C",       REAL, DSE_TRAIN_LO(clip_norm), DSE_TRAIN_HI(clip_norm), NULL, \
      "is not a number in [" DSE_TRAIN_LO_STR(clip_norm) ", " DSE_TRAIN_HI_STR(clip_norm) "] (0: no clipping)") \
    X(LOADER_THREADS,  "--loader-threads", "N",      INT,  1,   256,                NULL, NULL)              \
    X(PACK_CACHE,      "--pack-cache",    "DIR",     PATH, 0,   0,                  NULL, NULL)              \
    X(MAX_PIXELS,      "--max-pixels",    "N",       INT,  1,   DSE_OPT_PIXELS_MAX, NULL, NULL)              \
    X(REDUCE,          "--reduce",        "R",       WORD, 0,   0,                  DSE_DIST_REDUCE_NAMES, "is not ps (parameter server), tree (reduction tree) or allreduce (MPI's)") \
    X(MODE,            "--mode",          "M",       WORD, 0,   0,                  "train infer", "is not train or infer") \
    X(ITERS,           "--iters",         "N",       INT,  1,   100000,             NULL, NULL)              \
    X(SLICES,          "--slices",        "S",       INT,  1,   DSE_SLICES_MAX,     NULL, NULL)              \
    X(TOP,             "--top",           "K",       INT,  1,   1000,               NULL, NULL)              \
    /* compress: engine/compress.def's ranges (density's lo is exclusive) */                                  \
    X(DENSITY,         "--density",       "D",       REAL, DSE_OPT_ABOVE_0, DSE_OPT_COMPRESS(density, HI), NULL, "is not a number in (0, 1]") \
    X(BITS,            "--bits",          "B",       INT,  DSE_OPT_COMPRESS(bits, LO), DSE_OPT_COMPRESS(bits, HI), NULL, NULL) \
    X(FINETUNE,        "--finetune",      "E",       INT,  DSE_OPT_COMPRESS(finetune, LO), DSE_OPT_COMPRESS(finetune, HI), NULL, NULL) \
    X(LAYER_DENSITY,   "--layer-density", "NAME=D,...", TEXT, 0, 0,                 NULL, NULL)              \
    /* export, import */                                                                                     \
    X(BEST,            "--best",          "",        FLAG, 0,   0,                  NULL, NULL)              \
    X(MAX_MB,          "--max-mb",        "M",       REAL, DSE_OPT_ABOVE_0, 1e9,    NULL, "is not a number of megabytes above 0") \
    X(MEAN,            "--mean",          "M,...",   REALS, -DBL_MAX, DBL_MAX,     NULL, "is not a comma-separated list of numbers (one a channel)") \
    X(STD,             "--std",           "S,...",   REALS, DSE_OPT_ABOVE_0, DBL_MAX, NULL, "is not a comma-separated list of numbers above 0") \
    X(CLASSES_FILE,    "--classes-file",  "FILE",    PATH, 0,   0,                  NULL, NULL)              \
    X(NET_OUT,         "--net-out",       "FILE",    PATH, 0,   0,                  NULL, NULL)              \
    /* data pack, info, bench, synth */                                                                      \
    X(PACK_SIZE,       "--size",          "S",       INT,  0,   4096,               NULL, NULL)              \
    X(QUALITY,         "--quality",       "Q",       INT,  1,   100,                NULL, NULL)              \
    X(CHANNELS,        "--channels",      "C",       WORD, 0,   0,                  "1 3", "is not 1 or 3")  \
    X(SKIP_BAD,        "--skip-bad",      "",        FLAG, 0,   0,                  NULL, NULL)              \
    X(VERIFY,          "--verify",        "",        FLAG, 0,   0,                  NULL, NULL)              \
    X(CROP_SIZE,       "--size",          "N",       INT,  1,   8192,               NULL, NULL)              \
    X(SECONDS,         "--seconds",       "S",       INT,  1,   100000,             NULL, NULL)              \
    X(SPLIT,           "--split",         "S",       WORD, 0,   0,                  "train val", "is not train or val") \
    X(SYNTH_CLASSES,   "--classes",       "K",       INT,  2,   1000,               NULL, NULL)              \
    X(TRAIN_IMAGES,    "--train",         "N",       INT,  1,   1000000,            NULL, NULL)              \
    X(VAL_IMAGES,      "--val",           "N",       INT,  0,   1000000,            NULL, NULL)              \
    X(SIDES,           "--sides",         "MIN-MAX", SPAN, 8,   4096,               NULL, "is not MIN-MAX with 8 <= MIN <= MAX <= 4096 (e.g. 256-400)") \
    X(MIXED,           "--mixed",         "",        FLAG, 0,   0,                  NULL, NULL)

/* How many values a list option (INTS, REALS) takes: X(ENUM, at least, at most). */
#define DSE_OPT_LISTS(X)                        \
    X(INPUT, 3, 3)                              \
    X(GPUS,  1, DSE_SWEEP_GPUS_MAX)             \
    X(MEAN,  1, DSE_DATA_MAX_CHANNELS)          \
    X(STD,   1, DSE_DATA_MAX_CHANNELS)

enum dse_opt {
#define X(e, name, arg, kind, lo, hi, words, why) DSE_OPT_##e,
    DSE_OPTIONS(X)
#undef X
    DSE_OPT_COUNT
};

struct dse_opt_spec {
    const char       *name;   /* "--batch" */
    const char       *arg;    /* "B": the value's placeholder in --help; "" for a flag */
    enum dse_opt_kind kind;
    long long         min, max;  /* INT */
    double            lo, hi;    /* REAL */
    const char       *words;  /* WORD: the values allowed; INTS, REALS: allowed instead of a list */
    const char       *why;    /* WORD, REAL, lists: "is not det or any"; NULL: "is not one of: <words>" */
};

extern const struct dse_opt_spec dse_opt_specs[DSE_OPT_COUNT];

/* Where a command's --help shows an option. OWN: its own line, "  --name ARG", the help text
 * in the command's help column (further lines of the text indented to it). RIGHT: on the
 * right half of the line above. JOIN: its name after the line above's name ("--input C,H,W,
 * --classes K  fit ..."). TEXT: named in the line above's help text. HEADING: no option; the
 * help text is printed as it is between option lines. */
enum dse_opt_place {
    DSE_OPT_PLACE_OWN = 0,
    DSE_OPT_PLACE_RIGHT,
    DSE_OPT_PLACE_JOIN,
    DSE_OPT_PLACE_TEXT,
    DSE_OPT_PLACE_HEADING
};

struct dse_opt_line {
    enum dse_opt       opt;
    enum dse_opt_place place;
    const char        *arg;    /* the placeholder this command shows; NULL: the option's own */
    const char        *words;  /* WORD: the values this command accepts; NULL: the option's own */
    const char        *help;   /* OWN and RIGHT: the text beside the name; %D: the default */
    /* A bound line (size > 0): dse_opts_bind puts its value into the field at off of the
     * command's settings struct (struct dse_opt_cmd.settings), as its kind says: FLAG (1 when
     * given) an int, INT an int or a 64-bit integer (as the field's size says), REAL a double,
     * WORD an int (the word's index: an enum in the words' order), TEXT and PATH a const
     * char *, SPAN two ints (DSE_OPT_BIND_SPAN). Its default is def, read as a given value would be,
     * or, where def is NULL, what the command's settings_default leaves there; --help shows
     * it for %D. A line that is not bound shows def for %D. */
    const char        *def;
    size_t             off, size;
};

/* The settings of commands whose work has no library struct to fill: dse bench and dse
 * profile (one struct; profile has no --mode or --slices), dse data bench. */
struct dse_bench_settings {
    int batch, threads, iters;
    int infer;  /* --mode: 0 train, 1 infer */
    int slices; /* 0: the engine's */
};
struct dse_data_bench_settings {
    int size, batch, threads, seconds;
    int split;  /* enum dse_pack_split */
    int aug;    /* enum dse_aug_mode */
};

/* A line's binding to field f of settings struct T (the field's size is checked against the
 * option's kind by dse_opts_bind). */
#define DSE_OPT_BIND(T, f) .off = offsetof(T, f), .size = sizeof(((T *)0)->f)
/* A SPAN line's binding to two int fields of T, lo and hi, hi right after lo (checked here). */
#define DSE_OPT_BIND_SPAN(T, lo, hi)                                                                      \
    .off = offsetof(T, lo),                                                                               \
    .size = 2 * sizeof(int) + 0 * sizeof(char[offsetof(T, hi) == offsetof(T, lo) + sizeof(int) ? 1 : -1])

/* Every command, once. X(ENUM, function suffix, name); count is COUNT_SPACE, DSE_CMD_COUNT
 * being the number of commands. */
#define DSE_COMMANDS(X)                    \
    X(ANALYZE,    analyze,    "analyze")    \
    X(DIFF,       diff,       "diff")       \
    X(COUNT_SPACE, count,     "count")      \
    X(GENERATE,   generate,   "generate")   \
    X(SWEEP,      sweep,      "sweep")      \
    X(STATUS,     status,     "status")     \
    X(REPORT,     report,     "report")     \
    X(TRAIN,      train,      "train")      \
    X(BENCH,      bench,      "bench")      \
    X(PROFILE,    profile,    "profile")    \
    X(EVAL,       eval,       "eval")       \
    X(PREDICT,    predict,    "predict")    \
    X(COMPRESS,   compress,   "compress")   \
    X(EXPORT,     export,     "export")     \
    X(IMPORT,     import,     "import")     \
    X(DATA_PACK,  data_pack,  "data pack")  \
    X(DATA_INFO,  data_info,  "data info")  \
    X(DATA_BENCH, data_bench, "data bench") \
    X(DATA_SYNTH, data_synth, "data synth")

enum dse_cmd {
#define X(e, fn, name) DSE_CMD_##e,
    DSE_COMMANDS(X)
#undef X
    DSE_CMD_COUNT
};

#define DSE_OPT_POS_ANY INT_MAX /* max_pos of a command taking any number of positionals (dse predict) */

/* One command: its positional arguments, its usage text and its options in --help order. */
struct dse_opt_cmd {
    const char                *name;       /* "train", "data pack" */
    int                        min_pos, max_pos;
    const char                *pos_what;   /* "one network file": what too few positionals lack */
    const char                *usage;      /* usage lines and prose, up to the option lines */
    const struct dse_opt_line *lines;
    int                        n_lines;
    const char                *tail;       /* prose after the option lines, or NULL */
    int                        col;        /* help text column (default 19) */
    int                        col2, w2;   /* RIGHT: its column and name width (default 36, 13) */
    size_t                     settings;   /* the size of the struct its bound lines fill; 0: none */
    void                     (*settings_default)(void *settings); /* its defaults; NULL: zeros */
};

extern const struct dse_opt_cmd dse_opt_cmds[DSE_CMD_COUNT];

/* What a command line gave. */
struct dse_opt_args {
    const char **pos;                /* the positionals, in order: the first n_pos entries of argv */
    int          n_pos;
    const char  *val[DSE_OPT_COUNT];  /* the value given last; a flag's name; NULL: not given */
    long long    num[DSE_OPT_COUNT];  /* INT options given: the value */
    double       real[DSE_OPT_COUNT]; /* REAL options given: the value */
    int          help;                /* --help or -h: nothing else was read */
};

/* Reads argv[0 .. argc-1] against c's options: "--name value", "--name=value", flags, "--"
 * (only positionals after it), -h/--help. Then checks the positional count and every INT, REAL
 * and WORD value given, in c's line order. On a usage error: DSE_ERR_CONFIG, err->msg saying
 * what is wrong (without "dse CMD: "). argv is borrowed by *a, and its entries are reordered
 * as GNU getopt does: the positionals first, in their order, then the options in theirs (the
 * strings stay where they are), so that a->pos is argv and no count of positionals is too
 * many to hold. */
enum dse_status dse_opts_parse(const struct dse_opt_cmd *c, int argc, char **argv, struct dse_opt_args *a,
                               struct dse_err *err);

/* Fills settings (a struct of c->settings bytes, set to its defaults by the caller, as
 * c->settings_default does) from c's bound lines: each line's def where it has one, then each
 * value a gave. The values were checked by dse_opts_parse. */
void dse_opts_bind(const struct dse_opt_cmd *c, const struct dse_opt_args *a, void *settings);

/* An option of c that no settings field takes, as text: the value a gave, else its line's def
 * (NULL if none). */
const char *dse_opts_text(const struct dse_opt_cmd *c, const struct dse_opt_args *a, enum dse_opt o);

/* An INT option of c that no settings field takes: the value a gave, else its line's def
 * (0 if none). */
long long dse_opts_int(const struct dse_opt_cmd *c, const struct dse_opt_args *a, enum dse_opt o);

/* The values of list option o (INTS into iv, REALS into v; the other pointer may be NULL),
 * at most max of them (the row's DSE_OPT_LISTS count): how many; 0 if o was not given or a
 * word was given instead (--gpus all). dse_opts_parse has checked the list. */
int dse_opts_list(const struct dse_opt_args *a, enum dse_opt o, long long *iv, double *v, int max);

/* c's --help text: its usage and prose, its option lines, its tail. */
void dse_opts_usage(FILE *f, const struct dse_opt_cmd *c);

/* The line of c that takes option o, or NULL. */
const struct dse_opt_line *dse_opts_line(const struct dse_opt_cmd *c, enum dse_opt o);

#endif
