/* step.c: training steps that do not wait for the device (issue #20 item 3). The loss,
 * the divergence flag and the clipping count add up on the device (struct dse_cuk_tally,
 * kernels.cu) and the host reads them when it wants them (dse_cuda_tally_take); the SGD
 * kernel reads its gradient factor from there and does nothing once a loss was not
 * finite, which is where the host's loop would have stopped. Inputs upload on a second
 * stream into one of two slots while the compute stream works on the other. Calls
 * ctx.c only (cuda_impl.h: calls go down). */
#include <string.h>

#include "engine/cuda/cuda_impl.h"

/* The tally, the copy stream and the slot events, made the first time a step needs them. */
static enum dse_status step_state(struct dse_cuda_ctx *cx) {
    if (!cx->impl) return dse_cuda_fail(cx, NULL, DSE_ERR_INTERNAL, "CUDA context not initialized");
    enum dse_status st = dse_cuda_use(cx);
    if (st) return st;
    struct dse_cuda_impl *m = cx->impl;
    if (m->tally) return DSE_OK;
    /* each made once, so a failure part-way (out of memory) leaks nothing when retried;
     * ctx.c frees whatever exists */
    if (!m->copy) DSE_CUDA_TRY(cx, NULL, cudaStreamCreateWithFlags(&m->copy, cudaStreamNonBlocking));
    for (int k = 0; k < 2; k++) {
        if (!m->uploaded[k]) DSE_CUDA_TRY(cx, NULL, cudaEventCreateWithFlags(&m->uploaded[k], cudaEventDisableTiming));
        if (!m->released[k]) DSE_CUDA_TRY(cx, NULL, cudaEventCreateWithFlags(&m->released[k], cudaEventDisableTiming));
    }
    struct dse_cuk_tally *t = NULL;
    DSE_CUDA_TRY(cx, NULL, cudaMalloc((void **)&t, sizeof *t));
    m->tally = t;
    DSE_CUDA_TRY(cx, NULL, dse_cuk_tally_reset(m->stream, m->tally));
    return DSE_OK;
}

enum dse_status dse_cuda_tally_loss(struct dse_cuda_ctx *cx, const float *loss) {
    enum dse_status st = step_state(cx);
    if (st) return st;
    DSE_CUDA_TRY(cx, NULL, dse_cuk_tally_loss(cx->impl->stream, loss, cx->impl->tally));
    return DSE_OK;
}

enum dse_status dse_cuda_tally_scale(struct dse_cuda_ctx *cx, const float *g, int64_t n, double clip_norm) {
    enum dse_status st = step_state(cx);
    if (st) return st;
    struct dse_cuda_impl *m = cx->impl;
    const int clip = clip_norm > 0 && n > 0;
    if (clip) DSE_CUDA_TRY(cx, NULL, dse_cuk_sumsq(m->stream, g, n, m->sumsq));
    DSE_CUDA_TRY(cx, NULL, dse_cuk_tally_scale(m->stream, clip ? m->sumsq + DSE_SUMSQ_BLOCKS : NULL, clip_norm,
                                               m->tally));
    return DSE_OK;
}

enum dse_status dse_cuda_sgd_tallied(struct dse_cuda_ctx *cx, float *w, const float *g, float *v, int64_t n,
                                     float lr, float momentum, float wd) {
    enum dse_status st = step_state(cx);
    if (st || n <= 0) return st;
    DSE_CUDA_TRY(cx, NULL, dse_cuk_sgd_tallied(cx->impl->stream, w, g, v, n, lr, momentum, wd, cx->impl->tally));
    return DSE_OK;
}

enum dse_status dse_cuda_tally_take(struct dse_cuda_ctx *cx, struct dse_step_tally *out, int reset,
                                    struct dse_err *err) {
    memset(out, 0, sizeof *out);
    out->diverged_at = -1;
    enum dse_status st = step_state(cx);
    if (st) return dse_cuda_report(cx, st, err);
    struct dse_cuda_impl *m = cx->impl;
    struct dse_cuk_tally t;
    cudaError_t e = cudaMemcpyAsync(&t, m->tally, sizeof t, cudaMemcpyDeviceToHost, m->stream);
    if (e == cudaSuccess && reset) e = dse_cuk_tally_reset(m->stream, m->tally);
    if (e == cudaSuccess) e = cudaStreamSynchronize(m->stream);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return dse_cuda_report(cx, dse_cuda_fail(cx, NULL, DSE_ERR_CUDA, "reading the step tally: %s: %s",
                                                 cudaGetErrorName(e), cudaGetErrorString(e)), err);
    }
    out->loss_sum = t.loss_sum;
    out->steps = t.steps;
    out->diverged_at = t.diverged_at;
    out->clipped = t.clipped;
    return DSE_OK;
}

/* ---- double-buffered input ----------------------------------------------------------------- */

static enum dse_status slot_check(struct dse_cuda_ctx *cx, int slot) {
    if (slot < 0 || slot > 1) return dse_cuda_fail(cx, NULL, DSE_ERR_INTERNAL, "input slot %d is not 0 or 1", slot);
    return step_state(cx);
}

static enum dse_status slot_upload(struct dse_cuda_ctx *cx, int slot, void *dst, const void *src, size_t bytes) {
    enum dse_status st = slot_check(cx, slot);
    if (st) return st;
    struct dse_cuda_impl *m = cx->impl;
    if (m->released_once[slot]) DSE_CUDA_TRY(cx, NULL, cudaStreamWaitEvent(m->copy, m->released[slot], 0));
    DSE_CUDA_TRY(cx, NULL, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, m->copy));
    DSE_CUDA_TRY(cx, NULL, cudaEventRecord(m->uploaded[slot], m->copy));
    DSE_CUDA_TRY(cx, NULL, cudaStreamWaitEvent(m->stream, m->uploaded[slot], 0));
    return DSE_OK;
}

enum dse_status dse_cuda_slot_upload(struct dse_cuda_ctx *cx, int slot, void *dst, const void *src, size_t bytes,
                                     struct dse_err *err) {
    enum dse_status st = slot_upload(cx, slot, dst, src, bytes);
    return st ? dse_cuda_report(cx, st, err) : DSE_OK;
}

static enum dse_status slot_release(struct dse_cuda_ctx *cx, int slot) {
    enum dse_status st = slot_check(cx, slot);
    if (st) return st;
    DSE_CUDA_TRY(cx, NULL, cudaEventRecord(cx->impl->released[slot], cx->impl->stream));
    cx->impl->released_once[slot] = 1;
    return DSE_OK;
}

enum dse_status dse_cuda_slot_release(struct dse_cuda_ctx *cx, int slot, struct dse_err *err) {
    enum dse_status st = slot_release(cx, slot);
    return st ? dse_cuda_report(cx, st, err) : DSE_OK;
}

static enum dse_status slot_wait_host(struct dse_cuda_ctx *cx, int slot) {
    enum dse_status st = slot_check(cx, slot);
    if (st) return st;
    DSE_CUDA_TRY(cx, NULL, cudaEventSynchronize(cx->impl->uploaded[slot])); /* never recorded: returns at once */
    return DSE_OK;
}

enum dse_status dse_cuda_slot_wait_host(struct dse_cuda_ctx *cx, int slot, struct dse_err *err) {
    enum dse_status st = slot_wait_host(cx, slot);
    return st ? dse_cuda_report(cx, st, err) : DSE_OK;
}
