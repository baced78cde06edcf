/* test_engine_train.c: the trainable model (engine/model.c) and training loop
 * (engine/train.c): whole-network gradients against finite differences (Fire modules with
 * bypass, concat views included), learning on Fashion-MNIST, bit-identical resume from a
 * checkpoint, corrupt checkpoints refused, divergence reported, learning-rate policies,
 * device options refused cleanly where they cannot work (no GPU, tf32 on the CPU). The
 * training loop on a GPU: tests/test_engine_cuda.c (train-run). */
#include "engine/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/pack.h"
#include "data/synth.h"
#include "metaparams/metaparams.h"
#include "tests/engine_train_util.h"
#include "tests/nets.h"
#include "tests/testfs.h"

#include <zlib.h>

/* Three 12x12 images of uniform values in [-0.5, 0.5) from PCG32 seed (seed, seed), the
 * input of the tests on tiny_net(net, 0). */
static void tiny_input(float x[3 * 144], uint64_t seed) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, seed, seed);
    for (int i = 0; i < 3 * 144; i++) x[i] = (float)dse_pcg32_next(&r) / 4294967296.0f - 0.5f;
}

/* d loss / d param by central differences in double, against the model's gradient. */
static void test_model_gradients(void) {
    struct dse_net net;
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    tiny_net(&net, 0);
    struct dse_model_opts mo = { .batch = 3, .threads = 1, .seed = 5, .init = DSE_INIT_MSRA };
    CHECK_OK(dse_model_new(&net, &mo, &m, &err));
    if (!m) return;
    /* the expand outputs are views into the concat buffer: no copy */
    int e1 = dse_net_find(&m->net, "fire2/expand1x1"), cat = dse_net_find(&m->net, "fire2/concat");
    CHECK(e1 >= 0 && cat >= 0);
    if (e1 >= 0 && cat >= 0) CHECK(m->outs[e1].data == m->outs[cat].data);
    float x[3 * 144], loss, lp, lm;
    int labels[3] = { 0, 3, 1 };
    tiny_input(x, 3);
    CHECK_OK(dse_model_forward(m, x, labels, &loss, &err));
    CHECK_OK(dse_model_backward(m, &err));
    CHECK(isfinite(loss) && loss > 0);
    int checked = 0, bad = 0;
    for (int p = 0; p < m->n_params; p++) {
        struct dse_tensor *t = m->params[p];
        int64_t n = dse_tensor_count(t);
        for (int64_t k = 0; k < n; k += n / 3 + 1) {
            float keep = t->data[k], g = t->grad[k], h = 1e-2f;
            t->data[k] = keep + h;
            dse_model_forward(m, x, labels, &lp, &err);
            t->data[k] = keep - h;
            dse_model_forward(m, x, labels, &lm, &err);
            t->data[k] = keep;
            double num = ((double)lp - (double)lm) / (2.0 * h);
            double tol = 2e-2 * fmax(fabs(num), fabs(g)) + 2e-3;
            checked++;
            if (fabs(num - g) > tol) {
                bad++;
                fprintf(stderr, "  param %d [%lld]: backward %g, finite difference %g\n", p, (long long)k, g, num);
            }
        }
    }
    CHECK(checked > 30);
    CHECK_INT_EQ(bad, 0);
    /* The same net for inference only: same loss, no gradients, less memory. */
    struct dse_model *mi = NULL;
    mo.inference = 1;
    CHECK_OK(dse_model_new(&net, &mo, &mi, &err));
    if (mi) {
        float li;
        dse_model_set_training(mi, 0);
        dse_model_set_training(m, 0);
        CHECK_OK(dse_model_forward(mi, x, labels, &li, &err));
        CHECK_OK(dse_model_forward(m, x, labels, &loss, &err));
        CHECK(li == loss);
        CHECK(mi->outs[0].grad == NULL && mi->params[0]->grad == NULL);
        CHECK(dse_model_bytes(mi) < dse_model_bytes(m));
        /* Inference shares activation buffers whose lives do not overlap: its arena is
         * smaller than the training arena's data half (every output kept). */
        CHECK(mi->arena_floats < m->arena_floats - m->grad_floats);
        CHECK_INT_EQ(dse_model_backward(mi, &err), DSE_ERR_INTERNAL);
        dse_model_free(mi);
    }
    dse_model_free(m);
    dse_net_deinit(&net);
}

static void test_lr_policies(void) {
    struct dse_train_opts o;
    dse_train_opts_default(&o);
    o.lr = 0.1f;
    o.policy = DSE_LR_FIXED;
    CHECK_NEAR(dse_train_lr(&o, 50, 100, 10), 0.1, 1e-6);
    o.policy = DSE_LR_LINEAR;
    CHECK_NEAR(dse_train_lr(&o, 50, 100, 10), 0.05, 1e-6);
    CHECK_NEAR(dse_train_lr(&o, 0, 100, 10), 0.1, 1e-6);
    o.policy = DSE_LR_POLY, o.power = 2;
    CHECK_NEAR(dse_train_lr(&o, 50, 100, 10), 0.025, 1e-6);
    o.policy = DSE_LR_STEP, o.gamma = 0.1f, o.step_epochs = 3;
    CHECK_NEAR(dse_train_lr(&o, 29, 100, 10), 0.1, 1e-6);  /* epoch 2 */
    CHECK_NEAR(dse_train_lr(&o, 30, 100, 10), 0.01, 1e-6); /* epoch 3 */
    o.policy = DSE_LR_FIXED, o.warmup_epochs = 1;
    CHECK_NEAR(dse_train_lr(&o, 4, 100, 10), 0.05, 1e-6);  /* 5/10 of the way up */
}

/* A short real training: the loss falls and accuracy is far above chance (10%). */
static void test_learns(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    struct dse_net net;
    struct dse_train_opts o;
    struct dse_train_result *r = malloc(sizeof *r);
    struct dse_err err = { 0 };
    char buf[600];
    /* conv, pool, a Fire module with complex bypass, pool, fc: SqueezeNet's own classifier
     * (conv + ReLU + global average pool) starts too slowly to show learning in 128 steps. */
    dse_net_init(&net, "t", 1, 28, 28);
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "conv1");
    l.num_output = 16, l.kernel_h = l.kernel_w = 3, l.pad_h = l.pad_w = 1;
    CHECK_OK(dse_net_add(&net, &l, NULL));
    l = dse_layer_make(DSE_LAYER_RELU, "relu_conv1");
    l.in_place = 1;
    CHECK_OK(dse_net_add(&net, &l, NULL));
    l = dse_layer_make(DSE_LAYER_MAXPOOL, "pool1");
    l.kernel_h = l.kernel_w = 3, l.stride_h = l.stride_w = 2;
    CHECK_OK(dse_net_add(&net, &l, NULL));
    struct dse_fire f = { .name = "fire2", .squeeze = 8, .expand1x1 = 16, .expand3x3 = 16,
                          .bypass = DSE_BYPASS_COMPLEX };
    CHECK_OK(dse_net_add_fire(&net, &f, net.n_layers - 1, NULL));
    dse_strlcpy(l.name, "pool2", sizeof l.name);
    l.n_inputs = 0;
    CHECK_OK(dse_net_add(&net, &l, NULL));
    l = dse_layer_make(DSE_LAYER_FC, "fc");
    l.num_output = 10;
    CHECK_OK(dse_net_add(&net, &l, NULL));
    CHECK_OK(dse_net_infer(&net, NULL, NULL));
    dse_train_opts_default(&o);
    o.epochs = 2, o.batch = 32, o.limit_train = 2048, o.limit_test = 1000, o.init = DSE_INIT_MSRA;
    o.lr = 0.01f; /* the net has no loss layer: softmax cross-entropy is attached to fc */
    enum dse_status st = dse_train_run(&net, &o, r, &err);
    CHECK_OK(st);
    if (st) fprintf(stderr, "  %s\n", dse_err_format(&err, buf, sizeof buf));
    CHECK_STR_EQ(r->status, "done");
    CHECK_INT_EQ(r->epochs_done, 2);
    CHECK(r->epochs[1].train_loss < r->epochs[0].train_loss);
    CHECK(r->top1 > 0.6f);
    if (r->top1 <= 0.6f) fprintf(stderr, "  top-1 %.3f, losses %.3f %.3f\n", r->top1, r->epochs[0].train_loss, r->epochs[1].train_loss);
    CHECK(r->top5 >= r->top1);
    CHECK(r->img_per_s > 0);
    CHECK_INT_EQ(r->epochs[1].unpredicted, 0);
    free(r);
    dse_net_deinit(&net);
}

/* Gradient clipping (dse_model_clip_grad): the norm is the L2 norm of every gradient
 * as one vector; above max_norm the next step is the step with the gradients times
 * max_norm / norm (bit for bit: the same float products), below it the plain step, and
 * the factor does not carry over to the step after. */
static void test_clip_grad(void) {
    struct dse_net net;
    struct dse_model *a = NULL, *b = NULL;
    struct dse_err err = { 0 };
    tiny_net(&net, 0);
    struct dse_model_opts mo = { .batch = 3, .threads = 1, .seed = 5, .init = DSE_INIT_MSRA };
    CHECK_OK(dse_model_new(&net, &mo, &a, &err));
    CHECK_OK(dse_model_new(&net, &mo, &b, &err));
    if (!a || !b) goto done;
    a->cx.conv_force = b->cx.conv_force = DSE_CPU_CONV_GEMM_BATCH; /* timed choices could differ */
    float x[3 * 144], loss;
    int labels[3] = { 0, 3, 1 };
    tiny_input(x, 7);
    for (int step = 0; step < 3; step++) {
        CHECK_OK(dse_model_forward(a, x, labels, &loss, &err));
        CHECK_OK(dse_model_backward(a, &err));
        CHECK_OK(dse_model_forward(b, x, labels, &loss, &err));
        CHECK_OK(dse_model_backward(b, &err));
        double sum = 0, norm = -1;
        for (int p = 0; p < b->n_params; p++)
            for (int64_t i = 0; i < dse_tensor_count(b->params[p]); i++)
                sum += (double)b->params[p]->grad[i] * b->params[p]->grad[i];
        int clipped = -1;
        /* step 0 clips to a quarter of the norm, step 1 allows twice the norm, step 2 is off */
        const double max = step == 0 ? sqrt(sum) / 4 : step == 1 ? 2 * sqrt(sum) : 0;
        CHECK_OK(dse_model_clip_grad(a, max, &norm, &clipped, &err));
        CHECK_NEAR(norm, sqrt(sum), 1e-9 * sqrt(sum));
        CHECK(sum > 0);
        CHECK_INT_EQ(clipped, step == 0);
        const float s = step == 0 ? (float)(max / norm) : 1.0f;
        for (int p = 0; p < b->n_params; p++)
            for (int64_t i = 0; i < dse_tensor_count(b->params[p]); i++) b->params[p]->grad[i] *= s;
        dse_model_sgd(a, 0.05f, 0.9f, 1e-3f);
        dse_model_sgd(b, 0.05f, 0.9f, 1e-3f);
        int same = 1;
        for (int p = 0; p < a->n_params; p++)
            same &= !memcmp(a->params[p]->data, b->params[p]->data, sizeof(float) * (size_t)dse_tensor_count(a->params[p]));
        CHECK(same);
    }
done:
    dse_model_free(a);
    dse_model_free(b);
    dse_net_deinit(&net);
}

/* dse_model_step (the training loop's step, issue #20 item 3) is forward + backward + clip +
 * SGD bit for bit, with the losses and clipped steps in the tally; a non-finite loss marks
 * the tally diverged at that step and leaves the parameters alone from there until the
 * tally is reset. */
static void test_step_tally(void) {
    struct dse_net net;
    struct dse_model *a = NULL, *b = NULL;
    struct dse_err err = { 0 };
    tiny_net(&net, 0);
    struct dse_model_opts mo = { .batch = 3, .threads = 1, .seed = 5, .init = DSE_INIT_MSRA };
    CHECK_OK(dse_model_new(&net, &mo, &a, &err));
    CHECK_OK(dse_model_new(&net, &mo, &b, &err));
    if (!a || !b) goto done;
    a->cx.conv_force = b->cx.conv_force = DSE_CPU_CONV_GEMM_BATCH; /* timed choices could differ */
    float x[3 * 144], loss;
    int labels[3] = { 0, 3, 1 };
    double sum = 0;
    int64_t clipped = 0;
    struct dse_step_tally t;
    for (int step = 0; step < 4; step++) {
        tiny_input(x, 7 + (uint64_t)step);
        const double clip = step % 2 ? 0.05 : 0; /* tiny: odd steps clip */
        CHECK_OK(dse_model_forward(a, x, labels, &loss, &err));
        CHECK_OK(dse_model_backward(a, &err));
        double norm;
        int c = 0;
        if (clip > 0) CHECK_OK(dse_model_clip_grad(a, clip, &norm, &c, &err));
        dse_model_sgd(a, 0.05f, 0.9f, 1e-3f);
        sum += loss, clipped += c;
        float *xb = dse_model_batch_buffer(b, &err);
        CHECK(xb != NULL);
        if (!xb) goto done;
        memcpy(xb, x, sizeof x);
        CHECK_OK(dse_model_step(b, xb, labels, 0.05f, 0.9f, 1e-3f, clip, &err));
    }
    CHECK_OK(dse_model_tally(b, &t, 0, &err));
    CHECK_INT_EQ(t.steps, 4);
    CHECK_INT_EQ(t.diverged_at, -1);
    CHECK_INT_EQ(t.clipped, 2);
    CHECK_INT_EQ(clipped, 2);
    CHECK(t.loss_sum == sum);
    int same = 1;
    for (int p = 0; p < a->n_params; p++)
        same &= !memcmp(a->params[p]->data, b->params[p]->data, sizeof(float) * (size_t)dse_tensor_count(a->params[p]));
    CHECK(same);
    /* Step 1 of a new tally has a loss that is not finite: every parameter positive and an
     * input of +inf make every logit +inf, and the softmax inf - inf (a NaN in the input
     * would not do: ReLU maps NaN to 0). Diverged there, and nothing changes from then on,
     * though steps 2 and 3 (finite, lr 0.05) would change the parameters. */
    CHECK_OK(dse_model_tally(b, &t, 1, &err));
    for (int p = 0; p < b->n_params; p++) {
        for (int64_t i = 0; i < dse_tensor_count(b->params[p]); i++)
            b->params[p]->data[i] = fabsf(b->params[p]->data[i]) + 1e-3f;
        memset(b->momentum[p], 0, sizeof(float) * (size_t)dse_tensor_count(b->params[p]));
    }
    const uint64_t n = dse_model_state_count(b);
    float *before = malloc(n * sizeof *before), *after = malloc(n * sizeof *after);
    for (int step = 0; step < 4 && before && after; step++) {
        tiny_input(x, 20 + (uint64_t)step);
        if (step == 1) {
            for (int i = 0; i < 3 * 144; i++) x[i] = INFINITY;
            CHECK_OK(dse_model_state_get(b, before, &err));
        }
        CHECK_OK(dse_model_step(b, x, labels, step ? 0.05f : 0.0f, 0.9f, 1e-3f, 0, &err));
    }
    CHECK_OK(dse_model_tally(b, &t, 1, &err));
    CHECK_INT_EQ(t.steps, 4);
    CHECK_INT_EQ(t.diverged_at, 1);
    CHECK(!isfinite(t.loss_sum));
    if (before && after) {
        CHECK_OK(dse_model_state_get(b, after, &err));
        CHECK(!memcmp(before, after, n * sizeof *before));
    }
    free(before), free(after);
    CHECK_OK(dse_model_tally(b, &t, 0, &err)); /* reset: a new tally */
    CHECK_INT_EQ(t.steps, 0);
    CHECK_INT_EQ(t.diverged_at, -1);
done:
    dse_model_free(a);
    dse_model_free(b);
    dse_net_deinit(&net);
}

/* The CPU model fuses each conv's ReLU into the conv (dse_node.relu_out, engine/model.c
 * fuse_relus; and leaves conv1's mask to pool1, plan_relu_pools): against the same model
 * built with DSE_NO_FUSE=1, every activation and
 * gradient (the whole arena), the loss and the parameters after two SGD steps are the same
 * bits, for every conv strategy (each masks and adds its bias in its own place), on 1 and
 * 2 threads, at batch 3 and 1 (2 threads share a single image's output channels
 * forward), with complex bypass, and simple bypass with dropout (classifier bias 0.5, so
 * conv10's ReLU is open where the mask matters). */
static void test_fused_relu(void) {
    static const int algos[] = { DSE_CPU_CONV_GEMM_BATCH, DSE_CPU_CONV_GEMM_IMAGE, DSE_CPU_CONV_WINOGRAD,
                                 DSE_CPU_CONV_DIRECT };
    const int na = DSE_ARRAY_LEN(algos);
    for (int v = 0; v < 2 * 2 * 2 * na; v++) {
        const int algo = algos[v % na], threads = 1 + v / na % 2, batch = v / (2 * na) % 2 ? 1 : 3;
        struct dse_mp mp = tiny_fire_mp();
        if (v / (4 * na)) mp.bypass = DSE_BYPASS_SIMPLE, mp.dropout = 0.5;
        struct dse_net net;
        mp_net(&net, &mp);
        struct dse_model *m[2] = { NULL, NULL };
        struct dse_err err = { 0 };
        struct dse_model_opts mo = { .batch = batch, .threads = threads, .seed = 5, .init = DSE_INIT_MSRA,
                                     .classifier_bias = 0.5f };
        CHECK_OK(dse_model_new(&net, &mo, &m[0], &err));
        setenv("DSE_NO_FUSE", "1", 1);
        CHECK_OK(dse_model_new(&net, &mo, &m[1], &err));
        unsetenv("DSE_NO_FUSE");
        if (!m[0] || !m[1]) goto next;
        int fused[2] = { 0, 0 }, cut[2] = { 0, 0 }, zeroes[2] = { 0, 0 };
        for (int k = 0; k < 2; k++) {
            m[k]->cx.conv_force = algo;
            for (int i = 0; i < m[k]->net.n_layers; i++)
                fused[k] += m[k]->nodes[i].fused, cut[k] += m[k]->nodes[i].relu_dy_masked + m[k]->nodes[i].pool_relu,
                    zeroes[k] += m[k]->nodes[i].dx_whole;
        }
        /* pool1 zeroes conv1's gradient itself (plan_whole_grads); unfused, the ReLU reads it too.
           The arenas compared below hold the gradients of both steps */
        CHECK_INT_EQ(zeroes[0], 1);
        CHECK_INT_EQ(zeroes[1], 0);
        CHECK(fused[0] >= 6); /* conv1, conv10, and each fire's squeeze and expands */
        CHECK_INT_EQ(fused[1], 0);
        CHECK_INT_EQ(cut[0], 2); /* conv1's mask left to pool1 (engine/model.c plan_relu_pools) */
        CHECK_INT_EQ(cut[1], 0);
        float x[3 * 144];
        const int labels[3] = { 0, 3, 1 };
        tiny_input(x, 9);
        const int same = same_two_steps(m, x, labels);
        if (!same) fprintf(stderr, "  fused-relu: %s, %d threads, batch %d, bypass %d: results differ\n",
                           dse_cpu_conv_algo_str(algo), threads, batch, (int)mp.bypass);
        CHECK(same);
    next:
        dse_model_free(m[0]);
        dse_model_free(m[1]);
        dse_net_deinit(&net);
    }
}

/* dse_model_opts.classifier_bias goes to the last conv/fc layer when a ReLU follows it
 * (SqueezeNet's conv10), and nowhere else; every other bias starts at 0. */
static void test_classifier_bias(void) {
    struct dse_net net;
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    tiny_net(&net, 0);
    struct dse_model_opts mo = { .batch = 2, .threads = 1, .seed = 5, .init = DSE_INIT_MSRA, .classifier_bias = 0.5f };
    CHECK_OK(dse_model_new(&net, &mo, &m, &err));
    const int cls = m ? dse_net_find(&m->net, "conv4") : -1; /* fire2, fire3, then the classifier */
    CHECK(cls >= 0);
    if (cls >= 0) {
        CHECK(m->net.layers[cls + 1].type == DSE_LAYER_RELU);
        int seen = 0;
        for (int i = 0; i < m->net.n_layers; i++) {
            const struct dse_tensor *bias = m->nodes[i].bias;
            if (!bias) continue;
            seen++;
            for (int64_t k = 0; k < dse_tensor_count(bias); k++) CHECK(bias->data[k] == (i == cls ? 0.5f : 0.0f));
        }
        CHECK(seen >= 5);
    }
    dse_model_free(m);
    dse_net_deinit(&net);
    /* conv, ReLU, fc: the conv has a ReLU after it but is not the last; nothing follows the
     * fc. Both biases stay 0. */
    dse_net_init(&net, "t", 1, 6, 6);
    struct dse_layer l = dse_layer_make(DSE_LAYER_CONV, "conv1");
    l.num_output = 4, l.kernel_h = l.kernel_w = 3;
    CHECK_OK(dse_net_add(&net, &l, NULL));
    l = dse_layer_make(DSE_LAYER_RELU, "relu1");
    l.in_place = 1;
    CHECK_OK(dse_net_add(&net, &l, NULL));
    l = dse_layer_make(DSE_LAYER_FC, "fc");
    l.num_output = 3;
    CHECK_OK(dse_net_add(&net, &l, NULL));
    CHECK_OK(dse_net_infer(&net, NULL, NULL));
    m = NULL;
    CHECK_OK(dse_model_new(&net, &mo, &m, &err));
    for (int i = 0; m && i < m->net.n_layers; i++)
        if (m->nodes[i].bias) CHECK(m->nodes[i].bias->data[0] == 0.0f);
    dse_model_free(m);
    dse_net_deinit(&net);
}

/* Issue #4 item 9: the default recipe makes SqueezeNet-FMNIST learn in its first epoch
 * over 10,000 images, for more than one seed. Threshold 40% top-1 (chance: 10%) and 90%
 * top-5: before clipping and the classifier bias, seed 2 stayed at exactly 10.0% (every
 * conv10 ReLU closed) and other runs had a class that was never predicted (top-5 near
 * 89%, one class in ten always outside it). Measured with this recipe: 66-74% top-1,
 * top-5 >= 97.5% on seeds 1-6 (docs/training.md). */
static void test_default_recipe(void) {
#ifdef DSE_SANITIZED
    printf("SKIP: learning speed is measured in the build without sanitizers (about 10x faster)\n");
    return;
#endif
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    struct dse_mp mp = dse_mp_squeezenet_v10(); /* SqueezeNet-FMNIST, as experiments/squeezenet */
    mp.input_c = 1, mp.input_h = mp.input_w = 28, mp.classes = 10;
    mp.conv1_kernel = 3, mp.conv1_stride = 1, mp.conv1_pad = 1;
    struct dse_net net;
    dse_net_init(&net, "squeezenet_fmnist", 1, 28, 28);
    CHECK_OK(dse_mp_build(&mp, &net, NULL));
    struct dse_train_result *r = malloc(sizeof *r);
    struct dse_err err = { 0 };
    char buf[600];
    for (int seed = 1; seed <= 2; seed++) {
        struct dse_train_opts o;
        dse_train_opts_default(&o);
        o.threads = 2, o.limit_train = 10000, o.limit_test = 2000, o.seed = (uint64_t)seed;
        o.conv_algo = DSE_CPU_CONV_GEMM_BATCH; /* no timing: the same choices on every machine */
        enum dse_status st = dse_train_run(&net, &o, r, &err);
        CHECK_OK(st);
        if (st) {
            fprintf(stderr, "  %s\n", dse_err_format(&err, buf, sizeof buf));
            break;
        }
        printf("  seed %d: top-1 %.1f%%, top-5 %.1f%%, %lld of 156 steps clipped, %.0f img/s\n", seed, 100 * r->top1,
               100 * r->top5, (long long)r->clipped_steps, r->img_per_s);
        CHECK(r->top1 >= 0.40f);
        CHECK(r->top5 >= 0.90f);
        CHECK(r->clipped_steps > 0);
    }
    free(r);
    dse_net_deinit(&net);
}

/* Classes never predicted are counted per epoch: a net whose weights are all 0 (and so
 * stay 0: every ReLU closed, no gradient) predicts class 0 for every image, leaving the
 * other 9 classes of the first 300 test images unpredicted; a net that learns leaves
 * none (train-learns checks that). */
static void test_unpredicted(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    struct dse_net net;
    tiny_net(&net, 1);
    struct dse_train_opts o;
    struct dse_train_result *r = malloc(sizeof *r);
    dse_train_opts_default(&o);
    o.batch = 32, o.limit_train = 64, o.limit_test = 300;
    o.init = DSE_INIT_GAUSSIAN, o.init_std = 0, o.classifier_bias = 0;
    CHECK_OK(dse_train_run(&net, &o, r, NULL));
    CHECK_STR_EQ(r->status, "done");
    CHECK_INT_EQ(r->epochs[0].unpredicted, 9);
    CHECK(r->top1 < 0.2f); /* the share of class 0 */
    free(r);
    dse_net_deinit(&net);
}

struct progress_count {
    int steps, epochs;
    int iter[64];
};

static void count_progress(void *arg, const struct dse_train_progress *p) {
    struct progress_count *c = arg;
    if (p->done) c->epochs++;
    else if (c->steps < DSE_ARRAY_LEN(c->iter)) c->iter[c->steps++] = p->iter;
}

/* progress within an epoch: every 10 steps and at the last (i = 0, 10, 11 of 12 steps); with
 * progress_every_s (a log) also once that many seconds have passed since the last call:
 * with 1 ns, after every step. */
static void test_progress_every(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    static const struct { double every_s; int steps; } cases[] = { { 0, 3 }, { 1e-9, 12 } };
    for (int k = 0; k < DSE_ARRAY_LEN(cases); k++) {
        struct dse_net net;
        tiny_net(&net, 1);
        struct dse_train_opts o;
        struct dse_train_result *r = malloc(sizeof *r);
        struct progress_count c = { 0 };
        dse_train_opts_default(&o);
        o.batch = 32, o.limit_train = 12 * 32, o.limit_test = 64;
        o.progress = count_progress, o.progress_arg = &c, o.progress_every_s = cases[k].every_s;
        CHECK_OK(dse_train_run(&net, &o, r, NULL));
        CHECK_STR_EQ(r->status, "done");
        CHECK_INT_EQ(c.epochs, 1);
        CHECK_INT_EQ(c.steps, cases[k].steps);
        static const int every10[3] = { 1, 11, 12 };
        for (int i = 0; i < c.steps; i++) CHECK_INT_EQ(c.iter[i], cases[k].steps == 12 ? i + 1 : every10[i]);
        free(r);
        dse_net_deinit(&net);
    }
}

/* Copy src to dst with byte `at` xor'ed with mask. */
static int copy_flip(const char *src, const char *dst, size_t at, unsigned char mask) {
    size_t n;
    unsigned char *b = read_all(src, &n);
    if (at >= n) return free(b), 0;
    b[at] ^= mask;
    write_raw(dst, b, n);
    free(b);
    return 1;
}

/* A format-2 checkpoint rewritten in format 1 (docs/checkpoint.md): the same values, next
 * epoch, iteration, network hash and generator behind the 72-byte format-1 header. */
static int write_format1(const char *v2, const char *v1) {
    size_t n;
    unsigned char *b = read_all(v2, &n);
    uint32_t meta;
    uint64_t values, clen;
    memcpy(&meta, b + 20, 4), memcpy(&values, b + 40, 8), memcpy(&clen, b + 48, 8);
    uLongf raw_bytes = (uLongf)(values * 4), got = raw_bytes;
    unsigned char *raw = malloc(raw_bytes), h[72];
    int ok = raw && n == 80 + meta + clen &&
             uncompress(raw, &got, b + 80 + meta, (uLong)clen) == Z_OK && got == raw_bytes;
    if (ok) {
        uint32_t version = 1, crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), raw, (uInt)raw_bytes), pad = 0;
        memset(h, 0, sizeof h);
        memcpy(h, "DSECKPT1", 8), memcpy(h + 8, &version, 4), memcpy(h + 12, &crc, 4);
        memcpy(h + 16, b + 16, 4), memcpy(h + 20, &pad, 4);   /* next_epoch, pad */
        memcpy(h + 24, b + 24, 8), memcpy(h + 32, b + 32, 8); /* iter, net_hash */
        memcpy(h + 40, &values, 8), memcpy(h + 48, &clen, 8);
        memcpy(h + 56, b + 56, 16);                           /* rng_state, rng_inc */
        FILE *f = fopen(v1, "wb");
        ok = f && fwrite(h, 1, 72, f) == 72 && fwrite(b + 80 + meta, 1, clen, f) == clen;
        if (f) fclose(f);
    }
    free(raw), free(b);
    return ok;
}

/* Train 3 epochs with checkpoints; resume from epoch 1's checkpoint and train to 3: the
 * final checkpoints (weights, momentum, statistics, RNG) are byte for byte the same. A
 * corrupted checkpoint is refused with a clear message. */
static void test_resume_bit_identical(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char dir[] = "/tmp/dse_train_XXXXXX", a[256], b[256], ck1[300], ck3a[300], ck3b[300];
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    struct dse_net net;
    struct dse_train_opts o;
    struct dse_train_result *r = malloc(sizeof *r);
    struct dse_err err = { 0 };
    struct dse_mp mp;
    resume_setup(&mp, &net, &o);
    o.checkpoint_dir = a;
    CHECK_OK(dse_train_run(&net, &o, r, &err));
    snprintf(ck1, sizeof ck1, "%s/epoch-1.ckpt", a);
    snprintf(ck3a, sizeof ck3a, "%s/epoch-3.ckpt", a);
    snprintf(ck3b, sizeof ck3b, "%s/epoch-3.ckpt", b);
    float top1 = r->top1;
    o.checkpoint_dir = b, o.resume = ck1;
    CHECK_OK(dse_train_run(&net, &o, r, &err));
    CHECK_INT_EQ(r->epochs_done, 3);
    CHECK(same_file(ck3a, ck3b));
    CHECK(r->top1 == top1);
    /* format 1 (written by dse before format 2) still loads: epoch 1's values rewritten as a
     * format-1 file resume to the same epoch-3 checkpoint */
    char ck1v1[320];
    snprintf(ck1v1, sizeof ck1v1, "%s/epoch-1.v1.ckpt", dir);
    CHECK(write_format1(ck1, ck1v1));
    o.resume = ck1v1;
    CHECK_OK(dse_train_run(&net, &o, r, &err));
    CHECK(same_file(ck3a, ck3b));
    /* a flipped byte in the header (next_epoch) is caught by the CRC, not trained on */
    char ckh[320];
    snprintf(ckh, sizeof ckh, "%s/epoch-1.h.ckpt", dir);
    CHECK(copy_flip(ck1, ckh, 16, 0x01));
    o.resume = ckh;
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_IO);
    CHECK(strstr(err.msg, "corrupt checkpoint: CRC-32") != NULL);
    /* corrupt one byte of the compressed data */
    FILE *f = fopen(ck1, "r+b");
    if (f) {
        fseek(f, 100, SEEK_SET);
        int c = fgetc(f);
        fseek(f, 100, SEEK_SET);
        fputc(c ^ 0x55, f);
        fclose(f);
    }
    o.resume = ck1;
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_IO);
    CHECK(strstr(err.msg, "corrupt checkpoint") != NULL);
    /* a checkpoint of another network is refused */
    struct dse_net other;
    mp.base_e = 16;
    dse_net_init(&other, "o", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, &other, NULL));
    o.resume = ck3a;
    CHECK_INT_EQ(dse_train_run(&other, &o, r, &err), DSE_ERR_IO);
    /* named by the first tensor that differs: base_e 16 instead of 8 squeezes 4, not 2 */
    CHECK_STR_EQ(err.msg, "checkpoint of another network: it has 'param fire2/squeeze1x1 weight 2x6x1x1 +momentum' "
                          "where this network has 'param fire2/squeeze1x1 weight 4x6x1x1 +momentum'");
    dse_net_deinit(&other);
    free(r);
    dse_net_deinit(&net);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* o->cancel for test_resume_mid_epoch: stop before step `at` of the run (counted from 1). */
struct stop_at {
    int at, seen;
};
static int stop_at_step(void *arg) {
    struct stop_at *s = arg;
    return ++s->seen >= s->at;
}

/* Checkpoints within an epoch (issue #18 item 2): every 3 steps of 8 an epoch, a run stopped
 * in epoch 2 (after 13 steps: its last partial checkpoint at step 3 of epoch 2) resumes from
 * epoch-2.part.ckpt and ends with the uninterrupted run's epoch-3 checkpoint and per-epoch
 * results, bit for bit (dropout, the loader's place, the epoch's loss tally); the partial file
 * goes once its epoch's checkpoint is written; one of another schedule is refused. */
static void test_resume_mid_epoch(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char dir[64], a[256], b[256], part[300], ck3a[300], ck3b[300];
    tmpdir_make(dir);
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    struct dse_net net;
    struct dse_train_opts o;
    struct dse_train_result *r = malloc(sizeof *r), *u = malloc(sizeof *u);
    struct dse_err err = { 0 };
    struct dse_mp mp;
    resume_setup(&mp, &net, &o);
    o.checkpoint_dir = a, o.ckpt_every_steps = 3;
    CHECK_OK(dse_train_run(&net, &o, u, &err)); /* uninterrupted */
    snprintf(part, sizeof part, "%s/epoch-3.part.ckpt", a);
    CHECK(access(part, F_OK) != 0); /* superseded by epoch-3.ckpt */
    struct stop_at s = { .at = 14 }; /* cancelled before step 14: 13 done, 5 of epoch 2 */
    o.checkpoint_dir = b, o.cancel = stop_at_step, o.progress_arg = &s;
    CHECK_OK(dse_train_run(&net, &o, r, &err));
    CHECK_STR_EQ(r->status, "cancelled");
    snprintf(part, sizeof part, "%s/epoch-2.part.ckpt", b);
    struct dse_ckpt_info info;
    CHECK_OK(dse_checkpoint_info(part, &info, &err));
    free(info.class_names);
    CHECK_INT_EQ(info.next_epoch, 1);
    CHECK_INT_EQ((int)info.iter, 11);         /* 8 + 3 */
    CHECK_INT_EQ((int)info.partial.steps, 3); /* steps 1-3 of epoch 2 */
    o.cancel = NULL, o.progress_arg = NULL, o.resume = part;
    CHECK_OK(dse_train_run(&net, &o, r, &err));
    snprintf(ck3a, sizeof ck3a, "%s/epoch-3.ckpt", a);
    snprintf(ck3b, sizeof ck3b, "%s/epoch-3.ckpt", b);
    CHECK(same_file(ck3a, ck3b));
    CHECK_INT_EQ(r->n_epochs, 2); /* epochs 2 and 3, as the uninterrupted run's */
    for (int e = 0; e < r->n_epochs && e + 1 < u->n_epochs; e++) {
        CHECK(r->epochs[e].train_loss == u->epochs[e + 1].train_loss);
        CHECK(r->epochs[e].top1 == u->epochs[e + 1].top1 && r->epochs[e].test_loss == u->epochs[e + 1].test_loss);
    }
    CHECK(access(part, F_OK) != 0);
    /* the partial checkpoint of a run of another batch does not fit this schedule */
    char part2[320];
    snprintf(part2, sizeof part2, "%s/epoch-2.part.ckpt", a);
    o.checkpoint_dir = a, o.epochs = 2, o.cancel = stop_at_step, o.progress_arg = &s, o.resume = NULL;
    s.seen = 0;
    CHECK_OK(dse_train_run(&net, &o, r, &err));
    o.cancel = NULL, o.progress_arg = NULL, o.resume = part2, o.batch = 16, o.epochs = 3;
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "steps into epoch 2") != NULL);
    free(r), free(u);
    dse_net_deinit(&net);
    tmpdir_remove(dir);
}

/* A byte of a checkpoint's header flipped, field by field (docs/checkpoint.md), is refused
 * with a message naming the file, never trained on (issue #18 item 4: a flipped next epoch
 * once reached an assertion in the loader, SIGABRT). Format 2's CRC covers its header;
 * format 1's does not, so dse_train_run checks the next epoch and step against the run
 * (epochs, steps an epoch), which also refuses a sound checkpoint of another schedule. */
/* A class name or --data holding a newline stays one line of the text block: its "norm" and
 * "partial" are not read back (issue #31; the folder readers refuse such names too). */
static void test_checkpoint_text_lines(void) {
    char dir[64], ck[300];
    tmpdir_make(dir);
    snprintf(ck, sizeof ck, "%s/x.ckpt", dir);
    struct dse_net net;
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    tiny_net(&net, 0);
    struct dse_model_opts mo = { .batch = 3, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA };
    CHECK_OK(dse_model_new(&net, &mo, &m, &err));
    static const char names[2][64] = { "dog\nnorm 3 0 0 0 1 1 1", "cat\npartial 0x1p+0 5 0" };
    struct dse_ckpt_meta meta = { .data = "dir\nseed 99", .seed = 7, .classes = 2, .class_names = names };
    struct dse_ckpt_info info = { 0 };
    if (m) {
        CHECK_OK(dse_checkpoint_save(m, 1, 3, &meta, ck, &err));
        CHECK_OK(dse_checkpoint_info(ck, &info, &err));
        CHECK_INT_EQ(info.norm.c, 0);
        CHECK_INT_EQ((int)info.partial.steps, 0);
        CHECK_INT_EQ((int)info.seed, 7);
        CHECK_STR_EQ(info.data, "dir?seed 99");
        CHECK_INT_EQ(info.classes, 2);
        if (info.class_names) CHECK_STR_EQ(info.class_names[0], "dog?norm 3 0 0 0 1 1 1");
        if (info.class_names) CHECK_STR_EQ(info.class_names[1], "cat?partial 0x1p+0 5 0");
        free(info.class_names);
    }
    dse_model_free(m);
    dse_net_deinit(&net);
    tmpdir_remove(dir);
}

static void test_checkpoint_header(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char dir[64], ck1[300], ck2[300], bad[300], v1[300], v1bad[300];
    tmpdir_make(dir);
    snprintf(ck1, sizeof ck1, "%s/epoch-1.ckpt", dir);
    snprintf(ck2, sizeof ck2, "%s/epoch-2.ckpt", dir);
    snprintf(bad, sizeof bad, "%s/bad.ckpt", dir);
    snprintf(v1, sizeof v1, "%s/v1.ckpt", dir);
    snprintf(v1bad, sizeof v1bad, "%s/v1bad.ckpt", dir);
    struct dse_net net;
    struct dse_train_opts o;
    struct dse_train_result *r = malloc(sizeof *r);
    struct dse_err err = { 0 };
    struct dse_mp mp = tiny_fire_mp();
    mp.input_h = mp.input_w = 28, mp.classes = 10, mp.dropout = 0.5;
    dse_net_init(&net, "t", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, &net, NULL));
    dse_train_opts_default(&o);
    o.epochs = 2, o.batch = 32, o.limit_train = 256, o.limit_test = 64, o.threads = 1;
    o.conv_algo = DSE_CPU_CONV_GEMM_BATCH, o.checkpoint_dir = dir;
    CHECK_OK(dse_train_run(&net, &o, r, &err));
    o.checkpoint_dir = NULL;

    /* every field of format 2's 80-byte header; format 1's, outside its CRC, whose range the
     * loader checks (next epoch and step against the run: below) */
    static const struct { int format, at; unsigned char mask; const char *msg; } flip[] = {
        { 2, 8, 0x01, "checkpoint format version 3; this dse reads versions 1 and 2" },
        { 2, 12, 0x01, "corrupt checkpoint: a header of 81 bytes; format 2's has 80" },
        { 2, 16, 0x01, "corrupt checkpoint: CRC-32" },          /* next epoch */
        { 2, 19, 0x80, "corrupt checkpoint: CRC-32" },          /* next epoch < 0 */
        { 2, 20, 0x01, "truncated or corrupt checkpoint" },     /* text bytes */
        { 2, 24, 0x01, "corrupt checkpoint: CRC-32" },          /* iteration */
        { 2, 31, 0x80, "corrupt checkpoint: CRC-32" },          /* iteration < 0 */
        { 2, 32, 0x01, "corrupt checkpoint: CRC-32" },          /* network hash */
        { 2, 40, 0x01, "corrupt checkpoint: its header says" }, /* values */
        { 2, 48, 0x01, "truncated or corrupt checkpoint" },     /* zlib bytes */
        { 2, 56, 0x01, "corrupt checkpoint: CRC-32" },          /* generator state */
        { 2, 64, 0x01, "corrupt checkpoint: CRC-32" },          /* generator increment, made even */
        { 2, 72, 0x01, "corrupt checkpoint: CRC-32" },          /* the CRC */
        { 2, 76, 0x01, "corrupt checkpoint: CRC-32" },          /* reserved */
        { 1, 19, 0x80, "corrupt checkpoint: next epoch -2147483647, iteration 8; expected 0 to" },
        { 1, 31, 0x80, "corrupt checkpoint: next epoch 1, iteration -9223372036854775800; expected 0 to" },
        { 1, 64, 0x01, "corrupt checkpoint: the dropout generator's increment" },
    };
    struct dse_model *m = NULL;
    struct dse_model_opts mo = { .batch = 32, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA };
    CHECK_OK(dse_model_new(&net, &mo, &m, &err));
    int next = -1;
    int64_t it = -1;
    CHECK(write_format1(ck1, v1));
    CHECK_OK(m ? dse_checkpoint_load(m, v1, &next, &it, &err) : DSE_ERR_INTERNAL);
    CHECK_INT_EQ(next, 1);
    CHECK_INT_EQ((int)it, 8);
    for (int i = 0; m && i < DSE_ARRAY_LEN(flip); i++) {
        CHECK(copy_flip(flip[i].format == 1 ? v1 : ck1, bad, (size_t)flip[i].at, flip[i].mask));
        memset(&err, 0, sizeof err);
        CHECK_INT_EQ(dse_checkpoint_load(m, bad, &next, &it, &err), DSE_ERR_IO);
        CHECK(!strcmp(err.file, bad));
        if (!strstr(err.msg, flip[i].msg)) {
            printf("format %d, byte %d ^ 0x%02x: '%s', expected '%s...'\n", flip[i].format, flip[i].at, flip[i].mask,
                   err.msg, flip[i].msg);
            CHECK(0);
        }
    }
    /* a folder (dse eval's checkpoint, a sweep's): once only "read error" */
    CHECK_INT_EQ(m ? dse_checkpoint_load(m, dir, &next, &it, &err) : DSE_OK, DSE_ERR_IO);
    CHECK_STR_EQ(err.msg, "is a directory; expected a file");
    dse_model_free(m);
    /* another network with the same tensors (its input 32x32: every layer's output larger),
     * named by the first layer that differs, not "(828 values; this network has 828)" */
    struct dse_net big;
    mp.input_h = mp.input_w = 32;
    dse_net_init(&big, "t", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, &big, NULL));
    m = NULL;
    CHECK_OK(dse_model_new(&big, &mo, &m, &err));
    CHECK_INT_EQ(m ? dse_checkpoint_load(m, ck1, &next, &it, &err) : DSE_OK, DSE_ERR_IO);
    CHECK_STR_EQ(err.msg, "checkpoint of another network: it has 'layer conv1 conv in 1 out 6x28x28' where this "
                          "network has 'layer conv1 conv in 1 out 6x32x32'");
    dse_model_free(m);
    dse_net_deinit(&big);
    /* ... and in range but not this run's: next epoch 1 -> 3 (past --epochs 2), 1 -> 0
     * (step 8 is not 0), step 8 -> 9 */
    static const struct { int at; unsigned char mask; const char *msg; } f1run[] = {
        { 17, 0x00, "" }, /* as written: resumes */
        { 16, 0x02, "checkpoint after epoch 3; this run ends at epoch 2" },
        { 16, 0x01, "checkpoint after epoch 0 at step 8; this run takes 8 steps an epoch (256 training images, "
                    "batch 32), so 0: another batch or --limit-train than its run's, or corrupt" },
        { 24, 0x01, "checkpoint after epoch 1 at step 9; this run takes 8 steps an epoch (256 training images, "
                    "batch 32), so 8: another batch or --limit-train than its run's, or corrupt" },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(f1run); i++) {
        CHECK(copy_flip(v1, v1bad, (size_t)f1run[i].at, f1run[i].mask));
        memset(&err, 0, sizeof err);
        o.resume = v1bad;
        enum dse_status st = dse_train_run(&net, &o, r, &err);
        CHECK_INT_EQ(st, f1run[i].msg[0] ? DSE_ERR_CONFIG : DSE_OK);
        if (!f1run[i].msg[0]) continue;
        CHECK(!strcmp(err.file, v1bad));
        CHECK_STR_EQ(err.msg, f1run[i].msg);
    }
    /* a sound format-2 checkpoint of another schedule: fewer epochs, more images an epoch */
    o.resume = ck2, o.epochs = 1;
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_CONFIG);
    CHECK(!strcmp(err.file, ck2));
    CHECK_STR_EQ(err.msg, "checkpoint after epoch 2; this run ends at epoch 1");
    o.resume = ck1, o.epochs = 2, o.limit_train = 512;
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "checkpoint after epoch 1 at step 8; this run takes 16 steps an epoch") == err.msg);
    free(r);
    dse_net_deinit(&net);
    tmpdir_remove(dir);
}

/* Results independent of the thread count (issue #18 item 1): the resume tests' run (dropout,
 * biases, the loss) for one epoch with each conv strategy, at batch 32 (16 slices of 2), 19
 * (uneven slices) and 2 (fewer images than slices: the forward pass cuts the output
 * channels), by 1, 2, 3 and 5 threads: every checkpoint byte for byte the one thread's
 * (engine/slices.h). */
static void test_train_threads(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char dir[] = "/tmp/dse_threads_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    struct dse_mp mp;
    struct dse_net nets[2];
    struct dse_train_opts o;
    struct dse_train_result *r = malloc(sizeof *r);
    resume_setup(&mp, &nets[0], &o);
    /* and plain convs of odd widths, batchnorm and scale between them */
    dse_net_init(&nets[1], "odd", 1, 28, 28);
    net_conv(&nets[1], "conv1", 7, 3, 1, 1);
    net_simple(&nets[1], DSE_LAYER_BATCHNORM, "bn1", 1);
    net_simple(&nets[1], DSE_LAYER_SCALE, "scale1", 1);
    net_simple(&nets[1], DSE_LAYER_RELU, "relu1", 1);
    net_pool(&nets[1], DSE_LAYER_MAXPOOL, "pool1", 3, 2, 0);
    net_conv(&nets[1], "conv2", 9, 3, 1, 1);
    net_simple(&nets[1], DSE_LAYER_RELU, "relu2", 1);
    net_conv(&nets[1], "conv3", 10, 1, 1, 0);
    net_pool(&nets[1], DSE_LAYER_AVGPOOL, "pool3", 0, 1, 1);
    net_simple(&nets[1], DSE_LAYER_SOFTMAX_LOSS, "loss", 0);
    o.epochs = 1;
    const int algos[] = { DSE_CPU_CONV_GEMM_BATCH, DSE_CPU_CONV_GEMM_IMAGE, DSE_CPU_CONV_WINOGRAD,
                          DSE_CPU_CONV_DIRECT };
    const int threads[4] = { 1, 2, 3, 5 }, batches[3] = { 32, 19, 2 };
    int same = 0, runs = 0;
    for (int k = 0; k < 2; k++)
        for (int a = 0; a < DSE_ARRAY_LEN(algos); a++)
            for (int b = 0; b < 3; b++)
                for (int t = 0; t < 4; t++) {
                    char ck[300], ref[300];
                    snprintf(ck, sizeof ck, "%s/%d_%d_%d_%d", dir, k, a, b, threads[t]);
                    o.conv_algo = algos[a], o.batch = batches[b], o.threads = threads[t], o.checkpoint_dir = ck;
                    o.limit_train = batches[b] == 2 ? 32 : 256;
                    CHECK_OK(dse_train_run(&nets[k], &o, r, NULL));
                    if (t == 0) continue;
                    snprintf(ref, sizeof ref, "%s/%d_%d_%d_1/epoch-1.ckpt", dir, k, a, b);
                    snprintf(ck, sizeof ck, "%s/%d_%d_%d_%d/epoch-1.ckpt", dir, k, a, b, threads[t]);
                    const int eq = same_file(ref, ck);
                    if (!eq)
                        fprintf(stderr, "  train-threads: %s, %s, batch %d: %d threads differ from 1\n", nets[k].name,
                                dse_cpu_conv_algo_str(algos[a]), batches[b], threads[t]);
                    same += eq, runs++;
                }
    CHECK_INT_EQ(same, runs);
    printf("  %d of %d runs by 2, 3 or 5 threads equal 1 thread's, byte for byte\n", same, runs);
    free(r);
    dse_net_deinit(&nets[0]), dse_net_deinit(&nets[1]);
    tmpdir_remove(dir);
}

/* Two fresh runs with automatic conv strategy choice and one choice file: the second
 * reads the choices the first made, so the runs are bit-identical (without the file the
 * timing could choose differently, and the strategies differ in the last bits). */
static void test_fresh_runs_identical(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char dir[] = "/tmp/dse_fresh_XXXXXX", a[256], b[256], cache[256], ca[300], cb[300];
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    snprintf(cache, sizeof cache, "%s/conv.txt", dir);
    struct dse_net net;
    struct dse_train_opts o;
    struct dse_train_result *r = malloc(sizeof *r);
    tiny_net(&net, 1);
    dse_train_opts_default(&o);
    o.epochs = 1, o.batch = 32, o.limit_train = 256, o.limit_test = 64, o.threads = 2;
    o.conv_algo = DSE_ALGO_AUTO, o.conv_cache = cache, o.checkpoint_dir = a;
    CHECK_OK(dse_train_run(&net, &o, r, NULL));
    FILE *f = fopen(cache, "r");
    CHECK(f != NULL); /* the choices were written */
    if (f) fclose(f);
    o.checkpoint_dir = b;
    CHECK_OK(dse_train_run(&net, &o, r, NULL));
    snprintf(ca, sizeof ca, "%s/epoch-1.ckpt", a);
    snprintf(cb, sizeof cb, "%s/epoch-1.ckpt", b);
    CHECK(same_file(ca, cb));
    free(r);
    dse_net_deinit(&net);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* A learning rate far too high, without gradient clipping (with the default clipping at
 * 2 even lr 90 stays finite): status diverged with where, never a crash or a NaN top-1. */
static void test_divergence(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    struct dse_net net;
    struct dse_train_opts o;
    struct dse_train_result *r = malloc(sizeof *r);
    tiny_net(&net, 1);
    dse_train_opts_default(&o);
    o.epochs = 2, o.batch = 32, o.limit_train = 512, o.limit_test = 64, o.lr = 90.0f, o.policy = DSE_LR_FIXED;
    o.clip_norm = 0;
    CHECK_OK(dse_train_run(&net, &o, r, NULL));
    CHECK_STR_EQ(r->status, "diverged");
    CHECK(r->diverged_epoch >= 1);
    CHECK(!isnan(r->top1));
    free(r);
    dse_net_deinit(&net);
}

/* Device options that cannot work fail with a status and a message, never a crash or a
 * leak (the sanitizer build runs this): tf32 on the CPU; cuda:0 without a device or in a
 * build without CUDA (on a machine with a GPU, test_engine_cuda's train-run trains). */
static void test_device_errors(void) {
    struct dse_mp mp = tiny_fire_mp();
    struct dse_net net;
    struct dse_model *m = (struct dse_model *)&mp; /* must come back NULL */
    struct dse_err err = { 0 };
    dse_net_init(&net, "t", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, &net, NULL));
    struct dse_model_opts mo = { .batch = 2, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA };
    struct dse_model_device_opts dev = { .device = { .kind = DSE_DEVICE_CPU, .index = 0 },
                                         .math = DSE_CUDA_MATH_TF32 };
    CHECK_INT_EQ(dse_model_new_on(&net, &mo, &dev, &m, &err), DSE_ERR_CONFIG);
    CHECK(m == NULL);
    CHECK_STR_EQ(err.msg, "precision tf32 needs a CUDA device; the CPU backend computes in fp32 or bf16 only");
    /* bf16 on the CPU (issue #37): built where the CPU has AVX512-BF16, refused naming why
     * where it has not or DSE_CPU_NO_BF16 rules it out */
    dev.math = DSE_CUDA_MATH_BF16;
    if (!dse_cpu_bf16_why()) {
        CHECK_OK(dse_model_new_on(&net, &mo, &dev, &m, &err));
        CHECK(m && m->cx.bf16 == DSE_CPU_BF16_BY_RULE);
        /* the convs the rule leaves in float32, named once (dse train's note, dse profile) */
        char fp32[400];
        CHECK_INT_EQ(dse_model_bf16_fp32(m, fp32, sizeof fp32), 7); /* all but the two expand3x3s: short sums */
        CHECK(strstr(fp32, "bf16: conv1 (9 terms per output, under 16), fire2/squeeze1x1 (6 terms per output, ") == fp32);
        CHECK(strstr(fp32, ", conv4 (8 terms per output, under 16) compute in float32") != NULL);
        CHECK_INT_EQ(dse_model_bf16_fp32(m, fp32, 120), 7); /* short of room: whole names, then a count */
        CHECK(strstr(fp32, "bf16: conv1 (9 terms per output, under 16), ") == fp32 &&
              strstr(fp32, " more compute in float32") && strlen(strstr(fp32, " more compute")) == 24);
        CHECK_INT_EQ(dse_model_bf16_fp32(m, fp32, 12), 7); /* no room for any: nothing, never half a name */
        CHECK_STR_EQ(fp32, "");
        dse_model_free(m);
    } else {
        printf("  skipped: no avx512_bf16 (%s)\n", dse_cpu_bf16_why());
    }
    setenv("DSE_CPU_NO_BF16", "1", 1);
    CHECK_INT_EQ(dse_model_new_on(&net, &mo, &dev, &m, &err), DSE_ERR_CONFIG);
    CHECK(m == NULL);
    CHECK(strstr(err.msg, "precision bf16 on the CPU needs AVX512-BF16: ") == err.msg);
    unsetenv("DSE_CPU_NO_BF16");
    dev.math = DSE_CUDA_MATH_TF32;
    dse_net_deinit(&net);
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char why[256];
    mp.input_h = mp.input_w = 28, mp.classes = 10;
    dse_net_init(&net, "t", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, &net, NULL));
    struct dse_train_opts o;
    struct dse_train_result *r = malloc(sizeof *r);
    dse_train_opts_default(&o);
    o.batch = 32, o.limit_train = 64, o.limit_test = 32;
    o.dev.math = DSE_CUDA_MATH_TF32;
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "fp32 or bf16 only") != NULL);
    o.dev.math = DSE_CUDA_MATH_FP32, o.dev.device.kind = DSE_DEVICE_CUDA;
    if (dse_cuda_device_count(why, sizeof why) == 0) {
        CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_UNSUPPORTED);
        CHECK(strstr(err.msg, "no CUDA device (") != NULL || strstr(err.msg, "built without the CUDA backend"));
    }
    free(r);
    dse_net_deinit(&net);
}

/* A dataset file at fault is named by its whole path as err.file: the paths live in the
 * located files' struct, a local of the function that found them, and the error record keeps
 * its own copy (issue #18 item 4, issue #31: an err.file into that struct dangled once its frame
 * returned; the ASan build's detect_stack_use_after_return catches any such read). By
 * dse_data_probe (what `dse train` and `dse sweep` check first) and by dse_train_run. */
static void test_data_file_errors(void) {
    struct dse_data_info info;
    struct dse_err err = { 0 };
    CHECK_INT_EQ(dse_data_probe("tests/bad_data/idx_no_labels", NULL, &info, &err), DSE_ERR_IO);
    CHECK_STR_EQ(err.file, "tests/bad_data/idx_no_labels/train-labels-idx1-ubyte.gz");
    CHECK_STR_EQ(err.msg, "no such file");
    CHECK_INT_EQ(dse_data_probe("tests/bad_data/idx_short_labels", NULL, &info, &err), DSE_ERR_IO);
    CHECK_STR_EQ(err.file, "tests/bad_data/idx_short_labels/t10k-labels-idx1-ubyte");
    CHECK_STR_EQ(err.msg, "truncated: expected 10 bytes (8-byte header + 2 labels), got 9");
    struct dse_net net;
    struct dse_train_opts o;
    struct dse_train_result *r = malloc(sizeof *r);
    tiny_net(&net, 1);
    dse_train_opts_default(&o);
    o.epochs = 1, o.batch = 2;
    o.data = "tests/bad_data/idx_no_labels";
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_IO);
    CHECK_STR_EQ(err.file, "tests/bad_data/idx_no_labels/train-labels-idx1-ubyte.gz");
    CHECK_STR_EQ(err.msg, "no such file");
    o.data = "tests/bad_data/idx_short_labels";
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_IO);
    CHECK_STR_EQ(err.file, "tests/bad_data/idx_short_labels/t10k-labels-idx1-ubyte");
    CHECK(strstr(err.msg, "truncated") == err.msg);
    free(r);
    dse_net_deinit(&net);
}

/* The files a run writes or resumes from are checked before its work (issue #18 item 4:
 * each failed after an epoch's training, or after the run, or said only "read error"): the
 * data named here does not exist, so an error about the path proves it came first. */
static void test_paths_first(void) {
    char dir[64], file[128], sub[160], cache[160];
    tmpdir_make(dir);
    snprintf(file, sizeof file, "%s/f", dir);
    snprintf(sub, sizeof sub, "%s/f/ck", dir);
    snprintf(cache, sizeof cache, "%s/f/conv.txt", dir);
    write_raw(file, "x", 1);
    struct dse_net net;
    struct dse_train_opts o;
    struct dse_train_result *r = malloc(sizeof *r);
    struct dse_err err = { 0 };
    char want[512];
    tiny_net(&net, 1);
    dse_train_opts_default(&o);
    o.epochs = 1, o.batch = 2, o.data = "tests/bad_data/idx_no_labels";
    o.resume = dir; /* a folder */
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_IO);
    CHECK(!strcmp(err.file, dir));
    CHECK_STR_EQ(err.msg, "is a directory; expected a checkpoint file (DIR/epoch-<k>.ckpt)");
    o.resume = NULL, o.checkpoint_dir = file; /* a file */
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_IO);
    CHECK(!strcmp(err.file, file));
    snprintf(want, sizeof want, "%s exists and is not a directory", file);
    CHECK_STR_EQ(err.msg, want);
    o.checkpoint_dir = sub; /* under a file */
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_IO);
    CHECK(!strcmp(err.file, sub));
    CHECK_STR_EQ(err.msg, want);
    o.checkpoint_dir = NULL, o.conv_cache = cache; /* in a file's "folder" */
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_IO);
    CHECK(!strcmp(err.file, cache));
    snprintf(want, sizeof want, "cannot write a file in %s: Not a directory", file);
    CHECK_STR_EQ(err.msg, want);
    o.conv_cache = dir; /* a folder */
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_IO);
    CHECK(!strcmp(err.file, dir));
    CHECK_STR_EQ(err.msg, "is a directory; expected a file");
    if (geteuid() != 0) { /* a folder without write permission (root writes anyway) */
        snprintf(sub, sizeof sub, "%s/ro", dir);
        DSE_ASSERT(mkdir(sub, 0555) == 0);
        o.conv_cache = NULL, o.checkpoint_dir = sub;
        CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_IO);
        CHECK_STR_EQ(err.msg, "cannot write a file there: Permission denied");
        chmod(sub, 0755);
    }
    /* what remains with no path at fault: the data's error, the run set up as before */
    o.conv_cache = NULL, o.checkpoint_dir = dir;
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_IO);
    CHECK_STR_EQ(err.file, "tests/bad_data/idx_no_labels/train-labels-idx1-ubyte.gz");
    CHECK_STR_EQ(err.msg, "no such file");
    free(r);
    dse_net_deinit(&net);
    tmpdir_remove(dir);
}

/* Pack -> train -> evaluate: a generated image folder (4 classes of stripes, RGB JPEGs of
 * 24 to 48 pixels) packed raw at short side 28, a tiny Fire net on 3x24x24 trained with
 * random-resized-crop + flip: well above chance (25%), and the same bits whether the
 * loader decodes on 1 or 3 threads. */
static void test_train_pack(void) {
    char dir[64], src[128], pack[128];
    struct dse_synth_opts so;
    (void)0;
    struct dse_imgfolder f;
    struct dse_pack_opts po;
    struct dse_pack_summary sum;
    struct dse_err err = { 0 };
    struct dse_net net;
    tmpdir_make(dir);
    snprintf(src, sizeof src, "%s/imgs", dir);
    snprintf(pack, sizeof pack, "%s/imgs.pack", dir);
    dse_synth_opts_default(&so);
    so.classes = 4, so.train_per_class = 40, so.val_per_class = 10, so.min_side = 24, so.max_side = 48;
    CHECK_OK(dse_synth_folder(src, &so, &err));
    CHECK_OK(dse_imgfolder_scan(src, &f, &err));
    dse_pack_opts_default(&po);
    po.size = 28, po.format = DSE_PACK_RAW, po.threads = 2;
    CHECK_OK(dse_pack_write(&f, pack, &po, &sum, &err));
    dse_imgfolder_deinit(&f);
    struct dse_mp mp = tiny_fire_mp();
    mp.input_c = 3, mp.input_h = mp.input_w = 24;
    mp_net(&net, &mp);
    struct dse_train_result *r[2] = { malloc(sizeof *r[0]), malloc(sizeof *r[1]) };
    for (int k = 0; k < 2; k++) {
        struct dse_train_opts o;
        dse_train_opts_default(&o);
        char ckdir[160];
        snprintf(ckdir, sizeof ckdir, "%s/ckpt", dir);
        o.data = pack, o.epochs = 4, o.batch = 16, o.aug = DSE_AUG_RRC, o.loader_workers = 1 + 2 * k;
        o.checkpoint_dir = ckdir;
        o.conv_algo = DSE_CPU_CONV_GEMM_BATCH; /* no timing: the same choices in both runs */
        CHECK_OK(dse_train_run(&net, &o, r[k], &err));
        if (err.code) fprintf(stderr, "  %s\n", err.msg);
    }
    CHECK_STR_EQ(r[0]->status, "done");
    CHECK(r[0]->top1 > 0.6f);
    if (r[0]->top1 <= 0.6f) fprintf(stderr, "  top-1 %.3f\n", r[0]->top1);
    CHECK(r[0]->top1 == r[1]->top1 && r[0]->loss == r[1]->loss);
    CHECK(r[0]->epochs[0].train_loss == r[1]->epochs[0].train_loss);
    /* the last checkpoint evaluated again: the metrics training reported, bit for bit; it
     * records the pack's class names, statistics and evaluation box */
    char ck[160];
    snprintf(ck, sizeof ck, "%s/ckpt/epoch-4.ckpt", dir);
    struct dse_train_opts o;
    struct dse_eval_result ev;
    struct dse_ckpt_info info;
    dse_train_opts_default(&o);
    o.data = pack, o.batch = 16, o.conv_algo = DSE_CPU_CONV_GEMM_BATCH;
    CHECK_OK(dse_eval_run(&net, &o, ck, &ev, &err));
    CHECK(ev.loss == r[1]->loss && ev.top1 == r[1]->top1 && ev.top5 == r[1]->top5);
    CHECK_INT_EQ(ev.images, 40);
    int hits = 0;
    for (int c = 0; c < ev.classes; c++) hits += ev.class_hits[c];
    CHECK_INT_EQ(hits, (int)lroundf(ev.top1 * 40));
    dse_eval_result_free(&ev);
    CHECK_OK(dse_checkpoint_info(ck, &info, &err));
    CHECK_INT_EQ(info.version, 2);
    CHECK_INT_EQ(info.next_epoch, 4);
    CHECK_INT_EQ(info.classes, 4);
    if (info.class_names) CHECK_STR_EQ(info.class_names[3], "class_03");
    CHECK_STR_EQ(info.data, pack);
    CHECK_INT_EQ(info.norm.c, 3);
    struct dse_pack *pk = NULL;
    CHECK_OK(dse_pack_open(pack, &pk, &err));
    if (pk) CHECK(info.norm.mean[1] == pk->mean[1] && info.norm.std[2] == pk->std[2]);
    CHECK(info.eval_center == 0.875f);
    /* dse predict's preparation of one image (dse_data_image_eval) is the evaluation
     * loader's, byte for byte: the first val image, batch 1, no shuffle */
    if (pk) {
        struct dse_loader_opts lo = { .batch = 1, .out_h = 24, .out_w = 24, .center = info.eval_center,
                                      .norm = info.norm, .synchronous = 1 };
        struct dse_loader *l = NULL;
        struct dse_image im = { 0 }, tmp = { 0 };
        struct dse_image_work w = { 0 };
        float a[3 * 24 * 24], b[3 * 24 * 24];
        int label, count;
        CHECK_OK(dse_loader_new_pack(pk, DSE_PACK_VAL, &lo, &l, &err));
        if (l) {
            dse_loader_start_epoch(l, 0);
            CHECK(dse_loader_next(l, a, &label, &count));
            CHECK_OK(dse_pack_image(pk, pk->first[DSE_PACK_VAL], &im, &err));
            CHECK_OK(dse_data_image_eval(&im, 24, 24, info.eval_center, &info.norm, &tmp, &w, b, &err));
            CHECK(!memcmp(a, b, sizeof a));
        }
        dse_loader_free(l);
        dse_image_deinit(&im), dse_image_deinit(&tmp), dse_image_work_deinit(&w);
    }
    dse_pack_close(pk);
    free(info.class_names);
    free(r[0]), free(r[1]);
    dse_net_deinit(&net);
    tmpdir_remove(dir);
}

/* Initialization reads each layer's role in its Fire module, not its name: the same
 * complex-bypass Fire net with every layer and module renamed starts from the same
 * weights, bit for bit (the expands' small gain and the bypass conv's 1/sqrt(2)). */
static void test_init_by_role(void) {
    struct dse_net a, b;
    struct dse_err err = { 0 };
    struct dse_model *ma = NULL, *mb = NULL;
    dse_net_init(&a, "roles", 4, 6, 6);
    struct dse_layer c = dse_layer_make(DSE_LAYER_CONV, "conv1");
    c.num_output = 8, c.kernel_h = c.kernel_w = 3, c.pad_h = c.pad_w = 1;
    CHECK_OK(dse_net_add(&a, &c, &err));
    struct dse_fire f = { .name = "fire2", .squeeze = 4, .expand1x1 = 6, .expand3x3 = 6, .bypass = DSE_BYPASS_COMPLEX };
    CHECK_OK(dse_net_add_fire(&a, &f, 0, &err));
    c = dse_layer_make(DSE_LAYER_CONV, "conv10");
    c.num_output = 3, c.kernel_h = c.kernel_w = 1;
    CHECK_OK(dse_net_add(&a, &c, &err));
    struct dse_layer p = dse_layer_make(DSE_LAYER_AVGPOOL, "pool");
    p.global = 1;
    CHECK_OK(dse_net_add(&a, &p, &err));
    CHECK_OK(dse_net_infer(&a, NULL, &err));
    CHECK_OK(dse_net_copy(&b, &a, &err));
    for (int i = 0; i < b.n_layers; i++) {
        snprintf(b.layers[i].name, DSE_NAME_MAX, "L%d", i);
        if (b.layers[i].module[0]) snprintf(b.layers[i].module, DSE_NAME_MAX, "M");
    }
    CHECK_INT_EQ(a.layers[dse_net_find(&a, "fire2/bypass_conv")].role, DSE_ROLE_BYPASS_CONV);
    struct dse_model_opts mo = { .batch = 2, .threads = 1, .seed = 11, .init = DSE_INIT_MSRA };
    CHECK_OK(dse_model_new(&a, &mo, &ma, &err));
    CHECK_OK(dse_model_new(&b, &mo, &mb, &err));
    if (ma && mb) {
        CHECK_INT_EQ(ma->n_params, mb->n_params);
        int same = ma->n_params == mb->n_params;
        for (int k = 0; same && k < ma->n_params; k++)
            same = dse_tensor_count(ma->params[k]) == dse_tensor_count(mb->params[k]) &&
                   !memcmp(ma->params[k]->data, mb->params[k]->data,
                           sizeof(float) * (size_t)dse_tensor_count(ma->params[k]));
        CHECK(same);
    }
    dse_model_free(ma);
    dse_model_free(mb);
    dse_net_deinit(&a);
    dse_net_deinit(&b);
}

static const struct check_case cases[] = {
    { "train-pack",      test_train_pack },
    { "model-gradients", test_model_gradients },
    { "train-lr",        test_lr_policies },
    { "train-learns",    test_learns },
    { "train-resume",    test_resume_bit_identical },
    { "train-resume-mid-epoch", test_resume_mid_epoch },
    { "train-fresh",     test_fresh_runs_identical },
    { "train-threads",   test_train_threads },
    { "train-diverge",   test_divergence },
    { "train-device",    test_device_errors },
    { "train-bf16",      test_train_bf16 },
    { "clip-grad",       test_clip_grad },
    { "step-tally",      test_step_tally },
    { "fused-relu",      test_fused_relu },
    { "bf16-dx-whole",   test_bf16_dx_whole },
    { "classifier-bias", test_classifier_bias },
    { "train-recipe",    test_default_recipe },
    { "train-unpredicted", test_unpredicted },
    { "train-progress-every", test_progress_every },
    { "init-by-role",    test_init_by_role },
    { "train-data-errors", test_data_file_errors },
    { "train-ckpt-header", test_checkpoint_header },
    { "train-ckpt-text-lines", test_checkpoint_text_lines },
    { "train-paths-first", test_paths_first },
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
