/* report_sweep.c: `dse report DIR`: reads a sweep directory (docs/sweep-dir.md), picks
 * the Pareto frontier (analysis/pareto.c) and prints every candidate as Markdown, CSV,
 * TeX or JSON; optionally plots model size against FLOPs or accuracy as an SVG file.
 * Formats, frontier rules and the stable JSON keys: docs/report.md. */
#include "dse/report.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "dse/json_read.h"
#include "dse/lease.h"
#include "dse/sweep_impl.h"

#define MIB        (1024.0 * 1024.0)
#define VARIED_MAX 32 /* varied metaparameters: a column each in the tables */


/* One candidate file. Strings and metaparams are borrowed from doc. */
struct cand {
    struct dse_json_doc   *doc;
    char                  *path;
    const char            *id;
    int64_t                index;
    const struct dse_json *metaparams;
    int64_t                params, model_bytes, flops;
    int64_t                train_mem_bytes;   /* -1 if null or absent */
    enum dse_rec_status       status;
    const char            *pruned_by;         /* NULL if null or absent */
    int                    has_top1, has_top5;
    double                 top1, top5;        /* in [0, 1] */
    int                    on_front;
    /* training sweeps (docs/sweep-dir.md); 0 / -1 / NULL when absent */
    int                    epochs_done;
    int                    stopped_rung, stopped_epoch, diverged_epoch;
    int64_t                diverged_iter;
    const char            *failed_why;
    double                 train_seconds;
    const struct dse_json *per_epoch;         /* the "per_epoch" array, or NULL */
};

struct sweep {
    const char          *dir;
    struct dse_json_doc *doc;         /* sweep.json */
    const char          *space;
    int64_t              declared;    /* "candidates" of sweep.json */
    int                  n_varied;
    const char         **varied;
    int                  n;
    struct cand         *c;           /* sorted by index */
    struct cand        **by_size;     /* sorted by model size, then index */
    int                  trained;     /* frontier over top1 instead of FLOPs */
    int                  n_front;
    struct cand        **front;       /* increasing model size */
    int                  has_plan;    /* a training sweep: DIR/plan.json */
    /* the space's limits on the plot's axes (DIR/space.cfg; 0: none): model MB (from
     * max_model_mb and max_params at 4 bytes each) and, analytic, forward GFLOP */
    double               limit_mb, limit_gflop;
    struct dse_sweep_plan plan;
    struct dse_rung      rung[DSE_SWEEP_RUNGS_MAX];
};

/* ---- errors ------------------------------------------------------------------------ */

/* err->file may only borrow strings that outlive the call (base.h), and the paths of
 * the files inside DIR are built here: fold "path:line: " into the message instead. */
static enum dse_status fold_path(struct dse_err *err, enum dse_status st) {
    if (st && err && err->file) {
        char buf[sizeof err->msg];
        dse_err_format(err, buf, (int)sizeof buf);
        dse_strlcpy(err->msg, buf, (int)sizeof err->msg);
        err->file = NULL;
        err->line = 0;
    }
    return st;
}

static enum dse_status bad(struct dse_err *err, const char *path, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static enum dse_status bad(struct dse_err *err, const char *path, int line, const char *fmt, ...) {
    char    msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0) return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s:%d: %s", path, line, msg);
    return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: %s", path, msg);
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

/* "a number", "an array", ... */
static const char *a_type(enum dse_json_type t) {
    switch (t) {
    case DSE_JSON_NULL:   return "null";
    case DSE_JSON_BOOL:   return "a boolean";
    case DSE_JSON_NUMBER: return "a number";
    case DSE_JSON_STRING: return "a string";
    case DSE_JSON_ARRAY:  return "an array";
    case DSE_JSON_OBJECT: return "an object";
    }
    return "a value";
}

enum want { WANT_INT, WANT_NUM, WANT_STR, WANT_OBJ, WANT_ARR };

static const char *const want_str[] = {
    "an integer", "a number", "a string", "an object", "an array",
};

/* Member key of obj, checked against w. optional: absent or null gives *out = NULL. */
static enum dse_status get(const char *path, const struct dse_json *obj, const char *key,
                           enum want w, int optional, const struct dse_json **out,
                           struct dse_err *err) {
    const struct dse_json *v = dse_json_get(obj, key);
    *out = NULL;
    if (!v || v->type == DSE_JSON_NULL) {
        if (optional) return DSE_OK;
        if (!v) return bad(err, path, obj->line, "missing key \"%s\"; expected %s", key, want_str[w]);
        return bad(err, path, v->line, "\"%s\" is null; expected %s", key, want_str[w]);
    }
    static const enum dse_json_type type_of[] = { DSE_JSON_NUMBER, DSE_JSON_NUMBER, DSE_JSON_STRING,
                                                   DSE_JSON_OBJECT, DSE_JSON_ARRAY };
    if (v->type != type_of[w])
        return bad(err, path, v->line, "\"%s\" is %s; expected %s%s", key, a_type(v->type),
                   want_str[w], optional ? " or null" : "");
    if (w == WANT_INT && !v->is_int)
        return bad(err, path, v->line, "\"%s\" = %.40s is not an integer; expected an integer%s",
                   key, v->str, optional ? " or null" : "");
    *out = v;
    return DSE_OK;
}

static enum dse_status get_count(const char *path, const struct dse_json *obj, const char *key,
                                 int64_t *out, struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status        st = get(path, obj, key, WANT_INT, 0, &v, err);
    if (st) return st;
    if (v->integer < 0)
        return bad(err, path, v->line, "\"%s\" = %" PRId64 " is negative; expected an integer >= 0",
                   key, v->integer);
    *out = v->integer;
    return DSE_OK;
}

static enum dse_status get_accuracy(const char *path, const struct dse_json *obj, const char *key,
                                    int *has, double *out, struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status        st = get(path, obj, key, WANT_NUM, 1, &v, err);
    *has = 0;
    if (st || !v) return st;
    if (!(v->number >= 0.0 && v->number <= 1.0))
        return bad(err, path, v->line, "\"%s\" = %.40s is out of range; expected a number in "
                   "[0, 1] or null", key, v->str);
    *has = 1;
    *out = v->number;
    return DSE_OK;
}

static enum dse_status read_manifest(struct sweep *s, struct dse_err *err) {
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
        st = bad(err, path, root->line, "the file holds %s; expected an object (docs/sweep-dir.md)",
                 a_type(root->type));
        goto out;
    }
    v = dse_json_get(root, "format");
    if (!v || v->type != DSE_JSON_STRING || strcmp(v->str, "dse-sweep-1") != 0) {
        if (!v) st = bad(err, path, root->line, "missing key \"format\"; expected \"dse-sweep-1\"");
        else if (v->type != DSE_JSON_STRING)
            st = bad(err, path, v->line, "\"format\" is %s; expected \"dse-sweep-1\"",
                     a_type(v->type));
        else
            st = bad(err, path, v->line, "\"format\" = \"%.64s\" is not supported; expected "
                     "\"dse-sweep-1\"", v->str);
        goto out;
    }
    if ((st = get(path, root, "space", WANT_STR, 0, &v, err))) goto out;
    s->space = v->str;
    if ((st = get_count(path, root, "candidates", &s->declared, err))) goto out;
    if ((st = get(path, root, "varied", WANT_ARR, 0, &v, err))) goto out;
    s->varied = calloc((size_t)v->n + 1, sizeof *s->varied);
    if (!s->varied) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto out;
    }
    if (v->n > VARIED_MAX) {
        st = bad(err, path, v->line, "\"varied\" lists %d names; expected at most %d", v->n,
                 VARIED_MAX);
        goto out;
    }
    for (int i = 0; i < v->n; i++) {
        if (v->items[i].type != DSE_JSON_STRING) {
            st = bad(err, path, v->items[i].line, "\"varied\" holds %s; expected metaparameter "
                     "names as strings", a_type(v->items[i].type));
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

static enum dse_status read_candidate(struct cand *c, const char *name, struct dse_err *err) {
    const char            *path = c->path;
    const struct dse_json *root, *v;
    enum dse_status        st = fold_path(err, dse_json_load(path, &c->doc, err));
    if (st) return st;
    root = dse_json_root(c->doc);
    if (root->type != DSE_JSON_OBJECT)
        return bad(err, path, root->line, "the file holds %s; expected an object "
                   "(docs/sweep-dir.md)", a_type(root->type));
    if ((st = get(path, root, "id", WANT_STR, 0, &v, err))) return st;
    c->id = v->str;
    size_t stem = strlen(name) - 5; /* without ".json" */
    if (strlen(c->id) != stem || strncmp(c->id, name, stem) != 0)
        return bad(err, path, v->line, "\"id\" = \"%.64s\" does not match the file name; expected "
                   "\"%.*s\"", c->id, (int)(stem < 64 ? stem : 64), name);
    if ((st = get(path, root, "index", WANT_INT, 0, &v, err))) return st;
    c->index = v->integer;
    if ((st = get(path, root, "metaparams", WANT_OBJ, 0, &c->metaparams, err))) return st;
    if ((st = get_count(path, root, "params", &c->params, err))) return st;
    if ((st = get_count(path, root, "model_bytes", &c->model_bytes, err))) return st;
    if ((st = get_count(path, root, "flops", &c->flops, err))) return st;
    c->train_mem_bytes = -1;
    if ((st = get(path, root, "train_mem_bytes", WANT_INT, 1, &v, err))) return st;
    if (v) {
        if (v->integer < 0)
            return bad(err, path, v->line, "\"train_mem_bytes\" = %" PRId64 " is negative; "
                       "expected an integer >= 0 or null", v->integer);
        c->train_mem_bytes = v->integer;
    }
    if ((st = get(path, root, "status", WANT_STR, 0, &v, err))) return st;
    int k = dse_rec_status_from_str(v->str);
    if (k < 0) {
        char known[160]; /* "pending, pruned, ... or stopped", from the one table */
        int o = 0;
        for (int j = 0; j < DSE_REC_COUNT && o < (int)sizeof known; j++)
            o += snprintf(known + o, sizeof known - (size_t)o, "%s%s", j ? (j == DSE_REC_COUNT - 1 ? " or " : ", ") : "",
                          dse_rec_status_str((enum dse_rec_status)j));
        return bad(err, path, v->line, "\"status\" = \"%.64s\" is not a known status; expected %s", v->str, known);
    }
    c->status = (enum dse_rec_status)k;
    if ((st = get(path, root, "pruned_by", WANT_STR, 1, &v, err))) return st;
    c->pruned_by = v ? v->str : NULL;
    if ((st = get_accuracy(path, root, "top1", &c->has_top1, &c->top1, err))) return st;
    if ((st = get_accuracy(path, root, "top5", &c->has_top5, &c->top5, err))) return st;
    /* the training keys, all optional */
    static const struct { const char *key; int64_t dflt, lo, hi; } ints[] = { /* the ranges dse writes */
        { "epochs_done", 0, 0, INT32_MAX }, { "stopped_rung", -1, -1, DSE_SWEEP_RUNGS_MAX },
        { "stopped_epoch", 0, 0, INT32_MAX }, { "diverged_epoch", 0, 0, INT32_MAX },
        { "diverged_iter", 0, 0, INT64_MAX },
    };
    int64_t iv[5];
    for (int i = 0; i < 5; i++) {
        if ((st = get(path, root, ints[i].key, WANT_INT, 1, &v, err))) return st;
        iv[i] = v ? v->integer : ints[i].dflt;
        if (iv[i] < ints[i].lo || iv[i] > ints[i].hi)
            return bad(err, path, v->line, "\"%s\" = %" PRId64 " is out of range; expected %" PRId64 " to %" PRId64
                       " or null", ints[i].key, iv[i], ints[i].lo, ints[i].hi);
    }
    c->epochs_done = (int)iv[0], c->stopped_rung = (int)iv[1], c->stopped_epoch = (int)iv[2];
    c->diverged_epoch = (int)iv[3], c->diverged_iter = iv[4];
    if ((st = get(path, root, "failed_why", WANT_STR, 1, &v, err))) return st;
    c->failed_why = v ? v->str : NULL;
    if ((st = get(path, root, "train_seconds", WANT_NUM, 1, &v, err))) return st;
    c->train_seconds = v ? v->number : 0;
    if ((st = get(path, root, "per_epoch", WANT_ARR, 1, &v, err))) return st;
    c->per_epoch = v;
    for (int e = 0; v && e < v->n; e++) { /* {"epoch": k, "top1": x or null, ...} */
        const struct dse_json *it = &v->items[e], *ep = dse_json_get(it, "epoch"), *t1 = dse_json_get(it, "top1");
        if (it->type != DSE_JSON_OBJECT || !ep || ep->type != DSE_JSON_NUMBER || !ep->is_int || ep->integer < 1 ||
            (t1 && t1->type != DSE_JSON_NULL && (t1->type != DSE_JSON_NUMBER || t1->number < 0 || t1->number > 1)))
            return bad(err, path, it->line, "\"per_epoch\"[%d] is not {\"epoch\": k >= 1, \"top1\": a number "
                       "in [0, 1] or null, ...} (docs/sweep-dir.md)", e);
    }
    return DSE_OK;
}

static int cand_index_cmp(const void *a, const void *b) {
    const struct cand *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return strcmp(x->id, y->id);
}

static int cand_size_cmp(const void *a, const void *b) {
    const struct cand *x = *(struct cand *const *)a, *y = *(struct cand *const *)b;
    if (x->model_bytes != y->model_bytes) return x->model_bytes < y->model_bytes ? -1 : 1;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return strcmp(x->id, y->id);
}

static void sweep_free(struct sweep *s) {
    for (int i = 0; i < s->n; i++) {
        dse_json_free(s->c[i].doc);
        free(s->c[i].path);
    }
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
static enum dse_status find_front(struct sweep *s, struct dse_err *err) {
    for (int i = 0; i < s->n; i++) s->trained |= s->c[i].has_top1;
    size_t  n = (size_t)(s->n ? s->n : 1);
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    int    *idx = malloc(n * sizeof *idx), *scratch = malloc(n * sizeof *scratch);
    s->front = malloc(n * sizeof *s->front);
    if (!x || !y || !idx || !scratch || !s->front) {
        free(x), free(y), free(idx), free(scratch);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    for (int i = 0; i < s->n; i++) {
        const struct cand *c = &s->c[i];
        int in = s->trained ? c->status == DSE_REC_DONE && c->has_top1 : c->status != DSE_REC_PRUNED;
        x[i] = in ? (double)c->model_bytes : NAN;
        y[i] = s->trained ? c->top1 : (double)c->flops;
    }
    s->n_front = dse_pareto_front(x, y, s->n, s->trained, idx, scratch);
    for (int k = 0; k < s->n_front; k++) {
        s->c[idx[k]].on_front = 1;
        s->front[k] = &s->c[idx[k]];
    }
    /* equal model sizes come out by y; list them like the tables: by size, then index */
    qsort(s->front, (size_t)s->n_front, sizeof *s->front, cand_size_cmp);
    free(x), free(y), free(idx), free(scratch);
    return DSE_OK;
}

/* Candidate files never say "running" (a crash would leave it stuck): a pending
 * candidate whose current lease is held and was renewed within two of its times to live
 * is shown as running, as dse status does. Lease files that cannot be read are skipped:
 * the report does not depend on them. */
struct lease_mark {
    const char    *dir;
    struct cand  **by_id; /* sorted by id */
    int            n;
    double         now;
};

static int cand_id_cmp(const void *a, const void *b) {
    return strcmp((*(struct cand *const *)a)->id, (*(struct cand *const *)b)->id);
}

static void mark_running(void *arg, const char *id, int64_t gen) {
    struct lease_mark *m = arg;
    struct cand        key = { .id = id }, *kp = &key;
    struct cand      **hit = bsearch(&kp, m->by_id, (size_t)m->n, sizeof *m->by_id, cand_id_cmp);
    if (!hit || (*hit)->status != DSE_REC_PENDING) return;
    struct dse_lease l;
    struct dse_err   e = { 0 };
    int              missing;
    if (!dse_lease_read(m->dir, id, gen, &l, &missing, &e) && !l.released && m->now <= l.renewed + 2 * l.ttl_s)
        (*hit)->status = DSE_REC_RUNNING;
}

/* The constraints of DIR/space.cfg that the plot can draw. A sweep without its space
 * file (a hand-made fixture) or with one that no longer loads has none to draw. */
static void read_limits(struct sweep *s) {
    char path[4200];
    struct dse_space sp;
    snprintf(path, sizeof path, "%s/space.cfg", s->dir);
    if (access(path, R_OK) || dse_space_load(path, &sp, NULL)) return;
    double mb = sp.cons.max_model_mb, p_mb = (double)sp.cons.max_params * 4 / 1e6;
    s->limit_mb = mb > 0 && (p_mb <= 0 || mb < p_mb) ? mb : p_mb;
    s->limit_gflop = (double)sp.cons.max_flops / 1e9;
    dse_space_free(&sp);
}

static enum dse_status sweep_read(struct sweep *s, const char *dir, struct dse_err *err) {
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
        struct cand *c = &s->c[s->n++];
        if (!(c->path = path_join(cdir, names[i])))
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        else
            st = read_candidate(c, names[i], err);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    free(cdir);
    if (st) return st;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct lease_mark lm = { dir, malloc(sizeof(struct cand *) * (size_t)(s->n ? s->n : 1)), s->n,
                             (double)now.tv_sec + 1e-9 * (double)now.tv_nsec };
    if (!lm.by_id) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; i < s->n; i++) lm.by_id[i] = &s->c[i];
    if (s->n) qsort(lm.by_id, (size_t)s->n, sizeof *lm.by_id, cand_id_cmp);
    st = dse_lease_scan(dir, mark_running, &lm, err);
    free(lm.by_id);
    if (st) return st;

    if (s->n) qsort(s->c, (size_t)s->n, sizeof *s->c, cand_index_cmp);
    for (int i = 1; i < s->n; i++)
        if (s->c[i].index == s->c[i - 1].index) {
            const struct dse_json *v = dse_json_get(dse_json_root(s->c[i].doc), "index");
            return bad(err, s->c[i].path, v->line, "\"index\" = %" PRId64 " is also the index of "
                       "%s; expected each index once", s->c[i].index, s->c[i - 1].path);
        }
    int no_plan;
    if ((st = dse_plan_read(dir, &s->plan, &no_plan, err))) return st;
    s->has_plan = !no_plan;
    for (int k = 0; s->has_plan && k < s->plan.n_rungs; k++) {
        int absent;
        if ((st = dse_rung_read(dir, k, &s->rung[k], &absent, err))) return st;
        if (absent) break;
    }
    read_limits(s);
    s->by_size = malloc(sizeof *s->by_size * (size_t)(s->n ? s->n : 1));
    if (!s->by_size) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; i < s->n; i++) s->by_size[i] = &s->c[i];
    if (s->n) qsort(s->by_size, (size_t)s->n, sizeof *s->by_size, cand_size_cmp);
    return find_front(s, err);
}

enum dse_status dse_report_check_candidate(const char *path, struct dse_err *err) {
    struct cand c;
    memset(&c, 0, sizeof c);
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    size_t n = strlen(name);
    if (n < 6 || strcmp(name + n - 5, ".json"))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: a candidate file's name is <id>.json", path);
    c.path = (char *)path; /* read only */
    enum dse_status st = read_candidate(&c, name, err);
    dse_json_free(c.doc);
    return st;
}

/* ---- formatting helpers ------------------------------------------------------------ */

/* Shortest text that reads back as the same double. */
static const char *fmt_num(char *buf, size_t size, double v) {
    int p0 = 1; /* at least the integer digits, so 10 does not come out as 1e+01 */
    if (fabs(v) >= 1.0 && fabs(v) < 1e15) p0 = (int)floor(log10(fabs(v))) + 1;
    for (int p = p0; p <= 17; p++) {
        snprintf(buf, size, "%.*g", p, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

static const char *fmt_int(char *buf, size_t size, int64_t v, int pretty) {
    char raw[32];
    snprintf(raw, sizeof raw, "%" PRId64, v);
    if (!pretty) {
        snprintf(buf, size, "%s", raw);
        return buf;
    }
    const char *d = raw[0] == '-' ? raw + 1 : raw;
    int         n = (int)strlen(d), o = 0;
    if (d != raw) buf[o++] = '-';
    for (int i = 0; i < n && o + 2 < (int)size; i++) {
        buf[o++] = d[i];
        if ((n - i - 1) % 3 == 0 && i + 1 < n) buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}

/* 3 significant digits, no exponent: 2.43, 0.0861, 12.3, 1234. */
static const char *fmt_sig3(char *buf, size_t size, double v) {
    char e[32];
    if (v == 0.0 || !isfinite(v)) {
        snprintf(buf, size, "%g", v);
        return buf;
    }
    snprintf(e, sizeof e, "%.2e", v);
    double r = strtod(e, NULL);
    int    dec = 2 - (int)floor(log10(fabs(r)));
    snprintf(buf, size, "%.*f", dec < 0 ? 0 : dec, r);
    return buf;
}

/* A metaparameter value as text for tables and labels: strings as they are; numbers
 * written with a fraction or exponent in their shortest round-trip form, keeping a ".0"
 * (a writer's %.17g turns 0.1 into 0.10000000000000001; this shows 0.1, and 1.0 as 1.0). */
static const char *fmt_value(char *buf, size_t size, const struct dse_json *v) {
    if (!v) return "-";
    switch (v->type) {
    case DSE_JSON_NULL:   return "null";
    case DSE_JSON_BOOL:   return v->boolean ? "true" : "false";
    case DSE_JSON_NUMBER:
        if (!strpbrk(v->str, ".eE")) return v->str;
        fmt_num(buf, size, v->number);
        if (!strpbrk(buf, ".e") && strlen(buf) + 3 <= size) strcat(buf, ".0");
        return buf;
    case DSE_JSON_STRING: return v->str;
    case DSE_JSON_ARRAY:  return "[...]";
    case DSE_JSON_OBJECT: return "{...}";
    }
    return "?";
}

/* Cut s before a UTF-8 sequence that snprintf truncated. */
static void utf8_trim(char *s) {
    size_t n = strlen(s), i = n;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xc0) == 0x80) i--;
    if (i == 0) return;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    if (n - (i - 1) < need) s[i - 1] = '\0';
}

static int utf8_width(const char *s) {
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

static void json_cstr(FILE *f, const char *s) {
    if (s) dse_json_write_str(f, s, strlen(s));
    else fputs("null", f);
}

/* Any value read, written back (depth is bounded by the reader's cap). */
static void json_value(FILE *f, const struct dse_json *v) {
    switch (v->type) {
    case DSE_JSON_NULL:   fputs("null", f); break;
    case DSE_JSON_BOOL:   fputs(v->boolean ? "true" : "false", f); break;
    case DSE_JSON_NUMBER: fputs(v->str, f); break; /* the token as written is JSON */
    case DSE_JSON_STRING: dse_json_write_str(f, v->str, v->len); break;
    case DSE_JSON_ARRAY:
        fputc('[', f);
        for (int i = 0; i < v->n; i++) {
            if (i) fputs(", ", f);
            json_value(f, &v->items[i]);
        }
        fputc(']', f);
        break;
    case DSE_JSON_OBJECT:
        fputc('{', f);
        for (int i = 0; i < v->n; i++) {
            if (i) fputs(", ", f);
            dse_json_write_str(f, v->members[i].key, v->members[i].key_len);
            fputs(": ", f);
            json_value(f, &v->members[i].value);
        }
        fputc('}', f);
        break;
    }
}

/* ---- tables (MD, CSV, TeX) --------------------------------------------------------- */

/* Row 0 holds the headers. Cells are owned copies. */
struct tbl {
    int    ncol;
    int    right[64];
    int    raw_col;   /* TeX: the column whose cells are macros, not text (0: none) */
    char **cell;
    int    n, cap;
    int    oom;
};

static void tbl_add(struct tbl *t, const char *s) {
    if (t->oom) return;
    if (t->n == t->cap) {
        int   cap = t->cap ? 2 * t->cap : 256;
        char **q = realloc(t->cell, sizeof *q * (size_t)cap);
        if (!q) {
            t->oom = 1;
            return;
        }
        t->cell = q;
        t->cap = cap;
    }
    if (!(t->cell[t->n] = strdup(s ? s : ""))) t->oom = 1;
    else t->n++;
}

static void tbl_head(struct tbl *t, const char *s, int right) {
    if (t->ncol < DSE_ARRAY_LEN(t->right)) {
        t->right[t->ncol++] = right;
        tbl_add(t, s);
    }
}

static void tbl_free(struct tbl *t) {
    for (int i = 0; i < t->n; i++) free(t->cell[i]);
    free(t->cell);
}

static int md_width(const char *s) {
    int w = utf8_width(s);
    for (; *s; s++) w += *s == '|'; /* escaped as \| */
    return w;
}

static void md_cell(FILE *f, const char *s, int width, int right) {
    int pad = width - md_width(s);
    fputs("| ", f);
    if (right) fprintf(f, "%*s", pad, "");
    for (; *s; s++) {
        if (*s == '|') fputc('\\', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    if (!right) fprintf(f, "%*s", pad, "");
    fputc(' ', f);
}

static void tbl_print_md(FILE *f, const struct tbl *t) {
    int w[64], rows = t->n / t->ncol;
    for (int c = 0; c < t->ncol; c++) {
        w[c] = 3;
        for (int r = 0; r < rows; r++) {
            int k = md_width(t->cell[r * t->ncol + c]);
            if (k > w[c]) w[c] = k;
        }
    }
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < t->ncol; c++) md_cell(f, t->cell[r * t->ncol + c], w[c], t->right[c]);
        fputs("|\n", f);
        if (r == 0) {
            for (int c = 0; c < t->ncol; c++) {
                fputc('|', f);
                for (int k = 0; k < w[c] + 2; k++) fputc(k == w[c] + 1 && t->right[c] ? ':' : '-', f);
            }
            fputs("|\n", f);
        }
    }
}

static void csv_field(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void tbl_print_csv(FILE *f, const struct tbl *t) {
    for (int i = 0; i < t->n; i++) {
        csv_field(f, t->cell[i]);
        fputs((i + 1) % t->ncol ? "," : "\n", f);
    }
}

static void tex_text(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '_': case '%': case '&': case '#': case '$': case '{': case '}':
            fprintf(f, "\\%c", *s);
            break;
        case '\\': fputs("\\textbackslash{}", f); break;
        case '~':  fputs("\\textasciitilde{}", f); break;
        case '^':  fputs("\\textasciicircum{}", f); break;
        case '<':  fputs("\\textless{}", f); break;
        case '>':  fputs("\\textgreater{}", f); break;
        case '\n': case '\r': fputc(' ', f); break;
        default:   fputc(*s, f);
        }
    }
}

static void tbl_print_tex(FILE *f, const struct tbl *t) {
    fputs("\\begin{tabular}{", f);
    for (int c = 0; c < t->ncol; c++) fputc(t->right[c] ? 'r' : 'l', f);
    fputs("}\n\\toprule\n", f);
    for (int i = 0; i < t->n; i++) {
        if (t->raw_col && i % t->ncol == t->raw_col) fputs(t->cell[i], f);
        else tex_text(f, t->cell[i]);
        if ((i + 1) % t->ncol) {
            fputs(" & ", f);
        } else {
            fputs(" \\\\\n", f);
            if (i + 1 == t->ncol) fputs("\\midrule\n", f);
        }
    }
    fputs("\\bottomrule\n\\end{tabular}\n", f);
}

/* ---- the report ---------------------------------------------------------------------- */

static int any_top(const struct sweep *s, int five) {
    for (int i = 0; i < s->n; i++)
        if (five ? s->c[i].has_top5 : s->c[i].has_top1) return 1;
    return 0;
}

static const char *objective(const struct sweep *s) {
    return s->trained ? "max top1, min model size" : "min model size, min FLOPs";
}

static const char *status_cell(char *buf, size_t size, const struct cand *c) {
    if (c->status == DSE_REC_PRUNED && c->pruned_by)
        snprintf(buf, size, "pruned: %s", c->pruned_by);
    else if (c->status == DSE_REC_STOPPED && c->stopped_rung >= 0)
        snprintf(buf, size, "stopped at rung %d (epoch %d)", c->stopped_rung, c->stopped_epoch);
    else if (c->status == DSE_REC_DIVERGED && c->diverged_epoch > 0)
        snprintf(buf, size, "diverged in epoch %d (iteration %" PRId64 ")", c->diverged_epoch, c->diverged_iter);
    else if (c->status == DSE_REC_FAILED && c->failed_why)
        snprintf(buf, size, "failed: %.200s", c->failed_why);
    else
        snprintf(buf, size, "%s", dse_rec_status_str(c->status));
    return buf;
}

/* The human tables (MD and TeX): pretty numbers. frontier_col adds the marker column. */
static void table_human(struct tbl *t, const struct sweep *s, struct cand *const *rows, int n,
                        int frontier_col, const char *mark) {
    char b[600];
    int  t1 = any_top(s, 0), t5 = any_top(s, 1);
    tbl_head(t, "id", 0);
    tbl_head(t, "index", 1);
    for (int v = 0; v < s->n_varied; v++) tbl_head(t, s->varied[v], 1);
    tbl_head(t, "params", 1);
    tbl_head(t, "model MB", 1);
    tbl_head(t, "model MiB", 1);
    tbl_head(t, "GFLOP", 1);
    tbl_head(t, "train mem MiB", 1);
    tbl_head(t, "status", 0);
    if (t1) tbl_head(t, "top-1 %", 1);
    if (t5) tbl_head(t, "top-5 %", 1);
    if (frontier_col) {
        t->raw_col = t->ncol;
        tbl_head(t, "frontier", 0);
    }
    for (int i = 0; i < n; i++) {
        const struct cand *c = rows[i];
        tbl_add(t, c->id);
        tbl_add(t, fmt_int(b, sizeof b, c->index, 0));
        for (int v = 0; v < s->n_varied; v++)
            tbl_add(t, fmt_value(b, sizeof b, dse_json_get(c->metaparams, s->varied[v])));
        tbl_add(t, fmt_int(b, sizeof b, c->params, 1));
        snprintf(b, sizeof b, "%.2f", (double)c->model_bytes / 1e6);
        tbl_add(t, b);
        snprintf(b, sizeof b, "%.2f", (double)c->model_bytes / MIB);
        tbl_add(t, b);
        tbl_add(t, fmt_sig3(b, sizeof b, (double)c->flops / 1e9));
        if (c->train_mem_bytes >= 0) snprintf(b, sizeof b, "%.1f", (double)c->train_mem_bytes / MIB);
        else snprintf(b, sizeof b, "-");
        tbl_add(t, b);
        tbl_add(t, status_cell(b, sizeof b, c));
        if (t1) {
            if (c->has_top1) snprintf(b, sizeof b, "%.1f", 100.0 * c->top1);
            else snprintf(b, sizeof b, "-");
            tbl_add(t, b);
        }
        if (t5) {
            if (c->has_top5) snprintf(b, sizeof b, "%.1f", 100.0 * c->top5);
            else snprintf(b, sizeof b, "-");
            tbl_add(t, b);
        }
        if (frontier_col) tbl_add(t, c->on_front ? mark : "");
    }
}

static void counts_text(char *buf, size_t size, const struct sweep *s) {
    int cnt[DSE_REC_COUNT] = { 0 };
    for (int i = 0; i < s->n; i++) cnt[s->c[i].status]++;
    int o = snprintf(buf, size, "%d pruned, %d pending, %d done", cnt[DSE_REC_PRUNED], cnt[DSE_REC_PENDING],
                     cnt[DSE_REC_DONE]);
    for (int k = 0; k < DSE_REC_COUNT; k++)
        if (cnt[k] && k != DSE_REC_PRUNED && k != DSE_REC_PENDING && k != DSE_REC_DONE && o < (int)size)
            o += snprintf(buf + o, size - (size_t)o, ", %d %s", cnt[k], dse_rec_status_str((enum dse_rec_status)k));
}

static void header_line(char *buf, size_t size, const struct sweep *s) {
    char counts[200], decl[64] = "";
    counts_text(counts, sizeof counts, s);
    if (s->declared != s->n)
        snprintf(decl, sizeof decl, " of %" PRId64 " listed in sweep.json", s->declared);
    snprintf(buf, size, "Sweep %s: %d candidate%s%s (%s)", s->space, s->n, s->n == 1 ? "" : "s",
             decl, counts);
}

/* The most accurate trained candidate (status done, with a top-1) whose model is within
 * max_mb (10^6 bytes; <= 0: any size), ties to the smaller model, then to the smaller id:
 * the rule of `dse export --best` and of the report's "Next" line. NULL if there is none;
 * n_done and n_fit count the trained candidates and those within max_mb. */
static const struct cand *best_cand(const struct sweep *s, double max_mb, int *n_done, int *n_fit) {
    const struct cand *best = NULL;
    *n_done = *n_fit = 0;
    for (int i = 0; i < s->n; i++) {
        const struct cand *c = &s->c[i];
        if (c->status != DSE_REC_DONE || !c->has_top1) continue;
        ++*n_done;
        if (max_mb > 0 && (double)c->model_bytes / 1e6 > max_mb) continue;
        ++*n_fit;
        if (!best || c->top1 > best->top1 ||
            (c->top1 == best->top1 && (c->model_bytes < best->model_bytes ||
                                       (c->model_bytes == best->model_bytes && strcmp(c->id, best->id) < 0))))
            best = c;
    }
    return best;
}

/* A trained sweep where no candidate is pending or running any more: its best is final. */
static const struct cand *final_best(const struct sweep *s) {
    int done, fit;
    for (int i = 0; i < s->n; i++)
        if (s->c[i].status == DSE_REC_PENDING || s->c[i].status == DSE_REC_RUNNING) return NULL;
    return s->trained ? best_cand(s, 0, &done, &fit) : NULL;
}

static void best_out(const struct cand *c, struct dse_report_best *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!c) return;
    snprintf(out->id, sizeof out->id, "%s", c->id);
    out->index = c->index;
    out->top1 = c->top1;
    out->model_bytes = c->model_bytes;
}

/* dir as one POSIX shell word: as it is when it has only safe characters, else in single
 * quotes (a quote inside as '\''). */
static void shell_word(char *buf, size_t size, const char *dir) {
    if (dir[0] && strspn(dir, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./+:@%,=") == strlen(dir)) {
        snprintf(buf, size, "%s", dir);
        return;
    }
    size_t o = 0;
    if (size < 3) return (void)(size ? buf[0] = '\0' : 0);
    buf[o++] = '\'';
    for (const char *p = dir; *p && o + 5 < size; p++) {
        if (*p == '\'') memcpy(buf + o, "'\\''", 4), o += 4;
        else buf[o++] = *p;
    }
    buf[o++] = '\'';
    buf[o] = '\0';
}

void dse_report_export_cmd(char *buf, size_t size, const char *dir, const char *id) {
    char word[4200];
    shell_word(word, sizeof word, dir);
    snprintf(buf, size, "dse export %s --id %s --out %s.onnx", word, id, id);
}

static void write_md_next(FILE *f, const struct sweep *s, const struct cand *c) {
    char cmd[4400], word[4200];
    dse_report_export_cmd(cmd, sizeof cmd, s->dir, c->id);
    shell_word(word, sizeof word, s->dir);
    fprintf(f, "\n## Next\n\nBest trained candidate: %s (index %" PRId64 ", top-1 %.2f%%, %.2f MB). "
               "Export it to ONNX:\n\n    %s\n\nWith --format caffe (and --out %s) it writes Caffe's "
               "%s.prototxt and %s.caffemodel instead; dse export %s --best --max-mb M takes the most accurate "
               "candidate within M MB.\n",
            c->id, c->index, 100.0 * c->top1, (double)c->model_bytes / 1e6, cmd, c->id, c->id, c->id, word);
}

/* Epochs and seconds spent against full training of every unpruned candidate. */
struct effort {
    int64_t epochs, epochs_full;
    double  seconds, seconds_full;
    int     unpruned, final;
};

static void effort_of(const struct sweep *s, struct effort *e) {
    memset(e, 0, sizeof *e);
    double per_epoch = 0;
    int timed = 0;
    for (int i = 0; i < s->n; i++) {
        const struct cand *c = &s->c[i];
        if (c->status == DSE_REC_PRUNED) continue;
        e->unpruned++;
        e->final += c->status != DSE_REC_PENDING && c->status != DSE_REC_RUNNING;
        e->epochs += c->epochs_done;
        e->seconds += c->train_seconds;
        if (c->epochs_done > 0 && c->train_seconds > 0) {
            e->seconds_full += c->train_seconds / c->epochs_done * s->plan.epochs;
            per_epoch += c->train_seconds / c->epochs_done, timed++;
        }
    }
    e->epochs_full = (int64_t)e->unpruned * s->plan.epochs;
    for (int i = 0; i < s->n && timed; i++) /* candidates not trained yet: the mean epoch time */
        if (s->c[i].status != DSE_REC_PRUNED && !(s->c[i].epochs_done > 0 && s->c[i].train_seconds > 0))
            e->seconds_full += per_epoch / timed * s->plan.epochs;
}

static int write_md_training(FILE *f, const struct sweep *s) {
    char desc[400], a[32], b[32];
    struct effort e;
    effort_of(s, &e);
    dse_plan_describe(&s->plan, desc, sizeof desc);
    dse_fmt_duration(a, sizeof a, e.seconds);
    dse_fmt_duration(b, sizeof b, e.seconds_full);
    fprintf(f, "\n## Training\n\nPlan: %s. %d of %d candidates finished.\n\n", desc, e.final, e.unpruned);
    fprintf(f, "Epochs trained: %" PRId64 "; full training of every candidate: %" PRId64 "", e.epochs, e.epochs_full);
    if (s->plan.halving && e.epochs_full > 0 && e.final == e.unpruned)
        fprintf(f, " (early stopping saved %" PRId64 " epochs, %.0f%%)", e.epochs_full - e.epochs,
                100.0 * (double)(e.epochs_full - e.epochs) / (double)e.epochs_full);
    fprintf(f, ". Training time: %s (summed over candidates); full training: about %s (each candidate's "
               "epoch time x %d).\n", a, b, s->plan.epochs);
    if (!s->plan.halving) return 0;
    struct tbl t = { 0 };
    tbl_head(&t, "rung", 1);
    tbl_head(&t, "epoch", 1);
    tbl_head(&t, "reached", 1);
    tbl_head(&t, "went on", 1);
    tbl_head(&t, "stopped here", 0);
    for (int k = 0; k < s->plan.n_rungs; k++) {
        const struct dse_rung *r = &s->rung[k];
        char buf[64], *ids = NULL;
        size_t len = 0;
        snprintf(buf, sizeof buf, "%d", k);
        tbl_add(&t, buf);
        snprintf(buf, sizeof buf, "%d", s->plan.rungs[k]);
        tbl_add(&t, buf);
        if (!r->decided) {
            tbl_add(&t, "-");
            tbl_add(&t, "-");
            tbl_add(&t, "not decided yet");
            continue;
        }
        snprintf(buf, sizeof buf, "%d", r->n_promoted + r->n_stopped);
        tbl_add(&t, buf);
        snprintf(buf, sizeof buf, "%d", r->n_promoted);
        tbl_add(&t, buf);
        FILE *m = open_memstream(&ids, &len);
        if (!m) {
            t.oom = 1;
            break;
        }
        for (int j = 0; j < r->n_stopped; j++) fprintf(m, "%s%s", j ? ", " : "", r->stopped[j]);
        fclose(m);
        tbl_add(&t, ids && ids[0] ? ids : "-");
        free(ids);
    }
    fputc('\n', f);
    int oom = t.oom;
    if (!oom) tbl_print_md(f, &t);
    tbl_free(&t);
    return oom;
}

static int write_md(FILE *f, const struct sweep *s) {
    char       line[700];
    struct tbl t = { 0 };
    header_line(line, sizeof line, s);
    fprintf(f, "# %s\n\n", line);
    fprintf(f, "Directory: %s. Varied: ", s->dir);
    for (int v = 0; v < s->n_varied; v++) fprintf(f, "%s%s", v ? ", " : "", s->varied[v]);
    fprintf(f, "%s. Sizes: 4 bytes per value, MB = 10^6 bytes, MiB = 2^20 bytes; GFLOP = "
               "forward, one image, 2 per multiply-add.\n\n", s->n_varied ? "" : "none");
    table_human(&t, s, s->by_size, s->n, 1, "★");
    int oom = t.oom;
    if (!oom) tbl_print_md(f, &t);
    tbl_free(&t);
    fprintf(f, "\n## Frontier (%s): %d of %d candidates\n\n", objective(s), s->n_front, s->n);
    memset(&t, 0, sizeof t);
    table_human(&t, s, s->front, s->n_front, 0, "");
    oom |= t.oom;
    if (!oom) tbl_print_md(f, &t);
    tbl_free(&t);
    if (!oom && s->has_plan) oom = write_md_training(f, s);
    const struct cand *best = final_best(s);
    if (!oom && best) write_md_next(f, s, best);
    return oom;
}

static int write_csv(FILE *f, const struct sweep *s) {
    char       b[600];
    struct tbl t = { 0 };
    /* every metaparameter, varied or fixed, so that sweeps' CSVs stack with the same
     * columns: each of mp.def's in its order, then any other key the records hold */
    int n_keys = 0, cap = DSE_MP_COUNT;
    for (int i = 0; i < s->n; i++) cap += s->c[i].metaparams->n;
    const char **keys = malloc(sizeof *keys * (size_t)cap);
    if (!keys) return 1;
    for (int k = 0; k < DSE_MP_COUNT; k++) keys[n_keys++] = dse_mp_info[k].key;
    for (int i = 0; i < s->n; i++)
        for (int k = 0; k < s->c[i].metaparams->n; k++) {
            const char *key = s->c[i].metaparams->members[k].key;
            int seen = dse_mp_find(key) >= 0;
            for (int j = DSE_MP_COUNT; j < n_keys && !seen; j++) seen = !strcmp(keys[j], key);
            if (!seen) keys[n_keys++] = key;
        }
    const struct dse_mp dflt = dse_mp_squeezenet_v10();
    tbl_head(&t, "id", 0);
    tbl_head(&t, "index", 0);
    for (int v = 0; v < n_keys; v++) tbl_head(&t, keys[v], 0);
    static const char *const rest[] = { "params", "model_bytes", "model_mb", "model_mib", "flops",
                                        "train_mem_bytes", "status", "pruned_by", "top1", "top5",
                                        "frontier" };
    for (int k = 0; k < DSE_ARRAY_LEN(rest); k++) tbl_head(&t, rest[k], 0);
    static const char *const trained[] = { "epochs_done", "stopped_rung", "stopped_epoch", "diverged_epoch" };
    for (int k = 0; s->has_plan && k < DSE_ARRAY_LEN(trained); k++) tbl_head(&t, trained[k], 0);
    for (int i = 0; i < s->n; i++) {
        const struct cand *c = s->by_size[i];
        tbl_add(&t, c->id);
        tbl_add(&t, fmt_int(b, sizeof b, c->index, 0));
        for (int v = 0; v < n_keys; v++) {
            const struct dse_json *mv = dse_json_get(c->metaparams, keys[v]);
            const int k = v < DSE_MP_COUNT ? v : -1; /* a key records leave out at its default */
            if (!mv && k >= 0 && dse_mp_info[k].id == DSE_MP_ID_IF_SET)
                tbl_add(&t, fmt_num(b, sizeof b, dse_mp_get(&dflt, (enum dse_mp_key)k).num));
            else
                tbl_add(&t, mv ? fmt_value(b, sizeof b, mv) : "");
        }
        tbl_add(&t, fmt_int(b, sizeof b, c->params, 0));
        tbl_add(&t, fmt_int(b, sizeof b, c->model_bytes, 0));
        tbl_add(&t, fmt_num(b, sizeof b, (double)c->model_bytes / 1e6));
        tbl_add(&t, fmt_num(b, sizeof b, (double)c->model_bytes / MIB));
        tbl_add(&t, fmt_int(b, sizeof b, c->flops, 0));
        tbl_add(&t, c->train_mem_bytes >= 0 ? fmt_int(b, sizeof b, c->train_mem_bytes, 0) : "");
        tbl_add(&t, dse_rec_status_str(c->status));
        tbl_add(&t, c->pruned_by ? c->pruned_by : "");
        tbl_add(&t, c->has_top1 ? fmt_num(b, sizeof b, c->top1) : "");
        tbl_add(&t, c->has_top5 ? fmt_num(b, sizeof b, c->top5) : "");
        tbl_add(&t, c->on_front ? "yes" : "");
        if (s->has_plan) {
            tbl_add(&t, fmt_int(b, sizeof b, c->epochs_done, 0));
            tbl_add(&t, c->stopped_rung >= 0 ? fmt_int(b, sizeof b, c->stopped_rung, 0) : "");
            tbl_add(&t, c->stopped_rung >= 0 ? fmt_int(b, sizeof b, c->stopped_epoch, 0) : "");
            tbl_add(&t, c->diverged_epoch > 0 ? fmt_int(b, sizeof b, c->diverged_epoch, 0) : "");
        }
    }
    int oom = t.oom;
    if (!oom) tbl_print_csv(f, &t);
    tbl_free(&t);
    free(keys);
    return oom;
}

static int write_tex(FILE *f, const struct sweep *s) {
    char       line[700];
    struct tbl t = { 0 };
    header_line(line, sizeof line, s);
    fputs("% dse report: ", f);
    tex_text(f, line);
    fputs("\n% frontier (\\checkmark): ", f);
    fputs(objective(s), f);
    fputs(". Needs \\usepackage{booktabs}.\n", f);
    fputs("\\providecommand{\\checkmark}{\\ensuremath{\\surd}}\n", f);
    table_human(&t, s, s->by_size, s->n, 1, "\\checkmark");
    int oom = t.oom;
    if (!oom) tbl_print_tex(f, &t);
    tbl_free(&t);
    return oom;
}

static int write_json(FILE *f, const struct sweep *s) {
    char b[64];
    fputs("{\"sweep\": ", f);
    json_cstr(f, s->space);
    fputs(", \"dir\": ", f);
    json_cstr(f, s->dir);
    fputs(", \"varied\": [", f);
    for (int v = 0; v < s->n_varied; v++) {
        if (v) fputs(", ", f);
        json_cstr(f, s->varied[v]);
    }
    fprintf(f, "], \"frontier_objective\": \"%s\",\n \"candidates\": [", objective(s));
    for (int i = 0; i < s->n; i++) {
        const struct cand *c = &s->c[i];
        fputs(i ? ",\n  {\"id\": " : "\n  {\"id\": ", f);
        json_cstr(f, c->id);
        fprintf(f, ", \"index\": %" PRId64 ", \"metaparams\": ", c->index);
        json_value(f, c->metaparams);
        fprintf(f, ",\n   \"params\": %" PRId64 ", \"model_bytes\": %" PRId64, c->params, c->model_bytes);
        fprintf(f, ", \"model_mb\": %s", fmt_num(b, sizeof b, (double)c->model_bytes / 1e6));
        fprintf(f, ", \"model_mib\": %s", fmt_num(b, sizeof b, (double)c->model_bytes / MIB));
        fprintf(f, ", \"flops\": %" PRId64 ", \"train_mem_bytes\": ", c->flops);
        if (c->train_mem_bytes >= 0) fprintf(f, "%" PRId64, c->train_mem_bytes);
        else fputs("null", f);
        fprintf(f, ",\n   \"status\": \"%s\", \"pruned_by\": ", dse_rec_status_str(c->status));
        json_cstr(f, c->pruned_by);
        fprintf(f, ", \"top1\": %s", c->has_top1 ? fmt_num(b, sizeof b, c->top1) : "null");
        fprintf(f, ", \"top5\": %s", c->has_top5 ? fmt_num(b, sizeof b, c->top5) : "null");
        fprintf(f, ", \"on_frontier\": %s", c->on_front ? "true" : "false");
        if (s->has_plan) {
            fprintf(f, ",\n   \"epochs_done\": %d, \"stopped_rung\": ", c->epochs_done);
            if (c->stopped_rung >= 0) fprintf(f, "%d, \"stopped_epoch\": %d", c->stopped_rung, c->stopped_epoch);
            else fputs("null, \"stopped_epoch\": null", f);
            fputs(", \"diverged_epoch\": ", f);
            if (c->diverged_epoch > 0) fprintf(f, "%d, \"diverged_iter\": %" PRId64, c->diverged_epoch, c->diverged_iter);
            else fputs("null, \"diverged_iter\": null", f);
            fputs(", \"failed_why\": ", f);
            json_cstr(f, c->failed_why);
            fprintf(f, ", \"train_seconds\": %s", fmt_num(b, sizeof b, c->train_seconds));
        }
        fputc('}', f);
    }
    fputs(s->n ? "\n ],\n \"frontier\": [" : "],\n \"frontier\": [", f);
    for (int k = 0; k < s->n_front; k++) {
        if (k) fputs(", ", f);
        json_cstr(f, s->front[k]->id);
    }
    fputc(']', f);
    if (s->has_plan) {
        struct effort e;
        effort_of(s, &e);
        fprintf(f, ",\n \"training\": {\"epochs\": %d, \"halving\": %s, \"eta\": %d, \"rank\": \"%s\", "
                   "\"finished\": %d, \"unpruned\": %d, \"epochs_trained\": %" PRId64 ", \"epochs_full\": %" PRId64,
                s->plan.epochs, s->plan.halving ? "true" : "false", s->plan.eta,
                s->plan.rank == DSE_SWEEP_RANK_TOP1 ? "top1" : "pareto", e.final, e.unpruned, e.epochs, e.epochs_full);
        fprintf(f, ", \"seconds\": %s", fmt_num(b, sizeof b, e.seconds));
        fprintf(f, ", \"seconds_full_estimate\": %s,\n  \"rungs\": [", fmt_num(b, sizeof b, e.seconds_full));
        for (int k = 0; s->plan.halving && k < s->plan.n_rungs; k++) {
            const struct dse_rung *r = &s->rung[k];
            fprintf(f, "%s{\"rung\": %d, \"epoch\": %d, \"decided\": %s, \"promoted\": [", k ? ", " : "", k,
                    s->plan.rungs[k], r->decided ? "true" : "false");
            for (int j = 0; j < r->n_promoted; j++) fprintf(f, "%s\"%s\"", j ? ", " : "", r->promoted[j]);
            fputs("], \"stopped\": [", f);
            for (int j = 0; j < r->n_stopped; j++) fprintf(f, "%s\"%s\"", j ? ", " : "", r->stopped[j]);
            fputs("]}", f);
        }
        fputs("]}", f);
    }
    const struct cand *best = final_best(s);
    fputs(",\n \"best\": ", f);
    if (best) {
        fputs("{\"id\": ", f);
        json_cstr(f, best->id);
        fprintf(f, ", \"index\": %" PRId64 ", \"top1\": %s, \"export\": ", best->index,
                fmt_num(b, sizeof b, best->top1));
        char cmd[4400];
        dse_report_export_cmd(cmd, sizeof cmd, s->dir, best->id);
        json_cstr(f, cmd);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputs("}\n", f);
    return 0;
}

/* ---- the plot ---------------------------------------------------------------------- */

#define SVG_W 860
#define SVG_H 600

struct axis {
    double lo, hi;          /* domain shown */
    double step;            /* tick spacing: 1, 2 or 5 times a power of 10 */
    int    decimals;        /* for tick labels */
    double p0, p1;          /* pixels for lo and hi */
};

/* Domain = data range plus 5% each side (a single value or equal values get a range
 * around them), ticks at multiples of a 1-2-5 step, about 5 to 10 of them. */
static void axis_fit(struct axis *a, double lo, double hi, double p0, double p1) {
    if (!(lo <= hi) || !isfinite(lo) || !isfinite(hi)) lo = 0.0, hi = 1.0;
    double range = hi - lo;
    if (range <= fabs(hi) * 1e-9 || range == 0.0) {
        double d = fabs(hi) > 0.0 ? fabs(hi) * 0.1 : 1.0;
        lo -= d, hi += d;
    } else {
        lo -= 0.05 * range, hi += 0.05 * range;
    }
    double raw = (hi - lo) / 6.0, mag = pow(10.0, floor(log10(raw))), fr = raw / mag;
    a->step = (fr < 1.5 ? 1.0 : fr < 3.5 ? 2.0 : fr < 7.5 ? 5.0 : 10.0) * mag;
    a->decimals = (int)-floor(log10(a->step) + 1e-9);
    if (a->decimals < 0) a->decimals = 0;
    a->lo = lo, a->hi = hi, a->p0 = p0, a->p1 = p1;
}

static double axis_px(const struct axis *a, double v) {
    return a->p0 + (v - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

static void svg_text(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t') fputc(*s, f);
        }
    }
}

struct pt {
    const struct cand *c;
    double             px, py;
    int                band;    /* drawn in the "not trained" strip */
    char               label[160];
};

struct box { double x0, y0, x1, y1; };

static double overlap(struct box a, struct box b) {
    double w = fmin(a.x1, b.x1) - fmax(a.x0, b.x0), h = fmin(a.y1, b.y1) - fmax(a.y0, b.y0);
    return w > 0 && h > 0 ? w * h : 0.0;
}

/* Cost of covering part of the frontier line: samples every 3 px along each segment. */
static double line_cost(struct box b, const double *fx, const double *fy, int nf) {
    double cost = 0.0;
    for (int k = 0; k + 1 < nf; k++) {
        double len = hypot(fx[k + 1] - fx[k], fy[k + 1] - fy[k]);
        int    steps = (int)(len / 3.0) + 1;
        for (int t = 0; t <= steps; t++) {
            double x = fx[k] + (fx[k + 1] - fx[k]) * t / steps;
            double y = fy[k] + (fy[k + 1] - fy[k]) * t / steps;
            if (x >= b.x0 && x <= b.x1 && y >= b.y0 && y <= b.y1) cost += 8.0;
        }
    }
    return cost;
}

/* Label placement, greedy: frontier points first, then the others in x order, then the
 * "not trained" strip. Each label takes the candidate position that overlaps least with
 * labels already placed, with points, with the frontier line and with the frame edge;
 * ties go to the preferred position, which alternates above/below from point to point.
 * A label in the strip that cannot be placed without overlap is left out (anchor -1):
 * the point's tooltip still names it. fx, fy: the frontier line, nf points. */
static void place_labels(struct pt *p, int n, double fs, struct box frame, const double *fx,
                         const double *fy, int nf, double *lx, double *ly, int *anchor) {
    static const struct { double dx, dy; int anchor; } pos[] = {
        { 8, -7, 0 }, { 8, 15, 0 }, { -8, -7, 2 }, { -8, 15, 2 }, { 0, -11, 1 }, { 0, 21, 1 },
        { 8, -19, 0 }, { 8, 27, 0 }, { -8, -19, 2 }, { -8, 27, 2 },
    };
    struct box *placed = malloc(sizeof *placed * (size_t)(n ? n : 1));
    int        *order = malloc(sizeof *order * (size_t)(n ? n : 1));
    if (!placed || !order) { /* fall back to alternating offsets */
        for (int i = 0; i < n; i++) {
            lx[i] = p[i].px + 8, ly[i] = p[i].py + (i % 2 ? 15 : -7), anchor[i] = 0;
        }
        free(placed), free(order);
        return;
    }
    int m = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < n; i++)
            if ((pass == 0 && p[i].c->on_front) || (pass == 1 && !p[i].c->on_front && !p[i].band)
                || (pass == 2 && p[i].band))
                order[m++] = i;
    int np = 0;
    for (int r = 0; r < m; r++) {
        int        i = order[r];
        double     w = utf8_width(p[i].label) * fs * 0.6, best = INFINITY;
        int        bk = 0;
        struct box bb = { 0, 0, 0, 0 };
        for (int t = 0; t < DSE_ARRAY_LEN(pos); t++) {
            int    k = (r % 2 && t < 2) ? 1 - t : t; /* every other point tries below first */
            double x = p[i].px + pos[k].dx, y = p[i].py + pos[k].dy;
            double x0 = pos[k].anchor == 0 ? x : pos[k].anchor == 1 ? x - w / 2 : x - w;
            struct box b = { x0, y - fs * 0.8, x0 + w, y + fs * 0.25 };
            double cost = 0.0;
            for (int j = 0; j < np; j++) cost += overlap(b, placed[j]);
            for (int j = 0; j < n; j++) {
                struct box c = { p[j].px - 6, p[j].py - 6, p[j].px + 6, p[j].py + 6 };
                cost += 2.0 * overlap(b, c);
            }
            cost += line_cost(b, fx, fy, nf);
            cost += 4.0 * ((b.x1 - b.x0) * (b.y1 - b.y0) - overlap(b, frame));
            cost += 0.01 * t;
            if (cost < best) best = cost, bk = k, bb = b;
        }
        if (p[i].band && best >= 1.0) {
            anchor[i] = -1;
            continue;
        }
        placed[np++] = bb;
        lx[i] = p[i].px + pos[bk].dx;
        ly[i] = p[i].py + pos[bk].dy;
        anchor[i] = pos[bk].anchor;
    }
    free(placed);
    free(order);
}

static void svg_circle(FILE *f, const struct pt *p, const char *style) {
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" %s><title>", p->px, p->py, style);
    svg_text(f, p->c->id);
    fputs(" ", f);
    svg_text(f, p->label);
    fputs("</title></circle>\n", f);
}

/* One row under the title: symbol, then text, left to right (text width estimated at
 * 0.55 em per character, generous for the generic sans-serif faces). */
/* Only the kinds the plot shows get an entry. */
static void write_legend(FILE *f, const struct sweep *s, double x, double y, int plain, int front, int band,
                         int limit) {
    int pruned = 0, stopped = 0;
    for (int i = 0; i < s->n; i++) pruned |= s->c[i].status == DSE_REC_PRUNED, stopped |= s->c[i].status == DSE_REC_STOPPED;
    const char *text[6] = { "candidate", "Pareto frontier", "pruned", "not trained (no top-1)",
                            "stopped early (top-1 at its rung)", "space limit" };
    int         show[6] = { plain, front, pruned, band, stopped, limit };
    static const char *const style[6] = {
        "fill=\"#4c78a8\"",
        "fill=\"#d62728\" stroke=\"#7f1416\"",
        "fill=\"none\" stroke=\"#999\" stroke-width=\"1.5\"",
        "fill=\"#4c78a8\" fill-opacity=\"0.45\" stroke=\"#4c78a8\"",
        "fill=\"white\" stroke=\"#4c78a8\" stroke-width=\"1.8\"",
        NULL,
    };
    fputs("<g font-size=\"12\" fill=\"#333\">\n", f);
    for (int k = 0; k < 6; k++) {
        if (!show[k]) continue;
        double cx = x + 6, cy = y - 4;
        if (k == 1)
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" "
                       "stroke-width=\"2\"/>\n", cx - 8, cy, cx + 8, cy);
        if (k == 5) {
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#8c564b\" "
                       "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                    cx - 8, cy, cx + 8, cy, x + 18, y, text[k]);
            x += 18 + 6.6 * (double)strlen(text[k]) + 22;
            continue;
        }
        /* a circle drawn as a path: <circle> elements are the candidates, one each */
        fprintf(f, "<path d=\"M%.1f %.1fa5 5 0 1 0 10 0a5 5 0 1 0 -10 0z\" %s/>\n", cx - 5, cy,
                style[k]);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 18, y, text[k]);
        x += 18 + 6.6 * (double)strlen(text[k]) + 22;
    }
    fputs("</g>\n", f);
}

/* p, lx, ly, anchor, fx, fy: room for s->n entries each. */
static void write_svg(FILE *f, const struct sweep *s, struct pt *p, double *lx, double *ly,
                      int *anchor, double *fx, double *fy) {
    const double left = 84, right = SVG_W - 30, top = 92, axis_y = SVG_H - 70;
    int          band = 0;
    for (int i = 0; i < s->n; i++) band |= s->trained && !s->c[i].has_top1;
    const double bottom = band ? axis_y - 54 : axis_y; /* of the main area */
    double       xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (int i = 0; i < s->n; i++) {
        const struct cand *c = s->by_size[i];
        double x = (double)c->model_bytes / 1e6; /* MB, as the space's max_model_mb */
        xlo = fmin(xlo, x), xhi = fmax(xhi, x);
        if (!s->trained || c->has_top1) {
            double y = s->trained ? 100.0 * c->top1 : (double)c->flops / 1e9;
            ylo = fmin(ylo, y), yhi = fmax(yhi, y);
        }
    }
    /* a limit near the data is drawn (the axis stretched to it); one far beyond is not */
    const int lim_x = s->limit_mb > 0 && s->limit_mb <= xhi + (xhi - xlo) + 0.5 * xhi;
    const int lim_y = !s->trained && s->limit_gflop > 0 && s->limit_gflop <= yhi + (yhi - ylo) + 0.5 * yhi;
    if (lim_x) xlo = fmin(xlo, s->limit_mb), xhi = fmax(xhi, s->limit_mb);
    if (lim_y) ylo = fmin(ylo, s->limit_gflop), yhi = fmax(yhi, s->limit_gflop);
    struct axis ax, ay;
    axis_fit(&ax, xlo, xhi, left, right);
    axis_fit(&ay, ylo, yhi, bottom, top);
    int small = s->n > 40;
    double fs = small ? 9.0 : 11.0;

    for (int i = 0; i < s->n; i++) {
        const struct cand *c = s->by_size[i];
        char   vb[48];
        int    o = 0;
        p[i].c = c;
        p[i].band = s->trained && !c->has_top1;
        p[i].px = axis_px(&ax, (double)c->model_bytes / 1e6);
        p[i].py = p[i].band ? axis_y - 24
                            : axis_px(&ay, s->trained ? 100.0 * c->top1 : (double)c->flops / 1e9);
        p[i].label[0] = '\0';
        for (int v = 0; v < s->n_varied && o < (int)sizeof p[i].label; v++)
            o += snprintf(p[i].label + o, sizeof p[i].label - (size_t)o, "%s%s=%s", v ? " " : "",
                          s->varied[v],
                          fmt_value(vb, sizeof vb, dse_json_get(c->metaparams, s->varied[v])));
        if (!s->n_varied) snprintf(p[i].label, sizeof p[i].label, "#%" PRId64, c->index);
        utf8_trim(p[i].label);
    }
    /* the frontier line, in x order (s->front is sorted by model size) */
    int nf = 0;
    for (int k = 0; k < s->n_front; k++)
        for (int i = 0; i < s->n; i++)
            if (p[i].c == s->front[k]) fx[nf] = p[i].px, fy[nf++] = p[i].py;
    struct box frame = { left + 2, top + 2, right - 2, axis_y - 2 };
    place_labels(p, s->n, fs, frame, fx, fy, nf, lx, ly, anchor);

    const char *ylabel = s->trained ? "top-1 accuracy (%)" : "forward GFLOP per image";
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
            SVG_W, SVG_H, SVG_W, SVG_H);
    fputs("<title>Sweep ", f);
    svg_text(f, s->space);
    fputs("</title>\n", f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", SVG_W, SVG_H);

    /* title, subtitle, legend */
    fprintf(f, "<text x=\"%.1f\" y=\"26\" font-size=\"17\" font-weight=\"bold\" "
               "text-anchor=\"middle\" fill=\"#222\">Sweep ", SVG_W / 2.0);
    svg_text(f, s->space);
    fprintf(f, ": model size vs %s</text>\n", s->trained ? "top-1 accuracy" : "forward FLOPs");
    char counts[200];
    counts_text(counts, sizeof counts, s);
    fprintf(f, "<text x=\"%.1f\" y=\"46\" font-size=\"12\" text-anchor=\"middle\" fill=\"#555\">"
               "%d candidate%s (%s); frontier (%s): %d point%s</text>\n", SVG_W / 2.0, s->n,
            s->n == 1 ? "" : "s", counts,
            objective(s), s->n_front, s->n_front == 1 ? "" : "s");
    int plain = 0; /* ordinary points: not pruned, not on the frontier */
    for (int i = 0; i < s->n; i++) /* drawn in the plain style: not pruned, stopped, untrained or on the frontier */
        plain |= !p[i].c->on_front && p[i].c->status != DSE_REC_PRUNED && p[i].c->status != DSE_REC_STOPPED && !p[i].band;
    write_legend(f, s, left, 72, plain, nf > 0, band, lim_x || lim_y);

    /* grid, ticks, frame */
    fputs("<g font-size=\"11\" fill=\"#444\">\n", f);
    for (double k = ceil(ax.lo / ax.step - 1e-9); k * ax.step <= ax.hi + 1e-9 * ax.step; k++) {
        double v = k * ax.step, x = axis_px(&ax, v);
        if (fabs(v) < ax.step * 1e-9) v = 0.0;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n",
                x, top, x, axis_y);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
                x, axis_y, x, axis_y + 5);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.*f</text>\n", x,
                axis_y + 18, ax.decimals, v);
    }
    for (double k = ceil(ay.lo / ay.step - 1e-9); k * ay.step <= ay.hi + 1e-9 * ay.step; k++) {
        double v = k * ay.step, y = axis_px(&ay, v);
        if (fabs(v) < ay.step * 1e-9) v = 0.0;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n",
                left, y, right, y);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
                left - 5, y, left, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n", left - 8,
                y + 4, ay.decimals, v);
    }
    fputs("</g>\n", f);
    if (band) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#bbb\" "
                   "stroke-dasharray=\"4 3\"/>\n", left, bottom + 6, right, bottom + 6);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#666\" text-anchor=\"end\">"
                   "no top-1</text>\n", left - 8, axis_y - 20);
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"#444\"/>\n", left, top, right - left, axis_y - top);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" fill=\"#222\">"
               "model size (MB = 10^6 bytes, 4 bytes per parameter)</text>\n", (left + right) / 2, SVG_H - 28);
    fprintf(f, "<text transform=\"translate(22 %.1f) rotate(-90)\" font-size=\"13\" "
               "text-anchor=\"middle\" fill=\"#222\">%s</text>\n", (top + bottom) / 2, ylabel);

    /* the limits, the frontier, then the points, the frontier on top, then the labels */
    const char *dash = "stroke=\"#8c564b\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"";
    if (lim_x) {
        double x = axis_px(&ax, s->limit_mb);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>\n", x, top, x, axis_y, dash);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#8c564b\" text-anchor=\"end\">limit "
                   "%g MB</text>\n", x - 4, top + 14, s->limit_mb);
    }
    if (lim_y) {
        double y = axis_px(&ay, s->limit_gflop);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>\n", left, y, right, y, dash);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#8c564b\" text-anchor=\"end\">limit "
                   "%g GFLOP</text>\n", right - 4, y - 4, s->limit_gflop);
    }
    if (nf > 0) { /* a step: the best value within each size holds until the next point */
        fputs("<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" "
              "stroke-linejoin=\"round\" points=\"", f);
        for (int k = 0; k < nf; k++) {
            if (k) fprintf(f, " %.1f,%.1f", fx[k], fy[k - 1]);
            fprintf(f, "%s%.1f,%.1f", k ? " " : "", fx[k], fy[k]);
        }
        fputs("\"/>\n", f);
    }
    for (int i = 0; i < s->n; i++) {
        if (p[i].c->on_front) continue;
        if (p[i].c->status == DSE_REC_PRUNED)
            svg_circle(f, &p[i], "r=\"5\" fill=\"none\" stroke=\"#999\" stroke-width=\"1.5\"");
        else if (p[i].band)
            svg_circle(f, &p[i], "r=\"5\" fill=\"#4c78a8\" fill-opacity=\"0.45\" stroke=\"#4c78a8\"");
        else if (p[i].c->status == DSE_REC_STOPPED) /* its top-1 is from an earlier epoch */
            svg_circle(f, &p[i], "r=\"5\" fill=\"white\" stroke=\"#4c78a8\" stroke-width=\"1.8\"");
        else
            svg_circle(f, &p[i], "r=\"5\" fill=\"#4c78a8\" stroke=\"white\" stroke-width=\"1\"");
    }
    for (int i = 0; i < s->n; i++)
        if (p[i].c->on_front)
            svg_circle(f, &p[i], "r=\"6\" fill=\"#d62728\" stroke=\"#7f1416\" stroke-width=\"1\"");
    static const char *const anchors[] = { "start", "middle", "end" };
    fprintf(f, "<g font-size=\"%.0f\" fill=\"#333\">\n", fs);
    for (int i = 0; i < s->n; i++) {
        if (anchor[i] < 0) continue;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>", lx[i], ly[i],
                anchors[anchor[i]], p[i].c->on_front ? " font-weight=\"bold\"" : "");
        svg_text(f, p[i].label);
        fputs("</text>\n", f);
    }
    fputs("</g>\n</svg>\n", f);
}

/* What an SVG writer needs: the sweep, and scratch room for s->n points. */
struct svg_job {
    const struct sweep *s;
    struct pt          *p;
    double             *lx, *ly, *fx, *fy;
    int                *anchor;
};

typedef void (*svg_fn)(FILE *f, const struct svg_job *j);

static void plot_svg(FILE *f, const struct svg_job *j) { write_svg(f, j->s, j->p, j->lx, j->ly, j->anchor, j->fx, j->fy); }

/* Written to a temporary file beside path, then renamed over it. */
static enum dse_status write_svg_file(const struct sweep *s, const char *path, svg_fn fn, const char *what,
                                      struct dse_err *err) {
    size_t      n = (size_t)(s->n ? s->n : 1);
    struct svg_job j = { s, calloc(n, sizeof(struct pt)), calloc(n, sizeof(double)), calloc(n, sizeof(double)),
                         calloc(n, sizeof(double)), calloc(n, sizeof(double)), calloc(n, sizeof(int)) };
    size_t      len = strlen(path) + 32;
    char       *tmp = malloc(len);
    enum dse_status st = DSE_OK;
    if (!j.p || !j.lx || !j.ly || !j.anchor || !j.fx || !j.fy || !tmp) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto out;
    }
    snprintf(tmp, len, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "cannot write the %s: %s", what, strerror(errno));
        goto out;
    }
    fn(f, &j);
    int bad_write = ferror(f) != 0;
    bad_write |= fflush(f) != 0;
    bad_write |= fsync(fileno(f)) != 0;
    int e = errno;
    bad_write |= fclose(f) != 0;
    if (!bad_write && rename(tmp, path) != 0) bad_write = 1, e = errno;
    if (bad_write) {
        remove(tmp);
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "cannot write the %s: %s", what, strerror(e));
    }
out:
    free(j.p), free(j.lx), free(j.ly), free(j.anchor), free(j.fx), free(j.fy), free(tmp);
    return st;
}

static enum dse_status write_plot(const struct sweep *s, const char *plot_path, struct dse_err *err) {
    return write_svg_file(s, plot_path, plot_svg, "plot", err);
}

/* ---- learning curves ----------------------------------------------------------------- */

/* Test top-1 after each epoch, one line per trained candidate, in epochs: the
 * frontier's candidates in red and labelled, the others in blue; a candidate stopped by
 * successive halving ends at its rung (a hollow end marker), a diverged one with a
 * cross at the epoch it diverged. */
static void curves_svg(FILE *f, const struct svg_job *j) {
    const struct sweep *s = j->s;
    const double left = 84, right = SVG_W - 170, top = 92, axis_y = SVG_H - 70;
    double emax = 1, ylo = INFINITY, yhi = -INFINITY;
    int lines = 0;
    for (int i = 0; i < s->n; i++) {
        const struct dse_json *pe = s->c[i].per_epoch;
        for (int e = 0; pe && e < pe->n; e++) {
            const struct dse_json *t1 = dse_json_get(&pe->items[e], "top1");
            emax = fmax(emax, (double)dse_json_get(&pe->items[e], "epoch")->integer);
            if (t1 && t1->type == DSE_JSON_NUMBER) ylo = fmin(ylo, 100 * t1->number), yhi = fmax(yhi, 100 * t1->number);
        }
        lines += pe && pe->n > 0;
    }
    if (!(ylo <= yhi)) ylo = 0, yhi = 100;
    struct axis ax, ay;
    axis_fit(&ax, 1, emax, left, right);
    if (emax - 1 < 10) ax.step = 1, ax.decimals = 0; /* whole epochs */
    axis_fit(&ay, ylo, yhi, axis_y, top);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n<title>Learning curves ", SVG_W, SVG_H, SVG_W, SVG_H);
    svg_text(f, s->space);
    fprintf(f, "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", SVG_W, SVG_H);
    fprintf(f, "<text x=\"%.1f\" y=\"26\" font-size=\"17\" font-weight=\"bold\" text-anchor=\"middle\" "
               "fill=\"#222\">Sweep ", SVG_W / 2.0);
    svg_text(f, s->space);
    fprintf(f, ": test top-1 after each epoch</text>\n<text x=\"%.1f\" y=\"46\" font-size=\"12\" "
               "text-anchor=\"middle\" fill=\"#555\">%d trained candidate%s; red: on the Pareto frontier (%s); "
               "hollow end: stopped by successive halving; x: diverged</text>\n", SVG_W / 2.0, lines,
            lines == 1 ? "" : "s", objective(s));
    fputs("<g font-size=\"11\" fill=\"#444\">\n", f);
    for (double k = ceil(ax.lo / ax.step - 1e-9); k * ax.step <= ax.hi + 1e-9 * ax.step; k++) {
        const double v = k * ax.step, x = axis_px(&ax, v);
        if (v < 1 - 1e-9) continue;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n", x, top, x, axis_y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.*f</text>\n", x, axis_y + 18, ax.decimals, v);
    }
    for (double k = ceil(ay.lo / ay.step - 1e-9); k * ay.step <= ay.hi + 1e-9 * ay.step; k++) {
        const double v = k * ay.step, y = axis_px(&ay, v);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n", left, y, right, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n", left - 8, y + 4, ay.decimals, v);
    }
    fputs("</g>\n", f);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n",
            left, top, right - left, axis_y - top);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" fill=\"#222\">epoch</text>\n",
            (left + right) / 2, SVG_H - 28);
    fprintf(f, "<text transform=\"translate(22 %.1f) rotate(-90)\" font-size=\"13\" text-anchor=\"middle\" "
               "fill=\"#222\">test top-1 accuracy (%%)</text>\n", (top + axis_y) / 2);
    /* the others first, the frontier on top */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->n; i++) {
            const struct cand *c = &s->c[i];
            const struct dse_json *pe = c->per_epoch;
            if (!pe || pe->n == 0 || c->on_front != pass) continue;
            const char *color = pass ? "#d62728" : "#4c78a8";
            fprintf(f, "<g><title>%s", c->id);
            for (int v = 0; v < s->n_varied; v++) {
                char vb[48];
                fprintf(f, " %s=", s->varied[v]);
                svg_text(f, fmt_value(vb, sizeof vb, dse_json_get(c->metaparams, s->varied[v])));
            }
            fprintf(f, "</title>\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" stroke-opacity=\"%s\" "
                       "points=\"", color, pass ? "2.2" : "1.4", pass ? "1" : "0.7");
            double lx = 0, ly = 0;
            int any = 0;
            for (int e = 0; e < pe->n; e++) {
                const struct dse_json *t1 = dse_json_get(&pe->items[e], "top1");
                if (!t1 || t1->type != DSE_JSON_NUMBER) continue;
                lx = axis_px(&ax, (double)dse_json_get(&pe->items[e], "epoch")->integer);
                ly = axis_px(&ay, 100 * t1->number);
                fprintf(f, "%s%.1f,%.1f", any++ ? " " : "", lx, ly);
            }
            fputs("\"/>\n", f);
            if (any && c->status == DSE_REC_STOPPED)
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"white\" stroke=\"%s\" stroke-width=\"1.5\"/>\n",
                        lx, ly, color);
            else if (any)
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", lx, ly, color);
            if (c->status == DSE_REC_DIVERGED && c->diverged_epoch > 0) {
                const double x = axis_px(&ax, (double)c->diverged_epoch), y = axis_y - 10;
                fprintf(f, "<path d=\"M%.1f %.1fl8 8m0 -8l-8 8\" stroke=\"#333\" stroke-width=\"1.5\"/>\n", x - 4, y - 4);
            }
            if (pass && any) { /* label the frontier's curves at their right end */
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">", right + 6, ly + 4, color);
                for (int v = 0; v < s->n_varied; v++) {
                    char vb[48];
                    fprintf(f, "%s%s=", v ? " " : "", s->varied[v]);
                    svg_text(f, fmt_value(vb, sizeof vb, dse_json_get(c->metaparams, s->varied[v])));
                }
                fputs("</text>\n", f);
            }
            fputs("</g>\n", f);
        }
    fputs("</svg>\n", f);
}

enum dse_status dse_report_curves(const char *dir, const char *svg_path, struct dse_err *err) {
    struct sweep    s;
    enum dse_status st = sweep_read(&s, dir, err);
    if (!st) st = write_svg_file(&s, svg_path, curves_svg, "learning curves", err);
    sweep_free(&s);
    return st;
}

enum dse_status dse_report_sweep(FILE *f, const char *dir, enum dse_format fmt, const char *plot_path,
                                 struct dse_report_best *best, struct dse_err *err) {
    struct sweep    s;
    enum dse_status st = sweep_read(&s, dir, err);
    best_out(NULL, best);
    if (st) {
        sweep_free(&s);
        return st;
    }
    best_out(final_best(&s), best);
    int oom = 0;
    switch (fmt) {
    case DSE_FORMAT_TABLE:
    case DSE_FORMAT_MD:   oom = write_md(f, &s); break;
    case DSE_FORMAT_CSV:  oom = write_csv(f, &s); break;
    case DSE_FORMAT_TEX:  oom = write_tex(f, &s); break;
    case DSE_FORMAT_JSON: oom = write_json(f, &s); break;
    }
    if (oom) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    else if (ferror(f)) st = dse_err_set(err, DSE_ERR_IO, NULL, 0, "cannot write the report");
    if (!st && plot_path) st = write_plot(&s, plot_path, err);
    sweep_free(&s);
    return st;
}

enum dse_status dse_report_best(const char *dir, double max_mb, struct dse_report_best *out, struct dse_err *err) {
    struct sweep    s;
    enum dse_status st = sweep_read(&s, dir, err);
    best_out(NULL, out);
    if (!st) {
        int done, fit;
        const struct cand *c = best_cand(&s, max_mb, &done, &fit);
        if (!done)
            st = dse_err_set(err, DSE_ERR_CONFIG, dir, 0, "no candidate of this sweep has finished training; "
                             "'dse status %s' shows where it stands", dir);
        else if (!fit)
            st = dse_err_set(err, DSE_ERR_CONFIG, dir, 0, "none of the %d trained candidates is within --max-mb %g; "
                             "'dse report %s' lists their sizes", done, max_mb, dir);
        best_out(c, out);
    }
    sweep_free(&s);
    return st;
}
