/* report_dsez.c: dse analyze --compressed MODEL.dsez (issue #35): where a compressed model's
 * bytes go, per stored tensor, as a table, JSON, CSV or Markdown; the columns are COLUMNS'
 * rows, once for every format. The file: docs/dsez.md. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dse/report.h"
#include "engine/compress.h"
#include "sweep/sweep.h"

/* One row: a tensor, or (t NULL) the header and text block, or the total. */
struct row {
    const char *layer, *role;
    int64_t     values, nonzero, weights, indices, codebook, raw, total;
    int         bits, sparse;   /* bits -1: not a tensor (header, total); 0: float32 */
};

/*      key          title          width */
#define COLUMNS(X)                                        \
    X(layer,       "layer",          18)                  \
    X(role,        "role",            8)                  \
    X(values,      "values",         10)                  \
    X(density,     "density",         7)                  \
    X(bits,        "bits",            7)                  \
    X(sparse_bits, "sparse",          6)                  \
    X(weight_bytes, "weights B",     10)                  \
    X(index_bytes, "indices B",      10)                  \
    X(codebook_bytes, "codebook B",  10)                  \
    X(raw_bytes,   "raw B",          10)                  \
    X(bytes,       "total B",        10)

/* A cell's text (JSON: its value, quoted where text). */
static void cell(char *buf, size_t size, const char *key, const struct row *r, int json) {
    if (!strcmp(key, "layer")) snprintf(buf, size, "%s", r->layer);
    else if (!strcmp(key, "role")) snprintf(buf, size, "%s", r->role);
    else if (!strcmp(key, "values")) snprintf(buf, size, "%" PRId64, r->values);
    else if (!strcmp(key, "density"))
        snprintf(buf, size, r->values ? "%.4f" : (json ? "null" : "-"), r->values ? (double)r->nonzero / (double)r->values : 0.0);
    else if (!strcmp(key, "bits")) {
        if (r->bits < 0) snprintf(buf, size, json ? "null" : "-");
        else if (r->bits == 0) snprintf(buf, size, json ? "0" : "float32");
        else snprintf(buf, size, "%d", r->bits);
    } else if (!strcmp(key, "sparse_bits")) snprintf(buf, size, r->bits > 0 ? "%d" : (json ? "null" : "-"), r->sparse);
    else if (!strcmp(key, "weight_bytes")) snprintf(buf, size, "%" PRId64, r->weights);
    else if (!strcmp(key, "index_bytes")) snprintf(buf, size, "%" PRId64, r->indices);
    else if (!strcmp(key, "codebook_bytes")) snprintf(buf, size, "%" PRId64, r->codebook);
    else if (!strcmp(key, "raw_bytes")) snprintf(buf, size, "%" PRId64, r->raw);
    else snprintf(buf, size, "%" PRId64, r->total);
}

static void put_row(FILE *f, const struct row *r, enum dse_format fmt, int first) {
    char buf[160];
    const char *sep = fmt == DSE_FORMAT_CSV ? "," : fmt == DSE_FORMAT_MD ? " | " : "  ";
    int col = 0;
    if (fmt == DSE_FORMAT_JSON) fprintf(f, "%s\n    {", first ? "" : ",");
    if (fmt == DSE_FORMAT_MD) fprintf(f, "| ");
#define X(key, title, width)                                                                          \
    cell(buf, sizeof buf, #key, r, fmt == DSE_FORMAT_JSON);                                           \
    if (fmt == DSE_FORMAT_JSON && col < 2) fprintf(f, "%s\"%s\": ", col ? ", " : "", #key),            \
        dse_json_write_str(f, buf, strlen(buf));                                                      \
    else if (fmt == DSE_FORMAT_JSON) fprintf(f, "%s\"%s\": %s", col ? ", " : "", #key, buf);          \
    else if (fmt == DSE_FORMAT_TABLE) fprintf(f, col < 2 ? "%s%-*s" : "%s%*s", col ? sep : "", width, buf); \
    else fprintf(f, "%s%s", col ? sep : "", buf);                                                     \
    col++;
    COLUMNS(X)
#undef X
    if (fmt == DSE_FORMAT_JSON) fprintf(f, "}");
    else fprintf(f, "%s\n", fmt == DSE_FORMAT_MD ? " |" : "");
}

static void put_head(FILE *f, enum dse_format fmt) {
    const char *sep = fmt == DSE_FORMAT_CSV ? "," : fmt == DSE_FORMAT_MD ? " | " : "  ";
    int col = 0;
    if (fmt == DSE_FORMAT_MD) fprintf(f, "| ");
#define X(key, title, width)                                                                               \
    if (fmt == DSE_FORMAT_TABLE) fprintf(f, col < 2 ? "%s%-*s" : "%s%*s", col ? sep : "", width, title);      \
    else fprintf(f, "%s%s", col ? sep : "", fmt == DSE_FORMAT_CSV ? #key : title);                        \
    col++;
    COLUMNS(X)
#undef X
    fprintf(f, "%s\n", fmt == DSE_FORMAT_MD ? " |" : "");
    if (fmt == DSE_FORMAT_MD) {
        col = 0;
#define X(key, title, width) fprintf(f, "|%s", col < 2 ? "---" : "---:"), col++;
        COLUMNS(X)
#undef X
        fprintf(f, "|\n");
    }
}

enum dse_status dse_report_compressed(FILE *f, const char *path, enum dse_format fmt, struct dse_err *err) {
    struct dse_dsez z;
    enum dse_status st = dse_dsez_read_sizes(path, &z, err);
    if (st) return st;
    struct row total = { .layer = "total", .role = "", .bits = -1 };
    int64_t shared_values = 0, shared_nonzero = 0, parts = 0;
    if (fmt == DSE_FORMAT_TABLE)
        fprintf(f, "# %s: a compressed model (docs/dsez.md); B = bytes. weights: the Huffman-coded codebook\n"
                   "#   indices; indices: the coded relative sparse indices; header: the file's header, text block\n"
                   "#   and tensor records\n", path);
    if (fmt == DSE_FORMAT_JSON) {
        fprintf(f, "{\n  \"file\": ");
        dse_json_write_str(f, path, strlen(path));
        fprintf(f, ",\n  \"tensors\": [");
    }
    else put_head(f, fmt);
    for (int k = 0; k < z.n; k++) {
        const struct dse_dsez_tensor *t = &z.t[k];
        struct row r = { .layer = t->layer, .role = t->role, .values = t->count, .nonzero = t->nonzero,
                         .weights = t->weight_bytes, .indices = t->index_bytes, .codebook = t->codebook_bytes,
                         .raw = t->raw_bytes, .bits = t->bits, .sparse = t->sparse_bits };
        r.total = r.weights + r.indices + r.codebook + r.raw;
        put_row(f, &r, fmt, k == 0);
        parts += r.total;
        total.values += r.values, total.nonzero += r.nonzero, total.weights += r.weights;
        total.indices += r.indices, total.codebook += r.codebook, total.raw += r.raw;
        if (t->bits) shared_values += t->count, shared_nonzero += t->nonzero;
    }
    struct row head = { .layer = "header", .role = "", .bits = -1, .total = z.file_bytes - parts };
    put_row(f, &head, fmt, z.n == 0);
    total.total = z.file_bytes;
    put_row(f, &total, fmt, 0);
    const int64_t float_bytes = 4 * total.values;
    const double ratio = z.file_bytes ? (double)float_bytes / (double)z.file_bytes : 0,
                 density = shared_values ? (double)shared_nonzero / (double)shared_values : 1.0;
    if (fmt == DSE_FORMAT_JSON)
        fprintf(f, "\n  ],\n  \"file_bytes\": %" PRId64 ",\n  \"float32_bytes\": %" PRId64 ",\n  \"ratio\": %.4f,\n"
                   "  \"shared_density\": %.4f\n}\n", z.file_bytes, float_bytes, ratio, density);
    else if (fmt == DSE_FORMAT_TABLE || fmt == DSE_FORMAT_MD)
        fprintf(f, "\n%s: %" PRId64 " bytes (%.4g MB); float32 %" PRId64 " bytes (%.4g MB): %.2fx %s; "
                   "weight-shared tensors at density %.3f\n", path, z.file_bytes, z.file_bytes / 1e6, float_bytes,
                float_bytes / 1e6, ratio >= 1 || ratio <= 0 ? ratio : 1 / ratio, ratio >= 1 || ratio <= 0 ? "smaller"
                : "larger", density);
    dse_dsez_free(&z);
    return DSE_OK;
}
