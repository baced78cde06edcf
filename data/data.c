/* data.c: IDX and CIFAR readers (through zlib, so .gz or not), dataset lookup by name,
 * normalization, augmentation, per-epoch shuffling and the double-buffered background
 * loader. The contract of each function is in data.h; docs/data.md has the overview. */
#include "data/data.h"
#include "data/data_impl.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

/* ---- the in-memory dataset ---------------------------------------------------------- */

static size_t image_bytes(const struct dse_dataset *d) {
    return (size_t)d->c * (size_t)d->h * (size_t)d->w;
}

enum dse_status dse_dataset_new(int n, int c, int h, int w, int classes,
                                struct dse_dataset **out, struct dse_err *err) {
    *out = NULL;
    if (n < 1 || c < 1 || c > DSE_DATA_MAX_CHANNELS || h < 1 || w < 1 || h > 65536 ||
        w > 65536 || classes < 1)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "dataset shape n=%d c=%d h=%d w=%d classes=%d is out of range; "
                           "expected n, h, w, classes >= 1 and 1 <= c <= %d",
                           n, c, h, w, classes, DSE_DATA_MAX_CHANNELS);
    uint64_t bytes = (uint64_t)n * (uint64_t)c * (uint64_t)h * (uint64_t)w;
    if (bytes > (uint64_t)SIZE_MAX / 2)
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "dataset of %llu bytes is too large",
                           (unsigned long long)bytes);
    struct dse_dataset *d = calloc(1, sizeof *d);
    if (!d) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a dataset");
    d->n = n, d->c = c, d->h = h, d->w = w, d->classes = classes;
    d->pixels = calloc((size_t)bytes, 1);
    d->labels = calloc((size_t)n, sizeof *d->labels);
    if (!d->pixels || !d->labels) {
        dse_dataset_free(d);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0,
                           "out of memory for %d images of %dx%dx%d", n, c, h, w);
    }
    *out = d;
    return DSE_OK;
}

void dse_dataset_free(struct dse_dataset *d) {
    if (!d) return;
    free(d->pixels);
    free(d->labels);
    free(d);
}

enum dse_status dse_dataset_limit(struct dse_dataset *d, int n, struct dse_err *err) {
    if (n < 1)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "limit of %d training images is out of range; expected >= 1", n);
    if (n < d->n) d->n = n;
    return DSE_OK;
}

/* ---- reading through zlib --------------------------------------------------------------- */

/* One open file. gzread reads gzip data and, transparently, plain files too. */
struct reader {
    gzFile      g;
    const char *path;
    uint64_t    pos;  /* uncompressed bytes read so far */
    int         cut;  /* the gzip stream ended before its trailer */
};

static enum dse_status reader_open(struct reader *r, const char *path, struct dse_err *err) {
    struct stat st;
    r->g = NULL, r->path = path, r->pos = 0, r->cut = 0;
    if (stat(path, &st) != 0)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "cannot open: %s", strerror(errno));
    if (S_ISDIR(st.st_mode))
        return dse_err_set(err, DSE_ERR_IO, path, 0, "is a directory; expected a data file");
    errno = 0;
    r->g = gzopen(path, "rb");
    if (!r->g)
        return dse_err_set(err, errno ? DSE_ERR_IO : DSE_ERR_NOMEM, path, 0, "cannot open: %s",
                           errno ? strerror(errno) : "out of memory");
    gzbuffer(r->g, 1u << 17);
    return DSE_OK;
}

static void reader_close(struct reader *r) {
    if (r->g) gzclose(r->g);
    r->g = NULL;
}

/* Read up to n bytes into buf; *got is what arrived (less than n only at the end of the
 * data: then r->cut says whether a gzip stream was cut short). A read error or corrupt
 * compressed data is DSE_ERR_IO. */
static enum dse_status reader_read(struct reader *r, void *buf, size_t n, size_t *got,
                                   struct dse_err *err) {
    unsigned char *p = buf;
    *got = 0;
    while (*got < n) {
        size_t   want = n - *got;
        unsigned chunk = want > (1u << 30) ? (1u << 30) : (unsigned)want;
        int      k = gzread(r->g, p + *got, chunk);
        if (k < 0) {
            int         zerr;
            const char *msg = gzerror(r->g, &zerr);
            if (zerr == Z_ERRNO)
                return dse_err_set(err, DSE_ERR_IO, r->path, 0, "read error after %llu bytes: %s",
                                   (unsigned long long)(r->pos + *got), strerror(errno));
            /* zlib prefixes its message with the path; we have that in err->file */
            size_t plen = strlen(r->path);
            if (!strncmp(msg, r->path, plen) && !strncmp(msg + plen, ": ", 2)) msg += plen + 2;
            return dse_err_set(err, DSE_ERR_IO, r->path, 0, "corrupt gzip data: %s", msg);
        }
        *got += (size_t)k;
        if ((unsigned)k < chunk) {
            int zerr;
            gzerror(r->g, &zerr);
            if (zerr == Z_BUF_ERROR) r->cut = 1; /* "unexpected end of file" */
            break;
        }
    }
    r->pos += *got;
    return DSE_OK;
}

/* After the expected bytes, the file must end, and reading on is what makes zlib check the
 * gzip trailer (CRC-32 and length). */
static enum dse_status reader_expect_end(struct reader *r, uint64_t expected, const char *what,
                                         struct dse_err *err) {
    unsigned char  extra;
    size_t         got;
    enum dse_status st = reader_read(r, &extra, 1, &got, err);
    if (st) return st;
    if (got)
        return dse_err_set(err, DSE_ERR_IO, r->path, 0,
                           "expected %llu bytes (%s), but the file is longer",
                           (unsigned long long)expected, what);
    if (r->cut)
        return dse_err_set(err, DSE_ERR_IO, r->path, 0,
                           "truncated gzip stream: all %llu bytes arrived, but the gzip trailer "
                           "(CRC-32 and length) is cut off",
                           (unsigned long long)expected);
    return DSE_OK;
}

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Read and check an IDX header of ndim dimensions: magic 0x00000800 | ndim, element type
 * 0x08 (unsigned byte). dims[] receives the sizes. */
static enum dse_status idx_header(struct reader *r, int ndim, const char *kind, uint32_t *dims,
                                  struct dse_err *err) {
    unsigned char h[16];
    size_t        hsize = 4 + 4 * (size_t)ndim, got;
    uint32_t      want_magic = 0x800u | (uint32_t)ndim;
    enum dse_status st = reader_read(r, h, hsize, &got, err);
    if (st) return st;
    if (got == 0)
        return dse_err_set(err, DSE_ERR_IO, r->path, 0, "empty file; expected an IDX %s file",
                           kind);
    if (got < 4)
        return dse_err_set(err, DSE_ERR_IO, r->path, 0,
                           "truncated: file ends after %zu bytes, inside the %zu-byte IDX header",
                           got, hsize);
    uint32_t magic = be32(h);
    if (magic != want_magic) {
        if (magic == 0x801u || magic == 0x803u)
            return dse_err_set(err, DSE_ERR_IO, r->path, 0,
                               "this is an IDX %s file (magic 0x%08x); expected an IDX %s file "
                               "(magic 0x%08x)",
                               magic == 0x801u ? "label" : "image", magic, kind, want_magic);
        if (h[0] == 0 && h[1] == 0 && h[2] != 0x08)
            return dse_err_set(err, DSE_ERR_IO, r->path, 0,
                               "unsupported IDX element type 0x%02x; expected 0x08 (unsigned byte)",
                               h[2]);
        if (h[0] == 0 && h[1] == 0)
            return dse_err_set(err, DSE_ERR_IO, r->path, 0,
                               "IDX %s file has %d dimensions; expected %d", kind, h[3], ndim);
        return dse_err_set(err, DSE_ERR_IO, r->path, 0,
                           "not an IDX file: bad magic number 0x%08x; expected 0x%08x (IDX %s file)",
                           magic, want_magic, kind);
    }
    if (got < hsize)
        return dse_err_set(err, DSE_ERR_IO, r->path, 0,
                           "truncated: file ends after %zu bytes, inside the %zu-byte IDX header",
                           got, hsize);
    for (int i = 0; i < ndim; i++) dims[i] = be32(h + 4 + 4 * i);
    return DSE_OK;
}

static enum dse_status truncated(struct reader *r, uint64_t expected, const char *what,
                                 struct dse_err *err) {
    return dse_err_set(err, DSE_ERR_IO, r->path, 0, "truncated%s: expected %llu bytes (%s), got %llu",
                       r->cut ? " gzip stream" : "", (unsigned long long)expected, what,
                       (unsigned long long)r->pos);
}

/* Read need bytes into a new buffer *out that grows as data arrives, so a header that
 * claims more than the file holds costs no more memory than the file. *got < need means
 * the data ended early (see r->cut). */
static enum dse_status read_grow(struct reader *r, uint64_t need, uint8_t **out, size_t *got,
                                 struct dse_err *err) {
    *out = NULL, *got = 0;
    if (need > (uint64_t)SIZE_MAX / 2)
        return dse_err_set(err, DSE_ERR_IO, r->path, 0, "declares %llu bytes of data; too large",
                           (unsigned long long)need);
    size_t   cap = need < (1u << 24) ? (size_t)need : (1u << 24);
    uint8_t *buf = malloc(cap ? cap : 1);
    for (;;) {
        size_t          k;
        enum dse_status st;
        if (!buf) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory reading %s", r->path);
        if ((st = reader_read(r, buf + *got, cap - *got, &k, err))) {
            free(buf);
            return st;
        }
        *got += k;
        if (*got < cap || cap == need) break;
        size_t   ncap = (uint64_t)cap * 2 < need ? cap * 2 : (size_t)need;
        uint8_t *nb = realloc(buf, ncap);
        if (!nb) free(buf);
        buf = nb, cap = ncap;
    }
    *out = buf;
    return DSE_OK;
}

enum dse_status dse_data_read_idx(const char *images_path, const char *labels_path,
                                  int classes, struct dse_dataset **out, struct dse_err *err) {
    struct reader       ri = { 0 }, rl = { 0 };
    struct dse_dataset *d = NULL;
    uint32_t            idim[3] = { 0 }, ldim[1] = { 0 };
    uint8_t            *pix = NULL, *lab = NULL;
    char                what[160];
    size_t              got;
    enum dse_status     st;
    *out = NULL;
    if (classes < 0 || classes > 256)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "%d classes is out of range for IDX labels; expected 0..256", classes);
    if ((st = reader_open(&ri, images_path, err))) goto done;
    if ((st = idx_header(&ri, 3, "image", idim, err))) goto done;
    if (idim[0] == 0 || idim[0] > INT_MAX) {
        st = dse_err_set(err, DSE_ERR_IO, images_path, 0,
                         "holds %u images; expected 1..%d", idim[0], INT_MAX);
        goto done;
    }
    if (idim[1] == 0 || idim[2] == 0 || idim[1] > 65536 || idim[2] > 65536) {
        st = dse_err_set(err, DSE_ERR_IO, images_path, 0,
                         "image size %ux%u is out of range; expected 1..65536 each",
                         idim[1], idim[2]);
        goto done;
    }
    if ((st = reader_open(&rl, labels_path, err))) goto done;
    if ((st = idx_header(&rl, 1, "label", ldim, err))) goto done;
    if (ldim[0] != idim[0]) {
        st = dse_err_set(err, DSE_ERR_IO, labels_path, 0, "holds %u labels but %s holds %u images",
                         ldim[0], images_path, idim[0]);
        goto done;
    }
    int      n = (int)idim[0];
    uint64_t data = (uint64_t)n * idim[1] * idim[2];
    snprintf(what, sizeof what, "16-byte header + %d images of %ux%u", n, idim[1], idim[2]);
    if ((st = read_grow(&ri, data, &pix, &got, err))) goto done;
    if (got < data) { st = truncated(&ri, 16 + data, what, err); goto done; }
    if ((st = reader_expect_end(&ri, 16 + data, what, err))) goto done;

    snprintf(what, sizeof what, "8-byte header + %d labels", n);
    if ((st = read_grow(&rl, (uint64_t)n, &lab, &got, err))) goto done;
    if (got < (size_t)n) { st = truncated(&rl, 8 + (uint64_t)n, what, err); goto done; }
    if ((st = reader_expect_end(&rl, 8 + (uint64_t)n, what, err))) goto done;

    int maxl = 0;
    for (int i = 0; i < n; i++) {
        if (classes && lab[i] >= classes) {
            st = dse_err_set(err, DSE_ERR_IO, labels_path, 0,
                             "label %d of item %d is out of range 0..%d", lab[i], i, classes - 1);
            goto done;
        }
        if (lab[i] > maxl) maxl = lab[i];
    }
    if ((st = dse_dataset_new(1, 1, (int)idim[1], (int)idim[2], classes ? classes : maxl + 1, &d,
                              err)))
        goto done;
    free(d->pixels);
    free(d->labels);
    d->n = n;
    d->pixels = pix, pix = NULL;
    d->labels = malloc((size_t)n * sizeof *d->labels);
    if (!d->labels) { st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for labels"); goto done; }
    for (int i = 0; i < n; i++) d->labels[i] = lab[i];
done:
    reader_close(&ri);
    reader_close(&rl);
    free(pix);
    free(lab);
    if (st) dse_dataset_free(d);
    else *out = d;
    return st;
}

/* Append space for more images to a growing dataset (CIFAR files are read record by
 * record, so the total is known only at the end). */
static enum dse_status dataset_reserve(struct dse_dataset *d, int *cap, int need,
                                       struct dse_err *err) {
    if (need <= *cap) return DSE_OK;
    int ncap = *cap;
    while (ncap < need) ncap = ncap > INT_MAX / 2 ? INT_MAX : ncap * 2;
    uint8_t *p = realloc(d->pixels, (size_t)ncap * image_bytes(d));
    if (!p) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for %d images", ncap);
    d->pixels = p;
    int *l = realloc(d->labels, (size_t)ncap * sizeof *l);
    if (!l) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for %d labels", ncap);
    d->labels = l;
    *cap = ncap;
    return DSE_OK;
}

enum dse_status dse_data_read_cifar(const char *const *paths, int npaths, int classes,
                                    struct dse_dataset **out, struct dse_err *err) {
    enum { PIX = 3 * 32 * 32, CHUNK = 256 };
    struct dse_dataset *d = NULL;
    struct reader       r = { 0 };
    unsigned char      *buf = NULL;
    int                 cap = 1, total = 0;
    enum dse_status     st;
    *out = NULL;
    if (classes != 10 && classes != 100)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "CIFAR with %d classes; expected 10 or 100", classes);
    if (npaths < 1)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "no CIFAR batch files given");
    const int    nlab = classes == 100 ? 2 : 1;
    const size_t rec = (size_t)nlab + PIX;
    if ((st = dse_dataset_new(1, 3, 32, 32, classes, &d, err))) return st;
    buf = malloc(rec * CHUNK);
    if (!buf) { st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory"); goto done; }

    for (int f = 0; f < npaths; f++) {
        int in_file = 0;
        if ((st = reader_open(&r, paths[f], err))) goto done;
        for (;;) {
            size_t got;
            if ((st = reader_read(&r, buf, rec * CHUNK, &got, err))) goto done;
            int k = (int)(got / rec);
            if (got % rec || r.cut) {
                if (r.cut)
                    st = dse_err_set(err, DSE_ERR_IO, paths[f], 0,
                                     "truncated gzip stream: it ends after %llu bytes",
                                     (unsigned long long)r.pos);
                else
                    st = dse_err_set(err, DSE_ERR_IO, paths[f], 0,
                                     "truncated: %llu bytes is not a whole number of %zu-byte "
                                     "records (%s + 3x32x32 pixels); the last record has %zu bytes",
                                     (unsigned long long)r.pos, rec,
                                     nlab == 2 ? "coarse and fine label" : "label", got % rec);
                goto done;
            }
            if (k > INT_MAX - total) {
                st = dse_err_set(err, DSE_ERR_IO, paths[f], 0, "too many records");
                goto done;
            }
            if ((st = dataset_reserve(d, &cap, total + k, err))) goto done;
            for (int i = 0; i < k; i++) {
                const unsigned char *p = buf + (size_t)i * rec;
                int                  label = p[nlab - 1];
                if (nlab == 2 && p[0] >= 20) {
                    st = dse_err_set(err, DSE_ERR_IO, paths[f], 0,
                                     "record %d: coarse label %d is out of range 0..19",
                                     in_file + i, p[0]);
                    goto done;
                }
                if (label >= classes) {
                    st = dse_err_set(err, DSE_ERR_IO, paths[f], 0,
                                     "record %d: %slabel %d is out of range 0..%d", in_file + i,
                                     nlab == 2 ? "fine " : "", label, classes - 1);
                    goto done;
                }
                d->labels[total + i] = label;
                memcpy(d->pixels + (size_t)(total + i) * PIX, p + nlab, PIX);
            }
            total += k;
            in_file += k;
            if (got < rec * CHUNK) break;
        }
        if (in_file == 0) {
            st = dse_err_set(err, DSE_ERR_IO, paths[f], 0, "empty file; expected CIFAR records");
            goto done;
        }
        reader_close(&r);
    }
    d->n = total;
done:
    reader_close(&r);
    free(buf);
    if (st) dse_dataset_free(d);
    else *out = d;
    return st;
}

/* ---- finding a dataset by name ----------------------------------------------------------- */

static int is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* dst = dir/name if it is a file, else dir/name.gz if that is; returns 1 if found. If
 * neither exists dst is left as dir/name.gz for IDX (the form the files are distributed
 * in) or dir/name otherwise. -1 if the path does not fit. */
static int find_file(char *dst, const char *dir, const char *name, int prefer_gz) {
    if (snprintf(dst, DSE_DATA_PATH_MAX, "%s/%s.gz", dir, name) >= DSE_DATA_PATH_MAX) return -1;
    snprintf(dst, DSE_DATA_PATH_MAX, "%s/%s", dir, name);
    if (is_file(dst)) return 1;
    snprintf(dst, DSE_DATA_PATH_MAX, "%s/%s.gz", dir, name);
    if (is_file(dst)) return 1;
    if (!prefer_gz) snprintf(dst, DSE_DATA_PATH_MAX, "%s/%s", dir, name);
    return 0;
}

struct known {
    const char          *name;    /* also the folder under the root */
    const char          *alias;   /* "": none */
    enum dse_data_format format;
    const char          *missing; /* what to tell the user when the files are not there */
};

static const struct known known_sets[] = {
#define X(nm, al, fmt, miss) { .name = nm, .alias = al, .format = DSE_DATA_FORMAT_##fmt, .missing = miss },
    DSE_DATA_SETS(X)
#undef X
};

const char *dse_data_name_find(const char *spec) {
    for (int i = 0; spec && i < DSE_ARRAY_LEN(known_sets); i++)
        if (!strcasecmp(spec, known_sets[i].name) || (known_sets[i].alias[0] && !strcasecmp(spec, known_sets[i].alias)))
            return known_sets[i].name;
    return NULL;
}

/* name with every hyphenated part but the last cut to its initial, as people shorten them:
 * "fashion-mnist" -> "fmnist", "cifar-10" -> "c10"; into out (size 64). */
static void name_initials(const char *name, char *out) {
    int n = 0;
    for (const char *p = name; *p && n < 63;) {
        const char *h = strchr(p, '-');
        if (!h) {
            n += snprintf(out + n, (size_t)(64 - n), "%s", p);
            break;
        }
        out[n++] = *p, p = h + 1;
    }
    out[n < 63 ? n : 63] = '\0';
}

const char *dse_data_name_near(const char *spec) {
    const char *best = NULL;
    int         bestd = 4;
    for (int i = 0; spec && i < DSE_ARRAY_LEN(known_sets); i++) {
        char initials[64];
        name_initials(known_sets[i].name, initials);
        int d = dse_edit_distance(spec, known_sets[i].name), di = dse_edit_distance(spec, initials);
        if (known_sets[i].alias[0] && dse_edit_distance(spec, known_sets[i].alias) < d)
            d = dse_edit_distance(spec, known_sets[i].alias);
        if (di < d) d = di; /* "fmnist" is 0 from fashion-mnist's initials, 1 from mnist */
        if (d < bestd) bestd = d, best = known_sets[i].name;
    }
    return best;
}

static const char *const idx_names[4] = { "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                          "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte" };

/* Fill f's paths for format from dir. Returns DSE_OK, or DSE_ERR_IO naming the first
 * missing file, followed by hint when given. */
static enum dse_status fill_paths(struct dse_data_files *f, const char *dir,
                                  enum dse_data_format format, const char *hint,
                                  struct dse_err *err) {
    char *slots[DSE_DATA_MAX_FILES + 1];
    const char *names[DSE_DATA_MAX_FILES + 1];
    int   ns = 0;
    f->format = format;
    if (format == DSE_DATA_FORMAT_IDX) {
        f->classes = 10;
        f->aug_default.crop_pad = 0, f->aug_default.flip = 0;
        f->train.n = 2, f->test.n = 2;
        for (int i = 0; i < 4; i++) {
            slots[ns] = i < 2 ? f->train.path[i] : f->test.path[i - 2];
            names[ns++] = idx_names[i];
        }
    } else if (format == DSE_DATA_FORMAT_CIFAR10) {
        static const char *const b[6] = { "data_batch_1.bin", "data_batch_2.bin",
                                          "data_batch_3.bin", "data_batch_4.bin",
                                          "data_batch_5.bin", "test_batch.bin" };
        f->classes = 10;
        f->aug_default.crop_pad = 4, f->aug_default.flip = 1;
        f->train.n = 5, f->test.n = 1;
        for (int i = 0; i < 6; i++) {
            slots[ns] = i < 5 ? f->train.path[i] : f->test.path[0];
            names[ns++] = b[i];
        }
    } else {
        f->classes = 100;
        f->aug_default.crop_pad = 4, f->aug_default.flip = 1;
        f->train.n = 1, f->test.n = 1;
        slots[ns] = f->train.path[0], names[ns++] = "train.bin";
        slots[ns] = f->test.path[0], names[ns++] = "test.bin";
    }
    for (int i = 0; i < ns; i++) {
        int found = find_file(slots[i], dir, names[i], format == DSE_DATA_FORMAT_IDX);
        if (found < 0)
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                               "dataset directory path is too long (over %d bytes)",
                               DSE_DATA_PATH_MAX - 32);
        if (!found)
            return dse_err_set(err, DSE_ERR_IO, slots[i], 0, "no such file%s%s",
                               hint ? "; " : "", hint ? hint : "");
    }
    return DSE_OK;
}

enum dse_status dse_data_locate(const char *spec, const char *root, struct dse_data_files *out,
                                struct dse_err *err) {
    char dir[DSE_DATA_PATH_MAX], probe[DSE_DATA_PATH_MAX];
    memset(out, 0, sizeof *out);
    if (!root) root = DSE_DATA_ROOT;
    dse_strlcpy(out->name, spec, (int)sizeof out->name);

    for (int i = 0; i < DSE_ARRAY_LEN(known_sets); i++) {
        const struct known *k = &known_sets[i];
        if (k->name != dse_data_name_find(spec)) continue;
        dse_strlcpy(out->name, k->name, (int)sizeof out->name);
        if (snprintf(dir, sizeof dir, "%s/%s", root, k->name) >= (int)sizeof dir)
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "dataset root path is too long");
        return fill_paths(out, dir, k->format, k->missing, err);
    }

    if (!spec[0])
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "empty dataset name; expected " DSE_DATA_NAMES_LIST "a directory holding one "
                           "of them, an image folder (DIR/train/<class>/...) or an image pack");
    if (!is_dir(spec)) {
        if (strchr(spec, '/') || spec[0] == '.')
            return dse_err_set(err, DSE_ERR_IO, spec, 0, "no such dataset directory");
        const char *best = dse_data_name_near(spec);
        char        hint[96] = "";
        if (best) snprintf(hint, sizeof hint, " (did you mean '%s'?)", best);
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "unknown dataset '%s'%s; expected " DSE_DATA_NAMES_LIST "a directory holding one "
                           "of them, an image folder (DIR/train/<class>/...) or an image pack",
                           spec, hint);
    }

    /* A directory: recognise the format by its first training file. */
    if (strlen(spec) > DSE_DATA_PATH_MAX - 64)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "dataset directory path is too long (over %d bytes)",
                           DSE_DATA_PATH_MAX - 64);
    if (find_file(probe, spec, idx_names[0], 1) == 1)
        return fill_paths(out, spec, DSE_DATA_FORMAT_IDX, NULL, err);
    static const struct { const char *sub, *file; enum dse_data_format format; } cifar[4] = {
        { ".", "data_batch_1.bin", DSE_DATA_FORMAT_CIFAR10 },
        { "cifar-10-batches-bin", "data_batch_1.bin", DSE_DATA_FORMAT_CIFAR10 },
        { ".", "train.bin", DSE_DATA_FORMAT_CIFAR100 },
        { "cifar-100-binary", "train.bin", DSE_DATA_FORMAT_CIFAR100 },
    };
    for (int i = 0; i < 4; i++) {
        if (cifar[i].sub[0] == '.') snprintf(dir, sizeof dir, "%s", spec);
        else snprintf(dir, sizeof dir, "%s/%s", spec, cifar[i].sub);
        if (find_file(probe, dir, cifar[i].file, 0) == 1)
            return fill_paths(out, dir, cifar[i].format, NULL, err);
    }
    return dse_err_set(err, DSE_ERR_IO, spec, 0,
                       "no dataset here: expected train-images-idx3-ubyte[.gz] (MNIST, "
                       "Fashion-MNIST), data_batch_1.bin (CIFAR-10) or train.bin (CIFAR-100)");
}

enum dse_status dse_data_load(const struct dse_data_files *f, enum dse_data_split split,
                              struct dse_dataset **out, struct dse_err *err) {
    const struct dse_data_split_files *s = split == DSE_DATA_SPLIT_TRAIN ? &f->train : &f->test;
    *out = NULL;
    if (f->format == DSE_DATA_FORMAT_IDX) {
        if (s->n != 2)
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "IDX data needs 2 files, got %d", s->n);
        return dse_data_read_idx(s->path[0], s->path[1], f->classes, out, err);
    }
    const char *p[DSE_DATA_MAX_FILES];
    if (s->n < 1 || s->n > DSE_DATA_MAX_FILES)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%d CIFAR batch files; expected 1..%d",
                           s->n, DSE_DATA_MAX_FILES);
    for (int i = 0; i < s->n; i++) p[i] = s->path[i];
    return dse_data_read_cifar(p, s->n, f->format == DSE_DATA_FORMAT_CIFAR100 ? 100 : 10, out, err);
}

/* ---- class names ------------------------------------------------------------------------- */

static const char fmnist_names[10][64] = { "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                           "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot" };
static const char mnist_names[10][64] = { "0", "1", "2", "3", "4", "5", "6", "7", "8", "9" };
static const char cifar10_names[10][64] = { "airplane", "automobile", "bird", "cat", "deer",
                                            "dog", "frog", "horse", "ship", "truck" };

const char (*dse_data_class_names(const char *name, int classes))[64] {
    if (classes != 10 || !name) return NULL;
    if (!strcmp(name, "fashion-mnist")) return fmnist_names;
    if (!strcmp(name, "mnist")) return mnist_names;
    if (!strcmp(name, "cifar-10")) return cifar10_names;
    return NULL;
}

/* ---- any source --------------------------------------------------------------------------- */

static const char *base_name(const char *path) {
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    const char *p = path + n;
    while (p > path && p[-1] != '/') p--;
    return p;
}

enum dse_status dse_data_probe(const char *spec, const char *root, struct dse_data_info *out,
                               struct dse_err *err) {
    enum dse_status st;
    memset(out, 0, sizeof *out);
    if (dse_pack_named(spec)) { /* a .pack that is not one: dse_pack_open says why */
        struct dse_pack *p;
        if ((st = dse_pack_open(spec, &p, err))) return st;
        out->kind = DSE_DATA_KIND_PACK;
        out->c = p->channels, out->classes = p->classes;
        out->n_train = p->count[DSE_PACK_TRAIN], out->n_test = p->count[DSE_PACK_VAL];
        dse_pack_close(p);
    } else if (dse_imgfolder_is(spec)) {
        struct dse_imgfolder f;
        if ((st = dse_imgfolder_scan(spec, &f, err))) {
            dse_imgfolder_deinit(&f);
            return st;
        }
        out->kind = DSE_DATA_KIND_FOLDER;
        out->c = 0, out->classes = f.classes; /* converted to the network's 1 or 3 channels */
        out->n_train = f.count[DSE_PACK_TRAIN], out->n_test = f.count[DSE_PACK_VAL];
        dse_imgfolder_deinit(&f);
    } else {
        struct dse_data_files files;
        struct dse_dataset *test = NULL;
        /* the (smaller) test split tells the shape */
        if ((st = dse_data_locate(spec, root, &files, err)) ||
            (st = dse_data_load(&files, DSE_DATA_SPLIT_TEST, &test, err)))
            return st;
        out->kind = DSE_DATA_KIND_TENSOR;
        out->c = test->c, out->h = test->h, out->w = test->w, out->classes = files.classes;
        out->n_test = test->n;
        dse_dataset_free(test);
        dse_strlcpy(out->name, files.name, (int)sizeof out->name);
        return DSE_OK;
    }
    dse_strlcpy(out->name, base_name(spec), (int)sizeof out->name);
    return DSE_OK;
}

void dse_data_aug_of(enum dse_aug_mode mode, int short_side, struct dse_data_aug *aug, float *center) {
    memset(aug, 0, sizeof *aug);
    if (mode == DSE_AUG_AUTO) mode = short_side > 64 ? DSE_AUG_RRC : DSE_AUG_CROP;
    aug->rrc = mode == DSE_AUG_RRC;
    aug->crop_pad = mode == DSE_AUG_CROP ? 4 : 0;
    aug->flip = mode != DSE_AUG_NONE;
    *center = mode == DSE_AUG_RRC ? 0.875f : 1.0f;
}

/* ---- preprocessing ----------------------------------------------------------------------- */

void dse_data_norm_of_pack(const struct dse_pack *p, struct dse_data_norm *out) {
    memset(out, 0, sizeof *out);
    out->c = p->channels;
    memcpy(out->mean, p->mean, sizeof out->mean);
    memcpy(out->std, p->std, sizeof out->std);
}

void dse_data_norm_imagenet(int c, struct dse_data_norm *n) {
    static const float mean[3] = { 0.485f, 0.456f, 0.406f }, sd[3] = { 0.229f, 0.224f, 0.225f };
    memset(n, 0, sizeof *n);
    n->c = c;
    for (int ch = 0; ch < c; ch++) n->mean[ch] = c == 1 ? 0.449f : mean[ch], n->std[ch] = c == 1 ? 0.226f : sd[ch];
}

void dse_data_norm_of(const struct dse_dataset *d, struct dse_data_norm *out) {
    size_t plane = (size_t)d->h * (size_t)d->w;
    memset(out, 0, sizeof *out);
    out->c = d->c;
    for (int ch = 0; ch < d->c; ch++) {
        uint64_t s = 0, s2 = 0;
        for (int i = 0; i < d->n; i++) {
            const uint8_t *p = d->pixels + ((size_t)i * d->c + ch) * plane;
            uint64_t       a = 0, a2 = 0; /* per image: fits easily, adds up faster */
            for (size_t k = 0; k < plane; k++) a += p[k], a2 += (uint32_t)p[k] * p[k];
            s += a, s2 += a2;
        }
        double cnt = (double)d->n * (double)plane;
        double mean = (double)s / cnt / 255.0;
        double var = (double)s2 / cnt / (255.0 * 255.0) - mean * mean;
        double sd = var > 0 ? sqrt(var) : 0.0;
        out->mean[ch] = (float)mean;
        out->std[ch] = sd > 0 ? (float)sd : 1.0f;
    }
}

uint64_t dse_data_stream(const char *tag, uint64_t v) {
    unsigned char e[8];
    for (int i = 0; i < 8; i++) e[i] = (unsigned char)(v >> (8 * i));
    return dse_fnv1a64(dse_fnv1a64(DSE_FNV64_INIT, tag, strlen(tag)), e, 8);
}

void dse_data_rng_shuffle(struct dse_pcg32 *r, uint64_t seed, int epoch) {
    dse_pcg32_seed(r, seed, dse_data_stream("dse.data.shuffle", (uint64_t)(int64_t)epoch));
}

void dse_data_rng_aug(struct dse_pcg32 *r, uint64_t seed, int epoch) {
    dse_pcg32_seed(r, seed, dse_data_stream("dse.data.augment", (uint64_t)(int64_t)epoch));
}

void dse_data_shuffle(int *perm, int n, uint64_t seed, int epoch) {
    struct dse_pcg32 r;
    dse_data_rng_shuffle(&r, seed, epoch);
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates (Durstenfeld): swap i with j in [0, i] */
        int j = (int)dse_pcg32_bounded(&r, (uint32_t)i + 1);
        int t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
}

void dse_data_lut(float lut[][256], int c, const struct dse_data_norm *norm) {
    for (int ch = 0; ch < c; ch++)
        for (int v = 0; v < 256; v++) {
            float x = (float)v / 255.0f;
            lut[ch][v] = norm && norm->c ? (x - norm->mean[ch]) / norm->std[ch] : x;
        }
}

/* x: [count, C, H, W] from images idx[0..count-1]; see dse_data_batch. */
static void batch_fill(const struct dse_dataset *d, const int *idx, int count,
                       const struct dse_data_aug *aug, const lut_t lut, struct dse_pcg32 *rng,
                       float *x, int *labels) {
    const int    H = d->h, W = d->w, C = d->c;
    const size_t plane = (size_t)H * W, img = plane * C;
    const int    pad = aug ? aug->crop_pad : 0, flip = aug ? aug->flip : 0;
    for (int b = 0; b < count; b++) {
        const uint8_t *src = d->pixels + (size_t)idx[b] * img;
        float         *dst = x + (size_t)b * img;
        int            oy = 0, ox = 0, fl = 0;
        labels[b] = d->labels[idx[b]];
        if (pad) {
            oy = (int)dse_pcg32_bounded(rng, 2u * (uint32_t)pad + 1) - pad;
            ox = (int)dse_pcg32_bounded(rng, 2u * (uint32_t)pad + 1) - pad;
        }
        if (flip) fl = (int)(dse_pcg32_next(rng) >> 31);
        for (int ch = 0; ch < C; ch++) {
            const float   *t = lut[ch];
            const uint8_t *s = src + ch * plane;
            float         *o = dst + ch * plane;
            if (!oy && !ox && !fl) {
                for (size_t k = 0; k < plane; k++) o[k] = t[s[k]];
                continue;
            }
            /* output (y, x) = padded source (y + oy, x' + ox), x' = W-1-x if flipped */
            for (int y = 0; y < H; y++, o += W) {
                int sy = y + oy;
                if (sy < 0 || sy >= H) {
                    for (int xx = 0; xx < W; xx++) o[xx] = t[0];
                    continue;
                }
                const uint8_t *row = s + (size_t)sy * W;
                for (int xx = 0; xx < W; xx++) {
                    int sx = (fl ? W - 1 - xx : xx) + ox;
                    o[xx] = sx >= 0 && sx < W ? t[row[sx]] : t[0];
                }
            }
        }
    }
}

void dse_data_batch(const struct dse_dataset *d, const int *idx, int count,
                    const struct dse_data_aug *aug, const struct dse_data_norm *norm,
                    struct dse_pcg32 *rng, float *x, int *labels) {
    lut_t lut;
    DSE_ASSERT(!norm || norm->c == 0 || norm->c == d->c);
    DSE_ASSERT(!aug || (!aug->crop_pad && !aug->flip) || rng);
    dse_data_lut(lut, d->c, norm);
    batch_fill(d, idx, count, aug, (const float(*)[256])lut, rng, x, labels);
}

/* ---- the loader --------------------------------------------------------------------------- */

struct slot {
    float *x;      /* [batch, C, H, W] */
    int   *labels; /* [batch] */
    int    count;
    int    full;   /* 1: holds a batch the caller has not taken */
};

struct dse_loader {
    struct dse_imgloader     *il; /* an image source's loader (imgload.c); else d */
    const struct dse_dataset *d; /* borrowed */
    struct dse_loader_opts    o;
    lut_t                     lut;
    int                       nbatches;
    size_t                    img;  /* floats per image */

    /* The worker's (the caller's when synchronous): the current epoch's order and RNG. */
    int             *perm;
    struct dse_pcg32 rng;

    /* Shared, under mu. start_epoch bumps gen; the worker notices and begins that epoch,
     * and drops a batch it built for an older gen. */
    pthread_mutex_t mu;
    pthread_cond_t  cv_work;  /* worker waits: slot free, new epoch or quit */
    pthread_cond_t  cv_ready; /* caller waits: slot full */
    struct slot     slot[2];
    int             gen, epoch, started, quit;
    int             fill;     /* slot the worker fills next */
    int             produced; /* batches of gen built so far */

    /* The caller's. */
    int       take;  /* slot the caller takes next */
    int       taken; /* batches of this epoch returned */
    int       has_thread;
    pthread_t thread;
};

static void loader_begin(struct dse_loader *l, int epoch) {
    if (l->o.shuffle) dse_data_shuffle(l->perm, l->d->n, l->o.seed, epoch);
    else
        for (int i = 0; i < l->d->n; i++) l->perm[i] = i;
    dse_data_rng_aug(&l->rng, l->o.seed, epoch);
}

/* Build batch k of the current epoch into s; batches must be built in order 0, 1, ... */
static void loader_build(struct dse_loader *l, int k, struct slot *s) {
    int first = k * l->o.batch;
    int count = l->d->n - first < l->o.batch ? l->d->n - first : l->o.batch;
    batch_fill(l->d, l->perm + first, count, &l->o.aug, (const float(*)[256])l->lut, &l->rng,
               s->x, s->labels);
    s->count = count;
}

static void *loader_worker(void *arg) {
    struct dse_loader *l = arg;
    int                my_gen = 0;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!l->quit && l->gen == my_gen &&
               (!l->started || l->produced >= l->nbatches || l->slot[l->fill].full))
            pthread_cond_wait(&l->cv_work, &l->mu);
        if (l->quit) break;
        if (l->gen != my_gen) {
            int epoch = l->epoch;
            my_gen = l->gen;
            pthread_mutex_unlock(&l->mu);
            loader_begin(l, epoch);
            pthread_mutex_lock(&l->mu);
            continue;
        }
        int          k = l->produced;
        struct slot *s = &l->slot[l->fill];
        pthread_mutex_unlock(&l->mu);
        loader_build(l, k, s); /* s is empty, so the caller does not read it */
        pthread_mutex_lock(&l->mu);
        if (l->gen == my_gen) {
            s->full = 1;
            l->fill ^= 1;
            l->produced++;
            pthread_cond_signal(&l->cv_ready);
        }
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

int dse_loader_batches(const struct dse_loader *l) {
    return l->il ? dse_imgloader_batches(l->il) : l->nbatches;
}

int dse_loader_images(const struct dse_loader *l) {
    return l->il ? dse_imgloader_images(l->il) : l->d->n;
}

enum dse_status dse_loader_status(const struct dse_loader *l, struct dse_err *err) {
    return l->il ? dse_imgloader_status(l->il, err) : DSE_OK;
}

/* A dse_loader around a new image loader. */
static enum dse_status loader_wrap(const struct dse_pack *p, const struct dse_imgfolder *f, int split,
                                   int channels, const struct dse_loader_opts *opts, struct dse_loader **out,
                                   struct dse_err *err) {
    struct dse_imgloader *il = NULL;
    enum dse_status st = dse_imgloader_new(p, f, split, channels, opts, &il, err);
    *out = NULL;
    if (st) return st;
    struct dse_loader *l = calloc(1, sizeof *l);
    if (!l) {
        dse_imgloader_free(il);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a loader");
    }
    l->il = il;
    *out = l;
    return DSE_OK;
}

enum dse_status dse_loader_new_pack(const struct dse_pack *p, int split, const struct dse_loader_opts *opts,
                                    struct dse_loader **out, struct dse_err *err) {
    return loader_wrap(p, NULL, split, p->channels, opts, out, err);
}

enum dse_status dse_loader_new_folder(const struct dse_imgfolder *f, int split, int channels,
                                      const struct dse_loader_opts *opts, struct dse_loader **out,
                                      struct dse_err *err) {
    return loader_wrap(NULL, f, split, channels, opts, out, err);
}

enum dse_status dse_loader_new(const struct dse_dataset *d, const struct dse_loader_opts *opts,
                               struct dse_loader **out, struct dse_err *err) {
    const struct dse_data_aug  *a = &opts->aug;
    const struct dse_data_norm *nm = &opts->norm;
    *out = NULL;
    if (opts->batch < 1)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "batch size %d is out of range; expected >= 1", opts->batch);
    if (a->crop_pad < 0 || a->crop_pad > d->h || a->crop_pad > d->w)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "crop padding %d is out of range; expected 0..%d for %dx%d images",
                           a->crop_pad, d->h < d->w ? d->h : d->w, d->h, d->w);
    if (a->flip != 0 && a->flip != 1)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "flip = %d; expected 0 or 1", a->flip);
    if (nm->c != 0 && nm->c != d->c)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "normalization for %d channels, but the images have %d", nm->c, d->c);
    for (int ch = 0; ch < nm->c; ch++)
        if (!(nm->std[ch] > 0) || !isfinite(nm->mean[ch]) || !isfinite(nm->std[ch]))
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                               "normalization of channel %d: mean %g, std %g; expected a finite "
                               "mean and std > 0",
                               ch, nm->mean[ch], nm->std[ch]);

    struct dse_loader *l = calloc(1, sizeof *l);
    if (!l) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a loader");
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv_work, NULL);
    pthread_cond_init(&l->cv_ready, NULL);
    l->d = d;
    l->o = *opts;
    l->img = image_bytes(d);
    l->nbatches = (int)(((int64_t)d->n + opts->batch - 1) / opts->batch);
    dse_data_lut(l->lut, d->c, nm);
    size_t bmax = (size_t)(opts->batch < d->n ? opts->batch : d->n);
    l->perm = malloc((size_t)d->n * sizeof *l->perm);
    int ok = l->perm != NULL;
    for (int i = 0; i < 2 && ok; i++) {
        l->slot[i].x = malloc(bmax * l->img * sizeof(float));
        l->slot[i].labels = malloc(bmax * sizeof(int));
        ok = l->slot[i].x && l->slot[i].labels;
    }
    if (!ok) {
        dse_loader_free(l);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0,
                           "out of memory for loader buffers (batch %d)", opts->batch);
    }
    if (!opts->synchronous) {
        int rc = pthread_create(&l->thread, NULL, loader_worker, l);
        if (rc) {
            dse_loader_free(l);
            return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0,
                               "cannot start the loader thread: %s", strerror(rc));
        }
        l->has_thread = 1;
    }
    *out = l;
    return DSE_OK;
}

void dse_loader_start_epoch(struct dse_loader *l, int epoch) {
    DSE_ASSERT(epoch >= 0);
    if (l->il) {
        dse_imgloader_start_epoch(l->il, epoch);
        return;
    }
    l->taken = 0;
    l->take = 0;
    if (!l->has_thread) {
        loader_begin(l, epoch);
        l->started = 1;
        return;
    }
    pthread_mutex_lock(&l->mu);
    l->gen++;
    l->epoch = epoch;
    l->started = 1;
    l->produced = 0;
    l->fill = 0;
    l->slot[0].full = l->slot[1].full = 0;
    pthread_cond_signal(&l->cv_work);
    pthread_mutex_unlock(&l->mu);
}

int dse_loader_next(struct dse_loader *l, float *x, int *labels, int *count) {
    if (l->il) return dse_imgloader_next(l->il, x, labels, count);
    *count = 0;
    if (!l->started || l->taken >= l->nbatches) return 0;
    struct slot *s = &l->slot[l->take];
    if (!l->has_thread) {
        loader_build(l, l->taken, s);
    } else {
        pthread_mutex_lock(&l->mu);
        while (!s->full) pthread_cond_wait(&l->cv_ready, &l->mu);
        pthread_mutex_unlock(&l->mu);
    }
    /* s is full: the worker leaves it alone until we mark it empty. */
    memcpy(x, s->x, (size_t)s->count * l->img * sizeof(float));
    memcpy(labels, s->labels, (size_t)s->count * sizeof(int));
    *count = s->count;
    l->taken++;
    if (l->has_thread) {
        pthread_mutex_lock(&l->mu);
        s->full = 0;
        l->take ^= 1;
        pthread_cond_signal(&l->cv_work);
        pthread_mutex_unlock(&l->mu);
    }
    return 1;
}

void dse_loader_free(struct dse_loader *l) {
    if (!l) return;
    if (l->il) {
        dse_imgloader_free(l->il);
        free(l);
        return;
    }
    if (l->has_thread) {
        pthread_mutex_lock(&l->mu);
        l->quit = 1;
        pthread_cond_signal(&l->cv_work);
        pthread_mutex_unlock(&l->mu);
        pthread_join(l->thread, NULL);
    }
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv_work);
    pthread_cond_destroy(&l->cv_ready);
    for (int i = 0; i < 2; i++) {
        free(l->slot[i].x);
        free(l->slot[i].labels);
    }
    free(l->perm);
    free(l);
}
