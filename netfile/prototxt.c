/* prototxt.c: Caffe prototxt import: the tree of checked fields (prototxt_text.c) turned
 * into the shared struct dse_net, TRAIN-phase layers only; the writer is prototxt_write.c,
 * the floors prototxt_impl.h. What is imported, what is assumed and how errors read:
 * docs/prototxt.md. */
#include "netfile/netfile.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netfile/prototxt_impl.h"

#define MAX_VALUE     1000000    /* largest size/count we accept for a hyper-parameter */
#define MAX_FILE      (64 << 20) /* bytes dse_prototxt_load reads at most */

/* ---------------------------------------------------------------------------------------
 * Errors */

static enum dse_status fail(struct dse_err *err, enum dse_status code, const char *path,
                            int line, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static enum dse_status fail(struct dse_err *err, enum dse_status code, const char *path,
                            int line, const char *fmt, ...) {
    char buf[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return dse_err_set(err, code, path, line, "%s", buf);
}

/* ---------------------------------------------------------------------------------------
 * Building the network */

enum kind {
    K_INPUT, K_DATA, K_IMAGE_DATA, K_MEMORY_DATA, K_HDF5_DATA, /* data layers first */
    K_CONV, K_POOL, K_RELU, K_DROPOUT, K_CONCAT, K_ELTWISE, K_FC, K_SOFTMAX, K_SOFTMAX_LOSS,
    K_ACCURACY, K_LRN, K_BATCHNORM, K_SCALE, K_DEPTHWISE, K_FLATTEN, K_RESHAPE, K_SLICE, K_SIGMOID,
    K_TANH, K_POWER
};

static const struct {
    const char *v2, *v1; /* type names: LayerParameter string, V1LayerParameter enum */
    enum kind   kind;
} layer_types[] = {
    { "Input",           NULL,            K_INPUT },
    { "Data",            "DATA",          K_DATA },
    { "ImageData",       "IMAGE_DATA",    K_IMAGE_DATA },
    { "MemoryData",      "MEMORY_DATA",   K_MEMORY_DATA },
    { "HDF5Data",        "HDF5_DATA",     K_HDF5_DATA },
    { "Convolution",     "CONVOLUTION",   K_CONV },
    { "Pooling",         "POOLING",       K_POOL },
    { "ReLU",            "RELU",          K_RELU },
    { "Dropout",         "DROPOUT",       K_DROPOUT },
    { "Concat",          "CONCAT",        K_CONCAT },
    { "Eltwise",         "ELTWISE",       K_ELTWISE },
    { "InnerProduct",    "INNER_PRODUCT", K_FC },
    { "Softmax",         "SOFTMAX",       K_SOFTMAX },
    { "SoftmaxWithLoss", "SOFTMAX_LOSS",  K_SOFTMAX_LOSS },
    { "Accuracy",        "ACCURACY",      K_ACCURACY },
    { "LRN",             "LRN",           K_LRN },
    { "BatchNorm",       NULL,            K_BATCHNORM },
    { "Scale",           NULL,            K_SCALE },
    /* Caffe-fork depthwise convolutions: a Convolution with one group per input channel */
    { "ConvolutionDepthwise", NULL,       K_DEPTHWISE },
    { "DepthwiseConvolution", NULL,       K_DEPTHWISE },
    { "Flatten",         "FLATTEN",       K_FLATTEN },
    { "Reshape",         NULL,            K_RESHAPE },
    { "Slice",           "SLICE",         K_SLICE },
    { "Sigmoid",         "SIGMOID",       K_SIGMOID },
    { "TanH",            "TANH",          K_TANH },
    { "Power",           "POWER",         K_POWER },
};

/* Caffe's own layer types that dse does not model, V2 and V1 names (BVLC Caffe's
 * REGISTER_LAYER_CLASS list and caffe.proto's V1LayerParameter.LayerType): refused as not
 * supported, with no near name, since the nearest supported one would mislead
 * (Deconvolution is not a Convolution; issue #34). */
static const struct {
    const char *v2, *v1;
} caffe_unsupported[] = {
    { "AbsVal", "ABSVAL" }, { "ArgMax", "ARGMAX" }, { "BatchReindex", NULL }, { "Bias", NULL },
    { "BNLL", "BNLL" }, { "Clip", NULL }, { "ContrastiveLoss", "CONTRASTIVE_LOSS" }, { "Crop", NULL },
    { "Deconvolution", "DECONVOLUTION" }, { "DummyData", "DUMMY_DATA" }, { "ELU", NULL }, { "Embed", NULL },
    { "EuclideanLoss", "EUCLIDEAN_LOSS" }, { "Exp", "EXP" }, { "Filter", NULL }, { "HDF5Output", "HDF5_OUTPUT" },
    { "HingeLoss", "HINGE_LOSS" }, { "Im2col", "IM2COL" }, { "InfogainLoss", "INFOGAIN_LOSS" }, { "Log", NULL },
    { "LSTM", NULL }, { "MultinomialLogisticLoss", "MULTINOMIAL_LOGISTIC_LOSS" }, { "MVN", "MVN" },
    { "Parameter", NULL }, { "PReLU", NULL }, { "Python", NULL }, { "Reduction", NULL }, { "RNN", NULL },
    { "SigmoidCrossEntropyLoss", "SIGMOID_CROSS_ENTROPY_LOSS" }, { "Silence", "SILENCE" }, { "Split", "SPLIT" },
    { "SPP", NULL }, { "Swish", NULL }, { "Threshold", "THRESHOLD" }, { "Tile", NULL },
    { "WindowData", "WINDOW_DATA" },
};

/* The kind of a layer's type value tn (a V2 string or a V1 enum name); -1 if it names none. */
static int type_kind(const struct ptree *t, const struct pnode *tn, int v1) {
    if (tn->is_msg || tn->vkind != (v1 ? TK_IDENT : TK_STRING)) return -1;
    const char *v = v1 ? t->text + tn->val : str_val(t, tn);
    for (int i = 0; i < DSE_ARRAY_LEN(layer_types); i++) {
        const char *n = v1 ? layer_types[i].v1 : layer_types[i].v2;
        if (n && strlen(n) == tn->val_len && memcmp(n, v, tn->val_len) == 0) return (int)layer_types[i].kind;
    }
    return -1;
}

/* 1 if the layer's type is one of layer_types (0 without a type): ptree.type_known. */
static int type_known(const struct ptree *t, int layer, int v1) {
    int tc = child(t, layer, "type");
    return tc >= 0 && type_kind(t, &t->nodes[tc], v1) >= 0;
}

struct blob {
    char name[DSE_NAME_MAX];
    int  layer; /* producing layer index, or DSE_INPUT_DATA */
    int  label; /* a label blob: consumers drop it */
};

struct build {
    struct ptree                 *t;
    const char                   *path;
    struct dse_err               *err;
    struct dse_net               *net;
    const struct dse_input_shape *ov;
    struct blob                  *blobs;
    int                           n_blobs, cap_blobs;
    struct name_index             by_name;     /* the blobs by name: a deep net reads in linear time */
    int                           have_input, input_line;
    char                          input_name[DSE_NAME_MAX];
    struct param_use {                         /* a learned blob named by param { name: } */
        char name[DSE_NAME_MAX];
        int  layer, blob, line;
    }                            *params;
    int                           n_params, cap_params;
};

static int find_blob(const struct build *b, const char *name) {
    return dse_pt_names_find(&b->by_name, (const char *)b->blobs, sizeof *b->blobs, name);
}

/* Name (or re-produce) blob `name` as the output of `layer`. */
static enum dse_status set_blob(struct build *b, const char *name, int layer, int label) {
    int i = find_blob(b, name);
    if (i < 0) {
        if (b->n_blobs == b->cap_blobs) {
            int cap = b->cap_blobs ? b->cap_blobs * 2 : 64;
            struct blob *p = realloc(b->blobs, sizeof *p * (size_t)cap);
            if (!p) return dse_pt_nomem(b->t);
            b->blobs = p;
            b->cap_blobs = cap;
        }
        i = b->n_blobs++;
        dse_strlcpy(b->blobs[i].name, name, DSE_NAME_MAX);
        if (dse_pt_names_add(&b->by_name, (const char *)b->blobs, sizeof *b->blobs, i)) return b->n_blobs--, dse_pt_nomem(b->t);
    }
    b->blobs[i].layer = layer;
    b->blobs[i].label = label;
    return DSE_OK;
}

/* Copy a string field into a DSE_NAME_MAX buffer. */
static enum dse_status get_name(struct build *b, int node, char *out, const char *what) {
    const struct pnode *nd = &b->t->nodes[node];
    char s[48];
    if (memchr(str_val(b->t, nd), '\0', nd->val_len))
        return fail(b->err, DSE_ERR_CONFIG, b->path, nd->line, "%s '%s' contains a NUL byte", what,
                    dse_pt_show(s, sizeof s, str_val(b->t, nd), nd->val_len));
    if (nd->val_len >= DSE_NAME_MAX)
        return fail(b->err, DSE_ERR_CONFIG, b->path, nd->line,
                    "%s '%s' is %zu characters long; expected at most %d", what,
                    dse_pt_show(s, sizeof s, str_val(b->t, nd), nd->val_len), nd->val_len, DSE_NAME_MAX - 1);
    memcpy(out, str_val(b->t, nd), nd->val_len + 1);
    return DSE_OK;
}

/* Integer field of msg (a *_param node, or -1) within [lo, MAX_VALUE]; *out keeps its
 * default when the field is absent. */
static enum dse_status get_int(struct build *b, int msg, const char *field, int lo, int *out) {
    int c = child(b->t, msg, field);
    if (c < 0) return DSE_OK;
    long long v = b->t->nodes[c].ival;
    if (v < lo || v > MAX_VALUE)
        return fail(b->err, DSE_ERR_CONFIG, b->path, b->t->nodes[c].line,
                    "'%s: %lld' is out of range; expected %d to %d", field, v, lo, MAX_VALUE);
    *out = (int)v;
    return DSE_OK;
}

static int get_bool(const struct ptree *t, int msg, const char *field, int dflt) {
    int c = child(t, msg, field);
    return c < 0 ? dflt : (int)t->nodes[c].ival;
}

/* A size given as `base` (repeated: one value for both, or height then width) or as
 * hname/wname. both: the _h/_w form needs both (kernel, stride: Caffe has no default for
 * the other). *given says if any was there. */
static enum dse_status get_hw(struct build *b, int msg, const char *ctx, const char *base,
                              const char *hname, const char *wname, int both, int lo, int *h,
                              int *w, int *given) {
    const struct ptree *t = b->t;
    enum dse_status st;
    int n = child_count(t, msg, base);
    int hc = hname ? child(t, msg, hname) : -1, wc = wname ? child(t, msg, wname) : -1;
    *given = n > 0 || hc >= 0 || wc >= 0;
    if (n > 2)
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[child_nth(t, msg, base, 2)].line,
                    "%s has %d '%s' values; only 2-D layers are supported (one value, or height "
                    "then width)", ctx, n, base);
    if (n > 0 && (hc >= 0 || wc >= 0))
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[hc >= 0 ? hc : wc].line,
                    "%s gives both '%s' and '%s'/'%s'; expected one or the other", ctx, base, hname, wname);
    if (n > 0) {
        long long v[2];
        for (int i = 0; i < n; i++) {
            const struct pnode *nd = &t->nodes[child_nth(t, msg, base, i)];
            v[i] = nd->ival;
            if (v[i] < lo || v[i] > MAX_VALUE)
                return fail(b->err, DSE_ERR_CONFIG, b->path, nd->line,
                            "'%s: %lld' is out of range; expected %d to %d", base, v[i], lo, MAX_VALUE);
        }
        *h = (int)v[0];
        *w = (int)v[n - 1];
        return DSE_OK;
    }
    if (both && (hc >= 0) != (wc >= 0))
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[hc >= 0 ? hc : wc].line,
                    "%s gives only one of '%s' and '%s'; expected both", ctx, hname, wname);
    if (hname && (st = get_int(b, msg, hname, lo, h))) return st;
    if (wname && (st = get_int(b, msg, wname, lo, w))) return st;
    return DSE_OK;
}

/* Caffe's NetStateRule test against the state we import: phase TRAIN, level 0, no stages. */
static int rule_met(const struct ptree *t, int r) {
    int c;
    if ((c = child(t, r, "phase")) >= 0 && !val_is(t, &t->nodes[c], "TRAIN")) return 0;
    if ((c = child(t, r, "min_level")) >= 0 && t->nodes[c].ival > 0) return 0;
    if ((c = child(t, r, "max_level")) >= 0 && t->nodes[c].ival < 0) return 0;
    return child_count(t, r, "stage") == 0;
}

/* The dims of a BlobShape node (N, C, H, W) as the network input. */
static enum dse_status shape_dims(struct build *b, int shape, const char *what, int *c, int *h,
                                  int *w) {
    const struct ptree *t = b->t;
    int n = child_count(t, shape, "dim");
    long long d[4];
    if (n != 4)
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[shape].line,
                    "%s has %d dims; expected 4 (N, C, H, W)", what, n);
    for (int i = 0; i < 4; i++) {
        const struct pnode *nd = &t->nodes[child_nth(t, shape, "dim", i)];
        d[i] = nd->ival;
        if (d[i] < 1 || d[i] > MAX_VALUE)
            return fail(b->err, DSE_ERR_CONFIG, b->path, nd->line,
                        "'dim: %lld' is out of range; expected 1 to %d", d[i], MAX_VALUE);
    }
    *c = (int)d[1], *h = (int)d[2], *w = (int)d[3]; /* batch size d[0] does not matter */
    return DSE_OK;
}

/* Make blob `name` the network input with shape c x h x w (0 = unknown), after the
 * --input override. missing says what the file lacks when a size stays unknown. */
static enum dse_status set_input(struct build *b, int line, const char *name, int c, int h, int w,
                                 const char *missing) {
    if (b->have_input)
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, line,
                    "second network input '%s' (the first is '%s' at line %d); expected one input",
                    name, b->input_name, b->input_line);
    if (b->ov) {
        if (b->ov->c > 0) c = b->ov->c;
        if (b->ov->h > 0) h = b->ov->h;
        if (b->ov->w > 0) w = b->ov->w;
    }
    if (c <= 0 || h <= 0 || w <= 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, line, "%s; pass the input size with --input C,H,W",
                    missing);
    b->have_input = 1;
    b->input_line = line;
    dse_strlcpy(b->input_name, name, DSE_NAME_MAX);
    b->net->in_c = c, b->net->in_h = h, b->net->in_w = w;
    return set_blob(b, name, DSE_INPUT_DATA, 0);
}

/* Top-level "input:" blobs with input_dim or input_shape (deploy files, V1 files). */
static enum dse_status build_inputs(struct build *b) {
    const struct ptree *t = b->t;
    enum dse_status st;
    int n_in = child_count(t, 0, "input"), n_dim = child_count(t, 0, "input_dim");
    int n_shape = child_count(t, 0, "input_shape");
    if (n_in == 0 && (n_dim > 0 || n_shape > 0)) {
        int c = n_dim > 0 ? child(t, 0, "input_dim") : child(t, 0, "input_shape");
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[c].line,
                    "'%s' without 'input'; expected input: \"data\" naming the blob",
                    n_dim > 0 ? "input_dim" : "input_shape");
    }
    if (n_dim > 0 && n_shape > 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[child(t, 0, "input_dim")].line,
                    "both 'input_shape' and 'input_dim'; expected one of them (Caffe's rule)");
    if (n_dim > 0 && n_dim != 4 * n_in)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[child(t, 0, "input_dim")].line,
                    "%d 'input_dim' values for %d input%s; expected 4 per input (N, C, H, W)",
                    n_dim, n_in, n_in == 1 ? "" : "s");
    for (int i = 0; i < n_in; i++) {
        int node = child_nth(t, 0, "input", i);
        char name[DSE_NAME_MAX], what[DSE_NAME_MAX + 64];
        int c = 0, h = 0, w = 0;
        if ((st = get_name(b, node, name, "input name"))) return st;
        if (strcmp(name, "label") == 0) {
            if ((st = set_blob(b, name, DSE_INPUT_DATA, 1))) return st;
            continue;
        }
        snprintf(what, sizeof what, "input_shape of '%s'", name);
        if (n_shape > 0) {
            int s = child_nth(t, 0, "input_shape", i);
            if (s < 0)
                return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line,
                            "input '%s' has no input_shape; expected one input_shape per input", name);
            if ((st = shape_dims(b, s, what, &c, &h, &w))) return st;
        } else if (n_dim > 0) {
            long long d[4];
            for (int k = 0; k < 4; k++) {
                const struct pnode *nd = &t->nodes[child_nth(t, 0, "input_dim", 4 * i + k)];
                d[k] = nd->ival;
                if (d[k] < 1 || d[k] > MAX_VALUE)
                    return fail(b->err, DSE_ERR_CONFIG, b->path, nd->line,
                                "'input_dim: %lld' is out of range; expected 1 to %d", d[k], MAX_VALUE);
            }
            c = (int)d[1], h = (int)d[2], w = (int)d[3];
        }
        snprintf(what, sizeof what, "input '%s' has no input_dim or input_shape", name);
        if ((st = set_input(b, t->nodes[node].line, name, c, h, w, what))) return st;
    }
    return DSE_OK;
}

static enum dse_status unknown_type(struct build *b, int node, const char *type, int v1) {
    char list[400] = "", hint[96] = "";
    size_t used = 0;
    struct suggest sg;
    int caffes = 0; /* one of Caffe's own types: named as such, no near name suggested */
    for (int i = 0; i < DSE_ARRAY_LEN(caffe_unsupported); i++) {
        const char *n = v1 ? caffe_unsupported[i].v1 : caffe_unsupported[i].v2;
        caffes |= n && !strcmp(n, type);
    }
    dse_pt_suggest_init(&sg, type);
    for (int i = 0; i < DSE_ARRAY_LEN(layer_types); i++) {
        const char *n = v1 ? layer_types[i].v1 : layer_types[i].v2;
        if (!n) continue;
        dse_pt_suggest_add(&sg, n);
        int k = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", n);
        if (k > 0 && (size_t)k < sizeof list - used) used += (size_t)k;
    }
    if (caffes)
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, b->t->nodes[node].line,
                    "Caffe's layer type '%s' is not supported; supported: %s", type, list);
    if (sg.best) snprintf(hint, sizeof hint, " (did you mean '%s'?)", sg.best);
    return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, b->t->nodes[node].line,
                "unknown layer type '%.40s'%s; supported: %s", type, hint, list);
}

/* A data layer: its first top is the network input, a second top is the label. */
static enum dse_status build_data(struct build *b, int node, enum kind k, const char *name,
                                  const char *type, int n_top) {
    const struct ptree *t = b->t;
    enum dse_status st;
    int line = t->nodes[node].line;
    int c = 0, h = 0, w = 0, crop = 0;
    char missing[256], top[DSE_NAME_MAX];
    int tp = child(t, node, "transform_param");
    if (child(t, node, "bottom") >= 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[child(t, node, "bottom")].line,
                    "%s layer '%s' has a bottom; expected none", type, name);
    if (n_top == 0 || n_top > 2)
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, line,
                    "%s layer '%s' has %d tops; expected the data and optionally a label", type,
                    name, n_top);
    if ((st = get_int(b, tp, "crop_size", 0, &crop))) return st;
    switch (k) {
    case K_INPUT: {
        int shape = child(t, child(t, node, "input_param"), "shape");
        if (shape >= 0) {
            char what[DSE_NAME_MAX + 40];
            snprintf(what, sizeof what, "shape of Input layer '%s'", name);
            if ((st = shape_dims(b, child_nth(t, child(t, node, "input_param"), "shape", 0), what,
                                 &c, &h, &w)))
                return st;
        }
        snprintf(missing, sizeof missing, "Input layer '%s' gives no input size (no input_param "
                 "{ shape { dim ... } })", name);
        break;
    }
    case K_DATA:
    case K_IMAGE_DATA: {
        /* Caffe decodes to 3 channels unless told otherwise (docs/prototxt.md). */
        int p = child(t, node, k == K_DATA ? "data_param" : "image_data_param");
        if (!crop && (st = get_int(b, p, "crop_size", 0, &crop))) return st; /* deprecated place */
        c = 3;
        if (get_bool(t, tp, "force_gray", 0)) c = 1;
        if (k == K_IMAGE_DATA && !get_bool(t, p, "is_color", 1)) c = 1;
        if (crop > 0) {
            h = w = crop;
        } else if (k == K_IMAGE_DATA) {
            if ((st = get_int(b, p, "new_height", 0, &h))) return st;
            if ((st = get_int(b, p, "new_width", 0, &w))) return st;
        }
        snprintf(missing, sizeof missing, "%s layer '%s' gives no input size (no transform_param "
                 "{ crop_size }%s)", type, name, k == K_IMAGE_DATA ? " or new_height/new_width" : "");
        break;
    }
    case K_MEMORY_DATA: {
        int p = child(t, node, "memory_data_param");
        if ((st = get_int(b, p, "channels", 0, &c))) return st;
        if ((st = get_int(b, p, "height", 0, &h))) return st;
        if ((st = get_int(b, p, "width", 0, &w))) return st;
        snprintf(missing, sizeof missing, "MemoryData layer '%s' gives no input size (memory_data_param "
                 "needs channels, height and width)", name);
        break;
    }
    default:
        snprintf(missing, sizeof missing, "%s layer '%s' gives no input size (it is in the data files)",
                 type, name);
        break;
    }
    if ((st = get_name(b, child_nth(t, node, "top", 0), top, "top"))) return st;
    if ((st = set_input(b, line, top, c, h, w, missing))) return st;
    if (n_top == 2) {
        if ((st = get_name(b, child_nth(t, node, "top", 1), top, "top"))) return st;
        if ((st = set_blob(b, top, DSE_INPUT_DATA, 1))) return st;
    }
    return DSE_OK;
}

/* Convolution (and the forks' depthwise convolution): convolution_param. */
static enum dse_status build_conv(struct build *b, int node, enum kind k, struct dse_layer *l, const char *ctx) {
    const struct ptree *t = b->t;
    enum dse_status st;
    int given, c, p = child(t, node, "convolution_param");
    l->type = DSE_LAYER_CONV;
    l->num_output = 0;
    if (child(t, p, "num_output") < 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line,
                    "%s has no num_output; expected convolution_param { num_output: N }", ctx);
    if ((st = get_int(b, p, "num_output", 1, &l->num_output))) return st;
    if ((st = get_hw(b, p, ctx, "kernel_size", "kernel_h", "kernel_w", 1, 1, &l->kernel_h,
                     &l->kernel_w, &given)))
        return st;
    if (!given)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line,
                    "%s has no kernel size; expected convolution_param { kernel_size: K } or "
                    "kernel_h and kernel_w", ctx);
    if ((st = get_hw(b, p, ctx, "stride", "stride_h", "stride_w", 1, 1, &l->stride_h, &l->stride_w,
                     &given)))
        return st;
    if ((st = get_hw(b, p, ctx, "pad", "pad_h", "pad_w", 0, 0, &l->pad_h, &l->pad_w, &given)))
        return st;
    if ((st = get_hw(b, p, ctx, "dilation", NULL, NULL, 0, 1, &l->dilation_h, &l->dilation_w,
                     &given)))
        return st;
    if ((st = get_int(b, p, "group", 1, &l->groups))) return st;
    l->depthwise = k == K_DEPTHWISE; /* groups = input channels (dse_net_infer) */
    l->bias = get_bool(t, p, "bias_term", 1);
    if ((c = child(t, p, "axis")) >= 0 && t->nodes[c].ival != 1)
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                    "%s: convolution over axis %lld is not supported; expected axis 1 (channels)",
                    ctx, t->nodes[c].ival);
    return DSE_OK;
}

/* Pooling: pooling_param, Caffe's round_mode or the forks' ceil_mode. */
static enum dse_status build_pool(struct build *b, int node, struct dse_layer *l, const char *ctx) {
    const struct ptree *t = b->t;
    enum dse_status st;
    int given, c, p = child(t, node, "pooling_param");
    l->type = DSE_LAYER_MAXPOOL;
    if ((c = child(t, p, "pool")) >= 0) {
        if (val_is(t, &t->nodes[c], "AVE")) l->type = DSE_LAYER_AVGPOOL;
        if (val_is(t, &t->nodes[c], "STOCHASTIC"))
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                        "%s: STOCHASTIC pooling is not supported; expected pool: MAX or AVE", ctx);
    }
    l->global = get_bool(t, p, "global_pooling", 0);
    if ((st = get_hw(b, p, ctx, "kernel_size", "kernel_h", "kernel_w", 1, 1, &l->kernel_h,
                     &l->kernel_w, &given)))
        return st;
    if (!given && !l->global)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line,
                    "%s has no kernel size; expected pooling_param { kernel_size: K } or "
                    "global_pooling: true", ctx);
    if ((st = get_hw(b, p, ctx, "stride", "stride_h", "stride_w", 1, 1, &l->stride_h, &l->stride_w,
                     &given)))
        return st;
    if ((st = get_hw(b, p, ctx, "pad", "pad_h", "pad_w", 0, 0, &l->pad_h, &l->pad_w, &given)))
        return st;
    if ((c = child(t, p, "round_mode")) >= 0 && val_is(t, &t->nodes[c], "FLOOR"))
        l->round = DSE_ROUND_FLOOR;
    if ((given = child(t, p, "ceil_mode")) >= 0) {
        enum dse_round r = t->nodes[given].ival ? DSE_ROUND_CEIL : DSE_ROUND_FLOOR;
        if (c >= 0 && r != l->round)
            return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[given].line,
                        "%s: 'ceil_mode: %s' contradicts 'round_mode: %s' (line %d); expected one of them",
                        ctx, r == DSE_ROUND_CEIL ? "true" : "false",
                        l->round == DSE_ROUND_CEIL ? "CEIL" : "FLOOR", t->nodes[c].line);
        l->round = r;
    }
    return DSE_OK;
}

/* Reshape: reshape_param { shape }, over all axes, the batch kept. */
static enum dse_status build_reshape(struct build *b, int node, struct dse_layer *l, const char *ctx) {
    const struct ptree *t = b->t;
    int c, p = child(t, node, "reshape_param");
    int shape = child(t, p, "shape"), nd = child_count(t, shape, "dim");
    l->type = DSE_LAYER_RESHAPE;
    if (((c = child(t, p, "axis")) >= 0 && t->nodes[c].ival != 0) ||
        ((c = child(t, p, "num_axes")) >= 0 && t->nodes[c].ival != -1))
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                    "%s: only a reshape of all axes (axis: 0, num_axes: -1) is supported", ctx);
    if (shape < 0 || nd < 1 || nd > 4)
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, shape < 0 ? t->nodes[node].line : t->nodes[shape].line,
                    "%s: reshape_param { shape } has %d dims; dse networks are N x C x H x W, so expected "
                    "1 to 4 dims", ctx, nd);
    for (int d = 0; d < nd; d++) {
        const struct pnode *dn = &t->nodes[child_nth(t, shape, "dim", d)];
        if (dn->ival < -1 || dn->ival > MAX_VALUE)
            return fail(b->err, DSE_ERR_CONFIG, b->path, dn->line,
                        "%s: 'dim: %lld' is out of range; expected -1 (infer), 0 (copy) or 1 to %d", ctx,
                        dn->ival, MAX_VALUE);
        if (d == 0 && dn->ival != 0)
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, dn->line,
                        "%s: the first dim is %lld; expected 0 (keep the batch): dse costs one image", ctx,
                        dn->ival);
        if (d > 0) l->dims[d - 1] = (int)dn->ival;
    }
    for (int d = nd - 1; d < 3; d++) l->dims[d] = 1; /* missing trailing dims: 1 */
    return DSE_OK;
}

/* Hyper-parameters of a layer that is not a data layer. */
static enum dse_status build_params(struct build *b, int node, enum kind k, struct dse_layer *l,
                                    const char *type) {
    const struct ptree *t = b->t;
    enum dse_status st;
    char ctx[DSE_NAME_MAX + 64];
    int p, c;
    snprintf(ctx, sizeof ctx, "%s layer '%s'", type, l->name);
    switch (k) {
    case K_CONV:
    case K_DEPTHWISE:
        return build_conv(b, node, k, l, ctx);
    case K_POOL:
        return build_pool(b, node, l, ctx);
    case K_FC:
        p = child(t, node, "inner_product_param");
        l->type = DSE_LAYER_FC;
        if (child(t, p, "num_output") < 0)
            return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line,
                        "%s has no num_output; expected inner_product_param { num_output: N }", ctx);
        if ((st = get_int(b, p, "num_output", 1, &l->num_output))) return st;
        l->bias = get_bool(t, p, "bias_term", 1);
        if ((c = child(t, p, "axis")) >= 0 && t->nodes[c].ival != 1)
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                        "%s: inner product from axis %lld is not supported; expected axis 1", ctx,
                        t->nodes[c].ival);
        return DSE_OK;
    case K_DROPOUT:
        l->type = DSE_LAYER_DROPOUT;
        if ((c = child(t, child(t, node, "dropout_param"), "dropout_ratio")) >= 0)
            l->dropout_ratio = (float)t->nodes[c].dval;
        return DSE_OK;
    case K_CONCAT: {
        p = child(t, node, "concat_param");
        l->type = DSE_LAYER_CONCAT;
        int cd = child(t, p, "concat_dim"), ax = child(t, p, "axis");
        c = cd >= 0 ? cd : ax; /* Caffe: concat_dim, if given, wins */
        if (c >= 0 && t->nodes[c].ival != 1)
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                        "%s: concatenation along axis %lld is not supported; expected axis 1 (channels)",
                        ctx, t->nodes[c].ival);
        return DSE_OK;
    }
    case K_ELTWISE:
        l->type = DSE_LAYER_ELTWISE;
        l->eltwise_op = DSE_ELTWISE_SUM;
        if ((c = child(t, child(t, node, "eltwise_param"), "operation")) >= 0) {
            if (val_is(t, &t->nodes[c], "PROD")) l->eltwise_op = DSE_ELTWISE_PROD;
            if (val_is(t, &t->nodes[c], "MAX")) l->eltwise_op = DSE_ELTWISE_MAX;
        }
        return DSE_OK;
    case K_LRN:
        p = child(t, node, "lrn_param");
        l->type = DSE_LAYER_LRN;
        if ((c = child(t, p, "alpha")) >= 0) l->lrn_alpha = (float)t->nodes[c].dval;
        if ((c = child(t, p, "beta")) >= 0) l->lrn_beta = (float)t->nodes[c].dval;
        if ((c = child(t, p, "k")) >= 0) l->lrn_k = (float)t->nodes[c].dval;
        if (!(l->lrn_k > 0.0f) || !(l->lrn_alpha >= 0.0f) || !isfinite(l->lrn_beta) || !isfinite(l->lrn_alpha) ||
            !isfinite(l->lrn_k))
            return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line,
                        "%s: lrn_param k %g, alpha %g, beta %g; expected k > 0, alpha >= 0", ctx, (double)l->lrn_k,
                        (double)l->lrn_alpha, (double)l->lrn_beta);
        return get_int(b, p, "local_size", 1, &l->lrn_size);
    case K_BATCHNORM:
        l->type = DSE_LAYER_BATCHNORM;
        l->affine = 0; /* Caffe's BatchNorm only normalizes; a Scale layer learns gamma, beta */
        if ((c = child(t, child(t, node, "batch_norm_param"), "eps")) >= 0) {
            l->bn_eps = (float)t->nodes[c].dval;
            if (!(l->bn_eps > 0.0f) || !isfinite(l->bn_eps))
                return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[c].line,
                            "%s: batch_norm_param eps %g; expected a number > 0", ctx, t->nodes[c].dval);
        }
        return DSE_OK;
    case K_SCALE:
        p = child(t, node, "scale_param");
        l->type = DSE_LAYER_SCALE;
        l->bias = get_bool(t, p, "bias_term", 0);
        if (((c = child(t, p, "axis")) >= 0 && t->nodes[c].ival != 1) ||
            ((c = child(t, p, "num_axes")) >= 0 && t->nodes[c].ival != 1))
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                        "%s: only per-channel scaling (axis: 1, num_axes: 1) is supported", ctx);
        return DSE_OK;
    case K_FLATTEN:
        p = child(t, node, "flatten_param");
        l->type = DSE_LAYER_FLATTEN;
        if (((c = child(t, p, "axis")) >= 0 && t->nodes[c].ival != 1) ||
            ((c = child(t, p, "end_axis")) >= 0 && t->nodes[c].ival != -1 && t->nodes[c].ival != 3))
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                        "%s: only flattening from axis 1 to the last (axis: 1, end_axis: -1) is supported", ctx);
        return DSE_OK;
    case K_RESHAPE:
        return build_reshape(b, node, l, ctx);
    case K_SLICE:
        p = child(t, node, "slice_param");
        l->type = DSE_LAYER_SLICE;
        if (((c = child(t, p, "axis")) >= 0 && t->nodes[c].ival != 1) ||
            ((c = child(t, p, "slice_dim")) >= 0 && t->nodes[c].ival != 1))
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                        "%s: slicing along axis %lld is not supported; expected axis 1 (channels)", ctx,
                        t->nodes[c].ival);
        return DSE_OK;
    case K_POWER:
        p = child(t, node, "power_param");
        l->type = DSE_LAYER_POWER;
        if ((c = child(t, p, "power")) >= 0) l->power = (float)t->nodes[c].dval;
        if ((c = child(t, p, "scale")) >= 0) l->power_scale = (float)t->nodes[c].dval;
        if ((c = child(t, p, "shift")) >= 0) l->power_shift = (float)t->nodes[c].dval;
        return DSE_OK;
    case K_SIGMOID:      l->type = DSE_LAYER_SIGMOID;      return DSE_OK;
    case K_TANH:         l->type = DSE_LAYER_TANH;         return DSE_OK;
    case K_RELU:         l->type = DSE_LAYER_RELU;         return DSE_OK;
    case K_SOFTMAX:      l->type = DSE_LAYER_SOFTMAX;      return DSE_OK;
    case K_SOFTMAX_LOSS: l->type = DSE_LAYER_SOFTMAX_LOSS; return DSE_OK;
    case K_ACCURACY:     l->type = DSE_LAYER_ACCURACY;     return DSE_OK;
    default:
        break;
    }
    return fail(b->err, DSE_ERR_INTERNAL, b->path, t->nodes[node].line, "%s: not a computing layer", ctx);
}

/* A Slice layer: one dse layer per top, each a channel range of the bottom. With several
 * tops they are named "<layer>:<k>"; slice_point gives the ranges' ends, or without it the
 * channels split into equal parts. */
static enum dse_status build_slice(struct build *b, int node, struct dse_layer *l, int n_top) {
    const struct ptree *t = b->t;
    enum dse_status st;
    char base[DSE_NAME_MAX], top[DSE_NAME_MAX];
    int p = child(t, node, "slice_param"), n_pt = child_count(t, p, "slice_point");
    if (n_top == 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line, "Slice layer '%s' has no top", l->name);
    if (l->n_inputs != 1)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line, "Slice layer '%s' has %d bottoms; "
                    "expected 1", l->name, l->n_inputs);
    if (n_pt && n_pt != n_top - 1)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[child(t, p, "slice_point")].line,
                    "Slice layer '%s' has %d slice_point for %d tops; expected %d (one fewer than the tops)",
                    l->name, n_pt, n_top, n_top - 1);
    memcpy(base, l->name, sizeof base);
    for (int k = 0, prev = 0; k < n_top; k++) {
        struct dse_layer s = *l;
        if (n_pt) {
            int end = k < n_pt ? (int)t->nodes[child_nth(t, p, "slice_point", k)].ival : 0;
            if (k < n_pt && end <= prev)
                return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[child_nth(t, p, "slice_point", k)].line,
                            "Slice layer '%s': slice_point %d is not above the one before (%d); expected "
                            "increasing channel indices", base, end, prev);
            s.slice_begin = prev, s.slice_end = end;
            prev = end;
        } else if (n_top > 1) {
            s.slice_part = k, s.slice_parts = n_top;
        }
        if (n_top > 1) {
            char nm[DSE_NAME_MAX + 16];
            snprintf(nm, sizeof nm, "%s:%d", base, k);
            if (strlen(nm) >= DSE_NAME_MAX)
                return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line, "Slice layer name '%.40s...' "
                            "is too long; at most %d characters", base, DSE_NAME_MAX - 5);
            memcpy(s.name, nm, DSE_NAME_MAX);
        }
        if ((st = get_name(b, child_nth(t, node, "top", k), top, "top"))) return st;
        if ((st = dse_net_add(b->net, &s, b->err))) {
            dse_err_name_file(b->err, b->path);
            return st;
        }
        if ((st = set_blob(b, top, b->net->n_layers - 1, 0))) return st;
    }
    return DSE_OK;
}

/* The names of layer l's learned blobs (param { name: }, V1's param: "..."; the first two:
 * weights, bias), by which Caffe shares a blob between layers (siamese nets): a blob whose
 * name an earlier blob has is that one's (l->shared), so the analyzer counts it once; the
 * sizes are checked once shapes are known (check_params). An empty name shares nothing. */
static enum dse_status read_params(struct build *b, int node, int v1, int k, struct dse_layer *l) {
    const struct ptree *t = b->t;
    if (k != K_CONV && k != K_DEPTHWISE && k != K_FC && k != K_SCALE) return DSE_OK;
    for (int i = 0; i < child_count(t, node, "param") && i < 2; i++) {
        int  pn = child_nth(t, node, "param", i), nn = v1 ? pn : child(t, pn, "name");
        char pname[DSE_NAME_MAX];
        enum dse_status st;
        if (nn < 0 || (i == 1 && !l->bias)) continue;
        if ((st = get_name(b, nn, pname, "param name"))) return st;
        if (!pname[0]) continue;
        for (int j = 0; j < b->n_params && !(l->shared & 1 << i); j++)
            if (!strcmp(b->params[j].name, pname)) l->shared |= 1 << i;
        if (b->n_params == b->cap_params) {
            int cap = b->cap_params ? 2 * b->cap_params : 16;
            struct param_use *p = realloc(b->params, sizeof *p * (size_t)cap);
            if (!p) return dse_pt_nomem(b->t);
            b->params = p, b->cap_params = cap;
        }
        struct param_use *u = &b->params[b->n_params++];
        memcpy(u->name, pname, sizeof pname);
        u->layer = b->net->n_layers, u->blob = i, u->line = t->nodes[nn].line;
    }
    return DSE_OK;
}

/* Values of learned blob i (0 weights, 1 bias) of layer l, its shapes inferred; -1 past int64. */
static int64_t blob_values(const struct dse_layer *l, int i) {
    int64_t v = l->out_c;
    int     o = 0;
    if (i == 1 || l->type == DSE_LAYER_SCALE) return v; /* a bias, a scale: one a channel */
    if (l->type == DSE_LAYER_CONV)
        o = __builtin_mul_overflow(v, (int64_t)(l->in_c / l->groups) * l->kernel_h, &v) ||
            __builtin_mul_overflow(v, (int64_t)l->kernel_w, &v);
    else
        o = __builtin_mul_overflow(v, (int64_t)l->in_c * l->in_h, &v) || __builtin_mul_overflow(v, (int64_t)l->in_w, &v);
    return o ? -1 : v;
}

/* Caffe refuses to share a blob between blobs of different sizes: so does dse, once the
 * shapes are inferred (Caffe's STRICT mode also compares the shapes; the sizes are what
 * the costs read). */
static enum dse_status check_params(const struct build *b) {
    const struct dse_net *net = b->net;
    for (int j = 0; j < b->n_params; j++) {
        const struct param_use *u = &b->params[j], *o = u;
        for (int i = 0; i < j && o == u; i++)
            if (!strcmp(b->params[i].name, u->name)) o = &b->params[i];
        const int64_t have = blob_values(&net->layers[u->layer], u->blob);
        const int64_t want = blob_values(&net->layers[o->layer], o->blob);
        if (o != u && have != want)
            return fail(b->err, DSE_ERR_SHAPE, b->path, u->line,
                        "layer '%s': param '%s' would share the blob of layer '%s' (line %d), of %lld values, "
                        "with one of %lld; Caffe shares blobs of one size only", net->layers[u->layer].name, u->name,
                        net->layers[o->layer].name, o->line, (long long)want, (long long)have);
    }
    return DSE_OK;
}

static enum dse_status build_layer(struct build *b, int node, int v1) {
    const struct ptree *t = b->t;
    enum dse_status st;
    int line = t->nodes[node].line;
    int tc = child(t, node, "type");
    int n_inc = child_count(t, node, "include"), n_exc = child_count(t, node, "exclude");
    int n_top = child_count(t, node, "top"), n_bot = child_count(t, node, "bottom");
    char name[DSE_NAME_MAX], type[48], s[48];
    int k = -1;

    /* Phase first: a TEST-only layer may be of any type. */
    if (n_inc > 0 && n_exc > 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, line,
                    "layer has both include and exclude rules; expected one kind (Caffe's rule)");
    if (n_inc > 0) {
        int met = 0;
        for (int i = 0; i < n_inc; i++) met |= rule_met(t, child_nth(t, node, "include", i));
        if (!met) return DSE_OK;
    }
    for (int i = 0; i < n_exc; i++)
        if (rule_met(t, child_nth(t, node, "exclude", i))) return DSE_OK;

    if (child(t, node, "name") >= 0) {
        if ((st = get_name(b, child(t, node, "name"), name, "layer name"))) return st;
    } else if (n_top > 0) {
        if ((st = get_name(b, child_nth(t, node, "top", 0), name, "top"))) return st;
    } else {
        snprintf(name, sizeof name, "layer%d", b->net->n_layers);
    }
    if (tc < 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, line, "layer '%s' has no type; expected %s",
                    name, v1 ? "type: CONVOLUTION or another V1 type" : "type: \"Convolution\" or another type");
    const struct pnode *tn = &t->nodes[tc];
    dse_pt_show(type, sizeof type, v1 ? t->text + tn->val : str_val(t, tn), tn->val_len);
    if ((k = type_kind(t, tn, v1)) < 0) return unknown_type(b, tc, type, v1);
    if (k <= K_HDF5_DATA) return build_data(b, node, (enum kind)k, name, type, n_top);

    struct dse_layer l = dse_layer_make(DSE_LAYER_RELU, name);
    l.line = line;
    const char *slash = strrchr(name, '/'); /* "<fire>/<part>": a part of Fire module <fire> */
    if (slash && slash != name && (l.role = dse_role_from_suffix(slash + 1)) != DSE_ROLE_NONE) {
        memcpy(l.module, name, (size_t)(slash - name));
        l.module[slash - name] = '\0';
    }
    if ((st = build_params(b, node, (enum kind)k, &l, type))) return st;

    if (n_top > 1 && k != K_SLICE)
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[child_nth(t, node, "top", 1)].line,
                    "layer '%s' has %d tops; only data and Slice layers may have more than one", name, n_top);
    if (n_bot == 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, line,
                    "layer '%s' has no bottom; expected bottom: \"<blob>\" naming its input", name);
    char first_bottom[DSE_NAME_MAX] = "";
    for (int i = 0; i < n_bot; i++) {
        int bn = child_nth(t, node, "bottom", i);
        char bot[DSE_NAME_MAX];
        if ((st = get_name(b, bn, bot, "bottom"))) return st;
        int bi = find_blob(b, bot);
        if (bi < 0) {
            char hint[200] = "";
            struct suggest sg;
            dse_pt_suggest_init(&sg, bot);
            for (int j = 0; j < b->n_blobs; j++) dse_pt_suggest_add(&sg, b->blobs[j].name);
            if (sg.best) snprintf(hint, sizeof hint, " (did you mean '%s'?)", sg.best);
            if (!b->have_input)
                snprintf(hint, sizeof hint, "; no network input is defined before it (expected an "
                         "Input or Data layer, or input: \"%s\" with input_dim)", dse_pt_show(s, sizeof s, bot, strlen(bot)));
            return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[bn].line,
                        "layer '%s': bottom '%s' is not the top of any earlier layer%s", name,
                        dse_pt_show(s, sizeof s, bot, strlen(bot)), hint);
        }
        if (i == 0) memcpy(first_bottom, bot, sizeof bot);
        if (b->blobs[bi].label) continue; /* the label feeds only loss/accuracy: not modeled */
        if (l.n_inputs == DSE_MAX_INPUTS)
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[bn].line,
                        "layer '%s' has more than %d bottoms", name, DSE_MAX_INPUTS);
        l.inputs[l.n_inputs++] = b->blobs[bi].layer;
    }
    if (l.n_inputs == 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, line,
                    "layer '%s' takes only the label; expected a data bottom too", name);
    if (k == K_SLICE) return build_slice(b, node, &l, n_top);
    char top[DSE_NAME_MAX] = "";
    if (n_top == 1 && (st = get_name(b, child(t, node, "top"), top, "top"))) return st;
    l.in_place = n_top == 1 && strcmp(top, first_bottom) == 0 && !b->blobs[find_blob(b, top)].label;
    if ((st = read_params(b, node, v1, k, &l))) return st;

    st = dse_net_add(b->net, &l, b->err);
    if (st) {
        dse_err_name_file(b->err, b->path);
        return st;
    }
    return n_top == 1 ? set_blob(b, top, b->net->n_layers - 1, 0) : DSE_OK;
}

/* A module is a Fire module only if it has a squeeze layer: "inception_3a/concat" alone
 * is a layer of its own, not a module. */
static void drop_non_fire_modules(struct dse_net *net) {
    for (int i = 0; i < net->n_layers; i++) {
        struct dse_layer *l = &net->layers[i];
        int fire = 0;
        for (int j = 0; j < net->n_layers && l->module[0] && !fire; j++)
            fire = net->layers[j].role == DSE_ROLE_SQUEEZE && !strcmp(net->layers[j].module, l->module);
        if (!fire) l->module[0] = '\0', l->role = DSE_ROLE_NONE;
    }
}

static enum dse_status build_net(struct build *b) {
    const struct ptree *t = b->t;
    enum dse_status st;
    int c, first_v2 = -1, first_v1 = -1;
    if ((c = child(t, 0, "name")) >= 0) {
        const struct pnode *nd = &t->nodes[c];
        char s[48];
        if (nd->val_len >= DSE_NAME_MAX || memchr(str_val(t, nd), '\0', nd->val_len))
            return fail(b->err, DSE_ERR_CONFIG, b->path, nd->line,
                        "network name '%s' is longer than %d characters or holds a NUL byte",
                        dse_pt_show(s, sizeof s, str_val(t, nd), nd->val_len), DSE_NAME_MAX - 1);
        memcpy(b->net->name, str_val(t, nd), nd->val_len + 1);
    }
    for (c = t->nodes[0].first; c >= 0; c = t->nodes[c].next) {
        if (first_v2 < 0 && name_is(t, &t->nodes[c], "layer")) first_v2 = c;
        if (first_v1 < 0 && name_is(t, &t->nodes[c], "layers")) first_v1 = c;
    }
    if (first_v2 >= 0 && first_v1 >= 0) {
        int later = first_v2 > first_v1 ? first_v2 : first_v1;
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[later].line,
                    "the file mixes 'layer' (line %d) and 'layers' (V1, line %d); expected one format",
                    t->nodes[first_v2].line, t->nodes[first_v1].line);
    }
    if ((st = build_inputs(b))) return st;
    for (c = t->nodes[0].first; c >= 0; c = t->nodes[c].next) {
        int v1 = name_is(t, &t->nodes[c], "layers");
        if (!v1 && !name_is(t, &t->nodes[c], "layer")) continue;
        if ((st = build_layer(b, c, v1))) return st;
    }
    if (!b->have_input)
        return fail(b->err, DSE_ERR_CONFIG, b->path, 0,
                    "no network input; expected an Input or Data layer, or input: \"data\" with "
                    "input_dim or input_shape");
    return DSE_OK;
}

enum dse_status dse_prototxt_parse(const char *text, size_t len, const char *path,
                                   const struct dse_input_shape *ov, struct dse_net *out,
                                   struct dse_err *err) {
    struct ptree t;
    struct build b;
    enum dse_status st;
    dse_net_init(out, "", 0, 0, 0);
    memset(&t, 0, sizeof t);
    t.text = text ? text : "";
    t.len  = text ? len : 0;
    t.line = 1;
    t.path = path;
    t.err  = err;
    t.type_known = type_known;
    memset(&b, 0, sizeof b);
    b.t = &t, b.path = path, b.err = err, b.net = out, b.ov = ov;

    st = dse_pt_read(&t);
    if (!st) st = build_net(&b);
    if (!st) drop_non_fire_modules(out);
    if (!st && (st = dse_net_check_names(out, err))) dse_err_name_file(err, path);
    if (!st) st = dse_net_infer(out, path, err);
    if (!st) st = check_params(&b);
    free(b.params);
    free(t.nodes);
    free(t.pool);
    free(b.blobs);
    free(b.by_name.slots);
    if (st) dse_net_deinit(out);
    return st;
}

enum dse_status dse_prototxt_load(const char *path, const struct dse_input_shape *ov,
                                  struct dse_net *out, struct dse_err *err) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    enum dse_status st;
    dse_net_init(out, "", 0, 0, 0);
    if (!f) return dse_err_set(err, DSE_ERR_IO, path, 0, "cannot open: %s", strerror(errno));
    for (;;) {
        if (len == cap) {
            if (cap >= MAX_FILE) {
                free(buf);
                fclose(f);
                return dse_err_set(err, DSE_ERR_IO, path, 0, "file is larger than %d MiB; expected "
                                   "a network description", MAX_FILE >> 20);
            }
            cap = cap ? cap * 2 : 65536;
            char *p = realloc(buf, cap);
            if (!p) {
                free(buf);
                fclose(f);
                return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory reading the file");
            }
            buf = p;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) break;
    }
    if (ferror(f)) {
        int e = errno;
        free(buf);
        fclose(f);
        return dse_err_set(err, DSE_ERR_IO, path, 0, "cannot read: %s", strerror(e));
    }
    fclose(f);
    st = dse_prototxt_parse(buf, len, path, ov, out, err);
    free(buf);
    return st;
}
