/* test_sweep_compress.c: Deep Compression in sweeps (issue #35): a space's compress section
 * read by engine/compress.def's rows (compress-space; its bad files are test_cli's
 * space-bad), and the analyzer's estimate in each candidate's head (compress-est-head): the
 * analytic sweep's file, the workers' rewrite and the reader agree, and a space without the
 * section keeps its records as they were; the search objective compressed_mb before training
 * (compress-objective); dse report's compressed columns, a candidate without a .dsez empty,
 * never 0 (compress-report); a small real sweep with a compress section, and its candidate
 * killed between training and compression (compress-sweep). */
#include "tests/sweep_util.h"

#include "sweep/lease.h"
#include "sweep/prefilter.h"

/* s's text written to DIR/name.cfg and loaded. */
static enum dse_status load_text(const char *name, const char *text, struct dse_space *s, char *path, int size) {
    struct dse_err err = { 0 };
    snprintf(path, (size_t)size, "%s/%s.cfg", scratch(), name);
    CHECK_OK(dse_fs_mkdirs(scratch(), NULL));
    CHECK_OK(dse_fs_write_atomic(path, text, strlen(text), NULL));
    return dse_space_load(path, s, &err);
}

void test_compress_space(void) {
    static const struct {
        const char *text;
        int         line;            /* the section's line; 0: none */
        double      density;
        int         bits, finetune;
    } cases[] = {
        { .text = "name = \"z\";\n", .line = 0 },
        { .text = "name = \"z\";\ncompress = {};\n", .line = 2, .density = 0.33, .bits = 6, .finetune = 3 }, /* compress.def's */
        { .text = "name = \"z\";\ncompress = {\n  density = 0.25;\n  bits = 6;\n  finetune = 0;\n};\n", .line = 2,
          .density = 0.25, .bits = 6, .finetune = 0 },
        { .text = "name = \"z\";\ncompress = { density = 1; bits = 16; };\n", .line = 2, .density = 1, .bits = 16,
          .finetune = 3 }, /* compress.def's */
    };
    for (int k = 0; k < DSE_ARRAY_LEN(cases); k++) {
        struct dse_space s;
        char path[4200];
        CHECK_OK(load_text("compress", cases[k].text, &s, path, sizeof path));
        CHECK_INT_EQ(s.compress_line, cases[k].line);
        if (cases[k].line) {
            CHECK(s.compress.density == cases[k].density);
            CHECK_INT_EQ(s.compress.bits, cases[k].bits);
            CHECK_INT_EQ(s.compress.finetune, cases[k].finetune);
        }
        dse_space_free(&s);
    }
}

void test_compress_est_head(void) {
    static const struct {
        const char *name, *text;
        int         est; /* the records hold est_compressed_bytes */
    } cases[] = {
        { "with", "name = \"z\";\nmetaparams = { sr = [0.25, 0.5]; };\ncompress = { density = 0.33; bits = 6; };\n", 1 },
        { "without", "name = \"z\";\nmetaparams = { sr = [0.25, 0.5]; };\n", 0 },
    };
    for (int k = 0; k < DSE_ARRAY_LEN(cases); k++) {
        struct dse_space s;
        struct dse_sweep_summary sum;
        struct dse_err err = { 0 };
        char path[4200], dir[4200];
        CHECK_OK(load_text(cases[k].name, cases[k].text, &s, path, sizeof path));
        snprintf(dir, sizeof dir, "%s/sweep-%s", scratch(), cases[k].name);
        CHECK_OK(dse_sweep_analytic(&s, dir, NULL, &sum, &err));
        struct recs x;
        recs_load(dir, &x);
        CHECK_INT_EQ(x.n, 2);
        int64_t prev = -1;
        for (int i = 0; i < x.n; i++) {
            int64_t want = -1;
            char file[4300], *text = NULL;
            size_t len;
            if (cases[k].est) CHECK_OK(dse_sweep_compress_est(&s, (uint64_t)x.r[i].index, &want, NULL));
            CHECK_INT_EQ(x.r[i].est_compressed_bytes, want); /* read back by the one reader */
            CHECK(!cases[k].est || (want > 0 && want != prev && want * 4 < x.r[i].model_bytes));
            prev = want;
            /* the worker's rewrite of the record holds the same head, byte for byte */
            snprintf(file, sizeof file, "%s/candidates/%s.json", dir, x.r[i].id);
            CHECK_OK(dse_fs_read(file, &text, &len, NULL));
            char head[4096];
            int hl, pruned;
            CHECK_OK(dse_sweep_candidate_head(&s, (uint64_t)x.r[i].index, 0, head, sizeof head, &hl, &pruned, NULL));
            CHECK(text && !strncmp(text, head, (size_t)hl - 2)); /* without its ",\n" */
            CHECK_INT_EQ(!!strstr(text, "\"est_compressed_bytes\": "), cases[k].est);
            free(text);
        }
        recs_free(&x);
        dse_space_free(&s);
    }
}

/* objective.def's compressed_mb: before training, the analyzer's estimate in 10^6 bytes (the
 * record's est_compressed_bytes); NaN without a compress section's estimate. */
void test_compress_objective(void) {
    struct dse_space s;
    char path[4200];
    CHECK_OK(load_text("objective", "name = \"z\";\nmetaparams = { sr = [0.25, 0.5]; };\ncompress = { bits = 4; };\n"
                       "search = { strategy = \"evolution\"; budget = 2; objectives = [\"compressed_mb\", \"model_mb\"]; };\n",
                       &s, path, sizeof path));
    CHECK_INT_EQ(s.search.n_obj, 2);
    CHECK_INT_EQ(s.search.obj[0], DSE_EVO_COMPRESSED_MB);
    for (uint64_t k = 0; k < 2; k++) {
        enum dse_evo_cost costs[2] = { DSE_EVO_COMPRESSED_MB, DSE_EVO_MODEL_MB };
        double v[2];
        int pruned = -1;
        int64_t est;
        CHECK_OK(dse_evo_costs(&s, k, costs, 2, v, &pruned, NULL));
        CHECK_OK(dse_sweep_compress_est(&s, k, &est, NULL));
        CHECK(v[0] == (double)est / 1e6 && v[0] > 0 && v[0] * 4 < v[1]);
        CHECK_INT_EQ(pruned, 0);
    }
    dse_space_free(&s);
    struct dse_cost_totals one = { .params = 10 };
    CHECK(isnan(dse_evo_cost_value(DSE_EVO_COMPRESSED_MB, &one, 0, -1)));
    CHECK(dse_evo_cost_value(DSE_EVO_COMPRESSED_MB, &one, 0, 2500000) == 2.5);
}

/* The length of the CSV field at p (a quoted one, "conv1,fire4", whole). */
static size_t csv_field(const char *p) {
    if (*p != '"') return strcspn(p, ",\n");
    const char *q = strchr(p + 1, '"');
    return q ? (size_t)(q - p) + 1 : strlen(p);
}

/* The CSV cell of column col in the row of candidate id (NULL if either is missing), into
 * out[size]. */
static const char *csv_cell(const char *csv, const char *id, const char *col, char *out, int size) {
    const char *head_end = strchr(csv, '\n'), *row = strstr(csv, id);
    if (!head_end || !row) return NULL;
    int k = 0, want = -1;
    for (const char *p = csv; p < head_end; k++) {
        size_t len = csv_field(p);
        if (len == strlen(col) && !strncmp(p, col, len)) want = k;
        p += len + 1;
    }
    if (want < 0) return NULL;
    for (k = 0; k < want; k++) row += csv_field(row) + 1;
    snprintf(out, (size_t)size, "%.*s", (int)csv_field(row), row);
    return out;
}

void test_compress_report(void) {
    struct dse_space s;
    struct dse_sweep_summary sum;
    char path[4200], dir[4200], cell[64];
    CHECK_OK(load_text("report", "name = \"z\";\nmetaparams = { sr = [0.25, 0.5]; };\ncompress = { bits = 6; };\n", &s,
                       path, sizeof path));
    snprintf(dir, sizeof dir, "%s/sweep-report", scratch());
    CHECK_OK(dse_sweep_analytic(&s, dir, NULL, &sum, NULL));
    struct recs x;
    recs_load(dir, &x);
    CHECK_INT_EQ(x.n, 2);
    /* the larger candidate (sr 0.5; row 1 below) compressed as its worker writes it, the
     * smaller (row 0) not yet */
    const int big = x.r[1].model_bytes > x.r[0].model_bytes;
    const struct dse_rec *row[2] = { &x.r[!big], &x.r[big] };
    struct dse_rec r = *row[1];
    r.compressed_bytes = 2 * row[1]->est_compressed_bytes, r.compressed_top1 = 0.5, r.compressed_density = 0.33;
    r.compressed_bits = 6;
    CHECK_OK(dse_rec_write(dir, &s, &r, NULL));
    char log[4300], *csv = NULL, want[64];
    snprintf(log, sizeof log, "%s.csv", dir);
    unlink(log);
    const char *args[] = { "report", dir, "--format", "csv", NULL };
    CHECK_INT_EQ(run_dse(log, args, 60), 0);
    CHECK_OK(dse_fs_read(log, &csv, NULL, NULL));
    static const struct {
        int         row;
        const char *col, *want; /* NULL: the estimate in decimal */
    } cases[] = {
        { 1, "est_compressed_bytes", NULL },
        { 1, "compressed_top1", "0.5" },
        { 1, "compressed_est_ratio", "0.500" },
        { 0, "est_compressed_bytes", NULL },
        { 0, "compressed_bytes", "" }, /* no .dsez: empty, not 0 */
        { 0, "compressed_top1", "" },
        { 0, "compressed_est_ratio", "" },
    };
    for (int k = 0; csv && k < DSE_ARRAY_LEN(cases); k++) {
        const struct dse_rec *c = row[cases[k].row];
        snprintf(want, sizeof want, "%lld", (long long)c->est_compressed_bytes);
        const char *got = csv_cell(csv, c->id, cases[k].col, cell, sizeof cell);
        CHECK_STR_EQ(got ? got : "(none)", cases[k].want ? cases[k].want : want);
    }
    snprintf(want, sizeof want, "%lld", (long long)(2 * row[1]->est_compressed_bytes));
    CHECK_STR_EQ(csv ? csv_cell(csv, row[1]->id, "compressed_bytes", cell, sizeof cell) : "(none)", want);
    free(csv);
    /* --size compressed: the frontier on the .dsez's size, which only the larger candidate has,
     * so it alone is on it; on float size (the default) the smaller one (fewer FLOPs too) alone */
    static const struct {
        const char *size;
        int         row;
        const char *want;
    } fronts[] = {
        { "compressed", 1, "yes" },
        { "compressed", 0, "" }, /* no .dsez: never on it */
        { "float", 0, "yes" },
        { "float", 1, "" },
    };
    for (int k = 0; k < DSE_ARRAY_LEN(fronts); k++) {
        const char *fargs[] = { "report", dir, "--format", "csv", "--size", fronts[k].size, NULL };
        csv = NULL;
        unlink(log); /* run_dse appends */
        CHECK_INT_EQ(run_dse(log, fargs, 60), 0);
        CHECK_OK(dse_fs_read(log, &csv, NULL, NULL));
        const char *got = csv ? csv_cell(csv, row[fronts[k].row]->id, "frontier", cell, sizeof cell) : NULL;
        CHECK_STR_EQ(got ? got : "(none)", fronts[k].want);
        free(csv);
    }
    recs_free(&x);
    dse_space_free(&s);
}

/* A real sweep of two tiny candidates (1 epoch, 256 images) with a compress section: every
 * done record holds the .dsez's real size, its top-1, density and bits; then a kill between
 * training and compression (the record pending with every epoch, no .dsez) is resumed by the
 * next dse sweep, which only compresses, to the same file bytes. */
void test_compress_sweep(void) {
    if (!data_installed()) {
        printf("  skipped: Fashion-MNIST is not installed\n");
        return;
    }
    struct dse_space s;
    char path[4200], dir[4200], log[4300];
    CHECK_OK(load_text("sweep", "name = \"zsweep\";\n"
                       "metaparams = { base_e = 8; incr_e = 8; freq = 2; pct3x3 = 0.5; sr = [0.25, 1.0]; };\n"
                       "macro = { input_c = 1; input_h = 28; input_w = 28; classes = 10; conv1_filters = 8;\n"
                       "  conv1_kernel = 3; conv1_stride = 2; conv1_pad = 1; fires = 2; pools = [\"fire3\"]; };\n"
                       "train = { dataset = \"fashion-mnist\"; epochs = 1; batch = 32; lr = 0.05; seed = 7;\n"
                       "  limit_train = 256; limit_test = 100; };\n"
                       "compress = { density = 0.5; bits = 4; finetune = 1; };\n", &s, path, sizeof path));
    snprintf(dir, sizeof dir, "%s/zsweep", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *args[] = { "sweep", path, "--out", dir, "--workers", "1", NULL };
    CHECK_INT_EQ(run_dse(log, args, 300), 0);
    struct recs x;
    recs_load(dir, &x);
    CHECK_INT_EQ(x.n, 2);
    int64_t first = -1;
    for (int i = 0; i < x.n; i++) {
        char dsez[4300];
        struct stat sb;
        snprintf(dsez, sizeof dsez, "%s/checkpoints/%s/model.dsez", dir, x.r[i].id);
        CHECK(x.r[i].status == DSE_REC_DONE);
        CHECK(stat(dsez, &sb) == 0 && x.r[i].compressed_bytes == sb.st_size); /* the file's real size */
        snprintf(dsez, sizeof dsez, "%s/checkpoints/%s/compress.work", dir, x.r[i].id);
        CHECK(stat(dsez, &sb) != 0); /* the stages' checkpoints removed once the .dsez is written */
        CHECK(x.r[i].compressed_top1 >= 0 && x.r[i].compressed_top1 <= 1);
        CHECK(x.r[i].compressed_density > 0 && x.r[i].compressed_density <= 1);
        CHECK_INT_EQ(x.r[i].compressed_bits, 4);
        CHECK(x.r[i].est_compressed_bytes > 0);
        if (i == 0) first = x.r[i].compressed_bytes;
    }
    /* killed between training and compression: pending, every epoch, no .dsez */
    if (x.n == 2) {
        struct dse_rec r;
        char dsez[4300];
        dse_rec_init(&r); /* dse_rec_read frees what r held */
        CHECK_OK(dse_rec_read(dir, x.r[0].id, &r, NULL));
        r.status = DSE_REC_PENDING, r.compressed_bytes = -1, r.compressed_top1 = NAN, r.compressed_density = NAN;
        r.compressed_bits = 0;
        CHECK_OK(dse_rec_write(dir, &s, &r, NULL));
        const int att = r.attempts_total;
        dse_rec_deinit(&r);
        snprintf(dsez, sizeof dsez, "%s/checkpoints/%s/model.dsez", dir, x.r[0].id);
        CHECK(unlink(dsez) == 0);
        /* the plot on compressed size: the .dsez's axis, one candidate at its size, the other
         * (no .dsez now) hollow at its estimate, never at 0 */
        char svg_path[4300], *svg = NULL;
        snprintf(svg_path, sizeof svg_path, "%s/z.svg", scratch());
        const char *pargs[] = { "report", dir, "--size", "compressed", "--plot", svg_path, NULL };
        unlink(log);
        CHECK_INT_EQ(run_dse(log, pargs, 60), 0);
        CHECK_OK(dse_fs_read(svg_path, &svg, NULL, NULL));
        CHECK(svg && strstr(svg, "compressed size (MB = 10^6 bytes, the .dsez file)"));
        CHECK(svg && strstr(svg, "no .dsez yet (its estimated size)"));
        CHECK(svg && strstr(svg, "stroke-dasharray=\"2 2\"/>") && strstr(svg, "vs top-1 accuracy"));
        free(svg);
        unlink(svg_path);
        unlink(log);
        CHECK_INT_EQ(run_dse(log, args, 300), 0);
        CHECK_OK(dse_rec_read(dir, x.r[0].id, &r, NULL));
        CHECK(r.status == DSE_REC_DONE);
        CHECK_INT_EQ(r.compressed_bytes, first); /* deterministic: the same file */
        CHECK_INT_EQ(r.n_epochs, 1);             /* not trained again: compressed in an attempt of its own */
        CHECK_INT_EQ(r.attempts_total, att + 1);
        CHECK(r.n_att > 0 && r.att[r.n_att - 1].from_epoch == 1 && !strcmp(r.att[r.n_att - 1].end, "done"));
        dse_rec_deinit(&r);
    }
    if (check_failures) show_log(log);
    recs_free(&x);
    dse_space_free(&s);
    /* the time budget spent while compressing (400 + 400 fine-tuning epochs, far past a budget
     * of 6 s that the one epoch of training fits in): fine-tuning stops as training does, the
     * candidate stays pending with its work folder (not done without a .dsez), and the command
     * ends soon after the budget */
    CHECK_OK(load_text("budget", "name = \"zbudget\";\n"
                       "metaparams = { base_e = 8; incr_e = 8; freq = 2; pct3x3 = 0.5; sr = [0.25]; };\n"
                       "macro = { input_c = 1; input_h = 28; input_w = 28; classes = 10; conv1_filters = 8;\n"
                       "  conv1_kernel = 3; conv1_stride = 2; conv1_pad = 1; fires = 2; pools = [\"fire3\"]; };\n"
                       "train = { dataset = \"fashion-mnist\"; epochs = 1; batch = 32; lr = 0.05; seed = 7;\n"
                       "  limit_train = 256; limit_test = 100; };\n"
                       "compress = { density = 0.5; bits = 4; finetune = 400; };\n", &s, path, sizeof path));
    snprintf(dir, sizeof dir, "%s/zbudget", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *bargs[] = { "sweep", path, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--budget", "0.1m",
                            NULL };
    double t0 = dse_lease_mono();
    CHECK_INT_EQ(run_dse(log, bargs, 300), 0);
    const double took = dse_lease_mono() - t0;
    recs_load(dir, &x);
    CHECK_INT_EQ(x.n, 1);
    if (x.n == 1) {
        char work[4300];
        struct stat sb;
        snprintf(work, sizeof work, "%s/checkpoints/%s/compress.work/stamp", dir, x.r[0].id);
        CHECK(x.r[0].status == DSE_REC_PENDING && x.r[0].compressed_bytes < 0);
        struct dse_rec r;
        dse_rec_init(&r);
        CHECK_OK(dse_rec_read(dir, x.r[0].id, &r, NULL));
        CHECK(r.n_att > 0 && (r.n_epochs == 0 || !strcmp(r.att[r.n_att - 1].end, "budget")));
        dse_rec_deinit(&r);
        CHECK(x.r[0].n_epochs == 0 || stat(work, &sb) == 0); /* trained: compressing was under way */
        if (x.r[0].n_epochs == 0) printf("  note: the budget ran out in training here; compression not reached\n");
    }
    CHECK(took < 60); /* not the minutes of 800 fine-tuning epochs */
    if (check_failures) show_log(log);
    recs_free(&x);
    dse_space_free(&s);
}
