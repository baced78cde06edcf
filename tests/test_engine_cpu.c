/* test_engine_cpu.c: the engine's CPU backend (issue #4): tensors and views, node shape
 * checks, Caffe's pooling windows, finite-difference gradient checks for every op (and
 * every conv strategy), agreement between conv strategies (Winograd on odd maps and
 * views), the strategy cache (AUTO never picks Winograd where it cannot run),
 * bit-identical reruns, and a Fire module whose expand convs write straight into the
 * concat buffer. Usage: test_engine_cpu [case-id-prefix...] (tests/check.h). */
#include "engine/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pcg32.h"
#include "engine/slices.h"
#include "metaparams/net.h"
#include "tests/check.h"

#define THREADS 2

/* Finite differences: step EPS, and the relative error each op may show (grad_check).
 * Worst seen on x86-64 + OpenBLAS: conv 4e-4, softmax 4e-4, batchnorm 3e-4, avg pool
 * 1e-4, fc 9e-5, scale 1e-5, ops that only move or mask values 3e-6: about 10x margin,
 * tight enough that a dropped term (a bias, a 1/N) fails. */
#define EPS          1e-2
#define TOL_CONV     3e-3
#define TOL_POOL     1e-3
#define TOL_EXACT    1e-4 /* relu, dropout, concat, eltwise add */
#define TOL_FC       1e-3
#define TOL_SOFTMAX  3e-3
#define TOL_BN       3e-3
#define TOL_SCALE    1e-3
#define FLOOR        1e-1 /* |gradient| below this counts as this (float noise) */

/* ---- helpers ------------------------------------------------------------------- */

static float uniform(struct dse_pcg32 *r, float lo, float hi) {
    return lo + (hi - lo) * (float)(dse_pcg32_next(r) >> 8) * (1.0f / 16777216.0f);
}

/* Every value of t (data) uniform in [lo, hi), image by image (views keep their gaps). */
static void fill_uniform(struct dse_tensor *t, struct dse_pcg32 *r, float lo, float hi) {
    for (int i = 0; i < t->n; i++)
        for (int64_t j = 0; j < dse_tensor_image(t); j++) t->data[i * t->stride_n + j] = uniform(r, lo, hi);
}

/* Values at least `gap` apart (a shuffled ramp), so a finite-difference step cannot
 * change which value a max picks. */
static void fill_distinct(struct dse_tensor *t, struct dse_pcg32 *r, float gap) {
    const int64_t count = dse_tensor_count(t), img = dse_tensor_image(t);
    int64_t *perm = malloc((size_t)count * sizeof *perm);
    for (int64_t e = 0; e < count; e++) perm[e] = e;
    for (int64_t e = count - 1; e > 0; e--) {
        int64_t k = (int64_t)dse_pcg32_bounded(r, (uint32_t)(e + 1)), tmp = perm[e];
        perm[e] = perm[k], perm[k] = tmp;
    }
    for (int64_t e = 0; e < count; e++)
        t->data[e / img * t->stride_n + e % img] = (float)(perm[e] - count / 2) * gap;
    free(perm);
}

/* Values of magnitude in [0.1, 1): away from relu's kink at 0. */
static void fill_off_zero(struct dse_tensor *t, struct dse_pcg32 *r) {
    fill_uniform(t, r, 0.1f, 1.0f);
    for (int i = 0; i < t->n; i++)
        for (int64_t j = 0; j < dse_tensor_image(t); j++)
            if (dse_pcg32_next(r) & 1) t->data[i * t->stride_n + j] *= -1.0f;
}

/* Copy data (or grad) of t into a contiguous buffer, and back. */
static void gather(const struct dse_tensor *t, const float *src, double *dst) {
    const int64_t img = dse_tensor_image(t);
    for (int i = 0; i < t->n; i++)
        for (int64_t j = 0; j < img; j++) dst[i * img + j] = src[i * t->stride_n + j];
}

static void scatter(const struct dse_tensor *t, const double *src, float *dst) {
    const int64_t img = dse_tensor_image(t);
    for (int i = 0; i < t->n; i++)
        for (int64_t j = 0; j < img; j++) dst[i * t->stride_n + j] = (float)src[i * img + j];
}

/* A one-layer network with input c x h x w whose layer takes n_in copies of the
 * network input: shapes come from dse_net_infer, as they will in the model. */
static struct dse_layer infer_layer(struct dse_layer l, int n_in, int c, int h, int w) {
    struct dse_net net;
    dse_net_init(&net, "t", c, h, w);
    l.n_inputs = n_in;
    for (int i = 0; i < n_in; i++) l.inputs[i] = DSE_INPUT_DATA;
    CHECK_OK(dse_net_add(&net, &l, NULL));
    CHECK_OK(dse_net_infer(&net, NULL, NULL));
    struct dse_layer out = net.layers[0];
    dse_net_deinit(&net);
    return out;
}

/* ---- one node with its tensors ---------------------------------------------------- */

enum {
    FX_IN_PLACE = 1,  /* out is in[0] */
    FX_VIEWS    = 2,  /* concat: inputs are views of their slices of out */
    FX_NO_PREP  = 4,  /* do not prepare (the test wants the check to fail) */
};

struct fx {
    struct dse_layer  layer;
    struct dse_node   node;
    struct dse_tensor in[4], out, w, b, rm, rv;
    int               n_in;
    int32_t           labels[16];
};

/* Build node + tensors for an inferred layer; inputs [N, in_c[i], in_h, in_w] (in_c
 * NULL: layer->in_c), all with grads, random data; params random. */
static void fx_init(struct fx *f, struct dse_cpu_ctx *cx, const struct dse_layer *l, int N, int n_in,
                    const int *in_c, unsigned flags, uint64_t seed) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, seed, 7);
    memset(f, 0, sizeof *f);
    f->layer = *l;
    f->n_in = n_in;
    enum dse_op op;
    CHECK_OK(dse_op_from_layer(l, &op, NULL));
    dse_node_init(&f->node, op, &f->layer);
    const int H = l->in_h, W = l->in_w;
    if (op == DSE_OP_SOFTMAX_XENT) {
        CHECK_OK(dse_tensor_init(&f->out, 1, 1, 1, 1, DSE_TENSOR_GRAD, NULL));
    } else if (flags & FX_VIEWS) {
        CHECK_OK(dse_tensor_init(&f->out, N, l->out_c, l->out_h, l->out_w, DSE_TENSOR_GRAD, NULL));
    }
    int c0 = 0;
    for (int i = 0; i < n_in; i++) {
        int c = in_c ? in_c[i] : l->in_c;
        if (flags & FX_VIEWS)
            dse_tensor_view_channels(&f->in[i], &f->out, c0, c);
        else
            CHECK_OK(dse_tensor_init(&f->in[i], N, c, H, W, DSE_TENSOR_GRAD, NULL));
        c0 += c;
        fill_uniform(&f->in[i], &r, -1.0f, 1.0f);
        f->node.in[i] = &f->in[i];
    }
    f->node.n_in = n_in;
    if (flags & FX_IN_PLACE)
        dse_tensor_wrap(&f->out, N, f->in[0].c, H, W, f->in[0].stride_n, f->in[0].data, f->in[0].grad,
                        DSE_MEM_HOST);
    else if (!f->out.data)
        CHECK_OK(dse_tensor_init(&f->out, N, l->out_c, l->out_h, l->out_w, DSE_TENSOR_GRAD, NULL));
    f->node.out = &f->out;
    const int C = l->in_c, K = l->num_output;
    switch (op) {
    case DSE_OP_CONV2D:
        CHECK_OK(dse_tensor_init(&f->w, K, C / l->groups, l->kernel_h, l->kernel_w, DSE_TENSOR_GRAD, NULL));
        break;
    case DSE_OP_FC:
        CHECK_OK(dse_tensor_init(&f->w, K, C * H * W, 1, 1, DSE_TENSOR_GRAD, NULL));
        break;
    case DSE_OP_BATCHNORM:
        CHECK_OK(dse_tensor_init(&f->rm, 1, C, 1, 1, 0, NULL));
        CHECK_OK(dse_tensor_init(&f->rv, 1, C, 1, 1, 0, NULL));
        fill_uniform(&f->rm, &r, -0.5f, 0.5f);
        fill_uniform(&f->rv, &r, 0.5f, 1.5f);
        f->node.run_mean = &f->rm, f->node.run_var = &f->rv;
        if (l->affine) {
            CHECK_OK(dse_tensor_init(&f->w, 1, C, 1, 1, DSE_TENSOR_GRAD, NULL));
            CHECK_OK(dse_tensor_init(&f->b, 1, C, 1, 1, DSE_TENSOR_GRAD, NULL));
        }
        break;
    case DSE_OP_SCALE:
        CHECK_OK(dse_tensor_init(&f->w, 1, C, 1, 1, DSE_TENSOR_GRAD, NULL));
        break;
    case DSE_OP_SOFTMAX_XENT:
        for (int i = 0; i < N; i++) f->labels[i] = (int32_t)dse_pcg32_bounded(&r, (uint32_t)C);
        f->node.labels = f->labels;
        break;
    default:
        break;
    }
    if ((op == DSE_OP_CONV2D || op == DSE_OP_FC || op == DSE_OP_SCALE) && l->bias)
        CHECK_OK(dse_tensor_init(&f->b, 1, op == DSE_OP_SCALE ? C : K, 1, 1, DSE_TENSOR_GRAD, NULL));
    if (f->w.data) fill_uniform(&f->w, &r, -1.0f, 1.0f), f->node.weight = &f->w;
    if (f->b.data) fill_uniform(&f->b, &r, -1.0f, 1.0f), f->node.bias = &f->b;
    if (flags & FX_NO_PREP) return;
    struct dse_err err = { 0 };
    enum dse_status st = dse_cpu_node_prepare(cx, &f->node, &err);
    CHECK_OK(st);
    if (st) fprintf(stderr, "  %s\n", err.msg);
}

static void fx_deinit(struct fx *f) {
    dse_node_deinit(&f->node);
    for (int i = 0; i < 4; i++) dse_tensor_deinit(&f->in[i]);
    dse_tensor_deinit(&f->out);
    dse_tensor_deinit(&f->w);
    dse_tensor_deinit(&f->b);
    dse_tensor_deinit(&f->rm);
    dse_tensor_deinit(&f->rv);
}

/* ---- the gradient checker ---------------------------------------------------------- */

/* A tensor whose gradient is checked: its data is what gets perturbed. */
struct probe {
    const char        *name;
    struct dse_tensor *t;
    double            *x0;       /* pristine data, contiguous */
    double            *analytic; /* dL/dt from backward, contiguous */
};

struct gc {
    struct dse_cpu_ctx *cx;
    struct dse_node    *n;
    struct dse_pcg32    rng0;   /* ctx generator before forward: every forward sees it */
    struct probe        p[8];
    int                 np, n_inputs;
    double             *r;      /* L = sum r . y */
};

/* Restore the inputs' pristine data (an in-place forward overwrote it), run forward
 * with the same dropout draws, and return L in double. */
static double gc_loss(struct gc *g) {
    for (int i = 0; i < g->n_inputs; i++) scatter(g->p[i].t, g->p[i].x0, g->p[i].t->data);
    g->cx->rng = g->rng0;
    CHECK_OK(dse_cpu_forward(g->cx, g->n));
    const struct dse_tensor *y = g->n->out;
    const int64_t img = dse_tensor_image(y);
    double L = 0.0;
    for (int i = 0; i < y->n; i++)
        for (int64_t j = 0; j < img; j++) L += g->r[i * img + j] * y->data[i * y->stride_n + j];
    return L;
}

static void add_probe(struct gc *g, const char *name, struct dse_tensor *t) {
    if (!t || !t->grad) return;
    struct probe *p = &g->p[g->np++];
    p->name = name, p->t = t;
    p->x0 = malloc((size_t)dse_tensor_count(t) * sizeof(double));
    p->analytic = malloc((size_t)dse_tensor_count(t) * sizeof(double));
    gather(t, t->data, p->x0);
}

/* Central differences with step eps against backward, for every input, weight and bias
 * value of node n. An element fails when |analytic - numeric| > tol * max(|analytic|,
 * |numeric|, floor); floor keeps float rounding on near-zero gradients from counting.
 * Returns the worst ratio err / scale over all probed values. */
static double grad_check(struct dse_cpu_ctx *cx, struct dse_node *n, double eps, double tol, double floor_,
                         const char *what) {
    struct gc g = { .cx = cx, .n = n, .rng0 = cx->rng };
    static const char *in_names[] = { "in0", "in1", "in2", "in3", "in4", "in5", "in6", "in7" };
    for (int i = 0; i < n->n_in; i++) add_probe(&g, in_names[i], n->in[i]);
    g.n_inputs = g.np;
    add_probe(&g, "weight", n->weight);
    add_probe(&g, "bias", n->bias);

    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 99, 1);
    const struct dse_tensor *y = n->out;
    const int64_t ny = dse_tensor_count(y);
    g.r = malloc((size_t)ny * sizeof(double));
    for (int64_t j = 0; j < ny; j++) g.r[j] = n->op == DSE_OP_SOFTMAX_XENT ? 1.0 : uniform(&r, -1.0f, 1.0f);

    /* Analytic: zero every grad, set dL/dy = r, backward. */
    gc_loss(&g);
    for (int k = 0; k < g.np; k++) dse_tensor_zero_grad(g.p[k].t);
    scatter(y, g.r, y->grad);
    CHECK_OK(dse_cpu_backward(cx, n));
    for (int k = 0; k < g.np; k++) gather(g.p[k].t, g.p[k].t->grad, g.p[k].analytic);

    /* The accumulate rule: a second backward adds the same again, to every grad that is
     * not the output's own memory (a concat input viewing its slice). Not in place: there
     * the first backward turned dL/dy into dL/dx. Error relative to the largest value. */
    const int64_t ny_img = dse_tensor_image(y);
    const int in_place = n->out->data == n->in[0]->data && n->op != DSE_OP_CONCAT;
    if (!in_place) CHECK_OK(dse_cpu_backward(cx, n));
    for (int k = 0; k < g.np && !in_place; k++) {
        struct probe *p = &g.p[k];
        const float *gr = p->t->grad;
        if (gr >= y->grad && gr < y->grad + (y->n - 1) * y->stride_n + ny_img) continue;
        const int64_t img = dse_tensor_image(p->t);
        double worst_acc = 0.0, big = 1e-30;
        for (int64_t e = 0; e < dse_tensor_count(p->t); e++) big = fmax(big, fabs(p->analytic[e]));
        for (int64_t e = 0; e < dse_tensor_count(p->t); e++) {
            double twice = gr[e / img * p->t->stride_n + e % img], a = p->analytic[e];
            worst_acc = fmax(worst_acc, fabs(twice - 2 * a) / big);
        }
        if (!(worst_acc <= 1e-5))
            fprintf(stderr, "  %s: a second backward did not add to d/d%s (err %.3g)\n", what, p->name, worst_acc);
        CHECK(worst_acc <= 1e-5);
    }

    double worst = 0.0;
    for (int k = 0; k < g.np; k++) {
        struct probe *p = &g.p[k];
        const int is_input = k < g.n_inputs;
        double pw = 0.0;
        int64_t at = 0;
        double at_a = 0.0, at_n = 0.0;
        for (int64_t e = 0; e < dse_tensor_count(p->t); e++) {
            double *v = is_input ? &p->x0[e] : NULL;
            float *wv = is_input ? NULL : &p->t->data[e]; /* params are contiguous */
            const double orig = is_input ? *v : *wv;
            if (is_input) *v = orig + eps; else *wv = (float)(orig + eps);
            double lp = gc_loss(&g);
            if (is_input) *v = orig - eps; else *wv = (float)(orig - eps);
            double lm = gc_loss(&g);
            if (is_input) *v = orig; else *wv = (float)orig;
            /* The step actually taken, in float (inputs are scattered as floats too). */
            double step = (double)(float)(orig + eps) - (double)(float)(orig - eps);
            double num = (lp - lm) / step, a = p->analytic[e];
            double scale = fmax(fmax(fabs(a), fabs(num)), floor_);
            double ratio = fabs(a - num) / scale;
            if (ratio > pw) pw = ratio, at = e, at_a = a, at_n = num;
        }
        if (pw > tol)
            fprintf(stderr, "  %s: d/d%s[%lld]: backward %.6g, finite difference %.6g (err %.3g > tol %g)\n",
                    what, p->name, (long long)at, at_a, at_n, pw, tol);
        CHECK(pw <= tol);
        if (pw > worst) worst = pw;
    }
    gc_loss(&g); /* leave the node's output as forward computed it */
    for (int k = 0; k < g.np; k++) free(g.p[k].x0), free(g.p[k].analytic);
    free(g.r);
    if (getenv("DSE_TEST_VERBOSE")) printf("  %-40s worst %.3g\n", what, worst);
    return worst;
}

static void ctx_init(struct dse_cpu_ctx *cx) { CHECK_OK(dse_cpu_ctx_init(cx, THREADS, 1234, NULL)); }

/* ---- tensors ------------------------------------------------------------------------- */

static void test_tensor(void) {
    struct dse_tensor t, v;
    struct dse_err err = { 0 };
    CHECK_OK(dse_tensor_init(&t, 2, 5, 3, 4, DSE_TENSOR_GRAD, NULL));
    CHECK_INT_EQ(t.stride_n, 60);
    CHECK_INT_EQ(dse_tensor_count(&t), 120);
    CHECK(dse_tensor_contiguous(&t));
    CHECK(t.data[119] == 0.0f && t.grad[119] == 0.0f); /* zeroed */
    CHECK(((uintptr_t)t.data & 63) == 0);
    /* A view of channels 2..3: same image stride, data and grad inside the parent's. */
    dse_tensor_view_channels(&v, &t, 2, 2);
    CHECK_INT_EQ(v.c, 2);
    CHECK_INT_EQ(v.stride_n, 60);
    CHECK(v.data == t.data + 24 && v.grad == t.grad + 24);
    CHECK(!dse_tensor_contiguous(&v));
    CHECK_INT_EQ(v.owns, 0);
    /* fill and zero_grad on the view touch only its slice. */
    dse_tensor_fill(&t, 1.0f);
    for (int64_t j = 0; j < 120; j++) t.grad[j] = 1.0f;
    dse_tensor_fill(&v, 7.0f);
    dse_tensor_zero_grad(&v);
    int inside = 0, outside = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 60; j++) {
            int in_view = j >= 24 && j < 48;
            if (in_view) inside += t.data[i * 60 + j] == 7.0f && t.grad[i * 60 + j] == 0.0f;
            else outside += t.data[i * 60 + j] == 1.0f && t.grad[i * 60 + j] == 1.0f;
        }
    CHECK_INT_EQ(inside, 48);
    CHECK_INT_EQ(outside, 72);
    dse_tensor_deinit(&v); /* owns nothing: frees nothing */
    dse_tensor_deinit(&t);
    dse_tensor_deinit(&t); /* twice is safe */

    struct dse_tensor *h = NULL;
    CHECK_INT_EQ(dse_tensor_new(1, 0, 1, 1, 0, &h, &err), DSE_ERR_SHAPE);
    CHECK(h == NULL);
    CHECK_STR_EQ(err.msg, "tensor 1x0x1x1: every dimension must be >= 1");
    CHECK_OK(dse_tensor_new(1, 2, 3, 3, 0, &h, &err));
    CHECK(h && !h->grad);
    CHECK_OK(dse_tensor_alloc_grad(h, &err));
    CHECK(h->grad && h->grad[17] == 0.0f);
    dse_tensor_free(h);
    dse_tensor_free(NULL);
}

/* ---- node checks ----------------------------------------------------------------------- */

static void test_node_check(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_err err = { 0 };
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "fire2/expand3x3");
    l.num_output = 4, l.kernel_h = l.kernel_w = 3, l.pad_h = l.pad_w = 1;
    l = infer_layer(l, 1, 2, 5, 5);
    struct fx f;
    fx_init(&f, &cx, &l, 1, 1, NULL, 0, 1);
    CHECK_OK(dse_node_check(&f.node, &err));
    f.w.w = 1; /* 4x2x3x1 */
    CHECK_INT_EQ(dse_node_check(&f.node, &err), DSE_ERR_SHAPE);
    CHECK_STR_EQ(err.msg, "layer 'fire2/expand3x3' (conv2d): weight is 4x2x3x1; expected 4x2x3x3");
    f.w.w = 3;
    f.node.out = &f.in[0]; /* a conv cannot run in place */
    CHECK_INT_EQ(dse_node_check(&f.node, &err), DSE_ERR_SHAPE);
    CHECK_STR_EQ(err.msg, "layer 'fire2/expand3x3' (conv2d): cannot run in place");
    f.node.out = &f.out;
    f.node.bias = NULL;
    CHECK_INT_EQ(dse_node_check(&f.node, &err), DSE_ERR_SHAPE);
    CHECK_STR_EQ(err.msg, "layer 'fire2/expand3x3' (conv2d): bias is missing; expected 1x4x1x1");
    f.node.bias = &f.b;
    fx_deinit(&f);

    /* Layers the engine cannot run say so. */
    enum dse_op op;
    struct dse_layer lrn = dse_layer_make(DSE_LAYER_LRN, "norm1");
    lrn.line = 12;
    CHECK_INT_EQ(dse_op_from_layer(&lrn, &op, &err), DSE_ERR_UNSUPPORTED);
    CHECK_STR_EQ(err.msg, "layer 'norm1' (lrn): the engine has no op for this layer type");
    CHECK_INT_EQ(err.line, 12);
    /* the model-zoo types the analyzer costs but the engine has no op for (issue #14) */
    static const enum dse_layer_type zoo[] = { DSE_LAYER_FLATTEN, DSE_LAYER_RESHAPE, DSE_LAYER_SLICE,
                                               DSE_LAYER_SIGMOID, DSE_LAYER_TANH, DSE_LAYER_POWER };
    for (int k = 0; k < DSE_ARRAY_LEN(zoo); k++) {
        char want[128];
        struct dse_layer z = dse_layer_make(zoo[k], "zoo");
        snprintf(want, sizeof want, "layer 'zoo' (%s): the engine has no op for this layer type",
                 dse_layer_type_str(zoo[k]));
        CHECK_INT_EQ(dse_op_from_layer(&z, &op, &err), DSE_ERR_UNSUPPORTED);
        CHECK_STR_EQ(err.msg, want);
    }
    struct dse_layer prod = dse_layer_make(DSE_LAYER_ELTWISE, "mul");
    prod.eltwise_op = DSE_ELTWISE_PROD;
    CHECK_INT_EQ(dse_op_from_layer(&prod, &op, &err), DSE_ERR_UNSUPPORTED);
    struct dse_layer sum = dse_layer_make(DSE_LAYER_ELTWISE, "add");
    CHECK_OK(dse_op_from_layer(&sum, &op, &err));
    CHECK_INT_EQ(op, DSE_OP_ELTWISE_ADD);
    CHECK_STR_EQ(dse_op_str(DSE_OP_SOFTMAX_XENT), "softmax_xent");
    CHECK_STR_EQ(dse_op_str(DSE_OP_COUNT), "?");

    /* Softmax loss wants class scores, not a map. */
    struct dse_layer sl = infer_layer(dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss"), 1, 10, 2, 2);
    fx_init(&f, &cx, &sl, 2, 1, NULL, FX_NO_PREP, 1);
    CHECK_INT_EQ(dse_node_check(&f.node, &err), DSE_ERR_SHAPE);
    CHECK_STR_EQ(err.msg, "layer 'loss' (softmax_xent): input is 10x2x2; expected 10x1x1 class scores "
                          "(put a global pool or fc before the loss)");
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

/* ---- conv ------------------------------------------------------------------------------- */

struct conv_case {
    const char *id;
    int N, C, H, W, K, kh, kw, sh, sw, ph, pw, dh, dw, groups, bias;
    size_t ws_limit; /* 0: default; small forces GEMM_BATCH to lower one image at a time */
};

static const struct conv_case conv_cases[] = {
    /* id             N  C  H  W  K kh kw sh sw ph pw dh dw  g bias */
    { "3x3-pad1",     2, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    { "3x3-s2-pad1",  2, 3, 7, 6, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0 },
    { "3x3-dil2",     2, 2, 7, 7, 3, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 0 },
    { "3x3-groups2",  2, 4, 5, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2, 1, 0 },
    { "1x1",          2, 5, 4, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
    { "1x1-groups2",  2, 4, 3, 3, 4, 1, 1, 1, 1, 0, 0, 1, 1, 2, 1, 0 },
    { "1x1-s2",       2, 3, 5, 5, 2, 1, 1, 2, 2, 0, 0, 1, 1, 1, 0, 0 },
    { "3x1-mixed",    2, 2, 6, 5, 3, 3, 1, 2, 1, 0, 1, 2, 1, 1, 0, 0 },
    { "overhang",     2, 2, 6, 6, 2, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 0 }, /* (6-3)/2+1 = 2: last column unread */
    { "chunked",      3, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
    { "1ch-3x3",      2, 1, 6, 9, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 }, /* one input channel (conv1 on MNIST) */
    { "2x5-pad",      2, 2, 7, 6, 3, 2, 5, 1, 1, 1, 2, 1, 1, 1, 1, 0 }, /* non-square filter, wider pad */
};

static struct dse_layer conv_layer(const struct conv_case *c) {
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, c->id);
    l.num_output = c->K;
    l.kernel_h = c->kh, l.kernel_w = c->kw, l.stride_h = c->sh, l.stride_w = c->sw;
    l.pad_h = c->ph, l.pad_w = c->pw, l.dilation_h = c->dh, l.dilation_w = c->dw;
    l.groups = c->groups, l.bias = c->bias;
    return infer_layer(l, 1, c->C, c->H, c->W);
}

/* Gradient checks of `algo` on n cases (seeds seed0 + i). */
static void conv_grad_cases(int algo, const struct conv_case *cases, int n, uint64_t seed0) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int i = 0; i < n; i++) {
        const struct conv_case *c = &cases[i];
        struct dse_layer l = conv_layer(c);
        struct fx f;
        fx_init(&f, &cx, &l, c->N, 1, NULL, 0, seed0 + (uint64_t)i);
        f.node.algo_fwd = f.node.algo_bwd = algo;
        cx.ws_limit_bytes = c->ws_limit ? c->ws_limit : (size_t)256 << 20;
        char what[80];
        snprintf(what, sizeof what, "conv %s %s", c->id, dse_cpu_conv_algo_str(algo));
        grad_check(&cx, &f.node, EPS, TOL_CONV, FLOOR, what);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

static void conv_grad(int algo) {
    conv_grad_cases(algo, conv_cases, DSE_ARRAY_LEN(conv_cases), 10);
}

static void test_grad_conv_batch(void) { conv_grad(DSE_CPU_CONV_GEMM_BATCH); }
static void test_grad_conv_image(void) { conv_grad(DSE_CPU_CONV_GEMM_IMAGE); }
/* Winograd: conv_cases (the shapes it cannot run fall back to GEMM_BATCH), then shapes it
 * runs itself: pads 0..3 (the data gradient reads dy at pad 2 - pad, negative for 3),
 * odd and even sizes, partial edge tiles, one image, a chunk of one image. */
static void test_grad_conv_wino(void) {
    conv_grad(DSE_CPU_CONV_WINOGRAD);
    static const struct conv_case wcases[] = {
        /* id           N  C  H  W  K kh kw sh sw ph pw dh dw  g bias ws_limit */
        { "w-pad0",     2, 3, 6, 7, 2, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "w-pad1-7",   1, 2, 7, 7, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "w-pad2-1",   3, 1, 4, 5, 2, 3, 3, 1, 1, 2, 1, 1, 1, 1, 0, 0 },
        { "w-pad3",     2, 2, 3, 4, 1, 3, 3, 1, 1, 3, 3, 1, 1, 1, 1, 0 },
        { "w-tiny",     2, 3, 1, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "w-chunked",  3, 3, 5, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
    };
    conv_grad_cases(DSE_CPU_CONV_WINOGRAD, wcases, DSE_ARRAY_LEN(wcases), 30);
}

/* DIRECT (engine/cpu/mm.c): conv_cases (the shapes it does not run fall back to
 * GEMM_BATCH), then 1x1 shapes that reach every edge of its tiles: columns ending inside a
 * vector (49 = 3 x 16 + 1; 15; 99 = 64 + 35; one pixel), rows not a multiple of 6 (forward,
 * data gradient) or 4 and 6 (weight gradient), and 130 input channels (k in blocks of 64);
 * and 3x3 shapes (8 channels in and out, DIRECT's least): pads 0 and 2 (the data gradient
 * pads dy by 2 and 0), 70 outputs (a block of 64 and one of 6: halves and vector tails),
 * rows of 15 (three pieces of 5, two rows a tile then one), a 1x1 map, and pads that
 * differ between rows and columns. */
static const struct conv_case direct_cases[] = {
    /* id            N   C  H  W   K kh kw sh sw ph pw dh dw  g bias */
    { "d-tails",     2, 13, 7, 7, 14, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
    { "d-k130",      2, 130, 3, 5, 7, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
    { "d-wide",      1, 3, 9, 11, 5, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0 },
    { "d-one-pixel", 3, 4, 1, 1, 6, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
    { "d3-pad0",     2, 8, 6, 7, 8, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
    { "d3-pad2",     1, 8, 4, 5, 9, 3, 3, 1, 1, 2, 2, 1, 1, 1, 0, 0 },
    { "d3-k70",      1, 8, 5, 4, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    { "d3-wide",     1, 8, 5, 15, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    { "d3-1x1-map",  2, 8, 1, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    { "d3-pad2-0",   2, 8, 4, 6, 9, 3, 3, 1, 1, 2, 0, 1, 1, 1, 1, 0 },
};

static void test_grad_conv_direct(void) {
    if (!dse_cpu_direct_isa()) {
        printf("  skipped: this CPU has no AVX2 + FMA (or DSE_CPU_NO_AVX2 is set): DIRECT runs GEMM_BATCH\n");
        return;
    }
    conv_grad(DSE_CPU_CONV_DIRECT);
    conv_grad_cases(DSE_CPU_CONV_DIRECT, direct_cases, DSE_ARRAY_LEN(direct_cases), 40);
}

/* Max |a - b| over max |b|, both read image by image. */
static double rel_diff(const struct dse_tensor *t, const float *a, const float *b) {
    double d = 0.0, m = 0.0;
    for (int i = 0; i < t->n; i++)
        for (int64_t j = 0; j < dse_tensor_image(t); j++) {
            int64_t k = i * t->stride_n + j;
            d = fmax(d, fabs((double)a[k] - b[k]));
            m = fmax(m, fabs((double)b[k]));
        }
    return m > 0.0 ? d / m : d;
}

/* Every strategy, same tensors: forward outputs and every gradient agree with
 * GEMM_BATCH's to 1e-4 (Winograd runs a-3x3 and a-chunked itself). */
static void test_conv_agree(void) {
    static const struct conv_case cases[] = {
        { "a-3x3",      4, 16, 13, 13, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "a-1x1",      4, 32, 9, 9, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "a-1x1-fire", 3, 200, 7, 7, 38, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 }, /* DIRECT: k blocks, tails */
        { "a-7x7-s2",   2, 3, 29, 29, 8, 7, 7, 2, 2, 0, 0, 1, 1, 1, 1, 0 },
        { "a-grp-dil",  3, 8, 11, 10, 12, 3, 3, 1, 2, 2, 1, 2, 1, 4, 0, 0 },
        { "a-chunked",  5, 6, 8, 8, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 20000 },
        { "a-conv1",    4, 1, 28, 28, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        /* images whose col outgrows GEMM_BLOCK_BYTES: GEMM_IMAGE lowers 10 rows of 60 at a
         * time (6 blocks), v1.0's conv1 8 of 111 (14 blocks, the last of 7 rows) */
        { "a-rows-3x3", 2, 24, 60, 60, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "a-rows-v10", 1, 3, 227, 227, 8, 7, 7, 2, 2, 0, 0, 1, 1, 1, 1, 0 },
    };
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        const struct conv_case *c = &cases[i];
        struct dse_layer l = conv_layer(c);
        struct fx f;
        fx_init(&f, &cx, &l, c->N, 1, NULL, 0, 50 + i);
        cx.ws_limit_bytes = c->ws_limit ? c->ws_limit : (size_t)256 << 20;
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 5, 5);
        float *res[DSE_CPU_CONV_COUNT][4]; /* y, dx, dw, db */
        const int64_t ny = dse_tensor_count(&f.out), nx = dse_tensor_count(&f.in[0]),
                      nw = dse_tensor_count(&f.w), nb = f.node.bias ? dse_tensor_count(&f.b) : 0;
        float *dy = malloc((size_t)ny * sizeof *dy);
        for (int64_t j = 0; j < ny; j++) dy[j] = uniform(&r, -1, 1);
        for (int a = 0; a < DSE_CPU_CONV_COUNT; a++) {
            f.node.algo_fwd = f.node.algo_bwd = a;
            CHECK_OK(dse_cpu_forward(&cx, &f.node));
            dse_tensor_zero_grad(&f.in[0]);
            dse_tensor_zero_grad(&f.w);
            if (nb) dse_tensor_zero_grad(&f.b);
            memcpy(f.out.grad, dy, (size_t)ny * sizeof *dy);
            CHECK_OK(dse_cpu_backward(&cx, &f.node));
            const float *src[4] = { f.out.data, f.in[0].grad, f.w.grad, nb ? f.b.grad : NULL };
            const int64_t cnt[4] = { ny, nx, nw, nb };
            for (int k = 0; k < 4; k++) {
                res[a][k] = malloc((size_t)(cnt[k] ? cnt[k] : 1) * sizeof(float));
                if (cnt[k]) memcpy(res[a][k], src[k], (size_t)cnt[k] * sizeof(float));
            }
        }
        static const char *names[4] = { "y", "dx", "dw", "db" };
        const struct dse_tensor *shapes[4] = { &f.out, &f.in[0], &f.w, &f.b };
        for (int a = 1; a < DSE_CPU_CONV_COUNT; a++)
            for (int k = 0; k < 4; k++) {
                if (k == 3 && !nb) continue;
                double d = rel_diff(shapes[k], res[a][k], res[DSE_CPU_CONV_GEMM_BATCH][k]);
                if (!(d <= 1e-4))
                    fprintf(stderr, "  %s: %s differs by %.3g between gemm_batch and %s\n", c->id, names[k], d,
                            dse_cpu_conv_algo_str(a));
                CHECK(d <= 1e-4);
            }
        for (int a = 0; a < DSE_CPU_CONV_COUNT; a++)
            for (int k = 0; k < 4; k++) free(res[a][k]);
        free(dy);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* Forward y and every gradient of node f under `threads` threads, into res[0..3]. */
static void run_threads(struct fx *f, int threads, int algo, const float *dy, float *res[4]) {
    struct dse_cpu_ctx cx;
    CHECK_OK(dse_cpu_ctx_init(&cx, threads, 1234, NULL));
    CHECK_OK(dse_cpu_node_prepare(&cx, &f->node, NULL));
    f->node.algo_fwd = f->node.algo_bwd = algo;
    const int has_b = f->node.bias != NULL;
    CHECK_OK(dse_cpu_forward(&cx, &f->node));
    dse_tensor_zero_grad(&f->in[0]);
    dse_tensor_zero_grad(&f->w);
    if (has_b) dse_tensor_zero_grad(&f->b);
    memcpy(f->out.grad, dy, (size_t)dse_tensor_count(&f->out) * sizeof *dy);
    CHECK_OK(dse_cpu_backward(&cx, &f->node));
    const float *src[4] = { f->out.data, f->in[0].grad, f->w.grad, has_b ? f->b.grad : NULL };
    const int64_t cnt[4] = { dse_tensor_count(&f->out), dse_tensor_count(&f->in[0]), dse_tensor_count(&f->w),
                             has_b ? dse_tensor_count(&f->b) : 0 };
    for (int k = 0; k < 4; k++) {
        res[k] = calloc((size_t)(cnt[k] ? cnt[k] : 1), sizeof(float));
        if (cnt[k]) memcpy(res[k], src[k], (size_t)cnt[k] * sizeof(float));
    }
    dse_cpu_ctx_deinit(&cx);
}

/* The thread tests' fixture: c's conv node with random data (fx_seed) in f, a ctx in cx0, and
 * a random output gradient (dy_seed) to run backward with; free() it. */
static float *threads_fixture(const struct conv_case *c, uint64_t fx_seed, uint64_t dy_seed, struct dse_cpu_ctx *cx0,
                              struct fx *f) {
    const struct dse_layer l = conv_layer(c);
    ctx_init(cx0);
    fx_init(f, cx0, &l, c->N, 1, NULL, 0, fx_seed);
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, dy_seed, dy_seed);
    const int64_t ny = dse_tensor_count(&f->out);
    float *dy = malloc((size_t)ny * sizeof *dy);
    for (int64_t j = 0; j < ny; j++) dy[j] = uniform(&r, -1, 1);
    return dy;
}

/* The kernels split the batch (or, below one image per thread, the output channels)
 * over the ctx's threads (engine/cpu/team.c). Every strategy on shapes with fewer
 * images than threads, more, and a non-multiple: 2, 3 and 4 threads agree with 1 to
 * 1e-5 (only the order of the weight-gradient sums changes), and a second run with the
 * same threads is bit-identical. */
static void test_conv_threads(void) {
    static const struct conv_case cases[] = {
        { "t-one-image", 1, 8, 9, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "t-1x1-one",   1, 16, 6, 6, 10, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "t-five",      5, 6, 8, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "t-groups",    3, 8, 7, 7, 8, 3, 3, 2, 2, 1, 1, 1, 1, 2, 1, 0 },
        { "t-1x1-seven", 7, 12, 5, 5, 6, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        const struct conv_case *c = &cases[i];
        struct dse_cpu_ctx cx0;
        struct fx f;
        float *dy = threads_fixture(c, 70 + (uint64_t)i, 9, &cx0, &f);
        const struct dse_tensor *shapes[4] = { &f.out, &f.in[0], &f.w, &f.b };
        static const char *names[4] = { "y", "dx", "dw", "db" };
        for (int a = 0; a < DSE_CPU_CONV_COUNT; a++) {
            float *ref[4], *got[4], *again[4];
            run_threads(&f, 1, a, dy, ref);
            for (int t = 2; t <= 4; t++) {
                run_threads(&f, t, a, dy, got);
                run_threads(&f, t, a, dy, again);
                for (int k = 0; k < 4; k++) {
                    if (k == 3 && !f.node.bias) continue;
                    const double d = rel_diff(shapes[k], got[k], ref[k]);
                    if (!(d <= 1e-5))
                        fprintf(stderr, "  %s %s: %s differs by %.3g between 1 and %d threads\n", c->id,
                                dse_cpu_conv_algo_str(a), names[k], d, t);
                    CHECK(d <= 1e-5);
                    CHECK(memcmp(got[k], again[k], (size_t)dse_tensor_count(shapes[k]) * sizeof(float)) == 0);
                }
                for (int k = 0; k < 4; k++) free(got[k]), free(again[k]);
            }
            for (int k = 0; k < 4; k++) free(ref[k]);
        }
        free(dy);
        fx_deinit(&f);
        dse_cpu_ctx_deinit(&cx0);
    }
}

/* Issue #31: the thread-count guarantee whatever BLAS kernels run. OpenBLAS's Prescott
 * kernels (what Debian's OpenBLAS runs on CPUs newer than its model table) gave a row other
 * bits in an sgemm of fewer rows, and the forward pass below one image per thread cut the
 * output channels by the threads. Now every sgemm is the same call with any threads
 * (conv2d.c fwd_split): shapes of 1 to 3 images whose output rows or channels are cut into
 * blocks at odd places, every strategy, 2, 3 and 5 threads equal 1 bit for bit, with OpenBLAS forced
 * to Prescott's, Nehalem's and (with AVX2) Haswell's kernels and the setup's choice. */
static void test_conv_threads_blas(void) {
    static const struct conv_case cases[] = {
        /* id             N   C  H  W   K kh kw sh sw ph pw dh dw  g bias */
        { "b-3x3-rows",   1, 5, 17, 19, 37, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },  /* 2 blocks of rows */
        { "b-1x1-rows",   2, 7, 23, 23, 21, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },  /* 4 of rows */
        { "b-3x3-chan",   1, 13, 5, 5, 131, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 }, /* 2 of channels */
        { "b-1x1-chan",   3, 9, 6, 6, 200, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },  /* 2 of channels */
    };
    const unsigned feat = dse_cpu_features();
    const char *cores[4] = { "Prescott", (feat & DSE_CPU_SSE42) ? "Nehalem" : NULL, (feat & DSE_CPU_AVX2) ? "Haswell" : NULL,
                             NULL };
    const int threads[3] = { 2, 3, 5 };
    int same = 0, runs = 0;
    for (int c = 0; c < DSE_ARRAY_LEN(cores); c++) {
        if (c < 3 && !cores[c]) continue;
        if (cores[c] && !dse_blas_has(cores[c])) { /* OpenBLAS without DYNAMIC_ARCH, or another BLAS */
            printf("  SKIP: this BLAS cannot switch to %s's kernels\n", cores[c]);
            continue;
        }
        CHECK_INT_EQ(dse_blas_force(cores[c]), 0); /* the last: NULL, the setup's choice */
        if (cores[c]) CHECK_STR_EQ(dse_blas_core(), cores[c]);
        for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
            const struct conv_case *cc = &cases[i];
            struct dse_cpu_ctx cx0;
            struct fx f;
            float *dy = threads_fixture(cc, 90 + (uint64_t)i, 7, &cx0, &f);
            const struct dse_tensor *shapes[4] = { &f.out, &f.in[0], &f.w, &f.b };
            static const char *names[4] = { "y", "dx", "dw", "db" };
            for (int a = 0; a < DSE_CPU_CONV_COUNT; a++) {
                float *ref[4], *got[4];
                run_threads(&f, 1, a, dy, ref);
                for (int t = 0; t < DSE_ARRAY_LEN(threads); t++) {
                    run_threads(&f, threads[t], a, dy, got);
                    for (int k = 0; k < 4; k++) {
                        const int eq = !memcmp(got[k], ref[k], (size_t)dse_tensor_count(shapes[k]) * sizeof(float));
                        if (!eq)
                            fprintf(stderr, "  %s, %s kernels, %s: %s of %d threads differs from 1 thread's\n", cc->id,
                                    dse_blas_core(), dse_cpu_conv_algo_str(a), names[k], threads[t]);
                        same += eq, runs++;
                    }
                    for (int k = 0; k < 4; k++) free(got[k]);
                }
                for (int k = 0; k < 4; k++) free(ref[k]);
            }
            free(dy);
            fx_deinit(&f);
            dse_cpu_ctx_deinit(&cx0);
        }
    }
    CHECK_INT_EQ(same, runs);
    printf("  %d of %d results of 2, 3 and 5 threads equal 1 thread's under Prescott's%s%s and the setup's kernels\n",
           same, runs, cores[1] ? ", Nehalem's" : "", cores[2] ? ", Haswell's" : "");
}

/* The BLAS kernels' choice (engine/cpu/blas.c) from the CPU's features and the library's
 * core types, never the model: Debian's OpenBLAS 0.3.21 chose Prescott on a 5th-generation
 * Xeon (issue #31). */
static int has_all(const char *sym) { (void)sym; return 1; }
static int has_0321(const char *sym) { return strcmp(sym, "gotoblas_SAPPHIRERAPIDS") != 0; }
static void test_blas_choice(void) {
    const unsigned avx512 = DSE_CPU_SSE42 | DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512;
    static const struct {
        const char *detected, *user;
        unsigned    features;
        int         lib_0321, can;
        const char *to, *how;
    } cases[] = {
        { "Prescott", NULL, DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512 | DSE_CPU_AVX512BF16 | DSE_CPU_AMX, 1, 1,
          "Cooperlake", "chosen by dse from the CPU's features; OpenBLAS chose Prescott" },
        { "Prescott", NULL, DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512 | DSE_CPU_AVX512BF16 | DSE_CPU_AMX, 0, 1,
          "SapphireRapids", "chosen by dse from the CPU's features; OpenBLAS chose Prescott" },
        { "Prescott", NULL, DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512, 1, 1, "SkylakeX", NULL },
        { "Sandybridge", NULL, DSE_CPU_AVX | DSE_CPU_AVX2, 1, 1, "Haswell", NULL },
        { "Zen", NULL, DSE_CPU_AVX | DSE_CPU_AVX2, 1, 1, NULL, "OpenBLAS's own choice, the best this CPU runs" },
        { "Zen", NULL, DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512 | DSE_CPU_AVX512BF16, 1, 1, "Cooperlake", NULL },
        { "Cooperlake", NULL, DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512 | DSE_CPU_AVX512BF16, 1, 1, NULL, NULL },
        { "Prescott", NULL, 0, 1, 1, NULL, "OpenBLAS's own choice, the best this CPU runs" },
        { "Prescott", "Prescott", DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512, 1, 1, NULL,
          "OPENBLAS_CORETYPE=Prescott, set by the user; this CPU runs SkylakeX's, faster" },
        { "Prescott", NULL, DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512, 1, 0, NULL,
          "OpenBLAS's own choice; SkylakeX's would be faster, but this library cannot switch (set "
          "OPENBLAS_CORETYPE=SkylakeX)" },
        { "NeoverseN1", NULL, DSE_CPU_AVX | DSE_CPU_AVX2, 1, 1, NULL, "OpenBLAS's own choice (a core type dse does not rank)" },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        char how[192];
        const char *to = dse_blas_decide(cases[i].detected, cases[i].features, cases[i].user,
                                         cases[i].lib_0321 ? has_0321 : has_all, cases[i].can, how, sizeof how);
        CHECK_STR_EQ(to ? to : "(keep)", cases[i].to ? cases[i].to : "(keep)");
        if (cases[i].how) CHECK_STR_EQ(how, cases[i].how);
    }
    CHECK_STR_EQ(dse_blas_pick(avx512, has_all), "SkylakeX");
    CHECK(dse_blas_level("prescott") == 0 && dse_blas_level("SKYLAKEX") == 4 && dse_blas_level("Power10") == -1);
    /* this machine: the setup ran with the first ctx and left the best kernels it could */
    const struct dse_blas_info *b = dse_blas_setup();
    printf("  this machine: %s kernels (%s); features %s\n", b->core, b->how, b->features);
    CHECK_STR_EQ(b->core, dse_blas_core());
    if (!getenv("OPENBLAS_CORETYPE") && b->best[0] && dse_blas_level(b->detected) >= 0)
        CHECK(dse_blas_level(b->core) >= dse_blas_level(b->best));
}

/* Elementwise and pooling kernels split planes or blocks over the threads, each value
 * computed the same way: 1 and 3 threads give the same bits. */
static void test_elementwise_threads(void) {
    struct dse_layer pool = dse_layer_make(DSE_LAYER_MAXPOOL, "pool");
    pool.kernel_h = pool.kernel_w = 3, pool.stride_h = pool.stride_w = 2;
    struct dse_layer avg = dse_layer_make(DSE_LAYER_AVGPOOL, "avg");
    avg.kernel_h = avg.kernel_w = 3, avg.stride_h = avg.stride_w = 2, avg.pad_h = avg.pad_w = 1;
    struct dse_layer relu = dse_layer_make(DSE_LAYER_RELU, "relu");
    const struct dse_layer ls[3] = { infer_layer(pool, 1, 7, 33, 33), infer_layer(avg, 1, 7, 33, 33),
                                     infer_layer(relu, 1, 7, 33, 33) };
    for (int i = 0; i < 3; i++) {
        float *res[2][2];
        for (int v = 0; v < 2; v++) {
            struct dse_cpu_ctx cx;
            CHECK_OK(dse_cpu_ctx_init(&cx, v ? 3 : 1, 1234, NULL));
            struct fx f;
            fx_init(&f, &cx, &ls[i], 9, 1, NULL, 0, 90 + i);
            CHECK_OK(dse_cpu_forward(&cx, &f.node));
            dse_tensor_zero_grad(&f.in[0]);
            for (int64_t j = 0; j < dse_tensor_count(&f.out); j++) f.out.grad[j] = (float)(j % 13) - 6.0f;
            CHECK_OK(dse_cpu_backward(&cx, &f.node));
            const int64_t ny = dse_tensor_count(&f.out), nx = dse_tensor_count(&f.in[0]);
            res[v][0] = malloc((size_t)ny * sizeof(float));
            res[v][1] = malloc((size_t)nx * sizeof(float));
            memcpy(res[v][0], f.out.data, (size_t)ny * sizeof(float));
            memcpy(res[v][1], f.in[0].grad, (size_t)nx * sizeof(float));
            if (v) {
                CHECK(memcmp(res[0][0], res[1][0], (size_t)ny * sizeof(float)) == 0);
                CHECK(memcmp(res[0][1], res[1][1], (size_t)nx * sizeof(float)) == 0);
            }
            fx_deinit(&f);
            dse_cpu_ctx_deinit(&cx);
        }
        for (int v = 0; v < 2; v++) free(res[v][0]), free(res[v][1]);
    }
}

/* Max pooling with many equal values (three levels, at random): every output and argmax equal a
 * plain row-major scan of its clipped window keeping the first maximum (Caffe's rule),
 * on shapes whose interior columns take the vectorized stride-2 path and whose edges
 * (padding, ceil overhang) take the general one. */
static void test_pool_ties(void) {
    static const struct { int H, W, k, s, pad; } shapes[] = {
        { 28, 28, 3, 2, 0 }, { 13, 17, 3, 2, 1 }, { 9, 10, 2, 2, 0 }, { 11, 11, 5, 2, 2 }, { 8, 9, 3, 1, 1 },
        /* SqueezeNet v1.0's pool1 and shapes whose rows the AVX2 3x3/2 path takes 8 outputs
         * at a time, with a scalar head (pad 1) and tail */
        { 111, 111, 3, 2, 0 }, { 57, 60, 3, 2, 1 }, { 40, 37, 3, 2, 0 },
        /* SqueezeNet-FMNIST's pool4 and pool8 (rows of 7 and 3 outputs: one masked group
         * of fewer than 8), rows of 8 + 1 masked, 16 + 1, and windows clipped to 1 or 2
         * rows by padding or the ceil overhang */
        { 14, 14, 3, 2, 0 }, { 7, 7, 3, 2, 0 }, { 19, 20, 3, 2, 0 }, { 34, 35, 3, 2, 0 }, { 6, 5, 3, 2, 1 },
        { 3, 3, 3, 2, 0 }, { 4, 4, 3, 2, 1 },
    };
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int sh = 0; sh < DSE_ARRAY_LEN(shapes); sh++) {
        struct dse_layer l = dse_layer_make(DSE_LAYER_MAXPOOL, "pool");
        l.kernel_h = l.kernel_w = shapes[sh].k, l.stride_h = l.stride_w = shapes[sh].s;
        l.pad_h = l.pad_w = shapes[sh].pad;
        l = infer_layer(l, 1, 3, shapes[sh].H, shapes[sh].W);
        struct fx f;
        fx_init(&f, &cx, &l, 2, 1, NULL, 0, 60 + sh);
        /* -1, 0 or 1 at random: ties within rows and across them, maxima in any row */
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 61 + sh, 1);
        for (int64_t j = 0; j < dse_tensor_count(&f.in[0]); j++)
            f.in[0].data[j] = (float)dse_pcg32_bounded(&r, 3) - 1.0f;
        CHECK_OK(dse_cpu_forward(&cx, &f.node));
        const int H = l.in_h, W = l.in_w, P = l.out_h, Q = l.out_w, k = l.kernel_h, st = l.stride_h, pd = l.pad_h;
        int bad = 0;
        for (int nc = 0; nc < 2 * 3; nc++)
            for (int p = 0; p < P; p++)
                for (int q = 0; q < Q; q++) {
                    int h0 = p * st - pd, w0 = q * st - pd, h1 = h0 + k, w1 = w0 + k;
                    h0 = h0 < 0 ? 0 : h0, w0 = w0 < 0 ? 0 : w0, h1 = h1 > H ? H : h1, w1 = w1 > W ? W : w1;
                    const float *xp = f.in[0].data + (int64_t)nc * H * W;
                    int arg = h0 * W + w0;
                    for (int h = h0; h < h1; h++)
                        for (int w = w0; w < w1; w++)
                            if (xp[h * W + w] > xp[arg]) arg = h * W + w;
                    const int64_t o = ((int64_t)nc * P + p) * Q + q;
                    bad += f.out.data[o] != xp[arg] || f.node.st.argmax[o] != arg;
                }
        if (bad) fprintf(stderr, "  pool shape %d: %d outputs differ from a plain scan\n", sh, bad);
        CHECK_INT_EQ(bad, 0);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* Winograd against GEMM_BATCH on larger shapes (SqueezeNet's odd maps, pads 0 and 1,
 * C and K of no particular multiple), with y a view of channels [2, 2+K) of a wider
 * tensor (a concat buffer): y, dx, dw, db agree to 1e-4 of the largest value, and the
 * channels outside the view keep their contents, forward and backward. */
static void test_conv_wino_agree(void) {
    static const struct conv_case cases[] = {
        /* id            N   C   H   W   K kh kw sh sw ph pw dh dw  g bias ws_limit */
        { "wa-7",        3, 17,  7,  7, 23, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "wa-13",       2, 16, 13, 13, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "wa-14-pad0",  1,  9, 14, 14, 11, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "wa-27",       2,  5, 27, 27,  7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
        { "wa-27-pad0",  3,  3, 27, 26,  6, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "wa-chunked",  3, 10, 13, 13,  9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 60000 },
    };
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        const struct conv_case *c = &cases[i];
        struct dse_layer l = conv_layer(c);
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 70 + i, 3);
        struct dse_tensor x, wide, y, w, b;
        memset(&b, 0, sizeof b);
        CHECK_OK(dse_tensor_init(&x, c->N, c->C, c->H, c->W, DSE_TENSOR_GRAD, NULL));
        CHECK_OK(dse_tensor_init(&wide, c->N, c->K + 3, l.out_h, l.out_w, DSE_TENSOR_GRAD, NULL));
        dse_tensor_view_channels(&y, &wide, 2, c->K);
        CHECK_OK(dse_tensor_init(&w, c->K, c->C, 3, 3, DSE_TENSOR_GRAD, NULL));
        if (c->bias) CHECK_OK(dse_tensor_init(&b, 1, c->K, 1, 1, DSE_TENSOR_GRAD, NULL));
        fill_uniform(&x, &r, -1, 1);
        fill_uniform(&w, &r, -1, 1);
        if (c->bias) fill_uniform(&b, &r, -1, 1);
        struct dse_node n;
        dse_node_init(&n, DSE_OP_CONV2D, &l);
        n.n_in = 1, n.in[0] = &x, n.out = &y, n.weight = &w, n.bias = c->bias ? &b : NULL;
        struct dse_err err = { 0 };
        CHECK_OK(dse_cpu_node_prepare(&cx, &n, &err));
        cx.ws_limit_bytes = c->ws_limit ? c->ws_limit : (size_t)256 << 20;
        const int64_t nwide = dse_tensor_count(&wide), nx = dse_tensor_count(&x), nw = dse_tensor_count(&w);
        const int64_t nb = c->bias ? c->K : 0;
        float *dwide = malloc((size_t)nwide * sizeof(float));
        for (int64_t j = 0; j < nwide; j++) dwide[j] = uniform(&r, -1, 1);
        float *res[2][4];
        const int algos[2] = { DSE_CPU_CONV_GEMM_BATCH, DSE_CPU_CONV_WINOGRAD };
        for (int a = 0; a < 2; a++) {
            n.algo_fwd = n.algo_bwd = algos[a];
            dse_tensor_fill(&wide, 7.0f); /* sentinel outside the view */
            CHECK_OK(dse_cpu_forward(&cx, &n));
            memcpy(wide.grad, dwide, (size_t)nwide * sizeof(float));
            dse_tensor_zero_grad(&x);
            dse_tensor_zero_grad(&w);
            if (nb) dse_tensor_zero_grad(&b);
            CHECK_OK(dse_cpu_backward(&cx, &n));
            const int64_t img = dse_tensor_image(&wide), PQ = (int64_t)l.out_h * l.out_w;
            int outside_ok = 1;
            for (int im = 0; im < c->N; im++)
                for (int64_t j = 0; j < img; j++) {
                    const int ch = (int)(j / PQ);
                    if (ch >= 2 && ch < 2 + c->K) continue;
                    if (wide.data[im * wide.stride_n + j] != 7.0f || wide.grad[im * wide.stride_n + j] != dwide[im * img + j])
                        outside_ok = 0;
                }
            CHECK(outside_ok);
            const float *src[4] = { wide.data, x.grad, w.grad, nb ? b.grad : NULL };
            const int64_t cnt[4] = { nwide, nx, nw, nb };
            for (int k = 0; k < 4; k++) {
                res[a][k] = malloc((size_t)(cnt[k] ? cnt[k] : 1) * sizeof(float));
                if (cnt[k]) memcpy(res[a][k], src[k], (size_t)cnt[k] * sizeof(float));
            }
        }
        static const char *names[4] = { "y", "dx", "dw", "db" };
        const struct dse_tensor *shapes[4] = { &y, &x, &w, &b };
        for (int k = 0; k < 4; k++) {
            if (k == 3 && !nb) continue;
            /* y is compared through the view (image stride of the wide tensor). */
            const int64_t off = k == 0 ? y.data - wide.data : 0;
            double d = rel_diff(shapes[k], res[1][k] + off, res[0][k] + off);
            if (!(d <= 1e-4)) fprintf(stderr, "  %s: %s differs by %.3g (winograd vs gemm_batch)\n", c->id, names[k], d);
            CHECK(d <= 1e-4);
        }
        for (int a = 0; a < 2; a++)
            for (int k = 0; k < 4; k++) free(res[a][k]);
        free(dwide);
        dse_node_deinit(&n);
        dse_tensor_deinit(&x), dse_tensor_deinit(&wide), dse_tensor_deinit(&w), dse_tensor_deinit(&b);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* One forward and backward of f's node; out, dx, dw, db copied into buf (in that order). */
static size_t run_copy(struct dse_cpu_ctx *cx, struct fx *f, float *buf) {
    dse_tensor_zero_grad(&f->in[0]);
    if (f->node.weight) dse_tensor_zero_grad(&f->w);
    if (f->node.bias) dse_tensor_zero_grad(&f->b);
    CHECK_OK(dse_cpu_forward(cx, &f->node));
    for (int64_t j = 0; j < dse_tensor_count(&f->out); j++) f->out.grad[j] = (float)((j * 37) % 11) - 5.0f;
    CHECK_OK(dse_cpu_backward(cx, &f->node));
    size_t n = 0;
    const struct dse_tensor *ts[4] = { &f->out, &f->in[0], f->node.weight ? &f->w : NULL,
                                       f->node.bias ? &f->b : NULL };
    for (int k = 0; k < 4; k++) {
        const float *src = !ts[k] ? NULL : k == 0 ? ts[k]->data : ts[k]->grad;
        if (!src || dse_tensor_count(ts[k]) == 0) continue; /* pooling has no weights */
        const int64_t c = dse_tensor_count(ts[k]);
        if (buf) memcpy(buf + n, src, (size_t)c * sizeof(float));
        n += (size_t)c;
    }
    return n;
}

/* The AVX2 kernels (Winograd tile transforms, 3x3/2 max pooling) give the scalar code's
 * bits: the same operations in the same order. Each shape runs both ways
 * (DSE_CPU_NO_AVX2) and must agree exactly; shapes with rows of at least 8 tiles or 8
 * full pooling windows, so the vector paths run. */
static void test_simd_exact(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (!__builtin_cpu_supports("avx2")) {
        printf("  this CPU has no AVX2: only the scalar kernels exist to compare\n");
        return;
    }
#endif
    static const struct conv_case wc[] = {
        /* id            N   C   H   W   K kh kw sh sw ph pw dh dw  g bias ws_limit */
        { "se-27",       2,  5, 27, 27,  7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "se-40-pad0",  2,  3, 40, 35,  4, 3, 3, 1, 1, 0, 0, 1, 1, 1, 0, 0 },
    };
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    const char *keep = getenv("DSE_CPU_NO_AVX2");
    for (int i = 0; i < DSE_ARRAY_LEN(wc) + 2; i++) {
        struct dse_layer l;
        int N = 2;
        if (i < DSE_ARRAY_LEN(wc)) {
            l = conv_layer(&wc[i]);
            N = wc[i].N;
        } else { /* SqueezeNet v1.0's pool1, and a padded one with a scalar head */
            l = dse_layer_make(DSE_LAYER_MAXPOOL, "pool");
            l.kernel_h = l.kernel_w = 3, l.stride_h = l.stride_w = 2, l.pad_h = l.pad_w = i - DSE_ARRAY_LEN(wc);
            l = infer_layer(l, 1, 3, 111, 60 + i);
        }
        struct fx f;
        fx_init(&f, &cx, &l, N, 1, NULL, 0, 90 + i);
        if (l.type == DSE_LAYER_CONV) f.node.algo_fwd = f.node.algo_bwd = DSE_CPU_CONV_WINOGRAD;
        unsetenv("DSE_CPU_NO_AVX2");
        const size_t n = run_copy(&cx, &f, NULL);
        float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        run_copy(&cx, &f, a);
        setenv("DSE_CPU_NO_AVX2", "1", 1);
        run_copy(&cx, &f, b);
        const int same = memcmp(a, b, n * sizeof *a) == 0;
        if (!same) fprintf(stderr, "  %s: AVX2 and scalar results differ\n", i < DSE_ARRAY_LEN(wc) ? wc[i].id : "pool");
        CHECK(same);
        free(a), free(b);
        fx_deinit(&f);
    }
    if (keep) setenv("DSE_CPU_NO_AVX2", keep, 1);
    else unsetenv("DSE_CPU_NO_AVX2");
    dse_cpu_ctx_deinit(&cx);
}

/* DIRECT's two instruction sets give the same bits (mm.c: one chain of fused multiply-adds
 * per element in a fixed order, the 1x1 dot products' 16 lanes added in one tree): AVX-512
 * against AVX2 (DSE_CPU_NO_AVX512), forward with the fused ReLU and backward, on
 * SqueezeNet-like 1x1 and 3x3 shapes with every kind of edge, on 1 and 3 threads. */
static void test_conv_direct_exact(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (!dse_cpu_direct_isa()) {
        printf("  skipped: this CPU has no AVX2 + FMA (or DSE_CPU_NO_AVX2 is set): DIRECT does not run\n");
        return;
    }
    const int has512 = __builtin_cpu_supports("avx512f");
    if (!has512) printf("  this CPU has no AVX-512: AVX2 only, on 1 and 3 threads\n");
    static const struct conv_case dc[] = {
        /* id             N    C   H   W    K kh kw sh sw ph pw dh dw  g bias */
        { "x-fire5-sq",   5, 256,  7,  7,  32, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "x-fire2-ex",   3,  16, 14, 14,  64, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "x-odd",        4,  70,  5, 13,  23, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "x-fire6-ex3",  3,  48,  7,  7, 192, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "x-odd3",       2,   9,  9, 13,  23, 3, 3, 1, 1, 2, 0, 1, 1, 1, 1, 0 },
        { "x-wide3",      2,   8, 11, 55,  40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        /* 40 images: slices of 2 or 3, so a weight-gradient chunk holds several */
        { "x-batch1",    40,  12,  7,  7,  10, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "x-batch3",    40,   8,  7,  7,  20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    };
    const char *keep = getenv("DSE_CPU_NO_AVX512");
    int bad = 0;
    for (int i = 0; i < DSE_ARRAY_LEN(dc); i++) {
        struct dse_layer l = conv_layer(&dc[i]);
        float *res[2][2] = { { NULL, NULL }, { NULL, NULL } }; /* [isa][threads 1, 3] */
        size_t n = 0;
        for (int v = 0; v < 4; v++) {
            const int avx2 = v / 2, threads = v % 2 ? 3 : 1;
            if (avx2 ? 0 : !has512) continue;
            if (avx2) setenv("DSE_CPU_NO_AVX512", "1", 1);
            else unsetenv("DSE_CPU_NO_AVX512");
            struct dse_cpu_ctx cx;
            CHECK_OK(dse_cpu_ctx_init(&cx, threads, 1234, NULL));
            struct fx f;
            fx_init(&f, &cx, &l, dc[i].N, 1, NULL, 0, 120 + i);
            f.node.algo_fwd = f.node.algo_bwd = DSE_CPU_CONV_DIRECT;
            f.node.relu_out = 1;
            n = run_copy(&cx, &f, NULL);
            res[avx2][v % 2] = malloc(n * sizeof(float));
            run_copy(&cx, &f, res[avx2][v % 2]);
            fx_deinit(&f);
            dse_cpu_ctx_deinit(&cx);
        }
        const float *ref = res[1][0];
        for (int v = 0; v < 4; v++) {
            if (!res[v / 2][v % 2]) continue;
            const int same = memcmp(res[v / 2][v % 2], ref, n * sizeof(float)) == 0;
            bad += !same;
            if (!same)
                fprintf(stderr, "  %s: %s on %d threads differs from AVX2 on 1\n", dc[i].id, v / 2 ? "AVX2" : "AVX-512",
                        v % 2 ? 3 : 1);
            CHECK(same);
        }
        for (int v = 0; v < 4; v++) free(res[v / 2][v % 2]);
    }
    if (keep) setenv("DSE_CPU_NO_AVX512", keep, 1);
    else unsetenv("DSE_CPU_NO_AVX512");
    /* Frozen filters (no weight gradient): the data gradient alone, the same bits, in its
     * own workspace layout (a review found the dy plane written past it). */
    for (int i = 0; i < DSE_ARRAY_LEN(dc); i++) {
        struct dse_layer l = conv_layer(&dc[i]);
        struct dse_cpu_ctx cx;
        CHECK_OK(dse_cpu_ctx_init(&cx, 2, 1234, NULL));
        struct fx f;
        fx_init(&f, &cx, &l, dc[i].N, 1, NULL, 0, 140 + i);
        f.node.algo_fwd = f.node.algo_bwd = DSE_CPU_CONV_DIRECT;
        const int64_t nx = dse_tensor_count(&f.in[0]);
        float *dx = malloc((size_t)nx * sizeof *dx), *wg = f.w.grad;
        run_copy(&cx, &f, NULL);
        memcpy(dx, f.in[0].grad, (size_t)nx * sizeof *dx);
        f.w.grad = NULL;
        dse_tensor_zero_grad(&f.in[0]);
        CHECK_OK(dse_cpu_backward(&cx, &f.node));
        const int same = memcmp(dx, f.in[0].grad, (size_t)nx * sizeof *dx) == 0;
        if (!same) fprintf(stderr, "  %s: dx without a weight gradient differs\n", dc[i].id);
        bad += !same;
        CHECK(same);
        f.w.grad = wg;
        free(dx);
        fx_deinit(&f);
        dse_cpu_ctx_deinit(&cx);
    }
    printf("  DIRECT, %d shapes: AVX-512%s and AVX2, 1 and 3 threads: %s\n", DSE_ARRAY_LEN(dc),
           has512 ? "" : " (absent)", bad ? "DIFFERENT bits" : "the same bits");
#else
    printf("  skipped: not x86-64: DIRECT does not run\n");
#endif
}

/* AUTO never picks Winograd for a shape it does not run: timing skips it (ms -1), and
 * forcing it runs GEMM_BATCH (the same bits). A 3x3 stride-1 shape times it. */
static void test_conv_wino_choose(void) {
    static const struct conv_case cases[] = {
        /* id            N  C  H  W  K kh kw sh sw ph pw dh dw  g bias ws_limit */
        { "wc-ok",       2, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "wc-s2",       2, 4, 9, 9, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0 },
        { "wc-1x1",      2, 4, 8, 8, 4, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "wc-5x5",      2, 4, 8, 8, 4, 5, 5, 1, 1, 2, 2, 1, 1, 1, 1, 0 },
        { "wc-dil2",     2, 4, 8, 8, 4, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 0 },
        { "wc-groups2",  2, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 2, 1, 0 },
        { "wc-3x1",      2, 4, 8, 8, 4, 3, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0 },
    };
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        const struct conv_case *c = &cases[i];
        struct dse_layer l = conv_layer(c);
        struct fx f;
        fx_init(&f, &cx, &l, c->N, 1, NULL, 0, 90 + i);
        struct dse_cpu_conv_choice ch;
        CHECK_OK(dse_cpu_conv2d_choose(&cx, &f.node, &ch));
        if (i == 0) {
            CHECK(ch.ms_fwd[DSE_CPU_CONV_WINOGRAD] > 0.0f && ch.ms_bwd[DSE_CPU_CONV_WINOGRAD] > 0.0f);
            fx_deinit(&f);
            continue;
        }
        CHECK(ch.ms_fwd[DSE_CPU_CONV_WINOGRAD] == -1.0f && ch.ms_bwd[DSE_CPU_CONV_WINOGRAD] == -1.0f);
        CHECK(ch.algo_fwd != DSE_CPU_CONV_WINOGRAD && ch.algo_bwd != DSE_CPU_CONV_WINOGRAD);
        CHECK(ch.algo_fwd >= 0 && ch.algo_bwd >= 0);
        const int64_t ny = dse_tensor_count(&f.out), nx = dse_tensor_count(&f.in[0]);
        float *ref = malloc((size_t)(ny + nx) * sizeof(float));
        for (int64_t j = 0; j < ny; j++) f.out.grad[j] = (float)(j % 7) - 3.0f;
        for (int a = 0; a < 2; a++) {
            f.node.algo_fwd = f.node.algo_bwd = a ? DSE_CPU_CONV_WINOGRAD : DSE_CPU_CONV_GEMM_BATCH;
            CHECK_OK(dse_cpu_forward(&cx, &f.node));
            dse_tensor_zero_grad(&f.in[0]);
            CHECK_OK(dse_cpu_backward(&cx, &f.node));
            if (!a) {
                memcpy(ref, f.out.data, (size_t)ny * sizeof(float));
                memcpy(ref + ny, f.in[0].grad, (size_t)nx * sizeof(float));
            } else {
                CHECK(memcmp(ref, f.out.data, (size_t)ny * sizeof(float)) == 0);
                CHECK(memcmp(ref + ny, f.in[0].grad, (size_t)nx * sizeof(float)) == 0);
            }
        }
        free(ref);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* AUTO times each strategy once per shape (forward on the first forward, backward on the
 * first backward), caches it, and an explicit algo or ctx force skips the timing. */
static void test_conv_choose(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    const struct conv_case c = { "choose", 2, 4, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 };
    struct dse_layer l = conv_layer(&c);
    struct fx f, f2;
    fx_init(&f, &cx, &l, c.N, 1, NULL, 0, 3);
    fx_init(&f2, &cx, &l, c.N, 1, NULL, 0, 4);
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK_INT_EQ(cx.stats.conv_timings, 1);
    CHECK_INT_EQ(cx.conv_cache_n, 1);
    CHECK(cx.conv_cache[0].algo_fwd >= 0 && cx.conv_cache[0].algo_fwd < DSE_CPU_CONV_COUNT);
    CHECK(cx.conv_cache[0].algo_bwd == DSE_CPU_CONV_AUTO);
    CHECK(cx.conv_cache[0].ms_fwd[0] > 0.0f && cx.conv_cache[0].ms_fwd[1] > 0.0f);
    /* Its output is the chosen strategy's, not clobbered by the timing runs' order. */
    float *y = malloc((size_t)dse_tensor_count(&f.out) * sizeof *y);
    memcpy(y, f.out.data, (size_t)dse_tensor_count(&f.out) * sizeof *y);
    f.node.algo_fwd = cx.conv_cache[0].algo_fwd;
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK(memcmp(y, f.out.data, (size_t)dse_tensor_count(&f.out) * sizeof *y) == 0);
    f.node.algo_fwd = DSE_ALGO_AUTO;
    free(y);
    /* Another node of the same shape reuses the entry. */
    CHECK_OK(dse_cpu_forward(&cx, &f2.node));
    CHECK_INT_EQ(cx.stats.conv_timings, 1);
    /* Backward: timed once, with scratch gradients: the node's grads get one backward. */
    dse_tensor_fill(&f.out, 0.0f);
    for (int64_t j = 0; j < dse_tensor_count(&f.out); j++) f.out.grad[j] = 1.0f;
    CHECK_OK(dse_cpu_backward(&cx, &f.node));
    CHECK_INT_EQ(cx.stats.conv_timings, 2);
    CHECK(cx.conv_cache[0].algo_bwd >= 0 && cx.conv_cache[0].algo_bwd < DSE_CPU_CONV_COUNT);
    /* db = sum of dy over batch and pixels = 2 * 36, once (not once per timing run). */
    CHECK_NEAR(f.b.grad[0], 72.0, 1e-6);
    struct dse_cpu_conv_choice ch;
    CHECK_OK(dse_cpu_conv2d_choose(&cx, &f.node, &ch));
    CHECK_INT_EQ(cx.stats.conv_timings, 2);
    CHECK_INT_EQ(ch.algo_bwd, cx.conv_cache[0].algo_bwd);
    /* A different batch is a different shape. */
    fx_deinit(&f2);
    fx_init(&f2, &cx, &l, 3, 1, NULL, 0, 4);
    cx.conv_force = DSE_CPU_CONV_GEMM_IMAGE; /* forced: no timing */
    CHECK_OK(dse_cpu_forward(&cx, &f2.node));
    CHECK_INT_EQ(cx.stats.conv_timings, 2);
    cx.conv_force = DSE_CPU_CONV_AUTO;
    CHECK_OK(dse_cpu_forward(&cx, &f2.node));
    CHECK_INT_EQ(cx.stats.conv_timings, 3);
    CHECK_INT_EQ(cx.conv_cache_n, 2);
    f2.node.algo_fwd = 7;
    CHECK_INT_EQ(dse_cpu_forward(&cx, &f2.node), DSE_ERR_CONFIG);
    CHECK_STR_EQ(cx.err.msg, "layer 'choose' (conv2d): conv strategy 7 does not exist on the CPU");
    fx_deinit(&f);
    fx_deinit(&f2);
    dse_cpu_ctx_deinit(&cx);
}

/* ---- pooling ----------------------------------------------------------------------------- */

struct pool_case {
    const char *id;
    enum dse_layer_type type;
    int N, C, H, W, k, s, pad, global;
    enum dse_round round;
    int out; /* expected out_h = out_w (Caffe's rule, from dse_net_infer) */
};

static const struct pool_case pool_cases[] = {
    /* id                type               N  C  H  W  k  s pad glob round           out */
    { "max-ceil-overhang", DSE_LAYER_MAXPOOL, 2, 2, 6, 6, 3, 2, 0, 0, DSE_ROUND_CEIL,  3 },
    { "max-pad1",          DSE_LAYER_MAXPOOL, 2, 2, 5, 5, 3, 2, 1, 0, DSE_ROUND_CEIL,  3 },
    { "max-floor",         DSE_LAYER_MAXPOOL, 2, 2, 6, 6, 3, 2, 0, 0, DSE_ROUND_FLOOR, 2 },
    { "max-global",        DSE_LAYER_MAXPOOL, 2, 3, 4, 5, 0, 0, 0, 1, DSE_ROUND_CEIL,  1 },
    { "max-empty-window",  DSE_LAYER_MAXPOOL, 1, 2, 4, 4, 1, 2, 0, 0, DSE_ROUND_CEIL,  3 },
    { "avg-ceil-overhang", DSE_LAYER_AVGPOOL, 2, 2, 6, 6, 3, 2, 0, 0, DSE_ROUND_CEIL,  3 },
    { "avg-pad1-edge",     DSE_LAYER_AVGPOOL, 2, 2, 6, 6, 3, 2, 1, 0, DSE_ROUND_CEIL,  4 },
    { "avg-floor",         DSE_LAYER_AVGPOOL, 2, 2, 7, 7, 2, 2, 0, 0, DSE_ROUND_FLOOR, 3 },
    { "avg-global",        DSE_LAYER_AVGPOOL, 3, 4, 5, 3, 0, 0, 0, 1, DSE_ROUND_CEIL,  1 },
    { "avg-empty-window",  DSE_LAYER_AVGPOOL, 1, 2, 4, 4, 1, 2, 0, 0, DSE_ROUND_CEIL,  3 },
};

static struct dse_layer pool_layer(const struct pool_case *c) {
    struct dse_layer l = dse_layer_make(c->type, c->id);
    l.kernel_h = l.kernel_w = c->k, l.stride_h = l.stride_w = c->s, l.pad_h = l.pad_w = c->pad;
    l.global = c->global, l.round = c->round;
    return infer_layer(l, 1, c->C, c->H, c->W);
}

static void test_grad_pool(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int i = 0; i < DSE_ARRAY_LEN(pool_cases); i++) {
        const struct pool_case *c = &pool_cases[i];
        struct dse_layer l = pool_layer(c);
        CHECK_INT_EQ(l.out_h, c->out);
        if (!c->global) CHECK_INT_EQ(l.out_w, c->out);
        struct fx f;
        fx_init(&f, &cx, &l, c->N, 1, NULL, 0, 20 + i);
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 20 + i, 3);
        fill_distinct(&f.in[0], &r, 0.05f);
        char what[80];
        snprintf(what, sizeof what, "pool %s", c->id);
        grad_check(&cx, &f.node, EPS, TOL_POOL, FLOOR, what);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* Values Caffe's pooling_layer.cpp gives, worked by hand. Input: x[y][x] = 6y + x. */
static void test_pool_values(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct fx f;
    /* AVE, k3 s2 pad1 on 6x6 -> 4x4. Row windows: [-1,2) size 3 (the pad row counts),
     * [1,4), [3,6), [5,8) clipped to the padded input [5,7): size 2, one real row. */
    struct pool_case avg = { "avg", DSE_LAYER_AVGPOOL, 1, 1, 6, 6, 3, 2, 1, 0, DSE_ROUND_CEIL, 4 };
    struct dse_layer l = pool_layer(&avg);
    fx_init(&f, &cx, &l, 1, 1, NULL, 0, 1);
    for (int j = 0; j < 36; j++) f.in[0].data[j] = (float)j;
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    /* (0,0): rows 0-1, cols 0-1: (0+1+6+7) / 9 */
    CHECK_NEAR(f.out.data[0], 14.0 / 9.0, 1e-6);
    /* (0,3): rows 0-1, col 5 only, window size 3x2 = 6: (5 + 11) / 6 */
    CHECK_NEAR(f.out.data[3], 16.0 / 6.0, 1e-6);
    /* (3,3): row 5, col 5, size 2x2: 35 / 4 */
    CHECK_NEAR(f.out.data[15], 35.0 / 4.0, 1e-6);
    /* (1,1): rows 1-3, cols 1-3, all real: mean of 6y+x = 6*2 + 2 */
    CHECK_NEAR(f.out.data[5], 14.0, 1e-6);
    /* Backward spreads dy / size over the real inputs only. */
    dse_tensor_zero_grad(&f.in[0]);
    dse_tensor_zero_grad(&f.out);
    f.out.grad[15] = 1.0f;
    CHECK_OK(dse_cpu_backward(&cx, &f.node));
    CHECK_NEAR(f.in[0].grad[35], 0.25, 1e-6);
    fx_deinit(&f);

    /* MAX, k3 s2 ceil on 6x6 -> 3x3: the last window covers rows/cols 4-5 only. */
    struct pool_case mx = { "max", DSE_LAYER_MAXPOOL, 1, 1, 6, 6, 3, 2, 0, 0, DSE_ROUND_CEIL, 3 };
    l = pool_layer(&mx);
    fx_init(&f, &cx, &l, 1, 1, NULL, 0, 1);
    for (int j = 0; j < 36; j++) f.in[0].data[j] = (float)((j * 7) % 36); /* a permutation */
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    /* Window (2,2): rows 4-5, cols 4-5: j = 28 (->16), 29 (->23), 34 (->22), 35 (->29). */
    CHECK_NEAR(f.out.data[8], 29.0, 0);
    CHECK_INT_EQ(f.node.st.argmax[8], 35);
    /* Window (0,0): rows 0-2, cols 0-2; j=5 is outside. max of 7j%36 over j in {0,1,2,6,7,8,12,13,14}:
     * 0,7,14,6,13,20,12,19,26 -> 26 at j = 14. */
    CHECK_NEAR(f.out.data[0], 26.0, 0);
    CHECK_INT_EQ(f.node.st.argmax[0], 14);
    dse_tensor_zero_grad(&f.in[0]);
    for (int j = 0; j < 9; j++) f.out.grad[j] = 1.0f;
    CHECK_OK(dse_cpu_backward(&cx, &f.node));
    CHECK_NEAR(f.in[0].grad[35], 1.0, 0);
    CHECK_NEAR(f.in[0].grad[28], 0.0, 0);
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

/* ---- elementwise, dropout, concat, fc, softmax, batchnorm, scale ---------------------- */

static void test_grad_relu(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = infer_layer(dse_layer_make(DSE_LAYER_RELU, "relu"), 1, 3, 4, 5);
    for (int in_place = 0; in_place <= 1; in_place++) {
        struct fx f;
        fx_init(&f, &cx, &l, 2, 1, NULL, in_place ? FX_IN_PLACE : 0, 30);
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 30, 1);
        fill_off_zero(&f.in[0], &r);
        grad_check(&cx, &f.node, EPS, TOL_EXACT, FLOOR, in_place ? "relu in place" : "relu");
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

static void test_grad_dropout(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = dse_layer_make(DSE_LAYER_DROPOUT, "drop");
    l.dropout_ratio = 0.4f;
    l = infer_layer(l, 1, 3, 4, 4);
    for (int in_place = 0; in_place <= 1; in_place++) {
        struct fx f;
        fx_init(&f, &cx, &l, 2, 1, NULL, in_place ? FX_IN_PLACE : 0, 31);
        /* The checker restores the ctx generator before each forward: a fixed mask. */
        grad_check(&cx, &f.node, EPS, TOL_EXACT, FLOOR, in_place ? "dropout in place" : "dropout");
        f.node.training = 0;
        grad_check(&cx, &f.node, EPS, TOL_EXACT, FLOOR, in_place ? "dropout inference in place" : "dropout inference");
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* Inverted dropout: kept values scaled by 1/(1-p), about p of them dropped, identity in
 * inference, the mask a function of the seed: value j kept iff draw j of the ctx's
 * generator is >= p * 2^32, drawn in index order by one thread or shared among three
 * (each from its own jump-ahead), the generator left after the last draw. */
static void test_dropout_values(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = dse_layer_make(DSE_LAYER_DROPOUT, "drop");
    l.dropout_ratio = 0.25f;
    l = infer_layer(l, 1, 8, 40, 40); /* two blocks an image (eltwise.c BLOCK), enough to share */
    struct fx f;
    fx_init(&f, &cx, &l, 4, 1, NULL, 0, 32);
    dse_tensor_fill(&f.in[0], 3.0f);
    int64_t kept = 0, bad = 0, count = dse_tensor_count(&f.out);
    for (int threads = 1; threads <= 3; threads += 2) {
        struct dse_cpu_ctx cy;
        CHECK_OK(dse_cpu_ctx_init(&cy, threads, 1234, NULL));
        cy.rng.state += 99u; /* the first layer's draws start anywhere in the stream */
        struct dse_pcg32 ref = cy.rng;
        CHECK_OK(dse_cpu_forward(&cy, &f.node));
        for (int64_t j = 0; j < count; j++) bad += f.node.st.mask[j] != (dse_pcg32_next(&ref) >= 1073741824u);
        CHECK(cy.rng.state == ref.state);
        dse_cpu_ctx_deinit(&cy);
    }
    CHECK_INT_EQ(bad, 0);
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    for (int64_t j = 0; j < count; j++) {
        kept += f.out.data[j] != 0.0f;
        bad += f.out.data[j] != 0.0f && f.out.data[j] != 4.0f; /* 3 / 0.75 */
        bad += (f.out.data[j] != 0.0f) != f.node.st.mask[j];
    }
    CHECK_INT_EQ(bad, 0);
    /* 51200 draws of p = 0.75: sd = 98; 5 sd either side. */
    CHECK(kept > 38400 - 500 && kept < 38400 + 500);
    f.node.training = 0;
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK(f.out.data[0] == 3.0f && f.out.data[count - 1] == 3.0f);
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

static void test_grad_concat(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    const int in_c[3] = { 2, 3, 1 };
    struct dse_layer l = infer_layer(dse_layer_make(DSE_LAYER_CONCAT, "cat"), 3, 2, 3, 4);
    l.out_c = 6; /* inputs of 2, 3 and 1 channels (infer_layer gave 3 x 2) */
    for (int views = 0; views <= 1; views++) {
        struct fx f;
        fx_init(&f, &cx, &l, 2, 3, in_c, views ? FX_VIEWS : 0, 33);
        cx.stats.concat_copy_bytes = 0;
        grad_check(&cx, &f.node, EPS, TOL_EXACT, FLOOR, views ? "concat of views" : "concat");
        if (views) CHECK_INT_EQ(cx.stats.concat_copy_bytes, 0);
        else CHECK(cx.stats.concat_copy_bytes > 0);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

static void test_grad_eltwise(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = infer_layer(dse_layer_make(DSE_LAYER_ELTWISE, "add"), 3, 3, 3, 5);
    struct fx f;
    fx_init(&f, &cx, &l, 2, 3, NULL, 0, 34);
    grad_check(&cx, &f.node, EPS, TOL_EXACT, FLOOR, "eltwise add of 3");
    /* y = a + b + c exactly. */
    CHECK(f.out.data[7] == f.in[0].data[7] + f.in[1].data[7] + f.in[2].data[7]);
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

static void test_grad_fc(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int bias = 0; bias <= 1; bias++) {
        struct dse_layer l = dse_layer_make(DSE_LAYER_FC, "fc");
        l.num_output = 5, l.bias = bias;
        l = infer_layer(l, 1, 2, 3, 3);
        struct fx f;
        fx_init(&f, &cx, &l, 3, 1, NULL, 0, 35);
        grad_check(&cx, &f.node, EPS, TOL_FC, FLOOR, bias ? "fc" : "fc no bias");
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

static void test_grad_softmax(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = infer_layer(dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss"), 1, 7, 1, 1);
    struct fx f;
    fx_init(&f, &cx, &l, 4, 1, NULL, 0, 36);
    grad_check(&cx, &f.node, EPS, TOL_SOFTMAX, 1e-2, "softmax_xent");
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

static void test_softmax_values(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = infer_layer(dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss"), 1, 10, 1, 1);
    struct fx f;
    fx_init(&f, &cx, &l, 2, 1, NULL, 0, 37);
    /* Equal logits: p = 1/10, loss = log 10, whatever the labels. */
    dse_tensor_fill(&f.in[0], 5.0f);
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK_NEAR(f.out.data[0], log(10.0), 1e-6);
    CHECK_NEAR(f.node.st.prob[13], 0.1, 1e-6);
    /* Huge logits do not overflow: image 0 is certain and right, image 1 certain and
     * wrong by 1000, so its loss is 1000 (p clamped above 0 only far beyond that). */
    f.labels[0] = 3, f.labels[1] = 4;
    f.in[0].data[3] = 1000.0f;
    f.in[0].data[10 + 2] = 1005.0f, f.in[0].data[10 + 4] = 5.0f;
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK_NEAR(f.out.data[0], 1000.0 / 2, 1e-5);
    /* Gradient: (p - onehot) / N, accumulated. */
    dse_tensor_zero_grad(&f.in[0]);
    CHECK_OK(dse_cpu_backward(&cx, &f.node));
    CHECK_NEAR(f.in[0].grad[10 + 4], -0.5, 1e-6);
    CHECK_NEAR(f.in[0].grad[10 + 2], 0.5, 1e-6);
    /* A label outside the classes is an error naming the image. */
    f.labels[1] = 10;
    CHECK_INT_EQ(dse_cpu_forward(&cx, &f.node), DSE_ERR_CONFIG);
    CHECK_STR_EQ(cx.err.msg, "layer 'loss' (softmax_xent): label 10 of image 1 is out of range; expected 0 to 9");
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

static void test_grad_batchnorm(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    static const struct { const char *what; int affine, in_place, training; } v[] = {
        { "batchnorm affine", 1, 0, 1 },   { "batchnorm", 0, 0, 1 },
        { "batchnorm in place", 1, 1, 1 }, { "batchnorm inference", 1, 0, 0 },
        { "batchnorm inference in place", 1, 1, 0 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(v); i++) {
        struct dse_layer l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn");
        l.affine = v[i].affine;
        l = infer_layer(l, 1, 3, 3, 4);
        struct fx f;
        fx_init(&f, &cx, &l, 4, 1, NULL, v[i].in_place ? FX_IN_PLACE : 0, 38 + i);
        f.node.training = v[i].training;
        grad_check(&cx, &f.node, EPS, TOL_BN, FLOOR, v[i].what);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* Batch statistics and the running-average update, by hand. */
static void test_batchnorm_values(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn");
    l.affine = 0;
    l = infer_layer(l, 1, 1, 1, 2);
    struct fx f;
    fx_init(&f, &cx, &l, 2, 1, NULL, 0, 1);
    f.in[0].data[0] = 1, f.in[0].data[1] = 3, f.in[0].data[2] = 5, f.in[0].data[3] = 7; /* mean 4, var 5 */
    f.rm.data[0] = 0.0f, f.rv.data[0] = 1.0f;
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK_NEAR(f.out.data[0], -3.0 / sqrt(5.0 + 1e-5), 1e-6);
    CHECK_NEAR(f.rm.data[0], 0.1 * 4.0, 1e-6);
    CHECK_NEAR(f.rv.data[0], 0.9 + 0.1 * 5.0 * 4.0 / 3.0, 1e-6); /* unbiased: 20/3 */
    f.node.training = 0; /* now the running statistics */
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK_NEAR(f.out.data[3], (7.0 - 0.4) / sqrt(0.9 + 2.0 / 3.0 + 1e-5), 1e-6);
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

static void test_grad_scale(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int in_place = 0; in_place <= 1; in_place++) {
        struct dse_layer l = dse_layer_make(DSE_LAYER_SCALE, "scale");
        l = infer_layer(l, 1, 3, 2, 3);
        struct fx f;
        fx_init(&f, &cx, &l, 2, 1, NULL, in_place ? FX_IN_PLACE : 0, 45);
        grad_check(&cx, &f.node, EPS, TOL_SCALE, FLOOR, in_place ? "scale in place" : "scale");
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* ---- small networks: the builder the model will grow into -------------------------------- */

#define MINI_MAX 32

struct mini {
    struct dse_net    net;
    int               N;
    struct dse_tensor input;           /* [N, in_c, in_h, in_w], no grad: nobody needs it */
    struct dse_tensor t[MINI_MAX];     /* layer outputs: owned, or views into a concat */
    struct dse_tensor *of[MINI_MAX];   /* the tensor holding layer i's output */
    struct dse_tensor w[MINI_MAX], b[MINI_MAX], rm[MINI_MAX], rv[MINI_MAX];
    struct dse_node   node[MINI_MAX];
    int32_t           labels[64];
};

/* Tensors and nodes for every layer of m->net (already built and inferred). In-place
 * layers share their input's tensor; with views, the producers of a concat's inputs
 * write into their channel slices of its output. */
static void mini_build(struct mini *m, struct dse_cpu_ctx *cx, int N, int views, uint64_t seed) {
    struct dse_net *net = &m->net;
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, seed, 11);
    DSE_ASSERT(net->n_layers <= MINI_MAX && N <= 64);
    m->N = N;
    CHECK_OK(dse_tensor_init(&m->input, N, net->in_c, net->in_h, net->in_w, 0, NULL));
    fill_uniform(&m->input, &r, -1, 1);
    int owner[MINI_MAX], view_of[MINI_MAX], view_c0[MINI_MAX];
    for (int i = 0; i < net->n_layers; i++) {
        const struct dse_layer *l = &net->layers[i];
        owner[i] = l->in_place ? owner[l->inputs[0]] : i;
        view_of[i] = -1;
    }
    for (int i = 0; views && i < net->n_layers; i++) {
        const struct dse_layer *l = &net->layers[i];
        if (l->type != DSE_LAYER_CONCAT) continue;
        for (int k = 0, c0 = 0; k < l->n_inputs; k++) {
            view_of[owner[l->inputs[k]]] = i, view_c0[owner[l->inputs[k]]] = c0;
            c0 += net->layers[l->inputs[k]].out_c;
        }
    }
    for (int i = 0; i < net->n_layers; i++) {
        const struct dse_layer *l = &net->layers[i];
        if (owner[i] == i && view_of[i] < 0) {
            if (l->type == DSE_LAYER_SOFTMAX_LOSS)
                CHECK_OK(dse_tensor_init(&m->t[i], 1, 1, 1, 1, DSE_TENSOR_GRAD, NULL));
            else
                CHECK_OK(dse_tensor_init(&m->t[i], N, l->out_c, l->out_h, l->out_w, DSE_TENSOR_GRAD, NULL));
        }
    }
    for (int i = 0; i < net->n_layers; i++)
        if (owner[i] == i && view_of[i] >= 0)
            dse_tensor_view_channels(&m->t[i], &m->t[view_of[i]], view_c0[i], net->layers[i].out_c);
    for (int i = 0; i < net->n_layers; i++) m->of[i] = &m->t[owner[i]];

    for (int i = 0; i < net->n_layers; i++) {
        const struct dse_layer *l = &net->layers[i];
        struct dse_node *n = &m->node[i];
        enum dse_op op;
        CHECK_OK(dse_op_from_layer(l, &op, NULL));
        dse_node_init(n, op, l);
        n->n_in = l->n_inputs;
        for (int k = 0; k < l->n_inputs; k++)
            n->in[k] = l->inputs[k] == DSE_INPUT_DATA ? &m->input : m->of[l->inputs[k]];
        n->out = m->of[i];
        const int C = l->in_c, K = l->num_output;
        if (op == DSE_OP_CONV2D) {
            CHECK_OK(dse_tensor_init(&m->w[i], K, C / l->groups, l->kernel_h, l->kernel_w, DSE_TENSOR_GRAD, NULL));
            fill_uniform(&m->w[i], &r, -0.3f, 0.3f);
        } else if (op == DSE_OP_FC) {
            CHECK_OK(dse_tensor_init(&m->w[i], K, C * l->in_h * l->in_w, 1, 1, DSE_TENSOR_GRAD, NULL));
            fill_uniform(&m->w[i], &r, -0.1f, 0.1f);
        } else if (op == DSE_OP_BATCHNORM) {
            CHECK_OK(dse_tensor_init(&m->rm[i], 1, C, 1, 1, 0, NULL));
            CHECK_OK(dse_tensor_init(&m->rv[i], 1, C, 1, 1, 0, NULL));
            dse_tensor_fill(&m->rv[i], 1.0f);
            n->run_mean = &m->rm[i], n->run_var = &m->rv[i];
            if (l->affine) {
                CHECK_OK(dse_tensor_init(&m->w[i], 1, C, 1, 1, DSE_TENSOR_GRAD, NULL));
                CHECK_OK(dse_tensor_init(&m->b[i], 1, C, 1, 1, DSE_TENSOR_GRAD, NULL));
                dse_tensor_fill(&m->w[i], 1.0f);
            }
        } else if (op == DSE_OP_SOFTMAX_XENT) {
            for (int j = 0; j < N; j++) m->labels[j] = (int32_t)dse_pcg32_bounded(&r, (uint32_t)C);
            n->labels = m->labels;
        }
        if ((op == DSE_OP_CONV2D || op == DSE_OP_FC) && l->bias) {
            CHECK_OK(dse_tensor_init(&m->b[i], 1, K, 1, 1, DSE_TENSOR_GRAD, NULL));
            fill_uniform(&m->b[i], &r, -0.1f, 0.1f);
        }
        if (m->w[i].data) n->weight = &m->w[i];
        if (m->b[i].data) n->bias = &m->b[i];
        struct dse_err err = { 0 };
        enum dse_status st = dse_cpu_node_prepare(cx, n, &err);
        CHECK_OK(st);
        if (st) fprintf(stderr, "  %s\n", err.msg);
    }
}

static void mini_forward(struct mini *m, struct dse_cpu_ctx *cx) {
    for (int i = 0; i < m->net.n_layers; i++) CHECK_OK(dse_cpu_forward(cx, &m->node[i]));
}

/* Zero every grad: the caller's job under the accumulate rule. Views are zeroed with
 * the tensor they are a slice of. */
static void mini_zero_grads(struct mini *m) {
    for (int i = 0; i < m->net.n_layers; i++) {
        if (m->t[i].owns) dse_tensor_zero_grad(&m->t[i]);
        if (m->w[i].data) dse_tensor_zero_grad(&m->w[i]);
        if (m->b[i].data) dse_tensor_zero_grad(&m->b[i]);
    }
}

static void mini_backward(struct mini *m, struct dse_cpu_ctx *cx) {
    mini_zero_grads(m);
    for (int i = m->net.n_layers - 1; i >= 0; i--) CHECK_OK(dse_cpu_backward(cx, &m->node[i]));
}

static void mini_free(struct mini *m) {
    for (int i = 0; i < m->net.n_layers; i++) {
        dse_node_deinit(&m->node[i]);
        dse_tensor_deinit(&m->t[i]);
        dse_tensor_deinit(&m->w[i]);
        dse_tensor_deinit(&m->b[i]);
        dse_tensor_deinit(&m->rm[i]);
        dse_tensor_deinit(&m->rv[i]);
    }
    dse_tensor_deinit(&m->input);
    dse_net_deinit(&m->net);
}

static void add_layer(struct dse_net *net, struct dse_layer l) { CHECK_OK(dse_net_add(net, &l, NULL)); }

/* A Fire module (metaparams' expansion) between a conv and the classifier. */
static void fire_net(struct dse_net *net) {
    dse_net_init(net, "fire", 3, 8, 8);
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "conv1");
    l.num_output = 8, l.kernel_h = l.kernel_w = 3, l.pad_h = l.pad_w = 1;
    add_layer(net, l);
    const struct dse_fire fire = { .name = "fire2", .squeeze = 8, .expand1x1 = 6, .expand3x3 = 10,
                                   .bypass = DSE_BYPASS_NONE }; /* squeeze 8: DIRECT runs the 3x3 */
    CHECK_OK(dse_net_add_fire(net, &fire, 0, NULL));
    CHECK_OK(dse_net_infer(net, NULL, NULL));
}

/* The expand convs write into their slices of the concat buffer: concat moves no byte
 * forward or backward, and everything equals the copying version bit for bit. */
static void fire_views(int algo) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    cx.conv_force = algo;
    struct mini a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    fire_net(&a.net);
    fire_net(&b.net);
    /* layers: conv1, squeeze1x1, relu, expand1x1, relu, expand3x3, relu, concat */
    const int cat = dse_net_find(&a.net, "fire2/concat"), e1 = dse_net_find(&a.net, "fire2/expand1x1"),
              e3 = dse_net_find(&a.net, "fire2/expand3x3");
    CHECK(cat == 7 && e1 == 3 && e3 == 5);
    mini_build(&a, &cx, 3, 1, 77);
    mini_build(&b, &cx, 3, 0, 77);
    /* The expand outputs are views at channel 0 and 6 of the concat output. */
    CHECK(a.of[e1]->data == a.of[cat]->data);
    CHECK(a.of[e3]->data == a.of[cat]->data + 6 * 64);
    CHECK_INT_EQ(a.of[e3]->stride_n, 16 * 64);
    CHECK(b.of[e3]->data != b.of[cat]->data + 6 * 64);

    cx.stats.concat_copy_bytes = 0;
    mini_forward(&a, &cx);
    CHECK_INT_EQ(cx.stats.concat_copy_bytes, 0);
    mini_forward(&b, &cx);
    CHECK_INT_EQ(cx.stats.concat_copy_bytes, 3 * 16 * 64 * 4);
    const size_t cat_bytes = (size_t)dse_tensor_count(a.of[cat]) * sizeof(float);
    CHECK(memcmp(a.of[cat]->data, b.of[cat]->data, cat_bytes) == 0);

    /* Backward from the same dL/dconcat. */
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 8, 8);
    mini_zero_grads(&a);
    mini_zero_grads(&b);
    for (int64_t j = 0; j < dse_tensor_count(a.of[cat]); j++) a.of[cat]->grad[j] = b.of[cat]->grad[j] = uniform(&r, -1, 1);
    cx.stats.concat_copy_bytes = 0;
    for (int i = a.net.n_layers - 1; i >= 0; i--) CHECK_OK(dse_cpu_backward(&cx, &a.node[i]));
    CHECK_INT_EQ(cx.stats.concat_copy_bytes, 0);
    for (int i = b.net.n_layers - 1; i >= 0; i--) CHECK_OK(dse_cpu_backward(&cx, &b.node[i]));
    CHECK(memcmp(a.of[0]->grad, b.of[0]->grad, (size_t)dse_tensor_count(a.of[0]) * sizeof(float)) == 0);
    CHECK(memcmp(a.w[0].grad, b.w[0].grad, (size_t)dse_tensor_count(&a.w[0]) * sizeof(float)) == 0);
    CHECK(memcmp(a.w[e3].grad, b.w[e3].grad, (size_t)dse_tensor_count(&a.w[e3]) * sizeof(float)) == 0);
    /* Nobody needs the gradient of the network input: none was computed. */
    CHECK(a.input.grad == NULL);
    mini_free(&a);
    mini_free(&b);
    dse_cpu_ctx_deinit(&cx);
}

static void test_fire_views(void) {
    fire_views(DSE_CPU_CONV_GEMM_BATCH);
    fire_views(DSE_CPU_CONV_GEMM_IMAGE);
    fire_views(DSE_CPU_CONV_WINOGRAD);
    fire_views(DSE_CPU_CONV_DIRECT);
}

/* conv -> batchnorm -> relu -> dropout -> pool -> fire -> fc -> loss. */
static void chain_net(struct dse_net *net) {
    dse_net_init(net, "chain", 2, 9, 9);
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "conv1");
    l.num_output = 8, l.kernel_h = l.kernel_w = 3, l.pad_h = l.pad_w = 1;
    add_layer(net, l);
    l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn1");
    l.affine = 1, l.in_place = 1;
    add_layer(net, l);
    l = dse_layer_make(DSE_LAYER_RELU, "relu1");
    l.in_place = 1;
    add_layer(net, l);
    l = dse_layer_make(DSE_LAYER_DROPOUT, "drop1");
    l.dropout_ratio = 0.5f, l.in_place = 1;
    add_layer(net, l);
    l = dse_layer_make(DSE_LAYER_MAXPOOL, "pool1");
    l.kernel_h = l.kernel_w = 3, l.stride_h = l.stride_w = 2;
    add_layer(net, l);
    const struct dse_fire fire = { .name = "fire2", .squeeze = 4, .expand1x1 = 4, .expand3x3 = 4,
                                   .bypass = DSE_BYPASS_SIMPLE };
    CHECK_OK(dse_net_add_fire(net, &fire, net->n_layers - 1, NULL));
    l = dse_layer_make(DSE_LAYER_FC, "fc");
    l.num_output = 5;
    add_layer(net, l);
    add_layer(net, dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss"));
    CHECK_OK(dse_net_infer(net, NULL, NULL));
}

/* One training step of the chain from a fresh ctx; returns the loss, copies fc's
 * weight gradient to dw. */
static float chain_step(uint64_t seed, int threads, float *dw, int64_t nw) {
    struct dse_cpu_ctx cx;
    CHECK_OK(dse_cpu_ctx_init(&cx, threads, seed, NULL));
    /* Forced: AUTO picks by timing, which may differ between runs (the strategies agree
     * to 1e-6, not bit for bit); a run that must repeat exactly pins its choices. */
    cx.conv_force = DSE_CPU_CONV_GEMM_BATCH;
    struct mini m;
    memset(&m, 0, sizeof m);
    chain_net(&m.net);
    mini_build(&m, &cx, 6, 1, 5);
    mini_forward(&m, &cx);
    mini_backward(&m, &cx);
    const int fc = dse_net_find(&m.net, "fc"), loss = dse_net_find(&m.net, "loss");
    CHECK_INT_EQ(dse_tensor_count(&m.w[fc]), nw);
    memcpy(dw, m.w[fc].grad, (size_t)nw * sizeof(float));
    float l = m.of[loss]->data[0];
    mini_free(&m);
    dse_cpu_ctx_deinit(&cx);
    return l;
}

/* Same seed and threads: bit-identical loss and gradients; another seed: other masks. */
static void test_determinism(void) {
    const int64_t nw = 5 * 8 * 4 * 4;
    float *a = malloc(nw * sizeof *a), *b = malloc(nw * sizeof *b);
    float la = chain_step(42, THREADS, a, nw), lb = chain_step(42, THREADS, b, nw);
    CHECK(memcmp(&la, &lb, sizeof la) == 0);
    CHECK(memcmp(a, b, nw * sizeof *a) == 0);
    CHECK(isfinite(la) && la > 0.0f);
    float lc = chain_step(43, THREADS, b, nw);
    CHECK(lc != la);
    CHECK(memcmp(a, b, nw * sizeof *a) != 0);
    free(a);
    free(b);
}

/* The whole chain (bypass, in-place bn/relu/dropout, views) against finite differences
 * of the loss, on every 7th conv1 weight: the gradient flows back through every op.
 * A small step and a looser tolerance than the single ops: a step moves many relu and
 * max-pool inputs, and the few that cross a kink bend the difference quotient (with a
 * step of 1e-2 the worst value is off by 50%, with 1e-3 by 2%). */
static void test_grad_chain(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct mini m;
    memset(&m, 0, sizeof m);
    chain_net(&m.net);
    mini_build(&m, &cx, 4, 1, 6);
    const int loss = dse_net_find(&m.net, "loss");
    const struct dse_pcg32 rng0 = cx.rng;
    mini_forward(&m, &cx);
    mini_backward(&m, &cx);
    struct dse_tensor *w = &m.w[0];
    double worst = 0.0;
    for (int64_t e = 0; e < dse_tensor_count(w); e += 7) {
        const float orig = w->data[e];
        const double eps = 1e-3;
        w->data[e] = (float)(orig + eps);
        cx.rng = rng0;
        mini_forward(&m, &cx);
        const double lp = m.of[loss]->data[0];
        w->data[e] = (float)(orig - eps);
        cx.rng = rng0;
        mini_forward(&m, &cx);
        const double lm = m.of[loss]->data[0];
        w->data[e] = orig;
        const double num = (lp - lm) / ((double)(float)(orig + eps) - (double)(float)(orig - eps));
        worst = fmax(worst, fabs(num - w->grad[e]) / fmax(fmax(fabs(num), fabs(w->grad[e])), 1e-2));
        if (getenv("DSE_TEST_VERBOSE")) printf("  conv1 w[%lld] backward %.6g fd %.6g\n", (long long)e, w->grad[e], num);
    }
    if (!(worst <= 5e-2)) fprintf(stderr, "  chain: conv1 weight grad off by %.3g\n", worst);
    CHECK(worst <= 5e-2);
    mini_free(&m);
    dse_cpu_ctx_deinit(&cx);
}

/* The slice tree (engine/slices.h), from its definition: block (level, index) of `total`
 * slices is left + right, or left alone when right lies past the end. */
static float tree_ref(const float *v, int level, int index, int total) {
    if (index < 0 || index >= total) return 0.0f; /* not reached: callers stay inside */
    if (level == 0) return v[index];
    const float left = tree_ref(v, level - 1, 2 * index, total);
    return ((int64_t)(2 * index + 1) << (level - 1)) < total ? left + tree_ref(v, level - 1, 2 * index + 1, total) : left;
}

static double tree_ref_d(const double *v, int level, int index, int total) {
    if (index < 0 || index >= total) return 0.0;
    if (level == 0) return v[index];
    const double left = tree_ref_d(v, level - 1, 2 * index, total);
    return ((int64_t)(2 * index + 1) << (level - 1)) < total ? left + tree_ref_d(v, level - 1, 2 * index + 1, total)
                                                             : left;
}

/* Any cut of the slices into runs (threads, ranks), each run pushed slice by slice and the
 * runs' blocks pushed after, gives the tree's sum bit for bit, in slice 0's buffer; the
 * doubles' sum too; the blocks and depth dse_slice_blocks plans are the ones pushing makes. */
static void test_slice_tree(void) {
    struct dse_pcg32 g;
    dse_pcg32_seed(&g, 18, 1);
    int bad = 0, trials = 0;
    for (int total = 1; total <= 40; total++)
        for (int trial = 0; trial < 20; trial++, trials++) {
            float v[40], buf[40][1];
            double vd[40];
            int root = 0;
            while (((int64_t)1 << root) < total) root++;
            for (int s = 0; s < total; s++) {
                v[s] = ldexpf((float)dse_pcg32_next(&g) / 4294967296.0f - 0.5f, (int)dse_pcg32_bounded(&g, 40) - 20);
                vd[s] = v[s], buf[s][0] = v[s];
            }
            /* runs: random cut points */
            int cut[41], nc = 0;
            cut[nc++] = 0;
            for (int s = 1; s < total; s++)
                if (dse_pcg32_bounded(&g, 3) == 0) cut[nc++] = s;
            cut[nc] = total;
            struct dse_slice_tree all, run;
            dse_slice_tree_init(&all, total);
            for (int r = 0; r < nc; r++) {
                struct dse_slice_blk plan[DSE_SLICE_STACK];
                int depth = 0, most = 0;
                const int nb = dse_slice_blocks(total, cut[r], cut[r + 1], plan, &depth);
                dse_slice_tree_init(&run, total);
                for (int s = cut[r]; s < cut[r + 1]; s++) {
                    dse_slice_push(&run, 0, s, buf[s], 0, 1, NULL, NULL);
                    most = run.n > most ? run.n : most;
                }
                bad += run.n != nb || most + 1 != depth;
                for (int b = 0; b < run.n && b < nb; b++)
                    bad += run.b[b].level != plan[b].level || run.b[b].index != plan[b].index;
                for (int b = 0; b < run.n; b++) dse_slice_push(&all, run.b[b].level, run.b[b].index, run.b[b].buf, 0, 1, NULL, NULL);
            }
            const float want = tree_ref(v, root, 0, total);
            bad += all.n != 1 || all.b[0].buf != buf[0] || memcmp(&buf[0][0], &want, sizeof want) != 0;
            const double wd = dse_slice_sum_d(vd, total), wantd = tree_ref_d(vd, root, 0, total);
            bad += memcmp(&wd, &wantd, sizeof wd) != 0;
        }
    CHECK_INT_EQ(bad, 0);
    printf("  %d cuts of 1 to 40 slices into runs: the tree's sum, bit for bit\n", trials);
}

static const struct check_case cases[] = {
    { "tensor",              test_tensor },
    { "node-check",          test_node_check },
    { "grad-conv-batch",     test_grad_conv_batch },
    { "grad-conv-image",     test_grad_conv_image },
    { "grad-conv-winograd",  test_grad_conv_wino },
    { "grad-conv-direct",    test_grad_conv_direct },
    { "conv-direct-exact",   test_conv_direct_exact },
    { "conv-agree",          test_conv_agree },
    { "conv-wino-agree",     test_conv_wino_agree },
    { "simd-exact",          test_simd_exact },
    { "conv-threads",        test_conv_threads },
    { "conv-threads-blas",   test_conv_threads_blas },
    { "blas-choice",         test_blas_choice },
    { "elementwise-threads", test_elementwise_threads },
    { "conv-wino-choose",    test_conv_wino_choose },
    { "conv-choose",         test_conv_choose },
    { "grad-pool",           test_grad_pool },
    { "pool-values",         test_pool_values },
    { "pool-ties",           test_pool_ties },
    { "grad-relu",           test_grad_relu },
    { "grad-dropout",        test_grad_dropout },
    { "dropout-values",      test_dropout_values },
    { "grad-concat",         test_grad_concat },
    { "grad-eltwise",        test_grad_eltwise },
    { "grad-fc",             test_grad_fc },
    { "grad-softmax",        test_grad_softmax },
    { "softmax-values",      test_softmax_values },
    { "grad-batchnorm",      test_grad_batchnorm },
    { "batchnorm-values",    test_batchnorm_values },
    { "grad-scale",          test_grad_scale },
    { "fire-views",          test_fire_views },
    { "determinism",         test_determinism },
    { "slice-tree",          test_slice_tree },
    { "grad-chain",          test_grad_chain },
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
