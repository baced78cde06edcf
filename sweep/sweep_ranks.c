/* sweep_ranks.c: what a worker's training run is given (the engine's options, the conv
 * strategies timed once per candidate and kept in its checkpoint folder), and the ranks
 * of a --ranks-per-candidate group (issue #17) that train what rank 0's worker trains.
 * The workers as a whole: sweep/worker_impl.h. */
#include "sweep/worker_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "data/data.h"
#include "engine/slices.h"
#include "engine/train.h"

/* The conv strategies are chosen once per candidate, before its first epoch, and kept in
 * its checkpoint folder: every stretch of its training, by whichever worker, then runs
 * the same strategies, so a resumed run is the uninterrupted one bit for bit. A shape this
 * machine has chosen for before (its cache for the worker's threads, engine/conv_cache.c)
 * takes that choice, so the same candidate in another sweep here repeats its bits; only new
 * shapes are timed, and added to the machine's cache. (On a GPU the first stretch pins
 * cuDNN's choices there itself: dse_worker_train_stretch, engine/train.c.) */
static enum dse_status pretime_batch(const struct dse_net *net, const struct dse_train_opts *o, int batch,
                                     const char *path, struct dse_err *err);

enum dse_status dse_worker_pretime_conv(const struct dse_net *net, const struct dse_train_opts *o, const char *path,
                                        struct dse_err *err) {
    if (dse_worker_file_exists(path)) return DSE_OK;
    const int P = dse_dist_size(o->dist);
    enum dse_status st = DSE_OK;
    for (int r = 0; r < P && !st; r++) {
        int s0, s1, seen = 0;
        int64_t first, count, c2;
        dse_slice_rank(o->batch, r, P, &s0, &s1, &first, &count);
        for (int q = 0; q < r && !seen; q++) {
            dse_slice_rank(o->batch, q, P, &s0, &s1, &first, &c2);
            seen = c2 == count;
        }
        if (!seen) st = pretime_batch(net, o, (int)count, path, err);
    }
    return st;
}

/* This machine's conv cache could not be read or written: said, and the candidate's choices
 * are timed (and pinned in its own file) as without one. Returns 0. */
static int machine_cache_warn(const struct dse_err *e) {
    char msg[5000];
    fprintf(stderr, "dse sweep: warning: this machine's conv choice cache is not used: %s\n",
            dse_err_format(e, msg, (int)sizeof msg));
    return 0;
}

/* One batch size's choices, added to path's (engine/train.c's file format: a cache). */
static enum dse_status pretime_batch(const struct dse_net *net, const struct dse_train_opts *o, int batch,
                                     const char *path, struct dse_err *err) {
    struct dse_model_opts mo = { .batch = batch, .threads = o->threads, .seed = o->seed, .init = o->init,
                                 .init_std = o->init_std, .inference = 0 }; /* the CPU, FP32 */
    struct dse_model *m = NULL;
    enum dse_status st = dse_model_new(net, &mo, &m, err);
    if (st) return st;
    float *x = calloc((size_t)dse_tensor_count(&m->input), sizeof *x), loss;
    int *labels = calloc((size_t)o->batch, sizeof *labels);
    if (!x || !labels) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    m->cx.conv_force = DSE_ALGO_AUTO;
    char machine[4096];
    int cached = !dse_conv_cache_machine(o->threads, machine, (int)sizeof machine);
    struct dse_err merr = { 0 }; /* the machine's cache only saves timing: its errors fail no candidate */
    if (!st) st = dse_conv_cache_load(&m->cx, path, err); /* another batch size's, kept */
    if (!st && cached && dse_conv_cache_offer(&m->cx, machine, &merr)) cached = machine_cache_warn(&merr);
    dse_model_set_training(m, 1);
    if (!st) st = dse_model_forward(m, x, labels, &loss, err);
    if (!st) st = dse_model_backward(m, err);
    dse_model_set_training(m, 0);
    if (!st) st = dse_model_forward(m, x, labels, &loss, err);
    if (!st) st = dse_conv_cache_save(&m->cx, path, err);
    if (!st && cached && dse_conv_cache_merge(&m->cx, machine, &merr)) machine_cache_warn(&merr);
    free(x), free(labels);
    dse_model_free(m);
    return st;
}

void dse_worker_train_opts(const struct worker *w, struct dse_train_opts *o) {
    *o = w->s->train; /* the space's recipe (engine/train.def); the rest is this worker's */
    o->data = w->s->dataset; /* the space reader spells names as the engine does */
    o->data_root = w->o.data_root;
    o->epochs = w->plan.epochs;
    o->threads = w->o.threads;
    o->conv_algo = w->plan.conv;
    o->dist = w->o.dist; /* --ranks-per-candidate: NULL alone */
    o->ckpt_every_s = w->o.ckpt_every_s, o->ckpt_every_steps = w->o.ckpt_every_steps;
    o->progress_every_s = w->o.progress_every_s;
    o->dev.math = w->plan.precision; /* on the CPU fp32 or bf16 (sweep_train.c refuses the others there) */
    if (w->gpu >= 0) {
        o->dev.device.kind = DSE_DEVICE_CUDA;
        o->dev.device.index = w->gpu;
        o->dev.nondeterministic = w->plan.nondeterministic;
        o->dev.conv_pool = w->host ? w->host->pool : NULL;
        o->conv_algo = DSE_ALGO_AUTO; /* the plan's conv is the CPU's; cuDNN's find chooses here */
    }
}

/* ---- ranks per candidate (issue #17) ------------------------------------------------------- */

/* What rank 0 tells the other ranks before each training run: the candidate (its grid
 * index) and the options, their strings by value; 0 in `train` ends dse_sweep_follow. */
struct follow_job {
    int32_t               train;
    uint64_t              index;
    struct dse_train_opts o;    /* its pointers are rank 0's: dse_sweep_follow sets its own */
    char                  data[4096], data_root[4096], resume[4200], conv[4200];
};

enum dse_status dse_worker_follow_send(struct dse_dist *d, uint64_t index, const struct dse_train_opts *o,
                                       struct dse_err *err) {
    struct follow_job *j = calloc(1, sizeof *j);
    if (!j) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    j->train = o != NULL, j->index = index;
    if (o) {
        j->o = *o;
        dse_strlcpy(j->data, o->data, (int)sizeof j->data);
        if (o->data_root) dse_strlcpy(j->data_root, o->data_root, (int)sizeof j->data_root);
        if (o->resume) dse_strlcpy(j->resume, o->resume, (int)sizeof j->resume);
        if (o->conv_cache) dse_strlcpy(j->conv, o->conv_cache, (int)sizeof j->conv);
    }
    enum dse_status st = dse_dist_bcast(d, j, sizeof *j, 0, err);
    free(j);
    return st;
}

enum dse_status dse_sweep_follow(const struct dse_space *s, const struct dse_sweep_opts *o, struct dse_err *err) {
    struct follow_job *j = malloc(sizeof *j);
    struct dse_train_result *res = malloc(sizeof *res);
    enum dse_status st = j && res ? DSE_OK : dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    while (!st && !(st = dse_dist_bcast(o->dist, j, sizeof *j, 0, err)) && j->train) {
        struct dse_mp mp;
        struct dse_net net;
        dse_net_init(&net, s->name, 1, 1, 1);
        dse_space_candidate(s, j->index, &mp);
        struct dse_train_opts t = j->o;
        t.data = j->data, t.data_root = j->data_root[0] ? j->data_root : NULL;
        t.resume = j->resume[0] ? j->resume : NULL, t.conv_cache = j->conv[0] ? j->conv : NULL;
        t.norm = NULL, t.checkpoint_dir = NULL; /* rank 0 writes */
        t.progress = NULL, t.cancel = NULL, t.note = NULL, t.progress_arg = NULL;
        t.dist = o->dist;
        t.dev.conv_pool = NULL; /* rank 0's process's */
        if ((st = dse_space_build(s, &mp, &net, err))) dse_dist_abort(o->dist, 1); /* rank 0 built it */
        st = dse_train_run(&net, &t, res, err);
        dse_net_deinit(&net);
        if (st && !res->dist_broken) st = DSE_OK; /* every rank's (the setup's): rank 0 records it */
    }
    free(j);
    free(res);
    return st;
}

/* "cpu" or "cuda:N": where this worker trains. */
