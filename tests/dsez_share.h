/* dsez_share.h: a trained model's weights pruned and shared in memory as dse compress leaves
 * them (engine/compress.h's struct dse_dsez, issue #35), without k-means or retraining: what
 * test_engine_export and test_cli export, evaluate and write as a .dsez. */
#ifndef DSE_TESTS_DSEZ_SHARE_H
#define DSE_TESTS_DSEZ_SHARE_H

#include <stdio.h>
#include <stdlib.h>

#include "engine/compress.h"
#include "engine/model.h"

/* m as dse compress would leave it, into z (its tensors the model's, in checkpoint order):
 * each conv and fc weight pruned to its largest `density` share by magnitude and shared
 * through a codebook of 2^bits entries, codebook[0] = 0 and the rest spread linearly over
 * the weights' [min, max] (Han et al.'s linear initialization, without k-means); biases
 * and running statistics raw (borrowing m's values). m's weights become the decoded ones,
 * so that dse's inference is the compressed model's. Free with dsez_share_free. */
static inline void dsez_share(struct dse_model *m, int bits, double density, struct dse_dsez *z) {
    *z = (struct dse_dsez){ .t = calloc((size_t)m->net.n_layers * 4, sizeof *z->t) };
    DSE_ASSERT(z->t);
    for (int pass = 0; pass < 2; pass++) /* the parameters, then the running statistics */
    for (int i = 0; i < m->net.n_layers; i++) {
        const struct dse_node *nd = &m->nodes[i];
        const enum dse_layer_type type = m->net.layers[i].type;
        struct dse_tensor *ts[4] = { nd->weight, nd->bias, nd->run_mean, nd->run_var };
        static const char *const roles[4] = { "weight", "bias", "run_mean", "run_var" };
        for (int k = 2 * pass; k < 2 * pass + 2; k++) {
            if (!ts[k]) continue;
            struct dse_dsez_tensor *t = &z->t[z->n++];
            const int64_t n = dse_tensor_count(ts[k]);
            float *v = ts[k]->data;
            snprintf(t->layer, sizeof t->layer, "%.63s", m->net.layers[i].name);
            snprintf(t->role, sizeof t->role, "%s", roles[k]);
            t->count = n;
            if (k || (type != DSE_LAYER_CONV && type != DSE_LAYER_FC)) {
                t->raw = v;
                continue;
            }
            float *mag = malloc(sizeof *mag * (size_t)n), lo = v[0], hi = v[0];
            DSE_ASSERT(mag);
            for (int64_t j = 0; j < n; j++) {
                mag[j] = v[j] < 0 ? -v[j] : v[j];
                lo = v[j] < lo ? v[j] : lo, hi = v[j] > hi ? v[j] : hi;
            }
            int64_t keep = (int64_t)(density * (double)n + 0.5), below = 0;
            keep = keep < 1 ? 1 : keep;
            float cut = 0; /* the keep-th largest magnitude, by bisection over the values */
            for (float a = 0, b = hi > -lo ? hi : -lo, it = 0; it < 40; it++) {
                cut = (a + b) / 2, below = 0;
                for (int64_t j = 0; j < n; j++) below += mag[j] >= cut;
                if (below > keep) a = cut;
                else b = cut;
            }
            free(mag);
            t->bits = bits, t->codebook_n = (int64_t)1 << bits > n ? (int)n : 1 << bits; /* k-means finds no more */
            t->codebook = malloc(sizeof *t->codebook * (size_t)t->codebook_n);
            t->index = malloc(sizeof *t->index * (size_t)n);
            DSE_ASSERT(t->codebook && t->index);
            t->codebook[0] = 0.0f;
            for (int c = 1; c < t->codebook_n; c++) t->codebook[c] = lo + (hi - lo) * (float)(c - 1) / (float)(t->codebook_n - 2);
            for (int64_t j = 0; j < n; j++) {
                int best = 0;
                if ((v[j] < 0 ? -v[j] : v[j]) >= cut) {
                    const float at = hi > lo ? (v[j] - lo) / (hi - lo) * (float)(t->codebook_n - 2) : 0.0f;
                    best = 1 + (int)(at + 0.5f);
                    best = best >= t->codebook_n ? t->codebook_n - 1 : best;
                }
                t->index[j] = (uint16_t)best;
                v[j] = t->codebook[best];
            }
        }
    }
}

static inline void dsez_share_free(struct dse_dsez *z) {
    for (int k = 0; k < z->n; k++) free(z->t[k].codebook), free(z->t[k].index);
    free(z->t);
}

#endif
