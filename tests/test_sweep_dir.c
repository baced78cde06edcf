/* test_sweep_dir.c: test_sweep's cases on the sweep directory (sweep/lease.c, sweep/record.c):
 * leases (claims, a race of many claimers, expiry), unreadable or misplaced files, the ETA, a
 * plan that clashes, and the record writer made from sweep/record.def, byte for byte. */
#include "tests/sweep_util.h"

/* ---- leases ---------------------------------------------------------------------------- */

void test_lease_claim(void) {
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
void test_lease_race(void) {
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
void test_lease_free(void) {
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

void test_lease_unreadable(void) {
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
void test_lease_crashes(void) {
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
void test_bad_lease(void) {
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
void test_ckpt_link(void) {
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

void test_bad_files(void) {
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
void test_tally_eta(void) {
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

/* A sweep trains one way: a command that asks for another plan is refused, naming it. */
void test_plan_clash(void) {
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
void test_ckpt_file(void) {
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
void test_rec_write(void) {
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

/* A record writes each REAL metaparameter (mp.def) as dse_fmt_real does: sr = 1.0 as 1.0,
 * not 1; 0.1 as 0.1, not %.17g's 0.10000000000000001; ints as ints. */
void test_rec_reals(void) {
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
