/* sweep_status.c: `dse status DIR`: where a training sweep stands, read from its
 * directory alone (docs/sweep-dir.md): candidates by status, who trains what, epochs and
 * time spent against full training, and an ETA. Reads only; safe while workers run. */
#include "sweep/sweep_impl.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/json_read.h"
#include "sweep/search.h"
#include "sweep/sweep_read.h"

struct status_cand {
    struct dse_rec   rec;
    int64_t          lease_gen;
    struct dse_lease lease;
    int              have_lease;
    char             unreadable[300]; /* why its current lease file does not read; "" if it does */
};

struct status_ctx {
    struct status_cand *c;
    int                 n;
};

static void lease_seen(void *arg, const char *id, int64_t gen) {
    struct status_ctx *x = arg;
    for (int i = 0; i < x->n; i++) /* a status call, not a hot loop */
        if (!strcmp(x->c[i].rec.id, id)) x->c[i].lease_gen = gen;
}

/* fprintf, or nothing when f is NULL (dse status --json prints no text). */
__attribute__((format(printf, 2, 3))) static void say(FILE *f, const char *fmt, ...) {
    if (!f) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
}

/* dse status --json: one line, an object (docs/sweep-dir.md): counts by status, workers,
 * epochs and seconds, the ETA (null when not known or nothing runs), and what state the
 * sweep is in: "untrained" (no plan.json), "finished", "idle" (no live lease: no candidate
 * is being trained, though a worker may be between candidates or waiting for a GPU) or
 * "running". */
static void status_json(FILE *f, const char *space, const char *dir, const struct dse_tally *t, int trained,
                        int final, int search_open, double eta) {
    const int unpruned = t->n - t->pruned;
    const char *state = !trained ? "untrained" : final == unpruned && !search_open ? "finished" : !t->running ? "idle" : "running";
    fputs("{\"sweep\": ", f);
    dse_json_write_str(f, space, strlen(space));
    fputs(", \"dir\": ", f);
    dse_json_write_str(f, dir, strlen(dir));
    fprintf(f, ", \"state\": \"%s\", \"candidates\": %d, \"pruned\": %d, \"finished\": %d, \"by_status\": {",
            state, t->n, t->pruned, final);
    for (int k = 0, any = 0; k < DSE_REC_COUNT; k++) /* running: the worker count below */
        if (k != DSE_REC_RUNNING)
            fprintf(f, "%s\"%s\": %d", any++ ? ", " : "", dse_rec_status_str((enum dse_rec_status)k), t->by_status[k]);
    fprintf(f, "}, \"running\": %d, \"waiting\": %d, \"epochs_done\": %lld, \"epochs_full\": %lld, "
               "\"seconds\": %.3f, \"eta_seconds\": ", t->running, t->waiting, (long long)t->epochs_done,
            (long long)t->epochs_full, t->seconds);
    if (trained && final != unpruned && t->running && eta >= 0) fprintf(f, "%.0f", eta);
    else fputs("null", f);
    fputs("}\n", f);
}

static int by_index(const void *a, const void *b) {
    const struct status_cand *x = a, *y = b;
    return (x->rec.index > y->rec.index) - (x->rec.index < y->rec.index);
}

/* Every candidates/NAME.json of dir into x (read strictly), in index order. On an error x
 * holds the records read so far, for the caller to free. */
static enum dse_status status_read_cands(const char *dir, struct status_ctx *x, struct dse_err *err) {
    char path[4096];
    int cap = 0;
    enum dse_status st = DSE_OK;
    snprintf(path, sizeof path, "%s/candidates", dir);
    DIR *d = opendir(path);
    if (!d) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: cannot open: %s", path, strerror(errno));
    struct dirent *de;
    while ((de = readdir(d)) && !st) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".json") != 0) continue;
        if (x->n == cap) {
            cap = cap ? 2 * cap : 64;
            struct status_cand *p = realloc(x->c, sizeof *p * (size_t)cap);
            if (!p) {
                st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
                break;
            }
            x->c = p;
        }
        struct status_cand *c = &x->c[x->n];
        memset(c, 0, sizeof *c);
        dse_rec_init(&c->rec);
        char file[4400];
        snprintf(file, sizeof file, "%s/%s", path, de->d_name);
        if ((st = dse_rec_read_path(file, &c->rec, err))) /* checked strictly there */
            dse_rec_deinit(&c->rec);
        else x->n++;
    }
    closedir(d);
    if (!st && x->n) qsort(x->c, (size_t)x->n, sizeof *x->c, by_index);
    return st;
}

/* The current lease of each unfinished candidate of x that has one: running[i] when it is
 * live at wall time now (renewed within twice its ttl, its holder not known dead); why it
 * does not read, when it is there but does not. */
static void status_leases(const char *dir, struct status_ctx *x, double now, int *running) {
    struct dse_lease_me me;
    dse_lease_me_init(&me);
    for (int i = 0; i < x->n; i++) {
        struct status_cand *c = &x->c[i];
        if (dse_rec_final(&c->rec) || !c->lease_gen) continue;
        int gone;
        struct dse_err le = { 0 };
        const int bad = dse_lease_read(dir, c->rec.id, c->lease_gen, &c->lease, &gone, &le) != DSE_OK;
        if (bad && !gone) dse_strlcpy(c->unreadable, le.msg, sizeof c->unreadable);
        c->have_lease = !bad && !c->lease.released;
        running[i] = c->have_lease && now <= c->lease.renewed + 2 * c->lease.ttl_s &&
                     !dse_lease_holder_dead(&c->lease, &me);
    }
}

/* The text lines on progress: finished by status (stopped ones by rung), running, paused
 * or waiting and pending, ASHA's promotions, epochs against full training, time spent. */
static void status_progress(FILE *tf, const struct dse_sweep_plan *plan, const struct dse_tally *t,
                            const struct dse_rung *rung, int final, int unpruned) {
    char a[32], b[32];
    say(tf, "Finished %d of %d: %d done, %d stopped", final, unpruned, t->by_status[DSE_REC_DONE],
            t->by_status[DSE_REC_STOPPED]);
    if (t->by_status[DSE_REC_STOPPED]) {
        say(tf, "%s", " (");
        for (int k = 0, any = 0; k < plan->n_rungs; k++)
            if (t->stopped_at[k]) say(tf, "%srung %d at epoch %d: %d", any++ ? ", " : "", k, plan->rungs[k], t->stopped_at[k]);
        say(tf, ")");
    }
    say(tf, ", %d diverged, %d failed\n", t->by_status[DSE_REC_DIVERGED], t->by_status[DSE_REC_FAILED]);
    if (plan->halving == DSE_SWEEP_HALVING_ASHA) {
        /* ASHA: paused at a rung until more results there promote it, or the rung closes */
        say(tf, "Running %d, paused at a rung %d", t->running, t->waiting);
        if (t->waiting) {
            say(tf, "%s", " (");
            for (int k = 0, any = 0; k < plan->n_rungs; k++)
                if (t->waiting_at[k]) say(tf, "%srung %d: %d", any++ ? ", " : "", k, t->waiting_at[k]);
            say(tf, ")");
        }
        say(tf, ", pending %d\n", t->by_status[DSE_REC_PENDING] - t->running - t->waiting);
        say(tf, "Promotions (asynchronous; as results arrive):");
        for (int k = 0; k < plan->n_rungs; k++)
            say(tf, "%s rung %d at epoch %d: %d reached, %d promoted%s%s", k ? ";" : "", k, plan->rungs[k],
                rung[k].n_reached, rung[k].n_promoted, rung[k].n_promotable ? ", more to promote" : "",
                rung[k].decided ? ", closed" : "");
        say(tf, "\n");
    } else {
        say(tf, "Running %d, waiting for a rung decision %d, pending %d\n", t->running, t->waiting,
            t->by_status[DSE_REC_PENDING] - t->running - t->waiting);
    }
    double expect = final == unpruned ? (double)t->epochs_done : t->epochs_planned;
    say(tf, "Epochs: %lld trained", (long long)t->epochs_done);
    if (final != unpruned) say(tf, " of about %.0f planned", t->epochs_planned);
    say(tf, "; full training of every candidate: %lld", (long long)t->epochs_full);
    if (plan->halving && t->epochs_full > 0)
        say(tf, " (early stopping %s %.0f epochs, %.0f%%)", final == unpruned ? "saved" : "saves about",
                (double)t->epochs_full - expect, 100.0 * ((double)t->epochs_full - expect) / (double)t->epochs_full);
    say(tf, "\n");
    dse_fmt_duration(a, sizeof a, t->seconds);
    dse_fmt_duration(b, sizeof b, t->seconds_full);
    if (t->timed)
        say(tf, "Training time: %s so far (summed over candidates); full training of every candidate: about %s\n", a, b);
    else
        say(tf, "Training time: none recorded yet\n");
}

/* The text lists of candidates by name: training now (with how far), stale leases,
 * unreadable leases, re-queued after running out of GPU memory, not finished normally. */
static void status_lists(FILE *tf, const struct status_ctx *x, const int *running, const struct dse_sweep_plan *plan,
                         const struct dse_rung *rung, double now) {
    int heading = 0;
    for (int i = 0; i < x->n; i++) {
        const struct status_cand *c = &x->c[i];
        if (!running[i]) continue;
        int target, rg;
        dse_sweep_next(&c->rec, plan, rung, &target, &rg);
        if (!heading++) say(tf, "%s", "Training now:\n");
        char at[64] = "";
        if (c->lease.iters > 0)
            snprintf(at, sizeof at, " (epoch %d at %.0f%%)", c->lease.epoch + 1, 100.0 * c->lease.iter / c->lease.iters);
        char dev[32] = "";
        if (c->lease.device[0]) snprintf(dev, sizeof dev, " (%s)", c->lease.device);
        char who[100];
        dse_lease_holder_name(&c->lease, who, (int)sizeof who);
        say(tf, "  %s  epochs %d -> %d of %d%s  on %s%s, renewed %.0f s ago\n", c->rec.id, c->rec.n_epochs,
                target, plan->epochs, at, who, dev, now - c->lease.renewed);
    }
    heading = 0;
    for (int i = 0; i < x->n; i++) {
        const struct status_cand *c = &x->c[i];
        if (running[i] || !c->have_lease || dse_rec_final(&c->rec)) continue;
        if (!heading++) say(tf, "%s", "Stale leases (worker presumed dead; the next worker takes the candidate over from its "
                              "last checkpoint):\n");
        char who[100];
        dse_lease_holder_name(&c->lease, who, (int)sizeof who);
        say(tf, "  %s  %s, last renewed %.0f s ago\n", c->rec.id, who, now - c->lease.renewed);
    }
    heading = 0;
    for (int i = 0; i < x->n; i++) {
        const struct status_cand *c = &x->c[i];
        if (!c->unreadable[0] || dse_rec_final(&c->rec)) continue;
        if (!heading++) say(tf, "%s", "Unreadable leases (no holder named: a worker takes the candidate over once it "
                              "has seen the file so for its --lease-seconds):\n");
        say(tf, "  %s  %s\n", c->rec.id, c->unreadable);
    }
    heading = 0;
    for (int i = 0; i < x->n; i++) {
        const struct dse_rec *r = &x->c[i].rec;
        const int oom = dse_rec_oom_streak(r);
        if (dse_rec_final(r) || !oom) continue;
        if (!heading++) say(tf, "%s", "Re-queued after running out of GPU memory (each asks for more next time; "
                              "--max-oom in a row fail it):\n");
        say(tf, "  %s  %d in a row; last: %s\n", r->id, oom, r->att[r->n_att - 1].note);
    }
    heading = 0;
    for (int i = 0; i < x->n; i++) {
        const struct dse_rec *r = &x->c[i].rec;
        if (r->status != DSE_REC_FAILED && r->status != DSE_REC_DIVERGED) continue;
        if (!heading++) say(tf, "%s", "Not finished normally:\n");
        if (r->status == DSE_REC_FAILED) say(tf, "  %s  failed: %s\n", r->id, r->failed_why);
        else say(tf, "  %s  diverged in epoch %d at iteration %lld\n", r->id, r->diverged_epoch,
                     (long long)r->diverged_iter);
    }
}

enum dse_status dse_sweep_status(FILE *f, const char *dir, int json, int *finished, struct dse_err *err) {
    FILE *tf = json ? NULL : f; /* the text lines; JSON is written at the end */
    if (finished) *finished = 0;
    char path[4096], space[128] = "?";
    struct dse_json_doc *doc = NULL;
    struct dse_err e = { 0 };
    struct status_ctx x = { .c = NULL, .n = 0 };
    struct dse_sweep_plan plan;
    struct dse_rung rung[DSE_SWEEP_RUNGS_MAX];
    int missing, *running = NULL;
    struct dse_rec *recs = NULL;
    enum dse_status st;
    memset(rung, 0, sizeof rung);
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    if ((st = dse_json_load(path, &doc, &e))) { /* path:line: when it is there but does not parse */
        char line[16] = "";
        if (e.line > 0) snprintf(line, sizeof line, ":%d", e.line);
        return dse_err_set(err, st, NULL, 0, "%s%s: %s; expected a sweep directory made by dse sweep "
                           "(docs/sweep-dir.md)", path, line, e.msg);
    }
    const struct dse_json *v = dse_json_get(dse_json_root(doc), "space");
    if (v && v->type == DSE_JSON_STRING) dse_strlcpy(space, v->str, sizeof space);
    dse_json_free(doc);
    if ((st = dse_plan_read(dir, &plan, &missing, err))) return st;

    st = status_read_cands(dir, &x, err);
    if (!st) st = dse_lease_scan(dir, lease_seen, &x, err);
    running = calloc((size_t)(x.n ? x.n : 1), sizeof *running);
    recs = malloc(sizeof *recs * (size_t)(x.n ? x.n : 1));
    const struct dse_rec **ptrs = malloc(sizeof *ptrs * (size_t)(x.n ? x.n : 1));
    if (!st && (!running || !recs || !ptrs)) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; !st && i < x.n; i++) ptrs[i] = &x.c[i].rec;
    if (!st) st = dse_sweep_check_indices(dir, ptrs, x.n, err);
    int reps = 1, archs = 0; /* train.replicates > 1: each record one replicate of an architecture */
    for (int i = 0; !st && i < x.n; i++) {
        if (x.c[i].rec.replicate + 1 > reps) reps = x.c[i].rec.replicate + 1;
        archs += !i || x.c[i].rec.index != x.c[i - 1].rec.index;
    }
    if (!st && !missing) st = dse_rungs_load(dir, &plan, ptrs, x.n, dse_sweep_replicates(dir, reps), rung, err);
    free(ptrs);
    if (st) goto done;
    double now = dse_lease_wall();
    for (int i = 0; i < x.n; i++) recs[i] = x.c[i].rec;
    status_leases(dir, &x, now, running);
    struct dse_tally t;
    dse_tally_make(&t, recs, x.n, missing ? NULL : &plan, rung, running);
    int final = 0;
    for (int k = 0; k < DSE_REC_COUNT; k++)
        if (k != DSE_REC_PENDING && k != DSE_REC_PRUNED) final += t.by_status[k];
    int unpruned = t.n - t.pruned;
    char per[80] = "";
    if (reps > 1) snprintf(per, sizeof per, " (%d architectures x %d replicates)", archs, reps);
    say(tf, "Sweep %s in %s: %d candidate%s%s, %d pruned by constraints\n", space, dir, t.n, t.n == 1 ? "" : "s",
            per, t.pruned);
    if (missing) {
        say(tf, "Not trained yet: no plan.json. Start training with: dse sweep SPACE --out %s\n", dir);
        if (json) status_json(f, space, dir, &t, 0, final, 0, -1);
        if (finished) *finished = 1; /* nothing to wait for: no training has been planned */
        goto done;
    }
    /* an evolution search (sweep/search.h) that has not ended proposes more */
    struct dse_search_log lg;
    int search_open = 0;
    if ((st = dse_search_read(dir, &lg, err))) goto done;
    search_open = lg.gen && !lg.ended;
    if (finished) *finished = final == unpruned && !search_open;
    char desc[400], a[32];
    dse_plan_describe(&plan, desc, sizeof desc);
    say(tf, "Plan: %s\n", desc);
    if (lg.gen)
        say(tf, "Search: %d proposed, %d results recorded%s; %s\n", lg.n_prop, lg.n_res,
            lg.n_part ? " (and rung results for bo's model)" : "",
            lg.ended ? "ended" : lg.closed ? "no more proposals; the last ones are still training or waiting at a rung"
                     : "more to propose as workers free up");
    dse_search_log_free(&lg);
    status_progress(tf, &plan, &t, rung, final, unpruned);
    double eta = dse_tally_eta(&t);
    if (eta < 0 && final != unpruned) { /* no epoch finished yet: the speed the running ones report */
        double est = 0;
        int k = 0;
        for (int i = 0; i < x.n; i++)
            if (running[i] && x.c[i].lease.epoch_s > 0) est += x.c[i].lease.epoch_s, k++;
        if (k) {
            double left = t.epochs_planned - (double)t.epochs_done;
            eta = (left > 1 ? left : 1) * est / k / (t.running > 1 ? t.running : 1);
        }
    }
    if (json) {
        status_json(f, space, dir, &t, 1, final, search_open, eta);
        goto done;
    }
    if (final == unpruned && !search_open) {
        say(tf, "Finished.\n");
    } else if (final == unpruned) {
        say(tf, "The search has not ended: go on with dse sweep SPACE --out %s\n", dir);
    } else if (t.running == 0) { /* no live lease: nothing is moving, so no time to promise */
        say(tf, "No candidate is being trained (no live lease). If no dse sweep is running on it, go on with: "
                "dse sweep SPACE --out %s\n", dir);
    } else if (eta < 0) {
        say(tf, "ETA: not known until an epoch has been timed\n");
    } else {
        dse_fmt_duration(a, sizeof a, eta);
        say(tf, "ETA: about %s with %d worker%s\n", a, t.running > 1 ? t.running : 1, t.running > 1 ? "s" : "");
    }
    status_lists(tf, &x, running, &plan, rung, now);
done:
    for (int i = 0; i < x.n; i++) dse_rec_deinit(&x.c[i].rec);
    for (int k = 0; k < DSE_SWEEP_RUNGS_MAX; k++) dse_rung_deinit(&rung[k]);
    free(x.c), free(running), free(recs);
    return st;
}
