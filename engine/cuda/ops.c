/* ops.c: the CUDA backend's kernels for every op but conv (conv.c): fc on cuBLAS sgemm
 * with cuDNN's bias add and bias gradient; relu (was cuDNN's activation), pooling,
 * dropout, eltwise add, softmax and the loss, batchnorm, scale and lrn on our own kernels
 * (engine/cuda/kernels.cu), which mirror engine/cpu/ bit for bit where the CPU's order of
 * operations allows. Concat copies only inputs that are not views of
 * their slice (cudaMemcpy2DAsync, strided), slice its channels; flatten and reshape run
 * as views (nothing moves). Why pooling is not cuDNN's: cuDNN sizes
 * outputs with floor rounding and divides averages by the whole window, while Caffe
 * (and our CPU backend) rounds up and clips windows; and cuDNN's max-pool backward
 * finds the maximum again from y, which an in-place op after the pool may have changed,
 * and may break ties differently. Gradient rule: engine.h, struct dse_node. */
#include "engine/cuda/cuda.h"

#include <string.h>

#include "engine/cuda/cuda_impl.h"

#define STREAM(cx) ((cx)->impl->stream)

/* ---- pooling ------------------------------------------------------------------------ */

static struct dse_cuk_pool pool_of(const struct dse_node *n) {
    const struct dse_layer *l = n->layer;
    const struct dse_tensor *x = n->in[0], *y = n->out;
    struct dse_cuk_pool g = { .N = x->n, .C = x->c, .H = x->h, .W = x->w, .P = y->h, .Q = y->w,
                              .kh = l->kernel_h, .kw = l->kernel_w, .sh = l->stride_h, .sw = l->stride_w,
                              .ph = l->pad_h, .pw = l->pad_w, .sx = x->stride_n, .sy = y->stride_n };
    return g;
}

enum dse_status dse_cuda_maxpool_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    DSE_CUDA_TRY(cx, n, dse_cuk_maxpool_fwd(STREAM(cx), pool_of(n), n->in[0]->data, n->out->data, n->st.argmax));
    return DSE_OK;
}

enum dse_status dse_cuda_maxpool_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    if (!n->in[0]->grad) return DSE_OK;
    DSE_CUDA_TRY(cx, n, dse_cuk_maxpool_bwd(STREAM(cx), pool_of(n), n->out->grad, n->st.argmax, n->in[0]->grad));
    return DSE_OK;
}

enum dse_status dse_cuda_avgpool_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    DSE_CUDA_TRY(cx, n, dse_cuk_avgpool_fwd(STREAM(cx), pool_of(n), n->in[0]->data, n->out->data));
    return DSE_OK;
}

enum dse_status dse_cuda_avgpool_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    if (!n->in[0]->grad) return DSE_OK;
    DSE_CUDA_TRY(cx, n, dse_cuk_avgpool_bwd(STREAM(cx), pool_of(n), n->out->grad, n->in[0]->grad));
    return DSE_OK;
}

/* ---- relu (ours: cuDNN's activation kernels were 1.5x slower on concat views) --------- */

enum dse_status dse_cuda_relu_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    DSE_CUDA_TRY(cx, n, dse_cuk_relu_fwd(STREAM(cx), x->data, x->stride_n, y->data, y->stride_n, x->n,
                                         dse_tensor_image(x)));
    return DSE_OK;
}

/* dx (+)= dy where y > 0; in place (x, y share data and grad) dL/dy turns into dL/dx. */
enum dse_status dse_cuda_relu_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    if (!x->grad) return DSE_OK;
    DSE_CUDA_TRY(cx, n, dse_cuk_relu_bwd(STREAM(cx), y->data, y->grad, y->stride_n, x->grad, x->stride_n, x->n,
                                         dse_tensor_image(x), dse_cuda_in_place(n)));
    return DSE_OK;
}

/* ---- dropout --------------------------------------------------------------------------- */

static float keep_scale(const struct dse_node *n) { return 1.0f / (1.0f - n->layer->dropout_ratio); }

/* y = x, image by image (strided). */
static enum dse_status copy_tensor(struct dse_cuda_ctx *cx, const struct dse_node *n, float *dst, int64_t sd,
                                   const float *src, int64_t ss, const struct dse_tensor *shape) {
    DSE_CUDA_TRY(cx, n, cudaMemcpy2DAsync(dst, (size_t)sd * sizeof(float), src, (size_t)ss * sizeof(float),
                                          (size_t)dse_tensor_image(shape) * sizeof(float), (size_t)shape->n,
                                          cudaMemcpyDeviceToDevice, STREAM(cx)));
    return DSE_OK;
}

/* Training: the mask takes one draw per value, in value order, from where the CPU
 * kernel's sequential draws would be (dse_pcg32_advance), and the host generator then
 * skips past them: the CPU and the GPU make the same mask from the same generator state. */
enum dse_status dse_cuda_dropout_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const float p = n->layer->dropout_ratio;
    if (!n->training || p == 0.0f)
        return dse_cuda_in_place(n) ? DSE_OK : copy_tensor(cx, n, y->data, y->stride_n, x->data, x->stride_n, x);
    DSE_ASSERT(n->st.mask);
    struct dse_pcg32 *r = cx->dropout_rng;
    const uint32_t threshold = (uint32_t)((double)p * 4294967296.0);
    const int64_t count = dse_tensor_count(x);
    DSE_CUDA_TRY(cx, n, dse_cuk_dropout_fwd(STREAM(cx), x->data, x->stride_n, y->data, y->stride_n, n->st.mask, x->n,
                                            dse_tensor_image(x), threshold, keep_scale(n), r->state, r->inc));
    r->state = dse_pcg32_advance(r->state, r->inc, (uint64_t)count);
    return DSE_OK;
}

enum dse_status dse_cuda_dropout_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    if (!x->grad) return DSE_OK;
    const int in_place = dse_cuda_in_place(n);
    const int masked = n->training && n->layer->dropout_ratio != 0.0f;
    if (in_place && !masked) return DSE_OK; /* identity */
    DSE_CUDA_TRY(cx, n, dse_cuk_dropout_bwd(STREAM(cx), y->grad, y->stride_n, x->grad, x->stride_n, n->st.mask, x->n,
                                            dse_tensor_image(x), masked ? keep_scale(n) : 1.0f, masked, in_place));
    return DSE_OK;
}

/* ---- concat ---------------------------------------------------------------------------- */

/* 1 if p (an input's data or grad) is the output's q at offset off with the output's
 * image stride: a view, nothing to move (engine/cpu/concat.c). */
static int is_view(const float *p, const float *q, const struct dse_tensor *in, const struct dse_tensor *y,
                   int64_t off) {
    return q && p == q + off && in->stride_n == y->stride_n;
}

enum dse_status dse_cuda_concat_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *y = n->out;
    const int64_t HW = (int64_t)y->h * y->w;
    int64_t off = 0;
    for (int t = 0; t < n->n_in; t++) {
        const struct dse_tensor *x = n->in[t];
        if (!is_view(x->data, y->data, x, y, off)) {
            enum dse_status st = copy_tensor(cx, n, y->data + off, y->stride_n, x->data, x->stride_n, x);
            if (st) return st;
            cx->stats.concat_copy_bytes += dse_tensor_count(x) * (int64_t)sizeof(float);
        }
        off += x->c * HW;
    }
    return DSE_OK;
}

enum dse_status dse_cuda_concat_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *y = n->out;
    const int64_t HW = (int64_t)y->h * y->w;
    int64_t off = 0;
    for (int t = 0; t < n->n_in; t++) {
        const struct dse_tensor *x = n->in[t];
        if (x->grad && !is_view(x->grad, y->grad, x, y, off)) {
            DSE_CUDA_TRY(cx, n, dse_cuk_add(STREAM(cx), x->n, dse_tensor_image(x), y->grad + off, y->stride_n, x->grad,
                                            x->stride_n));
            cx->stats.concat_copy_bytes += dse_tensor_count(x) * (int64_t)sizeof(float);
        }
        off += x->c * HW;
    }
    return DSE_OK;
}

/* ---- eltwise add ------------------------------------------------------------------------ */

_Static_assert(DSE_CUK_MAX_IN >= DSE_MAX_INPUTS, "an eltwise's inputs pass as one kernel argument");

enum dse_status dse_cuda_eltwise_add_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    struct dse_cuk_inputs in;
    memset(&in, 0, sizeof in);
    DSE_ASSERT(n->n_in <= DSE_CUK_MAX_IN);
    for (int t = 0; t < n->n_in; t++) in.x[t] = n->in[t]->data, in.sx[t] = n->in[t]->stride_n;
    in.count = n->n_in;
    DSE_CUDA_TRY(cx, n, dse_cuk_eltwise_sum(STREAM(cx), in, n->out->n, dse_tensor_image(n->out), n->out->data,
                                            n->out->stride_n));
    return DSE_OK;
}

enum dse_status dse_cuda_eltwise_add_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *y = n->out;
    for (int t = 0; t < n->n_in; t++) {
        struct dse_tensor *x = n->in[t];
        if (x->grad)
            DSE_CUDA_TRY(cx, n, dse_cuk_add(STREAM(cx), y->n, dse_tensor_image(y), y->grad, y->stride_n, x->grad,
                                            x->stride_n));
    }
    return DSE_OK;
}

/* ---- fc (cuBLAS) ----------------------------------------------------------------------- */
/* Row-major [R][C] with leading dimension ld is column-major C x R: x [N][D] is X (D x N,
 * ld sx), w [K][D] is W (D x K, ld D), y [N][K] is Y (K x N, ld sy). Then
 *   y = x w^T    ->  Y  = W^T X       (gemm T, N:  m K, n N, k D)
 *   dw += dy^T x ->  dW += X dY^T     (gemm N, T:  m D, n K, k N)
 *   dx += dy w   ->  dX += W dY       (gemm N, N:  m D, n N, k K) */

/* Where both fc directions begin: the sizes in cuBLAS's ints (x [N][D], y [N][K], image
 * strides sx, sy) and the handle; then the check that the strides fit and the math mode. */
struct fc_call {
    int            N, K, D, sx, sy;
    cublasHandle_t h;
};

static enum dse_status fc_begin(struct dse_cuda_ctx *cx, const struct dse_node *n, struct fc_call *f) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    f->N = x->n, f->K = y->c, f->D = (int)dse_tensor_image(x);
    f->sx = (int)x->stride_n, f->sy = (int)y->stride_n;
    f->h = cx->impl->cublas;
    if (x->stride_n > INT32_MAX || y->stride_n > INT32_MAX)
        return dse_cuda_fail(cx, n, DSE_ERR_UNSUPPORTED, "image stride too large for cuBLAS's int");
    const cublasMath_t mode = cx->math == DSE_CUDA_MATH_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
    DSE_CUBLAS_TRY(cx, n, DSE_CUBLAS(cx).cublasSetMathMode(cx->impl->cublas, mode));
    return DSE_OK;
}

/* y and dy as [N, K, 1, 1] and the bias as [1, K, 1, 1], for cuDNN's bias calls. */
static enum dse_status fc_bias_descs(struct dse_cuda_ctx *cx, const struct dse_node *n, struct dse_cuda_node *d) {
    const int K = n->out->c;
    enum dse_status st = dse_cuda_desc4d(cx, n, d->y, n->out->n, K, 1, 1, n->out->stride_n);
    return st ? st : dse_cuda_desc4d(cx, n, d->b, 1, K, 1, 1, K);
}

enum dse_status dse_cuda_fc_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    struct fc_call f;
    enum dse_status st = fc_begin(cx, n, &f);
    if (st) return st;
    DSE_CUBLAS_TRY(cx, n, DSE_CUBLAS(cx).cublasSgemm_v2(f.h, CUBLAS_OP_T, CUBLAS_OP_N, f.K, f.N, f.D,
                                                        &dse_cuda_alpha1, n->weight->data, f.D, x->data, f.sx,
                                                        &dse_cuda_beta0, y->data, f.sy));
    if (n->bias) {
        struct dse_cuda_node *d = dse_cuda_dev(n);
        if ((st = fc_bias_descs(cx, n, d))) return st;
        DSE_CUDNN_TRY(cx, n, cudnnAddTensor(cx->impl->cudnn, &dse_cuda_alpha1, d->b, n->bias->data, &dse_cuda_alpha1,
                                            d->y, y->data));
    }
    return DSE_OK;
}

enum dse_status dse_cuda_fc_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    struct fc_call f;
    enum dse_status st = fc_begin(cx, n, &f);
    if (st) return st;
    if (n->weight->grad)
        DSE_CUBLAS_TRY(cx, n, DSE_CUBLAS(cx).cublasSgemm_v2(f.h, CUBLAS_OP_N, CUBLAS_OP_T, f.D, f.K, f.N,
                                                            &dse_cuda_alpha1, x->data, f.sx, y->grad, f.sy,
                                                            &dse_cuda_alpha1, n->weight->grad, f.D));
    if (n->bias && n->bias->grad) {
        struct dse_cuda_node *d = dse_cuda_dev(n);
        if ((st = fc_bias_descs(cx, n, d))) return st;
        DSE_CUDNN_TRY(cx, n, cudnnConvolutionBackwardBias(cx->impl->cudnn, &dse_cuda_alpha1, d->y, y->grad,
                                                          &dse_cuda_alpha1, d->b, n->bias->grad));
    }
    if (x->grad)
        DSE_CUBLAS_TRY(cx, n, DSE_CUBLAS(cx).cublasSgemm_v2(f.h, CUBLAS_OP_N, CUBLAS_OP_N, f.D, f.N, f.K,
                                                            &dse_cuda_alpha1, n->weight->data, f.D, y->grad, f.sy,
                                                            &dse_cuda_alpha1, x->grad, f.sx));
    return DSE_OK;
}

/* ---- softmax cross-entropy ----------------------------------------------------------------- */

/* Labels are host memory (the trainer's), checked here with the CPU's message, then
 * copied next to the node's state; probabilities and loss by our kernels, one block a
 * row and one for the mean (cuDNN's softmax and a one-block loss kernel had taken 0.155
 * ms on SqueezeNet v1.0's 64 x 1000 logits). The row terms go to the ctx workspace. */
enum dse_status dse_cuda_softmax_xent_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0];
    struct dse_cuda_node *d = dse_cuda_dev(n);
    const int N = x->n, K = x->c;
    DSE_ASSERT(n->st.prob && n->labels && d->labels);
    for (int i = 0; i < N; i++)
        if (n->labels[i] < 0 || n->labels[i] >= K)
            return dse_cuda_fail(cx, n, DSE_ERR_CONFIG, "label %d of image %d is out of range; expected 0 to %d",
                                 n->labels[i], i, K - 1);
    DSE_CUDA_TRY(cx, n, cudaMemcpyAsync(d->labels, n->labels, (size_t)N * sizeof(int32_t), cudaMemcpyHostToDevice,
                                        STREAM(cx)));
    void *term = NULL;
    enum dse_status st = dse_cuda_workspace(cx, n, (size_t)N * sizeof(double), &term);
    if (st) return st;
    DSE_CUDA_TRY(cx, n, dse_cuk_softmax_xent_fwd(STREAM(cx), x->data, x->stride_n, N, K, d->labels, n->st.prob,
                                                 term, n->out->data));
    return DSE_OK;
}

enum dse_status dse_cuda_softmax_xent_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0];
    if (!x->grad) return DSE_OK;
    DSE_CUDA_TRY(cx, n, dse_cuk_xent_bwd(STREAM(cx), n->st.prob, dse_cuda_dev(n)->labels, x->n, x->c, x->grad,
                                         x->stride_n));
    return DSE_OK;
}

/* ---- batchnorm, scale ------------------------------------------------------------------------ */

enum dse_status dse_cuda_batchnorm_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int64_t HW = (int64_t)x->h * x->w;
    float *saved = dse_cuda_in_place(n) ? n->st.saved : NULL; /* x_hat, for backward */
    DSE_ASSERT(n->st.mean && (!dse_cuda_in_place(n) || saved));
    DSE_CUDA_TRY(cx, n, dse_cuk_bn_stats(STREAM(cx), x->data, x->stride_n, x->n, x->c, HW, n->training,
                                         n->run_mean->data, n->run_var->data, n->bn_momentum, n->bn_eps, n->st.mean,
                                         n->st.invstd));
    DSE_CUDA_TRY(cx, n, dse_cuk_bn_apply(STREAM(cx), x->data, x->stride_n, y->data, y->stride_n, x->n, x->c, HW,
                                         n->st.mean, n->st.invstd, n->weight ? n->weight->data : NULL,
                                         n->bias ? n->bias->data : NULL, saved));
    return DSE_OK;
}

enum dse_status dse_cuda_batchnorm_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int64_t HW = (int64_t)x->h * x->w;
    const int in_place = dse_cuda_in_place(n);
    float *dgamma = n->weight ? n->weight->grad : NULL, *dbeta = n->bias ? n->bias->grad : NULL;
    if (!x->grad && !dgamma && !dbeta) return DSE_OK;
    const float *saved = in_place ? n->st.saved : NULL;
    float *ab = dse_cuda_dev(n)->ab;
    DSE_CUDA_TRY(cx, n, dse_cuk_bn_bwd_reduce(STREAM(cx), y->grad, y->stride_n, x->data, x->stride_n, saved, x->n,
                                              x->c, HW, n->st.mean, n->st.invstd, dgamma, dbeta, ab, n->training));
    if (x->grad)
        DSE_CUDA_TRY(cx, n, dse_cuk_bn_bwd_apply(STREAM(cx), y->grad, y->stride_n, x->data, x->stride_n, saved,
                                                 x->grad, x->n, x->c, HW, n->st.mean, n->st.invstd,
                                                 n->weight ? n->weight->data : NULL, ab, in_place));
    return DSE_OK;
}

enum dse_status dse_cuda_scale_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    float *saved = dse_cuda_in_place(n) ? n->st.saved : NULL; /* x, for backward */
    DSE_ASSERT(!dse_cuda_in_place(n) || saved);
    DSE_CUDA_TRY(cx, n, dse_cuk_scale_fwd(STREAM(cx), x->data, x->stride_n, y->data, y->stride_n, x->n, x->c,
                                          (int64_t)x->h * x->w, n->weight->data, n->bias ? n->bias->data : NULL,
                                          saved));
    return DSE_OK;
}

/* Parameter gradients first: in place, dx overwrites dy. */
enum dse_status dse_cuda_scale_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int64_t HW = (int64_t)x->h * x->w;
    const int in_place = dse_cuda_in_place(n);
    float *dg = n->weight->grad, *db = n->bias ? n->bias->grad : NULL;
    if (dg || db)
        DSE_CUDA_TRY(cx, n, dse_cuk_scale_bwd_params(STREAM(cx), y->grad, y->stride_n, x->data, x->stride_n,
                                                     in_place ? n->st.saved : NULL, x->n, x->c, HW, dg, db));
    if (x->grad)
        DSE_CUDA_TRY(cx, n, dse_cuk_scale_bwd_data(STREAM(cx), y->grad, y->stride_n, x->grad, x->stride_n, x->n,
                                                   x->c, HW, n->weight->data, in_place));
    return DSE_OK;
}

/* ---- lrn (our kernel, engine/cpu/lrn.c's arithmetic; the scale kept in st.saved) -------- */

static struct dse_cuk_lrn lrn_of(const struct dse_node *n) {
    const struct dse_layer *l = n->layer;
    return (struct dse_cuk_lrn){ .size = l->lrn_size, .alpha = l->lrn_alpha, .beta = l->lrn_beta, .k = l->lrn_k };
}

enum dse_status dse_cuda_lrn_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    DSE_ASSERT(n->st.saved);
    DSE_CUDA_TRY(cx, n, dse_cuk_lrn_fwd(STREAM(cx), x->data, x->stride_n, y->data, y->stride_n, n->st.saved, x->n,
                                        x->c, (int64_t)x->h * x->w, lrn_of(n)));
    return DSE_OK;
}

enum dse_status dse_cuda_lrn_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    if (!x->grad) return DSE_OK;
    DSE_CUDA_TRY(cx, n, dse_cuk_lrn_bwd(STREAM(cx), x->data, x->stride_n, y->data, y->grad, y->stride_n, n->st.saved,
                                        x->grad, x->n, x->c, (int64_t)x->h * x->w, lrn_of(n)));
    return DSE_OK;
}

/* ---- slice, flatten, reshape: values moved, strided (engine/cpu/lrn.c) ------------------- */

enum dse_status dse_cuda_slice_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int64_t off = (int64_t)dse_node_slice_begin(n) * x->h * x->w;
    return copy_tensor(cx, n, y->data, y->stride_n, x->data + off, x->stride_n, y);
}

enum dse_status dse_cuda_slice_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    if (!x->grad) return DSE_OK;
    const int64_t off = (int64_t)dse_node_slice_begin(n) * x->h * x->w;
    DSE_CUDA_TRY(cx, n, dse_cuk_add(STREAM(cx), y->n, dse_tensor_image(y), y->grad, y->stride_n, x->grad + off,
                                    x->stride_n));
    return DSE_OK;
}

/* In place (the model's view) nothing moves; a tensor of its own: copy forward, add backward. */
static enum dse_status view_move(struct dse_cuda_ctx *cx, struct dse_node *n, int bwd) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    if (dse_cuda_in_place(n) || (bwd && !x->grad)) return DSE_OK;
    if (!bwd) return copy_tensor(cx, n, y->data, y->stride_n, x->data, x->stride_n, x);
    DSE_CUDA_TRY(cx, n, dse_cuk_add(STREAM(cx), x->n, dse_tensor_image(x), y->grad, y->stride_n, x->grad, x->stride_n));
    return DSE_OK;
}

enum dse_status dse_cuda_flatten_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) { return view_move(cx, n, 0); }
enum dse_status dse_cuda_flatten_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) { return view_move(cx, n, 1); }
enum dse_status dse_cuda_reshape_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) { return view_move(cx, n, 0); }
enum dse_status dse_cuda_reshape_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) { return view_move(cx, n, 1); }
