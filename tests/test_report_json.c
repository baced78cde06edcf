/* test_report_json.c: test_report's cases on the strict JSON reader and writer
 * (sweep/json_read.c): what it reads, what it refuses and why, hostile input. */
#include "tests/report_util.h"

/* ---- JSON reader -------------------------------------------------------------------- */

/* The writer (dse_json_write_str, dse_json_str): escapes, and each byte that starts no
 * valid UTF-8 sequence as U+FFFD, so that what it writes the strict reader reads. */
void test_json_write(void) {
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

void test_json_read(void) {
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

void test_json_errors(void) {
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
void test_json_hostile(void) {
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

/* sweep/record.def's reports column says which keys of a candidate record dse report's CSV
 * and JSON show; the report's own column lists (dse/report_sweep.c) must agree, key by key. */
void test_report_record_keys(void) {
    static const struct {
        const char *key, *reports;
    } rows[] = {
#define DSE_REC(key, field, kind, absent, lo, hi, line, when, file, reports) { key, #reports },
#include "sweep/record.def"
#undef DSE_REC
    };
    int csv = 0, json = 0;
    for (int i = 0; i < DSE_ARRAY_LEN(rows); i++) {
        const int want_csv = strstr(rows[i].reports, "csv") != NULL, want_json = strstr(rows[i].reports, "json") != NULL;
        CHECK(want_csv || want_json || !strcmp(rows[i].reports, "none"));
        if (dse_report_shows_key(DSE_FORMAT_CSV, rows[i].key) != want_csv ||
            dse_report_shows_key(DSE_FORMAT_JSON, rows[i].key) != want_json)
            fprintf(stderr, "  record.def's %s says reports %s\n", rows[i].key, rows[i].reports);
        CHECK_INT_EQ(dse_report_shows_key(DSE_FORMAT_CSV, rows[i].key), want_csv);
        CHECK_INT_EQ(dse_report_shows_key(DSE_FORMAT_JSON, rows[i].key), want_json);
        csv += want_csv, json += want_json;
    }
    CHECK(csv >= 15 && json >= 20);
    /* the keys dse_report_shows_key names by hand (before the columns, and a replicate's
     * own) are in a real report of a sweep with replicates */
    enum dse_status st;
    struct dse_err err = { 0 };
    char *j = run_report(REPLICATES, DSE_FORMAT_JSON, NULL, &st, &err);
    char *c = run_report(REPLICATES, DSE_FORMAT_CSV, NULL, &st, &err);
    static const char *const by_hand[] = { "id", "index", "metaparams", "replicate", "seed", "status", "top1", "top5" };
    for (int i = 0; i < DSE_ARRAY_LEN(by_hand); i++) {
        char key[40];
        snprintf(key, sizeof key, "\"%s\": ", by_hand[i]);
        CHECK(j && strstr(j, key) != NULL);
    }
    CHECK(c && starts_with(c, "id,index,"));
    free(j), free(c);
    CHECK(!dse_report_shows_key(DSE_FORMAT_CSV, "lease_gen") && dse_report_shows_key(DSE_FORMAT_CSV, "macs"));
}
