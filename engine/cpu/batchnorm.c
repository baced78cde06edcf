/* batchnorm.c: CPU batch normalization (Ioffe & Szegedy 2015), forward and backward.
 * Training normalizes with the batch's mean and biased variance and updates the running
 * averages (PyTorch's rule: running = (1 - m) running + m batch, variance unbiased by
 * M/(M-1)); inference normalizes with the running averages. gamma/beta only when the
 * layer is affine (Caffe's BatchNorm is not; it pairs with a Scale layer).
 * x, y: [N, C, H, W]   gamma, beta, mean, invstd, running mean/var: [C]; M = N*H*W. */
#include "engine/engine.h"

#include <math.h>

#include "engine/cpu/cpu_impl.h"

/* Each channel is one thread's work, summed in double in a fixed order: deterministic
 * whatever the thread count. */
enum dse_status dse_cpu_batchnorm_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int N = x->n, C = x->c;
    const int64_t HW = (int64_t)x->h * x->w, M = N * HW;
    const float *gamma = n->weight ? n->weight->data : NULL, *beta = n->bias ? n->bias->data : NULL;
    float *saved = dse_cpu_in_place(n) ? n->st.saved : NULL; /* x_hat, for backward */
    float *rmean = n->run_mean->data, *rvar = n->run_var->data;
    const double mom = n->bn_momentum;
    DSE_ASSERT(n->st.mean && (!dse_cpu_in_place(n) || saved));
    for (int c = 0; c < C; c++) {
        double mean, var;
        if (n->training) {
            double s = 0.0, s2 = 0.0;
            for (int i = 0; i < N; i++) s += dse_cpu_sum(x->data + i * x->stride_n + c * HW, HW);
            mean = s / (double)M;
            for (int i = 0; i < N; i++) {
                const float *xp = x->data + i * x->stride_n + c * HW;
                for (int64_t j = 0; j < HW; j++) s2 += (xp[j] - mean) * (xp[j] - mean);
            }
            var = s2 / (double)M;
            rmean[c] = (float)((1.0 - mom) * rmean[c] + mom * mean);
            rvar[c] = (float)((1.0 - mom) * rvar[c] + mom * (M > 1 ? var * (double)M / (double)(M - 1) : var));
        } else {
            mean = rmean[c], var = rvar[c];
        }
        const float invstd = (float)(1.0 / sqrt(var + n->bn_eps)), m = (float)mean;
        n->st.mean[c] = m;
        n->st.invstd[c] = invstd;
        const float g = gamma ? gamma[c] : 1.0f, b = beta ? beta[c] : 0.0f;
        for (int i = 0; i < N; i++) {
            const float *xp = x->data + i * x->stride_n + c * HW;
            float *yp = y->data + i * y->stride_n + c * HW;
            float *sp = saved ? saved + ((int64_t)i * C + c) * HW : NULL;
            for (int64_t j = 0; j < HW; j++) {
                const float xh = (xp[j] - m) * invstd;
                if (sp) sp[j] = xh;
                yp[j] = xh * g + b;
            }
        }
    }
    return DSE_OK;
}

/* Training: dx = gamma invstd (dy - mean(dy) - x_hat mean(dy x_hat)), the statistics
 * being functions of x. Inference: the statistics are constants, dx = gamma invstd dy. */
enum dse_status dse_cpu_batchnorm_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int N = x->n, C = x->c, in_place = dse_cpu_in_place(n);
    const int64_t HW = (int64_t)x->h * x->w, M = N * HW;
    const float *gamma = n->weight ? n->weight->data : NULL;
    float *dgamma = n->weight ? n->weight->grad : NULL, *dbeta = n->bias ? n->bias->grad : NULL;
    if (!x->grad && !dgamma && !dbeta) return DSE_OK;
    for (int c = 0; c < C; c++) {
        const float m = n->st.mean[c], invstd = n->st.invstd[c];
        double sdy = 0.0, sdyx = 0.0;
        for (int i = 0; i < N; i++) {
            const float *dyp = y->grad + i * y->stride_n + c * HW;
            const float *xp = x->data + i * x->stride_n + c * HW;
            const float *sp = in_place ? n->st.saved + ((int64_t)i * C + c) * HW : NULL;
            for (int64_t j = 0; j < HW; j++) {
                const float xh = sp ? sp[j] : (xp[j] - m) * invstd;
                sdy += dyp[j];
                sdyx += (double)dyp[j] * xh;
            }
        }
        if (dgamma) dgamma[c] += (float)sdyx;
        if (dbeta) dbeta[c] += (float)sdy;
        if (!x->grad) continue;
        const float k = (gamma ? gamma[c] : 1.0f) * invstd;
        const float a = n->training ? (float)(sdy / (double)M) : 0.0f;
        const float b = n->training ? (float)(sdyx / (double)M) : 0.0f;
        for (int i = 0; i < N; i++) {
            const float *dyp = y->grad + i * y->stride_n + c * HW;
            const float *xp = x->data + i * x->stride_n + c * HW;
            const float *sp = in_place ? n->st.saved + ((int64_t)i * C + c) * HW : NULL;
            float *dxp = x->grad + i * x->stride_n + c * HW;
            for (int64_t j = 0; j < HW; j++) {
                const float xh = sp ? sp[j] : (xp[j] - m) * invstd;
                const float d = k * (dyp[j] - a - xh * b);
                if (in_place)
                    dxp[j] = d;
                else
                    dxp[j] += d;
            }
        }
    }
    return DSE_OK;
}
