/* shared.h: arithmetic the CUDA kernels (engine/cuda/kernels.cu) and host code both run,
 * written once: PCG32's jump-ahead, so every GPU thread finds its own place in the CPU
 * backend's dropout stream, and Caffe's pooling window bounds (engine/cpu/pool.c). No
 * CUDA headers: host C code and tests include it in every build. */
#ifndef DSE_ENGINE_CUDA_SHARED_H
#define DSE_ENGINE_CUDA_SHARED_H

#include <stdint.h>

#ifdef __CUDACC__
#define DSE_HD __host__ __device__
#else
#define DSE_HD
#endif

#define DSE_PCG32_MULT 6364136223846793005ULL

/* The PCG32 state after `delta` more steps from `state` (stream increment inc): the LCG
 * s -> s * MULT + inc applied delta times, in O(log delta) (Brown, "Random Number
 * Generation with Arbitrary Strides", 1994; pcg_advance_lcg_64 in the PCG reference).
 * The k-th draw after `state` (k = 0 first) is the output of the state advanced k times,
 * so a thread that starts at value k of a mask draws what dse_pcg32_next would have. */
static inline DSE_HD uint64_t dse_pcg32_advance(uint64_t state, uint64_t inc, uint64_t delta) {
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
    return acc_mult * state + acc_plus;
}

/* PCG-XSH-RR output of a state (what dse_pcg32_next returns before stepping). */
static inline DSE_HD uint32_t dse_pcg32_output(uint64_t old) {
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
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

#endif
