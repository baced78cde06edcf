/* compress_impl.h: engine/compress.c's pieces that tests/test_engine_compress.c checks on
 * known values (issue #35; docs/compress.md). Private to the engine and its tests. */
#ifndef DSE_ENGINE_COMPRESS_IMPL_H
#define DSE_ENGINE_COMPRESS_IMPL_H

#include <stdint.h>

/* Magnitude pruning of w[0, n): mask[i] = 1 for the round(density n) values of largest |w|,
 * ties to the lower index, else 0. Returns how many are kept; -1 out of memory. */
int64_t dse_compress_prune_mask(const float *w, int64_t n, double density, uint8_t *mask);

/* Lloyd's k-means of x[0, n) in one dimension into k centroids c[0, k), ascending, from the
 * linear initialization over [min, max]; stops when no value changes cluster (nearest
 * centroid, ties to the lower) or after 1000 iterations (*iters, if not NULL: how many ran).
 * An empty cluster keeps its centroid. Deterministic. Returns 0; -1 out of memory. */
int dse_compress_kmeans(const float *x, int64_t n, int k, double *c, int *iters);

#endif
