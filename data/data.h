/* data.h: training data for the engine: IDX (MNIST, Fashion-MNIST) and CIFAR-10/100
 * binary files read into memory, per-channel normalization, random crop and flip,
 * per-epoch shuffling, and a loader that prepares the next batch in a background thread.
 * Everything random comes from PCG32 seeded by the caller: the same seed gives the same
 * bytes, and epoch k can be reproduced without replaying epochs 0..k-1. docs/data.md has
 * the larger picture (where files are looked up, the formats, the loader's threading).
 * The data library's door (data/README.md): code outside data/ includes this header (it
 * brings pack.h and image.h) or synth.h, never the others (tests/layering.sh). */
#ifndef DSE_DATA_H
#define DSE_DATA_H

#include <stdint.h>

#include "base/base.h"
#include "base/pcg32.h"
#include "data/pack.h"

#define DSE_DATA_MAX_CHANNELS 4
#define DSE_DATA_MAX_FILES    6     /* CIFAR-10 has 5 training batches */
#define DSE_DATA_PATH_MAX     1024
#define DSE_DATA_ROOT         "/usr/share/datasets" /* where Debian's dataset-* packages install */

/* ---- the in-memory dataset ---------------------------------------------------------- */

struct dse_dataset {
    int      n;        /* images */
    int      c, h, w;  /* channels, rows, columns of every image */
    int      classes;  /* every label is in 0..classes-1 */
    uint8_t *pixels;   /* [n, c, h, w], owned */
    int     *labels;   /* [n], owned */
};

/* An empty dataset of n images (pixels and labels zeroed), for tests and synthetic data.
 * n >= 1, 1 <= c <= DSE_DATA_MAX_CHANNELS, h, w >= 1, classes >= 1; anything else is
 * DSE_ERR_CONFIG. On failure *out is NULL. */
enum dse_status dse_dataset_new(int n, int c, int h, int w, int classes,
                                struct dse_dataset **out, struct dse_err *err);
void dse_dataset_free(struct dse_dataset *d); /* accepts NULL */

/* --limit-train N: keep only the first n images in file order (the rest are dropped, the
 * memory is kept). File order is the deterministic choice: Fashion-MNIST's training file
 * is already in random order with balanced classes (its first 10,000 images hold 942 to
 * 1,027 of each class). n larger than d->n keeps everything. n < 1 is DSE_ERR_CONFIG. */
enum dse_status dse_dataset_limit(struct dse_dataset *d, int n, struct dse_err *err);

/* ---- reading files ------------------------------------------------------------------ */

/* Read an IDX image file (magic 0x00000803, unsigned bytes, [n, rows, cols]) and its IDX
 * label file (magic 0x00000801, [n]), each gzip-compressed or not (zlib reads both).
 * classes > 0: every label must be below it; classes == 0: classes = largest label + 1.
 * A missing, truncated, corrupt or mismatched file is DSE_ERR_IO with err->file set to
 * that path (borrowed: the caller's string) and a message saying what is wrong, e.g.
 *   truncated: expected 47040016 bytes (16-byte header + 60000 images of 28x28), got 1000
 * On failure *out is NULL and nothing leaks. */
enum dse_status dse_data_read_idx(const char *images_path, const char *labels_path,
                                  int classes, struct dse_dataset **out, struct dse_err *err);

/* Read CIFAR binary batches (gzip-compressed or not) and concatenate them in the order
 * given. classes = 10: records of 1 label byte + 3072 pixel bytes (3x32x32, R, G, B
 * planes, rows top to bottom). classes = 100: records of a coarse label (0..19), a fine
 * label (0..99) and 3072 pixel bytes; the fine label is kept. Any number of records per
 * file (the real files hold 10,000, or 50,000 for CIFAR-100's train.bin); a file that is
 * empty, not a whole number of records or holds a label out of range is DSE_ERR_IO with
 * err->file = that path. On failure *out is NULL. */
enum dse_status dse_data_read_cifar(const char *const *paths, int npaths, int classes,
                                    struct dse_dataset **out, struct dse_err *err);

/* ---- finding a dataset by name ------------------------------------------------------- */

enum dse_data_format { DSE_DATA_FORMAT_IDX, DSE_DATA_FORMAT_CIFAR10, DSE_DATA_FORMAT_CIFAR100 };
enum dse_data_split  { DSE_DATA_SPLIT_TRAIN, DSE_DATA_SPLIT_TEST };

/* The datasets known by name: the one list that `--data`, a space's train.dataset, the
 * --help text, the errors and docs/data.md's table follow (issue #15).
 * X(name, alias, format, missing): name is the one spelling printed everywhere and the
 * folder under the data root; alias another spelling accepted for compatibility ("": none;
 * space files said "cifar10" before the CLI's "cifar-10"); format a DSE_DATA_FORMAT_ suffix;
 * missing what to tell the user when the files are not there. */
#define DSE_DATA_SETS(X)                                                                                   \
    X("fashion-mnist", "", IDX, "install it with: apt-get install dataset-fashion-mnist")                    \
    X("mnist", "", IDX,                                                                                     \
      "no Debian package ships MNIST: put its four IDX files in a directory and name that directory instead") \
    X("cifar-10", "cifar10", CIFAR10,                                                                       \
      "no Debian package ships CIFAR-10: unpack the binary version and name its cifar-10-batches-bin "       \
      "directory instead")                                                                                  \
    X("cifar-100", "cifar100", CIFAR100,                                                                    \
      "no Debian package ships CIFAR-100: unpack the binary version and name its cifar-100-binary "         \
      "directory instead")

/* The names as text, each followed by ", ": "fashion-mnist, mnist, cifar-10, cifar-100, ",
 * for messages that go on with the other kinds of SPEC. */
#define DSE_DATA_NAME_ITEM_(name, alias, format, missing) name ", "
#define DSE_DATA_NAMES_LIST DSE_DATA_SETS(DSE_DATA_NAME_ITEM_)

/* The canonical name of the dataset that spec names (a name or an alias of DSE_DATA_SETS,
 * matched without regard to case), or NULL if it names none. */
const char *dse_data_name_find(const char *spec);

/* The canonical name nearest to a misspelt spec (at most 3 edits from a name, its alias or
 * its initials form: "fmnist" for fashion-mnist, "c10" for cifar-10), or NULL: what "did you
 * mean" suggests. */
const char *dse_data_name_near(const char *spec);

/* Random crop with zero padding and horizontal flip, applied to the raw pixels before
 * normalization (the order of torchvision's RandomCrop(padding) then RandomHorizontalFlip):
 * the image is padded with crop_pad pixels of value 0 on every side and an h x w window is
 * cut at a uniform random offset; then, if flip, it is mirrored left-right with
 * probability 1/2. All zero: no augmentation (and no random draws). */
struct dse_data_aug {
    int crop_pad; /* 0..min(h, w); 0 = no crop */
    int flip;     /* 0 or 1 */
    /* Image sources only (packs and folders): random-resized-crop as torchvision's
     * RandomResizedCrop: a box of a random fraction of the area (scale) and aspect ratio
     * (ratio, drawn log-uniform), 10 tries then a centered fallback, resized to the
     * output size. All four zero: scale 0.08..1, ratio 3/4..4/3. */
    int   rrc;
    float scale_min, scale_max, ratio_min, ratio_max;
};

struct dse_data_split_files {
    int  n;                                         /* files used */
    char path[DSE_DATA_MAX_FILES][DSE_DATA_PATH_MAX]; /* IDX: [0] images, [1] labels;
                                                     * CIFAR: the batch files, in order */
};

struct dse_data_files {
    char                        name[64];    /* "fashion-mnist", "mnist", "cifar-10", ... */
    enum dse_data_format        format;
    int                         classes;     /* 10 or 100; the caller may change it (IDX) */
    struct dse_data_aug         aug_default; /* flip off for (Fashion-)MNIST, pad 4 + flip for CIFAR */
    struct dse_data_split_files train, test;
};

/* What `--data SPEC` means. SPEC is a dataset name or a directory:
 *   fashion-mnist   ROOT/fashion-mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]
 *                   (Debian's dataset-fashion-mnist; if missing, the error says
 *                   "install it with: apt-get install dataset-fashion-mnist")
 *   mnist           ROOT/mnist/, the same file names
 *   cifar-10        ROOT/cifar-10/ holding data_batch_{1..5}.bin and test_batch.bin
 *   cifar-100       ROOT/cifar-100/ holding train.bin and test.bin
 *   a directory     holding any of those sets of files (or, for CIFAR, the
 *                   cifar-10-batches-bin/ or cifar-100-binary/ folder the archives unpack to)
 * (the names and aliases of DSE_DATA_SETS; out->name is the canonical spelling). Names are
 * matched without regard to case, and win over a directory of the same name (write ./mnist
 * for the directory). ROOT is root, or DSE_DATA_ROOT if root is NULL.
 * A file "x" is looked up as "x", then
 * "x.gz". Nothing is ever downloaded. Fills *out (caller storage) with the paths found;
 * checks only that the files exist. Unknown names are DSE_ERR_CONFIG (with a suggestion),
 * missing files DSE_ERR_IO with err->file naming the file. */
enum dse_status dse_data_locate(const char *spec, const char *root, struct dse_data_files *out,
                                struct dse_err *err);

/* Read one split of a located dataset. err->file names the file at fault on failure. */
enum dse_status dse_data_load(const struct dse_data_files *f, enum dse_data_split split,
                              struct dse_dataset **out, struct dse_err *err);

/* The class names of a named dataset with that many classes (Fashion-MNIST's ten, as its
 * authors list them; MNIST's digits; CIFAR-10's), or NULL (CIFAR-100 and directories carry
 * none here). Label k is entry k. */
const char (*dse_data_class_names(const char *name, int classes))[64];

/* ---- any source: what it holds ------------------------------------------------------- */

enum dse_data_kind { DSE_DATA_KIND_TENSOR = 0, DSE_DATA_KIND_PACK, DSE_DATA_KIND_FOLDER };

/* What `--data SPEC` holds, without loading it: a dataset name or IDX/CIFAR directory
 * (kind TENSOR: fixed-size images, c x h x w), an image pack (SPEC is a file starting with
 * the pack magic, or an existing file named *.pack, which must then be one) or an image folder (a directory with train/): images of any size,
 * cropped and resized to whatever the network takes (h = w = 0). */
struct dse_data_info {
    enum dse_data_kind kind;
    char               name[64];  /* "fashion-mnist", or the pack's or folder's file name */
    int                c, h, w;   /* h = w = 0 for images of any size */
    int                classes;
    int                n_train, n_test;
};

/* Fill *out for SPEC (root as for dse_data_locate). A folder is scanned (its images are
 * not decoded: c is 3); a pack's header and index are checked. Errors as the readers'. */
enum dse_status dse_data_probe(const char *spec, const char *root, struct dse_data_info *out,
                               struct dse_err *err);

/* Augmentation of image sources, by name: auto (rrc + flip when the images' short side is
 * above 64 pixels, as ImageNet recipes; else random crop with 4 pixels of padding + flip, as
 * CIFAR recipes), rrc, crop (pad 4), flip, none. */
#define DSE_AUG_MODES(X) \
    X(AUTO, "auto")      \
    X(RRC,  "rrc")       \
    X(CROP, "crop")      \
    X(FLIP, "flip")      \
    X(NONE, "none")

enum dse_aug_mode {
#define DSE_AUG_ENUM(e, name) DSE_AUG_##e,
    DSE_AUG_MODES(DSE_AUG_ENUM)
#undef DSE_AUG_ENUM
};

/* "auto rrc crop flip none": the names in enum order (dse_word_index gives the value), as
 * --aug's usage and refusal print them: each name after a space, the first space skipped. */
#define DSE_AUG_WORD(e, name) " " name
#define DSE_AUG_NAMES (&(DSE_AUG_MODES(DSE_AUG_WORD))[1])

/* The training augmentation of mode for images whose short side is `short_side`, and the
 * evaluation's centered box (opts.center): 0.875 after rrc, 1 otherwise. */
void dse_data_aug_of(enum dse_aug_mode mode, int short_side, struct dse_data_aug *aug, float *center);

/* ---- preprocessing ------------------------------------------------------------------ */

/* Per-channel normalization: x = (pixel / 255 - mean[ch]) / std[ch], in float.
 * c == 0 means none: x = pixel / 255. */
struct dse_data_norm {
    int   c;
    float mean[DSE_DATA_MAX_CHANNELS];
    float std[DSE_DATA_MAX_CHANNELS];
};

/* ImageNet's per-channel statistics (torchvision's: mean 0.485, 0.456, 0.406, std 0.229,
 * 0.224, 0.225; for 1 channel their luma-weighted mean, 0.449 and 0.226), for images read
 * straight from a folder, which carries no statistics of its own. c is 1 or 3. */
void dse_data_norm_imagenet(int c, struct dse_data_norm *out);

/* The statistics a pack stores (its train split's mean and std per channel). */
void dse_data_norm_of_pack(const struct dse_pack *p, struct dse_data_norm *out);

/* Mean and (population) standard deviation of pixel / 255 per channel over all images of d,
 * from exact integer sums, so the result does not depend on thread count or order.
 * A channel with std 0 (constant) gets std 1. Fashion-MNIST's training set: 0.2860406,
 * 0.3530242. */
void dse_data_norm_of(const struct dse_dataset *d, struct dse_data_norm *out);

/* The random generators of epoch `epoch` (>= 0) for a run seeded with `seed`: one PCG32
 * stream for the shuffle, another for augmentation, both chosen from (seed, epoch) alone,
 * so a resumed run reproduces epoch k exactly. */
void dse_data_rng_shuffle(struct dse_pcg32 *r, uint64_t seed, int epoch);
void dse_data_rng_aug(struct dse_pcg32 *r, uint64_t seed, int epoch);

/* perm[0..n-1] = a uniformly random permutation of 0..n-1 (Fisher-Yates, drawing from
 * dse_data_rng_shuffle(seed, epoch)). Deterministic for (n, seed, epoch). */
void dse_data_shuffle(int *perm, int n, uint64_t seed, int epoch);

/* Build one batch: images idx[0..count-1] of d, augmented by aug (NULL or all zero: none,
 * and rng is not touched; otherwise rng must be non-NULL and is advanced: per image, crop
 * row then column offset if crop_pad, then the flip bit if flip) and normalized by norm
 * (NULL: none). This is the synchronous reference the loader's thread runs.
 * x: [count, C, H, W]   labels: [count]. norm->c must be 0 or d->c. */
void dse_data_batch(const struct dse_dataset *d, const int *idx, int count,
                    const struct dse_data_aug *aug, const struct dse_data_norm *norm,
                    struct dse_pcg32 *rng, float *x, int *labels);

/* ---- the loader ---------------------------------------------------------------------- */

struct dse_loader_opts {
    int                  batch;    /* images per batch, >= 1 */
    int                  shuffle;  /* 1: dse_data_shuffle(seed, epoch) order; 0: file order */
    struct dse_data_aug  aug;      /* all zero: none (evaluation) */
    struct dse_data_norm norm;     /* c == 0: x = pixel / 255 */
    uint64_t             seed;
    int                  synchronous; /* 0 (default): prepare the next batch in a background
                                       * thread; 1: build each batch inside dse_loader_next,
                                       * no thread. Both give the same bytes. */
    /* Image sources only (dse_loader_new_pack, dse_loader_new_folder): */
    int                  out_h, out_w; /* every image is cropped and resized to this (the
                                          network's input) */
    float                center;   /* without rrc: the centered box keeps this fraction of the
                                      short side (0: 0.875, torchvision's Resize(256) +
                                      CenterCrop(224); 1: the whole short side) */
    int                  workers;  /* decoding threads; 0: one per core */
    int                  prefetch; /* batches built ahead of the caller; 0: 3 */
    int                  limit;    /* 0: every image of the split; N: the first N of a fixed
                                      shuffle of it (seed 0): classes about in proportion, not
                                      the first one or two classes of the file order */
    int                  decode_min_short; /* folders: JPEGs may decode at 1/2..1/8 size while
                                      their short side stays >= this (0: full size) */
    int64_t              max_pixels; /* folders: an image's pixel budget (dse_image_decode);
                                      0: DSE_IMAGE_PIXELS_DEFAULT */
};

struct dse_loader;

/* A loader over d. Borrows d: it must outlive the loader and must not change while the
 * loader exists (the background thread reads it). opts is copied. Bad options (batch < 1,
 * crop_pad out of range, flip not 0/1, norm.c not 0 or d->c, std <= 0) are
 * DSE_ERR_CONFIG; failing to start the thread is DSE_ERR_INTERNAL. On failure *out is NULL.
 *
 * Threading: unless opts.synchronous, the loader owns one worker thread, started here and
 * joined in dse_loader_free. The worker alone touches the permutation and the
 * augmentation RNG; it fills two internal batch buffers in turn and hands them over under
 * a mutex, so it builds batch k+1 while the caller computes on batch k. The loader object
 * itself is not thread-safe: create it, call start_epoch/next and free it from one thread
 * (or serialize those calls). */
enum dse_status dse_loader_new(const struct dse_dataset *d, const struct dse_loader_opts *opts,
                               struct dse_loader **out, struct dse_err *err);

/* A loader over split `split` (DSE_PACK_TRAIN or DSE_PACK_VAL) of an image pack, or
 * of a scanned image folder read and decoded file by file. Borrows the source. Each
 * image's random draws come from its own PCG32 stream chosen by (seed, epoch, position in
 * the epoch), so the bytes do not depend on the number of workers. Per image, in order:
 * the pixels (a pack's record, a folder's file decoded), the box (rrc: torchvision's
 * draws; else centered, `center` of the short side, the output's aspect), the box
 * resized to out_w x out_h (dse_image_resize), then the crop offsets (crop_pad) and the
 * flip bit drawn and applied as for in-memory datasets, then normalization. A pack's
 * channel count must equal norm.c when norm.c > 0. Errors while loading (a record that
 * fails its CRC, a file that no longer decodes) end the epoch early: dse_loader_next
 * returns 0 and dse_loader_status reports the error. */
enum dse_status dse_loader_new_pack(const struct dse_pack *p, int split, const struct dse_loader_opts *opts,
                                    struct dse_loader **out, struct dse_err *err);
enum dse_status dse_loader_new_folder(const struct dse_imgfolder *f, int split, int channels,
                                      const struct dse_loader_opts *opts, struct dse_loader **out,
                                      struct dse_err *err);

/* One image as evaluation sees it (dse predict): the centred box with the output's aspect
 * covering `center` of the short side (0: 0.875), resized to out_w x out_h, normalized by
 * norm (NULL or c = 0: pixel / 255) into x: [im->c, out_h, out_w]. tmp and w are scratch,
 * reused across calls. The same steps as an image source's evaluation batches. */
enum dse_status dse_data_image_eval(const struct dse_image *im, int out_h, int out_w, float center,
                                    const struct dse_data_norm *norm, struct dse_image *tmp,
                                    struct dse_image_work *w, float *x, struct dse_err *err);

/* DSE_OK, or the first error met while loading (image sources; err->file names the
 * file at fault). */
enum dse_status dse_loader_status(const struct dse_loader *l, struct dse_err *err);

/* Images in one epoch. */
int dse_loader_images(const struct dse_loader *l);

/* Begin epoch `epoch` (>= 0): order dse_data_shuffle(n, seed, epoch) if shuffle, else
 * 0..n-1; augmentation draws from dse_data_rng_aug(seed, epoch). Any batch of the
 * previous epoch not yet taken is discarded. Epochs may be started in any order. */
void dse_loader_start_epoch(struct dse_loader *l, int epoch);

/* Copy the next batch of the current epoch into x: [batch, C, H, W] and labels: [batch]
 * (caller-owned, room for a full batch) and set *count to the images in it. Every batch
 * is full except the epoch's last, which holds the n % batch remaining images when batch
 * does not divide n (it is returned, not dropped). Returns 1 if a batch was written, 0
 * (with *count = 0) once the epoch is exhausted or before the first start_epoch. */
int dse_loader_next(struct dse_loader *l, float *x, int *labels, int *count);

/* Batches in one epoch: ceil(n / batch). */
int dse_loader_batches(const struct dse_loader *l);

/* Stops and joins the worker thread; accepts NULL. Does not free the dataset. */
void dse_loader_free(struct dse_loader *l);

#endif
