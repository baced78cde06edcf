/* prefilter.c: the analytic pre-filter of a candidate (sweep/prefilter.h): metaparameters ->
 * network (metaparams/) -> closed-form costs (analysis/) -> the first constraint that prunes
 * it. The analytic sweep (sweep/sweep.c) records it; the search (sweep/evolve.c) proposes
 * only what it keeps; GPU workers size their claims by its memory estimate. */
#include "sweep/prefilter.h"

#include <stdio.h>
#include <stdlib.h>

#include "analysis/analysis.h"

/* Costs of candidate mp (built into net) and the constraint that prunes it, if any. */
enum dse_status dse_sweep_cost_candidate(const struct dse_space *s, const struct dse_mp *mp, struct dse_net *net,
                                         struct dse_cost_layer **costs, size_t *cap, struct dse_cost_totals *one,
                                         struct dse_cost_totals *train, char *why, int why_size,
                                         const char **pruned_by, struct dse_err *err) {
    enum dse_status st;
    *pruned_by = NULL;
    if ((st = dse_space_build(s, mp, net, err))) return st;
    if ((size_t)net->n_layers > *cap) {
        free(*costs);
        *cap = (size_t)net->n_layers * 2;
        if (!(*costs = malloc(sizeof **costs * *cap))) {
            *cap = 0;
            return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        }
    }
    if ((st = dse_cost_net(net, s->cons.train_mem_batch, *costs, train, err))) return st;
    *one = *train; /* params do not depend on the batch; FLOPs are exactly linear in it */
    one->flops = train->flops / s->cons.train_mem_batch;
    const struct dse_constraints *c = &s->cons;
    if (c->max_params && one->params > c->max_params)
        snprintf(why, (size_t)why_size, "max_params = %lld (params %lld)", (long long)c->max_params,
                 (long long)one->params), *pruned_by = why;
    else if (c->max_flops && one->flops > c->max_flops)
        snprintf(why, (size_t)why_size, "max_flops = %lld (flops %lld)", (long long)c->max_flops,
                 (long long)one->flops), *pruned_by = why;
    else if (c->max_model_mb > 0 && one->param_bytes / 1e6 > c->max_model_mb)
        snprintf(why, (size_t)why_size, "max_model_mb = %g (model %.3f MB)", c->max_model_mb,
                 one->param_bytes / 1e6), *pruned_by = why;
    else if (c->max_train_mem_mib > 0 && train->mem_train_bytes / 1048576.0 > c->max_train_mem_mib)
        snprintf(why, (size_t)why_size, "max_train_mem_mib = %g (%.1f MiB at batch %d)", c->max_train_mem_mib,
                 train->mem_train_bytes / 1048576.0, c->train_mem_batch), *pruned_by = why;
    return DSE_OK;
}

enum dse_status dse_sweep_cost_index(const struct dse_space *s, uint64_t k, struct dse_mp *mp,
                                     struct dse_cost_totals *one, struct dse_cost_totals *train, char *why,
                                     int why_size, const char **pruned_by, struct dse_err *err) {
    struct dse_net net;
    struct dse_cost_layer *costs = NULL;
    size_t cap = 0;
    dse_net_init(&net, s->name, 1, 1, 1);
    dse_space_candidate(s, k, mp);
    enum dse_status st = dse_sweep_cost_candidate(s, mp, &net, &costs, &cap, one, train, why, why_size, pruned_by, err);
    free(costs);
    dse_net_deinit(&net);
    return st;
}

enum dse_status dse_sweep_prefilter(const struct dse_space *s, uint64_t k, struct dse_cost_totals *one,
                                    int64_t *train_mem, int *pruned, struct dse_err *err) {
    struct dse_cost_totals train;
    struct dse_mp mp;
    char why[200];
    const char *pruned_by;
    enum dse_status st = dse_sweep_cost_index(s, k, &mp, one, &train, why, sizeof why, &pruned_by, err);
    if (!st) {
        *train_mem = train.mem_train_bytes;
        *pruned = pruned_by != NULL;
    }
    return st;
}

/* Grid index k's network built into net (initialized by the caller) and costed at batch:
 * *tot, and the per-layer costs into *costs (malloc'd; the caller frees it, also on failure). */
static enum dse_status build_costed(const struct dse_space *s, uint64_t k, int batch, struct dse_net *net,
                                    struct dse_cost_layer **costs, struct dse_cost_totals *tot, struct dse_err *err) {
    struct dse_mp mp;
    dse_space_candidate(s, k, &mp);
    enum dse_status st = dse_space_build(s, &mp, net, err);
    if (!st && !(*costs = malloc(sizeof **costs * (size_t)(net->n_layers ? net->n_layers : 1))))
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    if (!st) st = dse_cost_net(net, batch, *costs, tot, err);
    return st;
}

enum dse_status dse_sweep_train_mem(const struct dse_space *s, uint64_t k, int batch, int64_t *bytes,
                                    struct dse_err *err) {
    struct dse_net net;
    struct dse_cost_totals tot;
    struct dse_cost_layer *costs = NULL;
    *bytes = 0;
    dse_net_init(&net, s->name, 1, 1, 1);
    enum dse_status st = build_costed(s, k, batch, &net, &costs, &tot, err);
    if (!st) *bytes = tot.mem_train_bytes;
    free(costs);
    dse_net_deinit(&net);
    return st;
}

enum dse_status dse_sweep_compress_est(const struct dse_space *s, uint64_t k, int64_t *bytes, struct dse_err *err) {
    struct dse_net net;
    struct dse_cost_totals tot;
    struct dse_cost_layer *costs = NULL;
    *bytes = -1;
    dse_net_init(&net, s->name, 1, 1, 1);
    enum dse_status st = build_costed(s, k, 1, &net, &costs, &tot, err);
    if (!st) *bytes = dse_cost_compressed_est(&net, costs, s->compress.density, s->compress.bits, NULL);
    free(costs);
    dse_net_deinit(&net);
    return st;
}
