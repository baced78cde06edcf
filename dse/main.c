/* main.c: the dse command. Parses arguments, calls the library modules, prints their
 * errors as "file:line: message" and picks the exit code: 0 success, 2 bad input
 * (usage, network file, shapes), 1 anything else. docs/cli.md describes every command. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dse/netfile.h"
#include "dse/report.h"

#define EXIT_BAD_INPUT 2

static const char usage_main[] =
    "usage: dse <command> [options]\n"
    "\n"
    "Design-space exploration of SqueezeNet-family CNNs (Iandola's thesis).\n"
    "\n"
    "commands:\n"
    "  analyze NET      closed-form params, FLOPs, activations, memory of a network\n"
    "  diff BASE VAR    per-layer ratios between two networks and the reach of the change\n"
    "  help [COMMAND]   this text, or a command's options\n"
    "\n"
    "NET is a dse network file (.cfg, docs/network-format.md) or Caffe prototxt.\n"
    "Run 'dse COMMAND --help' for a command's options. Exit status: 0 ok, 2 bad input, 1 other errors.\n";

static const char usage_analyze[] =
    "usage: dse analyze NET [--batch N] [--format table|json|csv|md] [--expand]\n"
    "                       [--input C,H,W]\n"
    "\n"
    "Closed-form cost of a network: per layer the output shape, params (weights + biases),\n"
    "FLOPs (2 per multiply-add, conv and fc), activations and receptive field; totals,\n"
    "model size, training FLOPs (3x forward) and memory estimates for inference and training.\n"
    "\n"
    "  --batch N        images per batch (default 1)\n"
    "  --format F       table (default), json (docs/json.md), csv or md\n"
    "  --expand         one row per primitive layer instead of one per Fire module\n"
    "  --input C,H,W    override the network's input shape (e.g. 3,454,454)\n";

static const char usage_diff[] =
    "usage: dse diff BASE VARIANT [--batch N] [--format table|json|csv|md] [--expand]\n"
    "\n"
    "Compare two networks layer by layer (matched by name), as thesis Tables 4.3-4.8:\n"
    "ratios variant/base of output size, params and FLOPs, added and removed layers,\n"
    "totals, and the reach of the change: local (the changed layer and at most its\n"
    "successor), regional, or global (reaches the last layer).\n"
    "\n"
    "  --batch N        images per batch (default 1)\n"
    "  --format F       table (default), json, csv or md\n"
    "  --expand         compare primitive layers instead of whole Fire modules\n";

struct opts {
    const char     *pos[4];
    int             n_pos;
    long long       batch;
    enum dse_format fmt;
    int             expand;
    int             help;
    struct dse_input_shape input;
};

static int bad_usage(const char *cmd, const char *fmt, const char *arg) {
    fprintf(stderr, "dse %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nRun 'dse %s --help' for usage.\n", cmd);
    return EXIT_BAD_INPUT;
}

static int parse_ll(const char *s, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* "C,H,W" with each from 1 to DSE_DIM_MAX. 0 on success. */
static int parse_shape(const char *s, struct dse_input_shape *out) {
    long long v[3];
    char part[32];
    for (int i = 0; i < 3; i++) {
        size_t n = strcspn(s, ",");
        if (n == 0 || n >= sizeof part || (i < 2 && s[n] != ',') || (i == 2 && s[n] != '\0'))
            return -1;
        memcpy(part, s, n);
        part[n] = '\0';
        if (parse_ll(part, 1, DSE_DIM_MAX, &v[i])) return -1;
        s += n + (i < 2);
    }
    *out = (struct dse_input_shape){ (int)v[0], (int)v[1], (int)v[2] };
    return 0;
}

/* Returns -1 on success, else the exit code to return. */
static int parse_opts(const char *cmd, int argc, char **argv, int max_pos, struct opts *o) {
    memset(o, 0, sizeof *o);
    o->batch = 1;
    int only_files = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        char key[32];
        if (!only_files && !strcmp(a, "--")) {
            only_files = 1;
            continue;
        }
        if (only_files || a[0] != '-' || a[1] == '\0') {
            if (o->n_pos >= max_pos) return bad_usage(cmd, "unexpected argument '%s'", a);
            o->pos[o->n_pos++] = a;
            continue;
        }
        const char *eq = strchr(a, '=');
        size_t klen = eq ? (size_t)(eq - a) : strlen(a);
        if (klen >= sizeof key) return bad_usage(cmd, "unknown option '%s'", a);
        memcpy(key, a, klen);
        key[klen] = '\0';
        int flag = !strcmp(key, "--help") || !strcmp(key, "-h") || !strcmp(key, "--expand");
        if (flag && eq) return bad_usage(cmd, "option '%s' takes no value", key);
        if (!strcmp(key, "--help") || !strcmp(key, "-h")) {
            o->help = 1;
            continue;
        }
        if (!strcmp(key, "--expand")) {
            o->expand = 1;
            continue;
        }
        int takes = !strcmp(key, "--batch") || !strcmp(key, "--format") ||
                    (!strcmp(key, "--input") && !strcmp(cmd, "analyze"));
        if (!takes) return bad_usage(cmd, "unknown option '%s'", a);
        if (eq) val = eq + 1;
        else if (i + 1 < argc) val = argv[++i];
        else return bad_usage(cmd, "option '%s' needs a value", key);
        if (!strcmp(key, "--batch")) {
            if (parse_ll(val, 1, 1000000000LL, &o->batch))
                return bad_usage(cmd, "--batch '%s' is not an integer from 1 to 10^9", val);
        } else if (!strcmp(key, "--format")) {
            if (dse_format_from_str(val, &o->fmt))
                return bad_usage(cmd, "--format '%s' is not one of table, json, csv, md", val);
        } else if (parse_shape(val, &o->input)) {
            return bad_usage(cmd, "--input '%s' is not C,H,W with integers from 1 to 16777216 "
                             "(e.g. 3,227,227)", val);
        }
    }
    return -1;
}

static int fail(const struct dse_err *err) {
    char buf[512];
    fprintf(stderr, "dse: %s\n", dse_err_format(err, buf, sizeof buf));
    return (err->code == DSE_ERR_NOMEM || err->code == DSE_ERR_INTERNAL) ? 1 : EXIT_BAD_INPUT;
}

static int cmd_analyze(int argc, char **argv) {
    struct opts o;
    struct dse_err err = { 0 };
    struct dse_net net;
    int rc = parse_opts("analyze", argc, argv, 1, &o);
    if (rc >= 0) return rc;
    if (o.help) return fputs(usage_analyze, stdout), 0;
    if (o.n_pos != 1) return bad_usage("analyze", "expected one network file%s", "");
    if (dse_netfile_load(o.pos[0], &o.input, &net, &err)) return fail(&err);
    if (dse_report_analyze(stdout, o.pos[0], &net, o.batch, o.expand, o.fmt, &err)) rc = fail(&err);
    else rc = 0;
    dse_net_deinit(&net);
    return rc;
}

static int cmd_diff(int argc, char **argv) {
    struct opts o;
    struct dse_err err = { 0 };
    struct dse_net base, var;
    int rc = parse_opts("diff", argc, argv, 2, &o);
    if (rc >= 0) return rc;
    if (o.help) return fputs(usage_diff, stdout), 0;
    if (o.n_pos != 2) return bad_usage("diff", "expected two network files: BASE VARIANT%s", "");
    if (dse_netfile_load(o.pos[0], NULL, &base, &err)) return fail(&err);
    if (dse_netfile_load(o.pos[1], NULL, &var, &err)) {
        dse_net_deinit(&base);
        return fail(&err);
    }
    rc = dse_report_diff(stdout, o.pos[0], &base, o.pos[1], &var, o.batch, o.expand, o.fmt, &err)
             ? fail(&err) : 0;
    dse_net_deinit(&base);
    dse_net_deinit(&var);
    return rc;
}

static int run(int argc, char **argv);

/* Output that did not reach its file is a failure, not a silent success (> /dev/full). */
int main(int argc, char **argv) {
    int rc = run(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "dse: cannot write the output: %s\n", strerror(errno));
        return 1;
    }
    return rc;
}

static int run(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_BAD_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) return fputs(usage_main, stdout), 0;
    if (!strcmp(cmd, "--version")) return puts("dse 0.1.0"), 0;
    if (!strcmp(cmd, "help")) {
        if (argc > 2 && !strcmp(argv[2], "analyze")) return fputs(usage_analyze, stdout), 0;
        if (argc > 2 && !strcmp(argv[2], "diff")) return fputs(usage_diff, stdout), 0;
        if (argc > 2) {
            fprintf(stderr, "dse help: unknown command '%s'\n\n%s", argv[2], usage_main);
            return EXIT_BAD_INPUT;
        }
        return fputs(usage_main, stdout), 0;
    }
    if (!strcmp(cmd, "analyze")) return cmd_analyze(argc - 2, argv + 2);
    if (!strcmp(cmd, "diff")) return cmd_diff(argc - 2, argv + 2);
    fprintf(stderr, "dse: unknown command '%s'\n\n%s", cmd, usage_main);
    return EXIT_BAD_INPUT;
}
