/* engine.h: the public header of the engine (issue #4): float32 NCHW tensors, op nodes
 * built from the shared network description (metaparams/net.h), and the CPU backend's
 * context and kernels. The op list is engine/ops.def; the larger picture is
 * engine/README.md and docs/conventions.md#code-conventions. The trainable model (network ->
 * nodes and tensors, SGD, checkpoints) adds its own section at the end of this file. */
#ifndef DSE_ENGINE_H
#define DSE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "base/pcg32.h"
#include "metaparams/net.h"

/* ======================================================================================
 * Tensors
 * ======================================================================================
 * A tensor is a 4-D float32 array in NCHW order: element (i, c, y, x) of data lies at
 * data[i * stride_n + (c * h + y) * w + x]. Only the image stride is free: within an
 * image the c*h*w values are contiguous. stride_n > c*h*w makes a view of a channel
 * slice of a wider tensor, which is how a Fire module's expand convs write straight
 * into their part of the concat buffer (dse_tensor_view_channels).
 *
 * grad holds dL/dtensor with exactly the layout of data (same stride_n), or is NULL
 * when nobody needs that gradient (the network input, frozen weights); kernels never
 * compute a gradient into a NULL grad.
 *
 * Memory: data and grad are addresses in the memory named by `mem`. On the CPU backend
 * that is host memory. A device backend (issue #6) allocates a device buffer (its own
 * arena) and points data/grad into it with mem = DSE_MEM_DEVICE and owns = 0, as ggml
 * does; the struct is the same, and views and stride_n mean the same thing there
 * (cuDNN's strided tensor descriptors take nStride). Host code reads device tensors
 * only through that backend's copy functions.
 *
 * Ownership (docs/conventions.md#ownership): a tensor owns the memory flagged `owns` and frees it
 * in dse_tensor_deinit; views and wrapped memory are borrowed and must not outlive
 * their owner. The model will carve every host buffer out of one arena and wrap it. */

enum dse_mem { DSE_MEM_HOST = 0, DSE_MEM_DEVICE };

#define DSE_TENSOR_OWNS_DATA 1u
#define DSE_TENSOR_OWNS_GRAD 2u

struct dse_tensor {
    int          n, c, h, w;  /* shape; all >= 1 */
    int64_t      stride_n;    /* elements from one image to the next in data and grad; >= c*h*w */
    float       *data;        /* [n, c, h, w] with stride_n */
    float       *grad;        /* same layout as data; NULL when no gradient is needed */
    enum dse_mem mem;         /* address space of data and grad */
    unsigned     owns;        /* DSE_TENSOR_OWNS_*: what dse_tensor_deinit frees */
    int          bf16;        /* 1: data holds bfloat16 values (uint16_t, the same element
                                 indices: half the bytes), grad stays float (but grad16); CPU models in
                                 bf16 only, where every op that reads or writes the tensor
                                 takes it (engine/model.c plan_bf16, issue #37) */
    int          grad16;      /* 1: grad holds bfloat16 values too (the same element indices),
                                 dL/d(the ReLU's input) of the convs writing data, already
                                 masked by their fused ReLUs, written whole by the one conv
                                 reading data; CPU bf16 training only (engine/model.c
                                 plan_grad16) */
    double      *gsum;        /* with grad16: gsum[i * gsum_ld + c], image i's channel c sum of
                                 those masked values before rounding (its writer's bias
                                 gradient terms); borrowed from the model */
    int64_t      gsum_ld;     /* doubles from one image's sums to the next (the buffer's channels) */
};

/* Flags for dse_tensor_init / dse_tensor_new. */
#define DSE_TENSOR_GRAD 1u    /* also allocate grad */

/* Allocate a contiguous n x c x h x w host tensor (stride_n = c*h*w), zero-filled and
 * 64-byte aligned; grad too if flags has DSE_TENSOR_GRAD. The tensor owns both. Fails
 * with DSE_ERR_SHAPE for a dimension < 1 or a size that overflows, DSE_ERR_NOMEM; on
 * failure *t is left empty (deinit is still safe) and nothing leaks. */
enum dse_status dse_tensor_init(struct dse_tensor *t, int n, int c, int h, int w, unsigned flags,
                                struct dse_err *err);
/* Free what t owns and empty it. Safe on an emptied or zeroed struct. */
void dse_tensor_deinit(struct dse_tensor *t);

/* Heap descriptor + dse_tensor_init. *out is NULL on failure. */
enum dse_status dse_tensor_new(int n, int c, int h, int w, unsigned flags, struct dse_tensor **out,
                               struct dse_err *err);
/* Accepts NULL. */
void dse_tensor_free(struct dse_tensor *t);

/* Allocate (zeroed) grad for a tensor that owns its data and has none yet. */
enum dse_status dse_tensor_alloc_grad(struct dse_tensor *t, struct dse_err *err);

/* Describe memory owned by someone else (an arena, a data loader's batch). Borrows data
 * and grad (grad may be NULL). stride_n >= c*h*w. Owns nothing. */
void dse_tensor_wrap(struct dse_tensor *t, int n, int c, int h, int w, int64_t stride_n, float *data,
                     float *grad, enum dse_mem mem);

/* v = channels [c0, c0 + c) of parent: same n, h, w and stride_n; data and grad (if
 * parent has one) point into parent's. Borrows parent's memory. */
void dse_tensor_view_channels(struct dse_tensor *v, const struct dse_tensor *parent, int c0, int c);

/* Number of values, n*c*h*w, and values per image, c*h*w. */
int64_t dse_tensor_count(const struct dse_tensor *t);
int64_t dse_tensor_image(const struct dse_tensor *t);
/* 1 if stride_n == c*h*w (no gaps between images). */
int     dse_tensor_contiguous(const struct dse_tensor *t);
/* Host tensors only. fill sets every value of data to v; zero_grad zeroes grad (if
 * any). On a view both touch only the view's own slice. */
void    dse_tensor_fill(struct dse_tensor *t, float v);
void    dse_tensor_zero_grad(struct dse_tensor *t);

/* ======================================================================================
 * Ops and nodes
 * ====================================================================================== */

enum dse_op {
#define DSE_OP(e, name, layer, min_in, max_in, weights) DSE_OP_##e,
#include "engine/ops.def"
#undef DSE_OP
    DSE_OP_COUNT
};

/* "conv2d", "maxpool", ...; "?" if out of range. */
const char *dse_op_str(enum dse_op op);

/* The op that runs a layer. DSE_ERR_UNSUPPORTED (naming the layer) for layer types the
 * engine has no op for (softmax without loss, accuracy, eltwise prod/max, sigmoid, tanh,
 * power). */
enum dse_status dse_op_from_layer(const struct dse_layer *l, enum dse_op *out, struct dse_err *err);

/* Backend-specific strategy ids (algo_fwd, algo_bwd) share this "choose for me" value. */
#define DSE_ALGO_AUTO (-1)

/* Op state, owned by the node: allocated by the backend's node_prepare in `mem`,
 * sized for the batch of the node's tensors, reused across steps. Unused ones are NULL. */
struct dse_node_state {
    int32_t     *argmax;   /* maxpool [N, C, P, Q]: y*W+x of the max within its input plane; -1 for an empty window */
    uint8_t     *mask;     /* dropout [N, C*H*W]: 1 = kept (scaled by 1/(1-p)), 0 = dropped */
    float       *mean;     /* batchnorm [C]: batch mean of the last training forward */
    float       *invstd;   /* batchnorm [C]: 1/sqrt(batch var + eps) (biased var) */
    float       *saved;    /* [N, C*H*W] for in-place nodes whose input is overwritten:
                              batchnorm's x_hat, scale's x; lrn's scale (always) */
    float       *prob;     /* softmax_xent [N, K]: probabilities (for accuracy) */
    void        *block;    /* the one allocation all of the above point into */
    size_t       bytes;
    enum dse_mem mem;
};

/* What a model's training steps add up (engine/model.h, dse_model_step), on the host or on
 * a device (engine/cuda/step.c), between two resets. */
struct dse_step_tally {
    double  loss_sum;    /* the steps' losses, added in step order in double */
    int64_t steps;       /* steps taken */
    int64_t diverged_at; /* the first of them (from 0) whose loss was not finite, or -1:
                            from that step on no step changes the parameters */
    int64_t clipped;     /* steps whose gradients were scaled down to the clip norm */
};

/* One op instance. Tensors are borrowed (the model owns them); the node owns `st`.
 *
 * Gradient rule (every backend): backward ACCUMULATES. For each non-NULL grad it adds
 * this node's contribution: in[i]->grad += dL/din[i], weight->grad += dL/dweight,
 * bias->grad += dL/dbias. A tensor may feed several consumers (a Fire squeeze output
 * feeds both expands; a bypass feeds an eltwise add), so the caller zeroes every
 * activation grad and every parameter grad once per step before backward.
 * Exception, in place (out->data == in[0]->data, so they share grad too): on entry the
 * shared grad holds dL/dout, on return dL/din (overwritten, as Caffe does).
 * Backward reads out->grad (dL/dout), except softmax_xent, which starts the chain:
 * it adds (p - onehot(label)) / N into in[0]->grad (loss weight 1) and ignores out->grad.
 *
 * Layouts:
 *   conv2d       in[0] x [N, C, H, W]  weight [K, C/groups, R, S]  bias [1, K, 1, 1]  out y [N, K, P, Q]
 *   fc           in[0] x [N, C, H, W] read as [N, D = C*H*W]  weight [K, D, 1, 1]  bias [1, K, 1, 1]  out [N, K, 1, 1]
 *   maxpool/avgpool  x [N, C, H, W] -> y [N, C, P, Q]; global pooling has R, S = H, W
 *   relu, dropout    x [N, C, H, W] -> y [N, C, H, W], may be in place
 *   concat       in[i] [N, C_i, H, W] -> y [N, sum C_i, H, W]; an input that is a view of
 *                its slice of y is neither copied forward nor backward
 *   eltwise_add  in[i] [N, C, H, W] -> y = sum_i in[i]
 *   softmax_xent x logits [N, K, 1, 1], labels [N] in [0, K) -> out [1, 1, 1, 1] = mean over
 *                the batch of -log softmax(x)[label]; st.prob [N, K]
 *   batchnorm    x [N, C, H, W] -> y = gamma (x - mean) / sqrt(var + eps) + beta; weight gamma
 *                [1, C, 1, 1] and bias beta only if layer->affine; may be in place
 *   scale        x [N, C, H, W] -> y = gamma[c] x (+ beta[c] if layer->bias); may be in place
 *   lrn          x [N, C, H, W] -> y = x * scale^-beta, scale = k + alpha/size * sum of x^2 over
 *                the size channels centred on c (zeros past the ends: Caffe's ACROSS_CHANNELS);
 *                st.saved [N, C*H*W] the scale, for backward
 *   slice        x [N, C, H, W] -> y [N, C', H, W], channels [b, b + C') (dse_node_slice_begin)
 *   flatten, reshape  x [N, C, H, W] -> y [N, C', H', W'] with C'H'W' = CHW, the same values
 *                in the same order: in place (the model's view) nothing moves */
struct dse_node {
    enum dse_op             op;
    const struct dse_layer *layer;       /* borrowed: hyper-parameters and inferred shapes */
    int                     training;    /* 1: dropout masks, batch statistics; 0: inference */
    int                     n_in;
    struct dse_tensor      *in[DSE_MAX_INPUTS];
    struct dse_tensor      *out;
    struct dse_tensor      *weight;      /* NULL if the op has none */
    struct dse_tensor      *bias;        /* NULL if none */
    struct dse_tensor      *run_mean;    /* batchnorm [1, C, 1, 1]: running averages, model */
    struct dse_tensor      *run_var;     /*   buffers (checkpointed, not learned); grad unused */
    const int32_t          *labels;      /* softmax_xent: [N] host, borrowed; set before forward */
    float                   bn_momentum; /* running = (1 - m) * running + m * batch (PyTorch's
                                            rule; var unbiased, m/(m-1)); default 0.1 */
    float                   bn_eps;      /* default 1e-5 */
    int                     algo_fwd;    /* conv strategy (the backend's enum) to force, or */
    int                     algo_bwd;    /*   DSE_ALGO_AUTO: the fastest, timed once per shape
                                            and cached in the backend's ctx */
    int                     relu_out;    /* conv2d, every backend: apply the in-place ReLU
                                            that follows it, max(0, .) as the output is
                                            written (with the bias) and the incoming
                                            gradient masked by out > 0 before use (with the
                                            bias gradient): the separate ReLU's bits, one
                                            pass fewer each way (a bf16 lowered or 1x1 conv
                                            on the CPU masks dy as it packs it and leaves
                                            out->grad unmasked; nothing reads it after).
                                            Set by engine/model.c (fuse_relus), the one
                                            place that decides */
    int                     relu_dy_masked; /* conv2d with relu_out, CPU: every layer reading its
                                            output is a max pool that passes gradient only to
                                            a maximum > 0 (pool_relu), so dy comes masked and
                                            the mask's pass is left out. engine/model.c
                                            (plan_relu_pools) decides */
    int                     pool_relu;   /* maxpool, CPU: its input is such convs' ReLU'd output;
                                            a window whose maximum is not > 0 (the mask's
                                            rule) passes no gradient */
    int                     dx_whole;    /* CPU: the one layer reading its input's whole
                                            buffer, whose gradient is then its dx alone, and
                                            its op can write dx without reading it first
                                            (dse_cpu_writes_dx: a max pool zeroes each plane
                                            as it begins it, a bf16 1x1 conv stores its
                                            products): the step's zeroing of the gradients
                                            leaves the buffer out. engine/model.c
                                            (plan_whole_grads) decides */
    const struct dse_node  *dy_pool;     /* conv2d, CPU bf16: the max pool that is its output
                                            buffer's one reader, whose backward this conv does for its
                                            own channels as it takes dy (dse_cpu_maxpool_dx_plane,
                                            a plane at a time in cache) rather than the pool
                                            writing the gradient whole through memory and the
                                            conv reading it back; engine/model.c (plan_pool_dy)
                                            decides */
    int                     dx_to_writers; /* maxpool, CPU: the convs writing its input do its
                                            backward (their dy_pool): its own does nothing */
    int                     fused;       /* 1: the node before it does this node's work (that
                                            ReLU); forward and backward return at once on
                                            every backend */
    struct dse_node_state   st;
    double                 *db_part;     /* data-parallel training (engine/dist.h), ops with a
                                            bias: [slice_total][channels] the bias gradient of
                                            each of this rank's slices (engine/slices.h), in
                                            double, 0 for the others' slices; the ranks' are
                                            added and then summed by the slice tree into
                                            bias->grad (engine/model.c). NULL alone. Owned by
                                            the model */
    float                  *dw_blocks;   /* data-parallel training, conv: when this rank's slices
                                            sum to more than one block of the slice tree, the
                                            blocks after the first ([blocks - 1][weights]; the
                                            first is weight->grad), which the ranks then add
                                            where the tree does. NULL otherwise. The model's */
    void                   *dev;         /* a device backend's own per-node state (cuDNN
                                            descriptors); owned by that backend, NULL on CPU */
};

/* Zero n and set op, layer and defaults (training 1, bn_momentum 0.1, bn_eps 1e-5,
 * algos AUTO). Borrows layer. The caller then sets n_in, in[], out, weight, bias... */
void dse_node_init(struct dse_node *n, enum dse_op op, const struct dse_layer *layer);
/* A slice node's first channel in its input: slice_begin, or part * (C / parts). */
int dse_node_slice_begin(const struct dse_node *n);
/* Free the node's host state (device state must be released by its backend first). */
void dse_node_deinit(struct dse_node *n);

/* Check that the node's tensors fit its op and layer: input count, every shape against
 * the layer's hyper-parameters and inferred output, parameters present with the right
 * shapes, grads only where the tensor's data exists. DSE_ERR_SHAPE naming the layer and
 * the tensor at fault, e.g. "layer 'fire2/expand3x3' (conv2d): weight is 64x16x3x1;
 * expected 64x16x3x3". Backends call it from node_prepare; kernels assume it passed. */
enum dse_status dse_node_check(const struct dse_node *n, struct dse_err *err);

/* The op state every backend keeps in n->st, as byte sizes of its pieces, each rounded
 * up to `align`: maxpool's argmax, dropout's mask, batchnorm's mean and invstd (stats
 * each), the input an in-place batchnorm or scale overwrites or lrn's scale (saved),
 * softmax_xent's probabilities. Returns their sum. A backend may append pieces of its own. */
struct dse_state_plan {
    size_t argmax, mask, stats, saved, prob;
};
size_t dse_node_state_plan(const struct dse_node *n, size_t align, struct dse_state_plan *plan);
/* Point n->st's pieces into the block at p, laid out by plan (in the order above);
 * returns the first byte after them. */
char *dse_node_state_carve(struct dse_node *n, char *p, const struct dse_state_plan *plan);

/* Forward FLOPs of the node at its tensors' batch, 2 per multiply-add, conv and fc only
 * (docs/conventions.md); 0 for other ops. */
int64_t dse_node_flops(const struct dse_node *n);

/* ======================================================================================
 * CPU backend
 * ======================================================================================
 * A backend is a context struct plus one fwd and one bwd kernel per op, built from
 * ops.def. The CUDA backend (issue #6) plugs in beside this one without changing any
 * struct above: struct dse_cuda_ctx holds the cuBLAS/cuDNN handles, the stream, a
 * device workspace that grows like ws below and its own algorithm cache (cuDNN's
 * benchmark mode, keyed like dse_cpu_conv_choice); the model allocates tensors in a
 * device buffer (mem = DSE_MEM_DEVICE), keeps per-node descriptors in node->dev and op
 * state in node->st with st.mem = DSE_MEM_DEVICE; dse_cuda_<op>_fwd/_bwd follow the
 * same gradient rule and return once the work is queued on the stream. Its table has
 * NULL for ops it cannot run, and engine/backend.c (the only #ifdef DSE_CUDA) falls
 * back to these kernels for them. */

/* Conv strategies of the CPU backend (node algo_fwd / algo_bwd, ctx conv_force). */
enum dse_cpu_conv_algo {
    DSE_CPU_CONV_AUTO = DSE_ALGO_AUTO,
    DSE_CPU_CONV_GEMM_BATCH = 0, /* im2col over the whole mini-batch (in chunks that fit
                                    ws_limit_bytes) + one sgemm per group and chunk, as in
                                    Caffe con Troll; a 1x1 conv gathers instead of lowering.
                                    Below 16 images (one a slice) a forward pass of 256 output
                                    pixels or more runs GEMM_IMAGE's, cut into blocks of rows
                                    (conv2d.c fwd_split); fewer pixels, blocks of channels */
    DSE_CPU_CONV_GEMM_IMAGE,     /* per image: im2col + one sgemm per group (Caffe); a 1x1
                                    stride-1 unpadded conv runs sgemm straight on the input */
    DSE_CPU_CONV_WINOGRAD,       /* Winograd F(2x2, 3x3) (Lavin & Gray 2016) over the mini-batch
                                    (chunked like GEMM_BATCH): 16 sgemms [K x C] x [C x tiles];
                                    3x3, stride 1, dilation 1, groups 1, any pad only. Its data
                                    gradient is Winograd too (dy with the rotated, transposed
                                    filters), its weight gradient GEMM_BATCH's. Other shapes:
                                    timing skips it (ms -1) so AUTO never picks it, and forcing
                                    it (node or ctx) runs GEMM_BATCH instead */
    DSE_CPU_CONV_DIRECT,         /* our own AVX-512 / AVX2 kernels (engine/cpu/mm.c) straight on
                                    the planes, on CPUs with AVX2 + FMA: 1x1 stride-1 unpadded
                                    and 3x3 stride-1 convs with pads up to 2 and 8 channels or
                                    more in and out, groups and dilation 1; bias and ReLU
                                    applied as the output is written, weight gradients held
                                    in registers across images. Other
                                    shapes or CPUs (or DSE_CPU_NO_AVX2 set): skipped by timing,
                                    forcing it (or a pinned choice) runs GEMM_BATCH, as for
                                    Winograd, whose bits differ from DIRECT's */
    DSE_CPU_CONV_COUNT
};
const char *dse_cpu_conv_algo_str(int algo); /* "gemm_batch", "gemm_image", "winograd", "direct", "auto", "?" */
/* The instruction set DIRECT's kernels run on here: "avx512" or "avx2" (DSE_CPU_NO_AVX512
 * set: "avx2"), or NULL where they cannot run (no AVX2 + FMA, or DSE_CPU_NO_AVX2 set). */
const char *dse_cpu_direct_isa(void);
/* NULL where the CPU's bf16 kernels (engine/cpu/mm_bf16.c, --precision bf16) run on
 * AVX512-BF16: the CPU has avx512_bf16 with AVX-512 F, BW and VL, and neither
 * DSE_CPU_NO_BF16 nor DSE_CPU_NO_AVX512 is set; else why not, a sentence naming the missing
 * flag or the variable. */
const char *dse_cpu_bf16_why(void);
/* Which kernels multiply in bf16 here: "amx" (Intel's AMX tiles, where the CPU has them, Linux
 * grants them and DSE_CPU_BF16_AMX is not 0), "avx512bf16" or "reference" (the C code, where
 * dse_cpu_bf16_why is not NULL). */
const char *dse_cpu_bf16_kernels(void);
/* cx->bf16's values: float32; bf16 for the convs the rule gives it (dse_cpu_conv_bf16_fp32
 * NULL) and every fc, what --precision bf16 runs; bf16 for every conv of one group (the
 * tests of conv_bf16.c's paths on small shapes). */
enum { DSE_CPU_BF16_OFF, DSE_CPU_BF16_BY_RULE, DSE_CPU_BF16_EVERY };
/* NULL where a conv node (its tensors inferred) multiplies in bf16 under DSE_CPU_BF16_BY_RULE,
 * else why it computes in float32, written into why (size bytes; "groups 2", "a 4x4 output
 * map": docs/training.md, "bf16 on the CPU"), which it returns. From the shape only. */
const char *dse_cpu_conv_bf16_fp32(const struct dse_node *n, char *why, size_t size);
/* Whether node n's CPU op, in cx's bf16 mode, reads its input 0 (out 0) or writes its output
 * (out 1) as bfloat16 where the tensor holds them (dse_tensor.bf16): a conv the rule gives
 * bf16 writes either; it reads either if it is 1x1 (stride 1, unpadded) or runs on padded
 * planes (stride 1); max pooling reads and writes either. engine/model.c keeps
 * an activation in bf16 where its writers and readers all take it (plan_bf16). */
struct dse_cpu_ctx;
int dse_cpu_bf16_io(const struct dse_cpu_ctx *cx, const struct dse_node *n, int out);
/* Whether node n's CPU backward, in cx's bf16 mode, can write its input's gradient whole
 * without reading it (dse_node.dx_whole, where it is that gradient's one writer): max
 * pooling, and a conv the rule gives bf16 that is 1x1 (its data gradient's products stored
 * rather than added: the same bits, a sum from +0 either way). */
int dse_cpu_writes_dx(const struct dse_cpu_ctx *cx, const struct dse_node *n);
/* Whether conv node n's CPU backward, in cx's bf16 mode, takes its incoming gradient in one
 * place (its weight gradient's pass over dy) where it can as well make it from a max pool's
 * (dse_node.dy_pool): a conv the rule gives bf16 that has a weight gradient. */
int dse_cpu_takes_pool_dy(const struct dse_cpu_ctx *cx, const struct dse_node *n);
/* Whether it takes it, too, as bf16 rows already masked, with their channel sums
 * (dse_tensor.grad16): such a conv whose fused ReLU masks dy by its bf16 output. */
int dse_cpu_takes_dy16(const struct dse_cpu_ctx *cx, const struct dse_node *n);

/* The BLAS kernels (engine/cpu/blas.c). The CPU's features as dse ranks them (cpuid, and
 * the OS saving the registers): */
enum {
    DSE_CPU_AVX        = 1,
    DSE_CPU_AVX2       = 2,  /* with FMA */
    DSE_CPU_AVX512     = 4,  /* F, CD, BW, DQ and VL */
    DSE_CPU_AVX512BF16 = 8,
    DSE_CPU_AMX        = 16, /* tiles and bf16 */
    DSE_CPU_SSE42      = 32, /* bit 31 stays free: dse_cpu_features' mark of a value read */
};
unsigned dse_cpu_features(void);
/* The CPU's model name (/proc/cpuinfo's first "model name", one line; "" where there is none). */
void dse_cpu_model(char *buf, int size);
/* features as words ("avx avx2+fma ..."; "sse only") into buf; returns the length. */
int dse_cpu_features_str(unsigned features, char *buf, int size);
/* The best OpenBLAS core type for these features among those has(symbol) says the library
 * has (NULL: none dse ranks), and a core type's rank (-1: one dse does not rank). */
const char *dse_blas_pick(unsigned features, int (*has)(const char *sym));
int dse_blas_level(const char *core);
/* The core type to select instead of OpenBLAS's choice `detected` (NULL: keep it), and why
 * into how: the user's OPENBLAS_CORETYPE (user, non-empty) wins; a core dse does not rank
 * is kept; a weaker one than pick's is replaced where the library can switch. */
const char *dse_blas_decide(const char *detected, unsigned features, const char *user, int (*has)(const char *sym),
                            int can_switch, char *how, int size);

struct dse_blas_info {
    char library[128];  /* openblas_get_config() */
    char detected[32];  /* the core type OpenBLAS chose for this CPU when loaded */
    char best[32];      /* the best one the CPU's features allow ("" if none ranked) */
    char core[32];      /* the one running: detected, best, or the user's OPENBLAS_CORETYPE */
    char features[96];  /* dse_cpu_features_str */
    char how[192];      /* why core runs, a sentence */
    int  switched;      /* 1: dse replaced OpenBLAS's choice by best */
};
/* Once per process, before any BLAS call (dse's main, every CPU ctx): if OpenBLAS chose
 * kernels weaker than this CPU runs and OPENBLAS_CORETYPE is unset, select the best ones
 * (checked against a double-precision product, else left as they were). Thread-safe. */
const struct dse_blas_info *dse_blas_setup(void);
/* For tests and benchmarks: run core's kernels from now on (NULL: the setup's), while no
 * BLAS call is under way. 0 when they run and pass the sgemm check, else -1. */
int dse_blas_force(const char *core);
int dse_blas_has(const char *core); /* 1: this BLAS can switch to core's kernels (dse_blas_force) */
const char *dse_blas_core(void); /* the core type running now */

/* One cached choice: a conv shape (batch included) and the fastest strategy for it.
 * Plain data: a run that must repeat another bit for bit (resuming from a checkpoint)
 * saves the entries and puts them back, since timing may choose differently. */
struct dse_cpu_conv_choice {
    int   key[16];                           /* N, C, H, W, K, R, S, stride h/w, pad h/w,
                                                dilation h/w, groups, has bias, wants dx */
    int   algo_fwd, algo_bwd;                /* DSE_CPU_CONV_AUTO: not timed yet */
    float ms_fwd[DSE_CPU_CONV_COUNT];        /* what the timing saw, for reports */
    float ms_bwd[DSE_CPU_CONV_COUNT];
    int   spare;                             /* offered by the machine's cache
                                                (dse_conv_cache_offer) and not used by this
                                                ctx yet: not saved with its choices */
};

/* Counters for tests and profiles; the kernels only add to them. */
struct dse_cpu_stats {
    int64_t concat_copy_bytes; /* bytes concat forward/backward actually moved */
    int64_t conv_timings;      /* shapes timed by dse_cpu_conv2d_choose */
    int64_t bf16_phases;       /* bf16 stride-2 convs' passes by phases (conv_bf16.c by_phases):
                                  forwards and weight gradients */
};

/* Everything mutable the CPU kernels share; one per thread of control, owned by the
 * caller (dse_cpu_ctx_init / deinit), with its own worker threads. Nothing in the engine
 * is global except OpenBLAS's thread count, process-wide inside OpenBLAS, which every
 * ctx sets to 1. Results are bit-identical for the same seed and machine, whatever the thread count:
 * every sum over a batch is made of its slices, added in one tree (engine/slices.h). */
struct dse_cpu_team;
struct dse_cpu_ws {
    void  *p;
    size_t bytes;
};

struct dse_cpu_ctx {
    int                         threads;        /* the kernels' threads, >= 1 (engine/cpu/team.c);
                                                   OpenBLAS itself runs on one */
    struct dse_cpu_team        *team;           /* threads - 1 workers, started on first use */
    struct dse_pcg32            rng;            /* dropout masks */
    uint64_t                    seed;           /* what rng was seeded with (recorded in results) */
    struct dse_cpu_ws          *ws;             /* one workspace per thread (im2col columns...),
                                                   owned, 64-byte aligned, grown on demand */
    size_t                      ws_bytes;       /* their sizes summed */
    size_t                      ws_limit_bytes; /* GEMM_BATCH lowers at most this much at once,
                                                   over all threads (default 256 MiB); one image
                                                   per thread always fits */
    int                         bf16;           /* DSE_CPU_BF16_*: convs and fc multiply in bf16 with
                                                   float sums (--precision bf16, issue #37;
                                                   engine/cpu/conv_bf16.c), or float32 (OFF) */
    int                         conv_force;     /* DSE_CPU_CONV_AUTO, or a strategy for every conv
                                                   whose node says AUTO (tests, benchmarks) */
    struct dse_cpu_conv_choice *conv_cache;     /* owned */
    int                         conv_cache_n, conv_cache_cap;
    struct dse_cpu_stats        stats;
    struct dse_err              err;            /* why the last failing kernel failed */
    /* Data-parallel training (engine/dist.h): this rank's share of the global batch, its run
     * of the batch's slices (engine/slices.h). The model's batch is the share; dropout draws
     * the global batch's stream at the share's place and the loss is normalized by the
     * global batch. dist_batch 0: alone (a batch is all its slices). */
    int64_t                     dist_first;     /* the share's first image in the global batch */
    int64_t                     dist_batch;     /* the global batch, or 0 */
    int                         slices;         /* alone: cut a batch into this many slices
                                                   instead of DSE_SLICES (0). Only to measure
                                                   what fixed slices cost (bench/slices.sh:
                                                   slices = threads is the thread-share
                                                   engine's cost; its bits depend on them) */
    int                         slice_total;    /* the global batch's slices */
    int                         slice_first;    /* this rank's run of them: [first, first + count) */
    int                         slice_count;
    double                     *dist_loss;      /* [slice_total] softmax_xent forward, when
                                                   dist_batch: this rank's slices' summed losses,
                                                   in double (the others' stay 0); the model's */
};

/* threads >= 1; seed and stream 0x5eed seed rng. Sets OpenBLAS to one thread (the
 * kernels split their work over the ctx's threads themselves). */
enum dse_status dse_cpu_ctx_init(struct dse_cpu_ctx *cx, int threads, uint64_t seed, struct dse_err *err);
void dse_cpu_ctx_deinit(struct dse_cpu_ctx *cx);
/* Restart the ctx's threads as `threads` (workspaces are freed). */
enum dse_status dse_cpu_ctx_set_threads(struct dse_cpu_ctx *cx, int threads, struct dse_err *err);
/* Thread 0's host workspace of at least `bytes`, valid until the next call (kernels only). */
enum dse_status dse_cpu_ctx_workspace(struct dse_cpu_ctx *cx, size_t bytes, void **out);
/* Thread t's (0 <= t < threads); call before the job that uses it, on the calling thread. */
enum dse_status dse_cpu_ctx_workspace_at(struct dse_cpu_ctx *cx, int t, size_t bytes, void **out);

/* dse_node_check, then allocate (or grow) the node's host state for its tensors' batch.
 * Call once after building the node and again if the batch grows. Steady-state forward
 * and backward then allocate nothing (besides a workspace that only grows). */
enum dse_status dse_cpu_node_prepare(struct dse_cpu_ctx *cx, struct dse_node *n, struct dse_err *err);

/* Kernels: the same signature on every backend (dse_cuda_<op>_fwd takes a
 * struct dse_cuda_ctx *). A kernel returns DSE_OK, or a status with the reason in
 * cx->err (a label out of range, out of memory for the workspace). CPU kernels finish
 * before returning; a device backend's return once the work is queued on its stream. */
#define DSE_OP(e, name, layer, min_in, max_in, weights) \
    enum dse_status dse_cpu_##name##_fwd(struct dse_cpu_ctx *cx, struct dse_node *n); \
    enum dse_status dse_cpu_##name##_bwd(struct dse_cpu_ctx *cx, struct dse_node *n);
#include "engine/ops.def"
#undef DSE_OP

typedef enum dse_status (*dse_cpu_kernel_fn)(struct dse_cpu_ctx *cx, struct dse_node *n);
struct dse_cpu_kernel {
    dse_cpu_kernel_fn fwd, bwd;
};
/* Built from ops.def: the CPU backend runs every op. */
extern const struct dse_cpu_kernel dse_cpu_kernels[DSE_OP_COUNT];

/* p[0 .. n) = 0, shared among the ctx's threads (a model's gradients each step). */
void dse_cpu_zero(struct dse_cpu_ctx *cx, float *p, int64_t n);
/* One SGD step on n parameters w with gradients g (scaled by s) and velocities v, shared
 * among the ctx's threads: v = momentum v + lr (s g + wd w), w -= v, each element alone (the
 * same bits with any thread count). */
void dse_cpu_sgd(struct dse_cpu_ctx *cx, float *w, const float *g, float *v, int64_t n, float lr, float momentum,
                 float wd, float s);
/* Sum of the squares of x[0 .. n) in double, in a fixed order (gradient clipping's norm). */
double dse_cpu_sumsq(const float *x, int64_t n);

/* Run node n's forward / backward through the table (nothing for a fused node). */
enum dse_status dse_cpu_forward(struct dse_cpu_ctx *cx, struct dse_node *n);
enum dse_status dse_cpu_backward(struct dse_cpu_ctx *cx, struct dse_node *n);

/* Time every conv strategy on n's shape: forward, and backward when the node is
 * training and wants some gradient; one warm-up run each, then the best of three runs
 * taken in turn. Cache the fastest in cx keyed by shape and batch, and copy the cache
 * entry to *out (if non-NULL). Forward timing overwrites n->out's data; backward timing
 * writes scratch gradients only. A conv kernel whose node algo is AUTO (and whose ctx
 * conv_force is AUTO) looks its shape up in the cache and times it on a miss (forward
 * times only forward, backward only backward); node algo_fwd / algo_bwd override. */
enum dse_status dse_cpu_conv2d_choose(struct dse_cpu_ctx *cx, struct dse_node *n,
                                      struct dse_cpu_conv_choice *out);

/* ======================================================================================
 * Model and training (issue #4, second half): below this line.
 * ====================================================================================== */

/* ======================================================================================
 * Backends and devices (issue #6): engine/backend.c, the registry. The CUDA backend's own
 * interface is engine/cuda/cuda.h (in every build; without CUDA it says so).
 * ====================================================================================== */

/* The backends this build has, for `dse --version`: "cpu" or "cpu cuda". */
const char *dse_engine_backends(void);

/* Where a model's tensors live and its nodes run. Zeroed = the CPU. */
enum dse_device_kind { DSE_DEVICE_CPU = 0, DSE_DEVICE_CUDA };
struct dse_device {
    enum dse_device_kind kind;
    int                  index; /* CUDA device index; 0 for the CPU */
};

/* "cpu", "cuda" (= cuda:0) or "cuda:N" -> *out; DSE_ERR_CONFIG quoting the text
 * otherwise. Whether the device exists is checked when a model is built on it. */
enum dse_status dse_device_parse(const char *s, struct dse_device *out, struct dse_err *err);
/* "cpu" or "cuda:N" into buf; returns buf. */
const char *dse_device_str(const struct dse_device *d, char *buf, int size);

#endif
