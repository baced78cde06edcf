/* test_report_pareto.c: test_report's cases on the Pareto frontier (analysis/pareto.c): the
 * frontier of small sets, ties, NaN, and random sets against brute force. */
#include "tests/report_util.h"

/* ---- pareto ------------------------------------------------------------------------- */

static void check_front(const double *x, const double *y, int n, int maxy, const int *want,
                        int nwant) {
    int out[64], scratch[64];
    int k = dse_pareto_front(x, y, n, maxy, out, scratch);
    CHECK_INT_EQ(k, nwant);
    for (int i = 0; i < k && i < nwant; i++) CHECK_INT_EQ(out[i], want[i]);
}

void test_pareto_basic(void) {
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

void test_pareto_ties(void) {
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

void test_pareto_nan(void) {
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
void test_pareto_brute(void) {
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
