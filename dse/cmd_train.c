/* cmd_train.c: dse train, bench, profile, eval and predict, and analyze --workers (docs/cli.md).
 * Moved from dse/main.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "dse/cmd.h"
#include "dse/dataprep.h"
#include "dse/ratecache.h"
#include "dse/trainlog.h"
#include "engine/train.h"

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
    if (d->device.kind == DSE_DEVICE_CPU && d->math != DSE_CUDA_MATH_FP32 && d->math != DSE_CUDA_MATH_BF16)
        return bad_usage(cmd, "--precision %s is for --device cuda; the CPU computes in fp32 or bf16", precision);
    d->nondeterministic = algos && !strcmp(algos, "any");
    if (d->device.kind == DSE_DEVICE_CPU && d->nondeterministic)
        return bad_usage(cmd, "--algos %s is for --device cuda; the CPU's kernels are deterministic", algos);
    return -1;
}

/* --precision of a command that runs on the CPU only (eval, predict): fp32 or bf16. -1: go on. */
static int opt_cpu_precision(const char *cmd, const char *precision, struct dse_model_device_opts *d) {
    struct dse_err err = { 0 };
    memset(d, 0, sizeof *d);
    if (!precision) return -1;
    if (dse_cuda_math_parse(precision, &d->math, &err) ||
        (d->math != DSE_CUDA_MATH_FP32 && d->math != DSE_CUDA_MATH_BF16))
        return bad_usage(cmd, "--precision '%s': this command runs on the CPU, in fp32 (default) or bf16", precision);
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

/* The recipe's options given (engine/train.def's rows with one, in its order) into o; an
 * INT's or REAL's range was checked by its option row (dse/options.h), a word's by its words. */
static void recipe_set(const struct dse_opt_args *a, struct dse_train_opts *o) {
#define SET_INT(field, opt, words)  o->field = (int)a->num[opt];
#define SET_U64(field, opt, words)  o->field = (uint64_t)a->num[opt];
#define SET_ENUM(field, opt, words) o->field = dse_word_index(words, recipe_opt(a, opt));
#define SET_REAL(field, opt, words) o->field = (float)a->real[opt];
#define X(field, key, kind, def, lo, hi, cli, words, help) \
    if (recipe_opt(a, DSE_OPT_##cli)) { SET_##kind(field, DSE_OPT_##cli, words) }
    DSE_TRAIN_RECIPE(X)
#undef X
#undef SET_INT
#undef SET_U64
#undef SET_ENUM
#undef SET_REAL
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

int cmd_train(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_train_opts o;
    struct dse_err err = { 0 };
    struct dse_net net;
    int rc;
    dse_train_opts_default(&o);
    dse_opts_bind(c, a, &o); /* --threads, --loader-threads, --aug, --reduce, --checkpoint-dir, --resume */
    if (OPT(DATA)) o.data = dse_data_name_find(OPT(DATA)) ? dse_data_name_find(OPT(DATA)) : OPT(DATA); /* one spelling */
    if ((rc = opt_conv(c->name, OPT(CONV), &o.conv_algo)) >= 0 ||
        (rc = opt_device(c->name, OPT(DEVICE), OPT(PRECISION), OPT(ALGOS), &o.dev)) >= 0 ||
        (rc = conv_in_bf16(c->name, OPT(CONV), &o.dev)) >= 0)
        return rc;
    const int on_gpu = o.dev.device.kind != DSE_DEVICE_CPU;
    if (on_gpu && OPT(CONV) && strcmp(OPT(CONV), "auto"))
        return bad_usage(c->name, "--conv chooses a CPU conv strategy; on --device %s cuDNN chooses (leave it "
                                  "out; --conv-cache FILE pins cuDNN's choices)", OPT(DEVICE));
    recipe_set(a, &o);
    if (OPT(CLIP_NORM) && a->real[DSE_OPT_CLIP_NORM] > 0 && o.clip_norm == 0) { /* a float's 0: no clipping */
        char fmt[160]; /* the row's words (no %) after the value, however long the value */
        snprintf(fmt, sizeof fmt, "--clip-norm '%%s' %s", dse_opt_specs[DSE_OPT_CLIP_NORM].why);
        return bad_usage(c->name, fmt, OPT(CLIP_NORM));
    }
    if (OPT(LR_POLICY) && o.policy == DSE_LR_STEP) o.step_epochs = o.epochs > 3 ? o.epochs / 3 : 1;
    if (OPT(CKPT_EVERY) && !OPT(CHECKPOINT_DIR))
        return bad_usage(c->name, "--checkpoint-every %s needs --checkpoint-dir DIR", OPT(CKPT_EVERY));
    if ((rc = opt_ckpt_every(c->name, OPT_DEF(CKPT_EVERY), &o.ckpt_every_s, &o.ckpt_every_steps)) >= 0) return rc;
    char cache[4096];
    if (OPT(CONV_CACHE) && strcmp(OPT(CONV_CACHE), "none")) {
        o.conv_cache = OPT(CONV_CACHE); /* on a GPU: cuDNN's choices, pinned (docs/gpu.md, "Determinism") */
    } else if (!OPT(CONV_CACHE) && !on_gpu && !dse_conv_cache_machine(o.threads, cache, (int)sizeof cache)) {
        o.conv_cache = cache; /* the default: this machine's (CPU, BLAS kernels, threads), like a compiler cache;
                                 none on a GPU (find every run) */
    }
    struct dse_input_shape in;
    if ((rc = opt_fit(c->name, a, &in)) >= 0) return rc;
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

/* The options bench and profile share: their bound lines (--batch, --threads, --iters; bench's
 * --mode, --slices) into s, --device/--precision/--algos and --input/--classes. -1, or the
 * usage error's code. */
static int timing_opts(const struct dse_opt_cmd *c, const struct dse_opt_args *a, struct dse_bench_settings *s,
                       struct dse_model_device_opts *dev, struct dse_input_shape *in) {
    int rc;
    memset(s, 0, sizeof *s);
    dse_opts_bind(c, a, s);
    if ((rc = opt_device(c->name, OPT(DEVICE), OPT(PRECISION), OPT(ALGOS), dev)) >= 0 ||
        (rc = opt_fit(c->name, a, in)) >= 0)
        return rc;
    return -1;
}

int cmd_bench(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_bench_settings s;
    int rc;
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    float *x = NULL;
    int *labels = NULL;
    struct dse_model_device_opts dev;
    struct dse_input_shape in;
    if ((rc = timing_opts(c, a, &s, &dev, &in)) >= 0) return rc;
    const int batch = s.batch, threads = s.threads, iters = s.iters, train = !s.infer;
    int conv = DSE_ALGO_AUTO;
    if ((rc = opt_conv(c->name, OPT(CONV), &conv)) >= 0 || (rc = conv_in_bf16(c->name, OPT(CONV), &dev)) >= 0)
        return rc;
    if ((rc = synthetic_model(c->name, a->pos[0], &in, batch, threads, !train, &dev, &m, &x, &labels)) >= 0) goto done;
    m->cx.conv_force = conv, m->cx.slices = s.slices; /* the CPU's; a device ignores them */
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
               "median_ms=%.2f min_ms=%.2f img_per_s=%.1f measured_bytes=%zu estimate_bytes=%lld blas_core=%s%s%s\n",
               m->net.name[0] ? m->net.name : "net", a->pos[0], train ? "train" : "infer", batch, threads,
               dse_cpu_conv_algo_str(conv), m->cx.slices ? m->cx.slices : DSE_SLICES,
               dse_device_str(&dev.device, name, (int)sizeof name), dse_cuda_math_str(dev.math),
               dev.nondeterministic ? "any" : "det", iters,
               1e3 * t[iters / 2], 1e3 * t[0], batch / t[iters / 2], dse_model_bytes(m),
               (long long)(train ? tot.mem_train_bytes : tot.mem_infer_bytes), dse_blas_core(),
               m->cx.bf16 ? " bf16_kernels=" : "", m->cx.bf16 ? dse_cpu_bf16_kernels() : "");
    }
    free(t);
done:
    dse_model_free(m);
    free(x);
    free(labels);
    return rc < 0 ? 1 : rc;
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
int analyze_comm(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    struct dse_input_shape in;
    struct dse_comm_opts o = { .batch = OPT_INT(BATCH, DSE_COMM_BATCH_DEFAULT) };
    const long long workers = OPT(COMM_WORKERS) ? a->num[DSE_OPT_COMM_WORKERS] : 0;
    int rc;
    if (!workers) return bad_usage(c->name, "--bandwidth, --latency and --img-per-s go with --workers P%s", "");
    if (!OPT(BANDWIDTH)) return bad_usage(c->name, "--workers needs --bandwidth GB/s (10 Gb/s Ethernet: 1.25)%s", "");
    if (FLAG(EXPAND)) return bad_usage(c->name, "--expand is for the cost report, not --workers%s", "");
    o.bandwidth = a->real[DSE_OPT_BANDWIDTH]; /* read and range-checked by dse_opts_parse; 0 when not given */
    o.latency_s = a->real[DSE_OPT_LATENCY], o.img_per_s = a->real[DSE_OPT_IMG_PER_S];
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

int cmd_profile(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_bench_settings s;
    int rc;
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    float *x = NULL, loss;
    int *labels = NULL;
    struct dse_model_device_opts dev;
    struct dse_input_shape in;
    if ((rc = timing_opts(c, a, &s, &dev, &in)) >= 0) return rc;
    const int batch = s.batch, threads = s.threads, iters = s.iters;
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
        if (dev.device.kind == DSE_DEVICE_CPU)
            snprintf(where, sizeof where, "%d threads %s", threads, dse_cuda_math_str(dev.math));
        else snprintf(where, sizeof where, "%s %s", dse_device_str(&dev.device, name, (int)sizeof name),
                      dse_cuda_math_str(dev.math));
        printf("# dse profile %s: batch %d, %s, median of %d iterations; GFLOP/s counts 2 per "
               "multiply-add, backward = 2x forward FLOPs\n", a->pos[0], batch, where, iters);
        char fp32[600];
        if (dse_model_bf16_fp32(m, fp32, sizeof fp32)) printf("# %s\n", fp32);
        const int acts16 = dse_model_bf16_acts(m);
        if (acts16)
            printf("# bf16: %d of %d layers' outputs stored in bf16 between ops, %d of their gradients; products on "
                   "%s (docs/training.md)\n", acts16, n, dse_model_bf16_grads(m), dse_cpu_bf16_kernels());
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

/* ---- dse eval, dse predict (issue #14 item 3) ----------------------------------------- */

/* A JSON string of s (names come from folders: dse_json_write_str escapes and mends them). */
static void json_str(FILE *f, const char *s) { dse_json_write_str(f, s, strlen(s)); }

int cmd_eval(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_train_opts o;
    struct dse_err err = { 0 };
    struct dse_net net;
    struct dse_input_shape in;
    struct dse_ckpt_info info;
    struct dse_eval_result r;
    int rc;
    dse_train_opts_default(&o);
    if (!OPT(CHECKPOINT)) return bad_usage(c->name, "--checkpoint FILE is required%s", "");
    dse_opts_bind(c, a, &o); /* --batch, --threads, --limit-test */
    if ((rc = opt_fit(c->name, a, &in)) >= 0 || (rc = opt_cpu_precision(c->name, OPT(PRECISION), &o.dev)) >= 0)
        return rc;
    const int bf16 = o.dev.math == DSE_CUDA_MATH_BF16;
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
    /* in bf16, float32 on the same images too: the difference is what a user wants to know */
    struct dse_eval_result r32 = { 0 };
    struct dse_train_opts o32 = o;
    o32.dev.math = DSE_CUDA_MATH_FP32;
    if (dse_eval_run(&net, &o, OPT(CHECKPOINT), &r, &err) ||
        (bf16 && dse_eval_run(&net, &o32, OPT(CHECKPOINT), &r32, &err))) {
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
            printf("]");
            if (bf16)
                printf(", \"precision\": \"bf16\", \"fp32\": {\"loss\": %.6f, \"top1\": %.6f, \"top5\": %.6f}, "
                       "\"top1_minus_fp32\": %.6f", r32.loss, r32.top1, r32.top5, r.top1 - r32.top1);
            printf("}\n");
        } else {
            printf("%s on %s: %d test images, loss %.4f, top-1 %.2f%%, top-5 %.2f%%%s\n", OPT(CHECKPOINT), data_shown,
                   r.images, r.loss, 100 * r.top1, 100 * r.top5, bf16 ? " (bf16)" : "");
            if (bf16)
                printf("fp32 on the same images: loss %.4f, top-1 %.2f%%, top-5 %.2f%%; bf16 minus fp32: top-1 %+.2f "
                       "points, top-5 %+.2f\n", r32.loss, 100 * r32.top1, 100 * r32.top5, 100 * (r.top1 - r32.top1),
                       100 * (r.top5 - r32.top5));
            printf("%5s  %-24s %8s %8s %8s\n", "class", "name", "images", "top-1", "top-1 %");
            for (int k = 0; k < r.classes; k++)
                if (r.class_n[k])
                    printf("%5d  %-24.24s %8d %8d %8.2f\n", k,
                           k < info.classes && info.class_names ? info.class_names[k] : "", r.class_n[k],
                           r.class_hits[k], 100.0 * r.class_hits[k] / r.class_n[k]);
        }
    }
    dse_eval_result_free(&r);
    dse_eval_result_free(&r32);
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

/* predict's images: the positionals after NET, a folder among them as its image files
 * (dse_imgfolder_files: sorted by name, not its subfolders) in its place. *out is malloc'd
 * strings in a malloc'd array (dse_imgfolder_files_free); a folder without images is refused. */
static enum dse_status predict_images(const struct dse_opt_args *a, char ***out, int *n, struct dse_err *err) {
    char **v = NULL;
    enum dse_status st = DSE_OK;
    *n = 0;
    for (int i = 1; i < a->n_pos && !st; i++) {
        struct stat sb;
        char **files = NULL;
        int nf = 1;
        if (stat(a->pos[i], &sb) == 0 && S_ISDIR(sb.st_mode)) {
            if ((st = dse_imgfolder_files(a->pos[i], &files, &nf, err))) break;
            if (!nf) {
                dse_imgfolder_files_free(files, 0); /* the empty list */
                st = dse_err_set(err, DSE_ERR_CONFIG, a->pos[i], 0, "a folder with no image files (.jpg, .jpeg, "
                                 ".png, .bmp, .ppm, .pgm, .tif, .tiff, .webp; its subfolders are not read)");
                break;
            }
        }
        char **nv = realloc(v, sizeof *v * (size_t)(*n + nf));
        if (nv) v = nv;
        if (!nv || (!files && !(v[*n] = strdup(a->pos[i])))) {
            dse_imgfolder_files_free(files, nf);
            st = dse_err_set(err, DSE_ERR_NOMEM, a->pos[i], 0, "out of memory");
            break;
        }
        if (files) memcpy(v + *n, files, sizeof *files * (size_t)nf), free(files);
        *n += nf;
    }
    if (st) dse_imgfolder_files_free(v, *n), v = NULL, *n = 0;
    *out = v;
    return st;
}

/* dse predict of the images img[0 .. n-1] (predict_images). */
static int predict_run(const struct dse_opt_cmd *c, const struct dse_opt_args *a, char *const *img, int n) {
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
    int rc, next, label = 0;
    int64_t it;
    int top = (int)OPT_NUM(TOP);
    for (int i = 0; i < n; i++) { /* before any work: a bad entry is not "cannot open" */
        char spec[256];
        enum dse_data_split split;
        int index;
        if (data_entry(img[i], spec, sizeof spec, &split, &index) < 0) {
            dse_err_set(&err, DSE_ERR_CONFIG, img[i], 0, "no such image file, and as DATA:SPLIT:N its split "
                        "'%s' is not train or test", spec);
            return fail(&err);
        }
    }
    struct dse_model_device_opts dev;
    if ((rc = opt_fit(c->name, a, &in)) >= 0 || (rc = opt_cpu_precision(c->name, OPT(PRECISION), &dev)) >= 0)
        return rc;
    if (dse_fs_check_input(OPT(CHECKPOINT), &err)) return fail(&err); /* a FIFO would block the open */
    for (int i = -1; i < n; i++)
        if (dse_fs_check_input(i < 0 ? a->pos[0] : img[i], &err)) return fail(&err);
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
    if (dse_model_new_on(&net, &mo, &dev, &m, &err) || dse_checkpoint_load(m, OPT(CHECKPOINT), &next, &it, &err)) {
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
    for (int i = 0; i < n && !rc; i++) {
        char *data = NULL, spec[256];
        size_t len;
        float loss;
        enum dse_data_split split;
        int index;
        const int entry = data_entry(img[i], spec, sizeof spec, &split, &index);
        if ((entry ? data_image(img[i], spec, split, index, &files, &ds, ds_key, sizeof ds_key, &im, &err)
                   : (dse_fs_read(img[i], &data, &len, &err) ||
                      dse_image_decode((const uint8_t *)data, len, net.in_c, 0, OPT_INT(MAX_PIXELS, 0), &im, &err))) ||
            dse_data_image_eval(&im, net.in_h, net.in_w, info.eval_center, info.norm.c == net.in_c ? &info.norm : NULL,
                                &tmp, &work, x, &err) ||
            dse_model_forward(m, x, &label, &loss, &err)) {
            dse_err_name_file(&err, img[i]);
            rc = fail(&err);
        }
        free(data);
        if (rc) break;
        const float *p = dse_model_probs(m);
        for (int j = 0; j < k; j++) rk[j] = (struct ranked){ .k = j, .p = p[j] };
        qsort(rk, (size_t)k, sizeof *rk, cmp_ranked);
        if (FLAG(JSON)) {
            printf("{\"image\": ");
            json_str(stdout, img[i]);
            printf(", \"top\": [");
            for (int j = 0; j < top; j++) {
                printf("%s{\"class\": %d, \"name\": ", j ? ", " : "", rk[j].k);
                json_str(stdout, rk[j].k < info.classes && info.class_names ? info.class_names[rk[j].k] : "");
                printf(", \"p\": %.6f}", rk[j].p);
            }
            printf("]}\n");
        } else {
            printf("%s\n", img[i]);
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

int cmd_predict(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    char         **img;
    int            n;
    if (!OPT(CHECKPOINT)) return bad_usage(c->name, "--checkpoint FILE is required%s", "");
    if (a->n_pos < 2) return bad_usage(c->name, "expected one network file and at least one image%s", "");
    if (predict_images(a, &img, &n, &err)) return fail(&err);
    const int rc = predict_run(c, a, img, n);
    dse_imgfolder_files_free(img, n);
    return rc;
}

/* ---- dse compress (issue #35) ------------------------------------------------------------- */

/* --layer-density NAME=D,...: into *l (malloc'd, *n of them). -1, or the exit code after saying
 * why: an item that is not NAME=D (an empty one too: "a=0.5,,b=0.5"), a density outside
 * compress.def's range. Names are checked against the network by dse_compress_run. */
static int opt_layer_density(const char *cmd, const char *v, struct dse_compress_layer **l, int *n) {
#define LO_(field, key, kind, def, lo, hi, cli, help) lo
#define HI_(field, key, kind, def, lo, hi, cli, help) hi
    const double lo = DSE_COMPRESS_density(LO_), hi = DSE_COMPRESS_density(HI_);
#undef LO_
#undef HI_
    char *copy = strdup(v), *rest = copy;
    int items = 1;
    for (const char *p = v; *p; p++) items += *p == ',';
    *n = 0, *l = calloc((size_t)items, sizeof **l);
    if (!copy || !*l) return free(copy), fprintf(stderr, "dse %s: out of memory\n", cmd), 1;
    for (char *item = rest, *next; item; item = next) {
        if ((next = strchr(item, ','))) *next++ = '\0';
        char *eq = strrchr(item, '='), *end = NULL, why[300] = "";
        double d = eq ? strtod(eq + 1, &end) : 0;
        if (!eq || eq == item || end == eq + 1 || *end || (size_t)(eq - item) >= sizeof (*l)->layer)
            snprintf(why, sizeof why, "--layer-density: '%.80s%s' is not NAME=D (a layer's name of at most %d bytes, "
                     "a density in (%g, %g])", item, strlen(item) > 80 ? "..." : "", (int)sizeof (*l)->layer - 1, lo, hi);
        else if (!(d > lo && d <= hi))
            snprintf(why, sizeof why, "--layer-density: '%.80s': the density is not a number in (%g, %g]", item, lo, hi);
        if (why[0]) {
            free(copy), free(*l), *l = NULL;
            return bad_usage(cmd, "%s", why);
        }
        memcpy((*l)[*n].layer, item, (size_t)(eq - item));
        (*l)[*n].layer[eq - item] = '\0';
        (*l)[(*n)++].density = d;
    }
    free(copy);
    return -1;
}

static void compress_stage(void *arg, const char *name) {
    (void)arg;
    fprintf(stderr, "compress: %s\n", name);
}

static int compress_run(const struct dse_opt_cmd *c, const struct dse_opt_args *a, struct dse_compress_opts *o);

int cmd_compress(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_compress_opts o;
    int rc;
    dse_compress_opts_default(&o);
    dse_opts_bind(c, a, &o); /* --density, --bits, --finetune (engine/compress.def's rows), --threads */
    recipe_set(a, &o.train);
    if (!OPT(CHECKPOINT)) return bad_usage(c->name, "needs --checkpoint CKPT (%s)", "the trained model to compress");
    if (!OPT(OUT)) return bad_usage(c->name, "needs --out MODEL.dsez (%s)", "the compressed model");
    struct dse_compress_layer *layers = NULL;
    if (OPT(LAYER_DENSITY) && (rc = opt_layer_density(c->name, OPT(LAYER_DENSITY), &layers, &o.n_layers)) >= 0)
        return rc;
    o.layers = layers;
    rc = compress_run(c, a, &o);
    free(layers);
    return rc;
}

/* dse compress once its options are read into *o. */
static int compress_run(const struct dse_opt_cmd *c, const struct dse_opt_args *a, struct dse_compress_opts *o) {
    struct dse_err err = { 0 };
    struct dse_net net;
    int rc;
    struct dse_ckpt_info info;
    if (dse_checkpoint_info(OPT(CHECKPOINT), &info, &err)) return fail(&err);
    char data[sizeof info.data];
    dse_strlcpy(data, info.data, (int)sizeof data);
    free(info.class_names);
    if (OPT(DATA)) o->train.data = dse_data_name_find(OPT(DATA)) ? dse_data_name_find(OPT(DATA)) : OPT(DATA);
    else if (data[0]) o->train.data = data;
    char cache[4096]; /* this machine's conv choices, as dse train's: the same bits every run */
    if (!dse_conv_cache_machine(o->train.threads, cache, (int)sizeof cache)) o->train.conv_cache = cache;
    double every_s = DSE_TRAIN_LOG_EVERY_S;
    if (OPT(PROGRESS_EVERY) && (rc = opt_progress_every(c->name, OPT(PROGRESS_EVERY), &every_s)) >= 0) return rc;
    struct dse_train_log tlog;
    dse_train_log_init(&tlog, stderr, isatty(2), every_s);
    o->train.progress = dse_train_log_progress, o->train.progress_arg = &tlog, o->train.note = dse_train_log_note;
    if (!tlog.tty) o->train.progress_every_s = every_s;
    o->stage = compress_stage;
    struct dse_input_shape in;
    if ((rc = opt_fit(c->name, a, &in)) >= 0) return rc;
    if (dse_netfile_load(a->pos[0], &in, &net, &err)) return fail(&err);
    struct dse_compress_result r;
    if (dse_compress_run(&net, OPT(CHECKPOINT), o, OPT(OUT), &r, &err)) return dse_net_deinit(&net), fail_net(&err, a->pos[0]);
    printf("%s: %lld bytes, float32 %lld bytes: %.*fx %s; density %.3f, %d-bit codebooks; %.1f s\n", OPT(OUT),
           (long long)r.file_bytes, (long long)r.float_bytes, r.ratio >= 10 ? 1 : 2, r.ratio >= 1 ? r.ratio
           : 1 / r.ratio, r.ratio >= 1 ? "smaller" : "larger (the file's header and text block outweigh so small a "
           "model)", r.density, o->bits, r.seconds);
    printf("top-1: float %.2f%%, pruned %.2f%%, compressed %.2f%%\n", 100 * r.top1_float, 100 * r.top1_pruned,
           100 * r.top1_compressed);
    printf("next: dse analyze --compressed %s\n      dse eval %s --checkpoint %s\n", OPT(OUT), a->pos[0], OPT(OUT));
    dse_net_deinit(&net);
    return 0;
}
