/* report_util.h: what test_report's files (tests/test_report*.c) share: the headers they use,
 * a report run into a string, whole files read and written, a folder removed, the golden
 * files, the small sweep and temporary sweeps' files, the JSON reader on a string, the SVG
 * checks (report_util.c). */
#ifndef DSE_TESTS_REPORT_UTIL_H
#define DSE_TESTS_REPORT_UTIL_H

#include "sweep/lease.h"
#include "dse/report.h"
#include "sweep/sweep.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "base/fs.h"
#include "sweep/json_read.h"
#include "sweep/sweep_impl.h"
#include "sweep/sweep_read.h"
#define CHECK_SHARED_COUNTS /* one set of counts for all of test_report's files: report_util.c */
#include "tests/check.h"

#define SMALL "tests/sweeps/small"

/* dse_report_sweep of dir in fmt (plot: the SVG's path or NULL) into a string the caller
 * frees; its status in *st. NULL without memory. */
#define REPLICATES "tests/sweeps/replicates" /* a finished sweep of 4 architectures x 3 replicates */
char *run_report(const char *dir, enum dse_format fmt, const char *plot, enum dse_status *st, struct dse_err *err);
char *slurp(const char *path); /* the whole file, or NULL; the caller frees it */
void  write_file(const char *dir, const char *rel, const char *text);
void  rm_tree(const char *path);
int   starts_with(const char *s, const char *prefix);
int   count_of(const char *s, const char *needle);
/* Compares text with tests/sweeps/golden/<name>, or rewrites it with DSE_UPDATE_GOLDEN=1. */
void  check_golden(const char *name, const char *text);
struct dse_json_doc *parse(const char *text, struct dse_err *err);

/* A candidate file for the temporary sweeps. top1 < 0: null. */
void put_candidate(const char *dir, const char *id, int index, double sr, long params, long flops,
                   const char *status, double top1);
/* A temporary sweep's sweep.json (n candidates, the varied keys) and its candidates/ folder. */
void put_sweep(const char *dir, const char *space, int n, const char *varied);

int  well_formed_xml(const char *s);
/* The plot at path: an SVG, well formed, n_cand points, one frontier line, the space named,
 * no nan or inf. */
void check_svg(const char *path, int n_cand, const char *space);

#endif
