/* main.c: the dse command. Parses arguments, calls the library modules, prints their
 * errors as "file:line: message" and picks the exit code: 0 success, 2 bad input
 * (usage, network or space file, shapes), 1 anything else. docs/cli.md describes every
 * command. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "base/fs.h"
#include "dse/netfile.h"
#include "dse/report.h"
#include "dse/space.h"
#include "dse/sweep.h"

#define EXIT_BAD_INPUT 2

static const char usage_main[] =
    "usage: dse <command> [options]\n"
    "\n"
    "Design-space exploration of SqueezeNet-family CNNs (Iandola's thesis).\n"
    "\n"
    "commands:\n"
    "  analyze NET          closed-form params, FLOPs, activations, memory of a network\n"
    "  diff BASE VARIANT    per-layer ratios between two networks and the reach of the change\n"
    "  count SPACE          how many candidates a design space holds\n"
    "  generate SPACE       write candidate networks as .cfg or Caffe prototxt\n"
    "  sweep SPACE          cost every candidate of a space into a sweep directory\n"
    "  report DIR           candidates and Pareto frontier of a sweep; SVG plot\n"
    "  help [COMMAND]       this text, or a command's options\n"
    "\n"
    "NET is a dse network file (.cfg, docs/network-format.md) or Caffe prototxt; SPACE is a\n"
    "design-space file (docs/space-format.md).\n"
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

static const char usage_count[] =
    "usage: dse count SPACE\n"
    "\n"
    "The number of candidates in a design space, without enumerating them: the product\n"
    "of the number of values of each metaparameter (thesis 4.7), each factor shown.\n";

static const char usage_generate[] =
    "usage: dse generate SPACE [--index K | --all] [--format cfg|prototxt] [--out DIR]\n"
    "\n"
    "Write candidate networks of a design space. --index K (default 0) writes candidate K\n"
    "of the grid to standard output; --all writes every candidate the space covers (its\n"
    "sample, if it has one) to DIR/<id>.cfg or DIR/<id>.prototxt.\n"
    "\n"
    "  --index K        grid index, 0 to count - 1\n"
    "  --all            every candidate; needs --out\n"
    "  --format F       cfg (default; docs/network-format.md) or prototxt (Caffe)\n"
    "  --out DIR        directory for --all (created if missing)\n";

static const char usage_sweep[] =
    "usage: dse sweep SPACE --analytic-only [--out DIR]\n"
    "\n"
    "Generate and cost every candidate of a design space (or its sample), prune by the\n"
    "space's constraints, and record each candidate in DIR (default sweeps/<space name>):\n"
    "a stable id, metaparameters, params, model size, FLOPs, training-memory estimate and\n"
    "status (docs/sweep-dir.md). Several processes and machines can share DIR.\n"
    "\n"
    "  --analytic-only  cost only (training sweeps come with the training engine)\n"
    "  --out DIR        the sweep directory\n";

static const char usage_report[] =
    "usage: dse report DIR [--format md|csv|tex|json] [--plot FILE.svg]\n"
    "\n"
    "All candidates of a sweep directory and the Pareto frontier: maximize accuracy and\n"
    "minimize model size once candidates are trained, before that minimize model size\n"
    "and FLOPs. docs/report.md describes the formats.\n"
    "\n"
    "  --format F       md (default), csv, tex or json\n"
    "  --plot FILE.svg  also draw accuracy (or FLOPs) against model size\n";

/* Options of a command: the flags it takes and the options that take a value. */
struct cmd {
    const char *name;
    int         min_pos, max_pos;
    const char *flags;   /* space-separated */
    const char *valued;  /* space-separated */
    const char *usage;
    int (*run)(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags);
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

/* Index of word in a space-separated list, or -1. */
static int word_index(const char *list, const char *word) {
    int i = 0;
    size_t n = strlen(word);
    for (const char *p = list; *p; i++) {
        size_t m = strcspn(p, " ");
        if (m == n && !strncmp(p, word, n)) return i;
        p += m;
        while (*p == ' ') p++;
    }
    return -1;
}

static int fail(const struct dse_err *err) {
    char buf[1024];
    fprintf(stderr, "dse: %s\n", dse_err_format(err, buf, sizeof buf));
    return (err->code == DSE_ERR_NOMEM || err->code == DSE_ERR_INTERNAL) ? 1 : EXIT_BAD_INPUT;
}

/* Shared option readers: on a bad value they print the usage error and return its code. */
static int opt_batch(const char *cmd, const char *v, long long *batch) {
    *batch = 1;
    if (v && parse_ll(v, 1, 1000000000LL, batch))
        return bad_usage(cmd, "--batch '%s' is not an integer from 1 to 10^9", v);
    return -1;
}

static int opt_format(const char *cmd, const char *v, const char *allowed, enum dse_format dflt,
                      enum dse_format *fmt) {
    *fmt = dflt;
    if (v && (word_index(allowed, v) < 0 || dse_format_from_str(v, fmt))) {
        char msg[160];
        snprintf(msg, sizeof msg, "--format '%%s' is not one of: %s", allowed);
        return bad_usage(cmd, msg, v);
    }
    return -1;
}

#define FLAG(name) (word_index(flags, name) >= 0)

static int cmd_analyze(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_err err = { 0 };
    struct dse_net net;
    struct dse_input_shape in = { 0, 0, 0 };
    long long batch;
    enum dse_format fmt;
    int rc;
    (void)n_pos;
    if ((rc = opt_batch(c->name, vals[0], &batch)) >= 0) return rc;
    if ((rc = opt_format(c->name, vals[1], "table json csv md", DSE_FORMAT_TABLE, &fmt)) >= 0) return rc;
    if (vals[2] && parse_shape(vals[2], &in))
        return bad_usage(c->name, "--input '%s' is not C,H,W with integers from 1 to 16777216 "
                                  "(e.g. 3,227,227)", vals[2]);
    if (dse_netfile_load(pos[0], &in, &net, &err)) return fail(&err);
    rc = dse_report_analyze(stdout, pos[0], &net, batch, FLAG("--expand"), fmt, &err) ? fail(&err) : 0;
    dse_net_deinit(&net);
    return rc;
}

static int cmd_diff(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_err err = { 0 };
    struct dse_net base, var;
    long long batch;
    enum dse_format fmt;
    int rc;
    (void)n_pos;
    if ((rc = opt_batch(c->name, vals[0], &batch)) >= 0) return rc;
    if ((rc = opt_format(c->name, vals[1], "table json csv md", DSE_FORMAT_TABLE, &fmt)) >= 0) return rc;
    if (dse_netfile_load(pos[0], NULL, &base, &err)) return fail(&err);
    if (dse_netfile_load(pos[1], NULL, &var, &err)) {
        dse_net_deinit(&base);
        return fail(&err);
    }
    rc = dse_report_diff(stdout, pos[0], &base, pos[1], &var, batch, FLAG("--expand"), fmt, &err)
             ? fail(&err) : 0;
    dse_net_deinit(&base);
    dse_net_deinit(&var);
    return rc;
}

static int cmd_count(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_space s;
    struct dse_err err = { 0 };
    (void)c, (void)n_pos, (void)vals, (void)flags;
    if (dse_space_load(pos[0], &s, &err)) return fail(&err);
    printf("%s: ", s.name);
    int any = 0;
    for (int k = 0; k < DSE_AX_COUNT; k++)
        if (s.axes[k].n > 1) {
            printf("%s%s %d", any ? " x " : "", dse_axis_name((enum dse_axis_key)k), s.axes[k].n);
            any = 1;
        }
    if (s.count_overflow) printf("%s= more than 2^64 candidates\n", any ? " " : "");
    else printf("%s%llu candidate%s\n", any ? " = " : "", (unsigned long long)s.count, s.count == 1 ? "" : "s");
    if (s.sample > 0)
        printf("sample = %lld (seed %llu): a sweep covers %llu of them\n", (long long)s.sample,
               (unsigned long long)s.seed,
               (unsigned long long)(!s.count_overflow && (uint64_t)s.sample > s.count ? s.count : (uint64_t)s.sample));
    dse_space_free(&s);
    return 0;
}

static enum dse_status write_candidate(FILE *f, const struct dse_space *s, uint64_t k, int prototxt,
                                       struct dse_net *net, struct dse_err *err) {
    struct dse_mp mp;
    char id[16];
    enum dse_status st;
    dse_space_candidate(s, k, &mp);
    if ((st = dse_space_build(s, &mp, net, err))) return st;
    dse_space_id(&mp, id);
    snprintf(net->name, sizeof net->name, "%.70s_%s", s->name, id);
    return prototxt ? dse_prototxt_write(f, net, err) : dse_netcfg_write(f, net, err);
}

static int cmd_generate(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_space s;
    struct dse_err err = { 0 };
    struct dse_net net;
    long long index = 0;
    int prototxt = 0, rc = 0;
    (void)n_pos;
    if (vals[1] && strcmp(vals[1], "cfg") && strcmp(vals[1], "prototxt"))
        return bad_usage(c->name, "--format '%s' is not one of: cfg prototxt", vals[1]);
    prototxt = vals[1] && !strcmp(vals[1], "prototxt");
    if (FLAG("--all") && vals[0]) return bad_usage(c->name, "give --index or --all, not both%s", "");
    if (FLAG("--all") && !vals[2]) return bad_usage(c->name, "--all needs --out DIR%s", "");
    if (vals[0] && parse_ll(vals[0], 0, INT64_MAX, &index))
        return bad_usage(c->name, "--index '%s' is not an integer >= 0", vals[0]);
    if (dse_space_load(pos[0], &s, &err)) return fail(&err);
    dse_net_init(&net, s.name, 1, 1, 1);
    if (!FLAG("--all")) {
        if (!s.count_overflow && (uint64_t)index >= s.count) {
            fprintf(stderr, "dse generate: --index %lld is out of range; the space has %llu candidates "
                            "(0 to %llu)\n", index, (unsigned long long)s.count, (unsigned long long)s.count - 1);
            rc = EXIT_BAD_INPUT;
        } else if (write_candidate(stdout, &s, (uint64_t)index, prototxt, &net, &err)) {
            rc = fail(&err);
        }
    } else {
        uint64_t *idx = NULL, n = 0;
        if (dse_space_indices(&s, 1000000, &idx, &n, &err) || dse_fs_mkdirs(vals[2], &err)) {
            rc = fail(&err);
        } else {
            for (uint64_t i = 0; i < n && !rc; i++) {
                struct dse_mp mp;
                char id[16], path[4096], *buf = NULL;
                size_t len = 0;
                dse_space_candidate(&s, idx[i], &mp);
                dse_space_id(&mp, id);
                snprintf(path, sizeof path, "%s/%s.%s", vals[2], id, prototxt ? "prototxt" : "cfg");
                FILE *m = open_memstream(&buf, &len);
                if (!m) {
                    rc = 1;
                    break;
                }
                enum dse_status st = write_candidate(m, &s, idx[i], prototxt, &net, &err);
                fclose(m);
                if (st || dse_fs_write_atomic(path, buf, len, &err)) rc = fail(&err);
                free(buf);
            }
            if (!rc) fprintf(stderr, "dse generate: wrote %llu networks to %s\n", (unsigned long long)n, vals[2]);
        }
        free(idx);
    }
    dse_net_deinit(&net);
    dse_space_free(&s);
    return rc;
}

static int cmd_sweep(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_space s;
    struct dse_err err = { 0 };
    struct dse_sweep_summary sum;
    char dir[4096];
    (void)n_pos;
    if (!FLAG("--analytic-only"))
        return bad_usage(c->name, "training sweeps arrive with the training engine (issues #4, #5); "
                                  "use --analytic-only to cost the candidates%s", "");
    if (dse_space_load(pos[0], &s, &err)) return fail(&err);
    snprintf(dir, sizeof dir, "%s", vals[0] ? vals[0] : "sweeps/");
    if (!vals[0]) strncat(dir, s.name, sizeof dir - strlen(dir) - 1);
    int rc = dse_sweep_analytic(&s, dir, isatty(2) ? stderr : NULL, &sum, &err) ? fail(&err) : 0;
    if (!rc)
        printf("%s: %llu candidates in %s: %llu kept, %llu pruned by constraints%s\n", s.name,
               (unsigned long long)sum.candidates, dir, (unsigned long long)sum.kept,
               (unsigned long long)sum.pruned, sum.skipped ? " (trained ones left as they were)" : "");
    dse_space_free(&s);
    return rc;
}

static int cmd_report(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_err err = { 0 };
    enum dse_format fmt;
    int rc;
    (void)n_pos, (void)flags;
    if ((rc = opt_format(c->name, vals[0], "md csv tex json", DSE_FORMAT_MD, &fmt)) >= 0) return rc;
    return dse_report_sweep(stdout, pos[0], fmt, vals[1], &err) ? fail(&err) : 0;
}

static const struct cmd cmds[] = {
    { "analyze",  1, 1, "--expand",               "--batch --format --input", usage_analyze,  cmd_analyze },
    { "diff",     2, 2, "--expand",               "--batch --format",         usage_diff,     cmd_diff },
    { "count",    1, 1, "",                       "",                         usage_count,    cmd_count },
    { "generate", 1, 1, "--all",                  "--index --format --out",   usage_generate, cmd_generate },
    { "sweep",    1, 1, "--analytic-only",        "--out",                    usage_sweep,    cmd_sweep },
    { "report",   1, 1, "",                       "--format --plot",          usage_report,   cmd_report },
};

static int run_cmd(const struct cmd *c, int argc, char **argv) {
    const char *pos[4];
    char *vals[8] = { 0 };
    char flags[256] = "";
    int n_pos = 0, only_files = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        char key[32];
        if (!only_files && !strcmp(a, "--")) {
            only_files = 1;
            continue;
        }
        if (only_files || a[0] != '-' || a[1] == '\0') {
            if (n_pos >= c->max_pos) return bad_usage(c->name, "unexpected argument '%s'", a);
            pos[n_pos++] = a;
            continue;
        }
        const char *eq = strchr(a, '=');
        size_t klen = eq ? (size_t)(eq - a) : strlen(a);
        if (klen >= sizeof key) return bad_usage(c->name, "unknown option '%s'", a);
        memcpy(key, a, klen);
        key[klen] = '\0';
        if (!strcmp(key, "-h")) strcpy(key, "--help");
        if (!strcmp(key, "--help") || word_index(c->flags, key) >= 0) {
            if (eq) return bad_usage(c->name, "option '%s' takes no value", key);
            if (!strcmp(key, "--help")) return fputs(c->usage, stdout), 0;
            if (strlen(flags) + strlen(key) + 2 < sizeof flags) strcat(strcat(flags, " "), key);
            continue;
        }
        int v = word_index(c->valued, key);
        if (v < 0) return bad_usage(c->name, "unknown option '%s'", a);
        if (eq) vals[v] = (char *)eq + 1;
        else if (i + 1 < argc) vals[v] = argv[++i];
        else return bad_usage(c->name, "option '%s' needs a value", key);
    }
    if (n_pos < c->min_pos) {
        char msg[128];
        snprintf(msg, sizeof msg, "expected %s%%s", c->min_pos == 2 ? "two files: BASE VARIANT" :
                 !strcmp(c->name, "report") ? "a sweep directory" :
                 !strcmp(c->name, "analyze") ? "one network file" : "a space file");
        return bad_usage(c->name, msg, "");
    }
    return c->run(c, pos, n_pos, vals, flags);
}

static int run(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_BAD_INPUT;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) return fputs(usage_main, stdout), 0;
    if (!strcmp(name, "--version")) return puts("dse 0.1.0 (backends: cpu analysis only)"), 0;
    if (!strcmp(name, "help")) {
        if (argc == 2) return fputs(usage_main, stdout), 0;
        name = argv[2];
        for (int i = 0; i < DSE_ARRAY_LEN(cmds); i++)
            if (!strcmp(name, cmds[i].name)) return fputs(cmds[i].usage, stdout), 0;
        fprintf(stderr, "dse help: unknown command '%s'\n\n%s", name, usage_main);
        return EXIT_BAD_INPUT;
    }
    for (int i = 0; i < DSE_ARRAY_LEN(cmds); i++)
        if (!strcmp(name, cmds[i].name)) return run_cmd(&cmds[i], argc - 2, argv + 2);
    fprintf(stderr, "dse: unknown command '%s'\n\n%s", name, usage_main);
    return EXIT_BAD_INPUT;
}

/* Output that did not reach its file is a failure, not a silent success (> /dev/full). */
int main(int argc, char **argv) {
    int rc = run(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "dse: cannot write the output: %s\n", strerror(errno));
        return 1;
    }
    return rc;
}
