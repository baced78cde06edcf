/* imgload.c: the loader of image sources (packs and folders): a pool of threads decodes,
 * crops, resizes, flips and normalizes images into a ring of batch buffers (a bounded
 * prefetch queue) that the caller empties in order. Each image's random draws come from a
 * stream chosen by (seed, epoch, position), so any number of workers gives the same bytes.
 * The public face is dse_loader_* in data.h; data.c forwards to these. */
#include "data/data_impl.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"

struct worker_buf {
    struct dse_image      im, rs;
    struct dse_image_work work;
};

struct dse_imgloader {
    const struct dse_pack      *pack;   /* one of these two, borrowed */
    const struct dse_imgfolder *folder;
    struct dse_loader_opts      o;
    int                         channels, n, nbatches, q;
    size_t                      img;    /* floats per output image */
    int                        *sel;    /* [n] the source's index of each image of the split */
    int                        *perm;   /* [n] this epoch's order over sel */
    lut_t                       lut;

    pthread_mutex_t mu;
    pthread_cond_t  cv_work, cv_ready, cv_idle;
    float         **x;                  /* [q][batch * img] */
    int           **labels;             /* [q][batch] */
    int            *left;               /* [q] images of the slot's batch not yet built */
    int            *slot_batch;         /* [q] the batch a slot holds or is building; -1 none */
    enum dse_status *slot_st;           /* [q] the first error building the slot's batch */
    struct dse_err  *slot_err;          /* [q] */
    int             gen, epoch, started, quit, cursor, taken, inflight;
    enum dse_status st;                 /* the error of the batch the caller reached: a batch
                                           built ahead and never asked for fails nothing */
    struct dse_err  err;

    int                nthreads;
    pthread_t         *threads;
    struct worker_buf *bufs;            /* [nthreads + 1]: the last is the caller's */
};

/* ---- one image ---------------------------------------------------------------------- */

static double uniform(struct dse_pcg32 *r, double lo, double hi) {
    return lo + (hi - lo) * ((double)dse_pcg32_next(r) / 4294967296.0);
}

/* torchvision's RandomResizedCrop.get_params on a W x H image. */
static void rrc_box(const struct dse_data_aug *a, int W, int H, struct dse_pcg32 *r, int *x0, int *y0,
                    int *cw, int *ch) {
    double s0 = a->scale_min, s1 = a->scale_max, r0 = a->ratio_min, r1 = a->ratio_max;
    if (!(s0 > 0 || s1 > 0 || r0 > 0 || r1 > 0)) s0 = 0.08, s1 = 1.0, r0 = 3.0 / 4.0, r1 = 4.0 / 3.0;
    double area = (double)W * H, lr0 = log(r0), lr1 = log(r1);
    for (int t = 0; t < 10; t++) {
        double target = area * uniform(r, s0, s1), aspect = exp(uniform(r, lr0, lr1));
        int w = (int)lround(sqrt(target * aspect)), h = (int)lround(sqrt(target / aspect));
        if (w > 0 && w <= W && h > 0 && h <= H) {
            *y0 = (int)dse_pcg32_bounded(r, (uint32_t)(H - h + 1));
            *x0 = (int)dse_pcg32_bounded(r, (uint32_t)(W - w + 1));
            *cw = w, *ch = h;
            return;
        }
    }
    double in_ratio = (double)W / H;
    int w = W, h = H;
    if (in_ratio < r0) h = (int)lround(w / r0);
    else if (in_ratio > r1) w = (int)lround(h * r1);
    if (h < 1) h = 1;
    if (w < 1) w = 1;
    if (h > H) h = H;
    if (w > W) w = W;
    *cw = w, *ch = h, *y0 = (H - h) / 2, *x0 = (W - w) / 2;
}

/* The centered box with the output's aspect covering `center` of the image. */
static void center_box(float center, int W, int H, int ow, int oh, int *x0, int *y0, int *cw, int *ch) {
    double k = (double)W / ow < (double)H / oh ? (double)W / ow : (double)H / oh;
    k *= center > 0 ? center : 0.875;
    int w = (int)lround(ow * k), h = (int)lround(oh * k);
    if (w < 1) w = 1;
    if (h < 1) h = 1;
    if (w > W) w = W;
    if (h > H) h = H;
    *cw = w, *ch = h, *x0 = (W - w) / 2, *y0 = (H - h) / 2;
}

/* The pixels of source image `src` into b->im. */
static enum dse_status fetch(struct dse_imgloader *l, int src, struct worker_buf *b, int *label,
                             struct dse_err *err) {
    if (l->pack) {
        *label = (int)l->pack->index[src].label;
        return dse_pack_image(l->pack, src, &b->im, err);
    }
    const struct dse_imgfolder_item *it = &l->folder->items[src];
    char *data = NULL;
    size_t len;
    struct dse_err e = { 0 };
    *label = it->label;
    enum dse_status st = dse_fs_read(it->path, &data, &len, &e);
    if (!st) st = dse_image_decode((const uint8_t *)data, len, l->channels, l->o.decode_min_short, l->o.max_pixels,
                                   &b->im, &e);
    free(data);
    if (st) return dse_err_set(err, st, it->path, 0, "%s", e.msg);
    return DSE_OK;
}

static void to_float(const struct dse_image *rs, int oy, int ox, int fl, const float lut[][256], float *x);

/* Image at position g of epoch `epoch` into x: [C, out_h, out_w]. */
static enum dse_status build_image(struct dse_imgloader *l, int epoch, int g, struct worker_buf *b, float *x,
                                   int *label, struct dse_err *err) {
    const struct dse_data_aug *a = &l->o.aug;
    const int OH = l->o.out_h, OW = l->o.out_w;
    struct dse_pcg32 r;
    enum dse_status st;
    int x0, y0, cw, ch, oy = 0, ox = 0, fl = 0;
    if ((st = fetch(l, l->sel[l->perm[g]], b, label, err))) return st;
    dse_pcg32_seed(&r, l->o.seed, dse_data_stream("dse.data.image", (uint64_t)(uint32_t)epoch << 32 | (uint32_t)g));
    if (a->rrc) rrc_box(a, b->im.w, b->im.h, &r, &x0, &y0, &cw, &ch);
    else center_box(l->o.center, b->im.w, b->im.h, OW, OH, &x0, &y0, &cw, &ch);
    if ((st = dse_image_resize(&b->im, x0, y0, cw, ch, OW, OH, &b->rs, &b->work, err))) return st;
    if (a->crop_pad) {
        oy = (int)dse_pcg32_bounded(&r, 2u * (uint32_t)a->crop_pad + 1) - a->crop_pad;
        ox = (int)dse_pcg32_bounded(&r, 2u * (uint32_t)a->crop_pad + 1) - a->crop_pad;
    }
    if (a->flip) fl = (int)(dse_pcg32_next(&r) >> 31);
    to_float(&b->rs, oy, ox, fl, (const float(*)[256])l->lut, x);
    return DSE_OK;
}

/* The resized image rs (OH x OW, interleaved) into x: [C, OH, OW] through the per-channel
 * tables, shifted by (oy, ox) with value-0 pixels where the shift leaves the image (the
 * padded crop) and mirrored when fl. */
static void to_float(const struct dse_image *rs, int oy, int ox, int fl, const float lut[][256], float *x) {
    const int OH = rs->h, OW = rs->w, C = rs->c;
    const uint8_t *px = rs->px;
    for (int c = 0; c < C; c++) {
        const float *t = lut[c];
        float *o = x + (size_t)c * OH * OW;
        for (int y = 0; y < OH; y++, o += OW) {
            int sy = y + oy;
            if (sy < 0 || sy >= OH) {
                for (int xx = 0; xx < OW; xx++) o[xx] = t[0];
                continue;
            }
            const uint8_t *row = px + (size_t)sy * OW * C + c;
            if (!fl && !ox) {
                for (int xx = 0; xx < OW; xx++) o[xx] = t[row[(size_t)xx * C]];
                continue;
            }
            for (int xx = 0; xx < OW; xx++) {
                int sx = (fl ? OW - 1 - xx : xx) + ox;
                o[xx] = sx >= 0 && sx < OW ? t[row[(size_t)sx * C]] : t[0];
            }
        }
    }
}

enum dse_status dse_data_image_eval(const struct dse_image *im, int out_h, int out_w, float center,
                                    const struct dse_data_norm *norm, struct dse_image *tmp,
                                    struct dse_image_work *w, float *x, struct dse_err *err) {
    lut_t lut;
    int x0, y0, cw, ch;
    enum dse_status st;
    if (norm && norm->c && norm->c != im->c)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "normalization for %d channels, but the image has %d",
                           norm->c, im->c);
    center_box(center, im->w, im->h, out_w, out_h, &x0, &y0, &cw, &ch);
    if ((st = dse_image_resize(im, x0, y0, cw, ch, out_w, out_h, tmp, w, err))) return st;
    dse_data_lut(lut, im->c, norm);
    to_float(tmp, 0, 0, 0, (const float(*)[256])lut, x);
    return DSE_OK;
}

/* ---- the pool ----------------------------------------------------------------------------- */

static int batch_count(const struct dse_imgloader *l, int k) {
    int first = k * l->o.batch;
    return l->n - first < l->o.batch ? l->n - first : l->o.batch;
}

/* Hand out up to 4 images of one batch (the caller holds mu and has checked there is
 * work); *g0 is the first position. */
static int take_chunk(struct dse_imgloader *l, int *g0) {
    int g = l->cursor, k = g / l->o.batch, end = k * l->o.batch + batch_count(l, k);
    int n = end - g < 4 ? end - g : 4;
    int s = k % l->q;
    if (g == k * l->o.batch) l->slot_batch[s] = k, l->left[s] = batch_count(l, k), l->slot_st[s] = DSE_OK;
    l->cursor += n;
    *g0 = g;
    return n;
}

static int has_work(const struct dse_imgloader *l) {
    return l->started && !l->st && l->cursor < l->n && l->cursor / l->o.batch < l->taken + l->q;
}

static void *pool_worker(void *arg) {
    struct dse_imgloader *l = ((void **)arg)[0];
    struct worker_buf *b = ((void **)arg)[1];
    free(arg);
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!l->quit && !has_work(l)) pthread_cond_wait(&l->cv_work, &l->mu);
        if (l->quit) break;
        int g0, n = take_chunk(l, &g0), epoch = l->epoch, gen = l->gen;
        int k = g0 / l->o.batch, s = k % l->q;
        l->inflight++;
        pthread_mutex_unlock(&l->mu);
        enum dse_status st = DSE_OK;
        struct dse_err e = { 0 };
        for (int g = g0; g < g0 + n && !st; g++) {
            int j = g - k * l->o.batch;
            st = build_image(l, epoch, g, b, l->x[s] + (size_t)j * l->img, &l->labels[s][j], &e);
        }
        pthread_mutex_lock(&l->mu);
        l->inflight--;
        if (l->gen == gen) {
            if (st && !l->slot_st[s]) l->slot_st[s] = st, l->slot_err[s] = e;
            l->left[s] -= n;
            if (l->left[s] == 0) pthread_cond_broadcast(&l->cv_ready);
        }
        if (!l->inflight) pthread_cond_broadcast(&l->cv_idle);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

void dse_imgloader_free(struct dse_imgloader *l) {
    if (!l) return;
    if (l->threads) {
        pthread_mutex_lock(&l->mu);
        l->quit = 1;
        pthread_cond_broadcast(&l->cv_work);
        pthread_mutex_unlock(&l->mu);
        for (int t = 0; t < l->nthreads; t++) pthread_join(l->threads[t], NULL);
    }
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv_work);
    pthread_cond_destroy(&l->cv_ready);
    pthread_cond_destroy(&l->cv_idle);
    for (int i = 0; i < l->q; i++) {
        if (l->x) free(l->x[i]);
        if (l->labels) free(l->labels[i]);
    }
    if (l->bufs)
        for (int t = 0; t <= l->nthreads; t++) {
            dse_image_deinit(&l->bufs[t].im);
            dse_image_deinit(&l->bufs[t].rs);
            dse_image_work_deinit(&l->bufs[t].work);
        }
    free(l->x), free(l->labels), free(l->left), free(l->slot_batch), free(l->slot_st), free(l->slot_err);
    free(l->sel), free(l->perm), free(l->threads), free(l->bufs);
    free(l);
}

enum dse_status dse_imgloader_new(const struct dse_pack *p, const struct dse_imgfolder *f, int split,
                                  int channels, const struct dse_loader_opts *o, struct dse_imgloader **out,
                                  struct dse_err *err) {
    const struct dse_data_aug *a = &o->aug;
    *out = NULL;
    if (split != DSE_PACK_TRAIN && split != DSE_PACK_VAL)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "split %d; expected train or val", split);
    int count = p ? p->count[split] : f->count[split];
    int first = p ? p->first[split] : (split == DSE_PACK_TRAIN ? 0 : f->count[DSE_PACK_TRAIN]);
    const char *src = p ? p->path : f->root;
    if (count < 1)
        return dse_err_set(err, DSE_ERR_IO, src, 0, "no %s images%s", split == DSE_PACK_TRAIN ? "training" :
                           "evaluation", split == DSE_PACK_VAL ? " (the folder had no val/ or test/ split)" : "");
    if (o->batch < 1) return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "batch size %d is out of range; expected >= 1", o->batch);
    if (o->out_h < 1 || o->out_w < 1 || o->out_h > 8192 || o->out_w > 8192)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "output size %dx%d is out of range; expected 1..8192",
                           o->out_h, o->out_w);
    if (a->crop_pad < 0 || a->crop_pad > o->out_h || a->crop_pad > o->out_w || (a->flip != 0 && a->flip != 1))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "crop padding %d or flip %d is out of range", a->crop_pad,
                           a->flip);
    if (a->rrc && (a->scale_min || a->scale_max || a->ratio_min || a->ratio_max) &&
        !(a->scale_min > 0 && a->scale_min <= a->scale_max && a->scale_max <= 1 && a->ratio_min > 0 &&
          a->ratio_min <= a->ratio_max))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "random-resized-crop scale %g..%g, ratio %g..%g; expected "
                           "0 < scale_min <= scale_max <= 1 and 0 < ratio_min <= ratio_max",
                           a->scale_min, a->scale_max, a->ratio_min, a->ratio_max);
    if (!(o->center >= 0 && o->center <= 1))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "center fraction %g; expected 0..1", o->center);
    if (channels != 1 && channels != 3)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%d channels; expected 1 or 3", channels);
    if (o->norm.c != 0 && o->norm.c != channels)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "normalization for %d channels, but the images have %d",
                           o->norm.c, channels);
    for (int ch = 0; ch < o->norm.c; ch++)
        if (!(o->norm.std[ch] > 0) || !isfinite(o->norm.mean[ch]))
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "normalization of channel %d: mean %g, std %g", ch,
                               o->norm.mean[ch], o->norm.std[ch]);

    struct dse_imgloader *l = calloc(1, sizeof *l);
    if (!l) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a loader");
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv_work, NULL);
    pthread_cond_init(&l->cv_ready, NULL);
    pthread_cond_init(&l->cv_idle, NULL);
    l->pack = p, l->folder = f, l->o = *o, l->channels = channels;
    l->n = o->limit > 0 && o->limit < count ? o->limit : count;
    l->nbatches = (l->n + o->batch - 1) / o->batch;
    l->q = o->prefetch > 0 ? o->prefetch : 3;
    if (l->q > l->nbatches) l->q = l->nbatches;
    l->img = (size_t)channels * o->out_h * o->out_w;
    dse_data_lut(l->lut, channels, &o->norm);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    l->nthreads = o->synchronous ? 0 : o->workers > 0 ? o->workers : cpus > 0 ? (int)cpus : 1;
    l->sel = malloc((size_t)count * sizeof *l->sel);
    l->perm = malloc((size_t)l->n * sizeof *l->perm);
    l->x = calloc((size_t)l->q, sizeof *l->x);
    l->labels = calloc((size_t)l->q, sizeof *l->labels);
    l->left = calloc((size_t)l->q, sizeof *l->left);
    l->slot_batch = calloc((size_t)l->q, sizeof *l->slot_batch);
    l->slot_st = calloc((size_t)l->q, sizeof *l->slot_st);
    l->slot_err = calloc((size_t)l->q, sizeof *l->slot_err);
    l->bufs = calloc((size_t)l->nthreads + 1, sizeof *l->bufs);
    l->threads = l->nthreads ? calloc((size_t)l->nthreads, sizeof *l->threads) : NULL;
    int ok = l->sel && l->perm && l->x && l->labels && l->left && l->slot_batch && l->slot_st && l->slot_err && l->bufs &&
             (l->threads || !l->nthreads);
    for (int i = 0; i < l->q && ok; i++) {
        l->x[i] = malloc((size_t)o->batch * l->img * sizeof(float));
        l->labels[i] = malloc((size_t)o->batch * sizeof(int));
        ok = l->x[i] && l->labels[i];
        l->slot_batch[i] = -1;
    }
    if (!ok) {
        dse_imgloader_free(l);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for %d batches of %d images of %dx%dx%d",
                           o->prefetch > 0 ? o->prefetch : 3, o->batch, channels, o->out_h, o->out_w);
    }
    /* The split's images, or the first `limit` of a fixed shuffle of them. */
    if (l->n < count) {
        dse_data_shuffle(l->sel, count, 0, 0);
        for (int i = 0; i < count; i++) l->sel[i] += first;
    } else {
        for (int i = 0; i < count; i++) l->sel[i] = first + i;
    }
    int started = 0;
    for (; started < l->nthreads; started++) {
        void **arg = malloc(2 * sizeof *arg);
        if (!arg) break;
        arg[0] = l, arg[1] = &l->bufs[started];
        if (pthread_create(&l->threads[started], NULL, pool_worker, arg)) {
            free(arg);
            break;
        }
    }
    if (started < l->nthreads) {
        l->nthreads = started;
        dse_imgloader_free(l);
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "cannot start the loader's threads");
    }
    *out = l;
    return DSE_OK;
}

int dse_imgloader_batches(const struct dse_imgloader *l) {
    return l->nbatches;
}

int dse_imgloader_images(const struct dse_imgloader *l) {
    return l->n;
}

enum dse_status dse_imgloader_status(const struct dse_imgloader *l, struct dse_err *err) {
    struct dse_imgloader *m = (struct dse_imgloader *)l; /* the lock, not the state, changes */
    pthread_mutex_lock(&m->mu);
    enum dse_status st = l->st;
    if (st && err) *err = l->err;
    pthread_mutex_unlock(&m->mu);
    return st;
}

void dse_imgloader_start_epoch(struct dse_imgloader *l, int epoch) {
    DSE_ASSERT(epoch >= 0);
    pthread_mutex_lock(&l->mu);
    l->gen++;
    l->started = 0;
    while (l->inflight) pthread_cond_wait(&l->cv_idle, &l->mu); /* nobody writes a slot now */
    if (l->o.shuffle) dse_data_shuffle(l->perm, l->n, l->o.seed, epoch);
    else
        for (int i = 0; i < l->n; i++) l->perm[i] = i;
    l->epoch = epoch, l->cursor = 0, l->taken = 0, l->st = DSE_OK, l->started = 1;
    for (int i = 0; i < l->q; i++) l->slot_batch[i] = -1, l->left[i] = 0, l->slot_st[i] = DSE_OK;
    pthread_cond_broadcast(&l->cv_work);
    pthread_mutex_unlock(&l->mu);
}

int dse_imgloader_next(struct dse_imgloader *l, float *x, int *labels, int *count) {
    *count = 0;
    if (!l->started || l->taken >= l->nbatches) return 0;
    int k = l->taken, s = k % l->q, cnt = batch_count(l, k);
    if (!l->nthreads) { /* synchronous: build it here, image by image, in order */
        struct worker_buf *b = &l->bufs[0];
        for (int j = 0; j < cnt && !l->st; j++)
            l->st = build_image(l, l->epoch, k * l->o.batch + j, b, l->x[s] + (size_t)j * l->img, &l->labels[s][j],
                                &l->err);
        if (l->st) return 0;
    } else {
        pthread_mutex_lock(&l->mu);
        while (!l->st && !(l->slot_batch[s] == k && l->left[s] == 0)) pthread_cond_wait(&l->cv_ready, &l->mu);
        if (!l->st && l->slot_st[s]) l->st = l->slot_st[s], l->err = l->slot_err[s]; /* stops the workers */
        enum dse_status st = l->st;
        pthread_mutex_unlock(&l->mu);
        if (st) return 0;
    }
    memcpy(x, l->x[s], (size_t)cnt * l->img * sizeof(float));
    memcpy(labels, l->labels[s], (size_t)cnt * sizeof(int));
    *count = cnt;
    pthread_mutex_lock(&l->mu);
    l->taken++;
    l->slot_batch[s] = -1;
    pthread_cond_broadcast(&l->cv_work);
    pthread_mutex_unlock(&l->mu);
    return 1;
}
