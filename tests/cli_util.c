/* cli_util.c: what test_cli's files share (cli_util.h); and check.h's counts, one set for both. */
#include "tests/cli_util.h"

int check_failures, check_count, check_skips;

/* Same layers, shapes and costs. */
void check_same_net(const struct dse_net *a, const struct dse_net *b, const char *what) {
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

/* A strict little JSON checker: returns the position after one value, or NULL. */
const char *json_value(const char *p);
const char *json_ws(const char *p) {
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
const char *json_value(const char *p) {
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

const char *tmpdir(void) {
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/dse_test_cli.XXXXXX");
    return mkdtemp(dir);
}

void write_text(const char *path, const char *text) {
    CHECK_OK(dse_fs_write_atomic(path, text, strlen(text), NULL));
}

char *usage_text(const struct dse_opt_cmd *c) {
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CHECK(f != NULL);
    if (!f) return calloc(1, 1);
    dse_opts_usage(f, c);
    fclose(f);
    return text;
}
