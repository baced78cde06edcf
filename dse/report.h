/* report.h: the text the CLI prints for `dse analyze` and `dse diff`, in four formats.
 * The JSON layout is a stable interface, documented in docs/json.md. */
#ifndef DSE_CLI_REPORT_H
#define DSE_CLI_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "metaparams/net.h"

enum dse_format { DSE_FORMAT_TABLE = 0, DSE_FORMAT_JSON, DSE_FORMAT_CSV, DSE_FORMAT_MD };

/* Format by name ("table", "json", "csv", "md"); 0 on success, -1 if unknown. */
int dse_format_from_str(const char *s, enum dse_format *out);

/* Costs of net (inferred) at batch; path is the file it came from (for the header).
 * expand: one row per primitive layer instead of one per Fire module. */
enum dse_status dse_report_analyze(FILE *f, const char *path, const struct dse_net *net,
                                   int64_t batch, int expand, enum dse_format fmt,
                                   struct dse_err *err);

/* Per-row ratios variant/base, totals, and the reach of the change. */
enum dse_status dse_report_diff(FILE *f, const char *base_path, const struct dse_net *base,
                                const char *var_path, const struct dse_net *var, int64_t batch,
                                int expand, enum dse_format fmt, struct dse_err *err);

#endif
