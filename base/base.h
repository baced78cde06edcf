/* base.h: what every dse module needs and nothing more: status codes, the error
 * record that carries file:line back to the CLI, and DSE_ASSERT for broken invariants.
 * How errors travel: docs/conventions.md#errors. Needs only libc. */
#ifndef DSE_BASE_H
#define DSE_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

enum dse_status {
    DSE_OK = 0,
    DSE_ERR_CONFIG,      /* bad network/space file or option value */
    DSE_ERR_IO,          /* file missing, unreadable, unwritable */
    DSE_ERR_NOMEM,
    DSE_ERR_SHAPE,       /* shapes that do not fit (negative output, concat mismatch...) */
    DSE_ERR_UNSUPPORTED, /* a layer type or option we do not handle */
    DSE_ERR_CUDA,
    DSE_ERR_INTERNAL
};

/* Room for a path as long as Linux allows (PATH_MAX, its NUL included); a longer one is cut. */
#define DSE_ERR_FILE_MAX 4096

struct dse_err {
    enum dse_status code;
    char            file[DSE_ERR_FILE_MAX]; /* config or data file at fault; "" if none (a copy,
                                               so it never dangles: issue #31) */
    int             line;   /* 1-based; 0 if unknown */
    char            msg[512];
};

/* Name of a status code, e.g. "config error". Never NULL. */
const char *dse_status_str(enum dse_status s);

/* Fill err (if non-NULL) and return code. msg is printf-style. file (NULL for none) is
 * copied into err->file, so a local buffer may be passed; the arguments may point into err. */
enum dse_status dse_err_set(struct dse_err *err, enum dse_status code, const char *file,
                            int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* dse_err_set with the message "layer 'NAME' (TYPE): " and then fmt's text: the one form of an
 * error about one layer (metaparams' shape inference, the CPU kernels). name and type are
 * the layer's name and its type's name, whatever the caller calls a type. */
enum dse_status dse_err_layer(struct dse_err *err, enum dse_status code, const char *file, int line,
                              const char *name, const char *type, const char *fmt, ...)
    __attribute__((cold, format(printf, 7, 8)));
/* The same with fmt's arguments in ap: for a caller that is itself printf-like
 * (engine/cpu/ctx.c's dse_cpu_fail can be one line of it). */
enum dse_status dse_err_vlayer(struct dse_err *err, enum dse_status code, const char *file, int line,
                               const char *name, const char *type, const char *fmt, va_list ap)
    __attribute__((cold, format(printf, 7, 0)));

/* Format err as "file:line: msg" (or "file: msg", or "msg") into buf. Returns buf. */
const char *dse_err_format(const struct dse_err *err, char *buf, int size);

/* If err (may be NULL) names no file yet, it names file now (copied): how a caller that
 * knows the path adds it to an error from code that did not. */
void dse_err_name_file(struct dse_err *err, const char *file);

void dse_assert_fail(const char *file, int line, const char *cond);

#define DSE_ASSERT(cond) \
    ((cond) ? (void)0 : dse_assert_fail(__FILE__, __LINE__, #cond))

#define DSE_ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A large buffer, freed with free(): 64-byte aligned; from 2 MiB up, aligned to 2 MiB, its
 * size rounded up to 2 MiB, and on Linux advised onto transparent huge pages (madvise
 * MADV_HUGEPAGE, which kernels set to THP "madvise" wait for: 4 KiB pages cost a TLB miss,
 * and under a hypervisor a nested page walk, every 1,024 floats; docs/conventions.md,
 * "Ownership"). NULL when out of memory. Not zeroed. */
void *dse_alloc_big(size_t bytes);

/* Copy src into dst of size n, always NUL-terminated. Returns 0 if it fitted, -1 if cut. */
int dse_strlcpy(char *dst, const char *src, int n);

/* Whether path ends in ext (".onnx") after at least one character: the file kinds known by name. */
int dse_has_ext(const char *path, const char *ext);

/* The shortest decimal text that reads back as v: as the double with strtod, or with
 * as_float as the float (float)v with strtof. At least v's integer digits, so 10 is
 * "10", not "1e+01"; 0.1 is "0.1". The one writer of numbers that must read back (records,
 * rungs, reports). */
const char *dse_fmt_shortest(char *buf, size_t size, double v, int as_float);

/* A real-valued setting (sr, pct3x3, dropout) as text: dse_fmt_shortest's double, with
 * ".0" added where that reads as an integer, so 1.0 is "1.0", not "1", and 0.1 is "0.1".
 * The one writer of such values in records, reports, tables, CSV, JSON and plot labels
 * (through dse_mp_value_str for metaparameters). */
const char *dse_fmt_real(char *buf, size_t size, double v);

/* Edit distance between two short strings (for "did you mean" suggestions). */
int dse_edit_distance(const char *a, const char *b);

/* Index of word in a space-separated list of words, or -1. */
int dse_word_index(const char *list, const char *word);

/* The word of the list closest to word (edit distance below 3; the first of equals) into
 * out; returns 0 and leaves out empty if none is that close. */
int dse_word_suggest(const char *list, const char *word, char *out, int size);

/* Enum name tables: names[v] is the name of value v (0 <= v < count), built with designated
 * initializers ([DSE_X_A] = "a") or from the X-macro table that owns the enum. A NULL or ""
 * entry has no name: it is never found, listed or suggested. The one lookup of every such
 * table, so no enum keeps its own strcmp loop (docs/conventions.md, "One fact, one owner"). */

/* names[v], or unknown if v is out of range or has no name. */
const char *dse_name_of(const char *const *names, int count, int v, const char *unknown);

/* The value named s (exact, case-sensitive), or -1 if none is (or s is NULL). */
int dse_name_find(const char *const *names, int count, const char *s);

/* The names in order as "a, b or c" into buf (cut to fit); returns buf. */
const char *dse_name_list(const char *const *names, int count, char *buf, int size);

/* The name closest to s (edit distance below 3; the first of equals) into out; returns 0
 * and leaves out empty if none is that close. */
int dse_name_suggest(const char *const *names, int count, const char *s, char *out, int size);

/* s as a value of names into *out, or DSE_ERR_CONFIG with "WHAT 's' is not known; expected
 * a, b or c" (what, e.g. "precision"; s NULL reads as ""). */
enum dse_status dse_name_parse(const char *const *names, int count, const char *what, const char *s,
                               int *out, struct dse_err *err);

#endif
