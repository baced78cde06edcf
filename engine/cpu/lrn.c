/* lrn.c: CPU local response normalization across channels (Caffe's LRN, ACROSS_CHANNELS;
 * AlexNet, CaffeNet, GoogLeNet), forward and backward; then the ops that only move values:
 * the channel slice, flatten and reshape.
 * x, y: [N, C, H, W]   st.saved: the scale, then p = scale^-beta, each [N, C, H, W] contiguous.
 *   scale[c] = k + alpha/size * sum of x[c']^2 over c' in [c - size/2, c + size/2] within [0, C)
 *   y[c]     = x[c] * p[c]
 *   dx[c]   += dy[c] * p[c]
 *              - 2 alpha beta/size * x[c] * sum over the same window of dy[c'] y[c'] / scale[c']
 * Backward recomputes y[c'] as x[c'] * p[c'] (the same bits) rather than reading y: a layer
 * after the LRN may work in place on y (a dropout, a batch norm) before backward runs.
 * Every value is summed over its window in channel order by one thread, so the results
 * do not depend on the thread count. Gradient rule: engine/engine.h, struct dse_node. */
#include "engine/engine.h"

#include <math.h>
#include <string.h>

#include "engine/cpu/cpu_impl.h"

struct plane_job {
    const struct dse_node *n;
    int64_t                HW;
};

/* The window [*c0, *c1) of channel c. */
static void window(const struct dse_node *n, int c, int *c0, int *c1) {
    const int half = n->layer->lrn_size / 2, C = n->in[0]->c;
    *c0 = c - half > 0 ? c - half : 0;
    *c1 = c + half + 1 < C ? c + half + 1 : C;
}

/* Values of a plane at a time in the loops below: the window's channels are HW apart, so
 * the sums run plane row by plane row over a chunk (contiguous, vectorized), each value's
 * terms still added in channel order. */
#define CHUNK 512

/* Planes [lo, hi) of the N*C (image, channel) planes. */
static void lrn_fwd_part(void *p, int64_t lo, int64_t hi) {
    const struct plane_job *a = p;
    const struct dse_node *n = a->n;
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const struct dse_layer *l = n->layer;
    const int C = x->c;
    const float k = l->lrn_k, an = l->lrn_alpha / (float)l->lrn_size, nb = -l->lrn_beta;
    for (int64_t u = lo; u < hi; u++) {
        const int64_t i = u / C;
        const int c = (int)(u % C);
        int c0, c1;
        window(n, c, &c0, &c1);
        const float *xi = x->data + i * x->stride_n;
        const float *xc = xi + c * a->HW;
        float *yc = y->data + i * y->stride_n + c * a->HW, *sc = n->st.saved + u * a->HW;
        float *pc = sc + (int64_t)x->n * C * a->HW;
        for (int64_t j0 = 0; j0 < a->HW; j0 += CHUNK) {
            const int64_t m = a->HW - j0 < CHUNK ? a->HW - j0 : CHUNK;
            float s[CHUNK] = { 0 };
            for (int q = c0; q < c1; q++) {
                const float *xq = xi + q * a->HW + j0;
                for (int64_t j = 0; j < m; j++) s[j] += xq[j] * xq[j];
            }
            for (int64_t j = 0; j < m; j++) {
                sc[j0 + j] = k + an * s[j];
                pc[j0 + j] = powf(sc[j0 + j], nb);
                yc[j0 + j] = xc[j0 + j] * pc[j0 + j];
            }
        }
    }
}

enum dse_status dse_cpu_lrn_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0];
    DSE_ASSERT(n->st.saved);
    struct plane_job a = { .n = n, .HW = (int64_t)x->h * x->w };
    dse_cpu_for(cx, (int64_t)x->n * x->c, dse_tensor_count(x) * n->layer->lrn_size, lrn_fwd_part, &a);
    return DSE_OK;
}

static void lrn_bwd_part(void *p, int64_t lo, int64_t hi) {
    const struct plane_job *a = p;
    const struct dse_node *n = a->n;
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const struct dse_layer *l = n->layer;
    const int C = x->c;
    const float f = 2.0f * l->lrn_alpha * l->lrn_beta / (float)l->lrn_size;
    for (int64_t u = lo; u < hi; u++) {
        const int64_t i = u / C;
        const int c = (int)(u % C);
        int c0, c1;
        window(n, c, &c0, &c1);
        const float *dyi = y->grad + i * y->stride_n, *xi = x->data + i * x->stride_n;
        const float *si = n->st.saved + i * C * a->HW, *pi = si + (int64_t)x->n * C * a->HW;
        const float *xc = xi + c * a->HW;
        float *dxc = x->grad + i * x->stride_n + c * a->HW;
        for (int64_t j0 = 0; j0 < a->HW; j0 += CHUNK) {
            const int64_t m = a->HW - j0 < CHUNK ? a->HW - j0 : CHUNK;
            float t[CHUNK] = { 0 };
            for (int q = c0; q < c1; q++) {
                const int64_t o = q * a->HW + j0;
                for (int64_t j = 0; j < m; j++) t[j] += dyi[o + j] * (xi[o + j] * pi[o + j]) / si[o + j];
            }
            const int64_t o = c * a->HW + j0;
            for (int64_t j = 0; j < m; j++)
                dxc[j0 + j] += dyi[o + j] * pi[o + j] - f * xc[j0 + j] * t[j];
        }
    }
}

enum dse_status dse_cpu_lrn_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0];
    if (!x->grad) return DSE_OK;
    struct plane_job a = { .n = n, .HW = (int64_t)x->h * x->w };
    dse_cpu_for(cx, (int64_t)x->n * x->c, 2 * dse_tensor_count(x) * n->layer->lrn_size, lrn_bwd_part, &a);
    return DSE_OK;
}

/* ---- slice: y = channels [b, b + C') of x; backward adds dy into those channels of dx ---- */

enum dse_status dse_cpu_slice_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    (void)cx;
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int64_t off = (int64_t)dse_node_slice_begin(n) * x->h * x->w, img = dse_tensor_image(y);
    for (int i = 0; i < y->n; i++)
        memcpy(y->data + i * y->stride_n, x->data + i * x->stride_n + off, (size_t)img * sizeof(float));
    return DSE_OK;
}

enum dse_status dse_cpu_slice_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    (void)cx;
    const struct dse_tensor *x = n->in[0], *y = n->out;
    if (!x->grad) return DSE_OK;
    const int64_t off = (int64_t)dse_node_slice_begin(n) * x->h * x->w, img = dse_tensor_image(y);
    for (int i = 0; i < y->n; i++) {
        const float *dy = y->grad + i * y->stride_n;
        float *dx = x->grad + i * x->stride_n + off;
        for (int64_t j = 0; j < img; j++) dx[j] += dy[j];
    }
    return DSE_OK;
}

/* ---- flatten, reshape: the same values in another shape ---------------------------------
 * The model runs them in place (a view: output data and grad are the input's), where there
 * is nothing to do; given a tensor of their own (a test's), forward copies and backward adds. */

static enum dse_status view_move(struct dse_node *n, int bwd) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int64_t img = dse_tensor_image(x);
    if (dse_cpu_in_place(n) || (bwd && !x->grad)) return DSE_OK;
    for (int i = 0; i < x->n; i++) {
        float *xi = (bwd ? x->grad : x->data) + i * x->stride_n, *yi = (bwd ? y->grad : y->data) + i * y->stride_n;
        if (bwd)
            for (int64_t j = 0; j < img; j++) xi[j] += yi[j];
        else
            memcpy(yi, xi, (size_t)img * sizeof(float));
    }
    return DSE_OK;
}

enum dse_status dse_cpu_flatten_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) { (void)cx; return view_move(n, 0); }
enum dse_status dse_cpu_flatten_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) { (void)cx; return view_move(n, 1); }
enum dse_status dse_cpu_reshape_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) { (void)cx; return view_move(n, 0); }
enum dse_status dse_cpu_reshape_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) { (void)cx; return view_move(n, 1); }
