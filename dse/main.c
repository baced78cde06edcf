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
#include "engine/synth.h"
#include "engine/train.h"
#include "base/fs.h"
#include "dse/dataprep.h"
#include "dse/exportcmd.h"
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

static const char usage_analyze[] =
    "usage: dse analyze NET [--batch N] [--format table|json|csv|md] [--expand]\n"
    "                       [--input C,H,W] [--classes K]\n"
    "\n"
    "Closed-form cost of a network: per layer the output shape, params (weights + biases),\n"
    "FLOPs (2 per multiply-add, conv and fc), activations and receptive field; totals,\n"
    "model size, training FLOPs (3x forward) and memory estimates for inference and training.\n"
    "\n"
    "  --batch N        images per batch (default 1)\n"
    "  --format F       table (default), json (docs/json.md), csv or md\n"
    "  --expand         one row per primitive layer instead of one per Fire module\n"
    "  --input C,H,W    override the network's input shape (e.g. 3,454,454)\n"
    "  --classes K      give the classifier (the last conv or fc) K outputs\n";

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
    "usage: dse generate SPACE [--index K | --id ID | --all] [--format cfg|prototxt] [--out DIR]\n"
    "\n"
    "Write candidate networks of a design space. --index K (default 0) writes candidate K\n"
    "of the grid to standard output, --id ID the candidate with that id (as dse report\n"
    "shows both); --all writes every candidate the space covers (its sample, if it has\n"
    "one) to DIR/<id>.cfg or DIR/<id>.prototxt.\n"
    "\n"
    "  --index K        grid index, 0 to count - 1\n"
    "  --id ID          candidate id: c and 16 hex digits (dse report, sweep DIR/candidates/)\n"
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
    "                     [--input C,H,W] [--classes K] [--aug auto|rrc|crop|flip|none] [--loader-threads N]\n"
    "                     [--pack-cache DIR]\n"
    "\n"
    "Train a network (a .cfg, a Caffe prototxt, or a generated candidate) with SGD and\n"
    "momentum 0.9, weight decay 2e-4, MSRA init, gradients clipped to a global L2 norm of 2, and\n"
    "the classifier's bias at 0.5 when a ReLU follows it (SqueezeNet's conv10: no class starts\n"
    "dead; docs/training.md). A network without a loss gets softmax cross-entropy on its last\n"
    "layer. Reports test loss, top-1 and top-5 after every epoch; a progress line on a\n"
    "terminal. NaN or infinite loss stops the run with status diverged.\n"
    "\n"
    "  --data D         dataset name (fashion-mnist, mnist, cifar-10, cifar-100), an IDX or CIFAR\n"
    "                   directory, an image pack (dse data pack), or an image folder: DIR/train/<class>/\n"
    "                   *.jpg|png and DIR/val/ (or test/), packed on first use into the pack cache\n"
    "  --input C,H,W    fit the network's input (conv1's channels, the input size) to the data\n"
    "  --classes K      fit the classifier (the last conv or fc) to K classes\n"
    "  --aug A          image packs and folders: auto (default: random-resized-crop + flip above 64\n"
    "                   pixels, else 4-pixel pad-and-crop + flip), rrc, crop, flip or none\n"
    "  --loader-threads N  image packs and folders: decoding threads (default: one per core)\n"
    "  --pack-cache DIR where folders are packed (default $DSE_PACK_CACHE, else ~/.cache/dse/packs)\n"
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
    "                     [--input C,H,W] [--classes K]\n"
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
    "  --algos A        on a GPU: cuDNN's deterministic algorithms only (det, default) or any\n"
    "  --input C,H,W    fit the network's input; --classes K: its classifier's outputs\n";

static const char usage_profile[] =
    "usage: dse profile NET [--batch B] [--threads T] [--iters N] [--device cpu|cuda|cuda:N]\n"
    "                       [--precision fp32|tf32|fp16|bf16] [--algos det|any] [--input C,H,W] [--classes K]\n"
    "\n"
    "Per-layer forward and backward time (median of N iterations, default 5) and GFLOP/s\n"
    "on synthetic data, the layer-wise breakdown of Caffe's `caffe time`. On a GPU each\n"
    "layer's time is measured from queueing it to the device finishing it.\n"
    "\n"
    "  --batch B        default 32       --threads T  CPU threads, default 2\n"
    "  --iters N        default 5\n"
    "  --device D       cpu (default), cuda (= cuda:0) or cuda:N (docs/gpu.md)\n"
    "  --precision P    on a GPU: fp32 (default), tf32, or fp16 / bf16 convs (mixed precision)\n"
    "  --algos A        on a GPU: cuDNN's deterministic algorithms only (det, default) or any\n"
    "  --input C,H,W    fit the network's input; --classes K: its classifier's outputs\n";

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
    out->c = (int)v[0], out->h = (int)v[1], out->w = (int)v[2]; /* classes: --classes, left as it is */
    return 0;
}

static int opt_int(const char *cmd, const char *name, const char *v, long long lo, long long hi, int *out);

/* --input C,H,W and --classes K: how to fit a network to data. -1, or the usage error's code. */
static int opt_fit(const char *cmd, const char *input, const char *classes, struct dse_input_shape *in) {
    memset(in, 0, sizeof *in);
    if (input && parse_shape(input, in))
        return bad_usage(cmd, "--input '%s' is not C,H,W with integers from 1 to 16777216 (e.g. 3,227,227)", input);
    return opt_int(cmd, "--classes", classes, 1, DSE_DIM_MAX, &in->classes);
}

static int fail(const struct dse_err *err) {
    char buf[1024];
    fprintf(stderr, "dse: %s\n", dse_err_format(err, buf, sizeof buf));
    return (err->code == DSE_ERR_NOMEM || err->code == DSE_ERR_INTERNAL) ? 1 : EXIT_BAD_INPUT;
}

/* fail() for an error about a network read from net_path: a layer's line (the engine
 * refusing a layer type, a shape) is in that file. */
static int fail_net(struct dse_err *err, const char *net_path) {
    if (!err->file && err->line > 0) err->file = net_path;
    return fail(err);
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
    struct dse_input_shape in;
    long long batch;
    enum dse_format fmt;
    int rc;
    (void)n_pos;
    if ((rc = opt_batch(c->name, vals[0], &batch)) >= 0) return rc;
    if ((rc = opt_format(c->name, vals[1], "table json csv md", DSE_FORMAT_TABLE, &fmt)) >= 0) return rc;
    if ((rc = opt_fit(c->name, vals[2], vals[3], &in)) >= 0) return rc;
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
    if (vals[2] && strcmp(vals[2], "cfg") && strcmp(vals[2], "prototxt"))
        return bad_usage(c->name, "--format '%s' is not one of: cfg prototxt", vals[2]);
    prototxt = vals[2] && !strcmp(vals[2], "prototxt");
    if (FLAG("--all") + !!vals[0] + !!vals[1] > 1)
        return bad_usage(c->name, "give one of --index, --id and --all%s", "");
    if (vals[1] && !dse_space_id_valid(vals[1]))
        return bad_usage(c->name, "--id '%s' is not a candidate id; expected c and 16 hex digits, "
                                  "e.g. c3f1a9d0b2e47c5a1", vals[1]);
    if (FLAG("--all") && (!vals[3] || !vals[3][0])) return bad_usage(c->name, "--all needs --out DIR%s", "");
    if (vals[0] && parse_ll(vals[0], 0, INT64_MAX, &index))
        return bad_usage(c->name, "--index '%s' is not an integer >= 0", vals[0]);
    if (dse_space_load(pos[0], &s, &err)) return fail(&err);
    dse_net_init(&net, s.name, 1, 1, 1);
    if (vals[1]) {
        uint64_t k;
        if (dse_space_find_id(&s, vals[1], DSE_SPACE_FIND_MAX, &k, &err)) rc = fail(&err);
        else if (write_candidate(stdout, &s, k, prototxt, &net, &err)) rc = fail(&err);
    } else if (!FLAG("--all")) {
        if (!s.count_overflow && (uint64_t)index >= s.count) {
            fprintf(stderr, "dse generate: --index %lld is out of range; the space has %llu candidates "
                            "(0 to %llu)\n", index, (unsigned long long)s.count, (unsigned long long)s.count - 1);
            rc = EXIT_BAD_INPUT;
        } else if (write_candidate(stdout, &s, (uint64_t)index, prototxt, &net, &err)) {
            rc = fail(&err);
        }
    } else {
        uint64_t *idx = NULL, n = 0;
        if (dse_space_indices(&s, 1000000, &idx, &n, &err) || dse_fs_mkdirs(vals[3], &err)) {
            rc = fail(&err);
        } else {
            for (uint64_t i = 0; i < n && !rc; i++) {
                struct dse_mp mp;
                char id[DSE_ID_SIZE], path[4096], *buf = NULL;
                size_t len = 0;
                dse_space_candidate(&s, idx[i], &mp);
                dse_space_id(&mp, id);
                snprintf(path, sizeof path, "%s/%s.%s", vals[3], id, prototxt ? "prototxt" : "cfg");
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
            if (!rc) fprintf(stderr, "dse generate: wrote %llu networks to %s\n", (unsigned long long)n, vals[3]);
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
    if ((!*end || (*end == 'e' && !end[1])) && x == (double)(int)x && x <= 1024) {
        o->plan.epochs = (int)x;
        o->set_epochs = 1;
        return -1;
    }
bad:
    return bad_usage(cmd, "--budget '%s' is not E or Ee (epochs per candidate, 1 to 1024), Nh (hours) or Nm "
                          "(minutes)", v);
}

/* Before a sweep trains: the space's first candidate must fit its dataset (channels, size,
 * classes; the fix named in the macro section's words), and an image folder becomes its
 * pack in the cache, which every worker then reads. */
static enum dse_status sweep_data(struct dse_space *s, const char *root, struct dse_err *err) {
    struct dse_data_info info;
    struct dse_net net;
    struct dse_mp mp;
    char path[sizeof s->train.dataset];
    enum dse_status st;
    if ((st = dse_data_probe(s->train.dataset, root, &info, err))) return st;
    dse_net_init(&net, s->name, 1, 1, 1);
    dse_space_candidate(s, 0, &mp);
    if (!(st = dse_space_build(s, &mp, &net, err)) && !(st = dse_dataprep_check_fit(&net, &info, "macro", err)) &&
        !(st = dse_dataprep_resolve(s->train.dataset, NULL, net.in_c, net.in_h, net.in_w, stderr, path, sizeof path,
                                     err)))
        dse_strlcpy(s->train.dataset, path, (int)sizeof s->train.dataset);
    if (st && err && !err->file) err->file = s->path;
    dse_net_deinit(&net);
    return st;
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
    if (!rc && !analytic && sweep_data(&s, o.data_root, &err)) rc = fail(&err);
    if (!rc && !analytic) {
        int finished = 0;
        o.log = stderr;
        char plot[4200], curves[4200];
        snprintf(plot, sizeof plot, "%s/frontier.svg", dir);
        snprintf(curves, sizeof curves, "%s/curves.svg", dir);
        if (dse_sweep_train(&s, dir, &o, &finished, &err)) rc = fail(&err);
        else if (dse_sweep_status(stdout, dir, &err)) rc = fail(&err);
        else if (!finished) printf("Not finished: run the same command again to go on.\n");
        else if (printf("\n"), dse_report_sweep(stdout, dir, DSE_FORMAT_MD, plot, NULL, &err) ||
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
    struct dse_report_best best;
    if (dse_report_sweep(stdout, pos[0], fmt, vals[1], &best, &err)) return fail(&err);
    if (vals[2] && dse_report_curves(pos[0], vals[2], &err)) return fail(&err);
    fflush(stdout);
    if (best.id[0] && (fmt == DSE_FORMAT_CSV || fmt == DSE_FORMAT_TEX)) { /* MD and JSON say it themselves */
        char cmd[4400];
        dse_report_export_cmd(cmd, sizeof cmd, pos[0], best.id);
        fprintf(stderr, "next: %s (the most accurate candidate; --best --max-mb M picks within a size limit)\n", cmd);
    }
    return 0;
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
    struct dse_input_shape in;
    if ((rc = opt_fit(c->name, vals[18], vals[19], &in)) >= 0 ||
        (rc = opt_int(c->name, "--loader-threads", vals[21], 1, 256, &o.loader_workers)) >= 0)
        return rc;
    if (vals[20]) {
        int k = dse_word_index(DSE_AUG_NAMES, vals[20]);
        if (k < 0) return bad_usage(c->name, "--aug '%s' is not one of: " DSE_AUG_NAMES, vals[20]);
        o.aug = (enum dse_aug_mode)k;
    }
    o.progress = isatty(2) ? train_progress : train_log, o.progress_arg = stderr;
    if (dse_netfile_load(pos[0], &in, &net, &err)) return fail(&err);
    if ((rc = device_ready(c->name, &o.dev)) >= 0) return dse_net_deinit(&net), rc;
    /* The data before the work: does the network fit it (naming the flags that would), and
     * an image folder becomes its pack in the cache on first use. */
    struct dse_data_info info;
    char data_path[4096];
    if (dse_data_probe(o.data, o.data_root, &info, &err) || dse_dataprep_check_fit(&net, &info, "flags", &err) ||
        dse_dataprep_resolve(o.data, vals[22], net.in_c, net.in_h, net.in_w, stderr, data_path, sizeof data_path,
                             &err))
        return dse_net_deinit(&net), fail(&err);
    o.data = data_path;
    struct dse_train_result *r = malloc(sizeof *r);
    if (!r) return dse_net_deinit(&net), 1;
    rc = 0;
    if (dse_train_run(&net, &o, r, &err)) {
        rc = fail_net(&err, pos[0]);
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
static int synthetic_model(const char *cmd, const char *path, const struct dse_input_shape *in, int batch,
                           int threads, int inference, const struct dse_model_device_opts *dev, struct dse_model **m,
                           float **x, int **labels) {
    struct dse_net net;
    struct dse_err err = { 0 };
    struct dse_model_opts mo = { batch, threads, 1, DSE_INIT_MSRA, 0.01f, inference, 0 };
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
    struct dse_input_shape in;
    if ((rc = opt_int(c->name, "--batch", vals[1], 1, 1 << 16, &batch)) >= 0 ||
        (rc = opt_int(c->name, "--threads", vals[2], 1, 256, &threads)) >= 0 ||
        (rc = opt_int(c->name, "--iters", vals[3], 1, 100000, &iters)) >= 0 ||
        (rc = opt_device(c->name, vals[4], vals[5], vals[6], &dev)) >= 0 ||
        (rc = opt_fit(c->name, vals[7], vals[8], &in)) >= 0)
        return rc;
    if ((rc = synthetic_model(c->name, pos[0], &in, batch, threads, !train, &dev, &m, &x, &labels)) >= 0) goto done;
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
    struct dse_input_shape in;
    if ((rc = opt_int(c->name, "--batch", vals[0], 1, 1 << 16, &batch)) >= 0 ||
        (rc = opt_int(c->name, "--threads", vals[1], 1, 256, &threads)) >= 0 ||
        (rc = opt_int(c->name, "--iters", vals[2], 1, 10000, &iters)) >= 0 ||
        (rc = opt_device(c->name, vals[3], vals[4], vals[5], &dev)) >= 0 ||
        (rc = opt_fit(c->name, vals[6], vals[7], &in)) >= 0)
        return rc;
    if ((rc = synthetic_model(c->name, pos[0], &in, batch, threads, 0, &dev, &m, &x, &labels)) >= 0) goto done;
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


/* ---- dse data: image folders and packs (issue #13) ------------------------------------ */

static const char usage_data[] =
    "usage: dse data pack DIR --out FILE [--size S] [--format jpeg|raw] [--quality Q] [--channels 1|3]\n"
    "                         [--threads T] [--skip-bad]\n"
    "       dse data info SOURCE [--verify]\n"
    "       dse data bench SOURCE [--size N] [--batch B] [--threads T] [--seconds S] [--aug A] [--split train|val]\n"
    "       dse data synth DIR [--classes K] [--train N] [--val N] [--sides MIN-MAX] [--seed S] [--mixed]\n"
    "\n"
    "Image data for dse train and dse sweep (docs/data.md). An image folder is laid out as\n"
    "torchvision's ImageFolder: DIR/train/<class>/*.jpg|jpeg|png and DIR/val/<class>/... (or test/);\n"
    "classes sorted by name. A pack is that folder decoded once into one random-access file.\n"
    "\n"
    "  pack   decode, resize (short side S) and store every image, on every core; atomic\n"
    "  info   classes, images, format and statistics of a pack or a folder; --verify reads every record\n"
    "  bench  images per second the loader delivers (crop, flip, normalize) from a pack or a folder\n"
    "  synth  write a synthetic image folder (learnable classes) for tests and trials\n"
    "Run 'dse data SUBCOMMAND --help' for its options.\n";

static const char usage_data_pack[] =
    "usage: dse data pack DIR --out FILE [--size S] [--format jpeg|raw] [--quality Q] [--channels 1|3]\n"
    "                         [--threads T] [--skip-bad]\n"
    "\n"
    "Pack an image folder (DIR/train/<class>/*.jpg|png, DIR/val/ or DIR/test/) into one file: each\n"
    "image decoded (JPEG, PNG; gray, RGB, RGBA, CMYK, 16-bit), resized so its short side is S with an\n"
    "antialiasing filter, and stored as raw pixels or re-encoded JPEG, with an index (offsets, labels,\n"
    "sizes, a CRC-32 per record and one over the index), class names and per-channel mean and std.\n"
    "Uses every core; the file appears only when complete (a killed pack leaves none).\n"
    "\n"
    "  --out FILE       the pack to write (replaced atomically if it exists)\n"
    "  --size S         short side in pixels, 8 to 4096, or 0 to keep each image's size (default 256)\n"
    "  --format F       jpeg (default above 64 pixels: small files, decoded when read) or raw\n"
    "                   (default at 64 and below: no decoding when read)\n"
    "  --quality Q      JPEG quality, 1 to 100 (default 90)\n"
    "  --channels C     3 (default: RGB) or 1 (gray)\n"
    "  --threads T      decoding threads (default: one per core)\n"
    "  --skip-bad       leave out images that do not decode, naming each, instead of stopping\n";

static const char usage_data_info[] =
    "usage: dse data info SOURCE [--verify]\n"
    "\n"
    "What a pack, an image folder or a dataset name holds: classes, images per split, image format\n"
    "and size, per-channel statistics.\n"
    "\n"
    "  --verify         packs: check every record's CRC-32 and decode it\n";

static const char usage_data_bench[] =
    "usage: dse data bench SOURCE [--size N] [--batch B] [--threads T] [--seconds S] [--aug A]\n"
    "                             [--split train|val]\n"
    "\n"
    "Images per second the loader delivers from a pack or an image folder (read and decoded file by\n"
    "file), cropped and resized to NxN, flipped and normalized into float batches, as dse train\n"
    "consumes them. Prints one line: name=loader.dse ... img_per_s=X img_per_s_per_core=Y.\n"
    "\n"
    "  --size N         output size (default 227)      --batch B   default 256\n"
    "  --threads T      decoding threads (default: one per core)\n"
    "  --seconds S      how long to measure, after 2 warm-up batches (default 10)\n"
    "  --aug A          auto, rrc (default: random-resized-crop + flip), crop, flip or none\n"
    "  --split S        train (default) or val\n";

static const char usage_data_synth[] =
    "usage: dse data synth DIR [--classes K] [--train N] [--val N] [--sides MIN-MAX] [--seed S] [--mixed]\n"
    "\n"
    "Write a synthetic image folder: K classes of stripes whose colours, frequency and angle tell the\n"
    "class apart (learnable after crops and flips), N training and validation images per class,\n"
    "sides drawn from MIN-MAX. Deterministic for a seed.\n"
    "\n"
    "  --classes K      default 10                     --train N   per class, default 20\n"
    "  --val N          per class, default 5           --sides     default 48-96\n"
    "  --seed S         default 1\n"
    "  --mixed          cycle through every decoder path (RGB/gray/CMYK JPEG, RGB/gray/RGBA/16-bit/palette\n"
    "                   PNG) instead of RGB JPEGs only\n";

static int cmd_data_pack(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_imgfolder f;
    struct dse_pack_opts o;
    struct dse_pack_summary sum;
    struct dse_err err = { 0 };
    int rc;
    (void)n_pos;
    dse_pack_opts_default(&o);
    if (!vals[0] || !vals[0][0]) return bad_usage(c->name, "--out FILE is required (the pack to write)%s", "");
    if ((rc = opt_int(c->name, "--size", vals[1], 0, 4096, &o.size)) >= 0 ||
        (rc = opt_int(c->name, "--quality", vals[3], 1, 100, &o.quality)) >= 0 ||
        (rc = opt_int(c->name, "--threads", vals[5], 1, 256, &o.threads)) >= 0)
        return rc;
    if (o.size > 0 && o.size < 8) return bad_usage(c->name, "--size '%s' is not 0 or an integer from 8 to 4096", vals[1]);
    o.format = o.size > 0 && o.size <= 64 ? DSE_PACK_RAW : DSE_PACK_JPEG;
    if (vals[2]) {
        if (strcmp(vals[2], "jpeg") && strcmp(vals[2], "raw"))
            return bad_usage(c->name, "--format '%s' is not jpeg or raw", vals[2]);
        o.format = !strcmp(vals[2], "raw") ? DSE_PACK_RAW : DSE_PACK_JPEG;
    }
    if (vals[4]) {
        if (strcmp(vals[4], "1") && strcmp(vals[4], "3")) return bad_usage(c->name, "--channels '%s' is not 1 or 3", vals[4]);
        o.channels = vals[4][0] - '0';
    }
    o.skip_bad = FLAG("--skip-bad");
    if (dse_imgfolder_scan(pos[0], &f, &err)) {
        dse_imgfolder_deinit(&f);
        return fail(&err);
    }
    fprintf(stderr, "dse data pack: %s: %d classes, %d train + %d %s images%s; short side %d, %s, %d thread%s\n",
            pos[0], f.classes, f.count[0], f.count[1], f.val_name[0] ? f.val_name : "val",
            f.ignored ? " (files without .jpg/.jpeg/.png ignored)" : "", o.size,
            o.format == DSE_PACK_JPEG ? "JPEG" : "raw", o.threads, o.threads == 1 ? "" : "s");
    if (dse_dataprep_pack(&f, vals[0], &o, stderr, isatty(2), &sum, &err)) {
        rc = fail(&err);
    } else {
        printf("%s: %d train + %d %s images of %d classes, %.1f MB, %.1f s (%.0f img/s)%s\n", vals[0],
               sum.records[0], sum.records[1], f.val_name[0] ? f.val_name : "val", f.classes, (double)sum.bytes / 1e6,
               sum.seconds, (sum.records[0] + sum.records[1] + sum.skipped) / (sum.seconds > 0 ? sum.seconds : 1e-9), "");
        if (sum.skipped) printf("skipped %d images that did not decode (named above)\n", sum.skipped);
        printf("next: dse train NET --data %s [--input C,H,W --classes %d]\n", vals[0], f.classes);
        rc = 0;
    }
    dse_imgfolder_deinit(&f);
    return rc;
}

static int cmd_data_info(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_err err = { 0 };
    struct dse_data_info info;
    (void)c, (void)n_pos, (void)vals;
    if (dse_pack_named(pos[0])) {
        struct dse_pack *p;
        if (dse_pack_open(pos[0], &p, &err)) return fail(&err);
        printf("%s: dse pack v%d, %s%s, %d channel%s, short side %d, %zu bytes\n", pos[0], p->version,
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
        if (FLAG("--verify")) {
            if (dse_pack_verify(p, 1, &err)) rc = fail(&err);
            else printf("verified: every record's CRC-32 matches and every record decodes\n");
        }
        dse_pack_close(p);
        return rc;
    }
    if (dse_data_probe(pos[0], NULL, &info, &err)) return fail(&err);
    printf("%s: %s, %d classes, ", pos[0], info.kind == DSE_DATA_KIND_FOLDER ? "image folder" : info.name,
           info.classes);
    if (info.c) printf("%d channel%s", info.c, info.c == 1 ? "" : "s");
    else printf("JPEG and PNG images of any mode and size (made 1 or 3 channels when packed)");
    if (info.h) printf(" of %dx%d", info.h, info.w);
    if (info.n_train) printf(", %d train + %d evaluation images", info.n_train, info.n_test);
    printf("\n");
    if (info.kind == DSE_DATA_KIND_FOLDER) printf("next: dse data pack %s --out FILE.pack\n", pos[0]);
    return 0;
}

static int cmd_data_bench(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_err err = { 0 };
    struct dse_pack *p = NULL;
    struct dse_imgfolder f;
    struct dse_loader *l = NULL;
    struct dse_loader_opts lo;
    int size = 227, batch = 256, threads = 0, seconds = 10, split = DSE_PACK_TRAIN, rc;
    enum dse_aug_mode aug = DSE_AUG_RRC;
    (void)n_pos, (void)flags;
    memset(&f, 0, sizeof f);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    threads = cpus > 0 ? (int)cpus : 1;
    if ((rc = opt_int(c->name, "--size", vals[0], 1, 8192, &size)) >= 0 ||
        (rc = opt_int(c->name, "--batch", vals[1], 1, 1 << 16, &batch)) >= 0 ||
        (rc = opt_int(c->name, "--threads", vals[2], 1, 256, &threads)) >= 0 ||
        (rc = opt_int(c->name, "--seconds", vals[3], 1, 100000, &seconds)) >= 0)
        return rc;
    if (vals[4]) {
        int k = dse_word_index(DSE_AUG_NAMES, vals[4]);
        if (k < 0) return bad_usage(c->name, "--aug '%s' is not one of: " DSE_AUG_NAMES, vals[4]);
        aug = (enum dse_aug_mode)k;
    }
    if (vals[5]) {
        if (strcmp(vals[5], "train") && strcmp(vals[5], "val")) return bad_usage(c->name, "--split '%s' is not train or val", vals[5]);
        split = !strcmp(vals[5], "val") ? DSE_PACK_VAL : DSE_PACK_TRAIN;
    }
    memset(&lo, 0, sizeof lo);
    lo.batch = batch, lo.shuffle = 1, lo.seed = 1, lo.out_h = size, lo.out_w = size, lo.workers = threads;
    const int is_pack = dse_pack_named(pos[0]);
    int channels = 3, short_side = size;
    if (is_pack) {
        if (dse_pack_open(pos[0], &p, &err)) return fail(&err);
        channels = p->channels;
        if (p->short_side) short_side = p->short_side;
        dse_data_norm_of_pack(p, &lo.norm);
    } else if (dse_imgfolder_scan(pos[0], &f, &err)) {
        dse_imgfolder_deinit(&f);
        return fail(&err);
    } else {
        dse_data_norm_imagenet(channels, &lo.norm); /* as the torchvision comparison uses */
        lo.decode_min_short = size;
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

static int cmd_data_synth(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_synth_opts o;
    struct dse_err err = { 0 };
    int rc, seed = 1;
    (void)n_pos;
    dse_synth_opts_default(&o);
    if ((rc = opt_int(c->name, "--classes", vals[0], 2, 1000, &o.classes)) >= 0 ||
        (rc = opt_int(c->name, "--train", vals[1], 1, 1000000, &o.train_per_class)) >= 0 ||
        (rc = opt_int(c->name, "--val", vals[2], 0, 1000000, &o.val_per_class)) >= 0 ||
        (rc = opt_int(c->name, "--seed", vals[4], 0, 2147483647, &seed)) >= 0)
        return rc;
    if (vals[3]) {
        int a, b, used = 0;
        if (sscanf(vals[3], "%d-%d%n", &a, &b, &used) != 2 || vals[3][used] || a < 8 || b < a || b > 4096)
            return bad_usage(c->name, "--sides '%s' is not MIN-MAX with 8 <= MIN <= MAX <= 4096 (e.g. 256-400)", vals[3]);
        o.min_side = a, o.max_side = b;
    }
    o.seed = (uint64_t)seed;
    o.mixed = FLAG("--mixed");
    if (dse_synth_folder(pos[0], &o, &err)) return fail(&err);
    printf("%s: %d classes x (%d train + %d val) images, sides %d to %d%s\nnext: dse data pack %s --out %s.pack\n",
           pos[0], o.classes, o.train_per_class, o.val_per_class, o.min_side, o.max_side,
           o.mixed ? ", every decoder path" : ", RGB JPEG", pos[0], pos[0]);
    return 0;
}


/* ---- dse eval, dse predict (issue #14 item 3) ----------------------------------------- */

static const char usage_eval[] =
    "usage: dse eval NET --checkpoint FILE [--data D] [--batch B] [--threads T] [--limit-test N]\n"
    "                    [--input C,H,W] [--classes K] [--json]\n"
    "\n"
    "A trained checkpoint on a dataset's test split (val/ for image folders and packs): test loss,\n"
    "top-1, top-5 and a per-class table (images, top-1 hits, accuracy, with the class names the\n"
    "checkpoint records). The same evaluation batches dse train reports after each epoch.\n"
    "\n"
    "  --checkpoint F   a checkpoint of NET (dse train --checkpoint-dir, or a sweep's)\n"
    "  --data D         default: the data the checkpoint was trained on, else fashion-mnist\n"
    "  --batch B        default 64       --threads T  default 2\n"
    "  --limit-test N   evaluate the first N test images\n"
    "  --input C,H,W, --classes K  fit NET as it was fitted for training\n"
    "  --json           print {\"loss\", \"top1\", \"top5\", \"images\", \"per_class\": [...]} instead\n";

static const char usage_predict[] =
    "usage: dse predict NET --checkpoint FILE [--top K] [--input C,H,W] [--classes K] [--json] IMAGE...\n"
    "\n"
    "The top-K classes (default 5) of each image with their probabilities, by a trained checkpoint\n"
    "of NET. An IMAGE is a JPEG or PNG file, or an entry of an IDX or CIFAR dataset written\n"
    "DATA:SPLIT:N (fashion-mnist:test:0 is the first test image; SPLIT is train or test). Each is\n"
    "prepared as evaluation prepared the test images: the centred box the checkpoint records,\n"
    "resized to the network's input, normalized with the training data's statistics; class names\n"
    "come from the checkpoint.\n"
    "\n"
    "  --checkpoint F   a checkpoint of NET\n"
    "  --top K          classes to print per image (default 5)\n"
    "  --input C,H,W, --classes K  fit NET as it was fitted for training\n"
    "  --json           one JSON object per image: {\"image\", \"top\": [{\"class\", \"name\", \"p\"}]}\n";

/* A JSON string of s (names come from folders: quotes, backslashes and control bytes escaped). */
static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

static int cmd_eval(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_train_opts o;
    struct dse_err err = { 0 };
    struct dse_net net;
    struct dse_input_shape in;
    struct dse_ckpt_info info;
    struct dse_eval_result r;
    int rc;
    (void)n_pos;
    dse_train_opts_default(&o);
    o.threads = 2;
    if (!vals[0]) return bad_usage(c->name, "--checkpoint FILE is required%s", "");
    if ((rc = opt_int(c->name, "--batch", vals[2], 1, 1 << 16, &o.batch)) >= 0 ||
        (rc = opt_int(c->name, "--threads", vals[3], 1, 256, &o.threads)) >= 0 ||
        (rc = opt_int(c->name, "--limit-test", vals[4], 1, 1 << 30, &o.limit_test)) >= 0 ||
        (rc = opt_fit(c->name, vals[5], vals[6], &in)) >= 0)
        return rc;
    if (dse_checkpoint_info(vals[0], &info, &err)) return fail(&err);
    o.data = vals[1] ? vals[1] : info.data[0] ? info.data : "fashion-mnist";
    o.limit_train = 1; /* the training split is not read for evaluation (image sources) */
    o.conv_algo = DSE_CPU_CONV_GEMM_BATCH; /* no timing: the same bits every run */
    if (dse_netfile_load(pos[0], &in, &net, &err)) return free(info.class_names), fail(&err);
    if (dse_eval_run(&net, &o, vals[0], &r, &err)) {
        rc = fail_net(&err, pos[0]);
    } else {
        rc = 0;
        if (FLAG("--json")) {
            printf("{\"checkpoint\": ");
            json_str(stdout, vals[0]);
            printf(", \"data\": ");
            json_str(stdout, o.data);
            printf(", \"images\": %d, \"loss\": %.6f, \"top1\": %.6f, \"top5\": %.6f, \"unpredicted\": %d, \"per_class\": [",
                   r.images, r.loss, r.top1, r.top5, r.unpredicted);
            for (int k = 0; k < r.classes; k++) {
                printf("%s{\"class\": %d, \"name\": ", k ? ", " : "", k);
                json_str(stdout, k < info.classes && info.class_names ? info.class_names[k] : "");
                printf(", \"images\": %d, \"top1_hits\": %d}", r.class_n[k], r.class_hits[k]);
            }
            printf("]}\n");
        } else {
            printf("%s on %s: %d test images, loss %.4f, top-1 %.2f%%, top-5 %.2f%%\n", vals[0], o.data, r.images,
                   r.loss, 100 * r.top1, 100 * r.top5);
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

/* An IDX or CIFAR entry "DATA:SPLIT:N" that is not a file: 1 and its parts, else 0. */
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
    else return 0;
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

static int cmd_predict(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
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
    if (!vals[0]) return bad_usage(c->name, "--checkpoint FILE is required%s", "");
    if (n_pos < 2) return bad_usage(c->name, "expected one network file and at least one image%s", "");
    if ((rc = opt_int(c->name, "--top", vals[1], 1, 1000, &top)) >= 0 ||
        (rc = opt_fit(c->name, vals[2], vals[3], &in)) >= 0)
        return rc;
    if (dse_checkpoint_info(vals[0], &info, &err)) return fail(&err);
    if (dse_netfile_load(pos[0], &in, &net, &err)) return free(info.class_names), fail(&err);
    struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA, .inference = 1 };
    rc = 0;
    if (net.in_c != 1 && net.in_c != 3) {
        dse_err_set(&err, DSE_ERR_CONFIG, pos[0], 0, "the network takes %d-channel input; images give 1 or 3", net.in_c);
        rc = fail(&err);
        goto out;
    }
    if (dse_model_new(&net, &mo, &m, &err) || dse_checkpoint_load(m, vals[0], &next, &it, &err)) {
        rc = fail_net(&err, pos[0]);
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
                                      "pixels are used as pixel/255\n", vals[0]);
    for (int i = 1; i < n_pos && !rc; i++) {
        char *data = NULL, spec[256];
        size_t len;
        float loss;
        enum dse_data_split split;
        int index;
        const int entry = data_entry(pos[i], spec, sizeof spec, &split, &index);
        if ((entry ? data_image(pos[i], spec, split, index, &files, &ds, ds_key, sizeof ds_key, &im, &err)
                   : (dse_fs_read(pos[i], &data, &len, &err) ||
                      dse_image_decode((const uint8_t *)data, len, net.in_c, 0, &im, &err))) ||
            dse_data_image_eval(&im, net.in_h, net.in_w, info.eval_center, info.norm.c == net.in_c ? &info.norm : NULL,
                                &tmp, &work, x, &err) ||
            dse_model_forward(m, x, &label, &loss, &err)) {
            if (!err.file) err.file = pos[i];
            rc = fail(&err);
        }
        free(data);
        if (rc) break;
        const float *p = dse_model_probs(m);
        for (int j = 0; j < k; j++) rk[j] = (struct ranked){ .k = j, .p = p[j] };
        qsort(rk, (size_t)k, sizeof *rk, cmp_ranked);
        if (FLAG("--json")) {
            printf("{\"image\": ");
            json_str(stdout, pos[i]);
            printf(", \"top\": [");
            for (int j = 0; j < top; j++) {
                printf("%s{\"class\": %d, \"name\": ", j ? ", " : "", rk[j].k);
                json_str(stdout, rk[j].k < info.classes && info.class_names ? info.class_names[rk[j].k] : "");
                printf(", \"p\": %.6f}", rk[j].p);
            }
            printf("]}\n");
        } else {
            printf("%s\n", pos[i]);
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

static const char usage_export[] =
    "usage: dse export NET --checkpoint FILE [--format onnx|caffe] [--out PATH] [--input C,H,W] [--classes K]\n"
    "       dse export SWEEPDIR --id ID | --best [--max-mb M] [--format onnx|caffe] [--out PATH]\n"
    "\n"
    "A trained network as a file other tools run (docs/export.md): ONNX (opset 13: onnxruntime,\n"
    "TensorRT, PyTorch's importers) or Caffe (a deploy prototxt and a .caffemodel of the weights).\n"
    "The weights come from a checkpoint of NET, or from a sweep's candidate: by id (dse report lists\n"
    "them), or --best, the most accurate trained candidate, within --max-mb megabytes of float32\n"
    "parameters if given. The ONNX model takes 'data' [N, C, H, W] as pixel / 255 and normalizes it\n"
    "itself with the training data's statistics; it outputs 'prob' [N, classes]. Its metadata names\n"
    "the candidate, its metaparameters, the data, the class names and top-1.\n"
    "\n"
    "  --format F   onnx (default) or caffe\n"
    "  --out PATH   default <name>.onnx, or <name>.prototxt and <name>.caffemodel (name: the\n"
    "               candidate id or the network file's)\n"
    "  --input C,H,W, --classes K  fit NET as it was fitted for training\n";

static const char usage_import[] =
    "usage: dse import MODEL.caffemodel NET [--out FILE.ckpt] [--mean M,... --std S,...] [--input C,H,W]\n"
    "                  [--classes K]\n"
    "\n"
    "Caffe's trained weights (a .caffemodel, such as a released SqueezeNet's) into a dse checkpoint\n"
    "of NET (its prototxt, or a .cfg with the same layer names), to evaluate, fine-tune or compare:\n"
    "layers are matched by name as Caffe matches them, shapes must agree.\n"
    "\n"
    "  --out FILE   default: MODEL with .ckpt for .caffemodel\n"
    "  --mean M,..., --std S,...  the input normalization to record, x = (pixel / 255 - mean) / std per\n"
    "               channel (what dse export printed); without them evaluation uses the data's own\n";

static int cmd_export(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_export_req q = { .format = DSE_EXPORT_ONNX };
    struct dse_err err = { 0 };
    int rc;
    (void)n_pos;
    if (vals[3] && strcmp(vals[3], "onnx") && strcmp(vals[3], "caffe"))
        return bad_usage(c->name, "--format '%s' is not one of: onnx caffe", vals[3]);
    q.format = vals[3] && !strcmp(vals[3], "caffe") ? DSE_EXPORT_CAFFE : DSE_EXPORT_ONNX;
    q.out = vals[4];
    if ((rc = opt_fit(c->name, vals[5], vals[6], &q.fit)) >= 0) return rc;
    const int sweep = vals[1] || FLAG("--best");
    if (vals[0] && sweep) return bad_usage(c->name, "give NET --checkpoint FILE, or SWEEPDIR --id/--best, not both%s", "");
    if (!vals[0] && !sweep)
        return bad_usage(c->name, "say where the weights are: --checkpoint FILE (with a network file), or --id ID or "
                                  "--best (with a sweep directory)%s", "");
    if (vals[1] && FLAG("--best")) return bad_usage(c->name, "give --id or --best, not both%s", "");
    if (vals[2] && !FLAG("--best")) return bad_usage(c->name, "--max-mb goes with --best%s", "");
    if (vals[2]) {
        char *end;
        q.max_mb = strtod(vals[2], &end);
        if (end == vals[2] || *end || !(q.max_mb > 0) || q.max_mb > 1e9)
            return bad_usage(c->name, "--max-mb '%s' is not a number of megabytes above 0", vals[2]);
    }
    if (vals[1] && !dse_space_id_valid(vals[1]))
        return bad_usage(c->name, "--id '%s' is not a candidate id (c and 16 hex digits, as dse report shows them)",
                         vals[1]);
    if (sweep && (q.fit.c || q.fit.classes))
        return bad_usage(c->name, "--input and --classes fit a network file; a sweep's candidates are fitted already%s", "");
    if (sweep) q.sweep_dir = pos[0], q.id = vals[1], q.best = FLAG("--best");
    else q.net_path = pos[0], q.checkpoint = vals[0];
    return dse_export_run(&q, stderr, &err) ? (sweep ? fail(&err) : fail_net(&err, pos[0])) : 0;
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

static int cmd_import(const struct cmd *c, const char **pos, int n_pos, char **vals, const char *flags) {
    struct dse_input_shape fit;
    struct dse_data_norm norm = { 0 };
    struct dse_err err = { 0 };
    char out[4200];
    int rc;
    (void)n_pos, (void)flags;
    if ((rc = opt_fit(c->name, vals[1], vals[2], &fit)) >= 0) return rc;
    if (!vals[3] != !vals[4]) return bad_usage(c->name, "--mean and --std go together%s", "");
    if (vals[3]) {
        int nm = parse_floats(vals[3], 0, norm.mean), ns = parse_floats(vals[4], 1, norm.std);
        if (nm < 0) return bad_usage(c->name, "--mean '%s' is not a comma-separated list of numbers (one a channel)", vals[3]);
        if (ns < 0) return bad_usage(c->name, "--std '%s' is not a comma-separated list of numbers above 0", vals[4]);
        if (nm != ns) return bad_usage(c->name, "--mean and --std give different channel counts%s", "");
        norm.c = nm;
    }
    if (vals[0]) {
        snprintf(out, sizeof out, "%s", vals[0]);
    } else {
        snprintf(out, sizeof out, "%s", pos[0]);
        size_t n = strlen(out);
        if (n > 11 && !strcmp(out + n - 11, ".caffemodel")) out[n - 11] = '\0';
        snprintf(out + strlen(out), sizeof out - strlen(out), ".ckpt");
    }
    return dse_import_run(pos[0], pos[1], &fit, &norm, out, stderr, &err) ? fail_net(&err, pos[1]) : 0;
}

static const struct cmd data_cmds[] = {
    { "data pack",  1, 1, "--skip-bad", "--out --size --format --quality --channels --threads", usage_data_pack,
      cmd_data_pack },
    { "data info",  1, 1, "--verify",   "",                                                      usage_data_info,
      cmd_data_info },
    { "data bench", 1, 1, "",           "--size --batch --threads --seconds --aug --split",      usage_data_bench,
      cmd_data_bench },
    { "data synth", 1, 1, "--mixed",    "--classes --train --val --sides --seed",                usage_data_synth,
      cmd_data_synth },
};

static const struct cmd cmds[] = {
    { "analyze",  1, 1, "--expand",               "--batch --format --input --classes",
                                                                              usage_analyze,  cmd_analyze },
    { "diff",     2, 2, "--expand",               "--batch --format",         usage_diff,     cmd_diff },
    { "count",    1, 1, "",                       "",                         usage_count,    cmd_count },
    { "generate", 1, 1, "--all",                  "--index --id --format --out", usage_generate, cmd_generate },
    { "sweep",    1, 1, "--analytic-only",        "--out --workers --threads --budget --early-stop --eta --min-epochs "
                                                  "--rank --conv --lease-seconds --max-crashes --data-root --gpus "
                                                  "--per-gpu --precision --max-oom --algos",
                                                                              usage_sweep,    cmd_sweep },
    { "status",   1, 1, "",                       "",                         usage_status,   cmd_status },
    { "report",   1, 1, "",                       "--format --plot --curves", usage_report,   cmd_report },
    { "train",    1, 1, "--json",                 "--data --epochs --batch --lr --lr-policy --threads --seed "
                                                  "--limit-train --limit-test --init --checkpoint-dir --resume --conv "
                                                  "--conv-cache --device --precision --algos --clip-norm --input "
                                                  "--classes --aug --loader-threads --pack-cache",
                                                                              usage_train,    cmd_train },
    { "bench",    1, 1, "",                       "--mode --batch --threads --iters --device --precision --algos "
                                                  "--input --classes",
                                                                              usage_bench,    cmd_bench },
    { "profile",  1, 1, "",                       "--batch --threads --iters --device --precision --algos "
                                                  "--input --classes",
                                                                              usage_profile,  cmd_profile },
    { "eval",     1, 1, "--json",                 "--checkpoint --data --batch --threads --limit-test --input --classes",
                                                                              usage_eval,     cmd_eval },
    { "predict",  1, 64, "--json",                "--checkpoint --top --input --classes",
                                                                              usage_predict,  cmd_predict },
    { "export",   1, 1, "--best",                 "--checkpoint --id --max-mb --format --out --input --classes",
                                                                              usage_export,   cmd_export },
    { "import",   2, 2, "",                       "--out --input --classes --mean --std",
                                                                              usage_import,   cmd_import },
};

static int run_cmd(const struct cmd *c, int argc, char **argv) {
    const char *pos[64]; /* at least every command's max_pos */
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
                 !strcmp(c->name, "data pack") || !strcmp(c->name, "data synth") ? "an image folder DIR" :
                 !strncmp(c->name, "data ", 5) ? "a pack, an image folder or a dataset name" :
                 (!strcmp(c->name, "analyze") || !strcmp(c->name, "train") || !strcmp(c->name, "bench") ||
                  !strcmp(c->name, "profile") || !strcmp(c->name, "eval") || !strcmp(c->name, "predict"))
                     ? "one network file" : "a space file");
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
    if (!strcmp(name, "--version")) return printf("dse " DSE_VERSION " (backends: %s)\n", dse_engine_backends()), 0;
    if (!strcmp(name, "help")) {
        if (argc == 2) return fputs(usage_main, stdout), 0;
        name = argv[2];
        for (int i = 0; i < DSE_ARRAY_LEN(cmds); i++)
            if (!strcmp(name, cmds[i].name)) return fputs(cmds[i].usage, stdout), 0;
        if (!strcmp(name, "data")) return fputs(usage_data, stdout), 0;
        fprintf(stderr, "dse help: unknown command '%s'\n\n%s", name, usage_main);
        return EXIT_BAD_INPUT;
    }
    if (!strcmp(name, "data")) {
        const char *sub = argc > 2 ? argv[2] : "";
        if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) return fputs(usage_data, stdout), 0;
        for (int i = 0; i < DSE_ARRAY_LEN(data_cmds); i++)
            if (!strcmp(sub, data_cmds[i].name + 5)) return run_cmd(&data_cmds[i], argc - 3, argv + 3);
        fprintf(stderr, "dse data: %s '%s'\n\n%s", sub[0] ? "unknown subcommand" : "expected a subcommand", sub,
                usage_data);
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
