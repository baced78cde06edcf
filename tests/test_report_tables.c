/* test_report_tables.c: test_report's cases on the report's text: the sweep report in every
 * format (md, csv, tex, json) against golden files, the next step and the best candidate,
 * the strict reading of candidate files, the report's refusals, and sweeps with replicates. */
#include "tests/report_util.h"

/* ---- report ------------------------------------------------------------------------- */

void test_report_md(void) {
    enum dse_status st;
    struct dse_err  err = { 0 };
    char           *s = run_report(SMALL, DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(starts_with(s, "# Sweep small_grid: 6 candidates (2 pruned, 1 pending, 3 done)\n"));
    /* rows by model size; the frontier marked; pruned_by in the status cell */
    CHECK(strstr(s, "| c75cea6b631602 |     0 | 0.25 |   0.25 | 1,000,000 |     4.00 |      3.81 |  1.00 | 0.500 |"
                    "        1874.9 | done ") != NULL); /* GMAC = GFLOP / 2 */
    CHECK(strstr(s, "| id             | index |   sr |") != NULL); /* the grid index beside the id */
    CHECK(!strstr(s, "## Next")); /* one candidate still pending: no best yet */
    CHECK(strstr(s, "|    50.0 |    75.0 | ★        |\n") != NULL);
    CHECK(strstr(s, "| pruned: max_params = 2000000 (params 2500000) ") != NULL);
    const char *a = strstr(s, "c75cea6b631602"), *b = strstr(s, "c3297165fb8c76"),
               *c = strstr(s, "c2ad1722a1be4b");
    CHECK(a && b && c && a < b && b < c);
    const char *fr = strstr(s, "## Frontier (max top1, min model size): 2 of 6 candidates\n");
    CHECK(fr != NULL);
    if (fr) {
        CHECK_INT_EQ(count_of(fr, "\n| c"), 2);
        CHECK(strstr(fr, "c75cea6b631602") && strstr(fr, "c3297165fb8c76"));
        CHECK(!strstr(fr, "c26daa3fadf099")); /* same top1 as c3297..., but larger */
    }
    CHECK_INT_EQ(count_of(s, "★"), 2);
    check_golden("small.md", s);
    /* TABLE reads as MD */
    char *t = run_report(SMALL, DSE_FORMAT_TABLE, NULL, &st, &err);
    CHECK_STR_EQ(t, s);
    free(t);
    free(s);
    /* analytic mode: no accuracy anywhere, so FLOPs; nothing varied */
    s = run_report("tests/sweeps/squeeze_ratio", DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(starts_with(s, "# Sweep squeeze_ratio: 8 candidates (0 pruned, 8 pending, 0 done)\n"));
    CHECK(strstr(s, "## Frontier (min model size, min FLOPs): 1 of 8 candidates\n") != NULL);
    CHECK(strstr(s, "| c72d889b4c1512 |     0 | 0.125 | 1,247,805 |     4.99 |      4.76 |  1.72 |") != NULL);
    CHECK(!strstr(s, "## Next")); /* nothing trained */
    CHECK(!strstr(s, "top-1"));
    free(s);

    /* numbers as a %.17g writer leaves them: shown shortest, and a REAL metaparameter
     * (mp.def) as a real, 1.0 for both 1.0 and 1, in tables and JSON alike */
    char tmpl[] = "/tmp/dse_test_report.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    put_sweep(dir, "digits", 2, "\"pct3x3\", \"sr\"");
    write_file(dir, "candidates/c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": "
               "{\"pct3x3\": 0.10000000000000001, \"sr\": 1.0}, \"params\": 1, \"model_bytes\": 4, "
               "\"flops\": 1, \"status\": \"pending\"}");
    write_file(dir, "candidates/c2.json", "{\"id\": \"c2\", \"index\": 1, \"metaparams\": "
               "{\"pct3x3\": 1e-1, \"sr\": 1}, \"params\": 2, \"model_bytes\": 8, "
               "\"flops\": 2, \"status\": \"pending\"}");
    s = run_report(dir, DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(strstr(s, "| c1  |     0 |    0.1 | 1.0 |      1 |") != NULL);
    CHECK(strstr(s, "| c2  |     1 |    0.1 | 1.0 |      2 |") != NULL);
    free(s);
    s = run_report(dir, DSE_FORMAT_JSON, NULL, &st, &err);
    CHECK_INT_EQ(count_of(s, "\"metaparams\": {\"pct3x3\": 0.1, \"sr\": 1.0}"), 2);
    free(s);
    rm_tree(dir);
}

void test_report_csv(void) {
    enum dse_status st;
    struct dse_err  err = { 0 };
    char           *s = run_report(SMALL, DSE_FORMAT_CSV, NULL, &st, &err);
    CHECK_OK(st);
    /* every metaparameter, the fixed ones too (so sweeps' CSVs stack), in the records' order */
    CHECK(starts_with(s, "id,index,base_e,incr_e,freq,pct3x3,sr,bypass,input_c,input_h,input_w,classes,"
                         "conv1_filters,conv1_kernel,conv1_stride,conv1_pad,fires,pools,dropout,fire_dropout,params,"
                         "model_bytes,model_mb,model_mib,flops,macs,train_mem_bytes,status,pruned_by,top1,top5,"
                         "frontier\n"));
    CHECK(strstr(s, "\nc75cea6b631602,0,128,128,2,0.25,0.25,none,3,227,227,1000,96,7,2,0,8,\"conv1,fire4,fire8\","
                    "0.5,0.0,1000000,4000000,4,3.814697265625,1000000000,500000000,1966000000,done,,0.5,0.75,yes\n") != NULL);
    CHECK(strstr(s, "\nc26daa3fadf099,2,128,128,2,0.25,0.5,none,3,227,227,1000,96,7,2,0,8,\"conv1,fire4,fire8\","
                    "0.5,0.0,1500000,6000000,6,5.7220458984375,1500000000,750000000,2149000000,done,,0.55,0.78,\n") != NULL);
    CHECK(strstr(s, "\nc9dce5a1ddf29e,3,128,128,2,0.75,0.5,none,3,227,227,1000,96,7,2,0,8,\"conv1,fire4,fire8\","
                    "0.5,0.0,1800000,7200000,7.2,6.866455078125,1900000000,950000000,2293800000,pending,,,,\n") != NULL);
    /* RFC 4180: a field with a comma or quote is quoted, quotes doubled */
    CHECK(strstr(s, ",pruned,\"max_params = 2000000 (params 3000000, \"\"hard\"\" limit)\",,,\n")
          != NULL);
    CHECK_INT_EQ(count_of(s, "\n"), 7);
    CHECK_INT_EQ(count_of(s, ",yes\n"), 2);
    check_golden("small.csv", s);
    free(s);
}

void test_report_tex(void) {
    enum dse_status st;
    struct dse_err  err = { 0 };
    char           *s = run_report(SMALL, DSE_FORMAT_TEX, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(strstr(s, "\\begin{tabular}{lrrrrrrrrrlrrl}\n\\toprule\n") != NULL);
    CHECK(strstr(s, "id & index & sr & pct3x3 & params & model MB & model MiB & GFLOP & GMAC & train mem MiB & "
                    "status & top-1 \\% & top-5 \\% & frontier \\\\\n\\midrule\n") != NULL);
    CHECK(strstr(s, "c75cea6b631602 & 0 & 0.25 & 0.25 & 1,000,000 & 4.00 & 3.81 & 1.00 & 0.500 & 1874.9 & "
                    "done & 50.0 & 75.0 & \\checkmark \\\\\n") != NULL);
    CHECK(strstr(s, "pruned: max\\_params = 2000000") != NULL);
    CHECK(strstr(s, "% dse report: Sweep small\\_grid:") != NULL);
    CHECK(strstr(s, "\\bottomrule\n\\end{tabular}\n") != NULL);
    CHECK_INT_EQ(count_of(s, "\\checkmark \\\\"), 2);
    CHECK(!strstr(s, "max_params")); /* every _ escaped */
    check_golden("small.tex", s);
    free(s);
}

void test_report_json(void) {
    enum dse_status st;
    struct dse_err  err = { 0 };
    char           *s = run_report(SMALL, DSE_FORMAT_JSON, NULL, &st, &err);
    CHECK_OK(st);
    struct dse_json_doc *d = parse(s, &err);
    CHECK(d != NULL);
    if (!d) {
        fprintf(stderr, "  %s\n", err.msg);
        free(s);
        return;
    }
    /* the stable keys of docs/report.md */
    const struct dse_json *r = dse_json_root(d);
    const struct dse_json *v = dse_json_get(r, "sweep");
    CHECK(v && !strcmp(v->str, "small_grid"));
    v = dse_json_get(r, "frontier_objective");
    CHECK(v && !strcmp(v->str, "max top1, min model size"));
    const struct dse_json *cs = dse_json_get(r, "candidates");
    CHECK(cs && cs->type == DSE_JSON_ARRAY && cs->n == 6);
    if (cs && cs->n == 6) {
        const struct dse_json *c = &cs->items[1];
        CHECK_STR_EQ(dse_json_get(c, "id")->str, "c3297165fb8c76");
        CHECK_INT_EQ(dse_json_get(c, "index")->integer, 1);
        const struct dse_json *mp = dse_json_get(c, "metaparams");
        CHECK(mp && mp->n == 17);
        CHECK_STR_EQ(dse_json_get(mp, "sr")->str, "0.25");
        CHECK_STR_EQ(dse_json_get(mp, "pct3x3")->str, "0.75");
        CHECK_STR_EQ(dse_json_get(mp, "bypass")->str, "none");
        CHECK_INT_EQ(dse_json_get(mp, "base_e")->integer, 128);
        CHECK_STR_EQ(dse_json_get(mp, "pools")->str, "conv1,fire4,fire8");
        CHECK_INT_EQ(dse_json_get(c, "params")->integer, 1200000);
        CHECK_INT_EQ(dse_json_get(c, "flops")->integer, 1300000000);
        CHECK_INT_EQ(dse_json_get(c, "macs")->integer, 650000000); /* FLOPs / 2 */
        CHECK_NEAR(dse_json_get(c, "model_mb")->number, 4.8, 1e-12);
        CHECK_STR_EQ(dse_json_get(c, "status")->str, "done");
        CHECK_NEAR(dse_json_get(c, "top1")->number, 0.55, 1e-12);
        CHECK_INT_EQ(dse_json_get(&cs->items[4], "top1")->type, DSE_JSON_NULL);
        CHECK_STR_EQ(dse_json_get(&cs->items[4], "pruned_by")->str,
                     "max_params = 2000000 (params 2500000)");
        for (int i = 0; i < 6; i++) CHECK_INT_EQ(dse_json_get(&cs->items[i], "index")->integer, i);
    }
    const struct dse_json *fr = dse_json_get(r, "frontier");
    CHECK(fr && fr->n == 2);
    if (fr && fr->n == 2) {
        CHECK_STR_EQ(fr->items[0].str, "c75cea6b631602");
        CHECK_STR_EQ(fr->items[1].str, "c3297165fb8c76");
    }
    dse_json_free(d);
    check_golden("small.json", s);
    free(s);
}

/* A finished trained sweep names its best candidate (highest top-1, ties to the smaller
 * model, then the smaller id) and the command that exports it; dse_report_best is the
 * rule dse export --best uses, with a size limit. */
void test_report_next(void) {
    char tmpl[] = "/tmp/dse test report.XXXXXX"; /* a space: the commands quote the directory */
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    enum dse_status st;
    struct dse_err  err = { 0 };
    struct dse_report_best best;
    put_sweep(dir, "next", 6, "\"sr\"");
    put_candidate(dir, "c01", 0, 0.125, 1000, 10, "done", 0.5);
    put_candidate(dir, "c02", 1, 0.25, 3000, 30, "done", 0.75);
    put_candidate(dir, "c03", 2, 0.5, 2000, 20, "done", 0.75); /* ties c02, smaller: the best */
    put_candidate(dir, "c04", 3, 0.75, 500, 5, "stopped", 0.9); /* stopped at a rung: not a final result */
    put_candidate(dir, "c05", 4, 1.0, 99999, 5, "pruned", -1);
    put_candidate(dir, "c06", 5, 0.0625, 2000, 20, "pending", -1);
    /* unfinished: no Next section, no best from the report; dse_report_best still picks */
    char *s = run_report(dir, DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(s && !strstr(s, "## Next"));
    free(s);
    CHECK_OK(dse_report_best(dir, 0, &best, &err));
    CHECK_STR_EQ(best.id, "c03");
    CHECK_INT_EQ(best.index, 2);
    CHECK_NEAR(best.top1, 0.75, 0);
    CHECK_INT_EQ(best.model_bytes, 8000);
    CHECK_OK(dse_report_best(dir, 0.006, &best, &err)); /* 6,000 bytes: c03 is 8,000 */
    CHECK_STR_EQ(best.id, "c01");
    CHECK_INT_EQ(dse_report_best(dir, 0.001, &best, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(best.id, "");
    CHECK(strstr(err.msg, "none of the 3 trained candidates is within --max-mb 0.001") != NULL);
    /* finished: the Next section and the JSON "best" */
    put_candidate(dir, "c06", 5, 0.0625, 2000, 20, "failed", -1);
    s = run_report(dir, DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    char want[1200];
    snprintf(want, sizeof want, "\n## Next\n\nBest trained candidate: c03 (index 2, top-1 75.00%%, 0.01 MB). "
             "Export it to ONNX:\n\n    dse export '%s' --id c03 --out c03.onnx\n\nWith --format caffe (and --out "
             "c03) it writes Caffe's c03.prototxt and c03.caffemodel instead; dse export '%s' --best --max-mb M takes "
             "the most accurate candidate within M MB.\n", dir, dir);
    CHECK(s && strstr(s, want) != NULL);
    free(s);
    s = run_report(dir, DSE_FORMAT_JSON, NULL, &st, &err);
    CHECK_OK(st);
    struct dse_json_doc *d = s ? parse(s, &err) : NULL;
    CHECK(d != NULL);
    if (d) {
        const struct dse_json *b = dse_json_get(dse_json_root(d), "best");
        CHECK(b && b->type == DSE_JSON_OBJECT);
        if (b && b->type == DSE_JSON_OBJECT) {
            CHECK_STR_EQ(dse_json_get(b, "id")->str, "c03");
            CHECK_INT_EQ(dse_json_get(b, "index")->integer, 2);
            snprintf(want, sizeof want, "dse export '%s' --id c03 --out c03.onnx", dir); /* quoted: a space */
            CHECK_STR_EQ(dse_json_get(b, "export")->str, want);
        }
        dse_json_free(d);
    }
    free(s);
    FILE *f = fopen("/dev/null", "w");
    CHECK_OK(dse_report_sweep(f, dir, DSE_FORMAT_CSV, NULL, &best, &err));
    CHECK_STR_EQ(best.id, "c03");
    if (f) fclose(f);
    char cmd[200];
    dse_report_export_cmd(cmd, sizeof cmd, "it's here", "c1");
    CHECK_STR_EQ(cmd, "dse export 'it'\\''s here' --id c1 --out c1.onnx");
    dse_report_export_cmd(cmd, sizeof cmd, "sweeps/sr_1", "c1");
    CHECK_STR_EQ(cmd, "dse export sweeps/sr_1 --id c1 --out c1.onnx");
    /* nothing trained at all */
    put_candidate(dir, "c01", 0, 0.125, 1000, 10, "failed", -1);
    put_candidate(dir, "c02", 1, 0.25, 3000, 30, "failed", -1);
    put_candidate(dir, "c03", 2, 0.5, 2000, 20, "diverged", -1);
    CHECK_INT_EQ(dse_report_best(dir, 0, &best, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "no candidate of this sweep has finished training") != NULL);
    rm_tree(dir);
}

/* dse status and dse report accept the same candidate files: the hostile ones a
 * lenient reader once let through (a file copied under another name, top-1 1e308,
 * negative params, an epoch count past int) get the same path:line message from both. */
void test_status_strict(void) {
    static const struct { const char *file, *text, *msg; } bad_files[] = {
        { "c2.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\"}", "\"id\" = \"c1\" does not match the file name" },
        { "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\", \"top1\": 1e308}", "\"top1\" = 1e308 is out of range" },
        { "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": -5, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\"}", "\"params\" = -5" },
        { "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\", \"epochs_done\": 999999999999}",
          "\"epochs_done\" = 999999999999 is out of range; expected 0 to 2147483647 or null" },
        { "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\", \"per_epoch\": [{\"epoch\": 1, \"top1\": 0.5, "
                     "\"unpredicted\": -3}]}",
          "\"per_epoch\"[0].\"unpredicted\" is not a whole number >= 0; expected an integer >= 0 or null" },
        { "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\", \"per_epoch\": [{\"epoch\": 1, \"loss\": \"low\"}]}",
          "\"per_epoch\"[0].\"loss\" is a string; expected a number or null" },
        { "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\", \"lease_gen\": -1}", /* a key of sweep/record.def */
          "\"lease_gen\" = -1 is out of range; expected 0 to 9223372036854775807 or null" },
        /* every training key of sweep/record.def is checked by its kind, also those only workers read */
#define HEAD "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, \"flops\": 1, "
#define X20 "xxxxxxxxxxxxxxxxxxxx"
        { "c1.json", HEAD "\"status\": \"done\", \"loss\": \"low\"}", "\"loss\" is a string; expected a number or null" },
        { "c1.json", HEAD "\"status\": \"done\", \"seed\": -1}",
          "\"seed\" = -1 is out of range; expected 0 to 9223372036854775807 or null" },
        { "c1.json", HEAD "\"status\": \"done\", \"img_per_s\": -5}",
          "\"img_per_s\" = -5 is out of range; expected a number in [0, 1.79769e+308] or null" },
        { "c1.json", HEAD "\"status\": \"done\", \"attempts_total\": 1.5}",
          "\"attempts_total\" = 1.5 is not an integer; expected an integer or null" },
        { "c1.json", HEAD "\"status\": \"failed\", \"failed_why\": 3}",
          "\"failed_why\" is a number; expected a string or null" },
        { "c1.json", HEAD "\"status\": \"pruned\", \"pruned_by\": \"" X20 X20 X20 X20 X20 X20 X20 X20 X20 X20 "\"}",
          "\"pruned_by\" is 200 bytes long; expected 0 to 199" },
        { "c1.json", HEAD "\"status\": \"done\", \"per_epoch\": [{\"epoch\": 2, \"top1\": 0.5}]}",
          "\"per_epoch\"[0] is epoch 2; expected epoch 1 (one entry per epoch, in order)" },
        { "c1.json", HEAD "\"per_epoch\": []}", "missing key \"status\"; expected a string" },
        { "c1.json", "{\"id\": \"c1\", \"index\": -1, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\"}", "\"index\" = -1 is negative; expected an integer >= 0" },
#undef HEAD
#undef X20
    };
    for (int i = 0; i < DSE_ARRAY_LEN(bad_files); i++) {
        char tmpl[] = "/tmp/dse_test_status.XXXXXX";
        char *dir = mkdtemp(tmpl);
        CHECK(dir != NULL);
        if (!dir) return;
        put_sweep(dir, "strict", 1, "");
        write_file(dir, "candidates/x", ""); /* not a .json: skipped by both */
        char rel[64];
        snprintf(rel, sizeof rel, "candidates/%s", bad_files[i].file);
        write_file(dir, rel, bad_files[i].text);
        struct dse_err e1 = { 0 }, e2 = { 0 };
        FILE *f = fopen("/dev/null", "w");
        CHECK_INT_EQ(dse_report_sweep(f, dir, DSE_FORMAT_CSV, NULL, NULL, &e1), DSE_ERR_CONFIG);
        CHECK_INT_EQ(dse_sweep_status(f, dir, 0, NULL, &e2), DSE_ERR_CONFIG);
        if (f) fclose(f);
        char b1[600], b2[600];
        dse_err_format(&e1, b1, sizeof b1);
        dse_err_format(&e2, b2, sizeof b2);
        CHECK_STR_EQ(b2, b1);
        CHECK(strstr(b1, bad_files[i].msg) != NULL);
        if (!strstr(b1, bad_files[i].msg)) fprintf(stderr, "  %s\n", b1);
        rm_tree(dir);
    }
}

void test_report_errors(void) {
    char tmpl[] = "/tmp/dse_test_report.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    static const char good_sweep[] =
        "{\"format\": \"dse-sweep-1\", \"space\": \"t\",\n\"candidates\": 1, \"varied\": []}\n";
    static const char good_cand[] =
        "{\"id\": \"c1\", \"index\": 0,\n \"metaparams\": {\"sr\": 0.5},\n"
        " \"params\": 10, \"model_bytes\": 40, \"flops\": 100,\n"
        " \"status\": \"done\", \"top1\": 0.5}\n";
    /* sweep.json text (NULL: none), candidate file name (NULL: no candidates/ directory),
     * its text, and the message, where %s is the temporary sweep directory */
    static const struct {
        const char *sweep, *name, *cand, *want;
    } cases[] = {
        { NULL, "c1.json", good_cand, "%s/sweep.json: cannot open: No such file or directory; "
          "expected the manifest of a sweep directory (docs/sweep-dir.md)" },
        { "{\"format\": \"dse-sweep-1\",\n \"space\": \"x\",\n}", "c1.json", good_cand,
          "%s/sweep.json:3: unexpected '}' in an object; expected a key in double quotes" },
        { "{\"format\": \"dse-sweep-2\"}", "c1.json", good_cand,
          "%s/sweep.json:1: \"format\" = \"dse-sweep-2\" is not supported; expected "
          "\"dse-sweep-1\"" },
        { "{\"space\": \"x\"}", "c1.json", good_cand,
          "%s/sweep.json:1: missing key \"format\"; expected \"dse-sweep-1\"" },
        { "{\"format\": \"dse-sweep-1\", \"space\": \"x\", \"candidates\": 1}", "c1.json", good_cand,
          "%s/sweep.json:1: missing key \"varied\"; expected an array" },
        { "{\"format\": \"dse-sweep-1\", \"space\": \"x\", \"candidates\": 1,\n \"varied\": [1]}",
          "c1.json", good_cand, "%s/sweep.json:2: \"varied\" holds a number; expected "
          "metaparameter names as strings" },
        { "[]", "c1.json", good_cand,
          "%s/sweep.json:1: the file holds an array; expected an object (docs/sweep-dir.md)" },
        { good_sweep, NULL, NULL, "%s/candidates: cannot open: No such file or directory; "
          "expected the candidates/ directory of a sweep (docs/sweep-dir.md)" },
        { good_sweep, "c1.json", "", "%s/candidates/c1.json:1: unexpected end of file; expected "
          "a value (object, array, string, number, true, false or null)" },
        { good_sweep, "c1.json", "{\"id\": \"c1\",\n \"index\": 0,\n}",
          "%s/candidates/c1.json:3: unexpected '}' in an object; expected a key in double quotes" },
        { good_sweep, "c1.json", "[1]",
          "%s/candidates/c1.json:1: the file holds an array; expected an object (docs/sweep-dir.md)" },
        { good_sweep, "c2.json", good_cand,
          "%s/candidates/c2.json:1: \"id\" = \"c1\" does not match the file name; expected \"c2\"" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {},\n"
          "\"params\": \"10\"}", "%s/candidates/c1.json:2: \"params\" is a string; expected an integer" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {},\n"
          "\"params\": 1.5}", "%s/candidates/c1.json:2: \"params\" = 1.5 is not an integer; "
          "expected an integer" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {},\n"
          "\"params\": -1}", "%s/candidates/c1.json:2: \"params\" = -1 is negative; expected an "
          "integer >= 0" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {},\n"
          "\"params\": 10, \"model_bytes\": 40}",
          "%s/candidates/c1.json:1: missing key \"flops\"; expected an integer" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": [],\n"
          "\"params\": 10}", "%s/candidates/c1.json:1: \"metaparams\" is an array; expected an object" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1,\n"
          "\"model_bytes\": 4, \"flops\": 1, \"status\": \"finished\"}",
          "%s/candidates/c1.json:2: \"status\" = \"finished\" is not a known status; expected "
          "pending, pruned, running, done, diverged, failed or stopped" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1,\n"
          "\"model_bytes\": 4, \"flops\": 1, \"status\": \"done\",\n\"top1\": 57.5}",
          "%s/candidates/c1.json:3: \"top1\" = 57.5 is out of range; expected a number in [0, 1] "
          "or null" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1,\n"
          "\"model_bytes\": 4, \"flops\": 1, \"status\": \"done\",\n\"top5\": \"0.8\"}",
          "%s/candidates/c1.json:3: \"top5\" is a string; expected a number or null" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1,\n"
          "\"model_bytes\": 4, \"flops\": 1, \"status\": \"pruned\", \"pruned_by\": 5}",
          "%s/candidates/c1.json:2: \"pruned_by\" is a number; expected a string or null" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"id\": \"c1\"}",
          "%s/candidates/c1.json:1: duplicate key \"id\"; expected each key once in an object" },
    };
    char sw[256], want[700], got[700], sub[300];
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        snprintf(sw, sizeof sw, "%s/s%d", dir, i);
        mkdir(sw, 0777);
        if (cases[i].sweep) write_file(sw, "sweep.json", cases[i].sweep);
        if (cases[i].name) {
            snprintf(sub, sizeof sub, "%s/candidates", sw);
            mkdir(sub, 0777);
            snprintf(sub, sizeof sub, "candidates/%s", cases[i].name);
            write_file(sw, sub, cases[i].cand);
        }
        enum dse_status st;
        struct dse_err  err = { 0 };
        free(run_report(sw, DSE_FORMAT_MD, NULL, &st, &err));
        CHECK(st != DSE_OK);
        snprintf(want, sizeof want, cases[i].want, sw);
        CHECK_STR_EQ(dse_err_format(&err, got, sizeof got), want);
    }

    /* two files with one index: the later file (by name) is at fault */
    snprintf(sw, sizeof sw, "%s/dup", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "dup", 2, "");
    put_candidate(sw, "ca", 3, 0.5, 10, 10, "pending", -1);
    put_candidate(sw, "cb", 3, 0.5, 20, 10, "pending", -1);
    enum dse_status st;
    struct dse_err  err = { 0 };
    free(run_report(sw, DSE_FORMAT_CSV, NULL, &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_CONFIG);
    snprintf(want, sizeof want, "%s/candidates/cb.json:1: \"index\" = 3 is also the index of "
             "%s/candidates/ca.json; expected each index once (each replicate of it once)", sw, sw);
    CHECK_STR_EQ(dse_err_format(&err, got, sizeof got), want);

    /* a directory named like a candidate is read, and fails, never skipped */
    snprintf(sw, sizeof sw, "%s/isdir", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "isdir", 1, "");
    snprintf(sub, sizeof sub, "%s/candidates/cx.json", sw);
    mkdir(sub, 0777);
    free(run_report(sw, DSE_FORMAT_CSV, NULL, &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_IO);
    snprintf(want, sizeof want, "%s/candidates/cx.json: cannot read: Is a directory", sw);
    CHECK_STR_EQ(dse_err_format(&err, got, sizeof got), want);

    /* the directory itself */
    free(run_report("tests/sweeps/no_such_dir", DSE_FORMAT_MD, NULL, &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_IO);
    CHECK_STR_EQ(dse_err_format(&err, got, sizeof got),
                 "tests/sweeps/no_such_dir: cannot open the sweep directory: No such file or "
                 "directory; expected a directory made by dse sweep (docs/sweep-dir.md)");

    /* stray files are skipped: dot files (a writer's .tmp) and names not ending in .json */
    snprintf(sw, sizeof sw, "%s/stray", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "stray", 1, "");
    put_candidate(sw, "c1", 0, 0.5, 10, 10, "pending", -1);
    write_file(sw, "candidates/.c2.json.host.1.tmp", "{torn");
    write_file(sw, "candidates/.c3.json", "{torn");
    write_file(sw, "candidates/notes.txt", "{torn");
    write_file(sw, "candidates/c4.json.bak", "{torn");
    char *s = run_report(sw, DSE_FORMAT_CSV, NULL, &st, &err);
    CHECK_OK(st);
    CHECK_INT_EQ(count_of(s, "\n"), 2);
    free(s);
    rm_tree(dir);
}

/* ---- replicates (the sweep REPLICATES, tests/report_util.h) ----------------------------- */

/* The statistics of a sweep with replicates (sweep_read.c), on numbers worked by hand. */
void test_replicates_stats(void) {
    double mean, sd;
    int    n;
    const double a[] = { 0.60, 0.62, 0.64 };        /* mean 0.62; deviations -0.02, 0, 0.02: std sqrt(8e-4 / 2) = 0.02 */
    dse_sweep_mean_std(a, 3, &n, &mean, &sd);
    CHECK_INT_EQ(n, 3);
    CHECK_NEAR(mean, 0.62, 1e-12);
    CHECK_NEAR(sd, 0.02, 1e-9);
    const double b[] = { 0.80, NAN, 0.50, 0.53 };   /* NaN skipped: mean 0.61, std sqrt(0.0546 / 2) = 0.165227 */
    dse_sweep_mean_std(b, 4, &n, &mean, &sd);
    CHECK_INT_EQ(n, 3);
    CHECK_NEAR(mean, 0.61, 1e-12);
    CHECK_NEAR(sd, 0.16522711641858, 1e-9);
    const double c[] = { NAN, 0.7 };                /* one value: no spread */
    dse_sweep_mean_std(c, 2, &n, &mean, &sd);
    CHECK(n == 1 && mean == 0.7 && isnan(sd));
    dse_sweep_mean_std(c, 1, &n, &mean, &sd);       /* none */
    CHECK(n == 0 && isnan(mean) && isnan(sd));
    /* the group's record: running wins over pending and done; the mean over done replicates only */
    struct dse_rec r[3];
    for (int i = 0; i < 3; i++) dse_rec_init(&r[i]);
    r[0].status = DSE_REC_DONE, r[0].top1 = 0.5, r[0].top5 = 0.9;
    r[1].status = DSE_REC_DIVERGED, r[1].top1 = 0.1;  /* not done: left out */
    r[2].status = DSE_REC_DONE, r[2].top1 = 0.7, r[2].top5 = 0.8;
    const struct dse_rec *reps[3] = { &r[0], &r[1], &r[2] };
    struct dse_rec g = dse_sweep_group_rec(reps, 3, &n, &sd);
    CHECK_INT_EQ(g.status, DSE_REC_DONE);
    CHECK_INT_EQ(n, 2);
    CHECK_NEAR(g.top1, 0.6, 1e-12);
    CHECK_NEAR(g.top5, 0.85, 1e-12);
    CHECK_NEAR(sd, 0.14142135623731, 1e-9);
    r[1].status = DSE_REC_PENDING;
    CHECK_INT_EQ(dse_sweep_group_rec(reps, 3, &n, &sd).status, DSE_REC_PENDING);
    r[2].status = DSE_REC_RUNNING;
    CHECK_INT_EQ(dse_sweep_group_rec(reps, 3, &n, &sd).status, DSE_REC_RUNNING);
    /* within noise: the means differ by less than the larger std */
    struct dse_cand x = { .reps = &x, .top1_std = 0.04 }, y = { .reps = &y, .top1_std = 0.01 };
    x.rec.top1 = 0.70, y.rec.top1 = 0.72;
    CHECK(dse_sweep_within_noise(&x, &y) && dse_sweep_within_noise(&y, &x));
    y.rec.top1 = 0.75;
    CHECK(!dse_sweep_within_noise(&x, &y));
    y.rec.top1 = 0.72, x.reps = NULL;                /* no replicates: never */
    CHECK(!dse_sweep_within_noise(&x, &y));
}

/* tests/sweeps/replicates: 4 architectures x 3 replicates (README): one row each, mean ±
 * std worked by hand, the frontier and the best on the mean, error bars in the plot. */
/* The best architecture's replicate 0 diverged while replicate 1 finished: --best and the
 * report's export command name replicate 1, whose weights exist (an architecture is done
 * when any replicate is). A copy of REPLICATES with c2's replicates 0 and 2 swapped. */
void test_report_replicates_export(void) {
    char tmpl[] = "/tmp/dse_test_report_rep.XXXXXX", cmd[300], path[300];
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(cmd, sizeof cmd, "cp -r " REPLICATES "/. %s/", dir);
    CHECK_INT_EQ(system(cmd), 0);
    static const char *const swap[][3] = { /* file, from, to */
        { "c2ccccccccccccccc.json", "\"status\": \"done\"", "\"status\": \"diverged\"" },
        { "c2ccccccccccccccc.json", "\"top1\": 0.71,", "\"top1\": null," },
        { "c2cccccccccccccccr2.json", "\"status\": \"diverged\"", "\"status\": \"done\"" },
        { "c2cccccccccccccccr2.json", "\"top1\": null,", "\"top1\": 0.71," },
    };
    for (size_t i = 0; i < DSE_ARRAY_LEN(swap); i++) {
        char *text = NULL, *at;
        snprintf(path, sizeof path, "%s/candidates/%s", dir, swap[i][0]);
        CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
        CHECK(text && (at = strstr(text, swap[i][1])));
        if (!text || !(at = strstr(text, swap[i][1]))) { free(text); continue; }
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (f) fprintf(f, "%.*s%s%s", (int)(at - text), text, swap[i][2], at + strlen(swap[i][1])), fclose(f);
        free(text);
    }
    struct dse_report_best best;
    struct dse_err err = { 0 };
    CHECK_OK(dse_report_best(dir, 0, &best, &err));
    CHECK_STR_EQ(best.id, "c2cccccccccccccccr1");
    CHECK_NEAR(best.top1, 0.72, 1e-12); /* the mean of 0.73 and 0.71 */
    enum dse_status st;
    char *s = run_report(dir, DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(s && strstr(s, "--id c2cccccccccccccccr1 --out c2cccccccccccccccr1.onnx"));
    free(s);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_INT_EQ(system(cmd), 0);
}

void test_report_replicates(void) {
    enum dse_status st;
    struct dse_err  err = { 0 };
    char           *s = run_report(REPLICATES, DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(starts_with(s, "# Sweep replicates_grid: 12 candidates (4 architectures x 3 replicates); by architecture: "
                         "0 pruned, 0 pending, 4 done\n")); /* counted as dse status counts them */
    CHECK_INT_EQ(count_of(s, "\n| c0aaaaaaaaaaaaaaa "), 2);          /* one row per architecture (table, frontier) */
    CHECK(s && !strstr(s, "c0aaaaaaaaaaaaaaar1"));
    CHECK(strstr(s, "| 3/3 |         62.00 ± 2.00 |") != NULL);  /* 0.60 0.62 0.64 */
    CHECK(strstr(s, "| 3/3 |         70.00 ± 4.00 |") != NULL);  /* 0.70 0.74 0.66 */
    CHECK(strstr(s, "| 2/3 |         72.00 ± 1.41 |") != NULL);  /* 0.71 0.73, the third diverged */
    CHECK(strstr(s, "| 3/3 |        61.00 ± 16.52 |    89.3 |          |") != NULL); /* 0.80 0.50 0.53: off the frontier */
    /* the frontier on the mean: c3's replicate 0 (80%) is the best single run, its mean is not */
    CHECK(strstr(s, "## Frontier (max top1, min model size): 3 of 4 architectures") != NULL);
    CHECK(strstr(s, "- Within noise: c1bbbbbbbbbbbbbbb (70.00) and c2ccccccccccccccc (72.00) differ by 2.00 points, "
                    "less than the larger standard deviation (4.00): not a win either way.\n") != NULL);
    CHECK_INT_EQ(count_of(s, "Within noise"), 1);                  /* c0 -> c1: 8 points, more than 4 */
    CHECK(strstr(s, "Best trained candidate: c2ccccccccccccccc (index 2, top-1 72.00%") != NULL);
    check_golden("replicates.md", s);
    free(s);
    s = run_report(REPLICATES, DSE_FORMAT_CSV, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(strstr(s, ",top1,top5,frontier,replicates,top1_n,top1_std,within_noise\n") != NULL);
    CHECK(strstr(s, ",done,,0.72,0.95,yes,3,2,0.014142135623730963,yes\n") != NULL);
    check_golden("replicates.csv", s);
    free(s);
    s = run_report(REPLICATES, DSE_FORMAT_JSON, NULL, &st, &err);
    CHECK_OK(st);
    struct dse_json_doc *d = parse(s, &err);
    CHECK(d != NULL);
    if (d) {
        const struct dse_json *c = dse_json_get(dse_json_root(d), "candidates");
        CHECK(c && c->n == 4);
        const struct dse_json *c2 = c && c->n == 4 ? &c->items[2] : NULL, *reps = c2 ? dse_json_get(c2, "replicates") : NULL;
        CHECK(reps && reps->n == 3);
        if (reps && reps->n == 3) {
            CHECK_STR_EQ(dse_json_get(&reps->items[1], "id")->str, "c2cccccccccccccccr1");
            CHECK_INT_EQ((int)dse_json_get(&reps->items[2], "seed")->integer, 9);
            CHECK_STR_EQ(dse_json_get(&reps->items[2], "status")->str, "diverged");
        }
        CHECK(c2 && dse_json_get(c2, "top1_n")->integer == 2);
        dse_json_free(d);
    }
    check_golden("replicates.json", s);
    free(s);
    /* the plot: an error bar at each point (all four have a spread) */
    char tmpl[] = "/tmp/dse_test_report.XXXXXX", plot[256];
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(plot, sizeof plot, "%s/replicates.svg", dir);
    free(run_report(REPLICATES, DSE_FORMAT_MD, plot, &st, &err));
    CHECK_OK(st);
    check_svg(plot, 4, "replicates_grid");
    s = slurp(plot);
    CHECK_INT_EQ(count_of(s, "<path class=\"errbar\""), 4);
    if (s) check_golden("replicates.svg", s);
    free(s);
    /* a sweep without replicates draws none */
    snprintf(plot, sizeof plot, "%s/small.svg", dir);
    free(run_report(SMALL, DSE_FORMAT_MD, plot, &st, &err));
    s = slurp(plot);
    CHECK(s && !strstr(s, "errbar"));
    free(s);
    rm_tree(dir);
}
