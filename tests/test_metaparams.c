/* test_metaparams.c: building networks, Caffe's shape rules, Fire module expansion and
 * the errors users see for networks that cannot be built. */
#include "metaparams/net.h"

#include "metaparams/metaparams.h"
#include "tests/check.h"
#include "tests/nets.h"

/* One pooling layer on a 1 x in x in input; returns the output height (or -1). */
static int pool_size(int in, int k, int s, int p, enum dse_round round) {
    struct dse_net n;
    struct dse_layer l = dse_layer_make(DSE_LAYER_MAXPOOL, "pool");
    dse_net_init(&n, "t", 1, in, in);
    l.kernel_h = l.kernel_w = k;
    l.stride_h = l.stride_w = s;
    l.pad_h = l.pad_w = p;
    l.round = round;
    dse_net_add(&n, &l, NULL);
    int out = dse_net_infer(&n, NULL, NULL) ? -1 : n.layers[0].out_h;
    dse_net_deinit(&n);
    return out;
}

static void test_pool_rounding(void) {
    /* Caffe pooling_layer.cpp: ceil((in + 2p - k) / s) + 1 */
    CHECK_INT_EQ(pool_size(13, 3, 2, 0, DSE_ROUND_CEIL), 6);
    CHECK_INT_EQ(pool_size(12, 3, 2, 0, DSE_ROUND_CEIL), 6);
    CHECK_INT_EQ(pool_size(12, 3, 2, 0, DSE_ROUND_FLOOR), 5);
    /* SqueezeNet v1.1: 113 -> 56 -> (fires) 56 -> 28 ... ceil gives 28 and 14, floor 27 and 13 */
    CHECK_INT_EQ(pool_size(113, 3, 2, 0, DSE_ROUND_CEIL), 56);
    CHECK_INT_EQ(pool_size(56, 3, 2, 0, DSE_ROUND_CEIL), 28);
    CHECK_INT_EQ(pool_size(56, 3, 2, 0, DSE_ROUND_FLOOR), 27);
    CHECK_INT_EQ(pool_size(28, 3, 2, 0, DSE_ROUND_CEIL), 14);
    CHECK_INT_EQ(pool_size(28, 3, 2, 0, DSE_ROUND_FLOOR), 13);
    /* The pad-clip rule: a last window that would start in the padding is dropped. */
    CHECK_INT_EQ(pool_size(6, 3, 4, 1, DSE_ROUND_CEIL), 2);  /* ceil gives 3, clipped */
    CHECK_INT_EQ(pool_size(1, 2, 3, 1, DSE_ROUND_CEIL), 1);  /* ceil gives 2, clipped */
    CHECK_INT_EQ(pool_size(5, 3, 2, 1, DSE_ROUND_CEIL), 3);  /* not clipped */
    /* pad must be smaller than the kernel */
    CHECK_INT_EQ(pool_size(8, 2, 2, 2, DSE_ROUND_CEIL), -1);
}

static void test_conv_shapes(void) {
    struct dse_net n;
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "c");
    dse_net_init(&n, "t", 4, 10, 12);
    l.num_output = 8;
    l.kernel_h = 3, l.kernel_w = 1;
    l.dilation_h = 2;          /* effective 5x1 */
    l.stride_w = 2;
    l.pad_w = 1;
    l.groups = 2;
    CHECK_OK(dse_net_add(&n, &l, NULL));
    CHECK_OK(dse_net_infer(&n, NULL, NULL));
    CHECK_INT_EQ(n.layers[0].out_c, 8);
    CHECK_INT_EQ(n.layers[0].out_h, 6);  /* (10 - 5) / 1 + 1 */
    CHECK_INT_EQ(n.layers[0].out_w, 7);  /* (12 + 2 - 1) / 2 + 1, rounded down */
    CHECK_INT_EQ(n.layers[0].rf_h, 5);
    CHECK_INT_EQ(n.layers[0].jump_w, 2);
    dse_net_deinit(&n);
}

static void test_shape_errors(void) {
    struct dse_net n;
    struct dse_err err = { 0 };
    char buf[300];
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "conv1");
    dse_net_init(&n, "t", 3, 5, 5);
    l.num_output = 4;
    l.kernel_h = l.kernel_w = 7;
    l.line = 12;
    CHECK_OK(dse_net_add(&n, &l, NULL));
    CHECK_INT_EQ(dse_net_infer(&n, "net.cfg", &err), DSE_ERR_SHAPE);
    CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf),
                 "net.cfg:12: layer 'conv1' (conv): kernel 7x7 (dilated) is larger than its padded input 5x5");
    dse_net_deinit(&n);

    /* groups must divide channels */
    dse_net_init(&n, "t", 3, 5, 5);
    l.kernel_h = l.kernel_w = 1;
    l.groups = 2;
    dse_net_add(&n, &l, NULL);
    CHECK_INT_EQ(dse_net_infer(&n, "net.cfg", &err), DSE_ERR_SHAPE);
    CHECK_STR_EQ(err.msg, "layer 'conv1' (conv): groups = 2 must divide input channels (3) and filters (4)");
    dse_net_deinit(&n);

    /* concat of maps with different sizes */
    dse_net_init(&n, "t", 3, 8, 8);
    struct dse_layer p = dse_layer_make(DSE_LAYER_MAXPOOL, "pool");
    p.kernel_h = p.kernel_w = 2;
    p.stride_h = p.stride_w = 2;
    dse_net_add(&n, &p, NULL);
    struct dse_layer c = dse_layer_make(DSE_LAYER_CONCAT, "cat");
    c.n_inputs = 2;
    c.inputs[0] = 0;
    c.inputs[1] = DSE_INPUT_DATA;
    dse_net_add(&n, &c, NULL);
    CHECK_INT_EQ(dse_net_infer(&n, NULL, &err), DSE_ERR_SHAPE);
    CHECK_STR_EQ(err.msg, "layer 'cat' (concat): input 1 is 3x8x8 but input 0 is 3x4x4 (heights and widths must match)");
    dse_net_deinit(&n);

    /* an input that is not an earlier layer is a programming error reported, not a crash */
    dse_net_init(&n, "t", 3, 8, 8);
    c.inputs[1] = 5;
    CHECK_INT_EQ(dse_net_add(&n, &c, &err), DSE_ERR_INTERNAL);
    dse_net_deinit(&n);
}

static void test_fire_expansion(void) {
    struct dse_net n;
    struct dse_err err = { 0 };
    struct dse_fire f = { .name = "fire2", .squeeze = 16, .expand1x1 = 64, .expand3x3 = 64,
                          .bypass = DSE_BYPASS_NONE, .line = 3 };
    dse_net_init(&n, "t", 96, 55, 55);
    CHECK_OK(dse_net_add_fire(&n, &f, DSE_INPUT_DATA, NULL));
    CHECK_OK(dse_net_infer(&n, NULL, NULL));
    static const char *names[] = { "fire2/squeeze1x1", "fire2/relu_squeeze1x1", "fire2/expand1x1",
                                   "fire2/relu_expand1x1", "fire2/expand3x3", "fire2/relu_expand3x3",
                                   "fire2/concat" };
    CHECK_INT_EQ(n.n_layers, 7);
    static const enum dse_role roles[] = { DSE_ROLE_SQUEEZE, DSE_ROLE_RELU_SQUEEZE, DSE_ROLE_EXPAND1X1,
                                           DSE_ROLE_RELU_EXPAND1X1, DSE_ROLE_EXPAND3X3, DSE_ROLE_RELU_EXPAND3X3,
                                           DSE_ROLE_CONCAT };
    for (int i = 0; i < 7 && i < n.n_layers; i++) {
        CHECK_STR_EQ(n.layers[i].name, names[i]);
        CHECK_STR_EQ(n.layers[i].module, "fire2");
        CHECK_INT_EQ(n.layers[i].role, roles[i]);
    }
    const struct dse_layer *cat = &n.layers[n.n_layers - 1];
    CHECK_INT_EQ(cat->out_c, 128);
    CHECK_INT_EQ(cat->out_h, 55);
    CHECK_INT_EQ(n.layers[4].pad_h, 1); /* expand3x3 keeps the map size */
    CHECK_INT_EQ(n.layers[1].in_place, 1);

    /* simple bypass needs matching channels: 96 in, 128 out */
    f.bypass = DSE_BYPASS_SIMPLE;
    dse_strlcpy(f.name, "fire3", sizeof f.name);
    CHECK_INT_EQ(dse_net_add_fire(&n, &f, DSE_INPUT_DATA, &err), DSE_ERR_CONFIG);
    CHECK_INT_EQ(err.line, 3);
    CHECK_STR_EQ(err.msg, "fire 'fire3': simple bypass needs input channels (96) == output channels "
                          "(128); use bypass = \"complex\" for a 1x1-conv bypass");
    /* ... and works where they match */
    CHECK_OK(dse_net_add_fire(&n, &f, n.n_layers - 1, NULL));
    CHECK_STR_EQ(n.layers[n.n_layers - 1].name, "fire3/bypass_add");
    CHECK_INT_EQ(n.layers[n.n_layers - 1].inputs[1], 6);
    /* complex bypass: a 1x1 conv where channels differ */
    f.bypass = DSE_BYPASS_COMPLEX;
    f.expand1x1 = f.expand3x3 = 128;
    dse_strlcpy(f.name, "fire4", sizeof f.name);
    CHECK_OK(dse_net_add_fire(&n, &f, n.n_layers - 1, NULL));
    CHECK_OK(dse_net_infer(&n, NULL, NULL));
    int bc = dse_net_find(&n, "fire4/bypass_conv");
    CHECK(bc >= 0);
    if (bc >= 0) {
        CHECK_INT_EQ(n.layers[bc].out_c, 256);
        CHECK_INT_EQ(n.layers[bc].in_c, 128);
        CHECK_INT_EQ(n.layers[bc].kernel_h, 1);
    }
    /* squeeze of zero is refused */
    f.squeeze = 0;
    CHECK_INT_EQ(dse_net_add_fire(&n, &f, n.n_layers - 1, &err), DSE_ERR_CONFIG);
    dse_net_deinit(&n);
}

static void test_nin_shapes(void) {
    /* Output sizes of thesis Table 4.2 (NiN, 227x227 input). */
    struct dse_net n;
    struct nin_opts o = nin_base;
    CHECK_OK(build_nin(&n, &o));
    static const struct { const char *name; int c, h; } want[] = {
        { "conv1", 96, 55 },   { "conv3", 96, 55 },   { "pool3", 96, 27 },  { "conv4", 256, 27 },
        { "pool6", 256, 13 },  { "conv7", 384, 13 },  { "pool9", 384, 6 },  { "conv10", 1024, 6 },
        { "conv12", 1000, 6 }, { "pool12", 1000, 1 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(want); i++) {
        int k = dse_net_find(&n, want[i].name);
        CHECK(k >= 0);
        if (k < 0) continue;
        CHECK_INT_EQ(n.layers[k].out_c, want[i].c);
        CHECK_INT_EQ(n.layers[k].out_h, want[i].h);
        CHECK_INT_EQ(n.layers[k].out_w, want[i].h);
    }
    /* receptive fields: 11, then +2*4, then +4*8 */
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "conv1")].rf_h, 11);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "pool3")].rf_h, 19);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "conv4")].rf_h, 51);
    dse_net_deinit(&n);

    /* conv7 6x6 pad 2 gives 12x12, and ceil pooling still gives 6x6 (floor would give 5) */
    o.conv7_k = 6, o.conv7_pad = 2;
    CHECK_OK(build_nin(&n, &o));
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "conv7")].out_h, 12);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "pool9")].out_h, 6);
    dse_net_deinit(&n);
}

static void test_squeezenet_shapes(void) {
    struct dse_net n;
    CHECK_OK(build_squeezenet(&n, 1, DSE_BYPASS_NONE));
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "conv1")].out_h, 113);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "pool1")].out_h, 56);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "pool3")].out_h, 28);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "pool5")].out_h, 14);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "fire9/concat")].out_c, 512);
    dse_net_deinit(&n);
    CHECK_OK(build_squeezenet(&n, 0, DSE_BYPASS_NONE));
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "conv1")].out_h, 111);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "pool1")].out_h, 55);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "pool4")].out_h, 27);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "pool8")].out_h, 13);
    dse_net_deinit(&n);
}

/* conv2 reads conv1's output, which relu1 would overwrite in place: relu1 must keep its
 * own tensor. And only shape-preserving layers may work in place. */
static void test_in_place_rules(void) {
    struct dse_net n;
    struct dse_err err = { 0 };
    dse_net_init(&n, "t", 3, 8, 8);
    net_conv(&n, "conv1", 4, 3, 1, 1);
    net_simple(&n, DSE_LAYER_RELU, "relu1", 1);
    CHECK_INT_EQ(n.layers[1].in_place, 1);
    struct dse_layer c2 = dse_layer_make(DSE_LAYER_CONV, "conv2");
    c2.num_output = 4, c2.kernel_h = c2.kernel_w = 1;
    c2.n_inputs = 1, c2.inputs[0] = 0;
    CHECK_OK(dse_net_add(&n, &c2, NULL));
    CHECK_INT_EQ(n.layers[1].in_place, 0);
    struct dse_layer c3 = dse_layer_make(DSE_LAYER_CONV, "conv3");
    c3.num_output = 4, c3.kernel_h = c3.kernel_w = 1, c3.in_place = 1;
    CHECK_INT_EQ(dse_net_add(&n, &c3, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "layer 'conv3' (conv) cannot work in place (top == bottom); only relu, "
                          "dropout, softmax, batchnorm, scale, sigmoid, tanh, power, prelu, clip, hardsigmoid "
                          "and hardswish can");
    dse_net_deinit(&n);
}

static void test_copy_and_types(void) {
    struct dse_net a, b;
    enum dse_layer_type t;
    CHECK_OK(build_squeezenet(&a, 0, DSE_BYPASS_SIMPLE));
    CHECK_OK(dse_net_copy(&b, &a, NULL));
    CHECK_INT_EQ(b.n_layers, a.n_layers);
    CHECK_STR_EQ(b.layers[b.n_layers - 1].name, "loss");
    CHECK(b.layers != a.layers);
    dse_net_deinit(&a);
    dse_net_deinit(&b);
    dse_net_deinit(NULL);
    CHECK_INT_EQ(dse_layer_type_from_str("maxpool", &t), 0);
    CHECK_INT_EQ(t, DSE_LAYER_MAXPOOL);
    CHECK_INT_EQ(dse_layer_type_from_str("pool", &t), -1);
    CHECK_STR_EQ(dse_layer_type_str(DSE_LAYER_SOFTMAX_LOSS), "softmax_loss");
    CHECK_STR_EQ(dse_bypass_str(DSE_BYPASS_COMPLEX), "complex");
}

/* Parameters of a network from its hyper-parameters alone (conv weights + biases). */
static long long params_of(const struct dse_net *n) {
    long long p = 0;
    for (int i = 0; i < n->n_layers; i++) {
        const struct dse_layer *l = &n->layers[i];
        if (l->type == DSE_LAYER_CONV)
            p += (long long)l->in_c / l->groups * l->kernel_h * l->kernel_w * l->out_c + (l->bias ? l->out_c : 0);
    }
    return p;
}

static void test_generator_squeezenet(void) {
    struct dse_net g, ref;
    struct dse_mp mp = dse_mp_squeezenet_v10();
    dse_net_init(&g, "gen", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, &g, NULL));
    CHECK_OK(build_squeezenet(&ref, 0, DSE_BYPASS_NONE));
    /* SqueezeNet v1.0's metaparameters give exactly the network of thesis Table 5.1. */
    CHECK_INT_EQ(g.n_layers, ref.n_layers);
    for (int i = 0; i < g.n_layers && i < ref.n_layers; i++) {
        CHECK_STR_EQ(g.layers[i].name, ref.layers[i].name);
        CHECK_INT_EQ(g.layers[i].type, ref.layers[i].type);
        CHECK_INT_EQ(g.layers[i].out_c, ref.layers[i].out_c);
        CHECK_INT_EQ(g.layers[i].out_h, ref.layers[i].out_h);
        CHECK_INT_EQ(g.layers[i].in_place, ref.layers[i].in_place);
    }
    CHECK_INT_EQ(params_of(&g), 1248424); /* Table 5.1 */
    dse_net_deinit(&ref);

    /* Simple bypass lands on fire3, 5, 7, 9 only (channels match there). */
    mp.bypass = DSE_BYPASS_SIMPLE;
    CHECK_OK(dse_mp_build(&mp, &g, NULL));
    CHECK(dse_net_find(&g, "fire3/bypass_add") >= 0);
    CHECK(dse_net_find(&g, "fire9/bypass_add") >= 0);
    CHECK(dse_net_find(&g, "fire2/bypass_add") < 0);
    CHECK(dse_net_find(&g, "fire4/bypass_add") < 0);
    CHECK_INT_EQ(params_of(&g), 1248424);
    /* Complex: plus 1x1-conv bypasses around fire2, 4, 6, 8. The thesis prints 7.7 MB for
     * this variant; its definition gives 1,589,672 params = 6.36 MB (docs/space-format.md). */
    mp.bypass = DSE_BYPASS_COMPLEX;
    CHECK_OK(dse_mp_build(&mp, &g, NULL));
    CHECK(dse_net_find(&g, "fire2/bypass_conv") >= 0);
    CHECK(dse_net_find(&g, "fire3/bypass_conv") < 0);
    CHECK(dse_net_find(&g, "fire3/bypass_add") >= 0);
    CHECK_INT_EQ(params_of(&g), 1589672);
    dse_net_deinit(&g);
}

static void test_generator_rounding(void) {
    struct dse_mp mp = dse_mp_squeezenet_v10();
    struct dse_fire_filters f = dse_mp_fire_filters(&mp, 0);
    CHECK_INT_EQ(f.expand, 128);
    CHECK_INT_EQ(f.expand3x3, 64);
    CHECK_INT_EQ(f.squeeze, 16);
    f = dse_mp_fire_filters(&mp, 7); /* 128 + 128 * floor(7 / 2) */
    CHECK_INT_EQ(f.expand, 512);
    CHECK_INT_EQ(f.squeeze, 64);
    mp.pct3x3 = 0.01; /* 1.28 rounds to 1 */
    CHECK_INT_EQ(dse_mp_fire_filters(&mp, 0).expand3x3, 1);
    CHECK_INT_EQ(dse_mp_fire_filters(&mp, 0).expand1x1, 127);
    mp.pct3x3 = 0.99; /* 126.72 -> 127 */
    CHECK_INT_EQ(dse_mp_fire_filters(&mp, 0).expand3x3, 127);
    mp.pct3x3 = 1.0; /* no 1x1 expand at all: the module has only the 3x3 branch */
    CHECK_INT_EQ(dse_mp_fire_filters(&mp, 0).expand1x1, 0);
    mp.sr = 0.001; /* at least one squeeze filter */
    CHECK_INT_EQ(dse_mp_fire_filters(&mp, 0).squeeze, 1);
    mp.sr = 0.75;
    CHECK_INT_EQ(dse_mp_fire_filters(&mp, 2).squeeze, 192);
    struct dse_net n;
    dse_net_init(&n, "t", 1, 1, 1);
    mp = dse_mp_squeezenet_v10();
    mp.pct3x3 = 1.0;
    CHECK_OK(dse_mp_build(&mp, &n, NULL));
    CHECK(dse_net_find(&n, "fire2/expand1x1") < 0);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "fire2/concat")].out_c, 128);
    mp.pct3x3 = 0.0;
    CHECK_OK(dse_mp_build(&mp, &n, NULL));
    CHECK(dse_net_find(&n, "fire2/expand3x3") < 0);
    dse_net_deinit(&n);
}

static void test_generator_macro_and_errors(void) {
    struct dse_mp mp = dse_mp_squeezenet_v10();
    struct dse_err err = { 0 };
    struct dse_net n;
    const char *key;
    dse_net_init(&n, "t", 1, 1, 1);
    /* Fashion-MNIST macro: 28x28x1, 10 classes, conv1 3x3/1 pad 1, pools after conv1,
     * fire4, fire8: 28 -> 14 -> 7 -> 3 (ceil((7 - 3) / 2) + 1). */
    mp.input_c = 1, mp.input_h = mp.input_w = 28, mp.classes = 10;
    mp.conv1_kernel = 3, mp.conv1_stride = 1, mp.conv1_pad = 1;
    CHECK_OK(dse_mp_build(&mp, &n, NULL));
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "pool1")].out_h, 14);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "pool4")].out_h, 7);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "pool8")].out_h, 3);
    CHECK_INT_EQ(n.layers[dse_net_find(&n, "conv10")].out_c, 10);
    mp.dropout = 0;
    CHECK_OK(dse_mp_build(&mp, &n, NULL));
    CHECK(dse_net_find(&n, "drop9") < 0);
    mp.fires = 3; /* names follow the count: conv5 is the classifier */
    mp.pools = DSE_MP_POOL_CONV1 | DSE_MP_POOL_FIRE(3);
    CHECK_OK(dse_mp_build(&mp, &n, NULL));
    CHECK(dse_net_find(&n, "conv5") >= 0);
    CHECK(dse_net_find(&n, "pool5") == n.n_layers - 2);

    mp = dse_mp_squeezenet_v10();
    mp.sr = 1.5;
    CHECK_INT_EQ(dse_mp_check(&mp, &key, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(key, "sr");
    CHECK_STR_EQ(err.msg, "sr = 1.5 is out of range; expected 0 < sr <= 1");
    CHECK_INT_EQ(dse_mp_build(&mp, &n, NULL), DSE_ERR_CONFIG);
    mp = dse_mp_squeezenet_v10();
    mp.pools |= DSE_MP_POOL_FIRE(12);
    CHECK_INT_EQ(dse_mp_check(&mp, &key, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(key, "pools");
    CHECK_STR_EQ(err.msg, "pools names a Fire module past the last one (fire9)");
    /* Too many pools for a small input: the shape error names the layer. */
    mp = dse_mp_squeezenet_v10();
    mp.input_h = mp.input_w = 16;
    mp.pools = ~(uint64_t)0 & (DSE_MP_POOL_CONV1 | (((uint64_t)2 << 9) - 4));
    CHECK_INT_EQ(dse_mp_build(&mp, &n, &err), DSE_ERR_SHAPE);
    dse_net_deinit(&n);

    uint64_t pools;
    char buf[64];
    CHECK_INT_EQ(dse_mp_pools_parse("conv1,fire4,fire8", &pools), 0);
    CHECK(pools == (DSE_MP_POOL_CONV1 | DSE_MP_POOL_FIRE(4) | DSE_MP_POOL_FIRE(8)));
    dse_mp_pools_str(pools, buf, sizeof buf);
    CHECK_STR_EQ(buf, "conv1,fire4,fire8");
    CHECK_INT_EQ(dse_mp_pools_parse("conv1,fire1", &pools), -1);
    CHECK_INT_EQ(dse_mp_pools_parse("pool4", &pools), -1);
    CHECK_INT_EQ(dse_mp_pools_parse("", &pools), 0);
    CHECK(pools == 0);
}

/* Model-zoo layer types (issue #14): depthwise conv takes its groups from its input,
 * flatten and reshape keep the values, slice takes a channel range or an equal part. */
static void test_zoo_shapes(void) {
    struct dse_net n;
    struct dse_err err = { 0 };
    dse_net_init(&n, "zoo", 12, 6, 4);
    struct dse_layer dw = dse_layer_make(DSE_LAYER_CONV, "dw");
    dw.num_output = 24, dw.kernel_h = dw.kernel_w = 3, dw.pad_h = dw.pad_w = 1, dw.depthwise = 1;
    CHECK_OK(dse_net_add(&n, &dw, &err));
    struct dse_layer s = dse_layer_make(DSE_LAYER_SLICE, "part2of3");
    s.slice_part = 2, s.slice_parts = 3;
    CHECK_OK(dse_net_add(&n, &s, &err));
    struct dse_layer r = dse_layer_make(DSE_LAYER_RESHAPE, "r");
    r.dims[0] = 0, r.dims[1] = -1, r.dims[2] = 2;
    CHECK_OK(dse_net_add(&n, &r, &err));
    struct dse_layer f = dse_layer_make(DSE_LAYER_FLATTEN, "flat");
    CHECK_OK(dse_net_add(&n, &f, &err));
    struct dse_layer sg = dse_layer_make(DSE_LAYER_SIGMOID, "sig");
    sg.in_place = 1;
    CHECK_OK(dse_net_add(&n, &sg, &err));
    CHECK_OK(dse_net_infer(&n, NULL, &err));
    CHECK_INT_EQ(n.layers[0].groups, 12);               /* one group per input channel */
    CHECK_INT_EQ(n.layers[0].out_c, 24);
    CHECK_INT_EQ(n.layers[1].out_c, 8);                 /* channels 16..23 of 24 */
    CHECK_INT_EQ(n.layers[2].out_c, 8);                 /* 8 x 24 values as 8 x 12 x 2 */
    CHECK_INT_EQ(n.layers[2].out_h, 12);
    CHECK_INT_EQ(n.layers[2].out_w, 2);
    CHECK_INT_EQ(n.layers[3].out_c, 8 * 6 * 4);
    CHECK_INT_EQ(n.layers[3].out_h, 1);
    CHECK_INT_EQ(n.layers[4].out_c, 192);
    /* a range past the channels is a shape error naming the layer */
    n.layers[1].slice_parts = 0, n.layers[1].slice_begin = 20, n.layers[1].slice_end = 30;
    CHECK_INT_EQ(dse_net_infer(&n, "zoo.prototxt", &err), DSE_ERR_SHAPE);
    CHECK_STR_EQ(err.msg, "layer 'part2of3' (slice): channels 20 to 30 are not within the input's 24 channels");
    CHECK_STR_EQ(dse_layer_type_str(DSE_LAYER_POWER), "power");
    /* roles: each suffix once, read back to its role; a name no role has is NONE */
    for (int k = 1; k < DSE_ROLE_COUNT; k++) {
        CHECK(dse_role_suffix((enum dse_role)k)[0] != '\0');
        CHECK_INT_EQ(dse_role_from_suffix(dse_role_suffix((enum dse_role)k)), k);
    }
    CHECK_INT_EQ(dse_role_from_suffix("dw"), DSE_ROLE_NONE);
    CHECK_STR_EQ(dse_role_suffix(DSE_ROLE_NONE), "");
    dse_net_deinit(&n);
}

/* metaparams/mp.def: every row has a key, a section, a doc line and a default inside its
 * range; every range check rejects a value just outside it with a message that names the
 * key, and the keys are found by name. */
static void test_mp_table(void) {
    struct dse_mp def = dse_mp_squeezenet_v10();
    struct dse_err err = { 0 };
    const char *key;
    CHECK_OK(dse_mp_check(&def, &key, &err));
    CHECK(key == NULL);
    for (int k = 0; k < DSE_MP_COUNT; k++) {
        const struct dse_mp_info *in = &dse_mp_info[k];
        CHECK(in->key && in->key[0] && in->doc && in->doc[0]);
        CHECK(!strcmp(in->section, "metaparams") || !strcmp(in->section, "macro"));
        CHECK_INT_EQ(dse_mp_find(in->key), k);
        CHECK(dse_mp_is_default(&def, (enum dse_mp_key)k));
        /* One value past each end (pools: a module past the last), on SqueezeNet v1.0 with
         * one module and no increment or pools, so that no check across keys fires first. */
        struct dse_mp_value bad[2];
        int n_bad = 0;
        switch (in->type) {
        case DSE_MP_TYPE_INT:
        case DSE_MP_TYPE_BYPASS:
            bad[n_bad++] = (struct dse_mp_value){ .num = in->lo - 1 };
            bad[n_bad++] = (struct dse_mp_value){ .num = in->hi + 1 };
            break;
        case DSE_MP_TYPE_REAL:
            bad[n_bad++] = (struct dse_mp_value){ .num = in->bnd == DSE_MP_BND_LO_OPEN ? in->lo : in->lo - 0.5 };
            bad[n_bad++] = (struct dse_mp_value){ .num = in->bnd == DSE_MP_BND_HI_OPEN ? in->hi : in->hi + 0.5 };
            break;
        case DSE_MP_TYPE_POOLS:
            bad[n_bad++] = (struct dse_mp_value){ .mask = DSE_MP_POOL_FIRE(3) };
            break;
        }
        for (int b = 0; b < n_bad; b++) {
            struct dse_mp mp = dse_mp_squeezenet_v10();
            mp.fires = 1, mp.incr_e = 0, mp.pools = 0;
            CHECK_OK(dse_mp_check(&mp, NULL, NULL));
            dse_mp_set(&mp, (enum dse_mp_key)k, bad[b]);
            CHECK(!dse_mp_is_default(&mp, (enum dse_mp_key)k));
            err.msg[0] = '\0';
            key = NULL;
            CHECK_INT_EQ(dse_mp_check(&mp, &key, &err), DSE_ERR_CONFIG);
            CHECK(key && !strcmp(key, in->key));
            CHECK(!strncmp(err.msg, in->key, strlen(in->key)) && err.msg[strlen(in->key)] == ' ');
            if (!key || strcmp(key, in->key)) printf("  mp-table: %s: %s\n", in->key, err.msg);
        }
        /* get and set agree, and set touches only its own field */
        struct dse_mp mp = dse_mp_squeezenet_v10();
        dse_mp_set(&mp, (enum dse_mp_key)k, bad[0]);
        for (int j = 0; j < DSE_MP_COUNT; j++)
            CHECK_INT_EQ(dse_mp_is_default(&mp, (enum dse_mp_key)j), j != k);
        dse_mp_set(&mp, (enum dse_mp_key)k, dse_mp_get(&def, (enum dse_mp_key)k));
        CHECK(dse_mp_is_default(&mp, (enum dse_mp_key)k));
    }
    CHECK_INT_EQ(dse_mp_find("pct3x33"), -1);
    CHECK_INT_EQ(dse_mp_find(NULL), -1);
    /* Messages as users see them (tests/bad_spaces pins them with file and line). */
    struct dse_mp mp = dse_mp_squeezenet_v10();
    mp.fire_dropout = 1.0;
    CHECK_INT_EQ(dse_mp_check(&mp, &key, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "fire_dropout = 1 is out of range; expected 0 <= fire_dropout < 1");
    mp = dse_mp_squeezenet_v10();
    mp.freq = 61;
    CHECK_INT_EQ(dse_mp_check(&mp, &key, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "freq = 61 is out of range; expected 1 to 60");
}

/* fire_dropout (mp.def's newest row): an in-place dropout after every Fire module,
 * before its pool; no parameters, so the costs stay those of Table 5.1. */
static void test_generator_fire_dropout(void) {
    struct dse_mp mp = dse_mp_squeezenet_v10();
    struct dse_net n;
    dse_net_init(&n, "t", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, &n, NULL));
    int plain = n.n_layers;
    CHECK(dse_net_find(&n, "drop_fire2") < 0);
    mp.fire_dropout = 0.25;
    CHECK_OK(dse_mp_build(&mp, &n, NULL));
    CHECK_INT_EQ(n.n_layers, plain + 8);
    for (int k = 2; k <= 9; k++) {
        char name[32], concat[32];
        snprintf(name, sizeof name, "drop_fire%d", k);
        snprintf(concat, sizeof concat, "fire%d/concat", k);
        int i = dse_net_find(&n, name), c = dse_net_find(&n, concat);
        CHECK(i >= 0 && i == c + 1);
        if (i < 0) continue;
        CHECK_INT_EQ(n.layers[i].type, DSE_LAYER_DROPOUT);
        CHECK_NEAR(n.layers[i].dropout_ratio, 0.25, 1e-7);
        CHECK(n.layers[i].in_place);
        CHECK_INT_EQ(n.layers[i].out_c, n.layers[c].out_c);
    }
    CHECK_INT_EQ(dse_net_find(&n, "pool4"), dse_net_find(&n, "drop_fire4") + 1);
    CHECK(dse_net_find(&n, "drop9") >= 0); /* the classifier's dropout stays */
    CHECK_INT_EQ(params_of(&n), 1248424);
    /* With simple bypass the dropout follows the module's add, whose output it drops. */
    mp.bypass = DSE_BYPASS_SIMPLE;
    CHECK_OK(dse_mp_build(&mp, &n, NULL));
    CHECK_INT_EQ(dse_net_find(&n, "drop_fire3"), dse_net_find(&n, "fire3/bypass_add") + 1);
    dse_net_deinit(&n);
}

static const struct check_case cases[] = {
    { "net-pool-rounding", test_pool_rounding },
    { "net-conv-shapes",   test_conv_shapes },
    { "net-shape-errors",  test_shape_errors },
    { "net-fire",          test_fire_expansion },
    { "net-nin",           test_nin_shapes },
    { "net-squeezenet",    test_squeezenet_shapes },
    { "net-in-place",      test_in_place_rules },
    { "net-copy-types",    test_copy_and_types },
    { "net-zoo-shapes",    test_zoo_shapes },
    { "gen-squeezenet",    test_generator_squeezenet },
    { "gen-rounding",      test_generator_rounding },
    { "gen-macro-errors",  test_generator_macro_and_errors },
    { "gen-fire-dropout",  test_generator_fire_dropout },
    { "mp-table",          test_mp_table },
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
