/* pareto.c: the Pareto frontier of a set of 2-D points (dse_pareto_front), used by
 * `dse report` to pick the candidates worth training or keeping (docs/report.md).
 * Sort by x, then sweep once keeping the best y seen at a strictly smaller x.
 * Nothing here allocates: the caller passes the scratch space. */
#include "analysis/analysis.h"

#include <math.h>

/* The sort key: x ascending, then g ascending (g = y, or -y when y is maximized), then
 * index, so the order is total and the output does not depend on the sort's stability. */
static int before(const double *x, const double *y, int maximize_y, int a, int b) {
    double ga = maximize_y ? -y[a] : y[a], gb = maximize_y ? -y[b] : y[b];
    if (x[a] != x[b]) return x[a] < x[b];
    if (ga != gb) return ga < gb;
    return a < b;
}

/* Heapsort of idx[0..m): O(m log m), in place, no allocation (qsort has no context
 * argument in C11 and the keys live in x and y). */
static void sift_down(int *idx, int start, int m, const double *x, const double *y, int mx) {
    int root = start;
    for (;;) {
        int child = 2 * root + 1;
        if (child >= m) return;
        if (child + 1 < m && before(x, y, mx, idx[child], idx[child + 1])) child++;
        if (!before(x, y, mx, idx[root], idx[child])) return;
        int t = idx[root];
        idx[root] = idx[child];
        idx[child] = t;
        root = child;
    }
}

static void sort_indices(int *idx, int m, const double *x, const double *y, int mx) {
    for (int i = m / 2 - 1; i >= 0; i--) sift_down(idx, i, m, x, y, mx);
    for (int end = m - 1; end > 0; end--) {
        int t = idx[0];
        idx[0] = idx[end];
        idx[end] = t;
        sift_down(idx, 0, end, x, y, mx);
    }
}

int dse_pareto_front(const double *x, const double *y, int n, int maximize_y, int *out,
                     int *scratch) {
    if (n <= 0) return 0;
    DSE_ASSERT(x && y && out && scratch);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i]) && !isnan(y[i])) scratch[m++] = i;
    sort_indices(scratch, m, x, y, maximize_y);

    /* Walk groups of equal x. Within a group the best g comes first; a point survives if
     * it ties that best g (equal points are all kept) and beats every point at a smaller
     * x, whose best g is prev. */
    int    k = 0, have_prev = 0;
    double prev = 0.0;
    for (int i = 0; i < m;) {
        int    first = scratch[i];
        double gbest = maximize_y ? -y[first] : y[first];
        int    j = i;
        while (j < m && x[scratch[j]] == x[first]) {
            int    p = scratch[j];
            double g = maximize_y ? -y[p] : y[p];
            if (g == gbest && (!have_prev || g < prev)) out[k++] = p;
            j++;
        }
        if (!have_prev || gbest < prev) prev = gbest;
        have_prev = 1;
        i = j;
    }
    return k;
}
