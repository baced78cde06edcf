/* report_sweep.c: `dse report DIR`: reads a sweep directory (docs/sweep-dir.md), picks
 * the Pareto frontier (analysis/pareto.c) and prints every candidate as Markdown, CSV,
 * TeX or JSON; optionally plots accuracy (or the other cost) against model size or against
 * FLOPs as SVG files (dse/report_plot.c).
 * Formats, frontier rules and the stable JSON keys: docs/report.md. */
#include "dse/report.h"
#include "dse/report_impl.h"

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
#include "sweep/sweep.h"

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

/* ---- Deep Compression (a space's compress section, docs/space-format.md) ---------------- */

/* 1 if the sweep's records hold the compressed-size estimate (its space has a compress
 * section): the reports add their compressed columns then (and only then). */
static int any_compress(const struct dse_sweep_view *s) {
    for (int i = 0; i < s->n; i++)
        if (s->c[i].rec.est_compressed_bytes >= 0) return 1;
    return 0;
}

/* How far the estimate fell from row c's real file: estimate / real; NaN before the file. */
static double est_ratio(const struct dse_cand *c) {
    return c->rec.compressed_bytes > 0 && c->rec.est_compressed_bytes >= 0
               ? (double)c->rec.est_compressed_bytes / (double)c->rec.compressed_bytes : NAN;
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
const char *dse_report_fmt_value(char *buf, size_t size, const char *key, const struct dse_json *v) {
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
void dse_report_utf8_trim(char *s) {
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
        if (v->type == DSE_JSON_NUMBER) fputs(dse_report_fmt_value(b, sizeof b, mp->members[i].key, v), f);
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

const char *dse_report_objective(const struct dse_sweep_view *s) {
    if (s->compressed) return s->trained ? "max top1, min compressed size" : "min compressed size, min FLOPs";
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
    const int latency = any_latency(s), compress = any_compress(s);
    if (latency) tbl_head(t, "latency ms", 1);
    if (compress) {
        tbl_head(t, "compressed MB (est.)", 1);
        if (t1) tbl_head(t, "compressed top-1 %", 1);
    }
    if (frontier_col) {
        t->raw_col = t->ncol;
        tbl_head(t, "frontier", 0);
    }
    for (int i = 0; i < n; i++) {
        const struct dse_cand *c = rows[i];
        tbl_add(t, c->rec.id);
        tbl_add(t, fmt_int(b, sizeof b, c->rec.index, 0));
        for (int v = 0; v < s->n_varied; v++)
            tbl_add(t, dse_report_fmt_value(b, sizeof b, s->varied[v], dse_json_get(c->metaparams, s->varied[v])));
        tbl_add(t, fmt_int(b, sizeof b, c->rec.params, 1));
        snprintf(b, sizeof b, "%.2f", (double)c->rec.model_bytes / 1e6);
        tbl_add(t, b);
        snprintf(b, sizeof b, "%.2f", (double)c->rec.model_bytes / MIB);
        tbl_add(t, b);
        tbl_add(t, fmt_sig3(b, sizeof b, (double)c->rec.flops / 1e9));
        tbl_add(t, fmt_sig3(b, sizeof b, (double)dse_cost_macs(c->rec.flops) / 1e9));
        if (c->rec.train_mem_bytes >= 0) snprintf(b, sizeof b, "%.1f", (double)c->rec.train_mem_bytes / MIB);
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
        if (compress) { /* the real file's size, or "no .dsez" (never 0), the estimate beside */
            char real[32] = "no .dsez", est[32];
            if (c->rec.compressed_bytes >= 0) fmt_sig3(real, sizeof real, (double)c->rec.compressed_bytes / 1e6);
            snprintf(b, sizeof b, "%s (%s)", real, fmt_sig3(est, sizeof est, (double)c->rec.est_compressed_bytes / 1e6));
            tbl_add(t, b);
            if (t1) {
                if (!isnan(c->rec.compressed_top1)) snprintf(b, sizeof b, "%.1f", 100.0 * c->rec.compressed_top1);
                else snprintf(b, sizeof b, "-");
                tbl_add(t, b);
            }
        }
        if (frontier_col) tbl_add(t, c->on_front ? mark : "");
    }
}

void dse_report_counts_text(char *buf, size_t size, const struct dse_sweep_view *s) {
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
    dse_report_counts_text(counts, sizeof counts, s);
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
    char rungs[80] = "";
    if (v.lg.n_part) snprintf(rungs, sizeof rungs, " and %d at asha's rungs (its model's too)", v.lg.n_part);
    fprintf(f, "\n## Search\n\n%s (search/log-%" PRId64 "): %d proposed, %d results recorded%s%s.\n",
            !strcmp(v.lg.strategy, "bo") ? "Cost-aware Bayesian optimization, bo" : "Evolution", v.lg.gen, v.lg.n_prop,
            v.lg.n_res, rungs, v.lg.ended ? ", ended" : v.lg.closed ? ", no more proposals" : "");
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
    fprintf(f, "\n## Frontier (%s): %d of %d %s\n\n", dse_report_objective(s), s->n_front, s->n,
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

/* The CSV's columns after the metaparameters, each once, in their order: its name, when it
 * is shown (ALWAYS; PLAN: a training sweep; REPLICATES: a sweep with replicates; LATENCY:
 * any row has a measured latency; COMPRESS: the space has a compress section, an empty cell
 * where a row has no .dsez yet) and its cell for row c (b: scratch of n bytes). */
#define CSV_COLUMNS(X)                                                                                           \
    X(params,          ALWAYS,     fmt_int(b, n, c->rec.params, 0))                                          \
    X(model_bytes,     ALWAYS,     fmt_int(b, n, c->rec.model_bytes, 0))                                     \
    X(model_mb,        ALWAYS,     fmt_num(b, n, (double)c->rec.model_bytes / 1e6))                          \
    X(model_mib,       ALWAYS,     fmt_num(b, n, (double)c->rec.model_bytes / MIB))                          \
    X(flops,           ALWAYS,     fmt_int(b, n, c->rec.flops, 0))                                           \
    X(macs,            ALWAYS,     fmt_int(b, n, dse_cost_macs(c->rec.flops), 0))                            \
    X(train_mem_bytes, ALWAYS,     c->rec.train_mem_bytes >= 0 ? fmt_int(b, n, c->rec.train_mem_bytes, 0) : "") \
    X(status,          ALWAYS,     dse_rec_status_str(c->rec.status))                                        \
    X(pruned_by,       ALWAYS,     c->rec.pruned_by)                                                         \
    X(top1,            ALWAYS,     !isnan(c->rec.top1) ? fmt_num(b, n, c->rec.top1) : "")                    \
    X(top5,            ALWAYS,     !isnan(c->rec.top5) ? fmt_num(b, n, c->rec.top5) : "")                    \
    X(frontier,        ALWAYS,     c->on_front ? "yes" : "")                                                 \
    X(epochs_done,     PLAN,       fmt_int(b, n, c->rec.epochs_done, 0))                                     \
    X(stopped_rung,    PLAN,       c->rec.stopped_rung >= 0 ? fmt_int(b, n, c->rec.stopped_rung, 0) : "")    \
    X(stopped_epoch,   PLAN,       c->rec.stopped_rung >= 0 ? fmt_int(b, n, c->rec.stopped_epoch, 0) : "")   \
    X(diverged_epoch,  PLAN,       c->rec.diverged_epoch > 0 ? fmt_int(b, n, c->rec.diverged_epoch, 0) : "") \
    X(replicates,      REPLICATES, fmt_int(b, n, c->n_reps, 0))                                              \
    X(top1_n,          REPLICATES, fmt_int(b, n, c->top1_n, 0))                                              \
    X(top1_std,        REPLICATES, !isnan(c->top1_std) ? fmt_num(b, n, c->top1_std) : "")                    \
    X(within_noise,    REPLICATES, front_noise(s, c) ? "yes" : "")                                           \
    X(latency_ms,      LATENCY,    isfinite(row_latency(c)) ? fmt_num(b, n, row_latency(c)) : "")            \
    X(est_compressed_bytes, COMPRESS, c->rec.est_compressed_bytes >= 0 ? fmt_int(b, n, c->rec.est_compressed_bytes, 0) : "") \
    X(compressed_bytes, COMPRESS,  c->rec.compressed_bytes >= 0 ? fmt_int(b, n, c->rec.compressed_bytes, 0) : "") \
    X(compressed_top1, COMPRESS,   !isnan(c->rec.compressed_top1) ? fmt_num(b, n, c->rec.compressed_top1) : "") \
    X(compressed_est_ratio, COMPRESS, isfinite(est_ratio(c)) ? (snprintf(b, n, "%.3f", est_ratio(c)), b) : "")

enum csv_when { CSV_ALWAYS, CSV_PLAN, CSV_REPLICATES, CSV_LATENCY, CSV_COMPRESS };

typedef const char *csv_cell_fn(char *b, size_t n, const struct dse_sweep_view *s, const struct dse_cand *c);

#define CSV_CELL(name, when, cell)                                                                \
    static const char *csv_##name(char *b, size_t n, const struct dse_sweep_view *s,                  \
                                  const struct dse_cand *c) {                                          \
        (void)b, (void)n, (void)s;                                                                     \
        return cell;                                                                                   \
    }
CSV_COLUMNS(CSV_CELL)
#undef CSV_CELL

static const struct {
    const char   *name;
    enum csv_when when;
    csv_cell_fn  *cell;
} csv_cols[] = {
#define CSV_COL(name, when, cell) { #name, CSV_##when, csv_##name },
    CSV_COLUMNS(CSV_COL)
#undef CSV_COL
};

static int csv_shown(const struct dse_sweep_view *s, enum csv_when w) {
    switch (w) {
    case CSV_ALWAYS:     return 1;
    case CSV_PLAN:       return s->has_plan;
    case CSV_REPLICATES: return s->replicates > 1;
    case CSV_LATENCY:    return any_latency(s);
    case CSV_COMPRESS:   return any_compress(s);
    }
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
    int shown[DSE_ARRAY_LEN(csv_cols)];
    for (int k = 0; k < DSE_ARRAY_LEN(csv_cols); k++)
        if ((shown[k] = csv_shown(s, csv_cols[k].when))) tbl_head(&t, csv_cols[k].name, 0);
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
                tbl_add(&t, mv ? dse_report_fmt_value(b, sizeof b, keys[v], mv) : "");
        }
        for (int k = 0; k < DSE_ARRAY_LEN(csv_cols); k++)
            if (shown[k]) tbl_add(&t, csv_cols[k].cell(b, sizeof b, s, c));
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
    fputs(dse_report_objective(s), f);
    fputs(". Needs \\usepackage{booktabs}.\n", f);
    fputs("\\providecommand{\\checkmark}{\\ensuremath{\\surd}}\n", f);
    table_human(&t, s, s->by_size, s->n, 1, "\\checkmark");
    int oom = t.oom;
    if (!oom) tbl_print_tex(f, &t);
    tbl_free(&t);
    return oom;
}

/* A JSON candidate's keys after its metaparameters, each once, in their order: its name,
 * when it is shown (ALWAYS; PLAN: a training sweep; REPLICATES: a sweep with replicates;
 * MEASURED: this row has a measured latency; COMPRESS: the space has a compress section, null
 * where a row has no .dsez yet), whether it starts a line (NL) or goes on the
 * line (SP), and its value for row c written to f (b: scratch of n bytes). The
 * replicates' own records follow as "replicates" (write_json). docs/report.md. */
#define JSON_COLUMNS(X)                                                                                           \
    X(params,          ALWAYS,     NL, fprintf(f, "%" PRId64, c->rec.params))                                     \
    X(model_bytes,     ALWAYS,     SP, fprintf(f, "%" PRId64, c->rec.model_bytes))                                \
    X(model_mb,        ALWAYS,     SP, fputs(fmt_num(b, n, (double)c->rec.model_bytes / 1e6), f))                 \
    X(model_mib,       ALWAYS,     SP, fputs(fmt_num(b, n, (double)c->rec.model_bytes / MIB), f))                 \
    X(flops,           ALWAYS,     SP, fprintf(f, "%" PRId64, c->rec.flops))                                      \
    X(macs,            ALWAYS,     SP, fprintf(f, "%" PRId64, dse_cost_macs(c->rec.flops)))                       \
    X(train_mem_bytes, ALWAYS,     SP, json_opt_int(f, c->rec.train_mem_bytes, c->rec.train_mem_bytes >= 0))      \
    X(status,          ALWAYS,     NL, fprintf(f, "\"%s\"", dse_rec_status_str(c->rec.status)))                   \
    X(pruned_by,       ALWAYS,     SP, json_opt_str(f, c->rec.pruned_by))                                         \
    X(top1,            ALWAYS,     SP, json_opt_num(f, b, n, c->rec.top1))                                        \
    X(top5,            ALWAYS,     SP, json_opt_num(f, b, n, c->rec.top5))                                        \
    X(on_frontier,     ALWAYS,     SP, fputs(c->on_front ? "true" : "false", f))                                  \
    X(latency_ms,      MEASURED,   SP, fputs(fmt_num(b, n, row_latency(c)), f))                                   \
    X(epochs_done,     PLAN,       NL, fprintf(f, "%d", c->rec.epochs_done))                                      \
    X(stopped_rung,    PLAN,       SP, json_opt_int(f, c->rec.stopped_rung, c->rec.stopped_rung >= 0))            \
    X(stopped_epoch,   PLAN,       SP, json_opt_int(f, c->rec.stopped_epoch, c->rec.stopped_rung >= 0))           \
    X(diverged_epoch,  PLAN,       SP, json_opt_int(f, c->rec.diverged_epoch, c->rec.diverged_epoch > 0))         \
    X(diverged_iter,   PLAN,       SP, json_opt_int(f, c->rec.diverged_iter, c->rec.diverged_epoch > 0))          \
    X(failed_why,      PLAN,       SP, json_opt_str(f, c->rec.failed_why))                                        \
    X(train_seconds,   PLAN,       SP, fputs(fmt_num(b, n, c->rec.train_seconds), f))                             \
    X(top1_n,          REPLICATES, NL, fprintf(f, "%d", c->top1_n))                                               \
    X(top1_std,        REPLICATES, SP, json_opt_num(f, b, n, c->top1_std))                                        \
    X(within_noise,    REPLICATES, SP, fputs(front_noise(s, c) ? "true" : "false", f))                            \
    X(est_compressed_bytes, COMPRESS, NL, json_opt_int(f, c->rec.est_compressed_bytes, c->rec.est_compressed_bytes >= 0)) \
    X(compressed_bytes, COMPRESS,  SP, json_opt_int(f, c->rec.compressed_bytes, c->rec.compressed_bytes >= 0))     \
    X(compressed_top1, COMPRESS,   SP, json_opt_num(f, b, n, c->rec.compressed_top1))                             \
    X(compressed_est_ratio, COMPRESS, SP, json_opt_num(f, b, n, est_ratio(c)))

/* v, or null where known is 0. */
static void json_opt_int(FILE *f, int64_t v, int known) {
    if (known) fprintf(f, "%" PRId64, v);
    else fputs("null", f);
}

/* v, or null if NaN. */
static void json_opt_num(FILE *f, char *b, size_t n, double v) {
    fputs(!isnan(v) ? fmt_num(b, n, v) : "null", f);
}

enum json_when { JSON_ALWAYS, JSON_PLAN, JSON_REPLICATES, JSON_MEASURED, JSON_COMPRESS };

typedef void json_put_fn(FILE *f, char *b, size_t n, const struct dse_sweep_view *s, const struct dse_cand *c);

#define JSON_PUT(name, when, line, put)                                                                   \
    static void json_##name(FILE *f, char *b, size_t n, const struct dse_sweep_view *s,                    \
                            const struct dse_cand *c) {                                                    \
        (void)b, (void)n, (void)s;                                                                         \
        put;                                                                                               \
    }
JSON_COLUMNS(JSON_PUT)
#undef JSON_PUT

static const struct {
    const char    *name;
    enum json_when when;
    int            line;  /* 1: starts a line */
    json_put_fn   *put;
} json_cols[] = {
#define JSON_COL(name, when, line, put) { #name, JSON_##when, JSON_LINE_##line, json_##name },
#define JSON_LINE_NL 1
#define JSON_LINE_SP 0
    JSON_COLUMNS(JSON_COL)
#undef JSON_LINE_SP
#undef JSON_LINE_NL
#undef JSON_COL
};

static int json_shown(const struct dse_sweep_view *s, const struct dse_cand *c, enum json_when w) {
    switch (w) {
    case JSON_ALWAYS:     return 1;
    case JSON_PLAN:       return s->has_plan;
    case JSON_REPLICATES: return s->replicates > 1;
    case JSON_MEASURED:   return isfinite(row_latency(c));
    case JSON_COMPRESS:   return any_compress(s);
    }
    return 0;
}

int dse_report_shows_key(enum dse_format fmt, const char *key) {
    /* before the columns: id, index and the metaparameters (the CSV's a column each); in the
     * JSON, each replicate's own keys too (write_json) */
    if (dse_word_index("id index metaparams", key) >= 0) return 1;
    if (fmt == DSE_FORMAT_JSON && dse_word_index("replicate seed status top1 top5", key) >= 0) return 1;
    for (int k = 0; fmt == DSE_FORMAT_CSV && k < DSE_ARRAY_LEN(csv_cols); k++)
        if (!strcmp(csv_cols[k].name, key)) return 1;
    for (int k = 0; fmt == DSE_FORMAT_JSON && k < DSE_ARRAY_LEN(json_cols); k++)
        if (!strcmp(json_cols[k].name, key)) return 1;
    return 0;
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
    fprintf(f, "], \"frontier_objective\": \"%s\",\n \"candidates\": [", dse_report_objective(s));
    for (int i = 0; i < s->n; i++) {
        const struct dse_cand *c = &s->c[i];
        fputs(i ? ",\n  {\"id\": " : "\n  {\"id\": ", f);
        json_cstr(f, c->rec.id);
        fprintf(f, ", \"index\": %" PRId64 ", \"metaparams\": ", c->rec.index);
        json_metaparams(f, c->metaparams);
        for (int k = 0; k < DSE_ARRAY_LEN(json_cols); k++)
            if (json_shown(s, c, json_cols[k].when)) {
                fprintf(f, "%s\"%s\": ", json_cols[k].line ? ",\n   " : ", ", json_cols[k].name);
                json_cols[k].put(f, b, sizeof b, s, c);
            }
        if (s->replicates > 1) {
            fputs(", \"replicates\": [", f);
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

enum dse_status dse_report_sweep(FILE *f, const char *dir, enum dse_format fmt, const char *plot_path,
                                 struct dse_report_best *best, struct dse_err *err) {
    return dse_report_sweep_size(f, dir, fmt, plot_path, 0, best, err);
}

enum dse_status dse_report_sweep_size(FILE *f, const char *dir, enum dse_format fmt, const char *plot_path,
                                      int compressed, struct dse_report_best *best, struct dse_err *err) {
    struct dse_sweep_view    s;
    enum dse_status st = dse_sweep_read(&s, dir, err);
    if (!st && compressed && !any_compress(&s))
        st = dse_err_set(err, DSE_ERR_CONFIG, dir, 0, "--size compressed: the sweep's space has no compress section, "
                         "so no candidate has a .dsez (docs/space-format.md)");
    if (!st && compressed) st = dse_sweep_front_compressed(&s, err);
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
    if (!st && plot_path) st = dse_report_plot_size(&s, plot_path, err);
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
