/* eltwise.c: CPU elementwise ops, forward and backward: relu, dropout (inverted: kept
 * values scaled by 1/(1-p) in training, identity in inference), eltwise add of N inputs
 * and Caffe's per-channel scale. x, y: [N, C, H, W], each with its own stride_n.
 * Gradient rule (accumulate; overwrite in place): engine/engine.h, struct dse_node. */
#include "engine/engine.h"

#include <string.h>

#include "engine/cpu/cpu_impl.h"
#include "engine/kernels_shared.h" /* dse_pcg32_advance, the GPU dropout's too */

/* Elementwise loops run over blocks of one image, so views (stride_n > c*h*w) need no
 * special case and threads get equal shares whatever N is. */
#define BLOCK 8192

struct blocks {
    int64_t img, per_img, count; /* values per image, blocks per image, blocks */
};

static struct blocks blocks_of(const struct dse_tensor *t) {
    struct blocks b;
    b.img = dse_tensor_image(t);
    b.per_img = (b.img + BLOCK - 1) / BLOCK;
    b.count = b.per_img * t->n;
    return b;
}

/* Image i and value range [*j0, *j1) of block k. */
static int64_t block_at(const struct blocks *b, int64_t k, int64_t *j0, int64_t *j1) {
    *j0 = (k % b->per_img) * BLOCK;
    *j1 = *j0 + BLOCK < b->img ? *j0 + BLOCK : b->img;
    return k / b->per_img;
}

/* ---- relu ------------------------------------------------------------------------ */

/* What a parallel elementwise loop needs: the node, its blocks and a few constants. */
struct ew {
    const struct dse_node *n;
    struct blocks          b;
    float                  scale;
    const uint8_t         *mask;
    int                    in_place, masked, t;
    uint8_t               *mask_out;  /* dropout forward: the mask it draws, */
    struct dse_pcg32       rng;       /*   from this generator, */
    uint32_t               threshold; /*   keeping draws >= this; */
    uint64_t               mult4, plus4; /* the generator's 4-step map (draw_mask) */
};

static void run_blocks(struct dse_cpu_ctx *cx, struct ew *a, int64_t work, dse_cpu_range_fn fn) {
    dse_cpu_for(cx, a->b.count, work, fn, a);
}

static void relu_fwd_part(void *p, int64_t lo, int64_t hi) {
    const struct ew *a = p;
    const struct dse_tensor *x = a->n->in[0], *y = a->n->out;
    for (int64_t k = lo; k < hi; k++) {
        int64_t j0, j1, i = block_at(&a->b, k, &j0, &j1);
        const float *xi = x->data + i * x->stride_n;
        float *yi = y->data + i * y->stride_n;
        for (int64_t j = j0; j < j1; j++) yi[j] = dse_cpu_relu(xi[j]);
    }
}

enum dse_status dse_cpu_relu_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    struct ew a = { .n = n, .b = blocks_of(n->in[0]) };
    run_blocks(cx, &a, dse_tensor_count(n->in[0]), relu_fwd_part);
    return DSE_OK;
}

/* Uses y, not x: y > 0 exactly where x > 0, and in place x is gone. */
static void relu_bwd_part(void *p, int64_t lo, int64_t hi) {
    const struct ew *a = p;
    const struct dse_tensor *x = a->n->in[0], *y = a->n->out;
    for (int64_t k = lo; k < hi; k++) {
        int64_t j0, j1, i = block_at(&a->b, k, &j0, &j1);
        const float *yi = y->data + i * y->stride_n, *dyi = y->grad + i * y->stride_n;
        float *dxi = x->grad + i * x->stride_n;
        /* Loads outside the conditional, so the compiler may vectorize the select. */
        if (a->in_place) /* dxi == dyi */
            dse_cpu_relu_mask(yi + j0, dxi + j0, j1 - j0);
        else
            for (int64_t j = j0; j < j1; j++) {
                const float g = dyi[j], d = dxi[j];
                dxi[j] = d + (yi[j] > 0.0f ? g : 0.0f);
            }
    }
}

enum dse_status dse_cpu_relu_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    if (!n->in[0]->grad) return DSE_OK;
    struct ew a = { .n = n, .b = blocks_of(n->in[0]), .in_place = dse_cpu_in_place(n) };
    run_blocks(cx, &a, dse_tensor_count(n->in[0]), relu_bwd_part);
    return DSE_OK;
}

/* ---- dropout --------------------------------------------------------------------- */

static float keep_scale(const struct dse_node *n) { return 1.0f / (1.0f - n->layer->dropout_ratio); }

/* v where the mask byte m is 1, +0.0f where it is 0: `m ? v : 0.0f` as a bitwise AND, which
 * GCC vectorizes; the select compiled to a branch on a random mask (half mispredicted: v1.0's
 * drop9 took 7 ms forward and 5 ms backward at batch 16). */
static inline float kept(float v, uint8_t m) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u &= 0u - (uint32_t)m;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* m[j] = (draw j of r >= threshold) for j < n, r left past them: the draws of dse_pcg32_next
 * in order, four lanes at a time (lane l steps its state by the 4-step map s -> mult4 s +
 * plus4, so four multiply chains overlap: one chain took 5 ns a value, v1.0's drop9 7 ms
 * a batch of 16). */
static void draw_mask(struct dse_pcg32 *r, uint8_t *m, int64_t n, uint32_t threshold, uint64_t mult4, uint64_t plus4) {
    int64_t j = 0;
    if (n >= 8) {
        uint64_t s[4] = { r->state };
        for (int l = 1; l < 4; l++) s[l] = s[l - 1] * DSE_PCG32_MULT + r->inc;
        for (; j + 4 <= n; j += 4)
            for (int l = 0; l < 4; l++) {
                m[j + l] = dse_pcg32_output(s[l]) >= threshold;
                s[l] = s[l] * mult4 + plus4;
            }
        r->state = s[0]; /* lane 0's next state: draw j's */
    }
    for (; j < n; j++) m[j] = dse_pcg32_next(r) >= threshold;
}

/* Value v of the batch (v = image * values per image + j) is kept when draw v of the
 * sequence starting at rng is >= threshold: each share of blocks (consecutive values)
 * starts its own copy of the generator at its first value (dse_pcg32_advance), so the
 * mask is the one a single thread drawing in index order makes, whatever the threads. */
static void dropout_fwd_part(void *p, int64_t lo, int64_t hi) {
    const struct ew *a = p;
    const struct dse_tensor *x = a->n->in[0], *y = a->n->out;
    const float scale = a->scale;
    struct dse_pcg32 r = a->rng;
    int64_t j0, j1, i = block_at(&a->b, lo, &j0, &j1);
    r.state = dse_pcg32_advance(r.state, r.inc, (uint64_t)(i * a->b.img + j0));
    for (int64_t k = lo; k < hi; k++) {
        i = block_at(&a->b, k, &j0, &j1);
        const float *xi = x->data + i * x->stride_n;
        uint8_t *mi = a->mask_out + i * a->b.img;
        float *yi = y->data + i * y->stride_n;
        draw_mask(&r, mi + j0, j1 - j0, a->threshold, a->mult4, a->plus4);
        for (int64_t j = j0; j < j1; j++) {
            const float v = xi[j] * scale;
            yi[j] = kept(v, mi[j]);
        }
    }
}

/* Training draws one PCG32 number per value, in index order (shared among the threads
 * as dropout_fwd_part says), so the mask depends on the seed and nothing else (not the
 * thread count). A value is kept when its draw is >= p * 2^32. */
enum dse_status dse_cpu_dropout_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const struct blocks b = blocks_of(x);
    const float p = n->layer->dropout_ratio;
    if (!n->training || p == 0.0f) {
        if (!dse_cpu_in_place(n))
            for (int i = 0; i < x->n; i++)
                memcpy(y->data + i * y->stride_n, x->data + i * x->stride_n, (size_t)b.img * sizeof(float));
        return DSE_OK;
    }
    DSE_ASSERT(n->st.mask);
    const int64_t count = b.img * x->n;
    struct ew a = { .n = n, .b = b, .scale = keep_scale(n), .mask_out = n->st.mask, .rng = cx->rng,
                    .threshold = (uint32_t)((double)p * 4294967296.0) };
    dse_pcg32_jump(a.rng.inc, 4, &a.mult4, &a.plus4);
    /* A data-parallel rank's share draws the global batch's mask at the share's place, and
     * the generator moves past the whole global batch, as one process's would. */
    if (cx->dist_batch) a.rng.state = dse_pcg32_advance(a.rng.state, a.rng.inc, (uint64_t)(cx->dist_first * b.img));
    run_blocks(cx, &a, count, dropout_fwd_part);
    cx->rng.state = dse_pcg32_advance(cx->rng.state, cx->rng.inc,
                                      (uint64_t)(cx->dist_batch ? cx->dist_batch * b.img : count));
    return DSE_OK;
}

static void dropout_bwd_part(void *p, int64_t lo, int64_t hi) {
    const struct ew *a = p;
    const struct dse_tensor *x = a->n->in[0], *y = a->n->out;
    const float scale = a->scale;
    for (int64_t k = lo; k < hi; k++) {
        int64_t j0, j1, i = block_at(&a->b, k, &j0, &j1);
        const float *dyi = y->grad + i * y->stride_n;
        float *dxi = x->grad + i * x->stride_n;
        const uint8_t *mi = a->masked ? a->mask + i * a->b.img : NULL;
        if (!a->masked)
            for (int64_t j = j0; j < j1; j++) dxi[j] += dyi[j];
        else if (a->in_place)
            for (int64_t j = j0; j < j1; j++) {
                const float g = dyi[j] * scale;
                dxi[j] = kept(g, mi[j]);
            }
        else
            for (int64_t j = j0; j < j1; j++) {
                const float g = dyi[j] * scale, d = dxi[j];
                dxi[j] = d + kept(g, mi[j]);
            }
    }
}

enum dse_status dse_cpu_dropout_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0];
    if (!x->grad) return DSE_OK;
    const int in_place = dse_cpu_in_place(n);
    const int masked = n->training && n->layer->dropout_ratio != 0.0f;
    if (in_place && !masked) return DSE_OK; /* identity */
    struct ew a = { .n = n, .b = blocks_of(x), .scale = masked ? keep_scale(n) : 1.0f, .mask = n->st.mask,
                    .in_place = in_place, .masked = masked };
    run_blocks(cx, &a, dse_tensor_count(x), dropout_bwd_part);
    return DSE_OK;
}

/* ---- eltwise add: y = in[0] + in[1] + ... ----------------------------------------- */

static void add_fwd_part(void *p, int64_t lo, int64_t hi) {
    const struct ew *e = p;
    const struct dse_node *n = e->n;
    const struct dse_tensor *y = n->out;
    for (int64_t k = lo; k < hi; k++) {
        int64_t j0, j1, i = block_at(&e->b, k, &j0, &j1);
        float *yi = y->data + i * y->stride_n;
        const float *a = n->in[0]->data + i * n->in[0]->stride_n;
        const float *c = n->in[1]->data + i * n->in[1]->stride_n;
        for (int64_t j = j0; j < j1; j++) yi[j] = a[j] + c[j];
        for (int t = 2; t < n->n_in; t++) {
            const float *d = n->in[t]->data + i * n->in[t]->stride_n;
            for (int64_t j = j0; j < j1; j++) yi[j] += d[j];
        }
    }
}

enum dse_status dse_cpu_eltwise_add_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    struct ew a = { .n = n, .b = blocks_of(n->out) };
    run_blocks(cx, &a, dse_tensor_count(n->out) * n->n_in, add_fwd_part);
    return DSE_OK;
}

static void add_bwd_part(void *p, int64_t lo, int64_t hi) {
    const struct ew *a = p;
    const struct dse_tensor *x = a->n->in[a->t], *y = a->n->out;
    for (int64_t k = lo; k < hi; k++) {
        int64_t j0, j1, i = block_at(&a->b, k, &j0, &j1);
        const float *dyi = y->grad + i * y->stride_n;
        float *dxi = x->grad + i * x->stride_n;
        for (int64_t j = j0; j < j1; j++) dxi[j] += dyi[j];
    }
}

enum dse_status dse_cpu_eltwise_add_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    struct ew a = { .n = n, .b = blocks_of(n->out) };
    for (a.t = 0; a.t < n->n_in; a.t++)
        if (n->in[a.t]->grad) run_blocks(cx, &a, dse_tensor_count(n->out), add_bwd_part);
    return DSE_OK;
}

/* ---- scale: y = gamma[c] x (+ beta[c]) --------------------------------------------- */

enum dse_status dse_cpu_scale_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int C = x->c;
    const int64_t HW = (int64_t)x->h * x->w;
    const float *g = n->weight->data, *be = n->bias ? n->bias->data : NULL;
    float *saved = dse_cpu_in_place(n) ? n->st.saved : NULL; /* x, for backward */
    DSE_ASSERT(!dse_cpu_in_place(n) || saved);
    for (int64_t nc = 0; nc < (int64_t)x->n * C; nc++) {
        const int i = (int)(nc / C), c = (int)(nc % C);
        const float *xp = x->data + i * x->stride_n + c * HW;
        float *yp = y->data + i * y->stride_n + c * HW;
        if (saved) memcpy(saved + nc * HW, xp, (size_t)HW * sizeof(float));
        const float gc = g[c], bc = be ? be[c] : 0.0f;
        for (int64_t j = 0; j < HW; j++) yp[j] = xp[j] * gc + bc;
    }
    return DSE_OK;
}

enum dse_status dse_cpu_scale_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int C = x->c, N = x->n, in_place = dse_cpu_in_place(n);
    const int64_t HW = (int64_t)x->h * x->w;
    const float *g = n->weight->data;
    float *dg = n->weight->grad, *db = n->bias ? n->bias->grad : NULL;
    /* Parameter grads first: in place, dx overwrites dy. The bias gradient is summed by the
     * batch's slices, added by the slice tree (dse_cpu_db_slices: as conv's). */
    if (dg || db) {
        const struct dse_cpu_slices sl = dse_cpu_slices_of(cx, N);
        double part[DSE_SLICES_MAX];
        for (int c = 0; c < C; c++) {
            double sg = 0.0;
            for (int sc = 0; sc < sl.count; sc++) {
                int64_t i0, i1;
                part[sc] = 0.0;
                dse_cpu_slice(&sl, sc, &i0, &i1);
                for (int64_t i = i0; i < i1; i++) {
                    const float *dyp = y->grad + i * y->stride_n + c * HW;
                    const float *xp = in_place ? n->st.saved + ((int64_t)i * C + c) * HW
                                               : x->data + i * x->stride_n + c * HW;
                    for (int64_t j = 0; j < HW; j++) sg += (double)dyp[j] * xp[j], part[sc] += dyp[j];
                }
            }
            if (dg) dg[c] += (float)sg;
            if (db) dse_cpu_db_slices(n, &sl, db, C, c, part);
        }
    }
    if (!x->grad) return DSE_OK;
    for (int64_t nc = 0; nc < (int64_t)N * C; nc++) {
        const int i = (int)(nc / C), c = (int)(nc % C);
        const float *dyp = y->grad + i * y->stride_n + c * HW;
        float *dxp = x->grad + i * x->stride_n + c * HW;
        if (in_place)
            for (int64_t j = 0; j < HW; j++) dxp[j] = dyp[j] * g[c];
        else
            for (int64_t j = 0; j < HW; j++) dxp[j] += dyp[j] * g[c];
    }
    return DSE_OK;
}
