/* asha.c: asynchronous successive halving (--early-stop asha; Li et al., "A System for
 * Massively Parallel Hyperparameter Tuning", MLSys 2020): the promotion rule, the rungs' state
 * from the promotions made (DIR/rungs/asha-<k>/<id>, one create-only file each) and the
 * candidate records, and making a promotion. The protocol: docs/sweep-dir.md, "Early
 * stopping: asynchronous successive halving". */
#include "sweep/sweep_impl.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fs.h"
#include "sweep/json_read.h"
#include "sweep/search.h"

/* The candidates that have reached rung k so far: unpruned, promoted from rung k - 1 (any, for
 * rung 0), with a finite top-1 at the rung's epoch. Their indices into recs go to idx[], their
 * top-1, size and id to the other arrays (each of room n); returns the count. */
static int rung_set(const struct dse_sweep_plan *p, int k, const struct dse_rec *const *recs, int n,
                    const struct dse_rung *rungs, int *idx, double *top1, int64_t *bytes, const char **ids) {
    const int epoch = p->rungs[k];
    int m = 0;
    for (int i = 0; i < n; i++) {
        const struct dse_rec *r = recs[i];
        if (r->status == DSE_REC_PRUNED || r->n_epochs < epoch || !isfinite(r->ep[epoch - 1].top1)) continue;
        if (k > 0 && !dse_rung_promoted(&rungs[k - 1], r->id)) continue;
        idx[m] = i, top1[m] = r->ep[epoch - 1].top1, bytes[m] = r->model_bytes, ids[m] = r->id;
        m++;
    }
    return m;
}

static int cmp_id(const void *a, const void *b) {
    return strcmp(a, b);
}

/* The promotions made at rung k: the names in DIR/rungs/asha-<k>/ (temporary files of a
 * writer, which start with '.', are not promotions), sorted (a directory's order is the
 * filesystem's). */
static enum dse_status read_promotions(const char *dir, int k, struct dse_rung *r, struct dse_err *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s/rungs/asha-%d", dir, k);
    DIR *d = opendir(path);
    if (!d) {
        if (errno == ENOENT) return DSE_OK; /* none made yet */
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: cannot open: %s", path, strerror(errno));
    }
    int cap = 0;
    struct dirent *de;
    enum dse_status st = DSE_OK;
    while ((de = readdir(d))) {
        /* a writer's temporary file ('.'), or anything that is not a candidate's id */
        if (de->d_name[0] == '.' || strlen(de->d_name) >= DSE_ID_SIZE ||
            !(dse_space_id_valid(de->d_name) || dse_space_rep_id_valid(de->d_name)))
            continue;
        if (r->n_promoted == cap) {
            cap = cap ? 2 * cap : 16;
            char(*q)[DSE_ID_SIZE] = realloc(r->promoted, sizeof *q * (size_t)cap);
            if (!q) {
                st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
                break;
            }
            r->promoted = q;
        }
        dse_strlcpy(r->promoted[r->n_promoted++], de->d_name, DSE_ID_SIZE);
    }
    closedir(d);
    if (r->n_promoted > 1) qsort(r->promoted, (size_t)r->n_promoted, sizeof *r->promoted, cmp_id);
    return st;
}

/* Room for n ids; NULL if out of memory. */
static char (*ids_new(int n))[DSE_ID_SIZE] {
    return calloc((size_t)(n ? n : 1), DSE_ID_SIZE);
}

enum dse_status dse_asha_rungs(const char *dir, const struct dse_sweep_plan *p, const struct dse_rec *const *recs,
                               int n, struct dse_rung *rungs, struct dse_err *err) {
    enum dse_status st = DSE_OK;
    const size_t room = (size_t)(n ? n : 1);
    int *idx = malloc(sizeof *idx * room), *promoted = malloc(sizeof *promoted * room);
    int *promotable = malloc(sizeof *promotable * room);
    double *top1 = malloc(sizeof *top1 * room);
    int64_t *bytes = malloc(sizeof *bytes * room);
    const char **ids = malloc(sizeof *ids * room);
    if (!idx || !promoted || !promotable || !top1 || !bytes || !ids) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    /* a search (bo) adds candidates to the first rung until its log says no more will come */
    struct dse_search_log lg;
    if ((st = dse_search_read(dir, &lg, err))) goto done;
    const int more = lg.gen && !lg.closed;
    dse_search_log_free(&lg);
    for (int k = 0; k < p->n_rungs && !st; k++) {
        struct dse_rung *r = &rungs[k];
        dse_rung_deinit(r);
        r->epoch = p->rungs[k];
        if ((st = read_promotions(dir, k, r, err))) break;
        /* closed: nobody can reach the rung any more */
        int closed = k == 0 ? !more : rungs[k - 1].decided && rungs[k - 1].n_promotable == 0;
        for (int i = 0; i < n && closed; i++) {
            const struct dse_rec *c = recs[i];
            /* running: dse report's view marks a leased pending record so */
            if ((c->status == DSE_REC_PENDING || c->status == DSE_REC_RUNNING) && c->n_epochs < r->epoch &&
                (k == 0 || dse_rung_promoted(&rungs[k - 1], c->id)))
                closed = 0;
        }
        const int m = rung_set(p, k, recs, n, rungs, idx, top1, bytes, ids);
        for (int j = 0; j < m; j++) promoted[j] = dse_rung_promoted(r, ids[j]);
        dse_asha_promotable(m, top1, bytes, ids, promoted, p->eta, p->rank, closed, promotable, NULL);
        r->decided = closed;
        r->n_reached = m;
        if (!(r->promotable = ids_new(m)) || !(r->stopped = ids_new(n))) {
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            break;
        }
        for (int j = 0; j < m; j++) /* a final one (failed, stopped) is promoted no more */
            if (promotable[j] && (recs[idx[j]]->status == DSE_REC_PENDING || recs[idx[j]]->status == DSE_REC_RUNNING))
                dse_strlcpy(r->promotable[r->n_promotable++], ids[j], DSE_ID_SIZE);
        for (int i = 0; i < n; i++)
            if (recs[i]->status == DSE_REC_STOPPED && recs[i]->stopped_rung == k)
                dse_strlcpy(r->stopped[r->n_stopped++], recs[i]->id, DSE_ID_SIZE);
    }
done:
    free(idx), free(promoted), free(promotable), free(top1), free(bytes), free(ids);
    return st;
}

enum dse_status dse_asha_promote(const char *dir, const struct dse_sweep_plan *p, int k, const struct dse_rec *r,
                                 const struct dse_rec *const *recs, int n, const struct dse_rung *rungs,
                                 const char *by, int *existed, struct dse_err *err) {
    enum dse_status st = DSE_OK;
    const size_t room = (size_t)(n ? n : 1);
    int *idx = malloc(sizeof *idx * room), *promoted = calloc(room, sizeof *promoted);
    int *promotable = malloc(sizeof *promotable * room), *order = calloc(room, sizeof *order);
    double *top1 = malloc(sizeof *top1 * room);
    int64_t *bytes = malloc(sizeof *bytes * room);
    const char **ids = malloc(sizeof *ids * room);
    char *text = NULL, path[4096], stamp[32];
    size_t len = 0;
    *existed = 0;
    if (!idx || !promoted || !promotable || !order || !top1 || !bytes || !ids) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    const int m = rung_set(p, k, recs, n, rungs, idx, top1, bytes, ids);
    int quota = 0, pos = -1;
    for (int j = 0; j < m; j++) promoted[j] = dse_rung_promoted(&rungs[k], ids[j]);
    dse_asha_promotable(m, top1, bytes, ids, promoted, p->eta, p->rank, rungs[k].decided, promotable, &quota);
    if (m) dse_sweep_rank_rung(m, top1, bytes, ids, p->rank, order, NULL);
    for (int j = 0; j < m; j++)
        if (!strcmp(ids[order[j]], r->id)) pos = j;
    DSE_ASSERT(pos >= 0 && pos < quota); /* the caller promotes only a promotable candidate */
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* the justification: the rung's ranking as this worker saw it, best first */
    fprintf(f, "{\n  \"id\": \"%s\",\n  \"rung\": %d,\n  \"epoch\": %d,\n  \"eta\": %d,\n  \"rank\": \"%s\",\n"
               "  \"closed\": %s,\n  \"reached\": %d,\n  \"quota\": %d,\n  \"position\": %d,\n  \"made\": \"%s\",\n"
               "  \"by\": ", r->id, k, p->rungs[k], p->eta, dse_sweep_rank_str(p->rank),
            rungs[k].decided ? "true" : "false", m, quota, pos, stamp);
    dse_json_write_str(f, by, strlen(by));
    fputs(",\n  \"ranking\": [", f);
    for (int j = 0; j < m; j++) {
        const int i = order[j];
        char t[40];
        dse_fmt_shortest(t, sizeof t, top1[i], 1); /* as the candidate file has it */
        fprintf(f, "%s\n    {\"id\": \"%s\", \"top1\": %s, \"model_bytes\": %lld, \"promoted\": %s}", j ? "," : "",
                ids[i], t, (long long)bytes[i], promoted[i] ? "true" : "false");
    }
    fputs(m ? "\n  ]\n}\n" : "]\n}\n", f);
    if (fclose(f) != 0 || !text) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    snprintf(path, sizeof path, "%s/rungs/asha-%d", dir, k);
    if ((st = dse_fs_mkdirs(path, err))) goto done;
    snprintf(path, sizeof path, "%s/rungs/asha-%d/%s", dir, k, r->id);
    st = dse_fs_create_atomic(path, text, len, existed, err);
done:
    free(idx), free(promoted), free(promotable), free(order), free(top1), free(bytes), free(ids), free(text);
    return st;
}

/* ---- every rung, SH or ASHA (sweep_impl.h) ---- */

enum dse_status dse_rungs_load(const char *dir, const struct dse_sweep_plan *p, const struct dse_rec *const *recs,
                               int n, struct dse_rung *rungs, struct dse_err *err) {
    if (p->halving == DSE_SWEEP_HALVING_ASHA) return dse_asha_rungs(dir, p, recs, n, rungs, err);
    for (int k = 0; k < p->n_rungs; k++) { /* SH: a decision once written stays */
        int missing;
        enum dse_status st;
        if (rungs[k].decided) continue;
        if ((st = dse_rung_read(dir, k, &rungs[k], &missing, err))) return st;
        if (missing) break;
    }
    return DSE_OK;
}
