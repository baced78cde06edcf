/* ratecache.c: the machine's measured training speed, one line per CPU model and thread
 * count (ratecache.h), read by dse analyze --workers to estimate compute from FLOPs. */
#include "dse/ratecache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "analysis/analysis.h"
#include "base/fs.h"
#include "engine/engine.h"

int dse_ratecache_path(char *buf, size_t size) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = xdg && xdg[0] ? snprintf(buf, size, "%s/dse/train-rate.txt", xdg)
                          : snprintf(buf, size, "%s/.cache/dse/train-rate.txt", home && home[0] ? home : "/tmp");
    return n > 0 && (size_t)n < size ? 0 : -1;
}

void dse_ratecache_cpu(char *buf, size_t size) {
    struct utsname u;
    dse_cpu_model(buf, size > INT32_MAX ? INT32_MAX : (int)size);
    if (!buf[0]) snprintf(buf, size, "%s", uname(&u) == 0 ? u.machine : "unknown");
    const size_t n = strlen(buf); /* and the BLAS kernels, whose speeds differ up to 6x (engine/cpu/blas.c) */
    if (n < size) snprintf(buf + n, size - n, " (%s kernels)", dse_blas_core());
}

/* Line s (without its newline) as threads, rate and model: 0 if it parses. */
static int parse_line(const char *s, int *threads, double *rate, const char **cpu) {
    char *e;
    long t = strtol(s, &e, 10);
    if (e == s || *e != ' ' || t < 1 || t > 1 << 16) return -1;
    const char *r = e + 1;
    double v = strtod(r, &e);
    if (e == r || *e != ' ' || !(v > 0) || v > 1e30) return -1;
    *threads = (int)t, *rate = v, *cpu = e + 1;
    return 0;
}

/* Whether line [s, s + len) holds the key cpu, threads. */
static int same_key(const char *s, size_t len, const char *cpu, int threads) {
    char buf[512];
    const char *model;
    int t;
    double v;
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), s);
    return !parse_line(buf, &t, &v, &model) && t == threads && !strcmp(model, cpu);
}

enum dse_status dse_ratecache_get(const char *path, const char *cpu, int threads, double *flops_per_s,
                                  struct dse_err *err) {
    char *text = NULL;
    size_t len = 0;
    int line = 0;
    *flops_per_s = 0;
    FILE *probe = fopen(path, "r");
    if (!probe) return DSE_OK; /* nothing measured yet */
    fclose(probe);
    enum dse_status st = dse_fs_read(path, &text, &len, err);
    if (st) return st;
    for (const char *p = text; p < text + len; line++) {
        size_t n = strcspn(p, "\n");
        char buf[512];
        const char *model;
        int t;
        double v;
        snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf ? n : sizeof buf - 1), p);
        if (n && parse_line(buf, &t, &v, &model)) {
            free(text);
            return dse_err_set(err, DSE_ERR_IO, path, line + 1, "not '<threads> <training FLOP/s> <CPU model>' "
                               "(remove the file: dse analyze --measure writes it again)");
        }
        if (n && t == threads && !strcmp(model, cpu)) *flops_per_s = v;
        p += n + 1;
    }
    free(text);
    return DSE_OK;
}

enum dse_status dse_ratecache_put(const char *path, const char *cpu, int threads, double flops_per_s,
                                  struct dse_err *err) {
    char *old = NULL, *text = NULL, dir[4096];
    size_t old_len = 0, len = 0;
    double had;
    enum dse_status st;
    const char *slash = strrchr(path, '/');
    if ((st = dse_ratecache_get(path, cpu, threads, &had, err))) return st; /* a broken file is not rewritten */
    if (slash && slash != path) {
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
        if ((st = dse_fs_mkdirs(dir, err))) return st;
    }
    FILE *probe = fopen(path, "r");
    if (probe) {
        fclose(probe);
        if ((st = dse_fs_read(path, &old, &old_len, err))) return st;
    }
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        free(old);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    for (const char *p = old; p && p < old + old_len;) { /* the other keys' lines, as they were */
        size_t n = strcspn(p, "\n");
        if (n && !same_key(p, n, cpu, threads)) fprintf(f, "%.*s\n", (int)n, p);
        p += n + 1;
    }
    fprintf(f, "%d %.6g %s\n", threads, flops_per_s, cpu);
    fclose(f);
    free(old);
    st = text ? dse_fs_write_atomic(path, text, len, err) : dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    free(text);
    return st;
}

/* net's training FLOPs per image (forward and backward of conv and fc, at batch 1). */
static enum dse_status train_flops(const struct dse_net *net, double *flops, struct dse_err *err) {
    struct dse_cost_totals tot;
    struct dse_cost_layer *layers = calloc((size_t)(net->n_layers > 0 ? net->n_layers : 1), sizeof *layers);
    if (!layers) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    enum dse_status st = dse_cost_net(net, 1, layers, &tot, err);
    free(layers);
    if (st) return st;
    *flops = (double)tot.flops_train;
    if (!(*flops > 0))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "the network has no conv or fc FLOPs to estimate its "
                           "training speed from: give --img-per-s X");
    return DSE_OK;
}

enum dse_status dse_ratecache_estimate(const char *path, const struct dse_net *net, double *img_per_s, char *how,
                                       size_t how_size, struct dse_err *err) {
    char cpu[256];
    double flops, rate;
    enum dse_status st;
    *img_per_s = 0;
    dse_ratecache_cpu(cpu, sizeof cpu);
    if ((st = train_flops(net, &flops, err)) || (st = dse_ratecache_get(path, cpu, 1, &rate, err))) return st;
    if (!(rate > 0)) return DSE_OK;
    *img_per_s = rate / flops;
    snprintf(how, how_size, "estimated: this CPU's %.4g GFLOP/s of training (1 thread, kept by --measure in %s) / "
             "%.4g GFLOP per image", rate / 1e9, path, flops / 1e9);
    return DSE_OK;
}

enum dse_status dse_ratecache_keep(const char *path, const struct dse_net *net, double img_per_s,
                                   struct dse_err *err) {
    char cpu[256];
    double flops;
    enum dse_status st;
    dse_ratecache_cpu(cpu, sizeof cpu);
    if ((st = train_flops(net, &flops, err))) return st;
    return dse_ratecache_put(path, cpu, 1, img_per_s * flops, err);
}
