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
 * every comparison's error.
 *
 * The cases live in files by subject, all of them one program with this one table:
 * test_engine_cuda_host.c (the host-only cases), test_engine_cuda_ops.c (one node on both
 * backends), test_engine_cuda_train.c (whole models, the training loop, pinned choices); what
 * they share is in engine_cuda_util.c. */
#include "tests/engine_cuda_util.h"

struct cuda_case {
    const char *id;
    void (*fn)(void);
    int         device; /* 1: needs a CUDA device */
};

/* Every case once, in the order a run takes them: its id, its function and 1 if it needs a
 * CUDA device. */
#define CUDA_CASES(X) \
    X("host-pcg-advance",   test_pcg_advance,       0) \
    X("host-divmod",        test_divmod,            0) \
    X("host-device-names",  test_device_names,      0) \
    X("host-versions",      test_versions,          0) \
    X("host-loss-scale",    test_loss_scale_rule,   0) \
    X("host-no-device",     test_no_device,         0) \
    X("host-model-state",   test_model_state_cpu,   0) \
    X("host-conv-file",     test_conv_file,         0) \
    X("host-conv-pool",     test_conv_pool,         0) \
    X("ctx",                test_ctx,               1) \
    X("conv-cache",         test_conv_cache,        1) \
    X("op-conv",            test_conv,              1) \
    X("op-conv-squeezenet", test_conv_squeezenet,   1) \
    X("op-conv-relu",       test_conv_relu,         1) \
    X("op-conv-tf32",       test_conv_tf32,         1) \
    X("op-conv-legacy",     test_conv_legacy,       1) \
    X("op-conv-fp16",       test_conv_fp16,         1) \
    X("op-conv-bf16",       test_conv_bf16,         1) \
    X("mp-loss-scale",      test_loss_scale,        1) \
    X("op-no-tf32",         test_no_tf32,           1) \
    X("op-maxpool",         test_maxpool,           1) \
    X("op-maxpool-ties",    test_maxpool_ties,      1) \
    X("op-avgpool",         test_avgpool,           1) \
    X("op-pool-large",      test_pool_large,        1) \
    X("op-relu",            test_relu,              1) \
    X("op-dropout",         test_dropout,           1) \
    X("op-dropout-large",   test_dropout_large,     1) \
    X("op-concat",          test_concat,            1) \
    X("op-eltwise",         test_eltwise,           1) \
    X("op-fc",              test_fc,                1) \
    X("op-softmax",         test_softmax,           1) \
    X("op-batchnorm",       test_batchnorm,         1) \
    X("op-scale",           test_scale,             1) \
    X("op-lrn",             test_lrn,               1) \
    X("op-slice-views",     test_slice_views,       1) \
    X("train-fire",         test_train_fire,        1) \
    X("train-step",         test_train_step,        1) \
    X("train-mixed",        test_train_mixed,       1) \
    X("train-bn",           test_train_bn,          1) \
    X("inference",          test_inference,         1) \
    X("train-run",          test_train_run,         1) \
    X("conv-pin",           test_conv_pin,          1) \
    X("conv-pool",          test_conv_pool_models,  1) \
    X("ckpt-loss-scale",    test_ckpt_loss_scale,   1) \
    X("train-pinned",       test_train_pinned,      1)

#define CUDA_CASE_DECLARE(i, f, d) void f(void);
CUDA_CASES(CUDA_CASE_DECLARE)

static const struct cuda_case cases[] = {
#define CUDA_CASE_ROW(i, f, d) { .id = i, .fn = f, .device = d },
    CUDA_CASES(CUDA_CASE_ROW)
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
