/* model.h: a trainable model built from the shared network description (metaparams/
 * net.h): one node per layer, every tensor carved from one arena, Fire-module expand
 * outputs written straight into their slice of the concat buffer, SGD with momentum.
 * No second list of layer shapes: the model reads the dse_net the analyzer reads. */
#ifndef DSE_ENGINE_MODEL_H
#define DSE_ENGINE_MODEL_H

#include "engine/engine.h"

enum dse_init { DSE_INIT_XAVIER = 0, DSE_INIT_MSRA, DSE_INIT_GAUSSIAN };

struct dse_model_opts {
    int           batch;     /* images per step, >= 1 */
    int           threads;   /* the kernels' threads (engine/cpu/team.c), >= 1 */
    uint64_t      seed;      /* initialization and dropout */
    enum dse_init init;      /* weights: Caffe's xavier (uniform +-sqrt(3 / fan_in)), msra
                                (gaussian, std sqrt(2 / fan_in)) or gaussian(init_std) */
    float         init_std;  /* for DSE_INIT_GAUSSIAN */
    int           inference; /* 1: no gradients, no momentum (dse_model_backward refuses) */
};

struct dse_model {
    struct dse_net     net;       /* owned copy: accuracy layers and a final softmax dropped,
                                     softmax cross-entropy attached if the net had no loss */
    int                batch;
    int                inference; /* built without gradients */
    struct dse_node   *nodes;     /* [net.n_layers] */
    struct dse_tensor *outs;      /* [net.n_layers]: each layer's output; in-place layers
                                     share their input's, concat inputs may be views */
    struct dse_tensor  input;     /* [B, C, H, W]; no gradient is ever computed for it */
    int32_t           *labels;    /* [B] */
    int                loss;      /* index of the softmax cross-entropy layer */
    int                n_params;  /* learned tensors: conv/fc weights and biases, bn/scale */
    struct dse_tensor **params;   /* [n_params], borrowed from nodes' tensors */
    float            **momentum;  /* [n_params] SGD velocity, same sizes; owned */
    int               *decay;     /* [n_params] 1: weight decay applies (weights, not biases) */
    struct dse_tensor *owned;     /* [net.n_layers * 4]: weight, bias, run_mean, run_var */
    float             *arena;     /* activations and their gradients */
    size_t             arena_floats;
    size_t             grad_floats; /* the gradient half of the arena, zeroed every step */
    float             *grad_base;
    struct dse_cpu_ctx cx;
};

/* Build the model of net for opts->batch images. Borrows nothing: net is copied.
 * Unsupported layers (lrn, eltwise prod/max) are DSE_ERR_UNSUPPORTED naming the layer.
 * On failure *out is NULL. */
enum dse_status dse_model_new(const struct dse_net *net, const struct dse_model_opts *opts,
                              struct dse_model **out, struct dse_err *err);
void dse_model_free(struct dse_model *m); /* accepts NULL */

/* 1: dropout and batch statistics; 0: inference. */
void dse_model_set_training(struct dse_model *m, int training);

/* Forward a full batch: x [B, C, H, W] (copied in), labels [B]. *loss = mean cross-entropy. */
enum dse_status dse_model_forward(struct dse_model *m, const float *x, const int *labels,
                                  float *loss, struct dse_err *err);
/* Zero every gradient, then backward from the loss. */
enum dse_status dse_model_backward(struct dse_model *m, struct dse_err *err);
/* SGD with momentum, Caffe's form: v = momentum v + lr (g + wd w) (wd on weights only),
 * w -= v. */
void dse_model_sgd(struct dse_model *m, float lr, float momentum, float weight_decay);

/* Top-1 and top-5 hits among the first count images of the last forward. */
void dse_model_hits(const struct dse_model *m, int count, int *top1, int *top5);

/* Values in params, momentum and buffers; 1 if any is NaN or infinite. */
int dse_model_nonfinite(const struct dse_model *m);

/* Measured memory: bytes the model allocated (arena, parameters, momentum, node state,
 * workspace), to set beside the analyzer's estimate. */
size_t dse_model_bytes(const struct dse_model *m);

#endif
