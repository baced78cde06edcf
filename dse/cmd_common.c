/* cmd_common.c: what the dse commands share: usage errors and their exit code, number and
 * shape parsing, error printing (dse/cmd.h). Moved from dse/main.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dse/cmd.h"

int bad_usage(const char *cmd, const char *fmt, const char *arg) {
    fprintf(stderr, "dse %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nRun 'dse %s --help' for usage.\n", cmd);
    return EXIT_BAD_INPUT;
}

int parse_ll(const char *s, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* --input C,H,W and --classes K: how to fit a network to data. -1, or the usage error's code. */
int opt_fit(const char *cmd, const struct dse_opt_args *a, struct dse_input_shape *in) {
    long long chw[3];
    memset(in, 0, sizeof *in);
    if (dse_opts_list(a, DSE_OPT_INPUT, chw, NULL, 3)) /* dse_opts_parse took C,H,W */
        in->c = (int)chw[0], in->h = (int)chw[1], in->w = (int)chw[2];
    in->classes = OPT_INT(CLASSES, 0);
    return -1;
}

int fail(const struct dse_err *err) {
    char buf[1024];
    fprintf(stderr, "dse: %s\n", dse_err_format(err, buf, sizeof buf));
    return (err->code == DSE_ERR_NOMEM || err->code == DSE_ERR_INTERNAL) ? 1 : EXIT_BAD_INPUT;
}

/* fail() for an error about a network read from net_path: a layer's line (the engine
 * refusing a layer type, a shape) is in that file. */
int fail_net(struct dse_err *err, const char *net_path) {
    if (err->line > 0) dse_err_name_file(err, net_path);
    return fail(err);
}

/* --format, checked against the command's words already: the format it names, else dflt. */
enum dse_format opt_format(const char *v, enum dse_format dflt) {
    enum dse_format fmt = dflt;
    if (v && dse_format_from_str(v, &fmt)) fmt = dflt;
    return fmt;
}

int opt_conv(const char *cmd, const char *v, int *algo) {
    if (!v || !strcmp(v, "auto")) return *algo = DSE_ALGO_AUTO, -1;
    for (int a = 0; a < DSE_CPU_CONV_COUNT; a++)
        if (!strcmp(v, dse_cpu_conv_algo_str(a))) return *algo = a, -1;
    char known[160] = "auto"; /* from the engine's table */
    for (int a = 0, o = 4; a < DSE_CPU_CONV_COUNT && o < (int)sizeof known; a++)
        o += snprintf(known + o, sizeof known - (size_t)o, ", %s", dse_cpu_conv_algo_str(a));
    char msg[240];
    snprintf(msg, sizeof msg, "--conv '%%s' is not one of %s", known);
    return bad_usage(cmd, msg, v);
}

/* --conv with --precision bf16 on the CPU: the bf16 convs take their path by a rule
 * (engine/cpu/conv_bf16.c), not the float32 strategies --conv names; a usage error
 * rather than an option silently ignored (dse train, bench, profile, sweep). -1: go on. */
int conv_in_bf16(const char *cmd, const char *conv, const struct dse_model_device_opts *d) {
    if (d->device.kind == DSE_DEVICE_CPU && d->math == DSE_CUDA_MATH_BF16 && conv && strcmp(conv, "auto"))
        return bad_usage(cmd, "--conv %s is a float32 conv strategy; in bf16 the CPU's convs take their own path "
                         "(leave --conv out)", conv);
    return -1;
}

double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* --progress-every S (seconds, 0 to 86400; 0: epoch lines only) into *seconds; -1 if good. */
int opt_progress_every(const char *cmd, const char *v, double *seconds) {
    char *end;
    double s = strtod(v, &end);
    if (end == v || *end || !(s >= 0) || s > 86400)
        return bad_usage(cmd, "--progress-every '%s' is not a number of seconds in [0, 86400] (0: epoch lines only)", v);
    *seconds = s;
    return -1;
}

/* --checkpoint-every N (steps), Ns or Nm: into *seconds or *steps (the other 0); -1 if good. */
int opt_ckpt_every(const char *cmd, const char *v, double *seconds, int *steps) {
    char *end;
    const double x = strtod(v, &end);
    const int unit = *end == 's' ? 1 : *end == 'm' ? 60 : 0;
    if (end == v || !(x >= 0) || x > 1e7 || (unit && end[1]) || (!unit && (*end || x != (int)x)))
        return bad_usage(cmd, "--checkpoint-every '%s' is not a number of steps (500), seconds (90s) or "
                              "minutes (5m); 0: only at epochs' ends", v);
    *seconds = unit ? x * unit : 0, *steps = unit ? 0 : (int)x;
    return -1;
}
