/* bf16_impl.h: bf16 mixed precision on the CPU (issue #37), private to engine/cpu/: the
 * bfloat16 format, the packing of float operands into the k-pairs AVX512-BF16's vdpbf16ps
 * multiplies, and the matrix kernels on them (mm_bf16.c), each with a portable C reference
 * of the same arithmetic (the same bits on normal numbers); the conv and fc ops that use
 * them are conv_bf16.c. Model and option: engine/model.h (dse_model_device_opts.math). */
#ifndef DSE_ENGINE_CPU_BF16_IMPL_H
#define DSE_ENGINE_CPU_BF16_IMPL_H

#include <stdint.h>
#include <string.h>

#include "engine/cpu/cpu_impl.h"

/* A bfloat16: a float's upper 16 bits (sign, 8 exponent bits, 7 mantissa bits). */
typedef uint16_t dse_bf16;

/* float -> bf16 as vcvtneps2bf16 does (the same bits, tests bf16-convert): round to nearest
 * even; a NaN stays a NaN (made quiet: a NaN whose payload sits in the low bits would
 * otherwise become infinity); a denormal becomes a zero of its sign (the instruction treats
 * denormal inputs as zero). */
static inline dse_bf16 dse_bf16_of(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (dse_bf16)((u >> 16) | 0x40u);
    if (!(u & 0x7f800000u)) return (dse_bf16)((u >> 16) & 0x8000u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (dse_bf16)(u >> 16);
}

static inline float dse_bf16_to_float(dse_bf16 h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* A k-pair: elements 2i (low half) and 2i + 1 (high half) of a row as one 32-bit word,
 * the unit vdpbf16ps multiplies: lane i += a.hi * b.hi, then += a.lo * b.lo (Intel's order,
 * which Zen 4 keeps: each product exact in float, each addition rounded). */
static inline uint32_t dse_bf16_pair(float lo, float hi) {
    return (uint32_t)dse_bf16_of(lo) | (uint32_t)dse_bf16_of(hi) << 16;
}

/* Where the bf16 kernels run: DSE_CPU_BF16_AVX512 where dse_cpu_bf16_why() (engine.h) is
 * NULL, else the C reference (DSE_CPU_BF16_REF), which gives the same bits and is slow;
 * DSE_CPU_BF16_AMX (the products on AMX tiles, mm_amx.c, the packing and the rest AVX512's)
 * where dse_cpu_bf16_amx_ok(): the CPU has AMX, Linux grants the tiles and
 * DSE_CPU_BF16_AMX is not 0 (other bits than AVX512's, the same with any thread count). */
#define DSE_CPU_BF16_ISAS(X) X(REF, "reference") X(AVX512, "avx512bf16") X(AMX, "amx")
#define DSE_CPU_BF16_ENUM_(id, name) DSE_CPU_BF16_##id,
enum { DSE_CPU_BF16_ISAS(DSE_CPU_BF16_ENUM_) };
#undef DSE_CPU_BF16_ENUM_
int  dse_cpu_bf16_isa(void);
const char *dse_cpu_bf16_isa_str(int isa); /* "reference", "avx512bf16", "amx" (bench_bf16's isa=) */
int  dse_cpu_bf16_amx_ok(void);
struct dse_mm_bf16;
struct dse_mm_nt_bf16;
/* mm_amx.c: dse_cpu_mm_bf16 on the tiles, every row (those past a multiple of 16 on tiles
 * of fewer rows); dse_cpu_mm_nt_bf16's dot products on the tiles, 1, or 0 where A's rows do
 * not begin on pairs (the caller then runs AVX512's). */
void dse_cpu_mm_amx(const struct dse_mm_bf16 *p);
int  dse_cpu_mm_nt_amx(const struct dse_mm_nt_bf16 *p);

/* ap[m * lda + kp] = (A[m][2kp], A[m][2kp + 1]) for m < M, kp < (K + 1) / 2, A[m][k] =
 * a[m * a_rs + k * a_ks], a missing odd k zero (rows as they lie, a_ks 1, or columns, a_rs 1,
 * by AVX-512's conversion where isa allows it: the same bits). */
void dse_bf16_pack_a(const float *a, int64_t M, int64_t K, int64_t a_rs, int64_t a_ks, uint32_t *ap, int64_t lda,
                     int isa);
/* out[i ldo + j] = the pair (r0[i n + n - 1 - j], r1[i n + n - 1 - j]) for i < rows, j < n, r1
 * NULL: zero; filters' taps of two output channels turned 180 degrees, in k-pairs, for each
 * of rows input channels (the direct data gradient's). */
void dse_bf16_pairs_turned(const float *r0, const float *r1, int64_t rows, int64_t n, uint32_t *out, int64_t ldo,
                           int isa);
/* bp[kp * ldp + n] = (B[2kp][n], B[2kp + 1][n]) for kp < (K + 1) / 2, n < N, B[k][n] =
 * b[k * ldb + n], a missing odd row zero. */
void dse_bf16_pack_b(const float *b, int64_t K, int64_t N, int64_t ldb, uint32_t *bp, int64_t ldp, int isa);
/* out[r * ldo + l] = bf16 of x[r * ldx + l] for r < rows, l < L; zero for L <= l < Lp. */
void dse_bf16_pack_rows(const float *x, int64_t rows, int64_t L, int64_t ldx, dse_bf16 *out, int64_t ldo,
                        int64_t Lp, int isa);

/* out[kp * ldo + r] = the pair (rows[r ld + 2 kp], rows[r ld + 2 kp + 1]) for kp < L / 2, r < R
 * (L and ld even): bf16 rows turned into k-pairs along them, B's layout for C = A B^T as
 * C = A B (conv_bf16.c's weight gradient of short rows). */
void dse_bf16_pair_cols(const dse_bf16 *rows, int64_t R, int64_t L, int64_t ld, uint32_t *out, int64_t ldo, int isa);

/* bp[kp * ldp + n] = (rows[2 kp][n], rows[2 kp + 1][n]) for kp < (K + 1) / 2, n < N, rows[k][n]
 * = rows[k * ld + n], a missing odd row zero: dse_bf16_pack_b's pairs from rows already in
 * bf16 (the same bits as packing their floats). */
void dse_bf16_pairs_of_rows(const dse_bf16 *rows, int64_t K, int64_t N, int64_t ld, uint32_t *bp, int64_t ldp,
                            int isa);

/* A stride-2 conv's lowering from one input row of W floats straight to bf16 (conv_bf16.c),
 * each value zero where its index 2 q + o (+ 1) lies outside [0, W), for q < n: pairs, the
 * uint32_t k-pair (row[2 q + o], row[2 q + o + 1]) of two adjacent taps; otherwise the
 * dse_bf16 row[2 q + o] of a lowered row. The same bits as taking the floats and packing
 * them (one conversion, vcvtne2ps2bf16 on AVX-512). */
void dse_bf16_s2(const float *row, int64_t W, int64_t o, int64_t n, int pairs, void *out, int isa);

/* A conv's incoming gradient in one pass (conv_bf16.c's backward): rows rows of L values,
 * ld apart, of dy masked by the fused ReLU's output (yf float or y16 bf16, laid out as dy;
 * both NULL: none) by dse_cpu_relu_mask's and dse_cpu_relu_mask16's rules, to bf16 rows at
 * out (ldo apart); with sums, sums[r] += each masked row's dse_cpu_sum (the same bits: eight
 * double lanes, their tree, the tail), the bias gradient's per-image terms. */
void dse_bf16_pack_dy(const float *dy, int64_t rows, int64_t L, int64_t ld, const float *yf, const uint16_t *y16,
                      dse_bf16 *out, int64_t ldo, double *sums, int isa);

/* out[r * ldo + l] = x[r * L + l] for l < L, zero for L <= l < ldo, r < rows: packed bf16
 * rows spread onto a wider grid (a direct conv's dy, conv_bf16.c). */
void dse_bf16_spread_rows(const dse_bf16 *x, int64_t rows, int64_t L, dse_bf16 *out, int64_t ldo, int isa);

/* out[e] = the float of x[e] for e < n (exact: max pooling's bf16 input, pool.c). */
void dse_bf16_floats(const dse_bf16 *x, int64_t n, float *out, int isa);

/* dst[q] = src[q stride] for q < n (a strided conv's lowering, conv_bf16.c; stride 2 on
 * AVX-512 by permutes). */
void dse_cpu_copy_strided(const float *src, int64_t n, int64_t stride, float *dst, int isa);

/* C = A B (+ bias[m], then ReLU), or C += A B (acc), on packed operands: C[m][n] =
 * c[m * ldc + n], A's pairs ap[m * lda + kp], B's bp[kp * ldb + n] (boff: bp[boff[kp] + n],
 * a shifted view of padded planes, conv_bf16.c's direct convs), kp < KP. Each C element
 * is one chain of vdpbf16ps steps over kp in order, from 0 (or from C with acc), in float;
 * then + bias, ReLU (max with +0) as dse_cpu_mm. (On DSE_CPU_BF16_AMX: TDPBF16PS's sums in
 * blocks of 16 pairs, its own order, within the same bound.) */
struct dse_mm_bf16 {
    int64_t         M, N, KP;
    const uint32_t *ap;
    int64_t         lda;
    const uint32_t *bp;
    int64_t         ldb;
    const int64_t  *boff; /* KP offsets into bp, or NULL: kp * ldb */
    float          *c;
    int64_t         ldc;
    const float    *bias; /* M values or NULL; not with acc */
    int             acc, relu;
};
void dse_cpu_mm_bf16(const struct dse_mm_bf16 *p, int isa);

/* C[m][n] += (set: =) the sum over images i < imgs and l < L of a[i*a_is + m*lda + l] *
 * b[i*b_is + n*ldb + l] (boff: b[i*b_is + boff[n] + l]; L a multiple of 32, a zero past the
 * data and b finite there): 16 running float sums
 * per element (lane j takes the pairs l = 32 t + 2 j, + 1), images in order, added in
 * dse_cpu_mm_nt's tree, then added to C once (or stored). (On DSE_CPU_BF16_AMX: summed in
 * the tiles from C, or from zero with set, in TDPBF16PS's order, within the same bound.) */
struct dse_mm_nt_bf16 {
    int64_t         M, N, L, imgs;
    const dse_bf16 *a;
    int64_t         lda, a_is;
    const dse_bf16 *b;
    int64_t         ldb, b_is;
    const int64_t  *boff; /* N offsets into b, or NULL: n * ldb */
    float          *c;
    int64_t         ldc;
    int             set;
};
void dse_cpu_mm_nt_bf16(const struct dse_mm_nt_bf16 *p, int isa);

/* The bf16 ops (conv_bf16.c), run instead of the float32 strategies when cx->bf16: a conv
 * of one group (any kernel, stride, pad, dilation) where dse_cpu_conv_bf16_runs (the rule of
 * dse_cpu_conv_bf16_fp32, engine.h, or every one under DSE_CPU_BF16_EVERY), and fc.
 * dse_cpu_conv_bf16_bwd computes the weight and data gradients; the fused ReLU's mask and
 * the bias gradient are conv2d.c's, before it, as for every strategy, but where
 * dse_cpu_conv_bf16_fuses (below): then its own, from dy's rows. */
int             dse_cpu_conv_bf16_runs(const struct dse_cpu_ctx *cx, const struct dse_node *n);
enum dse_status dse_cpu_conv_bf16_fwd(struct dse_cpu_ctx *cx, struct dse_node *n);
/* 1 where dse_cpu_conv_bf16_bwd applies the fused ReLU's mask and the bias gradient itself,
 * as it takes dy (every conv with a weight gradient, lowered or direct; the same bits as
 * conv2d.c's passes before it, which then do not run). */
int             dse_cpu_conv_bf16_fuses(const struct dse_cpu_ctx *cx, const struct dse_node *n);
enum dse_status dse_cpu_conv_bf16_bwd(struct dse_cpu_ctx *cx, struct dse_node *n);
enum dse_status dse_cpu_fc_bf16_fwd(struct dse_cpu_ctx *cx, struct dse_node *n);
enum dse_status dse_cpu_fc_bf16_bwd(struct dse_cpu_ctx *cx, struct dse_node *n);

#endif
