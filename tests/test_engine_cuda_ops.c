/* test_engine_cuda_ops.c: test_engine_cuda's op cases: every op's forward and backward on
 * random shapes (and the special layouts: in place, concat views, a conv writing into its
 * concat slice, a missing input gradient), one node on each backend, each buffer compared by
 * normalized mean squared error with a tolerance per op; a conv with its ReLU fused on the
 * GPU against the CPU's separate nodes; the CUDA context itself and its conv cache. */
#include "tests/engine_cuda_util.h"

#define SEED 1234

/* ---- comparing buffers ------------------------------------------------------------------ */

/* Compare n floats of the CPU's a with the device's b (downloaded); print what differs. */
static void compare(struct dse_cuda_ctx *gx, const char *what, const char *buf, const float *a, const float *dev_b,
                    int64_t n, double tol) {
    float *b = malloc((size_t)(n ? n : 1) * sizeof *b);
    struct dse_err err = { 0 };
    enum dse_status st = dse_cuda_download(gx, b, dev_b, (size_t)n * sizeof *b, &err);
    CHECK_OK(st);
    if (st) {
        fprintf(stderr, "  %s: %s: download failed: %s\n", what, buf, err.msg);
        free(b);
        return;
    }
    int64_t at;
    const double e = nmse(a, b, n, &at);
    if (verbose) printf("  %-60s %-12s nmse %.3g\n", what, buf, e);
    if (!(e <= tol))
        fprintf(stderr, "  %s: %s: NMSE %.3g > tol %.3g over %lld values; worst at [%lld]: cpu %.9g, cuda %.9g\n",
                what, buf, e, tol, (long long)n, (long long)at, (double)a[at], (double)b[at]);
    CHECK(e <= tol);
    free(b);
}

static void compare_exact_bytes(struct dse_cuda_ctx *gx, const char *what, const char *buf, const void *a,
                                const void *dev_b, size_t bytes) {
    unsigned char *b = malloc(bytes ? bytes : 1);
    CHECK_OK(dse_cuda_download(gx, b, dev_b, bytes, NULL));
    size_t at = 0;
    while (at < bytes && ((const unsigned char *)a)[at] == b[at]) at++;
    if (at < bytes) fprintf(stderr, "  %s: %s differs first at byte %zu of %zu\n", what, buf, at, bytes);
    CHECK(at == bytes);
    free(b);
}

/* ---- one node on both backends ----------------------------------------------------------- */

/* Every host buffer a fixture owns, with its device twin: data and grad, n * stride_n
 * floats each, uploaded whole (views and in-place tensors then point into them at the
 * same offsets), compared whole (gaps included: a kernel writing outside its view fails). */
struct twin {
    const char *name;
    float      *host_data, *host_grad;
    float      *dev_data, *dev_grad;
    int64_t     floats;
};

enum {
    FX_IN_PLACE = 1, /* out is in[0] */
    FX_VIEWS    = 2, /* concat: inputs are views of their slices of out */
    FX_NO_DX    = 4, /* input 0 has no gradient (a first conv) */
    FX_OUT_VIEW = 8, /* out is a channel slice of a wider buffer (a Fire expand) */
};

struct fx {
    struct dse_layer  layer;
    struct dse_node   cn, gn;               /* CPU node, CUDA node */
    struct dse_tensor cin[4], cout, cw, cb, crm, crv, cwide;
    struct dse_tensor gin[4], gout, gw, gb, grm, grv, gwide;
    int               n_in;
    int32_t           labels[64];
    struct twin       tw[12];
    int               n_tw;
};

void pair_init(struct pair *p) {
    struct dse_err err = { 0 };
    memset(p, 0, sizeof *p);
    CHECK_OK(dse_cpu_ctx_init(&p->cx, 2, SEED, &err));
    p->cx.conv_force = DSE_CPU_CONV_GEMM_BATCH; /* the plain reference, no timing */
    enum dse_status st = dse_cuda_ctx_init(&p->gx, 0, SEED, &err);
    CHECK_OK(st);
    if (st) fprintf(stderr, "  %s\n", err.msg);
    p->gx.sync_each = 1; /* a failing kernel is reported by the op that queued it */
    p->ok = !st;
}

void pair_deinit(struct pair *p) {
    dse_cuda_ctx_deinit(&p->gx);
    dse_cpu_ctx_deinit(&p->cx);
}

/* The layer as a one-layer network with n_in copies of a c x h x w input infers it;
 * 0 if that shape does not work. */
static int infer_layer(struct dse_layer *l, int n_in, int c, int h, int w) {
    struct dse_net net;
    dse_net_init(&net, "t", c, h, w);
    l->n_inputs = n_in;
    for (int i = 0; i < n_in; i++) l->inputs[i] = DSE_INPUT_DATA;
    int ok = dse_net_add(&net, l, NULL) == DSE_OK && dse_net_infer(&net, NULL, NULL) == DSE_OK;
    if (ok) *l = net.layers[0];
    dse_net_deinit(&net);
    return ok;
}

/* Record a host tensor that owns its memory and make its device twin (same shape and
 * stride, data and grad uploaded whole). */
static void twin_owned(struct pair *p, struct fx *f, const char *name, struct dse_tensor *h, struct dse_tensor *d) {
    struct twin *t = &f->tw[f->n_tw++];
    const int64_t floats = (int64_t)h->n * h->stride_n;
    void *dd = NULL, *dg = NULL;
    CHECK_OK(dse_cuda_alloc(&p->gx, (size_t)floats * sizeof(float), &dd, NULL));
    if (h->grad) CHECK_OK(dse_cuda_alloc(&p->gx, (size_t)floats * sizeof(float), &dg, NULL));
    *t = (struct twin){ name, h->data, h->grad, dd, dg, floats };
    dse_tensor_wrap(d, h->n, h->c, h->h, h->w, h->stride_n, dd, dg, DSE_MEM_DEVICE);
}

/* The device twin of a host tensor that borrows memory (a view, in place): the same
 * offsets into the twin of the buffer it points into. */
static void twin_borrowed(struct fx *f, const struct dse_tensor *h, struct dse_tensor *d) {
    for (int i = 0; i < f->n_tw; i++) {
        const struct twin *t = &f->tw[i];
        if (h->data >= t->host_data && h->data < t->host_data + t->floats) {
            const int64_t off = h->data - t->host_data;
            dse_tensor_wrap(d, h->n, h->c, h->h, h->w, h->stride_n, t->dev_data + off,
                            h->grad ? t->dev_grad + (h->grad - t->host_grad) : NULL, DSE_MEM_DEVICE);
            return;
        }
    }
    DSE_ASSERT(!"borrowed tensor outside every buffer");
}

static void twins_upload(struct pair *p, struct fx *f) {
    for (int i = 0; i < f->n_tw; i++) {
        const struct twin *t = &f->tw[i];
        CHECK_OK(dse_cuda_upload(&p->gx, t->dev_data, t->host_data, (size_t)t->floats * sizeof(float), NULL));
        if (t->host_grad)
            CHECK_OK(dse_cuda_upload(&p->gx, t->dev_grad, t->host_grad, (size_t)t->floats * sizeof(float), NULL));
    }
}

static void twins_compare(struct pair *p, struct fx *f, const char *what, const char *phase, double tol) {
    char buf[64];
    for (int i = 0; i < f->n_tw; i++) {
        const struct twin *t = &f->tw[i];
        snprintf(buf, sizeof buf, "%s.data", t->name);
        compare(&p->gx, what, buf, t->host_data, t->dev_data, t->floats, tol);
        if (t->host_grad && !strcmp(phase, "backward")) {
            snprintf(buf, sizeof buf, "%s.grad", t->name);
            compare(&p->gx, what, buf, t->host_grad, t->dev_grad, t->floats, tol);
        }
    }
}

/* Build a node for an inferred layer on both backends: inputs [N, in_c[i] (or the
 * layer's), H, W], parameters, every value and every gradient random (gradients
 * pre-filled, so backward's accumulation is checked too), then prepare both. */
static int fx_init(struct pair *p, struct fx *f, const struct dse_layer *l, int N, int n_in, const int *in_c,
                   unsigned flags, uint64_t seed) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, seed, 7);
    memset(f, 0, sizeof *f);
    f->layer = *l;
    f->n_in = n_in;
    enum dse_op op;
    CHECK_OK(dse_op_from_layer(l, &op, NULL));
    dse_node_init(&f->cn, op, &f->layer);
    const int H = l->in_h, W = l->in_w, C = l->in_c, K = l->num_output;
    const unsigned G = DSE_TENSOR_GRAD;
    /* Output first when inputs view it. */
    if (op == DSE_OP_SOFTMAX_XENT) {
        CHECK_OK(dse_tensor_init(&f->cout, 1, 1, 1, 1, G, NULL));
    } else if (flags & FX_VIEWS) {
        CHECK_OK(dse_tensor_init(&f->cout, N, l->out_c, l->out_h, l->out_w, G, NULL));
    } else if (flags & FX_OUT_VIEW) { /* a slice of channels [2, 2 + out_c) of out_c + 3 */
        CHECK_OK(dse_tensor_init(&f->cwide, N, l->out_c + 3, l->out_h, l->out_w, G, NULL));
        dse_tensor_view_channels(&f->cout, &f->cwide, 2, l->out_c);
    }
    int c0 = 0;
    for (int i = 0; i < n_in; i++) {
        const int c = in_c ? in_c[i] : C;
        if (flags & FX_VIEWS)
            dse_tensor_view_channels(&f->cin[i], &f->cout, c0, c);
        else
            CHECK_OK(dse_tensor_init(&f->cin[i], N, c, H, W, (i == 0 && (flags & FX_NO_DX)) ? 0 : G, NULL));
        c0 += c;
        f->cn.in[i] = &f->cin[i];
    }
    f->cn.n_in = n_in;
    if (flags & FX_IN_PLACE)
        dse_tensor_wrap(&f->cout, N, f->cin[0].c, H, W, f->cin[0].stride_n, f->cin[0].data, f->cin[0].grad,
                        DSE_MEM_HOST);
    else if (!f->cout.data)
        CHECK_OK(dse_tensor_init(&f->cout, N, l->out_c, l->out_h, l->out_w, G, NULL));
    f->cn.out = &f->cout;
    switch (op) {
    case DSE_OP_CONV2D: CHECK_OK(dse_tensor_init(&f->cw, K, C / l->groups, l->kernel_h, l->kernel_w, G, NULL)); break;
    case DSE_OP_FC:     CHECK_OK(dse_tensor_init(&f->cw, K, C * H * W, 1, 1, G, NULL)); break;
    case DSE_OP_BATCHNORM:
        CHECK_OK(dse_tensor_init(&f->crm, 1, C, 1, 1, 0, NULL));
        CHECK_OK(dse_tensor_init(&f->crv, 1, C, 1, 1, 0, NULL));
        fill_floats(f->crm.data, C, &r, -0.5f, 0.5f);
        fill_floats(f->crv.data, C, &r, 0.5f, 1.5f);
        f->cn.run_mean = &f->crm, f->cn.run_var = &f->crv;
        if (l->affine) {
            CHECK_OK(dse_tensor_init(&f->cw, 1, C, 1, 1, G, NULL));
            CHECK_OK(dse_tensor_init(&f->cb, 1, C, 1, 1, G, NULL));
        }
        break;
    case DSE_OP_SCALE:  CHECK_OK(dse_tensor_init(&f->cw, 1, C, 1, 1, G, NULL)); break;
    case DSE_OP_SOFTMAX_XENT:
        for (int i = 0; i < N && i < 64; i++) f->labels[i] = (int32_t)dse_pcg32_bounded(&r, (uint32_t)C);
        f->cn.labels = f->labels;
        break;
    default: break;
    }
    if ((op == DSE_OP_CONV2D || op == DSE_OP_FC || op == DSE_OP_SCALE) && l->bias)
        CHECK_OK(dse_tensor_init(&f->cb, 1, op == DSE_OP_SCALE ? C : K, 1, 1, G, NULL));
    if (f->cw.data) f->cn.weight = &f->cw;
    if (f->cb.data) f->cn.bias = &f->cb;

    /* Random contents of every owned buffer, data and grad. */
    struct dse_tensor *owned[] = { &f->cin[0], &f->cin[1], &f->cin[2], &f->cin[3], &f->cout, &f->cwide,
                                   &f->cw, &f->cb, &f->crm, &f->crv };
    for (int i = 0; i < DSE_ARRAY_LEN(owned); i++) {
        struct dse_tensor *t = owned[i];
        if (!t->data || !t->owns) continue;
        const int64_t n = (int64_t)t->n * t->stride_n;
        if (t != &f->crm && t != &f->crv) fill_floats(t->data, n, &r, -1.0f, 1.0f);
        if (t->grad) fill_floats(t->grad, n, &r, -1.0f, 1.0f);
    }

    /* The CUDA node: the same op, layer and options, device twins of every tensor. */
    f->gn = f->cn;
    f->gn.st = (struct dse_node_state){ 0 };
    f->gn.dev = NULL;
    static const char *const in_names[] = { "in0", "in1", "in2", "in3" };
    struct dse_tensor *cs[] = { &f->cwide, &f->cout, &f->cin[0], &f->cin[1], &f->cin[2], &f->cin[3], &f->cw, &f->cb,
                                &f->crm, &f->crv };
    struct dse_tensor *gs[] = { &f->gwide, &f->gout, &f->gin[0], &f->gin[1], &f->gin[2], &f->gin[3], &f->gw, &f->gb,
                                &f->grm, &f->grv };
    const char *names[] = { "wide", "out", in_names[0], in_names[1], in_names[2], in_names[3], "weight", "bias",
                            "run_mean", "run_var" };
    for (int pass = 0; pass < 2; pass++) /* owners, then the tensors borrowing from them */
        for (int i = 0; i < DSE_ARRAY_LEN(cs); i++) {
            if (!cs[i]->data || (cs[i]->owns != 0) != (pass == 0)) continue;
            if (pass == 0)
                twin_owned(p, f, names[i], cs[i], gs[i]);
            else
                twin_borrowed(f, cs[i], gs[i]);
        }
    for (int i = 0; i < n_in; i++) f->gn.in[i] = &f->gin[i];
    f->gn.out = &f->gout;
    f->gn.weight = f->cn.weight ? &f->gw : NULL;
    f->gn.bias = f->cn.bias ? &f->gb : NULL;
    f->gn.run_mean = f->cn.run_mean ? &f->grm : NULL;
    f->gn.run_var = f->cn.run_var ? &f->grv : NULL;
    twins_upload(p, f);

    struct dse_err err = { 0 };
    enum dse_status st = dse_cpu_node_prepare(&p->cx, &f->cn, &err);
    CHECK_OK(st);
    if (!st) {
        st = dse_cuda_node_prepare(&p->gx, &f->gn, &err);
        CHECK_OK(st);
    }
    if (st) fprintf(stderr, "  prepare: %s\n", err.msg);
    return !st;
}

static void fx_deinit(struct pair *p, struct fx *f) {
    dse_cuda_node_release(&p->gx, &f->gn);
    dse_node_deinit(&f->gn);
    dse_node_deinit(&f->cn);
    for (int i = 0; i < f->n_tw; i++) {
        dse_cuda_free(&p->gx, f->tw[i].dev_data);
        dse_cuda_free(&p->gx, f->tw[i].dev_grad);
    }
    struct dse_tensor *ts[] = { &f->cin[0], &f->cin[1], &f->cin[2], &f->cin[3], &f->cout, &f->cwide,
                                &f->cw, &f->cb, &f->crm, &f->crv };
    for (int i = 0; i < DSE_ARRAY_LEN(ts); i++) dse_tensor_deinit(ts[i]);
}

/* Run forward on both, compare every buffer and the op state; backward, compare again. */
static void run_compare(struct pair *p, struct fx *f, const char *what, double tol) {
    struct dse_err err = { 0 };
    enum dse_status a = dse_cpu_forward(&p->cx, &f->cn), b = dse_cuda_forward(&p->gx, &f->gn);
    CHECK_OK(a);
    CHECK_OK(b);
    if (a || b) {
        fprintf(stderr, "  %s: forward: %s\n", what, a ? p->cx.err.msg : p->gx.err.msg);
        return;
    }
    CHECK_OK(dse_cuda_sync(&p->gx, &err));
    twins_compare(p, f, what, "forward", tol);
    const struct dse_node_state *cs = &f->cn.st, *gs = &f->gn.st;
    const struct dse_tensor *x = f->cn.in[0];
    if (cs->argmax) compare_exact_bytes(&p->gx, what, "argmax", cs->argmax, gs->argmax,
                                        (size_t)dse_tensor_count(f->cn.out) * sizeof(int32_t));
    if (cs->mask && f->cn.training && f->layer.dropout_ratio > 0.0f)
        compare_exact_bytes(&p->gx, what, "mask", cs->mask, gs->mask, (size_t)dse_tensor_count(x));
    if (cs->mean) {
        compare(&p->gx, what, "mean", cs->mean, gs->mean, x->c, tol);
        compare(&p->gx, what, "invstd", cs->invstd, gs->invstd, x->c, tol);
    }
    if (cs->saved) compare(&p->gx, what, "saved", cs->saved, gs->saved, dse_tensor_count(x), tol);
    if (cs->prob) compare(&p->gx, what, "prob", cs->prob, gs->prob, dse_tensor_count(x), tol);
    CHECK(p->cx.rng.state == p->gx.rng.state); /* dropout drew as many numbers on both */

    a = dse_cpu_backward(&p->cx, &f->cn), b = dse_cuda_backward(&p->gx, &f->gn);
    CHECK_OK(a);
    CHECK_OK(b);
    if (a || b) {
        fprintf(stderr, "  %s: backward: %s\n", what, a ? p->cx.err.msg : p->gx.err.msg);
        return;
    }
    CHECK_OK(dse_cuda_sync(&p->gx, &err));
    twins_compare(p, f, what, "backward", tol);
}

/* One comparison: layer l inferred for n_in inputs of c x h x w (first input's c; in_c
 * for concat), N images. */
static void one(struct pair *p, const char *what, const struct dse_layer *l, int N, int n_in, const int *in_c,
                unsigned flags, uint64_t seed, double tol, int training) {
    struct fx f;
    if (fx_init(p, &f, l, N, n_in, in_c, flags, seed)) {
        f.cn.training = f.gn.training = training;
        run_compare(p, &f, what, tol);
    }
    fx_deinit(p, &f);
}

/* ---- per-op cases ---------------------------------------------------------------------- */

struct pair *P; /* the device cases' contexts (main sets it) */

/* A random conv layer (inferred), its batch and fixture flags; 0 if the draw does not
 * make a conv cuDNN runs. what: its description. */
static int random_conv(struct dse_pcg32 *r, enum dse_cuda_math math, struct dse_layer *lp, int *Np, unsigned *fp,
                       char *what, size_t size) {
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "conv");
    const int N = irand(r, 1, 4), C = irand(r, 1, 9), H = irand(r, 1, 13), W = irand(r, 1, 13);
    static const int ks[] = { 1, 1, 2, 3, 3, 5 };
    l.num_output = irand(r, 1, 9);
    l.kernel_h = ks[irand(r, 0, 5)], l.kernel_w = irand(r, 0, 3) ? l.kernel_h : ks[irand(r, 0, 5)];
    l.stride_h = irand(r, 1, 3), l.stride_w = irand(r, 0, 1) ? l.stride_h : irand(r, 1, 3);
    l.pad_h = irand(r, 0, l.kernel_h - 1), l.pad_w = irand(r, 0, l.kernel_w - 1);
    l.dilation_h = l.dilation_w = irand(r, 0, 4) ? 1 : 2;
    const int g = irand(r, 1, 3);
    l.groups = C % g == 0 && l.num_output % g == 0 ? g : 1;
    l.bias = irand(r, 0, 3) != 0;
    if (!infer_layer(&l, 1, C, H, W)) return 0;
    /* cuDNN wants the padded input at least as large as the dilated kernel (Caffe's
     * rounding gives such a conv one output row; no network here has one) */
    if (H + 2 * l.pad_h < (l.kernel_h - 1) * l.dilation_h + 1 || W + 2 * l.pad_w < (l.kernel_w - 1) * l.dilation_w + 1)
        return 0;
    const unsigned flags = (irand(r, 0, 3) == 0 ? FX_NO_DX : 0) | (irand(r, 0, 2) == 0 ? FX_OUT_VIEW : 0);
    snprintf(what, size, "conv %s N%d C%d %dx%d K%d %dx%d s%d,%d p%d,%d d%d g%d%s%s%s", dse_cuda_math_str(math), N, C,
             H, W, l.num_output, l.kernel_h, l.kernel_w, l.stride_h, l.stride_w, l.pad_h, l.pad_w, l.dilation_h,
             l.groups, l.bias ? " bias" : "", flags & FX_NO_DX ? " no-dx" : "", flags & FX_OUT_VIEW ? " out-view" : "");
    *lp = l, *Np = N, *fp = flags;
    return 1;
}

static void conv_cases(enum dse_cuda_math math, double tol, int trials) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 77, (uint64_t)math);
    P->gx.math = math;
    for (int t = 0, done = 0; done < trials && t < 50 * trials; t++) {
        struct dse_layer l;
        int N;
        unsigned flags;
        char what[160];
        if (!random_conv(&r, math, &l, &N, &flags, what, sizeof what)) continue;
        one(P, what, &l, N, 1, NULL, flags, 100 + (uint64_t)t, tol, 1);
        done++;
    }
    P->gx.math = DSE_CUDA_MATH_FP32;
}

/* Every twin's data downloaded over its host buffer: the CPU continues from the GPU's
 * values. */
static void twins_take_data(struct pair *p, struct fx *f) {
    for (int i = 0; i < f->n_tw; i++) {
        const struct twin *t = &f->tw[i];
        CHECK_OK(dse_cuda_download(&p->gx, t->host_data, t->dev_data, (size_t)t->floats * sizeof(float), NULL));
    }
}

/* A conv with its in-place ReLU fused on the GPU (dse_node.relu_out: the bias and the ReLU
 * in one pass forward; the mask and the bias gradient in one pass backward, or the mask
 * alone without a bias) against the CPU's unfused pair, the conv node and then a relu
 * node in place on its output: forward, the output; backward, the masked output gradient
 * and the input, weight and bias gradients. The CPU masks with the GPU's forward output
 * (downloaded after the forward comparison), so a value that rounding (TF32, 16 bits)
 * puts on the other side of 0 cannot make the masks differ. */
static void conv_relu_one(const char *what, const struct dse_layer *l, int N, unsigned flags, uint64_t seed,
                          double tol) {
    struct dse_layer rl = dse_layer_make(DSE_LAYER_RELU, "relu");
    if (!infer_layer(&rl, 1, l->out_c, l->out_h, l->out_w)) {
        CHECK(0);
        return;
    }
    struct fx f;
    if (!fx_init(P, &f, l, N, 1, NULL, flags, seed)) {
        fx_deinit(P, &f);
        return;
    }
    struct dse_node rn;
    struct dse_err err = { 0 };
    dse_node_init(&rn, DSE_OP_RELU, &rl);
    rn.n_in = 1, rn.in[0] = &f.cout, rn.out = &f.cout;
    f.gn.relu_out = 1;
    CHECK_OK(dse_cpu_node_prepare(&P->cx, &rn, &err));
    enum dse_status a = dse_cpu_forward(&P->cx, &f.cn), b = dse_cuda_forward(&P->gx, &f.gn);
    if (!a) a = dse_cpu_forward(&P->cx, &rn);
    CHECK_OK(a);
    CHECK_OK(b);
    if (!a && !b) {
        CHECK_OK(dse_cuda_sync(&P->gx, &err));
        twins_compare(P, &f, what, "forward", tol);
        twins_take_data(P, &f);
        a = dse_cpu_backward(&P->cx, &rn);
        if (!a) a = dse_cpu_backward(&P->cx, &f.cn);
        b = dse_cuda_backward(&P->gx, &f.gn);
        CHECK_OK(a);
        CHECK_OK(b);
        if (!a && !b) {
            CHECK_OK(dse_cuda_sync(&P->gx, &err));
            twins_compare(P, &f, what, "backward", tol);
        }
    }
    if (a || b) fprintf(stderr, "  %s: %s\n", what, a ? P->cx.err.msg : P->gx.err.msg);
    dse_node_deinit(&rn);
    fx_deinit(P, &f);
}

static void conv_relu_cases(enum dse_cuda_math math, double tol, int trials, uint64_t seed) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, seed, (uint64_t)math);
    const float keep_scale = P->gx.loss_scale;
    P->gx.math = math;
    P->gx.loss_scale = 64.0f; /* FP16: no overflow on these gradients (mixed_cases) */
    for (int t = 0, done = 0; done < trials && t < 50 * trials; t++) {
        struct dse_layer l;
        int N;
        unsigned flags;
        char what[200];
        if (!random_conv(&r, math, &l, &N, &flags, what, sizeof what)) continue;
        strcat(what, " +relu");
        conv_relu_one(what, &l, N, flags, 1100 + (uint64_t)t, tol);
        done++;
    }
    if (dse_cuda_math_is16(math)) { /* no gradient overflowed (and the flag is left clear) */
        int skip = -1;
        CHECK_OK(dse_cuda_mp_step(&P->gx, &skip, NULL));
        CHECK_INT_EQ(skip, 0);
    }
    P->gx.math = DSE_CUDA_MATH_FP32;
    P->gx.loss_scale = keep_scale;
}

/* FP32 and TF32 take the bias pass (dse_cuk_bias_fwd), FP16 and BF16 the 16-bit copies'
 * rounding pass (dse_cuk_from16_bias); shapes cuDNN has no 16-bit engine for run in FP32. */
void test_conv_relu(void) {
    conv_relu_cases(DSE_CUDA_MATH_FP32, TOL_CONV, 16, 87);
    conv_relu_cases(DSE_CUDA_MATH_TF32, TOL_TF32, 6, 88);
    conv_relu_cases(DSE_CUDA_MATH_FP16, 1e-5, 6, 89);
    conv_relu_cases(DSE_CUDA_MATH_BF16, 5e-4, 6, 90);
    /* SqueezeNet's shapes: a fire expand into its concat slice, conv1 (several x-blocks
     * per image, the bias gradient's runs of images) */
    struct dse_layer e3 = dse_layer_make(DSE_LAYER_CONV, "fire2/expand3x3");
    e3.num_output = 64, e3.kernel_h = e3.kernel_w = 3, e3.pad_h = e3.pad_w = 1;
    if (infer_layer(&e3, 1, 16, 55, 55))
        conv_relu_one("conv+relu fire2/expand3x3 N8 16x55x55 -> 64 (out-view)", &e3, 8, FX_OUT_VIEW, 7, TOL_CONV);
    struct dse_layer c1 = dse_layer_make(DSE_LAYER_CONV, "conv1");
    c1.num_output = 96, c1.kernel_h = c1.kernel_w = 7, c1.stride_h = c1.stride_w = 2;
    if (infer_layer(&c1, 1, 3, 111, 111))
        conv_relu_one("conv+relu conv1 N4 3x111x111 -> 96 7x7/2 (no-dx)", &c1, 4, FX_NO_DX, 8, TOL_CONV);
}

void test_conv(void) { conv_cases(DSE_CUDA_MATH_FP32, TOL_CONV, 24); }
void test_conv_tf32(void) { conv_cases(DSE_CUDA_MATH_TF32, TOL_TF32, 6); }
/* Mixed precision: operands rounded to 16 bits (NMSE of one rounding: FP16 about 1e-7,
 * BF16 about 5e-6; sums over a window add a little), gradients scaled and unscaled
 * exactly (powers of two); no overflow at a scale of 64. */
static void mixed_cases(enum dse_cuda_math math, double tol) {
    const float keep = P->gx.loss_scale;
    P->gx.loss_scale = 64.0f;
    conv_cases(math, tol, 8);
    int skip = -1;
    CHECK_OK(dse_cuda_mp_step(&P->gx, &skip, NULL));
    CHECK_INT_EQ(skip, 0);
    P->gx.loss_scale = keep;
}
void test_conv_fp16(void) { mixed_cases(DSE_CUDA_MATH_FP16, 1e-5); }
void test_conv_bf16(void) { mixed_cases(DSE_CUDA_MATH_BF16, 5e-4); }

/* FP16's loss scale: at 2^24, SqueezeNet-sized output gradients of 1 overflow FP16 (max
 * 65504), the step is reported skipped and the scale halves; the pure rule as PyTorch's. */
void test_loss_scale(void) {
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "conv");
    l.num_output = 8, l.kernel_h = l.kernel_w = 3, l.pad_h = l.pad_w = 1;
    struct fx f;
    P->gx.math = DSE_CUDA_MATH_FP16;
    if (infer_layer(&l, 1, 4, 10, 10) && fx_init(P, &f, &l, 2, 1, NULL, 0, 3)) {
        P->gx.loss_scale = 16777216.0f;
        P->gx.mp_good_steps = 7;
        const int64_t skipped = P->gx.stats.mp_steps_skipped;
        CHECK_OK(dse_cuda_forward(&P->gx, &f.gn));
        CHECK_OK(dse_cuda_backward(&P->gx, &f.gn));
        int skip = 0;
        CHECK_OK(dse_cuda_mp_step(&P->gx, &skip, NULL));
        CHECK_INT_EQ(skip, 1);
        CHECK_NEAR(P->gx.loss_scale, 8388608.0f, 0.0);
        CHECK_INT_EQ(P->gx.mp_good_steps, 0);
        CHECK_INT_EQ(P->gx.stats.mp_steps_skipped, skipped + 1);
        CHECK_OK(dse_cuda_mp_step(&P->gx, &skip, NULL)); /* the flag was cleared */
        CHECK_INT_EQ(skip, 0);
        fx_deinit(P, &f);
    }
    P->gx.math = DSE_CUDA_MATH_FP32;
    P->gx.loss_scale = DSE_LOSS_SCALE_INIT, P->gx.mp_good_steps = 0;
}
/* The same shapes through cuDNN's legacy API (its 8 algorithms), which the engine falls
 * back to when the graph API offers no engine for a shape. */
void test_conv_legacy(void) {
    P->gx.legacy_conv = 1;
    conv_cases(DSE_CUDA_MATH_FP32, TOL_CONV, 12);
    P->gx.legacy_conv = 0;
}

/* SqueezeNet's shapes at a real size: fire expand 3x3 into its concat slice, conv1. */
void test_conv_squeezenet(void) {
    struct dse_layer e3 = dse_layer_make(DSE_LAYER_CONV, "fire2/expand3x3");
    e3.num_output = 64, e3.kernel_h = e3.kernel_w = 3, e3.pad_h = e3.pad_w = 1;
    if (infer_layer(&e3, 1, 16, 55, 55)) one(P, "conv fire2/expand3x3 N8 16x55x55 -> 64 (out-view)", &e3, 8, 1, NULL,
                                             FX_OUT_VIEW, 5, TOL_CONV, 1);
    struct dse_layer c1 = dse_layer_make(DSE_LAYER_CONV, "conv1");
    c1.num_output = 96, c1.kernel_h = c1.kernel_w = 7, c1.stride_h = c1.stride_w = 2;
    if (infer_layer(&c1, 1, 3, 111, 111)) one(P, "conv conv1 N4 3x111x111 -> 96 7x7/2 (no-dx)", &c1, 4, 1, NULL,
                                              FX_NO_DX, 6, TOL_CONV, 1);
}

/* FP32 mode must not round inputs to TF32 (10-bit mantissa): x = w = 1 + 2^-13 is exact
 * in float32 and 1 in TF32, so a 16-input dot product is 16 + 2^-8 in FP32 (exactly, in
 * any order) and 16 in TF32. Conv (cuDNN) and fc (cuBLAS). */
void test_no_tf32(void) {
    const float v = 1.0f + 1.0f / 8192.0f, want = 16.0f + 1.0f / 256.0f;
    struct dse_layer conv = dse_layer_make(DSE_LAYER_CONV, "conv1x1"), fc = dse_layer_make(DSE_LAYER_FC, "fc");
    conv.num_output = 4, conv.kernel_h = conv.kernel_w = 1, conv.bias = 0;
    fc.num_output = 4, fc.bias = 0;
    const int ok_conv = infer_layer(&conv, 1, 16, 8, 8), ok_fc = infer_layer(&fc, 1, 16, 1, 1);
    CHECK(ok_conv && ok_fc);
    const struct dse_layer *layers[2] = { &conv, &fc };
    for (int k = 0; k < 2 && ok_conv && ok_fc; k++) {
        struct fx f;
        if (fx_init(P, &f, layers[k], 2, 1, NULL, 0, 1)) {
            for (int64_t i = 0; i < dse_tensor_count(&f.cin[0]); i++) f.cin[0].data[i] = v;
            for (int64_t i = 0; i < dse_tensor_count(&f.cw); i++) f.cw.data[i] = v;
            twins_upload(P, &f);
            CHECK_OK(dse_cuda_forward(&P->gx, &f.gn));
            const int64_t n = dse_tensor_count(&f.gout);
            float *y = malloc((size_t)n * sizeof *y);
            CHECK_OK(dse_cuda_download(&P->gx, y, f.gout.data, (size_t)n * sizeof *y, NULL));
            double worst = 0.0;
            for (int64_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)y[i] - want));
            if (!(worst <= 1e-5))
                fprintf(stderr, "  %s in FP32 mode: output %.9g, expected %.9g: inputs were rounded to TF32 "
                        "(tensor cores)\n", k ? "fc" : "conv", (double)y[0], (double)want);
            CHECK(worst <= 1e-5);
            free(y);
        }
        fx_deinit(P, &f);
    }
}

static void pool_cases(enum dse_layer_type type, int ties) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 78, (uint64_t)type + 10 * (uint64_t)ties);
    for (int t = 0, done = 0; done < 16 && t < 400; t++) {
        struct dse_layer l = dse_layer_make(type, type == DSE_LAYER_MAXPOOL ? "maxpool" : "avgpool");
        const int N = irand(&r, 1, 3), C = irand(&r, 1, 5), H = irand(&r, 1, 12), W = irand(&r, 1, 12);
        l.global = irand(&r, 0, 5) == 0;
        l.kernel_h = irand(&r, 1, 4), l.kernel_w = irand(&r, 0, 2) ? l.kernel_h : irand(&r, 1, 4);
        l.stride_h = irand(&r, 1, 3), l.stride_w = irand(&r, 1, 3);
        l.pad_h = irand(&r, 0, l.kernel_h - 1), l.pad_w = irand(&r, 0, l.kernel_w - 1);
        l.round = irand(&r, 0, 3) ? DSE_ROUND_CEIL : DSE_ROUND_FLOOR;
        if (l.global) l.pad_h = l.pad_w = 0, l.stride_h = l.stride_w = 1;
        if (!infer_layer(&l, 1, C, H, W)) continue;
        struct fx f;
        char what[160];
        snprintf(what, sizeof what, "%s%s N%d C%d %dx%d k%dx%d s%d,%d p%d,%d%s%s", dse_layer_type_str(type),
                 ties ? " ties" : "", N, C, H, W, l.kernel_h, l.kernel_w, l.stride_h, l.stride_w, l.pad_h, l.pad_w,
                 l.global ? " global" : "", l.round == DSE_ROUND_FLOOR ? " floor" : "");
        if (fx_init(P, &f, &l, N, 1, NULL, 0, 200 + (uint64_t)t)) {
            if (ties) { /* values from {0, 0.5, 1}, as after a relu: windows with equal maxima */
                const int64_t n = (int64_t)f.cin[0].n * f.cin[0].stride_n;
                for (int64_t i = 0; i < n; i++) f.cin[0].data[i] = 0.5f * (float)irand(&r, 0, 2);
                CHECK_OK(dse_cuda_upload(&P->gx, f.gin[0].data, f.cin[0].data, (size_t)n * sizeof(float), NULL));
            }
            run_compare(P, &f, what, TOL_EXACT);
        }
        fx_deinit(P, &f);
        done++;
    }
}

/* SqueezeNet's pools at a real size, where an image spans more than the 1,024 x-blocks
 * of an image grid (pool1: 3x3/2 over 113x113 maps, relu-like ties), and pool10 (global
 * average over 13x13, 1000 channels); then 70,000 small images, more than the 65,535
 * grid rows, so the kernels' image loops stride. */
void test_pool_large(void) {
    struct dse_layer mp = dse_layer_make(DSE_LAYER_MAXPOOL, "pool1");
    mp.kernel_h = mp.kernel_w = 3, mp.stride_h = mp.stride_w = 2;
    struct dse_layer ap = dse_layer_make(DSE_LAYER_AVGPOOL, "pool10");
    ap.global = 1;
    struct dse_layer sp = dse_layer_make(DSE_LAYER_MAXPOOL, "pool");
    sp.kernel_h = sp.kernel_w = 2, sp.stride_h = sp.stride_w = 1, sp.pad_h = 1;
    struct fx f;
    const int ok = infer_layer(&mp, 1, 24, 113, 113) && infer_layer(&ap, 1, 1000, 13, 13) && infer_layer(&sp, 1, 1, 3, 2);
    CHECK(ok);
    if (!ok) return;
    if (fx_init(P, &f, &mp, 2, 1, NULL, 0, 31)) {
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 32, 1);
        const int64_t n = (int64_t)f.cin[0].n * f.cin[0].stride_n;
        for (int64_t i = 0; i < n; i++) f.cin[0].data[i] = irand(&r, 0, 3) ? 0.0f : uniform(&r, 0.0f, 1.0f);
        CHECK_OK(dse_cuda_upload(&P->gx, f.gin[0].data, f.cin[0].data, (size_t)n * sizeof(float), NULL));
        run_compare(P, &f, "maxpool pool1 N2 C24 113x113 3x3/2 (relu ties)", TOL_EXACT);
    }
    fx_deinit(P, &f);
    if (fx_init(P, &f, &ap, 3, 1, NULL, 0, 33)) run_compare(P, &f, "avgpool pool10 N3 C1000 13x13 global", TOL_EXACT);
    fx_deinit(P, &f);
    if (fx_init(P, &f, &sp, 70000, 1, NULL, 0, 34)) run_compare(P, &f, "maxpool N70000 C1 3x2 2x2/1 p1,0", TOL_EXACT);
    fx_deinit(P, &f);
}

void test_maxpool(void) { pool_cases(DSE_LAYER_MAXPOOL, 0); }
void test_maxpool_ties(void) { pool_cases(DSE_LAYER_MAXPOOL, 1); }
void test_avgpool(void) { pool_cases(DSE_LAYER_AVGPOOL, 0); }

/* Elementwise ops with one input: relu, dropout (several ratios, training or not),
 * scale, batchnorm; each out of place and in place. */
void test_relu(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 79, 1);
    for (int t = 0; t < 8; t++) {
        struct dse_layer l = dse_layer_make(DSE_LAYER_RELU, "relu");
        const int N = irand(&r, 1, 4), C = irand(&r, 1, 7), H = irand(&r, 1, 9), W = irand(&r, 1, 9);
        if (!infer_layer(&l, 1, C, H, W)) continue;
        for (int ip = 0; ip < 2; ip++) {
            char what[96];
            snprintf(what, sizeof what, "relu N%d C%d %dx%d%s", N, C, H, W, ip ? " in-place" : "");
            one(P, what, &l, N, 1, NULL, ip ? FX_IN_PLACE : 0, 300 + (uint64_t)t, TOL_EXACT, 1);
        }
    }
}

void test_dropout(void) {
    static const float ratios[] = { 0.5f, 0.3f, 0.0f, 0.9f };
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 80, 1);
    for (int t = 0; t < 8; t++) {
        struct dse_layer l = dse_layer_make(DSE_LAYER_DROPOUT, "drop");
        l.dropout_ratio = ratios[t % 4];
        const int N = irand(&r, 1, 4), C = irand(&r, 1, 9), H = irand(&r, 1, 17), W = irand(&r, 1, 17);
        if (!infer_layer(&l, 1, C, H, W)) continue;
        for (int k = 0; k < 4; k++) {
            const int ip = k & 1, training = k < 2 || t == 0;
            char what[96];
            snprintf(what, sizeof what, "dropout %.1f N%d C%d %dx%d%s%s", (double)l.dropout_ratio, N, C, H, W,
                     ip ? " in-place" : "", training ? "" : " inference");
            one(P, what, &l, N, 1, NULL, ip ? FX_IN_PLACE : 0, 400 + (uint64_t)t, TOL_EXACT, training);
        }
    }
}

/* Dropout at SqueezeNet's drop9 size (512x13x13 per image: many threads per image, each
 * drawing a strided run), and over 70,000 one-value images (the image loop strides). */
void test_dropout_large(void) {
    struct dse_layer l = dse_layer_make(DSE_LAYER_DROPOUT, "drop9");
    l.dropout_ratio = 0.5f;
    if (infer_layer(&l, 1, 512, 13, 13)) one(P, "dropout drop9 N3 512x13x13", &l, 3, 1, NULL, 0, 35, TOL_EXACT, 1);
    if (infer_layer(&l, 1, 512, 13, 13))
        one(P, "dropout drop9 N3 512x13x13 in-place", &l, 3, 1, NULL, FX_IN_PLACE, 36, TOL_EXACT, 1);
    l = dse_layer_make(DSE_LAYER_DROPOUT, "drop");
    l.dropout_ratio = 0.3f;
    if (infer_layer(&l, 1, 1, 1, 1)) one(P, "dropout N70000 1x1x1", &l, 70000, 1, NULL, 0, 37, TOL_EXACT, 1);
}

void test_concat(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 81, 1);
    for (int t = 0; t < 8; t++) {
        const int n_in = irand(&r, 1, 4), N = irand(&r, 1, 3), H = irand(&r, 1, 8), W = irand(&r, 1, 8);
        int in_c[4], sum = 0;
        for (int i = 0; i < n_in; i++) sum += in_c[i] = irand(&r, 1, 5);
        struct dse_layer l = dse_layer_make(DSE_LAYER_CONCAT, "concat");
        /* Infer with equal inputs, then describe the real ones: concat's shape is the sum. */
        if (!infer_layer(&l, n_in, in_c[0], H, W)) continue;
        l.out_c = sum;
        for (int views = 0; views < 2; views++) {
            char what[96];
            snprintf(what, sizeof what, "concat %d inputs N%d C%d %dx%d%s", n_in, N, sum, H, W,
                     views ? " views" : " copies");
            one(P, what, &l, N, n_in, in_c, views ? FX_VIEWS : 0, 500 + (uint64_t)t, TOL_EXACT, 1);
        }
    }
}

void test_eltwise(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 82, 1);
    for (int t = 0; t < 8; t++) {
        const int n_in = irand(&r, 2, 4), N = irand(&r, 1, 3), C = irand(&r, 1, 6), H = irand(&r, 1, 8),
                  W = irand(&r, 1, 8);
        struct dse_layer l = dse_layer_make(DSE_LAYER_ELTWISE, "add");
        if (!infer_layer(&l, n_in, C, H, W)) continue;
        char what[96];
        snprintf(what, sizeof what, "eltwise_add %d inputs N%d C%d %dx%d", n_in, N, C, H, W);
        one(P, what, &l, N, n_in, NULL, 0, 600 + (uint64_t)t, TOL_EXACT, 1);
    }
}

void test_fc(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 83, 1);
    for (int t = 0; t < 12; t++) {
        const int N = irand(&r, 1, 9), C = irand(&r, 1, 20), H = irand(&r, 1, 5), W = irand(&r, 1, 5);
        struct dse_layer l = dse_layer_make(DSE_LAYER_FC, "fc");
        l.num_output = irand(&r, 1, 17);
        l.bias = irand(&r, 0, 3) != 0;
        if (!infer_layer(&l, 1, C, H, W)) continue;
        const unsigned flags = irand(&r, 0, 3) == 0 ? FX_NO_DX : 0;
        for (int m = 0; m < 2; m++) {
            P->gx.math = m ? DSE_CUDA_MATH_TF32 : DSE_CUDA_MATH_FP32;
            char what[96];
            snprintf(what, sizeof what, "fc %s N%d D%d K%d%s%s", dse_cuda_math_str(P->gx.math), N, C * H * W,
                     l.num_output, l.bias ? " bias" : "", flags ? " no-dx" : "");
            one(P, what, &l, N, 1, NULL, flags, 700 + (uint64_t)t, m ? TOL_TF32 : TOL_FC, 1);
        }
        P->gx.math = DSE_CUDA_MATH_FP32;
    }
}

void test_softmax(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 84, 1);
    for (int t = 0; t < 8; t++) {
        const int N = irand(&r, 1, 64), K = irand(&r, 1, 1000);
        struct dse_layer l = dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss");
        if (!infer_layer(&l, 1, K, 1, 1)) continue;
        char what[96];
        snprintf(what, sizeof what, "softmax_xent N%d K%d", N, K);
        one(P, what, &l, N, 1, NULL, 0, 800 + (uint64_t)t, TOL_SOFTMAX, 1);
    }
    /* A label out of range is the CPU's error, word for word. */
    struct dse_layer l = dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss");
    struct fx f;
    if (infer_layer(&l, 1, 5, 1, 1) && fx_init(P, &f, &l, 3, 1, NULL, 0, 9)) {
        f.labels[1] = 5;
        CHECK_INT_EQ(dse_cpu_forward(&P->cx, &f.cn), DSE_ERR_CONFIG);
        CHECK_INT_EQ(dse_cuda_forward(&P->gx, &f.gn), DSE_ERR_CONFIG);
        CHECK_STR_EQ(P->gx.err.msg, P->cx.err.msg);
        fx_deinit(P, &f);
    }
}

void test_batchnorm(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 85, 1);
    for (int t = 0; t < 6; t++) {
        const int N = irand(&r, 1, 5), C = irand(&r, 1, 8), H = irand(&r, 1, 9), W = irand(&r, 1, 9);
        for (int k = 0; k < 8; k++) {
            struct dse_layer l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn");
            l.affine = k & 1;
            l.bn_eps = t & 1 ? 0.001f : 1e-5f; /* the layer's eps on both backends */
            const int ip = (k >> 1) & 1, training = !(k >> 2);
            if (!infer_layer(&l, 1, C, H, W)) continue;
            char what[96];
            snprintf(what, sizeof what, "batchnorm N%d C%d %dx%d%s%s%s", N, C, H, W, l.affine ? " affine" : "",
                     ip ? " in-place" : "", training ? "" : " inference");
            one(P, what, &l, N, 1, NULL, ip ? FX_IN_PLACE : 0, 900 + (uint64_t)t, TOL_BN, training);
        }
    }
}

void test_scale(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 86, 1);
    for (int t = 0; t < 6; t++) {
        const int N = irand(&r, 1, 5), C = irand(&r, 1, 8), H = irand(&r, 1, 9), W = irand(&r, 1, 9);
        for (int k = 0; k < 4; k++) {
            struct dse_layer l = dse_layer_make(DSE_LAYER_SCALE, "scale");
            l.bias = k & 1;
            const int ip = k >> 1;
            if (!infer_layer(&l, 1, C, H, W)) continue;
            char what[96];
            snprintf(what, sizeof what, "scale N%d C%d %dx%d%s%s", N, C, H, W, l.bias ? " bias" : "",
                     ip ? " in-place" : "");
            one(P, what, &l, N, 1, NULL, ip ? FX_IN_PLACE : 0, 1000 + (uint64_t)t, TOL_SCALE, 1);
        }
    }
}

/* lrn (issue #34): windows of 1, 3 and 5 channels, AlexNet's alpha and larger ones, outputs
 * that are channel slices of a wider buffer. */
void test_lrn(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 87, 1);
    static const float alphas[] = { 1e-4f, 0.5f, 2.0f };
    for (int t = 0; t < 6; t++) {
        const int N = irand(&r, 1, 4), C = irand(&r, 1, 9), H = irand(&r, 1, 9), W = irand(&r, 1, 9);
        struct dse_layer l = dse_layer_make(DSE_LAYER_LRN, "lrn");
        l.lrn_size = 1 + 2 * irand(&r, 0, 2), l.lrn_alpha = alphas[t % 3], l.lrn_beta = t & 1 ? 0.75f : 0.5f;
        l.lrn_k = t & 2 ? 2.0f : 1.0f;
        if (!infer_layer(&l, 1, C, H, W)) continue;
        for (int ov = 0; ov < 2; ov++) {
            char what[96];
            snprintf(what, sizeof what, "lrn N%d C%d %dx%d size %d alpha %g%s", N, C, H, W, l.lrn_size,
                     (double)l.lrn_alpha, ov ? " out-view" : "");
            one(P, what, &l, N, 1, NULL, ov ? FX_OUT_VIEW : 0, 1100 + (uint64_t)t, TOL_LRN, 1);
        }
    }
}

/* slice by begin/end and by parts; flatten and reshape given tensors of their own (the
 * model's views move nothing on any backend). Moves only: exact. */
void test_slice_views(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 88, 1);
    for (int t = 0; t < 6; t++) {
        const int N = irand(&r, 1, 4), C = irand(&r, 2, 9), H = irand(&r, 1, 6), W = irand(&r, 1, 6);
        struct dse_layer l = dse_layer_make(DSE_LAYER_SLICE, "slice");
        if (t & 1) l.slice_parts = C % 3 == 0 ? 3 : C % 2 == 0 ? 2 : 1, l.slice_part = l.slice_parts - 1;
        else l.slice_begin = irand(&r, 0, C - 1), l.slice_end = irand(&r, 0, 1) ? 0 : C;
        char what[96];
        if (infer_layer(&l, 1, C, H, W))
            for (int ov = 0; ov < 2; ov++) {
                snprintf(what, sizeof what, "slice N%d C%d %dx%d -> %d%s", N, C, H, W, l.out_c, ov ? " out-view" : "");
                one(P, what, &l, N, 1, NULL, ov ? FX_OUT_VIEW : 0, 1200 + (uint64_t)t, TOL_EXACT, 1);
            }
        struct dse_layer v = dse_layer_make(t & 1 ? DSE_LAYER_RESHAPE : DSE_LAYER_FLATTEN, "view");
        v.dims[0] = C, v.dims[1] = W, v.dims[2] = H; /* reshape: the map turned (same count) */
        if (!infer_layer(&v, 1, C, H, W)) continue;
        snprintf(what, sizeof what, "%s N%d C%d %dx%d", t & 1 ? "reshape" : "flatten", N, C, H, W);
        one(P, what, &v, N, 1, NULL, 0, 1300 + (uint64_t)t, TOL_EXACT, 1);
    }
}

/* ---- the context itself ------------------------------------------------------------------ */

void test_ctx(void) {
    struct dse_err err = { 0 };
    char info[512];
    CHECK_OK(dse_cuda_device_info(0, info, sizeof info, &err));
    printf("  %s\n", info);
    /* A failing runtime call comes back with its name, error and place. */
    void *p = NULL;
    CHECK_INT_EQ(dse_cuda_alloc(&P->gx, (size_t)1 << 62, &p, &err), DSE_ERR_NOMEM);
    CHECK(p == NULL);
    CHECK(strncmp(err.msg, "cudaMalloc: cudaErrorMemoryAllocation (engine/cuda/ctx.c:", 57) == 0);
    if (verbose) printf("  %s\n", err.msg);
    /* The context still works after it. */
    CHECK_OK(dse_cuda_alloc(&P->gx, 1000, &p, &err));
    dse_cuda_free(&P->gx, p);
    char why[256];
    const int count = dse_cuda_device_count(why, sizeof why);
    struct dse_cuda_ctx cx;
    CHECK_INT_EQ(dse_cuda_ctx_init(&cx, count, 1, &err), DSE_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "does not exist") != NULL);
    /* Non-finite detection. */
    float host[5] = { 1, 2, 3, 4, 5 };
    float *dev = NULL;
    int bad = -1;
    CHECK_OK(dse_cuda_alloc(&P->gx, sizeof host, (void **)&dev, &err));
    CHECK_OK(dse_cuda_upload(&P->gx, dev, host, sizeof host, &err));
    CHECK_OK(dse_cuda_nonfinite(&P->gx, dev, 5, &bad));
    CHECK_INT_EQ(bad, 0);
    host[3] = NAN;
    CHECK_OK(dse_cuda_upload(&P->gx, dev, host, sizeof host, &err));
    CHECK_OK(dse_cuda_nonfinite(&P->gx, dev, 5, &bad));
    CHECK_INT_EQ(bad, 1);
    dse_cuda_free(&P->gx, dev);
}

/* The conv algorithm cache: one find per shape and direction, reused after. */
void test_conv_cache(void) {
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "conv");
    l.num_output = 8, l.kernel_h = l.kernel_w = 3, l.pad_h = l.pad_w = 1;
    struct fx f;
    if (!infer_layer(&l, 1, 4, 10, 10) || !fx_init(P, &f, &l, 2, 1, NULL, 0, 3)) return;
    struct dse_cuda_conv_choice c;
    const int64_t finds = P->gx.stats.conv_finds, graph = P->gx.stats.conv_graph_found;
    CHECK_OK(dse_cuda_conv2d_choose(&P->gx, &f.gn, &c));
    CHECK(c.algo[0] >= 0 && c.algo[1] >= 0 && c.algo[2] >= 0);
    /* A plain 3x3 conv has graph-API engines in every direction (conv_graph.c); whether
     * they beat the legacy API's best depends on the GPU. */
    CHECK_INT_EQ(P->gx.stats.conv_graph_found - graph, 3);
    const int64_t after = P->gx.stats.conv_finds;
    CHECK(after - finds <= 3);
    CHECK_OK(dse_cuda_forward(&P->gx, &f.gn));
    CHECK_OK(dse_cuda_backward(&P->gx, &f.gn));
    CHECK_INT_EQ(P->gx.stats.conv_finds, after);
    printf("  3x3 conv N2 4x10x10 -> 8: fwd %s %d (%.3f ms), bwd data %s %d (%.3f ms), bwd filter %s %d (%.3f ms)\n",
           dse_cuda_conv_algo_str(0, c.algo[0]), c.algo[0] % DSE_CUDA_CONV_ENGINE, (double)c.ms[0],
           dse_cuda_conv_algo_str(1, c.algo[1]), c.algo[1] % DSE_CUDA_CONV_ENGINE, (double)c.ms[1],
           dse_cuda_conv_algo_str(2, c.algo[2]), c.algo[2] % DSE_CUDA_CONV_ENGINE,
           (double)c.ms[2]);
    fx_deinit(P, &f);
}
