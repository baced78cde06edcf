/* bench_peak.c: the machine's yardsticks for the CPU engine's speed (issue #19): the FMA peak
 * of one core (independent fused multiply-adds in registers: AVX-512 where the CPU has it,
 * else AVX2, chosen at run time) and OpenBLAS's sgemm on one thread (2048^3, the best a
 * library kernel reaches here). Not a test (docs/conventions.md#benchmarks).
 *
 * Prints
 *   name=peak.fma isa=avx512|avx2|none threads=1 gflops=...
 *   name=peak.bf16 isa=avx512_bf16|none threads=1 gflops=... of_fma=<ratio>  (vdpbf16ps, issue #37)
 *   name=peak.amx isa=amx threads=1 gflops=... of_fma=<ratio>  (TDPBF16PS; only where dse's bf16
 *     products run on AMX tiles: dse_cpu_bf16_kernels() is "amx", which asks Linux for them)
 *   name=peak.sgemm M=2048 N=2048 K=2048 threads=1 median_ms=... gflops=... of_fma=<ratio>
 * (2 FLOPs per multiply-add, docs/conventions.md). Usage: bench_peak [--reps R] (default 5). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "engine/engine.h"

#define FMA_ITERS 20000000L

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Independent chains of FMAs, each in a register of its own (spelled out: an array could
 * live in memory): more chains than the FMA latency times the ports, so the units never
 * wait. X(i, V, P): chain i of vector type V, whose intrinsics are named P_... */
#define DSE_PEAK_CHAINS(X, V, P)                                                              \
    X(0, V, P) X(1, V, P) X(2, V, P) X(3, V, P) X(4, V, P) X(5, V, P) X(6, V, P) X(7, V, P)   \
    X(8, V, P) X(9, V, P) X(10, V, P) X(11, V, P)
#define DSE_PEAK_INIT(i, V, P) V c##i = P##_set1_ps((float)(i));
#define DSE_PEAK_STEP(i, V, P) c##i = P##_fmadd_ps(c##i, a, b);
#define DSE_PEAK_SUM(i, V, P) s = P##_add_ps(s, c##i);

/* static float NAME(long iters): the chains of V for iters steps, summed by REDUCE(s) into a
 * value the compiler cannot drop; compiled for TARGET. */
#define DSE_PEAK_FMA(NAME, TARGET, V, P, REDUCE)                                               \
    __attribute__((target(TARGET))) static float NAME(long iters) {                          \
        const V a = P##_set1_ps(0.999999f), b = P##_set1_ps(1e-7f);                            \
        DSE_PEAK_CHAINS(DSE_PEAK_INIT, V, P)                                                   \
        for (long n = 0; n < iters; n++) { DSE_PEAK_CHAINS(DSE_PEAK_STEP, V, P) }              \
        V s = P##_setzero_ps();                                                                \
        DSE_PEAK_CHAINS(DSE_PEAK_SUM, V, P)                                                    \
        return REDUCE(s);                                                                      \
    }

__attribute__((target("avx2,fma"))) static float sum_avx2(__m256 s) {
    float v[8];
    _mm256_storeu_ps(v, s);
    return v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
}

DSE_PEAK_FMA(fma_avx512, "avx512f", __m512, _mm512, _mm512_reduce_add_ps)
DSE_PEAK_FMA(fma_avx2, "avx2,fma", __m256, _mm256, sum_avx2)

/* The same chains of vdpbf16ps (issue #37): 32 multiply-adds per instruction. */
#define DSE_PEAK_DP(i, V, P) c##i = _mm512_dpbf16_ps(c##i, a, b);
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) static float dp_bf16(long iters) {
    const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.999f), _mm512_set1_ps(0.998f));
    const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-7f), _mm512_set1_ps(2e-7f));
    DSE_PEAK_CHAINS(DSE_PEAK_INIT, __m512, _mm512)
    for (long n = 0; n < iters; n++) { DSE_PEAK_CHAINS(DSE_PEAK_DP, __m512, _mm512) }
    __m512 s = _mm512_setzero_ps();
    DSE_PEAK_CHAINS(DSE_PEAK_SUM, __m512, _mm512)
    return _mm512_reduce_add_ps(s);
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
/* GFLOP/s of fn(iters), which does `flops` floating-point operations, the best of reps. */
static double best_gflops(float (*fn)(long), long iters, double flops, int reps) {
    double best = 0.0;
    volatile float sink = 0.0f;
    for (int r = 0; r < reps; r++) {
        const double t0 = bench_now_ms();
        sink += fn(iters);
        const double g = flops / ((bench_now_ms() - t0) * 1e6);
        best = g > best ? g : best;
    }
    (void)sink;
    return best;
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
/* Four independent tiles of C (0-3), each += A (4, 5) B (6, 7) a step: TDPBF16PS's 16 x 16
 * outputs of 16 pairs, 8192 multiply-adds an instruction, the tiles never leaving the unit. */
struct peak_tilecfg {
    unsigned char  palette, start_row, reserved[14];
    unsigned short colsb[16];
    unsigned char  rows[16];
};

__attribute__((target("amx-tile,amx-bf16"))) static float amx_tdp(long iters) {
    static unsigned short ab[2][16 * 32]; /* bf16 values near 1e-3 and 1 */
    static float c[16 * 16];
    for (int i = 0; i < 16 * 32; i++) ab[0][i] = 0x3a83, ab[1][i] = 0x3f80;
    struct peak_tilecfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) cfg.rows[t] = 16, cfg.colsb[t] = 64;
    _tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, ab[0], 64);
    _tile_loadd(5, ab[0], 64);
    _tile_loadd(6, ab[1], 64);
    _tile_loadd(7, ab[1], 64);
    for (long n = 0; n < iters; n++) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(3, c, 64);
    _tile_release();
    return c[0];
}
#endif

/* GFLOP/s of TDPBF16PS on one core, the best of reps (0 where dse's bf16 kernels are not AMX's). */
static double amx_peak(int reps) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (strcmp(dse_cpu_bf16_kernels(), "amx")) return 0.0;
    const long iters = 400000L;
    return best_gflops(amx_tdp, iters, 2.0 * 4 * 8192 * (double)iters, reps);
#else
    (void)reps;
    return 0.0;
#endif
}

/* GFLOP/s of vdpbf16ps on one core, the best of reps (0 where the CPU lacks avx512_bf16). */
static double bf16_peak(int reps) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (!__builtin_cpu_supports("avx512bf16")) return 0.0;
    const long iters = FMA_ITERS / 2;
    return best_gflops(dp_bf16, iters, 2.0 * 12 * 32 * (double)iters, reps);
#else
    (void)reps;
    return 0.0;
#endif
}

/* GFLOP/s of the widest FMA this CPU runs, the best of reps; *isa names it. */
static double fma_peak(int reps, const char **isa) {
    *isa = "none";
#if defined(__x86_64__) && defined(__GNUC__)
    const int w512 = __builtin_cpu_supports("avx512f"), w256 = __builtin_cpu_supports("avx2") &&
                                                                 __builtin_cpu_supports("fma");
    if (!w512 && !w256) return 0.0;
    *isa = w512 ? "avx512" : "avx2";
    const long iters = w512 ? FMA_ITERS / 2 : FMA_ITERS;
    const double flops = 2.0 * 12 * (w512 ? 16 : 8) * (double)iters; /* 12 chains */
    return best_gflops(w512 ? fma_avx512 : fma_avx2, iters, flops, reps);
#else
    (void)reps;
    return 0.0;
#endif
}

int main(int argc, char **argv) {
    int reps = 5;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 < argc && !strcmp(argv[i], "--reps") && atoi(argv[i + 1]) > 0) reps = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bench_peak [--reps R]\n");
            return 2;
        }
    }
    const char *isa;
    const double fma = fma_peak(reps, &isa);
    printf("name=peak.fma isa=%s threads=1 gflops=%.1f\n", isa, fma);
    const double bf16 = bf16_peak(reps);
    printf("name=peak.bf16 isa=%s threads=1 gflops=%.1f of_fma=%.2f\n", bf16 > 0 ? "avx512_bf16" : "none", bf16,
           fma > 0 ? bf16 / fma : 0.0);
    const double amx = amx_peak(reps);
    if (amx > 0) printf("name=peak.amx isa=amx threads=1 gflops=%.1f of_fma=%.2f\n", amx, fma > 0 ? amx / fma : 0.0);

    /* The kernels dse runs (engine/cpu/blas.c) and, where it replaced OpenBLAS's own choice,
     * that choice too, in the same run: the yardstick of the switch. */
    const struct dse_blas_info *bi = dse_blas_setup();
    openblas_set_num_threads(1);
    printf("name=peak.blas library=\"%s\" core=%s detected=%s switched=%d features=\"%s\"\n", bi->library, bi->core,
           bi->detected, bi->switched, bi->features);
    const int n = 2048;
    float *a = malloc(sizeof *a * (size_t)n * n), *b = malloc(sizeof *b * (size_t)n * n),
          *c = malloc(sizeof *c * (size_t)n * n);
    double *ms = malloc(sizeof *ms * (size_t)reps);
    if (!a || !b || !c || !ms) return 1;
    for (long i = 0; i < (long)n * n; i++) a[i] = (float)(i % 7) * 0.1f, b[i] = (float)(i % 5) * 0.1f;
    double own = 0.0;
    for (int pass = bi->switched ? 0 : 1; pass < 2; pass++) {
        const char *core = pass ? bi->core : bi->detected;
        if (bi->switched && dse_blas_force(pass ? NULL : core)) {
            fprintf(stderr, "bench_peak: cannot run %s's kernels\n", core);
            continue;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n); /* warm-up */
        for (int r = 0; r < reps; r++) {
            const double t0 = bench_now_ms();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
            ms[r] = bench_now_ms() - t0;
        }
        const struct bench_timing t = bench_summarize(ms, reps);
        const double sgemm = 2.0 * n * n * (double)n / (t.median_ms * 1e6);
        if (!pass) own = sgemm;
        printf("name=peak.sgemm%s M=%d N=%d K=%d threads=1 blas_core=%s median_ms=%.2f gflops=%.1f of_fma=%.2f",
               pass ? "" : "_openblas_choice", n, n, n, core, t.median_ms, sgemm, fma > 0 ? sgemm / fma : 0.0);
        if (pass && own > 0) printf(" vs_openblas_choice=%.2f", sgemm / own);
        printf("\n");
    }
    free(a), free(b), free(c), free(ms);
    return 0;
}
