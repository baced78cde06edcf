/* test_sweep_search.c: test_sweep's cases on searching sweeps (sweep/search.c): budgets,
 * latency objectives, --strategy, an evolution search killed at random moments, and
 * replicates. */
#include "tests/sweep_util.h"

/* The search section and --strategy (docs/space-format.md, "Search"): random draws the
 * budget, grid covers the grid, a directory keeps its strategy; evolution's analytic
 * phase writes the initial population only; dse status does not call a search finished
 * while it may propose more. */
/* Budgets in epochs and hours (search.budget_epochs, budget_hours) on EVO (1 epoch, no
 * replicates, pop 4): an evolution search of budget_epochs = 5 proposes exactly 5 and ends
 * saying so; one of a few milliseconds' training proposes only its initial population and
 * ends; a random search of budget_epochs = 5 draws 5. */
void test_evo_budgets(void) {
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
void test_evo_latency(void) {
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

void test_strategy(void) {
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
    /* --strategy bo on the same file: bo's initial design, max(3, min(7 / 4, 8)) = 3 */
    char d4[200];
    snprintf(d4, sizeof d4, "%s/strat_bo", scratch());
    const char *b1[] = { "sweep", EVO, "--out", d4, "--strategy", "bo", "--analytic-only", NULL };
    CHECK_INT_EQ(run_dse(log, b1, 60), 0);
    CHECK_INT_EQ(count_candidates(d4), 3);
    CHECK_OK(dse_search_read(d4, &lg, &err));
    CHECK(lg.text && !strncmp(lg.text, "dse-search-1 bo ", 16));
    CHECK_INT_EQ(lg.n_prop, 3);
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
static int evo_check(const char *space, const char *dir, const struct recs *x, char **text) {
    struct dse_space sp;
    struct dse_search_log lg;
    struct dse_err err = { 0 };
    int same = 0;
    *text = NULL;
    CHECK_OK(dse_space_load(space, &sp, &err));
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
 * candidate, whoever trains it and however often it is cut). With asha (two workers: which
 * candidates it promotes depends on the order results arrive) a candidate may have stopped
 * at the rung in one and gone on in the other: then the epochs both trained are equal, bit
 * for bit. Returns how many there were. */
static int recs_common_same(const struct recs *a, const struct recs *b, int asha) {
    int common = 0;
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++) {
            if (strcmp(a->r[i].id, b->r[j].id)) continue;
            struct recs x = { .n = 1 }, y = { .n = 1 };
            x.r[0] = a->r[i], y.r[0] = b->r[j]; /* shallow: read only */
            if (asha && x.r[0].status != y.r[0].status) {
                const int e = x.r[0].n_epochs < y.r[0].n_epochs ? x.r[0].n_epochs : y.r[0].n_epochs;
                CHECK(e >= 1);
                for (int k = 0; k < e; k++) CHECK(!memcmp(&x.r[0].ep[k].top1, &y.r[0].ep[k].top1, sizeof(float)) &&
                                                  !memcmp(&x.r[0].ep[k].test_loss, &y.r[0].ep[k].test_loss, sizeof(float)));
            } else
                CHECK(recs_same(&x, &y));
            common++;
        }
    return common;
}

/* One run of search_crash's killed search of space (its first proposals: `first`, made at
 * once) with `workers` workers at a time, compared with the reference (records a, log text
 * ta); returns the kills. */
static int evo_crash_run(const char *space, const char *tag, int first, int asha, int workers, int attempt,
                         struct dse_pcg32 *rng_, const struct recs *a, const char *ta) {
    struct dse_pcg32 rng = *rng_;
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/%s_crash_%d_%d", scratch(), tag, workers, attempt);
    snprintf(log, sizeof log, "%s.log", dir);
    const char *args[] = { "sweep", space, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--max-crashes",
                           "1000", asha ? "--early-stop" : NULL, "asha", "--eta", "2", "--min-epochs", "1", NULL };
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
    CHECK_INT_EQ(evo_check(space, dir, &b, &tb), 7);
    if (workers == 1) {
        CHECK(recs_same(a, &b));
        CHECK(ta && tb && !strcmp(ta, tb)); /* the same proposals and results, in the same order */
    } else {
        int common = recs_common_same(a, &b, asha);
        printf("  %d candidates in common with the uninterrupted search\n", common);
        CHECK(common >= first); /* the initial population or design at least */
    }
    free(tb);
    recs_free(&b);
    if (check_failures) show_log(log);
    *rng_ = rng;
    return kills;
}

/* A search (tests/spaces/sweep_evo.cfg: evolution, budget 7, population 4, one epoch;
 * tests/spaces/sweep_bo.cfg: the same space searched by bo, an initial design of 3) run
 * uninterrupted, then again with workers killed with SIGKILL at random moments and
 * restarted:
 *  - one worker at a time: the search log (every proposal and every result, in order) and
 *    every record end as the uninterrupted run's, bit for bit; a worker also dies just
 *    after it wrote a proposal to the log and before that proposal's candidate file;
 *  - two workers at once: which candidates the search proposes after the initial
 *    population depends on the order in which results were recorded, and so on timing;
 *    what holds is that the budget is spent exactly (7 candidates, none twice, none lost),
 *    every result is recorded once, the log replays to the same proposals, and each
 *    candidate both runs trained has the same record, bit for bit. */
static void search_crash(const char *space, const char *tag, int first, int asha, uint64_t stream) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    struct dse_pcg32 rng;
    crash_rng(&rng, stream);
    char ref[200], log[260];
    snprintf(ref, sizeof ref, "%s/%s_ref", scratch(), tag);
    snprintf(log, sizeof log, "%s.log", ref);
    const char *rargs[] = { "sweep", space, "--out", ref, "--workers", "1", "--conv", "gemm_batch",
                            asha ? "--early-stop" : NULL, "asha", "--eta", "2", "--min-epochs", "1", NULL };
    double t0 = now_s();
    CHECK_INT_EQ(run_dse(log, rargs, 120), 0);
    printf("  reference: %.1f s\n", now_s() - t0);
    struct recs a;
    char *ta = NULL;
    recs_load(ref, &a);
    CHECK_INT_EQ(evo_check(space, ref, &a, &ta), 7);
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
              strstr(md, "7 proposed, 7 results recorded") && strstr(md, ", ended.") &&
              strstr(md, "|                  7 |"));
        if (asha) { /* rung results fed the model; some proposals stopped at the rung, some went on */
            struct recs x;
            int stopped = 0, done = 0, nulls = 0;
            recs_load(ref, &x);
            for (int i = 0; i < x.n; i++) stopped += x.r[i].status == DSE_REC_STOPPED, done += x.r[i].status == DSE_REC_DONE;
            for (int i = 0; i < lg.n_res; i++) nulls += isnan(lg.res[i].obj[0]);
            printf("  asha: %d rung results, %d proposals stopped at the rung, %d trained to the end\n", lg.n_part,
                   stopped, done);
            CHECK_INT_EQ(lg.n_part, 7); /* every proposal reached the one rung */
            CHECK(stopped >= 1 && done >= 1 && stopped + done == 7);
            CHECK_INT_EQ(nulls, stopped); /* a stopped one's result is no full result */
            CHECK(lg.closed && strstr(md, "and 7 at asha's rungs"));
            recs_free(&x);
            char *out = NULL; /* dse sweep says what bo does with the rungs */
            CHECK(!dse_fs_read(log, &out, NULL, NULL) && strstr(out, "search: multi-fidelity: each proposal trains"));
            free(out);
        }
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
        for (int attempt = 0; attempt < 4 && kills < 3; attempt++)
            kills += evo_crash_run(space, tag, first, asha, workers, attempt, &rng, &a, ta);
        CHECK(kills >= 3);
    }
    free(ta);
    recs_free(&a);
}

void test_evo_crash(void) {
    search_crash(EVO, "evo", 4, 0, 13);
}

void test_bo_crash(void) {
    search_crash(BO_SPACE, "bo", 3, 0, 14);
}

/* bo under --early-stop asha (multi-fidelity): the same kills, the same guarantees */
void test_bo_asha_crash(void) {
    search_crash("tests/spaces/sweep_bo_asha.cfg", "bo_asha", 3, 1, 15);
}

/* train.replicates = 3 on two tiny candidates: replicate r is its own record, id + "r" + r,
 * trained with seed 7 + r; replicate 0 is, bit for bit, the record of the same space with
 * replicates = 1 (whose files hold no "replicate" key); the report groups them; successive
 * halving is refused. */
void test_replicates(void) {
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
    /* asha ranks an architecture by its replicates' mean and promotes or stops them together:
     * 2 architectures x 3 replicates, a rung at epoch 1 of 2, eta 2 (one goes on) */
    unlink(log);
    const char *asha[] = { "sweep", cfg[1], "--out", dir[2], "--workers", "1", "--conv", "gemm_batch", "--early-stop",
                           "asha", "--eta", "2", "--min-epochs", "1", NULL };
    CHECK_INT_EQ(run_dse(log, asha, 120), 0);
    struct recs c;
    recs_load(dir[2], &c); /* by id: each architecture's 3 replicates in a row */
    CHECK_INT_EQ(c.n, 6);
    int went_on = -1;
    double mean[2] = { 0, 0 };
    for (int i = 0; i < c.n && c.n == 6; i++) {
        const struct dse_rec *r = &c.r[i], *r0 = &c.r[i - i % 3];
        CHECK_INT_EQ(r->status, r0->status); /* together */
        CHECK(r->status == DSE_REC_DONE || (r->status == DSE_REC_STOPPED && r->n_epochs == 1));
        if (r->status == DSE_REC_DONE) went_on = i / 3;
        mean[i / 3] += r->ep[0].top1 / 3.0;
    }
    CHECK(went_on >= 0);
    for (int i = 0; i < c.n && c.n == 6 && went_on >= 0; i++) CHECK_INT_EQ(c.r[i].status == DSE_REC_DONE, i / 3 == went_on);
    /* the promotion is the architecture's, named by its id, justified by the replicates' mean */
    char pf[800], arch[DSE_ID_SIZE];
    snprintf(arch, sizeof arch, "%.17s", c.n == 6 && went_on >= 0 ? c.r[3 * went_on].id : "none");
    snprintf(pf, sizeof pf, "%s/rungs/asha-0/%s", dir[2], arch);
    out = NULL;
    CHECK_OK(dse_fs_read(pf, &out, NULL, NULL));
    char want[200];
    snprintf(want, sizeof want, "{\"id\": \"%s\", \"top1\": ", arch);
    const char *at = out ? strstr(out, want) : NULL;
    CHECK(at != NULL);
    if (at && went_on >= 0) CHECK_NEAR(strtod(at + strlen(want), NULL), mean[went_on], 1e-12);
    free(out);
    recs_free(&c);
}

/* An evolution search with replicates = 2: each proposal is trained twice (seeds 7, 8), and
 * the log records it once both are final, with top-1 their mean, read from the files. */
void test_evo_replicates(void) {
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

/* ---- strategy "auto" (issue #36 item 2): dse_search_auto's choice, said ------------------- */

/* The choice on small and large spaces and budgets (a base space with its search section
 * replaced), as dse_search_resolve makes it and says it; then a sweep says it too, and
 * searches as the strategy chosen: tests/spaces/search_auto.cfg (a budget of 7, no strategy)
 * as bo, --strategy auto with a budget covering the grid as grid, and evolution without pop
 * with a population of a third of the budget. */
void test_search_auto(void) {
    static const struct {
        const char *name, *base, *extra;
        enum dse_strategy want;
        const char *said; /* in dse_search_resolve's lines */
    } c[] = {
        { "auto_bo", EVO, "search = { budget = 7; };", DSE_SEARCH_BO,
          "search: strategy auto chose bo: the budget of 7 is less than the 12 feasible candidates" },
        { "auto_bo_hint", EVO, "search = { budget = 7; };", DSE_SEARCH_BO,
          "search: bo values every result above the lowest top-1 it has seen; if only networks above some top-1 "
          "interest you, say so with min_top1 = 0.7 (say) in the search section" },
        { "auto_bo_min_top1", EVO, "search = { budget = 7; min_top1 = 0.745; };", DSE_SEARCH_BO,
          "search: bo maximizes the hypervolume above top-1 0.745 (min_top1)\n" },
        { "auto_grid_min_top1", EVO, "search = { budget = 12;\n min_top1 = 0.745; };", DSE_SEARCH_GRID,
          "search: min_top1 (line 22) is bo's reference; grid does not use it\n" },
        { "auto_grid", EVO, "search = { budget = 12; };", DSE_SEARCH_GRID,
          "search: strategy auto chose grid: the budget of 12 covers all 12 feasible candidates of the grid of 12" },
        { "auto_pruned", EVO, "constraints = { max_params = 2500; };\nsearch = { budget = 8; };", DSE_SEARCH_GRID,
          "auto chose grid: the budget of 8 covers all 8 feasible candidates of the grid of 12" },
        { "auto_pruned_bo", EVO, "constraints = { max_params = 2500; };\nsearch = { budget = 7; };", DSE_SEARCH_BO,
          "auto chose bo: the budget of 7 is less than the 8 feasible candidates" },
        { "auto_hours", EVO, "search = { strategy = \"auto\"; budget_hours = 1.0; };", DSE_SEARCH_BO,
          "auto chose bo: budget_hours may not cover the 12 feasible candidates" },
        { "auto_measured", EVO, "search = { budget = 7; objectives = [\"latency_ms\"]; };", DSE_SEARCH_EVOLUTION,
          "auto chose evolution: the first objective, latency_ms, is measured after training, which bo cannot model\n"
          "search: evolution's population is 4: a third of the budget of 7, within 4 to 16\n" },
        { "auto_model", EVO_SPACE, "constraints = { max_params = 60000; };\nsearch = { budget = 300; };",
          DSE_SEARCH_EVOLUTION, "auto chose evolution: the budget of 300 is more than bo's model holds (256 points)" },
        { "auto_large", "bench/large_space.cfg", "search = { budget = 30; };", DSE_SEARCH_EVOLUTION,
          "auto chose evolution: the grid of 1105920 candidates is larger than bo's pool (4096): evolution's moves "
          "reach all of it\nsearch: evolution's population is 10: a third of the budget of 30, within 4 to 16\n" },
        { "auto_evo_pop", EVO, "search = { strategy = \"evolution\"; budget = 30; pop = 16; };", DSE_SEARCH_EVOLUTION,
          "search: pop = 16 is more than a third of the budget of 30: its first 16 proposals are a random sample, 14 "
          "evolved (without pop: 10)\n" },
        { "auto_evo_kept", EVO, "search = { strategy = \"evolution\"; budget = 30; pop = 10; };", DSE_SEARCH_EVOLUTION,
          "" },
    };
    for (size_t i = 0; i < DSE_ARRAY_LEN(c); i++) {
        char path[300], said[1024] = "x", why[400] = "";
        char *base = NULL;
        struct dse_space s;
        struct dse_err err = { 0 };
        snprintf(path, sizeof path, "%s/%s.cfg", scratch(), c[i].name);
        CHECK_OK(dse_fs_read(c[i].base, &base, NULL, NULL));
        FILE *f = base ? fopen(path, "w") : NULL;
        CHECK(f != NULL);
        if (!f) { free(base); continue; }
        for (char *p = base, *nl; *p; p = nl + 1) { /* the base without its search and constraints */
            nl = strchr(p, '\n');
            if (!nl) nl = p + strlen(p) - 1;
            if (strncmp(p, "search", 6) && strncmp(p, "constraints", 11)) fprintf(f, "%.*s", (int)(nl - p + 1), p);
        }
        fprintf(f, "%s\n", c[i].extra);
        fclose(f);
        free(base);
        CHECK_OK(dse_space_load(path, &s, &err));
        if (err.msg[0]) printf("  %s: %s\n", c[i].name, err.msg);
        const int was_auto = s.search.strategy == DSE_SEARCH_AUTO;
        if (was_auto) {
            CHECK_INT_EQ(dse_search_auto(&s, dse_search_budget_candidates(&s), why, (int)sizeof why), c[i].want);
        }
        CHECK_OK(dse_search_resolve(&s, said, (int)sizeof said, &err));
        if (s.search.strategy != c[i].want || !strstr(said, c[i].said) || (!c[i].said[0] && said[0]))
            printf("  %s: chose %s, said \"%s\"\n", c[i].name, dse_strategy_str(s.search.strategy), said);
        CHECK_INT_EQ((int)s.search.strategy, (int)c[i].want);
        CHECK(strstr(said, c[i].said) != NULL);
        CHECK(c[i].said[0] || !said[0]); /* nothing to say: nothing said */
        if (was_auto) CHECK(strstr(said, why) != NULL); /* the same reason as dse_search_auto's */
        dse_space_free(&s);
    }
    /* dse sweep says it, and the sweep is the chosen strategy's */
    static const struct {
        const char *name, *space, *strategy, *said, *log_head;
        int candidates; /* after the analytic phase */
    } r[] = {
        { "auto_sweep_bo", "tests/spaces/search_auto.cfg", NULL,
          "search: strategy auto chose bo: the budget of 7 is less than", "dse-search-1 bo seed=3 pop=4 budget=7 ", 3 },
        { "auto_sweep_grid", "auto_grid", "auto", "search: strategy auto chose grid", NULL, 12 },
        { "auto_sweep_evo", "auto_large", NULL, "search: evolution's population is 10: a third of the budget of 30",
          "dse-search-1 evolution seed=1 pop=10 budget=30 ", 10 },
        { "auto_sweep_evo30", "auto_evo_pop", NULL, "search: pop = 16 is more than a third", NULL, 12 },
    };
    for (size_t i = 0; i < DSE_ARRAY_LEN(r); i++) {
        char space[300], dir[300], log[320], *text = NULL;
        if (strchr(r[i].space, '/')) snprintf(space, sizeof space, "%s", r[i].space);
        else snprintf(space, sizeof space, "%s/%s.cfg", scratch(), r[i].space);
        snprintf(dir, sizeof dir, "%s/%s", scratch(), r[i].name);
        snprintf(log, sizeof log, "%s.log", dir);
        const char *a[] = { "sweep", space, "--out", dir, "--analytic-only", r[i].strategy ? "--strategy" : NULL,
                            r[i].strategy, NULL };
        CHECK_INT_EQ(run_dse(log, a, 60), 0);
        CHECK_INT_EQ(count_candidates(dir), r[i].candidates);
        CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
        if (text && !strstr(text, r[i].said)) printf("  %s: said\n%s\n", r[i].name, text);
        CHECK(text && strstr(text, r[i].said));
        free(text);
        struct dse_search_log lg;
        struct dse_err err = { 0 };
        CHECK_OK(dse_search_read(dir, &lg, &err));
        if (r[i].log_head) {
            if (!lg.text || strncmp(lg.text, r[i].log_head, strlen(r[i].log_head)))
                printf("  %s: log %.80s\n", r[i].name, lg.text ? lg.text : "(none)");
            CHECK(lg.text && !strncmp(lg.text, r[i].log_head, strlen(r[i].log_head)));
        }
        dse_search_log_free(&lg);
    }
}

/* A search keeps the population its log began with (the header's pop=): a log made with
 * pop 4 (tests/spaces/sweep_evo.cfg) replays with the space's pop changed to 12 (as an older
 * dse's default, or an edited rule, would give), where pop 12 itself proposes otherwise. */
void test_search_log_pop(void) {
    struct dse_space s;
    struct dse_err err = { 0 };
    CHECK_OK(dse_space_load(EVO, &s, &err));
    CHECK_INT_EQ(s.search.pop, 4);
    uint64_t p[4], q = 0, q12 = 0;
    int n = 0;
    struct dse_evo_result res[4];
    char text[4096], id[DSE_ID_SIZE], dir[300], path[400];
    int len = snprintf(text, sizeof text, "dse-search-1 evolution seed=3 pop=4 budget=7 objectives=top1,params\nstep 1\n");
    CHECK_OK(dse_search_propose(&s, NULL, 0, NULL, 0, NULL, 0, 4, p, &n, &err));
    CHECK_INT_EQ(n, 4);
    for (int i = 0; i < 4; i++) {
        struct dse_mp mp;
        enum dse_evo_cost c = DSE_EVO_PARAMS;
        int pruned = 0;
        dse_space_candidate(&s, p[i], &mp);
        dse_space_id(&mp, id);
        len += snprintf(text + len, sizeof text - (size_t)len, "propose %s %llu\n", id, (unsigned long long)p[i]);
        res[i] = (struct dse_evo_result){ .index = p[i], .obj = { 0.5 + 0.1 * i } };
        CHECK_OK(dse_evo_costs(&s, p[i], &c, 1, &res[i].obj[1], &pruned, &err));
    }
    len += snprintf(text + len, sizeof text - (size_t)len, "step 2\n");
    for (int i = 0; i < 4; i++) {
        struct dse_mp mp;
        dse_space_candidate(&s, p[i], &mp);
        dse_space_id(&mp, id);
        len += snprintf(text + len, sizeof text - (size_t)len, "result %s %llu %.17g %.17g\n", id,
                        (unsigned long long)p[i], res[i].obj[0], res[i].obj[1]);
    }
    CHECK_OK(dse_search_propose(&s, res, 4, NULL, 0, NULL, 0, 1, &q, &n, &err)); /* a child of pop 4 */
    CHECK_INT_EQ(n, 1);
    struct dse_mp mp;
    dse_space_candidate(&s, q, &mp);
    dse_space_id(&mp, id);
    len += snprintf(text + len, sizeof text - (size_t)len, "propose %s %llu\n", id, (unsigned long long)q);
    s.search.pop = 12;
    CHECK_OK(dse_search_propose(&s, res, 4, NULL, 0, NULL, 0, 1, &q12, &n, &err)); /* pop 12: still its first sample */
    CHECK(q12 != q); /* the premise: the header's pop matters here */
    snprintf(dir, sizeof dir, "%s/log_pop", scratch());
    snprintf(path, sizeof path, "%s/search", dir);
    CHECK_OK(dse_fs_mkdirs(path, &err));
    snprintf(path, sizeof path, "%s/search/log-2", dir);
    CHECK_OK(dse_fs_write_atomic(path, text, (size_t)len, &err));
    struct dse_search_log lg;
    int same = 0;
    CHECK_OK(dse_search_read(dir, &lg, &err));
    CHECK_INT_EQ(lg.pop, 4);
    CHECK_INT_EQ(lg.n_prop, 5);
    CHECK_OK(dse_search_replay(&s, &lg, &same, &err));
    CHECK(same);
    dse_search_log_free(&lg);
    dse_space_free(&s);
}

/* bo under asha with replicates = 2 (tests/spaces/sweep_bo_asha.cfg, budget 5): a rung
 * result in the log is the mean of the architecture's replicates' top-1 at that epoch, as
 * asha ranks it; an architecture's replicates are stopped or go on together; the log ends
 * and replays. */
void test_bo_asha_replicates(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char *base = NULL, space[300], dir[300], log[320];
    CHECK_OK(dse_fs_read("tests/spaces/sweep_bo_asha.cfg", &base, NULL, NULL));
    char *lim = base ? strstr(base, "limit_test = 200;") : NULL, *bud = base ? strstr(base, "budget = 7;") : NULL;
    CHECK(lim && bud && lim < bud);
    if (!lim || !bud || bud < lim) { free(base); return; }
    snprintf(space, sizeof space, "%s/bo_asha_rep.cfg", scratch());
    snprintf(dir, sizeof dir, "%s/bo_asha_rep", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    FILE *f = fopen(space, "w");
    CHECK(f != NULL);
    if (!f) { free(base); return; }
    fprintf(f, "%.*slimit_test = 200; replicates = 2;%.*sbudget = 5;%s", (int)(lim - base), base,
            (int)(bud - lim - strlen("limit_test = 200;")), lim + strlen("limit_test = 200;"), bud + strlen("budget = 7;"));
    fclose(f);
    free(base);
    const char *a[] = { "sweep", space, "--out", dir, "--workers", "1", "--conv", "gemm_batch", "--early-stop", "asha",
                        "--eta", "2", "--min-epochs", "1", NULL };
    CHECK_INT_EQ(run_dse(log, a, 300), 0);
    struct dse_search_log lg;
    struct dse_space sp;
    struct dse_err err = { 0 };
    struct recs x;
    int same = 0, stopped = 0;
    CHECK_OK(dse_space_load(space, &sp, &err));
    CHECK_OK(dse_search_read(dir, &lg, &err));
    CHECK(lg.ended && lg.n_prop == 5 && lg.n_res == 5 && lg.n_part == 5);
    CHECK_OK(dse_search_replay(&sp, &lg, &same, &err));
    CHECK(same);
    recs_load(dir, &x); /* by id: an architecture's replicate 0, then 1 */
    CHECK_INT_EQ(x.n, 10);
    for (int i = 0; i + 1 < x.n && x.n == 10; i += 2) {
        const struct dse_rec *r0 = &x.r[i], *r1 = &x.r[i + 1];
        CHECK(!strncmp(r0->id, r1->id, DSE_ID_BASE_LEN) && r1->replicate == 1);
        CHECK_INT_EQ(r0->status, r1->status);
        stopped += r0->status == DSE_REC_STOPPED;
        for (int j = 0; j < lg.n_part; j++) /* its rung result: the two replicates' mean */
            if (lg.part[j].index == (uint64_t)r0->index) CHECK(lg.part[j].top1 == ((double)r0->ep[0].top1 + r1->ep[0].top1) / 2);
    }
    CHECK(stopped >= 1 && stopped < 5);
    recs_free(&x);
    dse_search_log_free(&lg);
    dse_space_free(&sp);
}

/* The search log's reader (docs/sweep-dir.md, "Search") on logs written by hand: a bo log
 * with rung and last lines reads whole; each bad line is refused at its line, naming it. */
static const struct { const char *id, *body, *want; int line; } bad_logs[] = {
    /* id                 lines after the header and "step 1\npropose cdf083b2bf52c3e75 0\n" */
    { "good",             "step 2\nrung cdf083b2bf52c3e75 0 1 2 0.5\nlast budget\nstep 3\nresult cdf083b2bf52c3e75 0 null null\nend budget\n", NULL, 0 },
    { "rung-unknown",     "step 2\nrung c51e9243c5c2f1658 1 1 2 0.5\n", "a rung result of no pending proposal", 5 },
    { "rung-after-result","step 2\nresult cdf083b2bf52c3e75 0 0.5 608\nrung cdf083b2bf52c3e75 0 1 2 0.5\n", "a rung result of no pending proposal", 6 },
    { "rung-full-epoch",  "step 2\nrung cdf083b2bf52c3e75 0 2 2 0.5\n", "not at a rung below", 5 },
    { "rung-two-schedules","step 2\nrung cdf083b2bf52c3e75 0 1 2 0.5\nrung cdf083b2bf52c3e75 0 2 4 0.6\n", "one schedule for all", 6 },
    { "rung-twice",       "step 2\nrung cdf083b2bf52c3e75 0 1 2 0.5\nrung cdf083b2bf52c3e75 0 1 2 0.5\n", "a rung result recorded twice", 6 },
    { "rung-not-number",  "step 2\nrung cdf083b2bf52c3e75 0 1 2 x\n", "not at a rung below", 5 },
    { "rung-short",       "step 2\nrung cdf083b2bf52c3e75 0 1\n", "not rung ID INDEX EPOCH OF TOP1", 5 },
    { "result-twice",     "step 2\nresult cdf083b2bf52c3e75 0 0.5 608\nresult cdf083b2bf52c3e75 0 0.5 608\n", "recorded twice", 6 },
    { "unknown-line",     "step 2\nstop now\n", "none of step, propose, rung, result, last, end", 5 },
};

void test_search_log_bad(void) {
    char dir[300], sub[320], path[340];
    snprintf(dir, sizeof dir, "%s/log_bad", scratch());
    snprintf(sub, sizeof sub, "%s/search", dir);
    snprintf(path, sizeof path, "%s/log-1", sub);
    struct dse_err err = { 0 };
    CHECK_OK(dse_fs_mkdirs(sub, &err));
    for (size_t i = 0; i < DSE_ARRAY_LEN(bad_logs) + 1; i++) { /* the last: a rung line in evolution's log */
        const int evo = i == DSE_ARRAY_LEN(bad_logs);
        char text[1200];
        snprintf(text, sizeof text, "dse-search-1 %s seed=3 pop=4 budget=7 objectives=top1,params\nstep 1\n"
                 "propose cdf083b2bf52c3e75 0\n%s", evo ? "evolution" : "bo",
                 evo ? "step 2\nrung cdf083b2bf52c3e75 0 1 2 0.5\n" : bad_logs[i].body);
        const char *want = evo ? "in a search other than bo's" : bad_logs[i].want;
        const int line = evo ? 5 : bad_logs[i].line;
        CHECK_OK(dse_fs_write_atomic(path, text, strlen(text), NULL));
        struct dse_search_log lg;
        memset(&err, 0, sizeof err);
        enum dse_status st = dse_search_read(dir, &lg, &err);
        if (!want) {
            CHECK_OK(st);
            CHECK(lg.n_part == 1 && lg.part[0].epoch == 1 && lg.part[0].of == 2 && lg.part[0].top1 == 0.5 &&
                  lg.closed && lg.ended && lg.n_res == 1 && !strcmp(lg.strategy, "bo"));
            dse_search_log_free(&lg);
            continue;
        }
        if (st != DSE_ERR_CONFIG || !strstr(err.msg, want) || err.line != line)
            fprintf(stderr, "  %s: status %d, line %d, \"%s\"\n", evo ? "rung-in-evolution" : bad_logs[i].id, st,
                    err.line, err.msg);
        CHECK(st == DSE_ERR_CONFIG && strstr(err.msg, want) && err.line == line);
    }
}
