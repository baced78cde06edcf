/* check.h: all the test harness there is (docs/conventions.md#tests). Checks print file:line
 * and keep going; a test program lists its cases in a table with ids, runs the ones
 * whose id starts with any argument (or all), and returns nonzero if any check failed. */
#ifndef DSE_TESTS_CHECK_H
#define DSE_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A test program of several files defines CHECK_SHARED_COUNTS before including this, and one
 * of its files defines the counts (tests/sweep_util.c): a check failed in any file counts. */
#ifdef CHECK_SHARED_COUNTS
extern int check_failures, check_count, check_skips;
#else
static int check_failures;
static int check_count;
static int check_skips; /* cases that said CHECK_SKIP */
#endif

/* A case that cannot run here (no device, no dataset) says why and returns; when every case
 * a run selected skipped, check_main returns 77 (ctest's SKIP_RETURN_CODE: shown as not
 * run, never as passed). */
#define CHECK_SKIP(...) do { check_skips++; printf("SKIP: "); printf(__VA_ARGS__); printf("\n"); } while (0)

#define CHECK(c) do { check_count++; if (!(c)) { check_failures++; \
    fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); } } while (0)

#define CHECK_INT_EQ(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); check_count++; \
    if (a_ != b_) { check_failures++; fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
    __FILE__, __LINE__, #a, a_, #b, b_); } } while (0)

#define CHECK_NEAR(a, b, rel) do { double a_ = (double)(a), b_ = (double)(b); check_count++; \
    if (!(fabs(a_ - b_) <= (rel) * fabs(b_))) { check_failures++; \
    fprintf(stderr, "%s:%d: %s == %.9g, expected %.9g (rel %g)\n", __FILE__, __LINE__, #a, a_, b_, \
    (double)(rel)); } } while (0)

#define CHECK_STR_EQ(a, b) do { const char *a_ = (a), *b_ = (b); check_count++; \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) { check_failures++; \
    fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
    a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } } while (0)

#define CHECK_OK(st) do { int st_ = (int)(st); check_count++; if (st_ != 0) { check_failures++; \
    fprintf(stderr, "%s:%d: %s returned status %d\n", __FILE__, __LINE__, #st, st_); } } while (0)

struct check_case {
    const char *id;
    void (*fn)(void);
};

/* Runs cases whose id starts with one of argv[1..]; all if none given. */
static inline int check_main(const struct check_case *cases, int n, int argc, char **argv) {
    int ran = 0, skipped = 0;
    for (int i = 0; i < n; i++) {
        int want = argc <= 1;
        for (int a = 1; a < argc && !want; a++)
            want = strncmp(cases[i].id, argv[a], strlen(argv[a])) == 0;
        if (!want) continue;
        int before = check_failures, skips = check_skips;
        cases[i].fn();
        ran++;
        skipped += check_skips != skips;
        printf("%-28s %s\n", cases[i].id, check_failures == before ? "ok" : "FAILED");
    }
    printf("%d cases, %d checks, %d failed\n", ran, check_count, check_failures);
    return check_failures ? 1 : !ran ? 1 : skipped == ran ? 77 : 0;
}

#endif
