/* mm.c: our own matrix kernels for the DIRECT conv strategy (conv2d.c): a 1x1 conv's
 * forward (y = w x + b, ReLU) and data gradient (dx += w^T dy) as C = A B straight on the
 * NCHW planes, with the bias and ReLU applied in registers before the one store; and its
 * weight gradient (dw += dy x^T over several images) as dot products kept in registers
 * across the images; and a 3x3 stride-1 conv's three passes (dse_cpu_cv, dse_cpu_cv_dw) with
 * vectors over the output channels, on planes the caller pads and filters it packs
 * (conv2d.c). The kernels allocate nothing.
 *
 * Two instruction sets, chosen at run time (the build targets baseline x86-64; each
 * function carries a target attribute): AVX-512F, and AVX2 + FMA. Both give the same
 * bits: every C element is one chain of fused multiply-adds over k in order, whatever the
 * vector width, tile or thread; the dot products keep 16 lanes (AVX2: two registers of 8)
 * and add them in one fixed tree (hsum). tests/test_engine_cpu.c "conv-direct" compares the
 * two paths bit for bit and both against GEMM_BATCH.
 *
 * Register tiles (accumulators, of 32 zmm / 16 ymm registers):
 *   C = A B     AVX-512: 6 rows x 4 vectors of 16 columns (24)   AVX2: 6 x 2 vectors of 8 (12)
 *   C += A B^T  AVX-512: 4 x 6 dot products of 16 lanes (24)    AVX2: 2 x 2, two halves each (8)
 * The last vector of a row is loaded and stored under a mask where the columns end. */
#include "engine/cpu/cpu_impl.h"

int dse_cpu_mm_isa(void) {
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (!dse_cpu_avx2() || !__builtin_cpu_supports("fma")) return DSE_CPU_MM_NONE;
    const char *off = getenv("DSE_CPU_NO_AVX512");
    if (__builtin_cpu_supports("avx512f") && !(off && off[0] && off[0] != '0')) return DSE_CPU_MM_AVX512;
    return DSE_CPU_MM_AVX2;
#else
    return DSE_CPU_MM_NONE;
#endif
}

const char *dse_cpu_direct_isa(void) {
    const int isa = dse_cpu_mm_isa();
    return isa == DSE_CPU_MM_AVX512 ? "avx512" : isa == DSE_CPU_MM_AVX2 ? "avx2" : NULL;
}

#ifdef DSE_CPU_HAS_AVX2_CODE

#define AI __attribute__((always_inline)) static inline

/* C = A B runs k in blocks of MM_KB: a column panel's block of B (MM_KB rows of 64
 * columns, 16 KiB) stays in L1 while the row tiles sweep it; the tiles keep their sums in C
 * between blocks, which continues each element's chain exactly (a float stored and loaded
 * is the same float). SqueezeNet-FMNIST's fire3/squeeze1x1 (K = 128: a 32 KiB panel,
 * larger than L1 with A beside it) ran at 55 GFLOP/s without the blocks. */
#define MM_KB 64

#define MM_STR_(x) #x
#define MM_UNROLL(n) _Pragma(MM_STR_(GCC unroll n))

/* C = A B's register tile (dse_cpu_mm) for one instruction set, written once for both:
 * mr <= 6 rows from m0 by nv <= NVMAX vectors VEC of VL columns from n0, k in [k0, k1); the
 * last vector of a row loaded and stored under the mask tail (FULL: every lane). Rows are
 * loaded from C unless this is the first block of k and the call does not accumulate; on the
 * last block (and not accumulating) the bias and ReLU (max with +0: NaN and -0 give +0, as
 * dse_cpu_relu) are applied in registers before the store. MM_OP(W, x) is the instruction
 * set's _mm<W>_x; MLOAD, MSTORE and BCAST are the ones whose names or arguments differ. The
 * two instances compile to the machine code of the two functions they replaced. */
#define MM_OP(W, x) _mm##W##_##x
#define MM_TILE(NAME, TARGET, VEC, VL, NVMAX, MASK, FULL, MLOAD, MSTORE, BCAST, W)                                  \
    TARGET AI void NAME(const struct dse_mm *p, int64_t m0, int64_t n0, int64_t k0, int64_t k1, const int mr,       \
                        const int nv, MASK tail) {                                                                  \
        VEC acc[6][NVMAX];                                                                                          \
        const MASK full = FULL;                                                                                     \
        float *c = p->c + m0 * p->ldc + n0;                                                                         \
        const int load = p->acc || k0 > 0, last = k1 == p->K;                                                       \
        MM_UNROLL(6) for (int r = 0; r < mr; r++)                                                                   \
            MM_UNROLL(NVMAX) for (int v = 0; v < nv; v++) acc[r][v] =                                               \
                load ? MLOAD(c + r * p->ldc + VL * v, v == nv - 1 ? tail : full) : MM_OP(W, setzero_ps)();          \
        const float *a = p->a + m0 * p->a_rs + k0 * p->a_ks, *b = p->b + k0 * p->ldb + n0;                          \
        for (int64_t k = k0; k < k1; k++, a += p->a_ks, b += p->ldb) {                                              \
            VEC bv[NVMAX];                                                                                          \
            MM_UNROLL(NVMAX) for (int v = 0; v < nv; v++) bv[v] = MLOAD(b + VL * v, v == nv - 1 ? tail : full);     \
            MM_UNROLL(6) for (int r = 0; r < mr; r++) {                                                             \
                const VEC av = BCAST(a, r * p->a_rs);                                                               \
                MM_UNROLL(NVMAX) for (int v = 0; v < nv; v++) acc[r][v] = MM_OP(W, fmadd_ps)(av, bv[v], acc[r][v]); \
            }                                                                                                       \
        }                                                                                                           \
        MM_UNROLL(6) for (int r = 0; r < mr; r++) {                                                                 \
            const int epi = last && !p->acc;                                                                        \
            const VEC bias = MM_OP(W, set1_ps)(epi && p->bias ? p->bias[m0 + r] : 0.0f);                            \
            MM_UNROLL(NVMAX) for (int v = 0; v < nv; v++) {                                                         \
                VEC o = acc[r][v];                                                                                  \
                if (epi && p->bias) o = MM_OP(W, add_ps)(o, bias);                                                  \
                if (epi && p->relu) o = MM_OP(W, max_ps)(o, MM_OP(W, setzero_ps)());                                \
                MSTORE(c + r * p->ldc + VL * v, v == nv - 1 ? tail : full, o);                                      \
            }                                                                                                       \
        }                                                                                                           \
    }

/* The weight gradient's tile (dse_cpu_cv_dw) for one instruction set, written once for
 * both: vectors VEC of VL floats, CVMAX of them (a block of CVMAX * VL output channels)
 * per (q, t); cv <= CVMAX vectors taken; nq (1 or 2) of the 3 * C rows (ci, r) from q0,
 * all three filter columns t; the block's sums stored to tmp[(q * 3 + t) * CVMAX * VL + co].
 * Each sum is one chain of fused multiply-adds over the images and pixels in order. The
 * two instances compile to the machine code of the two functions they replaced. */
#define CVDW_TILE(NAME, TARGET, VEC, VL, CVMAX, ZERO, LOADU, BCAST, FMADD, STOREU)                                  \
    TARGET AI void NAME(const struct dse_cv_dw *p, int64_t co0, int64_t q0, float *tmp, const int nq,               \
                        const int cv) {                                                                             \
        VEC acc[2][3][CVMAX];                                                                                       \
        MM_UNROLL(2) for (int q = 0; q < nq; q++)                                                                   \
            MM_UNROLL(3) for (int t = 0; t < 3; t++)                                                                \
                MM_UNROLL(CVMAX) for (int v = 0; v < cv; v++) acc[q][t][v] = ZERO();                                \
        for (int64_t i = 0; i < p->imgs; i++) {                                                                     \
            const float *dy = p->dyt + i * p->dyt_i + co0;                                                          \
            const float *xq[2];                                                                                     \
            MM_UNROLL(2) for (int q = 0; q < nq; q++)                                                               \
                xq[q] = p->xp + i * p->xp_i + (q0 + q) / 3 * p->xp_c + (q0 + q) % 3 * p->xp_w;                      \
            for (int64_t oh = 0; oh < p->P; oh++)                                                                   \
                for (int64_t ow = 0; ow < p->Q; ow++, dy += p->dyt_k) {                                             \
                    VEC dv[CVMAX];                                                                                  \
                    MM_UNROLL(CVMAX) for (int v = 0; v < cv; v++) dv[v] = LOADU(dy + VL * v);                       \
                    MM_UNROLL(2) for (int q = 0; q < nq; q++)                                                       \
                        MM_UNROLL(3) for (int t = 0; t < 3; t++) {                                                  \
                            const VEC xb = BCAST(xq[q], oh * p->xp_w + ow + t);                                     \
                            MM_UNROLL(CVMAX) for (int v = 0; v < cv; v++) acc[q][t][v] =                            \
                                FMADD(dv[v], xb, acc[q][t][v]);                                                     \
                        }                                                                                           \
                }                                                                                                   \
        }                                                                                                           \
        MM_UNROLL(2) for (int q = 0; q < nq; q++)                                                                   \
            MM_UNROLL(3) for (int t = 0; t < 3; t++)                                                                \
                MM_UNROLL(CVMAX) for (int v = 0; v < cv; v++)                                                       \
                    STOREU(tmp + (q * 3 + t) * (CVMAX * VL) + VL * v, acc[q][t][v]);                                \
    }

/* ---- AVX-512 ---------------------------------------------------------------------- */

#define T512 __attribute__((target("avx512f")))
#define BCAST512(row, at) _mm512_set1_ps((row)[at])
#define MLOAD512(at, mask) _mm512_maskz_loadu_ps(mask, at)

MM_TILE(mm_tile512, T512, __m512, 16, 4, __mmask16, 0xffff, MLOAD512, _mm512_mask_storeu_ps, BCAST512, 512)

T512 static void mm512(const struct dse_mm *p) {
    for (int64_t n0 = 0; n0 < p->N; n0 += 64) {
        const int64_t rem = p->N - n0;
        const int nv = rem >= 64 ? 4 : (int)((rem + 15) / 16);
        const int last = (int)(rem - 16 * (nv - 1));
        const __mmask16 tail = last >= 16 ? 0xffff : (__mmask16)((1u << last) - 1);
        for (int64_t k0 = 0; k0 < p->K; k0 += MM_KB) {
            const int64_t k1 = p->K - k0 > MM_KB ? k0 + MM_KB : p->K;
            for (int64_t m0 = 0; m0 < p->M; m0 += 6) {
                const int mr = p->M - m0 >= 6 ? 6 : (int)(p->M - m0);
#define MM512(R)                                                         \
    case R:                                                              \
        switch (nv) {                                                    \
        case 1: mm_tile512(p, m0, n0, k0, k1, R, 1, tail); break;         \
        case 2: mm_tile512(p, m0, n0, k0, k1, R, 2, tail); break;         \
        case 3: mm_tile512(p, m0, n0, k0, k1, R, 3, tail); break;         \
        default: mm_tile512(p, m0, n0, k0, k1, R, 4, tail); break;        \
        }                                                                \
        break;
                switch (mr) { MM512(1) MM512(2) MM512(3) MM512(4) MM512(5) MM512(6) }
#undef MM512
            }
        }
    }
}

/* The 16 lanes of v added in the fixed tree: i + (i + 8), then + 4, + 2, + 1. */
T512 AI float hsum512(__m512 v) {
    const __m256 lo = _mm512_castps512_ps256(v), hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    const __m256 s8 = _mm256_add_ps(lo, hi);
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

T512 AI void nt_tile512(const struct dse_mm_nt *p, int64_t m0, int64_t n0, const int mr, const int nr) {
    __m512 acc[4][6];
#pragma GCC unroll 4
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 6
        for (int q = 0; q < nr; q++) acc[r][q] = _mm512_setzero_ps();
    for (int64_t i = 0; i < p->imgs; i++) {
        const float *a = p->a + i * p->a_is + m0 * p->lda, *b = p->b + i * p->b_is + n0 * p->ldb;
        for (int64_t l = 0; l < p->L; l += 16) {
            const __mmask16 mk = p->L - l >= 16 ? 0xffff : (__mmask16)((1u << (p->L - l)) - 1);
            __m512 av[4];
#pragma GCC unroll 4
            for (int r = 0; r < mr; r++) av[r] = _mm512_maskz_loadu_ps(mk, a + r * p->lda + l);
#pragma GCC unroll 6
            for (int q = 0; q < nr; q++) {
                const __m512 bv = _mm512_maskz_loadu_ps(mk, b + q * p->ldb + l);
#pragma GCC unroll 4
                for (int r = 0; r < mr; r++) acc[r][q] = _mm512_fmadd_ps(av[r], bv, acc[r][q]);
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 6
        for (int q = 0; q < nr; q++) p->c[(m0 + r) * p->ldc + n0 + q] += hsum512(acc[r][q]);
}

T512 static void nt512(const struct dse_mm_nt *p) {
    for (int64_t m0 = 0; m0 < p->M; m0 += 4) {
        const int mr = p->M - m0 >= 4 ? 4 : (int)(p->M - m0);
        for (int64_t n0 = 0; n0 < p->N; n0 += 6) {
            const int nr = p->N - n0 >= 6 ? 6 : (int)(p->N - n0);
#define NT512(R)                                                  \
    case R:                                                       \
        switch (nr) {                                             \
        case 1: nt_tile512(p, m0, n0, R, 1); break;                \
        case 2: nt_tile512(p, m0, n0, R, 2); break;                \
        case 3: nt_tile512(p, m0, n0, R, 3); break;                \
        case 4: nt_tile512(p, m0, n0, R, 4); break;                \
        case 5: nt_tile512(p, m0, n0, R, 5); break;                \
        default: nt_tile512(p, m0, n0, R, 6); break;               \
        }                                                         \
        break;
            switch (mr) { NT512(1) NT512(2) NT512(3) NT512(4) }
#undef NT512
        }
    }
}


/* ---- 3x3 convolution tiles (dse_cpu_cv*), AVX-512: 64 output channels (4 vectors) by up
 * to 6 pixels of an output row; weight gradient: 64 channels by 2 (ci, r) rows x 3 s ---- */

T512 AI void cv_tile512(const struct dse_cv *p, const float *wb, const float *x0, float *tmp, const int nr,
                        const int npx, const int cv) {
    __m512 acc[3][6][2];
#pragma GCC unroll 3
    for (int q = 0; q < nr; q++)
#pragma GCC unroll 6
        for (int j = 0; j < npx; j++)
#pragma GCC unroll 2
            for (int v = 0; v < cv; v++) acc[q][j][v] = _mm512_setzero_ps();
    for (int64_t ci = 0; ci < p->C; ci++) {
        const float *xr = x0 + ci * p->xp_c;
#pragma GCC unroll 3
        for (int r = 0; r < 3; r++, xr += p->xp_w)
#pragma GCC unroll 3
            for (int t = 0; t < 3; t++, wb += 64) {
                __m512 wv[2];
#pragma GCC unroll 2
                for (int v = 0; v < cv; v++) wv[v] = _mm512_loadu_ps(wb + 16 * v);
#pragma GCC unroll 3
                for (int q = 0; q < nr; q++)
#pragma GCC unroll 6
                    for (int j = 0; j < npx; j++) {
                        const __m512 xb = _mm512_set1_ps(xr[q * p->xp_w + t + j]);
#pragma GCC unroll 2
                        for (int v = 0; v < cv; v++) acc[q][j][v] = _mm512_fmadd_ps(wv[v], xb, acc[q][j][v]);
                    }
            }
    }
#pragma GCC unroll 3
    for (int q = 0; q < nr; q++)
#pragma GCC unroll 6
        for (int j = 0; j < npx; j++)
#pragma GCC unroll 2
            for (int v = 0; v < cv; v++) _mm512_storeu_ps(tmp + (q * 6 + j) * 64 + 16 * v, acc[q][j][v]);
}

/* Half h (32 channels) of block b, output rows [oh, oh + nr), pixels [ow0, ow0 + npx): up to
 * 3 x 6 pixels by 2 vectors, so that each filter vector loaded serves up to 18 pixels. */
T512 static void cv512(const struct dse_cv *p, int64_t b, int h, int64_t oh, int nr, int64_t ow0, int npx, float *tmp) {
    const int64_t left = p->K - b * 64 - h * 32;
    const int cv = left > 16 ? 2 : 1;
    const float *wb = p->wp + b * p->C * 9 * 64 + h * 32, *x0 = p->xp + oh * p->xp_w + ow0;
    float *tm = tmp + h * 32;
#define CV512J(R, J)                                                  \
    case J:                                                           \
        if (cv == 1) cv_tile512(p, wb, x0, tm, R, J, 1);               \
        else cv_tile512(p, wb, x0, tm, R, J, 2);                       \
        break;
#define CV512(R)                                                                          \
    case R:                                                                               \
        switch (npx) { CV512J(R, 1) CV512J(R, 2) CV512J(R, 3) CV512J(R, 4) CV512J(R, 5) CV512J(R, 6) } \
        break;
    /* dse_cpu_cv takes 3 rows only for pieces of at most 4 pixels (rows x pixels <= 12), so
     * the 3-row tiles of 5 and 6 pixels (36 and 30 registers) are never built */
    if (nr == 3) {
        DSE_ASSERT(npx <= 4);
        switch (npx) { CV512J(3, 1) CV512J(3, 2) CV512J(3, 3) default: CV512J(3, 4) }
        return;
    }
    switch (nr) { CV512(1) CV512(2) }
#undef CV512
#undef CV512J
}

CVDW_TILE(cvdw_tile512, T512, __m512, 16, 4, _mm512_setzero_ps, _mm512_loadu_ps, BCAST512, _mm512_fmadd_ps,
          _mm512_storeu_ps)

T512 static void cvdw512(const struct dse_cv_dw *p, int64_t b, int64_t q0, int nq, float *tmp) {
    const int cv = p->K - b * 64 >= 64 ? 4 : (int)((p->K - b * 64 + 15) / 16);
#define CVDW512(Q)                                                    \
    case Q:                                                           \
        switch (cv) {                                                 \
        case 1: cvdw_tile512(p, b * 64, q0, tmp, Q, 1); break;         \
        case 2: cvdw_tile512(p, b * 64, q0, tmp, Q, 2); break;         \
        case 3: cvdw_tile512(p, b * 64, q0, tmp, Q, 3); break;         \
        default: cvdw_tile512(p, b * 64, q0, tmp, Q, 4); break;        \
        }                                                             \
        break;
    switch (nq) { CVDW512(1) CVDW512(2) }
#undef CVDW512
}

/* ---- AVX2 + FMA ------------------------------------------------------------------- */

#define T256 __attribute__((target("avx2,fma")))
#define BCAST256(row, at) _mm256_broadcast_ss(row + at)

/* The first `count` of 8 lanes (count >= 8: all), as a maskload/maskstore mask. */
T256 AI __m256i lanes256(int64_t count) {
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(count >= 8 ? 8 : (int)(count < 0 ? 0 : count)), idx);
}

MM_TILE(mm_tile256, T256, __m256, 8, 2, __m256i, _mm256_set1_epi32(-1), _mm256_maskload_ps, _mm256_maskstore_ps,
        BCAST256, 256)

T256 static void mm256(const struct dse_mm *p) {
    for (int64_t n0 = 0; n0 < p->N; n0 += 16) {
        const int64_t rem = p->N - n0;
        const int nv = rem > 8 ? 2 : 1;
        const __m256i tail = lanes256(rem - 8 * (nv - 1));
        for (int64_t k0 = 0; k0 < p->K; k0 += MM_KB) {
            const int64_t k1 = p->K - k0 > MM_KB ? k0 + MM_KB : p->K;
            for (int64_t m0 = 0; m0 < p->M; m0 += 6) {
                const int mr = p->M - m0 >= 6 ? 6 : (int)(p->M - m0);
#define MM256(R)                                                                  \
    case R:                                                                       \
        if (nv == 1) mm_tile256(p, m0, n0, k0, k1, R, 1, tail);                    \
        else mm_tile256(p, m0, n0, k0, k1, R, 2, tail);                            \
        break;
                switch (mr) { MM256(1) MM256(2) MM256(3) MM256(4) MM256(5) MM256(6) }
#undef MM256
            }
        }
    }
}

/* hsum512's tree on the 16 lanes lo (0-7) and hi (8-15): the same bits. */
T256 AI float hsum256(__m256 lo, __m256 hi) {
    const __m256 s8 = _mm256_add_ps(lo, hi);
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

T256 AI void nt_tile256(const struct dse_mm_nt *p, int64_t m0, int64_t n0, const int mr, const int nr) {
    __m256 acc[2][2][2]; /* [row][col][half] */
#pragma GCC unroll 2
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 2
        for (int q = 0; q < nr; q++) acc[r][q][0] = acc[r][q][1] = _mm256_setzero_ps();
    for (int64_t i = 0; i < p->imgs; i++) {
        const float *a = p->a + i * p->a_is + m0 * p->lda, *b = p->b + i * p->b_is + n0 * p->ldb;
        for (int64_t l = 0; l < p->L; l += 16) {
            const __m256i mk0 = lanes256(p->L - l), mk1 = lanes256(p->L - l - 8);
            __m256 av[2][2];
#pragma GCC unroll 2
            for (int r = 0; r < mr; r++) {
                av[r][0] = _mm256_maskload_ps(a + r * p->lda + l, mk0);
                av[r][1] = _mm256_maskload_ps(a + r * p->lda + l + 8, mk1);
            }
#pragma GCC unroll 2
            for (int q = 0; q < nr; q++) {
                const __m256 b0 = _mm256_maskload_ps(b + q * p->ldb + l, mk0);
                const __m256 b1 = _mm256_maskload_ps(b + q * p->ldb + l + 8, mk1);
#pragma GCC unroll 2
                for (int r = 0; r < mr; r++) {
                    acc[r][q][0] = _mm256_fmadd_ps(av[r][0], b0, acc[r][q][0]);
                    acc[r][q][1] = _mm256_fmadd_ps(av[r][1], b1, acc[r][q][1]);
                }
            }
        }
    }
#pragma GCC unroll 2
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 2
        for (int q = 0; q < nr; q++) p->c[(m0 + r) * p->ldc + n0 + q] += hsum256(acc[r][q][0], acc[r][q][1]);
}

T256 static void nt256(const struct dse_mm_nt *p) {
    for (int64_t m0 = 0; m0 < p->M; m0 += 2) {
        const int mr = p->M - m0 >= 2 ? 2 : 1;
        for (int64_t n0 = 0; n0 < p->N; n0 += 2) {
            const int nr = p->N - n0 >= 2 ? 2 : 1;
            if (mr == 2) {
                if (nr == 2) nt_tile256(p, m0, n0, 2, 2);
                else nt_tile256(p, m0, n0, 2, 1);
            } else if (nr == 2) {
                nt_tile256(p, m0, n0, 1, 2);
            } else {
                nt_tile256(p, m0, n0, 1, 1);
            }
        }
    }
}


/* ---- 3x3 convolution tiles, AVX2: 16 output channels (2 vectors) by up to 6 pixels;
 * weight gradient: 16 channels by 2 (ci, r) rows x 3 s. The chains are AVX-512's. ---- */

T256 AI void cv_tile256(const struct dse_cv *p, const float *wb, const float *x0, float *tmp, const int npx,
                        const int cv) {
    __m256 acc[6][2];
#pragma GCC unroll 6
    for (int j = 0; j < npx; j++)
#pragma GCC unroll 2
        for (int v = 0; v < cv; v++) acc[j][v] = _mm256_setzero_ps();
    for (int64_t ci = 0; ci < p->C; ci++) {
        const float *xr = x0 + ci * p->xp_c;
#pragma GCC unroll 3
        for (int r = 0; r < 3; r++, xr += p->xp_w)
#pragma GCC unroll 3
            for (int t = 0; t < 3; t++, wb += 16) {
                __m256 wv[2];
#pragma GCC unroll 2
                for (int v = 0; v < cv; v++) wv[v] = _mm256_loadu_ps(wb + 8 * v);
#pragma GCC unroll 6
                for (int j = 0; j < npx; j++) {
                    const __m256 xb = _mm256_broadcast_ss(xr + t + j);
#pragma GCC unroll 2
                    for (int v = 0; v < cv; v++) acc[j][v] = _mm256_fmadd_ps(wv[v], xb, acc[j][v]);
                }
            }
    }
#pragma GCC unroll 6
    for (int j = 0; j < npx; j++)
#pragma GCC unroll 2
        for (int v = 0; v < cv; v++) _mm256_storeu_ps(tmp + j * 16 + 8 * v, acc[j][v]);
}

T256 static void cv256(const struct dse_cv *p, int64_t b, int64_t oh, int64_t ow0, int npx, float *tmp) {
    const int cv = p->K - b * 16 > 8 ? 2 : 1;
    const float *wb = p->wp + b * p->C * 9 * 16, *x0 = p->xp + oh * p->xp_w + ow0;

#define CV256(J)                                                      \
    case J:                                                           \
        if (cv == 1) cv_tile256(p, wb, x0, tmp, J, 1);                 \
        else cv_tile256(p, wb, x0, tmp, J, 2);                         \
        break;
    switch (npx) { CV256(1) CV256(2) CV256(3) CV256(4) CV256(5) CV256(6) }
#undef CV256
}

CVDW_TILE(cvdw_tile256, T256, __m256, 8, 2, _mm256_setzero_ps, _mm256_loadu_ps, BCAST256,
          _mm256_fmadd_ps, _mm256_storeu_ps)

T256 static void cvdw256(const struct dse_cv_dw *p, int64_t b, int64_t q0, int nq, float *tmp) {
    const int cv = p->K - b * 16 > 8 ? 2 : 1;
    if (nq == 2) {
        if (cv == 2) cvdw_tile256(p, b * 16, q0, tmp, 2, 2);
        else cvdw_tile256(p, b * 16, q0, tmp, 2, 1);
    } else if (cv == 2) {
        cvdw_tile256(p, b * 16, q0, tmp, 1, 2);
    } else {
        cvdw_tile256(p, b * 16, q0, tmp, 1, 1);
    }
}

#endif /* DSE_CPU_HAS_AVX2_CODE */

void dse_cpu_mm(const struct dse_mm *p, int isa) {
    if (p->M <= 0 || p->N <= 0) return;
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa == DSE_CPU_MM_AVX512) mm512(p);
    else if (isa == DSE_CPU_MM_AVX2) mm256(p);
    else DSE_ASSERT(!"dse_cpu_mm without AVX2");
#else
    (void)isa;
    DSE_ASSERT(!"dse_cpu_mm without AVX2");
#endif
}

void dse_cpu_mm_nt(const struct dse_mm_nt *p, int isa) {
    if (p->M <= 0 || p->N <= 0 || p->imgs <= 0 || p->L <= 0) return;
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa == DSE_CPU_MM_AVX512) nt512(p);
    else if (isa == DSE_CPU_MM_AVX2) nt256(p);
    else DSE_ASSERT(!"dse_cpu_mm_nt without AVX2");
#else
    (void)isa;
    DSE_ASSERT(!"dse_cpu_mm_nt without AVX2");
#endif
}

/* ---- 3x3 convolution (dse_cpu_cv*): the instruction-set-free parts ---------------------- */

int dse_cpu_cv_block(int isa) { return isa == DSE_CPU_MM_AVX512 ? 64 : 16; }

void dse_cpu_cv_pack(const float *w, int64_t K, int64_t C, int flip, int CB, float *wp) {
    const int64_t nb = (K + CB - 1) / CB;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t ci = 0; ci < C; ci++)
            for (int e = 0; e < 9; e++) {
                float *d = wp + ((b * C + ci) * 9 + e) * CB;
                for (int l = 0; l < CB; l++) {
                    const int64_t co = b * CB + l;
                    /* flip: output channel co of the data gradient is input channel co of w,
                       its input channel ci w's output channel ci, the filter turned 180 degrees */
                    d[l] = co >= K ? 0.0f : flip ? w[(ci * K + co) * 9 + (8 - e)] : w[(co * C + ci) * 9 + e];
                }
            }
}

/* Output rows [oh, oh + nr), pixels [ow0, ow0 + npx) of block b's channels, from the tile's
 * sums in tmp ([row * 6 + pixel][CB]). */
static void cv_put(const struct dse_cv *p, int CB, int64_t b, int64_t oh, int nr, int64_t ow0, int npx,
                   const float *tmp) {
    const int64_t k1 = (b + 1) * CB < p->K ? (b + 1) * CB : p->K;
    for (int64_t co = b * CB; co < k1; co++)
        for (int q = 0; q < nr; q++) {
            float *y = p->y + co * p->ldy + (oh + q) * p->Q + ow0;
            const float *t = tmp + q * 6 * CB + (co - b * CB);
            if (p->acc) {
                for (int j = 0; j < npx; j++) y[j] += t[j * CB];
            } else {
                const float bias = p->bias ? p->bias[co] : 0.0f;
                for (int j = 0; j < npx; j++) {
                    const float v = p->bias ? t[j * CB] + bias : t[j * CB];
                    y[j] = p->relu ? dse_cpu_relu(v) : v;
                }
            }
        }
}

void dse_cpu_cv(const struct dse_cv *p, int64_t oh0, int64_t oh1, int isa) {
    const int CB = dse_cpu_cv_block(isa);
    const int64_t nb = (p->K + CB - 1) / CB, nseg = (p->Q + 5) / 6, most = (p->Q + nseg - 1) / nseg;
    /* AVX-512 tiles take rows while 2 vectors of pixels stay within 24 registers */
    const int rows = isa == DSE_CPU_MM_AVX512 ? (int)(12 / most > 3 ? 3 : 12 / most) : 1;
    float tmp[3 * 6 * 64];
    for (int64_t b = 0; b < nb; b++)
        for (int64_t oh = oh0; oh < oh1; oh += rows) {
            const int nr = (int)(oh1 - oh < rows ? oh1 - oh : rows);
            for (int64_t g = 0; g < nseg; g++) { /* the row in nseg near-equal pieces of at most 6 */
                const int64_t ow0 = g * p->Q / nseg, ow1 = (g + 1) * p->Q / nseg;
                const int npx = (int)(ow1 - ow0);
#ifdef DSE_CPU_HAS_AVX2_CODE
                if (isa == DSE_CPU_MM_AVX512) {
                    cv512(p, b, 0, oh, nr, ow0, npx, tmp);
                    if (p->K - b * 64 > 32) cv512(p, b, 1, oh, nr, ow0, npx, tmp);
                } else {
                    cv256(p, b, oh, ow0, npx, tmp);
                }
#else
                DSE_ASSERT(!"dse_cpu_cv without AVX2");
#endif
                cv_put(p, CB, b, oh, nr, ow0, npx, tmp);
            }
        }
}

void dse_cpu_cv_dw(const struct dse_cv_dw *p, int isa) {
    const int CB = dse_cpu_cv_block(isa);
    const int64_t nb = (p->K + CB - 1) / CB, rows = p->C * 3;
    float tmp[6 * 64];
    if (p->imgs <= 0) return;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t q0 = 0; q0 < rows; q0 += 2) {
            const int nq = rows - q0 >= 2 ? 2 : 1;
#ifdef DSE_CPU_HAS_AVX2_CODE
            if (isa == DSE_CPU_MM_AVX512) cvdw512(p, b, q0, nq, tmp);
            else cvdw256(p, b, q0, nq, tmp);
#else
            DSE_ASSERT(!"dse_cpu_cv_dw without AVX2");
#endif
            const int64_t k1 = (b + 1) * CB < p->K ? (b + 1) * CB : p->K;
            for (int q = 0; q < nq; q++) {
                const int64_t ci = (q0 + q) / 3, r = (q0 + q) % 3;
                for (int64_t co = b * CB; co < k1; co++)
                    for (int t = 0; t < 3; t++) p->dw[(co * p->C + ci) * 9 + r * 3 + t] += tmp[(q * 3 + t) * CB + (co - b * CB)];
            }
        }
}
