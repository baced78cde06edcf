/* mm_bf16.c: the bf16 matrix kernels of issue #37 (declared in bf16_impl.h): the packing of
 * float operands into bf16 k-pairs and rows, C = A B (+ bias, ReLU; or C += A B) and the
 * weight gradient's C += A B^T summed over images, on AVX512-BF16's vdpbf16ps, with float
 * accumulation. Each has a portable C reference doing the same arithmetic in the same
 * order, so the two give the same bits on normal numbers (tests/test_engine_cpu_bf16.c;
 * the hardware flushes denormal products and sums, which the reference does not copy).
 *
 * Every C element is one chain in a fixed order whatever the tile or thread (as mm.c's):
 *   C = A B     k-pairs in order, the whole chain in a register; tile 6 rows x 4 vectors of
 *               16 columns;
 *   C += A B^T  16 lanes over the images and 32-element blocks of l in order, added in
 *               mm.c's tree (i + (i + 8), then + 4, + 2, + 1); tile 4 x 6 dot products.
 * The functions carry target attributes (the build stays baseline x86-64) and run only
 * where dse_cpu_bf16_isa() says so. */
#include "engine/cpu/bf16_impl.h"

#include <stdlib.h>

static int env_off(const char *name) {
    const char *v = getenv(name);
    return v && v[0] && v[0] != '0';
}

const char *dse_cpu_bf16_why(void) {
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (!__builtin_cpu_supports("avx512bf16") || !__builtin_cpu_supports("avx512f") ||
        !__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512vl"))
        return "this CPU lacks avx512_bf16 (AVX512-BF16's vdpbf16ps, with AVX-512 F, BW and VL)";
    if (env_off("DSE_CPU_NO_BF16")) return "DSE_CPU_NO_BF16 is set";
    if (env_off("DSE_CPU_NO_AVX512")) return "DSE_CPU_NO_AVX512 is set";
    return NULL;
#else
    return "this build has no x86-64 AVX-512 code (avx512_bf16)";
#endif
}

int dse_cpu_bf16_isa(void) {
    return dse_cpu_bf16_why() ? DSE_CPU_BF16_REF : dse_cpu_bf16_amx_ok() ? DSE_CPU_BF16_AMX : DSE_CPU_BF16_AVX512;
}

const char *dse_cpu_bf16_kernels(void) { return dse_cpu_bf16_isa_str(dse_cpu_bf16_isa()); }

const char *dse_cpu_bf16_isa_str(int isa) {
#define DSE_CPU_BF16_NAME_(id, name) [DSE_CPU_BF16_##id] = name,
    static const char *const names[] = { DSE_CPU_BF16_ISAS(DSE_CPU_BF16_NAME_) };
#undef DSE_CPU_BF16_NAME_
    return isa >= 0 && isa < (int)(sizeof names / sizeof names[0]) ? names[isa] : "?";
}

/* ---- the C reference ------------------------------------------------------------------ */

/* One vdpbf16ps lane step: acc + a.hi b.hi, then + a.lo b.lo (each product exact). */
static inline float dp_step(float acc, uint32_t a, uint32_t b) {
    acc += dse_bf16_to_float((dse_bf16)(a >> 16)) * dse_bf16_to_float((dse_bf16)(b >> 16));
    acc += dse_bf16_to_float((dse_bf16)(a & 0xffffu)) * dse_bf16_to_float((dse_bf16)(b & 0xffffu));
    return acc;
}

static void mm_ref(const struct dse_mm_bf16 *p) {
    for (int64_t m = 0; m < p->M; m++)
        for (int64_t n = 0; n < p->N; n++) {
            float *c = p->c + m * p->ldc + n;
            float acc = p->acc ? *c : 0.0f;
            for (int64_t k = 0; k < p->KP; k++)
                acc = dp_step(acc, p->ap[m * p->lda + k], p->bp[(p->boff ? p->boff[k] : k * p->ldb) + n]);
            if (!p->acc && p->bias) acc += p->bias[m];
            *c = !p->acc && p->relu ? dse_cpu_relu(acc) : acc;
        }
}

/* mm.c's hsum512 tree on 16 lanes. */
static float hsum_ref(const float *l) {
    float s8[8], s4[4];
    for (int i = 0; i < 8; i++) s8[i] = l[i] + l[i + 8];
    for (int i = 0; i < 4; i++) s4[i] = s8[i] + s8[i + 4];
    return (s4[0] + s4[2]) + (s4[1] + s4[3]);
}

static void nt_ref(const struct dse_mm_nt_bf16 *p) {
    for (int64_t m = 0; m < p->M; m++)
        for (int64_t n = 0; n < p->N; n++) {
            float lane[16] = { 0 };
            for (int64_t i = 0; i < p->imgs; i++) {
                const dse_bf16 *a = p->a + i * p->a_is + m * p->lda;
                const dse_bf16 *b = p->b + i * p->b_is + (p->boff ? p->boff[n] : n * p->ldb);
                for (int64_t l = 0; l < p->L; l += 32)
                    for (int j = 0; j < 16; j++) {
                        const dse_bf16 *x = a + l + 2 * j, *y = b + l + 2 * j;
                        lane[j] = dp_step(lane[j], (uint32_t)x[0] | (uint32_t)x[1] << 16,
                                          (uint32_t)y[0] | (uint32_t)y[1] << 16);
                    }
            }
            float *c = p->c + m * p->ldc + n;
            *c = p->set ? hsum_ref(lane) : *c + hsum_ref(lane);
        }
}

/* dy[at] as the fused ReLU's mask leaves it (by yf's or y16's value at at; neither: kept). */
static inline float dy_kept(const float *dy, const float *yf, const uint16_t *y16, int64_t at) {
    return (yf ? yf[at] > 0.0f : y16 ? dse_cpu_relu_pos16(y16[at]) : 1) ? dy[at] : 0.0f;
}

/* ---- AVX512-BF16 -------------------------------------------------------------------------- */

#ifdef DSE_CPU_HAS_AVX2_CODE

#define AI __attribute__((always_inline)) static inline
#define TBF __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define MM_STR_(x) #x
#define MM_UNROLL(n) _Pragma(MM_STR_(GCC unroll n))

TBF AI __m512 dp512(__m512 acc, __m512i a, __m512i b) {
    return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b);
}

TBF AI void mm_tile(const struct dse_mm_bf16 *p, int64_t m0, int64_t n0, const int mr, const int nv, __mmask16 tail) {
    __m512 acc[6][4];
    float *c = p->c + m0 * p->ldc + n0;
    const int load = p->acc;
    MM_UNROLL(6) for (int r = 0; r < mr; r++)
        MM_UNROLL(4) for (int v = 0; v < nv; v++)
            acc[r][v] = load ? _mm512_maskz_loadu_ps(v == nv - 1 ? tail : 0xffff, c + r * p->ldc + 16 * v)
                             : _mm512_setzero_ps();
    const uint32_t *a = p->ap + m0 * p->lda;
    for (int64_t k = 0; k < p->KP; k++, a++) {
        const uint32_t *b = p->bp + (p->boff ? p->boff[k] : k * p->ldb) + n0;
        __m512i bv[4];
        MM_UNROLL(4) for (int v = 0; v < nv; v++)
            bv[v] = _mm512_maskz_loadu_epi32(v == nv - 1 ? tail : 0xffff, b + 16 * v);
        MM_UNROLL(6) for (int r = 0; r < mr; r++) {
            const __m512i av = _mm512_set1_epi32((int)a[r * p->lda]);
            MM_UNROLL(4) for (int v = 0; v < nv; v++) acc[r][v] = dp512(acc[r][v], av, bv[v]);
        }
    }
    const int epi = !p->acc;
    MM_UNROLL(6) for (int r = 0; r < mr; r++) {
        const __m512 bias = _mm512_set1_ps(epi && p->bias ? p->bias[m0 + r] : 0.0f);
        MM_UNROLL(4) for (int v = 0; v < nv; v++) {
            __m512 o = acc[r][v];
            if (epi && p->bias) o = _mm512_add_ps(o, bias);
            if (epi && p->relu) o = _mm512_max_ps(o, _mm512_setzero_ps());
            _mm512_mask_storeu_ps(c + r * p->ldc + 16 * v, v == nv - 1 ? tail : 0xffff, o);
        }
    }
}

/* Each tile's chains whole, k-pairs in order (no blocks of k: the B panel's rows come from L2
 * fast enough for the 24 products each 4 of them feed, and C's tile is not stored and loaded
 * again between blocks; the in-cache rate went from 200-221 to 218-232 GFLOP/s on
 * SqueezeNet's shapes on the 2-core Zen 4). */
TBF static void mm512(const struct dse_mm_bf16 *p) {
    for (int64_t n0 = 0; n0 < p->N; n0 += 64) {
        const int64_t rem = p->N - n0;
        const int nv = rem >= 64 ? 4 : (int)((rem + 15) / 16);
        const __mmask16 tail = dse_cpu_lanes16(rem - 16 * (nv - 1));
        for (int64_t m0 = 0; m0 < p->M; m0 += 6) {
            const int mr = p->M - m0 >= 6 ? 6 : (int)(p->M - m0);
#define MMB(R)                                                 \
    case R:                                                    \
        switch (nv) {                                          \
        case 1: mm_tile(p, m0, n0, R, 1, tail); break;          \
        case 2: mm_tile(p, m0, n0, R, 2, tail); break;          \
        case 3: mm_tile(p, m0, n0, R, 3, tail); break;          \
        default: mm_tile(p, m0, n0, R, 4, tail); break;         \
        }                                                      \
        break;
            switch (mr) { MMB(1) MMB(2) MMB(3) MMB(4) MMB(5) MMB(6) }
#undef MMB
        }
    }
}

/* hsum_ref's tree (mm.c's hsum512). */
TBF AI float hsum512(__m512 v) {
    const __m256 lo = _mm512_castps512_ps256(v), hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    const __m256 s8 = _mm256_add_ps(lo, hi);
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

TBF AI void nt_tile(const struct dse_mm_nt_bf16 *p, int64_t m0, int64_t n0, const int mr, const int nr) {
    __m512 acc[4][6];
    MM_UNROLL(4) for (int r = 0; r < mr; r++)
        MM_UNROLL(6) for (int q = 0; q < nr; q++) acc[r][q] = _mm512_setzero_ps();
    for (int64_t i = 0; i < p->imgs; i++) {
        const dse_bf16 *a = p->a + i * p->a_is + m0 * p->lda, *bq[6];
        MM_UNROLL(6) for (int q = 0; q < nr; q++)
            bq[q] = p->b + i * p->b_is + (p->boff ? p->boff[n0 + q] : (n0 + q) * p->ldb);
        for (int64_t l = 0; l < p->L; l += 32) {
            __m512i av[4];
            MM_UNROLL(4) for (int r = 0; r < mr; r++) av[r] = _mm512_loadu_si512(a + r * p->lda + l);
            MM_UNROLL(6) for (int q = 0; q < nr; q++) {
                const __m512i bv = _mm512_loadu_si512(bq[q] + l);
                MM_UNROLL(4) for (int r = 0; r < mr; r++) acc[r][q] = dp512(acc[r][q], av[r], bv);
            }
        }
    }
    MM_UNROLL(4) for (int r = 0; r < mr; r++)
        MM_UNROLL(6) for (int q = 0; q < nr; q++) {
            float *c = p->c + (m0 + r) * p->ldc + n0 + q;
            *c = p->set ? hsum512(acc[r][q]) : *c + hsum512(acc[r][q]);
        }
}

TBF static void nt512(const struct dse_mm_nt_bf16 *p) {
    for (int64_t m0 = 0; m0 < p->M; m0 += 4) {
        const int mr = p->M - m0 >= 4 ? 4 : (int)(p->M - m0);
        for (int64_t n0 = 0; n0 < p->N; n0 += 6) {
            const int nr = p->N - n0 >= 6 ? 6 : (int)(p->N - n0);
#define NTB(R)                                                 \
    case R:                                                    \
        switch (nr) {                                          \
        case 1: nt_tile(p, m0, n0, R, 1); break;                \
        case 2: nt_tile(p, m0, n0, R, 2); break;                \
        case 3: nt_tile(p, m0, n0, R, 3); break;                \
        case 4: nt_tile(p, m0, n0, R, 4); break;                \
        case 5: nt_tile(p, m0, n0, R, 5); break;                \
        default: nt_tile(p, m0, n0, R, 6); break;               \
        }                                                      \
        break;
            switch (mr) { NTB(1) NTB(2) NTB(3) NTB(4) }
#undef NTB
        }
    }
}

/* 16 floats (under mask mk) to bf16 as dse_bf16_of: vcvtneps2bf16. */
TBF AI __m256i cvt16(const float *x, __mmask16 mk) {
    return (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(mk, x));
}

/* 16 k-pairs from 16 bf16 values each: lo's in the low halves, hi's in the high
 * (dse_bf16_pair's layout). */
TBF AI __m512i pair_words(__m256i lo, __m256i hi) {
    return _mm512_or_si512(_mm512_cvtepu16_epi32(lo), _mm512_slli_epi32(_mm512_cvtepu16_epi32(hi), 16));
}

TBF static void pack_b512(const float *b, int64_t K, int64_t N, int64_t ldb, uint32_t *bp, int64_t ldp) {
    for (int64_t kp = 0; kp < (K + 1) / 2; kp++) {
        const float *r0 = b + 2 * kp * ldb, *r1 = r0 + ldb;
        const int odd = 2 * kp + 1 < K;
        for (int64_t n = 0; n < N; n += 16) {
            const __mmask16 mk = dse_cpu_lanes16(N - n);
            const __m512i v = pair_words(cvt16(r0 + n, mk), odd ? cvt16(r1 + n, mk) : _mm256_setzero_si256());
            _mm512_mask_storeu_epi32(bp + kp * ldp + n, mk, v);
        }
    }
}

TBF static void pack_rows512(const float *x, int64_t rows, int64_t L, int64_t ldx, dse_bf16 *out, int64_t ldo,
                             int64_t Lp) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t l = 0; l < Lp; l += 16) {
            const __mmask16 st = dse_cpu_lanes16(Lp - l);
            const __m256i v = l < L ? cvt16(x + r * ldx + l, dse_cpu_lanes16(L - l)) : _mm256_setzero_si256();
            _mm256_mask_storeu_epi16(out + r * ldo + l, st, v);
        }
}

/* dse_bf16_pack_a of columns (a_rs 1): 16 rows' pair kp at once from two runs of A's
 * columns, scattered lda words apart. */
TBF static void pack_cols512(const float *a, int64_t M, int64_t K, int64_t a_ks, uint32_t *ap, int64_t lda) {
    const __m512i step = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                            _mm512_set1_epi32((int)lda));
    for (int64_t kp = 0; kp < (K + 1) / 2; kp++) {
        const float *c0 = a + 2 * kp * a_ks, *c1 = c0 + a_ks;
        const int odd = 2 * kp + 1 < K;
        for (int64_t m = 0; m < M; m += 16) {
            const __mmask16 mk = dse_cpu_lanes16(M - m);
            const __m512i v = pair_words(cvt16(c0 + m, mk), odd ? cvt16(c1 + m, mk) : _mm256_setzero_si256());
            _mm512_mask_i32scatter_epi32(ap + m * lda + kp, mk, step, v, 4);
        }
    }
}

/* dse_bf16_pairs_turned on AVX-512: 16 pairs a step, their lanes reversed. */
TBF static void pairs_turned512(const float *r0, const float *r1, int64_t n, uint32_t *out) {
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    for (int64_t j0 = 0; j0 < n; j0 += 16) {
        const int64_t cnt = n - j0 < 16 ? n - j0 : 16, at = n - j0 - cnt;
        const __mmask16 mk = dse_cpu_lanes16(cnt);
        const __m512i rev = _mm512_sub_epi32(_mm512_set1_epi32((int)cnt - 1), lane); /* lane i: cnt - 1 - i */
        const __m512 a = _mm512_permutexvar_ps(rev, _mm512_maskz_loadu_ps(mk, r0 + at));
        const __m512 b = r1 ? _mm512_permutexvar_ps(rev, _mm512_maskz_loadu_ps(mk, r1 + at)) : _mm512_setzero_ps();
        const __m512i v = pair_words((__m256i)_mm512_cvtneps_pbh(a), r1 ? (__m256i)_mm512_cvtneps_pbh(b)
                                                                         : _mm256_setzero_si256());
        _mm512_mask_storeu_epi32(out + j0, mk, v);
    }
}

/* 16 rows' pair kp at once: a gather of 32-bit words r * ld / 2 + kp apart. */
TBF static void pair_cols512(const dse_bf16 *rows, int64_t R, int64_t L, int64_t ld, uint32_t *out, int64_t ldo) {
    const uint32_t *w = (const uint32_t *)(const void *)rows;
    const __m512i step = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                            _mm512_set1_epi32((int)(ld / 2)));
    for (int64_t r0 = 0; r0 < R; r0 += 16) {
        const __mmask16 mk = dse_cpu_lanes16(R - r0);
        const uint32_t *base = w + r0 * (ld / 2);
        for (int64_t kp = 0; kp < L / 2; kp++) {
            const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), mk, step, base + kp, 4);
            _mm512_mask_storeu_epi32(out + kp * ldo + r0, mk, v);
        }
    }
}

TBF static void pairs_of_rows512(const dse_bf16 *rows, int64_t K, int64_t N, int64_t ld, uint32_t *bp, int64_t ldp) {
    for (int64_t kp = 0; kp < (K + 1) / 2; kp++) {
        const dse_bf16 *r0 = rows + 2 * kp * ld, *r1 = r0 + ld;
        const int odd = 2 * kp + 1 < K;
        for (int64_t n = 0; n < N; n += 16) {
            const __mmask16 mk = dse_cpu_lanes16(N - n);
            const __m512i v = pair_words(_mm256_maskz_loadu_epi16(mk, r0 + n),
                                         odd ? _mm256_maskz_loadu_epi16(mk, r1 + n) : _mm256_setzero_si256());
            _mm512_mask_storeu_epi32(bp + kp * ldp + n, mk, v);
        }
    }
}

/* dse_bf16_pack_dy on AVX-512: 16 values a step, the first n8 of each row's also into eight
 * double lanes (the low 8, then the high 8: lane l takes x[l], x[l + 8], ... in order). */
TBF static void pack_dy512(const float *dy, int64_t rows, int64_t L, int64_t ld, const float *yf, const uint16_t *y16,
                           dse_bf16 *out, int64_t ldo, double *sums) {
    const int64_t n8 = L / 8 * 8;
    for (int64_t r = 0; r < rows; r++) {
        const float *x = dy + r * ld;
        __m512d acc = _mm512_setzero_pd();
        for (int64_t l = 0; l < L; l += 16) {
            const __mmask16 mk = dse_cpu_lanes16(L - l);
            __m512 v = _mm512_maskz_loadu_ps(mk, x + l);
            if (yf) v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_maskz_loadu_ps(mk, yf + r * ld + l),
                                                               _mm512_setzero_ps(), _CMP_GT_OQ), v);
            else if (y16) { /* dse_cpu_relu_mask16's rule: bits 0x0001 to 0x7f80 */
                const __m256i y = _mm256_maskz_loadu_epi16(mk, y16 + r * ld + l);
                v = _mm512_maskz_mov_ps(
                    _mm256_cmplt_epu16_mask(_mm256_sub_epi16(y, _mm256_set1_epi16(1)), _mm256_set1_epi16(0x7f80)), v);
            }
            _mm256_mask_storeu_epi16(out + r * ldo + l, mk, (__m256i)_mm512_cvtneps_pbh(v));
            if (sums && l + 8 <= n8) acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
            if (sums && l + 16 <= n8)
                acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
        }
        if (!sums) continue;
        double p[8];
        _mm512_storeu_pd(p, acc);
        double s = dse_cpu_sum_tree(p);
        for (int64_t i = n8; i < L; i++) s += (double)dy_kept(dy, yf, y16, r * ld + i);
        sums[r] += s;
    }
}

/* Lanes [lo, hi) of 32 (each clamped to [0, 32]) as two 16-lane masks. */
AI void s2_masks(int64_t lo, int64_t hi, __mmask16 *m0, __mmask16 *m1) {
    lo = lo < 0 ? 0 : lo > 32 ? 32 : lo, hi = hi < 0 ? 0 : hi > 32 ? 32 : hi;
    const uint32_t m = hi <= lo ? 0u : (hi == 32 ? ~0u : (1u << hi) - 1u) & ~((1u << lo) - 1u);
    *m0 = (__mmask16)(m & 0xffffu), *m1 = (__mmask16)(m >> 16);
}

/* bf16 of row[2 q + o + e] for e < 32 (zero outside [0, W) and past q < n): 32 values in order. */
TBF AI __m512i s2_load(const float *row, int64_t W, int64_t o, int64_t q, int64_t n) {
    const int64_t at = 2 * q + o;
    __mmask16 m0, m1;
    s2_masks(-at, W - at < 2 * (n - q) ? W - at : 2 * (n - q), &m0, &m1);
    /* masked lanes are not read; the address by integers, since it may lie before the row */
    const float *p = (const float *)(uintptr_t)((uintptr_t)row + (uintptr_t)(at * (int64_t)sizeof(float)));
    return (__m512i)_mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(m1, p + 16), _mm512_maskz_loadu_ps(m0, p));
}

TBF static void pairs_s2_512(const float *row, int64_t W, int64_t o, int64_t n, uint32_t *out) {
    for (int64_t q = 0; q < n; q += 16)
        _mm512_mask_storeu_epi32(out + q, dse_cpu_lanes16(n - q), s2_load(row, W, o, q, n));
}

TBF static void take2_s2_512(const float *row, int64_t W, int64_t o, int64_t n, dse_bf16 *out) {
    for (int64_t q = 0; q < n; q += 16) /* the even values: each pair's low 16 bits */
        _mm256_mask_storeu_epi16(out + q, dse_cpu_lanes16(n - q), _mm512_cvtepi32_epi16(s2_load(row, W, o, q, n)));
}

#endif /* DSE_CPU_HAS_AVX2_CODE */

/* ---- dispatch --------------------------------------------------------------------------- */

void dse_bf16_pack_a(const float *a, int64_t M, int64_t K, int64_t a_rs, int64_t a_ks, uint32_t *ap, int64_t lda,
                     int isa) {
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (a_ks == 1 && isa >= DSE_CPU_BF16_AVX512) { /* rows as they lie (the filters forward, fc's backward) */
        pack_rows512(a, M, K, a_rs, (dse_bf16 *)(void *)ap, 2 * lda, 2 * ((K + 1) / 2));
        return;
    }
    if (a_rs == 1 && isa >= DSE_CPU_BF16_AVX512 && 16 * lda < ((int64_t)1 << 31)) { /* columns (w^T) */
        pack_cols512(a, M, K, a_ks, ap, lda);
        return;
    }
#endif
    (void)isa;
    for (int64_t m = 0; m < M; m++)
        for (int64_t kp = 0; kp < (K + 1) / 2; kp++) {
            const float *e = a + m * a_rs + 2 * kp * a_ks;
            ap[m * lda + kp] = dse_bf16_pair(e[0], 2 * kp + 1 < K ? e[a_ks] : 0.0f);
        }
}

void dse_bf16_pairs_turned(const float *r0, const float *r1, int64_t rows, int64_t n, uint32_t *out, int64_t ldo,
                           int isa) {
    for (int64_t i = 0; i < rows; i++) {
        const float *a = r0 + i * n, *b = r1 ? r1 + i * n : NULL;
        uint32_t *o = out + i * ldo;
#ifdef DSE_CPU_HAS_AVX2_CODE
        if (isa >= DSE_CPU_BF16_AVX512) {
            pairs_turned512(a, b, n, o);
            continue;
        }
#endif
        for (int64_t j = 0; j < n; j++) o[j] = dse_bf16_pair(a[n - 1 - j], b ? b[n - 1 - j] : 0.0f);
    }
}

void dse_bf16_pack_b(const float *b, int64_t K, int64_t N, int64_t ldb, uint32_t *bp, int64_t ldp, int isa) {
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa >= DSE_CPU_BF16_AVX512) { /* AMX's packing is AVX512's */
        pack_b512(b, K, N, ldb, bp, ldp);
        return;
    }
#endif
    (void)isa;
    for (int64_t kp = 0; kp < (K + 1) / 2; kp++)
        for (int64_t n = 0; n < N; n++)
            bp[kp * ldp + n] = dse_bf16_pair(b[2 * kp * ldb + n], 2 * kp + 1 < K ? b[(2 * kp + 1) * ldb + n] : 0.0f);
}

void dse_bf16_pack_rows(const float *x, int64_t rows, int64_t L, int64_t ldx, dse_bf16 *out, int64_t ldo,
                        int64_t Lp, int isa) {
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa >= DSE_CPU_BF16_AVX512) {
        pack_rows512(x, rows, L, ldx, out, ldo, Lp);
        return;
    }
#endif
    (void)isa;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t l = 0; l < Lp; l++) out[r * ldo + l] = l < L ? dse_bf16_of(x[r * ldx + l]) : 0;
}

void dse_bf16_pair_cols(const dse_bf16 *rows, int64_t R, int64_t L, int64_t ld, uint32_t *out, int64_t ldo, int isa) {
    DSE_ASSERT(L % 2 == 0 && ld % 2 == 0);
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa >= DSE_CPU_BF16_AVX512 && R * (ld / 2) < ((int64_t)1 << 31)) { /* the gather's int32 offsets */
        pair_cols512(rows, R, L, ld, out, ldo);
        return;
    }
#endif
    (void)isa;
    for (int64_t kp = 0; kp < L / 2; kp++)
        for (int64_t r = 0; r < R; r++)
            out[kp * ldo + r] = (uint32_t)rows[r * ld + 2 * kp] | (uint32_t)rows[r * ld + 2 * kp + 1] << 16;
}

void dse_bf16_pairs_of_rows(const dse_bf16 *rows, int64_t K, int64_t N, int64_t ld, uint32_t *bp, int64_t ldp,
                            int isa) {
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa >= DSE_CPU_BF16_AVX512) {
        pairs_of_rows512(rows, K, N, ld, bp, ldp);
        return;
    }
#endif
    (void)isa;
    for (int64_t kp = 0; kp < (K + 1) / 2; kp++)
        for (int64_t n = 0; n < N; n++)
            bp[kp * ldp + n] = (uint32_t)rows[2 * kp * ld + n] | (2 * kp + 1 < K ? (uint32_t)rows[(2 * kp + 1) * ld + n] << 16 : 0u);
}

/* row[i] as bf16, zero for i outside [0, W) (the lowering's padding). */
static dse_bf16 s2_at(const float *row, int64_t W, int64_t i) {
    return i >= 0 && i < W ? dse_bf16_of(row[i]) : 0;
}

void dse_bf16_pack_dy(const float *dy, int64_t rows, int64_t L, int64_t ld, const float *yf, const uint16_t *y16,
                      dse_bf16 *out, int64_t ldo, double *sums, int isa) {
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa >= DSE_CPU_BF16_AVX512) {
        pack_dy512(dy, rows, L, ld, yf, y16, out, ldo, sums);
        return;
    }
#endif
    (void)isa;
    for (int64_t r = 0; r < rows; r++) {
        double p[8] = { 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0 }, s;
        for (int64_t l = 0; l < L; l++) {
            const float v = dy_kept(dy, yf, y16, r * ld + l);
            out[r * ldo + l] = dse_bf16_of(v);
            if (l < L / 8 * 8) p[l % 8] += (double)v; /* dse_cpu_sum's lanes, */
        }
        s = dse_cpu_sum_tree(p); /* tree */
        for (int64_t l = L / 8 * 8; l < L; l++) s += (double)dy_kept(dy, yf, y16, r * ld + l); /* and tail */
        if (sums) sums[r] += s;
    }
}

void dse_bf16_s2(const float *row, int64_t W, int64_t o, int64_t n, int pairs, void *out, int isa) {
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa >= DSE_CPU_BF16_AVX512) {
        if (pairs) pairs_s2_512(row, W, o, n, out);
        else take2_s2_512(row, W, o, n, out);
        return;
    }
#endif
    (void)isa;
    for (int64_t q = 0; q < n; q++) {
        const dse_bf16 lo = s2_at(row, W, 2 * q + o);
        if (pairs) ((uint32_t *)out)[q] = (uint32_t)lo | (uint32_t)s2_at(row, W, 2 * q + o + 1) << 16;
        else ((dse_bf16 *)out)[q] = lo;
    }
}

#ifdef DSE_CPU_HAS_AVX2_CODE
TBF static void floats_of512(const dse_bf16 *x, int64_t n, float *out) {
    for (int64_t e = 0; e < n; e += 16) {
        const __mmask16 mk = dse_cpu_lanes16(n - e);
        const __m512i v = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mk, x + e)), 16);
        _mm512_mask_storeu_ps(out + e, mk, _mm512_castsi512_ps(v));
    }
}
#endif

#ifdef DSE_CPU_HAS_AVX2_CODE
TBF static void spread_rows512(const dse_bf16 *x, int64_t rows, int64_t L, dse_bf16 *out, int64_t ldo) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t l = 0; l < ldo; l += 32)
            _mm512_mask_storeu_epi16(out + r * ldo + l, dse_cpu_lanes32(ldo - l),
                                     _mm512_maskz_loadu_epi16(dse_cpu_lanes32(L - l), x + r * L + l));
}
#endif

void dse_bf16_spread_rows(const dse_bf16 *x, int64_t rows, int64_t L, dse_bf16 *out, int64_t ldo, int isa) {
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa >= DSE_CPU_BF16_AVX512) {
        spread_rows512(x, rows, L, out, ldo);
        return;
    }
#endif
    (void)isa;
    for (int64_t r = 0; r < rows; r++) {
        memcpy(out + r * ldo, x + r * L, (size_t)L * sizeof *out);
        memset(out + r * ldo + L, 0, (size_t)(ldo - L) * sizeof *out);
    }
}

void dse_bf16_floats(const dse_bf16 *x, int64_t n, float *out, int isa) {
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa >= DSE_CPU_BF16_AVX512) {
        floats_of512(x, n, out);
        return;
    }
#endif
    (void)isa;
    for (int64_t e = 0; e < n; e++) out[e] = dse_bf16_to_float(x[e]);
}

void dse_cpu_copy_strided(const float *src, int64_t n, int64_t stride, float *dst, int isa) {
    if (stride == 2) { /* layout.c's, also the float32 lowering's; a CPU with bf16 has AVX-512 */
        dse_cpu_take2(dst, src, n, isa >= DSE_CPU_BF16_AVX512 ? DSE_CPU_MM_AVX512 : DSE_CPU_MM_NONE);
        return;
    }
    for (int64_t q = 0; q < n; q++) dst[q] = src[q * stride];
}

void dse_cpu_mm_bf16(const struct dse_mm_bf16 *p, int isa) {
    if (p->M <= 0 || p->N <= 0) return;
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa == DSE_CPU_BF16_AMX) {
        dse_cpu_mm_amx(p);
        return;
    }
    if (isa == DSE_CPU_BF16_AVX512) {
        if (p->KP > 0) mm512(p);
        else mm_ref(p); /* nothing to multiply: C, bias and ReLU only */
        return;
    }
#endif
    (void)isa;
    mm_ref(p);
}

void dse_cpu_mm_nt_bf16(const struct dse_mm_nt_bf16 *p, int isa) {
    if (p->M <= 0 || p->N <= 0 || p->imgs <= 0 || p->L <= 0) return;
    DSE_ASSERT(p->L % 32 == 0);
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa == DSE_CPU_BF16_AMX && dse_cpu_mm_nt_amx(p)) return;
    if (isa >= DSE_CPU_BF16_AVX512) { /* AMX too, where A's rows do not begin on pairs */
        nt512(p);
        return;
    }
#endif
    (void)isa;
    nt_ref(p);
}
