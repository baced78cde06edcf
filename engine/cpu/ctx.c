/* ctx.c: the CPU backend's context (threads, PCG32 stream, workspace, conv choice
 * cache), per-node state allocation, and the services the kernels call (workspace,
 * dse_cpu_fail, dse_cpu_zero). Below the kernels: nothing here calls a kernel; the
 * kernel table and the dispatch that do sit above them in table.c. Kernels: one file
 * per op family next to this one. */
#include "engine/engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "engine/cpu/cpu_impl.h"

#define ALIGN 64

enum dse_status dse_cpu_ctx_init(struct dse_cpu_ctx *cx, int threads, uint64_t seed, struct dse_err *err) {
    memset(cx, 0, sizeof *cx);
    if (threads < 1 || threads > 1024)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "threads = %d is out of range; expected 1 to 1024",
                           threads);
    cx->seed = seed;
    dse_pcg32_seed(&cx->rng, seed, 0x5eed);
    cx->ws_limit_bytes = (size_t)256 << 20;
    cx->conv_force = DSE_CPU_CONV_AUTO;
    dse_blas_setup();
    openblas_set_num_threads(1);
    return dse_cpu_ctx_set_threads(cx, threads, err);
}

static void free_ws(struct dse_cpu_ctx *cx) {
    for (int t = 0; cx->ws && t < cx->threads; t++) free(cx->ws[t].p);
    free(cx->ws);
    cx->ws = NULL;
    cx->ws_bytes = 0;
}

void dse_cpu_ctx_deinit(struct dse_cpu_ctx *cx) {
    if (!cx) return;
    dse_cpu_team_free(cx->team);
    free_ws(cx);
    free(cx->conv_cache);
    memset(cx, 0, sizeof *cx);
}

enum dse_status dse_cpu_ctx_set_threads(struct dse_cpu_ctx *cx, int threads, struct dse_err *err) {
    DSE_ASSERT(threads >= 1);
    dse_cpu_team_free(cx->team);
    cx->team = NULL;
    free_ws(cx);
    cx->threads = threads;
    cx->ws = calloc((size_t)threads, sizeof *cx->ws);
    if (!cx->ws) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for %d threads", threads);
    return DSE_OK;
}

enum dse_status dse_cpu_ctx_workspace_at(struct dse_cpu_ctx *cx, int t, size_t bytes, void **out) {
    DSE_ASSERT(t >= 0 && t < cx->threads);
    struct dse_cpu_ws *w = &cx->ws[t];
    if (bytes > w->bytes) {
        /* Grow by at least a quarter so a sequence of slightly larger layers does not
         * reallocate each time; the contents need not survive. */
        size_t want = bytes > w->bytes + w->bytes / 4 ? bytes : w->bytes + w->bytes / 4;
        want = (want + ALIGN - 1) / ALIGN * ALIGN;
        free(w->p);
        cx->ws_bytes -= w->bytes;
        w->p = dse_alloc_big(want);
        w->bytes = w->p ? want : 0;
        cx->ws_bytes += w->bytes;
        if (!w->p) {
            *out = NULL;
            return dse_err_set(&cx->err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a %zu-byte workspace", bytes);
        }
    }
    *out = w->p;
    return DSE_OK;
}

enum dse_status dse_cpu_ctx_workspace(struct dse_cpu_ctx *cx, size_t bytes, void **out) {
    return dse_cpu_ctx_workspace_at(cx, 0, bytes, out);
}

enum dse_status dse_cpu_fail(struct dse_cpu_ctx *cx, const struct dse_node *n, enum dse_status code,
                             const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    enum dse_status st = dse_err_vlayer(&cx->err, code, NULL, n->layer ? n->layer->line : 0,
                                        n->layer ? n->layer->name : "?", dse_op_str(n->op), fmt, ap);
    va_end(ap);
    return st;
}

double dse_cpu_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

enum dse_status dse_cpu_node_prepare(struct dse_cpu_ctx *cx, struct dse_node *n, struct dse_err *err) {
    enum dse_status st = dse_node_check(n, err);
    if (st) return st;
    struct dse_state_plan plan;
    const size_t bytes = dse_node_state_plan(n, ALIGN, &plan);
    if (bytes > n->st.bytes) {
        DSE_ASSERT(n->st.mem == DSE_MEM_HOST);
        free(n->st.block);
        memset(&n->st, 0, sizeof n->st);
        n->st.block = dse_alloc_big(bytes);
        if (!n->st.block)
            return dse_err_set(err, DSE_ERR_NOMEM, NULL, n->layer->line,
                               "layer '%s' (%s): out of memory for %zu bytes of op state", n->layer->name,
                               dse_op_str(n->op), bytes);
        memset(n->st.block, 0, bytes);
        n->st.bytes = bytes;
    }
    n->st.mem = DSE_MEM_HOST;
    if (!n->st.block) return DSE_OK; /* an op without state */
    dse_node_state_carve(n, n->st.block, &plan);
    (void)cx;
    return DSE_OK;
}

static void zero_part(void *p, int64_t lo, int64_t hi) {
    memset((float *)p + lo, 0, (size_t)(hi - lo) * sizeof(float));
}

void dse_cpu_zero(struct dse_cpu_ctx *cx, float *p, int64_t n) {
    dse_cpu_for(cx, n, n, zero_part, p);
}

struct sgd_job {
    float       *w, *v;
    const float *g;
    float        lr, momentum, wd, s;
};

static void sgd_part(void *p, int64_t lo, int64_t hi) {
    const struct sgd_job *j = p;
    float *restrict w = j->w, *restrict v = j->v;
    const float *restrict g = j->g;
    const float lr = j->lr, momentum = j->momentum, wd = j->wd, s = j->s;
    for (int64_t i = lo; i < hi; i++) {
        v[i] = momentum * v[i] + lr * (s * g[i] + wd * w[i]);
        w[i] -= v[i];
    }
}

void dse_cpu_sgd(struct dse_cpu_ctx *cx, float *w, const float *g, float *v, int64_t n, float lr, float momentum,
                 float wd, float s) {
    struct sgd_job j = { .w = w, .v = v, .g = g, .lr = lr, .momentum = momentum, .wd = wd, .s = s };
    dse_cpu_for(cx, n, n, sgd_part, &j);
}

double dse_cpu_sumsq(const float *x, int64_t n) { return dse_cpu_sum_of(x, n, 1); }

/* dse_cpu_sum_of's tree and tail on its eight running sums p of the first n8 values. */
static double sum_finish(const double p[8], const float *x, int64_t n8, int64_t n) {
    double s = dse_cpu_sum_tree(p);
    for (int64_t i = n8; i < n; i++) s += (double)x[i];
    return s;
}

#ifdef DSE_CPU_HAS_AVX2_CODE
/* Lane l of plane j's running sums adds x[j][i + l], i = 0, 8, 16, ...: dse_cpu_sum_of's p[l]. */
__attribute__((target("avx512f"))) static void sum4_avx512(const float *const x[4], int64_t n8, double p[4][8]) {
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd(), a2 = _mm512_setzero_pd(), a3 = _mm512_setzero_pd();
    for (int64_t i = 0; i < n8; i += 8) {
        a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm256_loadu_ps(x[0] + i)));
        a1 = _mm512_add_pd(a1, _mm512_cvtps_pd(_mm256_loadu_ps(x[1] + i)));
        a2 = _mm512_add_pd(a2, _mm512_cvtps_pd(_mm256_loadu_ps(x[2] + i)));
        a3 = _mm512_add_pd(a3, _mm512_cvtps_pd(_mm256_loadu_ps(x[3] + i)));
    }
    _mm512_storeu_pd(p[0], a0), _mm512_storeu_pd(p[1], a1), _mm512_storeu_pd(p[2], a2), _mm512_storeu_pd(p[3], a3);
}

__attribute__((target("avx2"))) static void sum4_avx2(const float *const x[4], int64_t n8, double p[4][8]) {
    __m256d lo[4], hi[4];
    for (int j = 0; j < 4; j++) lo[j] = _mm256_setzero_pd(), hi[j] = _mm256_setzero_pd();
    for (int64_t i = 0; i < n8; i += 8)
        for (int j = 0; j < 4; j++) {
            lo[j] = _mm256_add_pd(lo[j], _mm256_cvtps_pd(_mm_loadu_ps(x[j] + i)));
            hi[j] = _mm256_add_pd(hi[j], _mm256_cvtps_pd(_mm_loadu_ps(x[j] + i + 4)));
        }
    for (int j = 0; j < 4; j++) _mm256_storeu_pd(p[j], lo[j]), _mm256_storeu_pd(p[j] + 4, hi[j]);
}
#endif

void dse_cpu_sum_channels(const float *x, int64_t plane, int nk, int isa, double s[4]) {
    const float *xs[4]; /* planes past nk repeat plane 0: four chains run whatever nk */
    for (int j = 0; j < 4; j++) xs[j] = x + (j < nk ? j : 0) * plane;
    const int64_t n8 = plane / 8 * 8;
    double p[4][8];
    if (!n8) isa = DSE_CPU_MM_NONE;
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (isa == DSE_CPU_MM_AVX512) sum4_avx512(xs, n8, p);
    else if (isa == DSE_CPU_MM_AVX2) sum4_avx2(xs, n8, p);
#endif
    for (int j = 0; j < nk; j++)
        s[j] = isa == DSE_CPU_MM_NONE ? dse_cpu_sum(xs[j], plane) : sum_finish(p[j], xs[j], n8, plane);
}
