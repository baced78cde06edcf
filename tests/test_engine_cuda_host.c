/* test_engine_cuda_host.c: test_engine_cuda's host-only cases, which run with or without a
 * device: PCG32 jump-ahead, the kernels' divisions, device names and library versions, the
 * loss-scale rule, the no-device path, a model's checkpoint view on the CPU, the cuDNN choice
 * file's text and the pool that shares choices between a process's models. */
#include "tests/engine_cuda_util.h"

/* ---- host-only cases ------------------------------------------------------------------ */

/* The kernels' jump-ahead gives the draws dse_pcg32_next gives, from any offset. */
void test_pcg_advance(void) {
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
void test_divmod(void) {
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

void test_device_names(void) {
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
void test_loss_scale_rule(void) {
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

void test_versions(void) {
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
void test_conv_file(void) {
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
void test_conv_pool(void) {
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

/* No device (or no CUDA): a ctx or a device model cannot be made, and says why. */
void test_no_device(void) {
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
void test_model_state_cpu(void) {
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
