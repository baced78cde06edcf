/* sweep_train.c: `dse sweep SPACE` trains: worker processes claim candidates with
 * leases (dse/lease.c), train them with the engine (engine/train.h) from their last
 * checkpoint, write per-epoch results into the candidate files, and, with successive
 * halving, pause candidates at rungs and decide the rungs once every candidate of a rung
 * has reached it. docs/sweep-dir.md has the protocol and why each step is safe. */
#include "dse/sweep_impl.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "engine/data.h"
#include "engine/train.h"

void dse_sweep_opts_default(struct dse_sweep_opts *o) {
    memset(o, 0, sizeof *o);
    o->plan.eta = 3;
    o->plan.min_epochs = 1;
    o->plan.rank = DSE_SWEEP_RANK_PARETO;
    o->plan.conv = DSE_ALGO_AUTO;
    o->workers = 2;
    o->threads = 1;
    o->lease_s = 60;
    o->max_crashes = 3;
}

/* ---- the worker's view of the sweep ---------------------------------------------------- */

struct cand {
    char           id[DSE_ID_SIZE];
    uint64_t       index;
    struct dse_rec rec;        /* as last read; a final one is not read again */
    int            read_ok;
    int64_t        lease_gen;  /* highest lease gen at the last scan; 0: none */
    int            live;       /* its lease looked held at the last scan */
    struct dse_lease_obs obs;  /* what this worker has seen of its lease */
};

struct idref {
    const char *id;
    int         i;
};

struct worker {
    const struct dse_space *s;
    const char             *dir;
    struct dse_sweep_opts   o;
    struct dse_sweep_plan   plan;
    struct dse_lease_me     me;
    char                    name[128];   /* host:pid */
    struct cand            *c;
    int                     n;
    struct idref           *by_id;       /* the candidates sorted by id */
    struct dse_rung         rung[DSE_SWEEP_RUNGS_MAX];
    double                  deadline;    /* monotonic; 0: none */
    struct dse_tally        tally;       /* at the last refresh */
};

static void say(const struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(const struct worker *w, const char *fmt, ...) {
    if (!w->o.log) return;
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(w->o.log, "dse sweep [%s]: %s\n", w->name, line); /* one write per line: workers share the stream */
    fflush(w->o.log);
}

static int find_cand(const struct worker *w, const char *id) {
    int lo = 0, hi = w->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(w->by_id[mid].id, id);
        if (!c) return w->by_id[mid].i;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static void lease_seen(void *arg, const char *id, int64_t gen) {
    struct worker *w = arg;
    int i = find_cand(w, id);
    if (i >= 0) w->c[i].lease_gen = gen;
}

/* Whether candidate c's current lease may be taken (dse_lease_free); *l gets it. */
static int lease_free(struct worker *w, struct cand *c, struct dse_lease *l, int *have, const char **why) {
    int missing;
    *have = 0;
    *why = "";
    if (!c->lease_gen) return 1;
    if (dse_lease_read(w->dir, c->id, c->lease_gen, l, &missing, NULL)) return 0; /* gone or being replaced: next pass */
    *have = 1;
    return dse_lease_free(l, &c->obs, &w->me, dse_lease_wall(), dse_lease_mono(), why);
}

/* Reread every candidate that is not final, the leases and the rung decisions. */
static enum dse_status refresh(struct worker *w, struct dse_err *err) {
    enum dse_status st;
    for (int i = 0; i < w->n; i++) {
        struct cand *c = &w->c[i];
        if (c->read_ok && dse_rec_final(&c->rec)) continue;
        if ((st = dse_rec_read(w->dir, c->id, &c->rec, err))) return st;
        c->read_ok = 1;
        c->lease_gen = 0;
    }
    if ((st = dse_lease_scan(w->dir, lease_seen, w, err))) return st;
    for (int k = 0; k < w->plan.n_rungs; k++) {
        int missing;
        if (w->rung[k].decided) continue;
        if ((st = dse_rung_read(w->dir, k, &w->rung[k], &missing, err))) return st;
        if (missing) break;
    }
    int *running = calloc((size_t)(w->n ? w->n : 1), sizeof *running);
    struct dse_rec *recs = malloc(sizeof *recs * (size_t)(w->n ? w->n : 1));
    if (!running || !recs) {
        free(running), free(recs);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    for (int i = 0; i < w->n; i++) {
        struct cand *c = &w->c[i];
        recs[i] = c->rec; /* shallow: the tally only reads */
        c->live = 0;
        if (!dse_rec_final(&c->rec) && c->lease_gen) {
            struct dse_lease l;
            int missing;
            if (!dse_lease_read(w->dir, c->id, c->lease_gen, &l, &missing, NULL))
                c->live = !l.released && dse_lease_wall() <= l.renewed + 2 * l.ttl_s && !dse_lease_holder_dead(&l, &w->me);
        }
        running[i] = c->live;
    }
    dse_tally_make(&w->tally, recs, w->n, &w->plan, w->rung, running);
    free(running), free(recs);
    return DSE_OK;
}

static int all_final(const struct worker *w) {
    for (int i = 0; i < w->n; i++)
        if (!dse_rec_final(&w->c[i].rec)) return 0;
    return 1;
}

/* "3 of 9 finished, 2 running, ETA 1m 10s" from the last refresh; self: this worker is
 * training one (its own lease was not counted then). */
static void progress_text(const struct worker *w, int self, char *buf, int size) {
    struct dse_tally t = w->tally;
    int final = t.n - t.by_status[DSE_REC_PENDING] - t.pruned, unpruned = t.n - t.pruned;
    char eta[32];
    t.running += self;
    dse_fmt_duration(eta, sizeof eta, dse_tally_eta(&t));
    snprintf(buf, (size_t)size, "%d of %d finished, %d running, ETA %s", final, unpruned, t.running, eta);
}

/* ---- rung decisions -------------------------------------------------------------------- */

/* Rung k can be decided when every candidate that went on from rung k - 1 (every unpruned
 * one for rung 0) has reached its epoch or ended (diverged, failed). The decision is a
 * function of those results only, so whichever worker writes it writes the same; the
 * file is created once (link), and everyone then reads it. */
static enum dse_status try_decide(struct worker *w, int k, struct dse_err *err) {
    if (w->rung[k].decided || (k > 0 && !w->rung[k - 1].decided)) return DSE_OK;
    const int epoch = w->plan.rungs[k];
    int n = 0, out = 0;
    double *top1 = malloc(sizeof *top1 * (size_t)(w->n ? w->n : 1));
    int64_t *bytes = malloc(sizeof *bytes * (size_t)(w->n ? w->n : 1));
    const char **ids = malloc(sizeof *ids * (size_t)(w->n ? w->n : 1));
    int *order = malloc(sizeof *order * (size_t)(w->n ? w->n : 1)), *prank = malloc(sizeof *prank * (size_t)(w->n ? w->n : 1));
    char *text = NULL;
    size_t len = 0;
    FILE *f = NULL;
    enum dse_status st = DSE_OK;
    if (!top1 || !bytes || !ids || !order || !prank) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    for (int i = 0; i < w->n; i++) {
        const struct cand *c = &w->c[i];
        const struct dse_rec *r = &c->rec;
        if (!c->read_ok) goto done;
        if (r->status == DSE_REC_PRUNED || (k > 0 && !dse_rung_promoted(&w->rung[k - 1], c->id))) continue;
        if (r->status == DSE_REC_DIVERGED || r->status == DSE_REC_FAILED || r->status == DSE_REC_STOPPED) {
            out++;
            continue;
        }
        if (r->n_epochs < epoch) goto done; /* not there yet */
        if (!isfinite(r->ep[epoch - 1].top1)) {
            out++;
            continue;
        }
        top1[n] = r->ep[epoch - 1].top1;
        bytes[n] = r->model_bytes;
        ids[n] = c->id;
        n++;
    }
    dse_sweep_rank_rung(n, top1, bytes, ids, w->plan.rank, order, prank);
    int keep = dse_sweep_keep(n, w->plan.eta);
    f = open_memstream(&text, &len);
    if (!f) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    fprintf(f, "{\n  \"rung\": %d,\n  \"epoch\": %d,\n  \"eta\": %d,\n  \"rank\": \"%s\",\n  \"reached\": %d,\n"
               "  \"keep\": %d,\n  \"out_count\": %d,\n  \"ranking\": [", k, epoch, w->plan.eta,
            w->plan.rank == DSE_SWEEP_RANK_TOP1 ? "top1" : "pareto", n, keep, out);
    for (int j = 0; j < n; j++) {
        int i = order[j];
        char t[40];
        for (int p = 1; p <= 9; p++) { /* as the candidate file has it */
            snprintf(t, sizeof t, "%.*g", p, top1[i]);
            if (strtof(t, NULL) == (float)top1[i]) break;
        }
        fprintf(f, "%s\n    {\"id\": \"%s\", \"top1\": %s, \"model_bytes\": %lld, \"pareto_rank\": %d, \"promoted\": %s}",
                j ? "," : "", ids[i], t, (long long)bytes[i], prank[i], j < keep ? "true" : "false");
    }
    fputs(n ? "\n  ],\n  \"promoted\": [" : "],\n  \"promoted\": [", f);
    for (int j = 0; j < keep; j++) fprintf(f, "%s\"%s\"", j ? ", " : "", ids[order[j]]);
    fputs("],\n  \"stopped\": [", f);
    for (int j = keep; j < n; j++) fprintf(f, "%s\"%s\"", j > keep ? ", " : "", ids[order[j]]);
    fputs("]\n}\n", f);
    if (fclose(f) != 0 || !text) {
        f = NULL;
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    f = NULL;
    char path[4096];
    int existed, missing;
    snprintf(path, sizeof path, "%s/rungs", w->dir);
    if ((st = dse_fs_mkdirs(path, err))) goto done;
    snprintf(path, sizeof path, "%s/rungs/rung-%d.json", w->dir, k);
    if ((st = dse_fs_create_atomic(path, text, len, &existed, err))) goto done;
    if ((st = dse_rung_read(w->dir, k, &w->rung[k], &missing, err))) goto done;
    if (!existed) say(w, "rung %d (epoch %d) decided: %d of %d go on (ranked by %s)", k, epoch, keep, n,
                      w->plan.rank == DSE_SWEEP_RANK_TOP1 ? "top-1" : "Pareto rank on top-1 and model size");
done:
    free(top1), free(bytes), free(ids), free(order), free(prank), free(text);
    return st;
}

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

static int heartbeat_start(struct heartbeat *h, const char *dir, const struct dse_lease *l) {
    memset(h, 0, sizeof *h);
    h->dir = dir;
    h->lease = *l;
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
    int               lost;      /* the lease was found taken */
    enum dse_status   wst;       /* a write that failed in the callback */
    struct dse_err    werr;
};

static int seg_cancel(void *arg) {
    struct seg *sg = arg;
    if (sg->lost || sg->wst || atomic_load(&sg->hb->lost)) return 1;
    return sg->w->deadline > 0 && dse_lease_mono() > sg->w->deadline;
}

/* Results of an epoch: into the record and, if the lease is still held, into the file.
 * (The epoch's checkpoint is written just after this; if the worker dies in between, the
 * next one resumes from the previous checkpoint and computes the same epoch again.) */
static void seg_progress(void *arg, const struct dse_train_progress *p) {
    struct seg *sg = arg;
    struct worker *w = sg->w;
    struct dse_rec *r = &sg->c->rec;
    if (!p->done) { /* for dse status: where it is and how fast, in the next renewal */
        pthread_mutex_lock(&sg->hb->mu);
        sg->hb->epoch = p->epoch, sg->hb->iter = p->iter, sg->hb->iters = p->iters;
        sg->hb->epoch_s = p->img_per_s > 0 ? (double)p->iters * w->s->train.batch / p->img_per_s : 0;
        pthread_mutex_unlock(&sg->hb->mu);
        return;
    }
    if (sg->wst) return;
    double now = dse_lease_mono();
    struct dse_rec_epoch ep = { p->loss, p->test_loss, p->test_top1, p->test_top5, now - sg->t_mark, p->img_per_s };
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
    char prog[200];
    progress_text(w, 1, prog, sizeof prog);
    say(w, "%s epoch %d/%d: train loss %.4f, test loss %.4f, top-1 %.2f%%, top-5 %.2f%%, %.0f img/s | %s",
        sg->c->id, p->epoch + 1, w->plan.epochs, p->loss, p->test_loss, 100 * p->test_top1, 100 * p->test_top5,
        p->img_per_s, prog);
}

static void ckpt_path(const struct worker *w, const char *id, int epoch, char *buf, int size) {
    snprintf(buf, (size_t)size, "%s/checkpoints/%s/epoch-%d.ckpt", w->dir, id, epoch);
}

static int file_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Keep only the newest checkpoint at or below `keep` (the model to resume from, or the
 * trained model); older ones go, and so do temporary files a killed writer left. */
static void prune_checkpoints(const struct worker *w, const char *id, int keep) {
    char path[4096];
    int newest = 0;
    snprintf(path, sizeof path, "%s/checkpoints/%s", w->dir, id);
    DIR *d = opendir(path);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (de->d_name[0] != '.' || n < 5 || strcmp(de->d_name + n - 4, ".tmp") != 0) continue;
        char tmp[4400];
        snprintf(tmp, sizeof tmp, "%s/%s", path, de->d_name);
        unlink(tmp);
    }
    if (d) closedir(d);
    for (int e = keep; e >= 1 && !newest; e--) {
        ckpt_path(w, id, e, path, sizeof path);
        if (file_exists(path)) newest = e;
    }
    for (int e = newest - 1; e >= 1; e--) {
        ckpt_path(w, id, e, path, sizeof path);
        unlink(path);
    }
}

/* The conv strategies are timed once per candidate, before its first epoch, and kept in
 * its checkpoint folder: every stretch of its training, by whichever worker, then runs
 * the same strategies, so a resumed run is the uninterrupted one bit for bit. */
static enum dse_status pretime_conv(const struct dse_net *net, const struct dse_train_opts *o, const char *path,
                                    struct dse_err *err) {
    if (file_exists(path)) return DSE_OK;
    struct dse_model_opts mo = { .batch = o->batch, .threads = o->threads, .seed = o->seed, .init = o->init,
                                 .init_std = o->init_std, .inference = 0 }; /* the CPU, FP32 */
    struct dse_model *m = NULL;
    enum dse_status st = dse_model_new(net, &mo, &m, err);
    if (st) return st;
    float *x = calloc((size_t)dse_tensor_count(&m->input), sizeof *x), loss;
    int *labels = calloc((size_t)o->batch, sizeof *labels);
    if (!x || !labels) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    m->cx.conv_force = DSE_ALGO_AUTO;
    dse_model_set_training(m, 1);
    if (!st) st = dse_model_forward(m, x, labels, &loss, err);
    if (!st) st = dse_model_backward(m, err);
    dse_model_set_training(m, 0);
    if (!st) st = dse_model_forward(m, x, labels, &loss, err);
    if (!st) st = dse_conv_cache_save(&m->cx, path, err);
    free(x), free(labels);
    dse_model_free(m);
    return st;
}

static const char *engine_dataset(const char *space_name) {
    if (!strcmp(space_name, "cifar10")) return "cifar-10";
    if (!strcmp(space_name, "cifar100")) return "cifar-100";
    return space_name;
}

static void train_opts(const struct worker *w, struct dse_train_opts *o) {
    const struct dse_train *t = &w->s->train;
    dse_train_opts_default(o);
    o->data = engine_dataset(t->dataset);
    o->data_root = w->o.data_root;
    o->epochs = w->plan.epochs;
    o->batch = t->batch;
    o->threads = w->o.threads;
    o->lr = (float)t->lr;
    o->policy = !strcmp(t->lr_policy, "fixed") ? DSE_LR_FIXED : !strcmp(t->lr_policy, "step") ? DSE_LR_STEP
              : !strcmp(t->lr_policy, "linear") ? DSE_LR_LINEAR : DSE_LR_POLY;
    o->power = (float)t->power;
    o->gamma = (float)t->gamma;
    o->step_epochs = t->step_epochs;
    o->momentum = (float)t->momentum;
    o->weight_decay = (float)t->weight_decay;
    o->warmup_epochs = t->warmup_epochs;
    o->seed = t->seed;
    o->limit_train = t->limit_train;
    o->limit_test = t->limit_test;
    o->conv_algo = w->plan.conv;
}

/* Release the lease; a failure only delays others until it expires. */
static void let_go(struct worker *w, struct dse_lease *l) {
    struct dse_err e = { 0 };
    if (dse_lease_release(w->dir, l, &e)) say(w, "could not release the lease of %s: %s", l->id, e.msg);
}

/* Write c's record under lease l, if it is still this worker's (then *written = 1). */
static enum dse_status commit_w(struct worker *w, struct cand *c, struct dse_lease *l, int *written,
                                struct dse_err *err) {
    *written = 0;
    if (!still_mine(w, c, l)) {
        say(w, "%s: lost its lease to another worker; leaving it to that one", c->id);
        return DSE_OK;
    }
    c->rec.lease_gen = l->gen;
    enum dse_status st = dse_rec_write(w->dir, w->s, &c->rec, err);
    *written = !st;
    return st;
}

static enum dse_status commit(struct worker *w, struct cand *c, struct dse_lease *l, struct dse_err *err) {
    int written;
    return commit_w(w, c, l, &written, err);
}

static void push_attempt(struct worker *w, struct dse_rec *r, const struct dse_lease *l, int from) {
    if (r->n_att == DSE_REC_ATTEMPTS_MAX) {
        memmove(r->att, r->att + 1, sizeof r->att[0] * (DSE_REC_ATTEMPTS_MAX - 1));
        r->n_att--;
    }
    struct dse_rec_attempt *a = &r->att[r->n_att++];
    memset(a, 0, sizeof *a);
    dse_strlcpy(a->worker, w->name, sizeof a->worker);
    a->lease_gen = l->gen;
    a->threads = w->o.threads;
    a->from_epoch = a->to_epoch = from;
    r->att_total++;
}

/* Train c from its newest checkpoint to `target` epochs (a rung, or R). Errors returned
 * are the worker's (disk, data); the candidate's own (a network the engine cannot run,
 * out of memory) mark it failed. */
static enum dse_status train_stretch(struct worker *w, struct cand *c, struct dse_lease *l, int target,
                                     struct dse_err *err) {
    struct dse_rec *r = &c->rec;
    struct dse_net net;
    struct dse_mp mp;
    struct dse_train_opts o;
    char ckdir[4096], resume[4200], conv[4200];
    enum dse_status st;
    dse_net_init(&net, w->s->name, 1, 1, 1);
    dse_space_candidate(w->s, c->index, &mp);
    train_opts(w, &o);
    r->epochs_planned = w->plan.epochs;
    r->seed = o.seed;
    if ((st = dse_space_build(w->s, &mp, &net, err))) {
        char msg[600];
        dse_err_format(err, msg, sizeof msg);
        dse_strlcpy(r->failed_why, msg, sizeof r->failed_why);
        r->status = DSE_REC_FAILED;
        dse_net_deinit(&net);
        say(w, "%s failed: %s", c->id, r->failed_why);
        return commit(w, c, l, err);
    }
    snprintf(ckdir, sizeof ckdir, "%s/checkpoints/%s", w->dir, c->id);
    if ((st = dse_fs_mkdirs(ckdir, err))) goto out;
    int from = 0;
    for (int e = r->n_epochs < target ? r->n_epochs : target; e >= 1 && !from; e--) {
        ckpt_path(w, c->id, e, resume, sizeof resume);
        if (file_exists(resume)) from = e;
    }
    if (from < r->n_epochs) r->n_epochs = from; /* results past the checkpoint are computed again */
    if (from < target) {
        if (w->plan.conv == DSE_ALGO_AUTO) {
            snprintf(conv, sizeof conv, "%s/conv-t%d.txt", ckdir, o.threads);
            if ((st = pretime_conv(&net, &o, conv, err))) goto candidate_failed;
            o.conv_cache = conv;
        }
        push_attempt(w, r, l, from);
        char span[64], rung[48] = "";
        if (from + 1 == target) snprintf(span, sizeof span, "epoch %d", target);
        else snprintf(span, sizeof span, "epochs %d-%d", from + 1, target);
        for (int k = 0; k < w->plan.n_rungs; k++)
            if (w->plan.halving && w->plan.rungs[k] == target) snprintf(rung, sizeof rung, ", up to rung %d", k);
        say(w, "%s: training %s of %d%s%s", c->id, span, w->plan.epochs, rung,
            from ? " (resumed from its checkpoint)" : "");
        struct dse_train_result *res = malloc(sizeof *res);
        if (!res) {
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            goto out;
        }
        struct heartbeat hb;
        struct seg sg = { w, c, &hb, l, target, dse_lease_mono(), 0, DSE_OK, { 0 } };
        if (heartbeat_start(&hb, w->dir, l)) {
            free(res);
            st = dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "cannot start the heartbeat thread");
            goto out;
        }
        o.checkpoint_dir = ckdir;
        o.stop_after_epoch = target < w->plan.epochs ? target : 0;
        o.progress = seg_progress;
        o.cancel = seg_cancel;
        o.progress_arg = &sg;
        for (;;) {
            if (from > 0) ckpt_path(w, c->id, from, resume, sizeof resume);
            o.resume = from > 0 ? resume : NULL;
            st = dse_train_run(&net, &o, res, err);
            /* a checkpoint that does not load (cut short by a full disk, say): the one before it */
            if (st && from > 0 && strstr(err->msg, "checkpoint")) {
                char bad[4300];
                say(w, "%s: %s; going back one checkpoint", c->id, err->msg);
                snprintf(bad, sizeof bad, "%s.bad", resume);
                rename(resume, bad);
                from--;
                while (from > 0 && (ckpt_path(w, c->id, from, resume, sizeof resume), !file_exists(resume))) from--;
                r->n_epochs = from < r->n_epochs ? from : r->n_epochs;
                r->att[r->n_att - 1].from_epoch = r->att[r->n_att - 1].to_epoch = from;
                continue;
            }
            break;
        }
        heartbeat_stop(&hb, l);
        if (!st && sg.wst) st = sg.wst, *err = sg.werr;
        if (st) {
            free(res);
            if (st == DSE_ERR_IO) goto out; /* the disk or the data: the worker's problem */
            goto candidate_failed;
        }
        struct dse_rec_attempt *a = &r->att[r->n_att - 1];
        if (!strcmp(res->status, "cancelled")) {
            free(res);
            if (sg.lost || atomic_load(&hb.lost)) {
                say(w, "%s: lost its lease to another worker; stopping", c->id);
                goto out;
            }
            dse_strlcpy(a->end, "budget", sizeof a->end);
            say(w, "%s: time budget reached; it resumes from its last checkpoint next time", c->id);
            if (!(st = commit(w, c, l, err))) let_go(w, l);
            goto out;
        }
        /* the engine's own epoch times and speeds replace the callback's */
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
            say(w, "%s diverged in epoch %d at iteration %lld (NaN or infinite loss or weights)", c->id,
                r->diverged_epoch, (long long)r->diverged_iter);
        }
        free(res);
    }
    if (r->status == DSE_REC_PENDING) {
        struct dse_rec_attempt *a = r->n_att ? &r->att[r->n_att - 1] : NULL;
        if (target >= w->plan.epochs) r->status = DSE_REC_DONE;
        if (a) dse_strlcpy(a->end, target >= w->plan.epochs ? "done" : "paused", sizeof a->end);
    }
    int written;
    if ((st = commit_w(w, c, l, &written, err)) || !written) goto out;
    const struct dse_rec_epoch *last = r->n_epochs ? &r->ep[r->n_epochs - 1] : NULL;
    if (last && r->status == DSE_REC_DONE)
        say(w, "%s done: top-1 %.2f%% after %d epochs", c->id, 100 * last->top1, r->n_epochs);
    else if (last && r->status == DSE_REC_PENDING)
        say(w, "%s paused at epoch %d for its rung: top-1 %.2f%%", c->id, r->n_epochs, 100 * last->top1);
    prune_checkpoints(w, c->id, r->n_epochs);
    let_go(w, l);
    goto out;
candidate_failed: {
        char msg[600];
        dse_err_format(err, msg, sizeof msg);
        dse_strlcpy(r->failed_why, msg, sizeof r->failed_why);
        r->status = DSE_REC_FAILED;
        if (r->n_att) dse_strlcpy(r->att[r->n_att - 1].end, "failed", sizeof r->att[0].end);
        say(w, "%s failed: %s", c->id, r->failed_why);
        memset(err, 0, sizeof *err);
        if (!(st = commit(w, c, l, err))) let_go(w, l);
    }
out:
    dse_net_deinit(&net);
    return st;
}

/* Having won c's lease: reread its file (the one truth) and do what it needs. */
static enum dse_status work_on(struct worker *w, struct cand *c, struct dse_lease *l, int crashes,
                               struct dse_err *err) {
    enum dse_status st;
    int target, rung;
    if ((st = dse_rec_read(w->dir, c->id, &c->rec, err))) return st;
    c->read_ok = 1;
    enum dse_action act = dse_sweep_next(&c->rec, &w->plan, w->rung, &target, &rung);
    if (act == DSE_ACT_TRAIN && crashes >= w->o.max_crashes) {
        snprintf(c->rec.failed_why, sizeof c->rec.failed_why, "its workers died %d times in a row before finishing "
                 "an epoch (out of memory? see --max-crashes)", crashes);
        c->rec.status = DSE_REC_FAILED;
        say(w, "%s failed: %s", c->id, c->rec.failed_why);
        if (!(st = commit(w, c, l, err))) let_go(w, l);
        return st;
    }
    switch (act) {
    case DSE_ACT_NONE:
    case DSE_ACT_WAIT:
        let_go(w, l);
        return DSE_OK;
    case DSE_ACT_STOP: {
        struct dse_rec *r = &c->rec;
        int epoch = w->plan.rungs[rung];
        if (r->n_epochs > epoch) r->n_epochs = epoch;
        r->status = DSE_REC_STOPPED;
        r->stopped_rung = rung;
        r->stopped_epoch = epoch;
        say(w, "%s stopped at rung %d (epoch %d): not in the top 1/%d", c->id, rung, epoch, w->plan.eta);
        if ((st = commit(w, c, l, err))) return st;
        prune_checkpoints(w, c->id, epoch);
        let_go(w, l);
        return DSE_OK;
    }
    case DSE_ACT_TRAIN:
        return train_stretch(w, c, l, target, err);
    }
    return DSE_OK;
}

static void sleep_s(double s) {
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static int cmp_by_id(const void *a, const void *b) {
    return strcmp(((const struct idref *)a)->id, ((const struct idref *)b)->id);
}

static enum dse_status worker_init(struct worker *w, const struct dse_space *s, const char *dir,
                                   const struct dse_sweep_opts *o, const struct dse_sweep_plan *plan,
                                   double deadline, struct dse_err *err) {
    uint64_t *idx = NULL, n = 0;
    memset(w, 0, sizeof *w);
    w->s = s, w->dir = dir, w->o = *o, w->plan = *plan;
    dse_lease_me_init(&w->me);
    snprintf(w->name, sizeof w->name, "%s:%ld", w->me.host, w->me.pid);
    w->deadline = deadline;
    enum dse_status st = dse_space_indices(s, 10000000ULL, &idx, &n, err);
    if (st) return st;
    w->c = calloc((size_t)(n ? n : 1), sizeof *w->c);
    w->by_id = calloc((size_t)(n ? n : 1), sizeof *w->by_id);
    if (!w->c || !w->by_id) {
        free(idx);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    w->n = (int)n;
    for (int i = 0; i < w->n; i++) {
        struct dse_mp mp;
        dse_space_candidate(s, idx[i], &mp);
        dse_space_id(&mp, w->c[i].id);
        w->c[i].index = idx[i];
        dse_rec_init(&w->c[i].rec);
    }
    for (int i = 0; i < w->n; i++) w->by_id[i] = (struct idref){ w->c[i].id, i };
    free(idx);
    qsort(w->by_id, (size_t)w->n, sizeof *w->by_id, cmp_by_id);
    return DSE_OK;
}

static void worker_deinit(struct worker *w) {
    for (int i = 0; i < w->n; i++) dse_rec_deinit(&w->c[i].rec);
    for (int k = 0; k < DSE_SWEEP_RUNGS_MAX; k++) dse_rung_deinit(&w->rung[k]);
    free(w->c);
    free(w->by_id);
}

/* The worker's loop: refresh, decide what rungs can be decided, claim the first
 * candidate (in grid order) that has work and a free lease, work on it; sleep a little
 * when nothing is free (others are training, or a rung waits for them). */
static enum dse_status worker_loop(struct worker *w, struct dse_err *err) {
    enum dse_status st;
    double nap = 0.05;
    int announced_wait = 0;
    for (;;) {
        if (w->deadline > 0 && dse_lease_mono() > w->deadline) {
            say(w, "time budget reached; stopping");
            return DSE_OK;
        }
        if ((st = refresh(w, err))) return st;
        for (int k = 0; k < w->plan.n_rungs; k++)
            if ((st = try_decide(w, k, err))) return st;
        if (all_final(w)) return DSE_OK;
        int worked = 0;
        for (int i = 0; i < w->n && !worked; i++) {
            struct cand *c = &w->c[i];
            int target, rung, have;
            const char *why;
            struct dse_lease cur, mine;
            if (dse_sweep_next(&c->rec, &w->plan, w->rung, &target, &rung) <= DSE_ACT_WAIT) continue;
            if (!lease_free(w, c, &cur, &have, &why)) continue;
            int crashes = 0;
            if (have && !cur.released) /* its worker died: count it if it had made no progress */
                crashes = c->rec.n_epochs <= cur.epochs_at_claim ? cur.crashes + 1 : 1;
            int won;
            if ((st = dse_lease_claim(w->dir, c->id, c->lease_gen, &w->me, w->o.lease_s, crashes, c->rec.n_epochs,
                                      &mine, &won, err)))
                return st;
            if (!won) continue;
            if (have && !cur.released) say(w, "%s: taking over from %s:%ld (%s)", c->id, cur.host, cur.pid, why);
            if ((st = work_on(w, c, &mine, crashes, err))) {
                let_go(w, &mine);
                return st;
            }
            worked = 1;
            announced_wait = 0;
        }
        if (worked) {
            nap = 0.05;
            continue;
        }
        if (!announced_wait) {
            char prog[200];
            progress_text(w, 0, prog, sizeof prog);
            say(w, "nothing free to train; waiting for other workers (%s)", prog);
            announced_wait = 1;
        }
        sleep_s(nap);
        nap = nap * 2 > 1.0 ? 1.0 : nap * 2;
    }
}

static enum dse_status worker_run(const struct dse_space *s, const char *dir, const struct dse_sweep_opts *o,
                                  const struct dse_sweep_plan *plan, double deadline, int *finished,
                                  struct dse_err *err) {
    struct worker w;
    enum dse_status st = worker_init(&w, s, dir, o, plan, deadline, err);
    if (!st) st = worker_loop(&w, err);
    if (!st && finished) {
        st = refresh(&w, err);
        *finished = !st && all_final(&w);
    }
    worker_deinit(&w);
    return st;
}

/* ---- the plan and the processes ---------------------------------------------------------- */

static enum dse_status settle_plan(const struct dse_space *s, const char *dir, const struct dse_sweep_opts *o,
                                   struct dse_sweep_plan *plan, struct dse_err *err) {
    struct dse_sweep_plan want = o->plan, have;
    int missing, existed;
    char by[160], host[64] = "host";
    enum dse_status st;
    if (!o->set_epochs) want.epochs = s->train.epochs;
    if ((st = dse_sweep_plan_rungs(&want, err))) return st;
    if ((st = dse_plan_read(dir, &have, &missing, err))) return st;
    if (missing) {
        gethostname(host, sizeof host - 1);
        snprintf(by, sizeof by, "%s:%ld", host, (long)getpid());
        if ((st = dse_plan_create(dir, &want, by, &existed, err))) return st;
        if ((st = dse_plan_read(dir, &have, &missing, err))) return st;
        if (missing) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s/plan.json: written but not found", dir);
    }
    /* A sweep trains one way: options given now must agree with its plan. */
    const char *clash = NULL;
    char a[64] = "", b[64] = "";
    if (o->set_epochs && want.epochs != have.epochs)
        clash = "--budget (epochs)", snprintf(a, sizeof a, "%de", have.epochs), snprintf(b, sizeof b, "%de", want.epochs);
    else if (o->set_halving && want.halving != have.halving)
        clash = "--early-stop", snprintf(a, sizeof a, "%s", have.halving ? "sh" : "none"),
        snprintf(b, sizeof b, "%s", want.halving ? "sh" : "none");
    else if (o->set_eta && have.halving && want.eta != have.eta)
        clash = "--eta", snprintf(a, sizeof a, "%d", have.eta), snprintf(b, sizeof b, "%d", want.eta);
    else if (o->set_min_epochs && have.halving && want.min_epochs != have.min_epochs)
        clash = "--min-epochs", snprintf(a, sizeof a, "%d", have.min_epochs), snprintf(b, sizeof b, "%d", want.min_epochs);
    else if (o->set_rank && have.halving && want.rank != have.rank)
        clash = "--rank", snprintf(a, sizeof a, "%s", have.rank == DSE_SWEEP_RANK_TOP1 ? "top1" : "pareto"),
        snprintf(b, sizeof b, "%s", want.rank == DSE_SWEEP_RANK_TOP1 ? "top1" : "pareto");
    else if (o->set_conv && want.conv != have.conv)
        clash = "--conv", snprintf(a, sizeof a, "%s", have.conv == DSE_ALGO_AUTO ? "auto" : dse_cpu_conv_algo_str(have.conv)),
        snprintf(b, sizeof b, "%s", want.conv == DSE_ALGO_AUTO ? "auto" : dse_cpu_conv_algo_str(want.conv));
    if (clash)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s/plan.json: this sweep was started with %s %s, and this "
                           "command gives %s; give the same value or leave it out (or use another --out)",
                           dir, clash, a, b);
    *plan = have;
    return DSE_OK;
}

/* A child process running one worker; its pid, or -1. */
static pid_t spawn_worker(const struct dse_space *s, const char *dir, const struct dse_sweep_opts *o,
                          const struct dse_sweep_plan *plan, double deadline) {
    fflush(NULL); /* nothing buffered twice */
    pid_t p = fork();
    if (p != 0) return p;
    struct dse_err e = { 0 };
    enum dse_status st = worker_run(s, dir, o, plan, deadline, NULL, &e);
    if (st) {
        char msg[700];
        fprintf(stderr, "dse sweep: worker %ld: %s\n", (long)getpid(), dse_err_format(&e, msg, sizeof msg));
    }
    fflush(NULL);
    _exit(st ? 1 : 0);
}

enum dse_status dse_sweep_train(const struct dse_space *s, const char *dir, const struct dse_sweep_opts *o,
                                int *finished, struct dse_err *err) {
    struct dse_sweep_plan plan;
    struct dse_data_files files;
    enum dse_status st;
    *finished = 0;
    if (!s->train.present)
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, 0, "the space has no train section; add train = { dataset "
                           "= \"fashion-mnist\"; epochs = 5; ... } (docs/space-format.md) or use --analytic-only");
    if (o->workers < 1 || o->threads < 1 || !(o->lease_s > 0) || o->max_crashes < 1)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "workers, threads, max crashes must be >= 1 and the lease > 0");
    if ((st = dse_data_locate(engine_dataset(s->train.dataset), o->data_root, &files, err))) return st;
    if ((st = settle_plan(s, dir, o, &plan, err))) return st;
    if (o->log) {
        char desc[400];
        dse_plan_describe(&plan, desc, sizeof desc);
        fprintf(o->log, "dse sweep: %s: %s; %d worker%s x %d thread%s\n", dir, desc, o->workers,
                o->workers == 1 ? "" : "s", o->threads, o->threads == 1 ? "" : "s");
        fflush(o->log);
    }
    /* one deadline for every worker of this command, restarted ones too (the monotonic
     * clock is the machine's, shared by the children) */
    double deadline = o->hours > 0 ? dse_lease_mono() + o->hours * 3600 : 0;
    if (o->workers == 1) return worker_run(s, dir, o, &plan, deadline, finished, err);

    /* Several workers: child processes, each the same loop as a lone worker. A child
     * that dies (killed, crashed) is replaced while work remains; its candidate is taken
     * over at once (same host: its pid is gone). */
    pid_t *kids = calloc((size_t)o->workers, sizeof *kids);
    if (!kids) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    int alive = 0, restarts = 0, failed = 0;
    for (int k = 0; k < o->workers; k++) {
        if ((kids[k] = spawn_worker(s, dir, o, &plan, deadline)) < 0) {
            st = dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "cannot start a worker process: %s", strerror(errno));
            break;
        }
        alive++;
    }
    while (alive > 0) {
        int status;
        pid_t p = waitpid(-1, &status, 0);
        if (p < 0) {
            if (errno == EINTR) continue;
            break;
        }
        int k = 0;
        while (k < o->workers && kids[k] != p) k++;
        if (k == o->workers) continue;
        alive--;
        kids[k] = 0;
        if (WIFEXITED(status)) {
            failed += WEXITSTATUS(status) != 0;
            continue;
        }
        if (restarts >= 2 * o->workers || st) {
            failed++;
            continue;
        }
        if (o->log) {
            fprintf(o->log, "dse sweep: worker %ld died (signal %d); starting another\n", (long)p,
                    WIFSIGNALED(status) ? WTERMSIG(status) : 0);
            fflush(o->log);
        }
        if ((kids[k] = spawn_worker(s, dir, o, &plan, deadline)) > 0) alive++, restarts++;
        else failed++;
    }
    free(kids);
    if (st) return st;
    if (failed) return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "%d worker%s failed (see above)", failed,
                                   failed == 1 ? "" : "s");
    /* what the workers left */
    struct worker w;
    if ((st = worker_init(&w, s, dir, o, &plan, 0, err))) return st;
    st = refresh(&w, err);
    *finished = !st && all_final(&w);
    worker_deinit(&w);
    return st;
}
