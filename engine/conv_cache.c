/* conv_cache.c: the CPU's conv strategy choices in files (issue #31).
 *
 * With --conv auto every conv shape's strategy is timed, and the strategies differ in the
 * last bits, so a choice made anew could change a run's results. Choices are therefore kept:
 * a run's own file (--conv-cache FILE, a sweep candidate's conv.txt) pins the choices its
 * results were computed with, and each machine keeps one cache per CPU, BLAS kernels and
 * thread count (dse_conv_cache_machine) that later runs and sweeps take their choices from
 * before timing anything, so the same command on the same machine repeats its bits.
 *
 * Format: a comment line, then one line per shape: 16 key integers (engine.h's
 * dse_cpu_conv_choice), the forward and the backward strategy. */
#include "engine/train.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/fs.h"

static struct dse_cpu_conv_choice *find(struct dse_cpu_conv_choice *v, int n, const int key[16]) {
    for (int i = 0; i < n; i++)
        if (!memcmp(v[i].key, key, 16 * sizeof(int))) return &v[i];
    return NULL;
}

static int grow(struct dse_cpu_conv_choice **v, int *cap, int n) {
    if (n < *cap) return 0;
    int c = *cap ? 2 * *cap : 16;
    struct dse_cpu_conv_choice *p = realloc(*v, (size_t)c * sizeof *p);
    if (!p) return -1;
    *v = p, *cap = c;
    return 0;
}

/* path's choices added to v (those whose shape v lacks), marked spare; a missing file adds
 * nothing; a line that does not parse is an error, or (lenient: a cache many processes
 * share, which the next merge writes anew) skipped. */
static enum dse_status read_into(const char *path, int spare, int lenient, struct dse_cpu_conv_choice **v, int *n,
                                 int *cap, struct dse_err *err) {
    char *text;
    size_t len;
    if (access(path, F_OK)) return DSE_OK; /* nothing chosen yet */
    enum dse_status st = dse_fs_read(path, &text, &len, err);
    if (st) return st;
    int line = 0;
    for (char *p = text; p && *p;) {
        char *end = strchr(p, '\n');
        if (end) *end = '\0';
        line++;
        if (*p && *p != '#') {
            struct dse_cpu_conv_choice c;
            memset(&c, 0, sizeof c);
            int used = 0, k = 0;
            for (; k < 16 && sscanf(p, "%d%n", &c.key[k], &used) == 1; k++) p += used;
            if (k < 16 || sscanf(p, "%d %d", &c.algo_fwd, &c.algo_bwd) != 2 || c.algo_fwd < DSE_ALGO_AUTO ||
                c.algo_fwd >= DSE_CPU_CONV_COUNT || c.algo_bwd < DSE_ALGO_AUTO || c.algo_bwd >= DSE_CPU_CONV_COUNT) {
                if (lenient) {
                    p = end ? end + 1 : NULL;
                    continue;
                }
                free(text);
                return dse_err_set(err, DSE_ERR_IO, path, line, "not a conv strategy line; expected 16 "
                                   "integers and two strategy numbers (delete the file to re-time)");
            }
            c.spare = spare;
            if (!find(*v, *n, c.key)) {
                if (grow(v, cap, *n)) {
                    free(text);
                    return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
                }
                (*v)[(*n)++] = c;
            }
        }
        p = end ? end + 1 : NULL;
    }
    free(text);
    return DSE_OK;
}

/* v's chosen, not spare, entries into path, atomically. */
static enum dse_status write_all(const struct dse_cpu_conv_choice *v, int n, const char *path, struct dse_err *err) {
    size_t cap = 64 + (size_t)n * 256, len = 0;
    char *buf = malloc(cap);
    if (!buf) return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
    len += (size_t)snprintf(buf, cap, "# dse conv strategy choices: 16 shape ints, forward, backward\n");
    for (int i = 0; i < n; i++) {
        const struct dse_cpu_conv_choice *c = &v[i];
        if (c->spare || (c->algo_fwd == DSE_ALGO_AUTO && c->algo_bwd == DSE_ALGO_AUTO)) continue;
        for (int k = 0; k < 16; k++) len += (size_t)snprintf(buf + len, cap - len, "%d ", c->key[k]);
        len += (size_t)snprintf(buf + len, cap - len, "%d %d\n", c->algo_fwd, c->algo_bwd);
    }
    enum dse_status st = dse_fs_write_atomic(path, buf, len, err);
    free(buf);
    return st;
}

enum dse_status dse_conv_cache_save(const struct dse_cpu_ctx *cx, const char *path, struct dse_err *err) {
    return write_all(cx->conv_cache, cx->conv_cache_n, path, err);
}

enum dse_status dse_conv_cache_load(struct dse_cpu_ctx *cx, const char *path, struct dse_err *err) {
    return read_into(path, 0, 0, &cx->conv_cache, &cx->conv_cache_n, &cx->conv_cache_cap, err);
}

enum dse_status dse_conv_cache_offer(struct dse_cpu_ctx *cx, const char *path, struct dse_err *err) {
    return read_into(path, 1, 1, &cx->conv_cache, &cx->conv_cache_n, &cx->conv_cache_cap, err);
}

enum dse_status dse_conv_cache_merge(const struct dse_cpu_ctx *cx, const char *path, struct dse_err *err) {
    char lock[4200];
    if (snprintf(lock, sizeof lock, "%s.lock", path) >= (int)sizeof lock)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "path too long for its lock file");
    const int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 || flock(fd, LOCK_EX)) {
        if (fd >= 0) close(fd);
        return dse_err_set(err, DSE_ERR_IO, lock, 0, "cannot lock the conv choice cache");
    }
    struct dse_cpu_conv_choice *v = NULL;
    int n = 0, cap = 0;
    enum dse_status st = read_into(path, 0, 1, &v, &n, &cap, err); /* the file's first: they were chosen first */
    for (int i = 0; !st && i < cx->conv_cache_n; i++) {
        const struct dse_cpu_conv_choice *c = &cx->conv_cache[i];
        if (c->spare || find(v, n, c->key)) continue;
        if (grow(&v, &cap, n)) st = dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
        else v[n++] = *c;
    }
    if (!st) st = write_all(v, n, path, err);
    free(v);
    close(fd); /* and the lock with it */
    return st;
}

/* The CPU as a file name's part: its model name (/proc/cpuinfo) in letters, digits and
 * dashes, and cpuid's family, model and stepping, which a masked name (a VM's) still has. */
static void cpu_tag(char *buf, int size) {
    char name[128];
    dse_cpu_model(name, sizeof name);
    int o = 0;
    for (const char *p = name; *p && o < 40; p++) {
        const int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
        if (ok) buf[o++] = *p;
        else if (o && buf[o - 1] != '-') buf[o++] = '-';
    }
    while (o && buf[o - 1] == '-') o--;
    buf[o] = '\0';
    unsigned fam = 0, model = 0, step = 0;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
    fam = ((a >> 8) & 15) + (((a >> 8) & 15) == 15 ? (a >> 20) & 255 : 0);
    model = ((a >> 4) & 15) | ((((a >> 8) & 15) == 6 || ((a >> 8) & 15) == 15) ? ((a >> 16) & 15) << 4 : 0);
    step = a & 15;
    (void)b, (void)c, (void)d;
#endif
    snprintf(buf + o, (size_t)(size - o), "%sf%um%us%u", o ? "-" : "", fam, model, step);
}

int dse_conv_cache_machine(int threads, char *path, int size) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[3000], cpu[96];
    const int ok = xdg && xdg[0] ? snprintf(dir, sizeof dir, "%s/dse", xdg) < (int)sizeof dir
                 : home && home[0] ? snprintf(dir, sizeof dir, "%s/.cache/dse", home) < (int)sizeof dir : 0;
    if (!ok || dse_fs_mkdirs(dir, NULL)) return -1;
    cpu_tag(cpu, sizeof cpu);
    /* v5: per CPU and BLAS kernels (issue #31); v4: DIRECT joined the timing; v3: choices
     * timed with the AVX2 Winograd transforms; v2: kernels splitting the batch over their own
     * threads. A newer version re-times, since the fastest may differ. */
    return snprintf(path, (size_t)size, "%s/conv-v5-%s-%s-t%d.txt", dir, cpu, dse_blas_core(), threads) < size ? 0 : -1;
}
