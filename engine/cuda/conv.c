/* conv.c: convolution on cuDNN, forward, backward data, backward filter and bias, and
 * the choice of algorithm: the first time a shape runs (batch, image strides, precision
 * and limits are part of the shape), cuDNN's find benchmarks every algorithm on the
 * node's own buffers (scratch gradients) with a workspace of at most ws_limit_bytes, and
 * the fastest that qualifies (deterministic when the ctx asks, no TF32 in FP32 mode) is
 * cached in the ctx. Views work: descriptors carry the image stride, so a Fire expand
 * conv writes straight into its slice of the concat buffer and reads its gradient there.
 * Gradients accumulate (beta = 1), as engine.h's rule says.
 * x [N, C, H, W]   w [K, C/G, R, S]   b [1, K, 1, 1]   y [N, K, P, Q]. */
#include "engine/cuda/cuda.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "engine/cuda/cuda_impl.h"

enum { DIR_FWD = 0, DIR_BWD_DATA, DIR_BWD_FILTER };

static const char *const fwd_names[] = { "implicit_gemm", "implicit_precomp_gemm", "gemm", "direct", "fft",
                                         "fft_tiling", "winograd", "winograd_nonfused" };
static const char *const bwd_data_names[] = { "algo_0", "algo_1", "fft", "fft_tiling", "winograd",
                                              "winograd_nonfused" };
static const char *const bwd_filter_names[] = { "algo_0", "algo_1", "fft", "algo_3", "winograd",
                                                "winograd_nonfused", "fft_tiling" };

const char *dse_cuda_conv_algo_str(int direction, int algo) {
    if (algo >= DSE_CUDA_CONV_ENGINE) return "engine"; /* a graph-API plan: engine algo - DSE_CUDA_CONV_ENGINE */
    if (algo == DSE_CUDA_CONV_FP32) return "fp32";     /* mixed precision without a 16-bit engine */
    switch (direction) {
    case DIR_FWD:        return algo >= 0 && algo < DSE_ARRAY_LEN(fwd_names) ? fwd_names[algo] : "?";
    case DIR_BWD_DATA:   return algo >= 0 && algo < DSE_ARRAY_LEN(bwd_data_names) ? bwd_data_names[algo] : "?";
    case DIR_BWD_FILTER: return algo >= 0 && algo < DSE_ARRAY_LEN(bwd_filter_names) ? bwd_filter_names[algo] : "?";
    default:             return "?";
    }
}

/* ---- descriptors --------------------------------------------------------------------- */

static enum dse_status set_descs(struct dse_cuda_ctx *cx, const struct dse_node *n, struct dse_cuda_node *d) {
    const struct dse_layer *l = n->layer;
    const struct dse_tensor *x = n->in[0], *y = n->out;
    enum dse_status st;
    if ((st = dse_cuda_desc_of(cx, n, d->x, x)) || (st = dse_cuda_desc_of(cx, n, d->y, y))) return st;
    DSE_CUDNN_TRY(cx, n, cudnnSetFilter4dDescriptor(d->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, y->c,
                                                    x->c / l->groups, l->kernel_h, l->kernel_w));
    DSE_CUDNN_TRY(cx, n, cudnnSetConvolution2dDescriptor(d->conv, l->pad_h, l->pad_w, l->stride_h, l->stride_w,
                                                         l->dilation_h, l->dilation_w, CUDNN_CROSS_CORRELATION,
                                                         CUDNN_DATA_FLOAT));
    DSE_CUDNN_TRY(cx, n, cudnnSetConvolutionGroupCount(d->conv, l->groups));
    if (n->bias && (st = dse_cuda_desc4d(cx, n, d->b, 1, y->c, 1, 1, y->c))) return st;
    /* cuDNN's output size rule is Caffe's (floor) for convolutions: say so if not. */
    int on, oc, oh, ow;
    DSE_CUDNN_TRY(cx, n, cudnnGetConvolution2dForwardOutputDim(d->conv, d->x, d->w, &on, &oc, &oh, &ow));
    if (on != y->n || oc != y->c || oh != y->h || ow != y->w)
        return dse_cuda_fail(cx, n, DSE_ERR_SHAPE, "cuDNN computes a %dx%dx%dx%d output; the node's is %dx%dx%dx%d",
                             on, oc, oh, ow, y->n, y->c, y->h, y->w);
    return DSE_OK;
}

/* The math type find starts from: FMA only (no tensor cores, no TF32) or cuDNN's default,
 * which allows TF32 tensor cores for float data on Ampere and later. */
static cudnnMathType_t find_math(const struct dse_cuda_ctx *cx) {
    return cx->math == DSE_CUDA_MATH_TF32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
}

/* The math type an algorithm found with math type `found` runs with. */
static cudnnMathType_t run_math(const struct dse_cuda_ctx *cx, int found) {
    return cx->math == DSE_CUDA_MATH_TF32 ? (cudnnMathType_t)found : CUDNN_FMA_MATH;
}

/* ---- the choice cache ---------------------------------------------------------------- */

/* Byte alignment of a device address, up to 16: some cuDNN kernels load 16 bytes at a
 * time, so a view at an odd offset may not run what an aligned buffer ran. */
static int64_t align16(const void *p) {
    const uintptr_t a = (uintptr_t)p;
    return a % 16 == 0 ? 16 : a % 8 == 0 ? 8 : a % 4 == 0 ? 4 : 1;
}

static void make_key(const struct dse_cuda_ctx *cx, const struct dse_node *n, int64_t key[DSE_CUDA_CONV_KEY]) {
    const struct dse_layer *l = n->layer;
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int64_t k[DSE_CUDA_CONV_KEY] = {
        x->n, x->c, x->h, x->w, y->c, l->kernel_h, l->kernel_w, l->stride_h, l->stride_w, l->pad_h, l->pad_w,
        l->dilation_h, l->dilation_w, l->groups, x->stride_n, y->stride_n, cx->math, cx->deterministic,
        (int64_t)(cx->ws_limit_bytes >> 20), align16(x->data) + 100 * align16(y->data),
        cx->legacy_conv + 2 * (align16(x->grad) + 100 * align16(y->grad)),
    };
    memcpy(key, k, sizeof k);
}

/* Direction dir of c: not chosen. */
static void unchoose(struct dse_cuda_conv_choice *c, int dir) {
    struct dse_cuda_conv_choice none;
    memset(&none, 0, sizeof none);
    none.algo[dir] = -1, none.engine[dir].id = -1;
    dse_cuda_conv_choice_copy_dir(c, &none, dir);
}

/* Index of a new cache entry for key (nothing chosen); -1 if out of memory. */
static int cache_add(struct dse_cuda_ctx *cx, const int64_t key[DSE_CUDA_CONV_KEY]) {
    struct dse_cuda_impl *m = cx->impl;
    if (m->cache_n == m->cache_cap) {
        const int cap = m->cache_cap ? 2 * m->cache_cap : 16;
        struct dse_cuda_conv_choice *c = realloc(m->cache, (size_t)cap * sizeof *c);
        if (!c) return -1;
        m->cache = c;
        int *ln = realloc(m->cache_line, (size_t)cap * sizeof *ln);
        if (!ln) return -1;
        m->cache_line = ln;
        struct dse_cuda_plan **pl = realloc(m->plans, (size_t)cap * 3 * sizeof *pl);
        if (!pl) return -1;
        memset(pl + 3 * m->cache_cap, 0, (size_t)(cap - m->cache_cap) * 3 * sizeof *pl);
        m->plans = pl;
        m->cache_cap = cap;
    }
    struct dse_cuda_conv_choice *c = &m->cache[m->cache_n];
    memset(c, 0, sizeof *c);
    memcpy(c->key, key, sizeof c->key);
    for (int dir = 0; dir < 3; dir++) unchoose(c, dir);
    m->cache_line[m->cache_n] = 0;
    return m->cache_n++;
}

static int cache_find(const struct dse_cuda_ctx *cx, const int64_t key[DSE_CUDA_CONV_KEY]) {
    for (int i = 0; i < cx->impl->cache_n; i++)
        if (memcmp(cx->impl->cache[i].key, key, sizeof cx->impl->cache[i].key) == 0) return i;
    return -1;
}

/* Index of the cache entry for n's shape, added (nothing chosen) if missing; -1 if out
 * of memory. */
static int cache_entry(struct dse_cuda_ctx *cx, const struct dse_node *n) {
    int64_t key[DSE_CUDA_CONV_KEY];
    make_key(cx, n, key);
    const int e = cache_find(cx, key);
    return e >= 0 ? e : cache_add(cx, key);
}

/* One perf result, whatever its direction. */
struct perf {
    int    algo, math, deterministic;
    int    ok;
    float  ms;
    size_t memory;
};

/* out[0 .. count) from cuDNN's results r: its three find calls' result structs have the
 * same fields under three types, hence a macro. */
#define PERFS_OF(r, count, out)                                                                  \
    for (int i_ = 0; i_ < (count); i_++)                                                         \
        (out)[i_] = (struct perf){ (int)(r)[i_].algo, (int)(r)[i_].mathType,                     \
                                   (r)[i_].determinism == CUDNN_DETERMINISTIC,                   \
                                   (r)[i_].status == CUDNN_STATUS_SUCCESS, (r)[i_].time, (r)[i_].memory }

/* The index of the result to take: results come fastest first; take the first that ran,
 * fits the workspace limit and, in this order of preference, is deterministic (when the
 * ctx asks) and uses no tensor-op math (in FP32 mode). -1 if none ran within the limit. */
static int pick(struct dse_cuda_ctx *cx, const struct perf *p, int count) {
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < count; i++) {
            if (!p[i].ok || p[i].memory > cx->ws_limit_bytes) continue;
            if (pass < 1 && cx->deterministic && !p[i].deterministic) continue;
            if (pass < 2 && cx->math == DSE_CUDA_MATH_FP32 &&
                (p[i].math == CUDNN_TENSOR_OP_MATH || p[i].math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
                continue;
            return i;
        }
    }
    return -1;
}

/* A find workspace: as much of ws_limit_bytes as the device can spare now. */
static void *find_workspace(struct dse_cuda_ctx *cx, size_t *bytes) {
    size_t free_b = 0, total_b = 0, want = cx->ws_limit_bytes;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && want > free_b / 10 * 8) want = free_b / 10 * 8;
    (void)cudaGetLastError();
    for (; want >= ((size_t)1 << 20); want /= 2) {
        void *p = NULL;
        if (cudaMalloc(&p, want) == cudaSuccess) {
            *bytes = want;
            return p;
        }
        (void)cudaGetLastError();
    }
    *bytes = 0;
    return NULL;
}

/* Device scratch of `floats` floats for find to write gradients into; NULL on failure
 * (reported in cx->err). */
static float *scratch(struct dse_cuda_ctx *cx, const struct dse_node *n, int64_t floats) {
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, (size_t)floats * sizeof(float));
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        dse_cuda_fail(cx, n, DSE_ERR_NOMEM, "cudaMalloc: %s: %lld floats of scratch for cuDNN's find",
                      cudaGetErrorName(e), (long long)floats);
        return NULL;
    }
    return p;
}

static enum dse_status find_fwd(struct dse_cuda_ctx *cx, const struct dse_node *n, struct dse_cuda_node *d,
                                struct perf *out, int *count, void *ws, size_t ws_bytes) {
    cudnnConvolutionFwdAlgoPerf_t r[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    DSE_CUDNN_TRY(cx, n, cudnnFindConvolutionForwardAlgorithmEx(
                             cx->impl->cudnn, d->x, n->in[0]->data, d->w, n->weight->data, d->conv, d->y,
                             n->out->data, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, count, r, ws, ws_bytes));
    PERFS_OF(r, *count, out);
    return DSE_OK;
}

static enum dse_status find_bwd_data(struct dse_cuda_ctx *cx, const struct dse_node *n, struct dse_cuda_node *d,
                                     struct perf *out, int *count, void *ws, size_t ws_bytes) {
    const struct dse_tensor *x = n->in[0];
    float *dx = scratch(cx, n, (int64_t)x->n * x->stride_n);
    if (!dx) return cx->err.code;
    cudnnConvolutionBwdDataAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    cudnnStatus_t s = cudnnFindConvolutionBackwardDataAlgorithmEx(
        cx->impl->cudnn, d->w, n->weight->data, d->y, n->out->grad, d->conv, d->x, dx,
        CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, count, r, ws, ws_bytes);
    (void)cudaFree(dx);
    DSE_CUDNN_TRY(cx, n, s);
    PERFS_OF(r, *count, out);
    return DSE_OK;
}

static enum dse_status find_bwd_filter(struct dse_cuda_ctx *cx, const struct dse_node *n, struct dse_cuda_node *d,
                                       struct perf *out, int *count, void *ws, size_t ws_bytes) {
    float *dw = scratch(cx, n, dse_tensor_count(n->weight));
    if (!dw) return cx->err.code;
    cudnnConvolutionBwdFilterAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    cudnnStatus_t s = cudnnFindConvolutionBackwardFilterAlgorithmEx(
        cx->impl->cudnn, d->x, n->in[0]->data, d->y, n->out->grad, d->conv, d->w, dw,
        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, count, r, ws, ws_bytes);
    (void)cudaFree(dw);
    DSE_CUDNN_TRY(cx, n, s);
    PERFS_OF(r, *count, out);
    return DSE_OK;
}

typedef enum dse_status (*find_fn)(struct dse_cuda_ctx *, const struct dse_node *, struct dse_cuda_node *,
                                   struct perf *, int *, void *, size_t);

/* 1 if plan p would make a deterministic ctx's results vary from run to run (counted in
 * stats.conv_nondeterministic, whether the ctx found p or took it from its conv_pool). */
static int breaks_determinism(const struct dse_cuda_ctx *cx, const struct dse_cuda_plan *p) {
    return p && cx->deterministic && !dse_cuda_plan_deterministic(p);
}

/* Cache entry e's choice for direction dir becomes plan (owned from here; NULL: none),
 * replacing any plan it had; with a plan, its engine configuration, time and workspace
 * are recorded. */
static void keep_plan(struct dse_cuda_ctx *cx, int e, int dir, struct dse_cuda_plan *plan, float plan_ms) {
    dse_cuda_plan_free(cx->impl->plans[3 * e + dir]);
    cx->impl->plans[3 * e + dir] = plan;
    if (!plan) return;
    struct dse_cuda_conv_choice *c = &cx->impl->cache[e];
    c->engine[dir] = *dse_cuda_plan_config(plan);
    c->algo[dir] = DSE_CUDA_CONV_ENGINE + (int)c->engine[dir].id, c->ms[dir] = plan_ms;
    c->ws[dir] = dse_cuda_plan_ws(plan);
    c->math[dir] = 0;
    cx->stats.conv_nondeterministic += breaks_determinism(cx, plan);
    cx->stats.conv_finds++, cx->stats.conv_graph_taken++;
}

/* Benchmark direction dir of n's shape into cache entry e. */
static enum dse_status find(struct dse_cuda_ctx *cx, const struct dse_node *n, struct dse_cuda_node *d, int e,
                            int dir) {
    static const find_fn fns[3] = { find_fwd, find_bwd_data, find_bwd_filter };
    struct perf p[CUDNN_CONVOLUTION_FWD_ALGO_COUNT]; /* the largest of the three counts */
    int count = 0;
    size_t ws_bytes = 0;
    DSE_CUDNN_TRY(cx, n, cudnnSetConvolutionMathType(d->conv, find_math(cx)));
    /* Find times on the device: nothing of ours may still be running. */
    DSE_CUDA_TRY(cx, n, cudaStreamSynchronize(cx->impl->stream));
    void *ws = find_workspace(cx, &ws_bytes);
    struct dse_cuda_conv_choice *c = &cx->impl->cache[e];
    struct dse_cuda_plan *plan = NULL;
    float plan_ms = 0.0f;
    if (dse_cuda_math_is16(cx->math)) { /* mixed precision: the graph API on the 16-bit copies only */
        void *const *io = cx->impl->mp_io[dir];
        enum dse_status st = dse_cuda_plan_find(cx, n, dir, io[0], io[1], io[2], ws, ws_bytes, &plan, &plan_ms);
        (void)cudaFree(ws);
        if (st) return st;
        keep_plan(cx, e, dir, plan, plan_ms);
        if (plan) {
            cx->stats.conv_graph_found++;
        } else { /* no 16-bit engine for the shape: this direction runs in fp32 */
            c->algo[dir] = DSE_CUDA_CONV_FP32, c->ms[dir] = 0.0f, c->ws[dir] = 0;
            cx->stats.conv_finds++, cx->stats.mp_fp32_fallbacks++;
        }
        return DSE_OK;
    }
    if (!cx->legacy_conv) { /* cuDNN's graph API: every engine it has */
        const struct dse_tensor *x = n->in[0];
        float *scr = dir == DIR_FWD ? NULL : scratch(cx, n, dir == DIR_BWD_DATA ? (int64_t)x->n * x->stride_n
                                                                                 : dse_tensor_count(n->weight));
        if (dir != DIR_FWD && !scr) {
            (void)cudaFree(ws);
            return cx->err.code;
        }
        void *px = dir == DIR_BWD_DATA ? scr : x->data, *pw = dir == DIR_BWD_FILTER ? scr : n->weight->data;
        void *py = dir == DIR_FWD ? n->out->data : n->out->grad;
        enum dse_status st = dse_cuda_plan_find(cx, n, dir, px, pw, py, ws, ws_bytes, &plan, &plan_ms);
        (void)cudaFree(scr);
        if (st) {
            (void)cudaFree(ws);
            return st;
        }
    }
    /* The legacy API's algorithms too: its find sometimes times an engine the graph API's
     * heuristics did not offer. */
    enum dse_status st = fns[dir](cx, n, d, p, &count, ws, ws_bytes);
    (void)cudaFree(ws);
    if (st && !plan) return st;
    if (st) count = 0; /* the legacy find failed, the graph API's plan stands */
    const int i = pick(cx, p, count);
    if (plan) cx->stats.conv_graph_found++;
    if (plan && i >= 0) { /* deterministic first when asked, then the faster */
        const int pd = dse_cuda_plan_deterministic(plan), ld = p[i].deterministic;
        const int take_plan = cx->deterministic && pd != ld ? pd : plan_ms <= p[i].ms;
        if (!take_plan) dse_cuda_plan_free(plan), plan = NULL;
    }
    keep_plan(cx, e, dir, plan, plan_ms);
    if (plan) return DSE_OK;
    if (i < 0) {
        char tried[256] = "";
        for (int k = 0, len = 0; k < count && len < (int)sizeof tried - 40; k++)
            len += snprintf(tried + len, sizeof tried - (size_t)len, "%s%s:%s", k ? ", " : "",
                            dse_cuda_conv_algo_str(dir, p[k].algo), p[k].ok ? "ok" : "failed");
        return dse_cuda_fail(cx, n, DSE_ERR_CUDA, "no cuDNN %s algorithm runs this conv within a %zu MiB "
                             "workspace (tried %s)", dse_cuda_conv_dir_str(dir), cx->ws_limit_bytes >> 20, tried);
    }
    if (cx->deterministic && !p[i].deterministic) cx->stats.conv_nondeterministic++;
    c->algo[dir] = p[i].algo, c->ms[dir] = p[i].ms, c->ws[dir] = p[i].memory;
    c->math[dir] = p[i].math, c->engine[dir].id = -1, c->engine[dir].n_knobs = 0;
    cx->stats.conv_finds++;
    return DSE_OK;
}

/* A graph-API engine a choice file gave entry e for direction dir: its plan, built from the
 * engine's identity the first time the shape runs. One that cuDNN cannot build here, that
 * the ctx's rules exclude or that needs another workspace than the file says is an error
 * naming the file's line: the file promised this engine, and another would differ. */
static enum dse_status rebuild(struct dse_cuda_ctx *cx, const struct dse_node *n, int e, int dir) {
    struct dse_cuda_impl *m = cx->impl;
    struct dse_cuda_conv_choice *c = &m->cache[e];
    if (c->algo[dir] < DSE_CUDA_CONV_ENGINE || m->plans[3 * e + dir]) return DSE_OK;
    char why[400];
    struct dse_cuda_plan *p = NULL;
    enum dse_status st = dse_cuda_plan_make(cx, n, dir, &c->engine[dir], &p, why, (int)sizeof why);
    if (!st && dse_cuda_plan_ws(p) != c->ws[dir]) {
        snprintf(why, sizeof why, "its plan needs %zu bytes of workspace here; the file says %zu",
                 dse_cuda_plan_ws(p), c->ws[dir]);
        dse_cuda_plan_free(p), p = NULL;
        st = DSE_ERR_CUDA;
    }
    if (st)
        return dse_cuda_fail(cx, n, st, "%s:%d: %s engine %lld does not fit this run (delete the file to choose "
                             "again): %s", m->pin_path ? m->pin_path : "the choice file", m->cache_line[e], dse_cuda_conv_dir_str(dir),
                             (long long)c->engine[dir].id, why);
    m->plans[3 * e + dir] = p;
    return DSE_OK;
}

/* Choose direction dir of entry e: take it from the ctx's conv_pool when another ctx of the
 * process has found it (waiting while one is finding it), else find it and give it to the
 * pool (cuda.h, "shared choices"). */
static enum dse_status find_or_share(struct dse_cuda_ctx *cx, const struct dse_node *n, struct dse_cuda_node *d,
                                     int e, int dir) {
    struct dse_cuda_conv_pool *pool = cx->conv_pool;
    if (!pool) return find(cx, n, d, e, dir);
    struct dse_cuda_impl *m = cx->impl;
    const enum dse_cuda_pool_get got = dse_cuda_conv_pool_get(pool, cx->device, dir, &m->cache[e]);
    if (got == DSE_CUDA_POOL_TAKEN) {
        struct dse_cuda_conv_choice *c = &m->cache[e];
        if (rebuild(cx, n, e, dir)) { /* built where it was found, but not here (out of memory?): */
            unchoose(c, dir);          /* nothing ran with it yet, so find alone */
            memset(&cx->err, 0, sizeof cx->err); /* rebuild's message was about a file */
            return find(cx, n, d, e, dir);
        }
        cx->stats.conv_shared++; /* and what find would have counted */
        cx->stats.mp_fp32_fallbacks += c->algo[dir] == DSE_CUDA_CONV_FP32;
        cx->stats.conv_nondeterministic += breaks_determinism(cx, m->plans[3 * e + dir]);
        return DSE_OK;
    }
    const enum dse_status st = find(cx, n, d, e, dir);
    if (got == DSE_CUDA_POOL_CLAIMED) /* find adds no entry: e and its key stay put */
        dse_cuda_conv_pool_put(pool, cx->device, dir, m->cache[e].key, st ? NULL : &m->cache[e]);
    return st;
}

/* Make sure the directions asked for are chosen (found, or a loaded engine built);
 * *entry = the cache index. */
static enum dse_status choose(struct dse_cuda_ctx *cx, const struct dse_node *n, struct dse_cuda_node *d, int fwd,
                              int bwd_data, int bwd_filter, int *entry) {
    const int e = cache_entry(cx, n);
    if (e < 0) return dse_cuda_fail(cx, n, DSE_ERR_NOMEM, "out of memory for the conv algorithm cache");
    const int want[3] = { fwd, bwd_data, bwd_filter };
    enum dse_status st = DSE_OK;
    for (int dir = 0; dir < 3 && !st; dir++)
        if (want[dir])
            st = cx->impl->cache[e].algo[dir] < 0 ? find_or_share(cx, n, d, e, dir) : rebuild(cx, n, e, dir);
    *entry = e;
    return st;
}

enum dse_status dse_cuda_conv2d_choose(struct dse_cuda_ctx *cx, struct dse_node *n,
                                       struct dse_cuda_conv_choice *out) {
    DSE_ASSERT(n->op == DSE_OP_CONV2D);
    struct dse_cuda_node *d = dse_cuda_dev(n);
    if (!cx->impl || !d) return dse_cuda_fail(cx, n, DSE_ERR_INTERNAL, "node not prepared for the CUDA backend");
    enum dse_status st = dse_cuda_use(cx);
    if (!st) st = set_descs(cx, n, d);
    const int bwd = n->training && n->out->grad;
    int e = -1;
    if (!st && dse_cuda_math_is16(cx->math)) { /* chosen at the first run, on its 16-bit copies */
        e = cache_entry(cx, n);
        const struct dse_cuda_conv_choice *c = e >= 0 ? &cx->impl->cache[e] : NULL;
        if (!c || c->algo[0] < 0 || (bwd && n->in[0]->grad && c->algo[1] < 0) ||
            (bwd && n->weight->grad && c->algo[2] < 0))
            st = dse_cuda_fail(cx, n, DSE_ERR_INTERNAL, "in %s a conv's engines are chosen when it first runs; run "
                               "it forward and backward first", dse_cuda_math_str(cx->math));
    } else if (!st) {
        st = choose(cx, n, d, 1, bwd && n->in[0]->grad, bwd && n->weight->grad, &e);
    }
    if (!st && out) *out = cx->impl->cache[e];
    return st;
}

/* ---- the choice file (the text: conv_file.c) ------------------------------------------- */

/* The header fields of this ctx's GPU and cuDNN into f. */
static enum dse_status this_gpu(struct dse_cuda_ctx *cx, struct dse_cuda_conv_file *f) {
    struct cudaDeviceProp p;
    memset(f, 0, sizeof *f);
    DSE_CUDA_TRY(cx, NULL, cudaGetDeviceProperties(&p, cx->device));
    f->version = 1;
    f->cudnn = (int64_t)cudnnGetVersion();
    f->cc_major = p.major, f->cc_minor = p.minor, f->sms = p.multiProcessorCount;
    snprintf(f->device, sizeof f->device, "%s", p.name);
    return DSE_OK;
}

static void cudnn_version_str(int64_t v, char *buf, size_t size) {
    snprintf(buf, size, "%lld.%lld.%lld", (long long)(v / 10000), (long long)(v % 10000 / 100), (long long)(v % 100));
}

enum dse_status dse_cuda_conv_cache_load(struct dse_cuda_ctx *cx, const char *path, struct dse_cuda_conv_load *out,
                                         struct dse_err *err) {
    memset(out, 0, sizeof *out);
    if (!cx->impl) return dse_cuda_report(cx, dse_cuda_fail(cx, NULL, DSE_ERR_INTERNAL, "CUDA context not "
                                                            "initialized"), err);
    FILE *probe = fopen(path, "r");
    if (!probe) {
        if (errno == ENOENT) return DSE_OK; /* nothing pinned yet */
        return dse_err_set(err, DSE_ERR_IO, path, 0, "cannot read the cuDNN choice file: %s", strerror(errno));
    }
    fclose(probe);
    char *text = NULL;
    struct dse_cuda_conv_file fl, me;
    enum dse_status st = dse_fs_read(path, &text, NULL, err);
    if (st) return st;
    st = dse_cuda_conv_file_parse(path, text, &fl, err);
    free(text);
    if (st) return st;
    out->found = 1;
    if ((st = this_gpu(cx, &me))) {
        dse_cuda_conv_file_deinit(&fl);
        return dse_cuda_report(cx, st, err);
    }
    if (fl.cudnn != me.cudnn || fl.cc_major != me.cc_major || fl.cc_minor != me.cc_minor || fl.sms != me.sms ||
        strcmp(fl.device, me.device)) {
        char a[32], b[32];
        cudnn_version_str(fl.cudnn, a, sizeof a);
        cudnn_version_str(me.cudnn, b, sizeof b);
        out->stale = 1;
        /* the names at most 100 bytes each: the message stays within why */
        snprintf(out->why, sizeof out->why, "%.*s was written with cuDNN %s on %.100s (compute capability %d.%d, %d "
                 "SMs); this is cuDNN %s on %.100s (%d.%d, %d SMs): its choices are set aside and found again",
                 160, path, a, fl.device, fl.cc_major, fl.cc_minor, fl.sms, b, me.device,
                 me.cc_major, me.cc_minor, me.sms);
        dse_cuda_conv_file_deinit(&fl);
        return DSE_OK;
    }
    struct dse_cuda_impl *m = cx->impl;
    char *copy = strdup(path);
    if (!copy) {
        dse_cuda_conv_file_deinit(&fl);
        return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
    }
    free(m->pin_path);
    m->pin_path = copy;
    for (int i = 0; i < fl.n; i++) {
        if (cache_find(cx, fl.choices[i].key) >= 0) continue; /* chosen here already */
        const int e = cache_add(cx, fl.choices[i].key);
        if (e < 0) {
            dse_cuda_conv_file_deinit(&fl);
            return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
        }
        m->cache[e] = fl.choices[i]; /* its plans are built when the shape first runs (rebuild) */
        m->cache_line[e] = fl.lines[i];
        for (int dir = 0; dir < 3; dir++) cx->stats.conv_loaded += m->cache[e].algo[dir] >= 0;
        out->loaded++;
    }
    dse_cuda_conv_file_deinit(&fl);
    return DSE_OK;
}

enum dse_status dse_cuda_conv_cache_save(struct dse_cuda_ctx *cx, const char *path, struct dse_err *err) {
    struct dse_cuda_conv_file f;
    if (!cx->impl) return dse_cuda_report(cx, dse_cuda_fail(cx, NULL, DSE_ERR_INTERNAL, "CUDA context not "
                                                            "initialized"), err);
    enum dse_status st = this_gpu(cx, &f);
    if (st) return dse_cuda_report(cx, st, err);
    f.n = cx->impl->cache_n, f.choices = cx->impl->cache; /* borrowed: not deinit'ed */
    char *text = dse_cuda_conv_file_format(&f);
    if (!text) return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
    st = dse_fs_write_atomic(path, text, strlen(text), err);
    free(text);
    return st;
}

/* Run a graph-API plan (conv_graph.c) with the ctx's workspace, grown to what it needs. */
static enum dse_status run_plan(struct dse_cuda_ctx *cx, const struct dse_node *n, struct dse_cuda_plan *p, void *x,
                                void *w, void *y) {
    void *ws = NULL;
    enum dse_status st = dse_cuda_workspace(cx, n, dse_cuda_plan_ws(p), &ws);
    return st ? st : dse_cuda_plan_run(cx, n, p, x, w, y, ws);
}

/* ---- mixed precision (FP16, BF16) ------------------------------------------------------ */

/* The conv runs on 16-bit copies of its operands (packed NCHW, in the ctx's scratch16),
 * with cuDNN's graph API (tensor cores, float accumulation); the results are rounded
 * back and added to the float tensors, which stay what the rest of the engine sees. In
 * FP16 the output gradient is multiplied by the loss scale before rounding (small
 * gradients would flush to zero) and the input and weight gradients divided by it after;
 * a non-finite one sets mp_flag, and dse_cuda_mp_step skips that SGD step. */

static int kind16(const struct dse_cuda_ctx *cx) { return cx->math == DSE_CUDA_MATH_BF16; }

static enum dse_status fwd_float(struct dse_cuda_ctx *cx, struct dse_node *n);
static enum dse_status bwd_float(struct dse_cuda_ctx *cx, struct dse_node *n, float *dx, float *dw);

/* A shape cuDNN has no 16-bit engine for runs in fp32 (its choices cached under fp32). */
static enum dse_status in_fp32(struct dse_cuda_ctx *cx, struct dse_node *n, int bwd, float *dx, float *dw) {
    const enum dse_cuda_math keep = cx->math;
    cx->math = DSE_CUDA_MATH_FP32;
    const enum dse_status st = bwd ? bwd_float(cx, n, dx, dw) : fwd_float(cx, n);
    cx->math = keep;
    return st;
}

/* Pieces of scratch16 (2 bytes a value), each 256-byte aligned; grown as needed. */
static enum dse_status scratch16(struct dse_cuda_ctx *cx, const struct dse_node *n, const int64_t *counts, int k,
                                 void **out) {
    size_t at[8], total = 0;
    for (int i = 0; i < k; i++) at[i] = total, total += ((size_t)counts[i] * 2 + 255) / 256 * 256;
    struct dse_cuda_impl *m = cx->impl;
    if (total > m->scratch16_bytes) {
        DSE_CUDA_TRY(cx, n, cudaStreamSynchronize(m->stream)); /* no queued kernel still uses it */
        DSE_CUDA_TRY(cx, n, cudaFree(m->scratch16));
        m->scratch16 = NULL, m->scratch16_bytes = 0, cx->stats.scratch16_bytes = 0;
        DSE_CUDA_TRY(cx, n, cudaMalloc(&m->scratch16, total));
        m->scratch16_bytes = total, cx->stats.scratch16_bytes = total;
    }
    for (int i = 0; i < k; i++) out[i] = (char *)m->scratch16 + at[i];
    return DSE_OK;
}

static enum dse_status fwd16(struct dse_cuda_ctx *cx, struct dse_node *n) {
    struct dse_cuda_node *d = dse_cuda_dev(n);
    const struct dse_tensor *x = n->in[0], *y = n->out, *w = n->weight;
    const int kind = kind16(cx);
    cudaStream_t s = cx->impl->stream;
    const int64_t counts[3] = { x->n * dse_tensor_image(x), dse_tensor_count(w), y->n * dse_tensor_image(y) };
    void *b[3];
    enum dse_status st = scratch16(cx, n, counts, 3, b);
    int e;
    if (st || (st = set_descs(cx, n, d))) return st;
    DSE_CUDA_TRY(cx, n, dse_cuk_to16(s, kind, x->data, x->stride_n, b[0], x->n, dse_tensor_image(x), 1.0f));
    DSE_CUDA_TRY(cx, n, dse_cuk_to16(s, kind, w->data, counts[1], b[1], 1, counts[1], 1.0f));
    cx->impl->mp_io[DIR_FWD][0] = b[0], cx->impl->mp_io[DIR_FWD][1] = b[1], cx->impl->mp_io[DIR_FWD][2] = b[2];
    if ((st = choose(cx, n, d, 1, 0, 0, &e))) return st;
    if (!cx->impl->plans[3 * e + DIR_FWD]) return in_fp32(cx, n, 0, NULL, NULL);
    if ((st = run_plan(cx, n, cx->impl->plans[3 * e + DIR_FWD], b[0], b[1], b[2]))) return st;
    DSE_CUDA_TRY(cx, n, dse_cuk_from16_bias(s, kind, b[2], y->data, y->stride_n, y->n, y->c, (int64_t)y->h * y->w,
                                            n->bias ? n->bias->data : NULL, n->relu_out));
    return DSE_OK;
}

static enum dse_status bwd16(struct dse_cuda_ctx *cx, struct dse_node *n, float *dx, float *dw) {
    struct dse_cuda_node *d = dse_cuda_dev(n);
    struct dse_cuda_impl *m = cx->impl;
    const struct dse_tensor *x = n->in[0], *y = n->out, *w = n->weight;
    const int kind = kind16(cx);
    const float scale = cx->math == DSE_CUDA_MATH_FP16 ? cx->loss_scale : 1.0f;
    cudaStream_t s = m->stream;
    const int64_t nx = x->n * dse_tensor_image(x), nw = dse_tensor_count(w), ny = y->n * dse_tensor_image(y);
    /* x16, w16, dy16, dx16, dw16 */
    const int64_t counts[5] = { dw ? nx : 0, dx ? nw : 0, ny, dx ? nx : 0, dw ? nw : 0 };
    void *b[5];
    enum dse_status st = scratch16(cx, n, counts, 5, b);
    int e;
    if (st) return st;
    DSE_CUDA_TRY(cx, n, dse_cuk_to16(s, kind, y->grad, y->stride_n, b[2], y->n, dse_tensor_image(y), scale));
    if (dw) DSE_CUDA_TRY(cx, n, dse_cuk_to16(s, kind, x->data, x->stride_n, b[0], x->n, dse_tensor_image(x), 1.0f));
    if (dx) DSE_CUDA_TRY(cx, n, dse_cuk_to16(s, kind, w->data, nw, b[1], 1, nw, 1.0f));
    void *io[3][3] = { { NULL, NULL, NULL }, { b[3], b[1], b[2] }, { b[0], b[4], b[2] } };
    memcpy(m->mp_io, io, sizeof io);
    if ((st = choose(cx, n, d, 0, dx != NULL, dw != NULL, &e))) return st;
    if ((dw && !m->plans[3 * e + DIR_BWD_FILTER]) || (dx && !m->plans[3 * e + DIR_BWD_DATA]))
        return in_fp32(cx, n, 1, dx, dw);
    if (dw) {
        if ((st = run_plan(cx, n, m->plans[3 * e + DIR_BWD_FILTER], b[0], b[4], b[2]))) return st;
        DSE_CUDA_TRY(cx, n, dse_cuk_from16_acc(s, kind, b[4], dw, nw, 1, nw, 1.0f / scale, m->mp_flag));
    }
    if (dx) {
        if ((st = run_plan(cx, n, m->plans[3 * e + DIR_BWD_DATA], b[3], b[1], b[2]))) return st;
        DSE_CUDA_TRY(cx, n, dse_cuk_from16_acc(s, kind, b[3], dx, x->stride_n, x->n, dse_tensor_image(x), 1.0f / scale,
                                               m->mp_flag));
    }
    return DSE_OK;
}

/* ---- kernels ------------------------------------------------------------------------- */

/* y += bias per channel (ours: cudnnAddTensor was as slow as the conv on small maps),
 * and the fused ReLU (dse_node.relu_out) in the same pass: y = relu(y + bias). */
static enum dse_status bias_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *y = n->out;
    cudaStream_t s = cx->impl->stream;
    if (n->bias)
        DSE_CUDA_TRY(cx, n, dse_cuk_bias_fwd(s, y->data, y->stride_n, y->n, y->c, (int64_t)y->h * y->w, n->bias->data,
                                             n->relu_out));
    else if (n->relu_out)
        DSE_CUDA_TRY(cx, n, dse_cuk_relu_fwd(s, y->data, y->stride_n, y->data, y->stride_n, y->n, dse_tensor_image(y)));
    return DSE_OK;
}

/* Backward's first pass over dy: the fused ReLU's mask (dy = y > 0 ? dy : 0, in place,
 * what the ReLU node's backward did) and the bias gradient (ours, per channel, in double:
 * cudnnConvolutionBackwardBias took ms on SqueezeNet's maps), in one read of dy when the
 * node has both. Every later reader of dy (cuDNN, the 16-bit copies) sees it masked. */
static enum dse_status mask_bias_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *y = n->out;
    cudaStream_t s = cx->impl->stream;
    if (!y->grad) return DSE_OK; /* nothing flows back into this conv */
    if (n->bias && n->bias->grad) {
        void *part = NULL;
        enum dse_status st = dse_cuda_workspace(cx, n, (size_t)dse_cuk_bias_bwd_part(y->n, y->c) * sizeof(double),
                                                &part);
        if (st) return st;
        DSE_CUDA_TRY(cx, n, dse_cuk_bias_bwd(s, y->grad, y->stride_n, y->n, y->c, (int64_t)y->h * y->w,
                                             n->bias->grad, part, n->relu_out ? y->data : NULL));
    } else if (n->relu_out) {
        DSE_CUDA_TRY(cx, n, dse_cuk_relu_bwd(s, y->data, y->grad, y->stride_n, y->grad, y->stride_n, y->n,
                                             dse_tensor_image(y), 1));
    }
    return DSE_OK;
}

enum dse_status dse_cuda_conv2d_fwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    return dse_cuda_math_is16(cx->math) ? fwd16(cx, n) : fwd_float(cx, n);
}

static enum dse_status fwd_float(struct dse_cuda_ctx *cx, struct dse_node *n) {
    struct dse_cuda_node *d = dse_cuda_dev(n);
    cudnnHandle_t h = cx->impl->cudnn;
    int e = 0;
    enum dse_status st = set_descs(cx, n, d);
    if (!st) st = choose(cx, n, d, 1, 0, 0, &e);
    if (st) return st;
    struct dse_cuda_plan *plan = cx->impl->plans[3 * e + DIR_FWD];
    if (plan) {
        if ((st = run_plan(cx, n, plan, n->in[0]->data, n->weight->data, n->out->data))) return st;
        return bias_fwd(cx, n);
    }
    const cudnnConvolutionFwdAlgo_t algo = (cudnnConvolutionFwdAlgo_t)cx->impl->cache[e].algo[0];
    DSE_CUDNN_TRY(cx, n, cudnnSetConvolutionMathType(d->conv, run_math(cx, cx->impl->cache[e].math[DIR_FWD])));
    size_t bytes = 0;
    void *ws = NULL;
    DSE_CUDNN_TRY(cx, n, cudnnGetConvolutionForwardWorkspaceSize(h, d->x, d->w, d->conv, d->y, algo, &bytes));
    if ((st = dse_cuda_workspace(cx, n, bytes, &ws))) return st;
    DSE_CUDNN_TRY(cx, n, cudnnConvolutionForward(h, &dse_cuda_alpha1, d->x, n->in[0]->data, d->w, n->weight->data,
                                                 d->conv, algo, ws, bytes, &dse_cuda_beta0, d->y, n->out->data));
    return bias_fwd(cx, n);
}

enum dse_status dse_cuda_conv2d_bwd(struct dse_cuda_ctx *cx, struct dse_node *n) {
    struct dse_cuda_node *d = dse_cuda_dev(n);
    float *dx = n->in[0]->grad, *dw = n->weight->grad;
    enum dse_status st = set_descs(cx, n, d);
    if (st || (st = mask_bias_bwd(cx, n))) return st;
    if (!dx && !dw) return DSE_OK;
    return dse_cuda_math_is16(cx->math) ? bwd16(cx, n, dx, dw) : bwd_float(cx, n, dx, dw);
}

/* dw += and dx += through cuDNN in fp32 or tf32 (the bias gradient is done). */
static enum dse_status bwd_float(struct dse_cuda_ctx *cx, struct dse_node *n, float *dx, float *dw) {
    struct dse_cuda_node *d = dse_cuda_dev(n);
    cudnnHandle_t h = cx->impl->cudnn;
    const struct dse_tensor *x = n->in[0], *y = n->out;
    enum dse_status st = set_descs(cx, n, d);
    if (st) return st;
    int e;
    if ((st = choose(cx, n, d, 0, dx != NULL, dw != NULL, &e))) return st;
    const struct dse_cuda_conv_choice c = cx->impl->cache[e];
    size_t bytes = 0;
    void *ws = NULL;
    struct dse_cuda_plan *pf = cx->impl->plans[3 * e + DIR_BWD_FILTER], *pd = cx->impl->plans[3 * e + DIR_BWD_DATA];
    if (dw && pf) {
        if ((st = run_plan(cx, n, pf, x->data, dw, y->grad))) return st;
    } else if (dw) {
        const cudnnConvolutionBwdFilterAlgo_t algo = (cudnnConvolutionBwdFilterAlgo_t)c.algo[2];
        DSE_CUDNN_TRY(cx, n, cudnnSetConvolutionMathType(d->conv, run_math(cx, c.math[DIR_BWD_FILTER])));
        DSE_CUDNN_TRY(cx, n, cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d->x, d->y, d->conv, d->w, algo,
                                                                            &bytes));
        if ((st = dse_cuda_workspace(cx, n, bytes, &ws))) return st;
        DSE_CUDNN_TRY(cx, n, cudnnConvolutionBackwardFilter(h, &dse_cuda_alpha1, d->x, x->data, d->y, y->grad,
                                                            d->conv, algo, ws, bytes, &dse_cuda_alpha1, d->w, dw));
    }
    if (dx && pd) {
        if ((st = run_plan(cx, n, pd, dx, n->weight->data, y->grad))) return st;
    } else if (dx) {
        const cudnnConvolutionBwdDataAlgo_t algo = (cudnnConvolutionBwdDataAlgo_t)c.algo[1];
        DSE_CUDNN_TRY(cx, n, cudnnSetConvolutionMathType(d->conv, run_math(cx, c.math[DIR_BWD_DATA])));
        DSE_CUDNN_TRY(cx, n, cudnnGetConvolutionBackwardDataWorkspaceSize(h, d->w, d->y, d->conv, d->x, algo,
                                                                          &bytes));
        if ((st = dse_cuda_workspace(cx, n, bytes, &ws))) return st;
        DSE_CUDNN_TRY(cx, n, cudnnConvolutionBackwardData(h, &dse_cuda_alpha1, d->w, n->weight->data, d->y, y->grad,
                                                          d->conv, algo, ws, bytes, &dse_cuda_alpha1, d->x, dx));
    }
    return DSE_OK;
}
