/* test_cli_space.c: test_cli's cases on design spaces (sweep/space.c, issue #3): every bad
 * space file's exact path:line message, the thesis's spaces, sampling, datasets, ids, round
 * trips, and a sweep directory's files. */
#include "tests/cli_util.h"

/* ---- design spaces (issue #3) ------------------------------------------------------ */

void test_bad_spaces(void) {
    static const struct { const char *path, *msg; } bad[] = {
        { "tests/bad_spaces/sr_range.cfg",
          "tests/bad_spaces/sr_range.cfg:3: sr = 1.5 is out of range; expected 0 < sr <= 1" },
        { "tests/bad_spaces/search_strategy.cfg",
          "tests/bad_spaces/search_strategy.cfg:3: strategy = \"genetic\"; expected one of: grid random evolution bo auto" },
        { "tests/bad_spaces/search_budget.cfg",
          "tests/bad_spaces/search_budget.cfg:3: strategy \"evolution\" needs a budget: search = { strategy = "
          "\"evolution\"; budget = <candidates to train>; } (or budget_epochs, budget_hours; docs/space-format.md)" },
        { "tests/bad_spaces/search_hours_random.cfg",
          "tests/bad_spaces/search_hours_random.cfg:4: strategy \"random\" draws its candidates before training, so "
          "budget_hours does not apply; give budget or budget_epochs, or limit the command with dse sweep --budget Nh" },
        { "tests/bad_spaces/search_epochs_short.cfg",
          "tests/bad_spaces/search_epochs_short.cfg:5: budget_epochs = 5 is less than one candidate's 3 epochs x 2 "
          "replicates" },
        { "tests/bad_spaces/search_epochs_no_train.cfg",
          "tests/bad_spaces/search_epochs_no_train.cfg:4: budget_epochs counts epochs of training: the space needs "
          "a train section" },
        { "tests/bad_spaces/search_hours_range.cfg",
          "tests/bad_spaces/search_hours_range.cfg:4: budget_hours = 0 is out of range; expected 1e-06 to 1000000" },
        { "tests/bad_spaces/search_budget_range.cfg",
          "tests/bad_spaces/search_budget_range.cfg:3: budget = 0 is out of range; expected 1 to 10000000" },
        { "tests/bad_spaces/search_grid_budget.cfg",
          "tests/bad_spaces/search_grid_budget.cfg:4: strategy \"grid\" trains the whole grid (or sample = N), so "
          "budget = 4 does not apply; give strategy = \"random\", \"evolution\", \"bo\" or \"auto\" with it (or no "
          "strategy: a budget alone means \"auto\")" },
        { "tests/bad_spaces/search_bo_measured.cfg",
          "tests/bad_spaces/search_bo_measured.cfg:3: strategy \"bo\" models top-1 against its first objective, "
          "\"latency_ms\", which is measured after training; list a cost known before training first (objectives = "
          "[\"params\", \"latency_ms\"])" },
        { "tests/bad_spaces/search_bo_pop.cfg",
          "tests/bad_spaces/search_bo_pop.cfg:4: pop applies to strategy = \"evolution\" only" },
        { "tests/bad_spaces/search_auto_pop.cfg", /* a budget without strategy is auto */
          "tests/bad_spaces/search_auto_pop.cfg:4: pop applies to strategy = \"evolution\" only; a budget without "
          "strategy means \"auto\", which chooses the strategy, and sizes evolution's population from the budget (a "
          "third of it, 4 to 16): give strategy = \"evolution\" with pop" },
        { "tests/bad_spaces/search_min_top1_percent.cfg", /* a percentage for a fraction */
          "tests/bad_spaces/search_min_top1_percent.cfg:4: min_top1 is a fraction of the test images: 74.5% is "
          "min_top1 = 0.745" },
        { "tests/bad_spaces/search_min_top1_range.cfg",
          "tests/bad_spaces/search_min_top1_range.cfg:4: min_top1 = -0.5 is out of range; expected 0 to 1" },
        { "tests/bad_spaces/search_min_top1_one.cfg",
          "tests/bad_spaces/search_min_top1_one.cfg:4: min_top1 = 1 leaves no top-1 above it; expected 0 to less than "
          "1 (0.7: networks above 70% top-1 interest you)" },
        { "tests/bad_spaces/search_min_top1_evolution.cfg",
          "tests/bad_spaces/search_min_top1_evolution.cfg:4: min_top1 applies to strategy = \"bo\" (or \"auto\", "
          "where it chooses bo) only: the reference top-1 of the hypervolume bo maximizes" },
        { "tests/bad_spaces/search_objective.cfg",
          "tests/bad_spaces/search_objective.cfg:4: objectives: \"latency\" is not a cost; expected some of: params, "
          "model_mb, flops, macs, train_mem_mib, compressed_mb, latency_ms (top-1 is always the first objective)" },
        { "tests/bad_spaces/search_compressed_mb.cfg",
          "tests/bad_spaces/search_compressed_mb.cfg:4: objectives: \"compressed_mb\" needs a compress section: "
          "compress = { density = 0.33; bits = 6; } (docs/space-format.md)" },
        { "tests/bad_spaces/search_sample.cfg",
          "tests/bad_spaces/search_sample.cfg:4: sample = 2 and strategy \"random\" both choose the candidates; give "
          "one (strategy \"random\" with budget = N draws N, as sample = N did)" },
        { "tests/bad_spaces/compress_density.cfg", /* engine/compress.def's density: (0, 1] */
          "tests/bad_spaces/compress_density.cfg:3: density = 0 is out of range; expected 0 < density <= 1" },
        { "tests/bad_spaces/compress_density_high.cfg",
          "tests/bad_spaces/compress_density_high.cfg:3: density = 1.5 is out of range; expected 0 < density <= 1" },
        { "tests/bad_spaces/compress_bits.cfg",
          "tests/bad_spaces/compress_bits.cfg:4: bits = 17 is out of range; expected 1 to 16" },
        { "tests/bad_spaces/compress_key.cfg",
          "tests/bad_spaces/compress_key.cfg:3: unknown setting 'bit' in compress (did you mean 'bits'?)" },
        { "tests/bad_spaces/unknown_key.cfg",
          "tests/bad_spaces/unknown_key.cfg:4: unknown setting 'pct3x33' in metaparams (did you mean 'pct3x3'?)" },
        { "tests/bad_spaces/unknown_group.cfg",
          "tests/bad_spaces/unknown_group.cfg:2: unknown setting 'metaparam' in the space file (did you mean 'metaparams'?)" },
        { "tests/bad_spaces/bad_range.cfg",
          "tests/bad_spaces/bad_range.cfg:3: a range needs numbers start, stop and one of step (arithmetic) "
          "or factor (geometric), e.g. sr = { start = 0.125; stop = 1.0; step = 0.125; }" },
        { "tests/bad_spaces/range_values.cfg",
          "tests/bad_spaces/range_values.cfg:3: sr = 1.25 is out of range; expected 0 < sr <= 1" },
        { "tests/bad_spaces/bad_bypass.cfg",
          "tests/bad_spaces/bad_bypass.cfg:3: bypass = \"residual\"; expected \"none\", \"simple\" or "
          "\"complex\" (or a list of them)" },
        { "tests/bad_spaces/bad_pools.cfg",
          "tests/bad_spaces/bad_pools.cfg:3: pools = \"conv1,fire1\": positions are \"conv1\" and "
          "\"fire<k>\" (k = 2 .. fires + 1)" },
        { "tests/bad_spaces/train_seed_range.cfg", /* the CLI's --seed range */
          "tests/bad_spaces/train_seed_range.cfg:4: seed = 3000000000 is out of range; expected 0 to 2147483647" },
        { "tests/bad_spaces/wrap_batch.cfg", /* libconfig 1.5 would read 8 */
          "tests/bad_spaces/wrap_batch.cfg:4: batch = 4294967304 does not fit in 32 bits (-2147483648 to "
          "2147483647), and libconfig 1.5 would read it wrapped; write 4294967304L for a 64-bit integer" },
        { "tests/bad_spaces/train_lr_range.cfg", /* the CLI's --lr range */
          "tests/bad_spaces/train_lr_range.cfg:3: lr = 200 is out of range; expected 1e-12 to 100" },
        { "tests/bad_spaces/fire_dropout_range.cfg",
          "tests/bad_spaces/fire_dropout_range.cfg:3: fire_dropout = 1 is out of range; expected 0 <= fire_dropout < 1" },
        { "tests/bad_spaces/int_key.cfg",
          "tests/bad_spaces/int_key.cfg:3: base_e = 12.5 must be an integer of at most 16777216" },
        { "tests/bad_spaces/no_name.cfg",
          "tests/bad_spaces/no_name.cfg: the space needs name = \"...\"; (letters, digits, '-', '_', '.'; "
          "at most 95 characters)" },
        { "tests/bad_spaces/bad_train.cfg",
          "tests/bad_spaces/bad_train.cfg:3: dataset = \"imagenet\" names no dataset; expected fashion-mnist, "
          "mnist, cifar-10, cifar-100, or a path relative to the space file (an IDX or CIFAR folder, an image pack "
          "or folder; \"./imagenet\" for a folder of that name)" },
        { "tests/bad_spaces/bad_constraint.cfg",
          "tests/bad_spaces/bad_constraint.cfg:3: unknown setting 'max_parms' in constraints (did you mean "
          "'max_params'?)" },
        { "tests/bad_spaces/duplicate_value.cfg",
          "tests/bad_spaces/duplicate_value.cfg:3: pct3x3 holds the value 0.25 twice (listed twice, or range "
          "values that round to one)" },
        { "tests/bad_spaces/geometric_dup.cfg",
          "tests/bad_spaces/geometric_dup.cfg:3: base_e holds the value 2 twice (listed twice, or range "
          "values that round to one)" },
        { "tests/bad_spaces/pools_past_end.cfg",
          "tests/bad_spaces/pools_past_end.cfg:4: pools names a Fire module past the last one (fire5)" },
        { "tests/bad_spaces/pools_dup.cfg",
          "tests/bad_spaces/pools_dup.cfg:3: pools lists the same set of positions twice" },
        { "tests/bad_spaces/constraints_list.cfg",
          "tests/bad_spaces/constraints_list.cfg:2: constraints must be a group { key = value; ... }" },
        { "tests/bad_spaces/bad_name.cfg",
          "tests/bad_spaces/bad_name.cfg:1: the space needs name = \"...\"; (letters, digits, '-', '_', '.'; "
          "at most 95 characters)" },
        { "tests/bad_spaces/include.cfg",
          "tests/bad_spaces/include.cfg:2: @include is not allowed in a space file; put every setting in the "
          "one file (it identifies the sweep)" },
        { "tests/bad_spaces/step_policy.cfg",
          "tests/bad_spaces/step_policy.cfg:2: lr_policy = \"step\" needs step_epochs = <epochs between drops>" },
        { "tests/bad_spaces/clip_norm.cfg",
          "tests/bad_spaces/clip_norm.cfg:3: clip_norm = -1 is out of range; expected 0 to 1000000" },
        { "tests/bad_spaces/replicates_zero.cfg",
          "tests/bad_spaces/replicates_zero.cfg:4: replicates = 0 is out of range; expected 1 to 64" },
        { "tests/bad_spaces/replicates_range.cfg",
          "tests/bad_spaces/replicates_range.cfg:4: replicates = 65 is out of range; expected 1 to 64" },
        { "tests/bad_spaces/replicates_float.cfg",
          "tests/bad_spaces/replicates_float.cfg:4: replicates must be an integer" },
        { "tests/bad_spaces/replicates_str.cfg",
          "tests/bad_spaces/replicates_str.cfg:4: replicates must be an integer" },
        { "tests/bad_spaces/syntax_string.cfg", /* as bad_nets/syntax_string.cfg */
          "tests/bad_spaces/syntax_string.cfg:3: syntax error; expected settings 'key = value;', groups { ... } and "
          "lists ( ..., ... ) as in docs/space-format.md" },
        { "tests/bad_spaces/syntax.cfg",
          "tests/bad_spaces/syntax.cfg:4: syntax error; expected settings 'key = value;', groups { ... } and "
          "lists ( ..., ... ) as in docs/space-format.md" },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(bad); i++) {
        struct dse_space sp;
        struct dse_err err = { 0 };
        char buf[600];
        CHECK_INT_EQ(dse_space_load(bad[i].path, &sp, &err), DSE_ERR_CONFIG);
        CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), bad[i].msg);
    }
    /* pools against fires: refused when the space is read (so by count, generate and sweep
     * alike), at the line of pools, or of fires where pools keeps its default; with several
     * fires values, every one is checked */
    static const struct { const char *text, *msg; } cross[] = {
        { "name = \"x\";\nmacro = {\n  fires = 4;\n  pools = [\"conv1\", \"fire8\"];\n};\n",
          ":4: pools names a Fire module past the last one (fire5)" },
        { "name = \"x\";\nmacro = {\n  fires = 4;\n};\n", ":3: pools names a Fire module past the last one (fire5)" },
        { "name = \"x\";\nmacro = {\n  fires = [8, 6];\n  pools = ([\"fire9\"], [\"fire4\"]);\n};\n",
          ":4: pools names a Fire module past the last one (fire7), with fires = 6" },
        { "name = \"x\";\nmacro = {\n  fires = [8, 6];\n  pools = ([\"fire7\"], [\"conv1\", \"fire4\"]);\n};\n", NULL },
    };
    char cfg[] = "/tmp/dse_test_cli_pools.XXXXXX";
    int fd = mkstemp(cfg);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    for (int i = 0; i < DSE_ARRAY_LEN(cross) && fd >= 0; i++) {
        struct dse_space sp;
        struct dse_err err = { 0 };
        char buf[600], want[600];
        CHECK_OK(dse_fs_write_atomic(cfg, cross[i].text, strlen(cross[i].text), NULL));
        enum dse_status st = dse_space_load(cfg, &sp, &err);
        if (!cross[i].msg) {
            CHECK_OK(st);
            if (!st) dse_space_free(&sp);
            continue;
        }
        snprintf(want, sizeof want, "%s%s", cfg, cross[i].msg);
        CHECK_INT_EQ(st, DSE_ERR_CONFIG);
        CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), want);
    }
    if (fd >= 0) unlink(cfg);
}

static int64_t params_of_mp(const struct dse_mp *mp, double *mib) {
    struct dse_net n;
    struct dse_cost_totals t;
    dse_net_init(&n, "x", 1, 1, 1);
    CHECK_OK(dse_mp_build(mp, &n, NULL));
    struct dse_cost_layer *c = calloc((size_t)n.n_layers, sizeof *c);
    CHECK_OK(dse_cost_net(&n, 1, c, &t, NULL));
    free(c);
    dse_net_deinit(&n);
    if (mib) *mib = (double)t.param_bytes / 1048576.0;
    return t.params;
}

/* Thesis Fig. 5.3 and 5.4 (model sizes in MiB at 4 bytes per parameter). */
/* The longest canonical text (every int at its limit, 61 pool positions) fits. */
void test_space_canonical_limits(void) {
    struct dse_mp mp = dse_mp_squeezenet_v10();
    char buf[2048], id[DSE_ID_SIZE];
    mp.base_e = mp.incr_e = mp.input_c = mp.input_h = mp.input_w = mp.classes = DSE_DIM_MAX;
    mp.conv1_filters = mp.conv1_kernel = mp.conv1_stride = mp.conv1_pad = DSE_DIM_MAX;
    mp.fires = DSE_MP_MAX_FIRES, mp.freq = DSE_MP_MAX_FIRES;
    mp.pools = ~(uint64_t)0 & ~(uint64_t)2;
    int n = dse_space_canonical(&mp, buf, sizeof buf);
    CHECK(n > 700 && n < 1536);
    CHECK_INT_EQ((int)strlen(buf), n);
    dse_space_id(&mp, id);
    CHECK_INT_EQ((int)strlen(id), 17);
}

void test_space_thesis(void) {
    struct dse_space sr, pct;
    struct dse_mp mp;
    double mib;
    CHECK_OK(dse_space_load("spaces/squeeze_ratio.cfg", &sr, NULL));
    CHECK_OK(dse_space_load("spaces/pct3x3.cfg", &pct, NULL));
    CHECK_INT_EQ(sr.count, 8);
    CHECK_INT_EQ(pct.count, 9);
    dse_space_candidate(&sr, 0, &mp); /* SR 0.125: SqueezeNet v1.0 itself, 4.8 MB in Fig. 5.3 */
    CHECK_NEAR(mp.sr, 0.125, 1e-12);
    CHECK_INT_EQ(params_of_mp(&mp, &mib), 1248424);
    CHECK_NEAR(round(mib * 10) / 10, 4.8, 1e-9);
    dse_space_candidate(&sr, 5, &mp); /* SR 0.75: ~19 MB in Fig. 5.3; 18.47 MiB here */
    CHECK_NEAR(mp.sr, 0.75, 1e-12);
    params_of_mp(&mp, &mib);
    CHECK_NEAR(mib, 19.0, 0.03);
    dse_space_candidate(&sr, 7, &mp); /* SR 1.0: ~24 MB */
    params_of_mp(&mp, &mib);
    CHECK_NEAR(round(mib), 24.0, 1e-9);
    /* SR 0.5 with pct3x3 50% is the ~13 MB model common to Fig. 5.3 and 5.4: the same
     * candidate (the same id) in both spaces. */
    struct dse_mp a, b;
    char ida[DSE_ID_SIZE], idb[DSE_ID_SIZE];
    dse_space_candidate(&sr, 3, &a);
    dse_space_candidate(&pct, 4, &b);
    CHECK_NEAR(b.pct3x3, 0.5, 1e-12);
    dse_space_id(&a, ida);
    dse_space_id(&b, idb);
    CHECK_STR_EQ(ida, idb);
    params_of_mp(&a, &mib);
    CHECK_NEAR(mib, 13.0, 0.01);
    /* ids are stable: pinned for SqueezeNet v1.0's metaparameters */
    struct dse_mp v10 = dse_mp_squeezenet_v10();
    dse_space_id(&v10, ida);
    dse_space_candidate(&sr, 0, &mp);
    dse_space_id(&mp, idb);
    CHECK_STR_EQ(ida, idb);
    CHECK_STR_EQ(ida, "cdd6b97fa682bcf4a");
    dse_space_free(&sr);
    dse_space_free(&pct);
}

/* A space's dataset is what --data takes (issue #15): a name in the engine's one spelling
 * (either spelling in the file), or a path relative to the space file's folder, which a
 * sweep's copy DIR/space.cfg must load without. */
static enum dse_status load_dataset(const char *dir, const char *file, const char *dataset, struct dse_space *sp,
                                    struct dse_err *err) {
    char path[256], text[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(text, sizeof text, "name = \"d\";\nmetaparams = { sr = 0.5; };\ntrain = {\n  dataset = \"%s\";\n};\n",
             dataset);
    write_text(path, text);
    static char keep[256]; /* sp->path borrows it */
    snprintf(keep, sizeof keep, "%s", path);
    return dse_space_load(keep, sp, err);
}

void test_space_dataset(void) {
    static const struct { const char *given, *want; } names[] = {
        { "cifar10", "cifar-10" }, { "cifar-10", "cifar-10" }, { "CIFAR100", "cifar-100" },
        { "Fashion-MNIST", "fashion-mnist" }, { "mnist", "mnist" },
    };
    const char *dir = tmpdir();
    char want[512], sub[256], buf[600];
    struct dse_space sp;
    struct dse_err err = { 0 };
    CHECK(dir != NULL);
    if (!dir) return;
    for (int i = 0; i < DSE_ARRAY_LEN(names); i++) {
        CHECK_OK(load_dataset(dir, "s.cfg", names[i].given, &sp, &err));
        CHECK_STR_EQ(sp.dataset, names[i].want);
        CHECK_INT_EQ(sp.dataset_line, 4);
        dse_space_free(&sp);
    }
    /* paths join the space file's folder, whatever the working directory */
    CHECK_OK(load_dataset(dir, "s.cfg", "data/imgs.pack", &sp, &err));
    snprintf(want, sizeof want, "%s/data/imgs.pack", dir);
    CHECK_STR_EQ(sp.dataset, want);
    dse_space_free(&sp);
    CHECK_OK(load_dataset(dir, "s.cfg", "/abs/cifar-10-batches-bin", &sp, &err));
    CHECK_STR_EQ(sp.dataset, "/abs/cifar-10-batches-bin");
    dse_space_free(&sp);
    CHECK_OK(dse_space_load("tests/spaces/data_path.cfg", &sp, &err));
    CHECK_STR_EQ(sp.dataset, "tests/spaces/../bad_data/rgb_2classes");
    dse_space_free(&sp);
    /* a bare word is a folder beside the file if there is one, else a misspelt name */
    snprintf(sub, sizeof sub, "%s/mydata", dir);
    CHECK(mkdir(sub, 0700) == 0);
    CHECK_OK(load_dataset(dir, "s.cfg", "mydata", &sp, &err));
    CHECK_STR_EQ(sp.dataset, sub);
    dse_space_free(&sp);
    CHECK(rmdir(sub) == 0);
    CHECK_INT_EQ(load_dataset(dir, "s.cfg", "mydata", &sp, &err), DSE_ERR_CONFIG);
    snprintf(want, sizeof want, "%s/s.cfg:4: dataset = \"mydata\" names no dataset; expected fashion-mnist, mnist, "
             "cifar-10, cifar-100, or a path relative to the space file (an IDX or CIFAR folder, an image pack or "
             "folder; \"./mydata\" for a folder of that name)", dir);
    CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), want);
    CHECK_INT_EQ(load_dataset(dir, "space.cfg", "mydata", &sp, &err), DSE_ERR_CONFIG);
    snprintf(want, sizeof want, "%s/sweep.json", dir); /* beside a sweep's manifest, space.cfg is its copy */
    write_text(want, "{}");
    CHECK_OK(load_dataset(dir, "space.cfg", "mydata", &sp, &err));
    dse_space_free(&sp);
    CHECK_INT_EQ(load_dataset(dir, "s.cfg", "cifar1O", &sp, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "dataset = \"cifar1O\" names no dataset (did you mean \"cifar-10\"?); expected "
                          "fashion-mnist, mnist, cifar-10, cifar-100, or a path") == err.msg);
    CHECK_INT_EQ(load_dataset(dir, "s.cfg", "fmnist", &sp, &err), DSE_ERR_CONFIG); /* issue #31: not "mnist" */
    CHECK(strstr(err.msg, "dataset = \"fmnist\" names no dataset (did you mean \"fashion-mnist\"?)") == err.msg);
    CHECK_INT_EQ(load_dataset(dir, "s.cfg", "", &sp, &err), DSE_ERR_CONFIG);
    CHECK_INT_EQ(err.line, 4);
    /* a path that is not there yet (a pack made later, a sweep's copy far from its data) loads */
    CHECK_OK(load_dataset(dir, "space.cfg", "./synth227", &sp, &err));
    dse_space_free(&sp);
    CHECK_OK(load_dataset(dir, "space.cfg", "imagenet-s260.pack", &sp, &err));
    dse_space_free(&sp);
    snprintf(want, sizeof want, "rm -rf '%s'", dir);
    CHECK(system(want) == 0);
}

void test_space_sample(void) {
    const char *dir = tmpdir();
    char path[256];
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(path, sizeof path, "%s/big.cfg", dir);
    write_text(path, "name = \"big\";\n"
                     "metaparams = { base_e = { start = 16; stop = 256; factor = 2; };\n"
                     "  incr_e = [0, 32, 64, 128]; freq = [1, 2, 4]; pct3x3 = { start = 0.1; stop = 0.9; step = 0.1; };\n"
                     "  sr = { start = 0.125; stop = 1.0; step = 0.125; }; bypass = [\"none\", \"simple\", \"complex\"]; };\n"
                     "sample = 25; seed = 7;\n");
    struct dse_space s;
    uint64_t *a = NULL, *b = NULL, na = 0, nb = 0;
    CHECK_OK(dse_space_load(path, &s, NULL));
    CHECK_INT_EQ(s.axes[DSE_AX_BASE_E].n, 5);   /* 16 32 64 128 256 */
    CHECK_INT_EQ(s.axes[DSE_AX_PCT3X3].n, 9);   /* 0.1 .. 0.9 */
    CHECK_INT_EQ(s.count, 5 * 4 * 3 * 9 * 8 * 3);
    CHECK_OK(dse_space_indices(&s, 1000000, &a, &na, NULL));
    CHECK_OK(dse_space_indices(&s, 1000000, &b, &nb, NULL));
    CHECK_INT_EQ(na, 25);
    for (uint64_t i = 0; i < na; i++) {
        CHECK(a[i] == b[i]);                   /* same seed, same draw */
        CHECK(a[i] < s.count);
        if (i) CHECK(a[i] > a[i - 1]);         /* sorted and distinct */
    }
    s.seed = 8;
    free(b);
    CHECK_OK(dse_space_indices(&s, 1000000, &b, &nb, NULL));
    int differ = 0;
    for (uint64_t i = 0; i < na; i++) differ |= a[i] != b[i];
    CHECK(differ);
    /* the grid order: the last axis varies fastest */
    struct dse_mp mp;
    dse_space_candidate(&s, 1, &mp);
    CHECK_INT_EQ(mp.bypass, DSE_BYPASS_SIMPLE);
    CHECK_INT_EQ(mp.base_e, 16);
    dse_space_candidate(&s, s.count - 1, &mp);
    CHECK_INT_EQ(mp.base_e, 256);
    CHECK_NEAR(mp.sr, 1.0, 1e-12);
    /* without a sample, a grid larger than the limit is refused with advice */
    s.sample = 0;
    struct dse_err err = { 0 };
    free(b);
    CHECK_INT_EQ(dse_space_indices(&s, 1000, &b, &nb, &err), DSE_ERR_CONFIG);
    CHECK(b == NULL);
    CHECK(strstr(err.msg, "draw some with sample = N") != NULL);
    free(a);
    free(b);
    dse_space_free(&s);
    unlink(path);
    rmdir(dir);
}

/* dse generate --id: every candidate found at its own grid index, in the grid and, past
 * the search limit, in the sample; malformed and unknown ids refused. */
/* A key added to mp.def after ids were published (fire_dropout, IF_SET): a space that
 * leaves it at its default keeps its ids and records; one that varies it gets the layers,
 * a new id per value, and the key in each record. */
void test_space_fire_dropout(void) {
    const char *dir = tmpdir();
    char with[256], without[256], canon[1536], ida[DSE_ID_SIZE], idb[DSE_ID_SIZE], head[8192];
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(with, sizeof with, "%s/with.cfg", dir);
    snprintf(without, sizeof without, "%s/without.cfg", dir);
    write_text(without, "name = \"fd\";\nmacro = { input_c = 1; input_h = 28; input_w = 28; classes = 10;\n"
                        "  conv1_kernel = 3; conv1_stride = 1; conv1_pad = 1; };\n");
    write_text(with, "name = \"fd\";\nmacro = { input_c = 1; input_h = 28; input_w = 28; classes = 10;\n"
                     "  conv1_kernel = 3; conv1_stride = 1; conv1_pad = 1;\n  fire_dropout = [0.0, 0.25]; };\n");
    struct dse_space a, b;
    struct dse_mp mp;
    struct dse_net n;
    int len = 0, pruned = 0;
    CHECK_OK(dse_space_load(without, &a, NULL));
    CHECK_OK(dse_space_load(with, &b, NULL));
    CHECK_INT_EQ(a.count, 1);
    CHECK_INT_EQ(b.count, 2);
    CHECK_INT_EQ(b.axes[DSE_AX_FIRE_DROPOUT].line, 4);
    CHECK_STR_EQ(dse_axis_name(DSE_AX_FIRE_DROPOUT), "fire_dropout");
    /* fire_dropout = 0 is the candidate of the space that never names it: same id */
    dse_space_candidate(&a, 0, &mp);
    dse_space_id(&mp, ida);
    dse_space_canonical(&mp, canon, sizeof canon);
    CHECK(strstr(canon, "fire_dropout") == NULL);
    dse_space_candidate(&b, 0, &mp);
    CHECK(mp.fire_dropout == 0.0);
    dse_space_id(&mp, idb);
    CHECK_STR_EQ(ida, idb);
    /* 0.25 is another candidate: its canonical text ends with the key, its id differs */
    dse_space_candidate(&b, 1, &mp);
    CHECK(mp.fire_dropout == 0.25);
    dse_space_canonical(&mp, canon, sizeof canon);
    CHECK(strlen(canon) > 31 && !strcmp(canon + strlen(canon) - 31, "\nfire_dropout=3fd0000000000000\n"));
    dse_space_id(&mp, idb);
    CHECK(strcmp(ida, idb) != 0);
    dse_net_init(&n, "x", 1, 1, 1);
    CHECK_OK(dse_space_build(&b, &mp, &n, NULL));
    int d = dse_net_find(&n, "drop_fire2");
    CHECK(d >= 0 && d == dse_net_find(&n, "fire2/concat") + 1);
    if (d >= 0) CHECK_NEAR(n.layers[d].dropout_ratio, 0.25, 1e-7);
    CHECK(dse_net_find(&n, "drop_fire9") >= 0);
    dse_net_deinit(&n);
    /* The record: no fire_dropout where the space does not name it; the key last otherwise */
    CHECK_OK(dse_sweep_candidate_head(&a, 0, 0, head, sizeof head, &len, &pruned, NULL));
    CHECK(strstr(head, "fire_dropout") == NULL);
    CHECK(strstr(head, "\"fires\": 8, \"pools\": \"conv1,fire4,fire8\", \"dropout\": 0.5\n  },\n") != NULL);
    CHECK_OK(dse_sweep_candidate_head(&b, 0, 0, head, sizeof head, &len, &pruned, NULL));
    CHECK(strstr(head, "\"dropout\": 0.5, \"fire_dropout\": 0.0\n  },\n") != NULL); /* a real, as 0.0 */
    CHECK_OK(dse_sweep_candidate_head(&b, 1, 0, head, sizeof head, &len, &pruned, NULL));
    CHECK(strstr(head, "\"dropout\": 0.5, \"fire_dropout\": 0.25\n  },\n") != NULL);
    dse_space_free(&a);
    dse_space_free(&b);
    unlink(with);
    unlink(without);
    rmdir(dir);
}

/* docs/space-format.md's key table has a row for every row of metaparams/mp.def, in
 * the same order (it is the order of grid indices and canonical text). */
void test_space_doc_keys(void) {
    char *doc = NULL;
    CHECK_OK(dse_fs_read("docs/space-format.md", &doc, NULL, NULL));
    if (!doc) return;
    const char *prev = doc;
    for (int k = 0; k < DSE_MP_COUNT; k++) {
        char cell[64];
        snprintf(cell, sizeof cell, "`%s`", dse_mp_info[k].key);
        const char *at = NULL;
        for (const char *line = doc; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
            const char *end = strchr(line, '\n');
            const char *hit = strstr(line, cell);
            if (!strncmp(line, "| `", 3) && hit && (!end || hit < end)) {
                at = hit;
                break;
            }
        }
        CHECK(at != NULL && at >= prev);
        if (!at) printf("  docs/space-format.md: no table row for %s\n", dse_mp_info[k].key);
        if (at) prev = at;
    }
    free(doc);
}

void test_space_find_id(void) {
    static const struct { const char *id; int ok; } forms[] = {
        { "c0123456789abcdef", 1 }, { "cffffffffffffffff", 1 },
        { "c0123456789abcde", 0 },  { "c0123456789abcdef0", 0 }, { "C0123456789abcdef", 0 },
        { "c0123456789ABCDEF", 0 }, { "x0123456789abcdef", 0 },  { "c0123456789abcdeg", 0 }, { "", 0 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(forms); i++) CHECK_INT_EQ(dse_space_id_valid(forms[i].id), forms[i].ok);
    CHECK_INT_EQ(dse_space_id_valid(NULL), 0);
    /* a replicate's id (dse_space_rep_id): the candidate id and r1 to r63; only dse export takes it */
    static const struct { const char *id; int ok; } reps[] = {
        { "c0123456789abcdef", 1 },   { "c0123456789abcdefr1", 1 }, { "c0123456789abcdefr63", 1 },
        { "c0123456789abcdefr0", 0 }, { "c0123456789abcdefr64", 0 }, { "c0123456789abcdefr01", 0 },
        { "c0123456789abcdefr", 0 },  { "c0123456789abcdefx1", 0 }, { "c0123456789abcdefr1x", 0 },
        { "c0123456789abcder1", 0 },  { "c0123456789abcdefr100", 0 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(reps); i++) CHECK_INT_EQ(dse_space_rep_id_valid(reps[i].id), reps[i].ok);
    CHECK_INT_EQ(dse_space_id_valid("c0123456789abcdefr1"), 0); /* --id of dse generate: the candidate's only */
    struct dse_space s;
    struct dse_err err = { 0 };
    struct dse_mp mp;
    char id[DSE_ID_SIZE];
    uint64_t k = 0;
    CHECK_OK(dse_space_load("spaces/pct3x3.cfg", &s, NULL));
    for (uint64_t i = 0; i < s.count; i++) {
        dse_space_candidate(&s, i, &mp);
        dse_space_id(&mp, id);
        CHECK_OK(dse_space_find_id(&s, id, DSE_SPACE_FIND_MAX, &k, &err));
        CHECK_INT_EQ(k, i);
    }
    CHECK_INT_EQ(dse_space_find_id(&s, "c0123456789abcdef", DSE_SPACE_FIND_MAX, &k, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "no candidate of this space has id c0123456789abcdef (all 9 searched); 'dse report "
                          "DIR' lists a sweep's ids beside their grid indices");
    /* over the limit, without a sample: refused with advice */
    CHECK_INT_EQ(dse_space_find_id(&s, id, 4, &k, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "too many to search") && strstr(err.msg, "give --index K"));
    /* over the limit, with a sample: the sample is searched, candidates outside it are not */
    s.sample = 3;
    uint64_t *idx = NULL, n = 0;
    CHECK_OK(dse_space_indices(&s, 100, &idx, &n, NULL));
    CHECK_INT_EQ(n, 3);
    for (uint64_t i = 0; i < n; i++) {
        dse_space_candidate(&s, idx[i], &mp);
        dse_space_id(&mp, id);
        CHECK_OK(dse_space_find_id(&s, id, 4, &k, &err));
        CHECK_INT_EQ(k, idx[i]);
    }
    uint64_t out = 0;
    while (out < s.count && (out == idx[0] || out == idx[1] || out == idx[2])) out++;
    dse_space_candidate(&s, out, &mp);
    dse_space_id(&mp, id);
    CHECK_INT_EQ(dse_space_find_id(&s, id, 4, &k, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "sample has id") != NULL);
    CHECK_OK(dse_space_find_id(&s, id, DSE_SPACE_FIND_MAX, &k, &err)); /* within the limit: the whole grid */
    CHECK_INT_EQ(k, out);
    free(idx);
    dse_space_free(&s);
}

/* Every candidate of every shipped space, written as prototxt and as .cfg, reads back
 * to the same costs. */
void test_space_roundtrip(void) {
    static const char *spaces[] = { "spaces/squeeze_ratio.cfg", "spaces/pct3x3.cfg", "spaces/bypass.cfg",
                                    "spaces/fmnist_squeeze_ratio.cfg", "spaces/fmnist_pct3x3.cfg",
                                    "spaces/fmnist_bypass.cfg" };
    int total = 0;
    for (int i = 0; i < DSE_ARRAY_LEN(spaces); i++) {
        struct dse_space s;
        struct dse_err err = { 0 };
        char ebuf[600];
        if (dse_space_load(spaces[i], &s, &err)) {
            CHECK(0);
            fprintf(stderr, "  %s\n", dse_err_format(&err, ebuf, sizeof ebuf));
            continue;
        }
        struct dse_net net, back;
        dse_net_init(&net, "x", 1, 1, 1);
        for (uint64_t k = 0; k < s.count; k++) {
            struct dse_mp mp;
            dse_space_candidate(&s, k, &mp);
            CHECK_OK(dse_space_build(&s, &mp, &net, &err));
            for (int fmt = 0; fmt < 2; fmt++) {
                char *buf = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&buf, &len);
                CHECK_OK(fmt ? dse_prototxt_write(f, &net, NULL) : dse_netcfg_write(f, &net, NULL));
                fclose(f);
                enum dse_status st;
                if (fmt) {
                    st = dse_prototxt_parse(buf, len, "mem.prototxt", NULL, &back, &err);
                } else {
                    char path[] = "/tmp/dse_rt_XXXXXX";
                    int fd = mkstemp(path);
                    CHECK(fd >= 0);
                    if (fd >= 0) {
                        CHECK(write(fd, buf, len) == (ssize_t)len);
                        close(fd);
                    }
                    st = dse_netcfg_load(path, NULL, &back, &err);
                    unlink(path);
                }
                CHECK_OK(st);
                if (!st) {
                    if (fmt == 0) check_same_net(&net, &back, spaces[i]);
                    struct dse_cost_layer *c1 = calloc((size_t)net.n_layers, sizeof *c1);
                    struct dse_cost_layer *c2 = calloc((size_t)back.n_layers, sizeof *c2);
                    struct dse_cost_totals t1, t2;
                    CHECK_OK(dse_cost_net(&net, 4, c1, &t1, NULL));
                    CHECK_OK(dse_cost_net(&back, 4, c2, &t2, NULL));
                    CHECK_INT_EQ(t2.params, t1.params);
                    CHECK_INT_EQ(t2.flops, t1.flops);
                    CHECK_INT_EQ(t2.activations, t1.activations);
                    free(c1);
                    free(c2);
                    dse_net_deinit(&back);
                } else {
                    fprintf(stderr, "  %s\n", dse_err_format(&err, ebuf, sizeof ebuf));
                }
                free(buf);
                total++;
            }
        }
        dse_net_deinit(&net);
        dse_space_free(&s);
    }
    CHECK_INT_EQ(total, 2 * (8 + 9 + 3 + 8 + 9 + 3));
}

static int count_files(const char *dir, const char *suffix) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    if (!d) return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && strstr(e->d_name, suffix)) n++;
    closedir(d);
    return n;
}

void test_sweep_dir(void) {
    const char *dir = tmpdir();
    char space[256], out[256], path[512], cands[300];
    struct dse_space s;
    struct dse_sweep_summary sum;
    struct dse_err err = { 0 };
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(space, sizeof space, "%s/space.cfg", dir);
    snprintf(out, sizeof out, "%s/sweep", dir);
    snprintf(cands, sizeof cands, "%s/candidates", out);
    write_text(space, "name = \"small\";\nmetaparams = { sr = [0.125, 0.25, 0.5, 1.0]; };\n"
                      "constraints = { max_params = 3000000; };\n");
    CHECK_OK(dse_space_load(space, &s, NULL));
    CHECK_OK(dse_sweep_analytic(&s, out, NULL, &sum, &err));
    CHECK_INT_EQ(sum.candidates, 4);
    CHECK_INT_EQ(sum.pruned, 2); /* SR 0.5 (3.4M params) and 1.0 (6.3M) */
    CHECK_INT_EQ(count_files(cands, ".json"), 4);
    struct dse_mp mp;
    char id[DSE_ID_SIZE], *text = NULL;
    dse_space_candidate(&s, 3, &mp);
    dse_space_id(&mp, id);
    snprintf(path, sizeof path, "%s/%s.json", cands, id);
    CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
    if (text) {
        CHECK(strstr(text, "\"status\": \"pruned\"") != NULL);
        CHECK(strstr(text, "\"pruned_by\": \"max_params = 3000000 (params 6279016)\"") != NULL);
        CHECK(strstr(text, "\"sr\": 1.0,") != NULL); /* a real: 1.0, not 1 */
        CHECK(json_value(text) != NULL);
        free(text);
    }
    /* A candidate training has finished is left alone when the sweep runs again. */
    dse_space_candidate(&s, 0, &mp);
    dse_space_id(&mp, id);
    snprintf(path, sizeof path, "%s/%s.json", cands, id);
    write_text(path, "{\"id\": \"x\", \"status\": \"done\", \"top1\": 0.9}\n");
    char *manifest = NULL, *manifest2 = NULL;
    snprintf(path, sizeof path, "%s/sweep.json", out);
    CHECK_OK(dse_fs_read(path, &manifest, NULL, NULL));
    snprintf(path, sizeof path, "%s/%s.json", cands, id);
    CHECK_OK(dse_sweep_analytic(&s, out, NULL, &sum, &err));
    CHECK_INT_EQ(sum.skipped, 4); /* every file existed: none is replaced */
    snprintf(path, sizeof path, "%s/sweep.json", out);
    CHECK_OK(dse_fs_read(path, &manifest2, NULL, NULL));
    if (manifest && manifest2) CHECK_STR_EQ(manifest2, manifest); /* written once */
    free(manifest);
    free(manifest2);
    snprintf(path, sizeof path, "%s/%s.json", cands, id);
    CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
    if (text) {
        CHECK(strstr(text, "\"top1\": 0.9") != NULL);
        free(text);
    }
    /* Another space into the same directory is refused. */
    dse_space_free(&s);
    write_text(space, "name = \"other\";\nmetaparams = { sr = [0.125, 0.25]; };\n");
    CHECK_OK(dse_space_load(space, &s, NULL));
    CHECK_INT_EQ(dse_sweep_analytic(&s, out, NULL, &sum, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "holds a sweep of another space file") != NULL);
    dse_space_free(&s);
    /* A space with an infeasible candidate writes nothing. */
    char out2[300];
    snprintf(out2, sizeof out2, "%s/sweep2", dir);
    write_text(space, "name = \"infeasible\";\nmacro = { input_h = [227, 16]; input_w = 16; };\n");
    CHECK_OK(dse_space_load(space, &s, NULL));
    CHECK_INT_EQ(dse_sweep_analytic(&s, out2, NULL, &sum, &err), DSE_ERR_SHAPE);
    CHECK(strstr(err.msg, "candidate base_e=128 incr_e=128 freq=2 pct3x3=0.5 sr=0.125 bypass=none "
                          "input=3x227x16 fires=8: layer 'pool8' (maxpool)") != NULL);
    CHECK(access(out2, F_OK) != 0);
    dse_space_free(&s);
    /* no stray temporary files */
    CHECK_INT_EQ(count_files(cands, ".tmp"), 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}
