/* test_report.c: `dse report` and what it stands on: the Pareto frontier
 * (analysis/pareto.c), the strict JSON reader (dse/json_read.c) and the sweep report in
 * every format plus the SVG plot (dse/report_sweep.c). Fixtures: tests/sweeps/ (see its
 * README) and small sweep directories written under a mkdtemp directory. Runs from the
 * repository root. DSE_UPDATE_GOLDEN=1 rewrites tests/sweeps/golden/.
 *
 * The cases live in files by subject, all of them one program with this one table:
 * test_report_pareto.c, test_report_json.c (the JSON reader), test_report_tables.c (the
 * report's text, its refusals, replicates), test_report_plot.c (the SVG plots); what they
 * share is in report_util.c. */
#include "tests/report_util.h"

/* Every case once, in the order a run takes them: its id and its function. */
#define REPORT_CASES(X) \
    X("pareto-basic",             test_pareto_basic) \
    X("pareto-ties",              test_pareto_ties) \
    X("pareto-nan",               test_pareto_nan) \
    X("pareto-brute",             test_pareto_brute) \
    X("json-read",                test_json_read) \
    X("json-write",               test_json_write) \
    X("json-errors",              test_json_errors) \
    X("json-hostile",             test_json_hostile) \
    X("report-md",                test_report_md) \
    X("report-replicates-stats",  test_replicates_stats) \
    X("report-replicates",        test_report_replicates) \
    X("report-replicates-export", test_report_replicates_export) \
    X("report-csv",               test_report_csv) \
    X("report-tex",               test_report_tex) \
    X("report-json",              test_report_json) \
    X("report-plot",              test_report_plot) \
    X("report-plot-killed",       test_report_plot_killed) \
    X("report-plot-flops",        test_report_plot_flops) \
    X("report-curves",            test_report_curves) \
    X("report-layout",            test_report_layout) \
    X("report-running",           test_report_running) \
    X("report-next",              test_report_next) \
    X("status-strict",            test_status_strict) \
    X("report-overlay",           test_report_overlay) \
    X("epoch-record",             test_epoch_record) \
    X("report-record-keys",       test_report_record_keys) \
    X("report-errors",            test_report_errors)

#define REPORT_CASE_DECLARE(i, f) void f(void);
REPORT_CASES(REPORT_CASE_DECLARE)

static const struct check_case cases[] = {
#define REPORT_CASE_ROW(i, f) { .id = i, .fn = f },
    REPORT_CASES(REPORT_CASE_ROW)
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
