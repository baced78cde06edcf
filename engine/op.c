/* op.c: what every backend shares about an op: its name, the layer type it runs, and
 * the shape contract between a node's tensors and its layer (dse_node_check), plus
 * forward FLOPs. No kernel code here; kernels live in engine/cpu/ (and engine/cuda/). */
#include "engine/engine.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char         *name;
    enum dse_layer_type layer;
    int                 min_in, max_in, weights;
} op_info[DSE_OP_COUNT] = {
#define DSE_OP(e, name, layer, min_in, max_in, weights) \
    [DSE_OP_##e] = { #name, DSE_LAYER_##layer, min_in, max_in, weights },
#include "engine/ops.def"
#undef DSE_OP
};

const char *dse_op_str(enum dse_op op) {
    return (unsigned)op < DSE_OP_COUNT ? op_info[op].name : "?";
}

enum dse_status dse_op_from_layer(const struct dse_layer *l, enum dse_op *out, struct dse_err *err) {
    if (l->type == DSE_LAYER_ELTWISE && l->eltwise_op != DSE_ELTWISE_SUM)
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, l->line,
                           "layer '%s' (eltwise): only operation sum is supported by the engine", l->name);
    if (l->type == DSE_LAYER_RELU && l->negative_slope != 0.0f) /* a leaky ReLU (issue #34) */
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, l->line,
                           "layer '%s' (relu): a negative slope is not supported by the engine", l->name);
    for (int i = 0; i < DSE_OP_COUNT; i++) {
        if (op_info[i].layer == l->type) {
            *out = (enum dse_op)i;
            return DSE_OK;
        }
    }
    return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, l->line,
                       "layer '%s' (%s): the engine has no op for this layer type", l->name,
                       dse_layer_type_str(l->type));
}

void dse_node_init(struct dse_node *n, enum dse_op op, const struct dse_layer *layer) {
    memset(n, 0, sizeof *n);
    n->op = op;
    n->layer = layer;
    n->training = 1;
    n->bn_momentum = 0.1f;
    n->bn_eps = layer ? layer->bn_eps : 1e-5f; /* the file's eps (Inception's 0.001), 1e-5 by default */
    n->algo_fwd = n->algo_bwd = DSE_ALGO_AUTO;
}

void dse_node_deinit(struct dse_node *n) {
    if (!n) return;
    DSE_ASSERT(n->st.mem == DSE_MEM_HOST || !n->st.block);
    free(n->st.block);
    memset(&n->st, 0, sizeof n->st);
}

/* ---- op state layout --------------------------------------------------------------- */

static size_t piece(int64_t count, size_t size, size_t align) {
    return ((size_t)count * size + align - 1) / align * align;
}

size_t dse_node_state_plan(const struct dse_node *n, size_t align, struct dse_state_plan *plan) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int64_t all = dse_tensor_image(x) * x->n;
    const int in_place = y->data == x->data;
    memset(plan, 0, sizeof *plan);
    switch (n->op) {
    case DSE_OP_MAXPOOL:      plan->argmax = piece(dse_tensor_count(y), sizeof(int32_t), align); break;
    case DSE_OP_DROPOUT:      plan->mask = piece(all, 1, align); break;
    case DSE_OP_BATCHNORM:    plan->stats = piece(x->c, sizeof(float), align);
                              plan->saved = in_place ? piece(all, sizeof(float), align) : 0; break;
    case DSE_OP_SCALE:        plan->saved = in_place ? piece(all, sizeof(float), align) : 0; break;
    case DSE_OP_LRN:          plan->saved = piece(2 * all, sizeof(float), align); break; /* scale, scale^-beta */
    case DSE_OP_SOFTMAX_XENT: plan->prob = piece(all, sizeof(float), align); break;
    default: break;
    }
    return plan->argmax + plan->mask + 2 * plan->stats + plan->saved + plan->prob;
}

char *dse_node_state_carve(struct dse_node *n, char *p, const struct dse_state_plan *plan) {
    n->st.argmax = plan->argmax ? (int32_t *)(void *)p : NULL, p += plan->argmax;
    n->st.mask   = plan->mask ? (uint8_t *)p : NULL,           p += plan->mask;
    n->st.mean   = plan->stats ? (float *)(void *)p : NULL,    p += plan->stats;
    n->st.invstd = plan->stats ? (float *)(void *)p : NULL,    p += plan->stats;
    n->st.saved  = plan->saved ? (float *)(void *)p : NULL,    p += plan->saved;
    n->st.prob   = plan->prob ? (float *)(void *)p : NULL,     p += plan->prob;
    return p;
}

/* ---- dse_node_check ------------------------------------------------------------- */

__attribute__((cold, format(printf, 3, 4)))
static enum dse_status bad(struct dse_err *err, const struct dse_node *n, const char *fmt, ...) {
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return dse_err_set(err, DSE_ERR_SHAPE, NULL, n->layer ? n->layer->line : 0, "layer '%s' (%s): %s",
                       n->layer ? n->layer->name : "?", dse_op_str(n->op), what);
}

/* Tensor t (named what) must be n x c x h x w. */
static enum dse_status want(struct dse_err *err, const struct dse_node *nd, const char *what,
                            const struct dse_tensor *t, int n, int c, int h, int w) {
    if (!t) return bad(err, nd, "%s is missing; expected %dx%dx%dx%d", what, n, c, h, w);
    if (t->n != n || t->c != c || t->h != h || t->w != w)
        return bad(err, nd, "%s is %dx%dx%dx%d; expected %dx%dx%dx%d", what, t->n, t->c, t->h, t->w, n, c, h,
                   w);
    if (!t->data) return bad(err, nd, "%s has no data", what);
    if (t->stride_n < dse_tensor_image(t))
        return bad(err, nd, "%s has stride_n %lld < c*h*w = %lld", what, (long long)t->stride_n,
                   (long long)dse_tensor_image(t));
    return DSE_OK;
}

/* In place: the op overwrites its input, or (flatten, reshape) sees it in another shape. */
static int may_run_in_place(enum dse_op op) {
    return op == DSE_OP_RELU || op == DSE_OP_DROPOUT || op == DSE_OP_BATCHNORM || op == DSE_OP_SCALE ||
           op == DSE_OP_FLATTEN || op == DSE_OP_RESHAPE;
}

int dse_node_slice_begin(const struct dse_node *n) {
    const struct dse_layer *l = n->layer;
    return l->slice_parts > 0 ? l->slice_part * (l->in_c / l->slice_parts) : l->slice_begin;
}

enum dse_status dse_node_check(const struct dse_node *n, struct dse_err *err) {
    enum dse_status st;
    if ((unsigned)n->op >= DSE_OP_COUNT) return bad(err, n, "bad op %d", (int)n->op);
    if (!n->layer) return bad(err, n, "node has no layer");
    const struct dse_layer *l = n->layer;
    if (n->n_in < op_info[n->op].min_in || n->n_in > op_info[n->op].max_in)
        return bad(err, n, "%d inputs; expected %d to %d", n->n_in, op_info[n->op].min_in,
                   op_info[n->op].max_in);
    for (int i = 0; i < n->n_in; i++)
        if (!n->in[i] || !n->in[i]->data) return bad(err, n, "input %d is missing", i);
    if (!n->out) return bad(err, n, "output is missing");

    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int N = x->n, C = x->c, H = x->h, W = x->w;
    if (y->data == x->data && n->op != DSE_OP_CONCAT) { /* concat: input 0 may be a view at offset 0 */
        if (!may_run_in_place(n->op)) return bad(err, n, "cannot run in place");
        if (y->grad != x->grad || y->stride_n != x->stride_n)
            return bad(err, n, "runs in place but output and input differ in grad or stride_n");
    }
    if (n->op != DSE_OP_FC && n->op != DSE_OP_SOFTMAX_XENT && n->op != DSE_OP_CONCAT &&
        (C != l->in_c || H != l->in_h || W != l->in_w))
        return bad(err, n, "input is %dx%dx%d; the network says %dx%dx%d", C, H, W, l->in_c, l->in_h, l->in_w);

    switch (n->op) {
    case DSE_OP_CONV2D: {
        const int K = l->num_output, g = l->groups;
        if (g < 1 || C % g || K % g) return bad(err, n, "groups = %d must divide %d and %d", g, C, K);
        if ((st = want(err, n, "output", y, N, K, l->out_h, l->out_w))) return st;
        if ((st = want(err, n, "weight", n->weight, K, C / g, l->kernel_h, l->kernel_w))) return st;
        if (l->bias && (st = want(err, n, "bias", n->bias, 1, K, 1, 1))) return st;
        if (!l->bias && n->bias) return bad(err, n, "has a bias but the layer says bias off");
        break;
    }
    case DSE_OP_FC: {
        const int64_t D = (int64_t)C * H * W;
        if (D != (int64_t)l->in_c * l->in_h * l->in_w)
            return bad(err, n, "input has %lld values per image; the network says %lld", (long long)D,
                       (long long)l->in_c * l->in_h * l->in_w);
        if (D > INT32_MAX) return bad(err, n, "input has too many values per image");
        if ((st = want(err, n, "output", y, N, l->num_output, 1, 1))) return st;
        if ((st = want(err, n, "weight", n->weight, l->num_output, (int)D, 1, 1))) return st;
        if (l->bias && (st = want(err, n, "bias", n->bias, 1, l->num_output, 1, 1))) return st;
        if (!l->bias && n->bias) return bad(err, n, "has a bias but the layer says bias off");
        break;
    }
    case DSE_OP_MAXPOOL:
    case DSE_OP_AVGPOOL:
        if (l->kernel_h < 1 || l->kernel_w < 1 || l->stride_h < 1 || l->stride_w < 1 || l->pad_h < 0 ||
            l->pad_w < 0)
            return bad(err, n, "bad kernel, stride or pad");
        if ((st = want(err, n, "output", y, N, C, l->out_h, l->out_w))) return st;
        break;
    case DSE_OP_RELU:
    case DSE_OP_DROPOUT:
        if ((st = want(err, n, "output", y, N, C, H, W))) return st;
        if (n->op == DSE_OP_DROPOUT && !(l->dropout_ratio >= 0.0f && l->dropout_ratio < 1.0f))
            return bad(err, n, "dropout ratio %g; expected 0 <= ratio < 1", (double)l->dropout_ratio);
        break;
    case DSE_OP_CONCAT: {
        int64_t sum = 0;
        for (int i = 0; i < n->n_in; i++) {
            const struct dse_tensor *t = n->in[i];
            if (t->n != N || t->h != H || t->w != W)
                return bad(err, n, "input %d is %dx%dx%dx%d but input 0 is %dx%dx%dx%d", i, t->n, t->c, t->h,
                           t->w, N, C, H, W);
            sum += t->c;
        }
        if (sum != l->out_c) return bad(err, n, "inputs have %lld channels; the network says %d", (long long)sum,
                                        l->out_c);
        if ((st = want(err, n, "output", y, N, (int)sum, H, W))) return st;
        break;
    }
    case DSE_OP_ELTWISE_ADD:
        for (int i = 1; i < n->n_in; i++) {
            char what[32];
            snprintf(what, sizeof what, "input %d", i);
            if ((st = want(err, n, what, n->in[i], N, C, H, W))) return st;
        }
        if ((st = want(err, n, "output", y, N, C, H, W))) return st;
        break;
    case DSE_OP_SOFTMAX_XENT:
        if (H != 1 || W != 1)
            return bad(err, n, "input is %dx%dx%d; expected %dx1x1 class scores (put a global pool or "
                       "fc before the loss)", C, H, W, C);
        if (y->c != 1 || y->h != 1 || y->w != 1 || !y->data)
            return bad(err, n, "output must be one value (the loss)");
        break;
    case DSE_OP_BATCHNORM:
        if ((st = want(err, n, "output", y, N, C, H, W))) return st;
        if (l->affine && (st = want(err, n, "weight (gamma)", n->weight, 1, C, 1, 1))) return st;
        if (l->affine && (st = want(err, n, "bias (beta)", n->bias, 1, C, 1, 1))) return st;
        if (!l->affine && (n->weight || n->bias)) return bad(err, n, "has gamma/beta but the layer is not affine");
        if ((st = want(err, n, "running mean", n->run_mean, 1, C, 1, 1))) return st;
        if ((st = want(err, n, "running var", n->run_var, 1, C, 1, 1))) return st;
        if (!(n->bn_eps > 0.0f) || !(n->bn_momentum >= 0.0f && n->bn_momentum <= 1.0f))
            return bad(err, n, "eps must be > 0 and momentum in [0, 1]");
        break;
    case DSE_OP_SCALE:
        if ((st = want(err, n, "output", y, N, C, H, W))) return st;
        if ((st = want(err, n, "weight (gamma)", n->weight, 1, C, 1, 1))) return st;
        if (l->bias && (st = want(err, n, "bias (beta)", n->bias, 1, C, 1, 1))) return st;
        if (!l->bias && n->bias) return bad(err, n, "has a bias but the layer says bias off");
        break;
    case DSE_OP_LRN:
        if ((st = want(err, n, "output", y, N, C, H, W))) return st;
        if (l->lrn_size < 1 || l->lrn_size % 2 == 0)
            return bad(err, n, "local_size %d; expected odd and >= 1", l->lrn_size);
        if (!(l->lrn_k > 0.0f) || !(l->lrn_alpha >= 0.0f) || !isfinite(l->lrn_k) || !isfinite(l->lrn_alpha) ||
            !isfinite(l->lrn_beta))
            return bad(err, n, "k %g, alpha %g, beta %g; expected k > 0, alpha >= 0, all finite", (double)l->lrn_k,
                       (double)l->lrn_alpha, (double)l->lrn_beta);
        break;
    case DSE_OP_SLICE: {
        const int b = dse_node_slice_begin(n);
        if (b < 0 || b + l->out_c > C) return bad(err, n, "channels %d to %d of %d", b, b + l->out_c, C);
        if ((st = want(err, n, "output", y, N, l->out_c, H, W))) return st;
        break;
    }
    case DSE_OP_FLATTEN:
    case DSE_OP_RESHAPE:
        if ((int64_t)l->out_c * l->out_h * l->out_w != dse_tensor_image(x))
            return bad(err, n, "%dx%dx%d is not %lld values", l->out_c, l->out_h, l->out_w,
                       (long long)dse_tensor_image(x));
        if ((st = want(err, n, "output", y, N, l->out_c, l->out_h, l->out_w))) return st;
        break;
    case DSE_OP_COUNT:
        break;
    }
    if (!op_info[n->op].weights && (n->weight || n->bias)) return bad(err, n, "this op takes no weights");
    return DSE_OK;
}

int64_t dse_node_flops(const struct dse_node *n) {
    const struct dse_layer *l = n->layer;
    const struct dse_tensor *x = n->in[0], *y = n->out;
    switch (n->op) {
    case DSE_OP_CONV2D:
        return 2 * (int64_t)(x->c / l->groups) * l->kernel_h * l->kernel_w * dse_tensor_count(y);
    case DSE_OP_FC:
        return 2 * dse_tensor_image(x) * dse_tensor_count(y);
    default:
        return 0;
    }
}
