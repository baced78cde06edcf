/* slices.h: the fixed pieces every sum over a batch is made of (issue #18 item 1), so that
 * a result depends on the seed and the batch, never on the thread count or the ranks.
 *
 * A batch of n images is cut into dse_slices(n) slices of consecutive images (sizes
 * differing by at most one, spread evenly: dse_slice_images). A sum over the batch (a weight or bias
 * gradient, the loss) is the sum of the slices' partial sums, each partial summed image
 * after image in one fixed way, and the partials are added in one fixed tree: the complete
 * binary tree over the slices in order, a node the sum left + right of its children, a node
 * whose right child lies wholly past the last slice the value of its left child. Threads
 * and ranks each take a contiguous run of slices; a run is a few whole subtrees (blocks),
 * which its owner sums, and the blocks are then added where the tree adds them. Whatever
 * the runs, every addition happens on the same two values: the same bits from 1, 2 or 16
 * threads and any number of ranks up to the slices. */
#ifndef DSE_ENGINE_SLICES_H
#define DSE_ENGINE_SLICES_H

#include <stdint.h>

#include "engine/dist.h"

/* Slices of a batch: 16, enough for 16 threads (or ranks) to work at once; more when more
 * ranks share a batch (each rank takes at least one); at most one per image. Weight
 * gradients cost one extra addition of a layer's gradient per slice, in cache. */
#define DSE_SLICES 16
#define DSE_SLICES_MAX 256 /* ranks on one batch, at most */

static inline int dse_slices(int64_t n, int ranks) {
    const int s = ranks > DSE_SLICES ? ranks : DSE_SLICES;
    return n < s ? (int)n : s;
}

/* The images [*first, *first + *count) of slices [s0, s1) of a batch of n in `total`
 * slices: slice s begins at image floor(s n / total), so the larger slices are spread out
 * and any run of k slices holds k n / total images, give or take one (a run's share of the
 * batch is its share of the slices: threads and ranks stay balanced). */
static inline void dse_slice_images(int64_t n, int total, int s0, int s1, int64_t *first, int64_t *count) {
    *first = (int64_t)s0 * n / total;
    *count = s1 > s0 ? (int64_t)s1 * n / total - *first : 0;
}

/* The first slice of rank r of P's run of `total` slices (split as dse_dist_share splits);
 * `total` for r = P, so rank r's run is [start(r), start(r + 1)). */
static inline int dse_slice_run_start(int total, int r, int P) {
    int64_t a, c;
    if (r >= P) return total;
    dse_dist_share(total, r, P, &a, &c);
    return (int)a;
}

/* Rank r of P's run of a batch of n: slices [*s0, *s1) of dse_slices(n, P) and their
 * images [*first, *first + *count). */
static inline void dse_slice_rank(int64_t n, int r, int P, int *s0, int *s1, int64_t *first, int64_t *count) {
    const int total = dse_slices(n, P);
    *s0 = dse_slice_run_start(total, r, P), *s1 = dse_slice_run_start(total, r + 1, P);
    dse_slice_images(n, total, *s0, *s1, first, count);
}

/* A block: the subtree at `level` (2^level slices) number `index`, i.e. slices
 * [index 2^level, (index + 1) 2^level), those that exist; buf holds its sum. */
struct dse_slice_blk {
    int    level, index;
    float *buf;
};

/* The blocks of a run of slices being added up, left to right: push each slice's (or each
 * block's) sum in order and the tree's additions happen as soon as both sides are there,
 * into the left side's buffer. Pushing every slice's partial from 0 to total - 1 ends with
 * one block, the whole sum, in slice 0's buffer. */
#define DSE_SLICE_STACK 64
struct dse_slice_tree {
    int                  total, n;
    struct dse_slice_blk b[DSE_SLICE_STACK];
};

static inline void dse_slice_tree_init(struct dse_slice_tree *t, int total) {
    t->total = total, t->n = 0;
}

/* Push block (level, index, buf); then add, over the elements [lo, hi) of the buffers, every
 * pair of siblings now on top. A buffer that stops being used (the right side of an
 * addition) is handed back in freed[*nfreed++] when freed is not NULL. buf NULL: plan only
 * (no additions), to learn the blocks and the depth a run needs. */
/* A left child whose right sibling lies wholly past the last slice is its parent. */
static inline void dse_slice_up(struct dse_slice_blk *b, int total) {
    while (!(b->index & 1) && ((int64_t)(b->index + 1) << b->level) >= total &&
           !(b->index == 0 && ((int64_t)1 << b->level) >= total))
        b->level++, b->index >>= 1;
}

/* 1 if r is the right sibling of l (they add into their parent). */
static inline int dse_slice_pair(const struct dse_slice_blk *l, const struct dse_slice_blk *r) {
    return (r->index & 1) && l->level == r->level && l->index == r->index - 1;
}

static inline void dse_slice_push(struct dse_slice_tree *t, int level, int index, float *buf, int64_t lo,
                                  int64_t hi, float **freed, int *nfreed) {
    DSE_ASSERT(t->n < DSE_SLICE_STACK);
    t->b[t->n++] = (struct dse_slice_blk){ .level = level, .index = index, .buf = buf };
    for (;;) {
        struct dse_slice_blk *top = &t->b[t->n - 1];
        dse_slice_up(top, t->total); /* a left child whose right sibling lies past the end is its parent */
        if (t->n < 2 || !dse_slice_pair(top - 1, top)) return;
        struct dse_slice_blk *left = top - 1;
        if (left->buf && top->buf)
            for (int64_t e = lo; e < hi; e++) left->buf[e] += top->buf[e];
        if (freed) freed[(*nfreed)++] = top->buf;
        left->level++, left->index >>= 1;
        t->n--;
    }
}

/* The blocks that slices [s0, s1) of `total` sum to (in order, buf NULL) into out, and their
 * number; *depth (if not NULL): the most blocks held at once while pushing them one slice at
 * a time, i.e. the buffers a run needs. */
static inline int dse_slice_blocks(int total, int s0, int s1, struct dse_slice_blk *out, int *depth) {
    struct dse_slice_tree t;
    int most = 0;
    dse_slice_tree_init(&t, total);
    for (int s = s0; s < s1; s++) {
        dse_slice_push(&t, 0, s, NULL, 0, 0, NULL, NULL);
        most = t.n > most ? t.n : most;
    }
    for (int k = 0; out && k < t.n; k++) out[k] = t.b[k];
    if (depth) *depth = most + 1; /* the next slice's buffer, before it merges */
    return t.n;
}

/* v[0 .. total) (one double per slice) added by the tree. */
static inline double dse_slice_sum_d(const double *v, int total) {
    double part[DSE_SLICE_STACK];
    struct dse_slice_blk b[DSE_SLICE_STACK];
    int n = 0;
    for (int s = 0; s < total; s++) {
        DSE_ASSERT(n < DSE_SLICE_STACK);
        part[n] = v[s], b[n++] = (struct dse_slice_blk){ .level = 0, .index = s };
        for (dse_slice_up(&b[n - 1], total); n >= 2 && dse_slice_pair(&b[n - 2], &b[n - 1]); dse_slice_up(&b[n - 1], total)) {
            part[n - 2] += part[n - 1];
            b[n - 2].level++, b[n - 2].index >>= 1;
            n--;
        }
    }
    return n ? part[0] : 0.0;
}

#endif
