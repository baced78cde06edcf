/* test_cli_opts.c: dse's option rows (dse/options.h) where they bind a value: recipe options
 * whose range and help are engine/train.def's rows, lines that fill a command's settings
 * (dse_opts_bind), defaults shown in --help from the one place that owns them.
 * Part of the test_cli program (its case table is tests/test_cli.c's CLI_CASES); run cases
 * by id prefix, e.g. test_cli opts-recipe. */
#include "dse/options.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/synth.h"
#include "dse/exportcmd.h"
#include "engine/train.h"
#include "tests/cli_util.h"

/* dse_opts_parse of "train net.cfg NAME VALUE": its status, err.msg in msg. */
static int parse_train(const char *name, const char *value, struct dse_opt_args *a, char *msg, size_t size) {
    char *argv[] = { "net.cfg", (char *)name, (char *)value };
    struct dse_err err = { 0 };
    int st = (int)dse_opts_parse(&dse_opt_cmds[DSE_CMD_TRAIN], 3, argv, a, &err);
    snprintf(msg, size, "%s", st ? err.msg : "");
    return st;
}

/* --lr and --clip-norm are REAL rows with engine/train.def's ranges, refused in their words. */
void test_recipe_real(void) {
    static const struct {
        const char *name, *value, *msg; /* msg "": taken */
        double      real;
    } cases[] = {
        { "--lr", "0.5", "", 0.5 },
        { "--lr", "100", "", 100 },
        { "--lr", "1e-13", "", 1e-13 }, /* any rate above 0, as --lr always took */
        { "--lr", "0", "--lr '0' is not a number in (0, 100]", 0 },
        { "--lr", "100.5", "--lr '100.5' is not a number in (0, 100]", 0 },
        { "--lr", "x", "--lr 'x' is not a number in (0, 100]", 0 },
        { "--lr", "nan", "--lr 'nan' is not a number in (0, 100]", 0 },
        { "--clip-norm", "0", "", 0 },
        { "--clip-norm", "1e6", "", 1e6 },
        { "--clip-norm", "-1", "--clip-norm '-1' is not a number in [0, 1e6] (0: no clipping)", 0 },
        { "--clip-norm", "2e6", "--clip-norm '2e6' is not a number in [0, 1e6] (0: no clipping)", 0 },
        { "--clip-norm", "", "--clip-norm '' is not a number in [0, 1e6] (0: no clipping)", 0 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        struct dse_opt_args a;
        char msg[sizeof ((struct dse_err *)0)->msg];
        int st = parse_train(cases[i].name, cases[i].value, &a, msg, sizeof msg);
        CHECK_INT_EQ(st, cases[i].msg[0] ? DSE_ERR_CONFIG : DSE_OK);
        CHECK_STR_EQ(msg, cases[i].msg);
        if (!st) CHECK_NEAR(a.real[!strcmp(cases[i].name, "--lr") ? DSE_OPT_LR : DSE_OPT_CLIP_NORM], cases[i].real,
                            1e-12);
    }
    /* the ranges are the recipe rows' */
    CHECK_INT_EQ(dse_opt_specs[DSE_OPT_LR].kind, DSE_OPT_KIND_REAL);
    CHECK(dse_opt_specs[DSE_OPT_LR].hi == DSE_TRAIN_HI(lr));
    CHECK_INT_EQ(dse_opt_specs[DSE_OPT_CLIP_NORM].kind, DSE_OPT_KIND_REAL);
    CHECK(dse_opt_specs[DSE_OPT_CLIP_NORM].lo == DSE_TRAIN_LO(clip_norm));
    CHECK(dse_opt_specs[DSE_OPT_CLIP_NORM].hi == DSE_TRAIN_HI(clip_norm));
}

/* dse train --help shows each recipe option's default from its row (%D), and no "%D" is left. */
void test_recipe_help(void) {
    char *text = usage_text(&dse_opt_cmds[DSE_CMD_TRAIN]);
    CHECK(strstr(text, "%D") == NULL);
    CHECK(strstr(text, "  --epochs E       default " DSE_TRAIN_DEFAULT_STR(epochs) " ") != NULL);
    CHECK(strstr(text, "--lr-policy  default " DSE_TRAIN_DEFAULT_STR(policy) " (power ") != NULL);
    CHECK(strstr(text, "weight initialization: " DSE_TRAIN_DEFAULT_STR(init) " (default)") != NULL);
    CHECK(strstr(text, "when above it (default " DSE_TRAIN_DEFAULT_STR(clip_norm) ";\n") != NULL);
    free(text);
}

/* Every bound line of every command: its field inside the settings, of its kind's size; no
 * command's --help leaves a %D unreplaced. */
void test_bind_tables(void) {
    int bound = 0;
    for (int k = 0; k < DSE_CMD_COUNT; k++) {
        const struct dse_opt_cmd *c = &dse_opt_cmds[k];
        for (int i = 0; i < c->n_lines; i++) {
            const struct dse_opt_line *l = &c->lines[i];
            if (l->place == DSE_OPT_PLACE_HEADING || !l->size) continue;
            enum dse_opt_kind kind = dse_opt_specs[l->opt].kind;
            size_t want = kind == DSE_OPT_KIND_REAL                                ? sizeof(double)
                        : kind == DSE_OPT_KIND_TEXT || kind == DSE_OPT_KIND_PATH ? sizeof(const char *)
                        : kind == DSE_OPT_KIND_SPAN                              ? 2 * sizeof(int)
                        : kind == DSE_OPT_KIND_INT && l->size == sizeof(int64_t) ? sizeof(int64_t) /* --seed */
                                                                                 : sizeof(int);
            CHECK(kind != DSE_OPT_KIND_INTS && kind != DSE_OPT_KIND_REALS); /* read by dse_opts_list */
            CHECK_INT_EQ(l->size, want);
            CHECK(l->off + l->size <= c->settings);
            bound++;
        }
        char *text = usage_text(c);
        CHECK(strstr(text, "%D") == NULL);
        free(text);
    }
    CHECK(bound >= 15);
}

/* dse train's, sweep's, eval's and export's bound options: the defaults (a line's def, else the settings'),
 * then the values given; --help shows the settings' defaults. */
void test_bind_values(void) {
    const struct dse_opt_cmd *c = &dse_opt_cmds[DSE_CMD_TRAIN];
    struct dse_opt_args a;
    struct dse_err err = { 0 };
    struct dse_train_opts t;
    char *none[] = { "net.cfg" };
    CHECK_OK(dse_opts_parse(c, 1, none, &a, &err));
    dse_train_opts_default(&t);
    dse_opts_bind(c, &a, &t);
    CHECK_INT_EQ(t.threads, 2); /* dse train's own default, not dse_train_opts_default's */
    CHECK_INT_EQ(t.aug, DSE_AUG_AUTO);
    CHECK(t.resume == NULL);
    char *given[] = { "net.cfg", "--threads", "5", "--aug", "crop", "--reduce", "tree", "--resume", "r.ckpt" };
    CHECK_OK(dse_opts_parse(c, DSE_ARRAY_LEN(given), given, &a, &err));
    dse_train_opts_default(&t);
    dse_opts_bind(c, &a, &t);
    CHECK_INT_EQ(t.threads, 5);
    CHECK_INT_EQ(t.aug, DSE_AUG_CROP);
    CHECK_INT_EQ(t.reduce, dse_word_index(DSE_DIST_REDUCE_NAMES, "tree"));
    CHECK_STR_EQ(t.resume, "r.ckpt");

    c = &dse_opt_cmds[DSE_CMD_SWEEP];
    struct dse_sweep_opts o, d;
    char *sweep[] = { "s.cfg", "--lease-seconds", "2.5", "--early-stop", "asha", "--eta", "4", "--rank", "top1" };
    CHECK_OK(dse_opts_parse(c, DSE_ARRAY_LEN(sweep), sweep, &a, &err));
    dse_sweep_opts_default(&o);
    dse_sweep_opts_default(&d);
    dse_opts_bind(c, &a, &o);
    CHECK_NEAR(o.lease_s, 2.5, 1e-12);
    CHECK_INT_EQ(o.plan.halving, DSE_SWEEP_HALVING_ASHA);
    CHECK_INT_EQ(o.plan.eta, 4);
    CHECK_INT_EQ(o.plan.rank, DSE_SWEEP_RANK_TOP1);
    CHECK_INT_EQ(o.workers, d.workers); /* not given: the settings' own */
    CHECK_INT_EQ(o.max_crashes, d.max_crashes);

    char *text = usage_text(c), want[96];
    snprintf(want, sizeof want, "a lease's time to live (default %g; renewed", d.lease_s);
    CHECK(strstr(text, want) != NULL);
    snprintf(want, sizeof want, "worker processes this command starts (default %d)", d.workers);
    CHECK(strstr(text, want) != NULL);
    CHECK(strstr(text, "  --early-stop S     none (default): train") != NULL);
    free(text);

    /* dse eval: dse train's --threads default, the recipe's --batch default */
    c = &dse_opt_cmds[DSE_CMD_EVAL];
    char *eval[] = { "net.cfg", "--limit-test", "7" };
    CHECK_OK(dse_opts_parse(c, DSE_ARRAY_LEN(eval), eval, &a, &err));
    dse_train_opts_default(&t);
    dse_opts_bind(c, &a, &t);
    CHECK_INT_EQ(t.threads, 2);
    CHECK_INT_EQ(t.batch, atoi(DSE_TRAIN_DEFAULT_STR(batch)));
    CHECK_INT_EQ(t.limit_test, 7);

    /* dse export: a word straight into its enum (the words in the enum's order) */
    c = &dse_opt_cmds[DSE_CMD_EXPORT];
    struct dse_export_req q = { 0 };
    char *export[] = { "net.cfg", "--format", "caffe", "--checkpoint", "w.ckpt" };
    CHECK_OK(dse_opts_parse(c, DSE_ARRAY_LEN(export), export, &a, &err));
    dse_opts_bind(c, &a, &q);
    CHECK_INT_EQ(q.format, DSE_EXPORT_CAFFE);
    CHECK_STR_EQ(q.checkpoint, "w.ckpt");
    CHECK(q.id == NULL && !q.best);
}

/* An option no field takes: the value given, else its line's default (dse predict --top,
 * dse analyze --batch, dse train --checkpoint-every), which --help shows. */
void test_line_int(void) {
    const struct dse_opt_cmd *c = &dse_opt_cmds[DSE_CMD_PREDICT];
    struct dse_opt_args a;
    struct dse_err err = { 0 };
    char *none[] = { "net.cfg", "x.png" }, *three[] = { "net.cfg", "x.png", "--top", "3" };
    CHECK_OK(dse_opts_parse(c, 2, none, &a, &err));
    CHECK_INT_EQ(dse_opts_int(c, &a, DSE_OPT_TOP), 5);
    CHECK_OK(dse_opts_parse(c, 4, three, &a, &err));
    CHECK_INT_EQ(dse_opts_int(c, &a, DSE_OPT_TOP), 3);
    char *text = usage_text(c);
    CHECK(strstr(text, "classes to print per image (default 5)") != NULL);
    free(text);
    c = &dse_opt_cmds[DSE_CMD_ANALYZE];
    CHECK_OK(dse_opts_parse(c, 1, none, &a, &err));
    CHECK_INT_EQ(dse_opts_int(c, &a, DSE_OPT_BATCH), 1);
    c = &dse_opt_cmds[DSE_CMD_TRAIN]; /* a text's default: --checkpoint-every 5m */
    CHECK_OK(dse_opts_parse(c, 1, none, &a, &err));
    CHECK_STR_EQ(dse_opts_text(c, &a, DSE_OPT_CKPT_EVERY), "5m");
    CHECK(dse_opts_text(c, &a, DSE_OPT_RESUME) == NULL);
}

/* List rows (INTS, REALS: --input, --gpus, --mean, --std) and PATH rows, read by
 * dse_opts_parse: the values taken (dse_opts_list) or the refusal in the row's words. */
void test_list_path(void) {
    static const struct {
        enum dse_cmd cmd;
        enum dse_opt opt;
        const char  *value, *msg; /* msg "": taken */
        int          n;                  /* the values dse_opts_list gives */
        double       v0, v_last;
    } cases[] = {
        { DSE_CMD_ANALYZE, DSE_OPT_INPUT, "3,227,227", "", 3, 3, 227 },
        { DSE_CMD_ANALYZE, DSE_OPT_INPUT, "1,1,16777216", "", 3, 1, 16777216 },
        { DSE_CMD_ANALYZE, DSE_OPT_INPUT, "3,32", "--input '3,32' is not C,H,W with integers from 1 to 16777216 (e.g. 3,227,227)", 0, 0, 0 },
        { DSE_CMD_ANALYZE, DSE_OPT_INPUT, "3,32,32,", "--input '3,32,32,' is not C,H,W with integers from 1 to 16777216 (e.g. 3,227,227)", 0, 0, 0 },
        { DSE_CMD_ANALYZE, DSE_OPT_INPUT, "3,,32", "--input '3,,32' is not C,H,W with integers from 1 to 16777216 (e.g. 3,227,227)", 0, 0, 0 },
        { DSE_CMD_ANALYZE, DSE_OPT_INPUT, "3,0,32", "--input '3,0,32' is not C,H,W with integers from 1 to 16777216 (e.g. 3,227,227)", 0, 0, 0 },
        { DSE_CMD_ANALYZE, DSE_OPT_INPUT, "3,32,16777217", "--input '3,32,16777217' is not C,H,W with integers from 1 to 16777216 (e.g. 3,227,227)", 0, 0, 0 },
        { DSE_CMD_ANALYZE, DSE_OPT_INPUT, "3,3.5,32", "--input '3,3.5,32' is not C,H,W with integers from 1 to 16777216 (e.g. 3,227,227)", 0, 0, 0 },
        { DSE_CMD_SWEEP,   DSE_OPT_GPUS, "all", "", 0, 0, 0 },
        { DSE_CMD_SWEEP,   DSE_OPT_GPUS, "0,2,1023", "", 3, 0, 1023 },
        { DSE_CMD_SWEEP,   DSE_OPT_GPUS, "0,0", "", 2, 0, 0 }, /* taken here; named twice: cmd_sweep */
        { DSE_CMD_SWEEP,   DSE_OPT_GPUS, "1024", "--gpus '1024' is not all or a comma-separated list of CUDA device indices (e.g. 0 or 0,2)", 0, 0, 0 },
        { DSE_CMD_SWEEP,   DSE_OPT_GPUS, "al", "--gpus 'al' is not all or a comma-separated list of CUDA device indices (e.g. 0 or 0,2)", 0, 0, 0 },
        { DSE_CMD_IMPORT,  DSE_OPT_MEAN, "0.485,0.456,0.406", "", 3, 0.485, 0.406 },
        { DSE_CMD_IMPORT,  DSE_OPT_MEAN, "-1e3", "", 1, -1e3, -1e3 },
        { DSE_CMD_IMPORT,  DSE_OPT_MEAN, "1,2,3,4,5", "--mean '1,2,3,4,5' is not a comma-separated list of numbers (one a channel)", 0, 0, 0 },
        { DSE_CMD_IMPORT,  DSE_OPT_MEAN, "inf", "--mean 'inf' is not a comma-separated list of numbers (one a channel)", 0, 0, 0 },
        { DSE_CMD_IMPORT,  DSE_OPT_MEAN, "nan", "--mean 'nan' is not a comma-separated list of numbers (one a channel)", 0, 0, 0 },
        { DSE_CMD_IMPORT,  DSE_OPT_MEAN, "1e999", "--mean '1e999' is not a comma-separated list of numbers (one a channel)", 0, 0, 0 },
        { DSE_CMD_IMPORT,  DSE_OPT_STD, "0.229,0.224,0.225", "", 3, 0.229, 0.225 },
        { DSE_CMD_IMPORT,  DSE_OPT_STD, "0.2,0", "--std '0.2,0' is not a comma-separated list of numbers above 0", 0, 0, 0 },
        { DSE_CMD_IMPORT,  DSE_OPT_STD, "0.2 ", "--std '0.2 ' is not a comma-separated list of numbers above 0", 0, 0, 0 },
        { DSE_CMD_SWEEP,   DSE_OPT_OUT, "", "--out needs a directory name", 0, 0, 0 },
        { DSE_CMD_EVAL,    DSE_OPT_CHECKPOINT, "", "--checkpoint needs a file name", 0, 0, 0 },
        { DSE_CMD_TRAIN,   DSE_OPT_CHECKPOINT_DIR, "", "--checkpoint-dir needs a directory name", 0, 0, 0 },
        { DSE_CMD_REPORT,  DSE_OPT_PLOT, "", "--plot needs a file name", 0, 0, 0 },
        { DSE_CMD_REPORT,  DSE_OPT_PLOT, "x.svg", "", 0, 0, 0 },
        { DSE_CMD_DATA_SYNTH, DSE_OPT_SIDES, "8-4096", "", 0, 0, 0 },
        { DSE_CMD_DATA_SYNTH, DSE_OPT_SIDES, "9-8", "--sides '9-8' is not MIN-MAX with 8 <= MIN <= MAX <= 4096 (e.g. 256-400)", 0, 0, 0 },
        { DSE_CMD_DATA_SYNTH, DSE_OPT_SIDES, "7-8", "--sides '7-8' is not MIN-MAX with 8 <= MIN <= MAX <= 4096 (e.g. 256-400)", 0, 0, 0 },
        { DSE_CMD_DATA_SYNTH, DSE_OPT_SIDES, "8-", "--sides '8-' is not MIN-MAX with 8 <= MIN <= MAX <= 4096 (e.g. 256-400)", 0, 0, 0 },
    };
    static char long_path[PATH_MAX + 1];
    memset(long_path, 'a', PATH_MAX);
    for (size_t i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        const struct dse_opt_cmd *c = &dse_opt_cmds[cases[i].cmd];
        enum dse_opt o = cases[i].opt;
        char *argv[] = { (char *)dse_opt_specs[o].name, (char *)cases[i].value, "a", "b" }; /* the least positionals */
        struct dse_opt_args a;
        struct dse_err err = { 0 };
        int st = (int)dse_opts_parse(c, 2 + c->min_pos, argv, &a, &err);
        CHECK_STR_EQ(st ? err.msg : "", cases[i].msg);
        const enum dse_opt_kind k = dse_opt_specs[o].kind;
        if (st || (k != DSE_OPT_KIND_INTS && k != DSE_OPT_KIND_REALS)) continue;
        long long iv[DSE_SWEEP_GPUS_MAX];
        double v[DSE_SWEEP_GPUS_MAX];
        int n = dse_opts_list(&a, o, iv, v, DSE_SWEEP_GPUS_MAX);
        CHECK_INT_EQ(n, cases[i].n);
        if (n < 1) continue;
        const int ints = k == DSE_OPT_KIND_INTS;
        CHECK(ints ? iv[0] == (long long)cases[i].v0 : v[0] == cases[i].v0);
        CHECK(ints ? iv[n - 1] == (long long)cases[i].v_last : v[n - 1] == cases[i].v_last);
    }
    char *argv[] = { "space.cfg", "--out", long_path };
    struct dse_opt_args a;
    struct dse_err err = { 0 };
    CHECK_INT_EQ(dse_opts_parse(&dse_opt_cmds[DSE_CMD_SWEEP], 3, argv, &a, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "--out: a name of 4096 bytes is longer than the system's 4095");
    long_path[PATH_MAX - 1] = '\0';
    CHECK_OK(dse_opts_parse(&dse_opt_cmds[DSE_CMD_SWEEP], 3, argv, &a, &err));
    /* SPAN and 64-bit INT lines bound: data synth --sides 100-200 --seed 2147483647 */
    const struct dse_opt_cmd *c = &dse_opt_cmds[DSE_CMD_DATA_SYNTH];
    char *synth[] = { "dir", "--sides", "100-200", "--seed", "2147483647" };
    struct dse_synth_opts o;
    CHECK_OK(dse_opts_parse(c, 5, synth, &a, &err));
    dse_synth_opts_default(&o);
    dse_opts_bind(c, &a, &o);
    CHECK_INT_EQ(o.min_side, 100);
    CHECK_INT_EQ(o.max_side, 200);
    CHECK(o.seed == 2147483647u);
}

/* Positionals have no count of their own (issue #34): dse predict takes 300 images, options
 * given among them, in their order; the argv entries are reordered positionals first (the
 * strings unmoved), "--" makes the rest positionals, and a command of one still refuses a
 * second. */
void test_many_positionals(void) {
    const struct dse_opt_cmd *c = &dse_opt_cmds[DSE_CMD_PREDICT];
    enum { IMAGES = 300 };
    static char names[IMAGES][16];
    char *argv[IMAGES + 8];
    int n = 0;
    argv[n++] = "net.cfg";
    for (int i = 0; i < IMAGES; i++) {
        snprintf(names[i], sizeof names[i], "%s%03d.png", i == IMAGES - 1 ? "-" : "", i);
        if (i == 100) argv[n++] = "--top", argv[n++] = "3";
        if (i == 200) argv[n++] = "--checkpoint=w.ckpt";
        if (i == IMAGES - 1) argv[n++] = "--"; /* the last name starts with '-' */
        argv[n++] = names[i];
    }
    struct dse_opt_args a;
    struct dse_err err = { 0 };
    CHECK_OK(dse_opts_parse(c, n, argv, &a, &err));
    CHECK_INT_EQ(a.n_pos, IMAGES + 1);
    CHECK_STR_EQ(a.pos[0], "net.cfg");
    int in_order = 1;
    for (int i = 0; i + 1 < a.n_pos && i < IMAGES; i++) in_order &= a.pos[1 + i] == names[i];
    CHECK(in_order);
    CHECK_INT_EQ(dse_opts_int(c, &a, DSE_OPT_TOP), 3);
    CHECK_STR_EQ(a.val[DSE_OPT_CHECKPOINT], "w.ckpt");
    CHECK_STR_EQ(argv[IMAGES + 1], "--top"); /* the options after the positionals, in order */
    CHECK_STR_EQ(argv[IMAGES + 3], "--checkpoint=w.ckpt");
    char *two[] = { "a.cfg", "--batch", "2", "b.cfg" };
    CHECK_INT_EQ(dse_opts_parse(&dse_opt_cmds[DSE_CMD_ANALYZE], 4, two, &a, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "unexpected argument 'b.cfg'");
}
