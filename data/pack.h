/* pack.h: image folders and packs (issue #13). A folder in torchvision's ImageFolder
 * layout (DIR/train/<class>/<image>.jpg|png, DIR/val/ or DIR/test/) is scanned, decoded once on
 * every core into one random-access file (a pack: records of raw pixels or re-encoded
 * JPEG, an index with a CRC-32 per record, class names, per-channel statistics), then
 * memory-mapped and fed by a pool of threads that decode, crop, flip and normalize
 * (data/data.h: dse_loader_new_pack). docs/data.md has the byte layout and the rules.
 * Outside data/, reached through data/data.h (tests/layering.sh). */
#ifndef DSE_DATA_PACK_H
#define DSE_DATA_PACK_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "data/image.h"

#define DSE_PACK_MAGIC      "DSEPACK1"
#define DSE_PACK_VERSION    1u
#define DSE_PACK_HEADER     512          /* header bytes at the start of the file */
#define DSE_PACK_CLASS_MAX  64           /* bytes of a class name, NUL included */
#define DSE_PACK_SPLITS     2            /* train, then val (or test) */

enum dse_pack_format { DSE_PACK_RAW = 0, DSE_PACK_JPEG = 1 };
/* dse data pack's format unless told: raw where the short side is resized to at most this
 * many pixels (small records, no decoding when read), JPEG above it and at the original size. */
#define DSE_PACK_RAW_SIDE_MAX 64
enum dse_pack_split  { DSE_PACK_TRAIN = 0, DSE_PACK_VAL = 1 };

/* ---- scanning a folder ---------------------------------------------------------------- */

struct dse_imgfolder_item {
    char *path;   /* owned */
    int   label;  /* index into class_names */
    int   split;  /* enum dse_pack_split */
};

struct dse_imgfolder {
    char  root[1024];
    char  val_name[8];        /* "val" or "test": the evaluation split's folder; "" if none */
    int   classes;
    char (*class_names)[DSE_PACK_CLASS_MAX]; /* [classes], sorted by name (byte order) */
    int   n, cap;
    struct dse_imgfolder_item *items;        /* train items, then val items; each split
                                                sorted by class, then by path */
    int   count[DSE_PACK_SPLITS];
    int   ignored;            /* files without an image extension, skipped */
    uint64_t fingerprint;     /* FNV-1a over every item's path, size and mtime */
};

/* 1 if dir looks like an image folder: it holds a train/ subfolder. */
int dse_imgfolder_is(const char *dir);

/* Scan dir as torchvision's ImageFolder does: classes are the subfolders of dir/train
 * sorted by name; images are the files below each class folder (recursively, sorted)
 * whose name ends in .jpg, .jpeg, .png, .bmp, .ppm, .pgm, .tif, .tiff or .webp (any case),
 * the kinds torchvision's ImageFolder takes. The evaluation split is dir/val, or
 * dir/test if there is no val; its classes must be classes of train. Hidden entries (names
 * starting with '.', such as .ipynb_checkpoints) are left out; torchvision would take a
 * hidden folder as a class. Links are followed, but no folder twice (device and inode, as
 * find -L): the root, train/, val/ and every class folder count as entered before the walk.
 * Errors (DSE_ERR_IO): no train/ folder; a class folder with no
 * images; only one class; a val class that train lacks; a class name of DSE_PACK_CLASS_MAX bytes or more
 * or holding a control character (shown escaped: a newline would add checkpoint lines). err->file
 * is dir (borrowed) and the message starts with the subfolder at fault ("train/cat: ...").
 * *out is caller storage; dse_imgfolder_deinit frees it (also after a failure). */
enum dse_status dse_imgfolder_scan(const char *dir, struct dse_imgfolder *out, struct dse_err *err);
void dse_imgfolder_deinit(struct dse_imgfolder *f);

/* The image files of dir itself, not of its subfolders (dse predict DIR): the entries whose
 * name ends as dse_imgfolder_scan's images do, hidden ones left out, sorted by name in byte
 * order, each as "dir/name". *paths is malloc'd strings in a malloc'd array, freed by
 * dse_imgfolder_files_free; a folder with no image gives *n = 0 and no error. Errors:
 * DSE_ERR_IO (dir cannot be read; err->file is dir, borrowed), DSE_ERR_NOMEM; *paths is then
 * NULL. */
enum dse_status dse_imgfolder_files(const char *dir, char ***paths, int *n, struct dse_err *err);
void dse_imgfolder_files_free(char **paths, int n);

/* ---- writing a pack ------------------------------------------------------------------ */

struct dse_pack_progress {
    int      done, total, skipped;
    uint64_t bytes;              /* record bytes written so far */
    double   seconds;
};

struct dse_pack_opts {
    int                  size;     /* short side of every stored image, 8..4096; 0: as found */
    int                  channels; /* 1 or 3 */
    enum dse_pack_format format;
    int                  quality;  /* JPEG quality 1..100 */
    int                  threads;  /* decoders; >= 1 */
    int                  skip_bad; /* 1: undecodable images are skipped and reported through
                                      bad(); 0: the first one fails the pack */
    int64_t              max_pixels; /* an image's pixel budget, checked from its header
                                      (dse_image_decode); 0: DSE_IMAGE_PIXELS_DEFAULT */
    void (*progress)(void *arg, const struct dse_pack_progress *p); /* ~2 a second; NULL */
    void (*bad)(void *arg, const char *path, const char *why);     /* skip_bad; NULL */
    void  *arg;
    volatile sig_atomic_t *cancel; /* NULL, or set nonzero (from a signal handler, say) to stop:
                                      the pack ends with DSE_ERR_IO "interrupted", its
                                      temporary file removed */
};

/* Defaults: short side 256, 3 channels, JPEG of quality 90, one thread per core. */
void dse_pack_opts_default(struct dse_pack_opts *o);

struct dse_pack_summary {
    int      records[DSE_PACK_SPLITS];
    int      skipped;
    uint64_t bytes;              /* the file's size */
    double   seconds;
};

/* Pack a scanned folder into out_path: records decoded (dse_image_decode), resized so the
 * short side is opts->size (dse_image_resize over the whole image), stored raw or as
 * JPEG, in the folder's order, on opts->threads threads. The file is written as
 * out_path.tmp.<pid>, synced and renamed: a killed pack never leaves a file at out_path,
 * and an old pack there stays until the new one is complete. A pack stopped by an error or
 * by opts->cancel removes its temporary file; one killed outright leaves it, and the next
 * pack to the same out_path removes temporary files whose process is gone. Errors about
 * writing name out_path (err->file) and the temporary file in the message. A bad image without
 * skip_bad is DSE_ERR_IO with err->file = its path. A split left with
 * no image, or a class of train left with no image, is DSE_ERR_IO too. */
enum dse_status dse_pack_write(const struct dse_imgfolder *f, const char *out_path,
                               const struct dse_pack_opts *opts, struct dse_pack_summary *sum,
                               struct dse_err *err);

/* ---- reading a pack ------------------------------------------------------------------ */

struct dse_pack_record {
    uint64_t offset;     /* from the start of the file */
    uint32_t bytes;
    uint16_t w, h;
    uint32_t label;
    uint32_t crc;        /* CRC-32 (zlib) of the record's bytes */
};

struct dse_pack {
    char                  path[1024];
    int                   version;     /* the file's format version */
    int                   fd;
    const uint8_t        *map;         /* the whole file, read-only */
    size_t                size;
    enum dse_pack_format  format;
    int                   channels, short_side, quality, classes, n;
    int                   first[DSE_PACK_SPLITS], count[DSE_PACK_SPLITS];
    char                  split_name[DSE_PACK_SPLITS][8];
    float                 mean[4], std[4]; /* of v / 255 per channel, over the train split */
    uint64_t              fingerprint;     /* the source folder's, when it was packed */
    const struct dse_pack_record *index;   /* [n], in the map */
    char                (*class_names)[DSE_PACK_CLASS_MAX]; /* [classes], owned */
};

/* Open and check a pack: magic, version (a newer one is refused naming both versions),
 * the header's CRC-32, the index's CRC-32, every record inside the data, every label
 * below the class count and no class name holding a control character. Records' own CRCs
 * are checked when they are read. Errors are DSE_ERR_IO with err->file = path. *out is heap-allocated;
 * dse_pack_close frees it. */
enum dse_status dse_pack_open(const char *path, struct dse_pack **out, struct dse_err *err);
void dse_pack_close(struct dse_pack *p); /* accepts NULL */

/* 1 if the file at path starts with the pack magic. */
int dse_pack_is(const char *path);

/* 1 if path is to be read as a pack: it starts with the magic, or it is an existing file
 * whose name ends in ".pack" (dse_pack_open then says what is wrong with it, rather than
 * the caller taking it for a dataset name). */
int dse_pack_named(const char *path);

/* Record i (0..n-1, over both splits) as pixels: a raw record is copied, a JPEG record
 * decoded (im->c = p->channels). Its CRC-32 is checked first: a mismatch is DSE_ERR_IO
 * naming the pack and the record. */
enum dse_status dse_pack_image(const struct dse_pack *p, int i, struct dse_image *im,
                               struct dse_err *err);

/* Check every record's CRC-32 (and that JPEG records decode when decode is 1). Reports
 * the first failure. */
enum dse_status dse_pack_verify(const struct dse_pack *p, int decode, struct dse_err *err);

#endif
