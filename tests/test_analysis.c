/* test_analysis.c: closed-form costs against the thesis tables, memory estimates, report
 * rows and deltas. Networks are built in C (tests/nets.h), no files involved.
 *
 * Sources: Forrest Iandola, "Exploring the Design Space of Deep Convolutional Neural
 * Networks at Large Scale", PhD thesis, UC Berkeley, 2016 (EECS-2016-207): Table 4.2 (NiN),
 * Tables 4.3-4.8 (its modifications), Table 5.1 (SqueezeNet), eqs. 3.3 and 3.4 (FireCaffe's
 * communication model; F. Iandola, K. Ashraf, M. Moskewicz, K. Keutzer, "FireCaffe: near-linear
 * acceleration of deep neural network training on compute clusters", arXiv 1511.00175). Page
 * numbers were not available to us when these tests were written; the table numbers are the
 * reference. */
#include "analysis/analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/nets.h"

/* x rounded to 3 significant digits, as the thesis prints MB and TF figures. */
static double sig3(double x) {
    if (x == 0) return 0;
    double p = pow(10.0, 2 - floor(log10(fabs(x))));
    return round(x * p) / p;
}

struct costed {
    struct dse_net         net;
    struct dse_cost_layer *layers;
    struct dse_cost_totals tot;
};

static void cost(struct costed *c, int64_t batch) {
    c->layers = calloc((size_t)c->net.n_layers, sizeof *c->layers);
    CHECK_OK(dse_cost_net(&c->net, batch, c->layers, &c->tot, NULL));
}

static void costed_free(struct costed *c) {
    free(c->layers);
    dse_net_deinit(&c->net);
}

static const struct dse_cost_layer *layer(const struct costed *c, const char *name) {
    int i = dse_net_find(&c->net, name);
    DSE_ASSERT(i >= 0);
    return &c->layers[i];
}

static void test_nin_table_4_2(void) {
    struct costed c;
    CHECK_OK(build_nin(&c.net, &nin_base));
    cost(&c, 1024);
    /* Per-layer forward FLOPs at batch 1024 = 2 * Cin*k*k * Cout * H*W * 1024. */
    CHECK_INT_EQ(layer(&c, "conv1")->flops, 2LL * 363 * 96 * 55 * 55 * 1024);
    CHECK_INT_EQ(layer(&c, "conv2")->flops, 2LL * 96 * 96 * 55 * 55 * 1024);
    CHECK_INT_EQ(layer(&c, "conv4")->flops, 2LL * 2400 * 256 * 27 * 27 * 1024);
    CHECK_INT_EQ(layer(&c, "conv7")->flops, 2LL * 2304 * 384 * 13 * 13 * 1024);
    CHECK_INT_EQ(layer(&c, "conv10")->flops, 2LL * 3456 * 1024 * 6 * 6 * 1024);
    CHECK_INT_EQ(layer(&c, "conv12")->flops, 2LL * 1024 * 1000 * 6 * 6 * 1024);
    CHECK_INT_EQ(layer(&c, "pool3")->flops, 0);
    /* Table 4.2 totals: 30.4 MB of parameters, 2.27 TF at batch 1024. The MB figures of
     * Tables 4.2-4.8 are weights only (4 bytes each): with biases, Table 4.6's 42.6 MB
     * would read 42.7 MB (see experiments/nin_local_global/README.md). */
    CHECK_INT_EQ(c.tot.weights, 7589920);
    CHECK_INT_EQ(c.tot.params, 7595176);
    CHECK_NEAR(sig3(c.tot.weights * 4 / 1e6), 30.4, 1e-9);
    CHECK_INT_EQ(c.tot.flops, 2211992640LL * 1024);
    CHECK_NEAR(sig3(c.tot.flops / 1e12), 2.27, 1e-9);
    CHECK_INT_EQ(c.tot.flops_train, 3 * c.tot.flops);
    /* activations: output values of each non-in-place layer */
    CHECK_INT_EQ(layer(&c, "conv1")->activations, 96LL * 55 * 55 * 1024);
    CHECK_INT_EQ(layer(&c, "relu1")->activations, 0);
    CHECK_INT_EQ(layer(&c, "pool12")->activations, 1000LL * 1024);
    costed_free(&c);
}

/* Tables 4.3-4.8: totals of each NiN modification at batch 1024. */
static void test_nin_modifications(void) {
    static const struct {
        const char *what;
        struct nin_opts o;
        double mb, tf;   /* thesis figure; 0 = not printed */
    } mods[] = {
        /* Table 4.3. The thesis prints 2.92 TF; its own definition gives 2.913 TF
         * (conv1's FLOPs x4, all else unchanged), which rounds to 2.91. We keep our
         * figure and document the difference (experiments/nin_local_global/README.md). */
        { "4x input channels", { 12, 227, 384, 3, 1, 1000, 1 }, 0, 2.91 },
        { "4x filters conv8",  { 3, 227, 1536, 3, 1, 1000, 1 }, 33.9, 2.57 }, /* Table 4.4 */
        { "conv7 6x6 pad 2",   { 3, 227, 384, 6, 2, 1000, 1 }, 41.0, 2.99 },  /* Table 4.5 */
        { "4000 classes",      { 3, 227, 384, 3, 1, 4000, 1 }, 42.6, 2.49 },  /* Table 4.6 */
        { "pool3 removed",     { 3, 227, 384, 3, 1, 1000, 0 }, 30.4, 8.65 },  /* Table 4.7 */
        { "454x454 input",     { 3, 454, 384, 3, 1, 1000, 1 }, 30.4, 9.67 },  /* Table 4.8 */
    };
    for (int i = 0; i < DSE_ARRAY_LEN(mods); i++) {
        struct costed c;
        int before = check_failures;
        CHECK_OK(build_nin(&c.net, &mods[i].o));
        cost(&c, 1024);
        if (mods[i].mb > 0) CHECK_NEAR(sig3(c.tot.weights * 4 / 1e6), mods[i].mb, 1e-9);
        CHECK_NEAR(sig3(c.tot.flops / 1e12), mods[i].tf, 1e-9);
        if (check_failures > before) fprintf(stderr, "  (modification: %s)\n", mods[i].what);
        costed_free(&c);
    }
}

static void test_squeezenet_table_5_1(void) {
    struct costed c;
    struct dse_cost_row *rows;
    CHECK_OK(build_squeezenet(&c.net, 0, DSE_BYPASS_NONE));
    cost(&c, 1);
    rows = calloc((size_t)c.net.n_layers, sizeof *rows);
    int n = dse_cost_rows(&c.net, c.layers, 0, rows);
    /* Per-module parameters of thesis Table 5.1 (weights + biases). */
    static const struct { const char *name; int64_t params; } want[] = {
        { "conv1", 14208 },  { "fire2", 11920 },  { "fire3", 12432 },  { "fire4", 45344 },
        { "fire5", 49440 },  { "fire6", 104880 }, { "fire7", 111024 }, { "fire8", 188992 },
        { "fire9", 197184 }, { "conv10", 513000 },
    };
    for (int w = 0; w < DSE_ARRAY_LEN(want); w++) {
        int found = 0;
        for (int r = 0; r < n; r++)
            if (!strcmp(rows[r].name, want[w].name)) {
                found = 1;
                CHECK_INT_EQ(rows[r].cost.params, want[w].params);
                if (!strcmp(want[w].name, "fire2")) {
                    CHECK_STR_EQ(rows[r].type, "fire");
                    CHECK_INT_EQ(rows[r].out_c, 128);
                }
            }
        CHECK(found);
    }
    CHECK_INT_EQ(c.tot.params, 1248424); /* Table 5.1 total */
    /* fire2 FLOPs by hand: squeeze 96->16, expand 16->64 (1x1) and 16->64 (3x3), 55x55 */
    int64_t fire2 = 2LL * 55 * 55 * (96 * 16 + 16 * 64 + 16 * 9 * 64);
    for (int r = 0; r < n; r++)
        if (!strcmp(rows[r].name, "fire2")) CHECK_INT_EQ(rows[r].cost.flops, fire2);
    free(rows);
    costed_free(&c);

    CHECK_OK(build_squeezenet(&c.net, 1, DSE_BYPASS_NONE));
    cost(&c, 1);
    CHECK_INT_EQ(c.tot.params, 1235496); /* SqueezeNet v1.1 (DeepScale release) */
    costed_free(&c);
    CHECK_OK(build_squeezenet(&c.net, 0, DSE_BYPASS_SIMPLE));
    cost(&c, 1);
    CHECK_INT_EQ(c.tot.params, 1248424); /* simple bypass adds no parameters (Table 5.3) */
    costed_free(&c);
    CHECK_OK(build_squeezenet(&c.net, 0, DSE_BYPASS_COMPLEX));
    cost(&c, 1);
    /* + 1x1 bypass convs 96->128, 128->256, 256->384, 384->512 with biases */
    CHECK_INT_EQ(c.tot.params, 1248424 + 12416 + 33024 + 98688 + 197120);
    CHECK_INT_EQ(c.tot.params, 1589672);
    costed_free(&c);
}

static void test_batch_scaling(void) {
    struct costed a, b;
    CHECK_OK(build_squeezenet(&a.net, 0, DSE_BYPASS_NONE));
    CHECK_OK(build_squeezenet(&b.net, 0, DSE_BYPASS_NONE));
    cost(&a, 1);
    cost(&b, 32);
    CHECK_INT_EQ(b.tot.flops, 32 * a.tot.flops);
    CHECK_INT_EQ(b.tot.params, a.tot.params);
    /* the loss is one scalar per batch, every other tensor scales */
    CHECK_INT_EQ(b.tot.activations - 1, 32 * (a.tot.activations - 1));
    CHECK_INT_EQ(dse_cost_net(&a.net, 0, a.layers, &a.tot, NULL), DSE_ERR_CONFIG);
    costed_free(&a);
    costed_free(&b);
}

/* A tiny net whose memory estimates can be worked out by hand. */
static void test_memory_estimates(void) {
    struct costed c;
    dse_net_init(&c.net, "tiny", 1, 4, 4);
    net_conv(&c.net, "conv", 2, 3, 1, 1);           /* 2x4x4 = 32 values, 18 + 2 params */
    net_simple(&c.net, DSE_LAYER_RELU, "relu", 1);  /* in place */
    net_pool(&c.net, DSE_LAYER_MAXPOOL, "pool", 2, 2, 0); /* 2x2x2 = 8 values */
    struct dse_layer fc = dse_layer_make(DSE_LAYER_FC, "fc");
    fc.num_output = 3;                              /* 8*3 + 3 = 27 params, 3 values */
    dse_net_add(&c.net, &fc, NULL);
    CHECK_OK(dse_net_infer(&c.net, NULL, NULL));
    cost(&c, 1);
    CHECK_INT_EQ(c.tot.params, 47);
    CHECK_INT_EQ(c.tot.activations, 43);
    CHECK_INT_EQ(c.tot.input_values, 16);
    /* live: input 16 + conv 32 = 48 at the conv; the relu works in place; at the pool the
     * input is dead: 32 + 8 = 40; at the fc: 8 + 3. Peak 48. */
    CHECK_INT_EQ(c.tot.peak_live_values, 48);
    CHECK_INT_EQ(c.tot.mem_infer_bytes, (47 + 48) * 4);
    /* training: input + 2 x activations + 3 x params */
    CHECK_INT_EQ(c.tot.mem_train_bytes, (16 + 2 * 43 + 3 * 47) * 4);
    CHECK_INT_EQ(c.tot.flops, 2 * (18 * 16 + 24));
    CHECK_INT_EQ(c.layers[0].other_ops, 32); /* bias adds */
    costed_free(&c);
}

/* Append a classifier head to n: none, a loss, or a softmax (not in place). */
static int add_head(struct dse_net *n, int head) {
    if (head == 1) return net_simple(n, DSE_LAYER_SOFTMAX_LOSS, "loss", 0) | dse_net_infer(n, NULL, NULL);
    if (head == 2) return net_simple(n, DSE_LAYER_SOFTMAX, "prob", 0) | dse_net_infer(n, NULL, NULL);
    return 0;
}

/* Reach of each NiN modification (thesis ch. 4: local vs global changes), without a head
 * and with a loss or softmax at the end, which must not change the reach: a change that
 * reaches pool12 is global whatever follows it. */
static void test_delta_reach(void) {
    static const struct { struct nin_opts o; enum dse_reach reach; const char *first, *last; } cases[] = {
        { { 12, 227, 384, 3, 1, 1000, 1 }, DSE_REACH_LOCAL, "conv1", "conv1" },
        { { 3, 227, 1536, 3, 1, 1000, 1 }, DSE_REACH_LOCAL, "conv8", "conv9" },
        { { 3, 227, 384, 6, 2, 1000, 1 }, DSE_REACH_REGIONAL, "conv7", "pool9" },
        { { 3, 227, 384, 3, 1, 4000, 1 }, DSE_REACH_LOCAL, "conv12", "pool12" },
        { { 3, 227, 384, 3, 1, 1000, 0 }, DSE_REACH_GLOBAL, "pool3", "pool12" },
        { { 3, 454, 384, 3, 1, 1000, 1 }, DSE_REACH_GLOBAL, "conv1", "pool12" },
        { { 3, 227, 384, 3, 1, 1000, 1 }, DSE_REACH_NONE, NULL, NULL },
    };
    static const char *const head_name[3] = { NULL, "loss", "prob" };
    for (int head = 0; head < 3; head++) {
        struct costed base;
        CHECK_OK(build_nin(&base.net, &nin_base) | add_head(&base.net, head));
        cost(&base, 1);
        struct dse_cost_row *rb = calloc((size_t)base.net.n_layers, sizeof *rb);
        int nb = dse_cost_rows(&base.net, base.layers, 0, rb);
        for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
            struct costed v;
            CHECK_OK(build_nin(&v.net, &cases[i].o) | add_head(&v.net, head));
            cost(&v, 1);
            struct dse_cost_row *rv = calloc((size_t)v.net.n_layers, sizeof *rv);
            struct dse_delta_row *dr = calloc((size_t)(nb + v.net.n_layers), sizeof *dr);
            struct dse_delta d;
            int nv = dse_cost_rows(&v.net, v.layers, 0, rv);
            dse_delta_rows(rb, nb, rv, nv, dr, &d);
            int before = check_failures;
            CHECK_STR_EQ(dse_reach_str(d.reach), dse_reach_str(cases[i].reach));
            if (cases[i].first) {
                /* a new class count changes the head too; nothing else reaches it */
                const char *last = head && cases[i].o.classes != 1000 ? head_name[head] : cases[i].last;
                const struct dse_delta_row *f = &dr[d.first_changed], *l = &dr[d.last_changed];
                CHECK_STR_EQ((f->variant ? f->variant : f->base)->name, cases[i].first);
                CHECK_STR_EQ((l->variant ? l->variant : l->base)->name, last);
            }
            if (!cases[i].o.pool3) { /* the removed pool is listed where it stood */
                int k = 0;
                while (k < d.n_rows && dr[k].kind != DSE_DELTA_REMOVED) k++;
                CHECK(k < d.n_rows && k > 0);
                if (k < d.n_rows && k > 0) {
                    CHECK_STR_EQ(dr[k].base->name, "pool3");
                    CHECK_STR_EQ(dr[k - 1].variant->name, "relu3");
                }
            }
            if (check_failures > before)
                fprintf(stderr, "  (case %d, head %s)\n", i, head_name[head] ? head_name[head] : "none");
            free(rv);
            free(dr);
            costed_free(&v);
        }
        free(rb);
        costed_free(&base);
    }
    /* SqueezeNet v1.0 -> v1.1 (its loss the same) changes conv1 .. pool10: global */
    struct costed a, b;
    CHECK_OK(build_squeezenet(&a.net, 0, DSE_BYPASS_NONE));
    CHECK_OK(build_squeezenet(&b.net, 1, DSE_BYPASS_NONE));
    cost(&a, 1);
    cost(&b, 1);
    struct dse_cost_row *ra = calloc((size_t)a.net.n_layers, sizeof *ra);
    struct dse_cost_row *rb = calloc((size_t)b.net.n_layers, sizeof *rb);
    struct dse_delta_row *dr = calloc((size_t)(a.net.n_layers + b.net.n_layers), sizeof *dr);
    struct dse_delta d;
    int na = dse_cost_rows(&a.net, a.layers, 0, ra), nb = dse_cost_rows(&b.net, b.layers, 0, rb);
    dse_delta_rows(ra, na, rb, nb, dr, &d);
    CHECK_STR_EQ(dse_reach_str(d.reach), "global");
    const struct dse_delta_row *l = d.last_changed >= 0 ? &dr[d.last_changed] : NULL;
    CHECK(l && !strcmp((l->variant ? l->variant : l->base)->name, "pool10"));
    free(ra);
    free(rb);
    free(dr);
    costed_free(&a);
    costed_free(&b);
}

/* Repeated names (legal in Caffe files, where only blobs must be unique) pair one to
 * one: the second "relu" of the base is removed, not silently matched twice. */
static void test_delta_duplicates(void) {
    struct dse_cost_row b[4], v[3];
    struct dse_delta_row out[7];
    struct dse_delta d;
    memset(b, 0, sizeof b);
    memset(v, 0, sizeof v);
    const char *bn[4] = { "conv", "relu", "relu", "fc" }, *vn[3] = { "conv", "relu", "fc" };
    for (int i = 0; i < 4; i++) {
        dse_strlcpy(b[i].name, bn[i], DSE_NAME_MAX);
        b[i].type = "x", b[i].out_c = b[i].out_h = b[i].out_w = 1;
        b[i].in_place = i == 1 || i == 2;
    }
    for (int i = 0; i < 3; i++) {
        dse_strlcpy(v[i].name, vn[i], DSE_NAME_MAX);
        v[i].type = "x", v[i].out_c = v[i].out_h = v[i].out_w = 1;
        v[i].in_place = i == 1;
    }
    dse_delta_rows(b, 4, v, 3, out, &d);
    CHECK_INT_EQ(d.n_rows, 4);
    CHECK_INT_EQ(out[2].kind, DSE_DELTA_REMOVED);
    CHECK(out[2].base == &b[2]);
    CHECK(out[1].base == &b[1] && out[1].variant == &v[1]);
    CHECK(out[3].base == &b[3] && out[3].kind == DSE_DELTA_SAME);
    CHECK_STR_EQ(dse_reach_str(d.reach), "local");
}

static void test_rows_expand(void) {
    struct costed c;
    CHECK_OK(build_squeezenet(&c.net, 0, DSE_BYPASS_NONE));
    cost(&c, 1);
    struct dse_cost_row *rows = calloc((size_t)c.net.n_layers, sizeof *rows);
    CHECK_INT_EQ(dse_cost_rows(&c.net, c.layers, 1, rows), c.net.n_layers);
    CHECK_INT_EQ(dse_cost_rows(&c.net, c.layers, 0, rows), 18); /* conv1 relu pool1 8 fires 2 pools drop conv10 relu pool10 loss */
    int64_t sum = 0;
    for (int i = 0; i < 18; i++) sum += rows[i].cost.params;
    CHECK_INT_EQ(sum, c.tot.params);
    free(rows);
    costed_free(&c);
}

/* Block keys of layer names (analysis/block.c; issue #34): the three naming styles of
 * PyTorch's exporters, dse's own exports (Caffe's part names), and names with no module. */
static void test_block_key(void) {
    static const struct {
        const char *name, *key, *prefix; /* prefix: the block's name in a report */
    } t[] = {
        { "layer1.0.conv1",                                "layer1.0",   "layer1.0"             },
        { "layer1.0.downsample.0",                         "layer1.0",   "layer1.0"             },
        { "/layer1/layer1.0/conv1/Conv",                   "layer1.0",   "/layer1/layer1.0"     },
        { "/layer1/layer1.0/Add",                          "layer1.0",   "/layer1/layer1.0"     },
        { "/layer2/layer2.0/downsample/downsample.0/Conv", "layer2.0",   "/layer2/layer2.0"     },
        { "features.3.squeeze",                            "features.3", "features.3"           },
        { "/features/features.3/Concat",                   "features.3", "/features/features.3" },
        { "features.0",                                    "features.0", "features.0"           },
        { "/conv1/Conv",                                   "conv1",      "/conv1"               },
        { "fire2/squeeze1x1",                              "fire2",      "fire2"                },
        { "conv1/bn",                                      "conv1",      "conv1"                },
        { "/head.0.x/Relu",                                "head.0",     "/head.0"              },
        { "a..b.c",                                        "a.b",        "a..b"                 },
        { "Conv_0",                                        "Conv_0",     "Conv_0"               },
        { "conv1",                                         "conv1",      "conv1"                },
        { "/Flatten",                                      "",           ""                     },
        { "",                                              "",           ""                     },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(t); i++) {
        char key[DSE_NAME_MAX];
        int n = dse_block_key(t[i].name, key, sizeof key);
        CHECK_STR_EQ(key, t[i].key);
        CHECK_INT_EQ(n, (int)strlen(t[i].prefix));
        CHECK(!strncmp(t[i].name, t[i].prefix, strlen(t[i].prefix)));
    }
}

/* Rows by view over chains of convs named as exporters name them: blocks are runs of one
 * key, named by the prefix; a single layer keeps its name; every view sums to the totals. */
static void test_rows_blocks(void) {
    static const struct {
        const char *names[12];
        const char *rows; /* the BLOCKS view: name:first-last, or name alone for one layer */
    } t[] = {
        { { "conv1", "relu", "layer1.0.conv1", "layer1.0.bn1", "layer1.0.relu", "layer1.0.conv2",
            "layer1.1.conv1", "layer1.1.conv2", "fc" },
          "conv1 relu layer1.0:2-5 layer1.1:6-7 fc" },
        { { "/conv1/Conv", "/relu/Relu", "/layer1/layer1.0/conv1/Conv", "/layer1/layer1.0/relu/Relu",
            "/layer1/layer1.0/Add", "/layer2/layer2.0/downsample/downsample.0/Conv",
            "/layer2/layer2.0/conv1/Conv", "/Flatten", "/Reshape", "/fc/Gemm" },
          "/conv1/Conv /relu/Relu /layer1/layer1.0:2-4 /layer2/layer2.0:5-6 /Flatten /Reshape /fc/Gemm" },
        { { "features.0", "features.1", "features.2", "features.3.squeeze", "features.3.squeeze_activation",
            "features.3.expand1x1", "features.3.expand1x1_activation", "features.4.squeeze",
            "classifier.1", "classifier.2" },
          "features.0 features.1 features.2 features.3:3-6 features.4.squeeze classifier.1 classifier.2" },
        { { "Conv_0", "Relu_1", "Conv_2", "conv1", "relu_conv1" }, "Conv_0 Relu_1 Conv_2 conv1 relu_conv1" },
        { { "conv1", "conv1/bn", "conv1/scale", "fire2/squeeze1x1", "fire2/relu_squeeze1x1", "pool10" },
          "conv1:0-2 fire2:3-4 pool10" },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(t); i++) {
        struct costed c;
        dse_net_init(&c.net, "blocks", 3, 8, 8);
        int n = 0;
        for (; n < 12 && t[i].names[n]; n++) CHECK_OK(net_conv(&c.net, t[i].names[n], 4 + n, 3, 1, 1));
        CHECK_OK(dse_net_infer(&c.net, NULL, NULL));
        cost(&c, 2);
        struct dse_cost_row rows[12];
        char got[512] = "";
        int nr = dse_cost_rows(&c.net, c.layers, DSE_ROWS_BLOCKS, rows);
        for (int r = 0; r < nr; r++) {
            char piece[DSE_NAME_MAX + 32] = "";
            if (rows[r].last > rows[r].first) snprintf(piece, sizeof piece, ":%d-%d", rows[r].first, rows[r].last);
            if (strlen(got) + strlen(rows[r].name) + strlen(piece) + 2 < sizeof got)
                strcat(strcat(strcat(got, r ? " " : ""), rows[r].name), piece);
            CHECK_STR_EQ(rows[r].type, rows[r].last > rows[r].first ? "block" : "conv");
            const struct dse_layer *last = &c.net.layers[rows[r].last]; /* the block's output */
            CHECK_INT_EQ(rows[r].out_c, last->out_c);
            CHECK_INT_EQ(rows[r].rf_h, last->rf_h);
        }
        CHECK_STR_EQ(got, t[i].rows);
        /* every view: each layer in one row, the rows' costs summing to the totals */
        for (enum dse_rows v = DSE_ROWS_MODULES; v <= DSE_ROWS_BLOCKS; v++) {
            nr = dse_cost_rows(&c.net, c.layers, v, rows);
            int64_t params = 0, flops = 0, other = 0, act = 0, next = 0;
            for (int r = 0; r < nr; r++) {
                CHECK_INT_EQ(rows[r].first, next);
                next = rows[r].last + 1;
                params += rows[r].cost.params, flops += rows[r].cost.flops;
                other += rows[r].cost.other_ops, act += rows[r].cost.activations;
            }
            CHECK_INT_EQ(next, n);
            CHECK_INT_EQ(params, c.tot.params);
            CHECK_INT_EQ(flops, c.tot.flops);
            CHECK_INT_EQ(other, c.tot.other_ops);
            CHECK_INT_EQ(act, c.tot.activations);
            if (v != DSE_ROWS_BLOCKS) CHECK_INT_EQ(nr, n); /* no Fire module here */
        }
        costed_free(&c);
    }
    /* Fire modules keep their rows: SqueezeNet's blocks are its modules */
    struct costed c;
    CHECK_OK(build_squeezenet(&c.net, 1, DSE_BYPASS_NONE));
    cost(&c, 1);
    struct dse_cost_row *a = calloc((size_t)c.net.n_layers, sizeof *a), *b = calloc((size_t)c.net.n_layers, sizeof *b);
    int na = dse_cost_rows(&c.net, c.layers, DSE_ROWS_MODULES, a);
    int nb = dse_cost_rows(&c.net, c.layers, DSE_ROWS_BLOCKS, b);
    CHECK_INT_EQ(nb, na);
    for (int r = 0; r < na && r < nb; r++) {
        CHECK_STR_EQ(b[r].name, a[r].name);
        CHECK_STR_EQ(b[r].type, a[r].type);
        CHECK_INT_EQ(b[r].cost.flops, a[r].cost.flops);
    }
    free(a), free(b);
    costed_free(&c);
}

/* MACs (multiply-accumulates, what ptflops and fvcore count) beside our FLOPs (2 per
 * multiply-add): dse_cost_macs, the one rule reports, dse analyze and the search use. */
static void test_macs(void) {
    struct costed c;
    CHECK_OK(build_squeezenet(&c.net, 0, DSE_BYPASS_NONE));
    cost(&c, 1);
    /* SqueezeNet v1.0: the FLOPs of tests/golden/cli/analyze_squeezenet_v1.0.txt and
     * docs/json.md; its MACs are half of them */
    CHECK_INT_EQ(c.tot.flops, 1665335872);
    CHECK_INT_EQ(dse_cost_macs(c.tot.flops), 832667936);
    int64_t sum = 0;
    for (int i = 0; i < c.net.n_layers; i++) {
        sum += dse_cost_macs(c.layers[i].flops);
        if (!strcmp(c.net.layers[i].name, "conv1")) /* 96 filters 3x7x7 over 111x111: multiply-adds by hand */
            CHECK_INT_EQ(dse_cost_macs(c.layers[i].flops), 96LL * 3 * 7 * 7 * 111 * 111);
    }
    CHECK_INT_EQ(sum, 832667936); /* per layer, summed: the same */
    costed_free(&c);
    CHECK_OK(build_squeezenet(&c.net, 0, DSE_BYPASS_NONE));
    cost(&c, 4);
    CHECK_INT_EQ(dse_cost_macs(c.tot.flops), 4 * 832667936LL); /* whole batch, as FLOPs */
    costed_free(&c);
}

/* The analyzer's compressed-size estimate (analysis/compress_est.c, issue #35), worked by
 * hand on a tiny net (input 4x8x8: conv c1 16 3x3 = 576 weights, conv c2 32 1x1 = 512, fc
 * 10 = 320; biases 16 + 32 + 10 = 58, raw: 232 bytes; 6 tensors: headers 512 + 6 x 96 =
 * 1088 bytes). c1 (the first conv) and fc (the classifier) keep sqrt(d) (dse_net_prune_density). */
static void test_compress_est(void) {
    static const struct {
        double  density;
        int     bits;
        int64_t kept, weight, index, codebook, total;
    } cases[] = {
        /* sqrt(0.25) = 0.5: 288 + 128 + 160 kept; 4 bits each + 4 of index; 16 codes per layer */
        { .density = 0.25, .bits = 4, .kept = 576, .weight = 288, .index = 288, .codebook = 192, .total = 2088 },
        /* whole: no sparse index; min(256, kept + 1) codes per layer */
        { .density = 1, .bits = 8, .kept = 1408, .weight = 1408, .index = 0, .codebook = 3072, .total = 5800 },
        /* sqrt(0.33) x 576 = 330.9 -> 331, 0.33 x 512 = 169, sqrt(0.33) x 320 = 183.8 -> 184;
         * ceil(331 x 6 / 8) + ceil(169 x 6 / 8) + 184 x 6 / 8 = 249 + 127 + 138; indices 166 + 85 + 92 */
        { .density = 0.33, .bits = 6, .kept = 684, .weight = 514, .index = 343, .codebook = 768, .total = 2945 },
        /* 1 bit: codebooks of two (the zero and one value) */
        { .density = 0.25, .bits = 1, .kept = 576, .weight = 72, .index = 288, .codebook = 24, .total = 1704 },
    };
    for (int k = 0; k < DSE_ARRAY_LEN(cases); k++) {
        struct costed c;
        struct dse_compress_est e;
        dse_net_init(&c.net, "tiny", 4, 8, 8);
        net_conv(&c.net, "c1", 16, 3, 1, 1);
        net_simple(&c.net, DSE_LAYER_RELU, "r1", 1);
        net_conv(&c.net, "c2", 32, 1, 1, 0);
        net_simple(&c.net, DSE_LAYER_RELU, "r2", 1);
        net_pool(&c.net, DSE_LAYER_AVGPOOL, "pool", 0, 1, 1);
        struct dse_layer fc = dse_layer_make(DSE_LAYER_FC, "fc");
        fc.num_output = 10;
        dse_net_add(&c.net, &fc, NULL);
        CHECK_OK(dse_net_infer(&c.net, NULL, NULL));
        cost(&c, 1);
        CHECK_INT_EQ(dse_cost_compressed_est(&c.net, c.layers, cases[k].density, cases[k].bits, &e), cases[k].total);
        CHECK_INT_EQ(e.weights_kept, cases[k].kept);
        CHECK_INT_EQ(e.weight_bytes, cases[k].weight);
        CHECK_INT_EQ(e.index_bytes, cases[k].index);
        CHECK_INT_EQ(e.codebook_bytes, cases[k].codebook);
        CHECK_INT_EQ(e.raw_bytes, 232);
        CHECK_INT_EQ(e.header_bytes, 1088);
        CHECK_INT_EQ(e.total_bytes, cases[k].total);
        costed_free(&c);
    }
    /* SqueezeNet v1.0 at 33% density, 6 bits: Deep Compression's file is 0.47 MB (the
     * SqueezeNet paper, Iandola et al. 2016, Table 2; issue #35) with Huffman-coded weights and
     * its own per-layer densities; ours keeps sqrt(0.33) of conv10's 512,000 weights (the
     * classifier) and codes each kept weight in its full 6 bits, so it estimates more, but
     * still under a fifth of float32's 4.99 MB */
    struct costed c;
    struct dse_compress_est e;
    CHECK_OK(build_squeezenet(&c.net, 0, DSE_BYPASS_NONE));
    cost(&c, 1);
    int64_t est = dse_cost_compressed_est(&c.net, c.layers, 0.33, 6, &e);
    CHECK(est > 470000 && est * 5 < c.tot.model_bytes);
    CHECK_INT_EQ(est, e.weight_bytes + e.index_bytes + e.codebook_bytes + e.raw_bytes + e.header_bytes);
    costed_free(&c);
}

/* The communication model (analysis/comm.c) at FireCaffe's own setting: NiN, whose
 * gradients the paper gives as 30 MB per worker (arXiv 1511.00175, Fig. 3 caption), on
 * 128 GPUs. The paper plots eqs. 3.3 and 3.4 there but we could not read its bar values, so
 * the golden numbers below are the equations worked by hand from the thesis's NiN size
 * (Table 4.2: 7,589,920 weights + 5,256 biases = 7,595,176 params, 30,380,704 bytes) at a
 * round 1 GB/s: PS = 30,380,704 x 128 / 1e9 s, tree = 30,380,704 x 2 x 7 / 1e9 s. */
static void test_comm_firecaffe(void) {
    struct costed c;
    CHECK_OK(build_nin(&c.net, &nin_base));
    cost(&c, 1);
    CHECK_INT_EQ(c.tot.param_bytes, 30380704);
    CHECK_NEAR(c.tot.param_bytes / 1e6, 30.0, 0.02); /* "30MB of gradient updates" */
    struct dse_comm_opts o = { .grad_bytes = c.tot.param_bytes, .bandwidth = 1e9, .batch = 1024, .img_per_s = 100 };
    CHECK_NEAR(dse_comm_ps_s(&o, 128), 3.888730112, 1e-12);   /* eq. 3.3 */
    CHECK_NEAR(dse_comm_tree_s(&o, 128), 0.425329856, 1e-12); /* eq. 3.4: log2(128) = 7 */
    /* the tree's advantage is p / (2 log2 p): 128 / 14 at 128 workers, whatever the net */
    CHECK_NEAR(dse_comm_ps_s(&o, 128) / dse_comm_tree_s(&o, 128), 128.0 / 14.0, 1e-12);
    costed_free(&c);

    /* SqueezeNet v1.0 on 10 Gb/s (1.25 GB/s), 32 workers: 1,248,424 params (Table 5.1) x 4 =
     * 4,993,696 bytes; PS 4,993,696 x 32 / 1.25e9, tree 4,993,696 x 10 / 1.25e9 (docs/comm-model.md) */
    CHECK_OK(build_squeezenet(&c.net, 0, DSE_BYPASS_NONE));
    cost(&c, 1);
    o.grad_bytes = c.tot.param_bytes, o.bandwidth = 1.25e9;
    CHECK_NEAR(dse_comm_ps_s(&o, 32), 0.1278386176, 1e-12);
    CHECK_NEAR(dse_comm_tree_s(&o, 32), 0.039949568, 1e-12);
    costed_free(&c);
}

/* The closed forms: one worker communicates nothing; two workers cost the tree one level up
 * and one down; a non-power of two costs the next power's levels; latency alpha per message. */
static void test_comm_closed_forms(void) {
    static const struct { int64_t p; int levels; } lv[] = {
        { 1, 0 }, { 2, 1 }, { 3, 2 }, { 4, 2 }, { 5, 3 }, { 8, 3 }, { 9, 4 }, { 128, 7 }, { 65536, 16 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(lv); i++) CHECK_INT_EQ(dse_comm_tree_levels(lv[i].p), lv[i].levels);
    const double n = 4e6, bw = 2e9; /* 4 MB at 2 GB/s: 2 ms per message */
    struct dse_comm_opts o = { .grad_bytes = 4000000, .bandwidth = bw, .batch = 32, .img_per_s = 64 };
    struct dse_comm_point pt;
    CHECK_OK(dse_comm_point(&o, 1, &pt, NULL));
    CHECK(pt.ps_s == 0 && pt.tree_s == 0);
    CHECK_NEAR(pt.compute_s, 0.5, 1e-15); /* 32 images at 64 img/s */
    CHECK(pt.speedup_ps == 1 && pt.speedup_tree == 1 && pt.efficiency_tree == 1);
    CHECK_NEAR(dse_comm_tree_s(&o, 2), n * 2 / bw, 1e-15);
    CHECK_NEAR(dse_comm_ps_s(&o, 2), n * 2 / bw, 1e-15); /* p = 2 and p = 4: the two agree */
    CHECK_NEAR(dse_comm_ps_s(&o, 4), dse_comm_tree_s(&o, 4), 1e-15);
    CHECK_NEAR(dse_comm_tree_s(&o, 3), 0.008, 1e-15);    /* ceil(log2 3) = 2 levels each way */
    CHECK_NEAR(dse_comm_ps_s(&o, 3), 0.006, 1e-15);
    /* 3 workers: the largest share is ceil(32 / 3) = 11 images; step = compute + comm */
    CHECK_OK(dse_comm_point(&o, 3, &pt, NULL));
    CHECK_INT_EQ(pt.images, 11);
    CHECK_NEAR(pt.compute_s, 11.0 / 64, 1e-15);
    CHECK_NEAR(pt.step_tree_s, 11.0 / 64 + 0.008, 1e-15);
    CHECK_NEAR(pt.speedup_ps, 0.5 / (11.0 / 64 + 0.006), 1e-15);
    CHECK_NEAR(pt.efficiency_ps, pt.speedup_ps / 3, 1e-15);
    /* latency: 8 workers, alpha 50 us: PS 8 messages, tree 2 x 3 */
    o.latency_s = 50e-6;
    CHECK_NEAR(dse_comm_ps_s(&o, 8), 8 * (50e-6 + 0.002), 1e-15);
    CHECK_NEAR(dse_comm_tree_s(&o, 8), 6 * (50e-6 + 0.002), 1e-15);
    CHECK(dse_comm_ps_s(&o, 1) == 0 && dse_comm_tree_s(&o, 1) == 0);
    /* out of range: named, never asserted */
    struct dse_err err = { 0 };
    CHECK_INT_EQ(dse_comm_point(&o, 33, &pt, &err), DSE_ERR_CONFIG); /* more workers than images */
    CHECK_INT_EQ(dse_comm_point(&o, 0, &pt, &err), DSE_ERR_CONFIG);
    o.bandwidth = 0;
    CHECK_INT_EQ(dse_comm_point(&o, 2, &pt, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "bandwidth = 0 bytes/s; expected > 0");
    o.bandwidth = NAN;
    CHECK_INT_EQ(dse_comm_point(&o, 2, &pt, &err), DSE_ERR_CONFIG);
    o.bandwidth = bw, o.latency_s = -1e-6;
    CHECK_INT_EQ(dse_comm_point(&o, 2, &pt, &err), DSE_ERR_CONFIG);
    /* the report's worker counts: powers of two, then the number asked for */
    int64_t w[20];
    int k = dse_comm_workers_list(12, w, 20);
    CHECK_INT_EQ(k, 5);
    CHECK(w[0] == 1 && w[1] == 2 && w[2] == 4 && w[3] == 8 && w[4] == 12);
    CHECK_INT_EQ(dse_comm_workers_list(32, w, 20), 6);
    CHECK_INT_EQ(w[5], 32);
    CHECK_INT_EQ(dse_comm_workers_list(1, w, 20), 1);
    CHECK_INT_EQ(dse_comm_workers_list(DSE_COMM_WORKERS_MAX, w, 20), 17);
}

static const struct check_case cases[] = {
    { "cost-nin-4.2",        test_nin_table_4_2 },
    { "cost-nin-4.3-4.8",    test_nin_modifications },
    { "cost-squeezenet-5.1", test_squeezenet_table_5_1 },
    { "cost-batch",          test_batch_scaling },
    { "cost-memory",         test_memory_estimates },
    { "cost-macs",           test_macs },
    { "cost-compress-est",   test_compress_est },
    { "delta-reach",         test_delta_reach },
    { "delta-duplicates",    test_delta_duplicates },
    { "rows-expand",         test_rows_expand },
    { "rows-block-key",      test_block_key },
    { "rows-blocks",         test_rows_blocks },
    { "comm-firecaffe",      test_comm_firecaffe },
    { "comm-closed-forms",   test_comm_closed_forms },
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
