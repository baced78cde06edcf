/* model.h: a trainable model built from the shared network description (metaparams/
 * net.h): one node per layer, every tensor carved from one arena, Fire-module expand
 * outputs written straight into their slice of the concat buffer, SGD with momentum.
 * No second list of layer shapes: the model reads the dse_net the analyzer reads. */
#ifndef DSE_ENGINE_MODEL_H
#define DSE_ENGINE_MODEL_H

#include "engine/cuda/cuda.h"
#include "engine/dist.h"
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
    float         classifier_bias; /* initial bias of the last conv/fc layer when a ReLU
                                      follows it (SqueezeNet's conv10); 0 like every other
                                      bias otherwise. Positive keeps every class's ReLU open
                                      at the start (engine/train.h: why) */
};

/* Where a model runs (issue #6): dse_model_new_on. Kept apart from dse_model_opts (the
 * model itself). Zeroed = the CPU. */
struct dse_model_device_opts {
    struct dse_device  device;           /* cpu or cuda:N */
    enum dse_cuda_math math;             /* precision of conv and fc: cuda fp32, tf32, fp16,
                                            bf16; cpu fp32, bf16 */
    int                nondeterministic; /* cuda: 1 lets cuDNN's find pick algorithms that
                                            add in a varying order (faster; runs then
                                            differ in the last bits) */
    size_t             ws_limit_bytes;   /* cuda: conv workspace limit; 0 = 512 MiB */
    struct dse_cuda_conv_pool *conv_pool; /* cuda: borrowed; shapes another model of the pool
                                             found are not found again (cuda.h, "shared
                                             choices"); NULL: the model finds alone */
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
    double            *gsums;     /* the grad16 buffers' channel sums (dse_tensor.gsum); owned */
    int64_t            n_gsums;   /* how many doubles gsums holds (0: no gradient in bf16) */
    struct dse_cpu_ctx cx;        /* the CPU backend (on a device model: its generator is
                                     the dropout generator both backends draw from, which
                                     checkpoints store) */
    /* Device models (issue #6). Every float pointer above then points into device memory
     * (tensors have mem = DSE_MEM_DEVICE; params' host copies are freed after upload),
     * except labels; momentum[p] points into dev_block. */
    struct dse_device    device;
    struct dse_cuda_ctx *gpu;          /* owned; NULL on the CPU */
    float               *dev_block;    /* parameters with weight decay, then the others;
                                          their grads in the same layout; their momentum;
                                          running statistics; the input */
    size_t               dev_floats;   /* floats in dev_block */
    size_t               param_floats; /* floats of each of the data, grad and momentum runs */
    size_t               decay_floats; /* the first of them, which take weight decay */
    float               *host_prob;    /* [batch, classes]: the last forward's probabilities,
                                          downloaded for dse_model_hits */
    float                grad_scale;   /* the next dse_model_sgd's factor on the gradients
                                          (dse_model_clip_grad); 1 after every step */
    enum dse_status      pending;      /* a failure dse_model_sgd (void) could not report: */
    struct dse_err       pending_err;  /*   the next forward returns it */
    /* dse_model_step (issue #20 item 3) */
    struct dse_step_tally tally;       /* the CPU's (a device keeps its own) */
    float               *batch_host[2]; /* dse_model_batch_buffer's: pinned on a device */
    int                  batch_pinned[2];
    float               *batch_dev[2]; /* a device's two input buffers: [0] is the input's
                                          own place in dev_block, [1] made on first use */
    int                  slot;         /* the input slot of the next step (0 or 1) */
    /* Data-parallel training (issue #17, dse_model_set_dist): after every backward the
     * ranks' gradients are summed (weights as dist_how adds, bias gradients and the loss
     * by the batch's slices, engine/slices.h) before clipping and SGD. */
    struct dse_dist     *dist;         /* borrowed; NULL alone */
    enum dse_dist_reduce dist_how;
    int                  dist_blocks;  /* the slice-tree blocks this rank's run of slices is */
    float               *dist_f;       /* [dist_blocks][dist_nf] the weight gradients, packed
                                          block after block (owned) */
    double              *dist_d;       /* [dist_nd] the loss's slices (dist_loss), later every
                                          bias's db_part after them (dist_grads); owned */
    double              *dist_loss;    /* [slices] this rank's slices' losses (cx.dist_loss) */
    int64_t              dist_nf, dist_nd;
    /* A CPU step's gradient hook (dse_train_opts.grad_hook, issue #35): called after backward
     * and the ranks' sum, before clipping and SGD; NULL: none. */
    void               (*grad_hook)(void *arg, struct dse_model *m);
    void                *grad_hook_arg;
};

/* Build the model of net for opts->batch images. Borrows nothing: net is copied.
 * Unsupported layers (lrn, eltwise prod/max) are DSE_ERR_UNSUPPORTED naming the layer.
 * On failure *out is NULL. */
enum dse_status dse_model_new(const struct dse_net *net, const struct dse_model_opts *opts,
                              struct dse_model **out, struct dse_err *err);
/* The same on a device (dev NULL: the CPU, which is dse_model_new). On the CPU, bf16
 * multiplies the convs (of one group) and fc in bf16 with float sums (issue #37), where the
 * CPU has AVX512-BF16 (dse_cpu_bf16_why); elsewhere bf16, and tf32 and fp16 anywhere on the
 * CPU, are DSE_ERR_CONFIG. */
enum dse_status dse_model_new_on(const struct dse_net *net, const struct dse_model_opts *opts,
                                 const struct dse_model_device_opts *dev, struct dse_model **out,
                                 struct dse_err *err);
void dse_model_free(struct dse_model *m); /* accepts NULL */

/* Make m (built for this rank's share of `global_batch`, dse_slice_rank) one of the ranks
 * of d training together (engine/dist.h): every step then adds the ranks' gradients
 * (`how` for the weights) and every rank steps with the sum, so all keep the same
 * parameters. With `ps` or `tree` the bits are those of one process with any number of
 * threads (conv nets; fc's sgemm adds its batch in its own order). Errors (DSE_ERR_CONFIG):
 * a batchnorm layer (its statistics would be the share's, not the batch's), a device model
 * (not built yet), a model whose batch is not the rank's share. */
enum dse_status dse_model_set_dist(struct dse_model *m, struct dse_dist *d, enum dse_dist_reduce how,
                                   int64_t global_batch, struct dse_err *err);

/* Rank 0's parameters, momentum and dropout generator to every rank of m->dist. */
enum dse_status dse_model_dist_bcast(struct dse_model *m, struct dse_err *err);

/* 1: dropout and batch statistics; 0: inference. */
void dse_model_set_training(struct dse_model *m, int training);

/* Forward a full batch: x [B, C, H, W] (copied in), labels [B]. *loss = mean cross-entropy. */
enum dse_status dse_model_forward(struct dse_model *m, const float *x, const int *labels,
                                  float *loss, struct dse_err *err);
/* Zero every gradient, then backward from the loss. */
enum dse_status dse_model_backward(struct dse_model *m, struct dse_err *err);
/* SGD with momentum, Caffe's form: v = momentum v + lr (s g + wd w) (wd on weights only),
 * w -= v, where s is 1 unless dse_model_clip_grad set it for this step. */
void dse_model_sgd(struct dse_model *m, float lr, float momentum, float weight_decay);
/* Gradient clipping by global norm: *norm = the L2 norm of all gradients of the last
 * backward taken as one vector (summed in double in a fixed order: the same for the same
 * gradients); if it exceeds max_norm > 0 (and is finite), the next dse_model_sgd uses
 * the gradients times max_norm / *norm. Sets *clipped to 1 then, else 0. A device model
 * waits for its stream. */
enum dse_status dse_model_clip_grad(struct dse_model *m, double max_norm, double *norm, int *clipped,
                                    struct dse_err *err);

/* Top-1 and top-5 hits among the first count images of the last forward. */
void dse_model_hits(const struct dse_model *m, int count, int *top1, int *top5);

/* The last forward's softmax probabilities in host memory, [batch, classes] (classes:
 * the loss layer's input channels): the loss node's own on the CPU, the copy forward
 * downloaded on a device. Valid until the next forward. */
const float *dse_model_probs(const struct dse_model *m);

/* Values in params, momentum and buffers; 1 if any is NaN or infinite. */
int dse_model_nonfinite(const struct dse_model *m);

/* In bf16 on the CPU, the convs the rule leaves in float32 (engine.h's dse_cpu_conv_bf16_fp32),
 * as one sentence into buf ("bf16: conv1 (9 terms per output, under 16), fire9/expand3x3
 * (a 3x3 output map) compute in float32"; cut short to size); "" and 0 where none or not
 * in bf16 on the CPU. Returns how many. */
int dse_model_bf16_fp32(const struct dse_model *m, char *buf, size_t size);
/* In bf16 on the CPU, how many layers' outputs are stored in bf16 between ops (engine/model.c
 * plan_bf16; a concat's views and in-place layers count with their buffer's layers): 0 in
 * float32, on a GPU, or with DSE_CPU_BF16_FLOAT_ACTS=1 set. */
int dse_model_bf16_acts(const struct dse_model *m);
/* How many layers' output gradients are kept in bf16 (engine/model.c plan_grad16; counted as
 * dse_model_bf16_acts counts): 0 in float32, on a GPU, in inference or with
 * DSE_CPU_BF16_FLOAT_GRADS=1 set. */
int dse_model_bf16_grads(const struct dse_model *m);

/* Measured memory: bytes the model allocated (arena, parameters, momentum, node state, the
 * bf16 gradients' channel sums, workspace), to set beside the analyzer's estimate. */
size_t dse_model_bytes(const struct dse_model *m);

/* Host memory of bytes for the batches a caller hands to dse_model_forward: pinned on a
 * CUDA device (uploads at the bus's speed), plain malloc on the CPU or where the driver
 * refuses to pin (*pinned says which). NULL when out of memory. Free it with
 * dse_model_host_free on the same model, before dse_model_free. */
void *dse_model_host_alloc(struct dse_model *m, size_t bytes, int *pinned);
void  dse_model_host_free(struct dse_model *m, void *p, int pinned);

/* ---- training steps that do not wait (issue #20 item 3) ----------------------------- */

/* The host buffer for the next dse_model_step's batch ([B, C, H, W] floats), owned by the
 * model. On a device it is one of two pinned buffers, returned once the device has copied
 * the batch it last held, so the caller fills one while the device computes on the
 * other; on the CPU it is one buffer. NULL (err says why) when out of memory. */
float *dse_model_batch_buffer(struct dse_model *m, struct dse_err *err);

/* One SGD step: forward x and labels; then, unless the loss is not finite, backward,
 * clipping to the global L2 norm clip_norm (0: never; as dse_model_clip_grad) and SGD with
 * momentum (dse_model_sgd). The loss, whether it was finite and whether the step clipped
 * go into the model's tally (dse_model_tally). On the CPU the step runs now, and after a
 * non-finite loss later steps do nothing until the tally is reset. On a device it is
 * queued and this returns without waiting: x, when it is the buffer dse_model_batch_buffer
 * returned, uploads on a second stream while the device works on the previous step (any
 * other x is copied before this returns); the device skips SGD from the first non-finite
 * loss on. The same arithmetic as forward + backward + clip + sgd, so the same bits. */
enum dse_status dse_model_step(struct dse_model *m, const float *x, const int *labels, float lr, float momentum,
                               float weight_decay, double clip_norm, struct dse_err *err);

/* What the steps since the last reset added up (a device: waits for its queued work and
 * reports a failure of it); with reset, start a new tally. */
enum dse_status dse_model_tally(struct dse_model *m, struct dse_step_tally *t, int reset, struct dse_err *err);

/* ---- devices (issue #6) ------------------------------------------------------------ */
/* A model built on device cuda:N (dse_model_new_on) keeps every tensor on that GPU and
 * runs every node through the CUDA backend (engine/cuda/cuda.h); forward, backward, sgd,
 * hits, nonfinite and bytes above work the same on it. Building one fails with
 * DSE_ERR_UNSUPPORTED when the build has no CUDA or the device does not exist. Weights
 * are initialized on the host from the seed exactly as on the CPU, then uploaded: the
 * same seed gives the same starting model on every device. */

/* The two halves of forward's and backward's set-up, for callers that run nodes one by
 * one: load_batch copies x [B, C, H, W] to the input (uploads it on a device) and the
 * labels; zero_grad zeroes every activation and parameter gradient but those their one
 * writer writes whole (dse_node.dx_whole: they hold the last step's values until it runs;
 * fails on a model built for inference). */
enum dse_status dse_model_load_batch(struct dse_model *m, const float *x, const int *labels,
                                     struct dse_err *err);
enum dse_status dse_model_zero_grad(struct dse_model *m, struct dse_err *err);
/* Forward / backward of node i alone (dse bench, dse profile: per-layer times). On a
 * device the work is queued: dse_model_sync before reading a clock. */
enum dse_status dse_model_node_forward(struct dse_model *m, int i, struct dse_err *err);
enum dse_status dse_model_node_backward(struct dse_model *m, int i, struct dse_err *err);
/* Wait for the model's queued device work (nothing to do on the CPU). */
enum dse_status dse_model_sync(struct dse_model *m, struct dse_err *err);

/* The values a checkpoint holds, on any device, in checkpoint order: for each parameter
 * its values then its momentum, then each node's running mean and variance (the order
 * engine/train.c's ckpt_walk uses, so files stay compatible). count: how many floats;
 * get copies them into buf, put copies them back. */
uint64_t        dse_model_state_count(const struct dse_model *m);
enum dse_status dse_model_state_get(const struct dse_model *m, float *buf, struct dse_err *err);
enum dse_status dse_model_state_put(struct dse_model *m, const float *buf, struct dse_err *err);

#endif
