/* test_sweep.c: training sweeps (sweep/lease.c, sweep/sweep_rec.c, sweep/sweep_train.c,
 * sweep/sweep_status.c): the lease protocol (claims, a race of many claimers, expiry
 * rules), successive halving's ranking and rungs, and whole sweeps run with the built
 * dse binary: many workers at once train each candidate exactly once (sweep-multi),
 * workers killed with SIGKILL at random moments and restarted give the same final
 * records and report as an uninterrupted run, bit for bit (sweep-crash), a worker
 * stopped past its lease cannot overwrite the one that took over (sweep-stall), and a
 * diverging candidate is recorded without NaN (sweep-diverge); a worker process of two
 * worker threads, as a GPU's workers run, killed and restarted the same way
 * (sweep-threads); GPU placement (gpu-fit),
 * the out-of-memory re-queue bookkeeping (gpu-oom), the record writer made from
 * sweep/record.def, byte for byte (rec-write), and `dse sweep --gpus` (sweep-gpus:
 * on a machine without a CUDA device, the clear refusal; with one, a sweep on it), and
 * with a device the crash test on it (sweep-crash-gpu: pinned cuDNN choices make a
 * killed and resumed GPU sweep the uninterrupted one, bit for bit). Seed of the kill
 * times: DSE_CRASH_SEED (printed). Asynchronous successive halving (sweep/asha.c): the
 * promotion rule (asha-rule), a 1-worker sweep against an oracle, repeated bit for bit and
 * killed and restarted (sweep-asha, sweep-asha-crash), and two workers, every promotion
 * justified by its file (sweep-asha-multi). The multi-objective evolution proposer (sweep/evolve.c,
 * evolve-*: determinism, feasibility under constraints, no duplicates, exhaustion, the
 * hypervolume, and evolution beating random search on a made-up top-1). `dse sweep --slurm`
 * (sweep/slurm.c): its script (slurm-script), and the command against stand-in Slurm
 * commands (slurm-fake; a real Slurm runs in tests/slurm_test.sh). */
#include "sweep/sweep_impl.h"
#include "engine/train.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/pcg32.h"
#include "analysis/analysis.h"
#include "sweep/evolve.h"
#include "sweep/json_read.h"
#include "sweep/search.h"
#include "sweep/slurm.h"
#include "netfile/netfile.h"
#include "engine/cuda/cuda.h"
#include "tests/check.h"

#ifndef DSE_BINARY
#define DSE_BINARY "build/dse"
#endif

#define TINY    "tests/spaces/sweep_tiny.cfg"
#define DIVERGE "tests/spaces/sweep_diverge.cfg"
#define EVO     "tests/spaces/sweep_evo.cfg"

static int data_installed(void) {
    return access("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", R_OK) == 0;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void nap(double s) {
    struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static void rm_rf(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* The test's scratch folder, made once per process; kept if a check failed. */
static const char *scratch(void) {
    static char dir[64] = "";
    if (!dir[0]) {
        strcpy(dir, "/tmp/dse_sweep_XXXXXX");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            exit(1);
        }
    }
    return dir;
}

/* Start the dse binary with args (NULL-terminated), stdout and stderr appended to log; with
 * group, as the leader of its own process group (kill(-pid) then ends its worker processes
 * too, as a crash of the machine or of the whole command would). */
static pid_t spawn_in(const char *log, const char *const *args, int group) {
    const char *argv[32];
    int n = 0;
    argv[n++] = DSE_BINARY;
    for (int i = 0; args[i] && n < 31; i++) argv[n++] = args[i];
    argv[n] = NULL;
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        if (group) setpgid(0, 0);
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(DSE_BINARY, (char *const *)argv);
        _exit(127);
    }
    if (p > 0 && group) setpgid(p, p); /* also here: no race with the kill */
    return p;
}

static pid_t spawn(const char *log, const char *const *args) { return spawn_in(log, args, 0); }

/* Wait for p at most limit seconds (then SIGKILL it); its exit status, or -1 if killed
 * by a signal. */
static int wait_for(pid_t p, double limit) {
    double t0 = now_s();
    int status;
    for (;;) {
        pid_t r = waitpid(p, &status, WNOHANG);
        if (r == p) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        if (r < 0) return -2;
        if (now_s() - t0 > limit) {
            fprintf(stderr, "  pid %ld still running after %.0f s: killed\n", (long)p, limit);
            kill(p, SIGKILL);
            waitpid(p, &status, 0);
            return -3;
        }
        nap(0.02);
    }
}

static int run_dse(const char *log, const char *const *args, double limit) {
    pid_t p = spawn(log, args);
    return p > 0 ? wait_for(p, limit) : -4;
}

static void show_log(const char *log) {
    char *text;
    if (dse_fs_read(log, &text, NULL, NULL)) return;
    size_t n = strlen(text);
    fprintf(stderr, "---- %s (last 4000 bytes)\n%s\n----\n", log, n > 4000 ? text + n - 4000 : text);
    free(text);
}

/* ---- records ------------------------------------------------------------------------- */

struct recs {
    struct dse_rec r[16];
    int            n;
};

static int rec_cmp(const void *a, const void *b) {
    return strcmp(((const struct dse_rec *)a)->id, ((const struct dse_rec *)b)->id);
}

static void recs_load(const char *dir, struct recs *x) {
    char path[600];
    memset(x, 0, sizeof *x);
    snprintf(path, sizeof path, "%s/candidates", dir);
    DIR *d = opendir(path);
    CHECK(d != NULL);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) && x->n < 16) {
        if (e->d_name[0] == '.' || !strstr(e->d_name, ".json")) continue;
        char file[900];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        dse_rec_init(&x->r[x->n]);
        struct dse_err err = { 0 };
        CHECK_OK(dse_rec_read_path(file, &x->r[x->n], &err));
        x->n++;
    }
    closedir(d);
    qsort(x->r, (size_t)x->n, sizeof x->r[0], rec_cmp);
}

static void recs_free(struct recs *x) {
    for (int i = 0; i < x->n; i++) dse_rec_deinit(&x->r[i]);
}

/* Ids, statuses, rungs and every per-epoch loss and accuracy, bit for bit, and the count of
 * classes never predicted. */
static int recs_same(const struct recs *a, const struct recs *b) {
    int same = a->n == b->n && a->n > 0;
    for (int i = 0; same && i < a->n; i++) {
        const struct dse_rec *x = &a->r[i], *y = &b->r[i];
        same = !strcmp(x->id, y->id) && x->status == y->status && x->n_epochs == y->n_epochs &&
               x->stopped_rung == y->stopped_rung && x->stopped_epoch == y->stopped_epoch &&
               x->diverged_epoch == y->diverged_epoch;
        for (int e = 0; same && e < x->n_epochs; e++) {
            float fx[4] = { x->ep[e].train_loss, x->ep[e].test_loss, x->ep[e].top1, x->ep[e].top5 };
            float fy[4] = { y->ep[e].train_loss, y->ep[e].test_loss, y->ep[e].top1, y->ep[e].top5 };
            same = memcmp(fx, fy, sizeof fx) == 0;
            /* classes never predicted: recorded (not -1, a file without it) and equal */
            same &= x->ep[e].unpredicted >= 0 && x->ep[e].unpredicted == y->ep[e].unpredicted;
        }
        if (!same)
            fprintf(stderr, "  %s: status %s/%s, epochs %d/%d, rung %d/%d differ (or a loss or accuracy)\n", x->id,
                    dse_rec_status_str(x->status), dse_rec_status_str(y->status), x->n_epochs, y->n_epochs,
                    x->stopped_rung, y->stopped_rung);
    }
    return same;
}

/* `dse report DIR --format csv` into out (no timings, no directory name in it). */
static int count_lines_of(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static char *report_csv(const char *dir) {
    char log[600], *text = NULL;
    snprintf(log, sizeof log, "%s.csv", dir);
    unlink(log);
    const char *args[] = { "report", dir, "--format", "csv", NULL };
    CHECK_INT_EQ(run_dse(log, args, 60), 0);
    if (dse_fs_read(log, &text, NULL, NULL)) return NULL;
    char *next = strstr(text, "next: dse export "); /* stderr's hint names the directory: not compared */
    CHECK(next != NULL);
    if (next) *next = '\0';
    return text;
}

/* Reference sweeps, run once by one uninterrupted worker: full training and successive
 * halving (eta 2: rungs at 1 and 2 epochs of 3). */
static const char *reference(int halving) {
    static char dirs[2][128];
    char *dir = dirs[halving];
    if (dir[0]) return dir;
    snprintf(dir, sizeof dirs[0], "%s/ref_%s", scratch(), halving ? "sh" : "full");
    char log[200];
    snprintf(log, sizeof log, "%s.log", dir);
    const char *full[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", NULL };
    const char *sh[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--early-stop", "sh",
                         "--eta", "2", NULL };
    double t0 = now_s();
    int rc = run_dse(log, halving ? sh : full, 300);
    CHECK_INT_EQ(rc, 0);
    if (rc) show_log(log);
    printf("  reference (%s): %.1f s\n", halving ? "halving" : "full", now_s() - t0);
    return dir;
}

/* ---- leases ---------------------------------------------------------------------------- */

static void test_lease_claim(void) {
    char dir[200];
    snprintf(dir, sizeof dir, "%s/lease_claim", scratch());
    struct dse_lease_me a, b;
    struct dse_lease la, lb, lc;
    struct dse_err err = { 0 };
    int won, held, missing;
    dse_lease_me_init(&a);
    dse_lease_me_init(&b);
    CHECK(strcmp(a.token, b.token) != 0);
    CHECK_OK(dse_lease_claim(dir, "cand", 0, &a, 30, NULL, &la, &won, &err));
    CHECK(won);
    CHECK_INT_EQ(la.gen, 1);
    CHECK_OK(dse_lease_claim(dir, "cand", 0, &b, 30, NULL, &lb, &won, &err)); /* gen 1 exists: b loses */
    CHECK(!won);
    CHECK_OK(dse_lease_check(dir, &la, &held, &err));
    CHECK(held);
    CHECK_OK(dse_lease_renew(dir, &la, &held, &err));
    CHECK(held);
    CHECK_INT_EQ(la.beat, 1);
    CHECK_OK(dse_lease_read(dir, "cand", 1, &lc, &missing, &err));
    CHECK_INT_EQ(lc.beat, 1);
    CHECK_STR_EQ(lc.token, a.token);
    CHECK_OK(dse_lease_release(dir, &la, &err));
    CHECK_OK(dse_lease_read(dir, "cand", 1, &lc, &missing, &err));
    CHECK(lc.released);
    /* b takes gen 2; a's old lease is no longer held and cannot be renewed */
    CHECK_OK(dse_lease_claim(dir, "cand", 1, &b, 30, NULL, &lb, &won, &err));
    CHECK(won);
    CHECK_OK(dse_lease_check(dir, &la, &held, &err));
    CHECK(!held);
    CHECK_OK(dse_lease_renew(dir, &la, &held, &err));
    CHECK(!held);
    /* a stale view (gen 1 named as current after gens 2..4 were made): the claim must lose */
    CHECK_OK(dse_lease_claim(dir, "cand", 2, &a, 30, NULL, &la, &won, &err));
    CHECK(won); /* gen 3 */
    CHECK_OK(dse_lease_claim(dir, "cand", 3, &b, 30, NULL, &lb, &won, &err));
    CHECK(won); /* gen 4; gen 2 removed, gen 3 kept */
    char path[300];
    dse_lease_path(dir, "cand", 2, path, sizeof path);
    CHECK(access(path, F_OK) != 0);
    dse_lease_path(dir, "cand", 3, path, sizeof path);
    CHECK(access(path, F_OK) == 0);
    CHECK_OK(dse_lease_claim(dir, "cand", 1, &a, 30, NULL, &lc, &won, &err)); /* creates gen 2 again, sees 4 */
    CHECK(!won);
    dse_lease_path(dir, "cand", 2, path, sizeof path);
    CHECK(access(path, F_OK) != 0); /* and took it back */
    CHECK_OK(dse_lease_check(dir, &la, &held, &err)); /* gen 3: gen 4 exists */
    CHECK(!held);
    CHECK_OK(dse_lease_check(dir, &lb, &held, &err));
    CHECK(held);
}

/* 12 processes try to take the same expired lease at the same moment, 15 times over:
 * exactly one wins each time. */
static void test_lease_race(void) {
    char dir[200], go[300];
    snprintf(dir, sizeof dir, "%s/lease_race", scratch());
    CHECK_OK(dse_fs_mkdirs(dir, NULL));
    for (int round = 0; round < 15; round++) {
        enum { N = 12 };
        pid_t kids[N];
        snprintf(go, sizeof go, "%s/go.%d", dir, round);
        for (int k = 0; k < N; k++) {
            fflush(NULL);
            kids[k] = fork();
            if (kids[k] == 0) {
                struct dse_lease_me me;
                struct dse_lease l;
                int won = 0;
                dse_lease_me_init(&me);
                while (access(go, F_OK) != 0) nap(0.001);
                if (dse_lease_claim(dir, "x", round, &me, 30, NULL, &l, &won, NULL)) _exit(2);
                _exit(won ? 0 : 1);
            }
        }
        nap(0.05);
        int fd = open(go, O_WRONLY | O_CREAT, 0644);
        if (fd >= 0) close(fd);
        int winners = 0, errors = 0;
        for (int k = 0; k < N; k++) {
            int rc = wait_for(kids[k], 30);
            winners += rc == 0;
            errors += rc != 0 && rc != 1;
        }
        CHECK_INT_EQ(winners, 1);
        CHECK_INT_EQ(errors, 0);
    }
}

/* The expiry rules, on made-up leases and clocks. */
static void test_lease_free(void) {
    struct dse_lease_me me;
    struct dse_lease l;
    struct dse_lease_obs obs = { 0, 0, 0 };
    const char *why;
    dse_lease_me_init(&me);
    memset(&l, 0, sizeof l);
    strcpy(l.id, "c"), strcpy(l.token, "t"), strcpy(l.host, "elsewhere"), strcpy(l.pidns, me.pidns);
    l.gen = 3, l.pid = 12345, l.beat = 7, l.renewed = 1000, l.ttl_s = 10;
    /* another host, fresh by its clock: not free; then unchanged for a ttl of ours: free */
    CHECK(!dse_lease_free(&l, &obs, &me, 1005, 50, &why));
    CHECK(!dse_lease_free(&l, &obs, &me, 1005, 59, &why));
    CHECK(dse_lease_free(&l, &obs, &me, 1005, 61, &why));
    CHECK(strstr(why, "not renewed") != NULL);
    /* a new beat restarts the observation */
    l.beat = 8;
    CHECK(!dse_lease_free(&l, &obs, &me, 1005, 62, &why));
    CHECK(!dse_lease_free(&l, &obs, &me, 1005, 71, &why));
    /* stale by the holder's clock by more than a second ttl: free at once */
    struct dse_lease_obs fresh = { 0, 0, 0 };
    CHECK(!dse_lease_free(&l, &fresh, &me, 1019, 0, &why));
    CHECK(dse_lease_free(&l, &fresh, &me, 1021, 0, &why));
    /* released: free */
    l.released = 1;
    CHECK(dse_lease_free(&l, &fresh, &me, 1000, 0, &why));
    l.released = 0;
    /* same host and pid namespace, pid gone: free at once; pid alive (ours): not */
    strcpy(l.host, me.host);
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) _exit(0);
    waitpid(p, NULL, 0);
    l.pid = p;
    struct dse_lease_obs o2 = { 0, 0, 0 };
    if (me.pidns[0]) {
        CHECK(dse_lease_holder_dead(&l, &me));
        CHECK(dse_lease_free(&l, &o2, &me, 1000, 0, &why));
        strcpy(l.pidns, "1"); /* another pid namespace: the pid says nothing */
        CHECK(!dse_lease_holder_dead(&l, &me));
        strcpy(l.pidns, me.pidns);
    }
    l.pid = (long)getppid();
    CHECK(!dse_lease_holder_dead(&l, &me));
}

/* Lease files that do not read (issue #31): garbage, empty, a directory, an absurd ttl, and
 * a name whose gen no claim could pass. Each reads as an error (not as missing), the last
 * is no lease at all, and an unreadable one is free once seen so for a ttl of ours. */
static void lease_seen_max(void *arg, const char *id, int64_t gen) {
    (void)id;
    int64_t *max = arg;
    if (gen > *max) *max = gen;
}

static void test_lease_unreadable(void) {
    char dir[200], path[400];
    snprintf(dir, sizeof dir, "%s/lease_bad", scratch());
    snprintf(path, sizeof path, "%s/leases", dir);
    struct dse_err err = { 0 };
    CHECK_OK(dse_fs_mkdirs(path, &err));
    static const struct {
        const char *name, *text; /* text NULL: a directory */
    } bad[] = {
        { "g.1", "{\"id\": \"g\", \"gen\": 1, garbage" },
        { "e.1", "" },
        { "d.1", NULL },
        { "t.1", "{\"id\": \"t\", \"gen\": 1, \"token\": \"x\", \"ttl_s\": 1e300, \"renewed\": 0}" },
        { "b.1", "{\"id\": \"b\", \"gen\": 1, \"token\": \"x\", \"beat\": 1e300, \"pid\": -1e30}" },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(bad); i++) {
        snprintf(path, sizeof path, "%s/leases/%s", dir, bad[i].name);
        if (bad[i].text) CHECK_OK(dse_fs_write_atomic(path, bad[i].text, strlen(bad[i].text), &err));
        else CHECK(mkdir(path, 0755) == 0);
        char id[8] = { bad[i].name[0], 0 };
        struct dse_lease l;
        int missing = -1;
        enum dse_status st = dse_lease_read(dir, id, 1, &l, &missing, &err);
        if (bad[i].name[0] == 'b') { /* out-of-range numbers read as 0, not as undefined casts */
            CHECK_OK(st);
            CHECK(l.beat == 0 && l.pid == 0);
            continue;
        }
        CHECK(st != DSE_OK);
        CHECK_INT_EQ(missing, 0);
        if (st == DSE_OK || missing) fprintf(stderr, "  %s read as a lease\n", bad[i].name);
    }
    /* a gen past DSE_LEASE_GEN_MAX names no lease: the scan does not see it */
    snprintf(path, sizeof path, "%s/leases/h.9223372036854775807", dir);
    CHECK_OK(dse_fs_write_atomic(path, "{}", 2, &err));
    int64_t max = 0;
    CHECK_OK(dse_lease_scan(dir, lease_seen_max, &max, &err));
    CHECK(max == 1);
    /* unreadable: free after ttl_s of the observer's clock, counted from the first look */
    struct dse_lease_obs obs = { 0, 0, 0 };
    const char *why;
    CHECK(!dse_lease_free_unreadable(4, &obs, 2, 100, &why));
    CHECK(!dse_lease_free_unreadable(4, &obs, 2, 101.5, &why));
    CHECK(dse_lease_free_unreadable(4, &obs, 2, 102.5, &why));
    CHECK(strstr(why, "unreadable") != NULL);
    CHECK(!dse_lease_free_unreadable(5, &obs, 2, 103, &why)); /* another gen: a new look */
}

/* dse_lease_crashes: outside kills of an earlier command cost this one nothing (crashes),
 * though they count as deaths (a candidate with --max-crashes of them is claimed last); any
 * progress (an epoch, or a checkpoint within one) restarts both counts. dse_lease_verdict
 * (--max-crashes 3): a candidate that kills its process dies in a new command each time, so
 * 2 x 3 deaths of any commands fail it too (issue #31: it was retried without limit). */
static void test_lease_crashes(void) {
    enum { T = DSE_LEASE_TRAIN, L = DSE_LEASE_LAST, FC = DSE_LEASE_FAIL_CRASHES, FD = DSE_LEASE_FAIL_DEATHS };
    static const struct {
        const char *name, *holder_cmd;
        int         crashes, deaths, epochs_at_claim;
        int64_t     saved_at_claim;
        int         epochs;
        int64_t     saved;
        int         want_crashes, want_deaths, want_verdict;
    } t[] = {
        { "another command",           "other", 2, 2, 0, 0,  0, 0,  0, 3, L  },
        { "an old lease (no command)", "",      2, 2, 0, 0,  0, 0,  0, 3, L  },
        { "ours, no progress",         "ME",    2, 2, 0, 0,  0, 0,  3, 3, FC },
        { "ours, after others' deaths", "ME",   0, 5, 0, 0,  0, 0,  1, 6, FD },
        { "ours, first death",         "ME",    0, 0, 1, 40, 1, 40, 1, 1, T  },
        { "ours, an epoch finished",   "ME",    2, 2, 0, 0,  1, 0,  1, 1, T  },
        { "ours, a checkpoint within", "ME",    2, 2, 1, 40, 1, 80, 1, 1, T  },
        { "another's, a checkpoint",   "other", 2, 4, 1, 40, 1, 80, 0, 1, T  },
        { "ours, same checkpoint",     "ME",    2, 2, 1, 40, 1, 40, 3, 3, FC },
        { "another's, 2 deaths",       "other", 0, 1, 0, 0,  0, 0,  0, 2, T  },
        { "another's, 5 deaths",       "other", 0, 4, 0, 0,  0, 0,  0, 5, L  },
        { "another's, 6 deaths",       "other", 0, 5, 0, 0,  0, 0,  0, 6, FD },
        { "another's, 9 deaths",       "other", 0, 8, 0, 0,  0, 0,  0, 9, FD },
        { "another's, 6 then progress", "other", 0, 5, 0, 0, 1, 0,  0, 1, T  },
    };
    struct dse_lease_me me;
    dse_lease_me_init(&me);
    strcpy(me.cmd, "ME");
    for (int i = 0; i < DSE_ARRAY_LEN(t); i++) {
        struct dse_lease l = { .crashes = t[i].crashes, .deaths = t[i].deaths, .epochs_at_claim = t[i].epochs_at_claim,
                               .saved_at_claim = t[i].saved_at_claim };
        strcpy(l.cmd, t[i].holder_cmd);
        struct dse_lease_count n = { .epochs = t[i].epochs, .saved = t[i].saved };
        dse_lease_crashes(&l, &me, &n);
        if (n.crashes != t[i].want_crashes || n.deaths != t[i].want_deaths)
            fprintf(stderr, "  lease-crashes %s: crashes %d, deaths %d; expected %d, %d\n", t[i].name, n.crashes,
                    n.deaths, t[i].want_crashes, t[i].want_deaths);
        CHECK_INT_EQ(n.crashes, t[i].want_crashes);
        CHECK_INT_EQ(n.deaths, t[i].want_deaths);
        const int v = (int)dse_lease_verdict(&n, 3);
        if (v != t[i].want_verdict)
            fprintf(stderr, "  lease-crashes %s: verdict %d; expected %d\n", t[i].name, v, t[i].want_verdict);
        CHECK_INT_EQ(v, t[i].want_verdict);
    }
}

/* A sweep whose leases do not read (issue #31: it waited forever): each candidate is taken
 * over once a worker has seen its lease so for --lease-seconds, and the sweep finishes;
 * dse status names them first and still advises the command, which now ends. */
static void test_bad_lease(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char dir[200], log[260], path[600];
    snprintf(dir, sizeof dir, "%s/bad_lease", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    /* a command that stops at once (a time budget of 0.6 ms): the plan and the records, no training */
    const char *an[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--budget", "0.00001m",
                         NULL };
    CHECK_INT_EQ(run_dse(log, an, 60), 0);
    struct recs x;
    recs_load(dir, &x);
    CHECK_INT_EQ(x.n, 4);
    snprintf(path, sizeof path, "%s/leases", dir);
    mkdir(path, 0755);
    struct dse_err err = { 0 };
    for (int i = 0; i < x.n && i < 4; i++) {
        snprintf(path, sizeof path, "%s/leases/%s.1", dir, x.r[i].id);
        if (i == 0) CHECK_OK(dse_fs_write_atomic(path, "garbage", 7, &err));
        if (i == 1) CHECK_OK(dse_fs_write_atomic(path, "", 0, &err));
        if (i == 2) CHECK(mkdir(path, 0755) == 0);
        if (i == 3) {
            CHECK_OK(dse_fs_write_atomic(path, "x", 1, &err));
            snprintf(path, sizeof path, "%s/leases/%s.9223372036854775807", dir, x.r[i].id);
            CHECK_OK(dse_fs_write_atomic(path, "x", 1, &err));
        }
    }
    char slog[260], *text = NULL;
    snprintf(slog, sizeof slog, "%s.status", dir);
    const char *st[] = { "status", dir, NULL };
    CHECK_INT_EQ(run_dse(slog, st, 60), 0);
    CHECK_OK(dse_fs_read(slog, &text, NULL, &err));
    CHECK(text && strstr(text, "Unreadable leases") && strstr(text, x.r[2].id));
    free(text);
    const char *args[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--lease-seconds",
                           "1", NULL };
    CHECK_INT_EQ(run_dse(log, args, 120), 0);
    struct recs y;
    recs_load(dir, &y);
    CHECK_INT_EQ(y.n, 4);
    for (int i = 0; i < y.n; i++) CHECK_INT_EQ(y.r[i].status, DSE_REC_DONE);
    CHECK_OK(dse_fs_read(log, &text, NULL, &err));
    CHECK(text && strstr(text, "was unreadable for a whole ttl"));
    free(text);
    recs_free(&x), recs_free(&y);
    if (check_failures) show_log(log);
}

/* A checkpoints/<id> that is a symbolic link to a folder outside the sweep (issue #31: the
 * worker wrote its checkpoints there and deleted the folder's older one): refused, naming
 * the link, and nothing outside is written or removed. */
static void test_ckpt_link(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char dir[200], log[260], path[600], out[260], keep[300];
    snprintf(dir, sizeof dir, "%s/ckpt_link", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    snprintf(out, sizeof out, "%s/outside", scratch());
    const char *first[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--budget",
                            "0.00001m", NULL };
    CHECK_INT_EQ(run_dse(log, first, 60), 0);
    struct recs x;
    recs_load(dir, &x);
    CHECK(x.n >= 1);
    struct dse_err err = { 0 };
    CHECK(mkdir(out, 0755) == 0);
    snprintf(keep, sizeof keep, "%s/epoch-1.ckpt", out); /* what pruning would have removed */
    CHECK_OK(dse_fs_write_atomic(keep, "keep", 4, &err));
    snprintf(path, sizeof path, "%s/checkpoints", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/checkpoints/%s", dir, x.n ? x.r[0].id : "none");
    CHECK(symlink(out, path) == 0);
    const char *args[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", NULL };
    CHECK(run_dse(log, args, 120) != 0);
    char *text = NULL;
    CHECK_OK(dse_fs_read(log, &text, NULL, &err));
    CHECK(text && strstr(text, "is a symbolic link: refusing to write through it"));
    free(text);
    int n = 0;
    DIR *d = opendir(out);
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    CHECK_INT_EQ(n, 1);
    CHECK(access(keep, F_OK) == 0);
    recs_free(&x);
    if (check_failures) show_log(log);
}

/* What dse report and dse status say of damaged files (issue #31): a record whose grid index
 * is past its space's (they listed it), and a sweep.json that does not parse (status left
 * out its line). Both exit 2 naming file and line. */
static int output_has(const char *log, const char *want) {
    char *text = NULL;
    int ok = !dse_fs_read(log, &text, NULL, NULL) && strstr(text, want) != NULL;
    if (!ok) fprintf(stderr, "  %s does not say '%s':\n%s\n", log, want, text ? text : "");
    free(text);
    return ok;
}

static void test_bad_files(void) {
    char dir[200], log[260], path[600], want[1000];
    snprintf(dir, sizeof dir, "%s/bad_files", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *an[] = { "sweep", TINY, "--out", dir, "--analytic-only", NULL };
    CHECK_INT_EQ(run_dse(log, an, 60), 0);
    struct recs x;
    recs_load(dir, &x);
    CHECK(x.n == 4);
    struct dse_err err = { 0 };
    char *text = NULL;
    snprintf(path, sizeof path, "%s/candidates/%s.json", dir, x.n ? x.r[0].id : "none");
    CHECK_OK(dse_fs_read(path, &text, NULL, &err));
    char *at = text ? strstr(text, "\"index\": ") : NULL;
    CHECK(at != NULL);
    if (at) { /* the grid has 4 candidates: index 9 is past it (one digit, so the length stays) */
        at[9] = '9';
        CHECK_OK(dse_fs_write_atomic(path, text, strlen(text), &err));
    }
    free(text);
    snprintf(want, sizeof want, "%s:3: \"index\" = 9 is outside the space of %s/space.cfg; expected 0 to 3", path, dir);
    const char *rep[] = { "report", dir, NULL };
    const char *st[] = { "status", dir, NULL };
    unlink(log);
    CHECK_INT_EQ(run_dse(log, rep, 60), 2);
    CHECK(output_has(log, want));
    unlink(log);
    CHECK_INT_EQ(run_dse(log, st, 60), 2);
    CHECK(output_has(log, want));
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    static const char broken[] = "{\"format\": \"dse-sweep-1\",\n \"space\": ,\n}\n";
    CHECK_OK(dse_fs_write_atomic(path, broken, strlen(broken), &err));
    snprintf(want, sizeof want, "%s:2: unexpected ','", path);
    unlink(log);
    CHECK_INT_EQ(run_dse(log, st, 60), 2);
    CHECK(output_has(log, want));
    recs_free(&x);
}

/* The ETA (dse_tally_eta, issue #31: the first ETA was 1,365 s for a 73 s run): the work left
 * weighted by each candidate's FLOPs, at the seconds per FLOP-epoch measured; the mean epoch
 * time only where a FLOPs is unknown; none before an epoch is timed. Four candidates of 1, 2, 4
 * and 8 MFLOP, 3 epochs each (12 in all); each timed epoch took 1 s per MFLOP. */
static void test_tally_eta(void) {
    static const struct {
        const char *name;
        int         epochs[4];  /* done so far, each timed at 1 s per MFLOP */
        int         final;      /* candidates 0 .. final - 1 are done */
        int         running;    /* workers training */
        int         no_flops;   /* candidate 3's FLOPs unknown */
        double      want;       /* seconds; -1: unknown */
    } t[] = {
        { "nothing timed yet",          { 0, 0, 0, 0 }, 0, 1, 0, -1 },
        { "smallest first (1 s)",       { 1, 0, 0, 0 }, 0, 1, 0, 2 * 1 + 3 * 2 + 3 * 4 + 3 * 8 }, /* not 11 x 1 s */
        { "largest first (8 s)",        { 0, 0, 0, 1 }, 0, 1, 0, 3 * 1 + 3 * 2 + 3 * 4 + 2 * 8 }, /* not 11 x 8 s */
        { "two workers",                { 1, 0, 0, 0 }, 0, 2, 0, 22 },
        { "two done",                   { 3, 3, 0, 0 }, 2, 1, 0, 3 * 4 + 3 * 8 },
        { "a FLOPs unknown: mean epoch", { 1, 1, 0, 0 }, 0, 1, 1, 10 * 1.5 },
        { "all done",                   { 3, 3, 3, 3 }, 4, 1, 0, 0 },
    };
    const struct dse_sweep_plan plan = { .epochs = 3, .halving = DSE_SWEEP_HALVING_NONE, .eta = 3, .min_epochs = 1 };
    for (int i = 0; i < DSE_ARRAY_LEN(t); i++) {
        struct dse_rec r[4];
        int running[4] = { 0 };
        struct dse_err err = { 0 };
        for (int k = 0; k < 4; k++) {
            dse_rec_init(&r[k]);
            r[k].flops = k == 3 && t[i].no_flops ? 0 : (int64_t)1e6 << k;
            for (int e = 0; e < t[i].epochs[k]; e++) {
                const struct dse_epoch_result ep = { .top1 = 0.5f, .seconds = (double)(1 << k) };
                CHECK_OK(dse_rec_set_epoch(&r[k], e, &ep, &err));
            }
            if (k < t[i].final) r[k].status = DSE_REC_DONE;
        }
        for (int k = t[i].final, w = 0; k < 4 && w < t[i].running; k++, w++) running[k] = 1;
        struct dse_tally tl;
        dse_tally_make(&tl, r, 4, &plan, NULL, running);
        const double got = dse_tally_eta(&tl);
        const int ok = t[i].want < 0 ? got < 0 : fabs(got - t[i].want) < 1e-6 * (1 + t[i].want);
        if (!ok) printf("  tally-eta %s: %g s, expected %g s\n", t[i].name, got, t[i].want);
        CHECK(ok);
        for (int k = 0; k < 4; k++) dse_rec_deinit(&r[k]);
    }
}

/* ---- successive halving ------------------------------------------------------------------ */

static void test_rank(void) {
    /* a front of three (small and weak, middle, big and strong), one dominated */
    const double top1[] = { 0.60, 0.80, 0.90, 0.70 };
    const int64_t bytes[] = { 100, 200, 400, 300 };
    const char *const ids[] = { "a", "b", "c", "d" };
    int order[4], prank[4];
    dse_sweep_rank_rung(4, top1, bytes, ids, DSE_SWEEP_RANK_PARETO, order, prank);
    CHECK_INT_EQ(prank[0], 0);
    CHECK_INT_EQ(prank[1], 0);
    CHECK_INT_EQ(prank[2], 0);
    CHECK_INT_EQ(prank[3], 1);
    /* the front's ends first (the smallest is not culled for being small), larger top-1 first */
    CHECK_INT_EQ(order[0], 2);
    CHECK_INT_EQ(order[1], 0);
    CHECK_INT_EQ(order[2], 1);
    CHECK_INT_EQ(order[3], 3);
    dse_sweep_rank_rung(4, top1, bytes, ids, DSE_SWEEP_RANK_TOP1, order, NULL);
    CHECK_INT_EQ(order[0], 2);
    CHECK_INT_EQ(order[1], 1);
    CHECK_INT_EQ(order[2], 3);
    CHECK_INT_EQ(order[3], 0);
    /* ties: equal points share a rank; the id decides, so the order never depends on input order */
    const double t2[] = { 0.5, 0.5 };
    const int64_t b2[] = { 10, 10 };
    const char *const i2[] = { "z", "y" };
    dse_sweep_rank_rung(2, t2, b2, i2, DSE_SWEEP_RANK_PARETO, order, prank);
    CHECK_INT_EQ(prank[0], 0);
    CHECK_INT_EQ(prank[1], 0);
    CHECK_INT_EQ(order[0], 1);
    CHECK_INT_EQ(dse_sweep_keep(9, 3), 3);
    CHECK_INT_EQ(dse_sweep_keep(2, 3), 1);
    CHECK_INT_EQ(dse_sweep_keep(0, 3), 0);
    CHECK_INT_EQ(dse_sweep_keep(8, 2), 4);
}

static void test_plan(void) {
    struct dse_sweep_plan p;
    struct dse_err err = { 0 };
    memset(&p, 0, sizeof p);
    p.epochs = 10, p.halving = 1, p.eta = 3, p.min_epochs = 1;
    CHECK_OK(dse_sweep_plan_rungs(&p, &err));
    CHECK_INT_EQ(p.n_rungs, 3); /* 1, 3, 9 */
    CHECK_INT_EQ(p.rungs[2], 9);
    p.epochs = 9;
    CHECK_OK(dse_sweep_plan_rungs(&p, &err));
    CHECK_INT_EQ(p.n_rungs, 2);
    p.min_epochs = 9;
    CHECK_INT_EQ(dse_sweep_plan_rungs(&p, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "no rung") != NULL);
    p.halving = 0;
    CHECK_OK(dse_sweep_plan_rungs(&p, &err));
    CHECK_INT_EQ(p.n_rungs, 0);
    /* what to do next, from a record and the rungs */
    struct dse_rec r;
    struct dse_rung rungs[2];
    int target, rung;
    memset(rungs, 0, sizeof rungs);
    dse_rec_init(&r);
    strcpy(r.id, "c1");
    p.halving = 1, p.epochs = 5, p.eta = 3, p.min_epochs = 1;
    CHECK_OK(dse_sweep_plan_rungs(&p, &err)); /* rungs at 1, 3 */
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_TRAIN);
    CHECK_INT_EQ(target, 1);
    struct dse_epoch_result ep = { .train_loss = 1, .test_loss = 1, .top1 = 0.5f, .top5 = 0.9f, .seconds = 1, .img_per_s = 1,
                                .unpredicted = 0 };
    CHECK_OK(dse_rec_set_epoch(&r, 0, &ep, &err));
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_WAIT);
    char promoted[1][DSE_ID_SIZE] = { "c1" };
    rungs[0].decided = 1, rungs[0].promoted = promoted, rungs[0].n_promoted = 1;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_TRAIN);
    CHECK_INT_EQ(target, 3);
    rungs[0].n_promoted = 0;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_STOP);
    CHECK_INT_EQ(rung, 0);
    r.status = DSE_REC_STOPPED;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_NONE);
    dse_rec_deinit(&r);
    /* plan.json round trip: the GPU fields (precision, algos) come back as written */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/plan-rt", scratch());
    CHECK_OK(dse_fs_mkdirs(dir, NULL));
    p.precision = DSE_CUDA_MATH_TF32, p.nondeterministic = 1;
    int existed = -1, missing = -1;
    CHECK_OK(dse_plan_create(dir, &p, "test", &existed, &err));
    CHECK_INT_EQ(existed, 0);
    struct dse_sweep_plan q;
    memset(&q, 0, sizeof q);
    CHECK_OK(dse_plan_read(dir, &q, &missing, &err));
    CHECK_INT_EQ(missing, 0);
    CHECK_INT_EQ(q.precision, DSE_CUDA_MATH_TF32);
    CHECK_INT_EQ(q.nondeterministic, 1);
    CHECK_INT_EQ(q.epochs, p.epochs);
}

/* ---- asynchronous successive halving ----------------------------------------------------- */

/* Results arrive at one rung one at a time; after each, every promotable candidate is
 * promoted (what one worker does: promotions before fresh work). eta 3, by top-1. By hand:
 * a .50, b .70: n < 3, quota 0; c .60: quota 1, b is first: promoted; d .90: quota 1, d
 * first: promoted (b was promoted on less: ASHA's known misstep); e .40: quota 1, d already;
 * f .80: quota 2 (d, f): f promoted; g .30: quota 2, both already. So b, d, f, in that order;
 * closed at n = 7 the quota is still 2: nothing more. */
static void test_asha_rule(void) {
    const double top1[] = { 0.50, 0.70, 0.60, 0.90, 0.40, 0.80, 0.30 };
    const int64_t bytes[] = { 10, 10, 10, 10, 10, 10, 10 };
    const char *const ids[] = { "a", "b", "c", "d", "e", "f", "g" };
    const char *const want[] = { "", "", "b", "d", "", "f", "" };
    const int want_quota[] = { 0, 0, 1, 1, 1, 2, 2 };
    int promoted[7] = { 0 }, promotable[7], quota;
    for (int n = 1; n <= 7; n++) {
        int k = dse_asha_promotable(n, top1, bytes, ids, promoted, 3, DSE_SWEEP_RANK_TOP1, 0, promotable, &quota);
        char got[8] = "";
        for (int i = 0; i < n; i++)
            if (promotable[i]) strcat(got, ids[i]), promoted[i] = 1;
        CHECK_STR_EQ(got, want[n - 1]);
        CHECK_INT_EQ(k, (int)strlen(want[n - 1]));
        CHECK_INT_EQ(quota, want_quota[n - 1]);
    }
    CHECK_INT_EQ(dse_asha_promotable(7, top1, bytes, ids, promoted, 3, DSE_SWEEP_RANK_TOP1, 1, promotable, &quota), 0);
    CHECK_INT_EQ(quota, 2);
    /* a rung reached by fewer than eta promotes nobody while open; closed, its best (as SH) */
    const int none[2] = { 0, 0 };
    CHECK_INT_EQ(dse_asha_promotable(2, top1, bytes, ids, none, 3, DSE_SWEEP_RANK_TOP1, 0, promotable, &quota), 0);
    CHECK_INT_EQ(dse_asha_promotable(2, top1, bytes, ids, none, 3, DSE_SWEEP_RANK_TOP1, 1, promotable, &quota), 1);
    CHECK_INT_EQ(promotable[1], 1);
    CHECK_INT_EQ(promotable[0], 0);
    /* by Pareto rank (test_rank's points: the front's ends c and a first), eta 2: a
     * promoted already, so only c */
    const double pt[] = { 0.60, 0.80, 0.90, 0.70 };
    const int64_t pb[] = { 100, 200, 400, 300 };
    const int pp[4] = { 1, 0, 0, 0 };
    CHECK_INT_EQ(dse_asha_promotable(4, pt, pb, ids, pp, 2, DSE_SWEEP_RANK_PARETO, 0, promotable, &quota), 1);
    CHECK_INT_EQ(quota, 2);
    CHECK_INT_EQ(promotable[2], 1);
    /* by top-1 the same four promote c and b */
    const int np[4] = { 0, 0, 0, 0 };
    CHECK_INT_EQ(dse_asha_promotable(4, pt, pb, ids, np, 2, DSE_SWEEP_RANK_TOP1, 0, promotable, &quota), 2);
    CHECK(promotable[2] && promotable[1] && !promotable[0] && !promotable[3]);
    /* the next action from the rungs' state: promotable, paused (open), stopped (closed) */
    struct dse_sweep_plan p;
    struct dse_err err = { 0 };
    memset(&p, 0, sizeof p);
    p.epochs = 4, p.halving = DSE_SWEEP_HALVING_ASHA, p.eta = 2, p.min_epochs = 1;
    CHECK_OK(dse_sweep_plan_rungs(&p, &err)); /* rungs at 1, 2 */
    CHECK_INT_EQ(p.n_rungs, 2);
    struct dse_rec r;
    struct dse_rung rungs[2];
    int target, rung;
    memset(rungs, 0, sizeof rungs);
    dse_rec_init(&r);
    strcpy(r.id, "c1");
    struct dse_epoch_result ep = { .train_loss = 1, .test_loss = 1, .top1 = 0.5f, .top5 = 0.9f, .seconds = 1, .img_per_s = 1,
                                .unpredicted = 0 };
    CHECK_OK(dse_rec_set_epoch(&r, 0, &ep, &err));
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_WAIT);
    CHECK_INT_EQ(rung, 0);
    char ids1[1][DSE_ID_SIZE] = { "c1" };
    rungs[0].promotable = ids1, rungs[0].n_promotable = 1;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_PROMOTE);
    CHECK_INT_EQ(target, 2);
    rungs[0].n_promotable = 0, rungs[0].decided = 1;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_STOP);
    rungs[0].promoted = ids1, rungs[0].n_promoted = 1;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_TRAIN);
    CHECK_INT_EQ(target, 2);
    CHECK_OK(dse_rec_set_epoch(&r, 1, &ep, &err));
    rungs[1].promotable = ids1, rungs[1].n_promotable = 1;
    CHECK_INT_EQ(dse_sweep_next(&r, &p, rungs, &target, &rung), DSE_ACT_PROMOTE);
    CHECK_INT_EQ(target, 4); /* the last rung goes on to R */
    CHECK_INT_EQ(rung, 1);
    dse_rec_deinit(&r);
    /* plan.json: none and sh as before ASHA (dse-plan-1, "halving" false or true); asha in a
     * dse-plan-2 file, which a dse from before refuses; each reads back as written */
    for (int h = 0; h < DSE_SWEEP_HALVING_COUNT; h++) {
        char dir[512], path[600], *text = NULL;
        snprintf(dir, sizeof dir, "%s/plan-%s", scratch(), dse_sweep_halving_str((enum dse_sweep_halving)h));
        CHECK_OK(dse_fs_mkdirs(dir, NULL));
        p.halving = (enum dse_sweep_halving)h;
        CHECK_OK(dse_sweep_plan_rungs(&p, &err));
        int existed = -1, missing = -1;
        CHECK_OK(dse_plan_create(dir, &p, "test", &existed, &err));
        snprintf(path, sizeof path, "%s/plan.json", dir);
        CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
        static const char *const head[] = {
            "{\n  \"format\": \"dse-plan-1\",\n  \"epochs\": 4,\n  \"halving\": false,\n  \"eta\": 2,\n",
            "{\n  \"format\": \"dse-plan-1\",\n  \"epochs\": 4,\n  \"halving\": true,\n  \"eta\": 2,\n",
            "{\n  \"format\": \"dse-plan-2\",\n  \"epochs\": 4,\n  \"halving\": \"asha\",\n  \"eta\": 2,\n" };
        CHECK(text && !strncmp(text, head[h], strlen(head[h])));
        free(text);
        struct dse_sweep_plan q;
        CHECK_OK(dse_plan_read(dir, &q, &missing, &err));
        CHECK_INT_EQ(q.halving, h);
        CHECK_INT_EQ(q.n_rungs, h ? 2 : 0);
    }
}

/* ---- GPUs ------------------------------------------------------------------------------ */

#define MiB ((int64_t)1 << 20)
#define GiB ((int64_t)1 << 30)

/* Placement: what a candidate asks for, and fits / wait / never against a device. */
static void test_gpu_fit(void) {
    /* 768 MiB for the handles and conv workspace, plus 10% of the estimate; each
     * out-of-memory failure in a row adds half the estimate */
    CHECK_INT_EQ(DSE_SWEEP_GPU_MARGIN_BYTES, 768 * MiB);
    CHECK_INT_EQ(dse_sweep_gpu_need(0, 0), 768 * MiB);
    CHECK_INT_EQ(dse_sweep_gpu_need(-1, 0), 768 * MiB); /* unknown estimate */
    CHECK_INT_EQ(dse_sweep_gpu_need(1000 * MiB, 0), 1100 * MiB + 768 * MiB);
    CHECK_INT_EQ(dse_sweep_gpu_need(1000 * MiB, 1), 1600 * MiB + 768 * MiB);
    CHECK_INT_EQ(dse_sweep_gpu_need(1000 * MiB, 2), 2100 * MiB + 768 * MiB);
    CHECK(dse_sweep_gpu_need(INT64_MAX / 2, 3) == INT64_MAX); /* saturates, never wraps */
    /* an 80 GiB device with 10 GiB free */
    const uint64_t total = 80 * GiB, free_b = 10 * GiB;
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 0, 2 * GiB), DSE_GPU_FITS);
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 0, 10 * GiB), DSE_GPU_FITS);      /* exactly what is free */
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 0, 10 * GiB + 1), DSE_GPU_WAIT);
    /* what the command's other workers on it have claimed and not yet allocated is not free */
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 9 * GiB, 2 * GiB), DSE_GPU_WAIT);
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 8 * GiB, 2 * GiB), DSE_GPU_FITS);
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 20 * GiB, 1), DSE_GPU_WAIT);      /* no underflow */
    /* more than the whole device: never, however much is free */
    CHECK_INT_EQ(dse_sweep_gpu_fit(total, total, 0, 80 * GiB), DSE_GPU_FITS);
    CHECK_INT_EQ(dse_sweep_gpu_fit(total, total, 0, 80 * GiB + 1), DSE_GPU_NEVER);
    CHECK_INT_EQ(dse_sweep_gpu_fit(0, total, 0, 81 * GiB), DSE_GPU_NEVER);
    /* a full device: wait (other users' processes are respected) */
    CHECK_INT_EQ(dse_sweep_gpu_fit(0, total, 0, 1), DSE_GPU_WAIT);
    CHECK_INT_EQ(dse_sweep_gpu_fit(0, total, 0, 0), DSE_GPU_FITS);
    /* a candidate whose estimate was too low: after OOMs it asks for more until it waits */
    const int64_t est = 6 * GiB; /* needs 7.35 GiB, then 10.35 GiB */
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 0, dse_sweep_gpu_need(est, 0)), DSE_GPU_FITS);
    CHECK_INT_EQ(dse_sweep_gpu_fit(free_b, total, 0, dse_sweep_gpu_need(est, 1)), DSE_GPU_WAIT);
    CHECK_INT_EQ(dse_sweep_gpu_fit(total, total, 0, dse_sweep_gpu_need(est, 40)), DSE_GPU_NEVER);
}

/* ---- the record writer (sweep/record.def) ------------------------------------------------ */

static void rec_epoch(struct dse_rec *r, int e, float train_loss, float loss, float top1, float top5, double seconds,
                      double img_per_s, int unpredicted) {
    const struct dse_epoch_result x = { .train_loss = train_loss, .test_loss = loss, .top1 = top1, .top5 = top5,
                                     .seconds = seconds, .img_per_s = img_per_s, .unpredicted = unpredicted };
    CHECK_OK(dse_rec_set_epoch(r, e, &x, NULL));
}

/* Candidate k (0-3) of TINY in one of four states: done (two epochs, two attempts), failed,
 * diverged at iteration 0, stopped at rung 0. */
static void rec_state(const struct dse_space *sp, int k, struct dse_rec *r) {
    struct dse_mp mp;
    dse_rec_init(r);
    dse_space_candidate(sp, (uint64_t)k, &mp);
    dse_space_id(&mp, r->id);
    r->index = k;
    r->seed = 7;
    r->epochs_planned = 3;
    r->lease_gen = 4 + k;
    switch (k) {
    case 0:
        rec_epoch(r, 0, 2.4603744f, 1.25f, 0.5f, NAN, 12.5, 500.0, 2);
        rec_epoch(r, 1, 0.1f, 0.333333343f, 0.7487f, 1.0f, 10.25, 600.0, -1);
        dse_rec_push_attempt(r, "h:1", 1, 2, "cuda:0", "fp32", 0)->to_epoch = 1;
        strcpy(r->att[0].end, "oom");
        strcpy(r->att[0].note, "out of memory on \"cuda:0\"");
        dse_rec_push_attempt(r, "h:2", 3, 1, "", "", 1)->to_epoch = 2;
        strcpy(r->att[1].end, "done");
        r->att[1].seconds = 1.25;
        r->status = DSE_REC_DONE;
        break;
    case 1:
        r->status = DSE_REC_FAILED;
        strcpy(r->failed_why, "x.cfg:3: \"quoted\" and \xc3\xa9 and a\ttab");
        break;
    case 2:
        rec_epoch(r, 0, NAN, NAN, NAN, NAN, 0, 0, 0);
        r->status = DSE_REC_DIVERGED;
        r->diverged_epoch = 1;
        r->diverged_iter = 0;
        break;
    case 3:
        rec_epoch(r, 0, 1, 2, 0.25f, 0.75f, 1, 100, 0);
        r->status = DSE_REC_STOPPED;
        r->stopped_rung = 0;
        r->stopped_epoch = 1;
        break;
    }
}

/* The training part dse_rec_write generates from sweep/record.def, byte for byte as the
 * hand-written writer before it had it (the sweep crash tests compare files bit for bit),
 * and read back by the one reader and written again: the same bytes. */
static void test_rec_write(void) {
    static const char *const want[4] = {
        "  \"status\": \"done\",\n  \"pruned_by\": null,\n  \"top1\": 0.7487,\n  \"top5\": 1,\n  \"loss\": 0.33333334,\n"
        "  \"epochs_done\": 2,\n  \"epochs_planned\": 3,\n  \"seed\": 7,\n  \"per_epoch\": [\n"
        "    {\"epoch\": 1, \"train_loss\": 2.4603744, \"loss\": 1.25, \"top1\": 0.5, \"top5\": null, \"seconds\": 12.500, "
        "\"img_per_s\": 500.0, \"unpredicted\": 2},\n"
        "    {\"epoch\": 2, \"train_loss\": 0.1, \"loss\": 0.33333334, \"top1\": 0.7487, \"top5\": 1, \"seconds\": 10.250, "
        "\"img_per_s\": 600.0}\n  ],\n"
        "  \"train_seconds\": 22.750,\n  \"img_per_s\": 545.5,\n"
        "  \"diverged_epoch\": null, \"diverged_iter\": null,\n  \"failed_why\": null,\n"
        "  \"stopped_rung\": null, \"stopped_epoch\": null,\n  \"lease_gen\": 4,\n  \"attempts_total\": 2,\n"
        "  \"attempts\": [\n"
        "    {\"worker\": \"h:1\", \"lease_gen\": 1, \"threads\": 2, \"device\": \"cuda:0\", \"precision\": \"fp32\", "
        "\"from_epoch\": 0, \"to_epoch\": 1, \"seconds\": 0.000, \"end\": \"oom\", \"note\": \"out of memory on "
        "\\\"cuda:0\\\"\"},\n"
        "    {\"worker\": \"h:2\", \"lease_gen\": 3, \"threads\": 1, \"device\": null, \"precision\": null, "
        "\"from_epoch\": 1, \"to_epoch\": 2, \"seconds\": 1.250, \"end\": \"done\"}\n  ]\n}\n",
        "  \"status\": \"failed\",\n  \"pruned_by\": null,\n  \"top1\": null,\n  \"top5\": null,\n  \"loss\": null,\n"
        "  \"epochs_done\": 0,\n  \"epochs_planned\": 3,\n  \"seed\": 7,\n  \"per_epoch\": [],\n"
        "  \"train_seconds\": 0.000,\n  \"img_per_s\": null,\n  \"diverged_epoch\": null, \"diverged_iter\": null,\n"
        "  \"failed_why\": \"x.cfg:3: \\\"quoted\\\" and \xc3\xa9 and a\\ttab\",\n"
        "  \"stopped_rung\": null, \"stopped_epoch\": null,\n  \"lease_gen\": 5,\n  \"attempts_total\": 0,\n"
        "  \"attempts\": []\n}\n",
        "  \"status\": \"diverged\",\n  \"pruned_by\": null,\n  \"top1\": null,\n  \"top5\": null,\n  \"loss\": null,\n"
        "  \"epochs_done\": 1,\n  \"epochs_planned\": 3,\n  \"seed\": 7,\n  \"per_epoch\": [\n"
        "    {\"epoch\": 1, \"train_loss\": null, \"loss\": null, \"top1\": null, \"top5\": null, \"seconds\": 0.000, "
        "\"img_per_s\": 0.0, \"unpredicted\": 0}\n  ],\n"
        "  \"train_seconds\": 0.000,\n  \"img_per_s\": null,\n  \"diverged_epoch\": 1, \"diverged_iter\": 0,\n"
        "  \"failed_why\": null,\n  \"stopped_rung\": null, \"stopped_epoch\": null,\n  \"lease_gen\": 6,\n"
        "  \"attempts_total\": 0,\n  \"attempts\": []\n}\n",
        "  \"status\": \"stopped\",\n  \"pruned_by\": null,\n  \"top1\": 0.25,\n  \"top5\": 0.75,\n  \"loss\": 2,\n"
        "  \"epochs_done\": 1,\n  \"epochs_planned\": 3,\n  \"seed\": 7,\n  \"per_epoch\": [\n"
        "    {\"epoch\": 1, \"train_loss\": 1, \"loss\": 2, \"top1\": 0.25, \"top5\": 0.75, \"seconds\": 1.000, "
        "\"img_per_s\": 100.0, \"unpredicted\": 0}\n  ],\n"
        "  \"train_seconds\": 1.000,\n  \"img_per_s\": 100.0,\n  \"diverged_epoch\": null, \"diverged_iter\": null,\n"
        "  \"failed_why\": null,\n  \"stopped_rung\": 0, \"stopped_epoch\": 1,\n  \"lease_gen\": 7,\n"
        "  \"attempts_total\": 0,\n  \"attempts\": []\n}\n",
    };
    struct dse_space sp;
    struct dse_err err = { 0 };
    char dir[200], path[400];
    snprintf(dir, sizeof dir, "%s/rec_write/candidates", scratch());
    CHECK_OK(dse_fs_mkdirs(dir, NULL));
    snprintf(dir, sizeof dir, "%s/rec_write", scratch());
    CHECK_OK(dse_space_load(TINY, &sp, &err));
    for (int k = 0; k < 4; k++) {
        struct dse_rec r, back;
        char *text = NULL, *again = NULL;
        rec_state(&sp, k, &r);
        dse_rec_init(&back);
        CHECK_OK(dse_rec_write(dir, &sp, &r, &err));
        snprintf(path, sizeof path, "%s/candidates/%s.json", dir, r.id);
        CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
        const char *tail = text ? strstr(text, "  \"status\"") : NULL;
        CHECK(tail && !strcmp(tail, want[k]));
        if (tail && strcmp(tail, want[k])) fprintf(stderr, "  state %d wrote:\n%s", k, tail);
        CHECK_OK(dse_rec_read(dir, r.id, &back, &err));
        CHECK_INT_EQ(back.status, r.status);
        CHECK_STR_EQ(back.failed_why, r.failed_why);
        CHECK_INT_EQ(back.n_epochs, r.n_epochs);
        CHECK_INT_EQ(back.n_att, r.n_att);
        CHECK_INT_EQ(back.stopped_rung, r.stopped_rung);
        CHECK(back.diverged_iter == r.diverged_iter && back.lease_gen == r.lease_gen && back.seed == r.seed);
        CHECK_OK(dse_rec_write(dir, &sp, &back, &err));
        CHECK_OK(dse_fs_read(path, &again, NULL, NULL));
        CHECK(text && again && !strcmp(text, again));
        free(text), free(again);
        dse_rec_deinit(&r), dse_rec_deinit(&back);
    }
    dse_space_free(&sp);
}

/* Out of memory: the attempt ends "oom" with a note, the candidate stays pending
 * (re-queued) until --max-oom in a row, then fails naming why; progress or another end
 * resets the count; the attempts' device, precision and note survive the file. */
static void test_gpu_oom(void) {
    struct dse_rec r;
    dse_rec_init(&r);
    strcpy(r.id, "c1");
    struct dse_rec_attempt *a = dse_rec_push_attempt(&r, "h:1", 1, 1, "cuda:0", "fp32", 0);
    CHECK_STR_EQ(a->device, "cuda:0");
    CHECK_INT_EQ(r.attempts_total, 1);
    CHECK_INT_EQ(dse_rec_oom_streak(&r), 0);
    CHECK_INT_EQ(dse_rec_oom(&r, "cuda:0", 1234, 900, "cudaMalloc: cudaErrorMemoryAllocation", 3), 0);
    CHECK_INT_EQ(r.status, DSE_REC_PENDING);
    CHECK_STR_EQ(r.att[0].end, "oom");
    CHECK_STR_EQ(r.att[0].note, "out of memory on cuda:0 with 1234 MiB free at its claim (given 900 MiB); re-queued");
    CHECK_INT_EQ(dse_rec_oom_streak(&r), 1);
    dse_rec_push_attempt(&r, "h:2", 2, 1, "cuda:1", "fp32", 0);
    CHECK_INT_EQ(dse_rec_oom_streak(&r), 0); /* the new attempt has not ended */
    CHECK_INT_EQ(dse_rec_oom(&r, "cuda:1", 2000, 1400, "x", 3), 0);
    CHECK_INT_EQ(dse_rec_oom_streak(&r), 2);
    /* an attempt that finished an epoch before running out: the count starts again there */
    a = dse_rec_push_attempt(&r, "h:3", 3, 1, "cuda:0", "fp32", 0);
    a->to_epoch = 1;
    CHECK_INT_EQ(dse_rec_oom(&r, "cuda:0", 3000, 1900, "x", 3), 0);
    CHECK_INT_EQ(dse_rec_oom_streak(&r), 1);
    dse_rec_push_attempt(&r, "h:3", 4, 1, "cuda:0", "fp32", 1);
    CHECK_INT_EQ(dse_rec_oom(&r, "cuda:0", 3000, 2400, "x", 3), 0);
    CHECK_INT_EQ(dse_rec_oom_streak(&r), 2);
    CHECK_INT_EQ(r.status, DSE_REC_PENDING);
    dse_rec_push_attempt(&r, "h:3", 5, 1, "cuda:0", "fp32", 1);
    CHECK_INT_EQ(dse_rec_oom(&r, "cuda:0", 3100, 2900, "cudnnConvolutionForward: CUDNN_STATUS_ALLOC_FAILED", 3), 1);
    CHECK_INT_EQ(r.status, DSE_REC_FAILED);
    CHECK(strstr(r.failed_why, "out of memory on a GPU 3 times in a row") != NULL);
    CHECK(strstr(r.failed_why, "CUDNN_STATUS_ALLOC_FAILED") != NULL);
    CHECK(strstr(r.att[r.n_att - 1].note, "; failed") != NULL);
    /* another ending breaks the run of OOMs */
    struct dse_rec q;
    dse_rec_init(&q);
    dse_rec_push_attempt(&q, "h:1", 1, 1, "cuda:0", "fp32", 0);
    dse_rec_oom(&q, "cuda:0", 1, 1, "x", 5);
    a = dse_rec_push_attempt(&q, "h:1", 2, 1, "cuda:0", "fp32", 0);
    strcpy(a->end, "budget");
    dse_rec_push_attempt(&q, "h:1", 3, 1, "cuda:0", "fp32", 0);
    dse_rec_oom(&q, "cuda:0", 1, 1, "x", 5);
    CHECK_INT_EQ(dse_rec_oom_streak(&q), 1);
    /* only the last DSE_REC_ATTEMPTS_MAX are kept; attempts_total counts them all */
    for (int k = 0; k < DSE_REC_ATTEMPTS_MAX + 3; k++) dse_rec_push_attempt(&q, "h:9", 10 + k, 1, "cpu", "fp32", 0);
    CHECK_INT_EQ(q.n_att, DSE_REC_ATTEMPTS_MAX);
    CHECK_INT_EQ(q.attempts_total, 3 + DSE_REC_ATTEMPTS_MAX + 3);
    CHECK_INT_EQ(q.att[DSE_REC_ATTEMPTS_MAX - 1].lease_gen, 10 + DSE_REC_ATTEMPTS_MAX + 2);
    dse_rec_deinit(&q);

    /* through a candidate file and back */
    struct dse_space sp;
    struct dse_sweep_summary sum;
    struct dse_err err = { 0 };
    char dir[200];
    snprintf(dir, sizeof dir, "%s/gpu_oom", scratch());
    CHECK_OK(dse_space_load(TINY, &sp, &err));
    CHECK_OK(dse_sweep_analytic(&sp, dir, NULL, &sum, &err));
    struct recs x;
    recs_load(dir, &x);
    CHECK_INT_EQ(x.n, 4);
    if (x.n == 4) {
        struct dse_rec *w = &x.r[0];
        dse_rec_push_attempt(w, "h:1", 1, 2, "cuda:3", "tf32", 0);
        dse_rec_oom(w, "cuda:3", 512, 800, "out of memory \"quoted\"", 4);
        dse_rec_push_attempt(w, "h:2", 2, 1, "cpu", "fp32", 0);
        strcpy(w->att[1].end, "done");
        CHECK_OK(dse_rec_write(dir, &sp, w, &err));
        struct dse_rec back;
        dse_rec_init(&back);
        CHECK_OK(dse_rec_read(dir, w->id, &back, &err));
        CHECK_INT_EQ(back.n_att, 2);
        CHECK_INT_EQ(back.status, DSE_REC_PENDING);
        CHECK_STR_EQ(back.att[0].device, "cuda:3");
        CHECK_STR_EQ(back.att[0].precision, "tf32");
        CHECK_INT_EQ(back.att[0].threads, 2);
        CHECK_STR_EQ(back.att[0].end, "oom");
        CHECK_STR_EQ(back.att[0].note, w->att[0].note);
        CHECK_STR_EQ(back.att[1].device, "cpu");
        CHECK_STR_EQ(back.att[1].note, "");
        CHECK_INT_EQ(dse_rec_oom_streak(&back), 0);
        /* dse status lists a candidate whose last attempt ran out of memory, with its note */
        dse_rec_push_attempt(w, "h:3", 3, 1, "cuda:1", "fp32", 0);
        dse_rec_oom(w, "cuda:1", 700, 900, "x", 4);
        CHECK_OK(dse_rec_write(dir, &sp, w, &err));
        struct dse_sweep_plan plan;
        memset(&plan, 0, sizeof plan);
        plan.epochs = 3, plan.eta = 3, plan.min_epochs = 1, plan.conv = DSE_ALGO_AUTO;
        int existed = 0;
        CHECK_OK(dse_plan_create(dir, &plan, "test", &existed, &err));
        char *st = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&st, &len);
        CHECK_OK(dse_sweep_status(f, dir, 0, NULL, &err));
        fclose(f);
        CHECK(st && strstr(st, "Re-queued after running out of GPU memory"));
        CHECK(st && strstr(st, "1 in a row; last: out of memory on cuda:1 with 700 MiB free at its claim (given 900 "
                              "MiB); re-queued"));
        free(st);
        dse_rec_deinit(&back);
    }
    recs_free(&x);
    dse_space_free(&sp);
    dse_rec_deinit(&r);
}

/* `dse sweep --gpus`: without a CUDA device (or CUDA in the build) it stops at once, says
 * why, exits 2 and writes nothing; with devices, an index past them is refused naming
 * CUDA_VISIBLE_DEVICES, and (with Fashion-MNIST) a sweep trains on cuda:0, two workers
 * packed on it as threads of one process, each attempt recording the device, precision
 * and its thread. A plan made for tf32
 * refuses CPU workers. */
static void test_sweep_gpus(void) {
    char dir[200], log[260], *text = NULL, why[256] = "", path[300];
    snprintf(dir, sizeof dir, "%s/gpus", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const int count = dse_cuda_device_count(why, (int)sizeof why);
    printf("  CUDA devices: %d%s%s\n", count, count ? "" : ": ", why);
    if (count == 0) {
        const char *args[] = { "sweep", TINY, "--out", dir, "--gpus", "0", NULL };
        CHECK_INT_EQ(run_dse(log, args, 60), 2);
        CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
        CHECK(text && (strstr(text, "dse: --gpus: no CUDA device (") ||
                       strstr(text, "dse: --gpus: this dse was built without the CUDA backend")));
        free(text), text = NULL;
        snprintf(path, sizeof path, "%s/sweep.json", dir);
        CHECK(access(path, F_OK) != 0); /* refused before anything was written */
        const char *all[] = { "sweep", TINY, "--out", dir, "--gpus", "all", "--per-gpu", "2", NULL };
        unlink(log);
        CHECK_INT_EQ(run_dse(log, all, 60), 2);
    } else {
        char past[16];
        snprintf(past, sizeof past, "%d", count);
        const char *args[] = { "sweep", TINY, "--out", dir, "--gpus", past, NULL };
        CHECK_INT_EQ(run_dse(log, args, 60), 2);
        CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
        CHECK(text && strstr(text, "there is no CUDA device") && strstr(text, "CUDA_VISIBLE_DEVICES"));
        free(text), text = NULL;
    }
    if (!data_installed()) {
        printf("SKIP (the rest): dataset-fashion-mnist not installed\n");
        return;
    }
    if (count > 0) { /* a real sweep on the GPU: two workers on cuda:0 */
        const char *args[] = { "sweep", TINY, "--out", dir, "--gpus", "0", "--per-gpu", "2", NULL };
        unlink(log);
        int rc = run_dse(log, args, 300);
        CHECK_INT_EQ(rc, 0);
        struct recs x;
        recs_load(dir, &x);
        CHECK_INT_EQ(x.n, 4);
        for (int i = 0; i < x.n; i++) {
            const struct dse_rec *r = &x.r[i];
            CHECK_INT_EQ(r->status, DSE_REC_DONE);
            for (int k = 0; k < r->n_att; k++) {
                CHECK_STR_EQ(r->att[k].device, "cuda:0");
                CHECK_STR_EQ(r->att[k].precision, "fp32");
                const char *colon = strrchr(r->att[k].worker, ':'); /* host:pid.1 or .2: threads of one process */
                CHECK(colon && (strstr(colon, ".1") || strstr(colon, ".2")));
            }
        }
        recs_free(&x);
        /* the plan is fp32: another precision is refused */
        const char *tf32[] = { "sweep", TINY, "--out", dir, "--gpus", "0", "--precision", "tf32", NULL };
        unlink(log);
        CHECK_INT_EQ(run_dse(log, tf32, 60), 2);
        CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
        CHECK(text && strstr(text, "was started with --precision fp32, and this command gives tf32"));
        free(text), text = NULL;
        if (rc) show_log(log);
    }
    /* a sweep whose plan says tf32 cannot take CPU workers */
    char tdir[200];
    struct dse_space sp;
    struct dse_sweep_summary sum;
    struct dse_err err = { 0 };
    snprintf(tdir, sizeof tdir, "%s/tf32", scratch());
    CHECK_OK(dse_space_load(TINY, &sp, &err));
    CHECK_OK(dse_sweep_analytic(&sp, tdir, NULL, &sum, &err));
    struct dse_sweep_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.epochs = sp.train.epochs, plan.eta = 3, plan.min_epochs = 1, plan.conv = DSE_ALGO_AUTO;
    plan.precision = DSE_CUDA_MATH_TF32;
    int existed = 0, missing = 0;
    CHECK_OK(dse_plan_create(tdir, &plan, "test", &existed, &err));
    struct dse_sweep_plan back;
    CHECK_OK(dse_plan_read(tdir, &back, &missing, &err));
    CHECK_INT_EQ(back.precision, DSE_CUDA_MATH_TF32);
    const char *cpu[] = { "sweep", TINY, "--out", tdir, "--workers", "1", NULL };
    unlink(log);
    CHECK_INT_EQ(run_dse(log, cpu, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "plan.json: this sweep trains with --precision tf32, which only GPUs compute; give "
                              "--gpus"));
    free(text);
    dse_space_free(&sp);
}

/* ---- whole sweeps ------------------------------------------------------------------------ */

/* Four workers at once (one command with --workers 2 and two with --workers 1): every
 * candidate trained exactly once, in one stretch from epoch 0 to 3, and the results
 * those of one lone worker. */
static void test_multi(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *ref = reference(0);
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/multi", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *two[] = { "sweep", TINY, "--out", dir, "--workers", "2", "--conv", "gemm_batch", NULL };
    const char *one[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", NULL };
    double t0 = now_s();
    pid_t p[3] = { spawn(log, two), spawn(log, one), spawn(log, one) };
    int bad = 0;
    for (int k = 0; k < 3; k++) bad |= wait_for(p[k], 300) != 0;
    CHECK(!bad);
    printf("  4 workers: %.1f s\n", now_s() - t0);
    struct recs a, b;
    recs_load(ref, &a);
    recs_load(dir, &b);
    CHECK_INT_EQ(b.n, 4);
    char workers[4][96];
    int n_workers = 0;
    for (int i = 0; i < b.n; i++) {
        const struct dse_rec *r = &b.r[i];
        CHECK_INT_EQ(r->status, DSE_REC_DONE);
        CHECK_INT_EQ(r->attempts_total, 1); /* trained once */
        CHECK_INT_EQ(r->n_att, 1);
        if (r->n_att != 1) continue;
        CHECK_INT_EQ(r->att[0].from_epoch, 0);
        CHECK_INT_EQ(r->att[0].to_epoch, 3);
        CHECK_STR_EQ(r->att[0].end, "done");
        int seen = 0;
        for (int k = 0; k < n_workers; k++) seen |= !strcmp(workers[k], r->att[0].worker);
        if (!seen) strcpy(workers[n_workers++], r->att[0].worker);
    }
    printf("  candidates trained by %d different workers\n", n_workers);
    CHECK(recs_same(&a, &b));
    char *ca = report_csv(ref), *cb = report_csv(dir);
    CHECK(ca && cb && !strcmp(ca, cb));
    free(ca), free(cb);
    recs_free(&a), recs_free(&b);
    if (bad) show_log(log);
}

/* Wait (at most limit seconds) until process pid holds a lease in dir: 1 if it does. */
static int holds_lease(const char *dir, pid_t pid, double limit) {
    char leases[300], want[64];
    snprintf(leases, sizeof leases, "%s/leases", dir);
    snprintf(want, sizeof want, "\"pid\": %ld,", (long)pid);
    for (double t0 = now_s();; nap(0.005)) { /* one look at least */
        DIR *d = opendir(leases);
        struct dirent *e;
        int found = 0;
        while (d && (e = readdir(d)) && !found) {
            char path[600], *text = NULL;
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", leases, e->d_name);
            if (dse_fs_read(path, &text, NULL, NULL)) continue;
            found = strstr(text, want) && strstr(text, "\"released\": false");
            free(text);
        }
        if (d) closedir(d);
        if (found) return 1;
        if (now_s() - t0 >= limit) return 0;
    }
}

/* Two workers; again and again one of them is killed with SIGKILL at a random moment
 * and started again. The sweep (successive halving, so rung decisions and paused
 * candidates are crashed into too) must end with the same records and report as the
 * uninterrupted reference, bit for bit, and nothing left running. */
static int crash_run(int halving, int attempt, struct dse_pcg32 *rng, int *taken_over) {
    const char *ref = reference(halving);
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/crash_%s_%d", scratch(), halving ? "sh" : "full", attempt);
    snprintf(log, sizeof log, "%s.log", dir);
    const char *sh[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--early-stop", "sh",
                         "--eta", "2", "--max-crashes", "1000", NULL };
    const char *full[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--max-crashes",
                           "1000", NULL };
    const char *const *args = halving ? sh : full;
    double t0 = now_s();
    pid_t w[2] = { spawn(log, args), spawn(log, args) };
    int kills = 0, bad = 0;
    for (int round = 0; round < 60 && kills < 8; round++) {
        int k = (int)(dse_pcg32_next(rng) & 1), status;
        /* every other kill waits until the victim holds a lease, so that training itself
         * (not only start-up) is cut; then a random moment */
        if (round % 2) holds_lease(dir, w[k], 3.0);
        double base = round % 2 ? (halving ? 0.2 : 0.35) : 0.02; /* full: past the first epoch's checkpoint */
        nap(base + (round % 2 ? 0.4 : 0.7) * (double)dse_pcg32_next(rng) / 4294967296.0);
        pid_t r = waitpid(w[k], &status, WNOHANG);
        if (r != 0) { /* a worker only ends by itself when every candidate is final */
            bad |= r != w[k] || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
            w[k] = 0;
            break;
        }
        kill(w[k], SIGKILL);
        waitpid(w[k], &status, 0);
        kills++;
        w[k] = spawn(log, args);
    }
    for (int k = 0; k < 2; k++) bad |= w[k] && wait_for(w[k], 300) != 0;
    CHECK(!bad);
    /* one more worker finds nothing to do */
    CHECK_INT_EQ(run_dse(log, args, 120), 0);
    printf("  %s: %d SIGKILLs, %.1f s\n", halving ? "halving" : "full training", kills, now_s() - t0);
    struct recs a, b;
    recs_load(ref, &a);
    recs_load(dir, &b);
    CHECK_INT_EQ(b.n, 4);
    CHECK(recs_same(&a, &b));
    for (int i = 0; i < b.n; i++) CHECK(dse_rec_final(&b.r[i]));
    char *text = NULL;
    int taken = 0;
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    int resumed = 0;
    for (const char *p = text; p && (p = strstr(p, "taking over from")); p++) taken++;
    for (const char *p = text; p && (p = strstr(p, "resumed from its checkpoint")); p++) resumed++;
    free(text);
    printf("  %d candidates taken over from a killed worker; %d stretches resumed from a checkpoint\n", taken, resumed);
    *taken_over += taken; /* test_crash asks for at least one over its attempts */
    char *ca = report_csv(ref), *cb = report_csv(dir);
    CHECK(ca && cb && !strcmp(ca, cb));
    free(ca), free(cb);
    /* the rung decisions are the same files */
    for (int k = 0; halving && k < 2; k++) {
        char pa[300], pb[300], *ta = NULL, *tb = NULL;
        snprintf(pa, sizeof pa, "%s/rungs/rung-%d.json", ref, k);
        snprintf(pb, sizeof pb, "%s/rungs/rung-%d.json", dir, k);
        CHECK_OK(dse_fs_read(pa, &ta, NULL, NULL));
        CHECK_OK(dse_fs_read(pb, &tb, NULL, NULL));
        CHECK(ta && tb && !strcmp(ta, tb));
        free(ta), free(tb);
    }
    /* dse status: finished, nothing running or stale */
    char slog[300], *st = NULL;
    snprintf(slog, sizeof slog, "%s.status", dir);
    const char *sargs[] = { "status", dir, NULL };
    CHECK_INT_EQ(run_dse(slog, sargs, 60), 0);
    CHECK_OK(dse_fs_read(slog, &st, NULL, NULL));
    CHECK(st && strstr(st, "Finished 4 of 4") && strstr(st, "Running 0") && !strstr(st, "Stale"));
    free(st);
    recs_free(&a), recs_free(&b);
    if (check_failures) show_log(log);
    return kills;
}

static void test_crash(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *env = getenv("DSE_CRASH_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    printf("  DSE_CRASH_SEED=%llu\n", (unsigned long long)seed);
    struct dse_pcg32 rng;
    dse_pcg32_seed(&rng, seed, 11);
    /* a sweep that finished before enough kills, or before any kill hit a worker holding a
     * lease that another then took over, is run again, in a fresh directory: on an idle
     * machine the full-training sweep ends in about 1.2 s, after 1 or 2 kills, so 3
     * attempts were sometimes not enough (seed 263716280 reached 4 kills), and a short
     * halving run can end after 3 kills none of which was taken over (seed 1402423578) */
    for (int halving = 1; halving >= 0; halving--) {
        int kills = 0, taken = 0;
        for (int attempt = 0; attempt < 8 && (kills < 5 || taken < 1); attempt++)
            kills += crash_run(halving, attempt, &rng, &taken);
        CHECK(kills >= 5);
        CHECK(taken >= 1);
    }
}

/* ---- worker threads ----------------------------------------------------------------------- */

/* `dse sweep TINY --out dir --workers 2 --conv gemm_batch [--early-stop sh --eta 2]
 * --max-crashes 1000`, with both workers threads of one worker process (per_process 2,
 * which no CLI option sets: the structure the workers of one GPU have), run by a child of
 * this process through the library, stdout and stderr appended to log. */
static pid_t spawn_threaded(const char *log, const char *dir, int halving) {
    fflush(NULL);
    pid_t p = fork();
    if (p != 0) return p;
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    struct dse_space sp;
    struct dse_sweep_summary sum;
    struct dse_sweep_opts o;
    struct dse_err err = { 0 };
    int finished = 0;
    dse_sweep_opts_default(&o);
    o.workers = 2, o.per_process = 2, o.max_crashes = 1000, o.log = stderr;
    o.plan.conv = DSE_CPU_CONV_GEMM_BATCH, o.set_conv = 1;
    if (halving) o.plan.halving = 1, o.set_halving = 1, o.plan.eta = 2, o.set_eta = 1;
    enum dse_status st = dse_space_load(TINY, &sp, &err);
    if (!st) st = dse_sweep_analytic(&sp, dir, NULL, &sum, &err);
    if (!st) st = dse_sweep_train(&sp, dir, &o, &finished, &err);
    if (st) {
        char msg[700];
        fprintf(stderr, "threaded sweep: %s\n", dse_err_format(&err, msg, sizeof msg));
    }
    fflush(NULL);
    _exit(st ? 1 : !finished ? 2 : 0);
}

/* The pid of a child process of parent (its worker process), or 0 (none at this moment). */
static pid_t child_of(pid_t parent) {
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t found = 0;
    while (d && !found && (e = readdir(d))) {
        char path[300], *text = NULL;
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if (dse_fs_read(path, &text, NULL, NULL)) continue;
        const char *close_paren = strrchr(text, ')'); /* "pid (comm) state ppid ..." */
        char state;
        long ppid;
        if (close_paren && sscanf(close_paren + 1, " %c %ld", &state, &ppid) == 2 && ppid == (long)parent &&
            state != 'Z')
            found = (pid_t)atol(e->d_name);
        free(text);
    }
    if (d) closedir(d);
    return found;
}

/* Again and again, at a random moment, either the worker process (both threads at once:
 * its command starts another) or the command with its worker process (started again
 * here) is killed with SIGKILL. The sweep must end with the records, rung decisions and
 * report of the uninterrupted lone worker, bit for bit; attempts name the threads. */
static int threads_run(int halving, int attempt, struct dse_pcg32 *rng) {
    const char *ref = reference(halving);
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/threads_%s_%d", scratch(), halving ? "sh" : "full", attempt);
    snprintf(log, sizeof log, "%s.log", dir);
    double t0 = now_s();
    pid_t cmd = spawn_threaded(log, dir, halving);
    int kills = 0, whole = 0, bad = 0, status;
    for (int round = 0; round < 40 && kills < 6; round++) {
        pid_t host = 0;
        for (double t1 = now_s(); !host && now_s() - t1 < 3; nap(0.005)) host = child_of(cmd);
        if (!host) break; /* finished (or a worker process that never started: checked below) */
        holds_lease(dir, host, 3.0);
        nap((halving ? 0.2 : 0.35) * (double)dse_pcg32_next(rng) / 4294967296.0);
        if (waitpid(cmd, &status, WNOHANG) != 0) { /* ended by itself: every candidate final */
            bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
            cmd = 0;
            break;
        }
        if (round % 3 == 2) { /* the command too; the worker process is then this one's to reap */
            kill(cmd, SIGKILL);
            kill(host, SIGKILL);
            waitpid(cmd, &status, 0);
            waitpid(host, &status, 0);
            cmd = spawn_threaded(log, dir, halving);
            whole++;
        } else {
            kill(host, SIGKILL); /* its command reaps it and starts another */
        }
        kills++;
    }
    if (cmd) bad |= wait_for(cmd, 300) != 0;
    CHECK(!bad);
    /* one more command finds nothing to do */
    cmd = spawn_threaded(log, dir, halving);
    CHECK_INT_EQ(wait_for(cmd, 120), 0);
    printf("  %s: %d SIGKILLs (%d of the command too), %.1f s\n", halving ? "halving" : "full training", kills, whole,
           now_s() - t0);
    struct recs a, b;
    recs_load(ref, &a);
    recs_load(dir, &b);
    CHECK_INT_EQ(b.n, 4);
    CHECK(recs_same(&a, &b));
    int threaded = 0;
    for (int i = 0; i < b.n; i++) {
        CHECK(dse_rec_final(&b.r[i]));
        for (int k = 0; k < b.r[i].n_att; k++) { /* host:pid.1 or host:pid.2 */
            const char *dot = strrchr(b.r[i].att[k].worker, '.'), *colon = strrchr(b.r[i].att[k].worker, ':');
            threaded += dot && colon && dot > colon && (!strcmp(dot, ".1") || !strcmp(dot, ".2"));
        }
    }
    CHECK(threaded >= 1);
    char *text = NULL;
    int taken = 0;
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    for (const char *p = text; p && (p = strstr(p, "taking over from")); p++) taken++;
    free(text);
    printf("  %d candidates taken over from a killed worker process\n", taken);
    CHECK(kills == 0 || taken >= 1);
    char *ca = report_csv(ref), *cb = report_csv(dir);
    CHECK(ca && cb && !strcmp(ca, cb));
    free(ca), free(cb);
    for (int k = 0; halving && k < 2; k++) {
        char pa[300], pb[300], *ta = NULL, *tb = NULL;
        snprintf(pa, sizeof pa, "%s/rungs/rung-%d.json", ref, k);
        snprintf(pb, sizeof pb, "%s/rungs/rung-%d.json", dir, k);
        CHECK_OK(dse_fs_read(pa, &ta, NULL, NULL));
        CHECK_OK(dse_fs_read(pb, &tb, NULL, NULL));
        CHECK(ta && tb && !strcmp(ta, tb));
        free(ta), free(tb);
    }
    recs_free(&a), recs_free(&b);
    if (check_failures) show_log(log);
    return kills;
}

static void test_threads(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *env = getenv("DSE_CRASH_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    printf("  DSE_CRASH_SEED=%llu\n", (unsigned long long)seed);
    struct dse_pcg32 rng;
    dse_pcg32_seed(&rng, seed, 13);
    /* a worker process whose command is killed with it becomes this process's child, so
     * that it is reaped at once (a zombie's pid is not gone: its leases would wait out
     * their ttl) */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    for (int halving = 1; halving >= 0; halving--) {
        int kills = 0;
        for (int attempt = 0; attempt < 6 && kills < 4; attempt++) kills += threads_run(halving, attempt, &rng);
        CHECK(kills >= 4);
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/* Occurrences of needle in the file at path (0 if it cannot be read). */
static int count_in(const char *path, const char *needle) {
    char *text = NULL;
    int n = 0;
    if (dse_fs_read(path, &text, NULL, NULL)) return 0;
    for (const char *p = text; (p = strstr(p, needle)); p++) n++;
    free(text);
    return n;
}

/* The epoch lines of a sweep's log ("dse sweep [host:pid]: ID epoch E/R: train loss ...");
 * *pid = the worker that wrote the last one if E < R (it goes on with that candidate), else 0. */
static int epoch_lines(const char *log, pid_t *pid) {
    char *text = NULL;
    int n = 0;
    const char *last = NULL;
    *pid = 0;
    if (dse_fs_read(log, &text, NULL, NULL)) return 0;
    for (const char *p = text; (p = strstr(p, ": train loss ")); p++) n++, last = p;
    if (last) {
        const char *line = last;
        while (line > text && line[-1] != '\n') line--;
        const char *colon = NULL;
        for (const char *q = line; q < last && *q != ']'; q++)
            if (*q == ':') colon = q;
        const char *ep = strstr(line, " epoch ");
        int e = 0, r = 0;
        if (colon && ep && ep < last && sscanf(ep, " epoch %d/%d:", &e, &r) == 2 && e < r)
            *pid = (pid_t)strtol(colon + 1, NULL, 10);
    }
    free(text);
    return n;
}

/* 1 if one of the commands w[0], w[1] has ended (its slot then 0; *bad |= it failed): a
 * command ends by itself only when every candidate is final. */
static int reap(pid_t w[2], int *bad) {
    int any = 0;
    for (int j = 0; j < 2; j++) {
        int status;
        if (w[j] > 0 && waitpid(w[j], &status, WNOHANG) == w[j]) {
            *bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
            w[j] = 0, any = 1;
        }
    }
    return any;
}

/* The crash test on a GPU (`--gpus 0`: two commands, each with one worker process on
 * cuda:0): again and again, just after a worker logged an epoch of a candidate it goes on
 * with, that worker's command and its worker are killed with SIGKILL (the process group)
 * and started again. The first stretch of each candidate pins cuDNN's choices in its folder
 * (cudnn-fp32-det.txt, before its first epoch is recorded) and every later stretch loads them, so
 * the sweep must end with what one uninterrupted GPU worker computes with the same choices:
 * records and final checkpoints bit for bit. That worker, handed the files, finds nothing
 * and rewrites none. */
static void test_crash_gpu(void) {
    char why[256] = "";
    if (dse_cuda_device_count(why, (int)sizeof why) == 0) {
        CHECK_SKIP("no CUDA device (%s)", why);
        return;
    }
    if (!data_installed()) {
        CHECK_SKIP("dataset-fashion-mnist not installed");
        return;
    }
    const char *env = getenv("DSE_CRASH_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    printf("  DSE_CRASH_SEED=%llu\n", (unsigned long long)seed);
    struct dse_pcg32 rng;
    dse_pcg32_seed(&rng, seed, 13);
    char dir[200], ref[200], log[260], rlog[260];
    snprintf(dir, sizeof dir, "%s/crash_gpu", scratch());
    snprintf(ref, sizeof ref, "%s/ref_gpu", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    snprintf(rlog, sizeof rlog, "%s.log", ref);
    const char *args[] = { "sweep", TINY, "--out", dir, "--gpus", "0", "--per-gpu", "1", "--max-crashes", "1000",
                           NULL };
    double t0 = now_s();
    pid_t w[2] = { spawn_in(log, args, 1), spawn_in(log, args, 1) };
    int kills = 0, bad = 0, seen = 0, ended = 0;
    for (int round = 0; round < 40 && kills < 4 && !ended; round++) {
        pid_t worker = 0;
        int n = seen, k = -1, status;
        for (double tw = now_s(); n == seen && now_s() - tw < 120 && !(ended = reap(w, &bad)); nap(0.005))
            n = epoch_lines(log, &worker);
        if (ended || n == seen) break; /* the sweep ended (or hangs: the waits below say) */
        seen = n;
        for (int j = 0; j < 2; j++)
            if (worker > 0 && w[j] > 0 && getpgid(worker) == w[j]) k = j;
        if (k < 0) continue; /* its candidate's last epoch, or a worker already gone */
        nap(0.05 + 0.25 * (double)dse_pcg32_next(&rng) / 4294967296.0); /* its checkpoint is written by now */
        if ((ended = reap(w, &bad))) break;
        kill(-w[k], SIGKILL);
        waitpid(w[k], &status, 0);
        kills++;
        w[k] = spawn_in(log, args, 1);
    }
    for (int k = 0; k < 2; k++) bad |= w[k] && wait_for(w[k], 300) != 0;
    for (int k = 0; k < 2; k++)
        if (w[k]) kill(-w[k], SIGKILL); /* nothing left behind, whatever happened */
    CHECK(!bad);
    CHECK_INT_EQ(run_dse(log, args, 120), 0); /* one more command finds nothing to do */
    const int resumed = count_in(log, "resumed from its checkpoint"), found = count_in(log, "and pinned in"),
              loaded = count_in(log, "shapes pinned by");
    printf("  %d SIGKILLs, %.1f s; %d stretches resumed from a checkpoint; choices found and pinned %d times, loaded "
           "%d times\n", kills, now_s() - t0, resumed, found, loaded);
    CHECK(kills >= 2);
    CHECK(resumed >= 1);
    CHECK(found >= 1);  /* a candidate's first stretch */
    CHECK(loaded >= 1); /* a stretch after it */
    /* the uninterrupted run, handed the choices the crashed one pinned */
    struct recs a, b;
    recs_load(dir, &b);
    CHECK_INT_EQ(b.n, 4);
    for (int i = 0; i < b.n; i++) {
        char from[400], to[400], *text = NULL;
        size_t len = 0;
        CHECK_INT_EQ(b.r[i].status, DSE_REC_DONE);
        snprintf(from, sizeof from, "%s/checkpoints/%s/cudnn-fp32-det.txt", dir, b.r[i].id);
        snprintf(to, sizeof to, "%s/checkpoints/%s", ref, b.r[i].id);
        CHECK_OK(dse_fs_mkdirs(to, NULL));
        snprintf(to, sizeof to, "%s/checkpoints/%s/cudnn-fp32-det.txt", ref, b.r[i].id);
        CHECK_OK(dse_fs_read(from, &text, &len, NULL));
        if (text) CHECK_OK(dse_fs_write_atomic(to, text, len, NULL));
        free(text);
    }
    const char *rargs[] = { "sweep", TINY, "--out", ref, "--gpus", "0", "--per-gpu", "1", NULL };
    CHECK_INT_EQ(run_dse(rlog, rargs, 300), 0);
    CHECK_INT_EQ(count_in(rlog, "and pinned in"), 0); /* nothing found or taken: all loaded */
    CHECK_INT_EQ(count_in(rlog, "shapes pinned by"), 4); /* one stretch per candidate, each loaded its file */
    recs_load(ref, &a);
    CHECK(recs_same(&a, &b));
    for (int i = 0; i < a.n && i < b.n; i++) { /* the trained models and the pinned choices, byte for byte */
        static const char *const names[2] = { "epoch-3.ckpt", "cudnn-fp32-det.txt" };
        for (int k = 0; k < 2; k++) {
            char pa[400], pb[400], *ta = NULL, *tb = NULL;
            size_t la = 0, lb = 0;
            snprintf(pa, sizeof pa, "%s/checkpoints/%s/%s", ref, a.r[i].id, names[k]);
            snprintf(pb, sizeof pb, "%s/checkpoints/%s/%s", dir, b.r[i].id, names[k]);
            CHECK_OK(dse_fs_read(pa, &ta, &la, NULL));
            CHECK_OK(dse_fs_read(pb, &tb, &lb, NULL));
            CHECK(ta && tb && la == lb && !memcmp(ta, tb, la));
            free(ta), free(tb);
        }
    }
    recs_free(&a), recs_free(&b);
    if (check_failures) show_log(log), show_log(rlog);
}

/* A worker stopped (SIGSTOP) while it holds a lease: another takes the candidate over
 * once the lease has not been renewed for its ttl (same host, but the pid is alive, so
 * only the observation rule applies). When the first wakes up it must notice, write
 * nothing, and leave. */
static void test_stall(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *ref = reference(0);
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/stall", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *args[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--lease-seconds", "1",
                           NULL };
    pid_t a = spawn(log, args);
    /* stop a while it holds a lease (a lease file with its pid, not released): it may
     * let go between the look and the stop, so look again once it is stopped */
    int holding = 0;
    for (int tries = 0; tries < 50 && !holding; tries++) {
        if (!holds_lease(dir, a, 60)) break;
        kill(a, SIGSTOP);
        if (!(holding = holds_lease(dir, a, 0))) {
            kill(a, SIGCONT);
            nap(0.01);
        }
    }
    CHECK(holding);
    double t0 = now_s();
    int rc = run_dse(log, args, 300);
    CHECK_INT_EQ(rc, 0);
    printf("  the second worker finished the sweep in %.1f s\n", now_s() - t0);
    kill(a, SIGCONT);
    CHECK_INT_EQ(wait_for(a, 120), 0);
    struct recs x, y;
    recs_load(ref, &x);
    recs_load(dir, &y);
    CHECK(recs_same(&x, &y));
    int taken = 0;
    for (int i = 0; i < y.n; i++) {
        const struct dse_rec *r = &y.r[i];
        CHECK_INT_EQ(r->status, DSE_REC_DONE);
        CHECK(r->n_att >= 1 && !strcmp(r->att[r->n_att - 1].end, "done"));
        taken += r->n_att > 1 || r->lease_gen > 1;
    }
    CHECK(taken >= 1);
    recs_free(&x), recs_free(&y);
    if (check_failures) show_log(log);
}

/* A candidate that diverges: status diverged with the epoch and iteration, its file is
 * strict JSON (no NaN), and the report and status read it. */
static void test_diverge(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/diverge", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *args[] = { "sweep", DIVERGE, "--out", dir, "--workers", "1", "--conv", "gemm_batch", NULL };
    CHECK_INT_EQ(run_dse(log, args, 120), 0);
    struct recs x;
    recs_load(dir, &x);
    CHECK_INT_EQ(x.n, 1);
    if (x.n == 1) {
        CHECK_INT_EQ(x.r[0].status, DSE_REC_DIVERGED);
        CHECK(x.r[0].diverged_epoch >= 1);
        char path[400], *text = NULL;
        snprintf(path, sizeof path, "%s/candidates/%s.json", dir, x.r[0].id);
        struct dse_json_doc *doc = NULL;
        CHECK_OK(dse_json_load(path, &doc, NULL)); /* strict: NaN would not parse */
        dse_json_free(doc);
        CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
        CHECK(text && !strstr(text, "nan") && !strstr(text, "NaN") && !strstr(text, "inf"));
        free(text);
    }
    recs_free(&x);
    const char *rep[] = { "report", dir, NULL };
    CHECK_INT_EQ(run_dse(log, rep, 60), 0);
    char *text = NULL;
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "diverged in epoch"));
    free(text);
}

/* ---- ASHA sweeps ------------------------------------------------------------------------ */

/* tests/spaces/sweep_tiny.cfg (4 candidates, 3 epochs) with --early-stop asha --eta 2: rungs
 * at 1 and 2 epochs. */
#define ASHA_ETA 2
static const int asha_rungs[] = { 1, 2 };
#define ASHA_R 3

static int asha_promoted(const char *dir, int k, const char *id) {
    char path[700];
    if (snprintf(path, sizeof path, "%s/rungs/asha-%d/%s", dir, k, id) >= (int)sizeof path) return 0;
    return access(path, F_OK) == 0;
}

static const struct dse_rec *recs_find(const struct recs *x, const char *id) {
    for (int i = 0; i < x->n; i++)
        if (!strcmp(x->r[i].id, id)) return &x->r[i];
    return NULL;
}

/* Better first by top-1 at epoch e, then the smaller model, then the id (--rank top1). */
static int asha_better(const struct dse_rec *a, const struct dse_rec *b, int e) {
    float ta = a->ep[e - 1].top1, tb = b->ep[e - 1].top1;
    if (ta != tb) return ta > tb;
    if (a->model_bytes != b->model_bytes) return a->model_bytes < b->model_bytes;
    return strcmp(a->id, b->id) < 0;
}

/* What one ASHA worker does with these results, worked out here on its own (the oracle of
 * sweep-asha): stops first, then a promotion at the highest rung, then a fresh candidate, each
 * in grid order; a rung's quota floor(n / eta) of the n there so far, max(1, ...) once closed.
 * epochs[i] and stopped[i] (the rung, or -1) and prom[i][k] of candidate x->r[i]. */
static void asha_oracle(const struct recs *x, int *epochs, int *stopped, int prom[][2]) {
    const int nr = DSE_ARRAY_LEN(asha_rungs);
    int n = x->n, by_index[16];
    for (int i = 0; i < n; i++) epochs[i] = 0, stopped[i] = -1, prom[i][0] = prom[i][1] = 0, by_index[i] = i;
    for (int a = 0; a < n; a++) /* grid order */
        for (int b = a + 1; b < n; b++)
            if (x->r[by_index[b]].index < x->r[by_index[a]].index) {
                int t = by_index[a];
                by_index[a] = by_index[b], by_index[b] = t;
            }
    for (int step = 0; step < 100; step++) {
        int promotable[16][2] = { { 0 } }, closed[2] = { 0, 0 };
        for (int k = 0; k < nr; k++) {
            int set[16], m = 0, below = 0;
            for (int i = 0; i < n; i++) {
                int eligible = k == 0 || prom[i][k - 1];
                if (eligible && epochs[i] >= asha_rungs[k]) set[m++] = i;
                else if (eligible && stopped[i] < 0 && epochs[i] < ASHA_R) below = 1;
            }
            int open_before = k > 0 && !closed[k - 1];
            for (int i = 0; k > 0 && i < n; i++) open_before |= promotable[i][k - 1];
            closed[k] = !below && !open_before;
            for (int a = 0; a < m; a++) /* best first */
                for (int b = a + 1; b < m; b++)
                    if (asha_better(&x->r[set[b]], &x->r[set[a]], asha_rungs[k])) {
                        int t = set[a];
                        set[a] = set[b], set[b] = t;
                    }
            int quota = closed[k] && m > 0 && m / ASHA_ETA < 1 ? 1 : m / ASHA_ETA;
            for (int j = 0; j < quota; j++)
                if (!prom[set[j]][k] && stopped[set[j]] < 0) promotable[set[j]][k] = 1;
        }
        int did = 0;
        for (int j = 0; j < n && !did; j++) { /* a stop */
            int i = by_index[j];
            for (int k = 0; k < nr && !did; k++)
                if (stopped[i] < 0 && epochs[i] == asha_rungs[k] && !prom[i][k] && !promotable[i][k] && closed[k])
                    stopped[i] = k, did = 1;
        }
        for (int k = nr - 1; k >= 0 && !did; k--) /* a promotion, the highest rung first */
            for (int j = 0; j < n && !did; j++) {
                int i = by_index[j];
                if (!promotable[i][k]) continue;
                prom[i][k] = 1;
                epochs[i] = k + 1 < nr ? asha_rungs[k + 1] : ASHA_R;
                did = 1;
            }
        for (int j = 0; j < n && !did; j++) /* a fresh one */
            if (!epochs[by_index[j]]) epochs[by_index[j]] = asha_rungs[0], did = 1;
        if (!did) break;
    }
}

/* Each promotion file of dir justified by what it records: it is the candidate's, its ranking
 * holds candidates that had reached the rung (their top-1 and size as their records have them,
 * each promoted from the rung below), ranked as dse_sweep_rank_rung ranks them, and the
 * candidate within the quota (floor(n / eta), max(1, ...) if closed); a candidate it says was
 * promoted already has its file. Every candidate trained past a rung was promoted there; one
 * stopped at a rung was not. Returns the promotions counted. */
static int asha_justified(const char *dir, const struct recs *x, enum dse_sweep_rank rank) {
    int count = 0;
    for (int i = 0; i < x->n; i++) {
        const struct dse_rec *r = &x->r[i];
        for (int k = 0; k < DSE_ARRAY_LEN(asha_rungs); k++) {
            const int has = asha_promoted(dir, k, r->id);
            if (r->n_epochs > asha_rungs[k]) CHECK(has);
            if (r->status == DSE_REC_STOPPED && r->stopped_rung == k) {
                CHECK(!has);
                CHECK_INT_EQ(r->n_epochs, asha_rungs[k]);
            }
            if (!has) continue;
            count++;
            char path[700];
            struct dse_json_doc *doc = NULL;
            snprintf(path, sizeof path, "%s/rungs/asha-%d/%s", dir, k, r->id);
            CHECK_OK(dse_json_load(path, &doc, NULL));
            if (!doc) continue;
            const struct dse_json *root = dse_json_root(doc), *v;
            const struct dse_json *rk = dse_json_get(root, "ranking");
            CHECK(rk && rk->type == DSE_JSON_ARRAY);
            v = dse_json_get(root, "id");
            CHECK(v && v->type == DSE_JSON_STRING && !strcmp(v->str, r->id));
            v = dse_json_get(root, "rung");
            CHECK(v && v->integer == k);
            const int m = rk ? rk->n : 0;
            v = dse_json_get(root, "closed");
            const int closed = v && v->type == DSE_JSON_BOOL && v->boolean;
            const int quota = closed ? dse_sweep_keep(m, ASHA_ETA) : m / ASHA_ETA;
            v = dse_json_get(root, "quota");
            CHECK(v && v->integer == quota);
            double top1[16];
            int64_t bytes[16];
            const char *ids[16];
            int order[16], pos = -1;
            for (int j = 0; j < m && j < 16; j++) {
                const struct dse_json *e = &rk->items[j], *id = dse_json_get(e, "id");
                const struct dse_json *t = dse_json_get(e, "top1"), *b = dse_json_get(e, "model_bytes");
                const struct dse_json *pr = dse_json_get(e, "promoted");
                CHECK(id && t && b && pr);
                if (!id || !t || !b || !pr) break;
                const struct dse_rec *o = recs_find(x, id->str);
                CHECK(o != NULL);
                if (!o) break;
                CHECK(o->n_epochs >= asha_rungs[k]); /* it had reached the rung */
                CHECK(k == 0 || asha_promoted(dir, k - 1, o->id));
                CHECK((float)t->number == o->ep[asha_rungs[k] - 1].top1);
                CHECK_INT_EQ(b->integer, o->model_bytes);
                if (pr->boolean) CHECK(asha_promoted(dir, k, o->id));
                top1[j] = t->number, bytes[j] = b->integer, ids[j] = id->str;
                if (!strcmp(id->str, r->id)) pos = j;
            }
            if (m > 0 && m <= 16) {
                dse_sweep_rank_rung(m, top1, bytes, ids, rank, order, NULL);
                for (int j = 0; j < m; j++) CHECK_INT_EQ(order[j], j); /* listed best first */
            }
            CHECK(pos >= 0 && pos < quota);
            dse_json_free(doc);
        }
    }
    return count;
}

/* Each candidate's epochs trained once: its stretches follow one another from epoch 0 to its
 * last, none cut short or repeated. */
static void asha_trained_once(const struct recs *x) {
    for (int i = 0; i < x->n; i++) {
        const struct dse_rec *r = &x->r[i];
        CHECK_INT_EQ(r->attempts_total, r->n_att);
        int at = 0;
        for (int j = 0; j < r->n_att; j++) {
            CHECK_INT_EQ(r->att[j].from_epoch, at);
            CHECK(r->att[j].to_epoch > r->att[j].from_epoch);
            CHECK(!strcmp(r->att[j].end, "paused") || !strcmp(r->att[j].end, "done"));
            at = r->att[j].to_epoch;
        }
        CHECK_INT_EQ(at, r->n_epochs);
    }
}

/* Run the 1-worker ASHA sweep of sweep-asha into dir: 0 if it finished. */
static int asha_sweep(const char *dir) {
    char log[460];
    snprintf(log, sizeof log, "%s.log", dir);
    const char *args[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--early-stop",
                           "asha", "--eta", "2", "--rank", "top1", NULL };
    double t0 = now_s();
    int rc = run_dse(log, args, 300);
    if (rc) show_log(log);
    printf("  ASHA, 1 worker: %.1f s\n", now_s() - t0);
    return rc;
}

/* The 1-worker ASHA sweep, run once for the cases that compare with it. */
static const char *asha_reference(void) {
    static char dir[200];
    if (dir[0]) return dir;
    snprintf(dir, sizeof dir, "%s/asha0", scratch());
    CHECK_INT_EQ(asha_sweep(dir), 0);
    return dir;
}

/* ASHA with one worker (--rank top1): every candidate reaches rung 0; the promotions, the
 * stops and who reaches R are what asha_oracle works out from the results; each promotion
 * is justified; a second run gives the same records and promotions, bit for bit (one
 * worker's order is a function of the results). */
static void test_asha(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    struct recs x[2];
    char dir[2][200];
    snprintf(dir[0], sizeof dir[0], "%s", asha_reference());
    snprintf(dir[1], sizeof dir[1], "%s/asha1", scratch());
    CHECK_INT_EQ(asha_sweep(dir[1]), 0);
    for (int run = 0; run < 2; run++) recs_load(dir[run], &x[run]);
    CHECK_INT_EQ(x[0].n, 4);
    int epochs[16], stopped[16], prom[16][2], done = 0, trained = 0;
    asha_oracle(&x[0], epochs, stopped, prom);
    for (int i = 0; i < x[0].n; i++) {
        const struct dse_rec *r = &x[0].r[i];
        CHECK(r->n_epochs >= asha_rungs[0]); /* every candidate reached rung 0 */
        CHECK_INT_EQ(r->n_epochs, epochs[i]);
        CHECK_INT_EQ(r->status, epochs[i] == ASHA_R ? DSE_REC_DONE : DSE_REC_STOPPED);
        CHECK_INT_EQ(r->stopped_rung, stopped[i]);
        for (int k = 0; k < 2; k++) CHECK_INT_EQ(asha_promoted(dir[0], k, r->id), prom[i][k]);
        for (int k = 0; k < 2; k++) CHECK_INT_EQ(asha_promoted(dir[1], k, r->id), prom[i][k]);
        done += r->status == DSE_REC_DONE;
        trained += r->n_epochs;
    }
    printf("  ASHA: %d of 4 trained to %d epochs, %d epochs in all\n", done, ASHA_R, trained);
    CHECK(done >= 1);
    CHECK(recs_same(&x[0], &x[1]));
    CHECK(asha_justified(dir[0], &x[0], DSE_SWEEP_RANK_TOP1) >= 2);
    asha_trained_once(&x[0]);
    /* dse status: the rungs' promotions, finished */
    char log[300], *text = NULL;
    snprintf(log, sizeof log, "%s.status", dir[0]);
    const char *st[] = { "status", dir[0], NULL };
    CHECK_INT_EQ(run_dse(log, st, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "Promotions (asynchronous; as results arrive): rung 0 at epoch 1: 4 reached, "));
    CHECK(text && strstr(text, " promoted, closed; rung 1 at epoch 2: "));
    CHECK(text && strstr(text, "Running 0, paused at a rung 0, pending 0"));
    CHECK(text && strstr(text, "Finished.\n"));
    free(text);
    /* dse report --format json names the mode */
    snprintf(log, sizeof log, "%s.json", dir[0]);
    const char *js[] = { "report", dir[0], "--format", "json", NULL };
    CHECK_INT_EQ(run_dse(log, js, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "\"halving\": true, \"early_stop\": \"asha\", \"eta\": 2"));
    free(text);
    /* a sweep trains one way: sh asked of an ASHA sweep is refused */
    snprintf(log, sizeof log, "%s.clash", dir[0]);
    const char *sh[] = { "sweep", TINY, "--out", dir[0], "--early-stop", "sh", NULL };
    CHECK_INT_EQ(run_dse(log, sh, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "plan.json: this sweep was started with --early-stop asha, and this command gives sh"));
    free(text);
    /* evolution with ASHA: refused, as with SH */
    char evo[260];
    snprintf(evo, sizeof evo, "%s/asha_evo", scratch());
    snprintf(log, sizeof log, "%s.log", evo);
    const char *ev[] = { "sweep", EVO, "--out", evo, "--early-stop", "asha", "--budget", "3", "--workers", "1", NULL };
    CHECK_INT_EQ(run_dse(log, ev, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "asynchronous successive halving (--early-stop asha) with strategy \"evolution\" is "
                              "not supported yet"));
    free(text);
    recs_free(&x[0]), recs_free(&x[1]);
}

/* The 1-worker ASHA sweep killed with SIGKILL at random moments (every other time while it
 * holds a lease) and restarted, one worker at a time: what is on disk decides each next step,
 * so it ends with the uninterrupted run's records and promotions, bit for bit. */
static void test_asha_crash(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *ref = asha_reference();
    char dir[200], log[260], *seed_env = getenv("DSE_CRASH_SEED");
    uint64_t seed = seed_env ? strtoull(seed_env, NULL, 10) : (uint64_t)time(NULL);
    struct dse_pcg32 rng;
    dse_pcg32_seed(&rng, seed, 7);
    printf("  DSE_CRASH_SEED=%llu\n", (unsigned long long)seed);
    snprintf(dir, sizeof dir, "%s/asha_crash", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *args[] = { "sweep", TINY, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--early-stop",
                           "asha", "--eta", "2", "--rank", "top1", "--max-crashes", "1000", NULL };
    double t0 = now_s();
    pid_t w = spawn(log, args);
    int kills = 0, bad = 0, status;
    for (int round = 0; round < 40 && kills < 5; round++) {
        if (round % 2) holds_lease(dir, w, 3.0);
        nap(0.05 + 0.5 * (double)dse_pcg32_next(&rng) / 4294967296.0);
        pid_t r = waitpid(w, &status, WNOHANG);
        if (r != 0) { /* it ended by itself: every candidate final */
            bad |= r != w || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
            w = 0;
            break;
        }
        kill(w, SIGKILL);
        waitpid(w, &status, 0);
        kills++;
        w = spawn(log, args);
    }
    bad |= w && wait_for(w, 300) != 0;
    CHECK(!bad);
    CHECK_INT_EQ(run_dse(log, args, 120), 0); /* one more finds nothing to do */
    printf("  ASHA, 1 worker: %d SIGKILLs, %.1f s\n", kills, now_s() - t0);
    CHECK(kills >= 2);
    struct recs a, b;
    recs_load(ref, &a);
    recs_load(dir, &b);
    CHECK(recs_same(&a, &b));
    for (int i = 0; i < a.n; i++)
        for (int k = 0; k < DSE_ARRAY_LEN(asha_rungs); k++)
            CHECK_INT_EQ(asha_promoted(dir, k, a.r[i].id), asha_promoted(ref, k, a.r[i].id));
    char slog[300], *st = NULL;
    snprintf(slog, sizeof slog, "%s.status", dir);
    const char *sargs[] = { "status", dir, NULL };
    CHECK_INT_EQ(run_dse(slog, sargs, 60), 0);
    CHECK_OK(dse_fs_read(slog, &st, NULL, NULL));
    CHECK(st && strstr(st, "Finished 4 of 4") && !strstr(st, "Stale"));
    free(st);
    recs_free(&a), recs_free(&b);
    if (check_failures) show_log(log);
}

/* ASHA with two workers (--rank pareto, the default): the sweep finishes; no epoch of any
 * candidate is trained twice; every promotion is justified by the results it records, each
 * epoch is full training's bit for bit. Which candidates go on may differ from run to run. */
static void test_asha_multi(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/asha_multi", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *args[] = { "sweep", TINY, "--out", dir, "--workers", "2", "--conv", "gemm_batch", "--early-stop",
                           "asha", "--eta", "2", NULL };
    double t0 = now_s();
    int rc = run_dse(log, args, 300);
    CHECK_INT_EQ(rc, 0);
    if (rc) show_log(log);
    printf("  ASHA, 2 workers: %.1f s\n", now_s() - t0);
    struct recs x, full;
    recs_load(dir, &x);
    recs_load(reference(0), &full);
    CHECK_INT_EQ(x.n, 4);
    int done = 0, trained = 0;
    for (int i = 0; i < x.n; i++) {
        const struct dse_rec *r = &x.r[i];
        CHECK(r->status == DSE_REC_DONE || r->status == DSE_REC_STOPPED);
        CHECK(r->n_epochs >= asha_rungs[0]);
        done += r->status == DSE_REC_DONE;
        trained += r->n_epochs;
        const struct dse_rec *f = recs_find(&full, r->id);
        CHECK(f != NULL);
        for (int e = 0; f && e < r->n_epochs && e < f->n_epochs; e++) {
            float a[4] = { f->ep[e].train_loss, f->ep[e].test_loss, f->ep[e].top1, f->ep[e].top5 };
            float b[4] = { r->ep[e].train_loss, r->ep[e].test_loss, r->ep[e].top1, r->ep[e].top5 };
            CHECK(memcmp(a, b, sizeof a) == 0);
        }
    }
    printf("  ASHA, 2 workers: %d of 4 trained to %d epochs, %d epochs in all\n", done, ASHA_R, trained);
    CHECK(done >= 1);
    CHECK(asha_justified(dir, &x, DSE_SWEEP_RANK_PARETO) >= 2);
    asha_trained_once(&x);
    recs_free(&x), recs_free(&full);
}

/* A sweep trains one way: a command that asks for another plan is refused, naming it. */
static void test_plan_clash(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *ref = reference(1);
    char log[300], *text = NULL;
    snprintf(log, sizeof log, "%s/clash.log", scratch());
    const char *args[] = { "sweep", TINY, "--out", ref, "--early-stop", "none", NULL };
    CHECK_INT_EQ(run_dse(log, args, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "plan.json: this sweep was started with --early-stop sh, and this command gives none"));
    free(text);
}

/* A worker whose checkpoints/<id> is a file (issue #31): the error names that path, built in
 * a frame that had returned when the CLI printed it (stack-use-after-return in the sanitizer
 * build, whose dse this runs; the record now keeps its own copy of the path). */
static void test_ckpt_file(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char dir[200], log[260], path[600], want[400], *text = NULL;
    snprintf(dir, sizeof dir, "%s/ckpt_file", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *cost[] = { "sweep", TINY, "--out", dir, "--analytic-only", NULL };
    CHECK_INT_EQ(run_dse(log, cost, 60), 0);
    snprintf(path, sizeof path, "%s/checkpoints", dir);
    CHECK(mkdir(path, 0755) == 0);
    snprintf(path, sizeof path, "%s/candidates", dir);
    DIR *d = opendir(path);
    struct dirent *de;
    int files = 0;
    while (d && (de = readdir(d))) { /* every candidate's checkpoint folder a file */
        size_t n = strlen(de->d_name);
        if (n < 6 || strcmp(de->d_name + n - 5, ".json")) continue;
        snprintf(path, sizeof path, "%s/checkpoints/%.*s", dir, (int)(n - 5), de->d_name);
        FILE *f = fopen(path, "w");
        files += f && fclose(f) == 0;
    }
    if (d) closedir(d);
    CHECK_INT_EQ(files, 4);
    const char *args[] = { "sweep", TINY, "--out", dir, "--workers", "1", NULL };
    CHECK_INT_EQ(run_dse(log, args, 60), 2);
    snprintf(want, sizeof want, "dse: %s/checkpoints/c", dir);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, want) && strstr(text, " exists and is not a directory\n"));
    free(text);
}

/* What dse report and dse status say of a finished successive-halving sweep: 4
 * candidates, eta 2: two stop at rung 0, one at rung 1, 7 epochs of 12. */
static void test_report(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *ref = reference(1);
    char log[300], *text = NULL;
    snprintf(log, sizeof log, "%s/report.log", scratch());
    unlink(log);
    const char *rep[] = { "report", ref, NULL };
    CHECK_INT_EQ(run_dse(log, rep, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "# Sweep sweep_tiny: 4 candidates (0 pruned, 0 pending, 1 done, 3 stopped)"));
    CHECK(text && strstr(text, "3 stopped"));
    CHECK(text && strstr(text, "stopped at rung 0 (epoch 1)"));
    CHECK(text && strstr(text, "stopped at rung 1 (epoch 2)"));
    CHECK(text && strstr(text, "## Training"));
    CHECK(text && strstr(text, "Epochs trained: 7; full training of every candidate: 12 (early stopping saved 5 "
                              "epochs, 42%)"));
    free(text);
    unlink(log);
    /* the finished sweep drew its figures: top-1 against size and against FLOPs, the curves */
    static const char *const figs[] = { "frontier.svg", "frontier_flops.svg", "curves.svg" };
    for (int k = 0; k < DSE_ARRAY_LEN(figs); k++) {
        char fig[300];
        snprintf(fig, sizeof fig, "%s/%s", ref, figs[k]);
        CHECK(access(fig, R_OK) == 0);
    }
    snprintf(log, sizeof log, "%s/frontier_flops.svg", ref);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "frontier (max top1, min FLOPs)"));
    free(text);
    snprintf(log, sizeof log, "%s/report.log", scratch());
    const char *st[] = { "status", ref, NULL };
    CHECK_INT_EQ(run_dse(log, st, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "Finished 4 of 4: 1 done, 3 stopped (rung 0 at epoch 1: 2, rung 1 at epoch 2: 1)"));
    CHECK(text && strstr(text, "early stopping saved 5 epochs, 42%"));
    free(text);
}

/* dse export from a trained sweep (issue #14): the best candidate to ONNX and to Caffe,
 * Caffe's files read back by dse import and evaluated to the top-1 the sweep recorded; a
 * stopped candidate by id; an id not in the sweep, a checkpoint of another network and a
 * truncated checkpoint refused with exit 2 and the file named. */
static void test_export(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *ref = reference(1);
    char log[300], onnx[300], caffe[300], model[320], proto[320], ckpt[320], other[400], trunc[320];
    char *text = NULL, done_id[DSE_ID_SIZE] = "", stopped_id[DSE_ID_SIZE] = "";
    float done_top1 = 0;
    struct recs x;
    recs_load(ref, &x);
    for (int i = 0; i < x.n; i++) {
        if (x.r[i].status == DSE_REC_DONE) snprintf(done_id, sizeof done_id, "%s", x.r[i].id),
                                           done_top1 = x.r[i].ep[x.r[i].n_epochs - 1].top1;
        if (x.r[i].status == DSE_REC_STOPPED && !stopped_id[0]) snprintf(stopped_id, sizeof stopped_id, "%s", x.r[i].id);
    }
    CHECK(done_id[0] && stopped_id[0]);
    snprintf(log, sizeof log, "%s/export.log", scratch());
    snprintf(onnx, sizeof onnx, "%s/best.onnx", scratch());
    snprintf(caffe, sizeof caffe, "%s/best", scratch());
    snprintf(model, sizeof model, "%s.caffemodel", caffe);
    snprintf(proto, sizeof proto, "%s.prototxt", caffe);
    snprintf(ckpt, sizeof ckpt, "%s/imported.ckpt", scratch());
    const char *a1[] = { "export", ref, "--best", "--out", onnx, NULL };
    CHECK_INT_EQ(run_dse(log, a1, 60), 0);
    CHECK(access(onnx, R_OK) == 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, done_id));
    free(text), text = NULL;
    const char *a2[] = { "export", ref, "--best", "--max-mb", "1000", "--format", "caffe", "--out", caffe, NULL };
    CHECK_INT_EQ(run_dse(log, a2, 60), 0);
    CHECK(access(model, R_OK) == 0 && access(proto, R_OK) == 0);
    /* the normalization the sweep trained with, as dse export printed it */
    char best_ckpt[400], mean[64], std[64];
    struct dse_ckpt_info info;
    snprintf(best_ckpt, sizeof best_ckpt, "%s/checkpoints/%s/epoch-%d.ckpt", ref, done_id, 3);
    CHECK_OK(dse_checkpoint_info(best_ckpt, &info, NULL));
    free(info.class_names);
    CHECK_INT_EQ(info.norm.c, 1);
    snprintf(mean, sizeof mean, "%.9g", (double)info.norm.mean[0]);
    snprintf(std, sizeof std, "%.9g", (double)info.norm.std[0]);
    const char *a3[] = { "import", model, proto, "--out", ckpt, "--mean", mean, "--std", std, NULL };
    CHECK_INT_EQ(run_dse(log, a3, 60), 0);
    /* the imported weights evaluate to the sweep's recorded top-1 on the same 200 test images */
    const char *a4[] = { "eval", proto, "--checkpoint", ckpt, "--data", "fashion-mnist", "--limit-test", "200", "--json",
                         NULL };
    CHECK_INT_EQ(run_dse(log, a4, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    char want[64];
    snprintf(want, sizeof want, "\"top1\": %.6f", (double)done_top1);
    CHECK(text && strstr(text, want));
    if (text && !strstr(text, want)) fprintf(stderr, "expected %s in: %s\n", want, text);
    free(text), text = NULL;
    /* the ONNX file in onnxruntime over the same 200 test images: the sweep's top-1 */
    if (system("/usr/bin/python3 -c 'import onnxruntime' 2>/dev/null") != 0) {
        printf("SKIP (part): onnxruntime is not installed for /usr/bin/python3 (tools/install-test-tools)\n");
    } else {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/onnx_idx_eval.py %s "
                 "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz "
                 "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz 200 > %s 2>&1", onnx, log);
        CHECK_INT_EQ(system(cmd), 0);
        snprintf(want, sizeof want, "top1=%.6f", (double)done_top1);
        CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
        CHECK(text && strstr(text, want));
        if (text && !strstr(text, want)) fprintf(stderr, "expected %s in: %s\n", want, text);
        free(text), text = NULL;
    }
    const char *a5[] = { "export", ref, "--id", stopped_id, "--out", onnx, NULL };
    CHECK_INT_EQ(run_dse(log, a5, 60), 0);
    /* bad inputs */
    const char *b1[] = { "export", ref, "--id", "c0123456789abcdef", NULL };
    CHECK_INT_EQ(run_dse(log, b1, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "no candidate 'c0123456789abcdef' in this sweep"));
    free(text), text = NULL;
    const char *b2[] = { "export", ref, "--best", "--max-mb", "0.0001", NULL };
    CHECK_INT_EQ(run_dse(log, b2, 60), 2);
    snprintf(other, sizeof other, "%s/checkpoints/%s/epoch-1.ckpt", ref, stopped_id);
    const char *b3[] = { "export", proto, "--checkpoint", other, NULL };
    CHECK_INT_EQ(run_dse(log, b3, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "checkpoint of another network"));
    free(text), text = NULL;
    char *bytes = NULL;
    size_t len = 0;
    snprintf(trunc, sizeof trunc, "%s/trunc.ckpt", scratch());
    CHECK_OK(dse_fs_read(ckpt, &bytes, &len, NULL));
    if (bytes) CHECK_OK(dse_fs_write_atomic(trunc, bytes, len / 2, NULL));
    free(bytes);
    const char *b4[] = { "export", proto, "--checkpoint", trunc, NULL };
    CHECK_INT_EQ(run_dse(log, b4, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, trunc));
    free(text);
    recs_free(&x);
}

/* The default conv choice (auto): the strategies are timed once per candidate and kept
 * with its checkpoints, so a stretch resumed by another worker runs the same ones. A
 * sweep given the first one's choice files and killed mid-training twice ends with the
 * first one's results, bit for bit. */
static void test_conv_auto(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char a[200], b[200], log[260];
    snprintf(a, sizeof a, "%s/auto_a", scratch());
    snprintf(b, sizeof b, "%s/auto_b", scratch());
    snprintf(log, sizeof log, "%s/auto.log", scratch());
    const char *args_a[] = { "sweep", TINY, "--out", a, "--workers", "1", NULL };
    const char *args_b[] = { "sweep", TINY, "--out", b, "--workers", "1", "--max-crashes", "100", NULL };
    CHECK_INT_EQ(run_dse(log, args_a, 300), 0);
    struct recs x, y;
    recs_load(a, &x);
    for (int i = 0; i < x.n; i++) { /* hand b the choices a made */
        char from[400], to[400], *text = NULL;
        size_t len;
        snprintf(from, sizeof from, "%s/checkpoints/%s/conv.txt", a, x.r[i].id);
        snprintf(to, sizeof to, "%s/checkpoints/%s", b, x.r[i].id);
        CHECK_OK(dse_fs_mkdirs(to, NULL));
        snprintf(to, sizeof to, "%s/checkpoints/%s/conv.txt", b, x.r[i].id);
        CHECK_OK(dse_fs_read(from, &text, &len, NULL));
        if (text) CHECK_OK(dse_fs_write_atomic(to, text, len, NULL));
        free(text);
    }
    for (int k = 0; k < 2; k++) {
        pid_t p = spawn(log, args_b);
        if (holds_lease(b, p, 30)) nap(0.3);
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
    }
    CHECK_INT_EQ(run_dse(log, args_b, 300), 0);
    recs_load(b, &y);
    CHECK(recs_same(&x, &y));
    recs_free(&x), recs_free(&y);
}

/* Pausing at rungs changes nothing: every epoch a halving sweep trained is bit for bit
 * the epoch full training computed (same schedule over R, resumed from the rung's
 * checkpoint). */
static void test_pause(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    struct recs full, sh;
    recs_load(reference(0), &full);
    recs_load(reference(1), &sh);
    CHECK_INT_EQ(full.n, 4);
    CHECK_INT_EQ(sh.n, 4);
    int compared = 0;
    for (int i = 0; i < full.n && i < sh.n; i++) {
        const struct dse_rec *f = &full.r[i], *h = &sh.r[i];
        CHECK_STR_EQ(f->id, h->id);
        CHECK(h->n_epochs >= 1 && h->n_epochs <= f->n_epochs);
        for (int e = 0; e < h->n_epochs && e < f->n_epochs; e++, compared++) {
            float a[4] = { f->ep[e].train_loss, f->ep[e].test_loss, f->ep[e].top1, f->ep[e].top5 };
            float b[4] = { h->ep[e].train_loss, h->ep[e].test_loss, h->ep[e].top1, h->ep[e].top5 };
            CHECK(memcmp(a, b, sizeof a) == 0);
        }
    }
    CHECK_INT_EQ(compared, 7);
    /* paused: a candidate left pending and no worker alive. dse status promises no ETA
     * and says how to go on */
    char dir[200], cmd[1200], log[300], *text = NULL;
    snprintf(dir, sizeof dir, "%s.paused", reference(0));
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s' && sed -i 's/\"status\": \"done\"/\"status\": "
             "\"pending\"/' '%s/candidates/%s.json'", dir, reference(0), dir, dir, full.r[0].id);
    CHECK_INT_EQ(system(cmd), 0);
    snprintf(log, sizeof log, "%s.status", dir);
    const char *args[] = { "status", dir, NULL };
    CHECK_INT_EQ(run_dse(log, args, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "Finished 3 of 4") && strstr(text, "No candidate is being trained (no live lease). If "
                                                                    "no dse sweep is running on it, go on with: "
                                                                    "dse sweep SPACE --out "));
    CHECK(text && !strstr(text, "ETA"));
    free(text);
    /* --json: one line; the paused state and no ETA */
    text = NULL;
    const char *jargs[] = { "status", dir, "--json", NULL };
    snprintf(log, sizeof log, "%s.json", dir); /* run_dse appends to its log */
    CHECK_INT_EQ(run_dse(log, jargs, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "\"state\": \"idle\", \"candidates\": 4, \"pruned\": 0, \"finished\": 3, "
                               "\"by_status\": {\"pending\": 1, \"pruned\": 0, \"done\": 3,"));
    CHECK(text && strstr(text, "\"eta_seconds\": null}\n") && count_lines_of(text) == 1);
    free(text);
    /* --watch on a finished sweep reports once and returns */
    text = NULL;
    const char *wargs[] = { "status", reference(0), "--json", "--watch", "5", NULL };
    snprintf(log, sizeof log, "%s.watch", dir);
    CHECK_INT_EQ(run_dse(log, wargs, 4), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "\"state\": \"finished\"") && count_lines_of(text) == 1);
    free(text);
    /* an analytic sweep prints its table and frontier, and the next command */
    const char *aargs[] = { "sweep", "spaces/squeeze_ratio.cfg", "--analytic-only", "--out", dir, NULL };
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_INT_EQ(system(cmd), 0);
    for (int run = 0; run < 2; run++) {
        snprintf(log, sizeof log, "%s.analytic%d", dir, run);
        CHECK_INT_EQ(run_dse(log, aargs, 60), 0);
        text = NULL;
        CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
        CHECK(text && strstr(text, run ? "8 kept, 0 pruned by constraints (8 already there, left as they were)\n"
                                       : "8 kept, 0 pruned by constraints\n"));
        CHECK(text && strstr(text, "## Frontier (min model size, min FLOPs): 1 of 8 candidates"));
        CHECK(text && strstr(text, "next: dse sweep spaces/squeeze_ratio.cfg --out "));
        free(text);
    }
    /* dse train --json: model_bytes is the model file, as in sweeps ((params + buffers) x 4);
     * what the engine allocated is engine_bytes */
    const char *net = "experiments/squeezenet/squeezenet_fmnist.cfg";
    const char *targs[] = { "train", net, "--epochs", "1", "--limit-train", "64", "--limit-test", "64", "--batch",
                            "32", "--json", NULL };
    snprintf(log, sizeof log, "%s.train", dir);
    CHECK_INT_EQ(run_dse(log, targs, 120), 0);
    text = NULL;
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    struct dse_net n;
    struct dse_err e = { 0 };
    if (!dse_netfile_load(net, NULL, &n, &e)) {
        struct dse_cost_layer *cl = calloc((size_t)n.n_layers, sizeof *cl);
        struct dse_cost_totals tot;
        if (cl && !dse_cost_net(&n, 1, cl, &tot, &e)) {
            char want[64];
            snprintf(want, sizeof want, "\"model_bytes\": %lld, \"engine_bytes\": ", (long long)tot.model_bytes);
            CHECK(text && strstr(text, want));
        }
        free(cl);
        dse_net_deinit(&n);
    } else {
        CHECK(0);
    }
    free(text);
    recs_free(&full), recs_free(&sh);
}

/* ---- multi-objective evolution (sweep/evolve.c) -------------------------------------------- */

#define EVO_SPACE "tests/spaces/evolve_small.cfg"

/* The grid of EVO_SPACE with each candidate's params and the constraints' verdict. */
struct evo_grid {
    struct dse_space s;
    uint64_t n;
    double  *params;
    int     *pruned;
    int      n_feasible;
};

static int evo_grid_load(struct evo_grid *g, const char *path) {
    struct dse_err err = { 0 };
    memset(g, 0, sizeof *g);
    if (dse_space_load(path, &g->s, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    g->n = g->s.count;
    g->params = malloc(sizeof *g->params * g->n);
    g->pruned = malloc(sizeof *g->pruned * g->n);
    const enum dse_evo_cost cost = DSE_EVO_PARAMS;
    for (uint64_t k = 0; k < g->n; k++) {
        CHECK_OK(dse_evo_costs(&g->s, k, &cost, 1, &g->params[k], &g->pruned[k], &err));
        g->n_feasible += !g->pruned[k];
    }
    return 0;
}

static void evo_grid_free(struct evo_grid *g) {
    free(g->params);
    free(g->pruned);
    dse_space_free(&g->s);
}

/* A made-up top-1 with a real trade-off against params: more params help with diminishing
 * returns; pct3x3 best at 0.5; simple bypass helps most; a little deterministic noise. */
static double evo_top1(const struct evo_grid *g, uint64_t k) {
    struct dse_mp mp;
    dse_space_candidate(&g->s, k, &mp);
    double noise = (double)(dse_fnv1a64(DSE_FNV64_INIT, &k, sizeof k) % 1000) / 1000.0 - 0.5;
    return 0.55 + 0.30 * (1 - exp(-g->params[k] / 15000.0)) + 0.04 * (1 - 4 * (mp.pct3x3 - 0.5) * (mp.pct3x3 - 0.5)) +
           (mp.bypass == DSE_BYPASS_SIMPLE ? 0.03 : mp.bypass == DSE_BYPASS_COMPLEX ? 0.01 : 0) + 0.01 * noise;
}

/* Drive the proposer as a sweep would: ask for `batch`, "train" them, record them in
 * order, until budget results or the proposer has nothing left. Returns results made. */
static int evo_drive(const struct evo_grid *g, const struct dse_evo_opts *o, int budget, int batch,
                     struct dse_evo_result *res) {
    struct dse_err err = { 0 };
    int n = 0;
    while (n < budget) {
        uint64_t out[64];
        int want = budget - n < batch ? budget - n : batch, got = 0;
        CHECK_OK(dse_evo_propose(&g->s, o, res, n, NULL, 0, want, out, &got, &err));
        if (!got) break;
        for (int i = 0; i < got; i++) {
            res[n] = (struct dse_evo_result){ .index = out[i] };
            res[n].obj[0] = evo_top1(g, out[i]);
            res[n].obj[1] = g->params[out[i]];
            n++;
        }
        if (got < want) break;
    }
    return n;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Number of repeated values in a[0 .. n) (sorts a copy). */
static int evo_dups(const struct dse_evo_result *r, int n) {
    uint64_t *a = malloc(sizeof *a * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) a[i] = r[i].index;
    qsort(a, (size_t)n, sizeof *a, cmp_u64);
    int d = 0;
    for (int i = 1; i < n; i++) d += a[i] == a[i - 1];
    free(a);
    return d;
}

static void test_evolve_determinism(void) {
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_err err = { 0 };
    struct dse_evo_opts o;
    dse_evo_opts_default(&o);
    o.pop = 8;
    struct dse_evo_result res[40];
    CHECK_INT_EQ(evo_drive(&g, &o, 24, 4, res), 24); /* 8 initial, 16 evolved */
    uint64_t a[8], b[8], c[8], p[3];
    int na, nb, nc, np;
    for (int n_res = 0; n_res <= 24; n_res += 24) { /* the initial sample, then children */
        o.seed = 1;
        CHECK_OK(dse_evo_propose(&g.s, &o, res, n_res, NULL, 0, 8, a, &na, &err));
        CHECK_OK(dse_evo_propose(&g.s, &o, res, n_res, NULL, 0, 8, b, &nb, &err));
        CHECK_OK(dse_evo_propose(&g.s, &o, res, n_res, NULL, 0, 3, p, &np, &err));
        o.seed = 2;
        CHECK_OK(dse_evo_propose(&g.s, &o, res, n_res, NULL, 0, 8, c, &nc, &err));
        CHECK_INT_EQ(na, 8);
        CHECK_INT_EQ(nb, 8);
        CHECK_INT_EQ(nc, 8);
        CHECK_INT_EQ(np, 3);
        CHECK(!memcmp(a, b, sizeof a));  /* same inputs, same proposals */
        CHECK(!memcmp(a, p, sizeof p));  /* prefix-stable */
        CHECK(memcmp(a, c, sizeof a));   /* another seed, others */
    }
    /* one result fewer: another stream, other proposals */
    o.seed = 1;
    CHECK_OK(dse_evo_propose(&g.s, &o, res, 23, NULL, 0, 8, c, &nc, &err));
    CHECK(memcmp(a, c, sizeof a));
    /* two whole runs from the same seed are the same run */
    struct dse_evo_result again[40];
    o.seed = 1;
    CHECK_INT_EQ(evo_drive(&g, &o, 24, 4, again), 24);
    for (int i = 0; i < 24; i++) CHECK_INT_EQ(again[i].index, res[i].index);
    evo_grid_free(&g);
}

static void test_evolve_feasible(void) {
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_err err = { 0 };
    CHECK_INT_EQ(g.n, 1080);
    CHECK(g.n_feasible > 100 && g.n_feasible < 1000); /* the constraint prunes some, not most */
    struct dse_evo_opts o;
    dse_evo_opts_default(&o);
    struct dse_evo_result *res = malloc(sizeof *res * 400);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        o.seed = seed;
        int n = evo_drive(&g, &o, 300, 7, res);
        CHECK_INT_EQ(n, 300);
        int bad = 0;
        for (int i = 0; i < n; i++) bad += g.pruned[res[i].index];
        CHECK_INT_EQ(bad, 0);
        CHECK_INT_EQ(evo_dups(res, n), 0);
    }
    /* exclusions (proposed, not yet recorded) are never proposed again */
    uint64_t excl[16], out[64];
    int ne = 0, got;
    for (uint64_t k = 0; k < g.n && ne < 16; k++)
        if (!g.pruned[k]) excl[ne++] = k;
    CHECK_OK(dse_evo_propose(&g.s, &o, res, 50, excl, ne, 64, out, &got, &err));
    CHECK_INT_EQ(got, 64);
    int hit = 0;
    for (int i = 0; i < got; i++) {
        for (int e = 0; e < ne; e++) hit += out[i] == excl[e];
        for (int r = 0; r < 50; r++) hit += out[i] == res[r].index;
        hit += g.pruned[out[i]];
    }
    CHECK_INT_EQ(hit, 0);
    /* refused: an index past the grid, one objective */
    res[0].index = g.n;
    CHECK_INT_EQ(dse_evo_propose(&g.s, &o, res, 1, NULL, 0, 1, out, &got, &err), DSE_ERR_CONFIG);
    res[0].index = 0;
    o.n_obj = 1;
    CHECK_INT_EQ(dse_evo_propose(&g.s, &o, res, 1, NULL, 0, 1, out, &got, &err), DSE_ERR_CONFIG);
    free(res);
    evo_grid_free(&g);
}

static void test_evolve_exhaust(void) {
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_evo_opts o;
    dse_evo_opts_default(&o);
    struct dse_evo_result *res = malloc(sizeof *res * (g.n + 64));
    /* asking past the end gives exactly the feasible candidates, once each */
    int n = evo_drive(&g, &o, (int)g.n, 50, res);
    CHECK_INT_EQ(n, g.n_feasible);
    CHECK_INT_EQ(evo_dups(res, n), 0);
    int bad = 0;
    for (int i = 0; i < n; i++) bad += g.pruned[res[i].index];
    CHECK_INT_EQ(bad, 0);
    uint64_t out[8];
    int got = -1;
    struct dse_err err = { 0 };
    CHECK_OK(dse_evo_propose(&g.s, &o, res, n, NULL, 0, 8, out, &got, &err));
    CHECK_INT_EQ(got, 0);
    free(res);
    evo_grid_free(&g);
    /* a space of four: four, then none */
    if (evo_grid_load(&g, "spaces/fmnist_demo.cfg")) { CHECK(0); return; }
    struct dse_evo_result r4[8];
    CHECK_INT_EQ(evo_drive(&g, &o, 8, 8, r4), 4);
    CHECK_INT_EQ(evo_dups(r4, 4), 0);
    evo_grid_free(&g);
}

static void test_evolve_hypervolume(void) {
    /* (top-1, cost): the staircase (0.5, 1), (0.8, 3) against (0, 4): 0.5 x 3 + 0.3 x 1;
     * a dominated point, one past the reference and a NaN add nothing */
    struct dse_evo_result r[5] = {
        { .obj = { 0.8, 3 } }, { .obj = { 0.5, 1 } }, { .obj = { 0.4, 2 } }, { .obj = { 0.9, 5 } },
        { .obj = { NAN, 0 } },
    };
    CHECK_NEAR(dse_evo_hypervolume2(r, 5, 0, 4), 0.5 * 3 + 0.3 * 1, 1e-12);
    CHECK_NEAR(dse_evo_hypervolume2(r, 0, 0, 4), 0, 0);
    /* the curve in recorded order, against the worst top-1 (0.4) and cost 5 x 1.01 */
    double hv[5], rt, rc;
    dse_evo_hv_curve(r, 5, hv, &rt, &rc);
    CHECK_NEAR(rt, 0.4, 0);
    CHECK_NEAR(rc, 5.05, 1e-12);
    CHECK_NEAR(hv[0], 0.4 * 2.05, 1e-12);                     /* (0.8, 3) */
    CHECK_NEAR(hv[1], 0.1 * 4.05 + 0.3 * 2.05, 1e-12);        /* + (0.5, 1) */
    CHECK_NEAR(hv[2], hv[1], 1e-12);                          /* (0.4, 2): on the reference */
    CHECK_NEAR(hv[3], hv[1] + 0.1 * 0.05, 1e-12);             /* + (0.9, 5) */
    CHECK_NEAR(hv[4], hv[3], 0);                              /* NaN */
    CHECK_INT_EQ(dse_evo_hv_curve(r, 5, hv, NULL, NULL), 4);
    /* the one-pass prefixes are dse_evo_hypervolume2's doubles exactly: random points on a
     * coarse grid (ties in cost, in top-1, repeated points), some NaN, some past the reference */
    struct dse_pcg32 g;
    dse_pcg32_seed(&g, 5, 5);
    struct dse_evo_result rr[300];
    double pre[300];
    for (int i = 0; i < 300; i++) {
        rr[i] = (struct dse_evo_result){ .index = (uint64_t)i };
        rr[i].obj[0] = i % 37 == 0 ? NAN : 0.05 * (double)dse_pcg32_bounded(&g, 21);
        rr[i].obj[1] = 0.5 * (double)dse_pcg32_bounded(&g, 25);
    }
    CHECK_INT_EQ(dse_evo_hv_prefixes(rr, 300, 0.2, 11.0, pre), 0);
    int differ = 0;
    for (int i = 0; i < 300; i++) differ += pre[i] != dse_evo_hypervolume2(rr, i + 1, 0.2, 11.0);
    CHECK_INT_EQ(differ, 0);
    CHECK(pre[299] > 0);
    /* no usable result: no reference, nothing dominated */
    CHECK_INT_EQ(dse_evo_hv_curve(r + 4, 1, hv, &rt, &rc), 0);
    CHECK(isnan(rt) && isnan(rc) && hv[0] == 0);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The initial population stratified on params (opts.strata): member j is drawn from the
 * j-th of pop equal-count slices of the feasible candidates sorted by params, so params
 * rise along it; prefix-stable; another seed draws other members of the same slices. On
 * a grid too large to scan (bench/large_space.cfg, 1.1 million) the slices are a random
 * pool's, so params still rise along the population. */
static void test_evolve_strata(void) {
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_err err = { 0 };
    double *sorted = malloc(sizeof *sorted * g.n);
    int n = 0;
    for (uint64_t k = 0; k < g.n; k++)
        if (!g.pruned[k]) sorted[n++] = g.params[k];
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    struct dse_evo_opts o;
    dse_evo_opts_default(&o);
    o.pop = 8, o.strata = DSE_EVO_PARAMS;
    uint64_t a[8], b[3], c[8];
    int na, nb, nc;
    CHECK_OK(dse_evo_propose(&g.s, &o, NULL, 0, NULL, 0, 8, a, &na, &err));
    CHECK_OK(dse_evo_propose(&g.s, &o, NULL, 0, NULL, 0, 3, b, &nb, &err));
    o.seed = 2;
    CHECK_OK(dse_evo_propose(&g.s, &o, NULL, 0, NULL, 0, 8, c, &nc, &err));
    CHECK_INT_EQ(na, 8);
    CHECK_INT_EQ(nc, 8);
    CHECK(!memcmp(a, b, sizeof b));
    CHECK(memcmp(a, c, sizeof a));
    for (int j = 0; j < 8; j++) {
        int lo = n * j / 8, hi = n * (j + 1) / 8 - 1;
        CHECK(!g.pruned[a[j]] && !g.pruned[c[j]]);
        CHECK(g.params[a[j]] >= sorted[lo] && g.params[a[j]] <= sorted[hi]);
        CHECK(g.params[c[j]] >= sorted[lo] && g.params[c[j]] <= sorted[hi]);
    }
    /* uniform (strata -1): the same seed's sample is not sorted by params */
    o.seed = 1, o.strata = -1;
    CHECK_OK(dse_evo_propose(&g.s, &o, NULL, 0, NULL, 0, 8, c, &nc, &err));
    int rises = 1;
    for (int j = 1; j < 8; j++) rises &= g.params[c[j]] >= g.params[c[j - 1]];
    CHECK(!rises);
    o.strata = DSE_EVO_COST_COUNT;
    CHECK_INT_EQ(dse_evo_propose(&g.s, &o, NULL, 0, NULL, 0, 8, c, &nc, &err), DSE_ERR_CONFIG);
    free(sorted);
    evo_grid_free(&g);

    struct dse_space big;
    if (dse_space_load("bench/large_space.cfg", &big, &err)) { CHECK(0); return; }
    dse_evo_opts_default(&o);
    o.pop = 12, o.strata = DSE_EVO_PARAMS;
    uint64_t d[12];
    int nd;
    CHECK_OK(dse_evo_propose(&big, &o, NULL, 0, NULL, 0, 12, d, &nd, &err));
    CHECK_INT_EQ(nd, 12);
    double prev = 0;
    for (int j = 0; j < nd; j++) {
        double v;
        int pruned = 1;
        const enum dse_evo_cost cost = DSE_EVO_PARAMS;
        CHECK_OK(dse_evo_costs(&big, d[j], &cost, 1, &v, &pruned, &err));
        CHECK(!pruned);
        CHECK(v >= prev);
        prev = v;
    }
    dse_space_free(&big);
}

/* Aging (regularized) evolution: parents come from the pop most recent usable results
 * only, so its proposals equal NSGA-II's on the same results with every older one made
 * unusable (NaN: seen, never a parent); and they differ from NSGA-II's on the full
 * results once the best are old. */
static void test_evolve_aging(void) {
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    struct dse_err err = { 0 };
    struct dse_evo_opts o;
    dse_evo_opts_default(&o);
    o.pop = 6;
    struct dse_evo_result res[40], masked[40];
    CHECK_INT_EQ(evo_drive(&g, &o, 30, 3, res), 30);
    memcpy(masked, res, sizeof res);
    for (int r = 30 - o.pop; r < 30; r++) CHECK(isfinite(res[r].obj[0]) && isfinite(res[r].obj[1])); /* the equivalence's premise */
    for (int r = 0; r < 30 - o.pop; r++) masked[r].obj[0] = NAN;
    uint64_t a[8], b[8], c[8];
    int na, nb, nc;
    o.aging = 1;
    CHECK_OK(dse_evo_propose(&g.s, &o, res, 30, NULL, 0, 8, a, &na, &err));
    o.aging = 0;
    CHECK_OK(dse_evo_propose(&g.s, &o, masked, 30, NULL, 0, 8, b, &nb, &err));
    CHECK_OK(dse_evo_propose(&g.s, &o, res, 30, NULL, 0, 8, c, &nc, &err));
    CHECK_INT_EQ(na, 8);
    CHECK_INT_EQ(nb, 8);
    CHECK(!memcmp(a, b, sizeof a));
    CHECK(memcmp(a, c, sizeof a));
    evo_grid_free(&g);
}

/* Evolution beats random search on the made-up objective: after BUDGET evaluations the
 * median hypervolume of evolution over seeds exceeds the upper quartile of random
 * search's (the median alone is beaten even by evolution that picks the worst parents).
 * Random search is the same proposer with a population as large as the budget (all of it
 * the initial random sample). */
static void test_evolve_quality(void) {
    enum { SEEDS = 15, BUDGET = 60 };
    struct evo_grid g;
    if (evo_grid_load(&g, EVO_SPACE)) { CHECK(0); return; }
    double ref_cost = 0;
    for (uint64_t k = 0; k < g.n; k++)
        if (!g.pruned[k] && g.params[k] > ref_cost) ref_cost = g.params[k];
    ref_cost *= 1.01;
    struct dse_evo_result *all = malloc(sizeof *all * g.n);
    int n_all = 0;
    for (uint64_t k = 0; k < g.n; k++)
        if (!g.pruned[k]) all[n_all++] = (struct dse_evo_result){ .index = k, .obj = { evo_top1(&g, k), g.params[k] } };
    double hv_grid = dse_evo_hypervolume2(all, n_all, 0.5, ref_cost);
    double hv[2][SEEDS];
    struct dse_evo_result res[BUDGET];
    double t0 = now_s();
    for (int strategy = 0; strategy < 2; strategy++)
        for (int i = 0; i < SEEDS; i++) {
            struct dse_evo_opts o;
            dse_evo_opts_default(&o);
            o.seed = 100 + (uint64_t)i;
            o.pop = strategy ? 12 : BUDGET;
            CHECK_INT_EQ(evo_drive(&g, &o, BUDGET, 4, res), BUDGET);
            hv[strategy][i] = dse_evo_hypervolume2(res, BUDGET, 0.5, ref_cost) / hv_grid;
        }
    double t = now_s() - t0;
    qsort(hv[0], SEEDS, sizeof **hv, cmp_double);
    qsort(hv[1], SEEDS, sizeof **hv, cmp_double);
    printf("  evolve-quality: %d evaluations, hypervolume / grid's: random median %.4f, upper quartile %.4f "
           "(%.4f .. %.4f), evolution median %.4f (%.4f .. %.4f); %.2f s\n", BUDGET, hv[0][SEEDS / 2],
           hv[0][3 * SEEDS / 4], hv[0][0], hv[0][SEEDS - 1], hv[1][SEEDS / 2], hv[1][0], hv[1][SEEDS - 1], t);
    CHECK(hv[1][SEEDS / 2] > hv[0][3 * SEEDS / 4]);
    CHECK(t < 2);
    free(all);
    evo_grid_free(&g);
}


/* Candidate files in dir/candidates. */
static int count_candidates(const char *dir) {
    char path[600];
    int n = 0;
    snprintf(path, sizeof path, "%s/candidates", dir);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) n += e->d_name[0] != '.' && strstr(e->d_name, ".json") != NULL;
    if (d) closedir(d);
    return n;
}

/* The search section and --strategy (docs/space-format.md, "Search"): random draws the
 * budget, grid covers the grid, a directory keeps its strategy; evolution's analytic
 * phase writes the initial population only; dse status does not call a search finished
 * while it may propose more. */
/* Budgets in epochs and hours (search.budget_epochs, budget_hours) on EVO (1 epoch, no
 * replicates, pop 4): an evolution search of budget_epochs = 5 proposes exactly 5 and ends
 * saying so; one of a few milliseconds' training proposes only its initial population and
 * ends; a random search of budget_epochs = 5 draws 5. */
static void test_evo_budgets(void) {
    char *base = NULL;
    CHECK_OK(dse_fs_read(EVO, &base, NULL, NULL));
    char *at = base ? strstr(base, "budget = 7;") : NULL;
    CHECK(at != NULL);
    if (!at) { free(base); return; }
    static const struct { const char *name, *budget, *strategy; int analytic, proposals; const char *said; } c[] = {
        { "evo_budget_random", "budget_epochs = 5;", "random", 1, 5, NULL },
        { "evo_budget_epochs", "budget_epochs = 5;", "evolution", 0, 5,
          "ended: 5 of the budget's 5 epochs are spent (a candidate takes 1)" },
        { "evo_budget_hours", "budget_hours = 0.000001;", "evolution", 0, 4, "hours of training are spent" },
    };
    for (size_t i = 0; i < DSE_ARRAY_LEN(c); i++) {
        if (!c[i].analytic && !data_installed()) {
            printf("  (%s skipped: dataset-fashion-mnist not installed)\n", c[i].name);
            continue;
        }
        char space[300], dir[300], log[320], *text = NULL;
        snprintf(space, sizeof space, "%s/%s.cfg", scratch(), c[i].name);
        snprintf(dir, sizeof dir, "%s/%s", scratch(), c[i].name);
        snprintf(log, sizeof log, "%s.log", dir);
        FILE *f = fopen(space, "w");
        CHECK(f != NULL);
        if (!f) continue;
        fprintf(f, "%.*s%s%s", (int)(at - base), base, c[i].budget, at + strlen("budget = 7;"));
        fclose(f);
        const char *a[] = { "sweep", space, "--out", dir, "--strategy", c[i].strategy, "--workers", "1", "--conv",
                            "gemm_batch", NULL };
        const char *an[] = { "sweep", space, "--out", dir, "--strategy", c[i].strategy, "--analytic-only", NULL };
        CHECK_INT_EQ(run_dse(log, c[i].analytic ? an : a, 300), 0);
        if (c[i].analytic) {
            CHECK_INT_EQ(count_candidates(dir), c[i].proposals);
            continue;
        }
        struct dse_search_log lg;
        struct dse_err err = { 0 };
        CHECK_OK(dse_search_read(dir, &lg, &err));
        CHECK_INT_EQ(lg.n_prop, c[i].proposals);
        CHECK_INT_EQ(lg.n_res, c[i].proposals);
        CHECK(lg.ended);
        dse_search_log_free(&lg);
        CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
        CHECK(text && strstr(text, c[i].said));
        free(text);
    }
    free(base);
}

/* Measured latency as an objective (objective.def's latency_ms): each finished candidate's
 * record carries the latency its worker measured, the search log records it (the same
 * double) as the candidate's second objective, and the log replays; records of a search
 * that does not minimize it have no latency_ms key. */
static void test_evo_latency(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char *base = NULL, space[300], dir[300], log[320];
    CHECK_OK(dse_fs_read(EVO, &base, NULL, NULL));
    char *at = base ? strstr(base, "objectives = [\"params\"];") : NULL;
    CHECK(at != NULL);
    if (!at) { free(base); return; }
    snprintf(space, sizeof space, "%s/evo_latency.cfg", scratch());
    snprintf(dir, sizeof dir, "%s/evo_latency", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    FILE *f = fopen(space, "w");
    CHECK(f != NULL);
    if (!f) { free(base); return; }
    fprintf(f, "%.*sobjectives = [\"latency_ms\"];%s", (int)(at - base), base, at + strlen("objectives = [\"params\"];"));
    fclose(f);
    free(base);
    const char *a[] = { "sweep", space, "--out", dir, "--workers", "1", "--conv", "gemm_batch", NULL };
    CHECK_INT_EQ(run_dse(log, a, 300), 0);
    struct dse_search_log lg;
    struct dse_space s;
    struct dse_err err = { 0 };
    CHECK_OK(dse_search_read(dir, &lg, &err));
    CHECK_INT_EQ(lg.n_res, 7);
    CHECK(lg.n_cost == 1 && !strcmp(lg.cost[0], "latency_ms"));
    for (int i = 0; i < lg.n_res; i++) {
        struct dse_rec r;
        const char *id = NULL;
        for (int p = 0; p < lg.n_prop; p++)
            if (lg.prop[p].index == lg.res[i].index) id = lg.prop[p].id;
        dse_rec_init(&r);
        CHECK(id && !dse_rec_read(dir, id, &r, &err));
        CHECK(isfinite(r.latency_ms) && r.latency_ms > 0);
        CHECK(lg.res[i].obj[1] == r.latency_ms); /* the record's value, to the bit */
        dse_rec_deinit(&r);
    }
    int same = 0;
    CHECK_OK(dse_space_load(space, &s, &err));
    CHECK_OK(dse_search_replay(&s, &lg, &same, &err));
    CHECK(same);
    dse_space_free(&s);
    dse_search_log_free(&lg);
    /* the reports show it: a CSV column, a JSON key, a Markdown column */
    char *csv = report_csv(dir), *md = NULL;
    CHECK(csv && strstr(csv, ",latency_ms\n"));
    free(csv);
    snprintf(log, sizeof log, "%s.md", dir);
    const char *mdargs[] = { "report", dir, NULL };
    CHECK_INT_EQ(run_dse(log, mdargs, 60), 0);
    CHECK(!dse_fs_read(log, &md, NULL, NULL) && strstr(md, "| latency ms |"));
    free(md);
    /* an evolution search on params measures nothing */
    char ref[300];
    snprintf(ref, sizeof ref, "%s/evo_params", scratch());
    snprintf(log, sizeof log, "%s.log", ref);
    const char *b[] = { "sweep", EVO, "--out", ref, "--workers", "1", "--conv", "gemm_batch", NULL };
    CHECK_INT_EQ(run_dse(log, b, 300), 0);
    struct recs x;
    recs_load(ref, &x);
    CHECK(x.n > 0);
    for (int i = 0; i < x.n; i++) CHECK(isnan(x.r[i].latency_ms));
    char path[400], *text = NULL;
    snprintf(path, sizeof path, "%s/candidates/%s.json", ref, x.n ? x.r[0].id : "none");
    CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
    CHECK(text && !strstr(text, "latency_ms")); /* the key is written only where measured */
    free(text);
    text = report_csv(ref); /* and no column for it */
    CHECK(text && !strstr(text, "latency"));
    free(text);
    recs_free(&x);
}

static void test_strategy(void) {
    char d1[200], d2[200], d3[200], log[260], *text = NULL;
    snprintf(d1, sizeof d1, "%s/strat_random", scratch());
    snprintf(d2, sizeof d2, "%s/strat_grid", scratch());
    snprintf(d3, sizeof d3, "%s/strat_evo", scratch());
    snprintf(log, sizeof log, "%s/strat.log", scratch());
    const char *r1[] = { "sweep", EVO, "--out", d1, "--strategy", "random", "--analytic-only", NULL };
    const char *r2[] = { "sweep", EVO, "--out", d1, "--strategy", "grid", "--analytic-only", NULL };
    const char *g1[] = { "sweep", EVO, "--out", d2, "--strategy", "grid", "--analytic-only", NULL };
    const char *e1[] = { "sweep", EVO, "--out", d3, "--analytic-only", NULL };
    CHECK_INT_EQ(run_dse(log, r1, 60), 0);
    CHECK_INT_EQ(count_candidates(d1), 7); /* budget 7 of 12, drawn as sample = 7 would */
    CHECK_INT_EQ(run_dse(log, r2, 60), 2); /* a random sweep's directory refuses the grid */
    CHECK_INT_EQ(run_dse(log, g1, 60), 0);
    CHECK_INT_EQ(count_candidates(d2), 12);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "holds a sweep with strategy \"random\", and this command asks for \"grid\""));
    free(text);
    char path[300];
    snprintf(path, sizeof path, "%s/sweep.json", d2);
    CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
    CHECK(text && !strstr(text, "strategy")); /* a grid's manifest is as it was */
    free(text);
    snprintf(path, sizeof path, "%s/sweep.json", d1);
    CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
    CHECK(text && strstr(text, "\"strategy\": \"random\""));
    free(text);
    CHECK_INT_EQ(run_dse(log, e1, 60), 0);
    CHECK_INT_EQ(count_candidates(d3), 4); /* the initial population */
    struct dse_search_log lg;
    struct dse_err err = { 0 };
    CHECK_OK(dse_search_read(d3, &lg, &err));
    CHECK_INT_EQ(lg.gen, 1);
    CHECK_INT_EQ(lg.n_prop, 4);
    dse_search_log_free(&lg);
    if (!data_installed()) {
        printf("  (training part skipped: dataset-fashion-mnist not installed)\n");
        return;
    }
    /* trained, then killed right after the first step: the population has ended, the
     * search has not */
    const char *t1[] = { "sweep", EVO, "--out", d3, "--workers", "1", "--conv", "gemm_batch", NULL };
    setenv("DSE_TEST_SEARCH_KILL", "1", 1);
    CHECK_INT_EQ(run_dse(log, t1, 120), -1);
    unsetenv("DSE_TEST_SEARCH_KILL");
    CHECK_INT_EQ(count_candidates(d3), 4); /* the fifth proposal is in the log, its file not made yet */
    char slog[300];
    snprintf(slog, sizeof slog, "%s/strat.status", scratch());
    const char *sargs[] = { "status", d3, NULL };
    CHECK_INT_EQ(run_dse(slog, sargs, 60), 0);
    CHECK_OK(dse_fs_read(slog, &text, NULL, NULL));
    CHECK(text && strstr(text, "Search: 5 proposed, 4 results recorded; more to propose") &&
          strstr(text, "The search has not ended") && !strstr(text, "Finished."));
    free(text);
}

/* ---- evolution sweeps: the search's log under kill -9 ------------------------------------ */

/* The current search log of dir (its text into *text, caller frees), checked: it ended, its
 * proposals are distinct, each has a final record in dir (and dir has no other), and
 * replaying it from the seed gives every proposal again. Returns its proposals' count. */
static int evo_check(const char *dir, const struct recs *x, char **text) {
    struct dse_space sp;
    struct dse_search_log lg;
    struct dse_err err = { 0 };
    int same = 0;
    *text = NULL;
    CHECK_OK(dse_space_load(EVO, &sp, &err));
    CHECK_OK(dse_search_read(dir, &lg, &err));
    CHECK(lg.ended);
    CHECK_INT_EQ(lg.n_res, lg.n_prop); /* every proposal's result recorded, once (the reader refuses twice) */
    CHECK_OK(dse_search_replay(&sp, &lg, &same, &err));
    CHECK(same);
    CHECK_INT_EQ(x->n, lg.n_prop);
    for (int i = 0; i < lg.n_prop; i++) {
        int found = 0;
        for (int j = 0; j < lg.n_prop; j++) CHECK(j == i || strcmp(lg.prop[i].id, lg.prop[j].id));
        for (int j = 0; j < x->n; j++)
            if (!strcmp(x->r[j].id, lg.prop[i].id)) {
                found = 1;
                CHECK(dse_rec_final(&x->r[j]));
            }
        CHECK(found);
    }
    if (lg.text) *text = strndup(lg.text, lg.len);
    int n = lg.n_prop;
    dse_search_log_free(&lg);
    dse_space_free(&sp);
    return n;
}

/* The records of a that b also has equal b's, bit for bit (training is deterministic per
 * candidate, whoever trains it and however often it is cut). Returns how many there were. */
static int recs_common_same(const struct recs *a, const struct recs *b) {
    int common = 0;
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++) {
            if (strcmp(a->r[i].id, b->r[j].id)) continue;
            struct recs x = { .n = 1 }, y = { .n = 1 };
            x.r[0] = a->r[i], y.r[0] = b->r[j]; /* shallow: read only */
            CHECK(recs_same(&x, &y));
            common++;
        }
    return common;
}

/* One run of test_evo_crash's killed search with `workers` workers at a time, compared
 * with the reference (records a, log text ta); returns the kills. */
static int evo_crash_run(int workers, int attempt, struct dse_pcg32 *rng_, const struct recs *a, const char *ta) {
    struct dse_pcg32 rng = *rng_;
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/evo_crash_%d_%d", scratch(), workers, attempt);
    snprintf(log, sizeof log, "%s.log", dir);
    const char *args[] = { "sweep", EVO, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--max-crashes",
                           "1000", NULL };
    double t0 = now_s();
    int kills = 0, bad = 0, done = 0;
    if (workers == 1 && attempt == 0) { /* first: killed just after its second proposal reached the log */
        setenv("DSE_TEST_SEARCH_KILL", "2", 1);
        int rc = run_dse(log, args, 120);
        unsetenv("DSE_TEST_SEARCH_KILL");
        CHECK_INT_EQ(rc, -1);
        kills++;
    }
    pid_t w[2] = { spawn(log, args), workers == 2 ? spawn(log, args) : 0 };
    for (int round = 0; round < 40 && !done && kills < 6; round++) {
        int k = workers == 2 ? (int)(dse_pcg32_next(&rng) & 1) : 0, status;
        if (round % 2) holds_lease(dir, w[k], 2.0);
        nap(0.02 + 0.5 * (double)dse_pcg32_next(&rng) / 4294967296.0);
        pid_t r = waitpid(w[k], &status, WNOHANG);
        if (r != 0) { /* ended by itself: the search is over */
            bad |= r != w[k] || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
            w[k] = 0;
            done = 1;
            break;
        }
        kill(w[k], SIGKILL);
        waitpid(w[k], &status, 0);
        kills++;
        w[k] = spawn(log, args);
    }
    for (int k = 0; k < 2; k++) bad |= w[k] && wait_for(w[k], 120) != 0;
    CHECK(!bad);
    CHECK_INT_EQ(run_dse(log, args, 60), 0); /* one more finds nothing to do */
    printf("  %d worker%s at a time: %d SIGKILLs, %.1f s\n", workers, workers == 1 ? "" : "s", kills,
           now_s() - t0);
    struct recs b;
    char *tb = NULL;
    recs_load(dir, &b);
    CHECK_INT_EQ(evo_check(dir, &b, &tb), 7);
    if (workers == 1) {
        CHECK(recs_same(a, &b));
        CHECK(ta && tb && !strcmp(ta, tb)); /* the same proposals and results, in the same order */
    } else {
        int common = recs_common_same(a, &b);
        printf("  %d candidates in common with the uninterrupted search\n", common);
        CHECK(common >= 4); /* the initial population at least */
    }
    free(tb);
    recs_free(&b);
    if (check_failures) show_log(log);
    *rng_ = rng;
    return kills;
}

/* An evolution search (tests/spaces/sweep_evo.cfg: budget 7, population 4, one epoch)
 * run uninterrupted, then again with workers killed with SIGKILL at random moments and
 * restarted:
 *  - one worker at a time: the search log (every proposal and every result, in order) and
 *    every record end as the uninterrupted run's, bit for bit; a worker also dies just
 *    after it wrote a proposal to the log and before that proposal's candidate file;
 *  - two workers at once: which candidates the search proposes after the initial
 *    population depends on the order in which results were recorded, and so on timing;
 *    what holds is that the budget is spent exactly (7 candidates, none twice, none lost),
 *    every result is recorded once, the log replays to the same proposals, and each
 *    candidate both runs trained has the same record, bit for bit. */
static void test_evo_crash(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *env = getenv("DSE_CRASH_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    printf("  DSE_CRASH_SEED=%llu\n", (unsigned long long)seed);
    struct dse_pcg32 rng;
    dse_pcg32_seed(&rng, seed, 13);
    char ref[200], log[260];
    snprintf(ref, sizeof ref, "%s/evo_ref", scratch());
    snprintf(log, sizeof log, "%s.log", ref);
    const char *rargs[] = { "sweep", EVO, "--out", ref, "--workers", "1", "--conv", "gemm_batch", NULL };
    double t0 = now_s();
    CHECK_INT_EQ(run_dse(log, rargs, 120), 0);
    printf("  reference: %.1f s\n", now_s() - t0);
    struct recs a;
    char *ta = NULL;
    recs_load(ref, &a);
    CHECK_INT_EQ(evo_check(ref, &a, &ta), 7);
    /* the report's search section: progress and the hypervolume of the log's results in
     * recorded order (dse_evo_hv_curve), in Markdown and JSON */
    {
        struct dse_search_log lg = { 0 };
        struct dse_err err = { 0 };
        CHECK_OK(dse_search_read(ref, &lg, &err));
        CHECK_INT_EQ(lg.n_res, 7);
        double hv[7] = { 0 };
        if (lg.n_res == 7) dse_evo_hv_curve(lg.res, 7, hv, NULL, NULL);
        char path[300], *md = NULL, *js = NULL;
        snprintf(path, sizeof path, "%s.md", ref);
        const char *mdargs[] = { "report", ref, NULL };
        CHECK_INT_EQ(run_dse(path, mdargs, 60), 0);
        CHECK(!dse_fs_read(path, &md, NULL, NULL) && strstr(md, "## Search") &&
              strstr(md, "7 proposed, 7 results recorded, ended") && strstr(md, "|                  7 |"));
        snprintf(path, sizeof path, "%s.json", ref);
        const char *jsargs[] = { "report", ref, "--format", "json", NULL };
        CHECK_INT_EQ(run_dse(path, jsargs, 60), 0);
        const char *h = !dse_fs_read(path, &js, NULL, NULL) ? strstr(js, "\"hypervolume\": [") : NULL;
        CHECK(h && strstr(js, "\"recorded\": 7, \"ended\": true"));
        for (int i = 0; h && i < 7; i++) {
            char *end;
            double v = strtod(h + (i ? 1 : strlen("\"hypervolume\": [")), &end);
            CHECK_NEAR(v, hv[i], 1e-9 * fabs(hv[i]));
            h = end;
        }
        CHECK(hv[6] > 0 && hv[6] >= hv[0]);
        free(md), free(js);
        dse_search_log_free(&lg);
    }

    for (int workers = 1; workers <= 2; workers++) { /* a search that ended before 3 kills: again, afresh */
        int kills = 0;
        for (int attempt = 0; attempt < 4 && kills < 3; attempt++) kills += evo_crash_run(workers, attempt, &rng, &a, ta);
        CHECK(kills >= 3);
    }
    free(ta);
    recs_free(&a);
}

/* train.replicates = 3 on two tiny candidates: replicate r is its own record, id + "r" + r,
 * trained with seed 7 + r; replicate 0 is, bit for bit, the record of the same space with
 * replicates = 1 (whose files hold no "replicate" key); the report groups them; successive
 * halving is refused. */
static void test_replicates(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char cfg[2][300], dir[3][300], log[300], text[1200], *out = NULL;
    for (int k = 0; k < 2; k++) {
        snprintf(cfg[k], sizeof cfg[k], "%s/rep%d.cfg", scratch(), k);
        snprintf(text, sizeof text,
                 "name = \"rep\";\nmetaparams = { base_e = 8; incr_e = 8; freq = 2; pct3x3 = 0.5; sr = [0.125, 0.25]; "
                 "bypass = \"none\"; };\nmacro = { input_c = 1; input_h = 28; input_w = 28; classes = 10; "
                 "conv1_filters = 8; conv1_kernel = 3; conv1_stride = 2; conv1_pad = 1; fires = 4; pools = [\"fire3\"]; "
                 "dropout = 0.5; };\ntrain = { dataset = \"fashion-mnist\"; epochs = 2; batch = 32; lr = 0.05; seed = 7; "
                 "limit_train = 512; limit_test = 100;%s };\n", k ? " replicates = 3;" : "");
        CHECK_OK(dse_fs_write_atomic(cfg[k], text, strlen(text), NULL));
    }
    for (int k = 0; k < 3; k++) snprintf(dir[k], sizeof dir[k], "%s/rep_out%d", scratch(), k);
    snprintf(log, sizeof log, "%s/rep.log", scratch());
    const char *one[] = { "sweep", cfg[0], "--out", dir[0], "--workers", "1", "--conv", "gemm_batch", NULL };
    const char *three[] = { "sweep", cfg[1], "--out", dir[1], "--workers", "2", "--conv", "gemm_batch", NULL };
    CHECK_INT_EQ(run_dse(log, one, 120), 0);
    CHECK_INT_EQ(run_dse(log, three, 120), 0);
    struct recs a, b;
    recs_load(dir[0], &a);
    recs_load(dir[1], &b); /* by id: base, base + "r1", base + "r2" of each candidate */
    CHECK_INT_EQ(a.n, 2);
    CHECK_INT_EQ(b.n, 6);
    for (int i = 0; i < b.n && a.n == 2 && b.n == 6; i++) {
        const struct dse_rec *r = &b.r[i], *r0 = &b.r[i - i % 3];
        char want[DSE_ID_SIZE];
        snprintf(want, sizeof want, i % 3 ? "%.17sr%d" : "%.17s", a.r[i / 3].id, i % 3);
        CHECK_STR_EQ(r->id, want);
        CHECK_INT_EQ(r->replicate, i % 3);
        CHECK_INT_EQ((int)r->seed, 7 + i % 3);
        CHECK_INT_EQ(r->status, DSE_REC_DONE);
        CHECK_INT_EQ(r->index, a.r[i / 3].index);
        /* another seed, other weights: the first epoch's training loss differs */
        if (i % 3) CHECK(r->n_epochs && r0->n_epochs && r->ep[0].train_loss != r0->ep[0].train_loss);
    }
    if (b.n == 6) { /* a replicate's own weights export under its id */
        char onnx[400];
        snprintf(onnx, sizeof onnx, "%s/rep1.onnx", scratch());
        const char *ex[] = { "export", dir[1], "--id", b.r[1].id, "--out", onnx, NULL };
        CHECK_INT_EQ(run_dse(log, ex, 60), 0);
        CHECK(access(onnx, R_OK) == 0);
    }
    struct recs b0 = { .n = 2 }; /* replicate 0 of each: the replicates = 1 run's records, bit for bit */
    if (b.n == 6) b0.r[0] = b.r[0], b0.r[1] = b.r[3];
    CHECK(recs_same(&a, &b0));
    /* the replicates = 1 files are as before: no "replicate" key */
    char path[700], *file = NULL;
    snprintf(path, sizeof path, "%s/candidates/%s.json", dir[0], a.n ? a.r[0].id : "none");
    CHECK_OK(dse_fs_read(path, &file, NULL, NULL));
    CHECK(file && !strstr(file, "\"replicate\""));
    free(file);
    recs_free(&a);
    recs_free(&b);
    /* the report: one row per candidate, mean ± std */
    unlink(log);
    const char *rep[] = { "report", dir[1], NULL };
    CHECK_INT_EQ(run_dse(log, rep, 60), 0);
    CHECK_OK(dse_fs_read(log, &out, NULL, NULL));
    CHECK(out && strstr(out, "# Sweep rep: 6 candidates (2 architectures x 3 replicates); by architecture: 0 pruned, "
                            "0 pending, 2 done"));
    CHECK(out && strstr(out, "| 3/3 |") && strstr(out, " ± "));
    free(out);
    unlink(log);
    const char *stat[] = { "status", dir[1], NULL };
    CHECK_INT_EQ(run_dse(log, stat, 60), 0);
    CHECK_OK(dse_fs_read(log, &out, NULL, NULL));
    CHECK(out && strstr(out, ": 6 candidates (2 architectures x 3 replicates), 0 pruned by constraints\n"));
    free(out);
    /* successive halving would rank single replicates: refused */
    unlink(log);
    const char *sh[] = { "sweep", cfg[1], "--out", dir[2], "--workers", "1", "--early-stop", "sh", NULL };
    CHECK_INT_EQ(run_dse(log, sh, 60), 2);
    CHECK_OK(dse_fs_read(log, &out, NULL, NULL));
    CHECK(out && strstr(out, "successive halving (--early-stop sh) with replicates = 3 is not supported yet"));
    free(out);
    /* refused before a plan is written: the directory takes the same sweep without halving */
    char plan[400];
    snprintf(plan, sizeof plan, "%s/plan.json", dir[2]);
    CHECK(access(plan, F_OK) != 0);
    unlink(log);
    const char *asha[] = { "sweep", cfg[1], "--out", dir[2], "--workers", "1", "--early-stop", "asha", NULL };
    CHECK_INT_EQ(run_dse(log, asha, 60), 2);
    CHECK_OK(dse_fs_read(log, &out, NULL, NULL));
    CHECK(out && strstr(out, "asynchronous successive halving (--early-stop asha) with replicates = 3 is not "
                             "supported yet"));
    free(out);
    CHECK(access(plan, F_OK) != 0);
}

/* An evolution search with replicates = 2: each proposal is trained twice (seeds 7, 8), and
 * the log records it once both are final, with top-1 their mean, read from the files. */
static void test_evo_replicates(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char cfg[300], dir[300], log[300], *text = NULL;
    snprintf(cfg, sizeof cfg, "%s/evo_rep.cfg", scratch());
    snprintf(dir, sizeof dir, "%s/evo_rep", scratch());
    snprintf(log, sizeof log, "%s/evo_rep.log", scratch());
    CHECK_OK(dse_fs_read(EVO, &text, NULL, NULL));
    char *seed = text ? strstr(text, "seed = 7;") : NULL, *search = text ? strstr(text, "search = {") : NULL;
    CHECK(seed && search);
    if (!seed || !search) return free(text);
    char body[4000];
    snprintf(body, sizeof body, "%.*sseed = 7; replicates = 2;%.*ssearch = { strategy = \"evolution\"; budget = 4; "
             "objectives = [\"params\"]; pop = 2; seed = 3; };\n", (int)(seed - text), text,
             (int)(search - seed - 9), seed + 9);
    free(text);
    CHECK_OK(dse_fs_write_atomic(cfg, body, strlen(body), NULL));
    /* every count printed is of candidates (records: 2 per proposal) or says architectures (issue
     * #31: "2 candidates" while 2 architectures x 2 replicates trained; "the space needs a train
     * section" when it has one) */
    const char *an[] = { "sweep", cfg, "--out", dir, "--analytic-only", NULL };
    CHECK_INT_EQ(run_dse(log, an, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, ": 4 candidates (2 architectures x 2 replicates: the search's proposals so far) in "));
    CHECK(text && strstr(text, "# Sweep sweep_evo: 4 candidates (2 architectures x 2 replicates, of 4 listed in "
                               "sweep.json); by architecture: 0 pruned, 2 pending, 0 done\n"));
    CHECK(text && strstr(text, "## Frontier (min model size, min FLOPs): 1 of 2 architectures\n"));
    CHECK(text && strstr(text, "(train them)\n") && !strstr(text, "train section"));
    free(text);
    unlink(log);
    const char *args[] = { "sweep", cfg, "--out", dir, "--workers", "2", "--conv", "gemm_batch", NULL };
    CHECK_INT_EQ(run_dse(log, args, 120), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "ended: the budget of 4 architectures (x 2 replicates: 8 candidates) is spent"));
    CHECK(text && strstr(text, ": 8 candidates (4 architectures x 2 replicates), 0 pruned by constraints\n"));
    CHECK(text && strstr(text, "# Sweep sweep_evo: 8 candidates (4 architectures x 2 replicates); by architecture: "));
    free(text);
    struct dse_search_log lg;
    struct dse_err err = { 0 };
    struct dse_space sp;
    CHECK_OK(dse_search_read(dir, &lg, &err));
    CHECK(lg.ended);
    CHECK_INT_EQ(lg.n_prop, 4);
    CHECK_INT_EQ(lg.n_res, 4);
    CHECK_INT_EQ(count_candidates(dir), 8); /* two files per proposal */
    for (int i = 0; i < lg.n_res; i++) {
        char id[DSE_ID_SIZE] = "";
        for (int k = 0; k < lg.n_prop; k++)
            if (lg.prop[k].index == lg.res[i].index) dse_strlcpy(id, lg.prop[k].id, sizeof id);
        double sum = 0;
        for (int r = 0; r < 2; r++) {
            struct dse_rec rec;
            char rid[DSE_ID_SIZE];
            dse_strlcpy(rid, id, sizeof rid);
            dse_space_id_replicate(rid, r);
            dse_rec_init(&rec);
            CHECK_OK(dse_rec_read(dir, rid, &rec, &err));
            CHECK_INT_EQ((int)rec.seed, 7 + r);
            CHECK_INT_EQ(rec.replicate, r);
            sum += rec.top1;
            dse_rec_deinit(&rec);
        }
        CHECK(lg.res[i].obj[0] == sum / 2); /* the mean, to the bit */
    }
    /* the log replays from its seed and results */
    int same = 0;
    CHECK_OK(dse_space_load(cfg, &sp, &err));
    CHECK_OK(dse_search_replay(&sp, &lg, &same, &err));
    CHECK(same);
    dse_space_free(&sp);
    dse_search_log_free(&lg);
}

/* ---- Slurm (sweep/slurm.c): the script, and the commands against stand-in sbatch, squeue
 * and scancel (shell scripts in a PATH of their own); a real Slurm: tests/slurm_test.sh ---- */

static void test_slurm_script(void) {
    const char *args[] = { "--data-root", "/data/it's here", "--workers", "1" };
    struct dse_slurm_job j = { .dse = "/opt/dse", .space = "/s/a b.cfg", .dir = "/shared/sw", .name = "dse-x",
                               .array = 3, .cpus_per_task = 2, .gpus_per_task = 1, .sbatch = " -p gpu -t 10",
                               .args = args, .n_args = 4 };
    char *text = NULL;
    struct dse_err err = { 0 };
    CHECK_OK(dse_slurm_script(&j, &text, &err));
    CHECK(text && strstr(text, "#SBATCH --array=0-2\n") && strstr(text, "#SBATCH --output=/shared/sw/slurm/%A_%a.out\n") &&
          strstr(text, "#SBATCH --cpus-per-task=2\n") && strstr(text, "#SBATCH --gres=gpu:1\n") &&
          strstr(text, "#SBATCH -p gpu -t 10\n"));
    CHECK(text && strstr(text, "exec /opt/dse sweep '/s/a b.cfg' --out /shared/sw --data-root '/data/it'\\''s here' "
                               "--workers 1\n"));
    free(text);
    j.array_command = 1; /* the array's tasks: one command (issue #31), bash expanding the job id in each */
    CHECK_OK(dse_slurm_script(&j, &text, &err));
    CHECK(text && strstr(text, " --workers 1 --command-id \"slurm-$SLURM_ARRAY_JOB_ID\"\n"));
    free(text);
    j.array_command = 0;
    j.dir = "/shared/my sweep";
    CHECK(dse_slurm_script(&j, &text, &err) == DSE_ERR_CONFIG && !text && strstr(err.msg, "white space"));
    j.dir = "/shared/sw", j.sbatch = "-p a\n-t 1";
    CHECK(dse_slurm_script(&j, &text, &err) == DSE_ERR_CONFIG && strstr(err.msg, "line break"));
}

/* A stand-in for a Slurm command: dir/name, a shell script with body. */
static void fake_cmd(const char *dir, const char *name, const char *body) {
    char path[400], text[800];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int n = snprintf(text, sizeof text, "#!/bin/sh\n%s\n", body);
    CHECK_OK(dse_fs_write_atomic(path, text, (size_t)n, NULL));
    chmod(path, 0755);
}

/* dse with PATH=bin (only the stand-ins there), stdout and stderr into log (replaced). */
static int run_slurm(const char *bin, const char *log, const char *const *args) {
    char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    unlink(log);
    setenv("PATH", bin, 1);
    int rc = run_dse(log, args, 120);
    if (old) setenv("PATH", old, 1), free(old);
    return rc;
}

static int file_has(const char *path, const char *what) {
    char *text = NULL;
    int has = !dse_fs_read(path, &text, NULL, NULL) && strstr(text, what);
    if (!has) printf("  %s does not hold '%s':\n%s\n", path, what, text ? text : "(no file)");
    free(text);
    return has;
}

static void test_slurm_fake(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char none[300], ok[300], refuse[300], dir[300], log[300], jobs[400], script[400], args_file[400], body[600];
    snprintf(none, sizeof none, "%s/bin-none", scratch());
    snprintf(ok, sizeof ok, "%s/bin-ok", scratch());
    snprintf(refuse, sizeof refuse, "%s/bin-refuse", scratch());
    snprintf(dir, sizeof dir, "%s/slurm-sweep", scratch());
    snprintf(log, sizeof log, "%s/slurm.log", scratch());
    snprintf(jobs, sizeof jobs, "%s/slurm/jobs", dir);
    snprintf(script, sizeof script, "%s/slurm/sweep.sbatch", dir);
    snprintf(args_file, sizeof args_file, "%s/scancel.args", ok);
    mkdir(none, 0755), mkdir(ok, 0755), mkdir(refuse, 0755);
    fake_cmd(ok, "sbatch", "[ \"$1\" = --parsable ] || exit 9\necho 'sbatch: warning: a note first' >&2\necho '4242;fake'");
    fake_cmd(ok, "squeue", "echo '4242_0|RUNNING|node7'");
    snprintf(body, sizeof body, "echo \"$@\" > '%s'", args_file);
    fake_cmd(ok, "scancel", body);
    fake_cmd(refuse, "sbatch", "echo 'sbatch: error: Batch job submission failed: Invalid account' >&2\nexit 1");
    const char *submit[] = { "sweep", TINY, "--out", dir, "--slurm", "--array", "3", "--workers", "1", NULL };
    const char *dry[] = { "sweep", TINY, "--out", dir, "--slurm", "--array", "3", "--workers", "1", "--dry-run", NULL };
    const char *status[] = { "status", dir, NULL };
    const char *cancel[] = { "sweep", dir, "--slurm", "--cancel", NULL };
    struct stat sb;
    /* no sbatch: refused before anything is written */
    CHECK_INT_EQ(run_slurm(none, log, submit), 2);
    CHECK(file_has(log, "dse: sbatch is not on PATH: submitting needs Slurm's client commands (Debian: slurm-client); "
                        "--dry-run writes and prints DIR/slurm/sweep.sbatch anyway"));
    CHECK(stat(dir, &sb) != 0);
    /* --dry-run: the script, printed and written, nothing submitted */
    CHECK_INT_EQ(run_slurm(none, log, dry), 0);
    CHECK(file_has(log, "#SBATCH --array=0-2") && file_has(log, "--- dry run:"));
    CHECK(file_has(script, " --out ") && file_has(script, " --workers 1 --command-id \"slurm-$SLURM_ARRAY_JOB_ID\"\n"));
    CHECK(stat(jobs, &sb) != 0);
    /* --cancel with nothing recorded */
    CHECK_INT_EQ(run_slurm(ok, log, cancel), 2);
    CHECK(file_has(log, "no Slurm job is recorded there"));
    /* sbatch refuses: its message, exit 2, nothing recorded */
    CHECK_INT_EQ(run_slurm(refuse, log, submit), 2);
    CHECK(file_has(log, "dse: sbatch refused the job (exit status 1): sbatch: error: Batch job submission failed: "
                        "Invalid account\n"));
    CHECK(stat(jobs, &sb) != 0);
    /* submitted: the id after sbatch's warning, recorded */
    CHECK_INT_EQ(run_slurm(ok, log, submit), 0);
    CHECK(file_has(log, "Submitted Slurm job 4242: 3 tasks") && file_has(log, "dse sweep ") &&
          file_has(jobs, "4242 3 20"));
    /* status: squeue's task, the others gone; without squeue, one line */
    CHECK_INT_EQ(run_slurm(ok, log, status), 0);
    CHECK(file_has(log, "  job 4242, 3 tasks, submitted 20") && file_has(log, "    4242_0       RUNNING node7\n") &&
          file_has(log, "    4242_2       not in squeue (finished or gone)\n"));
    CHECK_INT_EQ(run_slurm(none, log, status), 0);
    CHECK(file_has(log, "Slurm: squeue is not on PATH, so the tasks' states are not shown (job 4242, recorded in "));
    /* cancel: scancel 4242 */
    CHECK_INT_EQ(run_slurm(ok, log, cancel), 0);
    CHECK(file_has(log, "cancelled job 4242 (3 tasks, submitted 20") && file_has(args_file, "4242\n"));
    if (check_failures) show_log(log);
}

/* A record writes each REAL metaparameter (mp.def) as dse_fmt_real does: sr = 1.0 as 1.0,
 * not 1; 0.1 as 0.1, not %.17g's 0.10000000000000001; ints as ints. */
static void test_rec_reals(void) {
    char cfg[300], dir[300], path[400], *text = NULL;
    const char *space = "name = \"reals\";\nmetaparams = { base_e = 8; incr_e = 8; freq = 2; pct3x3 = 1.0; "
                        "sr = [0.1, 1.0]; bypass = \"none\"; };\nmacro = { input_c = 1; input_h = 28; input_w = 28; "
                        "classes = 10; conv1_filters = 8; conv1_kernel = 3; conv1_stride = 2; conv1_pad = 1; fires = 4; "
                        "pools = [\"fire3\"]; dropout = 0.0; };\n";
    snprintf(cfg, sizeof cfg, "%s/reals.cfg", scratch());
    snprintf(dir, sizeof dir, "%s/reals_out", scratch());
    CHECK_OK(dse_fs_write_atomic(cfg, space, strlen(space), NULL));
    struct dse_space sp;
    struct dse_sweep_summary sum;
    struct dse_err err = { 0 };
    CHECK_OK(dse_space_load(cfg, &sp, &err));
    CHECK_OK(dse_sweep_analytic(&sp, dir, NULL, &sum, &err));
    struct recs x;
    recs_load(dir, &x);
    CHECK_INT_EQ(x.n, 2);
    static const char *const want[2] = { "\"pct3x3\": 1.0, \"sr\": 0.1, \"bypass\": \"none\"",
                                         "\"pct3x3\": 1.0, \"sr\": 1.0, \"bypass\": \"none\"" };
    for (int i = 0; i < x.n && i < 2; i++) {
        snprintf(path, sizeof path, "%s/candidates/%s.json", dir, x.r[i].id);
        CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
        CHECK(text && strstr(text, "\"base_e\": 8, \"incr_e\": 8, \"freq\": 2, ") &&
              strstr(text, want[x.r[i].index]) && strstr(text, "\"dropout\": 0.0\n"));
        if (check_failures && text) fprintf(stderr, "  wrote:\n%s", text);
        free(text);
        text = NULL;
    }
    recs_free(&x);
    dse_space_free(&sp);
}

/* A worker's log within an epoch: with --progress-every S, a line "<id> epoch e/E: iter i/N"
 * once S seconds have passed (here 1 us: after every step); the never-predicted warning
 * once per candidate (a learning rate so small that the classes an untrained net never
 * predicts stay unpredicted every epoch). */
static void test_progress_every(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char cfg[300], dir[300], log[300], id[DSE_ID_SIZE], what[120];
    const char *text = "name = \"progress\";\nmetaparams = { base_e = 8; incr_e = 8; freq = 2; pct3x3 = 0.5; "
                       "sr = [0.125, 0.25]; bypass = \"none\"; };\nmacro = { input_c = 1; input_h = 28; input_w = 28; "
                       "classes = 10; conv1_filters = 8; conv1_kernel = 3; conv1_stride = 2; conv1_pad = 1; fires = 4; "
                       "pools = [\"fire3\"]; dropout = 0.5; };\ntrain = { dataset = \"fashion-mnist\"; epochs = 3; "
                       "batch = 32; lr = 1e-9; seed = 7; limit_train = 256; limit_test = 100; };\n";
    snprintf(cfg, sizeof cfg, "%s/progress.cfg", scratch());
    snprintf(dir, sizeof dir, "%s/progress_out", scratch());
    snprintf(log, sizeof log, "%s/progress.log", scratch());
    CHECK_OK(dse_fs_write_atomic(cfg, text, strlen(text), NULL));
    const char *args[] = { "sweep", cfg, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--progress-every",
                           "0.000001", NULL };
    CHECK_INT_EQ(run_dse(log, args, 120), 0);
    struct dse_space sp;
    CHECK_OK(dse_space_load(cfg, &sp, NULL));
    int warned = 0;
    for (uint64_t k = 0; k < 2; k++) {
        struct dse_mp mp;
        dse_space_candidate(&sp, k, &mp);
        dse_space_id(&mp, id);
        for (int e = 1; e <= 3; e++) { /* 8 steps an epoch, a line after each */
            snprintf(what, sizeof what, "%s epoch %d/3: iter ", id, e);
            CHECK_INT_EQ(count_in(log, what), 8);
        }
        char warn[160];
        int n = 0;
        for (int e = 1; e <= 3; e++) {
            snprintf(warn, sizeof warn, "%s epoch %d: warning: ", id, e);
            n += count_in(log, warn);
        }
        CHECK(n <= 1);
        warned += n;
    }
    CHECK(warned >= 1); /* the case the rule is for happened */
    if (check_failures) show_log(log);
    dse_space_free(&sp);
}

static const struct check_case cases[] = {
    { "slurm-script",  test_slurm_script },
    { "slurm-fake",    test_slurm_fake },
    { "lease-claim",   test_lease_claim },
    { "lease-race",    test_lease_race },
    { "lease-free",    test_lease_free },
    { "lease-unreadable", test_lease_unreadable },
    { "lease-crashes", test_lease_crashes },
    { "sweep-bad-lease", test_bad_lease },
    { "sweep-ckpt-link", test_ckpt_link },
    { "sweep-bad-files", test_bad_files },
    { "tally-eta",     test_tally_eta },
    { "rank",          test_rank },
    { "asha-rule",     test_asha_rule },
    { "plan",          test_plan },
    { "gpu-fit",       test_gpu_fit },
    { "gpu-oom",       test_gpu_oom },
    { "rec-write",     test_rec_write },
    { "rec-reals",     test_rec_reals },
    { "sweep-progress", test_progress_every },
    { "sweep-gpus",    test_sweep_gpus },
    { "sweep-diverge", test_diverge },
    { "sweep-clash",   test_plan_clash },
    { "sweep-ckpt-file", test_ckpt_file },
    { "sweep-asha",    test_asha },
    { "sweep-asha-multi", test_asha_multi },
    { "sweep-asha-crash", test_asha_crash },
    { "sweep-report",  test_report },
    { "sweep-export",  test_export },
    { "sweep-pause",   test_pause },
    { "sweep-conv",    test_conv_auto },
    { "sweep-multi",   test_multi },
    { "sweep-crash",   test_crash },
    { "sweep-threads", test_threads },
    { "sweep-crash-gpu", test_crash_gpu },
    { "sweep-stall",   test_stall },
    { "sweep-evo-crash", test_evo_crash },
    { "sweep-strategy", test_strategy },
    { "sweep-evo-budgets", test_evo_budgets },
    { "sweep-evo-latency", test_evo_latency },
    { "sweep-replicates", test_replicates },
    { "sweep-evo-replicates", test_evo_replicates },
    { "evolve-determinism", test_evolve_determinism },
    { "evolve-feasible",    test_evolve_feasible },
    { "evolve-exhaust",     test_evolve_exhaust },
    { "evolve-hypervolume", test_evolve_hypervolume },
    { "evolve-quality",     test_evolve_quality },
    { "evolve-strata",      test_evolve_strata },
    { "evolve-aging",       test_evolve_aging },
};

int main(int argc, char **argv) {
    int rc = check_main(cases, DSE_ARRAY_LEN(cases), argc, argv);
    if (!check_failures) rm_rf(scratch());
    else printf("kept %s for a look\n", scratch());
    return rc;
}
