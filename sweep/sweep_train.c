/* sweep_train.c: `dse sweep SPACE` trains: workers claim candidates with leases
 * (sweep/lease.c), train them with the engine (engine/train.h) from their last
 * checkpoint, write per-epoch results into the candidate files, and, with successive
 * halving, pause candidates at rungs and decide the rungs once every candidate of a rung
 * has reached it (with ASHA, promote them as results arrive instead: sweep/asha.c). CPU workers are processes; with --gpus, the workers of one GPU are
 * threads of one process (one CUDA context, so their kernels overlap), each bound to the
 * GPU and claiming only candidates whose memory estimate fits in what is free there; out
 * of memory re-queues. The protocol and why each step is safe: docs/sweep-dir.md
 * ("Leases", "Sweeps on shared GPUs"). */
#include "sweep/sweep_impl.h"
#include "sweep/search.h"

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
#include "engine/data.h"
#include "engine/slices.h"
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
    o->ckpt_every_s = 300;
    o->progress_every_s = DSE_TRAIN_PROGRESS_EVERY_S;
    o->per_gpu = 0; /* auto */
    o->max_oom = 4;
    o->plan.precision = DSE_CUDA_MATH_FP32;
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
    int            est_known;
    int64_t        est_bytes;  /* the analyzer's training memory at the training batch; -1 unknown */
};

struct idref {
    const char *id;
    int         i;
};

/* ---- GPUs shared by one command's workers ------------------------------------------------ */

#define BOOK_SLOTS 512 /* workers one command may start */

/* What the workers of one command share about their GPUs, in memory the command maps
 * (shared) before it forks them: the device of each worker slot, the device memory each
 * has promised to a candidate it claimed and has not allocated yet (two workers on one
 * GPU would otherwise both count the same free memory), and each GPU's total once a
 * worker has seen it. A robust process-shared mutex guards it, so a worker killed while
 * holding it blocks nobody. Other commands and other users are not in it: cudaMemGetInfo
 * counts their memory once they have allocated it, and a race with them ends at worst in
 * an out-of-memory error, which re-queues the candidate. */
struct gpu_book {
    pthread_mutex_t mu;
    int             slot_gpu[BOOK_SLOTS];
    int64_t         slot_held[BOOK_SLOTS];
    int             n_gpus;
    int             gpu[DSE_SWEEP_GPUS_MAX];
    uint64_t        total[DSE_SWEEP_GPUS_MAX]; /* 0: not seen yet */
};

static struct gpu_book *book_new(const struct dse_sweep_opts *o, struct dse_err *err) {
    /* MAP_ANONYMOUS is not POSIX 2008; a shared mapping of /dev/zero is the same thing */
    int fd = open("/dev/zero", O_RDWR);
    if (fd < 0) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "/dev/zero: %s", strerror(errno)), NULL;
    void *p = mmap(NULL, sizeof(struct gpu_book), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "mmap: %s", strerror(errno)), NULL;
    struct gpu_book *b = p;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    int rc = pthread_mutex_init(&b->mu, &a);
    pthread_mutexattr_destroy(&a);
    if (rc) {
        munmap(p, sizeof *b);
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "pthread_mutex_init: %s", strerror(rc)), NULL;
    }
    b->n_gpus = o->n_gpus;
    for (int g = 0; g < o->n_gpus; g++) b->gpu[g] = o->gpus[g];
    return b;
}

static void book_free(struct gpu_book *b) {
    if (!b) return;
    pthread_mutex_destroy(&b->mu);
    munmap(b, sizeof *b);
}

static void book_lock(struct gpu_book *b) {
    if (pthread_mutex_lock(&b->mu) == EOWNERDEAD) pthread_mutex_consistent(&b->mu); /* its holder died */
}

static void book_unlock(struct gpu_book *b) {
    pthread_mutex_unlock(&b->mu);
}

/* ---- the worker threads of one process ------------------------------------------------------ */

/* The workers of one GPU are threads of one process (docs/sweep-dir.md, "Sweeps on shared
 * GPUs"): a process has one CUDA context per device, in which the kernels of its workers'
 * streams run at once, while separate processes only take turns on a GPU (unless the user
 * runs MPS). Each thread is a whole worker: its own model, CUDA stream and handles, lease
 * identity (token; name host:pid.k) and heartbeat. What they share is this: a CUDA error
 * may leave the process's context unusable, so the first worker to meet one fails its
 * candidate (as a lone worker does) and marks the process broken; the others re-queue
 * theirs and stop, and the process exits EXIT_RESTART for a fresh one. */
struct host {
    pthread_mutex_t mu;
    pthread_cond_t  cv;                    /* a worker thread finished */
    int             running;               /* worker threads not finished yet (under mu) */
    atomic_int      broken;                /* set once: a worker met a CUDA error */
    char            culprit[DSE_ID_SIZE];  /* its candidate (under mu) */
    struct dse_cuda_conv_pool *pool;       /* GPU workers: cuDNN's choices, found once per shape
                                              for all the process's candidates (engine/cuda/cuda.h,
                                              "shared choices"); plain host memory */
};

static int host_init(struct host *h) {
    memset(h, 0, sizeof *h);
    atomic_init(&h->broken, 0);
    if (pthread_mutex_init(&h->mu, NULL)) return -1;
    if (pthread_cond_init(&h->cv, NULL)) {
        pthread_mutex_destroy(&h->mu);
        return -1;
    }
    struct dse_err e = { 0 };
    if (dse_cuda_conv_pool_new(&h->pool, &e)) {
        pthread_cond_destroy(&h->cv);
        pthread_mutex_destroy(&h->mu);
        return -1;
    }
    return 0;
}

static void host_deinit(struct host *h) {
    dse_cuda_conv_pool_free(h->pool);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
}

/* A CUDA error while training candidate id: 1 if it is the process's first (id is taken
 * for the cause), 0 if another worker's came first (this one most likely only met the
 * broken context). */
static int host_break(struct host *h, const char *id) {
    pthread_mutex_lock(&h->mu);
    const int first = !atomic_load(&h->broken);
    if (first) {
        dse_strlcpy(h->culprit, id, sizeof h->culprit);
        atomic_store(&h->broken, 1);
    }
    pthread_mutex_unlock(&h->mu);
    return first;
}

static int host_broken(struct host *h) {
    return atomic_load(&h->broken);
}

struct worker {
    struct host            *host;        /* the process's workers */
    const struct dse_space *s;
    const char             *dir;
    struct dse_sweep_opts   o;
    struct dse_sweep_plan   plan;
    struct dse_lease_me     me;
    char                    name[128];   /* host:pid, or host:pid.k for thread k of several */
    struct cand            *c;
    int                     n, cap;      /* an evolution sweep's grow as the search proposes */
    int                     evolution;   /* the candidates are the search log's proposals (sweep/search.h) */
    int                     ended;       /* evolution: the log says the search has ended */
    struct idref           *by_id;       /* the candidates sorted by id */
    int                    *order;       /* c[] in the order claims look (claim_order) */
    struct dse_rung         rung[DSE_SWEEP_RUNGS_MAX];
    double                  deadline;    /* monotonic; 0: none */
    struct dse_tally        tally;       /* at the last refresh */
    /* GPU workers (docs/sweep-dir.md, "Sweeps on shared GPUs") */
    int                     gpu;         /* CUDA device index; -1: the CPU */
    int                     slot;        /* this worker's slot in book */
    struct gpu_book        *book;        /* shared with the command's other workers; NULL on the CPU */
    int                     gpu_seen;    /* its memory was looked at (this process has a CUDA context) */
    int64_t                 held;        /* bytes promised in book for a claim, not allocated yet */
    double                  claim_free_mib, claim_need_mib; /* at the last claim */
    int                     restart;     /* this worker's CUDA error broke its process (host_break) */
};

static void say(const struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(const struct worker *w, const char *fmt, ...) {
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

/* Whether candidate c's current lease may be taken (dse_lease_free); *l gets it (*have = 1)
 * if it reads. One that exists but does not read (garbage, empty, a directory) is free
 * once this worker has seen it so for its own lease time (dse_lease_free_unreadable). */
static int lease_free(struct worker *w, struct cand *c, struct dse_lease *l, int *have, const char **why) {
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

static const struct dse_rec *rec_of(void *arg, const char *id) {
    struct worker *w = arg;
    int i = find_cand(w, id);
    return i >= 0 && w->c[i].read_ok ? &w->c[i].rec : NULL;
}

/* Reread every candidate that is not final, the leases and the rung decisions. */
static enum dse_status refresh(struct worker *w, struct dse_err *err) {
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
    st = dse_rungs_load(w->dir, &w->plan, ptrs, w->n, w->rung, err);
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

static int all_final(const struct worker *w) {
    if (w->evolution && !w->ended) return 0;
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

/* ---- this worker's GPU ------------------------------------------------------------------ */

#define MIB(b) ((double)(b) / 1048576.0)

/* Its GPU as the worker sees it now. */
struct gpu_view {
    uint64_t free, total;  /* cudaMemGetInfo: the whole device, other processes included */
    uint64_t held;         /* promised to this command's other workers on it, not allocated yet */
};

/* Under the book's lock: ask the device (the first time, this creates the process's CUDA
 * context), add up what the other slots on it hold, publish its total. */
static enum dse_status gpu_view_locked(struct worker *w, struct gpu_view *v, struct dse_err *err) {
    size_t f = 0, t = 0;
    enum dse_status st = dse_cuda_mem_info(w->gpu, &f, &t, err);
    if (st == DSE_ERR_UNSUPPORTED) {
        const char *vis = getenv("CUDA_VISIBLE_DEVICES");
        char msg[256];
        dse_strlcpy(msg, err->msg, sizeof msg);
        return dse_err_set(err, st, NULL, 0, "--gpus %d: %s (--gpus counts the devices this process sees: %s%s)",
                           w->gpu, msg, vis ? "CUDA_VISIBLE_DEVICES=" : "CUDA_VISIBLE_DEVICES is not set",
                           vis ? vis : "");
    }
    if (st) return st;
    v->free = f, v->total = t, v->held = 0;
    for (int k = 0; k < BOOK_SLOTS; k++)
        if (k != w->slot && w->book->slot_gpu[k] == w->gpu && w->book->slot_held[k] > 0)
            v->held += (uint64_t)w->book->slot_held[k];
    for (int g = 0; g < w->book->n_gpus; g++)
        if (w->book->gpu[g] == w->gpu) w->book->total[g] = t;
    return DSE_OK;
}

static enum dse_status gpu_look(struct worker *w, struct gpu_view *v, struct dse_err *err) {
    book_lock(w->book);
    enum dse_status st = gpu_view_locked(w, v, err);
    book_unlock(w->book);
    if (!st && !w->gpu_seen) {
        w->gpu_seen = 1;
        say(w, "on cuda:%d: %.0f of %.0f MiB free", w->gpu, MIB(v->free), MIB(v->total));
    }
    return st;
}

/* Look again under the lock and, if need_bytes fits, promise it (*ok = 1): the other
 * workers of this command then count it as taken until this one has allocated. */
static enum dse_status gpu_reserve(struct worker *w, int64_t need_bytes, struct gpu_view *v, int *ok,
                                   struct dse_err *err) {
    book_lock(w->book);
    enum dse_status st = gpu_view_locked(w, v, err);
    *ok = !st && dse_sweep_gpu_fit(v->free, v->total, v->held, need_bytes) == DSE_GPU_FITS;
    if (*ok) {
        w->book->slot_held[w->slot] = w->held = need_bytes;
        w->claim_free_mib = MIB(v->free - (v->held < v->free ? v->held : v->free));
        w->claim_need_mib = MIB(need_bytes);
    }
    book_unlock(w->book);
    return st;
}

/* The promise is kept until the candidate's memory is allocated (its first iterations
 * ran) or its training ended. */
static void gpu_unreserve(struct worker *w) {
    if (!w->book || !w->held) return;
    book_lock(w->book);
    w->book->slot_held[w->slot] = w->held = 0;
    book_unlock(w->book);
}

/* 1 if need_bytes is more than every GPU of this command has in all (each one's total
 * known): no worker of it can ever train the candidate. 0 while some GPU is not known
 * yet, or one is large enough (its workers will take it). */
static int gpu_never_anywhere(struct worker *w, int64_t need_bytes) {
    uint64_t most = 0;
    int known = 1;
    book_lock(w->book);
    for (int g = 0; g < w->book->n_gpus; g++) {
        known &= w->book->total[g] > 0;
        if (w->book->total[g] > most) most = w->book->total[g];
    }
    book_unlock(w->book);
    return known && need_bytes > 0 && (uint64_t)need_bytes > most;
}

static int64_t cand_estimate(struct worker *w, struct cand *c) {
    if (!c->est_known) {
        c->est_known = 1;
        if (dse_sweep_train_mem(w->s, c->index, w->s->train.batch, &c->est_bytes, NULL)) c->est_bytes = -1;
    }
    return c->est_bytes;
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
    if (!existed) say(w, "rung %d (epoch %d) decided: %d of %d go on (ranked by %s)", k, epoch, keep, n,
                      dse_sweep_rank_what(w->plan.rank));
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
    if (sg->lost || sg->wst || atomic_load(&sg->hb->lost) || host_broken(sg->w->host)) return 1;
    return sg->w->deadline > 0 && dse_lease_mono() > sg->w->deadline;
}

/* Results of an epoch: into the record and, if the lease is still held, into the file.
 * (The epoch's checkpoint is written just after this; if the worker dies in between, the
 * next one resumes from the previous checkpoint and computes the same epoch again.) */
static void seg_progress(void *arg, const struct dse_train_progress *p) {
    struct seg *sg = arg;
    struct worker *w = sg->w;
    struct dse_rec *r = &sg->c->rec;
    gpu_unreserve(w); /* an iteration ran: its memory is allocated, and cudaMemGetInfo shows it */
    if (!p->done) { /* for dse status: where it is and how fast, in the next renewal */
        pthread_mutex_lock(&sg->hb->mu);
        sg->hb->epoch = p->epoch, sg->hb->iter = p->iter, sg->hb->iters = p->iters;
        sg->hb->epoch_s = p->img_per_s > 0 ? (double)p->iters * w->s->train.batch / p->img_per_s : 0;
        pthread_mutex_unlock(&sg->hb->mu);
        const double now = dse_lease_mono(); /* a long epoch in a log still shows it moves */
        if (w->o.progress_every_s > 0 && now - sg->t_said >= w->o.progress_every_s) {
            say(w, "%s epoch %d/%d: iter %d/%d, train loss %.4f, %.0f img/s", sg->c->id, p->epoch + 1,
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
    progress_text(w, 1, prog, sizeof prog);
    say(w, "%s epoch %d/%d: train loss %.4f, test loss %.4f, top-1 %.2f%%, top-5 %.2f%%, %.0f img/s | %s",
        sg->c->id, p->epoch + 1, w->plan.epochs, p->loss, p->ep.test_loss, 100 * p->ep.top1, 100 * p->ep.top5,
        p->img_per_s, prog);
    int said = 0; /* once per candidate: the record keeps every epoch's count */
    for (int k = 0; k < p->epoch && k < r->n_epochs; k++) said |= r->ep[k].unpredicted > 0;
    if (p->ep.unpredicted && !said)
        say(w, "%s epoch %d: warning: %d test class%s never predicted (a dead classifier unit?); said once per "
            "candidate", sg->c->id, p->epoch + 1, p->ep.unpredicted, p->ep.unpredicted == 1 ? "" : "es");
}

/* A GPU stretch's word about its pinned cuDNN choices (engine/train.c: loaded, written, or
 * another GPU's set aside), in the worker's log. */
static void seg_note(void *arg, enum dse_train_note kind, const char *text) {
    (void)kind; /* the text says it */
    struct seg *sg = arg;
    say(sg->w, "%s: %s", sg->c->id, text);
}

static void ckpt_path(const struct worker *w, const char *id, int epoch, char *buf, int size) {
    snprintf(buf, (size_t)size, "%s/checkpoints/%s/epoch-%d.ckpt", w->dir, id, epoch);
}

static int file_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* The iteration of c's checkpoint within its next epoch (epoch-<n+1>.part.ckpt), 0 if
 * there is none or it does not read: how far the work saved inside an epoch has got. */
static int64_t saved_iter(const struct worker *w, const struct cand *c) {
    char part[4200];
    struct dse_ckpt_info info;
    snprintf(part, sizeof part, "%s/checkpoints/%s/epoch-%d.part.ckpt", w->dir, c->id, c->rec.n_epochs + 1);
    if (!file_exists(part) || dse_checkpoint_info(part, &info, NULL)) return 0;
    free(info.class_names);
    return info.iter;
}

/* Keep only the newest checkpoint at or below `keep` (the model to resume from, or the
 * trained model); older ones go, and so do temporary files a killed writer left. Only
 * inside the sweep directory: a checkpoints/<id> that is a link is left alone. */
static void prune_checkpoints(const struct worker *w, const char *id, int keep) {
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

/* The conv strategies are chosen once per candidate, before its first epoch, and kept in
 * its checkpoint folder: every stretch of its training, by whichever worker, then runs
 * the same strategies, so a resumed run is the uninterrupted one bit for bit. A shape this
 * machine has chosen for before (its cache for the worker's threads, engine/conv_cache.c)
 * takes that choice, so the same candidate in another sweep here repeats its bits; only new
 * shapes are timed, and added to the machine's cache. (On a GPU the first stretch pins
 * cuDNN's choices there itself: train_stretch, engine/train.c.) */
static enum dse_status pretime_batch(const struct dse_net *net, const struct dse_train_opts *o, int batch,
                                     const char *path, struct dse_err *err);

/* With --ranks-per-candidate P a rank's model takes its share of the batch (its run of the
 * batch's slices, engine/slices.h): the choices are timed for every size the ranks run, so
 * that every rank and every stretch uses the same strategies. */
static enum dse_status pretime_conv(const struct dse_net *net, const struct dse_train_opts *o, const char *path,
                                    struct dse_err *err) {
    if (file_exists(path)) return DSE_OK;
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

static void train_opts(const struct worker *w, struct dse_train_opts *o) {
    *o = w->s->train; /* the space's recipe (engine/train.def); the rest is this worker's */
    o->data = w->s->dataset; /* the space reader spells names as the engine does */
    o->data_root = w->o.data_root;
    o->epochs = w->plan.epochs;
    o->threads = w->o.threads;
    o->conv_algo = w->plan.conv;
    o->dist = w->o.dist; /* --ranks-per-candidate: NULL alone */
    o->ckpt_every_s = w->o.ckpt_every_s, o->ckpt_every_steps = w->o.ckpt_every_steps;
    o->progress_every_s = w->o.progress_every_s;
    if (w->gpu >= 0) {
        o->dev.device.kind = DSE_DEVICE_CUDA;
        o->dev.device.index = w->gpu;
        o->dev.math = w->plan.precision;
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

static enum dse_status follow_send(struct dse_dist *d, uint64_t index, const struct dse_train_opts *o,
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
static const char *worker_device(const struct worker *w, char *buf, int size) {
    if (w->gpu >= 0) snprintf(buf, (size_t)size, "cuda:%d", w->gpu);
    else snprintf(buf, (size_t)size, "cpu");
    return buf;
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

static enum dse_status push_attempt(struct worker *w, struct dse_rec *r, const struct dse_lease *l, int from,
                                    struct dse_err *err) {
    char dev[16];
    if (!dse_rec_push_attempt(r, w->name, l->gen, w->o.threads, worker_device(w, dev, sizeof dev),
                              dse_cuda_math_str(w->gpu >= 0 ? w->plan.precision : DSE_CUDA_MATH_FP32), from))
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    return DSE_OK;
}

/* What a plan may not combine with the space yet: halving (halving, not NONE) with
 * replicates or with evolution, and an epochs budget counted at other epochs per candidate
 * than the plan trains (epochs). where: "" or "DIR/plan.json" (prefixes the halving
 * messages); who: what asks for those epochs ("--budget 5e", or the plan file). */
static enum dse_status plan_supported(const struct dse_space *s, enum dse_sweep_halving halving, int epochs,
                                      const char *where, const char *who, struct dse_err *err) {
    const char *colon = where[0] ? ": " : "";
    if (halving && s->replicates > 1)
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "%s%s%s (--early-stop %s) with replicates = %d is not "
                           "supported yet: a rung would rank single replicates, not their mean", where, colon,
                           dse_sweep_halving_what(halving), dse_sweep_halving_str(halving), s->replicates);
    if (halving && s->search.strategy == DSE_SEARCH_EVOLUTION)
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "%s%s%s (--early-stop %s) with strategy \"evolution\" "
                           "is not supported yet: evolution trains each proposal to the full budget", where, colon,
                           dse_sweep_halving_what(halving), dse_sweep_halving_str(halving));
    if (s->search.budget_epochs && epochs != s->train.epochs)
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, s->search.line, "search.budget_epochs counts train.epochs "
                           "= %d per candidate, and %s trains %d: set train.epochs in the space instead",
                           s->train.epochs, who, epochs);
    return DSE_OK;
}

/* 1 if the space's search minimizes a measured cost (objective.def's MEASURED): the worker
 * that finishes a candidate measures it into the record. */
static int wants_measured(const struct dse_space *s) {
    for (int i = 0; s->search.strategy == DSE_SEARCH_EVOLUTION && i < s->search.n_obj; i++)
        if (dse_evo_cost_measured((enum dse_evo_cost)s->search.obj[i])) return 1;
    return 0;
}

/* objective.def's latency_ms: net's inference at batch 1 on the CPU with `threads` engine
 * threads, the median of 20 forward passes after 3 that warm up (and time the conv
 * strategies), in ms: what dse bench NET --mode infer --batch 1 measures. */
#define LATENCY_RUNS 20
static enum dse_status measure_latency(const struct dse_net *net, int threads, double *ms, struct dse_err *err) {
    struct dse_model_opts mo = { .batch = 1, .threads = threads, .seed = 1, .init = DSE_INIT_MSRA, .init_std = 0.01f,
                                 .inference = 1 };
    struct dse_model *m = NULL;
    enum dse_status st = dse_model_new(net, &mo, &m, err);
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
    o.seed += (uint64_t)r->replicate; /* replicate r of a candidate trains with train.seed + r */
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
    snprintf(resume, sizeof resume, "checkpoints/%s", c->id); /* made inside the directory, no link followed */
    if ((st = dse_fs_dir_in(w->dir, resume, 1, NULL, err))) goto out;
    int from = 0;
    for (int e = r->n_epochs < target ? r->n_epochs : target; e >= 1 && !from; e--) {
        ckpt_path(w, c->id, e, resume, sizeof resume);
        if (file_exists(resume)) from = e;
    }
    if (from < r->n_epochs) r->n_epochs = from; /* results past the checkpoint are computed again */
    /* a checkpoint within the next epoch (a killed worker's, issue #18 item 2): resume there */
    char part[4200];
    snprintf(part, sizeof part, "%s/epoch-%d.part.ckpt", ckdir, from + 1);
    int within = from < target && w->gpu < 0 && file_exists(part);
    if (from < target) {
        if (w->gpu >= 0) { /* cuDNN's choices, pinned by the first stretch (engine/train.c) */
            snprintf(conv, sizeof conv, "%s/cudnn-%s-%s.txt", ckdir, dse_cuda_math_str(w->plan.precision),
                     w->plan.nondeterministic ? "any" : "det");
            o.conv_cache = conv, o.note = seg_note;
        } else if (w->plan.conv == DSE_ALGO_AUTO) {
            snprintf(conv, sizeof conv, "%s/conv.txt", ckdir); /* whatever the threads: the same bits */
            if ((st = pretime_conv(&net, &o, conv, err))) goto candidate_failed;
            o.conv_cache = conv;
        }
        if ((st = push_attempt(w, r, l, from, err))) goto out;
        char span[64], rung[48] = "";
        if (from + 1 == target) snprintf(span, sizeof span, "epoch %d", target);
        else snprintf(span, sizeof span, "epochs %d-%d", from + 1, target);
        for (int k = 0; k < w->plan.n_rungs; k++)
            if (w->plan.halving && w->plan.rungs[k] == target) snprintf(rung, sizeof rung, ", up to rung %d", k);
        char where[80] = "", dev[16];
        if (w->gpu >= 0)
            snprintf(where, sizeof where, " on %s (%.0f MiB free, given %.0f)", worker_device(w, dev, sizeof dev),
                     w->claim_free_mib, w->claim_need_mib);
        else if (dse_dist_size(o.dist) > 1)
            snprintf(where, sizeof where, " on %d ranks x %d thread%s", dse_dist_size(o.dist), o.threads,
                     o.threads == 1 ? "" : "s");
        say(w, "%s: training %s of %d%s%s%s", c->id, span, w->plan.epochs, rung, where,
            within ? " (resumed from its checkpoint within the epoch)" : from ? " (resumed from its checkpoint)" : "");
        struct dse_train_result *res = malloc(sizeof *res);
        if (!res) {
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            goto out;
        }
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
        for (;;) {
            if (from > 0) ckpt_path(w, c->id, from, resume, sizeof resume);
            o.resume = within ? part : from > 0 ? resume : NULL;
            if (dse_dist_size(o.dist) > 1 && follow_send(o.dist, c->index, &o, err)) /* the other ranks train it */
                dse_dist_abort(o.dist, 1);                                          /* with this worker */
            st = dse_train_run(&net, &o, res, err);
            /* a data-parallel run that failed on this rank alone may have left the others
             * waiting in a sum: end the group; the lease lapses and the candidate is taken
             * over. A failure of the setup is every rank's and goes on as in one process. */
            if (st && res->dist_broken) {
                say(w, "%s: %s; ending the %d ranks", c->id, err->msg, dse_dist_size(w->o.dist));
                dse_dist_abort(w->o.dist, 1);
            }
            /* a checkpoint that does not load (cut short by a full disk, say): the one before it
             * (not for want of memory: the checkpoint is fine). The reader names the file at
             * fault; a message that merely mentions a path under checkpoints/ (a cuDNN choice
             * file there) is not the checkpoint's. */
            if (st && st != DSE_ERR_NOMEM && within && !strcmp(err->file, part)) {
                char bad[4300]; /* the partial checkpoint does not load: from the epoch's start */
                say(w, "%s: %s; resuming from the epoch's start instead", c->id, err->msg);
                snprintf(bad, sizeof bad, "%s.bad", part);
                rename(part, bad);
                within = 0;
                continue;
            }
            if (st && st != DSE_ERR_NOMEM && from > 0 && !strcmp(err->file, resume)) {
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
        gpu_unreserve(w);
        if (sg.wst) st = sg.wst, *err = sg.werr; /* the record's error came first (a full disk: then the checkpoint's) */
        if (st) {
            free(res);
            if (st == DSE_ERR_IO) goto out; /* the disk or the data: the worker's problem */
            if (st == DSE_ERR_NOMEM && w->gpu >= 0) goto out_of_memory;
            if (st == DSE_ERR_CUDA && w->gpu >= 0) { /* the process's CUDA context may be unusable now */
                if (!host_break(w->host, c->id)) goto requeue; /* another worker's error came first */
                w->restart = 1;
            }
            goto candidate_failed;
        }
        struct dse_rec_attempt *a = &r->att[r->n_att - 1];
        if (!strcmp(res->status, "cancelled")) {
            free(res);
            if (sg.lost || atomic_load(&hb.lost)) {
                say(w, "%s: lost its lease to another worker; stopping", c->id);
                goto out;
            }
            if (host_broken(w->host)) goto requeue;
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
    if (r->status == DSE_REC_DONE && !isfinite(r->latency_ms) && wants_measured(w->s)) {
        struct dse_err lerr = { 0 };
        char msg[600];
        int held = 0;
        /* not the candidate's fault: it stays done without a latency (its cost is then
         * unknown: never a parent), as the docs say */
        if (measure_latency(&net, o.threads, &r->latency_ms, &lerr))
            say(w, "%s: latency not measured: %s", c->id, dse_err_format(&lerr, msg, sizeof msg));
        /* the heartbeat has stopped: renew the lease the measurement ran under before the
         * commit checks it (a lost one makes the commit write nothing, as ever) */
        memset(&lerr, 0, sizeof lerr);
        if (dse_lease_renew(w->dir, l, &held, &lerr) || !held)
            say(w, "%s: the lease could not be renewed after measuring its latency", c->id);
    }
    int written;
    if ((st = commit_w(w, c, l, &written, err)) || !written) goto out;
    const struct dse_epoch_result *last = r->n_epochs ? &r->ep[r->n_epochs - 1] : NULL;
    if (last && r->status == DSE_REC_DONE)
        say(w, "%s done: top-1 %.2f%% after %d epochs", c->id, 100 * last->top1, r->n_epochs);
    else if (last && r->status == DSE_REC_PENDING)
        say(w, "%s paused at epoch %d for its rung: top-1 %.2f%%", c->id, r->n_epochs, 100 * last->top1);
    prune_checkpoints(w, c->id, r->n_epochs);
    let_go(w, l);
    goto out;
out_of_memory: {
        /* Not the candidate's fault, most likely: other processes took the memory between the
         * look and the allocation, or the estimate was low. It goes back to the queue with a
         * note; the next claim asks for more (dse_sweep_gpu_need) and resumes it from its
         * newest checkpoint. A lease released normally: no crash is counted. */
        char msg[600], dev[16];
        dse_err_format(err, msg, sizeof msg);
        worker_device(w, dev, sizeof dev);
        int failed = dse_rec_oom(r, dev, w->claim_free_mib, w->claim_need_mib, msg, w->o.max_oom);
        if (failed) say(w, "%s failed: %s", c->id, r->failed_why);
        else say(w, "%s: %s (%d in a row; --max-oom %d)", c->id, r->att[r->n_att - 1].note, dse_rec_oom_streak(r),
                 w->o.max_oom);
        memset(err, 0, sizeof *err);
        if (!(st = commit(w, c, l, err))) let_go(w, l);
        goto out;
    }
requeue: {
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
        say(w, "%s: %s", c->id, a->note);
        memset(err, 0, sizeof *err);
        if (!(st = commit(w, c, l, err))) let_go(w, l);
        goto out;
    }
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
static enum dse_status work_on(struct worker *w, struct cand *c, struct dse_lease *l,
                               const struct dse_lease_count *cnt, struct dse_err *err) {
    enum dse_status st;
    int target, rung;
    if ((st = dse_rec_read(w->dir, c->id, &c->rec, err))) return st;
    c->read_ok = 1;
    /* ASHA: whether c goes on depends on the others' results: the newest view of them */
    if (w->plan.halving == DSE_SWEEP_HALVING_ASHA && (st = refresh(w, err))) return st;
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
        c->rec.failed_retry = 1; /* not the candidate's own failure, as far as can be told: reopen_retries */
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
        if (w->plan.halving == DSE_SWEEP_HALVING_ASHA)
            say(w, "%s stopped at rung %d (epoch %d): not in the top 1/%d of the %d that reached it, and none can "
                "reach it any more", c->id, rung, epoch, w->plan.eta, w->rung[rung].n_reached);
        else
            say(w, "%s stopped at rung %d (epoch %d): not in the top 1/%d", c->id, rung, epoch, w->plan.eta);
        if ((st = commit(w, c, l, err))) return st;
        prune_checkpoints(w, c->id, epoch);
        let_go(w, l);
        return DSE_OK;
    }
    case DSE_ACT_PROMOTE: { /* ASHA: the promotion first (it stands, whatever happens next), then on */
        const struct dse_rec **recs = malloc(sizeof *recs * (size_t)(w->n ? w->n : 1));
        int existed = 0;
        if (!recs) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        for (int i = 0; i < w->n; i++) recs[i] = &w->c[i].rec;
        st = dse_asha_promote(w->dir, &w->plan, rung, &c->rec, recs, w->n, w->rung, w->name, &existed, err);
        free(recs);
        if (st) return st;
        say(w, "%s promoted at rung %d (epoch %d): in the top 1/%d of the %d that have reached it so far%s", c->id,
            rung, w->plan.rungs[rung], w->plan.eta, w->rung[rung].n_reached,
            existed ? " (already promoted)" : "");
        return train_stretch(w, c, l, target, err);
    }
    case DSE_ACT_TRAIN:
        return train_stretch(w, c, l, target, err);
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

static int cmp_by_id(const void *a, const void *b) {
    return strcmp(((const struct idref *)a)->id, ((const struct idref *)b)->id);
}

static enum dse_status worker_init(struct worker *w, const struct dse_space *s, const char *dir,
                                   const struct dse_sweep_opts *o, const struct dse_sweep_plan *plan,
                                   double deadline, struct dse_err *err) {
    uint64_t *idx = NULL, n = 0;
    memset(w, 0, sizeof *w);
    w->s = s, w->dir = dir, w->o = *o, w->plan = *plan;
    w->gpu = w->slot = -1;
    dse_lease_me_init(&w->me);
    dse_lease_me_name(&w->me, w->name, sizeof w->name);
    w->deadline = deadline;
    w->evolution = s->search.strategy == DSE_SEARCH_EVOLUTION;
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

static void worker_deinit(struct worker *w) {
    for (int i = 0; i < w->n; i++) dse_rec_deinit(&w->c[i].rec);
    for (int k = 0; k < DSE_SWEEP_RUNGS_MAX; k++) dse_rung_deinit(&w->rung[k]);
    free(w->c);
    free(w->by_id);
    free(w->order);
}

/* Having won c's lease on a GPU worker: the candidate needs need_bytes, more than any GPU
 * of this command has: it can never be trained here. */
static enum dse_status never_fits(struct worker *w, struct cand *c, struct dse_lease *l, int64_t need_bytes,
                                  struct dse_err *err) {
    enum dse_status st;
    if ((st = dse_rec_read(w->dir, c->id, &c->rec, err))) return st;
    c->read_ok = 1;
    if (dse_rec_final(&c->rec)) {
        let_go(w, l);
        return DSE_OK;
    }
    uint64_t most = 0;
    book_lock(w->book);
    for (int g = 0; g < w->book->n_gpus; g++)
        if (w->book->total[g] > most) most = w->book->total[g];
    book_unlock(w->book);
    const int streak = dse_rec_oom_streak(&c->rec);
    char oom[80] = "";
    if (streak) snprintf(oom, sizeof oom, ", asked for more after %d out-of-memory failure%s", streak,
                         streak == 1 ? "" : "s");
    snprintf(c->rec.failed_why, sizeof c->rec.failed_why, "needs about %.0f MiB of GPU memory (training estimate %.0f "
             "MiB at batch %d, plus %d%% and %.0f MiB%s), more than the largest GPU of this sweep command has "
             "(%.0f MiB in all)", MIB(need_bytes), MIB(c->est_bytes > 0 ? c->est_bytes : 0), w->s->train.batch,
             DSE_SWEEP_GPU_MARGIN_PCT, MIB(DSE_SWEEP_GPU_MARGIN_BYTES), oom, MIB(most));
    c->rec.status = DSE_REC_FAILED;
    say(w, "%s failed: %s", c->id, c->rec.failed_why);
    if (!(st = commit(w, c, l, err))) let_go(w, l);
    return st;
}

/* The worker's loop: refresh, decide what rungs can be decided, claim the first
 * candidate (in grid order) that has work and a free lease (and, on a GPU, fits in the
 * memory free there now), work on it; sleep a little when nothing is free (others are
 * training, or a rung waits for them, or the GPU is full). */
static enum dse_status worker_loop(struct worker *w, struct dse_err *err) {
    enum dse_status st;
    double nap = 0.05;
    int announced_wait = 0; /* 1: nothing free; 2: nothing fits in the GPU's memory */
    for (;;) {
        if (w->deadline > 0 && dse_lease_mono() > w->deadline) {
            say(w, "time budget reached; stopping");
            return DSE_OK;
        }
        if (w->restart || host_broken(w->host)) {
            say(w, "leaving after a CUDA error%s; a fresh worker process takes its place",
                w->restart ? "" : " of another worker of this process");
            return DSE_OK;
        }
        if ((st = refresh(w, err))) return st;
        for (int k = 0; w->plan.halving == DSE_SWEEP_HALVING_SH && k < w->plan.n_rungs; k++)
            if ((st = try_decide(w, k, err))) return st;
        if (all_final(w)) return DSE_OK;
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
            if (!lease_free(w, c, &cur, &have, &why)) continue;
            int64_t need = 0;
            enum dse_gpu_fit fit = DSE_GPU_FITS;
            if (w->gpu >= 0) { /* claim only what fits now: decided here, at claim time */
                if (!looked && (st = gpu_look(w, &view, err))) return st;
                looked = 1;
                need = dse_sweep_gpu_need(cand_estimate(w, c), dse_rec_oom_streak(&c->rec));
                fit = dse_sweep_gpu_fit(view.free, view.total, view.held, need);
                if (fit == DSE_GPU_NEVER && !gpu_never_anywhere(w, need)) continue; /* for a larger GPU */
                int ok = 0;
                if (fit == DSE_GPU_FITS && (st = gpu_reserve(w, need, &view, &ok, err))) return st;
                if (fit != DSE_GPU_NEVER && !ok) {
                    if (!waits || need < wait_need) waits = c, wait_need = need;
                    continue;
                }
            }
            struct dse_lease_count cnt = { .epochs = c->rec.n_epochs, .saved = saved_iter(w, c) };
            if (have && !cur.released) /* its worker died: counted if without progress */
                dse_lease_crashes(&cur, &w->me, &cnt);
            /* its workers keep dying: the others first */
            if ((dse_lease_verdict(&cnt, w->o.max_crashes) != DSE_LEASE_TRAIN) != pass) {
                put_off += !pass;
                gpu_unreserve(w);
                continue;
            }
            int won;
            if ((st = dse_lease_claim(w->dir, c->id, c->lease_gen, &w->me, w->o.lease_s, &cnt, &mine, &won, err))) {
                gpu_unreserve(w);
                return st;
            }
            if (!won) {
                gpu_unreserve(w);
                continue;
            }
            if (have && !cur.released) {
                char who[100];
                dse_lease_holder_name(&cur, who, sizeof who);
                say(w, "%s: taking over from %s (%s)", c->id, who, why);
            } else if (!have && why[0]) {
                char path[4200];
                dse_lease_path(w->dir, c->id, c->lease_gen, path, sizeof path);
                say(w, "%s: taking over (%s: %s)", c->id, path, why);
            }
            st = fit == DSE_GPU_NEVER ? never_fits(w, c, &mine, need, err) : work_on(w, c, &mine, &cnt, err);
            gpu_unreserve(w);
            if (st) {
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
        /* Nothing to train: record what has ended and propose the next, but only when every
         * proposal that has not ended is being trained by a live worker. One that is free
         * (a dead worker's, a lease being replaced, no memory for it on this GPU) is claimed
         * on a later pass instead, so one worker at a time steps only when all have ended,
         * and its search repeats exactly. */
        int all_busy = 1;
        for (int i = 0; i < w->n && all_busy; i++) all_busy = dse_rec_final(&w->c[i].rec) || w->c[i].live;
        if (w->evolution && !w->ended && all_busy) {
            int changed = 0;
            char what[300];
            if ((st = dse_search_step(w->s, w->dir, rec_of, w, &changed, what, sizeof what, err))) return st;
            if (what[0]) say(w, "%s", what);
            if (changed) {
                nap = 0.05;
                continue;
            }
        }
        if (waits && announced_wait != 2) {
            say(w, "nothing fits on cuda:%d now: %s needs %.0f MiB (training estimate %.0f MiB at batch %d, plus "
                "margin), %.0f MiB are free and %.0f MiB promised to this command's other workers there; waiting "
                "for memory", w->gpu, waits->id, MIB(wait_need), MIB(waits->est_bytes > 0 ? waits->est_bytes : 0),
                w->s->train.batch, MIB(view.free), MIB(view.held));
            announced_wait = 2;
        } else if (!waits && announced_wait != 1) {
            char prog[200];
            progress_text(w, 0, prog, sizeof prog);
            say(w, "nothing free to train; waiting for other workers (%s)", prog);
            announced_wait = 1;
        }
        sleep_s(nap);
        nap = nap * 2 > 1.0 ? 1.0 : nap * 2;
    }
}

/* What every worker of one command is given (a worker's own part: its slot, its thread). */
struct worker_job {
    const struct dse_space      *s;
    const char                  *dir;
    const struct dse_sweep_opts *o;
    const struct dse_sweep_plan *plan;
    double                       deadline; /* monotonic; 0: none */
    struct gpu_book             *book;     /* GPU workers: the command's table; NULL on the CPU */
    const char                  *cmd;      /* the command's token (dse_lease_me.cmd) */
};

/* One worker, on this thread: on the CPU (no book), or on the GPU of book's slot. thread:
 * 0 if it is its process's only worker, k >= 1 for worker k of several (its name, and
 * its leases', is then host:pid.k). name (may be NULL) gets its name. */
static enum dse_status worker_run(const struct worker_job *j, struct host *h, int slot, int thread,
                                  int *finished, char *name, int name_size, struct dse_err *err) {
    struct worker w;
    enum dse_status st = worker_init(&w, j->s, j->dir, j->o, j->plan, j->deadline, err);
    w.host = h;
    w.me.thread = thread;
    dse_strlcpy(w.me.cmd, j->cmd, sizeof w.me.cmd);
    dse_lease_me_name(&w.me, w.name, sizeof w.name);
    if (name) dse_strlcpy(name, w.name, name_size);
    if (!st && j->book) w.book = j->book, w.slot = slot, w.gpu = j->book->slot_gpu[slot];
    if (!st) st = worker_loop(&w, err);
    if (!st && finished) {
        st = refresh(&w, err);
        *finished = !st && all_final(&w);
    }
    worker_deinit(&w);
    return st;
}

/* The temporary files writers killed mid-write left in the sweep's folders (a checkpoint
 * folder's go when its lease holder prunes it): dse_fs_clean_temps's rule, a minute after
 * this host's dead writer, a day after another host's, never a live one's. */
static void clean_temps(const char *dir, FILE *log) {
    static const char *const sub[] = { "", "/candidates", "/leases", "/search", "/slurm" };
    char path[4200];
    int n = 0;
    for (int i = 0; i < DSE_ARRAY_LEN(sub); i++) {
        snprintf(path, sizeof path, "%s%s", dir, sub[i]);
        n += dse_fs_clean_temps(path, 60, 86400);
    }
    if (n && log) fprintf(log, "dse sweep: %s: removed %d temporary file%s that killed writers left\n", dir, n,
                          n == 1 ? "" : "s");
}

/* Candidates that failed for want of a worker that lived (failed_retry: their workers died
 * --max-crashes times in a row, killed from outside or by the OOM killer, which look alike)
 * are pending again, once per command (cmd, the command's token; not in the command that
 * failed them, whose lease says so: the tasks of a Slurm array share one --command-id): an
 * outside kill is never a permanent failure, and a candidate that kills its workers itself
 * costs at most --max-crashes attempts a command, 2 x --max-crashes deaths in a row across
 * commands (dse_lease_verdict). Each under a lease, as every record write; one whose lease
 * is not free now is left. */
static enum dse_status reopen_retries(const struct dse_space *s, const char *dir, const struct dse_sweep_opts *o,
                                      const struct dse_sweep_plan *plan, const char *cmd, struct dse_err *err) {
    struct worker w;
    enum dse_status st = worker_init(&w, s, dir, o, plan, 0, err);
    if (st) return st;
    dse_lease_me_name(&w.me, w.name, sizeof w.name);
    dse_strlcpy(w.me.cmd, cmd, sizeof w.me.cmd);
    st = refresh(&w, err);
    for (int i = 0; i < w.n && !st; i++) {
        struct cand *c = &w.c[i];
        struct dse_lease cur, mine;
        const char *why;
        int have, won = 0;
        if (c->rec.status != DSE_REC_FAILED || !c->rec.failed_retry || !lease_free(&w, c, &cur, &have, &why)) continue;
        if (have && cur.cmd[0] && !strcmp(cur.cmd, cmd)) continue; /* failed by this command (--command-id) */
        const struct dse_lease_count cnt = { .epochs = c->rec.n_epochs };
        if ((st = dse_lease_claim(dir, c->id, c->lease_gen, &w.me, o->lease_s, &cnt, &mine, &won, err)) ||
            !won)
            continue;
        if (!(st = dse_rec_read(dir, c->id, &c->rec, err)) && c->rec.status == DSE_REC_FAILED && c->rec.failed_retry) {
            c->rec.status = DSE_REC_PENDING, c->rec.failed_retry = 0, c->rec.failed_why[0] = '\0';
            if (!(st = commit(&w, c, &mine, err)) && o->log)
                fprintf(o->log, "dse sweep: %s: its workers were killed before; trying it again (from its last "
                                "checkpoint, if any)\n", c->id);
        }
        let_go(&w, &mine);
    }
    worker_deinit(&w);
    return st;
}

/* ---- the plan ------------------------------------------------------------------------------ */

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
        clash = "--early-stop", snprintf(a, sizeof a, "%s", dse_sweep_halving_str(have.halving)),
        snprintf(b, sizeof b, "%s", dse_sweep_halving_str(want.halving));
    else if (o->set_eta && have.halving && want.eta != have.eta)
        clash = "--eta", snprintf(a, sizeof a, "%d", have.eta), snprintf(b, sizeof b, "%d", want.eta);
    else if (o->set_min_epochs && have.halving && want.min_epochs != have.min_epochs)
        clash = "--min-epochs", snprintf(a, sizeof a, "%d", have.min_epochs), snprintf(b, sizeof b, "%d", want.min_epochs);
    else if (o->set_rank && have.halving && want.rank != have.rank)
        clash = "--rank", snprintf(a, sizeof a, "%s", dse_sweep_rank_str(have.rank)),
        snprintf(b, sizeof b, "%s", dse_sweep_rank_str(want.rank));
    else if (o->set_precision && want.precision != have.precision)
        clash = "--precision", snprintf(a, sizeof a, "%s", dse_cuda_math_str(have.precision)),
        snprintf(b, sizeof b, "%s", dse_cuda_math_str(want.precision));
    else if (o->set_algos && want.nondeterministic != have.nondeterministic)
        clash = "--algos", snprintf(a, sizeof a, "%s", have.nondeterministic ? "any" : "det"),
        snprintf(b, sizeof b, "%s", want.nondeterministic ? "any" : "det");
    else if (o->set_conv && want.conv != have.conv)
        clash = "--conv", snprintf(a, sizeof a, "%s", have.conv == DSE_ALGO_AUTO ? "auto" : dse_cpu_conv_algo_str(have.conv)),
        snprintf(b, sizeof b, "%s", want.conv == DSE_ALGO_AUTO ? "auto" : dse_cpu_conv_algo_str(want.conv));
    if (clash)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s/plan.json: this sweep was started with %s %s, and this "
                           "command gives %s; give the same value or leave it out (or use another --out)",
                           dir, clash, a, b);
    if (have.nondeterministic && !o->n_gpus)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s/plan.json: this sweep trains with --algos any, which "
                           "only GPUs use; give --gpus (or use another --out)", dir);
    if (have.precision != DSE_CUDA_MATH_FP32 && !o->n_gpus)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s/plan.json: this sweep trains with --precision %s, which "
                           "only GPUs compute; give --gpus (or use another --out)", dir,
                           dse_cuda_math_str(have.precision));
    *plan = have;
    return DSE_OK;
}

/* ---- GPUs: what this process may know before it forks ------------------------------------ */

#define PROBE_LINE 400

/* The CUDA devices as a child process sees them: their number, why there is none, and a
 * line of facts for each of the first n_info. The child initializes CUDA and exits; this
 * process must not (CUDA does not survive fork(), and the workers are forked later). */
static enum dse_status probe_gpus(int *count, char *why, int why_size, char (*info)[PROBE_LINE], int n_info,
                                  struct dse_err *err) {
    int fd[2];
    *count = 0;
    why[0] = '\0';
    if (pipe(fd)) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t p = fork();
    if (p < 0) {
        close(fd[0]), close(fd[1]);
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "fork: %s", strerror(errno));
    }
    if (p == 0) {
        char line[PROBE_LINE + 16], reason[256] = "";
        close(fd[0]);
        const int n = dse_cuda_device_count(reason, (int)sizeof reason);
        FILE *f = fdopen(fd[1], "w");
        if (!f) _exit(1);
        for (char *q = reason; *q; q++) if (*q == '\n') *q = ' ';
        fprintf(f, "%d\n%s\n", n, reason);
        for (int i = 0; i < n && i < n_info; i++) {
            struct dse_err e = { 0 };
            if (dse_cuda_device_info(i, line, (int)sizeof line, &e)) dse_strlcpy(line, e.msg, (int)sizeof line);
            for (char *q = line; *q; q++) if (*q == '\n') *q = ' ';
            fprintf(f, "%s\n", line);
        }
        fclose(f);
        _exit(0);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    char line[PROBE_LINE + 16];
    int got = 0;
    if (f && fgets(line, sizeof line, f)) {
        *count = atoi(line);
        got = 1;
        if (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = '\0';
            dse_strlcpy(why, line, why_size);
        }
        for (int i = 0; i < *count && i < n_info && fgets(line, sizeof line, f); i++) {
            line[strcspn(line, "\n")] = '\0';
            dse_strlcpy(info[i], line, PROBE_LINE);
        }
    }
    if (f) fclose(f);
    else close(fd[0]);
    int status;
    while (waitpid(p, &status, 0) < 0 && errno == EINTR) {}
    if (!got)
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "the process that looks for CUDA devices died (%s %d)",
                           WIFSIGNALED(status) ? "signal" : "exit status",
                           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    return DSE_OK;
}

enum dse_status dse_sweep_gpus_check(struct dse_sweep_opts *o, FILE *log, struct dse_err *err) {
    if (!o->n_gpus && !o->gpus_all) return DSE_OK;
    if (!strstr(dse_engine_backends(), "cuda"))
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "--gpus: this dse was built without the CUDA backend "
                           "(docs/gpu.md, Building)");
    char (*info)[PROBE_LINE] = calloc(DSE_SWEEP_GPUS_MAX, sizeof *info), why[256];
    int count;
    if (!info) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    enum dse_status st = probe_gpus(&count, why, sizeof why, info, DSE_SWEEP_GPUS_MAX, err);
    if (!st && count <= 0) st = dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "--gpus: no CUDA device (%s)", why);
    if (st) {
        free(info);
        return st;
    }
    if (o->gpus_all) {
        o->n_gpus = count < DSE_SWEEP_GPUS_MAX ? count : DSE_SWEEP_GPUS_MAX;
        for (int g = 0; g < o->n_gpus; g++) o->gpus[g] = g;
    }
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    for (int g = 0; g < o->n_gpus && !st; g++)
        if (o->gpus[g] >= count)
            st = dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "--gpus: there is no CUDA device %d: this process sees "
                             "%d (0 to %d), numbered %s%s", o->gpus[g], count, count - 1,
                             vis ? "from 0 in the order of CUDA_VISIBLE_DEVICES=" :
                             "as the driver does (CUDA_VISIBLE_DEVICES is not set)", vis ? vis : "");
    for (int g = 0; log && !st && g < o->n_gpus; g++)
        fprintf(log, "dse sweep: cuda:%d: %s\n", o->gpus[g], o->gpus[g] < DSE_SWEEP_GPUS_MAX ? info[o->gpus[g]] : "");
    if (log) fflush(log);
    free(info);
    return st;
}

/* ---- the processes of worker threads -------------------------------------------------------- */

#define EXIT_RESTART 3 /* a worker process that left after a CUDA error: start a fresh one */

/* One worker thread of a worker process: what it runs, and how it ended. */
struct worker_thread {
    pthread_t                th;
    const struct worker_job *job;
    struct host             *host;
    int                      slot, thread;
    enum dse_status          st;
};

static void *worker_thread_main(void *arg) {
    struct worker_thread *t = arg;
    struct dse_err e = { 0 };
    char name[128] = "?", msg[700];
    t->st = worker_run(t->job, t->host, t->slot, t->thread, NULL, name, sizeof name, &e);
    if (t->st) {
        flockfile(stderr);
        fprintf(stderr, "dse sweep: worker %s: %s\n", name, dse_err_format(&e, msg, sizeof msg));
        fflush(stderr);
        funlockfile(stderr);
    }
    pthread_mutex_lock(&t->host->mu);
    t->host->running--;
    pthread_cond_signal(&t->host->cv);
    pthread_mutex_unlock(&t->host->mu);
    return NULL;
}

/* A worker process: n workers, each a thread (the same loop as a lone worker), on book
 * slots slot0 .. slot0 + n - 1. Returns its exit status: EXIT_RESTART after a CUDA error
 * (host_break), 1 if a worker failed, else 0. A broken process waits for its workers at
 * most a lease's time (at least 10 s): one stuck in a broken context must not keep the
 * others' slots, and whatever leases it holds are taken over once the process is gone. */
static int host_main(const struct worker_job *j, int slot0, int n) {
    struct host h;
    struct worker_thread *t = calloc((size_t)n, sizeof *t);
    if (!t || host_init(&h)) {
        fprintf(stderr, "dse sweep: worker process %ld: out of memory\n", (long)getpid());
        free(t);
        return 1;
    }
    int started = 0, failed = 0;
    for (int k = 0; k < n; k++) {
        t[k] = (struct worker_thread){ .job = j, .host = &h, .slot = slot0 + k, .thread = n > 1 ? k + 1 : 0 };
        pthread_mutex_lock(&h.mu);
        h.running++;
        pthread_mutex_unlock(&h.mu);
        int rc = pthread_create(&t[k].th, NULL, worker_thread_main, &t[k]);
        if (rc) {
            pthread_mutex_lock(&h.mu);
            h.running--;
            pthread_mutex_unlock(&h.mu);
            fprintf(stderr, "dse sweep: worker process %ld: cannot start a worker thread: %s\n", (long)getpid(),
                    strerror(rc));
            failed = 1;
            break;
        }
        started++;
    }
    const double grace = j->o->lease_s > 10 ? j->o->lease_s : 10;
    double broke_at = 0;
    pthread_mutex_lock(&h.mu);
    while (h.running > 0) {
        if (host_broken(&h) && !broke_at) broke_at = dse_lease_mono();
        if (broke_at && dse_lease_mono() - broke_at > grace) break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&h.cv, &h.mu, &ts);
    }
    const int stuck = h.running;
    pthread_mutex_unlock(&h.mu);
    if (stuck) { /* the caller exits; the threads go with the process */
        fprintf(stderr, "dse sweep: worker process %ld: %d worker%s did not stop within %.0f s of a CUDA error; "
                "leaving without %s\n", (long)getpid(), stuck, stuck == 1 ? "" : "s", grace,
                stuck == 1 ? "it" : "them");
        return EXIT_RESTART;
    }
    for (int k = 0; k < started; k++) {
        pthread_join(t[k].th, NULL);
        failed |= t[k].st != DSE_OK;
    }
    const int broken = host_broken(&h);
    host_deinit(&h);
    free(t);
    return broken ? EXIT_RESTART : failed ? 1 : 0;
}

/* A child process running host_main; its pid, or -1. */
static pid_t spawn_host(const struct worker_job *j, int slot0, int n) {
    fflush(NULL); /* nothing buffered twice */
    pid_t p = fork();
    if (p != 0) return p;
    int rc = host_main(j, slot0, n);
    fflush(NULL);
    _exit(rc);
}

/* Workers of child process k of n_kids, per_host each but the last, n_workers in all. */
static int kid_slots(int k, int n_kids, int per_host, int n_workers) {
    return k < n_kids - 1 ? per_host : n_workers - k * per_host;
}

/* Workers per GPU for --per-gpu auto: DSE_SWEEP_PER_GPU_AUTO, but no more than the CPU
 * cores per GPU (each worker feeds its GPU from a core) nor the candidates left per GPU. */
static int per_gpu_auto(int n_gpus, int left) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int k = DSE_SWEEP_PER_GPU_AUTO;
    if (cpus > 0 && cpus / n_gpus < k) k = (int)(cpus / n_gpus);
    if ((left + n_gpus - 1) / n_gpus < k) k = (left + n_gpus - 1) / n_gpus;
    return k < 1 ? 1 : k;
}

static enum dse_status sweep_train(const struct dse_space *s, const char *dir, const struct dse_sweep_opts *o,
                                   int *finished, struct dse_err *err);

enum dse_status dse_sweep_train(const struct dse_space *s, const char *dir, const struct dse_sweep_opts *o,
                                int *finished, struct dse_err *err) {
    const int ranks = dse_dist_size(o->dist);
    if (ranks > 1 && (o->workers != 1 || o->n_gpus || o->gpus_all || o->per_process > 1)) {
        *finished = 0;
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "--ranks-per-candidate: each group of %d ranks is one "
                           "CPU worker (--workers 1, no --gpus); start more groups for more workers", ranks);
    }
    enum dse_status st = sweep_train(s, dir, o, finished, err);
    if (ranks > 1) { /* the other ranks' dse_sweep_follow returns */
        struct dse_err e2 = { 0 };
        if (follow_send(o->dist, 0, NULL, &e2)) dse_dist_abort(o->dist, 1);
    }
    return st;
}

static enum dse_status sweep_train(const struct dse_space *s, const char *dir, const struct dse_sweep_opts *o,
                                   int *finished, struct dse_err *err) {
    struct dse_sweep_plan plan;
    struct dse_data_info info;
    struct gpu_book *book = NULL;
    enum dse_status st;
    *finished = 0;
    if (!s->train_present)
        return dse_err_set(err, DSE_ERR_CONFIG, s->path, 0, "the space has no train section; add train = { dataset "
                           "= \"fashion-mnist\"; epochs = 5; ... } (docs/space-format.md) or use --analytic-only");
    if (o->workers < 1 || o->threads < 1 || !(o->lease_s > 0) || o->max_crashes < 1 || o->max_oom < 1 ||
        o->per_gpu < 0 || o->per_process < 0)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "workers, threads, max crashes, max oom must be >= 1, "
                           "per_gpu and per_process >= 0 and the lease > 0");
    if (o->gpus_all && !o->n_gpus)
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "--gpus all: call dse_sweep_gpus_check first");
    if ((st = dse_data_probe(s->dataset, o->data_root, &info, err))) return st;
    if ((o->n_gpus || o->gpus_all) && wants_measured(s))
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, s->path, s->search.line, "objective latency_ms is measured on "
                           "the CPU workers only for now: drop --gpus, or the objective");
    /* refused as asked, before settle_plan writes a plan the directory would then keep, and
     * as settled (a plan.json written by an earlier command) */
    char asked[32];
    snprintf(asked, sizeof asked, "--budget %de", o->plan.epochs);
    if ((st = plan_supported(s, o->set_halving ? o->plan.halving : DSE_SWEEP_HALVING_NONE,
                             o->set_epochs ? o->plan.epochs : s->train.epochs, "", asked, err)) ||
        (st = settle_plan(s, dir, o, &plan, err)))
        return st;
    struct dse_lease_me cmd; /* a token for this command, which its worker processes inherit */
    dse_lease_me_init(&cmd);
    if (o->command_id) dse_strlcpy(cmd.token, o->command_id, sizeof cmd.token); /* shared with other commands */
    char where[4200];
    snprintf(where, sizeof where, "%s/plan.json", dir);
    if ((st = plan_supported(s, plan.halving, plan.epochs, where, where, err)) ||
        (st = reopen_retries(s, dir, o, &plan, cmd.token, err)))
        return st;
    clean_temps(dir, o->log);
    struct worker w;
    int n_workers = o->workers, per_host = o->per_process > 1 ? o->per_process : 1;
    if (o->n_gpus) {
        int left = 0, per = o->per_gpu;
        if (!per) { /* auto: no more workers than candidates left (read from the files; no CUDA here) */
            if ((st = worker_init(&w, s, dir, o, &plan, 0, err))) return st;
            st = refresh(&w, err);
            for (int i = 0; i < w.n; i++) left += !dse_rec_final(&w.c[i].rec);
            worker_deinit(&w);
            if (st) return st;
            per = per_gpu_auto(o->n_gpus, left);
        }
        n_workers = o->n_gpus * per;
        if (n_workers > BOOK_SLOTS)
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%d GPUs x %d workers: at most %d workers per command",
                               o->n_gpus, per, BOOK_SLOTS);
        if (!(book = book_new(o, err))) return err ? err->code : DSE_ERR_NOMEM;
        for (int k = 0; k < BOOK_SLOTS; k++) book->slot_gpu[k] = -1;
        for (int k = 0; k < n_workers; k++) book->slot_gpu[k] = o->gpus[k / per]; /* a process per GPU */
        per_host = per;
        if (o->log) {
            char desc[400], list[300] = "";
            int n = 0;
            dse_plan_describe(&plan, desc, sizeof desc);
            for (int g = 0; g < o->n_gpus && n < (int)sizeof list - 16; g++)
                n += snprintf(list + n, sizeof list - (size_t)n, "%scuda:%d", g ? ", " : "", o->gpus[g]);
            fprintf(o->log, "dse sweep: %s: %s; precision %s; %s x %d worker%s each (%s; one process per GPU, its "
                    "workers threads of it), %d engine thread%s each; a worker claims a candidate only when it fits in "
                    "its GPU's free memory\n", dir, desc,
                    dse_cuda_math_str(plan.precision), list, per, per == 1 ? "" : "s",
                    o->per_gpu ? "--per-gpu" : "--per-gpu auto", o->threads, o->threads == 1 ? "" : "s");
            fflush(o->log);
        }
    } else if (o->log) {
        char desc[400];
        dse_plan_describe(&plan, desc, sizeof desc);
        char shared[64] = "", ranks[120] = "";
        if (per_host > 1) snprintf(shared, sizeof shared, " (up to %d to a process, as threads)", per_host);
        if (dse_dist_size(o->dist) > 1) { /* the ranks of mpirun -np P: one worker */
            snprintf(shared, sizeof shared, " of %d MPI ranks", dse_dist_size(o->dist));
            snprintf(ranks, sizeof ranks, " each; the ranks train every candidate together, data-parallel "
                     "(--ranks-per-candidate %d)", dse_dist_size(o->dist));
        }
        fprintf(o->log, "dse sweep: %s: %s; %d worker%s%s x %d thread%s%s\n", dir, desc, o->workers,
                o->workers == 1 ? "" : "s", shared, o->threads, o->threads == 1 ? "" : "s", ranks);
        fflush(o->log);
    }
    /* one deadline for every worker of this command, restarted ones too (the monotonic
     * clock is the machine's, shared by the children) */
    double deadline = o->hours > 0 ? dse_lease_mono() + o->hours * 3600 : 0;
    const struct worker_job job = { .s = s, .dir = dir, .o = o, .plan = &plan, .deadline = deadline, .book = book,
                                    .cmd = cmd.token };
    if (n_workers == 1 && !book) { /* a lone CPU worker: this process */
        struct host h;
        if (host_init(&h)) return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "cannot make a mutex");
        st = worker_run(&job, &h, -1, 0, finished, NULL, 0, err);
        host_deinit(&h);
        return st;
    }

    /* Several workers, or GPU workers (always in processes of their own, so that this
     * one never touches CUDA): child processes, process k running workers (threads) on
     * slots k * per_host .. (k + 1) * per_host - 1 (the last may have fewer). A child that
     * dies (killed, crashed) or leaves after a CUDA error is replaced while work remains;
     * its workers' candidates are taken over at once (same host: its pid is gone). */
    const int n_kids = (n_workers + per_host - 1) / per_host;
    pid_t *kids = calloc((size_t)n_kids, sizeof *kids);
    if (!kids) {
        book_free(book);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    int alive = 0, restarts = 0, failed = 0;
    for (int k = 0; k < n_kids; k++) {
        if ((kids[k] = spawn_host(&job, k * per_host, kid_slots(k, n_kids, per_host, n_workers))) < 0) {
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
        while (k < n_kids && kids[k] != p) k++;
        if (k == n_kids) continue;
        alive--;
        kids[k] = 0;
        if (book) { /* what its workers promised on their GPU is nobody's now */
            book_lock(book);
            for (int j = 0; j < kid_slots(k, n_kids, per_host, n_workers); j++) book->slot_held[k * per_host + j] = 0;
            book_unlock(book);
        }
        const int again = WIFEXITED(status) && WEXITSTATUS(status) == EXIT_RESTART;
        if (WIFEXITED(status) && !again) {
            failed += WEXITSTATUS(status) != 0;
            continue;
        }
        if (restarts >= 2 * n_workers || st) {
            failed++;
            continue;
        }
        if (o->log) {
            char who[40] = "";
            if (kid_slots(k, n_kids, per_host, n_workers) > 1) snprintf(who, sizeof who, " (%d workers)", kid_slots(k, n_kids, per_host, n_workers));
            if (again) fprintf(o->log, "dse sweep: worker process %ld%s left after a CUDA error; starting another\n",
                               (long)p, who);
            else fprintf(o->log, "dse sweep: worker process %ld%s died (signal %d); starting another\n", (long)p, who,
                         WIFSIGNALED(status) ? WTERMSIG(status) : 0);
            fflush(o->log);
        }
        if ((kids[k] = spawn_host(&job, k * per_host, kid_slots(k, n_kids, per_host, n_workers))) > 0) alive++, restarts++;
        else failed++;
    }
    free(kids);
    book_free(book);
    if (st) return st;
    if (failed) return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "%d worker process%s failed (see above)", failed,
                                   failed == 1 ? "" : "es");
    /* what the workers left */
    if ((st = worker_init(&w, s, dir, o, &plan, 0, err))) return st;
    st = refresh(&w, err);
    *finished = !st && all_final(&w);
    worker_deinit(&w);
    return st;
}
