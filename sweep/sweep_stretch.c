/* sweep_stretch.c: a worker trains one stretch of a candidate under its lease (docs/sweep-dir.md,
 * "Leases"): from its newest checkpoint to the next rung or the end, a heartbeat thread
 * renewing the lease, each epoch's results written into the candidate file while the
 * lease is still held, checkpoints pruned, and how the stretch ended recorded as an attempt.
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
#include "engine/compress.h"
#include "engine/slices.h"
#include "engine/train.h"

/* ---- heartbeat ------------------------------------------------------------------------- */

/* A thread renews the lease every ttl / 10 seconds while the engine trains, however long
 * an iteration takes. If the lease is lost (another worker took it after this process
 * stalled) or cannot be renewed for most of a ttl, `lost` is set and the training stops. */
struct heartbeat {
    pthread_t        th;
    pthread_mutex_t  mu;
    pthread_cond_t   cv;
    int              stop;      /* under mu */
    atomic_int       lost;
    const char      *dir;
    struct dse_lease lease;     /* under mu */
    double           interval;
    int              epoch, iter, iters; /* under mu: the training's progress, put in the lease */
    double           epoch_s;
};

static void *heartbeat_main(void *arg) {
    struct heartbeat *h = arg;
    double last_ok = dse_lease_mono();
    pthread_mutex_lock(&h->mu);
    while (!h->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double t = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + h->interval;
        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&h->cv, &h->mu, &ts);
        if (h->stop) break;
        struct dse_lease l = h->lease;
        l.epoch = h->epoch, l.iter = h->iter, l.iters = h->iters, l.epoch_s = h->epoch_s;
        pthread_mutex_unlock(&h->mu);
        int held = 1;
        enum dse_status st = dse_lease_renew(h->dir, &l, &held, NULL);
        pthread_mutex_lock(&h->mu);
        if (!st && held) {
            h->lease = l;
            last_ok = dse_lease_mono();
        } else if ((!st && !held) || dse_lease_mono() - last_ok > 0.8 * l.ttl_s) {
            atomic_store(&h->lost, 1);
            break;
        }
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

static int heartbeat_start(struct heartbeat *h, const char *dir, const struct dse_lease *l, const char *device) {
    memset(h, 0, sizeof *h);
    h->dir = dir;
    h->lease = *l;
    dse_strlcpy(h->lease.device, device, sizeof h->lease.device);
    h->interval = l->ttl_s / 10;
    atomic_init(&h->lost, 0);
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    if (pthread_create(&h->th, NULL, heartbeat_main, h) != 0) {
        pthread_cond_destroy(&h->cv);
        pthread_mutex_destroy(&h->mu);
        return -1;
    }
    return 0;
}

/* Stops the thread; *l gets the lease as last renewed. */
static void heartbeat_stop(struct heartbeat *h, struct dse_lease *l) {
    pthread_mutex_lock(&h->mu);
    h->stop = 1;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->th, NULL);
    *l = h->lease;
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
}

/* ---- training one stretch of a candidate ------------------------------------------------- */

/* Whether this worker may still write c's file under lease l: the lease is held, and
 * the file was not written under a newer lease (a fence against a holder that stalled
 * past its lease and woke up between the check and the write). */
static int still_mine(const struct worker *w, const struct cand *c, const struct dse_lease *l) {
    int held = 0;
    if (dse_lease_check(w->dir, l, &held, NULL) || !held) return 0;
    struct dse_rec now;
    dse_rec_init(&now);
    int ok = !dse_rec_read(w->dir, c->id, &now, NULL) && now.lease_gen <= l->gen;
    dse_rec_deinit(&now);
    return ok;
}

struct seg {
    struct worker    *w;
    struct cand      *c;
    struct heartbeat *hb;
    const struct dse_lease *claim; /* the main thread's copy: id, gen and token never change */
    int               target;
    double            t_mark;    /* monotonic: end of the previous epoch */
    double            t_said;    /* monotonic: the worker's last line about this candidate */
    int               lost;      /* the lease was found taken */
    enum dse_status   wst;       /* a write that failed in the callback */
    struct dse_err    werr;
};

static int seg_cancel(void *arg) {
    struct seg *sg = arg;
    if (sg->lost || sg->wst || atomic_load(&sg->hb->lost) || dse_worker_host_broken(sg->w->host)) return 1;
    return sg->w->deadline > 0 && dse_lease_mono() > sg->w->deadline;
}

/* Results of an epoch: into the record and, if the lease is still held, into the file.
 * (The epoch's checkpoint is written just after this; if the worker dies in between, the
 * next one resumes from the previous checkpoint and computes the same epoch again.) */
static void seg_progress(void *arg, const struct dse_train_progress *p) {
    struct seg *sg = arg;
    struct worker *w = sg->w;
    struct dse_rec *r = &sg->c->rec;
    dse_worker_gpu_unreserve(w); /* an iteration ran: its memory is allocated, and cudaMemGetInfo shows it */
    if (!p->done) { /* for dse status: where it is and how fast, in the next renewal */
 pthread_mutex_lock(&sg->hb->mu);
        sg->hb->epoch = p->epoch, sg->hb->iter = p->iter, sg->hb->iters = p->iters;
        sg->hb->epoch_s = p->img_per_s > 0 ? (double)p->iters * w->s->train.batch / p->img_per_s : 0;
        pthread_mutex_unlock(&sg->hb->mu);
        const double now = dse_lease_mono(); /* a long epoch in a log still shows it moves */
        if (w->o.progress_every_s > 0 && now - sg->t_said >= w->o.progress_every_s) {
            dse_worker_say(w, "%s epoch %d/%d: iter %d/%d, train loss %.4f, %.0f img/s", sg->c->id, p->epoch + 1,
         w->plan.epochs, p->iter, p->iters, p->loss, p->img_per_s);
            sg->t_said = now;
        }
        return;
    }
    if (sg->wst) return;
    double now = dse_lease_mono();
    sg->t_said = now;
    /* the engine's own epoch time: the stretch's setup (data, model) before its first epoch is
     * no epoch's, and counted in made the first ETA many times too long (issue #31) */
    struct dse_epoch_result ep = p->ep;
    if (!(ep.seconds > 0)) ep.seconds = now - sg->t_mark;
    struct dse_rec_attempt *a = &r->att[r->n_att - 1];
    a->seconds += now - sg->t_mark;
    sg->t_mark = now;
    if ((sg->wst = dse_rec_set_epoch(r, p->epoch, &ep, &sg->werr))) return;
    a->to_epoch = p->epoch + 1;
    if (atomic_load(&sg->hb->lost) || !still_mine(w, sg->c, sg->claim)) {
        sg->lost = 1;
        return;
    }
    r->lease_gen = sg->claim->gen;
    if ((sg->wst = dse_rec_write(w->dir, w->s, r, &sg->werr))) return;
    w->tally.epochs_done++; /* the tally is from before this stretch: count its epochs */
    w->tally.seconds += ep.seconds;
    w->tally.timed++;
    w->tally.flop_epochs_timed += (double)r->flops;
    w->tally.flop_epochs_left = fmax(0, w->tally.flop_epochs_left - (double)r->flops);
    char prog[200];
    dse_worker_progress_text(w, !sg->c->live, prog, sizeof prog); /* asha refreshes after its claim: then counted */
    dse_worker_say(w, "%s epoch %d/%d: train loss %.4f, test loss %.4f, top-1 %.2f%%, top-5 %.2f%%, %.0f img/s | %s",
 sg->c->id, p->epoch + 1, w->plan.epochs, p->loss, p->ep.test_loss, 100 * p->ep.top1, 100 * p->ep.top5,
 p->img_per_s, prog);
    int said = 0; /* once per candidate: the record keeps every epoch's count */
    for (int k = 0; k < p->epoch && k < r->n_epochs; k++) said |= r->ep[k].unpredicted > 0;
    if (p->ep.unpredicted && !said)
        dse_worker_say(w, "%s epoch %d: warning: %d test class%s never predicted (a dead classifier unit?); said once per "
     "candidate", sg->c->id, p->epoch + 1, p->ep.unpredicted, p->ep.unpredicted == 1 ? "" : "es");
}

/* A GPU stretch's word about its pinned cuDNN choices (engine/train.c: loaded, written, or
 * another GPU's set aside), in the worker's log. */
static void seg_note(void *arg, enum dse_train_note kind, const char *text) {
    (void)kind; /* the text says it */
    struct seg *sg = arg;
    dse_worker_say(sg->w, "%s: %s", sg->c->id, text);
}

static void ckpt_path(const struct worker *w, const char *id, int epoch, char *buf, int size) {
    snprintf(buf, (size_t)size, "%s/checkpoints/%s/epoch-%d.ckpt", w->dir, id, epoch);
}

int64_t dse_worker_saved_iter(const struct worker *w, const struct cand *c) {
    char part[4200];
    struct dse_ckpt_info info;
    snprintf(part, sizeof part, "%s/checkpoints/%s/epoch-%d.part.ckpt", w->dir, c->id, c->rec.n_epochs + 1);
    if (!dse_worker_file_exists(part) || dse_checkpoint_info(part, &info, NULL)) return 0;
    free(info.class_names);
    return info.iter;
}

void dse_worker_prune_checkpoints(const struct worker *w, const char *id, int keep) {
    char path[4096];
    int newest = 0, fd;
    struct stat sb;
    snprintf(path, sizeof path, "checkpoints/%s", id);
    if (dse_fs_dir_in(w->dir, path, 0, &fd, NULL)) return;
    int fd2 = dup(fd);
    DIR *d = fd2 >= 0 ? fdopendir(fd2) : NULL;
    if (!d && fd2 >= 0) close(fd2);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (de->d_name[0] != '.' || n < 5 || strcmp(de->d_name + n - 4, ".tmp") != 0) continue;
        unlinkat(fd, de->d_name, 0);
    }
    if (d) closedir(d);
    for (int e = keep; e >= 1 && !newest; e--) {
        snprintf(path, sizeof path, "epoch-%d.ckpt", e);
        if (fstatat(fd, path, &sb, AT_SYMLINK_NOFOLLOW) == 0) newest = e;
    }
    for (int e = newest - 1; e >= 1; e--) {
        snprintf(path, sizeof path, "epoch-%d.ckpt", e);
        unlinkat(fd, path, 0);
    }
    close(fd);
}

static const char *worker_device(const struct worker *w, char *buf, int size) {
    if (w->gpu >= 0) snprintf(buf, (size_t)size, "cuda:%d", w->gpu);
    else snprintf(buf, (size_t)size, "cpu");
    return buf;
}

void dse_worker_let_go(struct worker *w, struct dse_lease *l) {
    struct dse_err e = { 0 };
    if (dse_lease_release(w->dir, l, &e)) dse_worker_say(w, "could not release the lease of %s: %s", l->id, e.msg);
}

/* Write c's record under lease l, if it is still this worker's (then *written = 1). */
static enum dse_status commit_w(struct worker *w, struct cand *c, struct dse_lease *l, int *written,
                                struct dse_err *err) {
    *written = 0;
    if (!still_mine(w, c, l)) {
        dse_worker_say(w, "%s: lost its lease to another worker; leaving it to that one", c->id);
        return DSE_OK;
    }
    c->rec.lease_gen = l->gen;
    enum dse_status st = dse_rec_write(w->dir, w->s, &c->rec, err);
    *written = !st;
    return st;
}

enum dse_status dse_worker_commit(struct worker *w, struct cand *c, struct dse_lease *l, struct dse_err *err) {
    int written;
    return commit_w(w, c, l, &written, err);
}

static enum dse_status push_attempt(struct worker *w, struct dse_rec *r, const struct dse_lease *l, int from,
                                    struct dse_err *err) {
    char dev[16];
    if (!dse_rec_push_attempt(r, w->name, l->gen, w->o.threads, worker_device(w, dev, sizeof dev),
                              dse_cuda_math_str(w->plan.precision), from))
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    return DSE_OK;
}

enum dse_status dse_worker_plan_supported(const struct dse_space *s, enum dse_sweep_halving halving, int epochs,
                                          const char *where, const char *who, struct dse_err *err) {
    const char *colon = where[0] ? ": " : "";
    if (halving == DSE_SWEEP_HALVING_SH && s->replicates > 1)
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "%s%s%s (--early-stop sh) with replicates = %d is not "
                           "supported yet: its rungs would rank single replicates, not their mean; --early-stop asha "
                           "ranks an architecture by its replicates' mean", where, colon, dse_sweep_halving_what(halving),
                           s->replicates);
    if (halving && s->search.strategy == DSE_SEARCH_EVOLUTION)
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "%s%s%s (--early-stop %s) with strategy \"evolution\" "
                           "is not supported yet: evolution ranks results of the full schedule only; strategy bo takes "
                           "asha's rung results into its model (--strategy bo --early-stop asha)", where, colon,
                           dse_sweep_halving_what(halving), dse_sweep_halving_str(halving));
    if (halving == DSE_SWEEP_HALVING_SH && dse_strategy_logged(s->search.strategy))
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "%s%s%s (--early-stop sh) with strategy \"%s\" is not "
                           "supported: sh decides a rung once every candidate has reached it, and a search adds "
                           "candidates one at a time; --early-stop asha promotes as results arrive", where, colon,
                           dse_sweep_halving_what(halving), dse_strategy_str(s->search.strategy));
    if (s->search.budget_epochs && epochs != s->train.epochs)
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, s->search.line, "search.budget_epochs counts train.epochs "
                           "= %d per candidate, and %s trains %d: set train.epochs in the space instead",
                           s->train.epochs, who, epochs);
    return DSE_OK;
}

int dse_worker_wants_measured(const struct dse_space *s) {
    for (int i = 0; dse_strategy_logged(s->search.strategy) && i < s->search.n_obj; i++)
        if (dse_evo_cost_measured((enum dse_evo_cost)s->search.obj[i])) return 1;
    return 0;
}

/* objective.def's latency_ms: net's inference at batch 1 on the CPU with `threads` engine
 * threads, the median of 20 forward passes after 3 that warm up (and time the conv
 * strategies), in ms: what dse bench NET --mode infer --batch 1 measures. */
#define LATENCY_RUNS 20
static enum dse_status measure_latency(const struct dse_net *net, int threads, enum dse_cuda_math math, double *ms,
                                       struct dse_err *err) {
    struct dse_model_opts mo = { .batch = 1, .threads = threads, .seed = 1, .init = DSE_INIT_MSRA, .init_std = 0.01f,
                                 .inference = 1 };
    const struct dse_model_device_opts dev = { .math = math }; /* the CPU */
    struct dse_model *m = NULL;
    enum dse_status st = dse_model_new_on(net, &mo, &dev, &m, err);
    if (st) return st;
    float *x = calloc((size_t)dse_tensor_count(&m->input), sizeof *x), loss;
    int label = 0;
    double t[LATENCY_RUNS];
    if (!x) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    dse_model_set_training(m, 0);
    for (int i = -3; !st && i < LATENCY_RUNS; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        st = dse_model_forward(m, x, &label, &loss, err);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (i >= 0) t[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) * 1e-6;
    }
    if (!st) {
        for (int i = 1; i < LATENCY_RUNS; i++) /* insertion sort: 20 values */
            for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
                double v = t[j];
                t[j] = t[j - 1], t[j - 1] = v;
            }
        *ms = t[LATENCY_RUNS / 2];
    }
    free(x);
    dse_model_free(m);
    return st;
}

/* The worker's line on a stretch it starts: which epochs, up to which rung, on which device
 * or ranks, and whether it resumes from a checkpoint (within the epoch or at its end). */
static void stretch_announce(struct worker *w, const struct cand *c, const struct dse_train_opts *o, int from,
                             int target, int within) {
    char span[64], rung[48] = "";
    if (from + 1 == target) snprintf(span, sizeof span, "epoch %d", target);
    else snprintf(span, sizeof span, "epochs %d-%d", from + 1, target);
    for (int k = 0; k < w->plan.n_rungs; k++)
        if (w->plan.halving && w->plan.rungs[k] == target) snprintf(rung, sizeof rung, ", up to rung %d", k);
    char where[80] = "", dev[16];
    if (w->gpu >= 0)
        snprintf(where, sizeof where, " on %s (%.0f MiB free, given %.0f)", worker_device(w, dev, sizeof dev),
                 w->claim_free_mib, w->claim_need_mib);
    else if (dse_dist_size(o->dist) > 1)
        snprintf(where, sizeof where, " on %d ranks x %d thread%s", dse_dist_size(o->dist), o->threads,
                 o->threads == 1 ? "" : "s");
    dse_worker_say(w, "%s: training %s of %d%s%s%s", c->id, span, w->plan.epochs, rung, where,
                   within ? " (resumed from its checkpoint within the epoch)" : from ? " (resumed from its checkpoint)" : "");
}

/* Train net to the stretch's end under the options o, from the checkpoint of epoch *from
 * (or the partial one, part, within the next epoch, if *within), into res. A checkpoint
 * that does not load is renamed .bad and the one before it tried (*from, *within and the
 * record follow); resume is the buffer for the checkpoint's path. */
static enum dse_status stretch_run(struct worker *w, struct cand *c, struct dse_net *net, struct dse_train_opts *o,
                                   struct dse_train_result *res, int *from, char *resume, int resume_size,
                                   const char *part, int *within, struct dse_err *err) {
    struct dse_rec *r = &c->rec;
    enum dse_status st;
    for (;;) {
        if (*from > 0) ckpt_path(w, c->id, *from, resume, resume_size);
        o->resume = *within ? part : *from > 0 ? resume : NULL;
        if (dse_dist_size(o->dist) > 1 && dse_worker_follow_send(o->dist, c->index, o, err)) /* the other ranks train it */
            dse_dist_abort(o->dist, 1);                                          /* with this worker */
        st = dse_train_run(net, o, res, err);
        /* a data-parallel run that failed on this rank alone may have left the others
         * waiting in a sum: end the group; the lease lapses and the candidate is taken
         * over. A failure of the setup is every rank's and goes on as in one process. */
        if (st && res->dist_broken) {
            dse_worker_say(w, "%s: %s; ending the %d ranks", c->id, err->msg, dse_dist_size(w->o.dist));
            dse_dist_abort(w->o.dist, 1);
        }
        /* a checkpoint that does not load (cut short by a full disk, say): the one before it
         * (not for want of memory: the checkpoint is fine). The reader names the file at
         * fault; a message that merely mentions a path under checkpoints/ (a cuDNN choice
         * file there) is not the checkpoint's. */
        if (st && st != DSE_ERR_NOMEM && *within && !strcmp(err->file, part)) {
            char bad[4300]; /* the partial checkpoint does not load: from the epoch's start */
            dse_worker_say(w, "%s: %s; resuming from the epoch's start instead", c->id, err->msg);
            snprintf(bad, sizeof bad, "%s.bad", part);
            rename(part, bad);
            *within = 0;
            continue;
        }
        if (st && st != DSE_ERR_NOMEM && *from > 0 && !strcmp(err->file, resume)) {
            char bad[4300];
            dse_worker_say(w, "%s: %s; going back one checkpoint", c->id, err->msg);
            snprintf(bad, sizeof bad, "%s.bad", resume);
            rename(resume, bad);
            (*from)--;
            while (*from > 0 && (ckpt_path(w, c->id, *from, resume, resume_size), !dse_worker_file_exists(resume))) (*from)--;
            r->n_epochs = *from < r->n_epochs ? *from : r->n_epochs;
            r->att[r->n_att - 1].from_epoch = r->att[r->n_att - 1].to_epoch = *from;
            continue;
        }
        break;
    }
    return st;
}

/* A finished run's result into the record: the engine's own epoch times and speeds, and
 * where it diverged, if it did. */
static void stretch_result(struct worker *w, struct cand *c, const struct dse_train_result *res) {
    struct dse_rec *r = &c->rec;
    struct dse_rec_attempt *a = &r->att[r->n_att - 1];
    for (int k = 0; k < res->n_epochs; k++) {
        int e = res->epochs_done - res->n_epochs + k;
        if (e >= 0 && e < r->n_epochs) r->ep[e].seconds = res->epochs[k].seconds, r->ep[e].img_per_s = res->epochs[k].img_per_s;
    }
    if (!strcmp(res->status, "diverged")) {
        r->status = DSE_REC_DIVERGED;
        r->diverged_epoch = res->diverged_epoch;
        r->diverged_iter = res->diverged_iter;
        r->n_epochs = res->diverged_epoch - 1 < r->n_epochs ? res->diverged_epoch - 1 : r->n_epochs;
        dse_strlcpy(a->end, "diverged", sizeof a->end);
        dse_worker_say(w, "%s diverged in epoch %d at iteration %lld (NaN or infinite loss or weights)", c->id,
                       r->diverged_epoch, (long long)r->diverged_iter);
    }
}

/* A done candidate's latency, measured on net when the space's objectives want it, and
 * the lease renewed after (the heartbeat has stopped). */
static void stretch_latency(struct worker *w, struct cand *c, struct dse_lease *l, const struct dse_net *net,
                            int threads) {
    struct dse_rec *r = &c->rec;
    struct dse_err lerr = { 0 };
    char msg[600];
    int held = 0;
    /* not the candidate's fault: it stays done without a latency (its cost is then
     * unknown: never a parent), as the docs say */
    /* in the arithmetic the candidate trained in on the CPU (fp32 or bf16); a GPU sweep's in fp32 */
    if (measure_latency(net, threads, w->gpu < 0 ? w->plan.precision : DSE_CUDA_MATH_FP32, &r->latency_ms, &lerr))
        dse_worker_say(w, "%s: latency not measured: %s", c->id, dse_err_format(&lerr, msg, sizeof msg));
    /* the heartbeat has stopped: renew the lease the measurement ran under before the
     * commit checks it (a lost one makes the commit write nothing, as ever) */
    memset(&lerr, 0, sizeof lerr);
    if (dse_lease_renew(w->dir, l, &held, &lerr) || !held)
        dse_worker_say(w, "%s: the lease could not be renewed after measuring its latency", c->id);
}

/* Compression's fine-tuning stops, as training does (seg_cancel), when the lease is lost or
 * the command's time budget is spent. */
struct compress_watch {
    struct worker    *w;
    struct heartbeat *hb;
    int               budget; /* set when the budget stopped it */
};

static int compress_cancel(void *arg) {
    struct compress_watch *cw = arg;
    if (atomic_load(&cw->hb->lost)) return 1;
    return cw->budget = cw->w->deadline > 0 && dse_lease_mono() > cw->w->deadline;
}

/* A done candidate of a space with a compress section compressed (issue #35): its last
 * checkpoint by Deep Compression into DIR/checkpoints/<id>/model.dsez, the stages' own
 * checkpoints in DIR/checkpoints/<id>/compress.work (a killed worker's successor resumes
 * there), under the heartbeat, with the worker's recipe, data and threads and the space's
 * compress settings (engine/compress.def's rows). Then the record's compressed keys. The
 * caller commits after: the record says done only once the .dsez is written, so a kill
 * between training and compression leaves it pending with every epoch, and the next claim
 * only compresses. A failure that is not the disk's or the data's leaves it done without a
 * .dsez (the report says so; the worker's log says why). */
static enum dse_status stretch_compress(struct worker *w, struct cand *c, struct dse_lease *l, const struct dse_net *net,
                                        const struct dse_train_opts *o, struct dse_err *err) {
    struct dse_rec *r = &c->rec;
    struct dse_compress_opts co;
    struct dse_compress_result res;
    struct heartbeat hb;
    char ckpt[4200], out[4200], work[4200], dev[16], msg[600];
    dse_compress_opts_default(&co);
    co.train = *o;
    co.train.checkpoint_dir = NULL, co.train.resume = NULL, co.train.stop_after_epoch = 0;
    co.train.progress = NULL, co.train.cancel = NULL, co.train.progress_arg = NULL, co.train.note = NULL;
    co.train.dist = NULL; /* this process alone: a worker of several ranks does not take its followers along */
    char conv[4200];
    co.train.dev = (struct dse_model_device_opts){ 0 }; /* fine-tuning's gradient hook runs on the CPU (docs/compress.md) */
    if (w->plan.conv == DSE_ALGO_AUTO) { /* with the candidate's own conv choices, training's on a CPU worker (timed
                                            here on a GPU worker's), whichever worker compresses or resumes it: the
                                            same bits (the work folder's stamp names the file) */
        snprintf(conv, sizeof conv, "%s/checkpoints/%s/conv.txt", w->dir, c->id);
        co.train.conv_algo = DSE_ALGO_AUTO, co.train.conv_cache = conv;
        enum dse_status st = dse_worker_pretime_conv(net, &co.train, conv, err);
        if (st) return st;
    }
#define X(field, key, kind, def, lo, hi, cli, help) co.field = w->s->compress.field;
    DSE_COMPRESS_SETTINGS(X)
#undef X
    ckpt_path(w, c->id, r->n_epochs, ckpt, sizeof ckpt);
    snprintf(out, sizeof out, "%s/checkpoints/%s/model.dsez", w->dir, c->id);
    snprintf(work, sizeof work, "%s/checkpoints/%s/compress.work", w->dir, c->id);
    co.work_dir = work;
    dse_worker_say(w, "%s: compressing (density %g, %d bits, %d fine-tuning epoch%s)", c->id, co.density, co.bits,
                   co.finetune, co.finetune == 1 ? "" : "s");
    if (heartbeat_start(&hb, w->dir, l, worker_device(w, dev, sizeof dev)))
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "cannot start the heartbeat thread");
    struct compress_watch cw = { .w = w, .hb = &hb };
    co.train.cancel = compress_cancel, co.train.progress_arg = &cw;
    enum dse_status st = dse_compress_run(net, ckpt, &co, out, &res, err);
    heartbeat_stop(&hb, l);
    if (atomic_load(&hb.lost)) { /* the commit that follows writes nothing, as ever */
        dse_worker_say(w, "%s: lost its lease to another worker while compressing; stopping", c->id);
        memset(err, 0, sizeof *err);
        return DSE_OK;
    }
    if (st && cw.budget) { /* the budget: it stays pending */
        r->status = DSE_REC_PENDING;
        if (r->n_att) dse_strlcpy(r->att[r->n_att - 1].end, "budget", sizeof r->att[r->n_att - 1].end);
        dse_worker_say(w, "%s: time budget reached while compressing; it goes on from %s next time", c->id, work);
        memset(err, 0, sizeof *err);
        return DSE_OK;
    }
    if (st == DSE_ERR_IO || st == DSE_ERR_NOMEM) return st; /* the disk or the data: the worker's problem */
    if (st) {
        dse_worker_say(w, "%s: not compressed: %s", c->id, dse_err_format(err, msg, sizeof msg));
        memset(err, 0, sizeof *err);
        return DSE_OK;
    }
    dse_compress_work_remove(work); /* the .dsez is written: its stages' checkpoints are done with */
    r->compressed_bytes = res.file_bytes;
    r->compressed_top1 = res.top1_compressed;
    r->compressed_density = res.density;
    r->compressed_bits = co.bits;
    dse_worker_say(w, "%s compressed: %.3f MB (%.1fx smaller than float32), top-1 %.2f%%", c->id, res.file_bytes / 1e6,
                   res.ratio, 100 * res.top1_compressed);
    return DSE_OK;
}

/* Commit c's record under lease l and, if that went, release the lease. */
static enum dse_status commit_let_go(struct worker *w, struct cand *c, struct dse_lease *l, struct dse_err *err) {
    enum dse_status st = dse_worker_commit(w, c, l, err);
    if (!st) dse_worker_let_go(w, l);
    return st;
}

/* A stretch that ran out of GPU memory: re-queued with a note, or failed after --max-oom in a row. */
static enum dse_status stretch_out_of_memory(struct worker *w, struct cand *c, struct dse_lease *l, struct dse_err *err) {
    struct dse_rec *r = &c->rec;
    /* Not the candidate's fault, most likely: other processes took the memory between the
     * look and the allocation, or the estimate was low. It goes back to the queue with a
     * note; the next claim asks for more (dse_sweep_gpu_need) and resumes it from its
     * newest checkpoint. A lease released normally: no crash is counted. */
    char msg[600], dev[16];
    dse_err_format(err, msg, sizeof msg);
    worker_device(w, dev, sizeof dev);
    int failed = dse_rec_oom(r, dev, w->claim_free_mib, w->claim_need_mib, msg, w->o.max_oom);
    if (failed) dse_worker_say(w, "%s failed: %s", c->id, r->failed_why);
    else dse_worker_say(w, "%s: %s (%d in a row; --max-oom %d)", c->id, r->att[r->n_att - 1].note, dse_rec_oom_streak(r),
      w->o.max_oom);
    memset(err, 0, sizeof *err);
    return commit_let_go(w, c, l, err);
}

/* A stretch stopped for another worker's CUDA error: re-queued, its attempt ended "restart". */
static enum dse_status stretch_requeue(struct worker *w, struct cand *c, struct dse_lease *l, struct dse_err *err) {
    struct dse_rec *r = &c->rec;
    /* Another worker of this process met a CUDA error, which may have broken the
     * context they share: this one stops too, not for its candidate's sake, which goes
     * back to the queue (its results so far are in its file; the next stretch resumes
     * from its newest checkpoint). A lease released normally: no crash is counted. */
    char culprit[DSE_ID_SIZE], dev[16];
    pthread_mutex_lock(&w->host->mu);
    dse_strlcpy(culprit, w->host->culprit, sizeof culprit);
    pthread_mutex_unlock(&w->host->mu);
    struct dse_rec_attempt *a = &r->att[r->n_att - 1];
    dse_strlcpy(a->end, "restart", sizeof a->end);
    snprintf(a->note, sizeof a->note, "stopped: a CUDA error of %s, trained by the same process on %s, may have "
             "broken their CUDA context; re-queued", culprit, worker_device(w, dev, sizeof dev));
    dse_worker_say(w, "%s: %s", c->id, a->note);
    memset(err, 0, sizeof *err);
    return commit_let_go(w, c, l, err);
}

/* A stretch that failed with err: the candidate is failed, with the error as its reason. */
static enum dse_status stretch_failed(struct worker *w, struct cand *c, struct dse_lease *l, struct dse_err *err) {
    struct dse_rec *r = &c->rec;
    char msg[600];
    dse_err_format(err, msg, sizeof msg);
    dse_strlcpy(r->failed_why, msg, sizeof r->failed_why);
    r->status = DSE_REC_FAILED;
    if (r->n_att) dse_strlcpy(r->att[r->n_att - 1].end, "failed", sizeof r->att[0].end);
    dse_worker_say(w, "%s failed: %s", c->id, r->failed_why);
    memset(err, 0, sizeof *err);
    return commit_let_go(w, c, l, err);
}

enum dse_status dse_worker_train_stretch(struct worker *w, struct cand *c, struct dse_lease *l, int target,
                                         struct dse_err *err) {
    struct dse_rec *r = &c->rec;
    struct dse_net net;
    struct dse_mp mp;
    struct dse_train_opts o;
    char ckdir[4096], resume[4200], conv[4200];
    enum dse_status st;
    dse_net_init(&net, w->s->name, 1, 1, 1);
    dse_space_candidate(w->s, c->index, &mp);
    dse_worker_train_opts(w, &o);
    o.seed += (uint64_t)r->replicate; /* replicate r of a candidate trains with train.seed + r */
    r->epochs_planned = w->plan.epochs;
    r->seed = o.seed;
    if ((st = dse_space_build(w->s, &mp, &net, err))) {
        char msg[600];
        dse_err_format(err, msg, sizeof msg);
        dse_strlcpy(r->failed_why, msg, sizeof r->failed_why);
        r->status = DSE_REC_FAILED;
        dse_net_deinit(&net);
        dse_worker_say(w, "%s failed: %s", c->id, r->failed_why);
        return dse_worker_commit(w, c, l, err);
    }
    snprintf(ckdir, sizeof ckdir, "%s/checkpoints/%s", w->dir, c->id);
    snprintf(resume, sizeof resume, "checkpoints/%s", c->id); /* made inside the directory, no link followed */
    if ((st = dse_fs_dir_in(w->dir, resume, 1, NULL, err))) goto out;
    int from = 0;
    for (int e = r->n_epochs < target ? r->n_epochs : target; e >= 1 && !from; e--) {
        ckpt_path(w, c->id, e, resume, sizeof resume);
        if (dse_worker_file_exists(resume)) from = e;
    }
    if (from < r->n_epochs) r->n_epochs = from; /* results past the checkpoint are computed again */
    /* a checkpoint within the next epoch (a killed worker's, issue #18 item 2): resume there */
    char part[4200];
    snprintf(part, sizeof part, "%s/epoch-%d.part.ckpt", ckdir, from + 1);
    int within = from < target && w->gpu < 0 && dse_worker_file_exists(part);
    if (from < target) {
        if (w->gpu >= 0) { /* cuDNN's choices, pinned by the first stretch (engine/train.c) */
            snprintf(conv, sizeof conv, "%s/cudnn-%s-%s.txt", ckdir, dse_cuda_math_str(w->plan.precision),
                     w->plan.nondeterministic ? "any" : "det");
            o.conv_cache = conv, o.note = seg_note;
        } else if (w->plan.precision == DSE_CUDA_MATH_BF16) { /* no timing; which convs stay float32 is said as each stretch starts */
            o.note = seg_note;
        } else if (w->plan.conv == DSE_ALGO_AUTO) {
            snprintf(conv, sizeof conv, "%s/conv.txt", ckdir); /* whatever the threads: the same bits */
            if ((st = dse_worker_pretime_conv(&net, &o, conv, err))) goto candidate_failed;
            o.conv_cache = conv;
        }
        if ((st = push_attempt(w, r, l, from, err))) goto out;
        stretch_announce(w, c, &o, from, target, within);
        struct dse_train_result *res = malloc(sizeof *res);
        if (!res) {
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            goto out;
        }
        char dev[16];
        struct heartbeat hb;
        struct seg sg = { .w = w, .c = c, .hb = &hb, .claim = l, .target = target, .t_mark = dse_lease_mono(),
                           .t_said = dse_lease_mono(), .wst = DSE_OK };
        if (heartbeat_start(&hb, w->dir, l, worker_device(w, dev, sizeof dev))) {
            free(res);
            st = dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "cannot start the heartbeat thread");
            goto out;
        }
        o.checkpoint_dir = ckdir;
        o.stop_after_epoch = target < w->plan.epochs ? target : 0;
        o.progress = seg_progress;
        o.cancel = seg_cancel;
        o.progress_arg = &sg;
        st = stretch_run(w, c, &net, &o, res, &from, resume, sizeof resume, part, &within, err);
        heartbeat_stop(&hb, l);
        dse_worker_gpu_unreserve(w);
        if (sg.wst) st = sg.wst, *err = sg.werr; /* the record's error came first (a full disk: then the checkpoint's) */
        if (st) {
            free(res);
            if (st == DSE_ERR_IO) goto out; /* the disk or the data: the worker's problem */
            if (st == DSE_ERR_NOMEM && w->gpu >= 0) goto out_of_memory;
            if (st == DSE_ERR_CUDA && w->gpu >= 0) { /* the process's CUDA context may be unusable now */
                if (!dse_worker_host_break(w->host, c->id)) goto requeue; /* another worker's error came first */
                w->restart = 1;
            }
            goto candidate_failed;
        }
        struct dse_rec_attempt *a = &r->att[r->n_att - 1];
        if (!strcmp(res->status, "cancelled")) {
            free(res);
            if (sg.lost || atomic_load(&hb.lost)) {
                dse_worker_say(w, "%s: lost its lease to another worker; stopping", c->id);
                goto out;
            }
            if (dse_worker_host_broken(w->host)) goto requeue;
            dse_strlcpy(a->end, "budget", sizeof a->end);
            dse_worker_say(w, "%s: time budget reached; it resumes from its last checkpoint next time", c->id);
            st = commit_let_go(w, c, l, err);
            goto out;
        }
        stretch_result(w, c, res);
        free(res);
    }
    const int compress = r->status == DSE_REC_PENDING && target >= w->plan.epochs && w->s->compress_line &&
                         r->compressed_bytes < 0;
    if (compress && from >= target && (st = push_attempt(w, r, l, from, err))) /* compressing only: its own attempt */
        goto out;
    if (r->status == DSE_REC_PENDING) {
        struct dse_rec_attempt *a = r->n_att ? &r->att[r->n_att - 1] : NULL;
        if (target >= w->plan.epochs) r->status = DSE_REC_DONE;
        if (a) dse_strlcpy(a->end, target >= w->plan.epochs ? "done" : "paused", sizeof a->end);
    }
    if (r->status == DSE_REC_DONE && !isfinite(r->latency_ms) && dse_worker_wants_measured(w->s))
        stretch_latency(w, c, l, &net, o.threads);
    if (compress && r->status == DSE_REC_DONE && (st = stretch_compress(w, c, l, &net, &o, err))) goto out;
    int written;
    if ((st = commit_w(w, c, l, &written, err)) || !written) goto out;
    const struct dse_epoch_result *last = r->n_epochs ? &r->ep[r->n_epochs - 1] : NULL;
    if (last && r->status == DSE_REC_DONE)
        dse_worker_say(w, "%s done: top-1 %.2f%% after %d epochs", c->id, 100 * last->top1, r->n_epochs);
    else if (last && r->status == DSE_REC_PENDING && !(r->n_att && !strcmp(r->att[r->n_att - 1].end, "budget")))
        dse_worker_say(w, "%s paused at epoch %d for its rung: top-1 %.2f%%", c->id, r->n_epochs, 100 * last->top1);
    dse_worker_prune_checkpoints(w, c->id, r->n_epochs);
    dse_worker_let_go(w, l);
    goto out;
out_of_memory:
    st = stretch_out_of_memory(w, c, l, err);
    goto out;
requeue:
    st = stretch_requeue(w, c, l, err);
    goto out;
candidate_failed:
    st = stretch_failed(w, c, l, err);
out:
    dse_net_deinit(&net);
    return st;
}

/* Having won c's lease: reread its file (the one truth) and do what it needs. */
