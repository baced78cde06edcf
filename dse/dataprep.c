/* dataprep.c: packing with progress, the pack cache of image folders, and the fit check
 * that names the flags to use. See dataprep.h. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "dse/dataprep.h"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/pcg32.h"

struct pack_log {
    FILE *f;
    int   tty;
};

static void pack_progress(void *arg, const struct dse_pack_progress *p) {
    struct pack_log *pl = arg;
    double rate = p->seconds > 0 ? p->done / p->seconds : 0;
    double eta = rate > 0 ? (p->total - p->done) / rate : 0;
    if (!pl->tty && p->done < p->total) return; /* a log file gets the last line only */
    fprintf(pl->f, "%spacked %d/%d images (%.1f MB, %d skipped)  %.0f img/s  ETA %.0f s%s", pl->tty ? "\r" : "",
            p->done, p->total, (double)p->bytes / 1e6, p->skipped, rate, eta, p->done == p->total ? "\n" : "   ");
    fflush(pl->f);
}

static void pack_bad(void *arg, const char *path, const char *why) {
    struct pack_log *pl = arg;
    fprintf(pl->f, "%sskipped %s: %s\n", pl->tty ? "\r" : "", path, why);
}

/* Ctrl-C or a TERM while packing: the pack stops and removes its temporary file (a pack
 * of ImageNet is many GB) instead of dying with it on disk. The flag is this module's. */
static volatile sig_atomic_t pack_stop;

static void on_stop_signal(int sig) {
    (void)sig;
    pack_stop = 1;
}

enum dse_status dse_dataprep_pack(const struct dse_imgfolder *f, const char *out_path,
                                  const struct dse_pack_opts *o, FILE *log, int tty,
                                  struct dse_pack_summary *sum, struct dse_err *err) {
    struct pack_log pl = { .f = log, .tty = tty };
    struct dse_pack_opts po = *o;
    struct sigaction sa, old_int, old_term;
    if (log) po.progress = pack_progress, po.bad = pack_bad, po.arg = &pl;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    pack_stop = 0;
    po.cancel = &pack_stop;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    enum dse_status st = dse_pack_write(f, out_path, &po, sum, err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (log && tty) fputc('\n', log);
    return st;
}

static void cache_dir_of(const char *given, char *dir, size_t size) {
    const char *env = getenv("DSE_PACK_CACHE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (given && given[0]) snprintf(dir, size, "%s", given);
    else if (env && env[0]) snprintf(dir, size, "%s", env);
    else if (xdg && xdg[0]) snprintf(dir, size, "%s/dse/packs", xdg);
    else snprintf(dir, size, "%s/.cache/dse/packs", home && home[0] ? home : "/tmp");
}

enum dse_status dse_dataprep_resolve(const char *spec, const char *cache_dir, int in_c, int in_h, int in_w,
                                     int64_t max_pixels, FILE *log, char *out, size_t out_size,
                                     struct dse_err *err) {
    struct dse_imgfolder f;
    struct dse_pack_opts po;
    struct dse_pack_summary sum;
    char dir[2048], real[PATH_MAX], path[4096];
    enum dse_status st;
    if (!dse_imgfolder_is(spec) || dse_pack_named(spec)) {
        if ((size_t)snprintf(out, out_size, "%s", spec) >= out_size)
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "data path is too long");
        return DSE_OK;
    }
    dse_pack_opts_default(&po);
    int side = in_h > in_w ? in_h : in_w;
    po.size = (side * 8 + 6) / 7;
    if (po.size < 8) po.size = 8;
    if (po.size > 4096) po.size = 4096;
    po.format = po.size > 64 ? DSE_PACK_JPEG : DSE_PACK_RAW;
    po.channels = in_c == 1 ? 1 : 3;
    po.max_pixels = max_pixels;
    if (!realpath(spec, real)) snprintf(real, sizeof real, "%s", spec);
    const char *base = strrchr(real, '/');
    base = base && base[1] ? base + 1 : real;
    uint64_t h = dse_fnv1a64(DSE_FNV64_INIT, real, strlen(real));
    cache_dir_of(cache_dir, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%.64s-%016llx-s%d-%s%s.pack", dir, base, (unsigned long long)h, po.size,
             po.format == DSE_PACK_JPEG ? "jpeg" : "raw", po.channels == 1 ? "-gray" : "");
    if ((size_t)snprintf(out, out_size, "%s", path) >= out_size)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "pack cache path is too long");
    if ((st = dse_imgfolder_scan(spec, &f, err))) {
        dse_imgfolder_deinit(&f);
        return st;
    }
    if (!f.val_name[0]) { /* refused now, not after packing it (issue #31) */
        dse_imgfolder_deinit(&f);
        return dse_err_set(err, DSE_ERR_IO, spec, 0, "no val/ or test/ folder: training and evaluation need an "
                           "evaluation split; add val/<class>/... with images of each class");
    }
    struct dse_pack *p = NULL;
    if (dse_pack_is(path) && !dse_pack_open(path, &p, NULL)) {
        int fresh = p->fingerprint == f.fingerprint;
        dse_pack_close(p);
        if (fresh) {
            if (log) fprintf(log, "dse: %s: using its pack %s\n", spec, path);
            dse_imgfolder_deinit(&f);
            return DSE_OK;
        }
        if (log) fprintf(log, "dse: %s changed since it was packed; packing it again\n", spec);
    }
    if ((st = dse_fs_mkdirs(dir, err))) {
        dse_imgfolder_deinit(&f);
        return st;
    }
    if (log)
        fprintf(log, "dse: packing %s (%d classes, %d + %d images) into %s, short side %d, %s, %d threads "
                     "(first use; 'dse data pack' makes packs by hand)\n",
                spec, f.classes, f.count[0], f.count[1], path, po.size,
                po.format == DSE_PACK_JPEG ? "JPEG quality 90" : "raw pixels", po.threads);
    st = dse_dataprep_pack(&f, path, &po, log, log && isatty(fileno(log)), &sum, err);
    if (st && err && err->file[0]) { /* the folder names the error; its file at fault goes into the message */
        struct dse_err e = *err;
        dse_err_set(err, e.code, spec, 0, "%s: %s", e.file, e.msg);
    }
    dse_imgfolder_deinit(&f);
    return st;
}

enum dse_status dse_dataprep_check_fit(const struct dse_net *net, const struct dse_data_info *info,
                                       const char *how, struct dse_err *err) {
    int k = dse_net_classifier(net), outputs = k >= 0 ? net->layers[k].out_c : 0;
    int macro = !strcmp(how, "macro");
    int want_h = info->h ? info->h : net->in_h, want_w = info->w ? info->w : net->in_w;
    int want_c = info->c ? info->c : net->in_c == 1 ? 1 : 3; /* a folder converts to 1 or 3 */
    int shape = net->in_c != want_c || want_h != net->in_h || want_w != net->in_w;
    int classes = k >= 0 && info->classes > 0 && outputs != info->classes; /* more: outputs no image trains */
    char fix[256];
    if (!shape && !classes) return DSE_OK;
    if (macro && info->h)
        snprintf(fix, sizeof fix, "set input_c = %d; input_h = %d; input_w = %d; classes = %d; in the space's macro "
                 "section", want_c, info->h, info->w, info->classes);
    else if (macro)
        snprintf(fix, sizeof fix, "set input_c = %d; classes = %d; in the space's macro section", want_c,
                 info->classes);
    else
        snprintf(fix, sizeof fix, "add --input %d,%d,%d --classes %d to fit the network to it", want_c, want_h,
                 want_w, info->classes);
    if (shape && info->h)
        return dse_err_set(err, DSE_ERR_SHAPE, NULL, 0, "the network takes %dx%dx%d input; %s images are %dx%dx%d: %s",
                           net->in_c, net->in_h, net->in_w, info->name, want_c, info->h, info->w, fix);
    if (shape)
        return dse_err_set(err, DSE_ERR_SHAPE, NULL, 0, "the network takes %d-channel input; %s %s %d-channel "
                           "images (any size: they are cropped and resized to the network's %dx%d): %s",
                           net->in_c, info->name, info->c ? "holds" : "can give 1- or", want_c, net->in_h,
                           net->in_w, fix);
    return dse_err_set(err, DSE_ERR_SHAPE, NULL, 0, "the network has %d outputs; %s has %d classes: %s", outputs,
                       info->name, info->classes, fix);
}
