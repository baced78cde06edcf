/* kernels_shared.h: arithmetic the CPU kernels (engine/cpu/), the CUDA kernels
 * (engine/cuda/kernels.cu) and host code all run, written once: PCG32's jump-ahead, so
 * every GPU thread finds its own place in the CPU backend's dropout stream; division by a
 * launch's fixed divisors; Caffe's pooling window bounds (engine/cpu/pool.c); gradient
 * clipping's factor. No CUDA headers: host C code and tests include it in every build, and
 * engine/cpu/ never includes engine/cuda/. */
#ifndef DSE_ENGINE_KERNELS_SHARED_H
#define DSE_ENGINE_KERNELS_SHARED_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define DSE_HD __host__ __device__
#else
#define DSE_HD
#endif

#define DSE_PCG32_MULT 6364136223846793005ULL

/* The affine map of `delta` PCG32 steps (stream increment inc): stepping a state delta
 * times (the LCG s -> s * MULT + inc) is s -> *mult * s + *plus, found in O(log delta)
 * (Brown, "Random Number Generation with Arbitrary Strides", 1994; pcg_advance_lcg_64
 * in the PCG reference). A GPU thread whose values lie delta apart in the stream steps
 * its state with the map: one multiply-add per draw, whatever delta is. */
static inline DSE_HD void dse_pcg32_jump(uint64_t inc, uint64_t delta, uint64_t *mult_out, uint64_t *plus_out) {
    uint64_t mult = DSE_PCG32_MULT, plus = inc, acc_mult = 1u, acc_plus = 0u;
    while (delta > 0) {
        if (delta & 1u) {
            acc_mult *= mult;
            acc_plus = acc_plus * mult + plus;
        }
        plus = (mult + 1u) * plus;
        mult *= mult;
        delta >>= 1;
    }
    *mult_out = acc_mult, *plus_out = acc_plus;
}

/* The PCG32 state after `delta` more steps from `state`. The k-th draw after `state`
 * (k = 0 first) is the output of the state advanced k times, so a thread that starts at
 * value k of a mask draws what dse_pcg32_next would have. */
static inline DSE_HD uint64_t dse_pcg32_advance(uint64_t state, uint64_t inc, uint64_t delta) {
    uint64_t mult, plus;
    dse_pcg32_jump(inc, delta, &mult, &plus);
    return mult * state + plus;
}

/* PCG-XSH-RR output of a state (what dse_pcg32_next returns before stepping). */
static inline DSE_HD uint32_t dse_pcg32_output(uint64_t old) {
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

/* Division by a divisor fixed for a whole kernel launch, without the divide
 * instruction sequence (a 32-bit division costs about 20 instructions on a GPU, a 64-bit
 * one a hundred): n / d = (n * m') >> (32 + s), with s = ceil(log2 d) and
 * m' = floor(2^(32+s) / d) + 1 = 2^32 + m (Granlund and Montgomery, "Division by
 * Invariant Integers using Multiplication", 1994, section 4; PyTorch's IntDivider).
 * Why it is exact for every n < 2^32 and 1 <= d <= 2^31: m' = 2^(32+s)/d + e with
 * 0 < e <= 1, so n m' / 2^(32+s) = n/d + n e / 2^(32+s), and the error n e / 2^(32+s) <
 * 2^32 / 2^(32+s) = 1 / 2^s <= 1/d cannot carry n/d past the next integer (whose
 * distance from n/d is at least 1/d). m < 2^32 since s is the least with 2^s >= d. All
 * in 64 bits, so nothing overflows. Test host-divmod checks it against `/` on the edges and at random. */
struct dse_div {
    uint32_t d, m, s;
};

static inline DSE_HD struct dse_div dse_div_make(uint32_t d) {
    struct dse_div v;
    uint32_t s = 0;
    while (((uint64_t)1 << s) < d) s++;
    v.d = d, v.s = s;
    v.m = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << s) - d)) / d + 1u);
    return v;
}

/* n / v.d */
static inline DSE_HD uint32_t dse_div_q(struct dse_div v, uint32_t n) {
    return (uint32_t)(((((uint64_t)n * v.m) >> 32) + n) >> v.s);
}

/* Pooling window i along one axis, Caffe's rule (engine/cpu/pool.c): [*lo, *hi) clipped
 * to the input; *count is the average's divisor, the window clipped to the PADDED input
 * only. An empty window (lo >= hi or count <= 0) gives 0 and no gradient. */
static inline DSE_HD void dse_pool_bounds(int i, int k, int stride, int pad, int in, int *lo, int *hi,
                                          int *count) {
    int start = i * stride - pad, end = start + k;
    if (end > in + pad) end = in + pad;
    *count = end - start;
    *lo = start < 0 ? 0 : start;
    *hi = end > in ? in : end;
}

/* Clipping to the global L2 norm clip (dse_model_clip_grad on the host, the step tally's
 * kernel on a device): *norm = sqrt(sumsq); the gradients' factor is clip / *norm when clip
 * > 0 and *norm is finite and above it (*clipped = 1), else 1 (*clipped = 0). One
 * definition for both, in double, so both give the same bits. */
static inline DSE_HD float dse_clip_factor(double sumsq, double clip, double *norm, int *clipped) {
    *norm = sqrt(sumsq);
    *clipped = clip > 0 && isfinite(*norm) && *norm > clip;
    return *clipped ? (float)(clip / *norm) : 1.0f;
}

#endif
