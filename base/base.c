/* base.c: status names, error records, assertions, small string helpers, large buffers. */
#define _DEFAULT_SOURCE /* madvise */
#include "base/base.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#ifdef DSE_SANITIZED
#include <sanitizer/asan_interface.h>

/* AddressSanitizer's defaults in the sanitizer build, read at start-up by every program
 * (this object is linked into each), by hand or under ctest alike; ASAN_OPTIONS still
 * overrides them. detect_stack_use_after_return: GCC instruments every frame for it, but
 * the runtime checks only when asked, and an error record's file pointing into a returned
 * frame went unseen without it (issue #18 item 4: dse_data_probe's dataset paths). */
const char *__asan_default_options(void) { return "detect_stack_use_after_return=1"; }
#endif

static const char *const status_names[] = {
    [DSE_OK]              = "ok",
    [DSE_ERR_CONFIG]      = "config error",
    [DSE_ERR_IO]          = "I/O error",
    [DSE_ERR_NOMEM]       = "out of memory",
    [DSE_ERR_SHAPE]       = "shape error",
    [DSE_ERR_UNSUPPORTED] = "unsupported",
    [DSE_ERR_CUDA]        = "CUDA error",
    [DSE_ERR_INTERNAL]    = "internal error",
};

const char *dse_status_str(enum dse_status s) {
    return dse_name_of(status_names, DSE_ARRAY_LEN(status_names), (int)s, "unknown status");
}

/* file into err->file, cut to fit; file may point into err itself (its message, its file). */
static void copy_file(struct dse_err *err, const char *file) {
    if (file == err->file) return;
    size_t n = strlen(file);
    if (n >= sizeof err->file) n = sizeof err->file - 1;
    memmove(err->file, file, n);
    err->file[n] = '\0';
}

enum dse_status dse_err_set(struct dse_err *err, enum dse_status code, const char *file,
                            int line, const char *fmt, ...) {
    if (err) {
        char msg[sizeof err->msg]; /* formatted first: the arguments may be err's own text */
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        copy_file(err, file ? file : "");
        err->code = code;
        err->line = line;
        memcpy(err->msg, msg, sizeof msg);
    }
    return code;
}

enum dse_status dse_err_vlayer(struct dse_err *err, enum dse_status code, const char *file, int line,
                               const char *name, const char *type, const char *fmt, va_list ap) {
    char what[300];
    vsnprintf(what, sizeof what, fmt, ap);
    return dse_err_set(err, code, file, line, "layer '%s' (%s): %s", name, type, what);
}

enum dse_status dse_err_layer(struct dse_err *err, enum dse_status code, const char *file, int line,
                              const char *name, const char *type, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    enum dse_status st = dse_err_vlayer(err, code, file, line, name, type, fmt, ap);
    va_end(ap);
    return st;
}

void dse_err_name_file(struct dse_err *err, const char *file) {
    if (err && file && !err->file[0]) copy_file(err, file);
}

const char *dse_err_format(const struct dse_err *err, char *buf, int size) {
    if (err->file[0] && err->line > 0)
        snprintf(buf, (size_t)size, "%s:%d: %s", err->file, err->line, err->msg);
    else if (err->file[0])
        snprintf(buf, (size_t)size, "%s: %s", err->file, err->msg);
    else
        snprintf(buf, (size_t)size, "%s", err->msg);
    return buf;
}

void dse_assert_fail(const char *file, int line, const char *cond) {
    fprintf(stderr, "%s:%d: assertion '%s' failed\n", file, line, cond);
    abort();
}

int dse_has_ext(const char *path, const char *ext) {
    size_t lp = strlen(path), le = strlen(ext);
    return lp > le && strcmp(path + lp - le, ext) == 0;
}

int dse_strlcpy(char *dst, const char *src, int n) {
    size_t len = strlen(src);
    if (n <= 0) return -1;
    if (len < (size_t)n) {
        memcpy(dst, src, len + 1);
        return 0;
    }
    memcpy(dst, src, (size_t)n - 1);
    dst[n - 1] = '\0';
    return -1;
}

int dse_edit_distance(const char *a, const char *b) {
    int la = (int)strlen(a), lb = (int)strlen(b);
    int row[64 + 1];
    if (la > 64 || lb > 64) return 1000;
    for (int j = 0; j <= lb; j++) row[j] = j;
    for (int i = 1; i <= la; i++) {
        int prev = row[0];
        row[0] = i;
        for (int j = 1; j <= lb; j++) {
            int cur = row[j];
            int sub = prev + (a[i - 1] != b[j - 1]);
            int del = row[j] + 1, ins = row[j - 1] + 1;
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
            prev = cur;
        }
    }
    return row[lb];
}

/* The word of list starting at or after p: *len its length, NULL when no word is left. */
static const char *next_word(const char *p, size_t *len) {
    while (*p == ' ') p++;
    if (!*p) return NULL;
    *len = strcspn(p, " ");
    return p;
}

int dse_word_index(const char *list, const char *word) {
    size_t n = strlen(word), m;
    int i = 0;
    for (const char *p = next_word(list, &m); p; p = next_word(p + m, &m), i++)
        if (m == n && strncmp(p, word, n) == 0) return i;
    return -1;
}

int dse_word_suggest(const char *list, const char *word, char *out, int size) {
    int best = 3;
    size_t m;
    out[0] = '\0';
    for (const char *p = next_word(list, &m); p; p = next_word(p + m, &m)) {
        char w[64];
        size_t n = m < sizeof w - 1 ? m : sizeof w - 1;
        memcpy(w, p, n);
        w[n] = '\0';
        int d = dse_edit_distance(word, w);
        if (d < best) {
            best = d;
            dse_strlcpy(out, w, size);
        }
    }
    return out[0] != '\0';
}

const char *dse_name_of(const char *const *names, int count, int v, const char *unknown) {
    return v >= 0 && v < count && names[v] && names[v][0] ? names[v] : unknown;
}

int dse_name_find(const char *const *names, int count, const char *s) {
    for (int v = 0; s && v < count; v++)
        if (names[v] && names[v][0] && strcmp(s, names[v]) == 0) return v;
    return -1;
}

const char *dse_name_list(const char *const *names, int count, char *buf, int size) {
    int last = -1, n = 0;
    for (int v = 0; v < count; v++)
        if (names[v] && names[v][0]) last = v;
    buf[0] = '\0';
    for (int v = 0; v < count; v++) {
        if (!names[v] || !names[v][0]) continue;
        const char *sep = n++ == 0 ? "" : v == last ? " or " : ", ";
        size_t len = strlen(buf);
        snprintf(buf + len, (size_t)size - len, "%s%s", sep, names[v]);
    }
    return buf;
}

int dse_name_suggest(const char *const *names, int count, const char *s, char *out, int size) {
    int best = 3;
    out[0] = '\0';
    for (int v = 0; v < count; v++) {
        if (!names[v] || !names[v][0]) continue;
        int d = dse_edit_distance(s, names[v]);
        if (d < best) {
            best = d;
            dse_strlcpy(out, names[v], size);
        }
    }
    return out[0] != '\0';
}

enum dse_status dse_name_parse(const char *const *names, int count, const char *what, const char *s,
                               int *out, struct dse_err *err) {
    int v = dse_name_find(names, count, s);
    if (v >= 0) {
        *out = v;
        return DSE_OK;
    }
    char list[512];
    return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s '%s' is not known; expected %s", what, s ? s : "",
                       dse_name_list(names, count, list, sizeof list));
}

const char *dse_fmt_shortest(char *buf, size_t size, double v, int as_float) {
    const int pmax = as_float ? 9 : 17; /* digits that always read back */
    int p0 = 1;
    if (fabs(v) >= 1.0 && fabs(v) < 1e15) p0 = (int)floor(log10(fabs(v))) + 1;
    if (p0 > pmax) p0 = pmax; /* a float from 1e9 up: its 9 digits, in exponent form */
    for (int p = p0; p <= pmax; p++) {
        snprintf(buf, size, "%.*g", p, v);
        if (as_float ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
    }
    return buf;
}

const char *dse_fmt_real(char *buf, size_t size, double v) {
    dse_fmt_shortest(buf, size, v, 0);
    if (isfinite(v) && !strpbrk(buf, ".e") && strlen(buf) + 3 <= size) strcat(buf, ".0");
    return buf;
}

void *dse_alloc_big(size_t bytes) {
    const size_t huge = (size_t)2 << 20;
    if (bytes < huge) return aligned_alloc(64, bytes ? (bytes + 63) / 64 * 64 : 64);
    if (bytes > SIZE_MAX - huge) return NULL;
    const size_t whole = (bytes + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, whole);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p) (void)madvise(p, whole, MADV_HUGEPAGE); /* advice: refused or ignored, the 4 KiB pages stay */
#endif
    return p;
}
