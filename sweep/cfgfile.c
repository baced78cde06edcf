/* cfgfile.c: libconfig files read safely (sweep/cfgfile.h). libconfig 1.5 has no hook for
 * @include (config_set_include_func came in 1.7), so the text is walked here first, token
 * by token as libconfig's scanner (scanner.l) would: comments and strings are skipped, and
 * each @include line's file is checked, and walked, before libconfig opens it. */
#include "sweep/cfgfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fs.h"

/* libconfig 1.5's own limit (scanctx.c): deeper, it reports the nesting itself. */
#define MAX_INCLUDE_DEPTH 10

struct walk {
    const struct dse_cfgfile *how;
    const char               *top;        /* the file the caller named */
    int                       top_line;   /* inside an included file: top's @include line */
    char                      chain[200]; /* there: "@include \"a.cfg\"[, line N: @include ...]" */
    struct dse_err           *err;
};

/* An error at line of the file being walked: top's own line, or top's @include line with
 * the chain of includes and line in the message. */
__attribute__((format(printf, 3, 4)))
static enum dse_status bad(struct walk *w, int line, const char *fmt, ...) {
    char msg[sizeof w->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!w->chain[0]) return dse_err_set(w->err, DSE_ERR_CONFIG, w->top, line, "%s", msg);
    return dse_err_set(w->err, DSE_ERR_CONFIG, w->top, w->top_line, "%s, line %d: %s", w->chain, line, msg);
}

/* Why path is not a file libconfig can read: "" if it is a regular file. */
static const char *not_regular(const char *path, const char *what, char *why, size_t size) {
    struct stat sb;
    if (stat(path, &sb)) snprintf(why, size, "cannot open: %s", strerror(errno));
    else if (S_ISDIR(sb.st_mode)) snprintf(why, size, "is a directory; expected a %s", what);
    else if (!S_ISREG(sb.st_mode)) snprintf(why, size, "is not a regular file; expected a %s", what);
    else why[0] = '\0';
    return why;
}

static enum dse_status walk_text(struct walk *w, const char *p, int depth);

/* The file of an @include line at line: refused, or checked and walked. */
static enum dse_status follow(struct walk *w, const char *name, int line, int depth) {
    char why[300], *text;
    struct dse_err e;
    if (w->how->no_include)
        return bad(w, line, "@include is not allowed in a %s; %s", w->how->what, w->how->no_include);
    if (*not_regular(name, w->how->what, why, sizeof why)) return bad(w, line, "@include \"%s\": %s", name, why);
    if (depth + 1 >= MAX_INCLUDE_DEPTH) return DSE_OK;
    if (dse_fs_read(name, &text, NULL, &e)) return bad(w, line, "@include \"%s\": %s", name, e.msg);
    size_t keep = strlen(w->chain);
    int keep_line = w->top_line;
    if (depth == 0) {
        w->top_line = line;
        snprintf(w->chain, sizeof w->chain, "@include \"%.150s\"", name);
    } else {
        snprintf(w->chain + keep, sizeof w->chain - keep, ", line %d: @include \"%.150s\"", line, name);
    }
    enum dse_status st = walk_text(w, text, depth + 1);
    w->chain[keep] = '\0';
    w->top_line = keep_line;
    free(text);
    return st;
}

/* Walk one file's text as libconfig's scanner does. */
static enum dse_status walk_text(struct walk *w, const char *p, int depth) {
    int line = 1, bol = 1; /* bol: only blanks since the line began */
    enum dse_status st;
    while (*p) {
        int at_bol = bol;
        bol = 0;
        if (*p == '\n') {
            line++, bol = 1, p++;
        } else if (*p == ' ' || *p == '\t') {
            bol = at_bol, p++;
        } else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
            p += strcspn(p, "\n");
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            end = end ? end + 2 : p + strlen(p);
            for (; p < end; p++) line += *p == '\n';
        } else if (*p == '"') {
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1]) p++;
                line += *p == '\n';
            }
            p += *p == '"';
        } else if (at_bol && !strncmp(p, "@include", 8) && (p[8] == ' ' || p[8] == '\t') &&
                   p[8 + strspn(p + 8, " \t")] == '"') {
            /* ^[ \t]*@include[ \t]+"name": \\ and \" are escapes */
            char name[4096];
            size_t n = 0;
            int at = line;
            for (p += 8 + strspn(p + 8, " \t") + 1; *p && *p != '"'; p++) {
                if (*p == '\\' && (p[1] == '\\' || p[1] == '"')) p++;
                line += *p == '\n';
                if (n + 1 < sizeof name) name[n++] = *p;
            }
            name[n] = '\0';
            if (!*p) break; /* unterminated: libconfig's error */
            p++;
            if ((st = follow(w, name, at, depth))) return st;
        } else {
            p++;
        }
    }
    return DSE_OK;
}

enum dse_status dse_cfgfile_read(config_t *cfg, const char *path, const struct dse_cfgfile *how, char **text,
                                 size_t *len, struct dse_err *err) {
    char why[300], *buf = NULL;
    size_t n = 0;
    enum dse_status st;
    if (text) *text = NULL;
    if (*not_regular(path, how->what, why, sizeof why)) return dse_err_set(err, DSE_ERR_IO, path, 0, "%s", why);
    if ((st = dse_fs_read(path, &buf, &n, err))) return st;
    struct walk w = { .how = how, .top = path, .err = err };
    if (!(st = walk_text(&w, buf, 0)) && !config_read_string(cfg, buf)) {
        /* config_error_file is set only for an error inside an included file */
        const char *inc = config_error_file(cfg);
        char where[300] = "";
        if (inc) snprintf(where, sizeof where, "@include \"%s\", line %d: ", inc, config_error_line(cfg));
        st = dse_err_set(err, DSE_ERR_CONFIG, path, inc ? 0 : config_error_line(cfg),
                         "%s%s; expected settings 'key = value;', groups { ... } and lists ( ..., ... ) as in %s",
                         where, config_error_text(cfg), how->doc);
    }
    if (st || !text) {
        free(buf);
    } else {
        *text = buf;
        if (len) *len = n;
    }
    return st;
}
