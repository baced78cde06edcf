/* bo.c: the cost-aware model-based proposer of sweep/bo.h: a pool of feasible candidates,
 * an initial design in cost strata, then a Gaussian process on top-1 and the exact
 * expected hypervolume improvement at each candidate's known cost, batches by kriging
 * believer. Axis positions are the digits of a grid index (dse_space_candidate's order). */
#include "sweep/bo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "base/pcg32.h"
#include "sweep/prefilter.h"

void dse_bo_opts_default(struct dse_bo_opts *o) {
    *o = (struct dse_bo_opts){ .seed = 1, .budget = 0, .n_init = 0, .cost = DSE_EVO_PARAMS, .ref_top1 = NAN };
}

int dse_bo_n_init(int64_t budget) {
    if (budget <= 0) return 8;
    int64_t n = budget / 4;
    return n < 3 ? 3 : n > 8 ? 8 : (int)n;
}

/* ---- dense linear algebra: Cholesky and triangular solves (row-major, n x n) ------------ */

/* a = L L^T in place (L in the lower triangle). -1 if a is not positive definite, or so
 * nearly singular that a pivot loses all but the last 12 digits of its diagonal. */
static int cholesky(double *a, int n) {
    for (int j = 0; j < n; j++) {
        double s = a[j * n + j];
        const double diag = s;
        for (int k = 0; k < j; k++) s -= a[j * n + k] * a[j * n + k];
        if (!(s > 1e-12 * diag)) return -1; /* NaN too */
        const double l = sqrt(s);
        a[j * n + j] = l;
        for (int i = j + 1; i < n; i++) {
            double t = a[i * n + j];
            for (int k = 0; k < j; k++) t -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = t / l;
        }
    }
    return 0;
}

/* L v = b: v into b. */
static void solve_lower(const double *l, int n, double *b) {
    for (int i = 0; i < n; i++) {
        double t = b[i];
        for (int k = 0; k < i; k++) t -= l[i * n + k] * b[k];
        b[i] = t / l[i * n + i];
    }
}

/* L^T v = b: v into b. */
static void solve_upper_t(const double *l, int n, double *b) {
    for (int i = n - 1; i >= 0; i--) {
        double t = b[i];
        for (int k = i + 1; k < n; k++) t -= l[k * n + i] * b[k];
        b[i] = t / l[i * n + i];
    }
}

/* ---- the Gaussian process ----------------------------------------------------------------- */

/* Matern-5/2 correlation of rows a and b (d features), length scales ell. */
static double matern52(const double *a, const double *b, int d, const double *ell) {
    double r2 = 0;
    for (int j = 0; j < d; j++) {
        double t = (a[j] - b[j]) / ell[j];
        r2 += t * t;
    }
    const double r = sqrt(5.0 * r2);
    return (1 + r + r * r / 3) * exp(-r);
}

/* The factor of K = sf2 R + sn2 I over x[n x d] into l[n x n] and alpha = K^-1 y into alpha;
 * *logdet = log |K|. -1 if K is not positive definite. */
static int gp_factor(const double *x, const double *y, int n, int d, const double *ell, double sf2, double sn2,
                     double *l, double *alpha, double *logdet) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
            l[i * n + j] = l[j * n + i] = sf2 * matern52(x + i * d, x + j * d, d, ell) + (i == j ? sn2 : 0);
    if (cholesky(l, n)) return -1;
    double ld = 0;
    for (int i = 0; i < n; i++) ld += 2 * log(l[i * n + i]), alpha[i] = y[i];
    solve_lower(l, n, alpha);
    solve_upper_t(l, n, alpha);
    if (logdet) *logdet = ld;
    return 0;
}

/* The posterior at q: *mu (prior mean 0) and the latent sd; kv is scratch of n. */
static void gp_predict(const double *x, int n, int d, const double *ell, double sf2, const double *l,
                       const double *alpha, const double *q, double *kv, double *mu, double *sd) {
    double m = 0, v = 0;
    for (int i = 0; i < n; i++) kv[i] = sf2 * matern52(x + i * d, q, d, ell), m += kv[i] * alpha[i];
    solve_lower(l, n, kv);
    for (int i = 0; i < n; i++) v += kv[i] * kv[i];
    *mu = m;
    *sd = sf2 - v > 0 ? sqrt(sf2 - v) : 0;
}

enum dse_status dse_bo_gp_posterior(const double *x, const double *y, int n, int d, const double *ell, double m,
                                    double sf2, double sn2, const double *xq, int nq, double *mu, double *sd,
                                    struct dse_err *err) {
    const size_t sz = (size_t)(n ? n : 1);
    double *l = malloc(sizeof *l * sz * sz), *alpha = malloc(sizeof *alpha * sz), *yc = malloc(sizeof *yc * sz),
           *kv = malloc(sizeof *kv * sz);
    enum dse_status st = DSE_OK;
    if (!l || !alpha || !yc || !kv) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) yc[i] = y[i] - m;
    if (gp_factor(x, yc, n, d, ell, sf2, sn2, l, alpha, NULL)) {
        st = dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "bo: the kernel matrix of %d points is not positive definite "
                         "(sf2 %g, sn2 %g)", n, sf2, sn2);
        goto done;
    }
    for (int i = 0; i < nq; i++) {
        gp_predict(x, n, d, ell, sf2, l, alpha, xq + (size_t)i * (size_t)d, kv, &mu[i], &sd[i]);
        mu[i] += m;
    }
done:
    free(l), free(alpha), free(yc), free(kv);
    return st;
}

/* The hyperparameters' grids: length scales over features in [0, 1] (0.1: a feature that
 * matters at a tenth of its range; 10: one that hardly matters) and the noise variance as
 * a fraction of the signal's (top-1 of one training varies with its seed). */
static const double ell_grid[] = { 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 10 };
static const double noise_grid[] = { 1e-4, 1e-3, 1e-2, 0.03, 0.1, 0.3, 1 };
#define ELL_START   3  /* 0.8 */
#define NOISE_START 2  /* 1e-2 */
#define FIT_PASSES  2

/* The profiled log marginal likelihood of standardized y (mean 0) for length scales ell and
 * noise ratio g, the signal variance at its optimum sf2 = y^T A^-1 y / n, A = R + g I:
 * -(n log(sf2) + log |A|) / 2 up to a constant; -inf where A is not positive definite. */
static double profiled_lml(const double *x, const double *y, int n, int d, const double *ell, double g, double *l,
                           double *alpha, double *sf2) {
    double logdet;
    if (gp_factor(x, y, n, d, ell, 1.0, g, l, alpha, &logdet)) return -INFINITY;
    double q = 0;
    for (int i = 0; i < n; i++) q += y[i] * alpha[i];
    if (!(q > 0)) q = 1e-300;
    if (sf2) *sf2 = q / n;
    return -0.5 * (n * log(q / n) + logdet);
}

/* Coordinate search over the grids, FIT_PASSES passes of the noise then each feature's
 * length scale, keeping a change only when it raises the likelihood (strictly: ties keep
 * the earlier choice, so the result is a function of the data alone). */
static void gp_fit(const double *x, const double *y, int n, int d, double *ell, double *g, double *sf2, double *l,
                   double *alpha) {
    for (int j = 0; j < d; j++) ell[j] = ell_grid[ELL_START];
    *g = noise_grid[NOISE_START];
    double best = profiled_lml(x, y, n, d, ell, *g, l, alpha, NULL);
    for (int pass = 0; pass < FIT_PASSES; pass++) {
        for (size_t i = 0; i < sizeof noise_grid / sizeof *noise_grid; i++) {
            double v = profiled_lml(x, y, n, d, ell, noise_grid[i], l, alpha, NULL);
            if (v > best) best = v, *g = noise_grid[i];
        }
        for (int j = 0; j < d; j++) {
            const double keep = ell[j];
            double pick = keep;
            for (size_t i = 0; i < sizeof ell_grid / sizeof *ell_grid; i++) {
                ell[j] = ell_grid[i];
                double v = profiled_lml(x, y, n, d, ell, *g, l, alpha, NULL);
                if (v > best) best = v, pick = ell_grid[i];
            }
            ell[j] = pick;
        }
    }
    if (!isfinite(profiled_lml(x, y, n, d, ell, *g, l, alpha, sf2))) *sf2 = 1;
}

/* ---- the expected hypervolume improvement ------------------------------------------------- */

/* The front as a staircase: costs and top-1s both strictly increasing (each point raises
 * the best top-1 of all cheaper ones), only points better than the reference. */
struct stair {
    double *t, *c;
    int     m;
    double  ref_t, ref_c;
};

static int by_cost_then_top1(const void *x, const void *y) {
    const double *a = x, *b = y;
    if (a[1] != b[1]) return a[1] < b[1] ? -1 : 1;
    return a[0] > b[0] ? -1 : a[0] < b[0] ? 1 : 0;
}

/* st->t, st->c hold room for n; p scratch of 2n. */
static void stair_build(struct stair *st, const double *top1, const double *cost, int n, double *p) {
    int m = 0;
    for (int i = 0; i < n; i++)
        if (top1[i] > st->ref_t && cost[i] < st->ref_c) p[2 * m] = top1[i], p[2 * m + 1] = cost[i], m++;
    qsort(p, (size_t)m, 2 * sizeof *p, by_cost_then_top1);
    st->m = 0;
    double best = st->ref_t;
    for (int i = 0; i < m; i++)
        if (p[2 * i] > best) best = st->t[st->m] = p[2 * i], st->c[st->m++] = p[2 * i + 1];
}

/* E[(Y - h)+] for Y ~ N(mu, sd^2). */
static double expected_excess(double mu, double sd, double h) {
    if (!(sd > 0)) return mu > h ? mu - h : 0;
    const double z = (mu - h) / sd;
    const double e = (mu - h) * 0.5 * erfc(-z / sqrt(2.0)) + sd * exp(-0.5 * z * z) * 0.39894228040143267794; /* 1/sqrt(2 pi) */
    return e > 0 ? e : 0; /* far below h the two terms cancel to rounding noise */
}

/* The front's top-1 at cost c: the best of the points that cost no more (the reference's
 * top-1 if none); *j: the first step dearer than c. */
static double stair_level(const struct stair *st, double c, int *j) {
    int i = 0;
    while (i < st->m && st->c[i] <= c) i++;
    *j = i;
    return i ? st->t[i - 1] : st->ref_t;
}

/* The gain of (y, c) is the integral over costs c' in [c, ref_c) of (y - level(c'))+, the
 * level a step function: a sum of width x (y - h)+ over its steps, each integrated against
 * N(mu, sd^2) in closed form. */
static double stair_ehvi(const struct stair *st, double c, double mu, double sd) {
    if (!(c < st->ref_c)) return 0;
    int j;
    double h = stair_level(st, c, &j), a = c, sum = 0;
    for (int i = j; i < st->m; i++) {
        sum += (st->c[i] - a) * expected_excess(mu, sd, h);
        a = st->c[i], h = st->t[i];
    }
    return sum + (st->ref_c - a) * expected_excess(mu, sd, h);
}

double dse_bo_ehvi2(const double *top1, const double *cost, int n, double ref_top1, double ref_cost, double c,
                    double mu, double sd) {
    const size_t sz = (size_t)(n ? n : 1);
    struct stair st = { .t = malloc(sizeof(double) * sz), .c = malloc(sizeof(double) * sz), .ref_t = ref_top1,
                        .ref_c = ref_cost };
    double *p = malloc(sizeof *p * 2 * sz), v = -1;
    if (st.t && st.c && p) {
        stair_build(&st, top1, cost, n, p);
        v = stair_ehvi(&st, c, mu, sd);
    }
    free(st.t), free(st.c), free(p);
    return v;
}

/* ---- the proposer ------------------------------------------------------------------------- */

/* A candidate of the pool, or a recorded result. */
struct cand {
    uint64_t k;
    double   cost;          /* the cost objective */
    double   lp, lf;        /* log params, log forward FLOPs */
    double   score;         /* the compute score in its slice, while the design draws (stratum_pick) */
    int      seen;          /* recorded, excluded, proposed */
};

struct ctx {
    const struct dse_space  *s;
    const struct dse_bo_opts *o;
    struct dse_pcg32         rng;
    uint64_t                *seen;      /* results and exclusions, sorted */
    int                      n_seen;
    struct cand             *pool;      /* sorted by cost, then index */
    int                      n_pool;
    int                      d;         /* features */
    int                      mf;        /* 1: the fidelity feature, at d - 3 (partial results given) */
    int                     *place[DSE_AX_COUNT];    /* numeric axes: a position's place in value order */
    int                      col[DSE_AX_COUNT];      /* first feature of each varied axis; -1: not varied */
    double                   lp_lo, lp_hi, lf_lo, lf_hi;
    struct dse_err          *err;
};

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static int is_seen(const struct ctx *c, uint64_t k) {
    return c->n_seen && bsearch(&k, c->seen, (size_t)c->n_seen, sizeof *c->seen, cmp_u64) != NULL;
}

/* Candidate k's costs: 1 feasible, 0 pruned or without a network, -1 an error (in c->err). */
static int analyze(struct ctx *c, uint64_t k, struct cand *out) {
    struct dse_cost_totals one;
    int64_t mem, est = -1;
    int pruned = 1;
    struct dse_err e = { 0 };
    enum dse_status st = dse_sweep_prefilter(c->s, k, &one, &mem, &pruned, &e);
    if (st == DSE_ERR_CONFIG || st == DSE_ERR_SHAPE) return 0; /* no network: never proposed */
    if (!st && c->o->cost == DSE_EVO_COMPRESSED_MB && c->s->compress_line) st = dse_sweep_compress_est(c->s, k, &est, &e);
    if (st) {
        *c->err = e;
        return -1;
    }
    *out = (struct cand){ .k = k, .cost = dse_evo_cost_value(c->o->cost, &one, mem, est),
                          .lp = log((double)(one.params > 0 ? one.params : 1)),
                          .lf = log((double)(one.flops > 0 ? one.flops : 1)) };
    return !pruned;
}

static int by_cand_cost(const void *x, const void *y) {
    const struct cand *a = x, *b = y;
    if (a->cost != b->cost) return a->cost < b->cost ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

/* The pool: every feasible candidate of a grid of up to DSE_BO_SCAN_MAX, else distinct
 * random draws (at most DSE_EVO_DRAWS_MAX of them) until DSE_BO_POOL feasible ones. */
static enum dse_status pool_build(struct ctx *c) {
    const uint64_t count = c->s->count;
    const int scan = count <= DSE_BO_SCAN_MAX;
    const int want = scan ? (int)count : DSE_BO_POOL, draws = scan ? want : DSE_EVO_DRAWS_MAX;
    uint64_t *drawn = malloc(sizeof *drawn * (size_t)(draws ? draws : 1));
    c->pool = malloc(sizeof *c->pool * (size_t)(want ? want : 1));
    if (!drawn || !c->pool) {
        free(drawn);
        return dse_err_set(c->err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    int n_drawn = 0;
    for (int i = 0; c->n_pool < want && i < draws; i++) {
        uint64_t k = scan ? (uint64_t)i : dse_pcg32_bounded64(&c->rng, count);
        if (!scan) { /* distinct: a linear look is fine at a few thousand */
            int dup = 0;
            for (int q = 0; q < n_drawn && !dup; q++) dup = drawn[q] == k;
            if (dup) continue;
            drawn[n_drawn++] = k;
        }
        struct cand x;
        int u = analyze(c, k, &x);
        if (u < 0) {
            free(drawn);
            return c->err->code;
        }
        if (!u) continue;
        x.seen = is_seen(c, k);
        c->pool[c->n_pool++] = x;
    }
    free(drawn);
    qsort(c->pool, (size_t)c->n_pool, sizeof *c->pool, by_cand_cost);
    return DSE_OK;
}

/* Candidate x's features into f[0 .. c->d). */
static void features(const struct ctx *c, const struct cand *x, double *f) {
    int pos[DSE_AX_COUNT];
    uint64_t k = x->k;
    for (int a = DSE_AX_COUNT - 1; a >= 0; a--) {
        uint64_t n = (uint64_t)c->s->axes[a].n;
        pos[a] = (int)(k % n);
        k /= n;
    }
    memset(f, 0, sizeof *f * (size_t)c->d);
    for (int a = 0; a < DSE_AX_COUNT; a++) {
        const int n = c->s->axes[a].n;
        if (c->col[a] < 0) continue;
        if (dse_evo_axis_numeric(a)) f[c->col[a]] = (double)c->place[a][pos[a]] / (n - 1);
        else f[c->col[a] + pos[a]] = 1;
    }
    if (c->mf) f[c->d - 3] = 1; /* full fidelity; a partial result's point sets its own */
    f[c->d - 2] = c->lp_hi > c->lp_lo ? (x->lp - c->lp_lo) / (c->lp_hi - c->lp_lo) : 0;
    f[c->d - 1] = c->lf_hi > c->lf_lo ? (x->lf - c->lf_lo) / (c->lf_hi - c->lf_lo) : 0;
}

/* The slope of slice [lo, hi)'s least-squares line of log FLOPs on log params, 0 when the
 * slice's params do not vary: how much of a slice's spread in FLOPs is only its spread in
 * size. The logs are taken from the slice's first, so equal params give exactly 0. */
static double slice_slope(const struct ctx *c, int lo, int hi) {
    const double x0 = c->pool[lo].lp;
    double mx = 0, my = 0, sxx = 0, sxy = 0;
    for (int q = lo; q < hi; q++) mx += c->pool[q].lp - x0, my += c->pool[q].lf;
    mx /= hi - lo, my /= hi - lo;
    for (int q = lo; q < hi; q++) {
        const double dx = c->pool[q].lp - x0 - mx;
        sxx += dx * dx, sxy += dx * (c->pool[q].lf - my);
    }
    return sxx > 0 ? sxy / sxx : 0;
}

/* The median of slice [lo, hi)'s scores (the value at place (hi - lo) / 2 in increasing
 * order), seen candidates included (so a slice's median does not move as it is drawn from,
 * and proposals stay prefix-stable): by counting, no allocation; a slice holds at most
 * DSE_BO_SCAN_MAX / 3 candidates, about 1.9 million comparisons a pick, and picks are the
 * initial design's few and those made before the model has two results. */
static double slice_median_score(const struct ctx *c, int lo, int hi) {
    const int mid = (hi - lo) / 2;
    for (int q = lo; q < hi; q++) {
        int below = 0, upto = 0;
        for (int r = lo; r < hi; r++) below += c->pool[r].score < c->pool[q].score, upto += c->pool[r].score <= c->pool[q].score;
        if (below <= mid && mid < upto) return c->pool[q].score;
    }
    return -INFINITY; /* not reached: some value holds the place */
}

/* Member j of the initial design: an unseen candidate of slice j of n0 of the pool (its
 * place in the pool, 1), none left there (0), drawn uniformly from the slice's unseen
 * candidates with at least its median compute score (half of the slice or more, with ties;
 * all of its unseen ones when none of those is left). At equal cost, more compute per
 * parameter is the better bet for top-1: the thesis's third strategy (downsample late:
 * larger activation maps for the same weights), and the 3x3 share that raises FLOPs faster
 * than params. Half, not the single richest candidate: one fixed pick per slice is the same
 * bet for every seed. The score:
 *   - a design of at most DSE_BO_INIT_FLOPS_MAX: log FLOPs. Each slice is a third or a
 *     quarter of the cost axis and its member is the only one of it a search of that
 *     budget is sure to see, so the bet is the slice's best top-1, and the richer half
 *     leans to the slice's dearer, more accurate end as well;
 *   - a larger design (slices of a fifth to an eighth): log FLOPs less the slice's slope of
 *     log FLOPs on log params (slice_slope) times log params: compute for the size, not
 *     size itself. The design's work there is to teach the model, which will cover the
 *     front; raw FLOPs in a narrow slice is mostly its dearer end, so the cheapest
 *     candidates of the cheapest slice, the front's left end, were never drawn and the
 *     model found them late.
 * Measured in experiments/search_bench/README.md ("The initial design by FLOPs" and
 * "Larger designs: FLOPs for the slice's params"). */
static int stratum_pick(struct ctx *c, int j, int n0, int *at) {
    int lo = (int)((int64_t)c->n_pool * j / n0), hi = (int)((int64_t)c->n_pool * (j + 1) / n0);
    if (hi <= lo) return 0;
    const double slope = n0 > DSE_BO_INIT_FLOPS_MAX ? slice_slope(c, lo, hi) : 0;
    for (int q = lo; q < hi; q++) c->pool[q].score = c->pool[q].lf - slope * c->pool[q].lp;
    const double mid = slice_median_score(c, lo, hi);
    int rich = 0, left = 0;
    for (int q = lo; q < hi; q++)
        if (!c->pool[q].seen) left++, rich += c->pool[q].score >= mid;
    if (!left) return 0;
    int r = (int)dse_pcg32_bounded(&c->rng, (uint32_t)(rich ? rich : left));
    for (int q = lo; q < hi; q++)
        if (!c->pool[q].seen && (!rich || c->pool[q].score >= mid) && r-- == 0) {
            *at = q;
            return 1;
        }
    return 0;
}

/* A uniform unseen candidate of the pool (1), none left (0). */
static int random_pick(struct ctx *c, int *at) {
    int left = 0;
    for (int q = 0; q < c->n_pool; q++) left += !c->pool[q].seen;
    if (!left) return 0;
    int r = (int)dse_pcg32_bounded(&c->rng, (uint32_t)left);
    for (int q = 0; q < c->n_pool; q++)
        if (!c->pool[q].seen && r-- == 0) {
            *at = q;
            return 1;
        }
    return 0;
}

static int axis_by_value(const struct dse_axis *ax, int a, int b) {
    return ax->values[a] < ax->values[b] ? -1 : ax->values[a] > ax->values[b] ? 1 : a - b;
}

/* Places of a numeric axis's positions in increasing value (insertion sort: axes are short). */
static int axis_places(const struct dse_axis *ax, int *place) {
    int *order = malloc(sizeof *order * (size_t)ax->n);
    if (!order) return -1;
    for (int i = 0; i < ax->n; i++) {
        int j = i;
        while (j > 0 && axis_by_value(ax, order[j - 1], i) > 0) order[j] = order[j - 1], j--;
        order[j] = i;
    }
    for (int i = 0; i < ax->n; i++) place[order[i]] = i;
    free(order);
    return 0;
}

/* The usable results and this call's believed proposals: all of them the front's points,
 * the most recent DSE_BO_MODEL_MAX of those from results (and every believed one) the
 * model's, points [from, n). */
struct model {
    int     n, from, cap;
    double *x;             /* [cap x d] */
    double *y;             /* [cap]: standardized top-1 */
    double *top1, *cost;   /* [cap]: the front's points, in top-1's units */
    double  mean, scale;   /* top-1 = trend + scale x y, */
    double  slope, lp_bar; /* trend = mean + slope x (log params feature - lp_bar) */
    double  fslope, f_bar; /*         + fslope x (fidelity - f_bar) (multi-fidelity) */
    double *ell;           /* [d]: length scales */
    double  g, sf2;
    double *l, *alpha, *kv; /* [(n - from)^2], [n - from], [n - from] */
};

/* The model's prior mean of top-1 at features f. */
static double model_trend(const struct ctx *c, const struct model *m, const double *f) {
    const double t = m->mean + m->slope * (f[c->d - 2] - m->lp_bar);
    return c->mf ? t + m->fslope * (f[c->d - 3] - m->f_bar) : t;
}

static void model_free(struct model *m) {
    free(m->x), free(m->ell), free(m->y), free(m->top1), free(m->cost), free(m->l), free(m->alpha), free(m->kv);
}

/* Choose one proposal among the unseen candidates of the pool by the expected hypervolume
 * improvement (*at and its predicted top-1 *mu_at; 0 if none is unseen). */
static int acquire(struct ctx *c, struct model *m, const struct stair *front, double *fq, int *at, double *mu_at) {
    const int d = c->d, mn = m->n - m->from;
    const double *mx = m->x + (size_t)m->from * (size_t)d;
    double best = 0, best_ucb = -INFINITY, mu_ucb = 0, mu_best = 0;
    int pick = -1, pick_ucb = -1;
    for (int q = 0; q < c->n_pool; q++) {
        if (c->pool[q].seen) continue;
        double mu, sd;
        features(c, &c->pool[q], fq);
        gp_predict(mx, mn, d, m->ell, m->sf2, m->l, m->alpha, fq, m->kv, &mu, &sd);
        mu = model_trend(c, m, fq) + m->scale * mu, sd *= m->scale;
        const double e = stair_ehvi(front, c->pool[q].cost, mu, sd);
        int j;
        const double ucb = mu + 2 * sd - stair_level(front, c->pool[q].cost, &j);
        if (e > best) best = e, pick = q, mu_best = mu;
        if (ucb > best_ucb) best_ucb = ucb, pick_ucb = q, mu_ucb = mu;
    }
    if (pick < 0) pick = pick_ucb, mu_best = mu_ucb;
    if (pick < 0) return 0;
    *at = pick, *mu_at = mu_best;
    return 1;
}

/* Factor the model's points. -1: not positive definite. */
static int model_factor(const struct ctx *c, struct model *m) {
    return gp_factor(m->x + (size_t)m->from * (size_t)c->d, m->y + m->from, m->n - m->from, c->d, m->ell, m->sf2,
                     m->g * m->sf2, m->l, m->alpha, NULL);
}

/* Fit the model to its points (hyperparameters and all) and factor it. -1: no factor. */
static int model_fit(const struct ctx *c, struct model *m) {
    const int d = c->d, n = m->n - m->from;
    double *x = m->x + (size_t)m->from * (size_t)d, *y = m->y + m->from, sum = 0, sq = 0, lsum = 0, sxx = 0,
           sxy = 0;
    const double *t = m->top1 + m->from;
    /* the prior mean. With the user's reference top-1 (opts.ref_top1), a line in the log
     * params feature by least squares, its slope at least 0 (a larger network is not
     * expected to be worse): with a constant mean the process reverts to the results' mean
     * far from them, so the cheapest, least known candidates looked as good as the average
     * and, with the largest widths to the reference cost, won the acquisition, though
     * against a reference above the failures (the median's, experiments/search_bench) few
     * of them count. Without one, the reference is the lowest recorded top-1, every cheap
     * candidate adds width, and that optimism pays: a constant (the line lost 0.025 of the
     * 96-candidate table's hypervolume at budget 10 there, test_sweep bo-table) */
    for (int i = 0; i < n; i++) sum += t[i], lsum += x[(size_t)i * (size_t)d + (size_t)d - 2];
    m->mean = sum / n, m->lp_bar = lsum / n;
    m->fslope = m->f_bar = 0;
    if (c->mf) { /* multi-fidelity: first a line in the fidelity (more epochs, not a lower top-1) */
        double fsum = 0, fxx = 0, fxy = 0;
        for (int i = 0; i < n; i++) fsum += x[(size_t)i * (size_t)d + (size_t)d - 3];
        m->f_bar = fsum / n;
        for (int i = 0; i < n; i++) {
            const double df = x[(size_t)i * (size_t)d + (size_t)d - 3] - m->f_bar;
            fxx += df * df, fxy += df * (t[i] - m->mean);
        }
        m->fslope = fxx > 0 && fxy > 0 ? fxy / fxx : 0;
    }
    for (int i = 0; i < n; i++) {
        const double *xi = x + (size_t)i * (size_t)d, dl = xi[d - 2] - m->lp_bar;
        const double r = c->mf ? t[i] - m->mean - m->fslope * (xi[d - 3] - m->f_bar) : t[i] - m->mean;
        sxx += dl * dl, sxy += dl * r;
    }
    m->slope = isfinite(c->o->ref_top1) && sxx > 0 && sxy > 0 ? sxy / sxx : 0;
    for (int i = 0; i < n; i++) {
        const double r = t[i] - model_trend(c, m, x + (size_t)i * (size_t)d);
        sq += r * r;
    }
    m->scale = n > 1 && sq > 0 ? sqrt(sq / (n - 1)) : 1;
    for (int i = 0; i < n; i++) y[i] = (t[i] - model_trend(c, m, x + (size_t)i * (size_t)d)) / m->scale;
    /* the hyperparameters from the most recent DSE_BO_FIT_MAX points (each likelihood is a
     * Cholesky of the points: O(n^3) a hundred times), the posterior from all */
    const int skip = n > DSE_BO_FIT_MAX ? n - DSE_BO_FIT_MAX : 0;
    gp_fit(x + (size_t)skip * (size_t)d, y + skip, n - skip, d, m->ell, &m->g, &m->sf2, m->l, m->alpha);
    if (skip) { /* sf2 for all the points at those length scales and noise */
        double q = 0;
        if (gp_factor(x, y, n, d, m->ell, 1.0, m->g, m->l, m->alpha, NULL)) return -1;
        for (int i = 0; i < n; i++) q += y[i] * m->alpha[i];
        m->sf2 = q > 0 ? q / n : 1;
    }
    return model_factor(c, m);
}

enum dse_status dse_bo_propose(const struct dse_space *s, const struct dse_bo_opts *o,
                               const struct dse_evo_result *res, int n_res, const uint64_t *excl, int n_excl, int k,
                               uint64_t *out, int *n_out, struct dse_err *err) {
    *n_out = 0;
    if (k < 0 || n_res < 0 || n_excl < 0 || o->n_part < 0 || o->n_init < 0 || o->budget < 0 || (int)o->cost < 0 ||
        o->cost >= DSE_EVO_COST_COUNT || dse_evo_cost_measured(o->cost))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "bo: k %d, n_init %d, budget %lld, cost %d: expected k >= 0, n_init >= 0, budget >= 0 "
                           "and a cost known before training (not a measured one)",
                           k, o->n_init, (long long)o->budget, (int)o->cost);
    if (s->count_overflow || s->count == 0)
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, 0,
                           "bo needs a grid of at most 2^64 - 1 candidates (narrow a range)");
    for (int r = 0; r < n_res; r++)
        if (res[r].index >= s->count)
            return dse_err_set(err, DSE_ERR_CONFIG, s->path, 0, "result %d: grid index %llu past the grid (%llu)", r,
                               (unsigned long long)res[r].index, (unsigned long long)s->count);
    for (int r = 0; r < o->n_part; r++)
        if (o->part[r].index >= s->count || o->part[r].epoch < 1 || o->part[r].epoch >= o->part[r].of)
            return dse_err_set(err, DSE_ERR_CONFIG, s->path, 0, "partial result %d: grid index %llu (grid %llu), epoch "
                               "%d of %d: expected an index in the grid and 1 <= epoch < of", r,
                               (unsigned long long)o->part[r].index, (unsigned long long)s->count, o->part[r].epoch,
                               o->part[r].of);
    for (int r = 0; r < n_excl; r++)
        if (excl[r] >= s->count)
            return dse_err_set(err, DSE_ERR_CONFIG, s->path, 0, "exclusion %d: grid index %llu past the grid (%llu)",
                               r, (unsigned long long)excl[r], (unsigned long long)s->count);
    if (k == 0) return DSE_OK;

    struct ctx c = { .s = s, .o = o, .err = err };
    struct model m = { 0 };
    double *fq = NULL, *scratch = NULL;
    struct stair front = { 0 };
    enum dse_status st = DSE_OK;
    const int n0 = o->n_init ? o->n_init : dse_bo_n_init(o->budget);
    c.seen = malloc(sizeof *c.seen * (size_t)(n_res + n_excl + 1));
    if (!c.seen) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    for (int r = 0; r < n_res; r++) c.seen[c.n_seen++] = res[r].index;
    for (int r = 0; r < n_excl; r++) c.seen[c.n_seen++] = excl[r];
    qsort(c.seen, (size_t)c.n_seen, sizeof *c.seen, cmp_u64);
    for (int a = 0; a < DSE_AX_COUNT; a++) {
        c.col[a] = -1;
        if (s->axes[a].n < 2) continue;
        c.col[a] = c.d;
        c.d += dse_evo_axis_numeric(a) ? 1 : s->axes[a].n;
        if (dse_evo_axis_numeric(a) && (!(c.place[a] = malloc(sizeof(int) * (size_t)s->axes[a].n)) ||
                                axis_places(&s->axes[a], c.place[a]))) {
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            goto done;
        }
    }
    c.mf = o->n_part > 0;
    c.d += c.mf + 2; /* the fidelity, log params, log FLOPs */
    /* the stream: results and exclusions so far, so each call draws afresh */
    dse_pcg32_seed(&c.rng, o->seed, ((uint64_t)n_res << 32 ^ (uint64_t)n_excl) * 0x9e3779b97f4a7c15ULL ^ 0xb0);
    if ((st = pool_build(&c))) goto done;

    /* the usable results: the model's points and the front */
    m.cap = n_res + o->n_part + k;
    m.x = malloc(sizeof *m.x * (size_t)m.cap * (size_t)c.d);
    m.y = malloc(sizeof *m.y * (size_t)m.cap);
    m.ell = malloc(sizeof *m.ell * (size_t)c.d);
    m.top1 = malloc(sizeof *m.top1 * (size_t)m.cap);
    m.cost = malloc(sizeof *m.cost * (size_t)m.cap);
    const size_t mcap = (size_t)(m.cap < DSE_BO_MODEL_MAX + k ? m.cap : DSE_BO_MODEL_MAX + k);
    m.l = malloc(sizeof *m.l * mcap * mcap);
    m.alpha = malloc(sizeof *m.alpha * mcap);
    m.kv = malloc(sizeof *m.kv * mcap);
    fq = malloc(sizeof *fq * (size_t)c.d);
    scratch = malloc(sizeof *scratch * 2 * (size_t)m.cap);
    front.t = malloc(sizeof *front.t * (size_t)m.cap);
    front.c = malloc(sizeof *front.c * (size_t)m.cap);
    struct cand *rc = malloc(sizeof *rc * (size_t)(n_res + o->n_part ? n_res + o->n_part : 1));
    double *fid = malloc(sizeof *fid * (size_t)(n_res + o->n_part ? n_res + o->n_part : 1)); /* each point's */
    if (!m.x || !m.ell || !m.y || !m.top1 || !m.cost || !m.l || !m.alpha || !m.kv || !fq || !scratch || !front.t || !front.c ||
        !rc || !fid) {
        free(rc), free(fid);
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    int n_rc = 0;
    c.lp_lo = c.lf_lo = INFINITY, c.lp_hi = c.lf_hi = -INFINITY;
    for (int r = 0; r < n_res; r++) {
        if (!isfinite(res[r].obj[0])) continue; /* seen, not in the model */
        int u = analyze(&c, res[r].index, &rc[n_rc]);
        if (u < 0) {
            free(rc), free(fid);
            st = err->code;
            goto done;
        }
        if (!isfinite(rc[n_rc].cost)) continue;
        fid[n_rc] = 1;
        m.top1[n_rc++] = res[r].obj[0];
    }
    const int n_full = n_rc; /* then the partial results: the model's, not the front's */
    for (int r = 0; r < o->n_part; r++) {
        if (!isfinite(o->part[r].top1)) continue;
        int u = analyze(&c, o->part[r].index, &rc[n_rc]);
        if (u < 0) {
            free(rc), free(fid);
            st = err->code;
            goto done;
        }
        if (!isfinite(rc[n_rc].cost)) continue;
        fid[n_rc] = (double)o->part[r].epoch / o->part[r].of;
        m.top1[n_rc++] = o->part[r].top1;
    }
    double max_cost = -INFINITY;
    for (int q = 0; q < c.n_pool + n_rc; q++) {
        const struct cand *x = q < c.n_pool ? &c.pool[q] : &rc[q - c.n_pool];
        if (x->lp < c.lp_lo) c.lp_lo = x->lp;
        if (x->lp > c.lp_hi) c.lp_hi = x->lp;
        if (x->lf < c.lf_lo) c.lf_lo = x->lf;
        if (x->lf > c.lf_hi) c.lf_hi = x->lf;
        if (x->cost > max_cost) max_cost = x->cost;
    }
    for (int i = 0; i < n_rc; i++) {
        double *f = m.x + (size_t)i * (size_t)c.d;
        features(&c, &rc[i], f);
        m.cost[i] = i < n_full ? rc[i].cost : INFINITY; /* a partial result is never on the front */
        if (c.mf) f[c.d - 3] = fid[i];
    }
    free(rc), free(fid);
    m.n = n_rc;
    m.from = n_rc > DSE_BO_MODEL_MAX ? n_rc - DSE_BO_MODEL_MAX : 0;
    front.ref_c = max_cost > 0 ? max_cost * 1.01 : max_cost + 1e-9;
    front.ref_t = INFINITY;
    for (int i = 0; i < n_full; i++)
        if (m.top1[i] < front.ref_t) front.ref_t = m.top1[i];
    for (int i = n_full; i < m.n && !n_full; i++) /* before any full result: the rungs' lowest */
        if (m.top1[i] < front.ref_t) front.ref_t = m.top1[i];
    if (isfinite(o->ref_top1)) front.ref_t = o->ref_top1;
    const int model = m.n - m.from >= 2 && !model_fit(&c, &m);

    for (int p = 0; p < k; p++) {
        const int64_t place = (int64_t)n_res + n_excl + p; /* in the order of proposals */
        int at = -1, found = 0;
        double mu = 0;
        if (place < n0 || !model) found = stratum_pick(&c, (int)(place % n0), n0, &at);
        else {
            stair_build(&front, m.top1, m.cost, m.n, scratch);
            found = acquire(&c, &m, &front, fq, &at, &mu);
        }
        if (!found) found = random_pick(&c, &at);
        if (!found) break; /* exhausted */
        c.pool[at].seen = 1;
        out[(*n_out)++] = c.pool[at].k;
        if (model && place >= n0 && p + 1 < k) { /* kriging believer: the proposal at its mean */
            features(&c, &c.pool[at], m.x + (size_t)m.n * (size_t)c.d);
            const double *xb = m.x + (size_t)m.n * (size_t)c.d;
            m.top1[m.n] = mu, m.cost[m.n] = c.pool[at].cost, m.y[m.n] = (mu - model_trend(&c, &m, xb)) / m.scale, m.n++;
            if (model_factor(&c, &m)) {
                st = dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "bo: the model lost positive definiteness");
                goto done;
            }
        }
    }
done:
    free(c.seen);
    free(c.pool);
    for (int a = 0; a < DSE_AX_COUNT; a++) free(c.place[a]);
    model_free(&m);
    free(fq), free(scratch), free(front.t), free(front.c);
    return st;
}
