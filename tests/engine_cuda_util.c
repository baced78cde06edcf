/* engine_cuda_util.c: what test_engine_cuda's files share (tests/engine_cuda_util.h): random
 * values, NMSE, the tiny Fire net, a folder removed; and check.h's counts and the verbose flag,
 * one set for them all. */
#include "tests/engine_cuda_util.h"

int check_failures, check_count, check_skips;
int verbose;

float uniform(struct dse_pcg32 *r, float lo, float hi) {
    return lo + (hi - lo) * (float)(dse_pcg32_next(r) >> 8) * (1.0f / 16777216.0f);
}

int irand(struct dse_pcg32 *r, int lo, int hi) {
    return lo + (int)dse_pcg32_bounded(r, (uint32_t)(hi - lo + 1));
}

void fill_floats(float *p, int64_t n, struct dse_pcg32 *r, float lo, float hi) {
    for (int64_t i = 0; i < n; i++) p[i] = uniform(r, lo, hi);
}

double nmse(const float *a, const float *b, int64_t n, int64_t *at) {
    double num = 0.0, den = 0.0, worst = -1.0;
    *at = 0;
    for (int64_t i = 0; i < n; i++) {
        const double d = (double)a[i] - (double)b[i];
        if (!isfinite(d) && !(a[i] == b[i])) return INFINITY;
        num += d * d, den += (double)a[i] * a[i];
        if (fabs(d) > worst) worst = fabs(d), *at = i;
    }
    return den > 0.0 ? num / den : num;
}

void fire_net(struct dse_net *net) {
    struct dse_mp mp = tiny_fire_mp();
    mp.dropout = 0.5;
    dse_net_init(net, "fire", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, net, NULL));
}

void remove_dir(const char *dir) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}
