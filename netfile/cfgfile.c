/* cfgfile.c: libconfig files read safely (netfile/netfile.h). libconfig 1.5 has no hook for
 * @include (config_set_include_func came in 1.7), so the text is walked here first, token
 * by token as libconfig's scanner (scanner.l) would: comments and strings are skipped, each
 * integer is range-checked, and each @include line's file is checked, and walked, before
 * libconfig opens it. */
#include "netfile/netfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libconfig.h>

#include "base/fs.h"

#ifdef DSE_SANITIZED
#include <sanitizer/lsan_interface.h>

/* LeakSanitizer's suppressions, read at start-up by every program that reads libconfig
 * files (this object is linked into it), by hand or under ctest alike. libconfig 1.5 leaks
 * its scanner's string buffer (strbuf_append, 64 bytes) when a syntax error falls on a
 * string (name "x";): without this, the ASan build would end that clean exit 2 with exit
 * 1 (issue #18 item 4; tests/bad_nets/syntax_string.cfg). An empty string there ("" in
 * `layers ""`) leaks the 1-byte string its scanner allocates itself (libconfig_yylex;
 * found by tests/fuzz/fuzz_netcfg, seed corpus/netcfg/leak_empty_string.cfg). Only those
 * scanner functions: a missing config_destroy still leaks the settings (allocated by the
 * parser, not the scanner), which LeakSanitizer still reports. */
const char *__lsan_default_suppressions(void) { return "leak:strbuf_append\nleak:libconfig_yylex\n"; }
/* ... and no "Suppressions used:" table on stderr, so the output is the normal build's
 * (LSAN_OPTIONS=print_suppressions=1 shows it). */
const char *__lsan_default_options(void) { return "print_suppressions=0"; }
#endif

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

/* libconfig 1.5's names: [A-Za-z*][-A-Za-z0-9_*]* */
#define NAME_CHARS "-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_*"
static int name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '*'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_xdigit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/* The number at *p (moved past it), as libconfig 1.5's scanner splits it: a float is
 * [-+]?[0-9]*.[0-9]*([eE][-+]?[0-9]+)? or [-+]?[0-9]+(.[0-9]*)?[eE][-+]?[0-9]+; else an
 * integer, [-+]?[0-9]+ or 0[xX][0-9a-fA-F]+, 64-bit with an L (or LL) suffix. libconfig
 * reads an integer without L into an int (atoi, strtoul), so 4294967304 becomes 8 and
 * 3000000000 becomes -1294967296, silently; one beyond 64 bits saturates. Both refused. */
static enum dse_status number(struct walk *w, const char **pp, int line, const char *setting, int assigned) {
    const char *s = *pp, *d = s + (*s == '-' || *s == '+'), *e = d;
    int hex = d[0] == '0' && (d[1] == 'x' || d[1] == 'X') && is_xdigit(d[2]);
    if (hex) {
        for (e = d + 2; is_xdigit(*e); e++) {}
    } else {
        while (is_digit(*e)) e++;
        int frac = *e == '.';
        if (frac)
            for (e++; is_digit(*e); e++) {}
        const char *x = e + (*e == 'e' || *e == 'E');
        x += x > e && (*x == '-' || *x == '+');
        if (x > e && is_digit(*x)) {
            for (e = x; is_digit(*e); e++) {}
            frac = 1;
        }
        if (frac) {
            *pp = e;
            return DSE_OK;
        }
    }
    int wide = *e == 'L';
    *pp = e + wide + (wide && e[1] == 'L');
    errno = 0;
    int over;
    if (hex) {
        unsigned long long v = strtoull(d, NULL, 16);
        over = errno == ERANGE || v > (wide ? (unsigned long long)INT64_MAX : (unsigned long long)INT32_MAX);
    } else {
        long long v = strtoll(s, NULL, 10);
        over = errno == ERANGE || (!wide && (v < INT32_MIN || v > INT32_MAX));
    }
    if (!over) return DSE_OK;
    int n = (int)(e - s) > 40 ? 40 : (int)(e - s);
    char what[120];
    const char *more = n < e - s ? "..." : "";
    if (assigned) snprintf(what, sizeof what, "%s = %.*s%s", setting, n, s, more);
    else if (setting[0]) snprintf(what, sizeof what, "%.*s%s (in %s)", n, s, more, setting);
    else snprintf(what, sizeof what, "%.*s%s", n, s, more);
    if (wide)
        return bad(w, line, "%sL does not fit in 64 bits (-9223372036854775808 to 9223372036854775807)", what);
    return bad(w, line, "%s does not fit in 32 bits (-2147483648 to 2147483647), and libconfig 1.5 would read it "
               "wrapped; write %.*s%sL for a 64-bit integer", what, n, s, more);
}

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
    char setting[64] = ""; /* the last setting's name, for messages; assigned: its value is next */
    int assigned = 0;
    enum dse_status st;
    while (*p) {
        int at_bol = bol;
        bol = 0;
        if (*p == '\n') {
            line++, bol = 1, p++;
            continue;
        } else if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f') {
            bol = at_bol && *p != '\r' && *p != '\f', p++;
            continue;
        } else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
            p += strcspn(p, "\n");
            continue;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            end = end ? end + 2 : p + strlen(p);
            for (; p < end; p++) line += *p == '\n';
            continue;
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
        } else if (name_start(*p)) {
            const char *name = p;
            size_t n = strspn(p, NAME_CHARS);
            p += n;
            const char *q = p + strspn(p, " \t");
            if (*q == '=' || *q == ':') { /* a setting's name (else true or false) */
                snprintf(setting, sizeof setting, "%.*s", (int)(n < sizeof setting ? n : sizeof setting - 1), name);
                assigned = 1, p = q + 1;
                continue;
            }
        } else if (is_digit(*p) || *p == '.' || ((*p == '-' || *p == '+') && (is_digit(p[1]) || p[1] == '.'))) {
            if ((st = number(w, &p, line, setting, assigned))) return st;
        } else {
            p++;
        }
        assigned = 0;
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
