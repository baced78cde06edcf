/* test_cli.c: the dse/ module: network files agree with the networks built in C, every
 * bad network file gives its exact path:line message, and the reports are well formed.
 * Runs from the repository root (ctest sets the working directory). */
#include "dse/netfile.h"

#include <ctype.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "dse/report.h"
#include "tests/check.h"
#include "tests/nets.h"

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
    struct dse_input_shape ov = { 0, 454, 454 };
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

static void test_csv_md(void) {
    char *s = report("experiments/nin_local_global/nin.cfg", NULL, DSE_FORMAT_CSV, 1024, 0);
    CHECK(!strncmp(s, "layer,type,output,params,FLOPs,activations,RF,weights,biases,other_ops\n", 70));
    CHECK(strstr(s, "\nconv1,conv,96x55x55,34944,215890329600,297369600,11,34848,96,") != NULL);
    CHECK(strstr(s, "\ntotal,,,7595176,2265080463360,") != NULL);
    free(s);
    s = report("experiments/squeezenet/squeezenet_v1.0.cfg", NULL, DSE_FORMAT_MD, 1, 1);
    CHECK(strstr(s, "| fire2/expand3x3 ") != NULL);
    CHECK(strstr(s, "|---") != NULL);
    free(s);
}

static const struct check_case cases[] = {
    { "cli-cfg-matches-c",        test_cfg_matches_c },
    { "cli-prototxt-matches-cfg", test_prototxt_matches_cfg },
    { "cli-bad-nets",             test_bad_nets },
    { "cli-input-override",       test_input_override },
    { "cli-json",                 test_json },
    { "cli-csv-md",               test_csv_md },
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
