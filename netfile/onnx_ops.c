/* onnx_ops.c: the ONNX ops of issue #34's second part (docs/onnx.md's op table): LeakyRelu,
 * PRelu, Clip, HardSigmoid, HardSwish, Mul (SiLU, squeeze-excitation), ReduceMean, Squeeze
 * and Unsqueeze, Transpose (the channel shuffle), Split, Slice, Resize and Upsample,
 * ConvTranspose, in the forms of opsets 7 to 21 (attributes that became inputs read both
 * ways). netfile/onnx_read.c reads the model and holds the op table (ops[]) and helpers;
 * netfile/onnx_impl.h is what they share. */
#include "netfile/onnx_impl.h"

#include <string.h>

/* An int list attribute of up to cap values (any count) into out; *n = -1 if absent. */
static enum dse_status attr_list(struct rd *r, const struct node *nd, const char *name, int64_t *out, int cap,
                                 int *n) {
    struct dse_pb_reader rr;
    struct dse_pb_field a, g;
    size_t got = 0;
    *n = -1;
    if (!attr(nd, name, &a)) return DSE_OK;
    dse_pb_reader_init(&rr, a.data, a.len);
    while (dse_pb_next(&rr, &g) == 1)
        if (g.field == ATTR_INTS && dse_pb_varints(&g, out, (size_t)cap, &got))
            return node_fail(r, DSE_ERR_CONFIG, "attribute '%s' holds more than %d values", name, cap);
    *n = (int)got;
    return DSE_OK;
}

/* A float tensor's values (raw_data or float_data), at most cap; -1 if it holds others. */
static int tensor_floats(const struct tensor *t, float *out, size_t cap, size_t *n) {
    struct dse_pb_reader rr;
    struct dse_pb_field f;
    *n = 0;
    if (t->type != 1 || t->count > (int64_t)cap) return -1; /* TensorProto.FLOAT */
    dse_pb_reader_init(&rr, t->msg, t->len);
    while (dse_pb_next(&rr, &f) == 1) {
        if (f.field == 4 && dse_pb_floats(&f, out, cap, n)) return -1; /* float_data */
        if (f.field == TENSOR_RAW && f.wire == DSE_PB_LEN) {
            if (*n || f.len != (size_t)t->count * 4) return -1;
            memcpy(out, f.data, f.len), *n = f.len / 4;
        }
    }
    return (int64_t)*n == t->count ? 0 : -1;
}

/* An int list that moved from an attribute to input k at opset `since` (Split's split,
 * Slice's starts, Squeeze's axes, ...): read from where the model's opset keeps it; *n -1
 * if the node gives none. */
static enum dse_status ints_of(struct rd *r, const struct node *nd, int since, int k, const char *name, int64_t *out,
                               int cap, int *n) {
    if (r->opset < since) return attr_list(r, nd, name, out, cap, n);
    size_t got;
    *n = -1;
    if (!has_in(nd, k)) return DSE_OK;
    const struct tensor *t = in_tensor(r, nd, k, name);
    if (!t) return r->err->code;
    if (tensor_int64s(t, out, (size_t)cap, &got))
        return node_fail(r, DSE_ERR_UNSUPPORTED, "its %s '%.*s' is not an int64 tensor of at most %d values", name,
                         sn(t->name), t->name.p, cap);
    *n = (int)got;
    return DSE_OK;
}

/* Axes of a rank-`rank` value, negatives counted from the end, into a bit set; -1 if one
 * is out of range. */
static int axis_bits(const int64_t *axes, int n, int rank) {
    int bits = 0;
    for (int i = 0; i < n; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= rank) return -1;
        bits |= 1 << a;
    }
    return bits;
}

/* An alias of input 0 (no layer) of another rank: Squeeze, Unsqueeze, the Reshapes around
 * a channel shuffle. */
static enum dse_status alias_value(struct rd *r, const struct node *nd, int rank, int groups) {
    struct value v = *find_value(r, nd->in[0]);
    v.name = nd->out[0], v.rank = rank, v.groups = groups;
    return add_value(r, v);
}

/* LeakyRelu: a relu with Caffe's negative_slope (ONNX's alpha, 0.01 by default). */
enum dse_status op_leaky(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st) return st;
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->negative_slope = attr_float(nd, "alpha", 0.01f);
    return finish(r, nd, rank, -1, -1);
}

/* PRelu: its slope, one per channel ([C], [C, 1, 1], [1, C, 1, 1]) or one for all, is learned. */
enum dse_status op_prelu(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank, c, h, w;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st || (st = shape_of(r, in, &c, &h, &w))) return st;
    const struct tensor *s = in_tensor(r, nd, 1, "slope");
    if (!s) return r->err->code;
    if (s->count != 1 && s->count != c)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "its slope '%.*s' holds %lld values; dse reads one per channel "
                         "(%d) or one for all", sn(s->name), s->name.p, (long long)s->count, c);
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->channel_shared = s->count == 1;
    return finish(r, nd, rank, (int)(s - r->t), -1);
}

/* Clip: min(max(x, min), max), its bounds attributes before opset 11 and optional inputs
 * from it (none: unbounded). Clip(0, 6) is MobileNet's ReLU6. */
enum dse_status op_clip(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank;
    float b[2] = { -3.402823466e38f, 3.402823466e38f };
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st) return st;
    for (int k = 0; k < 2; k++) {
        if (r->opset < 11) {
            b[k] = attr_float(nd, k ? "max" : "min", b[k]);
            continue;
        }
        if (!has_in(nd, k + 1)) continue;
        const struct tensor *t = in_tensor(r, nd, k + 1, k ? "max" : "min");
        size_t n;
        if (!t) return r->err->code;
        if (tensor_floats(t, &b[k], 1, &n))
            return node_fail(r, DSE_ERR_UNSUPPORTED, "its %s '%.*s' is not one float", k ? "max" : "min",
                             sn(t->name), t->name.p);
    }
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->clip_min = b[0], l->clip_max = b[1];
    return finish(r, nd, rank, -1, -1);
}

/* HardSigmoid (alpha 0.2, beta 0.5 by default) and HardSwish: one input, the shape kept. */
enum dse_status op_hard(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st) return st;
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->hs_alpha = op->type == DSE_LAYER_HARDSIGMOID ? attr_float(nd, "alpha", 0.2f) : 1.0f / 6;
    l->hs_beta  = op->type == DSE_LAYER_HARDSIGMOID ? attr_float(nd, "beta", 0.5f) : 0.5f;
    return finish(r, nd, rank, -1, -1);
}

/* Mul of two computed values: of equal shapes an eltwise product (x * Sigmoid(x) is SiLU,
 * Swish); of a map and one value per channel ([N, C, 1, 1], a squeeze-excitation's gate) a
 * channel_mul, broadcast over H and W. */
enum dse_status op_mul(struct rd *r, const struct node *nd, const struct op *op) {
    int in[2], rank[2], c[2], h[2], w[2], done;
    enum dse_status st;
    if (nd->n_in != 2) return node_fail(r, DSE_ERR_CONFIG, "%d inputs; Mul takes 2", nd->n_in);
    if ((st = fold_arith(r, nd, &done)) || done) return st;
    for (int k = 0; k < 2; k++)
        if ((st = in_layer(r, nd, k, &in[k], &rank[k])) || (st = shape_of(r, in[k], &c[k], &h[k], &w[k])))
            return st;
    const int same = c[0] == c[1] && h[0] == h[1] && w[0] == w[1] && rank[0] == rank[1];
    const int gate = same ? -1 : c[0] == c[1] && h[1] == 1 && w[1] == 1 && rank[1] == 4 ? 1
                               : c[0] == c[1] && h[0] == 1 && w[0] == 1 && rank[0] == 4 ? 0 : -1;
    if (!same && gate < 0)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "a Mul of %dx%dx%d by %dx%dx%d; dse reads a product of equal "
                         "shapes or of a map by one value per channel", c[0], h[0], w[0], c[1], h[1], w[1]);
    const int map = gate == 0 ? 1 : 0;
    struct dse_layer *l = begin_layer(r, nd, same ? op->type : DSE_LAYER_CHANNEL_MUL, in[map]);
    if (!l) return r->err->code;
    l->n_inputs = 2;
    l->inputs[1] = in[1 - map];
    l->eltwise_op = DSE_ELTWISE_PROD;
    return finish(r, nd, rank[map], -1, -1);
}

/* ReduceMean over H and W (axes [2, 3], an attribute before opset 18, an input from it): a
 * global average pooling; keepdims 0 gives [N, C]. */
enum dse_status op_reduce(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank, n;
    int64_t axes[MAX_DIMS], keep;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st || (st = ints_of(r, nd, 18, 1, "axes", axes, MAX_DIMS, &n)) ||
        (st = attr_int(r, nd, "keepdims", 1, 0, 1, &keep)))
        return st;
    if (rank != 4 || n < 0 || axis_bits(axes, n, rank) != 0xc)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "dse reads ReduceMean over H and W (axes [2, 3]) of a [N, C, H, W] "
                         "value only");
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->global = 1;
    return finish(r, nd, keep ? 4 : 2, -1, -1);
}

/* Squeeze of [N, C, 1, 1] at axes [2, 3] and Unsqueeze of [N, C] at axes [2, 3] (an
 * attribute before opset 13, an input from it): the same values, no layer. */
enum dse_status op_squeeze(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank, n, c, h, w;
    int64_t axes[MAX_DIMS];
    const int un = str_is(nd->op, "Unsqueeze");
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st || (st = ints_of(r, nd, 13, 1, "axes", axes, MAX_DIMS, &n)) || (st = shape_of(r, in, &c, &h, &w)))
        return st;
    if (rank != (un ? 2 : 4) || n < 0 || axis_bits(axes, n, 4) != 0xc || h != 1 || w != 1)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "dse reads %s only at axes [2, 3], between [N, C, 1, 1] and [N, C]",
                         un ? "Unsqueeze" : "Squeeze");
    return alias_value(r, nd, un ? 4 : 2, 0);
}

/* Transpose: [N, g, C/g, H, W] to [N, C/g, g, H, W] after a Reshape (ShuffleNet's channel
 * shuffle: a shuffle layer, a copy); the identity permutation: no layer. */
enum dse_status op_transpose(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank, n;
    int64_t perm[MAX_DIMS];
    r->read5 = 1;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    r->read5 = 0;
    if (st || (st = attr_list(r, nd, "perm", perm, MAX_DIMS, &n))) return st;
    int identity = n == rank, shuffle = rank == 5 && n == 5;
    for (int i = 0; i < n; i++) {
        identity &= perm[i] == i;
        shuffle &= perm[i] == (i == 1 ? 2 : i == 2 ? 1 : i);
    }
    if (identity) return alias_value(r, nd, rank, find_value(r, nd->in[0])->groups);
    if (!shuffle)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "dse reads Transpose only as a channel shuffle (perm [0, 2, 1, 3, "
                         "4] of a Reshape to [N, g, C/g, H, W])");
    int c, h, w;
    const int g = find_value(r, nd->in[0])->groups;
    if ((st = shape_of(r, in, &c, &h, &w))) return st;
    if (g < 1 || c % g) /* a 5-d value not from a channel shuffle's Reshape (an op --skip-unknown kept) */
        return node_fail(r, DSE_ERR_UNSUPPORTED, "a Transpose of a 5-d value that is not a channel shuffle's "
                         "[N, g, C/g, H, W]");
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->groups = g;
    if ((st = finish(r, nd, 5, -1, -1))) return st;
    r->v[r->nv - 1].groups = c / g;
    return DSE_OK;
}

/* Reshape of [N, C, H, W] to [N, g, C/g, H, W] and back to [N, C, H, W]: the channel
 * shuffle's views (no layer); 0 in the shape copies the input's, -1 is inferred. */
enum dse_status reshape5(struct rd *r, const struct node *nd, int in, int rank, const int64_t *shape, int n) {
    int c, h, w;
    enum dse_status st = shape_of(r, in, &c, &h, &w);
    if (st) return st;
    for (int i = 1; i < n; i++)
        if (shape[i] < -1 || shape[i] > DSE_DIM_MAX)
            return node_fail(r, DSE_ERR_CONFIG, "shape value %lld; expected -1 to %d", (long long)shape[i], DSE_DIM_MAX);
    if (rank == 5 && n == 4 && (shape[1] == -1 || shape[1] == c) && shape[2] == h && shape[3] == w)
        return alias_value(r, nd, 4, 0);
    if (rank == 4 && n == 5 && (shape[3] == h || shape[3] == 0) && (shape[4] == w || shape[4] == 0) &&
        shape[1] != 0 && shape[2] != 0 && (shape[1] != -1 || shape[2] != -1)) {
        int64_t g = shape[1] == -1 ? (shape[2] > 0 && c % shape[2] == 0 ? c / shape[2] : 0) : shape[1];
        if (g > 0 && c % g == 0 && (shape[2] == -1 || shape[2] * g == c)) return alias_value(r, nd, 5, (int)g);
    }
    return node_fail(r, DSE_ERR_UNSUPPORTED, "a reshape of a rank-%d %dx%dx%d value to %d dimensions; dse reads a "
                     "5-d reshape only as a channel shuffle's [N, g, C/g, H, W] and back", rank, c, h, w, n);
}

/* Split along the channels into parts of the sizes given ('split', an attribute before
 * opset 13, an input from it) or equal parts (opset 18's num_outputs or the outputs'
 * count): a slice layer per output, named after the node, then after its outputs. */
enum dse_status op_split(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank, n, c, h, w;
    int64_t axis, split[MAX_NODE_OUT];
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st || (st = attr_int(r, nd, "axis", 0, -rank, rank - 1, &axis)) ||
        (st = ints_of(r, nd, 13, 1, "split", split, MAX_NODE_OUT, &n)) || (st = shape_of(r, in, &c, &h, &w)))
        return st;
    if ((axis < 0 ? axis + rank : axis) != 1)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "a split along axis %lld; dse splits the channels (axis 1)",
                         (long long)axis);
    if (n < 0) { /* equal parts, the last smaller where they do not divide (opset 18) */
        n = nd->n_out;
        for (int k = 0; k < n; k++) split[k] = (c + n - 1) / n;
        split[n - 1] = c - (int64_t)(n - 1) * ((c + n - 1) / n);
    }
    int64_t sum = 0; /* each part in [1, c] first: the sum cannot overflow */
    for (int k = 0; k < n; k++) {
        if (split[k] < 1 || split[k] > c)
            return node_fail(r, DSE_ERR_SHAPE, "part %d of its split holds %lld channels; the input has %d", k,
                             (long long)split[k], c);
        sum += split[k];
    }
    if (n != nd->n_out || sum != c)
        return node_fail(r, DSE_ERR_SHAPE, "its %d parts hold %lld of %d channels in %d outputs", n, (long long)sum, c,
                         nd->n_out);
    for (int k = 0, at = 0; k < n; at += (int)split[k++]) {
        struct node one = *nd;
        one.out[0] = nd->out[k];
        if (k) one.name = (struct str){ 0 };
        struct dse_layer *l = begin_layer(r, &one, op->type, in);
        if (!l) return r->err->code;
        l->slice_begin = at, l->slice_end = at + (int)split[k];
        if ((st = finish(r, &one, rank, -1, -1))) return st;
    }
    return DSE_OK;
}

/* Slice of the channels (axes [1]; starts, ends, axes attributes before opset 10, inputs
 * from it; steps 1): a slice layer. Ends past the channels (INT64_MAX) are clamped. */
enum dse_status op_slice(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank, n[4], c, h, w;
    int64_t v[4][MAX_DIMS];
    static const char *const what[4] = { "starts", "ends", "axes", "steps" };
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st || (st = shape_of(r, in, &c, &h, &w))) return st;
    for (int k = 0; k < 4; k++)
        if ((st = ints_of(r, nd, 10, k + 1, what[k], v[k], MAX_DIMS, &n[k]))) return st;
    if (n[2] < 0) n[2] = n[0] > 0 ? 1 : 0, v[2][0] = 0; /* no axes: the first n */
    if (n[0] != 1 || n[1] != 1 || n[2] != 1 || axis_bits(v[2], 1, rank) != 2 || (n[3] >= 0 && (n[3] != 1 || v[3][0] != 1)))
        return node_fail(r, DSE_ERR_UNSUPPORTED, "dse reads Slice of the channels only (axes [1], step 1)");
    int64_t b = v[0][0] < 0 ? v[0][0] + c : v[0][0], e = v[1][0] < 0 ? v[1][0] + c : v[1][0];
    b = b < 0 ? 0 : b > c ? c : b, e = e < 0 ? 0 : e > c ? c : e;
    if (b >= e) return node_fail(r, DSE_ERR_SHAPE, "channels %lld to %lld of %d: none", (long long)b, (long long)e, c);
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->slice_begin = (int)b, l->slice_end = (int)e;
    return finish(r, nd, rank, -1, -1);
}

/* Resize (opset 10: scales input 1; 11 on: roi, scales 2, sizes 3) and Upsample (scales an
 * attribute before opset 9, input 1 from it): nearest or (bi)linear, over H and W only. */
enum dse_status op_resize(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank;
    char mode[32];
    float sc[MAX_DIMS] = { 0 };
    int64_t sizes[MAX_DIMS];
    size_t ns = 0, nz = 0;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st) return st;
    attr_str(nd, "mode", mode, sizeof mode);
    const int linear = !strcmp(mode, "linear") || !strcmp(mode, "bilinear");
    if (mode[0] && strcmp(mode, "nearest") && !linear)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "mode '%s'; dse reads nearest and linear", mode);
    const int upsample = str_is(nd->op, "Upsample");
    const int ks = upsample || r->opset < 11 ? 1 : 2;
    if (upsample && r->opset < 9) {
        struct dse_pb_field a;
        if (attr(nd, "scales", &a)) {
            struct dse_pb_reader rr;
            struct dse_pb_field g;
            dse_pb_reader_init(&rr, a.data, a.len);
            while (dse_pb_next(&rr, &g) == 1)
                if (g.field == ATTR_FLOATS && dse_pb_floats(&g, sc, MAX_DIMS, &ns)) ns = 0;
        }
    } else if (has_in(nd, ks)) {
        const struct tensor *t = in_tensor(r, nd, ks, "scales");
        if (!t) return r->err->code;
        if (t->count && tensor_floats(t, sc, MAX_DIMS, &ns))
            return node_fail(r, DSE_ERR_UNSUPPORTED, "its scales '%.*s' are not floats", sn(t->name), t->name.p);
    }
    if (!upsample && r->opset >= 11 && has_in(nd, 3)) {
        const struct tensor *t = in_tensor(r, nd, 3, "sizes");
        if (!t) return r->err->code;
        if (tensor_int64s(t, sizes, MAX_DIMS, &nz))
            return node_fail(r, DSE_ERR_UNSUPPORTED, "its sizes '%.*s' are not int64", sn(t->name), t->name.p);
    }
    int c, h, w;
    if ((st = shape_of(r, in, &c, &h, &w))) return st;
    if (rank != 4 || (ns == 4) == (nz == 4) || (ns == 4 && (sc[0] != 1 || sc[1] != 1 || !(sc[2] > 0) ||
                                                            !(sc[3] > 0) || sc[2] > DSE_DIM_MAX || sc[3] > DSE_DIM_MAX)) ||
        (nz == 4 && (sizes[1] != c || sizes[2] < 1 || sizes[3] < 1 || sizes[2] > DSE_DIM_MAX || sizes[3] > DSE_DIM_MAX)))
        return node_fail(r, DSE_ERR_UNSUPPORTED, "dse reads a resize of H and W of a [N, C, H, W] value by 4 scales "
                         "or 4 sizes (those of N and C kept)");
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->resize_linear = linear;
    l->resize_scale_h = sc[2], l->resize_scale_w = sc[3];
    l->resize_h = nz ? (int)sizes[2] : 0, l->resize_w = nz ? (int)sizes[3] : 0;
    return finish(r, nd, 4, -1, -1);
}

/* ConvTranspose: Caffe's Deconvolution. Its weight is [C, M/group, kh, kw]; pads alike at
 * both sides, output_padding at the end, no output_shape or auto_pad SAME. */
enum dse_status op_deconv(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank, have;
    char mode[32];
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st) return st;
    const struct tensor *w = in_tensor(r, nd, 1, "weight"), *b = NULL;
    if (!w) return r->err->code;
    if ((st = check_dims(r, w, 4, "weight"))) return st;
    int64_t stride[2] = { 1, 1 }, dil[2] = { 1, 1 }, pads[4] = { 0 }, opad[2] = { 0 }, os[2], group;
    if ((st = attr_ints(r, nd, "strides", 2, 1, DSE_DIM_MAX, stride, &have)) ||
        (st = attr_ints(r, nd, "dilations", 2, 1, DSE_DIM_MAX, dil, &have)) ||
        (st = attr_ints(r, nd, "pads", 4, 0, DSE_DIM_MAX, pads, &have)) ||
        (st = attr_ints(r, nd, "output_padding", 2, 0, DSE_DIM_MAX, opad, &have)) ||
        (st = attr_ints(r, nd, "output_shape", 2, 1, DSE_DIM_MAX, os, &have)) ||
        (st = attr_int(r, nd, "group", 1, 1, DSE_DIM_MAX, &group)))
        return st;
    attr_str(nd, "auto_pad", mode, sizeof mode);
    if (have || (mode[0] && strcmp(mode, "NOTSET") && strcmp(mode, "VALID")) || pads[0] != pads[2] ||
        pads[1] != pads[3])
        return node_fail(r, DSE_ERR_UNSUPPORTED, "dse reads ConvTranspose with pads alike at both sides, without "
                         "output_shape or auto_pad SAME (Caffe's Deconvolution)");
    if (w->dims[1] * group > DSE_DIM_MAX)
        return node_fail(r, DSE_ERR_CONFIG, "%lld filters; expected 1 to %d", (long long)(w->dims[1] * group),
                         DSE_DIM_MAX);
    if (has_in(nd, 2) && (!(b = in_tensor(r, nd, 2, "bias")) || (st = check_bias(r, b, w->dims[1] * group))))
        return b ? st : r->err->code;
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->num_output = (int)(w->dims[1] * group);
    l->kernel_h = (int)w->dims[2], l->kernel_w = (int)w->dims[3];
    l->stride_h = (int)stride[0], l->stride_w = (int)stride[1];
    l->dilation_h = (int)dil[0], l->dilation_w = (int)dil[1];
    l->pad_h = (int)pads[0], l->pad_w = (int)pads[1];
    l->output_pad_h = (int)opad[0], l->output_pad_w = (int)opad[1];
    l->groups = (int)group;
    l->bias = b != NULL;
    return finish(r, nd, 4, (int)(w - r->t), b ? (int)(b - r->t) : -1);
}

/* A computed int64 constant of n values (the node's first output). */
static enum dse_status add_computed(struct rd *r, const struct node *nd, const int64_t *v, int n, int scalar) {
    if (r->nt == r->cap_t) return node_fail(r, DSE_ERR_INTERNAL, "too many constants"); /* one a node: never */
    struct tensor *t = &r->t[r->nt];
    *t = (struct tensor){ .name = nd->out[0], .type = ELEM_INT64, .count = n, .nd = scalar ? 0 : 1, .computed = 1 };
    t->dims[0] = n;
    memcpy(t->iv, v, sizeof *v * (size_t)n);
    return add_value(r, (struct value){ .name = nd->out[0], .kind = VAL_TENSOR, .tensor = r->nt++ });
}

/* Shape of a computed value: [1, C, H, W] (or [1, C]; the batch as 1), from start to end
 * (opset 15). */
enum dse_status op_shape(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank, c, h, w;
    int64_t start, end;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st || (st = shape_of(r, in, &c, &h, &w)) || (st = attr_int(r, nd, "start", 0, -rank, rank, &start)) ||
        (st = attr_int(r, nd, "end", rank, -rank, rank, &end)))
        return st;
    const int64_t dims[4] = { 1, c, h, w };
    start += start < 0 ? rank : 0, end += end < 0 ? rank : 0;
    if (rank != 4 && rank != 2) return node_fail(r, DSE_ERR_UNSUPPORTED, "the shape of a rank-%d value", rank);
    return add_computed(r, nd, dims + start, end > start ? (int)(end - start) : 0, 0);
}

/* Gather along axis 0 of an int64 constant (a shape) by constant indices; or of a 1-d float
 * codebook by int32 or int64 constant indices (dse export's compressed weights, issue #35):
 * a float constant of the indices' shape, its values not read (the shape is the weight's). */
enum dse_status op_gather(struct rd *r, const struct node *nd, const struct op *op) {
    int64_t v[MAX_DIMS], idx[MAX_DIMS], out[MAX_DIMS], axis;
    size_t nv, ni;
    const struct tensor *d = in_tensor(r, nd, 0, "data"), *i = d ? in_tensor(r, nd, 1, "indices") : NULL;
    if (!i) return r->err->code;
    enum dse_status st = attr_int(r, nd, "axis", 0, -1, 0, &axis);
    if (st) return st;
    if (d->type == ELEM_FLOAT && d->nd == 1 && (i->type == ELEM_INT32 || i->type == ELEM_INT64)) {
        if (r->nt == r->cap_t) return node_fail(r, DSE_ERR_INTERNAL, "too many constants"); /* one a node: never */
        struct tensor *t = &r->t[r->nt];
        *t = (struct tensor){ .name = nd->out[0], .type = ELEM_FLOAT, .nd = i->nd, .count = i->count };
        memcpy(t->dims, i->dims, sizeof t->dims);
        return add_value(r, (struct value){ .name = nd->out[0], .kind = VAL_TENSOR, .tensor = r->nt++ });
    }
    if (tensor_int64s(d, v, MAX_DIMS, &nv) || tensor_int64s(i, idx, MAX_DIMS, &ni) || d->nd != 1 || i->nd > 1)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "dse reads Gather only of a shape (an int64 constant) by constant "
                         "indices");
    for (size_t k = 0; k < ni; k++) {
        int64_t at = idx[k] < 0 ? idx[k] + (int64_t)nv : idx[k];
        if (at < 0 || at >= (int64_t)nv)
            return node_fail(r, DSE_ERR_CONFIG, "index %lld of %d values", (long long)idx[k], (int)nv);
        out[k] = v[at];
    }
    return add_computed(r, nd, out, (int)ni, i->nd == 0);
}

enum dse_status fold_arith(struct rd *r, const struct node *nd, int *done) {
    const struct value *a = has_in(nd, 0) ? find_value(r, nd->in[0]) : NULL;
    const struct value *b = has_in(nd, 1) ? find_value(r, nd->in[1]) : NULL;
    int64_t x[MAX_DIMS], y[MAX_DIMS], z[MAX_DIMS];
    size_t nx, ny;
    *done = 0;
    if (nd->n_in != 2 || !a || !b || a->kind != VAL_TENSOR || b->kind != VAL_TENSOR ||
        r->t[a->tensor].type != ELEM_INT64 || r->t[b->tensor].type != ELEM_INT64)
        return DSE_OK;
    *done = 1;
    const struct tensor *ta = &r->t[a->tensor], *tb = &r->t[b->tensor];
    if (tensor_int64s(ta, x, MAX_DIMS, &nx) || tensor_int64s(tb, y, MAX_DIMS, &ny) || !nx || !ny ||
        (nx != ny && nx != 1 && ny != 1))
        return node_fail(r, DSE_ERR_UNSUPPORTED, "dse computes %.*s of int64 constants of at most %d values, of one "
                         "length or one a scalar", sn(nd->op), nd->op.p, MAX_DIMS);
    const size_t n = nx > ny ? nx : ny;
    for (size_t k = 0; k < n; k++) {
        const int64_t p = x[nx == 1 ? 0 : k], q = y[ny == 1 ? 0 : k];
        int over = 0;
        if (str_is(nd->op, "Add") || str_is(nd->op, "Sum")) over = __builtin_add_overflow(p, q, &z[k]);
        else if (str_is(nd->op, "Sub")) over = __builtin_sub_overflow(p, q, &z[k]);
        else if (str_is(nd->op, "Mul")) over = __builtin_mul_overflow(p, q, &z[k]);
        else if (!str_is(nd->op, "Div")) return node_fail(r, DSE_ERR_INTERNAL, "no arithmetic for this op");
        else if (q == 0 || (p == INT64_MIN && q == -1)) over = 1;
        else z[k] = p / q; /* Div: C's truncation, as ONNX's integer Div */
        if (over) return node_fail(r, DSE_ERR_CONFIG, "%lld and %lld overflow or divide by 0", (long long)p, (long long)q);
    }
    return add_computed(r, nd, z, (int)n, ta->nd == 0 && tb->nd == 0);
}
