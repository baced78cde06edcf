/* prefilter.h: the analytic pre-filter of a candidate (sweep/prefilter.c): its costs for one
 * image, its training-memory estimate, and the constraint that prunes it. The floor of the
 * space (with sweep/space.h): the search and the analytic sweep above it both use it. */
#ifndef DSE_SWEEP_PREFILTER_H
#define DSE_SWEEP_PREFILTER_H

#include <stddef.h>
#include <stdint.h>

#include "sweep/space.h"

struct dse_cost_layer;  /* analysis/analysis.h */
struct dse_cost_totals;

/* The analytic pre-filter of grid index k, the rule dse_sweep_analytic prunes by: its
 * costs for one image (*one), its training-memory estimate at the constraints'
 * train_mem_batch (*train_mem, bytes), and *pruned = 1 if a constraint prunes it. A
 * candidate whose network cannot be built fails with the builder's status
 * (DSE_ERR_CONFIG, DSE_ERR_SHAPE: a map that shrinks to nothing). */
enum dse_status dse_sweep_prefilter(const struct dse_space *s, uint64_t k, struct dse_cost_totals *one,
                                    int64_t *train_mem, int *pruned, struct dse_err *err);

/* Costs of candidate mp, built into net (costs[*cap], grown as needed, for its layers):
 * *one for one image, *train at the constraints' train_mem_batch, and *pruned_by the
 * constraint that prunes it, written into why (NULL if none does). */
enum dse_status dse_sweep_cost_candidate(const struct dse_space *s, const struct dse_mp *mp, struct dse_net *net,
                                         struct dse_cost_layer **costs, size_t *cap, struct dse_cost_totals *one,
                                         struct dse_cost_totals *train, char *why, int why_size,
                                         const char **pruned_by, struct dse_err *err);

/* dse_sweep_cost_candidate of grid index k (its metaparameters into *mp), with a network
 * and layer costs of its own, freed before it returns. */
enum dse_status dse_sweep_cost_index(const struct dse_space *s, uint64_t k, struct dse_mp *mp,
                                     struct dse_cost_totals *one, struct dse_cost_totals *train, char *why,
                                     int why_size, const char **pruned_by, struct dse_err *err);

/* The analyzer's training-memory estimate (analysis.h, mem_train_bytes) of grid index
 * k's candidate at `batch` images: what a GPU worker checks against free device memory. */
enum dse_status dse_sweep_train_mem(const struct dse_space *s, uint64_t k, int batch, int64_t *bytes,
                                    struct dse_err *err);

/* The analyzer's estimate of grid index k's candidate compressed by the space's compress
 * section (dse_cost_compressed_est at compress.density and compress.bits), in bytes: the
 * record's est_compressed_bytes, and a search's compressed_mb before training. */
enum dse_status dse_sweep_compress_est(const struct dse_space *s, uint64_t k, int64_t *bytes, struct dse_err *err);

#endif
