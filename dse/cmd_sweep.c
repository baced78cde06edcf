/* cmd_sweep.c: dse sweep, dse status and dse report (docs/cli.md). Moved from dse/main.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dse/cmd.h"
#include "dse/dataprep.h"
#include "dse/trainlog.h"
#include "sweep/sweep.h"

/* --gpus: "all" or a list of device indices (dse_opts_parse took it), none named twice. */
static int opt_gpus(const char *cmd, const struct dse_opt_args *a, struct dse_sweep_opts *o) {
    long long g[DSE_SWEEP_GPUS_MAX];
    o->n_gpus = dse_opts_list(a, DSE_OPT_GPUS, g, NULL, DSE_SWEEP_GPUS_MAX);
    if (!o->n_gpus) return o->gpus_all = 1, -1; /* the word all */
    for (int i = 0; i < o->n_gpus; i++) {
        for (int k = 0; k < i; k++)
            if (g[k] == g[i]) return o->n_gpus = 0, bad_usage(cmd, "--gpus '%s' names a device twice", OPT(GPUS));
        o->gpus[i] = (int)g[i];
    }
    return -1;
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
        .dse = dse, .space = space, .dir = out, .name = name, .array = (int)OPT_NUM(ARRAY),
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

/* dse sweep's options into o (from dse_sweep_opts_default), checked against each other
 * before anything is read or written; --cancel runs here. -1, or the command's exit code. */
static int sweep_options(const struct dse_opt_cmd *c, const struct dse_opt_args *a, struct dse_sweep_opts *o) {
    struct dse_err err = { 0 };
    int rc;
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
    dse_opts_bind(c, a, o); /* the numbers, --early-stop, --rank, --algos, --command-id, --data-root */
    if (o->command_id &&
        (!o->command_id[0] || strlen(o->command_id) > DSE_SWEEP_COMMAND_ID_MAX ||
         o->command_id[strspn(o->command_id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")]))
        return bad_usage(c->name, "--command-id '%s' is not 1 to " DSE_TRAIN_LOG_STR(DSE_SWEEP_COMMAND_ID_MAX)
                         " letters, digits, '.', '_' or '-'", o->command_id);
    if (OPT(BUDGET) && (rc = opt_budget(c->name, OPT(BUDGET), o)) >= 0) return rc;
    if (OPT(CKPT_EVERY) && (rc = opt_ckpt_every(c->name, OPT(CKPT_EVERY), &o->ckpt_every_s, &o->ckpt_every_steps)) >= 0)
        return rc;
    if (OPT(PROGRESS_EVERY) && (rc = opt_progress_every(c->name, OPT(PROGRESS_EVERY), &o->progress_every_s)) >= 0)
        return rc;
    o->set_eta = FLAG(ETA), o->set_min_epochs = FLAG(MIN_EPOCHS);
    o->set_halving = FLAG(EARLY_STOP), o->set_rank = FLAG(RANK);
    if (OPT(CONV)) {
        if ((rc = opt_conv(c->name, OPT(CONV), &o->plan.conv)) >= 0) return rc;
        o->set_conv = 1;
    }
    if (OPT(GPUS) && (rc = opt_gpus(c->name, a, o)) >= 0) return rc;
    const int gpus = OPT(GPUS) != NULL || OPT(GPUS_PER_TASK) != NULL; /* --gpus-per-task: --gpus all in each task */
    if (OPT(PER_GPU)) {
        if (!gpus) return bad_usage(c->name, "--per-gpu %s needs --gpus", OPT(PER_GPU));
        long long k = 0;
        if (strcmp(OPT(PER_GPU), "auto") && parse_ll(OPT(PER_GPU), 1, 64, &k))
            return bad_usage(c->name, "--per-gpu '%s' is not auto or a number of workers from 1 to 64", OPT(PER_GPU));
        o->per_gpu = (int)k;
    }
    if (OPT(PRECISION)) {
        if (dse_cuda_math_parse(OPT(PRECISION), &o->plan.precision, &err))
            return bad_usage(c->name, "--precision '%s' is not fp32, tf32, fp16 or bf16", OPT(PRECISION));
        if (!gpus && o->plan.precision != DSE_CUDA_MATH_FP32 && o->plan.precision != DSE_CUDA_MATH_BF16)
            return bad_usage(c->name, "--precision %s needs --gpus; CPU sweeps compute in fp32 or bf16", OPT(PRECISION));
        const struct dse_model_device_opts cpu = { .math = o->plan.precision }; /* without --gpus */
        if (!gpus && (rc = conv_in_bf16(c->name, OPT(CONV), &cpu)) >= 0) return rc;
        /* before DIR is touched; under --slurm the tasks' nodes train (their workers check there) */
        if (!gpus && !slurm && o->plan.precision == DSE_CUDA_MATH_BF16 && dse_cpu_bf16_why())
            return bad_usage(c->name, "--precision bf16 on the CPU needs AVX512-BF16: %s (or give --gpus)",
                             dse_cpu_bf16_why());
        o->set_precision = 1;
    }
    if (OPT(ALGOS) && !gpus)
        return bad_usage(c->name, "--algos %s needs --gpus; the CPU's kernels are deterministic", OPT(ALGOS));
    o->set_algos = FLAG(ALGOS);
    if (OPT(MAX_OOM) && !gpus) return bad_usage(c->name, "--max-oom %s needs --gpus", OPT(MAX_OOM));
    if (gpus && OPT(WORKERS))
        return bad_usage(c->name, "--workers %s is for the CPU; with --gpus give --per-gpu (workers per GPU)", OPT(WORKERS));
    if (gpus && OPT(CONV) && strcmp(OPT(CONV), "auto"))
        return bad_usage(c->name, "--conv %s chooses CPU conv strategies; on GPUs cuDNN chooses (leave it out)",
                         OPT(CONV));
    const int analytic = FLAG(ANALYTIC_ONLY);
    for (int k = 0; analytic && k < DSE_OPT_COUNT; k++) /* any training option given */
        if (a->val[k] && k != DSE_OPT_OUT && k != DSE_OPT_ANALYTIC_ONLY && k != DSE_OPT_STRATEGY)
            return bad_usage(c->name, "--analytic-only trains nothing: give only --out (and --strategy) with it%s", "");
    return -1;
}

int cmd_sweep(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_space s;
    struct dse_err err = { 0 };
    struct dse_sweep_summary sum;
    struct dse_sweep_opts o;
    char dir[4096];
    int rc;
    dse_sweep_opts_default(&o);
    if ((rc = sweep_options(c, a, &o)) >= 0) return rc;
    const int slurm = FLAG(SLURM), analytic = FLAG(ANALYTIC_ONLY);
    if (dse_space_load(a->pos[0], &s, &err)) return fail(&err);
    char said[1024];
    if ((OPT(STRATEGY) && dse_space_set_strategy(&s, (enum dse_strategy)dse_strategy_find(OPT(STRATEGY)), &err)) ||
        dse_search_resolve(&s, said, (int)sizeof said, &err)) { /* auto: chosen here, said below */
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
    fputs(said, stdout); /* by rank 0 only */
    if (s.search.strategy == DSE_SEARCH_BO && o.plan.halving == DSE_SWEEP_HALVING_ASHA)
        printf("search: multi-fidelity: each proposal trains to asha's first rung, and its top-1 at each rung goes "
               "into bo's model (docs/sweep-dir.md, \"Multi-fidelity bo\")\n");
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
        const int evo = dse_strategy_logged(s.search.strategy);
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
int cmd_status(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
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

int cmd_report(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
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
    const int compressed = OPT(SIZE) && !strcmp(OPT(SIZE), "compressed");
    if (dse_report_sweep_size(stdout, a->pos[0], fmt, OPT(PLOT), compressed, &best, &err)) return fail(&err);
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
