/* pool.c: CPU max and average pooling (global pooling too: the kernel is the input),
 * forward and backward, window for window as Caffe's pooling_layer.cpp computes them:
 * windows that overhang the input (ceil rounding, padding) are clipped; max ignores
 * out-of-range positions, average divides by the window clipped to the PADDED input,
 * so padding counts as zeros but the overhang past the padding does not.
 * x: [N, C, H, W]   y: [N, C, P, Q]   argmax: [N, C, P, Q] (y*W+x in the input plane). */
#include "engine/engine.h"

#include <string.h>

#include "engine/cpu/bf16_impl.h" /* activations stored in bf16 */
#include "engine/cpu/cpu_impl.h"
#include "engine/kernels_shared.h" /* dse_pool_bounds, the CUDA kernels' too */

/* Windows are separable: rows depend on p only, columns on q only, so their bounds
 * (dse_pool_bounds) are computed once per call (in the ctx workspace), not once per
 * output value. */
struct windows {
    int *h0, *h1, *hn; /* rows [h0, h1) clipped to the input; hn: Caffe's AVE row count,
                          clipped to the padded input only */
    int *w0, *w1, *wn; /* the same for columns */
};

static enum dse_status windows_of(struct dse_cpu_ctx *cx, const struct dse_node *n, struct windows *w) {
    const struct dse_layer *l = n->layer;
    const int H = n->in[0]->h, W = n->in[0]->w, P = n->out->h, Q = n->out->w;
    void *ws;
    enum dse_status st = dse_cpu_ctx_workspace(cx, 3 * (size_t)(P + Q) * sizeof(int), &ws);
    if (st) return st;
    int *p = ws;
    w->h0 = p, w->h1 = p + P, w->hn = p + 2 * P;
    w->w0 = p + 3 * P, w->w1 = w->w0 + Q, w->wn = w->w0 + 2 * Q;
    for (int i = 0; i < P; i++)
        dse_pool_bounds(i, l->kernel_h, l->stride_h, l->pad_h, H, &w->h0[i], &w->h1[i], &w->hn[i]);
    for (int i = 0; i < Q; i++)
        dse_pool_bounds(i, l->kernel_w, l->stride_w, l->pad_w, W, &w->w0[i], &w->w1[i], &w->wn[i]);
    return DSE_OK;
}

/* What a parallel pooling loop over (image, channel) planes needs. */
struct pj {
    const struct dse_node *n;
    struct windows         win;
    struct dse_cpu_ctx    *cx;     /* max pooling with bf16: each thread's output plane in float, */
    size_t                 buf_at; /* in its workspace from here (thread 0: past the windows), */
    size_t                 x_at;   /* then its input plane in float, this far past it */
    int                    isa;    /* dse_cpu_bf16_isa(), read once */
};

/* An empty window (possible with ceil rounding when the kernel is smaller than the
 * stride) gives 0 and no gradient; Caffe would give -FLT_MAX for max and 0/0 for avg. */
static int empty(const struct windows *w, int p, int q) {
    return w->h0[p] >= w->h1[p] || w->w0[q] >= w->w1[q] || w->hn[p] <= 0 || w->wn[q] <= 0;
}

/* An argmax cut by the ReLU's mask (dse_node.pool_relu) at its position i: backward adds +0
 * there, which leaves the value as it is (the buffer's readers are all max pools, whose
 * gradients are sums from +0, never -0). An empty window's argmax stays -1, as the GPU's
 * (tests compare them), and passes nothing. */
#define ARG_CUT(i) ((int32_t)((uint32_t)(i) | 0x80000000u))

/* Where plane nc (image nc / C, channel nc % C) of t begins in its data or grad. */
static int64_t plane_at(const struct dse_tensor *t, int64_t nc) {
    return (nc / t->c) * t->stride_n + (nc % t->c) * t->h * t->w;
}

#ifdef DSE_CPU_HAS_AVX2_CODE
/* 3x3 windows at stride 2 (SqueezeNet's pools), 8 outputs at a time with AVX2 where
 * the CPU has it (checked at run time; the build targets baseline x86-64): output q
 * reads columns w0 + 2q + (0, 1, 2), so one window column of 8 outputs is the even
 * (or odd) half of 16 consecutive inputs. The window values are taken in the scalar
 * loop's row-major order with the same strict > (vcmpps GT_OQ: NaN never wins), so
 * maxima and argmaxes are the scalar loop's, bit for bit (test pool-ties). Rows h0 ..
 * h0 + nrows - 1 (nrows 1 to 3: a window clipped at the top or bottom edge). Does the
 * outputs of row p from the first (q = 0 here) whose windows are full in width and
 * inside the row; returns the first q it did not do. The last group of fewer than 8
 * (maps of 3, 7 or 14 outputs a row: SqueezeNet-FMNIST's pools) loads under a mask, so
 * no load leaves the row's columns, and stores through a buffer on the stack, copied out in
 * pieces of constant size (dse_cpu_copy4: no libc call per row; a masked store, vmaskmovps,
 * is microcoded on AMD's Zen; a row copied to the stack and loaded from
 * there instead of masked loads was twice as slow: store forwarding fails). Without arow
 * (inference, want_arg 0), the maxima alone: no argmax to blend or store. */
__attribute__((target("avx2"))) static inline int max3s2_body(const float *xp, int W, int h0, int nrows, int w0q,
                                                               int Q, float *yrow, int32_t *arow, const int want_arg,
                                                               const int cut) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i step = _mm256_add_epi32(lane, lane);
    /* outputs whose 3 columns w0q + 2q .. w0q + 2q + 2 are inside the row */
    int nq = W - 3 - w0q < 0 ? 0 : (W - 3 - w0q) / 2 + 1;
    if (nq > Q) nq = Q;
    for (int q = 0; q < nq; q += 8) {
        const int c0 = w0q + 2 * q; /* window column 0 of output q */
        const int full = q + 8 <= nq && c0 + 18 <= W, left = W - c0;
        /* masks: lanes of the loads at columns c0 + off + lane that lie inside the row */
        const __m256i avail = _mm256_set1_epi32(left);
        const __m256i m0 = _mm256_cmpgt_epi32(avail, lane);
        const __m256i m8 = _mm256_cmpgt_epi32(avail, _mm256_add_epi32(lane, _mm256_set1_epi32(8)));
        const __m256i m2 = _mm256_cmpgt_epi32(avail, _mm256_add_epi32(lane, _mm256_set1_epi32(2)));
        const __m256i m10 = _mm256_cmpgt_epi32(avail, _mm256_add_epi32(lane, _mm256_set1_epi32(10)));
        __m256 best = _mm256_setzero_ps();
        __m256i arg = _mm256_setzero_si256();
        for (int dh = 0; dh < nrows; dh++) {
            const float *row = xp + (int64_t)(h0 + dh) * W + c0;
            __m256 a, b, c, d;
            if (full) {
                a = _mm256_loadu_ps(row), b = _mm256_loadu_ps(row + 8);
                c = _mm256_loadu_ps(row + 2), d = _mm256_loadu_ps(row + 10);
            } else {
                a = _mm256_maskload_ps(row, m0), b = _mm256_maskload_ps(row + 8, m8);
                c = _mm256_maskload_ps(row + 2, m2), d = _mm256_maskload_ps(row + 10, m10);
            }
            /* even and odd lanes of row[0..15], and the even lanes of row[2..17] */
            const __m256 vals[3] = { dse_avx2_half(a, b, 0), dse_avx2_half(a, b, 1), dse_avx2_half(c, d, 0) };
            const __m256i base = _mm256_add_epi32(_mm256_set1_epi32((h0 + dh) * W + c0), step);
            for (int dw = 0; dw < 3; dw++) {
                const __m256i idx = _mm256_add_epi32(base, _mm256_set1_epi32(dw));
                if (dh == 0 && dw == 0) {
                    best = vals[0], arg = idx;
                    continue;
                }
                const __m256 more = _mm256_cmp_ps(vals[dw], best, _CMP_GT_OQ);
                best = _mm256_blendv_ps(best, vals[dw], more);
                if (want_arg)
                    arg = _mm256_castps_si256(
                        _mm256_blendv_ps(_mm256_castsi256_ps(arg), _mm256_castsi256_ps(idx), more));
            }
        }
        if (cut) /* ARG_CUT where the maximum is not > 0 */
            arg = _mm256_blendv_epi8(_mm256_or_si256(arg, _mm256_set1_epi32(INT32_MIN)), arg,
                                     _mm256_castps_si256(_mm256_cmp_ps(best, _mm256_setzero_ps(), _CMP_GT_OQ)));
        if (full) {
            _mm256_storeu_ps(yrow + q, best);
            if (want_arg) _mm256_storeu_si256((__m256i *)(arow + q), arg);
        } else { /* lanes of outputs q .. nq - 1, through the stack */
            float yb[8];
            int32_t ab[8];
            _mm256_storeu_ps(yb, best);
            dse_cpu_copy4(yrow + q, yb, nq - q);
            if (want_arg) {
                _mm256_storeu_si256((__m256i *)(void *)ab, arg);
                dse_cpu_copy4(arow + q, ab, nq - q);
            }
        }
    }
    return nq;
}

/* max3s2_body on AVX-512 (where dse_cpu_mm_isa allows it: AVX-512 F, all it uses): 16 outputs
 * a step, their window columns the even and odd lanes of inputs 0..31 and the even lanes of
 * inputs 2..33 (vpermt2ps), the maxima and argmaxes blended under compare masks in the same
 * order and with the same strict > as the scalar loop: the same bits (test pool-ties, on
 * AVX-512, AVX2 and the scalar loop). Loads past the row's end (the last group, or fewer than
 * 48 inputs left) go under masks, and so do the last group's stores. Figures:
 * docs/training.md "On AMX, 2026-11-30". */
#define T512 __attribute__((target("avx512f")))
T512 static inline int max3s2_512_body(const float *xp, int W, int h0, int nrows, int w0q, int Q, float *yrow,
                                       int32_t *arow, const int want_arg, const int cut) {
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i even = _mm512_add_epi32(lane, lane), odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __m512i next = _mm512_add_epi32(lane, _mm512_set1_epi32(1)); /* lanes 1..15 of a, then b's lane 0 */
    int nq = W - 3 - w0q < 0 ? 0 : (W - 3 - w0q) / 2 + 1;
    if (nq > Q) nq = Q;
    for (int q = 0; q < nq; q += 16) {
        const int c0 = w0q + 2 * q, left = W - c0;
        const __mmask16 m0 = dse_cpu_lanes16(left), m1 = dse_cpu_lanes16(left - 16);
        const __mmask16 m2 = dse_cpu_lanes16(left - 32), out = dse_cpu_lanes16(nq - q);
        __m512 best = _mm512_setzero_ps();
        __m512i arg = _mm512_setzero_si512();
        for (int dh = 0; dh < nrows; dh++) {
            const float *row = xp + (int64_t)(h0 + dh) * W + c0;
            const __m512 a = _mm512_maskz_loadu_ps(m0, row), b = _mm512_maskz_loadu_ps(m1, row + 16);
            const __m512 c = _mm512_maskz_loadu_ps(m2, row + 32);
            const __m512 e = _mm512_permutex2var_ps(a, even, b);
            const __m512 vals[3] = { e, _mm512_permutex2var_ps(a, odd, b), _mm512_permutex2var_ps(e, next, c) };
            const __m512i base = _mm512_add_epi32(_mm512_set1_epi32((h0 + dh) * W + c0), even);
            for (int dw = 0; dw < 3; dw++) {
                const __m512i idx = _mm512_add_epi32(base, _mm512_set1_epi32(dw));
                if (dh == 0 && dw == 0) {
                    best = vals[0], arg = idx;
                    continue;
                }
                const __mmask16 more = _mm512_cmp_ps_mask(vals[dw], best, _CMP_GT_OQ);
                best = _mm512_mask_mov_ps(best, more, vals[dw]);
                if (want_arg) arg = _mm512_mask_mov_epi32(arg, more, idx);
            }
        }
        if (cut) /* ARG_CUT where the maximum is not > 0 */
            arg = _mm512_mask_or_epi32(arg, (__mmask16)~_mm512_cmp_ps_mask(best, _mm512_setzero_ps(), _CMP_GT_OQ), arg,
                                       _mm512_set1_epi32(INT32_MIN));
        if (q + 16 <= nq) {
            _mm512_storeu_ps(yrow + q, best);
            if (want_arg) _mm512_storeu_si512(arow + q, arg);
        } else {
            _mm512_mask_storeu_ps(yrow + q, out, best);
            if (want_arg) _mm512_mask_storeu_epi32(arow + q, out, arg);
        }
    }
    return nq;
}

T512 static int max3s2_512(const float *xp, int W, int h0, int nrows, int w0q, int Q, float *yrow, int32_t *arow,
                           int cut) {
    return !arow ? max3s2_512_body(xp, W, h0, nrows, w0q, Q, yrow, NULL, 0, 0)
           : cut ? max3s2_512_body(xp, W, h0, nrows, w0q, Q, yrow, arow, 1, 1)
                 : max3s2_512_body(xp, W, h0, nrows, w0q, Q, yrow, arow, 1, 0);
}

/* max3s2_body with the argmax (training; cut: dse_node.pool_relu) or without it (arow NULL),
 * each compiled apart. */
__attribute__((target("avx2"))) static int max3s2_avx2(const float *xp, int W, int h0, int nrows, int w0q, int Q,
                                                        float *yrow, int32_t *arow, int cut) {
    return !arow ? max3s2_body(xp, W, h0, nrows, w0q, Q, yrow, NULL, 0, 0)
           : cut ? max3s2_body(xp, W, h0, nrows, w0q, Q, yrow, arow, 1, 1)
                 : max3s2_body(xp, W, h0, nrows, w0q, Q, yrow, arow, 1, 0);
}
#endif

/* Planes [lo, hi); with ybuf (an output stored in bf16, dse_tensor.bf16), each plane is
 * pooled into ybuf and rounded into y (the bf16 convs after it read the same values either
 * way); with xbuf (an input stored in bf16: a bf16 conv's output), each plane is first
 * turned into floats there (exact, and in cache while the windows read it: its half the
 * bytes from memory), its maxima then bf16 values, which the rounding into y keeps. */
static void maxpool_fwd_planes(const struct pj *a, int64_t lo, int64_t hi, float *ybuf, float *xbuf) {
    const struct dse_node *n = a->n;
    const struct windows win = a->win;
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int W = x->w, P = y->h, Q = y->w;
    int32_t *argmax = n->st.argmax;
    const struct dse_layer *l = n->layer;
    int fast = 0; /* 3x3 windows at stride 2 on AVX2 (1) or AVX-512 (2): max3s2_* do the full ones */
#ifdef DSE_CPU_HAS_AVX2_CODE
    if (l->kernel_h == 3 && l->kernel_w == 3 && l->stride_h == 2 && l->stride_w == 2 && dse_cpu_avx2())
        fast = dse_cpu_mm_isa() == DSE_CPU_MM_AVX512 ? 2 : 1;
#endif
    const int q_first = (l->pad_w + 1) / 2; /* the first output whose window starts inside the row */
    const int relu_cut = n->pool_relu && n->training; /* a local: stores to ap could alias n */
    (void)fast, (void)q_first;
    for (int64_t nc = lo; nc < hi; nc++) {
        const float *xp = x->data + plane_at(x, nc);
        if (xbuf) {
            dse_bf16_floats((const dse_bf16 *)(const void *)x->data + plane_at(x, nc), (int64_t)x->h * W, xbuf, a->isa);
            xp = xbuf;
        }
        float *yp = ybuf ? ybuf : y->data + plane_at(y, nc);
        int32_t *ap = argmax + nc * P * Q; /* the scalar loop's scratch in inference */
        for (int p = 0; p < P; p++) {
            /* Locals: stores to ap (int32_t) could alias the window arrays. */
            const int h0 = win.h0[p], h1 = win.h1[p], hn = win.hn[p];
            int v0 = Q, v1 = Q; /* outputs [v0, v1) done by the vector path */
#ifdef DSE_CPU_HAS_AVX2_CODE
            if (fast && h1 > h0 && hn > 0 && q_first < Q) {
                v0 = q_first;
                v1 = v0 + (fast == 2 ? max3s2_512 : max3s2_avx2)(xp, W, h0, h1 - h0, 2 * q_first - l->pad_w,
                                                                 Q - q_first, yp + p * Q + v0,
                                                                 n->training ? ap + p * Q + v0 : NULL, relu_cut);
            }
#endif
            for (int q = 0; q < Q; q++) {
                if (q == v0) q = v1;
                if (q >= Q) break;
                const int w0 = win.w0[q], w1 = win.w1[q];
                if (h0 >= h1 || w0 >= w1 || hn <= 0 || win.wn[q] <= 0) {
                    yp[p * Q + q] = 0.0f, ap[p * Q + q] = -1;
                    continue;
                }
                /* The first of equal maxima wins, as in Caffe (strict >). */
                int32_t arg = h0 * W + w0;
                float best = xp[arg];
                for (int h = h0; h < h1; h++) {
                    for (int w = w0; w < w1; w++) {
                        const float v = xp[h * W + w];
                        const int more = v > best; /* branch-free: maxima are unpredictable */
                        best = more ? v : best;
                        arg = more ? h * W + w : arg;
                    }
                }
                yp[p * Q + q] = best;
                ap[p * Q + q] = relu_cut && !(best > 0.0f) ? ARG_CUT(arg) : arg; /* past the ReLU's mask: none */
            }
        }
        if (ybuf)
            dse_bf16_pack_rows(ybuf, 1, (int64_t)P * Q, (int64_t)P * Q,
                               (dse_bf16 *)(void *)y->data + plane_at(y, nc), (int64_t)P * Q, (int64_t)P * Q,
                               a->isa);
    }
}

static void maxpool_fwd_part(void *job, int64_t lo, int64_t hi) {
    maxpool_fwd_planes(job, lo, hi, NULL, NULL);
}

/* Each thread's planes, its buffers in its workspace (thread 0's from buf_at): y's plane in
 * float where y is stored in bf16, then x's where x is. */
static void maxpool_fwd16_job(void *job, int t, int nt) {
    const struct pj *a = job;
    const struct dse_tensor *x = a->n->in[0], *y = a->n->out;
    int64_t lo, hi;
    dse_cpu_share((int64_t)x->n * x->c, t, nt, &lo, &hi);
    char *at = (char *)a->cx->ws[t].p + (t ? 0 : a->buf_at);
    float *ybuf = y->bf16 ? (float *)(void *)at : NULL, *xbuf = x->bf16 ? (float *)(void *)(at + a->x_at) : NULL;
    maxpool_fwd_planes(a, lo, hi, ybuf, xbuf);
}

/* One share of planes per thread; windows_of's bounds, in thread 0's workspace, are
 * only read. */
static enum dse_status run_planes(struct dse_cpu_ctx *cx, const struct dse_node *n, int need_windows,
                                  dse_cpu_range_fn fn) {
    struct pj a = { .n = n };
    if (need_windows) {
        enum dse_status st = windows_of(cx, n, &a.win);
        if (st) return st;
    }
    dse_cpu_for(cx, (int64_t)n->in[0]->n * n->in[0]->c, dse_tensor_count(n->in[0]), fn, &a);
    return DSE_OK;
}

enum dse_status dse_cpu_maxpool_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    DSE_ASSERT(n->st.argmax);
    const struct dse_tensor *x = n->in[0], *y = n->out;
    if (!n->out->bf16 && !x->bf16) return run_planes(cx, n, 1, maxpool_fwd_part);
    const size_t win = dse_cpu_al64(3 * (size_t)(y->h + y->w) * sizeof(int)); /* windows_of's, thread 0 */
    const size_t x_at = y->bf16 ? dse_cpu_al64((size_t)y->h * y->w * sizeof(float)) : 0;
    const size_t bufs = x_at + (x->bf16 ? dse_cpu_al64((size_t)x->h * x->w * sizeof(float)) : 0);
    struct pj a = { .n = n, .cx = cx, .buf_at = win, .x_at = x_at, .isa = dse_cpu_bf16_isa() };
    for (int t = 0; t < cx->threads; t++) { /* before windows_of: no reallocation after it */
        void *p;
        enum dse_status st = dse_cpu_ctx_workspace_at(cx, t, (t ? 0 : win) + bufs, &p);
        if (st) return st;
    }
    enum dse_status st = windows_of(cx, n, &a.win);
    if (st) return st;
    dse_cpu_run(cx, maxpool_fwd16_job, &a);
    return DSE_OK;
}

/* dxp[argmax] += dy, window by window in order, over plane nc of max pool n. */
static void scatter_plane(const struct dse_node *n, int64_t nc, float *dxp) {
    const struct dse_tensor *y = n->out;
    const int64_t PQ = (int64_t)y->h * y->w;
    const float *dyp = y->grad + plane_at(y, nc);
    const int32_t *ap = n->st.argmax + nc * PQ;
    for (int64_t j = 0; j < PQ; j++) { /* a cut one adds +0, by a mask: no branch */
        const int32_t at = ap[j];
        if (at == -1) continue; /* an empty window: rare, so a branch well predicted */
        uint32_t g;
        memcpy(&g, &dyp[j], sizeof g);
        g &= at < 0 ? 0u : ~0u; /* the compiler's select of floats was a branch */
        float v;
        memcpy(&v, &g, sizeof v);
        dxp[at & INT32_MAX] += v;
    }
}

static void maxpool_bwd_part(void *arg, int64_t lo, int64_t hi) {
    const struct pj *a = arg;
    const struct dse_tensor *x = a->n->in[0];
    for (int64_t nc = lo; nc < hi; nc++) {
        float *dxp = x->grad + plane_at(x, nc);
        if (a->n->dx_whole) memset(dxp, 0, (size_t)x->h * (size_t)x->w * sizeof *dxp); /* then in L1 */
        scatter_plane(a->n, nc, dxp);
    }
}

void dse_cpu_maxpool_dx_plane(const struct dse_node *n, int64_t nc, float *out) {
    DSE_ASSERT(n->st.argmax && n->training);
    memset(out, 0, (size_t)n->in[0]->h * (size_t)n->in[0]->w * sizeof *out);
    scatter_plane(n, nc, out);
}

/* The argmax of a training forward: an inference forward keeps none (maxpool_fwd_part). */
enum dse_status dse_cpu_maxpool_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    if (!n->in[0]->grad) return DSE_OK;
    if (!n->training) /* before dx_to_writers: the convs' take_dy would assert */
        return dse_cpu_fail(cx, n, DSE_ERR_INTERNAL, "max pooling's backward after an inference forward (no argmax)");
    if (n->dx_to_writers) return DSE_OK; /* the convs writing its input do it (dse_node.dy_pool) */
    return run_planes(cx, n, 0, maxpool_bwd_part);
}

static void avgpool_fwd_part(void *arg, int64_t lo, int64_t hi) {
    const struct pj *a = arg;
    const struct windows win = a->win;
    const struct dse_tensor *x = a->n->in[0], *y = a->n->out;
    const int W = x->w, P = y->h, Q = y->w;
    for (int64_t nc = lo; nc < hi; nc++) {
        const float *xp = x->data + plane_at(x, nc);
        float *yp = y->data + plane_at(y, nc);
        for (int p = 0; p < P; p++) {
            for (int q = 0; q < Q; q++) {
                float sum = 0.0f;
                for (int h = win.h0[p]; h < win.h1[p]; h++)
                    for (int w = win.w0[q]; w < win.w1[q]; w++) sum += xp[h * W + w];
                yp[p * Q + q] = empty(&win, p, q) ? 0.0f : sum / (float)(win.hn[p] * win.wn[q]);
            }
        }
    }
}

enum dse_status dse_cpu_avgpool_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    return run_planes(cx, n, 1, avgpool_fwd_part);
}

static void avgpool_bwd_part(void *arg, int64_t lo, int64_t hi) {
    const struct pj *a = arg;
    const struct windows win = a->win;
    const struct dse_tensor *x = a->n->in[0], *y = a->n->out;
    const int W = x->w, P = y->h, Q = y->w;
    for (int64_t nc = lo; nc < hi; nc++) {
        float *dxp = x->grad + plane_at(x, nc);
        const float *dyp = y->grad + plane_at(y, nc);
        for (int p = 0; p < P; p++) {
            for (int q = 0; q < Q; q++) {
                if (empty(&win, p, q)) continue;
                const float g = dyp[p * Q + q] / (float)(win.hn[p] * win.wn[q]);
                for (int h = win.h0[p]; h < win.h1[p]; h++)
                    for (int w = win.w0[q]; w < win.w1[q]; w++) dxp[h * W + w] += g;
            }
        }
    }
}

enum dse_status dse_cpu_avgpool_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    return n->in[0]->grad ? run_planes(cx, n, 1, avgpool_bwd_part) : DSE_OK;
}
