/* kernels.cu: the CUDA backend's own kernels, for what cuDNN and cuBLAS do not cover or
 * cannot match: Caffe's pooling windows (ceil rounding, clipped averages, first-of-equal
 * max), dropout masks from the CPU's PCG32 stream, eltwise sums, the loss, batchnorm and
 * scale, SGD. Interface and contracts: engine/cuda/kernels.h. Arithmetic mirrors
 * engine/cpu/ operation for operation; built with --fmad=false so no multiply-add is
 * fused where the CPU rounds twice. Reductions run one block per channel (or one block)
 * in double, in a fixed order: the same bits every run. */
#include "engine/cuda/kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define THREADS 256

/* Blocks for a grid-stride loop over `count` items. */
static unsigned blocks_for(int64_t count) {
    int64_t b = (count + THREADS - 1) / THREADS;
    if (b < 1) b = 1;
    if (b > 65535 * 16) b = 65535 * 16;
    return (unsigned)b;
}

#define GRID_LOOP(e, count) \
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < (count); \
         e += (int64_t)gridDim.x * blockDim.x)

/* Sum v over the block (THREADS threads) in a fixed tree order; every thread gets it. */
__device__ static double block_sum(double v, double *sh) {
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half) sh[threadIdx.x] += sh[threadIdx.x + half];
        __syncthreads();
    }
    double r = sh[0];
    __syncthreads();
    return r;
}

/* ---- add, eltwise sum ----------------------------------------------------------------- */

__global__ static void k_add(int n, int64_t img, const float *x, int64_t sx, float *y, int64_t sy) {
    GRID_LOOP(e, (int64_t)n * img) {
        const int64_t i = e / img, j = e - i * img;
        y[i * sy + j] += x[i * sx + j];
    }
}

extern "C" cudaError_t dse_cuk_add(cudaStream_t s, int n, int64_t img, const float *x, int64_t sx, float *y,
                                   int64_t sy) {
    k_add<<<blocks_for((int64_t)n * img), THREADS, 0, s>>>(n, img, x, sx, y, sy);
    return cudaGetLastError();
}

__global__ static void k_eltwise_sum(struct dse_cuk_inputs in, int n, int64_t img, float *y, int64_t sy) {
    GRID_LOOP(e, (int64_t)n * img) {
        const int64_t i = e / img, j = e - i * img;
        float acc = in.x[0][i * in.sx[0] + j];
        for (int t = 1; t < in.count; t++) acc += in.x[t][i * in.sx[t] + j];
        y[i * sy + j] = acc;
    }
}

extern "C" cudaError_t dse_cuk_eltwise_sum(cudaStream_t s, struct dse_cuk_inputs in, int n, int64_t img, float *y,
                                           int64_t sy) {
    k_eltwise_sum<<<blocks_for((int64_t)n * img), THREADS, 0, s>>>(in, n, img, y, sy);
    return cudaGetLastError();
}

/* ---- dropout ----------------------------------------------------------------------- */

/* Each thread draws a run of CHUNK consecutive values: one jump-ahead, then steps. */
#define CHUNK 64

__global__ static void k_dropout_fwd(const float *x, int64_t sx, float *y, int64_t sy, uint8_t *mask, int n,
                                     int64_t img, uint32_t threshold, float scale, uint64_t state, uint64_t inc) {
    const int64_t count = (int64_t)n * img, chunks = (count + CHUNK - 1) / CHUNK;
    GRID_LOOP(k, chunks) {
        const int64_t e0 = k * CHUNK, e1 = e0 + CHUNK < count ? e0 + CHUNK : count;
        uint64_t st = dse_pcg32_advance(state, inc, (uint64_t)e0);
        for (int64_t e = e0; e < e1; e++) {
            const uint8_t keep = dse_pcg32_output(st) >= threshold;
            st = st * DSE_PCG32_MULT + inc;
            const int64_t i = e / img, j = e - i * img;
            const float v = x[i * sx + j] * scale;
            mask[e] = keep;
            y[i * sy + j] = keep ? v : 0.0f;
        }
    }
}

extern "C" cudaError_t dse_cuk_dropout_fwd(cudaStream_t s, const float *x, int64_t sx, float *y, int64_t sy,
                                           uint8_t *mask, int n, int64_t img, uint32_t threshold, float scale,
                                           uint64_t state, uint64_t inc) {
    const int64_t chunks = ((int64_t)n * img + CHUNK - 1) / CHUNK;
    k_dropout_fwd<<<blocks_for(chunks), THREADS, 0, s>>>(x, sx, y, sy, mask, n, img, threshold, scale, state, inc);
    return cudaGetLastError();
}

__global__ static void k_dropout_bwd(const float *dy, int64_t sy, float *dx, int64_t sx, const uint8_t *mask, int n,
                                     int64_t img, float scale, int masked, int in_place) {
    GRID_LOOP(e, (int64_t)n * img) {
        const int64_t i = e / img, j = e - i * img;
        const float d = dy[i * sy + j];
        if (!masked) {
            dx[i * sx + j] += d;
        } else {
            const float g = d * scale;
            const float v = mask[e] ? g : 0.0f;
            if (in_place)
                dx[i * sx + j] = v;
            else
                dx[i * sx + j] += v;
        }
    }
}

extern "C" cudaError_t dse_cuk_dropout_bwd(cudaStream_t s, const float *dy, int64_t sy, float *dx, int64_t sx,
                                           const uint8_t *mask, int n, int64_t img, float scale, int masked,
                                           int in_place) {
    k_dropout_bwd<<<blocks_for((int64_t)n * img), THREADS, 0, s>>>(dy, sy, dx, sx, mask, n, img, scale, masked,
                                                                   in_place);
    return cudaGetLastError();
}

/* ---- relu ----------------------------------------------------------------------------- */

/* Image i in blockIdx.y (grid-strided), its values in x-blocks; four at a time when every
 * image start is 16-byte aligned (V = 4), one at a time otherwise. */
template <int V>
__global__ static void k_relu_fwd(const float *x, int64_t sx, float *y, int64_t sy, int n, int64_t img) {
    for (int i = blockIdx.y; i < n; i += gridDim.y) {
        const float *xi = x + i * sx;
        float *yi = y + i * sy;
        for (int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * V; j < img;
             j += (int64_t)gridDim.x * blockDim.x * V) {
            if (V == 4 && j + 4 <= img) {
                float4 v = *(const float4 *)(xi + j);
                v.x = v.x > 0.0f ? v.x : 0.0f, v.y = v.y > 0.0f ? v.y : 0.0f;
                v.z = v.z > 0.0f ? v.z : 0.0f, v.w = v.w > 0.0f ? v.w : 0.0f;
                *(float4 *)(yi + j) = v;
            } else {
                for (int64_t k = j; k < j + V && k < img; k++) yi[k] = xi[k] > 0.0f ? xi[k] : 0.0f;
            }
        }
    }
}

template <int V>
__global__ static void k_relu_bwd(const float *y, const float *dy, int64_t sy, float *dx, int64_t sx, int n,
                                  int64_t img, int in_place) {
    for (int i = blockIdx.y; i < n; i += gridDim.y) {
        const float *yi = y + i * sy, *dyi = dy + i * sy;
        float *dxi = dx + i * sx;
        for (int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * V; j < img;
             j += (int64_t)gridDim.x * blockDim.x * V) {
            if (V == 4 && j + 4 <= img) {
                const float4 a = *(const float4 *)(yi + j), g = *(const float4 *)(dyi + j);
                float4 d = make_float4(a.x > 0.0f ? g.x : 0.0f, a.y > 0.0f ? g.y : 0.0f, a.z > 0.0f ? g.z : 0.0f,
                                       a.w > 0.0f ? g.w : 0.0f);
                if (!in_place) {
                    const float4 o = *(const float4 *)(dxi + j);
                    d.x = o.x + d.x, d.y = o.y + d.y, d.z = o.z + d.z, d.w = o.w + d.w;
                }
                *(float4 *)(dxi + j) = d;
            } else {
                for (int64_t k = j; k < j + V && k < img; k++) {
                    const float v = yi[k] > 0.0f ? dyi[k] : 0.0f;
                    dxi[k] = in_place ? v : dxi[k] + v;
                }
            }
        }
    }
}

static dim3 image_grid(int n, int64_t img, int v) {
    int64_t bx = (img + (int64_t)THREADS * v - 1) / ((int64_t)THREADS * v);
    if (bx > 1024) bx = 1024;
    if (bx < 1) bx = 1;
    return dim3((unsigned)bx, (unsigned)(n < 65535 ? (n < 1 ? 1 : n) : 65535));
}

/* 1 if every image of every pointer starts 16-byte aligned. */
static int aligned4(const void *a, int64_t sa, const void *b, int64_t sb, const void *c) {
    return (uintptr_t)a % 16 == 0 && (uintptr_t)b % 16 == 0 && (uintptr_t)c % 16 == 0 && sa % 4 == 0 &&
           sb % 4 == 0;
}

extern "C" cudaError_t dse_cuk_relu_fwd(cudaStream_t s, const float *x, int64_t sx, float *y, int64_t sy, int n,
                                        int64_t img) {
    if (aligned4(x, sx, y, sy, y))
        k_relu_fwd<4><<<image_grid(n, img, 4), THREADS, 0, s>>>(x, sx, y, sy, n, img);
    else
        k_relu_fwd<1><<<image_grid(n, img, 1), THREADS, 0, s>>>(x, sx, y, sy, n, img);
    return cudaGetLastError();
}

extern "C" cudaError_t dse_cuk_relu_bwd(cudaStream_t s, const float *y, const float *dy, int64_t sy, float *dx,
                                        int64_t sx, int n, int64_t img, int in_place) {
    if (aligned4(y, sy, dx, sx, dy))
        k_relu_bwd<4><<<image_grid(n, img, 4), THREADS, 0, s>>>(y, dy, sy, dx, sx, n, img, in_place);
    else
        k_relu_bwd<1><<<image_grid(n, img, 1), THREADS, 0, s>>>(y, dy, sy, dx, sx, n, img, in_place);
    return cudaGetLastError();
}

/* ---- pooling ----------------------------------------------------------------------- */

struct win {
    int h0, h1, hn, w0, w1, wn;
};

__device__ static struct win window(const struct dse_cuk_pool &g, int p, int q) {
    struct win w;
    dse_pool_bounds(p, g.kh, g.sh, g.ph, g.H, &w.h0, &w.h1, &w.hn);
    dse_pool_bounds(q, g.kw, g.sw, g.pw, g.W, &w.w0, &w.w1, &w.wn);
    return w;
}

__device__ static int empty(const struct win &w) {
    return w.h0 >= w.h1 || w.w0 >= w.w1 || w.hn <= 0 || w.wn <= 0;
}

/* Output positions p whose window (before clipping) can contain input row h. */
__device__ static void covering(int h, int k, int stride, int pad, int P, int *lo, int *hi) {
    const int a = h + pad - k;
    *lo = a < 0 ? 0 : a / stride + 1;
    int b = (h + pad) / stride;
    *hi = b < P - 1 ? b : P - 1;
}

__global__ static void k_maxpool_fwd(struct dse_cuk_pool g, const float *x, float *y, int32_t *argmax) {
    const int64_t PQ = (int64_t)g.P * g.Q;
    GRID_LOOP(e, (int64_t)g.N * g.C * PQ) {
        const int64_t nc = e / PQ, pq = e - nc * PQ;
        const int i = (int)(nc / g.C), c = (int)(nc % g.C), p = (int)(pq / g.Q), q = (int)(pq % g.Q);
        const float *xp = x + i * g.sx + (int64_t)c * g.H * g.W;
        float *yp = y + i * g.sy + (int64_t)c * PQ;
        const struct win w = window(g, p, q);
        if (empty(w)) {
            yp[pq] = 0.0f, argmax[e] = -1;
            continue;
        }
        int32_t arg = w.h0 * g.W + w.w0;
        float best = xp[arg];
        for (int h = w.h0; h < w.h1; h++)
            for (int v = w.w0; v < w.w1; v++) {
                const float val = xp[h * g.W + v];
                if (val > best) best = val, arg = h * g.W + v; /* the first of equal maxima wins */
            }
        yp[pq] = best;
        argmax[e] = arg;
    }
}

extern "C" cudaError_t dse_cuk_maxpool_fwd(cudaStream_t s, struct dse_cuk_pool g, const float *x, float *y,
                                           int32_t *argmax) {
    k_maxpool_fwd<<<blocks_for((int64_t)g.N * g.C * g.P * g.Q), THREADS, 0, s>>>(g, x, y, argmax);
    return cudaGetLastError();
}

/* One (image, channel) plane per blockIdx.y (grid-strided), its H x W inputs in x-blocks:
 * no 64-bit division per value. */
__global__ static void k_maxpool_bwd(struct dse_cuk_pool g, const float *dy, const int32_t *argmax, float *dx) {
    const int HW = g.H * g.W, PQ = g.P * g.Q;
    for (int64_t nc = blockIdx.y; nc < (int64_t)g.N * g.C; nc += gridDim.y) {
        const int i = (int)(nc / g.C), c = (int)(nc - (int64_t)i * g.C);
        const float *dyp = dy + i * g.sy + (int64_t)c * PQ;
        const int32_t *ap = argmax + nc * PQ;
        float *dxp = dx + i * g.sx + (int64_t)c * HW;
        for (int hw = blockIdx.x * blockDim.x + threadIdx.x; hw < HW; hw += gridDim.x * blockDim.x) {
            const int h = hw / g.W, v = hw - h * g.W;
            int p0, p1, q0, q1;
            covering(h, g.kh, g.sh, g.ph, g.P, &p0, &p1);
            covering(v, g.kw, g.sw, g.pw, g.Q, &q0, &q1);
            float acc = dxp[hw];
            for (int p = p0; p <= p1; p++)
                for (int q = q0; q <= q1; q++)
                    if (ap[p * g.Q + q] == hw) acc += dyp[p * g.Q + q];
            dxp[hw] = acc;
        }
    }
}

extern "C" cudaError_t dse_cuk_maxpool_bwd(cudaStream_t s, struct dse_cuk_pool g, const float *dy,
                                           const int32_t *argmax, float *dx) {
    k_maxpool_bwd<<<image_grid(g.N * g.C, (int64_t)g.H * g.W, 1), THREADS, 0, s>>>(g, dy, argmax, dx);
    return cudaGetLastError();
}

__global__ static void k_avgpool_fwd(struct dse_cuk_pool g, const float *x, float *y) {
    const int64_t PQ = (int64_t)g.P * g.Q;
    GRID_LOOP(e, (int64_t)g.N * g.C * PQ) {
        const int64_t nc = e / PQ, pq = e - nc * PQ;
        const int i = (int)(nc / g.C), c = (int)(nc % g.C), p = (int)(pq / g.Q), q = (int)(pq % g.Q);
        const float *xp = x + i * g.sx + (int64_t)c * g.H * g.W;
        const struct win w = window(g, p, q);
        float sum = 0.0f;
        for (int h = w.h0; h < w.h1; h++)
            for (int v = w.w0; v < w.w1; v++) sum += xp[h * g.W + v];
        y[i * g.sy + (int64_t)c * PQ + pq] = empty(w) ? 0.0f : sum / (float)(w.hn * w.wn);
    }
}

extern "C" cudaError_t dse_cuk_avgpool_fwd(cudaStream_t s, struct dse_cuk_pool g, const float *x, float *y) {
    k_avgpool_fwd<<<blocks_for((int64_t)g.N * g.C * g.P * g.Q), THREADS, 0, s>>>(g, x, y);
    return cudaGetLastError();
}

__global__ static void k_avgpool_bwd(struct dse_cuk_pool g, const float *dy, float *dx) {
    const int64_t HW = (int64_t)g.H * g.W, PQ = (int64_t)g.P * g.Q;
    GRID_LOOP(e, (int64_t)g.N * g.C * HW) {
        const int64_t nc = e / HW, hw = e - nc * HW;
        const int i = (int)(nc / g.C), c = (int)(nc % g.C), h = (int)(hw / g.W), v = (int)(hw % g.W);
        const float *dyp = dy + i * g.sy + (int64_t)c * PQ;
        int p0, p1, q0, q1;
        covering(h, g.kh, g.sh, g.ph, g.P, &p0, &p1);
        covering(v, g.kw, g.sw, g.pw, g.Q, &q0, &q1);
        float *d = dx + i * g.sx + (int64_t)c * HW + hw;
        float acc = *d;
        for (int p = p0; p <= p1; p++)
            for (int q = q0; q <= q1; q++) {
                const struct win w = window(g, p, q);
                if (empty(w) || h < w.h0 || h >= w.h1 || v < w.w0 || v >= w.w1) continue;
                acc += dyp[(int64_t)p * g.Q + q] / (float)(w.hn * w.wn);
            }
        *d = acc;
    }
}

extern "C" cudaError_t dse_cuk_avgpool_bwd(cudaStream_t s, struct dse_cuk_pool g, const float *dy, float *dx) {
    k_avgpool_bwd<<<blocks_for((int64_t)g.N * g.C * g.H * g.W), THREADS, 0, s>>>(g, dy, dx);
    return cudaGetLastError();
}

/* ---- softmax cross-entropy ------------------------------------------------------------ */

__global__ static void k_xent_fwd(const float *x, int64_t sx, int N, int K, const int32_t *labels, float *loss) {
    __shared__ double sh[THREADS];
    double acc = 0.0;
    for (int i = threadIdx.x; i < N; i += THREADS) {
        const float *xi = x + i * sx;
        float m = xi[0];
        for (int k = 1; k < K; k++) m = xi[k] > m ? xi[k] : m;
        double sum = 0.0;
        for (int k = 0; k < K; k++) sum += expf(xi[k] - m);
        acc += log(sum) - ((double)xi[labels[i]] - m);
    }
    const double total = block_sum(acc, sh);
    if (threadIdx.x == 0) *loss = (float)(total / N);
}

extern "C" cudaError_t dse_cuk_xent_fwd(cudaStream_t s, const float *x, int64_t sx, int N, int K,
                                        const int32_t *labels, float *loss) {
    k_xent_fwd<<<1, THREADS, 0, s>>>(x, sx, N, K, labels, loss);
    return cudaGetLastError();
}

__global__ static void k_xent_bwd(const float *prob, const int32_t *labels, int N, int K, float *dx, int64_t sx) {
    const float scale = 1.0f / (float)N;
    GRID_LOOP(e, (int64_t)N * K) {
        const int i = (int)(e / K), k = (int)(e % K);
        dx[i * sx + k] += (prob[e] - (k == labels[i] ? 1.0f : 0.0f)) * scale;
    }
}

extern "C" cudaError_t dse_cuk_xent_bwd(cudaStream_t s, const float *prob, const int32_t *labels, int N, int K,
                                        float *dx, int64_t sx) {
    k_xent_bwd<<<blocks_for((int64_t)N * K), THREADS, 0, s>>>(prob, labels, N, K, dx, sx);
    return cudaGetLastError();
}

/* ---- batchnorm ----------------------------------------------------------------------- */

/* One block per channel c: values x[i][c * HW + j]. */
__global__ static void k_bn_stats(const float *x, int64_t sx, int N, int C, int64_t HW, int training, float *rmean,
                                  float *rvar, float momentum, float eps, float *mean_out, float *invstd_out) {
    __shared__ double sh[THREADS];
    const int c = blockIdx.x;
    const int64_t M = (int64_t)N * HW;
    double mean, var;
    if (training) {
        double s = 0.0;
        for (int64_t e = threadIdx.x; e < M; e += THREADS) {
            const int64_t i = e / HW, j = e - i * HW;
            s += x[i * sx + c * HW + j];
        }
        mean = block_sum(s, sh) / (double)M;
        double s2 = 0.0;
        for (int64_t e = threadIdx.x; e < M; e += THREADS) {
            const int64_t i = e / HW, j = e - i * HW;
            const double d = x[i * sx + c * HW + j] - mean;
            s2 += d * d;
        }
        var = block_sum(s2, sh) / (double)M;
        if (threadIdx.x == 0) {
            const double mom = momentum;
            rmean[c] = (float)((1.0 - mom) * rmean[c] + mom * mean);
            rvar[c] = (float)((1.0 - mom) * rvar[c] + mom * (M > 1 ? var * (double)M / (double)(M - 1) : var));
        }
    } else {
        mean = rmean[c], var = rvar[c];
    }
    if (threadIdx.x == 0) {
        mean_out[c] = (float)mean;
        invstd_out[c] = (float)(1.0 / sqrt(var + eps));
    }
}

extern "C" cudaError_t dse_cuk_bn_stats(cudaStream_t s, const float *x, int64_t sx, int N, int C, int64_t HW,
                                        int training, float *rmean, float *rvar, float momentum, float eps,
                                        float *mean, float *invstd) {
    k_bn_stats<<<C, THREADS, 0, s>>>(x, sx, N, C, HW, training, rmean, rvar, momentum, eps, mean, invstd);
    return cudaGetLastError();
}

__global__ static void k_bn_apply(const float *x, int64_t sx, float *y, int64_t sy, int N, int C, int64_t HW,
                                  const float *mean, const float *invstd, const float *gamma, const float *beta,
                                  float *saved) {
    const int64_t img = (int64_t)C * HW;
    GRID_LOOP(e, (int64_t)N * img) {
        const int64_t i = e / img, j = e - i * img;
        const int c = (int)(j / HW);
        const float xh = (x[i * sx + j] - mean[c]) * invstd[c];
        if (saved) saved[e] = xh;
        const float g = gamma ? gamma[c] : 1.0f, b = beta ? beta[c] : 0.0f;
        y[i * sy + j] = xh * g + b;
    }
}

extern "C" cudaError_t dse_cuk_bn_apply(cudaStream_t s, const float *x, int64_t sx, float *y, int64_t sy, int N,
                                        int C, int64_t HW, const float *mean, const float *invstd,
                                        const float *gamma, const float *beta, float *saved) {
    k_bn_apply<<<blocks_for((int64_t)N * C * HW), THREADS, 0, s>>>(x, sx, y, sy, N, C, HW, mean, invstd, gamma,
                                                                   beta, saved);
    return cudaGetLastError();
}

__global__ static void k_bn_bwd_reduce(const float *dy, int64_t sy, const float *x, int64_t sx, const float *saved,
                                       int N, int C, int64_t HW, const float *mean, const float *invstd,
                                       float *dgamma, float *dbeta, float *ab, int training) {
    __shared__ double sh[THREADS];
    const int c = blockIdx.x;
    const int64_t M = (int64_t)N * HW;
    const float m = mean[c], is = invstd[c];
    double sdy = 0.0, sdyx = 0.0;
    for (int64_t e = threadIdx.x; e < M; e += THREADS) {
        const int64_t i = e / HW, j = e - i * HW;
        const float d = dy[i * sy + c * HW + j];
        const float xh = saved ? saved[(i * C + c) * HW + j] : (x[i * sx + c * HW + j] - m) * is;
        sdy += d;
        sdyx += (double)d * xh;
    }
    sdy = block_sum(sdy, sh);
    sdyx = block_sum(sdyx, sh);
    if (threadIdx.x == 0) {
        if (dgamma) dgamma[c] += (float)sdyx;
        if (dbeta) dbeta[c] += (float)sdy;
        ab[c] = training ? (float)(sdy / (double)M) : 0.0f;
        ab[C + c] = training ? (float)(sdyx / (double)M) : 0.0f;
    }
}

extern "C" cudaError_t dse_cuk_bn_bwd_reduce(cudaStream_t s, const float *dy, int64_t sy, const float *x,
                                             int64_t sx, const float *saved, int N, int C, int64_t HW,
                                             const float *mean, const float *invstd, float *dgamma, float *dbeta,
                                             float *ab, int training) {
    k_bn_bwd_reduce<<<C, THREADS, 0, s>>>(dy, sy, x, sx, saved, N, C, HW, mean, invstd, dgamma, dbeta, ab,
                                          training);
    return cudaGetLastError();
}

__global__ static void k_bn_bwd_apply(const float *dy, int64_t sy, const float *x, int64_t sx, const float *saved,
                                      float *dx, int N, int C, int64_t HW, const float *mean, const float *invstd,
                                      const float *gamma, const float *ab, int in_place) {
    const int64_t img = (int64_t)C * HW;
    GRID_LOOP(e, (int64_t)N * img) {
        const int64_t i = e / img, j = e - i * img;
        const int c = (int)(j / HW);
        const float k = (gamma ? gamma[c] : 1.0f) * invstd[c];
        const float xh = saved ? saved[e] : (x[i * sx + j] - mean[c]) * invstd[c];
        const float d = k * (dy[i * sy + j] - ab[c] - xh * ab[C + c]);
        if (in_place)
            dx[i * sx + j] = d;
        else
            dx[i * sx + j] += d;
    }
}

extern "C" cudaError_t dse_cuk_bn_bwd_apply(cudaStream_t s, const float *dy, int64_t sy, const float *x,
                                            int64_t sx, const float *saved, float *dx, int N, int C, int64_t HW,
                                            const float *mean, const float *invstd, const float *gamma,
                                            const float *ab, int in_place) {
    k_bn_bwd_apply<<<blocks_for((int64_t)N * C * HW), THREADS, 0, s>>>(dy, sy, x, sx, saved, dx, N, C, HW, mean,
                                                                       invstd, gamma, ab, in_place);
    return cudaGetLastError();
}

/* ---- scale ----------------------------------------------------------------------------- */

__global__ static void k_scale_fwd(const float *x, int64_t sx, float *y, int64_t sy, int N, int C, int64_t HW,
                                   const float *gamma, const float *beta, float *saved) {
    const int64_t img = (int64_t)C * HW;
    GRID_LOOP(e, (int64_t)N * img) {
        const int64_t i = e / img, j = e - i * img;
        const int c = (int)(j / HW);
        const float v = x[i * sx + j];
        if (saved) saved[e] = v;
        y[i * sy + j] = v * gamma[c] + (beta ? beta[c] : 0.0f);
    }
}

extern "C" cudaError_t dse_cuk_scale_fwd(cudaStream_t s, const float *x, int64_t sx, float *y, int64_t sy, int N,
                                         int C, int64_t HW, const float *gamma, const float *beta, float *saved) {
    k_scale_fwd<<<blocks_for((int64_t)N * C * HW), THREADS, 0, s>>>(x, sx, y, sy, N, C, HW, gamma, beta, saved);
    return cudaGetLastError();
}

__global__ static void k_scale_bwd_params(const float *dy, int64_t sy, const float *x, int64_t sx,
                                          const float *saved, int N, int C, int64_t HW, float *dgamma,
                                          float *dbeta) {
    __shared__ double sh[THREADS];
    const int c = blockIdx.x;
    const int64_t M = (int64_t)N * HW;
    double sg = 0.0, sb = 0.0;
    for (int64_t e = threadIdx.x; e < M; e += THREADS) {
        const int64_t i = e / HW, j = e - i * HW;
        const float d = dy[i * sy + c * HW + j];
        const float v = saved ? saved[(i * C + c) * HW + j] : x[i * sx + c * HW + j];
        sg += (double)d * v;
        sb += d;
    }
    sg = block_sum(sg, sh);
    sb = block_sum(sb, sh);
    if (threadIdx.x == 0) {
        if (dgamma) dgamma[c] += (float)sg;
        if (dbeta) dbeta[c] += (float)sb;
    }
}

extern "C" cudaError_t dse_cuk_scale_bwd_params(cudaStream_t s, const float *dy, int64_t sy, const float *x,
                                                int64_t sx, const float *saved, int N, int C, int64_t HW,
                                                float *dgamma, float *dbeta) {
    k_scale_bwd_params<<<C, THREADS, 0, s>>>(dy, sy, x, sx, saved, N, C, HW, dgamma, dbeta);
    return cudaGetLastError();
}

/* ---- conv bias ------------------------------------------------------------------------- */

/* Images in blockIdx.y (grid-strided), each image's C x HW values in x-blocks: no tiny
 * block per 7x7 plane (SqueezeNet's late maps), one 32-bit division per value. */
__global__ static void k_bias_fwd(float *y, int64_t sy, int N, int C, int HW, const float *b) {
    const int img = C * HW;
    for (int i = blockIdx.y; i < N; i += gridDim.y) {
        float *yi = y + i * sy;
        for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < img; j += gridDim.x * blockDim.x)
            yi[j] += b[j / HW];
    }
}

extern "C" cudaError_t dse_cuk_bias_fwd(cudaStream_t s, float *y, int64_t sy, int N, int C, int64_t HW,
                                        const float *b) {
    if ((int64_t)C * HW > 0x7fffffff) return cudaErrorInvalidValue; /* 32-bit index math */
    k_bias_fwd<<<image_grid(N, (int64_t)C * HW, 1), THREADS, 0, s>>>(y, sy, N, C, (int)HW, b);
    return cudaGetLastError();
}

/* Runs of images per partial sum: enough blocks (C x runs) to fill the GPU. */
static int bias_runs(int N, int C) {
    int runs = (1024 + C - 1) / C;
    return runs < 1 ? 1 : runs > N ? N : runs;
}

extern "C" int64_t dse_cuk_bias_bwd_part(int N, int C) { return (int64_t)C * bias_runs(N, C); }

__global__ static void k_bias_bwd_part(const float *dy, int64_t sy, int N, int C, int HW, int runs,
                                       double *part) {
    __shared__ double sh[THREADS];
    const int c = blockIdx.y, run = blockIdx.x;
    const int per = (N + runs - 1) / runs, i0 = run * per, i1 = i0 + per < N ? i0 + per : N;
    const int count = (i1 - i0) * HW; /* the run's values, image by image */
    double acc = 0.0;
    for (int f = threadIdx.x; f < count; f += THREADS) {
        const int i = f / HW, j = f - i * HW;
        acc += dy[(int64_t)(i0 + i) * sy + (int64_t)c * HW + j];
    }
    acc = block_sum(acc, sh);
    if (threadIdx.x == 0) part[(int64_t)c * runs + run] = acc;
}

__global__ static void k_bias_bwd_sum(int C, int runs, const double *part, float *db) {
    GRID_LOOP(c, (int64_t)C) {
        double acc = 0.0;
        for (int r = 0; r < runs; r++) acc += part[c * runs + r];
        db[c] += (float)acc;
    }
}

extern "C" cudaError_t dse_cuk_bias_bwd(cudaStream_t s, const float *dy, int64_t sy, int N, int C, int64_t HW,
                                        float *db, double *part) {
    const int runs = bias_runs(N, C);
    if ((int64_t)((N + runs - 1) / runs) * HW > 0x7fffffff) return cudaErrorInvalidValue; /* 32-bit index math */
    if (C > 65535) return cudaErrorInvalidValue; /* channels are gridDim.y */
    k_bias_bwd_part<<<dim3((unsigned)runs, (unsigned)C), THREADS, 0, s>>>(dy, sy, N, C, (int)HW, runs, part);
    k_bias_bwd_sum<<<blocks_for(C), THREADS, 0, s>>>(C, runs, part, db);
    return cudaGetLastError();
}

/* ---- mixed precision: float <-> FP16 / BF16 ------------------------------------------- */

template <typename H> __device__ static H to_h(float v);
template <> __device__ __half to_h<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __nv_bfloat16 to_h<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
__device__ static float from_h(__half v) { return __half2float(v); }
__device__ static float from_h(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename H>
__global__ static void k_to16(const float *x, int64_t sx, H *h, int n, int64_t img, float scale) {
    for (int i = blockIdx.y; i < n; i += gridDim.y)
        for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < img; j += (int64_t)gridDim.x * blockDim.x)
            h[i * img + j] = to_h<H>(x[i * sx + j] * scale);
}

extern "C" cudaError_t dse_cuk_to16(cudaStream_t s, int kind, const float *x, int64_t sx, void *h, int n, int64_t img,
                                    float scale) {
    if (kind == 0)
        k_to16<__half><<<image_grid(n, img, 1), THREADS, 0, s>>>(x, sx, (__half *)h, n, img, scale);
    else
        k_to16<__nv_bfloat16><<<image_grid(n, img, 1), THREADS, 0, s>>>(x, sx, (__nv_bfloat16 *)h, n, img, scale);
    return cudaGetLastError();
}

template <typename H>
__global__ static void k_from16_bias(const H *h, float *y, int64_t sy, int N, int C, int HW, const float *bias) {
    const int img = C * HW;
    for (int i = blockIdx.y; i < N; i += gridDim.y)
        for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < img; j += gridDim.x * blockDim.x)
            y[i * sy + j] = from_h(h[(int64_t)i * img + j]) + (bias ? bias[j / HW] : 0.0f);
}

extern "C" cudaError_t dse_cuk_from16_bias(cudaStream_t s, int kind, const void *h, float *y, int64_t sy, int N,
                                           int C, int64_t HW, const float *bias) {
    if ((int64_t)C * HW > 0x7fffffff) return cudaErrorInvalidValue; /* 32-bit index math */
    const dim3 g = image_grid(N, (int64_t)C * HW, 1);
    if (kind == 0)
        k_from16_bias<__half><<<g, THREADS, 0, s>>>((const __half *)h, y, sy, N, C, (int)HW, bias);
    else
        k_from16_bias<__nv_bfloat16><<<g, THREADS, 0, s>>>((const __nv_bfloat16 *)h, y, sy, N, C, (int)HW, bias);
    return cudaGetLastError();
}

template <typename H>
__global__ static void k_from16_acc(const H *h, float *g, int64_t sg, int n, int64_t img, float inv_scale,
                                    int *flag) {
    int bad = 0;
    for (int i = blockIdx.y; i < n; i += gridDim.y)
        for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < img;
             j += (int64_t)gridDim.x * blockDim.x) {
            const float v = from_h(h[i * img + j]) * inv_scale;
            bad |= !isfinite(v);
            g[i * sg + j] += v;
        }
    if (bad) *flag = 1;
}

extern "C" cudaError_t dse_cuk_from16_acc(cudaStream_t s, int kind, const void *h, float *g, int64_t sg, int n,
                                          int64_t img, float inv_scale, int *flag) {
    const dim3 gr = image_grid(n, img, 1);
    if (kind == 0)
        k_from16_acc<__half><<<gr, THREADS, 0, s>>>((const __half *)h, g, sg, n, img, inv_scale, flag);
    else
        k_from16_acc<__nv_bfloat16><<<gr, THREADS, 0, s>>>((const __nv_bfloat16 *)h, g, sg, n, img, inv_scale, flag);
    return cudaGetLastError();
}

__global__ static void k_scale_bwd_data(const float *dy, int64_t sy, float *dx, int64_t sx, int N, int C,
                                        int64_t HW, const float *gamma, int in_place) {
    const int64_t img = (int64_t)C * HW;
    GRID_LOOP(e, (int64_t)N * img) {
        const int64_t i = e / img, j = e - i * img;
        const float d = dy[i * sy + j] * gamma[j / HW];
        if (in_place)
            dx[i * sx + j] = d;
        else
            dx[i * sx + j] += d;
    }
}

extern "C" cudaError_t dse_cuk_scale_bwd_data(cudaStream_t s, const float *dy, int64_t sy, float *dx, int64_t sx,
                                              int N, int C, int64_t HW, const float *gamma, int in_place) {
    k_scale_bwd_data<<<blocks_for((int64_t)N * C * HW), THREADS, 0, s>>>(dy, sy, dx, sx, N, C, HW, gamma,
                                                                         in_place);
    return cudaGetLastError();
}

/* ---- SGD, non-finite check -------------------------------------------------------------- */

__global__ static void k_sgd(float *w, const float *g, float *v, int64_t n, float lr, float momentum, float wd,
                             float gscale) {
    GRID_LOOP(e, n) {
        const float ve = momentum * v[e] + lr * (gscale * g[e] + wd * w[e]);
        v[e] = ve;
        w[e] -= ve;
    }
}

extern "C" cudaError_t dse_cuk_sgd(cudaStream_t s, float *w, const float *g, float *v, int64_t n, float lr,
                                   float momentum, float wd, float gscale) {
    k_sgd<<<blocks_for(n), THREADS, 0, s>>>(w, g, v, n, lr, momentum, wd, gscale);
    return cudaGetLastError();
}

/* Sum of squares in double, in a fixed order: DSE_SUMSQ_BLOCKS partial sums (a grid-stride
 * loop per thread, then block_sum's tree), then one block adds the partials. */
__global__ static void k_sumsq_part(const float *p, int64_t n, double *part) {
    __shared__ double sh[THREADS];
    double acc = 0;
    GRID_LOOP(e, n) acc += (double)p[e] * (double)p[e];
    const double t = block_sum(acc, sh);
    if (threadIdx.x == 0) part[blockIdx.x] = t;
}

__global__ static void k_sumsq_final(const double *part, double *out) {
    __shared__ double sh[THREADS];
    double acc = 0;
    for (int i = threadIdx.x; i < DSE_SUMSQ_BLOCKS; i += THREADS) acc += part[i];
    const double t = block_sum(acc, sh);
    if (threadIdx.x == 0) *out = t;
}

extern "C" cudaError_t dse_cuk_sumsq(cudaStream_t s, const float *p, int64_t n, double *part) {
    k_sumsq_part<<<DSE_SUMSQ_BLOCKS, THREADS, 0, s>>>(p, n, part);
    k_sumsq_final<<<1, THREADS, 0, s>>>(part, part + DSE_SUMSQ_BLOCKS);
    return cudaGetLastError();
}

__global__ static void k_nonfinite(const float *p, int64_t n, int *flag) {
    GRID_LOOP(e, n) {
        if (!isfinite(p[e])) *flag = 1;
    }
}

extern "C" cudaError_t dse_cuk_nonfinite(cudaStream_t s, const float *p, int64_t n, int *flag) {
    k_nonfinite<<<blocks_for(n), THREADS, 0, s>>>(p, n, flag);
    return cudaGetLastError();
}

/* ---- steps that do not wait ------------------------------------------------------------- */

__global__ static void k_tally_reset(struct dse_cuk_tally *t) {
    t->loss_sum = 0;
    t->steps = 0;
    t->diverged_at = -1;
    t->clipped = 0;
    t->gscale = 1.0f;
    t->unused = 0;
}

extern "C" cudaError_t dse_cuk_tally_reset(cudaStream_t s, struct dse_cuk_tally *t) {
    k_tally_reset<<<1, 1, 0, s>>>(t);
    return cudaGetLastError();
}

__global__ static void k_tally_loss(const float *loss, struct dse_cuk_tally *t) {
    const float l = *loss;
    if (!isfinite(l) && t->diverged_at < 0) t->diverged_at = t->steps;
    t->loss_sum += (double)l;
    t->steps++;
}

extern "C" cudaError_t dse_cuk_tally_loss(cudaStream_t s, const float *loss, struct dse_cuk_tally *t) {
    k_tally_loss<<<1, 1, 0, s>>>(loss, t);
    return cudaGetLastError();
}

/* The host's rule (engine/model.c, dse_model_clip_grad) in the same double arithmetic. */
__global__ static void k_tally_scale(const double *sumsq, double clip, struct dse_cuk_tally *t) {
    float f = 1.0f;
    if (sumsq && clip > 0) {
        const double norm = sqrt(*sumsq);
        if (isfinite(norm) && norm > clip) {
            f = (float)(clip / norm);
            t->clipped++;
        }
    }
    t->gscale = f;
}

extern "C" cudaError_t dse_cuk_tally_scale(cudaStream_t s, const double *sumsq, double clip,
                                           struct dse_cuk_tally *t) {
    k_tally_scale<<<1, 1, 0, s>>>(sumsq, clip, t);
    return cudaGetLastError();
}

__global__ static void k_sgd_tallied(float *w, const float *g, float *v, int64_t n, float lr, float momentum,
                                     float wd, const struct dse_cuk_tally *t) {
    if (t->diverged_at >= 0) return;
    const float gscale = t->gscale;
    GRID_LOOP(e, n) {
        const float ve = momentum * v[e] + lr * (gscale * g[e] + wd * w[e]);
        v[e] = ve;
        w[e] -= ve;
    }
}

extern "C" cudaError_t dse_cuk_sgd_tallied(cudaStream_t s, float *w, const float *g, float *v, int64_t n, float lr,
                                           float momentum, float wd, const struct dse_cuk_tally *t) {
    k_sgd_tallied<<<blocks_for(n), THREADS, 0, s>>>(w, g, v, n, lr, momentum, wd, t);
    return cudaGetLastError();
}
