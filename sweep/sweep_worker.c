/* sweep_worker.c: a training sweep's worker and its view of the sweep directory: its
 * candidates and their records (refreshed from the files, with an evolution sweep's new
 * proposals), its progress line, and the rung decisions it takes once a rung is complete
 * (successive halving; ASHA's promotions: sweep/asha.c). The claim loop: sweep/sweep_loop.c;
 * the workers as a whole: sweep/worker_impl.h. */
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

void dse_worker_say(const struct worker *w, const char *fmt, ...) {
    if (!w->o.log) return;
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* one write per line: the workers share the stream (threads of this process through
     * the FILE, which the lock keeps whole; other processes through the descriptor) */
    flockfile(w->o.log);
    fprintf(w->o.log, "dse sweep [%s]: %s\n", w->name, line);
    fflush(w->o.log);
    funlockfile(w->o.log);
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

int dse_worker_lease_free(struct worker *w, struct cand *c, struct dse_lease *l, int *have, const char **why) {
    int missing;
    *have = 0;
    *why = "";
    if (!c->lease_gen) return 1;
    if (dse_lease_read(w->dir, c->id, c->lease_gen, l, &missing, NULL)) {
        if (missing) return 0; /* gone or being replaced: next pass */
        return dse_lease_free_unreadable(c->lease_gen, &c->obs, w->o.lease_s, dse_lease_mono(), why);
    }
    *have = 1;
    return dse_lease_free(l, &c->obs, &w->me, dse_lease_wall(), dse_lease_mono(), why);
}


static int cmp_by_id(const void *a, const void *b);

/* An evolution sweep: add the log's proposals this worker does not know yet (their
 * candidate files made first, if a killed proposer left them unmade). */
static enum dse_status search_sync(struct worker *w, struct dse_err *err) {
    struct dse_search_log lg;
    enum dse_status st;
    if ((st = dse_search_read(w->dir, &lg, err))) return st;
    w->ended = lg.ended;
    const int reps = w->s->replicates, n = lg.n_prop * reps; /* each proposal's replicates */
    if (n > w->n) {
        if ((st = dse_search_files(w->s, w->dir, &lg, err))) goto out;
        if (n > w->cap) {
            int cap = n * 2;
            struct cand *c = realloc(w->c, sizeof *c * (size_t)cap);
            struct idref *b = c ? realloc(w->by_id, sizeof *b * (size_t)cap) : NULL;
            if (c) w->c = c;
            if (b) w->by_id = b;
            if (!c || !b) {
                st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
                goto out;
            }
            w->cap = cap;
        }
        for (int i = w->n; i < n; i++) {
            memset(&w->c[i], 0, sizeof w->c[i]);
            dse_strlcpy(w->c[i].id, lg.prop[i / reps].id, sizeof w->c[i].id);
            dse_space_id_replicate(w->c[i].id, i % reps);
            w->c[i].index = lg.prop[i / reps].index;
            dse_rec_init(&w->c[i].rec);
        }
        w->n = n;
        for (int i = 0; i < w->n; i++) w->by_id[i] = (struct idref){ w->c[i].id, i };
        qsort(w->by_id, (size_t)w->n, sizeof *w->by_id, cmp_by_id);
    }
out:
    dse_search_log_free(&lg);
    return st;
}

const struct dse_rec *dse_worker_rec_of(void *arg, const char *id) {
    struct worker *w = arg;
    int i = find_cand(w, id);
    return i >= 0 && w->c[i].read_ok ? &w->c[i].rec : NULL;
}

enum dse_status dse_worker_refresh(struct worker *w, struct dse_err *err) {
    enum dse_status st;
    if (w->evolution && (st = search_sync(w, err))) return st;
    for (int i = 0; i < w->n; i++) {
        struct cand *c = &w->c[i];
        if (c->read_ok && dse_rec_final(&c->rec)) continue;
        if ((st = dse_rec_read(w->dir, c->id, &c->rec, err))) return st;
        c->read_ok = 1;
        c->lease_gen = 0;
    }
    if ((st = dse_lease_scan(w->dir, lease_seen, w, err))) return st;
    int *running = calloc((size_t)(w->n ? w->n : 1), sizeof *running);
    struct dse_rec *recs = malloc(sizeof *recs * (size_t)(w->n ? w->n : 1));
    const struct dse_rec **ptrs = malloc(sizeof *ptrs * (size_t)(w->n ? w->n : 1));
    if (!running || !recs || !ptrs) {
        free(running), free(recs), free(ptrs);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    for (int i = 0; i < w->n; i++) ptrs[i] = &w->c[i].rec;
    st = dse_rungs_load(w->dir, &w->plan, ptrs, w->n, w->s->replicates, w->rung, err);
    free(ptrs);
    if (st) {
        free(running), free(recs);
        return st;
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

int dse_worker_all_final(const struct worker *w) {
    if (w->evolution && !w->ended) return 0;
    for (int i = 0; i < w->n; i++)
        if (!dse_rec_final(&w->c[i].rec)) return 0;
    return 1;
}

void dse_worker_progress_text(const struct worker *w, int self, char *buf, int size) {
    struct dse_tally t = w->tally;
    int final = t.n - t.by_status[DSE_REC_PENDING] - t.pruned, unpruned = t.n - t.pruned;
    char eta[32];
    t.running += self;
    dse_fmt_duration(eta, sizeof eta, dse_tally_eta(&t));
    snprintf(buf, (size_t)size, "%d of %d finished, %d running, ETA %s", final, unpruned, t.running, eta);
}

/* ---- rung decisions -------------------------------------------------------------------- */

enum dse_status dse_worker_try_decide(struct worker *w, int k, struct dse_err *err) {
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
            dse_sweep_rank_str(w->plan.rank), n, keep, out);
    for (int j = 0; j < n; j++) {
        int i = order[j];
        char t[40];
        dse_fmt_shortest(t, sizeof t, top1[i], 1); /* as the candidate file has it */
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
    if (!existed) dse_worker_say(w, "rung %d (epoch %d) decided: %d of %d go on (ranked by %s)", k, epoch, keep, n,
                      dse_sweep_rank_what(w->plan.rank));
done:
    free(top1), free(bytes), free(ids), free(order), free(prank), free(text);
    return st;
}

static int cmp_by_id(const void *a, const void *b) {
    return strcmp(((const struct idref *)a)->id, ((const struct idref *)b)->id);
}

enum dse_status dse_worker_init(struct worker *w, const struct dse_space *s, const char *dir,
                                const struct dse_sweep_opts *o, const struct dse_sweep_plan *plan,
                                double deadline, struct dse_err *err) {
    uint64_t *idx = NULL, n = 0;
    memset(w, 0, sizeof *w);
    w->s = s, w->dir = dir, w->o = *o, w->plan = *plan;
    w->gpu = w->slot = -1;
    dse_lease_me_init(&w->me);
    dse_lease_me_name(&w->me, w->name, sizeof w->name);
    w->deadline = deadline;
    w->evolution = dse_strategy_logged(s->search.strategy);
    enum dse_status st = w->evolution ? DSE_OK : dse_space_indices(s, 10000000ULL, &idx, &n, err);
    if (st) return st;
    const int reps = s->replicates; /* each index's replicates, one record each (dse_space_rep_id) */
    w->c = calloc((size_t)(n ? n * (uint64_t)reps : 1), sizeof *w->c);
    w->by_id = calloc((size_t)(n ? n * (uint64_t)reps : 1), sizeof *w->by_id);
    if (!w->c || !w->by_id) {
        free(idx);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    w->n = w->cap = (int)n * reps;
    for (int i = 0; i < w->n; i++) {
        struct dse_mp mp;
        dse_space_candidate(s, idx[i / reps], &mp);
        dse_space_rep_id(&mp, i % reps, w->c[i].id);
        w->c[i].index = idx[i / reps];
        dse_rec_init(&w->c[i].rec);
    }
    for (int i = 0; i < w->n; i++) w->by_id[i] = (struct idref){ w->c[i].id, i };
    free(idx);
    qsort(w->by_id, (size_t)w->n, sizeof *w->by_id, cmp_by_id);
    return DSE_OK;
}

void dse_worker_deinit(struct worker *w) {
    for (int i = 0; i < w->n; i++) dse_rec_deinit(&w->c[i].rec);
    for (int k = 0; k < DSE_SWEEP_RUNGS_MAX; k++) dse_rung_deinit(&w->rung[k]);
    free(w->c);
    free(w->by_id);
    free(w->order);
}

/* Having won c's lease on a GPU worker: the candidate needs need_bytes, more than any GPU
 * of this command has: it can never be trained here. */

int dse_worker_host_break(struct host *h, const char *id) {
    pthread_mutex_lock(&h->mu);
    const int first = !atomic_load(&h->broken);
    if (first) {
        dse_strlcpy(h->culprit, id, sizeof h->culprit);
        atomic_store(&h->broken, 1);
    }
    pthread_mutex_unlock(&h->mu);
    return first;
}

int dse_worker_host_broken(struct host *h) {
    return atomic_load(&h->broken);
}

int dse_worker_file_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}
