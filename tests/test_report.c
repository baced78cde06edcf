/* test_report.c: `dse report` and what it stands on: the Pareto frontier
 * (analysis/pareto.c), the strict JSON reader (dse/json_read.c) and the sweep report in
 * every format plus the SVG plot (dse/report_sweep.c). Fixtures: tests/sweeps/ (see its
 * README) and small sweep directories written under a mkdtemp directory. Runs from the
 * repository root. DSE_UPDATE_GOLDEN=1 rewrites tests/sweeps/golden/. */
#include "sweep/lease.h"
#include "dse/report.h"
#include "sweep/sweep.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "base/fs.h"
#include "sweep/json_read.h"
#include "sweep/sweep_impl.h"
#include "sweep/sweep_read.h"
#include "tests/check.h"

/* ---- helpers ------------------------------------------------------------------------ */

/* The memstream's pointer and size live on the heap: with them on the stack, gcc -O2
 * takes every pointer into the report for a pointer to a local (-Wdangling-pointer). */
struct membuf {
    char  *buf;
    size_t len;
};

static char *run_report(const char *dir, enum dse_format fmt, const char *plot,
                        enum dse_status *st, struct dse_err *err) {
    struct membuf *m = calloc(1, sizeof *m);
    FILE          *f = m ? open_memstream(&m->buf, &m->len) : NULL;
    if (!f) {
        free(m);
        *st = DSE_ERR_NOMEM;
        return NULL;
    }
    *st = dse_report_sweep(f, dir, fmt, plot, NULL, err);
    fclose(f);
    char *out = m->buf;
    free(m);
    return out;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    struct membuf *mb = calloc(1, sizeof *mb);
    FILE          *m = mb ? open_memstream(&mb->buf, &mb->len) : NULL;
    char           chunk[4096];
    size_t         got;
    if (!m) {
        free(mb);
        fclose(f);
        return NULL;
    }
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, got, m);
    fclose(f);
    fclose(m);
    char *out = mb->buf;
    free(mb);
    return out;
}

static void write_file(const char *dir, const char *rel, const char *text) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void rm_tree(const char *path) {
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char sub[1024];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rm_tree(sub);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int starts_with(const char *s, const char *prefix) {
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static int count_of(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* Compares text with tests/sweeps/golden/<name>, or rewrites it with DSE_UPDATE_GOLDEN=1. */
static void check_golden(const char *name, const char *text) {
    char path[256];
    snprintf(path, sizeof path, "tests/sweeps/golden/%s", name);
    const char *upd = getenv("DSE_UPDATE_GOLDEN");
    if (upd && *upd && strcmp(upd, "0") != 0) {
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (f) fputs(text, f), fclose(f);
        return;
    }
    char *want = slurp(path);
    CHECK(want != NULL);
    if (want && strcmp(want, text) != 0) {
        size_t i = 0;
        while (want[i] && want[i] == text[i]) i++;
        fprintf(stderr, "  %s differs at byte %zu (DSE_UPDATE_GOLDEN=1 rewrites it):\n  got  "
                "\"%.60s\"\n  want \"%.60s\"\n", path, i, text + i, want + i);
        CHECK(!"output matches the golden file");
    }
    free(want);
}

/* ---- pareto ------------------------------------------------------------------------- */

static void check_front(const double *x, const double *y, int n, int maxy, const int *want,
                        int nwant) {
    int out[64], scratch[64];
    int k = dse_pareto_front(x, y, n, maxy, out, scratch);
    CHECK_INT_EQ(k, nwant);
    for (int i = 0; i < k && i < nwant; i++) CHECK_INT_EQ(out[i], want[i]);
}

static void test_pareto_basic(void) {
    /* minimize both: 0 dominates 3; 4 is dominated by 1 */
    double x[] = { 1, 2, 3, 4, 2.5, 5 };
    double y[] = { 5, 3, 1, 6, 3.5, 0.5 };
    const int w0[] = { 0, 1, 2, 5 };
    check_front(x, y, 6, 0, w0, 4);
    /* maximize y (accuracy): a rising staircase; 2 and 4 fall below earlier points */
    double ax[] = { 4.8, 5.9, 7.2, 8.7, 10.2, 11.9 };
    double ay[] = { 0.54, 0.57, 0.56, 0.58, 0.575, 0.59 };
    const int w1[] = { 0, 1, 3, 5 };
    check_front(ax, ay, 6, 1, w1, 4);
    /* output is in increasing x whatever the input order */
    double rx[] = { 9, 1, 5 }, ry[] = { 1, 9, 5 };
    const int w2[] = { 1, 2, 0 };
    check_front(rx, ry, 3, 0, w2, 3);
    int out[1], scratch[1];
    CHECK_INT_EQ(dse_pareto_front(NULL, NULL, 0, 0, out, scratch), 0);
    double one = 3.0;
    const int w3[] = { 0 };
    check_front(&one, &one, 1, 1, w3, 1);
}

static void test_pareto_ties(void) {
    /* equal points are all kept, in index order */
    double x[] = { 2, 1, 1, 2 }, y[] = { 1, 3, 3, 1 };
    const int w0[] = { 1, 2, 0, 3 };
    check_front(x, y, 4, 0, w0, 4);
    /* same x: only the best y; same y: only the smallest x */
    double x1[] = { 1, 1, 2, 3 }, y1[] = { 4, 2, 2, 1 };
    const int w1[] = { 1, 3 };
    check_front(x1, y1, 4, 0, w1, 2);
    /* same x, maximize: the highest y wins */
    const int w2[] = { 0 };
    check_front(x1, y1, 4, 1, w2, 1);
    /* a dominated pair of equal points is dropped together */
    double x3[] = { 1, 2, 2 }, y3[] = { 1, 2, 2 };
    const int w3[] = { 0 };
    check_front(x3, y3, 3, 0, w3, 1);
    /* all equal: all kept */
    double e[] = { 7, 7, 7 };
    const int w4[] = { 0, 1, 2 };
    check_front(e, e, 3, 1, w4, 3);
}

static void test_pareto_nan(void) {
    double x[] = { NAN, 2, 1, 3, 0.5 }, y[] = { 0, 2, NAN, 1, NAN };
    const int w0[] = { 1, 3 };
    check_front(x, y, 5, 0, w0, 2);
    double n2[] = { NAN, NAN };
    int    out[2], scratch[2];
    CHECK_INT_EQ(dse_pareto_front(n2, n2, 2, 0, out, scratch), 0);
    /* infinities are ordinary values */
    double ix[] = { INFINITY, 1, 2 }, iy[] = { -INFINITY, 5, -INFINITY };
    const int w1[] = { 1, 2 };
    check_front(ix, iy, 3, 0, w1, 2);
}

/* Against the definition, O(n^2), on random small-integer points (many ties). */
static void test_pareto_brute(void) {
    uint64_t state = 0x853c49e6748fea9bULL;
    for (int trial = 0; trial < 400; trial++) {
        double x[40], y[40];
        int    n = 1 + trial % 40, maxy = trial & 1;
        for (int i = 0; i < n; i++) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            x[i] = (double)((state >> 33) % 8);
            y[i] = (double)((state >> 45) % 8);
            if ((state >> 60) == 0) y[i] = NAN;
        }
        int want[40], nw = 0;
        for (int i = 0; i < n; i++) {
            if (isnan(x[i]) || isnan(y[i])) continue;
            int dominated = 0;
            for (int j = 0; j < n && !dominated; j++) {
                if (isnan(x[j]) || isnan(y[j])) continue;
                double gi = maxy ? -y[i] : y[i], gj = maxy ? -y[j] : y[j];
                dominated = x[j] <= x[i] && gj <= gi && (x[j] < x[i] || gj < gi);
            }
            if (!dominated) want[nw++] = i;
        }
        for (int a = 1; a < nw; a++) /* by x, then index */
            for (int b = a; b > 0 && (x[want[b]] < x[want[b - 1]] ||
                                      (x[want[b]] == x[want[b - 1]] && want[b] < want[b - 1])); b--) {
                int t = want[b];
                want[b] = want[b - 1];
                want[b - 1] = t;
            }
        int before = check_failures;
        check_front(x, y, n, maxy, want, nw);
        if (check_failures > before) {
            fprintf(stderr, "  (trial %d)\n", trial);
            return;
        }
    }
}

/* ---- JSON reader -------------------------------------------------------------------- */

static struct dse_json_doc *parse(const char *text, struct dse_err *err) {
    struct dse_json_doc *d = NULL;
    dse_json_parse(text, strlen(text), "t.json", &d, err);
    return d;
}

/* The writer (dse_json_write_str, dse_json_str): escapes, and each byte that starts no
 * valid UTF-8 sequence as U+FFFD, so that what it writes the strict reader reads. */
static void test_json_write(void) {
    static const struct { const char *id, *in, *out; } cases[] = {
        { "ascii",     "fire2",                     "\"fire2\"" },
        { "escapes",   "a\"b\\c\nd\te\x01\x7f",       "\"a\\\"b\\\\c\\nd\\te\\u0001\\u007f\"" },
        { "valid",     "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"" },
        { "bad-byte",  "a\xffz",                   "\"a\xef\xbf\xbdz\"" },
        { "truncated", "a\xc3",                    "\"a\xef\xbf\xbd\"" },
        { "lone-cont", "\x80\xbf",                  "\"\xef\xbf\xbd\xef\xbf\xbd\"" },
        { "overlong",  "\xc0\xaf",                  "\"\xef\xbf\xbd\xef\xbf\xbd\"" },
        { "surrogate", "\xed\xa0\x80",              "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },
        { "above-max", "\xf4\x90\x80\x80",          "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        char  *text = NULL, buf[64];
        size_t len = 0;
        FILE  *f = open_memstream(&text, &len);
        dse_json_write_str(f, cases[i].in, strlen(cases[i].in));
        fclose(f);
        CHECK_STR_EQ(text, cases[i].out);
        CHECK_INT_EQ(dse_json_str(buf, sizeof buf, cases[i].in, strlen(cases[i].in)), strlen(cases[i].out));
        CHECK_STR_EQ(buf, cases[i].out);
        struct dse_json_doc *d = NULL;
        struct dse_err       err = { 0 };
        CHECK_OK(dse_json_parse(text, len, "t.json", &d, &err));
        if (!d) fprintf(stderr, "  case %s: %s\n", cases[i].id, err.msg);
        dse_json_free(d);
        free(text);
    }
    char buf[7]; /* cut before a character that does not fit whole (U+FFFD: 3 bytes), still quoted */
    CHECK_INT_EQ(dse_json_str(buf, sizeof buf, "ab\xffz", 4), 4);
    CHECK_STR_EQ(buf, "\"ab\"");
}

static void test_json_read(void) {
    static const char text[] =
        "\xef\xbb\xbf{\"a\": [1, -2.5e3, true, false, null, \"x\\u00e9\\ud83d\\ude00\\n\\\"\\/\"],\n"
        " \"b\": {\"c\": 9007199254740993, \"e\": {}},\n"
        " \"big\": 123456789012345678901, \"min\": -9223372036854775808,\n"
        " \"f\": 1.0, \"z\": \"a\\u0000b\", \"neg0\": -0, \"e3\": 2E+3, \"frac\": 0.125,\n"
        " \"raw\": \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\", \"arr\": []}";
    struct dse_err       err = { 0 };
    struct dse_json_doc *d = parse(text, &err);
    CHECK(d != NULL);
    if (!d) {
        fprintf(stderr, "  %s\n", err.msg);
        return;
    }
    const struct dse_json *r = dse_json_root(d), *v;
    CHECK_INT_EQ(r->type, DSE_JSON_OBJECT);
    CHECK_INT_EQ(r->n, 11);
    CHECK_STR_EQ(r->members[1].key, "b");
    CHECK_INT_EQ(r->members[1].line, 2);
    v = dse_json_get(r, "a");
    CHECK(v && v->type == DSE_JSON_ARRAY && v->n == 6);
    if (v && v->n == 6) {
        CHECK(v->items[0].is_int && v->items[0].integer == 1);
        CHECK(v->items[1].is_int && v->items[1].integer == -2500 && v->items[1].number == -2500.0);
        CHECK_STR_EQ(v->items[1].str, "-2.5e3");
        CHECK(v->items[2].type == DSE_JSON_BOOL && v->items[2].boolean == 1);
        CHECK(v->items[3].type == DSE_JSON_BOOL && v->items[3].boolean == 0);
        CHECK_INT_EQ(v->items[4].type, DSE_JSON_NULL);
        CHECK_STR_EQ(v->items[5].str, "x\xc3\xa9\xf0\x9f\x98\x80\n\"/");
        CHECK_INT_EQ(v->items[5].len, 10);
        CHECK_INT_EQ(v->items[5].line, 1);
    }
    v = dse_json_get(dse_json_get(r, "b"), "c");
    CHECK(v && v->is_int && v->integer == INT64_C(9007199254740993)); /* 2^53 + 1, exact */
    CHECK(v && v->number == 9007199254740992.0);
    CHECK_INT_EQ(v ? v->line : 0, 2);
    v = dse_json_get(dse_json_get(r, "b"), "e");
    CHECK(v && v->type == DSE_JSON_OBJECT && v->n == 0);
    v = dse_json_get(r, "big");
    CHECK(v && !v->is_int && fabs(v->number - 1.2345678901234568e20) < 1e5);
    v = dse_json_get(r, "min");
    CHECK(v && v->is_int && v->integer == INT64_MIN);
    v = dse_json_get(r, "f");
    CHECK(v && v->is_int && v->integer == 1 && !strcmp(v->str, "1.0"));
    v = dse_json_get(r, "z");
    CHECK(v && v->len == 3 && !memcmp(v->str, "a\0b", 4));
    v = dse_json_get(r, "neg0");
    CHECK(v && v->is_int && v->integer == 0);
    v = dse_json_get(r, "e3");
    CHECK(v && v->is_int && v->integer == 2000);
    v = dse_json_get(r, "frac");
    CHECK(v && !v->is_int && v->number == 0.125);
    v = dse_json_get(r, "raw");
    CHECK(v && !strcmp(v->str, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
    v = dse_json_get(r, "arr");
    CHECK(v && v->type == DSE_JSON_ARRAY && v->n == 0);
    CHECK(dse_json_get(r, "nope") == NULL);
    CHECK(dse_json_get(dse_json_get(r, "f"), "x") == NULL);
    CHECK_STR_EQ(dse_json_type_str(DSE_JSON_OBJECT), "object");
    dse_json_free(d);
    dse_json_free(NULL);

    /* exactly DSE_JSON_DEPTH_MAX levels are fine; scalars at the top too */
    char deep[2 * DSE_JSON_DEPTH_MAX + 1];
    for (int i = 0; i < DSE_JSON_DEPTH_MAX; i++) {
        deep[i] = '[';
        deep[DSE_JSON_DEPTH_MAX + i] = ']';
    }
    deep[2 * DSE_JSON_DEPTH_MAX] = '\0';
    d = parse(deep, &err);
    CHECK(d != NULL);
    dse_json_free(d);
    d = parse(" \"s\" \n", &err);
    CHECK(d && dse_json_root(d)->type == DSE_JSON_STRING);
    dse_json_free(d);
    d = parse("-0.5e-2", &err);
    CHECK(d && dse_json_root(d)->number == -0.005);
    dse_json_free(d);

    /* a missing file is an I/O error naming it */
    CHECK_INT_EQ(dse_json_load("tests/sweeps/no_such.json", &d, &err), DSE_ERR_IO);
    CHECK(d == NULL);
    CHECK_STR_EQ(err.file, "tests/sweeps/no_such.json");
    CHECK_STR_EQ(err.msg, "cannot open: No such file or directory");
}

static void test_json_errors(void) {
    static const struct { const char *text, *want; } cases[] = {
        { "", "t.json:1: unexpected end of file; expected a value (object, array, string, "
              "number, true, false or null)" },
        { "{\"a\": 1,}", "t.json:1: unexpected '}' in an object; expected a key in double quotes" },
        { "[1, 2,]", "t.json:1: unexpected ']'; expected a value (object, array, string, number, "
                     "true, false or null)" },
        { "{\n\"a\": 01}", "t.json:2: invalid number '01': leading zeros are not allowed; "
                           "expected e.g. 7 or 0.7" },
        { "[1.]", "t.json:1: invalid number '1.'; expected a digit after '.'" },
        { "[2e]", "t.json:1: invalid number '2e'; expected a digit in the exponent" },
        { "-", "t.json:1: invalid number '-'; expected a digit after '-'" },
        { "[1e400]", "t.json:1: number '1e400' is out of range; expected a finite number "
                     "(|x| < 1.8e308)" },
        { "[NaN]", "t.json:1: unexpected word 'NaN'; expected a value (object, array, string, "
                   "number, true, false or null)" },
        { "[tru]", "t.json:1: unexpected word 'tru'; expected a value (object, array, string, "
                   "number, true, false or null)" },
        { "{'a': 1}", "t.json:1: unexpected \"'\" in an object; expected a key in double quotes" },
        { "{\"a\" 1}", "t.json:1: unexpected '1' after key \"a\"; expected ':'" },
        { "{\"a\": 1,\n \"b\": 2,\n \"a\": 3}",
          "t.json:3: duplicate key \"a\"; expected each key once in an object" },
        { "\"abc", "t.json:1: unexpected end of file in a string; expected a closing '\"'" },
        { "[\"a\tb\"]", "t.json:1: raw control character 0x09 in a string; expected it escaped "
                        "(\\n, \\t, \\u00XX)" },
        { "\"\\x\"", "t.json:1: invalid escape '\\x' in a string; expected one of \\\" \\\\ \\/ "
                     "\\b \\f \\n \\r \\t \\uXXXX" },
        { "\"\\u12G4\"", "t.json:1: invalid escape '\\u12G4' in a string; expected 4 hex digits "
                         "after \\u" },
        { "\"\\ud800x\"", "t.json:1: lone high surrogate '\\ud800' in a string; expected a low "
                          "surrogate \\uDC00-\\uDFFF right after it" },
        { "\"\\udc00\"", "t.json:1: lone low surrogate '\\udc00' in a string; expected it after a "
                         "high surrogate \\uD800-\\uDBFF" },
        { "\"\xff\"", "t.json:1: invalid UTF-8 byte 0xff in a string; expected UTF-8 text" },
        { "\"\xc0\xaf\"", "t.json:1: invalid UTF-8 byte 0xc0 in a string; expected UTF-8 text" },
        { "\"\xed\xa0\x80\"", "t.json:1: invalid UTF-8 byte 0xed in a string; expected UTF-8 text" },
        { "\"\xe2\x82\"", "t.json:1: invalid UTF-8 byte 0xe2 in a string; expected UTF-8 text" },
        { "[1] x", "t.json:1: unexpected 'x' after the top-level value; expected the end of "
                   "the file" },
        { "[1\n\n 2]", "t.json:3: unexpected '2' in an array; expected ',' or ']'" },
        { "{\"a\": [1, 2}", "t.json:1: unexpected '}' in an array; expected ',' or ']'" },
        { "// c\n{}", "t.json:1: unexpected '/'; expected a value (object, array, string, "
                      "number, true, false or null)" },
        { "{\"a\": 1", "t.json:1: unexpected end of file in an object; expected ',' or '}'" },
        { "[\x01]", "t.json:1: unexpected byte 0x01; expected a value (object, array, string, "
                    "number, true, false or null)" },
        { "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]",
          "t.json:1: arrays and objects nested more than 64 deep; expected at most 64 levels" },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        struct dse_err       err = { 0 };
        struct dse_json_doc *d = parse(cases[i].text, &err);
        char                 buf[600];
        CHECK(d == NULL);
        dse_json_free(d);
        CHECK_INT_EQ(err.code, DSE_ERR_CONFIG);
        CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), cases[i].want);
    }
}

/* Hostile input: deep nesting, many keys, mutated documents. Passing means no crash, no
 * sanitizer report, and every failure says where. */
static void test_json_hostile(void) {
    size_t n = 200000;
    char  *s = malloc(n + 1);
    memset(s, '[', n);
    s[n] = '\0';
    struct dse_err       err = { 0 };
    struct dse_json_doc *d = parse(s, &err);
    CHECK(d == NULL && err.line == 1);
    memset(s, '{', n);
    d = parse(s, &err);
    CHECK(d == NULL);
    free(s);

    /* 50000 keys, the last one repeating the first: found in O(n log n) */
    size_t cap = 50000 * 24 + 64, o = 0;
    s = malloc(cap);
    o += (size_t)snprintf(s + o, cap - o, "{");
    for (int i = 0; i < 50000; i++) o += (size_t)snprintf(s + o, cap - o, "\"k%d\": %d,\n", i, i);
    snprintf(s + o, cap - o, "\"k0\": 1}");
    d = parse(s, &err);
    CHECK(d == NULL);
    CHECK_INT_EQ(err.line, 50001);
    CHECK(strstr(err.msg, "duplicate key \"k0\"") != NULL);
    free(s);

    static const char base[] = "{\"id\": \"c1\", \"n\": [1, -2.5e-3, true, null, \"\\u00e9\\ud83d"
                               "\\ude00\"], \"o\": {\"x\": {\"y\": [[]]}}, \"s\": \"a\\\"b\"}";
    uint64_t       state = 42;
    char           buf[sizeof base];
    int            ok = 0, bad = 0;
    for (int t = 0; t < 20000; t++) {
        memcpy(buf, base, sizeof base);
        int muts = 1 + t % 4;
        for (int m = 0; m < muts; m++) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t pos = (size_t)(state >> 33) % (sizeof base - 1);
            static const char pick[] = "{}[]\",:\\u0e-+.tfn \n\x80\xff\xc3\xed";
            buf[pos] = (state >> 20) & 1 ? pick[(state >> 40) % (sizeof pick - 1)]
                                         : (char)(state >> 48);
        }
        size_t len = (size_t)(state >> 56) % sizeof base; /* truncations too */
        d = NULL;
        enum dse_status st = dse_json_parse(buf, len, "fuzz.json", &d, &err);
        if (st == DSE_OK) {
            ok++;
            CHECK(d != NULL);
        } else {
            bad++;
            CHECK(d == NULL && err.line >= 1 && err.file[0] && strchr(err.msg, ';'));
        }
        dse_json_free(d);
    }
    CHECK(ok > 0 && bad > 0);
}

/* ---- report ------------------------------------------------------------------------- */

#define SMALL "tests/sweeps/small"

static void put_sweep(const char *dir, const char *space, int n, const char *varied);

static void test_report_md(void) {
    enum dse_status st;
    struct dse_err  err = { 0 };
    char           *s = run_report(SMALL, DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(starts_with(s, "# Sweep small_grid: 6 candidates (2 pruned, 1 pending, 3 done)\n"));
    /* rows by model size; the frontier marked; pruned_by in the status cell */
    CHECK(strstr(s, "| c75cea6b631602 |     0 | 0.25 |   0.25 | 1,000,000 |     4.00 |      3.81 |  1.00 | 0.500 |"
                    "        1874.9 | done ") != NULL); /* GMAC = GFLOP / 2 */
    CHECK(strstr(s, "| id             | index |   sr |") != NULL); /* the grid index beside the id */
    CHECK(!strstr(s, "## Next")); /* one candidate still pending: no best yet */
    CHECK(strstr(s, "|    50.0 |    75.0 | ★        |\n") != NULL);
    CHECK(strstr(s, "| pruned: max_params = 2000000 (params 2500000) ") != NULL);
    const char *a = strstr(s, "c75cea6b631602"), *b = strstr(s, "c3297165fb8c76"),
               *c = strstr(s, "c2ad1722a1be4b");
    CHECK(a && b && c && a < b && b < c);
    const char *fr = strstr(s, "## Frontier (max top1, min model size): 2 of 6 candidates\n");
    CHECK(fr != NULL);
    if (fr) {
        CHECK_INT_EQ(count_of(fr, "\n| c"), 2);
        CHECK(strstr(fr, "c75cea6b631602") && strstr(fr, "c3297165fb8c76"));
        CHECK(!strstr(fr, "c26daa3fadf099")); /* same top1 as c3297..., but larger */
    }
    CHECK_INT_EQ(count_of(s, "★"), 2);
    check_golden("small.md", s);
    /* TABLE reads as MD */
    char *t = run_report(SMALL, DSE_FORMAT_TABLE, NULL, &st, &err);
    CHECK_STR_EQ(t, s);
    free(t);
    free(s);
    /* analytic mode: no accuracy anywhere, so FLOPs; nothing varied */
    s = run_report("tests/sweeps/squeeze_ratio", DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(starts_with(s, "# Sweep squeeze_ratio: 8 candidates (0 pruned, 8 pending, 0 done)\n"));
    CHECK(strstr(s, "## Frontier (min model size, min FLOPs): 1 of 8 candidates\n") != NULL);
    CHECK(strstr(s, "| c72d889b4c1512 |     0 | 0.125 | 1,247,805 |     4.99 |      4.76 |  1.72 |") != NULL);
    CHECK(!strstr(s, "## Next")); /* nothing trained */
    CHECK(!strstr(s, "top-1"));
    free(s);

    /* numbers as a %.17g writer leaves them: shown shortest, and a REAL metaparameter
     * (mp.def) as a real, 1.0 for both 1.0 and 1, in tables and JSON alike */
    char tmpl[] = "/tmp/dse_test_report.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    put_sweep(dir, "digits", 2, "\"pct3x3\", \"sr\"");
    write_file(dir, "candidates/c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": "
               "{\"pct3x3\": 0.10000000000000001, \"sr\": 1.0}, \"params\": 1, \"model_bytes\": 4, "
               "\"flops\": 1, \"status\": \"pending\"}");
    write_file(dir, "candidates/c2.json", "{\"id\": \"c2\", \"index\": 1, \"metaparams\": "
               "{\"pct3x3\": 1e-1, \"sr\": 1}, \"params\": 2, \"model_bytes\": 8, "
               "\"flops\": 2, \"status\": \"pending\"}");
    s = run_report(dir, DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(strstr(s, "| c1  |     0 |    0.1 | 1.0 |      1 |") != NULL);
    CHECK(strstr(s, "| c2  |     1 |    0.1 | 1.0 |      2 |") != NULL);
    free(s);
    s = run_report(dir, DSE_FORMAT_JSON, NULL, &st, &err);
    CHECK_INT_EQ(count_of(s, "\"metaparams\": {\"pct3x3\": 0.1, \"sr\": 1.0}"), 2);
    free(s);
    rm_tree(dir);
}

static void test_report_csv(void) {
    enum dse_status st;
    struct dse_err  err = { 0 };
    char           *s = run_report(SMALL, DSE_FORMAT_CSV, NULL, &st, &err);
    CHECK_OK(st);
    /* every metaparameter, the fixed ones too (so sweeps' CSVs stack), in the records' order */
    CHECK(starts_with(s, "id,index,base_e,incr_e,freq,pct3x3,sr,bypass,input_c,input_h,input_w,classes,"
                         "conv1_filters,conv1_kernel,conv1_stride,conv1_pad,fires,pools,dropout,fire_dropout,params,"
                         "model_bytes,model_mb,model_mib,flops,macs,train_mem_bytes,status,pruned_by,top1,top5,"
                         "frontier\n"));
    CHECK(strstr(s, "\nc75cea6b631602,0,128,128,2,0.25,0.25,none,3,227,227,1000,96,7,2,0,8,\"conv1,fire4,fire8\","
                    "0.5,0.0,1000000,4000000,4,3.814697265625,1000000000,500000000,1966000000,done,,0.5,0.75,yes\n") != NULL);
    CHECK(strstr(s, "\nc26daa3fadf099,2,128,128,2,0.25,0.5,none,3,227,227,1000,96,7,2,0,8,\"conv1,fire4,fire8\","
                    "0.5,0.0,1500000,6000000,6,5.7220458984375,1500000000,750000000,2149000000,done,,0.55,0.78,\n") != NULL);
    CHECK(strstr(s, "\nc9dce5a1ddf29e,3,128,128,2,0.75,0.5,none,3,227,227,1000,96,7,2,0,8,\"conv1,fire4,fire8\","
                    "0.5,0.0,1800000,7200000,7.2,6.866455078125,1900000000,950000000,2293800000,pending,,,,\n") != NULL);
    /* RFC 4180: a field with a comma or quote is quoted, quotes doubled */
    CHECK(strstr(s, ",pruned,\"max_params = 2000000 (params 3000000, \"\"hard\"\" limit)\",,,\n")
          != NULL);
    CHECK_INT_EQ(count_of(s, "\n"), 7);
    CHECK_INT_EQ(count_of(s, ",yes\n"), 2);
    check_golden("small.csv", s);
    free(s);
}

static void test_report_tex(void) {
    enum dse_status st;
    struct dse_err  err = { 0 };
    char           *s = run_report(SMALL, DSE_FORMAT_TEX, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(strstr(s, "\\begin{tabular}{lrrrrrrrrrlrrl}\n\\toprule\n") != NULL);
    CHECK(strstr(s, "id & index & sr & pct3x3 & params & model MB & model MiB & GFLOP & GMAC & train mem MiB & "
                    "status & top-1 \\% & top-5 \\% & frontier \\\\\n\\midrule\n") != NULL);
    CHECK(strstr(s, "c75cea6b631602 & 0 & 0.25 & 0.25 & 1,000,000 & 4.00 & 3.81 & 1.00 & 0.500 & 1874.9 & "
                    "done & 50.0 & 75.0 & \\checkmark \\\\\n") != NULL);
    CHECK(strstr(s, "pruned: max\\_params = 2000000") != NULL);
    CHECK(strstr(s, "% dse report: Sweep small\\_grid:") != NULL);
    CHECK(strstr(s, "\\bottomrule\n\\end{tabular}\n") != NULL);
    CHECK_INT_EQ(count_of(s, "\\checkmark \\\\"), 2);
    CHECK(!strstr(s, "max_params")); /* every _ escaped */
    check_golden("small.tex", s);
    free(s);
}

static void test_report_json(void) {
    enum dse_status st;
    struct dse_err  err = { 0 };
    char           *s = run_report(SMALL, DSE_FORMAT_JSON, NULL, &st, &err);
    CHECK_OK(st);
    struct dse_json_doc *d = parse(s, &err);
    CHECK(d != NULL);
    if (!d) {
        fprintf(stderr, "  %s\n", err.msg);
        free(s);
        return;
    }
    /* the stable keys of docs/report.md */
    const struct dse_json *r = dse_json_root(d);
    const struct dse_json *v = dse_json_get(r, "sweep");
    CHECK(v && !strcmp(v->str, "small_grid"));
    v = dse_json_get(r, "frontier_objective");
    CHECK(v && !strcmp(v->str, "max top1, min model size"));
    const struct dse_json *cs = dse_json_get(r, "candidates");
    CHECK(cs && cs->type == DSE_JSON_ARRAY && cs->n == 6);
    if (cs && cs->n == 6) {
        const struct dse_json *c = &cs->items[1];
        CHECK_STR_EQ(dse_json_get(c, "id")->str, "c3297165fb8c76");
        CHECK_INT_EQ(dse_json_get(c, "index")->integer, 1);
        const struct dse_json *mp = dse_json_get(c, "metaparams");
        CHECK(mp && mp->n == 17);
        CHECK_STR_EQ(dse_json_get(mp, "sr")->str, "0.25");
        CHECK_STR_EQ(dse_json_get(mp, "pct3x3")->str, "0.75");
        CHECK_STR_EQ(dse_json_get(mp, "bypass")->str, "none");
        CHECK_INT_EQ(dse_json_get(mp, "base_e")->integer, 128);
        CHECK_STR_EQ(dse_json_get(mp, "pools")->str, "conv1,fire4,fire8");
        CHECK_INT_EQ(dse_json_get(c, "params")->integer, 1200000);
        CHECK_INT_EQ(dse_json_get(c, "flops")->integer, 1300000000);
        CHECK_INT_EQ(dse_json_get(c, "macs")->integer, 650000000); /* FLOPs / 2 */
        CHECK_NEAR(dse_json_get(c, "model_mb")->number, 4.8, 1e-12);
        CHECK_STR_EQ(dse_json_get(c, "status")->str, "done");
        CHECK_NEAR(dse_json_get(c, "top1")->number, 0.55, 1e-12);
        CHECK_INT_EQ(dse_json_get(&cs->items[4], "top1")->type, DSE_JSON_NULL);
        CHECK_STR_EQ(dse_json_get(&cs->items[4], "pruned_by")->str,
                     "max_params = 2000000 (params 2500000)");
        for (int i = 0; i < 6; i++) CHECK_INT_EQ(dse_json_get(&cs->items[i], "index")->integer, i);
    }
    const struct dse_json *fr = dse_json_get(r, "frontier");
    CHECK(fr && fr->n == 2);
    if (fr && fr->n == 2) {
        CHECK_STR_EQ(fr->items[0].str, "c75cea6b631602");
        CHECK_STR_EQ(fr->items[1].str, "c3297165fb8c76");
    }
    dse_json_free(d);
    check_golden("small.json", s);
    free(s);
}

/* A candidate file for the temporary sweeps. top1 < 0: null. */
static void put_candidate(const char *dir, const char *id, int index, double sr, long params,
                          long flops, const char *status, double top1) {
    char text[1200], rel[64], t1[32];
    if (top1 < 0) snprintf(t1, sizeof t1, "null");
    else snprintf(t1, sizeof t1, "%g", top1);
    snprintf(text, sizeof text,
             "{\"id\": \"%s\", \"index\": %d,\n \"metaparams\": {\"sr\": %g, \"bypass\": \"none\"},\n"
             " \"params\": %ld, \"model_bytes\": %ld, \"flops\": %ld,\n"
             " \"train_mem_bytes\": null, \"status\": \"%s\", \"pruned_by\": %s,\n"
             " \"top1\": %s, \"top5\": null}\n",
             id, index, sr, params, 4 * params, flops, status,
             strcmp(status, "pruned") ? "null" : "\"max_params = 1\"", t1);
    snprintf(rel, sizeof rel, "candidates/%s.json", id);
    write_file(dir, rel, text);
}

static void put_sweep(const char *dir, const char *space, int n, const char *varied) {
    char text[400];
    snprintf(text, sizeof text, "{\"format\": \"dse-sweep-1\", \"space\": \"%s\",\n"
             "\"candidates\": %d, \"varied\": [%s]}\n", space, n, varied);
    write_file(dir, "sweep.json", text);
    char sub[512];
    snprintf(sub, sizeof sub, "%s/candidates", dir);
    mkdir(sub, 0777);
}

/* A finished trained sweep names its best candidate (highest top-1, ties to the smaller
 * model, then the smaller id) and the command that exports it; dse_report_best is the
 * rule dse export --best uses, with a size limit. */
static void test_report_next(void) {
    char tmpl[] = "/tmp/dse test report.XXXXXX"; /* a space: the commands quote the directory */
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    enum dse_status st;
    struct dse_err  err = { 0 };
    struct dse_report_best best;
    put_sweep(dir, "next", 6, "\"sr\"");
    put_candidate(dir, "c01", 0, 0.125, 1000, 10, "done", 0.5);
    put_candidate(dir, "c02", 1, 0.25, 3000, 30, "done", 0.75);
    put_candidate(dir, "c03", 2, 0.5, 2000, 20, "done", 0.75); /* ties c02, smaller: the best */
    put_candidate(dir, "c04", 3, 0.75, 500, 5, "stopped", 0.9); /* stopped at a rung: not a final result */
    put_candidate(dir, "c05", 4, 1.0, 99999, 5, "pruned", -1);
    put_candidate(dir, "c06", 5, 0.0625, 2000, 20, "pending", -1);
    /* unfinished: no Next section, no best from the report; dse_report_best still picks */
    char *s = run_report(dir, DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(s && !strstr(s, "## Next"));
    free(s);
    CHECK_OK(dse_report_best(dir, 0, &best, &err));
    CHECK_STR_EQ(best.id, "c03");
    CHECK_INT_EQ(best.index, 2);
    CHECK_NEAR(best.top1, 0.75, 0);
    CHECK_INT_EQ(best.model_bytes, 8000);
    CHECK_OK(dse_report_best(dir, 0.006, &best, &err)); /* 6,000 bytes: c03 is 8,000 */
    CHECK_STR_EQ(best.id, "c01");
    CHECK_INT_EQ(dse_report_best(dir, 0.001, &best, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(best.id, "");
    CHECK(strstr(err.msg, "none of the 3 trained candidates is within --max-mb 0.001") != NULL);
    /* finished: the Next section and the JSON "best" */
    put_candidate(dir, "c06", 5, 0.0625, 2000, 20, "failed", -1);
    s = run_report(dir, DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    char want[1200];
    snprintf(want, sizeof want, "\n## Next\n\nBest trained candidate: c03 (index 2, top-1 75.00%%, 0.01 MB). "
             "Export it to ONNX:\n\n    dse export '%s' --id c03 --out c03.onnx\n\nWith --format caffe (and --out "
             "c03) it writes Caffe's c03.prototxt and c03.caffemodel instead; dse export '%s' --best --max-mb M takes "
             "the most accurate candidate within M MB.\n", dir, dir);
    CHECK(s && strstr(s, want) != NULL);
    free(s);
    s = run_report(dir, DSE_FORMAT_JSON, NULL, &st, &err);
    CHECK_OK(st);
    struct dse_json_doc *d = s ? parse(s, &err) : NULL;
    CHECK(d != NULL);
    if (d) {
        const struct dse_json *b = dse_json_get(dse_json_root(d), "best");
        CHECK(b && b->type == DSE_JSON_OBJECT);
        if (b && b->type == DSE_JSON_OBJECT) {
            CHECK_STR_EQ(dse_json_get(b, "id")->str, "c03");
            CHECK_INT_EQ(dse_json_get(b, "index")->integer, 2);
            snprintf(want, sizeof want, "dse export '%s' --id c03 --out c03.onnx", dir); /* quoted: a space */
            CHECK_STR_EQ(dse_json_get(b, "export")->str, want);
        }
        dse_json_free(d);
    }
    free(s);
    FILE *f = fopen("/dev/null", "w");
    CHECK_OK(dse_report_sweep(f, dir, DSE_FORMAT_CSV, NULL, &best, &err));
    CHECK_STR_EQ(best.id, "c03");
    if (f) fclose(f);
    char cmd[200];
    dse_report_export_cmd(cmd, sizeof cmd, "it's here", "c1");
    CHECK_STR_EQ(cmd, "dse export 'it'\\''s here' --id c1 --out c1.onnx");
    dse_report_export_cmd(cmd, sizeof cmd, "sweeps/sr_1", "c1");
    CHECK_STR_EQ(cmd, "dse export sweeps/sr_1 --id c1 --out c1.onnx");
    /* nothing trained at all */
    put_candidate(dir, "c01", 0, 0.125, 1000, 10, "failed", -1);
    put_candidate(dir, "c02", 1, 0.25, 3000, 30, "failed", -1);
    put_candidate(dir, "c03", 2, 0.5, 2000, 20, "diverged", -1);
    CHECK_INT_EQ(dse_report_best(dir, 0, &best, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "no candidate of this sweep has finished training") != NULL);
    rm_tree(dir);
}

/* dse status and dse report accept the same candidate files: the hostile ones a
 * lenient reader once let through (a file copied under another name, top-1 1e308,
 * negative params, an epoch count past int) get the same path:line message from both. */
static void test_status_strict(void) {
    static const struct { const char *file, *text, *msg; } bad_files[] = {
        { "c2.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\"}", "\"id\" = \"c1\" does not match the file name" },
        { "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\", \"top1\": 1e308}", "\"top1\" = 1e308 is out of range" },
        { "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": -5, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\"}", "\"params\" = -5" },
        { "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\", \"epochs_done\": 999999999999}",
          "\"epochs_done\" = 999999999999 is out of range; expected 0 to 2147483647 or null" },
        { "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\", \"per_epoch\": [{\"epoch\": 1, \"top1\": 0.5, "
                     "\"unpredicted\": -3}]}",
          "\"per_epoch\"[0].\"unpredicted\" is not a whole number >= 0; expected an integer >= 0 or null" },
        { "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\", \"per_epoch\": [{\"epoch\": 1, \"loss\": \"low\"}]}",
          "\"per_epoch\"[0].\"loss\" is a string; expected a number or null" },
        { "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\", \"lease_gen\": -1}", /* a key of sweep/record.def */
          "\"lease_gen\" = -1 is out of range; expected 0 to 9223372036854775807 or null" },
        /* every training key of sweep/record.def is checked by its kind, also those only workers read */
#define HEAD "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, \"flops\": 1, "
#define X20 "xxxxxxxxxxxxxxxxxxxx"
        { "c1.json", HEAD "\"status\": \"done\", \"loss\": \"low\"}", "\"loss\" is a string; expected a number or null" },
        { "c1.json", HEAD "\"status\": \"done\", \"seed\": -1}",
          "\"seed\" = -1 is out of range; expected 0 to 9223372036854775807 or null" },
        { "c1.json", HEAD "\"status\": \"done\", \"img_per_s\": -5}",
          "\"img_per_s\" = -5 is out of range; expected a number in [0, 1.79769e+308] or null" },
        { "c1.json", HEAD "\"status\": \"done\", \"attempts_total\": 1.5}",
          "\"attempts_total\" = 1.5 is not an integer; expected an integer or null" },
        { "c1.json", HEAD "\"status\": \"failed\", \"failed_why\": 3}",
          "\"failed_why\" is a number; expected a string or null" },
        { "c1.json", HEAD "\"status\": \"pruned\", \"pruned_by\": \"" X20 X20 X20 X20 X20 X20 X20 X20 X20 X20 "\"}",
          "\"pruned_by\" is 200 bytes long; expected 0 to 199" },
        { "c1.json", HEAD "\"status\": \"done\", \"per_epoch\": [{\"epoch\": 2, \"top1\": 0.5}]}",
          "\"per_epoch\"[0] is epoch 2; expected epoch 1 (one entry per epoch, in order)" },
        { "c1.json", HEAD "\"per_epoch\": []}", "missing key \"status\"; expected a string" },
        { "c1.json", "{\"id\": \"c1\", \"index\": -1, \"metaparams\": {}, \"params\": 1, \"model_bytes\": 4, "
                     "\"flops\": 1, \"status\": \"done\"}", "\"index\" = -1 is negative; expected an integer >= 0" },
#undef HEAD
#undef X20
    };
    for (int i = 0; i < DSE_ARRAY_LEN(bad_files); i++) {
        char tmpl[] = "/tmp/dse_test_status.XXXXXX";
        char *dir = mkdtemp(tmpl);
        CHECK(dir != NULL);
        if (!dir) return;
        put_sweep(dir, "strict", 1, "");
        write_file(dir, "candidates/x", ""); /* not a .json: skipped by both */
        char rel[64];
        snprintf(rel, sizeof rel, "candidates/%s", bad_files[i].file);
        write_file(dir, rel, bad_files[i].text);
        struct dse_err e1 = { 0 }, e2 = { 0 };
        FILE *f = fopen("/dev/null", "w");
        CHECK_INT_EQ(dse_report_sweep(f, dir, DSE_FORMAT_CSV, NULL, NULL, &e1), DSE_ERR_CONFIG);
        CHECK_INT_EQ(dse_sweep_status(f, dir, 0, NULL, &e2), DSE_ERR_CONFIG);
        if (f) fclose(f);
        char b1[600], b2[600];
        dse_err_format(&e1, b1, sizeof b1);
        dse_err_format(&e2, b2, sizeof b2);
        CHECK_STR_EQ(b2, b1);
        CHECK(strstr(b1, bad_files[i].msg) != NULL);
        if (!strstr(b1, bad_files[i].msg)) fprintf(stderr, "  %s\n", b1);
        rm_tree(dir);
    }
}

static int well_formed_xml(const char *s) {
    const char *stack[64];
    int         depth = 0, seen_root = 0;
    for (const char *p = s; (p = strchr(p, '<'));) {
        const char *e = strchr(p, '>');
        if (!e) return 0;
        if (p[1] == '?' || p[1] == '!') {
            p = e + 1;
            continue;
        }
        for (const char *q = p + 1; q < e; q++)
            if (*q == '<') return 0;
        if (p[1] == '/') {
            size_t n = strcspn(p + 2, " >");
            if (!depth || strncmp(stack[depth - 1], p + 2, n) != 0) return 0;
            if (!strchr(" >\n", stack[depth - 1][n])) return 0; /* <g> closed by </gx> */
            depth--;
        } else if (e[-1] != '/') {
            if (depth == 64 || (depth == 0 && seen_root)) return 0;
            stack[depth++] = p + 1;
            seen_root = 1;
        }
        p = e + 1;
    }
    return depth == 0 && seen_root;
}

static void check_svg(const char *path, int n_cand, const char *space) {
    char *s = slurp(path);
    CHECK(s != NULL);
    if (!s) return;
    size_t n = strlen(s);
    CHECK(starts_with(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""));
    CHECK(n > 7 && !strcmp(s + n - 7, "</svg>\n"));
    CHECK(well_formed_xml(s));
    CHECK_INT_EQ(count_of(s, "<circle"), n_cand);
    CHECK_INT_EQ(count_of(s, "<polyline"), 1);
    CHECK(strstr(s, space) != NULL);
    CHECK(!strstr(s, "nan") && !strstr(s, "inf"));
    free(s);
}

/* A plot whose writing ends the process (issue #31: `report --plot` left its temporary file):
 * a file size limit stops it mid-write (SIGXFSZ, as a Ctrl-C or a kill would), and nothing
 * is left beside the plot. */
static void test_report_plot_killed(void) {
    char tmpl[] = "/tmp/dse_test_report.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    char plot[256];
    snprintf(plot, sizeof plot, "%s/small.svg", dir);
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        const struct rlimit lim = { .rlim_cur = 1000, .rlim_max = 1000 }; /* the plot is about 6 KB */
        FILE *null = fopen("/dev/null", "w");
        struct dse_err err = { 0 };
        if (!null || setrlimit(RLIMIT_FSIZE, &lim)) _exit(3);
        _exit(dse_report_sweep(null, SMALL, DSE_FORMAT_MD, plot, NULL, &err) == DSE_OK ? 0 : 4);
    }
    int status = 0;
    CHECK(p > 0 && waitpid(p, &status, 0) == p);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ); /* stopped mid-write, as meant */
    int left = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            printf("  left in %s: %s\n", dir, e->d_name);
            left++;
        }
    if (d) closedir(d);
    CHECK_INT_EQ(left, 0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void test_report_plot(void) {
    char tmpl[] = "/tmp/dse_test_report.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    char plot[256], sw[256];
    enum dse_status st;
    struct dse_err  err = { 0 };

    snprintf(plot, sizeof plot, "%s/small.svg", dir);
    free(run_report(SMALL, DSE_FORMAT_MD, plot, &st, &err));
    CHECK_OK(st);
    check_svg(plot, 6, "small_grid");
    char *s = slurp(plot);
    if (s) {
        CHECK(strstr(s, "top-1 accuracy (%)") != NULL);
        CHECK(strstr(s, "model size (MB = 10^6 bytes") != NULL); /* the unit of max_model_mb */
        CHECK(!strstr(s, "space limit"));                          /* no space.cfg: no limits */
        CHECK(strstr(s, ">sr=0.25 pct3x3=0.75</text>") != NULL); /* labels name the values */
        CHECK_INT_EQ(count_of(s, "fill=\"none\" stroke=\"#999\""), 2 + 1); /* pruned + legend */
        CHECK_INT_EQ(count_of(s, "<circle cx=\"") - count_of(s, "r=\"6\" fill=\"#d62728\""), 4);
        free(s);
    }
    /* atomic: only the plot is left in the directory */
    DIR *dd = opendir(dir);
    int  files = 0;
    for (struct dirent *e; dd && (e = readdir(dd));) files += e->d_name[0] != '.';
    if (dd) closedir(dd);
    CHECK_INT_EQ(files, 1);

    /* analytic mode (FLOPs), a frontier of several points, pruned ones left out */
    snprintf(sw, sizeof sw, "%s/analytic", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "ana", 5, "\"sr\"");
    put_candidate(sw, "ca", 0, 0.125, 1000000, 3000000000, "pending", -1);
    put_candidate(sw, "cb", 1, 0.25, 1500000, 2000000000, "pending", -1);
    put_candidate(sw, "cc", 2, 0.5, 2000000, 2500000000, "pending", -1);
    put_candidate(sw, "cd", 3, 0.75, 2500000, 1000000000, "running", -1);
    put_candidate(sw, "ce", 4, 1.0, 500000, 500000000, "pruned", -1);
    snprintf(plot, sizeof plot, "%s/ana.svg", dir);
    s = run_report(sw, DSE_FORMAT_JSON, plot, &st, &err);
    CHECK_OK(st);
    CHECK(strstr(s, "\"frontier\": [\"ca\", \"cb\", \"cd\"]") != NULL);
    CHECK(strstr(s, "\"frontier_objective\": \"min model size, min FLOPs\"") != NULL);
    free(s);
    s = run_report(sw, DSE_FORMAT_CSV, NULL, &st, &err); /* rows by model size, not index */
    CHECK(s && strstr(s, "\nce,4,") && strstr(s, "\nca,0,") && strstr(s, "\ncd,3,"));
    CHECK(s && strstr(s, "\nce,4,") < strstr(s, "\nca,0,") && strstr(s, "\nca,0,") < strstr(s, "\ncd,3,"));
    free(s);
    check_svg(plot, 5, "ana");
    s = slurp(plot);
    CHECK(s && strstr(s, "forward GFLOP per image") != NULL);
    CHECK(s && count_of(s, "r=\"6\" fill=\"#d62728\"") == 3);
    /* the frontier as a step: 3 points and the 2 corners between them */
    const char *pl = s ? strstr(s, "<polyline fill=\"none\" stroke=\"#d62728\"") : NULL;
    CHECK(pl != NULL);
    if (pl) {
        const char *pts = strstr(pl, "points=\""), *end = pts ? strchr(pts + 8, '"') : NULL;
        int n = 1;
        for (const char *q = pts + 8; pts && end && q < end; q++) n += *q == ' ';
        CHECK_INT_EQ(n, 5);
    }
    free(s);

    /* the space's limits, from DIR/space.cfg: max_model_mb (MB axis) and max_flops (GFLOP axis) */
    write_file(sw, "space.cfg", "name = \"ana\";\nmetaparams = { sr = [0.125, 0.25, 0.5, 0.75, 1.0]; };\n"
                                "constraints = { max_model_mb = 9.5; max_flops = 2800000000L; };\n");
    free(run_report(sw, DSE_FORMAT_CSV, plot, &st, &err));
    CHECK_OK(st);
    s = slurp(plot);
    CHECK(s && strstr(s, ">limit 9.5 MB</text>") != NULL);
    CHECK(s && strstr(s, ">limit 2.8 GFLOP</text>") != NULL);
    CHECK(s && strstr(s, ">space limit</text>") != NULL);
    CHECK(s && strstr(s, ">candidate</text>") != NULL); /* cc is off the frontier */
    free(s);

    /* one candidate, and all-equal values: no division by zero */
    snprintf(sw, sizeof sw, "%s/one", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "one", 1, "");
    put_candidate(sw, "c1", 0, 0.5, 1000000, 1000000000, "done", 0.5);
    snprintf(plot, sizeof plot, "%s/one.svg", dir);
    free(run_report(sw, DSE_FORMAT_CSV, plot, &st, &err));
    CHECK_OK(st);
    check_svg(plot, 1, "one");
    s = slurp(plot);
    CHECK(s && !strstr(s, ">candidate</text>") && strstr(s, ">Pareto frontier</text>")); /* only kinds drawn */
    free(s);
    snprintf(sw, sizeof sw, "%s/equal", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "equal", 3, "\"sr\"");
    put_candidate(sw, "c1", 0, 0.5, 0, 0, "pending", -1);
    put_candidate(sw, "c2", 1, 0.5, 0, 0, "pending", -1);
    put_candidate(sw, "c3", 2, 0.5, 0, 0, "pending", -1);
    snprintf(plot, sizeof plot, "%s/equal.svg", dir);
    s = run_report(sw, DSE_FORMAT_JSON, plot, &st, &err);
    CHECK_OK(st);
    CHECK(strstr(s, "\"frontier\": [\"c1\", \"c2\", \"c3\"]") != NULL);
    free(s);
    check_svg(plot, 3, "equal");

    /* the examples of docs/examples render from the committed fixtures */
    snprintf(plot, sizeof plot, "%s/sr.svg", dir);
    free(run_report("tests/sweeps/squeeze_ratio_trained", DSE_FORMAT_MD, plot, &st, &err));
    CHECK_OK(st);
    check_svg(plot, 8, "squeeze_ratio");

    /* an unwritable plot path is an I/O error naming it, and leaves nothing behind */
    free(run_report(SMALL, DSE_FORMAT_MD, "/nonexistent-dir/p.svg", &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_IO);
    CHECK_STR_EQ(err.file, "/nonexistent-dir/p.svg");
    CHECK_STR_EQ(err.msg, "cannot write the plot: No such file or directory");
    /* a failed rename (the path is a directory) leaves no temporary file behind */
    snprintf(plot, sizeof plot, "%s/adir", dir);
    mkdir(plot, 0777);
    snprintf(sw, sizeof sw, "%s/plots", dir);
    mkdir(sw, 0777);
    snprintf(plot, sizeof plot, "%s/plots/p.svg", dir);
    mkdir(plot, 0777);
    free(run_report(SMALL, DSE_FORMAT_MD, plot, &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_IO);
    CHECK_STR_EQ(err.msg, "cannot write the plot: Is a directory");
    dd = opendir(sw);
    files = 0;
    for (struct dirent *e; dd && (e = readdir(dd));) files += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (dd) closedir(dd);
    CHECK_INT_EQ(files, 1);
    /* a FIFO or a symbolic link at the plot's path is refused and left as it was, with no
     * temporary file beside it (issue #31: the rename put a file in its place) */
    char fifo[300], link[300];
    struct stat sb;
    snprintf(fifo, sizeof fifo, "%s/plots/fifo.svg", dir);
    snprintf(link, sizeof link, "%s/plots/link.svg", dir);
    CHECK(mkfifo(fifo, 0644) == 0 && symlink("elsewhere.svg", link) == 0);
    free(run_report(SMALL, DSE_FORMAT_MD, fifo, &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_IO);
    CHECK_STR_EQ(err.file, fifo);
    CHECK(!strncmp(err.msg, "is a FIFO; expected a regular file or a new name", 48));
    free(run_report(SMALL, DSE_FORMAT_MD, link, &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_IO);
    CHECK(!strncmp(err.msg, "is a symbolic link; expected a regular file or a new name", 57));
    CHECK(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
    CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
    dd = opendir(sw);
    files = 0;
    for (struct dirent *e; dd && (e = readdir(dd));) files += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (dd) closedir(dd);
    CHECK_INT_EQ(files, 3);
    rm_tree(dir);
}

/* The ids of a plot's frontier points (red, r=6), in document order, space-separated. */
static void front_ids(const char *svg, char *out, size_t size) {
    out[0] = '\0';
    for (const char *p = svg; p && (p = strstr(p, "r=\"6\" fill=\"#d62728\"")); p++) {
        const char *t = strstr(p, "<title>"), *e = t ? strchr(t + 7, ' ') : NULL;
        if (!e) break;
        snprintf(out + strlen(out), size - strlen(out), "%s%.*s", out[0] ? " " : "", (int)(e - t - 7), t + 7);
    }
}

/* dse report --plot-flops: top-1 against forward FLOPs with its own frontier (max top1,
 * min FLOPs), which differs from the size plot's where a small model computes much and a
 * large one little; before training, model size against FLOPs with the analytic frontier. */
static void test_report_plot_flops(void) {
    char tmpl[] = "/tmp/dse_test_flops.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    char sw[256], size_svg[300], flops_svg[300], ids[400];
    enum dse_status st;
    struct dse_err err = { 0 };
    snprintf(sw, sizeof sw, "%s/trained", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "flopsy", 6, "\"sr\"");
    put_candidate(sw, "ca", 0, 0.125, 1000, 3000000000, "done", 0.7);  /* small model, many FLOPs */
    put_candidate(sw, "cb", 1, 0.25, 3000, 1000000000, "done", 0.7);   /* large model, few FLOPs */
    put_candidate(sw, "cc", 2, 0.5, 2000, 2000000000, "done", 0.6);    /* dominated in both views */
    put_candidate(sw, "cd", 3, 0.75, 500, 4000000000, "done", 0.5);    /* smallest: size frontier only */
    put_candidate(sw, "ce", 4, 1.0, 400, 500000000, "pruned", -1);     /* fewest FLOPs, but pruned */
    put_candidate(sw, "cf", 5, 0.0625, 4000, 600000000, "pending", -1); /* not trained: not ranked */
    snprintf(size_svg, sizeof size_svg, "%s/size.svg", dir);
    snprintf(flops_svg, sizeof flops_svg, "%s/flops.svg", dir);
    free(run_report(sw, DSE_FORMAT_MD, size_svg, &st, &err));
    CHECK_OK(st);
    CHECK_OK(dse_report_plot_flops(sw, flops_svg, &err));
    char *a = slurp(size_svg), *b = slurp(flops_svg);
    CHECK(a && b);
    if (a && b) {
        front_ids(a, ids, sizeof ids);
        CHECK_STR_EQ(ids, "cd ca"); /* max top1, min model size */
        front_ids(b, ids, sizeof ids);
        CHECK_STR_EQ(ids, "cb"); /* max top1, min FLOPs */
        CHECK(strstr(b, ">Sweep flopsy: forward FLOPs vs top-1 accuracy</text>") != NULL);
        CHECK(strstr(b, "frontier (max top1, min FLOPs): 1 point</text>") != NULL);
        CHECK(strstr(b, ">forward GFLOP per image (2 per multiply-add; GMAC = GFLOP / 2)</text>") != NULL);
        CHECK(strstr(b, ">top-1 accuracy (%)</text>") != NULL);
        CHECK(!strstr(b, "model size (MB"));
        CHECK(strstr(a, "frontier (max top1, min model size): 2 points</text>") != NULL);
    }
    free(a), free(b);
    check_svg(flops_svg, 6, "flopsy");

    /* before training: model size against FLOPs; the frontier is the analytic one, and the
     * space's limits move with their units (max_flops on x, max_model_mb on y) */
    snprintf(sw, sizeof sw, "%s/analytic", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "ana", 4, "\"sr\"");
    put_candidate(sw, "ca", 0, 0.125, 1000000, 3000000000, "pending", -1);
    put_candidate(sw, "cb", 1, 0.25, 1500000, 2000000000, "pending", -1);
    put_candidate(sw, "cc", 2, 0.5, 2000000, 2500000000, "pending", -1);
    put_candidate(sw, "cd", 3, 0.75, 2500000, 1000000000, "pending", -1);
    write_file(sw, "space.cfg", "name = \"ana\";\nmetaparams = { sr = [0.125, 0.25, 0.5, 0.75, 1.0]; };\n"
                                "constraints = { max_model_mb = 9.5; max_flops = 2800000000L; };\n");
    CHECK_OK(dse_report_plot_flops(sw, flops_svg, &err));
    b = slurp(flops_svg);
    CHECK(b != NULL);
    if (b) {
        front_ids(b, ids, sizeof ids);
        CHECK_STR_EQ(ids, "ca cb cd"); /* the size view's frontier, as a set */
        CHECK(strstr(b, ">Sweep ana: forward FLOPs vs model size</text>") != NULL);
        CHECK(strstr(b, "frontier (min FLOPs, min model size): 3 points</text>") != NULL);
        CHECK(strstr(b, "rotate(-90)\" font-size=\"13\" text-anchor=\"middle\" fill=\"#222\">model size (MB") != NULL);
        /* the FLOPs limit is a vertical line (its label at the top), the size limit horizontal */
        CHECK(strstr(b, "text-anchor=\"end\">limit 2.8 GFLOP</text>") && strstr(b, "y=\"106.0\" font-size=\"11\" "
              "fill=\"#8c564b\" text-anchor=\"end\">limit 2.8 GFLOP</text>"));
        CHECK(strstr(b, ">limit 9.5 MB</text>") != NULL);
    }
    free(b);
    check_svg(flops_svg, 4, "ana");

    /* the committed fixture, byte for byte: tests/sweeps/golden/small_flops.svg */
    CHECK_OK(dse_report_plot_flops(SMALL, flops_svg, &err));
    b = slurp(flops_svg);
    CHECK(b != NULL);
    if (b) check_golden("small_flops.svg", b);
    free(b);
    /* an unwritable path: the plot's I/O error */
    CHECK_INT_EQ(dse_report_plot_flops(SMALL, "/nonexistent-dir/p.svg", &err), DSE_ERR_IO);
    CHECK_STR_EQ(err.msg, "cannot write the plot: No such file or directory");
    rm_tree(dir);
}

static void test_report_errors(void) {
    char tmpl[] = "/tmp/dse_test_report.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    static const char good_sweep[] =
        "{\"format\": \"dse-sweep-1\", \"space\": \"t\",\n\"candidates\": 1, \"varied\": []}\n";
    static const char good_cand[] =
        "{\"id\": \"c1\", \"index\": 0,\n \"metaparams\": {\"sr\": 0.5},\n"
        " \"params\": 10, \"model_bytes\": 40, \"flops\": 100,\n"
        " \"status\": \"done\", \"top1\": 0.5}\n";
    /* sweep.json text (NULL: none), candidate file name (NULL: no candidates/ directory),
     * its text, and the message, where %s is the temporary sweep directory */
    static const struct {
        const char *sweep, *name, *cand, *want;
    } cases[] = {
        { NULL, "c1.json", good_cand, "%s/sweep.json: cannot open: No such file or directory; "
          "expected the manifest of a sweep directory (docs/sweep-dir.md)" },
        { "{\"format\": \"dse-sweep-1\",\n \"space\": \"x\",\n}", "c1.json", good_cand,
          "%s/sweep.json:3: unexpected '}' in an object; expected a key in double quotes" },
        { "{\"format\": \"dse-sweep-2\"}", "c1.json", good_cand,
          "%s/sweep.json:1: \"format\" = \"dse-sweep-2\" is not supported; expected "
          "\"dse-sweep-1\"" },
        { "{\"space\": \"x\"}", "c1.json", good_cand,
          "%s/sweep.json:1: missing key \"format\"; expected \"dse-sweep-1\"" },
        { "{\"format\": \"dse-sweep-1\", \"space\": \"x\", \"candidates\": 1}", "c1.json", good_cand,
          "%s/sweep.json:1: missing key \"varied\"; expected an array" },
        { "{\"format\": \"dse-sweep-1\", \"space\": \"x\", \"candidates\": 1,\n \"varied\": [1]}",
          "c1.json", good_cand, "%s/sweep.json:2: \"varied\" holds a number; expected "
          "metaparameter names as strings" },
        { "[]", "c1.json", good_cand,
          "%s/sweep.json:1: the file holds an array; expected an object (docs/sweep-dir.md)" },
        { good_sweep, NULL, NULL, "%s/candidates: cannot open: No such file or directory; "
          "expected the candidates/ directory of a sweep (docs/sweep-dir.md)" },
        { good_sweep, "c1.json", "", "%s/candidates/c1.json:1: unexpected end of file; expected "
          "a value (object, array, string, number, true, false or null)" },
        { good_sweep, "c1.json", "{\"id\": \"c1\",\n \"index\": 0,\n}",
          "%s/candidates/c1.json:3: unexpected '}' in an object; expected a key in double quotes" },
        { good_sweep, "c1.json", "[1]",
          "%s/candidates/c1.json:1: the file holds an array; expected an object (docs/sweep-dir.md)" },
        { good_sweep, "c2.json", good_cand,
          "%s/candidates/c2.json:1: \"id\" = \"c1\" does not match the file name; expected \"c2\"" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {},\n"
          "\"params\": \"10\"}", "%s/candidates/c1.json:2: \"params\" is a string; expected an integer" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {},\n"
          "\"params\": 1.5}", "%s/candidates/c1.json:2: \"params\" = 1.5 is not an integer; "
          "expected an integer" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {},\n"
          "\"params\": -1}", "%s/candidates/c1.json:2: \"params\" = -1 is negative; expected an "
          "integer >= 0" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {},\n"
          "\"params\": 10, \"model_bytes\": 40}",
          "%s/candidates/c1.json:1: missing key \"flops\"; expected an integer" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": [],\n"
          "\"params\": 10}", "%s/candidates/c1.json:1: \"metaparams\" is an array; expected an object" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1,\n"
          "\"model_bytes\": 4, \"flops\": 1, \"status\": \"finished\"}",
          "%s/candidates/c1.json:2: \"status\" = \"finished\" is not a known status; expected "
          "pending, pruned, running, done, diverged, failed or stopped" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1,\n"
          "\"model_bytes\": 4, \"flops\": 1, \"status\": \"done\",\n\"top1\": 57.5}",
          "%s/candidates/c1.json:3: \"top1\" = 57.5 is out of range; expected a number in [0, 1] "
          "or null" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1,\n"
          "\"model_bytes\": 4, \"flops\": 1, \"status\": \"done\",\n\"top5\": \"0.8\"}",
          "%s/candidates/c1.json:3: \"top5\" is a string; expected a number or null" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"index\": 0, \"metaparams\": {}, \"params\": 1,\n"
          "\"model_bytes\": 4, \"flops\": 1, \"status\": \"pruned\", \"pruned_by\": 5}",
          "%s/candidates/c1.json:2: \"pruned_by\" is a number; expected a string or null" },
        { good_sweep, "c1.json", "{\"id\": \"c1\", \"id\": \"c1\"}",
          "%s/candidates/c1.json:1: duplicate key \"id\"; expected each key once in an object" },
    };
    char sw[256], want[700], got[700], sub[300];
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        snprintf(sw, sizeof sw, "%s/s%d", dir, i);
        mkdir(sw, 0777);
        if (cases[i].sweep) write_file(sw, "sweep.json", cases[i].sweep);
        if (cases[i].name) {
            snprintf(sub, sizeof sub, "%s/candidates", sw);
            mkdir(sub, 0777);
            snprintf(sub, sizeof sub, "candidates/%s", cases[i].name);
            write_file(sw, sub, cases[i].cand);
        }
        enum dse_status st;
        struct dse_err  err = { 0 };
        free(run_report(sw, DSE_FORMAT_MD, NULL, &st, &err));
        CHECK(st != DSE_OK);
        snprintf(want, sizeof want, cases[i].want, sw);
        CHECK_STR_EQ(dse_err_format(&err, got, sizeof got), want);
    }

    /* two files with one index: the later file (by name) is at fault */
    snprintf(sw, sizeof sw, "%s/dup", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "dup", 2, "");
    put_candidate(sw, "ca", 3, 0.5, 10, 10, "pending", -1);
    put_candidate(sw, "cb", 3, 0.5, 20, 10, "pending", -1);
    enum dse_status st;
    struct dse_err  err = { 0 };
    free(run_report(sw, DSE_FORMAT_CSV, NULL, &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_CONFIG);
    snprintf(want, sizeof want, "%s/candidates/cb.json:1: \"index\" = 3 is also the index of "
             "%s/candidates/ca.json; expected each index once (each replicate of it once)", sw, sw);
    CHECK_STR_EQ(dse_err_format(&err, got, sizeof got), want);

    /* a directory named like a candidate is read, and fails, never skipped */
    snprintf(sw, sizeof sw, "%s/isdir", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "isdir", 1, "");
    snprintf(sub, sizeof sub, "%s/candidates/cx.json", sw);
    mkdir(sub, 0777);
    free(run_report(sw, DSE_FORMAT_CSV, NULL, &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_IO);
    snprintf(want, sizeof want, "%s/candidates/cx.json: cannot read: Is a directory", sw);
    CHECK_STR_EQ(dse_err_format(&err, got, sizeof got), want);

    /* the directory itself */
    free(run_report("tests/sweeps/no_such_dir", DSE_FORMAT_MD, NULL, &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_IO);
    CHECK_STR_EQ(dse_err_format(&err, got, sizeof got),
                 "tests/sweeps/no_such_dir: cannot open the sweep directory: No such file or "
                 "directory; expected a directory made by dse sweep (docs/sweep-dir.md)");

    /* stray files are skipped: dot files (a writer's .tmp) and names not ending in .json */
    snprintf(sw, sizeof sw, "%s/stray", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "stray", 1, "");
    put_candidate(sw, "c1", 0, 0.5, 10, 10, "pending", -1);
    write_file(sw, "candidates/.c2.json.host.1.tmp", "{torn");
    write_file(sw, "candidates/.c3.json", "{torn");
    write_file(sw, "candidates/notes.txt", "{torn");
    write_file(sw, "candidates/c4.json.bak", "{torn");
    char *s = run_report(sw, DSE_FORMAT_CSV, NULL, &st, &err);
    CHECK_OK(st);
    CHECK_INT_EQ(count_of(s, "\n"), 2);
    free(s);
    rm_tree(dir);
}

/* A trained candidate with per-epoch results (docs/sweep-dir.md); top1s: one per epoch,
 * negative for null. */
static void put_trained(const char *dir, const char *id, int index, double sr, long params, const char *status,
                        const double *top1s, int epochs, const char *extra) {
    char text[3000], rel[64], pe[1500] = "";
    int o = 0;
    for (int e = 0; e < epochs; e++) {
        char t1[32];
        if (top1s[e] < 0) snprintf(t1, sizeof t1, "null");
        else snprintf(t1, sizeof t1, "%g", top1s[e]);
        o += snprintf(pe + o, sizeof pe - (size_t)o, "%s{\"epoch\": %d, \"train_loss\": 1.0, \"loss\": 1.0, "
                      "\"top1\": %s, \"top5\": null, \"seconds\": 2.5, \"img_per_s\": 100}", e ? ", " : "", e + 1, t1);
    }
    snprintf(text, sizeof text,
             "{\"id\": \"%s\", \"index\": %d,\n \"metaparams\": {\"sr\": %g, \"bypass\": \"none\"},\n"
             " \"params\": %ld, \"model_bytes\": %ld, \"flops\": 1000,\n"
             " \"train_mem_bytes\": null, \"status\": \"%s\", \"pruned_by\": null,\n"
             " \"top1\": %g, \"top5\": null, \"epochs_done\": %d, \"per_epoch\": [%s]%s}\n",
             id, index, sr, params, 4 * params, status, top1s[epochs - 1] < 0 ? 0.1 : top1s[epochs - 1], epochs,
             pe, extra);
    snprintf(rel, sizeof rel, "candidates/%s.json", id);
    write_file(dir, rel, text);
}

/* dse report --curves: one polyline per trained candidate, points per epoch with a
 * top-1 (null epochs skipped), the frontier's in red and labelled, a stopped one ending
 * in a hollow marker, a diverged one crossed; a bad per_epoch entry is an error naming
 * the file and line. */
static void test_report_curves(void) {
    char tmpl[] = "/tmp/dse_test_curves.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    char sw[256], svg[300];
    struct dse_err err = { 0 };
    snprintf(sw, sizeof sw, "%s/trained", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "curvy", 4, "\"sr\"");
    const double a[3] = { 0.5, 0.6, 0.7 }, b[3] = { 0.4, 0.55, 0.65 }, c[1] = { 0.3 }, d[2] = { 0.2, -1 };
    put_trained(sw, "ca", 0, 0.125, 1000, "done", a, 3, "");               /* small and best: frontier */
    put_trained(sw, "cb", 1, 0.25, 2000, "done", b, 3, "");                /* dominated */
    /* smallest, but stopped: the frontier is over fully trained candidates only */
    put_trained(sw, "cc", 2, 0.5, 500, "stopped", c, 1, ", \"stopped_rung\": 0, \"stopped_epoch\": 1");
    put_trained(sw, "cd", 3, 1.0, 4000, "diverged", d, 2, ", \"diverged_epoch\": 2, \"diverged_iter\": 7");
    snprintf(svg, sizeof svg, "%s/curves.svg", dir);
    CHECK_OK(dse_report_curves(sw, svg, &err));
    char *s = slurp(svg);
    CHECK(s != NULL);
    if (s) {
        CHECK(starts_with(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""));
        CHECK(well_formed_xml(s));
        CHECK_INT_EQ(count_of(s, "<polyline"), 4);
        CHECK(strstr(s, "points=\"") != NULL);
        CHECK_INT_EQ(count_of(s, "stroke=\"#d62728\" stroke-width=\"2.2\""), 1); /* ca, the frontier */
        CHECK_INT_EQ(count_of(s, "fill=\"white\" stroke="), 1 + 0);               /* cc stopped */
        CHECK_INT_EQ(count_of(s, "l8 8m0 -8l-8 8"), 1);                               /* cd diverged */
        CHECK(strstr(s, ">sr=0.125</text>") && !strstr(s, ">sr=0.5</text>") && !strstr(s, ">sr=0.25</text>"));
        CHECK(strstr(s, "test top-1 after each epoch") != NULL);
        CHECK(!strstr(s, "nan") && !strstr(s, "inf"));
        /* ca's line has 3 points, cd's 1 (its second epoch has no top-1) */
        const char *pa = strstr(s, "<title>ca sr=0.125</title>");
        CHECK(pa != NULL);
        if (pa) {
            const char *pts = strstr(pa, "points=\""), *end = pts ? strchr(pts + 8, '"') : NULL;
            int commas = 0;
            for (const char *q = pts; q && q < end; q++) commas += *q == ',';
            CHECK_INT_EQ(commas, 3);
        }
        free(s);
    }
    /* the size plot: the stopped candidate hollow (its top-1 is from its rung), with a
     * legend entry saying so */
    snprintf(svg, sizeof svg, "%s/plot.svg", dir);
    enum dse_status pst;
    free(run_report(sw, DSE_FORMAT_MD, svg, &pst, &err));
    CHECK_OK(pst);
    s = slurp(svg);
    CHECK(s && count_of(s, "fill=\"white\" stroke=\"#4c78a8\" stroke-width=\"1.8\"") == 2);
    CHECK(s && strstr(s, ">stopped early (top-1 at its rung)</text>") != NULL);
    free(s);
    /* a per_epoch entry without an epoch number */
    put_trained(sw, "cb", 1, 0.25, 2000, "done", b, 3, ", \"per_epoch_note\": 1");
    write_file(sw, "candidates/cb.json", "{\"id\": \"cb\", \"index\": 1, \"metaparams\": {\"sr\": 0.25},\n"
               "\"params\": 1, \"model_bytes\": 4, \"flops\": 1, \"status\": \"done\", \"top1\": 0.5,\n"
               "\"per_epoch\": [{\"top1\": 0.5}]}\n");
    CHECK_INT_EQ(dse_report_curves(sw, svg, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "cb.json:3: \"per_epoch\"[0] is not {\"epoch\": k >= 1") != NULL);
    if (!strstr(err.msg, "cb.json:3:")) fprintf(stderr, "  got: %s\n", err.msg);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_INT_EQ(system(cmd), 0);
}

/* ---- label layout: every text inside the canvas, labels off error bars and each other ---- */

struct text_box {
    double x0, y0, x1, y1;
    char   text[200];
};

/* The value of attribute name in the tag starting at tag (up to its '>'), or NULL. */
static const char *attr(const char *tag, const char *name, char *buf, size_t size) {
    const char *end = strchr(tag, '>');
    char pat[64];
    snprintf(pat, sizeof pat, " %s=\"", name);
    const char *a = strstr(tag, pat);
    if (!a || !end || a > end) return NULL;
    a += strlen(pat);
    size_t n = strcspn(a, "\"");
    if (n >= size) n = size - 1;
    memcpy(buf, a, n);
    buf[n] = '\0';
    return buf;
}

/* The boxes of an SVG's <text> elements, as the writer measures them (dse_report_text_width;
 * from 0.8 em above the baseline to 0.25 em below), font sizes inherited from <g>; rotated
 * ones (axis titles) left out. Returns the count, at most max. */
static int svg_text_boxes(const char *svg, struct text_box *b, int max) {
    double fs_stack[32] = { 16 };
    int    depth = 0, n = 0;
    char   v[200];
    for (const char *p = svg; (p = strchr(p, '<')) != NULL; p++) {
        if (!strncmp(p, "<g", 2) && (p[2] == ' ' || p[2] == '>')) {
            double fs = attr(p, "font-size", v, sizeof v) ? atof(v) : fs_stack[depth];
            if (depth + 1 < 32) fs_stack[++depth] = fs;
        } else if (!strncmp(p, "</g>", 4)) {
            if (depth > 0) depth--;
        } else if (!strncmp(p, "<text", 5) && n < max && !attr(p, "transform", v, sizeof v)) {
            double fs = attr(p, "font-size", v, sizeof v) ? atof(v) : fs_stack[depth];
            double x = attr(p, "x", v, sizeof v) ? atof(v) : 0, y = attr(p, "y", v, sizeof v) ? atof(v) : 0;
            const int bold = attr(p, "font-weight", v, sizeof v) && !strcmp(v, "bold");
            const char *anchor = attr(p, "text-anchor", v, sizeof v) ? v : "start";
            const int mid = !strcmp(anchor, "middle"), end = !strcmp(anchor, "end");
            const char *t = strchr(p, '>') + 1, *close = strstr(t, "</text>");
            int k = 0;
            for (const char *q = t; q < close && k + 1 < (int)sizeof b[n].text; q++) { /* entities: one character */
                if (*q == '&') {
                    b[n].text[k++] = q[1] == 'a' ? '&' : q[1] == 'l' ? '<' : q[1] == 'g' ? '>' : '"';
                    q = strchr(q, ';');
                } else {
                    b[n].text[k++] = *q;
                }
            }
            b[n].text[k] = '\0';
            const double w = dse_report_text_width(b[n].text, fs, bold);
            b[n].x0 = mid ? x - w / 2 : end ? x - w : x, b[n].x1 = b[n].x0 + w;
            b[n].y0 = y - 0.8 * fs, b[n].y1 = y + 0.25 * fs;
            n++;
        }
    }
    return n;
}

/* Every text inside the width x height canvas; every label (a text with '=') clear of
 * every error bar (its stem and caps, 4 px either side) and of every other label. */
static void check_layout(const char *svg, double width, double height) {
    struct text_box *b = malloc(sizeof *b * 400);
    if (!b) return;
    const int n = svg_text_boxes(svg, b, 400);
    CHECK(n > 0);
    for (int i = 0; i < n; i++) {
        const int in = b[i].x0 >= 0 && b[i].x1 <= width && b[i].y0 >= 0 && b[i].y1 <= height;
        CHECK(in);
        if (!in) fprintf(stderr, "  text '%s' [%.1f, %.1f] x [%.1f, %.1f] leaves the canvas\n", b[i].text, b[i].x0,
                         b[i].x1, b[i].y0, b[i].y1);
    }
    for (const char *p = svg; (p = strstr(p, "<path class=\"errbar\" d=\"M")) != NULL; p++) {
        double x, y0, y1;
        if (sscanf(p + strlen("<path class=\"errbar\" d=\"M"), "%lf %lfV%lf", &x, &y0, &y1) != 3) continue;
        for (int i = 0; i < n; i++) {
            if (!strchr(b[i].text, '=')) continue;
            const int hit = b[i].x0 < x + 4 && b[i].x1 > x - 4 && b[i].y0 < fmax(y0, y1) && b[i].y1 > fmin(y0, y1);
            CHECK(!hit);
            if (hit) fprintf(stderr, "  label '%s' crosses the error bar at x %.1f\n", b[i].text, x);
        }
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (!strchr(b[i].text, '=') || !strchr(b[j].text, '=')) continue;
            const int hit = b[i].x0 < b[j].x1 && b[j].x0 < b[i].x1 && b[i].y0 < b[j].y1 && b[j].y0 < b[i].y1;
            CHECK(!hit);
            if (hit) fprintf(stderr, "  labels '%s' and '%s' overlap\n", b[i].text, b[j].text);
        }
    free(b);
}

/* Plots and learning curves of sweeps whose labels are long (four varied keys), whose
 * frontier curves end close together, and whose replicates' error bars are tall: every
 * text stays inside the 860 x 600 canvas, no label crosses an error bar or another label. */
static void test_report_layout(void) {
    char tmpl[] = "/tmp/dse_test_layout.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    char sw[256], svg[300], rel[80], text[3000];
    struct dse_err  err = { 0 };
    enum dse_status st;
    static const char *const bypass[3] = { "none", "simple", "complex" };
    for (int reps = 1; reps <= 3; reps += 2) {
        snprintf(sw, sizeof sw, "%s/sweep%d", dir, reps);
        mkdir(sw, 0777);
        put_sweep(sw, "layout", 6, "\"sr\", \"pct3x3\", \"base_e\", \"bypass\"");
        for (int a = 0; a < 6; a++)
            for (int r = 0; r < reps; r++) {
                char pe[600] = "", id[40];
                int o = 0;
                /* larger and better: all on the frontier, their last top-1 within half a point */
                const double last = 0.70 + 0.001 * a + (reps > 1 ? 0.06 * (r - 1) * (a % 2 ? 1 : -1) : 0);
                for (int e = 0; e < 4; e++)
                    o += snprintf(pe + o, sizeof pe - (size_t)o, "%s{\"epoch\": %d, \"train_loss\": 1.0, \"loss\": 1.0, "
                                  "\"top1\": %g, \"top5\": null, \"seconds\": 2.5, \"img_per_s\": 100}", e ? ", " : "",
                                  e + 1, last - 0.1 * (3 - e) * (1 + 0.1 * a));
                snprintf(id, sizeof id, "c%016x%s", a + 1, r ? (r == 1 ? "r1" : "r2") : "");
                snprintf(text, sizeof text,
                         "{\"id\": \"%s\", \"index\": %d,%s\n \"metaparams\": {\"sr\": %g, \"pct3x3\": %g, \"base_e\": %d, "
                         "\"bypass\": \"%s\"},\n \"params\": %d, \"model_bytes\": %d, \"flops\": 1000,\n"
                         " \"train_mem_bytes\": null, \"status\": \"done\", \"pruned_by\": null,\n"
                         " \"top1\": %g, \"top5\": null, \"epochs_done\": 4, \"per_epoch\": [%s]}\n",
                         id, a, reps > 1 ? (const char *[]){ " \"replicate\": 0,", " \"replicate\": 1,",
                                                             " \"replicate\": 2," }[r] : "",
                         0.125 * (a + 1), 0.0625 * (a + 3), 128 * (a + 1), bypass[a % 3], 1000000 + 250000 * a,
                         4000000 + 1000000 * a, last, pe);
                snprintf(rel, sizeof rel, "candidates/%s.json", id);
                write_file(sw, rel, text);
            }
        snprintf(svg, sizeof svg, "%s/curves%d.svg", dir, reps);
        CHECK_OK(dse_report_curves(sw, svg, &err));
        char *s = slurp(svg);
        CHECK(s && count_of(s, "<polyline") == 6 * reps - (reps > 1 ? 6 * (reps - 1) : 0));
        if (s) check_layout(s, 860, 600);
        free(s);
        snprintf(svg, sizeof svg, "%s/plot%d.svg", dir, reps);
        free(run_report(sw, DSE_FORMAT_MD, svg, &st, &err));
        CHECK_OK(st);
        s = slurp(svg);
        CHECK(s && count_of(s, "class=\"errbar\"") == (reps > 1 ? 6 : 0));
        if (s) check_layout(s, 860, 600);
        free(s);
    }
    rm_tree(dir);
}

/* A pending candidate with a live lease shows as running (candidate files never say
 * running); once the lease is released it is pending again. */
static void test_report_running(void) {
    char tmpl[] = "/tmp/dse_test_running.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    struct dse_err  err = { 0 };
    enum dse_status st;
    put_sweep(dir, "live", 2, "\"sr\"");
    put_candidate(dir, "ca", 0, 0.125, 1000, 1000, "pending", -1);
    put_candidate(dir, "cb", 1, 0.25, 2000, 2000, "pending", -1);
    struct dse_lease_me me;
    struct dse_lease    l;
    int                 won = 0;
    dse_lease_me_init(&me);
    CHECK_OK(dse_lease_claim(dir, "ca", 0, &me, 60.0, NULL, &l, &won, &err));
    CHECK_INT_EQ(won, 1);
    char *s = run_report(dir, DSE_FORMAT_CSV, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(s && strstr(s, "\nca,0,") && strstr(strstr(s, "\nca,0,"), ",running,") != NULL);
    CHECK(s && strstr(s, "\ncb,1,") && strstr(strstr(s, "\ncb,1,"), ",pending,") != NULL);
    free(s);
    CHECK_OK(dse_lease_release(dir, &l, &err));
    s = run_report(dir, DSE_FORMAT_CSV, NULL, &st, &err);
    CHECK(s && strstr(s, "\nca,0,") && strstr(strstr(s, "\nca,0,"), ",pending,") != NULL);
    free(s);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_INT_EQ(system(cmd), 0);
}

/* dse report A B --plot: both frontiers on one plot, each in its colour, named in the
 * legend; a trained and an untrained sweep do not mix. */
static void test_report_overlay(void) {
    char tmpl[] = "/tmp/dse_test_overlay.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    char plot[256];
    struct dse_err err = { 0 };
    snprintf(plot, sizeof plot, "%s/both.svg", dir);
    const char *dirs[] = { SMALL, "tests/sweeps/squeeze_ratio_trained" };
    CHECK_OK(dse_report_overlay(dirs, 2, plot, &err));
    char *s = slurp(plot);
    CHECK(s && well_formed_xml(s));
    CHECK(s && strstr(s, ">Pareto frontiers of 2 sweeps: model size vs top-1 accuracy</text>"));
    CHECK(s && strstr(s, ">small_grid (tests/sweeps/small): 2 on the frontier</text>"));
    CHECK(s && strstr(s, ">squeeze_ratio (tests/sweeps/squeeze_ratio_trained): 6 on the frontier</text>"));
    CHECK(s && count_of(s, "<polyline fill=\"none\" stroke=\"#d62728\"") == 1);
    CHECK(s && count_of(s, "<polyline fill=\"none\" stroke=\"#1f77b4\"") == 1);
    CHECK(s && count_of(s, "r=\"5\" fill=\"#1f77b4\"") == 6); /* sweep 2's frontier points */
    free(s);
    const char *mixed[] = { SMALL, "tests/sweeps/squeeze_ratio" };
    CHECK_INT_EQ(dse_report_overlay(mixed, 2, plot, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "this sweep's frontier is analytic but tests/sweeps/small's is trained") != NULL);
    CHECK_INT_EQ(dse_report_overlay(mixed, 9, plot, &err), DSE_ERR_CONFIG);
    rm_tree(dir);
}

/* One epoch's results (engine/epoch.def) written as a record's per_epoch entry and read
 * back: the same bits; unknown values as null, an unknown count left out. */
static void test_epoch_record(void) {
    const struct dse_epoch_result in = { .train_loss = 2.4603744f, .test_loss = 0.1f, .top1 = 0.7487f, .top5 = 1.0f,
                                      .seconds = 12.3456, .img_per_s = 563.75, .unpredicted = 2 };
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return;
    dse_rec_epoch_write(f, 3, &in);
    fclose(f);
    CHECK_STR_EQ(text, "{\"epoch\": 3, \"train_loss\": 2.4603744, \"loss\": 0.1, \"top1\": 0.7487, \"top5\": 1, "
                       "\"seconds\": 12.346, \"img_per_s\": 563.8, \"unpredicted\": 2}");
    struct dse_err err = { 0 };
    struct dse_json_doc *d = parse(text, &err);
    CHECK(d != NULL);
    if (d) {
        struct dse_epoch_result out = dse_rec_epoch_read(dse_json_root(d));
        CHECK(out.train_loss == in.train_loss && out.test_loss == in.test_loss && out.top1 == in.top1 &&
              out.top5 == in.top5);
        CHECK_NEAR(out.seconds, 12.346, 0);
        CHECK_INT_EQ(out.unpredicted, 2);
        dse_json_free(d);
    }
    free(text);
    text = NULL;
    f = open_memstream(&text, &len);
    if (!f) return;
    const struct dse_epoch_result unknown = dse_rec_epoch_unknown();
    dse_rec_epoch_write(f, 1, &unknown);
    fclose(f);
    CHECK_STR_EQ(text, "{\"epoch\": 1, \"train_loss\": null, \"loss\": null, \"top1\": null, \"top5\": null, "
                       "\"seconds\": 0.000, \"img_per_s\": 0.0}");
    free(text);
}

/* ---- replicates ------------------------------------------------------------------------ */

#define REPLICATES "tests/sweeps/replicates"

/* The statistics of a sweep with replicates (sweep_read.c), on numbers worked by hand. */
static void test_replicates_stats(void) {
    double mean, sd;
    int    n;
    const double a[] = { 0.60, 0.62, 0.64 };        /* mean 0.62; deviations -0.02, 0, 0.02: std sqrt(8e-4 / 2) = 0.02 */
    dse_sweep_mean_std(a, 3, &n, &mean, &sd);
    CHECK_INT_EQ(n, 3);
    CHECK_NEAR(mean, 0.62, 1e-12);
    CHECK_NEAR(sd, 0.02, 1e-9);
    const double b[] = { 0.80, NAN, 0.50, 0.53 };   /* NaN skipped: mean 0.61, std sqrt(0.0546 / 2) = 0.165227 */
    dse_sweep_mean_std(b, 4, &n, &mean, &sd);
    CHECK_INT_EQ(n, 3);
    CHECK_NEAR(mean, 0.61, 1e-12);
    CHECK_NEAR(sd, 0.16522711641858, 1e-9);
    const double c[] = { NAN, 0.7 };                /* one value: no spread */
    dse_sweep_mean_std(c, 2, &n, &mean, &sd);
    CHECK(n == 1 && mean == 0.7 && isnan(sd));
    dse_sweep_mean_std(c, 1, &n, &mean, &sd);       /* none */
    CHECK(n == 0 && isnan(mean) && isnan(sd));
    /* the group's record: running wins over pending and done; the mean over done replicates only */
    struct dse_rec r[3];
    for (int i = 0; i < 3; i++) dse_rec_init(&r[i]);
    r[0].status = DSE_REC_DONE, r[0].top1 = 0.5, r[0].top5 = 0.9;
    r[1].status = DSE_REC_DIVERGED, r[1].top1 = 0.1;  /* not done: left out */
    r[2].status = DSE_REC_DONE, r[2].top1 = 0.7, r[2].top5 = 0.8;
    const struct dse_rec *reps[3] = { &r[0], &r[1], &r[2] };
    struct dse_rec g = dse_sweep_group_rec(reps, 3, &n, &sd);
    CHECK_INT_EQ(g.status, DSE_REC_DONE);
    CHECK_INT_EQ(n, 2);
    CHECK_NEAR(g.top1, 0.6, 1e-12);
    CHECK_NEAR(g.top5, 0.85, 1e-12);
    CHECK_NEAR(sd, 0.14142135623731, 1e-9);
    r[1].status = DSE_REC_PENDING;
    CHECK_INT_EQ(dse_sweep_group_rec(reps, 3, &n, &sd).status, DSE_REC_PENDING);
    r[2].status = DSE_REC_RUNNING;
    CHECK_INT_EQ(dse_sweep_group_rec(reps, 3, &n, &sd).status, DSE_REC_RUNNING);
    /* within noise: the means differ by less than the larger std */
    struct dse_cand x = { .reps = &x, .top1_std = 0.04 }, y = { .reps = &y, .top1_std = 0.01 };
    x.rec.top1 = 0.70, y.rec.top1 = 0.72;
    CHECK(dse_sweep_within_noise(&x, &y) && dse_sweep_within_noise(&y, &x));
    y.rec.top1 = 0.75;
    CHECK(!dse_sweep_within_noise(&x, &y));
    y.rec.top1 = 0.72, x.reps = NULL;                /* no replicates: never */
    CHECK(!dse_sweep_within_noise(&x, &y));
}

/* tests/sweeps/replicates: 4 architectures x 3 replicates (README): one row each, mean ±
 * std worked by hand, the frontier and the best on the mean, error bars in the plot. */
/* The best architecture's replicate 0 diverged while replicate 1 finished: --best and the
 * report's export command name replicate 1, whose weights exist (an architecture is done
 * when any replicate is). A copy of REPLICATES with c2's replicates 0 and 2 swapped. */
static void test_report_replicates_export(void) {
    char tmpl[] = "/tmp/dse_test_report_rep.XXXXXX", cmd[300], path[300];
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(cmd, sizeof cmd, "cp -r " REPLICATES "/. %s/", dir);
    CHECK_INT_EQ(system(cmd), 0);
    static const char *const swap[][3] = { /* file, from, to */
        { "c2ccccccccccccccc.json", "\"status\": \"done\"", "\"status\": \"diverged\"" },
        { "c2ccccccccccccccc.json", "\"top1\": 0.71,", "\"top1\": null," },
        { "c2cccccccccccccccr2.json", "\"status\": \"diverged\"", "\"status\": \"done\"" },
        { "c2cccccccccccccccr2.json", "\"top1\": null,", "\"top1\": 0.71," },
    };
    for (size_t i = 0; i < DSE_ARRAY_LEN(swap); i++) {
        char *text = NULL, *at;
        snprintf(path, sizeof path, "%s/candidates/%s", dir, swap[i][0]);
        CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
        CHECK(text && (at = strstr(text, swap[i][1])));
        if (!text || !(at = strstr(text, swap[i][1]))) { free(text); continue; }
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (f) fprintf(f, "%.*s%s%s", (int)(at - text), text, swap[i][2], at + strlen(swap[i][1])), fclose(f);
        free(text);
    }
    struct dse_report_best best;
    struct dse_err err = { 0 };
    CHECK_OK(dse_report_best(dir, 0, &best, &err));
    CHECK_STR_EQ(best.id, "c2cccccccccccccccr1");
    CHECK_NEAR(best.top1, 0.72, 1e-12); /* the mean of 0.73 and 0.71 */
    enum dse_status st;
    char *s = run_report(dir, DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(s && strstr(s, "--id c2cccccccccccccccr1 --out c2cccccccccccccccr1.onnx"));
    free(s);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_INT_EQ(system(cmd), 0);
}

static void test_report_replicates(void) {
    enum dse_status st;
    struct dse_err  err = { 0 };
    char           *s = run_report(REPLICATES, DSE_FORMAT_MD, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(starts_with(s, "# Sweep replicates_grid: 12 candidates (4 architectures x 3 replicates); by architecture: "
                         "0 pruned, 0 pending, 4 done\n")); /* counted as dse status counts them */
    CHECK_INT_EQ(count_of(s, "\n| c0aaaaaaaaaaaaaaa "), 2);          /* one row per architecture (table, frontier) */
    CHECK(s && !strstr(s, "c0aaaaaaaaaaaaaaar1"));
    CHECK(strstr(s, "| 3/3 |         62.00 ± 2.00 |") != NULL);  /* 0.60 0.62 0.64 */
    CHECK(strstr(s, "| 3/3 |         70.00 ± 4.00 |") != NULL);  /* 0.70 0.74 0.66 */
    CHECK(strstr(s, "| 2/3 |         72.00 ± 1.41 |") != NULL);  /* 0.71 0.73, the third diverged */
    CHECK(strstr(s, "| 3/3 |        61.00 ± 16.52 |    89.3 |          |") != NULL); /* 0.80 0.50 0.53: off the frontier */
    /* the frontier on the mean: c3's replicate 0 (80%) is the best single run, its mean is not */
    CHECK(strstr(s, "## Frontier (max top1, min model size): 3 of 4 architectures") != NULL);
    CHECK(strstr(s, "- Within noise: c1bbbbbbbbbbbbbbb (70.00) and c2ccccccccccccccc (72.00) differ by 2.00 points, "
                    "less than the larger standard deviation (4.00): not a win either way.\n") != NULL);
    CHECK_INT_EQ(count_of(s, "Within noise"), 1);                  /* c0 -> c1: 8 points, more than 4 */
    CHECK(strstr(s, "Best trained candidate: c2ccccccccccccccc (index 2, top-1 72.00%") != NULL);
    check_golden("replicates.md", s);
    free(s);
    s = run_report(REPLICATES, DSE_FORMAT_CSV, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(strstr(s, ",top1,top5,frontier,replicates,top1_n,top1_std,within_noise\n") != NULL);
    CHECK(strstr(s, ",done,,0.72,0.95,yes,3,2,0.014142135623730963,yes\n") != NULL);
    check_golden("replicates.csv", s);
    free(s);
    s = run_report(REPLICATES, DSE_FORMAT_JSON, NULL, &st, &err);
    CHECK_OK(st);
    struct dse_json_doc *d = parse(s, &err);
    CHECK(d != NULL);
    if (d) {
        const struct dse_json *c = dse_json_get(dse_json_root(d), "candidates");
        CHECK(c && c->n == 4);
        const struct dse_json *c2 = c && c->n == 4 ? &c->items[2] : NULL, *reps = c2 ? dse_json_get(c2, "replicates") : NULL;
        CHECK(reps && reps->n == 3);
        if (reps && reps->n == 3) {
            CHECK_STR_EQ(dse_json_get(&reps->items[1], "id")->str, "c2cccccccccccccccr1");
            CHECK_INT_EQ((int)dse_json_get(&reps->items[2], "seed")->integer, 9);
            CHECK_STR_EQ(dse_json_get(&reps->items[2], "status")->str, "diverged");
        }
        CHECK(c2 && dse_json_get(c2, "top1_n")->integer == 2);
        dse_json_free(d);
    }
    check_golden("replicates.json", s);
    free(s);
    /* the plot: an error bar at each point (all four have a spread) */
    char tmpl[] = "/tmp/dse_test_report.XXXXXX", plot[256];
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(plot, sizeof plot, "%s/replicates.svg", dir);
    free(run_report(REPLICATES, DSE_FORMAT_MD, plot, &st, &err));
    CHECK_OK(st);
    check_svg(plot, 4, "replicates_grid");
    s = slurp(plot);
    CHECK_INT_EQ(count_of(s, "<path class=\"errbar\""), 4);
    if (s) check_golden("replicates.svg", s);
    free(s);
    /* a sweep without replicates draws none */
    snprintf(plot, sizeof plot, "%s/small.svg", dir);
    free(run_report(SMALL, DSE_FORMAT_MD, plot, &st, &err));
    s = slurp(plot);
    CHECK(s && !strstr(s, "errbar"));
    free(s);
    rm_tree(dir);
}

static const struct check_case cases[] = {
    { "pareto-basic",  test_pareto_basic },
    { "pareto-ties",   test_pareto_ties },
    { "pareto-nan",    test_pareto_nan },
    { "pareto-brute",  test_pareto_brute },
    { "json-read",     test_json_read },
    { "json-write",    test_json_write },
    { "json-errors",   test_json_errors },
    { "json-hostile",  test_json_hostile },
    { "report-md",     test_report_md },
    { "report-replicates-stats", test_replicates_stats },
    { "report-replicates", test_report_replicates },
    { "report-replicates-export", test_report_replicates_export },
    { "report-csv",    test_report_csv },
    { "report-tex",    test_report_tex },
    { "report-json",   test_report_json },
    { "report-plot",   test_report_plot },
    { "report-plot-killed", test_report_plot_killed },
    { "report-plot-flops", test_report_plot_flops },
    { "report-curves", test_report_curves },
    { "report-layout", test_report_layout },
    { "report-running", test_report_running },
    { "report-next",   test_report_next },
    { "status-strict", test_status_strict },
    { "report-overlay", test_report_overlay },
    { "epoch-record",  test_epoch_record },
    { "report-errors", test_report_errors },
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
