/* cost.c: closed-form parameter, FLOP, activation and memory counts per layer, and the
 * report rows that fold a Fire module into one line. Conventions: docs/conventions.md.
 * Hot path of dse_cost_net is allocation-free: a sweep costs millions of candidates. */
#include "analysis/analysis.h"

#include <stdint.h>
#include <string.h>

/* a * b, setting *ovf on int64 overflow (a billion-image batch of a big net can). */
static inline int64_t mul(int64_t a, int64_t b, int *ovf) {
    int64_t r;
    *ovf |= __builtin_mul_overflow(a, b, &r);
    return r;
}

static inline int64_t add(int64_t a, int64_t b, int *ovf) {
    int64_t r;
    *ovf |= __builtin_add_overflow(a, b, &r);
    return r;
}

int64_t dse_cost_macs(int64_t flops) { return flops / 2; }

/* Values of one image's input 0. */
static inline int64_t in_values(const struct dse_layer *l, int *ovf) {
    return mul(mul(l->in_c, l->in_h, ovf), l->in_w, ovf);
}

/* A layer whose output is its input's data: flatten, reshape (layers.def), and a slice
 * of every channel (Caffe's Slice with one top shares the data). */
static inline int is_view(const struct dse_layer *l) {
    return dse_layer_type_view(l->type) || (l->type == DSE_LAYER_SLICE && l->out_c == l->in_c);
}

/* Costs of one layer; returns nonzero if a product overflowed int64. The flag is a
 * local so it stays in a register (through a pointer it cost a load and a store per
 * operation). */
static inline int cost_layer(const struct dse_layer *l, int64_t batch, struct dse_cost_layer *c) {
    int flag = 0, *ovf = &flag;
    int64_t out_sp   = (int64_t)l->out_h * l->out_w; /* < 2^48: dims are at most 2^24 */
    int64_t out_vals = mul(mul(l->out_c, out_sp, ovf), batch, ovf);
    c->weights = c->biases = c->buffers = c->flops = c->other_ops = 0;
    c->activations = l->in_place ? 0 : out_vals;

    switch (l->type) {
    case DSE_LAYER_CONV:
        c->weights   = mul(mul(mul(l->groups == 1 ? l->in_c : l->in_c / l->groups, l->kernel_h, ovf),
                               l->kernel_w, ovf), l->out_c, ovf);
        c->biases    = l->bias ? l->out_c : 0;
        c->flops     = mul(mul(2 * c->weights, out_sp, ovf), batch, ovf);
        c->other_ops = l->bias ? out_vals : 0;
        break;
    case DSE_LAYER_FC:
        c->weights   = mul(in_values(l, ovf), l->out_c, ovf);
        c->biases    = l->bias ? l->out_c : 0;
        c->flops     = mul(2 * c->weights, batch, ovf);
        c->other_ops = l->bias ? out_vals : 0;
        break;
    case DSE_LAYER_MAXPOOL:
    case DSE_LAYER_AVGPOOL:
        c->other_ops = mul(mul(out_vals, l->kernel_h, ovf), l->kernel_w, ovf);
        break;
    case DSE_LAYER_RELU: /* max(x, 0); with a negative slope also a multiply */
        c->other_ops = mul(l->negative_slope != 0.0f ? 2 : 1, out_vals, ovf);
        break;
    case DSE_LAYER_DROPOUT:
        c->other_ops = out_vals; /* same shape as the input */
        break;
    case DSE_LAYER_DECONV: /* Caffe counts a deconv as the conv it is the backward pass of: each
                              input value times a kh*kw*Cout/groups window */
        c->weights   = mul(mul(mul(l->in_c, l->kernel_h, ovf), l->kernel_w, ovf), l->out_c / l->groups, ovf);
        c->biases    = l->bias ? l->out_c : 0;
        c->flops     = mul(mul(mul(2 * c->weights, l->in_h, ovf), l->in_w, ovf), batch, ovf);
        c->other_ops = l->bias ? out_vals : 0;
        break;
    case DSE_LAYER_PRELU: /* max(x, 0) + slope * min(x, 0): a compare and a multiply */
        c->weights   = l->channel_shared ? 1 : l->out_c;
        c->other_ops = mul(2, out_vals, ovf);
        break;
    case DSE_LAYER_CLIP: /* a max and a min */
        c->other_ops = mul(2, out_vals, ovf);
        break;
    case DSE_LAYER_HARDSIGMOID: /* multiply, add, max, min */
        c->other_ops = mul(4, out_vals, ovf);
        break;
    case DSE_LAYER_HARDSWISH: /* the hard sigmoid's 4, times x */
        c->other_ops = mul(5, out_vals, ovf);
        break;
    case DSE_LAYER_CHANNEL_MUL: /* one multiply per output value */
        c->other_ops = out_vals;
        break;
    case DSE_LAYER_SHUFFLE: /* a copy into a new order, as concat: no arithmetic */
        break;
    case DSE_LAYER_RESIZE: /* per output value, one per input read: 1 (nearest) or 4 (bilinear), as
                              pooling counts one per window value */
        c->other_ops = mul(l->resize_linear ? 4 : 1, out_vals, ovf);
        break;
    case DSE_LAYER_UNKNOWN: /* an op dse does not read (--skip-unknown): no cost, a view */
        break;
    case DSE_LAYER_ACCURACY:
        c->other_ops = mul(in_values(l, ovf), batch, ovf);
        break;
    case DSE_LAYER_ELTWISE:
        c->other_ops = mul(out_vals, l->n_inputs - 1, ovf);
        break;
    case DSE_LAYER_CONCAT:
        break;
    case DSE_LAYER_SOFTMAX:
        c->other_ops = mul(3, out_vals, ovf); /* exp, sum, divide */
        break;
    case DSE_LAYER_SOFTMAX_LOSS: /* softmax, then -log of the true class */
        c->other_ops = add(mul(mul(3, in_values(l, ovf), ovf), batch, ovf), batch, ovf);
        break;
    case DSE_LAYER_BATCHNORM:
        c->biases    = l->affine ? l->out_c : 0; /* beta */
        c->weights   = l->affine ? l->out_c : 0; /* gamma */
        c->buffers   = 2 * (int64_t)l->out_c;    /* running mean and variance */
        c->other_ops = mul(l->affine ? 4 : 2, out_vals, ovf);
        break;
    case DSE_LAYER_SCALE:
        c->weights   = l->out_c;
        c->biases    = l->bias ? l->out_c : 0;
        c->other_ops = mul(l->bias ? 2 : 1, out_vals, ovf);
        break;
    case DSE_LAYER_LRN: /* squares, sum, pow, divide */
        c->other_ops = mul(2 * (int64_t)l->lrn_size + 3, out_vals, ovf);
        break;
    case DSE_LAYER_FLATTEN: /* views: no values, no work (below) */
    case DSE_LAYER_RESHAPE:
    case DSE_LAYER_SLICE:   /* a copy, unless it takes every channel (a view, as in Caffe) */
        break;
    case DSE_LAYER_SIGMOID: /* exp, add, divide */
    case DSE_LAYER_TANH:    /* exp, subtract, add, divide: counted as the sigmoid's 3 */
        c->other_ops = mul(3, out_vals, ovf);
        break;
    case DSE_LAYER_POWER: /* scale, shift and pow, each only when it is not the identity */
        c->other_ops = mul((l->power_scale != 1.0f) + (l->power_shift != 0.0f) + (l->power != 1.0f), out_vals, ovf);
        break;
    case DSE_LAYER_COUNT:
        break;
    }
    if (l->type == DSE_LAYER_SOFTMAX_LOSS || l->type == DSE_LAYER_ACCURACY)
        c->activations = 1;
    if (is_view(l)) c->activations = 0;
    if (l->shared & 1) c->weights = 0; /* an earlier layer's blobs (param { name: }): counted there */
    if (l->shared & 2) c->biases = 0;
    c->params = c->weights + c->biases;
    return flag;
}

enum dse_status dse_cost_net(const struct dse_net *net, int64_t batch,
                             struct dse_cost_layer *layers, struct dse_cost_totals *tot,
                             struct dse_err *err) {
    int n = net->n_layers;
    if (batch < 1)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "batch = %lld; expected >= 1",
                           (long long)batch);
    int ovf = 0;
    memset(tot, 0, sizeof *tot);
    tot->batch        = batch;
    tot->input_values = mul(mul(mul(net->in_c, net->in_h, &ovf), net->in_w, &ovf), batch, &ovf);
    int input_last_use = -1;
    /* Sums in locals: stores through layers[] could alias *tot and force reloads. */
    int64_t weights = 0, biases = 0, buffers = 0, flops = 0, other_ops = 0, activations = 0;

    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &net->layers[i];
        struct dse_cost_layer   c;
        int o = cost_layer(l, batch, &c);
        o |= __builtin_add_overflow(weights, c.weights, &weights);
        o |= __builtin_add_overflow(biases, c.biases, &biases);
        o |= __builtin_add_overflow(buffers, c.buffers, &buffers);
        o |= __builtin_add_overflow(flops, c.flops, &flops);
        o |= __builtin_add_overflow(other_ops, c.other_ops, &other_ops);
        o |= __builtin_add_overflow(activations, c.activations, &activations);
        ovf |= o;
        /* in place, or a view of its input (flatten, reshape): the input's buffer */
        c.buffer      = ((l->in_place || is_view(l)) && l->inputs[0] >= 0) ? layers[l->inputs[0]].buffer : i;
        c.last_use    = i;
        c.freed_after = 0;
        layers[i]     = c;
        for (int k = 0; k < l->n_inputs; k++) {
            int in = l->inputs[k];
            if (in == DSE_INPUT_DATA || (net->layers[in].inputs[0] == DSE_INPUT_DATA && is_view(&net->layers[in])))
                input_last_use = i; /* the input, or a view of it */
            else
                layers[layers[in].buffer].last_use = i;
        }
    }
    if (n > 0) layers[layers[n - 1].buffer].last_use = n; /* the output outlives the net */
    tot->weights     = weights;
    tot->biases      = biases;
    tot->buffers     = buffers;
    tot->flops       = flops;
    tot->other_ops   = other_ops;
    tot->activations = activations;

    /* Walk the layers in order: a tensor is alive from its producer to its last reader. */
    int64_t live = tot->input_values, peak = live;
    for (int i = 0; i < n; i++) {
        /* Tensor i dies after its last reader (>= i): every tensor that dies after layer i
         * has been counted by the time step i subtracts them. */
        if (layers[i].buffer == i && layers[i].last_use < n)
            layers[layers[i].last_use].freed_after += layers[i].activations;
        if (layers[i].buffer == i) live = add(live, layers[i].activations, &ovf);
        if (live > peak) peak = live;
        live -= layers[i].freed_after;
        if (input_last_use == i) live -= tot->input_values;
    }
    tot->peak_live_values = peak;
    tot->params           = add(tot->weights, tot->biases, &ovf);
    tot->flops_train      = mul(3, tot->flops, &ovf);
    tot->param_bytes      = mul(tot->params, DSE_BYTES_PER_VALUE, &ovf);
    tot->model_bytes      = mul(add(tot->params, tot->buffers, &ovf), DSE_BYTES_PER_VALUE, &ovf);
    tot->activation_bytes = mul(tot->activations, DSE_BYTES_PER_VALUE, &ovf);
    tot->mem_infer_bytes  = add(tot->model_bytes, mul(peak, DSE_BYTES_PER_VALUE, &ovf), &ovf);
    tot->mem_train_bytes  = mul(add(add(tot->input_values, mul(2, tot->activations, &ovf), &ovf),
                                    add(mul(3, tot->params, &ovf), tot->buffers, &ovf), &ovf),
                                DSE_BYTES_PER_VALUE, &ovf);
    if (ovf)
        return dse_err_set(err, DSE_ERR_SHAPE, NULL, 0,
                           "costs at batch %lld exceed 2^63 (int64); use a smaller batch",
                           (long long)batch);
    return DSE_OK;
}

static void row_add(struct dse_cost_row *r, const struct dse_cost_layer *c) {
    r->cost.weights     += c->weights;
    r->cost.biases      += c->biases;
    r->cost.params      += c->params;
    r->cost.buffers     += c->buffers;
    r->cost.flops       += c->flops;
    r->cost.other_ops   += c->other_ops;
    r->cost.activations += c->activations;
}

/* A classifier's head: it learns nothing and its cost does not depend on the maps before
 * the classifier, so a change that reaches the classifier reaches it too (delta.c). */
static int is_head(enum dse_layer_type t) {
    return t == DSE_LAYER_SOFTMAX || t == DSE_LAYER_SOFTMAX_LOSS || t == DSE_LAYER_ACCURACY;
}

int dse_cost_rows(const struct dse_net *net, const struct dse_cost_layer *layers, enum dse_rows view,
                  struct dse_cost_row *rows) {
    int nr = 0, expand = view == DSE_ROWS_LAYERS;
    for (int i = 0; i < net->n_layers;) {
        const struct dse_layer *l = &net->layers[i];
        int j = i;
        if (!expand && l->module[0])
            while (j + 1 < net->n_layers && strcmp(net->layers[j + 1].module, l->module) == 0) j++;
        else if (view == DSE_ROWS_BLOCKS)
            j = dse_block_end(net, i);
        struct dse_cost_row *r = &rows[nr++];
        memset(r, 0, sizeof *r);
        r->first = i, r->last = j;
        r->in_place = 1;
        r->head = 1;
        int block = j > i && !l->module[0];
        if (block) { /* the prefix of the first name that spells the key: /layer1/layer1.0 */
            char key[DSE_NAME_MAX];
            int n = dse_block_key(l->name, key, sizeof key);
            memcpy(r->name, l->name, (size_t)n);
            r->name[n] = '\0';
        } else {
            dse_strlcpy(r->name, (j > i || (!expand && l->module[0])) ? l->module : l->name, DSE_NAME_MAX);
        }
        r->type = l->type == DSE_LAYER_UNKNOWN && l->op_type[0] ? l->op_type : dse_layer_type_str(l->type);
        for (int k = i; k <= j; k++) {
            row_add(r, &layers[k]);
            r->in_place &= net->layers[k].in_place;
            r->head &= is_head(net->layers[k].type);
            if (j > i && net->layers[k].role == DSE_ROLE_SQUEEZE) r->type = "fire";
        }
        if (j > i && strcmp(r->type, "fire") != 0) r->type = block ? "block" : "module";
        r->in_c = l->in_c, r->in_h = l->in_h, r->in_w = l->in_w;
        const struct dse_layer *o = &net->layers[j];
        r->out_c = o->out_c, r->out_h = o->out_h, r->out_w = o->out_w;
        r->rf_h = o->rf_h, r->rf_w = o->rf_w;
        i = j + 1;
    }
    return nr;
}
