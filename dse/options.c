/* options.c: the option table (options.h's DSE_OPTIONS), one table per command with its
 * usage prose and option lines, the parser that reads a command line against them and the
 * printer that makes the --help text from the same lines. dse/main.c and dse/cmd_*.c run the commands. */
#include "dse/options.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dse/exportcmd.h"
#include "dse/trainlog.h"
#include "data/data.h"
#include "data/synth.h"
#include "metaparams/net.h"

#define STR_(x) #x
#define STR(x)  STR_(x)

/* --checkpoint-every unless told: "5m" (engine/train.h) */
#define CKPT_EVERY_DEFAULT STR(DSE_TRAIN_CKPT_EVERY_MIN) "m"

/* A row's min and max as an INT's (an integer kind's) or a REAL's (a real kind's) range. */
#define INT_RANGE_FLAG(v)  0
#define INT_RANGE_TEXT(v)  0
#define INT_RANGE_PATH(v)  0
#define INT_RANGE_WORD(v)  0
#define INT_RANGE_INT(v)   (long long)(v)
#define INT_RANGE_INTS(v)  (long long)(v)
#define INT_RANGE_REAL(v)  0
#define INT_RANGE_REALS(v) 0
#define INT_RANGE_SPAN(v)  (long long)(v)

const struct dse_opt_spec dse_opt_specs[DSE_OPT_COUNT] = {
#define X(e, nm, a, k, mn, mx, wd, wy) \
    [DSE_OPT_##e] = { .name = nm, .arg = a, .kind = DSE_OPT_KIND_##k, .min = INT_RANGE_##k(mn), .max = INT_RANGE_##k(mx), \
                      .lo = (double)(mn), .hi = (double)(mx), .words = wd, .why = wy },
    DSE_OPTIONS(X)
#undef X
};

/* A list option's count of values (DSE_OPT_LISTS); 0, 0 for the others. */
static const struct {
    int min, max;
} list_count[DSE_OPT_COUNT] = {
#define X(e, lo, hi) [DSE_OPT_##e] = { .min = (lo), .max = (hi) },
    DSE_OPT_LISTS(X)
#undef X
};

/* ---- the commands' usage prose: the lines above their options ----------------------- */

static const char usage_analyze[] =
    "usage: dse analyze NET [--batch N] [--format table|json|csv|md] [--expand]\n"
    "                       [--input C,H,W] [--classes K] [--skip-unknown]\n"
    "       dse analyze --compressed MODEL.dsez [--format table|json|csv|md]\n"
    "       dse analyze NET --workers P --bandwidth GB/s [--latency US] [--img-per-s X | --measure] [--batch B]\n"
    "                       [--format table|json|csv|md] [--input C,H,W] [--classes K]\n"
    "\n"
    "Closed-form cost of a network: per layer the output shape, params (weights + biases),\n"
    "FLOPs (2 per multiply-add, conv and fc), activations and receptive field; totals,\n"
    "model size, training FLOPs (3x forward) and memory estimates for inference and training.\n"
    "With --workers: instead, the time of a training step data-parallel on 1, 2, 4, ... P\n"
    "workers by FireCaffe's communication model (thesis eqs. 3.3, 3.4; docs/comm-model.md):\n"
    "gradients summed by a parameter server or a reduction tree, compute, speedup, efficiency.\n"
    "\n";

static const char usage_diff[] =
    "usage: dse diff BASE VARIANT [--batch N] [--format table|json|csv|md] [--expand]\n"
    "                             [--input C,H,W] [--classes K] [--skip-unknown]\n"
    "\n"
    "Compare two networks layer by layer (matched by name), as thesis Tables 4.3-4.8:\n"
    "ratios variant/base of output size, params and FLOPs, added and removed layers,\n"
    "totals, and the reach of the change: local (the changed layer and at most its\n"
    "successor), regional, or global (reaches the output: the last layer before a\n"
    "softmax, loss or accuracy at the end; thesis ch. 4).\n"
    "\n";

static const char usage_count[] =
    "usage: dse count SPACE\n"
    "\n"
    "The number of candidates in a design space, without enumerating them: the product\n"
    "of the number of values of each metaparameter (thesis 4.7), each factor shown.\n";

static const char usage_generate[] =
    "usage: dse generate SPACE [--index K | --id ID | --all] [--format cfg|prototxt] [--out DIR]\n"
    "\n"
    "Write candidate networks of a design space. --index K (default %D{--index}) writes candidate K\n"
    "of the grid to standard output, --id ID the candidate with that id (as dse report\n"
    "shows both); --all writes every candidate the space covers (its sample, if it has\n"
    "one) to DIR/<id>.cfg or DIR/<id>.prototxt.\n"
    "\n";

static const char usage_sweep[] =
    "usage: dse sweep SPACE [--out DIR] [--workers N] [--threads T] [--budget E|Nh|Nm]\n"
    "                       [--strategy grid|random|evolution|bo|auto]\n"
    "                       [--early-stop none|sh|asha] [--eta N] [--min-epochs R] [--rank pareto|top1]\n"
    "                       [--conv auto|gemm_batch|gemm_image|winograd|direct] [--lease-seconds S]\n"
    "                       [--max-crashes N] [--data-root DIR] [--ranks-per-candidate P] [--progress-every S]\n"
    "                       [--precision fp32|bf16]\n"
    "                       [--gpus LIST|all [--per-gpu K|auto] [--precision fp32|tf32|fp16|bf16] [--max-oom N]\n"
    "                        [--algos det|any]]\n"
    "       dse sweep SPACE --out DIR --slurm [--array N] [--gpus-per-task K] [--sbatch \"ARGS\"] [--dry-run]\n"
    "                       [worker options above]\n"
    "       dse sweep DIR --slurm --cancel\n"
    "       dse sweep SPACE --analytic-only [--out DIR] [--strategy grid|random|evolution|bo|auto]\n"
    "\n"
    "Generate and cost every candidate of a design space (or its sample), prune by the\n"
    "space's constraints, record each candidate in DIR (default sweeps/<space name>), then\n"
    "train every unpruned candidate with the space's train section: per-epoch loss, top-1,\n"
    "top-5, wall time, images/s and a status (done, diverged, failed, stopped) go into its\n"
    "file (docs/sweep-dir.md). Any number of these commands, on one machine or several\n"
    "sharing DIR, work on the same sweep: candidates are claimed with leases that expire if a\n"
    "worker dies, and a dead worker's candidate resumes from its last checkpoint. Running it\n"
    "again joins or resumes the sweep. Progress lines go to stderr; 'dse status DIR' shows it.\n"
    "When every candidate has ended, prints the report (dse report) and writes DIR/frontier.svg,\n"
    "DIR/frontier_flops.svg and DIR/curves.svg.\n"
    "\n";

static const char usage_status[] =
    "usage: dse status DIR [--json] [--watch S]\n"
    "\n"
    "Where a training sweep stands: candidates done, stopped (by rung), diverged, failed,\n"
    "running (and on which host and pid), waiting for a rung decision and pending; epochs and\n"
    "time spent against full training; an ETA while a worker runs (a sweep with none is\n"
    "paused, and says how to go on); for a sweep submitted with --slurm, the state of each of its\n"
    "Slurm tasks (squeue, sacct). Reads only: safe while workers run.\n"
    "\n";

static const char usage_report[] =
    "usage: dse report DIR [--format md|csv|tex|json] [--plot FILE.svg] [--plot-flops FILE.svg]\n"
    "                      [--curves FILE.svg]\n"
    "       dse report DIR DIR2... --plot FILE.svg\n"
    "\n"
    "All candidates of a sweep directory and the Pareto frontier: maximize accuracy and\n"
    "minimize model size once candidates are trained, before that minimize model size\n"
    "and FLOPs. docs/report.md describes the formats. With several directories (up to 8)\n"
    "each one's report is printed in turn (Markdown) and --plot draws their frontiers on\n"
    "one plot, each in its colour.\n"
    "\n";

static const char usage_train[] =
    "usage: dse train NET [--data " DSE_TRAIN_DATA_DEFAULT "] [--epochs E] [--batch B] [--lr L]\n"
    "                     [--lr-policy fixed|step|poly|linear] [--threads T] [--seed S]\n"
    "                     [--limit-train N] [--limit-test N] [--init msra|xavier]\n"
    "                     [--checkpoint-dir DIR] [--resume FILE] [--device cpu|cuda|cuda:N]\n"
    "                     [--conv auto|gemm_batch|gemm_image|winograd|direct] [--conv-cache FILE|none]\n"
    "                     [--precision fp32|tf32|fp16|bf16] [--algos det|any] [--clip-norm C] [--json]\n"
    "                     [--input C,H,W] [--classes K] [--aug auto|rrc|crop|flip|none] [--loader-threads N]\n"
    "                     [--pack-cache DIR] [--max-pixels N] [--reduce ps|tree|allreduce] [--progress-every S]\n"
    "       mpirun -np P dse train NET --threads 1 ... (data-parallel over P ranks)\n"
    "\n"
    "Train a network (a .cfg, a Caffe prototxt, or a generated candidate) with SGD and\n"
    "momentum " DSE_TRAIN_DEFAULT_STR(momentum) ", weight decay " DSE_TRAIN_DEFAULT_STR(weight_decay)
    ", MSRA init, gradients clipped to a global L2 norm of " DSE_TRAIN_DEFAULT_STR(clip_norm) ", and\n"
    "the classifier's bias at " DSE_TRAIN_DEFAULT_STR(classifier_bias)
    " when a ReLU follows it (SqueezeNet's conv10: no class starts\n"
    "dead; docs/training.md). A network without a loss gets softmax cross-entropy on its last\n"
    "layer. Reports test loss, top-1 and top-5 after every epoch; a progress line on a\n"
    "terminal, or every " DSE_TRAIN_LOG_EVERY_S_STR " s in a log (--progress-every). NaN or infinite loss stops\n"
    "the run with status diverged. Under mpirun each rank trains on its share of every\n"
    "batch and the ranks sum their gradients (FireCaffe).\n"
    "\n";

static const char usage_bench[] =
    "usage: dse bench NET [--mode train|infer] [--batch B] [--threads T] [--iters N]\n"
    "                     [--conv auto|gemm_batch|gemm_image|winograd|direct] [--slices S]\n"
    "                     [--device cpu|cuda|cuda:N] [--precision fp32|tf32|fp16|bf16] [--algos det|any]\n"
    "                     [--input C,H,W] [--classes K]\n"
    "\n"
    "Images per second of a network on synthetic data: warm-up (conv strategy timing or\n"
    "cuDNN's algorithm search included) excluded, median of N iterations (default %D{--iters}).\n"
    "Prints one line with img_per_s=<number>.\n"
    "\n";

static const char usage_profile[] =
    "usage: dse profile NET [--batch B] [--threads T] [--iters N] [--device cpu|cuda|cuda:N]\n"
    "                       [--precision fp32|tf32|fp16|bf16] [--algos det|any] [--input C,H,W] [--classes K]\n"
    "\n"
    "Per-layer forward and backward time (median of N iterations, default %D{--iters}) and GFLOP/s\n"
    "on synthetic data, the layer-wise breakdown of Caffe's `caffe time`. On a GPU each\n"
    "layer's time is measured from queueing it to the device finishing it.\n"
    "\n";

static const char usage_eval[] =
    "usage: dse eval NET --checkpoint FILE [--data D] [--pack-cache DIR] [--max-pixels N] [--batch B]\n"
    "                    [--threads T] [--limit-test N] [--input C,H,W] [--classes K] [--precision P]\n"
    "                    [--json]\n"
    "\n"
    "A trained checkpoint on a dataset's test split (val/ for image folders and packs): test loss,\n"
    "top-1, top-5 and a per-class table (images, top-1 hits, accuracy, with the class names the\n"
    "checkpoint records). The same evaluation batches dse train reports after each epoch.\n"
    "\n";

static const char usage_compress[] =
    "usage: dse compress NET --checkpoint CKPT --out MODEL.dsez [--data D] [--density D] [--bits B]\n"
    "                    [--finetune E] [--layer-density NAME=D,...] [--lr L] [--batch B] [--threads T]\n"
    "                    [--seed S] [--limit-train N] [--limit-test N] [--progress-every S]\n"
    "\n"
    "Deep Compression (Han et al. 2016; docs/compress.md) of a trained checkpoint: each conv and\n"
    "fc layer's weights pruned by magnitude and retrained with the pruned ones held at zero, then\n"
    "shared per layer by k-means (2^bits - 1 centroids and the zero), the centroids fine-tuned with\n"
    "their weights' gradients summed, and the model written as a .dsez. Fine-tunes on the CPU with\n"
    "dse train's recipe. The stages' checkpoints stay in OUT.work until the end: after a kill, the\n"
    "same command goes on where it was, to the same bytes.\n"
    "\n";

static const char usage_predict[] =
    "usage: dse predict NET --checkpoint FILE [--top K] [--max-pixels N] [--input C,H,W] [--classes K]\n"
    "                       [--precision P] [--json] IMAGE...\n"
    "\n"
    "The top-K classes (default %D{--top}) of each image with their probabilities, by a trained checkpoint\n"
    "of NET. An IMAGE is a JPEG, PNG, BMP, PPM, PGM, TIFF or WebP file, a folder (its image files by\n"
    "name, not its subfolders), or an entry of an IDX or CIFAR dataset written DATA:SPLIT:N\n"
    "(fashion-mnist:test:0 is the first test image; SPLIT is train or test). Each is prepared as\n"
    "evaluation prepared the test images: the centred box the checkpoint records, resized to the\n"
    "network's input, normalized with the training data's statistics; class names come from the\n"
    "checkpoint.\n"
    "NET, the checkpoint and each IMAGE file must be regular files (or links to them): a FIFO or a\n"
    "device is refused before anything is opened.\n"
    "\n";

static const char usage_export[] =
    "usage: dse export NET --checkpoint FILE [--format onnx|caffe|ckpt] [--out PATH] [--input C,H,W] [--classes K]\n"
    "       dse export SWEEPDIR --id ID | --best [--max-mb M] [--format onnx|caffe|ckpt] [--out PATH]\n"
    "\n"
    "A trained network as a file other tools run (docs/export.md): ONNX (opset 13: onnxruntime,\n"
    "TensorRT, PyTorch's importers) or Caffe (a deploy prototxt and a .caffemodel of the weights).\n"
    "The weights come from a checkpoint of NET, or from a sweep's candidate: by id (dse report lists\n"
    "them), or --best, the most accurate trained candidate, within --max-mb megabytes of float32\n"
    "parameters if given. The ONNX model takes 'data' [N, C, H, W] as pixel / 255 and normalizes it\n"
    "itself with the training data's statistics; it outputs 'prob' [N, classes]. Its metadata names\n"
    "the candidate, its metaparameters, the data, the class names and top-1. A compressed model\n"
    "(dse compress's MODEL.dsez) exports as a checkpoint does, its ONNX keeping the weight sharing\n"
    "(uint8 or uint16 indices and a codebook, through Gather); --format ckpt writes its decoded\n"
    "weights as a float checkpoint.\n"
    "\n";

static const char usage_import[] =
    "usage: dse import MODEL.caffemodel NET [--out FILE.ckpt] [--mean M,... --std S,...] [--input C,H,W]\n"
    "                  [--classes K] [--classes-file FILE]\n"
    "       dse import MODEL.onnx [--out FILE.ckpt] [--net-out FILE.cfg] [--mean M,... --std S,...]\n"
    "                  [--input C,H,W] [--classes K] [--classes-file FILE]\n"
    "\n"
    "Caffe's trained weights (a .caffemodel, such as a released SqueezeNet's) into a dse checkpoint\n"
    "of NET (its prototxt, or a .cfg with the same layer names), to evaluate, fine-tune or compare:\n"
    "layers are matched by name as Caffe matches them, shapes must agree. An ONNX model (PyTorch's\n"
    "export, dse export's) becomes a network file (.cfg) and a checkpoint of its initializers, its\n"
    "input normalization the model's own; --classes K fits the checkpoint to K classes, its classifier\n"
    "initialized afresh, for fine-tuning with dse train --resume (docs/onnx.md, \"Import\").\n"
    "\n";

static const char usage_data_pack[] =
    "usage: dse data pack DIR --out FILE [--size S] [--format jpeg|raw] [--quality Q] [--channels 1|3]\n"
    "                         [--threads T] [--skip-bad] [--max-pixels N]\n"
    "\n"
    "Pack an image folder (DIR/train/<class>/*.jpg|png, DIR/val/ or DIR/test/) into one file: each\n"
    "image decoded (JPEG, PNG; gray, RGB, RGBA, CMYK, 16-bit), resized so its short side is S with an\n"
    "antialiasing filter, and stored as raw pixels or re-encoded JPEG, with an index (offsets, labels,\n"
    "sizes, a CRC-32 per record and one over the index), class names and per-channel mean and std.\n"
    "Uses every core; the file appears only when complete (a killed pack leaves none).\n"
    "\n";

static const char usage_data_info[] =
    "usage: dse data info SOURCE [--verify]\n"
    "\n"
    "What a pack, an image folder or a dataset name holds: classes, images per split, image format\n"
    "and size, per-channel statistics.\n"
    "\n";

static const char usage_data_bench[] =
    "usage: dse data bench SOURCE [--size N] [--batch B] [--threads T] [--seconds S] [--aug A]\n"
    "                             [--split train|val] [--max-pixels N]\n"
    "\n"
    "Images per second the loader delivers from a pack or an image folder (read and decoded file by\n"
    "file), cropped and resized to NxN, flipped and normalized into float batches, as dse train\n"
    "consumes them. Prints one line: name=loader.dse ... img_per_s=X img_per_s_per_core=Y.\n"
    "\n";

static const char usage_data_synth[] =
    "usage: dse data synth DIR [--classes K] [--train N] [--val N] [--sides MIN-MAX] [--seed S] [--mixed]\n"
    "\n"
    "Write a synthetic image folder: K classes of stripes whose colours, frequency and angle tell the\n"
    "class apart (learnable after crops and flips), N training and validation images per class,\n"
    "sides drawn from MIN-MAX. Deterministic for a seed.\n"
    "\n";

/* ---- the commands' option lines, in --help order ------------------------------------- */

#define OWN(o, h)       { .opt = DSE_OPT_##o, .help = h }
#define OWNA(o, a, h)   { .opt = DSE_OPT_##o, .arg = a, .help = h }
#define RIGHT(o, a, h)  { .opt = DSE_OPT_##o, .place = DSE_OPT_PLACE_RIGHT, .arg = a, .help = h }
#define JOIN(o, a)      { .opt = DSE_OPT_##o, .place = DSE_OPT_PLACE_JOIN, .arg = a }
#define IN_TEXT(o)      { .opt = DSE_OPT_##o, .place = DSE_OPT_PLACE_TEXT }
#define FORMAT(w, h)    { .opt = DSE_OPT_FORMAT, .words = w, .help = h }
#define HEADING(h)      { .place = DSE_OPT_PLACE_HEADING, .help = h }
/* OWN and RIGHT lines that bind a value or carry a default: DSE_OPT_BIND and .def after the help */
#define OWNB(o, h, ...)     { .opt = DSE_OPT_##o, .help = h, __VA_ARGS__ }
#define RIGHTB(o, a, h, ...) { .opt = DSE_OPT_##o, .place = DSE_OPT_PLACE_RIGHT, .arg = a, .help = h, __VA_ARGS__ }
/* A recipe option of dse train, placed OWN or RIGHT: its option, help and default are
 * engine/train.def's row's (DSE_TRAIN_HELP, DSE_TRAIN_DEFAULT_STR). */
#define RECIPE(where, field, a)                                                                     \
    { .opt = DSE_TRAIN_##field(RECIPE_OPT_), .place = DSE_OPT_PLACE_##where, .arg = a,               \
      .help = DSE_TRAIN_HELP(field), .def = DSE_TRAIN_DEFAULT_STR(field) }
#define RECIPE_OPT_(field, key, kind, def, lo, hi, cli, words, help) DSE_OPT_##cli

static const struct dse_opt_line lines_analyze[] = {
    { .opt = DSE_OPT_BATCH, .arg = "N", .def = "1",
      .help = "images per batch (default %D; with --workers the global batch, default " STR(DSE_COMM_BATCH_DEFAULT) ")" },
    FORMAT("table json csv md", "table (default), json (docs/json.md), csv or md"),
    OWN(EXPAND, "one row per primitive layer instead of one per Fire module or block (ONNX)"),
    OWN(INPUT, "override the network's input shape (e.g. 3,454,454)"),
    OWN(CLASSES, "give the classifier (the last conv or fc) K outputs"),
    OWN(SKIP_UNKNOWN, "an ONNX op dse does not read: a zero-cost layer of its input's shape, counted\n"
                      "on stderr, instead of an error (docs/onnx.md)"),
    OWN(COMPRESSED, "the file is a compressed model (dse compress's .dsez): per stored tensor its\n"
                    "density, bits and bytes, the total against float32 (docs/dsez.md)"),
    HEADING("\nData-parallel training (docs/comm-model.md):\n"),
    OWN(COMM_WORKERS, "the communication model for 1, 2, 4, ... and P workers (P at most the batch)"),
    OWN(BANDWIDTH, "each link's bandwidth, 10^9 bytes/s (10 Gb/s Ethernet: 1.25)"),
    OWN(LATENCY, "per message, microseconds (default 0: eqs. 3.3 and 3.4 as the thesis has them)"),
    OWN(IMG_PER_S, "one worker's training images/s (default: estimated from the network's\n"
                   "training FLOPs and this machine's FLOP/s, which --measure keeps)"),
    OWN(MEASURE, "time a few SGD steps here (1 thread, synthetic data at --batch; a minute or\n"
                 "more) instead, and keep this CPU's FLOP/s in $XDG_CACHE_HOME/dse (else\n"
                 "~/.cache/dse)/train-rate.txt for later estimates"),
};

static const struct dse_opt_line lines_diff[] = {
    { .opt = DSE_OPT_BATCH, .arg = "N", .help = "images per batch (default %D)", .def = "1" },
    FORMAT("table json csv md", "table (default), json, csv or md"),
    OWN(EXPAND, "compare primitive layers instead of whole Fire modules"),
    OWN(INPUT, "both networks' input shape (e.g. 3,224,224: an ONNX export against a .cfg)"),
    OWN(CLASSES, "give both classifiers (the last conv or fc) K outputs"),
    OWN(SKIP_UNKNOWN, "an ONNX op dse does not read: a zero-cost layer, counted on stderr"),
};

static const struct dse_opt_line lines_generate[] = {
    OWNB(INDEX, "grid index, 0 to count - 1", .def = "0"),
    OWN(ID, "candidate id: c and 16 hex digits (dse report, sweep DIR/candidates/)"),
    OWN(ALL, "every candidate; needs --out"),
    FORMAT("cfg prototxt", "cfg (default; docs/network-format.md) or prototxt (Caffe)"),
    OWN(OUT, "directory for --all (created if missing)"),
};

#define SWEEP(f) DSE_OPT_BIND(struct dse_sweep_opts, f)
static const struct dse_opt_line lines_sweep[] = {
    OWN(OUT, "the sweep directory"),
    OWN(ANALYTIC_ONLY, "cost and prune only; train nothing"),
    OWN(STRATEGY, "grid (default: every candidate, or the space's sample), random (budget\n"
                  "candidates drawn uniformly), evolution (NSGA-II proposals, budget\n"
                  "candidates in all), bo (a model of top-1 against the known costs;\n"
                  "proposals by expected hypervolume gain) or auto (grid, bo or evolution,\n"
                  "chosen from the space's size and the budget, said in the output);\n"
                  "overrides the space's search.strategy, whose budget it takes\n"
                  "(docs/space-format.md, \"Search\")"),
    OWNB(WORKERS, "worker processes this command starts (default %D)", SWEEP(workers)),
    OWNB(THREADS, "engine threads per worker (default %D; 2 workers x 1 thread use two\n"
                  "cores best, docs/sweep-dir.md)", SWEEP(threads)),
    OWN(BUDGET, "B or Be: epochs per candidate (the schedule's length; default: the\n"
                "space's train.epochs); Nh or Nm: stop this command after N hours or\n"
                "minutes (the candidates resume from their checkpoints next time)"),
    OWNB(EARLY_STOP, "%D (default): train every candidate fully; sh: successive halving, each\n"
                     "rung decided once all have reached it (bit-for-bit reproducible); asha:\n"
                     "asynchronous successive halving, a candidate promoted as soon as it is in\n"
                     "the top 1/eta of those at its rung so far (no idle workers; the promotions\n"
                     "depend on the order results arrive in, so only a 1-worker sweep repeats)",
         SWEEP(plan.halving)),
    OWNB(ETA, "halving: the top 1/N of each rung go on (default %D)", SWEEP(plan.eta)),
    OWNB(MIN_EPOCHS, "halving: rungs at R, R*eta, R*eta^2, ... epochs (default %D)", SWEEP(plan.min_epochs)),
    OWNB(RANK, "halving: %D (default: Pareto rank on top-1 and model size, so\n"
               "small models are not culled for being small) or top1", SWEEP(plan.rank)),
    OWN(CONV, "conv strategy: auto (timed once per candidate in fp32; default) or a fixed one"),
    OWN(PRECISION, "conv and fc arithmetic: fp32 (default) or bf16 (mixed: bf16 products,\n"
                   "float32 sums; on the CPU AVX512-BF16, --conv then stays auto); with --gpus\n"
                   "also tf32 (tensor cores) or fp16 (with loss scaling); all but fp32 change\n"
                   "results"),
    OWNB(LEASE_SECONDS, "a lease's time to live (default %D; renewed every S/10 seconds)", SWEEP(lease_s)),
    OWNB(CKPT_EVERY, "CPU workers also checkpoint within an epoch: every N steps, or\n"
                     "Ns / Nm (default %D; 0: only at epochs' ends); a killed worker's\n"
                     "successor resumes there", .def = CKPT_EVERY_DEFAULT), /* shown; the library sets it */
    OWNB(MAX_CRASHES, "a candidate whose workers in this command die N times in a row without\n"
                      "progress is marked failed (default %D) until the next dse sweep retries\n"
                      "it; a worker of an earlier command found dead costs nothing, but 2N\n"
                      "deaths in a row of any commands fail it too (one that kills its process)",
         SWEEP(max_crashes)),
    OWNB(COMMAND_ID, "count the crashes of every dse sweep given this ID (letters, digits,\n"
                     ". _ -; up to " DSE_TRAIN_LOG_STR(DSE_SWEEP_COMMAND_ID_MAX) ") as one command's (default: each its own; the tasks of\n"
                     "a --slurm array get slurm-<its job id>)", SWEEP(command_id)),
    OWN(PROGRESS_EVERY, "a worker's progress line within an epoch every S seconds (default "
                        DSE_TRAIN_LOG_EVERY_S_STR ";\n0: epoch lines only)"),
    OWNB(DATA_ROOT, "where datasets are looked up (default " DSE_DATA_ROOT ")", SWEEP(data_root)),
    OWN(RANKS_PER_CAND, "under mpirun -np P: the ranks are one\n"
                        "worker that trains each candidate data-parallel (docs/training.md)"),
    HEADING("\nOn GPUs (docs/sweep-dir.md, \"Sweeps on shared GPUs\"):\n"),
    OWN(GPUS, "train on these CUDA devices instead of the CPU: comma-separated indices as\n"
              "this process sees them (CUDA_VISIBLE_DEVICES renumbers them from 0), or\n"
              "all. A worker claims a candidate only when the analyzer's training-memory\n"
              "estimate, plus 10% and 768 MiB, fits in its GPU's free memory (other\n"
              "users' processes included); otherwise it waits"),
    OWN(PER_GPU, "workers per GPU, threads of one process so that their kernels overlap:\n"
                 "a number, or auto (default: as many as fit, at most 8, at most the CPU\n"
                 "cores per GPU)"),
    OWNB(MAX_OOM, "a candidate that runs out of GPU memory is re-queued with a note and asks\n"
                  "for more next time; after N times in a row it is marked failed (default %D)", SWEEP(max_oom)),
    OWNB(ALGOS, "cuDNN's algorithms: %D (default: deterministic ones only) or any (also\n"
                "those that add in a varying order; faster)", SWEEP(plan.nondeterministic)),
    HEADING("\nOn a Slurm cluster (docs/cluster.md):\n"),
    OWN(SLURM, "prepare DIR, write DIR/slurm/sweep.sbatch (a job array whose every task\n"
               "runs this command's worker, the options above passed on) and submit it\n"
               "with sbatch; the job id is recorded in DIR/slurm/jobs for dse status"),
    OWNB(ARRAY, "tasks in the array, each one worker command (default %D)", .def = "2"),
    OWN(GPUS_PER_TASK, "GPUs of each task (--gres=gpu:K); its worker trains on them all\n"
                       "(--gpus all) unless --gpus says otherwise, --per-gpu as above"),
    OWN(SBATCH, "further sbatch options, written as one #SBATCH line of the script\n"
                "(e.g. \"-p gpu -t 4:00:00\")"),
    OWN(DRY_RUN, "write and print the script; submit nothing"),
    OWN(CANCEL, "with DIR: scancel the jobs recorded in DIR/slurm/jobs"),
};

static const char tail_sweep[] =
    "\n"
    "The options that change results (--budget epochs, --early-stop, --eta, --min-epochs, --rank,\n"
    "--conv, --precision, --algos) are fixed by the sweep's first worker in DIR/plan.json; later\n"
    "ones must agree. Which GPU, how many workers and threads do not change them beyond float\n"
    "rounding.\n";

static const struct dse_opt_line lines_status[] = {
    OWN(JSON, "one line, a JSON object: state, counts by status, workers, epochs, eta_seconds"),
    OWN(WATCH, "report again every S seconds until the sweep has finished (JSON Lines with --json)"),
};

static const struct dse_opt_line lines_report[] = {
    FORMAT("md csv tex json", "md (default), csv, tex or json"),
    OWN(PLOT, "also draw accuracy (or FLOPs) against model size"),
    OWN(PLOT_FLOPS, "also draw accuracy (or model size) against forward FLOPs, with the frontier\n"
                    "on accuracy and FLOPs (MACs = FLOPs / 2)"),
    OWN(CURVES, "also draw each trained candidate's test top-1 after every epoch"),
    OWN(SIZE, "the size the frontier is on: float (default; params x 4 bytes) or compressed\n"
              "(the .dsez files of a space's compress section; docs/report.md)"),
};

/* --max-pixels, the same in every command that decodes image files (issue #31). */
#define MAX_PIXELS_LINE                                                                                      \
    OWN(MAX_PIXELS, "an image's pixel budget, checked from its header before decoding (default\n"            \
                    STR(DSE_IMAGE_PIXELS_DEFAULT) ", PIL's bomb warning; at most 32768 x 32768)")

/* --threads of the commands that run one model (train, eval, bench, profile) unless told */
#define ENGINE_THREADS "2"

#define TRAIN(f) DSE_OPT_BIND(struct dse_train_opts, f)
static const struct dse_opt_line lines_train[] = {
    OWN(DATA, "a dataset name: " DSE_DATA_NAMES_LIST "an IDX or CIFAR\n"
              "directory, an image pack (dse data pack), or an image folder: DIR/train/<class>/\n"
              "*.jpg|png and DIR/val/ (or test/), packed on first use into the pack cache"),
    OWN(INPUT, "fit the network's input (conv1's channels, the input size) to the data"),
    OWN(CLASSES, "fit the classifier (the last conv or fc) to K classes"),
    OWNB(AUG, "image packs and folders: %D (default: random-resized-crop + flip above 64\n"
              "pixels, else 4-pixel pad-and-crop + flip), rrc, crop, flip or none", TRAIN(aug)),
    OWNB(LOADER_THREADS, "image packs and folders: decoding threads (default: one per core)", TRAIN(loader_workers)),
    OWN(PACK_CACHE, "where folders are packed (default $DSE_PACK_CACHE, else ~/.cache/dse/packs)"),
    MAX_PIXELS_LINE,
    RECIPE(OWN, epochs, NULL),
    RECIPE(RIGHT, batch, NULL),
    RECIPE(OWN, lr, NULL),
    RECIPE(RIGHT, policy, ""),
    OWNB(THREADS, "default %D", .def = ENGINE_THREADS, TRAIN(threads)),
    RECIPE(RIGHT, seed, NULL),
    RECIPE(OWN, limit_train, NULL),
    IN_TEXT(LIMIT_TEST),
    RECIPE(OWN, init, NULL),
    OWNB(CHECKPOINT_DIR, "write DIR/epoch-<k>.ckpt after each epoch (compressed, CRC-checked)", TRAIN(checkpoint_dir)),
    OWNB(CKPT_EVERY, "also checkpoint within an epoch, DIR/epoch-<k>.part.ckpt: every N steps,\n"
                     "or Ns / Nm seconds / minutes (default %D; 0: only at epochs' ends); CPU only",
         .def = CKPT_EVERY_DEFAULT),
    OWNB(RESUME, "continue from a checkpoint (bit-identical to an uninterrupted run: on the CPU;\n"
                 "on a GPU with --conv-cache FILE and deterministic algorithms)", TRAIN(resume)),
    OWN(PROGRESS_EVERY, "when standard error is not a terminal (a log, a pipe): a progress line\n"
                        "every S seconds within an epoch (default " DSE_TRAIN_LOG_EVERY_S_STR "; 0: epoch lines only)"),
    OWN(CONV, "conv strategy: auto (time each once per shape; default) or a fixed one"),
    OWN(CONV_CACHE, "where auto's choices are kept, so that every run on this machine and thread\n"
                    "count makes the same ones and repeats bit for bit (default this machine's,\n"
                    "shared with sweeps: $XDG_CACHE_HOME/dse or ~/.cache/dse/\n"
                    "conv-v5-<CPU>-<BLAS kernels>-t<threads>.txt; none: time every run);\n"
                    "on a GPU: a file pinning cuDNN's engine and algorithm choices, so that runs\n"
                    "and resumes on this GPU model and cuDNN repeat bit for bit (default none:\n"
                    "cuDNN's find chooses anew in every run)"),
    OWN(DEVICE, "cpu (default), cuda (= cuda:0) or cuda:N: train on that GPU (docs/gpu.md);\n"
                "--conv is a CPU option (on a GPU cuDNN chooses)"),
    OWN(PRECISION, "arithmetic on a GPU: fp32 (default), tf32 (conv and fc on tensor cores,\n"
                   "inputs rounded to a 10-bit mantissa), or mixed precision: convs in fp16\n"
                   "(dynamic loss scaling) or bf16, the rest fp32; on the CPU fp32 (default) or\n"
                   "bf16 (conv and fc in bf16 with fp32 sums, on CPUs with AVX512-BF16)"),
    OWN(ALGOS, "cuDNN's algorithms on a GPU: det (default: deterministic ones only) or any\n"
               "(also those that add in a varying order; about 1.5x faster in FP32)"),
    RECIPE(OWN, clip_norm, NULL),
    OWNB(REDUCE, "under mpirun -np P (data-parallel, docs/training.md): how the ranks' weight\n"
                 "gradients are summed: %D (default: a parameter server adds them in rank order;\n"
                 "P ranks of --threads 1 repeat one process of --threads P bit for bit), tree\n"
                 "(a binomial reduction tree) or allreduce (MPI_Allreduce)", TRAIN(reduce)),
    OWN(JSON, "print a final JSON object: status, epochs, top1, top5, loss, img_per_s, seconds"),
};

/* bench and profile: where the model on synthetic data runs, and how it is fitted */
#define SYNTHETIC_MODEL_LINES                                                                 \
    OWN(DEVICE, "cpu (default), cuda (= cuda:0) or cuda:N (docs/gpu.md)"),                    \
    OWN(PRECISION, "fp32 (default); on a GPU tf32, or fp16 / bf16 convs (mixed precision);\n" \
                   "on the CPU bf16 (AVX512-BF16; AMX tiles where the CPU has them)"),         \
    OWN(ALGOS, "on a GPU: cuDNN's deterministic algorithms only (det, default) or any"),      \
    OWN(INPUT, "fit the network's input; --classes K: its classifier's outputs"),             \
    IN_TEXT(CLASSES)

#define BENCH(f) DSE_OPT_BIND(struct dse_bench_settings, f)
#define BENCH_BATCH_THREADS                                                  \
    OWNB(BATCH, "default %D", .def = "32", BENCH(batch)),                    \
    RIGHTB(THREADS, NULL, "CPU threads, default %D", .def = ENGINE_THREADS, BENCH(threads))

static const struct dse_opt_line lines_bench[] = {
    OWNB(MODE, "%D (default: forward, backward, SGD) or infer (forward)", BENCH(infer)),
    BENCH_BATCH_THREADS,
    OWNB(ITERS, "default %D", .def = "10", BENCH(iters)),
    OWN(CONV, "CPU conv strategy: auto (time each once per shape; default) or a fixed one"),
    OWNB(SLICES, "cut each batch into S slices instead of 16 (docs/training.md); S = T costs what\n"
                 "the engine cost before fixed slices (bench/slices.sh), and its bits depend on T", BENCH(slices)),
    SYNTHETIC_MODEL_LINES,
};

static const struct dse_opt_line lines_profile[] = {
    BENCH_BATCH_THREADS,
    OWNB(ITERS, "default %D", .def = "5", BENCH(iters)),
    SYNTHETIC_MODEL_LINES,
};

static const struct dse_opt_line lines_eval[] = {
    OWNA(CHECKPOINT, "F", "a checkpoint of NET (dse train --checkpoint-dir, or a sweep's)"),
    OWN(DATA, "default: the data the checkpoint was trained on, else fashion-mnist; an image\n"
              "folder is evaluated from its pack, as dse train used it"),
    OWN(PACK_CACHE, "where folders are packed (default $DSE_PACK_CACHE, else ~/.cache/dse/packs)"),
    MAX_PIXELS_LINE,
    OWNB(BATCH, "default %D", TRAIN(batch)),
    RIGHTB(THREADS, NULL, "default %D", .def = ENGINE_THREADS, TRAIN(threads)),
    OWNB(LIMIT_TEST, "evaluate the first N test images", TRAIN(limit_test)),
    OWN(INPUT, "fit NET otherwise than the checkpoint records (default: as it was trained)"),
    JOIN(CLASSES, NULL),
    OWN(PRECISION, "fp32 (default) or bf16: conv and fc in bf16 with fp32 sums (CPUs with\n"
                   "AVX512-BF16); bf16 evaluates in fp32 too and reports the difference"),
    OWN(JSON, "print {\"loss\", \"top1\", \"top5\", \"images\", \"per_class\": [...]} instead"),
};

static const struct dse_opt_line lines_predict[] = {
    OWNA(CHECKPOINT, "F", "a checkpoint of NET"),
    OWNB(TOP, "classes to print per image (default %D)", .def = "5"),
    MAX_PIXELS_LINE,
    OWN(INPUT, "fit NET otherwise than the checkpoint records (default: as it was trained)"),
    JOIN(CLASSES, NULL),
    OWN(PRECISION, "fp32 (default) or bf16: conv and fc in bf16 with fp32 sums (CPUs with\n"
                   "AVX512-BF16)"),
    OWN(JSON, "one JSON object per image: {\"image\", \"top\": [{\"class\", \"name\", \"p\"}]}"),
};

/* dse compress: engine/compress.def's rows, each its option, help, default and field */
#define COMPRESS_LINE_(f_, key_, kind_, def_, lo_, hi_, cli_, help_) \
    { .opt = DSE_OPT_##cli_, .help = help_, .def = #def_, DSE_OPT_BIND(struct dse_compress_opts, f_) },
static const struct dse_opt_line lines_compress[] = {
    OWNA(CHECKPOINT, "CKPT", "the trained checkpoint of NET to compress"),
    OWNA(OUT, "MODEL.dsez", "the compressed model (docs/dsez.md); its stages in MODEL.dsez.work"),
    OWN(DATA, "the data of the fine-tuning and evaluation (default: the checkpoint's)"),
    DSE_COMPRESS_SETTINGS(COMPRESS_LINE_)
    OWN(LAYER_DENSITY, "a layer's own density instead (conv, fc or deconv: fire2/squeeze1x1=0.5,...)"),
    RECIPE(OWN, lr, NULL),
    RECIPE(RIGHT, batch, NULL),
    OWNB(THREADS, "default %D", .def = ENGINE_THREADS, DSE_OPT_BIND(struct dse_compress_opts, train.threads)),
    RECIPE(RIGHT, seed, NULL),
    RECIPE(OWN, limit_train, NULL),
    IN_TEXT(LIMIT_TEST),
    OWN(PROGRESS_EVERY, "when standard error is not a terminal: a progress line every S seconds\n"
                        "within an epoch (default " DSE_TRAIN_LOG_EVERY_S_STR "; 0: epoch lines only)"),
};
#undef COMPRESS_LINE_

#define EXPORT(f) DSE_OPT_BIND(struct dse_export_req, f)
static const struct dse_opt_line lines_export[] = {
    OWNB(CHECKPOINT, "a checkpoint of NET (dse train --checkpoint-dir), or a compressed model (.dsez)",
         EXPORT(checkpoint)),
    OWNB(ID, "a candidate of SWEEPDIR (dse report lists the ids)", EXPORT(id)),
    OWNB(BEST, "the most accurate trained candidate of SWEEPDIR", EXPORT(best)),
    OWN(MAX_MB, "with --best: at most M megabytes of float32 parameters"),
    { .opt = DSE_OPT_FORMAT, .words = "onnx caffe ckpt", .help = "%D (default), caffe or ckpt (a float checkpoint)",
      EXPORT(format) },
    { .opt = DSE_OPT_OUT, .arg = "PATH", EXPORT(out),
      .help = "default <name>.onnx, <name>.prototxt and <name>.caffemodel, or <name>.ckpt\n"
              "(name: the candidate id or the network file's)" },
    OWN(INPUT, "fit NET otherwise than the checkpoint records (default: as it was trained)"),
    JOIN(CLASSES, NULL),
};

static const struct dse_opt_line lines_import[] = {
    OWNA(OUT, "FILE", "default: MODEL with .ckpt for .caffemodel or .onnx"),
    OWN(NET_OUT, "MODEL.onnx: where the network goes (default: --out's FILE with .cfg for .ckpt)"),
    OWN(MEAN, "the input normalization to record, x = (pixel / 255 - mean) / std per\n"
              "channel (what dse export printed); without them evaluation uses the data's own"),
    JOIN(STD, NULL),
    OWN(INPUT, "fit NET as it was fitted for training"),
    JOIN(CLASSES, NULL),
    OWN(CLASSES_FILE, "the class names to record, one a line, as many as NET's classifier has\n"
                      "outputs (predict, eval and export show them; without it they are empty)"),
};

#define PACK(f) DSE_OPT_BIND(struct dse_pack_opts, f)
static const struct dse_opt_line lines_data_pack[] = {
    OWNA(OUT, "FILE", "the pack to write (replaced atomically if it exists)"),
    OWNB(PACK_SIZE, "short side in pixels, 8 to 4096, or 0 to keep each image's size (default %D)", PACK(size)),
    FORMAT("jpeg raw", "jpeg (default above " STR(DSE_PACK_RAW_SIDE_MAX) " pixels: small files, decoded when read) or raw\n"
                       "(default at " STR(DSE_PACK_RAW_SIDE_MAX) " and below: no decoding when read)"),
    OWNB(QUALITY, "JPEG quality, 1 to 100 (default %D)", PACK(quality)),
    OWN(CHANNELS, "3 (default: RGB) or 1 (gray)"),
    OWNB(THREADS, "decoding threads (default: one per core)", PACK(threads)),
    OWNB(SKIP_BAD, "leave out images that do not decode, naming each, instead of stopping", PACK(skip_bad)),
    MAX_PIXELS_LINE,
};

static const struct dse_opt_line lines_data_info[] = {
    OWN(VERIFY, "packs: check every record's CRC-32 and decode it"),
};

#define DATA_BENCH(f) DSE_OPT_BIND(struct dse_data_bench_settings, f)
static const struct dse_opt_line lines_data_bench[] = {
    OWNB(CROP_SIZE, "output size (default %D)", .def = "227", DATA_BENCH(size)),
    RIGHTB(BATCH, NULL, "default %D", .def = "256", DATA_BENCH(batch)),
    OWNB(THREADS, "decoding threads (default: one per core)", DATA_BENCH(threads)),
    OWNB(SECONDS, "how long to measure, after 2 warm-up batches (default %D)", .def = "10", DATA_BENCH(seconds)),
    OWNB(AUG, "auto, %D (default: random-resized-crop + flip), crop, flip or none", .def = "rrc", DATA_BENCH(aug)),
    OWNB(SPLIT, "%D (default) or val", DATA_BENCH(split)),
    MAX_PIXELS_LINE,
};

#define SYNTH(f) DSE_OPT_BIND(struct dse_synth_opts, f)
static const struct dse_opt_line lines_data_synth[] = {
    OWNB(SYNTH_CLASSES, "default %D", SYNTH(classes)),
    RIGHTB(TRAIN_IMAGES, NULL, "per class, default %D", SYNTH(train_per_class)),
    OWNB(VAL_IMAGES, "per class, default %D", SYNTH(val_per_class)),
    RIGHTB(SIDES, "", "default %D", DSE_OPT_BIND_SPAN(struct dse_synth_opts, min_side, max_side)),
    OWNB(SEED, "default %D", SYNTH(seed)),
    OWNB(MIXED, "cycle through every decoder path (RGB/gray/CMYK JPEG, RGB/gray/RGBA/16-bit/palette\n"
               "PNG) instead of RGB JPEGs only", SYNTH(mixed)),
};

#define NET      "one network file"
#define SPACE    "a space file"
#define SWEEPDIR "a sweep directory"
#define LINES(l) .lines = l, .n_lines = DSE_ARRAY_LEN(l)
#define SETTINGS(T, fn) .settings = sizeof(T), .settings_default = fn

/* The commands' settings as their defaults leave them (--help's %D) */
static void train_default(void *o) { dse_train_opts_default(o); }
static void compress_default(void *o) { dse_compress_opts_default(o); }
static void sweep_default(void *o) { dse_sweep_opts_default(o); }
static void pack_default(void *o) { dse_pack_opts_default(o); }
static void synth_default(void *o) { dse_synth_opts_default(o); }
static void data_bench_default(void *o) { /* decoding threads: one per core */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    ((struct dse_data_bench_settings *)o)->threads = cpus > 0 ? (int)cpus : 1;
}

const struct dse_opt_cmd dse_opt_cmds[DSE_CMD_COUNT] = {
    [DSE_CMD_ANALYZE]  = { .name = "analyze", .min_pos = 1, .max_pos = 1, .pos_what = NET, .usage = usage_analyze,
                           LINES(lines_analyze), .col = 21 },
    [DSE_CMD_DIFF]     = { .name = "diff", .min_pos = 2, .max_pos = 2, .pos_what = "two files: BASE VARIANT",
                           .usage = usage_diff, LINES(lines_diff) },
    [DSE_CMD_COUNT_SPACE] = { .name = "count", .min_pos = 1, .max_pos = 1, .pos_what = SPACE, .usage = usage_count },
    [DSE_CMD_GENERATE] = { .name = "generate", .min_pos = 1, .max_pos = 1, .pos_what = SPACE,
                           .usage = usage_generate, LINES(lines_generate) },
    [DSE_CMD_SWEEP]    = { .name = "sweep", .min_pos = 1, .max_pos = 1, .pos_what = SPACE, .usage = usage_sweep,
                           LINES(lines_sweep), .tail = tail_sweep, .col = 21,
                           SETTINGS(struct dse_sweep_opts, sweep_default) },
    [DSE_CMD_STATUS]   = { .name = "status", .min_pos = 1, .max_pos = 1, .pos_what = SWEEPDIR,
                           .usage = usage_status, LINES(lines_status) },
    [DSE_CMD_REPORT]   = { .name = "report", .min_pos = 1, .max_pos = 8, .pos_what = SWEEPDIR,
                           .usage = usage_report, LINES(lines_report) },
    [DSE_CMD_TRAIN]    = { .name = "train", .min_pos = 1, .max_pos = 1, .pos_what = NET, .usage = usage_train,
                           LINES(lines_train), SETTINGS(struct dse_train_opts, train_default) },
    [DSE_CMD_BENCH]    = { .name = "bench", .min_pos = 1, .max_pos = 1, .pos_what = NET, .usage = usage_bench,
                           LINES(lines_bench), SETTINGS(struct dse_bench_settings, NULL) },
    [DSE_CMD_PROFILE]  = { .name = "profile", .min_pos = 1, .max_pos = 1, .pos_what = NET, .usage = usage_profile,
                           LINES(lines_profile), SETTINGS(struct dse_bench_settings, NULL) },
    [DSE_CMD_EVAL]     = { .name = "eval", .min_pos = 1, .max_pos = 1, .pos_what = NET, .usage = usage_eval,
                           LINES(lines_eval), SETTINGS(struct dse_train_opts, train_default) },
    [DSE_CMD_COMPRESS] = { .name = "compress", .min_pos = 1, .max_pos = 1, .pos_what = NET, .usage = usage_compress,
                           LINES(lines_compress), .col = 21, SETTINGS(struct dse_compress_opts, compress_default) },
    [DSE_CMD_PREDICT]  = { .name = "predict", .min_pos = 1, .max_pos = DSE_OPT_POS_ANY, .pos_what = NET,
                           .usage = usage_predict, LINES(lines_predict) },
    [DSE_CMD_EXPORT]   = { .name = "export", .min_pos = 1, .max_pos = 1,
                           .pos_what = "a network file or a sweep directory", .usage = usage_export,
                           LINES(lines_export), .col = 21, SETTINGS(struct dse_export_req, NULL) },
    [DSE_CMD_IMPORT]   = { .name = "import", .min_pos = 1, .max_pos = 2, .pos_what = "MODEL.onnx, or MODEL NET",
                           .usage = usage_import, LINES(lines_import), .col = 15 },
    [DSE_CMD_DATA_PACK]  = { .name = "data pack", .min_pos = 1, .max_pos = 1, .pos_what = "an image folder DIR",
                             .usage = usage_data_pack, LINES(lines_data_pack),
                             SETTINGS(struct dse_pack_opts, pack_default) },
    [DSE_CMD_DATA_INFO]  = { .name = "data info", .min_pos = 1, .max_pos = 1,
                             .pos_what = "a pack, an image folder or a dataset name", .usage = usage_data_info,
                             LINES(lines_data_info) },
    [DSE_CMD_DATA_BENCH] = { .name = "data bench", .min_pos = 1, .max_pos = 1,
                             .pos_what = "a pack, an image folder or a dataset name", .usage = usage_data_bench,
                             LINES(lines_data_bench), .col2 = 50, .w2 = 12,
                             SETTINGS(struct dse_data_bench_settings, data_bench_default) },
    [DSE_CMD_DATA_SYNTH] = { .name = "data synth", .min_pos = 1, .max_pos = 1, .pos_what = "an image folder DIR",
                             .usage = usage_data_synth, LINES(lines_data_synth), .col2 = 50, .w2 = 12,
                             SETTINGS(struct dse_synth_opts, synth_default) },
};

/* ---- the parser ------------------------------------------------------------------------ */

const struct dse_opt_line *dse_opts_line(const struct dse_opt_cmd *c, enum dse_opt o) {
    for (int i = 0; i < c->n_lines; i++)
        if (c->lines[i].place != DSE_OPT_PLACE_HEADING && c->lines[i].opt == o) return &c->lines[i];
    return NULL;
}

static const struct dse_opt_line *line_named(const struct dse_opt_cmd *c, const char *name) {
    for (int i = 0; i < c->n_lines; i++)
        if (c->lines[i].place != DSE_OPT_PLACE_HEADING && !strcmp(dse_opt_specs[c->lines[i].opt].name, name))
            return &c->lines[i];
    return NULL;
}

/* List l of option o (INTS or REALS): its values into iv or v (either may be NULL), at most
 * max; how many, or -1 if it is not a list of o's kind and range. Each value is read as
 * INT's and REAL's are (strtoll, strtod; a real finite and in range, not out of the double's
 * range), values separated by single commas. */
static int list_read(const struct dse_opt_spec *o, const char *l, long long *iv, double *v, int max) {
    int n = 0;
    for (;;) {
        char *end;
        errno = 0;
        if (o->kind == DSE_OPT_KIND_INTS) {
            char part[32];
            size_t len = strcspn(l, ",");
            if (len == 0 || len >= sizeof part) return -1;
            memcpy(part, l, len), part[len] = '\0';
            long long x = strtoll(part, &end, 10);
            if (errno || end == part || *end || x < o->min || x > o->max) return -1;
            if (n < max && iv) iv[n] = x;
            end = (char *)l + len;
        } else {
            double x = strtod(l, &end);
            if (end == l || errno || !(x >= o->lo && x <= o->hi)) return -1; /* not NaN, not inf */
            if (n < max && v) v[n] = x;
        }
        if (++n > max) return -1;
        if (*end == '\0') return n;
        if (*end != ',') return -1;
        l = end + 1;
    }
}

/* "MIN-MAX" of SPAN option o into *lo, *hi: 0, or -1 if it is not two base-10 integers (as
 * strtoll reads them) from o's min to max with MIN <= MAX. */
static int span_read(const struct dse_opt_spec *o, const char *v, long long *lo, long long *hi) {
    char *end;
    errno = 0;
    *lo = strtoll(v, &end, 10);
    if (errno || end == v || *end != '-') return -1;
    const char *h = end + 1;
    *hi = strtoll(h, &end, 10);
    if (errno || end == h || *end) return -1;
    return *lo >= o->min && *lo <= *hi && *hi <= o->max ? 0 : -1;
}

int dse_opts_list(const struct dse_opt_args *a, enum dse_opt o, long long *iv, double *v, int max) {
    const struct dse_opt_spec *s = &dse_opt_specs[o];
    DSE_ASSERT((s->kind == DSE_OPT_KIND_INTS || s->kind == DSE_OPT_KIND_REALS) && max >= list_count[o].max);
    if (!a->val[o] || (s->words && dse_word_index(s->words, a->val[o]) >= 0)) return 0;
    int n = list_read(s, a->val[o], iv, v, list_count[o].max);
    DSE_ASSERT(n >= list_count[o].min); /* dse_opts_parse took it */
    return n;
}

/* An INT, REAL, WORD, list or PATH value against its range: DSE_OK, or the usage error. */
static enum dse_status check_value(const struct dse_opt_line *l, const char *v, long long *num, double *real,
                                   struct dse_err *err) {
    const struct dse_opt_spec *o = &dse_opt_specs[l->opt];
    if (o->kind == DSE_OPT_KIND_INT) {
        char *end;
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (!errno && end != v && !*end && x >= o->min && x <= o->max) return *num = x, DSE_OK;
        if (o->max == INT64_MAX)
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s '%s' is not an integer >= %lld", o->name, v, o->min);
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s '%s' is not an integer from %lld to %lld", o->name, v,
                           o->min, o->max);
    }
    if (o->kind == DSE_OPT_KIND_REAL) {
        char *end;
        double x = strtod(v, &end);
        if (end != v && !*end && x >= o->lo && x <= o->hi) return *real = x, DSE_OK; /* not NaN, not inf */
        if (o->why) return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s '%s' %s", o->name, v, o->why);
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s '%s' is not a number from %g to %g", o->name, v, o->lo,
                           o->hi);
    }
    if (o->kind == DSE_OPT_KIND_WORD) {
        const char *words = l->words ? l->words : o->words;
        if (dse_word_index(words, v) >= 0) return DSE_OK;
        if (o->why && !l->words) return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s '%s' %s", o->name, v, o->why);
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s '%s' is not one of: %s", o->name, v, words);
    }
    if (o->kind == DSE_OPT_KIND_INTS || o->kind == DSE_OPT_KIND_REALS) {
        if (o->words && dse_word_index(o->words, v) >= 0) return DSE_OK;
        int n = list_read(o, v, NULL, NULL, list_count[l->opt].max);
        if (n >= list_count[l->opt].min) return DSE_OK;
        DSE_ASSERT(o->why); /* a list's refusal says what it should be */
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s '%s' %s", o->name, v, o->why);
    }
    if (o->kind == DSE_OPT_KIND_SPAN) {
        DSE_ASSERT(o->why);
        long long lo, hi;
        if (span_read(o, v, &lo, &hi)) return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s '%s' %s", o->name, v, o->why);
    }
    if (o->kind == DSE_OPT_KIND_PATH) {
        const char *arg = l->arg ? l->arg : o->arg;
        if (!v[0])
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s needs a %s name", o->name,
                               strstr(arg, "DIR") ? "directory" : "file");
        if (strlen(v) >= PATH_MAX)
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: a name of %zu bytes is longer than the system's %d",
                               o->name, strlen(v), PATH_MAX - 1);
    }
    return DSE_OK;
}

/* "unknown option 'ARG'", with the command's option nearest to its name KEY if one is close
 * (dse_word_suggest: "--epoch" -> "--epochs"). */
static enum dse_status unknown_option(const struct dse_opt_cmd *c, const char *arg, const char *key,
                                      struct dse_err *err) {
    char names[4096] = "--help", near[64];
    for (int i = 0; i < c->n_lines; i++) {
        size_t n = strlen(names);
        if (c->lines[i].place != DSE_OPT_PLACE_HEADING)
            snprintf(names + n, sizeof names - n, " %s", dse_opt_specs[c->lines[i].opt].name);
    }
    if (dse_word_suggest(names, key, near, (int)sizeof near))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "unknown option '%s' (did you mean '%s'?)", arg, near);
    return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "unknown option '%s'", arg);
}

enum dse_status dse_opts_parse(const struct dse_opt_cmd *c, int argc, char **argv, struct dse_opt_args *a,
                               struct dse_err *err) {
    int only_files = 0;
    memset(a, 0, sizeof *a);
    a->pos = (const char **)argv;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        char key[32];
        if (!only_files && !strcmp(arg, "--")) {
            only_files = 1;
            continue;
        }
        if (only_files || arg[0] != '-' || arg[1] == '\0') {
            if (a->n_pos >= c->max_pos)
                return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "unexpected argument '%s'", arg);
            /* to the end of the positionals so far, past the options read since (their values
             * are pointers to the strings, which do not move): a->pos needs no room of its own */
            memmove(argv + a->n_pos + 1, argv + a->n_pos, sizeof *argv * (size_t)(i - a->n_pos));
            argv[a->n_pos++] = (char *)arg;
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t klen = eq ? (size_t)(eq - arg) : strlen(arg);
        if (klen >= sizeof key) return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "unknown option '%s'", arg);
        memcpy(key, arg, klen);
        key[klen] = '\0';
        if (!strcmp(key, "-h")) strcpy(key, "--help");
        const struct dse_opt_line *l = strcmp(key, "--help") ? line_named(c, key) : NULL;
        if (!l && strcmp(key, "--help")) return unknown_option(c, arg, key, err);
        if (!l || dse_opt_specs[l->opt].kind == DSE_OPT_KIND_FLAG) {
            if (eq) return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "option '%s' takes no value", key);
            if (!l) return a->help = 1, DSE_OK;
            a->val[l->opt] = dse_opt_specs[l->opt].name;
            continue;
        }
        if (eq) a->val[l->opt] = eq + 1;
        else if (i + 1 < argc) a->val[l->opt] = argv[++i];
        else return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "option '%s' needs a value", key);
    }
    if (a->n_pos < c->min_pos) return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "expected %s", c->pos_what);
    for (int i = 0; i < c->n_lines; i++) {
        const struct dse_opt_line *l = &c->lines[i];
        enum dse_status st;
        if (l->place != DSE_OPT_PLACE_HEADING && a->val[l->opt] &&
            (st = check_value(l, a->val[l->opt], &a->num[l->opt], &a->real[l->opt], err)))
            return st;
    }
    return DSE_OK;
}

/* ---- binding values --------------------------------------------------------------------- */

const char *dse_opts_text(const struct dse_opt_cmd *c, const struct dse_opt_args *a, enum dse_opt o) {
    const struct dse_opt_line *l = dse_opts_line(c, o);
    DSE_ASSERT(l);
    return a->val[o] ? a->val[o] : l->def;
}

long long dse_opts_int(const struct dse_opt_cmd *c, const struct dse_opt_args *a, enum dse_opt o) {
    const struct dse_opt_line *l = dse_opts_line(c, o);
    DSE_ASSERT(l && dse_opt_specs[o].kind == DSE_OPT_KIND_INT);
    if (a->val[o]) return a->num[o];
    return l->def ? strtoll(l->def, NULL, 10) : 0;
}

/* Whether a field of `size` bytes can take a value of kind k (struct dse_opt_line). */
static int bound_size_ok(enum dse_opt_kind k, size_t size) {
    switch (k) {
    case DSE_OPT_KIND_REAL: return size == sizeof(double);
    case DSE_OPT_KIND_TEXT:
    case DSE_OPT_KIND_PATH: return size == sizeof(const char *);
    case DSE_OPT_KIND_INT:  return size == sizeof(int) || size == sizeof(int64_t);
    case DSE_OPT_KIND_SPAN: return size == 2 * sizeof(int);
    case DSE_OPT_KIND_INTS:
    case DSE_OPT_KIND_REALS: return 0; /* read with dse_opts_list */
    default: return size == sizeof(int);
    }
}

void dse_opts_bind(const struct dse_opt_cmd *c, const struct dse_opt_args *a, void *settings) {
    for (int i = 0; i < c->n_lines; i++) {
        const struct dse_opt_line *l = &c->lines[i];
        if (l->place == DSE_OPT_PLACE_HEADING || !l->size) continue;
        const struct dse_opt_spec *o = &dse_opt_specs[l->opt];
        const char *v = a->val[l->opt] ? a->val[l->opt] : l->def;
        char *to = (char *)settings + l->off;
        DSE_ASSERT(l->off + l->size <= c->settings && bound_size_ok(o->kind, l->size));
        DSE_ASSERT(o->kind != DSE_OPT_KIND_INT || l->size != sizeof(int) || (o->min >= INT_MIN && o->max <= INT_MAX));
        if (!v) continue; /* neither given nor a def: the settings' own default */
        int n = 0;
        double x = 0;
        long long lo, hi;
        switch (o->kind) {
        case DSE_OPT_KIND_FLAG: n = 1; break;
        case DSE_OPT_KIND_INT:
            if (l->size == sizeof(int64_t)) {
                int64_t q = (int64_t)strtoll(v, NULL, 10);
                memcpy(to, &q, sizeof q);
                continue;
            }
            n = (int)strtoll(v, NULL, 10);
            break;
        case DSE_OPT_KIND_SPAN: {
            int pair[2];
            DSE_ASSERT(!span_read(o, v, &lo, &hi)); /* dse_opts_parse took it (or the def is one) */
            pair[0] = (int)lo, pair[1] = (int)hi;
            memcpy(to, pair, sizeof pair);
            continue;
        }
        case DSE_OPT_KIND_WORD: n = dse_word_index(l->words ? l->words : o->words, v); break;
        case DSE_OPT_KIND_REAL: x = strtod(v, NULL); break;
        case DSE_OPT_KIND_TEXT:
        case DSE_OPT_KIND_PATH: memcpy(to, &v, sizeof v); continue;
        case DSE_OPT_KIND_INTS:
        case DSE_OPT_KIND_REALS: continue;
        }
        if (o->kind == DSE_OPT_KIND_REAL) memcpy(to, &x, sizeof x);
        else memcpy(to, &n, sizeof n);
    }
}

/* What %D in line l's help shows: its def, else its bound field's value in defaults (the
 * command's settings as settings_default leaves them); "" when neither. */
static const char *default_text(const struct dse_opt_line *l, const void *defaults, char *buf, size_t size) {
    const struct dse_opt_spec *o = &dse_opt_specs[l->opt];
    const char *from = (const char *)defaults + l->off;
    int n;
    double x;
    const char *t;
    if (l->def || !l->size || !defaults) return l->def ? l->def : "";
    int64_t q;
    int pair[2];
    switch (o->kind) {
    case DSE_OPT_KIND_REAL: memcpy(&x, from, sizeof x), snprintf(buf, size, "%g", x); break;
    case DSE_OPT_KIND_SPAN: memcpy(pair, from, sizeof pair), snprintf(buf, size, "%d-%d", pair[0], pair[1]); break;
    case DSE_OPT_KIND_INT:
        if (l->size == sizeof q) {
            memcpy(&q, from, sizeof q), snprintf(buf, size, "%lld", (long long)q);
            break;
        }
        memcpy(&n, from, sizeof n), snprintf(buf, size, "%d", n);
        break;
    case DSE_OPT_KIND_TEXT:
    case DSE_OPT_KIND_PATH: memcpy(&t, from, sizeof t), snprintf(buf, size, "%s", t ? t : ""); break;
    case DSE_OPT_KIND_WORD: {
        const char *w = l->words ? l->words : o->words;
        memcpy(&n, from, sizeof n);
        for (; n > 0 && *w; n--) w += strcspn(w, " ") + (w[strcspn(w, " ")] == ' ');
        snprintf(buf, size, "%.*s", (int)strcspn(w, " "), w);
        break;
    }
    default: memcpy(&n, from, sizeof n), snprintf(buf, size, "%d", n); break;
    }
    return buf;
}

/* ---- the --help text ------------------------------------------------------------------- */

/* "--name ARG" of line l, appended to buf. */
static void label_cat(char *buf, size_t size, const struct dse_opt_line *l) {
    const struct dse_opt_spec *o = &dse_opt_specs[l->opt];
    const char *arg = l->arg ? l->arg : o->arg;
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, "%s%s%s", o->name, arg[0] ? " " : "", arg);
}

/* Spaces from column `at` to column `to`; two if `at` is already there or past it. */
static int pad(FILE *f, int at, int to) {
    int n = at < to ? to - at : 2;
    fprintf(f, "%*s", n, "");
    return at + n;
}

/* c's usage prose to f, where %D{--name} is the default of c's option of that name (as %D
 * in that option's help). */
static void prose_put(FILE *f, const struct dse_opt_cmd *c, const char *text, const void *defaults) {
    for (const char *p = text; *p;) {
        const char *d = strstr(p, "%D{"), *close = d ? strchr(d, '}') : NULL;
        if (!close) {
            fputs(p, f);
            return;
        }
        char name[32], buf[64];
        int n = (int)(close - d - 3);
        DSE_ASSERT(n > 0 && n < (int)sizeof name);
        memcpy(name, d + 3, (size_t)n), name[n] = '\0';
        const struct dse_opt_line *l = line_named(c, name);
        DSE_ASSERT(l); /* a %D{...} names one of c's options */
        fprintf(f, "%.*s%s", (int)(d - p), p, default_text(l, defaults, buf, sizeof buf));
        p = close + 1;
    }
}

void dse_opts_usage(FILE *f, const struct dse_opt_cmd *c) {
    const int col = c->col ? c->col : 19, col2 = c->col2 ? c->col2 : 36, w2 = c->w2 ? c->w2 : 13;
    int at = -1; /* the column the open line ends at; -1: no line open */
    void *defaults = c->settings ? calloc(1, c->settings) : NULL; /* for %D (a failed calloc: "") */
    if (defaults && c->settings_default) c->settings_default(defaults);
    prose_put(f, c, c->usage, defaults);
    for (int i = 0; i < c->n_lines; i++) {
        const struct dse_opt_line *l = &c->lines[i];
        char label[160] = "";
        if (l->place == DSE_OPT_PLACE_HEADING) {
            if (at >= 0) fputc('\n', f);
            fputs(l->help, f);
            at = -1;
            continue;
        }
        if (l->place == DSE_OPT_PLACE_JOIN || l->place == DSE_OPT_PLACE_TEXT) continue; /* the line above's */
        label_cat(label, sizeof label, l);
        for (int j = i + 1; j < c->n_lines && c->lines[j].place == DSE_OPT_PLACE_JOIN; j++) {
            strcat(label, ", ");
            label_cat(label, sizeof label, &c->lines[j]);
        }
        if (l->place == DSE_OPT_PLACE_RIGHT && at >= 0) {
            at = pad(f, at, col2);
            at += fprintf(f, "%s", label);
            at = pad(f, at, at - (int)strlen(label) + w2);
        } else {
            if (at >= 0) fputc('\n', f);
            at = fprintf(f, "  %s", label);
            at = pad(f, at, col);
        }
        for (const char *h = l->help; *h; h++) { /* further lines of the help start at col */
            if (h[0] == '%' && h[1] == 'D') {
                char buf[64];
                at += fprintf(f, "%s", default_text(l, defaults, buf, sizeof buf)), h++;
                continue;
            }
            if (*h != '\n') {
                fputc(*h, f), at++;
                continue;
            }
            fprintf(f, "\n%*s", col, "");
            at = col;
        }
    }
    if (at >= 0) fputc('\n', f);
    if (c->tail) fputs(c->tail, f);
    free(defaults);
}
