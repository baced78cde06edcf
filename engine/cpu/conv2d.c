/* conv2d.c: CPU convolution, forward and backward, three strategies on OpenBLAS sgemm and
 * one on our own kernels (engine.h: enum dse_cpu_conv_algo), and the per-shape choice
 * between them:
 *  GEMM_BATCH  im2col over a chunk of the mini-batch, one sgemm per group (Caffe con
 *              Troll's batched lowering: fewer, larger GEMMs; wins on small maps);
 *  GEMM_IMAGE  Caffe's way, image by image; a 1x1 stride-1 unpadded conv is an sgemm
 *              straight on the input, and its data gradient an sgemm straight into it.
 *  WINOGRAD    F(2x2, 3x3) (Lavin & Gray 2016) for 3x3 stride-1 undilated ungrouped convs,
 *              batched: 16 sgemms per chunk of the mini-batch, forward, data gradient
 *              and weight gradient. Other shapes: never timed or chosen; forcing it runs GEMM_BATCH.
 *  DIRECT      mm.c's AVX-512 / AVX2 kernels straight on the planes, for 1x1 and 3x3
 *              stride-1 convs (section DIRECT below); elsewhere, or on a CPU without AVX2
 *              + FMA, like Winograd off its shapes.
 * Shapes: x [N, C, H, W]  w [K, C/G, R, S]  b [K]  y [N, K, P, Q]; per group g the
 * lowered input is col [C/G*R*S, cols] with rows (c, r, s) and columns (image, p, q). */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "engine/cpu/bf16_impl.h"

struct shape {
    int     N, C, H, W, K, R, S, P, Q;
    int     sh, sw, ph, pw, dh, dw, G;
    int     Cg, Kg;
    int64_t HW, PQ, RS, CRSg; /* CRSg: rows of one group's lowered input */
    int     is_1x1;           /* 1x1, stride 1, no pad: the input is already lowered */
};

static struct shape shape_of(const struct dse_node *n) {
    const struct dse_layer *l = n->layer;
    const struct dse_tensor *x = n->in[0], *y = n->out;
    struct shape s = {
        .N = x->n, .C = x->c, .H = x->h, .W = x->w, .K = y->c, .R = l->kernel_h, .S = l->kernel_w,
        .P = y->h, .Q = y->w, .sh = l->stride_h, .sw = l->stride_w, .ph = l->pad_h, .pw = l->pad_w,
        .dh = l->dilation_h, .dw = l->dilation_w, .G = l->groups,
    };
    s.Cg = s.C / s.G, s.Kg = s.K / s.G;
    s.HW = (int64_t)s.H * s.W, s.PQ = (int64_t)s.P * s.Q, s.RS = (int64_t)s.R * s.S;
    s.CRSg = (int64_t)s.Cg * s.RS;
    s.is_1x1 = s.R == 1 && s.S == 1 && s.sh == 1 && s.sw == 1 && s.ph == 0 && s.pw == 0;
    return s;
}

/* Output columns q in [*lo, *hi) read input column q*sw + off inside [0, W). */
static void valid_cols(const struct shape *s, int off, int *lo, int *hi) {
    int a = off >= 0 ? 0 : (-off + s->sw - 1) / s->sw;
    int b = s->W - 1 - off < 0 ? 0 : (s->W - 1 - off) / s->sw + 1;
    if (b > s->Q) b = s->Q;
    if (a > b) a = b;
    *lo = a, *hi = b;
}

/* Lower output rows [p0, p1) of images [0, nb) of x (image stride sx) into col
 * [C*R*S, nb*(p1-p0)*Q]: image i's columns are (p - p0, q). Each thread lowers its own
 * share of the batch into its own workspace (section "threads" below); GEMM_IMAGE lowers
 * an image a block of rows at a time (image_rows). */
static void im2col(const struct shape *s, const float *x, int64_t sx, int nb, int p0, int p1, float *col) {
    const int64_t rows = (int64_t)s->C * s->RS, seg = (int64_t)(p1 - p0) * s->Q, ld = nb * seg;
    const int isa = s->sw == 2 ? dse_cpu_mm_isa() : DSE_CPU_MM_NONE; /* once a call: it reads the environment */
    for (int64_t row = 0; row < rows; row++) {
        const int c = (int)(row / s->RS), r = (int)(row / s->S % s->R), t = (int)(row % s->S);
        const int off = t * s->dw - s->pw;
        int lo, hi;
        valid_cols(s, off, &lo, &hi);
        for (int i = 0; i < nb; i++) {
            const float *xc = x + i * sx + c * s->HW;
            float *d = col + row * ld + i * seg;
            if (s->is_1x1) { /* P = H, Q = W */
                memcpy(d, xc + (int64_t)p0 * s->Q, (size_t)seg * sizeof(float));
                continue;
            }
            for (int p = p0; p < p1; p++, d += s->Q) {
                const int ih = p * s->sh - s->ph + r * s->dh;
                if (ih < 0 || ih >= s->H) {
                    memset(d, 0, (size_t)s->Q * sizeof(float));
                    continue;
                }
                const float *xr = xc + (int64_t)ih * s->W; /* input column q*sw + off */
                for (int q = 0; q < lo; q++) d[q] = 0.0f;
                if (s->sw == 1)
                    memcpy(d + lo, xr + lo + off, (size_t)(hi - lo) * sizeof(float));
                else if (s->sw == 2 && hi > lo)
                    dse_cpu_take2(d + lo, xr + 2 * lo + off, hi - lo, isa);
                else
                    for (int q = lo; q < hi; q++) d[q] = xr[q * s->sw + off];
                for (int q = hi; q < s->Q; q++) d[q] = 0.0f;
            }
        }
    }
}

/* dx += col2im(col) for output rows [p0, p1) of images [0, nb) (col laid out as im2col
 * makes it), each dx value summed in a fixed order. */
static void col2im_add(const struct shape *s, const float *col, int nb, int p0, int p1, float *dx, int64_t sx) {
    const int64_t seg = (int64_t)(p1 - p0) * s->Q, ld = nb * seg;
    for (int c = 0; c < s->C; c++) {
        for (int r = 0; r < s->R; r++) {
            for (int t = 0; t < s->S; t++) {
                const int64_t row = (c * (int64_t)s->R + r) * s->S + t;
                const int off = t * s->dw - s->pw;
                int lo, hi;
                valid_cols(s, off, &lo, &hi);
                for (int i = 0; i < nb; i++) {
                    const float *src = col + row * ld + i * seg;
                    float *dxc = dx + i * sx + c * s->HW;
                    for (int p = p0; p < p1; p++, src += s->Q) {
                        const int ih = p * s->sh - s->ph + r * s->dh;
                        if (ih < 0 || ih >= s->H) continue;
                        float *dr = dxc + (int64_t)ih * s->W;
                        if (s->sw == 1)
                            for (int q = lo; q < hi; q++) dr[q + off] += src[q];
                        else
                            for (int q = lo; q < hi; q++) dr[q * s->sw + off] += src[q];
                    }
                }
            }
        }
    }
}

/* db[k] += sum over images and pixels of dy[., k, ., .], channels shared among the threads:
 * each slice of the batch (engine/slices.h) summed in double, image after image, and the
 * slices' sums added by the slice tree (dse_cpu_db_slices), the order GEMM_IMAGE's threads
 * and data-parallel ranks add in too, whatever their number. */
struct bias_job {
    const struct dse_node   *n;
    const struct shape      *s;
    const struct dse_tensor *y;
    float                   *db;
    struct dse_cpu_slices    sl;
};

static void bias_part(void *p, int64_t lo, int64_t hi) {
    const struct bias_job *j = p;
    double part[4][DSE_SLICES_MAX];
    const int isa = dse_cpu_mm_isa(); /* once a range: it reads the environment */
    for (int64_t k = lo; k < hi; k += 4) { /* four channels at once (dse_cpu_sum_channels) */
        const int nk = hi - k < 4 ? (int)(hi - k) : 4;
        dse_cpu_slice_sums(&j->sl, j->y->grad, j->y->stride_n, j->s->PQ, k, nk, isa, part);
        for (int c = 0; c < nk; c++) dse_cpu_db_slices(j->n, &j->sl, j->db, j->s->K, k + c, part[c]);
    }
}

static void bias_grad(struct dse_cpu_ctx *cx, const struct dse_node *n, const struct shape *s,
                      const struct dse_tensor *y, float *db) {
    struct bias_job j = { .n = n, .s = s, .y = y, .db = db, .sl = dse_cpu_slices_of(cx, s->N) };
    dse_cpu_for(cx, s->K, (int64_t)s->N * s->K * s->PQ, bias_part, &j);
}

/* A fused ReLU (dse_node.relu_out), by the relu kernels' rules (cpu_impl.h). */
static void relu_inplace(float *y, int64_t n) {
    for (int64_t e = 0; e < n; e++) y[e] = dse_cpu_relu(y[e]);
}

/* dy masked by y > 0 in place, images shared among the threads (strategies other than
 * GEMM_IMAGE, which masks image by image). */
static void mask_part(void *p, int64_t lo, int64_t hi) {
    const struct bias_job *j = p;
    for (int64_t i = lo; i < hi; i++)
        if (j->y->bf16) /* stored in bf16 (a bf16 conv's output) */
            dse_cpu_relu_mask16((const uint16_t *)(const void *)j->y->data + i * j->y->stride_n,
                                j->y->grad + i * j->y->stride_n, j->s->K * j->s->PQ);
        else dse_cpu_relu_mask(j->y->data + i * j->y->stride_n, j->y->grad + i * j->y->stride_n, j->s->K * j->s->PQ);
}

static void mask_grad(struct dse_cpu_ctx *cx, const struct shape *s, const struct dse_tensor *y) {
    struct bias_job j = { .s = s, .y = y };
    dse_cpu_for(cx, s->N, (int64_t)s->N * s->K * s->PQ, mask_part, &j);
}

/* ---- threads ----------------------------------------------------------------------- */
/* Forward: thread t takes a contiguous share of the images (dse_cpu_share) and runs the
 * whole strategy on it with OpenBLAS on one thread, in its own workspace; with fewer
 * images than DSE_SLICES (inference at batch 1) a forward pass without groups also cuts each
 * image's output rows or its output channels into blocks (fwd_split), the same blocks
 * whatever the threads, so that
 * every sgemm is the same call with 1 or 16 threads: its bits then cannot depend on how the
 * BLAS's kernels treat a matrix's edges (issue #31: OpenBLAS's Prescott kernels give a row
 * other bits in a call of fewer rows). An image's output does not depend on the others.
 * Backward goes by the batch's slices (engine/slices.h): thread t takes a contiguous run of
 * them (dse_cpu_share over the slices) and sums each slice's weight gradient into a buffer
 * of its own (the first slice's is dw itself), adding two as soon as the slice tree adds
 * them (sg_thread); the threads' blocks are then added where the tree adds them
 * (sg_finish). Each slice is lowered in chunks that do not depend on the threads either,
 * so a weight gradient has the same bits with any number of threads. */

struct sg;
struct cj;
/* A forward pass's work: images [i0, i1), output channels [k0, k1), in chunks from i0. */
typedef void (*range_fn)(const struct cj *j, int t, int64_t i0, int64_t i1, int64_t k0, int64_t k1);
struct cj {
    struct dse_cpu_ctx *cx;
    struct dse_node    *n;
    const struct shape *s;
    int                 chunk;    /* images lowered at once */
    int                 kblocks;  /* forward: blocks of [0, range_k) (range_part, fwd_split) */
    int                 by_rows;  /* GEMM_IMAGE forward: the blocks are of output rows, not
                                     channels */
    int64_t             dw_off;   /* floats into a thread's workspace where its slice tree goes */
    int64_t             db_off;   /* GEMM_IMAGE: where its slices' bias-gradient sums go,
                                     [slices][K] doubles, if sum_db; Winograd's weight
                                     gradient: where a slice's dU goes */
    int                 sum_db;
    int                 relu;     /* forward: ReLU the output; GEMM_IMAGE backward: mask dy */
    const struct sg    *sg;       /* the batch's slices (backward: and the weight gradient's) */
    range_fn            range;    /* forward: its work (range_part) */
    int64_t             range_k;  /*   over output channels [0, range_k) */
    /* Winograd */
    const struct wgeo  *g;
    const float        *U, *in, *bias, *w;
    float              *out;
    int64_t             sx, sy, nU;
    int                 N, acc;
    int                 isa;      /* DIRECT: mm.c's instruction set */
    int64_t             dyt_off, dyp_off; /* DIRECT 3x3 backward: where a thread's workspace holds
                                             the chunk's dy pixel-major, and one image's dy padded */
};

/* Each thread's workspace at least `bytes`; thread 0's `extra0` more in front. */
static enum dse_status reserve(struct dse_cpu_ctx *cx, size_t bytes, size_t extra0) {
    for (int t = 0; t < cx->threads; t++) {
        void *p;
        enum dse_status st = dse_cpu_ctx_workspace_at(cx, t, bytes + (t ? 0 : extra0), &p);
        if (st) return st;
    }
    return DSE_OK;
}

static float *ws_of(const struct dse_cpu_ctx *cx, int t) { return cx->ws[t].p; }

/* A weight gradient summed by slices. Thread t's workspace holds, from `off` floats on
 * (after its strategy's own scratch), its slice tree and `depth` buffers of `count` floats;
 * the first slice of the batch (of the rank's run) goes into dst. */
struct sg {
    struct dse_cpu_slices sl;
    float                *dst;   /* dw, or NULL: no weight gradient */
    int64_t               n;     /* floats of a gradient: what is zeroed and added */
    int64_t               count; /* floats between buffers (n rounded up to 16) */
    int64_t               off;
    int                   depth;
};

#define SG_TREE_FLOATS (((int64_t)sizeof(struct dse_slice_tree) / (int64_t)sizeof(float) + 15) / 16 * 16)

/* Plan g for a batch of N, with a weight gradient (weights 1; 0: the slices only) of
 * buffers of count floats at off; returns the floats each thread's workspace needs past
 * off. The caller then sets g->dst, the first slice's buffer. */
static int64_t sg_plan(const struct dse_cpu_ctx *cx, struct sg *g, int N, int weights, int64_t count, int64_t off) {
    *g = (struct sg){ .sl = dse_cpu_slices_of(cx, N), .n = count, .count = (count + 15) / 16 * 16, .off = off };
    if (!weights) return 0;
    for (int t = 0; t < cx->threads; t++) {
        int64_t k0, k1;
        int depth = 0;
        dse_cpu_share(g->sl.count, t, cx->threads, &k0, &k1);
        if (k0 < k1) dse_slice_blocks(g->sl.total, g->sl.first + (int)k0, g->sl.first + (int)k1, NULL, &depth);
        g->depth = depth > g->depth ? depth : g->depth;
    }
    return SG_TREE_FLOATS + g->depth * g->count;
}

static struct dse_slice_tree *sg_tree(const struct dse_cpu_ctx *cx, const struct sg *g, int t) {
    return (struct dse_slice_tree *)(ws_of(cx, t) + g->off);
}

/* The images of each slice of thread t's run go to fn(j, t, slice, i0, i1, buf): buf (NULL
 * without a weight gradient) is the slice's zeroed gradient, which fn adds the images' to;
 * the buffers are then added by the slice tree as far as this run reaches. */
typedef void (*sg_fn)(const struct cj *j, int t, int slice, int64_t i0, int64_t i1, float *buf);

static void sg_thread(const struct cj *j, int t, int nt, sg_fn fn) {
    const struct sg *g = j->sg;
    int64_t k0, k1;
    dse_cpu_share(g->sl.count, t, nt, &k0, &k1);
    struct dse_slice_tree *tr = g->dst ? sg_tree(j->cx, g, t) : NULL;
    float *pool[DSE_SLICE_STACK], *freed[DSE_SLICE_STACK];
    int np = 0;
    if (tr) {
        dse_slice_tree_init(tr, g->sl.total);
        for (int b = g->depth - 1; b >= 0; b--) pool[np++] = ws_of(j->cx, t) + g->off + SG_TREE_FLOATS + b * g->count;
    }
    for (int64_t k = k0; k < k1; k++) {
        int64_t i0, i1;
        dse_cpu_slice(&g->sl, (int)k, &i0, &i1);
        float *buf = NULL;
        if (tr) {
            DSE_ASSERT(k == 0 || np > 0);
            buf = k == 0 ? g->dst : pool[--np];
            if (k) memset(buf, 0, (size_t)g->n * sizeof(float));
        }
        fn(j, t, (int)k, i0, i1, buf);
        if (!tr) continue;
        int nf = 0;
        dse_slice_push(tr, 0, g->sl.first + (int)k, buf, 0, g->n, freed, &nf); /* dst has n floats, no more */
        for (int f = 0; f < nf; f++) pool[np++] = freed[f];
    }
}

/* The threads' blocks added where the slice tree adds them, elements shared among the
 * threads; the blocks that are left are one, in dst, unless this is one of several ranks
 * whose run of slices is not a whole subtree: then the others go to n's dw_blocks
 * (engine.h), which the ranks add where the tree does. */
struct sg_red {
    const struct dse_cpu_ctx *cx;
    const struct sg          *g;
};

static void sg_merge(const struct sg_red *r, struct dse_slice_tree *all, int64_t lo, int64_t hi) {
    dse_slice_tree_init(all, r->g->sl.total);
    for (int t = 0; t < r->cx->threads; t++) {
        const struct dse_slice_tree *tr = sg_tree(r->cx, r->g, t);
        for (int b = 0; b < tr->n; b++) dse_slice_push(all, tr->b[b].level, tr->b[b].index, tr->b[b].buf, lo, hi, NULL, NULL);
    }
}

static void sg_reduce_part(void *p, int64_t lo, int64_t hi) {
    struct dse_slice_tree all;
    sg_merge(p, &all, lo, hi);
}

static void sg_finish(struct dse_cpu_ctx *cx, const struct sg *g, const struct dse_node *n) {
    struct sg_red r = { .cx = cx, .g = g };
    struct dse_slice_tree fin;
    if (cx->threads > 1) dse_cpu_for(cx, g->n, g->n * cx->threads, sg_reduce_part, &r);
    sg_merge(&r, &fin, 0, 0); /* the same blocks, no additions: where the sums are */
    DSE_ASSERT(fin.n >= 1 && fin.b[0].buf == g->dst && (fin.n == 1 || n->dw_blocks));
    for (int b = 1; b < fin.n; b++)
        memcpy(n->dw_blocks + (b - 1) * g->n, fin.b[b].buf, (size_t)g->n * sizeof(float));
}

/* A forward pass's blocks below DSE_SLICES images (fwd_split): at least FWD_MIN_COLS output
 * pixels a block of rows, FWD_MIN_ROWS output channels a block of channels. A block's sgemm
 * packs its whole other operand again: a row block the filters (small), a channel block the
 * lowered input (large), so rows are cut where the image has pixels enough. */
#define FWD_MIN_COLS 128
#define FWD_MIN_ROWS 64

/* The largest power of two at most b (at least 1): blocks that 2, 4, 8 and 16 threads share
 * evenly. */
static int pow2_floor(int64_t b) {
    int p = 1;
    while (2 * (int64_t)p <= b && p < DSE_SLICES) p *= 2;
    return p;
}

/* j's forward blocks from the whole batch (of every rank) and the shape alone, never from
 * the threads: none from DSE_SLICES images on (the slices are the threads' work); below,
 * enough for DSE_SLICES (slice, block) pairs, of output rows where rows_ok and the image has
 * 2 * FWD_MIN_COLS output pixels, else of the K output channels. */
static void fwd_split(struct cj *j, const struct sg *g, int64_t K, int64_t P, int64_t Q, int groups, int rows_ok) {
    const int64_t n = g->sl.n, want = (DSE_SLICES + n - 1) / n;
    j->kblocks = 1, j->by_rows = 0, j->range_k = K;
    if (groups != 1 || n >= DSE_SLICES) return;
    if (rows_ok && P * Q >= 2 * FWD_MIN_COLS) {
        const int64_t most = P * Q / FWD_MIN_COLS < P ? P * Q / FWD_MIN_COLS : P;
        j->by_rows = 1, j->range_k = P, j->kblocks = pow2_floor(most < want ? most : want);
    } else {
        j->kblocks = pow2_floor(K / FWD_MIN_ROWS < want ? K / FWD_MIN_ROWS : want);
    }
}

/* A forward pass (j->range) by slices, so that every sgemm sees the same images whatever the
 * threads (OpenBLAS's result for a column may depend on how many columns it is given), and
 * by j->kblocks blocks of output channels: thread t takes a share of the (block, slice)
 * pairs, block after block. */
static void range_part(void *p, int t, int nt) {
    const struct cj *j = p;
    const int S = j->sg->sl.count;
    int64_t a0, a1;
    dse_cpu_share((int64_t)S * j->kblocks, t, nt, &a0, &a1);
    for (int64_t a = a0; a < a1; a++) {
        int64_t i0, i1, k0, k1;
        dse_cpu_slice(&j->sg->sl, (int)(a % S), &i0, &i1);
        dse_cpu_share(j->range_k, (int)(a / S), j->kblocks, &k0, &k1);
        j->range(j, t, i0, i1, k0, k1);
    }
}

/* Number of images GEMM_BATCH lowers at once: col + tmp within one of DSE_SLICES shares
 * of the ctx's limit (not the threads': the chunks must not depend on them) and within
 * GEMM_BLOCK_BYTES, so that what im2col writes is still in the
 * core's L2 when the sgemm reads it (and tmp when it is copied out), at least one image.
 * bench_conv's layers alternating in one process, SqueezeNet-FMNIST batch 128 and v1.0
 * batch 16 on 2 EPYC (Zen 4) cores: against chunks of the whole share, 512 KiB made
 * GEMM_BATCH 10-50% faster on the 1x1 convs and most 3x3s (summed over the layers, forward
 * and backward: FMNIST 325 -> 257 ms at 1 MiB, v1.0 713 -> 590 ms at 512 KiB); 512 KiB beat
 * 1 MiB by up to 10% on the 1x1 convs, 256 KiB and 2 MiB were slower. */
#define GEMM_BLOCK_BYTES ((size_t)512 << 10)

static int batch_chunk(const struct dse_cpu_ctx *cx, const struct shape *s) {
    const double per_image = (double)((int64_t)s->C * s->RS + s->K) * (double)s->PQ * sizeof(float);
    double room = (double)cx->ws_limit_bytes / DSE_SLICES; /* not by the threads: the chunks must
                                                                not depend on them */
    if (room > (double)GEMM_BLOCK_BYTES) room = (double)GEMM_BLOCK_BYTES;
    const double nb = room / per_image;
    return nb < 1.0 ? 1 : nb > s->N ? s->N : (int)nb;
}

/* Output rows GEMM_IMAGE lowers at once: an image's whole col when it fits
 * GEMM_BLOCK_BYTES (and the 1x1 case, which lowers nothing), else blocks of rows that do,
 * at least one (SqueezeNet v1.0's conv1: 7 MB a whole image, 8 rows of 111 a block). */
static int image_rows(const struct shape *s) {
    const double per_row = (double)s->C * (double)s->RS * s->Q * sizeof(float);
    const double rows = (double)GEMM_BLOCK_BYTES / per_row;
    return s->is_1x1 || rows >= s->P ? s->P : rows < 1.0 ? 1 : (int)rows;
}

/* ---- GEMM_BATCH ------------------------------------------------------------------ */

static void fwd_batch_range(const struct cj *j, int t, int64_t i0, int64_t i1, int64_t k0, int64_t k1) {
    const struct shape *s = j->s;
    const struct dse_tensor *x = j->n->in[0], *y = j->n->out;
    const float *w = j->n->weight->data, *b = j->n->bias ? j->n->bias->data : NULL;
    if (i0 >= i1 || k0 >= k1) return;
    const int64_t rows = (int64_t)s->C * s->RS;
    float *col = ws_of(j->cx, t), *tmp = col + rows * j->chunk * s->PQ;
    for (int64_t n0 = i0; n0 < i1; n0 += j->chunk) {
        const int nb = (int)(i1 - n0 < j->chunk ? i1 - n0 : j->chunk);
        const int64_t ld = nb * s->PQ;
        im2col(s, x->data + n0 * x->stride_n, x->stride_n, nb, 0, s->P, col);
        if (s->G == 1) /* [k0, k1): one block of output channels (all of them: the same call) */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(k1 - k0), (int)ld, (int)s->CRSg, 1.0f,
                        w + k0 * s->CRSg, (int)s->CRSg, col, (int)ld, 0.0f, tmp + k0 * ld, (int)ld);
        else
            for (int g = 0; g < s->G; g++)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->Kg, (int)ld, (int)s->CRSg, 1.0f,
                            w + g * s->Kg * s->CRSg, (int)s->CRSg, col + g * s->CRSg * ld, (int)ld, 0.0f,
                            tmp + g * s->Kg * ld, (int)ld);
        /* tmp [K, nb, PQ] -> y [nb, K, PQ], bias fused into the copy. */
        for (int i = 0; i < nb; i++)
            for (int64_t k = k0; k < k1; k++) {
                const float *src = tmp + k * ld + i * s->PQ;
                float *dst = y->data + (n0 + i) * y->stride_n + k * s->PQ;
                const float bk = b ? b[k] : 0.0f;
                if (j->relu)
                    for (int64_t e = 0; e < s->PQ; e++) dst[e] = dse_cpu_relu(src[e] + bk);
                else
                    for (int64_t e = 0; e < s->PQ; e++) dst[e] = src[e] + bk;
            }
    }
}

static enum dse_status fwd_image(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s);

static enum dse_status fwd_batch(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s) {
    struct sg g;
    struct cj j = { .cx = cx, .n = n, .s = s, .chunk = batch_chunk(cx, s), .relu = n->relu_out, .sg = &g,
                    .range = fwd_batch_range };
    sg_plan(cx, &g, s->N, 0, 0, 0);
    fwd_split(&j, &g, s->K, s->P, s->Q, s->G, 1);
    if (j.by_rows) return fwd_image(cx, n, s); /* one image a slice: GEMM_IMAGE's lowering, by rows */
    const int64_t rows = (int64_t)s->C * s->RS;
    enum dse_status st = reserve(cx, (size_t)(rows + s->K) * j.chunk * s->PQ * sizeof(float), 0);
    if (st) return st;
    dse_cpu_run(cx, range_part, &j);
    return DSE_OK;
}

/* The images [i0, i1) of one slice, in chunks from i0: dw (buf) += dy col^T, dx += col2im(w^T dy). */
static void bwd_batch_slice(const struct cj *j, int t, int slice, int64_t i0, int64_t i1, float *dw) {
    const struct shape *s = j->s;
    const struct dse_tensor *x = j->n->in[0], *y = j->n->out;
    const float *w = j->n->weight->data;
    float *dx = x->grad;
    const int64_t rows = (int64_t)s->C * s->RS;
    float *col = ws_of(j->cx, t), *tmp = col + rows * j->chunk * s->PQ;
    (void)slice;
    for (int64_t n0 = i0; n0 < i1; n0 += j->chunk) {
        const int nb = (int)(i1 - n0 < j->chunk ? i1 - n0 : j->chunk);
        const int64_t ld = nb * s->PQ;
        /* dy [nb, K, PQ] -> tmp [K, nb, PQ] */
        for (int i = 0; i < nb; i++)
            for (int k = 0; k < s->K; k++)
                memcpy(tmp + k * ld + i * s->PQ, y->grad + (n0 + i) * y->stride_n + k * s->PQ,
                       (size_t)s->PQ * sizeof(float));
        if (dw) {
            im2col(s, x->data + n0 * x->stride_n, x->stride_n, nb, 0, s->P, col);
            for (int g = 0; g < s->G; g++) /* dw_g += dy_g col_g^T */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s->Kg, (int)s->CRSg, (int)ld, 1.0f,
                            tmp + g * s->Kg * ld, (int)ld, col + g * s->CRSg * ld, (int)ld, 1.0f,
                            dw + g * s->Kg * s->CRSg, (int)s->CRSg);
        }
        if (dx) {
            for (int g = 0; g < s->G; g++) /* dcol_g = w_g^T dy_g, into col */
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)s->CRSg, (int)ld, s->Kg, 1.0f,
                            w + g * s->Kg * s->CRSg, (int)s->CRSg, tmp + g * s->Kg * ld, (int)ld, 0.0f,
                            col + g * s->CRSg * ld, (int)ld);
            col2im_add(s, col, nb, 0, s->P, dx + n0 * x->stride_n, x->stride_n);
        }
    }
}

static void bwd_batch_part(void *p, int t, int nt) {
    sg_thread(p, t, nt, bwd_batch_slice);
}

static enum dse_status bwd_batch(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s) {
    float *dw = n->weight->grad;
    if (!dw && !n->in[0]->grad) return DSE_OK;
    struct sg g;
    struct cj j = { .cx = cx, .n = n, .s = s, .chunk = batch_chunk(cx, s), .sg = &g };
    const int64_t rows = (int64_t)s->C * s->RS, ndw = (int64_t)s->K * s->CRSg;
    j.dw_off = ((rows + s->K) * j.chunk * s->PQ + 15) / 16 * 16;
    const int64_t more = sg_plan(cx, &g, s->N, dw != NULL, ndw, j.dw_off);
    g.dst = dw;
    enum dse_status st = reserve(cx, (size_t)(j.dw_off + more) * sizeof(float), 0);
    if (st) return st;
    dse_cpu_run(cx, bwd_batch_part, &j);
    if (dw) sg_finish(cx, &g, n);
    return DSE_OK;
}

/* ---- GEMM_IMAGE ------------------------------------------------------------------ */

static void fwd_image_range(const struct cj *j, int t, int64_t i0, int64_t i1, int64_t k0, int64_t k1) {
    const struct shape *s = j->s;
    const struct dse_tensor *x = j->n->in[0], *y = j->n->out;
    const float *w = j->n->weight->data, *b = j->n->bias ? j->n->bias->data : NULL;
    if (i0 >= i1 || k0 >= k1) return;
    float *col = ws_of(j->cx, t);
    const int prows = image_rows(s);
    const int r0 = j->by_rows ? (int)k0 : 0, r1 = j->by_rows ? (int)k1 : s->P; /* output rows */
    if (j->by_rows) k0 = 0, k1 = s->K;
    for (int64_t i = i0; i < i1; i++) {
        const float *xi = x->data + i * x->stride_n;
        float *yi = y->data + i * y->stride_n;
        /* The 1x1 case: x_i [C, HW] is its own lowering (ldb = HW), one block of the rows. */
        for (int p0 = r0; p0 < r1; p0 += s->is_1x1 ? r1 - r0 : prows) {
            const int p1 = s->is_1x1 ? r1 : p0 + prows < r1 ? p0 + prows : r1;
            const int64_t nc = (int64_t)(p1 - p0) * s->Q, c0 = (int64_t)p0 * s->Q, ldb = s->is_1x1 ? s->PQ : nc;
            const float *B = xi + c0;
            if (!s->is_1x1) {
                im2col(s, xi, x->stride_n, 1, p0, p1, col);
                B = col;
            }
            /* y_i's columns [c0, c0 + nc) (ldc = PQ) from B [CRS, nc]; one group: channels [k0, k1) */
            if (s->G == 1)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(k1 - k0), (int)nc, (int)s->CRSg, 1.0f,
                            w + k0 * s->CRSg, (int)s->CRSg, B, (int)ldb, 0.0f, yi + k0 * s->PQ + c0, (int)s->PQ);
            else
                for (int g = 0; g < s->G; g++)
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->Kg, (int)nc, (int)s->CRSg, 1.0f,
                                w + g * s->Kg * s->CRSg, (int)s->CRSg, B + g * s->CRSg * nc, (int)nc, 0.0f,
                                yi + g * s->Kg * s->PQ + c0, (int)s->PQ);
        }
        for (int64_t k = k0; k < k1 && (b || j->relu); k++) { /* while y_i is in cache */
            float *yk = yi + k * s->PQ;
            const float bk = b ? b[k] : 0.0f;
            if (j->relu)
                for (int64_t e = (int64_t)r0 * s->Q; e < (int64_t)r1 * s->Q; e++) yk[e] = dse_cpu_relu(yk[e] + bk);
            else
                for (int64_t e = (int64_t)r0 * s->Q; e < (int64_t)r1 * s->Q; e++) yk[e] += bk;
        }
    }
}

static enum dse_status fwd_image(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s) {
    struct sg g;
    struct cj j = { .cx = cx, .n = n, .s = s, .relu = n->relu_out, .sg = &g, .range = fwd_image_range };
    sg_plan(cx, &g, s->N, 0, 0, 0);
    fwd_split(&j, &g, s->K, s->P, s->Q, s->G, 1);
    enum dse_status st = reserve(cx, s->is_1x1 ? 64 : (size_t)(s->C * s->RS * image_rows(s) * s->Q) * sizeof(float), 0);
    if (st) return st;
    dse_cpu_run(cx, range_part, &j);
    return DSE_OK;
}

/* The images [i0, i1) of one slice, one at a time: the fused ReLU's mask, the slice's bias
 * gradient, dw (buf) += dy_i x_i^T, dx_i += w^T dy_i. */
static void bwd_image_slice(const struct cj *j, int t, int slice, int64_t i0, int64_t i1, float *dw) {
    const struct shape *s = j->s;
    const struct dse_tensor *x = j->n->in[0], *y = j->n->out;
    const float *w = j->n->weight->data;
    float *dx = x->grad, *col = ws_of(j->cx, t);
    const int prows = image_rows(s);
    double *db = j->sum_db ? (double *)(col + j->db_off) + (int64_t)slice * s->K : NULL; /* 64-byte aligned */
    for (int k = 0; db && k < s->K; k++) db[k] = 0.0;
    const int isa = db ? dse_cpu_mm_isa() : DSE_CPU_MM_NONE; /* once a slice: it reads the environment */
    for (int64_t i = i0; i < i1; i++) {
        const float *xi = x->data + i * x->stride_n;
        float *dyi = y->grad + i * y->stride_n;
        /* The fused ReLU's mask and the bias gradient, as the image's dy comes into cache
         * for the sgemms below. */
        if (j->relu) dse_cpu_relu_mask(y->data + i * y->stride_n, dyi, s->K * s->PQ);
        for (int k = 0; db && k < s->K; k += 4) { /* four channels at once (dse_cpu_sum_channels) */
            const int nk = s->K - k < 4 ? s->K - k : 4;
            double got[4];
            dse_cpu_sum_channels(dyi + k * s->PQ, s->PQ, nk, isa, got);
            for (int c = 0; c < nk; c++) db[k + c] += got[c];
        }
        /* A block of output rows at a time: dy_i's columns [c0, c0 + nc) (ld PQ). */
        for (int p0 = 0; p0 < s->P; p0 += prows) {
            const int p1 = p0 + prows < s->P ? p0 + prows : s->P;
            const int64_t nc = s->is_1x1 ? s->PQ : (int64_t)(p1 - p0) * s->Q, c0 = (int64_t)p0 * s->Q;
            if (dw) {
                const float *B = xi;
                if (!s->is_1x1) {
                    im2col(s, xi, x->stride_n, 1, p0, p1, col);
                    B = col;
                }
                for (int g = 0; g < s->G; g++)
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s->Kg, (int)s->CRSg, (int)nc, 1.0f,
                                dyi + g * s->Kg * s->PQ + c0, (int)s->PQ, B + g * s->CRSg * nc, (int)nc, 1.0f,
                                dw + g * s->Kg * s->CRSg, (int)s->CRSg);
            }
            if (dx) {
                float *dxi = dx + i * x->stride_n;
                /* 1x1: accumulate straight into dx_i (beta 1); otherwise through col. */
                float *D = s->is_1x1 ? dxi : col;
                for (int g = 0; g < s->G; g++)
                    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)s->CRSg, (int)nc, s->Kg, 1.0f,
                                w + g * s->Kg * s->CRSg, (int)s->CRSg, dyi + g * s->Kg * s->PQ + c0, (int)s->PQ,
                                s->is_1x1 ? 1.0f : 0.0f, D + g * s->CRSg * nc, (int)nc);
                if (!s->is_1x1) col2im_add(s, col, 1, p0, p1, dxi, x->stride_n);
            }
        }
    }
}

static void bwd_image_part(void *p, int t, int nt) {
    sg_thread(p, t, nt, bwd_image_slice);
}

/* Also the node's fused ReLU mask and bias gradient (dse_cpu_conv2d_bwd leaves them to
 * it): each slice's dy summed per channel in double, in the workspace of the thread that
 * ran the slice, and the slices' sums added by the slice tree (bias_grad's bits). */
static enum dse_status bwd_image(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s) {
    float *dw = n->weight->grad, *db = n->bias && n->bias->grad ? n->bias->grad : NULL;
    if (!dw && !n->in[0]->grad && !db && !dse_cpu_masks_dy(n)) return DSE_OK;
    struct sg g;
    struct cj j = { .cx = cx, .n = n, .s = s, .relu = dse_cpu_masks_dy(n), .sg = &g };
    const int64_t ndw = (int64_t)s->K * s->CRSg;
    j.dw_off = s->is_1x1 ? 0 : (int64_t)s->C * s->RS * image_rows(s) * s->Q;
    j.dw_off = (j.dw_off + 15) / 16 * 16;
    j.db_off = j.dw_off + sg_plan(cx, &g, s->N, dw != NULL, ndw, j.dw_off), j.sum_db = db != NULL;
    g.dst = dw;
    enum dse_status st =
        reserve(cx, (size_t)(j.db_off + (db ? 2 * (int64_t)g.sl.count * s->K : 0) + 16) * sizeof(float), 0);
    if (st) return st;
    dse_cpu_run(cx, bwd_image_part, &j);
    if (dw) sg_finish(cx, &g, n);
    double part[DSE_SLICES_MAX];
    for (int k = 0; db && k < s->K; k++) {
        for (int t = 0; t < cx->threads; t++) {
            int64_t k0, k1;
            dse_cpu_share(g.sl.count, t, cx->threads, &k0, &k1);
            for (int64_t sc = k0; sc < k1; sc++) part[sc] = ((const double *)(ws_of(cx, t) + j.db_off))[sc * s->K + k];
        }
        dse_cpu_db_slices(n, &g.sl, db, s->K, k, part);
    }
    return DSE_OK;
}

/* ---- WINOGRAD -------------------------------------------------------------------- */
/* F(2x2, 3x3): a 4x4 input tile d and a 3x3 filter g give the 2x2 output tile
 * A^T [(G g G^T) .* (B^T d B)] A, with
 *   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]   G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]
 *   A^T = [1 1 1 0; 0 1 -1 -1].
 * Batched over a chunk of images: the 16 transformed elements e of every tile are laid
 * out V [16][Ci][T] (T = tiles of the chunk, in (image, tile row, tile column) order) and
 * the filters U [16][Co][Ci], so the products are 16 sgemms M[e] = U[e] V[e] into
 * M [16][Co][T], which the inverse transform writes out. Forward: in = x, out = y, the
 * filters as they are. Data gradient: a full correlation of dy (pad 2 - pad, which may be
 * negative) with the 180-degree-rotated filters, channels swapped, added into dx. */

static int wino_ok(const struct shape *s) {
    return s->R == 3 && s->S == 3 && s->sh == 1 && s->sw == 1 && s->dh == 1 && s->dw == 1 && s->G == 1;
}

/* One direction: in [Ci, Hi, Wi] read at row 2*ty - oh + (0..3), col 2*tx - ow + (0..3)
 * (zero outside); out [Co, Ho, Wo] in th x tw tiles of 2x2. */
struct wgeo {
    int     Ci, Hi, Wi, Co, Ho, Wo, oh, ow, th, tw;
    int64_t tpi; /* tiles per image */
};

static struct wgeo wgeo_make(int Ci, int Hi, int Wi, int Co, int Ho, int Wo, int oh, int ow) {
    struct wgeo g = { .Ci = Ci, .Hi = Hi, .Wi = Wi, .Co = Co, .Ho = Ho, .Wo = Wo, .oh = oh, .ow = ow,
                       .th = (Ho + 1) / 2, .tw = (Wo + 1) / 2 };
    g.tpi = (int64_t)g.th * g.tw;
    return g;
}

/* U[e][o][i] = (G f G^T)[e], o < no, i < ni, for the 3x3 filter f at w + o*so + i*si
 * (rotated 180 degrees if flip). */
static void wino_filters(const float *w, int no, int ni, int64_t so, int64_t si, int flip, float *U) {
    const int64_t OI = (int64_t)no * ni;
    for (int o = 0; o < no; o++)
        for (int i = 0; i < ni; i++) {
            const float *f = w + o * so + i * si;
            float g[9], t[12];
            for (int j = 0; j < 9; j++) g[j] = f[flip ? 8 - j : j];
            for (int c = 0; c < 3; c++) { /* t = G g, 4x3 */
                const float a = g[c], b = g[3 + c], d = g[6 + c];
                t[c] = a, t[3 + c] = 0.5f * (a + b + d), t[6 + c] = 0.5f * (a - b + d), t[9 + c] = d;
            }
            for (int r = 0; r < 4; r++) { /* (G g) G^T, row r */
                const float a = t[3 * r], b = t[3 * r + 1], d = t[3 * r + 2];
                float *u = U + 4 * r * OI + (int64_t)o * ni + i;
                u[0] = a, u[OI] = 0.5f * (a + b + d), u[2 * OI] = 0.5f * (a - b + d), u[3 * OI] = d;
            }
        }
}

#ifdef DSE_CPU_HAS_AVX2_CODE
/* Eight consecutive tiles of one tile row at once with AVX2 (run-time check): tile t
 * reads columns w0 + 2t + (0..3), i.e. the even and odd halves of 18 consecutive
 * inputs, and its 16 transformed values go to 8 consecutive floats of each plane of V
 * instead of 16 scattered stores. The same additions in the same order as the scalar
 * transform: the same bits. row0 = the tile row's top-left input (all 4 rows and
 * w0 .. w0 + 17 inside the map); v = V + c T + first tile. */
__attribute__((target("avx2"))) static void wino_in8_avx2(const float *row0, int64_t Wi, float *v, int64_t CT) {
    __m256 d[4][4];
    for (int r = 0; r < 4; r++) {
        const float *R = row0 + r * Wi;
        const __m256 a = _mm256_loadu_ps(R), b = _mm256_loadu_ps(R + 8);
        const __m256 c = _mm256_loadu_ps(R + 2), e = _mm256_loadu_ps(R + 10);
        d[r][0] = dse_avx2_half(a, b, 0), d[r][1] = dse_avx2_half(a, b, 1);
        d[r][2] = dse_avx2_half(c, e, 0), d[r][3] = dse_avx2_half(c, e, 1);
    }
    __m256 t[16];
    for (int j = 0; j < 4; j++) { /* B^T d */
        t[j] = _mm256_sub_ps(d[0][j], d[2][j]), t[4 + j] = _mm256_add_ps(d[1][j], d[2][j]);
        t[8 + j] = _mm256_sub_ps(d[2][j], d[1][j]), t[12 + j] = _mm256_sub_ps(d[1][j], d[3][j]);
    }
    for (int r = 0; r < 4; r++) { /* (B^T d) B */
        const __m256 *a = t + 4 * r;
        float *o = v + 4 * r * CT;
        _mm256_storeu_ps(o, _mm256_sub_ps(a[0], a[2]));
        _mm256_storeu_ps(o + CT, _mm256_add_ps(a[1], a[2]));
        _mm256_storeu_ps(o + 2 * CT, _mm256_sub_ps(a[2], a[1]));
        _mm256_storeu_ps(o + 3 * CT, _mm256_sub_ps(a[1], a[3]));
    }
}
#endif

/* V[e][c][tile] = (B^T d B)[e] for every tile of images [0, nb) of in (image stride sx). */
static void wino_inputs(const struct wgeo *g, const float *in, int64_t sx, int nb, float *V) {
    const int64_t T = nb * g->tpi, CT = (int64_t)g->Ci * T, HW = (int64_t)g->Hi * g->Wi;
    const int fast = dse_cpu_avx2(); /* 0 where the AVX2 code is not built */
    (void)fast;
    for (int c = 0; c < g->Ci; c++)
        for (int i = 0; i < nb; i++) {
            const float *xc = in + i * sx + c * HW;
            float *v = V + c * T + i * g->tpi;
            for (int ty = 0; ty < g->th; ty++)
                for (int tx = 0; tx < g->tw; tx++, v++) {
                    const int h0 = 2 * ty - g->oh, w0 = 2 * tx - g->ow;
#ifdef DSE_CPU_HAS_AVX2_CODE
                    if (fast && tx + 8 <= g->tw && h0 >= 0 && h0 + 4 <= g->Hi && w0 >= 0 && w0 + 18 <= g->Wi) {
                        wino_in8_avx2(xc + (int64_t)h0 * g->Wi + w0, g->Wi, v, CT);
                        tx += 7, v += 7; /* the loop adds the eighth */
                        continue;
                    }
#endif
                    float d[16], t[16];
                    if (h0 >= 0 && h0 + 4 <= g->Hi && w0 >= 0 && w0 + 4 <= g->Wi) {
                        for (int r = 0; r < 4; r++) memcpy(d + 4 * r, xc + (int64_t)(h0 + r) * g->Wi + w0, 4 * sizeof(float));
                    } else {
                        for (int r = 0; r < 4; r++)
                            for (int q = 0; q < 4; q++) {
                                const int h = h0 + r, w = w0 + q;
                                d[4 * r + q] = h >= 0 && h < g->Hi && w >= 0 && w < g->Wi ? xc[(int64_t)h * g->Wi + w] : 0.0f;
                            }
                    }
                    for (int j = 0; j < 4; j++) { /* B^T d */
                        t[j] = d[j] - d[8 + j], t[4 + j] = d[4 + j] + d[8 + j];
                        t[8 + j] = d[8 + j] - d[4 + j], t[12 + j] = d[4 + j] - d[12 + j];
                    }
                    for (int r = 0; r < 4; r++) { /* (B^T d) B */
                        const float *a = t + 4 * r;
                        float *o = v + 4 * r * CT;
                        o[0] = a[0] - a[2], o[CT] = a[1] + a[2], o[2 * CT] = a[2] - a[1], o[3 * CT] = a[1] - a[3];
                    }
                }
        }
}

#ifdef DSE_CPU_HAS_AVX2_CODE
/* The inverse transform of eight consecutive tiles of a tile row with AVX2: 16 vector
 * loads, the scalar transform's additions in its order, and the 2x2 outputs of each tile
 * interleaved into two rows of 16 consecutive outputs (y0: the tiles' top row). */
__attribute__((target("avx2"))) static void wino_out8_avx2(const float *m, int64_t KT, float *y0, int64_t Wo,
                                                          int acc, float bk) {
    __m256 e[16], t[8];
    for (int j = 0; j < 16; j++) e[j] = _mm256_loadu_ps(m + j * KT);
    for (int j = 0; j < 4; j++) { /* A^T m */
        t[j] = _mm256_add_ps(_mm256_add_ps(e[j], e[4 + j]), e[8 + j]);
        t[4 + j] = _mm256_sub_ps(_mm256_sub_ps(e[4 + j], e[8 + j]), e[12 + j]);
    }
    const __m256 o[4] = { _mm256_add_ps(_mm256_add_ps(t[0], t[1]), t[2]), _mm256_sub_ps(_mm256_sub_ps(t[1], t[2]), t[3]),
                          _mm256_add_ps(_mm256_add_ps(t[4], t[5]), t[6]), _mm256_sub_ps(_mm256_sub_ps(t[5], t[6]), t[7]) };
    const __m256 b = _mm256_set1_ps(bk);
    for (int r = 0; r < 2; r++) {
        const __m256 lo = _mm256_unpacklo_ps(o[2 * r], o[2 * r + 1]), hi = _mm256_unpackhi_ps(o[2 * r], o[2 * r + 1]);
        const __m256 first = _mm256_permute2f128_ps(lo, hi, 0x20), second = _mm256_permute2f128_ps(lo, hi, 0x31);
        float *dst = y0 + r * Wo;
        if (acc) {
            _mm256_storeu_ps(dst, _mm256_add_ps(_mm256_loadu_ps(dst), first));
            _mm256_storeu_ps(dst + 8, _mm256_add_ps(_mm256_loadu_ps(dst + 8), second));
        } else {
            _mm256_storeu_ps(dst, _mm256_add_ps(first, b));
            _mm256_storeu_ps(dst + 8, _mm256_add_ps(second, b));
        }
    }
}
#endif

/* out (images [0, nb), stride so, channels [k0, k1)) = A^T m A (+ bias), or += it if acc. */
static void wino_outputs(const struct wgeo *g, const float *M, int nb, float *out, int64_t so, const float *bias,
                         int acc, int k0, int k1) {
    const int64_t T = nb * g->tpi, KT = (int64_t)g->Co * T, HW = (int64_t)g->Ho * g->Wo;
    const int fast = dse_cpu_avx2(); /* 0 where the AVX2 code is not built */
    (void)fast;
    for (int k = k0; k < k1; k++) {
        const float bk = bias ? bias[k] : 0.0f;
        for (int i = 0; i < nb; i++) {
            const float *m = M + k * T + i * g->tpi;
            float *yc = out + i * so + k * HW;
            for (int ty = 0; ty < g->th; ty++)
                for (int tx = 0; tx < g->tw; tx++, m++) {
#ifdef DSE_CPU_HAS_AVX2_CODE
                    if (fast && tx + 8 <= g->tw && 2 * ty + 2 <= g->Ho && 2 * tx + 16 <= g->Wo) {
                        wino_out8_avx2(m, KT, yc + (int64_t)(2 * ty) * g->Wo + 2 * tx, g->Wo, acc, bk);
                        tx += 7, m += 7; /* the loop adds the eighth */
                        continue;
                    }
#endif
                    float e[16], t[8];
                    for (int j = 0; j < 16; j++) e[j] = m[j * KT];
                    for (int j = 0; j < 4; j++) /* A^T m */
                        t[j] = e[j] + e[4 + j] + e[8 + j], t[4 + j] = e[4 + j] - e[8 + j] - e[12 + j];
                    const float o[4] = { t[0] + t[1] + t[2], t[1] - t[2] - t[3], t[4] + t[5] + t[6], t[5] - t[6] - t[7] };
                    for (int r = 0; r < 2; r++) {
                        const int h = 2 * ty + r;
                        if (h >= g->Ho) break;
                        for (int q = 0; q < 2; q++) {
                            const int w = 2 * tx + q;
                            if (w >= g->Wo) break;
                            float *dst = yc + (int64_t)h * g->Wo + w;
                            *dst = acc ? *dst + o[2 * r + q] : o[2 * r + q] + bk;
                        }
                    }
                }
        }
    }
}

/* The filters are transformed once per call, into thread 0's workspace, which all
 * threads then read; each thread takes its run of the batch's slices, each in chunks whose
 * V and M fit in a share of ws_limit_bytes and in about one core's L2 (WINO_BLOCK_BYTES),
 * at least one image: M is 4x the output it becomes, so a whole-batch chunk streams it
 * through memory. bench_conv, SqueezeNet-FMNIST batch 128 on 2 EPYC cores: 1 MiB made
 * the 14x14 expand3x3 forwards 2x faster than a whole-batch chunk, 4 and 16 MiB about 1.3x.
 * With fewer images than threads, each thread transforms every slice and computes its
 * share of the output channels. */
#define WINO_BLOCK_BYTES ((size_t)1 << 20)

/* Images per Winograd chunk: V and M of that many images (per_image floats each) beside
 * nU floats of transformed filters fit in one of DSE_SLICES shares of ws_limit_bytes (not
 * the threads': the chunks must not depend on them) and in WINO_BLOCK_BYTES; at least one,
 * at most per_slice (the largest slice). */
static int wino_chunk(const struct dse_cpu_ctx *cx, int64_t nU, int64_t per_image, int64_t per_slice) {
    const double limit = (double)cx->ws_limit_bytes / DSE_SLICES;
    double room = (limit - (double)nU * sizeof(float)) / ((double)per_image * sizeof(float));
    const double cache = (double)WINO_BLOCK_BYTES / ((double)per_image * sizeof(float));
    if (room > cache) room = cache;
    return room < 1.0 ? 1 : room > per_slice ? (int)per_slice : (int)room;
}

static void wino_range(const struct cj *j, int t, int64_t i0, int64_t i1, int64_t k0, int64_t k1) {
    const struct wgeo *g = j->g;
    if (i0 >= i1 || k0 >= k1) return;
    float *V = ws_of(j->cx, t) + (t ? 0 : j->nU), *M = V + 16 * (int64_t)g->Ci * j->chunk * g->tpi;
    for (int64_t n0 = i0; n0 < i1; n0 += j->chunk) {
        const int nb = (int)(i1 - n0 < j->chunk ? i1 - n0 : j->chunk);
        const int64_t T = nb * g->tpi;
        wino_inputs(g, j->in + n0 * j->sx, j->sx, nb, V);
        for (int e = 0; e < 16; e++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(k1 - k0), (int)T, g->Ci, 1.0f,
                        j->U + e * (int64_t)g->Co * g->Ci + k0 * g->Ci, g->Ci, V + e * (int64_t)g->Ci * T, (int)T,
                        0.0f, M + e * (int64_t)g->Co * T + k0 * T, (int)T);
        wino_outputs(g, M, nb, j->out + n0 * j->sy, j->sy, j->bias, j->acc, (int)k0, (int)k1);
        for (int i = 0; j->relu && i < nb; i++) /* while the chunk's outputs are in cache */
            relu_inplace(j->out + (n0 + i) * j->sy + k0 * g->Ho * g->Wo, (k1 - k0) * g->Ho * g->Wo);
    }
}

static enum dse_status wino_run(struct dse_cpu_ctx *cx, const struct wgeo *g, int N, const float *w, int64_t so,
                                int64_t si, int flip, const float *in, int64_t sx, float *out, int64_t sy,
                                const float *bias, int acc, int relu) {
    const int64_t nU = 16 * (int64_t)g->Co * g->Ci, per_image = 16 * (int64_t)(g->Ci + g->Co) * g->tpi;
    struct cj j = { .cx = cx, .g = g, .in = in, .out = out, .sx = sx, .sy = sy, .bias = bias, .acc = acc,
                    .nU = (nU + 15) / 16 * 16, .N = N, .relu = relu, .range = wino_range, .range_k = g->Co };
    struct sg sg;
    sg_plan(cx, &sg, N, 0, 0, 0);
    j.sg = &sg;
    fwd_split(&j, &sg, g->Co, 0, 0, 1, 0); /* Winograd's tiles: blocks of output channels */
    j.chunk = wino_chunk(cx, nU, per_image, dse_cpu_slice_most(&sg.sl));
    enum dse_status st = reserve(cx, (size_t)(per_image * j.chunk) * sizeof(float), (size_t)j.nU * sizeof(float));
    if (st) return st;
    float *U = ws_of(cx, 0);
    wino_filters(w, g->Co, g->Ci, so, si, flip, U);
    j.U = U;
    dse_cpu_run(cx, range_part, &j);
    return DSE_OK;
}

static enum dse_status fwd_wino(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s) {
    if (!wino_ok(s)) return fwd_batch(cx, n, s);
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const struct wgeo g = wgeo_make(s->C, s->H, s->W, s->K, s->P, s->Q, s->ph, s->pw);
    return wino_run(cx, &g, s->N, n->weight->data, (int64_t)s->C * 9, 9, 0, x->data, x->stride_n, y->data,
                    y->stride_n, n->bias ? n->bias->data : NULL, 0, n->relu_out);
}

/* Weight gradient in the Winograd domain. Forward computes M[e] = U[e] V[e] (summed over
 * input channels) and y = A^T m A per tile; so dm = A dy A^T per 2x2 tile of dy, laid out
 * D [16][Co][T], dU[e] = D[e] V[e]^T (16 sgemms with the tiles as the inner dimension),
 * and dw = G^T dU G per filter: 2.25x fewer multiply-adds than im2col's dw. Each slice of
 * the batch is summed into a dU, transformed into its own dw, and the slices' dws are added
 * by the slice tree (wino_dw). */
#ifdef DSE_CPU_HAS_AVX2_CODE
/* wino_dy for eight consecutive full tiles with AVX2: the even and odd halves of two rows
 * of 16 outputs, the scalar arithmetic in its order, 16 vector stores. */
__attribute__((target("avx2"))) static void wino_dy8_avx2(const float *y0, int64_t Wo, float *d, int64_t KT) {
    const __m256 r0a = _mm256_loadu_ps(y0), r0b = _mm256_loadu_ps(y0 + 8);
    const __m256 r1a = _mm256_loadu_ps(y0 + Wo), r1b = _mm256_loadu_ps(y0 + Wo + 8);
    const __m256 a = dse_avx2_half(r0a, r0b, 0), b = dse_avx2_half(r0a, r0b, 1);
    const __m256 c = dse_avx2_half(r1a, r1b, 0), e = dse_avx2_half(r1a, r1b, 1);
    const __m256 sign = _mm256_set1_ps(-0.0f); /* x ^ sign = -x exactly (0 - x would turn -0 into +0) */
    const __m256 t[8] = { a, b, _mm256_add_ps(a, c), _mm256_add_ps(b, e), _mm256_sub_ps(a, c), _mm256_sub_ps(b, e),
                          _mm256_xor_ps(c, sign), _mm256_xor_ps(e, sign) };
    for (int r = 0; r < 4; r++) {
        const __m256 u = t[2 * r], v = t[2 * r + 1];
        float *o = d + 4 * r * KT;
        _mm256_storeu_ps(o, u);
        _mm256_storeu_ps(o + KT, _mm256_add_ps(u, v));
        _mm256_storeu_ps(o + 2 * KT, _mm256_sub_ps(u, v));
        _mm256_storeu_ps(o + 3 * KT, _mm256_xor_ps(v, sign));
    }
}
#endif

static void wino_dy(const struct wgeo *g, const float *dy, int64_t sy, int nb, float *D) {
    const int64_t T = nb * g->tpi, KT = (int64_t)g->Co * T, HW = (int64_t)g->Ho * g->Wo;
    const int fast = dse_cpu_avx2(); /* 0 where the AVX2 code is not built */
    (void)fast;
    for (int k = 0; k < g->Co; k++)
        for (int i = 0; i < nb; i++) {
            const float *yc = dy + i * sy + k * HW;
            float *d = D + k * T + i * g->tpi;
            for (int ty = 0; ty < g->th; ty++)
                for (int tx = 0; tx < g->tw; tx++, d++) {
                    const int h = 2 * ty, w = 2 * tx;
#ifdef DSE_CPU_HAS_AVX2_CODE
                    if (fast && tx + 8 <= g->tw && h + 2 <= g->Ho && w + 16 <= g->Wo) {
                        wino_dy8_avx2(yc + (int64_t)h * g->Wo + w, g->Wo, d, KT);
                        tx += 7, d += 7; /* the loop adds the eighth */
                        continue;
                    }
#endif
                    const int h1 = h + 1 < g->Ho, w1 = w + 1 < g->Wo;
                    const float a = yc[(int64_t)h * g->Wo + w], b = w1 ? yc[(int64_t)h * g->Wo + w + 1] : 0.0f;
                    const float c = h1 ? yc[(int64_t)(h + 1) * g->Wo + w] : 0.0f;
                    const float e = h1 && w1 ? yc[(int64_t)(h + 1) * g->Wo + w + 1] : 0.0f;
                    /* t = A dy (4x2), rows [a b] [a+c b+d] [a-c b-d] [-c -d]; dm = t A^T. */
                    const float t[8] = { a, b, a + c, b + e, a - c, b - e, -c, -e };
                    for (int r = 0; r < 4; r++) {
                        const float u = t[2 * r], v = t[2 * r + 1];
                        float *o = d + 4 * r * KT;
                        o[0] = u, o[KT] = u + v, o[2 * KT] = u - v, o[3 * KT] = -v;
                    }
                }
        }
}

/* dw[o][i] += G^T dU[o][i] G for the OI filters. */
static void wino_dU_to_dw(const float *dU, int64_t OI, float *dw) {
    for (int64_t oi = 0; oi < OI; oi++) {
        float u[16], t[12];
        for (int e = 0; e < 16; e++) u[e] = dU[e * OI + oi];
        for (int b = 0; b < 4; b++) { /* t = G^T u (3x4) */
            const float u0 = u[b], u1 = u[4 + b], u2 = u[8 + b], u3 = u[12 + b];
            t[b] = u0 + 0.5f * (u1 + u2), t[4 + b] = 0.5f * (u1 - u2), t[8 + b] = 0.5f * (u1 + u2) + u3;
        }
        float *f = dw + oi * 9; /* w [Co][Ci][3][3]: filter (o, i) at oi * 9 */
        for (int r = 0; r < 3; r++) {
            const float *a = t + 4 * r;
            f[3 * r] += a[0] + 0.5f * (a[1] + a[2]);
            f[3 * r + 1] += 0.5f * (a[1] - a[2]);
            f[3 * r + 2] += 0.5f * (a[1] + a[2]) + a[3];
        }
    }
}

/* One slice: its images' dU = D V^T summed in chunks from i0 (in the thread's workspace,
 * after V and D), then transformed into the slice's dw (buf). */
static void wino_dw_slice(const struct cj *j, int t, int slice, int64_t i0, int64_t i1, float *dw) {
    const struct wgeo *g = j->g;
    const int64_t OI = (int64_t)g->Co * g->Ci;
    float *V = ws_of(j->cx, t), *D = V + 16 * (int64_t)g->Ci * j->chunk * g->tpi, *dU = V + j->db_off;
    (void)slice;
    for (int64_t n0 = i0; n0 < i1; n0 += j->chunk) {
        const int nb = (int)(i1 - n0 < j->chunk ? i1 - n0 : j->chunk);
        const int64_t T = nb * g->tpi;
        wino_inputs(g, j->in + n0 * j->sx, j->sx, nb, V);
        wino_dy(g, j->out + n0 * j->sy, j->sy, nb, D);
        for (int e = 0; e < 16; e++) /* the slice's first chunk sets dU (beta 0: no zeroing pass) */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, g->Co, g->Ci, (int)T, 1.0f,
                        D + e * (int64_t)g->Co * T, (int)T, V + e * (int64_t)g->Ci * T, (int)T, n0 > i0 ? 1.0f : 0.0f,
                        dU + e * OI, g->Ci);
    }
    wino_dU_to_dw(dU, OI, dw);
}

static void wino_dw_part(void *p, int t, int nt) {
    sg_thread(p, t, nt, wino_dw_slice);
}

/* Each thread's workspace: V and D for a chunk, a slice's dU (at db_off), then its slice
 * tree and dw-sized buffers (sg): each slice's dU is transformed into the slice's dw, and
 * the slices' dws are added by the slice tree as GEMM's are, so the ranks add theirs too. */
static enum dse_status wino_dw(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const struct wgeo g = wgeo_make(s->C, s->H, s->W, s->K, s->P, s->Q, s->ph, s->pw);
    const int64_t OI = (int64_t)g.Co * g.Ci, nU = 16 * OI, per_image = 16 * (int64_t)(g.Ci + g.Co) * g.tpi;
    struct sg sg;
    struct cj j = { .cx = cx, .g = &g, .in = x->data, .out = y->grad, .sx = x->stride_n, .sy = y->stride_n,
                    .nU = (nU + 15) / 16 * 16, .N = s->N, .sg = &sg };
    const struct dse_cpu_slices sl = dse_cpu_slices_of(cx, s->N);
    j.chunk = wino_chunk(cx, 0, per_image, dse_cpu_slice_most(&sl));
    j.db_off = (per_image * j.chunk + 15) / 16 * 16;
    j.dw_off = j.db_off + j.nU;
    const int64_t more = sg_plan(cx, &sg, s->N, 1, OI * 9, j.dw_off);
    sg.dst = n->weight->grad;
    enum dse_status st = reserve(cx, (size_t)(j.dw_off + more) * sizeof(float), 0);
    if (st) return st;
    /* out is only read here: dy. */
    dse_cpu_run(cx, wino_dw_part, &j);
    sg_finish(cx, &sg, n);
    return DSE_OK;
}

/* dw += the Winograd weight gradient (wino_dw), then dx += the Winograd correlation of
 * dy with the rotated, transposed filters. */
static enum dse_status bwd_wino(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s) {
    if (!wino_ok(s)) return bwd_batch(cx, n, s);
    const struct dse_tensor *x = n->in[0], *y = n->out;
    if (n->weight->grad) {
        enum dse_status st = wino_dw(cx, n, s);
        if (st) return st;
    }
    if (!x->grad) return DSE_OK;
    const struct wgeo g = wgeo_make(s->K, s->P, s->Q, s->C, s->H, s->W, 2 - s->ph, 2 - s->pw);
    return wino_run(cx, &g, s->N, n->weight->data, 9, (int64_t)s->C * 9, 1, y->grad, y->stride_n, x->grad,
                    x->stride_n, NULL, 1, 0);
}

/* ---- DIRECT ---------------------------------------------------------------------- */
/* Our own kernels (mm.c), straight on the NCHW planes, nothing lowered, for convs without
 * groups or dilation at stride 1:
 *  1x1, no pad: image i's x_i [C, HW] is already the B of y_i = w x_i (dse_cpu_mm). The
 *    data gradient dx_i += w^T dy_i accumulates in place; the weight gradient dw += dy x^T
 *    is dot products held in registers across a chunk of the slice's images (dse_cpu_mm_nt).
 *  3x3, pad 0 to 2, 8 channels or more in and out: vectors over the output channels
 *    (dse_cpu_cv): the filters packed once per call, each image padded once, an output
 *    tile of 64 channels (AVX2: 16) by up to 6 pixels of a row summed in registers over
 *    (ci, r, s); the data gradient is the same kernel on dy padded by 2 - pad with the
 *    filters turned; the weight gradient sums a tile of 64 channels by 2 (ci, r) x 3 s in
 *    registers over a chunk's images and pixels (dse_cpu_cv_dw), dy transposed
 *    pixel-major first.
 * Bias and ReLU are applied in registers (1x1) or as the tile is written (3x3), into the
 * concat's slice when the output is one. Where mm.c has no instruction set (no AVX2 +
 * FMA), timing skips it. Every element is one chain in a fixed order: the same bits with
 * any threads, AVX-512 or AVX2. */
/* 3x3 stride-1 shapes with at least 8 channels in and out: the vectors run over the output
 * channels forward and over the input channels for the data gradient, so fewer would waste
 * most lanes (SqueezeNet-FMNIST's conv1, 1 channel in: DIRECT's backward 2-4x GEMM_IMAGE's). */
#define DIRECT_MIN_CHANNELS 8

static int direct_3x3(const struct shape *s) {
    return s->R == 3 && s->S == 3 && s->sh == 1 && s->sw == 1 && s->dh == 1 && s->dw == 1 && s->ph <= 2 &&
           s->pw <= 2 && s->C >= DIRECT_MIN_CHANNELS && s->K >= DIRECT_MIN_CHANNELS;
}

static int direct_ok(const struct shape *s) {
    return s->G == 1 && (s->is_1x1 || direct_3x3(s)) && dse_cpu_mm_isa() != DSE_CPU_MM_NONE;
}

/* dse_cpu_touch for an image's plane set that fits GEMM_BLOCK_BYTES (it then stays in the
 * core's L2 for the kernel); larger ones (SqueezeNet v1.0's 55x55 maps, over 1 MB) are left
 * to the kernel's own pass. */
static void touch_l2(const float *p, size_t bytes) {
    if (bytes <= GEMM_BLOCK_BYTES) dse_cpu_touch(p, bytes);
}

static void fwd_direct_range(const struct cj *j, int t, int64_t i0, int64_t i1, int64_t k0, int64_t k1) {
    const struct shape *s = j->s;
    const struct dse_tensor *x = j->n->in[0], *y = j->n->out;
    const float *w = j->n->weight->data, *b = j->n->bias ? j->n->bias->data : NULL;
    if (k0 >= k1) return;
    for (int64_t i = i0; i < i1; i++) {
        if (s->is_1x1) { /* [k0, k1): output channels */
            touch_l2(x->data + i * x->stride_n, (size_t)(s->C * s->HW) * sizeof(float));
            const struct dse_mm m = { .M = k1 - k0, .N = s->PQ, .K = s->C, .a = w + k0 * s->C, .a_rs = s->C,
                                      .a_ks = 1, .b = x->data + i * x->stride_n, .ldb = s->HW,
                                      .c = y->data + i * y->stride_n + k0 * s->PQ, .ldc = s->PQ,
                                      .bias = b ? b + k0 : NULL, .relu = j->relu };
            dse_cpu_mm(&m, j->isa);
            continue;
        }
        float *xp = ws_of(j->cx, t) + (t ? 0 : j->nU); /* [k0, k1): output rows */
        dse_cpu_pad_planes(x->data + i * x->stride_n, s->C, s->H, s->W, s->ph, s->pw, xp);
        const struct dse_cv c = { .C = s->C, .K = s->K, .P = s->P, .Q = s->Q, .xp = xp,
                                  .xp_c = (int64_t)(s->H + 2 * s->ph) * (s->W + 2 * s->pw), .xp_w = s->W + 2 * s->pw,
                                  .wp = j->U, .y = y->data + i * y->stride_n, .ldy = s->PQ, .bias = b,
                                  .relu = j->relu };
        dse_cpu_cv(&c, k0, k1, j->isa);
    }
}

/* Floats of the packed filters (dse_cpu_cv_pack) for K outputs of C inputs, rounded to 16. */
static int64_t cv_packed(int64_t K, int64_t C, int CB) {
    return ((K + CB - 1) / CB * CB * C * 9 + 15) / 16 * 16;
}

static enum dse_status fwd_direct(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s) {
    if (!direct_ok(s)) return fwd_batch(cx, n, s);
    struct sg g;
    struct cj j = { .cx = cx, .n = n, .s = s, .relu = n->relu_out, .sg = &g, .range = fwd_direct_range,
                    .range_k = s->is_1x1 ? s->K : s->P, .isa = dse_cpu_mm_isa() };
    /* our own kernels give every output the same bits in any block: the threads' blocks */
    j.kblocks = s->N < cx->threads && j.range_k >= 2 * cx->threads ? cx->threads : 1;
    sg_plan(cx, &g, s->N, 0, 0, 0);
    if (!s->is_1x1) {
        const int CB = dse_cpu_cv_block(j.isa);
        j.nU = cv_packed(s->K, s->C, CB);
        const int64_t xp = (int64_t)s->C * (s->H + 2 * s->ph) * (s->W + 2 * s->pw);
        enum dse_status st = reserve(cx, (size_t)xp * sizeof(float), (size_t)j.nU * sizeof(float));
        if (st) return st;
        float *wp = ws_of(cx, 0);
        dse_cpu_cv_pack(n->weight->data, s->K, s->C, 0, CB, wp);
        j.U = wp;
    }
    dse_cpu_run(cx, range_part, &j);
    return DSE_OK;
}

/* dy pixel-major's floats per pixel: K rounded up to 16 (dse_cv_dw.dyt_k). */
static int64_t cv_lanes(const struct shape *s) {
    return (s->K + 15) / 16 * 16;
}

/* Floats one image takes in a 3x3 weight-gradient chunk: x padded, dy pixel-major. */
static int64_t cv_per_image(const struct shape *s) {
    return (int64_t)s->C * (s->H + 2 * s->ph) * (s->W + 2 * s->pw) + s->PQ * cv_lanes(s);
}

/* Images per weight-gradient chunk: its inputs (1x1: dy and x; 3x3: cv_per_image) within
 * GEMM_BLOCK_BYTES, in L2 while the register tiles sweep them, at least one, at most the
 * largest slice; from the shape only, never the threads. */
static int direct_chunk(const struct shape *s, int64_t per_slice) {
    const double per = s->is_1x1 ? (double)(s->C + s->K) * (double)s->PQ : (double)cv_per_image(s);
    const double nb = (double)GEMM_BLOCK_BYTES / (per * sizeof(float));
    return nb < 1.0 ? 1 : nb > per_slice ? (int)per_slice : (int)nb;
}

/* The images [i0, i1) of one slice, a chunk at a time: dw (buf) += the chunk's weight
 * gradient, then dx_i += for its images while their dy is in cache. */
static void bwd_direct_slice(const struct cj *j, int t, int slice, int64_t i0, int64_t i1, float *dw) {
    const struct shape *s = j->s;
    const struct dse_tensor *x = j->n->in[0], *y = j->n->out;
    const int64_t Hp = s->H + 2 * s->ph, Wp = s->W + 2 * s->pw, xp_n = (int64_t)s->C * Hp * Wp;
    const int64_t kt = cv_lanes(s), dyt_n = s->PQ * kt;
    const int qh = 2 - s->ph, qw = 2 - s->pw; /* dy's pad for the data gradient */
    float *xp = ws_of(j->cx, t), *dyt = xp + j->dyt_off, *dyp = xp + j->dyp_off;
    (void)slice;
    for (int64_t n0 = i0; n0 < i1; n0 += j->chunk) {
        const int64_t nb = i1 - n0 < j->chunk ? i1 - n0 : j->chunk;
        if (dw && s->is_1x1) {
            for (int64_t i = n0; i < n0 + nb; i++) {
                touch_l2(y->grad + i * y->stride_n, (size_t)(s->K * s->PQ) * sizeof(float));
                touch_l2(x->data + i * x->stride_n, (size_t)(s->C * s->HW) * sizeof(float));
            }
            const struct dse_mm_nt m = { .M = s->K, .N = s->C, .L = s->PQ, .imgs = nb,
                                         .a = y->grad + n0 * y->stride_n, .lda = s->PQ, .a_is = y->stride_n,
                                         .b = x->data + n0 * x->stride_n, .ldb = s->HW, .b_is = x->stride_n,
                                         .c = dw, .ldc = s->C };
            dse_cpu_mm_nt(&m, j->isa);
        } else if (dw) {
            for (int64_t i = 0; i < nb; i++) {
                dse_cpu_pad_planes(x->data + (n0 + i) * x->stride_n, s->C, s->H, s->W, s->ph, s->pw, xp + i * xp_n);
                dse_cpu_to_pixels(y->grad + (n0 + i) * y->stride_n, s->K, s->PQ, kt, dyt + i * dyt_n, j->isa);
            }
            const struct dse_cv_dw m = { .C = s->C, .K = s->K, .P = s->P, .Q = s->Q, .imgs = nb, .xp = xp,
                                         .xp_c = Hp * Wp, .xp_w = Wp, .xp_i = xp_n, .dyt = dyt, .dyt_k = kt,
                                         .dyt_i = dyt_n, .dw = dw };
            dse_cpu_cv_dw(&m, j->isa);
        }
        for (int64_t i = n0; x->grad && i < n0 + nb; i++) {
            const float *dy = y->grad + i * y->stride_n;
            float *dx = x->grad + i * x->stride_n;
            if (s->is_1x1) {
                touch_l2(dx, (size_t)(s->C * s->HW) * sizeof(float));
                const struct dse_mm m = { .M = s->C, .N = s->PQ, .K = s->K, .a = j->n->weight->data, .a_rs = 1,
                                          .a_ks = s->C, .b = dy, .ldb = s->PQ, .c = dx, .ldc = s->HW, .acc = 1 };
                dse_cpu_mm(&m, j->isa);
                continue;
            }
            dse_cpu_pad_planes(dy, s->K, s->P, s->Q, qh, qw, dyp);
            const struct dse_cv c = { .C = s->K, .K = s->C, .P = s->H, .Q = s->W, .xp = dyp,
                                      .xp_c = (int64_t)(s->P + 2 * qh) * (s->Q + 2 * qw), .xp_w = s->Q + 2 * qw,
                                      .wp = j->U, .y = dx, .ldy = s->HW, .acc = 1 };
            dse_cpu_cv(&c, 0, s->H, j->isa);
        }
    }
}

static void bwd_direct_part(void *p, int t, int nt) {
    sg_thread(p, t, nt, bwd_direct_slice);
}

static enum dse_status bwd_direct(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s) {
    if (!direct_ok(s)) return bwd_batch(cx, n, s);
    float *dw = n->weight->grad;
    if (!dw && !n->in[0]->grad) return DSE_OK;
    struct sg g;
    struct cj j = { .cx = cx, .n = n, .s = s, .sg = &g, .isa = dse_cpu_mm_isa() };
    const int CB = dse_cpu_cv_block(j.isa);
    sg_plan(cx, &g, s->N, 0, 0, 0);
    j.chunk = direct_chunk(s, dse_cpu_slice_most(&g.sl));
    int64_t scratch = 0; /* a thread's: the chunk's x padded, its dy pixel-major, one dy padded */
    if (!s->is_1x1) {
        const int64_t xp_n = (int64_t)s->C * (s->H + 2 * s->ph) * (s->W + 2 * s->pw);
        j.nU = n->in[0]->grad ? cv_packed(s->C, s->K, CB) : 0;
        j.dyt_off = dw ? j.chunk * xp_n : 0;
        j.dyp_off = dw ? j.chunk * cv_per_image(s) : 0;
        scratch = j.dyp_off + (n->in[0]->grad ? (int64_t)s->K * (s->P + 2 * (2 - s->ph)) * (s->Q + 2 * (2 - s->pw)) : 0);
        scratch = (scratch + 15) / 16 * 16;
    }
    const int64_t more = sg_plan(cx, &g, s->N, dw != NULL, (int64_t)s->K * s->C * s->RS, scratch);
    g.dst = dw;
    const int64_t own = (scratch + more + 15) / 16 * 16; /* each thread's; the packed filters after thread 0's */
    enum dse_status st = reserve(cx, (size_t)own * sizeof(float), (size_t)j.nU * sizeof(float));
    if (st) return st;
    if (j.nU) {
        dse_cpu_cv_pack(n->weight->data, s->C, s->K, 1, CB, ws_of(cx, 0) + own);
        j.U = ws_of(cx, 0) + own;
    }
    dse_cpu_run(cx, bwd_direct_part, &j);
    if (dw) sg_finish(cx, &g, n);
    return DSE_OK;
}

typedef enum dse_status (*conv_fn)(struct dse_cpu_ctx *, struct dse_node *, const struct shape *);
static const conv_fn fwd_fns[DSE_CPU_CONV_COUNT] = { fwd_batch, fwd_image, fwd_wino, fwd_direct };
static const conv_fn bwd_fns[DSE_CPU_CONV_COUNT] = { bwd_batch, bwd_image, bwd_wino, bwd_direct };

/* A whole backward by strategy a, as a step runs it (and as timing must see it): the fused
 * ReLU's mask first, then the bias gradient, then the strategy; GEMM_IMAGE does all three
 * image by image (bwd_image). */
static enum dse_status bwd_whole(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s, int a) {
    if (a == DSE_CPU_CONV_GEMM_IMAGE) return bwd_image(cx, n, s);
    if (dse_cpu_masks_dy(n)) mask_grad(cx, s, n->out);
    if (n->bias && n->bias->grad) bias_grad(cx, n, s, n->out, n->bias->grad);
    return bwd_fns[a](cx, n, s);
}

static enum dse_status fwd_whole(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s, int a) {
    return fwd_fns[a](cx, n, s);
}

/* Whether strategy a runs shape s itself (rather than falling back to GEMM_BATCH). */
static int algo_ok(int a, const struct shape *s) {
    return a == DSE_CPU_CONV_WINOGRAD ? wino_ok(s) : a == DSE_CPU_CONV_DIRECT ? direct_ok(s) : 1;
}

const char *dse_cpu_conv_algo_str(int algo) {
    switch (algo) {
    case DSE_CPU_CONV_AUTO:       return "auto";
    case DSE_CPU_CONV_GEMM_BATCH: return "gemm_batch";
    case DSE_CPU_CONV_GEMM_IMAGE: return "gemm_image";
    case DSE_CPU_CONV_WINOGRAD:   return "winograd";
    case DSE_CPU_CONV_DIRECT:     return "direct";
    default:                      return "?";
    }
}

/* ---- choosing a strategy ----------------------------------------------------------- */

static void make_key(const struct dse_node *n, const struct shape *s, int key[16]) {
    const int k[16] = { s->N, s->C, s->H, s->W, s->K, s->R, s->S, s->sh, s->sw, s->ph, s->pw, s->dh, s->dw,
                        s->G, n->bias != NULL, n->in[0]->grad != NULL };
    memcpy(key, k, sizeof k);
}

static struct dse_cpu_conv_choice *cache_find(struct dse_cpu_ctx *cx, const int key[16]) {
    for (int i = 0; i < cx->conv_cache_n; i++)
        if (memcmp(cx->conv_cache[i].key, key, 16 * sizeof(int)) == 0) return &cx->conv_cache[i];
    return NULL;
}

static struct dse_cpu_conv_choice *cache_add(struct dse_cpu_ctx *cx, const int key[16]) {
    if (cx->conv_cache_n == cx->conv_cache_cap) {
        int cap = cx->conv_cache_cap ? 2 * cx->conv_cache_cap : 16;
        struct dse_cpu_conv_choice *p = realloc(cx->conv_cache, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        cx->conv_cache = p, cx->conv_cache_cap = cap;
    }
    struct dse_cpu_conv_choice *c = &cx->conv_cache[cx->conv_cache_n++];
    memset(c, 0, sizeof *c);
    memcpy(c->key, key, 16 * sizeof(int));
    c->algo_fwd = c->algo_bwd = DSE_CPU_CONV_AUTO;
    return c;
}

/* Each strategy once untimed (it grows the workspace and faults its pages in), then
 * TIMING_REPS rounds that run the strategies in turn, keeping each one's fastest run:
 * alternating keeps a load change on a shared machine from favouring one of them.
 * A strategy that does not support the shape is not run; its time is -1. */
#define TIMING_REPS 3

typedef enum dse_status (*whole_fn)(struct dse_cpu_ctx *, struct dse_node *, const struct shape *, int);

static enum dse_status time_all(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s, whole_fn run,
                                float *ms) {
    double best[DSE_CPU_CONV_COUNT];
    for (int a = 0; a < DSE_CPU_CONV_COUNT; a++) {
        best[a] = -1.0;
        if (!algo_ok(a, s)) continue;
        enum dse_status st = run(cx, n, s, a);
        if (st) return st;
        best[a] = 1e30;
    }
    for (int rep = 0; rep < TIMING_REPS; rep++) {
        for (int a = 0; a < DSE_CPU_CONV_COUNT; a++) {
            if (!algo_ok(a, s)) continue;
            double t0 = dse_cpu_now_ms();
            enum dse_status st = run(cx, n, s, a);
            double t = dse_cpu_now_ms() - t0;
            if (st) return st;
            if (t < best[a]) best[a] = t;
        }
    }
    for (int a = 0; a < DSE_CPU_CONV_COUNT; a++) ms[a] = (float)best[a];
    return DSE_OK;
}

static int fastest(const float *ms) {
    int best = 0; /* GEMM_BATCH runs every shape */
    for (int a = 1; a < DSE_CPU_CONV_COUNT; a++)
        if (ms[a] >= 0.0f && ms[a] < ms[best]) best = a;
    return best;
}

static int wants_bwd(const struct dse_node *n) {
    return n->training && (n->weight->grad || (n->bias && n->bias->grad) || n->in[0]->grad);
}

/* Backward timing on scratch gradients, so the node's own grads are untouched: the whole
 * backward (bwd_whole), the fused ReLU's mask and the bias gradient included, since
 * GEMM_IMAGE does those image by image and the others in passes of their own (timing
 * without them chose GEMM_IMAGE for SqueezeNet-FMNIST's conv1, 6.5 -> 13 ms a step). */
static enum dse_status time_bwd(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s,
                                float *ms) {
    struct dse_node shadow = *n; /* its dw_blocks and db_part (data-parallel) are n's: written here, then
                                    again by the real backward, which comes after the timing */
    struct dse_tensor x = *n->in[0], y = *n->out, w = *n->weight, b = n->bias ? *n->bias : (struct dse_tensor){ 0 };
    const int64_t nx = x.n * x.stride_n, ny = y.n * y.stride_n, nw = dse_tensor_count(&w),
                  nb = n->bias && n->bias->grad ? dse_tensor_count(&b) : 0;
    float *buf = calloc((size_t)(nx + ny + nw + nb), sizeof(float));
    if (!buf) return dse_cpu_fail(cx, n, DSE_ERR_NOMEM, "out of memory timing conv strategies");
    x.grad = n->in[0]->grad ? buf : NULL;
    y.grad = buf + nx; /* dy copied: the mask writes it */
    for (int i = 0; n->out->grad && i < y.n; i++)
        memcpy(y.grad + i * y.stride_n, n->out->grad + i * y.stride_n, (size_t)dse_tensor_image(&y) * sizeof(float));
    w.grad = n->weight->grad ? buf + nx + ny : NULL;
    b.grad = nb ? buf + nx + ny + nw : NULL;
    shadow.in[0] = &x, shadow.out = &y, shadow.weight = &w, shadow.bias = n->bias ? &b : NULL;
    enum dse_status st = time_all(cx, &shadow, s, bwd_whole, ms);
    free(buf);
    return st;
}

static enum dse_status choose(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s, int do_fwd,
                              int do_bwd, struct dse_cpu_conv_choice *out) {
    int key[16];
    make_key(n, s, key);
    struct dse_cpu_conv_choice *c = cache_find(cx, key);
    if (c) c->spare = 0; /* the machine's choice, used here from now on */
    if (!c && !(c = cache_add(cx, key)))
        return dse_cpu_fail(cx, n, DSE_ERR_NOMEM, "out of memory for the conv strategy cache");
    enum dse_status st = DSE_OK;
    if (do_fwd && c->algo_fwd == DSE_CPU_CONV_AUTO) {
        float ms[DSE_CPU_CONV_COUNT];
        if ((st = time_all(cx, n, s, fwd_whole, ms))) return st;
        memcpy(c->ms_fwd, ms, sizeof ms);
        c->algo_fwd = fastest(ms);
        cx->stats.conv_timings++;
    }
    if (do_bwd && c->algo_bwd == DSE_CPU_CONV_AUTO && wants_bwd(n)) {
        float ms[DSE_CPU_CONV_COUNT];
        if ((st = time_bwd(cx, n, s, ms))) return st;
        memcpy(c->ms_bwd, ms, sizeof ms);
        c->algo_bwd = fastest(ms);
        cx->stats.conv_timings++;
    }
    if (out) *out = *c;
    return DSE_OK;
}

enum dse_status dse_cpu_conv2d_choose(struct dse_cpu_ctx *cx, struct dse_node *n,
                                      struct dse_cpu_conv_choice *out) {
    DSE_ASSERT(n->op == DSE_OP_CONV2D);
    struct shape s = shape_of(n);
    return choose(cx, n, &s, 1, 1, out);
}

/* The strategy to run: the node's override, the ctx's, or the cached (timed) choice; in bf16
 * mode (a conv the rule leaves in float32) GEMM_BATCH, one fixed strategy, untimed: the
 * timed choice is per thread count, and a bf16 run repeats its bits with any. */
static enum dse_status pick(struct dse_cpu_ctx *cx, struct dse_node *n, const struct shape *s, int bwd,
                            int *algo) {
    int a = bwd ? n->algo_bwd : n->algo_fwd;
    if (a == DSE_CPU_CONV_AUTO) a = cx->conv_force;
    if (a == DSE_CPU_CONV_AUTO && cx->bf16 != DSE_CPU_BF16_OFF) a = DSE_CPU_CONV_GEMM_BATCH;
    if (a == DSE_CPU_CONV_AUTO) {
        struct dse_cpu_conv_choice c;
        enum dse_status st = choose(cx, n, s, !bwd, bwd, &c);
        if (st) return st;
        a = bwd ? c.algo_bwd : c.algo_fwd;
        if (a == DSE_CPU_CONV_AUTO) a = DSE_CPU_CONV_GEMM_BATCH; /* nothing to time */
    }
    if (a < 0 || a >= DSE_CPU_CONV_COUNT)
        return dse_cpu_fail(cx, n, DSE_ERR_CONFIG, "conv strategy %d does not exist on the CPU", a);
    if (!algo_ok(a, s)) a = DSE_CPU_CONV_GEMM_BATCH; /* forced on a shape it cannot run */
    *algo = a;
    return DSE_OK;
}

enum dse_status dse_cpu_conv2d_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    if (dse_cpu_conv_bf16_runs(cx, n)) return dse_cpu_conv_bf16_fwd(cx, n); /* conv_bf16.c */
    struct shape s = shape_of(n);
    int a = DSE_CPU_CONV_GEMM_BATCH;
    enum dse_status st = pick(cx, n, &s, 0, &a);
    return st ? st : fwd_fns[a](cx, n, &s);
}

/* bwd_whole by the picked strategy; without weight or data gradients, only the mask and
 * the bias gradient (GEMM_BATCH's passes; its strategy part then does nothing). */
enum dse_status dse_cpu_conv2d_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    struct shape s = shape_of(n);
    int a = DSE_CPU_CONV_GEMM_BATCH;
    if (dse_cpu_conv_bf16_runs(cx, n)) { /* bwd_whole's passes (or conv_bf16.c's own), then conv_bf16.c's */
        const int fused = dse_cpu_conv_bf16_fuses(cx, n);
        if (dse_cpu_masks_dy(n) && !fused) mask_grad(cx, &s, n->out);
        if (n->bias && n->bias->grad && !fused) bias_grad(cx, n, &s, n->out, n->bias->grad);
        return dse_cpu_conv_bf16_bwd(cx, n);
    }
    DSE_ASSERT(!n->dx_whole); /* these strategies add to dx: engine/model.c planned by cx->bf16 */
    if (n->weight->grad || n->in[0]->grad) {
        enum dse_status st = pick(cx, n, &s, 1, &a);
        if (st) return st;
    }
    return bwd_whole(cx, n, &s, a);
}
