/* data_impl.h: the data module's private parts: the loader of image sources (imgload.c),
 * to which the dse_loader_* functions of data.h forward when a loader reads a pack or a
 * folder. Nothing outside engine/data.c and engine/imgload.c includes this. */
#ifndef DSE_ENGINE_DATA_IMPL_H
#define DSE_ENGINE_DATA_IMPL_H

#include "engine/data.h"

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
