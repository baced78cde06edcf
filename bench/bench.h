/* bench.h: what every benchmark in bench/ needs: a monotonic clock, a comparison for
 * sorting timings and their median and minimum. Header-only: each benchmark is its own
 * program. */
#ifndef DSE_BENCH_H
#define DSE_BENCH_H

#include <stdlib.h>
#include <time.h>

/* Monotonic clock in milliseconds. */
static inline double bench_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* qsort comparison of doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median and minimum of repeated timings (docs/conventions.md#benchmarks). */
struct bench_timing {
    double median_ms, min_ms;
};

/* Sorts ms[0..n) (n >= 1) and summarizes it; an even n's median is the mean of the middle two. */
static inline struct bench_timing bench_summarize(double *ms, int n) {
    qsort(ms, (size_t)n, sizeof *ms, bench_cmp_double);
    struct bench_timing t = { .median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]), .min_ms = ms[0] };
    return t;
}

#endif
