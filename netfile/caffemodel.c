/* caffemodel.c: Caffe's binary NetParameter (.caffemodel), written and read (netfile.h;
 * docs/export.md). Field numbers are caffe.proto's, named beside each use. Only what
 * carries weights is written: for each weighted layer its name, type and blobs, which is
 * all Caffe's Net::CopyTrainedLayersFrom reads (it matches layers by name). */
#include "netfile/netfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/pb.h"
#include "engine/model.h"

/* caffe.proto field numbers */
enum {
    NET_NAME = 1, NET_LAYERS_V1 = 2, NET_LAYER = 100,
    LAYER_NAME = 1, LAYER_TYPE = 2, LAYER_BLOBS = 7,
    V1_NAME = 4, V1_BLOBS = 6,
    BLOB_NUM = 1, BLOB_CHANNELS = 2, BLOB_HEIGHT = 3, BLOB_WIDTH = 4, BLOB_DATA = 5, BLOB_SHAPE = 7,
    SHAPE_DIM = 1,
};

#define MAX_BLOBS 3 /* BatchNorm's mean, variance, factor */
#define SCALE_SUFFIX "/scale" /* an affine batch norm's gamma and beta: dse_prototxt_write's name */

/* One Caffe layer's blobs, in Caffe's order, pointing at the model's tensors. */
struct cblobs {
    char        name[DSE_NAME_MAX + 8];
    const char *type;
    int         n;
    float      *data[MAX_BLOBS];
    int64_t     count[MAX_BLOBS];
    int64_t     dims[MAX_BLOBS][4];
    int         nd[MAX_BLOBS];
};

static void blob(struct cblobs *c, float *data, int nd, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    const int64_t d[4] = { d0, d1, d2, d3 };
    int k = c->n++;
    c->data[k] = data, c->nd[k] = nd, c->count[k] = 1;
    for (int i = 0; i < nd; i++) c->dims[k][i] = d[i], c->count[k] *= d[i];
}

/* The Caffe layers holding layer i's weights: 0, 1 or (an affine batch norm) 2. The
 * batch norm factor blob points at `one` (the write) or a scratch float (the read). */
static int caffe_layers(const struct dse_model *m, int i, struct cblobs out[2], float *one) {
    const struct dse_layer *l = &m->net.layers[i];
    const struct dse_node *nd = &m->nodes[i];
    memset(out, 0, 2 * sizeof *out);
    snprintf(out[0].name, sizeof out[0].name, "%s", l->name);
    switch (l->type) {
    case DSE_LAYER_CONV:
        out[0].type = dse_layer_caffe_type(DSE_LAYER_CONV);
        blob(&out[0], nd->weight->data, 4, nd->weight->n, nd->weight->c, nd->weight->h, nd->weight->w);
        if (nd->bias) blob(&out[0], nd->bias->data, 1, nd->bias->c, 0, 0, 0);
        return 1;
    case DSE_LAYER_FC:
        out[0].type = dse_layer_caffe_type(DSE_LAYER_FC);
        blob(&out[0], nd->weight->data, 2, nd->weight->n, (int64_t)nd->weight->c * nd->weight->h * nd->weight->w, 0, 0);
        if (nd->bias) blob(&out[0], nd->bias->data, 1, nd->bias->c, 0, 0, 0);
        return 1;
    case DSE_LAYER_BATCHNORM:
        out[0].type = dse_layer_caffe_type(DSE_LAYER_BATCHNORM);
        blob(&out[0], nd->run_mean->data, 1, nd->run_mean->c, 0, 0, 0);
        blob(&out[0], nd->run_var->data, 1, nd->run_var->c, 0, 0, 0);
        blob(&out[0], one, 1, 1, 0, 0, 0);
        if (!nd->weight) return 1;
        snprintf(out[1].name, sizeof out[1].name, "%s" SCALE_SUFFIX, l->name);
        out[1].type = dse_layer_caffe_type(DSE_LAYER_SCALE);
        blob(&out[1], nd->weight->data, 1, nd->weight->c, 0, 0, 0);
        if (nd->bias) blob(&out[1], nd->bias->data, 1, nd->bias->c, 0, 0, 0);
        return 2;
    case DSE_LAYER_SCALE:
        out[0].type = dse_layer_caffe_type(DSE_LAYER_SCALE);
        blob(&out[0], nd->weight->data, 1, nd->weight->c, 0, 0, 0);
        if (nd->bias) blob(&out[0], nd->bias->data, 1, nd->bias->c, 0, 0, 0);
        return 1;
    default:
        return 0;
    }
}

enum dse_status dse_caffemodel_save(const struct dse_model *m, const char *path, struct dse_err *err) {
    struct dse_pb pb;
    struct cblobs cl[2];
    float one = 1.0f;
    if (m->device.kind != DSE_DEVICE_CPU)
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "Caffe export reads a CPU model's weights");
    dse_pb_init(&pb);
    dse_pb_string(&pb, NET_NAME, m->net.name);
    for (int i = 0; i < m->net.n_layers; i++) {
        int n = caffe_layers(m, i, cl, &one);
        for (int j = 0; j < n; j++) {
            dse_pb_begin(&pb, NET_LAYER);
            dse_pb_string(&pb, LAYER_NAME, cl[j].name);
            dse_pb_string(&pb, LAYER_TYPE, cl[j].type);
            for (int k = 0; k < cl[j].n; k++) {
                dse_pb_begin(&pb, LAYER_BLOBS);
                dse_pb_begin(&pb, BLOB_SHAPE);
                dse_pb_packed_varints(&pb, SHAPE_DIM, cl[j].dims[k], cl[j].nd[k]);
                dse_pb_end(&pb);
                dse_pb_packed_floats(&pb, BLOB_DATA, cl[j].data[k], (size_t)cl[j].count[k]);
                dse_pb_end(&pb);
            }
            dse_pb_end(&pb);
        }
    }
    enum dse_status st = dse_pb_finish(&pb, err);
    if (!st) st = dse_fs_write_atomic(path, pb.buf, pb.len, err);
    dse_pb_free(&pb);
    return st;
}

/* ---- reading ------------------------------------------------------------------------ */

/* A layer of the file: its name and its blobs' bytes. */
struct src_layer {
    char                 name[DSE_NAME_MAX + 8];
    int                  n_blobs;
    struct dse_pb_field  blobs[8];
    int                  used;
};

static enum dse_status bad(struct dse_err *err, const char *path, const char *what) {
    return dse_err_set(err, DSE_ERR_IO, path, 0, "not a Caffe NetParameter (.caffemodel): %s", what);
}

/* A varint at *p, before end: its value, *p past it; -1 if it does not end there. */
static int varint_at(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    *v = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        const uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return 0;
    }
    return -1;
}

/* The refusal of a file whose field at p (before end) does not parse: where that field is
 * layer n (from 1) and its length runs past the end, as in a truncated file, the layer is
 * named (its name field, if the bytes left hold it, else the layer before it, prev) with the
 * bytes it needs and the bytes left (issue #34); else the bytes do not parse. */
static enum dse_status cut_short(const uint8_t *p, const uint8_t *end, int n, const char *prev, const char *path,
                                 struct dse_err *err) {
    uint64_t tag, len;
    if (varint_at(&p, end, &tag) || varint_at(&p, end, &len) || (tag & 7) != DSE_PB_LEN ||
        ((tag >> 3) != NET_LAYER && (tag >> 3) != NET_LAYERS_V1) || len <= (uint64_t)(end - p))
        return bad(err, path, "the bytes do not parse as protobuf");
    const int name_f = (tag >> 3) == NET_LAYER ? LAYER_NAME : V1_NAME;
    struct dse_pb_reader r;
    struct dse_pb_field f;
    char name[DSE_NAME_MAX + 8] = "";
    dse_pb_reader_init(&r, p, (size_t)(end - p));
    while (!name[0] && dse_pb_next(&r, &f) == 1)
        if (f.field == name_f && f.wire == DSE_PB_LEN)
            snprintf(name, sizeof name, "%.*s", (int)(f.len < sizeof name ? f.len : sizeof name - 1),
                     (const char *)f.data);
    char which[2 * sizeof name + 64];
    if (name[0]) snprintf(which, sizeof which, "layer '%s' (layer %d of the file)", name, n);
    else if (n > 1) snprintf(which, sizeof which, "layer %d of the file, after '%s',", n, prev);
    else snprintf(which, sizeof which, "the file's first layer");
    return dse_err_set(err, DSE_ERR_IO, path, 0, "not a Caffe NetParameter (.caffemodel): %s is cut short: its "
                       "message needs %llu bytes, the file holds %zu more (a truncated file?)", which,
                       (unsigned long long)len, (size_t)(end - p));
}

static enum dse_status read_layers(const uint8_t *data, size_t len, const char *path, struct src_layer **out, int *n,
                                   struct dse_err *err) {
    struct dse_pb_reader r;
    struct dse_pb_field f;
    int got, cap = 0;
    *out = NULL, *n = 0;
    const uint8_t *at = data; /* the field being read */
    dse_pb_reader_init(&r, data, len);
    while ((got = dse_pb_next(&r, &f)) == 1) {
        at = r.p;
        if ((f.field != NET_LAYER && f.field != NET_LAYERS_V1) || f.wire != DSE_PB_LEN) continue;
        const int name_f = f.field == NET_LAYER ? LAYER_NAME : V1_NAME;
        const int blobs_f = f.field == NET_LAYER ? LAYER_BLOBS : V1_BLOBS;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            struct src_layer *p = realloc(*out, sizeof **out * (size_t)cap);
            if (!p) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            *out = p;
        }
        struct src_layer *s = &(*out)[(*n)++];
        memset(s, 0, sizeof *s);
        struct dse_pb_reader lr;
        struct dse_pb_field g;
        dse_pb_reader_init(&lr, f.data, f.len);
        while ((got = dse_pb_next(&lr, &g)) == 1) {
            if (g.field == name_f && g.wire == DSE_PB_LEN) {
                snprintf(s->name, sizeof s->name, "%.*s", (int)(g.len < sizeof s->name ? g.len : sizeof s->name - 1),
                         (const char *)g.data);
            } else if (g.field == blobs_f && g.wire == DSE_PB_LEN) {
                if (s->n_blobs == DSE_ARRAY_LEN(s->blobs)) return bad(err, path, "a layer with more than 8 blobs");
                s->blobs[s->n_blobs++] = g;
            }
        }
        if (got < 0) return bad(err, path, "a layer's bytes do not parse");
    }
    if (got < 0) return cut_short(at, data + len, *n + 1, *n ? (*out)[*n - 1].name : "", path, err);
    return DSE_OK;
}

/* Blob b into dst (count floats, shape dims[nd]): its shape (or legacy num, channels,
 * height, width, compared with leading 1s allowed) must be dims. */
static enum dse_status read_blob(const struct dse_pb_field *b, const char *path, const char *layer, int k,
                                 float *dst, int64_t count, const int64_t *dims, int nd, struct dse_err *err) {
    struct dse_pb_reader r;
    struct dse_pb_field f;
    int64_t shape[8], legacy[4] = { 0, 0, 0, 0 };
    size_t n_shape = 0, n_data = 0;
    int has_shape = 0, has_legacy = 0, got;
    dse_pb_reader_init(&r, b->data, b->len);
    while ((got = dse_pb_next(&r, &f)) == 1) {
        if (f.field == BLOB_SHAPE && f.wire == DSE_PB_LEN) {
            struct dse_pb_reader sr;
            struct dse_pb_field d;
            has_shape = 1;
            dse_pb_reader_init(&sr, f.data, f.len);
            while ((got = dse_pb_next(&sr, &d)) == 1)
                if (d.field == SHAPE_DIM && dse_pb_varints(&d, shape, 8, &n_shape))
                    return bad(err, path, "a blob shape over 8 dims");
            if (got < 0) break;
        } else if (f.field >= BLOB_NUM && f.field <= BLOB_WIDTH && f.wire == DSE_PB_VARINT) {
            legacy[f.field - BLOB_NUM] = (int64_t)f.v, has_legacy = 1;
        }
    }
    if (got < 0) return bad(err, path, "a blob's bytes do not parse");
    char want[96] = "", have[96] = "";
    for (int i = 0; i < nd; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? "x" : "", (long long)dims[i]);
    int same = 1;
    if (has_shape) {
        for (size_t i = 0; i < n_shape; i++)
            snprintf(have + strlen(have), sizeof have - strlen(have), "%s%lld", i ? "x" : "", (long long)shape[i]);
        same = (int)n_shape == nd;
        for (int i = 0; i < nd && same; i++) same = shape[i] == dims[i];
    } else if (has_legacy) {
        /* Caffe's 4-d blobs: a [K] bias is 1x1x1xK, an fc weight 1x1xKxD */
        snprintf(have, sizeof have, "%lldx%lldx%lldx%lld", (long long)legacy[0], (long long)legacy[1],
                 (long long)legacy[2], (long long)legacy[3]);
        for (int i = 0; i < 4 - nd && same; i++) same = legacy[i] == 1;
        for (int i = 0; i < nd && same; i++) same = legacy[4 - nd + i] == dims[i];
    } else {
        snprintf(have, sizeof have, "no shape");
        same = 0;
    }
    if (!same)
        return dse_err_set(err, DSE_ERR_CONFIG, path, 0, "layer '%s' blob %d is %s; the network needs %s", layer, k,
                           have, want);
    /* the shape fits: now the values (packed, or one field each) */
    dse_pb_reader_init(&r, b->data, b->len);
    while (dse_pb_next(&r, &f) == 1)
        if (f.field == BLOB_DATA && dse_pb_floats(&f, dst, (size_t)count, &n_data))
            return dse_err_set(err, DSE_ERR_IO, path, 0, "layer '%s' blob %d holds more values than its shape %s",
                               layer, k, want);
    if ((int64_t)n_data != count)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "layer '%s' blob %d holds %zu values; its shape %s needs %lld",
                           layer, k, n_data, want, (long long)count);
    return DSE_OK;
}

enum dse_status dse_caffemodel_load(struct dse_model *m, const char *path, int *skipped, struct dse_err *err) {
    char *data = NULL;
    size_t len = 0;
    struct src_layer *src = NULL;
    int n_src = 0;
    enum dse_status st;
    if (m->device.kind != DSE_DEVICE_CPU)
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "Caffe import writes a CPU model's weights");
    if ((st = dse_fs_read(path, &data, &len, err))) return st;
    if (!(st = read_layers((const uint8_t *)data, len, path, &src, &n_src, err)) && n_src == 0)
        st = bad(err, path, "it holds no layers");
    for (int i = 0; i < m->net.n_layers && !st; i++) {
        struct cblobs cl[2];
        float factor = 0.0f;
        int n = caffe_layers(m, i, cl, &factor);
        for (int j = 0; j < n && !st; j++) {
            int s = 0;
            while (s < n_src && strcmp(src[s].name, cl[j].name)) s++;
            if (s == n_src) {
                st = dse_err_set(err, DSE_ERR_CONFIG, path, 0, "layer '%s' (%s) of network '%s' is not in the file",
                                 cl[j].name, cl[j].type, m->net.name);
                break;
            }
            src[s].used = 1;
            if (src[s].n_blobs != cl[j].n) {
                st = dse_err_set(err, DSE_ERR_CONFIG, path, 0, "layer '%s' has %d blobs; the network's %s needs %d",
                                 cl[j].name, src[s].n_blobs, cl[j].type, cl[j].n);
                break;
            }
            for (int k = 0; k < cl[j].n && !st; k++)
                st = read_blob(&src[s].blobs[k], path, cl[j].name, k, cl[j].data[k], cl[j].count[k], cl[j].dims[k],
                               cl[j].nd[k], err);
            if (!st && m->net.layers[i].type == DSE_LAYER_BATCHNORM && j == 0) {
                /* Caffe stores the running sums times a factor: mean = blob0 / factor */
                const float scale = factor == 0.0f ? 0.0f : 1.0f / factor;
                struct dse_node *nd = &m->nodes[i];
                for (int c = 0; c < nd->run_mean->c; c++) nd->run_mean->data[c] *= scale, nd->run_var->data[c] *= scale;
            }
        }
    }
    if (!st && skipped) {
        *skipped = 0;
        for (int s = 0; s < n_src; s++) *skipped += !src[s].used;
    }
    free(src);
    free(data);
    return st;
}
