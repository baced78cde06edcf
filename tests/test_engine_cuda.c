/* test_engine_cuda.c: the CUDA backend (issue #6) against the CPU backend. Every op's
 * forward and backward on random shapes (and the special layouts: in place, concat
 * views, a conv writing into its concat slice, a missing input gradient), each compared
 * buffer by buffer by normalized mean squared error with a tolerance per op (ggml's
 * test-backend-ops); ops whose GPU kernels repeat the CPU's arithmetic (pooling, relu,
 * dropout masks from the same PCG32 stream, concat, eltwise) are held to exact-looking
 * tolerances. A conv with its ReLU fused on the GPU is compared with the CPU's separate
 * conv and relu nodes. Then whole models: two epochs of SGD on two small nets (Fire modules with
 * bypass and dropout; batchnorm, scale, fc) step by step against the CPU, and inference.
 * Then the training loop (engine/train.c) on the device: dse_train_run against the CPU on
 * a synthetic dataset, its checkpoints read on the other device, resumes on the GPU; and
 * pinned cuDNN choices (the choice file), with which a resumed GPU run repeats an
 * uninterrupted one bit for bit.
 *
 * Host-only cases run everywhere (PCG32 jump-ahead, device names, the no-device path,
 * the choice file's reader, the pool that shares choices between a process's models).
 * Then, with no CUDA device or no CUDA in the build, it prints "skipped: no CUDA device
 * (reason)" and exits 77, which ctest reports as not run, never as passed.
 * Usage: test_engine_cuda [case-id-prefix...] (tests/check.h). DSE_TEST_VERBOSE=1 prints
 * every comparison's error. */
#include "engine/cuda/cuda.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/pcg32.h"
#include "engine/kernels_shared.h"
#include "engine/model.h"
#include "engine/train.h"
#include "metaparams/metaparams.h"
#include "metaparams/net.h"
#include "tests/check.h"
#include "tests/nets.h"

#define SEED 1234

/* NMSE tolerances: sum (cpu - cuda)^2 / sum cpu^2 over a buffer. float32 reordering
 * gives about 1e-12 on these sizes, cuDNN's FFT and Winograd algorithms up to about
 * 1e-10; TF32 about 1e-7 (op-no-tf32 checks FP32 mode for TF32 exactly). Kernels that
 * repeat the CPU's arithmetic should agree exactly; they get 1e-12 (a real bug is far
 * above). */
#define TOL_EXACT    1e-12
#define TOL_CONV     1e-7
#define TOL_FC       1e-7
#define TOL_SOFTMAX  1e-9
#define TOL_BN       1e-10
#define TOL_SCALE    1e-10
#define TOL_TF32     1e-4

static int verbose;

/* ---- random values ------------------------------------------------------------------ */

static float uniform(struct dse_pcg32 *r, float lo, float hi) {
    return lo + (hi - lo) * (float)(dse_pcg32_next(r) >> 8) * (1.0f / 16777216.0f);
}

static int irand(struct dse_pcg32 *r, int lo, int hi) { /* [lo, hi] */
    return lo + (int)dse_pcg32_bounded(r, (uint32_t)(hi - lo + 1));
}

static void fill_floats(float *p, int64_t n, struct dse_pcg32 *r, float lo, float hi) {
    for (int64_t i = 0; i < n; i++) p[i] = uniform(r, lo, hi);
}

/* ---- host-only cases ------------------------------------------------------------------ */

/* The kernels' jump-ahead gives the draws dse_pcg32_next gives, from any offset. */
static void test_pcg_advance(void) {
    static const uint64_t seeds[] = { 1, 42, 0xdeadbeefULL };
    static const uint64_t deltas[] = { 0, 1, 2, 63, 64, 65, 1000, 4097 };
    for (int s = 0; s < DSE_ARRAY_LEN(seeds); s++) {
        struct dse_pcg32 ref;
        dse_pcg32_seed(&ref, seeds[s], 0x5eed);
        const struct dse_pcg32 start = ref;
        uint32_t draws[4200];
        for (int i = 0; i < 4200; i++) draws[i] = dse_pcg32_next(&ref);
        for (int d = 0; d < DSE_ARRAY_LEN(deltas); d++) {
            uint64_t st = dse_pcg32_advance(start.state, start.inc, deltas[d]);
            int same = 1;
            for (int k = 0; k < 64; k++) { /* a kernel thread's run: one jump, then steps */
                same &= dse_pcg32_output(st) == draws[deltas[d] + (uint64_t)k];
                st = st * DSE_PCG32_MULT + start.inc;
            }
            CHECK(same);
        }
        /* Advancing past all draws leaves the generator where the CPU leaves it. */
        CHECK(dse_pcg32_advance(start.state, start.inc, 4200) == ref.state);
        /* A dropout thread's run (kernels.cu): a jump to draw k, then the T-step map,
         * gives draws k, k + T, k + 2T, ... */
        static const uint64_t strides[] = { 1, 2, 256, 1000 };
        for (int t = 0; t < DSE_ARRAY_LEN(strides); t++) {
            uint64_t mult, plus;
            dse_pcg32_jump(start.inc, strides[t], &mult, &plus);
            for (uint64_t k = 0; k < 3; k++) {
                uint64_t st = dse_pcg32_advance(start.state, start.inc, k);
                int same = 1;
                for (uint64_t e = k; e < 4200; e += strides[t]) {
                    same &= dse_pcg32_output(st) == draws[e];
                    st = st * mult + plus;
                }
                CHECK(same);
            }
        }
    }
}

/* dse_div (engine/kernels_shared.h, the kernels' index math) divides as `/` does: every n
 * below 2^16 by every divisor up to 300; then divisors of every size up to 2^31 (powers
 * of two and their neighbours, SqueezeNet's plane sizes, random ones), each with the
 * edges around its multiples, near 2^31 and 2^32, and random n. */
static void test_divmod(void) {
    int64_t bad = 0, checks = 0;
    for (uint32_t d = 1; d <= 300; d++) {
        const struct dse_div v = dse_div_make(d);
        for (uint32_t n = 0; n < 65536; n++) bad += dse_div_q(v, n) != n / d;
        checks += 65536;
    }
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 99, 1);
    uint32_t ds[160];
    int nd = 0;
    for (int k = 1; k <= 31; k++) {
        ds[nd++] = (uint32_t)1 << k;
        ds[nd++] = ((uint32_t)1 << k) - 1;
        if (k < 31) ds[nd++] = ((uint32_t)1 << k) + 1;
    }
    static const uint32_t plane[] = { 9, 49, 169, 196, 729, 3025, 3136, 12321, 12769, 50176, 86528, 1204224 };
    for (int k = 0; k < DSE_ARRAY_LEN(plane); k++) ds[nd++] = plane[k];
    while (nd < DSE_ARRAY_LEN(ds)) ds[nd++] = 1u + (dse_pcg32_next(&r) >> (1 + dse_pcg32_bounded(&r, 31)));
    for (int k = 0; k < nd; k++) {
        const uint32_t d = ds[k];
        if (d == 0 || d > 0x80000000u) continue;
        const struct dse_div v = dse_div_make(d);
        uint32_t ns[64 + 2000];
        int nn = 0;
        const uint64_t tops[] = { 0, 1, 2, 0x7fffffffu / d, 0xffffffffu / d - 1, 0xffffffffu / d };
        for (int t = 0; t < DSE_ARRAY_LEN(tops); t++)
            for (int64_t o = -1; o <= 1; o++) { /* q d - 1, q d, q d + 1 */
                const int64_t n = (int64_t)(tops[t] * d) + o;
                if (n >= 0 && n <= 0xffffffffLL) ns[nn++] = (uint32_t)n;
            }
        ns[nn++] = 0x7fffffffu, ns[nn++] = 0xffffffffu;
        while (nn < DSE_ARRAY_LEN(ns)) ns[nn++] = dse_pcg32_next(&r) >> dse_pcg32_bounded(&r, 32);
        for (int t = 0; t < nn; t++) bad += dse_div_q(v, ns[t]) != ns[t] / d;
        checks += nn;
    }
    if (bad) fprintf(stderr, "  dse_div: %lld of %lld quotients wrong\n", (long long)bad, (long long)checks);
    CHECK_INT_EQ(bad, 0);
}

static void test_device_names(void) {
    struct dse_device d;
    struct dse_err err = { 0 };
    char buf[32];
    CHECK_OK(dse_device_parse("cpu", &d, &err));
    CHECK_INT_EQ(d.kind, DSE_DEVICE_CPU);
    CHECK_OK(dse_device_parse("cuda", &d, &err));
    CHECK(d.kind == DSE_DEVICE_CUDA && d.index == 0);
    CHECK_OK(dse_device_parse("cuda:3", &d, &err));
    CHECK(d.kind == DSE_DEVICE_CUDA && d.index == 3);
    CHECK_STR_EQ(dse_device_str(&d, buf, sizeof buf), "cuda:3");
    static const char *const bad[] = { "gpu", "cuda:", "cuda:x", "cuda:-1", "cuda:1x", "cuda0", "" };
    for (int i = 0; i < DSE_ARRAY_LEN(bad); i++) CHECK_INT_EQ(dse_device_parse(bad[i], &d, &err), DSE_ERR_CONFIG);
    dse_device_parse("gpu", &d, &err);
    CHECK_STR_EQ(err.msg, "device 'gpu' is not known; expected cpu, cuda or cuda:N");
    enum dse_cuda_math m;
    CHECK_OK(dse_cuda_math_parse("tf32", &m, &err));
    CHECK_INT_EQ(m, DSE_CUDA_MATH_TF32);
    CHECK_INT_EQ(dse_cuda_math_parse("fp8", &m, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "precision 'fp8' is not known; expected fp32, tf32, fp16 or bf16");
    CHECK_STR_EQ(dse_cuda_math_str(DSE_CUDA_MATH_FP32), "fp32");
    const char *b = dse_engine_backends();
    CHECK(strcmp(b, "cpu") == 0 || strcmp(b, "cpu cuda") == 0);
}

/* The libraries load without a device: cuDNN (linked) and cuBLAS (dlopen'ed when a ctx
 * is made) report their versions. */
/* The loss-scale rule and the precision names, without a device. */
static void test_loss_scale_rule(void) {
    int64_t good = 0;
    float s = DSE_LOSS_SCALE_INIT;
    for (int i = 0; i < 1999; i++) s = dse_loss_scale_next(s, 0, &good, 2000);
    CHECK_NEAR(s, 65536.0, 0.0);
    CHECK_INT_EQ(good, 1999);
    s = dse_loss_scale_next(s, 0, &good, 2000); /* the 2000th good step doubles it */
    CHECK_NEAR(s, 131072.0, 0.0);
    CHECK_INT_EQ(good, 0);
    s = dse_loss_scale_next(s, 1, &good, 2000);
    CHECK_NEAR(s, 65536.0, 0.0);
    s = dse_loss_scale_next(2.0f, 1, &good, 2000);
    CHECK_NEAR(s, 1.0, 0.0);
    s = dse_loss_scale_next(1.0f, 1, &good, 2000); /* never below 1 */
    CHECK_NEAR(s, 1.0, 0.0);
    s = dse_loss_scale_next(16777216.0f, 0, &good, 1); /* never above 2^24 */
    CHECK_NEAR(s, 16777216.0, 0.0);
    for (int m = 0; m < DSE_CUDA_MATH_COUNT; m++) {
        enum dse_cuda_math back = DSE_CUDA_MATH_COUNT;
        CHECK_OK(dse_cuda_math_parse(dse_cuda_math_str((enum dse_cuda_math)m), &back, NULL));
        CHECK_INT_EQ(back, m);
    }
    CHECK(dse_cuda_math_is16(DSE_CUDA_MATH_FP16) && dse_cuda_math_is16(DSE_CUDA_MATH_BF16));
    CHECK(!dse_cuda_math_is16(DSE_CUDA_MATH_FP32) && !dse_cuda_math_is16(DSE_CUDA_MATH_TF32));
}

static void test_versions(void) {
    char v[400];
    dse_cuda_versions(v, sizeof v);
    printf("  %s\n", v);
    if (strcmp(dse_engine_backends(), "cpu cuda") == 0) {
        CHECK(strstr(v, "cudnn=9.") != NULL);
        CHECK(strstr(v, "cublas=") != NULL && strstr(v, "cublas=none") == NULL);
    } else {
        CHECK_STR_EQ(v, "built without CUDA");
    }
}

/* ---- the cuDNN choice file's text (no device) ---------------------------------------------- */

#define PIN_HEADER "dse-cudnn-choices 1 cudnn 91900 cc 9.0 sms 132 device NVIDIA H100 80GB HBM3\n"
#define PIN_KEY    "8 1 12 12 6 3 3 1 1 1 1 1 1 1 144 864 0 1 512 1616 1618"
#define PIN_FORM   "expected none, fp32, 'legacy ALGO math MATH ws BYTES' or 'engine ID ws BYTES knobs [TYPE=VALUE]...'"

/* Every malformed file is refused with path:line and what is wrong (the CPU's file reports
 * its bad lines the same way); a good one reads back what was written. */
static void test_conv_file(void) {
    static const struct {
        const char *text;
        int         line;
        const char *msg;
    } bad[] = {
        { "", 1, "not a cuDNN choice file; expected the header 'dse-cudnn-choices 1 cudnn VERSION cc MAJOR.MINOR sms "
                 "COUNT device NAME'" },
        { "# dse conv strategy choices: 16 shape ints, forward, backward\n", 1,
          "not a cuDNN choice file; expected the header 'dse-cudnn-choices 1 cudnn VERSION cc MAJOR.MINOR sms COUNT "
          "device NAME'" },
        { "dse-cudnn-choices 2 cudnn 91900 cc 9.0 sms 132 device X\n", 1,
          "choice file format 2; this dse reads format 1 (delete the file to choose again)" },
        { "dse-cudnn-choices 1 cudnn 91900 cc 9 sms 132 device X\n", 1,
          "the header does not parse; expected 'dse-cudnn-choices 1 cudnn VERSION cc MAJOR.MINOR sms COUNT device "
          "NAME'" },
        { "dse-cudnn-choices 1 cudnn 91900 cc 9.0 sms 132 device\n", 1,
          "the header does not parse; expected 'dse-cudnn-choices 1 cudnn VERSION cc MAJOR.MINOR sms COUNT device "
          "NAME'" },
        { PIN_HEADER "1 2 3 ; none ; none ; none\n", 2, "the shape key is not 21 integers" },
        { PIN_HEADER PIN_KEY " 22 ; none ; none ; none\n", 2, "the shape key is not 21 integers" },
        { PIN_HEADER "\n# c\n" PIN_KEY " ; none ; none\n", 4,
          "3 fields; expected 'KEY ; FORWARD ; BACKWARD-DATA ; BACKWARD-FILTER' (4 fields separated by ';')" },
        { PIN_HEADER PIN_KEY " ; none ; none ; none ; none\n", 2,
          "more than 4 fields separated by ';'; expected 'KEY ; FORWARD ; BACKWARD-DATA ; BACKWARD-FILTER'" },
        { PIN_HEADER PIN_KEY " ; engine 12 ws 0 ; none ; none\n", 2,
          "forward: 'engine 12 ws 0' does not parse; " PIN_FORM },
        { PIN_HEADER PIN_KEY " ; none ; legacy 1 math 0 ws -5 ; none\n", 2,
          "backward data: 'legacy 1 math 0 ws -5' does not parse; " PIN_FORM },
        { PIN_HEADER PIN_KEY " ; none ; none ; engine 3 ws 0 knobs 1=2 3\n", 2,
          "backward filter: 'engine 3 ws 0 knobs 1=2 3' does not parse; " PIN_FORM },
        { PIN_HEADER PIN_KEY " ; winograd ; none ; none\n", 2, "forward: 'winograd' does not parse; " PIN_FORM },
        { PIN_HEADER PIN_KEY " ; fp32 1 ; none ; none\n", 2, "forward: 'fp32 1' does not parse; " PIN_FORM },
        { PIN_HEADER PIN_KEY " ; none ; none ; none\n# again\n" PIN_KEY " ; fp32 ; none ; none\n", 4,
          "the shape key of line 2 again" },
    };
    const char *path = "pins/cudnn-fp32-det.txt";
    struct dse_cuda_conv_file f;
    for (int i = 0; i < DSE_ARRAY_LEN(bad); i++) {
        struct dse_err err = { 0 };
        CHECK_INT_EQ(dse_cuda_conv_file_parse(path, bad[i].text, &f, &err), DSE_ERR_IO);
        CHECK(!strcmp(err.file, path));
        CHECK_INT_EQ(err.line, bad[i].line);
        CHECK_STR_EQ(err.msg, bad[i].msg);
        CHECK(f.n == 0 && f.choices == NULL);
    }
    { /* 65 knobs: one more than an identity holds */
        char text[2000];
        int n = snprintf(text, sizeof text, PIN_HEADER PIN_KEY " ; engine 7 ws 0 knobs");
        for (int k = 0; k <= DSE_CUDA_CONV_KNOBS; k++) n += snprintf(text + n, sizeof text - (size_t)n, " %d=1", k);
        snprintf(text + n, sizeof text - (size_t)n, " ; none ; none\n");
        struct dse_err err = { 0 };
        CHECK_INT_EQ(dse_cuda_conv_file_parse(path, text, &f, &err), DSE_ERR_IO);
        CHECK_INT_EQ(err.line, 2);
        CHECK_STR_EQ(err.msg, "forward: more than 64 knobs");
    }
    /* a good file: comments and blank lines skipped, each kind of direction, back as written */
    const char *good = PIN_HEADER "# comment\n\n"
                       PIN_KEY " ; engine 12 ws 4096 knobs 2=1 14=3 ; none ; legacy 1 math 2 ws 1024\n"
                       "8 6 12 12 8 1 1 1 1 0 0 1 1 1 864 1152 2 1 512 1616 1618 ; fp32 ; engine 0 ws 0 knobs ; fp32\n";
    struct dse_err err = { 0 };
    CHECK_OK(dse_cuda_conv_file_parse(path, good, &f, &err));
    CHECK_INT_EQ(f.version, 1);
    CHECK_INT_EQ(f.cudnn, 91900);
    CHECK(f.cc_major == 9 && f.cc_minor == 0 && f.sms == 132);
    CHECK_STR_EQ(f.device, "NVIDIA H100 80GB HBM3");
    CHECK_INT_EQ(f.n, 2);
    if (f.n == 2) {
        const struct dse_cuda_conv_choice *a = &f.choices[0], *b = &f.choices[1];
        CHECK(f.lines[0] == 4 && f.lines[1] == 5);
        CHECK(a->key[0] == 8 && a->key[14] == 144 && a->key[20] == 1618 && b->key[16] == 2);
        CHECK_INT_EQ(a->algo[0], DSE_CUDA_CONV_ENGINE + 12);
        CHECK(a->engine[0].id == 12 && a->engine[0].n_knobs == 2 && a->ws[0] == 4096);
        CHECK(a->engine[0].knob_type[1] == 14 && a->engine[0].knob_value[1] == 3);
        CHECK_INT_EQ(a->algo[1], -1);
        CHECK(a->algo[2] == 1 && a->math[2] == 2 && a->ws[2] == 1024 && a->engine[2].id == -1);
        CHECK(b->algo[0] == DSE_CUDA_CONV_FP32 && b->algo[2] == DSE_CUDA_CONV_FP32);
        CHECK(b->algo[1] == DSE_CUDA_CONV_ENGINE && b->engine[1].id == 0 && b->engine[1].n_knobs == 0);
        /* written and read back: the same choices; an entry with nothing chosen is left out */
        struct dse_cuda_conv_choice three[3] = { *a, *b, *b };
        three[2].key[0] = 99, three[2].algo[0] = three[2].algo[1] = three[2].algo[2] = -1;
        struct dse_cuda_conv_file w = f, back;
        w.choices = three, w.n = 3;
        char *text = dse_cuda_conv_file_format(&w);
        CHECK(text != NULL);
        if (text) {
            CHECK(strncmp(text, PIN_HEADER, strlen(PIN_HEADER)) == 0);
            CHECK_OK(dse_cuda_conv_file_parse(path, text, &back, &err));
            CHECK_INT_EQ(back.n, 2);
            CHECK(back.n == 2 && !memcmp(&back.choices[0], a, sizeof *a) && !memcmp(&back.choices[1], b, sizeof *b));
            CHECK_STR_EQ(back.device, f.device);
            dse_cuda_conv_file_deinit(&back);
            if (verbose) printf("%s", text);
        }
        free(text);
    }
    dse_cuda_conv_file_deinit(&f);
}

/* ---- shared choices (engine/cuda/conv_pool.c) ------------------------------------------- */

/* A choice with direction dir set to a graph-API engine, the others unset. */
static struct dse_cuda_conv_choice pool_choice(int64_t first, int dir, int64_t engine) {
    struct dse_cuda_conv_choice c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < DSE_CUDA_CONV_KEY; i++) c.key[i] = first + i;
    c.algo[0] = c.algo[1] = c.algo[2] = -1;
    c.engine[0].id = c.engine[1].id = c.engine[2].id = -1;
    if (engine < 0) return c;
    c.algo[dir] = DSE_CUDA_CONV_ENGINE + (int)engine;
    c.ws[dir] = 4096 + (size_t)engine;
    c.engine[dir] = (struct dse_cuda_conv_engine){ .id = engine, .n_knobs = 2 };
    c.engine[dir].knob_type[0] = 3, c.engine[dir].knob_value[0] = 7;
    c.engine[dir].knob_type[1] = 5, c.engine[dir].knob_value[1] = engine;
    return c;
}

/* One of the threads asking a pool for the same (shape, direction) at once. */
struct pool_asker {
    struct dse_cuda_conv_pool *pool;
    atomic_int                *finding, *most, *claims; /* shared by the askers */
    int                        fail_claims;             /* this many claimers' finds fail */
    enum dse_cuda_pool_get     got;
    struct dse_cuda_conv_choice c;
};

static void *pool_ask(void *arg) {
    struct pool_asker *a = arg;
    a->c = pool_choice(500, 2, -1);
    a->got = dse_cuda_conv_pool_get(a->pool, 0, 2, &a->c);
    if (a->got != DSE_CUDA_POOL_CLAIMED) return NULL;
    const int now = atomic_fetch_add(a->finding, 1) + 1;
    for (int m = atomic_load(a->most); now > m && !atomic_compare_exchange_weak(a->most, &m, now);) {}
    nanosleep(&(struct timespec){ .tv_sec = 0, .tv_nsec = 30000000 }, NULL); /* "find": 30 ms */
    const int k = atomic_fetch_add(a->claims, 1);
    atomic_fetch_sub(a->finding, 1);
    const struct dse_cuda_conv_choice found = pool_choice(500, 2, 77);
    dse_cuda_conv_pool_put(a->pool, 0, 2, a->c.key, k < a->fail_claims ? NULL : &found);
    if (k >= a->fail_claims) a->c = found;
    return NULL;
}

/* The pool (cuda.h, "shared choices"): a direction found by one caller is given to the
 * others, keyed by device, shape and direction; a failed find leaves it to the next asker;
 * callers asking at once wait for the one finding, and only one finds at a time. */
static void test_conv_pool(void) {
    struct dse_cuda_conv_pool *p = NULL;
    CHECK_OK(dse_cuda_conv_pool_new(&p, NULL));
    if (!p) return;
    struct dse_cuda_conv_choice a = pool_choice(100, 0, -1), b = pool_choice(100, 0, -1);
    CHECK_INT_EQ(dse_cuda_conv_pool_get(p, 0, 0, &a), DSE_CUDA_POOL_CLAIMED);
    CHECK_INT_EQ(dse_cuda_conv_pool_get(p, 1, 0, &b), DSE_CUDA_POOL_CLAIMED); /* another device */
    CHECK_INT_EQ(dse_cuda_conv_pool_get(p, 0, 3, &b), DSE_CUDA_POOL_ALONE);   /* no such direction */
    const struct dse_cuda_conv_choice found = pool_choice(100, 0, 42);
    dse_cuda_conv_pool_put(p, 0, 0, found.key, &found);
    struct dse_cuda_conv_choice c = pool_choice(100, 0, -1);
    c.algo[1] = 3, c.ws[1] = 9; /* another direction's fields: left alone */
    CHECK_INT_EQ(dse_cuda_conv_pool_get(p, 0, 0, &c), DSE_CUDA_POOL_TAKEN);
    CHECK_INT_EQ(c.algo[0], DSE_CUDA_CONV_ENGINE + 42);
    CHECK_INT_EQ((int64_t)c.ws[0], 4096 + 42);
    CHECK_INT_EQ(c.engine[0].id, 42);
    CHECK_INT_EQ(c.engine[0].n_knobs, 2);
    CHECK_INT_EQ(c.engine[0].knob_value[1], 42);
    CHECK_INT_EQ(c.algo[1], 3);
    CHECK_INT_EQ((int64_t)c.ws[1], 9);
    CHECK_INT_EQ(c.engine[1].id, -1);
    struct dse_cuda_conv_choice other = pool_choice(101, 0, -1); /* another shape */
    CHECK_INT_EQ(dse_cuda_conv_pool_get(p, 0, 0, &other), DSE_CUDA_POOL_CLAIMED);
    CHECK_INT_EQ(dse_cuda_conv_pool_get(p, 0, 1, &c), DSE_CUDA_POOL_CLAIMED); /* another direction */
    dse_cuda_conv_pool_put(p, 0, 1, c.key, NULL);                              /* its find failed */
    CHECK_INT_EQ(dse_cuda_conv_pool_get(p, 0, 1, &c), DSE_CUDA_POOL_CLAIMED); /* the next finds */
    dse_cuda_conv_pool_put(p, 0, 0, found.key, &found); /* not claimed any more: nothing */
    int64_t kept = 0, given = 0;
    dse_cuda_conv_pool_counts(p, &kept, &given);
    CHECK_INT_EQ(kept, 1);
    CHECK_INT_EQ(given, 1);
    dse_cuda_conv_pool_free(p);

    /* 8 threads at once, with 0 and then 2 failing finds first */
    for (int fails = 0; fails <= 2; fails += 2) {
        enum { ASKERS = 8 };
        atomic_int finding, most, claims;
        atomic_init(&finding, 0), atomic_init(&most, 0), atomic_init(&claims, 0);
        CHECK_OK(dse_cuda_conv_pool_new(&p, NULL));
        if (!p) return;
        struct pool_asker ask[ASKERS];
        pthread_t th[ASKERS];
        for (int i = 0; i < ASKERS; i++) {
            ask[i] = (struct pool_asker){ .pool = p, .finding = &finding, .most = &most, .claims = &claims,
                                          .fail_claims = fails };
            CHECK_INT_EQ(pthread_create(&th[i], NULL, pool_ask, &ask[i]), 0);
        }
        int claimed = 0, taken = 0, right = 0;
        for (int i = 0; i < ASKERS; i++) {
            pthread_join(th[i], NULL);
            claimed += ask[i].got == DSE_CUDA_POOL_CLAIMED, taken += ask[i].got == DSE_CUDA_POOL_TAKEN;
            right += ask[i].c.algo[2] == DSE_CUDA_CONV_ENGINE + 77 && ask[i].c.engine[2].knob_value[1] == 77;
        }
        dse_cuda_conv_pool_counts(p, &kept, &given);
        if (verbose)
            printf("  %d failing finds: %d claimed, %d taken, at most %d finding at once\n", fails, claimed, taken,
                   atomic_load(&most));
        CHECK_INT_EQ(claimed, fails + 1); /* one find, after each failed one */
        CHECK_INT_EQ(taken, ASKERS - fails - 1);
        CHECK_INT_EQ(right, ASKERS - fails); /* the failed finders hold nothing */
        CHECK_INT_EQ(atomic_load(&most), 1);
        CHECK_INT_EQ(kept, 1);
        CHECK_INT_EQ(given, ASKERS - fails - 1);
        dse_cuda_conv_pool_free(p);
    }
}

/* tests/nets.h's tiny Fire-module net with dropout 0.5 before the classifier conv. */
static void fire_net(struct dse_net *net) {
    struct dse_mp mp = tiny_fire_mp();
    mp.dropout = 0.5;
    dse_net_init(net, "fire", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, net, NULL));
}

/* No device (or no CUDA): a ctx or a device model cannot be made, and says why. */
static void test_no_device(void) {
    char why[256];
    if (dse_cuda_device_count(why, sizeof why) > 0) return; /* covered by the device cases */
    struct dse_cuda_ctx cx;
    struct dse_err err = { 0 };
    CHECK_INT_EQ(dse_cuda_ctx_init(&cx, 0, 1, &err), DSE_ERR_UNSUPPORTED);
    if (strcmp(dse_engine_backends(), "cpu cuda") == 0) {
        /* The failing runtime call, named with its error: "no CUDA device
         * (cudaGetDeviceCount: cudaErrorNoDevice: ...)". */
        CHECK(strncmp(err.msg, "no CUDA device (cudaGetDeviceCount: cuda", 40) == 0);
    } else {
        CHECK(strstr(err.msg, "built without the CUDA backend") != NULL);
    }
    if (verbose) printf("  ctx: %s\n", err.msg);
    dse_cuda_ctx_deinit(&cx);
    dse_cuda_ctx_deinit(&cx); /* twice is safe */

    struct dse_net net;
    fire_net(&net);
    struct dse_model_opts mo = { .batch = 4, .threads = 1, .seed = 5, .init = DSE_INIT_MSRA };
    struct dse_model_device_opts dev = { .device = { .kind = DSE_DEVICE_CUDA, .index = 0 },
                                         .math = DSE_CUDA_MATH_FP32 };
    struct dse_model *m = (struct dse_model *)&err; /* must come back NULL */
    CHECK_INT_EQ(dse_model_new_on(&net, &mo, &dev, &m, &err), DSE_ERR_UNSUPPORTED);
    CHECK(m == NULL);
    dse_net_deinit(&net);
}

/* The checkpoint view of a model (dse_model_state_*) round-trips, on the CPU. */
static void test_model_state_cpu(void) {
    struct dse_net net;
    fire_net(&net);
    struct dse_model_opts mo = { .batch = 4, .threads = 1, .seed = 5, .init = DSE_INIT_MSRA };
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    CHECK_OK(dse_model_new_on(&net, &mo, NULL, &m, &err));
    if (!m) return;
    const uint64_t n = dse_model_state_count(m);
    CHECK(n > 0);
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    CHECK_OK(dse_model_state_get(m, a, &err));
    for (uint64_t i = 0; i < n; i++) b[i] = a[i] + 1.0f;
    CHECK_OK(dse_model_state_put(m, b, &err));
    CHECK(m->params[0]->data[0] == a[0] + 1.0f);
    CHECK_OK(dse_model_state_get(m, a, &err));
    CHECK(memcmp(a, b, n * sizeof *a) == 0);
    CHECK_OK(dse_model_sync(m, &err));
    free(a), free(b);
    dse_model_free(m);
    dse_net_deinit(&net);
}

/* ---- comparing buffers ------------------------------------------------------------------ */

/* NMSE of b against a over n values; the worst element in *at. Inf or NaN anywhere: inf. */
static double nmse(const float *a, const float *b, int64_t n, int64_t *at) {
    double num = 0.0, den = 0.0, worst = -1.0;
    *at = 0;
    for (int64_t i = 0; i < n; i++) {
        const double d = (double)a[i] - (double)b[i];
        if (!isfinite(d) && !(a[i] == b[i])) return INFINITY;
        num += d * d, den += (double)a[i] * a[i];
        if (fabs(d) > worst) worst = fabs(d), *at = i;
    }
    return den > 0.0 ? num / den : num;
}

/* Compare n floats of the CPU's a with the device's b (downloaded); print what differs. */
static void compare(struct dse_cuda_ctx *gx, const char *what, const char *buf, const float *a, const float *dev_b,
                    int64_t n, double tol) {
    float *b = malloc((size_t)(n ? n : 1) * sizeof *b);
    struct dse_err err = { 0 };
    enum dse_status st = dse_cuda_download(gx, b, dev_b, (size_t)n * sizeof *b, &err);
    CHECK_OK(st);
    if (st) {
        fprintf(stderr, "  %s: %s: download failed: %s\n", what, buf, err.msg);
        free(b);
        return;
    }
    int64_t at;
    const double e = nmse(a, b, n, &at);
    if (verbose) printf("  %-60s %-12s nmse %.3g\n", what, buf, e);
    if (!(e <= tol))
        fprintf(stderr, "  %s: %s: NMSE %.3g > tol %.3g over %lld values; worst at [%lld]: cpu %.9g, cuda %.9g\n",
                what, buf, e, tol, (long long)n, (long long)at, (double)a[at], (double)b[at]);
    CHECK(e <= tol);
    free(b);
}

static void compare_exact_bytes(struct dse_cuda_ctx *gx, const char *what, const char *buf, const void *a,
                                const void *dev_b, size_t bytes) {
    unsigned char *b = malloc(bytes ? bytes : 1);
    CHECK_OK(dse_cuda_download(gx, b, dev_b, bytes, NULL));
    size_t at = 0;
    while (at < bytes && ((const unsigned char *)a)[at] == b[at]) at++;
    if (at < bytes) fprintf(stderr, "  %s: %s differs first at byte %zu of %zu\n", what, buf, at, bytes);
    CHECK(at == bytes);
    free(b);
}

/* ---- one node on both backends ----------------------------------------------------------- */

/* Every host buffer a fixture owns, with its device twin: data and grad, n * stride_n
 * floats each, uploaded whole (views and in-place tensors then point into them at the
 * same offsets), compared whole (gaps included: a kernel writing outside its view fails). */
struct twin {
    const char *name;
    float      *host_data, *host_grad;
    float      *dev_data, *dev_grad;
    int64_t     floats;
};

enum {
    FX_IN_PLACE = 1, /* out is in[0] */
    FX_VIEWS    = 2, /* concat: inputs are views of their slices of out */
    FX_NO_DX    = 4, /* input 0 has no gradient (a first conv) */
    FX_OUT_VIEW = 8, /* out is a channel slice of a wider buffer (a Fire expand) */
};

struct fx {
    struct dse_layer  layer;
    struct dse_node   cn, gn;               /* CPU node, CUDA node */
    struct dse_tensor cin[4], cout, cw, cb, crm, crv, cwide;
    struct dse_tensor gin[4], gout, gw, gb, grm, grv, gwide;
    int               n_in;
    int32_t           labels[64];
    struct twin       tw[12];
    int               n_tw;
};

struct pair {
    struct dse_cpu_ctx  cx;
    struct dse_cuda_ctx gx;
    int                 ok;
};

static void pair_init(struct pair *p) {
    struct dse_err err = { 0 };
    memset(p, 0, sizeof *p);
    CHECK_OK(dse_cpu_ctx_init(&p->cx, 2, SEED, &err));
    p->cx.conv_force = DSE_CPU_CONV_GEMM_BATCH; /* the plain reference, no timing */
    enum dse_status st = dse_cuda_ctx_init(&p->gx, 0, SEED, &err);
    CHECK_OK(st);
    if (st) fprintf(stderr, "  %s\n", err.msg);
    p->gx.sync_each = 1; /* a failing kernel is reported by the op that queued it */
    p->ok = !st;
}

static void pair_deinit(struct pair *p) {
    dse_cuda_ctx_deinit(&p->gx);
    dse_cpu_ctx_deinit(&p->cx);
}

/* The layer as a one-layer network with n_in copies of a c x h x w input infers it;
 * 0 if that shape does not work. */
static int infer_layer(struct dse_layer *l, int n_in, int c, int h, int w) {
    struct dse_net net;
    dse_net_init(&net, "t", c, h, w);
    l->n_inputs = n_in;
    for (int i = 0; i < n_in; i++) l->inputs[i] = DSE_INPUT_DATA;
    int ok = dse_net_add(&net, l, NULL) == DSE_OK && dse_net_infer(&net, NULL, NULL) == DSE_OK;
    if (ok) *l = net.layers[0];
    dse_net_deinit(&net);
    return ok;
}

/* Record a host tensor that owns its memory and make its device twin (same shape and
 * stride, data and grad uploaded whole). */
static void twin_owned(struct pair *p, struct fx *f, const char *name, struct dse_tensor *h, struct dse_tensor *d) {
    struct twin *t = &f->tw[f->n_tw++];
    const int64_t floats = (int64_t)h->n * h->stride_n;
    void *dd = NULL, *dg = NULL;
    CHECK_OK(dse_cuda_alloc(&p->gx, (size_t)floats * sizeof(float), &dd, NULL));
    if (h->grad) CHECK_OK(dse_cuda_alloc(&p->gx, (size_t)floats * sizeof(float), &dg, NULL));
    *t = (struct twin){ name, h->data, h->grad, dd, dg, floats };
    dse_tensor_wrap(d, h->n, h->c, h->h, h->w, h->stride_n, dd, dg, DSE_MEM_DEVICE);
}

/* The device twin of a host tensor that borrows memory (a view, in place): the same
 * offsets into the twin of the buffer it points into. */
static void twin_borrowed(struct fx *f, const struct dse_tensor *h, struct dse_tensor *d) {
    for (int i = 0; i < f->n_tw; i++) {
        const struct twin *t = &f->tw[i];
        if (h->data >= t->host_data && h->data < t->host_data + t->floats) {
            const int64_t off = h->data - t->host_data;
            dse_tensor_wrap(d, h->n, h->c, h->h, h->w, h->stride_n, t->dev_data + off,
                            h->grad ? t->dev_grad + (h->grad - t->host_grad) : NULL, DSE_MEM_DEVICE);
            return;
        }
    }
    DSE_ASSERT(!"borrowed tensor outside every buffer");
}

static void twins_upload(struct pair *p, struct fx *f) {
    for (int i = 0; i < f->n_tw; i++) {
        const struct twin *t = &f->tw[i];
        CHECK_OK(dse_cuda_upload(&p->gx, t->dev_data, t->host_data, (size_t)t->floats * sizeof(float), NULL));
        if (t->host_grad)
            CHECK_OK(dse_cuda_upload(&p->gx, t->dev_grad, t->host_grad, (size_t)t->floats * sizeof(float), NULL));
    }
}

static void twins_compare(struct pair *p, struct fx *f, const char *what, const char *phase, double tol) {
    char buf[64];
    for (int i = 0; i < f->n_tw; i++) {
        const struct twin *t = &f->tw[i];
        snprintf(buf, sizeof buf, "%s.data", t->name);
        compare(&p->gx, what, buf, t->host_data, t->dev_data, t->floats, tol);
        if (t->host_grad && !strcmp(phase, "backward")) {
            snprintf(buf, sizeof buf, "%s.grad", t->name);
            compare(&p->gx, what, buf, t->host_grad, t->dev_grad, t->floats, tol);
        }
    }
}

/* Build a node for an inferred layer on both backends: inputs [N, in_c[i] (or the
 * layer's), H, W], parameters, every value and every gradient random (gradients
 * pre-filled, so backward's accumulation is checked too), then prepare both. */
static int fx_init(struct pair *p, struct fx *f, const struct dse_layer *l, int N, int n_in, const int *in_c,
                   unsigned flags, uint64_t seed) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, seed, 7);
    memset(f, 0, sizeof *f);
    f->layer = *l;
    f->n_in = n_in;
    enum dse_op op;
    CHECK_OK(dse_op_from_layer(l, &op, NULL));
    dse_node_init(&f->cn, op, &f->layer);
    const int H = l->in_h, W = l->in_w, C = l->in_c, K = l->num_output;
    const unsigned G = DSE_TENSOR_GRAD;
    /* Output first when inputs view it. */
    if (op == DSE_OP_SOFTMAX_XENT) {
        CHECK_OK(dse_tensor_init(&f->cout, 1, 1, 1, 1, G, NULL));
    } else if (flags & FX_VIEWS) {
        CHECK_OK(dse_tensor_init(&f->cout, N, l->out_c, l->out_h, l->out_w, G, NULL));
    } else if (flags & FX_OUT_VIEW) { /* a slice of channels [2, 2 + out_c) of out_c + 3 */
        CHECK_OK(dse_tensor_init(&f->cwide, N, l->out_c + 3, l->out_h, l->out_w, G, NULL));
        dse_tensor_view_channels(&f->cout, &f->cwide, 2, l->out_c);
    }
    int c0 = 0;
    for (int i = 0; i < n_in; i++) {
        const int c = in_c ? in_c[i] : C;
        if (flags & FX_VIEWS)
            dse_tensor_view_channels(&f->cin[i], &f->cout, c0, c);
        else
            CHECK_OK(dse_tensor_init(&f->cin[i], N, c, H, W, (i == 0 && (flags & FX_NO_DX)) ? 0 : G, NULL));
        c0 += c;
        f->cn.in[i] = &f->cin[i];
    }
    f->cn.n_in = n_in;
    if (flags & FX_IN_PLACE)
        dse_tensor_wrap(&f->cout, N, f->cin[0].c, H, W, f->cin[0].stride_n, f->cin[0].data, f->cin[0].grad,
                        DSE_MEM_HOST);
    else if (!f->cout.data)
        CHECK_OK(dse_tensor_init(&f->cout, N, l->out_c, l->out_h, l->out_w, G, NULL));
    f->cn.out = &f->cout;
    switch (op) {
    case DSE_OP_CONV2D: CHECK_OK(dse_tensor_init(&f->cw, K, C / l->groups, l->kernel_h, l->kernel_w, G, NULL)); break;
    case DSE_OP_FC:     CHECK_OK(dse_tensor_init(&f->cw, K, C * H * W, 1, 1, G, NULL)); break;
    case DSE_OP_BATCHNORM:
        CHECK_OK(dse_tensor_init(&f->crm, 1, C, 1, 1, 0, NULL));
        CHECK_OK(dse_tensor_init(&f->crv, 1, C, 1, 1, 0, NULL));
        fill_floats(f->crm.data, C, &r, -0.5f, 0.5f);
        fill_floats(f->crv.data, C, &r, 0.5f, 1.5f);
        f->cn.run_mean = &f->crm, f->cn.run_var = &f->crv;
        if (l->affine) {
            CHECK_OK(dse_tensor_init(&f->cw, 1, C, 1, 1, G, NULL));
            CHECK_OK(dse_tensor_init(&f->cb, 1, C, 1, 1, G, NULL));
        }
        break;
    case DSE_OP_SCALE:  CHECK_OK(dse_tensor_init(&f->cw, 1, C, 1, 1, G, NULL)); break;
    case DSE_OP_SOFTMAX_XENT:
        for (int i = 0; i < N && i < 64; i++) f->labels[i] = (int32_t)dse_pcg32_bounded(&r, (uint32_t)C);
        f->cn.labels = f->labels;
        break;
    default: break;
    }
    if ((op == DSE_OP_CONV2D || op == DSE_OP_FC || op == DSE_OP_SCALE) && l->bias)
        CHECK_OK(dse_tensor_init(&f->cb, 1, op == DSE_OP_SCALE ? C : K, 1, 1, G, NULL));
    if (f->cw.data) f->cn.weight = &f->cw;
    if (f->cb.data) f->cn.bias = &f->cb;

    /* Random contents of every owned buffer, data and grad. */
    struct dse_tensor *owned[] = { &f->cin[0], &f->cin[1], &f->cin[2], &f->cin[3], &f->cout, &f->cwide,
                                   &f->cw, &f->cb, &f->crm, &f->crv };
    for (int i = 0; i < DSE_ARRAY_LEN(owned); i++) {
        struct dse_tensor *t = owned[i];
        if (!t->data || !t->owns) continue;
        const int64_t n = (int64_t)t->n * t->stride_n;
        if (t != &f->crm && t != &f->crv) fill_floats(t->data, n, &r, -1.0f, 1.0f);
        if (t->grad) fill_floats(t->grad, n, &r, -1.0f, 1.0f);
    }

    /* The CUDA node: the same op, layer and options, device twins of every tensor. */
    f->gn = f->cn;
    f->gn.st = (struct dse_node_state){ 0 };
    f->gn.dev = NULL;
    static const char *const in_names[] = { "in0", "in1", "in2", "in3" };
    struct dse_tensor *cs[] = { &f->cwide, &f->cout, &f->cin[0], &f->cin[1], &f->cin[2], &f->cin[3], &f->cw, &f->cb,
                                &f->crm, &f->crv };
    struct dse_tensor *gs[] = { &f->gwide, &f->gout, &f->gin[0], &f->gin[1], &f->gin[2], &f->gin[3], &f->gw, &f->gb,
                                &f->grm, &f->grv };
    const char *names[] = { "wide", "out", in_names[0], in_names[1], in_names[2], in_names[3], "weight", "bias",
                            "run_mean", "run_var" };
    for (int pass = 0; pass < 2; pass++) /* owners, then the tensors borrowing from them */
        for (int i = 0; i < DSE_ARRAY_LEN(cs); i++) {
            if (!cs[i]->data || (cs[i]->owns != 0) != (pass == 0)) continue;
            if (pass == 0)
                twin_owned(p, f, names[i], cs[i], gs[i]);
            else
                twin_borrowed(f, cs[i], gs[i]);
        }
    for (int i = 0; i < n_in; i++) f->gn.in[i] = &f->gin[i];
    f->gn.out = &f->gout;
    f->gn.weight = f->cn.weight ? &f->gw : NULL;
    f->gn.bias = f->cn.bias ? &f->gb : NULL;
    f->gn.run_mean = f->cn.run_mean ? &f->grm : NULL;
    f->gn.run_var = f->cn.run_var ? &f->grv : NULL;
    twins_upload(p, f);

    struct dse_err err = { 0 };
    enum dse_status st = dse_cpu_node_prepare(&p->cx, &f->cn, &err);
    CHECK_OK(st);
    if (!st) {
        st = dse_cuda_node_prepare(&p->gx, &f->gn, &err);
        CHECK_OK(st);
    }
    if (st) fprintf(stderr, "  prepare: %s\n", err.msg);
    return !st;
}

static void fx_deinit(struct pair *p, struct fx *f) {
    dse_cuda_node_release(&p->gx, &f->gn);
    dse_node_deinit(&f->gn);
    dse_node_deinit(&f->cn);
    for (int i = 0; i < f->n_tw; i++) {
        dse_cuda_free(&p->gx, f->tw[i].dev_data);
        dse_cuda_free(&p->gx, f->tw[i].dev_grad);
    }
    struct dse_tensor *ts[] = { &f->cin[0], &f->cin[1], &f->cin[2], &f->cin[3], &f->cout, &f->cwide,
                                &f->cw, &f->cb, &f->crm, &f->crv };
    for (int i = 0; i < DSE_ARRAY_LEN(ts); i++) dse_tensor_deinit(ts[i]);
}

/* Run forward on both, compare every buffer and the op state; backward, compare again. */
static void run_compare(struct pair *p, struct fx *f, const char *what, double tol) {
    struct dse_err err = { 0 };
    enum dse_status a = dse_cpu_forward(&p->cx, &f->cn), b = dse_cuda_forward(&p->gx, &f->gn);
    CHECK_OK(a);
    CHECK_OK(b);
    if (a || b) {
        fprintf(stderr, "  %s: forward: %s\n", what, a ? p->cx.err.msg : p->gx.err.msg);
        return;
    }
    CHECK_OK(dse_cuda_sync(&p->gx, &err));
    twins_compare(p, f, what, "forward", tol);
    const struct dse_node_state *cs = &f->cn.st, *gs = &f->gn.st;
    const struct dse_tensor *x = f->cn.in[0];
    if (cs->argmax) compare_exact_bytes(&p->gx, what, "argmax", cs->argmax, gs->argmax,
                                        (size_t)dse_tensor_count(f->cn.out) * sizeof(int32_t));
    if (cs->mask && f->cn.training && f->layer.dropout_ratio > 0.0f)
        compare_exact_bytes(&p->gx, what, "mask", cs->mask, gs->mask, (size_t)dse_tensor_count(x));
    if (cs->mean) {
        compare(&p->gx, what, "mean", cs->mean, gs->mean, x->c, tol);
        compare(&p->gx, what, "invstd", cs->invstd, gs->invstd, x->c, tol);
    }
    if (cs->saved) compare(&p->gx, what, "saved", cs->saved, gs->saved, dse_tensor_count(x), tol);
    if (cs->prob) compare(&p->gx, what, "prob", cs->prob, gs->prob, dse_tensor_count(x), tol);
    CHECK(p->cx.rng.state == p->gx.rng.state); /* dropout drew as many numbers on both */

    a = dse_cpu_backward(&p->cx, &f->cn), b = dse_cuda_backward(&p->gx, &f->gn);
    CHECK_OK(a);
    CHECK_OK(b);
    if (a || b) {
        fprintf(stderr, "  %s: backward: %s\n", what, a ? p->cx.err.msg : p->gx.err.msg);
        return;
    }
    CHECK_OK(dse_cuda_sync(&p->gx, &err));
    twins_compare(p, f, what, "backward", tol);
}

/* One comparison: layer l inferred for n_in inputs of c x h x w (first input's c; in_c
 * for concat), N images. */
static void one(struct pair *p, const char *what, const struct dse_layer *l, int N, int n_in, const int *in_c,
                unsigned flags, uint64_t seed, double tol, int training) {
    struct fx f;
    if (fx_init(p, &f, l, N, n_in, in_c, flags, seed)) {
        f.cn.training = f.gn.training = training;
        run_compare(p, &f, what, tol);
    }
    fx_deinit(p, &f);
}

/* ---- per-op cases ---------------------------------------------------------------------- */

static struct pair *P; /* the device cases' contexts */

/* A random conv layer (inferred), its batch and fixture flags; 0 if the draw does not
 * make a conv cuDNN runs. what: its description. */
static int random_conv(struct dse_pcg32 *r, enum dse_cuda_math math, struct dse_layer *lp, int *Np, unsigned *fp,
                       char *what, size_t size) {
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "conv");
    const int N = irand(r, 1, 4), C = irand(r, 1, 9), H = irand(r, 1, 13), W = irand(r, 1, 13);
    static const int ks[] = { 1, 1, 2, 3, 3, 5 };
    l.num_output = irand(r, 1, 9);
    l.kernel_h = ks[irand(r, 0, 5)], l.kernel_w = irand(r, 0, 3) ? l.kernel_h : ks[irand(r, 0, 5)];
    l.stride_h = irand(r, 1, 3), l.stride_w = irand(r, 0, 1) ? l.stride_h : irand(r, 1, 3);
    l.pad_h = irand(r, 0, l.kernel_h - 1), l.pad_w = irand(r, 0, l.kernel_w - 1);
    l.dilation_h = l.dilation_w = irand(r, 0, 4) ? 1 : 2;
    const int g = irand(r, 1, 3);
    l.groups = C % g == 0 && l.num_output % g == 0 ? g : 1;
    l.bias = irand(r, 0, 3) != 0;
    if (!infer_layer(&l, 1, C, H, W)) return 0;
    /* cuDNN wants the padded input at least as large as the dilated kernel (Caffe's
     * rounding gives such a conv one output row; no network here has one) */
    if (H + 2 * l.pad_h < (l.kernel_h - 1) * l.dilation_h + 1 || W + 2 * l.pad_w < (l.kernel_w - 1) * l.dilation_w + 1)
        return 0;
    const unsigned flags = (irand(r, 0, 3) == 0 ? FX_NO_DX : 0) | (irand(r, 0, 2) == 0 ? FX_OUT_VIEW : 0);
    snprintf(what, size, "conv %s N%d C%d %dx%d K%d %dx%d s%d,%d p%d,%d d%d g%d%s%s%s", dse_cuda_math_str(math), N, C,
             H, W, l.num_output, l.kernel_h, l.kernel_w, l.stride_h, l.stride_w, l.pad_h, l.pad_w, l.dilation_h,
             l.groups, l.bias ? " bias" : "", flags & FX_NO_DX ? " no-dx" : "", flags & FX_OUT_VIEW ? " out-view" : "");
    *lp = l, *Np = N, *fp = flags;
    return 1;
}

static void conv_cases(enum dse_cuda_math math, double tol, int trials) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 77, (uint64_t)math);
    P->gx.math = math;
    for (int t = 0, done = 0; done < trials && t < 50 * trials; t++) {
        struct dse_layer l;
        int N;
        unsigned flags;
        char what[160];
        if (!random_conv(&r, math, &l, &N, &flags, what, sizeof what)) continue;
        one(P, what, &l, N, 1, NULL, flags, 100 + (uint64_t)t, tol, 1);
        done++;
    }
    P->gx.math = DSE_CUDA_MATH_FP32;
}

/* Every twin's data downloaded over its host buffer: the CPU continues from the GPU's
 * values. */
static void twins_take_data(struct pair *p, struct fx *f) {
    for (int i = 0; i < f->n_tw; i++) {
        const struct twin *t = &f->tw[i];
        CHECK_OK(dse_cuda_download(&p->gx, t->host_data, t->dev_data, (size_t)t->floats * sizeof(float), NULL));
    }
}

/* A conv with its in-place ReLU fused on the GPU (dse_node.relu_out: the bias and the ReLU
 * in one pass forward; the mask and the bias gradient in one pass backward, or the mask
 * alone without a bias) against the CPU's unfused pair, the conv node and then a relu
 * node in place on its output: forward, the output; backward, the masked output gradient
 * and the input, weight and bias gradients. The CPU masks with the GPU's forward output
 * (downloaded after the forward comparison), so a value that rounding (TF32, 16 bits)
 * puts on the other side of 0 cannot make the masks differ. */
static void conv_relu_one(const char *what, const struct dse_layer *l, int N, unsigned flags, uint64_t seed,
                          double tol) {
    struct dse_layer rl = dse_layer_make(DSE_LAYER_RELU, "relu");
    if (!infer_layer(&rl, 1, l->out_c, l->out_h, l->out_w)) {
        CHECK(0);
        return;
    }
    struct fx f;
    if (!fx_init(P, &f, l, N, 1, NULL, flags, seed)) {
        fx_deinit(P, &f);
        return;
    }
    struct dse_node rn;
    struct dse_err err = { 0 };
    dse_node_init(&rn, DSE_OP_RELU, &rl);
    rn.n_in = 1, rn.in[0] = &f.cout, rn.out = &f.cout;
    f.gn.relu_out = 1;
    CHECK_OK(dse_cpu_node_prepare(&P->cx, &rn, &err));
    enum dse_status a = dse_cpu_forward(&P->cx, &f.cn), b = dse_cuda_forward(&P->gx, &f.gn);
    if (!a) a = dse_cpu_forward(&P->cx, &rn);
    CHECK_OK(a);
    CHECK_OK(b);
    if (!a && !b) {
        CHECK_OK(dse_cuda_sync(&P->gx, &err));
        twins_compare(P, &f, what, "forward", tol);
        twins_take_data(P, &f);
        a = dse_cpu_backward(&P->cx, &rn);
        if (!a) a = dse_cpu_backward(&P->cx, &f.cn);
        b = dse_cuda_backward(&P->gx, &f.gn);
        CHECK_OK(a);
        CHECK_OK(b);
        if (!a && !b) {
            CHECK_OK(dse_cuda_sync(&P->gx, &err));
            twins_compare(P, &f, what, "backward", tol);
        }
    }
    if (a || b) fprintf(stderr, "  %s: %s\n", what, a ? P->cx.err.msg : P->gx.err.msg);
    dse_node_deinit(&rn);
    fx_deinit(P, &f);
}

static void conv_relu_cases(enum dse_cuda_math math, double tol, int trials, uint64_t seed) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, seed, (uint64_t)math);
    const float keep_scale = P->gx.loss_scale;
    P->gx.math = math;
    P->gx.loss_scale = 64.0f; /* FP16: no overflow on these gradients (mixed_cases) */
    for (int t = 0, done = 0; done < trials && t < 50 * trials; t++) {
        struct dse_layer l;
        int N;
        unsigned flags;
        char what[200];
        if (!random_conv(&r, math, &l, &N, &flags, what, sizeof what)) continue;
        strcat(what, " +relu");
        conv_relu_one(what, &l, N, flags, 1100 + (uint64_t)t, tol);
        done++;
    }
    if (dse_cuda_math_is16(math)) { /* no gradient overflowed (and the flag is left clear) */
        int skip = -1;
        CHECK_OK(dse_cuda_mp_step(&P->gx, &skip, NULL));
        CHECK_INT_EQ(skip, 0);
    }
    P->gx.math = DSE_CUDA_MATH_FP32;
    P->gx.loss_scale = keep_scale;
}

/* FP32 and TF32 take the bias pass (dse_cuk_bias_fwd), FP16 and BF16 the 16-bit copies'
 * rounding pass (dse_cuk_from16_bias); shapes cuDNN has no 16-bit engine for run in FP32. */
static void test_conv_relu(void) {
    conv_relu_cases(DSE_CUDA_MATH_FP32, TOL_CONV, 16, 87);
    conv_relu_cases(DSE_CUDA_MATH_TF32, TOL_TF32, 6, 88);
    conv_relu_cases(DSE_CUDA_MATH_FP16, 1e-5, 6, 89);
    conv_relu_cases(DSE_CUDA_MATH_BF16, 5e-4, 6, 90);
    /* SqueezeNet's shapes: a fire expand into its concat slice, conv1 (several x-blocks
     * per image, the bias gradient's runs of images) */
    struct dse_layer e3 = dse_layer_make(DSE_LAYER_CONV, "fire2/expand3x3");
    e3.num_output = 64, e3.kernel_h = e3.kernel_w = 3, e3.pad_h = e3.pad_w = 1;
    if (infer_layer(&e3, 1, 16, 55, 55))
        conv_relu_one("conv+relu fire2/expand3x3 N8 16x55x55 -> 64 (out-view)", &e3, 8, FX_OUT_VIEW, 7, TOL_CONV);
    struct dse_layer c1 = dse_layer_make(DSE_LAYER_CONV, "conv1");
    c1.num_output = 96, c1.kernel_h = c1.kernel_w = 7, c1.stride_h = c1.stride_w = 2;
    if (infer_layer(&c1, 1, 3, 111, 111))
        conv_relu_one("conv+relu conv1 N4 3x111x111 -> 96 7x7/2 (no-dx)", &c1, 4, FX_NO_DX, 8, TOL_CONV);
}

static void test_conv(void) { conv_cases(DSE_CUDA_MATH_FP32, TOL_CONV, 24); }
static void test_conv_tf32(void) { conv_cases(DSE_CUDA_MATH_TF32, TOL_TF32, 6); }
/* Mixed precision: operands rounded to 16 bits (NMSE of one rounding: FP16 about 1e-7,
 * BF16 about 5e-6; sums over a window add a little), gradients scaled and unscaled
 * exactly (powers of two); no overflow at a scale of 64. */
static void mixed_cases(enum dse_cuda_math math, double tol) {
    const float keep = P->gx.loss_scale;
    P->gx.loss_scale = 64.0f;
    conv_cases(math, tol, 8);
    int skip = -1;
    CHECK_OK(dse_cuda_mp_step(&P->gx, &skip, NULL));
    CHECK_INT_EQ(skip, 0);
    P->gx.loss_scale = keep;
}
static void test_conv_fp16(void) { mixed_cases(DSE_CUDA_MATH_FP16, 1e-5); }
static void test_conv_bf16(void) { mixed_cases(DSE_CUDA_MATH_BF16, 5e-4); }

/* FP16's loss scale: at 2^24, SqueezeNet-sized output gradients of 1 overflow FP16 (max
 * 65504), the step is reported skipped and the scale halves; the pure rule as PyTorch's. */
static void test_loss_scale(void) {
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "conv");
    l.num_output = 8, l.kernel_h = l.kernel_w = 3, l.pad_h = l.pad_w = 1;
    struct fx f;
    P->gx.math = DSE_CUDA_MATH_FP16;
    if (infer_layer(&l, 1, 4, 10, 10) && fx_init(P, &f, &l, 2, 1, NULL, 0, 3)) {
        P->gx.loss_scale = 16777216.0f;
        P->gx.mp_good_steps = 7;
        const int64_t skipped = P->gx.stats.mp_steps_skipped;
        CHECK_OK(dse_cuda_forward(&P->gx, &f.gn));
        CHECK_OK(dse_cuda_backward(&P->gx, &f.gn));
        int skip = 0;
        CHECK_OK(dse_cuda_mp_step(&P->gx, &skip, NULL));
        CHECK_INT_EQ(skip, 1);
        CHECK_NEAR(P->gx.loss_scale, 8388608.0f, 0.0);
        CHECK_INT_EQ(P->gx.mp_good_steps, 0);
        CHECK_INT_EQ(P->gx.stats.mp_steps_skipped, skipped + 1);
        CHECK_OK(dse_cuda_mp_step(&P->gx, &skip, NULL)); /* the flag was cleared */
        CHECK_INT_EQ(skip, 0);
        fx_deinit(P, &f);
    }
    P->gx.math = DSE_CUDA_MATH_FP32;
    P->gx.loss_scale = DSE_LOSS_SCALE_INIT, P->gx.mp_good_steps = 0;
}
/* The same shapes through cuDNN's legacy API (its 8 algorithms), which the engine falls
 * back to when the graph API offers no engine for a shape. */
static void test_conv_legacy(void) {
    P->gx.legacy_conv = 1;
    conv_cases(DSE_CUDA_MATH_FP32, TOL_CONV, 12);
    P->gx.legacy_conv = 0;
}

/* SqueezeNet's shapes at a real size: fire expand 3x3 into its concat slice, conv1. */
static void test_conv_squeezenet(void) {
    struct dse_layer e3 = dse_layer_make(DSE_LAYER_CONV, "fire2/expand3x3");
    e3.num_output = 64, e3.kernel_h = e3.kernel_w = 3, e3.pad_h = e3.pad_w = 1;
    if (infer_layer(&e3, 1, 16, 55, 55)) one(P, "conv fire2/expand3x3 N8 16x55x55 -> 64 (out-view)", &e3, 8, 1, NULL,
                                             FX_OUT_VIEW, 5, TOL_CONV, 1);
    struct dse_layer c1 = dse_layer_make(DSE_LAYER_CONV, "conv1");
    c1.num_output = 96, c1.kernel_h = c1.kernel_w = 7, c1.stride_h = c1.stride_w = 2;
    if (infer_layer(&c1, 1, 3, 111, 111)) one(P, "conv conv1 N4 3x111x111 -> 96 7x7/2 (no-dx)", &c1, 4, 1, NULL,
                                              FX_NO_DX, 6, TOL_CONV, 1);
}

/* FP32 mode must not round inputs to TF32 (10-bit mantissa): x = w = 1 + 2^-13 is exact
 * in float32 and 1 in TF32, so a 16-input dot product is 16 + 2^-8 in FP32 (exactly, in
 * any order) and 16 in TF32. Conv (cuDNN) and fc (cuBLAS). */
static void test_no_tf32(void) {
    const float v = 1.0f + 1.0f / 8192.0f, want = 16.0f + 1.0f / 256.0f;
    struct dse_layer conv = dse_layer_make(DSE_LAYER_CONV, "conv1x1"), fc = dse_layer_make(DSE_LAYER_FC, "fc");
    conv.num_output = 4, conv.kernel_h = conv.kernel_w = 1, conv.bias = 0;
    fc.num_output = 4, fc.bias = 0;
    const int ok_conv = infer_layer(&conv, 1, 16, 8, 8), ok_fc = infer_layer(&fc, 1, 16, 1, 1);
    CHECK(ok_conv && ok_fc);
    const struct dse_layer *layers[2] = { &conv, &fc };
    for (int k = 0; k < 2 && ok_conv && ok_fc; k++) {
        struct fx f;
        if (fx_init(P, &f, layers[k], 2, 1, NULL, 0, 1)) {
            for (int64_t i = 0; i < dse_tensor_count(&f.cin[0]); i++) f.cin[0].data[i] = v;
            for (int64_t i = 0; i < dse_tensor_count(&f.cw); i++) f.cw.data[i] = v;
            twins_upload(P, &f);
            CHECK_OK(dse_cuda_forward(&P->gx, &f.gn));
            const int64_t n = dse_tensor_count(&f.gout);
            float *y = malloc((size_t)n * sizeof *y);
            CHECK_OK(dse_cuda_download(&P->gx, y, f.gout.data, (size_t)n * sizeof *y, NULL));
            double worst = 0.0;
            for (int64_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)y[i] - want));
            if (!(worst <= 1e-5))
                fprintf(stderr, "  %s in FP32 mode: output %.9g, expected %.9g: inputs were rounded to TF32 "
                        "(tensor cores)\n", k ? "fc" : "conv", (double)y[0], (double)want);
            CHECK(worst <= 1e-5);
            free(y);
        }
        fx_deinit(P, &f);
    }
}

static void pool_cases(enum dse_layer_type type, int ties) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 78, (uint64_t)type + 10 * (uint64_t)ties);
    for (int t = 0, done = 0; done < 16 && t < 400; t++) {
        struct dse_layer l = dse_layer_make(type, type == DSE_LAYER_MAXPOOL ? "maxpool" : "avgpool");
        const int N = irand(&r, 1, 3), C = irand(&r, 1, 5), H = irand(&r, 1, 12), W = irand(&r, 1, 12);
        l.global = irand(&r, 0, 5) == 0;
        l.kernel_h = irand(&r, 1, 4), l.kernel_w = irand(&r, 0, 2) ? l.kernel_h : irand(&r, 1, 4);
        l.stride_h = irand(&r, 1, 3), l.stride_w = irand(&r, 1, 3);
        l.pad_h = irand(&r, 0, l.kernel_h - 1), l.pad_w = irand(&r, 0, l.kernel_w - 1);
        l.round = irand(&r, 0, 3) ? DSE_ROUND_CEIL : DSE_ROUND_FLOOR;
        if (l.global) l.pad_h = l.pad_w = 0, l.stride_h = l.stride_w = 1;
        if (!infer_layer(&l, 1, C, H, W)) continue;
        struct fx f;
        char what[160];
        snprintf(what, sizeof what, "%s%s N%d C%d %dx%d k%dx%d s%d,%d p%d,%d%s%s", dse_layer_type_str(type),
                 ties ? " ties" : "", N, C, H, W, l.kernel_h, l.kernel_w, l.stride_h, l.stride_w, l.pad_h, l.pad_w,
                 l.global ? " global" : "", l.round == DSE_ROUND_FLOOR ? " floor" : "");
        if (fx_init(P, &f, &l, N, 1, NULL, 0, 200 + (uint64_t)t)) {
            if (ties) { /* values from {0, 0.5, 1}, as after a relu: windows with equal maxima */
                const int64_t n = (int64_t)f.cin[0].n * f.cin[0].stride_n;
                for (int64_t i = 0; i < n; i++) f.cin[0].data[i] = 0.5f * (float)irand(&r, 0, 2);
                CHECK_OK(dse_cuda_upload(&P->gx, f.gin[0].data, f.cin[0].data, (size_t)n * sizeof(float), NULL));
            }
            run_compare(P, &f, what, TOL_EXACT);
        }
        fx_deinit(P, &f);
        done++;
    }
}

/* SqueezeNet's pools at a real size, where an image spans more than the 1,024 x-blocks
 * of an image grid (pool1: 3x3/2 over 113x113 maps, relu-like ties), and pool10 (global
 * average over 13x13, 1000 channels); then 70,000 small images, more than the 65,535
 * grid rows, so the kernels' image loops stride. */
static void test_pool_large(void) {
    struct dse_layer mp = dse_layer_make(DSE_LAYER_MAXPOOL, "pool1");
    mp.kernel_h = mp.kernel_w = 3, mp.stride_h = mp.stride_w = 2;
    struct dse_layer ap = dse_layer_make(DSE_LAYER_AVGPOOL, "pool10");
    ap.global = 1;
    struct dse_layer sp = dse_layer_make(DSE_LAYER_MAXPOOL, "pool");
    sp.kernel_h = sp.kernel_w = 2, sp.stride_h = sp.stride_w = 1, sp.pad_h = 1;
    struct fx f;
    const int ok = infer_layer(&mp, 1, 24, 113, 113) && infer_layer(&ap, 1, 1000, 13, 13) && infer_layer(&sp, 1, 1, 3, 2);
    CHECK(ok);
    if (!ok) return;
    if (fx_init(P, &f, &mp, 2, 1, NULL, 0, 31)) {
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 32, 1);
        const int64_t n = (int64_t)f.cin[0].n * f.cin[0].stride_n;
        for (int64_t i = 0; i < n; i++) f.cin[0].data[i] = irand(&r, 0, 3) ? 0.0f : uniform(&r, 0.0f, 1.0f);
        CHECK_OK(dse_cuda_upload(&P->gx, f.gin[0].data, f.cin[0].data, (size_t)n * sizeof(float), NULL));
        run_compare(P, &f, "maxpool pool1 N2 C24 113x113 3x3/2 (relu ties)", TOL_EXACT);
    }
    fx_deinit(P, &f);
    if (fx_init(P, &f, &ap, 3, 1, NULL, 0, 33)) run_compare(P, &f, "avgpool pool10 N3 C1000 13x13 global", TOL_EXACT);
    fx_deinit(P, &f);
    if (fx_init(P, &f, &sp, 70000, 1, NULL, 0, 34)) run_compare(P, &f, "maxpool N70000 C1 3x2 2x2/1 p1,0", TOL_EXACT);
    fx_deinit(P, &f);
}

static void test_maxpool(void) { pool_cases(DSE_LAYER_MAXPOOL, 0); }
static void test_maxpool_ties(void) { pool_cases(DSE_LAYER_MAXPOOL, 1); }
static void test_avgpool(void) { pool_cases(DSE_LAYER_AVGPOOL, 0); }

/* Elementwise ops with one input: relu, dropout (several ratios, training or not),
 * scale, batchnorm; each out of place and in place. */
static void test_relu(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 79, 1);
    for (int t = 0; t < 8; t++) {
        struct dse_layer l = dse_layer_make(DSE_LAYER_RELU, "relu");
        const int N = irand(&r, 1, 4), C = irand(&r, 1, 7), H = irand(&r, 1, 9), W = irand(&r, 1, 9);
        if (!infer_layer(&l, 1, C, H, W)) continue;
        for (int ip = 0; ip < 2; ip++) {
            char what[96];
            snprintf(what, sizeof what, "relu N%d C%d %dx%d%s", N, C, H, W, ip ? " in-place" : "");
            one(P, what, &l, N, 1, NULL, ip ? FX_IN_PLACE : 0, 300 + (uint64_t)t, TOL_EXACT, 1);
        }
    }
}

static void test_dropout(void) {
    static const float ratios[] = { 0.5f, 0.3f, 0.0f, 0.9f };
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 80, 1);
    for (int t = 0; t < 8; t++) {
        struct dse_layer l = dse_layer_make(DSE_LAYER_DROPOUT, "drop");
        l.dropout_ratio = ratios[t % 4];
        const int N = irand(&r, 1, 4), C = irand(&r, 1, 9), H = irand(&r, 1, 17), W = irand(&r, 1, 17);
        if (!infer_layer(&l, 1, C, H, W)) continue;
        for (int k = 0; k < 4; k++) {
            const int ip = k & 1, training = k < 2 || t == 0;
            char what[96];
            snprintf(what, sizeof what, "dropout %.1f N%d C%d %dx%d%s%s", (double)l.dropout_ratio, N, C, H, W,
                     ip ? " in-place" : "", training ? "" : " inference");
            one(P, what, &l, N, 1, NULL, ip ? FX_IN_PLACE : 0, 400 + (uint64_t)t, TOL_EXACT, training);
        }
    }
}

/* Dropout at SqueezeNet's drop9 size (512x13x13 per image: many threads per image, each
 * drawing a strided run), and over 70,000 one-value images (the image loop strides). */
static void test_dropout_large(void) {
    struct dse_layer l = dse_layer_make(DSE_LAYER_DROPOUT, "drop9");
    l.dropout_ratio = 0.5f;
    if (infer_layer(&l, 1, 512, 13, 13)) one(P, "dropout drop9 N3 512x13x13", &l, 3, 1, NULL, 0, 35, TOL_EXACT, 1);
    if (infer_layer(&l, 1, 512, 13, 13))
        one(P, "dropout drop9 N3 512x13x13 in-place", &l, 3, 1, NULL, FX_IN_PLACE, 36, TOL_EXACT, 1);
    l = dse_layer_make(DSE_LAYER_DROPOUT, "drop");
    l.dropout_ratio = 0.3f;
    if (infer_layer(&l, 1, 1, 1, 1)) one(P, "dropout N70000 1x1x1", &l, 70000, 1, NULL, 0, 37, TOL_EXACT, 1);
}

static void test_concat(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 81, 1);
    for (int t = 0; t < 8; t++) {
        const int n_in = irand(&r, 1, 4), N = irand(&r, 1, 3), H = irand(&r, 1, 8), W = irand(&r, 1, 8);
        int in_c[4], sum = 0;
        for (int i = 0; i < n_in; i++) sum += in_c[i] = irand(&r, 1, 5);
        struct dse_layer l = dse_layer_make(DSE_LAYER_CONCAT, "concat");
        /* Infer with equal inputs, then describe the real ones: concat's shape is the sum. */
        if (!infer_layer(&l, n_in, in_c[0], H, W)) continue;
        l.out_c = sum;
        for (int views = 0; views < 2; views++) {
            char what[96];
            snprintf(what, sizeof what, "concat %d inputs N%d C%d %dx%d%s", n_in, N, sum, H, W,
                     views ? " views" : " copies");
            one(P, what, &l, N, n_in, in_c, views ? FX_VIEWS : 0, 500 + (uint64_t)t, TOL_EXACT, 1);
        }
    }
}

static void test_eltwise(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 82, 1);
    for (int t = 0; t < 8; t++) {
        const int n_in = irand(&r, 2, 4), N = irand(&r, 1, 3), C = irand(&r, 1, 6), H = irand(&r, 1, 8),
                  W = irand(&r, 1, 8);
        struct dse_layer l = dse_layer_make(DSE_LAYER_ELTWISE, "add");
        if (!infer_layer(&l, n_in, C, H, W)) continue;
        char what[96];
        snprintf(what, sizeof what, "eltwise_add %d inputs N%d C%d %dx%d", n_in, N, C, H, W);
        one(P, what, &l, N, n_in, NULL, 0, 600 + (uint64_t)t, TOL_EXACT, 1);
    }
}

static void test_fc(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 83, 1);
    for (int t = 0; t < 12; t++) {
        const int N = irand(&r, 1, 9), C = irand(&r, 1, 20), H = irand(&r, 1, 5), W = irand(&r, 1, 5);
        struct dse_layer l = dse_layer_make(DSE_LAYER_FC, "fc");
        l.num_output = irand(&r, 1, 17);
        l.bias = irand(&r, 0, 3) != 0;
        if (!infer_layer(&l, 1, C, H, W)) continue;
        const unsigned flags = irand(&r, 0, 3) == 0 ? FX_NO_DX : 0;
        for (int m = 0; m < 2; m++) {
            P->gx.math = m ? DSE_CUDA_MATH_TF32 : DSE_CUDA_MATH_FP32;
            char what[96];
            snprintf(what, sizeof what, "fc %s N%d D%d K%d%s%s", dse_cuda_math_str(P->gx.math), N, C * H * W,
                     l.num_output, l.bias ? " bias" : "", flags ? " no-dx" : "");
            one(P, what, &l, N, 1, NULL, flags, 700 + (uint64_t)t, m ? TOL_TF32 : TOL_FC, 1);
        }
        P->gx.math = DSE_CUDA_MATH_FP32;
    }
}

static void test_softmax(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 84, 1);
    for (int t = 0; t < 8; t++) {
        const int N = irand(&r, 1, 64), K = irand(&r, 1, 1000);
        struct dse_layer l = dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss");
        if (!infer_layer(&l, 1, K, 1, 1)) continue;
        char what[96];
        snprintf(what, sizeof what, "softmax_xent N%d K%d", N, K);
        one(P, what, &l, N, 1, NULL, 0, 800 + (uint64_t)t, TOL_SOFTMAX, 1);
    }
    /* A label out of range is the CPU's error, word for word. */
    struct dse_layer l = dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss");
    struct fx f;
    if (infer_layer(&l, 1, 5, 1, 1) && fx_init(P, &f, &l, 3, 1, NULL, 0, 9)) {
        f.labels[1] = 5;
        CHECK_INT_EQ(dse_cpu_forward(&P->cx, &f.cn), DSE_ERR_CONFIG);
        CHECK_INT_EQ(dse_cuda_forward(&P->gx, &f.gn), DSE_ERR_CONFIG);
        CHECK_STR_EQ(P->gx.err.msg, P->cx.err.msg);
        fx_deinit(P, &f);
    }
}

static void test_batchnorm(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 85, 1);
    for (int t = 0; t < 6; t++) {
        const int N = irand(&r, 1, 5), C = irand(&r, 1, 8), H = irand(&r, 1, 9), W = irand(&r, 1, 9);
        for (int k = 0; k < 8; k++) {
            struct dse_layer l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn");
            l.affine = k & 1;
            const int ip = (k >> 1) & 1, training = !(k >> 2);
            if (!infer_layer(&l, 1, C, H, W)) continue;
            char what[96];
            snprintf(what, sizeof what, "batchnorm N%d C%d %dx%d%s%s%s", N, C, H, W, l.affine ? " affine" : "",
                     ip ? " in-place" : "", training ? "" : " inference");
            one(P, what, &l, N, 1, NULL, ip ? FX_IN_PLACE : 0, 900 + (uint64_t)t, TOL_BN, training);
        }
    }
}

static void test_scale(void) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 86, 1);
    for (int t = 0; t < 6; t++) {
        const int N = irand(&r, 1, 5), C = irand(&r, 1, 8), H = irand(&r, 1, 9), W = irand(&r, 1, 9);
        for (int k = 0; k < 4; k++) {
            struct dse_layer l = dse_layer_make(DSE_LAYER_SCALE, "scale");
            l.bias = k & 1;
            const int ip = k >> 1;
            if (!infer_layer(&l, 1, C, H, W)) continue;
            char what[96];
            snprintf(what, sizeof what, "scale N%d C%d %dx%d%s%s", N, C, H, W, l.bias ? " bias" : "",
                     ip ? " in-place" : "");
            one(P, what, &l, N, 1, NULL, ip ? FX_IN_PLACE : 0, 1000 + (uint64_t)t, TOL_SCALE, 1);
        }
    }
}

/* ---- the context itself ------------------------------------------------------------------ */

static void test_ctx(void) {
    struct dse_err err = { 0 };
    char info[512];
    CHECK_OK(dse_cuda_device_info(0, info, sizeof info, &err));
    printf("  %s\n", info);
    /* A failing runtime call comes back with its name, error and place. */
    void *p = NULL;
    CHECK_INT_EQ(dse_cuda_alloc(&P->gx, (size_t)1 << 62, &p, &err), DSE_ERR_NOMEM);
    CHECK(p == NULL);
    CHECK(strncmp(err.msg, "cudaMalloc: cudaErrorMemoryAllocation (engine/cuda/ctx.c:", 57) == 0);
    if (verbose) printf("  %s\n", err.msg);
    /* The context still works after it. */
    CHECK_OK(dse_cuda_alloc(&P->gx, 1000, &p, &err));
    dse_cuda_free(&P->gx, p);
    char why[256];
    const int count = dse_cuda_device_count(why, sizeof why);
    struct dse_cuda_ctx cx;
    CHECK_INT_EQ(dse_cuda_ctx_init(&cx, count, 1, &err), DSE_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "does not exist") != NULL);
    /* Non-finite detection. */
    float host[5] = { 1, 2, 3, 4, 5 };
    float *dev = NULL;
    int bad = -1;
    CHECK_OK(dse_cuda_alloc(&P->gx, sizeof host, (void **)&dev, &err));
    CHECK_OK(dse_cuda_upload(&P->gx, dev, host, sizeof host, &err));
    CHECK_OK(dse_cuda_nonfinite(&P->gx, dev, 5, &bad));
    CHECK_INT_EQ(bad, 0);
    host[3] = NAN;
    CHECK_OK(dse_cuda_upload(&P->gx, dev, host, sizeof host, &err));
    CHECK_OK(dse_cuda_nonfinite(&P->gx, dev, 5, &bad));
    CHECK_INT_EQ(bad, 1);
    dse_cuda_free(&P->gx, dev);
}

/* The conv algorithm cache: one find per shape and direction, reused after. */
static void test_conv_cache(void) {
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "conv");
    l.num_output = 8, l.kernel_h = l.kernel_w = 3, l.pad_h = l.pad_w = 1;
    struct fx f;
    if (!infer_layer(&l, 1, 4, 10, 10) || !fx_init(P, &f, &l, 2, 1, NULL, 0, 3)) return;
    struct dse_cuda_conv_choice c;
    const int64_t finds = P->gx.stats.conv_finds, graph = P->gx.stats.conv_graph_found;
    CHECK_OK(dse_cuda_conv2d_choose(&P->gx, &f.gn, &c));
    CHECK(c.algo[0] >= 0 && c.algo[1] >= 0 && c.algo[2] >= 0);
    /* A plain 3x3 conv has graph-API engines in every direction (conv_graph.c); whether
     * they beat the legacy API's best depends on the GPU. */
    CHECK_INT_EQ(P->gx.stats.conv_graph_found - graph, 3);
    const int64_t after = P->gx.stats.conv_finds;
    CHECK(after - finds <= 3);
    CHECK_OK(dse_cuda_forward(&P->gx, &f.gn));
    CHECK_OK(dse_cuda_backward(&P->gx, &f.gn));
    CHECK_INT_EQ(P->gx.stats.conv_finds, after);
    printf("  3x3 conv N2 4x10x10 -> 8: fwd %s %d (%.3f ms), bwd data %s %d (%.3f ms), bwd filter %s %d (%.3f ms)\n",
           dse_cuda_conv_algo_str(0, c.algo[0]), c.algo[0] % DSE_CUDA_CONV_ENGINE, (double)c.ms[0],
           dse_cuda_conv_algo_str(1, c.algo[1]), c.algo[1] % DSE_CUDA_CONV_ENGINE, (double)c.ms[1],
           dse_cuda_conv_algo_str(2, c.algo[2]), c.algo[2] % DSE_CUDA_CONV_ENGINE,
           (double)c.ms[2]);
    fx_deinit(P, &f);
}

/* ---- whole models ------------------------------------------------------------------------ */

/* conv -> batchnorm (affine, in place) -> relu -> conv -> scale (in place) -> relu ->
 * maxpool -> fc -> loss, on 2x10x10. */
static void bn_net(struct dse_net *net) {
    dse_net_init(net, "bn", 2, 10, 10);
    struct dse_layer l;
    l = dse_layer_make(DSE_LAYER_CONV, "conv1");
    l.num_output = 6, l.kernel_h = l.kernel_w = 3, l.pad_h = l.pad_w = 1, l.bias = 0;
    CHECK_OK(dse_net_add(net, &l, NULL));
    l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn1");
    l.affine = 1, l.in_place = 1;
    CHECK_OK(dse_net_add(net, &l, NULL));
    l = dse_layer_make(DSE_LAYER_RELU, "relu1");
    l.in_place = 1;
    CHECK_OK(dse_net_add(net, &l, NULL));
    l = dse_layer_make(DSE_LAYER_CONV, "conv2");
    l.num_output = 8, l.kernel_h = l.kernel_w = 3, l.stride_h = l.stride_w = 2;
    CHECK_OK(dse_net_add(net, &l, NULL));
    l = dse_layer_make(DSE_LAYER_SCALE, "scale2");
    l.in_place = 1, l.bias = 1;
    CHECK_OK(dse_net_add(net, &l, NULL));
    l = dse_layer_make(DSE_LAYER_RELU, "relu2");
    l.in_place = 1;
    CHECK_OK(dse_net_add(net, &l, NULL));
    l = dse_layer_make(DSE_LAYER_MAXPOOL, "pool2");
    l.kernel_h = l.kernel_w = 3, l.stride_h = l.stride_w = 2;
    CHECK_OK(dse_net_add(net, &l, NULL));
    l = dse_layer_make(DSE_LAYER_FC, "fc3");
    l.num_output = 5;
    CHECK_OK(dse_net_add(net, &l, NULL));
    l = dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss");
    CHECK_OK(dse_net_add(net, &l, NULL));
    CHECK_OK(dse_net_infer(net, NULL, NULL));
}

/* A synthetic dataset: images with a class-dependent pattern plus noise. */
static void make_data(int count, int c, int h, int w, int classes, float *x, int *labels) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 31337, 1);
    const int64_t img = (int64_t)c * h * w;
    for (int i = 0; i < count; i++) {
        labels[i] = (int)dse_pcg32_bounded(&r, (uint32_t)classes);
        for (int64_t j = 0; j < img; j++)
            x[i * img + j] = uniform(&r, -1.0f, 1.0f) + (j % classes == labels[i] ? 1.0f : 0.0f);
    }
}

/* Train the same net on the CPU and the GPU from the same seed over the same batches:
 * every step's loss, then every parameter, momentum and running statistic at the end. */
/* Training on the CPU and the device side by side: losses per step within loss_tol
 * (relative), top-1 hits within hits_tol per batch, final state within state_tol (NMSE). */
static void train_compare_in(const char *what, struct dse_net *net, int classes, enum dse_cuda_math math,
                             double loss_tol, int hits_tol, double state_tol) {
    const int B = 8, count = 64, epochs = 2;
    struct dse_model_opts mo = { .batch = B, .threads = 2, .seed = 11, .init = DSE_INIT_MSRA };
    struct dse_model_device_opts dev = { .device = { .kind = DSE_DEVICE_CUDA, .index = 0 }, .math = math };
    struct dse_model *cm = NULL, *gm = NULL;
    struct dse_err err = { 0 };
    enum dse_status st = dse_model_new_on(net, &mo, NULL, &cm, &err);
    CHECK_OK(st);
    if (!st) st = dse_model_new_on(net, &mo, &dev, &gm, &err);
    CHECK_OK(st);
    if (st) {
        fprintf(stderr, "  %s: %s\n", what, err.msg);
        dse_model_free(cm);
        return;
    }
    cm->cx.conv_force = DSE_CPU_CONV_GEMM_BATCH;
    gm->gpu->sync_each = 1;
    /* Both backends fuse the same conv + ReLU pairs (engine/model.c fuse_relus). */
    int fused_c = 0, fused_g = 0;
    for (int i = 0; i < cm->net.n_layers; i++) fused_c += cm->nodes[i].fused, fused_g += gm->nodes[i].fused;
    CHECK_INT_EQ(fused_g, fused_c);
    /* FP16: a scale this small neither overflows nor flushes these gradients; a skipped
     * step would part the two runs (the skipping itself: test mp-loss-scale) */
    gm->gpu->loss_scale = 256.0f;
    const int64_t img = (int64_t)net->in_c * net->in_h * net->in_w;
    float *x = malloc((size_t)(count * img) * sizeof *x);
    int *labels = malloc((size_t)count * sizeof *labels);
    make_data(count, net->in_c, net->in_h, net->in_w, classes, x, labels);
    double worst_loss = 0.0;
    float first = 0.0f, last = 0.0f;
    for (int e = 0; e < epochs; e++)
        for (int b = 0; b + B <= count; b += B) {
            float lc = 0.0f, lg = 0.0f;
            CHECK_OK(dse_model_forward(cm, x + b * img, labels + b, &lc, &err));
            st = dse_model_forward(gm, x + b * img, labels + b, &lg, &err);
            CHECK_OK(st);
            if (!st) st = dse_model_backward(gm, &err);
            CHECK_OK(st);
            if (st) {
                fprintf(stderr, "  %s: %s\n", what, err.msg);
                goto done;
            }
            CHECK_OK(dse_model_backward(cm, &err));
            int h1c, h5c, h1g, h5g;
            dse_model_hits(cm, B, &h1c, &h5c);
            dse_model_hits(gm, B, &h1g, &h5g);
            CHECK(abs(h1c - h1g) <= hits_tol);
            /* Clipping as dse train does it (norm 0.5: most of these steps are clipped), so
             * the device's sum of squares and its scaled step are checked against the CPU. */
            double nc = 0, ng = 0;
            int cc = 0, cg = 0;
            CHECK_OK(dse_model_clip_grad(cm, 0.5, &nc, &cc, &err));
            CHECK_OK(dse_model_clip_grad(gm, 0.5, &ng, &cg, &err));
            CHECK(fabs(nc - ng) <= 0.05 * fmax(nc, 1e-6));
            dse_model_sgd(cm, 0.01f, 0.9f, 2e-4f);
            dse_model_sgd(gm, 0.01f, 0.9f, 2e-4f);
            const double rel = fabs((double)lc - lg) / fmax(fabs((double)lc), 1e-6);
            if (rel > worst_loss) worst_loss = rel;
            if (e == 0 && b == 0) first = lc;
            last = lc;
        }
    if (verbose || worst_loss > loss_tol)
        printf("  %s (%s): loss %.4f -> %.4f, worst relative loss difference %.3g\n", what, dse_cuda_math_str(math),
               (double)first, (double)last, worst_loss);
    CHECK(worst_loss <= loss_tol);
    CHECK_INT_EQ(gm->gpu->stats.mp_steps_skipped, 0);
    CHECK(!dse_model_nonfinite(gm));
    {
        const uint64_t n = dse_model_state_count(cm);
        CHECK_INT_EQ(dse_model_state_count(gm), n);
        float *a = malloc(n * sizeof *a), *g = malloc(n * sizeof *g);
        CHECK_OK(dse_model_state_get(cm, a, &err));
        CHECK_OK(dse_model_state_get(gm, g, &err));
        int64_t at;
        const double e = nmse(a, g, (int64_t)n, &at);
        if (verbose || !(e <= state_tol))
            printf("  %s: parameters, momentum, running statistics: NMSE %.3g (worst [%lld] cpu %.9g cuda %.9g)\n",
                   what, e, (long long)at, (double)a[at], (double)g[at]);
        CHECK(e <= state_tol);
        free(a), free(g);
    }
    CHECK(gm->cx.rng.state == cm->cx.rng.state); /* the same dropout draws */
done:
    free(x), free(labels);
    dse_model_free(cm);
    dse_model_free(gm);
}

static void train_compare(const char *what, struct dse_net *net, int classes) {
    train_compare_in(what, net, classes, DSE_CUDA_MATH_FP32, 1e-4, 1, 1e-6);
}

/* Mixed precision trains the fire net as FP32 does, to 16-bit rounding: FP16 has an
 * 11-bit significand (relative rounding 2^-11), BF16 an 8-bit one (2^-8); 16 steps. */
static void test_train_mixed(void) {
    struct dse_net net;
    fire_net(&net);
    train_compare_in("fire net", &net, 4, DSE_CUDA_MATH_FP16, 1e-2, 2, 1e-4);
    train_compare_in("fire net", &net, 4, DSE_CUDA_MATH_BF16, 5e-2, 2, 1e-3);
    dse_net_deinit(&net);
}

/* Steps that do not wait (dse_model_step, issue #20 item 3): the fire net trained with
 * queued steps on the GPU (inputs through the two pinned batch buffers and the copy
 * stream, no wait between steps, clipping and the SGD factor on the device) against the
 * CPU's steps: the tallied loss, the clipped steps, every parameter. Then a step whose
 * loss is +inf - inf (positive parameters, input +inf): the device marks the tally
 * diverged at that step and no later step changes anything. */
static void test_train_step(void) {
    struct dse_net net;
    fire_net(&net);
    const int B = 8, count = 64, epochs = 2, classes = 4;
    struct dse_model_opts mo = { .batch = B, .threads = 2, .seed = 11, .init = DSE_INIT_MSRA };
    struct dse_model_device_opts dev = { .device = { .kind = DSE_DEVICE_CUDA, .index = 0 },
                                         .math = DSE_CUDA_MATH_FP32 };
    struct dse_model *cm = NULL, *gm = NULL;
    struct dse_err err = { 0 };
    CHECK_OK(dse_model_new_on(&net, &mo, NULL, &cm, &err));
    CHECK_OK(dse_model_new_on(&net, &mo, &dev, &gm, &err));
    const int64_t img = (int64_t)net.in_c * net.in_h * net.in_w;
    float *x = malloc((size_t)(count * img) * sizeof *x);
    int *labels = malloc((size_t)count * sizeof *labels);
    float *a = NULL, *g = NULL;
    if (!cm || !gm || !x || !labels) goto done;
    cm->cx.conv_force = DSE_CPU_CONV_GEMM_BATCH;
    make_data(count, net.in_c, net.in_h, net.in_w, classes, x, labels);
    struct dse_step_tally tc, tg;
    CHECK_OK(dse_model_tally(gm, &tg, 1, &err));
    for (int e = 0; e < epochs; e++)
        for (int b = 0; b + B <= count; b += B) {
            float *xb = dse_model_batch_buffer(gm, &err);
            CHECK(xb != NULL);
            if (!xb) goto done;
            memcpy(xb, x + b * img, sizeof *x * (size_t)(B * img));
            CHECK_OK(dse_model_step(cm, x + b * img, labels + b, 0.01f, 0.9f, 2e-4f, 0.5, &err));
            CHECK_OK(dse_model_step(gm, xb, labels + b, 0.01f, 0.9f, 2e-4f, 0.5, &err));
        }
    CHECK_OK(dse_model_tally(cm, &tc, 1, &err));
    CHECK_OK(dse_model_tally(gm, &tg, 1, &err));
    CHECK_INT_EQ(tg.steps, epochs * (count / B));
    CHECK_INT_EQ(tg.diverged_at, -1);
    CHECK_INT_EQ(tg.clipped, tc.clipped);
    CHECK(tc.clipped > 0);
    CHECK(fabs(tc.loss_sum - tg.loss_sum) <= 1e-4 * fabs(tc.loss_sum));
    if (verbose) printf("  loss sum cpu %.9g cuda %.9g, clipped %lld\n", tc.loss_sum, tg.loss_sum, (long long)tg.clipped);
    const uint64_t n = dse_model_state_count(cm);
    a = malloc(n * sizeof *a), g = malloc(n * sizeof *g);
    if (!a || !g) goto done;
    CHECK_OK(dse_model_state_get(cm, a, &err));
    CHECK_OK(dse_model_state_get(gm, g, &err));
    int64_t at;
    const double e = nmse(a, g, (int64_t)n, &at);
    if (verbose || !(e <= 1e-6)) printf("  train-step: state NMSE %.3g\n", e);
    CHECK(e <= 1e-6);
    CHECK(gm->cx.rng.state == cm->cx.rng.state);
    /* divergence: every parameter positive, momentum 0 (state order: each parameter's
     * values, then its momentum; the fire net has no running statistics) */
    uint64_t off = 0;
    for (int p = 0; p < gm->n_params; p++) {
        const uint64_t c = (uint64_t)dse_tensor_count(gm->params[p]);
        for (uint64_t i = 0; i < c; i++) g[off + i] = fabsf(g[off + i]) + 1e-3f, g[off + c + i] = 0;
        off += 2 * c;
    }
    CHECK_INT_EQ(off, n);
    CHECK_OK(dse_model_state_put(gm, g, &err));
    for (int step = 0; step < 4; step++) {
        float *xb = dse_model_batch_buffer(gm, &err);
        CHECK(xb != NULL);
        if (!xb) goto done;
        memcpy(xb, x + step * B * img, sizeof *x * (size_t)(B * img));
        if (step == 1) {
            for (int64_t i = 0; i < B * img; i++) xb[i] = INFINITY;
            CHECK_OK(dse_model_state_get(gm, a, &err)); /* waits: the state before step 1 */
        }
        CHECK_OK(dse_model_step(gm, xb, labels, step ? 0.05f : 0.0f, 0.9f, 2e-4f, 0, &err));
    }
    CHECK_OK(dse_model_tally(gm, &tg, 1, &err));
    CHECK_INT_EQ(tg.steps, 4);
    CHECK_INT_EQ(tg.diverged_at, 1);
    CHECK_OK(dse_model_state_get(gm, g, &err));
    CHECK(!memcmp(a, g, n * sizeof *a));
done:
    free(a), free(g), free(x), free(labels);
    dse_model_free(cm);
    dse_model_free(gm);
    dse_net_deinit(&net);
}

static void test_train_fire(void) {
    struct dse_net net;
    fire_net(&net);
    train_compare("fire net (conv, pool, fire with bypass, dropout)", &net, 4);
    dse_net_deinit(&net);
}

static void test_train_bn(void) {
    struct dse_net net;
    bn_net(&net);
    train_compare("bn net (batchnorm, scale, fc)", &net, 5);
    dse_net_deinit(&net);
}

/* Inference models (outputs share buffers) agree too. */
static void test_inference(void) {
    struct dse_net net;
    fire_net(&net);
    struct dse_model_opts mo = { .batch = 16, .threads = 1, .seed = 3, .init = DSE_INIT_MSRA, .inference = 1 };
    struct dse_model_device_opts dev = { .device = { .kind = DSE_DEVICE_CUDA, .index = 0 },
                                         .math = DSE_CUDA_MATH_FP32 };
    struct dse_model *cm = NULL, *gm = NULL;
    struct dse_err err = { 0 };
    CHECK_OK(dse_model_new_on(&net, &mo, NULL, &cm, &err));
    CHECK_OK(dse_model_new_on(&net, &mo, &dev, &gm, &err));
    if (cm && gm) {
        dse_model_set_training(cm, 0);
        dse_model_set_training(gm, 0);
        float *x = malloc(16 * 144 * sizeof *x), lc = 0, lg = 0;
        int labels[16];
        make_data(16, 1, 12, 12, 4, x, labels);
        CHECK_OK(dse_model_forward(cm, x, labels, &lc, &err));
        CHECK_OK(dse_model_forward(gm, x, labels, &lg, &err));
        CHECK_NEAR(lg, lc, 1e-5);
        int64_t at;
        const double e = nmse(cm->nodes[cm->loss].st.prob, gm->host_prob, 16 * 4, &at);
        CHECK(e <= TOL_SOFTMAX * 100);
        CHECK_INT_EQ(dse_model_backward(gm, &err), DSE_ERR_INTERNAL);
        free(x);
    } else {
        fprintf(stderr, "  inference: %s\n", err.msg);
    }
    dse_model_free(cm);
    dse_model_free(gm);
    dse_net_deinit(&net);
}

/* ---- the training loop on a device ---------------------------------------------------------- */

static void put_be32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* dir/<prefix>-images-idx3-ubyte and -labels-idx1-ubyte: count 12x12 images, 10 classes,
 * noise plus a class-dependent stripe (learnable). 0 on success. */
static int write_idx(const char *dir, const char *prefix, int count, uint64_t seed) {
    const int hw = 144;
    unsigned char *img = malloc(16 + (size_t)count * hw), *lab = malloc(8 + (size_t)count);
    char path[600];
    int bad = !img || !lab;
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, seed, 3);
    if (!bad) {
        put_be32(img, 0x803), put_be32(img + 4, (uint32_t)count), put_be32(img + 8, 12), put_be32(img + 12, 12);
        put_be32(lab, 0x801), put_be32(lab + 4, (uint32_t)count);
        for (int i = 0; i < count; i++) {
            const int label = (int)dse_pcg32_bounded(&r, 10);
            lab[8 + i] = (unsigned char)label;
            for (int j = 0; j < hw; j++)
                img[16 + (size_t)i * hw + j] =
                    (unsigned char)(dse_pcg32_bounded(&r, 128) + (j % 10 == label ? 127 : 0));
        }
    }
    for (int k = 0; k < 2 && !bad; k++) {
        snprintf(path, sizeof path, "%s/%s-%s", dir, prefix, k ? "labels-idx1-ubyte" : "images-idx3-ubyte");
        FILE *f = fopen(path, "wb");
        const size_t n = k ? 8 + (size_t)count : 16 + (size_t)count * hw;
        bad = !f || fwrite(k ? lab : img, 1, n, f) != n;
        if (f) bad |= fclose(f) != 0;
    }
    free(img), free(lab);
    return bad;
}

/* A checkpoint's values and dropout generator, read into a CPU model of net. */
static float *ckpt_values(const struct dse_net *net, const char *path, uint64_t *n, struct dse_pcg32 *rng) {
    struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA };
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    float *v = NULL;
    int next = 0;
    int64_t iter = 0;
    CHECK_OK(dse_model_new(net, &mo, &m, &err));
    if (m && !dse_checkpoint_load(m, path, &next, &iter, &err)) {
        *n = dse_model_state_count(m);
        v = malloc(*n * sizeof *v);
        if (v) CHECK_OK(dse_model_state_get(m, v, &err));
        *rng = m->cx.rng;
    } else {
        fprintf(stderr, "  %s: %s\n", path, err.msg);
        CHECK(0);
    }
    dse_model_free(m);
    return v;
}

/* Checkpoint values a and b agree within NMSE tol; their dropout generators exactly. */
static void ckpt_compare(const char *what, const struct dse_net *net, const char *a, const char *b, double tol) {
    uint64_t na = 0, nb = 0;
    struct dse_pcg32 ra, rb;
    float *va = ckpt_values(net, a, &na, &ra), *vb = ckpt_values(net, b, &nb, &rb);
    if (va && vb) {
        CHECK_INT_EQ(na, nb);
        int64_t at;
        const double e = nmse(va, vb, (int64_t)na, &at);
        if (verbose || !(e <= tol))
            printf("  %s: NMSE %.3g (worst [%lld] %.9g vs %.9g)\n", what, e, (long long)at, (double)va[at],
                   (double)vb[at]);
        CHECK(e <= tol);
        CHECK(ra.state == rb.state && ra.inc == rb.inc);
    }
    free(va), free(vb);
}

static int file_has(const char *path, const char *needle);

/* dse_train_run on cuda:0 against the CPU from the same seed (dropout included): per-epoch
 * losses and accuracy, checkpoints (a GPU-written one read by a CPU model), a GPU run
 * resumed from its own checkpoint and from the CPU's. Not bit for bit: cuDNN's algorithm
 * choices are timed per model (train-pinned pins them). */
static void test_train_run(void) {
    char dir[] = "/tmp/dse_cuda_train_XXXXXX", data[300], d[4][300], ck[8][320];
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    snprintf(data, sizeof data, "%s/data", dir);
    for (int k = 0; k < 4; k++) snprintf(d[k], sizeof d[k], "%s/run%d", dir, k);
    for (int k = 0; k < 8; k++) snprintf(ck[k], sizeof ck[k], "%s/epoch-%d.ckpt", d[k / 2], k % 2 + 1);
    CHECK(mkdir(data, 0777) == 0);
    CHECK(write_idx(data, "train", 320, 1) == 0);
    CHECK(write_idx(data, "t10k", 96, 2) == 0);
    struct dse_mp mp = dse_mp_squeezenet_v10(); /* fire_net with 10 classes */
    mp.input_c = 1, mp.input_h = mp.input_w = 12, mp.classes = 10;
    mp.conv1_filters = 6, mp.conv1_kernel = 3, mp.conv1_stride = 1, mp.conv1_pad = 1;
    mp.base_e = 8, mp.incr_e = 0, mp.freq = 2, mp.sr = 0.25, mp.pct3x3 = 0.5;
    mp.fires = 2, mp.pools = DSE_MP_POOL_CONV1, mp.dropout = 0.5;
    mp.bypass = DSE_BYPASS_COMPLEX;
    struct dse_net net;
    dse_net_init(&net, "fire10", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, &net, NULL));
    struct dse_train_opts o;
    struct dse_train_result *rc = malloc(sizeof *rc), *rg = malloc(sizeof *rg), *rr = malloc(sizeof *rr);
    struct dse_err err = { 0 };
    dse_train_opts_default(&o);
    o.data = data, o.epochs = 2, o.batch = 32, o.threads = 2, o.seed = 5;
    o.conv_algo = DSE_CPU_CONV_GEMM_BATCH;
    o.checkpoint_dir = d[0]; /* run0: the CPU */
    enum dse_status st = dse_train_run(&net, &o, rc, &err);
    CHECK_OK(st);
    if (st) fprintf(stderr, "  cpu: %s\n", err.msg);
    o.dev.device.kind = DSE_DEVICE_CUDA, o.dev.device.index = 0;
    o.checkpoint_dir = d[1]; /* run1: the GPU */
    if (!st) {
        st = dse_train_run(&net, &o, rg, &err);
        CHECK_OK(st);
        if (st) fprintf(stderr, "  cuda: %s\n", err.msg);
    }
    if (!st) {
        CHECK_STR_EQ(rg->status, "done");
        CHECK_INT_EQ(rg->epochs_done, 2);
        CHECK_INT_EQ(rg->n_epochs, rc->n_epochs);
        for (int e = 0; e < rg->n_epochs && e < rc->n_epochs; e++) {
            const struct dse_epoch_result *a = &rc->epochs[e], *b = &rg->epochs[e];
            if (verbose)
                printf("  epoch %d: train loss cpu %.6f cuda %.6f, test loss %.6f %.6f, top-1 %.4f %.4f\n", e + 1,
                       (double)a->train_loss, (double)b->train_loss, (double)a->test_loss, (double)b->test_loss,
                       (double)a->top1, (double)b->top1);
            CHECK_NEAR(b->train_loss, a->train_loss, 1e-3);
            CHECK_NEAR(b->test_loss, a->test_loss, 1e-3);
            CHECK(fabs((double)b->top1 - a->top1) <= 4.0 / 96 + 1e-6); /* a few near-ties may flip */
        }
        CHECK(rg->engine_bytes > 0);
        ckpt_compare("cpu vs cuda, epoch 2", &net, ck[1], ck[3], 1e-6);
        /* run2: the GPU resumed from its own epoch 1; run3: from the CPU's */
        o.resume = ck[2], o.checkpoint_dir = d[2];
        CHECK_OK(dse_train_run(&net, &o, rr, &err));
        CHECK_INT_EQ(rr->epochs_done, 2);
        ckpt_compare("cuda resumed vs uninterrupted", &net, ck[3], ck[5], 1e-6);
        o.resume = ck[0], o.checkpoint_dir = d[3];
        CHECK_OK(dse_train_run(&net, &o, rr, &err));
        ckpt_compare("cuda resumed from the cpu's checkpoint vs cpu", &net, ck[1], ck[7], 1e-6);
        /* On the GPU the conv cache holds cuDNN's choices (test conv-pin), never the CPU's
         * strategies: a file of CPU strategies is refused, naming its first line. */
        char cache[320], cpu_cache[320];
        snprintf(cache, sizeof cache, "%s/conv.txt", dir);
        snprintf(cpu_cache, sizeof cpu_cache, "%s/conv-cpu.txt", dir);
        o.resume = NULL, o.checkpoint_dir = NULL, o.epochs = 1, o.conv_algo = DSE_ALGO_AUTO, o.conv_cache = cache;
        CHECK_OK(dse_train_run(&net, &o, rr, &err));
        CHECK(file_has(cache, "dse-cudnn-choices 1 cudnn "));
        struct dse_train_opts oc = o;
        oc.dev.device.kind = DSE_DEVICE_CPU, oc.conv_cache = cpu_cache;
        CHECK_OK(dse_train_run(&net, &oc, rr, &err));
        CHECK(file_has(cpu_cache, "# dse conv strategy choices"));
        o.conv_cache = cpu_cache;
        CHECK_INT_EQ(dse_train_run(&net, &o, rr, &err), DSE_ERR_IO);
        CHECK(!err.file[0] || !strcmp(err.file, cpu_cache));
        CHECK(err.line == 1 && strstr(err.msg, "not a cuDNN choice file") != NULL);
    }
    free(rc), free(rg), free(rr);
    dse_net_deinit(&net);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* ---- pinned cuDNN choices (issue #20 item 5) ------------------------------------------------ */

static int read_text(const char *path, char **out) {
    FILE *f = fopen(path, "rb");
    *out = NULL;
    if (!f) return -1;
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (!buf) return -1;
    buf[n] = '\0';
    *out = buf;
    return 0;
}

/* 1 if the file at path holds needle anywhere (binary files too). */
static int file_has(const char *path, const char *needle) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char *buf = malloc(1 << 20);
    const size_t n = buf ? fread(buf, 1, 1 << 20, f) : 0, k = strlen(needle);
    fclose(f);
    int found = 0;
    for (size_t i = 0; i + k <= n && !found; i++) found = !memcmp(buf + i, needle, k);
    free(buf);
    return found;
}

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    const size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n;
    return fclose(f) != 0 || bad ? -1 : 0;
}

/* What one pinned-choice run left: its state, its convs' choices, its counters. */
struct pin_run {
    enum dse_status             st;      /* of the load, a step, or the save */
    struct dse_err              err;
    struct dse_cuda_conv_load   ld;
    float                      *state;   /* parameters, momentum, statistics (malloc'd) */
    uint64_t                    n;
    struct dse_cuda_conv_choice choice[16];
    int                         n_conv;
    int64_t                     finds, loaded, shared;
    struct dse_pcg32            rng;     /* the dropout generator after the steps */
    float                       loss_scale;
};

/* A fresh model of net on cuda:0 in math, sharing pool's choices (may be NULL): pin loaded
 * first (load) or saved after (!load; none when NULL), 12 SGD steps over make_data's
 * batches (clipped, as dse train does). */
static void pin_run_pool(struct dse_net *net, enum dse_cuda_math math, const char *pin, int load,
                         struct dse_cuda_conv_pool *pool, struct pin_run *r) {
    const int B = 8, count = 96, classes = 4;
    struct dse_model_opts mo = { .batch = B, .threads = 2, .seed = 11, .init = DSE_INIT_MSRA };
    struct dse_model_device_opts dev = { .device = { .kind = DSE_DEVICE_CUDA, .index = 0 }, .math = math,
                                         .conv_pool = pool };
    struct dse_model *m = NULL;
    memset(r, 0, sizeof *r);
    if ((r->st = dse_model_new_on(net, &mo, &dev, &m, &r->err))) return;
    const int64_t img = (int64_t)net->in_c * net->in_h * net->in_w;
    float *x = malloc((size_t)(count * img) * sizeof *x);
    int *labels = malloc((size_t)count * sizeof *labels);
    make_data(count, net->in_c, net->in_h, net->in_w, classes, x, labels);
    if (load) r->st = dse_cuda_conv_cache_load(m->gpu, pin, &r->ld, &r->err);
    for (int b = 0; !r->st && b + B <= count; b += B) {
        float loss;
        double norm;
        int clipped;
        if ((r->st = dse_model_forward(m, x + b * img, labels + b, &loss, &r->err)) ||
            (r->st = dse_model_backward(m, &r->err)) || (r->st = dse_model_clip_grad(m, 0.5, &norm, &clipped, &r->err)))
            break;
        dse_model_sgd(m, 0.01f, 0.9f, 2e-4f);
    }
    if (!r->st) r->st = dse_model_sync(m, &r->err);
    if (!r->st && !load && pin) r->st = dse_cuda_conv_cache_save(m->gpu, pin, &r->err);
    for (int i = 0; !r->st && i < m->net.n_layers && r->n_conv < 16; i++)
        if (m->nodes[i].op == DSE_OP_CONV2D) r->st = dse_cuda_conv2d_choose(m->gpu, &m->nodes[i], &r->choice[r->n_conv++]);
    if (r->st && r->err.msg[0] == '\0') r->err = m->gpu->err;
    r->n = dse_model_state_count(m);
    r->state = malloc(r->n * sizeof *r->state);
    if (!r->st && r->state) r->st = dse_model_state_get(m, r->state, &r->err);
    r->finds = m->gpu->stats.conv_finds, r->loaded = m->gpu->stats.conv_loaded;
    r->shared = m->gpu->stats.conv_shared;
    r->rng = m->cx.rng, r->loss_scale = m->gpu->loss_scale;
    free(x), free(labels);
    dse_model_free(m);
}

static void pin_run(struct dse_net *net, enum dse_cuda_math math, const char *pin, int load, struct pin_run *r) {
    pin_run_pool(net, math, pin, load, NULL, r);
}

/* The same choice, the time find measured aside (a loaded one has none). */
static int same_choice(const struct dse_cuda_conv_choice *a, const struct dse_cuda_conv_choice *b) {
    int same = !memcmp(a->key, b->key, sizeof a->key);
    for (int d = 0; d < 3 && same; d++) {
        const struct dse_cuda_conv_engine *x = &a->engine[d], *y = &b->engine[d];
        same = a->algo[d] == b->algo[d] && a->ws[d] == b->ws[d] && a->math[d] == b->math[d] && x->id == y->id &&
               x->n_knobs == y->n_knobs;
        for (int k = 0; k < x->n_knobs && same; k++)
            same = x->knob_type[k] == y->knob_type[k] && x->knob_value[k] == y->knob_value[k];
    }
    return same;
}

/* The first graph-API engine of a choice file: the line (1-based) it is on, the direction
 * (0-2) and where its "engine" word starts; 0 if the file has none. */
static int first_engine(const char *text, int *dir, const char **at) {
    int line = 1;
    for (const char *p = text; *p; line++) {
        const char *end = strchr(p, '\n'), *e = strstr(p, "; engine ");
        if (line > 1 && *p != '#' && e && (!end || e < end)) {
            *dir = 0;
            for (const char *q = p; q < e; q++) *dir += *q == ';';
            *at = e + 2;
            return line;
        }
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

/* Pinned choices at the model level, fp32 and fp16: a model trains 12 steps (find
 * chooses) and saves its choices; a fresh model that loads the file runs no find, makes
 * the same choice for every conv and direction, and trains to the same bits (state,
 * dropout generator, loss scale). Then what a file from elsewhere does here: another
 * GPU's or cuDNN's is set aside (stale) and says why; an engine this cuDNN cannot build,
 * or one whose workspace differs from the file's, fails naming the file's line. */
static void test_conv_pin(void) {
    char dir[] = "/tmp/dse_cuda_pin_XXXXXX", pin[2][300], other[300];
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    struct dse_net net;
    fire_net(&net);
    struct pin_run *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    static const enum dse_cuda_math maths[2] = { DSE_CUDA_MATH_FP32, DSE_CUDA_MATH_FP16 };
    for (int k = 0; k < 2; k++) {
        snprintf(pin[k], sizeof pin[k], "%s/cudnn-%s-det.txt", dir, dse_cuda_math_str(maths[k]));
        pin_run(&net, maths[k], pin[k], 0, a);
        CHECK_OK(a->st);
        if (a->st) fprintf(stderr, "  %s: %s\n", dse_cuda_math_str(maths[k]), a->err.msg);
        pin_run(&net, maths[k], pin[k], 1, b);
        CHECK_OK(b->st);
        if (b->st) fprintf(stderr, "  %s, pinned: %s\n", dse_cuda_math_str(maths[k]), b->err.msg);
        printf("  %s: %lld (shape, direction) pairs found, then %d shapes (%lld pairs) loaded and %lld found\n",
               dse_cuda_math_str(maths[k]), (long long)a->finds, b->ld.loaded, (long long)b->loaded,
               (long long)b->finds);
        CHECK(a->finds > 0);
        CHECK(b->ld.found && !b->ld.stale && b->ld.loaded > 0);
        CHECK_INT_EQ(b->loaded, a->finds);
        CHECK_INT_EQ(b->finds, 0); /* no find ran */
        CHECK(a->n_conv > 0 && a->n_conv == b->n_conv);
        for (int c = 0; c < a->n_conv && c < b->n_conv; c++) CHECK(same_choice(&a->choice[c], &b->choice[c]));
        CHECK(a->state && b->state && a->n == b->n && !memcmp(a->state, b->state, a->n * sizeof *a->state));
        CHECK(a->rng.state == b->rng.state);
        CHECK(a->loss_scale == b->loss_scale);
        free(a->state), free(b->state);
    }
    char *text = NULL, *edit = NULL;
    CHECK(read_text(pin[0], &text) == 0);
    const size_t len = text ? strlen(text) : 0;
    if (text) edit = malloc(len + 64);
    if (text && edit) {
        if (verbose) printf("%s", text);
        /* another cuDNN: set aside, nothing loaded, said once with both versions */
        const char *v = strstr(text, " cudnn ");
        CHECK(v != NULL);
        if (v) {
            const char *rest = strstr(v, " cc ");
            snprintf(edit, len + 64, "%.*s cudnn 1%s", (int)(v - text), text, rest ? rest : "");
            snprintf(other, sizeof other, "%s/other.txt", dir);
            CHECK(write_text(other, edit) == 0);
            pin_run(&net, DSE_CUDA_MATH_FP32, other, 1, b);
            CHECK_OK(b->st);
            CHECK(b->ld.found && b->ld.stale && b->ld.loaded == 0 && b->loaded == 0 && b->finds > 0);
            CHECK(strstr(b->ld.why, "was written with cuDNN 0.0.1 on ") != NULL);
            CHECK(strstr(b->ld.why, "its choices are set aside and found again") != NULL);
            if (verbose) printf("  %s\n", b->ld.why);
            free(b->state);
        }
        /* an engine this cuDNN does not have; a workspace the plan does not need */
        int d = 0;
        const char *at = NULL;
        const int line = first_engine(text, &d, &at);
        static const char *const dn[3] = { "forward", "backward data", "backward filter" };
        long long id = -1, ws = -1;
        if (line && sscanf(at, "engine %lld ws %lld", &id, &ws) == 2) {
            char want[500];
            const char *after = strstr(at, " knobs");
            snprintf(edit, len + 64, "%.*sengine 99999 ws %lld%s", (int)(at - text), text, ws, after);
            CHECK(write_text(other, edit) == 0);
            pin_run(&net, DSE_CUDA_MATH_FP32, other, 1, b);
            CHECK_INT_EQ(b->st, DSE_ERR_CUDA);
            snprintf(want, sizeof want, "%s:%d: %s engine 99999 does not fit this run (delete the file to choose "
                     "again): cuDNN does not build its engine: CUDNN_STATUS_", other, line, dn[d]);
            CHECK(strstr(b->err.msg, want) != NULL);
            if (verbose || !strstr(b->err.msg, want)) printf("  %s\n", b->err.msg);
            free(b->state);
            snprintf(edit, len + 64, "%.*sengine %lld ws %lld%s", (int)(at - text), text, id, ws + 256, after);
            CHECK(write_text(other, edit) == 0);
            pin_run(&net, DSE_CUDA_MATH_FP32, other, 1, b);
            CHECK_INT_EQ(b->st, DSE_ERR_CUDA);
            snprintf(want, sizeof want, "%s:%d: %s engine %lld does not fit this run (delete the file to choose "
                     "again): its plan needs %lld bytes of workspace here; the file says %lld", other, line, dn[d], id,
                     ws, ws + 256);
            CHECK(strstr(b->err.msg, want) != NULL);
            if (verbose || !strstr(b->err.msg, want)) printf("  %s\n", b->err.msg);
            free(b->state);
        } else {
            printf("  (every choice of the fp32 file is a legacy algorithm: the engine cases are not run)\n");
        }
    }
    free(text), free(edit);
    free(a), free(b);
    dse_net_deinit(&net);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* A pool_run thread: pin_run_pool on a shared pool. */
struct pool_model {
    struct dse_net            *net;
    struct dse_cuda_conv_pool *pool;
    struct pin_run             r;
};

static void *pool_model_main(void *arg) {
    struct pool_model *t = arg;
    pin_run_pool(t->net, DSE_CUDA_MATH_FP32, NULL, 0, t->pool, &t->r);
    return NULL;
}

/* Models sharing a conv pool (cuda.h, "shared choices"; issue #20 item 4): one after the
 * other, the second finds nothing, takes every choice the first found and trains to the
 * same bits; four at once on their own threads and streams (a GPU's packed sweep workers)
 * find each (shape, direction) once between them and all train to the same bits. Pinning
 * what was taken: train-pinned. */
static void test_conv_pool_models(void) {
    struct dse_net net;
    fire_net(&net);
    struct pin_run *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    static const enum dse_cuda_math maths[2] = { DSE_CUDA_MATH_FP32, DSE_CUDA_MATH_FP16 };
    int64_t finds_fp32 = 0;
    for (int k = 0; k < 2 && a && b; k++) {
        struct dse_cuda_conv_pool *pool = NULL;
        CHECK_OK(dse_cuda_conv_pool_new(&pool, NULL));
        pin_run_pool(&net, maths[k], NULL, 0, pool, a);
        pin_run_pool(&net, maths[k], NULL, 0, pool, b);
        CHECK_OK(a->st);
        CHECK_OK(b->st);
        if (a->st || b->st) fprintf(stderr, "  %s: %s%s\n", dse_cuda_math_str(maths[k]), a->err.msg, b->err.msg);
        printf("  %s: the first model found %lld (shape, direction) pairs; the second found %lld, took %lld\n",
               dse_cuda_math_str(maths[k]), (long long)a->finds, (long long)b->finds, (long long)b->shared);
        CHECK(a->finds > 0);
        CHECK_INT_EQ(a->shared, 0);
        CHECK_INT_EQ(b->finds, 0);
        CHECK_INT_EQ(b->shared, a->finds);
        CHECK(a->n_conv > 0 && a->n_conv == b->n_conv);
        for (int c = 0; c < a->n_conv && c < b->n_conv; c++) CHECK(same_choice(&a->choice[c], &b->choice[c]));
        CHECK(a->state && b->state && a->n == b->n && !memcmp(a->state, b->state, a->n * sizeof *a->state));
        if (k == 0) finds_fp32 = a->finds;
        free(a->state), free(b->state);
        dse_cuda_conv_pool_free(pool);
    }
    enum { MODELS = 4 };
    struct dse_cuda_conv_pool *pool = NULL;
    CHECK_OK(dse_cuda_conv_pool_new(&pool, NULL));
    struct pool_model *t = calloc(MODELS, sizeof *t);
    pthread_t th[MODELS];
    int64_t finds = 0, shared = 0;
    for (int i = 0; t && i < MODELS; i++) {
        t[i] = (struct pool_model){ .net = &net, .pool = pool };
        CHECK_INT_EQ(pthread_create(&th[i], NULL, pool_model_main, &t[i]), 0);
    }
    for (int i = 0; t && i < MODELS; i++) {
        pthread_join(th[i], NULL);
        CHECK_OK(t[i].r.st);
        if (t[i].r.st) fprintf(stderr, "  model %d: %s\n", i, t[i].r.err.msg);
        finds += t[i].r.finds, shared += t[i].r.shared;
    }
    printf("  %d models at once: %lld pairs found, %lld taken from the pool\n", MODELS, (long long)finds,
           (long long)shared);
    CHECK_INT_EQ(finds, finds_fp32);
    CHECK_INT_EQ(shared, (MODELS - 1) * finds_fp32);
    for (int i = 1; t && i < MODELS; i++)
        CHECK(t[0].r.state && t[i].r.state && t[0].r.n == t[i].r.n &&
              !memcmp(t[0].r.state, t[i].r.state, t[0].r.n * sizeof *t[0].r.state));
    for (int i = 0; t && i < MODELS; i++) free(t[i].r.state);
    free(t);
    dse_cuda_conv_pool_free(pool);
    free(a), free(b);
    dse_net_deinit(&net);
}

/* FP16's dynamic loss scale travels in checkpoints ("loss_scale S G" in the text block): a
 * resumed FP16 run goes on with the scale and count the interrupted one had. A checkpoint
 * without the line (fp32's, an older dse's) leaves an FP16 model's scale as it is; a CPU
 * model reads an FP16 model's checkpoint. */
static void test_ckpt_loss_scale(void) {
    char dir[] = "/tmp/dse_cuda_ls_XXXXXX", p16[300], p32[300];
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    snprintf(p16, sizeof p16, "%s/fp16.ckpt", dir);
    snprintf(p32, sizeof p32, "%s/fp32.ckpt", dir);
    struct dse_net net;
    fire_net(&net);
    struct dse_model_opts mo = { .batch = 4, .threads = 1, .seed = 5, .init = DSE_INIT_MSRA };
    struct dse_model_device_opts d16 = { .device = { .kind = DSE_DEVICE_CUDA, .index = 0 },
                                         .math = DSE_CUDA_MATH_FP16 };
    struct dse_model_device_opts d32 = { .device = { .kind = DSE_DEVICE_CUDA, .index = 0 },
                                         .math = DSE_CUDA_MATH_FP32 };
    struct dse_model *a = NULL, *b = NULL, *c = NULL, *cpu = NULL;
    struct dse_err err = { 0 };
    int next = 0;
    int64_t iter = 0;
    CHECK_OK(dse_model_new_on(&net, &mo, &d16, &a, &err));
    CHECK_OK(dse_model_new_on(&net, &mo, &d16, &b, &err));
    CHECK_OK(dse_model_new_on(&net, &mo, &d32, &c, &err));
    CHECK_OK(dse_model_new_on(&net, &mo, NULL, &cpu, &err));
    if (a && b && c && cpu) {
        a->gpu->loss_scale = 1024.0f, a->gpu->mp_good_steps = 77;
        CHECK_OK(dse_checkpoint_save(a, 1, 10, NULL, p16, &err));
        CHECK_OK(dse_checkpoint_save(c, 1, 10, NULL, p32, &err));
        CHECK(file_has(p16, "\nloss_scale 1024 77\n")); /* a line of the text block */
        CHECK(!file_has(p32, "loss_scale"));
        CHECK_NEAR(b->gpu->loss_scale, DSE_LOSS_SCALE_INIT, 0.0);
        CHECK_OK(dse_checkpoint_load(b, p16, &next, &iter, &err));
        CHECK_NEAR(b->gpu->loss_scale, 1024.0f, 0.0);
        CHECK_INT_EQ(b->gpu->mp_good_steps, 77);
        CHECK_OK(dse_checkpoint_load(b, p32, &next, &iter, &err)); /* no line: as it was */
        CHECK_NEAR(b->gpu->loss_scale, 1024.0f, 0.0);
        CHECK_OK(dse_checkpoint_load(cpu, p16, &next, &iter, &err));
        CHECK_OK(dse_checkpoint_load(c, p16, &next, &iter, &err)); /* fp32 has no scale: ignored */
        CHECK_NEAR(c->gpu->loss_scale, DSE_LOSS_SCALE_INIT, 0.0);
    }
    dse_model_free(a), dse_model_free(b), dse_model_free(c), dse_model_free(cpu);
    dse_net_deinit(&net);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void count_note(void *arg, enum dse_train_note kind, const char *text) {
    (void)text;
    int *n = arg; /* [0] found and pinned, [1] loaded, [2] other */
    n[kind == DSE_NOTE_CHOICES_PINNED ? 0 : kind == DSE_NOTE_CHOICES_LOADED ? 1 : 2]++;
}

/* dse_train_opts.note's words, counted as count_note does, and the last one. */
struct note_log {
    int  count[3];
    char last[800];
};

static void log_note(void *arg, enum dse_train_note kind, const char *text) {
    struct note_log *l = arg;
    count_note(l->count, kind, text);
    snprintf(l->last, sizeof l->last, "%s", text);
}

/* 1 if both files exist and hold the same bytes. */
static int same_file(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int ca = 0, cb = 0;
    while (fa && fb && (ca = getc(fa)) == (cb = getc(fb)) && ca != EOF) {}
    const int same = fa && fb && ca == EOF && cb == EOF;
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* dse_train_run with conv_cache on cuda:0, fp32 and fp16: the first run finds and pins
 * (before its first epoch is reported), a second uninterrupted run loads the file and writes the
 * same checkpoints byte for byte, and a run resumed from the first's epoch-1 checkpoint
 * (the state a worker killed after epoch 1 leaves) ends with the same epoch-2 checkpoint. */
static void test_train_pinned(void) {
    char dir[] = "/tmp/dse_cuda_pinrun_XXXXXX", data[300], d[3][300], pin[300], a[400], b[400];
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    snprintf(data, sizeof data, "%s/data", dir);
    CHECK(mkdir(data, 0777) == 0);
    CHECK(write_idx(data, "train", 320, 1) == 0);
    CHECK(write_idx(data, "t10k", 96, 2) == 0);
    struct dse_mp mp = dse_mp_squeezenet_v10();
    mp.input_c = 1, mp.input_h = mp.input_w = 12, mp.classes = 10;
    mp.conv1_filters = 6, mp.conv1_kernel = 3, mp.conv1_stride = 1, mp.conv1_pad = 1;
    mp.base_e = 8, mp.incr_e = 0, mp.freq = 2, mp.sr = 0.25, mp.pct3x3 = 0.5;
    mp.fires = 2, mp.pools = DSE_MP_POOL_CONV1, mp.dropout = 0.5;
    struct dse_net net;
    dse_net_init(&net, "fire10", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, &net, NULL));
    struct dse_train_result *r = malloc(sizeof *r);
    static const enum dse_cuda_math maths[2] = { DSE_CUDA_MATH_FP32, DSE_CUDA_MATH_FP16 };
    for (int k = 0; k < 2; k++) {
        const char *ms = dse_cuda_math_str(maths[k]);
        for (int i = 0; i < 3; i++) snprintf(d[i], sizeof d[i], "%s/%s-run%d", dir, ms, i);
        snprintf(pin, sizeof pin, "%s/cudnn-%s-det.txt", dir, ms);
        struct dse_train_opts o;
        struct dse_err err = { 0 };
        int notes[3] = { 0, 0, 0 };
        dse_train_opts_default(&o);
        o.data = data, o.epochs = 2, o.batch = 32, o.threads = 2, o.seed = 5;
        o.dev.device.kind = DSE_DEVICE_CUDA, o.dev.device.index = 0, o.dev.math = maths[k];
        o.conv_cache = pin, o.note = count_note, o.progress_arg = notes;
        o.checkpoint_dir = d[0];
        enum dse_status st = dse_train_run(&net, &o, r, &err);
        CHECK_OK(st);
        if (st) fprintf(stderr, "  %s: %s\n", ms, err.msg);
        CHECK(notes[0] == 1 && notes[1] == 0); /* found, pinned once (before epoch 1's checkpoint) */
        o.checkpoint_dir = d[1];
        st = dse_train_run(&net, &o, r, &err);
        CHECK_OK(st);
        CHECK(notes[0] == 1 && notes[1] == 1); /* loaded, nothing found */
        o.checkpoint_dir = d[2];
        snprintf(a, sizeof a, "%s/epoch-1.ckpt", d[0]);
        o.resume = a;
        st = dse_train_run(&net, &o, r, &err);
        CHECK_OK(st);
        CHECK(notes[0] == 1 && notes[1] == 2 && notes[2] == 0);
        for (int i = 1; i < 3; i++) {
            snprintf(a, sizeof a, "%s/epoch-2.ckpt", d[0]);
            snprintf(b, sizeof b, "%s/epoch-2.ckpt", d[i]);
            CHECK(same_file(a, b));
        }
        snprintf(a, sizeof a, "%s/epoch-1.ckpt", d[0]);
        snprintf(b, sizeof b, "%s/epoch-1.ckpt", d[1]);
        CHECK(same_file(a, b));
        /* Choices taken from another model of the process (a conv pool, as a GPU sweep's
         * workers share) are pinned like found ones: a run that finds nothing still writes
         * them all (the same file as the finder's), and a resume from it repeats it. */
        struct dse_cuda_conv_pool *pool = NULL;
        char pins[2][300], e[3][300];
        struct note_log nl = { .count = { 0, 0, 0 } };
        CHECK_OK(dse_cuda_conv_pool_new(&pool, NULL));
        for (int i = 0; i < 2; i++) snprintf(pins[i], sizeof pins[i], "%s/pool%d-%s.txt", dir, i, ms);
        for (int i = 0; i < 3; i++) snprintf(e[i], sizeof e[i], "%s/%s-pool%d", dir, ms, i);
        o.note = log_note, o.progress_arg = &nl, o.resume = NULL, o.dev.conv_pool = pool;
        for (int i = 0; i < 2; i++) {
            o.conv_cache = pins[i], o.checkpoint_dir = e[i];
            CHECK_OK(st = dse_train_run(&net, &o, r, &err));
            if (st) fprintf(stderr, "  %s, pool run %d: %s\n", ms, i, err.msg);
            CHECK_INT_EQ(nl.count[0], i + 1); /* pinned once */
            if (verbose) printf("  %s\n", nl.last);
        }
        CHECK(strncmp(nl.last, "cuDNN conv choices: 0 found (", 29) == 0 &&
              strstr(nl.last, " more taken from another model of this process) and pinned in "));
        CHECK(same_file(pins[0], pins[1]));
        snprintf(a, sizeof a, "%s/epoch-1.ckpt", e[1]);
        o.dev.conv_pool = NULL, o.conv_cache = pins[1], o.checkpoint_dir = e[2], o.resume = a;
        CHECK_OK(st = dse_train_run(&net, &o, r, &err));
        CHECK(nl.count[0] == 2 && nl.count[1] == 1); /* loaded, nothing found */
        snprintf(a, sizeof a, "%s/epoch-2.ckpt", e[1]);
        snprintf(b, sizeof b, "%s/epoch-2.ckpt", e[2]);
        CHECK(same_file(a, b));
        dse_cuda_conv_pool_free(pool);
    }
    free(r);
    dse_net_deinit(&net);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* ---- main -------------------------------------------------------------------------------- */

struct cuda_case {
    const char *id;
    void (*fn)(void);
    int         device; /* 1: needs a CUDA device */
};

static const struct cuda_case cases[] = {
    { "host-pcg-advance",  test_pcg_advance,     0 },
    { "host-divmod",       test_divmod,          0 },
    { "host-device-names", test_device_names,    0 },
    { "host-versions",     test_versions,        0 },
    { "host-loss-scale",   test_loss_scale_rule, 0 },
    { "host-no-device",    test_no_device,       0 },
    { "host-model-state",  test_model_state_cpu, 0 },
    { "host-conv-file",    test_conv_file,       0 },
    { "host-conv-pool",    test_conv_pool,       0 },
    { "ctx",               test_ctx,             1 },
    { "conv-cache",        test_conv_cache,      1 },
    { "op-conv",           test_conv,            1 },
    { "op-conv-squeezenet", test_conv_squeezenet, 1 },
    { "op-conv-relu",      test_conv_relu,       1 },
    { "op-conv-tf32",      test_conv_tf32,       1 },
    { "op-conv-legacy",    test_conv_legacy,     1 },
    { "op-conv-fp16",      test_conv_fp16,       1 },
    { "op-conv-bf16",      test_conv_bf16,       1 },
    { "mp-loss-scale",     test_loss_scale,      1 },
    { "op-no-tf32",        test_no_tf32,         1 },
    { "op-maxpool",        test_maxpool,         1 },
    { "op-maxpool-ties",   test_maxpool_ties,    1 },
    { "op-avgpool",        test_avgpool,         1 },
    { "op-pool-large",     test_pool_large,      1 },
    { "op-relu",           test_relu,            1 },
    { "op-dropout",        test_dropout,         1 },
    { "op-dropout-large",  test_dropout_large,   1 },
    { "op-concat",         test_concat,          1 },
    { "op-eltwise",        test_eltwise,         1 },
    { "op-fc",             test_fc,              1 },
    { "op-softmax",        test_softmax,         1 },
    { "op-batchnorm",      test_batchnorm,       1 },
    { "op-scale",          test_scale,           1 },
    { "train-fire",        test_train_fire,      1 },
    { "train-step",        test_train_step,      1 },
    { "train-mixed",       test_train_mixed,     1 },
    { "train-bn",          test_train_bn,        1 },
    { "inference",         test_inference,       1 },
    { "train-run",         test_train_run,       1 },
    { "conv-pin",          test_conv_pin,        1 },
    { "conv-pool",         test_conv_pool_models, 1 },
    { "ckpt-loss-scale",   test_ckpt_loss_scale, 1 },
    { "train-pinned",      test_train_pinned,    1 },
};

static int wanted(const char *id, int argc, char **argv) {
    if (argc <= 1) return 1;
    for (int a = 1; a < argc; a++)
        if (strncmp(id, argv[a], strlen(argv[a])) == 0) return 1;
    return 0;
}

int main(int argc, char **argv) {
    verbose = getenv("DSE_TEST_VERBOSE") != NULL;
    char why[256] = "";
    const int devices = dse_cuda_device_count(why, sizeof why);
    int want_device = 0, skipped = 0, n = 0;
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++)
        want_device |= cases[i].device && wanted(cases[i].id, argc, argv);
    struct pair pair;
    memset(&pair, 0, sizeof pair);
    if (want_device && devices > 0) {
        pair_init(&pair);
        P = &pair;
    }
    struct check_case run[DSE_ARRAY_LEN(cases)];
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        if (cases[i].device && !pair.ok) {
            skipped += wanted(cases[i].id, argc, argv);
            continue;
        }
        run[n].id = cases[i].id, run[n].fn = cases[i].fn;
        n++;
    }
    const int rc = check_main(run, n, argc, argv);
    if (want_device && devices > 0) pair_deinit(&pair);
    if (check_failures) return 1;
    if (skipped) {
        printf("skipped: no CUDA device (%s): %d device cases not run\n", why, skipped);
        return 77;
    }
    return rc;
}
