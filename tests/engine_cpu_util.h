/* engine_cpu_util.h: what test_engine_cpu's files (tests/test_engine_cpu*.c) share: the
 * tolerances of the gradient checks, one node with its tensors (struct fx), the gradient
 * checker and the fill helpers (tests/engine_cpu_util.c). */
#ifndef DSE_TESTS_ENGINE_CPU_UTIL_H
#define DSE_TESTS_ENGINE_CPU_UTIL_H

#include "engine/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pcg32.h"
#include "engine/slices.h"
#include "metaparams/net.h"
#define CHECK_SHARED_COUNTS /* one set of counts for test_engine_cpu's files: engine_cpu_util.c */
#include "tests/check.h"

#define THREADS 2

/* Finite differences: step EPS, and the relative error each op may show (grad_check).
 * Worst seen on x86-64 + OpenBLAS: conv 4e-4, softmax 4e-4, batchnorm 3e-4, avg pool
 * 1e-4, fc 9e-5, scale 1e-5, ops that only move or mask values 3e-6: about 10x margin,
 * tight enough that a dropped term (a bias, a 1/N) fails. */
#define EPS          1e-2
#define TOL_CONV     3e-3
#define TOL_POOL     1e-3
#define TOL_EXACT    1e-4 /* relu, dropout, concat, eltwise add */
#define TOL_FC       1e-3
#define TOL_SOFTMAX  3e-3
#define TOL_BN       3e-3
#define TOL_SCALE    1e-3
#define TOL_LRN      3e-3
#define FLOOR        1e-1 /* |gradient| below this counts as this (float noise) */

/* ---- one node with its tensors ---------------------------------------------------- */

enum {
    FX_IN_PLACE = 1,  /* out is in[0] */
    FX_VIEWS    = 2,  /* concat: inputs are views of their slices of out */
    FX_NO_PREP  = 4,  /* do not prepare (the test wants the check to fail) */
};

struct fx {
    struct dse_layer  layer;
    struct dse_node   node;
    struct dse_tensor in[4], out, w, b, rm, rv;
    int               n_in;
    int32_t           labels[16];
};

/* ---- the gradient checker ---------------------------------------------------------- */

/* A tensor whose gradient is checked: its data is what gets perturbed. */
struct probe {
    const char        *name;
    struct dse_tensor *t;
    double            *x0;       /* pristine data, contiguous */
    double            *analytic; /* dL/dt from backward, contiguous */
};

struct gc {
    struct dse_cpu_ctx *cx;
    struct dse_node    *n;
    struct dse_pcg32    rng0;   /* ctx generator before forward: every forward sees it */
    struct probe        p[8];
    int                 np, n_inputs;
    double             *r;      /* L = sum r . y */
};

/* The fill helpers, a tensor's values to and from doubles, a layer inferred alone, one node
 * with its tensors (fx_init, fx_deinit), a CPU context of THREADS threads (ctx_init). */
float uniform(struct dse_pcg32 *r, float lo, float hi);
void fill_uniform(struct dse_tensor *t, struct dse_pcg32 *r, float lo, float hi);
void fill_distinct(struct dse_tensor *t, struct dse_pcg32 *r, float gap);
void fill_off_zero(struct dse_tensor *t, struct dse_pcg32 *r);
void gather(const struct dse_tensor *t, const float *src, double *dst);
void scatter(const struct dse_tensor *t, const double *src, float *dst);
struct dse_layer infer_layer(struct dse_layer l, int n_in, int c, int h, int w);
void fx_init(struct fx *f, struct dse_cpu_ctx *cx, const struct dse_layer *l, int N, int n_in, const int *in_c,
             unsigned flags, uint64_t seed);
void fx_deinit(struct fx *f);
/* The worst relative error of node n's backward against central differences (its comment:
 * tests/engine_cpu_util.c). */
double grad_check(struct dse_cpu_ctx *cx, struct dse_node *n, double eps, double tol, double floor_,
                  const char *what);
/* The same with dL/dy rounded to multiples of r_step (0: not rounded): values bf16 holds
 * exactly, for the bf16 ops' checks (tests/test_engine_cpu_bf16.c). */
double grad_check_q(struct dse_cpu_ctx *cx, struct dse_node *n, double eps, double tol, double floor_,
                    const char *what, double r_step);
void ctx_init(struct dse_cpu_ctx *cx);

#endif
