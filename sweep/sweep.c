/* sweep.c: analytic sweeps. Each candidate: metaparameters -> network (metaparams/) ->
 * closed-form costs (analysis/) -> constraints -> one JSON file written by atomic rename
 * (base/fs.c). The layout and file format are in docs/sweep-dir.md. */
#include "sweep/sweep.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/analysis.h"
#include "base/fs.h"
#include "sweep/json_read.h"
#include "sweep/search.h"

#define MAX_CANDIDATES 10000000ULL /* files in one directory; sample beyond this */

/* The value of "key": "..." in a JSON text we wrote ourselves (manifest, candidate). */
static int json_string_field(const char *text, const char *key, char *out, int size) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *p = strstr(text, pat);
    if (!p) return -1;
    p += strlen(pat);
    int n = (int)strcspn(p, "\"");
    if (n >= size) return -1;
    memcpy(out, p, (size_t)n);
    out[n] = '\0';
    return 0;
}

/* The manifest and the copy of the space file are created once. A directory that
 * already holds a sweep must hold this space's (same file hash), else it is refused;
 * two processes starting the same sweep at once both go on, two different ones cannot
 * mix (only one of them can create sweep.json). */
static enum dse_status claim_dir(const struct dse_space *s, const char *dir, uint64_t n,
                                 struct dse_err *err) {
    char path[4096], buf[10000], varied[512] = "", stamp[32], name[300], file[8300], hash[32] = "", want[32];
    int len = 0, existed;
    enum dse_status st;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    for (int k = 0; k < DSE_AX_COUNT; k++)
        if (s->axes[k].n > 1)
            len += snprintf(varied + len, sizeof varied - (size_t)len, "%s\"%s\"", len ? ", " : "",
                            dse_axis_name((enum dse_axis_key)k));
    dse_json_str(name, sizeof name, s->name, strlen(s->name));
    dse_json_str(file, sizeof file, s->path, strlen(s->path));
    snprintf(want, sizeof want, "%016llx", (unsigned long long)s->hash);
    char strategy[64] = "", have_strategy[32] = "grid"; /* grid: no key, so grid sweeps' manifests stay as they were */
    if (s->search.strategy != DSE_SEARCH_GRID)
        snprintf(strategy, sizeof strategy, "  \"strategy\": \"%s\",\n", dse_strategy_str(s->search.strategy));
    snprintf(buf, sizeof buf,
             "{\n  \"format\": \"dse-sweep-1\",\n  \"space\": %s,\n  \"space_file\": %s,\n"
             "  \"space_hash\": \"%s\",\n  \"candidates\": %llu,\n  \"varied\": [%s],\n"
             "%s  \"created\": \"%s\",\n  \"dse_version\": \"" DSE_VERSION "\"\n}\n",
             name, file, want, (unsigned long long)n, varied, strategy, stamp);
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    if ((st = dse_fs_create_atomic(path, buf, strlen(buf), &existed, err))) return st;
    if (existed) {
        char *text;
        if ((st = dse_fs_read(path, &text, NULL, err))) return st;
        int ok = json_string_field(text, "space_hash", hash, sizeof hash) == 0 && !strcmp(hash, want);
        json_string_field(text, "strategy", have_strategy, sizeof have_strategy);
        free(text);
        if (!ok)
            return dse_err_set(err, DSE_ERR_CONFIG, dir, 0,
                               "holds a sweep of another space file (space_hash %s, this file's is %s); "
                               "give another --out directory", hash[0] ? hash : "missing", want);
        if (strcmp(have_strategy, dse_strategy_str(s->search.strategy)))
            return dse_err_set(err, DSE_ERR_CONFIG, dir, 0, "holds a sweep with strategy \"%s\", and this command "
                               "asks for \"%s\"; give the same strategy (or --strategy %s), or another --out directory",
                               have_strategy, dse_strategy_str(s->search.strategy), have_strategy);
    }
    char *copy;
    size_t clen;
    if ((st = dse_fs_read(s->path, &copy, &clen, err))) return st;
    snprintf(path, sizeof path, "%s/space.cfg", dir);
    st = dse_fs_create_atomic(path, copy, clen, &existed, err);
    free(copy);
    return st;
}

static int cmp_id(const void *a, const void *b) {
    return strcmp((const char *)a, (const char *)b);
}

/* The "metaparams" object of a candidate record: mp.def's keys in its order, one line per
 * group; an IF_SET key only where the space sets it or it differs from its default (so
 * the records of spaces that never name it stay as they were). */
static int record_metaparams(char *buf, int size, const struct dse_space *s, const struct dse_mp *mp) {
    int n = 0, group = -1;
    char val[256];
    for (int k = 0; k < DSE_MP_COUNT; k++) {
        const struct dse_mp_info *in = &dse_mp_info[k];
        if (in->id == DSE_MP_ID_IF_SET && !s->axes[k].line && dse_mp_is_default(mp, (enum dse_mp_key)k))
            continue;
        const char *sep = group < 0 ? "    " : group != (int)in->group ? ",\n    " : ", ";
        const char *q = in->type == DSE_MP_TYPE_BYPASS || in->type == DSE_MP_TYPE_POOLS ? "\"" : "";
        dse_mp_value_str((enum dse_mp_key)k, dse_mp_get(mp, (enum dse_mp_key)k), val, sizeof val);
        n += snprintf(buf + n, (size_t)(size > n ? size - n : 0), "%s\"%s\": %s%s%s", sep, in->key, q, val, q);
        group = (int)in->group;
    }
    return n;
}

/* The analytic part of a candidate file: everything before "status". */
static int candidate_head(char *buf, int size, const struct dse_space *s, const char *id, uint64_t index,
                          int replicate, const struct dse_mp *mp, const struct dse_cost_totals *one,
                          int64_t train_mem, int train_batch) {
    char mps[2048], rep[48] = ""; /* "replicate" only where the space has replicates: other records stay as they were */
    record_metaparams(mps, sizeof mps, s, mp);
    if (s->replicates > 1) snprintf(rep, sizeof rep, "  \"replicate\": %d,\n", replicate);
    double mb = (double)one->param_bytes / 1e6, mib = (double)one->param_bytes / 1048576.0;
    return snprintf(buf, (size_t)size,
        "{\n  \"id\": \"%s\",\n  \"index\": %llu,\n%s  \"metaparams\": {\n%s\n  },\n"
        "  \"params\": %lld,\n  \"model_bytes\": %lld,\n  \"model_mb\": %.6f,\n  \"model_mib\": %.6f,\n"
        "  \"flops\": %lld,\n  \"train_mem_bytes\": %lld,\n  \"train_mem_batch\": %d,\n",
        id, (unsigned long long)index, rep, mps, (long long)one->params, (long long)one->param_bytes, mb, mib,
        (long long)one->flops, (long long)train_mem, train_batch);
}

/* The candidate file's text, as the analytic sweep writes it. */
static int candidate_json(char *buf, int size, const struct dse_space *s, const char *id, uint64_t index,
                          int replicate, const struct dse_mp *mp, const struct dse_cost_totals *one,
                          int64_t train_mem, int train_batch, const char *pruned_by) {
    int n = candidate_head(buf, size, s, id, index, replicate, mp, one, train_mem, train_batch);
    n += snprintf(buf + n, (size_t)(size - n), "  \"status\": \"%s\",\n  \"pruned_by\": ",
                  pruned_by ? "pruned" : "pending");
    if (pruned_by) n += snprintf(buf + n, (size_t)(size - n), "\"%s\",\n", pruned_by);
    else n += snprintf(buf + n, (size_t)(size - n), "null,\n");
    n += snprintf(buf + n, (size_t)(size - n), "  \"top1\": null,\n  \"top5\": null\n}\n");
    return n;
}

/* Costs of candidate mp (built into net) and the constraint that prunes it, if any. */
static enum dse_status cost_candidate(const struct dse_space *s, const struct dse_mp *mp, struct dse_net *net,
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

enum dse_status dse_sweep_prefilter(const struct dse_space *s, uint64_t k, struct dse_cost_totals *one,
                                    int64_t *train_mem, int *pruned, struct dse_err *err) {
    struct dse_net net;
    struct dse_cost_layer *costs = NULL;
    struct dse_cost_totals train;
    struct dse_mp mp;
    size_t cap = 0;
    char why[200];
    const char *pruned_by;
    dse_net_init(&net, s->name, 1, 1, 1);
    dse_space_candidate(s, k, &mp);
    enum dse_status st = cost_candidate(s, &mp, &net, &costs, &cap, one, &train, why, sizeof why, &pruned_by, err);
    if (!st) {
        *train_mem = train.mem_train_bytes;
        *pruned = pruned_by != NULL;
    }
    free(costs);
    dse_net_deinit(&net);
    return st;
}

enum dse_status dse_sweep_candidate_create(const struct dse_space *s, const char *dir, uint64_t k, int replicate,
                                           int *existed, struct dse_err *err) {
    struct dse_net net;
    struct dse_cost_layer *costs = NULL;
    struct dse_cost_totals one, train;
    struct dse_mp mp;
    size_t cap = 0;
    char id[DSE_ID_SIZE], why[200], text[4096], path[4200];
    const char *pruned_by;
    dse_net_init(&net, s->name, 1, 1, 1);
    dse_space_candidate(s, k, &mp);
    enum dse_status st = cost_candidate(s, &mp, &net, &costs, &cap, &one, &train, why, sizeof why, &pruned_by, err);
    if (!st) {
        dse_space_rep_id(&mp, replicate, id);
        int len = candidate_json(text, sizeof text, s, id, k, replicate, &mp, &one, train.mem_train_bytes,
                                 s->cons.train_mem_batch, pruned_by);
        snprintf(path, sizeof path, "%s/candidates/%s.json", dir, id);
        st = dse_fs_create_atomic(path, text, (size_t)len, existed, err);
    }
    free(costs);
    dse_net_deinit(&net);
    return st;
}

enum dse_status dse_sweep_candidate_head(const struct dse_space *s, uint64_t k, int replicate, char *buf, int size,
                                         int *len, int *pruned, struct dse_err *err) {
    struct dse_net net;
    struct dse_cost_layer *costs = NULL;
    struct dse_cost_totals one, train;
    struct dse_mp mp;
    size_t cap = 0;
    char id[DSE_ID_SIZE], why[200];
    const char *pruned_by;
    dse_net_init(&net, s->name, 1, 1, 1);
    dse_space_candidate(s, k, &mp);
    enum dse_status st = cost_candidate(s, &mp, &net, &costs, &cap, &one, &train, why, sizeof why, &pruned_by, err);
    if (!st) {
        dse_space_rep_id(&mp, replicate, id);
        *len = candidate_head(buf, size, s, id, k, replicate, &mp, &one, train.mem_train_bytes,
                              s->cons.train_mem_batch);
        *pruned = pruned_by != NULL;
        if (*len >= size) st = dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "candidate text too long");
    }
    free(costs);
    dse_net_deinit(&net);
    return st;
}

enum dse_status dse_sweep_train_mem(const struct dse_space *s, uint64_t k, int batch, int64_t *bytes,
                                    struct dse_err *err) {
    struct dse_net net;
    struct dse_mp mp;
    struct dse_cost_totals tot;
    struct dse_cost_layer *costs = NULL;
    *bytes = 0;
    dse_net_init(&net, s->name, 1, 1, 1);
    dse_space_candidate(s, k, &mp);
    enum dse_status st = dse_space_build(s, &mp, &net, err);
    if (!st && !(costs = malloc(sizeof *costs * (size_t)(net.n_layers ? net.n_layers : 1))))
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    if (!st) st = dse_cost_net(&net, batch, costs, &tot, err);
    if (!st) *bytes = tot.mem_train_bytes;
    free(costs);
    dse_net_deinit(&net);
    return st;
}

enum dse_status dse_sweep_analytic(const struct dse_space *s, const char *dir, FILE *progress,
                                   struct dse_sweep_summary *sum, struct dse_err *err) {
    enum dse_status st;
    uint64_t *idx = NULL, n = 0;
    char path[4096], text[4096], (*ids)[DSE_ID_SIZE] = NULL;
    struct dse_net net;
    struct dse_cost_layer *costs = NULL;
    size_t cap = 0;
    memset(sum, 0, sizeof *sum);
    if (s->search.strategy == DSE_SEARCH_EVOLUTION) { /* the proposals so far: the initial population at first */
        int n_prop = 0;
        snprintf(path, sizeof path, "%s/candidates", dir);
        if ((st = dse_fs_mkdirs(path, err)) || (st = claim_dir(s, dir, (uint64_t)dse_search_budget_candidates(s), err)) ||
            (st = dse_search_start(s, dir, &n_prop, err)))
            return st;
        sum->candidates = sum->kept = (uint64_t)n_prop * (uint64_t)s->replicates; /* a file per replicate */
        return DSE_OK;
    }
    dse_net_init(&net, s->name, 1, 1, 1);

    if ((st = dse_space_indices(s, MAX_CANDIDATES, &idx, &n, err))) return st;
    /* Before writing anything: every candidate builds, and no two share an id (a 64-bit
     * hash: a clash is astronomically unlikely, but it must never be an overwrite). */
    ids = malloc(sizeof *ids * (size_t)(n ? n : 1));
    if (!ids) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    for (uint64_t i = 0; i < n; i++) {
        struct dse_mp mp;
        dse_space_candidate(s, idx[i], &mp);
        if ((st = dse_space_build(s, &mp, &net, err))) goto done;
        dse_space_id(&mp, ids[i]);
    }
    qsort(ids, (size_t)n, sizeof *ids, cmp_id);
    for (uint64_t i = 1; i < n; i++)
        if (!strcmp(ids[i], ids[i - 1])) {
            st = dse_err_set(err, DSE_ERR_INTERNAL, s->path, 0, "two candidates hash to the id %s; "
                             "please report this", ids[i]);
            goto done;
        }
    snprintf(path, sizeof path, "%s/candidates", dir);
    if ((st = dse_fs_mkdirs(path, err)) || (st = claim_dir(s, dir, n, err))) goto done;

    for (uint64_t i = 0; i < n; i++) {
        struct dse_mp mp;
        struct dse_cost_totals one, train;
        char id[DSE_ID_SIZE], why[200];
        const char *pruned_by = NULL;
        const struct dse_constraints *c = &s->cons;
        dse_space_candidate(s, idx[i], &mp);
        if ((st = cost_candidate(s, &mp, &net, &costs, &cap, &one, &train, why, sizeof why, &pruned_by, err)))
            goto done;
        /* One record per replicate (each trains with its own seed): a replicate is a
         * candidate to the workers, its leases and its checkpoints. */
        for (int r = 0; r < s->replicates; r++) {
            dse_space_rep_id(&mp, r, id);
            snprintf(path, sizeof path, "%s/candidates/%s.json", dir, id);
            /* Never replace a candidate file: its analytic part depends only on the
             * metaparameters (and this space), and training may have added results. */
            int len = candidate_json(text, sizeof text, s, id, idx[i], r, &mp, &one, train.mem_train_bytes,
                                     c->train_mem_batch, pruned_by), existed;
            if ((st = dse_fs_create_atomic(path, text, (size_t)len, &existed, err))) goto done;
            sum->skipped += existed;
            sum->candidates++;
            if (pruned_by) sum->pruned++;
            else sum->kept++;
        }
        if (progress && (i + 1 == n || (i + 1) % 1000 == 0))
            fprintf(progress, "\rdse sweep: %llu/%llu candidates", (unsigned long long)(i + 1),
                    (unsigned long long)n);
    }
    if (progress) fputc('\n', progress);
done:
    free(idx);
    free(ids);
    free(costs);
    dse_net_deinit(&net);
    return st;
}
