/* report_impl.h: what dse report's two files share (private to dse/): report_sweep.c
 * (the tables: Markdown, CSV, TeX, JSON) and report_plot.c (the SVG plots). */
#ifndef DSE_REPORT_IMPL_H
#define DSE_REPORT_IMPL_H

#include <stddef.h>

#include "dse/report.h"
#include "sweep/sweep.h"

/* Metaparameter key's value v as text for tables, CSV, JSON and labels (report_sweep.c). */
const char *dse_report_fmt_value(char *buf, size_t size, const char *key, const struct dse_json *v);
/* Cut s before a UTF-8 sequence that snprintf truncated. */
void dse_report_utf8_trim(char *s);
/* What the frontier of s is over: "max top1, min model size" (trained) or "min model size, min FLOPs". */
const char *dse_report_objective(const struct dse_sweep_view *s);
/* "N pruned, N pending, N done" and the other statuses that occur: the header line's counts. */
void dse_report_counts_text(char *buf, size_t size, const struct dse_sweep_view *s);

/* The plot of dse report DIR --plot FILE (report_plot.c): accuracy (or the other cost)
 * against model size, written through a temporary file. */
enum dse_status dse_report_plot_size(const struct dse_sweep_view *s, const char *plot_path, struct dse_err *err);

#endif
