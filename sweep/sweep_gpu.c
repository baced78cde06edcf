/* sweep_gpu.c: placing a training sweep's workers on shared GPUs (docs/sweep-dir.md, "Sweeps
 * on shared GPUs"): the book of device memory the workers of one command have promised
 * (shared memory, a robust mutex), a worker's look at its GPU before it claims a candidate,
 * and the probe of the devices in a child process before the workers are forked. Part of
 * the sweep's workers (sweep/worker_impl.h). */
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

struct gpu_book *dse_worker_book_new(const struct dse_sweep_opts *o, struct dse_err *err) {
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

void dse_worker_book_free(struct gpu_book *b) {
    if (!b) return;
    pthread_mutex_destroy(&b->mu);
    munmap(b, sizeof *b);
}

void dse_worker_book_lock(struct gpu_book *b) {
    if (pthread_mutex_lock(&b->mu) == EOWNERDEAD) pthread_mutex_consistent(&b->mu); /* its holder died */
}

void dse_worker_book_unlock(struct gpu_book *b) {
    pthread_mutex_unlock(&b->mu);
}

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

enum dse_status dse_worker_gpu_look(struct worker *w, struct gpu_view *v, struct dse_err *err) {
    dse_worker_book_lock(w->book);
    enum dse_status st = gpu_view_locked(w, v, err);
    dse_worker_book_unlock(w->book);
    if (!st && !w->gpu_seen) {
        w->gpu_seen = 1;
        dse_worker_say(w, "on cuda:%d: %.0f of %.0f MiB free", w->gpu, MIB(v->free), MIB(v->total));
    }
    return st;
}

enum dse_status dse_worker_gpu_reserve(struct worker *w, int64_t need_bytes, struct gpu_view *v, int *ok,
                                       struct dse_err *err) {
    dse_worker_book_lock(w->book);
    enum dse_status st = gpu_view_locked(w, v, err);
    *ok = !st && dse_sweep_gpu_fit(v->free, v->total, v->held, need_bytes) == DSE_GPU_FITS;
    if (*ok) {
        w->book->slot_held[w->slot] = w->held = need_bytes;
        w->claim_free_mib = MIB(v->free - (v->held < v->free ? v->held : v->free));
        w->claim_need_mib = MIB(need_bytes);
    }
    dse_worker_book_unlock(w->book);
    return st;
}

void dse_worker_gpu_unreserve(struct worker *w) {
    if (!w->book || !w->held) return;
    dse_worker_book_lock(w->book);
    w->book->slot_held[w->slot] = w->held = 0;
    dse_worker_book_unlock(w->book);
}

int dse_worker_gpu_never_anywhere(struct worker *w, int64_t need_bytes) {
    uint64_t most = 0;
    int known = 1;
    dse_worker_book_lock(w->book);
    for (int g = 0; g < w->book->n_gpus; g++) {
        known &= w->book->total[g] > 0;
        if (w->book->total[g] > most) most = w->book->total[g];
    }
    dse_worker_book_unlock(w->book);
    return known && need_bytes > 0 && (uint64_t)need_bytes > most;
}

int64_t dse_worker_cand_estimate(struct worker *w, struct cand *c) {
    if (!c->est_known) {
        c->est_known = 1;
        if (dse_sweep_train_mem(w->s, c->index, w->s->train.batch, &c->est_bytes, NULL)) c->est_bytes = -1;
    }
    return c->est_bytes;
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
