/* test_engine_cpu_ops.c: Caffe's pooling windows and the other ops (relu, dropout, concat,
 * eltwise, fc, softmax, batchnorm and its eps, scale, lrn, slice, flatten, reshape): gradient
 * checks and values. Part of test_engine_cpu
 * (its case table: tests/test_engine_cpu.c). */
#include "tests/engine_cpu_util.h"

/* ---- pooling ----------------------------------------------------------------------------- */

struct pool_case {
    const char *id;
    enum dse_layer_type type;
    int N, C, H, W, k, s, pad, global;
    enum dse_round round;
    int out; /* expected out_h = out_w (Caffe's rule, from dse_net_infer) */
};

static const struct pool_case pool_cases[] = {
    /* id                type               N  C  H  W  k  s pad glob round           out */
    { "max-ceil-overhang", DSE_LAYER_MAXPOOL, 2, 2, 6, 6, 3, 2, 0, 0, DSE_ROUND_CEIL,  3 },
    { "max-pad1",          DSE_LAYER_MAXPOOL, 2, 2, 5, 5, 3, 2, 1, 0, DSE_ROUND_CEIL,  3 },
    { "max-floor",         DSE_LAYER_MAXPOOL, 2, 2, 6, 6, 3, 2, 0, 0, DSE_ROUND_FLOOR, 2 },
    { "max-global",        DSE_LAYER_MAXPOOL, 2, 3, 4, 5, 0, 0, 0, 1, DSE_ROUND_CEIL,  1 },
    { "max-empty-window",  DSE_LAYER_MAXPOOL, 1, 2, 4, 4, 1, 2, 0, 0, DSE_ROUND_CEIL,  3 },
    { "avg-ceil-overhang", DSE_LAYER_AVGPOOL, 2, 2, 6, 6, 3, 2, 0, 0, DSE_ROUND_CEIL,  3 },
    { "avg-pad1-edge",     DSE_LAYER_AVGPOOL, 2, 2, 6, 6, 3, 2, 1, 0, DSE_ROUND_CEIL,  4 },
    { "avg-floor",         DSE_LAYER_AVGPOOL, 2, 2, 7, 7, 2, 2, 0, 0, DSE_ROUND_FLOOR, 3 },
    { "avg-global",        DSE_LAYER_AVGPOOL, 3, 4, 5, 3, 0, 0, 0, 1, DSE_ROUND_CEIL,  1 },
    { "avg-empty-window",  DSE_LAYER_AVGPOOL, 1, 2, 4, 4, 1, 2, 0, 0, DSE_ROUND_CEIL,  3 },
};

static struct dse_layer pool_layer(const struct pool_case *c) {
    struct dse_layer l = dse_layer_make(c->type, c->id);
    l.kernel_h = l.kernel_w = c->k, l.stride_h = l.stride_w = c->s, l.pad_h = l.pad_w = c->pad;
    l.global = c->global, l.round = c->round;
    return infer_layer(l, 1, c->C, c->H, c->W);
}

void test_grad_pool(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int i = 0; i < DSE_ARRAY_LEN(pool_cases); i++) {
        const struct pool_case *c = &pool_cases[i];
        struct dse_layer l = pool_layer(c);
        CHECK_INT_EQ(l.out_h, c->out);
        if (!c->global) CHECK_INT_EQ(l.out_w, c->out);
        struct fx f;
        fx_init(&f, &cx, &l, c->N, 1, NULL, 0, 20 + i);
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 20 + i, 3);
        fill_distinct(&f.in[0], &r, 0.05f);
        char what[80];
        snprintf(what, sizeof what, "pool %s", c->id);
        grad_check(&cx, &f.node, EPS, TOL_POOL, FLOOR, what);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* Values Caffe's pooling_layer.cpp gives, worked by hand. Input: x[y][x] = 6y + x. */
void test_pool_values(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct fx f;
    /* AVE, k3 s2 pad1 on 6x6 -> 4x4. Row windows: [-1,2) size 3 (the pad row counts),
     * [1,4), [3,6), [5,8) clipped to the padded input [5,7): size 2, one real row. */
    struct pool_case avg = { .id = "avg", .type = DSE_LAYER_AVGPOOL, .N = 1, .C = 1, .H = 6, .W = 6,
                             .k = 3, .s = 2, .pad = 1, .round = DSE_ROUND_CEIL, .out = 4 };
    struct dse_layer l = pool_layer(&avg);
    fx_init(&f, &cx, &l, 1, 1, NULL, 0, 1);
    for (int j = 0; j < 36; j++) f.in[0].data[j] = (float)j;
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    /* (0,0): rows 0-1, cols 0-1: (0+1+6+7) / 9 */
    CHECK_NEAR(f.out.data[0], 14.0 / 9.0, 1e-6);
    /* (0,3): rows 0-1, col 5 only, window size 3x2 = 6: (5 + 11) / 6 */
    CHECK_NEAR(f.out.data[3], 16.0 / 6.0, 1e-6);
    /* (3,3): row 5, col 5, size 2x2: 35 / 4 */
    CHECK_NEAR(f.out.data[15], 35.0 / 4.0, 1e-6);
    /* (1,1): rows 1-3, cols 1-3, all real: mean of 6y+x = 6*2 + 2 */
    CHECK_NEAR(f.out.data[5], 14.0, 1e-6);
    /* Backward spreads dy / size over the real inputs only. */
    dse_tensor_zero_grad(&f.in[0]);
    dse_tensor_zero_grad(&f.out);
    f.out.grad[15] = 1.0f;
    CHECK_OK(dse_cpu_backward(&cx, &f.node));
    CHECK_NEAR(f.in[0].grad[35], 0.25, 1e-6);
    fx_deinit(&f);

    /* MAX, k3 s2 ceil on 6x6 -> 3x3: the last window covers rows/cols 4-5 only. */
    struct pool_case mx = { .id = "max", .type = DSE_LAYER_MAXPOOL, .N = 1, .C = 1, .H = 6, .W = 6,
                            .k = 3, .s = 2, .round = DSE_ROUND_CEIL, .out = 3 };
    l = pool_layer(&mx);
    fx_init(&f, &cx, &l, 1, 1, NULL, 0, 1);
    for (int j = 0; j < 36; j++) f.in[0].data[j] = (float)((j * 7) % 36); /* a permutation */
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    /* Window (2,2): rows 4-5, cols 4-5: j = 28 (->16), 29 (->23), 34 (->22), 35 (->29). */
    CHECK_NEAR(f.out.data[8], 29.0, 0);
    CHECK_INT_EQ(f.node.st.argmax[8], 35);
    /* Window (0,0): rows 0-2, cols 0-2; j=5 is outside. max of 7j%36 over j in {0,1,2,6,7,8,12,13,14}:
     * 0,7,14,6,13,20,12,19,26 -> 26 at j = 14. */
    CHECK_NEAR(f.out.data[0], 26.0, 0);
    CHECK_INT_EQ(f.node.st.argmax[0], 14);
    dse_tensor_zero_grad(&f.in[0]);
    for (int j = 0; j < 9; j++) f.out.grad[j] = 1.0f;
    CHECK_OK(dse_cpu_backward(&cx, &f.node));
    CHECK_NEAR(f.in[0].grad[35], 1.0, 0);
    CHECK_NEAR(f.in[0].grad[28], 0.0, 0);
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

/* ---- elementwise, dropout, concat, fc, softmax, batchnorm, scale ---------------------- */

void test_grad_relu(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = infer_layer(dse_layer_make(DSE_LAYER_RELU, "relu"), 1, 3, 4, 5);
    for (int in_place = 0; in_place <= 1; in_place++) {
        struct fx f;
        fx_init(&f, &cx, &l, 2, 1, NULL, in_place ? FX_IN_PLACE : 0, 30);
        struct dse_pcg32 r;
        dse_pcg32_seed(&r, 30, 1);
        fill_off_zero(&f.in[0], &r);
        grad_check(&cx, &f.node, EPS, TOL_EXACT, FLOOR, in_place ? "relu in place" : "relu");
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

void test_grad_dropout(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = dse_layer_make(DSE_LAYER_DROPOUT, "drop");
    l.dropout_ratio = 0.4f;
    l = infer_layer(l, 1, 3, 4, 4);
    for (int in_place = 0; in_place <= 1; in_place++) {
        struct fx f;
        fx_init(&f, &cx, &l, 2, 1, NULL, in_place ? FX_IN_PLACE : 0, 31);
        /* The checker restores the ctx generator before each forward: a fixed mask. */
        grad_check(&cx, &f.node, EPS, TOL_EXACT, FLOOR, in_place ? "dropout in place" : "dropout");
        f.node.training = 0;
        grad_check(&cx, &f.node, EPS, TOL_EXACT, FLOOR, in_place ? "dropout inference in place" : "dropout inference");
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* Inverted dropout: kept values scaled by 1/(1-p), about p of them dropped, identity in
 * inference, the mask a function of the seed: value j kept iff draw j of the ctx's
 * generator is >= p * 2^32, drawn in index order by one thread or shared among three
 * (each from its own jump-ahead), the generator left after the last draw. */
/* Mask values of node n's training forward that differ from the draws, in index order, of a
 * ctx seeded `seed` and moved `skip` steps, at 1 and at 3 threads; checks that the forward
 * leaves the generator after the last draw. p = 0.25: kept iff draw >= 2^30. */
static int64_t mask_misses(struct dse_node *n, int64_t count, uint64_t seed, uint64_t skip) {
    int64_t bad = 0;
    for (int threads = 1; threads <= 3; threads += 2) {
        struct dse_cpu_ctx cy;
        CHECK_OK(dse_cpu_ctx_init(&cy, threads, seed, NULL));
        cy.rng.state += skip;
        struct dse_pcg32 ref = cy.rng;
        CHECK_OK(dse_cpu_forward(&cy, n));
        for (int64_t j = 0; j < count; j++) bad += n->st.mask[j] != (dse_pcg32_next(&ref) >= 1073741824u);
        CHECK(cy.rng.state == ref.state);
        dse_cpu_ctx_deinit(&cy);
    }
    return bad;
}

void test_dropout_values(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = dse_layer_make(DSE_LAYER_DROPOUT, "drop");
    l.dropout_ratio = 0.25f;
    l = infer_layer(l, 1, 8, 40, 40); /* two blocks an image (eltwise.c BLOCK), enough to share */
    struct fx f;
    fx_init(&f, &cx, &l, 4, 1, NULL, 0, 32);
    dse_tensor_fill(&f.in[0], 3.0f);
    int64_t kept = 0, bad = 0, count = dse_tensor_count(&f.out);
    bad += mask_misses(&f.node, count, 1234, 99u); /* the first layer's draws start anywhere in the stream */
    CHECK_INT_EQ(bad, 0);
    { /* blocks of 8192 and 3575 values (eltwise.c's draw_mask: four lanes, then a tail of 3) */
        struct dse_layer lo = dse_layer_make(DSE_LAYER_DROPOUT, "drop-odd");
        lo.dropout_ratio = 0.25f;
        lo = infer_layer(lo, 1, 7, 41, 41);
        struct fx g;
        fx_init(&g, &cx, &lo, 3, 1, NULL, 0, 33);
        bad += mask_misses(&g.node, dse_tensor_count(&g.out), 99, 0);
        CHECK_INT_EQ(bad, 0);
        fx_deinit(&g);
    }
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    for (int64_t j = 0; j < count; j++) {
        kept += f.out.data[j] != 0.0f;
        bad += f.out.data[j] != 0.0f && f.out.data[j] != 4.0f; /* 3 / 0.75 */
        bad += (f.out.data[j] != 0.0f) != f.node.st.mask[j];
    }
    CHECK_INT_EQ(bad, 0);
    /* 51200 draws of p = 0.75: sd = 98; 5 sd either side. */
    CHECK(kept > 38400 - 500 && kept < 38400 + 500);
    f.node.training = 0;
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK(f.out.data[0] == 3.0f && f.out.data[count - 1] == 3.0f);
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

void test_grad_concat(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    const int in_c[3] = { 2, 3, 1 };
    struct dse_layer l = infer_layer(dse_layer_make(DSE_LAYER_CONCAT, "cat"), 3, 2, 3, 4);
    l.out_c = 6; /* inputs of 2, 3 and 1 channels (infer_layer gave 3 x 2) */
    for (int views = 0; views <= 1; views++) {
        struct fx f;
        fx_init(&f, &cx, &l, 2, 3, in_c, views ? FX_VIEWS : 0, 33);
        cx.stats.concat_copy_bytes = 0;
        grad_check(&cx, &f.node, EPS, TOL_EXACT, FLOOR, views ? "concat of views" : "concat");
        if (views) CHECK_INT_EQ(cx.stats.concat_copy_bytes, 0);
        else CHECK(cx.stats.concat_copy_bytes > 0);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

void test_grad_eltwise(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = infer_layer(dse_layer_make(DSE_LAYER_ELTWISE, "add"), 3, 3, 3, 5);
    struct fx f;
    fx_init(&f, &cx, &l, 2, 3, NULL, 0, 34);
    grad_check(&cx, &f.node, EPS, TOL_EXACT, FLOOR, "eltwise add of 3");
    /* y = a + b + c exactly. */
    CHECK(f.out.data[7] == f.in[0].data[7] + f.in[1].data[7] + f.in[2].data[7]);
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

void test_grad_fc(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int bias = 0; bias <= 1; bias++) {
        struct dse_layer l = dse_layer_make(DSE_LAYER_FC, "fc");
        l.num_output = 5, l.bias = bias;
        l = infer_layer(l, 1, 2, 3, 3);
        struct fx f;
        fx_init(&f, &cx, &l, 3, 1, NULL, 0, 35);
        grad_check(&cx, &f.node, EPS, TOL_FC, FLOOR, bias ? "fc" : "fc no bias");
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

void test_grad_softmax(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = infer_layer(dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss"), 1, 7, 1, 1);
    struct fx f;
    fx_init(&f, &cx, &l, 4, 1, NULL, 0, 36);
    grad_check(&cx, &f.node, EPS, TOL_SOFTMAX, 1e-2, "softmax_xent");
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

void test_softmax_values(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = infer_layer(dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss"), 1, 10, 1, 1);
    struct fx f;
    fx_init(&f, &cx, &l, 2, 1, NULL, 0, 37);
    /* Equal logits: p = 1/10, loss = log 10, whatever the labels. */
    dse_tensor_fill(&f.in[0], 5.0f);
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK_NEAR(f.out.data[0], log(10.0), 1e-6);
    CHECK_NEAR(f.node.st.prob[13], 0.1, 1e-6);
    /* Huge logits do not overflow: image 0 is certain and right, image 1 certain and
     * wrong by 1000, so its loss is 1000 (p clamped above 0 only far beyond that). */
    f.labels[0] = 3, f.labels[1] = 4;
    f.in[0].data[3] = 1000.0f;
    f.in[0].data[10 + 2] = 1005.0f, f.in[0].data[10 + 4] = 5.0f;
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK_NEAR(f.out.data[0], 1000.0 / 2, 1e-5);
    /* Gradient: (p - onehot) / N, accumulated. */
    dse_tensor_zero_grad(&f.in[0]);
    CHECK_OK(dse_cpu_backward(&cx, &f.node));
    CHECK_NEAR(f.in[0].grad[10 + 4], -0.5, 1e-6);
    CHECK_NEAR(f.in[0].grad[10 + 2], 0.5, 1e-6);
    /* A label outside the classes is an error naming the image. */
    f.labels[1] = 10;
    CHECK_INT_EQ(dse_cpu_forward(&cx, &f.node), DSE_ERR_CONFIG);
    CHECK_STR_EQ(cx.err.msg, "layer 'loss' (softmax_xent): label 10 of image 1 is out of range; expected 0 to 9");
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

void test_grad_batchnorm(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    static const struct { const char *what; int affine, in_place, training; } v[] = {
        { "batchnorm affine", 1, 0, 1 },   { "batchnorm", 0, 0, 1 },
        { "batchnorm in place", 1, 1, 1 }, { "batchnorm inference", 1, 0, 0 },
        { "batchnorm inference in place", 1, 1, 0 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(v); i++) {
        struct dse_layer l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn");
        l.affine = v[i].affine;
        l = infer_layer(l, 1, 3, 3, 4);
        struct fx f;
        fx_init(&f, &cx, &l, 4, 1, NULL, v[i].in_place ? FX_IN_PLACE : 0, 38 + i);
        f.node.training = v[i].training;
        grad_check(&cx, &f.node, EPS, TOL_BN, FLOOR, v[i].what);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* Batch statistics and the running-average update, by hand. */
void test_batchnorm_values(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn");
    l.affine = 0;
    l = infer_layer(l, 1, 1, 1, 2);
    struct fx f;
    fx_init(&f, &cx, &l, 2, 1, NULL, 0, 1);
    f.in[0].data[0] = 1, f.in[0].data[1] = 3, f.in[0].data[2] = 5, f.in[0].data[3] = 7; /* mean 4, var 5 */
    f.rm.data[0] = 0.0f, f.rv.data[0] = 1.0f;
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK_NEAR(f.out.data[0], -3.0 / sqrt(5.0 + 1e-5), 1e-6);
    CHECK_NEAR(f.rm.data[0], 0.1 * 4.0, 1e-6);
    CHECK_NEAR(f.rv.data[0], 0.9 + 0.1 * 5.0 * 4.0 / 3.0, 1e-6); /* unbiased: 20/3 */
    f.node.training = 0; /* now the running statistics */
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK_NEAR(f.out.data[3], (7.0 - 0.4) / sqrt(0.9 + 2.0 / 3.0 + 1e-5), 1e-6);
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

void test_grad_scale(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int in_place = 0; in_place <= 1; in_place++) {
        struct dse_layer l = dse_layer_make(DSE_LAYER_SCALE, "scale");
        l = infer_layer(l, 1, 3, 2, 3);
        struct fx f;
        fx_init(&f, &cx, &l, 2, 1, NULL, in_place ? FX_IN_PLACE : 0, 45);
        grad_check(&cx, &f.node, EPS, TOL_SCALE, FLOOR, in_place ? "scale in place" : "scale");
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* BatchNorm's eps is the layer's (a prototxt's batch_norm_param eps, ONNX's epsilon): with
 * Inception's 0.001 the value differs from 1e-5's by 1e-4, far above the tolerance. */
void test_batchnorm_eps(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn");
    CHECK(l.bn_eps == 1e-5f); /* the default: today's networks unchanged */
    l.affine = 0, l.bn_eps = 0.001f;
    l = infer_layer(l, 1, 1, 1, 2);
    struct fx f;
    fx_init(&f, &cx, &l, 2, 1, NULL, 0, 1);
    CHECK(f.node.bn_eps == 0.001f);
    f.in[0].data[0] = 1, f.in[0].data[1] = 3, f.in[0].data[2] = 5, f.in[0].data[3] = 7; /* mean 4, var 5 */
    f.rm.data[0] = 0.0f, f.rv.data[0] = 1.0f;
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK_NEAR(f.out.data[0], -3.0 / sqrt(5.0 + 0.001), 1e-6);
    f.node.training = 0; /* evaluation too: the running variance 0.9 + 0.1 * 20/3 */
    CHECK_OK(dse_cpu_forward(&cx, &f.node));
    CHECK_NEAR(f.out.data[3], (7.0 - 0.4) / sqrt(0.9 + 2.0 / 3.0 + 0.001), 1e-6);
    fx_deinit(&f);
    dse_cpu_ctx_deinit(&cx);
}

/* ---- lrn, slice, flatten, reshape (issue #34: AlexNet, GoogLeNet, CaffeNet) ---------------- */

struct lrn_case {
    const char *id;
    int         N, C, H, W, size;
    float       alpha, beta, k;
};

/* Large alphas, so that the cross-channel term of the gradient is not lost in the noise. */
static const struct lrn_case lrn_cases[] = {
    { .id = "lrn size 3", .N = 2, .C = 7, .H = 3, .W = 2, .size = 3, .alpha = 2.0f, .beta = 0.75f, .k = 1.5f },
    /* windows past both ends */
    { .id = "lrn size 5", .N = 2, .C = 4, .H = 2, .W = 3, .size = 5, .alpha = 1.0f, .beta = 0.5f, .k = 1.0f },
    { .id = "lrn size 1", .N = 1, .C = 3, .H = 2, .W = 2, .size = 1, .alpha = 0.5f, .beta = 1.25f, .k = 2.0f },
    /* AlexNet's, nearly the identity */
    { .id = "lrn alexnet", .N = 2, .C = 9, .H = 2, .W = 2, .size = 5, .alpha = 1e-4f, .beta = 0.75f, .k = 1.0f },
};

static struct dse_layer lrn_layer(const struct lrn_case *c) {
    struct dse_layer l = dse_layer_make(DSE_LAYER_LRN, c->id);
    l.lrn_size = c->size, l.lrn_alpha = c->alpha, l.lrn_beta = c->beta, l.lrn_k = c->k;
    return infer_layer(l, 1, c->C, c->H, c->W);
}

void test_grad_lrn(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    for (int i = 0; i < DSE_ARRAY_LEN(lrn_cases); i++) {
        const struct lrn_case *c = &lrn_cases[i];
        struct dse_layer l = lrn_layer(c);
        struct fx f;
        fx_init(&f, &cx, &l, c->N, 1, NULL, 0, 50 + i);
        grad_check(&cx, &f.node, EPS, TOL_LRN, FLOOR, c->id);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* Forward against Caffe's formula in a scalar loop of doubles, and the same bits forward and
 * backward from 1 and 3 threads. */
void test_lrn_values(void) {
    for (int i = 0; i < DSE_ARRAY_LEN(lrn_cases); i++) {
        const struct lrn_case *c = &lrn_cases[i];
        struct dse_layer l = lrn_layer(c);
        float *y1 = NULL, *dx1 = NULL;
        double worst = 0.0;
        for (int threads = 1; threads <= 3; threads += 2) {
            struct dse_cpu_ctx cx;
            CHECK_OK(dse_cpu_ctx_init(&cx, threads, 1, NULL));
            struct fx f;
            fx_init(&f, &cx, &l, c->N, 1, NULL, 0, 60 + i);
            const int64_t count = dse_tensor_count(&f.out), HW = (int64_t)c->H * c->W;
            struct dse_pcg32 r;
            dse_pcg32_seed(&r, 61, 1);
            fill_uniform(&f.out, &r, -1.0f, 1.0f);
            memcpy(f.out.grad, f.out.data, (size_t)count * sizeof(float)); /* dL/dy */
            CHECK_OK(dse_cpu_forward(&cx, &f.node));
            dse_tensor_zero_grad(&f.in[0]);
            CHECK_OK(dse_cpu_backward(&cx, &f.node));
            for (int64_t e = 0; e < count && threads == 1; e++) {
                const int64_t img = e / (c->C * HW), ch = e / HW % c->C, j = e % HW;
                double s = 0.0;
                for (int64_t q = ch - c->size / 2; q <= ch + c->size / 2; q++) {
                    if (q < 0 || q >= c->C) continue;
                    const double v = f.in[0].data[(img * c->C + q) * HW + j];
                    s += v * v;
                }
                const double ref = f.in[0].data[e] * pow(c->k + c->alpha / c->size * s, -c->beta);
                worst = fmax(worst, fabs(f.out.data[e] - ref) / fmax(fabs(ref), 1e-3));
            }
            if (threads == 1) {
                y1 = malloc((size_t)count * sizeof *y1), dx1 = malloc((size_t)count * sizeof *dx1);
                memcpy(y1, f.out.data, (size_t)count * sizeof *y1);
                memcpy(dx1, f.in[0].grad, (size_t)count * sizeof *dx1);
            } else {
                CHECK(memcmp(y1, f.out.data, (size_t)count * sizeof *y1) == 0);
                CHECK(memcmp(dx1, f.in[0].grad, (size_t)count * sizeof *dx1) == 0);
            }
            fx_deinit(&f);
            dse_cpu_ctx_deinit(&cx);
        }
        if (!(worst <= 1e-6)) fprintf(stderr, "  %s: forward off the scalar loop by %.3g\n", c->id, worst);
        CHECK(worst <= 1e-6);
        free(y1), free(dx1);
    }
}

void test_grad_slice(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    static const struct { const char *what; int begin, end, part, parts, c0, c1; } v[] = {
        { .what = "slice [2, 5)", .begin = 2, .end = 5, .c0 = 2, .c1 = 5 },
        { .what = "slice [4, end)", .begin = 4, .c0 = 4, .c1 = 6 },
        { .what = "slice part 1 of 3", .part = 1, .parts = 3, .c0 = 2, .c1 = 4 },
        { .what = "slice every channel", .c1 = 6 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(v); i++) {
        struct dse_layer l = dse_layer_make(DSE_LAYER_SLICE, "slice");
        l.slice_begin = v[i].begin, l.slice_end = v[i].end, l.slice_part = v[i].part, l.slice_parts = v[i].parts;
        l = infer_layer(l, 1, 6, 2, 3);
        CHECK_INT_EQ(l.out_c, v[i].c1 - v[i].c0);
        struct fx f;
        fx_init(&f, &cx, &l, 2, 1, NULL, 0, 70 + i);
        grad_check(&cx, &f.node, EPS, TOL_EXACT, FLOOR, v[i].what);
        CHECK_OK(dse_cpu_forward(&cx, &f.node));
        int bad = 0;
        for (int img = 0; img < 2; img++)
            for (int j = 0; j < (v[i].c1 - v[i].c0) * 6; j++)
                bad += f.out.data[img * f.out.stride_n + j] != f.in[0].data[img * f.in[0].stride_n + v[i].c0 * 6 + j];
        CHECK_INT_EQ(bad, 0);
        fx_deinit(&f);
    }
    dse_cpu_ctx_deinit(&cx);
}

/* Flatten and reshape: a tensor of their own (copy forward, add backward) or, as the model
 * runs them, a view of the input (the same memory in the output's shape): nothing moves. */
void test_grad_views(void) {
    struct dse_cpu_ctx cx;
    ctx_init(&cx);
    struct dse_layer flat = infer_layer(dse_layer_make(DSE_LAYER_FLATTEN, "flatten"), 1, 3, 2, 2);
    struct dse_layer re = dse_layer_make(DSE_LAYER_RESHAPE, "reshape");
    re.dims[0] = 6, re.dims[1] = -1, re.dims[2] = 1;
    re = infer_layer(re, 1, 3, 2, 2);
    CHECK(flat.out_c == 12 && flat.out_h == 1 && re.out_c == 6 && re.out_h == 2 && re.out_w == 1);
    const struct dse_layer *ls[2] = { &flat, &re };
    for (int k = 0; k < 2; k++)
        for (int view = 0; view <= 1; view++) {
            struct fx f;
            fx_init(&f, &cx, ls[k], 3, 1, NULL, 0, 80 + k);
            if (view) {
                dse_tensor_deinit(&f.out);
                dse_tensor_wrap(&f.out, 3, ls[k]->out_c, ls[k]->out_h, ls[k]->out_w, f.in[0].stride_n, f.in[0].data,
                                f.in[0].grad, DSE_MEM_HOST);
                CHECK_OK(dse_cpu_node_prepare(&cx, &f.node, NULL));
            }
            char what[DSE_NAME_MAX + 16];
            snprintf(what, sizeof what, "%s%s", ls[k]->name, view ? " as a view" : "");
            grad_check(&cx, &f.node, EPS, TOL_EXACT, FLOOR, what);
            CHECK_OK(dse_cpu_forward(&cx, &f.node));
            CHECK(memcmp(f.out.data, f.in[0].data, 3 * 12 * sizeof(float)) == 0);
            fx_deinit(&f);
        }
    dse_cpu_ctx_deinit(&cx);
}
