/* compress_est.c: the analyzer's estimate of a Deep Compression file's size (issue #35)
 * before any training: per weighted layer the weights dse_net_prune_density keeps, each
 * coded in `bits` plus an assumed sparse-index width, its codebook, and everything else as
 * raw float32. The rule and its assumptions: docs/conventions.md, "Compressed size estimate". */
#include "analysis/analysis.h"

#include <math.h>

static int64_t bytes_of_bits(int64_t bits) { return (bits + 7) / 8; }

int64_t dse_cost_compressed_est(const struct dse_net *net, const struct dse_cost_layer *layers, double density,
                                int bits, struct dse_compress_est *out) {
    struct dse_compress_est e = { .header_bytes = DSE_COMPRESS_EST_HEADER_BYTES };
    for (int i = 0; i < net->n_layers; i++) {
        const struct dse_cost_layer *c = &layers[i];
        int tensors = (c->weights > 0) + (c->biases > 0) + 2 * (c->buffers > 0);
        e.header_bytes += tensors * DSE_COMPRESS_EST_TENSOR_BYTES;
        e.raw_bytes += (c->biases + c->buffers) * DSE_BYTES_PER_VALUE;
        if (!c->weights) continue;
        if (!dse_layer_type_weighted(net->layers[i].type)) { /* not weight-shared: raw */
            e.raw_bytes += c->weights * DSE_BYTES_PER_VALUE;
            continue;
        }
        double d = dse_net_prune_density(net, i, density);
        int64_t kept = (int64_t)llround((double)c->weights * d);
        int64_t codes = kept + 1 < ((int64_t)1 << bits) ? kept + 1 : ((int64_t)1 << bits); /* [0] is the zero */
        e.weights_kept += kept;
        e.weight_bytes += bytes_of_bits(kept * bits);
        e.index_bytes += d < 1 ? bytes_of_bits(kept * DSE_COMPRESS_EST_INDEX_BITS) : 0; /* dense: no index */
        e.codebook_bytes += codes * DSE_BYTES_PER_VALUE;
    }
    e.total_bytes = e.weight_bytes + e.index_bytes + e.codebook_bytes + e.raw_bytes + e.header_bytes;
    if (out) *out = e;
    return e.total_bytes;
}
