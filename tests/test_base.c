/* test_base.c: status names, error records and string helpers. */
#include "base/base.h"

#include "base/pcg32.h"
#include "tests/check.h"

static void test_errors(void) {
    struct dse_err err = { 0 };
    char buf[300];
    CHECK_INT_EQ(dse_err_set(&err, DSE_ERR_CONFIG, "a.cfg", 7, "bad %s = %d", "x", 3), DSE_ERR_CONFIG);
    CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), "a.cfg:7: bad x = 3");
    err.line = 0;
    CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), "a.cfg: bad x = 3");
    err.file = NULL;
    CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), "bad x = 3");
    CHECK_INT_EQ(dse_err_set(NULL, DSE_ERR_IO, NULL, 0, "ignored"), DSE_ERR_IO);
    CHECK_STR_EQ(dse_status_str(DSE_ERR_SHAPE), "shape error");
    CHECK_STR_EQ(dse_status_str((enum dse_status)99), "unknown status");
}

static void test_strings(void) {
    char small[4];
    CHECK_INT_EQ(dse_strlcpy(small, "abc", 4), 0);
    CHECK_STR_EQ(small, "abc");
    CHECK_INT_EQ(dse_strlcpy(small, "abcd", 4), -1);
    CHECK_STR_EQ(small, "abc");
    CHECK_INT_EQ(dse_edit_distance("stride", "strid"), 1);
    CHECK_INT_EQ(dse_edit_distance("pct3x3", "pct3x33"), 1);
    CHECK_INT_EQ(dse_edit_distance("kernel", "kernel"), 0);
    CHECK_INT_EQ(dse_edit_distance("", "abc"), 3);
    char sug[16];
    CHECK_INT_EQ(dse_word_index("  name type  inputs ", "inputs"), 2);
    CHECK_INT_EQ(dse_word_index("name type", "nam"), -1);
    CHECK_INT_EQ(dse_word_index("", "x"), -1);
    CHECK_INT_EQ(dse_word_suggest("kernel stride pad", "strid", sug, sizeof sug), 1);
    CHECK_STR_EQ(sug, "stride");
    CHECK_INT_EQ(dse_word_suggest("kernel stride pad", "dilation", sug, sizeof sug), 0);
    CHECK_STR_EQ(sug, "");
}

/* The reference output of pcg32-demo (pcg-c-basic): seed 42, stream 54. */
static void test_pcg32(void) {
    static const uint32_t want[6] = { 0xa15c02b7, 0x7b47f409, 0xba1d3330,
                                      0x83d2f293, 0xbfa4784b, 0xcbed606e };
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 42u, 54u);
    for (int i = 0; i < 6; i++) CHECK_INT_EQ(dse_pcg32_next(&r), want[i]);
    /* bounded draws stay in range and cover it */
    int seen[7] = { 0 };
    for (int i = 0; i < 700; i++) {
        uint32_t v = dse_pcg32_bounded(&r, 7);
        CHECK(v < 7);
        if (v < 7) seen[v]++;
    }
    for (int i = 0; i < 7; i++) CHECK(seen[i] > 50);
    for (int i = 0; i < 100; i++) CHECK(dse_pcg32_bounded64(&r, 30000000000ULL) < 30000000000ULL);
}

static void test_fnv(void) {
    /* FNV-1a 64 test vectors (Fowler/Noll/Vo): "" and "a" and "foobar" */
    CHECK(dse_fnv1a64(DSE_FNV64_INIT, "", 0) == 0xcbf29ce484222325ULL);
    CHECK(dse_fnv1a64(DSE_FNV64_INIT, "a", 1) == 0xaf63dc4c8601ec8cULL);
    CHECK(dse_fnv1a64(DSE_FNV64_INIT, "foobar", 6) == 0x85944171f73967e8ULL);
}

static const struct check_case cases[] = {
    { "base-errors",  test_errors },
    { "base-strings", test_strings },
    { "base-pcg32",   test_pcg32 },
    { "base-fnv",     test_fnv },
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
