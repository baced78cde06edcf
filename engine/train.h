/* train.h: training and evaluation of a model on a dataset (issue #4): SGD with
 * momentum and weight decay, learning-rate policies, per-epoch test metrics, crash-safe
 * compressed checkpoints that resume bit-identically, and divergence detection. */
#ifndef DSE_ENGINE_TRAIN_H
#define DSE_ENGINE_TRAIN_H

#include <stdint.h>

#include "data/data.h"
#include "engine/model.h"

enum dse_lr_policy { DSE_LR_FIXED = 0, DSE_LR_STEP, DSE_LR_POLY, DSE_LR_LINEAR };

/* The most epochs one run trains (and one result array holds): the one cap of --epochs,
 * --budget, --min-epochs, a space's train.epochs, checkpoints and candidate records. */
#define DSE_TRAIN_EPOCHS_MAX 1024
/* The largest batch: the one cap of --batch and a space's train.batch. */
#define DSE_TRAIN_BATCH_MAX 65536

/* One epoch's results, the fields of engine/epoch.def: the one record of an epoch from the
 * trainer (dse_train_result.epochs, dse_train_progress.ep) to a candidate record's
 * "per_epoch" entries and the report. seconds: the epoch's steps and evaluation (no setup,
 * no checkpoint); img_per_s: training images per second, evaluation excluded. */
#define DSE_EPOCH_CTYPE_FLOAT  float
#define DSE_EPOCH_CTYPE_FIXED3 double
#define DSE_EPOCH_CTYPE_FIXED1 double
#define DSE_EPOCH_CTYPE_COUNT  int
struct dse_epoch_result {
#define DSE_EPOCH(key, field, kind, unknown) DSE_EPOCH_CTYPE_##kind field;
#include "engine/epoch.def"
#undef DSE_EPOCH
};

/* Progress of a running training, for a progress line. */
struct dse_train_progress {
    int     epoch, epochs;      /* 0-based epoch, total */
    int     iter, iters;        /* iteration within the epoch, iterations per epoch */
    float   loss;               /* mean training loss of the epoch so far */
    float   lr;
    double  img_per_s;
    double  eta_s;              /* seconds left, estimated */
    int     done;               /* 1 at the end of an epoch: ep is set */
    struct dse_epoch_result ep; /* when done: the epoch's results (dse_train_result.epochs[]'s) */
};

/* What dse_train_opts.note tells: a cuDNN choice file loaded, choices found and written to
 * it, or a file from another GPU or cuDNN set aside (the text says which); in bf16 on the
 * CPU, the convs computing in float32 (dse_model_bf16_fp32), once before the first step. */
enum dse_train_note { DSE_NOTE_CHOICES_LOADED, DSE_NOTE_CHOICES_PINNED, DSE_NOTE_CHOICES_STALE, DSE_NOTE_BF16_FP32 };

/* How often a log gets a progress line within an epoch, in seconds, unless told
 * (--progress-every of dse train and dse sweep). */
#define DSE_TRAIN_PROGRESS_EVERY_S 30
/* dse train --checkpoint-dir and dse sweep's CPU workers also checkpoint within an epoch
 * this often unless told: a kill loses at most 5 minutes of an epoch (issue #18 item 2). */
#define DSE_TRAIN_CKPT_EVERY_MIN 5

/* The recipe's rows (engine/train.def), and picked from one row: DSE_TRAIN_WORDS(policy) is
 * "fixed step poly linear" (dse_word_index gives the value), DSE_TRAIN_DEFAULT_STR(lr) is
 * "0.01" (help text: the default as the row writes it). */
#include "engine/train.def"
#define DSE_TRAIN_PICK_DEF_(field, key, kind, def, lo, hi, cli, words, help)   #def
#define DSE_TRAIN_PICK_WORDS_(field, key, kind, def, lo, hi, cli, words, help) words
#define DSE_TRAIN_PICK_LO_(field, key, kind, def, lo, hi, cli, words, help)    lo
#define DSE_TRAIN_PICK_HI_(field, key, kind, def, lo, hi, cli, words, help)    hi
#define DSE_TRAIN_PICK_LO_STR_(field, key, kind, def, lo, hi, cli, words, help) #lo
#define DSE_TRAIN_PICK_HI_STR_(field, key, kind, def, lo, hi, cli, words, help) #hi
#define DSE_TRAIN_PICK_HELP_(field, key, kind, def, lo, hi, cli, words, help)  help
#define DSE_TRAIN_DEFAULT_STR(field) DSE_TRAIN_##field(DSE_TRAIN_PICK_DEF_)
#define DSE_TRAIN_WORDS(field)       DSE_TRAIN_##field(DSE_TRAIN_PICK_WORDS_)
/* A row's range (DSE_TRAIN_LO(clip_norm) is 0, DSE_TRAIN_HI_STR(clip_norm) "1e6") and the text
 * dse train --help shows for its option (%D standing for DSE_TRAIN_DEFAULT_STR). */
#define DSE_TRAIN_LO(field)          DSE_TRAIN_##field(DSE_TRAIN_PICK_LO_)
#define DSE_TRAIN_HI(field)          DSE_TRAIN_##field(DSE_TRAIN_PICK_HI_)
#define DSE_TRAIN_LO_STR(field)      DSE_TRAIN_##field(DSE_TRAIN_PICK_LO_STR_)
#define DSE_TRAIN_HI_STR(field)      DSE_TRAIN_##field(DSE_TRAIN_PICK_HI_STR_)
#define DSE_TRAIN_HELP(field)        DSE_TRAIN_##field(DSE_TRAIN_PICK_HELP_)
/* A row's C type, from its kind (an ENUM's from its field: DSE_TRAIN_ENUM_<field>). */
#define DSE_TRAIN_CTYPE_INT(field)  int
#define DSE_TRAIN_CTYPE_U64(field)  uint64_t
#define DSE_TRAIN_CTYPE_REAL(field) float
#define DSE_TRAIN_CTYPE_ENUM(field) DSE_TRAIN_ENUM_##field
#define DSE_TRAIN_ENUM_policy       enum dse_lr_policy
#define DSE_TRAIN_ENUM_init         enum dse_init
/* The data trained on unless told (--data, a space's train.dataset). */
#define DSE_TRAIN_DATA_DEFAULT "fashion-mnist"

/* What one training run does. The recipe's fields are engine/train.def's rows: their types,
 * defaults, ranges and words are written there only. */
struct dse_train_opts {
    const char *data;           /* dataset name or IDX/CIFAR directory (data/data.h:
                                   dse_data_locate), an image pack, or an image folder (read
                                   file by file; the dse command packs folders first) */
    const char *data_root;      /* NULL: DSE_DATA_ROOT */
    /* The recipe, one field a row of engine/train.def, in its types (DSE_TRAIN_CTYPE_*):
     * epochs, batch, lr, policy, power (poly: lr (1 - iter/iters)^power; linear is power 1),
     * gamma and step_epochs (step: lr gamma^floor(epoch / step_epochs)), momentum,
     * weight_decay, warmup_epochs (lr ramps up linearly over these epochs' iterations),
     * clip_norm (> 0: gradients whose global L2 norm exceeds it are scaled down to it before
     * the step, dse_model_clip_grad; 0: off), seed (initialization, shuffling, dropout),
     * limit_train and limit_test (0: every image; N: the first N), init, init_std,
     * classifier_bias (dse_model_opts.classifier_bias). */
    struct {
#define DSE_TRAIN_FIELD_(field, key, kind, def, lo, hi, cli, words, help) DSE_TRAIN_CTYPE_##kind(field) field;
        DSE_TRAIN_RECIPE(DSE_TRAIN_FIELD_)
#undef DSE_TRAIN_FIELD_
    };
    int         threads;
    enum dse_aug_mode aug;      /* image packs and folders: training augmentation (data.h) */
    int         loader_workers; /* image packs and folders: decoding threads; 0: one per core */
    float       eval_center;    /* image packs and folders: evaluation's centred box; 0: the one
                                   that goes with aug (dse_data_aug_of). dse_eval_run sets the
                                   one the checkpoint records */
    const struct dse_data_norm *norm; /* NULL: the input normalization of the training data
                                   (its first limit_train images); else this one.
                                   dse_eval_run sets the one the checkpoint records, so
                                   evaluation normalizes as training did */
    int         conv_algo;      /* DSE_ALGO_AUTO: time the strategies once per shape;
                                   else a dse_cpu_conv_algo for every conv */
    const char *conv_cache;     /* NULL, or a file of conv choices: read before training,
                                   written (atomically) when it lacks some. With auto choice, the
                                   strategy is timed per run and the strategies differ in the
                                   last bits, so two runs of one candidate could differ; with a
                                   cache file every run on this machine (any thread count) uses
                                   the same choices and results are bit-identical. On the CPU: the
                                   conv strategies (dse_conv_cache_*), written after training.
                                   On a CUDA device: cuDNN's engines and algorithms
                                   (dse_cuda_conv_cache_*), written when find chose something the
                                   file lacked: after that epoch's steps, before its results are
                                   reported and checkpointed, and at the end, so every checkpoint
                                   was computed with choices the file holds; a file
                                   from another GPU or cuDNN is set aside (said through note)
                                   and replaced. */
    const char *checkpoint_dir; /* NULL: none; else DIR/epoch-<k>.ckpt after epoch k (1-based) */
    int         ckpt_every_steps; /* > 0, with checkpoint_dir, on the CPU: also every this many
                                   steps within an epoch, DIR/epoch-<k>.part.ckpt while epoch k
                                   runs (replaced each time, removed once epoch-<k>.ckpt is
                                   written); resuming from it repeats the uninterrupted run bit
                                   for bit (issue #18 item 2). 0: none */
    double      ckpt_every_s;   /* > 0: the same, whenever this many seconds have passed since
                                   the last checkpoint (either kind). 0: none */
    const char *resume;         /* NULL, or a checkpoint to continue from */
    void      (*progress)(void *arg, const struct dse_train_progress *p);
    void       *progress_arg;
    double      progress_every_s; /* > 0: progress is also called within an epoch once this
                                     many seconds have passed since its last call (for a log,
                                     where a slow epoch's 10 steps may take minutes); 0: every
                                     10 steps and at each epoch's last step only. dse train and
                                     dse sweep: DSE_TRAIN_PROGRESS_EVERY_S unless told */
    int         stop_after_epoch; /* 0: train to `epochs`; k (1 <= k < epochs): return after
                                     epoch k (its checkpoint written) with status "paused". The
                                     learning-rate schedule still spans `epochs`, so a run
                                     resumed from that checkpoint is the uninterrupted run
                                     (successive halving pauses candidates at rungs this way) */
    int       (*cancel)(void *arg); /* NULL, or asked with progress_arg before every iteration:
                                     nonzero stops the run at once with status "cancelled" and
                                     no checkpoint (a sweep worker that lost its lease) */
    struct dse_model_device_opts dev; /* where the model runs (issue #6); zeroed (the default):
                                     the CPU. On a CUDA device conv_algo is not used (cuDNN's
                                     find chooses; conv_cache pins its choices); checkpoints have
                                     the same format and value order on every device */
    struct dse_dist *dist;      /* NULL or a group of one: alone. Else data-parallel (issue
                                   #17, engine/dist.h): this process is one of P ranks; each
                                   trains on its share of every batch of `batch` (the global
                                   batch, split by its slices, engine/slices.h; batch >= P), the gradients
                                   are summed as `reduce` says and every rank steps with the
                                   sum. Every rank reads the same data in the same order, so
                                   shuffling, augmentation and dropout are one process's;
                                   every rank evaluates, rank 0 alone writes checkpoints and
                                   conv choices. Every rank must be given the same net and
                                   options (checked at the start by a hash) */
    enum dse_dist_reduce reduce;
    void      (*note)(void *arg, enum dse_train_note kind, const char *text);
                                  /* NULL, or told (with progress_arg) what the user should
                                     hear once, as it happens, and what kind of news it is */
    void      (*grad_hook)(void *arg, struct dse_model *m);
    void       *grad_hook_arg;    /* NULL, or called with grad_hook_arg every step after
                                     backward (and the ranks' sum), before clipping and SGD, to
                                     change the gradients (issue #35: Deep Compression's masked
                                     retraining and codebook fine-tuning, engine/compress.c). CPU
                                     only: a device with a hook is DSE_ERR_UNSUPPORTED */
};

/* Defaults: the recipe's rows of engine/train.def, DSE_TRAIN_DATA_DEFAULT, 1 thread,
 * conv_algo auto; the rest zero. Why this recipe and not SqueezeNet's own Caffe one (which
 * stays at chance for the first epochs on Fashion-MNIST), with the runs: docs/training.md. */
void dse_train_opts_default(struct dse_train_opts *o);

struct dse_train_result {
    char     status[16];        /* "done", "diverged"; "paused" (stop_after_epoch), "cancelled" */
    int      epochs_done;
    int64_t  clipped_steps;     /* steps whose gradients were clipped (clip_norm), this run */
    int      diverged_epoch;    /* 1-based; 0 if not diverged */
    int64_t  diverged_iter;     /* iteration within that epoch, 0-based */
    float    loss, top1, top5;  /* test metrics after the last epoch done */
    double   img_per_s;         /* training images per second, evaluation excluded */
    double   seconds;
    size_t   engine_bytes;      /* measured: what the model allocated (arena, parameters,
                                   momentum, node state, workspace). Not model_bytes, which
                                   everywhere else means the model file: (params + buffers) x 4 */
    uint64_t seed;
    int      n_epochs;
    int      dist_broken;       /* data-parallel (o->dist): the error returned came after the ranks'
                                   setup, on this rank only, so the others may be waiting for it in
                                   a sum: the caller ends the group (dse_dist_abort). An error in the
                                   setup (data, network, checkpoint) is every rank's, the same, and
                                   leaves dist_broken 0 */
    struct dse_epoch_result epochs[DSE_TRAIN_EPOCHS_MAX]; /* the first n_epochs are set */
};

/* Train net. A diverged run (NaN or infinite loss or weights) is not an error: it returns
 * DSE_OK with status "diverged" and where it happened. Errors: bad options, missing or
 * corrupt data or checkpoint, layers the engine cannot run. */
enum dse_status dse_train_run(const struct dse_net *net, const struct dse_train_opts *o,
                              struct dse_train_result *r, struct dse_err *err);

/* A checkpoint evaluated on the test split of o->data (o->data, data_root, batch, threads,
 * limit_test, dev, conv_algo as for training; the evaluation box the checkpoint records;
 * the same evaluation batches training reported): test loss, top-1, top-5 and per class the images and the top-1 hits. The
 * network must be the checkpoint's (DSE_ERR_IO otherwise, naming the tensor that differs).
 * class_n and class_hits are malloc'd: dse_eval_result_free. */
struct dse_eval_result {
    float loss, top1, top5;
    int   images, classes, unpredicted;
    int  *class_n, *class_hits;   /* [classes] */
};
enum dse_status dse_eval_run(const struct dse_net *net, const struct dse_train_opts *o, const char *checkpoint,
                             struct dse_eval_result *r, struct dse_err *err);
void dse_eval_result_free(struct dse_eval_result *r);

/* The learning rate at iteration `it` (0-based, over all epochs) of `iters` in total. */
float dse_train_lr(const struct dse_train_opts *o, int64_t it, int64_t iters, int iters_per_epoch);

/* What a checkpoint records beside the values, so that an evaluated or exported model
 * means what it meant in training: the data it was trained on, its classes' names and the
 * input normalization. Any part may be empty. */
struct dse_ckpt_meta {
    char                  data[256];    /* the --data given ("fashion-mnist", a pack's path) */
    uint64_t              seed;
    struct dse_data_norm  norm;         /* c = 0: none recorded */
    int                   classes;      /* 0: none recorded */
    const char          (*class_names)[64]; /* [classes] or NULL; borrowed */
    float                 eval_center;  /* image data: the centred box evaluation takes
                                           (dse_data_image_eval); 0: none recorded */
    struct dse_ckpt_partial {           /* a checkpoint within an epoch (issue #18 item 2):
                                           the epoch's tally so far, so that a run resumed
                                           from it reports the epoch the uninterrupted run
                                           does; steps 0: at an epoch's end */
        double  loss_sum;               /* the epoch's step losses added so far (in step order) */
        int64_t steps, clipped;
    } partial;
};

/* What a checkpoint says about itself (dse predict, dse eval, export): format 2's text
 * block read back; a format-1 file gives version 1 and nothing else. */
struct dse_ckpt_info {
    int                  version, next_epoch;
    int64_t              iter;
    struct dse_ckpt_partial partial;   /* steps 0: written at an epoch's end */
    uint64_t             seed;
    char                 data[256];
    struct dse_data_norm norm;         /* c = 0: not recorded */
    float                eval_center;  /* 0: not recorded */
    int                  classes;      /* 0: not recorded */
    char               (*class_names)[64]; /* [classes] or NULL; owned: free() it */
    int                  in_c, in_h, in_w; /* the network's input ("input" line); 0: not recorded */
    int                  outputs;      /* its classifier's (the last conv or fc "layer" line); 0: none */
};

/* Read path's header and text block (not the values). Errors: missing file, bad magic,
 * truncated header, a text block that does not parse (DSE_ERR_IO naming the line). */
enum dse_status dse_checkpoint_info(const char *path, struct dse_ckpt_info *out, struct dse_err *err);

/* Checkpoints (format 2, docs/checkpoint.md byte by byte): parameters, momentum,
 * batchnorm running statistics, the dropout RNG, the next epoch and the iteration,
 * zlib-compressed, after a header and a text block naming every tensor (layer, role,
 * shape) and meta (NULL: none); one CRC-32 covers the header, the text and the values.
 * Written atomically (temp file, fsync, rename). Loading reads formats 1 and 2; a
 * checkpoint whose magic, version, network (named by its first differing tensor), sizes,
 * CRC or counters do not fit is reported, never loaded. */
enum dse_status dse_checkpoint_save(const struct dse_model *m, int next_epoch, int64_t iter,
                                    const struct dse_ckpt_meta *meta, const char *path, struct dse_err *err);
enum dse_status dse_checkpoint_load(struct dse_model *m, const char *path, int *next_epoch,
                                    int64_t *iter, struct dse_err *err);

/* The CPU context's conv strategy choices as text ("16 key ints, algo_fwd, algo_bwd" per
 * line; engine/conv_cache.c), and back: a missing file loads nothing; a line that does not
 * parse is an error. save writes the ctx's own choices (not spare ones); load adds the
 * file's, which the ctx then uses as its own; offer adds them as spare: used (and then saved
 * as the ctx's) only by a shape that asks for one, instead of timing it; merge adds the
 * ctx's own to the file's under a lock (path.lock), the file's winning, for caches that
 * several processes share; offer and merge skip a line that does not parse (merge then
 * writes the file without it). */
enum dse_status dse_conv_cache_save(const struct dse_cpu_ctx *cx, const char *path, struct dse_err *err);
enum dse_status dse_conv_cache_load(struct dse_cpu_ctx *cx, const char *path, struct dse_err *err);
enum dse_status dse_conv_cache_offer(struct dse_cpu_ctx *cx, const char *path, struct dse_err *err);
enum dse_status dse_conv_cache_merge(const struct dse_cpu_ctx *cx, const char *path, struct dse_err *err);
/* This machine's cache of choices for `threads` threads into path: $XDG_CACHE_HOME/dse (or
 * ~/.cache/dse)/conv-v5-<CPU>-<BLAS kernels>-t<threads>.txt, its folder made. 0, or -1 where
 * there is no such folder (no HOME) or it cannot be made. */
int dse_conv_cache_machine(int threads, char *path, int size);

#endif
