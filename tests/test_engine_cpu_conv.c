/* test_engine_cpu_conv.c: the conv strategies: gradient checks of each, their agreement
 * (Winograd on odd maps and views), bit-identical threads and SIMD paths, the BLAS kernels
 * chosen, and the strategy choice. Part of test_engine_cpu (its case table:
 * tests/test_engine_cpu.c). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS (layout-moves' guard page) */
#include "tests/engine_cpu_util.h"

#include <sys/mman.h>
#include <unistd.h>

#include "engine/cpu/bf16_impl.h" /* pool-ties: an input stored in bf16 */
#include "engine/cpu/cpu_impl.h" /* dse_cpu_sum_channels, dse_cpu_sum (sum4-exact); layout.c (layout-moves) */

/* ---- conv ------------------------------------------------------------------------------- */

struct conv_case {
    const char *id;
    int N, C, H, W, K, kh, kw, sh, sw, ph, pw, dh, dw, groups, bias;
    size_t ws_limit; /* 0: default; small forces GEMM_BATCH to lower one image at a time */
};

static const struct conv_case conv_cases[] = {
    /* id             N  C  H  W  K kh kw sh sw ph pw dh dw  g bias */
    { "3x3-pad1",     2, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    { "3x3-s2-pad1",  2, 3, 7, 6, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0 },
    { "3x3-dil2",     2, 2, 7, 7, 3, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 0 },
    { "3x3-groups2",  2, 4, 5, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2, 1, 0 },
    { "1x1",          2, 5, 4, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
    { "1x1-groups2",  2, 4, 3, 3, 4, 1, 1, 1, 1, 0, 0, 1, 1, 2, 1, 0 },
    { "1x1-s2",       2, 3, 5, 5, 2, 1, 1, 2, 2, 0, 0, 1, 1, 1, 0, 0 },
    { "3x1-mixed",    2, 2, 6, 5, 3, 3, 1, 2, 1, 0, 1, 2, 1, 1, 0, 0 },
    { "overhang",     2, 2, 6, 6, 2, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 0 }, /* (6-3)/2+1 = 2: last column unread */
    { "chunked",      3, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
    { "1ch-3x3",      2, 1, 6, 9, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 }, /* one input channel (conv1 on MNIST) */
    { "2x5-pad",      2, 2, 7, 6, 3, 2, 5, 1, 1, 1, 2, 1, 1, 1, 1, 0 }, /* non-square filter, wider pad */
};

static struct dse_layer conv_layer(const struct conv_case *c) {
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, c->id);
    l.num_output = c->K;
    l.kernel_h = c->kh, l.kernel_w = c->kw, l.stride_h = c->sh, l.stride_w = c->sw;
    l.pad_h = c->ph, l.pad_w = c->pw, l.dilation_h = c->dh, l.dilation_w = c->dw;
    l.groups = c->groups, l.bias = c->bias;
    return infer_layer(l, 1, c->C, c->H, c->W);
}

/* Gradient checks of `algo` on n cases (seeds seed0 + i). */
static void conv_grad_cases(int algo, const struct conv_case *cases, int n, uint64_t seed0) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int i = 0; i < n; i++) {
        const struct conv_case *c = &cases[i];
        struct dse_layer l = conv_layer(c);
        struct fx f;
        fx_init(&f, &cx, &l, c->N, 1, NULL, 0, seed0 + (uint64_t)i);
        f.node.algo_fwd = f.node.algo_bwd = algo;
        cx.ws_limit_bytes = c->ws_limit ? c->ws_limit : (size_t)256 << 20;
        char what[80];
        snprintf(what, sizeof what, "conv %s %s", c->id, dse_cpu_conv_algo_str(algo));
        grad_check(&cx, &f.node, EPS, TOL_CONV, FLOOR, what);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

static void conv_grad(int algo) {
    conv_grad_cases(algo, conv_cases, DSE_ARRAY_LEN(conv_cases), 10);
}

void test_grad_conv_batch(void) { conv_grad(DSE_CPU_CONV_GEMM_BATCH); }
void test_grad_conv_image(void) { conv_grad(DSE_CPU_CONV_GEMM_IMAGE); }
/* Winograd: conv_cases (the shapes it cannot run fall back to GEMM_BATCH), then shapes it
 * runs itself: pads 0..3 (the data gradient reads dy at pad 2 - pad, negative for 3),
 * odd and even sizes, partial edge tiles, one image, a chunk of one image. */
void test_grad_conv_wino(void) {
    conv_grad(DSE_CPU_CONV_WINOGRAD);
    static const struct conv_case wcases[] = {
        /* id           N  C  H  W  K kh kw sh sw ph pw dh dw  g bias ws_limit */
        { "w-pad0",     2, 3, 6, 7, 2, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "w-pad1-7",   1, 2, 7, 7, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "w-pad2-1",   3, 1, 4, 5, 2, 3, 3, 1, 1, 2, 1, 1, 1, 1, 0, 0 },
        { "w-pad3",     2, 2, 3, 4, 1, 3, 3, 1, 1, 3, 3, 1, 1, 1, 1, 0 },
        { "w-tiny",     2, 3, 1, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "w-chunked",  3, 3, 5, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
    };
    conv_grad_cases(DSE_CPU_CONV_WINOGRAD, wcases, DSE_ARRAY_LEN(wcases), 30);
}

/* DIRECT (engine/cpu/mm.c): conv_cases (the shapes it does not run fall back to
 * GEMM_BATCH), then 1x1 shapes that reach every edge of its tiles: columns ending inside a
 * vector (49 = 3 x 16 + 1; 15; 99 = 64 + 35; one pixel), rows not a multiple of 6 (forward,
 * data gradient) or 4 and 6 (weight gradient), and 130 input channels (k in blocks of 64);
 * and 3x3 shapes (8 channels in and out, DIRECT's least): pads 0 and 2 (the data gradient
 * pads dy by 2 and 0), 70 outputs (a block of 64 and one of 6: halves and vector tails),
 * rows of 15 (three pieces of 5, two rows a tile then one), a 1x1 map, and pads that
 * differ between rows and columns. */
static const struct conv_case direct_cases[] = {
    /* id            N   C  H  W   K kh kw sh sw ph pw dh dw  g bias */
    { "d-tails",     2, 13, 7, 7, 14, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
    { "d-k130",      2, 130, 3, 5, 7, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
    { "d-wide",      1, 3, 9, 11, 5, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0 },
    { "d-one-pixel", 3, 4, 1, 1, 6, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
    { "d3-pad0",     2, 8, 6, 7, 8, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
    { "d3-pad2",     1, 8, 4, 5, 9, 3, 3, 1, 1, 2, 2, 1, 1, 1, 0, 0 },
    { "d3-k70",      1, 8, 5, 4, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    { "d3-wide",     1, 8, 5, 15, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    { "d3-1x1-map",  2, 8, 1, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    { "d3-pad2-0",   2, 8, 4, 6, 9, 3, 3, 1, 1, 2, 0, 1, 1, 1, 1, 0 },
};

void test_grad_conv_direct(void) {
    if (!dse_cpu_direct_isa()) {
        printf("  skipped: this CPU has no AVX2 + FMA (or DSE_CPU_NO_AVX2 is set): DIRECT runs GEMM_BATCH\n");
        return;
    }
    conv_grad(DSE_CPU_CONV_DIRECT);
    conv_grad_cases(DSE_CPU_CONV_DIRECT, direct_cases, DSE_ARRAY_LEN(direct_cases), 40);
}

/* Max |a - b| over max |b|, both read image by image. */
static double rel_diff(const struct dse_tensor *t, const float *a, const float *b) {
    double d = 0.0, m = 0.0;
    for (int i = 0; i < t->n; i++)
        for (int64_t j = 0; j < dse_tensor_image(t); j++) {
            int64_t k = i * t->stride_n + j;
            d = fmax(d, fabs((double)a[k] - b[k]));
            m = fmax(m, fabs((double)b[k]));
        }
    return m > 0.0 ? d / m : d;
}

/* Every strategy, same tensors: forward outputs and every gradient agree with
 * GEMM_BATCH's to 1e-4 (Winograd runs a-3x3 and a-chunked itself). */
void test_conv_agree(void) {
    static const struct conv_case cases[] = {
        { "a-3x3",      4, 16, 13, 13, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "a-1x1",      4, 32, 9, 9, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "a-1x1-fire", 3, 200, 7, 7, 38, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 }, /* DIRECT: k blocks, tails */
        { "a-7x7-s2",   2, 3, 29, 29, 8, 7, 7, 2, 2, 0, 0, 1, 1, 1, 1, 0 },
        { "a-grp-dil",  3, 8, 11, 10, 12, 3, 3, 1, 2, 2, 1, 2, 1, 4, 0, 0 },
        { "a-chunked",  5, 6, 8, 8, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 20000 },
        { "a-conv1",    4, 1, 28, 28, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        /* images whose col outgrows GEMM_BLOCK_BYTES: GEMM_IMAGE lowers 10 rows of 60 at a
         * time (6 blocks), v1.0's conv1 8 of 111 (14 blocks, the last of 7 rows) */
        { "a-rows-3x3", 2, 24, 60, 60, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "a-rows-v10", 1, 3, 227, 227, 8, 7, 7, 2, 2, 0, 0, 1, 1, 1, 1, 0 },
    };
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        const struct conv_case *c = &cases[i];
        struct dse_layer l = conv_layer(c);
        struct fx f;
        fx_init(&f, &cx, &l, c->N, 1, NULL, 0, 50 + i);
        cx.ws_limit_bytes = c->ws_limit ? c->ws_limit : (size_t)256 << 20;
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 5, 5);
        float *res[DSE_CPU_CONV_COUNT][4]; /* y, dx, dw, db */
        const int64_t ny = dse_tensor_count(&f.out), nx = dse_tensor_count(&f.in[0]),
                      nw = dse_tensor_count(&f.w), nb = f.node.bias ? dse_tensor_count(&f.b) : 0;
        float *dy = malloc((size_t)ny * sizeof *dy);
        for (int64_t j = 0; j < ny; j++) dy[j] = uniform(&r, -1, 1);
        for (int a = 0; a < DSE_CPU_CONV_COUNT; a++) {
            f.node.algo_fwd = f.node.algo_bwd = a;
            CHECK_OK(dse_cpu_forward(&cx, &f.node));
            dse_tensor_zero_grad(&f.in[0]);
            dse_tensor_zero_grad(&f.w);
            if (nb) dse_tensor_zero_grad(&f.b);
            memcpy(f.out.grad, dy, (size_t)ny * sizeof *dy);
            CHECK_OK(dse_cpu_backward(&cx, &f.node));
            const float *src[4] = { f.out.data, f.in[0].grad, f.w.grad, nb ? f.b.grad : NULL };
            const int64_t cnt[4] = { ny, nx, nw, nb };
            for (int k = 0; k < 4; k++) {
                res[a][k] = malloc((size_t)(cnt[k] ? cnt[k] : 1) * sizeof(float));
                if (cnt[k]) memcpy(res[a][k], src[k], (size_t)cnt[k] * sizeof(float));
            }
        }
        static const char *names[4] = { "y", "dx", "dw", "db" };
        const struct dse_tensor *shapes[4] = { &f.out, &f.in[0], &f.w, &f.b };
        for (int a = 1; a < DSE_CPU_CONV_COUNT; a++)
            for (int k = 0; k < 4; k++) {
                if (k == 3 && !nb) continue;
                double d = rel_diff(shapes[k], res[a][k], res[DSE_CPU_CONV_GEMM_BATCH][k]);
                if (!(d <= 1e-4))
                    fprintf(stderr, "  %s: %s differs by %.3g between gemm_batch and %s\n", c->id, names[k], d,
                            dse_cpu_conv_algo_str(a));
                CHECK(d <= 1e-4);
            }
        for (int a = 0; a < DSE_CPU_CONV_COUNT; a++)
            for (int k = 0; k < 4; k++) free(res[a][k]);
        free(dy);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* Forward y and every gradient of node f under `threads` threads, into res[0..3]. */
static void run_threads(struct fx *f, int threads, int algo, const float *dy, float *res[4]) {
    struct dse_cpu_ctx cx;
    CHECK_OK(dse_cpu_ctx_init(&cx, threads, 1234, NULL));
    CHECK_OK(dse_cpu_node_prepare(&cx, &f->node, NULL));
    f->node.algo_fwd = f->node.algo_bwd = algo;
    const int has_b = f->node.bias != NULL;
    CHECK_OK(dse_cpu_forward(&cx, &f->node));
    dse_tensor_zero_grad(&f->in[0]);
    dse_tensor_zero_grad(&f->w);
    if (has_b) dse_tensor_zero_grad(&f->b);
    memcpy(f->out.grad, dy, (size_t)dse_tensor_count(&f->out) * sizeof *dy);
    CHECK_OK(dse_cpu_backward(&cx, &f->node));
    const float *src[4] = { f->out.data, f->in[0].grad, f->w.grad, has_b ? f->b.grad : NULL };
    const int64_t cnt[4] = { dse_tensor_count(&f->out), dse_tensor_count(&f->in[0]), dse_tensor_count(&f->w),
                             has_b ? dse_tensor_count(&f->b) : 0 };
    for (int k = 0; k < 4; k++) {
        res[k] = calloc((size_t)(cnt[k] ? cnt[k] : 1), sizeof(float));
        if (cnt[k]) memcpy(res[k], src[k], (size_t)cnt[k] * sizeof(float));
    }
    dse_cpu_ctx_deinit(&cx);
}

/* The thread tests' fixture: c's conv node with random data (fx_seed) in f, a ctx in cx0, and
 * a random output gradient (dy_seed) to run backward with; free() it. */
static float *threads_fixture(const struct conv_case *c, uint64_t fx_seed, uint64_t dy_seed, struct dse_cpu_ctx *cx0,
                              struct fx *f) {
    const struct dse_layer l = conv_layer(c);
    ctx_init(cx0);
    fx_init(f, cx0, &l, c->N, 1, NULL, 0, fx_seed);
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, dy_seed, dy_seed);
    const int64_t ny = dse_tensor_count(&f->out);
    float *dy = malloc((size_t)ny * sizeof *dy);
    for (int64_t j = 0; j < ny; j++) dy[j] = uniform(&r, -1, 1);
    return dy;
}

/* The kernels split the batch (or, below one image per thread, the output channels)
 * over the ctx's threads (engine/cpu/team.c). Every strategy on shapes with fewer
 * images than threads, more, and a non-multiple: 2, 3 and 4 threads agree with 1 to
 * 1e-5 (only the order of the weight-gradient sums changes), and a second run with the
 * same threads is bit-identical. */
void test_conv_threads(void) {
    static const struct conv_case cases[] = {
        { "t-one-image", 1, 8, 9, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "t-1x1-one",   1, 16, 6, 6, 10, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "t-five",      5, 6, 8, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "t-groups",    3, 8, 7, 7, 8, 3, 3, 2, 2, 1, 1, 1, 1, 2, 1, 0 },
        { "t-1x1-seven", 7, 12, 5, 5, 6, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        const struct conv_case *c = &cases[i];
        struct dse_cpu_ctx cx0;
        struct fx f;
        float *dy = threads_fixture(c, 70 + (uint64_t)i, 9, &cx0, &f);
        const struct dse_tensor *shapes[4] = { &f.out, &f.in[0], &f.w, &f.b };
        static const char *names[4] = { "y", "dx", "dw", "db" };
        for (int a = 0; a < DSE_CPU_CONV_COUNT; a++) {
            float *ref[4], *got[4], *again[4];
            run_threads(&f, 1, a, dy, ref);
            for (int t = 2; t <= 4; t++) {
                run_threads(&f, t, a, dy, got);
                run_threads(&f, t, a, dy, again);
                for (int k = 0; k < 4; k++) {
                    if (k == 3 && !f.node.bias) continue;
                    const double d = rel_diff(shapes[k], got[k], ref[k]);
                    if (!(d <= 1e-5))
                        fprintf(stderr, "  %s %s: %s differs by %.3g between 1 and %d threads\n", c->id,
                                dse_cpu_conv_algo_str(a), names[k], d, t);
                    CHECK(d <= 1e-5);
                    CHECK(memcmp(got[k], again[k], (size_t)dse_tensor_count(shapes[k]) * sizeof(float)) == 0);
                }
                for (int k = 0; k < 4; k++) free(got[k]), free(again[k]);
            }
            for (int k = 0; k < 4; k++) free(ref[k]);
        }
        free(dy);
        fx_deinit(&f);
        dse_cpu_ctx_deinit(&cx0);
    }
}

/* Issue #31: the thread-count guarantee whatever BLAS kernels run. OpenBLAS's Prescott
 * kernels (what Debian's OpenBLAS runs on CPUs newer than its model table) gave a row other
 * bits in an sgemm of fewer rows, and the forward pass below one image per thread cut the
 * output channels by the threads. Now every sgemm is the same call with any threads
 * (conv2d.c fwd_split): shapes of 1 to 3 images whose output rows or channels are cut into
 * blocks at odd places, every strategy, 2, 3 and 5 threads equal 1 bit for bit, with OpenBLAS forced
 * to Prescott's, Nehalem's and (with AVX2) Haswell's kernels and the setup's choice. */
void test_conv_threads_blas(void) {
    static const struct conv_case cases[] = {
        /* id             N   C  H  W   K kh kw sh sw ph pw dh dw  g bias */
        { "b-3x3-rows",   1, 5, 17, 19, 37, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },  /* 2 blocks of rows */
        { "b-1x1-rows",   2, 7, 23, 23, 21, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },  /* 4 of rows */
        { "b-3x3-chan",   1, 13, 5, 5, 131, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 }, /* 2 of channels */
        { "b-1x1-chan",   3, 9, 6, 6, 200, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },  /* 2 of channels */
    };
    const unsigned feat = dse_cpu_features();
    const char *cores[4] = { "Prescott", (feat & DSE_CPU_SSE42) ? "Nehalem" : NULL, (feat & DSE_CPU_AVX2) ? "Haswell" : NULL,
                             NULL };
    const int threads[3] = { 2, 3, 5 };
    int same = 0, runs = 0;
    for (int c = 0; c < DSE_ARRAY_LEN(cores); c++) {
        if (c < 3 && !cores[c]) continue;
        if (cores[c] && !dse_blas_has(cores[c])) { /* OpenBLAS without DYNAMIC_ARCH, or another BLAS */
            printf("  SKIP: this BLAS cannot switch to %s's kernels\n", cores[c]);
            continue;
        }
        CHECK_INT_EQ(dse_blas_force(cores[c]), 0); /* the last: NULL, the setup's choice */
        if (cores[c]) CHECK_STR_EQ(dse_blas_core(), cores[c]);
        for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
            const struct conv_case *cc = &cases[i];
            struct dse_cpu_ctx cx0;
            struct fx f;
            float *dy = threads_fixture(cc, 90 + (uint64_t)i, 7, &cx0, &f);
            const struct dse_tensor *shapes[4] = { &f.out, &f.in[0], &f.w, &f.b };
            static const char *names[4] = { "y", "dx", "dw", "db" };
            for (int a = 0; a < DSE_CPU_CONV_COUNT; a++) {
                float *ref[4], *got[4];
                run_threads(&f, 1, a, dy, ref);
                for (int t = 0; t < DSE_ARRAY_LEN(threads); t++) {
                    run_threads(&f, threads[t], a, dy, got);
                    for (int k = 0; k < 4; k++) {
                        const int eq = !memcmp(got[k], ref[k], (size_t)dse_tensor_count(shapes[k]) * sizeof(float));
                        if (!eq)
                            fprintf(stderr, "  %s, %s kernels, %s: %s of %d threads differs from 1 thread's\n", cc->id,
                                    dse_blas_core(), dse_cpu_conv_algo_str(a), names[k], threads[t]);
                        same += eq, runs++;
                    }
                    for (int k = 0; k < 4; k++) free(got[k]);
                }
                for (int k = 0; k < 4; k++) free(ref[k]);
            }
            free(dy);
            fx_deinit(&f);
            dse_cpu_ctx_deinit(&cx0);
        }
    }
    CHECK_INT_EQ(same, runs);
    printf("  %d of %d results of 2, 3 and 5 threads equal 1 thread's under Prescott's%s%s and the setup's kernels\n",
           same, runs, cores[1] ? ", Nehalem's" : "", cores[2] ? ", Haswell's" : "");
}

/* The BLAS kernels' choice (engine/cpu/blas.c) from the CPU's features and the library's
 * core types, never the model: Debian's OpenBLAS 0.3.21 chose Prescott on a 5th-generation
 * Xeon (issue #31). */
static int has_all(const char *sym) { (void)sym; return 1; }
static int has_0321(const char *sym) { return strcmp(sym, "gotoblas_SAPPHIRERAPIDS") != 0; }
void test_blas_choice(void) {
    const unsigned avx512 = DSE_CPU_SSE42 | DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512;
    static const struct {
        const char *detected, *user;
        unsigned    features;
        int         lib_0321, can;
        const char *to, *how;
    } cases[] = {
        { "Prescott", NULL, DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512 | DSE_CPU_AVX512BF16 | DSE_CPU_AMX, 1, 1,
          "Cooperlake", "chosen by dse from the CPU's features; OpenBLAS chose Prescott" },
        { "Prescott", NULL, DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512 | DSE_CPU_AVX512BF16 | DSE_CPU_AMX, 0, 1,
          "SapphireRapids", "chosen by dse from the CPU's features; OpenBLAS chose Prescott" },
        { "Prescott", NULL, DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512, 1, 1, "SkylakeX", NULL },
        { "Sandybridge", NULL, DSE_CPU_AVX | DSE_CPU_AVX2, 1, 1, "Haswell", NULL },
        { "Zen", NULL, DSE_CPU_AVX | DSE_CPU_AVX2, 1, 1, NULL, "OpenBLAS's own choice, the best this CPU runs" },
        { "Zen", NULL, DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512 | DSE_CPU_AVX512BF16, 1, 1, "Cooperlake", NULL },
        { "Cooperlake", NULL, DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512 | DSE_CPU_AVX512BF16, 1, 1, NULL, NULL },
        { "Prescott", NULL, 0, 1, 1, NULL, "OpenBLAS's own choice, the best this CPU runs" },
        { "Prescott", "Prescott", DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512, 1, 1, NULL,
          "OPENBLAS_CORETYPE=Prescott, set by the user; this CPU runs SkylakeX's, faster" },
        { "Prescott", NULL, DSE_CPU_AVX | DSE_CPU_AVX2 | DSE_CPU_AVX512, 1, 0, NULL,
          "OpenBLAS's own choice; SkylakeX's would be faster, but this library cannot switch (set "
          "OPENBLAS_CORETYPE=SkylakeX)" },
        { "NeoverseN1", NULL, DSE_CPU_AVX | DSE_CPU_AVX2, 1, 1, NULL, "OpenBLAS's own choice (a core type dse does not rank)" },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        char how[192];
        const char *to = dse_blas_decide(cases[i].detected, cases[i].features, cases[i].user,
                                         cases[i].lib_0321 ? has_0321 : has_all, cases[i].can, how, sizeof how);
        CHECK_STR_EQ(to ? to : "(keep)", cases[i].to ? cases[i].to : "(keep)");
        if (cases[i].how) CHECK_STR_EQ(how, cases[i].how);
    }
    CHECK_STR_EQ(dse_blas_pick(avx512, has_all), "SkylakeX");
    CHECK(dse_blas_level("prescott") == 0 && dse_blas_level("SKYLAKEX") == 4 && dse_blas_level("Power10") == -1);
    /* this machine: the setup ran with the first ctx and left the best kernels it could */
    const struct dse_blas_info *b = dse_blas_setup();
    printf("  this machine: %s kernels (%s); features %s\n", b->core, b->how, b->features);
    CHECK_STR_EQ(b->core, dse_blas_core());
    if (!getenv("OPENBLAS_CORETYPE") && b->best[0] && dse_blas_level(b->detected) >= 0)
        CHECK(dse_blas_level(b->core) >= dse_blas_level(b->best));
}

/* Elementwise and pooling kernels split planes or blocks over the threads, each value
 * computed the same way: 1 and 3 threads give the same bits. */
void test_elementwise_threads(void) {
    struct dse_layer pool = dse_layer_make(DSE_LAYER_MAXPOOL, "pool");
    pool.kernel_h = pool.kernel_w = 3, pool.stride_h = pool.stride_w = 2;
    struct dse_layer avg = dse_layer_make(DSE_LAYER_AVGPOOL, "avg");
    avg.kernel_h = avg.kernel_w = 3, avg.stride_h = avg.stride_w = 2, avg.pad_h = avg.pad_w = 1;
    struct dse_layer relu = dse_layer_make(DSE_LAYER_RELU, "relu");
    const struct dse_layer ls[3] = { infer_layer(pool, 1, 7, 33, 33), infer_layer(avg, 1, 7, 33, 33),
                                     infer_layer(relu, 1, 7, 33, 33) };
    for (int i = 0; i < 3; i++) {
        float *res[2][2];
        for (int v = 0; v < 2; v++) {
            struct dse_cpu_ctx cx;
            CHECK_OK(dse_cpu_ctx_init(&cx, v ? 3 : 1, 1234, NULL));
            struct fx f;
            fx_init(&f, &cx, &ls[i], 9, 1, NULL, 0, 90 + i);
            CHECK_OK(dse_cpu_forward(&cx, &f.node));
            dse_tensor_zero_grad(&f.in[0]);
            for (int64_t j = 0; j < dse_tensor_count(&f.out); j++) f.out.grad[j] = (float)(j % 13) - 6.0f;
            CHECK_OK(dse_cpu_backward(&cx, &f.node));
            const int64_t ny = dse_tensor_count(&f.out), nx = dse_tensor_count(&f.in[0]);
            res[v][0] = malloc((size_t)ny * sizeof(float));
            res[v][1] = malloc((size_t)nx * sizeof(float));
            memcpy(res[v][0], f.out.data, (size_t)ny * sizeof(float));
            memcpy(res[v][1], f.in[0].grad, (size_t)nx * sizeof(float));
            if (v) {
                CHECK(memcmp(res[0][0], res[1][0], (size_t)ny * sizeof(float)) == 0);
                CHECK(memcmp(res[0][1], res[1][1], (size_t)nx * sizeof(float)) == 0);
            }
            fx_deinit(&f);
            dse_cpu_ctx_deinit(&cx);
        }
        for (int v = 0; v < 2; v++) free(res[v][0]), free(res[v][1]);
    }
}

/* Max pooling with many equal values (three levels, at random: -1, 0, 1, then all negative,
 * so that a lane loaded past the row as 0 would win if it were ever used): every output and
 * argmax equal a plain row-major scan of its clipped window keeping the first maximum
 * (Caffe's rule), on shapes whose interior columns take the vectorized stride-2 path and
 * whose edges (padding, ceil overhang) take the general one. A third pass stores the input
 * in bf16 (a bf16 conv's output, dse_cpu_bf16_io): values distinct in float that round to
 * a few bf16 ones, the scan over the rounded values (on every CPU: the conversion to floats
 * has a portable loop). */
void test_pool_ties(void) {
    static const struct { int H, W, k, s, pad; } shapes[] = {
        { 28, 28, 3, 2, 0 }, { 13, 17, 3, 2, 1 }, { 9, 10, 2, 2, 0 }, { 11, 11, 5, 2, 2 }, { 8, 9, 3, 1, 1 },
        /* SqueezeNet v1.0's pool1 and shapes whose rows the AVX2 3x3/2 path takes 8 outputs
         * at a time, with a scalar head (pad 1) and tail */
        { 111, 111, 3, 2, 0 }, { 57, 60, 3, 2, 1 }, { 40, 37, 3, 2, 0 },
        /* SqueezeNet-FMNIST's pool4 and pool8 (rows of 7 and 3 outputs: one masked group
         * of fewer than 8), rows of 8 + 1 masked, 16 + 1, and windows clipped to 1 or 2
         * rows by padding or the ceil overhang */
        { 14, 14, 3, 2, 0 }, { 7, 7, 3, 2, 0 }, { 19, 20, 3, 2, 0 }, { 34, 35, 3, 2, 0 }, { 6, 5, 3, 2, 1 },
        { 3, 3, 3, 2, 0 }, { 4, 4, 3, 2, 1 },
        /* AVX-512's 16 a step: rows of 32 vector outputs (the second group's last loads under
         * masks) and a last one clipped by the ceil overhang, of 33 (16 + 16 + 1), and of 21
         * after a padded first */
        { 9, 66, 3, 2, 0 }, { 7, 67, 3, 2, 0 }, { 8, 45, 3, 2, 1 },
    };
    /* each path: AVX-512, AVX2 (DSE_CPU_NO_AVX512) and the scalar loop (DSE_CPU_NO_AVX2) */
    static const char *const modes[] = { NULL, "DSE_CPU_NO_AVX512", "DSE_CPU_NO_AVX2" };
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int v = 0; v < DSE_ARRAY_LEN(modes) * DSE_ARRAY_LEN(shapes); v++) {
        const int sh = v % DSE_ARRAY_LEN(shapes), mode = v / DSE_ARRAY_LEN(shapes);
        if (modes[mode]) setenv(modes[mode], "1", 1);
        struct dse_layer l = dse_layer_make(DSE_LAYER_MAXPOOL, "pool");
        l.kernel_h = l.kernel_w = shapes[sh].k, l.stride_h = l.stride_w = shapes[sh].s;
        l.pad_h = l.pad_w = shapes[sh].pad;
        l = infer_layer(l, 1, 3, shapes[sh].H, shapes[sh].W);
        struct fx f;
        fx_init(&f, &cx, &l, 2, 1, NULL, 0, 60 + sh);
        const int64_t nx = dse_tensor_count(&f.in[0]);
        dse_bf16 *x16 = malloc((size_t)nx * sizeof *x16);
        float *xf = f.in[0].data;
        for (int neg = 0; neg < 3; neg++) {
            /* -1, 0 or 1 (then -3, -2, -1) at random: ties within rows and across them, maxima in any row */
            struct dse_pcg32 r;
            dse_pcg32_seed(&r, 61 + sh, 1);
            for (int64_t j = 0; j < nx; j++)
                f.in[0].data[j] = (float)dse_pcg32_bounded(&r, 3) - 1.0f - 2.0f * (float)neg;
            if (neg == 2) { /* 1 + k / 4096 (k < 48), negated at random: 1 or 1 + 1/128 rounded, most inputs tied */
                for (int64_t j = 0; j < nx; j++) {
                    const float m = 1.0f + (float)dse_pcg32_bounded(&r, 48) / 4096.0f;
                    x16[j] = dse_bf16_of(dse_pcg32_bounded(&r, 2) ? m : -m);
                    f.in[0].data[j] = dse_bf16_to_float(x16[j]); /* the scan's values */
                }
                f.in[0].data = (float *)(void *)x16, f.in[0].bf16 = 1;
            }
            for (int64_t j = 0; j < dse_tensor_count(&f.out); j++) /* nothing kept from the first pass */
                f.out.data[j] = NAN, f.node.st.argmax[j] = -2;
            f.node.pool_relu = (sh + neg) % 2; /* windows whose maximum is not > 0 cut (ARG_CUT) */
            CHECK_OK(dse_cpu_forward(&cx, &f.node));
            f.in[0].data = xf, f.in[0].bf16 = 0;
            const int H = l.in_h, W = l.in_w, P = l.out_h, Q = l.out_w, k = l.kernel_h, st = l.stride_h, pd = l.pad_h;
            int bad = 0;
            for (int nc = 0; nc < 2 * 3; nc++)
                for (int p = 0; p < P; p++)
                    for (int q = 0; q < Q; q++) {
                        int h0 = p * st - pd, w0 = q * st - pd, h1 = h0 + k, w1 = w0 + k;
                        h0 = h0 < 0 ? 0 : h0, w0 = w0 < 0 ? 0 : w0, h1 = h1 > H ? H : h1, w1 = w1 > W ? W : w1;
                        const float *xp = f.in[0].data + (int64_t)nc * H * W;
                        int arg = h0 * W + w0;
                        for (int h = h0; h < h1; h++)
                            for (int w = w0; w < w1; w++)
                                if (xp[h * W + w] > xp[arg]) arg = h * W + w;
                        const int64_t o = ((int64_t)nc * P + p) * Q + q;
                        const int cut = f.node.pool_relu && !(xp[arg] > 0.0f);
                        const int32_t want = cut ? (int32_t)((uint32_t)arg | 0x80000000u) : arg;
                        bad += f.out.data[o] != xp[arg] || f.node.st.argmax[o] != want;
                    }
            const char *pass = neg == 2 ? " (bf16 input)" : neg ? " (negative)" : "";
            const char *path = modes[mode] ? modes[mode] : "fastest";
            if (bad) fprintf(stderr, "  pool shape %d%s, %s: %d outputs differ from a plain scan\n", sh, pass, path, bad);
            CHECK_INT_EQ(bad, 0);
            /* backward: each plane's gradient made apart (dse_cpu_maxpool_dx_plane, for a conv's
             * dse_node.dy_pool, one plane into a buffer of its own) against the pool's own,
             * written whole (dx_whole), bit for bit: windows sharing an argmax (the ties), dy
             * with -0 among its values, cut windows */
            for (int64_t j = 0; j < dse_tensor_count(&f.out); j++)
                f.out.grad[j] = j % 11 == 3 ? -0.0f : (float)((j * 7) % 13 - 6) / 4.0f + 1e-3f * (float)(j % 5);
            f.node.dx_whole = 1;
            CHECK_OK(dse_cpu_backward(&cx, &f.node));
            f.node.dx_whole = 0;
            float *plane = malloc((size_t)H * W * sizeof *plane);
            int pbad = 0;
            for (int nc = 0; nc < 2 * 3; nc++) {
                for (int e = 0; e < H * W; e++) plane[e] = NAN; /* every value written */
                dse_cpu_maxpool_dx_plane(&f.node, nc, plane);
                pbad += memcmp(plane, f.in[0].grad + (int64_t)nc * H * W, (size_t)H * W * sizeof *plane) != 0;
            }
            if (pbad)
                fprintf(stderr, "  pool shape %d%s, %s: %d planes' gradients differ from the pool's backward\n", sh,
                        pass, path, pbad);
            CHECK_INT_EQ(pbad, 0);
            free(plane);
        }
        free(x16);
        fx_deinit(&f);
        if (modes[mode]) unsetenv(modes[mode]);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* Winograd against GEMM_BATCH on larger shapes (SqueezeNet's odd maps, pads 0 and 1,
 * C and K of no particular multiple), with y a view of channels [2, 2+K) of a wider
 * tensor (a concat buffer): y, dx, dw, db agree to 1e-4 of the largest value, and the
 * channels outside the view keep their contents, forward and backward. */
void test_conv_wino_agree(void) {
    static const struct conv_case cases[] = {
        /* id            N   C   H   W   K kh kw sh sw ph pw dh dw  g bias ws_limit */
        { "wa-7",        3, 17,  7,  7, 23, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "wa-13",       2, 16, 13, 13, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "wa-14-pad0",  1,  9, 14, 14, 11, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "wa-27",       2,  5, 27, 27,  7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
        { "wa-27-pad0",  3,  3, 27, 26,  6, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "wa-chunked",  3, 10, 13, 13,  9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 60000 },
    };
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        const struct conv_case *c = &cases[i];
        struct dse_layer l = conv_layer(c);
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 70 + i, 3);
        struct dse_tensor x, wide, y, w, b;
        memset(&b, 0, sizeof b);
        CHECK_OK(dse_tensor_init(&x, c->N, c->C, c->H, c->W, DSE_TENSOR_GRAD, NULL));
        CHECK_OK(dse_tensor_init(&wide, c->N, c->K + 3, l.out_h, l.out_w, DSE_TENSOR_GRAD, NULL));
        dse_tensor_view_channels(&y, &wide, 2, c->K);
        CHECK_OK(dse_tensor_init(&w, c->K, c->C, 3, 3, DSE_TENSOR_GRAD, NULL));
        if (c->bias) CHECK_OK(dse_tensor_init(&b, 1, c->K, 1, 1, DSE_TENSOR_GRAD, NULL));
        fill_uniform(&x, &r, -1, 1);
        fill_uniform(&w, &r, -1, 1);
        if (c->bias) fill_uniform(&b, &r, -1, 1);
        struct dse_node n;
        dse_node_init(&n, DSE_OP_CONV2D, &l);
        n.n_in = 1, n.in[0] = &x, n.out = &y, n.weight = &w, n.bias = c->bias ? &b : NULL;
        struct dse_err err = { 0 };
        CHECK_OK(dse_cpu_node_prepare(&cx, &n, &err));
        cx.ws_limit_bytes = c->ws_limit ? c->ws_limit : (size_t)256 << 20;
        const int64_t nwide = dse_tensor_count(&wide), nx = dse_tensor_count(&x), nw = dse_tensor_count(&w);
        const int64_t nb = c->bias ? c->K : 0;
        float *dwide = malloc((size_t)nwide * sizeof(float));
        for (int64_t j = 0; j < nwide; j++) dwide[j] = uniform(&r, -1, 1);
        float *res[2][4];
        const int algos[2] = { DSE_CPU_CONV_GEMM_BATCH, DSE_CPU_CONV_WINOGRAD };
        for (int a = 0; a < 2; a++) {
            n.algo_fwd = n.algo_bwd = algos[a];
            dse_tensor_fill(&wide, 7.0f); /* sentinel outside the view */
            CHECK_OK(dse_cpu_forward(&cx, &n));
            memcpy(wide.grad, dwide, (size_t)nwide * sizeof(float));
            dse_tensor_zero_grad(&x);
            dse_tensor_zero_grad(&w);
            if (nb) dse_tensor_zero_grad(&b);
            CHECK_OK(dse_cpu_backward(&cx, &n));
            const int64_t img = dse_tensor_image(&wide), PQ = (int64_t)l.out_h * l.out_w;
            int outside_ok = 1;
            for (int im = 0; im < c->N; im++)
                for (int64_t j = 0; j < img; j++) {
                    const int ch = (int)(j / PQ);
                    if (ch >= 2 && ch < 2 + c->K) continue;
                    if (wide.data[im * wide.stride_n + j] != 7.0f || wide.grad[im * wide.stride_n + j] != dwide[im * img + j])
                        outside_ok = 0;
                }
            CHECK(outside_ok);
            const float *src[4] = { wide.data, x.grad, w.grad, nb ? b.grad : NULL };
            const int64_t cnt[4] = { nwide, nx, nw, nb };
            for (int k = 0; k < 4; k++) {
                res[a][k] = malloc((size_t)(cnt[k] ? cnt[k] : 1) * sizeof(float));
                if (cnt[k]) memcpy(res[a][k], src[k], (size_t)cnt[k] * sizeof(float));
            }
        }
        static const char *names[4] = { "y", "dx", "dw", "db" };
        const struct dse_tensor *shapes[4] = { &y, &x, &w, &b };
        for (int k = 0; k < 4; k++) {
            if (k == 3 && !nb) continue;
            /* y is compared through the view (image stride of the wide tensor). */
            const int64_t off = k == 0 ? y.data - wide.data : 0;
            double d = rel_diff(shapes[k], res[1][k] + off, res[0][k] + off);
            if (!(d <= 1e-4)) fprintf(stderr, "  %s: %s differs by %.3g (winograd vs gemm_batch)\n", c->id, names[k], d);
            CHECK(d <= 1e-4);
        }
        for (int a = 0; a < 2; a++)
            for (int k = 0; k < 4; k++) free(res[a][k]);
        free(dwide);
        dse_node_deinit(&n);
        dse_tensor_deinit(&x), dse_tensor_deinit(&wide), dse_tensor_deinit(&w), dse_tensor_deinit(&b);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* One forward and backward of f's node; out, dx, dw, db copied into buf (in that order). */
static size_t run_copy(struct dse_cpu_ctx *cx, struct fx *f, float *buf) {
    dse_tensor_zero_grad(&f->in[0]);
    if (f->node.weight) dse_tensor_zero_grad(&f->w);
    if (f->node.bias) dse_tensor_zero_grad(&f->b);
    CHECK_OK(dse_cpu_forward(cx, &f->node));
    for (int64_t j = 0; j < dse_tensor_count(&f->out); j++) f->out.grad[j] = (float)((j * 37) % 11) - 5.0f;
    CHECK_OK(dse_cpu_backward(cx, &f->node));
    size_t n = 0;
    const struct dse_tensor *ts[4] = { &f->out, &f->in[0], f->node.weight ? &f->w : NULL,
                                       f->node.bias ? &f->b : NULL };
    for (int k = 0; k < 4; k++) {
        const float *src = !ts[k] ? NULL : k == 0 ? ts[k]->data : ts[k]->grad;
        if (!src || dse_tensor_count(ts[k]) == 0) continue; /* pooling has no weights */
        const int64_t c = dse_tensor_count(ts[k]);
        if (buf) memcpy(buf + n, src, (size_t)c * sizeof(float));
        n += (size_t)c;
    }
    return n;
}

/* The AVX2 kernels (Winograd tile transforms, 3x3/2 max pooling) give the scalar code's
 * bits: the same operations in the same order. Each shape runs both ways
 * (DSE_CPU_NO_AVX2) and must agree exactly; shapes with rows of at least 8 tiles or 8
 * full pooling windows, so the vector paths run. */
void test_simd_exact(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (!__builtin_cpu_supports("avx2")) {
        printf("  this CPU has no AVX2: only the scalar kernels exist to compare\n");
        return;
    }
#endif
    static const struct conv_case wc[] = {
        /* id            N   C   H   W   K kh kw sh sw ph pw dh dw  g bias ws_limit */
        { "se-27",       2,  5, 27, 27,  7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "se-40-pad0",  2,  3, 40, 35,  4, 3, 3, 1, 1, 0, 0, 1, 1, 1, 0, 0 },
    };
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    const char *keep = getenv("DSE_CPU_NO_AVX2");
    for (int i = 0; i < DSE_ARRAY_LEN(wc) + 2; i++) {
        struct dse_layer l;
        int N = 2;
        if (i < DSE_ARRAY_LEN(wc)) {
            l = conv_layer(&wc[i]);
            N = wc[i].N;
        } else { /* SqueezeNet v1.0's pool1, and a padded one with a scalar head */
            l = dse_layer_make(DSE_LAYER_MAXPOOL, "pool");
            l.kernel_h = l.kernel_w = 3, l.stride_h = l.stride_w = 2, l.pad_h = l.pad_w = i - DSE_ARRAY_LEN(wc);
            l = infer_layer(l, 1, 3, 111, 60 + i);
        }
        struct fx f;
        fx_init(&f, &cx, &l, N, 1, NULL, 0, 90 + i);
        if (l.type == DSE_LAYER_CONV) f.node.algo_fwd = f.node.algo_bwd = DSE_CPU_CONV_WINOGRAD;
        unsetenv("DSE_CPU_NO_AVX2");
        const size_t n = run_copy(&cx, &f, NULL);
        float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        run_copy(&cx, &f, a);
        setenv("DSE_CPU_NO_AVX2", "1", 1);
        run_copy(&cx, &f, b);
        const int same = memcmp(a, b, n * sizeof *a) == 0;
        if (!same) fprintf(stderr, "  %s: AVX2 and scalar results differ\n", i < DSE_ARRAY_LEN(wc) ? wc[i].id : "pool");
        CHECK(same);
        free(a), free(b);
        fx_deinit(&f);
    }
    if (keep) setenv("DSE_CPU_NO_AVX2", keep, 1);
    else unsetenv("DSE_CPU_NO_AVX2");
    dse_cpu_ctx_deinit(&cx);
}

/* dse_cpu_sum_channels (four planes' sums at once, for the bias gradients) gives
 * dse_cpu_sum's bits on each plane with AVX-512, with AVX2 (DSE_CPU_NO_AVX512, as
 * dse_cpu_mm_isa then says) and without either (DSE_CPU_NO_AVX2): the same eight running
 * sums, tree and tail. Values of mixed magnitude and sign, so another order of the adds would
 * change the sums; planes with and without a tail, SqueezeNet's among them; 1 to 4 channels. */
void test_sum4_exact(void) {
    static const int64_t lens[] = { 0, 1, 7, 8, 9, 15, 16, 17, 49, 169, 729, 3025 };
    static const char *const modes[] = { NULL, "DSE_CPU_NO_AVX512", "DSE_CPU_NO_AVX2" };
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 2026, 37);
    float *x = malloc(4 * 3025 * sizeof *x);
    for (int64_t i = 0; i < 4 * 3025; i++)
        x[i] = ((float)(dse_pcg32_next(&r) % 2001) - 1000.0f) * ldexpf(1.0f, (int)(dse_pcg32_next(&r) % 40) - 20);
    int differ = 0;
    for (int m = 0; m < DSE_ARRAY_LEN(modes); m++) {
        if (modes[m]) setenv(modes[m], "1", 1);
        const int isa = dse_cpu_mm_isa();
        for (int l = 0; l < DSE_ARRAY_LEN(lens); l++)
            for (int nk = 1; nk <= 4; nk++) {
                double got[4];
                dse_cpu_sum_channels(x, lens[l], nk, isa, got);
                for (int j = 0; j < nk; j++) {
                    const double want = dse_cpu_sum(x + j * lens[l], lens[l]);
                    if (memcmp(&got[j], &want, sizeof want) != 0 && differ++ < 5)
                        fprintf(stderr, "  %s, n %lld, %d channels, plane %d: %.17g, dse_cpu_sum %.17g\n",
                                modes[m] ? modes[m] : "fastest", (long long)lens[l], nk, j, got[j], want);
                }
            }
        if (modes[m]) unsetenv(modes[m]);
    }
    CHECK(differ == 0);
    free(x);
}

/* DIRECT's two instruction sets give the same bits (mm.c: one chain of fused multiply-adds
 * per element in a fixed order, the 1x1 dot products' 16 lanes added in one tree): AVX-512
 * against AVX2 (DSE_CPU_NO_AVX512), forward with the fused ReLU and backward, on
 * SqueezeNet-like 1x1 and 3x3 shapes with every kind of edge, on 1 and 3 threads. */
void test_conv_direct_exact(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (!dse_cpu_direct_isa()) {
        printf("  skipped: this CPU has no AVX2 + FMA (or DSE_CPU_NO_AVX2 is set): DIRECT does not run\n");
        return;
    }
    const int has512 = __builtin_cpu_supports("avx512f");
    if (!has512) printf("  this CPU has no AVX-512: AVX2 only, on 1 and 3 threads\n");
    static const struct conv_case dc[] = {
        /* id             N    C   H   W    K kh kw sh sw ph pw dh dw  g bias */
        { "x-fire5-sq",   5, 256,  7,  7,  32, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "x-fire2-ex",   3,  16, 14, 14,  64, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "x-odd",        4,  70,  5, 13,  23, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "x-fire6-ex3",  3,  48,  7,  7, 192, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "x-odd3",       2,   9,  9, 13,  23, 3, 3, 1, 1, 2, 0, 1, 1, 1, 1, 0 },
        { "x-wide3",      2,   8, 11, 55,  40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        /* 40 images: slices of 2 or 3, so a weight-gradient chunk holds several */
        { "x-batch1",    40,  12,  7,  7,  10, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "x-batch3",    40,   8,  7,  7,  20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    };
    const char *keep = getenv("DSE_CPU_NO_AVX512");
    int bad = 0;
    for (int i = 0; i < DSE_ARRAY_LEN(dc); i++) {
        struct dse_layer l = conv_layer(&dc[i]);
        float *res[2][2] = { { NULL, NULL }, { NULL, NULL } }; /* [isa][threads 1, 3] */
        size_t n = 0;
        for (int v = 0; v < 4; v++) {
            const int avx2 = v / 2, threads = v % 2 ? 3 : 1;
            if (avx2 ? 0 : !has512) continue;
            if (avx2) setenv("DSE_CPU_NO_AVX512", "1", 1);
            else unsetenv("DSE_CPU_NO_AVX512");
            struct dse_cpu_ctx cx;
            CHECK_OK(dse_cpu_ctx_init(&cx, threads, 1234, NULL));
            struct fx f;
            fx_init(&f, &cx, &l, dc[i].N, 1, NULL, 0, 120 + i);
            f.node.algo_fwd = f.node.algo_bwd = DSE_CPU_CONV_DIRECT;
            f.node.relu_out = 1;
            n = run_copy(&cx, &f, NULL);
            res[avx2][v % 2] = malloc(n * sizeof(float));
            run_copy(&cx, &f, res[avx2][v % 2]);
            fx_deinit(&f);
            dse_cpu_ctx_deinit(&cx);
        }
        const float *ref = res[1][0];
        for (int v = 0; v < 4; v++) {
            if (!res[v / 2][v % 2]) continue;
            const int same = memcmp(res[v / 2][v % 2], ref, n * sizeof(float)) == 0;
            bad += !same;
            if (!same)
                fprintf(stderr, "  %s: %s on %d threads differs from AVX2 on 1\n", dc[i].id, v / 2 ? "AVX2" : "AVX-512",
                        v % 2 ? 3 : 1);
            CHECK(same);
        }
        for (int v = 0; v < 4; v++) free(res[v / 2][v % 2]);
    }
    if (keep) setenv("DSE_CPU_NO_AVX512", keep, 1);
    else unsetenv("DSE_CPU_NO_AVX512");
    /* Frozen filters (no weight gradient): the data gradient alone, the same bits, in its
     * own workspace layout (a review found the dy plane written past it). */
    for (int i = 0; i < DSE_ARRAY_LEN(dc); i++) {
        struct dse_layer l = conv_layer(&dc[i]);
        struct dse_cpu_ctx cx;
        CHECK_OK(dse_cpu_ctx_init(&cx, 2, 1234, NULL));
        struct fx f;
        fx_init(&f, &cx, &l, dc[i].N, 1, NULL, 0, 140 + i);
        f.node.algo_fwd = f.node.algo_bwd = DSE_CPU_CONV_DIRECT;
        const int64_t nx = dse_tensor_count(&f.in[0]);
        float *dx = malloc((size_t)nx * sizeof *dx), *wg = f.w.grad;
        run_copy(&cx, &f, NULL);
        memcpy(dx, f.in[0].grad, (size_t)nx * sizeof *dx);
        f.w.grad = NULL;
        dse_tensor_zero_grad(&f.in[0]);
        CHECK_OK(dse_cpu_backward(&cx, &f.node));
        const int same = memcmp(dx, f.in[0].grad, (size_t)nx * sizeof *dx) == 0;
        if (!same) fprintf(stderr, "  %s: dx without a weight gradient differs\n", dc[i].id);
        bad += !same;
        CHECK(same);
        f.w.grad = wg;
        free(dx);
        fx_deinit(&f);
        dse_cpu_ctx_deinit(&cx);
    }
    printf("  DIRECT, %d shapes: AVX-512%s and AVX2, 1 and 3 threads: %s\n", DSE_ARRAY_LEN(dc),
           has512 ? "" : " (absent)", bad ? "DIFFERENT bits" : "the same bits");
#else
    printf("  skipped: not x86-64: DIRECT does not run\n");
#endif
}

/* AUTO never picks Winograd for a shape it does not run: timing skips it (ms -1), and
 * forcing it runs GEMM_BATCH (the same bits). A 3x3 stride-1 shape times it. */
void test_conv_wino_choose(void) {
    static const struct conv_case cases[] = {
        /* id            N  C  H  W  K kh kw sh sw ph pw dh dw  g bias ws_limit */
        { "wc-ok",       2, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
        { "wc-s2",       2, 4, 9, 9, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0 },
        { "wc-1x1",      2, 4, 8, 8, 4, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0 },
        { "wc-5x5",      2, 4, 8, 8, 4, 5, 5, 1, 1, 2, 2, 1, 1, 1, 1, 0 },
        { "wc-dil2",     2, 4, 8, 8, 4, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 0 },
        { "wc-groups2",  2, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 2, 1, 0 },
        { "wc-3x1",      2, 4, 8, 8, 4, 3, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0 },
    };
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        const struct conv_case *c = &cases[i];
        struct dse_layer l = conv_layer(c);
        struct fx f;
        fx_init(&f, &cx, &l, c->N, 1, NULL, 0, 90 + i);
        struct dse_cpu_conv_choice ch;
        CHECK_OK(dse_cpu_conv2d_choose(&cx, &f.node, &ch));
        if (i == 0) {
            CHECK(ch.ms_fwd[DSE_CPU_CONV_WINOGRAD] > 0.0f && ch.ms_bwd[DSE_CPU_CONV_WINOGRAD] > 0.0f);
            fx_deinit(&f);
            continue;
        }
        CHECK(ch.ms_fwd[DSE_CPU_CONV_WINOGRAD] == -1.0f && ch.ms_bwd[DSE_CPU_CONV_WINOGRAD] == -1.0f);
        CHECK(ch.algo_fwd != DSE_CPU_CONV_WINOGRAD && ch.algo_bwd != DSE_CPU_CONV_WINOGRAD);
        CHECK(ch.algo_fwd >= 0 && ch.algo_bwd >= 0);
        const int64_t ny = dse_tensor_count(&f.out), nx = dse_tensor_count(&f.in[0]);
        float *ref = malloc((size_t)(ny + nx) * sizeof(float));
        for (int64_t j = 0; j < ny; j++) f.out.grad[j] = (float)(j % 7) - 3.0f;
        for (int a = 0; a < 2; a++) {
            f.node.algo_fwd = f.node.algo_bwd = a ? DSE_CPU_CONV_WINOGRAD : DSE_CPU_CONV_GEMM_BATCH;
            CHECK_OK(dse_cpu_forward(&cx, &f.node));
            dse_tensor_zero_grad(&f.in[0]);
            CHECK_OK(dse_cpu_backward(&cx, &f.node));
            if (!a) {
                memcpy(ref, f.out.data, (size_t)ny * sizeof(float));
                memcpy(ref + ny, f.in[0].grad, (size_t)nx * sizeof(float));
            } else {
                CHECK(memcmp(ref, f.out.data, (size_t)ny * sizeof(float)) == 0);
                CHECK(memcmp(ref + ny, f.in[0].grad, (size_t)nx * sizeof(float)) == 0);
            }
        }
        free(ref);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* AUTO times each strategy once per shape (forward on the first forward, backward on the
 * first backward), caches it, and an explicit algo or ctx force skips the timing. */
void test_conv_choose(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    const struct conv_case c = { .id = "choose", .N = 2, .C = 4, .H = 6, .W = 6, .K = 4, .kh = 3, .kw = 3,
                                 .sh = 1, .sw = 1, .ph = 1, .pw = 1, .dh = 1, .dw = 1, .groups = 1, .bias = 1 };
    struct dse_layer l = conv_layer(&c);
    struct fx f, f2;
    fx_init(&f, &cx, &l, c.N, 1, NULL, 0, 3);
    fx_init(&f2, &cx, &l, c.N, 1, NULL, 0, 4);
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK_INT_EQ(cx.stats.conv_timings, 1);
    CHECK_INT_EQ(cx.conv_cache_n, 1);
    CHECK(cx.conv_cache[0].algo_fwd >= 0 && cx.conv_cache[0].algo_fwd < DSE_CPU_CONV_COUNT);
    CHECK(cx.conv_cache[0].algo_bwd == DSE_CPU_CONV_AUTO);
    CHECK(cx.conv_cache[0].ms_fwd[0] > 0.0f && cx.conv_cache[0].ms_fwd[1] > 0.0f);
    /* Its output is the chosen strategy's, not clobbered by the timing runs' order. */
    float *y = malloc((size_t)dse_tensor_count(&f.out) * sizeof *y);
    memcpy(y, f.out.data, (size_t)dse_tensor_count(&f.out) * sizeof *y);
    f.node.algo_fwd = cx.conv_cache[0].algo_fwd;
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK(memcmp(y, f.out.data, (size_t)dse_tensor_count(&f.out) * sizeof *y) == 0);
    f.node.algo_fwd = DSE_ALGO_AUTO;
    free(y);
    /* Another node of the same shape reuses the entry. */
    CHECK_OK(dse_cpu_forward(&cx, &f2.node));
    CHECK_INT_EQ(cx.stats.conv_timings, 1);
    /* Backward: timed once, with scratch gradients: the node's grads get one backward. */
    dse_tensor_fill(&f.out, 0.0f);
    for (int64_t j = 0; j < dse_tensor_count(&f.out); j++) f.out.grad[j] = 1.0f;
    CHECK_OK(dse_cpu_backward(&cx, &f.node));
    CHECK_INT_EQ(cx.stats.conv_timings, 2);
    CHECK(cx.conv_cache[0].algo_bwd >= 0 && cx.conv_cache[0].algo_bwd < DSE_CPU_CONV_COUNT);
    /* db = sum of dy over batch and pixels = 2 * 36, once (not once per timing run). */
    CHECK_NEAR(f.b.grad[0], 72.0, 1e-6);
    struct dse_cpu_conv_choice ch;
    CHECK_OK(dse_cpu_conv2d_choose(&cx, &f.node, &ch));
    CHECK_INT_EQ(cx.stats.conv_timings, 2);
    CHECK_INT_EQ(ch.algo_bwd, cx.conv_cache[0].algo_bwd);
    /* A different batch is a different shape. */
    fx_deinit(&f2);
    fx_init(&f2, &cx, &l, 3, 1, NULL, 0, 4);
    cx.conv_force = DSE_CPU_CONV_GEMM_IMAGE; /* forced: no timing */
    CHECK_OK(dse_cpu_forward(&cx, &f2.node));
    CHECK_INT_EQ(cx.stats.conv_timings, 2);
    cx.conv_force = DSE_CPU_CONV_AUTO;
    CHECK_OK(dse_cpu_forward(&cx, &f2.node));
    CHECK_INT_EQ(cx.stats.conv_timings, 3);
    CHECK_INT_EQ(cx.conv_cache_n, 2);
    f2.node.algo_fwd = 7;
    CHECK_INT_EQ(dse_cpu_forward(&cx, &f2.node), DSE_ERR_CONFIG);
    CHECK_STR_EQ(cx.err.msg, "layer 'choose' (conv2d): conv strategy 7 does not exist on the CPU");
    fx_deinit(&f);
    fx_deinit(&f2);
    dse_cpu_ctx_deinit(&cx);
}

/* The direct convolutions' layout moves (engine/cpu/layout.c) against the plain loops they
 * replace: padded planes for pads 0 to 3 and maps 1 to 28 wide (rows of 8, 4, 2, 1 floats and
 * their sums), and dy turned pixel-major with and without the AVX2 8x8 blocks, channel and
 * pixel counts with and without tails, and a stride-2 lowered row (dse_cpu_take2) of 1 to 41
 * values. Every value must arrive where the loops put it, and
 * nothing be written before or after (the buffers' guard floats stay NaN). */
void test_layout_moves(void) {
    struct dse_pcg32 rng;
    dse_pcg32_seed(&rng, 77, 1);
    static const int dims[] = { 1, 3, 7, 13, 14, 28 };
    enum { G = 16, ROOM = 3 * 34 * 34 + 2 * G }; /* G guard floats before the output, more after */
    float *x = malloc(sizeof *x * 3 * 28 * 28), *got = malloc(sizeof *got * ROOM), *want = malloc(sizeof *want * ROOM);
    for (int i = 0; i < 3 * 28 * 28; i++) x[i] = (float)dse_pcg32_next(&rng) / 4096.0f - 1e5f;
    int bad = 0;
    for (int a = 0; a < DSE_ARRAY_LEN(dims); a++)
        for (int b = 0; b < DSE_ARRAY_LEN(dims); b++)
            for (int ph = 0; ph <= 3; ph++)
                for (int pw = 0; pw <= 3; pw++) {
                    const int H = dims[a], W = dims[b], Hp = H + 2 * ph, Wp = W + 2 * pw;
                    for (int i = 0; i < ROOM; i++) got[i] = NAN, want[i] = i >= G && i < G + 3 * Hp * Wp ? 0.0f : NAN;
                    for (int c = 0; c < 3; c++)
                        for (int h = 0; h < H; h++)
                            for (int w = 0; w < W; w++)
                                want[G + (c * Hp + ph + h) * Wp + pw + w] = x[(c * H + h) * W + w];
                    dse_cpu_pad_planes(x, 3, H, W, ph, pw, got + G);
                    if (memcmp(got, want, sizeof *got * ROOM)) {
                        if (!bad++) fprintf(stderr, "  pad_planes %dx%d, pads %d,%d: wrong\n", H, W, ph, pw);
                    }
                }
    CHECK_INT_EQ(bad, 0);
    static const int ks[] = { 1, 7, 8, 16, 23, 64 }, pqs[] = { 1, 7, 9, 16, 49, 196 };
    enum { DROOM = 196 * 64 + 2 * G };
    float *g = malloc(sizeof *g * 64 * 196), *d = malloc(sizeof *d * DROOM), *e = malloc(sizeof *e * DROOM);
    for (int i = 0; i < 64 * 196; i++) g[i] = (float)dse_pcg32_next(&rng) / 65536.0f;
    bad = 0;
    for (int isa = DSE_CPU_MM_NONE; isa <= DSE_CPU_MM_AVX2; isa++) {
        if (isa == DSE_CPU_MM_AVX2 && dse_cpu_mm_isa() == DSE_CPU_MM_NONE) continue; /* no AVX2 here */
        for (int a = 0; a < DSE_ARRAY_LEN(ks); a++)
            for (int b = 0; b < DSE_ARRAY_LEN(pqs); b++) {
                const int K = ks[a], PQ = pqs[b], kt = (K + 15) / 16 * 16;
                for (int i = 0; i < DROOM; i++) d[i] = e[i] = NAN;
                for (int q = 0; q < PQ; q++)
                    for (int k = 0; k < kt; k++) e[G + q * kt + k] = k < K ? g[k * PQ + q] : 0.0f;
                dse_cpu_to_pixels(g, K, PQ, kt, d + G, isa);
                if (memcmp(d, e, sizeof *d * DROOM) && !bad++)
                    fprintf(stderr, "  to_pixels K %d PQ %d (%s): wrong\n", K, PQ, isa ? "AVX2" : "scalar");
            }
    }
    CHECK_INT_EQ(bad, 0);
    /* a stride-2 lowered row: the source is the last 2 n - 1 floats before a page that may not
     * be read (a read past them faults, masked-off AVX-512 lanes do not: what ASan cannot
     * see), the output has guard floats on both sides */
    bad = 0;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *pages = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(pages != MAP_FAILED && !mprotect(pages + page, page, PROT_NONE));
    for (int isa = DSE_CPU_MM_NONE; isa <= DSE_CPU_MM_AVX512 && pages != MAP_FAILED; isa++) {
        if (isa > dse_cpu_mm_isa()) continue; /* AVX2 / AVX-512 not here */
        for (int n = 1; n <= 41; n++) {
            float *src = (float *)(void *)(pages + page) - (2 * n - 1);
            for (int i = 0; i < 2 * n - 1; i++) src[i] = (float)dse_pcg32_next(&rng) / 65536.0f;
            for (int i = 0; i < n + 2 * G; i++) d[i] = e[i] = NAN;
            for (int q = 0; q < n; q++) e[G + q] = src[2 * q];
            dse_cpu_take2(d + G, src, n, isa);
            if (memcmp(d, e, sizeof *d * (size_t)(n + 2 * G)) && !bad++)
                fprintf(stderr, "  take2 n %d (%s): wrong\n", n, isa == DSE_CPU_MM_AVX512 ? "AVX-512" : isa ? "AVX2" : "scalar");
        }
    }
    if (pages != MAP_FAILED) munmap(pages, 2 * page);
    CHECK_INT_EQ(bad, 0);
    free(x), free(got), free(want), free(g), free(d), free(e);
}
