/* pcg32.h: the PCG32 random number generator (PCG-XSH-RR, 64-bit state, 32-bit output),
 * written from M. O'Neill, "PCG: A Family of Simple Fast Space-Efficient Statistically
 * Good Algorithms for Random Number Generation" (2014) and its reference pcg32_random_r.
 * The state lives in a struct its user owns; nothing global. */
#ifndef DSE_BASE_PCG32_H
#define DSE_BASE_PCG32_H

#include <stdint.h>

struct dse_pcg32 {
    uint64_t state;
    uint64_t inc; /* stream selector, always odd */
};

/* pcg32_srandom_r: seed and stream (initseq) pick one of 2^63 independent streams. */
void     dse_pcg32_seed(struct dse_pcg32 *r, uint64_t seed, uint64_t stream);
/* pcg32_random_r; inline, as loops drawing one number per value (dropout masks) call it.
 * Jump-ahead: dse_pcg32_advance (engine/kernels_shared.h, shared with the GPU kernels). */
static inline uint32_t dse_pcg32_next(struct dse_pcg32 *r) {
    uint64_t old = r->state;
    r->state = old * 6364136223846793005ULL + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
}
/* Uniform in [0, bound) without modulo bias (pcg32_boundedrand_r); bound >= 1. */
uint32_t dse_pcg32_bounded(struct dse_pcg32 *r, uint32_t bound);
/* Uniform in [0, bound) for 64-bit bounds (rejection sampling on two draws); bound >= 1. */
uint64_t dse_pcg32_bounded64(struct dse_pcg32 *r, uint64_t bound);

/* FNV-1a 64-bit hash of n bytes, continuing from h (start with DSE_FNV64_INIT). Used
 * for stable candidate ids and file fingerprints, not for security. */
#define DSE_FNV64_INIT 14695981039346656037ULL
uint64_t dse_fnv1a64(uint64_t h, const void *data, uint64_t n);

#endif
