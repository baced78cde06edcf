/* sweep_train.c: `dse sweep SPACE` trains: workers claim candidates with leases
 * (sweep/lease.c), train them with the engine (engine/train.h) from their last
 * checkpoint, write per-epoch results into the candidate files, and, with successive
 * halving, pause candidates at rungs and decide the rungs once every candidate of a rung
 * has reached it (with ASHA, promote them as results arrive instead: sweep/asha.c). CPU workers are processes; with --gpus, the workers of one GPU are
 * threads of one process (one CUDA context, so their kernels overlap), each bound to the
 * GPU and claiming only candidates whose memory estimate fits in what is free there; out
 * of memory re-queues. The protocol and why each step is safe: docs/sweep-dir.md
 * ("Leases", "Sweeps on shared GPUs").
 * This file: the options, the plan, and the processes and threads of workers (the
 * supervisor); the workers themselves: sweep/worker_impl.h. */
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
    o->ckpt_every_s = DSE_TRAIN_CKPT_EVERY_MIN * 60;
    o->progress_every_s = DSE_TRAIN_PROGRESS_EVERY_S;
    o->per_gpu = 0; /* auto */
    o->max_oom = 4;
    o->plan.precision = DSE_CUDA_MATH_FP32;
}

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
    enum dse_status st = dse_worker_init(&w, s, dir, o, plan, 0, err);
    if (st) return st;
    dse_lease_me_name(&w.me, w.name, sizeof w.name);
    dse_strlcpy(w.me.cmd, cmd, sizeof w.me.cmd);
    st = dse_worker_refresh(&w, err);
    for (int i = 0; i < w.n && !st; i++) {
        struct cand *c = &w.c[i];
        struct dse_lease cur, mine;
        const char *why;
        int have, won = 0;
        if (c->rec.status != DSE_REC_FAILED || !c->rec.failed_retry || !dse_worker_lease_free(&w, c, &cur, &have, &why)) continue;
        if (have && cur.cmd[0] && !strcmp(cur.cmd, cmd)) continue; /* failed by this command (--command-id) */
        const struct dse_lease_count cnt = { .epochs = c->rec.n_epochs };
        if ((st = dse_lease_claim(dir, c->id, c->lease_gen, &w.me, o->lease_s, &cnt, &mine, &won, err)) ||
            !won)
            continue;
        if (!(st = dse_rec_read(dir, c->id, &c->rec, err)) && c->rec.status == DSE_REC_FAILED && c->rec.failed_retry) {
            c->rec.status = DSE_REC_PENDING, c->rec.failed_retry = 0, c->rec.failed_why[0] = '\0';
            if (!(st = dse_worker_commit(&w, c, &mine, err)) && o->log)
                fprintf(o->log, "dse sweep: %s: its workers were killed before; trying it again (from its last "
                                "checkpoint, if any)\n", c->id);
        }
        dse_worker_let_go(&w, &mine);
    }
    dse_worker_deinit(&w);
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
    if (have.precision != DSE_CUDA_MATH_FP32 && have.precision != DSE_CUDA_MATH_BF16 && !o->n_gpus)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s/plan.json: this sweep trains with --precision %s, which "
                           "only GPUs compute; give --gpus (or use another --out)", dir,
                           dse_cuda_math_str(have.precision));
    if (have.precision == DSE_CUDA_MATH_BF16 && !o->n_gpus && dse_cpu_bf16_why()) /* before any worker claims */
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s/plan.json: this sweep trains in bf16, and this CPU cannot: "
                           "%s; run its workers on a CPU with AVX512-BF16, give --gpus, or use another --out", dir,
                           dse_cpu_bf16_why());
    *plan = have;
    return DSE_OK;
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
    t->st = dse_worker_run(t->job, t->host, t->slot, t->thread, NULL, name, sizeof name, &e);
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
 * (dse_worker_host_break), 1 if a worker failed, else 0. A broken process waits for its workers at
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
        if (dse_worker_host_broken(&h) && !broke_at) broke_at = dse_lease_mono();
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
    const int broken = dse_worker_host_broken(&h);
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

/* The line on the workers a training command starts: the plan, and per GPU (per workers
 * each) or the CPU workers (up to per to a process), threads and MPI ranks. */
static void say_workers(const struct dse_sweep_opts *o, const char *dir, const struct dse_sweep_plan *plan, int per) {
    char desc[400];
    dse_plan_describe(plan, desc, sizeof desc);
    if (o->n_gpus) {
        char list[300] = "";
        int n = 0;
        for (int g = 0; g < o->n_gpus && n < (int)sizeof list - 16; g++)
            n += snprintf(list + n, sizeof list - (size_t)n, "%scuda:%d", g ? ", " : "", o->gpus[g]);
        fprintf(o->log, "dse sweep: %s: %s; precision %s; %s x %d worker%s each (%s; one process per GPU, its "
                "workers threads of it), %d engine thread%s each; a worker claims a candidate only when it fits in "
                "its GPU's free memory\n", dir, desc,
                dse_cuda_math_str(plan->precision), list, per, per == 1 ? "" : "s",
                o->per_gpu ? "--per-gpu" : "--per-gpu auto", o->threads, o->threads == 1 ? "" : "s");
        fflush(o->log);
        return;
    }
    char shared[64] = "", ranks[120] = "";
    if (per > 1) snprintf(shared, sizeof shared, " (up to %d to a process, as threads)", per);
    if (dse_dist_size(o->dist) > 1) { /* the ranks of mpirun -np P: one worker */
        snprintf(shared, sizeof shared, " of %d MPI ranks", dse_dist_size(o->dist));
        snprintf(ranks, sizeof ranks, " each; the ranks train every candidate together, data-parallel "
                 "(--ranks-per-candidate %d)", dse_dist_size(o->dist));
    }
    fprintf(o->log, "dse sweep: %s: %s; %d worker%s%s x %d thread%s%s\n", dir, desc, o->workers,
            o->workers == 1 ? "" : "s", shared, o->threads, o->threads == 1 ? "" : "s", ranks);
    fflush(o->log);
}

/* Several workers, or GPU workers (always in processes of their own, so that this
 * one never touches CUDA): child processes, process k running workers (threads) on
 * slots k * per_host .. (k + 1) * per_host - 1 (the last may have fewer). A child that
 * dies (killed, crashed) or leaves after a CUDA error is replaced while work remains;
 * its workers' candidates are taken over at once (same host: its pid is gone). */
static enum dse_status run_hosts(const struct worker_job *job, int n_workers, int per_host, struct dse_err *err) {
    const struct dse_sweep_opts *o = job->o;
    struct gpu_book *book = job->book;
    enum dse_status st = DSE_OK;
    const int n_kids = (n_workers + per_host - 1) / per_host;
    pid_t *kids = calloc((size_t)n_kids, sizeof *kids);
    if (!kids) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    int alive = 0, restarts = 0, failed = 0;
    for (int k = 0; k < n_kids; k++) {
        if ((kids[k] = spawn_host(job, k * per_host, kid_slots(k, n_kids, per_host, n_workers))) < 0) {
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
            dse_worker_book_lock(book);
            for (int j = 0; j < kid_slots(k, n_kids, per_host, n_workers); j++) book->slot_held[k * per_host + j] = 0;
            dse_worker_book_unlock(book);
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
        if ((kids[k] = spawn_host(job, k * per_host, kid_slots(k, n_kids, per_host, n_workers))) > 0) alive++, restarts++;
        else failed++;
    }
    free(kids);
    if (st || !failed) return st;
    return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "%d worker process%s failed (see above)", failed,
                       failed == 1 ? "" : "es");
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
        if (dse_worker_follow_send(o->dist, 0, NULL, &e2)) dse_dist_abort(o->dist, 1);
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
    if ((o->n_gpus || o->gpus_all) && dse_worker_wants_measured(s))
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, s->path, s->search.line, "objective latency_ms is measured on "
                           "the CPU workers only for now: drop --gpus, or the objective");
    /* refused as asked, before settle_plan writes a plan the directory would then keep, and
     * as settled (a plan.json written by an earlier command) */
    char asked[32];
    snprintf(asked, sizeof asked, "--budget %de", o->plan.epochs);
    if ((st = dse_worker_plan_supported(s, o->set_halving ? o->plan.halving : DSE_SWEEP_HALVING_NONE,
                             o->set_epochs ? o->plan.epochs : s->train.epochs, "", asked, err)) ||
        (st = settle_plan(s, dir, o, &plan, err)))
        return st;
    struct dse_lease_me cmd; /* a token for this command, which its worker processes inherit */
    dse_lease_me_init(&cmd);
    if (o->command_id) dse_strlcpy(cmd.token, o->command_id, sizeof cmd.token); /* shared with other commands */
    char where[4200];
    snprintf(where, sizeof where, "%s/plan.json", dir);
    if ((st = dse_worker_plan_supported(s, plan.halving, plan.epochs, where, where, err)) ||
        (st = reopen_retries(s, dir, o, &plan, cmd.token, err)))
        return st;
    clean_temps(dir, o->log);
    struct worker w;
    int n_workers = o->workers, per_host = o->per_process > 1 ? o->per_process : 1;
    if (o->n_gpus) {
        int left = 0, per = o->per_gpu;
        if (!per) { /* auto: no more workers than candidates left (read from the files; no CUDA here) */
            if ((st = dse_worker_init(&w, s, dir, o, &plan, 0, err))) return st;
            st = dse_worker_refresh(&w, err);
            for (int i = 0; i < w.n; i++) left += !dse_rec_final(&w.c[i].rec);
            dse_worker_deinit(&w);
            if (st) return st;
            per = per_gpu_auto(o->n_gpus, left);
        }
        n_workers = o->n_gpus * per;
        if (n_workers > BOOK_SLOTS)
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%d GPUs x %d workers: at most %d workers per command",
                               o->n_gpus, per, BOOK_SLOTS);
        if (!(book = dse_worker_book_new(o, err))) return err ? err->code : DSE_ERR_NOMEM;
        for (int k = 0; k < BOOK_SLOTS; k++) book->slot_gpu[k] = -1;
        for (int k = 0; k < n_workers; k++) book->slot_gpu[k] = o->gpus[k / per]; /* a process per GPU */
        per_host = per;
    }
    if (o->log) say_workers(o, dir, &plan, per_host);
    /* one deadline for every worker of this command, restarted ones too (the monotonic
     * clock is the machine's, shared by the children) */
    double deadline = o->hours > 0 ? dse_lease_mono() + o->hours * 3600 : 0;
    const struct worker_job job = { .s = s, .dir = dir, .o = o, .plan = &plan, .deadline = deadline, .book = book,
                                    .cmd = cmd.token };
    if (n_workers == 1 && !book) { /* a lone CPU worker: this process */
        struct host h;
        if (host_init(&h)) return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "cannot make a mutex");
        st = dse_worker_run(&job, &h, -1, 0, finished, NULL, 0, err);
        host_deinit(&h);
        return st;
    }

    st = run_hosts(&job, n_workers, per_host, err);
    dse_worker_book_free(book);
    if (st) return st;
    /* what the workers left */
    if ((st = dse_worker_init(&w, s, dir, o, &plan, 0, err))) return st;
    st = dse_worker_refresh(&w, err);
    *finished = !st && dse_worker_all_final(&w);
    dse_worker_deinit(&w);
    return st;
}
