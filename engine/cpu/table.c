/* table.c: the CPU backend's kernel table, built from engine/ops.def, and the dispatch
 * through it. It sits above the kernels (one file per op family next to this one), which
 * sit above ctx.c and team.c: calls go table.c -> kernels -> ctx.c / team.c, never up. */
#include "engine/engine.h"

const struct dse_cpu_kernel dse_cpu_kernels[DSE_OP_COUNT] = {
#define DSE_OP(e, name, layer, min_in, max_in, weights) \
    [DSE_OP_##e] = { dse_cpu_##name##_fwd, dse_cpu_##name##_bwd },
#include "engine/ops.def"
#undef DSE_OP
};

enum dse_status dse_cpu_forward(struct dse_cpu_ctx *cx, struct dse_node *n) {
    DSE_ASSERT((unsigned)n->op < DSE_OP_COUNT);
    return n->fused ? DSE_OK : dse_cpu_kernels[n->op].fwd(cx, n);
}

enum dse_status dse_cpu_backward(struct dse_cpu_ctx *cx, struct dse_node *n) {
    DSE_ASSERT((unsigned)n->op < DSE_OP_COUNT);
    return n->fused ? DSE_OK : dse_cpu_kernels[n->op].bwd(cx, n);
}
