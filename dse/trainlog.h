/* trainlog.h: what dse train prints to standard error while it trains (docs/cli.md,
 * "dse train"): on a terminal a progress line redrawn in place; in a log or a pipe a
 * progress line every every_s seconds within an epoch; one line per epoch; the engine's
 * notes; and the warning about test classes never predicted, once per run. */
#ifndef DSE_CLI_TRAINLOG_H
#define DSE_CLI_TRAINLOG_H

#include <stdio.h>

#include "engine/train.h"

/* --progress-every's default, in seconds (engine/train.h), and as text for --help. */
#define DSE_TRAIN_LOG_EVERY_S       DSE_TRAIN_PROGRESS_EVERY_S
#define DSE_TRAIN_LOG_STR_(x)       #x
#define DSE_TRAIN_LOG_STR(x)        DSE_TRAIN_LOG_STR_(x)
#define DSE_TRAIN_LOG_EVERY_S_STR   DSE_TRAIN_LOG_STR(DSE_TRAIN_PROGRESS_EVERY_S)

struct dse_train_log {
    FILE   *f;              /* borrowed */
    int     tty;            /* f is a terminal: one progress line redrawn in place */
    double  every_s;        /* not a terminal: a progress line within an epoch once this many
                               seconds have passed since the last line; 0: epoch lines only */
    double  last_s;         /* when the last line was written, on now_s's clock */
    int     warned;         /* the never-predicted warning has been written */
    double (*now_s)(void);  /* NULL: CLOCK_MONOTONIC seconds (tests give their own clock) */
};

/* Start a log on f (borrowed) now. */
void dse_train_log_init(struct dse_train_log *l, FILE *f, int tty, double every_s);

/* dse_train_opts.progress and .note, with progress_arg a struct dse_train_log. */
void dse_train_log_progress(void *arg, const struct dse_train_progress *p);
void dse_train_log_note(void *arg, enum dse_train_note kind, const char *text);

#endif
