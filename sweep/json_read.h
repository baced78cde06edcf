/* json_read.h: a small, strict JSON reader (RFC 8259) for the files of a sweep
 * directory (docs/sweep-dir.md). It builds a read-only tree owned by one document;
 * errors read `path:line: what is wrong; what was expected`. Safe on hostile input:
 * nesting is capped at DSE_JSON_DEPTH_MAX and files at DSE_JSON_SIZE_MAX bytes. */
#ifndef DSE_SWEEP_JSON_READ_H
#define DSE_SWEEP_JSON_READ_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "base/base.h"

#define DSE_JSON_DEPTH_MAX 64                   /* arrays and objects nested inside each other */
#define DSE_JSON_SIZE_MAX  (64 * 1024 * 1024)   /* bytes of one document */

enum dse_json_type {
    DSE_JSON_NULL = 0,
    DSE_JSON_BOOL,
    DSE_JSON_NUMBER,
    DSE_JSON_STRING,
    DSE_JSON_ARRAY,
    DSE_JSON_OBJECT
};

struct dse_json_member;

/* One value. Every pointer in it is owned by its document (struct dse_json_doc). */
struct dse_json {
    enum dse_json_type type;
    int                line;     /* 1-based line where the value starts */
    int                boolean;  /* BOOL: 0 or 1 */
    /* NUMBER: the value as a double (always finite), and, when the value is a whole
     * number that fits, the same value exactly as an int64 (is_int = 1). Integers
     * written without fraction or exponent are read digit by digit, so 2^53 + 1 stays
     * exact in integer even though number rounds it. */
    double             number;
    int                is_int;
    int64_t            integer;
    /* STRING: decoded UTF-8, NUL-terminated; len excludes the NUL (a \u0000 escape
     * makes len larger than strlen). NUMBER: the token as written ("1.0", "2e3"). */
    const char        *str;
    size_t             len;
    /* ARRAY: n items. OBJECT: n members in file order; keys are unique. */
    int                     n;
    const struct dse_json        *items;
    const struct dse_json_member *members;
};

struct dse_json_member {
    const char     *key;        /* decoded UTF-8, NUL-terminated */
    size_t          key_len;
    int             line;       /* 1-based line of the key */
    struct dse_json value;
};

struct dse_json_doc;

/* Parse len bytes of text (UTF-8; a leading byte-order mark is skipped). path names the
 * source in error messages: err->file names it on failure. On
 * success *out is a new document (free with dse_json_free); on failure *out is NULL and
 * err says where and why (DSE_ERR_CONFIG for bad text, DSE_ERR_NOMEM). Rejected: trailing
 * commas, comments, single quotes, leading zeros, NaN/Infinity, numbers that overflow a
 * double, raw control characters and invalid UTF-8 in strings, lone surrogates,
 * duplicate keys, nesting deeper than DSE_JSON_DEPTH_MAX, anything after the value. */
enum dse_status dse_json_parse(const char *text, size_t len, const char *path,
                               struct dse_json_doc **out, struct dse_err *err);

/* Read the file at path and parse it. DSE_ERR_IO if it cannot be opened or read, or is
 * larger than DSE_JSON_SIZE_MAX. path is borrowed as in dse_json_parse. */
enum dse_status dse_json_load(const char *path, struct dse_json_doc **out, struct dse_err *err);

/* Frees doc and every value in it. Accepts NULL. */
void dse_json_free(struct dse_json_doc *doc);

/* The top-level value. */
const struct dse_json *dse_json_root(const struct dse_json_doc *doc);

/* The value of member key of obj, or NULL if obj is not an object or has no such key. */
const struct dse_json *dse_json_get(const struct dse_json *obj, const char *key);

/* "null", "boolean", "number", "string", "array" or "object" (for error messages). */
const char *dse_json_type_str(enum dse_json_type t);

/* Write len bytes of s (UTF-8) to f as a JSON string, quotes included: '"' and '\\'
 * escaped, newline and tab as \n and \t, other control characters and DEL as \u00XX, and
 * each byte that starts no valid UTF-8 sequence (the reader's rule: no overlongs,
 * surrogates or code points above U+10FFFF) as U+FFFD, so that names taken from files
 * and folders (a network's name, a path) never make a JSON file this reader refuses.
 * The one string writer of every JSON file and report dse writes. */
void dse_json_write_str(FILE *f, const char *s, size_t len);

/* The same JSON string into out (size bytes, NUL included), cut after the last whole
 * character that fits so that it stays quoted; its length. */
size_t dse_json_str(char *out, size_t size, const char *s, size_t len);

/* ---- strict members: the readers of a sweep's files (sweep/record.c, sweep/sweep_read.c) ---- */

/* "a number", "an array", ... (for error messages). */
const char *dse_json_a_type(enum dse_json_type t);

/* What a member must be: an integer, a number, a string, an object, an array. */
enum dse_json_want { DSE_JSON_WANT_INT, DSE_JSON_WANT_NUM, DSE_JSON_WANT_STR, DSE_JSON_WANT_OBJ, DSE_JSON_WANT_ARR };

/* DSE_ERR_CONFIG with the message "path:line: ..." (line > 0) or "path: ...". */
enum dse_status dse_json_bad(struct dse_err *err, const char *path, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Member key of obj (in the file path), checked against w; optional: absent or null gives
 * *out = NULL, else either is an error. Errors name path and line. */
enum dse_status dse_json_member(const char *path, const struct dse_json *obj, const char *key,
                                enum dse_json_want w, int optional, const struct dse_json **out,
                                struct dse_err *err);

/* Member key of obj: a required integer >= 0. */
enum dse_status dse_json_count(const char *path, const struct dse_json *obj, const char *key, int64_t *out,
                               struct dse_err *err);

/* ---- lenient values: files dse wrote, where a value of another type reads as a default ---- */

/* v's integer; dflt if v is NULL or not an integer. */
int64_t dse_json_int_or(const struct dse_json *v, int64_t dflt);
/* v's string into out[size] (cut to fit); "" if v is NULL or not a string. */
void dse_json_str_copy(const struct dse_json *v, char *out, int size);

#endif
