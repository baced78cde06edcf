/* cuda.h: the CUDA backend's public interface (issue #6): its context (cuDNN and cuBLAS
 * handles, one stream, a device workspace, the per-shape conv algorithm cache), device
 * memory, per-node state and the kernel table built from engine/ops.def. Plain C, so C
 * code includes it in every build. The implementation is host C (engine/cuda/ctx.c,
 * conv.c, ops.c: the CUDA runtime, cuDNN and cuBLAS C APIs) plus the few kernels no
 * library call covers (engine/cuda/kernels.cu). It is built only when CMake finds CUDA
 * and cuDNN; otherwise engine/backend.c answers every call here with
 * DSE_ERR_UNSUPPORTED, except the choice file's text and the shared choice pool
 * (engine/cuda/conv_file.c, conv_pool.c: no CUDA, in every build). Larger picture:
 * docs/gpu.md, engine/README.md, docs/conventions.md#code-conventions. */
#ifndef DSE_ENGINE_CUDA_H
#define DSE_ENGINE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

/* Precision of conv and fc. Every other op is float32 arithmetic either way. */
enum dse_cuda_math {
    DSE_CUDA_MATH_FP32 = 0, /* FMA kernels only (cuDNN CUDNN_FMA_MATH, cuBLAS default
                               math): agrees with the CPU backend to float rounding */
    DSE_CUDA_MATH_TF32,     /* tensor cores with inputs rounded to TF32 (10-bit mantissa) */
    DSE_CUDA_MATH_FP16,     /* mixed precision: conv inputs, weights and gradients in FP16 on
                               tensor cores (float accumulation), dynamic loss scaling;
                               activations, parameters and fc stay float32 (engine/cuda/conv.c, "mixed precision") */
    DSE_CUDA_MATH_BF16,     /* the same in BF16 (float's range: no loss scaling) */
    DSE_CUDA_MATH_COUNT
};
/* 1 for the mixed precisions, whose convs run on 16-bit copies. */
static inline int dse_cuda_math_is16(enum dse_cuda_math m) {
    return m == DSE_CUDA_MATH_FP16 || m == DSE_CUDA_MATH_BF16;
}
const char *dse_cuda_math_str(enum dse_cuda_math m); /* "fp32", "tf32", "?" */
/* "fp32", "tf32", "fp16" or "bf16" -> *out; DSE_ERR_CONFIG naming the text otherwise. */
enum dse_status dse_cuda_math_parse(const char *s, enum dse_cuda_math *out, struct dse_err *err);

/* Counters for tests and profiles; the backend only adds to them. */
struct dse_cuda_stats {
    int64_t conv_finds;            /* (shape, direction) pairs benchmarked with cuDNN's find */
    int64_t conv_nondeterministic; /* of those, how many had no deterministic algorithm
                                      within the workspace limit and took another (of the
                                      choices taken from a conv_pool, only graph-API plans
                                      count: a legacy algorithm's determinism is not kept) */
    int64_t conv_graph_found;      /* of those, how many cuDNN's graph API had a plan for */
    int64_t conv_graph_taken;      /* ... and how many took it (faster than the legacy API's) */
    int64_t conv_loaded;           /* (shape, direction) pairs taken from a choice file
                                      (dse_cuda_conv_cache_load) instead of found */
    int64_t conv_shared;           /* (shape, direction) pairs taken from the ctx's conv_pool:
                                      another ctx of the process found them */
    int64_t concat_copy_bytes;     /* bytes concat forward/backward actually moved */
    size_t  workspace_bytes;       /* the ctx's device workspace now */
    size_t  scratch16_bytes;       /* mixed precision: the 16-bit copies of conv operands */
    int64_t mp_steps_skipped;      /* FP16: steps skipped for non-finite gradients */
    int64_t mp_fp32_fallbacks;     /* FP16 / BF16: (shape, direction) pairs with no 16-bit
                                      engine, run in fp32 */
    size_t  state_bytes;           /* device op state of prepared nodes */
};

/* A cuDNN graph-API engine configuration, the identity of an execution plan: cuDNN's global
 * engine index for the operation graph (CUDNN_ATTR_ENGINE_GLOBAL_INDEX) and the knob
 * choices of the configuration (CUDNN_ATTR_ENGINECFG_KNOB_CHOICES: knob type, value). With
 * the same cuDNN version, GPU model and operation graph (the conv's shape, precision and
 * alignment: the choice's key), they rebuild the same plan in any process; an index into
 * the heuristics' list would not (its order is cuDNN's to change), nor would the engine
 * index alone (one engine runs with many tile sizes, split-K factors, ...). */
#define DSE_CUDA_CONV_KNOBS 64
struct dse_cuda_conv_engine {
    int64_t id;                              /* global engine index; -1: none */
    int     n_knobs;                         /* 0 .. DSE_CUDA_CONV_KNOBS */
    int64_t knob_type[DSE_CUDA_CONV_KNOBS];  /* cudnnBackendKnobType_t, in the config's order */
    int64_t knob_value[DSE_CUDA_CONV_KNOBS];
};

/* One cached conv algorithm choice: the shape (batch, image strides, precision and
 * limits included) and, per direction, what runs it: algo -1 (not chosen yet), a legacy
 * cuDNN algorithm (its enum value, run with cuDNN math type math[d]), a graph-API engine
 * configuration (algo >= DSE_CUDA_CONV_ENGINE; engine[d] says which) or DSE_CUDA_CONV_FP32;
 * the time find measured (0 for a choice loaded from a file) and the workspace it needs.
 * Plain data, like dse_cpu_conv_choice, so a run can report or pin its choices
 * (dse_cuda_conv_cache_save). Arrays indexed by direction: 0 forward, 1 backward data,
 * 2 backward filter. */
#define DSE_CUDA_CONV_KEY 21
#define DSE_CUDA_CONV_ENGINE 1000 /* algo values from here: a graph-API engine (algo - this: its
                                     global index, for reports; engine[d] identifies it) */
#define DSE_CUDA_CONV_FP32   900  /* FP16 / BF16: no 16-bit engine for the shape; runs in fp32 */
struct dse_cuda_conv_choice {
    int64_t key[DSE_CUDA_CONV_KEY]; /* N, C, H, W, K, R, S, stride h/w, pad h/w, dilation
                                       h/w, groups, x stride_n, y stride_n, math,
                                       deterministic, workspace limit (MiB), x and y
                                       address alignment (x + 100 y, bytes up to 16),
                                       legacy_conv + 2 (their gradients' alignment) */
    int     algo[3];                         /* -1, a legacy algorithm, DSE_CUDA_CONV_ENGINE + the
                                                engine's index, or DSE_CUDA_CONV_FP32 */
    float   ms[3];                           /* what find measured (a choice taken from a
                                                conv_pool: the finder's); 0 when loaded */
    size_t  ws[3];                           /* workspace bytes */
    int     math[3];                         /* legacy algorithms: cudnnMathType_t */
    struct dse_cuda_conv_engine engine[3];   /* graph-API engines: the configuration */
};
/* Copy direction dir's fields (algo, ms, ws, math, engine) of from into to; the key and the
 * other directions stay. The one list of a direction's fields (conv_file.c). */
void dse_cuda_conv_choice_copy_dir(struct dse_cuda_conv_choice *to, const struct dse_cuda_conv_choice *from, int dir);

struct dse_cuda_impl; /* handles, stream, workspace, cache: engine/cuda/cuda_impl.h */
struct dse_cuda_conv_pool; /* choices shared by a process's ctxs: "shared choices" below */

/* Everything mutable the CUDA kernels share; one per thread of control, owned by the
 * caller (dse_cuda_ctx_init / deinit). Options (math, deterministic, ws_limit_bytes,
 * sync_each) may be changed between kernel calls; the algorithm cache is keyed by them. */
struct dse_cuda_ctx {
    int                   device;         /* CUDA device index */
    enum dse_cuda_math    math;           /* default DSE_CUDA_MATH_FP32 */
    int                   deterministic;  /* 1 (default): only cuDNN algorithms that give
                                             the same bits every run, where one fits */
    size_t                ws_limit_bytes; /* largest workspace one conv algorithm may use
                                             (default 512 MiB); find runs within it */
    int                   legacy_conv;    /* 1: convolutions through cuDNN's legacy API only
                                             (its 8 algorithms); 0 (default): its graph API
                                             first (every engine; conv_graph.c), legacy when
                                             no engine qualifies */
    float                 loss_scale;     /* FP16: conv output gradients are multiplied by it
                                             before they are rounded to FP16 and the results
                                             divided by it (dynamic: dse_cuda_mp_step);
                                             default 65536; 1 in BF16 */
    int64_t               mp_good_steps;  /* FP16: steps since the scale last changed */
    struct dse_cuda_conv_pool *conv_pool; /* borrowed; NULL (default): this ctx finds every
                                             shape itself. Else a shape's choices another
                                             ctx of the pool found are taken, not found
                                             again ("shared choices" below) */
    int                   sync_each;      /* 1: wait for every kernel, so an asynchronous
                                             failure names its op (tests; env DSE_CUDA_SYNC=1) */
    uint64_t              seed;           /* what rng was seeded with (recorded in results) */
    struct dse_pcg32      rng;            /* seeded (seed, 0x5eed) like the CPU ctx's */
    struct dse_pcg32     *dropout_rng;    /* the generator dropout masks draw from: &rng
                                             unless the owner points it elsewhere (the model
                                             points it at its CPU ctx's, which checkpoints
                                             store). Borrowed. Dropout draws the same
                                             numbers for the same values as the CPU kernel */
    struct dse_cuda_stats stats;
    struct dse_err        err;            /* why the last failing call failed */
    struct dse_cuda_impl *impl;           /* owned */
};

/* ---- devices ---------------------------------------------------------------------- */

/* Number of usable CUDA devices; 0 when there is no driver, no device or no CUDA in
 * this build, with the reason in why (if non-NULL), e.g. "cudaGetDeviceCount:
 * cudaErrorNoDevice: no CUDA-capable device is detected". Never fails. */
int dse_cuda_device_count(char *why, int size);

/* The libraries as this process finds them, without needing a device: "driver=12.4
 * runtime=13.0 cudnn=9.19.0 cudnn_headers=9.19.0 cublas=13.0.0" (driver=none without a
 * driver, cublas=none (reason) when cuBLAS cannot be loaded); "built without CUDA" in
 * such a build. Returns buf. */
const char *dse_cuda_versions(char *buf, int size);

/* One line of facts about device `device`: name, compute capability, memory, driver
 * and runtime versions, cuDNN and cuBLAS versions. Fails (DSE_ERR_CUDA) if the device
 * cannot be queried. */
enum dse_status dse_cuda_device_info(int device, char *buf, int size, struct dse_err *err);

/* Free and total memory of device `device` as the driver reports it now (other
 * processes' allocations included), from cudaMemGetInfo. The first call in a process
 * creates a CUDA context on the device (a few hundred MiB of its memory, for as long as
 * the process lives), so call it in the process that will train there, never before a
 * fork(). Fails with DSE_ERR_UNSUPPORTED without CUDA or such a device, DSE_ERR_CUDA for
 * a failing call. */
enum dse_status dse_cuda_mem_info(int device, size_t *free_bytes, size_t *total_bytes, struct dse_err *err);

/* ---- context ---------------------------------------------------------------------- */

/* Select `device`, create its stream and the cuDNN and cuBLAS handles bound to it, seed
 * rng with (seed, 0x5eed). Fails with DSE_ERR_UNSUPPORTED if the build has no CUDA or
 * the device does not exist (message says which), DSE_ERR_CUDA for a failing call.
 * On failure *cx is left deinitialized (deinit is still safe). */
enum dse_status dse_cuda_ctx_init(struct dse_cuda_ctx *cx, int device, uint64_t seed, struct dse_err *err);
void dse_cuda_ctx_deinit(struct dse_cuda_ctx *cx); /* safe on a zeroed or failed ctx */

/* Wait for everything queued on the ctx's stream; reports an asynchronous failure
 * (a kernel that faulted) as DSE_ERR_CUDA. */
enum dse_status dse_cuda_sync(struct dse_cuda_ctx *cx, struct dse_err *err);

/* ---- mixed precision ------------------------------------------------------------- */

/* Dynamic loss scaling, as PyTorch's GradScaler: a step whose gradients overflowed is
 * skipped and the scale halved (not below 1); after `interval` good steps in a row it is
 * doubled (not above 2^24). Returns the new scale; *good counts the good steps. Pure. */
static inline float dse_loss_scale_next(float scale, int overflow, int64_t *good, int64_t interval) {
    if (overflow) {
        *good = 0;
        return scale > 2.0f ? scale * 0.5f : 1.0f;
    }
    if (++*good >= interval) {
        *good = 0;
        return scale < 16777216.0f ? scale * 2.0f : scale;
    }
    return scale;
}
#define DSE_LOSS_SCALE_INIT     65536.0f
#define DSE_LOSS_SCALE_INTERVAL 2000

/* After a backward pass in FP16: *skip = 1 if a conv gradient was not finite (the SGD
 * step must be skipped; the scale is updated), 0 otherwise; waits for the device (the one
 * wait per step left in FP16). A no-op (*skip = 0) in FP32, TF32 and BF16 (float's range:
 * an overflow there is divergence, which the loss shows). */
enum dse_status dse_cuda_mp_step(struct dse_cuda_ctx *cx, int *skip, struct dse_err *err);
/* Before a backward pass: forget any overflow a backward pass without an SGD step left
 * (queued; a no-op in FP32 and TF32). dse_model_zero_grad calls it. */
enum dse_status dse_cuda_mp_clear(struct dse_cuda_ctx *cx, struct dse_err *err);

/* ---- device memory ---------------------------------------------------------------- */

/* bytes (>= 1) of zeroed device memory on the ctx's device, 256-byte aligned. */
enum dse_status dse_cuda_alloc(struct dse_cuda_ctx *cx, size_t bytes, void **out, struct dse_err *err);
void dse_cuda_free(struct dse_cuda_ctx *cx, void *p); /* accepts NULL */
/* bytes of page-locked ("pinned") host memory (cudaHostAlloc): uploads from it go at the
 * bus's speed instead of through a staging copy. DSE_ERR_CUDA when the driver refuses (the
 * caller may fall back to malloc). dse_cuda_host_free accepts NULL. */
enum dse_status dse_cuda_host_alloc(struct dse_cuda_ctx *cx, size_t bytes, void **out, struct dse_err *err);
void dse_cuda_host_free(struct dse_cuda_ctx *cx, void *p);
/* Host -> device; returns once src may be reused. */
enum dse_status dse_cuda_upload(struct dse_cuda_ctx *cx, void *dst, const void *src, size_t bytes,
                                struct dse_err *err);
/* Device -> host, after everything queued before it. */
enum dse_status dse_cuda_download(struct dse_cuda_ctx *cx, void *dst, const void *src, size_t bytes,
                                  struct dse_err *err);
/* Zero device memory (queued). */
enum dse_status dse_cuda_zero(struct dse_cuda_ctx *cx, void *dst, size_t bytes, struct dse_err *err);

/* Copy data (and grad, if with_grad and both have one) between a host tensor and a
 * device tensor of the same shape, each with its own stride_n (views work). */
enum dse_status dse_cuda_tensor_upload(struct dse_cuda_ctx *cx, struct dse_tensor *dev,
                                       const struct dse_tensor *host, int with_grad, struct dse_err *err);
enum dse_status dse_cuda_tensor_download(struct dse_cuda_ctx *cx, struct dse_tensor *host,
                                         const struct dse_tensor *dev, int with_grad, struct dse_err *err);

/* ---- nodes and kernels ------------------------------------------------------------ */

/* dse_node_check, then the node's cuDNN descriptors (node->dev) and its op state in
 * device memory (node->st, st.mem = DSE_MEM_DEVICE; same fields and layouts as the CPU
 * backend's), sized for its tensors' batch. Every tensor of the node must have
 * mem = DSE_MEM_DEVICE. Call once after building the node and again if the batch grows. */
enum dse_status dse_cuda_node_prepare(struct dse_cuda_ctx *cx, struct dse_node *n, struct dse_err *err);
/* Free node->dev and the device op state; call before dse_node_deinit. Accepts a node
 * that was never prepared. */
void dse_cuda_node_release(struct dse_cuda_ctx *cx, struct dse_node *n);

/* Kernels: the CPU kernels' signature with a struct dse_cuda_ctx *, the same gradient
 * rule (engine.h, struct dse_node) and the same results to float rounding (dropout
 * masks, max-pool argmax and tie-breaking, Caffe's pooling windows: bit for bit). They
 * return once the work is queued on the ctx's stream; a failure returns a status with
 * the reason in cx->err, naming the layer, the failing call and where it is, e.g.
 * "layer 'conv1' (conv2d): cudnnConvolutionForward: CUDNN_STATUS_BAD_PARAM
 * (engine/cuda/conv.c:123)". softmax_xent forward also checks the labels (host memory,
 * as on the CPU) and fails with DSE_ERR_CONFIG for one out of range. */
#define DSE_OP(e, name, layer, min_in, max_in, weights) \
    enum dse_status dse_cuda_##name##_fwd(struct dse_cuda_ctx *cx, struct dse_node *n); \
    enum dse_status dse_cuda_##name##_bwd(struct dse_cuda_ctx *cx, struct dse_node *n);
#include "engine/ops.def"
#undef DSE_OP

typedef enum dse_status (*dse_cuda_kernel_fn)(struct dse_cuda_ctx *cx, struct dse_node *n);
struct dse_cuda_kernel {
    dse_cuda_kernel_fn fwd, bwd;
};
/* Built from ops.def (engine/cuda/table.c); NULL would mean "not supported", but the CUDA
 * backend runs every op. Defined only in builds with CUDA. */
extern const struct dse_cuda_kernel dse_cuda_kernels[DSE_OP_COUNT];

/* Run node n's forward / backward through the CUDA kernel table (every op has an entry). */
enum dse_status dse_cuda_forward(struct dse_cuda_ctx *cx, struct dse_node *n);
enum dse_status dse_cuda_backward(struct dse_cuda_ctx *cx, struct dse_node *n);

/* Benchmark n's conv shape with cuDNN's find (forward; and backward data / filter when
 * the node is training and wants those gradients) unless cached, and copy the cache
 * entry to *out (if non-NULL). Conv kernels do this themselves on a cache miss; this is
 * for profiles. Find writes scratch buffers only (and n->out's data, which forward
 * overwrites anyway). */
enum dse_status dse_cuda_conv2d_choose(struct dse_cuda_ctx *cx, struct dse_node *n,
                                       struct dse_cuda_conv_choice *out);
/* cuDNN's name for an algorithm of a direction (0 forward, 1 backward data, 2 backward
 * filter), e.g. "implicit_precomp_gemm"; "?" if unknown. */
const char *dse_cuda_conv_algo_str(int direction, int algo);

/* ---- pinned conv choices: the choice file --------------------------------------------- */

/* cuDNN's choices are timed, so two runs may choose differently and differ in the last bits.
 * A choice file pins them: a run that loads it makes the same choices as the run that wrote
 * it, without find, and repeats it bit for bit (docs/gpu.md, "Determinism"). Text:
 *
 *     dse-cudnn-choices 1 cudnn 91900 cc 9.0 sms 132 device NVIDIA H100 80GB HBM3
 *     # comment lines and blank lines are skipped
 *     KEY ; FORWARD ; BACKWARD-DATA ; BACKWARD-FILTER
 *
 * The header names the format version (1), the cuDNN version (cudnnGetVersion()), the
 * compute capability, multiprocessor count and name of the GPU that chose. KEY is the 21 integers of
 * dse_cuda_conv_choice.key; each direction is one of
 *     none                                    not chosen (the conv had no such gradient)
 *     fp32                                    DSE_CUDA_CONV_FP32 (mixed precision, no 16-bit engine)
 *     legacy ALGO math MATH ws BYTES          a legacy algorithm and its cudnnMathType_t
 *     engine ID ws BYTES knobs [TYPE=VALUE]...  a graph-API engine configuration
 * Everything here is plain text work, with no device, in every build. */
struct dse_cuda_conv_file {
    int                          version;      /* 1 */
    int64_t                      cudnn;        /* cudnnGetVersion() of the writer, e.g. 91900 */
    int                          cc_major, cc_minor; /* its GPU's compute capability */
    int                          sms;          /* its multiprocessors (a MIG slice has fewer) */
    char                         device[256];  /* its GPU's name (cudaDeviceProp.name) */
    int                          n;
    struct dse_cuda_conv_choice *choices;      /* [n]; owned */
    int                         *lines;        /* [n]: the line each came from (1-based); owned */
};
/* Parse text (the contents of path, which only names it in messages) into *out. Errors
 * (DSE_ERR_IO, err->file = path, err->line = the line at fault, *out empty): a missing or
 * malformed header, a format version other than 1, a line without 21 integers and three
 * directions, a direction that does not parse, a negative workspace, more than
 * DSE_CUDA_CONV_KNOBS knobs, a key given twice. */
enum dse_status dse_cuda_conv_file_parse(const char *path, const char *text, struct dse_cuda_conv_file *out,
                                         struct dse_err *err);
/* f as text (the format above; times are not written), malloc'd; NULL if out of memory.
 * Entries with no direction chosen are left out. */
char *dse_cuda_conv_file_format(const struct dse_cuda_conv_file *f);
/* "forward", "backward data" or "backward filter" for direction 0, 1 or 2; "?" else. */
const char *dse_cuda_conv_dir_str(int dir);
void  dse_cuda_conv_file_deinit(struct dse_cuda_conv_file *f); /* frees choices and lines */

/* What dse_cuda_conv_cache_load did. */
struct dse_cuda_conv_load {
    int  found;     /* 1: the file exists */
    int  loaded;    /* entries taken into the ctx's cache */
    int  stale;     /* 1: the file was written with another cuDNN version or on another GPU
                       (name, compute capability or multiprocessor count): nothing taken
                       (find chooses again, and the next save replaces the file); why says
                       which, for the caller to tell the user */
    char why[768];
};
/* Take path's choices into the ctx's cache: later convs of those shapes run them without
 * find. A missing file loads nothing (DSE_OK, found = 0); entries for shapes the ctx has
 * chosen already are ignored. A graph-API engine is rebuilt from its identity when its
 * shape first runs; if cuDNN cannot build it there (a file edited by hand or damaged: the
 * header matched), that conv fails with DSE_ERR_CUDA naming path:line, never silently
 * choosing something else. Errors: those of dse_cuda_conv_file_parse, DSE_ERR_IO for a file
 * that cannot be read, DSE_ERR_CUDA if the device cannot be queried. */
enum dse_status dse_cuda_conv_cache_load(struct dse_cuda_ctx *cx, const char *path, struct dse_cuda_conv_load *out,
                                         struct dse_err *err);
/* Write the ctx's choices (every shape with a direction chosen, loaded ones included) to
 * path atomically, with this GPU's header. DSE_ERR_IO if it cannot be written. */
enum dse_status dse_cuda_conv_cache_save(struct dse_cuda_ctx *cx, const char *path, struct dse_err *err);

/* ---- shared choices: one find per shape for a process's ctxs (issue #20 item 4) -------- */
/* Candidates packed on one GPU are threads of one process, each with its own ctx, and share
 * most conv shapes. Alone, each ctx times cuDNN's engines for every shape it meets, and the
 * finds of K threads time each other. A pool, given to the ctxs as conv_pool, lets the
 * first ctx that needs a (device, shape key, direction) find it while the others that need
 * it wait, then take its choice as if from a choice file: a graph-API engine is rebuilt from
 * its identity, and dse_cuda_conv_cache_save pins it in the taker's file like its own finds.
 * The taker runs the very engine the finder timed, so the two compute alike. Host code
 * (engine/cuda/conv_pool.c), in every build; thread-safe. */
enum dse_status dse_cuda_conv_pool_new(struct dse_cuda_conv_pool **out, struct dse_err *err);
void dse_cuda_conv_pool_free(struct dse_cuda_conv_pool *p); /* accepts NULL; no ctx may use it any more */

enum dse_cuda_pool_get {
    DSE_CUDA_POOL_TAKEN,   /* *c's direction fields now hold the pool's choice */
    DSE_CUDA_POOL_CLAIMED, /* nobody has it: the caller finds it and must then call
                              dse_cuda_conv_pool_put, whether its find succeeded or not */
    DSE_CUDA_POOL_ALONE,   /* out of memory (or a bad direction): the caller finds it and
                              puts nothing */
};
/* Direction dir (0 forward, 1 backward data, 2 backward filter) of c->key's shape on
 * device: taken, claimed, or, while another caller has claimed it, wait for its put. A
 * caller holding a claim must not ask for another shape before its put (one find at a time
 * per caller: no caller waits while holding what another waits for). */
enum dse_cuda_pool_get dse_cuda_conv_pool_get(struct dse_cuda_conv_pool *p, int device, int dir,
                                              struct dse_cuda_conv_choice *c);
/* End the caller's claim of (device, key, dir): found (its direction fields) is kept for
 * the others, or, when NULL (the find failed), the claim is dropped and the next asker
 * finds. Wakes the waiters. Does nothing for a pair that is not claimed. */
void dse_cuda_conv_pool_put(struct dse_cuda_conv_pool *p, int device, int dir, const int64_t *key,
                            const struct dse_cuda_conv_choice *found);
/* Choices kept in the pool, and choices it gave to callers (each a find saved). */
void dse_cuda_conv_pool_counts(struct dse_cuda_conv_pool *p, int64_t *kept, int64_t *given);

/* ---- training helpers ------------------------------------------------------------- */

/* SGD with momentum in Caffe's form on n device values (dse_model_sgd's arithmetic):
 * v = momentum v + lr (gscale g + wd w), w -= v. Queued. */
enum dse_status dse_cuda_sgd(struct dse_cuda_ctx *cx, float *w, const float *g, float *v, int64_t n, float lr,
                             float momentum, float wd, float gscale);
/* *out = the sum of the squares of n device values, added in double in a fixed order
 * (the same sum every run). Waits for the stream. */
enum dse_status dse_cuda_sumsq(struct dse_cuda_ctx *cx, const float *p, int64_t n, double *out);
/* *out = 1 if any of n device values is NaN or infinite, else 0. Waits for the stream. */
enum dse_status dse_cuda_nonfinite(struct dse_cuda_ctx *cx, const float *p, int64_t n, int *out);

/* ---- steps that do not wait (issue #20 item 3) ------------------------------------ */
/* A training loop that downloaded its loss every step waited for the device every step.
 * Instead the device adds up what the host needs and the host reads it now and then. */

/* Queue: add the device float *loss to the tally (a non-finite one marks it diverged). */
enum dse_status dse_cuda_tally_loss(struct dse_cuda_ctx *cx, const float *loss);
/* Queue: the factor the next dse_cuda_sgd_tallied applies to the gradients: with
 * clip_norm > 0, the L2 norm of the n device values g (summed in double in a fixed order,
 * as dse_cuda_sumsq) and, when it is finite and above clip_norm, clip_norm / norm (the
 * step counts as clipped); 1 otherwise. The same arithmetic as the host's
 * dse_model_clip_grad, so the same bits. */
enum dse_status dse_cuda_tally_scale(struct dse_cuda_ctx *cx, const float *g, int64_t n, double clip_norm);
/* Queue dse_cuda_sgd with that factor; nothing once the tally is diverged. */
enum dse_status dse_cuda_sgd_tallied(struct dse_cuda_ctx *cx, float *w, const float *g, float *v, int64_t n,
                                     float lr, float momentum, float wd);
/* Wait for the stream and copy the tally (struct dse_step_tally, engine/engine.h) into
 * *out; with reset, start a new one. */
enum dse_status dse_cuda_tally_take(struct dse_cuda_ctx *cx, struct dse_step_tally *out, int reset,
                                    struct dse_err *err);

/* Double-buffered input: two slots (0, 1), each a device buffer the compute stream reads
 * during a step and a pinned host buffer the caller fills. dse_cuda_slot_upload queues the
 * copy on the ctx's second (copy) stream once the compute stream has released the slot's
 * previous batch, and makes the compute stream wait for it, so the copy of step i + 1
 * overlaps step i. dse_cuda_slot_release marks, on the compute stream, the point after
 * which the slot's device buffer is free again (the end of the step that read it).
 * dse_cuda_slot_wait_host returns once the slot's last copy has left the host buffer,
 * so the caller may refill it. */
enum dse_status dse_cuda_slot_upload(struct dse_cuda_ctx *cx, int slot, void *dst, const void *src, size_t bytes,
                                     struct dse_err *err);
enum dse_status dse_cuda_slot_release(struct dse_cuda_ctx *cx, int slot, struct dse_err *err);
enum dse_status dse_cuda_slot_wait_host(struct dse_cuda_ctx *cx, int slot, struct dse_err *err);

#endif
