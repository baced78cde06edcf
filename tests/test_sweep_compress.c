/* test_sweep_compress.c: Deep Compression in sweeps (issue #35): a space's compress section
 * read by engine/compress.def's rows (compress-space; its bad files are test_cli's
 * space-bad), and the analyzer's estimate in each candidate's head (compress-est-head): the
 * analytic sweep's file, the workers' rewrite and the reader agree, and a space without the
 * section keeps its records as they were. */
#include "tests/sweep_util.h"

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
        { .text = "name = \"z\";\ncompress = {};\n", .line = 2, .density = 0.33, .bits = 8, .finetune = 1 }, /* compress.def's */
        { .text = "name = \"z\";\ncompress = {\n  density = 0.25;\n  bits = 6;\n  finetune = 0;\n};\n", .line = 2,
          .density = 0.25, .bits = 6, .finetune = 0 },
        { .text = "name = \"z\";\ncompress = { density = 1; bits = 16; };\n", .line = 2, .density = 1, .bits = 16,
          .finetune = 1 },
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
