/* onnx.c: a trained model as an ONNX file (netfile.h; docs/export.md). Written with our own
 * protobuf writer (base/pb.h); every field number below is the one onnx/onnx.proto gives,
 * named beside it. The graph follows the model's layers in order; pooling reproduces
 * Caffe's output size and averaging divisor exactly with explicit pads (and a Pad node
 * where Caffe's padding counts in the average but its overhang does not). */
#include "netfile/netfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/pb.h"
#include "data/data.h"
#include "engine/compress.h"
#include "engine/model.h"

/* onnx.proto field numbers */
enum {
    MODEL_IR_VERSION = 1, MODEL_PRODUCER_NAME = 2, MODEL_PRODUCER_VERSION = 3, MODEL_DOC = 6, MODEL_GRAPH = 7,
    MODEL_OPSET = 8, MODEL_METADATA = 14,
    OPSET_VERSION = 2,
    ENTRY_KEY = 1, ENTRY_VALUE = 2,
    GRAPH_NODE = 1, GRAPH_NAME = 2, GRAPH_INITIALIZER = 5, GRAPH_INPUT = 11, GRAPH_OUTPUT = 12,
    NODE_INPUT = 1, NODE_OUTPUT = 2, NODE_NAME = 3, NODE_OP = 4, NODE_ATTR = 5,
    ATTR_NAME = 1, ATTR_F = 2, ATTR_I = 3, ATTR_INTS = 8, ATTR_TYPE = 20,
    TENSOR_DIMS = 1, TENSOR_TYPE = 2, TENSOR_NAME = 8, TENSOR_RAW = 9,
    VALUE_NAME = 1, VALUE_TYPE = 2, TYPE_TENSOR = 1, TTENSOR_ELEM = 1, TTENSOR_SHAPE = 2,
    SHAPE_DIM = 1, DIM_VALUE = 1, DIM_PARAM = 2,
};
enum { ATTR_FLOAT = 1, ATTR_INT = 2, ATTR_INT_LIST = 7 };         /* AttributeProto.AttributeType */
enum { ELEM_FLOAT = 1, ELEM_UINT8 = 2, ELEM_UINT16 = 4, ELEM_INT32 = 6, ELEM_INT64 = 7 }; /* TensorProto.DataType */

#define VNAME 160 /* a value's name: a layer name and a suffix */

struct ox {
    struct dse_pb  pb;
    const struct dse_model *m;
    const struct dse_dsez  *z;    /* NULL, or the compressed model: its weight-shared tensors as Gather */
    char         (*vname)[VNAME]; /* [n_layers]: the value each layer's output is */
    int           *rank;          /* [n_layers]: 4, or 2 after a Gemm */
    char           input[VNAME];  /* the value the layers read as the network input */
    int            axes23;        /* the [2, 3] initializer for Unsqueeze is written */
};

static void attr_int(struct dse_pb *pb, const char *name, int64_t v) {
    dse_pb_begin(pb, NODE_ATTR);
    dse_pb_string(pb, ATTR_NAME, name);
    dse_pb_varint(pb, ATTR_I, (uint64_t)v);
    dse_pb_varint(pb, ATTR_TYPE, ATTR_INT);
    dse_pb_end(pb);
}

static void attr_float(struct dse_pb *pb, const char *name, float v) {
    dse_pb_begin(pb, NODE_ATTR);
    dse_pb_string(pb, ATTR_NAME, name);
    dse_pb_float(pb, ATTR_F, v);
    dse_pb_varint(pb, ATTR_TYPE, ATTR_FLOAT);
    dse_pb_end(pb);
}

static void attr_ints(struct dse_pb *pb, const char *name, const int64_t *v, int n) {
    dse_pb_begin(pb, NODE_ATTR);
    dse_pb_string(pb, ATTR_NAME, name);
    for (int i = 0; i < n; i++) dse_pb_varint(pb, ATTR_INTS, (uint64_t)v[i]);
    dse_pb_varint(pb, ATTR_TYPE, ATTR_INT_LIST);
    dse_pb_end(pb);
}

/* Open a NodeProto; its attributes follow, then dse_pb_end. in[] ends at the first NULL. */
static void node_begin(struct dse_pb *pb, const char *op, const char *name, const char *const *in, int n_in,
                       const char *out) {
    dse_pb_begin(pb, GRAPH_NODE);
    for (int i = 0; i < n_in; i++) dse_pb_string(pb, NODE_INPUT, in[i]);
    dse_pb_string(pb, NODE_OUTPUT, out);
    dse_pb_string(pb, NODE_NAME, name);
    dse_pb_string(pb, NODE_OP, op);
}

static void node1(struct dse_pb *pb, const char *op, const char *name, const char *in, const char *out) {
    node_begin(pb, op, name, &in, 1, out);
    dse_pb_end(pb);
}

static void init_floats(struct dse_pb *pb, const char *name, const int64_t *dims, int nd, const float *v) {
    int64_t n = 1;
    dse_pb_begin(pb, GRAPH_INITIALIZER);
    for (int i = 0; i < nd; i++) dse_pb_varint(pb, TENSOR_DIMS, (uint64_t)dims[i]), n *= dims[i];
    dse_pb_varint(pb, TENSOR_TYPE, ELEM_FLOAT);
    dse_pb_string(pb, TENSOR_NAME, name);
    dse_pb_bytes(pb, TENSOR_RAW, v, (size_t)n * sizeof *v);
    dse_pb_end(pb);
}

static void init_int64s(struct dse_pb *pb, const char *name, const int64_t *v, int n) {
    int64_t dim = n;
    dse_pb_begin(pb, GRAPH_INITIALIZER);
    dse_pb_varint(pb, TENSOR_DIMS, (uint64_t)dim);
    dse_pb_varint(pb, TENSOR_TYPE, ELEM_INT64);
    dse_pb_string(pb, TENSOR_NAME, name);
    dse_pb_bytes(pb, TENSOR_RAW, v, (size_t)n * sizeof *v);
    dse_pb_end(pb);
}

/* A learned tensor of layer l (its checkpoint role) as the value `name` the graph reads:
 * a float initializer, or, where the compressed model shares its values (bits > 0), the
 * codebook indices as an initializer of the narrowest unsigned type that holds them (uint8
 * up to 8 bits, uint16 above), the float codebook, a Cast of the indices to int32 (ONNX's
 * Gather takes int32 or int64 indices only) and Gather(codebook, indices) of the indices'
 * shape, which is `name`. The decoded values must be v's, bit for bit: the graph computes
 * the model dse evaluates. */
static enum dse_status param(struct ox *o, const struct dse_layer *l, const char *role, const char *name,
                             const int64_t *dims, int nd, const float *v, struct dse_err *err) {
    const struct dse_dsez_tensor *t = NULL;
    for (int k = 0; o->z && k < o->z->n && !t; k++)
        if (!strcmp(o->z->t[k].layer, l->name) && !strcmp(o->z->t[k].role, role)) t = &o->z->t[k];
    if (!t || t->bits <= 0) {
        init_floats(&o->pb, name, dims, nd, v);
        return DSE_OK;
    }
    int64_t n = 1;
    for (int i = 0; i < nd; i++) n *= dims[i];
    if (t->count != n || t->bits > 16 || t->codebook_n < 1 || t->codebook_n > 1 << t->bits)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "compressed tensor '%s %s': %lld values of %d bits and a "
                           "codebook of %d; the model's tensor has %lld", l->name, role, (long long)t->count, t->bits,
                           t->codebook_n, (long long)n);
    for (int64_t i = 0; i < n; i++)
        if (t->index[i] >= t->codebook_n || memcmp(&t->codebook[t->index[i]], &v[i], sizeof *v))
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "compressed tensor '%s %s': value %lld decodes to %.9g "
                               "(codebook entry %d of %d), the model holds %.9g", l->name, role, (long long)i,
                               t->index[i] < t->codebook_n ? (double)t->codebook[t->index[i]] : 0.0, t->index[i],
                               t->codebook_n, (double)v[i]);
    struct dse_pb *pb = &o->pb;
    char index[VNAME + 16], codebook[VNAME + 16], index32[VNAME + 16], node[VNAME + 16];
    snprintf(index, sizeof index, "%s.index", name);
    snprintf(codebook, sizeof codebook, "%s.codebook", name);
    snprintf(index32, sizeof index32, "%s.index32", name);
    const int width = t->bits > 8 ? 2 : 1;
    uint8_t *raw = malloc((size_t)(n * width) + 1);
    if (!raw) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int64_t i = 0; i < n; i++) /* raw_data is little-endian */
        for (int b = 0; b < width; b++) raw[i * width + b] = (uint8_t)(t->index[i] >> 8 * b);
    dse_pb_begin(pb, GRAPH_INITIALIZER);
    for (int i = 0; i < nd; i++) dse_pb_varint(pb, TENSOR_DIMS, (uint64_t)dims[i]);
    dse_pb_varint(pb, TENSOR_TYPE, width == 2 ? ELEM_UINT16 : ELEM_UINT8);
    dse_pb_string(pb, TENSOR_NAME, index);
    dse_pb_bytes(pb, TENSOR_RAW, raw, (size_t)(n * width));
    dse_pb_end(pb);
    free(raw);
    const int64_t cb = t->codebook_n;
    init_floats(pb, codebook, &cb, 1, t->codebook);
    snprintf(node, sizeof node, "%s/cast", name);
    node_begin(pb, "Cast", node, (const char *const[]){ index }, 1, index32);
    attr_int(pb, "to", ELEM_INT32);
    dse_pb_end(pb);
    snprintf(node, sizeof node, "%s/gather", name);
    node_begin(pb, "Gather", node, (const char *const[]){ codebook, index32 }, 2, name);
    dse_pb_end(pb);
    return DSE_OK;
}

/* A graph input or output: float, dims[i] < 0 is the batch dimension "N". */
static void value_info(struct dse_pb *pb, int field, const char *name, const int64_t *dims, int nd) {
    dse_pb_begin(pb, field);
    dse_pb_string(pb, VALUE_NAME, name);
    dse_pb_begin(pb, VALUE_TYPE);
    dse_pb_begin(pb, TYPE_TENSOR);
    dse_pb_varint(pb, TTENSOR_ELEM, ELEM_FLOAT);
    dse_pb_begin(pb, TTENSOR_SHAPE);
    for (int i = 0; i < nd; i++) {
        dse_pb_begin(pb, SHAPE_DIM);
        if (dims[i] < 0) dse_pb_string(pb, DIM_PARAM, "N");
        else dse_pb_varint(pb, DIM_VALUE, (uint64_t)dims[i]);
        dse_pb_end(pb);
    }
    dse_pb_end(pb);
    dse_pb_end(pb);
    dse_pb_end(pb);
    dse_pb_end(pb);
}

static void meta_entry(struct dse_pb *pb, const char *key, const char *value) {
    dse_pb_begin(pb, MODEL_METADATA);
    dse_pb_string(pb, ENTRY_KEY, key);
    dse_pb_string(pb, ENTRY_VALUE, value);
    dse_pb_end(pb);
}

static const char *value_of(const struct ox *o, int input) {
    return input == DSE_INPUT_DATA ? o->input : o->vname[input];
}

/* The 4-d form of layer input `input` (a value after a Gemm is [N, K]: Unsqueeze(2, 3)
 * gives [N, K, 1, 1]), for ops that need it. */
static const char *as4(struct ox *o, int input, char *buf) {
    if (input == DSE_INPUT_DATA || o->rank[input] == 4) return value_of(o, input);
    if (!o->axes23) {
        const int64_t axes[2] = { 2, 3 };
        init_int64s(&o->pb, "dse.axes23", axes, 2);
        o->axes23 = 1;
    }
    snprintf(buf, VNAME, "%s/4d", o->vname[input]);
    const char *in[2] = { o->vname[input], "dse.axes23" };
    node_begin(&o->pb, "Unsqueeze", buf, in, 2, buf);
    dse_pb_end(&o->pb);
    return buf;
}

/* Pads (begin, end) along one axis under which ONNX's floor rule gives Caffe's output size
 * `out` for input `in`: the end pad is what the last window needs past the input and the
 * begin pad. -1 if no pads can (the last windows Caffe drops lie inside the input). */
static int pool_pads(int in, int k, int s, int pad, int out, int64_t *pb, int64_t *pe) {
    int64_t end = (int64_t)(out - 1) * s + k - in - pad;
    *pb = pad;
    *pe = end > 0 ? end : 0;
    return (in + *pb + *pe - k) / s + 1 == out ? 0 : -1;
}

static enum dse_status pool(struct ox *o, int i, struct dse_err *err) {
    const struct dse_layer *l = &o->m->net.layers[i];
    struct dse_pb *pb = &o->pb;
    const int avg = l->type == DSE_LAYER_AVGPOOL;
    char buf[VNAME], padded[VNAME + 8], pads_name[VNAME + 8];
    const char *x = as4(o, l->inputs[0], buf);
    if (l->global) {
        node1(pb, avg ? "GlobalAveragePool" : "GlobalMaxPool", l->name, x, o->vname[i]);
        return DSE_OK;
    }
    /* Caffe averages over the window clipped to the PADDED input: padding counts (as
     * zeros), the overhang past it does not. Padding that no window overhangs is ONNX's
     * count_include_pad; otherwise a Pad node makes the zeros real and ONNX's own pads (the
     * overhang alone) stay out of the count. Max pooling ignores pads either way. */
    int64_t ph0, ph1, pw0, pw1;
    int sym = 0, pre = 0;
    if (pool_pads(l->in_h, l->kernel_h, l->stride_h, l->pad_h, l->out_h, &ph0, &ph1) ||
        pool_pads(l->in_w, l->kernel_w, l->stride_w, l->pad_w, l->out_w, &pw0, &pw1))
        goto inexpressible;
    if (avg && (l->pad_h || l->pad_w)) {
        sym = ph1 == l->pad_h && pw1 == l->pad_w;
        pre = !sym;
    }
    if (pre) {
        if (pool_pads(l->in_h + 2 * l->pad_h, l->kernel_h, l->stride_h, 0, l->out_h, &ph0, &ph1) ||
            pool_pads(l->in_w + 2 * l->pad_w, l->kernel_w, l->stride_w, 0, l->out_w, &pw0, &pw1))
            goto inexpressible;
        const int64_t pads[8] = { 0, 0, l->pad_h, l->pad_w, 0, 0, l->pad_h, l->pad_w };
        snprintf(pads_name, sizeof pads_name, "%s.pads", l->name);
        snprintf(padded, sizeof padded, "%s/padded", o->vname[i]);
        init_int64s(pb, pads_name, pads, 8);
        const char *in[2] = { x, pads_name };
        node_begin(pb, "Pad", padded, in, 2, padded);
        dse_pb_end(pb);
        x = padded;
    }
    const int64_t kernel[2] = { l->kernel_h, l->kernel_w }, strides[2] = { l->stride_h, l->stride_w };
    const int64_t pads[4] = { ph0, pw0, ph1, pw1 };
    node_begin(pb, avg ? "AveragePool" : "MaxPool", l->name, &x, 1, o->vname[i]);
    attr_ints(pb, "kernel_shape", kernel, 2);
    attr_ints(pb, "strides", strides, 2);
    attr_ints(pb, "pads", pads, 4);
    if (avg) attr_int(pb, "count_include_pad", sym);
    dse_pb_end(pb);
    return DSE_OK;
inexpressible:
    return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, l->line,
                       "layer '%s': its Caffe output size %dx%d drops windows that lie inside the input, "
                       "which ONNX's pooling pads cannot express", l->name, l->out_h, l->out_w);
}

static void tensor_name(char *buf, const struct dse_layer *l, const char *role) {
    snprintf(buf, VNAME, "%s.%s", l->name, role);
}

/* A conv's or fc's weight (dims wd[n]) and bias (if any) as the values w and b the node reads. */
static enum dse_status weight_bias(struct ox *o, const struct dse_layer *l, const struct dse_node *nd,
                                   const int64_t *wd, int n, char *w, char *b, struct dse_err *err) {
    const int64_t bd = nd->bias ? nd->bias->c : 0;
    enum dse_status st;
    tensor_name(w, l, "weight"), tensor_name(b, l, "bias");
    if ((st = param(o, l, "weight", w, wd, n, nd->weight->data, err))) return st;
    return nd->bias ? param(o, l, "bias", b, &bd, 1, nd->bias->data, err) : DSE_OK;
}

static enum dse_status layer(struct ox *o, int i, struct dse_err *err) {
    const struct dse_model *m = o->m;
    const struct dse_layer *l = &m->net.layers[i];
    const struct dse_node *nd = &m->nodes[i];
    struct dse_pb *pb = &o->pb;
    char w[VNAME], b[VNAME], buf[VNAME], mean[VNAME], var[VNAME];
    const char *in[DSE_MAX_INPUTS];
    o->rank[i] = 4;
    switch (l->type) {
    case DSE_LAYER_CONV: {
        const int64_t wd[4] = { nd->weight->n, nd->weight->c, nd->weight->h, nd->weight->w };
        enum dse_status st = weight_bias(o, l, nd, wd, 4, w, b, err);
        if (st) return st;
        in[0] = as4(o, l->inputs[0], buf), in[1] = w, in[2] = b;
        const int64_t kernel[2] = { l->kernel_h, l->kernel_w }, strides[2] = { l->stride_h, l->stride_w };
        const int64_t pads[4] = { l->pad_h, l->pad_w, l->pad_h, l->pad_w }, dil[2] = { l->dilation_h, l->dilation_w };
        node_begin(pb, "Conv", l->name, in, nd->bias ? 3 : 2, o->vname[i]);
        attr_ints(pb, "kernel_shape", kernel, 2);
        attr_ints(pb, "strides", strides, 2);
        attr_ints(pb, "pads", pads, 4);
        attr_ints(pb, "dilations", dil, 2);
        attr_int(pb, "group", l->groups);
        dse_pb_end(pb);
        return DSE_OK;
    }
    case DSE_LAYER_FC: {
        /* Flatten(axis 1) reads [N, C, H, W] in C, H, W order, as dse's fc does */
        const int64_t wd[2] = { nd->weight->n, (int64_t)nd->weight->c * nd->weight->h * nd->weight->w };
        const char *x = value_of(o, l->inputs[0]);
        if (l->inputs[0] == DSE_INPUT_DATA || o->rank[l->inputs[0]] == 4) {
            snprintf(buf, sizeof buf, "%s/flat", o->vname[i]);
            node_begin(pb, "Flatten", buf, &x, 1, buf);
            attr_int(pb, "axis", 1);
            dse_pb_end(pb);
            x = buf;
        }
        enum dse_status st = weight_bias(o, l, nd, wd, 2, w, b, err);
        if (st) return st;
        in[0] = x, in[1] = w, in[2] = b;
        node_begin(pb, "Gemm", l->name, in, nd->bias ? 3 : 2, o->vname[i]);
        attr_int(pb, "transB", 1);
        dse_pb_end(pb);
        o->rank[i] = 2;
        return DSE_OK;
    }
    case DSE_LAYER_RELU:
        if (l->negative_slope != 0.0f) break; /* a leaky ReLU: refused below */
        node1(pb, "Relu", l->name, value_of(o, l->inputs[0]), o->vname[i]);
        o->rank[i] = l->inputs[0] == DSE_INPUT_DATA ? 4 : o->rank[l->inputs[0]];
        return DSE_OK;
    case DSE_LAYER_DROPOUT: /* inference: the identity, so no node; the value is its input */
        snprintf(o->vname[i], VNAME, "%s", value_of(o, l->inputs[0]));
        o->rank[i] = l->inputs[0] == DSE_INPUT_DATA ? 4 : o->rank[l->inputs[0]];
        return DSE_OK;
    case DSE_LAYER_MAXPOOL:
    case DSE_LAYER_AVGPOOL:
        return pool(o, i, err);
    case DSE_LAYER_CONCAT: {
        char bufs[DSE_MAX_INPUTS][VNAME];
        for (int k = 0; k < l->n_inputs; k++) in[k] = as4(o, l->inputs[k], bufs[k]);
        node_begin(pb, "Concat", l->name, in, l->n_inputs, o->vname[i]);
        attr_int(pb, "axis", 1);
        dse_pb_end(pb);
        return DSE_OK;
    }
    case DSE_LAYER_ELTWISE: {
        if (l->eltwise_op != DSE_ELTWISE_SUM) break;
        char bufs[DSE_MAX_INPUTS][VNAME];
        for (int k = 0; k < l->n_inputs; k++) in[k] = as4(o, l->inputs[k], bufs[k]);
        node_begin(pb, l->n_inputs == 2 ? "Add" : "Sum", l->name, in, l->n_inputs, o->vname[i]);
        dse_pb_end(pb);
        return DSE_OK;
    }
    case DSE_LAYER_BATCHNORM: {
        const int C = nd->run_mean->c;
        const int64_t cd = C;
        float *ones = malloc(sizeof *ones * (size_t)C * 2);
        if (!ones) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        for (int c = 0; c < C; c++) ones[c] = 1.0f, ones[C + c] = 0.0f;
        tensor_name(w, l, "scale"), tensor_name(b, l, "bias");
        tensor_name(mean, l, "running_mean"), tensor_name(var, l, "running_var");
        enum dse_status st = param(o, l, nd->weight ? "weight" : "", w, &cd, 1, nd->weight ? nd->weight->data : ones, err);
        if (!st) st = param(o, l, nd->bias ? "bias" : "", b, &cd, 1, nd->bias ? nd->bias->data : ones + C, err);
        if (!st) st = param(o, l, "run_mean", mean, &cd, 1, nd->run_mean->data, err);
        if (!st) st = param(o, l, "run_var", var, &cd, 1, nd->run_var->data, err);
        free(ones);
        if (st) return st;
        const char *bin[5] = { value_of(o, l->inputs[0]), w, b, mean, var };
        node_begin(pb, "BatchNormalization", l->name, bin, 5, o->vname[i]);
        attr_float(pb, "epsilon", nd->bn_eps);
        dse_pb_end(pb);
        o->rank[i] = l->inputs[0] == DSE_INPUT_DATA ? 4 : o->rank[l->inputs[0]];
        return DSE_OK;
    }
    case DSE_LAYER_SCALE: {
        const int64_t cd[3] = { nd->weight->c, 1, 1 };
        enum dse_status st;
        tensor_name(w, l, "weight");
        if ((st = param(o, l, "weight", w, cd, 3, nd->weight->data, err))) return st;
        in[0] = as4(o, l->inputs[0], buf), in[1] = w;
        char mul[VNAME + 8];
        snprintf(mul, sizeof mul, "%s/mul", o->vname[i]);
        node_begin(pb, "Mul", nd->bias ? mul : l->name, in, 2, nd->bias ? mul : o->vname[i]);
        dse_pb_end(pb);
        if (nd->bias) {
            tensor_name(b, l, "bias");
            if ((st = param(o, l, "bias", b, cd, 3, nd->bias->data, err))) return st;
            in[0] = mul, in[1] = b;
            node_begin(pb, "Add", l->name, in, 2, o->vname[i]);
            dse_pb_end(pb);
        }
        return DSE_OK;
    }
    default:
        break;
    }
    return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, l->line, "layer '%s' (%s%s) has no ONNX export in dse",
                       l->name, dse_layer_type_str(l->type),
                       l->type == DSE_LAYER_ELTWISE ? ", an operation other than sum"
                       : l->type == DSE_LAYER_RELU ? ", a negative slope" : "");
}

/* Value names: the layer's name, made unique (a later layer of the same name, or one
 * spelled as a name the exporter uses, gets "_<index>"). */
static void name_values(struct ox *o) {
    const struct dse_net *net = &o->m->net;
    for (int i = 0; i < net->n_layers; i++) {
        const char *nm = net->layers[i].name;
        int clash = !nm[0] || !strcmp(nm, "data") || !strcmp(nm, "prob") || !strcmp(nm, "data/normalized");
        for (int j = 0; j < i && !clash; j++) clash = !strcmp(net->layers[j].name, nm);
        if (clash) snprintf(o->vname[i], VNAME, "%s_%d", nm, i);
        else snprintf(o->vname[i], VNAME, "%s", nm);
    }
}

static void metadata(struct dse_pb *pb, const struct dse_model *m, const struct dse_export_meta *meta) {
    char num[64];
    meta_entry(pb, "dse_version", DSE_VERSION);
    meta_entry(pb, "network", m->net.name);
    if (!meta) return;
    if (meta->candidate && meta->candidate[0]) meta_entry(pb, "candidate", meta->candidate);
    if (meta->metaparams && meta->metaparams[0]) meta_entry(pb, "metaparams", meta->metaparams);
    if (meta->data && meta->data[0]) meta_entry(pb, "data", meta->data);
    if (meta->checkpoint && meta->checkpoint[0]) meta_entry(pb, "checkpoint", meta->checkpoint);
    if (meta->top1 >= 0) snprintf(num, sizeof num, "%.6f", meta->top1), meta_entry(pb, "top1", num);
    if (meta->norm && meta->norm->c) {
        char mean[256] = "", std[256] = "";
        for (int c = 0; c < meta->norm->c; c++) {
            size_t a = strlen(mean), b = strlen(std);
            snprintf(mean + a, sizeof mean - a, "%s%.9g", c ? "," : "", (double)meta->norm->mean[c]);
            snprintf(std + b, sizeof std - b, "%s%.9g", c ? "," : "", (double)meta->norm->std[c]);
        }
        meta_entry(pb, "norm_mean", mean);
        meta_entry(pb, "norm_std", std);
    }
    meta_entry(pb, "input", meta->norm && meta->norm->c
                                ? "data: float [N, C, H, W], pixel / 255 in [0, 1], RGB; the model subtracts "
                                  "norm_mean and divides by norm_std itself"
                                : "data: float [N, C, H, W], used as given (no normalization recorded)");
    if (meta->classes && meta->class_names) {
        /* one name a line, in label order: names come from folders and may hold commas */
        size_t total = 1;
        for (int k = 0; k < meta->classes; k++) total += strlen(meta->class_names[k]) + 1;
        char *names = malloc(total);
        if (names) {
            names[0] = '\0';
            for (int k = 0, at = 0; k < meta->classes; k++) {
                if (k) names[at++] = '\n', names[at] = '\0';
                for (const char *c = meta->class_names[k]; *c; c++) /* a newline in a name would split it */
                    names[at++] = (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c;
                names[at] = '\0';
            }
            meta_entry(pb, "class_names", names);
            free(names);
        } else {
            pb->nomem = 1;
        }
    }
}

enum dse_status dse_onnx_write(const struct dse_model *m, const struct dse_export_meta *meta, uint8_t **buf,
                               size_t *len, struct dse_err *err) {
    const struct dse_net *net = &m->net;
    struct ox o = { .m = m, .z = meta ? meta->dsez : NULL };
    enum dse_status st = DSE_OK;
    *buf = NULL, *len = 0;
    if (m->device.kind != DSE_DEVICE_CPU)
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "ONNX export reads a CPU model's weights");
    o.vname = calloc((size_t)net->n_layers, sizeof *o.vname);
    o.rank = calloc((size_t)net->n_layers, sizeof *o.rank);
    if (!o.vname || !o.rank) {
        free(o.vname), free(o.rank);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    name_values(&o);
    dse_pb_init(&o.pb);
    struct dse_pb *pb = &o.pb;
    const struct dse_node *loss = &m->nodes[m->loss];
    const int K = loss->in[0]->c * loss->in[0]->h * loss->in[0]->w;

    dse_pb_varint(pb, MODEL_IR_VERSION, DSE_ONNX_IR);
    dse_pb_string(pb, MODEL_PRODUCER_NAME, "dse");
    dse_pb_string(pb, MODEL_PRODUCER_VERSION, DSE_VERSION);
    dse_pb_string(pb, MODEL_DOC, "Exported by dse from a trained checkpoint: input 'data' [N, C, H, W], output "
                                 "'prob' [N, classes] (softmax); metadata_props say what the model is.");
    dse_pb_begin(pb, MODEL_OPSET);
    dse_pb_varint(pb, OPSET_VERSION, DSE_ONNX_OPSET);
    dse_pb_end(pb);
    metadata(pb, m, meta);

    dse_pb_begin(pb, MODEL_GRAPH);
    dse_pb_string(pb, GRAPH_NAME, net->name[0] ? net->name : "dse");
    const int64_t in_dims[4] = { -1, net->in_c, net->in_h, net->in_w };
    value_info(pb, GRAPH_INPUT, "data", in_dims, 4);
    snprintf(o.input, sizeof o.input, "data");
    if (meta && meta->norm && meta->norm->c) {
        if (meta->norm->c != net->in_c) {
            st = dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "the normalization has %d channels, the network input %d",
                             meta->norm->c, net->in_c);
            goto out;
        }
        const int64_t nd[4] = { 1, net->in_c, 1, 1 };
        init_floats(pb, "data.mean", nd, 4, meta->norm->mean);
        init_floats(pb, "data.std", nd, 4, meta->norm->std);
        const char *sub[2] = { "data", "data.mean" }, *div[2] = { "data/centered", "data.std" };
        node_begin(pb, "Sub", "data/centered", sub, 2, "data/centered");
        dse_pb_end(pb);
        node_begin(pb, "Div", "data/normalized", div, 2, "data/normalized");
        dse_pb_end(pb);
        snprintf(o.input, sizeof o.input, "data/normalized");
    }
    for (int i = 0; i < net->n_layers && !st; i++) {
        const enum dse_layer_type t = net->layers[i].type;
        if (t == DSE_LAYER_SOFTMAX_LOSS || t == DSE_LAYER_ACCURACY || t == DSE_LAYER_SOFTMAX) continue;
        st = layer(&o, i, err);
    }
    if (st) goto out;
    /* the loss layer's softmax, over the classes */
    const int logits = net->layers[m->loss].inputs[0];
    const char *x = value_of(&o, logits);
    if (logits == DSE_INPUT_DATA || o.rank[logits] == 4) {
        node_begin(pb, "Flatten", "logits", &x, 1, "logits");
        attr_int(pb, "axis", 1);
        dse_pb_end(pb);
        x = "logits";
    }
    node_begin(pb, "Softmax", "prob", &x, 1, "prob");
    attr_int(pb, "axis", 1);
    dse_pb_end(pb);
    const int64_t out_dims[2] = { -1, K };
    value_info(pb, GRAPH_OUTPUT, "prob", out_dims, 2);
    dse_pb_end(pb); /* graph */
    st = dse_pb_finish(pb, err);
out:
    free(o.vname), free(o.rank);
    if (st) {
        dse_pb_free(pb);
        return st;
    }
    *buf = pb->buf, *len = pb->len;
    return DSE_OK;
}

enum dse_status dse_onnx_save(const struct dse_model *m, const struct dse_export_meta *meta, const char *path,
                              struct dse_err *err) {
    uint8_t *buf;
    size_t len;
    enum dse_status st = dse_onnx_write(m, meta, &buf, &len, err);
    if (!st) st = dse_fs_write_atomic(path, buf, len, err);
    free(buf);
    return st;
}
