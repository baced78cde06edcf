/* kernels.cu: the CUDA backend's own kernels, for what cuDNN and cuBLAS do not cover or
 * cannot match: Caffe's pooling windows (ceil rounding, clipped averages, first-of-equal
 * max), dropout masks from the CPU's PCG32 stream, eltwise sums, the loss, batchnorm and
 * scale, SGD. Interface and contracts: engine/cuda/kernels.h. Arithmetic mirrors
 * engine/cpu/ operation for operation; built with --fmad=false so no multiply-add is
 * fused where the CPU rounds twice. Reductions run one block per channel (or one block)
 * in double, in a fixed order: the same bits every run. The add, dropout, relu, pooling,
 * loss gradient and conv bias kernels run on image grids (image_grid): blockIdx.y walks
 * the images, x-blocks the values of one image with 32-bit indices, and coordinates
 * inside an image come from dse_div (engine/kernels_shared.h), not from divide instructions
 * (batchnorm and scale still divide: no SqueezeNet has them). */
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

/* An image grid for n images of img values, about v values a thread (more past 1,024
 * x-blocks): images in blockIdx.y (grid-strided past 65,535), an image's values in the
 * x-blocks. */
static dim3 image_grid(int n, int64_t img, int v) {
    int64_t bx = (img + (int64_t)THREADS * v - 1) / ((int64_t)THREADS * v);
    if (bx > 1024) bx = 1024;
    if (bx < 1) bx = 1;
    return dim3((unsigned)bx, (unsigned)(n < 65535 ? (n < 1 ? 1 : n) : 65535));
}

/* The loops of an image grid: image i, then value j of it (img < 2^31: fits32). */
#define IMAGE_LOOP(i, n) for (int i = blockIdx.y; i < (n); i += gridDim.y)
#define VALUE_LOOP(j, img) \
    for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < (img); j += gridDim.x * blockDim.x)

/* 1 if an image's values can be indexed in 32 bits (the image-grid kernels' rule); the
 * launchers return cudaErrorInvalidValue otherwise (a 2^31-value image, 8 GiB). */
static int fits32(int64_t img) { return img >= 1 && img <= 0x7fffffff; }

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

__global__ static void k_add(int n, uint32_t img, const float *x, int64_t sx, float *y, int64_t sy) {
    IMAGE_LOOP(i, n) VALUE_LOOP(j, img) y[i * sy + j] += x[i * sx + j];
}

extern "C" cudaError_t dse_cuk_add(cudaStream_t s, int n, int64_t img, const float *x, int64_t sx, float *y,
                                   int64_t sy) {
    if (!fits32(img)) return cudaErrorInvalidValue;
    k_add<<<image_grid(n, img, 1), THREADS, 0, s>>>(n, (uint32_t)img, x, sx, y, sy);
    return cudaGetLastError();
}

__global__ static void k_eltwise_sum(struct dse_cuk_inputs in, int n, uint32_t img, float *y, int64_t sy) {
    IMAGE_LOOP(i, n) VALUE_LOOP(j, img) {
        float acc = in.x[0][i * in.sx[0] + j];
        for (int t = 1; t < in.count; t++) acc += in.x[t][i * in.sx[t] + j];
        y[i * sy + j] = acc;
    }
}

extern "C" cudaError_t dse_cuk_eltwise_sum(cudaStream_t s, struct dse_cuk_inputs in, int n, int64_t img, float *y,
                                           int64_t sy) {
    if (!fits32(img)) return cudaErrorInvalidValue;
    k_eltwise_sum<<<image_grid(n, img, 1), THREADS, 0, s>>>(in, n, (uint32_t)img, y, sy);
    return cudaGetLastError();
}

/* ---- dropout ----------------------------------------------------------------------- */

/* Value j of image i is draw e = i * img + j of the CPU's stream. Thread t of an
 * image's x-grid (T threads) takes values t, t + T, t + 2T, ...: neighbouring threads
 * touch neighbouring values (loads and stores coalesce), and its draws lie T apart in
 * the stream, so one jump-ahead per image finds its first state and the T-step map
 * (jmul, jplus: dse_pcg32_jump) each next one. Then the CPU's arithmetic: y = x * scale
 * where kept, 0 where dropped. */
__global__ static void k_dropout_fwd(const float *x, int64_t sx, float *y, int64_t sy, uint8_t *mask, int n,
                                     uint32_t img, uint32_t threshold, float scale, uint64_t state, uint64_t inc,
                                     uint64_t jmul, uint64_t jplus) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x, T = gridDim.x * blockDim.x;
    if (t >= img) return;
    IMAGE_LOOP(i, n) {
        uint64_t st = dse_pcg32_advance(state, inc, (uint64_t)i * img + t);
        for (uint32_t j = t; j < img; j += T) {
            const uint8_t keep = dse_pcg32_output(st) >= threshold;
            st = st * jmul + jplus;
            const float v = x[i * sx + j] * scale;
            mask[(int64_t)i * img + j] = keep;
            y[i * sy + j] = keep ? v : 0.0f;
        }
    }
}

/* Values a dropout thread draws per image, about: enough to pay for its jump-ahead. */
#define DROPOUT_RUN 16

extern "C" cudaError_t dse_cuk_dropout_fwd(cudaStream_t s, const float *x, int64_t sx, float *y, int64_t sy,
                                           uint8_t *mask, int n, int64_t img, uint32_t threshold, float scale,
                                           uint64_t state, uint64_t inc) {
    if (!fits32(img)) return cudaErrorInvalidValue;
    const dim3 g = image_grid(n, img, DROPOUT_RUN);
    uint64_t jmul, jplus;
    dse_pcg32_jump(inc, (uint64_t)g.x * THREADS, &jmul, &jplus); /* T, the x-grid's threads */
    k_dropout_fwd<<<g, THREADS, 0, s>>>(x, sx, y, sy, mask, n, (uint32_t)img, threshold, scale, state, inc, jmul,
                                        jplus);
    return cudaGetLastError();
}

__global__ static void k_dropout_bwd(const float *dy, int64_t sy, float *dx, int64_t sx, const uint8_t *mask, int n,
                                     uint32_t img, float scale, int masked, int in_place) {
    IMAGE_LOOP(i, n) VALUE_LOOP(j, img) {
        const float d = dy[i * sy + j];
        if (!masked) {
            dx[i * sx + j] += d;
        } else {
            const float g = d * scale;
            const float v = mask[(int64_t)i * img + j] ? g : 0.0f;
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
    if (!fits32(img)) return cudaErrorInvalidValue;
    k_dropout_bwd<<<image_grid(n, img, 1), THREADS, 0, s>>>(dy, sy, dx, sx, mask, n, (uint32_t)img, scale, masked,
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

/* A launch's geometry with the divisors its index math needs. */
struct poolk {
    struct dse_cuk_pool g;
    struct dse_div      HW, W, PQ, Q, sh, sw; /* H*W, W, P*Q, Q, stride_h, stride_w */
};

static struct poolk poolk_of(const struct dse_cuk_pool &g) {
    struct poolk k;
    k.g = g;
    k.HW = dse_div_make((uint32_t)(g.H * g.W)), k.W = dse_div_make((uint32_t)g.W);
    k.PQ = dse_div_make((uint32_t)(g.P * g.Q)), k.Q = dse_div_make((uint32_t)g.Q);
    k.sh = dse_div_make((uint32_t)g.sh), k.sw = dse_div_make((uint32_t)g.sw);
    return k;
}

/* 1 if a pooling launch's images fit the 32-bit index math, input and output. */
static int pool_fits(const struct dse_cuk_pool &g) {
    return fits32((int64_t)g.C * g.H * g.W) && fits32((int64_t)g.C * g.P * g.Q);
}

struct win {
    int h0, h1, hn, w0, w1, wn;
};

__device__ static struct win window(const struct dse_cuk_pool &g, int p, int q) {
    struct win w;
    dse_pool_bounds(p, g.kh, g.sh, g.ph, g.H, &w.h0, &w.h1, &w.hn);
    dse_pool_bounds(q, g.kw, g.sw, g.pw, g.W, &w.w0, &w.w1, &w.wn);
    return w;
}

/* Output t = (c, p, q) of an image x: its window, and *xp = channel c's plane of x. */
__device__ static struct win window_at(const struct poolk &k, uint32_t t, const float *x, const float **xp) {
    const struct dse_cuk_pool &g = k.g;
    const int c = (int)dse_div_q(k.PQ, t);
    *xp = x + (int64_t)c * g.H * g.W;
    const int pq = (int)t - c * g.P * g.Q;
    const int p = (int)dse_div_q(k.Q, (uint32_t)pq), q = pq - p * g.Q;
    return window(g, p, q);
}

__device__ static int empty(const struct win &w) {
    return w.h0 >= w.h1 || w.w0 >= w.w1 || w.hn <= 0 || w.wn <= 0;
}

/* Output positions [*lo, *hi] whose window (before clipping) can contain input row h:
 * p stride - pad <= h < p stride - pad + k. */
__device__ static void covering(int h, int k, struct dse_div stride, int pad, int P, int *lo, int *hi) {
    const int a = h + pad - k;
    *lo = a < 0 ? 0 : (int)dse_div_q(stride, (uint32_t)a) + 1;
    const int b = (int)dse_div_q(stride, (uint32_t)(h + pad));
    *hi = b < P - 1 ? b : P - 1;
}

/* Input t of image i (channel c, plane position hw = h W + v), the outputs [p0, p1] x
 * [q0, q1] whose windows can contain it, and where its gradients are: dy = channel c's
 * plane of the image's dy, dx = the input's gradient. Where both backward kernels begin. */
struct cover {
    int          c, hw, h, v, p0, p1, q0, q1;
    const float *dy;
    float       *dx;
};

__device__ static struct cover cover_at(const struct poolk &k, int i, uint32_t t, const float *dy, float *dx) {
    const struct dse_cuk_pool &g = k.g;
    struct cover o;
    o.c = (int)dse_div_q(k.HW, t), o.hw = (int)t - o.c * (g.H * g.W);
    o.h = (int)dse_div_q(k.W, (uint32_t)o.hw), o.v = o.hw - o.h * g.W;
    covering(o.h, g.kh, k.sh, g.ph, g.P, &o.p0, &o.p1);
    covering(o.v, g.kw, k.sw, g.pw, g.Q, &o.q0, &o.q1);
    o.dy = dy + i * g.sy + (int64_t)o.c * (g.P * g.Q);
    o.dx = dx + i * g.sx + t;
    return o;
}

/* One thread per output (c, p, q) of an image, the CPU's loop: the window row by row,
 * the first of equal maxima kept (strict >). */
__global__ static void k_maxpool_fwd(struct poolk k, const float *x, float *y, int32_t *argmax) {
    const struct dse_cuk_pool &g = k.g;
    const uint32_t out = (uint32_t)(g.C * g.P * g.Q);
    IMAGE_LOOP(i, g.N) VALUE_LOOP(t, out) {
        const float *xp;
        const struct win w = window_at(k, t, x + i * g.sx, &xp);
        int32_t arg = -1;
        float best = 0.0f;
        if (!empty(w)) {
            arg = w.h0 * g.W + w.w0;
            best = xp[arg];
            for (int h = w.h0; h < w.h1; h++)
                for (int v = w.w0; v < w.w1; v++) {
                    const float val = xp[h * g.W + v];
                    if (val > best) best = val, arg = h * g.W + v;
                }
        }
        y[i * g.sy + t] = best;
        argmax[(int64_t)i * out + t] = arg;
    }
}

extern "C" cudaError_t dse_cuk_maxpool_fwd(cudaStream_t s, struct dse_cuk_pool g, const float *x, float *y,
                                           int32_t *argmax) {
    if (!pool_fits(g)) return cudaErrorInvalidValue;
    k_maxpool_fwd<<<image_grid(g.N, (int64_t)g.C * g.P * g.Q, 1), THREADS, 0, s>>>(poolk_of(g), x, y, argmax);
    return cudaGetLastError();
}

/* One thread per input (c, h, w) of an image: the outputs whose windows can contain it
 * (covering: at most ceil(k / stride) per axis) are checked in (p, q) order, and those
 * that chose it added to dx in that order, as the CPU's scatter in output order adds
 * them. dx is read (gradients accumulate) and written only where some output chose the
 * input: most of a 3x3/2 pool's inputs are nobody's maximum. */
__global__ static void k_maxpool_bwd(struct poolk k, const float *dy, const int32_t *argmax, float *dx) {
    const struct dse_cuk_pool &g = k.g;
    const uint32_t in = (uint32_t)(g.C * (g.H * g.W));
    IMAGE_LOOP(i, g.N) VALUE_LOOP(t, in) {
        const struct cover o = cover_at(k, i, t, dy, dx);
        const int32_t *ap = argmax + ((int64_t)i * g.C + o.c) * (g.P * g.Q);
        float acc = 0.0f;
        int hit = 0;
        for (int p = o.p0; p <= o.p1; p++)
            for (int q = o.q0; q <= o.q1; q++)
                if (ap[p * g.Q + q] == o.hw) {
                    if (!hit) {
                        acc = *o.dx;
                        hit = 1;
                    }
                    acc += o.dy[p * g.Q + q];
                }
        if (hit) *o.dx = acc;
    }
}

extern "C" cudaError_t dse_cuk_maxpool_bwd(cudaStream_t s, struct dse_cuk_pool g, const float *dy,
                                           const int32_t *argmax, float *dx) {
    if (!pool_fits(g)) return cudaErrorInvalidValue;
    k_maxpool_bwd<<<image_grid(g.N, (int64_t)g.C * g.H * g.W, 1), THREADS, 0, s>>>(poolk_of(g), dy, argmax, dx);
    return cudaGetLastError();
}

/* One thread per output, the CPU's sum: the window row by row, then one division by
 * the window clipped to the padded input. */
__global__ static void k_avgpool_fwd(struct poolk k, const float *x, float *y) {
    const struct dse_cuk_pool &g = k.g;
    const uint32_t out = (uint32_t)(g.C * g.P * g.Q);
    IMAGE_LOOP(i, g.N) VALUE_LOOP(t, out) {
        const float *xp;
        const struct win w = window_at(k, t, x + i * g.sx, &xp);
        float sum = 0.0f;
        for (int h = w.h0; h < w.h1; h++)
            for (int v = w.w0; v < w.w1; v++) sum += xp[h * g.W + v];
        y[i * g.sy + t] = empty(w) ? 0.0f : sum / (float)(w.hn * w.wn);
    }
}

extern "C" cudaError_t dse_cuk_avgpool_fwd(cudaStream_t s, struct dse_cuk_pool g, const float *x, float *y) {
    if (!pool_fits(g)) return cudaErrorInvalidValue;
    k_avgpool_fwd<<<image_grid(g.N, (int64_t)g.C * g.P * g.Q, 1), THREADS, 0, s>>>(poolk_of(g), x, y);
    return cudaGetLastError();
}

/* One thread per input: the covering outputs in (p, q) order, each adding
 * dy / window size as the CPU's scatter does (global pooling: the one output). */
__global__ static void k_avgpool_bwd(struct poolk k, const float *dy, float *dx) {
    const struct dse_cuk_pool &g = k.g;
    const uint32_t in = (uint32_t)(g.C * (g.H * g.W));
    IMAGE_LOOP(i, g.N) VALUE_LOOP(t, in) {
        const struct cover o = cover_at(k, i, t, dy, dx);
        float acc = *o.dx;
        for (int p = o.p0; p <= o.p1; p++)
            for (int q = o.q0; q <= o.q1; q++) {
                const struct win w = window(g, p, q);
                if (empty(w) || o.h < w.h0 || o.h >= w.h1 || o.v < w.w0 || o.v >= w.w1) continue;
                acc += o.dy[p * g.Q + q] / (float)(w.hn * w.wn);
            }
        *o.dx = acc;
    }
}

extern "C" cudaError_t dse_cuk_avgpool_bwd(cudaStream_t s, struct dse_cuk_pool g, const float *dy, float *dx) {
    if (!pool_fits(g)) return cudaErrorInvalidValue;
    k_avgpool_bwd<<<image_grid(g.N, (int64_t)g.C * g.H * g.W, 1), THREADS, 0, s>>>(poolk_of(g), dy, dx);
    return cudaGetLastError();
}

/* ---- softmax cross-entropy ------------------------------------------------------------ */

/* The maximum of v over the block (THREADS threads); every thread gets it. Max is exact
 * in any order (a NaN row gives NaN probabilities and loss either way). */
__device__ static float block_max(float v, float *sh) {
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half) {
            const float o = sh[threadIdx.x + half];
            if (o > sh[threadIdx.x]) sh[threadIdx.x] = o;
        }
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

/* One block per row i: the CPU's arithmetic (engine/cpu/softmax.c) with the row's values
 * spread over the block: m = max, s = sum of expf(x - m) in double (block_sum's order),
 * prob = expf(x - m) * (float)(1 / s), term[i] = log(s) - (x[label] - m). */
__global__ static void k_softmax_xent_rows(const float *x, int64_t sx, int K, const int32_t *labels, float *prob,
                                           double *term) {
    __shared__ double shd[THREADS];
    __shared__ float shf[THREADS];
    const int i = blockIdx.x;
    const float *xi = x + i * sx;
    float m = -INFINITY;
    for (int k = threadIdx.x; k < K; k += THREADS) m = xi[k] > m ? xi[k] : m;
    m = block_max(m, shf);
    double sum = 0.0;
    for (int k = threadIdx.x; k < K; k += THREADS) sum += expf(xi[k] - m);
    sum = block_sum(sum, shd);
    const float inv = (float)(1.0 / sum);
    float *pi = prob + (int64_t)i * K;
    for (int k = threadIdx.x; k < K; k += THREADS) pi[k] = expf(xi[k] - m) * inv;
    if (threadIdx.x == 0) term[i] = log(sum) - ((double)xi[labels[i]] - m);
}

/* *loss = the mean of the N row terms, summed in block_sum's fixed order. */
__global__ static void k_xent_mean(const double *term, int N, float *loss) {
    __shared__ double sh[THREADS];
    double acc = 0.0;
    for (int i = threadIdx.x; i < N; i += THREADS) acc += term[i];
    const double total = block_sum(acc, sh);
    if (threadIdx.x == 0) *loss = (float)(total / N);
}

extern "C" cudaError_t dse_cuk_softmax_xent_fwd(cudaStream_t s, const float *x, int64_t sx, int N, int K,
                                                const int32_t *labels, float *prob, double *term, float *loss) {
    k_softmax_xent_rows<<<N, THREADS, 0, s>>>(x, sx, K, labels, prob, term);
    k_xent_mean<<<1, THREADS, 0, s>>>(term, N, loss);
    return cudaGetLastError();
}

/* Row i in blockIdx.y, its K values in x-blocks. */
__global__ static void k_xent_bwd(const float *prob, const int32_t *labels, int N, uint32_t K, float *dx,
                                  int64_t sx) {
    const float scale = 1.0f / (float)N;
    IMAGE_LOOP(i, N) {
        const uint32_t label = (uint32_t)labels[i];
        VALUE_LOOP(k, K) dx[i * sx + k] += (prob[(int64_t)i * K + k] - (k == label ? 1.0f : 0.0f)) * scale;
    }
}

extern "C" cudaError_t dse_cuk_xent_bwd(cudaStream_t s, const float *prob, const int32_t *labels, int N, int K,
                                        float *dx, int64_t sx) {
    k_xent_bwd<<<image_grid(N, K, 1), THREADS, 0, s>>>(prob, labels, N, (uint32_t)K, dx, sx);
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

/* ---- lrn (Caffe's ACROSS_CHANNELS; engine/cpu/lrn.c is the contract) ------------------- */

/* Value e = (i * C + c) * HW + j: its window [c0, c1) of channels. */
__device__ static void lrn_window(int c, int C, int size, int *c0, int *c1) {
    *c0 = c - size / 2 > 0 ? c - size / 2 : 0;
    *c1 = c + size / 2 + 1 < C ? c + size / 2 + 1 : C;
}

__global__ static void k_lrn_fwd(const float *x, int64_t sx, float *y, int64_t sy, float *scale, int N, int C,
                                 int64_t HW, struct dse_cuk_lrn p) {
    const float an = p.alpha / (float)p.size, nb = -p.beta;
    GRID_LOOP(e, (int64_t)N * C * HW) {
        const int64_t i = e / ((int64_t)C * HW), j = e % HW;
        const int c = (int)(e / HW % C);
        int c0, c1;
        lrn_window(c, C, p.size, &c0, &c1);
        const float *xi = x + i * sx;
        float t = 0.0f;
        for (int q = c0; q < c1; q++) {
            const float v = xi[q * HW + j];
            t += v * v;
        }
        const float sc = p.k + an * t, pb = powf(sc, nb);
        scale[e] = sc;
        scale[(int64_t)N * C * HW + e] = pb; /* scale^-beta, after the scales (engine/cpu/lrn.c) */
        y[i * sy + c * HW + j] = xi[c * HW + j] * pb;
    }
}

extern "C" cudaError_t dse_cuk_lrn_fwd(cudaStream_t s, const float *x, int64_t sx, float *y, int64_t sy, float *scale,
                                       int N, int C, int64_t HW, struct dse_cuk_lrn p) {
    k_lrn_fwd<<<blocks_for((int64_t)N * C * HW), THREADS, 0, s>>>(x, sx, y, sy, scale, N, C, HW, p);
    return cudaGetLastError();
}

__global__ static void k_lrn_bwd(const float *x, int64_t sx, const float *y, const float *dy, int64_t sy,
                                 const float *scale, float *dx, int N, int C, int64_t HW, struct dse_cuk_lrn p) {
    const float f = 2.0f * p.alpha * p.beta / (float)p.size;
    (void)y; /* y = x * scale^-beta is recomputed: a later layer may work in place on y */
    GRID_LOOP(e, (int64_t)N * C * HW) {
        const int64_t i = e / ((int64_t)C * HW), j = e % HW;
        const int c = (int)(e / HW % C);
        int c0, c1;
        lrn_window(c, C, p.size, &c0, &c1);
        const float *xi = x + i * sx, *dyi = dy + i * sy, *si = scale + i * C * HW;
        const float *pi = si + (int64_t)N * C * HW;
        float t = 0.0f;
        for (int q = c0; q < c1; q++) {
            const int64_t o = q * HW + j;
            t += dyi[o] * (xi[o] * pi[o]) / si[o];
        }
        const int64_t o = c * HW + j;
        dx[i * sx + o] += dyi[o] * pi[o] - f * xi[o] * t;
    }
}

extern "C" cudaError_t dse_cuk_lrn_bwd(cudaStream_t s, const float *x, int64_t sx, const float *y, const float *dy,
                                       int64_t sy, const float *scale, float *dx, int N, int C, int64_t HW,
                                       struct dse_cuk_lrn p) {
    k_lrn_bwd<<<blocks_for((int64_t)N * C * HW), THREADS, 0, s>>>(x, sx, y, dy, sy, scale, dx, N, C, HW, p);
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

/* ---- conv bias (and the conv's fused ReLU) ------------------------------------------ */

/* Images in blockIdx.y (grid-strided), each image's C x HW values in x-blocks: no tiny
 * block per 7x7 plane (SqueezeNet's late maps); the channel by dse_div. relu (the conv's
 * in-place ReLU fused, dse_node.relu_out): y = relu(y + b), what the bias pass and then
 * the ReLU's pass give, in one read and one write of y. */
__global__ static void k_bias_fwd(float *y, int64_t sy, int N, uint32_t img, struct dse_div HW, const float *b,
                                  int relu) {
    IMAGE_LOOP(i, N) {
        float *yi = y + i * sy;
        VALUE_LOOP(j, img) {
            const float v = yi[j] + b[dse_div_q(HW, j)];
            yi[j] = relu ? (v > 0.0f ? v : 0.0f) : v;
        }
    }
}

extern "C" cudaError_t dse_cuk_bias_fwd(cudaStream_t s, float *y, int64_t sy, int N, int C, int64_t HW,
                                        const float *b, int relu) {
    if (!fits32((int64_t)C * HW)) return cudaErrorInvalidValue; /* 32-bit index math */
    k_bias_fwd<<<image_grid(N, (int64_t)C * HW, 1), THREADS, 0, s>>>(y, sy, N, (uint32_t)(C * HW),
                                                                     dse_div_make((uint32_t)HW), b, relu);
    return cudaGetLastError();
}

/* Runs of images per partial sum: enough blocks (C x runs) to fill the GPU. */
static int bias_runs(int N, int C) {
    int runs = (1024 + C - 1) / C;
    return runs < 1 ? 1 : runs > N ? N : runs;
}

extern "C" int64_t dse_cuk_bias_bwd_part(int N, int C) { return (int64_t)C * bias_runs(N, C); }

/* Block (run, c): channel c of the run's images, value by value (coalesced), summed in
 * double. relu_y (the fused ReLU's output, or NULL): each dy is first masked, dy = y > 0
 * ? dy : 0, and written back, as the ReLU's backward would have left it; the sum is of
 * the masked values. Each value belongs to one thread of one block, so the mask and the
 * sum share one read of dy. */
__global__ static void k_bias_bwd_part(float *dy, int64_t sy, const float *relu_y, int N, int HW,
                                       struct dse_div HWd, int runs, double *part) {
    __shared__ double sh[THREADS];
    const int c = blockIdx.y, run = blockIdx.x;
    const int per = (N + runs - 1) / runs, i0 = run * per, i1 = i0 + per < N ? i0 + per : N;
    const int count = i1 > i0 ? (i1 - i0) * HW : 0; /* the run's values, image by image */
    double acc = 0.0;
    for (int f = threadIdx.x; f < count; f += THREADS) {
        const int i = (int)dse_div_q(HWd, (uint32_t)f), j = f - i * HW;
        const int64_t at = (int64_t)(i0 + i) * sy + (int64_t)c * HW + j;
        float d = dy[at];
        if (relu_y) {
            d = relu_y[at] > 0.0f ? d : 0.0f;
            dy[at] = d;
        }
        acc += d;
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

extern "C" cudaError_t dse_cuk_bias_bwd(cudaStream_t s, float *dy, int64_t sy, int N, int C, int64_t HW, float *db,
                                        double *part, const float *relu_y) {
    const int runs = bias_runs(N, C);
    if ((int64_t)((N + runs - 1) / runs) * HW > 0x7fffffff) return cudaErrorInvalidValue; /* 32-bit index math */
    if (C > 65535) return cudaErrorInvalidValue; /* channels are gridDim.y */
    k_bias_bwd_part<<<dim3((unsigned)runs, (unsigned)C), THREADS, 0, s>>>(dy, sy, relu_y, N, (int)HW,
                                                                          dse_div_make((uint32_t)HW), runs, part);
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

/* y = float(h) + bias, then the fused ReLU if relu (k_bias_fwd's rule). */
template <typename H>
__global__ static void k_from16_bias(const H *h, float *y, int64_t sy, int N, uint32_t img, struct dse_div HW,
                                     const float *bias, int relu) {
    IMAGE_LOOP(i, N) VALUE_LOOP(j, img) {
        const float v = from_h(h[(int64_t)i * img + j]) + (bias ? bias[dse_div_q(HW, j)] : 0.0f);
        y[i * sy + j] = relu ? (v > 0.0f ? v : 0.0f) : v;
    }
}

extern "C" cudaError_t dse_cuk_from16_bias(cudaStream_t s, int kind, const void *h, float *y, int64_t sy, int N,
                                           int C, int64_t HW, const float *bias, int relu) {
    if (!fits32((int64_t)C * HW)) return cudaErrorInvalidValue; /* 32-bit index math */
    const dim3 g = image_grid(N, (int64_t)C * HW, 1);
    const uint32_t img = (uint32_t)(C * HW);
    const struct dse_div d = dse_div_make((uint32_t)HW);
    if (kind == 0)
        k_from16_bias<__half><<<g, THREADS, 0, s>>>((const __half *)h, y, sy, N, img, d, bias, relu);
    else
        k_from16_bias<__nv_bfloat16><<<g, THREADS, 0, s>>>((const __nv_bfloat16 *)h, y, sy, N, img, d, bias, relu);
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

/* SGD with momentum in Caffe's form on one value: dse_model_sgd's arithmetic (no fused
 * multiply-adds: kernels.cu is built with --fmad=false). */
__device__ static inline void sgd_one(float *w, const float *g, float *v, int64_t e, float lr, float momentum,
                                      float wd, float gscale) {
    const float ve = momentum * v[e] + lr * (gscale * g[e] + wd * w[e]);
    v[e] = ve;
    w[e] -= ve;
}

__global__ static void k_sgd(float *w, const float *g, float *v, int64_t n, float lr, float momentum, float wd,
                             float gscale) {
    GRID_LOOP(e, n) sgd_one(w, g, v, e, lr, momentum, wd, gscale);
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

/* The host's rule (engine/model.c, dse_model_clip_grad): dse_clip_factor, engine/kernels_shared.h. */
__global__ static void k_tally_scale(const double *sumsq, double clip, struct dse_cuk_tally *t) {
    if (t->diverged_at >= 0) return; /* no SGD step follows: not clipped (as the CPU, which stops) */
    double norm;
    int clipped = 0;
    t->gscale = sumsq ? dse_clip_factor(*sumsq, clip, &norm, &clipped) : 1.0f;
    t->clipped += clipped;
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
    GRID_LOOP(e, n) sgd_one(w, g, v, e, lr, momentum, wd, gscale);
}

extern "C" cudaError_t dse_cuk_sgd_tallied(cudaStream_t s, float *w, const float *g, float *v, int64_t n, float lr,
                                           float momentum, float wd, const struct dse_cuk_tally *t) {
    k_sgd_tallied<<<blocks_for(n), THREADS, 0, s>>>(w, g, v, n, lr, momentum, wd, t);
    return cudaGetLastError();
}
