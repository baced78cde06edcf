/* engine_train_util.h: what test_engine_train's files share (tests/engine_train_util.c) and
 * the cases each defines for its table (tests/test_engine_train.c). */
#ifndef DSE_TESTS_ENGINE_TRAIN_UTIL_H
#define DSE_TESTS_ENGINE_TRAIN_UTIL_H

#include "engine/model.h"
#include "engine/train.h"
#include "metaparams/metaparams.h"

#define CHECK_SHARED_COUNTS /* one set of counts for test_engine_train's files: engine_train_util.c */
#include "tests/check.h"

/* Whether Debian's dataset-fashion-mnist is installed. */
int  data_installed(void);
/* mp's network into net (initialized here). */
void mp_net(struct dse_net *net, const struct dse_mp *mp);
/* tiny_fire_mp's network into net; fmnist: on Fashion-MNIST's 28x28 input with 10 classes. */
void tiny_net(struct dse_net *net, int fmnist);
/* Whether two files hold the same bytes. */
int  same_file(const char *a, const char *b);
/* The resume tests' run: tiny_fire_mp at 28x28 with dropout, 3 epochs of 8 steps (batch 32
 * of 256 images), 2 threads, GEMM_BATCH. */
void resume_setup(struct dse_mp *mp, struct dse_net *net, struct dse_train_opts *o);
/* Whether two models' arenas hold the same bits, but for the input gradients of max pools
 * whose backward the convs before them do (dse_node.dx_to_writers), and gradients one model
 * keeps in bf16 against the other's floats, masked and rounded (dse_tensor.grad16). */
int  same_arenas(struct dse_model *m[2]);
/* Two SGD steps of two models on the same batch: the losses, arenas (same_arenas) and the
 * parameters' gradients the same bits after each step, and the parameters after both. */
int  same_two_steps(struct dse_model *m[2], const float *x, const int *labels);

/* tests/test_engine_train_bf16.c */
void test_bf16_dx_whole(void);
void test_train_bf16(void);

#endif
