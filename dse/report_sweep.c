/* report_sweep.c: `dse report DIR`: reads a sweep directory (docs/sweep-dir.md), picks
 * the Pareto frontier (analysis/pareto.c) and prints every candidate as Markdown, CSV,
 * TeX or JSON; optionally plots accuracy (or the other cost) against model size or against
 * FLOPs as SVG files.
 * Formats, frontier rules and the stable JSON keys: docs/report.md. */
#include "dse/report.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "base/fs.h"
#include "sweep/json_read.h"
#include "sweep/lease.h"
#include "sweep/search.h"
#include "sweep/sweep_impl.h"
#include "sweep/sweep_read.h"

#define MIB        (1024.0 * 1024.0)


/* ---- measured latency (a search minimizing latency_ms, docs/space-format.md) ------------- */

/* Row c's measured latency: its record's, or with replicates the mean over the replicates
 * that have one; NaN if none. */
static double row_latency(const struct dse_cand *c) {
    if (!c->reps) return c->rec.latency_ms;
    double sum = 0;
    int n = 0;
    for (int r = 0; r < c->n_reps; r++)
        if (isfinite(c->reps[r].rec.latency_ms)) sum += c->reps[r].rec.latency_ms, n++;
    return n ? sum / n : NAN;
}

/* 1 if some row has a measured latency: the reports add a latency column then (and only
 * then, so that other sweeps' reports are as they were). */
static int any_latency(const struct dse_sweep_view *s) {
    for (int i = 0; i < s->n; i++)
        if (isfinite(row_latency(&s->c[i]))) return 1;
    return 0;
}

/* ---- formatting helpers ------------------------------------------------------------ */

/* Shortest text that reads back as the same double. */
static const char *fmt_num(char *buf, size_t size, double v) { return dse_fmt_shortest(buf, size, v, 0); }

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

/* Metaparameter key's value v as text for tables, CSV, JSON and labels: strings as they
 * are; a number written with a fraction or exponent, or of a REAL key in mp.def, as
 * dse_fmt_real writes it (a writer's %.17g turns 0.1 into 0.10000000000000001, an older
 * one's %.17g 1.0 into 1; this shows 0.1 and 1.0); other integers as written. */
static const char *fmt_value(char *buf, size_t size, const char *key, const struct dse_json *v) {
    if (!v) return "-";
    const int k = dse_mp_find(key);
    switch (v->type) {
    case DSE_JSON_NULL:   return "null";
    case DSE_JSON_BOOL:   return v->boolean ? "true" : "false";
    case DSE_JSON_NUMBER:
        if (!strpbrk(v->str, ".eE") && (k < 0 || dse_mp_info[k].type != DSE_MP_TYPE_REAL)) return v->str;
        return dse_fmt_real(buf, size, v->number);
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

/* A record's optional string: "" (absent or null) as null. */
static void json_opt_str(FILE *f, const char *s) { json_cstr(f, s[0] ? s : NULL); }

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

/* A record's "metaparams" object, its numbers as fmt_value writes them (sr 1.0, not 1). */
static void json_metaparams(FILE *f, const struct dse_json *mp) {
    char b[64];
    if (mp->type != DSE_JSON_OBJECT) {
        json_value(f, mp);
        return;
    }
    fputc('{', f);
    for (int i = 0; i < mp->n; i++) {
        const struct dse_json *v = &mp->members[i].value;
        if (i) fputs(", ", f);
        dse_json_write_str(f, mp->members[i].key, mp->members[i].key_len);
        fputs(": ", f);
        if (v->type == DSE_JSON_NUMBER) fputs(fmt_value(b, sizeof b, mp->members[i].key, v), f);
        else json_value(f, v);
    }
    fputc('}', f);
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

static int any_top(const struct dse_sweep_view *s, int five) {
    for (int i = 0; i < s->n; i++)
        if (five ? !isnan(s->c[i].rec.top5) : !isnan(s->c[i].rec.top1)) return 1;
    return 0;
}

static const char *objective(const struct dse_sweep_view *s) {
    return s->trained ? "max top1, min model size" : "min model size, min FLOPs";
}

static const char *status_cell(char *buf, size_t size, const struct dse_cand *c) {
    if (c->rec.status == DSE_REC_PRUNED && c->rec.pruned_by[0])
        snprintf(buf, size, "pruned: %s", c->rec.pruned_by);
    else if (c->rec.status == DSE_REC_STOPPED && c->rec.stopped_rung >= 0)
        snprintf(buf, size, "stopped at rung %d (epoch %d)", c->rec.stopped_rung, c->rec.stopped_epoch);
    else if (c->rec.status == DSE_REC_DIVERGED && c->rec.diverged_epoch > 0)
        snprintf(buf, size, "diverged in epoch %d (iteration %" PRId64 ")", c->rec.diverged_epoch, c->rec.diverged_iter);
    else if (c->rec.status == DSE_REC_FAILED && c->rec.failed_why[0])
        snprintf(buf, size, "failed: %.200s", c->rec.failed_why);
    else
        snprintf(buf, size, "%s", dse_rec_status_str(c->rec.status));
    return buf;
}

/* The human tables (MD and TeX): pretty numbers. frontier_col adds the marker column. */
static void table_human(struct tbl *t, const struct dse_sweep_view *s, struct dse_cand *const *rows, int n,
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
    tbl_head(t, "GMAC", 1);
    tbl_head(t, "train mem MiB", 1);
    tbl_head(t, "status", 0);
    if (s->replicates > 1) tbl_head(t, "n", 1); /* replicates with a top-1, of the architecture's */
    if (t1) tbl_head(t, s->replicates > 1 ? "top-1 % (mean ± std)" : "top-1 %", 1);
    if (t5) tbl_head(t, "top-5 %", 1);
    const int latency = any_latency(s);
    if (latency) tbl_head(t, "latency ms", 1);
    if (frontier_col) {
        t->raw_col = t->ncol;
        tbl_head(t, "frontier", 0);
    }
    for (int i = 0; i < n; i++) {
        const struct dse_cand *c = rows[i];
        tbl_add(t, c->rec.id);
        tbl_add(t, fmt_int(b, sizeof b, c->rec.index, 0));
        for (int v = 0; v < s->n_varied; v++)
            tbl_add(t, fmt_value(b, sizeof b, s->varied[v], dse_json_get(c->metaparams, s->varied[v])));
        tbl_add(t, fmt_int(b, sizeof b, c->rec.params, 1));
        snprintf(b, sizeof b, "%.2f", (double)c->rec.model_bytes / 1e6);
        tbl_add(t, b);
        snprintf(b, sizeof b, "%.2f", (double)c->rec.model_bytes / MIB);
        tbl_add(t, b);
        tbl_add(t, fmt_sig3(b, sizeof b, (double)c->rec.flops / 1e9));
        tbl_add(t, fmt_sig3(b, sizeof b, (double)dse_cost_macs(c->rec.flops) / 1e9));
        if (c->train_mem_bytes >= 0) snprintf(b, sizeof b, "%.1f", (double)c->train_mem_bytes / MIB);
        else snprintf(b, sizeof b, "-");
        tbl_add(t, b);
        tbl_add(t, status_cell(b, sizeof b, c));
        if (s->replicates > 1) {
            snprintf(b, sizeof b, "%d/%d", c->top1_n, c->n_reps);
            tbl_add(t, b);
        }
        if (t1) {
            if (!isnan(c->rec.top1) && c->reps && !isnan(c->top1_std))
                snprintf(b, sizeof b, "%.2f ± %.2f", 100.0 * c->rec.top1, 100.0 * c->top1_std);
            else if (!isnan(c->rec.top1)) snprintf(b, sizeof b, c->reps ? "%.2f" : "%.1f", 100.0 * c->rec.top1);
            else snprintf(b, sizeof b, "-");
            tbl_add(t, b);
        }
        if (t5) {
            if (!isnan(c->rec.top5)) snprintf(b, sizeof b, "%.1f", 100.0 * c->rec.top5);
            else snprintf(b, sizeof b, "-");
            tbl_add(t, b);
        }
        if (latency) tbl_add(t, isfinite(row_latency(c)) ? fmt_sig3(b, sizeof b, row_latency(c)) : "-");
        if (frontier_col) tbl_add(t, c->on_front ? mark : "");
    }
}

static void counts_text(char *buf, size_t size, const struct dse_sweep_view *s) {
    int cnt[DSE_REC_COUNT] = { 0 };
    for (int i = 0; i < s->n; i++) cnt[s->c[i].rec.status]++;
    int o = snprintf(buf, size, "%d pruned, %d pending, %d done", cnt[DSE_REC_PRUNED], cnt[DSE_REC_PENDING],
                     cnt[DSE_REC_DONE]);
    for (int k = 0; k < DSE_REC_COUNT; k++)
        if (cnt[k] && k != DSE_REC_PRUNED && k != DSE_REC_PENDING && k != DSE_REC_DONE && o < (int)size)
            o += snprintf(buf + o, size - (size_t)o, ", %d %s", cnt[k], dse_rec_status_str((enum dse_rec_status)k));
}

static void header_line(char *buf, size_t size, const struct dse_sweep_view *s) {
    char counts[200], decl[64] = "";
    counts_text(counts, sizeof counts, s);
    if (s->declared != s->n && s->declared > 0) /* 0: a search bounded by hours only */
        snprintf(decl, sizeof decl, s->replicates > 1 ? ", of %" PRId64 " listed in sweep.json"
                                                       : " of %" PRId64 " listed in sweep.json", s->declared);
    if (s->replicates > 1) /* a row is an architecture, its status the group's; the candidates (records)
                              counted as dse status and dse sweep count them */
        snprintf(buf, size, "Sweep %s: %d candidates (%d architecture%s x %d replicates%s); by architecture: %s",
                 s->space, s->n_all, s->n, s->n == 1 ? "" : "s", s->replicates, decl, counts);
    else
        snprintf(buf, size, "Sweep %s: %d candidate%s%s (%s)", s->space, s->n, s->n == 1 ? "" : "s", decl, counts);
}

/* A trained sweep where no candidate is pending or running any more: its best is final. */
static const struct dse_cand *final_best(const struct dse_sweep_view *s) {
    int done, fit;
    for (int i = 0; i < s->n; i++)
        if (s->c[i].rec.status == DSE_REC_PENDING || s->c[i].rec.status == DSE_REC_RUNNING) return NULL;
    return s->trained ? dse_sweep_best(s, 0, &done, &fit) : NULL;
}

/* The record whose weights stand for row c when it is exported: c's own, or with
 * replicates replicate 0's if it has them (done, or stopped at a rung), else the first
 * replicate's that has (a group is done when any replicate is). */
static const char *export_id(const struct dse_cand *c) {
    for (int r = 0; r < c->n_reps && c->reps; r++)
        if (c->reps[r].rec.status == DSE_REC_DONE || c->reps[r].rec.status == DSE_REC_STOPPED) return c->reps[r].rec.id;
    return c->rec.id;
}

static void best_out(const struct dse_cand *c, struct dse_report_best *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!c) return;
    snprintf(out->id, sizeof out->id, "%s", export_id(c));
    out->index = c->rec.index;
    out->top1 = c->rec.top1;
    out->model_bytes = c->rec.model_bytes;
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

static void write_md_next(FILE *f, const struct dse_sweep_view *s, const struct dse_cand *c) {
    char cmd[4400], word[4200];
    const char *id = export_id(c);
    dse_report_export_cmd(cmd, sizeof cmd, s->dir, id);
    shell_word(word, sizeof word, s->dir);
    fprintf(f, "\n## Next\n\nBest trained candidate: %s (index %" PRId64 ", top-1 %.2f%%, %.2f MB). "
               "Export it to ONNX:\n\n    %s\n\nWith --format caffe (and --out %s) it writes Caffe's "
               "%s.prototxt and %s.caffemodel instead; dse export %s --best --max-mb M takes the most accurate "
               "candidate within M MB.\n",
            c->rec.id, c->rec.index, 100.0 * c->rec.top1, (double)c->rec.model_bytes / 1e6, cmd, id, id, id, word);
}

/* Epochs and seconds spent against full training of every unpruned candidate. */
struct effort {
    int64_t epochs, epochs_full;
    double  seconds, seconds_full;
    int     unpruned, final;
};

/* Every record of the sweep: each replicate's, where it has replicates. */
static const struct dse_cand *records(const struct dse_sweep_view *s, int *n) {
    *n = s->all ? s->n_all : s->n;
    return s->all ? s->all : s->c;
}

static void effort_of(const struct dse_sweep_view *s, struct effort *e) {
    memset(e, 0, sizeof *e);
    double per_epoch = 0;
    int timed = 0, n;
    const struct dse_cand *all = records(s, &n);
    for (int i = 0; i < n; i++) {
        const struct dse_cand *c = &all[i];
        if (c->rec.status == DSE_REC_PRUNED) continue;
        e->unpruned++;
        e->final += c->rec.status != DSE_REC_PENDING && c->rec.status != DSE_REC_RUNNING;
        e->epochs += c->rec.epochs_done;
        e->seconds += c->rec.train_seconds;
        if (c->rec.epochs_done > 0 && c->rec.train_seconds > 0) {
            e->seconds_full += c->rec.train_seconds / c->rec.epochs_done * s->plan.epochs;
            per_epoch += c->rec.train_seconds / c->rec.epochs_done, timed++;
        }
    }
    e->epochs_full = (int64_t)e->unpruned * s->plan.epochs;
    for (int i = 0; i < n && timed; i++) /* candidates not trained yet: the mean epoch time */
        if (all[i].rec.status != DSE_REC_PRUNED && !(all[i].rec.epochs_done > 0 && all[i].rec.train_seconds > 0))
            e->seconds_full += per_epoch / timed * s->plan.epochs;
}

static int write_md_training(FILE *f, const struct dse_sweep_view *s) {
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
        snprintf(buf, sizeof buf, "%d", s->plan.halving == DSE_SWEEP_HALVING_ASHA ? r->n_reached
                                                                                  : r->n_promoted + r->n_stopped);
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

/* A sweep with replicates: the frontier is ranked by mean top-1; neighbours whose means
 * differ by less than the larger standard deviation are not a win either way. */
static void write_md_noise(FILE *f, const struct dse_sweep_view *s) {
    int n = 0;
    fprintf(f, "\nTop-1 is the mean over each architecture's replicates done with a top-1 (n), ± the sample "
               "standard deviation (n - 1); the frontier is ranked by the mean.\n");
    for (int k = 1; k < s->n_front; k++) {
        const struct dse_cand *a = s->front[k - 1], *b = s->front[k];
        if (!dse_sweep_within_noise(a, b)) continue;
        if (!n++) fputc('\n', f);
        fprintf(f, "- Within noise: %s (%.2f) and %s (%.2f) differ by %.2f points, less than the larger standard "
                   "deviation (%.2f): not a win either way.\n", a->rec.id, 100.0 * a->rec.top1, b->rec.id,
                100.0 * b->rec.top1, 100.0 * fabs(a->rec.top1 - b->rec.top1),
                100.0 * fmax(isnan(a->top1_std) ? 0 : a->top1_std, isnan(b->top1_std) ? 0 : b->top1_std));
    }
}

/* An evolution sweep's search log (docs/sweep-dir.md, "Search"): *lg (lg->gen 0 if the
 * sweep has none or it cannot be read: the report goes on without it), the hypervolume
 * of its results in recorded order (dse_evo_hv_curve; malloc'ed, NULL if none) and the
 * first cost objective's name (the log's header, as dse_search_read parsed it). */
struct search_view {
    struct dse_search_log lg;
    double *hv;
    double  ref_top1, ref_cost;
    char    cost[32];
};

static void search_view_load(const struct dse_sweep_view *s, struct search_view *v) {
    struct dse_err err = { 0 };
    memset(v, 0, sizeof *v);
    if (dse_search_read(s->dir, &v->lg, &err) || v->lg.gen == 0) {
        dse_search_log_free(&v->lg);
        return;
    }
    snprintf(v->cost, sizeof v->cost, "%s", v->lg.n_cost ? v->lg.cost[0] : "cost");
    if (v->lg.n_res > 0 && (v->hv = malloc(sizeof *v->hv * (size_t)v->lg.n_res)) &&
        !dse_evo_hv_curve(v->lg.res, v->lg.n_res, v->hv, &v->ref_top1, &v->ref_cost)) {
        free(v->hv); /* no usable result yet (all failed or diverged): no curve */
        v->hv = NULL;
    }
}

static void search_view_free(struct search_view *v) {
    dse_search_log_free(&v->lg);
    free(v->hv);
}

/* "## Search": progress of an evolution sweep and its hypervolume against candidates
 * trained, at about eight evaluation counts and the last. */
static int write_md_search(FILE *f, const struct dse_sweep_view *s) {
    struct search_view v;
    search_view_load(s, &v);
    if (!v.lg.gen) return 0;
    fprintf(f, "\n## Search\n\nEvolution (search/log-%" PRId64 "): %d proposed, %d results recorded%s.\n", v.lg.gen,
            v.lg.n_prop, v.lg.n_res, v.lg.ended ? ", ended" : "");
    int oom = 0;
    if (v.hv) {
        char b[64];
        const char *unit = s->replicates > 1 ? "architectures" : "candidates"; /* a result per architecture */
        fprintf(f, "Hypervolume of (top-1 up, %s down) against %s trained, in the order their results were "
                   "recorded, against the reference point (top-1 %.2f%%, %s %s): the worst top-1 and 1.01 x the "
                   "largest %s among the results.\n\n", v.cost, unit, 100.0 * v.ref_top1, v.cost,
                fmt_sig3(b, sizeof b, v.ref_cost), v.cost);
        struct tbl t = { 0 };
        tbl_head(&t, s->replicates > 1 ? "architectures trained" : "candidates trained", 1);
        tbl_head(&t, "hypervolume", 1);
        tbl_head(&t, "of the last", 1);
        const int n = v.lg.n_res, step = n > 8 ? (n + 7) / 8 : 1;
        const double last = v.hv[n - 1];
        for (int i = step - 1;; i += step) {
            if (i > n - 1) i = n - 1;
            snprintf(b, sizeof b, "%d", i + 1);
            tbl_add(&t, b);
            tbl_add(&t, fmt_sig3(b, sizeof b, v.hv[i]));
            snprintf(b, sizeof b, "%.1f%%", last > 0 ? 100.0 * v.hv[i] / last : 0);
            tbl_add(&t, b);
            if (i == n - 1) break;
        }
        oom = t.oom;
        if (!oom) tbl_print_md(f, &t);
        tbl_free(&t);
    }
    search_view_free(&v);
    return oom;
}

/* best: the finished sweep's best candidate (final_best), or NULL. */
static int write_md(FILE *f, const struct dse_sweep_view *s, const struct dse_cand *best) {
    char       line[700];
    struct tbl t = { 0 };
    header_line(line, sizeof line, s);
    fprintf(f, "# %s\n\n", line);
    fprintf(f, "Directory: %s. Varied: ", s->dir);
    for (int v = 0; v < s->n_varied; v++) fprintf(f, "%s%s", v ? ", " : "", s->varied[v]);
    fprintf(f, "%s. Sizes: 4 bytes per value, MB = 10^6 bytes, MiB = 2^20 bytes; GFLOP = "
               "forward, one image, 2 per multiply-add; GMAC = multiply-adds = GFLOP / 2.\n\n", s->n_varied ? "" : "none");
    table_human(&t, s, s->by_size, s->n, 1, "★");
    int oom = t.oom;
    if (!oom) tbl_print_md(f, &t);
    tbl_free(&t);
    fprintf(f, "\n## Frontier (%s): %d of %d %s\n\n", objective(s), s->n_front, s->n,
            s->replicates > 1 ? "architectures" : "candidates");
    memset(&t, 0, sizeof t);
    table_human(&t, s, s->front, s->n_front, 0, "");
    oom |= t.oom;
    if (!oom) tbl_print_md(f, &t);
    tbl_free(&t);
    if (!oom && s->replicates > 1) write_md_noise(f, s);
    if (!oom && s->has_plan) oom = write_md_training(f, s);
    if (!oom) oom = write_md_search(f, s);
    if (!oom && best) write_md_next(f, s, best);
    return oom;
}

/* 1 if c is on the frontier within noise of a neighbour there (dse_sweep_within_noise). */
static int front_noise(const struct dse_sweep_view *s, const struct dse_cand *c) {
    for (int k = 0; k < s->n_front; k++)
        if (s->front[k] == c)
            return (k > 0 && dse_sweep_within_noise(s->front[k - 1], c)) ||
                   (k + 1 < s->n_front && dse_sweep_within_noise(c, s->front[k + 1]));
    return 0;
}

static int write_csv(FILE *f, const struct dse_sweep_view *s) {
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
    static const char *const rest[] = { "params", "model_bytes", "model_mb", "model_mib", "flops", "macs",
                                        "train_mem_bytes", "status", "pruned_by", "top1", "top5",
                                        "frontier" };
    for (int k = 0; k < DSE_ARRAY_LEN(rest); k++) tbl_head(&t, rest[k], 0);
    static const char *const trained[] = { "epochs_done", "stopped_rung", "stopped_epoch", "diverged_epoch" };
    for (int k = 0; s->has_plan && k < DSE_ARRAY_LEN(trained); k++) tbl_head(&t, trained[k], 0);
    static const char *const replicated[] = { "replicates", "top1_n", "top1_std", "within_noise" };
    for (int k = 0; s->replicates > 1 && k < DSE_ARRAY_LEN(replicated); k++) tbl_head(&t, replicated[k], 0);
    const int latency = any_latency(s);
    if (latency) tbl_head(&t, "latency_ms", 0);
    for (int i = 0; i < s->n; i++) {
        const struct dse_cand *c = s->by_size[i];
        tbl_add(&t, c->rec.id);
        tbl_add(&t, fmt_int(b, sizeof b, c->rec.index, 0));
        for (int v = 0; v < n_keys; v++) {
            const struct dse_json *mv = dse_json_get(c->metaparams, keys[v]);
            const int k = v < DSE_MP_COUNT ? v : -1; /* a key records leave out at its default */
            if (!mv && k >= 0 && dse_mp_info[k].id == DSE_MP_ID_IF_SET)
                tbl_add(&t, dse_mp_value_str((enum dse_mp_key)k, dse_mp_get(&dflt, (enum dse_mp_key)k), b, sizeof b));
            else
                tbl_add(&t, mv ? fmt_value(b, sizeof b, keys[v], mv) : "");
        }
        tbl_add(&t, fmt_int(b, sizeof b, c->rec.params, 0));
        tbl_add(&t, fmt_int(b, sizeof b, c->rec.model_bytes, 0));
        tbl_add(&t, fmt_num(b, sizeof b, (double)c->rec.model_bytes / 1e6));
        tbl_add(&t, fmt_num(b, sizeof b, (double)c->rec.model_bytes / MIB));
        tbl_add(&t, fmt_int(b, sizeof b, c->rec.flops, 0));
        tbl_add(&t, fmt_int(b, sizeof b, dse_cost_macs(c->rec.flops), 0));
        tbl_add(&t, c->train_mem_bytes >= 0 ? fmt_int(b, sizeof b, c->train_mem_bytes, 0) : "");
        tbl_add(&t, dse_rec_status_str(c->rec.status));
        tbl_add(&t, c->rec.pruned_by);
        tbl_add(&t, !isnan(c->rec.top1) ? fmt_num(b, sizeof b, c->rec.top1) : "");
        tbl_add(&t, !isnan(c->rec.top5) ? fmt_num(b, sizeof b, c->rec.top5) : "");
        tbl_add(&t, c->on_front ? "yes" : "");
        if (s->has_plan) {
            tbl_add(&t, fmt_int(b, sizeof b, c->rec.epochs_done, 0));
            tbl_add(&t, c->rec.stopped_rung >= 0 ? fmt_int(b, sizeof b, c->rec.stopped_rung, 0) : "");
            tbl_add(&t, c->rec.stopped_rung >= 0 ? fmt_int(b, sizeof b, c->rec.stopped_epoch, 0) : "");
            tbl_add(&t, c->rec.diverged_epoch > 0 ? fmt_int(b, sizeof b, c->rec.diverged_epoch, 0) : "");
        }
        if (s->replicates > 1) {
            tbl_add(&t, fmt_int(b, sizeof b, c->n_reps, 0));
            tbl_add(&t, fmt_int(b, sizeof b, c->top1_n, 0));
            tbl_add(&t, !isnan(c->top1_std) ? fmt_num(b, sizeof b, c->top1_std) : "");
            tbl_add(&t, front_noise(s, c) ? "yes" : "");
        }
        if (latency) tbl_add(&t, isfinite(row_latency(c)) ? fmt_num(b, sizeof b, row_latency(c)) : "");
    }
    int oom = t.oom;
    if (!oom) tbl_print_csv(f, &t);
    tbl_free(&t);
    free(keys);
    return oom;
}

static int write_tex(FILE *f, const struct dse_sweep_view *s) {
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

static int write_json(FILE *f, const struct dse_sweep_view *s, const struct dse_cand *best) {
    char b[64];
    fputs("{\"sweep\": ", f);
    json_cstr(f, s->space);
    if (s->replicates > 1) fprintf(f, ", \"replicates\": %d", s->replicates);
    fputs(", \"dir\": ", f);
    json_cstr(f, s->dir);
    fputs(", \"varied\": [", f);
    for (int v = 0; v < s->n_varied; v++) {
        if (v) fputs(", ", f);
        json_cstr(f, s->varied[v]);
    }
    fprintf(f, "], \"frontier_objective\": \"%s\",\n \"candidates\": [", objective(s));
    for (int i = 0; i < s->n; i++) {
        const struct dse_cand *c = &s->c[i];
        fputs(i ? ",\n  {\"id\": " : "\n  {\"id\": ", f);
        json_cstr(f, c->rec.id);
        fprintf(f, ", \"index\": %" PRId64 ", \"metaparams\": ", c->rec.index);
        json_metaparams(f, c->metaparams);
        fprintf(f, ",\n   \"params\": %" PRId64 ", \"model_bytes\": %" PRId64, c->rec.params, c->rec.model_bytes);
        fprintf(f, ", \"model_mb\": %s", fmt_num(b, sizeof b, (double)c->rec.model_bytes / 1e6));
        fprintf(f, ", \"model_mib\": %s", fmt_num(b, sizeof b, (double)c->rec.model_bytes / MIB));
        fprintf(f, ", \"flops\": %" PRId64 ", \"macs\": %" PRId64 ", \"train_mem_bytes\": ", c->rec.flops,
                dse_cost_macs(c->rec.flops));
        if (c->train_mem_bytes >= 0) fprintf(f, "%" PRId64, c->train_mem_bytes);
        else fputs("null", f);
        fprintf(f, ",\n   \"status\": \"%s\", \"pruned_by\": ", dse_rec_status_str(c->rec.status));
        json_opt_str(f, c->rec.pruned_by);
        fprintf(f, ", \"top1\": %s", !isnan(c->rec.top1) ? fmt_num(b, sizeof b, c->rec.top1) : "null");
        fprintf(f, ", \"top5\": %s", !isnan(c->rec.top5) ? fmt_num(b, sizeof b, c->rec.top5) : "null");
        fprintf(f, ", \"on_frontier\": %s", c->on_front ? "true" : "false");
        if (isfinite(row_latency(c))) fprintf(f, ", \"latency_ms\": %s", fmt_num(b, sizeof b, row_latency(c)));
        if (s->has_plan) {
            fprintf(f, ",\n   \"epochs_done\": %d, \"stopped_rung\": ", c->rec.epochs_done);
            if (c->rec.stopped_rung >= 0) fprintf(f, "%d, \"stopped_epoch\": %d", c->rec.stopped_rung, c->rec.stopped_epoch);
            else fputs("null, \"stopped_epoch\": null", f);
            fputs(", \"diverged_epoch\": ", f);
            if (c->rec.diverged_epoch > 0) fprintf(f, "%d, \"diverged_iter\": %" PRId64, c->rec.diverged_epoch, c->rec.diverged_iter);
            else fputs("null, \"diverged_iter\": null", f);
            fputs(", \"failed_why\": ", f);
            json_opt_str(f, c->rec.failed_why);
            fprintf(f, ", \"train_seconds\": %s", fmt_num(b, sizeof b, c->rec.train_seconds));
        }
        if (s->replicates > 1) {
            fprintf(f, ",\n   \"top1_n\": %d, \"top1_std\": %s, \"within_noise\": %s, \"replicates\": [", c->top1_n,
                    !isnan(c->top1_std) ? fmt_num(b, sizeof b, c->top1_std) : "null",
                    front_noise(s, c) ? "true" : "false");
            for (int r = 0; r < c->n_reps; r++) {
                const struct dse_rec *q = &c->reps[r].rec;
                fputs(r ? ",\n    {\"id\": " : "\n    {\"id\": ", f);
                json_cstr(f, q->id);
                fprintf(f, ", \"replicate\": %d, \"seed\": %" PRIu64 ", \"status\": \"%s\", \"top1\": %s", q->replicate,
                        q->seed, dse_rec_status_str(q->status), !isnan(q->top1) ? fmt_num(b, sizeof b, q->top1) : "null");
                fprintf(f, ", \"top5\": %s}", !isnan(q->top5) ? fmt_num(b, sizeof b, q->top5) : "null");
            }
            fputc(']', f);
        }
        fputc('}', f);
    }
    fputs(s->n ? "\n ],\n \"frontier\": [" : "],\n \"frontier\": [", f);
    for (int k = 0; k < s->n_front; k++) {
        if (k) fputs(", ", f);
        json_cstr(f, s->front[k]->rec.id);
    }
    fputc(']', f);
    if (s->has_plan) {
        struct effort e;
        effort_of(s, &e);
        fprintf(f, ",\n \"training\": {\"epochs\": %d, \"halving\": %s, \"early_stop\": \"%s\", \"eta\": %d, "
                   "\"rank\": \"%s\", \"finished\": %d, \"unpruned\": %d, \"epochs_trained\": %" PRId64
                   ", \"epochs_full\": %" PRId64,
                s->plan.epochs, s->plan.halving ? "true" : "false", dse_sweep_halving_str(s->plan.halving), s->plan.eta,
                dse_sweep_rank_str(s->plan.rank), e.final, e.unpruned, e.epochs, e.epochs_full);
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
    struct search_view sv;
    search_view_load(s, &sv);
    if (sv.lg.gen) {
        fprintf(f, ",\n \"search\": {\"gen\": %" PRId64 ", \"proposed\": %d, \"recorded\": %d, \"ended\": %s, "
                   "\"cost\": ", sv.lg.gen, sv.lg.n_prop, sv.lg.n_res, sv.lg.ended ? "true" : "false");
        json_cstr(f, sv.cost);
        if (sv.hv) {
            fprintf(f, ", \"ref_top1\": %s", fmt_num(b, sizeof b, sv.ref_top1));
            fprintf(f, ", \"ref_cost\": %s, \"hypervolume\": [", fmt_num(b, sizeof b, sv.ref_cost));
            for (int i = 0; i < sv.lg.n_res; i++) fprintf(f, "%s%s", i ? ", " : "", fmt_num(b, sizeof b, sv.hv[i]));
            fputc(']', f);
        }
        fputc('}', f);
    }
    search_view_free(&sv);
    fputs(",\n \"best\": ", f);
    if (best) {
        fputs("{\"id\": ", f);
        json_cstr(f, best->rec.id);
        fprintf(f, ", \"index\": %" PRId64 ", \"top1\": %s, \"export\": ", best->rec.index,
                fmt_num(b, sizeof b, best->rec.top1));
        char cmd[4400];
        dse_report_export_cmd(cmd, sizeof cmd, s->dir, export_id(best));
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
    const struct dse_cand *c;
    double             px, py;
    int                band;    /* drawn in the "not trained" strip */
    int                front;   /* on the frontier of the plot's view */
    char               label[160];
    char               alt[24]; /* "#<index>": drawn instead where the label has no room */
    int                use_alt;
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
 * labels already placed, with points, with error bars (bars, nb boxes), with the frontier
 * line and with the frame edge, its width measured (dse_report_text_width; frontier labels
 * are bold); ties go to the preferred position, which alternates above/below from point
 * to point. A label with no position free of labels, points, error bars and the edge is
 * drawn as its short form "#<index>" where that has one, else left out (anchor -1): the
 * point's tooltip still names it. fx, fy: the frontier line, nf points. */
static void place_labels(struct pt *p, int n, double fs, struct box frame, const struct box *bars, int nb,
                         const double *fx, const double *fy, int nf, double *lx, double *ly, int *anchor) {
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
            if ((pass == 0 && p[i].front) || (pass == 1 && !p[i].front && !p[i].band)
                || (pass == 2 && p[i].band))
                order[m++] = i;
    int np = 0;
    for (int r = 0; r < m; r++) {
        int        i = order[r];
        double     best = INFINITY, clash = INFINITY; /* clash: overlap with labels, points, bars, edge */
        int        bk = 0;
        struct box bb = { 0, 0, 0, 0 };
        p[i].use_alt = 0;
        for (int form = 0; form < 2 && clash > 0; form++) {
            if (form == 1 && (!p[i].alt[0] || p[i].band)) break;
            const double w = dse_report_text_width(form ? p[i].alt : p[i].label, fs, p[i].front);
            best = INFINITY;
            for (int t = 0; t < DSE_ARRAY_LEN(pos); t++) {
                int    k = (r % 2 && t < 2) ? 1 - t : t; /* every other point tries below first */
                double x = p[i].px + pos[k].dx, y = p[i].py + pos[k].dy;
                double x0 = pos[k].anchor == 0 ? x : pos[k].anchor == 1 ? x - w / 2 : x - w;
                struct box b = { .x0 = x0, .y0 = y - fs * 0.8, .x1 = x0 + w, .y1 = y + fs * 0.25 };
                double hard = 0.0;
                for (int j = 0; j < np; j++) hard += overlap(b, placed[j]);
                for (int j = 0; j < n; j++) {
                    struct box c = { .x0 = p[j].px - 6, .y0 = p[j].py - 6, .x1 = p[j].px + 6, .y1 = p[j].py + 6 };
                    hard += 2.0 * overlap(b, c);
                }
                for (int j = 0; j < nb; j++) hard += 4.0 * overlap(b, bars[j]);
                hard += 4.0 * ((b.x1 - b.x0) * (b.y1 - b.y0) - overlap(b, frame));
                const double cost = hard + line_cost(b, fx, fy, nf) + 0.01 * t;
                if (cost < best) best = cost, clash = hard, bk = k, bb = b;
            }
            p[i].use_alt = form;
        }
        if (clash > 0 && (p[i].band || p[i].use_alt || !p[i].alt[0])) {
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
    svg_text(f, p->c->rec.id);
    fputs(" ", f);
    svg_text(f, p->label);
    fputs("</title></circle>\n", f);
}

/* One row under the title: symbol, then text, left to right (text width estimated at
 * 0.55 em per character, generous for the generic sans-serif faces). */
/* Only the kinds the plot shows get an entry. */
static void write_legend(FILE *f, const struct dse_sweep_view *s, double x, double y, int plain, int front, int band,
                         int limit) {
    int pruned = 0, stopped = 0;
    for (int i = 0; i < s->n; i++) pruned |= s->c[i].rec.status == DSE_REC_PRUNED, stopped |= s->c[i].rec.status == DSE_REC_STOPPED;
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

/* The grid and tick labels of both axes. */
static void svg_grid(FILE *f, const struct axis *ax, const struct axis *ay, double left, double right, double top,
                     double axis_y) {
    fputs("<g font-size=\"11\" fill=\"#444\">\n", f);
    for (double k = ceil(ax->lo / ax->step - 1e-9); k * ax->step <= ax->hi + 1e-9 * ax->step; k++) {
        double v = k * ax->step, x = axis_px(ax, v);
        if (fabs(v) < ax->step * 1e-9) v = 0.0;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n",
                x, top, x, axis_y);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
                x, axis_y, x, axis_y + 5);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.*f</text>\n", x,
                axis_y + 18, ax->decimals, v);
    }
    for (double k = ceil(ay->lo / ay->step - 1e-9); k * ay->step <= ay->hi + 1e-9 * ay->step; k++) {
        double v = k * ay->step, y = axis_px(ay, v);
        if (fabs(v) < ay->step * 1e-9) v = 0.0;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n",
                left, y, right, y);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n",
                left - 5, y, left, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n", left - 8,
                y + 4, ay->decimals, v);
    }
    fputs("</g>\n", f);
}

#define XLABEL_SIZE  "model size (MB = 10^6 bytes, 4 bytes per parameter)"
#define XLABEL_FLOPS "forward GFLOP per image (2 per multiply-add; GMAC = GFLOP / 2)"

/* The plotting area's frame and both axis labels. */
static void svg_frame(FILE *f, double left, double right, double top, double axis_y, double bottom,
                      const char *xlabel, const char *ylabel) {
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"#444\"/>\n", left, top, right - left, axis_y - top);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" fill=\"#222\">"
               "%s</text>\n", (left + right) / 2, SVG_H - 28, xlabel);
    fprintf(f, "<text transform=\"translate(22 %.1f) rotate(-90)\" font-size=\"13\" "
               "text-anchor=\"middle\" fill=\"#222\">%s</text>\n", (top + bottom) / 2, ylabel);
}

/* The frontier of points (x, y) in x order as a step: the best value within each size
 * holds until the next point. */
static void svg_step(FILE *f, const double *x, const double *y, int n, const char *color) {
    if (n <= 0) return;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" stroke-linejoin=\"round\" points=\"",
            color);
    for (int k = 0; k < n; k++) {
        if (k) fprintf(f, " %.1f,%.1f", x[k], y[k - 1]);
        fprintf(f, "%s%.1f,%.1f", k ? " " : "", x[k], y[k]);
    }
    fputs("\"/>\n", f);
}

/* The two views of a sweep's plot: model size on x (--plot) or forward FLOPs (--plot-flops).
 * y is top-1 once the sweep is trained, else the other cost. Each view has its frontier. */
enum plot_x { PLOT_X_SIZE, PLOT_X_FLOPS };

static double view_x(enum plot_x v, const struct dse_cand *c) { /* MB (as max_model_mb) or GFLOP */
    return v == PLOT_X_FLOPS ? (double)c->rec.flops / 1e9 : (double)c->rec.model_bytes / 1e6;
}

/* Half an error bar on a trained plot's y axis (top-1 %): the replicates' standard deviation; 0 if none. */
static double bar(const struct dse_sweep_view *s, const struct dse_cand *c) {
    return s->trained && c->reps && !isnan(c->top1_std) ? 100.0 * c->top1_std : 0.0;
}

static double view_y(const struct dse_sweep_view *s, enum plot_x v, const struct dse_cand *c) {
    if (s->trained) return 100.0 * c->rec.top1;
    return v == PLOT_X_FLOPS ? (double)c->rec.model_bytes / 1e6 : (double)c->rec.flops / 1e9;
}

static const char *view_objective(const struct dse_sweep_view *s, enum plot_x v) {
    if (v == PLOT_X_SIZE) return objective(s);
    return s->trained ? "max top1, min FLOPs" : "min FLOPs, min model size";
}

/* The view's frontier into out (indices into s->c, by increasing x); returns its size. The
 * size view's is the sweep's own (s->front). The FLOPs view's is computed on (top-1,
 * FLOPs), or before training on (FLOPs, model size), over the candidates the sweep's rule
 * ranks (dse_sweep_ranked). x, y, scratch: room for s->n each. */
static int view_front(const struct dse_sweep_view *s, enum plot_x v, double *x, double *y, int *out, int *scratch) {
    if (v == PLOT_X_SIZE) {
        for (int k = 0; k < s->n_front; k++) out[k] = (int)(s->front[k] - s->c);
        return s->n_front;
    }
    for (int i = 0; i < s->n; i++) {
        const struct dse_cand *c = &s->c[i];
        x[i] = dse_sweep_ranked(s, c) ? (double)c->rec.flops : NAN;
        y[i] = s->trained ? c->rec.top1 : (double)c->rec.model_bytes;
    }
    return dse_pareto_front(x, y, s->n, s->trained, out, scratch);
}

/* p, lx, ly, anchor, fx, fy, front: room for s->n entries each; lim: the space's limits to draw. */
static void write_svg(FILE *f, const struct dse_sweep_view *s, enum plot_x view, const struct dse_sweep_limits *lim,
                      struct pt *p, double *lx, double *ly, int *anchor, double *fx, double *fy, int *front) {
    const double left = 84, right = SVG_W - 30, top = 92, axis_y = SVG_H - 70;
    const int    n_front = view_front(s, view, fx, fy, front, anchor); /* before fx, fy, anchor take pixels */
    /* each limit on the axis of its unit: MB (max_model_mb) and GFLOP (max_flops) */
    const double lim_xv = view == PLOT_X_FLOPS ? lim->gflop : lim->mb;
    const double lim_yv = view == PLOT_X_FLOPS ? lim->mb : lim->gflop;
    const char  *x_unit = view == PLOT_X_FLOPS ? "GFLOP" : "MB", *y_unit = view == PLOT_X_FLOPS ? "MB" : "GFLOP";
    int          band = 0;
    for (int i = 0; i < s->n; i++) band |= s->trained && isnan(s->c[i].rec.top1);
    const double bottom = band ? axis_y - 54 : axis_y; /* of the main area */
    double       xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (int i = 0; i < s->n; i++) {
        const struct dse_cand *c = s->by_size[i];
        double x = view_x(view, c);
        xlo = fmin(xlo, x), xhi = fmax(xhi, x);
        if (!s->trained || !isnan(c->rec.top1)) {
            double y = view_y(s, view, c), e = bar(s, c);
            ylo = fmin(ylo, y - e), yhi = fmax(yhi, y + e);
        }
    }
    /* a limit near the data is drawn (the axis stretched to it); one far beyond is not */
    const int lim_x = lim_xv > 0 && lim_xv <= xhi + (xhi - xlo) + 0.5 * xhi;
    const int lim_y = !s->trained && lim_yv > 0 && lim_yv <= yhi + (yhi - ylo) + 0.5 * yhi;
    if (lim_x) xlo = fmin(xlo, lim_xv), xhi = fmax(xhi, lim_xv);
    if (lim_y) ylo = fmin(ylo, lim_yv), yhi = fmax(yhi, lim_yv);
    struct axis ax, ay;
    axis_fit(&ax, xlo, xhi, left, right);
    axis_fit(&ay, ylo, yhi, bottom, top);
    int small = s->n > 40;
    double fs = small ? 9.0 : 11.0;

    for (int i = 0; i < s->n; i++) {
        const struct dse_cand *c = s->by_size[i];
        char   vb[48];
        int    o = 0;
        p[i].c = c;
        p[i].band = s->trained && isnan(c->rec.top1);
        p[i].front = 0;
        for (int k = 0; k < n_front && !p[i].front; k++) p[i].front = &s->c[front[k]] == c;
        p[i].px = axis_px(&ax, view_x(view, c));
        p[i].py = p[i].band ? axis_y - 24 : axis_px(&ay, view_y(s, view, c));
        p[i].label[0] = '\0';
        for (int v = 0; v < s->n_varied && o < (int)sizeof p[i].label; v++)
            o += snprintf(p[i].label + o, sizeof p[i].label - (size_t)o, "%s%s=%s", v ? " " : "",
                          s->varied[v],
                          fmt_value(vb, sizeof vb, s->varied[v], dse_json_get(c->metaparams, s->varied[v])));
        if (!s->n_varied) snprintf(p[i].label, sizeof p[i].label, "#%" PRId64, c->rec.index);
        utf8_trim(p[i].label);
        snprintf(p[i].alt, sizeof p[i].alt, "#%" PRId64, c->rec.index);
        p[i].use_alt = 0;
    }
    /* the frontier line, in x order (view_front's order) */
    int nf = 0;
    for (int k = 0; k < n_front; k++)
        for (int i = 0; i < s->n; i++)
            if (p[i].c == &s->c[front[k]]) fx[nf] = p[i].px, fy[nf++] = p[i].py;
    struct box frame = { .x0 = left + 2, .y0 = top + 2, .x1 = right - 2, .y1 = axis_y - 2 };
    struct box *bars = malloc(sizeof *bars * (size_t)(s->n ? s->n : 1)); /* error bars, as drawn below */
    int nb = 0;
    for (int i = 0; bars && i < s->n; i++) {
        double e = p[i].band ? 0 : bar(s, p[i].c);
        if (!(e > 0)) continue;
        double y0 = axis_px(&ay, view_y(s, view, p[i].c) - e), y1 = axis_px(&ay, view_y(s, view, p[i].c) + e);
        bars[nb++] = (struct box){ .x0 = p[i].px - 5, .y0 = fmin(y0, y1) - 1,
                                   .x1 = p[i].px + 5, .y1 = fmax(y0, y1) + 1 };
    }
    place_labels(p, s->n, fs, frame, bars, nb, fx, fy, nf, lx, ly, anchor);
    free(bars);

    const char *ylabel = s->trained ? "top-1 accuracy (%)" : view == PLOT_X_FLOPS ? XLABEL_SIZE : "forward GFLOP per image";
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
    fprintf(f, ": %s vs %s</text>\n", view == PLOT_X_FLOPS ? "forward FLOPs" : "model size",
            s->trained ? "top-1 accuracy" : view == PLOT_X_FLOPS ? "model size" : "forward FLOPs");
    char counts[200];
    counts_text(counts, sizeof counts, s);
    char reps[80] = "";
    if (s->replicates > 1 && s->trained)
        snprintf(reps, sizeof reps, " x %d replicates, top-1 mean ± std", s->replicates);
    fprintf(f, "<text x=\"%.1f\" y=\"46\" font-size=\"12\" text-anchor=\"middle\" fill=\"#555\">"
               "%d %s%s%s (%s); frontier (%s): %d point%s</text>\n", SVG_W / 2.0, s->n,
            s->replicates > 1 ? "architecture" : "candidate", s->n == 1 ? "" : "s", reps, counts,
            view_objective(s, view), n_front, n_front == 1 ? "" : "s");
    int plain = 0; /* ordinary points: not pruned, not on the frontier */
    for (int i = 0; i < s->n; i++) /* drawn in the plain style: not pruned, stopped, untrained or on the frontier */
        plain |= !p[i].front && p[i].c->rec.status != DSE_REC_PRUNED && p[i].c->rec.status != DSE_REC_STOPPED && !p[i].band;
    write_legend(f, s, left, 72, plain, nf > 0, band, lim_x || lim_y);

    svg_grid(f, &ax, &ay, left, right, top, axis_y);
    if (band) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#bbb\" "
                   "stroke-dasharray=\"4 3\"/>\n", left, bottom + 6, right, bottom + 6);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#666\" text-anchor=\"end\">"
                   "no top-1</text>\n", left - 8, axis_y - 20);
    }
    svg_frame(f, left, right, top, axis_y, bottom, view == PLOT_X_FLOPS ? XLABEL_FLOPS : XLABEL_SIZE, ylabel);

    /* the limits, the frontier, then the points, the frontier on top, then the labels */
    const char *dash = "stroke=\"#8c564b\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"";
    if (lim_x) {
        double x = axis_px(&ax, lim_xv);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>\n", x, top, x, axis_y, dash);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#8c564b\" text-anchor=\"end\">limit "
                   "%g %s</text>\n", x - 4, top + 14, lim_xv, x_unit);
    }
    if (lim_y) {
        double y = axis_px(&ay, lim_yv);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>\n", left, y, right, y, dash);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#8c564b\" text-anchor=\"end\">limit "
                   "%g %s</text>\n", right - 4, y - 4, lim_yv, y_unit);
    }
    svg_step(f, fx, fy, nf, "#d62728");
    for (int i = 0; i < s->n; i++) { /* error bars: mean ± std of top-1 over the replicates */
        double e = p[i].band ? 0 : bar(s, p[i].c);
        if (!(e > 0)) continue;
        double y0 = axis_px(&ay, view_y(s, view, p[i].c) - e), y1 = axis_px(&ay, view_y(s, view, p[i].c) + e);
        fprintf(f, "<path class=\"errbar\" d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" stroke=\"%s\" "
                   "stroke-width=\"1.2\" fill=\"none\"/>\n", p[i].px, y0, y1, p[i].px - 4, y0, p[i].px + 4,
                p[i].px - 4, y1, p[i].px + 4, p[i].front ? "#7f1416" : "#4c78a8");
    }
    for (int i = 0; i < s->n; i++) {
        if (p[i].front) continue;
        if (p[i].c->rec.status == DSE_REC_PRUNED)
            svg_circle(f, &p[i], "r=\"5\" fill=\"none\" stroke=\"#999\" stroke-width=\"1.5\"");
        else if (p[i].band)
            svg_circle(f, &p[i], "r=\"5\" fill=\"#4c78a8\" fill-opacity=\"0.45\" stroke=\"#4c78a8\"");
        else if (p[i].c->rec.status == DSE_REC_STOPPED) /* its top-1 is from an earlier epoch */
            svg_circle(f, &p[i], "r=\"5\" fill=\"white\" stroke=\"#4c78a8\" stroke-width=\"1.8\"");
        else
            svg_circle(f, &p[i], "r=\"5\" fill=\"#4c78a8\" stroke=\"white\" stroke-width=\"1\"");
    }
    for (int i = 0; i < s->n; i++)
        if (p[i].front)
            svg_circle(f, &p[i], "r=\"6\" fill=\"#d62728\" stroke=\"#7f1416\" stroke-width=\"1\"");
    static const char *const anchors[] = { "start", "middle", "end" };
    fprintf(f, "<g font-size=\"%.0f\" fill=\"#333\">\n", fs);
    for (int i = 0; i < s->n; i++) {
        if (anchor[i] < 0) continue;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>", lx[i], ly[i],
                anchors[anchor[i]], p[i].front ? " font-weight=\"bold\"" : "");
        svg_text(f, p[i].use_alt ? p[i].alt : p[i].label);
        fputs("</text>\n", f);
    }
    fputs("</g>\n</svg>\n", f);
}

/* What an SVG writer needs: the sweep, and scratch room for s->n points. */
struct svg_job {
    const void         *extra; /* what a writer needs besides the sweep, or NULL */
    const struct dse_sweep_view *s;
    struct pt          *p;
    double             *lx, *ly, *fx, *fy;
    int                *anchor, *front;
};

typedef void (*svg_fn)(FILE *f, const struct svg_job *j);

/* What the plot writers need besides the sweep: the view and the space's limits. */
struct plot_job {
    enum plot_x             view;
    struct dse_sweep_limits lim;
};

static void plot_svg(FILE *f, const struct svg_job *j) {
    const struct plot_job *o = j->extra;
    write_svg(f, j->s, o->view, &o->lim, j->p, j->lx, j->ly, j->anchor, j->fx, j->fy, j->front);
}

/* The temporary file a plot is being written to: a signal that ends the process meanwhile
 * (Ctrl-C, kill, a hang-up, a closed pipe, a file size limit) removes it first, so that no
 * report leaves one behind (issue #31). Only where the signal's action is the default. */
static const int tmp_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ };
static char *volatile tmp_open;
static struct sigaction tmp_old[DSE_ARRAY_LEN(tmp_sigs)];

static void tmp_drop(int sig) {
    char *t = tmp_open;
    if (t) unlink(t);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* tmp: guard that file (NULL: stop guarding, the old actions back). */
static void tmp_guard(char *tmp) {
    for (int i = 0; i < DSE_ARRAY_LEN(tmp_sigs); i++) {
        if (tmp) {
            struct sigaction sa = { .sa_handler = tmp_drop };
            sigemptyset(&sa.sa_mask);
            if (sigaction(tmp_sigs[i], NULL, &tmp_old[i]) == 0 && tmp_old[i].sa_handler == SIG_DFL)
                sigaction(tmp_sigs[i], &sa, NULL);
        } else if (tmp_open && tmp_old[i].sa_handler == SIG_DFL) {
            sigaction(tmp_sigs[i], &tmp_old[i], NULL);
        }
    }
    tmp_open = tmp;
}

/* Written to a temporary file beside path, then renamed over it. */
static enum dse_status write_svg_file(const struct dse_sweep_view *s, const char *path, svg_fn fn, const char *what,
                                      struct dse_err *err, const void *extra) {
    size_t      n = (size_t)(s->n ? s->n : 1);
    struct svg_job j = { .extra = extra, .s = s, .p = calloc(n, sizeof(struct pt)), .lx = calloc(n, sizeof(double)),
                         .ly = calloc(n, sizeof(double)), .fx = calloc(n, sizeof(double)),
                         .fy = calloc(n, sizeof(double)), .anchor = calloc(n, sizeof(int)),
                         .front = calloc(n, sizeof(int)) };
    size_t      len = strlen(path) + 32;
    char       *tmp = malloc(len);
    enum dse_status st = DSE_OK;
    if (!j.p || !j.lx || !j.ly || !j.anchor || !j.fx || !j.fy || !j.front || !tmp) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto out;
    }
    if ((st = dse_fs_check_target(path, err))) goto out;
    snprintf(tmp, len, "%s.%ld.tmp", path, (long)getpid());
    tmp_guard(tmp);
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
    tmp_guard(NULL);
    free(j.p), free(j.lx), free(j.ly), free(j.anchor), free(j.fx), free(j.fy), free(j.front), free(tmp);
    return st;
}

static enum dse_status write_plot(const struct dse_sweep_view *s, enum plot_x view, const char *plot_path,
                                  struct dse_err *err) {
    const struct plot_job o = { .view = view, .lim = dse_sweep_limits(s->dir) };
    return write_svg_file(s, plot_path, plot_svg, "plot", err, &o);
}

/* ---- several sweeps' frontiers on one plot -------------------------------------------- */

#define OVERLAY_MAX 8
static const char *const overlay_color[OVERLAY_MAX] = { "#d62728", "#1f77b4", "#2ca02c", "#9467bd",
                                                        "#ff7f0e", "#8c564b", "#e377c2", "#17becf" };

static double plot_y(const struct dse_sweep_view *s, const struct dse_cand *c) {
    return s->trained ? 100.0 * c->rec.top1 : (double)c->rec.flops / 1e9;
}

/* Each sweep in its colour: its ranked candidates as small faded points, its frontier as a
 * step with its points; a legend names each sweep. All sweeps follow one rule (checked). */
static void overlay_svg(FILE *f, const struct dse_sweep_view *const *v, int n) {
    const double left = 84, right = SVG_W - 30, top = 60 + 16.0 * n, axis_y = SVG_H - 70; /* below the legend */
    const int trained = v[0]->trained;
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < v[k]->n; i++) {
            const struct dse_cand *c = &v[k]->c[i];
            if (!dse_sweep_ranked(v[k], c)) continue;
            xlo = fmin(xlo, (double)c->rec.model_bytes / 1e6), xhi = fmax(xhi, (double)c->rec.model_bytes / 1e6);
            ylo = fmin(ylo, plot_y(v[k], c)), yhi = fmax(yhi, plot_y(v[k], c));
        }
    if (!(xlo <= xhi)) xlo = 0, xhi = 1, ylo = 0, yhi = 1; /* nothing ranked yet */
    struct axis ax, ay;
    axis_fit(&ax, xlo, xhi, left, right);
    axis_fit(&ay, ylo, yhi, axis_y, top);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n<title>Frontiers of %d sweeps</title>\n"
               "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
            SVG_W, SVG_H, SVG_W, SVG_H, n, SVG_W, SVG_H);
    fprintf(f, "<text x=\"%.1f\" y=\"26\" font-size=\"17\" font-weight=\"bold\" text-anchor=\"middle\" "
               "fill=\"#222\">Pareto frontiers of %d sweeps: model size vs %s</text>\n", SVG_W / 2.0, n,
            trained ? "top-1 accuracy" : "forward FLOPs");
    fprintf(f, "<text x=\"%.1f\" y=\"46\" font-size=\"12\" text-anchor=\"middle\" fill=\"#555\">frontier "
               "(%s) as a step; each sweep's other candidates as small points</text>\n", SVG_W / 2.0,
            trained ? "max top1, min model size" : "min model size, min FLOPs");
    fputs("<g font-size=\"12\" fill=\"#333\">\n", f);
    for (int k = 0, y = 66; k < n; k++, y += 16) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>\n"
                   "<text x=\"%.1f\" y=\"%d\">", left, y - 4, left + 16, y - 4, overlay_color[k], left + 22, y);
        svg_text(f, v[k]->space);
        fputs(" (", f);
        svg_text(f, v[k]->dir);
        fprintf(f, "): %d on the frontier</text>\n", v[k]->n_front);
    }
    fputs("</g>\n", f);
    svg_grid(f, &ax, &ay, left, right, top, axis_y);
    svg_frame(f, left, right, top, axis_y, axis_y, XLABEL_SIZE, trained ? "top-1 accuracy (%)" : "forward GFLOP per image");
    for (int k = 0; k < n; k++) {
        const struct dse_sweep_view *s = v[k];
        double *fx = calloc((size_t)(s->n_front ? s->n_front : 1), sizeof *fx);
        double *fy = calloc((size_t)(s->n_front ? s->n_front : 1), sizeof *fy);
        for (int i = 0; i < s->n; i++)
            if (dse_sweep_ranked(s, &s->c[i]) && !s->c[i].on_front)
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" fill-opacity=\"0.35\"/>\n",
                        axis_px(&ax, (double)s->c[i].rec.model_bytes / 1e6), axis_px(&ay, plot_y(s, &s->c[i])),
                        overlay_color[k]);
        for (int i = 0; fx && fy && i < s->n_front; i++)
            fx[i] = axis_px(&ax, (double)s->front[i]->rec.model_bytes / 1e6), fy[i] = axis_px(&ay, plot_y(s, s->front[i]));
        if (fx && fy) svg_step(f, fx, fy, s->n_front, overlay_color[k]);
        for (int i = 0; fx && fy && i < s->n_front; i++) {
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"white\"><title>", fx[i],
                    fy[i], overlay_color[k]);
            svg_text(f, s->front[i]->rec.id);
            fputs("</title></circle>\n", f);
        }
        free(fx), free(fy);
    }
    fputs("</svg>\n", f);
}

struct overlay_job {
    const struct dse_sweep_view *const *v;
    int n;
};

static void overlay_fn(FILE *f, const struct svg_job *j) {
    const struct overlay_job *o = j->extra;
    overlay_svg(f, o->v, o->n);
}

enum dse_status dse_report_overlay(const char *const *dirs, int n, const char *plot_path, struct dse_err *err) {
    if (n < 1 || n > OVERLAY_MAX)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%d sweeps to overlay; expected 1 to %d", n, OVERLAY_MAX);
    struct dse_sweep_view v[OVERLAY_MAX];
    const struct dse_sweep_view *pv[OVERLAY_MAX];
    enum dse_status st = DSE_OK;
    int read = 0;
    for (; read < n && !st; read++) {
        st = dse_sweep_read(&v[read], dirs[read], err);
        pv[read] = &v[read];
        if (!st && read && v[read].trained != v[0].trained)
            st = dse_err_set(err, DSE_ERR_CONFIG, dirs[read], 0, "this sweep's frontier is %s but %s's is %s; "
                             "overlay sweeps that are all trained or all untrained", v[read].trained ? "trained" :
                             "analytic", dirs[0], v[0].trained ? "trained" : "analytic");
    }
    if (!st) {
        struct overlay_job o = { .v = pv, .n = n };
        st = write_svg_file(&v[0], plot_path, overlay_fn, "plot", err, &o);
    }
    for (int k = 0; k < read; k++) dse_sweep_view_free(&v[k]);
    return st;
}

/* ---- learning curves ----------------------------------------------------------------- */

/* The frontier's labels at the curves' right ends: each the widest that fits the margin
 * (its varied keys, else "#<index>"), the margin as wide as the widest label (at most 40%
 * of the canvas), and the labels moved apart vertically (a line each, inside the plot's
 * height) where curves end close together. In p (label, use_alt, py: the curve's end) and
 * ly (the label's baseline); returns the plot's right edge. */
static double curves_labels(const struct dse_sweep_view *s, struct pt *p, double *ly, int *order, double fs,
                            double top, double axis_y) {
    const double pad = 6 + 8, room = 0.4 * SVG_W - pad, line0 = fs + 3;
    double wmax = 0;
    int n = 0;
    for (int i = 0; i < s->n; i++) {
        const struct dse_cand *c = &s->c[i];
        if (!c->on_front || c->rec.n_epochs == 0) continue;
        int o = 0;
        p[i].label[0] = '\0';
        for (int v = 0; v < s->n_varied && o < (int)sizeof p[i].label; v++) {
            char vb[48];
            o += snprintf(p[i].label + o, sizeof p[i].label - (size_t)o, "%s%s=%s", v ? " " : "", s->varied[v],
                          fmt_value(vb, sizeof vb, s->varied[v], dse_json_get(c->metaparams, s->varied[v])));
        }
        utf8_trim(p[i].label);
        snprintf(p[i].alt, sizeof p[i].alt, "#%" PRId64, c->rec.index);
        p[i].use_alt = !s->n_varied || dse_report_text_width(p[i].label, fs, 0) > room;
        wmax = fmax(wmax, dse_report_text_width(p[i].use_alt ? p[i].alt : p[i].label, fs, 0));
        order[n++] = i;
    }
    for (int a = 1; a < n; a++) /* by the curve's end, top to bottom (insertion sort: a handful) */
        for (int b = a; b > 0 && p[order[b]].py < p[order[b - 1]].py; b--) {
            int t = order[b];
            order[b] = order[b - 1], order[b - 1] = t;
        }
    const double lo = top + 0.8 * fs, hi = axis_y - 0.25 * fs; /* baselines: the box inside the plot's height */
    const double line = n > 1 ? fmin(line0, (hi - lo) / (n - 1)) : line0; /* more than fit: closer (still inside) */
    for (int k = 0; k < n; k++) { /* down from the top, a line apart, then up from the bottom */
        ly[order[k]] = fmax(p[order[k]].py + 0.3 * fs, k ? ly[order[k - 1]] + line : lo);
    }
    for (int k = n - 1; k >= 0; k--) ly[order[k]] = fmin(ly[order[k]], k + 1 < n ? ly[order[k + 1]] - line : hi);
    return SVG_W - fmax(wmax + pad, 30);
}

/* Test top-1 after each epoch, one line per trained candidate, in epochs: the
 * frontier's candidates in red and labelled, the others in blue; a candidate stopped by
 * successive halving ends at its rung (a hollow end marker), a diverged one with a
 * cross at the epoch it diverged. */
static void curves_svg(FILE *f, const struct svg_job *j) {
    const struct dse_sweep_view *s = j->s;
    const double left = 84, top = 92, axis_y = SVG_H - 70, fs = 11;
    double emax = 1, ylo = INFINITY, yhi = -INFINITY;
    int lines = 0;
    for (int i = 0; i < s->n; i++) {
        const struct dse_rec *r = &s->c[i].rec; /* epoch e + 1 at ep[e] */
        for (int e = 0; e < r->n_epochs; e++)
            if (!isnan(r->ep[e].top1)) ylo = fmin(ylo, 100.0 * r->ep[e].top1), yhi = fmax(yhi, 100.0 * r->ep[e].top1);
        emax = fmax(emax, r->n_epochs);
        lines += r->n_epochs > 0;
    }
    if (!(ylo <= yhi)) ylo = 0, yhi = 100;
    struct axis ax, ay;
    axis_fit(&ay, ylo, yhi, axis_y, top);
    for (int i = 0; i < s->n; i++) { /* where each curve ends, for its label */
        const struct dse_rec *r = &s->c[i].rec;
        j->p[i].py = NAN;
        for (int e = 0; e < r->n_epochs; e++)
            if (!isnan(r->ep[e].top1)) j->p[i].py = axis_px(&ay, 100.0 * r->ep[e].top1);
        if (isnan(j->p[i].py)) j->p[i].py = axis_y;
    }
    const double right = curves_labels(s, j->p, j->ly, j->anchor /* scratch */, fs, top, axis_y);
    axis_fit(&ax, 1, emax, left, right);
    if (emax - 1 < 10) ax.step = 1, ax.decimals = 0; /* whole epochs */
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
            const struct dse_cand *c = &s->c[i];
            const struct dse_rec *r = &c->rec;
            if (r->n_epochs == 0 || c->on_front != pass) continue;
            const char *color = pass ? "#d62728" : "#4c78a8";
            fprintf(f, "<g><title>%s", c->rec.id);
            for (int v = 0; v < s->n_varied; v++) {
                char vb[48];
                fprintf(f, " %s=", s->varied[v]);
                svg_text(f, fmt_value(vb, sizeof vb, s->varied[v], dse_json_get(c->metaparams, s->varied[v])));
            }
            fprintf(f, "</title>\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" stroke-opacity=\"%s\" "
                       "points=\"", color, pass ? "2.2" : "1.4", pass ? "1" : "0.7");
            double lx = 0, ly = 0;
            int any = 0;
            for (int e = 0; e < r->n_epochs; e++) {
                if (isnan(r->ep[e].top1)) continue;
                lx = axis_px(&ax, e + 1.0);
                ly = axis_px(&ay, 100.0 * r->ep[e].top1);
                fprintf(f, "%s%.1f,%.1f", any++ ? " " : "", lx, ly);
            }
            fputs("\"/>\n", f);
            if (any && c->rec.status == DSE_REC_STOPPED)
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"white\" stroke=\"%s\" stroke-width=\"1.5\"/>\n",
                        lx, ly, color);
            else if (any)
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", lx, ly, color);
            if (c->rec.status == DSE_REC_DIVERGED && c->rec.diverged_epoch > 0) {
                const double x = axis_px(&ax, (double)c->rec.diverged_epoch), y = axis_y - 10;
                fprintf(f, "<path d=\"M%.1f %.1fl8 8m0 -8l-8 8\" stroke=\"#333\" stroke-width=\"1.5\"/>\n", x - 4, y - 4);
            }
            if (pass && any) { /* label the frontier's curves at their right end (curves_labels) */
                const double ty = j->ly[i];
                if (fabs(ty - 0.3 * fs - ly) > 2) /* moved to make room: a leader from the curve's end */
                    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                               "stroke-width=\"0.8\"/>\n", lx + 4, ly, right + 5, ty - 0.3 * fs, color);
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" fill=\"%s\">", right + 6, ty, fs, color);
                svg_text(f, j->p[i].use_alt ? j->p[i].alt : j->p[i].label);
                fputs("</text>\n", f);
            }
            fputs("</g>\n", f);
        }
    fputs("</svg>\n", f);
}

enum dse_status dse_report_curves(const char *dir, const char *svg_path, struct dse_err *err) {
    struct dse_sweep_view    s;
    enum dse_status st = dse_sweep_read(&s, dir, err);
    if (!st) st = write_svg_file(&s, svg_path, curves_svg, "learning curves", err, NULL);
    dse_sweep_view_free(&s);
    return st;
}

enum dse_status dse_report_plot_flops(const char *dir, const char *svg_path, struct dse_err *err) {
    struct dse_sweep_view s;
    enum dse_status       st = dse_sweep_read(&s, dir, err);
    if (!st) st = write_plot(&s, PLOT_X_FLOPS, svg_path, err);
    dse_sweep_view_free(&s);
    return st;
}

enum dse_status dse_report_sweep(FILE *f, const char *dir, enum dse_format fmt, const char *plot_path,
                                 struct dse_report_best *best, struct dse_err *err) {
    struct dse_sweep_view    s;
    enum dse_status st = dse_sweep_read(&s, dir, err);
    best_out(NULL, best);
    if (st) {
        dse_sweep_view_free(&s);
        return st;
    }
    const struct dse_cand *fb = final_best(&s);
    best_out(fb, best);
    int oom = 0;
    switch (fmt) {
    case DSE_FORMAT_TABLE:
    case DSE_FORMAT_MD:   oom = write_md(f, &s, fb); break;
    case DSE_FORMAT_CSV:  oom = write_csv(f, &s); break;
    case DSE_FORMAT_TEX:  oom = write_tex(f, &s); break;
    case DSE_FORMAT_JSON: oom = write_json(f, &s, fb); break;
    }
    if (oom) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    else if (ferror(f)) st = dse_err_set(err, DSE_ERR_IO, NULL, 0, "cannot write the report");
    if (!st && plot_path) st = write_plot(&s, PLOT_X_SIZE, plot_path, err);
    dse_sweep_view_free(&s);
    return st;
}

enum dse_status dse_report_best(const char *dir, double max_mb, struct dse_report_best *out, struct dse_err *err) {
    struct dse_sweep_view    s;
    enum dse_status st = dse_sweep_read(&s, dir, err);
    best_out(NULL, out);
    if (!st) {
        int done, fit;
        const struct dse_cand *c = dse_sweep_best(&s, max_mb, &done, &fit);
        if (!done)
            st = dse_err_set(err, DSE_ERR_CONFIG, dir, 0, "no candidate of this sweep has finished training; "
                             "'dse status %s' shows where it stands", dir);
        else if (!fit)
            st = dse_err_set(err, DSE_ERR_CONFIG, dir, 0, "none of the %d trained candidates is within --max-mb %g; "
                             "'dse report %s' lists their sizes", done, max_mb, dir);
        best_out(c, out);
    }
    dse_sweep_view_free(&s);
    return st;
}
