/* concat.c: CPU channel concatenation, forward and backward. An input that is a view of
 * its own channel slice of the output (dse_tensor_view_channels: a Fire expand conv
 * writing straight into the concat buffer) is already in place: forward copies nothing
 * for it and backward adds nothing, since its grad IS that slice of the output's grad.
 * in[t]: [N, C_t, H, W]   y: [N, sum_t C_t, H, W]. */
#include "engine/engine.h"

#include <string.h>

#include "engine/cpu/cpu_impl.h"

/* 1 if p (an input's data or grad) is the output's q (data or grad) at offset off, in
 * elements of `size` bytes (an output or gradient stored in bf16: 2, dse_tensor.bf16 and
 * grad16), with the output's
 * image stride: nothing to move. */
static int is_view(const float *p, const float *q, size_t size, const struct dse_tensor *in,
                   const struct dse_tensor *y, int64_t off) {
    return q && (const char *)p == (const char *)q + (size_t)off * size && in->stride_n == y->stride_n;
}

/* Forward copies each input into its channels of the output; backward (bwd) adds those
 * channels of the output's grad into each input's grad. */
static enum dse_status concat(struct dse_cpu_ctx *cx, struct dse_node *n, int bwd) {
    const struct dse_tensor *y = n->out;
    const int64_t HW = (int64_t)y->h * y->w;
    int64_t off = 0;
    for (int t = 0; t < n->n_in; t++) {
        const struct dse_tensor *x = n->in[t];
        const int64_t img = dse_tensor_image(x);
        float *xs = bwd ? x->grad : x->data, *ys = bwd ? y->grad : y->data;
        const size_t size = (bwd ? y->grad16 : y->bf16) ? sizeof(uint16_t) : sizeof(float);
        if ((!bwd || xs) && !is_view(xs, ys, size, x, y, off)) { /* backward: only inputs that take a grad */
            /* a bf16 output, or gradient, is written only through its views, and a copied input
               is float (plan_bf16, plan_grad16) */
            DSE_ASSERT(size == sizeof(float) && !x->bf16);
            for (int i = 0; i < y->n; i++) {
                float *xi = xs + i * x->stride_n, *yi = ys + i * y->stride_n + off;
                if (bwd)
                    for (int64_t j = 0; j < img; j++) xi[j] += yi[j];
                else
                    memcpy(yi, xi, (size_t)img * sizeof(float));
            }
            cx->stats.concat_copy_bytes += dse_tensor_count(x) * (int64_t)sizeof(float);
        }
        off += x->c * HW;
    }
    return DSE_OK;
}

enum dse_status dse_cpu_concat_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) { return concat(cx, n, 0); }

enum dse_status dse_cpu_concat_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) { return concat(cx, n, 1); }
