/* compress.h: Deep Compression (Han et al., 2016; issue #35) of a trained model: per-layer
 * magnitude pruning with masked retraining, k-means weight sharing with codebook fine-tuning,
 * Huffman coding of the codebook indices and of the relative sparse indices, and the .dsez
 * file that holds the result. The method and its defaults: docs/compress.md; the file byte by
 * byte: docs/dsez.md. Its settings are engine/compress.def's rows. */
#ifndef DSE_ENGINE_COMPRESS_H
#define DSE_ENGINE_COMPRESS_H

#include <stdint.h>

#include "engine/train.h"

/* ---- The file (engine/dsez.c) ---------------------------------------------------------- */

/* One stored tensor, in checkpoint order: every parameter (its values; momentum is not
 * stored), then every node's running mean and variance. bits 0: raw float32 values (biases,
 * batchnorm, anything not weight-shared); bits 1..16: value i is codebook[index[i]], where
 * codebook[0] is 0.0 (a pruned weight, or the filler zero of a gap the sparse index cannot
 * span) and codebook_n <= 1 << bits. */
struct dse_dsez_tensor {
    char      layer[DSE_NAME_MAX], role[16]; /* as a checkpoint's text block names the tensor */
    int64_t   count;                  /* values */
    int       bits;                   /* 0: raw */
    int       codebook_n;             /* bits > 0 */
    float    *codebook;               /* [codebook_n], bits > 0 */
    uint16_t *index;                  /* [count], bits > 0 */
    float    *raw;                    /* [count], bits 0 */
    /* What the file spends on it, filled by dse_dsez_write and dse_dsez_read: */
    int64_t   nonzero;                /* values that are not 0 */
    int       sparse_bits;            /* width of the relative sparse index; 0: stored dense */
    int64_t   weight_bytes, index_bytes, codebook_bytes, raw_bytes;
};

struct dse_dsez {
    int                     n;        /* tensors */
    struct dse_dsez_tensor *t;        /* [n], malloc'd */
    struct dse_ckpt_info    info;     /* dse_dsez_read: the text block, as dse_checkpoint_info reads a
                                         checkpoint's (data, norm, classes, input, outputs) */
    int64_t                 file_bytes; /* the file's real byte count */
};

/* Write z (its tensors the model's, in checkpoint order: each checked against m by name and
 * count) with meta to path, atomically, under one CRC-32; fills every tensor's byte counts and
 * z->file_bytes. */
enum dse_status dse_dsez_write(struct dse_dsez *z, const struct dse_model *m, const struct dse_ckpt_meta *meta,
                               const char *path, struct dse_err *err);
/* Read and decode a whole file (the CRC, every stream, the text block); a flipped byte, a
 * truncated file or a stream that does not decode is DSE_ERR_IO naming path. */
enum dse_status dse_dsez_read(const char *path, struct dse_dsez *z, struct dse_err *err);
/* The same checks and byte counts (and nonzero), but a sparse tensor's index is left NULL: what
 * dse analyze --compressed needs, in memory bounded by the file's size (a file's header can
 * claim far more values than it holds bytes; dse_dsez_load bounds them by the model instead). */
enum dse_status dse_dsez_read_sizes(const char *path, struct dse_dsez *z, struct dse_err *err);
void            dse_dsez_free(struct dse_dsez *z);
/* 1 if path starts with the .dsez magic, else 0 (missing, unreadable, another kind). */
int             dse_dsez_is(const char *path);
/* Decode path into m: parameters (the pruned zeros included) and running statistics, momentum
 * zeroed. A file of another network is DSE_ERR_IO naming the first tensor that differs, as for a
 * checkpoint, found from its text block before any stream is decoded. dse_dsez_info reads the
 * header and the text block only (the CRC checked). dse_checkpoint_load and dse_checkpoint_info call these for a file with the .dsez
 * magic, so dse eval, predict and export take a .dsez wherever they take a checkpoint. */
enum dse_status dse_dsez_load(struct dse_model *m, const char *path, struct dse_err *err);
enum dse_status dse_dsez_info(const char *path, struct dse_ckpt_info *out, struct dse_err *err);

/* ---- Compressing (engine/compress.c) ---------------------------------------------------- */

/* A layer's own density, overriding dse_net_prune_density's rule (metaparams/net.h). */
struct dse_compress_layer {
    char   layer[DSE_NAME_MAX];
    double density;                   /* (0, 1] */
};

#define DSE_COMPRESS_CTYPE_INT  int
#define DSE_COMPRESS_CTYPE_REAL double
#include "engine/compress.def"

struct dse_compress_opts {
    struct dse_train_opts train;      /* the data, recipe, threads, device, seed and progress of the
                                         fine-tuning; its epochs are set from finetune per stage */
    /* engine/compress.def's rows: density, bits, finetune, ... */
#define DSE_COMPRESS_FIELD_(field, key, kind, def, lo, hi, cli, help) DSE_COMPRESS_CTYPE_##kind field;
    DSE_COMPRESS_SETTINGS(DSE_COMPRESS_FIELD_)
#undef DSE_COMPRESS_FIELD_
    const struct dse_compress_layer *layers; /* [n_layers] per-layer densities, or NULL */
    int                              n_layers;
    const char *work_dir;             /* the stages' checkpoints, so that a killed run resumes where
                                         it was; NULL: OUT.work next to OUT, removed when done (one
                                         given is kept: dse_compress_work_remove) */
    void      (*stage)(void *arg, const char *name); /* NULL, or told (with train.progress_arg) as
                                         each stage starts: "prune", "retrain", "share", "finetune",
                                         "code"; and "restart (...)" when the work folder's files were made from another checkpoint
                                         or settings and are cleared first */
};

struct dse_compress_result {
    int64_t file_bytes;               /* the .dsez's size on disk */
    int64_t float_bytes;              /* (params + buffers) x 4, the float32 model */
    double  ratio;                    /* float_bytes / file_bytes */
    double  density;                  /* achieved, over the weight-shared tensors */
    float   top1_float, top1_pruned, top1_compressed; /* test top-1 of the checkpoint, after masked
                                         retraining, of the .dsez decoded */
    double  seconds;
};

/* Remove a work folder's stage files (the stages' checkpoints and the stamp, known by name)
 * and the folder when that leaves it empty. */
void dse_compress_work_remove(const char *work);

/* Defaults: engine/compress.def's, and dse_train_opts_default's recipe. */
void dse_compress_opts_default(struct dse_compress_opts *o);

/* Compress the model of net in checkpoint into out (.dsez). Deterministic for a seed;
 * resumable from work_dir. Errors: settings out of range (DSE_ERR_CONFIG), a checkpoint of
 * another network, data, I/O. */
enum dse_status dse_compress_run(const struct dse_net *net, const char *checkpoint, const struct dse_compress_opts *o,
                                 const char *out, struct dse_compress_result *r, struct dse_err *err);

#endif
