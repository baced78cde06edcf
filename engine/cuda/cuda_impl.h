/* cuda_impl.h: what the CUDA backend's host files (engine/cuda/ctx.c, conv.c,
 * conv_graph.c, ops.c, fail.c) share and nobody else sees: the ctx's handles, per-node
 * descriptors, and the macros that check every CUDA, cuDNN and cuBLAS return code
 * (docs/conventions.md#errors). Calls go down, never back (ctx.c's kernel table only names the
 * kernels): the kernels (conv.c, ops.c) -> ctx.c (workspace, descriptors) -> conv_graph.c
 * (plans; ctx.c frees them) -> fail.c (errors, what the macros call), which calls no
 * other file here. Public interface: engine/cuda/cuda.h. */
#ifndef DSE_ENGINE_CUDA_IMPL_H
#define DSE_ENGINE_CUDA_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "engine/cuda/cuda.h"
#include "engine/cuda/kernels.h"

/* cuBLAS, loaded with dlopen when a ctx is made rather than linked: loading libcublas and
 * libcublasLt costs about 0.1 s of relocations, which every dse process (sweep workers,
 * each test) would pay at start-up whether it uses a GPU or not. The fields are the
 * library's exported names, so error messages name the real call. */
struct dse_cublas {
    void          *lib;
    cublasStatus_t (*cublasCreate_v2)(cublasHandle_t *handle);
    cublasStatus_t (*cublasDestroy_v2)(cublasHandle_t handle);
    cublasStatus_t (*cublasSetStream_v2)(cublasHandle_t handle, cudaStream_t stream);
    cublasStatus_t (*cublasSetMathMode)(cublasHandle_t handle, cublasMath_t mode);
    cublasStatus_t (*cublasSgemm_v2)(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,
                                     int n, int k, const float *alpha, const float *a, int lda, const float *b,
                                     int ldb, const float *beta, float *c, int ldc);
    const char    *(*cublasGetStatusName)(cublasStatus_t status);
    cublasStatus_t (*cublasGetProperty)(libraryPropertyType type, int *value);
};

/* Load cuBLAS into *b (DSE_CUBLAS_LIBRARY, the one the build found, then by soname); on
 * failure fill why and return -1. dse_cublas_close accepts an empty one. */
int  dse_cublas_open(struct dse_cublas *b, char *why, int size);
void dse_cublas_close(struct dse_cublas *b);

struct dse_cuda_impl {
    cudaStream_t                 stream;   /* every kernel and library call of the ctx */
    cudnnHandle_t                cudnn;    /* bound to stream */
    struct dse_cublas            blas;     /* cuBLAS's entry points */
    cublasHandle_t               cublas;   /* bound to stream */
    void                        *ws;       /* device workspace shared by the conv algorithms */
    size_t                       ws_bytes;
    struct dse_cuda_conv_choice *cache;    /* algorithm choices by shape (conv.c) */
    int                         *cache_line; /* [cache_cap]: the choice file line an entry came
                                              from (0: chosen by this ctx) */
    char                        *pin_path; /* the choice file loaded last (for messages); owned */
    struct dse_cuda_plan       **plans;    /* [cache_cap * 3]: graph-API plan per direction, or
                                              NULL (legacy algorithm, not chosen, or a loaded
                                              engine not built yet) */
    int                          cache_n, cache_cap;
    int                         *flag;     /* device int for dse_cuda_nonfinite */
    int                         *mp_flag;  /* device int: a 16-bit conv gradient was not finite */
    double                      *sumsq;    /* [DSE_SUMSQ_BLOCKS + 1] for dse_cuda_sumsq */
    void                        *scratch16; /* the 16-bit copies of one conv's operands */
    size_t                       scratch16_bytes;
    void                        *mp_io[3][3]; /* per direction, the 16-bit (x, w, y) buffers
                                                 find benchmarks on (conv.c) */
    /* steps that do not wait (step.c makes these on first use; ctx.c frees them) */
    struct dse_cuk_tally        *tally;    /* device: the running tally */
    cudaStream_t                 copy;     /* the second stream: input uploads */
    cudaEvent_t                  uploaded[2], released[2]; /* per input slot */
    int                          released_once[2]; /* released[k] has been recorded */
};

/* A node's own device-side state (node->dev), created by dse_cuda_node_prepare. The
 * descriptors are set from the node's tensors at every call (host-only and cheap), so
 * they always describe what the tensors are now. */
struct dse_cuda_node {
    cudnnTensorDescriptor_t      x, y, b;     /* input 0, output, bias [1,K,1,1] */
    cudnnFilterDescriptor_t      w;
    cudnnConvolutionDescriptor_t conv;
    int32_t                     *labels;      /* softmax_xent: the labels on the device [N] */
    float                       *ab;          /* batchnorm backward: per-channel means [2C] */
};

/* ---- conv_graph.c: convolutions through cuDNN's graph API --------------------------------- */

struct dse_cuda_plan; /* an execution plan and the descriptors it was made from */

/* Benchmark the engines cuDNN's heuristics offer for direction dir (0 forward, 1 backward
 * data, 2 backward filter) of conv node n on the given device buffers (dir 0: x, w, y =
 * input, weights, output; 1: dx, w, dy; 2: x, dw, dy), with workspace ws of ws_bytes, and
 * set *out to the fastest that the ctx's rules allow (owned by the caller) with its median
 * time in *ms, or to NULL when none qualifies or cuDNN has no graph for the shape (the
 * caller then uses the legacy API). Buffers written by the direction get scratch values. */
enum dse_status dse_cuda_plan_find(struct dse_cuda_ctx *cx, const struct dse_node *n, int dir, void *x, void *w,
                                   void *y, void *ws, size_t ws_bytes, struct dse_cuda_plan **out, float *ms);
/* Run plan on the buffers (same order as for find) with workspace ws of at least
 * dse_cuda_plan_ws(p) bytes (the caller gets it: conv_graph.c calls nothing in ctx.c). */
enum dse_status dse_cuda_plan_run(struct dse_cuda_ctx *cx, const struct dse_node *n, struct dse_cuda_plan *p,
                                  void *x, void *w, void *y, void *ws);
/* Build the plan of engine configuration id (a choice file's: dse_cuda_conv_cache_load) for
 * direction dir of conv node n, as find builds its candidates. DSE_ERR_CUDA (DSE_ERR_NOMEM)
 * with why filled, *out NULL, if cuDNN cannot build it here or the ctx's rules rule the
 * engine out; the caller says which file and line it came from. */
enum dse_status dse_cuda_plan_make(struct dse_cuda_ctx *cx, const struct dse_node *n, int dir,
                                   const struct dse_cuda_conv_engine *id, struct dse_cuda_plan **out, char *why,
                                   int why_size);
/* The plan's identity: cuDNN's global engine index and its knob choices. */
const struct dse_cuda_conv_engine *dse_cuda_plan_config(const struct dse_cuda_plan *p);
size_t  dse_cuda_plan_ws(const struct dse_cuda_plan *p);     /* workspace bytes it needs */
int     dse_cuda_plan_deterministic(const struct dse_cuda_plan *p); /* cuDNN does not note it nondeterministic */
void    dse_cuda_plan_free(struct dse_cuda_plan *p);          /* accepts NULL */

/* ---- fail.c: error messages, the lowest file (the macros below call it, it calls no other
 * file of engine/cuda/) ---------------------------------------------------------------------- */

/* Fill cx->err with "layer 'NAME' (OP): " (when n is non-NULL) + the formatted text;
 * return code. */
enum dse_status dse_cuda_fail(struct dse_cuda_ctx *cx, const struct dse_node *n, enum dse_status code,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A failed library call: "[layer ...: ]CALL: WHAT (engine/cuda/FILE:LINE)", CALL being
 * the function name taken from the call's text (DSE_CUBLAS(cx).f(...) names f); DSE_ERR_NOMEM for out-of-memory codes,
 * DSE_ERR_CUDA otherwise. detail (may be NULL) is appended in brackets. */
enum dse_status dse_cuda_fail_call(struct dse_cuda_ctx *cx, const struct dse_node *n, const char *call,
                                   const char *what, int nomem, const char *detail, const char *file, int line);

/* Check a return code; on failure fill cx->err (naming node n, may be NULL) and return
 * from the calling function with the status. */
#define DSE_CUDA_TRY(cx, n, call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    (void)cudaGetLastError(); /* clear a non-sticky error so later calls do not see it */ \
    return dse_cuda_fail_call((cx), (n), #call, cudaGetErrorName(e_), e_ == cudaErrorMemoryAllocation, \
                              cudaGetErrorString(e_), __FILE__, __LINE__); } } while (0)

#define DSE_CUDNN_TRY(cx, n, call) do { cudnnStatus_t s_ = (call); if (s_ != CUDNN_STATUS_SUCCESS) { \
    char why_[200] = ""; cudnnGetLastErrorString(why_, sizeof why_); \
    return dse_cuda_fail_call((cx), (n), #call, cudnnGetErrorString(s_), s_ == CUDNN_STATUS_ALLOC_FAILED, \
                              why_[0] ? why_ : NULL, __FILE__, __LINE__); } } while (0)

/* call is an entry of the ctx's cuBLAS table: DSE_CUBLAS(cx).cublasSgemm_v2(...). */
#define DSE_CUBLAS(cx) ((cx)->impl->blas)
#define DSE_CUBLAS_TRY(cx, n, call) do { cublasStatus_t s_ = (call); if (s_ != CUBLAS_STATUS_SUCCESS) \
    return dse_cuda_fail_call((cx), (n), #call, DSE_CUBLAS(cx).cublasGetStatusName(s_), \
                              s_ == CUBLAS_STATUS_ALLOC_FAILED, NULL, __FILE__, __LINE__); } while (0)

/* Copy cx->err into err (if non-NULL and distinct) and return code: for API functions
 * that take an err argument. */
enum dse_status dse_cuda_report(struct dse_cuda_ctx *cx, enum dse_status code, struct dse_err *err);

/* ---- ctx.c: the context ------------------------------------------------------------------ */

/* Make the ctx's device current for this thread (a process may hold contexts on several
 * devices). */
enum dse_status dse_cuda_use(struct dse_cuda_ctx *cx);

/* The device workspace, at least `bytes` (grown, contents lost). */
enum dse_status dse_cuda_workspace(struct dse_cuda_ctx *cx, const struct dse_node *n, size_t bytes, void **out);

/* d = t as a 4-D float NCHW descriptor with t's image stride. DSE_ERR_UNSUPPORTED if a
 * stride does not fit cuDNN's int. */
enum dse_status dse_cuda_desc4d(struct dse_cuda_ctx *cx, const struct dse_node *n, cudnnTensorDescriptor_t d,
                                int N, int C, int H, int W, int64_t stride_n);
static inline enum dse_status dse_cuda_desc_of(struct dse_cuda_ctx *cx, const struct dse_node *n,
                                               cudnnTensorDescriptor_t d, const struct dse_tensor *t) {
    return dse_cuda_desc4d(cx, n, d, t->n, t->c, t->h, t->w, t->stride_n);
}

/* 1 if the node runs in place (its output is its first input's memory). */
static inline int dse_cuda_in_place(const struct dse_node *n) {
    return n->out->data == n->in[0]->data;
}

/* The node's device-side state. */
static inline struct dse_cuda_node *dse_cuda_dev(const struct dse_node *n) {
    return (struct dse_cuda_node *)n->dev;
}

/* Host constants for cuDNN's alpha / beta arguments. */
extern const float dse_cuda_alpha1, dse_cuda_beta0;

#endif
