/* nets.h: reference networks built in C through the metaparams API, so that library
 * tests and benchmarks need no file: NiN as thesis Table 4.2 lays it out (with the
 * modifications of Tables 4.3-4.8) and SqueezeNet v1.0 / v1.1 (Table 5.1). The .cfg files
 * under experiments/ describe the same networks; tests/test_cli.c checks they agree. */
#ifndef DSE_TESTS_NETS_H
#define DSE_TESTS_NETS_H

#include <stdio.h>

#include "metaparams/metaparams.h"
#include "metaparams/net.h"

struct nin_opts {
    int in_c, in_hw;   /* 3, 227 */
    int conv8;         /* 384 */
    int conv7_k, conv7_pad; /* 3, 1 */
    int classes;       /* 1000 */
    int pool3;         /* 1: keep the first max-pool */
};

__attribute__((unused)) static const struct nin_opts nin_base = { 3, 227, 384, 3, 1, 1000, 1 };

static inline int net_conv(struct dse_net *n, const char *name, int f, int k, int s, int p) {
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, name);
    l.num_output = f;
    l.kernel_h = l.kernel_w = k;
    l.stride_h = l.stride_w = s;
    l.pad_h = l.pad_w = p;
    return dse_net_add(n, &l, NULL);
}

static inline int net_simple(struct dse_net *n, enum dse_layer_type t, const char *name, int in_place) {
    struct dse_layer l = dse_layer_make(t, name);
    l.in_place = in_place;
    return dse_net_add(n, &l, NULL);
}

static inline int net_pool(struct dse_net *n, enum dse_layer_type t, const char *name, int k, int s,
                    int global) {
    struct dse_layer l = dse_layer_make(t, name);
    l.kernel_h = l.kernel_w = k;
    l.stride_h = l.stride_w = s;
    l.global = global;
    return dse_net_add(n, &l, NULL);
}

/* NiN, thesis naming: conv1..conv12, pools named after the conv they follow. */
static inline int build_nin(struct dse_net *n, const struct nin_opts *o) {
    int rc = 0;
    char name[16];
    dse_net_init(n, "nin", o->in_c, o->in_hw, o->in_hw);
    static const int filters[12] = { 96, 96, 96, 256, 256, 256, 384, 384, 384, 1024, 1024, 1000 };
    for (int i = 1; i <= 12; i++) {
        int f = filters[i - 1], k = 1, s = 1, p = 0;
        if (i == 1) k = 11, s = 4;
        if (i == 4) k = 5, p = 2;
        if (i == 7) k = o->conv7_k, p = o->conv7_pad;
        if (i == 10) k = 3, p = 1;
        if (i == 8) f = o->conv8;
        if (i == 12) f = o->classes;
        snprintf(name, sizeof name, "conv%d", i);
        rc |= net_conv(n, name, f, k, s, p);
        snprintf(name, sizeof name, "relu%d", i);
        rc |= net_simple(n, DSE_LAYER_RELU, name, 1);
        if ((i == 3 && o->pool3) || i == 6 || i == 9) {
            snprintf(name, sizeof name, "pool%d", i);
            rc |= net_pool(n, DSE_LAYER_MAXPOOL, name, 3, 2, 0);
        }
        if (i == 9) rc |= net_simple(n, DSE_LAYER_DROPOUT, "drop9", 1);
    }
    rc |= net_pool(n, DSE_LAYER_AVGPOOL, "pool12", 0, 1, 1);
    rc |= dse_net_infer(n, NULL, NULL);
    return rc;
}

/* SqueezeNet v1.0 (v11 = 0) or v1.1 (v11 = 1), as the released Caffe files. */
static inline int build_squeezenet(struct dse_net *n, int v11, enum dse_bypass bypass) {
    static const int sq[10] = { 0, 0, 16, 16, 32, 32, 48, 48, 64, 64 };
    static const int ex[10] = { 0, 0, 64, 64, 128, 128, 192, 192, 256, 256 };
    int rc = 0;
    char name[16];
    dse_net_init(n, v11 ? "squeezenet_v1.1" : "squeezenet_v1.0", 3, 227, 227);
    rc |= v11 ? net_conv(n, "conv1", 64, 3, 2, 0) : net_conv(n, "conv1", 96, 7, 2, 0);
    rc |= net_simple(n, DSE_LAYER_RELU, "relu_conv1", 1);
    rc |= net_pool(n, DSE_LAYER_MAXPOOL, "pool1", 3, 2, 0);
    for (int i = 2; i <= 9; i++) {
        struct dse_fire f = { .name = "", .squeeze = sq[i], .expand1x1 = ex[i], .expand3x3 = ex[i],
                              .bypass = DSE_BYPASS_NONE };
        snprintf(f.name, sizeof f.name, "fire%d", i);
        if (bypass == DSE_BYPASS_COMPLEX || (bypass == DSE_BYPASS_SIMPLE && i % 2 == 1))
            f.bypass = bypass;
        rc |= dse_net_add_fire(n, &f, n->n_layers - 1, NULL);
        if ((v11 && (i == 3 || i == 5)) || (!v11 && (i == 4 || i == 8))) {
            snprintf(name, sizeof name, "pool%d", i);
            rc |= net_pool(n, DSE_LAYER_MAXPOOL, name, 3, 2, 0);
        }
    }
    rc |= net_simple(n, DSE_LAYER_DROPOUT, "drop9", 1);
    rc |= net_conv(n, "conv10", 1000, 1, 1, 0);
    rc |= net_simple(n, DSE_LAYER_RELU, "relu_conv10", 1);
    rc |= net_pool(n, DSE_LAYER_AVGPOOL, "pool10", 0, 1, 1);
    rc |= net_simple(n, DSE_LAYER_SOFTMAX_LOSS, "loss", 0);
    rc |= dse_net_infer(n, NULL, NULL);
    return rc;
}

/* A tiny Fire-module network for engine tests, on 1x12x12 input: conv1, pool, fire2
 * (complex bypass), fire3 (simple bypass), classifier conv, global average pool, loss;
 * no dropout. */
static inline struct dse_mp tiny_fire_mp(void) {
    struct dse_mp mp = dse_mp_squeezenet_v10();
    mp.input_c = 1, mp.input_h = mp.input_w = 12, mp.classes = 4;
    mp.conv1_filters = 6, mp.conv1_kernel = 3, mp.conv1_stride = 1, mp.conv1_pad = 1;
    mp.base_e = 8, mp.incr_e = 0, mp.freq = 2, mp.sr = 0.25, mp.pct3x3 = 0.5;
    mp.fires = 2, mp.pools = DSE_MP_POOL_CONV1, mp.dropout = 0;
    mp.bypass = DSE_BYPASS_COMPLEX;
    return mp;
}

#endif
