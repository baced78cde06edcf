/* evolve.h: multi-objective evolution over a design space (issue #16, item 1): the
 * proposer. A pure function: given the space, options (seed, population size) and the
 * results recorded so far in the order they were recorded, it returns the next K grid
 * indices to train. Nothing is read or written on disk; no global state.
 *
 * The algorithm is NSGA-II (Deb et al., "A Fast and Elitist Multiobjective Genetic
 * Algorithm: NSGA-II", IEEE TEC 2002) run steady-state:
 *   - objectives: obj[0] = top-1, maximized; obj[1 .. n_obj) = costs, minimized (any of
 *     sweep/objective.def, filled with dse_evo_costs);
 *   - the population is the best `pop` recorded results (elitist: parents and children
 *     compete alike) by non-dominated rank, then crowding distance (larger first), then
 *     recording order (earlier first);
 *   - each child comes from a binary tournament on that order (one parent, or two with
 *     probability p_crossover, mixed by uniform crossover over the axes), then mutation:
 *     each varied axis with probability 1 / (varied axes), at least one, moves to a
 *     neighbouring value: numeric keys (INT, REAL in metaparams/mp.def) to the next or
 *     previous value in numeric order, choices (bypass, pools) to another choice;
 *   - a child that the constraints prune (dse_sweep_prefilter, the analytic sweep's own
 *     rule), whose network cannot be built, or that is already recorded, excluded or
 *     proposed in this call is discarded; after max_tries discarded children the proposal
 *     falls back to a random candidate that is none of those;
 *   - while fewer than `pop` candidates have been recorded or excluded (counting the
 *     proposals of this call), proposals are the initial population: a random sample,
 *     uniform or stratified on a cost (opts.strata).
 * The space's `sample` is ignored: evolution searches the whole grid.
 *
 * Determinism: all randomness comes from one PCG32 seeded with the seed, on a stream
 * chosen by the number of results and of exclusions. The same (space, options, results in
 * order, exclusions in order) always give the same proposals, and proposals are
 * prefix-stable: asking for K gives the first K of what asking for K + 1 gives.
 *
 * How it is meant to be driven (the next brick; nothing calls it yet): the sweep
 * directory logs results in the order they are recorded (each a candidate's grid index,
 * "index" in its record, and its objective values: "top1" and the costs from
 * dse_evo_costs). A worker that finds no proposal left to train takes the sweep's lock,
 * reads that log and the proposals already written but not yet recorded (the
 * exclusions, in the order they were written), calls dse_evo_propose for K more, writes
 * them to the directory (before anything trains them), and releases the lock; workers
 * then claim proposals with leases as they claim candidates today. A candidate that
 * trained but has no usable top-1 (failed, diverged) is still recorded, with NaN
 * objectives: never proposed again, never a parent. Replaying the log from the start
 * gives every proposal again, which is how a search resumes from its directory. */
#ifndef DSE_SWEEP_EVOLVE_H
#define DSE_SWEEP_EVOLVE_H

#include <stdint.h>

#include "sweep/objective.h"
#include "sweep/space.h"

struct dse_cost_totals; /* analysis/analysis.h */

/* Cost c of a candidate from its analytic costs for one image and its training-memory
 * estimate in bytes (dse_sweep_prefilter's outputs), and its compressed-size estimate in
 * bytes (dse_sweep_compress_est; -1: none, its space has no compress section); NaN for a
 * measured cost, and for compressed_mb without an estimate. */
double dse_evo_cost_value(enum dse_evo_cost c, const struct dse_cost_totals *one, int64_t train_mem,
                          int64_t est_compressed);
/* Costs costs[0 .. n) of grid index k into out[0 .. n), from the analyzer. *pruned = 1 if
 * the space's constraints prune it. Fails as dse_sweep_prefilter does. */
enum dse_status dse_evo_costs(const struct dse_space *s, uint64_t k, const enum dse_evo_cost *costs, int n,
                              double *out, int *pruned, struct dse_err *err);

/* 1 if the space key axis (enum dse_axis_key) is numeric (INT, REAL in metaparams/mp.def:
 * neighbours in numeric order), 0 for a choice (bypass, pools): the one table evolution's
 * mutation and bo's features read. */
int dse_evo_axis_numeric(int axis);

/* One recorded result. A NaN in obj[0 .. n_obj) marks a candidate trained without a
 * usable result: it counts as seen, never as a parent. */
struct dse_evo_result {
    uint64_t index;                  /* grid index (dse_space_candidate) */
    double   obj[DSE_EVO_OBJ_MAX];   /* obj[0]: top-1, maximized; obj[1 ..]: costs, minimized */
};

struct dse_evo_opts {
    uint64_t seed;
    int      pop;          /* population size: the initial random sample, and how many of
                              the best results parents are drawn from (>= 1) */
    int      n_obj;        /* objectives per result, 2 .. DSE_EVO_OBJ_MAX */
    double   p_crossover;  /* chance that a child has two parents (uniform crossover), 0 .. 1 */
    int      max_tries;    /* children discarded before the random fallback (>= 1) */
    int      aging;        /* 0: NSGA-II, parents from the best `pop` of all results; 1: regularized
                              (aging) evolution, parents from the `pop` most recent results, ranked
                              the same way (Real et al., AAAI 2019, with Pareto selection) */
    int      strata;       /* -1: the initial population is a uniform random sample; else an enum
                              dse_evo_cost: it is stratified on that cost, known before training:
                              candidate j of the first `pop` is drawn from the j-th of `pop`
                              equal-count slices of the feasible candidates sorted by it (all of
                              them for grids of up to DSE_EVO_STRATA_SCAN; else of a random pool of
                              DSE_EVO_STRATA_POOL x pop), so the sample spans the cost axis */
};
#define DSE_EVO_STRATA_SCAN 4096
#define DSE_EVO_STRATA_POOL 16

/* seed 1, pop DSE_EVO_POP, two objectives, p_crossover 0.5, max_tries 32, NSGA-II (no aging), a
 * uniform initial sample (strata -1). */
void dse_evo_opts_default(struct dse_evo_opts *o);

/* The population for a search of `budget` candidates (issue #36, item 2), what a sweep uses
 * when its space file sets no pop: budget / 3 within [DSE_EVO_POP_MIN, DSE_EVO_POP], i.e.
 * clamp(budget / 3, 4, 16); DSE_EVO_POP for an unknown budget (0). The first generation is a
 * random sample, so with a population as large as the budget evolution is random search; a
 * third leaves at least two thirds of a budget of 12 or more to evolution. Budgets under 12
 * get 4, more than a third: on experiments/search_bench's 96-candidate table (25 seeds,
 * bench/search_replay --pop P) populations of 2 and 3 did worse than 4 at every budget from
 * 10 to 48 (at 10: 0.914, 0.918, 0.928 of the grid's hypervolume; at 19: 0.946, 0.954,
 * 0.963): a tournament among too few parents climbs from too few starts. Measured against
 * a population of 16 the rule gains nothing: on the table 0.928 (+-0.008) against 0.942
 * (+-0.005) at budget 10, 0.964 against 0.967 at 19, 0.981 against 0.983 at 32; on
 * bench/large_space.cfg (analytic objective, 25 seeds) 0.620 against 0.620 at 30. Neither
 * benchmark rewards early exploitation (experiments/search_bench/README.md says why), and
 * dse_search_auto gives small spaces to bo. An explicit pop is kept; dse_search_resolve
 * says so where it exceeds this rule's. */
#define DSE_EVO_POP     16
#define DSE_EVO_POP_MIN 4
int dse_evo_pop_for_budget(int64_t budget);

/* The next k proposals (grid indices) into out[0 .. *n_out): distinct, feasible (the
 * constraints do not prune them and their networks build), none in res[] or excl[]
 * (proposed earlier, not yet recorded). *n_out < k when the space has no more such
 * candidates: a grid of at most DSE_EVO_SCAN_MAX candidates is then scanned whole, a
 * larger one is given up after DSE_EVO_DRAWS_MAX random draws. DSE_ERR_CONFIG: bad
 * options, an index past the grid, a grid of more than 2^64 candidates. */
#define DSE_EVO_SCAN_MAX  65536
#define DSE_EVO_DRAWS_MAX 4096
enum dse_status dse_evo_propose(const struct dse_space *s, const struct dse_evo_opts *o,
                                const struct dse_evo_result *res, int n_res, const uint64_t *excl, int n_excl,
                                int k, uint64_t *out, int *n_out, struct dse_err *err);

/* Hypervolume of the points (res[i].obj[0], res[i].obj[1]) (top-1 up, cost down) against
 * the reference point (ref_top1, ref_cost): the area that some point dominates and that
 * dominates the reference. Points with NaN, or not better than the reference in both,
 * add nothing. */
double dse_evo_hypervolume2(const struct dse_evo_result *res, int n, double ref_top1, double ref_cost);

/* hv[i] = dse_evo_hypervolume2(res, i + 1, ref_top1, ref_cost) for every i < n, the same
 * doubles, in one pass (a staircase kept as points arrive) instead of n. -1 if out of
 * memory (hv untouched). */
int dse_evo_hv_prefixes(const struct dse_evo_result *res, int n, double ref_top1, double ref_cost, double *hv);

/* A search's progress: hv[i] = the hypervolume of res[0 .. i] (in recorded order) on
 * objectives 0 and 1, for i < n, against the reference point of all n: the lowest top-1
 * and the highest cost x 1.01 among the usable results (*ref_top1, *ref_cost; may be
 * NULL). What a report shows as hypervolume against candidates trained. Returns the number
 * of usable results (finite objectives); with none, hv[] is all 0 and the references NaN. */
int dse_evo_hv_curve(const struct dse_evo_result *res, int n, double *hv, double *ref_top1, double *ref_cost);

#endif
