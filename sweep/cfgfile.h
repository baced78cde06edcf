/* cfgfile.h: the one way dse reads a libconfig file: network .cfg files (dse/netcfg.c)
 * and space files (sweep/space.c). It refuses, with path:line, what libconfig 1.5 would
 * otherwise mishandle (issue #18 item 4); the syntax is docs/network-format.md and
 * docs/space-format.md. */
#ifndef DSE_SWEEP_CFGFILE_H
#define DSE_SWEEP_CFGFILE_H

#include <libconfig.h>
#include <stddef.h>

#include "base/base.h"

/* What the caller reads, for its messages. */
struct dse_cfgfile {
    const char *what;       /* "network file": named when a path is not a regular file */
    const char *doc;        /* "docs/network-format.md": named by a syntax error */
    const char *no_include; /* NULL: @include allowed; else why it is refused (the message's tail) */
};

/* Read PATH into cfg (config_init'ed by the caller, who config_destroy's it whatever this
 * returns). Before libconfig sees the text:
 *  - PATH, and each file an @include line names, must be a regular file: libconfig 1.5
 *    ends the process ("input in flex scanner failed") on a directory;
 *  - an integer that libconfig 1.5 would read wrapped is refused: one without an L suffix
 *    beyond 32 bits (4294967304 would read as 8), one with L beyond 64 bits;
 *  - @include lines are refused if how->no_include is set; else each included file is
 *    checked as PATH is, found as libconfig finds it (relative to the working directory).
 * An error names PATH and the line at fault; inside an included file, the line of PATH's
 * @include and, in the message, the chain of includes and the included file's line.
 * text, if not NULL, receives the file's bytes, NUL-terminated (the caller frees them;
 * NULL after a failure), and len their count. Fails with DSE_ERR_IO (PATH unreadable or
 * not a regular file), DSE_ERR_CONFIG (the text), DSE_ERR_NOMEM. */
enum dse_status dse_cfgfile_read(config_t *cfg, const char *path, const struct dse_cfgfile *how, char **text,
                                 size_t *len, struct dse_err *err);

#endif
