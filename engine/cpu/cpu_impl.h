/* cpu_impl.h: helpers private to the CPU backend's kernels (every engine/cpu/ file): the
 * threads that split a kernel's work, and small shared utilities. Public interface:
 * engine/engine.h. */
#ifndef DSE_ENGINE_CPU_IMPL_H
#define DSE_ENGINE_CPU_IMPL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dist.h"
#include "engine/engine.h"
#include "engine/slices.h"

/* Threads (team.c). A job runs fn(arg, t, nt) once on each of the ctx's nt threads,
 * t = 0 on the caller, and returns when all are done. Jobs do not nest. */
typedef void (*dse_cpu_job_fn)(void *arg, int t, int nt);
struct dse_cpu_team *dse_cpu_team_new(int threads); /* NULL if the threads cannot start */
void dse_cpu_team_free(struct dse_cpu_team *tm);
void dse_cpu_team_run(struct dse_cpu_team *tm, dse_cpu_job_fn fn, void *arg);
void dse_cpu_run(struct dse_cpu_ctx *cx, dse_cpu_job_fn fn, void *arg);

/* Thread t's share [*lo, *hi) of count items: contiguous, sizes differing by at most 1.
 * Work whose result could depend on how it is shared goes by the batch's slices instead
 * (dse_cpu_slices_of), each thread taking a share of the slices. */
static inline void dse_cpu_share(int64_t count, int t, int nt, int64_t *lo, int64_t *hi) {
    int64_t n;
    dse_dist_share(count, t, nt, lo, &n); /* data-parallel ranks split by the same rule */
    *hi = *lo + n;
}

/* fn(arg, lo, hi) over [0, count) in one share per thread; serially, in one call, when
 * `work` (values touched, about) is below DSE_CPU_PAR_MIN_WORK: waking a thread costs
 * more than a few thousand floats. */
typedef void (*dse_cpu_range_fn)(void *arg, int64_t lo, int64_t hi);
void dse_cpu_for(struct dse_cpu_ctx *cx, int64_t count, int64_t work, dse_cpu_range_fn fn, void *arg);

/* The slices (engine/slices.h) of a batch of N images this ctx runs: alone, all of them;
 * one of several data-parallel ranks (with N its share), its run of the global batch's. */
struct dse_cpu_slices {
    int     total, first, count; /* the batch's slices; this ctx's [first, first + count) */
    int64_t n, img0;             /* the global batch; its image where this ctx's images begin */
};

static inline struct dse_cpu_slices dse_cpu_slices_of(const struct dse_cpu_ctx *cx, int64_t N) {
    int64_t first, count;
    if (cx->dist_batch) {
        dse_slice_images(cx->dist_batch, cx->slice_total, cx->slice_first, cx->slice_first + cx->slice_count, &first,
                         &count);
        if (count == N)
            return (struct dse_cpu_slices){ .total = cx->slice_total, .first = cx->slice_first,
                                            .count = cx->slice_count, .n = cx->dist_batch, .img0 = first };
    }
    const int s = cx->slices > 0 ? (int)(cx->slices < N ? cx->slices : N) : dse_slices(N, 1);
    return (struct dse_cpu_slices){ .total = s, .first = 0, .count = s, .n = N, .img0 = 0 };
}

/* The images of the largest slice (they differ by at most one). */
static inline int64_t dse_cpu_slice_most(const struct dse_cpu_slices *sl) {
    return (sl->n + sl->total - 1) / sl->total;
}

/* This ctx's images [*i0, *i1) of its k-th slice (0 <= k < count). */
static inline void dse_cpu_slice(const struct dse_cpu_slices *sl, int k, int64_t *i0, int64_t *i1) {
    int64_t f, c;
    dse_slice_images(sl->n, sl->total, sl->first + k, sl->first + k + 1, &f, &c);
    *i0 = f - sl->img0, *i1 = *i0 + c;
}

/* Channel k (of K) of a bias gradient from its slices' sums part[0 .. sl->count), each in
 * double: alone, db[k] += the slice tree's sum, rounded once; in data-parallel training
 * (n->db_part) kept per slice, which engine/model.c adds across the ranks and sums by the
 * tree before it becomes bias->grad. */
static inline void dse_cpu_db_slices(const struct dse_node *n, const struct dse_cpu_slices *sl, float *db, int64_t K,
                                     int64_t k, const double *part) {
    if (n->db_part)
        for (int s = 0; s < sl->count; s++) n->db_part[(int64_t)(sl->first + s) * K + k] = part[s];
    else
        db[k] += (float)dse_slice_sum_d(part, sl->total);
}

#define DSE_CPU_PAR_MIN_WORK 32768

/* Fill cx->err and return code (kernels report through the ctx). */
enum dse_status dse_cpu_fail(struct dse_cpu_ctx *cx, const struct dse_node *n, enum dse_status code,
                             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Monotonic clock in milliseconds (strategy timing). */
double dse_cpu_now_ms(void);

/* 1 if the node runs in place (its output is its first input's memory). */
/* AVX2 kernels (pool.c, conv2d.c) are built on x86-64 with GCC-compatible compilers,
 * each function with target("avx2"), and run only where dse_cpu_avx2() says so. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DSE_CPU_HAS_AVX2_CODE 1

/* The even (odd = 0) or odd (odd = 1) lanes of the 16 floats lo, hi, in order: values
 * 0, 2, ..., 14 (or 1, 3, ..., 15). A window column at stride 2 of 8 pooling outputs,
 * or of 8 Winograd tiles, is one such half. */
__attribute__((target("avx2"))) static inline __m256 dse_avx2_half(__m256 lo, __m256 hi, int odd) {
    const __m256i perm = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7); /* lanes in order across the 128-bit halves */
    const __m256 s = odd ? _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1))
                         : _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(_mm256_castps_si256(s), perm));
}
#endif

/* 1 if the AVX2 kernels may run: the CPU has AVX2 (the build targets baseline x86-64,
 * the AVX2 functions carry target attributes) and DSE_CPU_NO_AVX2 is not set (tests
 * compare the two paths bit for bit; users can rule the AVX2 ones out). */
static inline int dse_cpu_avx2(void) {
#ifdef DSE_CPU_HAS_AVX2_CODE
    const char *off = getenv("DSE_CPU_NO_AVX2");
    return __builtin_cpu_supports("avx2") && !(off && off[0] && off[0] != '0');
#else
    return 0;
#endif
}

/* Our own matrix kernels (mm.c), for the DIRECT conv strategy; they run where
 * dse_cpu_mm_isa() is not DSE_CPU_MM_NONE, and both instruction sets give the same bits
 * (DSE_CPU_NO_AVX512 set: the AVX2 ones, for tests and users; DSE_CPU_NO_AVX2: neither). */
enum { DSE_CPU_MM_NONE, DSE_CPU_MM_AVX2, DSE_CPU_MM_AVX512 };
int dse_cpu_mm_isa(void);

/* C = A B (+ bias[m], then ReLU), or C += A B (acc): C[m][n] = c[m*ldc + n] for m < M,
 * n < N; A[m][k] = a[m*a_rs + k*a_ks] (k < K); B[k][n] = b[k*ldb + n]. Each C element is
 * one chain of fused multiply-adds over k in order, from 0 (or from C with acc). */
struct dse_mm {
    int64_t      M, N, K;
    const float *a;
    int64_t      a_rs, a_ks;
    const float *b;
    int64_t      ldb;
    float       *c;
    int64_t      ldc;
    const float *bias; /* M values or NULL; not with acc */
    int          acc, relu;
};
void dse_cpu_mm(const struct dse_mm *p, int isa);

/* C[m][n] += the sum over images i < imgs and l < L of a[i*a_is + m*lda + l] *
 * b[i*b_is + n*ldb + l]: 16 running sums per element (lanes l mod 16) over the images in
 * order, added in a fixed tree, then added to C once. */
struct dse_mm_nt {
    int64_t      M, N, L, imgs;
    const float *a;
    int64_t      lda, a_is;
    const float *b;
    int64_t      ldb, b_is;
    float       *c;
    int64_t      ldc;
};
void dse_cpu_mm_nt(const struct dse_mm_nt *p, int isa);

/* 3x3 stride-1 convolution (mm.c) on a zero-padded input, vectors over the output
 * channels in blocks of dse_cpu_cv_block(isa) (64 with AVX-512, 16 with AVX2); the filters
 * packed first by dse_cpu_cv_pack: wp[block][ci][r*3+s][CB], zero past K; flip: the data
 * gradient's (w's input channels become the outputs, the filter turned 180 degrees). */
int  dse_cpu_cv_block(int isa);
void dse_cpu_cv_pack(const float *w, int64_t K, int64_t C, int flip, int CB, float *wp);

/* Output rows [oh0, oh1) of y[co*ldy + oh*Q + ow] (co < K, oh < P, ow < Q) = the sum over
 * ci < C, r, s < 3 of w * xp[ci*xp_c + (oh + r)*xp_w + ow + s], one chain of fused
 * multiply-adds per element in (ci, r, s) order from 0; then + bias, ReLU; or (acc) y += it. */
struct dse_cv {
    int64_t      C, K, P, Q;
    const float *xp;
    int64_t      xp_c, xp_w;
    const float *wp;
    float       *y;
    int64_t      ldy;
    const float *bias;
    int          relu, acc;
};
void dse_cpu_cv(const struct dse_cv *p, int64_t oh0, int64_t oh1, int isa);

/* dw[(co*C + ci)*9 + r*3 + s] += the sum over images i < imgs, oh < P, ow < Q (in that
 * order, one chain per element from 0) of dyt[i*dyt_i + (oh*Q + ow)*dyt_k + co] *
 * xp[i*xp_i + ci*xp_c + (oh + r)*xp_w + ow + s]: dyt is dy pixel-major, dyt_k >= K rounded
 * up to 16, zero past K. */
struct dse_cv_dw {
    int64_t      C, K, P, Q, imgs;
    const float *xp;
    int64_t      xp_c, xp_w, xp_i;
    const float *dyt;
    int64_t      dyt_k, dyt_i;
    float       *dw;
};
void dse_cpu_cv_dw(const struct dse_cv_dw *p, int isa);

static inline int dse_cpu_in_place(const struct dse_node *n) {
    return n->out->data == n->in[0]->data;
}

/* Sum of n floats (squares: of their squares) in double, in a fixed order (the same bits
 * whatever the threads): eight running sums over x[i + l] (l = i mod 8, which the compiler
 * turns into vector adds), added as a tree, then the tail. One running sum was a chain of
 * dependent adds: 4 cycles a value, and conv bias gradients (every conv output summed each
 * step) took longer than conv1's weight gradient. `squares` is a constant at every call,
 * so each use compiles to its own loop. */
/* The tree that adds dse_cpu_sum_of's eight running sums (every copy of its order calls it). */
static inline double dse_cpu_sum_tree(const double p[8]) {
    return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
}

static inline double dse_cpu_sum_of(const float *x, int64_t n, int squares) {
    double p[8] = { 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0 };
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) p[l] += squares ? (double)x[i + l] * (double)x[i + l] : (double)x[i + l];
    double s = dse_cpu_sum_tree(p);
    for (; i < n; i++) s += squares ? (double)x[i] * (double)x[i] : (double)x[i];
    return s;
}

static inline double dse_cpu_sum(const float *x, int64_t n) { return dse_cpu_sum_of(x, n, 0); }

/* s[j] = dse_cpu_sum(x + j plane, plane) for the nk <= 4 consecutive planes (channels) at x,
 * the same bits: four planes at once, so their chains of adds overlap (one plane's eight
 * running sums are one chain of vector adds, 4 cycles every 8 values: the conv bias gradients
 * took 4% of a bf16 step), with AVX-512 or AVX2 as isa says (dse_cpu_mm_isa, asked once a
 * pass, not once a plane: it reads the environment; DSE_CPU_NO_AVX512 / DSE_CPU_NO_AVX2 pick
 * the others, which tests compare). ctx.c. */
void dse_cpu_sum_channels(const float *x, int64_t plane, int nk, int isa, double s[4]);

/* n 4-byte values (floats, int32 argmaxes) from s to d, which do not overlap, in pieces of
 * constant size (8, 4, 2, 1 values), which GCC turns into moves: a short row (a map 3 to 28
 * wide) without a libc call. (clang 14 makes the loop of 8s one memcpy call again: the
 * product is built with the system's GCC; a clang build is slower here, not wrong.) */
static inline void dse_cpu_copy4(void *restrict d, const void *restrict s, int n) {
    char *dc = d;
    const char *sc = s;
    int i = 0;
    for (; i + 8 <= n; i += 8) memcpy(dc + 4 * i, sc + 4 * i, 32);
    if (n - i >= 4) memcpy(dc + 4 * i, sc + 4 * i, 16), i += 4;
    if (n - i >= 2) memcpy(dc + 4 * i, sc + 4 * i, 8), i += 2;
    if (n - i >= 1) memcpy(dc + 4 * i, sc + 4 * i, 4);
}

/* layout.c: x_i's C planes [H, W] into xp [C, H + 2 ph, W + 2 pw] with zeros around (H, W >= 1;
 * ph, pw >= 0; x and xp do not overlap). */
void dse_cpu_pad_planes(const float *x, int64_t C, int H, int W, int ph, int pw, float *xp);
/* g [K, PQ] (channel-major) into d [PQ, kt] pixel-major, channels K .. kt - 1 zero (kt >= K):
 * the weight gradient's dy for dse_cpu_cv_dw. AVX2 in 8x8 blocks unless isa is
 * DSE_CPU_MM_NONE; pass only what dse_cpu_mm_isa() said (asked once by the caller): the AVX2
 * code runs without a check of its own. */
void dse_cpu_to_pixels(const float *g, int64_t K, int64_t PQ, int64_t kt, float *d, int isa);
/* The first k of 16 lanes as an AVX-512 mask (none for k <= 0, all for k >= 16). */
static inline uint16_t dse_cpu_lanes16(int64_t k) {
    return k <= 0 ? 0 : k >= 16 ? 0xffff : (uint16_t)((1u << k) - 1);
}
/* The same for 32 lanes of 16 bits. */
static inline uint32_t dse_cpu_lanes32(int64_t k) {
    return k <= 0 ? 0 : k >= 32 ? 0xffffffffu : (1u << k) - 1;
}
/* Reads [p, p + bytes) a line at a time in address order (the last line maybe twice), and
 * nothing else: before a kernel whose first pass over an operand goes by strided panels
 * (mm.c's C = A B on a 1x1 conv's planes: a row of 784 bytes read 256 at a time with AVX-512,
 * 64 with AVX2) or by several rows side by side (mm_nt's dot products), so that the lines
 * arrive as one stream instead of one miss each (SqueezeNet-FMNIST's 1x1 convs:
 * docs/training.md). Worth it only for what stays in the core's L2 until the kernel reads it
 * (conv2d.c touches up to GEMM_BLOCK_BYTES). */
void dse_cpu_touch(const void *p, size_t bytes);
/* d[q] = s[2 q] for q < n: a stride-2 conv's lowered row (conv2d.c's im2col, and the bf16
 * lowering's through dse_cpu_copy_strided). Reads s[0, 2 n - 1) only; by isa: AVX-512 in masked
 * blocks of 16, AVX2 in blocks of 8 and a scalar tail, or scalar. Pass dse_cpu_mm_isa()'s value,
 * or DSE_CPU_MM_AVX512 where the caller knows the CPU has AVX-512F (the bf16 kernels run only
 * there: dse_cpu_bf16_why). */
void dse_cpu_take2(float *restrict d, const float *restrict s, int64_t n, int isa);

/* part[j][sc] = the sum over slice sc's images, one image after another, of channel k + j's
 * values (each image's plane of `plane` floats at x + i * stride + (k + j) * plane, summed
 * by dse_cpu_sum), for j < nk <= 4 and each of this ctx's slices: the slices' sums of a bias
 * gradient's channels, for dse_cpu_db_slices; isa: dse_cpu_sum_channels'. */
static inline void dse_cpu_slice_sums(const struct dse_cpu_slices *sl, const float *x, int64_t stride, int64_t plane,
                                      int64_t k, int nk, int isa, double part[4][DSE_SLICES_MAX]) {
    for (int sc = 0; sc < sl->count; sc++) {
        int64_t i0, i1;
        dse_cpu_slice(sl, sc, &i0, &i1);
        for (int j = 0; j < nk; j++) part[j][sc] = 0.0;
        for (int64_t i = i0; i < i1; i++) {
            double got[4];
            dse_cpu_sum_channels(x + i * stride + k * plane, plane, nk, isa, got);
            for (int j = 0; j < nk; j++) part[j][sc] += got[j];
        }
    }
}

/* The gradient of plane nc (image nc / C, channel nc % C) of max pool n's input, whole, into
 * out (its H W floats): +0, then each window's dy added at its argmax in window order, the
 * bits of the pool's own backward (pool.c). A conv with dse_node.dy_pool makes its dy with
 * it, in place of the pool's backward. */
void dse_cpu_maxpool_dx_plane(const struct dse_node *n, int64_t nc, float *out);

/* The ReLU's rules, one copy for the relu kernels (eltwise.c) and the convs that apply
 * their ReLU themselves (conv2d.c, dse_node.relu_out), so the two give the same bits:
 * the value, and the gradient g masked in place where the output y is not positive. */
static inline float dse_cpu_relu(float v) { return v > 0.0f ? v : 0.0f; }

/* Whether a conv's backward masks its dy by its fused ReLU itself: not where the layers
 * reading its output passed a masked gradient already (dse_node.relu_dy_masked). */
static inline int dse_cpu_masks_dy(const struct dse_node *n) {
    return n->relu_out && !n->relu_dy_masked;
}

static inline void dse_cpu_relu_mask(const float *y, float *g, int64_t n) {
    for (int64_t e = 0; e < n; e++) { /* loads outside the select, so it vectorizes */
        const float d = g[e];
        g[e] = y[e] > 0.0f ? d : 0.0f;
    }
}

/* bytes rounded up to 64: workspace pieces laid end to end stay aligned (conv_bf16.c, pool.c). */
static inline size_t dse_cpu_al64(size_t b) { return (b + 63) / 64 * 64; }

/* The same on an output stored in bf16 (dse_tensor.bf16: a float's upper 16 bits): y > 0
 * where its bits are 0x0001 to 0x7f80 (positive, up to infinity; not NaN, not -0). A float
 * output and its bf16 agree on it but for a positive denormal, which bf16 flushes to +0. */
static inline int dse_cpu_relu_pos16(uint16_t y) { return (uint32_t)y - 1u < 0x7f80u; }

static inline void dse_cpu_relu_mask16(const uint16_t *y, float *g, int64_t n) {
    for (int64_t e = 0; e < n; e++) {
        const float d = g[e];
        g[e] = dse_cpu_relu_pos16(y[e]) ? d : 0.0f;
    }
}

#endif
