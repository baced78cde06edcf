/* bo.h: the cost-aware model-based proposer (issue #36, item 1): strategy "bo". A pure
 * function with evolution's contract (sweep/evolve.h, dse_evo_propose): given the space,
 * options (seed, budget, the cost objective) and the results recorded so far in the order
 * they were recorded, it returns the next K grid indices to train. Nothing is read or
 * written on disk; no global state.
 *
 * Why a model: every candidate's costs (params, FLOPs, model size) are known exactly before
 * training, so only top-1 is uncertain, and the hypervolume gain of a candidate of known
 * cost is a one-dimensional question. With budgets of 5-20 trainings, a model that shares
 * what each training taught across the grid beats sampling (evolution's first population
 * is a uniform sample, so at such budgets it is random search).
 *
 * The algorithm:
 *   - the pool: the feasible candidates (dse_sweep_prefilter does not prune them, their
 *     networks build): the whole grid up to DSE_BO_SCAN_MAX candidates, else a random
 *     draw of DSE_BO_POOL distinct ones (seeded like the proposals, below);
 *   - initial design: while fewer than n0 candidates have been recorded or excluded
 *     (counting this call's proposals), proposal j is drawn uniformly from the j-th of n0
 *     equal-count slices of the pool sorted by the cost objective (quantile strata: the
 *     same in the cost and in its log), so the first n0 span the cost axis, cheap to dear,
 *     and from the slice's candidates with at least its median compute score (more
 *     compute for the same cost: the better bet for top-1): log forward FLOPs for a design
 *     of at most DSE_BO_INIT_FLOPS_MAX (budgets under 20), for a larger one (budgets of
 *     20 and more, or no budget) log FLOPs less the slice's least-squares slope of log
 *     FLOPs on log params times log params: compute for the size (bo.c stratum_pick says
 *     why); any of the slice's when none of those is left;
 *     n0 = dse_bo_n_init(budget) = max(3, min(budget / 4, 8)): three points are the
 *     fewest that show a trend along cost with a point between; a quarter of the budget
 *     leaves three quarters to the model; past 8 a space of a few axes is covered well
 *     enough for the model to take over (Bayesian optimization's usual 2d-10 points
 *     assume many axes of equal weight; here the cost axis carries most of top-1's trend);
 *   - surrogate: a Gaussian process on top-1 (Rasmussen & Williams, "Gaussian Processes for
 *     Machine Learning", 2006, alg. 2.1) over the candidate's features: each varied axis
 *     of the space, numeric ones (mp.def's INT, REAL) at their value's place in numeric
 *     order scaled to [0, 1], choices (bypass, pools) one-hot; then the logs of params and
 *     forward FLOPs, scaled to [0, 1] over the pool. Matern-5/2 kernel with one length
 *     scale per feature (ARD), a constant mean (the results' mean; with opts.ref_top1 a
 *     line in the log params feature, slope at least 0, by least squares: bo.c says
 *     why), the signal variance at
 *     its maximum-likelihood value given the rest (closed form), and the length scales and
 *     noise chosen by coordinate search over fixed grids (bo.c) maximizing the log
 *     marginal likelihood: deterministic, no restarts. Cholesky in double. The model
 *     holds the most recent DSE_BO_MODEL_MAX usable results, its hyperparameters are
 *     fitted to the most recent DSE_BO_FIT_MAX (the front holds them all). Results with a
 *     NaN top-1 are seen (never proposed again) but not in the model; each result is one
 *     point (a candidate with replicates: their mean, as the search records it);
 *   - acquisition: the expected hypervolume improvement of (top-1 up, cost down) for a
 *     candidate of known cost c, exact (dse_bo_ehvi2): the gain as a function of its
 *     top-1 y is piecewise linear, sum over the front's steps right of c of
 *     width x (y - level)+, and E[(Y - h)+] for Y ~ N(mu, sd^2) is
 *     (mu - h) Phi(z) + sd phi(z), z = (mu - h) / sd. Reference point as
 *     dse_evo_hv_curve takes it: the lowest usable top-1 recorded (opts.ref_top1 instead
 *     when it is given) and the pool's highest cost x 1.01. With more than one cost
 *     objective the acquisition uses the first (opts.cost) and the others are ignored;
 *   - batch: the K proposals are chosen one after the other, each added to the model and
 *     the front at its predicted mean (kriging believer), so no two are the same and each
 *     looks elsewhere;
 *   - until at least two usable results are known, proposals past n0 are drawn from the
 *     strata again (place modulo n0); when no candidate's improvement is above zero (far
 *     underflow), the one with the highest mean + 2 sd above the front at its cost wins.
 *   - multi-fidelity (--early-stop asha): results at a rung of asynchronous successive
 *     halving (opts.part: a proposal's top-1 after fewer epochs than the schedule's, one per
 *     rung it reached) are points of the model too, with one feature more, the fidelity
 *     epoch / epochs (1 for a full result), its own length scale, and the prior mean a line
 *     in it (slope at least 0, by least squares, before the log params line): the model
 *     learns from a candidate that asha stops, and from one still waiting at a rung, how
 *     good it would have been. Predictions, the front and the reference are at full
 *     fidelity only (a rung's top-1 never enters the front; the reference is the lowest
 *     full result's, or the lowest rung result's before any). With no partial results the
 *     model has no fidelity feature: the proposals are those of a search without them.
 *
 * Determinism: all randomness (the pool of a large grid, the draws within strata) comes
 * from one PCG32 seeded with the seed, on a stream chosen by the number of results and of
 * exclusions; ties in the acquisition go to the lower place in the pool. The same (space,
 * options, results in order, exclusions in order) always give the same proposals, and
 * proposals are prefix-stable: asking for K gives the first K of what asking for K + 1
 * gives. A sweep drives it as it drives evolution (sweep/search.c), so replaying its log
 * gives its proposals again. */
#ifndef DSE_SWEEP_BO_H
#define DSE_SWEEP_BO_H

#include <stdint.h>

#include "sweep/evolve.h"

/* A result at lower fidelity: top-1 after `epoch` of the schedule's `of` epochs (a rung of
 * --early-stop asha; 1 <= epoch < of), of a proposal still training, waiting or stopped. */
struct dse_bo_partial {
    uint64_t index;
    int      epoch, of;
    double   top1;
};

struct dse_bo_opts {
    uint64_t          seed;
    int64_t           budget;  /* candidates the search will train; sizes the initial design
                                  (0: unknown, n0 = 8) */
    int               n_init;  /* the initial design's size; 0: dse_bo_n_init(budget) */
    enum dse_evo_cost cost;    /* the cost objective (res[].obj[1]): analytic, known before
                                  training (objective.def's ANALYTIC) */
    double            ref_top1; /* the reference top-1 of the hypervolume the search is
                                   judged by, when the user knows it (a top-1 below which a
                                   candidate is worth nothing); NaN: the lowest recorded */
    const struct dse_bo_partial *part; /* results at lower fidelity, in recorded order */
    int               n_part;
};

/* seed 1, budget 0, n_init 0, cost params, ref_top1 NaN, no partial results. */
void dse_bo_opts_default(struct dse_bo_opts *o);

/* max(3, min(budget / 4, 8)); 8 for budget 0 (unknown). */
int dse_bo_n_init(int64_t budget);

/* The largest initial design whose members are drawn by log FLOPs alone; larger ones draw
 * by log FLOPs for the slice's params (the algorithm above). */
#define DSE_BO_INIT_FLOPS_MAX 4

/* The candidates a pool holds at most: the whole grid up to DSE_BO_SCAN_MAX, else a random
 * DSE_BO_POOL of them. */
#define DSE_BO_SCAN_MAX 4096
#define DSE_BO_POOL     2048

/* The model's points at most (a posterior is O(n^3) in them) and those its hyperparameters
 * are fitted to (each of about a hundred likelihoods is a Cholesky). */
#define DSE_BO_MODEL_MAX 256
#define DSE_BO_FIT_MAX   64

/* The next k proposals (grid indices) into out[0 .. *n_out): distinct, feasible, none in
 * res[] or excl[] (proposed earlier, not yet recorded). res[i].obj[0] is top-1 (NaN: no
 * usable result); the other objectives are not read (the costs come from the analyzer).
 * *n_out < k when the pool holds no more such candidates. DSE_ERR_CONFIG: bad options (a
 * measured cost), an index past the grid, a grid of more than 2^64 candidates. */
enum dse_status dse_bo_propose(const struct dse_space *s, const struct dse_bo_opts *o,
                               const struct dse_evo_result *res, int n_res, const uint64_t *excl, int n_excl, int k,
                               uint64_t *out, int *n_out, struct dse_err *err);

/* The expected hypervolume improvement that a point of cost c and top-1 Y ~ N(mu, sd^2)
 * brings to the points (top1[i], cost[i]), i < n (any order; dominated ones and ones not
 * better than the reference add nothing, as in dse_evo_hypervolume2), against the
 * reference (ref_top1, ref_cost). sd = 0 gives the improvement of Y = mu. 0 for c >=
 * ref_cost. -1 if out of memory. */
double dse_bo_ehvi2(const double *top1, const double *cost, int n, double ref_top1, double ref_cost, double c,
                    double mu, double sd);

/* The Gaussian process's posterior at nq query points xq[nq x d] given n points x[n x d]
 * (row-major) with values y[n]: prior mean m, Matern-5/2 kernel
 * sf2 (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r), r^2 = sum_j ((a_j - b_j) / ell[j])^2,
 * noise variance sn2 added on the diagonal. mu[i] the posterior mean, sd[i] the standard
 * deviation of the latent function (noise not included). DSE_ERR_CONFIG when the kernel
 * matrix is not positive definite (sn2 = 0 with repeated points), DSE_ERR_NOMEM. */
enum dse_status dse_bo_gp_posterior(const double *x, const double *y, int n, int d, const double *ell, double m,
                                    double sf2, double sn2, const double *xq, int nq, double *mu, double *sd,
                                    struct dse_err *err);

#endif
