/* sweep_read.c: a sweep directory read whole and checked strictly, and the one reader of a
 * candidate record, driven by sweep/record.def (sweep/sweep_read.h). */
#include "sweep/sweep_read.h"

#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
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
    if (v->n > DSE_SWEEP_VARIED_MAX) {
        st = bad(err, path, v->line, "\"varied\" lists %d names; expected at most %d", v->n,
                 DSE_SWEEP_VARIED_MAX);
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

/* ---- a record's keys (sweep/record.def), by kind ---------------------------------------- */

/* The file name's stem (path's last part without ".json"). */
static enum dse_status read_ID(const char *path, const struct dse_json *root, const char *key, struct dse_rec *r,
                               char (*out)[DSE_ID_SIZE], const char *absent, int64_t lo, int64_t hi,
                               struct dse_err *err) {
    const struct dse_json *v;
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    enum dse_status st = get(path, root, key, WANT_STR, 0, &v, err);
    if (st) return st;
    size_t stem = strlen(name) - 5; /* without ".json" */
    if (strlen(v->str) != stem || strncmp(v->str, name, stem) != 0)
        return bad(err, path, v->line, "\"%s\" = \"%.64s\" does not match the file name; expected \"%.*s\"", key,
                   v->str, (int)(stem < 64 ? stem : 64), name);
    if (stem >= sizeof *out)
        return bad(err, path, v->line, "\"%s\" = \"%.64s\" is too long; expected \"c\" and 16 hex digits (and \"r\" "
                   "and a replicate number for a replicate)", key, v->str);
    dse_strlcpy(*out, v->str, sizeof *out);
    return DSE_OK;
}

/* A required integer >= 0. */
static enum dse_status read_COUNT(const char *path, const struct dse_json *root, const char *key, struct dse_rec *r,
                                  int64_t *out, int64_t absent, int64_t lo, int64_t hi, struct dse_err *err) {
    return get_count(path, root, key, out, err);
}
#define read_INDEX read_COUNT

/* An integer >= 0; absent or null gives absent. */
static enum dse_status read_MEM(const char *path, const struct dse_json *root, const char *key, struct dse_rec *r,
                                int64_t *out, int64_t absent, int64_t lo, int64_t hi, struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status st = get(path, root, key, WANT_INT, 1, &v, err);
    if (st) return st;
    if (v && v->integer < 0)
        return bad(err, path, v->line, "\"%s\" = %" PRId64 " is negative; expected an integer >= 0 or null", key,
                   v->integer);
    *out = v ? v->integer : absent;
    return DSE_OK;
}

/* An integer in [lo, hi]; absent or null gives absent. */
static enum dse_status read_REPLICATE(const char *path, const struct dse_json *root, const char *key,
                                      struct dse_rec *r, int *out, int absent, int64_t lo, int64_t hi,
                                      struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status st = get(path, root, key, WANT_INT, 1, &v, err);
    if (st) return st;
    if (v && (v->integer < lo || v->integer > hi))
        return bad(err, path, v->line, "\"%s\" = %" PRId64 " is out of range; expected %" PRId64 " to %" PRId64, key,
                   v->integer, lo, hi);
    *out = v ? (int)v->integer : absent;
    return DSE_OK;
}

/* A required object; the record keeps no copy (the report's dse_cand.metaparams does). */
static enum dse_status read_METAPARAMS(const char *path, const struct dse_json *root, const char *key,
                                       struct dse_rec *r, const char **out, const char *absent, int64_t lo,
                                       int64_t hi, struct dse_err *err) {
    const struct dse_json *v;
    return get(path, root, key, WANT_OBJ, 0, &v, err);
}

/* Not read: model_mb and model_mib follow from model_bytes; train_mem_batch is only shown. */
static enum dse_status read_unread(void) { return DSE_OK; }
#define read_MB(path, root, key, r, out, absent, lo, hi, err)    read_unread()
#define read_MIB(path, root, key, r, out, absent, lo, hi, err)   read_unread()
#define read_BATCH(path, root, key, r, out, absent, lo, hi, err) read_unread()

/* An integer key: absent or null gives absent; else within [lo, hi]. */
static enum dse_status get_rec_int(const char *path, const struct dse_json *root, const char *key, int64_t absent,
                                   int64_t lo, int64_t hi, int64_t *out, struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status st = get(path, root, key, WANT_INT, 1, &v, err);
    if (st) return st;
    *out = v ? v->integer : absent;
    if (*out < lo || *out > hi)
        return bad(err, path, v->line, "\"%s\" = %" PRId64 " is out of range; expected %" PRId64 " to %" PRId64
                   " or null", key, *out, lo, hi);
    return DSE_OK;
}

/* The integer kinds, INT, INT64 and UINT64: get_rec_int's value as the kind's C type. */
#define DSE_REC_READ_INTEGER(kind, type)                                                                        \
    static enum dse_status read_##kind(const char *path, const struct dse_json *root, const char *key,          \
                                       struct dse_rec *r, type *out, int64_t absent, int64_t lo, int64_t hi,    \
                                       struct dse_err *err) {                                                   \
        int64_t x = absent;                                                                                     \
        enum dse_status st = get_rec_int(path, root, key, absent, lo, hi, &x, err);                             \
        *out = (type)x;                                                                                         \
        return st;                                                                                              \
    }
DSE_REC_READ_INTEGER(INT, int)
DSE_REC_READ_INTEGER(INT64, int64_t)
DSE_REC_READ_INTEGER(UINT64, uint64_t)
#undef DSE_REC_READ_INTEGER

/* A number (FLOAT, FIXED3, FIXED1): absent or null gives absent; else within [lo, hi]. */
static enum dse_status read_num(const char *path, const struct dse_json *root, const char *key, struct dse_rec *r,
                                double *out, double absent, double lo, double hi, struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status st = get(path, root, key, WANT_NUM, 1, &v, err);
    *out = absent;
    if (st || !v) return st;
    if (!(v->number >= lo && v->number <= hi))
        return bad(err, path, v->line, "\"%s\" = %.40s is out of range; expected a number in [%g, %g] or null", key,
                   v->str, lo, hi);
    *out = v->number;
    return DSE_OK;
}
#define read_FLOAT  read_num
#define read_FIXED3 read_num
#define read_FIXED1 read_num

/* A string of lo to hi bytes into out[hi + 1]; absent or null gives absent. */
static enum dse_status read_STR(const char *path, const struct dse_json *root, const char *key, struct dse_rec *r,
                                char (*out)[], const char *absent, int64_t lo, int64_t hi, struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status st = get(path, root, key, WANT_STR, 1, &v, err);
    dse_strlcpy(*out, absent, (int)hi + 1);
    if (st || !v) return st;
    if ((int64_t)v->len < lo || (int64_t)v->len > hi)
        return bad(err, path, v->line, "\"%s\" is %zu bytes long; expected %" PRId64 " to %" PRId64, key, v->len,
                   lo, hi);
    dse_strlcpy(*out, v->str, (int)hi + 1);
    return DSE_OK;
}

static enum dse_status read_STATUS(const char *path, const struct dse_json *root, const char *key, struct dse_rec *r,
                                   enum dse_rec_status *out, int absent, int64_t lo, int64_t hi,
                                   struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status st = get(path, root, key, WANT_STR, 0, &v, err);
    if (st) return st;
    int k = dse_rec_status_from_str(v->str);
    if (k < 0) {
        char known[160]; /* "pending, pruned, ... or stopped", from the one table */
        int o = 0;
        for (int j = 0; j < DSE_REC_COUNT && o < (int)sizeof known; j++)
            o += snprintf(known + o, sizeof known - (size_t)o, "%s%s", j ? (j == DSE_REC_COUNT - 1 ? " or " : ", ") : "",
                          dse_rec_status_str((enum dse_rec_status)j));
        return bad(err, path, v->line, "\"%s\" = \"%.64s\" is not a known status; expected %s", key, v->str, known);
    }
    *out = (enum dse_rec_status)k;
    return DSE_OK;
}

/* One value of a per_epoch entry: absent, null, a number, or for a count an integer >= 0. */
static enum dse_status epoch_value(const char *path, int e, const struct dse_json *v, const char *key, int count,
                                   struct dse_err *err) {
    if (!v || v->type == DSE_JSON_NULL) return DSE_OK;
    if (v->type != DSE_JSON_NUMBER || (count && (!v->is_int || v->integer < 0)))
        return bad(err, path, v->line, "\"per_epoch\"[%d].\"%s\" is %s; expected %s or null", e, key,
                   v->type == DSE_JSON_NUMBER ? "not a whole number >= 0" : a_type(v->type),
                   count ? "an integer >= 0" : "a number");
    return DSE_OK;
}

/* [{"epoch": 1, <engine/epoch.def's keys>}, {"epoch": 2, ...}, ...]: at most hi entries, in order. */
static enum dse_status read_EPOCHS(const char *path, const struct dse_json *root, const char *key, struct dse_rec *r,
                                   struct dse_epoch_result **out, int absent, int64_t lo, int64_t hi,
                                   struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status st = get(path, root, key, WANT_ARR, 1, &v, err);
    r->n_epochs = 0;
    if (st || !v) return st;
    if (v->n > hi)
        return bad(err, path, v->line, "\"%s\" holds %d entries; expected at most %" PRId64 " (one per epoch)", key,
                   v->n, hi);
    for (int e = 0; e < v->n; e++) {
        const struct dse_json *it = &v->items[e], *ep = dse_json_get(it, "epoch"), *t1 = dse_json_get(it, "top1");
        if (it->type != DSE_JSON_OBJECT || !ep || ep->type != DSE_JSON_NUMBER || !ep->is_int || ep->integer < 1 ||
            (t1 && t1->type != DSE_JSON_NULL && (t1->type != DSE_JSON_NUMBER || t1->number < 0 || t1->number > 1)))
            return bad(err, path, it->line, "\"%s\"[%d] is not {\"epoch\": k >= 1, \"top1\": a number in [0, 1] "
                       "or null, ...} (docs/sweep-dir.md)", key, e);
        if (ep->integer != e + 1)
            return bad(err, path, ep->line, "\"%s\"[%d] is epoch %" PRId64 "; expected epoch %d (one entry per "
                       "epoch, in order)", key, e, ep->integer, e + 1);
        /* every key of engine/epoch.def: a number (a count: an integer >= 0) or null */
#define DSE_EPOCH(key, field, kind, unknown)                                                                  \
        if ((st = epoch_value(path, e, dse_json_get(it, key), key, !strcmp(#kind, "COUNT"), err))) return st;
#include "engine/epoch.def"
#undef DSE_EPOCH
        const struct dse_epoch_result res = dse_rec_epoch_read(it);
        if ((st = dse_rec_set_epoch(r, e, &res, err))) return st;
    }
    return DSE_OK;
}

/* Not checked: any array, or nothing (sweep_rec.c reads what it can). */
static enum dse_status read_ATTEMPTS(const char *path, const struct dse_json *root, const char *key,
                                     struct dse_rec *r, struct dse_rec_attempt **out, int absent, int64_t lo,
                                     int64_t hi, struct dse_err *err) {
    return dse_rec_attempts_read(r, dse_json_get(root, key), err);
}

/* ---- a candidate record ------------------------------------------------------------------- */

/* The checks of a candidate file parsed into root (path: its path), filling r (empty:
 * dse_rec_init) and, for the report, c (or NULL). Every key of sweep/record.def, in its order. */
static enum dse_status check_candidate(const char *path, const struct dse_json *root, struct dse_rec *r,
                                       struct dse_cand *c, struct dse_err *err) {
    enum dse_status st;
    if (root->type != DSE_JSON_OBJECT)
        return bad(err, path, root->line, "the file holds %s; expected an object "
                   "(docs/sweep-dir.md)", a_type(root->type));
#define DSE_REC(key, field, kind, absent, lo, hi, line, when, file, reports) \
    if ((st = read_##kind(path, root, key, r, &r->field, absent, lo, hi, err))) return st;
#include "sweep/record.def"
#undef DSE_REC
    if (c) c->metaparams = dse_json_get(root, "metaparams");
    return DSE_OK;
}

enum dse_status dse_rec_from_json(const char *path, const struct dse_json *root, struct dse_rec *r,
                                  struct dse_err *err) {
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    size_t n = strlen(name);
    dse_rec_deinit(r);
    if (n < 6 || strcmp(name + n - 5, ".json"))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: a candidate file's name is <id>.json", path);
    return check_candidate(path, root, r, NULL, err);
}

/* One candidate file of the directory: parsed into c->doc, then checked. */
static enum dse_status read_candidate(struct dse_cand *c, struct dse_err *err) {
    dse_rec_init(&c->rec);
    enum dse_status st = fold_path(err, dse_json_load(c->path, &c->doc, err));
    return st ? st : check_candidate(c->path, dse_json_root(c->doc), &c->rec, c, err);
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
    double t1[DSE_TRAIN_REPLICATES_MAX] = { 0 }, t5[DSE_TRAIN_REPLICATES_MAX] = { 0 }, std5;
    int running = 0, pending = 0, n5;
    DSE_ASSERT(n >= 1 && n <= DSE_TRAIN_REPLICATES_MAX);
    for (int i = 0; i < n; i++) {
        const struct dse_rec *r = reps[i];
        const int ok = r->status == DSE_REC_DONE && !isnan(r->top1);
        t1[i] = ok ? r->top1 : NAN;
        t5[i] = ok ? r->top5 : NAN;
        running |= r->status == DSE_REC_RUNNING, pending |= r->status == DSE_REC_PENDING;
    }
    dse_sweep_mean_std(t1, n, n_top1, &g.top1, top1_std);
    dse_sweep_mean_std(t5, n, &n5, &g.top5, &std5);
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
        x[i] = dse_sweep_ranked(s, c) ? (double)c->rec.model_bytes : NAN;
        y[i] = s->trained ? c->rec.top1 : (double)c->rec.flops;
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
            return bad(err, s->c[i].path, v->line, "\"index\" = %" PRId64 " is also the index of "
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
        const struct dse_rec **recs = malloc(sizeof *recs * (size_t)(s->n ? s->n : 1));
        if (!recs) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < s->n; i++) recs[i] = &s->c[i].rec;
        st = dse_rungs_load(dir, &s->plan, recs, s->n, s->rung, err);
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

/* ---- the workers', dse status's and dse export's reader of one record (sweep_impl.h) ---- */

enum dse_status dse_rec_read_path(const char *path, struct dse_rec *r, struct dse_err *err) {
    struct dse_json_doc *doc = NULL;
    struct dse_err e = { 0 };
    dse_rec_deinit(r);
    enum dse_status st = dse_json_load(path, &doc, &e);
    if (st) {
        if (e.line) return dse_err_set(err, st, NULL, 0, "%s:%d: %s", path, e.line, e.msg);
        return dse_err_set(err, st, NULL, 0, "%s: %s", path, e.msg);
    }
    /* The one strict reader (sweep/sweep_read.c), so every door (workers, status, export)
     * accepts exactly the files dse report does. */
    st = dse_rec_from_json(path, dse_json_root(doc), r, err);
    if (r->status == DSE_REC_RUNNING) r->status = DSE_REC_PENDING; /* never written by dse; read as not final */
    dse_json_free(doc);
    return st;
}

enum dse_status dse_rec_read(const char *dir, const char *id, struct dse_rec *r, struct dse_err *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s/candidates/%s.json", dir, id);
    enum dse_status st = dse_rec_read_path(path, r, err);
    if (!st && strcmp(r->id, id) != 0)
        st = dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: \"id\" = \"%s\" does not match the file name", path, r->id);
    return st;
}
