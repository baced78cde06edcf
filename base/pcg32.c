/* pcg32.c: PCG32 from the published algorithm (pcg-random.org, pcg_basic.c), and
 * FNV-1a 64 (Fowler, Noll, Vo; http://www.isthe.com/chongo/tech/comp/fnv/). */
#include "base/pcg32.h"

void dse_pcg32_seed(struct dse_pcg32 *r, uint64_t seed, uint64_t stream) {
    r->state = 0U;
    r->inc   = (stream << 1u) | 1u;
    dse_pcg32_next(r);
    r->state += seed;
    dse_pcg32_next(r);
}

uint32_t dse_pcg32_bounded(struct dse_pcg32 *r, uint32_t bound) {
    uint32_t threshold = -bound % bound; /* 2^32 mod bound: values below it are biased */
    for (;;) {
        uint32_t v = dse_pcg32_next(r);
        if (v >= threshold) return v % bound;
    }
}

uint64_t dse_pcg32_bounded64(struct dse_pcg32 *r, uint64_t bound) {
    if (bound <= UINT32_MAX) return dse_pcg32_bounded(r, (uint32_t)bound);
    uint64_t threshold = -bound % bound;
    for (;;) {
        uint64_t hi = dse_pcg32_next(r); /* two statements: the order of draws is fixed */
        uint64_t v = (hi << 32) | dse_pcg32_next(r);
        if (v >= threshold) return v % bound;
    }
}

uint64_t dse_fnv1a64(uint64_t h, const void *data, uint64_t n) {
    const unsigned char *p = data;
    for (uint64_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}
