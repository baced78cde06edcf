/* fc.c: CPU fully connected layer (Caffe's InnerProduct), forward and backward, one
 * sgemm each (the weight gradient's over the whole batch, on one thread: the same bits
 * with any thread count; data-parallel ranks add their shares' in the slice tree's order,
 * engine/model.c, which one process's sgemm does not repeat). x: [N, C, H, W] read as [N, D = C*H*W] (lda = stride_n, so views work)
 * w: [K, D]   b: [K]   y: [N, K]. */
#include "engine/engine.h"

#include <cblas.h>

#include "engine/cpu/bf16_impl.h"

enum dse_status dse_cpu_fc_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int N = x->n, K = y->c, D = (int)dse_tensor_image(x);
    if (cx->bf16) return dse_cpu_fc_bf16_fwd(cx, n); /* conv_bf16.c */
    /* y = x w^T */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, K, D, 1.0f, x->data, (int)x->stride_n,
                n->weight->data, D, 0.0f, y->data, (int)y->stride_n);
    if (n->bias) {
        const float *b = n->bias->data;
        for (int i = 0; i < N; i++) {
            float *yi = y->data + i * y->stride_n;
            for (int k = 0; k < K; k++) yi[k] += b[k];
        }
    }
    (void)cx;
    return DSE_OK;
}

enum dse_status dse_cpu_fc_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int N = x->n, K = y->c, D = (int)dse_tensor_image(x);
    if (cx->bf16) { /* the bias gradient below, the products in bf16 (conv_bf16.c) */
        enum dse_status st = dse_cpu_fc_bf16_bwd(cx, n);
        if (st) return st;
    }
    if (n->weight->grad && !cx->bf16) /* dw += dy^T x */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, D, N, 1.0f, y->grad, (int)y->stride_n, x->data,
                    (int)x->stride_n, 1.0f, n->weight->grad, D);
    if (n->bias && n->bias->grad) { /* by the batch's slices, as conv's (dse_cpu_db_slices) */
        float *db = n->bias->grad;
        const struct dse_cpu_slices sl = dse_cpu_slices_of(cx, N);
        double part[4][DSE_SLICES_MAX];
        for (int k = 0; k < K; k++) {
            dse_cpu_slice_sums(&sl, y->grad, y->stride_n, 1, k, 1, DSE_CPU_MM_NONE, part); /* channel k: one value an image */
            dse_cpu_db_slices(n, &sl, db, K, k, part[0]);
        }
    }
    if (x->grad && !cx->bf16) /* dx += dy w */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, D, K, 1.0f, y->grad, (int)y->stride_n,
                    n->weight->data, D, 1.0f, x->grad, (int)x->stride_n);
    (void)cx;
    return DSE_OK;
}
