/* test_engine_export.c: models out (ONNX, Caffe) and Caffe's weights in (issue #14 items 2
 * and 4; netfile/netfile.h). Each network is trained a few SGD steps (so weights and batch
 * norm statistics are not their initial values), exported, and:
 *   onnx-*    checked by ONNX's checker and run in onnxruntime on 100 images beside dse's
 *             own inference (tests/onnx_check.py: probabilities within 1e-4 relative,
 *             top-1 the same); exits 77 (skipped, saying why) without python3-onnx or
 *             onnxruntime, which ctest then reports as not run;
 *   caffe-*   written as a .caffemodel, read back into a fresh model: every value the same
 *             bit for bit; and bad files refused with the file and layer named;
 *   export-*  the protobuf structure of an ONNX file read back with our reader, and the
 *             layers ONNX export refuses;
 *   compressed-*  a compressed model (engine/compress.h's struct dse_dsez, made here in
 *             memory as dse compress makes one) exported with its weights as codebook
 *             indices and a codebook (Gather), checked in onnxruntime as onnx-*, far smaller
 *             than the float export, read back by dse's own ONNX reader (issue #35);
 *   import-*  ONNX in (dse import MODEL.onnx, issue #34 item 3): dse's exports and a model in
 *             PyTorch's forms imported, the checkpoint run beside onnxruntime within 1e-5;
 *             changed bytes imported or refused. */
#include "netfile/netfile.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/pb.h"
#include "base/pcg32.h"
#include "data/data.h"
#include "dse/exportcmd.h"
#include "engine/compress.h"
#include "engine/model.h"
#include "engine/train.h"
#include "tests/check.h"
#include "tests/dsez_share.h"
#include "tests/nets.h"
#include "tests/testfs.h"

#ifdef DSE_SANITIZED
#define IMAGES 10 /* 10x slower under the sanitizers: the same checks on fewer images */
#else
#define IMAGES 100
#endif

static int skipped; /* onnx cases: set when the reference tools are missing */

/* Uniform floats in [0, 1) from PCG32(seed). */
static void fill(float *x, int64_t n, uint64_t seed) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, seed, 7);
    for (int64_t i = 0; i < n; i++) x[i] = (float)dse_pcg32_next(&r) / 4294967296.0f;
}

/* A few SGD steps on random images (training mode: batch norm statistics move), then
 * inference mode. */
static void train_steps(struct dse_model *m, int steps) {
    const int64_t n = dse_tensor_count(&m->input);
    const int K = m->nodes[m->loss].in[0]->c;
    float *x = malloc(sizeof *x * (size_t)n), loss;
    int *labels = malloc(sizeof *labels * (size_t)m->batch);
    struct dse_err err = { 0 };
    DSE_ASSERT(x && labels);
    dse_model_set_training(m, 1);
    for (int s = 0; s < steps; s++) {
        fill(x, n, 100 + (uint64_t)s);
        for (int i = 0; i < n; i++) x[i] -= 0.5f;
        for (int b = 0; b < m->batch; b++) labels[b] = (b + s) % K;
        CHECK_OK(dse_model_forward(m, x, labels, &loss, &err));
        CHECK_OK(dse_model_backward(m, &err));
        dse_model_sgd(m, 0.01f, 0.9f, 1e-4f);
    }
    dse_model_set_training(m, 0);
    free(x), free(labels);
}

/* A network with what Fire nets lack: batch norm (Caffe's, then Scale with bias; and one
 * that learns gamma and beta), grouped and dilated conv, average pooling with padding
 * whose last window overhangs it (a Pad node) and without padding (count_include_pad 0),
 * fc layers with a batch norm between them (rank 2), dropout. 3x16x16 in, 5 classes. */
static void bn_net(struct dse_net *n) {
    struct dse_layer l;
    dse_net_init(n, "bn_net", 3, 16, 16);
    DSE_ASSERT(!net_conv(n, "conv1", 8, 3, 1, 1));
    l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn1"), l.in_place = 1, l.affine = 0;
    DSE_ASSERT(!dse_net_add(n, &l, NULL));
    l = dse_layer_make(DSE_LAYER_SCALE, "scale1"), l.in_place = 1, l.bias = 1;
    DSE_ASSERT(!dse_net_add(n, &l, NULL));
    DSE_ASSERT(!net_simple(n, DSE_LAYER_RELU, "relu1", 1));
    l = dse_layer_make(DSE_LAYER_AVGPOOL, "pool1"); /* 16 -> 9: the last window overhangs the padding */
    l.kernel_h = l.kernel_w = 3, l.stride_h = l.stride_w = 2, l.pad_h = l.pad_w = 1;
    DSE_ASSERT(!dse_net_add(n, &l, NULL));
    l = dse_layer_make(DSE_LAYER_CONV, "conv2");
    l.num_output = 12, l.kernel_h = l.kernel_w = 3, l.pad_h = l.pad_w = 2, l.dilation_h = l.dilation_w = 2;
    l.groups = 4;
    DSE_ASSERT(!dse_net_add(n, &l, NULL));
    l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn2"), l.in_place = 1, l.affine = 1;
    DSE_ASSERT(!dse_net_add(n, &l, NULL));
    DSE_ASSERT(!net_simple(n, DSE_LAYER_RELU, "relu2", 1));
    DSE_ASSERT(!net_pool(n, DSE_LAYER_AVGPOOL, "pool2", 3, 2, 0)); /* 9 -> 4, no padding */
    DSE_ASSERT(!net_pool(n, DSE_LAYER_MAXPOOL, "pool3", 2, 2, 0)); /* 4 -> 2 */
    l = dse_layer_make(DSE_LAYER_FC, "fc1"), l.num_output = 20;
    DSE_ASSERT(!dse_net_add(n, &l, NULL));
    l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn3"), l.affine = 1;
    DSE_ASSERT(!dse_net_add(n, &l, NULL));
    DSE_ASSERT(!net_simple(n, DSE_LAYER_RELU, "relu3", 1));
    DSE_ASSERT(!net_simple(n, DSE_LAYER_DROPOUT, "drop3", 1));
    l = dse_layer_make(DSE_LAYER_FC, "fc2"), l.num_output = 5;
    DSE_ASSERT(!dse_net_add(n, &l, NULL));
    DSE_ASSERT(!net_simple(n, DSE_LAYER_SOFTMAX_LOSS, "loss", 0));
    DSE_ASSERT(!dse_net_infer(n, NULL, NULL));
}

enum src { SRC_FILE, SRC_SQUEEZENET, SRC_BN };

struct net_case {
    const char *id;
    enum src    src;
    const char *path;     /* SRC_FILE */
    int         v11;      /* SRC_SQUEEZENET */
    int         norm;     /* 1: ImageNet's statistics as the model's first nodes */
    int         batch, steps;
};

static const struct net_case nets[] = {
    { "fmnist",  SRC_FILE, "experiments/squeezenet/squeezenet_fmnist.cfg",                 0, 1, 10, 3 },
    { "v1.0",    SRC_SQUEEZENET, NULL,                                                     0, 1, 4, 2 },
    { "v1.1",    SRC_SQUEEZENET, NULL,                                                     1, 1, 4, 2 },
    { "simple",  SRC_FILE, "experiments/squeezenet/squeezenet_v1.0_simple_bypass.cfg",    0, 0, 4, 2 },
    { "complex", SRC_FILE, "experiments/squeezenet/squeezenet_v1.0_complex_bypass.cfg",   0, 1, 4, 2 },
    { "bn",      SRC_BN,   NULL,                                                           0, 1, 10, 3 },
};

static const struct net_case *net_case(const char *id) {
    for (int i = 0; i < DSE_ARRAY_LEN(nets); i++)
        if (!strcmp(nets[i].id, id)) return &nets[i];
    return NULL;
}

/* The case's network, trained a few steps, as a CPU model of batch c->batch. */
static struct dse_model *trained(const struct net_case *c) {
    struct dse_net net;
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    if (c->src == SRC_FILE) CHECK_OK(dse_netfile_load(c->path, NULL, &net, &err));
    else if (c->src == SRC_SQUEEZENET) CHECK_OK(build_squeezenet(&net, c->v11, DSE_BYPASS_NONE));
    else bn_net(&net);
    struct dse_model_opts mo = { .batch = c->batch, .threads = 2, .seed = 3, .init = DSE_INIT_MSRA };
    CHECK_OK(dse_model_new(&net, &mo, &m, &err));
    dse_net_deinit(&net);
    if (m) train_steps(m, c->steps);
    return m;
}

static void norm_of(const struct dse_model *m, int on, struct dse_data_norm *norm) {
    memset(norm, 0, sizeof *norm);
    if (on) dse_data_norm_imagenet(m->net.in_c == 1 ? 1 : 3, norm);
}

/* ---- ONNX, run in onnxruntime ------------------------------------------------------- */
static void beside_ort(struct dse_model *m, const struct dse_data_norm *norm, const char *dir, const char *model,
                       double tol);

static void onnx_case(const char *id) {
    const struct net_case *c = net_case(id);
    struct dse_model *m = trained(c);
    struct dse_err err = { 0 };
    struct dse_data_norm norm;
    char dir[64], model[128];
    if (!m) return;
    norm_of(m, c->norm, &norm);
    static const char names[5][64] = { "a", "b,c", "d\"e", "f", "g" };
    struct dse_export_meta meta = { .candidate = "c0123456789abcdef", .metaparams = "{\"sr\": 0.125}",
                                    .data = "test", .norm = &norm, .top1 = 0.5, .checkpoint = "none" };
    if (m->nodes[m->loss].in[0]->c == 5) meta.classes = 5, meta.class_names = names;
    tmpdir_make(dir);
    snprintf(model, sizeof model, "%s/%s.onnx", dir, id);
    CHECK_OK(dse_onnx_save(m, &meta, model, &err));
    beside_ort(m, &norm, dir, model, 1e-4);
    tmpdir_remove(dir);
    dse_model_free(m);
}

/* m's probabilities on IMAGES random images beside onnxruntime's of model (written into
 * dir): the ONNX model gets x, dse (x - mean) / std; within tol relative (onnx_check.py). */
static void beside_ort(struct dse_model *m, const struct dse_data_norm *norm, const char *dir, const char *model,
                       double tol) {
    struct dse_err err = { 0 };
    char in_path[128], prob_path[128], cmd[1024];
    snprintf(in_path, sizeof in_path, "%s/inputs.f32", dir);
    snprintf(prob_path, sizeof prob_path, "%s/probs.f32", dir);
    const int64_t per = dse_tensor_count(&m->input) / m->batch;
    const int K = m->nodes[m->loss].in[0]->c;
    const int batches = (IMAGES + m->batch - 1) / m->batch, n = batches * m->batch;
    float *x = malloc(sizeof *x * (size_t)(per * n)), *xn = malloc(sizeof *xn * (size_t)(per * m->batch));
    float *probs = malloc(sizeof *probs * (size_t)n * (size_t)K), loss;
    int *labels = calloc((size_t)m->batch, sizeof *labels);
    DSE_ASSERT(x && xn && probs && labels);
    fill(x, per * n, 42);
    const int64_t hw = per / m->net.in_c;
    for (int b = 0; b < batches; b++) {
        for (int64_t i = 0; i < per * m->batch; i++) {
            const int ch = (int)(i % per / hw);
            const float v = x[b * m->batch * per + i];
            xn[i] = norm->c ? (v - norm->mean[ch]) / norm->std[ch] : v;
        }
        CHECK_OK(dse_model_forward(m, xn, labels, &loss, &err));
        memcpy(probs + (size_t)b * m->batch * K, dse_model_probs(m), sizeof *probs * (size_t)m->batch * K);
    }
    write_raw(in_path, x, sizeof *x * (size_t)(per * n));
    write_raw(prob_path, probs, sizeof *probs * (size_t)n * K);
    snprintf(cmd, sizeof cmd, "sh tests/onnx_check.sh %s %s %s %d %g", model, in_path, prob_path, n, tol);
    int rc = system(cmd);
    rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
    if (rc == 77) skipped = 1;
    else CHECK_INT_EQ(rc, 0);
    free(x), free(xn), free(probs), free(labels);
}

static void test_onnx_fmnist(void) { onnx_case("fmnist"); }
static void test_onnx_v10(void) { onnx_case("v1.0"); }
static void test_onnx_v11(void) { onnx_case("v1.1"); }
static void test_onnx_simple(void) { onnx_case("simple"); }
static void test_onnx_complex(void) { onnx_case("complex"); }
static void test_onnx_bn(void) { onnx_case("bn"); }

/* ---- Compressed models out (issue #35): indices + codebook through Gather ---------------- */

/* The case's network compressed at `bits` (uint8 indices to 8, uint16 above): its ONNX export
 * beside onnxruntime as the float export is (within 1e-4), its size against the float export's
 * printed (`smaller` times smaller at least), and read back by dse's ONNX reader to the same
 * layers and shapes (so the same parameters) as the float export. */
/* In an ONNX model's bytes: the initializers of element type `type`, and the nodes of op `op`. */
static void onnx_census(const uint8_t *buf, size_t len, int type, const char *op, int *inits, int *nodes) {
    struct dse_pb_reader r, g, t;
    struct dse_pb_field f, x, y;
    *inits = *nodes = 0;
    dse_pb_reader_init(&r, buf, len);
    while (dse_pb_next(&r, &f) == 1) {
        if (f.field != 7) continue; /* ModelProto.graph */
        dse_pb_reader_init(&g, f.data, f.len);
        while (dse_pb_next(&g, &x) == 1) {
            if (x.field != 5 && x.field != 1) continue; /* GraphProto.initializer, node */
            dse_pb_reader_init(&t, x.data, x.len);
            while (dse_pb_next(&t, &y) == 1) {
                *inits += x.field == 5 && y.field == 2 && (int)y.v == type; /* TensorProto.data_type */
                *nodes += x.field == 1 && y.field == 4 && y.len == strlen(op) && !memcmp(y.data, op, y.len);
            }
        }
    }
}

static void compressed_case(const char *id, int bits, double smaller, int readback) {
    const struct net_case *c = net_case(id);
    struct dse_model *m = trained(c);
    struct dse_err err = { 0 };
    struct dse_data_norm norm;
    struct dse_dsez z;
    char dir[64], model[128];
    uint8_t *fbuf, *zbuf;
    size_t flen, zlen;
    if (!m) return;
    norm_of(m, c->norm, &norm);
    dsez_share(m, bits, 0.33, &z);
    struct dse_export_meta meta = { .norm = &norm, .top1 = -1 }, zmeta = meta;
    zmeta.dsez = &z;
    CHECK_OK(dse_onnx_write(m, &meta, &fbuf, &flen, &err));
    CHECK_OK(dse_onnx_write(m, &zmeta, &zbuf, &zlen, &err));
    printf("  %s at %d bits: ONNX %zu bytes, %zu as float32 (%.2fx smaller)\n", id, bits, zlen, flen,
           (double)flen / (double)zlen);
    CHECK((double)zlen * smaller < (double)flen); /* 0: no claim */
    int shared = 0, inits, gathers, casts;
    for (int k = 0; k < z.n; k++) shared += z.t[k].bits > 0;
    onnx_census(zbuf, zlen, bits > 8 ? 4 : 2, "Gather", &inits, &gathers); /* uint16, uint8 */
    onnx_census(zbuf, zlen, 1, "Cast", &(int){ 0 }, &casts);
    CHECK(shared > 0);
    CHECK_INT_EQ(inits, shared);
    CHECK_INT_EQ(gathers, shared);
    CHECK_INT_EQ(casts, shared);
    tmpdir_make(dir);
    snprintf(model, sizeof model, "%s/%s-%d.onnx", dir, id, bits);
    write_raw(model, zbuf, zlen);
    beside_ort(m, &norm, dir, model, 1e-4);
    /* dse's own reader folds Gather(codebook, Cast(indices)) into each weight */
    struct dse_net fnet, znet;
    if (readback) CHECK_OK(dse_onnx_parse(fbuf, flen, "float.onnx", NULL, &fnet, &err));
    if (readback && !err.code) CHECK_OK(dse_onnx_parse(zbuf, zlen, model, NULL, &znet, &err));
    if (err.code) fprintf(stderr, "%s: %s\n", err.file, err.msg);
    else if (readback) {
        CHECK_INT_EQ(znet.n_layers, fnet.n_layers);
        for (int i = 0; i < fnet.n_layers && i < znet.n_layers; i++) {
            CHECK_STR_EQ(znet.layers[i].name, fnet.layers[i].name);
            CHECK_INT_EQ(znet.layers[i].type, fnet.layers[i].type);
            CHECK(znet.layers[i].out_c == fnet.layers[i].out_c && znet.layers[i].out_h == fnet.layers[i].out_h &&
                  znet.layers[i].in_c == fnet.layers[i].in_c);
        }
        dse_net_deinit(&fnet), dse_net_deinit(&znet);
        /* dse import reads float initializers only: such a weight is refused, not misread */
        char ckpt[160], cfg[160];
        snprintf(ckpt, sizeof ckpt, "%s/imported.ckpt", dir);
        snprintf(cfg, sizeof cfg, "%s/imported.cfg", dir);
        CHECK_INT_EQ(dse_import_onnx_run(model, NULL, NULL, NULL, ckpt, cfg, stdout, &err), DSE_ERR_CONFIG);
        CHECK_STR_EQ(err.msg, "layer 'conv1' (conv): the model gives no tensor 0 of it");
    }
    free(fbuf), free(zbuf);
    tmpdir_remove(dir);
    dsez_share_free(&z);
    dse_model_free(m);
}

static void test_compressed_fmnist(void) { compressed_case("fmnist", 8, 3.5, 1); }
/* a codebook as large as a small layer; dse's reader does not read the Mul of a Scale layer */
static void test_compressed_bn(void) { compressed_case("bn", 12, 0, 0); }

/* End to end with a .dsez file (engine/dsez.c): SqueezeNet-FMNIST trained a few steps, shared
 * at 6 bits and written with dse_dsez_write; dse export of it (dse_export_run, as the command
 * runs it) as ONNX keeps the sharing: beside onnxruntime with the model dse_checkpoint_load
 * decodes from the .dsez, and far smaller than the float export of its decoded checkpoint
 * (--format ckpt); as Caffe, the .caffemodel holds the decoded floats bit for bit. */
static void test_compressed_dsez(void) {
    const struct net_case *c = net_case("fmnist");
    struct dse_model *m = trained(c), *back = NULL, *caffe = NULL;
    struct dse_err err = { 0 };
    struct dse_dsez z;
    struct dse_net net;
    char dir[64], dsez[128], onnx[128], ckpt[128], fonnx[128], cm[128];
    struct stat sz, sf;
    int next;
    int64_t it;
    if (!m) return;
    dsez_share(m, 6, 0.33, &z);
    struct dse_ckpt_meta meta = { .data = "fashion-mnist" };
    norm_of(m, 1, &meta.norm);
    tmpdir_make(dir);
    snprintf(dsez, sizeof dsez, "%s/m.dsez", dir), snprintf(onnx, sizeof onnx, "%s/m.onnx", dir);
    snprintf(ckpt, sizeof ckpt, "%s/decoded.ckpt", dir), snprintf(fonnx, sizeof fonnx, "%s/decoded.onnx", dir);
    snprintf(cm, sizeof cm, "%s/m.caffemodel", dir);
    CHECK_OK(dse_dsez_write(&z, m, &meta, dsez, &err));
    struct dse_export_req q = { .net_path = c->path, .checkpoint = dsez, .format = DSE_EXPORT_ONNX, .out = onnx };
    CHECK_OK(dse_export_run(&q, stdout, &err));
    q.format = DSE_EXPORT_CKPT, q.out = ckpt;
    CHECK_OK(dse_export_run(&q, stdout, &err));
    q.format = DSE_EXPORT_CAFFE, q.out = cm;
    CHECK_OK(dse_export_run(&q, stdout, &err));
    q.format = DSE_EXPORT_ONNX, q.checkpoint = ckpt, q.out = fonnx;
    CHECK_OK(dse_export_run(&q, stdout, &err));
    CHECK(stat(onnx, &sz) == 0 && stat(fonnx, &sf) == 0);
    printf("  %s: ONNX %lld bytes, %lld from its decoded checkpoint; the .dsez %lld bytes\n", dsez,
           (long long)sz.st_size, (long long)sf.st_size, (long long)z.file_bytes);
    CHECK(sz.st_size * 3.5 < sf.st_size);
    CHECK_OK(dse_netfile_load(c->path, NULL, &net, &err));
    struct dse_model_opts mo = { .batch = c->batch, .threads = 2, .seed = 9, .init = DSE_INIT_MSRA, .inference = 1 };
    CHECK_OK(dse_model_new(&net, &mo, &back, &err));
    CHECK_OK(dse_model_new(&net, &mo, &caffe, &err));
    dse_net_deinit(&net);
    if (back && caffe) {
        CHECK_OK(dse_checkpoint_load(back, dsez, &next, &it, &err));
        CHECK_OK(dse_caffemodel_load(caffe, cm, NULL, &err));
        for (int p = 0; p < m->n_params; p++) { /* the decoded values, bit for bit, both ways */
            const size_t n = sizeof(float) * (size_t)dse_tensor_count(m->params[p]);
            CHECK(!memcmp(back->params[p]->data, m->params[p]->data, n));
            CHECK(!memcmp(caffe->params[p]->data, m->params[p]->data, n));
        }
        dse_model_set_training(back, 0);
        beside_ort(back, &meta.norm, dir, onnx, 1e-4);
    }
    dse_model_free(caffe);
    dse_model_free(back);
    tmpdir_remove(dir);
    dsez_share_free(&z);
    dse_model_free(m);
}

/* A .dsez that is not the model's: its decoded values, or its count, differ from the model's
 * weights, refused naming the tensor (the graph would compute another model). */
static void test_compressed_mismatch(void) {
    struct dse_model *m = trained(net_case("bn"));
    struct dse_err err = { 0 };
    struct dse_dsez z;
    uint8_t *buf = NULL;
    size_t len;
    char msg[512];
    if (!m) return;
    dsez_share(m, 4, 0.5, &z);
    struct dse_export_meta meta = { .top1 = -1, .dsez = &z };
    z.t[0].index[5] = (uint16_t)(z.t[0].index[5] == 3 ? 4 : 3);
    CHECK_INT_EQ(dse_onnx_write(m, &meta, &buf, &len, &err), DSE_ERR_CONFIG);
    snprintf(msg, sizeof msg, "compressed tensor 'conv1 weight': value 5 decodes to %.9g (codebook entry %d of 16), "
             "the model holds %.9g", (double)z.t[0].codebook[z.t[0].index[5]], z.t[0].index[5],
             (double)m->nodes[0].weight->data[5]);
    CHECK_STR_EQ(err.msg, msg);
    z.t[0].count--;
    CHECK_INT_EQ(dse_onnx_write(m, &meta, &buf, &len, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "compressed tensor 'conv1 weight': 215 values of 4 bits and a codebook of 16; the model's "
                          "tensor has 216");
    CHECK(buf == NULL);
    dsez_share_free(&z);
    dse_model_free(m);
}

/* ---- ONNX in: dse import MODEL.onnx beside onnxruntime (issue #34 item 3) -------------- */

/* model imported (dse_import_onnx_run) into dir/imported.cfg and .ckpt, loaded as dse eval
 * loads them, batch `batch`, its probabilities beside onnxruntime's of model within tol. */
static struct dse_model *imported(const char *model, const char *dir, int batch, double tol) {
    char ckpt[128], cfg[128];
    struct dse_err err = { 0 };
    struct dse_net net;
    struct dse_ckpt_info info = { 0 };
    struct dse_model *m = NULL;
    int next;
    int64_t it;
    snprintf(ckpt, sizeof ckpt, "%s/imported.ckpt", dir);
    snprintf(cfg, sizeof cfg, "%s/imported.cfg", dir);
    CHECK_OK(dse_import_onnx_run(model, NULL, NULL, NULL, ckpt, cfg, stdout, &err));
    if (err.code) return fprintf(stderr, "%s: %s\n", err.file, err.msg), NULL;
    CHECK_OK(dse_checkpoint_info(ckpt, &info, &err));
    CHECK_OK(dse_netfile_load(cfg, NULL, &net, &err));
    struct dse_model_opts mo = { .batch = batch, .threads = 2, .seed = 3, .init = DSE_INIT_MSRA, .inference = 1 };
    CHECK_OK(dse_model_new(&net, &mo, &m, &err));
    dse_net_deinit(&net);
    if (m) CHECK_OK(dse_checkpoint_load(m, ckpt, &next, &it, &err));
    if (m) dse_model_set_training(m, 0), beside_ort(m, &info.norm, dir, model, tol);
    free(info.class_names);
    return m;
}

/* dse's own network exported and imported again: every weight, bias and running statistic
 * the same bits as the trained model's, the network the same layers, onnxruntime's
 * probabilities within 1e-5; the class names the export wrote (10 classes) recorded again. */
static void import_case(const char *id) {
    const struct net_case *c = net_case(id);
    struct dse_model *m = trained(c), *back;
    struct dse_err err = { 0 };
    struct dse_data_norm norm;
    char dir[64], model[128];
    if (!m) return;
    norm_of(m, c->norm, &norm);
    static const char names[10][64] = { "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine" };
    struct dse_export_meta meta = { .norm = &norm, .top1 = -1 };
    if (m->nodes[m->loss].in[0]->c == 10) meta.classes = 10, meta.class_names = names; /* back from the metadata */
    tmpdir_make(dir);
    snprintf(model, sizeof model, "%s/%s.onnx", dir, id);
    CHECK_OK(dse_onnx_save(m, &meta, model, &err));
    if ((back = imported(model, dir, c->batch, c->id[0] == 'c' ? 1e-4 : 1e-5))) {
        char ckpt[160];
        struct dse_ckpt_info info;
        snprintf(ckpt, sizeof ckpt, "%s/imported.ckpt", dir);
        CHECK_OK(dse_checkpoint_info(ckpt, &info, &err));
        CHECK(!info.class_names == !meta.classes);
        if (info.class_names && meta.classes) {
            CHECK_INT_EQ(info.classes, 10);
            CHECK_STR_EQ(info.class_names[0], "zero");
            CHECK_STR_EQ(info.class_names[9], "nine");
        }
        free(info.class_names);
        int tensors = 0;
        for (int i = 0; i < m->net.n_layers; i++) {
            const struct dse_node *a = &m->nodes[i];
            const struct dse_tensor *ta[4] = { a->weight, a->bias, a->run_mean, a->run_var };
            const int j = dse_net_find(&back->net, m->net.layers[i].name);
            if (!a->weight && !a->run_mean) continue;
            CHECK(j >= 0);
            if (j < 0) continue;
            const struct dse_node *b = &back->nodes[j];
            const struct dse_tensor *tb[4] = { b->weight, b->bias, b->run_mean, b->run_var };
            for (int k = 0; k < 4; k++) {
                CHECK(!ta[k] == !tb[k]);
                if (!ta[k] || !tb[k]) continue;
                const int64_t n = (int64_t)ta[k]->n * ta[k]->c * ta[k]->h * ta[k]->w;
                CHECK_INT_EQ((int64_t)tb[k]->n * tb[k]->c * tb[k]->h * tb[k]->w, n);
                CHECK(!memcmp(ta[k]->data, tb[k]->data, sizeof *ta[k]->data * (size_t)n));
                tensors++;
            }
        }
        CHECK(tensors >= m->n_params); /* every learned tensor compared (and the running statistics) */
        CHECK_INT_EQ(back->n_params, m->n_params);
        int dropouts = 0; /* export leaves them out: inference is the identity */
        for (int i = 0; i < m->net.n_layers; i++) dropouts += m->net.layers[i].type == DSE_LAYER_DROPOUT;
        CHECK_INT_EQ(back->net.n_layers, m->net.n_layers - dropouts);
    }
    dse_model_free(back);
    tmpdir_remove(dir);
    dse_model_free(m);
}

static void test_import_fmnist(void) { import_case("fmnist"); }
static void test_import_v11(void) { import_case("v1.1"); }
static void test_import_complex(void) { import_case("complex"); }

/* A network in the forms PyTorch's exporter writes (tests/onnx_check.py --make-pytorch:
 * BatchNormalization, a ResNet basic block with Add, Gemm transB=1, MatMul + Add, Flatten) and
 * one ending as VGG and AlexNet do (--make-vgg: Flatten of a 6x6 map before the Gemm) and
 * one with Split, Slice and a 4-d Reshape (--make-views: the .cfg's slice and reshape): each
 * beside onnxruntime (within 1e-5), with the layers dse keeps. */
static void test_import_pytorch(void) {
    static const struct {
        const char *make;
        int layers;
    } cases[] = {
        { .make = "pytorch", .layers = 16 }, /* the Flatten left out; the loss for the Softmax */
        { .make = "vgg", .layers = 7 },      /* the Flatten of a 6x6 map left out: fc6 reads 8x6x6, its weights in
                                                CHW order */
        { .make = "views", .layers = 11 },   /* Split, Slice and a 4-d Reshape as .cfg slice and reshape layers */
    };
    char dir[64], model[128], cmd[512];
    tmpdir_make(dir);
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        snprintf(model, sizeof model, "%s/%s.onnx", dir, cases[i].make);
        snprintf(cmd, sizeof cmd, "sh tests/onnx_check.sh --make-%s %s", cases[i].make, model);
        int rc = system(cmd);
        rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
        if (rc == 77) {
            skipped = 1;
            break;
        }
        CHECK_INT_EQ(rc, 0);
        struct dse_model *m = rc ? NULL : imported(model, dir, 4, 1e-5);
        if (m) CHECK_INT_EQ(m->net.n_layers, cases[i].layers);
        dse_model_free(m);
    }
    tmpdir_remove(dir);
}

/* Models whose weights dse import refuses (tests/onnx_check.py --make-bad KIND), each beside
 * its exact message (%s: the file); nothing is written (a .cfg already at --net-out stays as it
 * was, no checkpoint, no temporary file). Then --out or --net-out naming the model (or each
 * other) refused before anything is read or written: the model stays. */
static void test_import_refusals(void) {
    static const struct {
        const char *kind, *msg;
    } bad[] = {
        { "double",   "%s: tensor 'w' is of data type 11; dse imports float32 (type 1) weights" },
        { "external", "%s: tensor 'w' keeps its values in an external file; dse imports a model whose weights "
                      "are in the .onnx itself" },
        { "short",    "%s: tensor 'w' does not hold 18 float values once (in raw_data or float_data)" },
        { "channels", "%s: the input's Sub and Div normalize 20 channels; a dse checkpoint records at most 4" },
    };
    static const char kept[] = "# the user's own network, kept\n";
    char dir[64], model[128], ckpt[128], cfg[128], tmp[256], cmd[512], want[512], buf[1024];
    tmpdir_make(dir);
    snprintf(ckpt, sizeof ckpt, "%s/bad.ckpt", dir);
    snprintf(cfg, sizeof cfg, "%s/bad.cfg", dir);
    write_raw(cfg, kept, sizeof kept - 1);
    for (int i = 0; i < DSE_ARRAY_LEN(bad); i++) {
        struct dse_err err = { 0 };
        snprintf(model, sizeof model, "%s/%s.onnx", dir, bad[i].kind);
        snprintf(cmd, sizeof cmd, "sh tests/onnx_check.sh --make-bad %s %s", bad[i].kind, model);
        int rc = system(cmd);
        rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
        if (rc == 77) {
            skipped = 1;
            break;
        }
        CHECK_INT_EQ(rc, 0);
        snprintf(want, sizeof want, bad[i].msg, model);
        CHECK(dse_import_onnx_run(model, NULL, NULL, NULL, ckpt, cfg, stdout, &err) != DSE_OK);
        CHECK_STR_EQ(dse_err_format(&err, buf, (int)sizeof buf), want);
        size_t n;
        unsigned char *was = read_all(cfg, &n);
        CHECK(n == sizeof kept - 1 && !memcmp(was, kept, n));
        free(was);
        snprintf(tmp, sizeof tmp, "%s/.bad.cfg.import-%ld.tmp.cfg", dir, (long)getpid());
        CHECK(access(ckpt, F_OK) != 0 && access(tmp, F_OK) != 0);
    }
    static const struct {
        int out, net_out; /* 0: ckpt, 1: cfg, 2: the model, 3 and 4: one new file spelt two ways */
    } same[] = { { 2, 1 }, { 0, 2 }, { 1, 1 }, { 3, 4 } };
    char fresh[128], fresh2[128];
    snprintf(fresh, sizeof fresh, "%s/fresh.cfg", dir);
    snprintf(fresh2, sizeof fresh2, "%s/./fresh.cfg", dir);
    for (int i = 0; i < DSE_ARRAY_LEN(same) && !skipped; i++) {
        struct dse_err err = { 0 };
        const char *path[5] = { ckpt, cfg, model, fresh, fresh2 };
        size_t n0, n1;
        unsigned char *before = read_all(model, &n0), *after;
        snprintf(want, sizeof want, "--out %s and --net-out %s must be two files other than the model %s",
                 path[same[i].out], path[same[i].net_out], model);
        CHECK(dse_import_onnx_run(model, NULL, NULL, NULL, path[same[i].out], path[same[i].net_out], stdout, &err) ==
              DSE_ERR_CONFIG);
        CHECK_STR_EQ(dse_err_format(&err, buf, (int)sizeof buf), want);
        after = read_all(model, &n1);
        CHECK(n0 == n1 && !memcmp(before, after, n0));
        CHECK(access(fresh, F_OK) != 0);
        free(before);
        free(after);
    }
    if (!skipped) { /* --out a folder: refused before the .cfg already at --net-out is replaced */
        struct dse_err err = { 0 };
        snprintf(want, sizeof want, "--out %s is a folder; name a file", dir);
        CHECK(dse_import_onnx_run(model, NULL, NULL, NULL, dir, cfg, stdout, &err) == DSE_ERR_CONFIG);
        CHECK_STR_EQ(dse_err_format(&err, buf, (int)sizeof buf), want);
        size_t n;
        unsigned char *was = read_all(cfg, &n);
        CHECK(n == sizeof kept - 1 && !memcmp(was, kept, n));
        free(was);
    }
    tmpdir_remove(dir);
}

/* tests/onnx/tiny.onnx with single bytes changed (every 23rd byte, three values each): each
 * variant imported or refused with a message, never a crash (the sanitizer build checks the
 * tensors' bounds), and where the graph still reads, the weights decoded or refused. */
static void test_import_bad_bytes(void) {
    size_t len;
    unsigned char *good = read_all("tests/onnx/tiny.onnx", &len);
    char dir[64], model[128], ckpt[128], cfg[128];
    int imported = 0, refused = 0;
    CHECK(good != NULL);
    if (!good) return;
    tmpdir_make(dir);
    snprintf(model, sizeof model, "%s/bad.onnx", dir);
    snprintf(ckpt, sizeof ckpt, "%s/bad.ckpt", dir);
    snprintf(cfg, sizeof cfg, "%s/bad.cfg", dir);
    FILE *log = fopen("/dev/null", "w");
    for (size_t i = 0; i < len; i += 23) { /* each import writes (and fsyncs) two files: a few seconds */
        static const unsigned char with[3] = { 0x00, 0x7f, 0xff };
        for (int k = 0; k < 3; k++) {
            unsigned char *bad = malloc(len);
            struct dse_err err = { 0 };
            DSE_ASSERT(bad);
            memcpy(bad, good, len);
            bad[i] = with[k];
            write_raw(model, bad, len);
            if (dse_import_onnx_run(model, NULL, NULL, NULL, ckpt, cfg, log, &err)) {
                refused++;
                CHECK(err.msg[0] != '\0');
            } else {
                imported++;
            }
            free(bad);
        }
    }
    fclose(log);
    printf("  import of changed bytes: %d imported, %d refused\n", imported, refused);
    CHECK(imported > 0 && refused > 0);
    free(good);
    tmpdir_remove(dir);
}

/* ---- ONNX structure, read back with our own reader ---------------------------------- */
static int count_field(const uint8_t *p, size_t n, int field) {
    struct dse_pb_reader r;
    struct dse_pb_field f;
    int k = 0, got;
    dse_pb_reader_init(&r, p, n);
    while ((got = dse_pb_next(&r, &f)) == 1) k += f.field == field;
    return got < 0 ? -1 : k;
}

static void test_export_structure(void) {
    struct dse_model *m = trained(net_case("bn"));
    struct dse_err err = { 0 };
    uint8_t *buf;
    size_t len;
    if (!m) return;
    CHECK_OK(dse_onnx_write(m, NULL, &buf, &len, &err));
    struct dse_pb_reader r;
    struct dse_pb_field f, graph = { 0 };
    int ir = 0, opset = 0;
    dse_pb_reader_init(&r, buf, len);
    while (dse_pb_next(&r, &f) == 1) {
        if (f.field == 1) ir = (int)f.v;
        if (f.field == 7) graph = f;
        if (f.field == 8) {
            struct dse_pb_reader o;
            struct dse_pb_field g;
            dse_pb_reader_init(&o, f.data, f.len);
            while (dse_pb_next(&o, &g) == 1)
                if (g.field == 2) opset = (int)g.v;
        }
    }
    CHECK_INT_EQ(ir, DSE_ONNX_IR);
    CHECK_INT_EQ(opset, 13);
    /* nodes: Conv, BatchNormalization, Mul + Add (scale1), Relu, Pad + AveragePool (pool1:
     * 16 -> 9, its last window overhangs the padding), Conv, BatchNormalization, Relu,
     * AveragePool, MaxPool, Flatten + Gemm, BatchNormalization, Relu, (dropout: none), Gemm
     * (already 2-d: no Flatten), Softmax = 18. Initializers: conv1 2, bn1 4, scale1 2, pool1's
     * pads 1, conv2 2, bn2 4, fc1 2, bn3 4, fc2 2 = 23 (no normalization: no data.mean/std). */
    CHECK_INT_EQ(count_field(graph.data, graph.len, 1), 18);
    CHECK_INT_EQ(count_field(graph.data, graph.len, 5), 23);
    CHECK_INT_EQ(count_field(graph.data, graph.len, 11), 1);
    CHECK_INT_EQ(count_field(graph.data, graph.len, 12), 1);
    free(buf);
    /* class names, one a line: a control byte in a name cannot split it (issue #31) */
    static const char names[3][64] = { "dog\nnorm", "c\ra\tt", "e" };
    struct dse_export_meta meta = { .data = "test", .classes = 3, .class_names = names };
    CHECK_OK(dse_onnx_write(m, &meta, &buf, &len, &err));
    static const char want[] = "dog?norm\nc?a?t\ne";
    int found = 0;
    for (size_t i = 0; buf && i + sizeof want - 1 <= len && !found; i++) found = !memcmp(buf + i, want, sizeof want - 1);
    CHECK(found);
    free(buf);
    dse_model_free(m);

    /* refused: a layer with no ONNX form (eltwise max), named with its line */
    struct dse_net net;
    dse_net_init(&net, "max", 1, 8, 8);
    DSE_ASSERT(!net_conv(&net, "a", 4, 3, 1, 1));
    DSE_ASSERT(!net_conv(&net, "b", 4, 3, 1, 1));
    struct dse_layer l = dse_layer_make(DSE_LAYER_ELTWISE, "max");
    l.eltwise_op = DSE_ELTWISE_MAX, l.n_inputs = 2, l.inputs[0] = 0, l.inputs[1] = 1, l.line = 9;
    DSE_ASSERT(!dse_net_add(&net, &l, NULL));
    DSE_ASSERT(!dse_net_infer(&net, NULL, NULL));
    struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1, .inference = 1 };
    /* the engine cannot build it either: the message names the layer */
    CHECK_INT_EQ(dse_model_new(&net, &mo, &m, &err), DSE_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "max") != NULL);
    dse_net_deinit(&net);
}

/* ---- Caffe: round trip and bad files ------------------------------------------------- */
static void caffe_case(const char *id) {
    const struct net_case *c = net_case(id);
    struct dse_model *a = trained(c), *b = NULL;
    struct dse_err err = { 0 };
    char dir[64], path[128];
    int skipped_layers = -1;
    if (!a) return;
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/%s.caffemodel", dir, id);
    CHECK_OK(dse_caffemodel_save(a, path, &err));
    struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 99, .init = DSE_INIT_MSRA, .inference = 1 };
    CHECK_OK(dse_model_new(&a->net, &mo, &b, &err));
    if (b) {
        CHECK_OK(dse_caffemodel_load(b, path, &skipped_layers, &err));
        CHECK_INT_EQ(skipped_layers, 0);
        /* every learned value and running statistic, bit for bit */
        int same = 1, tensors = 0;
        for (int i = 0; i < a->net.n_layers; i++) {
            const struct dse_tensor *ta[4] = { a->nodes[i].weight, a->nodes[i].bias, a->nodes[i].run_mean,
                                               a->nodes[i].run_var };
            const struct dse_tensor *tb[4] = { b->nodes[i].weight, b->nodes[i].bias, b->nodes[i].run_mean,
                                               b->nodes[i].run_var };
            for (int k = 0; k < 4; k++) {
                if (!ta[k]) continue;
                tensors++;
                same &= !memcmp(ta[k]->data, tb[k]->data, sizeof(float) * (size_t)dse_tensor_count(ta[k]));
            }
        }
        CHECK(same);
        CHECK(tensors > 0);
    }
    dse_model_free(b);
    tmpdir_remove(dir);
    dse_model_free(a);
}

static void test_caffe_fmnist(void) { caffe_case("fmnist"); }
static void test_caffe_complex(void) { caffe_case("complex"); }
static void test_caffe_bn(void) { caffe_case("bn"); }

/* Bad files: another network's weights, a truncated file, bytes that are not protobuf. */
static void test_caffe_bad(void) {
    struct dse_model *bn = trained(net_case("bn")), *fm = trained(net_case("fmnist"));
    struct dse_err err = { 0 };
    char dir[64], path[128], trunc[128], junk[128];
    if (!bn || !fm) {
        dse_model_free(bn), dse_model_free(fm);
        return;
    }
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/bn.caffemodel", dir);
    snprintf(trunc, sizeof trunc, "%s/trunc.caffemodel", dir);
    snprintf(junk, sizeof junk, "%s/junk.caffemodel", dir);
    CHECK_OK(dse_caffemodel_save(bn, path, &err));
    CHECK_INT_EQ(dse_caffemodel_load(fm, path, NULL, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "layer 'conv1' blob 0 is 8x3x3x3; the network needs 96x1x3x3");
    char *data = NULL;
    size_t len = 0;
    CHECK_OK(dse_fs_read(path, &data, &len, &err));
    write_raw(trunc, data, len - 10);
    CHECK_INT_EQ(dse_caffemodel_load(bn, trunc, NULL, &err), DSE_ERR_IO);
    /* the layer being read is named (issue #34), or, its name cut off too, the one before it */
    CHECK_STR_EQ(err.msg, "not a Caffe NetParameter (.caffemodel): layer 'fc2' (layer 10 of the file) is cut short: "
                          "its message needs 460 bytes, the file holds 450 more (a truncated file?)");
    CHECK(!strcmp(err.file, trunc));
    write_raw(trunc, data, len - 460 + 1); /* fc2's tag and length (4 bytes) and 1 byte of it */
    CHECK_INT_EQ(dse_caffemodel_load(bn, trunc, NULL, &err), DSE_ERR_IO);
    CHECK_STR_EQ(err.msg, "not a Caffe NetParameter (.caffemodel): layer 10 of the file, after 'bn3/scale', is cut "
                          "short: its message needs 460 bytes, the file holds 1 more (a truncated file?)");
    write_raw(junk, "\x0f\x01\x02", 3);
    CHECK_INT_EQ(dse_caffemodel_load(bn, junk, NULL, &err), DSE_ERR_IO);
    /* a file of fmnist's layers lacks bn's "bn1" */
    CHECK_OK(dse_caffemodel_save(fm, path, &err));
    CHECK_INT_EQ(dse_caffemodel_load(bn, path, NULL, &err), DSE_ERR_CONFIG);
    free(data);
    tmpdir_remove(dir);
    dse_model_free(bn), dse_model_free(fm);
}

static const struct check_case cases[] = {
    { "export-structure", test_export_structure },
    { "caffe-fmnist",     test_caffe_fmnist },
    { "caffe-complex",    test_caffe_complex },
    { "caffe-bn",         test_caffe_bn },
    { "caffe-bad",        test_caffe_bad },
    { "onnx-fmnist",      test_onnx_fmnist },
    { "onnx-v1.0",        test_onnx_v10 },
    { "onnx-v1.1",        test_onnx_v11 },
    { "onnx-simple",      test_onnx_simple },
    { "onnx-complex",     test_onnx_complex },
    { "onnx-bn",          test_onnx_bn },
    { "compressed-fmnist", test_compressed_fmnist },
    { "compressed-bn",    test_compressed_bn },
    { "compressed-mismatch", test_compressed_mismatch },
    { "compressed-dsez",  test_compressed_dsez },
    { "import-fmnist",    test_import_fmnist },
    { "import-v1.1",      test_import_v11 },
    { "import-complex",   test_import_complex },
    { "import-pytorch",   test_import_pytorch },
    { "import-refusals",  test_import_refusals },
    { "import-bad-bytes", test_import_bad_bytes },
};

int main(int argc, char **argv) {
    int rc = check_main(cases, DSE_ARRAY_LEN(cases), argc, argv);
    if (!rc && skipped) {
        printf("skipped: the ONNX files were written but not run (see above: python3-onnx or onnxruntime missing)\n");
        return 77;
    }
    return rc;
}
