/* rank.c: the names of early stopping and of ranks, and a rung's ranking (sweep/rank.h): by
 * top-1, or by Pareto rank on top-1 and model size with NSGA-II crowding distance,
 * deterministic for equal inputs; how many go on (SH), and ASHA's promotion rule. Pure functions over arrays. */
#include "sweep/rank.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static const char *const halving_names[DSE_SWEEP_HALVING_COUNT] = { DSE_SWEEP_HALVINGS(DSE_SWEEP_NAMED_NAME) };
static const char *const halving_what[DSE_SWEEP_HALVING_COUNT] = { DSE_SWEEP_HALVINGS(DSE_SWEEP_NAMED_WHAT) };
static const char *const rank_names[DSE_SWEEP_RANK_COUNT] = { DSE_SWEEP_RANKS(DSE_SWEEP_NAMED_NAME) };
static const char *const rank_what[DSE_SWEEP_RANK_COUNT] = { DSE_SWEEP_RANKS(DSE_SWEEP_NAMED_WHAT) };

const char *dse_sweep_halving_str(enum dse_sweep_halving h) {
    return dse_name_of(halving_names, DSE_SWEEP_HALVING_COUNT, (int)h, "?");
}

const char *dse_sweep_halving_what(enum dse_sweep_halving h) {
    return dse_name_of(halving_what, DSE_SWEEP_HALVING_COUNT, (int)h, "?");
}

const char *dse_sweep_rank_str(enum dse_sweep_rank r) {
    return dse_name_of(rank_names, DSE_SWEEP_RANK_COUNT, (int)r, "?");
}

const char *dse_sweep_rank_what(enum dse_sweep_rank r) {
    return dse_name_of(rank_what, DSE_SWEEP_RANK_COUNT, (int)r, "?");
}

/* ---- ranking ---------------------------------------------------------------------------- */

struct rank_ctx {
    int                 n;
    const double       *top1;
    const int64_t      *bytes;
    const char *const  *ids;
    const int          *prank;
    const double       *crowd;
};

/* qsort has no context argument in C11: sort an array of (index, ctx) pairs. */
struct rank_item {
    int                     i;
    const struct rank_ctx  *cx;
};

static int by_top1(const struct rank_item *a, const struct rank_item *b) {
    const struct rank_ctx *c = a->cx;
    if (c->top1[a->i] != c->top1[b->i]) return c->top1[a->i] > c->top1[b->i] ? -1 : 1;
    if (c->bytes[a->i] != c->bytes[b->i]) return c->bytes[a->i] < c->bytes[b->i] ? -1 : 1;
    return strcmp(c->ids[a->i], c->ids[b->i]);
}

static int cmp_top1(const void *pa, const void *pb) {
    return by_top1(pa, pb);
}

static int cmp_pareto(const void *pa, const void *pb) {
    const struct rank_item *a = pa, *b = pb;
    const struct rank_ctx *c = a->cx;
    if (c->prank[a->i] != c->prank[b->i]) return c->prank[a->i] < c->prank[b->i] ? -1 : 1;
    if (c->crowd[a->i] != c->crowd[b->i]) return c->crowd[a->i] > c->crowd[b->i] ? -1 : 1;
    return by_top1(a, b);
}

static int cmp_bytes(const void *pa, const void *pb) {
    const struct rank_item *a = pa, *b = pb;
    const struct rank_ctx *c = a->cx;
    if (c->bytes[a->i] != c->bytes[b->i]) return c->bytes[a->i] < c->bytes[b->i] ? -1 : 1;
    if (c->top1[a->i] != c->top1[b->i]) return c->top1[a->i] > c->top1[b->i] ? -1 : 1;
    return strcmp(c->ids[a->i], c->ids[b->i]);
}

int dse_sweep_keep(int n, int eta) {
    if (n <= 0) return 0;
    int k = n / (eta > 1 ? eta : 2);
    return k < 1 ? 1 : k;
}

void dse_sweep_rank_rung(int n, const double *top1, const int64_t *model_bytes, const char *const *ids,
                         enum dse_sweep_rank rank, int *order, int *pareto_rank) {
    if (n <= 0) return;
    int *prank = calloc((size_t)n, sizeof *prank);
    double *crowd = calloc((size_t)n, sizeof *crowd);
    struct rank_item *items = calloc((size_t)n, sizeof *items), *front = calloc((size_t)n, sizeof *front);
    struct rank_ctx cx = { .n = n, .top1 = top1, .bytes = model_bytes, .ids = ids, .prank = prank, .crowd = crowd };
    DSE_ASSERT(prank && crowd && items && front); /* a rung is at most the sweep's candidates */
    for (int i = 0; i < n; i++) items[i] = (struct rank_item){ i, &cx }, prank[i] = -1;
    /* Non-dominated sorting: a dominates b if it is at least as accurate and at most as
     * large, and strictly better in one. O(n^2) per front; rungs are small. */
    int left = n;
    for (int r = 0; left > 0; r++) {
        int nf = 0;
        for (int i = 0; i < n; i++) {
            if (prank[i] >= 0) continue;
            int dominated = 0;
            for (int j = 0; j < n && !dominated; j++) {
                if (j == i || (prank[j] >= 0 && prank[j] < r)) continue;
                dominated = top1[j] >= top1[i] && model_bytes[j] <= model_bytes[i] &&
                            (top1[j] > top1[i] || model_bytes[j] < model_bytes[i]);
            }
            if (!dominated) front[nf++] = items[i];
        }
        for (int k = 0; k < nf; k++) prank[front[k].i] = r;
        left -= nf;
        /* NSGA-II crowding distance along the front, sorted by size: the two ends get
         * infinity, so the smallest model on a front goes on as surely as the most
         * accurate one. */
        qsort(front, (size_t)nf, sizeof *front, cmp_bytes);
        double bmin = (double)model_bytes[front[0].i], bmax = (double)model_bytes[front[nf - 1].i];
        double tmin = top1[front[0].i], tmax = tmin;
        for (int k = 0; k < nf; k++) {
            double t = top1[front[k].i];
            if (t < tmin) tmin = t;
            if (t > tmax) tmax = t;
        }
        for (int k = 0; k < nf; k++) {
            int i = front[k].i;
            if (k == 0 || k == nf - 1) {
                crowd[i] = INFINITY;
                continue;
            }
            double d = 0;
            int a = front[k - 1].i, b = front[k + 1].i;
            if (bmax > bmin) d += ((double)model_bytes[b] - (double)model_bytes[a]) / (bmax - bmin);
            if (tmax > tmin) d += fabs(top1[a] - top1[b]) / (tmax - tmin);
            crowd[i] = d;
        }
    }
    qsort(items, (size_t)n, sizeof *items, rank == DSE_SWEEP_RANK_TOP1 ? cmp_top1 : cmp_pareto);
    for (int k = 0; k < n; k++) order[k] = items[k].i;
    if (pareto_rank)
        for (int i = 0; i < n; i++) pareto_rank[i] = prank[i];
    free(prank), free(crowd), free(items), free(front);
}

/* ---- ASHA's promotion rule ---------------------------------------------------------------- */

int dse_asha_promotable(int n, const double *top1, const int64_t *model_bytes, const char *const *ids,
                        const int *promoted, int eta, enum dse_sweep_rank rank, int closed, int *promotable,
                        int *quota) {
    for (int i = 0; i < n; i++) promotable[i] = 0;
    /* ASHA's top floor(n / eta); a closed rung keeps SH's max(1, ...): the rung's best goes on */
    const int q = n <= 0 ? 0 : closed ? dse_sweep_keep(n, eta) : n / (eta > 1 ? eta : 2);
    if (quota) *quota = q;
    if (q <= 0) return 0;
    int *order = malloc(sizeof *order * (size_t)n), count = 0;
    DSE_ASSERT(order); /* a rung is at most the sweep's candidates */
    dse_sweep_rank_rung(n, top1, model_bytes, ids, rank, order, NULL);
    for (int j = 0; j < q; j++)
        if (!promoted[order[j]]) promotable[order[j]] = 1, count++;
    free(order);
    return count;
}
