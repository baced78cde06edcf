/* test_engine_cpu.c: the engine's CPU backend (issue #4): tensors and views, node shape
 * checks, Caffe's pooling windows, finite-difference gradient checks for every op (and
 * every conv strategy), agreement between conv strategies (Winograd on odd maps and
 * views), the strategy cache (AUTO never picks Winograd where it cannot run),
 * bit-identical reruns, and a Fire module whose expand convs write straight into the
 * concat buffer. Usage: test_engine_cpu [case-id-prefix...] (tests/check.h). */
#include "tests/engine_cpu_util.h"

/* ---- tensors ------------------------------------------------------------------------- */

void test_tensor(void) {
    struct dse_tensor t, v;
    struct dse_err err = { 0 };
    CHECK_OK(dse_tensor_init(&t, 2, 5, 3, 4, DSE_TENSOR_GRAD, NULL));
    CHECK_INT_EQ(t.stride_n, 60);
    CHECK_INT_EQ(dse_tensor_count(&t), 120);
    CHECK(dse_tensor_contiguous(&t));
    CHECK(t.data[119] == 0.0f && t.grad[119] == 0.0f); /* zeroed */
    CHECK(((uintptr_t)t.data & 63) == 0);
    /* A view of channels 2..3: same image stride, data and grad inside the parent's. */
    dse_tensor_view_channels(&v, &t, 2, 2);
    CHECK_INT_EQ(v.c, 2);
    CHECK_INT_EQ(v.stride_n, 60);
    CHECK(v.data == t.data + 24 && v.grad == t.grad + 24);
    CHECK(!dse_tensor_contiguous(&v));
    CHECK_INT_EQ(v.owns, 0);
    /* fill and zero_grad on the view touch only its slice. */
    dse_tensor_fill(&t, 1.0f);
    for (int64_t j = 0; j < 120; j++) t.grad[j] = 1.0f;
    dse_tensor_fill(&v, 7.0f);
    dse_tensor_zero_grad(&v);
    int inside = 0, outside = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 60; j++) {
            int in_view = j >= 24 && j < 48;
            if (in_view) inside += t.data[i * 60 + j] == 7.0f && t.grad[i * 60 + j] == 0.0f;
            else outside += t.data[i * 60 + j] == 1.0f && t.grad[i * 60 + j] == 1.0f;
        }
    CHECK_INT_EQ(inside, 48);
    CHECK_INT_EQ(outside, 72);
    dse_tensor_deinit(&v); /* owns nothing: frees nothing */
    dse_tensor_deinit(&t);
    dse_tensor_deinit(&t); /* twice is safe */

    struct dse_tensor *h = NULL;
    CHECK_INT_EQ(dse_tensor_new(1, 0, 1, 1, 0, &h, &err), DSE_ERR_SHAPE);
    CHECK(h == NULL);
    CHECK_STR_EQ(err.msg, "tensor 1x0x1x1: every dimension must be >= 1");
    CHECK_OK(dse_tensor_new(1, 2, 3, 3, 0, &h, &err));
    CHECK(h && !h->grad);
    CHECK_OK(dse_tensor_alloc_grad(h, &err));
    CHECK(h->grad && h->grad[17] == 0.0f);
    dse_tensor_free(h);
    dse_tensor_free(NULL);
}

/* ---- node checks ----------------------------------------------------------------------- */

void test_node_check(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_err err = { 0 };
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "fire2/expand3x3");
    l.num_output = 4, l.kernel_h = l.kernel_w = 3, l.pad_h = l.pad_w = 1;
    l = infer_layer(l, 1, 2, 5, 5);
    struct fx f;
    fx_init(&f, &cx, &l, 1, 1, NULL, 0, 1);
    CHECK_OK(dse_node_check(&f.node, &err));
    f.w.w = 1; /* 4x2x3x1 */
    CHECK_INT_EQ(dse_node_check(&f.node, &err), DSE_ERR_SHAPE);
    CHECK_STR_EQ(err.msg, "layer 'fire2/expand3x3' (conv2d): weight is 4x2x3x1; expected 4x2x3x3");
    f.w.w = 3;
    f.node.out = &f.in[0]; /* a conv cannot run in place */
    CHECK_INT_EQ(dse_node_check(&f.node, &err), DSE_ERR_SHAPE);
    CHECK_STR_EQ(err.msg, "layer 'fire2/expand3x3' (conv2d): cannot run in place");
    f.node.out = &f.out;
    f.node.bias = NULL;
    CHECK_INT_EQ(dse_node_check(&f.node, &err), DSE_ERR_SHAPE);
    CHECK_STR_EQ(err.msg, "layer 'fire2/expand3x3' (conv2d): bias is missing; expected 1x4x1x1");
    f.node.bias = &f.b;
    fx_deinit(&f);

    /* An lrn whose scale could reach 0 (k 0) is refused before it divides by it. */
    struct dse_layer nk = dse_layer_make(DSE_LAYER_LRN, "norm1");
    nk.lrn_k = 0.0f;
    nk = infer_layer(nk, 1, 4, 2, 2);
    fx_init(&f, &cx, &nk, 1, 1, NULL, FX_NO_PREP, 1);
    CHECK_INT_EQ(dse_node_check(&f.node, &err), DSE_ERR_SHAPE);
    CHECK_STR_EQ(err.msg, "layer 'norm1' (lrn): k 0, alpha 1, beta 0.75; expected k > 0, alpha >= 0, all finite");
    fx_deinit(&f);

    /* Layers the engine cannot run say so. */
    enum dse_op op;
    struct dse_layer gate = dse_layer_make(DSE_LAYER_SIGMOID, "gate");
    gate.line = 12;
    CHECK_INT_EQ(dse_op_from_layer(&gate, &op, &err), DSE_ERR_UNSUPPORTED);
    CHECK_STR_EQ(err.msg, "layer 'gate' (sigmoid): the engine has no op for this layer type");
    CHECK_INT_EQ(err.line, 12);
    /* the model-zoo types the analyzer costs but the engine has no op for (issue #14; lrn,
     * flatten, reshape and slice have theirs since issue #34) */
    static const enum dse_layer_type zoo[] = { DSE_LAYER_SIGMOID, DSE_LAYER_TANH, DSE_LAYER_POWER };
    for (int k = 0; k < DSE_ARRAY_LEN(zoo); k++) {
        char want[128];
        struct dse_layer z = dse_layer_make(zoo[k], "zoo");
        snprintf(want, sizeof want, "layer 'zoo' (%s): the engine has no op for this layer type",
                 dse_layer_type_str(zoo[k]));
        CHECK_INT_EQ(dse_op_from_layer(&z, &op, &err), DSE_ERR_UNSUPPORTED);
        CHECK_STR_EQ(err.msg, want);
    }
    struct dse_layer prod = dse_layer_make(DSE_LAYER_ELTWISE, "mul");
    prod.eltwise_op = DSE_ELTWISE_PROD;
    CHECK_INT_EQ(dse_op_from_layer(&prod, &op, &err), DSE_ERR_UNSUPPORTED);
    struct dse_layer sum = dse_layer_make(DSE_LAYER_ELTWISE, "add");
    CHECK_OK(dse_op_from_layer(&sum, &op, &err));
    CHECK_INT_EQ(op, DSE_OP_ELTWISE_ADD);
    CHECK_STR_EQ(dse_op_str(DSE_OP_SOFTMAX_XENT), "softmax_xent");
    CHECK_STR_EQ(dse_op_str(DSE_OP_COUNT), "?");

    /* Softmax loss wants class scores, not a map. */
    struct dse_layer sl = infer_layer(dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss"), 1, 10, 2, 2);
    fx_init(&f, &cx, &sl, 2, 1, NULL, FX_NO_PREP, 1);
    CHECK_INT_EQ(dse_node_check(&f.node, &err), DSE_ERR_SHAPE);
    CHECK_STR_EQ(err.msg, "layer 'loss' (softmax_xent): input is 10x2x2; expected 10x1x1 class scores "
                          "(put a global pool or fc before the loss)");
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

/* Every case once, in the order a run takes them: its id and its function. */
#define CPU_CASES(X) \
    X("tensor",              test_tensor) \
    X("node-check",          test_node_check) \
    X("grad-conv-batch",     test_grad_conv_batch) \
    X("grad-conv-image",     test_grad_conv_image) \
    X("grad-conv-winograd",  test_grad_conv_wino) \
    X("grad-conv-direct",    test_grad_conv_direct) \
    X("conv-direct-exact",   test_conv_direct_exact) \
    X("bf16-convert",        test_bf16_convert) \
    X("bf16-mm",             test_bf16_mm) \
    X("bf16-mm-nt",          test_bf16_mm_nt) \
    X("bf16-s2",             test_bf16_s2) \
    X("bf16-pack-dy",        test_bf16_pack_dy) \
    X("bf16-amx",            test_bf16_amx) \
    X("bf16-ops",            test_bf16_ops) \
    X("bf16-rule",           test_bf16_rule) \
    X("bf16-threads",        test_bf16_threads) \
    X("bf16-acts",           test_bf16_acts) \
    X("bf16-dw-bytes",       test_bf16_dw_bytes) \
    X("grad-bf16",           test_grad_bf16) \
    X("conv-agree",          test_conv_agree) \
    X("conv-wino-agree",     test_conv_wino_agree) \
    X("simd-exact",          test_simd_exact) \
    X("sum4-exact",          test_sum4_exact) \
    X("layout-moves",        test_layout_moves) \
    X("conv-threads",        test_conv_threads) \
    X("conv-threads-blas",   test_conv_threads_blas) \
    X("blas-choice",         test_blas_choice) \
    X("elementwise-threads", test_elementwise_threads) \
    X("conv-wino-choose",    test_conv_wino_choose) \
    X("conv-choose",         test_conv_choose) \
    X("grad-pool",           test_grad_pool) \
    X("pool-values",         test_pool_values) \
    X("pool-ties",           test_pool_ties) \
    X("grad-relu",           test_grad_relu) \
    X("grad-dropout",        test_grad_dropout) \
    X("dropout-values",      test_dropout_values) \
    X("grad-concat",         test_grad_concat) \
    X("grad-eltwise",        test_grad_eltwise) \
    X("grad-fc",             test_grad_fc) \
    X("grad-softmax",        test_grad_softmax) \
    X("softmax-values",      test_softmax_values) \
    X("grad-batchnorm",      test_grad_batchnorm) \
    X("batchnorm-values",    test_batchnorm_values) \
    X("grad-scale",          test_grad_scale) \
    X("batchnorm-eps",       test_batchnorm_eps) \
    X("grad-lrn",            test_grad_lrn) \
    X("lrn-values",          test_lrn_values) \
    X("grad-slice",          test_grad_slice) \
    X("grad-views",          test_grad_views) \
    X("fire-views",          test_fire_views) \
    X("determinism",         test_determinism) \
    X("slice-tree",          test_slice_tree) \
    X("grad-chain",          test_grad_chain) \
    X("net-lrn",             test_net_lrn)

#define CPU_CASE_DECLARE(id, fn) void fn(void);
CPU_CASES(CPU_CASE_DECLARE)

static const struct check_case cases[] = {
#define CPU_CASE_ROW(id, fn) { id, fn },
    CPU_CASES(CPU_CASE_ROW)
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
