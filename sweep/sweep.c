/* sweep.c: analytic sweeps. Each candidate: metaparameters -> network (metaparams/) ->
 * closed-form costs (analysis/) -> constraints -> one JSON file written by atomic rename
 * (base/fs.c). The layout and file format are in docs/sweep-dir.md. */
#include "sweep/sweep.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/analysis.h"
#include "base/fs.h"
#include "sweep/json_read.h"
#include "sweep/prefilter.h"
#include "sweep/search.h"

#define MAX_CANDIDATES 10000000ULL /* files in one directory; sample beyond this */

/* The string member key of a manifest into out (left as it is if absent, not a string or
 * too long). */
static void manifest_str(const struct dse_json *root, const char *key, char *out, int size) {
    const struct dse_json *v = dse_json_get(root, key);
    if (v && v->type == DSE_JSON_STRING && v->len < (size_t)size) memcpy(out, v->str, v->len + 1);
}

/* The manifest and the copy of the space file are created once. A directory that
 * already holds a sweep must hold this space's (same file hash), else it is refused;
 * two processes starting the same sweep at once both go on, two different ones cannot
 * mix (only one of them can create sweep.json). */
static enum dse_status claim_dir(const struct dse_space *s, const char *dir, uint64_t n,
                                 struct dse_err *err) {
    char path[4096], buf[10000], varied[512] = "", stamp[32], name[300], file[8300], hash[32] = "", want[32];
    int len = 0, existed;
    enum dse_status st;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    for (int k = 0; k < DSE_AX_COUNT; k++)
        if (s->axes[k].n > 1)
            len += snprintf(varied + len, sizeof varied - (size_t)len, "%s\"%s\"", len ? ", " : "",
                            dse_axis_name((enum dse_axis_key)k));
    dse_json_str(name, sizeof name, s->name, strlen(s->name));
    dse_json_str(file, sizeof file, s->path, strlen(s->path));
    snprintf(want, sizeof want, "%016llx", (unsigned long long)s->hash);
    char strategy[64] = "", have_strategy[32] = "grid"; /* grid: no key, so grid sweeps' manifests stay as they were */
    if (s->search.strategy != DSE_SEARCH_GRID)
        snprintf(strategy, sizeof strategy, "  \"strategy\": \"%s\",\n", dse_strategy_str(s->search.strategy));
    snprintf(buf, sizeof buf,
             "{\n  \"format\": \"dse-sweep-1\",\n  \"space\": %s,\n  \"space_file\": %s,\n"
             "  \"space_hash\": \"%s\",\n  \"candidates\": %llu,\n  \"varied\": [%s],\n"
             "%s  \"created\": \"%s\",\n  \"dse_version\": \"" DSE_VERSION "\"\n}\n",
             name, file, want, (unsigned long long)n, varied, strategy, stamp);
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    if ((st = dse_fs_create_atomic(path, buf, strlen(buf), &existed, err))) return st;
    if (existed) {
        char *text;
        size_t tlen;
        struct dse_json_doc *doc = NULL;
        if ((st = dse_fs_read(path, &text, &tlen, err))) return st;
        if (!dse_json_parse(text, tlen, path, &doc, NULL)) { /* one that does not parse holds no hash: refused below */
            manifest_str(dse_json_root(doc), "space_hash", hash, sizeof hash);
            manifest_str(dse_json_root(doc), "strategy", have_strategy, sizeof have_strategy);
        }
        dse_json_free(doc);
        free(text);
        int ok = !strcmp(hash, want);
        if (!ok)
            return dse_err_set(err, DSE_ERR_CONFIG, dir, 0,
                               "holds a sweep of another space file (space_hash %s, this file's is %s); "
                               "give another --out directory", hash[0] ? hash : "missing", want);
        if (strcmp(have_strategy, dse_strategy_str(s->search.strategy)))
            return dse_err_set(err, DSE_ERR_CONFIG, dir, 0, "holds a sweep with strategy \"%s\", and this command "
                               "asks for \"%s\"; give the same strategy (or --strategy %s), or another --out directory",
                               have_strategy, dse_strategy_str(s->search.strategy), have_strategy);
    }
    char *copy;
    size_t clen;
    if ((st = dse_fs_read(s->path, &copy, &clen, err))) return st;
    snprintf(path, sizeof path, "%s/space.cfg", dir);
    st = dse_fs_create_atomic(path, copy, clen, &existed, err);
    free(copy);
    return st;
}

static int cmp_id(const void *a, const void *b) {
    return strcmp((const char *)a, (const char *)b);
}

enum dse_status dse_sweep_analytic(const struct dse_space *s, const char *dir, FILE *progress,
                                   struct dse_sweep_summary *sum, struct dse_err *err) {
    enum dse_status st;
    uint64_t *idx = NULL, n = 0;
    char path[4096], text[4096], (*ids)[DSE_ID_SIZE] = NULL;
    struct dse_net net;
    struct dse_cost_layer *costs = NULL;
    size_t cap = 0;
    memset(sum, 0, sizeof *sum);
    if (dse_strategy_logged(s->search.strategy)) { /* the proposals so far: the initial population or design at first */
        int n_prop = 0;
        snprintf(path, sizeof path, "%s/candidates", dir);
        if ((st = dse_fs_mkdirs(path, err)) || (st = claim_dir(s, dir, (uint64_t)dse_search_budget_candidates(s), err)) ||
            (st = dse_search_start(s, dir, &n_prop, err)))
            return st;
        sum->candidates = sum->kept = (uint64_t)n_prop * (uint64_t)s->replicates; /* a file per replicate */
        return DSE_OK;
    }
    dse_net_init(&net, s->name, 1, 1, 1);

    if ((st = dse_space_indices(s, MAX_CANDIDATES, &idx, &n, err))) return st;
    /* Before writing anything: every candidate builds, and no two share an id (a 64-bit
     * hash: a clash is astronomically unlikely, but it must never be an overwrite). */
    ids = malloc(sizeof *ids * (size_t)(n ? n : 1));
    if (!ids) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    for (uint64_t i = 0; i < n; i++) {
        struct dse_mp mp;
        dse_space_candidate(s, idx[i], &mp);
        if ((st = dse_space_build(s, &mp, &net, err))) goto done;
        dse_space_id(&mp, ids[i]);
    }
    qsort(ids, (size_t)n, sizeof *ids, cmp_id);
    for (uint64_t i = 1; i < n; i++)
        if (!strcmp(ids[i], ids[i - 1])) {
            st = dse_err_set(err, DSE_ERR_INTERNAL, s->path, 0, "two candidates hash to the id %s; "
                             "please report this", ids[i]);
            goto done;
        }
    snprintf(path, sizeof path, "%s/candidates", dir);
    if ((st = dse_fs_mkdirs(path, err)) || (st = claim_dir(s, dir, n, err))) goto done;

    for (uint64_t i = 0; i < n; i++) {
        struct dse_mp mp;
        struct dse_cost_totals one, train;
        char id[DSE_ID_SIZE], why[200];
        const char *pruned_by = NULL;
        const struct dse_constraints *c = &s->cons;
        dse_space_candidate(s, idx[i], &mp);
        if ((st = dse_sweep_cost_candidate(s, &mp, &net, &costs, &cap, &one, &train, why, sizeof why, &pruned_by, err)))
            goto done;
        const int64_t est = s->compress_line ? dse_cost_compressed_est(&net, costs, s->compress.density,
                                                                       s->compress.bits, NULL) : -1;
        /* One record per replicate (each trains with its own seed): a replicate is a
         * candidate to the workers, its leases and its checkpoints. */
        for (int r = 0; r < s->replicates; r++) {
            dse_space_rep_id(&mp, r, id);
            snprintf(path, sizeof path, "%s/candidates/%s.json", dir, id);
            /* Never replace a candidate file: its analytic part depends only on the
             * metaparameters (and this space), and training may have added results. */
            int len = dse_sweep_candidate_text(text, sizeof text, s, id, idx[i], r, &mp, &one, train.mem_train_bytes,
                                     c->train_mem_batch, est, pruned_by), existed;
            if (len < 0) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            else if (len >= (int)sizeof text) st = dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "candidate text too long");
            if (st || (st = dse_fs_create_atomic(path, text, (size_t)len, &existed, err))) goto done;
            sum->skipped += existed;
            sum->candidates++;
            if (pruned_by) sum->pruned++;
            else sum->kept++;
        }
        if (progress && (i + 1 == n || (i + 1) % 1000 == 0))
            fprintf(progress, "\rdse sweep: %llu/%llu candidates", (unsigned long long)(i + 1),
                    (unsigned long long)n);
    }
    if (progress) fputc('\n', progress);
done:
    free(idx);
    free(ids);
    free(costs);
    dse_net_deinit(&net);
    return st;
}
