/* trainlog.c: dse train's lines on standard error while it trains (dse/trainlog.h): a
 * terminal gets a line redrawn in place, a log or a pipe a line every few seconds, so that
 * a long epoch written to a file still shows it is moving. */
#include "dse/trainlog.h"

#include <time.h>

static double mono_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double now(const struct dse_train_log *l) { return l->now_s ? l->now_s() : mono_s(); }

void dse_train_log_init(struct dse_train_log *l, FILE *f, int tty, double every_s) {
    *l = (struct dse_train_log){ .f = f, .tty = tty, .every_s = every_s };
    l->last_s = now(l);
}

/* Under an epoch's results when some test classes were never predicted: once per run (a
 * dead unit rarely comes back, and a line per epoch buries the results). */
static void warn_unpredicted(struct dse_train_log *l, const struct dse_train_progress *p) {
    if (!p->ep.unpredicted || l->warned) return;
    l->warned = 1;
    fprintf(l->f, "  warning: %d class%s of the test set never predicted (a dead classifier unit?); "
                  "said once per run\n", p->ep.unpredicted, p->ep.unpredicted == 1 ? "" : "es");
}

void dse_train_log_progress(void *arg, const struct dse_train_progress *p) {
    struct dse_train_log *l = arg;
    const char *cr = l->tty ? "\r" : "";
    if (p->done) {
        fprintf(l->f, "%sepoch %d/%d  train loss %.4f  test loss %.4f  top-1 %.2f%%  top-5 %.2f%%  %.0f img/s%*s\n",
                cr, p->epoch + 1, p->epochs, p->loss, p->ep.test_loss, 100 * p->ep.top1, 100 * p->ep.top5,
                p->img_per_s, l->tty ? 20 : 0, "");
        warn_unpredicted(l, p);
        l->last_s = now(l);
    } else if (l->tty) {
        fprintf(l->f, "\repoch %d/%d  iter %d/%d  loss %.4f  lr %.4g  %.0f img/s  ETA %.0f s   ", p->epoch + 1,
                p->epochs, p->iter, p->iters, p->loss, p->lr, p->img_per_s, p->eta_s);
    } else {
        const double t = now(l);
        if (!(l->every_s > 0) || t - l->last_s < l->every_s) return;
        fprintf(l->f, "epoch %d/%d  iter %d/%d  loss %.4f  lr %.4g  %.0f img/s  ETA %.0f s\n", p->epoch + 1,
                p->epochs, p->iter, p->iters, p->loss, p->lr, p->img_per_s, p->eta_s);
        l->last_s = t;
    }
    fflush(l->f);
}

void dse_train_log_note(void *arg, enum dse_train_note kind, const char *text) {
    struct dse_train_log *l = arg;
    (void)kind; /* the text says it */
    fprintf(l->f, "dse train: %s\n", text);
    fflush(l->f);
}
