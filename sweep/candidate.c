/* candidate.c: the writer of a sweep's candidate files, DIR/candidates/<id>.json
 * (docs/sweep-dir.md): the analytic part (identity, metaparameters, costs) and, with
 * sweep/record.def's keys (dse_rec_put, sweep/sweep_rec.c), the record as the analytic
 * sweep creates it and as the workers rewrite it. Below the search log (sweep/search.c),
 * which creates its proposals' files here, and the analytic sweep (sweep/sweep.c). */
#include "sweep/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "base/fs.h"
#include "sweep/prefilter.h"

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

char *dse_sweep_candidate_metaparams(const struct dse_space *s, uint64_t k) {
    char mps[2048], *out = malloc(sizeof mps + 8);
    struct dse_mp mp;
    if (!out) return NULL;
    dse_space_candidate(s, k, &mp);
    record_metaparams(mps, sizeof mps, s, &mp);
    snprintf(out, sizeof mps + 8, "{\n%s\n  }", mps);
    return out;
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
int dse_sweep_candidate_text(char *buf, int size, const struct dse_space *s, const char *id, uint64_t index,
                             int replicate, const struct dse_mp *mp, const struct dse_cost_totals *one,
                             int64_t train_mem, int train_batch, const char *pruned_by) {
    int n = candidate_head(buf, size, s, id, index, replicate, mp, one, train_mem, train_batch) - 2; /* its ",\n" */
    struct dse_rec r;
    dse_rec_init(&r);
    r.status = pruned_by ? DSE_REC_PRUNED : DSE_REC_PENDING;
    if (pruned_by) dse_strlcpy(r.pruned_by, pruned_by, sizeof r.pruned_by);
    FILE *f = n >= 0 && n < size ? fmemopen(buf + n, (size_t)(size - n), "w") : NULL;
    if (f) {
        dse_rec_put(f, &r, 0);
        n += (int)ftell(f);
        fclose(f);
    }
    dse_rec_deinit(&r);
    return n;
}

/* Grid index k's replicate `replicate` costed and written into buf as a new record's text
 * (whole: the file the analytic sweep creates) or its analytic part only (!whole); *len its
 * length, *pruned = 1 if a constraint prunes it, its id into id. */
static enum dse_status candidate_build(const struct dse_space *s, uint64_t k, int replicate, int whole, char *buf,
                                       int size, int *len, int *pruned, char *id, struct dse_err *err) {
    struct dse_cost_totals one, train;
    struct dse_mp mp;
    char why[200];
    const char *pruned_by;
    enum dse_status st = dse_sweep_cost_index(s, k, &mp, &one, &train, why, sizeof why, &pruned_by, err);
    if (!st) {
        dse_space_rep_id(&mp, replicate, id);
        *len = whole ? dse_sweep_candidate_text(buf, size, s, id, k, replicate, &mp, &one, train.mem_train_bytes,
                                                s->cons.train_mem_batch, pruned_by)
                     : candidate_head(buf, size, s, id, k, replicate, &mp, &one, train.mem_train_bytes,
                                      s->cons.train_mem_batch);
        *pruned = pruned_by != NULL;
    }
    return st;
}

enum dse_status dse_sweep_candidate_create(const struct dse_space *s, const char *dir, uint64_t k, int replicate,
                                           int *existed, struct dse_err *err) {
    char id[DSE_ID_SIZE], text[4096], path[4200];
    int len, pruned;
    enum dse_status st = candidate_build(s, k, replicate, 1, text, sizeof text, &len, &pruned, id, err);
    if (!st) {
        snprintf(path, sizeof path, "%s/candidates/%s.json", dir, id);
        st = dse_fs_create_atomic(path, text, (size_t)len, existed, err);
    }
    return st;
}

enum dse_status dse_sweep_candidate_head(const struct dse_space *s, uint64_t k, int replicate, char *buf, int size,
                                         int *len, int *pruned, struct dse_err *err) {
    char id[DSE_ID_SIZE];
    enum dse_status st = candidate_build(s, k, replicate, 0, buf, size, len, pruned, id, err);
    if (!st && *len >= size) st = dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "candidate text too long");
    return st;
}

enum dse_status dse_rec_write(const char *dir, const struct dse_space *s, struct dse_rec *r, struct dse_err *err) {
    char head[8192], path[4096];
    int len, pruned;
    enum dse_status st = dse_sweep_candidate_head(s, (uint64_t)r->index, r->replicate, head, sizeof head, &len, &pruned, err);
    if (st) return st;
    DSE_ASSERT(len >= 2 && !strncmp(head + len - 2, ",\n", 2)); /* the last analytic key, then ours */
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    fwrite(head, 1, (size_t)len - 2, f);
    dse_rec_put(f, r, 1);
    if (fclose(f) != 0 || !buf) {
        free(buf);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    snprintf(path, sizeof path, "%s/candidates/%s.json", dir, r->id);
    st = dse_fs_write_atomic(path, buf, size, err);
    free(buf);
    return st;
}
