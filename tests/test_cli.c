/* test_cli.c: the dse/ module: network files agree with the networks built in C, every
 * bad network file gives its exact path:line message, and the reports are well formed.
 * Runs from the repository root (ctest sets the working directory). The design spaces'
 * cases are in test_cli_space.c, what both files share in cli_util.c; this one table
 * lists them all. */
#include "tests/cli_util.h"
#include "dse/exportcmd.h"
#include "tests/dsez_share.h"

void test_cfg_matches_c(void) {
    static const struct { const char *path; struct nin_opts o; } nins[] = {
        { "experiments/nin_local_global/nin.cfg",             { 3, 227, 384, 3, 1, 1000, 1 } },
        { "experiments/nin_local_global/nin_input4x.cfg",     { 12, 227, 384, 3, 1, 1000, 1 } },
        { "experiments/nin_local_global/nin_conv8_4x.cfg",    { 3, 227, 1536, 3, 1, 1000, 1 } },
        { "experiments/nin_local_global/nin_conv7_6x6.cfg",   { 3, 227, 384, 6, 2, 1000, 1 } },
        { "experiments/nin_local_global/nin_classes4000.cfg", { 3, 227, 384, 3, 1, 4000, 1 } },
        { "experiments/nin_local_global/nin_no_pool3.cfg",    { 3, 227, 384, 3, 1, 1000, 0 } },
        { "experiments/nin_local_global/nin_input454.cfg",    { 3, 454, 384, 3, 1, 1000, 1 } },
    };
    struct dse_net a, b;
    struct dse_err err = { 0 };
    char buf[400];
    for (int i = 0; i < DSE_ARRAY_LEN(nins); i++) {
        enum dse_status st = dse_netfile_load(nins[i].path, NULL, &a, &err);
        CHECK_OK(st);
        if (st) {
            fprintf(stderr, "  %s\n", dse_err_format(&err, buf, sizeof buf));
            continue;
        }
        build_nin(&b, &nins[i].o);
        check_same_net(&a, &b, nins[i].path);
        dse_net_deinit(&a);
        dse_net_deinit(&b);
    }
    static const struct { const char *path; int v11; enum dse_bypass bypass; } sqs[] = {
        { "experiments/squeezenet/squeezenet_v1.0.cfg",                0, DSE_BYPASS_NONE },
        { "experiments/squeezenet/squeezenet_v1.1.cfg",                1, DSE_BYPASS_NONE },
        { "experiments/squeezenet/squeezenet_v1.0_simple_bypass.cfg",  0, DSE_BYPASS_SIMPLE },
        { "experiments/squeezenet/squeezenet_v1.0_complex_bypass.cfg", 0, DSE_BYPASS_COMPLEX },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(sqs); i++) {
        enum dse_status st = dse_netfile_load(sqs[i].path, NULL, &a, &err);
        CHECK_OK(st);
        if (st) {
            fprintf(stderr, "  %s\n", dse_err_format(&err, buf, sizeof buf));
            continue;
        }
        build_squeezenet(&b, sqs[i].v11, sqs[i].bypass);
        check_same_net(&a, &b, sqs[i].path);
        dse_net_deinit(&a);
        dse_net_deinit(&b);
    }
}

/* Caffe files and our files describe the same SqueezeNets and NiN. */
void test_prototxt_matches_cfg(void) {
    static const struct { const char *pt, *cfg; int same_names; int64_t extra_flops; } pairs[] = {
        /* The released v1.0 train_val.prototxt gives conv10 pad 1 (a known quirk of the
         * release): 15x15 instead of Table 5.1's 13x13, same params, more FLOPs. */
        { "experiments/squeezenet/squeezenet_v1.0.prototxt", "experiments/squeezenet/squeezenet_v1.0.cfg",
          1, 2LL * 512 * 1000 * (15 * 15 - 13 * 13) },
        { "experiments/squeezenet/squeezenet_v1.1.prototxt", "experiments/squeezenet/squeezenet_v1.1.cfg",
          1, 0 },
        /* Model zoo names (cccp1, pool0...) vs the thesis's (conv2, pool3...): totals only. */
        { "experiments/nin_local_global/nin.prototxt", "experiments/nin_local_global/nin.cfg", 0, 0 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(pairs); i++) {
        const char *pairs_i[2] = { pairs[i].pt, pairs[i].cfg };
        struct dse_net p, c;
        struct dse_err err = { 0 };
        char buf[400];
        int before = check_failures;
        if (dse_netfile_load(pairs_i[0], NULL, &p, &err)) {
            CHECK(0);
            fprintf(stderr, "  %s\n", dse_err_format(&err, buf, sizeof buf));
            continue;
        }
        if (dse_netfile_load(pairs_i[1], NULL, &c, &err)) {
            CHECK(0);
            fprintf(stderr, "  %s\n", dse_err_format(&err, buf, sizeof buf));
            dse_net_deinit(&p);
            continue;
        }
        struct dse_cost_layer *lp = calloc((size_t)p.n_layers, sizeof *lp);
        struct dse_cost_layer *lc = calloc((size_t)c.n_layers, sizeof *lc);
        struct dse_cost_totals tp, tc;
        CHECK_OK(dse_cost_net(&p, 1, lp, &tp, NULL));
        CHECK_OK(dse_cost_net(&c, 1, lc, &tc, NULL));
        CHECK_INT_EQ(tp.params, tc.params);
        CHECK_INT_EQ(tp.flops, tc.flops + pairs[i].extra_flops);
        CHECK_INT_EQ(p.layers[p.n_layers - 1].out_c, c.layers[c.n_layers - 1].out_c);
        /* same report rows: Caffe's "fire2/..." layers group into fire2 */
        struct dse_cost_row *rp = calloc((size_t)p.n_layers, sizeof *rp);
        struct dse_cost_row *rc = calloc((size_t)c.n_layers, sizeof *rc);
        int np = dse_cost_rows(&p, lp, 0, rp), nc = dse_cost_rows(&c, lc, 0, rc);
        CHECK(np > 10);
        for (int a = 0; a < nc && pairs[i].same_names; a++)
            for (int b = 0; b < np; b++)
                if (!strcmp(rc[a].name, rp[b].name) && rc[a].cost.flops &&
                    strcmp(rc[a].name, "conv10")) {
                    CHECK_INT_EQ(rp[b].cost.params, rc[a].cost.params);
                    CHECK_INT_EQ(rp[b].out_h, rc[a].out_h);
                    CHECK_STR_EQ(rp[b].type, rc[a].type);
                }
        if (check_failures > before) fprintf(stderr, "  (%s vs %s)\n", pairs_i[0], pairs_i[1]);
        free(lp), free(lc), free(rp), free(rc);
        dse_net_deinit(&p);
        dse_net_deinit(&c);
    }
}

/* Error text is part of the contract: each bad file and its exact message. */
void test_bad_nets(void) {
    static const struct { const char *path, *msg; enum dse_status code; } bad[] = {
        { "tests/bad_nets/unknown_key.cfg",
          "tests/bad_nets/unknown_key.cfg:5: unknown setting 'strid' in conv layer 'conv1' (did you mean 'stride'?)",
          DSE_ERR_CONFIG },
        { "tests/bad_nets/unknown_type.cfg",
          "tests/bad_nets/unknown_type.cfg:5: layer 'pool1': unknown type 'maxpol' (did you mean 'maxpool'?)",
          DSE_ERR_CONFIG },
        { "tests/bad_nets/syntax.cfg",
          "tests/bad_nets/syntax.cfg:4: syntax error; expected settings 'key = value;', groups { ... } "
          "and lists ( ..., ... ) as in docs/network-format.md",
          DSE_ERR_CONFIG },
        { "tests/bad_nets/syntax_string.cfg", /* libconfig 1.5 leaks the string: netfile/cfgfile.c's suppression */
          "tests/bad_nets/syntax_string.cfg:4: syntax error; expected settings 'key = value;', groups { ... } "
          "and lists ( ..., ... ) as in docs/network-format.md",
          DSE_ERR_CONFIG },
        { "tests/bad_nets/bad_input_ref.cfg",
          "tests/bad_nets/bad_input_ref.cfg:6: input 'conv3' is not an earlier layer; inputs name layers "
          "above this one (or \"data\" for the network input)",
          DSE_ERR_CONFIG },
        { "tests/bad_nets/bypass_mismatch.cfg",
          "tests/bad_nets/bypass_mismatch.cfg:4: fire 'fire2': simple bypass needs input channels (96) == "
          "output channels (128); use bypass = \"complex\" for a 1x1-conv bypass",
          DSE_ERR_CONFIG },
        { "tests/bad_nets/kernel_too_big.cfg",
          "tests/bad_nets/kernel_too_big.cfg:6: layer 'conv2' (conv): kernel 9x9 (dilated) is larger than "
          "its padded input 7x7",
          DSE_ERR_SHAPE },
        { "tests/bad_nets/missing_filters.cfg",
          "tests/bad_nets/missing_filters.cfg:4: conv 'conv1' needs filters = <count>", DSE_ERR_CONFIG },
        { "tests/bad_nets/not_integer.cfg",
          "tests/bad_nets/not_integer.cfg:4: filters must be an integer", DSE_ERR_CONFIG },
        { "tests/bad_nets/top_level_key.cfg",
          "tests/bad_nets/top_level_key.cfg:3: unknown setting 'layer' in the network file (did you mean 'layers'?)",
          DSE_ERR_CONFIG },
        { "tests/bad_nets/duplicate_name.cfg",
          "tests/bad_nets/duplicate_name.cfg:5: layer name 'conv1' is used twice", DSE_ERR_CONFIG },
        { "tests/bad_nets/duplicate_fire.cfg",
          "tests/bad_nets/duplicate_fire.cfg:5: layer name 'fire2' is used twice", DSE_ERR_CONFIG },
        { "tests/bad_nets/long_name.cfg",
          "tests/bad_nets/long_name.cfg:2: network name 'squeezenet_xxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is longer "
          "than 95 characters", DSE_ERR_CONFIG },
        { "tests/bad_nets/data_name.cfg",
          "tests/bad_nets/data_name.cfg:4: layer name 'data' names the network input; choose another", DSE_ERR_CONFIG },
        { "tests/bad_nets/global_kernel.cfg",
          "tests/bad_nets/global_kernel.cfg:4: avgpool 'pool': global pooling takes no kernel, stride or "
          "pad (as in Caffe)", DSE_ERR_CONFIG },
        { "tests/bad_nets/bad_round.cfg",
          "tests/bad_nets/bad_round.cfg:5: round = \"up\"; expected \"ceil\" (Caffe's default) or \"floor\"",
          DSE_ERR_CONFIG },
        { "tests/bad_nets/no_input.cfg",
          "tests/bad_nets/no_input.cfg: missing input = { channels = C; height = H; width = W; };",
          DSE_ERR_CONFIG },
        { "tests/bad_nets/missing.cfg",
          "tests/bad_nets/missing.cfg: cannot open: No such file or directory", DSE_ERR_IO },
        { "tests/bad_nets/not_a_network.txt",
          "tests/bad_nets/not_a_network.txt: unknown network file type; expected a .cfg (dse network), .prototxt "
          "(Caffe) or .onnx file", DSE_ERR_CONFIG },
        /* libconfig 1.5 would end the process on a folder ("input in flex scanner failed") */
        { "tests/bad_nets/directory.cfg",
          "tests/bad_nets/directory.cfg: is a directory; expected a network file", DSE_ERR_IO },
        { "tests/bad_nets/include_directory.cfg",
          "tests/bad_nets/include_directory.cfg:3: @include \"tests/bad_nets/directory.cfg\": is a directory; "
          "expected a network file", DSE_ERR_CONFIG },
        /* libconfig 1.5 reads an integer without L into an int: 4294967304 would be 8 */
        { "tests/bad_nets/wrap_filters.cfg",
          "tests/bad_nets/wrap_filters.cfg:4: filters = 4294967304 does not fit in 32 bits (-2147483648 to "
          "2147483647), and libconfig 1.5 would read it wrapped; write 4294967304L for a 64-bit integer",
          DSE_ERR_CONFIG },
        { "tests/bad_nets/wrap_hex.cfg", /* would be -1 */
          "tests/bad_nets/wrap_hex.cfg:4: filters = 0xFFFFFFFF does not fit in 32 bits (-2147483648 to "
          "2147483647), and libconfig 1.5 would read it wrapped; write 0xFFFFFFFFL for a 64-bit integer",
          DSE_ERR_CONFIG },
        { "tests/bad_nets/wrap_int64.cfg", /* would saturate */
          "tests/bad_nets/wrap_int64.cfg:4: filters = 99999999999999999999L does not fit in 64 bits "
          "(-9223372036854775808 to 9223372036854775807)", DSE_ERR_CONFIG },
        { "tests/bad_nets/include_wrap.cfg",
          "tests/bad_nets/include_wrap.cfg:2: @include \"tests/bad_nets/wrap_input.inc\", line 1: height = "
          "4294967304 does not fit in 32 bits (-2147483648 to 2147483647), and libconfig 1.5 would read it "
          "wrapped; write 4294967304L for a 64-bit integer", DSE_ERR_CONFIG },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(bad); i++) {
        struct dse_net n;
        struct dse_err err = { 0 };
        char buf[400];
        CHECK_INT_EQ(dse_netfile_load(bad[i].path, NULL, &n, &err), bad[i].code);
        CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), bad[i].msg);
        CHECK(n.layers == NULL); /* nothing to free after a failure */
    }
}

void test_input_override(void) {
    struct dse_net a, b;
    struct dse_input_shape ov = { .c = 0, .h = 454, .w = 454 };
    CHECK_OK(dse_netfile_load("experiments/nin_local_global/nin.cfg", &ov, &a, NULL));
    CHECK_OK(dse_netfile_load("experiments/nin_local_global/nin_input454.cfg", NULL, &b, NULL));
    check_same_net(&a, &b, "nin.cfg --input 3,454,454 vs nin_input454.cfg");
    dse_net_deinit(&a);
    dse_net_deinit(&b);
}

static char *report(const char *path, const char *path2, enum dse_format fmt, int64_t batch, int expand) {
    struct dse_net a, b;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_OK(dse_netfile_load(path, NULL, &a, NULL));
    if (path2) {
        CHECK_OK(dse_netfile_load(path2, NULL, &b, NULL));
        CHECK_OK(dse_report_diff(f, path, &a, path2, &b, batch, expand, fmt, NULL));
        dse_net_deinit(&b);
    } else {
        CHECK_OK(dse_report_analyze(f, path, &a, batch, expand, fmt, NULL));
    }
    fclose(f);
    dse_net_deinit(&a);
    return buf;
}

void test_json(void) {
    char *s = report("experiments/squeezenet/squeezenet_v1.0.cfg", NULL, DSE_FORMAT_JSON, 1, 0);
    const char *end = json_value(s);
    CHECK(end != NULL && *json_ws(end) == '\0');
    /* the stable keys of docs/json.md */
    CHECK(strstr(s, "\"network\": \"squeezenet_v1.0\"") != NULL);
    CHECK(strstr(s, "\"batch\": 1,") != NULL);
    CHECK(strstr(s, "{\"name\": \"fire2\", \"type\": \"fire\", \"out_c\": 128, \"out_h\": 55, "
                    "\"out_w\": 55, \"params\": 11920,") != NULL);
    CHECK(strstr(s, "\"totals\": {\"params\": 1248424,") != NULL);
    CHECK(strstr(s, "\"param_bytes\": 4993696,") != NULL);
    free(s);
    s = report("experiments/nin_local_global/nin.cfg", "experiments/nin_local_global/nin_no_pool3.cfg",
               DSE_FORMAT_JSON, 1024, 0);
    end = json_value(s);
    CHECK(end != NULL && *json_ws(end) == '\0');
    CHECK(strstr(s, "\"reach\": \"global\"") != NULL);
    CHECK(strstr(s, "{\"change\": \"removed\", \"base\": {\"name\": \"pool3\"") != NULL);
    free(s);
    CHECK(json_value("{\"a\": [1, 2,]}") == NULL); /* the checker itself can fail */
}

/* A network's name is bytes from a file: the JSON report mends invalid UTF-8 (U+FFFD), so
 * the strict reader, which refuses it, reads the report. */
void test_json_utf8(void) {
    char dir[64], path[128];
    strcpy(dir, "/tmp/dse_test_cli_XXXXXX");
    DSE_ASSERT(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/net.cfg", dir);
    FILE *f = fopen(path, "w");
    DSE_ASSERT(f);
    fputs("name = \"n\xff\xc3(\xed\xa0\x80\";\ninput = { channels = 3; height = 8; width = 8; };\n"
          "layers = ( { name = \"c\xfe\"; type = \"conv\"; filters = 4; kernel = 1; } );\n", f);
    fclose(f);
    char *s = report(path, NULL, DSE_FORMAT_JSON, 1, 0);
    struct dse_json_doc *d = NULL;
    struct dse_err err = { 0 };
    CHECK_OK(dse_json_parse(s, strlen(s), "report.json", &d, &err));
    if (!d) fprintf(stderr, "  %s\n", err.msg);
    const struct dse_json *net = d ? dse_json_get(dse_json_root(d), "network") : NULL;
    CHECK_STR_EQ(net ? net->str : "", "n\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    CHECK(strstr(s, "{\"name\": \"c\xef\xbf\xbd\"") != NULL);
    dse_json_free(d);
    free(s);
    unlink(path);
    rmdir(dir);
}

void test_csv_md(void) {
    char *s = report("experiments/nin_local_global/nin.cfg", NULL, DSE_FORMAT_CSV, 1024, 0);
    CHECK(!strncmp(s, "layer,type,output,params,FLOPs,MACs,activations,RF,weights,biases,other_ops\n", 76));
    CHECK(strstr(s, "\nconv1,conv,96x55x55,34944,215890329600,107945164800,297369600,11,34848,96,") != NULL);
    CHECK(strstr(s, "\ntotal,,,7595176,2265080463360,1132540231680,") != NULL); /* MACs = FLOPs / 2 */
    free(s);
    s = report("experiments/squeezenet/squeezenet_v1.0.cfg", NULL, DSE_FORMAT_MD, 1, 1);
    CHECK(strstr(s, "| fire2/expand3x3 ") != NULL);
    CHECK(strstr(s, "|---") != NULL);
    free(s);
}

/* dse analyze's views (issue #34): blocks by name prefix for an ONNX model only, every layer
 * with --expand; the totals the same in every view and format (JSON's totals, CSV's total
 * row, the block under the table). */
void test_analyze_views(void) {
    static const struct {
        const char   *path;
        int           expand;
        enum dse_rows view;
    } v[] = {
        { .path = "m.onnx", .view = DSE_ROWS_BLOCKS },      { .path = "m.onnx", .expand = 1, .view = DSE_ROWS_LAYERS },
        { .path = "m.cfg", .view = DSE_ROWS_MODULES },      { .path = "m.prototxt", .view = DSE_ROWS_MODULES },
        { .path = "m.cfg", .expand = 1, .view = DSE_ROWS_LAYERS }, { .path = "onnx", .view = DSE_ROWS_MODULES },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(v); i++) CHECK_INT_EQ(dse_report_rows(v[i].path, v[i].expand), v[i].view);
    static const struct {
        const char     *path;
        enum dse_format fmt;
        const char     *from, *block; /* where the totals start; a block row in the grouped view */
    } t[] = {
        { "tests/onnx/blocks.onnx", DSE_FORMAT_TABLE, "\nparams ",  "\n/layer1/layer1.0  " },
        { "tests/onnx/blocks.onnx", DSE_FORMAT_CSV,   "\ntotal,",   "\n/layer1/layer1.1,block,8x8x8,1152,294912," },
        { "tests/onnx/blocks.onnx", DSE_FORMAT_JSON,  "\"totals\"",
          "{\"name\": \"/layer1/layer1.0\", \"type\": \"block\"" },
        { "tests/onnx/tiny.onnx",   DSE_FORMAT_MD,    "\nparams ",  "| fire2 " },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(t); i++) {
        char *b = report(t[i].path, NULL, t[i].fmt, 2, DSE_ROWS_BLOCKS);
        char *l = report(t[i].path, NULL, t[i].fmt, 2, DSE_ROWS_LAYERS);
        const char *tb = b ? strstr(b, t[i].from) : NULL, *tl = l ? strstr(l, t[i].from) : NULL;
        CHECK(tb && tl);
        if (tb && tl) CHECK_STR_EQ(tb, tl);
        CHECK(b && strstr(b, t[i].block));
        CHECK(l && !strstr(l, t[i].block)); /* expanded: the block's layers instead */
        free(b), free(l);
    }
}

/* dse's own ONNX export read back (issue #34): each Fire module of the .cfg is a block of
 * its name, with the module's costs, output shape and receptive field. */
void test_analyze_export_blocks(void) {
    static const char *const nets[] = { "experiments/squeezenet/squeezenet_v1.1.cfg",
                                        "experiments/squeezenet/squeezenet_v1.0_complex_bypass.cfg" };
    for (int i = 0; i < DSE_ARRAY_LEN(nets); i++) {
        struct dse_net src, back;
        struct dse_model *m = NULL;
        struct dse_err err = { 0 };
        uint8_t *buf = NULL;
        size_t len = 0;
        const struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA,
                                           .inference = 1 };
        CHECK_OK(dse_netfile_load(nets[i], NULL, &src, &err));
        CHECK_OK(dse_model_new(&src, &mo, &m, &err));
        if (m) CHECK_OK(dse_onnx_write(m, NULL, &buf, &len, &err));
        dse_model_free(m);
        if (!buf || dse_onnx_parse(buf, len, "x.onnx", NULL, &back, &err)) {
            CHECK(0);
            free(buf);
            dse_net_deinit(&src);
            continue;
        }
        struct dse_cost_layer *ls = calloc((size_t)src.n_layers, sizeof *ls);
        struct dse_cost_layer *lb = calloc((size_t)back.n_layers, sizeof *lb);
        struct dse_cost_row   *rs = calloc((size_t)src.n_layers, sizeof *rs);
        struct dse_cost_row   *rb = calloc((size_t)back.n_layers, sizeof *rb);
        struct dse_cost_totals ts, tb;
        CHECK_OK(dse_cost_net(&src, 1, ls, &ts, NULL));
        CHECK_OK(dse_cost_net(&back, 1, lb, &tb, NULL));
        int ns = dse_cost_rows(&src, ls, DSE_ROWS_MODULES, rs);
        int nb = dse_cost_rows(&back, lb, DSE_ROWS_BLOCKS, rb);
        int fires = 0;
        for (int a = 0; a < ns; a++) {
            if (strcmp(rs[a].type, "fire")) continue;
            const struct dse_cost_row *b = NULL;
            for (int k = 0; k < nb && !b; k++)
                if (!strcmp(rb[k].name, rs[a].name)) b = &rb[k];
            CHECK(b != NULL);
            if (!b) continue;
            fires++;
            CHECK_STR_EQ(b->type, "block");
            CHECK_INT_EQ(b->last - b->first, rs[a].last - rs[a].first);
            CHECK_INT_EQ(b->cost.params, rs[a].cost.params);
            CHECK_INT_EQ(b->cost.flops, rs[a].cost.flops);
            CHECK_INT_EQ(b->cost.other_ops, rs[a].cost.other_ops);
            CHECK_INT_EQ(b->cost.activations, rs[a].cost.activations);
            CHECK_INT_EQ(b->out_c * 1000000LL + b->out_h * 1000 + b->out_w,
                         rs[a].out_c * 1000000LL + rs[a].out_h * 1000 + rs[a].out_w);
            CHECK_INT_EQ(b->rf_h, rs[a].rf_h);
        }
        CHECK_INT_EQ(fires, 8); /* fire2 .. fire9 */
        free(ls), free(lb), free(rs), free(rb), free(buf);
        dse_net_deinit(&src);
        dse_net_deinit(&back);
    }
}

/* dse eval, predict and export fit NET from its checkpoint (issue #31): a network trained with
 * --input 3,32,32 --classes 3 loads from its file again without those flags, with them
 * overriding what the checkpoint says; the file alone is another network. */
void test_ckpt_fit(void) {
    const char *dir = tmpdir(), *file = "experiments/squeezenet/squeezenet_fmnist.cfg";
    char ckpt[128];
    struct dse_err err = { 0 };
    struct dse_net net;
    struct dse_model *m = NULL;
    struct dse_ckpt_info info;
    struct dse_input_shape trained = { .c = 3, .h = 32, .w = 32, .classes = 3 };
    const struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA, .inference = 1 };
    int next;
    int64_t it;
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(ckpt, sizeof ckpt, "%s/fitted.ckpt", dir);
    CHECK_OK(dse_netfile_load(file, &trained, &net, &err));
    CHECK_OK(dse_model_new(&net, &mo, &m, &err));
    CHECK_OK(dse_checkpoint_save(m, 1, 10, NULL, ckpt, &err));
    dse_model_free(m), m = NULL;
    dse_net_deinit(&net);
    CHECK_OK(dse_checkpoint_info(ckpt, &info, &err));
    CHECK(info.in_c == 3 && info.in_h == 32 && info.in_w == 32 && info.outputs == 3);
    free(info.class_names);
    /* nothing given: all from the checkpoint, and it loads */
    struct dse_input_shape fit = { 0 };
    dse_netfile_fit_checkpoint(&fit, &info);
    CHECK(fit.c == 3 && fit.h == 32 && fit.w == 32 && fit.classes == 3);
    CHECK_OK(dse_netfile_load(file, &fit, &net, &err));
    CHECK_OK(dse_model_new(&net, &mo, &m, &err));
    CHECK_OK(dse_checkpoint_load(m, ckpt, &next, &it, &err));
    dse_model_free(m), m = NULL;
    dse_net_deinit(&net);
    /* what the command line gives stays: --classes 5 is not the checkpoint's network */
    fit = (struct dse_input_shape){ .classes = 5 };
    dse_netfile_fit_checkpoint(&fit, &info);
    CHECK(fit.c == 3 && fit.h == 32 && fit.w == 32 && fit.classes == 5);
    /* the file as it is (1x28x28, 10 classes) is refused naming a tensor */
    CHECK_OK(dse_netfile_load(file, NULL, &net, &err));
    CHECK_OK(dse_model_new(&net, &mo, &m, &err));
    CHECK_INT_EQ(dse_checkpoint_load(m, ckpt, &next, &it, &err), DSE_ERR_IO);
    CHECK(strstr(err.msg, "checkpoint of another network") != NULL);
    dse_model_free(m);
    dse_net_deinit(&net);
    remove(ckpt);
    rmdir(dir);
}

/* dse analyze --workers answers in milliseconds (issue #31): a worker's img/s is this CPU's
 * training FLOP/s, kept once by --measure (dse/ratecache.h) per CPU model and thread count,
 * over the network's training FLOPs per image. */
void test_rate_cache(void) {
    const char *dir = tmpdir();
    char path[256], cpu[256], how[1024], want[300];
    struct dse_err err = { 0 };
    struct dse_net net;
    double rate, img_per_s;
    CHECK(dir != NULL);
    if (!dir) return;
    /* where: $XDG_CACHE_HOME/dse, else ~/.cache/dse */
    const char *xdg = getenv("XDG_CACHE_HOME");
    char saved[1024] = "";
    if (xdg) snprintf(saved, sizeof saved, "%s", xdg);
    setenv("XDG_CACHE_HOME", "/x/y", 1);
    CHECK(dse_ratecache_path(path, sizeof path) == 0);
    CHECK_STR_EQ(path, "/x/y/dse/train-rate.txt");
    unsetenv("XDG_CACHE_HOME");
    CHECK(dse_ratecache_path(path, sizeof path) == 0);
    snprintf(want, sizeof want, "%s/.cache/dse/train-rate.txt", getenv("HOME") ? getenv("HOME") : "/tmp");
    CHECK_STR_EQ(path, want);
    if (saved[0]) setenv("XDG_CACHE_HOME", saved, 1);
    /* one line per CPU model and thread count; the folder made on first use */
    snprintf(path, sizeof path, "%s/dse/train-rate.txt", dir);
    CHECK_OK(dse_ratecache_get(path, "CPU A", 1, &rate, &err));
    CHECK(rate == 0);
    CHECK_OK(dse_ratecache_put(path, "CPU A", 1, 2e9, &err));
    CHECK_OK(dse_ratecache_put(path, "CPU B @ 2.0GHz", 1, 3e9, &err));
    CHECK_OK(dse_ratecache_put(path, "CPU A", 2, 5e9, &err));
    CHECK_OK(dse_ratecache_put(path, "CPU A", 1, 4e9, &err)); /* replaces its line */
    CHECK_OK(dse_ratecache_get(path, "CPU A", 1, &rate, &err));
    CHECK(rate == 4e9);
    CHECK_OK(dse_ratecache_get(path, "CPU B @ 2.0GHz", 1, &rate, &err));
    CHECK(rate == 3e9);
    CHECK_OK(dse_ratecache_get(path, "CPU A", 2, &rate, &err));
    CHECK(rate == 5e9);
    CHECK_OK(dse_ratecache_get(path, "CPU C", 1, &rate, &err));
    CHECK(rate == 0);
    char *text = NULL;
    CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
    CHECK_STR_EQ(text, "1 3e+09 CPU B @ 2.0GHz\n2 5e+09 CPU A\n1 4e+09 CPU A\n");
    free(text);
    /* the estimate: this CPU's rate over SqueezeNet v1.0's training FLOPs per image */
    CHECK_OK(dse_netfile_load("experiments/squeezenet/squeezenet_v1.0.cfg", NULL, &net, &err));
    CHECK_OK(dse_ratecache_estimate(path, &net, &img_per_s, how, sizeof how, &err));
    CHECK(img_per_s == 0); /* nothing kept for this CPU */
    CHECK_OK(dse_ratecache_keep(path, &net, 17.75, &err));
    CHECK_OK(dse_ratecache_estimate(path, &net, &img_per_s, how, sizeof how, &err));
    CHECK_NEAR(img_per_s, 17.75, 1e-5);
    dse_ratecache_cpu(cpu, sizeof cpu);
    CHECK_OK(dse_ratecache_get(path, cpu, 1, &rate, &err));
    CHECK_NEAR(rate, 17.75 * 4996007616.0, 1e-5); /* v1.0's training FLOPs per image (dse analyze) */
    CHECK(strstr(how, "estimated: this CPU's ") == how && strstr(how, path) != NULL);
    CHECK_OK(dse_ratecache_get(path, "CPU A", 1, &rate, &err)); /* the others' lines stay */
    CHECK(rate == 4e9);
    dse_net_deinit(&net);
    /* a line that does not parse names the file and line, and is not written over */
    write_text(path, "1 3e+09 CPU B\n1 fast CPU A\n");
    CHECK_INT_EQ(dse_ratecache_get(path, "CPU B", 1, &rate, &err), DSE_ERR_IO);
    CHECK(!strcmp(err.file, path) && err.line == 2);
    CHECK_INT_EQ(dse_ratecache_put(path, "CPU B", 1, 1e9, &err), DSE_ERR_IO);
    remove(path);
    snprintf(want, sizeof want, "%s/dse", dir);
    rmdir(want);
    rmdir(dir);
}

/* The usage lines of "dse NAME" in text[0..end), appended to out: each line starting
 * "dse NAME ARG" (after "usage: " or indentation; ARG in capitals, so that examples do not
 * count) with its indented continuation lines as one string, runs of spaces as one, each
 * ended by '\n'. */
static void usage_entries(const char *text, const char *end, const char *name, char *out, size_t size) {
    char head[64];
    size_t n;
    int in = 0;
    snprintf(head, sizeof head, "dse %s ", name);
    n = strlen(out);
    for (const char *p = text; p < end && *p;) {
        const char *e = strchr(p, '\n');
        if (!e || e > end) e = end;
        const char *q = p;
        if (!strncmp(q, "usage: ", 7)) q += 7;
        int indented = q == p && (*q == ' ');
        while (q < e && *q == ' ') q++;
        int starts = !strncmp(q, head, strlen(head)) && isupper((unsigned char)q[strlen(head)]); /* not an example */
        if (starts || (in && indented && strncmp(q, "dse ", 4) && strncmp(q, "mpirun ", 7))) {
            if (starts && n && out[n - 1] == ' ') out[n - 1] = '\n';
            for (; q < e && n + 2 < size; q++)
                if (*q != ' ' || (n && out[n - 1] != ' ' && out[n - 1] != '\n')) out[n++] = *q;
            if (n && out[n - 1] != ' ' && n + 2 < size) out[n++] = ' ';
            out[n] = '\0';
            in = 1;
        } else {
            in = 0;
        }
        p = e + 1;
    }
    if (n && out[n - 1] == ' ') out[n - 1] = '\n';
}

/* docs/cli.md shows each command's usage as its --help does (issue #31: sweep's and bench's
 * differed): the "dse NAME ARG ..." lines of its code blocks against the --help text's. */
void test_usage_docs(void) {
    char *doc = NULL;
    CHECK_OK(dse_fs_read("docs/cli.md", &doc, NULL, NULL));
    if (!doc) return;
    for (int k = 0; k < DSE_CMD_COUNT; k++) {
        const struct dse_opt_cmd *c = &dse_opt_cmds[k];
        char want[4096], got[4096];
        want[0] = got[0] = '\0';
        usage_entries(c->usage, c->usage + strlen(c->usage), c->name, want, sizeof want);
        for (const char *b = strstr(doc, "\n```\n"); b;) { /* each code block in turn */
            const char *e = strstr(b + 5, "\n```\n");
            if (!e) break;
            char blk[4096] = "";
            usage_entries(b + 5, e + 1, c->name, blk, sizeof blk);
            for (char *l = blk, *nl; *l; l = nl + 1) { /* a line shown again (a section's example) once */
                char line[4096];
                if (!(nl = strchr(l, '\n'))) break;
                snprintf(line, sizeof line, "%.*s", (int)(nl - l + 1), l);
                size_t n = strlen(got);
                if (!strstr(got, line)) snprintf(got + n, sizeof got - n, "%s", line);
            }
            b = strstr(e + 5, "\n```");
        }
        CHECK(want[0] != '\0');
        if (strcmp(want, got)) fprintf(stderr, "dse %s: --help says\n%s\ndocs/cli.md says\n%s\n", c->name, want, got);
        CHECK_STR_EQ(got, want);
    }
    free(doc);
}

/* Every command's --help names every option of its table, with the placeholder it shows;
 * no command takes two options of one name. */
void test_options_help(void) {
    for (int k = 0; k < DSE_CMD_COUNT; k++) {
        const struct dse_opt_cmd *c = &dse_opt_cmds[k];
        char *text = usage_text(c);
        if (!text) return;
        CHECK(!strncmp(text, "usage: dse ", 11));
        const char *rest = c->usage, *d; /* the prose after its last %D{--name}, printed as it is */
        while ((d = strstr(rest, "%D{")) && strchr(d, '}')) rest = strchr(d, '}') + 1;
        const char *opts = strstr(text, rest); /* the option lines, not the usage line above */
        CHECK(opts != NULL);
        if (!opts) opts = text;
        else opts += strlen(rest);
        for (int i = 0; i < c->n_lines; i++) {
            const struct dse_opt_line *l = &c->lines[i];
            if (l->place == DSE_OPT_PLACE_HEADING) continue;
            const struct dse_opt_spec *o = &dse_opt_specs[l->opt];
            const char *arg = l->arg ? l->arg : o->arg;
            char want[80];
            snprintf(want, sizeof want, l->place == DSE_OPT_PLACE_TEXT ? "%s" : "  %s%s%s", o->name,
                     arg[0] ? " " : "", arg);
            if (l->place == DSE_OPT_PLACE_JOIN) snprintf(want, sizeof want, ", %s%s%s", o->name, arg[0] ? " " : "", arg);
            if (!strstr(opts, want)) fprintf(stderr, "  dse %s --help lacks '%s'\n", c->name, want);
            CHECK(strstr(opts, want) != NULL);
            CHECK(l->place == DSE_OPT_PLACE_OWN || l->place == DSE_OPT_PLACE_HEADING || i > 0);
            for (int j = 0; j < i; j++)
                CHECK(c->lines[j].place == DSE_OPT_PLACE_HEADING || strcmp(dse_opt_specs[c->lines[j].opt].name, o->name));
            CHECK((o->kind == DSE_OPT_KIND_WORD && (l->words || o->words[0])) || !l->words);
        }
        free(text);
    }
}

/* A value out of an option's one range is refused with the same message by every command
 * that takes the option: below, above, not a number, not one of the words. */
void test_options_one_range(void) {
    int shared = 0;
    for (int o = 0; o < DSE_OPT_COUNT; o++) {
        const struct dse_opt_spec *spec = &dse_opt_specs[o];
        char bad[3][32];
        int n_bad = 0;
        if (spec->kind == DSE_OPT_KIND_INT) {
            snprintf(bad[n_bad++], sizeof bad[0], "%lld", spec->min - 1);
            if (spec->max < INT64_MAX) snprintf(bad[n_bad++], sizeof bad[0], "%lld", spec->max + 1);
            snprintf(bad[n_bad++], sizeof bad[0], "x");
        } else if (spec->kind == DSE_OPT_KIND_WORD) {
            snprintf(bad[n_bad++], sizeof bad[0], "no-such-word");
        }
        for (int b = 0; b < n_bad; b++) {
            char first[sizeof ((struct dse_err *)0)->msg] = "";
            int takers = 0;
            for (int k = 0; k < DSE_CMD_COUNT; k++) {
                const struct dse_opt_cmd *c = &dse_opt_cmds[k];
                const struct dse_opt_line *l = dse_opts_line(c, (enum dse_opt)o);
                if (!l || l->words) continue; /* --format: each command its own words */
                char *argv[8] = { "x", "y", (char *)spec->name, bad[b] };
                char *ok_argv[8] = { "x", "y", (char *)spec->name, "1" };
                struct dse_opt_args a;
                struct dse_err err = { 0 };
                /* the positionals first, so that the value is what is refused */
                char **v = argv + (2 - c->min_pos);
                CHECK_INT_EQ(dse_opts_parse(c, c->min_pos + 2, v, &a, &err), DSE_ERR_CONFIG);
                if (!takers++) snprintf(first, sizeof first, "%s", err.msg);
                else if (strcmp(first, err.msg)) fprintf(stderr, "  dse %s: '%s' vs '%s'\n", c->name, err.msg, first);
                CHECK_STR_EQ(err.msg, first);
                if (spec->kind == DSE_OPT_KIND_INT && spec->min <= 1 && spec->max >= 1) {
                    CHECK_OK(dse_opts_parse(c, c->min_pos + 2, ok_argv + (2 - c->min_pos), &a, &err));
                    CHECK_INT_EQ(a.num[o], 1);
                }
            }
            if (b == 0 && takers > 1) shared++;
        }
    }
    CHECK(shared >= 5); /* --batch, --threads, --classes, --algos, --aug, ... */
    /* the range is the option's, whichever command: --batch 0 in analyze as in train */
    struct dse_opt_args a;
    struct dse_err err = { 0 };
    char *argv[] = { "net.cfg", "--batch", "65537" };
    CHECK_INT_EQ(dse_opts_parse(&dse_opt_cmds[DSE_CMD_ANALYZE], 3, argv, &a, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "--batch '65537' is not an integer from 1 to 65536");
}

/* --early-stop: none, sh and asha taken, in the plan's enum order (sweep.h's one table);
 * anything else, and an eta below 2, refused with the option's message; --help says which
 * of sh and asha is reproducible. */
void test_early_stop(void) {
    const struct dse_opt_cmd *c = &dse_opt_cmds[DSE_CMD_SWEEP];
    static const char *const names[] = { "none", "sh", "asha" };
    for (int h = 0; h < DSE_ARRAY_LEN(names); h++) {
        char *argv[] = { "space.cfg", "--early-stop", (char *)names[h], "--eta", "2" };
        struct dse_opt_args a;
        struct dse_err err = { 0 };
        CHECK_OK(dse_opts_parse(c, 5, argv, &a, &err));
        CHECK_INT_EQ(dse_word_index(DSE_SWEEP_HALVING_NAMES, a.val[DSE_OPT_EARLY_STOP]), h);
        CHECK_STR_EQ(dse_sweep_halving_str((enum dse_sweep_halving)h), names[h]);
    }
    CHECK_INT_EQ(DSE_SWEEP_HALVING_ASHA, 2);
    struct dse_opt_args a;
    struct dse_err err = { 0 };
    char *bad[] = { "space.cfg", "--early-stop", "hyperband" };
    CHECK_INT_EQ(dse_opts_parse(c, 3, bad, &a, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "--early-stop 'hyperband' is not none, sh (successive halving) or asha (asynchronous)");
    char *eta[] = { "space.cfg", "--early-stop", "asha", "--eta", "1" };
    CHECK_INT_EQ(dse_opts_parse(c, 5, eta, &a, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "--eta '1' is not an integer from 2 to 1000");
    char *text = usage_text(c);
    CHECK(text && strstr(text, "[--early-stop none|sh|asha]"));
    CHECK(text && strstr(text, "(bit-for-bit reproducible)"));
    CHECK(text && strstr(text, "so only a 1-worker sweep repeats"));
    free(text);
}

/* A deep net reads in linear time (issue #18 item 4: a 200,000-layer .cfg was still being
 * read after 120 s, its name checks quadratic): 200,000 convs written as .cfg and as
 * prototxt, each read back within 60 s (about 2 s in the normal build). */
void test_deep_nets(void) {
    enum { DEPTH = 200000 };
    char dir[] = "/tmp/dse_deep_XXXXXX", cfg[300], proto[300];
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    snprintf(cfg, sizeof cfg, "%s/deep.cfg", dir);
    snprintf(proto, sizeof proto, "%s/deep.prototxt", dir);
    struct dse_net net, back;
    struct dse_err err = { 0 };
    dse_net_init(&net, "deep", 1, 8, 8);
    for (int i = 0; i < DEPTH; i++) {
        char name[32];
        snprintf(name, sizeof name, "c%d", i);
        if (net_conv(&net, name, 2, 1, 1, 0) < 0) break;
    }
    CHECK_INT_EQ(net.n_layers, DEPTH);
    const char *paths[2] = { cfg, proto };
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(paths[k], "w");
        CHECK(f != NULL);
        if (!f) continue;
        CHECK_OK(k ? dse_prototxt_write(f, &net, &err) : dse_netcfg_write(f, &net, &err));
        fclose(f);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        CHECK_OK(dse_netfile_load(paths[k], NULL, &back, &err));
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        CHECK_INT_EQ(back.n_layers, DEPTH);
        CHECK(s < 60.0);
        printf("  %d layers from %s in %.2f s\n", back.n_layers, k ? "prototxt" : ".cfg", s);
        dse_net_deinit(&back);
    }
    dse_net_deinit(&net);
    unlink(cfg), unlink(proto), rmdir(dir);
}

static double fake_clock;
static double fake_now(void) { return fake_clock; }

/* dse train's lines (dse/trainlog.c) on a clock the test sets: in a log, a progress line
 * once every_s seconds have passed since the last line (an epoch line counts), none with
 * every_s 0; on a terminal every call redrawn in place; the never-predicted warning once
 * per run, under the first epoch that has one. */
void test_train_log(void) {
    static const struct { double t; int epoch, iter, done, unpredicted; } ev[] = {
        { 1, 0, 1, 0, 0 },   { 29.9, 0, 11, 0, 0 }, { 30, 0, 21, 0, 0 },  { 45, 0, 31, 0, 0 },
        { 61, 0, 41, 0, 0 }, { 70, 0, 100, 1, 9 },  { 95, 1, 11, 0, 0 },  { 100, 1, 21, 0, 0 },
        { 120, 1, 100, 1, 9 },
    };
    static const char *const E1 = "epoch 1/2  train loss 1.5000  test loss 1.2500  top-1 50.00%  top-5 75.00%  64 img/s";
    static const char *const E2 = "epoch 2/2  train loss 1.5000  test loss 1.2500  top-1 50.00%  top-5 75.00%  64 img/s";
    static const char *const W = "  warning: 9 classes of the test set never predicted (a dead classifier unit?); "
                                 "said once per run\n";
    static const struct { int tty; double every_s; const char *fmt; } cases[] = {
        { 0, 30, "epoch 1/2  iter 21/100  loss 2.3000  lr 0.01  64 img/s  ETA 100 s\n"
                 "epoch 1/2  iter 41/100  loss 2.3000  lr 0.01  64 img/s  ETA 100 s\n%s\n%s"
                 "epoch 2/2  iter 21/100  loss 2.3000  lr 0.01  64 img/s  ETA 100 s\n%s\n" },
        { 0, 0, "%s\n%s%s\n" },
        { 1, 30, "\repoch 1/2  iter 1/100  loss 2.3000  lr 0.01  64 img/s  ETA 100 s   "
                 "\repoch 1/2  iter 11/100  loss 2.3000  lr 0.01  64 img/s  ETA 100 s   "
                 "\repoch 1/2  iter 21/100  loss 2.3000  lr 0.01  64 img/s  ETA 100 s   "
                 "\repoch 1/2  iter 31/100  loss 2.3000  lr 0.01  64 img/s  ETA 100 s   "
                 "\repoch 1/2  iter 41/100  loss 2.3000  lr 0.01  64 img/s  ETA 100 s   "
                 "\r%s                    \n%s"
                 "\repoch 2/2  iter 11/100  loss 2.3000  lr 0.01  64 img/s  ETA 100 s   "
                 "\repoch 2/2  iter 21/100  loss 2.3000  lr 0.01  64 img/s  ETA 100 s   "
                 "\r%s                    \n" },
    };
    for (int c = 0; c < DSE_ARRAY_LEN(cases); c++) {
        char *buf = NULL, want[4000];
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        struct dse_train_log l;
        fake_clock = 0;
        dse_train_log_init(&l, f, cases[c].tty, cases[c].every_s);
        l.now_s = fake_now;
        l.last_s = 0;
        for (int i = 0; i < DSE_ARRAY_LEN(ev); i++) {
            fake_clock = ev[i].t;
            struct dse_train_progress p = { .epoch = ev[i].epoch, .epochs = 2, .iter = ev[i].iter, .iters = 100,
                                            .loss = ev[i].done ? 1.5f : 2.3f, .lr = 0.01f, .img_per_s = 64,
                                            .eta_s = 100, .done = ev[i].done,
                                            .ep = { .top1 = 0.5f, .top5 = 0.75f, .test_loss = 1.25f,
                                                    .unpredicted = ev[i].unpredicted } };
            dse_train_log_progress(&l, &p);
        }
        fclose(f);
        snprintf(want, sizeof want, cases[c].fmt, E1, W, E2);
        CHECK_STR_EQ(buf, want);
        free(buf);
    }
}

#ifndef DSE_BINARY
#define DSE_BINARY "build/dse"
#endif

/* The last line of cmd's stdout that starts with `start`, and in it the number after
 * `"key": ` as printed, into val. 0 if there is none. */
static int json_field(const char *cmd, const char *start, const char *key, char *val, size_t size) {
    FILE *p = popen(cmd, "r");
    char line[8192], want[64];
    int found = 0;
    if (!p) return 0;
    snprintf(want, sizeof want, "\"%s\": ", key);
    while (fgets(line, sizeof line, p)) {
        const char *at = strncmp(line, start, strlen(start)) ? NULL : strstr(line, want);
        if (at) {
            at += strlen(want);
            snprintf(val, size, "%.*s", (int)strcspn(at, ",}"), at);
            found = 1;
        }
    }
    return pclose(p) == 0 && found;
}

/* dse eval of a checkpoint trained on an image folder, given that folder, repeats the test
 * loss dse train printed (issue #31: 1.088154 against 1.085588; eval read the folder's
 * images while training read its pack's). */
void test_eval_folder(void) {
    /* with the kernels dse chooses, and with OpenBLAS's Prescott ones, whose bits for an element
     * can depend on the product's shape (eval's batch is not training's) */
    static const char *const kernels[2] = { "", "OPENBLAS_CORETYPE=Prescott " };
    for (int k = 0; k < 2; k++) {
        char dir[64], cmd[2048], trained[64] = "", evaluated[64] = "", from_pack[64] = "";
        tmpdir_make(dir);
        snprintf(cmd, sizeof cmd, "%s data synth %s/f --classes 3 --train 8 --val 6 --sides 30-60 --seed 3 >/dev/null",
                 DSE_BINARY, dir);
        CHECK(system(cmd) == 0);
        const char *net = "experiments/squeezenet/squeezenet_fmnist.cfg --input 3,28,28 --classes 3";
        snprintf(cmd, sizeof cmd, "%s%s train %s --data %s/f --pack-cache %s/cache --epochs 1 --batch 8 --seed 2 --conv "
                 "gemm_batch --checkpoint-dir %s/ck --json 2>/dev/null", kernels[k], DSE_BINARY, net, dir, dir, dir);
        CHECK(json_field(cmd, "{\"status\"", "loss", trained, sizeof trained));
        snprintf(cmd, sizeof cmd, "%s%s eval %s --checkpoint %s/ck/epoch-1.ckpt --data %s/f --pack-cache %s/cache "
                 "--json 2>/dev/null", kernels[k], DSE_BINARY, net, dir, dir, dir);
        CHECK(json_field(cmd, "{\"checkpoint\"", "loss", evaluated, sizeof evaluated));
        snprintf(cmd, sizeof cmd, "%s%s eval %s --checkpoint %s/ck/epoch-1.ckpt --json 2>/dev/null", kernels[k],
                 DSE_BINARY, net, dir);
        CHECK(json_field(cmd, "{\"checkpoint\"", "loss", from_pack, sizeof from_pack)); /* the data it records */
        CHECK(trained[0] != '\0');
        CHECK_STR_EQ(evaluated, trained);
        CHECK_STR_EQ(from_pack, trained);
        tmpdir_remove(dir);
    }
}

/* Every case once, in the order a run takes them: its id and its function. */
/* dse import --classes-file (issue #34): the names, one a line, recorded in the checkpoint
 * as training records a dataset's; a file of another count, an empty or too long name or a
 * control byte refused with its line, before the weights are read. */
void test_import_classes(void) {
    static const char *const net_path = "tests/fuzz/tiny.cfg"; /* 10 classes */
    static const struct {
        const char *text, *msg; /* msg NULL: taken; %s: the file */
    } files[] = {
        { "T-shirt\nTrouser\nPullover\nDress\nCoat\nSandal\nShirt\nSneaker\nBag\nAnkle boot\n", NULL },
        { "a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\nj", NULL }, /* CR LF, no last newline */
        { "a\nb\nc\n", "%s: 3 class names (one a line); the network's classifier has 10 outputs" },
        { "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n\n", "%s: 11 class names (one a line); the network's classifier has 10 outputs" },
        { "a\nb\n\nd\ne\nf\ng\nh\ni\nj\n", "%s:3: an empty class name" },
        { "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\tk\n", "%s:10: a control byte (0x09) in a class name" },
        { "a\nb\nc\nd\ne\nf\ng\nh\ni\n0123456789012345678901234567890123456789012345678901234567890123\n",
          "%s:10: a class name of 64 bytes; at most 63" },
    };
    const char *dir = tmpdir();
    char model[300], classes[300], out[300], want[600], buf[1024];
    struct dse_err err = { 0 };
    struct dse_net net;
    struct dse_model *m = NULL;
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(model, sizeof model, "%s/tiny.caffemodel", dir);
    snprintf(classes, sizeof classes, "%s/classes.txt", dir);
    snprintf(out, sizeof out, "%s/tiny.ckpt", dir);
    struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA, .inference = 1 };
    CHECK_OK(dse_netfile_load(net_path, NULL, &net, &err));
    CHECK_OK(dse_model_new(&net, &mo, &m, &err));
    CHECK_OK(dse_caffemodel_save(m, model, &err));
    dse_model_free(m);
    dse_net_deinit(&net);
    for (int f = 0; f < DSE_ARRAY_LEN(files); f++) {
        FILE *log = fopen("/dev/null", "w");
        write_text(classes, files[f].text);
        unlink(out);
        memset(&err, 0, sizeof err);
        int st = (int)dse_import_run(model, net_path, NULL, NULL, classes, out, log, &err);
        fclose(log);
        if (files[f].msg) {
            snprintf(want, sizeof want, files[f].msg, classes);
            CHECK_INT_EQ(st, DSE_ERR_CONFIG);
            CHECK_STR_EQ(dse_err_format(&err, buf, (int)sizeof buf), want);
            CHECK(access(out, F_OK) != 0);
            continue;
        }
        CHECK_OK(st);
        struct dse_ckpt_info info;
        CHECK_OK(dse_checkpoint_info(out, &info, &err));
        CHECK_INT_EQ(info.classes, 10);
        if (info.classes != 10 || !info.class_names) continue;
        CHECK_STR_EQ(info.class_names[0], f == 0 ? "T-shirt" : "a");
        CHECK_STR_EQ(info.class_names[9], f == 0 ? "Ankle boot" : "j");
        free(info.class_names);
    }
    tmpdir_remove(dir);
}

/* The network file and checkpoint dse import wrote, loaded as dse train --resume loads them
 * (fitted to `classes`; 0: as written). NULL where they do not load. */
static struct dse_model *import_loaded(const char *cfg, const char *ckpt, int classes) {
    struct dse_err err = { 0 };
    struct dse_net net;
    struct dse_model *m = NULL;
    const struct dse_input_shape fit = { .classes = classes };
    struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA, .inference = 1 };
    int next;
    int64_t it;
    CHECK_OK(dse_netfile_load(cfg, &fit, &net, &err));
    if (err.code) return NULL;
    CHECK_OK(dse_model_new(&net, &mo, &m, &err));
    dse_net_deinit(&net);
    if (m && dse_checkpoint_load(m, ckpt, &next, &it, &err)) {
        CHECK_STR_EQ(err.msg, "");
        dse_model_free(m);
        return NULL;
    }
    return m;
}

/* dse import MODEL.onnx --classes K, then fine-tuning (issue #34 item 3): every layer but the
 * classifier keeps the model's weights bit for bit, the classifier has K outputs, and dse
 * train --resume of the two files runs on an image folder of K classes. */
void test_import_onnx_finetune(void) {
    const char *dir = tmpdir();
    char ckpt[300], cfg[300], ckpt0[300], cfg0[300], cmd[2048], loss[64] = "";
    struct dse_err err = { 0 };
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(ckpt, sizeof ckpt, "%s/tiny3.ckpt", dir);
    snprintf(cfg, sizeof cfg, "%s/tiny3.cfg", dir);
    snprintf(ckpt0, sizeof ckpt0, "%s/tiny.ckpt", dir);
    snprintf(cfg0, sizeof cfg0, "%s/tiny.cfg", dir);
    const struct dse_input_shape three = { .classes = 3 };
    FILE *log = fopen("/dev/null", "w");
    CHECK_OK(dse_import_onnx_run("tests/onnx/tiny.onnx", NULL, NULL, NULL, ckpt0, cfg0, log, &err));
    CHECK_OK(dse_import_onnx_run("tests/onnx/tiny.onnx", &three, NULL, NULL, ckpt, cfg, log, &err));
    fclose(log);
    struct dse_model *a = import_loaded(cfg0, ckpt0, 0), *b = import_loaded(cfg, ckpt, 3);
    CHECK(a && b);
    for (int i = 0; a && b && i < a->net.n_layers; i++) {
        const struct dse_tensor *wa = a->nodes[i].weight, *wb = b->nodes[i].weight;
        if (!wa) continue;
        const int64_t n = (int64_t)wa->n * wa->c * wa->h * wa->w;
        if (!strcmp(a->net.layers[i].name, "conv10")) { /* the classifier: 10 classes, then 3 */
            CHECK_INT_EQ(wa->n, 10);
            CHECK_INT_EQ(wb->n, 3);
        } else {
            CHECK(!memcmp(wa->data, wb->data, sizeof *wa->data * (size_t)n));
        }
    }
    dse_model_free(a);
    dse_model_free(b);
    snprintf(cmd, sizeof cmd, "%s data synth %s/f --classes 3 --train 8 --val 2 --sides 28-40 --seed 3 >/dev/null",
             DSE_BINARY, dir);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s train %s --resume %s --data %s/f --classes 3 --pack-cache %s/cache --epochs 1 "
             "--batch 8 --threads 1 --json 2>/dev/null", DSE_BINARY, cfg, ckpt, dir, dir);
    CHECK(json_field(cmd, "{\"status\"", "loss", loss, sizeof loss));
    tmpdir_remove(dir);
}

/* cmd's whole stdout into buf (cut at size); its exit status 0 or not. */
static int cmd_output(const char *cmd, char *buf, size_t size) {
    FILE *p = popen(cmd, "r");
    size_t n = 0, got;
    if (!p) return -1;
    while (n + 1 < size && (got = fread(buf + n, 1, size - 1 - n, p)) > 0) n += got;
    buf[n] = '\0';
    return pclose(p);
}

/* 1, saying so, where the CPU lacks AVX512-BF16 (a model refuses bf16 there). */
static int skip_no_bf16(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512bf16")) return 0;
    printf("  skipped: no avx512_bf16\n");
#else
    printf("  skipped: not x86-64\n");
#endif
    return 1;
}

/* dse eval --precision bf16 (issue #37 item 4): bf16's figures, float32's on the same images
 * beside them and the difference, the float32 ones equal to a plain dse eval's; dse predict
 * takes it too. Skipped where the CPU lacks AVX512-BF16 (the model refuses bf16 there). */
void test_eval_bf16(void) {
    const char *net = "tests/fuzz/tiny.cfg", *trained = "tests/fuzz/corpus/ckpt_load/epoch-1.ckpt";
    static char a[16384], b[16384];
    char cmd[1024];
    if (skip_no_bf16()) return;
    snprintf(cmd, sizeof cmd, "%s eval %s --checkpoint %s --data fashion-mnist --limit-test 300 --json 2>/dev/null",
             DSE_BINARY, net, trained);
    CHECK_INT_EQ(cmd_output(cmd, a, sizeof a), 0);
    snprintf(cmd, sizeof cmd, "%s eval %s --checkpoint %s --data fashion-mnist --limit-test 300 --json --precision bf16 "
             "2>/dev/null", DSE_BINARY, net, trained);
    CHECK_INT_EQ(cmd_output(cmd, b, sizeof b), 0);
    const char *t32 = strstr(a, "\"top1\": "), *fp = strstr(b, "\"fp32\": {"), *d = strstr(b, "\"top1_minus_fp32\": ");
    CHECK(t32 && fp && d && strstr(b, "\"precision\": \"bf16\""));
    if (!t32 || !fp || !d) return;
    const double top32 = strtod(t32 + 8, NULL), top16 = strtod(strstr(b, "\"top1\": ") + 8, NULL),
                 inner = strtod(strstr(fp, "\"top1\": ") + 8, NULL), diff = strtod(d + 19, NULL);
    const char *l16 = strstr(b, "\"loss\": "), *l32 = strstr(fp, "\"loss\": ");
    CHECK(l16 && l32 && strtod(l16 + 8, NULL) != strtod(l32 + 8, NULL)); /* bf16 did run: another loss */
    CHECK(inner == top32);                      /* float32 on the same images: a plain eval's figure */
    CHECK(fabs(diff - (top16 - top32)) < 1e-6); /* the difference is the two figures' */
    CHECK(fabs(diff) <= 0.02);                  /* 300 images: bf16 moves a handful of predictions at most */
    snprintf(cmd, sizeof cmd, "%s eval %s --checkpoint %s --limit-test 300 --precision bf16 2>/dev/null", DSE_BINARY,
             net, trained);
    CHECK_INT_EQ(cmd_output(cmd, b, sizeof b), 0);
    CHECK(strstr(b, " (bf16)\nfp32 on the same images: ") != NULL && strstr(b, "bf16 minus fp32: top-1 ") != NULL);
    snprintf(cmd, sizeof cmd, "%s predict %s --checkpoint %s --precision bf16 fashion-mnist:test:0 --json 2>/dev/null",
             DSE_BINARY, net, trained);
    CHECK_INT_EQ(cmd_output(cmd, b, sizeof b), 0);
    CHECK(strstr(b, "\"top\": [") != NULL);
    /* dse profile names its precision and, in bf16, the convs the rule leaves in float32 */
    snprintf(cmd, sizeof cmd, "%s profile %s --batch 2 --iters 1 --threads 1 --precision bf16", DSE_BINARY, net);
    CHECK_INT_EQ(cmd_output(cmd, b, sizeof b), 0);
    CHECK(strstr(b, ": batch 2, 1 threads bf16, median of 1 iterations;") != NULL);
    CHECK(strstr(b, "\n# bf16: conv1 (9 terms per output, under 16), fire2/squeeze1x1 (4 terms per output, under 16), "
                    "fire2/expand1x1 (2 terms per output, under 16), conv10 (8 terms per output, under 16) compute in "
                    "float32\nlayer ") != NULL);
    snprintf(cmd, sizeof cmd, "%s profile %s --batch 2 --iters 1 --threads 1", DSE_BINARY, net);
    CHECK_INT_EQ(cmd_output(cmd, b, sizeof b), 0);
    CHECK(strstr(b, ": batch 2, 1 threads fp32, median of 1 iterations;") != NULL && !strstr(b, "# bf16"));
}

/* Activations stored in bf16 (issue #37, engine/model.c plan_bf16) on a net whose concats copy:
 * pool1 is read by a bf16 conv and copied by a concat, cat (views) only copied by another
 * concat, so both stay float and only s's output goes in bf16 (dse profile says 2 layers');
 * training gives the same checkpoint bytes as with every activation in float32
 * (DSE_CPU_BF16_FLOAT_ACTS=1). Without the concat rule the copy read bf16 values as floats. */
void test_bf16_acts_concat(void) {
    const char *net = "tests/prototxt/bf16_concat.cfg", *dir = tmpdir();
    static char out[8192];
    char cmd[1024], ck[2][128];
    if (skip_no_bf16()) return;
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(cmd, sizeof cmd, "%s profile %s --batch 4 --iters 1 --threads 1 --precision bf16 2>&1", DSE_BINARY, net);
    CHECK_INT_EQ(cmd_output(cmd, out, sizeof out), 0);
    CHECK(strstr(out, "\n# bf16: 2 of 15 layers' outputs stored in bf16 between ops, 0 of their gradients; "
                      "products on ") != NULL);
    CHECK(strstr(out, "gradients; products on amx (") || strstr(out, "gradients; products on avx512bf16 ("));
    for (int v = 0; v < 2; v++) {
        snprintf(ck[v], sizeof ck[v], "%s/%d/epoch-1.ckpt", dir, v);
        snprintf(cmd, sizeof cmd, "%s %s train %s --data fashion-mnist --epochs 1 --batch 32 --limit-train 256 "
                 "--limit-test 64 --precision bf16 --threads 2 --checkpoint-dir %s/%d --json 2>&1",
                 v ? "DSE_CPU_BF16_FLOAT_ACTS=1" : "", DSE_BINARY, net, dir, v);
        CHECK_INT_EQ(cmd_output(cmd, out, sizeof out), 0);
    }
    char *f[2] = { NULL, NULL };
    size_t n[2] = { 0, 0 };
    CHECK_OK(dse_fs_read(ck[0], &f[0], &n[0], NULL));
    CHECK_OK(dse_fs_read(ck[1], &f[1], &n[1], NULL));
    CHECK(n[0] > 0 && n[0] == n[1] && f[0] && f[1] && !memcmp(f[0], f[1], n[0]));
    free(f[0]), free(f[1]);
    tmpdir_remove(dir);
}

/* dse export --format ckpt (issue #35): the weights of a checkpoint, or of a compressed model
 * (a .dsez, dse_dsez_write of a trained checkpoint shared here) decoded, as a float checkpoint, and dse eval (loss, top-1, top-5, per class; all but the
 * checkpoint's name) and dse predict of it print what they print of the file it came from, to
 * the digit; --out naming the file read is refused before anything is written. */
void test_export_ckpt(void) {
    const char *dir = tmpdir(), *net = "tests/fuzz/tiny.cfg", *trained = "tests/fuzz/corpus/ckpt_load/epoch-1.ckpt";
    static char a[16384], b[16384];
    char cmd[1024], out[128], dsez[128];
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(out, sizeof out, "%s/decoded.ckpt", dir);
    snprintf(dsez, sizeof dsez, "%s/tiny.dsez", dir);
    const struct {
        const char *id, *from;
    } cases[] = {
        { .id = "ckpt", .from = trained },
        { .id = "dsez", .from = dsez }, /* the trained checkpoint shared at 5 bits, half its weights pruned */
    };
    { /* the .dsez: dse_dsez_write of the trained model, with the data its checkpoint records */
        struct dse_err err = { 0 };
        struct dse_ckpt_info info;
        struct dse_input_shape fit = { 0 };
        struct dse_net n;
        struct dse_model *m = NULL;
        struct dse_dsez z = { 0 };
        const struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA, .inference = 1 };
        int next;
        int64_t it;
        CHECK_OK(dse_checkpoint_info(trained, &info, &err));
        dse_netfile_fit_checkpoint(&fit, &info);
        CHECK_OK(dse_netfile_load(net, &fit, &n, &err));
        CHECK_OK(dse_model_new(&n, &mo, &m, &err));
        dse_net_deinit(&n);
        if (m) CHECK_OK(dse_checkpoint_load(m, trained, &next, &it, &err));
        struct dse_ckpt_meta meta = { .seed = info.seed, .norm = info.norm, .classes = info.classes,
                                      .class_names = (const char(*)[64])info.class_names };
        snprintf(meta.data, sizeof meta.data, "%s", info.data);
        if (m) {
            dsez_share(m, 5, 0.5, &z);
            CHECK_OK(dse_dsez_write(&z, m, &meta, dsez, &err));
        }
        dsez_share_free(&z);
        dse_model_free(m);
        free(info.class_names);
    }
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        snprintf(cmd, sizeof cmd, "%s export %s --checkpoint %s --format ckpt --out %s 2>&1", DSE_BINARY, net,
                 cases[i].from, out);
        CHECK_INT_EQ(cmd_output(cmd, a, sizeof a), 0);
        CHECK(strstr(a, "dse export: wrote ") != NULL);
        static const char *const runs[2] = { "eval %s --checkpoint %s --data fashion-mnist --limit-test 200 --json",
                                             "predict %s --checkpoint %s fashion-mnist:test:0 fashion-mnist:test:7 "
                                             "--top 10 --json" };
        for (int r = 0; r < 2; r++) {
            char fmt[256];
            snprintf(fmt, sizeof fmt, "%%s %s 2>/dev/null", runs[r]);
            snprintf(cmd, sizeof cmd, fmt, DSE_BINARY, net, cases[i].from);
            CHECK_INT_EQ(cmd_output(cmd, a, sizeof a), 0);
            snprintf(cmd, sizeof cmd, fmt, DSE_BINARY, net, out);
            CHECK_INT_EQ(cmd_output(cmd, b, sizeof b), 0);
            const char *ra = r ? a : strstr(a, "\"data\""), *rb = r ? b : strstr(b, "\"data\"");
            CHECK(ra && rb && (r || (strstr(ra, "\"top5\"") && strstr(ra, "\"per_class\""))));
            if (ra && rb && strcmp(ra, rb)) fprintf(stderr, "%s: %s\ndecoded: %s\n", cases[i].id, ra, rb);
            CHECK(ra && rb && !strcmp(ra, rb));
            CHECK(strlen(a) > 100);
        }
        snprintf(cmd, sizeof cmd, "%s export %s --checkpoint %s --format ckpt --out %s 2>&1", DSE_BINARY, net, out, out);
        CHECK(cmd_output(cmd, a, sizeof a) != 0);
        snprintf(b, sizeof b, "dse: --out %s is the checkpoint the weights come from; name another file\n", out);
        CHECK_STR_EQ(a, b);
        remove(out);
    }
    remove(dsez);
    rmdir(dir);
}

/* dse compress end to end (issue #35): the .dsez it writes is as big as it says, the same bytes
 * when run again, evaluated as its decoded checkpoint is (every figure), exported to
 * ONNX; a flipped byte, a cut file and a network it is not of are refused with exit 2. */
void test_compress(void) {
    const char *dir = tmpdir(), *net = "tests/fuzz/tiny.cfg", *trained = "tests/fuzz/corpus/ckpt_load/epoch-1.ckpt";
    static char a[16384], b[16384];
    char cmd[2048], z1[128], z2[128], dec[128], onnx[128], bad[128], other[128];
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(z1, sizeof z1, "%s/t1.dsez", dir), snprintf(z2, sizeof z2, "%s/t2.dsez", dir);
    snprintf(dec, sizeof dec, "%s/dec.ckpt", dir), snprintf(onnx, sizeof onnx, "%s/t.onnx", dir);
    snprintf(bad, sizeof bad, "%s/bad.dsez", dir), snprintf(other, sizeof other, "%s/other.cfg", dir);
    const char *const outs[2] = { z1, z2 };
    for (int t = 0; t < 2; t++) {
        snprintf(cmd, sizeof cmd, "%s compress %s --checkpoint %s --data fashion-mnist --limit-train 256 --limit-test "
                 "200 --bits 4 --density 0.5 --finetune 1 --threads 2 --out %s 2>/dev/null", DSE_BINARY, net,
                 trained, outs[t]);
        CHECK_INT_EQ(cmd_output(cmd, a, sizeof a), 0);
        struct stat st;
        char said[256];
        CHECK(stat(outs[t], &st) == 0);
        snprintf(said, sizeof said, "%s: %lld bytes, float32 912 bytes", outs[t], (long long)st.st_size);
        if (!strstr(a, said)) fprintf(stderr, "expected '%s' in:\n%s", said, a);
        CHECK(strstr(a, said) != NULL);
        CHECK(strstr(a, "next: dse analyze --compressed ") != NULL);
    }
    char *f1, *f2;
    size_t n1 = 0, n2 = 0;
    CHECK_OK(dse_fs_read(z1, &f1, &n1, NULL));
    CHECK_OK(dse_fs_read(z2, &f2, &n2, NULL));
    CHECK(n1 > 0 && n1 == n2 && !memcmp(f1, f2, n1)); /* deterministic: the same bytes again (with the conv choices
                                                          the first run timed and kept; 1 against 2 threads with
                                                          one strategy: test_engine_compress compress-run) */
    free(f2);
    /* dse analyze --compressed: every byte accounted for, the total the file's size */
    snprintf(cmd, sizeof cmd, "%s analyze --compressed %s --format json 2>&1", DSE_BINARY, z1);
    CHECK_INT_EQ(cmd_output(cmd, a, sizeof a), 0);
    snprintf(b, sizeof b, "\"file_bytes\": %zu,\n  \"float32_bytes\": 912,", n1);
    CHECK(strstr(a, b) != NULL);
    CHECK(strstr(a, "{\"layer\": \"conv1\", \"role\": \"weight\", \"values\": 36, ") != NULL);
    snprintf(cmd, sizeof cmd, "%s analyze --compressed %s 2>&1", DSE_BINARY, z1);
    CHECK_INT_EQ(cmd_output(cmd, a, sizeof a), 0);
    const char *tot = strstr(a, "\ntotal ");
    CHECK(tot != NULL && strtoll(strrchr(strtok(strchr(tot + 1, '\n') ? (char *)tot + 1 : (char *)tot, "\n"), ' '), NULL, 10) == (long long)n1);
    /* evaluated as its decoded checkpoint */
    snprintf(cmd, sizeof cmd, "%s export %s --checkpoint %s --format ckpt --out %s >/dev/null 2>&1", DSE_BINARY, net,
             z1, dec);
    CHECK_INT_EQ(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s eval %s --checkpoint %s --data fashion-mnist --limit-test 300 --json 2>/dev/null",
             DSE_BINARY, net, z1);
    CHECK_INT_EQ(cmd_output(cmd, a, sizeof a), 0);
    snprintf(cmd, sizeof cmd, "%s eval %s --checkpoint %s --data fashion-mnist --limit-test 300 --json 2>/dev/null",
             DSE_BINARY, net, dec);
    CHECK_INT_EQ(cmd_output(cmd, b, sizeof b), 0);
    const char *ra = strstr(a, "\"data\""), *rb = strstr(b, "\"data\"");
    CHECK(ra && rb && strstr(ra, "\"per_class\"") && !strcmp(ra, rb));
    snprintf(cmd, sizeof cmd, "%s export %s --checkpoint %s --format onnx --out %s >/dev/null 2>&1", DSE_BINARY, net,
             z1, onnx);
    CHECK_INT_EQ(system(cmd), 0);
    /* damage: a flipped byte of the codebooks' part, then a cut file */
    static const struct {
        const char *id, *want;
        int         cut;
    } damage[] = {
        { .id = "flip", .want = "corrupt compressed model: CRC-32", .cut = 0 },
        { .id = "cut", .want = "truncated or corrupt compressed model", .cut = 1 },
    };
    for (size_t d = 0; d < DSE_ARRAY_LEN(damage); d++) {
        if (!damage[d].cut) f1[n1 - 20] ^= 0x01;
        FILE *o = fopen(bad, "wb");
        CHECK(o && fwrite(f1, 1, damage[d].cut ? n1 - 7 : n1, o) > 0 && fclose(o) == 0);
        if (!damage[d].cut) f1[n1 - 20] ^= 0x01;
        snprintf(cmd, sizeof cmd, "%s eval %s --checkpoint %s --data fashion-mnist --limit-test 10 2>&1; echo rc=$?",
                 DSE_BINARY, net, bad);
        CHECK(cmd_output(cmd, a, sizeof a) == 0);
        if (!strstr(a, damage[d].want) || !strstr(a, "rc=2")) fprintf(stderr, "%s: %s", damage[d].id, a);
        CHECK(strstr(a, damage[d].want) != NULL && strstr(a, bad) != NULL && strstr(a, "rc=2") != NULL);
    }
    free(f1);
    /* a network it is not of: conv1 with 6 filters */
    write_text(other, "name = \"other\";\ninput = { channels = 1; height = 28; width = 28; };\nlayers = (\n"
                      "  { name = \"conv1\"; type = \"conv\"; filters = 6; kernel = 3; stride = 2; },\n"
                      "  { name = \"conv10\"; type = \"conv\"; filters = 10; kernel = 1; },\n"
                      "  { name = \"pool10\"; type = \"global_avgpool\"; }\n);\n");
    snprintf(cmd, sizeof cmd, "%s eval %s --checkpoint %s --data fashion-mnist --limit-test 10 2>&1; echo rc=$?",
             DSE_BINARY, other, z1);
    CHECK(cmd_output(cmd, a, sizeof a) == 0);
    if (!strstr(a, "compressed model of another network: it has 'param conv1 weight 4x1x3x3 +momentum'"))
        fprintf(stderr, "other: %s", a);
    CHECK(strstr(a, "compressed model of another network: it has 'param conv1 weight 4x1x3x3 +momentum'") &&
          strstr(a, "rc=2"));
    /* training a .dsez would undo its compression: refused, with the way to a float checkpoint */
    snprintf(cmd, sizeof cmd, "%s train %s --resume %s --data fashion-mnist --limit-train 64 --limit-test 10 2>&1; "
             "echo rc=$?", DSE_BINARY, net, z1);
    CHECK(cmd_output(cmd, a, sizeof a) == 0);
    if (!strstr(a, "is a compressed model (.dsez)")) fprintf(stderr, "train --resume .dsez: %s", a);
    CHECK(strstr(a, "is a compressed model (.dsez)") && strstr(a, "--format ckpt") && strstr(a, "rc=2"));
    remove(z1), remove(z2), remove(dec), remove(onnx), remove(bad), remove(other);
    rmdir(dir);
}

#define CLI_CASES(X) \
    X("cli-cfg-matches-c",        test_cfg_matches_c) \
    X("cli-prototxt-matches-cfg", test_prototxt_matches_cfg) \
    X("cli-bad-nets",             test_bad_nets) \
    X("cli-input-override",       test_input_override) \
    X("cli-json",                 test_json) \
    X("cli-json-utf8",            test_json_utf8) \
    X("cli-csv-md",               test_csv_md) \
    X("cli-analyze-views",        test_analyze_views) \
    X("cli-analyze-export-blocks", test_analyze_export_blocks) \
    X("space-bad",                test_bad_spaces) \
    X("space-thesis",             test_space_thesis) \
    X("space-canonical",          test_space_canonical_limits) \
    X("space-sample",             test_space_sample) \
    X("space-dataset",            test_space_dataset) \
    X("space-find-id",            test_space_find_id) \
    X("space-fire-dropout",       test_space_fire_dropout) \
    X("space-doc-keys",           test_space_doc_keys) \
    X("space-roundtrip",          test_space_roundtrip) \
    X("sweep-dir",                test_sweep_dir) \
    X("cli-ckpt-fit",             test_ckpt_fit) \
    X("cli-options-help",         test_options_help) \
    X("cli-usage-docs",           test_usage_docs) \
    X("cli-rate-cache",           test_rate_cache) \
    X("cli-options-one-range",    test_options_one_range) \
    X("cli-early-stop",           test_early_stop) \
    X("cli-train-log",            test_train_log) \
    X("cli-deep-nets",            test_deep_nets) \
    X("cli-eval-folder",          test_eval_folder) \
    X("cli-import-classes",       test_import_classes) \
    X("cli-import-onnx-finetune", test_import_onnx_finetune) \
    X("cli-export-ckpt",          test_export_ckpt) \
    X("cli-eval-bf16",            test_eval_bf16) \
    X("cli-bf16-acts",            test_bf16_acts_concat) \
    X("cli-compress",             test_compress) \
    X("opts-recipe-real",         test_recipe_real) \
    X("opts-recipe-help",         test_recipe_help) \
    X("opts-bind-tables",         test_bind_tables) \
    X("opts-bind-values",         test_bind_values) \
    X("opts-line-int",            test_line_int) \
    X("opts-list-path",           test_list_path) \
    X("opts-many-positionals",    test_many_positionals)

#define CLI_CASE_DECLARE(id, fn) void fn(void);
CLI_CASES(CLI_CASE_DECLARE)

static const struct check_case cases[] = {
#define CLI_CASE_ROW(id, fn) { id, fn },
    CLI_CASES(CLI_CASE_ROW)
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
