/* test_engine_cuda_train.c: test_engine_cuda's whole-model cases: two epochs of SGD on two
 * small nets step by step against the CPU (mixed precision too) and inference; the training
 * loop (engine/train.c) on the device against the CPU on a synthetic dataset, its checkpoints
 * read on the other device, resumes on the GPU; and pinned cuDNN choices (the choice file),
 * with which a resumed GPU run repeats an uninterrupted one bit for bit. */
#include "tests/engine_cuda_util.h"

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
void test_train_mixed(void) {
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
void test_train_step(void) {
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

void test_train_fire(void) {
    struct dse_net net;
    fire_net(&net);
    train_compare("fire net (conv, pool, fire with bypass, dropout)", &net, 4);
    dse_net_deinit(&net);
}

void test_train_bn(void) {
    struct dse_net net;
    bn_net(&net);
    train_compare("bn net (batchnorm, scale, fc)", &net, 5);
    dse_net_deinit(&net);
}

/* Inference models (outputs share buffers) agree too. */
void test_inference(void) {
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
void test_train_run(void) {
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
    remove_dir(dir);
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
void test_conv_pin(void) {
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
    remove_dir(dir);
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
void test_conv_pool_models(void) {
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
void test_ckpt_loss_scale(void) {
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
    remove_dir(dir);
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
void test_train_pinned(void) {
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
    remove_dir(dir);
}
