/* engine_train_util.c: helpers test_engine_train's files share (engine_train_util.h), and
 * its one set of check counts. */
#include "tests/engine_train_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/cpu/bf16_impl.h" /* dse_bf16_of */
#include "tests/nets.h"

int check_failures, check_count, check_skips;

int data_installed(void) {
    return access("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", R_OK) == 0;
}

/* mp's network into net (initialized here). */
void mp_net(struct dse_net *net, const struct dse_mp *mp) {
    dse_net_init(net, "tiny", 1, 1, 1);
    CHECK_OK(dse_mp_build(mp, net, NULL));
}

/* tiny_fire_mp's network into net; fmnist: on Fashion-MNIST's 28x28 input with 10
 * classes. */
void tiny_net(struct dse_net *net, int fmnist) {
    struct dse_mp mp = tiny_fire_mp();
    if (fmnist) mp.input_h = mp.input_w = 28, mp.classes = 10;
    mp_net(net, &mp);
}

int same_file(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) same = 0;
        if (ca == EOF || cb == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* The resume tests' run: tiny_fire_mp at 28x28 with dropout (its generator must resume too),
 * 3 epochs of 8 steps (batch 32 of 256 images), 2 threads, GEMM_BATCH (no timed choice). */
void resume_setup(struct dse_mp *mp, struct dse_net *net, struct dse_train_opts *o) {
    *mp = tiny_fire_mp();
    mp->input_h = mp->input_w = 28, mp->classes = 10, mp->dropout = 0.5;
    dse_net_init(net, "t", 1, 1, 1);
    CHECK_OK(dse_mp_build(mp, net, NULL));
    dse_train_opts_default(o);
    o->epochs = 3, o->batch = 32, o->limit_train = 256, o->limit_test = 64, o->init = DSE_INIT_MSRA;
    o->threads = 2, o->conv_algo = DSE_CPU_CONV_GEMM_BATCH;
}

/* Whether two models' arenas hold the same bits, but for the input gradients of max pools
 * whose backward the convs before them do (dse_node.dx_to_writers, in either model): never
 * written there, and read by nothing; and for gradients one model keeps in bf16
 * (dse_tensor.grad16) where the other keeps them in float: each bf16 value must be the float
 * masked by the ReLU's rule on the bf16 activation (bits 0x0001 to 0x7f80 are > 0) and rounded
 * to bf16. */
int same_arenas(struct dse_model *m[2]) {
    const size_t bytes = m[0]->arena_floats * sizeof(float);
    float *a[2] = { malloc(bytes), malloc(bytes) };
    int same = a[0] && a[1];
    for (int k = 0; same && k < 2; k++) memcpy(a[k], m[k]->arena, bytes);
    for (int i = 0; same && i < m[0]->net.n_layers; i++) {
        const struct dse_tensor *x = m[0]->nodes[i].in[0], *x1 = m[1]->nodes[i].in[0];
        if (m[0]->nodes[i].dx_to_writers || m[1]->nodes[i].dx_to_writers)
            for (int k = 0; k < 2; k++)
                memset(a[k] + (x->grad - m[0]->arena), 0, (size_t)dse_tensor_count(x) * sizeof(float));
        if (m[0]->nodes[i].op != DSE_OP_CONV2D || x->grad16 == x1->grad16) continue;
        const struct dse_tensor *h = x->grad16 ? x : x1, *f = x->grad16 ? x1 : x; /* bf16, float */
        DSE_ASSERT(h->n * h->stride_n == dse_tensor_count(h)); /* a whole buffer: its reader's input */
        const int64_t cnt = dse_tensor_count(h);
        const uint16_t *g16 = (const uint16_t *)(const void *)h->grad, *y16 = (const uint16_t *)(const void *)h->data;
        for (int64_t e = 0; e < cnt; e++)
            same &= g16[e] == dse_bf16_of((uint16_t)(y16[e] - 1u) < 0x7f80u ? f->grad[e] : 0.0f);
        for (int k = 0; k < 2; k++)
            memset(a[k] + (x->grad - m[0]->arena), 0, (size_t)cnt * sizeof(float));
    }
    same = same && !memcmp(a[0], a[1], bytes);
    free(a[0]), free(a[1]);
    return same;
}

/* Two SGD steps of two models on the same batch: whether the losses, the whole arenas
 * (activations and gradients, same_arenas) and the parameters' gradients are the same bits
 * after each step, and the parameters after both. */
int same_two_steps(struct dse_model *m[2], const float *x, const int *labels) {
    int same = 1;
    float loss[2];
    for (int step = 0; step < 2; step++) {
        for (int k = 0; k < 2; k++) {
            CHECK_OK(dse_model_forward(m[k], x, labels, &loss[k], NULL));
            CHECK_OK(dse_model_backward(m[k], NULL));
        }
        same &= !memcmp(&loss[0], &loss[1], sizeof loss[0]);
        same &= same_arenas(m);
        for (int p = 0; p < m[0]->n_params; p++)
            same &= !memcmp(m[0]->params[p]->grad, m[1]->params[p]->grad,
                            sizeof(float) * (size_t)dse_tensor_count(m[0]->params[p]));
        for (int k = 0; k < 2; k++) dse_model_sgd(m[k], 0.05f, 0.9f, 1e-3f);
    }
    for (int p = 0; p < m[0]->n_params; p++)
        same &= !memcmp(m[0]->params[p]->data, m[1]->params[p]->data,
                        sizeof(float) * (size_t)dse_tensor_count(m[0]->params[p]));
    return same;
}
