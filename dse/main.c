/* main.c: the dse command. Parses arguments, calls the library modules, prints their
 * errors as "file:line: message" and picks the exit code: 0 success, 2 bad input
 * (usage, network or space file, shapes), 1 anything else. docs/cli.md describes every
 * command. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "engine/train.h"
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
    "  sweep SPACE          cost and train every candidate of a space, with many workers\n"
    "  status DIR           progress of a training sweep: done, running, pending, ETA\n"
    "  report DIR           candidates and Pareto frontier of a sweep; SVG plot\n"
    "  train NET            train a network on Fashion-MNIST (or MNIST, CIFAR) on the CPU or a GPU\n"
    "  bench NET            training or inference images per second\n"
    "  profile NET          per-layer forward and backward time and GFLOP/s\n"
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
    "usage: dse sweep SPACE [--out DIR] [--workers N] [--threads T] [--budget E|Nh|Nm]\n"
    "                       [--early-stop none|sh] [--eta N] [--min-epochs R] [--rank pareto|top1]\n"
    "                       [--conv auto|gemm_batch|gemm_image|winograd] [--lease-seconds S]\n"
    "                       [--max-crashes N] [--data-root DIR]\n"
    "                       [--gpus LIST|all [--per-gpu K|auto] [--precision fp32|tf32|fp16|bf16] [--max-oom N]\n"
    "                        [--algos det|any]]\n"
    "       dse sweep SPACE --analytic-only [--out DIR]\n"
    "\n"
    "Generate and cost every candidate of a design space (or its sample), prune by the\n"
    "space's constraints, record each candidate in DIR (default sweeps/<space name>), then\n"
    "train every unpruned candidate with the space's train section: per-epoch loss, top-1,\n"
    "top-5, wall time, images/s and a status (done, diverged, failed, stopped) go into its\n"
    "file (docs/sweep-dir.md). Any number of these commands, on one machine or several\n"
    "sharing DIR, work on the same sweep: candidates are claimed with leases that expire if a\n"
    "worker dies, and a dead worker's candidate resumes from its last checkpoint. Running it\n"
    "again joins or resumes the sweep. Progress lines go to stderr; 'dse status DIR' shows it.\n"
    "When every candidate has ended, prints the report (dse report) and writes DIR/frontier.svg\n"
    "and DIR/curves.svg.\n"
    "\n"
    "  --out DIR          the sweep directory\n"
    "  --analytic-only    cost and prune only; train nothing\n"
    "  --workers N        worker processes this command starts (default 2)\n"
    "  --threads T        engine threads per worker (default 1; 2 workers x 1 thread use two\n"
    "                     cores best, docs/sweep-dir.md)\n"
    "  --budget B         B or Be: epochs per candidate (the schedule's length; default: the\n"
    "                     space's train.epochs); Nh or Nm: stop this command after N hours or\n"
    "                     minutes (the candidates resume from their checkpoints next time)\n"
    "  --early-stop S     none (default): train every candidate fully; sh: successive halving\n"
    "  --eta N            halving: the top 1/N of each rung go on (default 3)\n"
    "  --min-epochs R     halving: rungs at R, R*eta, R*eta^2, ... epochs (default 1)\n"
    "  --rank K           halving: pareto (default: Pareto rank on top-1 and model size, so\n"
    "                     small models are not culled for being small) or top1\n"
    "  --conv S           conv strategy: auto (timed once per candidate; default) or a fixed one\n"
    "  --lease-seconds S  a lease's time to live (default 60; renewed every S/10 seconds)\n"
    "  --max-crashes N    a candidate whose workers die N times in a row without finishing an\n"
    "                     epoch is marked failed (default 3)\n"
    "  --data-root DIR    where datasets are looked up (default /usr/share/datasets)\n"
    "\n"
    "On GPUs (docs/sweep-dir.md, \"Sweeps on shared GPUs\"):\n"
    "  --gpus LIST        train on these CUDA devices instead of the CPU: comma-separated indices as\n"
    "                     this process sees them (CUDA_VISIBLE_DEVICES renumbers them from 0), or\n"
    "                     all. A worker claims a candidate only when the analyzer's training-memory\n"
    "                     estimate, plus 10% and 768 MiB, fits in its GPU's free memory (other\n"
    "                     users' processes included); otherwise it waits\n"
    "  --per-gpu K        workers per GPU: a number, or auto (default: as many as fit, at most 8,\n"
    "                     at most the CPU cores per GPU)\n"
    "  --precision P      conv and fc arithmetic: fp32 (default), tf32 (tensor cores), or mixed:\n"
    "                     fp16 (with loss scaling) or bf16 convs; all but fp32 change results\n"
    "  --max-oom N        a candidate that runs out of GPU memory is re-queued with a note and asks\n"
    "                     for more next time; after N times in a row it is marked failed (default 4)\n"
    "  --algos A          cuDNN's algorithms: det (default: deterministic ones only) or any (also\n"
    "                     those that add in a varying order; faster)\n"
    "\n"
    "The options that change results (--budget epochs, --early-stop, --eta, --min-epochs, --rank,\n"
    "--conv, --precision, --algos) are fixed by the sweep's first worker in DIR/plan.json; later\n"
    "ones must agree. Which GPU, how many workers and threads do not change them beyond float\n"
    "rounding.\n";

static const char usage_status[] =
    "usage: dse status DIR\n"
    "\n"
    "Where a training sweep stands: candidates done, stopped (by rung), diverged, failed,\n"
    "running (and on which host and pid), waiting for a rung decision and pending; epochs and\n"
    "time spent against full training; an ETA. Reads only: safe while workers run.\n";

static const char usage_report[] =
    "usage: dse report DIR [--format md|csv|tex|json] [--plot FILE.svg] [--curves FILE.svg]\n"
    "\n"
    "All candidates of a sweep directory and the Pareto frontier: maximize accuracy and\n"
    "minimize model size once candidates are trained, before that minimize model size\n"
    "and FLOPs. docs/report.md describes the formats.\n"
    "\n"
    "  --format F       md (default), csv, tex or json\n"
    "  --plot FILE.svg  also draw accuracy (or FLOPs) against model size\n"
    "  --curves FILE.svg  also draw each trained candidate's test top-1 after every epoch\n";

static const char usage_train[] =
    "usage: dse train NET [--data fashion-mnist] [--epochs E] [--batch B] [--lr L]\n"
    "                     [--lr-policy fixed|step|poly|linear] [--threads T] [--seed S]\n"
    "                     [--limit-train N] [--limit-test N] [--init msra|xavier]\n"
    "                     [--checkpoint-dir DIR] [--resume FILE] [--conv auto|gemm_batch|gemm_image]\n"
    "                     [--conv-cache FILE|none] [--device cpu|cuda|cuda:N]\n"
    "                     [--precision fp32|tf32|fp16|bf16] [--algos det|any] [--clip-norm C] [--json]\n"
    "\n"
    "Train a network (a .cfg, a Caffe prototxt, or a generated candidate) with SGD and\n"
    "momentum 0.9, weight decay 2e-4, MSRA init, gradients clipped to a global L2 norm of 2, and\n"
    "the classifier's bias at 0.5 when a ReLU follows it (SqueezeNet's conv10: no class starts\n"
    "dead; docs/training.md). A network without a loss gets softmax cross-entropy on its last\n"
    "layer. Reports test loss, top-1 and top-5 after every epoch; a progress line on a\n"
    "terminal. NaN or infinite loss stops the run with status diverged.\n"
    "\n"
    "  --data D         dataset name (fashion-mnist, mnist, cifar-10, cifar-100) or directory\n"
    "  --epochs E       default 1        --batch B    default 64\n"
    "  --lr L           default 0.01     --lr-policy  default poly (power 1: linear to zero)\n"
    "  --threads T      default 2        --seed S     default 1\n"
    "  --limit-train N  train on the first N images; --limit-test N: test on the first N\n"
    "  --checkpoint-dir DIR  write DIR/epoch-<k>.ckpt after each epoch (compressed, CRC-checked)\n"
    "  --resume FILE    continue from a checkpoint (on the CPU: bit-identical to an uninterrupted run)\n"
    "  --conv S         conv strategy: auto (time each once per shape; default) or a fixed one\n"
    "  --conv-cache F   where auto's choices are kept, so that every run on this machine and thread\n"
    "                   count makes the same ones and repeats bit for bit (default\n"
    "                   $XDG_CACHE_HOME/dse or ~/.cache/dse/conv-v3-t<threads>.txt; none: time every run)\n"
    "  --device D       cpu (default), cuda (= cuda:0) or cuda:N: train on that GPU (docs/gpu.md);\n"
    "                   --conv and --conv-cache are CPU options (on a GPU cuDNN chooses)\n"
    "  --precision P    arithmetic on a GPU: fp32 (default), tf32 (conv and fc on tensor cores,\n"
    "                   inputs rounded to a 10-bit mantissa), or mixed precision: convs in fp16\n"
    "                   (dynamic loss scaling) or bf16, the rest fp32; the CPU computes in fp32 only\n"
    "  --algos A        cuDNN's algorithms on a GPU: det (default: deterministic ones only) or any\n"
    "                   (also those that add in a varying order; about 1.5x faster in FP32)\n"
    "  --clip-norm C    scale the gradients down to global L2 norm C when above it (default 2;\n"
    "                   0: never); --json reports clipped_steps\n"
    "  --json           print a final JSON object: status, epochs, top1, top5, loss, img_per_s, seconds\n";

static const char usage_bench[] =
    "usage: dse bench NET [--mode train|infer] [--batch B] [--threads T] [--iters N]\n"
    "                     [--device cpu|cuda|cuda:N] [--precision fp32|tf32|fp16|bf16] [--algos det|any]\n"
    "\n"
    "Images per second of a network on synthetic data: warm-up (conv strategy timing or\n"
    "cuDNN's algorithm search included) excluded, median of N iterations (default 10).\n"
    "Prints one line with img_per_s=<number>.\n"
    "\n"
    "  --mode M         train (default: forward, backward, SGD) or infer (forward)\n"
    "  --batch B        default 32       --threads T  CPU threads, default 2\n"
    "  --iters N        default 10\n"
    "  --device D       cpu (default), cuda (= cuda:0) or cuda:N (docs/gpu.md)\n"
    "  --precision P    on a GPU: fp32 (default), tf32, or fp16 / bf16 convs (mixed precision)\n"
    "  --algos A        on a GPU: cuDNN's deterministic algorithms only (det, default) or any\n";

static const char usage_profile[] =
    "usage: dse profile NET [--batch B] [--threads T] [--iters N] [--device cpu|cuda|cuda:N]\n"
    "                       [--precision fp32|tf32|fp16|bf16] [--algos det|any]\n"
    "\n"
    "Per-layer forward and backward time (median of N iterations, default 5) and GFLOP/s\n"
    "on synthetic data, the layer-wise breakdown of Caffe's `caffe time`. On a GPU each\n"
    "layer's time is measured from queueing it to the device finishing it.\n"
    "\n"
    "  --batch B        default 32       --threads T  CPU threads, default 2\n"
    "  --iters N        default 5\n"
    "  --device D       cpu (default), cuda (= cuda:0) or cuda:N (docs/gpu.md)\n"
    "  --precision P    on a GPU: fp32 (default), tf32, or fp16 / bf16 convs (mixed precision)\n"
    "  --algos A        on a GPU: cuDNN's deterministic algorithms only (det, default) or any\n";

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
    if (v && (dse_word_index(allowed, v) < 0 || dse_format_from_str(v, fmt))) {
        char msg[160];
        snprintf(msg, sizeof msg, "--format '%%s' is not one of: %s", allowed);
        return bad_usage(cmd, msg, v);
    }
    return -1;
}

#define FLAG(name) (dse_word_index(flags, name) >= 0)

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
    char id[DSE_ID_SIZE];
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
    if (FLAG("--all") && (!vals[2] || !vals[2][0])) return bad_usage(c->name, "--all needs --out DIR%s", "");
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
                char id[DSE_ID_SIZE], path[4096], *buf = NULL;
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

static int opt_conv(const char *cmd, const char *v, int *algo);
static int opt_int(const char *cmd, const char *name, const char *v, long long lo, long long hi, int *out);

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
    if ((!*end || (*end == 'e' && !end[1])) && x == (double)(int)x && x <= 1024) {
        o->plan.epochs = (int)x;
        o->set_epochs = 1;
        return -1;
    }
bad:
    return bad_usage(cmd, "--budget '%s' is not E or Ee (epochs per candidate, 1 to 1024), Nh (hours) or Nm "
                          "(minutes)", v);
}

static int cmd_sweep(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_space s;
    struct dse_err err = { 0 };
    struct dse_sweep_summary sum;
    struct dse_sweep_opts o;
    char dir[4096];
    int rc;
    (void)n_pos;
    dse_sweep_opts_default(&o);
    if (vals[0] && !vals[0][0]) return bad_usage(c->name, "--out needs a directory name%s", "");
    if ((rc = opt_int(c->name, "--workers", vals[1], 1, 256, &o.workers)) >= 0 ||
        (rc = opt_int(c->name, "--threads", vals[2], 1, 256, &o.threads)) >= 0 ||
        (vals[3] && (rc = opt_budget(c->name, vals[3], &o)) >= 0) ||
        (rc = opt_int(c->name, "--eta", vals[5], 2, 1000, &o.plan.eta)) >= 0 ||
        (rc = opt_int(c->name, "--min-epochs", vals[6], 1, 1024, &o.plan.min_epochs)) >= 0 ||
        (rc = opt_int(c->name, "--max-crashes", vals[10], 1, 1000000, &o.max_crashes)) >= 0)
        return rc;
    o.set_eta = vals[5] != NULL, o.set_min_epochs = vals[6] != NULL;
    if (vals[4]) {
        if (strcmp(vals[4], "none") && strcmp(vals[4], "sh"))
            return bad_usage(c->name, "--early-stop '%s' is not none or sh (successive halving)", vals[4]);
        o.plan.halving = !strcmp(vals[4], "sh");
        o.set_halving = 1;
    }
    if (vals[7]) {
        if (strcmp(vals[7], "pareto") && strcmp(vals[7], "top1"))
            return bad_usage(c->name, "--rank '%s' is not pareto or top1", vals[7]);
        o.plan.rank = !strcmp(vals[7], "top1") ? DSE_SWEEP_RANK_TOP1 : DSE_SWEEP_RANK_PARETO;
        o.set_rank = 1;
    }
    if (vals[8]) {
        if ((rc = opt_conv(c->name, vals[8], &o.plan.conv)) >= 0) return rc;
        o.set_conv = 1;
    }
    if (vals[9]) {
        char *end;
        double ttl = strtod(vals[9], &end);
        if (end == vals[9] || *end || !(ttl >= 0.5) || ttl > 86400)
            return bad_usage(c->name, "--lease-seconds '%s' is not a number from 0.5 to 86400", vals[9]);
        o.lease_s = ttl;
    }
    o.data_root = vals[11];
    if (vals[12] && (rc = opt_gpus(c->name, vals[12], &o)) >= 0) return rc;
    const int gpus = vals[12] != NULL;
    if (vals[13]) {
        if (!gpus) return bad_usage(c->name, "--per-gpu %s needs --gpus", vals[13]);
        long long k = 0;
        if (strcmp(vals[13], "auto") && parse_ll(vals[13], 1, 64, &k))
            return bad_usage(c->name, "--per-gpu '%s' is not auto or a number of workers from 1 to 64", vals[13]);
        o.per_gpu = (int)k;
    }
    if (vals[14]) {
        if (dse_cuda_math_parse(vals[14], &o.plan.precision, &err))
            return bad_usage(c->name, "--precision '%s' is not fp32, tf32, fp16 or bf16", vals[14]);
        if (!gpus && o.plan.precision != DSE_CUDA_MATH_FP32)
            return bad_usage(c->name, "--precision %s needs --gpus; the CPU computes in fp32 only", vals[14]);
        o.set_precision = 1;
    }
    if (vals[16]) {
        if (strcmp(vals[16], "det") && strcmp(vals[16], "any"))
            return bad_usage(c->name, "--algos '%s' is not det or any", vals[16]);
        if (!gpus) return bad_usage(c->name, "--algos %s needs --gpus; the CPU's kernels are deterministic", vals[16]);
        o.plan.nondeterministic = !strcmp(vals[16], "any");
        o.set_algos = 1;
    }
    if ((rc = opt_int(c->name, "--max-oom", vals[15], 1, 1000000, &o.max_oom)) >= 0) return rc;
    if (vals[15] && !gpus) return bad_usage(c->name, "--max-oom %s needs --gpus", vals[15]);
    if (gpus && vals[1])
        return bad_usage(c->name, "--workers %s is for the CPU; with --gpus give --per-gpu (workers per GPU)", vals[1]);
    if (gpus && vals[8] && strcmp(vals[8], "auto"))
        return bad_usage(c->name, "--conv %s chooses CPU conv strategies; on GPUs cuDNN chooses (leave it out)",
                         vals[8]);
    int analytic = FLAG("--analytic-only");
    if (analytic && (vals[1] || vals[2] || vals[3] || vals[4] || vals[5] || vals[6] || vals[7] || vals[8] || vals[9] ||
                     vals[10] || vals[11] || vals[12] || vals[13] || vals[14] || vals[15] || vals[16]))
        return bad_usage(c->name, "--analytic-only trains nothing: give only --out with it%s", "");
    if (dse_space_load(pos[0], &s, &err)) return fail(&err);
    snprintf(dir, sizeof dir, "%s", vals[0] ? vals[0] : "sweeps/");
    if (!vals[0]) strncat(dir, s.name, sizeof dir - strlen(dir) - 1);
    rc = 0;
    if (!analytic && !s.train.present) {
        dse_err_set(&err, DSE_ERR_CONFIG, pos[0], 0, "no train section, so nothing to train; add train = { dataset = "
                    "\"fashion-mnist\"; epochs = 5; ... } (docs/space-format.md), or give --analytic-only");
        rc = fail(&err);
    } else if (!analytic && dse_sweep_gpus_check(&o, stderr, &err)) { /* before anything is written */
        rc = fail(&err);
    } else if (dse_sweep_analytic(&s, dir, isatty(2) ? stderr : NULL, &sum, &err)) {
        rc = fail(&err);
    } else {
        printf("%s: %llu candidates in %s: %llu kept, %llu pruned by constraints%s\n", s.name,
               (unsigned long long)sum.candidates, dir, (unsigned long long)sum.kept,
               (unsigned long long)sum.pruned, sum.skipped ? " (trained ones left as they were)" : "");
        fflush(stdout);
    }
    if (!rc && !analytic) {
        int finished = 0;
        o.log = stderr;
        char plot[4200], curves[4200];
        snprintf(plot, sizeof plot, "%s/frontier.svg", dir);
        snprintf(curves, sizeof curves, "%s/curves.svg", dir);
        if (dse_sweep_train(&s, dir, &o, &finished, &err)) rc = fail(&err);
        else if (dse_sweep_status(stdout, dir, &err)) rc = fail(&err);
        else if (!finished) printf("Not finished: run the same command again to go on.\n");
        else if (printf("\n"), dse_report_sweep(stdout, dir, DSE_FORMAT_MD, plot, &err) ||
                 dse_report_curves(dir, curves, &err))
            rc = fail(&err);
        else
            printf("\nPlot (top-1 against model size, frontier in red): %s\nLearning curves: %s\n", plot, curves);
    }
    dse_space_free(&s);
    return rc;
}

static int cmd_status(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_err err = { 0 };
    (void)c, (void)n_pos, (void)vals, (void)flags;
    return dse_sweep_status(stdout, pos[0], &err) ? fail(&err) : 0;
}

static int cmd_report(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_err err = { 0 };
    enum dse_format fmt;
    int rc;
    (void)n_pos, (void)flags;
    if ((rc = opt_format(c->name, vals[0], "md csv tex json", DSE_FORMAT_MD, &fmt)) >= 0) return rc;
    if (dse_report_sweep(stdout, pos[0], fmt, vals[1], &err)) return fail(&err);
    return vals[2] && dse_report_curves(pos[0], vals[2], &err) ? fail(&err) : 0;
}

/* The line under an epoch's results when some test classes were never predicted. */
static void warn_unpredicted(FILE *f, const struct dse_train_progress *p) {
    if (p->unpredicted)
        fprintf(f, "  warning: %d class%s of the test set never predicted (a dead classifier unit?)\n",
                p->unpredicted, p->unpredicted == 1 ? "" : "es");
}

/* On a terminal: a progress line redrawn in place, and one line per epoch. Otherwise
 * (a log file, a pipe): the epoch lines only. */
static void train_log(void *arg, const struct dse_train_progress *p) {
    if (p->done) {
        fprintf(arg, "epoch %d/%d  train loss %.4f  test loss %.4f  top-1 %.2f%%  top-5 %.2f%%  %.0f img/s\n",
                p->epoch + 1, p->epochs, p->loss, p->test_loss, 100 * p->test_top1, 100 * p->test_top5,
                p->img_per_s);
        warn_unpredicted(arg, p);
    }
    fflush(arg);
}

static void train_progress(void *arg, const struct dse_train_progress *p) {
    FILE *f = arg;
    if (p->done) {
        fprintf(f, "\repoch %d/%d  train loss %.4f  test loss %.4f  top-1 %.2f%%  top-5 %.2f%%  %.0f img/s%20s\n",
                p->epoch + 1, p->epochs, p->loss, p->test_loss, 100 * p->test_top1, 100 * p->test_top5,
                p->img_per_s, "");
        warn_unpredicted(f, p);
    } else
        fprintf(f, "\repoch %d/%d  iter %d/%d  loss %.4f  lr %.4g  %.0f img/s  ETA %.0f s   ", p->epoch + 1,
                p->epochs, p->iter, p->iters, p->loss, p->lr, p->img_per_s, p->eta_s);
    fflush(f);
}

static int opt_int(const char *cmd, const char *name, const char *v, long long lo, long long hi, int *out) {
    long long x;
    if (!v) return -1;
    if (parse_ll(v, lo, hi, &x)) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s '%%s' is not an integer from %lld to %lld", name, lo, hi);
        return bad_usage(cmd, msg, v);
    }
    *out = (int)x;
    return -1;
}

static int opt_conv(const char *cmd, const char *v, int *algo) {
    if (!v || !strcmp(v, "auto")) return *algo = DSE_ALGO_AUTO, -1;
    for (int a = 0; a < DSE_CPU_CONV_COUNT; a++)
        if (!strcmp(v, dse_cpu_conv_algo_str(a))) return *algo = a, -1;
    return bad_usage(cmd, "--conv '%s' is not one of auto, gemm_batch, gemm_image", v);
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
    if (algos && strcmp(algos, "det") && strcmp(algos, "any"))
        return bad_usage(cmd, "--algos '%s' is not det or any", algos);
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

static int cmd_train(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_train_opts o;
    struct dse_err err = { 0 };
    struct dse_net net;
    int rc, seed = 1;
    (void)n_pos;
    dse_train_opts_default(&o);
    o.threads = 2;
    if (vals[0]) o.data = vals[0];
    if ((rc = opt_int(c->name, "--epochs", vals[1], 1, 1024, &o.epochs)) >= 0 ||
        (rc = opt_int(c->name, "--batch", vals[2], 1, 1 << 16, &o.batch)) >= 0 ||
        (rc = opt_int(c->name, "--threads", vals[5], 1, 256, &o.threads)) >= 0 ||
        (rc = opt_int(c->name, "--seed", vals[6], 0, 2147483647, &seed)) >= 0 ||
        (rc = opt_int(c->name, "--limit-train", vals[7], 1, 1 << 30, &o.limit_train)) >= 0 ||
        (rc = opt_int(c->name, "--limit-test", vals[8], 1, 1 << 30, &o.limit_test)) >= 0 ||
        (rc = opt_conv(c->name, vals[12], &o.conv_algo)) >= 0 ||
        (rc = opt_device(c->name, vals[14], vals[15], vals[16], &o.dev)) >= 0)
        return rc;
    const int on_gpu = o.dev.device.kind != DSE_DEVICE_CPU;
    if (on_gpu && ((vals[12] && strcmp(vals[12], "auto")) || (vals[13] && strcmp(vals[13], "none"))))
        return bad_usage(c->name, "--conv and --conv-cache choose CPU conv strategies; on --device %s cuDNN "
                                  "chooses (leave them out)", vals[14]);
    o.seed = (uint64_t)seed;
    if (vals[3]) {
        char *end;
        double lr = strtod(vals[3], &end);
        if (*end || !(lr > 0) || lr > 100) return bad_usage(c->name, "--lr '%s' is not a number in (0, 100]", vals[3]);
        o.lr = (float)lr;
    }
    if (vals[4]) {
        static const char *names[] = { "fixed", "step", "poly", "linear" };
        int k = -1;
        for (int i = 0; i < 4; i++) if (!strcmp(vals[4], names[i])) k = i;
        if (k < 0) return bad_usage(c->name, "--lr-policy '%s' is not one of fixed, step, poly, linear", vals[4]);
        o.policy = (enum dse_lr_policy)k;
        if (o.policy == DSE_LR_STEP) o.step_epochs = o.epochs > 3 ? o.epochs / 3 : 1;
    }
    if (vals[17]) {
        char *end;
        double cn = strtod(vals[17], &end);
        if (end == vals[17] || *end || !(cn >= 0) || cn > 1e6 || (cn > 0 && (float)cn == 0.0f))
            return bad_usage(c->name, "--clip-norm '%s' is not a number in [0, 1e6] (0: no clipping)", vals[17]);
        o.clip_norm = (float)cn;
    }
    if (vals[9]) {
        if (!strcmp(vals[9], "xavier")) o.init = DSE_INIT_XAVIER;
        else if (!strcmp(vals[9], "msra")) o.init = DSE_INIT_MSRA;
        else return bad_usage(c->name, "--init '%s' is not one of xavier, msra", vals[9]);
    }
    o.checkpoint_dir = vals[10];
    o.resume = vals[11];
    char cache[4096];
    if (vals[13] && strcmp(vals[13], "none")) {
        o.conv_cache = vals[13];
    } else if (!vals[13] && !on_gpu) { /* the default: one file per thread count, like a compiler cache */
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        char dir[3000];
        int ok = xdg && xdg[0] ? snprintf(dir, sizeof dir, "%s/dse", xdg) < (int)sizeof dir
               : home && home[0] ? snprintf(dir, sizeof dir, "%s/.cache/dse", home) < (int)sizeof dir : 0;
        if (ok && !dse_fs_mkdirs(dir, NULL)) {
            /* v3: choices timed with the AVX2 Winograd transforms (v2: kernels splitting the batch
             * over their own threads); a newer version re-times, since the fastest may differ */
            snprintf(cache, sizeof cache, "%s/conv-v3-t%d.txt", dir, o.threads);
            o.conv_cache = cache;
        }
    }
    o.progress = isatty(2) ? train_progress : train_log, o.progress_arg = stderr;
    if (dse_netfile_load(pos[0], NULL, &net, &err)) return fail(&err);
    if ((rc = device_ready(c->name, &o.dev)) >= 0) return dse_net_deinit(&net), rc;
    struct dse_train_result *r = malloc(sizeof *r);
    if (!r) return dse_net_deinit(&net), 1;
    rc = 0;
    if (dse_train_run(&net, &o, r, &err)) {
        rc = fail(&err);
    } else if (FLAG("--json")) {
        /* The engine's measured memory beside the analyzer's training estimate. */
        struct dse_cost_layer *cl = calloc((size_t)net.n_layers, sizeof *cl);
        struct dse_cost_totals tot;
        memset(&tot, 0, sizeof tot);
        if (cl) dse_cost_net(&net, o.batch, cl, &tot, NULL);
        free(cl);
        char m1[32] = "null", m5[32] = "null", ml[32] = "null"; /* no epoch finished: no metrics */
        char dev[32];
        if (r->epochs_done > 0) {
            snprintf(m1, sizeof m1, "%.6f", r->top1);
            snprintf(m5, sizeof m5, "%.6f", r->top5);
            snprintf(ml, sizeof ml, "%.6f", r->loss);
        }
        printf("{\"status\": \"%s\", \"epochs\": %d, \"top1\": %s, \"top5\": %s, \"loss\": %s, "
               "\"img_per_s\": %.1f, \"seconds\": %.2f, \"seed\": %llu, \"model_bytes\": %zu, "
               "\"estimate_train_bytes\": %lld, \"device\": \"%s\", \"precision\": \"%s\", \"algos\": \"%s\", "
               "\"clip_norm\": %g, \"clipped_steps\": %lld",
               r->status, r->epochs_done, m1, m5, ml, r->img_per_s, r->seconds,
               (unsigned long long)r->seed, r->model_bytes, (long long)tot.mem_train_bytes,
               dse_device_str(&o.dev.device, dev, (int)sizeof dev), dse_cuda_math_str(o.dev.math),
               o.dev.nondeterministic ? "any" : "det", (double)o.clip_norm, (long long)r->clipped_steps);
        if (r->diverged_epoch) printf(", \"diverged_epoch\": %d, \"diverged_iter\": %lld", r->diverged_epoch,
                                      (long long)r->diverged_iter);
        printf(", \"per_epoch\": [");
        for (int e = 0; e < r->n_epochs; e++)
            printf("%s{\"train_loss\": %.6f, \"loss\": %.6f, \"top1\": %.6f, \"top5\": %.6f, \"seconds\": %.2f, "
                   "\"unpredicted\": %d}",
                   e ? ", " : "", r->epochs[e].train_loss, r->epochs[e].test_loss, r->epochs[e].top1,
                   r->epochs[e].top5, r->epochs[e].seconds, r->epochs[e].unpredicted);
        printf("]}\n");
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
static int synthetic_model(const char *cmd, const char *path, int batch, int threads, int inference,
                           const struct dse_model_device_opts *dev, struct dse_model **m, float **x, int **labels) {
    struct dse_net net;
    struct dse_err err = { 0 };
    struct dse_model_opts mo = { batch, threads, 1, DSE_INIT_MSRA, 0.01f, inference, 0 };
    int rc;
    if (dse_netfile_load(path, NULL, &net, &err)) return fail(&err);
    if ((rc = device_ready(cmd, dev)) >= 0) return dse_net_deinit(&net), rc;
    enum dse_status st = dse_model_new_on(&net, &mo, dev, m, &err);
    dse_net_deinit(&net);
    if (st) return fail(&err);
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

static int cmd_bench(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    int batch = 32, threads = 2, iters = 10, rc;
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    float *x = NULL, loss;
    int *labels = NULL;
    (void)n_pos, (void)flags;
    int train = !vals[0] || !strcmp(vals[0], "train");
    if (vals[0] && strcmp(vals[0], "train") && strcmp(vals[0], "infer"))
        return bad_usage(c->name, "--mode '%s' is not train or infer", vals[0]);
    struct dse_model_device_opts dev;
    if ((rc = opt_int(c->name, "--batch", vals[1], 1, 1 << 16, &batch)) >= 0 ||
        (rc = opt_int(c->name, "--threads", vals[2], 1, 256, &threads)) >= 0 ||
        (rc = opt_int(c->name, "--iters", vals[3], 1, 100000, &iters)) >= 0 ||
        (rc = opt_device(c->name, vals[4], vals[5], vals[6], &dev)) >= 0)
        return rc;
    if ((rc = synthetic_model(c->name, pos[0], batch, threads, !train, &dev, &m, &x, &labels)) >= 0) goto done;
    dse_model_set_training(m, train);
    double *t = malloc(sizeof *t * (size_t)iters);
    rc = 0;
    for (int i = -2; i < iters && t; i++) { /* two warm-up iterations: strategy timing, caches */
        double t0 = now_s();
        if (dse_model_forward(m, x, labels, &loss, &err) || (train && dse_model_backward(m, &err))) {
            rc = fail(&err);
            break;
        }
        if (train) dse_model_sgd(m, 1e-6f, 0.9f, 0.0f);
        if (dse_model_sync(m, &err)) { /* a device queues the step: wait for it before the clock */
            rc = fail(&err);
            break;
        }
        if (i >= 0) t[i] = now_s() - t0;
    }
    if (!rc && t) {
        /* The engine's measured memory beside the analyzer's estimate (docs/conventions.md). */
        struct dse_cost_layer *cl = calloc((size_t)m->net.n_layers, sizeof *cl);
        struct dse_cost_totals tot;
        memset(&tot, 0, sizeof tot);
        if (cl) dse_cost_net(&m->net, batch, cl, &tot, NULL);
        free(cl);
        qsort(t, (size_t)iters, sizeof *t, cmp_double);
        char name[32];
        printf("name=bench.%s net=%s mode=%s batch=%d threads=%d device=%s precision=%s algos=%s iters=%d "
               "median_ms=%.2f min_ms=%.2f img_per_s=%.1f measured_bytes=%zu estimate_bytes=%lld\n",
               m->net.name[0] ? m->net.name : "net", pos[0], train ? "train" : "infer", batch, threads,
               dse_device_str(&dev.device, name, (int)sizeof name), dse_cuda_math_str(dev.math),
               dev.nondeterministic ? "any" : "det", iters,
               1e3 * t[iters / 2], 1e3 * t[0], batch / t[iters / 2], dse_model_bytes(m),
               (long long)(train ? tot.mem_train_bytes : tot.mem_infer_bytes));
    }
    free(t);
done:
    dse_model_free(m);
    free(x);
    free(labels);
    return rc < 0 ? 1 : rc;
}

static int cmd_profile(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    int batch = 32, threads = 2, iters = 5, rc;
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    float *x = NULL, loss;
    int *labels = NULL;
    (void)n_pos, (void)flags;
    struct dse_model_device_opts dev;
    if ((rc = opt_int(c->name, "--batch", vals[0], 1, 1 << 16, &batch)) >= 0 ||
        (rc = opt_int(c->name, "--threads", vals[1], 1, 256, &threads)) >= 0 ||
        (rc = opt_int(c->name, "--iters", vals[2], 1, 10000, &iters)) >= 0 ||
        (rc = opt_device(c->name, vals[3], vals[4], vals[5], &dev)) >= 0)
        return rc;
    if ((rc = synthetic_model(c->name, pos[0], batch, threads, 0, &dev, &m, &x, &labels)) >= 0) goto done;
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
               "multiply-add, backward = 2x forward FLOPs\n", pos[0], batch, where, iters);
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

static const struct cmd cmds[] = {
    { "analyze",  1, 1, "--expand",               "--batch --format --input", usage_analyze,  cmd_analyze },
    { "diff",     2, 2, "--expand",               "--batch --format",         usage_diff,     cmd_diff },
    { "count",    1, 1, "",                       "",                         usage_count,    cmd_count },
    { "generate", 1, 1, "--all",                  "--index --format --out",   usage_generate, cmd_generate },
    { "sweep",    1, 1, "--analytic-only",        "--out --workers --threads --budget --early-stop --eta --min-epochs "
                                                  "--rank --conv --lease-seconds --max-crashes --data-root --gpus "
                                                  "--per-gpu --precision --max-oom --algos",
                                                                              usage_sweep,    cmd_sweep },
    { "status",   1, 1, "",                       "",                         usage_status,   cmd_status },
    { "report",   1, 1, "",                       "--format --plot --curves", usage_report,   cmd_report },
    { "train",    1, 1, "--json",                 "--data --epochs --batch --lr --lr-policy --threads --seed "
                                                  "--limit-train --limit-test --init --checkpoint-dir --resume --conv "
                                                  "--conv-cache --device --precision --algos --clip-norm",
                                                                              usage_train,    cmd_train },
    { "bench",    1, 1, "",                       "--mode --batch --threads --iters --device --precision --algos",
                                                                              usage_bench,    cmd_bench },
    { "profile",  1, 1, "",                       "--batch --threads --iters --device --precision --algos",
                                                                              usage_profile,  cmd_profile },
};

static int run_cmd(const struct cmd *c, int argc, char **argv) {
    const char *pos[4];
    char *vals[24] = { 0 };
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
        if (!strcmp(key, "--help") || dse_word_index(c->flags, key) >= 0) {
            if (eq) return bad_usage(c->name, "option '%s' takes no value", key);
            if (!strcmp(key, "--help")) return fputs(c->usage, stdout), 0;
            if (strlen(flags) + strlen(key) + 2 < sizeof flags) strcat(strcat(flags, " "), key);
            continue;
        }
        int v = dse_word_index(c->valued, key);
        if (v < 0) return bad_usage(c->name, "unknown option '%s'", a);
        DSE_ASSERT(v < DSE_ARRAY_LEN(vals));
        if (eq) vals[v] = (char *)eq + 1;
        else if (i + 1 < argc) vals[v] = argv[++i];
        else return bad_usage(c->name, "option '%s' needs a value", key);
    }
    if (n_pos < c->min_pos) {
        char msg[128];
        snprintf(msg, sizeof msg, "expected %s%%s", c->min_pos == 2 ? "two files: BASE VARIANT" :
                 (!strcmp(c->name, "report") || !strcmp(c->name, "status")) ? "a sweep directory" :
                 (!strcmp(c->name, "analyze") || !strcmp(c->name, "train") || !strcmp(c->name, "bench") ||
                  !strcmp(c->name, "profile")) ? "one network file" : "a space file");
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
    if (!strcmp(name, "--version")) return printf("dse 0.1.0 (backends: %s)\n", dse_engine_backends()), 0;
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
