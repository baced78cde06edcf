/* test_prototxt.c: the Caffe prototxt reader and writer (netfile/prototxt*.c, docs/prototxt.md):
 * the SqueezeNet and NiN files in experiments/, V1 and V2 syntax, data layers, every
 * tests/prototxt/bad_*.prototxt with its exact message, mutated input, and write/read round
 * trips; ONNX read back (tests/test_prototxt_onnx.c). Runs from the repository root (ctest sets
 * the working directory). */
#include "netfile/netfile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "metaparams/net.h"
#define CHECK_SHARED_COUNTS /* one set of counts for both files of test_prototxt: defined here */
#include "tests/check.h"

int check_failures, check_count, check_skips;

/* ---- helpers --------------------------------------------------------------------------- */

/* Learned parameters of one layer, from its hyper-parameters and inferred shapes. */
static long long layer_params(const struct dse_layer *l) {
    switch (l->type) {
    case DSE_LAYER_CONV:
        return (long long)l->in_c / l->groups * l->kernel_h * l->kernel_w * l->num_output +
               (l->bias ? l->num_output : 0);
    case DSE_LAYER_FC:
        return (long long)l->in_c * l->in_h * l->in_w * l->num_output + (l->bias ? l->num_output : 0);
    case DSE_LAYER_BATCHNORM:
        return l->affine ? 2LL * l->in_c : 0;
    case DSE_LAYER_SCALE:
        return l->in_c + (l->bias ? l->in_c : 0);
    default:
        return 0;
    }
}

static long long layer_biases(const struct dse_layer *l) {
    return (l->type == DSE_LAYER_CONV || l->type == DSE_LAYER_FC) && l->bias ? l->num_output : 0;
}

/* Multiply-adds of conv and fc layers (bias adds not counted). */
static long long layer_macs(const struct dse_layer *l) {
    if (l->type == DSE_LAYER_CONV)
        return (long long)l->out_c * l->out_h * l->out_w * (l->in_c / l->groups) * l->kernel_h * l->kernel_w;
    if (l->type == DSE_LAYER_FC) return (long long)l->num_output * l->in_c * l->in_h * l->in_w;
    return 0;
}

static long long net_params(const struct dse_net *net, const char *module) {
    long long sum = 0;
    for (int i = 0; i < net->n_layers; i++)
        if (!module || strcmp(net->layers[i].module, module) == 0) sum += layer_params(&net->layers[i]);
    return sum;
}

static const struct dse_layer *layer(const struct dse_net *net, const char *name) {
    static const struct dse_layer none; /* all zero: checks on a missing layer fail, not crash */
    int i = dse_net_find(net, name);
    if (i < 0) {
        fprintf(stderr, "  (no layer named '%s')\n", name);
        return &none;
    }
    return &net->layers[i];
}

#define CHECK_SHAPE(net, name, c, h, w) do { const struct dse_layer *l_ = layer(net, name); \
    CHECK_INT_EQ(l_->out_c, c); CHECK_INT_EQ(l_->out_h, h); CHECK_INT_EQ(l_->out_w, w); } while (0)

static enum dse_status load(const char *path, const struct dse_input_shape *ov, struct dse_net *net) {
    struct dse_err err;
    char buf[512];
    memset(&err, 0, sizeof err);
    enum dse_status st = dse_prototxt_load(path, ov, net, &err);
    if (st) fprintf(stderr, "  %s\n", dse_err_format(&err, buf, sizeof buf));
    return st;
}

static enum dse_status parse(const char *text, const struct dse_input_shape *ov, struct dse_net *net,
                             struct dse_err *err) {
    memset(err, 0, sizeof *err);
    return dse_prototxt_parse(text, strlen(text), "mem.prototxt", ov, net, err);
}

static char *read_text(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) != NULL) {
        *len = fread(buf, 1, (size_t)n, f);
        buf[*len] = '\0';
    }
    fclose(f);
    return buf;
}

/* ---- SqueezeNet and NiN ---------------------------------------------------------------- */

static void test_squeeze10(void) {
    struct dse_net net;
    if (load("experiments/squeezenet/squeezenet_v1.0.prototxt", NULL, &net)) {
        CHECK(0);
        return;
    }
    CHECK_INT_EQ(net.in_c, 3);
    CHECK_INT_EQ(net.in_h, 227);
    CHECK_INT_EQ(net.in_w, 227);
    /* conv1, relu, pool1, 8 fires x 7, pool4, pool8, drop9, conv10, relu, pool10, loss;
     * the TEST data layer and both accuracy layers are skipped. */
    CHECK_INT_EQ(net.n_layers, 66);
    CHECK_INT_EQ(dse_net_find(&net, "accuracy"), -1);
    CHECK_SHAPE(&net, "conv1", 96, 111, 111);
    CHECK_SHAPE(&net, "pool1", 96, 55, 55);
    CHECK_SHAPE(&net, "fire4/concat", 256, 55, 55);
    CHECK_SHAPE(&net, "pool4", 256, 27, 27);
    CHECK_SHAPE(&net, "pool8", 512, 13, 13);
    CHECK_SHAPE(&net, "conv10", 1000, 15, 15); /* the release pads conv10 (1x1) by 1 */
    CHECK_SHAPE(&net, "pool10", 1000, 1, 1);
    /* Parameters: thesis Table 5.1 (SqueezeNet v1.0). */
    CHECK_INT_EQ(layer_params(layer(&net, "conv1")), 14208);
    CHECK_INT_EQ(net_params(&net, "fire2"), 11920);
    CHECK_INT_EQ(layer_params(layer(&net, "conv10")), 513000);
    CHECK_INT_EQ(net_params(&net, NULL), 1248424);

    const struct dse_layer *l = layer(&net, "fire2/expand3x3");
    CHECK_INT_EQ(l->kernel_h, 3);
    CHECK_INT_EQ(l->pad_h, 1);
    CHECK_INT_EQ(l->pad_w, 1);
    CHECK_STR_EQ(l->module, "fire2");
    CHECK_STR_EQ(layer(&net, "fire9/concat")->module, "fire9");
    CHECK_STR_EQ(layer(&net, "conv10")->module, "");
    l = layer(&net, "fire2/concat");
    CHECK_INT_EQ(l->n_inputs, 2);
    CHECK_INT_EQ(l->inputs[0], dse_net_find(&net, "fire2/relu_expand1x1"));
    CHECK_INT_EQ(l->inputs[1], dse_net_find(&net, "fire2/relu_expand3x3"));
    CHECK_INT_EQ(layer(&net, "fire2/relu_squeeze1x1")->in_place, 1);
    CHECK_INT_EQ(layer(&net, "drop9")->in_place, 1);
    CHECK_INT_EQ(layer(&net, "fire2/expand1x1")->in_place, 0);
    l = layer(&net, "conv10"); /* drop9 overwrote fire9/concat in place: conv10 reads drop9 */
    CHECK_INT_EQ(l->inputs[0], dse_net_find(&net, "drop9"));
    l = layer(&net, "loss"); /* the label bottom is dropped */
    CHECK_INT_EQ(l->type, DSE_LAYER_SOFTMAX_LOSS);
    CHECK_INT_EQ(l->n_inputs, 1);
    CHECK_INT_EQ(l->inputs[0], dse_net_find(&net, "pool10"));
    CHECK_INT_EQ(layer(&net, "conv1")->inputs[0], DSE_INPUT_DATA);
    dse_net_deinit(&net);
}

static void test_squeeze11(void) {
    struct dse_net net;
    if (load("experiments/squeezenet/squeezenet_v1.1.prototxt", NULL, &net)) {
        CHECK(0);
        return;
    }
    CHECK_INT_EQ(net.n_layers, 66);
    CHECK_SHAPE(&net, "conv1", 64, 113, 113);
    CHECK_SHAPE(&net, "pool1", 64, 56, 56);   /* ceil((113 - 3) / 2) + 1 */
    CHECK_SHAPE(&net, "pool3", 128, 28, 28);  /* ceil((56 - 3) / 2) + 1 */
    CHECK_SHAPE(&net, "pool5", 256, 14, 14);  /* ceil((28 - 3) / 2) + 1 */
    CHECK_SHAPE(&net, "conv10", 1000, 14, 14);
    CHECK_SHAPE(&net, "pool10", 1000, 1, 1);
    /* Parameters: thesis Table 5.1 (SqueezeNet v1.1). */
    CHECK_INT_EQ(layer_params(layer(&net, "conv1")), 1792);
    CHECK_INT_EQ(net_params(&net, NULL), 1235496);
    CHECK(layer(&net, "pool10")->global);
    CHECK_INT_EQ(layer(&net, "pool10")->type, DSE_LAYER_AVGPOOL);
    CHECK_INT_EQ(layer(&net, "pool1")->type, DSE_LAYER_MAXPOOL);
    dse_net_deinit(&net);
}

static void test_nin(void) {
    struct dse_net net;
    long long weights = 0, biases = 0, flops = 0;
    if (load("experiments/nin_local_global/nin.prototxt", NULL, &net)) {
        CHECK(0);
        return;
    }
    CHECK_STR_EQ(net.name, "nin_imagenet");
    CHECK_INT_EQ(net.in_c, 3);
    CHECK_INT_EQ(net.in_h, 227);
    CHECK_INT_EQ(net.n_layers, 29);
    CHECK_SHAPE(&net, "conv1", 96, 55, 55);
    CHECK_SHAPE(&net, "pool0", 96, 27, 27);
    CHECK_SHAPE(&net, "pool2", 256, 13, 13);
    CHECK_SHAPE(&net, "pool3", 384, 6, 6);
    CHECK_SHAPE(&net, "conv4-1024", 1024, 6, 6);
    CHECK_SHAPE(&net, "cccp8-1024", 1000, 6, 6);
    CHECK_SHAPE(&net, "pool4", 1000, 1, 1);
    /* The layer "conv4-1024" writes blob "conv4": relu10 and cccp7-1024 read it. */
    CHECK_INT_EQ(layer(&net, "relu10")->inputs[0], dse_net_find(&net, "conv4-1024"));
    CHECK_INT_EQ(layer(&net, "cccp7-1024")->inputs[0], dse_net_find(&net, "relu10"));
    CHECK_INT_EQ(layer(&net, "drop")->in_place, 1);
    CHECK_INT_EQ(layer(&net, "pool4")->type, DSE_LAYER_AVGPOOL);
    for (int i = 0; i < net.n_layers; i++) {
        weights += layer_params(&net.layers[i]) - layer_biases(&net.layers[i]);
        biases  += layer_biases(&net.layers[i]);
        flops   += 2 * layer_macs(&net.layers[i]);
    }
    /* Lin et al., NiN ImageNet model (Caffe Model Zoo): 7,595,176 parameters. */
    CHECK_INT_EQ(weights, 7589920);
    CHECK_INT_EQ(biases, 5256);
    CHECK_INT_EQ(net_params(&net, NULL), 7595176);
    CHECK_INT_EQ(flops, 2211992640LL);
    dse_net_deinit(&net);
}

/* ---- syntax: V1 against V2, every layer type, protobuf text features ------------------- */

/* One small network in V2 syntax, written with as many protobuf text features as fit. */
static const char v2_text[] =
    "# V2 syntax\n"
    "name: 'small' \"net\"\n"
    "force_backward: true\n"
    "state { phase: TRAIN }\n"
    "layer {\n"
    "  name: \"data\" type: \"Data\" top: \"data\" top: \"label\"\n"
    "  include { phase: TRAIN }\n"
    "  transform_param { crop_size: 32 mirror: true mean_value: [104, 117, 123] scale: 0.017 }\n"
    "  data_param { source: \"train\" batch_size: 64 backend: LMDB }\n"
    "}\n"
    "layer {\n"
    "  name: \"data\" type: \"Data\" top: \"data\" top: \"label\"\n"
    "  include: { phase: TEST }\n"
    "  transform_param { crop_size: 16 }\n"
    "}\n"
    "layer <\n"                                                              /* 16 */
    "  name: 'conv\\x31'; type: \"Convolution\"; bottom: \"data\"; top: \"conv1\"\n"
    "  param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 2 decay_mult: 0 }\n"
    "  convolution_param {\n"
    "    num_output: 0x10 kernel_h: 5 kernel_w: 3 stride: [2, 1] pad_h: 2 pad_w: 1\n"
    "    weight_filler { type: \"msra\" variance_norm: FAN_OUT } engine: CUDNN\n"
    "    bias_filler: { type: \"constant\" value: -1e-4 }\n"
    "  }\n"
    ">\n"
    "layer { name: \"bn1\" type: \"BatchNorm\" bottom: \"conv1\" top: \"conv1\"\n"      /* 25 */
    "  batch_norm_param { use_global_stats: false eps: 1e-5 moving_average_fraction: .999 } }\n"
    "layer { name: \"sc1\" type: \"Scale\" bottom: \"conv1\" top: \"conv1\"\n"
    "  scale_param { bias_term: true filler { value: 1 } } }\n"
    "layer { name: \"relu1\" type: \"ReLU\" bottom: \"conv1\" top: \"conv1\"\n"
    "  relu_param { negative_slope: 0 engine: CAFFE } }\n"
    "layer { name: \"pool1\" type: \"Pooling\" bottom: \"conv1\" top: \"pool1\"\n"
    "  pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 round_mode: FLOOR } }\n"
    "layer { name: \"norm1\" type: \"LRN\" bottom: \"pool1\" top: \"norm1\"\n"
    "  lrn_param { local_size: 3 alpha: 5e-05 beta: 0.75 norm_region: ACROSS_CHANNELS } }\n"
    "layer { name: \"a\" type: \"Convolution\" bottom: \"norm1\" top: \"a\"\n"
    "  convolution_param { num_output: 8 kernel_size: 3 pad: 2 dilation: 2 group: 2\n"
    "                      bias_term: false } }\n"
    "layer { name: \"b\" type: \"Convolution\" bottom: \"norm1\" top: \"b\"\n"
    "  convolution_param { num_output: 8 kernel_size: 1 } }\n"
    "layer { name: \"prod\" type: \"Eltwise\" bottom: \"a\" bottom: \"b\" top: \"prod\"\n"
    "  eltwise_param { operation: PROD } }\n"
    "layer { name: \"max\" type: \"Eltwise\" bottom: \"a\" bottom: \"b\" top: \"max\"\n"
    "  eltwise_param { operation: MAX coeff: 1 coeff: -1 } }\n"
    "layer { name: \"sum\" type: \"Eltwise\" bottom: \"a\" bottom: \"b\" top: \"sum\" }\n"
    "layer { name: \"cat\" type: \"Concat\" bottom: \"prod\" bottom: \"max\" bottom: \"sum\"\n"
    "  top: \"cat\" concat_param { axis: 1 } }\n"
    "layer { name: \"drop\" type: \"Dropout\" bottom: \"cat\" top: \"cat\"\n"
    "  dropout_param { dropout_ratio: 2.5e-1 } }\n"
    "layer { name: \"fc\" type: \"InnerProduct\" bottom: \"cat\" top: \"fc\"\n"
    "  inner_product_param { num_output: 10 bias_term: false weight_filler { type: \"xavier\" } } }\n"
    "layer { name: \"prob\" type: \"Softmax\" bottom: \"fc\" top: \"prob\" }\n"
    "layer { name: \"loss\" type: \"SoftmaxWithLoss\" bottom: \"fc\" bottom: \"label\" top: \"loss\"\n"
    "  loss_weight: 1 loss_param { normalization: VALID } }\n"
    "layer { name: \"acc\" type: \"Accuracy\" bottom: \"fc\" bottom: \"label\" top: \"acc\"\n"
    "  exclude { phase: TEST } accuracy_param { top_k: 5 } }\n"
    "layer { name: \"test_only\" type: \"Python\" bottom: \"fc\" include { phase: TEST } }\n"
    "layer { name: \"staged\" type: \"Python\" bottom: \"fc\" include { stage: \"deploy\" } }\n";

/* The same network in V1 syntax (no BatchNorm or Scale in V1: those two are left out). */
static const char v1_text[] =
    "name: \"smallnet\"\n"
    "layers { name: \"data\" type: DATA top: \"data\" top: \"label\"\n"
    "  transform_param { crop_size: 32 } include: { phase: TRAIN } }\n"
    "layers { name: \"data\" type: DATA top: \"data\" top: \"label\"\n"
    "  transform_param { crop_size: 16 } include: { phase: TEST } }\n"
    "layers { name: \"conv1\" type: CONVOLUTION bottom: \"data\" top: \"conv1\"\n"
    "  blobs_lr: 1 blobs_lr: 2 weight_decay: 1 weight_decay: 0\n"
    "  convolution_param { num_output: 16 kernel_h: 5 kernel_w: 3 stride_h: 2 stride_w: 1\n"
    "    pad_h: 2 pad_w: 1 } }\n"
    "layers { name: \"relu1\" type: RELU bottom: \"conv1\" top: \"conv1\" }\n"
    "layers { name: \"pool1\" type: POOLING bottom: \"conv1\" top: \"pool1\"\n"
    "  pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 round_mode: FLOOR } }\n"
    "layers { name: \"norm1\" type: LRN bottom: \"pool1\" top: \"norm1\" lrn_param { local_size: 3 } }\n"
    "layers { name: \"a\" type: CONVOLUTION bottom: \"norm1\" top: \"a\"\n"
    "  convolution_param { num_output: 8 kernel_size: 3 pad: 2 dilation: 2 group: 2 bias_term: false } }\n"
    "layers { name: \"b\" type: CONVOLUTION bottom: \"norm1\" top: \"b\"\n"
    "  convolution_param { num_output: 8 kernel_size: 1 } }\n"
    "layers { name: \"prod\" type: ELTWISE bottom: \"a\" bottom: \"b\" top: \"prod\"\n"
    "  eltwise_param { operation: PROD } }\n"
    "layers { name: \"max\" type: ELTWISE bottom: \"a\" bottom: \"b\" top: \"max\"\n"
    "  eltwise_param { operation: MAX } }\n"
    "layers { name: \"sum\" type: ELTWISE bottom: \"a\" bottom: \"b\" top: \"sum\" }\n"
    "layers { name: \"cat\" type: CONCAT bottom: \"prod\" bottom: \"max\" bottom: \"sum\" top: \"cat\"\n"
    "  concat_param { concat_dim: 1 } }\n"
    "layers { name: \"drop\" type: DROPOUT bottom: \"cat\" top: \"cat\" dropout_param { dropout_ratio: 0.25 } }\n"
    "layers { name: \"fc\" type: INNER_PRODUCT bottom: \"cat\" top: \"fc\"\n"
    "  inner_product_param { num_output: 10 bias_term: false } }\n"
    "layers { name: \"prob\" type: SOFTMAX bottom: \"fc\" top: \"prob\" }\n"
    "layers { name: \"loss\" type: SOFTMAX_LOSS bottom: \"fc\" bottom: \"label\" top: \"loss\" }\n"
    "layers { name: \"acc\" type: ACCURACY bottom: \"fc\" bottom: \"label\" top: \"acc\" }\n";

static void test_v1_v2(void) {
    struct dse_net n2, n1;
    struct dse_err err;
    char buf[512];
    enum dse_status st = parse(v2_text, NULL, &n2, &err);
    CHECK_OK(st);
    if (st) {
        fprintf(stderr, "  %s\n", dse_err_format(&err, buf, sizeof buf));
        return;
    }
    st = parse(v1_text, NULL, &n1, &err);
    CHECK_OK(st);
    if (st) {
        fprintf(stderr, "  %s\n", dse_err_format(&err, buf, sizeof buf));
        dse_net_deinit(&n2);
        return;
    }
    CHECK_STR_EQ(n2.name, "smallnet"); /* 'small' "net": adjacent strings join */
    CHECK_INT_EQ(n2.in_c, 3);
    CHECK_INT_EQ(n2.in_h, 32);
    CHECK_INT_EQ(n2.in_w, 32);
    CHECK_INT_EQ(n2.n_layers, 17); /* TEST data, test_only and staged are skipped */

    const struct dse_layer *l = layer(&n2, "conv1");    /* 'conv\x31' */
    CHECK_INT_EQ(l->line, 16);                           /* the line of "layer <" */
    CHECK_INT_EQ(l->num_output, 16);                     /* 0x10 */
    CHECK_INT_EQ(l->kernel_h, 5);
    CHECK_INT_EQ(l->kernel_w, 3);
    CHECK_INT_EQ(l->stride_h, 2);
    CHECK_INT_EQ(l->stride_w, 1);
    CHECK_INT_EQ(l->pad_h, 2);
    CHECK_INT_EQ(l->pad_w, 1);
    CHECK_INT_EQ(l->bias, 1);
    CHECK_SHAPE(&n2, "conv1", 16, 16, 32);
    l = layer(&n2, "bn1");
    CHECK_INT_EQ(l->type, DSE_LAYER_BATCHNORM);
    CHECK_INT_EQ(l->affine, 0);
    CHECK_INT_EQ(l->in_place, 1);
    CHECK_INT_EQ(l->line, 25);
    l = layer(&n2, "sc1");
    CHECK_INT_EQ(l->type, DSE_LAYER_SCALE);
    CHECK_INT_EQ(l->bias, 1);
    CHECK_INT_EQ(layer_params(l), 32);
    l = layer(&n2, "pool1");
    CHECK_INT_EQ(l->type, DSE_LAYER_AVGPOOL);
    CHECK_INT_EQ(l->round, DSE_ROUND_FLOOR);
    CHECK_INT_EQ(l->pad_h, 1);
    CHECK_SHAPE(&n2, "pool1", 16, 8, 16); /* floor((16 + 2 - 3) / 2) + 1, floor((32 + 2 - 3) / 2) + 1 */
    CHECK_INT_EQ(layer(&n2, "norm1")->type, DSE_LAYER_LRN);
    CHECK_INT_EQ(layer(&n2, "norm1")->lrn_size, 3);
    l = layer(&n2, "a");
    CHECK_INT_EQ(l->groups, 2);
    CHECK_INT_EQ(l->dilation_h, 2);
    CHECK_INT_EQ(l->dilation_w, 2);
    CHECK_INT_EQ(l->bias, 0);
    CHECK_INT_EQ(layer_params(l), 16 / 2 * 9 * 8);
    CHECK_SHAPE(&n2, "a", 8, 8, 16);
    CHECK_INT_EQ(layer(&n2, "prod")->eltwise_op, DSE_ELTWISE_PROD);
    CHECK_INT_EQ(layer(&n2, "max")->eltwise_op, DSE_ELTWISE_MAX);
    CHECK_INT_EQ(layer(&n2, "sum")->eltwise_op, DSE_ELTWISE_SUM);
    l = layer(&n2, "cat");
    CHECK_INT_EQ(l->n_inputs, 3);
    CHECK_INT_EQ(l->inputs[2], dse_net_find(&n2, "sum"));
    CHECK_SHAPE(&n2, "cat", 24, 8, 16);
    CHECK_NEAR(layer(&n2, "drop")->dropout_ratio, 0.25, 1e-6);
    l = layer(&n2, "fc");
    CHECK_INT_EQ(l->inputs[0], dse_net_find(&n2, "drop"));
    CHECK_INT_EQ(layer_params(l), 24LL * 8 * 16 * 10);
    CHECK_INT_EQ(layer(&n2, "prob")->type, DSE_LAYER_SOFTMAX);
    CHECK_INT_EQ(layer(&n2, "loss")->n_inputs, 1);
    CHECK_INT_EQ(layer(&n2, "acc")->type, DSE_LAYER_ACCURACY);
    CHECK_INT_EQ(layer(&n2, "acc")->n_inputs, 1);
    CHECK_INT_EQ(dse_net_find(&n2, "test_only"), -1);
    CHECK_INT_EQ(dse_net_find(&n2, "staged"), -1);

    /* V1 gives the same network less bn1 and sc1. */
    CHECK_STR_EQ(n1.name, "smallnet");
    CHECK_INT_EQ(n1.n_layers, n2.n_layers - 2);
    for (int i = 0; i < n1.n_layers; i++) {
        const struct dse_layer *a = &n1.layers[i], *b = layer(&n2, a->name);
        CHECK_INT_EQ(a->type, b->type);
        CHECK_INT_EQ(a->out_c, b->out_c);
        CHECK_INT_EQ(a->out_h, b->out_h);
        CHECK_INT_EQ(a->out_w, b->out_w);
        CHECK_INT_EQ(a->n_inputs, b->n_inputs);
        CHECK_INT_EQ(a->in_place, b->in_place);
        CHECK_INT_EQ(layer_params(a), layer_params(b));
        CHECK_INT_EQ(a->round, b->round);
        CHECK_INT_EQ(a->eltwise_op, b->eltwise_op);
        CHECK_NEAR(a->dropout_ratio, b->dropout_ratio, 1e-6);
    }
    dse_net_deinit(&n1);
    dse_net_deinit(&n2);
}

/* ---- data layers and --input ----------------------------------------------------------- */

static void test_inputs(void) {
    struct dse_net net;
    struct dse_err err;
    char buf[512];
    struct dse_input_shape ov = { .c = 0, .h = 224, .w = 224 };
    const char *relu = "layer { name: \"r\" type: \"ReLU\" bottom: \"data\" top: \"r\" }\n";
    char text[1024];

    /* --input H,W replaces the crop size; SqueezeNet v1.1 at 224: 111 -> 55 -> 27 -> 13. */
    if (!load("experiments/squeezenet/squeezenet_v1.1.prototxt", &ov, &net)) {
        CHECK_INT_EQ(net.in_h, 224);
        CHECK_SHAPE(&net, "conv1", 64, 111, 111);
        CHECK_SHAPE(&net, "pool5", 256, 13, 13);
        dse_net_deinit(&net);
    } else {
        CHECK(0);
    }
    /* ... and gives the size a Data layer lacks. */
    if (!load("tests/prototxt/bad_nocrop.prototxt", &ov, &net)) {
        CHECK_INT_EQ(net.in_c, 3);
        CHECK_SHAPE(&net, "conv1", 8, 222, 222);
        dse_net_deinit(&net);
    } else {
        CHECK(0);
    }

    static const struct {
        const char *layer;   /* the data layer */
        int c, h, w;         /* 0: expect an error */
        const char *msg;
    } cases[] = {
        { "layer { name: \"d\" type: \"Input\" top: \"data\"\n"
          "  input_param { shape { dim: 10 dim: 1 dim: 28 dim: 20 } } }\n", 1, 28, 20, NULL },
        { "layer { name: \"d\" type: \"ImageData\" top: \"data\" top: \"label\"\n"
          "  image_data_param { source: \"list.txt\" new_height: 40 new_width: 30 is_color: false } }\n",
          1, 40, 30, NULL },
        { "layer { name: \"d\" type: \"ImageData\" top: \"data\" top: \"label\"\n"
          "  transform_param { crop_size: 24 } image_data_param { new_height: 40 new_width: 30 } }\n",
          3, 24, 24, NULL },
        { "layer { name: \"d\" type: \"Data\" top: \"data\"\n"
          "  data_param { crop_size: 20 } transform_param { force_gray: true } }\n", 1, 20, 20, NULL },
        { "layer { name: \"d\" type: \"MemoryData\" top: \"data\" top: \"label\"\n"
          "  memory_data_param { batch_size: 5 channels: 2 height: 9 width: 7 } }\n", 2, 9, 7, NULL },
        { "input: \"data\" input_shape { dim: 1 dim: 4 dim: 8 dim: 6 }\n", 4, 8, 6, NULL },
        { "input: \"data\" input: \"label\" input_dim: [1, 5, 6, 7, 1, 1, 1, 1]\n", 5, 6, 7, NULL },
        { "layer { name: \"d\" type: \"HDF5Data\" top: \"data\" top: \"label\"\n"
          "  hdf5_data_param { source: \"files.txt\" batch_size: 8 } }\n", 0, 0, 0,
          "mem.prototxt:1: HDF5Data layer 'd' gives no input size (it is in the data files); pass "
          "the input size with --input C,H,W" },
        { "layer { name: \"d\" type: \"MemoryData\" top: \"data\"\n"
          "  memory_data_param { channels: 2 width: 7 } }\n", 0, 0, 0,
          "mem.prototxt:1: MemoryData layer 'd' gives no input size (memory_data_param needs channels, "
          "height and width); pass the input size with --input C,H,W" },
        { "layer { name: \"d\" type: \"Input\" top: \"data\"\n"
          "  input_param { shape { dim: 1 dim: 3 dim: 28 } } }\n", 0, 0, 0,
          "mem.prototxt:2: shape of Input layer 'd' has 3 dims; expected 4 (N, C, H, W)" },
        { "input: \"data\" input_dim: 1 input_dim: 3 input_dim: 32\n", 0, 0, 0,
          "mem.prototxt:1: 3 'input_dim' values for 1 input; expected 4 per input (N, C, H, W)" },
        { "input: \"data\" input_dim: [1, 3, 8, 8]\n"
          "layer { name: \"d\" type: \"Input\" top: \"data2\"\n"
          "  input_param { shape { dim: 1 dim: 3 dim: 8 dim: 8 } } }\n", 0, 0, 0,
          "mem.prototxt:2: second network input 'data2' (the first is 'data' at line 1); expected "
          "one input" },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        snprintf(text, sizeof text, "%s%s", cases[i].layer, relu);
        enum dse_status st = parse(text, NULL, &net, &err);
        if (cases[i].c) {
            CHECK_OK(st);
            if (st) {
                fprintf(stderr, "  case %d: %s\n", i, dse_err_format(&err, buf, sizeof buf));
                continue;
            }
            CHECK_INT_EQ(net.in_c, cases[i].c);
            CHECK_INT_EQ(net.in_h, cases[i].h);
            CHECK_INT_EQ(net.in_w, cases[i].w);
            CHECK_INT_EQ(net.n_layers, 1);
            dse_net_deinit(&net);
        } else {
            CHECK(st != DSE_OK);
            CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), cases[i].msg);
            CHECK(net.layers == NULL && net.n_layers == 0);
        }
    }
    /* The HDF5Data case with --input C,H,W. */
    struct dse_input_shape full = { .c = 2, .h = 10, .w = 12 };
    snprintf(text, sizeof text, "%s%s", cases[7].layer, relu);
    CHECK_OK(parse(text, &full, &net, &err));
    CHECK_INT_EQ(net.in_c, 2);
    CHECK_INT_EQ(net.in_w, 12);
    dse_net_deinit(&net);
}

/* ---- errors ---------------------------------------------------------------------------- */

/* Shared blobs (issue #34): param { name: } (V1: param: "...") names a learned blob, and a
 * later blob of the same name is that one (dse_layer.shared: bit 0 the weights, bit 1 the
 * bias), so the analyzer counts it once; an empty name shares nothing; a bias the layer does
 * not have is not one. Blobs of different sizes: tests/prototxt/siamese_mismatch.prototxt in
 * proto-errors. */
static void test_shared(void) {
    static const struct {
        const char *name;
        int         shared;
    } want[] = { { "conv1", 0 }, { "ip1", 0 }, { "conv1_p", 3 }, { "ip1_p", 1 } };
    static const char v1[] =
        "input: \"data\" input_dim: 1 input_dim: 3 input_dim: 8 input_dim: 8\n"
        "layers { name: \"a\" type: CONVOLUTION bottom: \"data\" top: \"a\" param: \"w\" param: \"b\"\n"
        "  convolution_param { num_output: 3 kernel_size: 1 } }\n"
        "layers { name: \"b\" type: CONVOLUTION bottom: \"a\" top: \"b\" param: \"w\" param: \"b\"\n"
        "  convolution_param { num_output: 3 kernel_size: 1 } }\n"
        "layers { name: \"c\" type: CONVOLUTION bottom: \"b\" top: \"c\" param: \"w\" param: \"b\"\n"
        "  convolution_param { num_output: 3 kernel_size: 1 bias_term: false } }\n";
    struct dse_net net;
    struct dse_err err;
    CHECK_OK(load("tests/prototxt/siamese.prototxt", NULL, &net));
    if (net.n_layers == 0) return;
    for (int i = 0; i < DSE_ARRAY_LEN(want); i++) CHECK_INT_EQ(layer(&net, want[i].name)->shared, want[i].shared);
    dse_net_deinit(&net);
    CHECK_OK(parse(v1, NULL, &net, &err));
    if (err.code) return;
    CHECK_INT_EQ(net.n_layers, 3);
    CHECK_INT_EQ(net.layers[0].shared, 0);
    CHECK_INT_EQ(net.layers[1].shared, 3);
    CHECK_INT_EQ(net.layers[2].shared, 1);
    dse_net_deinit(&net);
}

static void test_errors(void) {
    static const struct {
        const char     *path;
        enum dse_status code;
        const char     *msg;
    } cases[] = {
        { "tests/prototxt/bad_type.prototxt", DSE_ERR_UNSUPPORTED,
          "tests/prototxt/bad_type.prototxt:11: unknown layer type 'Convolutoin' (did you mean "
          "'Convolution'?); supported: Input, Data, ImageData, MemoryData, HDF5Data, Convolution, "
          "Pooling, ReLU, Dropout, Concat, Eltwise, InnerProduct, Softmax, SoftmaxWithLoss, Accuracy, "
          "LRN, BatchNorm, Scale, ConvolutionDepthwise, DepthwiseConvolution, Flatten, Reshape, Slice, Sigmoid, "
          "TanH, Power" },
        { "tests/prototxt/bad_v1type.prototxt", DSE_ERR_UNSUPPORTED,
          "tests/prototxt/bad_v1type.prototxt:11: unknown layer type 'CONVOLUTON' (did you mean "
          "'CONVOLUTION'?); supported: DATA, IMAGE_DATA, MEMORY_DATA, HDF5_DATA, CONVOLUTION, POOLING, "
          "RELU, DROPOUT, CONCAT, ELTWISE, INNER_PRODUCT, SOFTMAX, SOFTMAX_LOSS, ACCURACY, LRN, FLATTEN, SLICE, "
          "SIGMOID, TANH, POWER" },
        { "tests/prototxt/deconv.prototxt", DSE_ERR_UNSUPPORTED,
          "tests/prototxt/deconv.prototxt:11: Caffe's layer type 'Deconvolution' is not supported; supported: Input, "
          "Data, ImageData, MemoryData, HDF5Data, Convolution, Pooling, ReLU, Dropout, Concat, Eltwise, InnerProduct, "
          "Softmax, SoftmaxWithLoss, Accuracy, LRN, BatchNorm, Scale, ConvolutionDepthwise, DepthwiseConvolution, "
          "Flatten, Reshape, Slice, Sigmoid, TanH, Power" },
        { "tests/prototxt/deconv_v1.prototxt", DSE_ERR_UNSUPPORTED,
          "tests/prototxt/deconv_v1.prototxt:11: Caffe's layer type 'DECONVOLUTION' is not supported; supported: DATA, "
          "IMAGE_DATA, MEMORY_DATA, HDF5_DATA, CONVOLUTION, POOLING, RELU, DROPOUT, CONCAT, ELTWISE, INNER_PRODUCT, "
          "SOFTMAX, SOFTMAX_LOSS, ACCURACY, LRN, FLATTEN, SLICE, SIGMOID, TANH, POWER" },
        { "tests/prototxt/siamese_mismatch.prototxt", DSE_ERR_SHAPE,
          "tests/prototxt/siamese_mismatch.prototxt:40: layer 'conv1_p': param 'conv1_w' would share the blob of "
          "layer 'conv1' (line 22), of 500 values, with one of 250; Caffe shares blobs of one size only" },
        { "tests/prototxt/bad_token.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_token.prototxt:16: expected ':' or '{' after field 'kernel_size', "
          "found number 3" },
        { "tests/prototxt/bad_char.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_char.prototxt:12: unexpected character '@'; expected a field name, "
          "value or one of { } : [ ]" },
        { "tests/prototxt/bad_string.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_string.prototxt:10: unterminated string; expected a closing \" on the "
          "same line" },
        { "tests/prototxt/bad_escape.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_escape.prototxt:10: bad escape '\\q' in string; expected one of \\n \\t "
          "\\\\ \\\" \\' \\xHH \\NNN" },
        { "tests/prototxt/bad_unterminated.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_unterminated.prototxt:16: unexpected end of file; expected '}' to "
          "close 'layer' opened at line 9" },
        { "tests/prototxt/bad_nested_eof.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_nested_eof.prototxt:16: unexpected end of file; expected '}' to "
          "close 'convolution_param' opened at line 14" },
        { "tests/prototxt/bad_brace.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_brace.prototxt:15: unexpected '}'; no block is open here" },
        { "tests/prototxt/bad_field.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_field.prototxt:17: unknown field 'strid' in convolution_param "
          "(did you mean 'stride'?)" },
        { "tests/prototxt/bad_toplevel.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_toplevel.prototxt:9: unknown field 'layr' at top level "
          "(did you mean 'layer'?)" },
        { "tests/prototxt/bad_value_block.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_value_block.prototxt:16: field 'kernel_size' in convolution_param "
          "takes a value, not a block; expected 'kernel_size: <value>'" },
        { "tests/prototxt/bad_enum.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_enum.prototxt:14: 'pool: MAXX' is not a valid value; expected MAX, "
          "AVE or STOCHASTIC" },
        { "tests/prototxt/bad_number.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_number.prototxt:14: 'num_output: 1.5': expected a non-negative integer" },
        { "tests/prototxt/bad_mixed.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_mixed.prototxt:14: the file mixes 'layer' (line 7) and 'layers' "
          "(V1, line 14); expected one format" },
        { "tests/prototxt/bad_bottom.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_bottom.prototxt:19: layer 'relu1': bottom 'conv' is not the top of "
          "any earlier layer (did you mean 'conv1'?)" },
        { "tests/prototxt/bad_noinput.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_noinput.prototxt:5: layer 'relu1': bottom 'data' is not the top of any "
          "earlier layer; no network input is defined before it (expected an Input or Data layer, "
          "or input: \"data\" with input_dim)" },
        { "tests/prototxt/bad_tops.prototxt", DSE_ERR_UNSUPPORTED,
          "tests/prototxt/bad_tops.prototxt:14: layer 'conv1' has 2 tops; only data and Slice layers may "
          "have more than one" },
        { "tests/prototxt/bad_stochastic.prototxt", DSE_ERR_UNSUPPORTED,
          "tests/prototxt/bad_stochastic.prototxt:15: Pooling layer 'pool1': STOCHASTIC pooling is "
          "not supported; expected pool: MAX or AVE" },
        { "tests/prototxt/bad_concat_axis.prototxt", DSE_ERR_UNSUPPORTED,
          "tests/prototxt/bad_concat_axis.prototxt:15: Concat layer 'cat': concatenation along "
          "axis 2 is not supported; expected axis 1 (channels)" },
        { "tests/prototxt/bad_nocrop.prototxt", DSE_ERR_CONFIG,
          "tests/prototxt/bad_nocrop.prototxt:2: Data layer 'data' gives no input size (no "
          "transform_param { crop_size }); pass the input size with --input C,H,W" },
        { "tests/prototxt/bad_kernel.prototxt", DSE_ERR_SHAPE,
          "tests/prototxt/bad_kernel.prototxt:23: layer 'conv3' (conv): kernel 7x7 (dilated) is "
          "larger than its padded input 5x5" },
        { "tests/prototxt/bad_duplicate.prototxt", DSE_ERR_CONFIG, /* as .cfg files: dse_net_check_names */
          "tests/prototxt/bad_duplicate.prototxt:16: layer name 'conv1' is used twice" },
        { "tests/prototxt/does_not_exist.prototxt", DSE_ERR_IO,
          "tests/prototxt/does_not_exist.prototxt: cannot open: No such file or directory" },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        struct dse_net net;
        struct dse_err err;
        char buf[512];
        memset(&err, 0, sizeof err);
        enum dse_status st = dse_prototxt_load(cases[i].path, NULL, &net, &err);
        CHECK_INT_EQ(st, cases[i].code);
        CHECK_STR_EQ(st ? dse_err_format(&err, buf, sizeof buf) : "(loaded)", cases[i].msg);
        CHECK(!strcmp(err.file, cases[i].path));
        CHECK(net.layers == NULL && net.n_layers == 0); /* nothing to free after a failure */
        if (!st) dse_net_deinit(&net);
    }

    /* Short inline texts: one line each, so every message is at line 1. */
    static const struct {
        const char *text;
        const char *msg;
    } inline_cases[] = {
        { "", "mem.prototxt: no network input; expected an Input or Data layer, or input: \"data\" "
              "with input_dim or input_shape" },
        { "name: 12", "mem.prototxt:1: 'name: 12': expected a quoted string, e.g. name: \"12\"" },
        { "input: \"data\" input_dim: [1, 3, 8, -8]",
          "mem.prototxt:1: 'input_dim: -8' is out of range; expected 1 to 1000000" },
        { "input: \"data\" input_dim: 99999999999",
          "mem.prototxt:1: 'input_dim: 99999999999': value out of range; expected at most 2147483647" },
        { "input: \"data\" input_dim: [1, 3, 8 8]",
          "mem.prototxt:1: expected ',' or ']' in the list for 'input_dim', found number 8" },
        { "layer { type: 'ReLU' bottom: 'x' top: 'y' } [ext]: 1",
          "mem.prototxt:1: extension fields ('[name]') are not supported; expected a field name" },
        { "layer { name: 'r' type: 'ReLU' bottom: 'data' top: 'data' include { phase: TRAIN } "
          "exclude { phase: TEST } }",
          "mem.prototxt:1: layer has both include and exclude rules; expected one kind (Caffe's rule)" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'c' type: 'Convolution' bottom: 'data' "
          "top: 'c' convolution_param { num_output: 4 } }",
          "mem.prototxt:1: Convolution layer 'c' has no kernel size; expected convolution_param "
          "{ kernel_size: K } or kernel_h and kernel_w" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'c' type: 'Convolution' bottom: 'data' "
          "top: 'c' convolution_param { num_output: 4 kernel_h: 3 } }",
          "mem.prototxt:1: Convolution layer 'c' gives only one of 'kernel_h' and 'kernel_w'; "
          "expected both" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'c' type: 'Convolution' bottom: 'data' "
          "top: 'c' convolution_param { num_output: 4 kernel_size: 3 kernel_h: 3 kernel_w: 3 } }",
          "mem.prototxt:1: Convolution layer 'c' gives both 'kernel_size' and 'kernel_h'/'kernel_w'; "
          "expected one or the other" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'c' type: 'Convolution' bottom: 'data' "
          "top: 'c' convolution_param { num_output: 4 kernel_size: [3, 3, 3] } }",
          "mem.prototxt:1: Convolution layer 'c' has 3 'kernel_size' values; only 2-D layers are "
          "supported (one value, or height then width)" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'c' type: 'Convolution' bottom: 'data' "
          "top: 'c' convolution_param { num_output: 4 kernel_size: 3 stride_w: 2 } }",
          "mem.prototxt:1: Convolution layer 'c' gives only one of 'stride_h' and 'stride_w'; "
          "expected both" },
        { "input: 'data' input_dim: [1, 3, 8, 8] input_shape { dim: [1, 3, 8, 8] }",
          "mem.prototxt:1: both 'input_shape' and 'input_dim'; expected one of them (Caffe's rule)" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'f' type: 'InnerProduct' "
          "bottom: 'data' top: 'f' inner_product_param { num_output: 4 axis: 2 } }",
          "mem.prototxt:1: InnerProduct layer 'f': inner product from axis 2 is not supported; "
          "expected axis 1" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'r' type: 'ReLU' top: 'r' }",
          "mem.prototxt:1: layer 'r' has no bottom; expected bottom: \"<blob>\" naming its input" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'r' bottom: 'data' top: 'r' }",
          "mem.prototxt:1: layer 'r' has no type; expected type: \"Convolution\" or another type" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'r' type: RELU bottom: 'data' }",
          "mem.prototxt:1: 'type: RELU': expected a quoted string, e.g. type: \"RELU\"" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layers { name: 'r' type: 'ReLU' bottom: 'data' }",
          "mem.prototxt:1: 'type: ReLU': expected an enum name without quotes" },
        { "input: 'data' input: 'label' input_dim: [1, 3, 8, 8, 1, 1, 1, 1] layer { name: 'a' "
          "type: 'Accuracy' bottom: 'label' }",
          "mem.prototxt:1: layer 'a' takes only the label; expected a data bottom too" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'r' type: 'ReLU' bottom: 'data' "
          "top: 'r' relu_param { negative_slope: 0.1.2 } }",
          "mem.prototxt:1: 'negative_slope: 0.1.2': expected a number" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'p' type: 'Pooling' bottom: 'data' "
          "top: 'p' pooling_param { global_pooling: yes } }",
          "mem.prototxt:1: 'global_pooling: yes': expected true or false" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 's' type: 'Scale' bottom: 'data' "
          "top: 's' scale_param { axis: 0 } }",
          "mem.prototxt:1: Scale layer 's': only per-channel scaling (axis: 1, num_axes: 1) is "
          "supported" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'c' type: 'Concat' bottom: 'data' "
          "bottom: 'data' top: 'c' concat_param { concat_dim: 0 axis: 1 } }",
          "mem.prototxt:1: Concat layer 'c': concatenation along axis 0 is not supported; expected "
          "axis 1 (channels)" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'd' type: 'Dropout' bottom: 'data' "
          "top: 'data' dropout_param { dropout_ratio: 1.5 } }",
          "mem.prototxt:1: layer 'd' (dropout): dropout ratio must be in [0, 1)" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'r' type: 'ReLU' bottom: 'data' "
          "bottom: 'data' top: 'r' }",
          "mem.prototxt:1: layer 'r' (relu) has 2 inputs; expected 1 to 1" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'r' type: 'ReLU' bottom: 'data' "
          "top: 'r' include { phase: TRAINING } }",
          "mem.prototxt:1: 'phase: TRAINING' is not a valid value; expected TRAIN or TEST" },
        { "a { b { c { d { e { f { g { h { i { j { k { l { m { n { o { p { q { r { s { t { u { v "
          "{ w { x { y { z { a { b { c { d { e { f { g { h { i { j { k { l { m { n { o { p { q { r "
          "{ s { t { u { v { w { x { y { z { a { b { c { d { e { f { g { h { i { j { k { l { m { n "
          "{ o { p {",
          "mem.prototxt:1: blocks nested more than 64 deep; expected a '}'" },
        { "name: \"a\\x\"", "mem.prototxt:1: bad escape '\\x' in string; expected hex digits after it" },
        { "name: \"a\" -", "mem.prototxt:1: unexpected '-'; expected a number right after it" },
        { "name: \"a\" \x01", "mem.prototxt:1: unexpected byte 0x01; expected a field name, value or "
                              "one of { } : [ ]" },
        { "name \"a\"", "mem.prototxt:1: expected ':' or '{' after field 'name', found string \"a\"" },
        { "name: }", "mem.prototxt:1: expected a value after 'name:', found '}'" },
        { "layer { name: 'x' > ", "mem.prototxt:1: unexpected '>'; expected '}' to close 'layer' "
                                  "opened at line 1" },
        { "12: 3", "mem.prototxt:1: expected a field name, found number 12" },
        /* a type dse does not know is named as such, not mistaken for a misspelt field */
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'roi' type: 'ROIPooling' bottom: 'data' "
          "top: 'roi' roi_pooling_param { pooled_w: 6 } }",
          "mem.prototxt:1: unknown layer type 'ROIPooling' (did you mean 'Pooling'?); supported: Input, Data, ImageData, MemoryData, "
          "HDF5Data, Convolution, Pooling, ReLU, Dropout, Concat, Eltwise, InnerProduct, Softmax, SoftmaxWithLoss, "
          "Accuracy, LRN, BatchNorm, Scale, ConvolutionDepthwise, DepthwiseConvolution, Flatten, Reshape, Slice, "
          "Sigmoid, TanH, Power" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'p' type: 'Pooling' bottom: 'data' top: 'p' "
          "roi_pooling_param { pooled_w: 6 } pooling_param { kernel_size: 2 } }",
          "mem.prototxt:1: unknown field 'roi_pooling_param' in layer (did you mean 'pooling_param'?)" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'p' type: 'Pooling' bottom: 'data' top: 'p' "
          "pooling_param { kernel_size: 2 round_mode: FLOOR ceil_mode: true } }",
          "mem.prototxt:1: Pooling layer 'p': 'ceil_mode: true' contradicts 'round_mode: FLOOR' (line 1); "
          "expected one of them" },
        { "input: 'data' input_dim: [1, 3, 8, 8] layer { name: 'p' type: 'Pooling' bottom: 'data' top: 'p' "
          "pooling_param { kernel_size: 2 ceil_mode: maybe } }",
          "mem.prototxt:1: 'ceil_mode: maybe': expected true or false" },
        { "input: 'data' input_dim: [1, 4, 8, 8] layer { name: 's' type: 'Slice' bottom: 'data' top: 'a' "
          "top: 'b' slice_param { slice_point: 1 slice_point: 2 } }",
          "mem.prototxt:1: Slice layer 's' has 2 slice_point for 2 tops; expected 1 (one fewer than the tops)" },
        { "input: 'data' input_dim: [1, 4, 8, 8] layer { name: 's' type: 'Slice' bottom: 'data' top: 'a' "
          "top: 'b' top: 'c' slice_param { slice_point: 2 slice_point: 2 } }",
          "mem.prototxt:1: Slice layer 's': slice_point 2 is not above the one before (2); expected increasing "
          "channel indices" },
        { "input: 'data' input_dim: [1, 4, 8, 8] layer { name: 's' type: 'Slice' bottom: 'data' top: 'a' "
          "top: 'b' slice_param { axis: 2 } }",
          "mem.prototxt:1: Slice layer 's': slicing along axis 2 is not supported; expected axis 1 (channels)" },
        { "input: 'data' input_dim: [1, 4, 8, 8] layer { name: 's' type: 'Slice' bottom: 'data' top: 'a' "
          "top: 'b' top: 'c' }",
          "mem.prototxt:1: layer 's:0' (slice): 4 channels do not split into 3 equal parts; give slice_point" },
        { "input: 'data' input_dim: [1, 4, 8, 8] layer { name: 's' type: 'Slice' bottom: 'data' top: 'a' "
          "top: 'b' slice_param { slice_point: 4 } }",
          "mem.prototxt:1: layer 's:1' (slice): channels 4 to 4 are not within the input's 4 channels" },
        { "input: 'data' input_dim: [1, 4, 8, 8] layer { name: 'f' type: 'Flatten' bottom: 'data' top: 'f' "
          "flatten_param { axis: 2 } }",
          "mem.prototxt:1: Flatten layer 'f': only flattening from axis 1 to the last (axis: 1, end_axis: -1) "
          "is supported" },
        { "input: 'data' input_dim: [1, 4, 8, 8] layer { name: 'r' type: 'Reshape' bottom: 'data' top: 'r' "
          "reshape_param { shape { dim: 0 dim: 2 dim: 2 dim: 8 dim: -1 } } }",
          "mem.prototxt:1: Reshape layer 'r': reshape_param { shape } has 5 dims; dse networks are N x C x H x W, "
          "so expected 1 to 4 dims" },
        { "input: 'data' input_dim: [1, 4, 8, 8] layer { name: 'r' type: 'Reshape' bottom: 'data' top: 'r' "
          "reshape_param { shape { dim: 1 dim: -1 } } }",
          "mem.prototxt:1: Reshape layer 'r': the first dim is 1; expected 0 (keep the batch): dse costs one image" },
        { "input: 'data' input_dim: [1, 4, 8, 8] layer { name: 'r' type: 'Reshape' bottom: 'data' top: 'r' "
          "reshape_param { shape { dim: 0 dim: -1 dim: -1 } } }",
          "mem.prototxt:1: layer 'r' (reshape): more than one dimension is -1 (inferred)" },
        { "input: 'data' input_dim: [1, 4, 8, 8] layer { name: 'r' type: 'Reshape' bottom: 'data' top: 'r' "
          "reshape_param { shape { dim: 0 dim: 3 dim: -1 } } }",
          "mem.prototxt:1: layer 'r' (reshape): 256 input values do not divide into 3" },
        { "input: 'data' input_dim: [1, 4, 8, 8] layer { name: 'r' type: 'Reshape' bottom: 'data' top: 'r' "
          "reshape_param { shape { dim: 0 dim: 4 dim: 8 dim: 4 } } }",
          "mem.prototxt:1: layer 'r' (reshape): shape 4x8x4 holds 128 values; the input 4x8x8 holds 256" },
        { "input: 'data' input_dim: [1, 6, 8, 8] layer { name: 'd' type: 'ConvolutionDepthwise' bottom: 'data' "
          "top: 'd' convolution_param { num_output: 4 kernel_size: 3 } }",
          "mem.prototxt:1: layer 'd' (conv): groups = 6 must divide input channels (6) and filters (4)" },
        { "input: 'data' input_dim: [1, 4, 8, 8] layer { name: 'c' type: 'Convolution' bottom: 'data' top: 'c' "
          "convolution_param { num_output: 4 kernel_size: 1 } } layer { name: 'f' type: 'Flatten' bottom: 'c' "
          "top: 'c' }",
          "mem.prototxt:1: layer 'f' (flatten) cannot work in place (top == bottom); only relu, dropout, softmax, "
          "batchnorm, scale, sigmoid, tanh, power, prelu, clip, hardsigmoid and hardswish can" },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(inline_cases); i++) {
        struct dse_net net;
        struct dse_err err;
        char buf[512];
        enum dse_status st = parse(inline_cases[i].text, NULL, &net, &err);
        CHECK(st != DSE_OK);
        CHECK_STR_EQ(st ? dse_err_format(&err, buf, sizeof buf) : "(parsed)", inline_cases[i].msg);
        if (!st) dse_net_deinit(&net);
    }
}

/* ---- mutated input --------------------------------------------------------------------- */

static uint32_t rng_next(uint64_t *s) { /* xorshift64*, state owned by the caller */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (uint32_t)((*s * 2685821657736338717ULL) >> 32);
}

static int count_lines(const char *s, size_t n) {
    int lines = 1;
    for (size_t i = 0; i < n; i++) lines += s[i] == '\n';
    return lines;
}

/* Parse exactly len bytes from a buffer of exactly that size (ASan sees any read past it);
 * the result must be a clean error or a sane network. Returns the status. */
static enum dse_status fuzz_one(const char *src, size_t len) {
    static const char path[] = "fuzz.prototxt";
    struct dse_net net;
    struct dse_err err;
    char *buf = malloc(len ? len : 1);
    if (!buf) return DSE_ERR_NOMEM;
    memcpy(buf, src, len);
    memset(&err, 0, sizeof err);
    enum dse_status st = dse_prototxt_parse(buf, len, path, NULL, &net, &err);
    if (st == DSE_OK) {
        int sane = net.in_c > 0 && net.in_h > 0 && net.in_w > 0;
        for (int i = 0; i < net.n_layers; i++)
            sane &= net.layers[i].out_c > 0 && net.layers[i].out_h > 0 && net.layers[i].out_w > 0;
        if (!sane) CHECK(sane);
        dse_net_deinit(&net);
    } else {
        int ok = (st == DSE_ERR_CONFIG || st == DSE_ERR_UNSUPPORTED || st == DSE_ERR_SHAPE) &&
                 err.code == st && !strcmp(err.file, path) && err.msg[0] != '\0' && err.line >= 0 &&
                 err.line <= count_lines(buf, len) && net.layers == NULL && net.n_layers == 0;
        if (!ok) {
            char out[512];
            fprintf(stderr, "  status %d: %s\n", st, dse_err_format(&err, out, sizeof out));
            CHECK(ok);
        }
    }
    free(buf);
    return st;
}

static void test_fuzz(void) {
    static const char interesting[] = "{}<>:[],;#\"'\\-+.eExX0159\n \t_azAZ\x7f\x80\xff";
    const char *paths[] = { "experiments/squeezenet/squeezenet_v1.0.prototxt",
                            "experiments/nin_local_global/nin.prototxt",
                            "tests/prototxt/zoo_layers.prototxt" };
    uint64_t rng = 0x9e3779b97f4a7c15ULL; /* fixed seed: failures reproduce */
    int n_ok = 0, n_err = 0;

    /* Every prefix of the syntax-rich text; the full text parses. */
    size_t n = strlen(v2_text);
    for (size_t len = 0; len <= n; len++) *(fuzz_one(v2_text, len) ? &n_err : &n_ok) += 1;
    CHECK_INT_EQ(fuzz_one(v2_text, n), DSE_OK);

    /* Random edits of it: replace, insert or delete bytes, or cut a span out. */
    char *m = malloc(n + 64);
    for (int it = 0; m && it < 4000; it++) {
        size_t len = n;
        memcpy(m, v2_text, n);
        int edits = 1 + (int)(rng_next(&rng) % 3);
        for (int e = 0; e < edits && len > 0; e++) {
            size_t at = rng_next(&rng) % len;
            char c = interesting[rng_next(&rng) % (sizeof interesting - 1)];
            switch (rng_next(&rng) % 4) {
            case 0: m[at] = c; break;
            case 1:
                memmove(m + at + 1, m + at, len - at);
                m[at] = c;
                len++;
                break;
            case 2:
                memmove(m + at, m + at + 1, len - at - 1);
                len--;
                break;
            default: {
                size_t span = 1 + rng_next(&rng) % 40;
                if (span > len - at) span = len - at;
                memmove(m + at, m + at + span, len - at - span);
                len -= span;
                break;
            }
            }
        }
        *(fuzz_one(m, len) ? &n_err : &n_ok) += 1;
    }
    free(m);

    /* Prefixes and one-byte edits of the real files. */
    for (int p = 0; p < DSE_ARRAY_LEN(paths); p++) {
        size_t len = 0;
        char *text = read_text(paths[p], &len);
        CHECK(text != NULL);
        if (!text) continue;
        for (size_t cut = 0; cut <= len; cut += 1 + rng_next(&rng) % 23) *(fuzz_one(text, cut) ? &n_err : &n_ok) += 1;
        for (int it = 0; it < 300; it++) {
            size_t at = rng_next(&rng) % len;
            char old = text[at];
            text[at] = interesting[rng_next(&rng) % (sizeof interesting - 1)];
            *(fuzz_one(text, len) ? &n_err : &n_ok) += 1;
            text[at] = old;
        }
        CHECK_INT_EQ(fuzz_one(text, len), DSE_OK);
        free(text);
    }
    printf("  fuzz: %d parsed, %d rejected cleanly\n", n_ok, n_err);
    CHECK(n_ok > 0 && n_err > 0); /* both outcomes were exercised */
}

/* ---- writing and reading back ---------------------------------------------------------- */

static char *write_net(const struct dse_net *net, size_t *len) {
    char *text = NULL;
    struct dse_err err;
    FILE *f = open_memstream(&text, len);
    if (!f) return NULL;
    enum dse_status st = dse_prototxt_write(f, net, &err);
    fclose(f);
    CHECK_OK(st);
    return text;
}

/* Name a reader would use for input k of layer l: the producing layer's name, "data", and
 * the Scale that the writer adds after a learned BatchNorm stands for that BatchNorm. */
static const char *input_name(const struct dse_net *net, const struct dse_layer *l, int k,
                              char buf[DSE_NAME_MAX]) {
    int i = l->inputs[k];
    if (i == DSE_INPUT_DATA) return "data";
    const struct dse_layer *p = &net->layers[i];
    size_t n = strlen(p->name);
    if (p->type == DSE_LAYER_SCALE && n > 6 && strcmp(p->name + n - 6, "/scale") == 0) {
        memcpy(buf, p->name, n - 6);
        buf[n - 6] = '\0';
        if (dse_net_find(net, buf) >= 0 && layer(net, buf)->type == DSE_LAYER_BATCHNORM) return buf;
    }
    return p->name;
}

/* Write net, read it back; same layers (by name), shapes, inputs and parameters. The text
 * written from the copy is the text written from the original when exact is set. */
static void roundtrip(const struct dse_net *net, int exact) {
    size_t len = 0, len2 = 0;
    struct dse_net back;
    struct dse_err err;
    char buf[512];
    char *text = write_net(net, &len);
    CHECK(text != NULL);
    if (!text) return;
    memset(&err, 0, sizeof err);
    enum dse_status st = dse_prototxt_parse(text, len, "written.prototxt", NULL, &back, &err);
    CHECK_OK(st);
    if (st) {
        fprintf(stderr, "  %s\n--- written text ---\n%s\n", dse_err_format(&err, buf, sizeof buf), text);
        free(text);
        return;
    }
    CHECK_STR_EQ(back.name, net->name);
    CHECK_INT_EQ(back.in_c, net->in_c);
    CHECK_INT_EQ(back.in_h, net->in_h);
    CHECK_INT_EQ(back.in_w, net->in_w);
    CHECK_INT_EQ(net_params(&back, NULL), net_params(net, NULL));
    for (int i = 0; i < net->n_layers; i++) {
        const struct dse_layer *a = &net->layers[i], *b = layer(&back, a->name);
        int split = a->type == DSE_LAYER_BATCHNORM && a->affine;
        char na[DSE_NAME_MAX], nb[DSE_NAME_MAX];
        CHECK_STR_EQ(dse_layer_type_str(b->type), dse_layer_type_str(a->type));
        CHECK_INT_EQ(b->out_c, a->out_c);
        CHECK_INT_EQ(b->out_h, a->out_h);
        CHECK_INT_EQ(b->out_w, a->out_w);
        CHECK_INT_EQ(b->n_inputs, a->n_inputs);
        for (int k = 0; k < a->n_inputs && k < b->n_inputs; k++)
            CHECK_STR_EQ(input_name(&back, b, k, nb), input_name(net, a, k, na));
        if (!split) CHECK_INT_EQ(layer_params(b), layer_params(a));
        CHECK_INT_EQ(layer_macs(b), layer_macs(a));
        CHECK_INT_EQ(b->global, a->global);
        CHECK_INT_EQ(b->round, a->round);
        if (exact) CHECK_INT_EQ(b->in_place, a->in_place);
        if (split) {
            char name[DSE_NAME_MAX + 8];
            snprintf(name, sizeof name, "%s/scale", a->name);
            const struct dse_layer *s = layer(&back, name);
            CHECK_INT_EQ(s->type, DSE_LAYER_SCALE);
            CHECK_INT_EQ(layer_params(b) + layer_params(s), layer_params(a));
        }
    }
    char *text2 = write_net(&back, &len2);
    if (exact && text2) CHECK_STR_EQ(text2, text);
    free(text2);
    free(text);
    dse_net_deinit(&back);
}

static void add(struct dse_net *net, struct dse_layer l, int n_in, int in0, int in1, int in_place) {
    struct dse_err err;
    l.n_inputs  = n_in;
    l.inputs[0] = in0;
    l.inputs[1] = in1;
    l.in_place  = in_place;
    CHECK_OK(dse_net_add(net, &l, &err));
}

static void test_roundtrip(void) {
    const char *paths[] = { "experiments/squeezenet/squeezenet_v1.0.prototxt",
                            "experiments/squeezenet/squeezenet_v1.1.prototxt",
                            "experiments/nin_local_global/nin.prototxt" };
    struct dse_net net;
    struct dse_err err;
    for (int p = 0; p < DSE_ARRAY_LEN(paths); p++) {
        if (load(paths[p], NULL, &net)) {
            CHECK(0);
            continue;
        }
        roundtrip(&net, 1);
        dse_net_deinit(&net);
    }

    /* Every layer type, fire modules with both bypasses, odd hyper-parameters and names. */
    dse_net_init(&net, "every \"layer\"\\type", 3, 64, 48);
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "conv1");
    l.num_output = 64, l.kernel_h = 7, l.kernel_w = 5, l.stride_h = 2, l.stride_w = 1;
    l.pad_h = 3, l.pad_w = 2;
    add(&net, l, 1, DSE_INPUT_DATA, 0, 0);
    l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn1");
    l.affine = 0;
    add(&net, l, 1, 0, 0, 1);
    l = dse_layer_make(DSE_LAYER_SCALE, "bn1_scale");
    add(&net, l, 1, 1, 0, 1);
    add(&net, dse_layer_make(DSE_LAYER_RELU, "data"), 1, 2, 0, 1);  /* 3: named like the input */
    l = dse_layer_make(DSE_LAYER_MAXPOOL, "pool1");
    l.kernel_h = l.kernel_w = 3, l.stride_h = l.stride_w = 2, l.round = DSE_ROUND_FLOOR;
    add(&net, l, 1, 3, 0, 0);
    struct dse_fire f = { .name = "fire2", .squeeze = 16, .expand1x1 = 32, .expand3x3 = 32,
                          .bypass = DSE_BYPASS_SIMPLE };
    CHECK_OK(dse_net_add_fire(&net, &f, 4, &err));
    struct dse_fire g = { .name = "fire3", .squeeze = 16, .expand1x1 = 64, .expand3x3 = 64,
                          .bypass = DSE_BYPASS_COMPLEX };
    CHECK_OK(dse_net_add_fire(&net, &g, net.n_layers - 1, &err));
    int fire3 = net.n_layers - 1;
    l = dse_layer_make(DSE_LAYER_LRN, "norm");
    l.lrn_size = 3;
    add(&net, l, 1, fire3, 0, 0);
    int norm = net.n_layers - 1;
    l = dse_layer_make(DSE_LAYER_CONV, "grouped");
    l.num_output = 32, l.kernel_h = l.kernel_w = 3, l.pad_h = l.pad_w = 2;
    l.dilation_h = l.dilation_w = 2, l.groups = 4, l.bias = 0;
    add(&net, l, 1, norm, 0, 0);
    int grouped = net.n_layers - 1;
    l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn2");           /* learned: written as BN + Scale */
    add(&net, l, 1, grouped, 0, 0);
    int bn2 = net.n_layers - 1;
    add(&net, dse_layer_make(DSE_LAYER_RELU, "relu_bn2"), 1, bn2, 0, 1);
    int relu_bn2 = net.n_layers - 1;
    l = dse_layer_make(DSE_LAYER_CONV, "side");
    l.num_output = 32, l.kernel_h = l.kernel_w = 1;
    add(&net, l, 1, norm, 0, 0);
    int side = net.n_layers - 1;
    /* In place on `side`, but `prod` below still reads side itself: must not be in place. */
    add(&net, dse_layer_make(DSE_LAYER_RELU, "relu_side"), 1, side, 0, 1);
    int relu_side = net.n_layers - 1;
    l = dse_layer_make(DSE_LAYER_ELTWISE, "prod");
    l.eltwise_op = DSE_ELTWISE_PROD;
    add(&net, l, 2, relu_bn2, side, 0);
    int prod = net.n_layers - 1;
    l = dse_layer_make(DSE_LAYER_ELTWISE, "max");
    l.eltwise_op = DSE_ELTWISE_MAX;
    add(&net, l, 2, prod, relu_side, 0);
    int max = net.n_layers - 1;
    l = dse_layer_make(DSE_LAYER_CONCAT, "cat");
    l.n_inputs = 3, l.inputs[0] = prod, l.inputs[1] = max, l.inputs[2] = relu_bn2;
    CHECK_OK(dse_net_add(&net, &l, &err));
    int cat = net.n_layers - 1;
    l = dse_layer_make(DSE_LAYER_AVGPOOL, "gpool");
    l.global = 1;
    add(&net, l, 1, cat, 0, 0);
    l = dse_layer_make(DSE_LAYER_DROPOUT, "drop");
    l.dropout_ratio = 0.3f;
    add(&net, l, 1, net.n_layers - 1, 0, 1);
    l = dse_layer_make(DSE_LAYER_FC, "fc");
    l.num_output = 10, l.bias = 0;
    add(&net, l, 1, net.n_layers - 1, 0, 0);
    int fc = net.n_layers - 1;
    add(&net, dse_layer_make(DSE_LAYER_SOFTMAX, "prob"), 1, fc, 0, 0);
    add(&net, dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss"), 1, fc, 0, 0);
    add(&net, dse_layer_make(DSE_LAYER_ACCURACY, "label"), 1, fc, 0, 0); /* named like the label */
    CHECK_OK(dse_net_infer(&net, NULL, &err));
    CHECK_INT_EQ(net.layers[fire3].type, DSE_LAYER_ELTWISE);
    CHECK_STR_EQ(net.layers[fire3].name, "fire3/bypass_add");
    CHECK(dse_net_find(&net, "fire3/bypass_conv") >= 0);
    CHECK(dse_net_find(&net, "fire2/bypass_add") >= 0);
    CHECK_INT_EQ(dse_net_find(&net, "fire2/bypass_conv"), -1);
    roundtrip(&net, 0);

    /* Details the general comparison does not see. */
    size_t len = 0;
    char *text = write_net(&net, &len);
    struct dse_net back;
    if (text && !dse_prototxt_parse(text, len, "written.prototxt", NULL, &back, &err)) {
        CHECK_STR_EQ(back.name, "every \"layer\"\\type");
        CHECK_INT_EQ(layer(&back, "relu_side")->in_place, 0);
        CHECK_INT_EQ(layer(&back, "relu_bn2")->in_place, 1);
        CHECK_INT_EQ(layer(&back, "bn2")->affine, 0);
        CHECK_INT_EQ(layer(&back, "bn2/scale")->bias, 1);
        CHECK_INT_EQ(layer(&back, "bn2/scale")->in_place, 1);
        CHECK_STR_EQ(layer(&back, "fire2/concat")->module, "fire2");
        CHECK_STR_EQ(layer(&back, "fire3/bypass_conv")->module, "fire3");
        CHECK_INT_EQ(layer(&back, "fire3/bypass_conv")->role, DSE_ROLE_BYPASS_CONV); /* roles from the names */
        CHECK_INT_EQ(layer(&back, "fire2/squeeze1x1")->role, DSE_ROLE_SQUEEZE);
        CHECK_INT_EQ(layer(&back, "fire2/relu_expand3x3")->role, DSE_ROLE_RELU_EXPAND3X3);
        CHECK_INT_EQ(layer(&back, "conv1")->role, DSE_ROLE_NONE);
        CHECK_INT_EQ(layer(&back, "grouped")->groups, 4);
        CHECK_INT_EQ(layer(&back, "grouped")->dilation_w, 2);
        CHECK_INT_EQ(layer(&back, "conv1")->kernel_w, 5);
        CHECK_INT_EQ(layer(&back, "conv1")->pad_w, 2);
        CHECK_INT_EQ(layer(&back, "conv1")->stride_w, 1);
        CHECK_NEAR(layer(&back, "drop")->dropout_ratio, 0.3, 1e-6);
        CHECK_INT_EQ(layer(&back, "norm")->lrn_size, 3);
        CHECK_INT_EQ(back.n_layers, net.n_layers + 1); /* + bn2/scale */
        CHECK(strstr(text, "# 'bn2' learns gamma and beta") != NULL);
        dse_net_deinit(&back);
    } else {
        CHECK(0);
    }
    free(text);
    dse_net_deinit(&net);
}

/* Layer types and fields of model-zoo files (tests/prototxt/zoo_layers.prototxt), each
 * shape and cost worked out by hand; layers named like MobileNet-Caffe's ("conv2_1/dw",
 * "conv2_1/dw/bn") are rows of their own, not modules. */
static void test_zoo_layers(void) {
    static const struct {
        const char *name, *type;
        int c, h, w;
        long long params, macs;
    } want[] = {
        { "conv1",         "conv",      16, 16, 16, 432,   432 * 256 },  /* 3x3x3x16, (32+2-3)/2+1 = 16 */
        { "conv1/bn",      "batchnorm", 16, 16, 16, 0,     0 },
        { "conv1/scale",   "scale",     16, 16, 16, 32,    0 },
        { "pool1",         "maxpool",   16, 8, 8,   0,     0 },          /* floor((16+2-3)/2)+1 = 8; ceil: 9 */
        { "conv2_1/dw",    "conv",      16, 8, 8,   144,   144 * 64 },   /* 16 groups of 1x3x3 */
        { "conv2_1/dw/bn", "batchnorm", 16, 8, 8,   0,     0 },
        { "relu2_1/dw",    "relu",      16, 8, 8,   0,     0 },
        { "conv2_1/sep",   "conv",      32, 8, 8,   544,   512 * 64 },
        { "pool2",         "avgpool",   32, 4, 4,   0,     0 },          /* ceil((8-3)/2)+1 = 4 */
        { "split:0",       "slice",     8, 4, 4,    0,     0 },          /* channels 0..7 */
        { "split:1",       "slice",     24, 4, 4,   0,     0 },          /* channels 8..31 */
        { "gate",          "sigmoid",   8, 4, 4,    0,     0 },
        { "squash",        "tanh",      24, 4, 4,   0,     0 },
        { "halves:0",      "slice",     12, 4, 4,   0,     0 },          /* equal parts without points */
        { "halves:1",      "slice",     12, 4, 4,   0,     0 },
        { "cube",          "power",     12, 4, 4,   0,     0 },
        { "join",          "concat",    32, 4, 4,   0,     0 },
        { "flat",          "flatten",   512, 1, 1,  0,     0 },
        { "fc",            "fc",        64, 1, 1,   32832, 512 * 64 },
        { "grid",          "reshape",   4, 4, 4,    0,     0 },          /* 0, 4, -1, 4: 64 / 16 = 4 */
        { "head",          "conv",      10, 1, 1,   650,   640 },
        { "prob",          "softmax",   10, 1, 1,   0,     0 },
    };
    struct dse_net net;
    struct dse_err err = { 0 };
    /* through dse_netfile_load, the door dse analyze uses: it once grouped any "a/b" names */
    CHECK_OK(dse_netfile_load("tests/prototxt/zoo_layers.prototxt", NULL, &net, &err));
    if (net.n_layers == 0) return;
    CHECK_INT_EQ(net.n_layers, DSE_ARRAY_LEN(want));
    for (int i = 0; i < DSE_ARRAY_LEN(want) && i < net.n_layers; i++) {
        const struct dse_layer *l = &net.layers[i];
        CHECK_STR_EQ(l->name, want[i].name);
        CHECK_STR_EQ(dse_layer_type_str(l->type), want[i].type);
        CHECK_INT_EQ(l->out_c, want[i].c);
        CHECK_INT_EQ(l->out_h, want[i].h);
        CHECK_INT_EQ(l->out_w, want[i].w);
        CHECK_INT_EQ(layer_params(l), want[i].params);
        CHECK_INT_EQ(layer_macs(l), want[i].macs);
        CHECK_STR_EQ(l->module, "");
    }
    CHECK_INT_EQ(layer(&net, "conv2_1/dw")->groups, 16);
    CHECK_INT_EQ(layer(&net, "pool1")->round, DSE_ROUND_FLOOR);
    CHECK_INT_EQ(layer(&net, "pool2")->round, DSE_ROUND_CEIL);
    CHECK_INT_EQ(layer(&net, "squash")->in_place, 1);
    CHECK_INT_EQ(layer(&net, "cube")->in_place, 1);
    CHECK_NEAR(layer(&net, "cube")->power, 3, 0);
    CHECK_NEAR(layer(&net, "cube")->power_scale, 0.5, 0);
    CHECK_INT_EQ(layer(&net, "halves:1")->inputs[0], dse_net_find(&net, "squash"));
    /* the analyzer: one row per layer (no modules), views cost no memory, work per element */
    struct dse_cost_layer c[32];
    struct dse_cost_totals tot;
    struct dse_cost_row rows[32];
    CHECK_OK(dse_cost_net(&net, 1, c, &tot, &err));
    CHECK_INT_EQ(dse_cost_rows(&net, c, 0, rows), net.n_layers);
    CHECK_INT_EQ(tot.params, 34634);
    CHECK_INT_EQ(tot.flops, 371968);
    CHECK_INT_EQ(c[dse_net_find(&net, "flat")].activations, 0);
    CHECK_INT_EQ(c[dse_net_find(&net, "grid")].activations, 0);
    CHECK_INT_EQ(c[dse_net_find(&net, "split:1")].activations, 24 * 16);
    CHECK_INT_EQ(c[dse_net_find(&net, "gate")].other_ops, 3 * 8 * 16);
    CHECK_INT_EQ(c[dse_net_find(&net, "cube")].other_ops, 2 * 12 * 16); /* scale and pow; no shift */
    CHECK_INT_EQ(layer(&net, "flat")->rf_h, 47); /* flatten: each value sees the whole map (fc's rule) */
    /* the .cfg format has no such layers: refused before a byte is written */
    char *cfg = NULL;
    size_t cfg_len = 0;
    FILE *cf = open_memstream(&cfg, &cfg_len);
    if (cf) {
        CHECK_INT_EQ(dse_netcfg_write(cf, &net, &err), DSE_ERR_UNSUPPORTED);
        CHECK_STR_EQ(err.msg, "layer 'gate' (sigmoid) has no .cfg form (docs/network-format.md lists the layers a "
                              ".cfg holds)");
        fclose(cf);
        CHECK_INT_EQ(cfg_len, 0);
        free(cfg);
    }
    dse_net_deinit(&net);

    /* V1 names of the same types */
    CHECK_OK(parse("input: 'data' input_dim: [1, 4, 2, 2] layers { name: 's' type: SLICE bottom: 'data' "
                   "top: 'a' top: 'b' } layers { name: 'g' type: SIGMOID bottom: 'a' top: 'a' } "
                   "layers { name: 't' type: TANH bottom: 'b' top: 't' } layers { name: 'p' type: POWER "
                   "bottom: 't' top: 'p' power_param { shift: 1 } } layers { name: 'f' type: FLATTEN "
                   "bottom: 'p' top: 'f' }", NULL, &net, &err));
    CHECK_INT_EQ(net.n_layers, 6);
    if (net.n_layers == 6) {
        CHECK_INT_EQ(layer(&net, "f")->out_c, 8);
        CHECK_NEAR(layer(&net, "p")->power_shift, 1, 0);
        dse_net_deinit(&net);
    }

    /* a Fire part's name without a squeeze beside it is no module: Inception's concat */
    CHECK_OK(parse("input: 'data' input_dim: [1, 4, 2, 2] layer { name: 'inception_3a/1x1' type: 'Convolution' "
                   "bottom: 'data' top: 'a' convolution_param { num_output: 2 kernel_size: 1 } } layer { name: "
                   "'inception_3a/concat' type: 'Concat' bottom: 'a' bottom: 'data' top: 'c' }", NULL, &net, &err));
    if (net.n_layers == 2) {
        CHECK_STR_EQ(net.layers[1].module, "");
        CHECK_INT_EQ(net.layers[1].role, DSE_ROLE_NONE);
        dse_net_deinit(&net);
    }

    /* a lone channel range written back: placeholder tops for the channels around it */
    dse_net_init(&net, "lone", 6, 2, 2);
    struct dse_layer s = dse_layer_make(DSE_LAYER_SLICE, "mid");
    s.slice_begin = 2, s.slice_end = 4;
    CHECK_OK(dse_net_add(&net, &s, &err));
    CHECK_OK(dse_net_infer(&net, NULL, &err));
    CHECK_INT_EQ(net.layers[0].out_c, 2);
    size_t len = 0;
    char *text = write_net(&net, &len);
    CHECK(text && strstr(text, "  top: \"mid_before\"\n  top: \"mid\"\n  top: \"mid_after\"\n") != NULL);
    CHECK(text && strstr(text, "slice_point: 2\n    slice_point: 4\n") != NULL);
    struct dse_net back;
    if (text && !dse_prototxt_parse(text, len, "written.prototxt", NULL, &back, &err)) {
        CHECK_INT_EQ(back.n_layers, 3);
        CHECK_INT_EQ(layer(&back, "mid:1")->out_c, 2);
        dse_net_deinit(&back);
    } else {
        CHECK(0);
    }
    free(text);
    dse_net_deinit(&net);
}

/* How often w occurs in s. */
static int count_of(const char *s, const char *w) {
    int n = 0;
    for (const char *p = strstr(s, w); p; p = strstr(p + 1, w)) n++;
    return n;
}

/* BatchNorm's eps and LRN's alpha, beta and k (issue #34): read from prototxt, written to
 * prototxt and .cfg only where they differ from the defaults (so that every file written before
 * reads and writes as it did), and read back the same; a bad value names its line. */
void test_eps_lrn(void) {
    static const char text[] =
        "input: 'data' input_dim: [1, 8, 6, 6]\n"
        "layer { name: 'norm1' type: 'LRN' bottom: 'data' top: 'norm1'\n"
        "  lrn_param { local_size: 5 alpha: 0.0001 beta: 0.75 k: 2 } }\n"
        "layer { name: 'bn1' type: 'BatchNorm' bottom: 'norm1' top: 'norm1' batch_norm_param { eps: 0.001 } }\n"
        "layer { name: 'bn2' type: 'BatchNorm' bottom: 'norm1' top: 'bn2' }\n";
    struct dse_net net, back;
    struct dse_err err;
    CHECK_OK(parse(text, NULL, &net, &err));
    if (net.n_layers != 3) return;
    CHECK(layer(&net, "norm1")->lrn_alpha == 1e-4f && layer(&net, "norm1")->lrn_k == 2.0f);
    CHECK(layer(&net, "norm1")->lrn_beta == 0.75f);
    CHECK(layer(&net, "bn1")->bn_eps == 0.001f);
    CHECK(layer(&net, "bn2")->bn_eps == 1e-5f);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    CHECK(f && !dse_prototxt_write(f, &net, &err));
    if (f) fclose(f);
    CHECK(out && strstr(out, "lrn_param { local_size: 5 alpha: 9.99999975e-05 k: 2 }"));
    CHECK(out && strstr(out, "batch_norm_param { eps: 0.00100000005 }"));
    CHECK(out && !strstr(out, "beta") && count_of(out, "eps:") == 1); /* defaults not written */
    if (out && !dse_prototxt_parse(out, len, "written.prototxt", NULL, &back, &err)) {
        CHECK(layer(&back, "bn1")->bn_eps == 0.001f && layer(&back, "bn2")->bn_eps == 1e-5f);
        CHECK(layer(&back, "norm1")->lrn_alpha == 1e-4f && layer(&back, "norm1")->lrn_k == 2.0f);
        dse_net_deinit(&back);
    } else {
        CHECK(0);
    }
    free(out);
    char path[] = "/tmp/dse_eps_lrn_XXXXXX", named[64];
    int fd = mkstemp(path);
    f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f && !dse_netcfg_write(f, &net, &err));
    if (f) fclose(f);
    snprintf(named, sizeof named, "%s.cfg", path);
    CHECK(rename(path, named) == 0);
    size_t cl = 0;
    char *cfg = read_text(named, &cl);
    CHECK(cfg && strstr(cfg, "type = \"lrn\"; size = 5; alpha = 9.99999975e-05; k = 2;"));
    CHECK(cfg && strstr(cfg, "type = \"batchnorm\"; affine = false; eps = 0.00100000005; }"));
    CHECK(cfg && !strstr(cfg, "beta") && count_of(cfg, "eps") == 1); /* defaults not written */
    free(cfg);
    if (!dse_netcfg_load(named, NULL, &back, &err)) {
        CHECK(layer(&back, "bn1")->bn_eps == 0.001f && layer(&back, "bn2")->bn_eps == 1e-5f);
        CHECK(layer(&back, "norm1")->lrn_alpha == 1e-4f && layer(&back, "norm1")->lrn_k == 2.0f);
        CHECK(layer(&back, "norm1")->lrn_beta == 0.75f);
        dse_net_deinit(&back);
    } else {
        CHECK(0);
        fprintf(stderr, "  %s\n", err.msg);
    }
    remove(named);
    dse_net_deinit(&net);

    CHECK_INT_EQ(parse("input: 'data' input_dim: [1, 2, 2, 2]\nlayer { name: 'bn' type: 'BatchNorm' bottom: 'data' "
                       "top: 'bn'\n batch_norm_param { eps: 0 } }", NULL, &net, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "BatchNorm layer 'bn': batch_norm_param eps 0; expected a number > 0");
    CHECK_INT_EQ(err.line, 3);
    CHECK_INT_EQ(parse("input: 'data' input_dim: [1, 2, 2, 2]\nlayer { name: 'n' type: 'LRN' bottom: 'data' "
                       "top: 'n' lrn_param { k: 0 } }", NULL, &net, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "LRN layer 'n': lrn_param k 0, alpha 1, beta 0.75; expected k > 0, alpha >= 0");
}

/* ONNX in: tests/test_prototxt_onnx.c */
void test_onnx_roundtrip(void);
void test_onnx_refusals(void);
void test_onnx_helper(void);
void test_onnx_ops(void);

static const struct check_case cases[] = {
    { "proto-squeeze10",  test_squeeze10 },
    { "proto-squeeze11",  test_squeeze11 },
    { "proto-nin",        test_nin },
    { "proto-v1-v2",      test_v1_v2 },
    { "proto-inputs",     test_inputs },
    { "proto-errors",     test_errors },
    { "proto-shared",     test_shared },
    { "proto-fuzz",       test_fuzz },
    { "proto-roundtrip",  test_roundtrip },
    { "proto-zoo-layers", test_zoo_layers },
    { "proto-eps-lrn",    test_eps_lrn },
    { "onnx-roundtrip",   test_onnx_roundtrip },
    { "onnx-refusals",    test_onnx_refusals },
    { "onnx-helper",      test_onnx_helper },
    { "onnx-ops",         test_onnx_ops },
};

int main(int argc, char **argv) {
    return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv);
}
