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

/* A candidate's architecture: its id without a replicate's suffix (replicates = N: the N
 * records of one architecture rise and stop together, ranked by their mean). */
void dse_asha_arch(const char *id, char out[DSE_ID_SIZE]) {
    dse_strlcpy(out, id, DSE_ID_SIZE);
    if (strlen(out) > DSE_ID_BASE_LEN) dse_space_id_replicate(out, 0);
}

struct member {
    char   arch[DSE_ID_SIZE];
    int    i;     /* into recs */
    int    rep;   /* its replicate: an architecture's records in replicate order */
    int    ok, reps, live; /* the architecture's, at its first record (by index): kept in first[] */
    double top1;
};

/* An architecture's record that ends it at every rung to come (dse_asha_gone): stopped at a
 * rung, diverged, or failed for good (not failed_retry, for want of a worker that lived,
 * which a later command reopens). */
static int ends_arch(const struct dse_rec *r) {
    return r->status == DSE_REC_STOPPED || r->status == DSE_REC_DIVERGED ||
           (r->status == DSE_REC_FAILED && !r->failed_retry);
}

static int by_arch(const void *a, const void *b) {
    const struct member *x = a, *y = b;
    int c = strcmp(x->arch, y->arch);
    return c ? c : (x->rep != y->rep) ? (x->rep > y->rep) - (x->rep < y->rep) : (x->i > y->i) - (x->i < y->i);
}

double dse_asha_rung_top1(const struct dse_rec *const *r, int n, int epoch) {
    double sum = 0;
    for (int k = 0; k < n; k++) {
        if (r[k]->n_epochs < epoch || !isfinite(r[k]->ep[epoch - 1].top1)) return NAN;
        sum += r[k]->ep[epoch - 1].top1;
    }
    return n == 1 ? r[0]->ep[epoch - 1].top1 : sum / n;
}

/* The architectures (one per candidate without replicates) that have reached rung k so far:
 * all `per` of its records there (a record file missing, as a kill between two replicates'
 * files can leave it, is not a mean of fewer: the architecture has not reached the rung),
 * each unpruned, with a finite top-1 at the rung's epoch, promoted from rung k - 1 (any, for
 * rung 0). Into the arrays (each of room n), in the order of their first records in recs:
 * idx[] that record's index, top1[] the records' mean top-1, bytes[] the size, ids[] the
 * architecture's name (in names[], room n), reps[] (may be NULL) its records, live[] (may be
 * NULL) 1 if it can go on: one of its records pending or running and the architecture not
 * gone (dse_asha_gone, rungs[0] as gone_list made it: a replicate reopened after a sibling
 * was stopped is not promoted alone).
 * Returns the count; -1 if out of memory. */
static int rung_set(const struct dse_sweep_plan *p, int k, const struct dse_rec *const *recs, int n, int per,
                    const struct dse_rung *rungs, int *idx, double *top1, int64_t *bytes, const char **ids,
                    char (*names)[DSE_ID_SIZE], int *reps, int *live) {
    const int epoch = p->rungs[k];
    struct member *mem = malloc(sizeof *mem * (size_t)(n ? n : 1));
    int *first = malloc(sizeof *first * (size_t)(n ? n : 1)), m = 0;
    const struct dse_rec **grp = malloc(sizeof *grp * (size_t)(n ? n : 1));
    if (!mem || !first || !grp) return free(mem), free(first), free(grp), -1;
    for (int i = 0; i < n; i++)
        dse_asha_arch(recs[i]->id, mem[i].arch), mem[i].i = i, mem[i].rep = recs[i]->replicate, first[i] = -1;
    qsort(mem, (size_t)n, sizeof *mem, by_arch);
    for (int a = 0; a < n;) { /* each architecture: its records mem[a .. b) in replicate order */
        int b = a, ok = k == 0 || dse_rung_promoted(&rungs[k - 1], mem[a].arch), any_live = 0, head = a;
        while (b < n && !strcmp(mem[b].arch, mem[a].arch)) b++;
        ok = ok && b - a == per;
        for (int j = a; j < b; j++) {
            const struct dse_rec *r = recs[mem[j].i];
            grp[j - a] = r;
            ok = ok && r->status != DSE_REC_PRUNED;
            any_live |= r->status == DSE_REC_PENDING || r->status == DSE_REC_RUNNING;
            if (mem[j].i < mem[head].i) head = j; /* its first record in recs */
        }
        const double t = ok ? dse_asha_rung_top1(grp, b - a, epoch) : NAN;
        mem[head].ok = ok && isfinite(t), mem[head].reps = b - a, mem[head].live = any_live && !dse_asha_gone(rungs, mem[a].arch);
        mem[head].top1 = t;
        first[mem[head].i] = head;
        a = b;
    }
    for (int i = 0; i < n; i++) { /* in recs order, as without replicates */
        const struct member *g = first[i] >= 0 ? &mem[first[i]] : NULL;
        if (!g || !g->ok) continue;
        idx[m] = i, top1[m] = g->top1, bytes[m] = recs[i]->model_bytes;
        dse_strlcpy(names[m], g->arch, DSE_ID_SIZE);
        ids[m] = names[m];
        if (reps) reps[m] = g->reps;
        if (live) live[m] = g->live;
        m++;
    }
    free(mem), free(first), free(grp);
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

struct gone {
    char arch[DSE_ID_SIZE], by[DSE_ID_SIZE];
    int  i; /* by's index in recs */
};

static int by_gone(const void *a, const void *b) {
    const struct gone *x = a, *y = b;
    int c = strcmp(x->arch, y->arch);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The architectures that go no further (replicates, per > 1): rungs[0].gone, sorted, each with
 * the first of its records (in recs order) that ended it in gone_by. */
static enum dse_status gone_list(const struct dse_rec *const *recs, int n, int per, struct dse_rung *r0,
                                 struct dse_err *err) {
    int m = 0;
    for (int i = 0; per > 1 && i < n; i++) m += ends_arch(recs[i]);
    if (!m) return DSE_OK;
    struct gone *g = malloc(sizeof *g * (size_t)m);
    r0->gone = ids_new(m), r0->gone_by = ids_new(m);
    if (!g || !r0->gone || !r0->gone_by) return free(g), dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int i = 0, j = 0; i < n; i++)
        if (ends_arch(recs[i])) {
            dse_asha_arch(recs[i]->id, g[j].arch);
            dse_strlcpy(g[j].by, recs[i]->id, DSE_ID_SIZE);
            g[j++].i = i;
        }
    qsort(g, (size_t)m, sizeof *g, by_gone);
    for (int j = 0; j < m; j++)
        if (!r0->n_gone || strcmp(r0->gone[r0->n_gone - 1], g[j].arch)) {
            dse_strlcpy(r0->gone[r0->n_gone], g[j].arch, DSE_ID_SIZE);
            dse_strlcpy(r0->gone_by[r0->n_gone++], g[j].by, DSE_ID_SIZE);
        }
    free(g);
    return DSE_OK;
}

const char *dse_asha_gone(const struct dse_rung *rungs, const char *arch) {
    const char(*all)[DSE_ID_SIZE] = (const char(*)[DSE_ID_SIZE])rungs[0].gone;
    const char(*hit)[DSE_ID_SIZE] = rungs[0].n_gone
        ? bsearch(arch, all, (size_t)rungs[0].n_gone, sizeof *all, cmp_id) : NULL;
    return hit ? rungs[0].gone_by[hit - all] : NULL;
}

enum dse_status dse_asha_rungs(const char *dir, const struct dse_sweep_plan *p, const struct dse_rec *const *recs,
                               int n, int per, struct dse_rung *rungs, struct dse_err *err) {
    enum dse_status st = DSE_OK;
    const size_t room = (size_t)(n ? n : 1);
    int *idx = malloc(sizeof *idx * room), *promoted = malloc(sizeof *promoted * room);
    int *promotable = malloc(sizeof *promotable * room);
    double *top1 = malloc(sizeof *top1 * room);
    int64_t *bytes = malloc(sizeof *bytes * room);
    const char **ids = malloc(sizeof *ids * room);
    char(*names)[DSE_ID_SIZE] = ids_new(n);
    int *live = malloc(sizeof *live * room);
    if (!idx || !promoted || !promotable || !top1 || !bytes || !ids || !names || !live) {
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
        if ((st = read_promotions(dir, k, r, err)) || (k == 0 && (st = gone_list(recs, n, per, r, err)))) break;
        /* closed: nobody can reach the rung any more */
        int closed = k == 0 ? !more : rungs[k - 1].decided && rungs[k - 1].n_promotable == 0;
        for (int i = 0; i < n && closed; i++) {
            const struct dse_rec *c = recs[i];
            char arch[DSE_ID_SIZE];
            dse_asha_arch(c->id, arch);
            /* running: dse report's view marks a leased pending record so; one whose architecture
             * is gone stops before the rung (dse_sweep_next) */
            if ((c->status == DSE_REC_PENDING || c->status == DSE_REC_RUNNING) && c->n_epochs < r->epoch &&
                (k == 0 || dse_rung_promoted(&rungs[k - 1], arch)) && !dse_asha_gone(rungs, arch))
                closed = 0;
        }
        const int m = rung_set(p, k, recs, n, per, rungs, idx, top1, bytes, ids, names, NULL, live);
        if (m < 0) {
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            break;
        }
        for (int j = 0; j < m; j++) promoted[j] = dse_rung_promoted(r, ids[j]);
        dse_asha_promotable(m, top1, bytes, ids, promoted, p->eta, p->rank, closed, promotable, NULL);
        r->decided = closed;
        r->n_reached = m;
        if (!(r->promotable = ids_new(m)) || !(r->stopped = ids_new(n))) {
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            break;
        }
        for (int j = 0; j < m; j++) /* a final one (failed, stopped) is promoted no more */
            if (promotable[j] && live[j]) dse_strlcpy(r->promotable[r->n_promotable++], ids[j], DSE_ID_SIZE);
        for (int i = 0; i < n; i++) /* with replicates, architectures (once: their records are adjacent) */
            if (recs[i]->status == DSE_REC_STOPPED && recs[i]->stopped_rung == k) {
                char id[DSE_ID_SIZE];
                dse_asha_arch(recs[i]->id, id); /* a candidate's own id without replicates */
                if (!r->n_stopped || strcmp(r->stopped[r->n_stopped - 1], id))
                    dse_strlcpy(r->stopped[r->n_stopped++], id, DSE_ID_SIZE);
            }
    }
done:
    free(idx), free(promoted), free(promotable), free(top1), free(bytes), free(ids), free(names), free(live);
    return st;
}

enum dse_status dse_asha_promote(const char *dir, const struct dse_sweep_plan *p, int k, const struct dse_rec *r,
                                 const struct dse_rec *const *recs, int n, int per, const struct dse_rung *rungs,
                                 const char *by, int *existed, struct dse_err *err) {
    enum dse_status st = DSE_OK;
    const size_t room = (size_t)(n ? n : 1);
    int *idx = malloc(sizeof *idx * room), *promoted = calloc(room, sizeof *promoted);
    int *promotable = malloc(sizeof *promotable * room), *order = calloc(room, sizeof *order);
    double *top1 = malloc(sizeof *top1 * room);
    int64_t *bytes = malloc(sizeof *bytes * room);
    const char **ids = malloc(sizeof *ids * room);
    char(*names)[DSE_ID_SIZE] = ids_new(n), arch[DSE_ID_SIZE];
    int *reps = malloc(sizeof *reps * room);
    char *text = NULL, path[4096], stamp[32];
    size_t len = 0;
    *existed = 0;
    dse_asha_arch(r->id, arch); /* replicates: the architecture is promoted, all its records go on */
    const int m = !idx || !promoted || !promotable || !order || !top1 || !bytes || !ids || !names || !reps ? -1
                : rung_set(p, k, recs, n, per, rungs, idx, top1, bytes, ids, names, reps, NULL);
    if (m < 0) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    int quota = 0, pos = -1;
    for (int j = 0; j < m; j++) promoted[j] = dse_rung_promoted(&rungs[k], ids[j]);
    dse_asha_promotable(m, top1, bytes, ids, promoted, p->eta, p->rank, rungs[k].decided, promotable, &quota);
    if (m) dse_sweep_rank_rung(m, top1, bytes, ids, p->rank, order, NULL);
    for (int j = 0; j < m; j++)
        if (!strcmp(ids[order[j]], arch)) pos = j;
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
               "  \"by\": ", arch, k, p->rungs[k], p->eta, dse_sweep_rank_str(p->rank),
            rungs[k].decided ? "true" : "false", m, quota, pos, stamp);
    dse_json_write_str(f, by, strlen(by));
    fputs(",\n  \"ranking\": [", f);
    for (int j = 0; j < m; j++) {
        const int i = order[j];
        char t[40];
        dse_fmt_shortest(t, sizeof t, top1[i], reps[i] == 1); /* as the candidate file has it; a mean, whole */
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
    snprintf(path, sizeof path, "%s/rungs/asha-%d/%s", dir, k, arch);
    st = dse_fs_create_atomic(path, text, len, existed, err);
done:
    free(idx), free(promoted), free(promotable), free(order), free(top1), free(bytes), free(ids), free(names), free(reps),
        free(text);
    return st;
}

/* ---- every rung, SH or ASHA (sweep_impl.h) ---- */

enum dse_status dse_rungs_load(const char *dir, const struct dse_sweep_plan *p, const struct dse_rec *const *recs,
                               int n, int per, struct dse_rung *rungs, struct dse_err *err) {
    if (p->halving == DSE_SWEEP_HALVING_ASHA) return dse_asha_rungs(dir, p, recs, n, per, rungs, err);
    for (int k = 0; k < p->n_rungs; k++) { /* SH: a decision once written stays */
        int missing;
        enum dse_status st;
        if (rungs[k].decided) continue;
        if ((st = dse_rung_read(dir, k, &rungs[k], &missing, err))) return st;
        if (missing) break;
    }
    return DSE_OK;
}
