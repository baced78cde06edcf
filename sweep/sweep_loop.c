/* sweep_loop.c: a worker's claim loop: the order in which it looks at candidates, the claim
 * (a lease, and on a GPU the memory it needs), what it does with one it holds (train a
 * stretch, stop it at a rung, finish it), and waiting while others hold the rest.
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

static enum dse_status work_on(struct worker *w, struct cand *c, struct dse_lease *l,
                               const struct dse_lease_count *cnt, struct dse_err *err) {
    enum dse_status st;
    int target, rung;
    if ((st = dse_rec_read(w->dir, c->id, &c->rec, err))) return st;
    c->read_ok = 1;
    /* ASHA: whether c goes on depends on the others' results: the newest view of them */
    if (w->plan.halving == DSE_SWEEP_HALVING_ASHA && (st = dse_worker_refresh(w, err))) return st;
    enum dse_action act = dse_sweep_next(&c->rec, &w->plan, w->rung, &target, &rung);
    const enum dse_lease_verdict v = dse_lease_verdict(cnt, w->o.max_crashes);
    if ((act == DSE_ACT_TRAIN || act == DSE_ACT_PROMOTE) && v >= DSE_LEASE_FAIL_CRASHES) {
        if (v == DSE_LEASE_FAIL_CRASHES)
            snprintf(c->rec.failed_why, sizeof c->rec.failed_why, "its workers died %d times in a row in this "
                     "command without progress (killed from outside, or out of memory? see --max-crashes); the next "
                     "dse sweep of this directory retries it", cnt->crashes);
        else /* each process its own command: one that kills its process never reaches --max-crashes */
            snprintf(c->rec.failed_why, sizeof c->rec.failed_why, "its workers died %d times in a row without "
                     "progress, in this and earlier commands (it kills its process? out of memory? see "
                     "--max-crashes); the next dse sweep of this directory retries it", cnt->deaths);
        c->rec.status = DSE_REC_FAILED;
        c->rec.failed_retry = 1; /* not the candidate's own failure, as far as can be told: reopen_retries (sweep_train.c) */
        dse_worker_say(w, "%s failed: %s", c->id, c->rec.failed_why);
        if (!(st = dse_worker_commit(w, c, l, err))) dse_worker_let_go(w, l);
        return st;
    }
    switch (act) {
    case DSE_ACT_NONE:
    case DSE_ACT_WAIT:
        dse_worker_let_go(w, l);
        return DSE_OK;
    case DSE_ACT_STOP: {
        struct dse_rec *r = &c->rec;
        int epoch = w->plan.rungs[rung];
        char arch[DSE_ID_SIZE];
        dse_asha_arch(r->id, arch);
        const char *by = w->plan.halving == DSE_SWEEP_HALVING_ASHA ? dse_asha_gone(w->rung, arch) : NULL;
        const struct dse_rec *ender = by ? dse_worker_rec_of(w, by) : NULL, *retry = NULL;
        for (int k = 0; !by && w->plan.halving == DSE_SWEEP_HALVING_ASHA && k < w->s->replicates && !retry; k++) {
            char sib[DSE_ID_SIZE]; /* a replicate failed by crashes kept its architecture from the rung */
            dse_strlcpy(sib, arch, sizeof sib);
            dse_space_id_replicate(sib, k);
            const struct dse_rec *o = strcmp(sib, r->id) ? dse_worker_rec_of(w, sib) : NULL;
            if (o && o->status == DSE_REC_FAILED && o->failed_retry) retry = o;
        }
        if (r->n_epochs > epoch) r->n_epochs = epoch;
        r->status = DSE_REC_STOPPED;
        r->stopped_rung = rung;
        r->stopped_epoch = r->n_epochs; /* the rung's epoch, or fewer: one whose replicate ended it stops short */
        if (by)
            dse_worker_say(w, "%s stopped at rung %d after %d epoch%s: its replicate %s is %s, and an architecture's "
                           "replicates go on or stop together", c->id, rung, r->n_epochs, r->n_epochs == 1 ? "" : "s", by,
                           ender ? dse_rec_status_str(ender->status) : "ended");
        else if (retry)
            dse_worker_say(w, "%s stopped at rung %d (epoch %d): its replicate %s failed for want of a worker that "
                           "lived, so its architecture did not reach the rung before it closed (a later command "
                           "retries that replicate, which then stops too)", c->id, rung, epoch, retry->id);
        else if (w->plan.halving == DSE_SWEEP_HALVING_ASHA)
            dse_worker_say(w, "%s stopped at rung %d (epoch %d): not in the top 1/%d of the %d that reached it, and none can "
         "reach it any more", c->id, rung, epoch, w->plan.eta, w->rung[rung].n_reached);
        else
            dse_worker_say(w, "%s stopped at rung %d (epoch %d): not in the top 1/%d", c->id, rung, epoch, w->plan.eta);
        if ((st = dse_worker_commit(w, c, l, err))) return st;
        dse_worker_prune_checkpoints(w, c->id, r->n_epochs); /* its newest: the rung's, or fewer (stopped short) */
        dse_worker_let_go(w, l);
        return DSE_OK;
    }
    case DSE_ACT_PROMOTE: { /* ASHA: the promotion first (it stands, whatever happens next), then on */
        const struct dse_rec **recs = malloc(sizeof *recs * (size_t)(w->n ? w->n : 1));
        int existed = 0;
        if (!recs) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < w->n; i++) recs[i] = &w->c[i].rec;
        st = dse_asha_promote(w->dir, &w->plan, rung, &c->rec, recs, w->n, w->s->replicates, w->rung, w->name, &existed,
                              err);
        free(recs);
        if (st) return st;
        dse_worker_say(w, "%s promoted at rung %d (epoch %d): in the top 1/%d of the %d that have reached it so far%s", c->id,
     rung, w->plan.rungs[rung], w->plan.eta, w->rung[rung].n_reached,
     existed ? " (already promoted)" : "");
        return dse_worker_train_stretch(w, c, l, target, err);
    }
    case DSE_ACT_TRAIN:
        return dse_worker_train_stretch(w, c, l, target, err);
    }
    return DSE_OK;
}

static int cmp_claim(const void *a, const void *b) {
    const int *x = a, *y = b; /* (key, index) pairs: key descending, then grid order */
    if (x[0] != y[0]) return x[0] > y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The order in which the worker looks for a candidate to claim: grid order, but with ASHA
 * (Li et al., Algorithm 2) stops first (cheap), then the highest rung first: a candidate
 * promotable at rung k, or promoted and not at rung k + 1 yet, before any of rung k - 1,
 * fresh candidates (to rung 0) last. With one worker the order, and so the whole sweep, is
 * a function of the results alone. */
static enum dse_status claim_order(struct worker *w, struct dse_err *err) {
    int *o = realloc(w->order, sizeof *o * (size_t)(w->n ? w->n : 1));
    if (!o) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    w->order = o;
    for (int i = 0; i < w->n; i++) o[i] = i;
    if (w->plan.halving != DSE_SWEEP_HALVING_ASHA || w->n < 2) return DSE_OK;
    int *kv = malloc(sizeof *kv * 2 * (size_t)w->n);
    if (!kv) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; i < w->n; i++) {
        int target, rung;
        enum dse_action a = dse_sweep_next(&w->c[i].rec, &w->plan, w->rung, &target, &rung);
        kv[2 * i] = a == DSE_ACT_STOP ? INT32_MAX : a >= DSE_ACT_TRAIN ? target : -1;
        kv[2 * i + 1] = i;
    }
    qsort(kv, (size_t)w->n, 2 * sizeof *kv, cmp_claim);
    for (int i = 0; i < w->n; i++) o[i] = kv[2 * i + 1];
    free(kv);
    return DSE_OK;
}

static void sleep_s(double s) {
    struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static enum dse_status never_fits(struct worker *w, struct cand *c, struct dse_lease *l, int64_t need_bytes,
                                  struct dse_err *err) {
    enum dse_status st;
    if ((st = dse_rec_read(w->dir, c->id, &c->rec, err))) return st;
    c->read_ok = 1;
    if (dse_rec_final(&c->rec)) {
        dse_worker_let_go(w, l);
        return DSE_OK;
    }
    uint64_t most = 0;
    dse_worker_book_lock(w->book);
    for (int g = 0; g < w->book->n_gpus; g++)
        if (w->book->total[g] > most) most = w->book->total[g];
    dse_worker_book_unlock(w->book);
    const int streak = dse_rec_oom_streak(&c->rec);
    char oom[80] = "";
    if (streak) snprintf(oom, sizeof oom, ", asked for more after %d out-of-memory failure%s", streak,
                         streak == 1 ? "" : "s");
    snprintf(c->rec.failed_why, sizeof c->rec.failed_why, "needs about %.0f MiB of GPU memory (training estimate %.0f "
             "MiB at batch %d, plus %d%% and %.0f MiB%s), more than the largest GPU of this sweep command has "
             "(%.0f MiB in all)", MIB(need_bytes), MIB(c->est_bytes > 0 ? c->est_bytes : 0), w->s->train.batch,
             DSE_SWEEP_GPU_MARGIN_PCT, MIB(DSE_SWEEP_GPU_MARGIN_BYTES), oom, MIB(most));
    c->rec.status = DSE_REC_FAILED;
    dse_worker_say(w, "%s failed: %s", c->id, c->rec.failed_why);
    if (!(st = dse_worker_commit(w, c, l, err))) dse_worker_let_go(w, l);
    return st;
}

/* The worker's loop: dse_worker_refresh, decide what rungs can be decided, claim the first
 * candidate (in grid order) that has work and a free lease (and, on a GPU, fits in the
 * memory free there now), work on it; sleep a little when nothing is free (others are
 * training, or a rung waits for them, or the GPU is full). */
static enum dse_status worker_loop(struct worker *w, struct dse_err *err) {
    enum dse_status st;
    double nap = 0.05;
    int announced_wait = 0; /* 1: nothing free; 2: nothing fits in the GPU's memory */
    for (;;) {
        if (w->deadline > 0 && dse_lease_mono() > w->deadline) {
            dse_worker_say(w, "time budget reached; stopping");
            return DSE_OK;
        }
        if (w->restart || dse_worker_host_broken(w->host)) {
            dse_worker_say(w, "leaving after a CUDA error%s; a fresh worker process takes its place",
         w->restart ? "" : " of another worker of this process");
            return DSE_OK;
        }
        if ((st = dse_worker_refresh(w, err))) return st;
        for (int k = 0; w->plan.halving == DSE_SWEEP_HALVING_SH && k < w->plan.n_rungs; k++)
            if ((st = dse_worker_try_decide(w, k, err))) return st;
        if (dse_worker_all_final(w)) return DSE_OK;
        if ((st = claim_order(w, err))) return st;
        int worked = 0, looked = 0;
        struct gpu_view view = { 0, 0, 0 };
        struct cand *waits = NULL;       /* the smallest candidate that waits for memory */
        int64_t wait_need = 0;
        /* pass 0: candidates whose workers have not kept dying; pass 1, if pass 0 left some
         * for that and claimed nothing: those, so that one that kills its workers is still
         * retried, but never before the others (a lone worker dies with it) */
        int put_off = 0;
        for (int k = 0; k < 2 * w->n && !worked; k++) {
            const int pass = k >= w->n, i = k % w->n;
            if (pass && !put_off) break;
            struct cand *c = &w->c[w->order[i]];
            int target, rung, have;
            const char *why;
            struct dse_lease cur, mine;
            if (dse_sweep_next(&c->rec, &w->plan, w->rung, &target, &rung) <= DSE_ACT_WAIT) continue;
            if (!dse_worker_lease_free(w, c, &cur, &have, &why)) continue;
            int64_t need = 0;
            enum dse_gpu_fit fit = DSE_GPU_FITS;
            if (w->gpu >= 0) { /* claim only what fits now: decided here, at claim time */
                if (!looked && (st = dse_worker_gpu_look(w, &view, err))) return st;
                looked = 1;
                need = dse_sweep_gpu_need(dse_worker_cand_estimate(w, c), dse_rec_oom_streak(&c->rec));
                fit = dse_sweep_gpu_fit(view.free, view.total, view.held, need);
                if (fit == DSE_GPU_NEVER && !dse_worker_gpu_never_anywhere(w, need)) continue; /* for a larger GPU */
                int ok = 0;
                if (fit == DSE_GPU_FITS && (st = dse_worker_gpu_reserve(w, need, &view, &ok, err))) return st;
                if (fit != DSE_GPU_NEVER && !ok) {
                    if (!waits || need < wait_need) waits = c, wait_need = need;
                    continue;
                }
            }
            struct dse_lease_count cnt = { .epochs = c->rec.n_epochs, .saved = dse_worker_saved_iter(w, c) };
            if (have && !cur.released) /* its worker died: counted if without progress */
                dse_lease_crashes(&cur, &w->me, &cnt);
            /* its workers keep dying: the others first */
            if ((dse_lease_verdict(&cnt, w->o.max_crashes) != DSE_LEASE_TRAIN) != pass) {
                put_off += !pass;
                dse_worker_gpu_unreserve(w);
                continue;
            }
            int won;
            if ((st = dse_lease_claim(w->dir, c->id, c->lease_gen, &w->me, w->o.lease_s, &cnt, &mine, &won, err))) {
                dse_worker_gpu_unreserve(w);
                return st;
            }
            if (!won) {
                dse_worker_gpu_unreserve(w);
                continue;
            }
            if (have && !cur.released) {
                char who[100];
                dse_lease_holder_name(&cur, who, sizeof who);
                dse_worker_say(w, "%s: taking over from %s (%s)", c->id, who, why);
            } else if (!have && why[0]) {
                char path[4200];
                dse_lease_path(w->dir, c->id, c->lease_gen, path, sizeof path);
                dse_worker_say(w, "%s: taking over (%s: %s)", c->id, path, why);
            }
            st = fit == DSE_GPU_NEVER ? never_fits(w, c, &mine, need, err) : work_on(w, c, &mine, &cnt, err);
            dse_worker_gpu_unreserve(w);
            if (st) {
                dse_worker_let_go(w, &mine);
                return st;
            }
            worked = 1;
            announced_wait = 0;
        }
        if (worked) {
            nap = 0.05;
            continue;
        }
        /* Nothing to train: record what has ended (and, with asha, reached a rung) and propose
         * the next, but only when every proposal that has not ended is being trained by a live
         * worker or waits at an asha rung for results still to come (the next proposal's, among
         * them: asha's rule, grow the bottom rung when nothing can be promoted). One that is
         * free (a dead worker's, a lease being replaced, no memory for it on this GPU) is
         * claimed on a later pass instead, so one worker at a time steps only when all have
         * ended or wait, and its search repeats exactly. */
        int all_busy = 1;
        for (int i = 0; i < w->n && all_busy; i++) {
            int target, rung;
            all_busy = dse_rec_final(&w->c[i].rec) || w->c[i].live ||
                       dse_sweep_next(&w->c[i].rec, &w->plan, w->rung, &target, &rung) == DSE_ACT_WAIT;
        }
        if (w->evolution && !w->ended && all_busy) {
            int changed = 0;
            char what[600];
            if ((st = dse_search_step(w->s, w->dir, &w->plan, dse_worker_rec_of, w, &changed, what, sizeof what, err))) return st;
            if (what[0]) dse_worker_say(w, "%s", what);
            if (changed) {
                nap = 0.05;
                continue;
            }
        }
        if (waits && announced_wait != 2) {
            dse_worker_say(w, "nothing fits on cuda:%d now: %s needs %.0f MiB (training estimate %.0f MiB at batch %d, plus "
         "margin), %.0f MiB are free and %.0f MiB promised to this command's other workers there; waiting "
         "for memory", w->gpu, waits->id, MIB(wait_need), MIB(waits->est_bytes > 0 ? waits->est_bytes : 0),
         w->s->train.batch, MIB(view.free), MIB(view.held));
            announced_wait = 2;
        } else if (!waits && announced_wait != 1) {
            char prog[200];
            dse_worker_progress_text(w, 0, prog, sizeof prog);
            dse_worker_say(w, "nothing free to train; waiting for other workers (%s)", prog);
            announced_wait = 1;
        }
        sleep_s(nap);
        nap = nap * 2 > 1.0 ? 1.0 : nap * 2;
    }
}


enum dse_status dse_worker_run(const struct worker_job *j, struct host *h, int slot, int thread,
                               int *finished, char *name, int name_size, struct dse_err *err) {
    struct worker w;
    enum dse_status st = dse_worker_init(&w, j->s, j->dir, j->o, j->plan, j->deadline, err);
    w.host = h;
    w.me.thread = thread;
    dse_strlcpy(w.me.cmd, j->cmd, sizeof w.me.cmd);
    dse_lease_me_name(&w.me, w.name, sizeof w.name);
    if (name) dse_strlcpy(name, w.name, name_size);
    if (!st && j->book) w.book = j->book, w.slot = slot, w.gpu = j->book->slot_gpu[slot];
    if (!st) st = worker_loop(&w, err);
    if (!st && finished) {
        st = dse_worker_refresh(&w, err);
        *finished = !st && dse_worker_all_final(&w);
    }
    dse_worker_deinit(&w);
    return st;
}

/* The temporary files writers killed mid-write left in the sweep's folders (a checkpoint
 * folder's go when its lease holder prunes it): dse_fs_clean_temps's rule, a minute after
 * this host's dead writer, a day after another host's, never a live one's. */
