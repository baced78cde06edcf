/* lease.c: leases on sweep candidates (lease.h; the protocol and why it is safe:
 * docs/sweep-dir.md, "Leases"). Files are written with base/fs.c: created with link()
 * (create-only, atomic on NFS too) or replaced by rename; never written in place. */
#include "sweep/lease.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/pcg32.h"
#include "sweep/json_read.h"

double dse_lease_wall(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double dse_lease_mono(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void dse_lease_me_init(struct dse_lease_me *me) {
    memset(me, 0, sizeof *me);
    if (gethostname(me->host, sizeof me->host - 1) != 0) strcpy(me->host, "unknown");
    for (char *p = me->host; *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) *p = '_';
    char link[64];
    ssize_t n = readlink("/proc/self/ns/pid", link, sizeof link - 1);
    if (n > 0) {
        link[n] = '\0';
        const char *b = strchr(link, '[');
        if (b) {
            int k = 0;
            for (b++; *b >= '0' && *b <= '9' && k < (int)sizeof me->pidns - 1; b++) me->pidns[k++] = *b;
        }
    }
    me->pid = (long)getpid();
    /* 128 random bits; the clock and pid mixed in in case /dev/urandom is missing */
    uint64_t r[2] = { 0, 0 };
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, r, sizeof r) != (ssize_t)sizeof r) r[0] = r[1] = 0;
        close(fd);
    }
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    r[0] ^= (uint64_t)t.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)t.tv_sec;
    r[1] ^= (uint64_t)me->pid * 0xff51afd7ed558ccdULL ^ dse_fnv1a64(DSE_FNV64_INIT, me->host, strlen(me->host));
    snprintf(me->token, sizeof me->token, "%016llx%016llx", (unsigned long long)r[0], (unsigned long long)r[1]);
}

static void worker_name(const char *host, long pid, int thread, char *buf, int size) {
    if (thread > 0) snprintf(buf, (size_t)size, "%s:%ld.%d", host, pid, thread);
    else snprintf(buf, (size_t)size, "%s:%ld", host, pid);
}

void dse_lease_me_name(const struct dse_lease_me *me, char *buf, int size) {
    worker_name(me->host, me->pid, me->thread, buf, size);
}

void dse_lease_holder_name(const struct dse_lease *l, char *buf, int size) {
    worker_name(l->host, l->pid, l->thread, buf, size);
}

void dse_lease_path(const char *dir, const char *id, int64_t gen, char *buf, int size) {
    snprintf(buf, (size_t)size, "%s/leases/%s.%lld", dir, id, (long long)gen);
}

static int lease_text(const struct dse_lease *l, char *buf, int size) {
    return snprintf(buf, (size_t)size,
                    "{\"id\": \"%s\", \"gen\": %lld, \"token\": \"%s\", \"host\": \"%s\", \"pidns\": \"%s\", "
                    "\"pid\": %ld, \"thread\": %d, \"beat\": %lld, \"renewed\": %.3f, \"ttl_s\": %.3f, \"released\": %s, "
                    "\"crashes\": %d, \"deaths\": %d, \"epochs_at_claim\": %d, \"epoch\": %d, \"iter\": %d, \"iters\": %d, "
                    "\"epoch_s\": %.3f, \"device\": \"%s\", \"saved_at_claim\": %lld, \"cmd\": \"%s\"}\n",
                    l->id, (long long)l->gen, l->token, l->host, l->pidns, l->pid, l->thread, (long long)l->beat,
                    l->renewed, l->ttl_s, l->released ? "true" : "false", l->crashes, l->deaths, l->epochs_at_claim,
                    l->epoch, l->iter, l->iters, l->epoch_s >= 0 && l->epoch_s < 1e12 ? l->epoch_s : 0.0,
                    l->device, (long long)l->saved_at_claim, l->cmd);
}

static void copy_str(const struct dse_json *root, const char *key, char *out, int size) {
    const struct dse_json *v = dse_json_get(root, key);
    out[0] = '\0';
    if (v && v->type == DSE_JSON_STRING) dse_strlcpy(out, v->str, size);
}

static double get_num(const struct dse_json *root, const char *key, double dflt) {
    const struct dse_json *v = dse_json_get(root, key);
    return v && v->type == DSE_JSON_NUMBER ? v->number : dflt;
}

/* An integer field, 0 if it is not a number in [lo, hi] (a cast of a number past the
 * type's range would be undefined). */
static int64_t get_int(const struct dse_json *root, const char *key, int64_t lo, int64_t hi) {
    double v = get_num(root, key, 0);
    return v >= (double)lo && v <= (double)hi ? (int64_t)v : 0;
}

enum dse_status dse_lease_read(const char *dir, const char *id, int64_t gen, struct dse_lease *l,
                               int *missing, struct dse_err *err) {
    char path[4096], *text;
    size_t len;
    struct dse_json_doc *doc = NULL;
    dse_lease_path(dir, id, gen, path, sizeof path);
    memset(l, 0, sizeof *l);
    if (missing) *missing = 0;
    enum dse_status st = dse_fs_read(path, &text, &len, err);
    if (st) {
        if (missing) *missing = errno == ENOENT;
        return st;
    }
    struct dse_err perr = { 0 };
    st = dse_json_parse(text, len, path, &doc, &perr);
    free(text);
    if (st) return dse_err_set(err, st, NULL, 0, "%s:%d: not a lease file: %s", path, perr.line, perr.msg);
    const struct dse_json *root = dse_json_root(doc);
    copy_str(root, "id", l->id, sizeof l->id);
    copy_str(root, "token", l->token, sizeof l->token);
    copy_str(root, "host", l->host, sizeof l->host);
    copy_str(root, "pidns", l->pidns, sizeof l->pidns);
    l->gen = get_int(root, "gen", 1, DSE_LEASE_GEN_MAX);
    l->pid = (long)get_int(root, "pid", 0, INT32_MAX);
    l->thread = (int)get_int(root, "thread", 0, INT32_MAX);
    l->beat = get_int(root, "beat", 0, DSE_LEASE_GEN_MAX);
    l->renewed = get_num(root, "renewed", 0);
    l->ttl_s = get_num(root, "ttl_s", 60);
    const struct dse_json *rel = dse_json_get(root, "released");
    l->released = rel && rel->type == DSE_JSON_BOOL && rel->boolean;
    l->crashes = (int)get_int(root, "crashes", 0, INT32_MAX);
    l->deaths = (int)get_int(root, "deaths", 0, INT32_MAX);
    l->epochs_at_claim = (int)get_int(root, "epochs_at_claim", 0, INT32_MAX);
    l->epoch = (int)get_int(root, "epoch", 0, INT32_MAX);
    l->iter = (int)get_int(root, "iter", 0, INT32_MAX);
    l->iters = (int)get_int(root, "iters", 0, INT32_MAX);
    l->epoch_s = get_num(root, "epoch_s", 0);
    copy_str(root, "device", l->device, sizeof l->device);
    l->saved_at_claim = get_int(root, "saved_at_claim", 0, DSE_LEASE_GEN_MAX);
    copy_str(root, "cmd", l->cmd, sizeof l->cmd);
    dse_json_free(doc);
    if (l->gen != gen || strcmp(l->id, id) != 0 || !l->token[0] || !(l->ttl_s > 0 && l->ttl_s <= DSE_LEASE_TTL_MAX))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: not a lease file of %s, gen %lld", path, id,
                           (long long)gen);
    return DSE_OK;
}

/* "<id>.<gen>" -> id and gen; 0 if the name is not a lease file's (temporary files
 * start with '.'). */
static int parse_name(const char *name, char *id, int size, int64_t *gen) {
    const char *dot = strrchr(name, '.');
    if (name[0] == '.' || !dot || dot == name || dot - name >= size || !dot[1]) return 0;
    char *end;
    errno = 0;
    long long g = strtoll(dot + 1, &end, 10);
    if (errno || *end || g < 1 || g > DSE_LEASE_GEN_MAX) return 0;
    memcpy(id, name, (size_t)(dot - name));
    id[dot - name] = '\0';
    *gen = g;
    return 1;
}

struct max_arg {
    const char *id;
    int64_t     max;
};

static void keep_max(void *arg, const char *id, int64_t gen) {
    struct max_arg *m = arg;
    if (!strcmp(id, m->id) && gen > m->max) m->max = gen;
}

/* One readdir; fn sees every (id, gen) file, not only the highest. */
static enum dse_status scan_all(const char *dir, void (*fn)(void *arg, const char *id, int64_t gen), void *arg,
                                struct dse_err *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s/leases", dir);
    DIR *d = opendir(path);
    if (!d) {
        if (errno == ENOENT) return DSE_OK;
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: cannot open: %s", path, strerror(errno));
    }
    struct dirent *e;
    char id[DSE_LEASE_ID_MAX];
    int64_t gen;
    while ((e = readdir(d)))
        if (parse_name(e->d_name, id, sizeof id, &gen)) fn(arg, id, gen);
    closedir(d);
    return DSE_OK;
}

struct scan_entry {
    char    id[DSE_LEASE_ID_MAX];
    int64_t gen;
};

static int entry_cmp(const void *a, const void *b) {
    return strcmp(((const struct scan_entry *)a)->id, ((const struct scan_entry *)b)->id);
}

/* Highest gen per id: names are collected, sorted, and reduced, so the cost is
 * O(files log files) however many candidates the sweep has. */
struct sorted_acc {
    struct scan_entry *e;
    int                n, cap, oom;
};

static void sorted_add(void *arg, const char *id, int64_t gen) {
    struct sorted_acc *a = arg;
    if (a->n == a->cap) {
        int cap = a->cap ? 2 * a->cap : 256;
        struct scan_entry *p = realloc(a->e, sizeof *p * (size_t)cap);
        if (!p) {
            a->oom = 1;
            return;
        }
        a->e = p, a->cap = cap;
    }
    dse_strlcpy(a->e[a->n].id, id, sizeof a->e[a->n].id);
    a->e[a->n++].gen = gen;
}

enum dse_status dse_lease_scan(const char *dir, void (*fn)(void *arg, const char *id, int64_t gen),
                               void *arg, struct dse_err *err) {
    struct sorted_acc a = { 0 };
    enum dse_status st = scan_all(dir, sorted_add, &a, err);
    if (!st && a.oom) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    if (!st && a.n) {
        qsort(a.e, (size_t)a.n, sizeof *a.e, entry_cmp);
        for (int i = 0; i < a.n; ) {
            int j = i;
            int64_t max = a.e[i].gen;
            while (j < a.n && !strcmp(a.e[j].id, a.e[i].id)) {
                if (a.e[j].gen > max) max = a.e[j].gen;
                j++;
            }
            fn(arg, a.e[i].id, max);
            i = j;
        }
    }
    free(a.e);
    return st;
}

static enum dse_status write_replace(const char *dir, const struct dse_lease *l, struct dse_err *err) {
    char path[4096], text[1024];
    dse_lease_path(dir, l->id, l->gen, path, sizeof path);
    int n = lease_text(l, text, sizeof text);
    return dse_fs_write_atomic(path, text, (size_t)n, err);
}

enum dse_status dse_lease_claim(const char *dir, const char *id, int64_t cur_gen, const struct dse_lease_me *me,
                                double ttl_s, const struct dse_lease_count *count, struct dse_lease *out, int *won,
                                struct dse_err *err) {
    char path[4096], text[1024];
    struct dse_lease l;
    enum dse_status st;
    int existed;
    *won = 0;
    if (strlen(id) >= sizeof l.id) return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "candidate id too long");
    memset(&l, 0, sizeof l);
    dse_strlcpy(l.id, id, sizeof l.id);
    l.gen = cur_gen + 1;
    memcpy(l.token, me->token, sizeof l.token);
    memcpy(l.host, me->host, sizeof l.host);
    memcpy(l.pidns, me->pidns, sizeof l.pidns);
    l.pid = me->pid;
    l.thread = me->thread;
    l.renewed = dse_lease_wall();
    l.ttl_s = ttl_s;
    if (count) {
        l.crashes = count->crashes, l.deaths = count->deaths;
        l.epochs_at_claim = count->epochs, l.saved_at_claim = count->saved;
    }
    memcpy(l.cmd, me->cmd, sizeof l.cmd);
    snprintf(path, sizeof path, "%s/leases", dir);
    if ((st = dse_fs_mkdirs(path, err))) return st;
    dse_lease_path(dir, id, l.gen, path, sizeof path);
    int n = lease_text(&l, text, sizeof text);
    if ((st = dse_fs_create_atomic(path, text, (size_t)n, &existed, err))) return st;
    if (existed) return DSE_OK; /* another worker claimed it first */
    /* A stale view of the directory could name a gen that later claims have already
     * passed (and whose files were removed): make sure no higher gen exists. */
    struct max_arg m = { .id = id, .max = 0 };
    if ((st = scan_all(dir, keep_max, &m, err))) return st;
    if (m.max > l.gen) {
        unlink(path);
        return DSE_OK;
    }
    /* Older gens are no longer needed; gen - 1 is kept, so that a holder of gen - 2 or
     * older finds its own file gone, and a holder of gen - 1 finds gen (docs). */
    for (int64_t g = l.gen - 2; g >= 1 && g >= l.gen - 4; g--) {
        dse_lease_path(dir, id, g, path, sizeof path);
        unlink(path);
    }
    *out = l;
    *won = 1;
    return DSE_OK;
}

enum dse_status dse_lease_check(const char *dir, const struct dse_lease *l, int *held, struct dse_err *err) {
    struct dse_lease now;
    int missing;
    char path[4096];
    struct stat sb;
    *held = 0;
    enum dse_status st = dse_lease_read(dir, l->id, l->gen, &now, &missing, err);
    if (st) return missing ? DSE_OK : st;
    if (strcmp(now.token, l->token) != 0) return DSE_OK;
    dse_lease_path(dir, l->id, l->gen + 1, path, sizeof path);
    if (stat(path, &sb) == 0) return DSE_OK;
    if (errno != ENOENT) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: cannot stat: %s", path, strerror(errno));
    *held = 1;
    return DSE_OK;
}

enum dse_status dse_lease_renew(const char *dir, struct dse_lease *l, int *held, struct dse_err *err) {
    enum dse_status st = dse_lease_check(dir, l, held, err);
    if (st || !*held) return st;
    struct dse_lease next = *l;
    next.beat++;
    next.renewed = dse_lease_wall();
    if ((st = write_replace(dir, &next, err))) return st;
    *l = next;
    return DSE_OK;
}

enum dse_status dse_lease_release(const char *dir, struct dse_lease *l, struct dse_err *err) {
    int held;
    enum dse_status st = dse_lease_check(dir, l, &held, err);
    if (st || !held) return st;
    struct dse_lease next = *l;
    next.beat++;
    next.renewed = dse_lease_wall();
    next.released = 1;
    next.crashes = next.deaths = 0;
    if ((st = write_replace(dir, &next, err))) return st;
    *l = next;
    return DSE_OK;
}

void dse_lease_crashes(const struct dse_lease *l, const struct dse_lease_me *me, struct dse_lease_count *n) {
    const int progress = n->epochs > l->epochs_at_claim ||
                         (n->epochs == l->epochs_at_claim && n->saved > l->saved_at_claim);
    n->deaths = progress ? 1 : l->deaths + 1;
    n->crashes = strcmp(l->cmd, me->cmd) != 0 ? 0 : progress ? 1 : l->crashes + 1;
}

enum dse_lease_verdict dse_lease_verdict(const struct dse_lease_count *n, int max_crashes) {
    if (n->crashes >= max_crashes) return DSE_LEASE_FAIL_CRASHES;
    if (n->deaths >= (int64_t)DSE_LEASE_DEATHS_PER_CRASH * max_crashes) return DSE_LEASE_FAIL_DEATHS;
    return n->deaths >= max_crashes ? DSE_LEASE_LAST : DSE_LEASE_TRAIN;
}

int dse_lease_holder_dead(const struct dse_lease *l, const struct dse_lease_me *me) {
    if (!me->pidns[0] || strcmp(l->host, me->host) != 0 || strcmp(l->pidns, me->pidns) != 0 || l->pid <= 0)
        return 0;
    if (l->pid == me->pid) return 0;
    return kill((pid_t)l->pid, 0) != 0 && errno == ESRCH;
}

int dse_lease_free(const struct dse_lease *l, struct dse_lease_obs *obs, const struct dse_lease_me *me,
                   double now_wall, double now_mono, const char **why) {
    *why = "";
    if (l->released) return 1;
    if (dse_lease_holder_dead(l, me)) return *why = "its worker is gone", 1;
    if (now_wall > l->renewed + 2 * l->ttl_s) return *why = "its lease expired", 1;
    if (obs->gen != l->gen || obs->beat != l->beat) {
        obs->gen = l->gen, obs->beat = l->beat, obs->since = now_mono;
        return 0;
    }
    if (now_mono - obs->since > l->ttl_s) return *why = "its lease was not renewed for a whole ttl", 1;
    return 0;
}

int dse_lease_free_unreadable(int64_t gen, struct dse_lease_obs *obs, double ttl_s, double now_mono,
                              const char **why) {
    *why = "";
    if (obs->gen != gen || obs->beat != INT64_MIN) { /* beat INT64_MIN: seen unreadable */
        obs->gen = gen, obs->beat = INT64_MIN, obs->since = now_mono;
        return 0;
    }
    if (now_mono - obs->since > ttl_s) return *why = "its lease file was unreadable for a whole ttl", 1;
    return 0;
}
