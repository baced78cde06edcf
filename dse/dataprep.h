/* dataprep.h: the CLI's side of image data (issue #13): packing a folder with a progress
 * line, the cache that holds a folder's pack after its first use, and the check that a
 * network fits a dataset, naming the flags that fit it. */
#ifndef DSE_CLI_DATAPREP_H
#define DSE_CLI_DATAPREP_H

#include <stddef.h>
#include <stdio.h>

#include "data/data.h"
#include "metaparams/net.h"

/* Pack a scanned folder to out_path, a progress line on log (redrawn in place when tty),
 * each skipped image named on log. */
enum dse_status dse_dataprep_pack(const struct dse_imgfolder *f, const char *out_path,
                                  const struct dse_pack_opts *o, FILE *log, int tty,
                                  struct dse_pack_summary *sum, struct dse_err *err);

/* Where --data SPEC's images come from for a network of input in_c x in_h x in_w: an image
 * folder becomes its pack in the cache (cache_dir, or $DSE_PACK_CACHE, $XDG_CACHE_HOME/dse/packs,
 * ~/.cache/dse/packs), made on first use (short side ceil(max(in_h, in_w) * 8 / 7), JPEG of
 * quality 90 above 64 pixels, raw below; gray for a 1-channel network) and made again when the folder's files changed
 * (the pack records the folder's fingerprint); its path goes to out. A folder without
 * val/ or test/ is refused (DSE_ERR_IO) before it is packed. max_pixels is each
 * image's pixel budget when packing (0: the default, dse_image_decode). Anything else is
 * copied to out unchanged. What is done is said on log. */
enum dse_status dse_dataprep_resolve(const char *spec, const char *cache_dir, int in_c, int in_h, int in_w,
                                     int64_t max_pixels, FILE *log, char *out, size_t out_size,
                                     struct dse_err *err);

/* The network against the data (info from dse_data_probe): channels, size (fixed-size
 * data only) and classes (the classifier's outputs must equal the classes: fewer cannot
 * label every image, more would train outputs that no image is labelled with). On a
 * mismatch: DSE_ERR_SHAPE whose message names the fix, in the words of `how`: "flags"
 * (--input C,H,W --classes K) or "macro" (a space's macro section). */
enum dse_status dse_dataprep_check_fit(const struct dse_net *net, const struct dse_data_info *info,
                                       const char *how, struct dse_err *err);

#endif
