/* ckpt_impl.h: what a checkpoint (engine/train.c) shares with a compressed model's .dsez file
 * (engine/dsez.c, issue #35): the text block that names a model's layers and tensors and says
 * what it was trained on (docs/checkpoint.md), written, read and matched against a model.
 * Private to engine/. */
#ifndef DSE_ENGINE_CKPT_IMPL_H
#define DSE_ENGINE_CKPT_IMPL_H

#include <stddef.h>

#include "engine/model.h"
#include "engine/train.h"

/* A model's tensors in checkpoint order (docs/checkpoint.md): every layer's weight and bias,
 * each a parameter that its momentum follows, then every layer's running statistics. The one
 * walk of that order by name, for the text block (train.c), the .dsez's tensors (dsez.c) and
 * the compressed ones among them (compress.c); dse_model_state_get's values follow it. */
struct dse_ckpt_tensor {
    int                layer;  /* in m->net */
    int                param;  /* 1: weight or bias (momentum follows), 0: run_mean or run_var */
    const char        *role;   /* "weight", "bias", "run_mean", "run_var" */
    struct dse_tensor *t;
};

/* The next tensor from *at (0 to start): 1 and *out, or 0 after the last. */
static inline int dse_ckpt_tensor_next(const struct dse_model *m, int *at, struct dse_ckpt_tensor *out) {
    static const char *const roles[4] = { "weight", "bias", "run_mean", "run_var" };
    const int n = m->net.n_layers;
    while (*at < 4 * n) {
        const int k = (*at)++, pass = k / (2 * n), i = k % (2 * n) / 2, r = k % 2;
        const struct dse_node *nd = &m->nodes[i];
        struct dse_tensor *t = pass ? (r ? nd->run_var : nd->run_mean) : (r ? nd->bias : nd->weight);
        if (!t) continue;
        *out = (struct dse_ckpt_tensor){ .layer = i, .param = !pass, .role = roles[2 * pass + r], .t = t };
        return 1;
    }
    return 0;
}

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
