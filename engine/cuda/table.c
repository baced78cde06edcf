/* table.c: the CUDA backend's kernel table, built from engine/ops.def, and the dispatch
 * through it. It sits above the kernels (conv.c, ops.c), which sit above ctx.c, fail.c
 * and the launchers of kernels.cu: calls go table.c -> kernels -> ctx.c, never up.
 * Interface: engine/cuda/cuda.h. */
#include "engine/cuda/cuda.h"

#include "engine/cuda/cuda_impl.h"

const struct dse_cuda_kernel dse_cuda_kernels[DSE_OP_COUNT] = {
#define DSE_OP(e, name, layer, min_in, max_in, weights) \
    [DSE_OP_##e] = { dse_cuda_##name##_fwd, dse_cuda_##name##_bwd },
#include "engine/ops.def"
#undef DSE_OP
};

/* ---- running nodes ----------------------------------------------------------------------- */

static enum dse_status run(struct dse_cuda_ctx *cx, struct dse_node *n, int bwd) {
    DSE_ASSERT((unsigned)n->op < DSE_OP_COUNT);
    if (!cx->impl) return dse_cuda_fail(cx, n, DSE_ERR_INTERNAL, "CUDA context not initialized");
    if (!n->dev) return dse_cuda_fail(cx, n, DSE_ERR_INTERNAL, "node not prepared for the CUDA backend");
    if (n->fused) return DSE_OK; /* the node before it did this node's work (dse_node.fused) */
    enum dse_status st = dse_cuda_use(cx);
    if (st) return st;
    const dse_cuda_kernel_fn fn = bwd ? dse_cuda_kernels[n->op].bwd : dse_cuda_kernels[n->op].fwd;
    if (!fn) return dse_cuda_fail(cx, n, DSE_ERR_UNSUPPORTED, "the CUDA backend has no kernel for this op");
    if ((st = fn(cx, n))) return st;
    if (cx->sync_each) {
        cudaError_t e = cudaStreamSynchronize(cx->impl->stream);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return dse_cuda_fail(cx, n, DSE_ERR_CUDA, "%s: %s: %s (after its %s kernels)", "cudaStreamSynchronize",
                                 cudaGetErrorName(e), cudaGetErrorString(e), bwd ? "backward" : "forward");
        }
    }
    return DSE_OK;
}

enum dse_status dse_cuda_forward(struct dse_cuda_ctx *cx, struct dse_node *n) { return run(cx, n, 0); }
enum dse_status dse_cuda_backward(struct dse_cuda_ctx *cx, struct dse_node *n) { return run(cx, n, 1); }
