/* test_cli.c: the dse/ module: network files agree with the networks built in C, every
 * bad network file gives its exact path:line message, and the reports are well formed.
 * Runs from the repository root (ctest sets the working directory). */
#include "netfile/netfile.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "base/fs.h"
#include "dse/options.h"
#include "dse/ratecache.h"
#include "engine/model.h"
#include "engine/train.h"
#include "dse/report.h"
#include "dse/trainlog.h"
#include "sweep/json_read.h"
#include "sweep/space.h"
#include "sweep/sweep.h"
#include "metaparams/metaparams.h"
#include "tests/check.h"
#include "tests/nets.h"
#include "tests/testfs.h"

/* Same layers, shapes and costs. */
static void check_same_net(const struct dse_net *a, const struct dse_net *b, const char *what) {
    int before = check_failures;
    CHECK_INT_EQ(a->n_layers, b->n_layers);
    CHECK_INT_EQ(a->in_c, b->in_c);
    CHECK_INT_EQ(a->in_h, b->in_h);
    if (a->n_layers == b->n_layers) {
        struct dse_cost_layer *ca = calloc((size_t)a->n_layers, sizeof *ca);
        struct dse_cost_layer *cb = calloc((size_t)b->n_layers, sizeof *cb);
        struct dse_cost_totals ta, tb;
        CHECK_OK(dse_cost_net(a, 8, ca, &ta, NULL));
        CHECK_OK(dse_cost_net(b, 8, cb, &tb, NULL));
        for (int i = 0; i < a->n_layers; i++) {
            CHECK_STR_EQ(a->layers[i].name, b->layers[i].name);
            CHECK_INT_EQ(a->layers[i].type, b->layers[i].type);
            CHECK_INT_EQ(a->layers[i].out_c, b->layers[i].out_c);
            CHECK_INT_EQ(a->layers[i].out_h, b->layers[i].out_h);
            CHECK_INT_EQ(a->layers[i].out_w, b->layers[i].out_w);
            CHECK_INT_EQ(ca[i].params, cb[i].params);
            CHECK_INT_EQ(ca[i].flops, cb[i].flops);
            CHECK_INT_EQ(ca[i].activations, cb[i].activations);
        }
        CHECK_INT_EQ(ta.mem_infer_bytes, tb.mem_infer_bytes);
        free(ca);
        free(cb);
    }
    if (check_failures > before) fprintf(stderr, "  (networks: %s)\n", what);
}

static void test_cfg_matches_c(void) {
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
static void test_prototxt_matches_cfg(void) {
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
static void test_bad_nets(void) {
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
          "tests/bad_nets/not_a_network.txt: unknown network file type; expected a .cfg (dse network) or .prototxt "
          "(Caffe) file", DSE_ERR_CONFIG },
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

static void test_input_override(void) {
    struct dse_net a, b;
    struct dse_input_shape ov = { .c = 0, .h = 454, .w = 454 };
    CHECK_OK(dse_netfile_load("experiments/nin_local_global/nin.cfg", &ov, &a, NULL));
    CHECK_OK(dse_netfile_load("experiments/nin_local_global/nin_input454.cfg", NULL, &b, NULL));
    check_same_net(&a, &b, "nin.cfg --input 3,454,454 vs nin_input454.cfg");
    dse_net_deinit(&a);
    dse_net_deinit(&b);
}

/* A strict little JSON checker: returns the position after one value, or NULL. */
static const char *json_value(const char *p);
static const char *json_ws(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}
static const char *json_string(const char *p) {
    if (*p++ != '"') return NULL;
    for (; *p && *p != '"'; p++) {
        if ((unsigned char)*p < 0x20) return NULL;
        if (*p == '\\' && !*++p) return NULL;
    }
    return *p == '"' ? p + 1 : NULL;
}
static const char *json_value(const char *p) {
    p = json_ws(p);
    if (*p == '"') return json_string(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = json_ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                if (!(p = json_string(json_ws(p)))) return NULL;
                p = json_ws(p);
                if (*p++ != ':') return NULL;
            }
            if (!(p = json_value(p))) return NULL;
            p = json_ws(p);
            if (*p == close) return p + 1;
            if (*p++ != ',') return NULL;
        }
    }
    if (!strncmp(p, "true", 4)) return p + 4;
    if (!strncmp(p, "false", 5)) return p + 5;
    if (!strncmp(p, "null", 4)) return p + 4;
    const char *s = p;
    if (*p == '-') p++;
    while (isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-') p++;
    return p > s ? p : NULL;
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

static void test_json(void) {
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
static void test_json_utf8(void) {
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

static void test_csv_md(void) {
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

/* ---- design spaces (issue #3) ------------------------------------------------------ */

static void test_bad_spaces(void) {
    static const struct { const char *path, *msg; } bad[] = {
        { "tests/bad_spaces/sr_range.cfg",
          "tests/bad_spaces/sr_range.cfg:3: sr = 1.5 is out of range; expected 0 < sr <= 1" },
        { "tests/bad_spaces/search_strategy.cfg",
          "tests/bad_spaces/search_strategy.cfg:3: strategy = \"genetic\"; expected one of: grid random evolution" },
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
          "budget = 4 does not apply; give strategy = \"random\" or \"evolution\" with it" },
        { "tests/bad_spaces/search_objective.cfg",
          "tests/bad_spaces/search_objective.cfg:4: objectives: \"latency\" is not a cost; expected some of: params, "
          "model_mb, flops, macs, train_mem_mib, latency_ms (top-1 is always the first objective)" },
        { "tests/bad_spaces/search_sample.cfg",
          "tests/bad_spaces/search_sample.cfg:4: sample = 2 and strategy \"random\" both choose the candidates; give "
          "one (strategy \"random\" with budget = N draws N, as sample = N did)" },
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
static void test_space_canonical_limits(void) {
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

static void test_space_thesis(void) {
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

static const char *tmpdir(void) {
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/dse_test_cli.XXXXXX");
    return mkdtemp(dir);
}

static void write_text(const char *path, const char *text) {
    CHECK_OK(dse_fs_write_atomic(path, text, strlen(text), NULL));
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

static void test_space_dataset(void) {
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

static void test_space_sample(void) {
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
static void test_space_fire_dropout(void) {
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
static void test_space_doc_keys(void) {
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

static void test_space_find_id(void) {
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
static void test_space_roundtrip(void) {
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

static void test_sweep_dir(void) {
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

/* dse eval, predict and export fit NET from its checkpoint (issue #31): a network trained with
 * --input 3,32,32 --classes 3 loads from its file again without those flags, with them
 * overriding what the checkpoint says; the file alone is another network. */
static void test_ckpt_fit(void) {
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
static void test_rate_cache(void) {
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
static void test_usage_docs(void) {
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
static void test_options_help(void) {
    for (int k = 0; k < DSE_CMD_COUNT; k++) {
        const struct dse_opt_cmd *c = &dse_opt_cmds[k];
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        CHECK(f != NULL);
        if (!f) return;
        dse_opts_usage(f, c);
        fclose(f);
        CHECK(!strncmp(text, "usage: dse ", 11));
        const char *opts = text + strlen(c->usage); /* the option lines, not the usage line above */
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
static void test_options_one_range(void) {
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
static void test_early_stop(void) {
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
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    if (!f) return;
    dse_opts_usage(f, c);
    fclose(f);
    CHECK(text && strstr(text, "[--early-stop none|sh|asha]"));
    CHECK(text && strstr(text, "(bit-for-bit reproducible)"));
    CHECK(text && strstr(text, "so only a 1-worker sweep repeats"));
    free(text);
}

/* A deep net reads in linear time (issue #18 item 4: a 200,000-layer .cfg was still being
 * read after 120 s, its name checks quadratic): 200,000 convs written as .cfg and as
 * prototxt, each read back within 60 s (about 2 s in the normal build). */
static void test_deep_nets(void) {
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
static void test_train_log(void) {
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
static void test_eval_folder(void) {
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

static const struct check_case cases[] = {
    { "cli-cfg-matches-c",        test_cfg_matches_c },
    { "cli-prototxt-matches-cfg", test_prototxt_matches_cfg },
    { "cli-bad-nets",             test_bad_nets },
    { "cli-input-override",       test_input_override },
    { "cli-json",                 test_json },
    { "cli-json-utf8",            test_json_utf8 },
    { "cli-csv-md",               test_csv_md },
    { "space-bad",                test_bad_spaces },
    { "space-thesis",             test_space_thesis },
    { "space-canonical",          test_space_canonical_limits },
    { "space-sample",             test_space_sample },
    { "space-dataset",            test_space_dataset },
    { "space-find-id",            test_space_find_id },
    { "space-fire-dropout",       test_space_fire_dropout },
    { "space-doc-keys",           test_space_doc_keys },
    { "space-roundtrip",          test_space_roundtrip },
    { "sweep-dir",                test_sweep_dir },
    { "cli-ckpt-fit",             test_ckpt_fit },
    { "cli-options-help",         test_options_help },
    { "cli-usage-docs",           test_usage_docs },
    { "cli-rate-cache",           test_rate_cache },
    { "cli-options-one-range",    test_options_one_range },
    { "cli-early-stop",           test_early_stop },
    { "cli-train-log",            test_train_log },
    { "cli-deep-nets",            test_deep_nets },
    { "cli-eval-folder",          test_eval_folder },
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
