/* evolve.c: the NSGA-II proposer of sweep/evolve.h. Axis positions are the digits of a
 * grid index (dse_space_candidate's order: the first axis varies slowest). */
#include "sweep/evolve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "base/pcg32.h"
#include "sweep/prefilter.h"

/* ---- objectives (their table: sweep/objective.c) -------------------------------------- */

double dse_evo_cost_value(enum dse_evo_cost c, const struct dse_cost_totals *one, int64_t train_mem,
                          int64_t est_compressed) {
    switch (c) {
    case DSE_EVO_PARAMS:    return (double)one->params;
    case DSE_EVO_MODEL_MB:  return (double)one->param_bytes / 1e6;
    case DSE_EVO_FLOPS:     return (double)one->flops;
    case DSE_EVO_MACS:      return (double)dse_cost_macs(one->flops);
    case DSE_EVO_TRAIN_MEM: return (double)train_mem / 1048576.0;
    case DSE_EVO_COMPRESSED_MB: return est_compressed >= 0 ? (double)est_compressed / 1e6 : NAN;
    case DSE_EVO_LATENCY_MS: return NAN; /* measured: the candidate's records */
    case DSE_EVO_COST_COUNT: break;
    }
    return NAN;
}

/* The compressed-size estimate of grid index k when cost c needs it (compressed_mb in a space
 * with a compress section), into *est; -1 otherwise. */
static enum dse_status est_for(const struct dse_space *s, uint64_t k, enum dse_evo_cost c, int64_t *est,
                               struct dse_err *err) {
    *est = -1;
    return c == DSE_EVO_COMPRESSED_MB && s->compress_line ? dse_sweep_compress_est(s, k, est, err) : DSE_OK;
}

enum dse_status dse_evo_costs(const struct dse_space *s, uint64_t k, const enum dse_evo_cost *costs, int n,
                              double *out, int *pruned, struct dse_err *err) {
    struct dse_cost_totals one;
    int64_t train_mem, est;
    enum dse_status st = dse_sweep_prefilter(s, k, &one, &train_mem, pruned, err);
    for (int i = 0; !st && i < n; i++)
        if (!(st = est_for(s, k, costs[i], &est, err))) out[i] = dse_evo_cost_value(costs[i], &one, train_mem, est);
    return st;
}

void dse_evo_opts_default(struct dse_evo_opts *o) {
    *o = (struct dse_evo_opts){ .seed = 1, .pop = DSE_EVO_POP, .n_obj = 2, .p_crossover = 0.5, .max_tries = 32,
                                .aging = 0, .strata = -1 };
}

int dse_evo_pop_for_budget(int64_t budget) {
    if (budget <= 0) return DSE_EVO_POP;
    const int64_t third = budget / 3;
    return third < DSE_EVO_POP_MIN ? DSE_EVO_POP_MIN : third > DSE_EVO_POP ? DSE_EVO_POP : (int)third;
}

/* ---- a set of grid indices (open addressing; UINT64_MAX is never an index) --------------- */

#define EMPTY UINT64_MAX

struct set {
    uint64_t *key;
    signed char *val;   /* feasibility cache: 1 feasible, 0 not */
    size_t cap, n;      /* cap: a power of two */
};

static size_t slot(const struct set *t, uint64_t k) {
    size_t i = (size_t)(dse_fnv1a64(DSE_FNV64_INIT, &k, sizeof k) & (t->cap - 1));
    while (t->key[i] != EMPTY && t->key[i] != k) i = (i + 1) & (t->cap - 1);
    return i;
}

static int set_init(struct set *t, size_t n) {
    t->cap = 64;
    while (t->cap < 2 * n + 2) t->cap *= 2;
    t->n = 0;
    t->key = malloc(sizeof *t->key * t->cap);
    t->val = calloc(t->cap, 1);
    if (!t->key || !t->val) return -1;
    for (size_t i = 0; i < t->cap; i++) t->key[i] = EMPTY;
    return 0;
}

static void set_free(struct set *t) {
    free(t->key);
    free(t->val);
}

/* -1: k is absent; else its value. */
static int set_get(const struct set *t, uint64_t k) {
    size_t i = slot(t, k);
    return t->key[i] == EMPTY ? -1 : t->val[i];
}

static int set_put(struct set *t, uint64_t k, int v) {
    if (2 * (t->n + 1) > t->cap) {
        struct set u;
        if (set_init(&u, t->cap)) {
            set_free(&u);
            return -1;
        }
        for (size_t i = 0; i < t->cap; i++)
            if (t->key[i] != EMPTY) {
                size_t j = slot(&u, t->key[i]);
                u.key[j] = t->key[i], u.val[j] = t->val[i], u.n++;
            }
        set_free(t);
        *t = u;
    }
    size_t i = slot(t, k);
    if (t->key[i] == EMPTY) t->key[i] = k, t->n++;
    t->val[i] = (signed char)v;
    return 0;
}

/* ---- sorting with a context (qsort has none, and a global would not be thread-safe) ---- */

typedef int (*cmp_fn)(const void *ctx, int a, int b);

static void merge_sort(int *a, int *tmp, int n, cmp_fn cmp, const void *ctx) {
    if (n < 2) return;
    int h = n / 2;
    merge_sort(a, tmp, h, cmp, ctx);
    merge_sort(a + h, tmp, n - h, cmp, ctx);
    int i = 0, j = h, o = 0;
    while (i < h && j < n) tmp[o++] = cmp(ctx, a[j], a[i]) < 0 ? a[j++] : a[i++];
    while (i < h) tmp[o++] = a[i++];
    while (j < n) tmp[o++] = a[j++];
    memcpy(a, tmp, sizeof *a * (size_t)n);
}

/* Sorts a[0 .. n); -1 if out of memory. */
static int sort_ints(int *a, int n, cmp_fn cmp, const void *ctx) {
    int *tmp = malloc(sizeof *tmp * (size_t)(n ? n : 1));
    if (!tmp) return -1;
    merge_sort(a, tmp, n, cmp, ctx);
    free(tmp);
    return 0;
}

/* ---- the proposer ----------------------------------------------------------------------- */

static const int axis_numeric[DSE_AX_COUNT] = {
#define T_INT    1
#define T_REAL   1
#define T_BYPASS 0
#define T_POOLS  0
#define DSE_MP(E, f, g, T, def, lo, hi, bnd, id, doc) [DSE_AX_##E] = T_##T,
#include "metaparams/mp.def"
#undef DSE_MP
#undef T_INT
#undef T_REAL
#undef T_BYPASS
#undef T_POOLS
};

int dse_evo_axis_numeric(int axis) { return axis >= 0 && axis < DSE_AX_COUNT && axis_numeric[axis]; }

struct pooled;

struct ctx {
    const struct dse_space *s;
    const struct dse_evo_opts *o;
    struct dse_pcg32 rng;
    struct set seen;      /* recorded, excluded, proposed in this call */
    struct set feasible;  /* the prefilter's verdicts, this call */
    int n_varied;
    int varied[DSE_AX_COUNT];        /* axes with more than one value */
    int *order[DSE_AX_COUNT];        /* numeric axes: positions in increasing value */
    int *rank[DSE_AX_COUNT];         /* numeric axes: a position's place in order */
    int n_pop;
    uint64_t *pop;                   /* parents' indices, best first */
    struct pooled *pool;             /* opts.strata: candidates sorted by that cost */
    int n_pool;
    struct dse_err *err;
};

static void decode(const struct dse_space *s, uint64_t k, int pos[DSE_AX_COUNT]) {
    for (int a = DSE_AX_COUNT - 1; a >= 0; a--) {
        uint64_t n = (uint64_t)s->axes[a].n;
        pos[a] = (int)(k % n);
        k /= n;
    }
}

static uint64_t encode(const struct dse_space *s, const int pos[DSE_AX_COUNT]) {
    uint64_t k = 0;
    for (int a = 0; a < DSE_AX_COUNT; a++) k = k * (uint64_t)s->axes[a].n + (uint64_t)pos[a];
    return k;
}

/* 1: unseen and feasible; 0: not; -1: an error (in c->err). */
static int usable(struct ctx *c, uint64_t k) {
    if (set_get(&c->seen, k) >= 0) return 0;
    int v = set_get(&c->feasible, k);
    if (v >= 0) return v;
    struct dse_cost_totals one;
    int64_t mem;
    int pruned = 1;
    struct dse_err e = { 0 };
    enum dse_status st = dse_sweep_prefilter(c->s, k, &one, &mem, &pruned, &e);
    if (st == DSE_ERR_CONFIG || st == DSE_ERR_SHAPE) pruned = 1; /* no network: never proposed */
    else if (st) {
        *c->err = e;
        return -1;
    }
    if (set_put(&c->feasible, k, !pruned)) {
        dse_err_set(c->err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        return -1;
    }
    return !pruned;
}

/* A uniform random usable candidate into *k: 1 found, 0 none left, -1 error. */
static int random_candidate(struct ctx *c, uint64_t *k) {
    const uint64_t count = c->s->count;
    const int draws = count <= DSE_EVO_SCAN_MAX ? 256 : DSE_EVO_DRAWS_MAX;
    for (int i = 0; i < draws; i++) {
        uint64_t x = dse_pcg32_bounded64(&c->rng, count);
        int u = usable(c, x);
        if (u) {
            *k = x;
            return u;
        }
    }
    if (count > DSE_EVO_SCAN_MAX) return 0;
    uint64_t start = dse_pcg32_bounded64(&c->rng, count);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t x = (start + i) % count;
        int u = usable(c, x);
        if (u) {
            *k = x;
            return u;
        }
    }
    return 0;
}

/* Binary tournament: the population is sorted best first, so the better of two uniform
 * picks is the one with the smaller position. */
static uint64_t tournament(struct ctx *c) {
    uint32_t i = dse_pcg32_bounded(&c->rng, (uint32_t)c->n_pop);
    uint32_t j = dse_pcg32_bounded(&c->rng, (uint32_t)c->n_pop);
    return c->pop[i < j ? i : j];
}

static int chance(struct dse_pcg32 *r, double p) {
    return p >= 1 || (p > 0 && (double)dse_pcg32_next(r) < p * 4294967296.0);
}

/* One child of the population (not checked). */
static uint64_t child(struct ctx *c) {
    int a_pos[DSE_AX_COUNT], b_pos[DSE_AX_COUNT];
    decode(c->s, tournament(c), a_pos);
    if (chance(&c->rng, c->o->p_crossover)) {
        decode(c->s, tournament(c), b_pos);
        for (int v = 0; v < c->n_varied; v++) {
            int a = c->varied[v];
            if (dse_pcg32_next(&c->rng) & 1) a_pos[a] = b_pos[a];
        }
    }
    /* each varied axis with probability 1 / n_varied; one at random if none was drawn */
    int pick[DSE_AX_COUNT], n_pick = 0;
    for (int v = 0; v < c->n_varied; v++)
        if (dse_pcg32_bounded(&c->rng, (uint32_t)c->n_varied) == 0) pick[n_pick++] = c->varied[v];
    if (!n_pick) pick[n_pick++] = c->varied[dse_pcg32_bounded(&c->rng, (uint32_t)c->n_varied)];
    for (int q = 0; q < n_pick; q++) {
        int a = pick[q], n = c->s->axes[a].n;
        if (axis_numeric[a]) { /* the next or previous value in numeric order */
            int r = c->rank[a][a_pos[a]];
            r = r == 0 ? 1 : r == n - 1 ? n - 2 : (dse_pcg32_next(&c->rng) & 1) ? r + 1 : r - 1;
            a_pos[a] = c->order[a][r];
        } else { /* another choice */
            int o = (int)dse_pcg32_bounded(&c->rng, (uint32_t)(n - 1));
            a_pos[a] = o >= a_pos[a] ? o + 1 : o;
        }
    }
    return encode(c->s, a_pos);
}

/* ---- selection: non-dominated sorting and crowding distance ----------------------------- */

struct sel {
    const double *f;     /* n x m objectives, all minimized */
    int           m, j;  /* objectives; the one sorted by */
    const int    *rank;  /* 0: the first front */
    const double *crowd;
};

static int by_objective(const void *ctx, int a, int b) {
    const struct sel *x = ctx;
    double fa = x->f[a * x->m + x->j], fb = x->f[b * x->m + x->j];
    return fa < fb ? -1 : fa > fb ? 1 : a - b;
}

static int by_fitness(const void *ctx, int a, int b) {
    const struct sel *x = ctx;
    if (x->rank[a] != x->rank[b]) return x->rank[a] - x->rank[b];
    if (x->crowd[a] != x->crowd[b]) return x->crowd[a] > x->crowd[b] ? -1 : 1;
    return a - b; /* recorded earlier first */
}

/* 1 if a dominates b (all objectives minimized). */
static int dominates(const double *a, const double *b, int m) {
    int better = 0;
    for (int j = 0; j < m; j++) {
        if (a[j] > b[j]) return 0;
        if (a[j] < b[j]) better = 1;
    }
    return better;
}

/* The best min(pop, usable results) results into c->pop, best first: NSGA-II's
 * environmental selection over everything recorded. */
static enum dse_status select_population(struct ctx *c, const struct dse_evo_result *res, int n_res) {
    const int m = c->o->n_obj;
    const size_t sz = (size_t)(n_res ? n_res : 1);
    int n = 0, *u = malloc(sizeof *u * sz), *rank = malloc(sizeof *rank * sz), *front = malloc(sizeof *front * sz);
    double *f = malloc(sizeof *f * sz * (size_t)m), *crowd = malloc(sizeof *crowd * sz);
    c->pop = malloc(sizeof *c->pop * sz);
    enum dse_status st = DSE_OK;
    if (!u || !rank || !front || !f || !crowd || !c->pop) {
        st = dse_err_set(c->err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    int from = 0; /* aging: only the `pop` most recent usable results compete */
    if (c->o->aging)
        for (int r = n_res - 1, kept = 0; r >= 0; r--) {
            int ok = 1;
            for (int j = 0; j < m; j++) ok &= isfinite(res[r].obj[j]) != 0;
            if (ok && ++kept == c->o->pop) {
                from = r;
                break;
            }
        }
    for (int r = from; r < n_res; r++) {
        int ok = 1;
        for (int j = 0; j < m; j++) ok &= isfinite(res[r].obj[j]) != 0;
        if (!ok) continue; /* no usable result: seen, never a parent */
        for (int j = 0; j < m; j++) f[n * m + j] = j == 0 ? -res[r].obj[0] : res[r].obj[j];
        rank[n] = -1, crowd[n] = 0, u[n++] = r;
    }
    struct sel x = { .f = f, .m = m, .rank = rank, .crowd = crowd };
    /* Fronts by peeling: O(fronts x n^2 x m), fine for the thousands of results a search
     * trains. Crowding distance within each front: the ends infinite, inner points the
     * sum over objectives of the normalized gap between their neighbours. */
    for (int r = 0, left = n; left > 0; r++) {
        int fn = 0;
        for (int i = 0; i < n; i++) {
            if (rank[i] >= 0) continue;
            int dominated = 0;
            for (int j = 0; j < n && !dominated; j++)
                dominated = j != i && rank[j] < 0 && dominates(f + j * m, f + i * m, m);
            if (!dominated) front[fn++] = i;
        }
        for (int q = 0; q < fn; q++) rank[front[q]] = r;
        left -= fn;
        for (x.j = 0; x.j < m; x.j++) {
            if (sort_ints(front, fn, by_objective, &x)) {
                st = dse_err_set(c->err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
                goto done;
            }
            double lo = f[front[0] * m + x.j], hi = f[front[fn - 1] * m + x.j];
            crowd[front[0]] = crowd[front[fn - 1]] = INFINITY;
            for (int q = 1; q < fn - 1 && hi > lo; q++)
                crowd[front[q]] += (f[front[q + 1] * m + x.j] - f[front[q - 1] * m + x.j]) / (hi - lo);
        }
    }
    for (int i = 0; i < n; i++) front[i] = i;
    if (sort_ints(front, n, by_fitness, &x)) {
        st = dse_err_set(c->err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    c->n_pop = n < c->o->pop ? n : c->o->pop;
    for (int q = 0; q < c->n_pop; q++) c->pop[q] = res[u[front[q]]].index;
done:
    free(u), free(rank), free(front), free(f), free(crowd);
    return st;
}

/* ---- the initial population, stratified on a cost -------------------------------------- */

struct pooled {
    uint64_t k;
    double   cost;
};

static int by_pooled_cost(const void *x, const void *y) {
    const struct pooled *a = x, *b = y;
    if (a->cost != b->cost) return a->cost < b->cost ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

/* c->strata: the feasible candidates to stratify, sorted by cost: every one for a grid of up
 * to DSE_EVO_STRATA_SCAN, else distinct random draws (at most DSE_EVO_DRAWS_MAX of them)
 * until DSE_EVO_STRATA_POOL x pop. Seen ones stay in (they keep the slices' bounds) and are
 * skipped when drawn. */
static enum dse_status strata_pool(struct ctx *c) {
    const uint64_t count = c->s->count;
    const int scan = count <= DSE_EVO_STRATA_SCAN;
    const int want = scan ? (int)count : DSE_EVO_STRATA_POOL * c->o->pop;
    struct set drawn;
    c->pool = malloc(sizeof *c->pool * (size_t)(want ? want : 1));
    if (!c->pool || set_init(&drawn, (size_t)want)) return dse_err_set(c->err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    enum dse_status st = DSE_OK;
    for (int i = 0; c->n_pool < want && i < (scan ? want : DSE_EVO_DRAWS_MAX); i++) {
        uint64_t k = scan ? (uint64_t)i : dse_pcg32_bounded64(&c->rng, count);
        if (set_get(&drawn, k) >= 0) continue;
        if (set_put(&drawn, k, 1)) {
            st = dse_err_set(c->err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            break;
        }
        struct dse_cost_totals one;
        int64_t mem;
        int pruned = 1;
        struct dse_err e = { 0 };
        st = dse_sweep_prefilter(c->s, k, &one, &mem, &pruned, &e);
        if (st == DSE_ERR_CONFIG || st == DSE_ERR_SHAPE) st = DSE_OK, pruned = 1;
        else if (st) {
            *c->err = e;
            break;
        }
        if (pruned) continue;
        int64_t est;
        if ((st = est_for(c->s, k, c->o->strata, &est, c->err))) break;
        c->pool[c->n_pool++] = (struct pooled){ .k = k, .cost = dse_evo_cost_value(c->o->strata, &one, mem, est) };
    }
    set_free(&drawn);
    if (!st) qsort(c->pool, (size_t)c->n_pool, sizeof *c->pool, by_pooled_cost);
    return st;
}

/* Member j (0 .. pop) of the initial population: an unseen feasible candidate drawn
 * uniformly from slice j of the pool (1), or none left there (0), or an error (-1). */
static int stratum_candidate(struct ctx *c, int j, uint64_t *k) {
    int lo = (int)((int64_t)c->n_pool * j / c->o->pop), hi = (int)((int64_t)c->n_pool * (j + 1) / c->o->pop);
    if (hi <= lo) return 0;
    int start = lo + (int)dse_pcg32_bounded(&c->rng, (uint32_t)(hi - lo));
    for (int i = 0; i < hi - lo; i++) {
        uint64_t x = c->pool[lo + (start - lo + i) % (hi - lo)].k;
        int u = usable(c, x);
        if (u) {
            *k = x;
            return u;
        }
    }
    return 0;
}

static void ctx_free(struct ctx *c) {
    set_free(&c->seen);
    set_free(&c->feasible);
    for (int a = 0; a < DSE_AX_COUNT; a++) free(c->order[a]), free(c->rank[a]);
    free(c->pop);
    free(c->pool);
}

static int by_value(const void *ctx, int a, int b) {
    const double *v = ctx;
    return v[a] < v[b] ? -1 : v[a] > v[b] ? 1 : a - b;
}

enum dse_status dse_evo_propose(const struct dse_space *s, const struct dse_evo_opts *o,
                                const struct dse_evo_result *res, int n_res, const uint64_t *excl, int n_excl,
                                int k, uint64_t *out, int *n_out, struct dse_err *err) {
    *n_out = 0;
    if (o->pop < 1 || o->n_obj < 2 || o->n_obj > DSE_EVO_OBJ_MAX || !(o->p_crossover >= 0 && o->p_crossover <= 1) ||
        o->max_tries < 1 || k < 0 || n_res < 0 || n_excl < 0 || o->strata < -1 || o->strata >= DSE_EVO_COST_COUNT ||
        (o->strata >= 0 && dse_evo_cost_measured((enum dse_evo_cost)o->strata)))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "evolution: pop %d, n_obj %d, p_crossover %g, max_tries %d, k %d, strata %d: expected "
                           "pop >= 1, 2 <= n_obj <= %d, 0 <= p_crossover <= 1, max_tries >= 1, k >= 0, strata -1 or "
                           "an analytic cost (one known before training)",
                           o->pop, o->n_obj, o->p_crossover, o->max_tries, k, o->strata, DSE_EVO_OBJ_MAX);
    if (s->count_overflow || s->count == 0)
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, 0,
                           "evolution needs a grid of at most 2^64 - 1 candidates (narrow a range)");
    for (int r = 0; r < n_res; r++)
        if (res[r].index >= s->count)
            return dse_err_set(err, DSE_ERR_CONFIG, s->path, 0, "result %d: grid index %llu past the grid (%llu)", r,
                               (unsigned long long)res[r].index, (unsigned long long)s->count);
    for (int r = 0; r < n_excl; r++)
        if (excl[r] >= s->count)
            return dse_err_set(err, DSE_ERR_CONFIG, s->path, 0, "exclusion %d: grid index %llu past the grid (%llu)",
                               r, (unsigned long long)excl[r], (unsigned long long)s->count);

    struct ctx c = { .s = s, .o = o, .err = err };
    enum dse_status st = DSE_OK;
    if (set_init(&c.seen, (size_t)n_res + (size_t)n_excl + (size_t)k) || set_init(&c.feasible, 256)) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    for (int r = 0; r < n_res && !st; r++)
        if (set_put(&c.seen, res[r].index, 1)) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int r = 0; r < n_excl && !st; r++)
        if (set_put(&c.seen, excl[r], 1)) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    if (st) goto done;
    for (int a = 0; a < DSE_AX_COUNT; a++) {
        int n = s->axes[a].n;
        if (n < 2) continue;
        c.varied[c.n_varied++] = a;
        if (!axis_numeric[a]) continue;
        c.order[a] = malloc(sizeof(int) * (size_t)n);
        c.rank[a] = malloc(sizeof(int) * (size_t)n);
        if (!c.order[a] || !c.rank[a]) {
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            goto done;
        }
        for (int i = 0; i < n; i++) c.order[a][i] = i;
        if (sort_ints(c.order[a], n, by_value, s->axes[a].values)) {
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            goto done;
        }
        for (int i = 0; i < n; i++) c.rank[a][c.order[a][i]] = i;
    }
    /* parents are needed only past the initial population */
    if ((int64_t)n_res + n_excl + k > o->pop && (st = select_population(&c, res, n_res))) goto done;
    /* the stream: results and exclusions so far, so each call draws afresh */
    dse_pcg32_seed(&c.rng, o->seed, ((uint64_t)n_res << 32 ^ (uint64_t)n_excl) * 0x9e3779b97f4a7c15ULL);

    for (int p = 0; p < k; p++) {
        uint64_t x = 0;
        int found = 0;
        int64_t place = (int64_t)n_res + n_excl + p; /* in the order of proposals */
        int initial = place < o->pop || c.n_pop == 0 || c.n_varied == 0;
        if (initial && place < o->pop && o->strata >= 0) {
            if (!c.pool && (st = strata_pool(&c))) goto done;
            if ((found = stratum_candidate(&c, (int)place, &x)) < 0) {
                st = c.err->code;
                goto done;
            }
        }
        for (int t = 0; !initial && t < o->max_tries && !found; t++) {
            x = child(&c);
            if ((found = usable(&c, x)) < 0) {
                st = c.err->code;
                goto done;
            }
        }
        if (!found && (found = random_candidate(&c, &x)) < 0) {
            st = c.err->code;
            goto done;
        }
        if (!found) break; /* exhausted */
        if (set_put(&c.seen, x, 1)) {
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            goto done;
        }
        out[(*n_out)++] = x;
    }
done:
    ctx_free(&c);
    return st;
}

/* ---- hypervolume ------------------------------------------------------------------------ */

static int by_cost(const void *x, const void *y) {
    const double *a = x, *b = y;
    if (a[1] != b[1]) return a[1] < b[1] ? -1 : 1;
    return a[0] > b[0] ? -1 : a[0] < b[0] ? 1 : 0;
}

double dse_evo_hypervolume2(const struct dse_evo_result *res, int n, double ref_top1, double ref_cost) {
    double *p = malloc(sizeof *p * 2 * (size_t)(n ? n : 1));
    if (!p) return NAN;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (res[i].obj[0] > ref_top1 && res[i].obj[1] < ref_cost) /* NaN fails both */
            p[2 * m] = res[i].obj[0], p[2 * m + 1] = res[i].obj[1], m++;
    qsort(p, (size_t)m, 2 * sizeof *p, by_cost);
    /* in increasing cost, each point that raises the best top-1 adds a strip out to ref_cost */
    double hv = 0, best = ref_top1;
    for (int i = 0; i < m; i++)
        if (p[2 * i] > best) hv += (p[2 * i] - best) * (ref_cost - p[2 * i + 1]), best = p[2 * i];
    free(p);
    return hv;
}

int dse_evo_hv_prefixes(const struct dse_evo_result *res, int n, double ref_top1, double ref_cost, double *hv) {
    /* The staircase of the points so far that add area: increasing cost, increasing top-1
     * (each one raises the best top-1 of all cheaper ones). A new point dominated by one
     * of them (cheaper or as cheap, and as accurate or more) adds nothing; one that adds
     * area drops the points it dominates. The area is summed over the staircase in
     * dse_evo_hypervolume2's order, so each hv[i] is the same double. */
    double *st = malloc(sizeof *st * 2 * (size_t)(n ? n : 1)); /* (top-1, cost) pairs */
    if (!st) return -1;
    int m = 0;
    double area = 0;
    for (int i = 0; i < n; i++) {
        const double a = res[i].obj[0], c = res[i].obj[1];
        int j = 0;
        while (j < m && st[2 * j + 1] < c) j++; /* st[0 .. j): cheaper; st[j] may cost the same */
        const int dominated = (j > 0 && st[2 * (j - 1)] >= a) || (j < m && st[2 * j + 1] == c && st[2 * j] >= a);
        if (a > ref_top1 && c < ref_cost && !dominated) { /* NaN fails the first test */
            int k = j;
            while (k < m && st[2 * k] <= a) k++; /* st[j .. k): as dear or dearer, no more accurate: dominated */
            memmove(st + 2 * (j + 1), st + 2 * k, sizeof *st * 2 * (size_t)(m - k));
            m += 1 - (k - j);
            st[2 * j] = a, st[2 * j + 1] = c;
            area = 0;
            for (int q = 0; q < m; q++) area += (st[2 * q] - (q ? st[2 * (q - 1)] : ref_top1)) * (ref_cost - st[2 * q + 1]);
        }
        hv[i] = area;
    }
    free(st);
    return 0;
}

int dse_evo_hv_curve(const struct dse_evo_result *res, int n, double *hv, double *ref_top1, double *ref_cost) {
    double lo = INFINITY, hi = -INFINITY;
    int usable = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(res[i].obj[0]) && isfinite(res[i].obj[1])) {
            if (res[i].obj[0] < lo) lo = res[i].obj[0];
            if (res[i].obj[1] > hi) hi = res[i].obj[1];
            usable++;
        }
    if (!usable) lo = hi = NAN;
    else hi = hi > 0 ? hi * 1.01 : hi + 1e-9;
    if (!usable || dse_evo_hv_prefixes(res, n, lo, hi, hv))
        for (int i = 0; i < n; i++) hv[i] = usable ? dse_evo_hypervolume2(res, i + 1, lo, hi) : 0; /* none, or no memory */
    if (ref_top1) *ref_top1 = lo;
    if (ref_cost) *ref_cost = hi;
    return usable;
}
