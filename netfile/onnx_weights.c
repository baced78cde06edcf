/* onnx_weights.c: an ONNX model's initializers into a dse model's weights (netfile.h; the
 * "Import" section of docs/onnx.md), what `dse import MODEL.onnx` writes as a checkpoint
 * (issue #34 item 3). onnx_read.c reads the graph and says where each layer's tensors are
 * (dse_onnx_parse_sources); this file decodes their floats and lays them out as the engine
 * keeps them, as caffemodel.c does for Caffe's blobs. */
#include "netfile/netfile.h"

#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/pb.h"
#include "data/data.h"
#include "engine/model.h"

/* onnx.proto's TensorProto field numbers, as onnx.c and onnx_read.c name them */
enum { TENSOR_TYPE = 2, TENSOR_FLOAT_DATA = 4, TENSOR_NAME = 8, TENSOR_RAW = 9, TENSOR_DATA_LOCATION = 14 };
enum { MODEL_METADATA = 14, ENTRY_KEY = 1, ENTRY_VALUE = 2 }; /* ModelProto, StringStringEntryProto */
enum { ELEM_FLOAT = 1 };   /* TensorProto.DataType */
enum { LOCATION_EXTERNAL = 1 };

enum dse_status dse_onnx_tensor_floats(const struct dse_onnx_tensor *t, float *out, int64_t n, const char *path,
                                       struct dse_err *err) {
    struct dse_pb_reader rr;
    struct dse_pb_field f;
    char name[DSE_NAME_MAX] = "";
    int type = 0, external = 0, raw = 0;
    size_t got = 0;
    dse_pb_reader_init(&rr, t->msg, t->len);
    while (dse_pb_next(&rr, &f) == 1) {
        if (f.field == TENSOR_NAME && f.wire == DSE_PB_LEN)
            snprintf(name, sizeof name, "%.*s", (int)(f.len < sizeof name ? f.len : sizeof name - 1),
                     (const char *)f.data);
        if (f.field == TENSOR_TYPE && f.wire == DSE_PB_VARINT) type = (int)f.v;
        if (f.field == TENSOR_DATA_LOCATION && f.wire == DSE_PB_VARINT) external = f.v == LOCATION_EXTERNAL;
    }
    if (external)
        return dse_err_set(err, DSE_ERR_CONFIG, path, 0, "tensor '%s' keeps its values in an external file; dse "
                           "imports a model whose weights are in the .onnx itself", name);
    if (type != ELEM_FLOAT)
        return dse_err_set(err, DSE_ERR_CONFIG, path, 0, "tensor '%s' is of data type %d; dse imports float32 "
                           "(type 1) weights", name, type);
    dse_pb_reader_init(&rr, t->msg, t->len);
    while (dse_pb_next(&rr, &f) == 1) {
        if (f.field == TENSOR_RAW && f.wire == DSE_PB_LEN) { /* little-endian float32, once */
            if (raw++ || got || f.len != (size_t)n * 4) {
                got = SIZE_MAX;
                break;
            }
            for (size_t i = 0; i < f.len / 4; i++) {
                uint32_t u = (uint32_t)f.data[4 * i] | (uint32_t)f.data[4 * i + 1] << 8 |
                             (uint32_t)f.data[4 * i + 2] << 16 | (uint32_t)f.data[4 * i + 3] << 24;
                memcpy(&out[i], &u, sizeof u);
            }
            got = (size_t)n;
        } else if (f.field == TENSOR_FLOAT_DATA && (raw || dse_pb_floats(&f, out, (size_t)n, &got))) {
            got = SIZE_MAX;
            break;
        }
    }
    if (got != (size_t)n)
        return dse_err_set(err, DSE_ERR_CONFIG, path, 0, "tensor '%s' does not hold %lld float values once (in "
                           "raw_data or float_data)", name, (long long)n);
    return DSE_OK;
}

/* One layer's values: src's tensors into the engine's (dims checked by the reader, counts
 * here again). */
static enum dse_status layer_values(struct dse_node *nd, const struct dse_layer *l, const struct dse_onnx_src *s,
                                    const char *path, struct dse_err *err) {
    struct dse_tensor *dst[4] = { nd->weight, nd->bias, NULL, NULL };
    if (l->type == DSE_LAYER_BATCHNORM) dst[2] = nd->run_mean, dst[3] = nd->run_var;
    for (int k = 0; k < 4; k++) {
        if (!dst[k]) continue;
        const int64_t n = (int64_t)dst[k]->n * dst[k]->c * dst[k]->h * dst[k]->w;
        if (!s->t[k].len) { /* a conv or fc without a bias in the file: dse's has one, zero */
            if (k != 1 || l->type == DSE_LAYER_BATCHNORM)
                return dse_err_layer(err, DSE_ERR_CONFIG, path, 0, l->name, dse_layer_type_str(l->type),
                                     "the model gives no tensor %d of it", k);
            memset(dst[k]->data, 0, sizeof *dst[k]->data * (size_t)n);
            continue;
        }
        enum dse_status st = dse_onnx_tensor_floats(&s->t[k], dst[k]->data, n, path, err);
        if (st) return st;
    }
    if (l->type == DSE_LAYER_FC) {
        float *w = nd->weight->data;
        const int64_t rows = nd->weight->n, cols = (int64_t)nd->weight->c * nd->weight->h * nd->weight->w;
        if (s->k_by_n) { /* [K, N] -> dse's [N, K] */
            float *t = malloc(sizeof *t * (size_t)(rows * cols));
            if (!t) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            for (int64_t k = 0; k < cols; k++)
                for (int64_t o = 0; o < rows; o++) t[o * cols + k] = w[k * rows + o];
            memcpy(w, t, sizeof *t * (size_t)(rows * cols));
            free(t);
        }
        for (int64_t i = 0; s->alpha != 1.0f && i < rows * cols; i++) w[i] *= s->alpha;
        for (int64_t i = 0; nd->bias && s->beta != 1.0f && i < rows; i++) nd->bias->data[i] *= s->beta;
    }
    return DSE_OK;
}

/* The input normalization: Sub t and Div t in order fold into x' = (x - mean) / std; each t
 * one value or one per channel. */
static enum dse_status norm_of(const struct dse_onnx_sources *src, int c, struct dse_data_norm *norm,
                               const char *path, struct dse_err *err) {
    *norm = (struct dse_data_norm){ .c = src->n_norm ? c : 0 };
    if (!src->n_norm) return DSE_OK;
    if (c > DSE_DATA_MAX_CHANNELS)
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, path, 0, "the input's Sub and Div normalize %d channels; a dse "
                           "checkpoint records at most %d", c, DSE_DATA_MAX_CHANNELS);
    for (int i = 0; i < c; i++) norm->mean[i] = 0.0f, norm->std[i] = 1.0f;
    for (int k = 0; k < src->n_norm; k++) {
        float v[DSE_DATA_MAX_CHANNELS];
        enum dse_status st = dse_onnx_tensor_floats(&src->norm[k], v, c, path, err);
        if (st && c > 1 && !dse_onnx_tensor_floats(&src->norm[k], v, 1, path, err)) {
            for (int i = 1; i < c; i++) v[i] = v[0];
            st = DSE_OK;
        }
        if (st) return st;
        for (int i = 0; i < c; i++) {
            if (src->norm_div[k]) norm->std[i] *= v[i];       /* (x - m) / s / d = (x - m) / (s d) */
            else norm->mean[i] += v[i] * norm->std[i];        /* (x - m) / s - t = (x - (m + t s)) / s */
        }
    }
    for (int i = 0; i < norm->c; i++)
        if (!(norm->std[i] != 0.0f))
            return dse_err_set(err, DSE_ERR_CONFIG, path, 0, "the input's Div divides channel %d by %g", i,
                               (double)norm->std[i]);
    return DSE_OK;
}

enum dse_status dse_onnx_weights_load(struct dse_model *m, const char *path, const struct dse_input_shape *ov,
                                      struct dse_data_norm *norm, int *skipped, int *refit, struct dse_err *err) {
    char *data = NULL;
    size_t len = 0;
    struct dse_net net;
    struct dse_onnx_sources src;
    enum dse_status st;
    if (m->device.kind != DSE_DEVICE_CPU)
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "ONNX import writes a CPU model's weights");
    if ((st = dse_fs_read(path, &data, &len, err))) return st;
    if ((st = dse_onnx_parse_sources(data, len, path, ov, &net, &src, err))) {
        free(data);
        return st;
    }
    int used = 0;
    const int classifier = dse_net_classifier(&m->net);
    if (refit) *refit = 0;
    for (int i = 0; i < m->net.n_layers && !st; i++) {
        const struct dse_layer *l = &m->net.layers[i];
        struct dse_node *nd = &m->nodes[i];
        if (!nd->weight && !nd->run_mean) continue;
        const int j = dse_net_find(&net, l->name);
        if (j < 0 || net.layers[j].type != l->type) {
            st = dse_err_layer(err, DSE_ERR_CONFIG, path, 0, l->name, dse_layer_type_str(l->type),
                               "the model has no %s of this name", dse_layer_type_str(l->type));
            break;
        }
        used++;
        const struct dse_layer *o = &net.layers[j];
        /* an fc's inputs counted, not their shape: the model's after a Flatten (C*H*W by 1x1), the
         * network's C by H by W where the Flatten is left out; the values in the same CHW order */
        const int fc = l->type == DSE_LAYER_FC;
        const int64_t o_in = fc ? (int64_t)o->in_c * o->in_h * o->in_w : o->in_c;
        const int64_t l_in = fc ? (int64_t)l->in_c * l->in_h * l->in_w : l->in_c;
        if (o->num_output != l->num_output || o_in != l_in) {
            /* only the classifier fitted to other classes (--classes) keeps its initialization */
            if (!refit || !ov || !ov->classes || i != classifier) {
                st = dse_err_layer(err, DSE_ERR_SHAPE, path, 0, l->name, dse_layer_type_str(l->type), "the model's "
                                   "takes %lld inputs and gives %d outputs; this network's %lld and %d",
                                   (long long)o_in, o->num_output, (long long)l_in, l->num_output);
                break;
            }
            ++*refit;
            continue;
        }
        st = layer_values(nd, l, &src.layer[j], path, err);
    }
    if (!st && norm) st = norm_of(&src, net.in_c, norm, path, err);
    if (!st && skipped) {
        int learned = 0;
        for (int j = 0; j < net.n_layers; j++) learned += src.layer[j].t[0].len != 0;
        *skipped = learned - used;
    }
    dse_onnx_sources_free(&src);
    dse_net_deinit(&net);
    free(data);
    return st;
}

enum dse_status dse_onnx_metadata(const char *path, const char *key, char **value, struct dse_err *err) {
    char *data = NULL;
    size_t len = 0;
    struct dse_pb_reader rr, er;
    struct dse_pb_field f, g;
    int got;
    *value = NULL;
    enum dse_status st = dse_fs_read(path, &data, &len, err);
    if (st) return st;
    dse_pb_reader_init(&rr, data, len);
    while ((got = dse_pb_next(&rr, &f)) == 1 && !*value) {
        if (f.field != MODEL_METADATA || f.wire != DSE_PB_LEN) continue;
        struct dse_pb_field k = { 0 }, v = { 0 };
        dse_pb_reader_init(&er, f.data, f.len);
        while (dse_pb_next(&er, &g) == 1) {
            if (g.field == ENTRY_KEY && g.wire == DSE_PB_LEN) k = g;
            if (g.field == ENTRY_VALUE && g.wire == DSE_PB_LEN) v = g;
        }
        if (k.len != strlen(key) || memcmp(k.data, key, k.len)) continue;
        if (!(*value = malloc(v.len + 1))) {
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            break;
        }
        if (v.len) memcpy(*value, v.data, v.len);
        (*value)[v.len] = '\0';
    }
    if (!st && got < 0 && !*value)
        st = dse_err_set(err, DSE_ERR_CONFIG, path, 0, "not an ONNX model (the bytes are not a protobuf message: "
                         "a truncated or other file)");
    free(data);
    return st;
}
