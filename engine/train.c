/* train.c: the training loop, learning-rate policies, evaluation and checkpoints.
 * Determinism: initialization and dropout draw from PCG32 seeded by opts->seed, the data
 * order and augmentation of epoch k from (seed, k) (engine/data.h), so a run resumed from
 * epoch k's checkpoint reproduces the uninterrupted run bit for bit on the same machine
 * and thread count (tests/test_engine_train.c checks it). On a CUDA device (opts->dev)
 * the loop is the same code through the model API; cuDNN's algorithm choices depend on
 * timing, so runs there agree to float rounding, not bit for bit (docs/gpu.md). */
#include "engine/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "base/fs.h"
#include "engine/data.h"

void dse_train_opts_default(struct dse_train_opts *o) {
    memset(o, 0, sizeof *o);
    o->data = "fashion-mnist";
    o->epochs = 1, o->batch = 64, o->threads = 1;
    o->lr = 0.01f, o->policy = DSE_LR_POLY, o->power = 1.0f, o->gamma = 0.1f;
    o->momentum = 0.9f, o->weight_decay = 0.0002f;
    o->seed = 1;
    o->init = DSE_INIT_MSRA, o->init_std = 0.01f;
    o->clip_norm = 2.0f, o->classifier_bias = 0.5f;
    o->conv_algo = DSE_ALGO_AUTO;
}

float dse_train_lr(const struct dse_train_opts *o, int64_t it, int64_t iters, int iters_per_epoch) {
    double lr = o->lr, frac = iters > 0 ? (double)it / (double)iters : 0;
    switch (o->policy) {
    case DSE_LR_FIXED:  break;
    case DSE_LR_STEP:   lr *= pow(o->gamma, (double)(it / iters_per_epoch / (o->step_epochs ? o->step_epochs : 1))); break;
    case DSE_LR_POLY:   lr *= pow(1.0 - frac, o->power); break;
    case DSE_LR_LINEAR: lr *= 1.0 - frac; break;
    }
    int64_t warm = (int64_t)o->warmup_epochs * iters_per_epoch;
    if (it < warm) lr *= (double)(it + 1) / (double)warm;
    return (float)lr;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- checkpoints --------------------------------------------------------------------- */

#define CKPT_MAGIC   "DSECKPT1"
#define CKPT_VERSION 1u

struct ckpt_header {
    char     magic[8];
    uint32_t version, crc;       /* crc: CRC-32 (zlib) of the uncompressed payload */
    int32_t  next_epoch, pad;
    int64_t  iter;
    uint64_t net_hash;           /* FNV-1a 64 of the layer shapes */
    uint64_t values;             /* float32 values in the payload */
    uint64_t compressed;         /* bytes after the header */
    uint64_t rng_state, rng_inc; /* the dropout generator */
};

static uint64_t net_hash(const struct dse_model *m) {
    uint64_t h = DSE_FNV64_INIT;
    for (int i = 0; i < m->net.n_layers; i++) {
        const struct dse_layer *l = &m->net.layers[i];
        int v[5] = { (int)l->type, l->out_c, l->out_h, l->out_w, l->in_c };
        h = dse_fnv1a64(h, v, sizeof v);
    }
    return h;
}

enum dse_status dse_checkpoint_save(const struct dse_model *m, int next_epoch, int64_t iter,
                                    const char *path, struct dse_err *err) {
    /* The values, in order: each parameter then its momentum, then running statistics
     * (dse_model_state_*: the same order and bytes on every device). */
    uint64_t n = dse_model_state_count(m);
    size_t raw_bytes = (size_t)n * sizeof(float);
    uLongf bound = compressBound((uLong)raw_bytes);
    float *raw = malloc(raw_bytes ? raw_bytes : 1);
    unsigned char *file = malloc(sizeof(struct ckpt_header) + bound);
    enum dse_status st = DSE_OK;
    if (!raw || !file) {
        st = dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory writing the checkpoint");
        goto done;
    }
    if ((st = dse_model_state_get(m, raw, err))) goto done;
    struct ckpt_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CKPT_MAGIC, 8);
    h.version = CKPT_VERSION;
    h.crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)raw, (uInt)raw_bytes);
    h.next_epoch = next_epoch;
    h.iter = iter;
    h.net_hash = net_hash(m);
    h.values = n;
    h.rng_state = m->cx.rng.state;
    h.rng_inc = m->cx.rng.inc;
    uLongf clen = bound;
    if (compress2(file + sizeof h, &clen, (const Bytef *)raw, (uLong)raw_bytes, 6) != Z_OK) {
        st = dse_err_set(err, DSE_ERR_INTERNAL, path, 0, "zlib could not compress the checkpoint");
        goto done;
    }
    h.compressed = clen;
    memcpy(file, &h, sizeof h);
    st = dse_fs_write_atomic(path, file, sizeof h + clen, err);
done:
    free(raw);
    free(file);
    return st;
}

enum dse_status dse_checkpoint_load(struct dse_model *m, const char *path, int *next_epoch,
                                    int64_t *iter, struct dse_err *err) {
    char *file;
    size_t len;
    struct ckpt_header h;
    enum dse_status st = dse_fs_read(path, &file, &len, err);
    if (st) return st;
    uint64_t n = dse_model_state_count(m);
    float *raw = NULL;
    if (len < sizeof h || memcmp(file, CKPT_MAGIC, 8) != 0) {
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "not a dse checkpoint (bad magic)");
        goto done;
    }
    memcpy(&h, file, sizeof h);
    if (h.version != CKPT_VERSION) {
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "checkpoint version %u; this dse reads version %u",
                         h.version, CKPT_VERSION);
        goto done;
    }
    if (h.net_hash != net_hash(m) || h.values != n) {
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "checkpoint of another network (%llu values; this "
                         "network has %llu)", (unsigned long long)h.values, (unsigned long long)n);
        goto done;
    }
    if (h.compressed != len - sizeof h) {
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt checkpoint: %zu bytes of data, the header "
                         "says %llu", len - sizeof h, (unsigned long long)h.compressed);
        goto done;
    }
    uLongf raw_bytes = (uLongf)(n * sizeof(float));
    raw = malloc(raw_bytes ? raw_bytes : 1);
    if (!raw) {
        st = dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory reading the checkpoint");
        goto done;
    }
    uLongf got = raw_bytes;
    if (uncompress((Bytef *)raw, &got, (const Bytef *)file + sizeof h, (uLong)h.compressed) != Z_OK ||
        got != raw_bytes) {
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt checkpoint: the compressed data does not decode");
        goto done;
    }
    uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)raw, (uInt)raw_bytes);
    if (crc != h.crc) {
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt checkpoint: CRC-32 %08x, expected %08x", crc, h.crc);
        goto done;
    }
    if ((st = dse_model_state_put(m, raw, err))) goto done;
    m->cx.rng.state = h.rng_state;
    m->cx.rng.inc = h.rng_inc;
    *next_epoch = h.next_epoch;
    *iter = h.iter;
done:
    free(raw);
    free(file);
    return st;
}

/* ---- conv strategy choices ------------------------------------------------------------- */

enum dse_status dse_conv_cache_save(const struct dse_cpu_ctx *cx, const char *path, struct dse_err *err) {
    size_t cap = 64 + (size_t)cx->conv_cache_n * 256, n = 0;
    char *buf = malloc(cap);
    if (!buf) return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
    n += (size_t)snprintf(buf, cap, "# dse conv strategy choices: 16 shape ints, forward, backward\n");
    for (int i = 0; i < cx->conv_cache_n; i++) {
        const struct dse_cpu_conv_choice *c = &cx->conv_cache[i];
        if (c->algo_fwd == DSE_ALGO_AUTO && c->algo_bwd == DSE_ALGO_AUTO) continue;
        for (int k = 0; k < 16; k++) n += (size_t)snprintf(buf + n, cap - n, "%d ", c->key[k]);
        n += (size_t)snprintf(buf + n, cap - n, "%d %d\n", c->algo_fwd, c->algo_bwd);
    }
    enum dse_status st = dse_fs_write_atomic(path, buf, n, err);
    free(buf);
    return st;
}

enum dse_status dse_conv_cache_load(struct dse_cpu_ctx *cx, const char *path, struct dse_err *err) {
    char *text;
    size_t len;
    FILE *f = fopen(path, "r");
    if (!f) return DSE_OK; /* nothing chosen yet on this machine */
    fclose(f);
    enum dse_status st = dse_fs_read(path, &text, &len, err);
    if (st) return st;
    int line = 0;
    for (char *p = text; p && *p; ) {
        char *end = strchr(p, '\n');
        if (end) *end = '\0';
        line++;
        if (*p && *p != '#') {
            struct dse_cpu_conv_choice c;
            memset(&c, 0, sizeof c);
            int used = 0, k = 0;
            for (; k < 16 && sscanf(p, "%d%n", &c.key[k], &used) == 1; k++) p += used;
            if (k < 16 || sscanf(p, "%d %d", &c.algo_fwd, &c.algo_bwd) != 2 ||
                c.algo_fwd < DSE_ALGO_AUTO || c.algo_fwd >= DSE_CPU_CONV_COUNT ||
                c.algo_bwd < DSE_ALGO_AUTO || c.algo_bwd >= DSE_CPU_CONV_COUNT) {
                free(text);
                return dse_err_set(err, DSE_ERR_IO, path, line, "not a conv strategy line; expected 16 "
                                   "integers and two strategy numbers (delete the file to re-time)");
            }
            int have = 0;
            for (int i = 0; i < cx->conv_cache_n && !have; i++)
                have = memcmp(cx->conv_cache[i].key, c.key, sizeof c.key) == 0;
            if (!have) {
                if (cx->conv_cache_n == cx->conv_cache_cap) {
                    int cap = cx->conv_cache_cap ? 2 * cx->conv_cache_cap : 16;
                    struct dse_cpu_conv_choice *np = realloc(cx->conv_cache, (size_t)cap * sizeof *np);
                    if (!np) {
                        free(text);
                        return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
                    }
                    cx->conv_cache = np, cx->conv_cache_cap = cap;
                }
                cx->conv_cache[cx->conv_cache_n++] = c;
            }
        }
        p = end ? end + 1 : NULL;
    }
    free(text);
    return DSE_OK;
}

/* ---- training ------------------------------------------------------------------------- */

/* Test-set loss, top-1/top-5 accuracy, and the classes no image was predicted as. */
static enum dse_status evaluate(struct dse_model *m, struct dse_loader *ld, float *x, int *labels,
                                struct dse_epoch_result *er, struct dse_err *err) {
    int count, seen = 0, h1 = 0, h5 = 0;
    double sum = 0;
    float l;
    const int k = m->nodes[m->loss].in[0]->c;
    unsigned char *cls = calloc((size_t)k, 1); /* bit 0: a label, bit 1: a prediction */
    if (!cls) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    dse_model_set_training(m, 0);
    dse_loader_start_epoch(ld, 0);
    while (dse_loader_next(ld, x, labels, &count)) {
        for (int b = count; b < m->batch; b++) labels[b] = labels[0]; /* pad a short batch */
        enum dse_status st = dse_model_forward(m, x, labels, &l, err);
        if (st) {
            free(cls);
            return st;
        }
        int t1, t5;
        dse_model_hits(m, count, &t1, &t5);
        h1 += t1, h5 += t5;
        const float *prob = dse_model_probs(m); /* host memory on every device */
        for (int b = 0; b < count; b++) {
            const float *pb = prob + (size_t)b * (size_t)k;
            float p = pb[labels[b]];
            sum -= log(p > 1e-30f ? p : 1e-30f);
            int best = 0; /* ties to the lower index, as dse_model_hits */
            for (int j = 1; j < k; j++)
                if (pb[j] > pb[best]) best = j;
            if (labels[b] >= 0 && labels[b] < k) cls[labels[b]] |= 1;
            cls[best] |= 2;
        }
        seen += count;
    }
    dse_model_set_training(m, 1);
    enum dse_status lst = dse_loader_status(ld, err);
    if (lst) {
        free(cls);
        return lst;
    }
    er->test_loss = seen ? (float)(sum / seen) : 0;
    er->top1 = seen ? (float)h1 / (float)seen : 0;
    er->top5 = seen ? (float)h5 / (float)seen : 0;
    er->unpredicted = 0;
    for (int j = 0; j < k; j++) er->unpredicted += cls[j] == 1;
    free(cls);
    return DSE_OK;
}

/* The training and test data of a run and their loaders: an in-memory dataset (IDX,
 * CIFAR) or an image source (pack, folder). */
struct run_data {
    struct dse_data_files files;
    struct dse_dataset   *train, *test;
    struct dse_pack      *pack;
    struct dse_imgfolder  folder;
    const char           *name;
    int                   c, h, w, classes; /* h = w = 0: any size (image sources) */
    struct dse_loader    *ltrain, *ltest;
};

/* An error whose err->file points into d (a pack's path, a folder's image, a dataset file's
 * name) would dangle once d is freed: the caller's data string is named instead, and a path
 * of d's goes into the message. */
static void run_data_keep_err(const struct run_data *d, const char *data, struct dse_err *err) {
    if (!err || !err->file) return;
    const char *f = err->file;
    const char *lo = (const char *)&d->files, *hi = lo + sizeof d->files;
    int inside = f >= lo && f < hi;
    for (int i = 0; i < d->folder.n && !inside; i++) inside = f == d->folder.items[i].path;
    if (d->pack && f == d->pack->path) {
        err->file = data;
    } else if (inside) {
        struct dse_err e = *err;
        dse_err_set(err, e.code, NULL, e.line, "%s: %s", e.file, e.msg);
    }
}

static void run_data_free(struct run_data *d) {
    dse_loader_free(d->ltrain);
    dse_loader_free(d->ltest);
    dse_dataset_free(d->train);
    dse_dataset_free(d->test);
    dse_pack_close(d->pack);
    dse_imgfolder_deinit(&d->folder);
}

static enum dse_status run_data_open(const struct dse_net *net, const struct dse_train_opts *o, struct run_data *d,
                                     struct dse_err *err) {
    enum dse_status st;
    struct dse_loader_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.batch = o->batch, lo.shuffle = 1, lo.seed = o->seed;
    if (dse_pack_named(o->data) || dse_imgfolder_is(o->data)) {
        int is_pack = dse_pack_named(o->data), short_side;
        if (is_pack) {
            if ((st = dse_pack_open(o->data, &d->pack, err))) return st;
            d->c = d->pack->channels, d->classes = d->pack->classes;
            short_side = d->pack->short_side ? d->pack->short_side : net->in_h < net->in_w ? net->in_h : net->in_w;
            lo.norm.c = d->c;
            memcpy(lo.norm.mean, d->pack->mean, sizeof lo.norm.mean);
            memcpy(lo.norm.std, d->pack->std, sizeof lo.norm.std);
        } else {
            if ((st = dse_imgfolder_scan(o->data, &d->folder, err))) return st;
            d->c = net->in_c == 1 ? 1 : 3, d->classes = d->folder.classes;
            short_side = net->in_h < net->in_w ? net->in_h : net->in_w;
            dse_data_norm_imagenet(d->c, &lo.norm); /* a folder carries no statistics */
        }
        d->name = o->data;
        if (net->in_c != d->c)
            return dse_err_set(err, DSE_ERR_SHAPE, NULL, 0, "the network takes %d-channel input; %s holds %d-channel "
                               "images", net->in_c, o->data, d->c);
        float center;
        dse_data_aug_of(o->aug, short_side, &lo.aug, &center);
        lo.out_h = net->in_h, lo.out_w = net->in_w, lo.workers = o->loader_workers, lo.limit = o->limit_train;
        lo.center = center, lo.decode_min_short = is_pack ? 0 : short_side;
        st = is_pack ? dse_loader_new_pack(d->pack, DSE_PACK_TRAIN, &lo, &d->ltrain, err)
                     : dse_loader_new_folder(&d->folder, DSE_PACK_TRAIN, d->c, &lo, &d->ltrain, err);
        if (st) return st;
        lo.shuffle = 0, lo.limit = o->limit_test;
        memset(&lo.aug, 0, sizeof lo.aug);
        return is_pack ? dse_loader_new_pack(d->pack, DSE_PACK_VAL, &lo, &d->ltest, err)
                       : dse_loader_new_folder(&d->folder, DSE_PACK_VAL, d->c, &lo, &d->ltest, err);
    }
    if ((st = dse_data_locate(o->data, o->data_root, &d->files, err)) ||
        (st = dse_data_load(&d->files, DSE_DATA_SPLIT_TRAIN, &d->train, err)) ||
        (st = dse_data_load(&d->files, DSE_DATA_SPLIT_TEST, &d->test, err)))
        return st;
    if (o->limit_train > 0 && (st = dse_dataset_limit(d->train, o->limit_train, err))) return st;
    if (o->limit_test > 0 && (st = dse_dataset_limit(d->test, o->limit_test, err))) return st;
    d->name = d->files.name;
    d->c = d->train->c, d->h = d->train->h, d->w = d->train->w, d->classes = d->train->classes;
    if (d->c != net->in_c || d->h != net->in_h || d->w != net->in_w)
        return dse_err_set(err, DSE_ERR_SHAPE, NULL, 0, "the network takes %dx%dx%d input; %s images are %dx%dx%d",
                           net->in_c, net->in_h, net->in_w, d->name, d->c, d->h, d->w);
    lo.aug = d->files.aug_default;
    dse_data_norm_of(d->train, &lo.norm);
    if ((st = dse_loader_new(d->train, &lo, &d->ltrain, err))) return st;
    lo.shuffle = 0;
    memset(&lo.aug, 0, sizeof lo.aug);
    return dse_loader_new(d->test, &lo, &d->ltest, err);
}

enum dse_status dse_train_run(const struct dse_net *net, const struct dse_train_opts *o,
                              struct dse_train_result *r, struct dse_err *err) {
    struct run_data data;
    struct dse_loader *ltrain, *ltest;
    struct dse_model *m = NULL;
    float *x = NULL;
    int *labels = NULL, x_pinned = 0;
    enum dse_status st;

    memset(r, 0, sizeof *r);
    memset(&data, 0, sizeof data);
    r->seed = o->seed;
    if (o->epochs < 1 || o->epochs > (int)(sizeof r->epochs / sizeof r->epochs[0]) || o->batch < 1 ||
        o->threads < 1 || !(o->lr > 0) || o->stop_after_epoch < 0 || o->stop_after_epoch > o->epochs)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "epochs (1 to 1024), batch, threads must be >= 1, "
                           "lr > 0 and stop_after_epoch 0 to epochs");
    if ((st = run_data_open(net, o, &data, err))) goto done;
    ltrain = data.ltrain, ltest = data.ltest;
    const int n_train = dse_loader_images(ltrain);
    if (n_train < o->batch) {
        st = dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "batch %d is larger than the %d training images",
                         o->batch, n_train);
        goto done;
    }
    struct dse_model_opts mo = { o->batch, o->threads, o->seed, o->init, o->init_std, 0, o->classifier_bias };
    if ((st = dse_model_new_on(net, &mo, &o->dev, &m, err))) goto done;
    /* Conv strategies (conv_algo, conv_cache) are the CPU backend's: on a device cuDNN's
     * find chooses, and the file of CPU choices is neither read nor written. */
    const int on_cpu = o->dev.device.kind == DSE_DEVICE_CPU;
    if (m->net.layers[m->loss].in_c != data.classes && m->net.layers[m->loss].in_c < data.classes) {
        st = dse_err_set(err, DSE_ERR_SHAPE, NULL, 0, "the network has %d outputs; %s has %d classes",
                         m->net.layers[m->loss].in_c, data.name, data.classes);
        goto done;
    }
    m->cx.conv_force = o->conv_algo;
    if (on_cpu && o->conv_cache && (st = dse_conv_cache_load(&m->cx, o->conv_cache, err))) goto done;
    x = dse_model_host_alloc(m, sizeof *x * (size_t)dse_tensor_count(&m->input), &x_pinned); /* pinned on a GPU */
    labels = malloc(sizeof *labels * (size_t)o->batch);
    if (!x || !labels) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }

    int start = 0;
    int64_t it = 0;
    if (o->resume && (st = dse_checkpoint_load(m, o->resume, &start, &it, err))) goto done;
    const int ipe = n_train / o->batch; /* full batches; the last partial batch is dropped */
    const int64_t iters = (int64_t)ipe * o->epochs;
    double t_train = 0, t0 = now_s();
    int64_t imgs = 0;
    const int stop = o->stop_after_epoch > 0 ? o->stop_after_epoch : o->epochs;
    strcpy(r->status, "done");
    for (int e = start; e < stop; e++) {
        double te = now_s(), loss_sum = 0;
        int count;
        dse_loader_start_epoch(ltrain, e);
        for (int i = 0; i < ipe && dse_loader_next(ltrain, x, labels, &count); i++, it++) {
            if (o->cancel && o->cancel(o->progress_arg)) {
                strcpy(r->status, "cancelled");
                goto finish;
            }
            float loss, lr = dse_train_lr(o, it, iters, ipe);
            if ((st = dse_model_forward(m, x, labels, &loss, err))) goto done;
            if (!isfinite(loss)) {
                strcpy(r->status, "diverged");
                r->diverged_epoch = e + 1;
                r->diverged_iter = i;
                goto finish;
            }
            if ((st = dse_model_backward(m, err))) goto done;
            if (o->clip_norm > 0) {
                double norm;
                int clipped;
                if ((st = dse_model_clip_grad(m, o->clip_norm, &norm, &clipped, err))) goto done;
                r->clipped_steps += clipped;
            }
            dse_model_sgd(m, lr, o->momentum, o->weight_decay);
            loss_sum += loss;
            imgs += o->batch;
            if (o->progress && (i % 10 == 0 || i == ipe - 1)) {
                double el = t_train + now_s() - te;
                struct dse_train_progress p = { e, o->epochs, i + 1, ipe, (float)(loss_sum / (i + 1)), lr,
                                                imgs / (el > 0 ? el : 1e-9), 0, 0, 0, 0, 0, 0 };
                p.eta_s = (double)(iters - it - 1) * o->batch / (p.img_per_s > 0 ? p.img_per_s : 1);
                o->progress(o->progress_arg, &p);
            }
        }
        if ((st = dse_loader_status(ltrain, err))) goto done; /* an image that failed to load */
        /* A device queues its steps: wait for them before reading the clock, and report an
         * SGD step that failed there (not divergence). Nothing to do on the CPU. */
        if ((st = dse_model_sync(m, err))) goto done;
        if (m->pending) {
            if (err) *err = m->pending_err;
            st = m->pending;
            goto done;
        }
        t_train += now_s() - te;
        if (dse_model_nonfinite(m)) {
            strcpy(r->status, "diverged");
            r->diverged_epoch = e + 1;
            r->diverged_iter = ipe - 1;
            goto finish;
        }
        struct dse_epoch_result *er = &r->epochs[r->n_epochs++];
        er->train_loss = (float)(loss_sum / (ipe ? ipe : 1));
        er->seconds = now_s() - te;
        er->img_per_s = (double)ipe * o->batch / (er->seconds > 0 ? er->seconds : 1e-9);
        if ((st = evaluate(m, ltest, x, labels, er, err))) goto done;
        er->seconds = now_s() - te;
        r->epochs_done = e + 1;
        r->loss = er->test_loss, r->top1 = er->top1, r->top5 = er->top5;
        if (o->progress) {
            struct dse_train_progress p = { e, o->epochs, ipe, ipe, er->train_loss, 0,
                                            er->img_per_s, 0, 1, er->top1, er->top5, er->test_loss,
                                            er->unpredicted };
            o->progress(o->progress_arg, &p);
        }
        if (o->checkpoint_dir) {
            char path[4096];
            snprintf(path, sizeof path, "%s/epoch-%d.ckpt", o->checkpoint_dir, e + 1);
            if ((st = dse_fs_mkdirs(o->checkpoint_dir, err)) ||
                (st = dse_checkpoint_save(m, e + 1, it, path, err)))
                goto done;
        }
    }
    if (stop < o->epochs && !strcmp(r->status, "done")) strcpy(r->status, "paused");
finish:
    if (on_cpu && o->conv_cache && (st = dse_conv_cache_save(&m->cx, o->conv_cache, err))) goto done;
    r->seconds = now_s() - t0;
    r->img_per_s = t_train > 0 ? (double)imgs / t_train : 0;
    r->model_bytes = dse_model_bytes(m);
    st = DSE_OK;
done:
    if (st) run_data_keep_err(&data, o->data, err);
    run_data_free(&data);
    if (m) dse_model_host_free(m, x, x_pinned);
    else free(x);
    dse_model_free(m);
    free(labels);
    return st;
}
