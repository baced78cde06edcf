/* bench_bf16.c: the bf16 product of issue #37 (engine/cpu/mm_bf16.c) against our float32
 * kernel (engine/cpu/mm.c, DIRECT's) on SqueezeNet 1x1 convs as they run them, one image
 * on one thread: C [M][N] = A [M][K] B [K][N] (+ bias, ReLU), M output channels, K input
 * channels, N pixels. The bf16 time includes packing B into k-pairs (the op packs each
 * image's input; the filters, packed once per call, are left out); kernel_gflops is the
 * product alone. One line per shape, machine facts first; median and minimum of R runs
 * after a warm-up. Not a test. Usage: bench_bf16 [--reps R] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/cpu/bf16_impl.h"
#include "bench/bench.h"

struct shape {
    const char *name;
    int64_t     M, N, K;
};

static const struct shape shapes[] = {
    { "v10.fire2.expand1x1",    64, 55 * 55,  16 },
    { "v10.fire2.squeeze1x1",   16, 55 * 55,  96 },
    { "v10.fire9.expand1x1",   256, 13 * 13,  64 },
    { "fmnist.fire4.expand1x1", 128, 14 * 14, 32 },
};

static void fill(float *p, int64_t n, struct dse_pcg32 *r) {
    for (int64_t i = 0; i < n; i++) p[i] = (float)(dse_pcg32_next(r) >> 8) * (1.0f / 16777216.0f) - 0.5f;
}

int main(int argc, char **argv) {
    int reps = 50;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_bf16 [--reps R]\n");
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    char model[128];
    dse_cpu_model(model, (int)sizeof model);
    const char *why = dse_cpu_bf16_why();
    const int isa32 = dse_cpu_mm_isa(), isa16 = dse_cpu_bf16_isa();
    printf("machine cpu=\"%s\" cores=%ld threads=1 fp32_isa=%s bf16_isa=%s reps=%d\n", model,
           sysconf(_SC_NPROCESSORS_ONLN), dse_cpu_direct_isa() ? dse_cpu_direct_isa() : "none",
           dse_cpu_bf16_isa_str(isa16), reps);
    if (why) printf("# bf16: %s; the C reference runs instead (slow)\n", why);
    if (isa32 == DSE_CPU_MM_NONE) {
        fprintf(stderr, "bench_bf16: no AVX2 + FMA: the float32 kernel does not run here\n");
        return 1;
    }
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 1, 1);
    double *ms[3];
    for (int k = 0; k < 3; k++) ms[k] = malloc((size_t)reps * sizeof(double));
    for (int s = 0; s < DSE_ARRAY_LEN(shapes); s++) {
        const struct shape *sh = &shapes[s];
        const int64_t KP = (sh->K + 1) / 2;
        float *a = malloc((size_t)(sh->M * sh->K) * sizeof *a), *b = malloc((size_t)(sh->K * sh->N) * sizeof *b);
        float *bias = malloc((size_t)sh->M * sizeof *bias), *c = malloc((size_t)(sh->M * sh->N) * sizeof *c);
        uint32_t *ap = malloc((size_t)(sh->M * KP) * sizeof *ap), *bp = malloc((size_t)(KP * sh->N) * sizeof *bp);
        fill(a, sh->M * sh->K, &r), fill(b, sh->K * sh->N, &r), fill(bias, sh->M, &r);
        dse_bf16_pack_a(a, sh->M, sh->K, sh->K, 1, ap, KP, isa16);
        const struct dse_mm m32 = { .M = sh->M, .N = sh->N, .K = sh->K, .a = a, .a_rs = sh->K, .a_ks = 1, .b = b,
                                    .ldb = sh->N, .c = c, .ldc = sh->N, .bias = bias, .relu = 1 };
        const struct dse_mm_bf16 m16 = { .M = sh->M, .N = sh->N, .KP = KP, .ap = ap, .lda = KP, .bp = bp,
                                         .ldb = sh->N, .c = c, .ldc = sh->N, .bias = bias, .relu = 1 };
        for (int i = -1; i < reps; i++) { /* alternating, so a load change favours neither */
            double t0 = bench_now_ms();
            dse_cpu_mm(&m32, isa32);
            const double t1 = bench_now_ms();
            dse_bf16_pack_b(b, sh->K, sh->N, sh->N, bp, sh->N, isa16);
            const double t2 = bench_now_ms();
            dse_cpu_mm_bf16(&m16, isa16);
            const double t3 = bench_now_ms();
            if (i >= 0) ms[0][i] = t1 - t0, ms[1][i] = t3 - t1, ms[2][i] = t3 - t2;
        }
        const struct bench_timing f = bench_summarize(ms[0], reps), h = bench_summarize(ms[1], reps),
                                  k = bench_summarize(ms[2], reps);
        const double flop = 2.0 * (double)sh->M * (double)sh->N * (double)sh->K;
        printf("name=bf16.mm.%s isa=%s M=%lld N=%lld K=%lld fp32_median_ms=%.4f fp32_min_ms=%.4f fp32_gflops=%.1f "
               "bf16_median_ms=%.4f bf16_min_ms=%.4f bf16_gflops=%.1f bf16_kernel_gflops=%.1f speedup=%.2f\n",
               sh->name, dse_cpu_bf16_isa_str(isa16), (long long)sh->M, (long long)sh->N, (long long)sh->K, f.median_ms, f.min_ms,
               flop / (f.median_ms * 1e6), h.median_ms, h.min_ms, flop / (h.median_ms * 1e6),
               flop / (k.median_ms * 1e6), f.median_ms / h.median_ms);
        free(a), free(b), free(bias), free(c), free(ap), free(bp);
    }
    for (int k = 0; k < 3; k++) free(ms[k]);
    return 0;
}
