/* record.c: a candidate record (sweep/record.h): its statuses, epochs and attempts, the one
 * writer of candidate files (dse_rec_put) and the one strict reader (dse_rec_from_json),
 * both driven by sweep/record.def. The file format is in docs/sweep-dir.md. Numbers that
 * are not finite are written as null: JSON has no NaN, and every reader then agrees. */
#include "sweep/record.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static const char *const rec_status_names[DSE_REC_COUNT] = {
#define DSE_REC_NAME(e, name) [DSE_REC_##e] = name,
    DSE_REC_STATUSES(DSE_REC_NAME)
#undef DSE_REC_NAME
};

const char *dse_rec_status_str(enum dse_rec_status s) {
    return dse_name_of(rec_status_names, DSE_REC_COUNT, (int)s, "?");
}

int dse_rec_status_from_str(const char *s) {
    return dse_name_find(rec_status_names, DSE_REC_COUNT, s);
}

#define DSE_REC_ABSENT(field, absent)    .field = absent,
#define DSE_REC_ABSENT_ID                DSE_REC_ABSENT
#define DSE_REC_ABSENT_INDEX             DSE_REC_ABSENT
#define DSE_REC_ABSENT_COUNT             DSE_REC_ABSENT
#define DSE_REC_ABSENT_MEM               DSE_REC_ABSENT
#define DSE_REC_ABSENT_REPLICATE         DSE_REC_ABSENT
#define DSE_REC_ABSENT_METAPARAMS        DSE_REC_ABSENT
#define DSE_REC_ABSENT_MB(field, absent)  /* model_bytes' */
#define DSE_REC_ABSENT_MIB(field, absent) /* model_bytes' */
#define DSE_REC_ABSENT_BATCH             DSE_REC_ABSENT
#define DSE_REC_ABSENT_STATUS            DSE_REC_ABSENT
#define DSE_REC_ABSENT_STR               DSE_REC_ABSENT
#define DSE_REC_ABSENT_FLOAT             DSE_REC_ABSENT
#define DSE_REC_ABSENT_FIXED3            DSE_REC_ABSENT
#define DSE_REC_ABSENT_FIXED1            DSE_REC_ABSENT
#define DSE_REC_ABSENT_INT               DSE_REC_ABSENT
#define DSE_REC_ABSENT_INT64             DSE_REC_ABSENT
#define DSE_REC_ABSENT_UINT64            DSE_REC_ABSENT
#define DSE_REC_ABSENT_EPOCHS            DSE_REC_ABSENT
#define DSE_REC_ABSENT_ATTEMPTS          DSE_REC_ABSENT
static const struct dse_rec rec_absent = {
#define DSE_REC(key, field, kind, absent, lo, hi, line, when, file, reports) DSE_REC_ABSENT_##kind(field, absent)
#include "sweep/record.def"
#undef DSE_REC
};

void dse_rec_init(struct dse_rec *r) {
    *r = rec_absent;
}

void dse_rec_deinit(struct dse_rec *r) {
    free(r->ep);
    free(r->att);
    dse_rec_init(r);
}

int dse_rec_final(const struct dse_rec *r) {
    return r->status != DSE_REC_PENDING;
}

struct dse_rec_attempt *dse_rec_push_attempt(struct dse_rec *r, const char *worker, int64_t lease_gen, int threads,
                                             const char *device, const char *precision, int from) {
    if (!r->att && !(r->att = calloc(DSE_REC_ATTEMPTS_MAX, sizeof *r->att))) return NULL;
    if (r->n_att == DSE_REC_ATTEMPTS_MAX) {
        memmove(r->att, r->att + 1, sizeof r->att[0] * (DSE_REC_ATTEMPTS_MAX - 1));
        r->n_att--;
    }
    struct dse_rec_attempt *a = &r->att[r->n_att++];
    memset(a, 0, sizeof *a);
    dse_strlcpy(a->worker, worker, sizeof a->worker);
    dse_strlcpy(a->device, device, sizeof a->device);
    dse_strlcpy(a->precision, precision, sizeof a->precision);
    a->lease_gen = lease_gen;
    a->threads = threads;
    a->from_epoch = a->to_epoch = from;
    r->attempts_total++;
    return a;
}

int dse_rec_oom_streak(const struct dse_rec *r) {
    int n = 0;
    for (int i = r->n_att - 1; i >= 0 && !strcmp(r->att[i].end, "oom"); i--) {
        n++;
        if (r->att[i].to_epoch > r->att[i].from_epoch) break;
    }
    return n;
}

int dse_rec_oom(struct dse_rec *r, const char *device, double free_mib, double need_mib, const char *why,
                int max_oom) {
    DSE_ASSERT(r->n_att > 0);
    struct dse_rec_attempt *a = &r->att[r->n_att - 1];
    dse_strlcpy(a->end, "oom", sizeof a->end);
    const int streak = dse_rec_oom_streak(r);
    const int failed = streak >= max_oom;
    snprintf(a->note, sizeof a->note, "out of memory on %s with %.0f MiB free at its claim (given %.0f MiB); %s",
             device, free_mib, need_mib, failed ? "failed" : "re-queued");
    if (failed) {
        snprintf(r->failed_why, sizeof r->failed_why, "out of memory on a GPU %d times in a row (see --max-oom); "
                 "the last on %s with %.0f MiB free, given %.0f MiB: %s", streak, device, free_mib, need_mib, why);
        r->status = DSE_REC_FAILED;
    }
    return failed;
}

enum dse_status dse_rec_set_epoch(struct dse_rec *r, int e, const struct dse_epoch_result *v, struct dse_err *err) {
    if (e < 0 || e >= DSE_TRAIN_EPOCHS_MAX) return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "epoch %d out of range", e);
    if (e >= r->cap_epochs) {
        int cap = r->cap_epochs ? r->cap_epochs : 8;
        while (cap <= e) cap *= 2;
        struct dse_epoch_result *p = realloc(r->ep, sizeof *p * (size_t)cap);
        if (!p) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        r->ep = p, r->cap_epochs = cap;
    }
    for (int k = r->n_epochs; k < e; k++) /* a gap cannot happen; keep the array defined anyway */
        r->ep[k] = dse_rec_epoch_unknown();
    r->ep[e] = *v;
    r->n_epochs = e + 1;
    return DSE_OK;
}

/* ---- reading ---------------------------------------------------------------------------- */

static float num_f(const struct dse_json *v) {
    /* the token as written, to float directly: what was written from a float reads back
     * as the same float, bit for bit */
    return v && v->type == DSE_JSON_NUMBER ? strtof(v->str, NULL) : NAN;
}

static double num_d(const struct dse_json *v, double dflt) {
    return v && v->type == DSE_JSON_NUMBER ? v->number : dflt;
}

enum dse_status dse_rec_attempts_read(struct dse_rec *r, const struct dse_json *v, struct dse_err *err) {
    r->n_att = 0;
    if (!v || v->type != DSE_JSON_ARRAY || !v->n) return DSE_OK;
    if (!r->att && !(r->att = calloc(DSE_REC_ATTEMPTS_MAX, sizeof *r->att)))
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; i < v->n && r->n_att < DSE_REC_ATTEMPTS_MAX; i++) {
        const struct dse_json *o = &v->items[i];
        struct dse_rec_attempt *a = &r->att[r->n_att++];
        dse_json_str_copy(dse_json_get(o, "worker"), a->worker, sizeof a->worker);
        a->lease_gen = dse_json_int_or(dse_json_get(o, "lease_gen"), 0);
        a->threads = (int)dse_json_int_or(dse_json_get(o, "threads"), 0);
        dse_json_str_copy(dse_json_get(o, "device"), a->device, sizeof a->device);
        dse_json_str_copy(dse_json_get(o, "precision"), a->precision, sizeof a->precision);
        dse_json_str_copy(dse_json_get(o, "note"), a->note, sizeof a->note);
        a->from_epoch = (int)dse_json_int_or(dse_json_get(o, "from_epoch"), 0);
        a->to_epoch = (int)dse_json_int_or(dse_json_get(o, "to_epoch"), 0);
        a->seconds = num_d(dse_json_get(o, "seconds"), 0);
        dse_json_str_copy(dse_json_get(o, "end"), a->end, sizeof a->end);
    }
    if (r->attempts_total < r->n_att) r->attempts_total = r->n_att;
    return DSE_OK;
}

/* ---- writing ---------------------------------------------------------------------------- */

/* The shortest text that reads back (strtof) as the same float; null if not finite. */
static void put_float(FILE *f, float v) {
    char b[40];
    if (!isfinite(v)) {
        fputs("null", f);
        return;
    }
    fputs(dse_fmt_shortest(b, sizeof b, v, 1), f);
}

static void put_fixed(FILE *f, double v, int decimals) {
    if (isfinite(v)) fprintf(f, "%.*f", decimals, v);
    else fputs("null", f);
}

/* ---- one epoch's results (engine/epoch.def) ---------------------------------------------- */

static void put_epoch_FLOAT(FILE *f, const char *key, float v) {
    fprintf(f, ", \"%s\": ", key);
    put_float(f, v);
}
static void put_epoch_FIXED3(FILE *f, const char *key, double v) {
    fprintf(f, ", \"%s\": ", key);
    put_fixed(f, v, 3);
}
static void put_epoch_FIXED1(FILE *f, const char *key, double v) {
    fprintf(f, ", \"%s\": ", key);
    put_fixed(f, v, 1);
}
static void put_epoch_COUNT(FILE *f, const char *key, int v) {
    if (v >= 0) fprintf(f, ", \"%s\": %d", key, v);
}

void dse_rec_epoch_write(FILE *f, int epoch, const struct dse_epoch_result *p) {
    fprintf(f, "{\"epoch\": %d", epoch);
#define DSE_EPOCH(key, field, kind, unknown) put_epoch_##kind(f, key, p->field);
#include "engine/epoch.def"
#undef DSE_EPOCH
    fputc('}', f);
}

struct dse_epoch_result dse_rec_epoch_unknown(void) {
    struct dse_epoch_result e = {
#define DSE_EPOCH(key, field, kind, unknown) .field = unknown,
#include "engine/epoch.def"
#undef DSE_EPOCH
    };
    return e;
}

static float get_epoch_FLOAT(const struct dse_json *v, double unknown) { return v ? num_f(v) : (float)unknown; }
static double get_epoch_FIXED3(const struct dse_json *v, double unknown) { return num_d(v, unknown); }
static double get_epoch_FIXED1(const struct dse_json *v, double unknown) { return num_d(v, unknown); }
static int get_epoch_COUNT(const struct dse_json *v, double unknown) { return (int)dse_json_int_or(v, (int64_t)unknown); }

struct dse_epoch_result dse_rec_epoch_read(const struct dse_json *o) {
    struct dse_epoch_result e;
#define DSE_EPOCH(key, field, kind, unknown) e.field = get_epoch_##kind(dse_json_get(o, key), unknown);
#include "engine/epoch.def"
#undef DSE_EPOCH
    return e;
}

static void put_str(FILE *f, const char *s) { dse_json_write_str(f, s, strlen(s)); }

static void put_opt_str(FILE *f, const char *s) {
    if (s[0]) put_str(f, s);
    else fputs("null", f);
}

/* ---- a record's keys (sweep/record.def) -------------------------------------------------- */

/* record.def's `when`: where an integer key is written as a number (null elsewhere). */
static int when_ALWAYS(const struct dse_rec *r) { return 1; }
static int when_REPLICATED(const struct dse_rec *r) { return r->replicated; }
static int when_DIVERGED(const struct dse_rec *r) { return r->diverged_epoch > 0; }
static int when_STOPPED(const struct dse_rec *r) { return r->stopped_rung >= 0; }
static int when_MEASURED(const struct dse_rec *r) { return isfinite(r->latency_ms); }
static int when_RETRY(const struct dse_rec *r) { return r->failed_retry != 0; }
static int when_COMPRESS(const struct dse_rec *r) { return r->compress; }
static int when_COMPRESSED(const struct dse_rec *r) { return r->compressed_bytes >= 0; }

/* One key's value, by kind (record.def). */
static void put_ID(FILE *f, const struct dse_rec *r, const char *v, int when) { fprintf(f, "\"%s\"", v); }
static void put_INDEX(FILE *f, const struct dse_rec *r, int64_t v, int when) {
    fprintf(f, "%llu", (unsigned long long)(uint64_t)v);
}
static void put_COUNT(FILE *f, const struct dse_rec *r, int64_t v, int when) { fprintf(f, "%lld", (long long)v); }
#define put_MEM put_COUNT
static void put_REPLICATE(FILE *f, const struct dse_rec *r, int v, int when) { fprintf(f, "%d", v); }
#define put_BATCH put_REPLICATE
static void put_METAPARAMS(FILE *f, const struct dse_rec *r, const char *v, int when) {
    fprintf(f, "{\n%s\n  }", v ? v : "");
}
static void put_MB(FILE *f, const struct dse_rec *r, int64_t bytes, int when) { fprintf(f, "%.6f", (double)bytes / 1e6); }
static void put_MIB(FILE *f, const struct dse_rec *r, int64_t bytes, int when) {
    fprintf(f, "%.6f", (double)bytes / 1048576.0);
}
static void put_STATUS(FILE *f, const struct dse_rec *r, enum dse_rec_status v, int when) {
    fprintf(f, "\"%s\"", dse_rec_status_str(v));
}
static void put_STR(FILE *f, const struct dse_rec *r, const char *v, int when) { put_opt_str(f, v); }
static void put_FLOAT(FILE *f, const struct dse_rec *r, double v, int when) { put_float(f, (float)v); }
static void put_FIXED3(FILE *f, const struct dse_rec *r, double v, int when) { put_fixed(f, v, 3); }
static void put_FIXED1(FILE *f, const struct dse_rec *r, double v, int when) { put_fixed(f, v, 1); }
static void put_INT64(FILE *f, const struct dse_rec *r, int64_t v, int when) {
    if (when) fprintf(f, "%lld", (long long)v);
    else fputs("null", f);
}
static void put_INT(FILE *f, const struct dse_rec *r, int v, int when) { put_INT64(f, r, v, when); }
static void put_UINT64(FILE *f, const struct dse_rec *r, uint64_t v, int when) {
    if (when) fprintf(f, "%llu", (unsigned long long)v);
    else fputs("null", f);
}
static void put_EPOCHS(FILE *f, const struct dse_rec *r, const struct dse_epoch_result *ep, int when) {
    fputc('[', f);
    for (int e = 0; e < r->n_epochs; e++) {
        fputs(e ? ",\n    " : "\n    ", f);
        dse_rec_epoch_write(f, e + 1, &ep[e]);
    }
    fputs(r->n_epochs ? "\n  ]" : "]", f);
}
static void put_ATTEMPTS(FILE *f, const struct dse_rec *r, const struct dse_rec_attempt *att, int when) {
    fputc('[', f);
    for (int i = 0; i < r->n_att; i++) {
        const struct dse_rec_attempt *a = &att[i];
        fprintf(f, "%s\n    {\"worker\": ", i ? "," : "");
        put_str(f, a->worker);
        fprintf(f, ", \"lease_gen\": %lld, \"threads\": %d, \"device\": ", (long long)a->lease_gen, a->threads);
        put_opt_str(f, a->device);
        fputs(", \"precision\": ", f);
        put_opt_str(f, a->precision);
        fprintf(f, ", \"from_epoch\": %d, \"to_epoch\": %d, \"seconds\": ", a->from_epoch, a->to_epoch);
        put_fixed(f, a->seconds, 3);
        fputs(", \"end\": ", f);
        put_opt_str(f, a->end);
        if (a->note[0]) {
            fputs(", \"note\": ", f);
            put_str(f, a->note);
        }
        fputc('}', f);
    }
    fputs(r->n_att ? "\n  ]" : "]", f);
}

#define DSE_REC_LINE_OPEN "{\n  " /* record.def's `line`: what goes before the key */
#define DSE_REC_LINE_NL   ",\n  "
#define DSE_REC_LINE_SP   ", "
#define DSE_REC_LINE_IF   ",\n  "
#define DSE_REC_SHOW_OPEN 1 /* written where `when` does not hold too (as null) */
#define DSE_REC_SHOW_NL   1
#define DSE_REC_SHOW_SP   1
#define DSE_REC_SHOW_IF   0

/* record.def's summary keys, from the epochs and the status: top1, top5 and loss are the last
 * epoch's once training finished (done) or stopped at a rung; every epoch trains on the same
 * number of images, so the overall rate is the harmonic mean of the epochs' rates
 * (evaluation excluded, as in each epoch's). */
double dse_rec_top1(const struct dse_rec *r) {
    const int show = r->n_epochs && (r->status == DSE_REC_DONE || r->status == DSE_REC_STOPPED);
    return show ? r->ep[r->n_epochs - 1].top1 : NAN;
}

static void rec_summarize(struct dse_rec *r) {
    const struct dse_epoch_result *last = r->n_epochs ? &r->ep[r->n_epochs - 1] : NULL;
    const int show = last && (r->status == DSE_REC_DONE || r->status == DSE_REC_STOPPED);
    double secs = 0, inv = 0;
    int rated = 0;
    for (int e = 0; e < r->n_epochs; e++) {
        secs += r->ep[e].seconds;
        if (r->ep[e].img_per_s > 0) inv += 1.0 / r->ep[e].img_per_s, rated++;
    }
    r->top1 = dse_rec_top1(r);
    r->top5 = show ? last->top5 : NAN;
    r->loss = show ? last->test_loss : NAN;
    r->epochs_done = r->n_epochs;
    r->train_seconds = secs;
    r->img_per_s = rated ? rated / inv : NAN;
}

#define DSE_REC_FILE_HEAD    DSE_REC_PUT_HEAD /* record.def's `file`: the least part that holds the key */
#define DSE_REC_FILE_BOTH    DSE_REC_PUT_CREATED
#define DSE_REC_FILE_TRAINED DSE_REC_PUT_TRAINED

void dse_rec_put(FILE *f, struct dse_rec *r, enum dse_rec_part part) {
    if (part == DSE_REC_PUT_TRAINED) rec_summarize(r);
#define DSE_REC(key, field, kind, absent, lo, hi, line, when, file, reports)                        \
    if (DSE_REC_FILE_##file <= part && (DSE_REC_SHOW_##line || when_##when(r))) {                  \
        fputs(DSE_REC_LINE_##line "\"" key "\": ", f);                                             \
        put_##kind(f, r, r->field, when_##when(r));                                                 \
    }
#include "sweep/record.def"
#undef DSE_REC
    if (part != DSE_REC_PUT_HEAD) fputs("\n}\n", f);
}

/* ---- a record's keys (sweep/record.def), by kind ---------------------------------------- */

/* The file name's stem (path's last part without ".json"). */
static enum dse_status read_ID(const char *path, const struct dse_json *root, const char *key, struct dse_rec *r,
                               char (*out)[DSE_ID_SIZE], const char *absent, int64_t lo, int64_t hi,
                               struct dse_err *err) {
    const struct dse_json *v;
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    enum dse_status st = dse_json_member(path, root, key, DSE_JSON_WANT_STR, 0, &v, err);
    if (st) return st;
    size_t stem = strlen(name) - 5; /* without ".json" */
    if (strlen(v->str) != stem || strncmp(v->str, name, stem) != 0)
        return dse_json_bad(err, path, v->line, "\"%s\" = \"%.64s\" does not match the file name; expected \"%.*s\"", key,
                   v->str, (int)(stem < 64 ? stem : 64), name);
    if (stem >= sizeof *out)
        return dse_json_bad(err, path, v->line, "\"%s\" = \"%.64s\" is too long; expected \"c\" and 16 hex digits (and \"r\" "
                   "and a replicate number for a replicate)", key, v->str);
    dse_strlcpy(*out, v->str, sizeof *out);
    return DSE_OK;
}

/* A required integer >= 0. */
static enum dse_status read_COUNT(const char *path, const struct dse_json *root, const char *key, struct dse_rec *r,
                                  int64_t *out, int64_t absent, int64_t lo, int64_t hi, struct dse_err *err) {
    return dse_json_count(path, root, key, out, err);
}
#define read_INDEX read_COUNT

/* An integer >= 0; absent or null gives absent. */
static enum dse_status read_MEM(const char *path, const struct dse_json *root, const char *key, struct dse_rec *r,
                                int64_t *out, int64_t absent, int64_t lo, int64_t hi, struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status st = dse_json_member(path, root, key, DSE_JSON_WANT_INT, 1, &v, err);
    if (st) return st;
    if (v && v->integer < 0)
        return dse_json_bad(err, path, v->line, "\"%s\" = %" PRId64 " is negative; expected an integer >= 0 or null", key,
                   v->integer);
    *out = v ? v->integer : absent;
    return DSE_OK;
}

/* An integer in [lo, hi]; absent or null gives absent. */
static enum dse_status read_REPLICATE(const char *path, const struct dse_json *root, const char *key,
                                      struct dse_rec *r, int *out, int absent, int64_t lo, int64_t hi,
                                      struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status st = dse_json_member(path, root, key, DSE_JSON_WANT_INT, 1, &v, err);
    if (st) return st;
    if (v && (v->integer < lo || v->integer > hi))
        return dse_json_bad(err, path, v->line, "\"%s\" = %" PRId64 " is out of range; expected %" PRId64 " to %" PRId64, key,
                   v->integer, lo, hi);
    *out = v ? (int)v->integer : absent;
    return DSE_OK;
}

/* A required object; the record keeps no copy (the report's dse_cand.metaparams does). */
static enum dse_status read_METAPARAMS(const char *path, const struct dse_json *root, const char *key,
                                       struct dse_rec *r, const char **out, const char *absent, int64_t lo,
                                       int64_t hi, struct dse_err *err) {
    const struct dse_json *v;
    return dse_json_member(path, root, key, DSE_JSON_WANT_OBJ, 0, &v, err);
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
    enum dse_status st = dse_json_member(path, root, key, DSE_JSON_WANT_INT, 1, &v, err);
    if (st) return st;
    *out = v ? v->integer : absent;
    if (*out < lo || *out > hi)
        return dse_json_bad(err, path, v->line, "\"%s\" = %" PRId64 " is out of range; expected %" PRId64 " to %" PRId64
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
    enum dse_status st = dse_json_member(path, root, key, DSE_JSON_WANT_NUM, 1, &v, err);
    *out = absent;
    if (st || !v) return st;
    if (!(v->number >= lo && v->number <= hi))
        return dse_json_bad(err, path, v->line, "\"%s\" = %.40s is out of range; expected a number in [%g, %g] or null", key,
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
    enum dse_status st = dse_json_member(path, root, key, DSE_JSON_WANT_STR, 1, &v, err);
    dse_strlcpy(*out, absent, (int)hi + 1);
    if (st || !v) return st;
    if ((int64_t)v->len < lo || (int64_t)v->len > hi)
        return dse_json_bad(err, path, v->line, "\"%s\" is %zu bytes long; expected %" PRId64 " to %" PRId64, key, v->len,
                   lo, hi);
    dse_strlcpy(*out, v->str, (int)hi + 1);
    return DSE_OK;
}

static enum dse_status read_STATUS(const char *path, const struct dse_json *root, const char *key, struct dse_rec *r,
                                   enum dse_rec_status *out, int absent, int64_t lo, int64_t hi,
                                   struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status st = dse_json_member(path, root, key, DSE_JSON_WANT_STR, 0, &v, err);
    if (st) return st;
    int k = dse_rec_status_from_str(v->str);
    if (k < 0) {
        char known[160]; /* "pending, pruned, ... or stopped", from the one table */
        int o = 0;
        for (int j = 0; j < DSE_REC_COUNT && o < (int)sizeof known; j++)
            o += snprintf(known + o, sizeof known - (size_t)o, "%s%s", j ? (j == DSE_REC_COUNT - 1 ? " or " : ", ") : "",
                          dse_rec_status_str((enum dse_rec_status)j));
        return dse_json_bad(err, path, v->line, "\"%s\" = \"%.64s\" is not a known status; expected %s", key, v->str, known);
    }
    *out = (enum dse_rec_status)k;
    return DSE_OK;
}

/* One value of a per_epoch entry: absent, null, a number, or for a count an integer >= 0. */
static enum dse_status epoch_value(const char *path, int e, const struct dse_json *v, const char *key, int count,
                                   struct dse_err *err) {
    if (!v || v->type == DSE_JSON_NULL) return DSE_OK;
    if (v->type != DSE_JSON_NUMBER || (count && (!v->is_int || v->integer < 0)))
        return dse_json_bad(err, path, v->line, "\"per_epoch\"[%d].\"%s\" is %s; expected %s or null", e, key,
                   v->type == DSE_JSON_NUMBER ? "not a whole number >= 0" : dse_json_a_type(v->type),
                   count ? "an integer >= 0" : "a number");
    return DSE_OK;
}

/* [{"epoch": 1, <engine/epoch.def's keys>}, {"epoch": 2, ...}, ...]: at most hi entries, in order. */
static enum dse_status read_EPOCHS(const char *path, const struct dse_json *root, const char *key, struct dse_rec *r,
                                   struct dse_epoch_result **out, int absent, int64_t lo, int64_t hi,
                                   struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status st = dse_json_member(path, root, key, DSE_JSON_WANT_ARR, 1, &v, err);
    r->n_epochs = 0;
    if (st || !v) return st;
    if (v->n > hi)
        return dse_json_bad(err, path, v->line, "\"%s\" holds %d entries; expected at most %" PRId64 " (one per epoch)", key,
                   v->n, hi);
    for (int e = 0; e < v->n; e++) {
        const struct dse_json *it = &v->items[e], *ep = dse_json_get(it, "epoch"), *t1 = dse_json_get(it, "top1");
        if (it->type != DSE_JSON_OBJECT || !ep || ep->type != DSE_JSON_NUMBER || !ep->is_int || ep->integer < 1 ||
            (t1 && t1->type != DSE_JSON_NULL && (t1->type != DSE_JSON_NUMBER || t1->number < 0 || t1->number > 1)))
            return dse_json_bad(err, path, it->line, "\"%s\"[%d] is not {\"epoch\": k >= 1, \"top1\": a number in [0, 1] "
                       "or null, ...} (docs/sweep-dir.md)", key, e);
        if (ep->integer != e + 1)
            return dse_json_bad(err, path, ep->line, "\"%s\"[%d] is epoch %" PRId64 "; expected epoch %d (one entry per "
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

/* Not checked: any array, or nothing (dse_rec_attempts_read reads what it can). */
static enum dse_status read_ATTEMPTS(const char *path, const struct dse_json *root, const char *key,
                                     struct dse_rec *r, struct dse_rec_attempt **out, int absent, int64_t lo,
                                     int64_t hi, struct dse_err *err) {
    return dse_rec_attempts_read(r, dse_json_get(root, key), err);
}

/* ---- a candidate record ------------------------------------------------------------------- */

/* The checks of a candidate file parsed into root (path: its path), filling r (empty:
 * dse_rec_init): every key of sweep/record.def, in its order. */
static enum dse_status check_candidate(const char *path, const struct dse_json *root, struct dse_rec *r,
                                       struct dse_err *err) {
    enum dse_status st;
    if (root->type != DSE_JSON_OBJECT)
        return dse_json_bad(err, path, root->line, "the file holds %s; expected an object "
                   "(docs/sweep-dir.md)", dse_json_a_type(root->type));
#define DSE_REC(key, field, kind, absent, lo, hi, line, when, file, reports) \
    if ((st = read_##kind(path, root, key, r, &r->field, absent, lo, hi, err))) return st;
#include "sweep/record.def"
#undef DSE_REC
    return DSE_OK;
}

enum dse_status dse_rec_from_json(const char *path, const struct dse_json *root, struct dse_rec *r,
                                  struct dse_err *err) {
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    size_t n = strlen(name);
    dse_rec_deinit(r);
    if (n < 6 || strcmp(name + n - 5, ".json"))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: a candidate file's name is <id>.json", path);
    return check_candidate(path, root, r, err);
}

/* ---- the workers', dse status's and dse export's reader of one record ----------------------- */

enum dse_status dse_rec_read_path(const char *path, struct dse_rec *r, struct dse_err *err) {
    struct dse_json_doc *doc = NULL;
    struct dse_err e = { 0 };
    dse_rec_deinit(r);
    enum dse_status st = dse_json_load(path, &doc, &e);
    if (st) {
        if (e.line) return dse_err_set(err, st, NULL, 0, "%s:%d: %s", path, e.line, e.msg);
        return dse_err_set(err, st, NULL, 0, "%s: %s", path, e.msg);
    }
    /* The one strict reader, so every door (workers, status, export)
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
