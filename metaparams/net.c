/* net.c: building networks and inferring their shapes exactly as Caffe does
 * (conv_layer.cpp, pooling_layer.cpp, inner_product_layer.cpp). The rules are written
 * out with their sources in docs/conventions.md. */
#include "metaparams/net.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

static const struct {
    const char *name;
    int min_in, max_in, weighted, in_place, view;
} layer_info[DSE_LAYER_COUNT] = {
#define DSE_LAYER(e, name, min_in, max_in, weighted, in_place, view, caffe) \
    { name, min_in, max_in, weighted, in_place, view },
#include "metaparams/layers.def"
#undef DSE_LAYER
};

static const char *const layer_names[DSE_LAYER_COUNT] = {
#define DSE_LAYER(e, name, min_in, max_in, weighted, in_place, view, caffe) [DSE_LAYER_##e] = name,
#include "metaparams/layers.def"
#undef DSE_LAYER
};

const char *dse_layer_type_str(enum dse_layer_type t) {
    return dse_name_of(layer_names, DSE_LAYER_COUNT, (int)t, "?");
}

int dse_layer_type_from_str(const char *s, enum dse_layer_type *out) {
    int t = dse_name_find(layer_names, DSE_LAYER_COUNT, s);
    if (t < 0) return -1;
    *out = (enum dse_layer_type)t;
    return 0;
}

int dse_layer_type_weighted(enum dse_layer_type t) {
    return (unsigned)t < DSE_LAYER_COUNT ? layer_info[t].weighted : 0;
}

int dse_layer_type_in_place(enum dse_layer_type t) {
    return (unsigned)t < DSE_LAYER_COUNT ? layer_info[t].in_place : 0;
}

int dse_layer_type_view(enum dse_layer_type t) {
    return (unsigned)t < DSE_LAYER_COUNT ? layer_info[t].view : 0;
}

const char *dse_layer_caffe_type(enum dse_layer_type t) {
    static const char *const caffe_type[DSE_LAYER_COUNT] = {
#define DSE_LAYER(e, name, min_in, max_in, weighted, in_place, view, caffe) [DSE_LAYER_##e] = caffe,
#include "metaparams/layers.def"
#undef DSE_LAYER
    };
    return dse_name_of(caffe_type, DSE_LAYER_COUNT, (int)t, "?");
}

static const char *const role_suffix[DSE_ROLE_COUNT] = {
    [DSE_ROLE_NONE] = "",
#define DSE_ROLE(e, suffix) [DSE_ROLE_##e] = suffix,
#include "metaparams/roles.def"
#undef DSE_ROLE
};

const char *dse_role_suffix(enum dse_role r) { return (unsigned)r < DSE_ROLE_COUNT ? role_suffix[r] : ""; }

enum dse_role dse_role_from_suffix(const char *s) {
    int r = dse_name_find(role_suffix, DSE_ROLE_COUNT, s); /* NONE's "" is never found */
    return r < 0 ? DSE_ROLE_NONE : (enum dse_role)r;
}

static const char *const bypass_names[] = {
    [DSE_BYPASS_NONE] = "none", [DSE_BYPASS_SIMPLE] = "simple", [DSE_BYPASS_COMPLEX] = "complex",
};

const char *dse_bypass_str(enum dse_bypass b) {
    return dse_name_of(bypass_names, DSE_ARRAY_LEN(bypass_names), (int)b, "?");
}

/* Caffe's defaults. The names are left empty, not cleared whole: the generator builds
 * millions of layers and the 192 name bytes would dominate. */
static void layer_defaults(struct dse_layer *l, enum dse_layer_type t) {
    memset(l, 0, offsetof(struct dse_layer, name));
    l->name[0]    = l->module[0] = '\0';
    l->type       = t;
    l->stride_h   = l->stride_w   = 1;
    l->dilation_h = l->dilation_w = 1;
    l->groups     = 1;
    l->bias       = 1;
    l->affine     = 1;
    l->round      = DSE_ROUND_CEIL;
    l->lrn_size   = 5;
    l->lrn_alpha  = l->lrn_k = 1.0f, l->lrn_beta = 0.75f;
    l->bn_eps     = 1e-5f;
    l->dropout_ratio = 0.5f;
    l->power      = l->power_scale = 1.0f;
    memset(&l->channel_shared, 0, sizeof *l - offsetof(struct dse_layer, channel_shared)); /* the tail: 0, "" */
}

struct dse_layer dse_layer_make(enum dse_layer_type t, const char *name) {
    struct dse_layer l;
    memset(&l, 0, sizeof l);
    layer_defaults(&l, t);
    dse_strlcpy(l.name, name, DSE_NAME_MAX);
    return l;
}

void dse_net_init(struct dse_net *net, const char *name, int c, int h, int w) {
    memset(net, 0, sizeof *net);
    dse_strlcpy(net->name, name ? name : "", DSE_NAME_MAX);
    net->in_c = c;
    net->in_h = h;
    net->in_w = w;
}

void dse_net_deinit(struct dse_net *net) {
    if (!net) return;
    free(net->layers);
    net->layers = NULL;
    net->n_layers = net->cap_layers = 0;
}

enum dse_status dse_net_copy(struct dse_net *dst, const struct dse_net *src, struct dse_err *err) {
    *dst = *src;
    dst->layers = NULL;
    dst->cap_layers = dst->n_layers;
    if (src->n_layers > 0) {
        dst->layers = malloc(sizeof *dst->layers * (size_t)src->n_layers);
        if (!dst->layers) {
            dst->n_layers = dst->cap_layers = 0;
            return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory copying network");
        }
        memcpy(dst->layers, src->layers, sizeof *dst->layers * (size_t)src->n_layers);
    }
    return DSE_OK;
}

int dse_net_classifier(const struct dse_net *net) {
    for (int i = net->n_layers - 1; i >= 0; i--)
        if (net->layers[i].type == DSE_LAYER_CONV || net->layers[i].type == DSE_LAYER_FC) return i;
    return -1;
}

double dse_net_prune_density(const struct dse_net *net, int i, double d) {
    if (i < 0 || i >= net->n_layers || !dse_layer_type_weighted(net->layers[i].type)) return 1.0;
    int first = -1;
    for (int k = 0; k < net->n_layers && first < 0; k++)
        if (net->layers[k].type == DSE_LAYER_CONV) first = k;
    return i == first || i == dse_net_classifier(net) ? sqrt(d) : d;
}

enum dse_status dse_net_set_classes(struct dse_net *net, int classes, const char *file, struct dse_err *err) {
    int k = dse_net_classifier(net);
    if (classes < 1 || classes > DSE_DIM_MAX)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%d classes is out of range; expected 1..%d", classes,
                           DSE_DIM_MAX);
    if (k < 0)
        return dse_err_set(err, DSE_ERR_SHAPE, file, 0, "the network has no conv or fc layer to fit to %d classes",
                           classes);
    net->layers[k].num_output = classes;
    return dse_net_infer(net, file, err);
}

int dse_net_find(const struct dse_net *net, const char *name) {
    for (int i = net->n_layers - 1; i >= 0; i--)
        if (strcmp(net->layers[i].name, name) == 0) return i;
    return -1;
}

struct name_ref {
    const char *name;
    int         key; /* 2 x layer index, + 1 for the layer's own name (a module's comes first) */
};

static int name_ref_cmp(const void *a, const void *b) {
    const struct name_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->key > y->key) - (x->key < y->key);
}

enum dse_status dse_net_check_names(const struct dse_net *net, struct dse_err *err) {
    struct name_ref *r = malloc(sizeof *r * (2 * (size_t)net->n_layers + 1));
    size_t n = 0, dup = 0;
    if (!r) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory checking layer names");
    for (int i = 0; i < net->n_layers; i++) {
        const struct dse_layer *l = &net->layers[i];
        if (l->module[0] && l->role == DSE_ROLE_SQUEEZE) r[n++] = (struct name_ref){ .name = l->module, .key = 2 * i };
        r[n++] = (struct name_ref){ .name = l->name, .key = 2 * i + 1 };
    }
    qsort(r, n, sizeof *r, name_ref_cmp);
    for (size_t i = 1; i < n; i++) /* the repeat that comes first in the file */
        if (!strcmp(r[i].name, r[i - 1].name) && (!dup || r[i].key < r[dup].key)) dup = i;
    enum dse_status st = DSE_OK;
    if (dup)
        st = dse_err_set(err, DSE_ERR_CONFIG, NULL, net->layers[r[dup].key / 2].line,
                         "layer name '%s' is used twice", r[dup].name);
    free(r);
    return st;
}

/* The slot for the next layer, growing the array when full; NULL if out of memory. */
static struct dse_layer *net_reserve(struct dse_net *net, struct dse_err *err) {
    if (net->n_layers == net->cap_layers) {
        int cap = net->cap_layers ? net->cap_layers * 2 : 32;
        struct dse_layer *p = realloc(net->layers, sizeof *p * (size_t)cap);
        if (!p) {
            dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory adding layer");
            return NULL;
        }
        net->layers = p;
        net->cap_layers = cap;
    }
    return &net->layers[net->n_layers];
}

enum dse_status dse_net_reserve(struct dse_net *net, int n, struct dse_err *err) {
    if (n <= net->cap_layers) return DSE_OK;
    struct dse_layer *p = realloc(net->layers, sizeof *p * (size_t)n);
    if (!p) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory adding layer");
    net->layers = p;
    net->cap_layers = n;
    return DSE_OK;
}

enum dse_status dse_net_add(struct dse_net *net, const struct dse_layer *l, struct dse_err *err) {
    if ((unsigned)l->type >= DSE_LAYER_COUNT)
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, l->line, "layer '%s': bad type", l->name);
    struct dse_layer *d = net_reserve(net, err);
    if (!d) return DSE_ERR_NOMEM;
    *d = *l;
    return dse_net_commit(net, err);
}

struct dse_layer *dse_net_push(struct dse_net *net, enum dse_layer_type t, struct dse_err *err) {
    struct dse_layer *l = net_reserve(net, err);
    if (l) layer_defaults(l, t);
    return l;
}

/* Check the layer in the slot after the last one and make it part of the network. */
enum dse_status dse_net_commit(struct dse_net *net, struct dse_err *err) {
    int idx = net->n_layers;
    struct dse_layer *d = &net->layers[idx];
    if ((unsigned)d->type >= DSE_LAYER_COUNT)
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, d->line, "layer '%s': bad type", d->name);
    if (d->n_inputs == 0) {
        d->n_inputs  = 1;
        d->inputs[0] = idx - 1; /* -1 == DSE_INPUT_DATA for the first layer */
    }
    const char *tn = layer_info[d->type].name;
    if (d->n_inputs < layer_info[d->type].min_in || d->n_inputs > layer_info[d->type].max_in)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, d->line,
                           "layer '%s' (%s) has %d inputs; expected %d to %d", d->name, tn,
                           d->n_inputs, layer_info[d->type].min_in, layer_info[d->type].max_in);
    for (int i = 0; i < d->n_inputs; i++)
        if (d->inputs[i] < DSE_INPUT_DATA || d->inputs[i] >= idx)
            return dse_err_set(err, DSE_ERR_INTERNAL, NULL, d->line,
                               "layer '%s': input %d is not an earlier layer", d->name, i);
    if (d->in_place && !layer_info[d->type].in_place) {
        char can[200]; /* "relu, dropout, ... and power", from the table */
        int o = 0, last = 0;
        for (int t = 0; t < DSE_LAYER_COUNT; t++)
            if (layer_info[t].in_place) last = t;
        for (int t = 0, k = 0; t < DSE_LAYER_COUNT && o < (int)sizeof can; t++)
            if (layer_info[t].in_place)
                o += snprintf(can + o, sizeof can - (size_t)o, "%s%s", k++ ? (t == last ? " and " : ", ") : "",
                              layer_info[t].name);
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, d->line,
                           "layer '%s' (%s) cannot work in place (top == bottom); only %s can", d->name, tn, can);
    }
    if (d->in_place && d->inputs[0] == DSE_INPUT_DATA)
        d->in_place = 0; /* nothing to overwrite but the data blob: count it as a new tensor */
    /* Reading a tensor that an in-place layer after its producer overwrote: that layer
     * must keep its own output. Scans only the layers in between. */
    for (int k = 0; k < d->n_inputs; k++) {
        int src = d->inputs[k];
        for (int j = src + 1; j < idx; j++)
            if (net->layers[j].in_place && net->layers[j].inputs[0] == src) net->layers[j].in_place = 0;
    }
    net->n_layers++;
    return DSE_OK;
}

static int in_shape(const struct dse_net *net, int input, int *c, int *h, int *w) {
    if (input == DSE_INPUT_DATA) {
        *c = net->in_c, *h = net->in_h, *w = net->in_w;
    } else {
        const struct dse_layer *p = &net->layers[input];
        *c = p->out_c, *h = p->out_h, *w = p->out_w;
    }
    return 0;
}

static void in_rf(const struct dse_net *net, int input, int *rh, int *rw, int *jh, int *jw) {
    if (input == DSE_INPUT_DATA) {
        *rh = *rw = *jh = *jw = 1;
    } else {
        const struct dse_layer *p = &net->layers[input];
        *rh = p->rf_h, *rw = p->rf_w, *jh = p->jump_h, *jw = p->jump_w;
    }
}

/* Caffe pooling_layer.cpp Reshape(): ceil mode, then "if we have padding, ensure that
 * the last pooling starts strictly inside the image (instead of at the padding);
 * otherwise clip the last". padded: pad_h || pad_w, as Caffe tests it. */
static int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int padded,
                        enum dse_round round) {
    int64_t num = in + 2 * p - k, out;
    if (s == 1)
        out = num + 1;
    else if (round == DSE_ROUND_FLOOR)
        out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
    else
        out = (num >= 0 ? (num + s - 1) / s : -((-num) / s)) + 1;
    /* Both modes, both dimensions, when either dimension has padding (Caffe). */
    if (padded && (out - 1) * s >= in + p) out--;
    return out;
}

/* A shape error of layer l. dse_err_layer is out of line and cold, so that the hot path of
 * infer_one keeps no message buffer. */
#define shape_err(err, file, l, ...) \
    dse_err_layer(err, DSE_ERR_SHAPE, file, (l)->line, (l)->name, dse_layer_type_str((l)->type), __VA_ARGS__)

/* Receptive fields saturate at INT_MAX rather than overflow (many strided layers). */
static int rf_grow(int rf, int64_t k, int jump) {
    int64_t v = rf + (k - 1) * (int64_t)jump;
    return v > INT_MAX ? INT_MAX : (int)v;
}

static int rf_mul(int jump, int stride) {
    int64_t v = (int64_t)jump * stride;
    return v > INT_MAX ? INT_MAX : (int)v;
}

/* a * b * c, or -1 if that overflows int64 (three dimensions of up to 2^24 can). */
static int64_t mul3(int64_t a, int64_t b, int64_t c) {
    int64_t ab, abc;
    return __builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc) ? -1 : abc;
}

/* Shape and receptive field of layer i from its inputs. Works in locals and stores once
 * at the end: stores through l could alias the input layers' fields and force reloads.
 * Over 150 lines on purpose: one switch case per layer type, each Caffe's rule as
 * docs/conventions.md ("Shapes") writes it, read side by side; the cases share the locals
 * above and the one store below, which a function per type would have to pass around, on
 * the generator's hot path. */
static enum dse_status infer_one(struct dse_net *net, int i, const char *file, struct dse_err *err) {
    struct dse_layer *l = &net->layers[i];
    int c, h, w, rh, rw, jh, jw;
    in_shape(net, l->inputs[0], &c, &h, &w);
    in_rf(net, l->inputs[0], &rh, &rw, &jh, &jw);
    int oc = c, oh = h, ow = w, orh = rh, orw = rw, ojh = jh, ojw = jw;

    switch (l->type) {
    case DSE_LAYER_CONV: {
        const int kh = l->kernel_h, kw = l->kernel_w, sh = l->stride_h, sw = l->stride_w;
        const int dh = l->dilation_h, dw = l->dilation_w, ph = l->pad_h, pw = l->pad_w;
        if (l->depthwise) l->groups = c;
        const int g = l->groups, f = l->num_output;
        if (f <= 0 || f > DSE_DIM_MAX) return shape_err(err, file, l, "filters = %d; expected 1 to %d", f, DSE_DIM_MAX);
        if (kh <= 0 || kw <= 0) return shape_err(err, file, l, "kernel must be >= 1");
        if (sh <= 0 || sw <= 0) return shape_err(err, file, l, "stride must be >= 1");
        if (dh <= 0 || dw <= 0) return shape_err(err, file, l, "dilation must be >= 1");
        if (ph < 0 || pw < 0) return shape_err(err, file, l, "pad must be >= 0");
        /* Integer division costs tens of cycles: skip it in the common cases (groups 1,
         * stride 1), which keeps a whole-network analysis near a microsecond. */
        if (g != 1 && (g <= 0 || c % g || f % g))
            return shape_err(err, file, l, "groups = %d must divide input channels (%d) and filters (%d)",
                             g, c, f);
        /* int64: hyper-parameters up to DSE_DIM_MAX cannot overflow these. */
        int64_t keh = (int64_t)dh * (kh - 1) + 1, kew = (int64_t)dw * (kw - 1) + 1;
        int64_t nh = h + 2 * (int64_t)ph - keh, nw = w + 2 * (int64_t)pw - kew;
        /* Caffe divides with C's truncation: a kernel that overhangs its padded input by
         * less than the stride still gives one output. */
        int64_t oh64 = (sh == 1 ? nh : nh / sh) + 1, ow64 = (sw == 1 ? nw : nw / sw) + 1;
        if (oh64 <= 0 || ow64 <= 0)
            return shape_err(err, file, l, "kernel %lldx%lld (dilated) is larger than its padded input %lldx%lld",
                             (long long)keh, (long long)kew, (long long)h + 2 * ph, (long long)w + 2 * pw);
        if (oh64 > DSE_DIM_MAX || ow64 > DSE_DIM_MAX)
            return shape_err(err, file, l, "output %lldx%lld exceeds %d", (long long)oh64, (long long)ow64, DSE_DIM_MAX);
        oc = f, oh = (int)oh64, ow = (int)ow64;
        orh = rf_grow(rh, keh, jh), orw = rf_grow(rw, kew, jw);
        ojh = rf_mul(jh, sh), ojw = rf_mul(jw, sw);
        break;
    }
    case DSE_LAYER_MAXPOOL:
    case DSE_LAYER_AVGPOOL: {
        int kh = l->kernel_h, kw = l->kernel_w, sh = l->stride_h, sw = l->stride_w;
        int ph = l->pad_h, pw = l->pad_w;
        if (l->global) {
            kh = h, kw = w, sh = sw = 1, ph = pw = 0;
            l->kernel_h = kh, l->kernel_w = kw, l->stride_h = l->stride_w = 1;
            l->pad_h = l->pad_w = 0;
        }
        if (kh <= 0 || kw <= 0) return shape_err(err, file, l, "kernel must be >= 1");
        if (sh <= 0 || sw <= 0) return shape_err(err, file, l, "stride must be >= 1");
        if (ph < 0 || pw < 0) return shape_err(err, file, l, "pad must be >= 0");
        if (ph >= kh || pw >= kw) return shape_err(err, file, l, "pad must be smaller than kernel (Caffe's rule)");
        int64_t oh64 = pool_out(h, kh, sh, ph, ph || pw, l->round);
        int64_t ow64 = pool_out(w, kw, sw, pw, ph || pw, l->round);
        if (oh64 > DSE_DIM_MAX || ow64 > DSE_DIM_MAX)
            return shape_err(err, file, l, "output %lldx%lld exceeds %d", (long long)oh64, (long long)ow64, DSE_DIM_MAX);
        oh = (int)(oh64 < 0 ? 0 : oh64), ow = (int)(ow64 < 0 ? 0 : ow64);
        orh = rf_grow(rh, kh, jh), orw = rf_grow(rw, kw, jw);
        ojh = rf_mul(jh, sh), ojw = rf_mul(jw, sw);
        break;
    }
    case DSE_LAYER_FC:
        if (l->num_output <= 0 || l->num_output > DSE_DIM_MAX)
            return shape_err(err, file, l, "outputs = %d; expected 1 to %d", l->num_output, DSE_DIM_MAX);
        oc = l->num_output, oh = ow = 1;
        orh = rf_grow(rh, h, jh), orw = rf_grow(rw, w, jw);
        ojh = rf_mul(jh, h), ojw = rf_mul(jw, w);
        break;
    case DSE_LAYER_CONCAT:
    case DSE_LAYER_ELTWISE: {
        int64_t sum_c = c;
        for (int k = 1; k < l->n_inputs; k++) {
            int c2, h2, w2, rh2, rw2, jh2, jw2;
            in_shape(net, l->inputs[k], &c2, &h2, &w2);
            in_rf(net, l->inputs[k], &rh2, &rw2, &jh2, &jw2);
            if (h2 != h || w2 != w || (l->type == DSE_LAYER_ELTWISE && c2 != c))
                return shape_err(err, file, l, "input %d is %dx%dx%d but input 0 is %dx%dx%d%s", k,
                                 c2, h2, w2, c, h, w,
                                 l->type == DSE_LAYER_CONCAT ? " (heights and widths must match)" : "");
            sum_c += c2;
            if (rh2 > orh) orh = rh2;
            if (rw2 > orw) orw = rw2;
            if (jh2 > ojh) ojh = jh2;
            if (jw2 > ojw) ojw = jw2;
        }
        if (sum_c > DSE_DIM_MAX)
            return shape_err(err, file, l, "%lld channels exceed %d", (long long)sum_c, DSE_DIM_MAX);
        if (l->type == DSE_LAYER_CONCAT) oc = (int)sum_c;
        break;
    }
    case DSE_LAYER_SOFTMAX_LOSS:
    case DSE_LAYER_ACCURACY:
        oc = oh = ow = 1; /* one scalar for the whole batch */
        break;
    case DSE_LAYER_LRN:
        if (l->lrn_size <= 0 || l->lrn_size % 2 == 0) return shape_err(err, file, l, "local_size must be odd and >= 1");
        break;
    case DSE_LAYER_DROPOUT:
        if (!(l->dropout_ratio >= 0.0f && l->dropout_ratio < 1.0f))
            return shape_err(err, file, l, "dropout ratio must be in [0, 1)");
        break;
    case DSE_LAYER_FLATTEN: /* Caffe's Flatten from axis 1: C x H x W values as channels */
        if (mul3(c, h, w) > DSE_DIM_MAX || mul3(c, h, w) < 0)
            return shape_err(err, file, l, "%d x %d x %d values exceed %d", c, h, w, DSE_DIM_MAX);
        oc = c * h * w, oh = ow = 1;
        orh = rf_grow(rh, h, jh), orw = rf_grow(rw, w, jw); /* each output sees the whole map */
        ojh = rf_mul(jh, h), ojw = rf_mul(jw, w);
        break;
    case DSE_LAYER_RESHAPE: {
        const int64_t in = mul3(c, h, w), from[3] = { c, h, w };
        if (in < 0) return shape_err(err, file, l, "%d x %d x %d input values overflow", c, h, w);
        int64_t d[3], known = 1;
        int infer = -1;
        for (int k = 0; k < 3; k++) {
            d[k] = l->dims[k] == 0 ? from[k] : l->dims[k];
            if (l->dims[k] == -1) {
                if (infer >= 0) return shape_err(err, file, l, "more than one dimension is -1 (inferred)");
                infer = k;
            } else if (d[k] < 1 || d[k] > DSE_DIM_MAX) {
                return shape_err(err, file, l, "dimension %d is %lld; expected 1 to %d, 0 (copy) or -1 (infer)",
                                 k + 1, (long long)d[k], DSE_DIM_MAX);
            } else {
                known = mul3(known, d[k], 1);
                if (known < 0) return shape_err(err, file, l, "the shape's values overflow");
            }
        }
        if (infer >= 0) {
            if (in % known) return shape_err(err, file, l, "%lld input values do not divide into %lld", (long long)in,
                                             (long long)known);
            d[infer] = in / known;
            if (d[infer] > DSE_DIM_MAX) return shape_err(err, file, l, "inferred dimension exceeds %d", DSE_DIM_MAX);
        }
        if (mul3(d[0], d[1], d[2]) != in)
            return shape_err(err, file, l, "shape %lldx%lldx%lld holds %lld values; the input %dx%dx%d holds %lld",
                             (long long)d[0], (long long)d[1], (long long)d[2], (long long)mul3(d[0], d[1], d[2]), c,
                             h, w, (long long)in);
        oc = (int)d[0], oh = (int)d[1], ow = (int)d[2];
        if (oh != h || ow != w) { /* the map is rearranged: an output may see any input pixel */
            orh = rf_grow(rh, h, jh), orw = rf_grow(rw, w, jw);
            ojh = rf_mul(jh, h), ojw = rf_mul(jw, w);
        }
        break;
    }
    case DSE_LAYER_SLICE: {
        int b = l->slice_begin, e = l->slice_end ? l->slice_end : c;
        if (l->slice_parts > 0) {
            if (c % l->slice_parts)
                return shape_err(err, file, l, "%d channels do not split into %d equal parts; give slice_point", c,
                                 l->slice_parts);
            b = l->slice_part * (c / l->slice_parts), e = b + c / l->slice_parts;
        }
        if (b < 0 || e > c || b >= e)
            return shape_err(err, file, l, "channels %d to %d are not within the input's %d channels", b, e, c);
        oc = e - b;
        break;
    }
    case DSE_LAYER_DECONV: { /* Caffe's deconv_layer.cpp: the conv's shape rule run backwards */
        const int kh = l->kernel_h, kw = l->kernel_w, sh = l->stride_h, sw = l->stride_w;
        const int g = l->groups, f = l->num_output;
        if (f <= 0 || f > DSE_DIM_MAX) return shape_err(err, file, l, "filters = %d; expected 1 to %d", f, DSE_DIM_MAX);
        if (kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0 || l->dilation_h <= 0 || l->dilation_w <= 0)
            return shape_err(err, file, l, "kernel, stride and dilation must be >= 1");
        if (l->pad_h < 0 || l->pad_w < 0 || l->output_pad_h < 0 || l->output_pad_w < 0)
            return shape_err(err, file, l, "pad must be >= 0");
        if (g <= 0 || c % g || f % g)
            return shape_err(err, file, l, "groups = %d must divide input channels (%d) and filters (%d)", g, c, f);
        int64_t keh = (int64_t)l->dilation_h * (kh - 1) + 1, kew = (int64_t)l->dilation_w * (kw - 1) + 1;
        int64_t oh64 = (int64_t)sh * (h - 1) + keh - 2 * (int64_t)l->pad_h + l->output_pad_h;
        int64_t ow64 = (int64_t)sw * (w - 1) + kew - 2 * (int64_t)l->pad_w + l->output_pad_w;
        if (oh64 <= 0 || ow64 <= 0 || oh64 > DSE_DIM_MAX || ow64 > DSE_DIM_MAX)
            return shape_err(err, file, l, "output %lldx%lld; expected 1 to %d", (long long)oh64, (long long)ow64,
                             DSE_DIM_MAX);
        oc = f, oh = (int)oh64, ow = (int)ow64;
        /* an output sees the ceil(k / stride) inputs whose windows cover it; a step of the
         * output is 1/stride of the input's (at least one input pixel) */
        orh = rf_grow(rh, (keh + sh - 1) / sh, jh), orw = rf_grow(rw, (kew + sw - 1) / sw, jw);
        ojh = jh / sh > 1 ? jh / sh : 1, ojw = jw / sw > 1 ? jw / sw : 1;
        break;
    }
    case DSE_LAYER_CLIP:
        if (!(l->clip_min <= l->clip_max))
            return shape_err(err, file, l, "clip min %g is above its max %g", (double)l->clip_min, (double)l->clip_max);
        break;
    case DSE_LAYER_CHANNEL_MUL: { /* input 0 times input 1's one value per channel (C x 1 x 1) */
        int c2, h2, w2, rh2, rw2, jh2, jw2;
        in_shape(net, l->inputs[1], &c2, &h2, &w2);
        in_rf(net, l->inputs[1], &rh2, &rw2, &jh2, &jw2);
        if (c2 != c || h2 != 1 || w2 != 1)
            return shape_err(err, file, l, "input 1 is %dx%dx%d; expected one value per channel of input 0 (%dx1x1)",
                             c2, h2, w2, c);
        if (rh2 > orh) orh = rh2;
        if (rw2 > orw) orw = rw2;
        break;
    }
    case DSE_LAYER_SHUFFLE:
        if (l->groups <= 0 || c % l->groups)
            return shape_err(err, file, l, "%d groups do not divide %d channels", l->groups, c);
        break;
    case DSE_LAYER_RESIZE: {
        const int64_t nh = l->resize_h ? l->resize_h : (int64_t)((double)h * l->resize_scale_h);
        const int64_t nw = l->resize_w ? l->resize_w : (int64_t)((double)w * l->resize_scale_w);
        if (nh < 1 || nw < 1 || nh > DSE_DIM_MAX || nw > DSE_DIM_MAX)
            return shape_err(err, file, l, "output %lldx%lld from %dx%d; expected 1 to %d", (long long)nh,
                             (long long)nw, h, w, DSE_DIM_MAX);
        oh = (int)nh, ow = (int)nw;
        /* an output reads 1 input (nearest) or 2 per dimension (linear); steps shrink by the scale */
        orh = rf_grow(rh, 1 + l->resize_linear, jh), orw = rf_grow(rw, 1 + l->resize_linear, jw);
        ojh = oh >= h ? ((int64_t)jh * h / oh > 1 ? (int)((int64_t)jh * h / oh) : 1) : rf_mul(jh, h / oh);
        ojw = ow >= w ? ((int64_t)jw * w / ow > 1 ? (int)((int64_t)jw * w / ow) : 1) : rf_mul(jw, w / ow);
        break;
    }
    case DSE_LAYER_RELU:
    case DSE_LAYER_SOFTMAX:
    case DSE_LAYER_BATCHNORM:
    case DSE_LAYER_SCALE:
    case DSE_LAYER_SIGMOID:
    case DSE_LAYER_TANH:
    case DSE_LAYER_POWER:
    case DSE_LAYER_PRELU:
    case DSE_LAYER_HARDSIGMOID:
    case DSE_LAYER_HARDSWISH:
    case DSE_LAYER_UNKNOWN: /* --skip-unknown: the shape of its first input, no cost */
        break;
    case DSE_LAYER_COUNT:
        return shape_err(err, file, l, "bad layer type");
    }
    if (oc <= 0 || oh <= 0 || ow <= 0)
        return shape_err(err, file, l, "output would be %dx%dx%d from input %dx%dx%d", oc, oh, ow, c, h, w);
    l->in_c = c, l->in_h = h, l->in_w = w;
    l->out_c = oc, l->out_h = oh, l->out_w = ow;
    l->rf_h = orh, l->rf_w = orw, l->jump_h = ojh, l->jump_w = ojw;
    return DSE_OK;
}

enum dse_status dse_net_infer(struct dse_net *net, const char *file, struct dse_err *err) {
    if (net->in_c <= 0 || net->in_h <= 0 || net->in_w <= 0 || net->in_c > DSE_DIM_MAX ||
        net->in_h > DSE_DIM_MAX || net->in_w > DSE_DIM_MAX)
        return dse_err_set(err, DSE_ERR_SHAPE, file, 0, "network input %dx%dx%d; each of C, H, W "
                           "must be 1 to %d", net->in_c, net->in_h, net->in_w, DSE_DIM_MAX);
    for (int i = 0; i < net->n_layers; i++) {
        enum dse_status st = infer_one(net, i, file, err);
        if (st) return st;
    }
    return DSE_OK;
}

#define NO_INPUT (-2)

/* Output channels of layer i (or the input), from hyper-parameters alone: a fire module
 * needs them to choose its bypass, and a full shape inference per module would make
 * building a network quadratic. */
static int channels_of(const struct dse_net *net, int i) {
    while (i != DSE_INPUT_DATA) {
        const struct dse_layer *l = &net->layers[i];
        switch (l->type) {
        case DSE_LAYER_CONV:
        case DSE_LAYER_FC:
            return l->num_output;
        case DSE_LAYER_SOFTMAX_LOSS:
        case DSE_LAYER_ACCURACY:
            return 1;
        case DSE_LAYER_CONCAT: {
            int c = 0;
            for (int k = 0; k < l->n_inputs; k++) c += channels_of(net, l->inputs[k]);
            return c;
        }
        default:
            i = l->inputs[0];
        }
    }
    return net->in_c;
}

static enum dse_status add_sub(struct dse_net *net, const struct dse_fire *f, size_t nf,
                               enum dse_layer_type t, enum dse_role role, int input,
                               int input2, int filters, int k, int in_place, int *idx,
                               struct dse_err *err) {
    /* "<fire>/<suffix>" without snprintf: the generator builds millions of these. */
    const char *suffix = role_suffix[role];
    size_t ns = strlen(suffix);
    if (nf + 1 + ns >= DSE_NAME_MAX)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, f->line,
                           "fire module name '%.40s...' is too long; at most %d characters", f->name,
                           DSE_NAME_MAX - 1 - (int)sizeof "/relu_squeeze1x1" + 1);
    struct dse_layer *l = net_reserve(net, err); /* built in place: no copies */
    if (!l) return DSE_ERR_NOMEM;
    layer_defaults(l, t);
    memcpy(l->name, f->name, nf);
    l->name[nf] = '/';
    memcpy(l->name + nf + 1, suffix, ns + 1);
    memcpy(l->module, f->name, nf + 1);
    l->role       = role;
    l->line       = f->line;
    l->n_inputs   = input2 == NO_INPUT ? 1 : 2;
    l->inputs[0]  = input;
    l->inputs[1]  = input2;
    l->num_output = filters;
    l->kernel_h   = l->kernel_w = k;
    l->pad_h      = l->pad_w = k / 2;
    l->in_place   = in_place;
    enum dse_status st = dse_net_commit(net, err);
    if (st) return st;
    *idx = net->n_layers - 1;
    return DSE_OK;
}

enum dse_status dse_net_add_fire(struct dse_net *net, const struct dse_fire *f, int input,
                                 struct dse_err *err) {
    enum dse_status st;
    int sq, e1 = -1, e3 = -1, cat, r, in_c;
    if (f->squeeze <= 0 || f->expand1x1 < 0 || f->expand3x3 < 0 || f->expand1x1 + f->expand3x3 <= 0)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, f->line,
                           "fire '%s': squeeze = %d, expand1x1 = %d, expand3x3 = %d; expected "
                           "squeeze >= 1 and at least one expand filter",
                           f->name, f->squeeze, f->expand1x1, f->expand3x3);
    DSE_ASSERT(input >= DSE_INPUT_DATA && input < net->n_layers);
    in_c = channels_of(net, input);
    size_t nf = strlen(f->name);
    int out_c = f->expand1x1 + f->expand3x3;
    if (f->bypass == DSE_BYPASS_SIMPLE && in_c != out_c)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, f->line,
                           "fire '%s': simple bypass needs input channels (%d) == output channels "
                           "(%d); use bypass = \"complex\" for a 1x1-conv bypass",
                           f->name, in_c, out_c);

    if ((st = add_sub(net, f, nf, DSE_LAYER_CONV, DSE_ROLE_SQUEEZE, input, NO_INPUT, f->squeeze, 1, 0, &sq, err))) return st;
    if ((st = add_sub(net, f, nf, DSE_LAYER_RELU, DSE_ROLE_RELU_SQUEEZE, sq, NO_INPUT, 0, 0, 1, &r, err))) return st;
    if (f->expand1x1 > 0) {
        if ((st = add_sub(net, f, nf, DSE_LAYER_CONV, DSE_ROLE_EXPAND1X1, r, NO_INPUT, f->expand1x1, 1, 0, &e1, err))) return st;
        if ((st = add_sub(net, f, nf, DSE_LAYER_RELU, DSE_ROLE_RELU_EXPAND1X1, e1, NO_INPUT, 0, 0, 1, &e1, err))) return st;
    }
    if (f->expand3x3 > 0) {
        if ((st = add_sub(net, f, nf, DSE_LAYER_CONV, DSE_ROLE_EXPAND3X3, r, NO_INPUT, f->expand3x3, 3, 0, &e3, err))) return st;
        if ((st = add_sub(net, f, nf, DSE_LAYER_RELU, DSE_ROLE_RELU_EXPAND3X3, e3, NO_INPUT, 0, 0, 1, &e3, err))) return st;
    }
    if ((st = add_sub(net, f, nf, DSE_LAYER_CONCAT, DSE_ROLE_CONCAT, e1 >= 0 ? e1 : e3,
                      e1 >= 0 && e3 >= 0 ? e3 : NO_INPUT, 0, 0, 0, &cat, err))) return st;
    if (f->bypass != DSE_BYPASS_NONE) {
        int skip = input, add;
        if (in_c != out_c) { /* complex bypass: a 1x1 conv projects the input (thesis ch. 5.6) */
            if ((st = add_sub(net, f, nf, DSE_LAYER_CONV, DSE_ROLE_BYPASS_CONV, input, NO_INPUT, out_c, 1, 0, &skip, err))) return st;
        }
        if ((st = add_sub(net, f, nf, DSE_LAYER_ELTWISE, DSE_ROLE_BYPASS_ADD, cat, skip, 0, 0, 0, &add, err))) return st;
    }
    return DSE_OK;
}
