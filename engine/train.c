/* train.c: the training loop, learning-rate policies, evaluation and checkpoints.
 * Determinism: initialization and dropout draw from PCG32 seeded by opts->seed, the data
 * order and augmentation of epoch k from (seed, k) (data/data.h), so a run resumed from
 * epoch k's checkpoint reproduces the uninterrupted run bit for bit on the same machine,
 * with any thread count (engine/slices.h; tests/test_engine_train.c checks both). On a CUDA device (opts->dev)
 * the loop is the same code through the model API; cuDNN's algorithm choices depend on
 * timing, so runs there agree to float rounding, unless opts->conv_cache pins the choices:
 * then a resumed run repeats the uninterrupted one bit for bit on the same GPU model and
 * cuDNN (checkpoints also carry FP16's loss scale; docs/gpu.md, "Determinism"). */
#include "engine/train.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include "base/fs.h"
#include "data/data.h"
#include "engine/ckpt_impl.h"
#include "engine/compress.h"
#include "engine/slices.h"

void dse_train_opts_default(struct dse_train_opts *o) {
    memset(o, 0, sizeof *o);
    o->data = DSE_TRAIN_DATA_DEFAULT;
    o->threads = 1;
#define DEF_INT(field, def, words)  o->field = def;
#define DEF_U64(field, def, words)  o->field = def;
#define DEF_REAL(field, def, words) o->field = (float)def;
#define DEF_ENUM(field, def, words) o->field = dse_word_index(words, #def);
#define X(field, key, kind, def, lo, hi, cli, words, help) DEF_##kind(field, def, words)
    DSE_TRAIN_RECIPE(X)
#undef X
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

/* Format 1 (read only): a header, then the zlib-compressed values; the CRC covered the values
 * alone. Format 2 (written): the CRC covers the header, a text block describing every tensor
 * and the data, and the values. docs/checkpoint.md has both byte by byte. */
#define CKPT1_MAGIC "DSECKPT1"
#define CKPT2_MAGIC "DSECKPT2"
#define CKPT_VERSION 2u

struct ckpt1_header {
    char     magic[8];
    uint32_t version, crc;       /* crc: CRC-32 (zlib) of the uncompressed payload */
    int32_t  next_epoch, pad;
    int64_t  iter;
    uint64_t net_hash;           /* FNV-1a 64 of the layer shapes */
    uint64_t values;             /* float32 values in the payload */
    uint64_t compressed;         /* bytes after the header */
    uint64_t rng_state, rng_inc; /* the dropout generator */
};

struct ckpt2_header {
    char     magic[8];           /* "DSECKPT2" */
    uint32_t version;            /* 2 */
    uint32_t header_bytes;       /* sizeof (struct ckpt2_header): 80 */
    int32_t  next_epoch;         /* 0 .. DSE_TRAIN_EPOCHS_MAX: the epoch a resumed run starts with */
    uint32_t meta_bytes;         /* the text block after the header */
    int64_t  iter;               /* >= 0: iterations done */
    uint64_t net_hash;           /* FNV-1a 64 of the layer shapes */
    uint64_t values;             /* float32 values in the payload */
    uint64_t compressed;         /* bytes of the zlib stream after the text block */
    uint64_t rng_state, rng_inc; /* the dropout generator */
    uint32_t crc;                /* CRC-32 of this header (crc = 0), the text, the values */
    uint32_t reserved;           /* 0 */
};

_Static_assert(sizeof(struct ckpt2_header) == 80, "checkpoint header layout");

static uint64_t net_hash(const struct dse_model *m) {
    uint64_t h = DSE_FNV64_INIT;
    for (int i = 0; i < m->net.n_layers; i++) {
        const struct dse_layer *l = &m->net.layers[i];
        int v[5] = { (int)l->type, l->out_c, l->out_h, l->out_w, l->in_c };
        h = dse_fnv1a64(h, v, sizeof v);
    }
    return h;
}

/* Format 2's CRC-32: the header with its crc field zero, the text block, the values. */
static uint32_t ckpt2_crc(const struct ckpt2_header *h, const char *text, const float *raw, size_t raw_bytes) {
    struct ckpt2_header z = *h;
    z.crc = 0;
    uLong crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)&z, sizeof z);
    crc = crc32(crc, (const Bytef *)text, (uInt)h->meta_bytes);
    return (uint32_t)crc32(crc, (const Bytef *)raw, (uInt)raw_bytes);
}

/* The n values of a checkpoint from their zlib stream into a new *raw (the caller frees it,
 * also after a failure). */
static enum dse_status inflate_values(const char *path, const unsigned char *z, uint64_t zbytes, uint64_t n,
                                      float **raw, struct dse_err *err) {
    uLongf raw_bytes = (uLongf)(n * sizeof(float)), got = raw_bytes;
    if (!(*raw = malloc(raw_bytes ? raw_bytes : 1)))
        return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory reading the checkpoint");
    if (uncompress((Bytef *)*raw, &got, z, (uLong)zbytes) != Z_OK || got != raw_bytes)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt checkpoint: the compressed data does not decode");
    return DSE_OK;
}

/* The text block's layer lines: what the network hash covers, by name (since issue #18:
 * a checkpoint of another network with the same tensors is named by its first layer that
 * differs). */
static void layer_lines(FILE *f, const struct dse_model *m) {
    for (int i = 0; i < m->net.n_layers; i++) {
        const struct dse_layer *l = &m->net.layers[i];
        fprintf(f, "layer %s %s in %d out %dx%dx%d\n", l->name, dse_layer_type_str(l->type), l->in_c, l->out_c,
                l->out_h, l->out_w);
    }
}

/* The text block's tensor lines: every value of the payload, in its order (each parameter
 * then its momentum, then running statistics: dse_model_state_get's order). */
static void tensor_lines(FILE *f, const struct dse_model *m) {
    struct dse_ckpt_tensor c;
    for (int at = 0; dse_ckpt_tensor_next(m, &at, &c);)
        fprintf(f, "%s %s %s %dx%dx%dx%d%s\n", c.param ? "param" : "state", m->net.layers[c.layer].name, c.role,
                c.t->n, c.t->c, c.t->h, c.t->w, c.param ? " +momentum" : "");
}

/* s as one line of the text block: a control byte (a newline would start a line the reader
 * obeys) is written as '?'. Data readers refuse class names holding them (issue #31); this
 * keeps the block's lines whatever the caller passes. */
static void put_text(FILE *f, const char *s) {
    for (; *s; s++) fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
    fputc('\n', f);
}

/* The whole text block of m and meta into a malloc'd string. */
char *dse_ckpt_text(const struct dse_model *m, const struct dse_ckpt_meta *meta, size_t *len) {
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    fprintf(f, "dse checkpoint 2\nnetwork %s\ninput %d %d %d\n", m->net.name[0] ? m->net.name : "-", m->net.in_c,
            m->net.in_h, m->net.in_w);
    layer_lines(f, m);
    tensor_lines(f, m);
    if (m->gpu && m->gpu->math == DSE_CUDA_MATH_FP16) /* FP16's dynamic loss scale: the next steps depend on it */
        fprintf(f, "loss_scale %.9g %lld\n", (double)m->gpu->loss_scale, (long long)m->gpu->mp_good_steps);
    if (meta) {
        fprintf(f, "seed %llu\n", (unsigned long long)meta->seed);
        if (meta->data[0]) fprintf(f, "data "), put_text(f, meta->data);
        if (meta->norm.c) {
            fprintf(f, "norm %d", meta->norm.c);
            for (int c = 0; c < meta->norm.c; c++) fprintf(f, " %.9g", (double)meta->norm.mean[c]);
            for (int c = 0; c < meta->norm.c; c++) fprintf(f, " %.9g", (double)meta->norm.std[c]);
            fprintf(f, "\n");
        }
        if (meta->eval_center > 0) fprintf(f, "eval_center %.9g\n", (double)meta->eval_center);
        if (meta->classes > 0) fprintf(f, "classes %d\n", meta->classes);
        for (int c = 0; c < meta->classes && meta->class_names; c++)
            fprintf(f, "class %d ", c), put_text(f, meta->class_names[c]);
        if (meta->partial.steps > 0) /* the loss sum in hex: the same double back */
            fprintf(f, "partial %a %lld %lld\n", meta->partial.loss_sum, (long long)meta->partial.steps,
                    (long long)meta->partial.clipped);
    }
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

enum dse_status dse_checkpoint_save(const struct dse_model *m, int next_epoch, int64_t iter,
                                    const struct dse_ckpt_meta *meta, const char *path, struct dse_err *err) {
    /* The values, in order: each parameter then its momentum, then running statistics
     * (dse_model_state_*: the same order and bytes on every device). */
    uint64_t n = dse_model_state_count(m);
    size_t raw_bytes = (size_t)n * sizeof(float), meta_bytes = 0;
    uLongf bound = compressBound((uLong)raw_bytes);
    float *raw = malloc(raw_bytes ? raw_bytes : 1);
    char *text = dse_ckpt_text(m, meta, &meta_bytes);
    unsigned char *file = text ? malloc(sizeof(struct ckpt2_header) + meta_bytes + bound) : NULL;
    enum dse_status st = DSE_OK;
    if (!raw || !file) {
        st = dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory writing the checkpoint");
        goto done;
    }
    if ((st = dse_model_state_get(m, raw, err))) goto done;
    struct ckpt2_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CKPT2_MAGIC, 8);
    h.version = CKPT_VERSION;
    h.header_bytes = sizeof h;
    h.next_epoch = next_epoch;
    h.meta_bytes = (uint32_t)meta_bytes;
    h.iter = iter;
    h.net_hash = net_hash(m);
    h.values = n;
    h.rng_state = m->cx.rng.state;
    h.rng_inc = m->cx.rng.inc;
    uLongf clen = bound;
    if (compress2(file + sizeof h + meta_bytes, &clen, (const Bytef *)raw, (uLong)raw_bytes, 6) != Z_OK) {
        st = dse_err_set(err, DSE_ERR_INTERNAL, path, 0, "zlib could not compress the checkpoint");
        goto done;
    }
    h.compressed = clen;
    h.crc = ckpt2_crc(&h, text, raw, raw_bytes);
    memcpy(file, &h, sizeof h);
    memcpy(file + sizeof h, text, meta_bytes);
    st = dse_fs_write_atomic(path, file, sizeof h + meta_bytes + clen, err);
done:
    free(raw);
    free(text);
    free(file);
    return st;
}

/* The first line of a that differs from b's, or a's first line past b's end, into out (at
 * most size bytes); "" if a has nothing b lacks. */
static void first_difference(const char *a, const char *b, char *out, size_t size) {
    out[0] = '\0';
    while (*a && *b) {
        size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        if (la != lb || memcmp(a, b, la)) {
            snprintf(out, size, "%.*s", (int)la, a);
            return;
        }
        a += la + (a[la] == '\n'), b += lb + (b[lb] == '\n');
    }
    if (*a) snprintf(out, size, "%.*s", (int)strcspn(a, "\n"), a); /* b ended first */
}

/* The lines of a text block that start with one of the 6-character words (tensors: "param ",
 * "state "; layers: "layer "), in order, as a new NUL-terminated string (NULL: no memory). */
static char *text_part(const char *text, size_t len, const char *word1, const char *word2) {
    char *t = malloc(len + 1), *o = t;
    if (!t) return NULL;
    for (const char *p = text; p < text + len;) {
        size_t l = strcspn(p, "\n");
        if (p + l > text + len) l = (size_t)(text + len - p);
        if (l > 6 && (!strncmp(p, word1, 6) || !strncmp(p, word2, 6))) memcpy(o, p, l), o += l, *o++ = '\n';
        p += l + 1;
    }
    *o = '\0';
    return t;
}

/* The header fields whose range the file itself tells (dse_train_run checks the next epoch
 * and iteration against the run): format 1's header is outside its CRC. */
static enum dse_status header_range(const char *path, int next_epoch, int64_t iter, uint64_t rng_inc,
                                    struct dse_err *err) {
    if (next_epoch < 0 || next_epoch > DSE_TRAIN_EPOCHS_MAX || iter < 0)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt checkpoint: next epoch %d, iteration %lld; expected "
                           "0 to %d and >= 0", next_epoch, (long long)iter, DSE_TRAIN_EPOCHS_MAX);
    if (!(rng_inc & 1)) /* PCG32's increment is odd (dse_pcg32_seed) */
        return dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt checkpoint: the dropout generator's increment "
                           "%016llx is even", (unsigned long long)rng_inc);
    return DSE_OK;
}

static enum dse_status load_v1(struct dse_model *m, const char *path, const char *file, size_t len, int *next_epoch,
                               int64_t *iter, float **raw, struct dse_err *err) {
    struct ckpt1_header h;
    uint64_t n = dse_model_state_count(m);
    enum dse_status st0;
    if (len < sizeof h) return dse_err_set(err, DSE_ERR_IO, path, 0, "truncated checkpoint: %zu bytes", len);
    memcpy(&h, file, sizeof h);
    if (h.version != 1)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "checkpoint format 1 with version %u; not a dse checkpoint",
                           h.version);
    if (h.net_hash != net_hash(m) || h.values != n)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "checkpoint of another network (%llu values; this network has "
                           "%llu)", (unsigned long long)h.values, (unsigned long long)n);
    if (h.compressed != len - sizeof h)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt checkpoint: %zu bytes of data, the header says %llu",
                           len - sizeof h, (unsigned long long)h.compressed);
    if ((st0 = header_range(path, h.next_epoch, h.iter, h.rng_inc, err))) return st0;
    enum dse_status st = inflate_values(path, (const unsigned char *)file + sizeof h, h.compressed, n, raw, err);
    if (st) return st;
    uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)*raw, (uInt)(n * sizeof(float)));
    if (crc != h.crc)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt checkpoint: CRC-32 %08x, expected %08x", crc, h.crc);
    m->cx.rng.state = h.rng_state, m->cx.rng.inc = h.rng_inc;
    *next_epoch = h.next_epoch, *iter = h.iter;
    return DSE_OK;
}

/* FP16's loss scale and good-step count from a text block's "loss_scale S G" line, into an
 * FP16 device model (a checkpoint without the line, from an older dse or another precision,
 * leaves the model's: 65,536 and 0 in a new one). Other models ignore it. */
static enum dse_status loss_scale_load(struct dse_model *m, const char *path, const char *text, size_t len,
                                       struct dse_err *err) {
    for (const char *p = text; p < text + len;) {
        size_t l = strcspn(p, "\n");
        if (p + l > text + len) l = (size_t)(text + len - p);
        if (l > 11 && !strncmp(p, "loss_scale ", 11)) {
            char buf[128];
            float scale = 0;
            long long good = -1;
            int used = 0;
            snprintf(buf, sizeof buf, "%.*s", (int)(l < sizeof buf ? l : sizeof buf - 1), p);
            if (sscanf(buf + 11, "%g %lld%n", &scale, &good, &used) != 2 || buf[11 + used] || !(scale >= 1.0f) ||
                scale > 16777216.0f || good < 0)
                return dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt checkpoint: '%s' in its text block; expected "
                                   "'loss_scale S G' with 1 <= S <= 2^24 and G >= 0", buf);
            if (m->gpu && m->gpu->math == DSE_CUDA_MATH_FP16) m->gpu->loss_scale = scale, m->gpu->mp_good_steps = good;
        }
        p += l + 1;
    }
    return DSE_OK;
}

static enum dse_status load_v2(struct dse_model *m, const char *path, const char *file, size_t len, int *next_epoch,
                               int64_t *iter, float **raw, struct dse_err *err) {
    struct ckpt2_header h;
    uint64_t n = dse_model_state_count(m);
    enum dse_status st = DSE_OK;
    if (len < sizeof h) return dse_err_set(err, DSE_ERR_IO, path, 0, "truncated checkpoint: %zu bytes", len);
    memcpy(&h, file, sizeof h);
    if (h.version != CKPT_VERSION)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "checkpoint format version %u; this dse reads versions 1 and %u",
                           h.version, CKPT_VERSION);
    if (h.header_bytes != sizeof h)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt checkpoint: a header of %u bytes; format 2's has %zu",
                           h.header_bytes, sizeof h);
    if (h.meta_bytes > len - sizeof h || h.compressed != len - sizeof h - h.meta_bytes)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "truncated or corrupt checkpoint: %zu bytes, the header says "
                           "%llu", len, (unsigned long long)sizeof h + h.meta_bytes + h.compressed);
    const char *text = file + sizeof h;
    /* Damage first (the CRC over everything, when the value count fits this network), then
     * whether it is this network, named by the first tensor that differs. */
    if (h.values == n) {
        if ((st = inflate_values(path, (const unsigned char *)text + h.meta_bytes, h.compressed, n, raw, err)))
            return st;
        uint32_t crc = ckpt2_crc(&h, text, *raw, (size_t)n * sizeof(float));
        if (crc != h.crc)
            return dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt checkpoint: CRC-32 %08x, expected %08x (it covers "
                               "the header, the text block and the values)", (unsigned)crc, h.crc);
    }
    size_t mine_len = 0;
    char *mine = dse_ckpt_text(m, NULL, &mine_len), diff[256], mdiff[256];
    char *theirs = text_part(text, h.meta_bytes, "param ", "state "),
         *ours = mine ? text_part(mine, mine_len, "param ", "state ") : NULL;
    char *their_layers = text_part(text, h.meta_bytes, "layer ", "layer "),
         *our_layers = mine ? text_part(mine, mine_len, "layer ", "layer ") : NULL;
    if (!mine || !theirs || !ours || !their_layers || !our_layers) {
        st = dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory reading the checkpoint");
    } else if (strcmp(theirs, ours) || h.net_hash != net_hash(m) || h.values != n) {
        /* the first tensor that differs; the same tensors: the first layer (the hash's) */
        first_difference(theirs, ours, diff, sizeof diff);
        first_difference(ours, theirs, mdiff, sizeof mdiff);
        if (!diff[0] && !mdiff[0] && their_layers[0] && h.net_hash != net_hash(m)) {
            first_difference(their_layers, our_layers, diff, sizeof diff);
            first_difference(our_layers, their_layers, mdiff, sizeof mdiff);
        }
        if (diff[0] || mdiff[0])
            st = dse_err_set(err, DSE_ERR_IO, path, 0, "checkpoint of another network: it has '%s' where this "
                             "network has '%s'", diff[0] ? diff : "nothing", mdiff[0] ? mdiff : "nothing");
        else if (h.values == n && h.net_hash != net_hash(m)) /* no layer lines: before issue #18 */
            st = dse_err_set(err, DSE_ERR_IO, path, 0, "checkpoint of another network: the same tensors, but a "
                             "layer's type or output shape differs (a pooling's or a stride's, say; its "
                             "checkpoint predates the layer lines that would name it)");
        else if (h.values != n && h.net_hash == net_hash(m)) /* the same tensors, another count: the header's */
            st = dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt checkpoint: its header says %llu values where its "
                             "tensors hold %llu", (unsigned long long)h.values, (unsigned long long)n);
        else
            st = dse_err_set(err, DSE_ERR_IO, path, 0, "checkpoint of another network, or corrupt (%llu values; this "
                             "network has %llu)", (unsigned long long)h.values, (unsigned long long)n);
    }
    free(mine), free(theirs), free(ours), free(their_layers), free(our_layers);
    if (st) return st;
    if ((st = header_range(path, h.next_epoch, h.iter, h.rng_inc, err))) return st; /* a right CRC, a wrong writer */
    if ((st = loss_scale_load(m, path, text, h.meta_bytes, err))) return st;
    m->cx.rng.state = h.rng_state, m->cx.rng.inc = h.rng_inc;
    *next_epoch = h.next_epoch, *iter = h.iter;
    return DSE_OK;
}

enum dse_status dse_ckpt_text_match(const struct dse_model *m, const char *path, const char *what, const char *text,
                                    size_t len, struct dse_err *err) {
    size_t mine_len = 0;
    char *mine = dse_ckpt_text(m, NULL, &mine_len), diff[256], mdiff[256];
    char *theirs = text_part(text, len, "param ", "state "), *ours = mine ? text_part(mine, mine_len, "param ", "state ") : NULL;
    char *their_layers = text_part(text, len, "layer ", "layer "),
         *our_layers = mine ? text_part(mine, mine_len, "layer ", "layer ") : NULL;
    enum dse_status st = DSE_OK;
    if (!mine || !theirs || !ours || !their_layers || !our_layers) {
        st = dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory reading the %s", what);
    } else {
        first_difference(theirs, ours, diff, sizeof diff); /* the first tensor that differs, else layer */
        first_difference(ours, theirs, mdiff, sizeof mdiff);
        if (!diff[0] && !mdiff[0]) {
            first_difference(their_layers, our_layers, diff, sizeof diff);
            first_difference(our_layers, their_layers, mdiff, sizeof mdiff);
        }
        if (diff[0] || mdiff[0])
            st = dse_err_set(err, DSE_ERR_IO, path, 0, "%s of another network: it has '%s' where this network has "
                             "'%s'", what, diff[0] ? diff : "nothing", mdiff[0] ? mdiff : "nothing");
    }
    free(mine), free(theirs), free(ours), free(their_layers), free(our_layers);
    return st;
}

enum dse_status dse_checkpoint_info(const char *path, struct dse_ckpt_info *out, struct dse_err *err) {
    char *file;
    size_t len;
    struct ckpt2_header h;
    memset(out, 0, sizeof *out);
    enum dse_status st = dse_fs_read(path, &file, &len, err);
    if (st) return st;
    if (len >= sizeof(struct ckpt1_header) && !memcmp(file, CKPT1_MAGIC, 8)) {
        struct ckpt1_header h1;
        memcpy(&h1, file, sizeof h1);
        out->version = 1, out->next_epoch = h1.next_epoch, out->iter = h1.iter;
        free(file);
        return DSE_OK;
    }
    if (len >= 8 && !memcmp(file, DSE_DSEZ_MAGIC, 8)) { /* a compressed model (issue #35) */
        free(file);
        return dse_dsez_info(path, out, err);
    }
    if (len < sizeof h || memcmp(file, CKPT2_MAGIC, 8)) {
        free(file);
        return dse_err_set(err, DSE_ERR_IO, path, 0, "not a dse checkpoint (bad magic)");
    }
    memcpy(&h, file, sizeof h);
    if (h.meta_bytes > len - sizeof h) {
        free(file);
        return dse_err_set(err, DSE_ERR_IO, path, 0, "truncated checkpoint: %zu bytes", len);
    }
    out->version = (int)h.version, out->next_epoch = h.next_epoch, out->iter = h.iter;
    st = dse_ckpt_text_info(path, file + sizeof h, h.meta_bytes, out, err);
    free(file);
    return st;
}

enum dse_status dse_ckpt_text_info(const char *path, const char *text, size_t len, struct dse_ckpt_info *out,
                                   struct dse_err *err) {
    const char *end = text + len;
    enum dse_status st = DSE_OK;
    int line = 0;
    for (const char *p = text; p < end && !st;) {
        size_t l = strcspn(p, "\n");
        if (p + l > end) l = (size_t)(end - p);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(l < sizeof buf ? l : sizeof buf - 1), p);
        line++;
        int k, used = 0;
        if (!strncmp(buf, "data ", 5)) {
            dse_strlcpy(out->data, buf + 5, (int)sizeof out->data);
        } else if (!strncmp(buf, "seed ", 5)) {
            out->seed = strtoull(buf + 5, NULL, 10);
        } else if (!strncmp(buf, "input ", 6)) { /* what dse eval, predict and export fit NET to */
            int ic, ih, iw; /* the tensor lines are what loading checks: a line unread here is no error */
            if (sscanf(buf + 6, "%d %d %d", &ic, &ih, &iw) == 3 && ic > 0 && ih > 0 && iw > 0)
                out->in_c = ic, out->in_h = ih, out->in_w = iw;
        } else if (!strncmp(buf, "layer ", 6)) {
            char type[16];
            int  oc;
            if (sscanf(buf + 6, "%*s %15s in %*d out %d", type, &oc) == 2 && oc > 0 &&
                (!strcmp(type, dse_layer_type_str(DSE_LAYER_CONV)) || !strcmp(type, dse_layer_type_str(DSE_LAYER_FC))))
                out->outputs = oc;
        } else if (!strncmp(buf, "eval_center ", 12)) {
            out->eval_center = strtof(buf + 12, NULL);
        } else if (!strncmp(buf, "norm ", 5)) {
            char *q = buf + 5, *e;
            int c = (int)strtol(q, &e, 10);
            if (c < 1 || c > DSE_DATA_MAX_CHANNELS) st = DSE_ERR_IO;
            for (int i = 0; !st && i < 2 * c; i++) { /* st first: c out of range must not reach 2 * c */
                q = e;
                float v = strtof(q, &e);
                if (e == q) st = DSE_ERR_IO;
                else if (i < c) out->norm.mean[i] = v;
                else out->norm.std[i - c] = v;
            }
            if (!st) out->norm.c = c;
        } else if (!strncmp(buf, "partial ", 8)) {
            long long steps, clipped;
            char *e;
            out->partial.loss_sum = strtod(buf + 8, &e);
            if (e == buf + 8 || sscanf(e, "%lld %lld", &steps, &clipped) != 2 || steps < 1 || clipped < 0 ||
                clipped > steps)
                st = DSE_ERR_IO;
            else out->partial.steps = steps, out->partial.clipped = clipped;
        } else if (sscanf(buf, "classes %d", &k) == 1 && !out->class_names) {
            if (k < 1 || k > DSE_DIM_MAX || !(out->class_names = calloc((size_t)k, sizeof *out->class_names)))
                st = DSE_ERR_IO;
            else out->classes = k;
        } else if (sscanf(buf, "class %d %n", &k, &used) == 1 && used > 0) {
            if (k < 0 || k >= out->classes) st = DSE_ERR_IO;
            else dse_strlcpy(out->class_names[k], buf + used, 64);
        }
        p += l + 1;
    }
    if (st) {
        free(out->class_names);
        out->class_names = NULL, out->classes = 0;
        return dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt checkpoint: line %d of its text block does not parse",
                           line);
    }
    return DSE_OK;
}

enum dse_status dse_checkpoint_load(struct dse_model *m, const char *path, int *next_epoch,
                                    int64_t *iter, struct dse_err *err) {
    char *file;
    size_t len;
    float *raw = NULL;
    int e = 0;
    int64_t it = 0;
    enum dse_status st = dse_fs_read(path, &file, &len, err);
    if (st) return st;
    if (len >= 8 && !memcmp(file, DSE_DSEZ_MAGIC, 8)) { /* a compressed model (issue #35): next epoch 0 */
        free(file);
        if ((st = dse_dsez_load(m, path, err))) return st;
        *next_epoch = 0, *iter = 0;
        return DSE_OK;
    }
    if (len >= 8 && !memcmp(file, CKPT2_MAGIC, 8)) st = load_v2(m, path, file, len, &e, &it, &raw, err);
    else if (len >= 8 && !memcmp(file, CKPT1_MAGIC, 8)) st = load_v1(m, path, file, len, &e, &it, &raw, err);
    else st = dse_err_set(err, DSE_ERR_IO, path, 0, "not a dse checkpoint (bad magic)");
    if (!st) st = dse_model_state_put(m, raw, err);
    if (!st) *next_epoch = e, *iter = it;
    free(raw);
    free(file);
    return st;
}

/* ---- conv choices ---------------------------------------------------------------------- */

/* What the choice file covers of a device's choices: the ctx's counts when it was last read
 * or written. */
struct pin_count {
    int64_t found;  /* stats.conv_finds */
    int64_t shared; /* stats.conv_shared: taken from another model of the process */
};

/* o->conv_cache into the model's backend before the first step: the CPU's strategies, or on a
 * CUDA device cuDNN's choices. *pinned = the device's counts the file covers. */
static enum dse_status choices_load(struct dse_model *m, const struct dse_train_opts *o, struct pin_count *pinned,
                                    struct dse_err *err) {
    *pinned = (struct pin_count){ .found = 0, .shared = 0 };
    if (!o->conv_cache) return DSE_OK;
    if (!m->gpu) return dse_conv_cache_load(&m->cx, o->conv_cache, err);
    struct dse_cuda_conv_load ld;
    char msg[1000];
    enum dse_status st = dse_cuda_conv_cache_load(m->gpu, o->conv_cache, &ld, err);
    if (st) return st;
    *pinned = (struct pin_count){ .found = m->gpu->stats.conv_finds, .shared = m->gpu->stats.conv_shared };
    if (ld.stale) snprintf(msg, sizeof msg, "warning: %s", ld.why);
    else if (ld.found) snprintf(msg, sizeof msg, "cuDNN conv choices: %d shapes pinned by %s", ld.loaded, o->conv_cache);
    if (o->note && ld.found)
        o->note(o->progress_arg, ld.stale ? DSE_NOTE_CHOICES_STALE : DSE_NOTE_CHOICES_LOADED, msg);
    return DSE_OK;
}

/* The choices into o->conv_cache: the CPU's after training (at_end); on a device, whenever
 * find chose something (or the ctx took another model's choice from its conv_pool) since the
 * file was read or written: after each epoch's steps, before
 * its results are reported (a sweep records them) and its checkpoint written (nothing that
 * outlives the run may hold work done with choices the file lacks: a run resumed from it
 * would choose again), and at the end. */
static enum dse_status choices_save(struct dse_model *m, const struct dse_train_opts *o, int at_end,
                                    struct pin_count *pinned, struct dse_err *err) {
    if (!o->conv_cache || dse_dist_rank(o->dist) > 0) return DSE_OK; /* a data-parallel run's rank 0 writes */
    if (!m->gpu) return at_end ? dse_conv_cache_merge(&m->cx, o->conv_cache, err) : DSE_OK;
    const struct pin_count now = { .found = m->gpu->stats.conv_finds, .shared = m->gpu->stats.conv_shared };
    if (now.found == pinned->found && now.shared == pinned->shared) return DSE_OK;
    enum dse_status st = dse_cuda_conv_cache_save(m->gpu, o->conv_cache, err);
    if (st) return st;
    if (o->note) {
        char msg[700], shared[120] = "";
        if (now.shared > pinned->shared) /* before the path, which may be long */
            snprintf(shared, sizeof shared, " (%lld more taken from another model of this process)",
                     (long long)(now.shared - pinned->shared));
        snprintf(msg, sizeof msg, "cuDNN conv choices: %lld found%s and pinned in %s",
                 (long long)(now.found - pinned->found), shared, o->conv_cache);
        o->note(o->progress_arg, DSE_NOTE_CHOICES_PINNED, msg);
    }
    *pinned = now;
    return DSE_OK;
}

/* ---- training ------------------------------------------------------------------------- */

/* Test-set loss, top-1/top-5 accuracy, and the classes no image was predicted as. */
static enum dse_status evaluate(struct dse_model *m, struct dse_loader *ld, float *x, int *labels,
                                struct dse_epoch_result *er, int *class_n, int *class_hits, struct dse_err *err) {
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
            if (class_n && labels[b] >= 0 && labels[b] < k) class_n[labels[b]]++, class_hits[labels[b]] += best == labels[b];
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
    struct dse_data_norm  norm;             /* what the loaders normalize with */
    float                 eval_center;      /* the evaluation loader's centred box */
    struct dse_loader    *ltrain, *ltest;
};

/* An error about the pack (the cache's file for a folder) names the caller's data string. */
static void run_data_keep_err(const struct run_data *d, const char *data, struct dse_err *err) {
    if (err && d->pack && !strcmp(err->file, d->pack->path)) dse_err_set(err, err->code, data, err->line, "%s", err->msg);
}

static void run_data_free(struct run_data *d) {
    dse_loader_free(d->ltrain);
    dse_loader_free(d->ltest);
    dse_dataset_free(d->train);
    dse_dataset_free(d->test);
    dse_pack_close(d->pack);
    dse_imgfolder_deinit(&d->folder);
}

/* The end of a run (training or evaluation), whatever happened: an error about the pack
 * named as the data string, the data, the batch buffer (pinned on a device), the model, the labels freed.
 * Returns st. */
static enum dse_status run_end(struct run_data *d, const char *data, struct dse_model *m, float *x, int x_pinned,
                               int *labels, enum dse_status st, struct dse_err *err) {
    if (st) run_data_keep_err(d, data, err);
    run_data_free(d);
    if (m) dse_model_host_free(m, x, x_pinned);
    else free(x);
    dse_model_free(m);
    free(labels);
    return st;
}

/* test_batch: the test loader's batch (the model's: a data-parallel rank's share). */
static enum dse_status run_data_open(const struct dse_net *net, const struct dse_train_opts *o, int test_batch,
                                     struct run_data *d, struct dse_err *err) {
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
            dse_data_norm_of_pack(d->pack, &lo.norm);
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
        if (o->norm && o->norm->c == d->c) lo.norm = *o->norm;
        d->norm = lo.norm;
        dse_data_aug_of(o->aug, short_side, &lo.aug, &center);
        lo.out_h = net->in_h, lo.out_w = net->in_w, lo.workers = o->loader_workers, lo.limit = o->limit_train;
        lo.center = center, lo.decode_min_short = is_pack ? 0 : short_side;
        st = is_pack ? dse_loader_new_pack(d->pack, DSE_PACK_TRAIN, &lo, &d->ltrain, err)
                     : dse_loader_new_folder(&d->folder, DSE_PACK_TRAIN, d->c, &lo, &d->ltrain, err);
        if (st) return st;
        lo.shuffle = 0, lo.limit = o->limit_test, lo.batch = test_batch;
        memset(&lo.aug, 0, sizeof lo.aug);
        if (o->eval_center > 0) lo.center = o->eval_center;
        d->eval_center = lo.center;
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
    if (o->norm && o->norm->c == d->c) lo.norm = *o->norm;
    d->norm = lo.norm, d->eval_center = 1; /* fixed-size images: the whole image */
    if ((st = dse_loader_new(d->train, &lo, &d->ltrain, err))) return st;
    lo.shuffle = 0, lo.batch = test_batch;
    memset(&lo.aug, 0, sizeof lo.aug);
    return dse_loader_new(d->test, &lo, &d->ltest, err);
}

/* What data-parallel ranks must agree on (dse_dist_same): the network's layers and
 * parameter shapes, the data as read (images, classes, shape, normalization) and every
 * option that changes what a step computes. */
static uint64_t run_hash(const struct dse_model *m, const struct dse_train_opts *o, const struct run_data *d,
                         int n_train) {
    uint64_t h = net_hash(m);
    const int64_t data[] = { n_train, d->classes, d->c, d->h, d->w, o->conv_algo }; /* what was read */
    h = dse_fnv1a64(h, data, sizeof data);
    h = dse_fnv1a64(h, &d->norm, sizeof d->norm);
    for (int p = 0; p < m->n_params; p++) {
        const int64_t c = dse_tensor_count(m->params[p]);
        h = dse_fnv1a64(h, &c, sizeof c);
    }
    const double f[] = { o->lr, o->power, o->gamma, o->momentum, o->weight_decay, o->clip_norm, o->classifier_bias,
                         o->init_std, o->eval_center };
    const int64_t v[] = { o->epochs, o->batch, o->policy, o->step_epochs, o->warmup_epochs, (int64_t)o->seed,
                          o->limit_train, o->limit_test, o->aug, o->init, o->reduce, o->stop_after_epoch };
    h = dse_fnv1a64(h, f, sizeof f);
    h = dse_fnv1a64(h, v, sizeof v);
    h = dse_fnv1a64(h, o->data, strlen(o->data));
    return o->resume ? dse_fnv1a64(h, o->resume, strlen(o->resume)) : h;
}

/* Whether a checkpoint within an epoch is due after step `step` of it (1-based). */
static int want_part(const struct dse_train_opts *o, int step, double t_ckpt) {
    if (!o->checkpoint_dir) return 0;
    return (o->ckpt_every_steps > 0 && step % o->ckpt_every_steps == 0) ||
           (o->ckpt_every_s > 0 && now_s() - t_ckpt >= o->ckpt_every_s);
}

/* DIR/epoch-<e+1>.part.ckpt: the model after `it` steps, within epoch e (0-based), with the
 * epoch's tally so far (meta->partial). Replaced by rename each time: a kill leaves the last. */
static enum dse_status part_save(struct dse_model *m, const struct dse_train_opts *o, int e, int64_t it,
                                 const struct dse_ckpt_meta *meta, struct dse_err *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s/epoch-%d.part.ckpt", o->checkpoint_dir, e + 1);
    enum dse_status st = dse_fs_mkdirs(o->checkpoint_dir, err);
    return st ? st : dse_checkpoint_save(m, e, it, meta, path, err);
}

/* A loaded checkpoint's place in this run: written at the end of epoch start (0 to
 * o->epochs), after start x ipe steps, or within epoch start + 1 after start x ipe + steps
 * (part: the steps of its partial tally, 1 to ipe - 1). Another --epochs, --batch or
 * --limit-train (or a format-1 header, outside its CRC, with a flipped bit) would train
 * another schedule. */
static enum dse_status resume_check(const struct dse_train_opts *o, int start, int64_t it, int64_t part, int ipe,
                                    int n_train, struct dse_err *err) {
    if (start > o->epochs || (part && start >= o->epochs))
        return dse_err_set(err, DSE_ERR_CONFIG, o->resume, 0, "checkpoint %s epoch %d; this run ends at epoch %d",
                           part ? "within" : "after", part ? start + 1 : start, o->epochs);
    if (part && (part >= ipe || it != (int64_t)start * ipe + part))
        return dse_err_set(err, DSE_ERR_CONFIG, o->resume, 0, "checkpoint at step %lld, %lld steps into epoch %d; "
                           "this run takes %d steps an epoch (%d training images, batch %d): another batch or "
                           "--limit-train than its run's, or corrupt", (long long)it, (long long)part, start + 1,
                           ipe, n_train, o->batch);
    if (!part && it != (int64_t)start * ipe)
        return dse_err_set(err, DSE_ERR_CONFIG, o->resume, 0, "checkpoint after epoch %d at step %lld; this run "
                           "takes %d steps an epoch (%d training images, batch %d), so %lld: another batch or "
                           "--limit-train than its run's, or corrupt", start, (long long)it, ipe, n_train, o->batch,
                           (long long)start * ipe);
    return DSE_OK;
}

/* The files a run reads or writes after its work, checked before it (issue #18 item 4):
 * --resume is a file (as the reader's errors say, sooner), the checkpoint folder is made
 * and takes a file, the conv choice file's folder takes one. Rank 0 writes both. */
static enum dse_status run_paths_check(const struct dse_train_opts *o, int rank, struct dse_err *err) {
    enum dse_status st;
    struct stat sb;
    if (o->resume && stat(o->resume, &sb) != 0)
        return dse_err_set(err, DSE_ERR_IO, o->resume, 0, "cannot open: %s", strerror(errno));
    if (o->resume && S_ISDIR(sb.st_mode))
        return dse_err_set(err, DSE_ERR_IO, o->resume, 0, "is a directory; expected a checkpoint file "
                           "(DIR/epoch-<k>.ckpt)");
    if (o->resume && dse_dsez_is(o->resume))
        return dse_err_set(err, DSE_ERR_CONFIG, o->resume, 0, "is a compressed model (.dsez): training it would revive "
                           "its pruned weights and untie its shared ones. To train on from its weights as a float "
                           "model: dse export NET --checkpoint %s --format ckpt --out FILE.ckpt, then --resume "
                           "FILE.ckpt; to compress again: dse compress", o->resume);
    if (rank > 0) return DSE_OK;
    if (o->checkpoint_dir &&
        ((st = dse_fs_mkdirs(o->checkpoint_dir, err)) || (st = dse_fs_check_dir(o->checkpoint_dir, err))))
        return st;
    return o->conv_cache ? dse_fs_check_file(o->conv_cache, err) : DSE_OK;
}

/* o->cancel asked before a step. Data-parallel ranks stop together: rank 0 asks (a sweep
 * worker that lost its lease) and tells the others, whose steps would otherwise wait for it. */
static int want_cancel(const struct dse_train_opts *o) {
    int c = o->cancel && dse_dist_rank(o->dist) == 0 ? o->cancel(o->progress_arg) : 0;
    if (dse_dist_size(o->dist) > 1 && dse_dist_bcast(o->dist, &c, sizeof c, 0, NULL)) c = 1;
    return c;
}

/* 1 if the tally of epoch e (0-based) met a loss that was not finite: r says where. */
static int diverged(struct dse_train_result *r, int e, const struct dse_step_tally *t) {
    if (t->diverged_at < 0) return 0;
    strcpy(r->status, "diverged");
    r->diverged_epoch = e + 1;
    r->diverged_iter = (int)t->diverged_at;
    return 1;
}

/* Over 150 lines on purpose: setup, the steps and each epoch's end share one exit (done:),
 * which for a data-parallel run decides whether an error is every rank's (the setup's,
 * agreed by dse_dist_agree) or this rank's alone (after steps_begun, which breaks the group),
 * and frees what the setup made in whatever state it was left. The parts that need no such
 * exit are their own functions (run_paths_check, run_data_open, resume_check, choices_load
 * and choices_save, part_save, evaluate, diverged, run_end). */
enum dse_status dse_train_run(const struct dse_net *net, const struct dse_train_opts *o,
                              struct dse_train_result *r, struct dse_err *err) {
    struct run_data data;
    struct dse_loader *ltrain, *ltest;
    struct dse_model *m = NULL;
    int setup_agreed = 0; /* data-parallel: the ranks' setup outcomes compared (dse_dist_agree) */
    int steps_begun = 0;  /* ... and found all well: from here an error is this rank's alone */
    float *x = NULL, *xg = NULL;
    int *labels = NULL, x_pinned = 0;
    enum dse_status st;

    memset(r, 0, sizeof *r);
    memset(&data, 0, sizeof data);
    r->seed = o->seed;
    if (o->epochs < 1 || o->epochs > (int)(sizeof r->epochs / sizeof r->epochs[0]) || o->batch < 1 ||
        o->threads < 1 || !(o->lr > 0) || o->stop_after_epoch < 0 || o->stop_after_epoch > o->epochs)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "epochs (1 to %d), batch, threads must be >= 1, "
                           "lr > 0 and stop_after_epoch 0 to epochs", DSE_TRAIN_EPOCHS_MAX);
    /* Data-parallel: this rank's share [first, first + share) of every batch. */
    const int ranks = dse_dist_size(o->dist), rank = dse_dist_rank(o->dist);
    int64_t first = 0, share = o->batch;
    if (ranks > 1) {
        if (ranks > DSE_SLICES_MAX) {
            st = dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%d ranks on one batch; at most %d (each takes at least "
                             "one of the batch's slices)", ranks, DSE_SLICES_MAX);
            goto done;
        }
        if (o->batch < ranks) {
            st = dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "batch %d is smaller than the %d ranks: every rank "
                             "trains on a share of each batch, so the batch must be at least the ranks", o->batch,
                             ranks);
            goto done;
        }
        int s0, s1;
        dse_slice_rank(o->batch, rank, ranks, &s0, &s1, &first, &share);
    }
    if (o->grad_hook && o->dev.device.kind != DSE_DEVICE_CPU) {
        st = dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "a gradient hook (dse compress's fine-tuning) runs on "
                         "the CPU only; leave --device out");
        goto done;
    }
    if ((st = run_paths_check(o, rank, err))) goto done;
    if ((st = run_data_open(net, o, (int)share, &data, err))) goto done;
    ltrain = data.ltrain, ltest = data.ltest;
    const int n_train = dse_loader_images(ltrain);
    if (n_train < o->batch) {
        st = dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "batch %d is larger than the %d training images",
                         o->batch, n_train);
        goto done;
    }
    struct dse_model_opts mo = { .batch = (int)share, .threads = o->threads, .seed = o->seed, .init = o->init,
                                 .init_std = o->init_std, .classifier_bias = o->classifier_bias };
    if ((st = dse_model_new_on(net, &mo, &o->dev, &m, err))) goto done;
    m->grad_hook = o->grad_hook, m->grad_hook_arg = o->grad_hook_arg;
    if (ranks > 1 && ((st = dse_dist_same(o->dist, run_hash(m, o, &data, n_train), "network, data or training "
                                          "options", err)) ||
                      (st = dse_model_set_dist(m, o->dist, o->reduce, o->batch, err))))
        goto done;
    if (m->net.layers[m->loss].in_c != data.classes && m->net.layers[m->loss].in_c < data.classes) {
        st = dse_err_set(err, DSE_ERR_SHAPE, NULL, 0, "the network has %d outputs; %s has %d classes",
                         m->net.layers[m->loss].in_c, data.name, data.classes);
        goto done;
    }
    m->cx.conv_force = o->conv_algo; /* the CPU's: on a device cuDNN's find chooses */
    struct pin_count pinned = { .found = 0, .shared = 0 };
    if ((st = choices_load(m, o, &pinned, err))) goto done;
    char fp32[600];
    if (o->note && dse_model_bf16_fp32(m, fp32, sizeof fp32)) o->note(o->progress_arg, DSE_NOTE_BF16_FP32, fp32);
    x = dse_model_host_alloc(m, sizeof *x * (size_t)dse_tensor_count(&m->input), &x_pinned); /* pinned on a GPU */
    labels = malloc(sizeof *labels * (size_t)o->batch);
    /* a rank reads every batch whole (the same order, augmentation and draws as one
     * process) into xg and trains on its share */
    const int64_t img = dse_tensor_count(&m->input) / share;
    if (ranks > 1) xg = malloc(sizeof *xg * (size_t)(img * o->batch));
    if (!x || !labels || (ranks > 1 && !xg)) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }

    struct dse_ckpt_meta meta = { .seed = o->seed, .norm = data.norm, .classes = data.classes,
                                  .class_names = data.pack ? (const char(*)[64])data.pack->class_names
                                               : data.folder.n ? (const char(*)[64])data.folder.class_names
                                               : dse_data_class_names(data.name, data.classes),
                                  .eval_center = data.eval_center };
    dse_strlcpy(meta.data, o->data, (int)sizeof meta.data);
    int start = 0;
    int64_t it = 0;
    const int ipe = n_train / o->batch; /* full batches; the last partial batch is dropped */
    struct dse_ckpt_info from; /* a checkpoint within an epoch: its partial tally */
    memset(&from, 0, sizeof from);
    if (o->resume) {
        if ((st = dse_checkpoint_load(m, o->resume, &start, &it, err)) ||
            (st = dse_checkpoint_info(o->resume, &from, err)))
            goto done;
        free(from.class_names);
        if ((st = resume_check(o, start, it, from.partial.steps, ipe, n_train, err))) goto done;
    }
    if (from.partial.steps > 0 && m->gpu) {
        st = dse_err_set(err, DSE_ERR_UNSUPPORTED, o->resume, 0, "a checkpoint within an epoch resumes on the CPU "
                         "only for now; resume it without --device, or from the last epoch's checkpoint");
        goto done;
    }
    if (ranks > 1) { /* the setup's end: every rank's outcome is every rank's; then all start
                        from rank 0's parameters (initialization runs libm, which may differ
                        between nodes) */
        setup_agreed = 1;
        if ((st = dse_dist_agree(o->dist, DSE_OK, err))) goto done; /* another rank's setup error */
        steps_begun = 1;
        if ((st = dse_model_dist_bcast(m, err))) goto done;
    }
    const int64_t iters = (int64_t)ipe * o->epochs;
    double t_train = 0, t0 = now_s();
    int64_t imgs = 0;
    const int stop = o->stop_after_epoch > 0 ? o->stop_after_epoch : o->epochs;
    strcpy(r->status, "done");
    double t_ckpt = now_s(); /* the last checkpoint, for ckpt_every_s */
    double t_said = t_ckpt;  /* progress's last call, for progress_every_s */
    for (int e = start; e < stop; e++) {
        double te = now_s(), loss_sum = 0;
        int count, i0 = 0;
        /* Steps are queued (a device runs behind the host, issue #20 item 3): the loss,
         * divergence and clipping add up in the model's tally, read at progress points and
         * at the end of the epoch, and after every step on the CPU, where reading is free
         * and a diverged run stops at once. */
        struct dse_step_tally tl;
        const int64_t clipped0 = r->clipped_steps;
        if ((st = dse_model_tally(m, &tl, 1, err))) goto done;
        dse_loader_start_epoch(ltrain, e);
        if (e == start && from.partial.steps > 0) { /* resumed within this epoch: its tally so far, and
                                                       the loader where it was (the same batches read again) */
            i0 = (int)from.partial.steps;
            m->tally.loss_sum = from.partial.loss_sum, m->tally.steps = from.partial.steps;
            m->tally.clipped = from.partial.clipped;
            for (int i = 0; i < i0; i++)
                if (!dse_loader_next(ltrain, ranks > 1 ? xg : x, labels, &count)) break;
        }
        for (int i = i0; i < ipe; i++, it++) {
            float *xb = dse_model_batch_buffer(m, err); /* on a device: free once its last batch uploaded */
            if (!xb) {
                st = err && err->code ? err->code : DSE_ERR_NOMEM;
                goto done;
            }
            if (!dse_loader_next(ltrain, ranks > 1 ? xg : xb, labels, &count)) break;
            if (ranks > 1) memcpy(xb, xg + first * img, sizeof *xb * (size_t)(share * img));
            if (want_cancel(o)) {
                if ((st = dse_model_tally(m, &tl, 0, err))) goto done;
                r->clipped_steps = clipped0 + tl.clipped;
                strcpy(r->status, "cancelled");
                goto finish;
            }
            float lr = dse_train_lr(o, it, iters, ipe);
            if ((st = dse_model_step(m, xb, labels + first, lr, o->momentum, o->weight_decay, o->clip_norm, err)))
                goto done;
            imgs += o->batch;
            const int report = o->progress && (i % 10 == 0 || i == ipe - 1 ||
                                               (o->progress_every_s > 0 && now_s() - t_said >= o->progress_every_s));
            if (m->gpu && !report) continue; /* the CPU reads it after every step: free, and a divergence stops at once */
            if ((st = dse_model_tally(m, &tl, 0, err))) goto done;
            r->clipped_steps = clipped0 + tl.clipped;
            if (diverged(r, e, &tl)) goto finish;
            if (i + 1 < ipe && !m->gpu && want_part(o, i + 1, t_ckpt)) { /* within the epoch (issue #18 item 2) */
                meta.partial = (struct dse_ckpt_partial){ .loss_sum = tl.loss_sum, .steps = tl.steps,
                                                          .clipped = tl.clipped };
                if (rank == 0 && (st = part_save(m, o, e, it + 1, &meta, err))) goto done;
                meta.partial.steps = 0;
                t_ckpt = now_s();
            }
            if (report) {
                double el = t_train + now_s() - te;
                struct dse_train_progress p = { .epoch = e, .epochs = o->epochs, .iter = i + 1, .iters = ipe,
                                                .loss = (float)(tl.loss_sum / (double)(tl.steps ? tl.steps : 1)),
                                                .lr = lr, .img_per_s = imgs / (el > 0 ? el : 1e-9) };
                p.eta_s = (double)(iters - it - 1) * o->batch / (p.img_per_s > 0 ? p.img_per_s : 1);
                o->progress(o->progress_arg, &p);
                t_said = now_s();
            }
        }
        if ((st = dse_model_tally(m, &tl, 0, err))) goto done; /* waits for the epoch's steps */
        r->clipped_steps = clipped0 + tl.clipped;
        loss_sum = tl.loss_sum;
        if (diverged(r, e, &tl)) goto finish;
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
        if ((st = choices_save(m, o, 0, &pinned, err))) goto done; /* before the epoch is reported */
        if ((st = evaluate(m, ltest, x, labels, er, NULL, NULL, err))) goto done;
        er->seconds = now_s() - te;
        r->epochs_done = e + 1;
        r->loss = er->test_loss, r->top1 = er->top1, r->top5 = er->top5;
        if (o->progress) {
            struct dse_train_progress p = { .epoch = e, .epochs = o->epochs, .iter = ipe, .iters = ipe,
                                            .loss = er->train_loss, .img_per_s = er->img_per_s, .done = 1,
                                            .ep = *er };
            o->progress(o->progress_arg, &p);
        }
        if (o->checkpoint_dir && rank == 0) {
            char path[4096];
            snprintf(path, sizeof path, "%s/epoch-%d.ckpt", o->checkpoint_dir, e + 1);
            if ((st = choices_save(m, o, 0, &pinned, err)) || (st = dse_fs_mkdirs(o->checkpoint_dir, err)) ||
                (st = dse_checkpoint_save(m, e + 1, it, &meta, path, err)))
                goto done;
            snprintf(path, sizeof path, "%s/epoch-%d.part.ckpt", o->checkpoint_dir, e + 1);
            unlink(path); /* the epoch's checkpoint supersedes its partial one */
            t_ckpt = now_s();
        }
    }
    if (stop < o->epochs && !strcmp(r->status, "done")) strcpy(r->status, "paused");
finish:
    /* A cancelled run stops at once and writes nothing: its lease may be another worker's
     * now, whose choices the file then holds. */
    if (strcmp(r->status, "cancelled") && (st = choices_save(m, o, 1, &pinned, err))) goto done;
    r->seconds = now_s() - t0;
    r->img_per_s = t_train > 0 ? (double)imgs / t_train : 0;
    r->engine_bytes = dse_model_bytes(m);
    st = DSE_OK;
done:
    if (ranks > 1 && !setup_agreed) st = dse_dist_agree(o->dist, st, err); /* failed in the setup */
    else if (ranks > 1 && st && steps_begun) r->dist_broken = 1; /* the others may wait for it in a sum */
    free(xg);
    return run_end(&data, o->data, m, x, x_pinned, labels, st, err);
}

/* ---- evaluating a checkpoint ---------------------------------------------------------- */

enum dse_status dse_eval_run(const struct dse_net *net, const struct dse_train_opts *o, const char *checkpoint,
                             struct dse_eval_result *r, struct dse_err *err) {
    struct run_data data;
    struct dse_model *m = NULL;
    struct dse_epoch_result er;
    float *x = NULL;
    int *labels = NULL, next, x_pinned = 0;
    int64_t it;
    enum dse_status st;
    memset(r, 0, sizeof *r);
    memset(&data, 0, sizeof data);
    if (o->batch < 1 || o->threads < 1)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "batch and threads must be >= 1");
    struct dse_ckpt_info info;
    struct dse_train_opts eo = *o;
    if ((st = dse_checkpoint_info(checkpoint, &info, err))) return st;
    free(info.class_names);
    if (info.eval_center > 0) eo.eval_center = info.eval_center; /* as training evaluated */
    if (info.norm.c) eo.norm = &info.norm; /* as training normalized, whatever part of the data it read */
    if ((st = run_data_open(net, &eo, eo.batch, &data, err))) goto done;
    struct dse_model_opts mo = { .batch = o->batch, .threads = o->threads, .seed = o->seed, .init = o->init,
                                 .init_std = o->init_std, .inference = 1 };
    if ((st = dse_model_new_on(net, &mo, &o->dev, &m, err))) goto done;
    m->grad_hook = o->grad_hook, m->grad_hook_arg = o->grad_hook_arg;
    m->cx.conv_force = o->conv_algo;
    if ((st = dse_checkpoint_load(m, checkpoint, &next, &it, err))) goto done;
    const int k = m->nodes[m->loss].in[0]->c;
    r->classes = k;
    r->class_n = calloc((size_t)k, sizeof *r->class_n);
    r->class_hits = calloc((size_t)k, sizeof *r->class_hits);
    x = dse_model_host_alloc(m, sizeof *x * (size_t)dse_tensor_count(&m->input), &x_pinned);
    labels = malloc(sizeof *labels * (size_t)o->batch);
    if (!r->class_n || !r->class_hits || !x || !labels) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    memset(&er, 0, sizeof er);
    if ((st = evaluate(m, data.ltest, x, labels, &er, r->class_n, r->class_hits, err))) goto done;
    r->loss = er.test_loss, r->top1 = er.top1, r->top5 = er.top5, r->unpredicted = er.unpredicted;
    for (int c = 0; c < k; c++) r->images += r->class_n[c];
done:
    if (st) dse_eval_result_free(r);
    return run_end(&data, o->data, m, x, x_pinned, labels, st, err);
}

void dse_eval_result_free(struct dse_eval_result *r) {
    if (!r) return;
    free(r->class_n), free(r->class_hits);
    r->class_n = r->class_hits = NULL;
}
