/* report.c: `dse analyze` and `dse diff` reports. One small table builder renders the
 * same rows as aligned text, Markdown or CSV; JSON is written directly. The header of
 * every text report states the counting conventions (docs/conventions.md). */
#include "dse/report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "sweep/sweep.h"

#define MAX_COLS 16
#define CELL_MAX (DSE_NAME_MAX + 32) /* a whole layer name fits */

struct table {
    int    ncol;
    const char *head[MAX_COLS];
    int    right[MAX_COLS];  /* right-align (numbers) */
    int    nrow, cap;
    char (*cells)[MAX_COLS][CELL_MAX];
};

/* Lines of the conventions header; joined with spaces in JSON. */
static const char *const conventions[] = {
    "FLOPs = 2 per multiply-add, conv and fc only; MACs (multiply-adds) = FLOPs / 2; bias",
    "adds, pooling and elementwise work are 'other ops'; training FLOPs = 3 x forward (thesis",
    "4.3.3). params = learned weights + biases. activations = output values of layers not",
    "computed in place, whole batch. 4 bytes per value; MB = 10^6 bytes, MiB = 2^20 bytes.",
    "Pooling output rounds up (Caffe's ceil; a last window starting in the padding is",
    "dropped) unless a layer says floor; conv output rounds down. RF = receptive field on",
    "the input, in pixels, padding included. Memory figures are estimates.",
};

int dse_format_from_str(const char *s, enum dse_format *out) {
    static const char *const names[] = {
        [DSE_FORMAT_TABLE] = "table", [DSE_FORMAT_JSON] = "json", [DSE_FORMAT_CSV] = "csv",
        [DSE_FORMAT_MD] = "md",       [DSE_FORMAT_TEX] = "tex",
    };
    int f = dse_name_find(names, DSE_ARRAY_LEN(names), s);
    if (f < 0) return -1;
    *out = (enum dse_format)f;
    return 0;
}

static void tbl_init(struct table *t) { memset(t, 0, sizeof *t); }
static void tbl_free(struct table *t) { free(t->cells); }

/* A table's columns as rows: its heading and whether it is right-aligned (numbers). */
struct tbl_column {
    const char *head;
    int         right;
};

static void tbl_cols(struct table *t, const struct tbl_column *cols, int n) {
    for (int k = 0; k < n; k++) {
        t->head[t->ncol] = cols[k].head;
        t->right[t->ncol++] = cols[k].right;
    }
}

static char (*tbl_row(struct table *t))[CELL_MAX] {
    if (t->nrow == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        void *p = realloc(t->cells, sizeof *t->cells * (size_t)cap);
        if (!p) return NULL;
        t->cells = p;
        t->cap = cap;
    }
    memset(t->cells[t->nrow], 0, sizeof t->cells[0]);
    return t->cells[t->nrow++];
}

static void tbl_print(FILE *f, const struct table *t, enum dse_format fmt) {
    int w[MAX_COLS];
    for (int c = 0; c < t->ncol; c++) {
        w[c] = (int)strlen(t->head[c]);
        for (int r = 0; r < t->nrow; r++) {
            int n = (int)strlen(t->cells[r][c]);
            if (n > w[c]) w[c] = n;
        }
    }
    if (fmt == DSE_FORMAT_CSV) { /* RFC 4180: quote fields with , " CR LF; double quotes */
        for (int r = -1; r < t->nrow; r++)
            for (int c = 0; c < t->ncol; c++) {
                const char *s = r < 0 ? t->head[c] : t->cells[r][c];
                int quote = strpbrk(s, ",\"\r\n") != NULL;
                if (quote) fputc('"', f);
                for (; *s; s++) {
                    if (*s == '"') fputc('"', f);
                    fputc(*s, f);
                }
                if (quote) fputc('"', f);
                fputc(c + 1 < t->ncol ? ',' : '\n', f);
            }
        return;
    }
    int md = fmt == DSE_FORMAT_MD;
    for (int r = -1; r < t->nrow; r++) {
        for (int c = 0; c < t->ncol; c++) {
            const char *s = r < 0 ? t->head[c] : t->cells[r][c];
            int pad = w[c] - (int)strlen(s);
            if (md) fputs("| ", f);
            if (t->right[c]) fprintf(f, "%*s%s", pad, "", s);
            else if (md || c + 1 < t->ncol) fprintf(f, "%s%*s", s, pad, "");
            else fputs(s, f);
            fputs(md ? " " : (c + 1 < t->ncol ? "  " : ""), f);
        }
        fputs(md ? "|\n" : "\n", f);
        if (r < 0 && md) {
            for (int c = 0; c < t->ncol; c++) {
                fputs("|", f);
                for (int k = 0; k < w[c] + 2; k++) fputc(k == w[c] + 1 && t->right[c] ? ':' : '-', f);
            }
            fputs("|\n", f);
        }
    }
}

/* Integer with thousands separators when pretty, plain otherwise. */
static const char *fmt_int(char *buf, int64_t v, int pretty) {
    char raw[32];
    snprintf(raw, sizeof raw, "%" PRIu64, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    if (!pretty) {
        snprintf(buf, CELL_MAX, "%" PRId64, v);
        return buf;
    }
    int n = (int)strlen(raw), o = 0;
    if (v < 0) buf[o++] = '-';
    for (int i = 0; i < n; i++) {
        buf[o++] = raw[i];
        if ((n - i - 1) % 3 == 0 && i + 1 < n) buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}

/* 4 significant digits with an SI prefix: 2.265 T, 30.38 M. */
static const char *fmt_si(char *buf, double v, const char *unit) {
    static const char *pre[] = { "", "k", "M", "G", "T", "P", "E" };
    int p = 0;
    while (v >= 1000.0 && p < 6) v /= 1000.0, p++;
    snprintf(buf, CELL_MAX, "%.4g %s%s", v, pre[p], unit);
    return buf;
}

static const char *fmt_shape(char *buf, int c, int h, int w) {
    snprintf(buf, CELL_MAX, "%dx%dx%d", c, h, w);
    return buf;
}

static const char *fmt_rf(char *buf, int h, int w) {
    if (h == w) snprintf(buf, CELL_MAX, "%d", h);
    else snprintf(buf, CELL_MAX, "%dx%d", h, w);
    return buf;
}

static void print_conventions(FILE *f, enum dse_format fmt) {
    const char *p = fmt == DSE_FORMAT_MD ? "" : "# ";
    for (int i = 0; i < DSE_ARRAY_LEN(conventions); i++)
        fprintf(f, "%s%s%s\n", p, i ? "  " : "conventions: ", conventions[i]);
    if (fmt == DSE_FORMAT_MD) fputc('\n', f);
}

/* Everything a report needs about one network, allocated together. */
struct analyzed {
    struct dse_cost_layer *layers;
    struct dse_cost_row   *rows;
    int                    n_rows;
    struct dse_cost_totals tot;
};

static enum dse_status analyze(const struct dse_net *net, int64_t batch, enum dse_rows view,
                               struct analyzed *a, struct dse_err *err) {
    size_t n = net->n_layers > 0 ? (size_t)net->n_layers : 1;
    memset(a, 0, sizeof *a);
    a->layers = calloc(n, sizeof *a->layers);
    a->rows   = calloc(n, sizeof *a->rows);
    if (!a->layers || !a->rows) {
        free(a->layers), free(a->rows);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    enum dse_status st = dse_cost_net(net, batch, a->layers, &a->tot, err);
    if (st) {
        free(a->layers), free(a->rows);
        return st;
    }
    a->n_rows = dse_cost_rows(net, a->layers, view, a->rows);
    return DSE_OK;
}

static void analyzed_free(struct analyzed *a) {
    free(a->layers);
    free(a->rows);
}

static void json_totals(FILE *f, const struct dse_cost_totals *t) {
    fprintf(f, "{\"params\": %" PRId64 ", \"weights\": %" PRId64 ", \"biases\": %" PRId64
               ", \"buffers\": %" PRId64 ", \"flops\": %" PRId64 ", \"macs\": %" PRId64
               ", \"flops_train\": %" PRId64
               ", \"other_ops\": %" PRId64 ", \"activations\": %" PRId64
               ", \"input_values\": %" PRId64 ", \"param_bytes\": %" PRId64
               ", \"model_bytes\": %" PRId64 ", \"activation_bytes\": %" PRId64
               ", \"mem_infer_bytes\": %" PRId64 ", \"mem_train_bytes\": %" PRId64 "}",
            t->params, t->weights, t->biases, t->buffers, t->flops, dse_cost_macs(t->flops), t->flops_train,
            t->other_ops, t->activations, t->input_values, t->param_bytes, t->model_bytes,
            t->activation_bytes, t->mem_infer_bytes, t->mem_train_bytes);
}


static void json_str(FILE *f, const char *s) { dse_json_write_str(f, s, strlen(s)); }
static void json_row(FILE *f, const struct dse_cost_row *r) {
    fputs("{\"name\": ", f);
    json_str(f, r->name);
    fputs(", \"type\": ", f);
    json_str(f, r->type);
    fprintf(f, ", \"out_c\": %d, \"out_h\": %d, \"out_w\": %d, \"params\": %" PRId64
               ", \"weights\": %" PRId64 ", \"biases\": %" PRId64 ", \"buffers\": %" PRId64
               ", \"flops\": %" PRId64 ", \"macs\": %" PRId64 ", \"other_ops\": %" PRId64
               ", \"activations\": %" PRId64 ", \"rf_h\": %d, \"rf_w\": %d, \"in_place\": %s}",
            r->out_c, r->out_h, r->out_w, r->cost.params, r->cost.weights, r->cost.biases,
            r->cost.buffers, r->cost.flops, dse_cost_macs(r->cost.flops), r->cost.other_ops, r->cost.activations, r->rf_h,
            r->rf_w, r->in_place ? "true" : "false");
}

static void print_totals_text(FILE *f, const struct dse_cost_totals *t, const char *prefix) {
    char a[CELL_MAX], b[CELL_MAX], c[CELL_MAX], d[CELL_MAX];
    fprintf(f, "%sparams               %s (weights %s, biases %s) = %s, %.4g MiB at 4 bytes\n",
            prefix, fmt_int(a, t->params, 1), fmt_int(b, t->weights, 1), fmt_int(c, t->biases, 1),
            fmt_si(d, (double)t->param_bytes, "B"), (double)t->param_bytes / 1048576.0);
    fprintf(f, "%sweights only         %s\n", prefix,
            fmt_si(a, (double)t->weights * DSE_BYTES_PER_VALUE, "B"));
    if (t->buffers)
        fprintf(f, "%sbuffers (BN stats)   %s, model file %s\n", prefix, fmt_int(a, t->buffers, 1),
                fmt_si(b, (double)t->model_bytes, "B"));
    fprintf(f, "%sFLOPs forward        %s = %s\n", prefix, fmt_int(a, t->flops, 1),
            fmt_si(b, (double)t->flops, "FLOP"));
    fprintf(f, "%sMACs forward         %s = %s (multiply-adds: FLOPs / 2)\n", prefix,
            fmt_int(a, dse_cost_macs(t->flops), 1), fmt_si(b, (double)dse_cost_macs(t->flops), "MAC"));
    fprintf(f, "%sFLOPs training (3x)  %s = %s\n", prefix, fmt_int(a, t->flops_train, 1),
            fmt_si(b, (double)t->flops_train, "FLOP"));
    fprintf(f, "%sother ops forward    %s = %s\n", prefix, fmt_int(a, t->other_ops, 1),
            fmt_si(b, (double)t->other_ops, "op"));
    fprintf(f, "%sactivations          %s values = %s (input %s values not included)\n", prefix,
            fmt_int(a, t->activations, 1), fmt_si(b, (double)t->activation_bytes, "B"),
            fmt_int(c, t->input_values, 1));
    fprintf(f, "%smemory, inference    %s (estimate: weights + largest set of live tensors)\n",
            prefix, fmt_si(a, (double)t->mem_infer_bytes, "B"));
    fprintf(f, "%smemory, training     %s (estimate: input + activations and their gradients"
               " + params, gradients and momentum)\n",
            prefix, fmt_si(a, (double)t->mem_train_bytes, "B"));
}

enum dse_rows dse_report_rows(const char *path, int expand) {
    if (expand) return DSE_ROWS_LAYERS;
    return dse_has_ext(path, ".onnx") ? DSE_ROWS_BLOCKS : DSE_ROWS_MODULES;
}

enum dse_status dse_report_analyze(FILE *f, const char *path, const struct dse_net *net,
                                   int64_t batch, enum dse_rows view, enum dse_format fmt,
                                   struct dse_err *err) {
    struct analyzed a;
    const int expand = view == DSE_ROWS_LAYERS;
    enum dse_status st = analyze(net, batch, view, &a, err);
    if (st) return st;
    const struct dse_cost_totals *t = &a.tot;

    if (fmt == DSE_FORMAT_JSON) {
        fputs("{\n  \"network\": ", f);
        json_str(f, net->name);
        fputs(",\n  \"file\": ", f);
        json_str(f, path);
        fprintf(f, ",\n  \"batch\": %" PRId64 ",\n  \"input\": {\"c\": %d, \"h\": %d, \"w\": %d},\n"
                   "  \"expanded\": %s,\n",
                batch, net->in_c, net->in_h, net->in_w, expand ? "true" : "false");
        int skipped = 0; /* --skip-unknown's zero-cost layers (docs/onnx.md): said only where there are some */
        for (int i = 0; i < net->n_layers; i++) skipped += net->layers[i].type == DSE_LAYER_UNKNOWN;
        if (skipped) fprintf(f, "  \"skipped_unknown\": %d,\n", skipped);
        fputs("  \"conventions\": ", f);
        fputc('"', f);
        for (int i = 0; i < DSE_ARRAY_LEN(conventions); i++)
            fprintf(f, "%s%s", i ? " " : "", conventions[i]);
        fputc('"', f);
        fputs(",\n  \"layers\": [\n", f);
        for (int i = 0; i < a.n_rows; i++) {
            fputs("    ", f);
            json_row(f, &a.rows[i]);
            fputs(i + 1 < a.n_rows ? ",\n" : "\n", f);
        }
        fputs("  ],\n  \"totals\": ", f);
        json_totals(f, t);
        fputs("\n}\n", f);
        analyzed_free(&a);
        return DSE_OK;
    }

    int pretty = fmt != DSE_FORMAT_CSV;
    struct table tb;
    tbl_init(&tb);
    static const struct tbl_column cols[] = { /* the last three in CSV only */
        { .head = "layer" },                  { .head = "type" },
        { .head = "output", .right = 1 },      { .head = "params", .right = 1 },
        { .head = "FLOPs", .right = 1 },       { .head = "MACs", .right = 1 },
        { .head = "activations", .right = 1 }, { .head = "RF", .right = 1 },
        { .head = "weights", .right = 1 },     { .head = "biases", .right = 1 },
        { .head = "other_ops", .right = 1 },
    };
    tbl_cols(&tb, cols, fmt == DSE_FORMAT_CSV ? DSE_ARRAY_LEN(cols) : DSE_ARRAY_LEN(cols) - 3);
    for (int i = 0; i <= a.n_rows; i++) {
        char (*c)[CELL_MAX] = tbl_row(&tb);
        if (!c) {
            tbl_free(&tb);
            analyzed_free(&a);
            return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        }
        if (i == a.n_rows) { /* totals row */
            strcpy(c[0], "total");
            fmt_int(c[3], t->params, pretty);
            fmt_int(c[4], t->flops, pretty);
            fmt_int(c[5], dse_cost_macs(t->flops), pretty);
            fmt_int(c[6], t->activations, pretty);
            if (fmt == DSE_FORMAT_CSV) {
                fmt_int(c[8], t->weights, 0);
                fmt_int(c[9], t->biases, 0);
                fmt_int(c[10], t->other_ops, 0);
            }
            break;
        }
        const struct dse_cost_row *r = &a.rows[i];
        dse_strlcpy(c[0], r->name, CELL_MAX);
        dse_strlcpy(c[1], r->type, CELL_MAX);
        fmt_shape(c[2], r->out_c, r->out_h, r->out_w);
        fmt_int(c[3], r->cost.params, pretty);
        fmt_int(c[4], r->cost.flops, pretty);
        fmt_int(c[5], dse_cost_macs(r->cost.flops), pretty);
        fmt_int(c[6], r->cost.activations, pretty);
        fmt_rf(c[7], r->rf_h, r->rf_w);
        if (fmt == DSE_FORMAT_CSV) {
            fmt_int(c[8], r->cost.weights, 0);
            fmt_int(c[9], r->cost.biases, 0);
            fmt_int(c[10], r->cost.other_ops, 0);
        }
    }
    if (fmt != DSE_FORMAT_CSV) {
        const char *p = fmt == DSE_FORMAT_MD ? "" : "# ";
        fprintf(f, "%sdse analyze %s: network \"%s\", input %dx%dx%d (CxHxW), batch %" PRId64 "%s\n",
                p, path, net->name, net->in_c, net->in_h, net->in_w, batch,
                fmt == DSE_FORMAT_MD ? "\n" : "");
        print_conventions(f, fmt);
    }
    tbl_print(f, &tb, fmt);
    if (fmt != DSE_FORMAT_CSV) {
        fputs(fmt == DSE_FORMAT_MD ? "\n```\n" : "\n", f);
        print_totals_text(f, t, "");
        if (fmt == DSE_FORMAT_MD) fputs("```\n", f);
    }
    tbl_free(&tb);
    analyzed_free(&a);
    return DSE_OK;
}

/* The model's lines above the table: what is counted, the sizes and where img/s came from. */
static void comm_header(FILE *f, const char *path, const struct dse_net *net, const struct dse_cost_totals *t,
                        const struct dse_comm_opts *o, int64_t workers, const char *how, enum dse_format fmt) {
    const char *p = fmt == DSE_FORMAT_MD ? "" : "# ";
    char a[CELL_MAX], b[CELL_MAX], c[CELL_MAX];
    fprintf(f, "%sdse analyze %s: network \"%s\", data-parallel training on 1 to %" PRId64 " workers%s\n", p, path,
            net->name, workers, fmt == DSE_FORMAT_MD ? "\n" : "");
    fprintf(f, "%smodel: FireCaffe (thesis ch. 3; docs/comm-model.md). Each worker computes the gradients of its\n"
               "%s  share of the batch; they are summed by a parameter server, eq. 3.3: P x (|dW| / BW + latency),\n"
               "%s  or a reduction tree, eq. 3.4: 2 x ceil(log2 P) x (|dW| / BW + latency); none for P = 1.\n"
               "%s  step = compute + communication (no overlap); speedup = one worker's step / the step.\n",
            p, p, p, p);
    if (fmt == DSE_FORMAT_MD) fputs("\n```\n", f);
    fprintf(f, "|dW| per step  %s bytes = %s (%s params x 4 bytes)\n", fmt_int(a, o->grad_bytes, 1),
            fmt_si(b, (double)o->grad_bytes, "B"), fmt_int(c, t->params, 1));
    fprintf(f, "network        %.4g GB/s per link (%.4g Gb/s), latency %.4g us per message\n", o->bandwidth / 1e9,
            o->bandwidth * 8 / 1e9, o->latency_s * 1e6);
    fprintf(f, "compute        %.4g img/s per worker, %s\n", o->img_per_s, how);
    fprintf(f, "batch          %" PRId64 " images per step, ceil(%" PRId64 " / P) on the busiest worker\n", o->batch,
            o->batch);
    fputs(fmt == DSE_FORMAT_MD ? "```\n\n" : "\n", f);
}

enum dse_status dse_report_comm(FILE *f, const char *path, const struct dse_net *net,
                                const struct dse_comm_opts *opts, int64_t workers, const char *source,
                                const char *how, enum dse_format fmt, struct dse_err *err) {
    struct analyzed a;
    enum dse_status st = analyze(net, 1, DSE_ROWS_MODULES, &a, err);
    if (st) return st;
    struct dse_comm_opts o = *opts;
    o.grad_bytes = a.tot.param_bytes;
    int64_t w[24];
    int n = dse_comm_workers_list(workers, w, DSE_ARRAY_LEN(w));
    struct dse_comm_point pts[24];
    for (int i = 0; i < n && !st; i++) st = dse_comm_point(&o, w[i], &pts[i], err);
    if (st) {
        analyzed_free(&a);
        return st;
    }
    if (fmt == DSE_FORMAT_JSON) {
        fputs("{\n  \"network\": ", f);
        json_str(f, net->name);
        fputs(",\n  \"file\": ", f);
        json_str(f, path);
        fprintf(f, ",\n  \"model\": \"firecaffe\",\n  \"params\": %" PRId64 ",\n  \"grad_bytes\": %" PRId64
                   ",\n  \"bandwidth_bytes_per_s\": %.9g,\n  \"latency_s\": %.9g,\n  \"batch\": %" PRId64
                   ",\n  \"img_per_s\": %.9g,\n  \"img_per_s_source\": \"%s\",\n  \"points\": [\n",
                a.tot.params, o.grad_bytes, o.bandwidth, o.latency_s, o.batch, o.img_per_s, source);
        for (int i = 0; i < n; i++) {
            const struct dse_comm_point *q = &pts[i];
            fprintf(f, "    {\"workers\": %" PRId64 ", \"images\": %" PRId64 ", \"ps_s\": %.9g, \"tree_s\": %.9g"
                       ", \"compute_s\": %.9g, \"step_ps_s\": %.9g, \"step_tree_s\": %.9g, \"speedup_ps\": %.9g"
                       ", \"speedup_tree\": %.9g, \"efficiency_ps\": %.9g, \"efficiency_tree\": %.9g}%s\n",
                    q->workers, q->images, q->ps_s, q->tree_s, q->compute_s, q->step_ps_s, q->step_tree_s,
                    q->speedup_ps, q->speedup_tree, q->efficiency_ps, q->efficiency_tree, i + 1 < n ? "," : "");
        }
        fputs("  ]\n}\n", f);
        analyzed_free(&a);
        return DSE_OK;
    }
    struct table tb;
    tbl_init(&tb);
    static const struct tbl_column cols[] = {
        { .head = "workers", .right = 1 },      { .head = "images", .right = 1 },
        { .head = "PS comm ms", .right = 1 },   { .head = "tree comm ms", .right = 1 },
        { .head = "compute ms", .right = 1 },   { .head = "step ms PS", .right = 1 },
        { .head = "step ms tree", .right = 1 }, { .head = "speedup PS", .right = 1 },
        { .head = "speedup tree", .right = 1 }, { .head = "efficiency PS", .right = 1 },
        { .head = "efficiency tree", .right = 1 },
    };
    tbl_cols(&tb, cols, DSE_ARRAY_LEN(cols));
    const char *num = fmt == DSE_FORMAT_CSV ? "%.9g" : "%.2f";
    for (int i = 0; i < n; i++) {
        const struct dse_comm_point *q = &pts[i];
        char (*c)[CELL_MAX] = tbl_row(&tb);
        if (!c) {
            tbl_free(&tb);
            analyzed_free(&a);
            return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        }
        const double v[] = { 1e3 * q->ps_s,     1e3 * q->tree_s,     1e3 * q->compute_s, 1e3 * q->step_ps_s,
                             1e3 * q->step_tree_s, q->speedup_ps,      q->speedup_tree,    q->efficiency_ps,
                             q->efficiency_tree };
        fmt_int(c[0], q->workers, 0);
        fmt_int(c[1], q->images, 0);
        for (int k = 0; k < DSE_ARRAY_LEN(v); k++) snprintf(c[2 + k], CELL_MAX, num, v[k]);
    }
    if (fmt != DSE_FORMAT_CSV) comm_header(f, path, net, &a.tot, &o, workers, how, fmt);
    tbl_print(f, &tb, fmt);
    tbl_free(&tb);
    analyzed_free(&a);
    return DSE_OK;
}

static const char *fmt_ratio(char *buf, int64_t v, int64_t b) {
    if (b == 0 && v == 0) snprintf(buf, CELL_MAX, "-");
    else if (b == 0) snprintf(buf, CELL_MAX, "new");
    else snprintf(buf, CELL_MAX, "%.3g", (double)v / (double)b);
    return buf;
}

enum dse_status dse_report_diff(FILE *f, const char *base_path, const struct dse_net *base,
                                const char *var_path, const struct dse_net *var, int64_t batch,
                                int expand, enum dse_format fmt, struct dse_err *err) {
    struct analyzed a, b;
    const enum dse_rows view = expand ? DSE_ROWS_LAYERS : DSE_ROWS_MODULES;
    enum dse_status st = analyze(base, batch, view, &a, err);
    if (st) return st;
    if ((st = analyze(var, batch, view, &b, err))) {
        analyzed_free(&a);
        return st;
    }
    struct dse_delta_row *rows = calloc((size_t)(a.n_rows + b.n_rows + 1), sizeof *rows);
    if (!rows) {
        analyzed_free(&a), analyzed_free(&b);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    struct dse_delta d;
    dse_delta_rows(a.rows, a.n_rows, b.rows, b.n_rows, rows, &d);
    const struct dse_cost_totals *ta = &a.tot, *tv = &b.tot;
    char span[2 * DSE_NAME_MAX + 64] = "";
    if (d.first_changed >= 0) {
        const struct dse_delta_row *r0 = &rows[d.first_changed], *r1 = &rows[d.last_changed];
        snprintf(span, sizeof span, "%s .. %s", (r0->variant ? r0->variant : r0->base)->name,
                 (r1->variant ? r1->variant : r1->base)->name);
    }

    if (fmt == DSE_FORMAT_JSON) {
        fputs("{\n  \"base\": ", f);
        json_str(f, base_path);
        fputs(",\n  \"variant\": ", f);
        json_str(f, var_path);
        fprintf(f, ",\n  \"batch\": %" PRId64 ",\n  \"reach\": \"%s\",\n  \"span\": %d,\n"
                   "  \"first_changed\": ", batch, dse_reach_str(d.reach), d.span);
        if (d.first_changed >= 0) {
            const struct dse_delta_row *r0 = &rows[d.first_changed], *r1 = &rows[d.last_changed];
            json_str(f, (r0->variant ? r0->variant : r0->base)->name);
            fputs(",\n  \"last_changed\": ", f);
            json_str(f, (r1->variant ? r1->variant : r1->base)->name);
        } else {
            fputs("null,\n  \"last_changed\": null", f);
        }
        fputs(",\n  \"layers\": [\n", f);
        for (int i = 0; i < d.n_rows; i++) {
            fprintf(f, "    {\"change\": \"%s\", \"base\": ", dse_delta_kind_str(rows[i].kind));
            if (rows[i].base) json_row(f, rows[i].base); else fputs("null", f);
            fputs(", \"variant\": ", f);
            if (rows[i].variant) json_row(f, rows[i].variant); else fputs("null", f);
            fputs(i + 1 < d.n_rows ? "},\n" : "}\n", f);
        }
        fputs("  ],\n  \"totals\": {\"base\": ", f);
        json_totals(f, ta);
        fputs(", \"variant\": ", f);
        json_totals(f, tv);
        fputs("}\n}\n", f);
        goto done;
    }

    int pretty = fmt != DSE_FORMAT_CSV;
    struct table tb;
    tbl_init(&tb);
    static const struct tbl_column cols[] = {
        { .head = "layer" },                     { .head = "type" },
        { .head = "change" },                    { .head = "base output", .right = 1 },
        { .head = "variant output", .right = 1 }, { .head = "output x", .right = 1 },
        { .head = "params x", .right = 1 },       { .head = "FLOPs x", .right = 1 },
        { .head = "variant params", .right = 1 }, { .head = "variant FLOPs", .right = 1 },
    };
    tbl_cols(&tb, cols, DSE_ARRAY_LEN(cols));
    for (int i = 0; i <= d.n_rows; i++) {
        char (*c)[CELL_MAX] = tbl_row(&tb);
        if (!c) {
            tbl_free(&tb);
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            goto done;
        }
        if (i == d.n_rows) {
            strcpy(c[0], "total");
            fmt_ratio(c[5], tv->activations, ta->activations);
            fmt_ratio(c[6], tv->params, ta->params);
            fmt_ratio(c[7], tv->flops, ta->flops);
            fmt_int(c[8], tv->params, pretty);
            fmt_int(c[9], tv->flops, pretty);
            break;
        }
        const struct dse_cost_row *rb = rows[i].base, *rv = rows[i].variant;
        const struct dse_cost_row *r = rv ? rv : rb;
        dse_strlcpy(c[0], r->name, CELL_MAX);
        dse_strlcpy(c[1], r->type, CELL_MAX);
        dse_strlcpy(c[2], dse_delta_kind_str(rows[i].kind), CELL_MAX);
        if (rb) fmt_shape(c[3], rb->out_c, rb->out_h, rb->out_w); else strcpy(c[3], "-");
        if (rv) fmt_shape(c[4], rv->out_c, rv->out_h, rv->out_w); else strcpy(c[4], "-");
        if (rb && rv) {
            fmt_ratio(c[5], (int64_t)rv->out_c * rv->out_h * rv->out_w,
                      (int64_t)rb->out_c * rb->out_h * rb->out_w);
            fmt_ratio(c[6], rv->cost.params, rb->cost.params);
            fmt_ratio(c[7], rv->cost.flops, rb->cost.flops);
        } else {
            strcpy(c[5], "-"), strcpy(c[6], "-"), strcpy(c[7], "-");
        }
        fmt_int(c[8], rv ? rv->cost.params : 0, pretty);
        fmt_int(c[9], rv ? rv->cost.flops : 0, pretty);
    }
    if (fmt != DSE_FORMAT_CSV) {
        const char *p = fmt == DSE_FORMAT_MD ? "" : "# ";
        const char *nl = fmt == DSE_FORMAT_MD ? "\n" : "";
        fprintf(f, "%sdse diff: base %s (input %dx%dx%d) vs variant %s (input %dx%dx%d), batch %" PRId64 "%s\n",
                p, base_path, base->in_c, base->in_h, base->in_w, var_path, var->in_c, var->in_h,
                var->in_w, batch, nl);
        fprintf(f, "%sratios are variant / base; rows matched by name%s\n", p, nl);
        print_conventions(f, fmt);
    }
    tbl_print(f, &tb, fmt);
    tbl_free(&tb);
    if (fmt != DSE_FORMAT_CSV) {
        char s1[CELL_MAX], s2[CELL_MAX], s3[CELL_MAX], s4[CELL_MAX];
        const char *pre = fmt == DSE_FORMAT_MD ? "\n```\n" : "\n";
        fputs(pre, f);
        fprintf(f, "params      %s -> %s (x%.4g); weights only %s -> %s\n",
                fmt_si(s1, (double)ta->param_bytes, "B"), fmt_si(s2, (double)tv->param_bytes, "B"),
                (double)tv->params / (double)(ta->params ? ta->params : 1),
                fmt_si(s3, (double)ta->weights * DSE_BYTES_PER_VALUE, "B"),
                fmt_si(s4, (double)tv->weights * DSE_BYTES_PER_VALUE, "B"));
        fprintf(f, "FLOPs       %s -> %s (x%.4g)\n", fmt_si(s1, (double)ta->flops, "FLOP"),
                fmt_si(s2, (double)tv->flops, "FLOP"),
                (double)tv->flops / (double)(ta->flops ? ta->flops : 1));
        fprintf(f, "activations %s -> %s values (x%.4g)\n", fmt_int(s1, ta->activations, 1),
                fmt_int(s2, tv->activations, 1),
                (double)tv->activations / (double)(ta->activations ? ta->activations : 1));
        if (d.first_changed < 0)
            fputs("reach       none: the networks cost the same\n", f);
        else
            fprintf(f, "reach       %s: %s, %d layer%s doing work (local = the changed layer and "
                       "at most its successor; global = reaches the output, a softmax or loss after it aside)\n",
                    dse_reach_str(d.reach), span, d.span, d.span == 1 ? "" : "s");
        if (fmt == DSE_FORMAT_MD) fputs("```\n", f);
    }
done:
    free(rows);
    analyzed_free(&a);
    analyzed_free(&b);
    return st;
}
