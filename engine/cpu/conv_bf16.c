/* conv_bf16.c: conv and fc in bf16 mixed precision (issue #37; cx->bf16, --precision bf16):
 * the operands of every product rounded to bf16 as they are packed, the products summed in
 * float by mm_bf16.c's kernels; weights, biases, gradients and everything else stay float32,
 * and so do activations but those engine/model.c's plan_bf16 stores in bf16 (dse_tensor.bf16:
 * section "activations stored in bf16" below), and gradients but those plan_grad16 keeps in
 * bf16 (dse_tensor.grad16: a squeeze's data gradient, masked and summed for the expands
 * before it by dx16, taken by their take_dy). conv2d.c and fc.c call these instead of their
 * float32 code when the ctx is in bf16; conv2d.c applies the fused ReLU's mask and the bias
 * gradient first, but for a conv with a weight gradient, which takes them with dy's rows
 * (dse_cpu_conv_bf16_fuses, take_dy).
 *
 * Convs of stride 1 with 4 input channels or more (SqueezeNet's 3x3s) go straight on padded
 * planes, pairs over the channels (section "direct"), and so do convs of stride 2 with a
 * kernel of 2x2 or more (v1.0's conv1) by phases, pairs of adjacent taps: forward, and
 * without a data gradient (a first conv) backward (by_phases; with one, the backward is
 * lowered); other convs of one group (any kernel,
 * stride, pad, dilation), per image: the input lowered (im2col)
 * two rows at a time straight into k-pairs, B [C R S / 2][P Q] (a 1x1 stride-1 unpadded
 * conv packs its planes as they are), y = w B (+ bias, ReLU) by dse_cpu_mm_bf16; the data
 * gradient dcol = w^T dy (the same kernel, dy packed), then col2im adds it to dx (a 1x1
 * conv adds w^T dy straight into dx, or stores it there where dse_node.dx_whole, or rounds it
 * into a bf16 gradient, dx16); the weight gradient dw += dy col^T over a chunk of a
 * slice's images by dse_cpu_mm_nt_bf16, dy and col packed as bf16 rows. Images go to the
 * threads forward; backward goes by the batch's slices (engine/slices.h), each thread adding
 * its run of slices' weight gradients up by the slice tree as they are done, in the few
 * buffers the tree holds at once (wt_depth): the same bits with any thread count. */
#include "engine/cpu/bf16_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bshape {
    int64_t N, C, H, W, K, R, S, P, Q, sh, sw, ph, pw, dh, dw;
    int64_t HW, PQ, CRS, KP;   /* KP: k-pairs of the lowered rows, (C R S + 1) / 2 */
    int     is_1x1;            /* 1x1, stride 1, no pad: the input is its own lowering */
};

static struct bshape bshape_of(const struct dse_node *n) {
    const struct dse_layer *l = n->layer;
    const struct dse_tensor *x = n->in[0], *y = n->out;
    struct bshape s = { .N = x->n, .C = x->c, .H = x->h, .W = x->w, .K = y->c, .R = l->kernel_h, .S = l->kernel_w,
                        .P = y->h, .Q = y->w, .sh = l->stride_h, .sw = l->stride_w, .ph = l->pad_h, .pw = l->pad_w,
                        .dh = l->dilation_h, .dw = l->dilation_w };
    s.HW = s.H * s.W, s.PQ = s.P * s.Q, s.CRS = s.C * s.R * s.S, s.KP = (s.CRS + 1) / 2;
    s.is_1x1 = s.R == 1 && s.S == 1 && s.sh == 1 && s.sw == 1 && s.ph == 0 && s.pw == 0;
    return s;
}

/* The rule choosing float32 for a conv where bf16 cannot win (measured per layer with dse
 * profile on the 2-core Zen 4, docs/training.md "bf16 on the CPU"), from the shape only, so
 * a model's choices are fixed and the same with any thread count:
 * - more than one group: no grouped path in bf16;
 * - fewer than BF16_MIN_TERMS terms per output (C R S): packing and lowering cost more than
 *   the short product (SqueezeNet-FMNIST's conv1, 1 channel 3x3: 9 terms, backward 2.1x
 *   float32's time);
 * - an output map of at most BF16_MAX_SMALL_MAP pixels: the weight gradient's rows are mostly
 *   padding and its sums' tree runs per chunk (a 4x4 map: backward about 2x float32's time;
 *   SqueezeNet-FMNIST's fire9 at 3x3: 1.6x). */
#define BF16_MIN_TERMS     16
#define BF16_MAX_SMALL_MAP 16

const char *dse_cpu_conv_bf16_fp32(const struct dse_node *n, char *why, size_t size) {
    const struct bshape s = bshape_of(n);
    if (n->layer->groups != 1) snprintf(why, size, "groups %d", n->layer->groups);
    else if (s.CRS < BF16_MIN_TERMS)
        snprintf(why, size, "%lld terms per output, under %d", (long long)s.CRS, BF16_MIN_TERMS);
    else if (s.PQ <= BF16_MAX_SMALL_MAP) snprintf(why, size, "a %lldx%lld output map", (long long)s.P, (long long)s.Q);
    else return NULL;
    return why;
}

int dse_cpu_conv_bf16_runs(const struct dse_cpu_ctx *cx, const struct dse_node *n) {
    char why[64];
    return cx->bf16 == DSE_CPU_BF16_EVERY ? n->layer->groups == 1
                                          : cx->bf16 == DSE_CPU_BF16_BY_RULE && !dse_cpu_conv_bf16_fp32(n, why, sizeof why);
}

/* ---- activations stored in bf16 (dse_tensor.bf16, engine/model.c plan_bf16) ---------------
 * A conv reads such an input as the values its packing would have rounded it to, and writes
 * such an output rounded once from the float sums (+ bias, ReLU) it would have stored: the
 * products are the same bits either way; the bytes each pass moves are halved. */
static const dse_bf16 *data16(const struct dse_tensor *t) { return (const dse_bf16 *)(const void *)t->data; }

/* rows rows of L bf16 values, ldx apart, to out (ldo apart), zero on to Lp. */
static void copy_rows16(const dse_bf16 *x, int64_t rows, int64_t L, int64_t ldx, dse_bf16 *out, int64_t ldo,
                        int64_t Lp) {
    for (int64_t r = 0; r < rows; r++) {
        memcpy(out + r * ldo, x + r * ldx, (size_t)L * sizeof(dse_bf16));
        memset(out + r * ldo + L, 0, (size_t)(Lp - L) * sizeof(dse_bf16));
    }
}

/* The output columns [*q0, *q1) whose input column q sw - pw + t dw lies inside [0, W). */
static void valid_q(const struct bshape *s, int64_t t, int64_t *q0, int64_t *q1) {
    const int64_t off = t * s->dw - s->pw; /* iw = q sw + off */
    int64_t a = off >= 0 ? 0 : (-off + s->sw - 1) / s->sw, b = s->W - 1 - off < 0 ? 0 : (s->W - 1 - off) / s->sw + 1;
    if (b > s->Q) b = s->Q;
    if (a > b) a = b;
    *q0 = a, *q1 = b;
}

/* Output rows [p0, p1) of row k = (c, r, t) of image x's lowering:
 * dst[(p - p0) Q + q] = x[c][p sh - ph + r dh][q sw - pw + t dw], zero outside the image. */
static void lower_row(const struct bshape *s, const float *x, int64_t k, int64_t p0, int64_t p1, float *dst, int isa) {
    const int64_t c = k / (s->R * s->S), r = k / s->S % s->R, t = k % s->S, off = t * s->dw - s->pw;
    const float *xc = x + c * s->HW;
    int64_t q0, q1;
    valid_q(s, t, &q0, &q1);
    for (int64_t p = p0; p < p1; p++) {
        float *d = dst + (p - p0) * s->Q;
        const int64_t ih = p * s->sh - s->ph + r * s->dh;
        if (ih < 0 || ih >= s->H || q0 >= q1) {
            memset(d, 0, (size_t)s->Q * sizeof(float));
            continue;
        }
        const float *src = xc + ih * s->W + off;
        for (int64_t q = 0; q < q0; q++) d[q] = 0.0f;
        if (s->sw == 1) memcpy(d + q0, src + q0, (size_t)(q1 - q0) * sizeof(float));
        else dse_cpu_copy_strided(src + q0 * s->sw, q1 - q0, s->sw, d + q0, isa);
        for (int64_t q = q1; q < s->Q; q++) d[q] = 0.0f;
    }
}

/* dx[c][ih][iw] += dcol[k][p Q + q] over the rows k in order (lower_row's positions). */
static void col2im_add(const struct bshape *s, const float *dcol, float *dx) {
    for (int64_t k = 0; k < s->CRS; k++) {
        const int64_t c = k / (s->R * s->S), r = k / s->S % s->R, t = k % s->S, off = t * s->dw - s->pw;
        int64_t q0, q1;
        valid_q(s, t, &q0, &q1);
        for (int64_t p = 0; p < s->P; p++) {
            const int64_t ih = p * s->sh - s->ph + r * s->dh;
            if (ih < 0 || ih >= s->H) continue;
            const float *src = dcol + k * s->PQ + p * s->Q;
            float *d = dx + c * s->HW + ih * s->W + off;
            if (s->sw == 1)
                for (int64_t q = q0; q < q1; q++) d[q] += src[q];
            else
                for (int64_t q = q0; q < q1; q++) d[q * s->sw] += src[q];
        }
    }
}

/* A stride-2 conv's lowering straight from x's rows to bf16 (dse_bf16_s2):
 * the same values as lower_row's packed, without the float row between. Row k's output rows
 * [p0, p1), Q values each at out (pairs: the pair of rows k, k + 1, adjacent taps of one
 * input row). */
static int s2_lowers(const struct bshape *s) {
    return s->sw == 2;
}

static int s2_pairs(const struct bshape *s, int64_t k) {
    return s2_lowers(s) && s->dw == 1 && k + 1 < s->CRS && k % s->S + 1 < s->S;
}

static void lower_s2(const struct bshape *s, const float *x, int64_t k, int64_t p0, int64_t p1, void *out, int pairs,
                     int isa) {
    const int64_t c = k / (s->R * s->S), r = k / s->S % s->R, t = k % s->S, off = t * s->dw - s->pw;
    const size_t unit = pairs ? sizeof(uint32_t) : sizeof(dse_bf16);
    for (int64_t p = p0; p < p1; p++) {
        char *d = (char *)out + (size_t)((p - p0) * s->Q) * unit;
        const int64_t ih = p * s->sh - s->ph + r * s->dh;
        if (ih < 0 || ih >= s->H) memset(d, 0, (size_t)s->Q * unit);
        else dse_bf16_s2(x + c * s->HW + ih * s->W, s->W, off, s->Q, pairs, d, isa);
    }
}

/* Output rows [p0, p1) of image x lowered into k-pairs bp [KP][ldb], n = (p1 - p0) Q of each
 * row; tmp: 2 n floats. */
static void lower_pairs(const struct bshape *s, const float *x, const dse_bf16 *x16, int64_t p0, int64_t p1,
                        uint32_t *bp, int64_t ldb, float *tmp, int isa) {
    const int64_t n = (p1 - p0) * s->Q;
    if (x16) { /* stored in bf16: a 1x1 conv (dse_cpu_bf16_io) */
        DSE_ASSERT(s->is_1x1);
        dse_bf16_pairs_of_rows(x16 + p0 * s->Q, s->C, n, s->HW, bp, ldb, isa);
        return;
    }
    if (s->is_1x1) { /* stride 1, no pad: output pixel = input pixel */
        dse_bf16_pack_b(x + p0 * s->Q, s->C, n, s->HW, bp, ldb, isa);
        return;
    }
    for (int64_t kp = 0; kp < s->KP; kp++) {
        const int rows = 2 * kp + 1 < s->CRS ? 2 : 1;
        if (s2_pairs(s, 2 * kp)) {
            lower_s2(s, x, 2 * kp, p0, p1, bp + kp * ldb, 1, isa);
            continue;
        }
        for (int j = 0; j < rows; j++) lower_row(s, x, 2 * kp + j, p0, p1, tmp + j * n, isa);
        dse_bf16_pack_b(tmp, rows, n, n, bp + kp * ldb, ldb, isa);
    }
}

/* A row length of k-pairs rounded up to whole cache lines (16 words): an AMX tile's 16 rows
 * then take 16 lines, not up to 32 (v1.0's conv10 forward, C = A B at N = 169, 1000 x 256
 * pairs: 213 -> 156 us). */
static int64_t lines16(int64_t n) { return (n + 15) / 16 * 16; }

/* Image x lowered into bf16 rows: row k's P Q values at out + k ldo (a chunk's images
 * side by side in each row); tmp: PQ floats. */
static void lower_rows(const struct bshape *s, const float *x, const dse_bf16 *x16, dse_bf16 *out, int64_t ldo,
                       float *tmp, int isa) {
    if (x16) { /* stored in bf16: a 1x1 conv */
        DSE_ASSERT(s->is_1x1);
        copy_rows16(x16, s->C, s->PQ, s->HW, out, ldo, s->PQ);
        return;
    }
    if (s->is_1x1) {
        dse_bf16_pack_rows(x, s->C, s->PQ, s->HW, out, ldo, s->PQ, isa);
        return;
    }
    for (int64_t k = 0; k < s->CRS; k++) {
        if (s2_lowers(s)) {
            lower_s2(s, x, k, 0, s->P, out + k * ldo, 0, isa);
            continue;
        }
        lower_row(s, x, k, 0, s->P, tmp, isa);
        dse_bf16_pack_rows(tmp, 1, s->PQ, s->PQ, out + k * ldo, ldo, s->PQ, isa);
    }
}

/* A chunk of nb images' row length: nb P Q rounded up to 32 (dse_mm_nt_bf16's L). */
static int64_t chunk_row(const struct bshape *s, int64_t nb) {
    return (nb * s->PQ + 31) / 32 * 32;
}

/* The tail [from, ld) of each of rows rows of ld zeroed. */
static void zero_tails(dse_bf16 *rows_, int64_t rows, int64_t ld, int64_t from) {
    for (int64_t r = 0; r < rows; r++) memset(rows_ + r * ld + from, 0, (size_t)(ld - from) * sizeof(dse_bf16));
}

static char *ws_at(struct dse_cpu_ctx *cx, int t) { return cx->ws[t].p; }

/* Bytes rounded up to 64 (the workspace's pieces stay aligned): a short name for the many uses. */
static size_t al(size_t b) { return dse_cpu_al64(b); }

/* ---- forward ---------------------------------------------------------------------------- */

struct dgeo;

struct bjob {
    struct dse_cpu_ctx   *cx;
    struct dse_node      *n;
    struct bshape         s;
    int                   isa;
    const uint32_t       *wp;      /* forward: w's pairs [K][KP]; backward: w^T's [CRS][(K + 1) / 2] */
    struct dse_cpu_slices sl;
    int64_t               chunk;   /* backward: images per weight-gradient chunk */
    int                   depth;   /* backward: weight-gradient buffers a thread holds (wt_depth) */
    size_t                wt_at;   /* where its tree and buffers begin in each thread's workspace */
    /* direct (section below) */
    struct dgeo          *g;
    const int64_t        *boff, *boff_w; /* forward's or the data gradient's B offsets; the
                                            weight gradient's */
    const uint32_t       *wx;      /* the data gradient's turned filters' pairs */
    int                   fuse;    /* backward: the ReLU's mask and the bias gradient taken
                                      with dy's rows (dse_cpu_conv_bf16_fuses) */
    double               *db_part; /* then each slice's bias sums [slice][K] */
};

/* A forward pass's work for thread t of nt: images, and with fewer images than threads
 * (inference at batch 1) blocks of each image too: of output rows where the image is
 * lowered (each block lowers only its rows; blocks of channels each lowered the whole image
 * again, and 2 threads ran batch 1 at 1.3x one), of output channels on padded planes
 * (section "direct", whose padding is cheap). An output's chain does not depend on the
 * rows or columns beside it: the same bits either way. */
struct fwd_item {
    int64_t i, k0, k1, p0, p1;
};

static int fwd_items(const struct bshape *s, int t, int nt, int64_t *a0, int64_t *a1) {
    const int kb = s->N < nt ? nt : 1;
    dse_cpu_share(s->N * kb, t, nt, a0, a1);
    return kb;
}

static struct fwd_item fwd_item_of(const struct bshape *s, int kb, int by_rows, int64_t a) {
    struct fwd_item it = { .i = a / kb, .k0 = 0, .k1 = s->K, .p0 = 0, .p1 = s->P };
    dse_cpu_share(by_rows ? s->P : s->K, (int)(a % kb), kb, by_rows ? &it.p0 : &it.k0, by_rows ? &it.p1 : &it.k1);
    return it;
}

/* Output rows an image's lowering takes at once forward: its pairs within FWD_BLOCK_BYTES,
 * so the product reads them from L2 rather than memory (v1.0's conv1, lowered until it went
 * by phases, took 3.6 MB an image: its forward went 40 -> 37.5 ms at batch 16), at least one
 * row; from the shape only. Each output's chain is the same whatever the block: the same bits. */
#define FWD_BLOCK_BYTES ((size_t)256 << 10)

static int64_t fwd_rows(const struct bshape *s) {
    const int64_t per = s->KP * s->Q * (int64_t)sizeof(uint32_t), r = (int64_t)FWD_BLOCK_BYTES / per;
    return r < 1 ? 1 : r > s->P ? s->P : r;
}

/* Columns of a block whose K float sums are kept (within FWD_BLOCK_BYTES, a multiple of 64)
 * before they are rounded into an output stored in bf16. */
static int64_t out_cols(const struct bshape *s) {
    const int64_t c = (int64_t)FWD_BLOCK_BYTES / (s->K * (int64_t)sizeof(float)) / 64 * 64;
    return c < 64 ? 64 : c;
}

static void fwd_part(void *arg, int t, int nt) {
    const struct bjob *j = arg;
    const struct bshape *s = &j->s;
    const struct dse_tensor *x = j->n->in[0], *y = j->n->out;
    const float *bias = j->n->bias ? j->n->bias->data : NULL;
    int64_t a0, a1;
    const int kb = fwd_items(s, t, nt, &a0, &a1);
    uint32_t *bp = (uint32_t *)ws_at(j->cx, t);
    const int64_t rows = fwd_rows(s), ncol = out_cols(s);
    float *tmp = (float *)(ws_at(j->cx, t) + al((size_t)(s->KP * lines16(rows * s->Q)) * sizeof(uint32_t)));
    float *yf = tmp + al((size_t)(2 * rows * s->Q) * sizeof(float)) / sizeof(float); /* y->bf16: [K][ncol] */
    for (int64_t a = a0; a < a1; a++) {
        const struct fwd_item it = fwd_item_of(s, kb, 1, a);
        for (int64_t p0 = it.p0; p0 < it.p1; p0 += rows) { /* lowered and multiplied while in L2 */
            const int64_t p1 = p0 + rows < it.p1 ? p0 + rows : it.p1, n = (p1 - p0) * s->Q;
            const int64_t ldb = lines16(n);
            lower_pairs(s, x->data + it.i * x->stride_n, x->bf16 ? data16(x) + it.i * x->stride_n : NULL, p0, p1,
                        bp, ldb, tmp, j->isa);
            struct dse_mm_bf16 m = { .M = s->K, .N = n, .KP = s->KP, .ap = j->wp, .lda = s->KP, .bp = bp,
                                     .ldb = ldb, .c = y->data + it.i * y->stride_n + p0 * s->Q, .ldc = s->PQ,
                                     .bias = bias, .relu = j->n->relu_out };
            if (!y->bf16) {
                dse_cpu_mm_bf16(&m, j->isa);
                continue;
            }
            dse_bf16 *y16 = (dse_bf16 *)(void *)y->data + it.i * y->stride_n + p0 * s->Q;
            for (int64_t n0 = 0; n0 < n; n0 += ncol) { /* columns' float sums in L2, then rounded into y */
                m.N = n - n0 < ncol ? n - n0 : ncol, m.bp = bp + n0, m.c = yf, m.ldc = ncol;
                dse_cpu_mm_bf16(&m, j->isa);
                dse_bf16_pack_rows(yf, s->K, m.N, ncol, y16 + n0, s->PQ, m.N, j->isa);
            }
        }
    }
}

static int direct_ok(const struct bshape *s);
static int by_phases(const struct bshape *s);
static enum dse_status fwd_direct(struct bjob *j);

int dse_cpu_writes_dx(const struct dse_cpu_ctx *cx, const struct dse_node *n) {
    if (n->op == DSE_OP_MAXPOOL) return 1; /* pool.c zeroes each plane as it begins it */
    return n->op == DSE_OP_CONV2D && dse_cpu_conv_bf16_runs(cx, n) && bshape_of(n).is_1x1; /* bwd_part */
}

int dse_cpu_takes_pool_dy(const struct dse_cpu_ctx *cx, const struct dse_node *n) {
    return n->op == DSE_OP_CONV2D && dse_cpu_conv_bf16_fuses(cx, n); /* every dy read is take_dy's */
}

int dse_cpu_takes_dy16(const struct dse_cpu_ctx *cx, const struct dse_node *n) {
    return dse_cpu_takes_pool_dy(cx, n) && dse_cpu_masks_dy(n) && n->out->bf16; /* take_dy's y16 rule */
}

int dse_cpu_bf16_io(const struct dse_cpu_ctx *cx, const struct dse_node *n, int out) {
    if (cx->bf16 == DSE_CPU_BF16_OFF) return 0;
    if (n->op == DSE_OP_MAXPOOL) return 1; /* pool.c: an input's planes turned into floats in cache */
    if (n->op != DSE_OP_CONV2D || !dse_cpu_conv_bf16_runs(cx, n)) return 0;
    const struct bshape s = bshape_of(n);
    return out || s.is_1x1 || (direct_ok(&s) && !by_phases(&s));
}

enum dse_status dse_cpu_conv_bf16_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    struct bjob j = { .cx = cx, .n = n, .s = bshape_of(n), .isa = dse_cpu_bf16_isa() };
    const struct bshape *s = &j.s;
    if (direct_ok(s)) return fwd_direct(&j);
    const size_t wbytes = al((size_t)(s->K * s->KP) * sizeof(uint32_t));
    const int64_t nb = fwd_rows(s) * s->Q; /* a block's columns */
    const size_t own = al((size_t)(s->KP * lines16(nb)) * sizeof(uint32_t)) + al((size_t)(2 * nb) * sizeof(float)) +
                       (n->out->bf16 ? al((size_t)(s->K * out_cols(s)) * sizeof(float)) : 0);
    for (int t = 0; t < cx->threads; t++) {
        void *p;
        enum dse_status st = dse_cpu_ctx_workspace_at(cx, t, own + (t ? 0 : wbytes), &p);
        if (st) return st;
    }
    uint32_t *wp = (uint32_t *)(ws_at(cx, 0) + own);
    dse_bf16_pack_a(n->weight->data, s->K, s->CRS, s->CRS, 1, wp, s->KP, j.isa);
    j.wp = wp;
    dse_cpu_run(cx, fwd_part, &j);
    return DSE_OK;
}

/* ---- backward ----------------------------------------------------------------------------- */

/* The weight gradient of a lowered or 1x1 conv with DW_MM_MIN_K output channels or more is
 * C = A B (dse_cpu_mm_bf16: dy's bf16 rows read as A's k-pairs, x's rows turned into B's by
 * dse_bf16_pair_cols; one chain per element over the chunk, carried in C across chunks) instead
 * of dot products (dse_cpu_mm_nt_bf16, whose 16 lanes are added once per chunk, dear where a
 * slice holds one image of a small map). Fewer channels leave too few rows to share each
 * packed B row (broadcast-bound: SqueezeNet's squeeze1x1s and conv1 were slower). From the
 * shape only (dse profile, v1.0 batch 16, one thread: conv10 47 -> 37 ms backward, fire8 and
 * fire9's expand1x1 about 10% less; 128 channels gained nothing measurable). */
#define DW_MM_MIN_K 256

static int dw_by_mm(const struct bshape *s) {
    return s->K >= DW_MM_MIN_K;
}

/* The slices' weight gradients (engine/slices.h): a thread adds its run of slices up as each
 * is done, by the slice tree, in `depth` buffers of its own (the most blocks its run holds at
 * once, as conv2d.c's float32 strategies), not one buffer per slice of the batch; tree_part
 * then adds the threads' blocks where the tree adds them. The same additions on the same
 * values whatever the threads: the same bits. */
static int wt_depth(const struct dse_cpu_ctx *cx, const struct dse_cpu_slices *sl) {
    int most = 0;
    for (int t = 0; t < cx->threads; t++) {
        int64_t k0, k1;
        int depth = 0;
        dse_cpu_share(sl->count, t, cx->threads, &k0, &k1);
        if (k0 < k1) dse_slice_blocks(sl->total, sl->first + (int)k0, sl->first + (int)k1, NULL, &depth);
        most = depth > most ? depth : most;
    }
    return most;
}

static size_t wt_bytes(int64_t nw, int depth) {
    return al(sizeof(struct dse_slice_tree)) + (size_t)depth * al((size_t)nw * sizeof(float));
}

static struct dse_slice_tree *wt_tree(const struct bjob *j, int t) {
    return (struct dse_slice_tree *)(void *)(ws_at(j->cx, t) + j->wt_at);
}

/* Thread t's run: its tree, and its free buffers. */
struct wt_run {
    struct dse_slice_tree *tr;
    float                 *free_[DSE_SLICE_STACK];
    int                    nfree;
    int64_t                nw;
};

static void wt_start(struct wt_run *w, const struct bjob *j, int t, int dw) {
    w->tr = dw ? wt_tree(j, t) : NULL, w->nfree = 0, w->nw = j->s.K * j->s.CRS;
    if (!dw) return;
    dse_slice_tree_init(w->tr, j->sl.total);
    for (int d = j->depth - 1; d >= 0; d--)
        w->free_[w->nfree++] = (float *)(void *)((char *)w->tr + al(sizeof(struct dse_slice_tree)) +
                                                 (size_t)d * al((size_t)w->nw * sizeof(float)));
}

static float *wt_take(struct wt_run *w) {
    if (!w->tr) return NULL;
    DSE_ASSERT(w->nfree > 0);
    return w->free_[--w->nfree];
}

/* Slice k's weight gradient, done in buf, into the thread's tree. */
static void wt_give(struct wt_run *w, const struct bjob *j, int64_t k, float *buf) {
    if (w->tr) dse_slice_push(w->tr, 0, j->sl.first + (int)k, buf, 0, w->nw, w->free_, &w->nfree);
}

/* A thread's backward scratch, in its workspace: the chunk's dy as bf16 rows [K][Lc] and its
 * lowered x [CRS][Lc], Lc = chunk_row (weight gradient); one image's dy in k-pairs
 * [(K + 1) / 2][lines16(PQ)] and its dcol [CRS][PQ] (data gradient); 2 PQ floats, a lowered
 * row, or before it take_dy's plane (dse_node.dy_pool), or with dx16 its block of
 * dx16_rows x lines16(PQ) floats. */
struct bscratch {
    size_t dyr, xr, xt, dyp, dcol, tmp, total;
};

static int64_t dx16_rows(const struct bshape *s);

static struct bscratch bscratch_of(const struct bshape *s, int64_t chunk, int dw, int dx, int dx16) {
    struct bscratch b = { 0 };
    b.dyr = 0;
    b.xr = b.dyr + (dw ? al((size_t)(s->K * chunk_row(s, chunk)) * sizeof(dse_bf16)) : 0);
    b.xt = b.xr + (dw ? al((size_t)(s->CRS * chunk_row(s, chunk)) * sizeof(dse_bf16)) : 0);
    b.dyp = b.xt + (dw && dw_by_mm(s) ? al((size_t)(s->CRS * chunk_row(s, chunk)) * sizeof(dse_bf16)) : 0);
    b.dcol = b.dyp + (dx ? al((size_t)((s->K + 1) / 2 * lines16(s->PQ)) * sizeof(uint32_t)) : 0);
    b.tmp = b.dcol + (dx && !s->is_1x1 ? al((size_t)(s->CRS * s->PQ) * sizeof(float)) : 0);
    b.total = b.tmp + al((size_t)(dx16 ? dx16_rows(s) * lines16(s->PQ) : 2 * s->PQ) * sizeof(float));
    return b;
}

/* Images a weight-gradient chunk takes: its packed dy and x within 512 KiB (in L2 while the
 * tiles sweep them, as conv2d.c's GEMM_BLOCK_BYTES), at least one, at most the largest
 * slice; from the shape only, never the threads. */
static int64_t bwd_chunk(const struct bshape *s, int64_t most) {
    const double per = (double)(s->K + s->CRS) * (double)s->PQ * sizeof(dse_bf16);
    const double nb = (double)((size_t)512 << 10) / per;
    return nb < 1.0 ? 1 : nb > (double)most ? most : (int64_t)nb;
}

/* Image i's dy as bf16 rows [K] at out, ldo apart; with j->fuse, masked by the fused ReLU and
 * its channels' sums added to part[K] in the same pass (dse_bf16_pack_dy: the bits of
 * conv2d.c's mask and bias passes, dse_cpu_slice_sums' order), so dy is read once from
 * memory instead of three times. Where dy is kept in bf16 (dse_tensor.grad16) its reader
 * did that pass (dx16): its rows are copied, its sums added. Returns where the rows are:
 * out, or with borrow (a caller reading the rows it is given back, PQ apart) and dy in bf16,
 * dy's own rows, nothing copied. */
static const dse_bf16 *take_dy(const struct bjob *j, int64_t i, dse_bf16 *out, int64_t ldo, double *part,
                               float *plane, int borrow) {
    const struct bshape *s = &j->s;
    const struct dse_tensor *y = j->n->out;
    if (y->grad16) {
        DSE_ASSERT(j->fuse && !j->n->dy_pool); /* dse_cpu_takes_dy16 */
        const dse_bf16 *d = (const dse_bf16 *)(const void *)y->grad + i * y->stride_n;
        for (int64_t k = 0; part && k < s->K; k++) part[k] += y->gsum[i * y->gsum_ld + k];
        if (borrow) return d;
        copy_rows16(d, s->K, s->PQ, s->PQ, out, ldo, s->PQ);
        return out;
    }
    const float *dy = y->grad + i * y->stride_n;
    if (!j->fuse) {
        DSE_ASSERT(!j->n->dy_pool); /* dse_cpu_takes_pool_dy: every such conv fuses */
        dse_bf16_pack_rows(dy, s->K, s->PQ, s->PQ, out, ldo, s->PQ, j->isa);
        return out;
    }
    const int mask = dse_cpu_masks_dy(j->n);
    const float *yf = mask && !y->bf16 ? y->data + i * y->stride_n : NULL;
    const uint16_t *y16 = mask && y->bf16 ? (const uint16_t *)(const void *)y->data + i * y->stride_n : NULL;
    const struct dse_node *pool = j->n->dy_pool;
    if (!pool) {
        dse_bf16_pack_dy(dy, s->K, s->PQ, s->PQ, yf, y16, out, ldo, part, j->isa);
        return out;
    }
    /* dy's planes made from the pool's (dse_node.dy_pool) into plane (PQ floats), each packed
     * as its row would be: the same bits, dy never written whole */
    const struct dse_tensor *px = pool->in[0];
    const int64_t c0 = (int64_t)(y->grad - px->grad) / s->PQ; /* y: channels c0.. of the pool's input */
    for (int64_t k = 0; k < s->K; k++) {
        dse_cpu_maxpool_dx_plane(pool, i * px->c + c0 + k, plane);
        dse_bf16_pack_dy(plane, 1, s->PQ, s->PQ, yf ? yf + k * s->PQ : NULL, y16 ? y16 + k * s->PQ : NULL,
                         out + k * ldo, ldo, part ? part + k : NULL, j->isa);
    }
    return out;
}

/* Channels of the data gradient dx16 multiplies at once: their float products within
 * FWD_BLOCK_BYTES (in L2 while they are masked and rounded), a multiple of 16, at least 16,
 * at most C. Each product's chain is the same whatever the block: the same bits. */
static int64_t dx16_rows(const struct bshape *s) {
    int64_t r = (int64_t)FWD_BLOCK_BYTES / (lines16(s->PQ) * (int64_t)sizeof(float)) / 16 * 16;
    r = r < 16 ? 16 : r;
    return r > s->C ? s->C : r;
}

/* Image i's data gradient of a 1x1 conv into its input's bf16 gradient (dse_tensor.grad16):
 * w^T dy's products (dyp: dy's pairs) in blocks of channels in cache at tmp, each channel
 * masked by the ReLU of the conv writing it, rounded and summed by dse_bf16_pack_dy as that
 * conv's take_dy would have done from the products stored as floats: the same bits. */
static void dx16(const struct bjob *j, int64_t i, const uint32_t *dyp, float *tmp) {
    const struct bshape *s = &j->s;
    const struct dse_tensor *x = j->n->in[0];
    const int64_t KP2 = (s->K + 1) / 2, rows = dx16_rows(s);
    dse_bf16 *g = (dse_bf16 *)(void *)x->grad + i * x->stride_n;
    const uint16_t *x16 = (const uint16_t *)(const void *)x->data + i * x->stride_n;
    double *sums = x->gsum + i * x->gsum_ld;
    DSE_ASSERT(s->is_1x1 && x->bf16 && j->n->dx_whole);
    for (int64_t c0 = 0; c0 < s->C; c0 += rows) {
        const int64_t nr = s->C - c0 < rows ? s->C - c0 : rows;
        const struct dse_mm_bf16 m = { .M = nr, .N = s->PQ, .KP = KP2, .ap = j->wp + c0 * KP2, .lda = KP2,
                                       .bp = dyp, .ldb = lines16(s->PQ), .c = tmp, .ldc = lines16(s->PQ) };
        dse_cpu_mm_bf16(&m, j->isa);
        for (int64_t c = c0; c < c0 + nr; c++) sums[c] = 0.0;
        for (int64_t c = c0; c < c0 + nr; c++) /* each row: tmp's are lines16(PQ) apart, the mask's PQ */
            dse_bf16_pack_dy(tmp + (c - c0) * lines16(s->PQ), 1, s->PQ, s->PQ, NULL, x16 + c * s->PQ, g + c * s->PQ,
                             s->PQ, sums + c, j->isa);
    }
}

static void bwd_part(void *arg, int t, int nt) {
    const struct bjob *j = arg;
    const struct bshape *s = &j->s;
    const struct dse_tensor *x = j->n->in[0], *y = j->n->out;
    const int dw = j->n->weight->grad != NULL;
    const struct bscratch b = bscratch_of(s, j->chunk, dw, x->grad != NULL, x->grad16);
    char *ws = ws_at(j->cx, t);
    dse_bf16 *dyr = (dse_bf16 *)(ws + b.dyr), *xr = (dse_bf16 *)(ws + b.xr);
    uint32_t *dyp = (uint32_t *)(ws + b.dyp), *xt = (uint32_t *)(ws + b.xt);
    const int by_mm = dw_by_mm(s);
    float *dcol = (float *)(ws + b.dcol), *tmp = (float *)(ws + b.tmp);
    const int64_t KP2 = (s->K + 1) / 2;
    int64_t k0, k1;
    struct wt_run wr;
    wt_start(&wr, j, t, dw);
    dse_cpu_share(j->sl.count, t, nt, &k0, &k1);
    for (int64_t k = k0; k < k1; k++) {
        int64_t i0, i1;
        dse_cpu_slice(&j->sl, (int)k, &i0, &i1);
        float *buf = wt_take(&wr);
        double *part = j->db_part ? j->db_part + k * s->K : NULL; /* this slice's bias sums */
        for (int64_t c = 0; part && c < s->K; c++) part[c] = 0.0;
        for (int64_t n0 = i0; n0 < i1; n0 += j->chunk) {
            const int64_t nb = i1 - n0 < j->chunk ? i1 - n0 : j->chunk, Lc = chunk_row(s, nb);
            if (buf) { /* dw (= on the slice's first chunk) += dy col^T over the chunk's images, side by side */
                for (int64_t i = 0; i < nb; i++) {
                    take_dy(j, n0 + i, dyr + i * s->PQ, Lc, part, tmp, 0); /* the rows in dyr */
                    lower_rows(s, x->data + (n0 + i) * x->stride_n,
                               x->bf16 ? data16(x) + (n0 + i) * x->stride_n : NULL, xr + i * s->PQ, Lc, tmp, j->isa);
                }
                zero_tails(dyr, s->K, Lc, nb * s->PQ);
                zero_tails(xr, s->CRS, Lc, nb * s->PQ);
                if (by_mm) { /* dw (= on the slice's first chunk) += dy's pairs x's pairs, in order */
                    dse_bf16_pair_cols(xr, s->CRS, Lc, Lc, xt, s->CRS, j->isa);
                    const struct dse_mm_bf16 mm = { .M = s->K, .N = s->CRS, .KP = Lc / 2, .ap = (const uint32_t *)dyr,
                                                    .lda = Lc / 2, .bp = xt, .ldb = s->CRS, .c = buf, .ldc = s->CRS,
                                                    .acc = n0 != i0 };
                    dse_cpu_mm_bf16(&mm, j->isa);
                } else {
                const struct dse_mm_nt_bf16 m = { .M = s->K, .N = s->CRS, .L = Lc, .imgs = 1, .a = dyr, .lda = Lc,
                                                  .b = xr, .ldb = Lc, .c = buf, .ldc = s->CRS, .set = n0 == i0 };
                dse_cpu_mm_nt_bf16(&m, j->isa);
                }
            }
            for (int64_t i = n0; x->grad && i < n0 + nb; i++) { /* dx_i += (dx_whole: =) w^T dy_i */
                if (buf) /* dy's pairs from its rows packed above: dy rounded once */
                    dse_bf16_pairs_of_rows(dyr + (i - n0) * s->PQ, s->K, s->PQ, Lc, dyp, lines16(s->PQ), j->isa);
                else { /* no weight gradient: never a dy_pool or grad16 conv's (dse_cpu_takes_pool_dy) */
                    DSE_ASSERT(!j->n->dy_pool && !y->grad16);
                    dse_bf16_pack_b(y->grad + i * y->stride_n, s->K, s->PQ, s->PQ, dyp, lines16(s->PQ), j->isa);
                }
                if (x->grad16) { /* kept in bf16 (plan_grad16) */
                    dx16(j, i, dyp, tmp);
                    continue;
                }
                float *dx = x->grad + i * x->stride_n;
                struct dse_mm_bf16 m = { .M = s->CRS, .N = s->PQ, .KP = KP2, .ap = j->wp, .lda = KP2, .bp = dyp,
                                         .ldb = lines16(s->PQ), .c = dx, .ldc = s->PQ, .acc = 1 };
                if (s->is_1x1) { /* dx_whole: stored, not added to the zeroed gradient (the same bits) */
                    m.acc = !j->n->dx_whole;
                    dse_cpu_mm_bf16(&m, j->isa);
                    continue;
                }
                m.c = dcol, m.acc = 0;
                dse_cpu_mm_bf16(&m, j->isa);
                col2im_add(s, dcol, dx);
            }
        }
        wt_give(&wr, j, k, buf);
    }
}

/* The threads' blocks added where the slice tree adds them, over elements [lo, hi), into dw;
 * the blocks that are left are one, unless this is one of several ranks whose run of slices
 * is not a whole subtree: then the first goes to dw and the others to the node's dw_blocks
 * (engine.h), which the ranks add where the tree does (engine/model.c), as conv2d.c's
 * float32 strategies leave theirs. */
struct tree_job {
    const struct bjob *j;
    float             *dw;
};

static void tree_part(void *arg, int64_t lo, int64_t hi) {
    const struct tree_job *r = arg;
    struct dse_slice_tree tr;
    dse_slice_tree_init(&tr, r->j->sl.total);
    for (int t = 0; t < r->j->cx->threads; t++) {
        const struct dse_slice_tree *own = wt_tree(r->j, t);
        for (int b = 0; b < own->n; b++) dse_slice_push(&tr, own->b[b].level, own->b[b].index, own->b[b].buf, lo, hi, NULL, NULL);
    }
    DSE_ASSERT(tr.n >= 1 && (tr.n == 1 || r->j->n->dw_blocks));
    for (int64_t e = lo; e < hi; e++) r->dw[e] += tr.b[0].buf[e];
    const int64_t nw = r->j->s.K * r->j->s.CRS;
    for (int b = 1; b < tr.n; b++)
        memcpy(r->j->n->dw_blocks + (b - 1) * nw + lo, tr.b[b].buf + lo, (size_t)(hi - lo) * sizeof(float));
}

/* ---- direct: stride-1 convs on padded planes, stride 2 by phases -------------------------- */
/* A stride-1 conv (any kernel, dilation, and pads the kernel reaches over) multiplies the
 * padded input planes themselves, nothing lowered: output pixel (p, q) is column n = p Wp + q
 * of a grid as wide as the padded input, and k-pair (c2, r, t) (channels 2 c2, 2 c2 + 1) is
 * pair plane c2 shifted by r dh Wp + t dw (dse_mm_bf16.boff); the grid's Wp - Q last columns
 * are computed and dropped. The data gradient is the same product on dy padded by
 * (R - 1) dh - ph and (S - 1) dw - pw with the filters turned (pairs over the output
 * channels); the weight gradient dots dy on the grid (zero in the dropped columns) with x's
 * padded bf16 planes shifted the same way (dse_mm_nt_bf16.boff). The lowering's R S passes
 * over the input become one: it cost as much as the product on SqueezeNet's 3x3 convs. */
#define DIRECT_MIN_CHANNELS 4 /* fewer inputs (conv1 on gray images) waste half a pair a tap */

/* Stride 2 (dilation 1, a kernel of 2 x 2 or more) by phases: the padded input's element
 * (2 u + a, 2 v + b) is element (u, v) of phase plane (a, b), and output (p, q) sums tap
 * (r, s) times phase (r % 2, s % 2)'s element (p + r / 2, q + s / 2): a stride-1 product on
 * planes half as wide, the grid W2 = ceil(Wp / 2) columns wide. Forward, the pairs are two
 * adjacent taps of a row (2 s', 2 s' + 1; a missing last one zero): the pair plane of channel
 * c and row parity a is the padded rows 2 u + a themselves in bf16 (pair v = elements 2 v,
 * 2 v + 1), k-pair (c, r, s') shifted by (r / 2) W2 + s'; C R ceil(S / 2) pairs (v1.0's conv1:
 * 84, against the lowering's 74, and nothing lowered). The weight gradient dots dy's grid
 * with the four phase planes of each channel in bf16 rows, tap (c, r, s) shifted by
 * (r / 2) W2 + s / 2. A conv with a data gradient takes the lowered backward whole (conv1
 * takes none, so its backward goes by phases). An odd
 * kernel's last pair has a zero weight against a real input (the lowering put the zero in B):
 * an infinite input there gives NaN rather than the output the other taps give; it matters
 * only once activations are no longer finite. */
static int by_phases(const struct bshape *s) {
    return s->sh == 2 && s->sw == 2 && s->dh == 1 && s->dw == 1 && s->R >= 2 && s->S >= 2;
}

struct dgeo {
    int     phases;         /* by_phases: Hp, Wp a phase plane's rows and pair columns */
    int64_t rplanes;        /* the bf16 planes the weight gradient reads: C, or 4 C by phases */
    int64_t Hp, Wp, plane;  /* forward: the padded input's pair planes and their stride */
    int64_t qh, qw, Wq, qplane; /* data gradient: dy's pads, padded width, pair plane stride */
    int64_t L, bplane;      /* weight gradient: a dy grid row (P Wp rounded up to 32) and the
                               stride of x's padded bf16 planes */
    int64_t C2, K2, KPf, KPx; /* channel pairs in and out; k-pairs forward, data gradient */
};

static int direct_ok(const struct bshape *s) {
    if (by_phases(s)) return 1;
    return !s->is_1x1 && s->sh == 1 && s->sw == 1 && s->ph <= (s->R - 1) * s->dh && s->pw <= (s->S - 1) * s->dw &&
           s->C >= DIRECT_MIN_CHANNELS;
}

static int64_t up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

static struct dgeo dgeo_of(const struct bshape *s) {
    if (by_phases(s)) {
        const int64_t R2 = (s->R + 1) / 2, S2 = (s->S + 1) / 2;
        struct dgeo g = { .phases = 1, .rplanes = 4 * s->C, .Hp = (s->H + 2 * s->ph + 1) / 2,
                          .Wp = (s->W + 2 * s->pw + 1) / 2 };
        const int64_t reads = (s->P + R2 - 1) * g.Wp + S2; /* past the grid's last shifted read */
        g.plane = up((reads > g.Hp * g.Wp ? reads : g.Hp * g.Wp), 16);
        g.L = up(s->P * g.Wp, 32);
        const int64_t breads = g.L + (R2 - 1) * g.Wp + S2;
        g.bplane = up(breads > g.Hp * g.Wp ? breads : g.Hp * g.Wp, 32);
        g.C2 = 2 * s->C, g.KPf = s->C * s->R * S2;
        return g;
    }
    struct dgeo g = { .rplanes = s->C, .Hp = s->H + 2 * s->ph, .Wp = s->W + 2 * s->pw };
    const int64_t reach = (s->R - 1) * s->dh, side = (s->S - 1) * s->dw;
    g.plane = up(g.Hp * g.Wp + side, 16); /* a shifted row read past the last one stays in */
    g.qh = reach - s->ph, g.qw = side - s->pw, g.Wq = s->Q + 2 * g.qw;
    g.qplane = up((s->P + 2 * g.qh) * g.Wq + side, 16);
    g.L = up(s->P * g.Wp, 32);
    g.bplane = up(g.L + reach * g.Wp + side, 32);
    g.C2 = (s->C + 1) / 2, g.K2 = (s->K + 1) / 2;
    g.KPf = g.C2 * s->R * s->S, g.KPx = g.K2 * s->R * s->S;
    return g;
}

/* x's C planes [H][W] as pair planes (channels 2 c2, 2 c2 + 1), padded, out [C2][plane];
 * x16: the planes stored in bf16 (x unused). */
static void pad_pairs(const float *x, const dse_bf16 *x16, int64_t C, int64_t H, int64_t W, int64_t ph, int64_t pw,
                      int64_t Wp, int64_t plane, uint32_t *out, int isa) {
    for (int64_t c2 = 0; c2 < (C + 1) / 2; c2++) {
        uint32_t *o = out + c2 * plane;
        memset(o, 0, (size_t)plane * sizeof *o);
        const int64_t rows = 2 * c2 + 1 < C ? 2 : 1, at = 2 * c2 * H * W;
        for (int64_t h = 0; h < H; h++)
            if (x16) dse_bf16_pairs_of_rows(x16 + at + h * W, rows, W, H * W, o + (h + ph) * Wp + pw, W, isa);
            else dse_bf16_pack_b(x + at + h * W, rows, W, H * W, o + (h + ph) * Wp + pw, W, isa);
    }
}

/* x's C planes as bf16, padded, out [C][bplane]; x16: the planes stored in bf16 (x unused). */
static void pad_rows(const struct bshape *s, const struct dgeo *g, const float *x, const dse_bf16 *x16,
                     dse_bf16 *out, int isa) {
    for (int64_t c = 0; c < s->C; c++) {
        dse_bf16 *o = out + c * g->bplane;
        memset(o, 0, (size_t)g->bplane * sizeof *o);
        if (x16) {
            for (int64_t h = 0; h < s->H; h++)
                memcpy(o + (h + s->ph) * g->Wp + s->pw, x16 + c * s->HW + h * s->W, (size_t)s->W * sizeof *o);
            continue;
        }
        for (int64_t h = 0; h < s->H; h++)
            dse_bf16_pack_rows(x + c * s->HW + h * s->W, 1, s->W, s->W, o + (h + s->ph) * g->Wp + s->pw, s->W, s->W,
                               isa);
    }
}

/* By phases (by_phases): x's pair planes [2 C][plane], channel c's padded rows of parity a at
 * plane 2 c + a, row u (padded row 2 u + a) as bf16 pairs. */
static void phase_pairs(const struct bshape *s, const struct dgeo *g, const float *x, uint32_t *out, int isa) {
    for (int64_t pl = 0; pl < 2 * s->C; pl++) {
        uint32_t *o = out + pl * g->plane;
        memset(o, 0, (size_t)g->plane * sizeof *o);
        const int64_t c = pl / 2, a = pl % 2;
        for (int64_t u = 0; u < g->Hp; u++) {
            const int64_t h = 2 * u + a - s->ph;
            if (h >= 0 && h < s->H)
                dse_bf16_pack_rows(x + c * s->HW + h * s->W, 1, s->W, s->W,
                                   (dse_bf16 *)(void *)(o + u * g->Wp) + s->pw, s->W, s->W, isa);
        }
    }
}

/* By phases: x's phase planes as bf16 rows [4 C][bplane], plane (2 c + a) 2 + b holding the
 * padded elements (2 u + a, 2 v + b) at u Wp + v; tmp: Wp floats. */
static void phase_rows(const struct bshape *s, const struct dgeo *g, const float *x, dse_bf16 *out, float *tmp,
                       int isa) {
    for (int64_t pl = 0; pl < 4 * s->C; pl++) {
        dse_bf16 *o = out + pl * g->bplane;
        memset(o, 0, (size_t)g->bplane * sizeof *o);
        const int64_t c = pl / 4, a = pl / 2 % 2, b = pl % 2;
        /* v with 2 v + b - pw in [0, W): from v0, n of them */
        const int64_t v0 = s->pw > b ? (s->pw - b + 1) / 2 : 0, last = s->W - 1 + s->pw - b;
        const int64_t n = (last >= 0 ? last / 2 + 1 : 0) - v0;
        for (int64_t u = 0; n > 0 && u < g->Hp; u++) {
            const int64_t h = 2 * u + a - s->ph;
            if (h < 0 || h >= s->H) continue;
            dse_cpu_copy_strided(x + c * s->HW + h * s->W + 2 * v0 + b - s->pw, n, 2, tmp, isa);
            dse_bf16_pack_rows(tmp, 1, n, n, o + u * g->Wp + v0, n, n, isa);
        }
    }
}

/* Output rows a direct forward multiplies at once: the block's K float sums within
 * FWD_BLOCK_BYTES (in L2 until they are copied or rounded into y; v1.0's conv1 grid is
 * 4.9 MB an image), at least one; from the shape only (each output's chain is the same
 * whatever the block). */
static int64_t direct_rows(const struct bshape *s, const struct dgeo *g) {
    const int64_t r = (int64_t)FWD_BLOCK_BYTES / (s->K * g->Wp * (int64_t)sizeof(float));
    return r < 1 ? 1 : r > s->P ? s->P : r;
}

static void fwd_direct_part(void *arg, int t, int nt) {
    const struct bjob *j = arg;
    const struct bshape *s = &j->s;
    const struct dgeo *g = j->g;
    const struct dse_tensor *x = j->n->in[0], *y = j->n->out;
    const int64_t rows = direct_rows(s, g);
    const float *bias = j->n->bias ? j->n->bias->data : NULL;
    int64_t a0, a1;
    const int kb = fwd_items(s, t, nt, &a0, &a1);
    uint32_t *xq = (uint32_t *)ws_at(j->cx, t);
    float *tmp = (float *)(ws_at(j->cx, t) + al((size_t)(g->C2 * g->plane) * sizeof(uint32_t)));
    for (int64_t a = a0; a < a1; a++) {
        const struct fwd_item it = fwd_item_of(s, kb, 0, a);
        if (it.k0 >= it.k1) continue;
        const float *xi = x->data + it.i * x->stride_n;
        if (g->phases) {
            DSE_ASSERT(!x->bf16); /* dse_cpu_bf16_io: a float input */
            phase_pairs(s, g, xi, xq, j->isa);
        } else pad_pairs(xi, x->bf16 ? data16(x) + it.i * x->stride_n : NULL, s->C, s->H, s->W, s->ph, s->pw, g->Wp,
                         g->plane, xq, j->isa);
        for (int64_t p0 = 0; p0 < s->P; p0 += rows) { /* the grid's rows p0.. (columns p0 Wp..) */
            const int64_t pn = s->P - p0 < rows ? s->P - p0 : rows, N = pn * g->Wp, ldt = lines16(N);
            const struct dse_mm_bf16 m = { .M = it.k1 - it.k0, .N = N, .KP = g->KPf, .ap = j->wp + it.k0 * g->KPf,
                                           .lda = g->KPf, .bp = xq + p0 * g->Wp, .boff = j->boff,
                                           .c = tmp + it.k0 * ldt, .ldc = ldt, .bias = bias ? bias + it.k0 : NULL,
                                           .relu = j->n->relu_out };
            dse_cpu_mm_bf16(&m, j->isa);
            if (y->bf16) { /* rounded once, as the grid's rows are taken */
                dse_bf16 *yi = (dse_bf16 *)(void *)y->data + it.i * y->stride_n + p0 * s->Q;
                for (int64_t k = it.k0; k < it.k1; k++)
                    dse_bf16_pack_rows(tmp + k * ldt, pn, s->Q, g->Wp, yi + k * s->PQ, s->Q, s->Q, j->isa);
                continue;
            }
            float *yi = y->data + it.i * y->stride_n + p0 * s->Q;
            for (int64_t k = it.k0; k < it.k1; k++)
                for (int64_t p = 0; p < pn; p++)
                    memcpy(yi + k * s->PQ + p * s->Q, tmp + k * ldt + p * g->Wp, (size_t)s->Q * sizeof(float));
        }
    }
}

static enum dse_status fwd_direct(struct bjob *j) {
    const struct bshape *s = &j->s;
    struct dgeo g = dgeo_of(s);
    j->g = &g;
    const size_t own = al((size_t)(g.C2 * g.plane) * sizeof(uint32_t)) +
                       al((size_t)(s->K * lines16(direct_rows(s, &g) * g.Wp)) * sizeof(float));
    const size_t wbytes = al((size_t)(s->K * g.KPf) * sizeof(uint32_t)), obytes = al((size_t)g.KPf * sizeof(int64_t));
    for (int t = 0; t < j->cx->threads; t++) {
        void *p;
        enum dse_status st = dse_cpu_ctx_workspace_at(j->cx, t, own + (t ? 0 : wbytes + obytes), &p);
        if (st) return st;
    }
    uint32_t *wp = (uint32_t *)(ws_at(j->cx, 0) + own);
    int64_t *boff = (int64_t *)(ws_at(j->cx, 0) + own + wbytes);
    const float *w = j->n->weight->data;
    const int64_t S2 = (s->S + 1) / 2;
    const int64_t RS = s->R * s->S;
    if (g.phases) { /* pairs of adjacent taps 2 s2, 2 s2 + 1: kp = (c R + r) S2 + s2 */
        for (int64_t c = 0; c < s->C; c++)
            for (int64_t r = 0; r < s->R; r++)
                for (int64_t s2 = 0; s2 < S2; s2++)
                    boff[(c * s->R + r) * S2 + s2] = (2 * c + r % 2) * g.plane + r / 2 * g.Wp + s2;
        for (int64_t m = 0; m < s->K; m++) /* filter m's rows of taps (c, r) as A's rows */
            dse_bf16_pack_a(w + m * s->C * RS, s->C * s->R, s->S, s->S, 1, wp + m * g.KPf, S2, j->isa);
    } else { /* pairs over the channels 2 c2, 2 c2 + 1: kp = c2 R S + r S + t */
        for (int64_t c2 = 0; c2 < g.C2; c2++)
            for (int64_t r = 0; r < s->R; r++)
                for (int64_t t = 0; t < s->S; t++)
                    boff[(c2 * s->R + r) * s->S + t] = c2 * g.plane + r * s->dh * g.Wp + t * s->dw;
        for (int64_t m = 0; m < s->K; m++) /* filter m's channels as B's rows, its taps as columns */
            dse_bf16_pack_b(w + m * s->C * RS, s->C, RS, RS, wp + m * g.KPf, RS, j->isa);
    }
    j->wp = wp, j->boff = boff;
    j->cx->stats.bf16_phases += g.phases;
    dse_cpu_run(j->cx, fwd_direct_part, j);
    return DSE_OK;
}

/* A thread's direct backward scratch: the chunk's dy grids [chunk][K][L] and x's padded bf16
 * planes [chunk][rplanes][bplane] (weight gradient); one image's padded dy pairs
 * [K2][qplane] (data gradient); tmp, at least PQ floats: take_dy's plane (dse_node.dy_pool),
 * then the data gradient's grid [C][H Wq] or phase_rows' row; with j->fuse, one image's
 * masked dy rows [K][P Q] in bf16, which the grid and the pairs are both taken from. */
static size_t dscratch(const struct bshape *s, const struct dgeo *g, int64_t chunk, int dw, int dx, size_t *xb,
                       size_t *dyq, size_t *tmp, size_t *d16) {
    *xb = dw ? al((size_t)(chunk * s->K * g->L) * sizeof(dse_bf16)) : 0;
    *dyq = *xb + (dw ? al((size_t)(chunk * g->rplanes * g->bplane) * sizeof(dse_bf16)) : 0);
    *tmp = *dyq + (dx ? al((size_t)(g->K2 * g->qplane) * sizeof(uint32_t)) : 0);
    size_t tb = (size_t)s->PQ * sizeof(float); /* take_dy's plane; then dx_direct's grid, or phase_rows' row */
    if (dx && (size_t)(s->C * lines16(s->H * g->Wq)) * sizeof(float) > tb)
        tb = (size_t)(s->C * lines16(s->H * g->Wq)) * sizeof(float);
    if (g->phases && (size_t)g->Wp * sizeof(float) > tb) tb = (size_t)g->Wp * sizeof(float);
    *d16 = *tmp + al(tb);
    return *d16 + (dw ? al((size_t)(s->K * s->PQ) * sizeof(dse_bf16)) : 0);
}

static int64_t direct_chunk(const struct bshape *s, const struct dgeo *g, int64_t most) {
    const double per = (double)(s->K * g->L + g->rplanes * g->bplane) * sizeof(dse_bf16);
    const double nb = (double)((size_t)512 << 10) / per;
    return nb < 1.0 ? 1 : nb > (double)most ? most : (int64_t)nb;
}

/* dy's bf16 rows [K][P Q] at d on the grid: out[k][p Wp + q], zero for q >= Q and past P Wp
 * to L (grid_rows' layout and bits, from values already rounded). */
static void grid_of_rows(const struct bshape *s, const struct dgeo *g, const dse_bf16 *d, dse_bf16 *out, int isa) {
    for (int64_t k = 0; k < s->K; k++) {
        dse_bf16 *o = out + k * g->L;
        dse_bf16_spread_rows(d + k * s->PQ, s->P, s->Q, o, g->Wp, isa);
        memset(o + s->P * g->Wp, 0, (size_t)(g->L - s->P * g->Wp) * sizeof *o);
    }
}

/* dx_i += the turned filters on image i's dy padded: dy's floats, or d16 its rows in bf16. */
static void dx_direct(const struct bjob *j, int64_t i, const dse_bf16 *d16, uint32_t *dyq, float *tmp) {
    const struct bshape *s = &j->s;
    const struct dgeo *g = j->g;
    const struct dse_tensor *x = j->n->in[0], *y = j->n->out;
    const int64_t NX = s->H * g->Wq, ldt = lines16(NX); /* tmp's rows on whole lines */
    pad_pairs(d16 ? NULL : y->grad + i * y->stride_n, d16, s->K, s->P, s->Q, g->qh, g->qw, g->Wq, g->qplane, dyq,
              j->isa);
    const struct dse_mm_bf16 m = { .M = s->C, .N = NX, .KP = g->KPx, .ap = j->wx, .lda = g->KPx, .bp = dyq,
                                   .boff = j->boff, .c = tmp, .ldc = ldt };
    dse_cpu_mm_bf16(&m, j->isa);
    float *dx = x->grad + i * x->stride_n;
    for (int64_t c = 0; c < s->C; c++)
        for (int64_t h = 0; h < s->H; h++) {
            float *d = dx + c * s->HW + h * s->W;
            const float *src = tmp + c * ldt + h * g->Wq;
            for (int64_t w = 0; w < s->W; w++) d[w] += src[w];
        }
}

/* With a weight gradient (j->fuse), each image's dy is read from memory once (take_dy: masked,
 * its bias sums, bf16 rows; with dse_node.dy_pool made from the pool's in cache instead), its
 * grid and its data gradient's pairs then taken from those rows
 * while they are in cache, and its data gradient done before the next image's; without, dy's
 * floats (conv2d.c masked them) are packed for the data gradient. The weight gradient's and
 * the data gradient's chains are those of either order. */
static void bwd_direct_part(void *arg, int t, int nt) {
    const struct bjob *j = arg;
    const struct bshape *s = &j->s;
    const struct dgeo *g = j->g;
    const struct dse_tensor *x = j->n->in[0];
    const int dw = j->n->weight->grad != NULL;
    size_t ob, oq, ot, o16;
    dscratch(s, g, j->chunk, dw, x->grad != NULL, &ob, &oq, &ot, &o16);
    char *ws = ws_at(j->cx, t);
    dse_bf16 *dyg = (dse_bf16 *)ws, *xb = (dse_bf16 *)(ws + ob), *d16 = (dse_bf16 *)(ws + o16);
    uint32_t *dyq = (uint32_t *)(ws + oq);
    float *tmp = (float *)(ws + ot);
    int64_t k0, k1;
    struct wt_run wr;
    wt_start(&wr, j, t, dw);
    dse_cpu_share(j->sl.count, t, nt, &k0, &k1);
    for (int64_t k = k0; k < k1; k++) {
        int64_t i0, i1;
        dse_cpu_slice(&j->sl, (int)k, &i0, &i1);
        float *buf = wt_take(&wr);
        double *part = j->db_part ? j->db_part + k * s->K : NULL; /* this slice's bias sums */
        for (int64_t c = 0; part && c < s->K; c++) part[c] = 0.0;
        for (int64_t n0 = i0; n0 < i1; n0 += j->chunk) {
            const int64_t nb = i1 - n0 < j->chunk ? i1 - n0 : j->chunk;
            if (buf) { /* dw (= on the slice's first chunk) += dy's grid . x's shifted planes */
                for (int64_t i = 0; i < nb; i++) {
                    const dse_bf16 *d = take_dy(j, n0 + i, d16, s->PQ, part, tmp, 1);
                    grid_of_rows(s, g, d, dyg + i * s->K * g->L, j->isa);
                    if (x->grad) dx_direct(j, n0 + i, d, dyq, tmp);
                    const float *xi = x->data + (n0 + i) * x->stride_n;
                    dse_bf16 *xbi = xb + i * g->rplanes * g->bplane;
                    if (g->phases) {
                        DSE_ASSERT(!x->bf16); /* dse_cpu_bf16_io: a float input */
                        phase_rows(s, g, xi, xbi, tmp, j->isa);
                    }
                    else pad_rows(s, g, xi, x->bf16 ? data16(x) + (n0 + i) * x->stride_n : NULL, xbi, j->isa);
                }
                const struct dse_mm_nt_bf16 m = { .M = s->K, .N = s->CRS, .L = g->L, .imgs = nb, .a = dyg,
                                                  .lda = g->L, .a_is = s->K * g->L, .b = xb,
                                                  .b_is = g->rplanes * g->bplane,
                                                  .boff = j->boff_w, .c = buf, .ldc = s->CRS, .set = n0 == i0 };
                dse_cpu_mm_nt_bf16(&m, j->isa);
                continue;
            }
            DSE_ASSERT(!j->n->dy_pool && !j->n->out->grad16); /* no weight gradient: never such a conv's */
            for (int64_t i = n0; x->grad && i < n0 + nb; i++) dx_direct(j, i, NULL, dyq, tmp);
        }
        wt_give(&wr, j, k, buf);
    }
}

/* The direct backward's shared part in thread 0's workspace past `own`: the turned filters'
 * pairs wx [C][KPx] and their offsets, the weight gradient's offsets, the slices' buffers. */
static enum dse_status bwd_direct(struct bjob *j, int dw, int dx, size_t pbytes) {
    const struct bshape *s = &j->s;
    struct dgeo g = dgeo_of(s);
    j->g = &g;
    j->chunk = direct_chunk(s, &g, dse_cpu_slice_most(&j->sl));
    size_t ob, oq, ot, o16;
    const size_t own = al(dscratch(s, &g, j->chunk, dw, dx, &ob, &oq, &ot, &o16));
    const int64_t nw = s->K * s->CRS;
    const size_t wbytes = dx ? al((size_t)(s->C * g.KPx) * sizeof(uint32_t)) : 0;
    const size_t obytes = al((size_t)(g.KPx + s->CRS) * sizeof(int64_t));
    j->depth = dw ? wt_depth(j->cx, &j->sl) : 0, j->wt_at = own;
    const size_t tb = dw ? wt_bytes(nw, j->depth) : 0;
    for (int t = 0; t < j->cx->threads; t++) {
        void *p;
        enum dse_status st = dse_cpu_ctx_workspace_at(j->cx, t, own + tb + (t ? 0 : wbytes + obytes + pbytes), &p);
        if (st) return st;
    }
    char *sh = ws_at(j->cx, 0) + own + tb;
    uint32_t *wx = (uint32_t *)sh;
    int64_t *boff = (int64_t *)(sh + wbytes), *boff_w = boff + g.KPx;
    if (pbytes) j->db_part = (double *)(void *)(sh + wbytes + obytes);
    const float *w = j->n->weight->data;
    DSE_ASSERT(!(g.phases && dx)); /* dse_cpu_conv_bf16_bwd: the lowered data gradient */
    const int64_t RS = s->R * s->S;
    for (int64_t k2 = 0; !g.phases && k2 < g.K2; k2++) {
        for (int64_t r = 0; r < s->R; r++)
            for (int64_t t = 0; t < s->S; t++)
                boff[(k2 * s->R + r) * s->S + t] = k2 * g.qplane + r * s->dh * g.Wq + t * s->dw;
        const float *e = w + 2 * k2 * s->C * RS; /* output channels 2 k2, + 1 of w turned 180 degrees */
        if (dx) dse_bf16_pairs_turned(e, 2 * k2 + 1 < s->K ? e + s->C * RS : NULL, s->C, RS, wx + k2 * RS, g.KPx, j->isa);
    }
    for (int64_t c = 0; c < s->C; c++)
        for (int64_t r = 0; r < s->R; r++)
            for (int64_t t = 0; t < s->S; t++)
                boff_w[(c * s->R + r) * s->S + t] = /* by phases: phase plane (r % 2, t % 2) */
                    g.phases ? ((2 * c + r % 2) * 2 + t % 2) * g.bplane + r / 2 * g.Wp + t / 2
                             : c * g.bplane + r * s->dh * g.Wp + t * s->dw;
    j->wx = wx, j->boff = boff, j->boff_w = boff_w;
    j->cx->stats.bf16_phases += g.phases && dw;
    dse_cpu_run(j->cx, bwd_direct_part, j);
    return DSE_OK;
}

int dse_cpu_conv_bf16_fuses(const struct dse_cpu_ctx *cx, const struct dse_node *n) {
    return dse_cpu_conv_bf16_runs(cx, n) && n->weight->grad != NULL;
}

/* The lowered backward (section "backward" above), its bias sums' pbytes in thread 0's
 * workspace. */
static enum dse_status bwd_lowered(struct bjob *j, int dw, int dx, size_t pbytes) {
    const struct bshape *s = &j->s;
    struct dse_cpu_ctx *cx = j->cx;
    j->chunk = bwd_chunk(s, dse_cpu_slice_most(&j->sl));
    const struct bscratch b = bscratch_of(s, j->chunk, dw, dx, j->n->in[0]->grad16);
    const int64_t KP2 = (s->K + 1) / 2;
    const size_t wbytes = dx ? al((size_t)(s->CRS * KP2) * sizeof(uint32_t)) : 0;
    j->depth = dw ? wt_depth(cx, &j->sl) : 0, j->wt_at = b.total;
    const size_t tb = dw ? wt_bytes(s->K * s->CRS, j->depth) : 0;
    for (int t = 0; t < cx->threads; t++) {
        void *p;
        enum dse_status st = dse_cpu_ctx_workspace_at(cx, t, b.total + tb + (t ? 0 : wbytes + pbytes), &p);
        if (st) return st;
    }
    if (dx) { /* w^T's pairs: A[ci r s][k] = w[k][ci r s] */
        uint32_t *wp = (uint32_t *)(ws_at(cx, 0) + b.total + tb);
        dse_bf16_pack_a(j->n->weight->data, s->CRS, s->K, 1, s->CRS, wp, KP2, j->isa);
        j->wp = wp;
    }
    if (pbytes) j->db_part = (double *)(void *)(ws_at(cx, 0) + b.total + tb + wbytes);
    dse_cpu_run(cx, bwd_part, j);
    return DSE_OK;
}

/* With a weight gradient (dse_cpu_conv_bf16_fuses) both ways take the fused ReLU's mask and
 * the bias gradient with dy (take_dy), each slice's bias sums in db_part [slice][K]. */
enum dse_status dse_cpu_conv_bf16_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    float *dw = n->weight->grad;
    const struct dse_tensor *x = n->in[0];
    if (!dw && !x->grad) return DSE_OK;
    struct bjob j = { .cx = cx, .n = n, .s = bshape_of(n), .isa = dse_cpu_bf16_isa() };
    const struct bshape *s = &j.s;
    j.sl = dse_cpu_slices_of(cx, s->N);
    j.fuse = dse_cpu_conv_bf16_fuses(cx, n);
    float *db = j.fuse && n->bias ? n->bias->grad : NULL;
    const size_t pbytes = db ? al((size_t)(s->K * j.sl.count) * sizeof(double)) : 0;
    const int direct = direct_ok(s) && !(by_phases(s) && x->grad); /* by phases: no data gradient */
    const enum dse_status st = direct ? bwd_direct(&j, dw != NULL, x->grad != NULL, pbytes)
                                            : bwd_lowered(&j, dw != NULL, x->grad != NULL, pbytes);
    if (st) return st;
    for (int64_t k = 0; db && k < s->K; k++) { /* the slices' sums by the slice tree, as conv2d.c's bias pass */
        double part[DSE_SLICES_MAX];
        for (int sc = 0; sc < j.sl.count; sc++) part[sc] = j.db_part[sc * s->K + k];
        dse_cpu_db_slices(n, &j.sl, db, s->K, k, part);
    }
    if (dw) {
        const int64_t nw = s->K * s->CRS;
        struct tree_job r = { .j = &j, .dw = dw };
        dse_cpu_for(cx, nw, nw * j.sl.count, tree_part, &r);
    }
    return DSE_OK;
}

/* ---- fc ----------------------------------------------------------------------------------- */
/* x [N, D] (rows stride_n apart), w [K, D], y [N, K]; one thread (as fc.c's sgemms).
 * Forward: y = x w^T as dot products (dse_cpu_mm_nt_bf16: x and w as bf16 rows, D padded to
 * 32), + bias. Backward: dw += dy^T x and dx += dy w, each a chain over the summed index in
 * order (dse_cpu_mm_bf16). */

enum dse_status dse_cpu_fc_bf16_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int64_t N = x->n, K = y->c, D = dse_tensor_image(x), Dp = (D + 31) / 32 * 32;
    const int isa = dse_cpu_bf16_isa();
    void *p;
    const size_t xb = al((size_t)(N * Dp) * sizeof(dse_bf16));
    enum dse_status st = dse_cpu_ctx_workspace(cx, xb + (size_t)(K * Dp) * sizeof(dse_bf16), &p);
    if (st) return st;
    dse_bf16 *xr = p, *wr = (dse_bf16 *)((char *)p + xb);
    dse_bf16_pack_rows(x->data, N, D, x->stride_n, xr, Dp, Dp, isa);
    dse_bf16_pack_rows(n->weight->data, K, D, D, wr, Dp, Dp, isa);
    const struct dse_mm_nt_bf16 m = { .M = N, .N = K, .L = Dp, .imgs = 1, .a = xr, .lda = Dp, .b = wr, .ldb = Dp,
                                      .c = y->data, .ldc = y->stride_n, .set = 1 };
    dse_cpu_mm_nt_bf16(&m, isa);
    for (int64_t i = 0; n->bias && i < N; i++)
        for (int64_t k = 0; k < K; k++) y->data[i * y->stride_n + k] += n->bias->data[k];
    return DSE_OK;
}

enum dse_status dse_cpu_fc_bf16_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int64_t N = x->n, K = y->c, D = dse_tensor_image(x), NP = (N + 1) / 2, KP = (K + 1) / 2;
    const int isa = dse_cpu_bf16_isa();
    if (!n->weight->grad && !x->grad) return DSE_OK;
    const size_t wb = n->weight->grad ? al((size_t)(K * NP + NP * D) * sizeof(uint32_t)) : 0;
    const size_t xb = x->grad ? al((size_t)(N * KP + KP * D) * sizeof(uint32_t)) : 0;
    void *p;
    enum dse_status st = dse_cpu_ctx_workspace(cx, wb + xb, &p);
    if (st) return st;
    if (n->weight->grad) { /* dw [K][D] += dy^T [K][N] x [N][D] */
        uint32_t *ap = p, *bp = ap + K * NP;
        dse_bf16_pack_a(y->grad, K, N, 1, y->stride_n, ap, NP, isa);
        dse_bf16_pack_b(x->data, N, D, x->stride_n, bp, D, isa);
        const struct dse_mm_bf16 m = { .M = K, .N = D, .KP = NP, .ap = ap, .lda = NP, .bp = bp, .ldb = D,
                                       .c = n->weight->grad, .ldc = D, .acc = 1 };
        dse_cpu_mm_bf16(&m, isa);
    }
    if (x->grad) { /* dx [N][D] += dy [N][K] w [K][D] */
        uint32_t *ap = (uint32_t *)((char *)p + wb), *bp = ap + N * KP;
        dse_bf16_pack_a(y->grad, N, K, y->stride_n, 1, ap, KP, isa);
        dse_bf16_pack_b(n->weight->data, K, D, D, bp, D, isa);
        const struct dse_mm_bf16 m = { .M = N, .N = D, .KP = KP, .ap = ap, .lda = KP, .bp = bp, .ldb = D,
                                       .c = x->grad, .ldc = x->stride_n, .acc = 1 };
        dse_cpu_mm_bf16(&m, isa);
    }
    return DSE_OK;
}
