/* team.c: the CPU backend's threads. A ctx with T threads owns T - 1 worker threads;
 * a job runs fn(arg, t, T) on every thread t, the caller being thread 0, and returns when
 * all have finished. Workers spin briefly between jobs (the next job usually follows
 * within microseconds: kernels alternate with short serial parts), then sleep on a
 * condition variable, so an idle engine burns no core.
 *
 * Why our own threads rather than OpenBLAS's: OpenBLAS, Debian's pthread build, is set
 * to one thread and each of our threads calls sgemm on its own share of the mini-batch.
 * With OpenBLAS's threads instead, 2 threads trained SqueezeNet-FMNIST at batch 128
 * only 5% faster than 1 (179.7 vs 170.0 img/s, dse bench on 2 EPYC cores): its workers
 * spin in sched_yield between calls (30% of the profile was the kernel's scheduler),
 * and every non-GEMM op ran on one core. OpenMP fought OpenBLAS's spinning workers. */
#include "engine/engine.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "engine/cpu/cpu_impl.h"

/* Pause iterations a worker spins before sleeping: about 0.2 ms on EPYC. */
#define SPIN 4000

struct dse_cpu_team {
    int             n;       /* threads, the caller included */
    pthread_t      *tid;     /* n - 1 workers */
    pthread_mutex_t mu;
    pthread_cond_t  wake;    /* a new job, or quit */
    pthread_cond_t  idle;    /* the last worker finished a job */
    atomic_uint     gen;     /* job generation: bumped once per job */
    atomic_int      left;    /* workers still running the current job */
    atomic_int      quit;
    dse_cpu_job_fn  fn;
    void           *arg;
};

struct worker_arg {
    struct dse_cpu_team *team;
    int                  t;
};

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *worker(void *p) {
    struct worker_arg wa = *(struct worker_arg *)p;
    free(p);
    struct dse_cpu_team *tm = wa.team;
    unsigned seen = 0;
    for (;;) {
        unsigned g = atomic_load(&tm->gen);
        for (int i = 0; g == seen && i < SPIN; i++) {
            relax();
            g = atomic_load(&tm->gen);
        }
        if (g == seen) {
            pthread_mutex_lock(&tm->mu);
            while ((g = atomic_load(&tm->gen)) == seen && !atomic_load(&tm->quit))
                pthread_cond_wait(&tm->wake, &tm->mu);
            pthread_mutex_unlock(&tm->mu);
        }
        if (atomic_load(&tm->quit)) return NULL;
        seen = g;
        tm->fn(tm->arg, wa.t, tm->n);
        if (atomic_fetch_sub(&tm->left, 1) == 1) {
            pthread_mutex_lock(&tm->mu);
            pthread_cond_signal(&tm->idle);
            pthread_mutex_unlock(&tm->mu);
        }
    }
}

void dse_cpu_team_free(struct dse_cpu_team *tm) {
    if (!tm) return;
    pthread_mutex_lock(&tm->mu);
    atomic_store(&tm->quit, 1);
    pthread_cond_broadcast(&tm->wake);
    pthread_mutex_unlock(&tm->mu);
    for (int i = 0; i < tm->n - 1; i++) pthread_join(tm->tid[i], NULL);
    pthread_cond_destroy(&tm->wake);
    pthread_cond_destroy(&tm->idle);
    pthread_mutex_destroy(&tm->mu);
    free(tm->tid);
    free(tm);
}

struct dse_cpu_team *dse_cpu_team_new(int threads) {
    struct dse_cpu_team *tm = calloc(1, sizeof *tm);
    if (!tm) return NULL;
    tm->tid = calloc((size_t)(threads > 1 ? threads - 1 : 1), sizeof *tm->tid);
    if (!tm->tid) {
        free(tm);
        return NULL;
    }
    pthread_mutex_init(&tm->mu, NULL);
    pthread_cond_init(&tm->wake, NULL);
    pthread_cond_init(&tm->idle, NULL);
    atomic_init(&tm->gen, 0u);
    atomic_init(&tm->left, 0);
    atomic_init(&tm->quit, 0);
    tm->n = 1;
    for (int t = 1; t < threads; t++) {
        struct worker_arg *wa = malloc(sizeof *wa);
        if (!wa) break;
        wa->team = tm, wa->t = t;
        if (pthread_create(&tm->tid[t - 1], NULL, worker, wa)) {
            free(wa);
            break;
        }
        tm->n = t + 1;
    }
    if (tm->n != threads) { /* could not start them all */
        dse_cpu_team_free(tm);
        return NULL;
    }
    return tm;
}

int dse_cpu_team_size(const struct dse_cpu_team *tm) { return tm ? tm->n : 1; }

void dse_cpu_team_run(struct dse_cpu_team *tm, dse_cpu_job_fn fn, void *arg) {
    if (!tm || tm->n == 1) {
        fn(arg, 0, 1);
        return;
    }
    tm->fn = fn, tm->arg = arg;
    atomic_store(&tm->left, tm->n - 1);
    pthread_mutex_lock(&tm->mu);
    atomic_fetch_add(&tm->gen, 1u);
    pthread_cond_broadcast(&tm->wake);
    pthread_mutex_unlock(&tm->mu);
    fn(arg, 0, tm->n);
    for (int i = 0; atomic_load(&tm->left) > 0 && i < SPIN; i++) relax();
    if (atomic_load(&tm->left) > 0) {
        pthread_mutex_lock(&tm->mu);
        while (atomic_load(&tm->left) > 0) pthread_cond_wait(&tm->idle, &tm->mu);
        pthread_mutex_unlock(&tm->mu);
    }
}

/* The ctx's team, started at its first job (a ctx that never runs a parallel kernel
 * starts no threads). Here, not in ctx.c, so that calls go one way: ctx.c starts and
 * frees teams, team.c never calls back into it. */
void dse_cpu_run(struct dse_cpu_ctx *cx, dse_cpu_job_fn fn, void *arg) {
    if (cx->threads > 1 && !cx->team) cx->team = dse_cpu_team_new(cx->threads);
    if (!cx->team) { /* one thread, or none could be started: thread 0 does every share */
        for (int t = 0; t < cx->threads; t++) fn(arg, t, cx->threads);
        return;
    }
    dse_cpu_team_run(cx->team, fn, arg);
}

/* ---- ranges ------------------------------------------------------------------------ */

struct range_job {
    dse_cpu_range_fn fn;
    void            *arg;
    int64_t          count;
};

static void range_part(void *p, int t, int nt) {
    const struct range_job *j = p;
    int64_t lo, hi;
    dse_cpu_share(j->count, t, nt, &lo, &hi);
    if (lo < hi) j->fn(j->arg, lo, hi);
}

void dse_cpu_for(struct dse_cpu_ctx *cx, int64_t count, int64_t work, dse_cpu_range_fn fn, void *arg) {
    if (count <= 0) return;
    if (cx->threads == 1 || count == 1 || work < DSE_CPU_PAR_MIN_WORK) {
        fn(arg, 0, count);
        return;
    }
    struct range_job j = { .fn = fn, .arg = arg, .count = count };
    dse_cpu_run(cx, range_part, &j);
}
