/* sweep_rec.c: the plan of a training sweep, its rung decisions, and tallies of a sweep's
 * progress and a candidate's next action (sweep_impl.h, the directory floor; the records
 * themselves: sweep/record.c). The file formats are in docs/sweep-dir.md. */
#include "sweep/sweep_impl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/fs.h"
#include "sweep/json_read.h"
#include "engine/cuda/cuda.h"
#include "engine/engine.h"
#include "engine/train.h"

/* 0 if path is certainly absent (ENOENT), 1 otherwise: a reader then reports why. */
static int may_exist(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 || errno != ENOENT;
}

/* ---- plan ------------------------------------------------------------------------------- */

enum dse_status dse_sweep_plan_rungs(struct dse_sweep_plan *p, struct dse_err *err) {
    p->n_rungs = 0;
    if (!p->halving) return DSE_OK;
    if (p->eta < 2 || p->min_epochs < 1)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "successive halving needs eta >= 2 and min-epochs >= 1");
    for (long long r = p->min_epochs; r < p->epochs && p->n_rungs < DSE_SWEEP_RUNGS_MAX; r *= p->eta)
        p->rungs[p->n_rungs++] = (int)r;
    if (!p->n_rungs)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "successive halving with --min-epochs %d and a budget of %d "
                           "epochs has no rung: the first rung must come before the last epoch",
                           p->min_epochs, p->epochs);
    return DSE_OK;
}

void dse_plan_describe(const struct dse_sweep_plan *p, char *buf, int size) {
    int n = snprintf(buf, (size_t)size, "%d epoch%s per candidate", p->epochs, p->epochs == 1 ? "" : "s");
    if (p->halving && n < size) {
        n += snprintf(buf + n, (size_t)(size - n), "; %s (%seta %d), rungs at",
                      dse_sweep_halving_what(p->halving),
                      p->halving == DSE_SWEEP_HALVING_ASHA ? "ASHA, " : "", p->eta);
        for (int k = 0; k < p->n_rungs && n < size; k++)
            n += snprintf(buf + n, (size_t)(size - n), "%s %d", k ? "," : "", p->rungs[k]);
        if (n < size)
            n += snprintf(buf + n, (size_t)(size - n), " epochs, ranked by %s", dse_sweep_rank_what(p->rank));
    }
    if (n < size)
        n += snprintf(buf + n, (size_t)(size - n), "; conv %s", p->conv != DSE_ALGO_AUTO ? dse_cpu_conv_algo_str(p->conv)
                      : p->precision == DSE_CUDA_MATH_FP32 ? "auto (timed once per candidate)"
                      : "auto"); /* in bf16 the CPU's convs go by a rule, a GPU's by cuDNN's find */
    if (n < size && p->precision != DSE_CUDA_MATH_FP32) /* fp32 goes without saying; bf16 on CPUs and GPUs */
        n += snprintf(buf + n, (size_t)(size - n), "; precision %s%s", dse_cuda_math_str(p->precision),
                      p->precision == DSE_CUDA_MATH_BF16 ? "" : " (GPUs only)");
    if (n < size && p->nondeterministic)
        snprintf(buf + n, (size_t)(size - n), "; any cuDNN algorithm (GPUs only; not bit-identical)");
}

enum dse_status dse_plan_create(const char *dir, const struct dse_sweep_plan *p, const char *by, int *existed,
                                struct dse_err *err) {
    char text[2048], stamp[32], path[4096];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* none and sh: "halving" false or true in a dse-plan-1 file, as before ASHA. ASHA: "halving":
     * "asha" in a dse-plan-2 file, which a dse from before ASHA refuses (it would otherwise
     * read the plan as no halving, or as sh, and train the sweep another way). */
    const int asha = p->halving == DSE_SWEEP_HALVING_ASHA;
    int n = snprintf(text, sizeof text,
                     "{\n  \"format\": \"dse-plan-%d\",\n  \"epochs\": %d,\n  \"halving\": %s,\n  \"eta\": %d,\n"
                     "  \"min_epochs\": %d,\n  \"rank\": \"%s\",\n  \"rungs\": [", asha ? 2 : 1,
                     p->epochs, asha ? "\"asha\"" : p->halving ? "true" : "false", p->eta, p->min_epochs,
                     dse_sweep_rank_str(p->rank));
    for (int k = 0; k < p->n_rungs; k++) n += snprintf(text + n, sizeof text - (size_t)n, "%s%d", k ? ", " : "", p->rungs[k]);
    n += snprintf(text + n, sizeof text - (size_t)n, "],\n  \"conv\": \"%s\",\n  \"precision\": \"%s\",\n  \"algos\": \"%s\",\n"
                  "  \"created\": \"%s\",\n  \"by\": ",
                  p->conv == DSE_ALGO_AUTO ? "auto" : dse_cpu_conv_algo_str(p->conv), dse_cuda_math_str(p->precision),
                  p->nondeterministic ? "any" : "det", stamp);
    char *b = NULL;
    size_t bl = 0;
    FILE *f = open_memstream(&b, &bl);
    if (!f) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    fwrite(text, 1, (size_t)n, f);
    dse_json_write_str(f, by, strlen(by));
    fputs("\n}\n", f);
    if (fclose(f) != 0 || !b) {
        free(b);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    snprintf(path, sizeof path, "%s/plan.json", dir);
    enum dse_status st = dse_fs_create_atomic(path, b, bl, existed, err);
    free(b);
    return st;
}

enum dse_status dse_plan_read(const char *dir, struct dse_sweep_plan *p, int *missing, struct dse_err *err) {
    char path[4096], buf[64];
    struct dse_json_doc *doc = NULL;
    struct dse_err e = { 0 };
    snprintf(path, sizeof path, "%s/plan.json", dir);
    *missing = 0;
    memset(p, 0, sizeof *p);
    if (!may_exist(path)) {
        *missing = 1;
        return DSE_OK;
    }
    enum dse_status st = dse_json_load(path, &doc, &e);
    if (st) return dse_err_set(err, st, NULL, 0, "%s:%d: %s", path, e.line, e.msg);
    const struct dse_json *root = dse_json_root(doc), *v;
    dse_json_str_copy(dse_json_get(root, "format"), buf, sizeof buf);
    if (strcmp(buf, "dse-plan-1") != 0 && strcmp(buf, "dse-plan-2") != 0) {
        dse_json_free(doc);
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: \"format\" is not \"dse-plan-1\" or \"dse-plan-2\"",
                           path);
    }
    p->epochs = (int)dse_json_int_or(dse_json_get(root, "epochs"), 0);
    v = dse_json_get(root, "halving"); /* false, true (sh), or a name: "asha" */
    p->halving = v && v->type == DSE_JSON_BOOL && v->boolean ? DSE_SWEEP_HALVING_SH : DSE_SWEEP_HALVING_NONE;
    if (v && v->type == DSE_JSON_STRING) {
        int h = dse_word_index(DSE_SWEEP_HALVING_NAMES, v->str);
        if (h < 0) {
            dse_json_free(doc);
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: \"halving\": \"%s\" is not one of: %s", path,
                               v->str, DSE_SWEEP_HALVING_NAMES);
        }
        p->halving = (enum dse_sweep_halving)h;
    }
    p->eta = (int)dse_json_int_or(dse_json_get(root, "eta"), 3);
    p->min_epochs = (int)dse_json_int_or(dse_json_get(root, "min_epochs"), 1);
    dse_json_str_copy(dse_json_get(root, "rank"), buf, sizeof buf);
    int rank = dse_word_index(DSE_SWEEP_RANK_NAMES, buf);
    p->rank = rank >= 0 ? (enum dse_sweep_rank)rank : DSE_SWEEP_RANK_PARETO; /* absent: the default */
    dse_json_str_copy(dse_json_get(root, "conv"), buf, sizeof buf);
    p->conv = DSE_ALGO_AUTO;
    for (int a = 0; a < DSE_CPU_CONV_COUNT; a++)
        if (!strcmp(buf, dse_cpu_conv_algo_str(a))) p->conv = a;
    dse_json_str_copy(dse_json_get(root, "precision"), buf, sizeof buf); /* absent (plans made before GPUs): fp32 */
    if (buf[0] && dse_cuda_math_parse(buf, &p->precision, NULL)) {
        dse_json_free(doc);
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: \"precision\": \"%s\" is not fp32, tf32, fp16 or bf16", path, buf);
    }
    dse_json_str_copy(dse_json_get(root, "algos"), buf, sizeof buf); /* absent (plans made before it): det */
    if (buf[0] && strcmp(buf, "det") && strcmp(buf, "any")) {
        dse_json_free(doc);
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: \"algos\": \"%s\" is not det or any", path, buf);
    }
    p->nondeterministic = !strcmp(buf, "any");
    dse_json_free(doc);
    if (p->epochs < 1 || p->epochs > DSE_TRAIN_EPOCHS_MAX)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: \"epochs\" must be 1 to %d", path, DSE_TRAIN_EPOCHS_MAX);
    /* the rungs follow from the rest; recomputed rather than trusted */
    st = dse_sweep_plan_rungs(p, err);
    return st;
}

/* ---- rungs ------------------------------------------------------------------------------ */

void dse_rung_deinit(struct dse_rung *r) {
    free(r->promoted);
    free(r->stopped);
    free(r->promotable);
    free(r->gone);
    free(r->gone_by);
    memset(r, 0, sizeof *r);
}

int dse_rung_promoted(const struct dse_rung *r, const char *id) {
    for (int i = 0; i < r->n_promoted; i++)
        if (!strcmp(r->promoted[i], id)) return 1;
    return 0;
}

static enum dse_status ids_of(const struct dse_json *v, char (**out)[DSE_ID_SIZE], int *n, struct dse_err *err) {
    *out = NULL;
    *n = 0;
    if (!v || v->type != DSE_JSON_ARRAY) return DSE_OK;
    *out = calloc((size_t)(v->n ? v->n : 1), sizeof **out);
    if (!*out) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; i < v->n; i++)
        if (v->items[i].type == DSE_JSON_STRING) dse_strlcpy((*out)[(*n)++], v->items[i].str, DSE_ID_SIZE);
    return DSE_OK;
}

enum dse_status dse_rung_read(const char *dir, int k, struct dse_rung *r, int *missing, struct dse_err *err) {
    char path[4096];
    struct dse_json_doc *doc = NULL;
    struct dse_err e = { 0 };
    snprintf(path, sizeof path, "%s/rungs/rung-%d.json", dir, k);
    dse_rung_deinit(r);
    *missing = 0;
    if (!may_exist(path)) {
        *missing = 1;
        return DSE_OK;
    }
    enum dse_status st = dse_json_load(path, &doc, &e);
    if (st) return dse_err_set(err, st, NULL, 0, "%s:%d: %s", path, e.line, e.msg);
    const struct dse_json *root = dse_json_root(doc);
    r->epoch = (int)dse_json_int_or(dse_json_get(root, "epoch"), 0);
    r->n_out = (int)dse_json_int_or(dse_json_get(root, "out_count"), 0);
    st = ids_of(dse_json_get(root, "promoted"), &r->promoted, &r->n_promoted, err);
    if (!st) st = ids_of(dse_json_get(root, "stopped"), &r->stopped, &r->n_stopped, err);
    dse_json_free(doc);
    if (st) {
        dse_rung_deinit(r);
        return st;
    }
    r->decided = 1;
    return DSE_OK;
}


/* ---- progress ---------------------------------------------------------------------------- */

enum dse_action dse_sweep_next(const struct dse_rec *r, const struct dse_sweep_plan *p, const struct dse_rung *rungs,
                               int *target, int *rung) {
    *target = p->epochs;
    *rung = -1;
    if (dse_rec_final(r)) return DSE_ACT_NONE;
    int e = r->n_epochs;
    const int asha = p->halving == DSE_SWEEP_HALVING_ASHA;
    char arch[DSE_ID_SIZE]; /* with replicates, its architecture's fate */
    dse_asha_arch(r->id, arch);
    for (int k = 0; p->halving && k < p->n_rungs; k++) {
        if (e < p->rungs[k]) {
            *target = p->rungs[k];
            if (asha && dse_asha_gone(rungs, arch)) return *rung = k, DSE_ACT_STOP; /* not worth the epochs */
            return DSE_ACT_TRAIN;
        }
        if (asha) { /* sweep/asha.c: promoted, promotable, or paused here */
            if (dse_rung_promoted(&rungs[k], arch)) continue;
            *rung = k;
            if (dse_asha_gone(rungs, arch)) return DSE_ACT_STOP;
            for (int j = 0; j < rungs[k].n_promotable; j++)
                if (!strcmp(rungs[k].promotable[j], arch)) {
                    *target = k + 1 < p->n_rungs ? p->rungs[k + 1] : p->epochs;
                    return DSE_ACT_PROMOTE;
                }
            return rungs[k].decided ? DSE_ACT_STOP : DSE_ACT_WAIT;
        }
        if (!rungs[k].decided) {
            *rung = k;
            return DSE_ACT_WAIT;
        }
        if (!dse_rung_promoted(&rungs[k], r->id)) {
            *rung = k;
            return DSE_ACT_STOP;
        }
    }
    return DSE_ACT_TRAIN; /* to R; with nothing left to train the worker only finishes it */
}

void dse_tally_make(struct dse_tally *t, const struct dse_rec *recs, int n, const struct dse_sweep_plan *p,
                    const struct dse_rung *rungs, const int *running) {
    memset(t, 0, sizeof *t);
    t->n = n;
    int unpruned = 0, left_n = 0, no_flops = 0;
    double full_known = 0, left_flops = 0, left_fe = 0;
    int full_known_n = 0, archs = 0;
    for (int i = 0; i < n; i++) {
        const struct dse_rec *r = &recs[i];
        t->by_status[r->status]++;
        if (r->status == DSE_REC_PRUNED) {
            t->pruned++;
            continue;
        }
        unpruned++;
        archs += r->replicate == 0; /* replicates: asha's rungs count architectures */
        if (r->status == DSE_REC_STOPPED && r->stopped_rung >= 0 && r->stopped_rung < DSE_SWEEP_RUNGS_MAX)
            t->stopped_at[r->stopped_rung]++;
        int tgt, rg;
        int live = running && running[i] && !dse_rec_final(r);
        if (live) t->running++;
        else if (p && !dse_rec_final(r) && dse_sweep_next(r, p, rungs, &tgt, &rg) == DSE_ACT_WAIT) {
            t->waiting++;
            if (rg >= 0 && rg < DSE_SWEEP_RUNGS_MAX) t->waiting_at[rg]++;
        }
        t->epochs_done += r->n_epochs;
        double s = 0;
        int timed = 0;
        for (int e = 0; e < r->n_epochs; e++)
            if (r->ep[e].seconds > 0) s += r->ep[e].seconds, timed++;
        t->seconds += s;
        t->timed += timed;
        no_flops |= r->flops <= 0;
        t->flop_epochs_timed += (double)timed * (double)r->flops;
        if (!dse_rec_final(r)) {
            left_n++, left_flops += (double)r->flops;
            if (p && p->epochs > r->n_epochs) left_fe += (double)r->flops * (p->epochs - r->n_epochs);
        }
        if (timed && p) {
            full_known += s / timed * p->epochs;
            full_known_n++;
        }
    }
    if (!p) return;
    t->epochs_full = (int64_t)unpruned * p->epochs;
    double mean = t->timed ? t->seconds / t->timed : 0;
    t->seconds_full = full_known + (double)(unpruned - full_known_n) * mean * p->epochs;
    if (!p->halving) {
        t->epochs_planned = (double)t->epochs_full;
    } else {
        /* in architectures (a rung's unit), each of per records: 1 without replicates */
        const double per = archs > 0 ? (double)unpruned / archs : 1;
        double cnt = archs > 0 ? archs : unpruned, total = 0;
        int prev = 0;
        for (int k = 0; k < p->n_rungs; k++) {
            total += cnt * per * (p->rungs[k] - prev);
            prev = p->rungs[k];
            cnt = rungs && rungs[k].decided ? rungs[k].n_promoted : dse_sweep_keep((int)cnt, p->eta);
        }
        total += cnt * per * (p->epochs - prev);
        t->epochs_planned = total;
    }
    /* the work left: exact without halving; with it, the expected epochs left at the mean FLOPs
     * of the candidates not final (which ones a rung keeps is not known yet) */
    double epochs_left = t->epochs_planned - (double)t->epochs_done;
    if (p->halving) left_fe = left_n && epochs_left > 0 ? epochs_left * left_flops / left_n : 0;
    t->flop_epochs_left = no_flops ? 0 : left_fe;
}

double dse_tally_eta(const struct dse_tally *t) {
    int final = 0;
    for (int k = 0; k < DSE_REC_COUNT; k++)
        if (k != DSE_REC_PENDING) final += t->by_status[k];
    if (final == t->n) return 0;
    if (!t->timed) return -1;
    const double workers = t->running > 1 ? t->running : 1;
    if (t->flop_epochs_left > 0 && t->flop_epochs_timed > 0) /* small and large candidates weigh as they cost */
        return t->flop_epochs_left * (t->seconds / t->flop_epochs_timed) / workers;
    double left = t->epochs_planned - (double)t->epochs_done;
    if (left < 1) left = 1;
    return left * (t->seconds / t->timed) / workers;
}

void dse_fmt_duration(char *buf, int size, double s) {
    if (s < 0) snprintf(buf, (size_t)size, "unknown");
    else if (s < 10) snprintf(buf, (size_t)size, "%.1f s", s);
    else if (s < 60) snprintf(buf, (size_t)size, "%.0f s", s);
    else if (s < 3600) snprintf(buf, (size_t)size, "%dm %02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(buf, (size_t)size, "%dh %02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* ---- GPU placement ------------------------------------------------------------------------ */

int64_t dse_sweep_gpu_need(int64_t estimate_bytes, int oom_streak) {
    if (estimate_bytes < 0) estimate_bytes = 0;
    if (oom_streak < 0) oom_streak = 0;
    const double pct = 100.0 + DSE_SWEEP_GPU_MARGIN_PCT + 50.0 * oom_streak;
    const double need = (double)estimate_bytes * pct / 100.0 + (double)DSE_SWEEP_GPU_MARGIN_BYTES;
    return need >= 9.0e18 ? INT64_MAX : (int64_t)need;
}

enum dse_gpu_fit dse_sweep_gpu_fit(uint64_t free_bytes, uint64_t total_bytes, uint64_t held_bytes,
                                   int64_t need_bytes) {
    const uint64_t need = need_bytes > 0 ? (uint64_t)need_bytes : 0;
    if (need > total_bytes) return DSE_GPU_NEVER;
    const uint64_t avail = free_bytes > held_bytes ? free_bytes - held_bytes : 0;
    return need <= avail ? DSE_GPU_FITS : DSE_GPU_WAIT;
}
