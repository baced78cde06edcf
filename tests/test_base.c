/* test_base.c: status names, error records and string helpers. */
#include "base/base.h"

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
}

static const struct check_case cases[] = {
    { "base-errors",  test_errors },
    { "base-strings", test_strings },
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
