/* compress.c: Deep Compression (Han et al., 2016; issue #35) of a trained checkpoint, in
 * stages: prune (per-layer magnitude pruning), retrain (masked), share (k-means per weight
 * tensor), finetune (the codebook, gradients summed per centroid), code (the .dsez, written by
 * engine/dsez.c). Each stage's result is a checkpoint in the work folder, so that a killed run
 * goes on where it was and gives the bytes of an uninterrupted one. The method, its defaults
 * and why: docs/compress.md. */
#include "engine/compress.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "base/fs.h"
#include "base/pcg32.h"
#include "engine/ckpt_impl.h"
#include "engine/compress_impl.h"

/* Codebook fine-tuning's learning rate: the recipe's lr times this. The summed gradient is a
 * cluster's size times a weight's, but the recipe's clipping bounds every step, and 1 did best
 * of 1, 0.1 and 0.01 (docs/compress.md, "Fine-tuning's learning rate"). */
#define FINETUNE_LR_SCALE 1.0f
/* Lloyd's iterations stop when no weight changes cluster, or after this many. */
#define KMEANS_ITERS_MAX 1000

void dse_compress_opts_default(struct dse_compress_opts *o) {
    memset(o, 0, sizeof *o);
    dse_train_opts_default(&o->train);
#define DEF_(field, key, kind, def, lo, hi, cli, help) o->field = def;
    DSE_COMPRESS_SETTINGS(DEF_)
#undef DEF_
}

/* One weight tensor that is pruned and shared: layer's weight in the model's net. */
struct shared {
    int       layer;
    int64_t   n, kept;
    uint8_t  *mask;      /* [n] 1: kept */
    uint16_t *index;     /* [n] after share: 0 pruned, else 1 + its cluster */
    int       k;         /* codebook entries, index 0 (the value 0) included */
    float    *codebook;  /* [k] */
    double   *sum;       /* [k] the hook's per-cluster gradient sums */
};

struct plan {
    struct shared *w;
    int            n;
    int            finetune; /* 1: the hook sums gradients per cluster; 0: it masks */
};

static void plan_free(struct plan *p) {
    for (int i = 0; i < p->n; i++) free(p->w[i].mask), free(p->w[i].index), free(p->w[i].codebook), free(p->w[i].sum);
    free(p->w);
    memset(p, 0, sizeof *p);
}

static int compressed_type(enum dse_layer_type t) {
    return t == DSE_LAYER_CONV || t == DSE_LAYER_FC || t == DSE_LAYER_DECONV;
}

/* ---- settings ------------------------------------------------------------------------------ */

/* A setting against its compress.def row: an INT in [lo, hi], a REAL in (lo, hi]. */
static enum dse_status check_int(const char *key, int v, int lo, int hi, struct dse_err *err) {
    if (v >= lo && v <= hi) return DSE_OK;
    return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s %d is out of range; expected %d to %d", key, v, lo, hi);
}

static enum dse_status check_real(const char *key, double v, double lo, double hi, struct dse_err *err) {
    if (v > lo && v <= hi) return DSE_OK;
    return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s %g is out of range; expected %g < %s <= %g", key, v, lo, key,
                       hi);
}

static enum dse_status check_settings(const struct dse_net *net, const struct dse_compress_opts *o,
                                      struct dse_err *err) {
    enum dse_status st;
#define CHECK_INT_(field, lo, hi)  check_int(#field, o->field, lo, hi, err)
#define CHECK_REAL_(field, lo, hi) check_real(#field, o->field, lo, hi, err)
#define X(field, key, kind, def, lo, hi, cli, help) \
    if ((st = CHECK_##kind##_(field, lo, hi))) return st;
    DSE_COMPRESS_SETTINGS(X)
#undef X
#undef CHECK_INT_
#undef CHECK_REAL_
    for (int k = 0; k < o->n_layers; k++) {
        const struct dse_compress_layer *l = &o->layers[k];
        int i = dse_net_find(net, l->layer);
        if (i < 0)
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "a layer density names '%s', which is no layer of %s",
                               l->layer, net->name);
        if (!compressed_type(net->layers[i].type))
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "a layer density names '%s', a %s layer; only conv, "
                               "fc and deconv weights are pruned", l->layer, dse_layer_type_str(net->layers[i].type));
#define LO_(field, key, kind, def, lo, hi, cli, help) lo
#define HI_(field, key, kind, def, lo, hi, cli, help) hi
        if (check_real("density", l->density, DSE_COMPRESS_density(LO_), DSE_COMPRESS_density(HI_), err)) {
#undef LO_
#undef HI_
            char why[sizeof err->msg];
            dse_strlcpy(why, err->msg, (int)sizeof why);
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "layer '%s' %s", l->layer, why);
        }
    }
    return DSE_OK;
}

static double layer_density(const struct dse_net *net, int i, const struct dse_compress_opts *o) {
    for (int k = o->n_layers - 1; k >= 0; k--) /* the last given wins, as an option given twice */
        if (!strcmp(o->layers[k].layer, net->layers[i].name)) return o->layers[k].density;
    return dse_net_prune_density(net, i, o->density);
}

/* ---- prune: the round(d n) largest |w|, ties to the lower index ---------------------------- */

struct mag {
    float   a;
    int64_t i;
};

static int by_magnitude(const void *x, const void *y) {
    const struct mag *a = x, *b = y;
    if (a->a != b->a) return a->a > b->a ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

int64_t dse_compress_prune_mask(const float *w, int64_t n, double density, uint8_t *mask) {
    int64_t keep = llround(density * (double)n);
    if (keep > n) keep = n;
    struct mag *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    if (!v) return -1;
    for (int64_t i = 0; i < n; i++) v[i] = (struct mag){ .a = fabsf(w[i]), .i = i };
    qsort(v, (size_t)n, sizeof *v, by_magnitude);
    memset(mask, 0, (size_t)n);
    for (int64_t j = 0; j < keep; j++) mask[v[j].i] = 1;
    free(v);
    return keep;
}

/* The plan's weight tensors and their masks, from the model of the original checkpoint. */
static enum dse_status plan_make(const struct dse_model *m, const struct dse_compress_opts *o, struct plan *p,
                                 struct dse_err *err) {
    memset(p, 0, sizeof *p);
    if (!(p->w = calloc((size_t)m->net.n_layers, sizeof *p->w))) goto nomem;
    for (int i = 0; i < m->net.n_layers; i++) {
        const struct dse_tensor *t = m->nodes[i].weight;
        if (!t || !compressed_type(m->net.layers[i].type)) continue;
        struct shared *s = &p->w[p->n++];
        s->layer = i, s->n = dse_tensor_count(t);
        if (!(s->mask = malloc((size_t)s->n + 1)) || !(s->index = calloc((size_t)s->n + 1, sizeof *s->index)) ||
            (s->kept = dse_compress_prune_mask(t->data, s->n, layer_density(&m->net, i, o), s->mask)) < 0)
            goto nomem;
    }
    return DSE_OK;
nomem:
    plan_free(p);
    return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
}

/* ---- share: k-means in one dimension --------------------------------------------------------- */

static int by_value(const void *x, const void *y) {
    float a = *(const float *)x, b = *(const float *)y;
    return (a > b) - (a < b);
}

/* The first of v[lo, hi) above t (v ascending). */
static int64_t above(const float *v, int64_t lo, int64_t hi, double t) {
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((double)v[mid] > t) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* Which of k ascending centroids x is nearest to (ties to the lower): the midpoints' rule. */
static int nearest(const double *c, int k, float x) {
    int lo = 0, hi = k - 1; /* the first j whose midpoint with j + 1 x does not pass */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if ((double)x > 0.5 * (c[mid] + c[mid + 1])) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int dse_compress_kmeans(const float *x, int64_t n, int k, double *c, int *iters) {
    float   *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    double  *pre = malloc(sizeof *pre * (size_t)(n + 1));
    int64_t *b = malloc(sizeof *b * (size_t)(k + 1)), *b0 = malloc(sizeof *b0 * (size_t)(k + 1));
    if (!v || !pre || !b || !b0) {
        free(v), free(pre), free(b), free(b0);
        return -1;
    }
    memcpy(v, x, sizeof *v * (size_t)n);
    qsort(v, (size_t)n, sizeof *v, by_value);
    pre[0] = 0;
    for (int64_t i = 0; i < n; i++) pre[i + 1] = pre[i] + v[i];
    /* linear initialization over [min, max] (Han et al. found it best: the large weights,
     * few but important, keep centroids of their own) */
    const double lo = n ? v[0] : 0, hi = n ? v[n - 1] : 0;
    for (int j = 0; j < k; j++) c[j] = k > 1 ? lo + (hi - lo) * j / (k - 1) : 0.5 * (lo + hi);
    for (int j = 0; j <= k; j++) b0[j] = -1;
    int it = 0;
    for (; it < KMEANS_ITERS_MAX; it++) {
        b[0] = 0, b[k] = n;
        for (int j = 1; j < k; j++) b[j] = above(v, b[j - 1], n, 0.5 * (c[j - 1] + c[j]));
        if (!memcmp(b, b0, sizeof *b * (size_t)(k + 1))) break; /* no weight moved */
        memcpy(b0, b, sizeof *b * (size_t)(k + 1));
        for (int j = 0; j < k; j++) /* an empty cluster keeps its centroid */
            if (b[j + 1] > b[j]) c[j] = (pre[b[j + 1]] - pre[b[j]]) / (double)(b[j + 1] - b[j]);
        for (int j = 1; j < k; j++) /* ascending again (an empty cluster's may be passed) */
            for (int q = j; q > 0 && c[q - 1] > c[q]; q--) {
                double t = c[q];
                c[q] = c[q - 1], c[q - 1] = t;
            }
    }
    if (iters) *iters = it;
    free(v), free(pre), free(b), free(b0);
    return 0;
}

/* Cluster s's kept weights w into at most 2^bits - 1 centroids: s->index, s->codebook (the
 * clusters that hold weights, ascending, after the 0 of index 0). */
static enum dse_status share(struct shared *s, const float *w, int bits, struct dse_err *err) {
    const int k = (1 << bits) - 1;
    float  *x = malloc(sizeof *x * (size_t)(s->kept + 1));
    double *c = malloc(sizeof *c * (size_t)k);
    int    *id = calloc((size_t)k, sizeof *id), *used = calloc((size_t)k, sizeof *used);
    free(s->codebook), free(s->sum);
    s->codebook = malloc(sizeof *s->codebook * (size_t)(k + 1));
    s->sum = malloc(sizeof *s->sum * (size_t)(k + 1));
    int64_t nk = 0;
    for (int64_t i = 0; x && i < s->n; i++)
        if (s->mask[i]) x[nk++] = w[i];
    if (!x || !c || !id || !used || !s->codebook || !s->sum || dse_compress_kmeans(x, nk, k, c, NULL)) {
        free(x), free(c), free(id), free(used);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    for (int64_t i = 0; i < s->n; i++)
        if (s->mask[i]) used[nearest(c, k, w[i])] = 1;
    s->codebook[0] = 0.0f, s->k = 1;
    for (int j = 0; j < k; j++)
        if (used[j]) id[j] = s->k, s->codebook[s->k++] = (float)c[j];
    for (int64_t i = 0; i < s->n; i++) s->index[i] = s->mask[i] ? (uint16_t)id[nearest(c, k, w[i])] : 0;
    free(x), free(c), free(id), free(used);
    return DSE_OK;
}

/* Each weight its codebook value (after fine-tuning, with every centroid first set to its
 * members' mean: they moved together, so that is their common value, re-tied exactly). */
static void tie(struct shared *s, float *w, int remean) {
    if (remean) {
        int64_t *cnt = calloc((size_t)s->k, sizeof *cnt);
        if (cnt) {
            for (int j = 0; j < s->k; j++) s->sum[j] = 0;
            for (int64_t i = 0; i < s->n; i++) s->sum[s->index[i]] += w[i], cnt[s->index[i]]++;
            for (int j = 1; j < s->k; j++)
                if (cnt[j]) s->codebook[j] = (float)(s->sum[j] / (double)cnt[j]);
            free(cnt);
        }
    }
    for (int64_t i = 0; i < s->n; i++) w[i] = s->codebook[s->index[i]];
}

/* ---- the gradient hook (dse_train_opts.grad_hook) ------------------------------------------- */

static void grad_hook(void *arg, struct dse_model *m) {
    struct plan *p = arg;
    for (int k = 0; k < p->n; k++) {
        struct shared *s = &p->w[k];
        float *g = m->nodes[s->layer].weight->grad;
        if (!p->finetune) { /* masked retraining: a pruned weight gets no gradient */
            for (int64_t i = 0; i < s->n; i++)
                if (!s->mask[i]) g[i] = 0.0f;
            continue;
        }
        /* Han et al.: a centroid's gradient is the sum of its weights' gradients; every tied
         * weight takes it, so that they move together (index 0, the pruned zeros: none) */
        for (int j = 0; j < s->k; j++) s->sum[j] = 0;
        for (int64_t i = 0; i < s->n; i++) s->sum[s->index[i]] += g[i];
        s->sum[0] = 0;
        for (int64_t i = 0; i < s->n; i++) g[i] = (float)s->sum[s->index[i]];
    }
}

/* ---- the stages' files ------------------------------------------------------------------------ */

/* A path under the work folder, whose length dse_compress_run checked (WORK_MAX), so the
 * stages' names always fit. */
#define WORK_MAX 3072
/* The work folder's stamp (work_stamp) and its most bytes. */
#define STAMP "stamp"
#define STAMP_MAX (1 << 20)
static void pathf(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pathf(char *out, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

static void zero_momentum(struct dse_model *m) {
    for (int p = 0; p < m->n_params; p++)
        memset(m->momentum[p], 0, sizeof(float) * (size_t)dse_tensor_count(m->params[p]));
}

/* Where a training stage of `epochs` in dir goes on: its last epoch's checkpoint (done: *done
 * = 1), the latest within or after an epoch, else from. */
static void stage_resume(const char *dir, int epochs, const char *from, char *path, size_t size, int *done) {
    *done = 0;
    for (int k = epochs; k >= 0; k--) {
        pathf(path, size, "%s/epoch-%d.part.ckpt", dir, k + 1);
        if (k < epochs && exists(path)) return;
        pathf(path, size, "%s/epoch-%d.ckpt", dir, k);
        if (k > 0 && exists(path)) {
            *done = k == epochs;
            return;
        }
    }
    pathf(path, size, "%s", from);
}

static void stage_said(const struct dse_compress_opts *o, const char *name) {
    if (o->stage) o->stage(o->train.progress_arg, name);
}

/* o->finetune epochs from `from` (its weights, zero momentum) with the hook, in work/dir;
 * *last: the stage's final checkpoint. */
static enum dse_status train_stage(const struct dse_net *net, const struct dse_compress_opts *o, struct plan *p,
                                   const char *work, const char *name, const char *from, float lr_scale, char *last,
                                   size_t size, struct dse_err *err) {
    char dir[4096], at[4096];
    int done;
    pathf(dir, sizeof dir, "%s/%s", work, name);
    stage_resume(dir, o->finetune, from, at, sizeof at, &done);
    pathf(last, size, "%s/epoch-%d.ckpt", dir, o->finetune);
    if (done) return DSE_OK;
    struct dse_train_opts t = o->train;
    t.epochs = o->finetune, t.lr *= lr_scale, t.resume = at, t.checkpoint_dir = dir, t.stop_after_epoch = 0;
    t.grad_hook = grad_hook, t.grad_hook_arg = p;
    struct dse_train_result *r = malloc(sizeof *r);
    if (!r) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    enum dse_status st = dse_train_run(net, &t, r, err);
    if (!st && strcmp(r->status, "done"))
        st = dse_err_set(err, !strcmp(r->status, "diverged") ? DSE_ERR_CONFIG : DSE_ERR_INTERNAL, NULL, 0,
                         "%s %s in epoch %d; %s", name, r->status, r->diverged_epoch ? r->diverged_epoch
                         : r->epochs_done + 1, !strcmp(r->status, "diverged") ? "try a smaller learning rate"
                         : "run the same command again to go on");
    free(r);
    return st;
}

static enum dse_status eval_top1(const struct dse_net *net, const struct dse_compress_opts *o, const char *ckpt,
                                 float *top1, struct dse_err *err) {
    struct dse_eval_result e;
    enum dse_status st = dse_eval_run(net, &o->train, ckpt, &e, err);
    if (!st) *top1 = e.top1, dse_eval_result_free(&e);
    return st;
}

/* The .dsez of m (its weights tied) with the plan's codebooks. */
static enum dse_status code(struct dse_model *m, const struct plan *p, int bits, const struct dse_ckpt_meta *meta,
                            const char *out, struct dse_compress_result *r, struct dse_err *err) {
    struct dse_dsez z = { .n = 0 };
    enum dse_status st = DSE_OK;
    if (!(z.t = calloc((size_t)m->net.n_layers * 4 + 1, sizeof *z.t)))
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    int64_t values = 0;
    struct dse_ckpt_tensor c;
    for (int at = 0; !st && dse_ckpt_tensor_next(m, &at, &c);) {
        struct dse_dsez_tensor *t = &z.t[z.n++];
        dse_strlcpy(t->layer, m->net.layers[c.layer].name, (int)sizeof t->layer);
        dse_strlcpy(t->role, c.role, (int)sizeof t->role);
        t->count = dse_tensor_count(c.t);
        values += t->count;
        const struct shared *s = NULL;
        for (int q = 0; q < p->n && c.t == m->nodes[c.layer].weight; q++)
            if (p->w[q].layer == c.layer) s = &p->w[q];
        if (s) {
            t->bits = bits, t->codebook_n = s->k;
            t->codebook = malloc(sizeof *t->codebook * (size_t)s->k);
            t->index = malloc(sizeof *t->index * (size_t)(s->n + 1));
            if (t->codebook && t->index) {
                memcpy(t->codebook, s->codebook, sizeof *t->codebook * (size_t)s->k);
                memcpy(t->index, s->index, sizeof *t->index * (size_t)s->n);
            }
        } else if ((t->raw = malloc(sizeof *t->raw * (size_t)(t->count + 1)))) {
            memcpy(t->raw, c.t->data, sizeof *t->raw * (size_t)t->count);
        }
        if (!(s ? t->codebook && t->index : t->raw != NULL))
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    if (!st) st = dse_dsez_write(&z, m, meta, out, err);
    r->file_bytes = z.file_bytes, r->float_bytes = 4 * values;
    r->ratio = z.file_bytes > 0 ? (double)r->float_bytes / (double)z.file_bytes : 0;
    dse_dsez_free(&z);
    return st;
}

/* ---- the run ----------------------------------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Whether name is one of ours in a stage folder (epoch-<k>.ckpt, epoch-<k>.part.ckpt) or a
 * temporary file an interrupted atomic write of ours left (base/fs.c: ".NAME.host.pid.N.tmp"). */
static int ours(const char *name, int stage) {
    size_t len = strlen(name);
    if (name[0] == '.' && len > 5 && !strcmp(name + len - 4, ".tmp")) return 1;
    return stage && !strncmp(name, "epoch-", 6) && len >= 11 && !strcmp(name + len - 5, ".ckpt");
}

/* Remove what is ours (ours()) in dir, a folder reached without following a link. */
static void clear_dir(const char *dir, int stage) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(d));)
        if (ours(e->d_name, stage)) unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

/* The stage files of work (ours by name: the stages' epoch-*.ckpt and epoch-*.part.ckpt, the
 * three stage checkpoints, the stamp, and our writes' temporary files); nothing else is touched,
 * and no link followed. */
static void work_clear(const char *work) {
    static const char *const stage[] = { "retrain", "finetune" };
    static const char *const file[] = { "pruned.ckpt", "shared.ckpt", "decoded.ckpt", STAMP };
    char path[4096];
    for (int s = 0; s < 2; s++) {
        pathf(path, sizeof path, "%s/%s", work, stage[s]);
        clear_dir(path, 1);
        rmdir(path);
    }
    for (int f = 0; f < 4; f++) {
        pathf(path, sizeof path, "%s/%s", work, file[f]);
        unlink(path);
    }
    clear_dir(work, 0);
}

void dse_compress_work_remove(const char *work) {
    work_clear(work);
    rmdir(work);
}

/* CRC-32 of path's bytes and their count, read a megabyte at a time. */
static enum dse_status file_crc(const char *path, unsigned long *crc, size_t *len, struct dse_err *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return dse_err_set(err, DSE_ERR_IO, path, 0, "cannot open: %s", strerror(errno));
    static const size_t chunk = 1 << 20;
    unsigned char *buf = malloc(chunk);
    *crc = crc32(0L, Z_NULL, 0), *len = 0;
    size_t n;
    while (buf && (n = fread(buf, 1, chunk, f)) > 0) *crc = crc32(*crc, buf, (uInt)n), *len += n;
    int bad = !buf || ferror(f);
    free(buf);
    fclose(f);
    return bad ? dse_err_set(err, buf ? DSE_ERR_IO : DSE_ERR_NOMEM, path, 0, "cannot read it") : DSE_OK;
}

/* A hash of net's layers, every field (the line a layer was read from aside): a network edited
 * where shapes do not show (a dropout ratio, a slope, an epsilon) is another network here. */
static uint64_t net_fields_hash(const struct dse_net *net) {
    uint64_t h = dse_fnv1a64(0xcbf29ce484222325ull, net->name, strlen(net->name));
    for (int i = 0; i < net->n_layers; i++) {
        struct dse_layer l;
        memcpy(&l, &net->layers[i], sizeof l);
        l.line = 0;
        h = dse_fnv1a64(h, &l, sizeof l);
    }
    return h;
}

/* What the work folder's files were made from: the checkpoint's bytes (their CRC-32), the
 * network, the settings, the layers' densities, the data and the recipe settings that change
 * the fine-tuning (not the epochs, set per stage, nor the test images or the initialization,
 * which the checkpoint replaces), the threads and conv choices (the same bits need the same
 * strategies), as text. A folder whose stamp differs, or has none, is cleared before the run
 * (dse_compress_run). */
static enum dse_status stamp_text(const struct dse_net *net, const char *checkpoint, const struct dse_compress_opts *o,
                                  char *out, size_t size, struct dse_err *err) {
    unsigned long crc = 0;
    size_t len = 0;
    enum dse_status st = file_crc(checkpoint, &crc, &len, err);
    if (st) return st;
    size_t k = 0;
#define ADD_(...) (k += (size_t)snprintf(out + (k < size ? k : size), k < size ? size - k : 0, __VA_ARGS__))
    const struct dse_train_opts *t = &o->train;
    ADD_("dse compress work 1\ncheckpoint %zu bytes crc32 %08lx\nnetwork %016llx\ndata %s\ndata_root %s\naug %d\n"
         "threads %d\nconv %d %s\n", len, crc, (unsigned long long)net_fields_hash(net), t->data ? t->data : "",
         t->data_root ? t->data_root : "", (int)t->aug, t->threads, (int)t->conv_algo, t->conv_cache ? t->conv_cache : "");
#define C_INT(f)  ADD_(#f " %d\n", o->f)
#define C_REAL(f) ADD_(#f " %.17g\n", o->f)
#define C_(field, key, kind, def, lo, hi, cli, help) C_##kind(field);
    DSE_COMPRESS_SETTINGS(C_)
#undef C_
    for (int i = 0; i < o->n_layers; i++) ADD_("layer %s %.17g\n", o->layers[i].layer, o->layers[i].density);
#define R_INT(f)  ADD_("train." #f " %d\n", o->train.f)
#define R_U64(f)  ADD_("train." #f " %llu\n", (unsigned long long)o->train.f)
#define R_REAL(f) ADD_("train." #f " %.9g\n", (double)o->train.f)
#define R_ENUM(f) ADD_("train." #f " %d\n", (int)o->train.f)
#define R_(field, key, kind, def, lo, hi, cli, words, help) \
    if (!strstr(" epochs limit_test init init_std classifier_bias ", " " #field " ")) R_##kind(field);
    DSE_TRAIN_RECIPE(R_)
#undef R_
#undef C_INT
#undef C_REAL
#undef R_INT
#undef R_U64
#undef R_REAL
#undef R_ENUM
#undef ADD_
    if (k >= size) return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "too many layer densities (the work folder's "
                                      "stamp is over %zu bytes)", size);
    return DSE_OK;
}

/* Clear work unless its stamp is want (said through o->stage), then stamp it. */
static enum dse_status work_stamp(const char *work, const char *want, const struct dse_compress_opts *o,
                                  struct dse_err *err) {
    char path[4096], *have = NULL;
    size_t len = 0;
    struct dse_err ignore;
    pathf(path, sizeof path, "%s/" STAMP, work);
    int same = !dse_fs_read(path, &have, &len, &ignore) && len == strlen(want) && !memcmp(have, want, len);
    free(have);
    if (same) return DSE_OK;
    pathf(path, sizeof path, "%s/pruned.ckpt", work);
    if (exists(path)) stage_said(o, "restart (the work folder was made from another checkpoint or settings)");
    work_clear(work);
    pathf(path, sizeof path, "%s/" STAMP, work);
    return dse_fs_write_atomic(path, want, strlen(want), err);
}

/* Over 150 lines on purpose: the stages in their order, one exit freeing the model, the
 * plan and the checkpoint's meta whatever stage failed; each stage's work is its own
 * function above (plan_make, train_stage, share, tie, code, eval_top1). */
enum dse_status dse_compress_run(const struct dse_net *net, const char *checkpoint, const struct dse_compress_opts *o,
                                 const char *out, struct dse_compress_result *r, struct dse_err *err) {
    const double t0 = now_s();
    struct dse_model *m = NULL;
    struct plan p = { .n = 0 };
    struct dse_ckpt_info info = { .version = 0 };
    char work[4096], path[4096], last[4096];
    enum dse_status st;
    memset(r, 0, sizeof *r);
    if ((st = check_settings(net, o, err))) return st;
    struct stat sa, sb;
    if (stat(out, &sa) == 0 && stat(checkpoint, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino)
        return dse_err_set(err, DSE_ERR_CONFIG, out, 0, "the output is the checkpoint %s; write the .dsez elsewhere",
                           checkpoint);
    if (o->train.dev.device.kind != DSE_DEVICE_CPU)
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "dse compress fine-tunes on the CPU only; leave "
                           "--device out");
    if (strlen(o->work_dir ? o->work_dir : out) + 8 > WORK_MAX)
        return dse_err_set(err, DSE_ERR_CONFIG, o->work_dir ? o->work_dir : out, 0, "path too long (at most %d "
                           "bytes)", WORK_MAX - 8);
    if (o->work_dir) pathf(work, sizeof work, "%s", o->work_dir);
    else pathf(work, sizeof work, "%s.work", out);
    if ((st = dse_fs_check_file(out, err))) return st;
    struct dse_model_opts mo = { .batch = 1, .threads = o->train.threads, .seed = o->train.seed,
                                 .init = o->train.init, .init_std = o->train.init_std };
    int epoch;
    int64_t iter;
    char *stamp = malloc(STAMP_MAX);
    if (!stamp) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    if ((st = dse_model_new(net, &mo, &m, err)) || (st = dse_checkpoint_load(m, checkpoint, &epoch, &iter, err)) ||
        (st = dse_checkpoint_info(checkpoint, &info, err)) || (st = stamp_text(net, checkpoint, o, stamp, STAMP_MAX, err)) ||
        (st = dse_fs_mkdirs(work, err)) || (st = work_stamp(work, stamp, o, err)))
        goto done; /* the work folder only once the checkpoint is NET's */
    struct dse_ckpt_meta meta = { .seed = info.seed, .norm = info.norm, .classes = info.classes,
                                  .class_names = (const char(*)[64])info.class_names,
                                  .eval_center = info.eval_center };
    dse_strlcpy(meta.data, info.data, (int)sizeof meta.data);
    if ((st = eval_top1(net, o, checkpoint, &r->top1_float, err))) goto done;

    stage_said(o, "prune");
    if ((st = plan_make(m, o, &p, err))) goto done;
    int64_t kept = 0, total = 0;
    for (int k = 0; k < p.n; k++) {
        float *w = m->nodes[p.w[k].layer].weight->data;
        for (int64_t i = 0; i < p.w[k].n; i++)
            if (!p.w[k].mask[i]) w[i] = 0.0f;
        kept += p.w[k].kept, total += p.w[k].n;
    }
    r->density = total ? (double)kept / (double)total : 1;
    zero_momentum(m); /* retraining starts still (docs/compress.md) */
    char pruned[4096];
    pathf(pruned, sizeof pruned, "%s/pruned.ckpt", work);
    if (!exists(pruned) && (st = dse_checkpoint_save(m, 0, 0, &meta, pruned, err))) goto done;
    pathf(last, sizeof last, "%s", pruned);
    if (o->finetune > 0) {
        stage_said(o, "retrain");
        if ((st = train_stage(net, o, &p, work, "retrain", pruned, 1.0f, last, sizeof last, err))) goto done;
    }
    if ((st = eval_top1(net, o, last, &r->top1_pruned, err))) goto done;

    stage_said(o, "share");
    if ((st = dse_checkpoint_load(m, last, &epoch, &iter, err))) goto done;
    for (int k = 0; k < p.n; k++) {
        float *w = m->nodes[p.w[k].layer].weight->data;
        if ((st = share(&p.w[k], w, o->bits, err))) goto done;
        tie(&p.w[k], w, 0);
    }
    zero_momentum(m);
    char shared[4096];
    pathf(shared, sizeof shared, "%s/shared.ckpt", work);
    if (!exists(shared) && (st = dse_checkpoint_save(m, 0, 0, &meta, shared, err))) goto done;
    if (o->finetune > 0) {
        stage_said(o, "finetune");
        p.finetune = 1;
        if ((st = train_stage(net, o, &p, work, "finetune", shared, FINETUNE_LR_SCALE, last, sizeof last, err)) ||
            (st = dse_checkpoint_load(m, last, &epoch, &iter, err)))
            goto done;
        for (int k = 0; k < p.n; k++) tie(&p.w[k], m->nodes[p.w[k].layer].weight->data, 1);
    }

    stage_said(o, "code");
    if ((st = code(m, &p, o->bits, &meta, out, r, err))) goto done;
    /* the file as dse eval reads it: decoded into a model, evaluated as a checkpoint */
    pathf(path, sizeof path, "%s/decoded.ckpt", work);
    if ((st = dse_dsez_load(m, out, err)) || (st = dse_checkpoint_save(m, 0, 0, &meta, path, err)) ||
        (st = eval_top1(net, o, path, &r->top1_compressed, err)))
        goto done;
    unlink(path);
    if (!o->work_dir) dse_compress_work_remove(work);
    r->seconds = now_s() - t0;
done:
    free(stamp);
    plan_free(&p);
    free(info.class_names);
    dse_model_free(m);
    return st;
}
