/* bench.h: what every benchmark in bench/ needs: a monotonic clock and a comparison
 * for sorting timings (medians). Header-only: each benchmark is its own program. */
#ifndef DSE_BENCH_H
#define DSE_BENCH_H

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

#endif
