/* kernels.h: the CUDA kernels that no cuDNN or cuBLAS call covers (engine/cuda/kernels.cu),
 * as plain C launchers the host code (engine/cuda/ops.c) calls: pooling with Caffe's
 * windows, dropout from the PCG32 stream, eltwise sums, the loss, batchnorm and scale,
 * SGD, the non-finite check. Each queues its work on `s` and returns cudaGetLastError()
 * (a launch failure), never waiting. Layouts and arithmetic mirror engine/cpu/ line for
 * line; the comments there are the contract. Every tensor is [n, img] with its own image
 * stride (engine.h: views differ only in stride_n). Values within one image are indexed
 * in 32 bits: a launcher given an image of 2^31 values or more returns
 * cudaErrorInvalidValue. */
#ifndef DSE_ENGINE_CUDA_KERNELS_H
#define DSE_ENGINE_CUDA_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "engine/kernels_shared.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y[i][j] += x[i][j] for n images of img values. */
cudaError_t dse_cuk_add(cudaStream_t s, int n, int64_t img, const float *x, int64_t sx, float *y, int64_t sy);

/* y = x[0] + x[1] + ... (added in input order, as the CPU does). */
#define DSE_CUK_MAX_IN 64 /* DSE_MAX_INPUTS (engine/cuda/ops.c checks): 1 KB of kernel arguments, of 4 KB */
struct dse_cuk_inputs {
    const float *x[DSE_CUK_MAX_IN];
    int64_t      sx[DSE_CUK_MAX_IN];
    int          count;
};
cudaError_t dse_cuk_eltwise_sum(cudaStream_t s, struct dse_cuk_inputs in, int n, int64_t img, float *y, int64_t sy);

/* Training dropout: mask[e] = draw e >= threshold, draws continuing the PCG32 stream at
 * (state, inc) in value order e = i * img + j; y = mask ? x * scale : 0 (may be in place). */
cudaError_t dse_cuk_dropout_fwd(cudaStream_t s, const float *x, int64_t sx, float *y, int64_t sy, uint8_t *mask,
                                int n, int64_t img, uint32_t threshold, float scale, uint64_t state, uint64_t inc);
/* masked: dx (+)= mask ? dy * scale : 0 (overwrite in place); unmasked: dx += dy. */
cudaError_t dse_cuk_dropout_bwd(cudaStream_t s, const float *dy, int64_t sy, float *dx, int64_t sx,
                                const uint8_t *mask, int n, int64_t img, float scale, int masked, int in_place);

/* relu over n images of img values: y = x > 0 ? x : 0 (may be in place). */
cudaError_t dse_cuk_relu_fwd(cudaStream_t s, const float *x, int64_t sx, float *y, int64_t sy, int n, int64_t img);
/* dx = (y > 0 ? dy : 0) in place (dx is dy's memory), dx += that otherwise. */
cudaError_t dse_cuk_relu_bwd(cudaStream_t s, const float *y, const float *dy, int64_t sy, float *dx, int64_t sx,
                             int n, int64_t img, int in_place);

/* Pooling geometry: x [N, C, H, W] (image stride sx), y [N, C, P, Q] (stride sy). */
struct dse_cuk_pool {
    int     N, C, H, W, P, Q;
    int     kh, kw, sh, sw, ph, pw;
    int64_t sx, sy;
};
/* y = the window's maximum, the first of equal maxima (row by row) in argmax [N, C, P, Q]
 * (packed); an empty window: 0 and -1. */
cudaError_t dse_cuk_maxpool_fwd(cudaStream_t s, struct dse_cuk_pool g, const float *x, float *y, int32_t *argmax);
/* dx += dy at argmax; each dx value gathers the outputs that chose it in (p, q) order,
 * the order of the CPU's scatter: the CPU's bits. dx values no output chose are neither
 * read nor written. */
cudaError_t dse_cuk_maxpool_bwd(cudaStream_t s, struct dse_cuk_pool g, const float *dy, const int32_t *argmax,
                                float *dx);
/* y = the window's sum (row by row) / its size clipped to the padded input; dx += dy /
 * that size, gathered per input in (p, q) order: the CPU's bits. */
cudaError_t dse_cuk_avgpool_fwd(cudaStream_t s, struct dse_cuk_pool g, const float *x, float *y);
cudaError_t dse_cuk_avgpool_bwd(cudaStream_t s, struct dse_cuk_pool g, const float *dy, float *dx);

/* Softmax and its cross-entropy over the N rows of x [N, K] (stride sx), as the CPU
 * computes them (engine/cpu/softmax.c): m = max, s = sum of expf(x - m) in double,
 * prob [N, K] = expf(x - m) * (float)(1 / s), *loss = the mean over the rows of
 * log(s) - (x[label] - m), in double, summed in a fixed order. Two launches (one block a
 * row, then one block); term: device scratch of N doubles. Labels checked by the caller. */
cudaError_t dse_cuk_softmax_xent_fwd(cudaStream_t s, const float *x, int64_t sx, int N, int K, const int32_t *labels,
                                     float *prob, double *term, float *loss);
/* dx[i][k] += (prob[i][k] - [k == label_i]) / N. */
cudaError_t dse_cuk_xent_bwd(cudaStream_t s, const float *prob, const int32_t *labels, int N, int K, float *dx,
                             int64_t sx);

/* Batchnorm over x [N, C, HW]: per channel mean and invstd (batch statistics in
 * training, updating the running ones; running ones in inference). */
cudaError_t dse_cuk_bn_stats(cudaStream_t s, const float *x, int64_t sx, int N, int C, int64_t HW, int training,
                             float *rmean, float *rvar, float momentum, float eps, float *mean, float *invstd);
/* y = (x - mean) invstd gamma + beta (gamma, beta may be NULL); saved (if non-NULL) gets
 * x_hat [N, C, HW]. */
cudaError_t dse_cuk_bn_apply(cudaStream_t s, const float *x, int64_t sx, float *y, int64_t sy, int N, int C,
                             int64_t HW, const float *mean, const float *invstd, const float *gamma,
                             const float *beta, float *saved);
/* Per channel sums of dy and dy x_hat (x_hat from saved if non-NULL): dgamma += and
 * dbeta += them (each may be NULL); ab[c] = mean(dy), ab[C + c] = mean(dy x_hat) in
 * training, 0 in inference. */
cudaError_t dse_cuk_bn_bwd_reduce(cudaStream_t s, const float *dy, int64_t sy, const float *x, int64_t sx,
                                  const float *saved, int N, int C, int64_t HW, const float *mean,
                                  const float *invstd, float *dgamma, float *dbeta, float *ab, int training);
/* dx (+)= gamma invstd (dy - ab[c] - x_hat ab[C + c]); overwrite in place. */
cudaError_t dse_cuk_bn_bwd_apply(cudaStream_t s, const float *dy, int64_t sy, const float *x, int64_t sx,
                                 const float *saved, float *dx, int N, int C, int64_t HW, const float *mean,
                                 const float *invstd, const float *gamma, const float *ab, int in_place);

/* lrn (engine/cpu/lrn.c, line for line): y = x * scale^-beta with the scale kept [N, C, HW]
 * contiguous; backward adds into dx. x and dx share the image stride sx, y and dy sy. */
struct dse_cuk_lrn {
    int   size;
    float alpha, beta, k;
};
cudaError_t dse_cuk_lrn_fwd(cudaStream_t s, const float *x, int64_t sx, float *y, int64_t sy, float *scale, int N,
                            int C, int64_t HW, struct dse_cuk_lrn p);
cudaError_t dse_cuk_lrn_bwd(cudaStream_t s, const float *x, int64_t sx, const float *y, const float *dy, int64_t sy,
                            const float *scale, float *dx, int N, int C, int64_t HW, struct dse_cuk_lrn p);
/* Scale: y = gamma[c] x + (beta[c] or 0); saved (if non-NULL) gets x [N, C, HW]. */
cudaError_t dse_cuk_scale_fwd(cudaStream_t s, const float *x, int64_t sx, float *y, int64_t sy, int N, int C,
                              int64_t HW, const float *gamma, const float *beta, float *saved);
/* dgamma[c] += sum dy x, dbeta[c] += sum dy (x from saved if non-NULL; either may be NULL). */
cudaError_t dse_cuk_scale_bwd_params(cudaStream_t s, const float *dy, int64_t sy, const float *x, int64_t sx,
                                     const float *saved, int N, int C, int64_t HW, float *dgamma, float *dbeta);
/* dx (+)= dy gamma[c]; overwrite in place. */
cudaError_t dse_cuk_scale_bwd_data(cudaStream_t s, const float *dy, int64_t sy, float *dx, int64_t sx, int N,
                                   int C, int64_t HW, const float *gamma, int in_place);

/* Conv bias: y[i][c][j] += b[c] over y [N, C, HW] (image stride sy); relu: then
 * y = y > 0 ? y : 0 in the same pass (the conv's fused ReLU, dse_node.relu_out). */
cudaError_t dse_cuk_bias_fwd(cudaStream_t s, float *y, int64_t sy, int N, int C, int64_t HW, const float *b,
                             int relu);
/* Conv bias gradient: db[c] += sum over i, j of dy[i][c][j], in double, in a fixed order
 * (partial sums over runs of images, then their sum): the same bits every run. part: device
 * scratch of dse_cuk_bias_bwd_part(N, C) doubles. relu_y (the fused ReLU's output y, same
 * layout as dy, or NULL): first dy = y > 0 ? dy : 0 in place, in the same pass, and the
 * sum is of the masked values (the same bits as the ReLU's backward, then this). */
int64_t     dse_cuk_bias_bwd_part(int N, int C);
cudaError_t dse_cuk_bias_bwd(cudaStream_t s, float *dy, int64_t sy, int N, int C, int64_t HW, float *db,
                             double *part, const float *relu_y);

/* Mixed precision (conv in FP16 or BF16, engine/cuda/conv.c, "mixed precision"). kind: 0 = FP16 (__half),
 * 1 = BF16 (__nv_bfloat16); a 16-bit buffer is packed (image stride = img).
 * to16: h[i][j] = round(scale x[i][j]) for n images of img values (x image stride sx). */
cudaError_t dse_cuk_to16(cudaStream_t s, int kind, const float *x, int64_t sx, void *h, int n, int64_t img,
                         float scale);
/* from16, forward: y[i][c][j] = float(h[i][c][j]) + (bias ? bias[c] : 0) over [N, C, HW]
 * (y image stride sy); relu: then y = y > 0 ? y : 0 (the conv's fused ReLU). */
cudaError_t dse_cuk_from16_bias(cudaStream_t s, int kind, const void *h, float *y, int64_t sy, int N, int C,
                                int64_t HW, const float *bias, int relu);
/* from16, backward: g[i][j] += float(h[i][j]) * inv_scale; *flag = 1 where that is not
 * finite (the value is still added: the step will be skipped). */
cudaError_t dse_cuk_from16_acc(cudaStream_t s, int kind, const void *h, float *g, int64_t sg, int n, int64_t img,
                               float inv_scale, int *flag);

/* v = momentum v + lr (gscale g + wd w); w -= v, for n values. */
cudaError_t dse_cuk_sgd(cudaStream_t s, float *w, const float *g, float *v, int64_t n, float lr, float momentum,
                        float wd, float gscale);
/* part[DSE_SUMSQ_BLOCKS] = the sum of the squares of n values, in double and a fixed order;
 * part[0..DSE_SUMSQ_BLOCKS-1] are partial sums. part holds DSE_SUMSQ_BLOCKS + 1 doubles. */
#define DSE_SUMSQ_BLOCKS 256
cudaError_t dse_cuk_sumsq(cudaStream_t s, const float *p, int64_t n, double *part);
/* *flag = 1 if any of n values is NaN or infinite (flag is not cleared). */
cudaError_t dse_cuk_nonfinite(cudaStream_t s, const float *p, int64_t n, int *flag);

/* ---- steps that do not wait (engine/cuda/step.c) ---------------------------------------- */
/* The device side of struct dse_step_tally, plus this step's gradient factor. */
struct dse_cuk_tally {
    double    loss_sum;
    long long steps, diverged_at, clipped;
    float     gscale; /* the next tallied SGD step's factor on the gradients */
    int       unused;
};
/* *t = { 0, 0, -1, 0, 1 }. */
cudaError_t dse_cuk_tally_reset(cudaStream_t s, struct dse_cuk_tally *t);
/* t->loss_sum += *loss; the first non-finite one sets t->diverged_at = t->steps; steps++. */
cudaError_t dse_cuk_tally_loss(cudaStream_t s, const float *loss, struct dse_cuk_tally *t);
/* t->gscale = clip / sqrt(*sumsq) when sumsq is non-NULL, clip > 0 and the norm is finite
 * and above clip (t->clipped++); else 1. */
cudaError_t dse_cuk_tally_scale(cudaStream_t s, const double *sumsq, double clip, struct dse_cuk_tally *t);
/* dse_cuk_sgd with gscale = t->gscale; nothing when t->diverged_at >= 0. */
cudaError_t dse_cuk_sgd_tallied(cudaStream_t s, float *w, const float *g, float *v, int64_t n, float lr,
                                float momentum, float wd, const struct dse_cuk_tally *t);

#ifdef __cplusplus
}
#endif

#endif
