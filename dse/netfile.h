/* netfile.h: reading and writing network files: our libconfig .cfg format
 * (docs/network-format.md) and Caffe's prototxt text format (docs/prototxt.md).
 * Both produce the shared struct dse_net of metaparams/net.h, shapes inferred. */
#ifndef DSE_CLI_NETFILE_H
#define DSE_CLI_NETFILE_H

#include <stddef.h>
#include <stdio.h>

#include "metaparams/net.h"

/* Input shape given on the command line (--input C,H,W); a zero field means "as the
 * file says". Applied before any layer is built. classes (--classes K): the classifier
 * (dse_net_classifier) gets K outputs after the file is read; 0: as the file says. */
struct dse_input_shape {
    int c, h, w;
    int classes;
};

/* What a checkpoint records of its network's fit (--input, --classes) fills the parts of fit
 * the command line left 0: its input C,H,W and its classifier's outputs, so that dse eval,
 * predict and export load NET as it was trained without asking again. Parts info does not
 * record (a format-1 checkpoint) stay 0: as NET's file says. */
struct dse_ckpt_info;
void dse_netfile_fit_checkpoint(struct dse_input_shape *fit, const struct dse_ckpt_info *info);

/* Load PATH by its extension: .cfg -> dse_netcfg_load, .prototxt/.pt -> dse_prototxt_load.
 * On success *out is initialized and inferred (dse_net_infer); the caller deinits it.
 * On failure *out holds nothing to free and err says file:line and what was expected.
 * ov may be NULL. */
enum dse_status dse_netfile_load(const char *path, const struct dse_input_shape *ov,
                                 struct dse_net *out, struct dse_err *err);

enum dse_status dse_netcfg_load(const char *path, const struct dse_input_shape *ov,
                                struct dse_net *out, struct dse_err *err);

enum dse_status dse_prototxt_load(const char *path, const struct dse_input_shape *ov,
                                  struct dse_net *out, struct dse_err *err);

/* Parse prototxt text of length len; path is only used in error messages (borrowed). */
enum dse_status dse_prototxt_parse(const char *text, size_t len, const char *path,
                                   const struct dse_input_shape *ov, struct dse_net *out,
                                   struct dse_err *err);

/* Write net as our .cfg format: Fire modules (layers named "<m>/squeeze1x1", ...) as one
 * `fire` layer, everything else as primitive layers with every setting spelled out.
 * Reading the result back gives a network with the same layers, shapes and costs. */
enum dse_status dse_netcfg_write(FILE *f, const struct dse_net *net, struct dse_err *err);

/* Write net as Caffe prototxt (layer { } format, an Input layer of shape 1xCxHxW).
 * Reading the result back gives a network with the same layers, shapes and costs. */
enum dse_status dse_prototxt_write(FILE *f, const struct dse_net *net, struct dse_err *err);

#endif
