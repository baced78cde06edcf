/* space.c: design-space files (docs/space-format.md). Each metaparameter is a value,
 * a list [a, b, c] or a range { start; stop; step | factor; }; every value is checked
 * by dse_mp_check where it is read, so errors name the line of the setting at fault. */
#include "sweep/space.h"
#include "netfile/netfile.h"
#include "sweep/objective.h"

#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/pcg32.h"
#include "data/data.h"
#include "engine/train.h"
#include "base/fs.h"

/* The metaparameters and their types, ranges and space-file sections: metaparams/mp.def. */
#define INFO(k) (&dse_mp_info[k])

const char *dse_axis_name(enum dse_axis_key k) {
    return (unsigned)k < DSE_AX_COUNT ? INFO(k)->key : "?";
}

struct ctx {
    const char     *path;
    struct dse_err *err;
};

__attribute__((format(printf, 3, 4)))
static enum dse_status fail(struct ctx *cx, const config_setting_t *s, const char *fmt, ...) {
    char msg[sizeof cx->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return dse_err_set(cx->err, DSE_ERR_CONFIG, cx->path, s ? (int)config_setting_source_line(s) : 0,
                       "%s", msg);
}

/* Reject settings of group g not in the space-separated list allowed, suggesting the
 * nearest allowed name. */
static enum dse_status check_keys(struct ctx *cx, const config_setting_t *g, const char *where,
                                  const char *allowed) {
    if (!config_setting_is_group(g))
        return fail(cx, g, "%s must be a group { key = value; ... }", where);
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        const char *key = config_setting_name(s);
        char sug[64];
        if (!key) return fail(cx, s, "%s must be a group { key = value; ... }", where);
        if (dse_word_index(allowed, key) >= 0) continue;
        if (dse_word_suggest(allowed, key, sug, sizeof sug))
            return fail(cx, s, "unknown setting '%s' in %s (did you mean '%s'?)", key, where, sug);
        return fail(cx, s, "unknown setting '%s' in %s; allowed: %s", key, where, allowed);
    }
    return DSE_OK;
}

static int is_number(const config_setting_t *s) {
    int t = config_setting_type(s);
    return t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64 || t == CONFIG_TYPE_FLOAT;
}

static double number(const config_setting_t *s) {
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:   return config_setting_get_int(s);
    case CONFIG_TYPE_INT64: return (double)config_setting_get_int64(s);
    default:                return config_setting_get_float(s);
    }
}

/* Check one value of axis k by substituting it into SqueezeNet v1.0's metaparameters. */
static enum dse_status check_value(struct ctx *cx, const config_setting_t *s, enum dse_axis_key k,
                                   double v, uint64_t mask) {
    /* SqueezeNet v1.0's values, but one Fire module, no increments and no pools, so that
     * only this key's own range is checked here; checks across keys (the pools against
     * fires, the last module's width) happen per candidate. */
    struct dse_mp mp = dse_mp_squeezenet_v10();
    mp.fires = 1, mp.incr_e = 0, mp.pools = 0;
    if (!isfinite(v)) return fail(cx, s, "%s = %g is not a finite number", INFO(k)->key, v);
    const char *key;
    struct dse_err e = { 0 };
    if (INFO(k)->type == DSE_MP_TYPE_INT && (v != floor(v) || fabs(v) > DSE_DIM_MAX))
        return fail(cx, s, "%s = %g must be an integer of at most %d", INFO(k)->key, v, DSE_DIM_MAX);
    dse_mp_set(&mp, (enum dse_mp_key)k, (struct dse_mp_value){ .num = v, .mask = mask });
    if (INFO(k)->type == DSE_MP_TYPE_POOLS) mp.fires = DSE_MP_MAX_FIRES;
    if (dse_mp_check(&mp, &key, &e) && key && !strcmp(key, INFO(k)->key))
        return fail(cx, s, "%s", e.msg);
    return DSE_OK;
}

/* Every pools value against every fires value, by dse_mp_check's own rule (positions conv1,
 * fire2 .. fire<fires+1>): the one cross-key check made when the space is read, so that
 * count, generate and sweep refuse the same spaces, at the line of pools (or of fires,
 * where pools keeps its default). */
static enum dse_status check_pools(struct ctx *cx, const struct dse_space *s) {
    const struct dse_axis *p = &s->axes[DSE_AX_POOLS], *f = &s->axes[DSE_AX_FIRES];
    for (int i = 0; i < p->n; i++)
        for (int j = 0; j < f->n; j++) {
            struct dse_mp mp = dse_mp_squeezenet_v10();
            mp.incr_e = 0, mp.fires = (int)f->values[j], mp.pools = p->masks[i];
            const char *key = NULL;
            struct dse_err e = { 0 };
            if (!dse_mp_check(&mp, &key, &e) || !key || strcmp(key, INFO(DSE_AX_POOLS)->key)) continue;
            const int line = p->line ? p->line : f->line;
            if (f->n == 1) return dse_err_set(cx->err, DSE_ERR_CONFIG, cx->path, line, "%s", e.msg);
            return dse_err_set(cx->err, DSE_ERR_CONFIG, cx->path, line, "%s, with fires = %d", e.msg, mp.fires);
        }
    return DSE_OK;
}

static enum dse_status push(struct ctx *cx, const config_setting_t *s, struct dse_axis *ax,
                            double v, uint64_t mask, int is_pools) {
    if (ax->n >= DSE_AXIS_MAX_VALUES)
        return fail(cx, s, "more than %d values; narrow the range or use a larger step",
                    DSE_AXIS_MAX_VALUES);
    if ((ax->n & (ax->n - 1)) == 0) { /* grow at powers of two */
        int cap = ax->n ? 2 * ax->n : 1;
        double *nv = realloc(ax->values, sizeof *nv * (size_t)cap);
        if (!nv) return dse_err_set(cx->err, DSE_ERR_NOMEM, cx->path, 0, "out of memory");
        ax->values = nv;
        if (is_pools) {
            uint64_t *nm = realloc(ax->masks, sizeof *nm * (size_t)cap);
            if (!nm) return dse_err_set(cx->err, DSE_ERR_NOMEM, cx->path, 0, "out of memory");
            ax->masks = nm;
        }
    }
    if (is_pools) {
        ax->masks[ax->n] = mask;
        v = ax->n;
    }
    ax->values[ax->n++] = v;
    return DSE_OK;
}

/* One scalar of axis k: a number, a bypass name or a pools value. */
static enum dse_status scalar(struct ctx *cx, const config_setting_t *s, enum dse_axis_key k,
                              struct dse_axis *ax) {
    enum dse_mp_type kind = INFO(k)->type;
    const char *name = INFO(k)->key;
    if (kind == DSE_MP_TYPE_BYPASS) {
        const char *v = config_setting_type(s) == CONFIG_TYPE_STRING ? config_setting_get_string(s) : "";
        for (int b = DSE_BYPASS_NONE; b <= DSE_BYPASS_COMPLEX; b++)
            if (!strcmp(v, dse_bypass_str((enum dse_bypass)b))) return push(cx, s, ax, b, 0, 0);
        return fail(cx, s, "bypass = \"%s\"; expected \"none\", \"simple\" or \"complex\" (or a list of them)", v);
    }
    if (kind == DSE_MP_TYPE_POOLS) { /* ["conv1", "fire4"] or "conv1,fire4,fire8" or "none" */
        char buf[512] = "";
        int n = 0;
        if (config_setting_type(s) == CONFIG_TYPE_STRING) {
            const char *v = config_setting_get_string(s);
            n = snprintf(buf, sizeof buf, "%s", strcmp(v, "none") ? v : "");
        } else if (config_setting_type(s) == CONFIG_TYPE_ARRAY) {
            for (int i = 0; i < config_setting_length(s); i++) {
                const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
                if (config_setting_type(e) != CONFIG_TYPE_STRING)
                    return fail(cx, s, "pools lists positions as strings, e.g. [\"conv1\", \"fire4\", \"fire8\"]");
                n += snprintf(buf + n, sizeof buf - (size_t)(n < (int)sizeof buf ? n : (int)sizeof buf - 1),
                              "%s%s", i ? "," : "", config_setting_get_string(e));
                if (n >= (int)sizeof buf) return fail(cx, s, "pools lists too many positions");
            }
        } else {
            return fail(cx, s, "pools must be a list of positions such as [\"conv1\", \"fire4\", \"fire8\"], "
                               "or a list of such lists");
        }
        uint64_t mask;
        if (dse_mp_pools_parse(buf, &mask))
            return fail(cx, s, "pools = \"%s\": positions are \"conv1\" and \"fire<k>\" (k = 2 .. fires + 1)", buf);
        enum dse_status st = check_value(cx, s, k, 0, mask);
        return st ? st : push(cx, s, ax, 0, mask, 1);
    }
    if (!is_number(s))
        return fail(cx, s, "%s must be a number, a list [a, b, ...] or a range { start = ...; stop = ...; step = ...; }", name);
    double v = number(s);
    enum dse_status st = check_value(cx, s, k, v, 0);
    return st ? st : push(cx, s, ax, v, 0, 0);
}

/* { start; stop; step } (arithmetic, stop included) or { start; stop; factor } (geometric). */
static enum dse_status range(struct ctx *cx, const config_setting_t *g, enum dse_axis_key k,
                             struct dse_axis *ax) {
    enum dse_status st;
    const char *name = INFO(k)->key;
    if ((st = check_keys(cx, g, "a range", "start stop step factor"))) return st;
    const config_setting_t *a = config_setting_get_member(g, "start");
    const config_setting_t *b = config_setting_get_member(g, "stop");
    const config_setting_t *step = config_setting_get_member(g, "step");
    const config_setting_t *fac = config_setting_get_member(g, "factor");
    if (INFO(k)->type == DSE_MP_TYPE_BYPASS || INFO(k)->type == DSE_MP_TYPE_POOLS)
        return fail(cx, g, "%s takes a value or a list, not a range", name);
    if (!a || !b || !is_number(a) || !is_number(b) || (!step == !fac) ||
        (step && !is_number(step)) || (fac && !is_number(fac)))
        return fail(cx, g, "a range needs numbers start, stop and one of step (arithmetic) or factor "
                           "(geometric), e.g. %s = { start = 0.125; stop = 1.0; step = 0.125; }", name);
    double x0 = number(a), x1 = number(b);
    if (!isfinite(x0) || !isfinite(x1) || (step && !isfinite(number(step))) || (fac && !isfinite(number(fac))))
        return fail(cx, g, "range of %s: start, stop, step and factor must be finite numbers", name);
    if (x1 < x0) return fail(cx, g, "range of %s: stop = %g is below start = %g", name, x1, x0);
    if (step) {
        double d = number(step);
        if (!(d > 0)) return fail(cx, step, "range of %s: step = %g must be > 0", name, d);
        double n = floor((x1 - x0) / d + 1e-9) + 1;
        if (n > DSE_AXIS_MAX_VALUES)
            return fail(cx, g, "range of %s has %.0f values; at most %d", name, n, DSE_AXIS_MAX_VALUES);
        for (int i = 0; i < (int)n; i++) {
            double v = x0 + i * d; /* x0 + i*d, not repeated adds: 0.1 steps stay exact-ish */
            if (INFO(k)->type == DSE_MP_TYPE_REAL) v = round(v * 1e12) / 1e12;
            if ((st = check_value(cx, g, k, v, 0)) || (st = push(cx, g, ax, v, 0, 0))) return st;
        }
    } else {
        double f = number(fac);
        if (!(f > 1)) return fail(cx, fac, "range of %s: factor = %g must be > 1", name, f);
        if (!(x0 > 0)) return fail(cx, a, "geometric range of %s: start = %g must be > 0", name, x0);
        for (double v = x0; v <= x1 * (1 + 1e-12); v *= f) {
            double w = INFO(k)->type == DSE_MP_TYPE_INT ? floor(v + 0.5) : round(v * 1e12) / 1e12;
            if ((st = check_value(cx, g, k, w, 0)) || (st = push(cx, g, ax, w, 0, 0))) return st;
        }
    }
    return DSE_OK;
}

/* A value twice on an axis would be the same candidate twice (listed twice, or two
 * range values that round to one). O(n log n): ranges may hold many values. */
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_u64v(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static enum dse_status check_distinct(struct ctx *cx, const config_setting_t *s, enum dse_axis_key k,
                                      const struct dse_axis *ax) {
    int pools = INFO(k)->type == DSE_MP_TYPE_POOLS;
    size_t n = (size_t)ax->n, sz = pools ? sizeof(uint64_t) : sizeof(double);
    void *v = malloc(sz * (n ? n : 1));
    if (!v) return dse_err_set(cx->err, DSE_ERR_NOMEM, cx->path, 0, "out of memory");
    memcpy(v, pools ? (void *)ax->masks : (void *)ax->values, sz * n);
    qsort(v, n, sz, pools ? cmp_u64v : cmp_double);
    int dup = -1;
    for (size_t i = 1; i < n && dup < 0; i++)
        if (pools ? ((uint64_t *)v)[i] == ((uint64_t *)v)[i - 1] : ((double *)v)[i] == ((double *)v)[i - 1])
            dup = (int)i;
    double dv = dup >= 0 && !pools ? ((double *)v)[dup] : 0;
    free(v);
    if (dup < 0) return DSE_OK;
    if (pools) return fail(cx, s, "pools lists the same set of positions twice");
    return fail(cx, s, "%s holds the value %g twice (listed twice, or range values that round to one)",
                INFO(k)->key, dv);
}

static enum dse_status read_axis(struct ctx *cx, const config_setting_t *s, enum dse_axis_key k,
                                 struct dse_axis *ax) {
    enum dse_status st;
    ax->n = 0;
    ax->line = (int)config_setting_source_line(s);
    int t = config_setting_type(s);
    if (t == CONFIG_TYPE_GROUP) {
        st = range(cx, s, k, ax);
    } else if (t == CONFIG_TYPE_LIST || (t == CONFIG_TYPE_ARRAY && INFO(k)->type != DSE_MP_TYPE_POOLS)) {
        /* A list, or an array of scalars (except pools, where an array is one value). */
        if (config_setting_length(s) == 0) return fail(cx, s, "%s lists no values", INFO(k)->key);
        st = DSE_OK;
        for (int i = 0; i < config_setting_length(s) && !st; i++)
            st = scalar(cx, config_setting_get_elem(s, (unsigned)i), k, ax);
    } else {
        st = scalar(cx, s, k, ax);
    }
    return st ? st : check_distinct(cx, s, k, ax);
}

static void set_default(struct dse_axis *ax, enum dse_axis_key k) {
    struct dse_mp mp = dse_mp_squeezenet_v10();
    struct dse_mp_value v = dse_mp_get(&mp, (enum dse_mp_key)k);
    ax->n = 1;
    ax->line = 0;
    ax->values = malloc(sizeof *ax->values);
    if (ax->values) ax->values[0] = v.num; /* pools: index 0 into masks */
    if (INFO(k)->type == DSE_MP_TYPE_POOLS) {
        ax->masks = malloc(sizeof *ax->masks);
        if (ax->masks) ax->masks[0] = v.mask;
    }
}

static enum dse_status get_num(struct ctx *cx, const config_setting_t *g, const char *key,
                               double lo, double hi, int integer, double *out, int *line) {
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s) return DSE_OK;
    if (!is_number(s) || (integer && config_setting_type(s) == CONFIG_TYPE_FLOAT))
        return fail(cx, s, "%s must be %s", key, integer ? "an integer" : "a number");
    double v = number(s); /* an integer libconfig would wrap was refused by dse_cfgfile_read */
    char vb[40], lb[40], hb[40]; /* shortest forms: 2147483647, not 2.14748e+09 */
    if (!(v >= lo && v <= hi))
        return fail(cx, s, "%s = %s is out of range; expected %s to %s", key, dse_fmt_shortest(vb, sizeof vb, v, 0),
                    dse_fmt_shortest(lb, sizeof lb, lo, 0), dse_fmt_shortest(hb, sizeof hb, hi, 0));
    *out = v;
    if (line) *line = (int)config_setting_source_line(s);
    return DSE_OK;
}

static enum dse_status get_str(struct ctx *cx, const config_setting_t *g, const char *key,
                               const char *allowed, char *out, int size) {
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s) return DSE_OK;
    const char *v = config_setting_type(s) == CONFIG_TYPE_STRING ? config_setting_get_string(s) : NULL;
    int ok = v != NULL;
    if (ok && allowed) {
        ok = 0;
        for (const char *p = allowed; *p; p += strcspn(p, " "), p += *p == ' ')
            if (strlen(v) == strcspn(p, " ") && !strncmp(p, v, strlen(v))) ok = 1;
    }
    if (!ok) return fail(cx, s, "%s = %s%s%s; expected one of: %s", key, v ? "\"" : "", v ? v : "(not a string)",
                         v ? "\"" : "", allowed ? allowed : "a string");
    dse_strlcpy(out, v, size);
    return DSE_OK;
}

/* A word of the space-separated words as its index (dse_word_index) into *out; -1 when key
 * is absent. The errors are get_str's. */
static enum dse_status get_word(struct ctx *cx, const config_setting_t *g, const char *key, const char *words,
                                int *out) {
    char v[64] = "";
    enum dse_status st = get_str(cx, g, key, words, v, sizeof v);
    *out = !st && v[0] ? dse_word_index(words, v) : -1;
    return st;
}

/* 1 if path is a sweep's copy DIR/space.cfg (DIR holds sweep.json; docs/sweep-dir.md): its
 * relative dataset was beside the original file, so is not looked for beside the copy. */
static int sweep_copy(const char *path) {
    const char *base = strrchr(path, '/');
    char manifest[4200];
    base = base ? base + 1 : path;
    if (strcmp(base, "space.cfg") ||
        snprintf(manifest, sizeof manifest, "%.*ssweep.json", (int)(base - path), path) >= (int)sizeof manifest)
        return 0;
    return access(manifest, F_OK) == 0;
}

/* train.dataset: what `--data` takes. A name of data/data.h's DSE_DATA_SETS (or its alias)
 * becomes its canonical spelling. Anything else is a path, relative to the space file's
 * folder (the file travels with its data, and a sweep resumed from another working
 * directory finds it), joined to that folder here. A path is checked when a sweep trains,
 * not here: count and generate need no data, and a sweep's copy DIR/space.cfg must load
 * where its data is not. Only a bare word (no '/', no '.') that names nothing beside the
 * file (other than such a copy) is taken for a misspelt dataset name. */
static enum dse_status read_dataset(struct ctx *cx, const config_setting_t *g, struct dse_space *s) {
    const config_setting_t *ds = config_setting_get_member(g, "dataset");
    const char *name = dse_data_name_find(s->dataset), *slash = strrchr(cx->path, '/');
    char given[sizeof s->dataset];
    s->dataset_line = ds ? (int)config_setting_source_line(ds) : 0;
    if (name) {
        dse_strlcpy(s->dataset, name, (int)sizeof s->dataset);
        return DSE_OK;
    }
    dse_strlcpy(given, s->dataset, (int)sizeof given);
    if (!given[0]) return fail(cx, ds, "dataset = \"\" names no dataset; expected " DSE_DATA_NAMES_LIST "or a path");
    if (given[0] != '/' && slash &&
        snprintf(s->dataset, sizeof s->dataset, "%.*s/%s", (int)(slash - cx->path), cx->path, given) >=
            (int)sizeof s->dataset)
        return fail(cx, ds, "dataset = \"%.40s...\": the path, joined to the space file's folder, is too long", given);
    if (!strpbrk(given, "/.") && access(s->dataset, F_OK) != 0 && !sweep_copy(cx->path)) {
        const char *near = dse_data_name_near(given);
        char hint[64] = "";
        if (near) snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", near);
        return fail(cx, ds, "dataset = \"%.40s\" names no dataset%s; expected " DSE_DATA_NAMES_LIST "or a path "
                    "relative to the space file (an IDX or CIFAR folder, an image pack or folder; \"./%.40s\" for "
                    "a folder of that name)", given, hint, given);
    }
    return DSE_OK;
}

/* The train section: dataset, replicates and engine/train.def's recipe, each key read and
 * range-checked by its row: the words first (dataset, then the ENUM rows), then the numbers,
 * in the rows' order. */
static enum dse_status read_train(struct ctx *cx, const config_setting_t *g, struct dse_space *s) {
    struct dse_train_opts *o = &s->train;
    enum dse_status st;
    double v;
    int w;
    char keys[400] = "dataset";
#define X(field, key, kind, def, lo, hi, cli, words, help) \
    if (key) snprintf(keys + strlen(keys), sizeof keys - strlen(keys), " %s", (const char *)key);
    DSE_TRAIN_RECIPE(X)
#undef X
    snprintf(keys + strlen(keys), sizeof keys - strlen(keys), " replicates");
    if ((st = check_keys(cx, g, "train", keys))) return st;
    s->train_present = 1;
    dse_train_opts_default(o);
    o->data = NULL; /* s->dataset: the worker's to give (a pointer into s would not survive a copy) */
    o->epochs = DSE_SPACE_TRAIN_EPOCHS;
    dse_strlcpy(s->dataset, DSE_TRAIN_DATA_DEFAULT, sizeof s->dataset);
    if ((st = get_str(cx, g, "dataset", NULL, s->dataset, sizeof s->dataset))) return st;
    if ((st = read_dataset(cx, g, s))) return st;
#define GET_INT(field, key, lo, hi, words) \
    if ((v = o->field, st = get_num(cx, g, key, lo, hi, 1, &v, NULL))) return st; \
    o->field = (int)v;
#define GET_U64(field, key, lo, hi, words) \
    if ((v = (double)o->field, st = get_num(cx, g, key, lo, hi, 1, &v, NULL))) return st; \
    o->field = (uint64_t)v;
#define GET_REAL(field, key, lo, hi, words) \
    if ((v = o->field, st = get_num(cx, g, key, lo, hi, 0, &v, NULL))) return st; \
    o->field = (float)v;
#define GET_ENUM(field, key, lo, hi, words) \
    if ((st = get_word(cx, g, key, words, &w))) return st; \
    if (w >= 0) o->field = w;
#define WORD_INT  0
#define WORD_U64  0
#define WORD_REAL 0
#define WORD_ENUM 1
#define X(field, key, kind, def, lo, hi, cli, words, help)                                       \
    if (key && WORD_##kind == words_pass) { GET_##kind(field, key, lo, hi, words) }              \
    if (!words_pass && o->policy == DSE_LR_STEP && o->step_epochs < 1 && !strcmp(#field, "step_epochs")) \
        return fail(cx, g, "lr_policy = \"step\" needs step_epochs = <epochs between drops>");
    for (int words_pass = 1; words_pass >= 0; words_pass--) {
        DSE_TRAIN_RECIPE(X)
    }
#undef X
#undef GET_INT
#undef GET_U64
#undef GET_REAL
#undef GET_ENUM
#undef WORD_INT
#undef WORD_U64
#undef WORD_REAL
#undef WORD_ENUM
    v = s->replicates;
    if ((st = get_num(cx, g, "replicates", 1, DSE_TRAIN_REPLICATES_MAX, 1, &v, &s->replicates_line))) return st;
    s->replicates = (int)v;
    return DSE_OK;
}

/* One setting of the compress section: an integer in [lo, hi], or a number in (lo, hi] (a
 * REAL row's lower bound is exclusive: density in (0, 1], engine/compress.def). */
static enum dse_status get_compress(struct ctx *cx, const config_setting_t *g, const char *key, int integer,
                                    double lo, double hi, double *out) {
    const config_setting_t *s = config_setting_get_member(g, key);
    if (integer || !s) return get_num(cx, g, key, lo, hi, 1, out, NULL);
    if (!is_number(s)) return fail(cx, s, "%s must be a number", key);
    double v = number(s);
    char vb[40], lb[40], hb[40];
    if (!(v > lo && v <= hi))
        return fail(cx, s, "%s = %s is out of range; expected %s < %s <= %s", key, dse_fmt_shortest(vb, sizeof vb, v, 0),
                    dse_fmt_shortest(lb, sizeof lb, lo, 0), key, dse_fmt_shortest(hb, sizeof hb, hi, 0));
    *out = v;
    return DSE_OK;
}

/* compress = { density = 0.33; bits = 6; finetune = 1; } (issue #35): engine/compress.def's
 * rows, each key read and range-checked by its row, the row's default where the file is
 * silent. A space with this section has every finished candidate compressed. */
static enum dse_status read_compress(struct ctx *cx, const config_setting_t *g, struct dse_space *s) {
    struct dse_compress_opts *o = &s->compress;
    enum dse_status st;
    char keys[200] = "";
    double v;
#define INTEGER_INT  1
#define INTEGER_REAL 0
#define X(field, key, kind, def, lo, hi, cli, help) \
    if (key) snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s", keys[0] ? " " : "", (const char *)key);
    DSE_COMPRESS_SETTINGS(X)
#undef X
    if ((st = check_keys(cx, g, "compress", keys))) return st;
    s->compress_line = (int)config_setting_source_line(g);
#define X(field, key, kind, def, lo, hi, cli, help)                                           \
    v = o->field = def;                                                                      \
    if (key && (st = get_compress(cx, g, key, INTEGER_##kind, lo, hi, &v))) return st;       \
    o->field = (DSE_COMPRESS_CTYPE_##kind)v;
    DSE_COMPRESS_SETTINGS(X)
#undef X
#undef INTEGER_INT
#undef INTEGER_REAL
    return DSE_OK;
}

static const char *const strategy_names[DSE_SEARCH_COUNT] = {
#define DSE_STRATEGY_NAME(e, name, logged) name,
    DSE_SEARCH_STRATEGIES(DSE_STRATEGY_NAME)
#undef DSE_STRATEGY_NAME
};

static const int strategy_logged[DSE_SEARCH_COUNT] = {
#define DSE_STRATEGY_LOGGED(e, name, logged) logged,
    DSE_SEARCH_STRATEGIES(DSE_STRATEGY_LOGGED)
#undef DSE_STRATEGY_LOGGED
};

int dse_strategy_logged(enum dse_strategy s) {
    return (int)s >= 0 && s < DSE_SEARCH_COUNT && strategy_logged[s];
}

const char *dse_strategy_str(enum dse_strategy s) {
    return dse_name_of(strategy_names, DSE_SEARCH_COUNT, (int)s, "?");
}

int dse_strategy_find(const char *name) {
    return dse_name_find(strategy_names, DSE_SEARCH_COUNT, name);
}

/* search = { strategy = "grid" | "random" | "evolution" | "bo" | "auto"; budget = N; objectives = [...];
 * pop = 16; seed = 1; min_top1 = 0.7; }; without strategy, grid, or auto where a budget is given */
static enum dse_status read_search(struct ctx *cx, const config_setting_t *g, struct dse_space *out) {
    struct dse_search *se = &out->search;
    enum dse_status st;
    char name[32] = "grid", allowed[200] = "";
    double v;
    if ((st = check_keys(cx, g, "search", "strategy budget budget_epochs budget_hours objectives pop seed min_top1"))) return st;
    se->present = 1;
    se->line = (int)config_setting_source_line(g);
    for (int k = 0; k < DSE_SEARCH_COUNT; k++)
        snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s", k ? " " : "", strategy_names[k]);
    if ((st = get_str(cx, g, "strategy", allowed, name, sizeof name))) return st;
    se->strategy = (enum dse_strategy)dse_strategy_find(name);
    v = 0;
    if ((st = get_num(cx, g, "budget", 1, DSE_SEARCH_BUDGET_MAX, 1, &v, NULL))) return st;
    se->budget = (int64_t)v;
    v = 0;
    if ((st = get_num(cx, g, "budget_epochs", 1, 1e12, 1, &v, &se->budget_epochs_line))) return st;
    se->budget_epochs = (int64_t)v;
    v = 0;
    if ((st = get_num(cx, g, "budget_hours", 1e-6, 1e6, 0, &v, NULL))) return st;
    se->budget_hours = v;
    v = se->pop;
    if ((st = get_num(cx, g, "pop", 1, 100000, 1, &v, NULL))) return st;
    se->pop = (int)v;
    v = (double)se->seed;
    if ((st = get_num(cx, g, "seed", 0, 4294967295.0, 1, &v, NULL))) return st;
    se->seed = (uint64_t)v;
    const config_setting_t *mt = config_setting_get_member(g, "min_top1");
    if (mt && is_number(mt) && number(mt) > 1 && number(mt) < 100)
        return fail(cx, mt, "min_top1 is a fraction of the test images: %g%% is min_top1 = %g", number(mt),
                    number(mt) / 100);
    if ((st = get_num(cx, g, "min_top1", 0, 1, 0, &se->min_top1, &se->min_top1_line))) return st;
    if (se->min_top1_line && se->min_top1 >= 1)
        return fail(cx, mt, "min_top1 = 1 leaves no top-1 above it; expected 0 to less than 1 (0.7: networks "
                    "above 70%% top-1 interest you)");
    const config_setting_t *ob = config_setting_get_member(g, "objectives");
    if (ob) {
        char names[200] = "";
        for (int c = 0; c < DSE_EVO_COST_COUNT; c++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", c ? ", " : "",
                     dse_evo_cost_name((enum dse_evo_cost)c));
        if (config_setting_type(ob) != CONFIG_TYPE_ARRAY && config_setting_type(ob) != CONFIG_TYPE_LIST)
            return fail(cx, ob, "objectives must be a list of costs to minimize beside top-1, e.g. [\"params\"]; "
                        "expected some of: %s", names);
        se->n_obj = 0;
        for (int i = 0; i < config_setting_length(ob); i++) {
            const config_setting_t *e = config_setting_get_elem(ob, (unsigned)i);
            const char *n = config_setting_type(e) == CONFIG_TYPE_STRING ? config_setting_get_string(e) : NULL;
            int c = n ? dse_evo_cost_find(n) : -1;
            if (c < 0)
                return fail(cx, e, "objectives: %s%s%s is not a cost; expected some of: %s (top-1 is always the "
                            "first objective)", n ? "\"" : "", n ? n : "(not a string)", n ? "\"" : "", names);
            for (int j = 0; j < se->n_obj; j++)
                if (se->obj[j] == c) return fail(cx, e, "objectives: \"%s\" is listed twice", n);
            if (c == DSE_EVO_COMPRESSED_MB && !out->compress_line)
                return fail(cx, e, "objectives: \"%s\" needs a compress section: compress = { density = 0.33; "
                            "bits = 6; } (docs/space-format.md)", n);
            se->obj[se->n_obj++] = c;
        }
        if (se->n_obj < 1)
            return fail(cx, ob, "objectives is empty; expected at least one of: %s", names);
    }
    const char *bk = se->budget ? "budget" : se->budget_epochs ? "budget_epochs" : se->budget_hours > 0 ? "budget_hours" : NULL;
    const int named = config_setting_get_member(g, "strategy") != NULL;
    if (!named && bk) se->strategy = DSE_SEARCH_AUTO; /* a budget and no strategy: chosen for them */
    if (se->strategy == DSE_SEARCH_GRID && bk) {
        char val[40];
        dse_fmt_shortest(val, sizeof val, se->budget ? (double)se->budget : se->budget_epochs ? (double)se->budget_epochs
                                                                                            : se->budget_hours, 0);
        return fail(cx, config_setting_get_member(g, bk), "strategy \"grid\" trains the whole grid (or sample = "
                    "N), so %s = %s does not apply; give strategy = \"random\", \"evolution\", \"bo\" or \"auto\" "
                    "with it (or no strategy: a budget alone means \"auto\")", bk, val);
    }
    if (se->strategy == DSE_SEARCH_RANDOM && se->budget_hours > 0)
        return fail(cx, config_setting_get_member(g, "budget_hours"), "strategy \"random\" draws its candidates "
                    "before training, so budget_hours does not apply; give budget or budget_epochs, or limit the "
                    "command with dse sweep --budget Nh");
    if (se->strategy == DSE_SEARCH_AUTO && config_setting_get_member(g, "pop"))
        return fail(cx, config_setting_get_member(g, "pop"), "pop applies to strategy = \"evolution\" only; %s "
                    "chooses the strategy, and sizes evolution's population from the budget (a third of it, 4 to "
                    "16): give strategy = \"evolution\" with pop", named ? "strategy \"auto\"" : "a budget without "
                    "strategy means \"auto\", which");
    if (se->strategy != DSE_SEARCH_BO && se->strategy != DSE_SEARCH_AUTO && mt)
        return fail(cx, mt, "min_top1 applies to strategy = \"bo\" (or \"auto\", where it chooses bo) only: the "
                    "reference top-1 of the hypervolume bo maximizes");
    if (se->strategy != DSE_SEARCH_EVOLUTION && config_setting_get_member(g, "pop"))
        return fail(cx, config_setting_get_member(g, "pop"), "pop applies to strategy = \"evolution\" only");
    if (!dse_strategy_logged(se->strategy) && se->strategy != DSE_SEARCH_AUTO && config_setting_get_member(g, "objectives"))
        return fail(cx, config_setting_get_member(g, "objectives"),
                    "objectives applies to strategy = \"evolution\", \"bo\" or \"auto\" only");
    return DSE_OK;
}

enum dse_status dse_space_set_strategy(struct dse_space *s, enum dse_strategy st, struct dse_err *err) {
    struct dse_search *se = &s->search;
    se->strategy = st;
    s->sample = s->file_sample, s->seed = s->file_seed;
    if (st == DSE_SEARCH_GRID) return DSE_OK; /* a budget in the file is for the other strategies */
    if ((st == DSE_SEARCH_RANDOM || st == DSE_SEARCH_EVOLUTION) && se->min_top1_line)
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, se->min_top1_line, "min_top1 applies to strategy \"bo\" "
                           "(or \"auto\", where it chooses bo) only, and strategy \"%s\" would leave it unused: "
                           "take it out of the search section, or search with bo", dse_strategy_str(st));
    const int hours_ok = dse_strategy_logged(st) || st == DSE_SEARCH_AUTO; /* auto never chooses random */
    if (!se->budget && !se->budget_epochs && !(hours_ok && se->budget_hours > 0))
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, se->line, "strategy \"%s\" needs a budget: search = { "
                           "strategy = \"%s\"; budget = <candidates to train>; } (or budget_epochs%s; "
                           "docs/space-format.md)", dse_strategy_str(st), dse_strategy_str(st),
                           hours_ok ? ", budget_hours" : "");
    if (st == DSE_SEARCH_BO && dse_evo_cost_measured((enum dse_evo_cost)se->obj[0]))
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, se->line, "strategy \"bo\" models top-1 against its first "
                           "objective, \"%s\", which is measured after training; list a cost known before training "
                           "first (objectives = [\"params\", \"%s\"])", dse_evo_cost_name((enum dse_evo_cost)se->obj[0]),
                           dse_evo_cost_name((enum dse_evo_cost)se->obj[0]));
    if (st == DSE_SEARCH_RANDOM && se->budget_hours > 0)
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, se->line, "strategy \"random\" draws its candidates "
                           "before training, so budget_hours does not apply; give budget or budget_epochs, or limit "
                           "the command with dse sweep --budget Nh");
    if (s->file_sample > 0)
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, se->line, "sample = %lld and strategy \"%s\" both choose "
                           "the candidates; give one (strategy \"random\" with budget = N draws N, as sample = N "
                           "did)", (long long)s->file_sample, dse_strategy_str(st));
    if (se->budget_epochs) { /* counted in the train section's epochs per candidate */
        if (s->train.epochs < 1)
            return dse_err_set(err, DSE_ERR_CONFIG, s->path, se->budget_epochs_line, "budget_epochs counts epochs of training: "
                               "the space needs a train section");
        if (se->budget_epochs < (int64_t)s->train.epochs * s->replicates)
            return dse_err_set(err, DSE_ERR_CONFIG, s->path, se->budget_epochs_line, "budget_epochs = %lld is less than one "
                               "candidate's %d epochs x %d replicates", (long long)se->budget_epochs,
                               s->train.epochs, s->replicates);
    }
    if (st == DSE_SEARCH_RANDOM) { /* the sample's draw, seeded by search.seed */
        int64_t n = se->budget;
        if (se->budget_epochs) {
            int64_t by_epochs = se->budget_epochs / ((int64_t)s->train.epochs * s->replicates);
            if (!n || by_epochs < n) n = by_epochs;
        }
        s->sample = n, s->seed = se->seed;
    }
    return DSE_OK;
}

void dse_space_free(struct dse_space *s) {
    if (!s) return;
    for (int k = 0; k < DSE_AX_COUNT; k++) {
        free(s->axes[k].values);
        free(s->axes[k].masks);
        s->axes[k].values = NULL;
        s->axes[k].masks = NULL;
    }
}

enum dse_status dse_space_load(const char *path, struct dse_space *out, struct dse_err *err) {
    struct ctx cx = { .path = path, .err = err };
    config_t cfg;
    char *text = NULL;
    size_t len = 0;
    enum dse_status st;
    static const struct dse_cfgfile how = {
        .what = "space file", .doc = "docs/space-format.md",
        .no_include = "put every setting in the one file (it identifies the sweep)" };

    memset(out, 0, sizeof *out);
    out->path = path;
    out->search.pop = 0, out->search.seed = 1, out->search.n_obj = 1, out->search.obj[0] = DSE_EVO_PARAMS;
    config_init(&cfg);
    /* The file must hold the whole space: its hash identifies the sweep directory's space,
     * and space.cfg is copied there. */
    if ((st = dse_cfgfile_read(&cfg, path, &how, &text, &len, err))) goto done;
    out->hash = dse_fnv1a64(DSE_FNV64_INIT, text, len);
    config_setting_t *root = config_root_setting(&cfg);
    if ((st = check_keys(&cx, root, "the space file", "name metaparams macro sample seed constraints train compress search")))
        goto done;
    const char *name = NULL;
    const config_setting_t *ns = config_setting_get_member(root, "name");
    if (ns && config_setting_type(ns) != CONFIG_TYPE_STRING) {
        st = fail(&cx, ns, "name must be a string in double quotes");
        goto done;
    }
    name = ns ? config_setting_get_string(ns) : NULL;
    int name_ok = name && name[0] && strlen(name) < sizeof out->name && strcmp(name, ".") && strcmp(name, "..");
    for (const char *p = name; name_ok && *p; p++)
        name_ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                  *p == '-' || *p == '_' || *p == '.';
    if (!name_ok) {
        st = fail(&cx, ns ? ns : root, "the space needs name = \"...\"; (letters, digits, '-', '_', '.'; "
                                       "at most %d characters)", (int)sizeof out->name - 1);
        goto done;
    }
    dse_strlcpy(out->name, name, sizeof out->name);

    for (int k = 0; k < DSE_AX_COUNT; k++) set_default(&out->axes[k], (enum dse_axis_key)k);
    static const char *groups[2] = { "metaparams", "macro" };
    for (int gi = 0; gi < 2; gi++) {
        const config_setting_t *g = config_setting_get_member(root, groups[gi]);
        if (!g) continue;
        char allowed[300] = "";
        for (int k = 0; k < DSE_AX_COUNT; k++)
            if (!strcmp(INFO(k)->section, groups[gi])) {
                strcat(allowed, allowed[0] ? " " : "");
                strcat(allowed, INFO(k)->key);
            }
        if (!config_setting_is_group(g)) {
            st = fail(&cx, g, "%s must be a group { key = value; ... }", groups[gi]);
            goto done;
        }
        if ((st = check_keys(&cx, g, groups[gi], allowed))) goto done;
        for (int k = 0; k < DSE_AX_COUNT; k++) {
            const config_setting_t *s;
            if (strcmp(INFO(k)->section, groups[gi]) || !(s = config_setting_get_member(g, INFO(k)->key)))
                continue;
            free(out->axes[k].values);
            free(out->axes[k].masks);
            out->axes[k].values = NULL;
            out->axes[k].masks = NULL;
            if ((st = read_axis(&cx, s, (enum dse_axis_key)k, &out->axes[k]))) goto done;
        }
    }
    out->count = 1;
    for (int k = 0; k < DSE_AX_COUNT; k++) {
        if (!out->axes[k].values) {
            st = dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
            goto done;
        }
        if (__builtin_mul_overflow(out->count, (uint64_t)out->axes[k].n, &out->count))
            out->count_overflow = 1;
    }
    if ((st = check_pools(&cx, out))) goto done;

    double v = 0;
    if ((st = get_num(&cx, root, "sample", 0, 1e9, 1, &v, NULL))) goto done;
    out->sample = (int64_t)v;
    v = 1;
    if ((st = get_num(&cx, root, "seed", 0, 4294967295.0, 1, &v, NULL))) goto done;
    out->seed = (uint64_t)v;

    out->file_sample = out->sample, out->file_seed = out->seed;
    out->replicates = 1; /* also without a train section: every candidate is one record */
    const config_setting_t *t = config_setting_get_member(root, "train");
    if (t && (st = read_train(&cx, t, out))) goto done;
    const config_setting_t *z = config_setting_get_member(root, "compress");
    if (z && (st = read_compress(&cx, z, out))) goto done;
    const config_setting_t *se = config_setting_get_member(root, "search");
    if (se && (st = read_search(&cx, se, out))) goto done;
    if ((st = dse_space_set_strategy(out, out->search.strategy, err))) goto done;
    out->cons.train_mem_batch = out->train_present ? out->train.batch : 64;
    const config_setting_t *c = config_setting_get_member(root, "constraints");
    if (c) {
        if ((st = check_keys(&cx, c, "constraints", "max_params max_flops max_model_mb max_train_mem_mib train_mem_batch")))
            goto done;
        double mp = 0, mf = 0, bt = out->cons.train_mem_batch;
        if ((st = get_num(&cx, c, "max_params", 1, 9e15, 1, &mp, &out->cons_line[0])) ||
            (st = get_num(&cx, c, "max_flops", 1, 9e18, 1, &mf, &out->cons_line[1])) ||
            (st = get_num(&cx, c, "max_model_mb", 1e-6, 1e12, 0, &out->cons.max_model_mb, &out->cons_line[2])) ||
            (st = get_num(&cx, c, "max_train_mem_mib", 1e-6, 1e12, 0, &out->cons.max_train_mem_mib, &out->cons_line[3])) ||
            (st = get_num(&cx, c, "train_mem_batch", 1, DSE_TRAIN_BATCH_MAX, 1, &bt, NULL)))
            goto done;
        out->cons.max_params = (int64_t)mp;
        out->cons.max_flops = (int64_t)mf;
        out->cons.train_mem_batch = (int)bt;
    }
done:
    config_destroy(&cfg);
    free(text);
    if (st) dse_space_free(out);
    return st;
}

void dse_space_candidate(const struct dse_space *s, uint64_t k, struct dse_mp *mp) {
    int digit[DSE_AX_COUNT];
    for (int a = DSE_AX_COUNT - 1; a >= 0; a--) { /* the last axis varies fastest */
        digit[a] = (int)(k % (uint64_t)s->axes[a].n);
        k /= (uint64_t)s->axes[a].n;
    }
    for (int a = 0; a < DSE_AX_COUNT; a++) {
        const struct dse_axis *ax = &s->axes[a];
        struct dse_mp_value v = { .num = ax->values[digit[a]], .mask = ax->masks ? ax->masks[digit[a]] : 0 };
        dse_mp_set(mp, (enum dse_mp_key)a, v);
    }
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Is v in the open-addressing set (size a power of two, empty = UINT64_MAX)? Insert it if not. */
static int set_insert(uint64_t *set, uint64_t mask, uint64_t v) {
    uint64_t h = (v * 0x9e3779b97f4a7c15ULL) & mask;
    while (set[h] != UINT64_MAX) {
        if (set[h] == v) return 0;
        h = (h + 1) & mask;
    }
    set[h] = v;
    return 1;
}

enum dse_status dse_space_indices(const struct dse_space *s, uint64_t max, uint64_t **out,
                                  uint64_t *n, struct dse_err *err) {
    *out = NULL;
    *n = 0;
    if (s->count_overflow)
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, 0, "the space has more than 2^64 candidates; "
                           "narrow some ranges (sampling needs a grid it can number)");
    uint64_t want = s->count;
    if (s->sample > 0 && (uint64_t)s->sample < s->count) want = (uint64_t)s->sample;
    if (want > max)
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, 0, "%s %llu candidates, more than %llu; %s",
                           want == s->count ? "the space has" : "sample =", (unsigned long long)want,
                           (unsigned long long)max,
                           want == s->count ? "draw some with sample = N" : "draw fewer");
    uint64_t *idx = malloc(sizeof *idx * (size_t)(want ? want : 1));
    if (!idx) return dse_err_set(err, DSE_ERR_NOMEM, s->path, 0, "out of memory");
    if (want == s->count) {
        for (uint64_t i = 0; i < want; i++) idx[i] = i;
    } else {
        /* Floyd's algorithm: `want` distinct indices, uniformly, in O(want). */
        uint64_t cap = 1;
        while (cap < 2 * want) cap <<= 1;
        uint64_t *set = malloc(sizeof *set * (size_t)cap);
        if (!set) {
            free(idx);
            return dse_err_set(err, DSE_ERR_NOMEM, s->path, 0, "out of memory");
        }
        memset(set, 0xff, sizeof *set * (size_t)cap);
        struct dse_pcg32 r;
        uint64_t k = 0;
        dse_pcg32_seed(&r, s->seed, 0x5eed);
        for (uint64_t j = s->count - want; j < s->count; j++) {
            uint64_t t = dse_pcg32_bounded64(&r, j + 1);
            idx[k++] = set_insert(set, cap - 1, t) ? t : (set_insert(set, cap - 1, j), j);
        }
        free(set);
        qsort(idx, (size_t)want, sizeof *idx, cmp_u64);
    }
    *out = idx;
    *n = want;
    return DSE_OK;
}

enum dse_status dse_space_build(const struct dse_space *s, const struct dse_mp *mp,
                                struct dse_net *net, struct dse_err *err) {
    enum dse_status st = dse_mp_build(mp, net, err); /* it checks mp first */
    if (st == DSE_ERR_CONFIG) { /* a range: name the line of the key at fault */
        const char *key = NULL;
        dse_mp_check(mp, &key, err);
        int k = dse_mp_find(key);
        return dse_err_set(err, err->code, s->path, k >= 0 ? s->axes[k].line : 0, "%s", err->msg);
    }
    if (st) {
        char pct[32], sr[32];
        return dse_err_set(err, st, s->path, 0, "candidate base_e=%d incr_e=%d freq=%d pct3x3=%s sr=%s bypass=%s "
                           "input=%dx%dx%d fires=%d: %.300s", mp->base_e, mp->incr_e, mp->freq,
                           dse_fmt_real(pct, sizeof pct, mp->pct3x3), dse_fmt_real(sr, sizeof sr, mp->sr),
                           dse_bypass_str(mp->bypass), mp->input_c, mp->input_h, mp->input_w, mp->fires, err->msg);
    }
    return st;
}

/* Appenders for the canonical text: snprintf's %.17g made ids cost more than building
 * and costing the whole network. Doubles are written as the 16 hex digits of their
 * IEEE-754 bits: exact, and cheap. */
static char *put_str(char *p, const char *s) {
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

static char *put_int(char *p, long long v) {
    char d[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    if (v < 0) *p++ = '-';
    do d[n++] = (char)('0' + u % 10); while ((u /= 10) > 0);
    while (n) *p++ = d[--n];
    return p;
}

static char *put_real(char *p, double v) {
    static const char hex[] = "0123456789abcdef";
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    for (int i = 15; i >= 0; i--) *p++ = hex[(bits >> (4 * i)) & 15];
    return p;
}

int dse_space_canonical(const struct dse_mp *mp, char *buf, int size) {
    /* Worst case: 18 keys (~190 bytes), 13 ints of up to 11 characters, 4 reals of 16,
     * pools of up to 61 positions of 7 characters: under 1100 bytes. */
    char tmp[1536], pools[600];
    char *p = tmp;
    for (int k = 0; k < DSE_MP_COUNT; k++) {
        const struct dse_mp_info *in = INFO(k);
        if (in->id == DSE_MP_ID_IF_SET && dse_mp_is_default(mp, (enum dse_mp_key)k)) continue;
        struct dse_mp_value v = dse_mp_get(mp, (enum dse_mp_key)k);
        p = put_str(p, in->key);
        *p++ = '=';
        switch (in->type) {
        case DSE_MP_TYPE_INT:    p = put_int(p, (long long)v.num); break;
        case DSE_MP_TYPE_REAL:   p = put_real(p, v.num); break;
        case DSE_MP_TYPE_BYPASS: p = put_str(p, dse_bypass_str((enum dse_bypass)(int)v.num)); break;
        case DSE_MP_TYPE_POOLS:
            dse_mp_pools_str(v.mask, pools, sizeof pools);
            p = put_str(p, pools);
            break;
        }
        *p++ = '\n';
    }
    int n = (int)(p - tmp);
    if (size > 0) {
        int c = n < size - 1 ? n : size - 1;
        memcpy(buf, tmp, (size_t)c);
        buf[c] = '\0';
    }
    return n;
}

void dse_space_id(const struct dse_mp *mp, char id[DSE_ID_SIZE]) {
    static const char hex[] = "0123456789abcdef";
    char canon[1536];
    int n = dse_space_canonical(mp, canon, sizeof canon);
    uint64_t h = dse_fnv1a64(DSE_FNV64_INIT, canon, (uint64_t)(n < (int)sizeof canon ? n : (int)sizeof canon - 1));
    id[0] = 'c';
    for (int i = 0; i < 16; i++) id[1 + i] = hex[(h >> (4 * (15 - i))) & 15];
    id[17] = '\0';
}

void dse_space_id_replicate(char id[DSE_ID_SIZE], int replicate) {
    id[DSE_ID_BASE_LEN] = '\0';
    DSE_ASSERT(replicate >= 0 && replicate < DSE_TRAIN_REPLICATES_MAX); /* "r63" at most: fits DSE_ID_SIZE */
    if (replicate > 0) /* the modulo changes nothing after the assert; it bounds the width for the compiler */
        snprintf(id + DSE_ID_BASE_LEN, DSE_ID_SIZE - DSE_ID_BASE_LEN, "r%d", replicate % DSE_TRAIN_REPLICATES_MAX);
}

void dse_space_rep_id(const struct dse_mp *mp, int replicate, char id[DSE_ID_SIZE]) {
    dse_space_id(mp, id);
    dse_space_id_replicate(id, replicate);
}

int dse_space_id_valid(const char *id) {
    if (!id || id[0] != 'c' || strlen(id) != DSE_ID_BASE_LEN) return 0;
    for (int i = 1; i < DSE_ID_BASE_LEN; i++)
        if (!strchr("0123456789abcdef", id[i])) return 0;
    return 1;
}

int dse_space_rep_id_valid(const char *id) {
    char base[DSE_ID_SIZE];
    if (!id || strlen(id) < DSE_ID_BASE_LEN || strlen(id) >= DSE_ID_SIZE) return 0;
    memcpy(base, id, DSE_ID_BASE_LEN);
    base[DSE_ID_BASE_LEN] = '\0';
    const char *r = id + DSE_ID_BASE_LEN;
    if (!dse_space_id_valid(base)) return 0;
    if (!*r) return 1;
    char *end;
    long k = r[0] == 'r' && r[1] >= '1' && r[1] <= '9' ? strtol(r + 1, &end, 10) : 0;
    return k >= 1 && k < DSE_TRAIN_REPLICATES_MAX && !*end;
}

static int id_at(const struct dse_space *s, uint64_t k, const char *id) {
    struct dse_mp mp;
    char got[DSE_ID_SIZE];
    dse_space_candidate(s, k, &mp);
    dse_space_id(&mp, got);
    return !strcmp(got, id);
}

enum dse_status dse_space_find_id(const struct dse_space *s, const char *id, uint64_t max, uint64_t *index,
                                  struct dse_err *err) {
    if (!s->count_overflow && s->count <= max) {
        for (uint64_t k = 0; k < s->count; k++)
            if (id_at(s, k, id)) return *index = k, DSE_OK;
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, 0, "no candidate of this space has id %s (all %llu "
                           "searched); 'dse report DIR' lists a sweep's ids beside their grid indices",
                           id, (unsigned long long)s->count);
    }
    if (s->sample <= 0)
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, 0, "the space has %s candidates, too many to search for "
                           "id %s (at most %llu without a sample); give --index K instead ('dse report DIR' "
                           "shows each id's index)", s->count_overflow ? "more than 2^64" : "so many", id,
                           (unsigned long long)max);
    uint64_t *idx = NULL, n = 0;
    enum dse_status st = dse_space_indices(s, max, &idx, &n, err);
    for (uint64_t i = 0; !st && i < n; i++)
        if (id_at(s, idx[i], id)) {
            *index = idx[i];
            free(idx);
            return DSE_OK;
        }
    free(idx);
    return st ? st : dse_err_set(err, DSE_ERR_CONFIG, s->path, 0, "no candidate of this space's sample has id %s "
                                 "(%llu searched); 'dse report DIR' lists a sweep's ids beside their grid indices",
                                 id, (unsigned long long)n);
}
