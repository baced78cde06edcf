/* engine_cpu_util.c: test_engine_cpu's shared helpers (tests/engine_cpu_util.h) and its one
 * set of check counts. */
#include "tests/engine_cpu_util.h"

int check_failures, check_count, check_skips;

/* ---- helpers ------------------------------------------------------------------- */

float uniform(struct dse_pcg32 *r, float lo, float hi) {
    return lo + (hi - lo) * (float)(dse_pcg32_next(r) >> 8) * (1.0f / 16777216.0f);
}

/* Every value of t (data) uniform in [lo, hi), image by image (views keep their gaps). */
void fill_uniform(struct dse_tensor *t, struct dse_pcg32 *r, float lo, float hi) {
    for (int i = 0; i < t->n; i++)
        for (int64_t j = 0; j < dse_tensor_image(t); j++) t->data[i * t->stride_n + j] = uniform(r, lo, hi);
}

/* Values at least `gap` apart (a shuffled ramp), so a finite-difference step cannot
 * change which value a max picks. */
void fill_distinct(struct dse_tensor *t, struct dse_pcg32 *r, float gap) {
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
void fill_off_zero(struct dse_tensor *t, struct dse_pcg32 *r) {
    fill_uniform(t, r, 0.1f, 1.0f);
    for (int i = 0; i < t->n; i++)
        for (int64_t j = 0; j < dse_tensor_image(t); j++)
            if (dse_pcg32_next(r) & 1) t->data[i * t->stride_n + j] *= -1.0f;
}

/* Copy data (or grad) of t into a contiguous buffer, and back. */
void gather(const struct dse_tensor *t, const float *src, double *dst) {
    const int64_t img = dse_tensor_image(t);
    for (int i = 0; i < t->n; i++)
        for (int64_t j = 0; j < img; j++) dst[i * img + j] = src[i * t->stride_n + j];
}

void scatter(const struct dse_tensor *t, const double *src, float *dst) {
    const int64_t img = dse_tensor_image(t);
    for (int i = 0; i < t->n; i++)
        for (int64_t j = 0; j < img; j++) dst[i * t->stride_n + j] = (float)src[i * img + j];
}

/* A one-layer network with input c x h x w whose layer takes n_in copies of the
 * network input: shapes come from dse_net_infer, as they will in the model. */
struct dse_layer infer_layer(struct dse_layer l, int n_in, int c, int h, int w) {
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



/* Build node + tensors for an inferred layer; inputs [N, in_c[i], in_h, in_w] (in_c
 * NULL: layer->in_c), all with grads, random data; params random. */
void fx_init(struct fx *f, struct dse_cpu_ctx *cx, const struct dse_layer *l, int N, int n_in,
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

void fx_deinit(struct fx *f) {
    dse_node_deinit(&f->node);
    for (int i = 0; i < 4; i++) dse_tensor_deinit(&f->in[i]);
    dse_tensor_deinit(&f->out);
    dse_tensor_deinit(&f->w);
    dse_tensor_deinit(&f->b);
    dse_tensor_deinit(&f->rm);
    dse_tensor_deinit(&f->rv);
}



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
double grad_check(struct dse_cpu_ctx *cx, struct dse_node *n, double eps, double tol, double floor_,
                  const char *what) {
    return grad_check_q(cx, n, eps, tol, floor_, what, 0.0);
}

double grad_check_q(struct dse_cpu_ctx *cx, struct dse_node *n, double eps, double tol, double floor_,
                    const char *what, double r_step) {
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
    for (int64_t j = 0; j < ny; j++) {
        g.r[j] = n->op == DSE_OP_SOFTMAX_XENT ? 1.0 : uniform(&r, -1.0f, 1.0f);
        if (r_step > 0.0) g.r[j] = round(g.r[j] / r_step) * r_step;
    }

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

void ctx_init(struct dse_cpu_ctx *cx) { CHECK_OK(dse_cpu_ctx_init(cx, THREADS, 1234, NULL)); }
