/* pack.c: image folders scanned as torchvision's ImageFolder, packed once on many threads
 * into one random-access file, and read back through a memory map. The contract of each
 * function is in pack.h; docs/data.md ("Image folders and packs") has the byte layout. */
#include "data/pack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "base/fs.h"
#include "base/pcg32.h"

_Static_assert(sizeof(struct dse_pack_record) == 24, "pack index entries are 24 bytes");

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CRC-32 (zlib's) of n bytes continuing from c, for any n (zlib takes uInt lengths). */
static uint32_t crc_more(uint32_t c0, const void *p, size_t n) {
    uLong c = c0;
    const unsigned char *b = p;
    while (n > 0) { /* zlib takes uInt lengths */
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, b, k);
        b += k, n -= k;
    }
    return (uint32_t)c;
}

static uint32_t crc_of(const void *p, size_t n) {
    return crc_more((uint32_t)crc32(0L, Z_NULL, 0), p, n);
}

/* ---- scanning a folder ---------------------------------------------------------------- */

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int dse_imgfolder_is(const char *dir) {
    char p[1100];
    if (snprintf(p, sizeof p, "%s/train", dir) >= (int)sizeof p) return 0;
    return is_dir(dir) && is_dir(p);
}

static int has_image_ext(const char *name) {
    const char *dot = strrchr(name, '.');
    static const char *const ext[] = { ".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".tif", ".tiff", ".webp" };
    for (int i = 0; dot && i < DSE_ARRAY_LEN(ext); i++)
        if (!strcasecmp(dot, ext[i])) return 1;
    return 0;
}

/* A folder name as text for a message, with control bytes written as C escapes ("\n",
 * "\x1b"); returns 1 if it holds any. Names holding them are refused: a newline in a class
 * name would add lines to the checkpoint's text block and to ONNX metadata (issue #31). */
static int name_shown(char *dst, size_t size, const char *s) {
    size_t at = 0;
    int ctl = 0;
    for (; *s && at + 5 < size; s++) {
        unsigned char b = (unsigned char)*s;
        if (b >= 0x20 && b != 0x7f) {
            dst[at++] = (char)b;
            continue;
        }
        ctl = 1;
        at += (size_t)(b == '\n' ? snprintf(dst + at, size - at, "\\n")
                       : b == '\t' ? snprintf(dst + at, size - at, "\\t")
                       : b == '\r' ? snprintf(dst + at, size - at, "\\r")
                                   : snprintf(dst + at, size - at, "\\x%02x", b));
    }
    for (; *s; s++) ctl |= (unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f;
    dst[at] = '\0';
    return ctl;
}

static int cmp_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir (hidden ones, starting with '.', left out), sorted by name in byte
 * order. *names is malloc'd strings in a malloc'd array. -1 if dir cannot be read. */
static void free_names(char **names, int n);

static int list_dir(const char *dir, char ***names, int *n) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int cap = 0, bad = 0;
    *names = NULL, *n = 0;
    if (!d) return -1;
    for (;;) {
        errno = 0;
        if (!(e = readdir(d))) {
            bad = errno != 0; /* an error, not the end */
            break;
        }
        if (e->d_name[0] == '.') continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(*names, (size_t)cap * sizeof *nn);
            if (!nn) {
                bad = 1, errno = ENOMEM;
                break;
            }
            *names = nn;
        }
        if (!((*names)[*n] = strdup(e->d_name))) {
            bad = 1, errno = ENOMEM;
            break;
        }
        (*n)++;
    }
    int saved = errno;
    closedir(d);
    if (bad) { /* a partial list would silently lose images */
        free_names(*names, *n);
        *names = NULL, *n = 0;
        errno = saved;
        return -1;
    }
    if (*n) qsort(*names, (size_t)*n, sizeof **names, cmp_name);
    return 0;
}

static void free_names(char **names, int n) {
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

enum dse_status dse_imgfolder_files(const char *dir, char ***paths, int *n, struct dse_err *err) {
    char **names;
    int    k = 0;
    *paths = NULL, *n = 0;
    if (list_dir(dir, &names, n))
        return dse_err_set(err, DSE_ERR_IO, dir, 0, "cannot read the folder: %s", strerror(errno));
    for (int i = 0; i < *n; i++) { /* in place: the image names, each as dir/name */
        char *name = names[i], *path = NULL;
        names[i] = NULL;
        if (has_image_ext(name)) {
            size_t len = strlen(dir) + 1 + strlen(name) + 1;
            if (!(path = malloc(len))) {
                free(name);
                free_names(names, *n), *n = 0;
                return dse_err_set(err, DSE_ERR_NOMEM, dir, 0, "out of memory listing the folder");
            }
            snprintf(path, len, "%s/%s", dir, name);
            struct stat sb; /* a file (or a link to one), not a folder named x.jpg */
            if (!stat(path, &sb) && S_ISREG(sb.st_mode)) names[k++] = path;
            else free(path);
        }
        free(name);
    }
    *paths = names, *n = k;
    return DSE_OK;
}

void dse_imgfolder_files_free(char **paths, int n) {
    free_names(paths, n);
}

static enum dse_status add_item(struct dse_imgfolder *f, const char *path, int label, int split,
                                struct dse_err *err) {
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 1024;
        struct dse_imgfolder_item *ni = realloc(f->items, (size_t)cap * sizeof *ni);
        if (!ni) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory scanning %s", f->root);
        f->items = ni, f->cap = cap;
    }
    char *p = strdup(path);
    if (!p) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory scanning %s", f->root);
    f->items[f->n++] = (struct dse_imgfolder_item){ .path = p, .label = label, .split = split };
    f->count[split]++;
    return DSE_OK;
}

/* The folders a scan has entered, by device and inode: a symbolic link to a folder already
 * entered (an ancestor, `..`, another class) is not followed again, as `find -L` does, so a
 * link loop neither multiplies images nor hangs the scan (issue #31). */
struct seen {
    int n, cap;
    struct { dev_t dev; ino_t ino; } *at;
};

/* 1 if path is a folder already in s; else it is added and 0 (also 0 if it cannot be
 * stat'ed: listing it then says why). -1 when out of memory. */
static int seen_add(struct seen *s, const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) return 0;
    for (int i = 0; i < s->n; i++)
        if (s->at[i].dev == sb.st_dev && s->at[i].ino == sb.st_ino) return 1;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        void *na = realloc(s->at, (size_t)cap * sizeof *s->at);
        if (!na) return -1;
        s->at = na, s->cap = cap;
    }
    s->at[s->n].dev = sb.st_dev, s->at[s->n].ino = sb.st_ino, s->n++;
    return 0;
}

/* Add the images below dir (recursively; files of a folder before its subfolders, each
 * sorted by name, as torchvision's sorted os.walk) to f; their fingerprint goes into *h.
 * A subfolder already in *seen (reached again through a link) is skipped. */
static enum dse_status walk(struct dse_imgfolder *f, const char *top, const char *dir, int label, int split,
                            int depth, struct seen *seen, uint64_t *h, struct dse_err *err) {
    char **names, path[4096];
    int n;
    enum dse_status st = DSE_OK;
    if (depth > 32) return DSE_OK; /* a link loop */
    if (list_dir(dir, &names, &n)) /* err->file is the caller's top folder; dir is this frame's */
        return dse_err_set(err, DSE_ERR_IO, top, 0, "%s: cannot read the folder: %s", dir + strlen(f->root) + 1,
                           strerror(errno));
    for (int pass = 0; pass < 2 && !st; pass++)
        for (int i = 0; i < n && !st; i++) {
            struct stat sb;
            if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path) continue;
            if (stat(path, &sb) != 0) continue; /* a dangling link */
            if (pass == 0 && S_ISREG(sb.st_mode)) {
                if (!has_image_ext(names[i])) {
                    f->ignored++;
                    continue;
                }
                int64_t v[3] = { (int64_t)sb.st_size, (int64_t)sb.st_mtim.tv_sec, (int64_t)sb.st_mtim.tv_nsec };
                *h = dse_fnv1a64(*h, path + strlen(f->root), strlen(path + strlen(f->root)));
                *h = dse_fnv1a64(*h, v, sizeof v);
                st = add_item(f, path, label, split, err);
            } else if (pass == 1 && S_ISDIR(sb.st_mode)) {
                int again = seen_add(seen, path);
                if (again < 0) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory scanning %s", f->root);
                else if (!again) st = walk(f, top, path, label, split, depth + 1, seen, h, err);
            }
        }
    free_names(names, n);
    return st;
}

void dse_imgfolder_deinit(struct dse_imgfolder *f) {
    if (!f) return;
    for (int i = 0; i < f->n; i++) free(f->items[i].path);
    free(f->items);
    free(f->class_names);
    f->items = NULL, f->class_names = NULL, f->n = f->cap = f->classes = 0;
}

enum dse_status dse_imgfolder_scan(const char *dir, struct dse_imgfolder *f, struct dse_err *err) {
    char train[1100], val[1100], cls[1200];
    char **names = NULL, **vnames = NULL;
    int n = 0, vn = 0;
    enum dse_status st = DSE_OK;
    struct seen seen = { 0 };
    memset(f, 0, sizeof *f);
    if (dse_strlcpy(f->root, dir, (int)sizeof f->root))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "image folder path is too long (over %d bytes)",
                           (int)sizeof f->root - 1);
    size_t rl = strlen(f->root);
    while (rl > 1 && f->root[rl - 1] == '/') f->root[--rl] = '\0';
    snprintf(train, sizeof train, "%s/train", f->root);
    if (!is_dir(f->root))
        return dse_err_set(err, DSE_ERR_IO, dir, 0, "no such folder");
    if (!is_dir(train))
        return dse_err_set(err, DSE_ERR_IO, dir, 0,
                           "no train/ folder; expected an image folder: train/<class>/<image>.jpg|png and "
                           "val/<class>/... (or test/), as torchvision's ImageFolder");
    if (list_dir(train, &names, &n))
        return dse_err_set(err, DSE_ERR_IO, dir, 0, "cannot read train/: %s", strerror(errno));
    /* classes: the subfolders of train/ */
    int nc = 0;
    for (int i = 0; i < n; i++) {
        snprintf(cls, sizeof cls, "%s/%s", train, names[i]);
        if (is_dir(cls)) names[nc++] = names[i];
        else free(names[i]);
    }
    n = nc;
    if (n < 2) {
        st = dse_err_set(err, DSE_ERR_IO, dir, 0,
                         n ? "train/ holds one class folder (%s); a classifier needs at least 2"
                           : "train/ holds no class folders%s; expected train/<class>/<image>.jpg|png",
                         n ? names[0] : "");
        goto done;
    }
    f->classes = n;
    f->class_names = calloc((size_t)n, sizeof *f->class_names);
    if (!f->class_names) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        char shown[300];
        if (name_shown(shown, sizeof shown, names[i])) {
            st = dse_err_set(err, DSE_ERR_IO, dir, 0, "train/%s: a class name must not hold control characters "
                             "(a newline, a tab, ...); rename the folder", shown);
            goto done;
        }
    }
    for (int i = 0; i < n; i++)
        if (dse_strlcpy(f->class_names[i], names[i], DSE_PACK_CLASS_MAX)) {
            st = dse_err_set(err, DSE_ERR_IO, dir, 0, "train/%.40s...: class name longer than %d bytes",
                             names[i], DSE_PACK_CLASS_MAX - 1);
            goto done;
        }
    /* the evaluation split: val/, else test/ */
    for (int k = 0; k < 2; k++) {
        const char *sub = k ? "test" : "val";
        snprintf(val, sizeof val, "%s/%s", f->root, sub);
        if (is_dir(val)) {
            dse_strlcpy(f->val_name, sub, (int)sizeof f->val_name);
            break;
        }
    }
    if (f->val_name[0] && list_dir(val, &vnames, &vn)) {
        st = dse_err_set(err, DSE_ERR_IO, dir, 0, "cannot read %s/: %s", f->val_name, strerror(errno));
        goto done;
    }
    /* the folders above the images and every class folder count as entered before any walk:
     * a link inside class a to `..`, to class b or to a val class adds nothing */
    int oom = seen_add(&seen, f->root) < 0 || seen_add(&seen, train) < 0 ||
              (f->val_name[0] && seen_add(&seen, val) < 0);
    for (int i = 0; i < n; i++) {
        snprintf(cls, sizeof cls, "%s/%s", train, names[i]);
        oom |= seen_add(&seen, cls) < 0;
    }
    for (int i = 0; i < vn; i++) {
        snprintf(cls, sizeof cls, "%s/%s", val, vnames[i]);
        oom |= is_dir(cls) && seen_add(&seen, cls) < 0;
    }
    if (oom) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory scanning %s", f->root);
        goto done;
    }
    uint64_t h = DSE_FNV64_INIT;
    for (int i = 0; i < n && !st; i++) {
        int before = f->n;
        snprintf(cls, sizeof cls, "%s/%s", train, names[i]);
        if ((st = walk(f, dir, cls, i, DSE_PACK_TRAIN, 0, &seen, &h, err))) goto done;
        if (f->n == before) {
            st = dse_err_set(err, DSE_ERR_IO, dir, 0, "train/%s: class folder with no images (.jpg, .jpeg, "
                             ".png, .bmp, .ppm, .pgm, .tif, .tiff, .webp); every class needs at least one", names[i]);
            goto done;
        }
    }
    for (int i = 0; i < vn && !st; i++) {
        snprintf(cls, sizeof cls, "%s/%s", val, vnames[i]);
        if (!is_dir(cls)) continue;
        char shown[300];
        if (name_shown(shown, sizeof shown, vnames[i])) {
            st = dse_err_set(err, DSE_ERR_IO, dir, 0, "%s/%s: a class name must not hold control characters "
                             "(a newline, a tab, ...); rename the folder", f->val_name, shown);
            goto done;
        }
        int label = -1;
        for (int c = 0; c < n && label < 0; c++)
            if (!strcmp(names[c], vnames[i])) label = c;
        if (label < 0) {
            st = dse_err_set(err, DSE_ERR_IO, dir, 0, "%s/%s: class '%s' is in %s/ but not in train/: its "
                             "images would get no label", f->val_name, vnames[i], vnames[i], f->val_name);
            goto done;
        }
        st = walk(f, dir, cls, label, DSE_PACK_VAL, 0, &seen, &h, err);
    }
    f->fingerprint = h;
done:
    free(seen.at);
    free_names(names, n);
    free_names(vnames, vn);
    return st;
}

/* ---- the file layout ------------------------------------------------------------------ */

/* Header fields, little-endian at fixed offsets (docs/data.md). */
enum {
    H_MAGIC = 0, H_VERSION = 8, H_HEADER_BYTES = 12, H_FORMAT = 16, H_CHANNELS = 20, H_SHORT = 24,
    H_QUALITY = 28, H_CLASSES = 32, H_N = 36, H_SPLITS = 40, /* 2 x { name[8], first u32, count u32 } */
    H_MEAN = 72, H_STD = 88, H_INDEX_OFF = 104, H_INDEX_BYTES = 112, H_NAMES_OFF = 120,
    H_NAMES_BYTES = 128, H_DATA_OFF = 136, H_DATA_BYTES = 144, H_FINGERPRINT = 152, H_CREATED = 160,
    H_INDEX_CRC = 168, H_CRC = DSE_PACK_HEADER - 4
};

static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint32_t get32(const uint8_t *p) { uint32_t v = 0; for (int i = 3; i >= 0; i--) v = v << 8 | p[i]; return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }
static void putf(uint8_t *p, float f) { uint32_t v; memcpy(&v, &f, 4); put32(p, v); }
static float getf(const uint8_t *p) { uint32_t v = get32(p); float f; memcpy(&f, &v, 4); return f; }

static int host_little_endian(void) {
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

/* ---- writing a pack ------------------------------------------------------------------ */

void dse_pack_opts_default(struct dse_pack_opts *o) {
    memset(o, 0, sizeof *o);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    o->size = 256, o->channels = 3, o->format = DSE_PACK_JPEG, o->quality = 90;
    o->threads = cpus > 0 ? (int)cpus : 1;
}

/* One image on its way from a worker to the writer. */
struct result {
    int      state;        /* 0 pending, 1 ready */
    uint8_t *bytes;        /* the record (malloc'd) or NULL if bad */
    size_t   len;
    int      w, h;
    char    *why;          /* malloc'd, when bad */
    uint64_t sum[3], sum2[3];
};

struct writer {
    const struct dse_imgfolder *f;
    const struct dse_pack_opts *o;
    pthread_mutex_t mu;
    pthread_cond_t  cv_ready, cv_space;
    struct result  *ring;
    int             window, next, written, abort;
};

/* Decode item i, resize it and encode the record. */
static void make_record(struct writer *wr, int i, struct result *r, struct dse_image *im,
                        struct dse_image *rs, struct dse_image_work *work) {
    const struct dse_pack_opts *o = wr->o;
    struct dse_err err = { 0 };
    char *data = NULL;
    size_t len;
    r->bytes = NULL, r->why = NULL;
    memset(r->sum, 0, sizeof r->sum), memset(r->sum2, 0, sizeof r->sum2);
    if (dse_fs_read(wr->f->items[i].path, &data, &len, &err) ||
        dse_image_decode((const uint8_t *)data, len, o->channels, o->size, o->max_pixels, im, &err)) {
        free(data);
        r->why = strdup(err.msg);
        return;
    }
    free(data);
    const struct dse_image *out = im;
    if (o->size > 0) {
        int sw = im->w, sh = im->h;
        long long tw, th; /* short side to size, the long side rounded to nearest */
        if (sw <= sh) tw = o->size, th = ((long long)sh * o->size * 2 + sw) / (2LL * sw);
        else th = o->size, tw = ((long long)sw * o->size * 2 + sh) / (2LL * sh);
        if (tw < 1) tw = 1;
        if (th < 1) th = 1;
        if (tw > 65535 || th > 65535) {
            r->why = strdup("image is too elongated: its long side would exceed 65535 pixels");
            return;
        }
        if ((tw != sw || th != sh) &&
            dse_image_resize(im, 0, 0, sw, sh, (int)tw, (int)th, rs, work, &err)) {
            r->why = strdup(err.msg);
            return;
        }
        if (tw != sw || th != sh) out = rs;
    }
    if (out->w > 65535 || out->h > 65535) {
        r->why = strdup("image is larger than 65535 pixels a side; pack it with --size");
        return;
    }
    r->w = out->w, r->h = out->h;
    if (wr->f->items[i].split == DSE_PACK_TRAIN) { /* per-channel sums for the statistics */
        size_t np = (size_t)out->w * out->h;
        for (int ch = 0; ch < out->c; ch++) {
            uint64_t s = 0, s2 = 0;
            for (size_t k = 0; k < np; k++) {
                uint32_t v = out->px[k * out->c + ch];
                s += v, s2 += v * v;
            }
            r->sum[ch] = s, r->sum2[ch] = s2;
        }
    }
    if (o->format == DSE_PACK_JPEG) {
        if (dse_image_encode_jpeg(out, o->quality, &r->bytes, &r->len, &err)) r->why = strdup(err.msg);
        return;
    }
    r->len = (size_t)out->w * out->h * out->c;
    r->bytes = malloc(r->len ? r->len : 1);
    if (!r->bytes) r->why = strdup("out of memory");
    else memcpy(r->bytes, out->px, r->len);
}

static void *pack_worker(void *arg) {
    struct writer *wr = arg;
    struct dse_image im = { 0 }, rs = { 0 };
    struct dse_image_work work = { 0 };
    pthread_mutex_lock(&wr->mu);
    for (;;) {
        while (!wr->abort && wr->next < wr->f->n && wr->next >= wr->written + wr->window)
            pthread_cond_wait(&wr->cv_space, &wr->mu);
        if (wr->abort || wr->next >= wr->f->n) break;
        int i = wr->next++;
        struct result *r = &wr->ring[i % wr->window];
        pthread_mutex_unlock(&wr->mu);
        make_record(wr, i, r, &im, &rs, &work);
        pthread_mutex_lock(&wr->mu);
        r->state = 1;
        pthread_cond_broadcast(&wr->cv_ready);
    }
    pthread_mutex_unlock(&wr->mu);
    dse_image_deinit(&im);
    dse_image_deinit(&rs);
    dse_image_work_deinit(&work);
    return NULL;
}

/* Errors name the pack being made (out, the caller's string) and the temporary file in the
 * message: the temporary file is gone by the time the error is printed. */
static enum dse_status write_all(FILE *fp, const char *out, const char *tmp, const void *p, size_t n,
                                 struct dse_err *err) {
    if (n && fwrite(p, 1, n, fp) != n)
        return dse_err_set(err, DSE_ERR_IO, out, 0, "cannot write %s: %s", tmp, strerror(errno));
    return DSE_OK;
}

/* Temporary files of packs to out_path whose process is gone (killed: SIGKILL, a crash, a
 * machine that went down) are removed, so a pack cache does not fill with half-made packs.
 * A live process's file, or one of another host (its pid says nothing here), is left. */
static void remove_stale_temps(const char *out_path) {
    char dir[1200], path[2400];
    const char *slash = strrchr(out_path, '/');
    const char *base = slash ? slash + 1 : out_path;
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == out_path ? 1 : (int)(slash - out_path), out_path);
    size_t bl = strlen(base);
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d) return;
    while ((e = readdir(d))) {
        const char *nm = e->d_name;
        char *end;
        if (strncmp(nm, base, bl) || strncmp(nm + bl, ".tmp.", 5)) continue;
        long pid = strtol(nm + bl + 5, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, nm) < (int)sizeof path) unlink(path);
    }
    closedir(d);
}

/* What dse_pack_write checks before it creates a file. */
static enum dse_status check_pack_opts(const struct dse_imgfolder *f, const struct dse_pack_opts *o,
                                       struct dse_err *err) {
    if (o->size < 0 || o->size > 4096 || o->size == 1 || (o->size > 0 && o->size < 8))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "--size %d is out of range; expected 8..4096, or 0 "
                           "to keep each image's size", o->size);
    if (o->channels != 1 && o->channels != 3)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%d channels; expected 1 or 3", o->channels);
    if (o->quality < 1 || o->quality > 100)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "--quality %d is out of range; expected 1..100", o->quality);
    if (o->threads < 1) return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "threads must be >= 1");
    if (!host_little_endian())
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "packs are written on little-endian hosts only");
    if (f->n < 1) return dse_err_set(err, DSE_ERR_IO, f->root, 0, "no images to pack");
    return DSE_OK;
}

/* What the writing thread has written: the index so far, the training images per class and
 * their per-channel sums (the pack's statistics), and the offset of the next record. */
struct tally {
    struct dse_pack_record *index;
    int                     kept;
    int                    *per_class;
    uint64_t                s[3], s2[3], pixels, off;
};

/* Record r of item it, in the folder's order: written to fp and to the index, or, when the
 * image was bad, an error (or, with skip_bad, reported and counted). */
static enum dse_status take_record(const struct dse_imgfolder_item *it, const struct result *r,
                                   const struct dse_pack_opts *o, FILE *fp, const char *out_path,
                                   const char *tmp, struct tally *t, struct dse_pack_summary *sum,
                                   struct dse_err *err) {
    enum dse_status st = DSE_OK;
    if (!r->bytes) {
        if (!o->skip_bad) {
            st = dse_err_set(err, DSE_ERR_IO, it->path, 0, "%s (pass --skip-bad to leave bad images out)",
                             r->why ? r->why : "cannot decode");
        } else {
            if (o->bad) o->bad(o->arg, it->path, r->why ? r->why : "cannot decode");
            sum->skipped++;
        }
        return st;
    }
    struct dse_pack_record *rec = &t->index[t->kept++];
    rec->offset = t->off, rec->bytes = (uint32_t)r->len;
    rec->w = (uint16_t)r->w, rec->h = (uint16_t)r->h;
    rec->label = (uint32_t)it->label;
    rec->crc = crc_of(r->bytes, r->len);
    if (r->len > UINT32_MAX) st = dse_err_set(err, DSE_ERR_IO, it->path, 0, "record over 4 GiB");
    else st = write_all(fp, out_path, tmp, r->bytes, r->len, err);
    t->off += r->len;
    sum->records[it->split]++;
    if (it->split == DSE_PACK_TRAIN) {
        t->per_class[it->label]++;
        for (int ch = 0; ch < o->channels; ch++) t->s[ch] += r->sum[ch], t->s2[ch] += r->sum2[ch];
        t->pixels += (uint64_t)r->w * (uint64_t)r->h;
    }
    return st;
}

/* After the last record: every class and split kept a good image. */
static enum dse_status check_kept(const struct dse_imgfolder *f, const struct dse_pack_summary *sum,
                                  const int *per_class, struct dse_err *err) {
    if (sum->records[DSE_PACK_TRAIN] == 0)
        return dse_err_set(err, DSE_ERR_IO, f->root, 0, "every training image was bad; nothing to pack");
    for (int c = 0; c < f->classes; c++)
        if (!per_class[c])
            return dse_err_set(err, DSE_ERR_IO, f->root, 0, "class '%s' has no good training image left",
                               f->class_names[c]);
    if (f->count[DSE_PACK_VAL] > 0 && sum->records[DSE_PACK_VAL] == 0)
        return dse_err_set(err, DSE_ERR_IO, f->root, 0, "every %s/ image was bad", f->val_name);
    return DSE_OK;
}

/* The header (docs/data.md has the layout), once the index (index_bytes at index_off, its
 * CRC with the class names' in icrc) and the names (names_bytes after it) are written. */
static void fill_header(uint8_t *header, const struct dse_imgfolder *f, const struct dse_pack_opts *o,
                        const struct dse_pack_summary *sum, const struct tally *t, uint64_t index_off,
                        uint64_t index_bytes, uint64_t names_bytes, uint32_t icrc) {
    memcpy(header + H_MAGIC, DSE_PACK_MAGIC, 8);
    put32(header + H_VERSION, DSE_PACK_VERSION);
    put32(header + H_HEADER_BYTES, DSE_PACK_HEADER);
    put32(header + H_FORMAT, (uint32_t)o->format);
    put32(header + H_CHANNELS, (uint32_t)o->channels);
    put32(header + H_SHORT, (uint32_t)o->size);
    put32(header + H_QUALITY, o->format == DSE_PACK_JPEG ? (uint32_t)o->quality : 0);
    put32(header + H_CLASSES, (uint32_t)f->classes);
    put32(header + H_N, (uint32_t)t->kept);
    memcpy(header + H_SPLITS, "train", 5);
    put32(header + H_SPLITS + 8, 0);
    put32(header + H_SPLITS + 12, (uint32_t)sum->records[DSE_PACK_TRAIN]);
    memcpy(header + H_SPLITS + 16, f->val_name, strlen(f->val_name));
    put32(header + H_SPLITS + 24, (uint32_t)sum->records[DSE_PACK_TRAIN]);
    put32(header + H_SPLITS + 28, (uint32_t)sum->records[DSE_PACK_VAL]);
    for (int ch = 0; ch < 4; ch++) {
        double mean = 0, sd = 1;
        if (ch < o->channels && t->pixels) {
            mean = (double)t->s[ch] / (double)t->pixels / 255.0;
            double var = (double)t->s2[ch] / (double)t->pixels / (255.0 * 255.0) - mean * mean;
            sd = var > 0 ? sqrt(var) : 1.0;
        }
        putf(header + H_MEAN + 4 * ch, (float)mean);
        putf(header + H_STD + 4 * ch, (float)sd);
    }
    put64(header + H_INDEX_OFF, index_off);
    put64(header + H_INDEX_BYTES, index_bytes);
    put64(header + H_NAMES_OFF, index_off + index_bytes);
    put64(header + H_NAMES_BYTES, names_bytes);
    put64(header + H_DATA_OFF, DSE_PACK_HEADER);
    put64(header + H_DATA_BYTES, index_off - DSE_PACK_HEADER);
    put64(header + H_FINGERPRINT, f->fingerprint);
    put64(header + H_CREATED, (uint64_t)time(NULL));
    put32(header + H_INDEX_CRC, (uint32_t)icrc);
    put32(header + H_CRC, crc_of(header, H_CRC));
}

enum dse_status dse_pack_write(const struct dse_imgfolder *f, const char *out_path,
                               const struct dse_pack_opts *o, struct dse_pack_summary *sum,
                               struct dse_err *err) {
    char tmp[1200];
    FILE *fp = NULL;
    struct writer wr;
    pthread_t *th = NULL;
    int nth = 0;
    struct tally t = { .off = DSE_PACK_HEADER };
    enum dse_status st = DSE_OK;
    double t0 = now_s(), last = t0;
    memset(sum, 0, sizeof *sum);
    memset(&wr, 0, sizeof wr);
    if ((st = check_pack_opts(f, o, err))) return st;
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out_path, (long)getpid()) >= (int)sizeof tmp)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "output path is too long");
    if ((st = dse_fs_check_target(out_path, err))) return st;
    remove_stale_temps(out_path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    if (fd < 0) return dse_err_set(err, DSE_ERR_IO, out_path, 0, "cannot create %s: %s", tmp, strerror(errno));
    fp = fdopen(fd, "wb");
    if (!fp) {
        close(fd);
        unlink(tmp);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    setvbuf(fp, NULL, _IOFBF, 1 << 20);
    uint8_t header[DSE_PACK_HEADER];
    memset(header, 0, sizeof header);
    if ((st = write_all(fp, out_path, tmp, header, sizeof header, err))) goto done;

    t.index = malloc((size_t)f->n * sizeof *t.index);
    t.per_class = calloc((size_t)f->classes, sizeof *t.per_class);
    wr.f = f, wr.o = o;
    wr.window = 8 * o->threads + 8;
    wr.ring = calloc((size_t)wr.window, sizeof *wr.ring);
    th = calloc((size_t)o->threads, sizeof *th);
    if (!t.index || !t.per_class || !wr.ring || !th) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for the index of %d images", f->n);
        goto done;
    }
    pthread_mutex_init(&wr.mu, NULL);
    pthread_cond_init(&wr.cv_ready, NULL);
    pthread_cond_init(&wr.cv_space, NULL);
    for (nth = 0; nth < o->threads; nth++)
        if (pthread_create(&th[nth], NULL, pack_worker, &wr)) break;
    if (nth == 0) {
        st = dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "cannot start a packing thread");
        goto join;
    }
    /* Write the records in the folder's order as the workers finish them. */
    for (int i = 0; i < f->n; i++) {
        struct result *r = &wr.ring[i % wr.window];
        pthread_mutex_lock(&wr.mu);
        while (!r->state) pthread_cond_wait(&wr.cv_ready, &wr.mu);
        pthread_mutex_unlock(&wr.mu);
        st = take_record(&f->items[i], r, o, fp, out_path, tmp, &t, sum, err);
        free(r->bytes);
        free(r->why);
        memset(r, 0, sizeof *r);
        if (!st && o->cancel && *o->cancel)
            st = dse_err_set(err, DSE_ERR_IO, out_path, 0, "interrupted after %d of %d images; nothing was "
                             "written (run the command again)", i + 1, f->n);
        pthread_mutex_lock(&wr.mu);
        wr.written = i + 1;
        if (st) wr.abort = 1;
        pthread_cond_broadcast(&wr.cv_space);
        pthread_mutex_unlock(&wr.mu);
        if (st) break;
        double now = now_s();
        if (o->progress && (now - last >= 0.5 || i == f->n - 1)) {
            struct dse_pack_progress p = { .done = i + 1, .total = f->n, .skipped = sum->skipped,
                                           .bytes = t.off - DSE_PACK_HEADER, .seconds = now - t0 };
            o->progress(o->arg, &p);
            last = now;
        }
    }
join:
    pthread_mutex_lock(&wr.mu);
    wr.abort = 1;
    pthread_cond_broadcast(&wr.cv_space);
    pthread_mutex_unlock(&wr.mu);
    for (int k = 0; k < nth; k++) pthread_join(th[k], NULL);
    for (int k = 0; k < wr.window; k++) free(wr.ring[k].bytes), free(wr.ring[k].why);
    pthread_mutex_destroy(&wr.mu);
    pthread_cond_destroy(&wr.cv_ready);
    pthread_cond_destroy(&wr.cv_space);
    if (st || (st = check_kept(f, sum, t.per_class, err))) goto done;

    /* Zeros up to a multiple of 8 (the index is read in place, as 24-byte records with a
     * u64 first), the index, the class names, then the header, which makes the file valid. */
    static const uint8_t zeros[8];
    size_t pad = (size_t)((8 - t.off % 8) % 8);
    if ((st = write_all(fp, out_path, tmp, zeros, pad, err))) goto done;
    t.off += pad;
    uint64_t index_off = t.off, index_bytes = (uint64_t)t.kept * sizeof *t.index;
    uint64_t names_bytes = (uint64_t)f->classes * DSE_PACK_CLASS_MAX;
    if ((st = write_all(fp, out_path, tmp, t.index, (size_t)index_bytes, err)) ||
        (st = write_all(fp, out_path, tmp, f->class_names, (size_t)names_bytes, err)))
        goto done;
    uint32_t icrc = crc_more(crc_of(t.index, (size_t)index_bytes), f->class_names, (size_t)names_bytes);
    fill_header(header, f, o, sum, &t, index_off, index_bytes, names_bytes, icrc);
    if (fflush(fp) || fseek(fp, 0, SEEK_SET) || (st = write_all(fp, out_path, tmp, header, sizeof header, err)) ||
        fflush(fp) || fsync(fileno(fp))) {
        if (!st) st = dse_err_set(err, DSE_ERR_IO, out_path, 0, "cannot write %s: %s", tmp, strerror(errno));
        goto done;
    }
    sum->bytes = index_off + index_bytes + names_bytes;
done:
    if (fp && fclose(fp) && !st)
        st = dse_err_set(err, DSE_ERR_IO, out_path, 0, "cannot close %s: %s", tmp, strerror(errno));
    if (!st && rename(tmp, out_path))
        st = dse_err_set(err, DSE_ERR_IO, out_path, 0, "cannot rename %s into place: %s", tmp, strerror(errno));
    if (st) unlink(tmp);
    else dse_fs_sync_dir(out_path, NULL);
    free(t.index);
    free(t.per_class);
    free(wr.ring);
    free(th);
    sum->seconds = now_s() - t0;
    return st;
}

/* ---- reading a pack ------------------------------------------------------------------ */

int dse_pack_is(const char *path) {
    char m[8];
    FILE *fp = fopen(path, "rb");
    if (!fp) return 0;
    int ok = fread(m, 1, 8, fp) == 8 && !memcmp(m, DSE_PACK_MAGIC, 7); /* any version */
    fclose(fp);
    return ok;
}

int dse_pack_named(const char *path) {
    size_t n = strlen(path);
    return dse_pack_is(path) || (n > 5 && !strcmp(path + n - 5, ".pack") && access(path, F_OK) == 0);
}

void dse_pack_close(struct dse_pack *p) {
    if (!p) return;
    if (p->map) munmap((void *)p->map, p->size);
    if (p->fd >= 0) close(p->fd);
    free(p->class_names);
    free(p);
}

static enum dse_status bad_pack(struct dse_pack *p, const char *path, struct dse_err *err, const char *what) {
    dse_pack_close(p);
    return dse_err_set(err, DSE_ERR_IO, path, 0, "%s", what);
}

enum dse_status dse_pack_open(const char *path, struct dse_pack **out, struct dse_err *err) {
    struct stat sb;
    char msg[300];
    *out = NULL;
    struct dse_pack *p = calloc(1, sizeof *p);
    if (!p) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    p->fd = -1;
    dse_strlcpy(p->path, path, (int)sizeof p->path);
    if (!host_little_endian()) return bad_pack(p, path, err, "packs are read on little-endian hosts only");
    p->fd = open(path, O_RDONLY);
    if (p->fd < 0 || fstat(p->fd, &sb)) {
        snprintf(msg, sizeof msg, "cannot open: %s", strerror(errno));
        return bad_pack(p, path, err, msg);
    }
    if (!S_ISREG(sb.st_mode)) return bad_pack(p, path, err, "not a file; expected a .pack file");
    p->size = (size_t)sb.st_size;
    char magic[8];
    if (p->size < 8 || pread(p->fd, magic, 8, 0) != 8 || memcmp(magic, DSE_PACK_MAGIC, 7))
        return bad_pack(p, path, err, "not a dse pack (bad magic)");
    if (p->size < DSE_PACK_HEADER) {
        snprintf(msg, sizeof msg, "truncated: %zu bytes, less than the %d-byte pack header", p->size,
                 DSE_PACK_HEADER);
        return bad_pack(p, path, err, msg);
    }
    void *m = mmap(NULL, p->size, PROT_READ, MAP_SHARED, p->fd, 0);
    if (m == MAP_FAILED) {
        snprintf(msg, sizeof msg, "cannot map: %s", strerror(errno));
        return bad_pack(p, path, err, msg);
    }
    p->map = m;
    const uint8_t *h = p->map;
    if (memcmp(h, DSE_PACK_MAGIC, 7)) return bad_pack(p, path, err, "not a dse pack (bad magic)");
    uint32_t version = get32(h + H_VERSION);
    if (version > DSE_PACK_VERSION || h[7] != DSE_PACK_MAGIC[7]) {
        snprintf(msg, sizeof msg, "pack format version %u is newer than this dse reads (version %u); "
                 "update dse or re-pack the folder with this one", version, DSE_PACK_VERSION);
        return bad_pack(p, path, err, msg);
    }
    if (get32(h + H_CRC) != crc_of(h, H_CRC))
        return bad_pack(p, path, err, "corrupt pack: the header's CRC-32 does not match");
    /* The header is as written (or forged with a right CRC): every field is checked before it
     * is used, and sizes are compared, never summed where the sum could wrap. */
    uint32_t n32 = get32(h + H_N), c32 = get32(h + H_CLASSES), fmt = get32(h + H_FORMAT), nch = get32(h + H_CHANNELS);
    uint64_t io = get64(h + H_INDEX_OFF), ib = get64(h + H_INDEX_BYTES);
    uint64_t no = get64(h + H_NAMES_OFF), nb = get64(h + H_NAMES_BYTES);
    uint64_t dof = get64(h + H_DATA_OFF), db = get64(h + H_DATA_BYTES), size = p->size;
    if (version < 1 || get32(h + H_HEADER_BYTES) != DSE_PACK_HEADER || (fmt != DSE_PACK_RAW && fmt != DSE_PACK_JPEG) ||
        (nch != 1 && nch != 3) || c32 < 2 || c32 > 1000000 || n32 < 1 || n32 > INT_MAX ||
        ib != (uint64_t)n32 * sizeof(struct dse_pack_record) || nb != (uint64_t)c32 * DSE_PACK_CLASS_MAX ||
        dof != DSE_PACK_HEADER || (db <= size - dof && (io != dof + db || io % 8 || no != io + ib)))
        return bad_pack(p, path, err, "corrupt pack: the header's fields do not fit together");
    if (db > size - dof || ib + nb > size - dof - db) { /* ib, nb < 2^37: no wrap */
        if (db > size - dof) snprintf(msg, sizeof msg, "truncated: %zu bytes, the header says more", p->size);
        else snprintf(msg, sizeof msg, "truncated: %zu bytes, the header says %llu", p->size,
                      (unsigned long long)(dof + db + ib + nb));
        return bad_pack(p, path, err, msg);
    }
    p->version = (int)version;
    p->format = (enum dse_pack_format)fmt;
    p->channels = (int)nch;
    p->short_side = (int)get32(h + H_SHORT);
    p->quality = (int)get32(h + H_QUALITY);
    p->classes = (int)c32;
    p->n = (int)n32;
    p->fingerprint = get64(h + H_FINGERPRINT);
    if (crc_more(crc_of(p->map + io, (size_t)ib), p->map + no, (size_t)nb) != get32(h + H_INDEX_CRC))
        return bad_pack(p, path, err, "corrupt pack: the index's CRC-32 does not match");
    uint32_t first[DSE_PACK_SPLITS], count[DSE_PACK_SPLITS];
    for (int k = 0; k < DSE_PACK_SPLITS; k++) {
        const uint8_t *sp = h + H_SPLITS + 16 * k;
        memcpy(p->split_name[k], sp, 7);
        p->split_name[k][7] = '\0';
        first[k] = get32(sp + 8), count[k] = get32(sp + 12);
    }
    if (first[0] != 0 || count[0] < 1 || first[1] != count[0] || (uint64_t)count[0] + count[1] != n32)
        return bad_pack(p, path, err, "corrupt pack: the splits do not cover the records");
    for (int k = 0; k < DSE_PACK_SPLITS; k++) p->first[k] = (int)first[k], p->count[k] = (int)count[k];
    for (int ch = 0; ch < 4; ch++) p->mean[ch] = getf(h + H_MEAN + 4 * ch), p->std[ch] = getf(h + H_STD + 4 * ch);
    p->index = (const struct dse_pack_record *)(const void *)(p->map + io);
    for (int i = 0; i < p->n; i++) {
        const struct dse_pack_record *r = &p->index[i];
        uint64_t raw = (uint64_t)r->w * r->h * (uint64_t)p->channels;
        if (r->offset < dof || r->offset > io || r->bytes > io - r->offset || r->label >= (uint32_t)p->classes ||
            !r->w || !r->h ||
            (p->format == DSE_PACK_RAW && r->bytes != raw)) {
            snprintf(msg, sizeof msg, "corrupt pack: record %d does not fit its data", i);
            return bad_pack(p, path, err, msg);
        }
    }
    p->class_names = calloc((size_t)p->classes, sizeof *p->class_names);
    if (!p->class_names) return bad_pack(p, path, err, "out of memory");
    memcpy(p->class_names, p->map + no, (size_t)nb);
    for (int c = 0; c < p->classes; c++) {
        char shown[128]; /* enough of the escaped name to recognise it */
        p->class_names[c][DSE_PACK_CLASS_MAX - 1] = '\0';
        if (name_shown(shown, sizeof shown, p->class_names[c])) {
            snprintf(msg, sizeof msg, "class %d's name '%s' holds control characters; re-pack the folder "
                     "with this dse, which refuses such names", c, shown);
            return bad_pack(p, path, err, msg);
        }
    }
    *out = p;
    return DSE_OK;
}

enum dse_status dse_pack_image(const struct dse_pack *p, int i, struct dse_image *im, struct dse_err *err) {
    DSE_ASSERT(i >= 0 && i < p->n);
    const struct dse_pack_record *r = &p->index[i];
    const uint8_t *b = p->map + r->offset;
    enum dse_status st;
    if (crc_of(b, r->bytes) != r->crc)
        return dse_err_set(err, DSE_ERR_IO, p->path, 0, "corrupt pack: record %d fails its CRC-32 check", i);
    if (p->format == DSE_PACK_RAW) {
        if ((st = dse_image_reserve(im, r->w, r->h, p->channels, err))) return st;
        memcpy(im->px, b, r->bytes);
        return DSE_OK;
    }
    struct dse_err e = { 0 };
    if ((st = dse_image_decode(b, r->bytes, p->channels, 0, (int64_t)r->w * r->h, im, &e))) /* the index's size */
        return dse_err_set(err, st, p->path, 0, "record %d: %s", i, e.msg);
    if (im->w != r->w || im->h != r->h)
        return dse_err_set(err, DSE_ERR_IO, p->path, 0, "corrupt pack: record %d decodes to %dx%d; the index says %dx%d",
                           i, im->w, im->h, r->w, r->h);
    return DSE_OK;
}

enum dse_status dse_pack_verify(const struct dse_pack *p, int decode, struct dse_err *err) {
    struct dse_image im = { 0 };
    enum dse_status st = DSE_OK;
    for (int i = 0; i < p->n && !st; i++) {
        const struct dse_pack_record *r = &p->index[i];
        if (!decode) {
            if (crc_of(p->map + r->offset, r->bytes) != r->crc)
                st = dse_err_set(err, DSE_ERR_IO, p->path, 0, "corrupt pack: record %d fails its CRC-32 check", i);
        } else {
            st = dse_pack_image(p, i, &im, err);
        }
    }
    dse_image_deinit(&im);
    return st;
}
