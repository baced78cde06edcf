/* report.h: the text the CLI prints for `dse analyze`, `dse diff` (JSON layout:
 * docs/json.md) and `dse report` (docs/report.md). The JSON layouts are stable. */
#ifndef DSE_CLI_REPORT_H
#define DSE_CLI_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "metaparams/net.h"

enum dse_format { DSE_FORMAT_TABLE = 0, DSE_FORMAT_JSON, DSE_FORMAT_CSV, DSE_FORMAT_MD, DSE_FORMAT_TEX };

/* Format by name ("table", "json", "csv", "md", "tex"); 0 on success, -1 if unknown.
 * dse analyze and dse diff take the first four; dse report takes md, csv, tex, json. */
int dse_format_from_str(const char *s, enum dse_format *out);

/* Costs of net (inferred) at batch; path is the file it came from (for the header). view:
 * what a row holds, in the table and in JSON, CSV and Markdown alike (analysis.h). */
enum dse_status dse_report_analyze(FILE *f, const char *path, const struct dse_net *net,
                                   int64_t batch, enum dse_rows view, enum dse_format fmt,
                                   struct dse_err *err);

/* The view dse analyze shows of the network read from path: every layer with --expand
 * (expand nonzero); else Fire modules one row each and, for an ONNX model (path ends in
 * .onnx, as dse_netfile_load reads it), blocks by name prefix too: an exporter names nodes
 * by module path. .cfg and prototxt names are hand-written: there a '/' also joins a layer
 * and its parts (conv1, conv1/bn), so they are not grouped (docs/cli.md, "Blocks"). */
enum dse_rows dse_report_rows(const char *path, int expand);

/* dse analyze NET --workers P (docs/comm-model.md): the communication model of data-parallel
 * training (analysis/comm.c) for 1, 2, 4, ... workers and `workers` itself, each row's
 * parameter-server and reduction-tree communication, compute, step, speedup and efficiency.
 * o's grad_bytes is set here from net's params (4 bytes each). Where its img_per_s came from:
 * source, one word for JSON's img_per_s_source ("given", "estimated", "measured"), and how,
 * the header's words ("given (--img-per-s)", "estimated: ...", "measured on this machine: ..."). */
struct dse_comm_opts;
enum dse_status dse_report_comm(FILE *f, const char *path, const struct dse_net *net,
                                const struct dse_comm_opts *o, int64_t workers, const char *source,
                                const char *how, enum dse_format fmt, struct dse_err *err);

/* dse analyze --compressed: a .dsez's bytes per stored tensor, the header, the total against
 * float32 and the ratio (dse/report_dsez.c; docs/dsez.md). The reader's errors as they are. */
enum dse_status dse_report_compressed(FILE *f, const char *path, enum dse_format fmt, struct dse_err *err);

/* Per-row ratios variant/base, totals, and the reach of the change. */
enum dse_status dse_report_diff(FILE *f, const char *base_path, const struct dse_net *base,
                                const char *var_path, const struct dse_net *var, int64_t batch,
                                int expand, enum dse_format fmt, struct dse_err *err);

/* A sweep's best trained candidate: the done candidate of highest top-1, ties to the
 * smaller model, then the smaller id. id is "" when there is none. */
struct dse_report_best {
    char    id[40];
    int64_t index;        /* grid index */
    double  top1;         /* in [0, 1] */
    int64_t model_bytes;
};

/* dse report DIR (dse/report_sweep.c): every candidate of a sweep directory
 * (docs/sweep-dir.md) and its Pareto frontier, in fmt (MD, CSV, TEX or JSON; TABLE is
 * read as MD). If plot_path is non-NULL, also writes an SVG plot there. If best is
 * non-NULL it receives the best candidate once the sweep has finished (no candidate
 * pending or running), else id "". */
enum dse_status dse_report_sweep(FILE *f, const char *dir, enum dse_format fmt, const char *plot_path,
                                 struct dse_report_best *best, struct dse_err *err);
/* The same with the frontier on compressed size where compressed is 1 (dse report --size
 * compressed: the .dsez files a space's compress section has its workers write; a candidate
 * without one is never on it). DSE_ERR_CONFIG naming dir if the space has no compress section;
 * DSE_ERR_UNSUPPORTED with plot_path (the plot's axis is the float size). */
enum dse_status dse_report_sweep_size(FILE *f, const char *dir, enum dse_format fmt, const char *plot_path,
                                      int compressed, struct dse_report_best *best, struct dse_err *err);

/* Whether dse report's CSV (fmt CSV) or JSON (fmt JSON) shows a candidate record's key
 * (sweep/record.def) under its name in some sweep: its own column lists decide
 * (dse/report_sweep.c); test_report checks record.def's reports column against this. */
int dse_report_shows_key(enum dse_format fmt, const char *key);

/* dse report DIR --plot-flops FILE: the plot of dse_report_sweep with forward FLOPs on x
 * instead of model size, and the frontier on (max top-1, min FLOPs); before training, on
 * (min FLOPs, min model size) with model size on y. Written like the plot (temporary
 * file, then renamed). */
enum dse_status dse_report_plot_flops(const char *dir, const char *svg_path, struct dse_err *err);

/* The command that exports candidate id of sweep dir to ONNX, "dse export DIR --id ID
 * --out ID.onnx", the directory quoted for a POSIX shell where it needs quotes. */
void dse_report_export_cmd(char *buf, size_t size, const char *dir, const char *id);

/* dse export --best: the best trained candidate of a sweep directory whose model is within
 * max_mb (10^6 bytes; <= 0: any size), finished or not. DSE_ERR_CONFIG if no candidate has
 * finished training or none fits. */
enum dse_status dse_report_best(const char *dir, double max_mb, struct dse_report_best *out, struct dse_err *err);

/* The Pareto frontiers of n sweep directories (1 to 8, all trained or all untrained) on
 * one SVG plot, each in its colour, for comparing two design spaces (dse report A B
 * --plot F). */
enum dse_status dse_report_overlay(const char *const *dirs, int n, const char *plot_path, struct dse_err *err);

/* Learning curves of a sweep directory as an SVG file: test top-1 after each epoch of
 * every trained candidate (the frontier's highlighted, stopped and diverged ones marked). */
enum dse_status dse_report_curves(const char *dir, const char *svg_path, struct dse_err *err);

/* The width in pixels the SVG writers reserve for text s (UTF-8) at font size font_px, bold
 * or not: per character, the larger advance of DejaVu Sans (what Debian's renderers draw
 * "sans-serif" with) and Helvetica/Arial, bold 1.2 times wider; any other character 1 em.
 * Labels are placed with it (kept inside the canvas, off the error bars and each other). */
double dse_report_text_width(const char *s, double font_px, int bold);

#endif
