/* sweep_util.c: what test_sweep's files share: running the dse binary, a scratch folder, a
 * sweep's records and report, the reference sweeps; and check.h's counts, one set for them all. */
#include "tests/sweep_util.h"

int check_failures, check_count, check_skips;

int data_installed(void) {
    return access("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", R_OK) == 0;
}

double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void nap(double s) {
    struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

void rm_rf(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* The test's scratch folder, made once per process; kept if a check failed. */
const char *scratch(void) {
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
pid_t spawn_in(const char *log, const char *const *args, int group) {
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

pid_t spawn(const char *log, const char *const *args) { return spawn_in(log, args, 0); }

/* Wait for p at most limit seconds (then SIGKILL it); its exit status, or -1 if killed
 * by a signal. */
int wait_for(pid_t p, double limit) {
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

int run_dse(const char *log, const char *const *args, double limit) {
    pid_t p = spawn(log, args);
    return p > 0 ? wait_for(p, limit) : -4;
}

void show_log(const char *log) {
    char *text;
    if (dse_fs_read(log, &text, NULL, NULL)) return;
    size_t n = strlen(text);
    fprintf(stderr, "---- %s (last 4000 bytes)\n%s\n----\n", log, n > 4000 ? text + n - 4000 : text);
    free(text);
}

static int rec_cmp(const void *a, const void *b) {
    return strcmp(((const struct dse_rec *)a)->id, ((const struct dse_rec *)b)->id);
}

void recs_load(const char *dir, struct recs *x) {
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

void recs_free(struct recs *x) {
    for (int i = 0; i < x->n; i++) dse_rec_deinit(&x->r[i]);
}

/* Ids, statuses, rungs and every per-epoch loss and accuracy, bit for bit, and the count of
 * classes never predicted. */
int recs_same(const struct recs *a, const struct recs *b) {
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
int count_lines_of(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

char *report_csv(const char *dir) {
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
const char *reference(int halving) {
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

/* A crash test's random kill times: seeded with DSE_CRASH_SEED if it is set, else with the time
 * and pid, and the seed printed, so that a run that failed can be run again the same way. */
void crash_rng(struct dse_pcg32 *rng, uint64_t stream) {
    const char *env = getenv("DSE_CRASH_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    printf("  DSE_CRASH_SEED=%llu\n", (unsigned long long)seed);
    dse_pcg32_seed(rng, seed, stream);
}

/* Wait (at most limit seconds) until process pid holds a lease in dir: 1 if it does. */
int holds_lease(const char *dir, pid_t pid, double limit) {
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

/* Occurrences of needle in the file at path (0 if it cannot be read). */
int count_in(const char *path, const char *needle) {
    char *text = NULL;
    int n = 0;
    if (dse_fs_read(path, &text, NULL, NULL)) return 0;
    for (const char *p = text; (p = strstr(p, needle)); p++) n++;
    free(text);
    return n;
}

/* Candidate files in dir/candidates. */
int count_candidates(const char *dir) {
    char path[600];
    int n = 0;
    snprintf(path, sizeof path, "%s/candidates", dir);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) n += e->d_name[0] != '.' && strstr(e->d_name, ".json") != NULL;
    if (d) closedir(d);
    return n;
}

/* ---- made-up grids for the proposers (evolve-*, bo-*) ---------------------------------------- */

/* The grid of EVO_SPACE with each candidate's params and the constraints' verdict. */
int evo_grid_load(struct evo_grid *g, const char *path) {
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

void evo_grid_free(struct evo_grid *g) {
    free(g->params);
    free(g->pruned);
    dse_space_free(&g->s);
}

/* A made-up top-1 with a real trade-off against params: more params help with diminishing
 * returns; pct3x3 best at 0.5; simple bypass helps most; a little deterministic noise. */
double evo_top1(const struct evo_grid *g, uint64_t k) {
    struct dse_mp mp;
    dse_space_candidate(&g->s, k, &mp);
    double noise = (double)(dse_fnv1a64(DSE_FNV64_INIT, &k, sizeof k) % 1000) / 1000.0 - 0.5;
    return 0.55 + 0.30 * (1 - exp(-g->params[k] / 15000.0)) + 0.04 * (1 - 4 * (mp.pct3x3 - 0.5) * (mp.pct3x3 - 0.5)) +
           (mp.bypass == DSE_BYPASS_SIMPLE ? 0.03 : mp.bypass == DSE_BYPASS_COMPLEX ? 0.01 : 0) + 0.01 * noise;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Number of repeated values in a[0 .. n) (sorts a copy). */
int evo_dups(const struct dse_evo_result *r, int n) {
    uint64_t *a = malloc(sizeof *a * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) a[i] = r[i].index;
    qsort(a, (size_t)n, sizeof *a, cmp_u64);
    int d = 0;
    for (int i = 1; i < n; i++) d += a[i] == a[i - 1];
    free(a);
    return d;
}
