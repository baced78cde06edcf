/* test_engine_cpu_bf16.c: bf16 mixed precision on the CPU (issue #37): the conversion
 * against vcvtneps2bf16, the matrix kernels against their C reference (bit for bit) and
 * against double with the bound bf16's 8-bit significand gives, the conv and fc ops in bf16
 * against float32 with that bound per element, the same bits with 1 and 2 threads and on the
 * reference path, and gradient checks in bf16 mode. Cases that need AVX512-BF16 print
 * "skipped: no avx512_bf16" elsewhere. Part of test_engine_cpu (its case table:
 * tests/test_engine_cpu.c). */
#include "tests/engine_cpu_util.h"

#include "engine/cpu/bf16_impl.h"

/* The bound on a bf16 product's error: both operands rounded to 8 significant bits (each
 * relative error at most u = 2^-8, so a product's at most 2u + u^2), then `terms` float
 * additions (each at most 2^-24 of the running sum, itself at most the sum of |terms|):
 * |computed - exact| <= BF16_BOUND(terms) * sum |a| |b|. */
#define BF16_U (1.0 / 256.0)
#define BF16_BOUND(terms) (2.0 * BF16_U + BF16_U * BF16_U + (double)((terms) + 2) * 0x1p-23)

static int has_bf16(void) {
    if (!dse_cpu_bf16_why()) return 1;
    printf("  skipped: no avx512_bf16 (%s)\n", dse_cpu_bf16_why());
    return 0;
}

static float bits_f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- the conversion ------------------------------------------------------------------------ */

/* The kernels' ISA by name (bench_bf16's isa=): the reference where DSE_CPU_NO_BF16 rules
 * AVX512-BF16 out, avx512bf16 where the CPU has it and not AMX (or DSE_CPU_BF16_AMX=0). */
static void bf16_isa_names(void) {
    CHECK_STR_EQ(dse_cpu_bf16_isa_str(DSE_CPU_BF16_REF), "reference");
    CHECK_STR_EQ(dse_cpu_bf16_isa_str(DSE_CPU_BF16_AMX), "amx");
    CHECK_STR_EQ(dse_cpu_bf16_isa_str(7), "?");
    setenv("DSE_CPU_NO_BF16", "1", 1);
    CHECK_STR_EQ(dse_cpu_bf16_isa_str(dse_cpu_bf16_isa()), "reference");
    unsetenv("DSE_CPU_NO_BF16");
    if (!dse_cpu_bf16_why() && !dse_cpu_bf16_amx_ok())
        CHECK_STR_EQ(dse_cpu_bf16_isa_str(dse_cpu_bf16_isa()), "avx512bf16");
    if (dse_cpu_bf16_amx_ok()) CHECK_STR_EQ(dse_cpu_bf16_isa_str(dse_cpu_bf16_isa()), "amx");
}

void test_bf16_convert(void) {
    bf16_isa_names();
    static const struct {
        uint32_t in;
        dse_bf16 out;
    } cases[] = {
        { 0x3f800000, 0x3f80 }, /* 1 */
        { 0x3f808000, 0x3f80 }, /* 1 + 2^-8: a tie, to even (down) */
        { 0x3f818000, 0x3f82 }, /* 1 + 3 2^-8: a tie, to even (up) */
        { 0x3f808001, 0x3f81 }, /* just above the tie: up */
        { 0x3f807fff, 0x3f80 }, /* just below: down */
        { 0xc0000000, 0xc000 }, /* -2 */
        { 0x7f800000, 0x7f80 }, /* inf */
        { 0x7f7fffff, 0x7f80 }, /* FLT_MAX rounds to inf */
        { 0x7f800001, 0x7fc0 }, /* a NaN whose payload is in the low bits stays a NaN */
        { 0xffc00000, 0xffc0 }, /* -NaN */
        { 0x00400000, 0x0000 }, /* a denormal is zero */
        { 0x80400000, 0x8000 }, /* of its sign */
        { 0x00800000, 0x0080 }, /* FLT_MIN */
        { 0x00000000, 0x0000 }, { 0x80000000, 0x8000 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        const dse_bf16 got = dse_bf16_of(bits_f(cases[i].in));
        if (got != cases[i].out) fprintf(stderr, "  %08x: %04x, expected %04x\n", cases[i].in, got, cases[i].out);
        CHECK_INT_EQ(got, cases[i].out);
    }
    int back = 0; /* every bf16 but the NaNs comes back from its float */
    for (uint32_t h = 0; h < 65536; h++) {
        const float f = dse_bf16_to_float((dse_bf16)h);
        back += f != f || (h & 0x7f80) == 0 ? 1 : dse_bf16_of(f) == h;
    }
    CHECK_INT_EQ(back, 65536);
    if (!has_bf16()) return;
    /* the reference against the instruction on random bit patterns, a quarter denormal */
    enum { N = 1 << 18 };
    float *x = malloc(N * sizeof *x);
    dse_bf16 *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 37, 1);
    for (int i = 0; i < N; i++) x[i] = bits_f(dse_pcg32_next(&r) & (i % 4 ? 0xffffffffu : 0x807fffffu));
    dse_bf16_pack_rows(x, 1, N, N, a, N, N, DSE_CPU_BF16_REF);
    dse_bf16_pack_rows(x, 1, N, N, b, N, N, DSE_CPU_BF16_AVX512);
    int same = 0;
    for (int i = 0; i < N; i++) same += a[i] == b[i];
    CHECK_INT_EQ(same, N);
    /* dse_bf16_pack_a on rows as they lie, by AVX-512's conversion: each
     * pair dse_bf16_pair's, an odd row's last pair with a zero, the words past KP untouched */
    enum { M = 64, K = 4095, KP = (K + 1) / 2, LDA = KP + 3 };
    uint32_t *ap = malloc((size_t)M * LDA * sizeof *ap);
    memset(ap, 0xab, (size_t)M * LDA * sizeof *ap);
    dse_bf16_pack_a(x, M, K, K, 1, ap, LDA, DSE_CPU_BF16_AVX512);
    int pairs = 0;
    for (int m = 0; m < M; m++)
        for (int kp = 0; kp < LDA; kp++) {
            const float *e = x + m * K + 2 * kp;
            pairs += ap[m * LDA + kp] == (kp >= KP ? 0xababababu : dse_bf16_pair(e[0], 2 * kp + 1 < K ? e[1] : 0.0f));
        }
    CHECK_INT_EQ(pairs, M * LDA);
    /* and on columns (a_rs 1: w^T, A[m][k] = x[k M2 + m]) by the scatter: M2 rows past 16 */
    enum { M2 = 37, K2 = 301, KP2 = (K2 + 1) / 2, LDA2 = KP2 + 2 };
    memset(ap, 0xab, (size_t)M2 * LDA2 * sizeof *ap);
    dse_bf16_pack_a(x, M2, K2, 1, M2, ap, LDA2, DSE_CPU_BF16_AVX512);
    pairs = 0;
    for (int m = 0; m < M2; m++)
        for (int kp = 0; kp < LDA2; kp++) {
            const float *e = x + 2 * kp * M2 + m;
            pairs += ap[m * LDA2 + kp] == (kp >= KP2 ? 0xababababu : dse_bf16_pair(e[0], 2 * kp + 1 < K2 ? e[M2] : 0.0f));
        }
    CHECK_INT_EQ(pairs, M2 * LDA2);
    /* dse_bf16_pairs_turned (filters turned 180 degrees): 3 rows of 9, 25 and 40 taps, with a
       second row and without, against the pairs of the reversed taps; words past n untouched */
    const int taps[3] = { 9, 25, 40 };
    for (int v = 0; v < 6; v++) {
        const int n = taps[v % 3], two = v < 3, ldo = n + 5;
        memset(ap, 0xab, (size_t)3 * ldo * sizeof *ap);
        dse_bf16_pairs_turned(x, two ? x + 1000 : NULL, 3, n, ap, ldo, DSE_CPU_BF16_AVX512);
        pairs = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < ldo; j++) {
                const int at = i * n + n - 1 - j;
                pairs += ap[i * ldo + j] == (j >= n ? 0xababababu : dse_bf16_pair(x[at], two ? x[1000 + at] : 0.0f));
            }
        CHECK_INT_EQ(pairs, 3 * ldo);
    }
    free(ap);
    free(x), free(a), free(b);
}

/* ---- the kernels ------------------------------------------------------------------------- */

struct mm_case {
    const char *id;
    int64_t     M, N, K;
    int         trans_a, acc, bias, relu;
};

static const struct mm_case mm_cases[] = {
    /* id               M    N    K  trans acc bias relu */
    { "mm-1",           1,   1,   1, 0,    0,  0,   0 },
    { "mm-odd-k",       7,  33,   5, 0,    0,  1,   0 },
    { "mm-tile",        6,  64, 128, 0,    0,  1,   1 },
    { "mm-tails",      13,  70, 129, 1,    0,  0,   1 },
    { "mm-fire",       64, 196,  96, 0,    0,  1,   1 }, /* a SqueezeNet expand1x1 on 14x14 */
    { "mm-k-blocks",    5,  17, 301, 1,    1,  0,   0 }, /* 151 pairs: three blocks of MM_KB */
    { "mm-acc",        11,  49,  64, 1,    1,  0,   0 },
};

/* A [M][K] (trans_a: stored [K][M]), B [K][N], C [M][N] from c0: the reference, and hw's
 * instructions (DSE_CPU_BF16_AVX512: the same bits; DSE_CPU_BF16_AMX: the bound; REF: none),
 * against double. */
static void mm_one(const struct mm_case *t, struct dse_pcg32 *r, int hw) {
    const int64_t M = t->M, N = t->N, K = t->K, KP = (K + 1) / 2;
    float *a = malloc((size_t)(M * K) * sizeof *a), *b = malloc((size_t)(K * N) * sizeof *b);
    float *bias = malloc((size_t)M * sizeof *bias), *c0 = malloc((size_t)(M * N) * sizeof *c0);
    float *c[2] = { malloc((size_t)(M * N) * sizeof(float)), malloc((size_t)(M * N) * sizeof(float)) };
    uint32_t *ap = malloc((size_t)(M * KP) * sizeof *ap), *bp[2];
    for (int64_t e = 0; e < M * K; e++) a[e] = uniform(r, -1, 1);
    for (int64_t e = 0; e < K * N; e++) b[e] = uniform(r, -2, 2);
    for (int64_t e = 0; e < M; e++) bias[e] = uniform(r, -1, 1);
    for (int64_t e = 0; e < M * N; e++) c0[e] = uniform(r, -1, 1);
    const int64_t a_rs = t->trans_a ? 1 : K, a_ks = t->trans_a ? M : 1;
    dse_bf16_pack_a(a, M, K, a_rs, a_ks, ap, KP, DSE_CPU_BF16_REF);
    for (int p = 0; p < 2; p++) {
        bp[p] = malloc((size_t)(KP * N) * sizeof(uint32_t));
        dse_bf16_pack_b(b, K, N, N, bp[p], N, p ? hw : DSE_CPU_BF16_REF);
        memcpy(c[p], c0, (size_t)(M * N) * sizeof(float));
        const struct dse_mm_bf16 m = { .M = M, .N = N, .KP = KP, .ap = ap, .lda = KP, .bp = bp[p], .ldb = N,
                                       .c = c[p], .ldc = N, .bias = t->bias ? bias : NULL, .acc = t->acc,
                                       .relu = t->relu };
        if (p == 0 || hw) dse_cpu_mm_bf16(&m, p ? hw : DSE_CPU_BF16_REF);
    }
    if (hw) CHECK(!memcmp(bp[0], bp[1], (size_t)(KP * N) * sizeof(uint32_t))); /* the same packing */
    if (hw == DSE_CPU_BF16_AVX512) { /* the same bits */
        if (memcmp(c[0], c[1], (size_t)(M * N) * sizeof(float))) fprintf(stderr, "  %s: avx512 != reference\n", t->id);
        CHECK(!memcmp(c[0], c[1], (size_t)(M * N) * sizeof(float)));
    }
    double worst = 0.0;
    const float *cc = c[hw == DSE_CPU_BF16_AMX ? 1 : 0];
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double s = t->acc ? c0[m * N + n] : t->bias ? bias[m] : 0.0, mag = fabs(s);
            for (int64_t k = 0; k < K; k++) {
                const double p = (double)a[m * a_rs + k * a_ks] * b[k * N + n];
                s += p, mag += fabs(p);
            }
            if (!t->acc && t->relu) s = s > 0.0 ? s : 0.0;
            worst = fmax(worst, fabs(cc[m * N + n] - s) / (mag > 0.0 ? mag : 1.0));
        }
    if (!(worst <= BF16_BOUND(K)))
        fprintf(stderr, "  %s: error %.3g of sum |a b| > %.3g\n", t->id, worst, BF16_BOUND(K));
    CHECK(worst <= BF16_BOUND(K));
    CHECK(worst > 0.0); /* the operands were rounded */
    if (getenv("DSE_TEST_VERBOSE"))
        printf("  %-12s error %.3g of sum |a b| (bound %.3g)\n", t->id, worst, BF16_BOUND(K));
    free(a), free(b), free(bias), free(c0), free(c[0]), free(c[1]), free(ap), free(bp[0]), free(bp[1]);
}

void test_bf16_mm(void) {
    const int hw = has_bf16() ? DSE_CPU_BF16_AVX512 : DSE_CPU_BF16_REF; /* REF: against double only */
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 37, 2);
    for (int i = 0; i < DSE_ARRAY_LEN(mm_cases); i++) mm_one(&mm_cases[i], &r, hw);
}

struct nt_case {
    const char *id;
    int64_t     M, N, L, imgs;
    int         set; /* C = the sum instead of C += */
};

static const struct nt_case nt_cases[] = {
    { "nt-1",      1,  1,   1, 1, 0 },
    { "nt-tile",   4,  6,  32, 1, 1 },
    { "nt-tails",  5,  7,  45, 3, 0 },
    { "nt-fire",  16, 13, 196, 4, 1 }, /* a squeeze1x1's weight gradient over 4 images of 14x14 */
};

/* One case on hw (DSE_CPU_BF16_AVX512: the same bits as the reference; DSE_CPU_BF16_AMX:
 * the bound only; 0: the reference alone), against double within the bound. */
static void nt_one(const struct nt_case *c, struct dse_pcg32 *r, int hw) {
    const int64_t Lp = (c->L + 31) / 32 * 32, na = c->imgs * c->M * c->L, nb = c->imgs * c->N * c->L;
    float *a = malloc((size_t)na * sizeof *a), *b = malloc((size_t)nb * sizeof *b), *out[2];
    dse_bf16 *ar = malloc((size_t)(c->imgs * c->M * Lp) * sizeof *ar);
    dse_bf16 *br = malloc((size_t)(c->imgs * c->N * Lp) * sizeof *br);
    for (int64_t e = 0; e < na; e++) a[e] = uniform(r, -1, 1);
    for (int64_t e = 0; e < nb; e++) b[e] = uniform(r, -1, 1);
    dse_bf16_pack_rows(a, c->imgs * c->M, c->L, c->L, ar, Lp, Lp, hw ? DSE_CPU_BF16_AVX512 : DSE_CPU_BF16_REF);
    dse_bf16_pack_rows(b, c->imgs * c->N, c->L, c->L, br, Lp, Lp, DSE_CPU_BF16_REF);
    for (int p = 0; p < 2; p++) {
        out[p] = calloc((size_t)(c->M * c->N), sizeof(float));
        for (int64_t e = 0; e < c->M * c->N; e++) out[p][e] = 0.5f; /* C += */
        const struct dse_mm_nt_bf16 m = { .M = c->M, .N = c->N, .L = Lp, .imgs = c->imgs, .a = ar, .lda = Lp,
                                          .a_is = c->M * Lp, .b = br, .ldb = Lp, .b_is = c->N * Lp,
                                          .c = out[p], .ldc = c->N, .set = c->set };
        if (p == 0 || hw) dse_cpu_mm_nt_bf16(&m, p ? hw : DSE_CPU_BF16_REF);
    }
    if (hw == DSE_CPU_BF16_AVX512) CHECK(!memcmp(out[0], out[1], (size_t)(c->M * c->N) * sizeof(float)));
    double worst = 0.0;
    for (int64_t m = 0; m < c->M; m++)
        for (int64_t n = 0; n < c->N; n++) {
            double s = c->set ? 0.0 : 0.5, mag = c->set ? 0.0 : 0.5;
            for (int64_t i = 0; i < c->imgs; i++)
                for (int64_t l = 0; l < c->L; l++) {
                    const double p = (double)a[(i * c->M + m) * c->L + l] * b[(i * c->N + n) * c->L + l];
                    s += p, mag += fabs(p);
                }
            worst = fmax(worst, fabs(out[hw ? 1 : 0][m * c->N + n] - s) / (mag > 0.0 ? mag : 1.0));
        }
    const double bound = BF16_BOUND(c->imgs * Lp);
    if (!(worst <= bound)) fprintf(stderr, "  %s: error %.3g of sum |a b| > %.3g\n", c->id, worst, bound);
    CHECK(worst <= bound);
    CHECK(worst > 0.0);
    free(a), free(b), free(ar), free(br), free(out[0]), free(out[1]);
}

void test_bf16_mm_nt(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 37, 3);
    for (int t = 0; t < DSE_ARRAY_LEN(nt_cases); t++) nt_one(&nt_cases[t], &r, has_bf16() ? DSE_CPU_BF16_AVX512 : 0);
}

/* DSE_CPU_BF16_AMX set to v (NULL: unset); returns the caller's value (a copy, NULL if unset)
 * for amx_env_back, which puts it back and frees it. */
static char *amx_env_set(const char *v) {
    const char *was = getenv("DSE_CPU_BF16_AMX");
    char *saved = was ? strdup(was) : NULL;
    if (v) setenv("DSE_CPU_BF16_AMX", v, 1);
    else unsetenv("DSE_CPU_BF16_AMX");
    return saved;
}

static void amx_env_back(char *saved) {
    if (saved) setenv("DSE_CPU_BF16_AMX", saved, 1);
    else unsetenv("DSE_CPU_BF16_AMX");
    free(saved);
}

/* AMX's tiles (mm_amx.c) on the same cases and three tile-sized ones, C = A B and the dot
 * products, against double within the bound (TDPBF16PS adds in another order than the
 * reference: no bit equality). Runs only where the CPU has AMX (first run on a 2-core Xeon
 * with AMX, 2026-11-29). */
void test_bf16_amx(void) {
    char *saved = amx_env_set(NULL);
    const int ok = dse_cpu_bf16_amx_ok();
    free(amx_env_set("0")); /* asks for AVX512-BF16 alone */
    CHECK(!dse_cpu_bf16_amx_ok());
    CHECK(dse_cpu_bf16_isa() != DSE_CPU_BF16_AMX);
    amx_env_back(saved);
    if (!ok) {
        printf("  skipped: no AMX (amx-tile, amx-bf16) or the tiles refused\n");
        return;
    }
    static const struct mm_case amx_cases[] = {
        { "amx-16",        16,  16,  32, 0, 0, 0, 0 },
        { "amx-edges",     37,  70, 129, 1, 0, 1, 1 },
        { "amx-acc",       48, 196,  64, 0, 1, 0, 0 },
        { "amx-tall",     530,  40,  35, 0, 0, 1, 1 }, /* a short k-block for more rows than kept at once */
    };
    static const struct nt_case amx_nt[] = {
        { "amx-nt-16",    16, 16,   32, 1, 1 },
        { "amx-nt-edges", 37, 70,  200, 2, 0 }, /* rows past 32, columns past 64 on both */
        { "amx-nt-long",  32, 33, 1100, 1, 1 }, /* more pairs than a panel holds */
    };
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 37, 6);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < (pass ? DSE_ARRAY_LEN(mm_cases) : DSE_ARRAY_LEN(amx_cases)); i++)
            mm_one(pass ? &mm_cases[i] : &amx_cases[i], &r, DSE_CPU_BF16_AMX);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < (pass ? DSE_ARRAY_LEN(nt_cases) : DSE_ARRAY_LEN(amx_nt)); i++)
            nt_one(pass ? &nt_cases[i] : &amx_nt[i], &r, DSE_CPU_BF16_AMX);
}

/* A stride-2 lowering straight to bf16 (dse_bf16_s2, pairs and rows): every row
 * length, offset (the padding on either side) and count, each value a random bit pattern (a
 * quarter denormal, NaNs too), the instruction against the reference; the reference against
 * its definition, zero outside the row; and no write past n. */
void test_bf16_s2(void) {
    enum { WMAX = 70, NMAX = 44 };
    float row[WMAX];
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 37, 9);
    int bad = 0, cases = 0;
    for (int W = 1; W <= WMAX; W += W < 34 ? 1 : 9)
        for (int o = -4; o <= 7; o++) /* up to (S - 1) dw - pw: 6 for v1.0's conv1 */
            for (int n = 0; n <= NMAX; n += n < 20 ? 1 : 7) {
                for (int i = 0; i < WMAX; i++) /* past W too: values a lowering must not take */
                    row[i] = bits_f(dse_pcg32_next(&r) & (i % 4 ? 0xffffffffu : 0x807fffffu));
                uint32_t pr[2][NMAX + 1];
                dse_bf16 tr[2][NMAX + 1];
                for (int v = 0; v < (has_bf16() ? 2 : 1); v++) {
                    const int isa = v ? DSE_CPU_BF16_AVX512 : DSE_CPU_BF16_REF;
                    for (int q = 0; q <= NMAX; q++) pr[v][q] = 0xdeadbeefu, tr[v][q] = 0xbeef;
                    dse_bf16_s2(row, W, o, n, 1, pr[v], isa);
                    dse_bf16_s2(row, W, o, n, 0, tr[v], isa);
                    bad += pr[v][n] != 0xdeadbeefu || tr[v][n] != 0xbeef; /* nothing past n */
                }
                for (int q = 0; q < n; q++) {
                    const int a = 2 * q + o, b = a + 1;
                    const dse_bf16 lo = a >= 0 && a < W ? dse_bf16_of(row[a]) : 0, hi = b >= 0 && b < W ? dse_bf16_of(row[b]) : 0;
                    bad += pr[0][q] != ((uint32_t)lo | (uint32_t)hi << 16) || tr[0][q] != lo;
                    if (has_bf16()) bad += pr[1][q] != pr[0][q] || tr[1][q] != tr[0][q];
                }
                cases++;
            }
    if (bad) fprintf(stderr, "  %d values differ in %d cases\n", bad, cases);
    CHECK_INT_EQ(bad, 0);
    CHECK(cases > 1000);
}

/* A conv's incoming gradient in one pass (dse_bf16_pack_dy): rows of every length to 40, two
 * apart from the next, masked by a float output, a bf16 output or nothing (outputs with +0,
 * -0 and NaN among them; dy with -0, a denormal, infinity), against the passes it stands for
 * (dse_cpu_relu_mask or dse_cpu_relu_mask16 in place, dse_cpu_sum, dse_bf16_pack_rows): the
 * same bits, by the instruction and the reference; values past L not written. */
void test_bf16_pack_dy(void) {
    enum { R = 3, LMAX = 40, GAP = 2 };
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 37, 10);
    int bad = 0;
    for (int L = 1; L <= LMAX; L++)
        for (int how = 0; how < 3; how++) { /* mask by float y, by bf16 y, none */
            const int ld = L + GAP;
            float dy[R * (LMAX + GAP)], yf[R * (LMAX + GAP)], want[R * (LMAX + GAP)];
            uint16_t y16[R * (LMAX + GAP)];
            for (int e = 0; e < R * ld; e++) {
                dy[e] = e % 13 == 7 ? -0.0f : e % 17 == 9 ? 1e-40f : e % 29 == 11 ? INFINITY : uniform(&r, -1, 1);
                yf[e] = e % 5 == 0 ? 0.0f : e % 7 == 3 ? -0.0f : e % 11 == 4 ? NAN : uniform(&r, -1, 1);
                y16[e] = dse_bf16_of(yf[e]);
            }
            memcpy(want, dy, sizeof want);
            if (how == 0) dse_cpu_relu_mask(yf, want, R * ld);
            if (how == 1) dse_cpu_relu_mask16(y16, want, R * ld);
            dse_bf16 ref[R * (LMAX + 1)];
            double want_s[R];
            dse_bf16_pack_rows(want, R, L, ld, ref, L + 1, L, DSE_CPU_BF16_REF);
            for (int k = 0; k < R; k++) want_s[k] = 1.0 + dse_cpu_sum(want + k * ld, L);
            for (int v = 0; v < (has_bf16() ? 2 : 1); v++) {
                dse_bf16 got[R * (LMAX + 1)];
                double sums[R] = { 1.0, 1.0, 1.0 };
                for (int e = 0; e < R * (L + 1); e++) got[e] = 0xbeef;
                dse_bf16_pack_dy(dy, R, L, ld, how == 0 ? yf : NULL, how == 1 ? y16 : NULL, got, L + 1, sums,
                                 v ? DSE_CPU_BF16_AVX512 : DSE_CPU_BF16_REF);
                for (int k = 0; k < R; k++) {
                    bad += memcmp(&sums[k], &want_s[k], sizeof sums[k]) != 0 || got[k * (L + 1) + L] != 0xbeef;
                    bad += memcmp(got + k * (L + 1), ref + k * (L + 1), (size_t)L * sizeof *got) != 0;
                }
            }
        }
    if (bad) fprintf(stderr, "  %d rows differ\n", bad);
    CHECK_INT_EQ(bad, 0);
}

/* ---- the ops: bf16 against float32 ---------------------------------------------------------- */

struct op_case {
    const char *id;
    int         fc; /* 1: fc of K outputs over C x H x W */
    int         N, C, H, W, K, k, s, p, d;
};

static const struct op_case op_cases[] = {
    /* id              fc  N   C   H   W   K  k  s  p  d */
    { "bf16-1x1",       0, 3, 32, 9,  9,  16, 1, 1, 0, 1 },
    { "bf16-1x1-fire",  0, 3, 67, 7,  7,  38, 1, 1, 0, 1 }, /* odd channels: a half pair */
    { "bf16-3x3",       0, 4, 16, 13, 13, 24, 3, 1, 1, 1 }, /* direct: 4 channels or more, stride 1 */
    { "bf16-3x3-odd",   0, 3, 5,  6,  7,  9,  3, 1, 0, 1 }, /* direct: a half pair in and out, no pad */
    { "bf16-5x5-pad2",  0, 2, 6,  9,  8,  5,  5, 1, 2, 1 },
    { "bf16-3x3-s2",    0, 2, 6,  11, 10, 12, 3, 2, 1, 1 },
    { "bf16-s2-long",   0, 2, 2,  5,  70, 4,  3, 2, 1, 1 }, /* 35 output columns: two vectors and a tail */
    { "bf16-3x3-dil2",  0, 2, 5,  9,  9,  7,  3, 1, 2, 2 }, /* direct, dilated */
    { "bf16-conv1",     0, 4, 1,  28, 28, 16, 3, 1, 1, 1 }, /* SqueezeNet-FMNIST's conv1: lowered */
    { "bf16-7x7-s2",    0, 2, 3,  29, 29, 8,  7, 2, 0, 1 }, /* v1.0's conv1, smaller */
    /* 256 output channels or more: the weight gradient as C = A B (conv_bf16.c's dw_by_mm) */
    { "bf16-1x1-wide",  0, 3, 21, 5,  5,  256, 1, 1, 0, 1 },
    { "bf16-s2-wide",   0, 2, 3,  7,  7,  260, 3, 2, 1, 1 },
    /* more images than slices (16): slices of several images, chunks within them */
    { "bf16-1x1-n40",   0, 40, 64, 20, 20, 256, 1, 1, 0, 1 }, /* a slice spanning two chunks: dw_by_mm's chain */
    { "bf16-3x3-n19",   0, 19, 6,  8,  8,  10, 3, 1, 1, 1 },
    /* a lowering in several blocks of output rows forward (conv_bf16.c's fwd_rows) */
    { "bf16-1x1-rows",  0, 2, 64, 64, 64,  16, 1, 1, 0, 1 }, /* 64 rows, 32 a block */
    { "bf16-s2-d2-rows",0, 1, 16, 200, 200, 8, 3, 2, 2, 2 }, /* lowered (dilated): 100 rows, 9 a block */
    /* a direct forward in several blocks of output rows (conv_bf16.c's direct_rows) */
    { "bf16-7x7-rows",  0, 2, 3, 115, 115, 64, 7, 2, 0, 1 }, /* v1.0's conv1 by phases: 55 rows, 17 a block */
    { "bf16-s2-blocks", 0, 2, 2, 130, 130, 256, 3, 2, 1, 1 }, /* by phases: 65 rows, 3 a block */
    { "bf16-3x3-blocks",0, 1, 8, 64, 64,   64, 3, 1, 1, 1 }, /* 64 rows, 15 a block */
    /* by phases with an even kernel (no zero tap; 2x2: one row of taps a phase), and 1x1 at
       stride 2, lowered */
    { "bf16-4x4-s2",    0, 2, 3, 12, 11,  6, 4, 2, 1, 1 },
    { "bf16-2x2-s2",    0, 2, 4, 10, 9,   5, 2, 2, 0, 1 },
    { "bf16-1x1-s2",    0, 2, 24, 9, 9,   8, 1, 2, 0, 1 },
    { "bf16-fc",        1, 5, 7,  3,  3,  10, 0, 0, 0, 0 },
    /* one image: the forward's output channels in blocks among the threads */
    { "bf16-batch1",    0, 1, 8,  10, 10, 13, 3, 1, 1, 1 },
    { "bf16-batch1-s2", 0, 1, 3,  15, 15, 11, 3, 2, 1, 1 },
    { "bf16-batch1-1x1",0, 1, 20, 6,  6,  9,  1, 1, 0, 1 },
    /* 48 channels in halves of 24 on 2 threads: on AMX, rows 16-23 then fill a tile of 8
       rows (they once went to AVX512-BF16, which adds in another order, and differed) */
    { "bf16-batch1-48", 0, 1, 16, 9,  9,  48, 3, 1, 1, 1 },
};

static struct dse_layer op_layer(const struct op_case *c) {
    struct dse_layer l = dse_layer_make(c->fc ? DSE_LAYER_FC : DSE_LAYER_CONV, c->id);
    l.num_output = c->K;
    if (!c->fc) {
        l.kernel_h = l.kernel_w = c->k, l.stride_h = l.stride_w = c->s, l.pad_h = l.pad_w = c->p;
        l.dilation_h = l.dilation_w = c->d;
    }
    return infer_layer(l, 1, c->C, c->H, c->W);
}

/* Forward and backward of f's node under cx, dy given: y, dx, dw, db into res (malloc'd);
 * with no_dx, the input without a gradient (a network's first conv: a stride-2 conv by
 * phases, conv_bf16.c's by_phases, then takes its weight gradient by phases too), res[1] NULL. */
static void run_op_as(struct dse_cpu_ctx *cx, struct fx *f, const float *dy, float *res[4], int no_dx) {
    const int64_t cnt[4] = { dse_tensor_count(&f->out), dse_tensor_count(&f->in[0]), dse_tensor_count(&f->w),
                             dse_tensor_count(&f->b) };
    float *in_grad = f->in[0].grad;
    if (no_dx) f->in[0].grad = NULL;
    CHECK_OK(dse_cpu_node_prepare(cx, &f->node, NULL));
    CHECK_OK(dse_cpu_forward(cx, &f->node));
    dse_tensor_zero_grad(&f->in[0]);
    dse_tensor_zero_grad(&f->w);
    dse_tensor_zero_grad(&f->b);
    memcpy(f->out.grad, dy, (size_t)cnt[0] * sizeof(float));
    CHECK_OK(dse_cpu_backward(cx, &f->node));
    const float *src[4] = { f->out.data, f->in[0].grad, f->w.grad, f->b.grad };
    for (int k = 0; k < 4; k++) {
        res[k] = src[k] ? malloc((size_t)cnt[k] * sizeof(float)) : NULL;
        if (src[k]) memcpy(res[k], src[k], (size_t)cnt[k] * sizeof(float));
    }
    f->in[0].grad = in_grad;
}

static void run_op(struct dse_cpu_ctx *cx, struct fx *f, const float *dy, float *res[4]) {
    run_op_as(cx, f, dy, res, 0);
}

/* The sums of |terms| each of y, dx and dw adds (the bound's scale), in double: a conv's
 * direct loops; fc as a 1x1 conv of a C H W-channel 1x1 image. */
static void op_mags(const struct op_case *c, const struct fx *f, const float *dy, double *my, double *mx,
                    double *mw) {
    const int fc = c->fc, C = fc ? c->C * c->H * c->W : c->C, H = fc ? 1 : c->H, W = fc ? 1 : c->W;
    const int R = fc ? 1 : c->k, s = fc ? 1 : c->s, p = fc ? 0 : c->p, d = fc ? 1 : c->d;
    const int P = f->out.h, Q = f->out.w, K = c->K;
    for (int n = 0; n < c->N; n++)
        for (int k = 0; k < K; k++)
            for (int ci = 0; ci < C; ci++)
                for (int r = 0; r < R; r++)
                    for (int t = 0; t < R; t++)
                        for (int oh = 0; oh < P; oh++)
                            for (int ow = 0; ow < Q; ow++) {
                                const int ih = oh * s - p + r * d, iw = ow * s - p + t * d;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                const int64_t xi = ((int64_t)(n * C + ci) * H + ih) * W + iw;
                                const int64_t yi = ((int64_t)(n * K + k) * P + oh) * Q + ow;
                                const int64_t wi = ((int64_t)(k * C + ci) * R + r) * R + t;
                                const double x = fabs(f->in[0].data[xi]), w = fabs(f->w.data[wi]), g = fabs(dy[yi]);
                                my[yi] += w * x, mx[xi] += w * g, mw[wi] += g * x;
                            }
}

void test_bf16_ops(void) {
    if (!has_bf16()) return;
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int i = 0; i < DSE_ARRAY_LEN(op_cases); i++) {
        const struct op_case *c = &op_cases[i];
        struct dse_layer l = op_layer(c);
        struct fx f;
        fx_init(&f, &cx, &l, c->N, 1, NULL, 0, 70 + i);
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 37, 4);
        const int64_t cnt[4] = { dse_tensor_count(&f.out), dse_tensor_count(&f.in[0]), dse_tensor_count(&f.w),
                                 dse_tensor_count(&f.b) };
        float *dy = malloc((size_t)cnt[0] * sizeof *dy), *f32[4], *b16[4];
        for (int64_t e = 0; e < cnt[0]; e++) dy[e] = uniform(&r, -1, 1);
        cx.bf16 = 0;
        run_op(&cx, &f, dy, f32);
        cx.bf16 = DSE_CPU_BF16_EVERY; /* the bf16 paths on small shapes too */
        const int phases = !c->fc && c->s == 2 && c->d == 1 && c->k >= 2; /* conv_bf16.c by_phases */
        int64_t ran = cx.stats.bf16_phases;
        run_op(&cx, &f, dy, b16);
        CHECK_INT_EQ(cx.stats.bf16_phases - ran, phases); /* forward by phases, data gradient lowered */
        cx.bf16 = 0;
        double *mag[3];
        for (int k = 0; k < 3; k++) mag[k] = calloc((size_t)cnt[k], sizeof(double));
        op_mags(c, &f, dy, mag[0], mag[1], mag[2]);
        /* the longest chain of float additions behind a value: an output's C R S products, a
         * dx's K R S, a dw's N P Q (and the slice tree's 16) */
        const int64_t R = c->fc ? 1 : c->k, C = c->fc ? c->C * c->H * c->W : c->C;
        const int64_t terms = (C + c->K) * R * R + (int64_t)c->N * f.out.h * f.out.w + 16;
        static const char *names[4] = { "y", "dx", "dw", "db" };
        /* a stride-2 conv without a data gradient (a first conv): its weight gradient by phases
           where the forward is (by_phases), lowered otherwise; compared as dw (k 3) */
        float *by_phases[4] = { NULL, NULL, NULL, NULL };
        if (!c->fc && c->s == 2) {
            cx.bf16 = DSE_CPU_BF16_EVERY;
            ran = cx.stats.bf16_phases;
            run_op_as(&cx, &f, dy, by_phases, 1);
            CHECK_INT_EQ(cx.stats.bf16_phases - ran, 2 * phases); /* and the weight gradient */
            cx.bf16 = 0;
            CHECK(!memcmp(by_phases[0], b16[0], (size_t)cnt[0] * sizeof(float))); /* forward: the same op */
        }
        for (int k = 0; k < (by_phases[2] ? 4 : 3); k++) {
            const int at = k < 3 ? k : 2;
            const float *got = k < 3 ? b16[k] : by_phases[2];
            double worst = 0.0;
            for (int64_t e = 0; e < cnt[at]; e++) {
                /* y carries the bias: its float addition's rounding, relative to |y| */
                const double scale = mag[at][e] + (at == 0 ? fabs(f32[0][e]) : 0.0);
                worst = fmax(worst, fabs((double)got[e] - f32[at][e]) / (scale > 0.0 ? scale : 1.0));
            }
            if (!(worst <= BF16_BOUND(terms)) || !(worst > 0.0))
                fprintf(stderr, "  %s: %s%s differs from float32's by %.3g of sum |terms| (bound %.3g)\n", c->id,
                        names[at], k < 3 ? "" : " without dx", worst, BF16_BOUND(terms));
            CHECK(worst <= BF16_BOUND(terms));
            CHECK(worst > 0.0); /* bf16 did run */
            if (getenv("DSE_TEST_VERBOSE"))
                printf("  %-14s %-2s %.3g (bound %.3g)\n", c->id, names[at], worst, BF16_BOUND(terms));
        }
        CHECK(!memcmp(b16[3], f32[3], (size_t)cnt[3] * sizeof(float))); /* the bias gradient: float32's */
        if (by_phases[3]) CHECK(!memcmp(by_phases[3], f32[3], (size_t)cnt[3] * sizeof(float)));
        for (int k = 0; k < 4; k++) free(f32[k]), free(b16[k]), free(by_phases[k]);
        for (int k = 0; k < 3; k++) free(mag[k]);
        free(dy);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* The rule choosing float32 for a conv where bf16 cannot win (dse_cpu_conv_bf16_fp32): its
 * reason, and under DSE_CPU_BF16_BY_RULE (what --precision bf16 runs) float32's bits exactly
 * where it says float32 (GEMM_BATCH's, with nothing timed: the same with any thread count),
 * other bits where it says bf16. */
struct rule_case {
    const char *id;
    int         C, H, W, K, k, s, p, groups;
    const char *why; /* NULL: bf16 */
};

static const struct rule_case rule_cases[] = {
    /* id                     C   H   W   K  k  s  p  g  why */
    { "rule-1x1-5x5",        32, 5,  5,  16, 1, 1, 0, 1, NULL },
    { "rule-1x1-4x4",        32, 4,  4,  16, 1, 1, 0, 1, "a 4x4 output map" },
    { "rule-3x3-3x3",        16, 3,  3,  8,  3, 1, 1, 1, "a 3x3 output map" },      /* FMNIST's fire9 */
    { "rule-conv1-fmnist",   1,  12, 12, 8,  3, 1, 1, 1, "9 terms per output, under 16" },
    { "rule-16-terms",       16, 6,  6,  8,  1, 1, 0, 1, NULL },
    { "rule-15-terms",       15, 6,  6,  8,  1, 1, 0, 1, "15 terms per output, under 16" },
    { "rule-7x7-s2",         3,  19, 19, 8,  7, 2, 0, 1, NULL },                    /* v1.0's conv1 */
    { "rule-groups",         8,  9,  9,  8,  3, 1, 1, 2, "groups 2" },
};

void test_bf16_rule(void) {
    if (!has_bf16()) return;
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int i = 0; i < DSE_ARRAY_LEN(rule_cases); i++) {
        const struct rule_case *c = &rule_cases[i];
        struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, c->id);
        l.num_output = c->K, l.groups = c->groups;
        l.kernel_h = l.kernel_w = c->k, l.stride_h = l.stride_w = c->s, l.pad_h = l.pad_w = c->p;
        l = infer_layer(l, 1, c->C, c->H, c->W);
        struct fx f;
        fx_init(&f, &cx, &l, 2, 1, NULL, 0, 130 + i);
        char buf[64];
        const char *why = dse_cpu_conv_bf16_fp32(&f.node, buf, sizeof buf);
        if (!(why ? c->why && !strcmp(why, c->why) : !c->why))
            fprintf(stderr, "  %s: rule says \"%s\", expected \"%s\"\n", c->id, why ? why : "bf16",
                    c->why ? c->why : "bf16");
        CHECK(why ? c->why && !strcmp(why, c->why) : !c->why);
        const int64_t cnt[4] = { dse_tensor_count(&f.out), dse_tensor_count(&f.in[0]), dse_tensor_count(&f.w),
                                 dse_tensor_count(&f.b) };
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 37, 5);
        float *dy = malloc((size_t)cnt[0] * sizeof *dy), *f32[4], *b16[4];
        for (int64_t e = 0; e < cnt[0]; e++) dy[e] = uniform(&r, -1, 1);
        cx.bf16 = DSE_CPU_BF16_OFF, cx.conv_force = DSE_CPU_CONV_GEMM_BATCH; /* what bf16 mode's float32 convs run */
        run_op(&cx, &f, dy, f32);
        cx.bf16 = DSE_CPU_BF16_BY_RULE, cx.conv_force = DSE_CPU_CONV_AUTO;
        const int64_t timed = cx.stats.conv_timings;
        run_op(&cx, &f, dy, b16);
        CHECK_INT_EQ(cx.stats.conv_timings, timed); /* nothing timed: no choice per thread count */
        cx.bf16 = DSE_CPU_BF16_OFF;
        int same = 1;
        for (int k = 0; k < 3; k++) same &= !memcmp(f32[k], b16[k], (size_t)cnt[k] * sizeof(float));
        if (same != (c->why != NULL))
            fprintf(stderr, "  %s: y, dx and dw %s float32's\n", c->id, same ? "equal" : "differ from");
        CHECK(same == (c->why != NULL));
        for (int k = 0; k < 4; k++) free(f32[k]), free(b16[k]);
        free(dy);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* The bf16 weight gradient's buffers: each thread holds the slice tree's few blocks at once
 * (conv_bf16.c's wt_depth), not one buffer per slice of the batch: a 1x1 conv of 32,768
 * weights on 16 images (16 slices) on one thread: 5 buffers and the scratch, 9.4 gradients' worth, not 16 buffers and more. */
void test_bf16_dw_bytes(void) {
    if (!has_bf16()) return;
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    cx.bf16 = DSE_CPU_BF16_EVERY;
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "wide");
    l.num_output = 512, l.kernel_h = l.kernel_w = 1, l.stride_h = l.stride_w = 1;
    l = infer_layer(l, 1, 64, 4, 4);
    struct fx f;
    fx_init(&f, &cx, &l, 16, 1, NULL, 0, 150);
    CHECK_OK(dse_cpu_node_prepare(&cx, &f.node, NULL));
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    dse_tensor_zero_grad(&f.in[0]);
    dse_tensor_zero_grad(&f.w);
    for (int64_t e = 0; e < dse_tensor_count(&f.out); e++) f.out.grad[e] = 1.0f;
    CHECK_OK(dse_cpu_backward(&cx, &f.node));
    const size_t per_slice = (size_t)512 * 64 * sizeof(float);
    if (!(cx.ws_bytes < 12 * per_slice) || getenv("DSE_TEST_VERBOSE"))
        fprintf(stderr, "  workspace %zu bytes: %.1f weight gradients' worth\n", cx.ws_bytes,
                (double)cx.ws_bytes / (double)per_slice);
    CHECK(cx.ws_bytes < 12 * per_slice);
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

/* The same bits with 1 and 2 threads, and on the C reference (DSE_CPU_NO_BF16 set: the ops'
 * packing and kernels in C) where the products run on AVX512-BF16 (AMX's tiles add in
 * another order: bf16-amx and bf16-ops bound them); on a CPU with AMX both ways, the second
 * with DSE_CPU_BF16_AMX=0. */
static void bf16_threads_on(void);

void test_bf16_threads(void) {
    if (!has_bf16()) return;
    bf16_threads_on();
    if (dse_cpu_bf16_isa() != DSE_CPU_BF16_AMX) return;
    char *saved = amx_env_set("0"); /* and on AVX512-BF16 alone, against the reference */
    bf16_threads_on();
    amx_env_back(saved);
}

static void bf16_threads_on(void) {
    for (int i = 0; i < DSE_ARRAY_LEN(op_cases); i++) {
        const struct op_case *c = &op_cases[i];
        struct dse_layer l = op_layer(c);
        struct fx f;
        struct dse_cpu_ctx cx[3];
        float *res[3][4];
        static const char *names[4] = { "y", "dx", "dw", "db" };
        for (int v = 0; v < 3; v++) {
            CHECK_OK(dse_cpu_ctx_init(&cx[v], v == 1 ? 2 : 1, 1234, NULL));
            cx[v].bf16 = DSE_CPU_BF16_EVERY;
        }
        fx_init(&f, &cx[0], &l, c->N, 1, NULL, 0, 90 + i);
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 37, 5);
        const int64_t cnt[4] = { dse_tensor_count(&f.out), dse_tensor_count(&f.in[0]), dse_tensor_count(&f.w),
                                 dse_tensor_count(&f.b) };
        float *dy = malloc((size_t)cnt[0] * sizeof *dy);
        for (int64_t e = 0; e < cnt[0]; e++) dy[e] = uniform(&r, -1, 1);
        for (int v = 0; v < 3; v++) {
            if (v == 2) setenv("DSE_CPU_NO_BF16", "1", 1);
            run_op(&cx[v], &f, dy, res[v]);
            if (v == 2) unsetenv("DSE_CPU_NO_BF16");
        }
        for (int v = 1; v < (dse_cpu_bf16_isa() == DSE_CPU_BF16_AMX ? 2 : 3); v++)
            for (int k = 0; k < 4; k++) {
                const int same = !memcmp(res[0][k], res[v][k], (size_t)cnt[k] * sizeof(float));
                if (!same)
                    fprintf(stderr, "  %s: %s differs %s\n", c->id, names[k], v == 1 ? "with 2 threads" : "on the reference");
                CHECK(same);
            }
        for (int v = 0; v < 3; v++)
            for (int k = 0; k < 4; k++) free(res[v][k]), res[v][k] = NULL;
        for (int v = 0; !c->fc && c->s == 2 && v < 3; v++) { /* without dx: by phases where by_phases */
            if (v == 2) setenv("DSE_CPU_NO_BF16", "1", 1);
            run_op_as(&cx[v], &f, dy, res[v], 1);
            if (v == 2) unsetenv("DSE_CPU_NO_BF16");
        }
        for (int v = 1; res[0][2] && v < (dse_cpu_bf16_isa() == DSE_CPU_BF16_AMX ? 2 : 3); v++)
            for (int k = 2; k < 4; k++) {
                const int same = !memcmp(res[0][k], res[v][k], (size_t)cnt[k] * sizeof(float));
                if (!same)
                    fprintf(stderr, "  %s without dx: %s differs %s\n", c->id, names[k],
                            v == 1 ? "with 2 threads" : "on the reference");
                CHECK(same);
            }
        for (int v = 0; v < 3; v++) {
            for (int k = 0; k < 4; k++) free(res[v][k]);
            dse_cpu_ctx_deinit(&cx[v]);
        }
        free(dy);
        fx_deinit(&f);
    }
}

/* Activations stored in bf16 (dse_tensor.bf16, engine/model.c plan_bf16), each conv case on 1
 * and 2 threads with a fused ReLU: the input stored in bf16 where the op reads it so
 * (dse_cpu_bf16_io: 1x1 and padded-plane convs; float otherwise) and the output stored in
 * bf16 give the same bits as float tensors: y as the float output rounded, dx, dw and db
 * exactly (the conv rounds its input to those values either way; the mask reads y > 0 from
 * the 16 bits). */
void test_bf16_acts(void) {
    if (!has_bf16()) return;
    static const char *names[4] = { "y", "dx", "dw", "db" };
    for (int i = 0; i < DSE_ARRAY_LEN(op_cases); i++) {
        const struct op_case *c = &op_cases[i];
        if (c->fc) continue;
        for (int threads = 1; threads <= 2; threads++) {
            struct dse_layer l = op_layer(c);
            struct fx f;
            struct dse_cpu_ctx cx;
            CHECK_OK(dse_cpu_ctx_init(&cx, threads, 1234, NULL));
            cx.bf16 = DSE_CPU_BF16_EVERY;
            fx_init(&f, &cx, &l, c->N, 1, NULL, 0, 110 + i);
            f.node.relu_out = 1;
            struct dse_pcg32 r;
            dse_pcg32_seed(&r, 37, 6);
            const int64_t cnt[4] = { dse_tensor_count(&f.out), dse_tensor_count(&f.in[0]), dse_tensor_count(&f.w),
                                     dse_tensor_count(&f.b) };
            float *dy = malloc((size_t)cnt[0] * sizeof *dy), *ref[4], *got[4];
            for (int64_t e = 0; e < cnt[0]; e++) dy[e] = uniform(&r, -1, 1);
            run_op(&cx, &f, dy, ref);
            { /* the ReLU's mask and the bias gradient as conv2d.c's passes would take them (a
               * conv with a weight gradient, lowered or direct, takes them with dy's rows,
               * dse_cpu_conv_bf16_fuses): dy masked by y > 0 beforehand and no ReLU gives dx,
               * dw, db exactly, and float32's bias pass on it db exactly */
                float *dm = malloc((size_t)cnt[0] * sizeof *dm), *pre[4], *f32[4];
                for (int64_t e = 0; e < cnt[0]; e++) dm[e] = ref[0][e] > 0.0f ? dy[e] : 0.0f;
                f.node.relu_out = 0;
                run_op(&cx, &f, dm, pre);
                cx.bf16 = 0;
                run_op(&cx, &f, dm, f32);
                cx.bf16 = DSE_CPU_BF16_EVERY, f.node.relu_out = 1;
                for (int k = 1; k < 4; k++) {
                    const int same = !memcmp(ref[k], pre[k], (size_t)cnt[k] * sizeof(float));
                    if (!same) fprintf(stderr, "  %s, %d threads: %s differs from dy masked first\n", c->id, threads, names[k]);
                    CHECK(same);
                }
                CHECK(!memcmp(ref[3], f32[3], (size_t)cnt[3] * sizeof(float)));
                for (int k = 0; k < 4; k++) free(pre[k]), free(f32[k]);
                free(dm);
            }
            /* the same node on 16-bit storage */
            const int in16 = dse_cpu_bf16_io(&cx, &f.node, 0);
            CHECK(dse_cpu_bf16_io(&cx, &f.node, 1));
            const int want_in16 = c->k == 1 ? c->s == 1 && c->p == 0 : c->s == 1 && c->C >= 4;
            CHECK_INT_EQ(in16, want_in16); /* 1x1 unpadded, or direct on padded planes */
            /* y16 as many bytes as float y: run_op copies the output's cnt[0] floats' bytes */
            dse_bf16 *x16 = malloc((size_t)cnt[1] * sizeof *x16), *y16 = calloc((size_t)cnt[0], sizeof(float));
            for (int64_t e = 0; e < cnt[1]; e++) x16[e] = dse_bf16_of(f.in[0].data[e]);
            float *xf = f.in[0].data, *yf = f.out.data;
            if (in16) f.in[0].data = (float *)(void *)x16, f.in[0].bf16 = 1;
            f.out.data = (float *)(void *)y16, f.out.bf16 = 1;
            run_op(&cx, &f, dy, got); /* got[0]: y's 16-bit values, copied as floats' bytes */
            int same_y = 1;
            for (int64_t e = 0; e < cnt[0]; e++) same_y &= y16[e] == dse_bf16_of(ref[0][e]);
            if (!same_y) fprintf(stderr, "  %s, %d threads: y stored in bf16 is not float32's rounded\n", c->id, threads);
            CHECK(same_y);
            for (int k = 1; k < 4; k++) {
                const int same = !memcmp(ref[k], got[k], (size_t)cnt[k] * sizeof(float));
                if (!same)
                    fprintf(stderr, "  %s, %d threads: %s differs with bf16 activations\n", c->id, threads, names[k]);
                CHECK(same);
            }
            f.in[0].data = xf, f.in[0].bf16 = 0, f.out.data = yf, f.out.bf16 = 0;
            for (int k = 0; k < 4; k++) free(ref[k]), free(got[k]);
            free(x16), free(y16), free(dy);
            fx_deinit(&f);
            dse_cpu_ctx_deinit(&cx);
        }
    }
}

/* Gradient checks in bf16 mode. The inputs, weights and dL/dy are multiples of 1/64 in
 * [-1, 1] and the step 1/64, so every value forward and backward multiply is a bf16 held
 * exactly and the products are exact: what is left is float32's order of addition, and
 * float32's tolerance (TOL_CONV, TOL_FC) holds. Operands bf16 rounds are the op tests'. */

static void quantize(struct dse_tensor *t) {
    for (int i = 0; i < t->n; i++)
        for (int64_t e = 0; e < dse_tensor_image(t); e++) {
            float *v = &t->data[i * t->stride_n + e];
            *v = roundf(*v * 48.0f) / 64.0f;
        }
}

static const struct op_case grad_cases[] = {
    /* id                fc  N  C  H   W   K  k  s  p  d */
    { "grad-1x1",         0, 2, 9, 4,  4,  6, 1, 1, 0, 1 },
    { "grad-3x3",         0, 2, 4, 5,  5,  6, 3, 1, 1, 1 }, /* direct */
    { "grad-3x3-odd",     0, 2, 5, 5,  6,  3, 3, 1, 0, 1 }, /* direct, half pairs */
    { "grad-5x5-dil2",    0, 1, 4, 11, 10, 3, 5, 1, 3, 2 }, /* direct, dilated */
    { "grad-3x3-s2",      0, 2, 3, 7,  6,  4, 3, 2, 1, 1 },
    { "grad-3x3-dil2",    0, 2, 3, 7,  7,  3, 3, 1, 2, 2 },
    { "grad-conv1",       0, 2, 1, 8,  9,  4, 3, 1, 1, 1 },
    { "grad-7x7-s2",      0, 1, 3, 13, 13, 4, 7, 2, 0, 1 },
    { "grad-fc",          1, 3, 5, 2,  2,  7, 0, 0, 0, 0 },
};

void test_grad_bf16(void) {
    if (!has_bf16()) return;
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    cx.bf16 = DSE_CPU_BF16_EVERY; /* the bf16 paths on small shapes too */
    for (int i = 0; i < DSE_ARRAY_LEN(grad_cases); i++) {
        const struct op_case *c = &grad_cases[i];
        struct dse_layer l = op_layer(c);
        struct fx f;
        fx_init(&f, &cx, &l, c->N, 1, NULL, 0, 110 + i);
        quantize(&f.in[0]);
        quantize(&f.w);
        char what[80];
        snprintf(what, sizeof what, "%s in bf16", c->id);
        grad_check_q(&cx, &f.node, 1.0 / 64.0, c->fc ? TOL_FC : TOL_CONV, FLOOR, what, 1.0 / 64.0);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}
