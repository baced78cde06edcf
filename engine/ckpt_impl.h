/* ckpt_impl.h: what a checkpoint (engine/train.c) shares with a compressed model's .dsez file
 * (engine/dsez.c, issue #35): the text block that names a model's layers and tensors and says
 * what it was trained on (docs/checkpoint.md), written, read and matched against a model.
 * Private to engine/. */
#ifndef DSE_ENGINE_CKPT_IMPL_H
#define DSE_ENGINE_CKPT_IMPL_H

#include <stddef.h>

#include "engine/train.h"

/* The .dsez magic: dse_checkpoint_load and dse_checkpoint_info hand such a file to dsez.c. */
#define DSE_DSEZ_MAGIC "DSEZMDL1"

/* The text block of m and meta (NULL: none) into a malloc'd string of *len bytes. */
char *dse_ckpt_text(const struct dse_model *m, const struct dse_ckpt_meta *meta, size_t *len);
/* A text block's input, classifier, data, seed, norm, evaluation box and classes into out
 * (the rest of out untouched); a line that does not parse is DSE_ERR_IO naming path. */
enum dse_status dse_ckpt_text_info(const char *path, const char *text, size_t len, struct dse_ckpt_info *out,
                                   struct dse_err *err);
/* DSE_OK if text's tensor and layer lines are m's, else DSE_ERR_IO "<what> of another network:
 * it has '<line>' where this network has '<line>'", the first tensor that differs (else layer). */
enum dse_status dse_ckpt_text_match(const struct dse_model *m, const char *path, const char *what, const char *text,
                                    size_t len, struct dse_err *err);

#endif
