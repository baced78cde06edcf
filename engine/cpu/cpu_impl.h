/* cpu_impl.h: helpers private to the CPU backend's kernels (every engine/cpu/ file): OpenMP
 * pragmas that vanish without OpenMP, and small shared utilities. Public interface:
 * engine/engine.h. */
#ifndef DSE_ENGINE_CPU_IMPL_H
#define DSE_ENGINE_CPU_IMPL_H

#include <stdarg.h>
#include <stdint.h>

#include "engine/engine.h"

/* Without -fopenmp these expand to nothing, so no unknown-pragma warning and the loop
 * runs serially. num_threads comes from the ctx: no omp_set_num_threads (global). The
 * `if` keeps small loops serial: waking threads costs more than a few thousand floats.
 * Used by the elementwise, pooling, batchnorm and concat kernels; conv2d.c lowers on
 * the calling thread (why: the comment on its im2col). */
#define DSE_PRAGMA(x) _Pragma(#x)
#ifdef _OPENMP
#define DSE_OMP_FOR(nt, work) \
    DSE_PRAGMA(omp parallel for schedule(static) num_threads(nt) if((nt) > 1 && (work) >= DSE_OMP_MIN_WORK))
#else
#define DSE_OMP_FOR(nt, work)
#endif
#define DSE_OMP_MIN_WORK 32768 /* values touched below which a loop stays serial */

/* Fill cx->err and return code (kernels report through the ctx). */
enum dse_status dse_cpu_fail(struct dse_cpu_ctx *cx, const struct dse_node *n, enum dse_status code,
                             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Monotonic clock in milliseconds (strategy timing). */
double dse_cpu_now_ms(void);

/* 1 if the node runs in place (its output is its first input's memory). */
static inline int dse_cpu_in_place(const struct dse_node *n) {
    return n->out->data == n->in[0]->data;
}

/* Sum of n floats in double, in index order: the same bits whatever the threads. */
static inline double dse_cpu_sum(const float *x, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    return s;
}

#endif
