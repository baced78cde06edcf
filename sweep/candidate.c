/* candidate.c: a sweep's candidate files, DIR/candidates/<id>.json (docs/sweep-dir.md):
 * the analytic part of a record (identity, metaparameters, costs: sweep/record.def's HEAD
 * keys) costed from the space, and the files written with the one writer (dse_rec_put,
 * sweep/record.c) as the analytic sweep creates them and as the workers rewrite them.
 * Below the search log (sweep/search.c), which creates its proposals' files here, and the
 * analytic sweep (sweep/sweep.c). */
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

/* r's analytic part (record.def's HEAD keys): grid index `index`'s replicate `replicate`,
 * its id, metaparameters mp (rendered into mps[size], which r->metaparams borrows), costs
 * one and the training-memory estimate train_mem at train_batch. */
static void rec_head(struct dse_rec *r, const struct dse_space *s, const char *id, uint64_t index, int replicate,
                     const struct dse_mp *mp, const struct dse_cost_totals *one, int64_t train_mem, int train_batch,
                     char *mps, int size) {
    record_metaparams(mps, size, s, mp);
    dse_strlcpy(r->id, id, sizeof r->id);
    r->index = (int64_t)index;
    r->replicate = replicate;
    r->replicated = s->replicates > 1;
    r->compress = s->compress_line > 0;
    r->metaparams = mps;
    r->params = one->params;
    r->model_bytes = one->param_bytes;
    r->flops = one->flops;
    r->train_mem_bytes = train_mem;
    r->train_mem_batch = train_batch;
}

/* Grid index k's replicate `replicate` costed into r's analytic part (rec_head; mps[size]
 * for its metaparams); *pruned_by the constraint that prunes it (in why[why_size]) or NULL. */
static enum dse_status rec_head_of(struct dse_rec *r, const struct dse_space *s, uint64_t k, int replicate,
                                   char *mps, int size, char *why, int why_size, const char **pruned_by,
                                   struct dse_err *err) {
    struct dse_cost_totals one, train;
    struct dse_mp mp;
    char id[DSE_ID_SIZE];
    enum dse_status st = dse_sweep_cost_index(s, k, &mp, &one, &train, why, why_size, pruned_by, err);
    if (!st) {
        dse_space_rep_id(&mp, replicate, id);
        rec_head(r, s, id, k, replicate, &mp, &one, train.mem_train_bytes, s->cons.train_mem_batch, mps, size);
    }
    if (!st && s->compress_line) st = dse_sweep_compress_est(s, k, &r->est_compressed_bytes, err);
    return st;
}

/* r's keys of `part` (dse_rec_put) and then tail (may be NULL) as text: into buf[size] as
 * snprintf would, its length returned; -1 if out of memory. */
static int rec_text(char *buf, int size, struct dse_rec *r, enum dse_rec_part part, const char *tail) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return -1;
    dse_rec_put(f, r, part);
    if (tail) fputs(tail, f);
    if (fclose(f) != 0 || !text) {
        free(text);
        return -1;
    }
    if (size > 0) {
        size_t n = len < (size_t)size - 1 ? len : (size_t)size - 1;
        memcpy(buf, text, n);
        buf[n] = '\0';
    }
    free(text);
    return (int)len;
}

/* A new record (pending, or pruned by pruned_by) of r's analytic part, as text (rec_text). */
static int created_text(char *buf, int size, struct dse_rec *r, const char *pruned_by) {
    r->status = pruned_by ? DSE_REC_PRUNED : DSE_REC_PENDING;
    if (pruned_by) dse_strlcpy(r->pruned_by, pruned_by, sizeof r->pruned_by);
    return rec_text(buf, size, r, DSE_REC_PUT_CREATED, NULL);
}

int dse_sweep_candidate_text(char *buf, int size, const struct dse_space *s, const char *id, uint64_t index,
                             int replicate, const struct dse_mp *mp, const struct dse_cost_totals *one,
                             int64_t train_mem, int train_batch, int64_t est_compressed, const char *pruned_by) {
    char mps[2048];
    struct dse_rec r;
    dse_rec_init(&r);
    rec_head(&r, s, id, index, replicate, mp, one, train_mem, train_batch, mps, sizeof mps);
    r.est_compressed_bytes = est_compressed;
    int n = created_text(buf, size, &r, pruned_by);
    dse_rec_deinit(&r);
    return n;
}

enum dse_status dse_sweep_candidate_create(const struct dse_space *s, const char *dir, uint64_t k, int replicate,
                                           int *existed, struct dse_err *err) {
    char mps[2048], why[200], text[4096], path[4200];
    const char *pruned_by;
    struct dse_rec r;
    dse_rec_init(&r);
    enum dse_status st = rec_head_of(&r, s, k, replicate, mps, sizeof mps, why, sizeof why, &pruned_by, err);
    if (!st) {
        int len = created_text(text, sizeof text, &r, pruned_by);
        snprintf(path, sizeof path, "%s/candidates/%s.json", dir, r.id);
        st = len < 0                  ? dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory")
             : len >= (int)sizeof text ? dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "candidate text too long")
                                       : dse_fs_create_atomic(path, text, (size_t)len, existed, err);
    }
    dse_rec_deinit(&r);
    return st;
}

enum dse_status dse_sweep_candidate_head(const struct dse_space *s, uint64_t k, int replicate, char *buf, int size,
                                         int *len, int *pruned, struct dse_err *err) {
    char mps[2048], why[200];
    const char *pruned_by;
    struct dse_rec r;
    dse_rec_init(&r);
    enum dse_status st = rec_head_of(&r, s, k, replicate, mps, sizeof mps, why, sizeof why, &pruned_by, err);
    if (!st) {
        *len = rec_text(buf, size, &r, DSE_REC_PUT_HEAD, ",\n");
        *pruned = pruned_by != NULL;
        if (*len < 0) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        else if (*len >= size) st = dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "candidate text too long");
    }
    dse_rec_deinit(&r);
    return st;
}

enum dse_status dse_rec_write(const char *dir, const struct dse_space *s, struct dse_rec *r, struct dse_err *err) {
    char mps[2048], why[200], path[4096];
    const char *pruned_by;
    snprintf(path, sizeof path, "%s/candidates/%s.json", dir, r->id);
    enum dse_status st = rec_head_of(r, s, (uint64_t)r->index, r->replicate, mps, sizeof mps, why, sizeof why,
                                     &pruned_by, err);
    if (st) return st;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (f) dse_rec_put(f, r, DSE_REC_PUT_TRAINED);
    r->metaparams = NULL; /* mps goes out of scope */
    if (!f || fclose(f) != 0 || !buf) {
        free(buf);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    st = dse_fs_write_atomic(path, buf, size, err);
    free(buf);
    return st;
}
