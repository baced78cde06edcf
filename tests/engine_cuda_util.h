/* engine_cuda_util.h: what test_engine_cuda's files (tests/test_engine_cuda*.c) share: the
 * headers they use, the NMSE tolerances, random values, NMSE itself, the tiny Fire net, a
 * folder removed, the CPU and CUDA contexts the op cases compare (engine_cuda_util.c;
 * the contexts' setup in test_engine_cuda_ops.c). */
#ifndef DSE_TESTS_ENGINE_CUDA_UTIL_H
#define DSE_TESTS_ENGINE_CUDA_UTIL_H

#include "engine/cuda/cuda.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/pcg32.h"
#include "engine/kernels_shared.h"
#include "engine/model.h"
#include "engine/train.h"
#include "metaparams/metaparams.h"
#include "metaparams/net.h"
#define CHECK_SHARED_COUNTS /* one set of counts for all of test_engine_cuda's files: engine_cuda_util.c */
#include "tests/check.h"
#include "tests/nets.h"

/* NMSE tolerances: sum (cpu - cuda)^2 / sum cpu^2 over a buffer. float32 reordering
 * gives about 1e-12 on these sizes, cuDNN's FFT and Winograd algorithms up to about
 * 1e-10; TF32 about 1e-7 (op-no-tf32 checks FP32 mode for TF32 exactly). Kernels that
 * repeat the CPU's arithmetic should agree exactly; they get 1e-12 (a real bug is far
 * above). */
#define TOL_EXACT    1e-12
#define TOL_CONV     1e-7
#define TOL_FC       1e-7
#define TOL_SOFTMAX  1e-9
#define TOL_BN       1e-10
#define TOL_SCALE    1e-10
#define TOL_LRN      1e-10 /* powf on the device may differ in the last bit */
#define TOL_TF32     1e-4

extern int verbose; /* DSE_TEST_VERBOSE: print every comparison's error */

float uniform(struct dse_pcg32 *r, float lo, float hi);
int   irand(struct dse_pcg32 *r, int lo, int hi); /* [lo, hi] */
void  fill_floats(float *p, int64_t n, struct dse_pcg32 *r, float lo, float hi);

/* NMSE of b against a over n values; the worst element in *at. Inf or NaN anywhere: inf. */
double nmse(const float *a, const float *b, int64_t n, int64_t *at);

/* tests/nets.h's tiny Fire-module net with dropout 0.5 before the classifier conv. */
void fire_net(struct dse_net *net);

/* rm -rf dir, a check that it worked. */
void remove_dir(const char *dir);

/* The op cases' CPU and CUDA contexts (test_engine_cuda_ops.c): main makes them once, when
 * a device case is wanted and there is a device, and points P at them. */
struct pair {
    struct dse_cpu_ctx  cx;
    struct dse_cuda_ctx gx;
    int                 ok;
};
void pair_init(struct pair *p);
void pair_deinit(struct pair *p);
extern struct pair *P;

#endif
