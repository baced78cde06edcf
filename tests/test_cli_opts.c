/* test_cli_opts.c: dse's option rows (dse/options.h) where they bind a value: recipe options
 * whose range and help are engine/train.def's rows, defaults shown in --help from the row.
 * Its own program (tests/check.h counts per program); run cases by id prefix, e.g.
 * test_cli_opts opts-recipe. tests/test_cli.c has the rest of the command line's tests. */
#include "dse/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/train.h"
#include "tests/check.h"

/* dse_opts_parse of "train net.cfg NAME VALUE": its status, err.msg in msg. */
static int parse_train(const char *name, const char *value, struct dse_opt_args *a, char *msg, size_t size) {
    char *argv[] = { "net.cfg", (char *)name, (char *)value };
    struct dse_err err = { 0 };
    int st = (int)dse_opts_parse(&dse_opt_cmds[DSE_CMD_TRAIN], 3, argv, a, &err);
    snprintf(msg, size, "%s", st ? err.msg : "");
    return st;
}

/* --lr and --clip-norm are REAL rows with engine/train.def's ranges, refused in their words. */
static void test_recipe_real(void) {
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
static void test_recipe_help(void) {
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CHECK(f != NULL);
    if (!f) return;
    dse_opts_usage(f, &dse_opt_cmds[DSE_CMD_TRAIN]);
    fclose(f);
    CHECK(strstr(text, "%D") == NULL);
    CHECK(strstr(text, "  --epochs E       default " DSE_TRAIN_DEFAULT_STR(epochs) " ") != NULL);
    CHECK(strstr(text, "--lr-policy  default " DSE_TRAIN_DEFAULT_STR(policy) " (power ") != NULL);
    CHECK(strstr(text, "weight initialization: " DSE_TRAIN_DEFAULT_STR(init) " (default)") != NULL);
    CHECK(strstr(text, "when above it (default " DSE_TRAIN_DEFAULT_STR(clip_norm) ";\n") != NULL);
    free(text);
}

static const struct check_case cases[] = {
    { "opts-recipe-real", test_recipe_real },
    { "opts-recipe-help", test_recipe_help },
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
