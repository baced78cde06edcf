/* sweep_read.c: a sweep directory read whole and checked strictly (sweep/sweep_read.h), each
 * candidate with the one reader of a record (dse_rec_from_json, sweep/record.c). */
#include "sweep/sweep_read.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "engine/train.h"
#include "sweep/lease.h"

/* ---- errors ------------------------------------------------------------------------ */

/* The paths of the files inside DIR are built here and the callers name DIR: fold
 * "path:line: " into the message. */
static enum dse_status fold_path(struct dse_err *err, enum dse_status st) {
    if (st && err && err->file[0]) {
        char buf[sizeof err->msg];
        dse_err_set(err, err->code, NULL, 0, "%s", dse_err_format(err, buf, (int)sizeof buf));
    }
    return st;
}

static char *path_join(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    char  *p = malloc(la + lb + 2);
    if (!p) return NULL;
    memcpy(p, a, la);
    size_t o = la;
    if (la && a[la - 1] != '/') p[o++] = '/';
    memcpy(p + o, b, lb + 1);
    return p;
}

/* ---- reading ------------------------------------------------------------------------ */

static enum dse_status read_manifest(struct dse_sweep_view *s, struct dse_err *err) {
    char *path = path_join(s->dir, "sweep.json");
    if (!path) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    enum dse_status        st = fold_path(err, dse_json_load(path, &s->doc, err));
    const struct dse_json *root, *v;
    if (st == DSE_ERR_IO && err) {
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n, "; expected the manifest of a sweep "
                 "directory (docs/sweep-dir.md)");
    }
    if (st) goto out;
    root = dse_json_root(s->doc);
    if (root->type != DSE_JSON_OBJECT) {
        st = dse_json_bad(err, path, root->line, "the file holds %s; expected an object (docs/sweep-dir.md)",
                 dse_json_a_type(root->type));
        goto out;
    }
    v = dse_json_get(root, "format");
    if (!v || v->type != DSE_JSON_STRING || strcmp(v->str, "dse-sweep-1") != 0) {
        if (!v) st = dse_json_bad(err, path, root->line, "missing key \"format\"; expected \"dse-sweep-1\"");
        else if (v->type != DSE_JSON_STRING)
            st = dse_json_bad(err, path, v->line, "\"format\" is %s; expected \"dse-sweep-1\"",
                     dse_json_a_type(v->type));
        else
            st = dse_json_bad(err, path, v->line, "\"format\" = \"%.64s\" is not supported; expected "
                     "\"dse-sweep-1\"", v->str);
        goto out;
    }
    if ((st = dse_json_member(path, root, "space", DSE_JSON_WANT_STR, 0, &v, err))) goto out;
    s->space = v->str;
    if ((st = dse_json_count(path, root, "candidates", &s->declared, err))) goto out;
    if ((st = dse_json_member(path, root, "varied", DSE_JSON_WANT_ARR, 0, &v, err))) goto out;
    s->varied = calloc((size_t)v->n + 1, sizeof *s->varied);
    if (!s->varied) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto out;
    }
    if (v->n > DSE_SWEEP_VARIED_MAX) {
        st = dse_json_bad(err, path, v->line, "\"varied\" lists %d names; expected at most %d", v->n,
                 DSE_SWEEP_VARIED_MAX);
        goto out;
    }
    for (int i = 0; i < v->n; i++) {
        if (v->items[i].type != DSE_JSON_STRING) {
            st = dse_json_bad(err, path, v->items[i].line, "\"varied\" holds %s; expected metaparameter "
                     "names as strings", dse_json_a_type(v->items[i].type));
            goto out;
        }
        s->varied[s->n_varied++] = v->items[i].str;
    }
out:
    free(path);
    return st;
}

static int has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static int str_ptr_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of the candidate files in dirpath, sorted. */
static enum dse_status list_candidates(const char *dirpath, char ***out, int *count,
                                       struct dse_err *err) {
    DIR *d = opendir(dirpath);
    *out = NULL;
    *count = 0;
    if (!d)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: cannot open: %s; expected the "
                           "candidates/ directory of a sweep (docs/sweep-dir.md)", dirpath,
                           strerror(errno));
    char         **names = NULL;
    int            n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !has_suffix(e->d_name, ".json")) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **q = realloc(names, sizeof *names * (size_t)cap);
            if (!q) goto oom;
            names = q;
        }
        if (!(names[n] = strdup(e->d_name))) goto oom;
        n++;
    }
    closedir(d);
    if (n) qsort(names, (size_t)n, sizeof *names, str_ptr_cmp);
    *out = names;
    *count = n;
    return DSE_OK;
oom:
    closedir(d);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
}

/* One candidate file of the directory: parsed into c->doc, then checked. */
static enum dse_status read_candidate(struct dse_cand *c, struct dse_err *err) {
    dse_rec_init(&c->rec);
    enum dse_status st = fold_path(err, dse_json_load(c->path, &c->doc, err));
    if (!st) st = dse_rec_from_json(c->path, dse_json_root(c->doc), &c->rec, err);
    if (!st) c->metaparams = dse_json_get(dse_json_root(c->doc), "metaparams");
    return st;
}

static int cand_index_cmp(const void *a, const void *b) {
    const struct dse_rec *x = &((const struct dse_cand *)a)->rec, *y = &((const struct dse_cand *)b)->rec;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    if (x->replicate != y->replicate) return x->replicate < y->replicate ? -1 : 1;
    return strcmp(x->id, y->id);
}

static int cand_size_cmp(const void *a, const void *b) {
    const struct dse_rec *x = &(*(struct dse_cand *const *)a)->rec, *y = &(*(struct dse_cand *const *)b)->rec;
    if (x->model_bytes != y->model_bytes) return x->model_bytes < y->model_bytes ? -1 : 1;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* The frontier on compressed size: by it, then as cand_size_cmp. */
static int cand_compressed_cmp(const void *a, const void *b) {
    const struct dse_rec *x = &(*(struct dse_cand *const *)a)->rec, *y = &(*(struct dse_cand *const *)b)->rec;
    if (x->compressed_bytes != y->compressed_bytes) return x->compressed_bytes < y->compressed_bytes ? -1 : 1;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return strcmp(x->id, y->id);
}

void dse_sweep_view_free(struct dse_sweep_view *s) {
    struct dse_cand *own = s->all ? s->all : s->c; /* the rows of a sweep with replicates own nothing */
    for (int i = 0; i < (s->all ? s->n_all : s->n); i++) {
        dse_json_free(own[i].doc);
        free(own[i].path);
        dse_rec_deinit(&own[i].rec);
    }
    free(s->all);
    free(s->c);
    free(s->by_size);
    free(s->front);
    free(s->varied);
    dse_json_free(s->doc);
    for (int k = 0; k < DSE_SWEEP_RUNGS_MAX; k++) dse_rung_deinit(&s->rung[k]);
}

/* The frontier: over trained candidates (done, with top1) maximizing top1 if any
 * candidate has a top1, else over candidates not pruned minimizing FLOPs; model size is
 * always minimized. Candidates left out get NaN, which dse_pareto_front skips. */
int dse_sweep_ranked(const struct dse_sweep_view *s, const struct dse_cand *c) {
    return s->trained ? c->rec.status == DSE_REC_DONE && !isnan(c->rec.top1) : c->rec.status != DSE_REC_PRUNED;
}

void dse_sweep_mean_std(const double *v, int n, int *n_ok, double *mean, double *std) {
    double sum = 0, ss = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i])) sum += v[i], k++;
    *n_ok = k;
    *mean = k ? sum / k : NAN;
    for (int i = 0; i < n; i++) /* two passes: no cancellation for close values */
        if (!isnan(v[i])) ss += (v[i] - *mean) * (v[i] - *mean);
    *std = k >= 2 ? sqrt(ss / (k - 1)) : NAN;
}

struct dse_rec dse_sweep_group_rec(const struct dse_rec *const *reps, int n, int *n_top1, double *top1_std) {
    struct dse_rec g = *reps[0];
    double t1[DSE_TRAIN_REPLICATES_MAX] = { 0 }, t5[DSE_TRAIN_REPLICATES_MAX] = { 0 }, std5,
           zb[DSE_TRAIN_REPLICATES_MAX] = { 0 }, zt[DSE_TRAIN_REPLICATES_MAX] = { 0 }, mean_zb, mean_zt;
    int running = 0, pending = 0, n5, n_zb, n_zt;
    DSE_ASSERT(n >= 1 && n <= DSE_TRAIN_REPLICATES_MAX);
    for (int i = 0; i < n; i++) {
        const struct dse_rec *r = reps[i];
        const int ok = r->status == DSE_REC_DONE && !isnan(r->top1);
        t1[i] = ok ? r->top1 : NAN;
        t5[i] = ok ? r->top5 : NAN;
        running |= r->status == DSE_REC_RUNNING, pending |= r->status == DSE_REC_PENDING;
        zb[i] = r->compressed_bytes >= 0 ? (double)r->compressed_bytes : NAN;
        zt[i] = r->compressed_top1;
    }
    dse_sweep_mean_std(t1, n, n_top1, &g.top1, top1_std);
    dse_sweep_mean_std(t5, n, &n5, &g.top5, &std5);
    /* a compressed architecture: every replicate's .dsez written, its size and top-1 the means */
    dse_sweep_mean_std(zb, n, &n_zb, &mean_zb, &std5);
    dse_sweep_mean_std(zt, n, &n_zt, &mean_zt, &std5);
    g.compressed_bytes = n_zb == n ? llround(mean_zb) : -1;
    g.compressed_top1 = n_zb == n && n_zt == n ? mean_zt : NAN;
    g.status = running ? DSE_REC_RUNNING : pending ? DSE_REC_PENDING : *n_top1 ? DSE_REC_DONE : reps[0]->status;
    return g;
}

int dse_sweep_within_noise(const struct dse_cand *a, const struct dse_cand *b) {
    if (!a->reps || !b->reps || isnan(a->rec.top1) || isnan(b->rec.top1)) return 0;
    double sa = isnan(a->top1_std) ? 0 : a->top1_std, sb = isnan(b->top1_std) ? 0 : b->top1_std;
    return fabs(a->rec.top1 - b->rec.top1) < fmax(sa, sb);
}

/* A sweep with replicates: the records move to s->all and s->c becomes one row per index. */
static enum dse_status group_replicates(struct dse_sweep_view *s, struct dse_err *err) {
    int rows = 0;
    s->replicates = 1;
    for (int i = 0, run = 0; i < s->n; i++) {
        run = i && s->c[i].rec.index == s->c[i - 1].rec.index ? run + 1 : 1;
        rows += run == 1;
        if (run > s->replicates) s->replicates = run;
    }
    int any = 0;
    for (int i = 0; i < s->n; i++) any |= s->c[i].rec.replicate > 0;
    if (!any) return s->replicates = 1, DSE_OK;
    if (s->replicates > DSE_TRAIN_REPLICATES_MAX)
        return dse_err_set(err, DSE_ERR_CONFIG, s->dir, 0, "%d records of one index; expected at most %d "
                           "replicates", s->replicates, DSE_TRAIN_REPLICATES_MAX);
    struct dse_cand *row = calloc((size_t)rows, sizeof *row);
    if (!row) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    s->all = s->c, s->n_all = s->n, s->c = row, s->n = rows;
    for (int i = 0, k = 0; i < s->n_all; k++) {
        const struct dse_rec *reps[DSE_TRAIN_REPLICATES_MAX];
        int j = i;
        while (j < s->n_all && s->all[j].rec.index == s->all[i].rec.index) reps[j - i] = &s->all[j].rec, j++;
        row[k] = s->all[i];
        row[k].reps = &s->all[i];
        row[k].n_reps = j - i;
        row[k].rec = dse_sweep_group_rec(reps, j - i, &row[k].top1_n, &row[k].top1_std);
        i = j;
    }
    return DSE_OK;
}

static enum dse_status find_front(struct dse_sweep_view *s, struct dse_err *err) {
    for (int i = 0; i < s->n; i++) s->trained |= !isnan(s->c[i].rec.top1);
    size_t  n = (size_t)(s->n ? s->n : 1);
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    int    *idx = malloc(n * sizeof *idx), *scratch = malloc(n * sizeof *scratch);
    s->front = malloc(n * sizeof *s->front);
    if (!x || !y || !idx || !scratch || !s->front) {
        free(x), free(y), free(idx), free(scratch);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    for (int i = 0; i < s->n; i++) {
        const struct dse_cand *c = &s->c[i];
        x[i] = !dse_sweep_ranked(s, c)                     ? NAN
               : !s->compressed                             ? (double)c->rec.model_bytes
               : c->rec.compressed_bytes >= 0               ? (double)c->rec.compressed_bytes
                                                            : NAN; /* no .dsez: not ranked */
        y[i] = !s->trained ? (double)c->rec.flops : s->compressed ? c->rec.compressed_top1 /* what ships */ : c->rec.top1;
    }
    s->n_front = dse_pareto_front(x, y, s->n, s->trained, idx, scratch);
    for (int k = 0; k < s->n_front; k++) {
        s->c[idx[k]].on_front = 1;
        s->front[k] = &s->c[idx[k]];
    }
    /* equal model sizes come out by y; list them like the tables: by size, then index */
    qsort(s->front, (size_t)s->n_front, sizeof *s->front, s->compressed ? cand_compressed_cmp : cand_size_cmp);
    free(x), free(y), free(idx), free(scratch);
    return DSE_OK;
}

enum dse_status dse_sweep_front_compressed(struct dse_sweep_view *s, struct dse_err *err) {
    for (int i = 0; i < s->n; i++) s->c[i].on_front = 0;
    free(s->front);
    s->front = NULL, s->n_front = 0, s->compressed = 1;
    return find_front(s, err);
}

/* Candidate files never say "running" (a crash would leave it stuck): a pending
 * candidate whose current lease is held and was renewed within two of its times to live
 * is shown as running, as dse status does. Lease files that cannot be read are skipped:
 * the report does not depend on them. */
struct lease_mark {
    const char    *dir;
    struct dse_cand  **by_id; /* sorted by id */
    int            n;
    double         now;
};

static int cand_id_cmp(const void *a, const void *b) {
    return strcmp((*(struct dse_cand *const *)a)->rec.id, (*(struct dse_cand *const *)b)->rec.id);
}

static int id_cand_cmp(const void *id, const void *c) {
    return strcmp(id, (*(struct dse_cand *const *)c)->rec.id);
}

static void mark_running(void *arg, const char *id, int64_t gen) {
    struct lease_mark *m = arg;
    struct dse_cand      **hit = bsearch(id, m->by_id, (size_t)m->n, sizeof *m->by_id, id_cand_cmp);
    if (!hit || (*hit)->rec.status != DSE_REC_PENDING) return;
    struct dse_lease l;
    struct dse_err   e = { 0 };
    int              missing;
    if (!dse_lease_read(m->dir, id, gen, &l, &missing, &e) && !l.released && m->now <= l.renewed + 2 * l.ttl_s)
        (*hit)->rec.status = DSE_REC_RUNNING;
}

enum dse_status dse_sweep_check_indices(const char *dir, const struct dse_rec *const *recs, int n,
                                        struct dse_err *err) {
    char path[4200];
    struct dse_space sp;
    snprintf(path, sizeof path, "%s/space.cfg", dir);
    if (access(path, R_OK) || dse_space_load(path, &sp, NULL)) return DSE_OK;
    const uint64_t count = sp.count;
    const int unbounded = sp.count_overflow;
    dse_space_free(&sp);
    for (int i = 0; i < n && !unbounded; i++) {
        if (recs[i]->index >= 0 && (uint64_t)recs[i]->index < count) continue;
        struct dse_json_doc *doc = NULL;
        int line = 0;
        snprintf(path, sizeof path, "%s/candidates/%s.json", dir, recs[i]->id);
        if (!dse_json_load(path, &doc, NULL)) { /* the line, for the message */
            const struct dse_json *v = dse_json_get(dse_json_root(doc), "index");
            line = v ? v->line : 0;
        }
        dse_json_free(doc);
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s:%d: \"index\" = %" PRId64 " is outside the space of "
                           "%s/space.cfg; expected 0 to %" PRIu64, path, line, recs[i]->index, dir, count - 1);
    }
    return DSE_OK;
}

int dse_sweep_replicates(const char *dir, int seen) {
    char path[4200];
    struct dse_space sp;
    snprintf(path, sizeof path, "%s/space.cfg", dir);
    if (access(path, R_OK) || dse_space_load(path, &sp, NULL)) return seen;
    const int r = sp.replicates > seen ? sp.replicates : seen;
    dse_space_free(&sp);
    return r;
}

struct dse_sweep_limits dse_sweep_limits(const char *dir) {
    struct dse_sweep_limits lim = { .mb = 0, .gflop = 0 };
    char path[4200];
    struct dse_space sp;
    snprintf(path, sizeof path, "%s/space.cfg", dir);
    if (access(path, R_OK) || dse_space_load(path, &sp, NULL)) return lim;
    double mb = sp.cons.max_model_mb, p_mb = (double)sp.cons.max_params * 4 / 1e6;
    lim.mb = mb > 0 && (p_mb <= 0 || mb < p_mb) ? mb : p_mb;
    lim.gflop = (double)sp.cons.max_flops / 1e9;
    dse_space_free(&sp);
    return lim;
}

enum dse_status dse_sweep_read(struct dse_sweep_view *s, const char *dir, struct dse_err *err) {
    memset(s, 0, sizeof *s);
    s->dir = dir;
    DIR *d = opendir(dir);
    if (!d)
        return dse_err_set(err, DSE_ERR_IO, dir, 0, "cannot open the sweep directory: %s; "
                           "expected a directory made by dse sweep (docs/sweep-dir.md)",
                           strerror(errno));
    closedir(d);
    enum dse_status st = read_manifest(s, err);
    if (st) return st;

    char  *cdir = path_join(dir, "candidates");
    char **names = NULL;
    int    n = 0;
    if (!cdir) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    st = list_candidates(cdir, &names, &n, err);
    if (!st && n && !(s->c = calloc((size_t)n, sizeof *s->c)))
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; i < n && !st; i++) {
        struct dse_cand *c = &s->c[s->n++];
        if (!(c->path = path_join(cdir, names[i])))
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        else
            st = read_candidate(c, err);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    free(cdir);
    if (st) return st;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct lease_mark lm = { .dir = dir, .by_id = malloc(sizeof(struct dse_cand *) * (size_t)(s->n ? s->n : 1)),
                             .n = s->n, .now = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec };
    if (!lm.by_id) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; i < s->n; i++) lm.by_id[i] = &s->c[i];
    if (s->n) qsort(lm.by_id, (size_t)s->n, sizeof *lm.by_id, cand_id_cmp);
    st = dse_lease_scan(dir, mark_running, &lm, err);
    free(lm.by_id);
    if (st) return st;

    if (s->n) qsort(s->c, (size_t)s->n, sizeof *s->c, cand_index_cmp);
    for (int i = 1; i < s->n; i++)
        if (s->c[i].rec.index == s->c[i - 1].rec.index && s->c[i].rec.replicate == s->c[i - 1].rec.replicate) {
            const struct dse_json *v = dse_json_get(dse_json_root(s->c[i].doc), "index");
            return dse_json_bad(err, s->c[i].path, v->line, "\"index\" = %" PRId64 " is also the index of "
                       "%s; expected each index once (each replicate of it once)", s->c[i].rec.index,
                       s->c[i - 1].path);
        }
    const struct dse_rec **all = malloc(sizeof *all * (size_t)(s->n ? s->n : 1));
    if (!all) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; i < s->n; i++) all[i] = &s->c[i].rec;
    st = dse_sweep_check_indices(dir, all, s->n, err);
    free(all);
    if (st) return st;
    if ((st = group_replicates(s, err))) return st;
    int no_plan;
    if ((st = dse_plan_read(dir, &s->plan, &no_plan, err))) return st;
    s->has_plan = !no_plan;
    if (s->has_plan) {
        /* every record (with replicates, s->all: a row's record is the group's, not a replicate's) */
        const struct dse_cand *own = s->all ? s->all : s->c;
        const int n_own = s->all ? s->n_all : s->n;
        const struct dse_rec **recs = malloc(sizeof *recs * (size_t)(n_own ? n_own : 1));
        if (!recs) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < n_own; i++) recs[i] = &own[i].rec;
        st = dse_rungs_load(dir, &s->plan, recs, n_own, dse_sweep_replicates(dir, s->replicates), s->rung, err);
        free(recs);
        if (st) return st;
    }
    s->by_size = malloc(sizeof *s->by_size * (size_t)(s->n ? s->n : 1));
    if (!s->by_size) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; i < s->n; i++) s->by_size[i] = &s->c[i];
    if (s->n) qsort(s->by_size, (size_t)s->n, sizeof *s->by_size, cand_size_cmp);
    return find_front(s, err);
}

/* The most accurate trained candidate (status done, with a top-1) whose model is within
 * max_mb (10^6 bytes; <= 0: any size), ties to the smaller model, then to the smaller id:
 * the rule of `dse export --best` and of the report's "Next" line. NULL if there is none;
 * n_done and n_fit count the trained candidates and those within max_mb. */
const struct dse_cand *dse_sweep_best(const struct dse_sweep_view *s, double max_mb, int *n_done, int *n_fit) {
    const struct dse_cand *best = NULL;
    *n_done = *n_fit = 0;
    for (int i = 0; i < s->n; i++) {
        const struct dse_cand *c = &s->c[i];
        const struct dse_rec *r = &c->rec, *b = best ? &best->rec : NULL;
        if (r->status != DSE_REC_DONE || isnan(r->top1)) continue;
        ++*n_done;
        if (max_mb > 0 && (double)r->model_bytes / 1e6 > max_mb) continue;
        ++*n_fit;
        if (!b || r->top1 > b->top1 ||
            (r->top1 == b->top1 && (r->model_bytes < b->model_bytes ||
                                    (r->model_bytes == b->model_bytes && strcmp(r->id, b->id) < 0))))
            best = c;
    }
    return best;
}

