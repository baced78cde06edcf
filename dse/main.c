/* main.c: the dse command. Parses arguments, calls the library modules, prints their
 * errors as "file:line: message" and picks the exit code: 0 success, 2 bad input
 * (usage, network or space file, shapes), 1 anything else. docs/cli.md describes every
 * command. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "data/synth.h"
#include "engine/slices.h"
#include "engine/train.h"
#include "base/fs.h"
#include "dse/dataprep.h"
#include "dse/exportcmd.h"
#include "netfile/netfile.h"
#include "dse/options.h"
#include "dse/ratecache.h"
#include "dse/report.h"
#include "dse/trainlog.h"
#include "sweep/sweep.h"

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
    "  sweep SPACE          cost and train every candidate of a space, with many workers\n"
    "  status DIR           progress of a training sweep: done, running, pending, ETA\n"
    "  report DIR           candidates and Pareto frontier of a sweep; SVG plot\n"
    "  train NET            train a network on Fashion-MNIST, MNIST, CIFAR or an image folder, CPU or GPU\n"
    "  bench NET            training or inference images per second\n"
    "  profile NET          per-layer forward and backward time and GFLOP/s\n"
    "  eval NET             a trained checkpoint's loss, top-1, top-5 and per-class accuracy\n"
    "  predict NET IMAGE... the top classes of JPEG/PNG images by a trained checkpoint\n"
    "  export NET|SWEEPDIR  a trained network as ONNX, or Caffe prototxt + caffemodel\n"
    "  import MODEL NET     a .caffemodel's weights into a dse checkpoint\n"
    "  data SUBCOMMAND      image folders and packs: pack, info, bench, synth ('dse data --help')\n"
    "  help [COMMAND]       this text, or a command's options\n"
    "\n"
    "NET is a dse network file (.cfg, docs/network-format.md) or Caffe prototxt; SPACE is a\n"
    "design-space file (docs/space-format.md).\n"
    "Run 'dse COMMAND --help' for a command's options. Exit status: 0 ok, 2 bad input, 1 other errors.\n";

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
    out->c = (int)v[0], out->h = (int)v[1], out->w = (int)v[2]; /* classes: --classes, left as it is */
    return 0;
}

/* Option o of a command's dse_opt_args a: its text (NULL if not given), its value if an
 * integer (d if not given), or whether the flag was given. */
#define OPT(o)        (a->val[DSE_OPT_##o])
#define OPT_INT(o, d) (OPT(o) ? (int)a->num[DSE_OPT_##o] : (d))
#define FLAG(o)       (OPT(o) != NULL)

/* --input C,H,W and --classes K: how to fit a network to data. -1, or the usage error's code. */
static int opt_fit(const char *cmd, const struct dse_opt_args *a, struct dse_input_shape *in) {
    memset(in, 0, sizeof *in);
    if (OPT(INPUT) && parse_shape(OPT(INPUT), in))
        return bad_usage(cmd, "--input '%s' is not C,H,W with integers from 1 to 16777216 (e.g. 3,227,227)",
                         OPT(INPUT));
    in->classes = OPT_INT(CLASSES, 0);
    return -1;
}

static int fail(const struct dse_err *err) {
    char buf[1024];
    fprintf(stderr, "dse: %s\n", dse_err_format(err, buf, sizeof buf));
    return (err->code == DSE_ERR_NOMEM || err->code == DSE_ERR_INTERNAL) ? 1 : EXIT_BAD_INPUT;
}

/* fail() for an error about a network read from net_path: a layer's line (the engine
 * refusing a layer type, a shape) is in that file. */
static int fail_net(struct dse_err *err, const char *net_path) {
    if (err->line > 0) dse_err_name_file(err, net_path);
    return fail(err);
}

/* --format, checked against the command's words already: the format it names, else dflt. */
static enum dse_format opt_format(const char *v, enum dse_format dflt) {
    enum dse_format fmt = dflt;
    if (v && dse_format_from_str(v, &fmt)) fmt = dflt;
    return fmt;
}

static int analyze_comm(const struct dse_opt_cmd *c, const struct dse_opt_args *a);

static int cmd_analyze(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    struct dse_net net;
    struct dse_input_shape in;
    const long long batch = OPT_INT(BATCH, 1);
    const enum dse_format fmt = opt_format(OPT(FORMAT), DSE_FORMAT_TABLE);
    int rc;
    if (OPT(COMM_WORKERS) || OPT(BANDWIDTH) || OPT(LATENCY) || OPT(IMG_PER_S) || FLAG(MEASURE))
        return analyze_comm(c, a);
    if ((rc = opt_fit(c->name, a, &in)) >= 0) return rc;
    if (dse_netfile_load(a->pos[0], &in, &net, &err)) return fail(&err);
    rc = dse_report_analyze(stdout, a->pos[0], &net, batch, FLAG(EXPAND), fmt, &err) ? fail(&err) : 0;
    dse_net_deinit(&net);
    return rc;
}

static int cmd_diff(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    struct dse_net base, var;
    const long long batch = OPT_INT(BATCH, 1);
    const enum dse_format fmt = opt_format(OPT(FORMAT), DSE_FORMAT_TABLE);
    int rc;
    if (dse_netfile_load(a->pos[0], NULL, &base, &err)) return fail(&err);
    if (dse_netfile_load(a->pos[1], NULL, &var, &err)) {
        dse_net_deinit(&base);
        return fail(&err);
    }
    rc = dse_report_diff(stdout, a->pos[0], &base, a->pos[1], &var, batch, FLAG(EXPAND), fmt, &err)
             ? fail(&err) : 0;
    dse_net_deinit(&base);
    dse_net_deinit(&var);
    return rc;
}

static int cmd_count(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_space s;
    struct dse_err err = { 0 };
    (void)c;
    if (dse_space_load(a->pos[0], &s, &err)) return fail(&err);
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
    char id[DSE_ID_SIZE];
    enum dse_status st;
    dse_space_candidate(s, k, &mp);
    if ((st = dse_space_build(s, &mp, net, err))) return st;
    dse_space_id(&mp, id);
    snprintf(net->name, sizeof net->name, "%.70s_%s", s->name, id);
    return prototxt ? dse_prototxt_write(f, net, err) : dse_netcfg_write(f, net, err);
}

static int cmd_generate(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_space s;
    struct dse_err err = { 0 };
    struct dse_net net;
    long long index = 0;
    int prototxt = 0, rc = 0;
    prototxt = OPT(FORMAT) && !strcmp(OPT(FORMAT), "prototxt");
    if (FLAG(ALL) + !!OPT(INDEX) + !!OPT(ID) > 1)
        return bad_usage(c->name, "give one of --index, --id and --all%s", "");
    if (OPT(ID) && !dse_space_id_valid(OPT(ID)))
        return bad_usage(c->name, "--id '%s' is not a candidate id; expected c and 16 hex digits, "
                                  "e.g. c3f1a9d0b2e47c5a1", OPT(ID));
    if (FLAG(ALL) && (!OPT(OUT) || !OPT(OUT)[0])) return bad_usage(c->name, "--all needs --out DIR%s", "");
    if (OPT(INDEX)) index = a->num[DSE_OPT_INDEX];
    if (dse_space_load(a->pos[0], &s, &err)) return fail(&err);
    dse_net_init(&net, s.name, 1, 1, 1);
    if (OPT(ID)) {
        uint64_t k;
        if (dse_space_find_id(&s, OPT(ID), DSE_SPACE_FIND_MAX, &k, &err)) rc = fail(&err);
        else if (write_candidate(stdout, &s, k, prototxt, &net, &err)) rc = fail(&err);
    } else if (!FLAG(ALL)) {
        if (!s.count_overflow && (uint64_t)index >= s.count) {
            fprintf(stderr, "dse generate: --index %lld is out of range; the space has %llu candidates "
                            "(0 to %llu)\n", index, (unsigned long long)s.count, (unsigned long long)s.count - 1);
            rc = EXIT_BAD_INPUT;
        } else if (write_candidate(stdout, &s, (uint64_t)index, prototxt, &net, &err)) {
            rc = fail(&err);
        }
    } else {
        uint64_t *idx = NULL, n = 0;
        if (dse_space_indices(&s, 1000000, &idx, &n, &err) || dse_fs_mkdirs(OPT(OUT), &err)) {
            rc = fail(&err);
        } else {
            for (uint64_t i = 0; i < n && !rc; i++) {
                struct dse_mp mp;
                char id[DSE_ID_SIZE], path[4096], *buf = NULL;
                size_t len = 0;
                dse_space_candidate(&s, idx[i], &mp);
                dse_space_id(&mp, id);
                snprintf(path, sizeof path, "%s/%s.%s", OPT(OUT), id, prototxt ? "prototxt" : "cfg");
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
            if (!rc) fprintf(stderr, "dse generate: wrote %llu networks to %s\n", (unsigned long long)n, OPT(OUT));
        }
        free(idx);
    }
    dse_net_deinit(&net);
    dse_space_free(&s);
    return rc;
}

static int opt_conv(const char *cmd, const char *v, int *algo);

/* --gpus: "all" or a comma list of distinct device indices 0 to 1023. */
static int opt_gpus(const char *cmd, const char *v, struct dse_sweep_opts *o) {
    if (!strcmp(v, "all")) return o->gpus_all = 1, -1;
    const char *p = v;
    o->n_gpus = 0;
    for (;;) {
        char part[16];
        long long g;
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= sizeof part) break;
        memcpy(part, p, n);
        part[n] = '\0';
        if (parse_ll(part, 0, 1023, &g) || o->n_gpus == DSE_SWEEP_GPUS_MAX) break;
        for (int k = 0; k < o->n_gpus; k++)
            if (o->gpus[k] == g) return bad_usage(cmd, "--gpus '%s' names a device twice", v);
        o->gpus[o->n_gpus++] = (int)g;
        if (!p[n]) return -1;
        p += n + 1;
    }
    o->n_gpus = 0;
    return bad_usage(cmd, "--gpus '%s' is not all or a comma-separated list of CUDA device indices (e.g. 0 or 0,2)", v);
}

/* --budget: "5" or "5e" epochs per candidate, "2h" or "90m" a time limit. */
static int opt_budget(const char *cmd, const char *v, struct dse_sweep_opts *o) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || errno || !(x > 0)) goto bad;
    if (*end == 'h' && !end[1]) return o->hours = x, -1;
    if (*end == 'm' && !end[1]) return o->hours = x / 60, -1;
    if ((!*end || (*end == 'e' && !end[1])) && x <= DSE_OPT_EPOCHS_MAX && x == (double)(int)x) { /* range first */
        o->plan.epochs = (int)x;
        o->set_epochs = 1;
        return -1;
    }
bad:;
    char msg[160];
    snprintf(msg, sizeof msg, "--budget '%%s' is not E or Ee (epochs per candidate, 1 to %d), Nh (hours) or Nm "
                              "(minutes)", DSE_OPT_EPOCHS_MAX);
    return bad_usage(cmd, msg, v);
}

/* Before a sweep trains: the space's first candidate must fit its dataset (channels, size,
 * classes; the fix named in the macro section's words), and an image folder becomes its
 * pack in the cache, which every worker then reads. */
static enum dse_status sweep_data(struct dse_space *s, const char *root, struct dse_err *err) {
    struct dse_data_info info;
    struct dse_net net;
    struct dse_mp mp;
    char path[sizeof s->dataset];
    enum dse_status st;
    if ((st = dse_data_probe(s->dataset, root, &info, err))) { /* at the space's line */
        struct dse_err e = err ? *err : (struct dse_err){ 0 };
        int other = e.file[0] && strcmp(e.file, s->dataset);
        return dse_err_set(err, st, s->path, s->dataset_line, "dataset \"%s\": %s%s%s", s->dataset,
                           other ? e.file : "", other ? ": " : "", e.msg);
    }
    dse_net_init(&net, s->name, 1, 1, 1);
    dse_space_candidate(s, 0, &mp);
    if (!(st = dse_space_build(s, &mp, &net, err)) && !(st = dse_dataprep_check_fit(&net, &info, "macro", err)) &&
        !(st = dse_dataprep_resolve(s->dataset, NULL, net.in_c, net.in_h, net.in_w, 0, stderr, path, sizeof path,
                                     err)))
        dse_strlcpy(s->dataset, path, (int)sizeof s->dataset);
    if (st) dse_err_name_file(err, s->path);
    dse_net_deinit(&net);
    return st;
}

/* --progress-every S (seconds, 0 to 86400; 0: epoch lines only) into *seconds; -1 if good. */
static int opt_progress_every(const char *cmd, const char *v, double *seconds) {
    char *end;
    double s = strtod(v, &end);
    if (end == v || *end || !(s >= 0) || s > 86400)
        return bad_usage(cmd, "--progress-every '%s' is not a number of seconds in [0, 86400] (0: epoch lines only)", v);
    *seconds = s;
    return -1;
}

/* --checkpoint-every N (steps), Ns or Nm: into *seconds or *steps (the other 0); -1 if good. */
static int opt_ckpt_every(const char *cmd, const char *v, double *seconds, int *steps) {
    char *end;
    const double x = strtod(v, &end);
    const int unit = *end == 's' ? 1 : *end == 'm' ? 60 : 0;
    if (end == v || !(x >= 0) || x > 1e7 || (unit && end[1]) || (!unit && (*end || x != (int)x)))
        return bad_usage(cmd, "--checkpoint-every '%s' is not a number of steps (500), seconds (90s) or "
                              "minutes (5m); 0: only at epochs' ends", v);
    *seconds = unit ? x * unit : 0, *steps = unit ? 0 : (int)x;
    return -1;
}

/* --ranks-per-candidate P: join the P ranks mpirun (or srun) started. Rank 0 returns -1 and
 * goes on as the sweep's one worker (o->dist set); ranks 1.. follow it and return their exit
 * status, as does any rank when the ranks are not what was asked. With --slurm (submit) the
 * same checks, before anything is written, and -1: the tasks join their ranks. */
static int sweep_ranks(const char *cmd, const struct dse_opt_args *a, const struct dse_space *s, int submit,
                       struct dse_sweep_opts *o, struct dse_dist **dist) {
    const int want = OPT_INT(RANKS_PER_CAND, 1);
    struct dse_err err = { 0 };
    if (OPT(GPUS) || OPT(GPUS_PER_TASK))
        return bad_usage(cmd, "--ranks-per-candidate trains on the CPU ranks for now; drop --gpus%s", " and --gpus-per-task");
    if (OPT(WORKERS) && o->workers != 1)
        return bad_usage(cmd, "each group of --ranks-per-candidate ranks is one worker: leave out --workers %s "
                              "(start more groups for more workers)", OPT(WORKERS));
    if (want > 1 && !dse_dist_built())
        return bad_usage(cmd, "--ranks-per-candidate needs a dse built with MPI (apt-get install libopenmpi-dev, "
                              "then rebuild)%s", "");
    o->workers = 1;
    if (submit) return -1;
    if (want > 1 && !dse_dist_launched()) {
        fprintf(stderr, "dse sweep: --ranks-per-candidate %d: start it under mpirun -np %d (or srun -n %d), one "
                        "process per rank\n", want, want, want);
        return EXIT_BAD_INPUT;
    }
    if (dse_dist_init(dist, &err)) return fail(&err);
    const int rank = dse_dist_rank(*dist), ranks = dse_dist_size(*dist);
    if (ranks != want) {
        if (rank == 0)
            fprintf(stderr, "dse sweep: --ranks-per-candidate %d, but %d ranks were started: give mpirun -np %d\n",
                    want, ranks, want);
        dse_dist_finish(*dist);
        return EXIT_BAD_INPUT;
    }
    o->dist = *dist;
    if (rank == 0) return -1;
    if (dse_sweep_follow(s, o, &err)) {
        char buf[1024];
        fprintf(stderr, "dse sweep: rank %d of %d: %s\n", rank, ranks, dse_err_format(&err, buf, sizeof buf));
        dse_dist_abort(*dist, 1);
    }
    dse_dist_finish(*dist);
    return 0;
}

/* The options of `dse sweep --slurm` itself: not passed on to the workers of its tasks
 * (--out is, made absolute). */
static const enum dse_opt slurm_own[] = { DSE_OPT_SLURM, DSE_OPT_ARRAY, DSE_OPT_GPUS_PER_TASK, DSE_OPT_SBATCH,
                                          DSE_OPT_DRY_RUN, DSE_OPT_CANCEL, DSE_OPT_OUT };

static int slurm_option(enum dse_opt k) {
    for (int i = 0; i < DSE_ARRAY_LEN(slurm_own); i++)
        if (slurm_own[i] == k) return 1;
    return 0;
}

/* dse sweep DIR --slurm --cancel: only --out may name DIR instead. */
static int sweep_cancel(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    for (int k = 0; k < DSE_OPT_COUNT; k++)
        if (a->val[k] && k != DSE_OPT_SLURM && k != DSE_OPT_CANCEL && k != DSE_OPT_OUT)
            return bad_usage(c->name, "--cancel stops what DIR/slurm/jobs records: give only DIR --slurm --cancel "
                             "(%s is not for it)", dse_opt_specs[k].name);
    return dse_slurm_cancel(stdout, OPT(OUT) ? OPT(OUT) : a->pos[0], &err) ? fail(&err) : 0;
}

/* dse sweep SPACE --out DIR --slurm ...: DIR is prepared (dse_sweep_analytic, the data);
 * write DIR/slurm/sweep.sbatch, whose tasks run this command's worker with the options it
 * was given (but --slurm's own), and submit it (--dry-run: print it). */
static int sweep_slurm(const struct dse_opt_cmd *c, const struct dse_opt_args *a, const struct dse_space *s,
                       const char *dir, const struct dse_sweep_opts *o) {
    struct dse_err err = { 0 };
    char dse[4096], space[4096], out[4096], data_root[4096], name[96], path[4200], *text = NULL;
    const char *args[2 * DSE_OPT_COUNT + 2];
    int n_args = 0, rc = 0;
    if (dse_slurm_abspath("/proc/self/exe", dse, (int)sizeof dse) || dse_slurm_abspath(a->pos[0], space, (int)sizeof space) ||
        dse_slurm_abspath(dir, out, (int)sizeof out))
        return bad_usage(c->name, "cannot tell the absolute path of the dse binary, the space or '%s'", dir);
    for (size_t n = strlen(out); n > 1 && out[n - 1] == '/';) out[--n] = '\0';
    for (int i = 0; i < c->n_lines; i++) { /* the worker's options, in the table's order */
        const struct dse_opt_line *l = &c->lines[i];
        if (l->place == DSE_OPT_PLACE_HEADING || !a->val[l->opt] || slurm_option(l->opt)) continue;
        args[n_args++] = dse_opt_specs[l->opt].name;
        if (dse_opt_specs[l->opt].kind == DSE_OPT_KIND_FLAG) continue;
        args[n_args++] = a->val[l->opt];
        if (l->opt == DSE_OPT_DATA_ROOT && !dse_slurm_abspath(OPT(DATA_ROOT), data_root, (int)sizeof data_root))
            args[n_args - 1] = data_root;
    }
    if (OPT(GPUS_PER_TASK) && !OPT(GPUS)) args[n_args++] = "--gpus", args[n_args++] = "all";
    snprintf(name, sizeof name, "dse-%.80s", s->name);
    const struct dse_slurm_job job = {
        .dse = dse, .space = space, .dir = out, .name = name, .array = OPT_INT(ARRAY, 2),
        .cpus_per_task = OPT(GPUS_PER_TASK) ? 0 : OPT(RANKS_PER_CAND) ? o->threads : o->workers * o->threads,
        .gpus_per_task = OPT_INT(GPUS_PER_TASK, 0), .ranks = OPT_INT(RANKS_PER_CAND, 0),
        .sbatch = OPT(SBATCH), .args = args, .n_args = n_args, .array_command = !OPT(COMMAND_ID),
    };
    dse_slurm_script_path(out, path, (int)sizeof path);
    if (dse_slurm_script(&job, &text, &err) || dse_slurm_script_write(out, text, &err)) {
        free(text);
        return fail(&err);
    }
    if (FLAG(DRY_RUN)) {
        printf("%s--- dry run: %s written, nothing submitted (dse sweep without --dry-run submits and records "
               "it; sbatch %s submits it unrecorded)\n", text, path, path);
    } else {
        char id[32];
        if (dse_slurm_submit(out, job.array, id, (int)sizeof id, &err)) {
            rc = fail(&err);
        } else {
            printf("Submitted Slurm job %s: %d task%s, each a worker of %s (script: %s; output: %s/slurm/%s_<task>.out)\n"
                   "next: dse status %s               (the tasks' states beside the leases)\n"
                   "      dse sweep %s --slurm --cancel  (scancel the job; the candidates stay, resumable)\n",
                   id, job.array, job.array > 1 ? "s" : "", out, path, out, id, out, out);
        }
    }
    free(text);
    return rc;
}

static int cmd_sweep(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_space s;
    struct dse_err err = { 0 };
    struct dse_sweep_summary sum;
    struct dse_sweep_opts o;
    char dir[4096];
    int rc;
    dse_sweep_opts_default(&o);
    if (OPT(OUT) && !OPT(OUT)[0]) return bad_usage(c->name, "--out needs a directory name%s", "");
    const int slurm = FLAG(SLURM);
    for (int i = 0; !slurm && i < DSE_ARRAY_LEN(slurm_own); i++)
        if (slurm_own[i] != DSE_OPT_OUT && a->val[slurm_own[i]])
            return bad_usage(c->name, "%s is for Slurm: give --slurm with it", dse_opt_specs[slurm_own[i]].name);
    if (FLAG(CANCEL)) return sweep_cancel(c, a);
    if (slurm && FLAG(ANALYTIC_ONLY))
        return bad_usage(c->name, "--analytic-only trains nothing, so there is nothing for Slurm to run%s", "");
    if (slurm && OPT(GPUS) && !OPT(GPUS_PER_TASK))
        return bad_usage(c->name, "--gpus %s under --slurm needs --gpus-per-task K (the GPUs Slurm gives each task)",
                         OPT(GPUS));
    if (slurm && OPT(GPUS_PER_TASK) && OPT(WORKERS))
        return bad_usage(c->name, "--workers %s is for the CPU; with --gpus-per-task give --per-gpu (workers per GPU)",
                         OPT(WORKERS));
    if (slurm && !FLAG(DRY_RUN) && !dse_slurm_have("sbatch")) { /* before anything is written */
        dse_err_set(&err, DSE_ERR_UNSUPPORTED, NULL, 0, "sbatch is not on PATH: submitting needs Slurm's client "
                    "commands (Debian: slurm-client); --dry-run writes and prints DIR/slurm/sweep.sbatch anyway");
        return fail(&err);
    }
    o.workers = OPT_INT(WORKERS, o.workers);
    o.threads = OPT_INT(THREADS, o.threads);
    o.plan.eta = OPT_INT(ETA, o.plan.eta);
    o.plan.min_epochs = OPT_INT(MIN_EPOCHS, o.plan.min_epochs);
    o.max_crashes = OPT_INT(MAX_CRASHES, o.max_crashes);
    if ((o.command_id = OPT(COMMAND_ID)) &&
        (!o.command_id[0] || strlen(o.command_id) > DSE_SWEEP_COMMAND_ID_MAX ||
         o.command_id[strspn(o.command_id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")]))
        return bad_usage(c->name, "--command-id '%s' is not 1 to " DSE_TRAIN_LOG_STR(DSE_SWEEP_COMMAND_ID_MAX)
                         " letters, digits, '.', '_' or '-'", o.command_id);
    o.max_oom = OPT_INT(MAX_OOM, o.max_oom);
    if (OPT(BUDGET) && (rc = opt_budget(c->name, OPT(BUDGET), &o)) >= 0) return rc;
    if (OPT(CKPT_EVERY) && (rc = opt_ckpt_every(c->name, OPT(CKPT_EVERY), &o.ckpt_every_s, &o.ckpt_every_steps)) >= 0)
        return rc;
    if (OPT(PROGRESS_EVERY) && (rc = opt_progress_every(c->name, OPT(PROGRESS_EVERY), &o.progress_every_s)) >= 0)
        return rc;
    o.set_eta = OPT(ETA) != NULL, o.set_min_epochs = OPT(MIN_EPOCHS) != NULL;
    if (OPT(EARLY_STOP)) {
        o.plan.halving = (enum dse_sweep_halving)dse_word_index(DSE_SWEEP_HALVING_NAMES, OPT(EARLY_STOP));
        o.set_halving = 1;
    }
    if (OPT(RANK)) {
        o.plan.rank = (enum dse_sweep_rank)dse_word_index(DSE_SWEEP_RANK_NAMES, OPT(RANK));
        o.set_rank = 1;
    }
    if (OPT(CONV)) {
        if ((rc = opt_conv(c->name, OPT(CONV), &o.plan.conv)) >= 0) return rc;
        o.set_conv = 1;
    }
    if (OPT(LEASE_SECONDS)) {
        char *end;
        double ttl = strtod(OPT(LEASE_SECONDS), &end);
        if (end == OPT(LEASE_SECONDS) || *end || !(ttl >= 0.5) || ttl > 86400)
            return bad_usage(c->name, "--lease-seconds '%s' is not a number from 0.5 to 86400", OPT(LEASE_SECONDS));
        o.lease_s = ttl;
    }
    o.data_root = OPT(DATA_ROOT);
    if (OPT(GPUS) && (rc = opt_gpus(c->name, OPT(GPUS), &o)) >= 0) return rc;
    const int gpus = OPT(GPUS) != NULL || OPT(GPUS_PER_TASK) != NULL; /* --gpus-per-task: --gpus all in each task */
    if (OPT(PER_GPU)) {
        if (!gpus) return bad_usage(c->name, "--per-gpu %s needs --gpus", OPT(PER_GPU));
        long long k = 0;
        if (strcmp(OPT(PER_GPU), "auto") && parse_ll(OPT(PER_GPU), 1, 64, &k))
            return bad_usage(c->name, "--per-gpu '%s' is not auto or a number of workers from 1 to 64", OPT(PER_GPU));
        o.per_gpu = (int)k;
    }
    if (OPT(PRECISION)) {
        if (dse_cuda_math_parse(OPT(PRECISION), &o.plan.precision, &err))
            return bad_usage(c->name, "--precision '%s' is not fp32, tf32, fp16 or bf16", OPT(PRECISION));
        if (!gpus && o.plan.precision != DSE_CUDA_MATH_FP32)
            return bad_usage(c->name, "--precision %s needs --gpus; the CPU computes in fp32 only", OPT(PRECISION));
        o.set_precision = 1;
    }
    if (OPT(ALGOS)) {
        if (!gpus) return bad_usage(c->name, "--algos %s needs --gpus; the CPU's kernels are deterministic", OPT(ALGOS));
        o.plan.nondeterministic = !strcmp(OPT(ALGOS), "any");
        o.set_algos = 1;
    }
    if (OPT(MAX_OOM) && !gpus) return bad_usage(c->name, "--max-oom %s needs --gpus", OPT(MAX_OOM));
    if (gpus && OPT(WORKERS))
        return bad_usage(c->name, "--workers %s is for the CPU; with --gpus give --per-gpu (workers per GPU)", OPT(WORKERS));
    if (gpus && OPT(CONV) && strcmp(OPT(CONV), "auto"))
        return bad_usage(c->name, "--conv %s chooses CPU conv strategies; on GPUs cuDNN chooses (leave it out)",
                         OPT(CONV));
    int analytic = FLAG(ANALYTIC_ONLY);
    for (int k = 0; analytic && k < DSE_OPT_COUNT; k++) /* any training option given */
        if (a->val[k] && k != DSE_OPT_OUT && k != DSE_OPT_ANALYTIC_ONLY && k != DSE_OPT_STRATEGY)
            return bad_usage(c->name, "--analytic-only trains nothing: give only --out (and --strategy) with it%s", "");
    if (dse_space_load(a->pos[0], &s, &err)) return fail(&err);
    if (OPT(STRATEGY) && dse_space_set_strategy(&s, (enum dse_strategy)dse_strategy_find(OPT(STRATEGY)), &err)) {
        dse_space_free(&s);
        return fail(&err);
    }
    snprintf(dir, sizeof dir, "%s", OPT(OUT) ? OPT(OUT) : "sweeps/");
    if (!OPT(OUT)) strncat(dir, s.name, sizeof dir - strlen(dir) - 1);
    /* --ranks-per-candidate P under mpirun -np P: the ranks are one worker (issue #17); rank 0
     * goes on below, the others train what it tells them (dse_sweep_follow) and print nothing.
     * With --slurm this command only submits: the tasks run it under mpirun. */
    struct dse_dist *dist = NULL;
    if (OPT(RANKS_PER_CAND) && (rc = sweep_ranks(c->name, a, &s, slurm, &o, &dist)) >= 0)
        return dse_space_free(&s), rc;
    rc = 0;
    if (!analytic && !s.train_present) {
        dse_err_set(&err, DSE_ERR_CONFIG, a->pos[0], 0, "no train section, so nothing to train; add train = { dataset = "
                    "\"fashion-mnist\"; epochs = 5; ... } (docs/space-format.md), or give --analytic-only");
        rc = fail(&err);
    } else if (!analytic && !slurm && dse_sweep_gpus_check(&o, stderr, &err)) { /* before anything is written;
                                                  under Slurm the tasks' nodes have the GPUs, not this one */
        rc = fail(&err);
    } else if (dse_sweep_analytic(&s, dir, isatty(2) ? stderr : NULL, &sum, &err)) {
        rc = fail(&err);
    } else {
        char kept[64] = "";
        if (sum.skipped) snprintf(kept, sizeof kept, " (%llu already there, left as they were)",
                                  (unsigned long long)sum.skipped);
        char archs[160] = ""; /* counted as dse status and dse report count them */
        const int reps = s.train_present && s.replicates > 1 ? s.replicates : 1;
        const int evo = s.search.strategy == DSE_SEARCH_EVOLUTION;
        if (reps > 1) snprintf(archs, sizeof archs, " (%llu architectures x %d replicates%s)",
                               (unsigned long long)sum.candidates / (unsigned long long)reps, reps,
                               evo ? ": the search's proposals so far" : "");
        else if (evo) snprintf(archs, sizeof archs, " (the search's proposals so far)");
        printf("%s: %llu candidates%s in %s: %llu kept, %llu pruned by constraints%s\n", s.name,
               (unsigned long long)sum.candidates, archs, dir, (unsigned long long)sum.kept,
               (unsigned long long)sum.pruned, kept);
        fflush(stdout);
        if (analytic && sum.candidates <= 200) { /* the costs and the analytic frontier at once */
            char plot[4200];
            snprintf(plot, sizeof plot, "%s/frontier.svg", dir);
            if (printf("\n"), dse_report_sweep(stdout, dir, DSE_FORMAT_MD, plot, NULL, &err)) rc = fail(&err);
            else printf("\nPlot (forward FLOPs against model size): %s\nnext: dse sweep %s --out %s  (train them%s)\n",
                        plot, a->pos[0], dir, s.train_present ? "" : "; the space needs a train section first");
        } else if (analytic) {
            printf("%llu candidates are too many to list here: dse report %s --format csv lists them, "
                   "--plot FILE.svg draws them\n", (unsigned long long)sum.candidates, dir);
        }
    }
    if (!rc && !analytic && sweep_data(&s, o.data_root, &err)) rc = fail(&err);
    if (!rc && slurm) {
        rc = sweep_slurm(c, a, &s, dir, &o);
    } else if (!rc && !analytic) {
        int finished = 0;
        o.log = stderr;
        char plot[4200], plot_flops[4200], curves[4200];
        snprintf(plot, sizeof plot, "%s/frontier.svg", dir);
        snprintf(plot_flops, sizeof plot_flops, "%s/frontier_flops.svg", dir);
        snprintf(curves, sizeof curves, "%s/curves.svg", dir);
        if (dse_sweep_train(&s, dir, &o, &finished, &err)) rc = fail(&err);
        else if (dse_sweep_status(stdout, dir, 0, NULL, &err)) rc = fail(&err);
        else if (!finished) printf("Not finished: run the same command again to go on.\n");
        else if (printf("\n"), dse_report_sweep(stdout, dir, DSE_FORMAT_MD, plot, NULL, &err) ||
                 dse_report_plot_flops(dir, plot_flops, &err) || dse_report_curves(dir, curves, &err))
            rc = fail(&err);
        else
            printf("\nPlot (top-1 against model size, frontier in red): %s\nPlot (top-1 against forward FLOPs, "
                   "its own frontier): %s\nLearning curves: %s\n", plot, plot_flops, curves);
    }
    dse_space_free(&s);
    if (rc && dse_dist_size(dist) > 1) dse_dist_abort(dist, rc); /* the other ranks may wait for a job */
    dse_dist_finish(dist);
    return rc;
}

/* dse status DIR [--json] [--watch S]: once, or again every S seconds (a timestamp line
 * between text reports; JSON Lines with --json) until the sweep has finished. */
static int cmd_status(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    const int json = FLAG(JSON), watch = OPT_INT(WATCH, 0);
    (void)c;
    for (int round = 0;; round++) {
        int finished = 0;
        if (watch && !json && round) {
            char when[32];
            time_t now = time(NULL);
            strftime(when, sizeof when, "%H:%M:%S", localtime(&now));
            printf("\n--- %s ---\n", when);
        }
        if (dse_sweep_status(stdout, a->pos[0], json, &finished, &err)) return fail(&err);
        if (!json && dse_slurm_status(stdout, a->pos[0], &err)) return fail(&err); /* if it was submitted so */
        fflush(stdout);
        if (!watch || finished) return 0;
        sleep((unsigned)watch);
    }
}

static int cmd_report(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    const enum dse_format fmt = opt_format(OPT(FORMAT), DSE_FORMAT_MD);
    struct dse_report_best best;
    if (a->n_pos > 1) { /* several sweeps: each report in turn, their frontiers on one plot */
        if (!OPT(PLOT)) return bad_usage(c->name, "several sweeps compare on a plot: give --plot FILE.svg%s", "");
        if (fmt != DSE_FORMAT_MD || OPT(CURVES) || OPT(PLOT_FLOPS))
            return bad_usage(c->name, "with several sweeps, give only --plot (the reports print as Markdown)%s", "");
        if (dse_report_overlay(a->pos, a->n_pos, OPT(PLOT), &err)) return fail(&err); /* checks them first */
        for (int k = 0; k < a->n_pos; k++) {
            if (k) printf("\n");
            if (dse_report_sweep(stdout, a->pos[k], DSE_FORMAT_MD, NULL, NULL, &err)) return fail(&err);
        }
        printf("\nFrontiers of %d sweeps: %s\n", a->n_pos, OPT(PLOT));
        return 0;
    }
    if (dse_report_sweep(stdout, a->pos[0], fmt, OPT(PLOT), &best, &err)) return fail(&err);
    if (OPT(PLOT_FLOPS) && dse_report_plot_flops(a->pos[0], OPT(PLOT_FLOPS), &err)) return fail(&err);
    if (OPT(CURVES) && dse_report_curves(a->pos[0], OPT(CURVES), &err)) return fail(&err);
    fflush(stdout);
    if (best.id[0] && (fmt == DSE_FORMAT_CSV || fmt == DSE_FORMAT_TEX)) { /* MD and JSON say it themselves */
        char cmd[4400];
        dse_report_export_cmd(cmd, sizeof cmd, a->pos[0], best.id);
        fprintf(stderr, "next: %s (the most accurate candidate; --best --max-mb M picks within a size limit)\n", cmd);
    }
    return 0;
}

static int opt_conv(const char *cmd, const char *v, int *algo) {
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

/* --device, --precision and --algos (train, bench, profile): where the model runs,
 * zeroed = the CPU in fp32. On a bad value: the usage error, and its exit code. */
static int opt_device(const char *cmd, const char *device, const char *precision, const char *algos,
                      struct dse_model_device_opts *d) {
    struct dse_err err = { 0 };
    memset(d, 0, sizeof *d);
    if (device && dse_device_parse(device, &d->device, &err))
        return bad_usage(cmd, "--device '%s' is not cpu, cuda or cuda:N", device);
    if (precision && dse_cuda_math_parse(precision, &d->math, &err))
        return bad_usage(cmd, "--precision '%s' is not fp32, tf32, fp16 or bf16", precision);
    if (d->device.kind == DSE_DEVICE_CPU && d->math != DSE_CUDA_MATH_FP32)
        return bad_usage(cmd, "--precision %s is for --device cuda; the CPU computes in fp32 only", precision);
    d->nondeterministic = algos && !strcmp(algos, "any");
    if (d->device.kind == DSE_DEVICE_CPU && d->nondeterministic)
        return bad_usage(cmd, "--algos %s is for --device cuda; the CPU's kernels are deterministic", algos);
    return -1;
}

/* Before any work (loading data, building a model): a CUDA device this build or this
 * machine does not have is one line naming why, and exit status 2 (as the model build
 * would fail); a usable one is named on stderr with its facts. -1: go on. */
static int device_ready(const char *cmd, const struct dse_model_device_opts *d) {
    char name[32], why[256], info[512];
    if (d->device.kind != DSE_DEVICE_CUDA) return -1;
    dse_device_str(&d->device, name, (int)sizeof name);
    const int count = dse_cuda_device_count(why, (int)sizeof why);
    if (!strstr(dse_engine_backends(), "cuda"))
        fprintf(stderr, "dse %s: --device %s: this dse was built without the CUDA backend (docs/gpu.md, "
                        "Building)\n", cmd, name);
    else if (count == 0)
        fprintf(stderr, "dse %s: --device %s: no CUDA device (%s)\n", cmd, name, why);
    else if (d->device.index >= count)
        fprintf(stderr, "dse %s: --device %s does not exist; this machine has %d CUDA device%s (cuda:0 to "
                        "cuda:%d)\n", cmd, name, count, count == 1 ? "" : "s", count - 1);
    else {
        struct dse_err err = { 0 };
        if (dse_cuda_device_info(d->device.index, info, (int)sizeof info, &err))
            snprintf(info, sizeof info, "%s", err.msg);
        fprintf(stderr, "dse %s: %s, precision %s: %s\n", cmd, name, dse_cuda_math_str(d->math), info);
        return -1;
    }
    return EXIT_BAD_INPUT;
}

/* engine/train.def's rows that dse train has no option for. */
#define DSE_OPT_NONE DSE_OPT_COUNT

/* A recipe option's value (dse_opt_args.val), NULL when not given or o is DSE_OPT_NONE. */
static const char *recipe_opt(const struct dse_opt_args *a, enum dse_opt o) {
    return o < DSE_OPT_COUNT ? a->val[o] : NULL;
}

/* A REAL recipe option's text as a float: its range and message. -1 when it is good. */
static int recipe_real(const char *cmd, enum dse_opt o, const char *v, float *out) {
    char *end;
    double x = strtod(v, &end);
    if (o == DSE_OPT_LR && (*end || !(x > 0) || x > 100))
        return bad_usage(cmd, "--lr '%s' is not a number in (0, 100]", v);
    if (o == DSE_OPT_CLIP_NORM && (end == v || *end || !(x >= 0) || x > 1e6 || (x > 0 && (float)x == 0.0f)))
        return bad_usage(cmd, "--clip-norm '%s' is not a number in [0, 1e6] (0: no clipping)", v);
    *out = (float)x;
    return -1;
}

/* dse train --json: the result, the engine's measured memory beside the analyzer's training
 * estimate, and every epoch as a candidate record's per_epoch entries (engine/epoch.def). */
static void train_json(const struct dse_net *net, const struct dse_train_opts *o, const struct dse_train_result *r) {
    struct dse_cost_layer *cl = calloc((size_t)net->n_layers, sizeof *cl);
    struct dse_cost_totals tot;
    memset(&tot, 0, sizeof tot);
    if (cl) dse_cost_net(net, o->batch, cl, &tot, NULL);
    free(cl);
    char m1[32] = "null", m5[32] = "null", ml[32] = "null"; /* no epoch finished: no metrics */
    char dev[32];
    if (r->epochs_done > 0) {
        snprintf(m1, sizeof m1, "%.6f", r->top1);
        snprintf(m5, sizeof m5, "%.6f", r->top5);
        snprintf(ml, sizeof ml, "%.6f", r->loss);
    }
    printf("{\"status\": \"%s\", \"epochs\": %d, \"top1\": %s, \"top5\": %s, \"loss\": %s, "
           "\"img_per_s\": %.1f, \"seconds\": %.2f, \"seed\": %llu, \"model_bytes\": %lld, \"engine_bytes\": %zu, "
           "\"estimate_train_bytes\": %lld, \"device\": \"%s\", \"precision\": \"%s\", \"algos\": \"%s\", "
           "\"clip_norm\": %g, \"clipped_steps\": %lld, \"blas_core\": \"%s\"",
           r->status, r->epochs_done, m1, m5, ml, r->img_per_s, r->seconds,
           (unsigned long long)r->seed, (long long)tot.model_bytes, r->engine_bytes, (long long)tot.mem_train_bytes,
           dse_device_str(&o->dev.device, dev, (int)sizeof dev), dse_cuda_math_str(o->dev.math),
           o->dev.nondeterministic ? "any" : "det", (double)o->clip_norm, (long long)r->clipped_steps,
           dse_blas_core());
    if (r->diverged_epoch) printf(", \"diverged_epoch\": %d, \"diverged_iter\": %lld", r->diverged_epoch,
                                  (long long)r->diverged_iter);
    printf(", \"per_epoch\": [");
    for (int e = 0; e < r->n_epochs; e++) { /* as a candidate record's per_epoch entries (engine/epoch.def) */
        if (e) fputs(", ", stdout);
        dse_rec_epoch_write(stdout, e + 1, &r->epochs[e]);
    }
    printf("]}\n");
}

static int cmd_train(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_train_opts o;
    struct dse_err err = { 0 };
    struct dse_net net;
    int rc;
    dse_train_opts_default(&o);
    o.threads = 2;
    if (OPT(DATA)) o.data = dse_data_name_find(OPT(DATA)) ? dse_data_name_find(OPT(DATA)) : OPT(DATA); /* one spelling */
    o.threads = OPT_INT(THREADS, o.threads);
    o.loader_workers = OPT_INT(LOADER_THREADS, o.loader_workers);
    if ((rc = opt_conv(c->name, OPT(CONV), &o.conv_algo)) >= 0 ||
        (rc = opt_device(c->name, OPT(DEVICE), OPT(PRECISION), OPT(ALGOS), &o.dev)) >= 0)
        return rc;
    const int on_gpu = o.dev.device.kind != DSE_DEVICE_CPU;
    if (on_gpu && OPT(CONV) && strcmp(OPT(CONV), "auto"))
        return bad_usage(c->name, "--conv chooses a CPU conv strategy; on --device %s cuDNN chooses (leave it "
                                  "out; --conv-cache FILE pins cuDNN's choices)", OPT(DEVICE));
    /* The recipe's options given (engine/train.def's rows with one, in its order); an INT's
     * range was checked by its option row (dse/options.h), a word's by its words. */
#define SET_INT(field, opt, words)  o.field = (int)a->num[opt];
#define SET_U64(field, opt, words)  o.field = (uint64_t)a->num[opt];
#define SET_ENUM(field, opt, words) o.field = dse_word_index(words, recipe_opt(a, opt));
#define SET_REAL(field, opt, words) \
    if ((rc = recipe_real(c->name, opt, recipe_opt(a, opt), &o.field)) >= 0) return rc;
#define X(field, key, kind, def, lo, hi, cli, words) \
    if (recipe_opt(a, DSE_OPT_##cli)) { SET_##kind(field, DSE_OPT_##cli, words) }
    DSE_TRAIN_RECIPE(X)
#undef X
#undef SET_INT
#undef SET_U64
#undef SET_ENUM
#undef SET_REAL
    if (OPT(LR_POLICY) && o.policy == DSE_LR_STEP) o.step_epochs = o.epochs > 3 ? o.epochs / 3 : 1;
    o.checkpoint_dir = OPT(CHECKPOINT_DIR);
    o.resume = OPT(RESUME);
    o.ckpt_every_s = 300; /* a kill loses at most 5 minutes of an epoch (issue #18 item 2) */
    if (OPT(CKPT_EVERY) && !OPT(CHECKPOINT_DIR))
        return bad_usage(c->name, "--checkpoint-every %s needs --checkpoint-dir DIR", OPT(CKPT_EVERY));
    if (OPT(CKPT_EVERY) && (rc = opt_ckpt_every(c->name, OPT(CKPT_EVERY), &o.ckpt_every_s, &o.ckpt_every_steps)) >= 0)
        return rc;
    char cache[4096];
    if (OPT(CONV_CACHE) && strcmp(OPT(CONV_CACHE), "none")) {
        o.conv_cache = OPT(CONV_CACHE); /* on a GPU: cuDNN's choices, pinned (docs/gpu.md, "Determinism") */
    } else if (!OPT(CONV_CACHE) && !on_gpu && !dse_conv_cache_machine(o.threads, cache, (int)sizeof cache)) {
        o.conv_cache = cache; /* the default: this machine's (CPU, BLAS kernels, threads), like a compiler cache;
                                 none on a GPU (find every run) */
    }
    struct dse_input_shape in;
    if ((rc = opt_fit(c->name, a, &in)) >= 0) return rc;
    if (OPT(AUG)) o.aug = (enum dse_aug_mode)dse_word_index(DSE_AUG_NAMES, OPT(AUG));
    double every_s = DSE_TRAIN_LOG_EVERY_S;
    if (OPT(PROGRESS_EVERY) && (rc = opt_progress_every(c->name, OPT(PROGRESS_EVERY), &every_s)) >= 0) return rc;
    struct dse_train_log tlog;
    dse_train_log_init(&tlog, stderr, isatty(2), every_s);
    o.progress = dse_train_log_progress, o.progress_arg = &tlog, o.note = dse_train_log_note;
    if (!tlog.tty) o.progress_every_s = every_s; /* a terminal's line is redrawn every 10 steps */
    if (dse_netfile_load(a->pos[0], &in, &net, &err)) return fail(&err);
    if ((rc = device_ready(c->name, &o.dev)) >= 0) return dse_net_deinit(&net), rc;
    /* The data before the work: does the network fit it (naming the flags that would), and
     * an image folder becomes its pack in the cache on first use. */
    struct dse_data_info info;
    char data_path[4096];
    if (dse_data_probe(o.data, o.data_root, &info, &err) && err.code == DSE_ERR_CONFIG && !err.file[0])
        return dse_net_deinit(&net), bad_usage(c->name, "--data: %s", err.msg); /* a name it does not know */
    if (err.code || dse_dataprep_check_fit(&net, &info, "flags", &err) ||
        dse_dataprep_resolve(o.data, OPT(PACK_CACHE), net.in_c, net.in_h, net.in_w, OPT_INT(MAX_PIXELS, 0), stderr,
                             data_path, sizeof data_path, &err))
        return dse_net_deinit(&net), fail(&err);
    o.data = data_path;
    /* Under mpirun: one of P ranks (engine/dist.h), joined once everything above is checked,
     * so that a bad option ends every rank the same way before any of them waits for another. */
    struct dse_dist *dist = NULL;
    if (OPT(REDUCE)) o.reduce = (enum dse_dist_reduce)dse_word_index(DSE_DIST_REDUCE_NAMES, OPT(REDUCE));
    if (dse_dist_init(&dist, &err)) return dse_net_deinit(&net), fail(&err);
    const int rank = dse_dist_rank(dist), ranks = dse_dist_size(dist);
    o.dist = dist;
    if (rank > 0) o.progress = NULL, o.note = NULL; /* rank 0 speaks for the group */
    if (ranks > 1 && o.batch < ranks) { /* every rank knows it: rank 0 says it, all end alike */
        if (rank == 0)
            fprintf(stderr, "dse train: --batch %d is smaller than the %d ranks: each rank trains on a share of "
                            "every batch; use --batch %d or more, or fewer ranks\n", o.batch, ranks, ranks);
        return dse_net_deinit(&net), dse_dist_finish(dist), EXIT_BAD_INPUT;
    }
    if (ranks > 1 && rank == 0) { /* the shares are runs of the batch's slices (engine/slices.h) */
        int64_t lo = o.batch, hi = 0, first, count;
        for (int q = 0; q < ranks; q++) {
            int s0, s1;
            dse_slice_rank(o.batch, q, ranks, &s0, &s1, &first, &count);
            lo = count < lo ? count : lo, hi = count > hi ? count : hi;
        }
        char each[48];
        if (lo == hi) snprintf(each, sizeof each, "%lld", (long long)lo);
        else snprintf(each, sizeof each, "%lld to %lld", (long long)lo, (long long)hi);
        fprintf(stderr, "data-parallel: %d ranks, %s images each of every batch of %d, gradients summed by %s%s\n",
                ranks, each, o.batch, dse_dist_reduce_name(o.reduce),
                ranks > DSE_SLICES ? " (more ranks than 16 slices: the bits are not one process's)" : "");
    }
    struct dse_train_result *r = malloc(sizeof *r);
    if (!r) return dse_net_deinit(&net), dse_dist_finish(dist), 1;
    rc = 0;
    if (dse_train_run(&net, &o, r, &err)) {
        if (r->dist_broken) { /* this rank's alone: the others may wait for it in a sum; end them all */
            char buf[1024];
            if (err.line > 0) dse_err_name_file(&err, a->pos[0]);
            fprintf(stderr, "dse train: rank %d of %d: %s\n", rank, ranks, dse_err_format(&err, buf, sizeof buf));
            free(r), dse_net_deinit(&net);
            dse_dist_abort(dist, (err.code == DSE_ERR_NOMEM || err.code == DSE_ERR_INTERNAL) ? 1 : EXIT_BAD_INPUT);
        }
        rc = rank == 0 ? fail_net(&err, a->pos[0]) /* every rank has the same error: rank 0 says it */
                       : (err.code == DSE_ERR_NOMEM || err.code == DSE_ERR_INTERNAL) ? 1 : EXIT_BAD_INPUT;
    } else if (rank > 0) {
        /* rank 0 reports */
    } else if (FLAG(JSON)) {
        train_json(&net, &o, r);
    } else {
        if (r->epochs_done > 0)
            printf("%s after %d epoch%s: test loss %.4f, top-1 %.2f%%, top-5 %.2f%%; %.0f img/s, %.1f s\n",
                   r->status, r->epochs_done, r->epochs_done == 1 ? "" : "s", r->loss, 100 * r->top1,
                   100 * r->top5, r->img_per_s, r->seconds);
        else
            printf("%s before the first epoch ended (no test metrics); %.0f img/s, %.1f s\n", r->status,
                   r->img_per_s, r->seconds);
        if (r->diverged_epoch)
            printf("diverged in epoch %d at iteration %lld: the loss or the weights became NaN or infinite\n",
                   r->diverged_epoch, (long long)r->diverged_iter);
    }
    free(r);
    dse_net_deinit(&net);
    dse_dist_finish(dist);
    return rc;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A model of net on dev with synthetic data (values from a fixed PCG32 stream, labels
 * i % classes). -1, or the exit code after printing why. */
static int synthetic_model(const char *cmd, const char *path, const struct dse_input_shape *in, int batch,
                           int threads, int inference, const struct dse_model_device_opts *dev, struct dse_model **m,
                           float **x, int **labels) {
    struct dse_net net;
    struct dse_err err = { 0 };
    struct dse_model_opts mo = { .batch = batch, .threads = threads, .seed = 1, .init = DSE_INIT_MSRA,
                                 .init_std = 0.01f, .inference = inference };
    int rc;
    if (dse_netfile_load(path, in, &net, &err)) return fail(&err);
    if ((rc = device_ready(cmd, dev)) >= 0) return dse_net_deinit(&net), rc;
    enum dse_status st = dse_model_new_on(&net, &mo, dev, m, &err);
    dse_net_deinit(&net);
    if (st) return fail_net(&err, path);
    size_t n = (size_t)dse_tensor_count(&(*m)->input);
    *x = malloc(n * sizeof **x);
    *labels = malloc((size_t)batch * sizeof **labels);
    if (!*x || !*labels) return 1;
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 7, 7);
    for (size_t i = 0; i < n; i++) (*x)[i] = (float)dse_pcg32_next(&r) / 4294967296.0f - 0.5f;
    int k = (*m)->nodes[(*m)->loss].in[0]->c;
    for (int b = 0; b < batch; b++) (*labels)[b] = b % k;
    return -1;
}

/* Seconds of each of iters steps of m (forward; backward and SGD if train) on x, after
 * warmup steps (conv strategy timing, caches), sorted: t[iters / 2] is the median. */
static enum dse_status time_steps(struct dse_model *m, const float *x, const int *labels, int train, int warmup,
                                  int iters, double *t, struct dse_err *err) {
    float loss;
    dse_model_set_training(m, train);
    for (int i = -warmup; i < iters; i++) {
        double t0 = now_s();
        enum dse_status st;
        if ((st = dse_model_forward(m, x, labels, &loss, err)) || (train && (st = dse_model_backward(m, err))))
            return st;
        if (train) dse_model_sgd(m, 1e-6f, 0.9f, 0.0f);
        if ((st = dse_model_sync(m, err))) return st; /* a device queues the step: wait for it before the clock */
        if (i >= 0) t[i] = now_s() - t0;
    }
    qsort(t, (size_t)iters, sizeof *t, cmp_double);
    return DSE_OK;
}

static int cmd_bench(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    int batch = 32, threads = 2, iters = 10, rc;
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    float *x = NULL;
    int *labels = NULL;
    const int train = !OPT(MODE) || !strcmp(OPT(MODE), "train");
    struct dse_model_device_opts dev;
    struct dse_input_shape in;
    batch = OPT_INT(BATCH, batch), threads = OPT_INT(THREADS, threads), iters = OPT_INT(ITERS, iters);
    if ((rc = opt_device(c->name, OPT(DEVICE), OPT(PRECISION), OPT(ALGOS), &dev)) >= 0 ||
        (rc = opt_fit(c->name, a, &in)) >= 0)
        return rc;
    int conv = DSE_ALGO_AUTO;
    if ((rc = opt_conv(c->name, OPT(CONV), &conv)) >= 0) return rc;
    if ((rc = synthetic_model(c->name, a->pos[0], &in, batch, threads, !train, &dev, &m, &x, &labels)) >= 0) goto done;
    m->cx.conv_force = conv, m->cx.slices = OPT_INT(SLICES, 0); /* the CPU's; a device ignores them */
    double *t = malloc(sizeof *t * (size_t)iters);
    rc = t && time_steps(m, x, labels, train, 2, iters, t, &err) ? fail(&err) : 0;
    if (!rc && t) {
        /* The engine's measured memory beside the analyzer's estimate (docs/conventions.md). */
        struct dse_cost_layer *cl = calloc((size_t)m->net.n_layers, sizeof *cl);
        struct dse_cost_totals tot;
        memset(&tot, 0, sizeof tot);
        if (cl) dse_cost_net(&m->net, batch, cl, &tot, NULL);
        free(cl);
        char name[32];
        printf("name=bench.%s net=%s mode=%s batch=%d threads=%d conv=%s slices=%d device=%s precision=%s algos=%s iters=%d "
               "median_ms=%.2f min_ms=%.2f img_per_s=%.1f measured_bytes=%zu estimate_bytes=%lld blas_core=%s\n",
               m->net.name[0] ? m->net.name : "net", a->pos[0], train ? "train" : "infer", batch, threads,
               dse_cpu_conv_algo_str(conv), m->cx.slices ? m->cx.slices : DSE_SLICES,
               dse_device_str(&dev.device, name, (int)sizeof name), dse_cuda_math_str(dev.math),
               dev.nondeterministic ? "any" : "det", iters,
               1e3 * t[iters / 2], 1e3 * t[0], batch / t[iters / 2], dse_model_bytes(m),
               (long long)(train ? tot.mem_train_bytes : tot.mem_infer_bytes), dse_blas_core());
    }
    free(t);
done:
    dse_model_free(m);
    free(x);
    free(labels);
    return rc < 0 ? 1 : rc;
}

/* A number from text: 0 if all of s is one, finite, from lo to hi (lo excluded if open). */
static int parse_real(const char *s, double lo, int open, double hi, double *out) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < lo || (open && v == lo) || v > hi) return -1;
    *out = v;
    return 0;
}

/* dse analyze --workers without --img-per-s: one worker's images/s into o->img_per_s, from
 * this CPU's training FLOP/s in the rate cache (dse/ratecache.h) in milliseconds, or with
 * --measure timed here and kept there; what was done into how (the report's words) and
 * *source ("estimated", "measured"). -1, or the exit code of a failure. */
static int comm_compute(const struct dse_opt_cmd *c, const struct dse_opt_args *a, const struct dse_net *net,
                        struct dse_comm_opts *o, char *how, size_t how_size, const char **source) {
    struct dse_err err = { 0 };
    char cache[4096], buf[1024];
    if (dse_ratecache_path(cache, sizeof cache))
        return bad_usage(c->name, "the rate cache's path ($XDG_CACHE_HOME or $HOME) is too long: give --img-per-s "
                                  "X%s", "");
    if (!FLAG(MEASURE)) {
        if (dse_ratecache_estimate(cache, net, &o->img_per_s, how, how_size, &err)) return fail(&err);
        if (o->img_per_s > 0) return *source = "estimated", -1;
        fprintf(stderr, "dse %s: no training speed is known for this machine's CPU: give one worker's images/s "
                        "(--img-per-s X), or --measure to time a few SGD steps here once (a minute or more) and keep "
                        "this CPU's FLOP/s for later estimates\n", c->name);
        return EXIT_BAD_INPUT;
    }
    struct dse_model *m = NULL;
    struct dse_model_device_opts dev = { 0 }; /* the CPU, fp32 */
    struct dse_input_shape in;
    float *x = NULL;
    int *labels = NULL, rc;
    double t[3];
    if ((rc = opt_fit(c->name, a, &in)) >= 0) return rc;
    fprintf(stderr, "dse %s: measuring one worker's training speed (1 thread, batch %lld, 4 steps)\n", c->name,
            (long long)o->batch);
    rc = synthetic_model(c->name, a->pos[0], &in, (int)o->batch, 1, 0, &dev, &m, &x, &labels);
    if (rc < 0) rc = time_steps(m, x, labels, 1, 1, DSE_ARRAY_LEN(t), t, &err) ? fail(&err) : -1;
    dse_model_free(m);
    free(x);
    free(labels);
    if (rc >= 0) return rc;
    o->img_per_s = (double)o->batch / t[DSE_ARRAY_LEN(t) / 2];
    *source = "measured";
    int n = snprintf(how, how_size, "measured on this machine: 1 thread, batch %lld, median of 3 SGD steps",
                     (long long)o->batch);
    if (dse_ratecache_keep(cache, net, o->img_per_s, &err)) /* the analysis goes on without it */
        fprintf(stderr, "dse %s: the speed was not kept: %s\n", c->name, dse_err_format(&err, buf, sizeof buf));
    else if (n > 0 && (size_t)n < how_size)
        snprintf(how + n, how_size - (size_t)n, " (kept in %s)", cache);
    return -1;
}

/* dse analyze NET --workers P --bandwidth GB/s [--latency US] [--img-per-s X | --measure]
 * [--batch B]: the communication model (docs/comm-model.md); one worker's training speed as
 * comm_compute finds it unless given. */
static int analyze_comm(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    struct dse_input_shape in;
    struct dse_comm_opts o = { .batch = OPT_INT(BATCH, 32) };
    const long long workers = OPT(COMM_WORKERS) ? a->num[DSE_OPT_COMM_WORKERS] : 0;
    int rc;
    if (!workers) return bad_usage(c->name, "--bandwidth, --latency and --img-per-s go with --workers P%s", "");
    if (!OPT(BANDWIDTH)) return bad_usage(c->name, "--workers needs --bandwidth GB/s (10 Gb/s Ethernet: 1.25)%s", "");
    if (FLAG(EXPAND)) return bad_usage(c->name, "--expand is for the cost report, not --workers%s", "");
    if (parse_real(OPT(BANDWIDTH), 0, 1, 1e6, &o.bandwidth))
        return bad_usage(c->name, "--bandwidth '%s' is not a number of GB/s above 0 (at most 1e6)", OPT(BANDWIDTH));
    if (OPT(LATENCY) && parse_real(OPT(LATENCY), 0, 0, 1e9, &o.latency_s))
        return bad_usage(c->name, "--latency '%s' is not a number of microseconds, 0 or more", OPT(LATENCY));
    if (OPT(IMG_PER_S) && parse_real(OPT(IMG_PER_S), 0, 1, 1e12, &o.img_per_s))
        return bad_usage(c->name, "--img-per-s '%s' is not a number above 0", OPT(IMG_PER_S));
    if (workers > o.batch) {
        fprintf(stderr, "dse %s: --workers %lld is more than the batch, %lld images: a worker would have none "
                        "(--batch B sets the global batch)\n", c->name, workers, (long long)o.batch);
        return EXIT_BAD_INPUT;
    }
    if (OPT(IMG_PER_S) && FLAG(MEASURE)) return bad_usage(c->name, "give --img-per-s X or --measure, not both%s", "");
    o.bandwidth *= 1e9, o.latency_s *= 1e-6;
    if ((rc = opt_fit(c->name, a, &in)) >= 0) return rc;
    struct dse_net net;
    if (dse_netfile_load(a->pos[0], &in, &net, &err)) return fail(&err);
    char how[4608] = "given (--img-per-s)";
    const char *source = "given";
    rc = OPT(IMG_PER_S) ? -1 : comm_compute(c, a, &net, &o, how, sizeof how, &source);
    if (rc < 0)
        rc = dse_report_comm(stdout, a->pos[0], &net, &o, workers, source, how,
                             opt_format(OPT(FORMAT), DSE_FORMAT_TABLE), &err) ? fail(&err) : 0;
    dse_net_deinit(&net);
    return rc;
}

static int cmd_profile(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    int batch = 32, threads = 2, iters = 5, rc;
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    float *x = NULL, loss;
    int *labels = NULL;
    struct dse_model_device_opts dev;
    struct dse_input_shape in;
    batch = OPT_INT(BATCH, batch), threads = OPT_INT(THREADS, threads), iters = OPT_INT(ITERS, iters);
    if ((rc = opt_device(c->name, OPT(DEVICE), OPT(PRECISION), OPT(ALGOS), &dev)) >= 0 ||
        (rc = opt_fit(c->name, a, &in)) >= 0)
        return rc;
    if ((rc = synthetic_model(c->name, a->pos[0], &in, batch, threads, 0, &dev, &m, &x, &labels)) >= 0) goto done;
    int n = m->net.n_layers;
    double *tf = calloc((size_t)(n * iters), sizeof *tf), *tb = calloc((size_t)(n * iters), sizeof *tb);
    rc = 0;
    if (!tf || !tb || dse_model_forward(m, x, labels, &loss, &err) || dse_model_backward(m, &err)) {
        rc = tf && tb ? fail(&err) : 1; /* the warm-up also times the conv strategies */
        goto out;
    }
    /* Node by node through the model (either device); on a device each node's queued work
     * is waited for before the clock is read (dse_model_sync: nothing on the CPU). */
    for (int it = 0; it < iters && !rc; it++) {
        if (dse_model_load_batch(m, x, labels, &err) || dse_model_sync(m, &err)) rc = fail(&err);
        for (int i = 0; i < n && !rc; i++) {
            double t0 = now_s();
            if (dse_model_node_forward(m, i, &err) || dse_model_sync(m, &err)) rc = fail(&err);
            tf[i * iters + it] = now_s() - t0;
        }
        if (!rc && (dse_model_zero_grad(m, &err) || dse_model_sync(m, &err))) rc = fail(&err);
        for (int i = n - 1; i >= 0 && !rc; i--) {
            double t0 = now_s();
            if (dse_model_node_backward(m, i, &err) || dse_model_sync(m, &err)) rc = fail(&err);
            tb[i * iters + it] = now_s() - t0;
        }
    }
    if (!rc) {
        double sf = 0, sb = 0;
        char where[64], name[32];
        if (dev.device.kind == DSE_DEVICE_CPU) snprintf(where, sizeof where, "%d threads", threads);
        else snprintf(where, sizeof where, "%s %s", dse_device_str(&dev.device, name, (int)sizeof name),
                      dse_cuda_math_str(dev.math));
        printf("# dse profile %s: batch %d, %s, median of %d iterations; GFLOP/s counts 2 per "
               "multiply-add, backward = 2x forward FLOPs\n", a->pos[0], batch, where, iters);
        printf("%-28s %-12s %10s %10s %9s %9s\n", "layer", "op", "fwd_ms", "bwd_ms", "fwd_GF/s", "bwd_GF/s");
        for (int i = 0; i < n; i++) {
            qsort(tf + i * iters, (size_t)iters, sizeof *tf, cmp_double);
            qsort(tb + i * iters, (size_t)iters, sizeof *tb, cmp_double);
            double f = tf[i * iters + iters / 2], b = tb[i * iters + iters / 2];
            double fl = (double)dse_node_flops(&m->nodes[i]);
            sf += f, sb += b;
            printf("%-28s %-12s %10.3f %10.3f %9.2f %9.2f\n", m->net.layers[i].name, dse_op_str(m->nodes[i].op),
                   1e3 * f, 1e3 * b, f > 0 ? fl / f / 1e9 : 0, b > 0 ? 2 * fl / b / 1e9 : 0);
        }
        printf("%-28s %-12s %10.3f %10.3f  (%.1f img/s training)\n", "total", "", 1e3 * sf, 1e3 * sb,
               batch / (sf + sb));
    }
out:
    free(tf);
    free(tb);
done:
    dse_model_free(m);
    free(x);
    free(labels);
    return rc < 0 ? 1 : rc;
}


/* ---- dse data: image folders and packs (issue #13) ------------------------------------ */

static const char usage_data[] =
    "usage: dse data pack DIR --out FILE [--size S] [--format jpeg|raw] [--quality Q] [--channels 1|3]\n"
    "                         [--threads T] [--skip-bad] [--max-pixels N]\n"
    "       dse data info SOURCE [--verify]\n"
    "       dse data bench SOURCE [--size N] [--batch B] [--threads T] [--seconds S] [--aug A] [--split train|val]\n"
    "                             [--max-pixels N]\n"
    "       dse data synth DIR [--classes K] [--train N] [--val N] [--sides MIN-MAX] [--seed S] [--mixed]\n"
    "\n"
    "Image data for dse train and dse sweep (docs/data.md). An image folder is laid out as\n"
    "torchvision's ImageFolder: DIR/train/<class>/*.jpg|jpeg|png|bmp|ppm|pgm|tif|tiff|webp and\n"
    "DIR/val/<class>/... (or test/); classes sorted by name. A pack is that folder decoded once into\n"
    "one random-access file.\n"
    "\n"
    "  pack   decode, resize (short side S) and store every image, on every core; atomic\n"
    "  info   classes, images, format and statistics of a pack or a folder; --verify reads every record\n"
    "  bench  images per second the loader delivers (crop, flip, normalize) from a pack or a folder\n"
    "  synth  write a synthetic image folder (learnable classes) for tests and trials\n"
    "Run 'dse data SUBCOMMAND --help' for its options.\n";

static int cmd_data_pack(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_imgfolder f;
    struct dse_pack_opts o;
    struct dse_pack_summary sum;
    struct dse_err err = { 0 };
    int rc;
    dse_pack_opts_default(&o);
    if (!OPT(OUT) || !OPT(OUT)[0]) return bad_usage(c->name, "--out FILE is required (the pack to write)%s", "");
    o.size = OPT_INT(PACK_SIZE, o.size), o.quality = OPT_INT(QUALITY, o.quality), o.threads = OPT_INT(THREADS, o.threads);
    if (o.size > 0 && o.size < 8) return bad_usage(c->name, "--size '%s' is not 0 or an integer from 8 to 4096", OPT(PACK_SIZE));
    o.format = o.size > 0 && o.size <= 64 ? DSE_PACK_RAW : DSE_PACK_JPEG;
    if (OPT(FORMAT)) {
        o.format = !strcmp(OPT(FORMAT), "raw") ? DSE_PACK_RAW : DSE_PACK_JPEG;
    }
    if (OPT(CHANNELS)) {
        o.channels = OPT(CHANNELS)[0] - '0';
    }
    o.skip_bad = FLAG(SKIP_BAD), o.max_pixels = OPT_INT(MAX_PIXELS, 0);
    if (dse_imgfolder_scan(a->pos[0], &f, &err)) {
        dse_imgfolder_deinit(&f);
        return fail(&err);
    }
    fprintf(stderr, "dse data pack: %s: %d classes, %d train + %d %s images%s; short side %d, %s, %d thread%s\n",
            a->pos[0], f.classes, f.count[0], f.count[1], f.val_name[0] ? f.val_name : "val",
            f.ignored ? " (files without .jpg/.jpeg/.png ignored)" : "", o.size,
            o.format == DSE_PACK_JPEG ? "JPEG" : "raw", o.threads, o.threads == 1 ? "" : "s");
    if (!f.val_name[0]) /* it packs, but dse train and dse eval would refuse it (issue #31) */
        fprintf(stderr, "dse data pack: warning: %s has no val/ or test/ folder: the pack will have no evaluation "
                        "split, which dse train and dse eval refuse; add %s/val/<class>/... with images of each "
                        "class\n", a->pos[0], a->pos[0]);
    if (dse_dataprep_pack(&f, OPT(OUT), &o, stderr, isatty(2), &sum, &err)) {
        rc = fail(&err);
    } else {
        printf("%s: %d train + %d %s images of %d classes, %.1f MB, %.1f s (%.0f img/s)%s\n", OPT(OUT),
               sum.records[0], sum.records[1], f.val_name[0] ? f.val_name : "val", f.classes, (double)sum.bytes / 1e6,
               sum.seconds, (sum.records[0] + sum.records[1] + sum.skipped) / (sum.seconds > 0 ? sum.seconds : 1e-9), "");
        if (sum.skipped) printf("skipped %d images that did not decode (named above)\n", sum.skipped);
        printf("next: dse train NET --data %s [--input C,H,W --classes %d]\n", OPT(OUT), f.classes);
        rc = 0;
    }
    dse_imgfolder_deinit(&f);
    return rc;
}

static int cmd_data_info(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    struct dse_data_info info;
    (void)c;
    if (dse_pack_named(a->pos[0])) {
        struct dse_pack *p;
        if (dse_pack_open(a->pos[0], &p, &err)) return fail(&err);
        printf("%s: dse pack v%d, %s%s, %d channel%s, short side %d, %zu bytes\n", a->pos[0], p->version,
               p->format == DSE_PACK_JPEG ? "JPEG" : "raw pixels", p->format == DSE_PACK_JPEG ? " records" : "",
               p->channels, p->channels == 1 ? "" : "s", p->short_side, p->size);
        printf("splits: %s %d images, %s %d images\n", p->split_name[0], p->count[0],
               p->split_name[1][0] ? p->split_name[1] : "val", p->count[1]);
        printf("classes (%d):", p->classes);
        for (int k = 0; k < p->classes && k < 20; k++) printf(" %s", p->class_names[k]);
        printf("%s\nmean:", p->classes > 20 ? " ..." : "");
        for (int ch = 0; ch < p->channels; ch++) printf(" %.6f", p->mean[ch]);
        printf("  std:");
        for (int ch = 0; ch < p->channels; ch++) printf(" %.6f", p->std[ch]);
        printf("  (of pixel/255 over the train split)\n");
        int rc = 0;
        if (FLAG(VERIFY)) {
            if (dse_pack_verify(p, 1, &err)) rc = fail(&err);
            else printf("verified: every record's CRC-32 matches and every record decodes\n");
        }
        dse_pack_close(p);
        return rc;
    }
    if (dse_data_probe(a->pos[0], NULL, &info, &err)) return fail(&err);
    printf("%s: %s, %d classes, ", a->pos[0], info.kind == DSE_DATA_KIND_FOLDER ? "image folder" : info.name,
           info.classes);
    if (info.c) printf("%d channel%s", info.c, info.c == 1 ? "" : "s");
    else printf("JPEG and PNG images of any mode and size (made 1 or 3 channels when packed)");
    if (info.h) printf(" of %dx%d", info.h, info.w);
    if (info.n_train) printf(", %d train + %d evaluation images", info.n_train, info.n_test);
    printf("\n");
    if (info.kind == DSE_DATA_KIND_FOLDER) printf("next: dse data pack %s --out FILE.pack\n", a->pos[0]);
    return 0;
}

static int cmd_data_bench(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    struct dse_pack *p = NULL;
    struct dse_imgfolder f;
    struct dse_loader *l = NULL;
    struct dse_loader_opts lo;
    int size = 227, batch = 256, threads = 0, seconds = 10, split = DSE_PACK_TRAIN, rc;
    enum dse_aug_mode aug = DSE_AUG_RRC;
    memset(&f, 0, sizeof f);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    threads = cpus > 0 ? (int)cpus : 1;
    size = OPT_INT(CROP_SIZE, size), batch = OPT_INT(BATCH, batch), threads = OPT_INT(THREADS, threads);
    seconds = OPT_INT(SECONDS, seconds);
    if (OPT(AUG)) aug = (enum dse_aug_mode)dse_word_index(DSE_AUG_NAMES, OPT(AUG));
    if (OPT(SPLIT)) split = !strcmp(OPT(SPLIT), "val") ? DSE_PACK_VAL : DSE_PACK_TRAIN;
    memset(&lo, 0, sizeof lo);
    lo.batch = batch, lo.shuffle = 1, lo.seed = 1, lo.out_h = size, lo.out_w = size, lo.workers = threads;
    const int is_pack = dse_pack_named(a->pos[0]);
    int channels = 3, short_side = size;
    if (is_pack) {
        if (dse_pack_open(a->pos[0], &p, &err)) return fail(&err);
        channels = p->channels;
        if (p->short_side) short_side = p->short_side;
        dse_data_norm_of_pack(p, &lo.norm);
    } else if (dse_imgfolder_scan(a->pos[0], &f, &err)) {
        dse_imgfolder_deinit(&f);
        return fail(&err);
    } else {
        dse_data_norm_imagenet(channels, &lo.norm); /* as the torchvision comparison uses */
        lo.decode_min_short = size, lo.max_pixels = OPT_INT(MAX_PIXELS, 0);
    }
    dse_data_aug_of(aug, short_side, &lo.aug, &lo.center);
    float *x = NULL;
    int *labels = NULL;
    if ((is_pack ? dse_loader_new_pack(p, split, &lo, &l, &err) : dse_loader_new_folder(&f, split, channels, &lo, &l, &err))) {
        rc = fail(&err);
        goto out;
    }
    x = malloc((size_t)batch * channels * size * size * sizeof *x);
    labels = malloc((size_t)batch * sizeof *labels);
    if (!x || !labels) {
        rc = 1;
        goto out;
    }
    long long images = 0;
    int count, warm = 2, epoch = 0;
    double t0 = 0, t = 0;
    dse_loader_start_epoch(l, epoch);
    for (;;) {
        if (!dse_loader_next(l, x, labels, &count)) {
            if (dse_loader_status(l, &err)) {
                rc = fail(&err);
                goto out;
            }
            dse_loader_start_epoch(l, ++epoch);
            continue;
        }
        if (warm > 0 && --warm == 0) {
            t0 = now_s();
            continue;
        }
        if (warm > 0) continue;
        images += count;
        t = now_s() - t0;
        if (t >= seconds) break;
    }
    char augs[32];
    snprintf(augs, sizeof augs, "%s%s", lo.aug.rrc ? "rrc" : lo.aug.crop_pad ? "crop" : "center", lo.aug.flip ? "+flip" : "");
    printf("name=loader.dse source=%s format=%s threads=%d batch=%d size=%d aug=%s images=%lld seconds=%.2f "
           "img_per_s=%.1f img_per_s_per_core=%.1f\n", is_pack ? "pack" : "folder",
           is_pack ? (p->format == DSE_PACK_JPEG ? "jpeg" : "raw") : "files", threads, batch, size, augs, images, t,
           images / t, images / t / (threads < cpus ? threads : cpus));
    rc = 0;
out:
    free(x);
    free(labels);
    dse_loader_free(l);
    dse_pack_close(p);
    dse_imgfolder_deinit(&f);
    return rc;
}

static int cmd_data_synth(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_synth_opts o;
    struct dse_err err = { 0 };
    int seed = 1;
    dse_synth_opts_default(&o);
    o.classes = OPT_INT(SYNTH_CLASSES, o.classes);
    o.train_per_class = OPT_INT(TRAIN_IMAGES, o.train_per_class);
    o.val_per_class = OPT_INT(VAL_IMAGES, o.val_per_class);
    seed = OPT_INT(SEED, seed);
    if (OPT(SIDES)) {
        int lo, hi, used = 0;
        if (sscanf(OPT(SIDES), "%d-%d%n", &lo, &hi, &used) != 2 || OPT(SIDES)[used] || lo < 8 || hi < lo || hi > 4096)
            return bad_usage(c->name, "--sides '%s' is not MIN-MAX with 8 <= MIN <= MAX <= 4096 (e.g. 256-400)", OPT(SIDES));
        o.min_side = lo, o.max_side = hi;
    }
    o.seed = (uint64_t)seed;
    o.mixed = FLAG(MIXED);
    if (dse_synth_folder(a->pos[0], &o, &err)) return fail(&err);
    printf("%s: %d classes x (%d train + %d val) images, sides %d to %d%s\nnext: dse data pack %s --out %s.pack\n",
           a->pos[0], o.classes, o.train_per_class, o.val_per_class, o.min_side, o.max_side,
           o.mixed ? ", every decoder path" : ", RGB JPEG", a->pos[0], a->pos[0]);
    return 0;
}


/* ---- dse eval, dse predict (issue #14 item 3) ----------------------------------------- */

/* A JSON string of s (names come from folders: dse_json_write_str escapes and mends them). */
static void json_str(FILE *f, const char *s) { dse_json_write_str(f, s, strlen(s)); }

static int cmd_eval(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_train_opts o;
    struct dse_err err = { 0 };
    struct dse_net net;
    struct dse_input_shape in;
    struct dse_ckpt_info info;
    struct dse_eval_result r;
    int rc;
    dse_train_opts_default(&o);
    o.threads = 2;
    if (!OPT(CHECKPOINT)) return bad_usage(c->name, "--checkpoint FILE is required%s", "");
    o.batch = OPT_INT(BATCH, o.batch), o.threads = OPT_INT(THREADS, o.threads);
    o.limit_test = OPT_INT(LIMIT_TEST, o.limit_test);
    if ((rc = opt_fit(c->name, a, &in)) >= 0) return rc;
    if (dse_checkpoint_info(OPT(CHECKPOINT), &info, &err)) return fail(&err);
    dse_netfile_fit_checkpoint(&in, &info);
    o.data = OPT(DATA) ? OPT(DATA) : info.data[0] ? info.data : "fashion-mnist";
    o.limit_train = 1; /* the training split is not read for evaluation (image sources) */
    o.conv_algo = DSE_CPU_CONV_GEMM_BATCH; /* no timing: the same bits every run */
    if (dse_netfile_load(a->pos[0], &in, &net, &err)) return free(info.class_names), fail(&err);
    /* An image folder is evaluated from its pack, as dse train trained and tested on it (the
     * same cache entry, made here if missing): read directly, its images would be resized
     * once from the originals instead of from the pack's, and the numbers would differ. */
    char data_path[4096];
    const char *data_shown = o.data;
    if (dse_dataprep_resolve(o.data, OPT(PACK_CACHE), net.in_c, net.in_h, net.in_w, OPT_INT(MAX_PIXELS, 0), stderr,
                             data_path, sizeof data_path, &err))
        return free(info.class_names), dse_net_deinit(&net), fail(&err);
    o.data = data_path;
    if (dse_eval_run(&net, &o, OPT(CHECKPOINT), &r, &err)) {
        rc = fail_net(&err, a->pos[0]);
    } else {
        rc = 0;
        if (FLAG(JSON)) {
            printf("{\"checkpoint\": ");
            json_str(stdout, OPT(CHECKPOINT));
            printf(", \"data\": ");
            json_str(stdout, data_shown);
            printf(", \"images\": %d, \"loss\": %.6f, \"top1\": %.6f, \"top5\": %.6f, \"unpredicted\": %d, \"per_class\": [",
                   r.images, r.loss, r.top1, r.top5, r.unpredicted);
            for (int k = 0; k < r.classes; k++) {
                printf("%s{\"class\": %d, \"name\": ", k ? ", " : "", k);
                json_str(stdout, k < info.classes && info.class_names ? info.class_names[k] : "");
                printf(", \"images\": %d, \"top1_hits\": %d}", r.class_n[k], r.class_hits[k]);
            }
            printf("]}\n");
        } else {
            printf("%s on %s: %d test images, loss %.4f, top-1 %.2f%%, top-5 %.2f%%\n", OPT(CHECKPOINT), data_shown,
                   r.images, r.loss, 100 * r.top1, 100 * r.top5);
            printf("%5s  %-24s %8s %8s %8s\n", "class", "name", "images", "top-1", "top-1 %");
            for (int k = 0; k < r.classes; k++)
                if (r.class_n[k])
                    printf("%5d  %-24.24s %8d %8d %8.2f\n", k,
                           k < info.classes && info.class_names ? info.class_names[k] : "", r.class_n[k],
                           r.class_hits[k], 100.0 * r.class_hits[k] / r.class_n[k]);
        }
        dse_eval_result_free(&r);
    }
    free(info.class_names);
    dse_net_deinit(&net);
    return rc;
}

struct ranked {
    int   k;
    float p;
};

static int cmp_ranked(const void *a, const void *b) {
    const struct ranked *x = a, *y = b;
    return x->p < y->p ? 1 : x->p > y->p ? -1 : x->k - y->k; /* ties to the lower class, as top-1 */
}

/* An IDX or CIFAR entry "DATA:SPLIT:N" that is not a file: 1 and its parts, else 0; -1 if it
 * has that shape but SPLIT is neither train nor test (spec then holds SPLIT). */
static int data_entry(const char *arg, char *spec, size_t size, enum dse_data_split *split, int *index) {
    const char *b = strrchr(arg, ':');
    if (!b || b == arg || access(arg, F_OK) == 0) return 0;
    const char *a = b - 1;
    while (a > arg && *a != ':') a--;
    if (*a != ':' || a == arg || (size_t)(a - arg) >= size) return 0;
    long long n;
    if (parse_ll(b + 1, 0, INT32_MAX, &n)) return 0;
    if ((size_t)(b - a - 1) == 5 && !strncmp(a + 1, "train", 5)) *split = DSE_DATA_SPLIT_TRAIN;
    else if ((size_t)(b - a - 1) == 4 && !strncmp(a + 1, "test", 4)) *split = DSE_DATA_SPLIT_TEST;
    else return snprintf(spec, size, "%.*s", (int)(b - a - 1), a + 1), -1;
    memcpy(spec, arg, (size_t)(a - arg));
    spec[a - arg] = '\0';
    *index = (int)n;
    return 1;
}

/* Entry `index` of a dataset split as an image (interleaved channels), loading the split
 * unless *ds already holds it (the spec and split in key). */
static enum dse_status data_image(const char *arg, const char *spec, enum dse_data_split split, int index,
                                  struct dse_data_files *files, struct dse_dataset **ds, char *key, size_t key_size,
                                  struct dse_image *im, struct dse_err *err) {
    char want[320];
    enum dse_status st;
    snprintf(want, sizeof want, "%s:%d", spec, (int)split);
    if (!*ds || strcmp(key, want)) {
        dse_dataset_free(*ds), *ds = NULL;
        if ((st = dse_data_locate(spec, NULL, files, err)) || (st = dse_data_load(files, split, ds, err))) return st;
        snprintf(key, key_size, "%s", want);
    }
    const struct dse_dataset *d = *ds;
    if (index >= d->n)
        return dse_err_set(err, DSE_ERR_CONFIG, arg, 0, "the %s split has %d images (0 to %d)",
                           split == DSE_DATA_SPLIT_TRAIN ? "train" : "test", d->n, d->n - 1);
    if ((st = dse_image_reserve(im, d->w, d->h, d->c, err))) return st;
    const uint8_t *p = d->pixels + (size_t)index * (size_t)(d->c * d->h * d->w);
    for (int ch = 0; ch < d->c; ch++)
        for (int i = 0; i < d->h * d->w; i++) im->px[(size_t)i * d->c + ch] = p[(size_t)ch * d->h * d->w + i];
    return DSE_OK;
}

static int cmd_predict(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    struct dse_net net;
    struct dse_input_shape in;
    struct dse_ckpt_info info;
    struct dse_model *m = NULL;
    struct dse_image im = { 0 }, tmp = { 0 };
    struct dse_image_work work = { 0 };
    struct dse_data_files files;
    struct dse_dataset *ds = NULL;
    char ds_key[320] = "";
    float *x = NULL;
    struct ranked *rk = NULL;
    int top = 5, rc, next, label = 0;
    int64_t it;
    if (!OPT(CHECKPOINT)) return bad_usage(c->name, "--checkpoint FILE is required%s", "");
    if (a->n_pos < 2) return bad_usage(c->name, "expected one network file and at least one image%s", "");
    top = OPT_INT(TOP, top);
    for (int i = 1; i < a->n_pos; i++) { /* before any work: a bad entry is not "cannot open" */
        char spec[256];
        enum dse_data_split split;
        int index;
        if (data_entry(a->pos[i], spec, sizeof spec, &split, &index) < 0) {
            dse_err_set(&err, DSE_ERR_CONFIG, a->pos[i], 0, "no such image file, and as DATA:SPLIT:N its split "
                        "'%s' is not train or test", spec);
            return fail(&err);
        }
    }
    if ((rc = opt_fit(c->name, a, &in)) >= 0) return rc;
    if (dse_fs_check_input(OPT(CHECKPOINT), &err)) return fail(&err); /* a FIFO would block the open */
    for (int i = 0; i < a->n_pos; i++)
        if (dse_fs_check_input(a->pos[i], &err)) return fail(&err);
    if (dse_checkpoint_info(OPT(CHECKPOINT), &info, &err)) return fail(&err);
    dse_netfile_fit_checkpoint(&in, &info);
    if (dse_netfile_load(a->pos[0], &in, &net, &err)) return free(info.class_names), fail(&err);
    struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA, .inference = 1 };
    rc = 0;
    if (net.in_c != 1 && net.in_c != 3) {
        dse_err_set(&err, DSE_ERR_CONFIG, a->pos[0], 0, "the network takes %d-channel input; images give 1 or 3", net.in_c);
        rc = fail(&err);
        goto out;
    }
    if (dse_model_new(&net, &mo, &m, &err) || dse_checkpoint_load(m, OPT(CHECKPOINT), &next, &it, &err)) {
        rc = fail_net(&err, a->pos[0]);
        goto out;
    }
    m->cx.conv_force = DSE_CPU_CONV_GEMM_BATCH;
    dse_model_set_training(m, 0);
    const int k = m->nodes[m->loss].in[0]->c;
    x = malloc(sizeof *x * (size_t)dse_tensor_count(&m->input));
    rk = malloc(sizeof *rk * (size_t)k);
    if (!x || !rk) {
        rc = 1;
        goto out;
    }
    if (top > k) top = k;
    if (!info.norm.c) fprintf(stderr, "dse predict: %s records no normalization (format 1, or made without data): "
                                      "pixels are used as pixel/255\n", OPT(CHECKPOINT));
    for (int i = 1; i < a->n_pos && !rc; i++) {
        char *data = NULL, spec[256];
        size_t len;
        float loss;
        enum dse_data_split split;
        int index;
        const int entry = data_entry(a->pos[i], spec, sizeof spec, &split, &index);
        if ((entry ? data_image(a->pos[i], spec, split, index, &files, &ds, ds_key, sizeof ds_key, &im, &err)
                   : (dse_fs_read(a->pos[i], &data, &len, &err) ||
                      dse_image_decode((const uint8_t *)data, len, net.in_c, 0, OPT_INT(MAX_PIXELS, 0), &im, &err))) ||
            dse_data_image_eval(&im, net.in_h, net.in_w, info.eval_center, info.norm.c == net.in_c ? &info.norm : NULL,
                                &tmp, &work, x, &err) ||
            dse_model_forward(m, x, &label, &loss, &err)) {
            dse_err_name_file(&err, a->pos[i]);
            rc = fail(&err);
        }
        free(data);
        if (rc) break;
        const float *p = dse_model_probs(m);
        for (int j = 0; j < k; j++) rk[j] = (struct ranked){ .k = j, .p = p[j] };
        qsort(rk, (size_t)k, sizeof *rk, cmp_ranked);
        if (FLAG(JSON)) {
            printf("{\"image\": ");
            json_str(stdout, a->pos[i]);
            printf(", \"top\": [");
            for (int j = 0; j < top; j++) {
                printf("%s{\"class\": %d, \"name\": ", j ? ", " : "", rk[j].k);
                json_str(stdout, rk[j].k < info.classes && info.class_names ? info.class_names[rk[j].k] : "");
                printf(", \"p\": %.6f}", rk[j].p);
            }
            printf("]}\n");
        } else {
            printf("%s\n", a->pos[i]);
            for (int j = 0; j < top; j++)
                printf("  %d. %-24s class %-4d p = %.4f\n", j + 1,
                       rk[j].k < info.classes && info.class_names ? info.class_names[rk[j].k] : "?", rk[j].k, rk[j].p);
        }
    }
out:
    dse_image_deinit(&im), dse_image_deinit(&tmp), dse_image_work_deinit(&work);
    dse_dataset_free(ds);
    free(x), free(rk), free(info.class_names);
    dse_model_free(m);
    dse_net_deinit(&net);
    return rc;
}

static int cmd_export(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_export_req q = { .format = DSE_EXPORT_ONNX };
    struct dse_err err = { 0 };
    int rc;
    q.format = OPT(FORMAT) && !strcmp(OPT(FORMAT), "caffe") ? DSE_EXPORT_CAFFE : DSE_EXPORT_ONNX;
    q.out = OPT(OUT);
    if ((rc = opt_fit(c->name, a, &q.fit)) >= 0) return rc;
    const int sweep = OPT(ID) || FLAG(BEST);
    if (OPT(CHECKPOINT) && sweep) return bad_usage(c->name, "give NET --checkpoint FILE, or SWEEPDIR --id/--best, not both%s", "");
    if (!OPT(CHECKPOINT) && !sweep)
        return bad_usage(c->name, "say where the weights are: --checkpoint FILE (with a network file), or --id ID or "
                                  "--best (with a sweep directory)%s", "");
    if (OPT(ID) && FLAG(BEST)) return bad_usage(c->name, "give --id or --best, not both%s", "");
    if (OPT(MAX_MB) && !FLAG(BEST)) return bad_usage(c->name, "--max-mb goes with --best%s", "");
    if (OPT(MAX_MB)) {
        char *end;
        q.max_mb = strtod(OPT(MAX_MB), &end);
        if (end == OPT(MAX_MB) || *end || !(q.max_mb > 0) || q.max_mb > 1e9)
            return bad_usage(c->name, "--max-mb '%s' is not a number of megabytes above 0", OPT(MAX_MB));
    }
    if (OPT(ID) && !dse_space_rep_id_valid(OPT(ID)))
        return bad_usage(c->name, "--id '%s' is not a candidate id (c and 16 hex digits, as dse report shows them, "
                                  "and r1 to r63 for a replicate)",
                         OPT(ID));
    if (sweep && (q.fit.c || q.fit.classes))
        return bad_usage(c->name, "--input and --classes fit a network file; a sweep's candidates are fitted already%s", "");
    if (sweep) q.sweep_dir = a->pos[0], q.id = OPT(ID), q.best = FLAG(BEST);
    else q.net_path = a->pos[0], q.checkpoint = OPT(CHECKPOINT);
    return dse_export_run(&q, stderr, &err) ? (sweep ? fail(&err) : fail_net(&err, a->pos[0])) : 0;
}

/* "a,b,c": up to DSE_DATA_MAX_CHANNELS floats (positive if pos) into v; their count, or -1. */
static int parse_floats(const char *s, int pos, float *v) {
    int n = 0;
    while (n < DSE_DATA_MAX_CHANNELS) {
        char *end;
        errno = 0;
        double x = strtod(s, &end);
        if (end == s || errno || !isfinite(x) || (pos && !(x > 0))) return -1;
        v[n++] = (float)x;
        if (*end == '\0') return n;
        if (*end != ',') return -1;
        s = end + 1;
    }
    return -1;
}

static int cmd_import(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_input_shape fit;
    struct dse_data_norm norm = { 0 };
    struct dse_err err = { 0 };
    char out[4200];
    int rc;
    if ((rc = opt_fit(c->name, a, &fit)) >= 0) return rc;
    if (!OPT(MEAN) != !OPT(STD)) return bad_usage(c->name, "--mean and --std go together%s", "");
    if (OPT(MEAN)) {
        int nm = parse_floats(OPT(MEAN), 0, norm.mean), ns = parse_floats(OPT(STD), 1, norm.std);
        if (nm < 0) return bad_usage(c->name, "--mean '%s' is not a comma-separated list of numbers (one a channel)", OPT(MEAN));
        if (ns < 0) return bad_usage(c->name, "--std '%s' is not a comma-separated list of numbers above 0", OPT(STD));
        if (nm != ns) return bad_usage(c->name, "--mean and --std give different channel counts%s", "");
        norm.c = nm;
    }
    if (OPT(OUT)) {
        snprintf(out, sizeof out, "%s", OPT(OUT));
    } else {
        snprintf(out, sizeof out, "%s", a->pos[0]);
        size_t n = strlen(out);
        if (n > 11 && !strcmp(out + n - 11, ".caffemodel")) out[n - 11] = '\0';
        snprintf(out + strlen(out), sizeof out - strlen(out), ".ckpt");
    }
    return dse_import_run(a->pos[0], a->pos[1], &fit, &norm, out, stderr, &err) ? fail_net(&err, a->pos[1]) : 0;
}

/* The function that runs each command of DSE_COMMANDS (dse/options.h). */
typedef int cmd_fn(const struct dse_opt_cmd *c, const struct dse_opt_args *a);
static cmd_fn *const cmd_runs[DSE_CMD_COUNT] = {
#define X(e, fn, name) [DSE_CMD_##e] = cmd_##fn,
    DSE_COMMANDS(X)
#undef X
};

static int run_cmd(enum dse_cmd k, int argc, char **argv) {
    const struct dse_opt_cmd *c = &dse_opt_cmds[k];
    struct dse_opt_args a;
    struct dse_err err = { 0 };
    if (dse_opts_parse(c, argc, argv, &a, &err)) return bad_usage(c->name, "%s", err.msg);
    if (a.help) return dse_opts_usage(stdout, c), 0;
    return cmd_runs[k](c, &a);
}

/* " (did you mean 'analyze'?)" for a mistyped command name (data: a subcommand of dse data),
 * into buf; "" when no command is close (dse_word_suggest). */
static const char *near_command(const char *name, int data, char *buf, int size) {
    char names[512] = "", near[64];
    for (int k = 0; k < DSE_CMD_COUNT; k++) {
        const char *n = dse_opt_cmds[k].name;
        size_t at = strlen(names);
        if (!strncmp(n, "data ", 5) == !!data) snprintf(names + at, sizeof names - at, " %s", data ? n + 5 : n);
    }
    if (!data) strcat(names, " data help");
    buf[0] = '\0';
    if (dse_word_suggest(names, name, near, (int)sizeof near))
        snprintf(buf, (size_t)size, " (did you mean '%s'?)", near);
    return buf;
}

static int run(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_BAD_INPUT;
    }
    const char *name = argv[1];
    char        hint[96];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) return fputs(usage_main, stdout), 0;
    if (!strcmp(name, "--version")) {
        const struct dse_blas_info *b = dse_blas_setup();
        printf("dse " DSE_VERSION " (backends: %s)\nblas: %s\nblas kernels: %s (%s)\ncpu features: %s\n",
               dse_engine_backends(), b->library, b->core, b->how, b->features);
        return 0;
    }
    if (!strcmp(name, "help")) {
        /* dse help, dse help --help, dse help help: what help does is in the main usage */
        if (argc == 2 || !strcmp(argv[2], "--help") || !strcmp(argv[2], "-h") || !strcmp(argv[2], "help"))
            return fputs(usage_main, stdout), 0;
        name = argv[2];
        for (int k = 0; k < DSE_CMD_COUNT; k++)
            if (strncmp(dse_opt_cmds[k].name, "data ", 5) && !strcmp(name, dse_opt_cmds[k].name))
                return dse_opts_usage(stdout, &dse_opt_cmds[k]), 0;
        if (!strcmp(name, "data")) return fputs(usage_data, stdout), 0;
        fprintf(stderr, "dse help: unknown command '%s'%s\n\n%s", name, near_command(name, 0, hint, sizeof hint),
                usage_main);
        return EXIT_BAD_INPUT;
    }
    if (!strcmp(name, "data")) {
        const char *sub = argc > 2 ? argv[2] : "";
        if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) return fputs(usage_data, stdout), 0;
        for (int k = 0; k < DSE_CMD_COUNT; k++)
            if (!strncmp(dse_opt_cmds[k].name, "data ", 5) && !strcmp(sub, dse_opt_cmds[k].name + 5))
                return run_cmd((enum dse_cmd)k, argc - 3, argv + 3);
        fprintf(stderr, "dse data: %s '%s'%s\n\n%s", sub[0] ? "unknown subcommand" : "expected a subcommand", sub,
                sub[0] ? near_command(sub, 1, hint, sizeof hint) : "", usage_data);
        return EXIT_BAD_INPUT;
    }
    for (int k = 0; k < DSE_CMD_COUNT; k++)
        if (strncmp(dse_opt_cmds[k].name, "data ", 5) && !strcmp(name, dse_opt_cmds[k].name))
            return run_cmd((enum dse_cmd)k, argc - 2, argv + 2);
    fprintf(stderr, "dse: unknown command '%s'%s\n\n%s", name, near_command(name, 0, hint, sizeof hint), usage_main);
    return EXIT_BAD_INPUT;
}

/* Output that did not reach its file is a failure, not a silent success (> /dev/full). */
int main(int argc, char **argv) {
    dse_blas_setup(); /* before any BLAS call: kernels that this CPU runs best (engine/cpu/blas.c) */
    int rc = run(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "dse: cannot write the output: %s\n", strerror(errno));
        return 1;
    }
    return rc;
}
