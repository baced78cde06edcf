/* layout.c: moving floats between the layouts the direct convolutions want (conv2d.c): planes
 * padded with zeros, and a gradient turned pixel-major. Pure copies: every value arrives as it
 * left, so the engine's bits do not depend on which path did the moving.
 *
 * SqueezeNet-FMNIST's maps are 28, 14, 7 and 3 floats wide: a libc memcpy and two memsets a
 * row (as these were written first) cost more than the copying (figures: docs/training.md,
 * 2026-11-29). Rows are copied in constant-size pieces (dse_cpu_copy4), and the zeros between
 * two rows (the right pad of one, the left of the next) are one store for pads up to 2. */
#include "engine/engine.h"

#include <string.h>

#include "engine/cpu/cpu_impl.h"

void dse_cpu_pad_planes(const float *x, int64_t C, int H, int W, int ph, int pw, float *xp) {
    const int64_t Wp = W + 2 * pw, Hp = H + 2 * ph;
    for (int64_t c = 0; c < C; c++) {
        float *d = xp + c * Hp * Wp;
        const float *src = x + c * (int64_t)H * W;
        memset(d, 0, (size_t)(ph * Wp + pw) * sizeof(float)); /* the top rows, row 0's left pad */
        for (int h = 0; h < H; h++) {
            float *row = d + (ph + h) * Wp + pw;
            dse_cpu_copy4(row, src + (int64_t)h * W, W);
            if (h + 1 == H) break;
            float *gap = row + W; /* this row's right pad and the next one's left */
            switch (pw) {
            case 0: break;
            case 1: gap[0] = gap[1] = 0.0f; break;
            case 2: gap[0] = gap[1] = gap[2] = gap[3] = 0.0f; break;
            default: memset(gap, 0, (size_t)(2 * pw) * sizeof(float));
            }
        }
        memset(d + (ph + H - 1) * Wp + pw + W, 0, (size_t)(pw + ph * Wp) * sizeof(float)); /* and the bottom */
    }
}

/* One load a cache line, in address order: the lines come from L3 or memory as one stream
 * the hardware prefetcher follows, ahead of a kernel that reads them in strided panels. */
void dse_cpu_touch(const void *p, size_t bytes) {
    const volatile char *b = p;
    for (size_t o = 0; o < bytes; o += 64) (void)b[o];
    if (bytes) (void)b[bytes - 1];
}

#ifdef DSE_CPU_HAS_AVX2_CODE
/* 8 channels x 8 pixels of g (rows of ld floats) into 8 pixels x 8 channels of d (rows of
 * dld floats): the usual 8x8 transpose in unpacks and 128-bit swaps. */
__attribute__((target("avx2"))) static inline void t8x8(const float *g, int64_t ld, float *d, int64_t dld) {
    __m256 r[8], t[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(g + i * ld);
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_ps(d + i * dld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
        _mm256_storeu_ps(d + (i + 4) * dld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
    }
}

/* The whole 8x8 blocks of dse_cpu_to_pixels; returns the pixels done (a multiple of 8). */
__attribute__((target("avx2"))) static int64_t to_pixels_avx2(const float *g, int64_t K, int64_t PQ, int64_t kt,
                                                               float *d) {
    const int64_t q8 = PQ / 8 * 8, k8 = K / 8 * 8;
    for (int64_t q = 0; q < q8; q += 8) {
        for (int64_t k = 0; k < k8; k += 8) t8x8(g + k * PQ + q, PQ, d + q * kt + k, kt);
        for (int64_t i = q; i < q + 8; i++) /* channels past the last 8, then the zeros to kt */
            for (int64_t k = k8; k < kt; k++) d[i * kt + k] = k < K ? g[k * PQ + i] : 0.0f;
    }
    return q8;
}
#endif

#ifdef DSE_CPU_HAS_AVX2_CODE
/* The whole blocks of 8 of dse_cpu_take2 whose 16 floats lie below s[2 n - 1]; returns the
 * values done. Two loads, their even floats (dse_avx2_half, as pooling's windows take them). */
__attribute__((target("avx2"))) static int64_t take2_avx2(float *d, const float *s, int64_t n) {
    int64_t q = 0;
    for (; q + 8 < n; q += 8)
        _mm256_storeu_ps(d + q, dse_avx2_half(_mm256_loadu_ps(s + 2 * q), _mm256_loadu_ps(s + 2 * q + 8), 0));
    return q;
}

/* All of dse_cpu_take2 in blocks of 16: 32 floats loaded under masks (nothing at or past
 * s[2 n - 1] is read), their even ones kept. */
__attribute__((target("avx512f"))) static void take2_512(float *d, const float *s, int64_t n) {
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    for (int64_t q = 0; q < n; q += 16) {
        const int64_t rem = n - q < 16 ? n - q : 16, last = 2 * rem - 1; /* s[2 q, 2 q + last) */
        const __m512 lo = _mm512_maskz_loadu_ps(dse_cpu_lanes16(last), s + 2 * q);
        const __m512 hi = last > 16 ? _mm512_maskz_loadu_ps(dse_cpu_lanes16(last - 16), s + 2 * q + 16)
                                    : _mm512_setzero_ps(); /* no pointer past the row's end */
        _mm512_mask_storeu_ps(d + q, dse_cpu_lanes16(rem), _mm512_permutex2var_ps(lo, even, hi));
    }
}
#endif

void dse_cpu_take2(float *restrict d, const float *restrict s, int64_t n, int isa) {
    int64_t q = 0;
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa == DSE_CPU_MM_AVX512) {
        take2_512(d, s, n);
        return;
    }
    if (isa == DSE_CPU_MM_AVX2) q = take2_avx2(d, s, n);
#else
    (void)isa;
#endif
    for (; q < n; q++) d[q] = s[2 * q];
}

void dse_cpu_to_pixels(const float *g, int64_t K, int64_t PQ, int64_t kt, float *d, int isa) {
    int64_t q0 = 0;
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa != DSE_CPU_MM_NONE) q0 = to_pixels_avx2(g, K, PQ, kt, d); /* either kernel set has AVX2 */
#else
    (void)isa;
#endif
    for (int64_t q = q0; q < PQ; q++) {
        for (int64_t k = 0; k < K; k++) d[q * kt + k] = g[k * PQ + q];
        for (int64_t k = K; k < kt; k++) d[q * kt + k] = 0.0f;
    }
}
