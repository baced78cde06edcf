/* json_read.c: a strict recursive-descent JSON reader (RFC 8259) with a depth cap.
 * The document owns a copy of the text; strings are decoded into that copy in place
 * (an escape never decodes longer than it is written), and arrays and objects live in
 * a bump arena freed with the document. Contract and limits: sweep/json_read.h. */
#include "sweep/json_read.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE ((size_t)64 * 1024)
#define ALIGN      (_Alignof(max_align_t))

struct chunk {
    struct chunk *next;
    size_t        cap, used;
    max_align_t   mem[];
};

struct dse_json_doc {
    struct dse_json root;
    char           *text;    /* the input, NUL-terminated; strings point into it */
    struct chunk   *chunks;
};

struct parser {
    char                *p, *end;
    int                  line;
    const char          *path;
    struct dse_json_doc *doc;
    struct dse_err      *err;
};

static void *arena_alloc(struct dse_json_doc *d, size_t size) {
    size = (size + ALIGN - 1) / ALIGN * ALIGN;
    struct chunk *c = d->chunks;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > CHUNK_SIZE ? size : CHUNK_SIZE;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->cap = cap;
        c->used = 0;
        /* A big block gets a chunk of its own behind the current one, which stays open. */
        if (cap > CHUNK_SIZE && d->chunks) {
            c->next = d->chunks->next;
            d->chunks->next = c;
        } else {
            c->next = d->chunks;
            d->chunks = c;
        }
    }
    void *p = (char *)c->mem + c->used;
    c->used += size;
    return p;
}

/* What the parser is looking at, for "unexpected ..." messages. */
static const char *describe(const struct parser *ps, char *buf, size_t size) {
    if (ps->p >= ps->end) return "end of file";
    unsigned char c = (unsigned char)*ps->p;
    if (c == '\'') snprintf(buf, size, "\"'\"");
    else if (c > 0x20 && c < 0x7f) snprintf(buf, size, "'%c'", c);
    else snprintf(buf, size, "byte 0x%02x", c);
    return buf;
}

/* A short printable excerpt of s (for quoting keys and tokens in messages). */
static const char *excerpt(const char *s, size_t len, char *buf, size_t size) {
    size_t o = 0, max = size - 4;
    for (size_t i = 0; i < len && o < max; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    if (o == max && len > max) {
        /* do not cut a UTF-8 sequence in half */
        while (o > 0 && ((unsigned char)buf[o - 1] & 0xc0) == 0x80) o--;
        if (o > 0 && (unsigned char)buf[o - 1] >= 0xc0) o--;
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

static enum dse_status fail(struct parser *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static enum dse_status fail(struct parser *ps, const char *fmt, ...) {
    char    msg[sizeof ps->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return dse_err_set(ps->err, DSE_ERR_CONFIG, ps->path, ps->line, "%s", msg);
}

static enum dse_status nomem(struct parser *ps) {
    return dse_err_set(ps->err, DSE_ERR_NOMEM, ps->path, ps->line, "out of memory");
}

static void skip_ws(struct parser *ps) {
    while (ps->p < ps->end) {
        char c = *ps->p;
        if (c == '\n') ps->line++;
        else if (c != ' ' && c != '\t' && c != '\r') return;
        ps->p++;
    }
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The 4 hex digits at s (s has at least 4 bytes before end), or -1. */
static long hex4(const char *s) {
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(s[i]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates,
 * nothing above U+10FFFF), or 0. */
static int utf8_len(const unsigned char *s, const unsigned char *end) {
    unsigned char c = s[0];
    int n;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c == 0xe0) n = 3, lo = 0xa0;
    else if (c == 0xed) n = 3, hi = 0x9f;
    else if (c >= 0xe1 && c <= 0xef) n = 3;
    else if (c == 0xf0) n = 4, lo = 0x90;
    else if (c == 0xf4) n = 4, hi = 0x8f;
    else if (c >= 0xf1 && c <= 0xf3) n = 4;
    else return 0;
    if (end - s < n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return n;
}

static char *put_utf8(char *w, long cp) {
    if (cp < 0x80) {
        *w++ = (char)cp;
    } else if (cp < 0x800) {
        *w++ = (char)(0xc0 | (cp >> 6));
        *w++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *w++ = (char)(0xe0 | (cp >> 12));
        *w++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *w++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *w++ = (char)(0xf0 | (cp >> 18));
        *w++ = (char)(0x80 | ((cp >> 12) & 0x3f));
        *w++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *w++ = (char)(0x80 | (cp & 0x3f));
    }
    return w;
}

/* At '"': decode the string in place. */
static enum dse_status parse_string(struct parser *ps, const char **out, size_t *out_len) {
    char *start = ++ps->p, *r = start, *w = start;
    char  b1[64];
    for (;;) {
        if (r >= ps->end) {
            ps->p = r;
            return fail(ps, "unexpected end of file in a string; expected a closing '\"'");
        }
        unsigned char c = (unsigned char)*r;
        if (c == '"') break;
        if (c < 0x20) {
            return fail(ps, "raw control character 0x%02x in a string; expected it escaped "
                            "(\\n, \\t, \\u00XX)", c);
        }
        if (c >= 0x80) {
            int n = utf8_len((const unsigned char *)r, (const unsigned char *)ps->end);
            if (!n) {
                return fail(ps, "invalid UTF-8 byte 0x%02x in a string; expected UTF-8 text", c);
            }
            memmove(w, r, (size_t)n);
            w += n, r += n;
            continue;
        }
        if (c != '\\') {
            *w++ = *r++;
            continue;
        }
        if (r + 1 >= ps->end) {
            ps->p = r + 1;
            return fail(ps, "unexpected end of file in a string; expected a closing '\"'");
        }
        char e = r[1];
        switch (e) {
        case '"':  *w++ = '"';  r += 2; continue;
        case '\\': *w++ = '\\'; r += 2; continue;
        case '/':  *w++ = '/';  r += 2; continue;
        case 'b':  *w++ = '\b'; r += 2; continue;
        case 'f':  *w++ = '\f'; r += 2; continue;
        case 'n':  *w++ = '\n'; r += 2; continue;
        case 'r':  *w++ = '\r'; r += 2; continue;
        case 't':  *w++ = '\t'; r += 2; continue;
        case 'u':  break;
        default:
            excerpt(r, 2, b1, sizeof b1);
            return fail(ps, "invalid escape '%s' in a string; expected one of \\\" \\\\ \\/ \\b "
                            "\\f \\n \\r \\t \\uXXXX", b1);
        }
        long cp = ps->end - r >= 6 ? hex4(r + 2) : -1;
        if (cp < 0) {
            excerpt(r, (size_t)(ps->end - r < 6 ? ps->end - r : 6), b1, sizeof b1);
            return fail(ps, "invalid escape '%s' in a string; expected 4 hex digits after \\u", b1);
        }
        if (cp >= 0xdc00 && cp <= 0xdfff) {
            excerpt(r, 6, b1, sizeof b1);
            return fail(ps, "lone low surrogate '%s' in a string; expected it after a high "
                            "surrogate \\uD800-\\uDBFF", b1);
        }
        if (cp >= 0xd800 && cp <= 0xdbff) {
            long lo = ps->end - r >= 12 && r[6] == '\\' && r[7] == 'u' ? hex4(r + 8) : -1;
            if (lo < 0xdc00 || lo > 0xdfff) {
                excerpt(r, 6, b1, sizeof b1);
                return fail(ps, "lone high surrogate '%s' in a string; expected a low surrogate "
                                "\\uDC00-\\uDFFF right after it", b1);
            }
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            r += 6;
        }
        r += 6;
        w = put_utf8(w, cp);
    }
    *w = '\0'; /* w <= r, and r is at the closing quote, which is consumed */
    *out = start;
    *out_len = (size_t)(w - start);
    ps->p = r + 1;
    return DSE_OK;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int is_delim(char c) {
    return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* "<head> '<token>'<tail>", the token cut at the next delimiter. */
static enum dse_status bad_number(struct parser *ps, const char *start, const char *head,
                                  const char *tail) {
    const char *e = start;
    char        buf[40];
    while (e < ps->end && !is_delim(*e) && e - start < 32) e++;
    excerpt(start, (size_t)(e - start), buf, sizeof buf);
    return fail(ps, "%s '%s'%s", head, buf, tail);
}

static enum dse_status parse_number(struct parser *ps, struct dse_json *v) {
    char *start = ps->p, *p = ps->p, *end = ps->end;
    int   neg = 0, plain = 1;
    if (*p == '-') neg = 1, p++;
    if (p >= end || !is_digit(*p))
        return bad_number(ps, start, "invalid number", "; expected a digit after '-'");
    if (*p == '0') {
        p++;
        if (p < end && is_digit(*p))
            return bad_number(ps, start, "invalid number", ": leading zeros are not allowed; "
                              "expected e.g. 7 or 0.7");
    } else {
        while (p < end && is_digit(*p)) p++;
    }
    if (p < end && *p == '.') {
        plain = 0, p++;
        if (p >= end || !is_digit(*p))
            return bad_number(ps, start, "invalid number", "; expected a digit after '.'");
        while (p < end && is_digit(*p)) p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        plain = 0, p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || !is_digit(*p))
            return bad_number(ps, start, "invalid number", "; expected a digit in the exponent");
        while (p < end && is_digit(*p)) p++;
    }
    /* strtod needs a terminated copy: the token may run up to a byte strtod would read
     * further (a hex 'x', say). */
    size_t n = (size_t)(p - start);
    char   small[64], *tok = n < sizeof small ? small : malloc(n + 1);
    if (!tok) return nomem(ps);
    memcpy(tok, start, n);
    tok[n] = '\0';
    double d = strtod(tok, NULL);
    if (tok != small) free(tok);
    if (isinf(d))
        return bad_number(ps, start, "number", " is out of range; expected a finite "
                          "number (|x| < 1.8e308)");
    char *raw = arena_alloc(ps->doc, n + 1);
    if (!raw) return nomem(ps);
    memcpy(raw, start, n);
    raw[n] = '\0';
    v->type = DSE_JSON_NUMBER;
    v->str = raw;
    v->len = n;
    v->number = d;
    v->is_int = 0;
    if (plain) { /* exact, digit by digit */
        uint64_t mag = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        int      fits = 1;
        for (const char *q = start + neg; q < p && fits; q++) {
            uint64_t dgt = (uint64_t)(*q - '0');
            if (mag > (lim - dgt) / 10) fits = 0;
            else mag = mag * 10 + dgt;
        }
        if (fits) {
            v->is_int = 1;
            v->integer = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag)
                             : (int64_t)mag;
        }
    } else if (d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
        v->is_int = 1;
        v->integer = (int64_t)d;
    }
    ps->p = p;
    return DSE_OK;
}

static const char value_expected[] =
    "expected a value (object, array, string, number, true, false or null)";

static enum dse_status parse_value(struct parser *ps, struct dse_json *v, int depth);

static enum dse_status parse_array(struct parser *ps, struct dse_json *v, int depth) {
    struct dse_json *items = NULL;
    int              n = 0, cap = 0;
    enum dse_status  st = DSE_OK;
    char             buf[32];
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
        goto done;
    }
    for (;;) {
        if (n == cap) {
            if (cap >= INT32_MAX / 4) { st = nomem(ps); goto out; }
            cap = cap ? 2 * cap : 8;
            void *q = realloc(items, sizeof *items * (size_t)cap);
            if (!q) { st = nomem(ps); goto out; }
            items = q;
        }
        if ((st = parse_value(ps, &items[n], depth + 1))) goto out;
        n++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == ']') {
            ps->p++;
            break;
        }
        st = fail(ps, "unexpected %s in an array; expected ',' or ']'",
                  describe(ps, buf, sizeof buf));
        goto out;
    }
done:
    v->type = DSE_JSON_ARRAY;
    v->n = n;
    if (n) {
        struct dse_json *a = arena_alloc(ps->doc, sizeof *a * (size_t)n);
        if (!a) { st = nomem(ps); goto out; }
        memcpy(a, items, sizeof *a * (size_t)n);
        v->items = a;
    }
out:
    free(items);
    return st;
}

static int member_cmp(const void *a, const void *b) {
    const struct dse_json_member *x = *(const struct dse_json_member *const *)a;
    const struct dse_json_member *y = *(const struct dse_json_member *const *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int    c = memcmp(x->key, y->key, n);
    if (c) return c;
    if (x->key_len != y->key_len) return x->key_len < y->key_len ? -1 : 1;
    return x < y ? -1 : x > y; /* file order among equal keys */
}

/* The first member (in file order) whose key an earlier member already used, or NULL.
 * Sorting keeps this O(n log n) on hostile objects with many keys. */
static enum dse_status find_duplicate(struct parser *ps, struct dse_json_member *m, int n,
                                      const struct dse_json_member **dup) {
    *dup = NULL;
    if (n < 2) return DSE_OK;
    const struct dse_json_member **s = malloc(sizeof *s * (size_t)n);
    if (!s) return nomem(ps);
    for (int i = 0; i < n; i++) s[i] = &m[i];
    qsort(s, (size_t)n, sizeof *s, member_cmp);
    for (int i = 1; i < n; i++)
        if (s[i]->key_len == s[i - 1]->key_len && !memcmp(s[i]->key, s[i - 1]->key, s[i]->key_len)
            && (!*dup || s[i] < *dup))
            *dup = s[i];
    free(s);
    return DSE_OK;
}

static enum dse_status parse_object(struct parser *ps, struct dse_json *v, int depth) {
    struct dse_json_member *m = NULL;
    int                     n = 0, cap = 0;
    enum dse_status         st = DSE_OK;
    char                    buf[32], kbuf[72];
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') {
        ps->p++;
        goto done;
    }
    for (;;) {
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != '"') {
            st = fail(ps, "unexpected %s in an object; expected a key in double quotes",
                      describe(ps, buf, sizeof buf));
            goto out;
        }
        if (n == cap) {
            if (cap >= INT32_MAX / 4) { st = nomem(ps); goto out; }
            cap = cap ? 2 * cap : 8;
            void *q = realloc(m, sizeof *m * (size_t)cap);
            if (!q) { st = nomem(ps); goto out; }
            m = q;
        }
        memset(&m[n], 0, sizeof m[n]);
        m[n].line = ps->line;
        if ((st = parse_string(ps, &m[n].key, &m[n].key_len))) goto out;
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != ':') {
            st = fail(ps, "unexpected %s after key \"%s\"; expected ':'",
                      describe(ps, buf, sizeof buf), excerpt(m[n].key, m[n].key_len, kbuf, 40));
            goto out;
        }
        ps->p++;
        if ((st = parse_value(ps, &m[n].value, depth + 1))) goto out;
        n++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == '}') {
            ps->p++;
            break;
        }
        st = fail(ps, "unexpected %s in an object; expected ',' or '}'",
                  describe(ps, buf, sizeof buf));
        goto out;
    }
    const struct dse_json_member *dup;
    if ((st = find_duplicate(ps, m, n, &dup))) goto out;
    if (dup) {
        st = dse_err_set(ps->err, DSE_ERR_CONFIG, ps->path, dup->line,
                         "duplicate key \"%s\"; expected each key once in an object",
                         excerpt(dup->key, dup->key_len, kbuf, 40));
        goto out;
    }
done:
    v->type = DSE_JSON_OBJECT;
    v->n = n;
    if (n) {
        struct dse_json_member *a = arena_alloc(ps->doc, sizeof *a * (size_t)n);
        if (!a) { st = nomem(ps); goto out; }
        memcpy(a, m, sizeof *a * (size_t)n);
        v->members = a;
    }
out:
    free(m);
    return st;
}

static int is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

static enum dse_status parse_value(struct parser *ps, struct dse_json *v, int depth) {
    char buf[40];
    memset(v, 0, sizeof *v);
    skip_ws(ps);
    v->line = ps->line;
    if (ps->p >= ps->end) return fail(ps, "unexpected %s; %s", "end of file", value_expected);
    char c = *ps->p;
    if (c == '[' || c == '{') {
        if (depth >= DSE_JSON_DEPTH_MAX) {
            return fail(ps, "arrays and objects nested more than %d deep; expected at most %d "
                            "levels", DSE_JSON_DEPTH_MAX, DSE_JSON_DEPTH_MAX);
        }
        return c == '[' ? parse_array(ps, v, depth) : parse_object(ps, v, depth);
    }
    if (c == '"') {
        v->type = DSE_JSON_STRING;
        return parse_string(ps, &v->str, &v->len);
    }
    if (c == '-' || is_digit(c)) return parse_number(ps, v);
    if (is_word(c)) {
        const char *s = ps->p;
        while (ps->p < ps->end && is_word(*ps->p)) ps->p++;
        size_t n = (size_t)(ps->p - s);
        if (n == 4 && !memcmp(s, "true", 4)) v->type = DSE_JSON_BOOL, v->boolean = 1;
        else if (n == 5 && !memcmp(s, "false", 5)) v->type = DSE_JSON_BOOL;
        else if (n == 4 && !memcmp(s, "null", 4)) v->type = DSE_JSON_NULL;
        else {
            ps->p = (char *)s;
            return fail(ps, "unexpected word '%s'; %s", excerpt(s, n, buf, sizeof buf),
                        value_expected);
        }
        return DSE_OK;
    }
    return fail(ps, "unexpected %s; %s", describe(ps, buf, sizeof buf), value_expected);
}

/* Takes ownership of text (len bytes plus a NUL after them). */
static enum dse_status parse_owned(char *text, size_t len, const char *path,
                                   struct dse_json_doc **out, struct dse_err *err) {
    *out = NULL;
    struct dse_json_doc *d = calloc(1, sizeof *d);
    if (!d) {
        free(text);
        return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
    }
    d->text = text;
    struct parser ps = { .p = text, .end = text + len, .line = 1, .path = path, .doc = d, .err = err };
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) ps.p += 3;
    enum dse_status st = parse_value(&ps, &d->root, 0);
    if (!st) {
        char buf[32];
        skip_ws(&ps);
        if (ps.p < ps.end)
            st = fail(&ps, "unexpected %s after the top-level value; expected the end of the file",
                      describe(&ps, buf, sizeof buf));
    }
    if (st) {
        dse_json_free(d);
        return st;
    }
    *out = d;
    return DSE_OK;
}

enum dse_status dse_json_parse(const char *text, size_t len, const char *path,
                               struct dse_json_doc **out, struct dse_err *err) {
    *out = NULL;
    if (len > DSE_JSON_SIZE_MAX)
        return dse_err_set(err, DSE_ERR_CONFIG, path, 0, "document of %zu bytes is too large; "
                           "expected at most %d bytes", len, DSE_JSON_SIZE_MAX);
    char *copy = malloc(len + 1);
    if (!copy) return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
    if (len) memcpy(copy, text, len);
    copy[len] = '\0';
    return parse_owned(copy, len, path, out, err);
}

enum dse_status dse_json_load(const char *path, struct dse_json_doc **out, struct dse_err *err) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return dse_err_set(err, DSE_ERR_IO, path, 0, "cannot open: %s", strerror(errno));
    size_t len = 0, cap = 4096;
    char  *buf = malloc(cap + 1);
    if (!buf) {
        fclose(f);
        return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
    }
    for (;;) {
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
        if (len == cap) {
            if (cap > DSE_JSON_SIZE_MAX) {
                free(buf);
                fclose(f);
                return dse_err_set(err, DSE_ERR_IO, path, 0, "file is larger than %d bytes; "
                                   "expected a small JSON file", DSE_JSON_SIZE_MAX);
            }
            char *q = realloc(buf, 2 * cap + 1);
            if (!q) {
                free(buf);
                fclose(f);
                return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
            }
            buf = q;
            cap *= 2;
        }
    }
    int bad = ferror(f), e = errno;
    fclose(f);
    if (bad) {
        free(buf);
        return dse_err_set(err, DSE_ERR_IO, path, 0, "cannot read: %s", strerror(e));
    }
    buf[len] = '\0';
    return parse_owned(buf, len, path, out, err);
}

void dse_json_free(struct dse_json_doc *doc) {
    if (!doc) return;
    for (struct chunk *c = doc->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(doc->text);
    free(doc);
}

const struct dse_json *dse_json_root(const struct dse_json_doc *doc) { return &doc->root; }

const struct dse_json *dse_json_get(const struct dse_json *obj, const char *key) {
    if (!obj || obj->type != DSE_JSON_OBJECT) return NULL;
    size_t n = strlen(key);
    for (int i = 0; i < obj->n; i++)
        if (obj->members[i].key_len == n && !memcmp(obj->members[i].key, key, n))
            return &obj->members[i].value;
    return NULL;
}

const char *dse_json_type_str(enum dse_json_type t) {
    switch (t) {
    case DSE_JSON_NULL:   return "null";
    case DSE_JSON_BOOL:   return "boolean";
    case DSE_JSON_NUMBER: return "number";
    case DSE_JSON_STRING: return "string";
    case DSE_JSON_ARRAY:  return "array";
    case DSE_JSON_OBJECT: return "object";
    }
    return "unknown";
}

/* The JSON text of the character at u[*i] (up to 6 bytes, not NUL-terminated): its length;
 * *i moves past it. */
static int json_char(const unsigned char *u, size_t len, size_t *i, char out[6]) {
    unsigned char ch = u[*i];
    int n = 1;
    if (ch == '"' || ch == '\\') out[0] = '\\', out[1] = (char)ch, n = 2;
    else if (ch == '\n') memcpy(out, "\\n", 2), n = 2;
    else if (ch == '\t') memcpy(out, "\\t", 2), n = 2;
    else if (ch < 0x20 || ch == 0x7f) {
        static const char hex[] = "0123456789abcdef";
        memcpy(out, "\\u00", 4), out[4] = hex[ch >> 4], out[5] = hex[ch & 15], n = 6;
    } else if (ch < 0x80) out[0] = (char)ch;
    else if ((n = utf8_len(u + *i, u + len)) > 0) {
        memcpy(out, u + *i, (size_t)n);
        *i += (size_t)n;
        return n;
    } else memcpy(out, "\xef\xbf\xbd", 3), n = 3; /* U+FFFD for a byte that starts no valid sequence */
    (*i)++;
    return n;
}

void dse_json_write_str(FILE *f, const char *s, size_t len) {
    char piece[6];
    fputc('"', f);
    for (size_t i = 0; i < len;) fwrite(piece, 1, (size_t)json_char((const unsigned char *)s, len, &i, piece), f);
    fputc('"', f);
}

size_t dse_json_str(char *out, size_t size, const char *s, size_t len) {
    char piece[6];
    size_t o = 1;
    if (size < 3) return size ? (out[0] = '\0', 0) : 0;
    out[0] = '"';
    for (size_t i = 0; i < len;) {
        int n = json_char((const unsigned char *)s, len, &i, piece);
        if (o + (size_t)n + 2 > size) break; /* room for the closing quote and NUL */
        memcpy(out + o, piece, (size_t)n);
        o += (size_t)n;
    }
    out[o++] = '"';
    out[o] = '\0';
    return o;
}

/* ---- strict members ------------------------------------------------------------------------ */

const char *dse_json_a_type(enum dse_json_type t) {
    switch (t) {
    case DSE_JSON_NULL:   return "null";
    case DSE_JSON_BOOL:   return "a boolean";
    case DSE_JSON_NUMBER: return "a number";
    case DSE_JSON_STRING: return "a string";
    case DSE_JSON_ARRAY:  return "an array";
    case DSE_JSON_OBJECT: return "an object";
    }
    return "a value";
}

enum dse_status dse_json_bad(struct dse_err *err, const char *path, int line, const char *fmt, ...) {
    char    msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0) return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s:%d: %s", path, line, msg);
    return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: %s", path, msg);
}

static const char *const want_str[] = {
    [DSE_JSON_WANT_INT] = "an integer", [DSE_JSON_WANT_NUM] = "a number", [DSE_JSON_WANT_STR] = "a string",
    [DSE_JSON_WANT_OBJ] = "an object",  [DSE_JSON_WANT_ARR] = "an array",
};

enum dse_status dse_json_member(const char *path, const struct dse_json *obj, const char *key,
                                enum dse_json_want w, int optional, const struct dse_json **out,
                                struct dse_err *err) {
    const struct dse_json *v = dse_json_get(obj, key);
    *out = NULL;
    if (!v || v->type == DSE_JSON_NULL) {
        if (optional) return DSE_OK;
        if (!v) return dse_json_bad(err, path, obj->line, "missing key \"%s\"; expected %s", key, want_str[w]);
        return dse_json_bad(err, path, v->line, "\"%s\" is null; expected %s", key, want_str[w]);
    }
    static const enum dse_json_type type_of[] = {
        [DSE_JSON_WANT_INT] = DSE_JSON_NUMBER, [DSE_JSON_WANT_NUM] = DSE_JSON_NUMBER,
        [DSE_JSON_WANT_STR] = DSE_JSON_STRING, [DSE_JSON_WANT_OBJ] = DSE_JSON_OBJECT,
        [DSE_JSON_WANT_ARR] = DSE_JSON_ARRAY,
    };
    if (v->type != type_of[w])
        return dse_json_bad(err, path, v->line, "\"%s\" is %s; expected %s%s", key, dse_json_a_type(v->type),
                            want_str[w], optional ? " or null" : "");
    if (w == DSE_JSON_WANT_INT && !v->is_int)
        return dse_json_bad(err, path, v->line, "\"%s\" = %.40s is not an integer; expected an integer%s", key,
                            v->str, optional ? " or null" : "");
    *out = v;
    return DSE_OK;
}

enum dse_status dse_json_count(const char *path, const struct dse_json *obj, const char *key, int64_t *out,
                               struct dse_err *err) {
    const struct dse_json *v;
    enum dse_status st = dse_json_member(path, obj, key, DSE_JSON_WANT_INT, 0, &v, err);
    if (st) return st;
    if (v->integer < 0)
        return dse_json_bad(err, path, v->line, "\"%s\" = %" PRId64 " is negative; expected an integer >= 0", key,
                            v->integer);
    *out = v->integer;
    return DSE_OK;
}

/* ---- lenient values -------------------------------------------------------------------------- */

int64_t dse_json_int_or(const struct dse_json *v, int64_t dflt) {
    return v && v->type == DSE_JSON_NUMBER && v->is_int ? v->integer : dflt;
}

void dse_json_str_copy(const struct dse_json *v, char *out, int size) {
    out[0] = '\0';
    if (v && v->type == DSE_JSON_STRING) dse_strlcpy(out, v->str, size);
}
