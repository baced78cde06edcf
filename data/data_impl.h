/* data_impl.h: the data module's private parts: the loader of image sources (imgload.c),
 * to which the dse_loader_* functions of data.h forward when a loader reads a pack or a
 * folder. Nothing outside data/data.c and data/imgload.c includes this (tests/layering.sh). */
#ifndef DSE_DATA_IMPL_H
#define DSE_DATA_IMPL_H

#include "data/data.h"

/* Pixel value -> normalized float, per channel: lut[ch][v] = (v / 255 - mean) / std, or
 * v / 255 when norm is NULL or norm->c is 0. Rows 0..c-1 are written. */
typedef float lut_t[DSE_DATA_MAX_CHANNELS][256];
void dse_data_lut(float lut[][256], int c, const struct dse_data_norm *norm);

/* The PCG32 stream of (tag, v): FNV-1a over the tag and v's 8 bytes written little-endian,
 * so it does not depend on the host. The epoch streams use v = epoch; each image of an image
 * source v = epoch << 32 | position. */
uint64_t dse_data_stream(const char *tag, uint64_t v);

struct dse_imgloader;

/* p or f (the other NULL) is the source; see dse_loader_new_pack in data.h. */
enum dse_status dse_imgloader_new(const struct dse_pack *p, const struct dse_imgfolder *f, int split,
                                  int channels, const struct dse_loader_opts *o, struct dse_imgloader **out,
                                  struct dse_err *err);
void dse_imgloader_free(struct dse_imgloader *l);
void dse_imgloader_start_epoch(struct dse_imgloader *l, int epoch);
int  dse_imgloader_next(struct dse_imgloader *l, float *x, int *labels, int *count);
int  dse_imgloader_batches(const struct dse_imgloader *l);
int  dse_imgloader_images(const struct dse_imgloader *l);
enum dse_status dse_imgloader_status(const struct dse_imgloader *l, struct dse_err *err);

#endif
