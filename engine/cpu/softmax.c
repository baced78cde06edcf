/* softmax.c: CPU softmax + cross-entropy loss with integer labels (Caffe's
 * SoftmaxWithLoss, normalized over the batch). Forward keeps the probabilities for
 * backward and for accuracy; backward starts the gradient chain.
 * x: logits [N, K, 1, 1]   labels: [N] in [0, K)   prob: [N, K]   y: [1, 1, 1, 1] loss. */
#include "engine/engine.h"

#include <math.h>

#include "engine/cpu/cpu_impl.h"

enum dse_status dse_cpu_softmax_xent_fwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0];
    const int N = x->n, K = x->c;
    float *prob = n->st.prob;
    DSE_ASSERT(prob && n->labels); /* the trainer sets labels before every forward */
    /* The loss is summed in double by the batch's slices (engine/slices.h), the slices'
     * sums added by the slice tree: the bits whatever the threads or data-parallel ranks. */
    const struct dse_cpu_slices sl = dse_cpu_slices_of(cx, N);
    double part[DSE_SLICES_MAX];
    int sc = -1;
    int64_t s_end = 0;
    for (int i = 0; i < N; i++) {
        while (i >= s_end) { /* the next slice begins */
            int64_t lo;
            part[++sc] = 0.0;
            dse_cpu_slice(&sl, sc, &lo, &s_end);
        }
        const int label = n->labels[i];
        if (label < 0 || label >= K)
            return dse_cpu_fail(cx, n, DSE_ERR_CONFIG, "label %d of image %d is out of range; expected 0 to %d",
                                label, i, K - 1);
        const float *xi = x->data + i * x->stride_n;
        float *pi = prob + (int64_t)i * K;
        /* Subtract the max so exp cannot overflow. */
        float m = xi[0];
        for (int k = 1; k < K; k++) m = xi[k] > m ? xi[k] : m;
        double sum = 0.0;
        for (int k = 0; k < K; k++) sum += (pi[k] = expf(xi[k] - m));
        const float inv = (float)(1.0 / sum);
        for (int k = 0; k < K; k++) pi[k] *= inv;
        /* -log p[label] = log(sum) - (x[label] - m): exact where p underflows (Caffe
         * clamps p at FLT_MIN and caps the loss at 87.3); NaN stays NaN. */
        part[sc] += log(sum) - ((double)xi[label] - m);
    }
    if (sl.count != sl.total) { /* one of several ranks: engine/model.c adds the ranks' slices */
        for (int k = 0; k < sl.count; k++) cx->dist_loss[sl.first + k] = part[k];
        n->out->data[0] = 0.0f; /* the batch's loss is the model's to say */
    } else {
        n->out->data[0] = (float)(dse_slice_sum_d(part, sl.total) / (double)sl.n);
    }
    return DSE_OK;
}

/* dL/dx[i][k] = (p[i][k] - [k == label_i]) / N, with loss weight 1. */
enum dse_status dse_cpu_softmax_xent_bwd(struct dse_cpu_ctx *cx, struct dse_node *n) {
    const struct dse_tensor *x = n->in[0];
    if (!x->grad) return DSE_OK;
    const int N = x->n, K = x->c;
    const float scale = 1.0f / (float)(cx->dist_batch ? cx->dist_batch : N); /* the global batch's mean */
    for (int i = 0; i < N; i++) {
        const float *pi = n->st.prob + (int64_t)i * K;
        float *dxi = x->grad + i * x->stride_n;
        for (int k = 0; k < K; k++) dxi[k] += (pi[k] - (k == n->labels[i] ? 1.0f : 0.0f)) * scale;
    }
    return DSE_OK;
}
