/* comm.c: the closed-form communication model of synchronous data-parallel training,
 * FireCaffe's (Iandola thesis ch. 3, eqs. 3.3 and 3.4), with a per-message latency added
 * and the compute time of a worker's share of the batch. `dse analyze --workers` prints it;
 * docs/comm-model.md explains the assumptions and bench/bench_allreduce.c checks it. */
#include "analysis/analysis.h"

#include <math.h>

int dse_comm_tree_levels(int64_t workers) {
    int levels = 0;
    while (levels < 62 && ((int64_t)1 << levels) < workers) levels++;
    return levels;
}

/* One message of |grad W| bytes: Hockney's alpha + n / BW. */
static double message_s(const struct dse_comm_opts *o) {
    return o->latency_s + (double)o->grad_bytes / o->bandwidth;
}

/* Eq. 3.3, |grad W| p / BW: the server's link carries one message per worker in turn. One
 * worker needs no server (the equation read literally would charge it |grad W| / BW). */
double dse_comm_ps_s(const struct dse_comm_opts *o, int64_t workers) {
    return workers <= 1 ? 0.0 : (double)workers * message_s(o);
}

/* Eq. 3.4, |grad W| 2 log2(p) / BW: log2(p) levels to sum, as many to broadcast the sum. */
double dse_comm_tree_s(const struct dse_comm_opts *o, int64_t workers) {
    return 2.0 * dse_comm_tree_levels(workers) * message_s(o);
}

enum dse_status dse_comm_point(const struct dse_comm_opts *o, int64_t workers, struct dse_comm_point *out,
                               struct dse_err *err) {
    if (!(o->bandwidth > 0) || !isfinite(o->bandwidth))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "bandwidth = %g bytes/s; expected > 0", o->bandwidth);
    if (!(o->latency_s >= 0) || !isfinite(o->latency_s))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "latency = %g s; expected >= 0", o->latency_s);
    if (!(o->img_per_s > 0) || !isfinite(o->img_per_s))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "img_per_s = %g; expected > 0", o->img_per_s);
    if (o->batch < 1 || o->grad_bytes < 0)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "batch = %lld, grad_bytes = %lld; expected >= 1, >= 0",
                           (long long)o->batch, (long long)o->grad_bytes);
    if (workers < 1 || workers > DSE_COMM_WORKERS_MAX || workers > o->batch)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "workers = %lld; expected 1 to %lld (the batch, at most %d)",
                           (long long)workers, (long long)(o->batch < DSE_COMM_WORKERS_MAX ? o->batch : DSE_COMM_WORKERS_MAX),
                           DSE_COMM_WORKERS_MAX);
    struct dse_comm_point p = { .workers = workers, .images = (o->batch + workers - 1) / workers };
    p.ps_s             = dse_comm_ps_s(o, workers);
    p.tree_s           = dse_comm_tree_s(o, workers);
    p.compute_s        = (double)p.images / o->img_per_s;
    p.step_ps_s        = p.compute_s + p.ps_s;
    p.step_tree_s      = p.compute_s + p.tree_s;
    double one         = (double)o->batch / o->img_per_s; /* one worker: the whole batch, no communication */
    p.speedup_ps       = one / p.step_ps_s;
    p.speedup_tree     = one / p.step_tree_s;
    p.efficiency_ps    = p.speedup_ps / (double)workers;
    p.efficiency_tree  = p.speedup_tree / (double)workers;
    *out = p;
    return DSE_OK;
}

int dse_comm_workers_list(int64_t max, int64_t *out, int cap) {
    int n = 0;
    for (int64_t p = 1; p < max && n < cap; p *= 2) out[n++] = p;
    if (max >= 1 && n < cap) out[n++] = max;
    return n;
}
