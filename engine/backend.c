/* backend.c: the engine's backend registry (docs/conventions.md#one-fact-one-owner), the only file
 * with #ifdef DSE_CUDA: which backends this build has, device names ("cpu", "cuda:1"),
 * and, in a build without CUDA, the CUDA backend's public functions (engine/cuda/cuda.h)
 * answering DSE_ERR_UNSUPPORTED, so callers (engine/model.c, the CLI, tests) are the
 * same code in every build. CMake defines DSE_CUDA for this file when it builds
 * engine/cuda/ (cmake/cuda.cmake). */
#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/cuda.h"

const char *dse_engine_backends(void) {
#ifdef DSE_CUDA
    return "cpu cuda";
#else
    return "cpu";
#endif
}

enum dse_status dse_device_parse(const char *s, struct dse_device *out, struct dse_err *err) {
    memset(out, 0, sizeof *out);
    if (s && strcmp(s, "cpu") == 0) return DSE_OK;
    if (s && strncmp(s, "cuda", 4) == 0) {
        const char *p = s + 4;
        long index = 0;
        if (*p == ':') {
            char *end;
            index = strtol(p + 1, &end, 10);
            if (end == p + 1 || *end || index < 0 || index > 1023) p = NULL;
        } else if (*p) {
            p = NULL;
        }
        if (p) {
            out->kind = DSE_DEVICE_CUDA;
            out->index = (int)index;
            return DSE_OK;
        }
    }
    return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "device '%s' is not known; expected cpu, cuda or cuda:N",
                       s ? s : "");
}

const char *dse_device_str(const struct dse_device *d, char *buf, int size) {
    if (d->kind == DSE_DEVICE_CUDA)
        snprintf(buf, (size_t)size, "cuda:%d", d->index);
    else
        snprintf(buf, (size_t)size, "cpu");
    return buf;
}

static const char *const cuda_math_names[DSE_CUDA_MATH_COUNT] = {
    [DSE_CUDA_MATH_FP32] = "fp32", [DSE_CUDA_MATH_TF32] = "tf32", [DSE_CUDA_MATH_FP16] = "fp16",
    [DSE_CUDA_MATH_BF16] = "bf16",
};

const char *dse_cuda_math_str(enum dse_cuda_math m) {
    return dse_name_of(cuda_math_names, DSE_CUDA_MATH_COUNT, (int)m, "?");
}

enum dse_status dse_cuda_math_parse(const char *s, enum dse_cuda_math *out, struct dse_err *err) {
    int m;
    enum dse_status st = dse_name_parse(cuda_math_names, DSE_CUDA_MATH_COUNT, "precision", s, &m, err);
    if (st == DSE_OK) *out = (enum dse_cuda_math)m;
    return st;
}

#ifndef DSE_CUDA
/* ---- a build without CUDA -------------------------------------------------------------- */

#define NO_CUDA "this dse was built without the CUDA backend (CMake found no CUDA toolkit and cuDNN; see docs/gpu.md)"

int dse_cuda_device_count(char *why, int size) {
    if (why && size > 0) snprintf(why, (size_t)size, "built without CUDA");
    return 0;
}

const char *dse_cuda_versions(char *buf, int size) {
    snprintf(buf, (size_t)size, "built without CUDA");
    return buf;
}

enum dse_status dse_cuda_device_info(int device, char *buf, int size, struct dse_err *err) {
    if (buf && size > 0) buf[0] = '\0';
    return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "%s", NO_CUDA);
}

enum dse_status dse_cuda_mem_info(int device, size_t *free_bytes, size_t *total_bytes, struct dse_err *err) {
    (void)device;
    *free_bytes = *total_bytes = 0;
    return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "%s", NO_CUDA);
}

enum dse_status dse_cuda_mp_clear(struct dse_cuda_ctx *cx, struct dse_err *err) {
    (void)cx;
    return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "%s", NO_CUDA);
}

enum dse_status dse_cuda_mp_step(struct dse_cuda_ctx *cx, int *skip, struct dse_err *err) {
    (void)cx;
    *skip = 0;
    return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "%s", NO_CUDA);
}

enum dse_status dse_cuda_ctx_init(struct dse_cuda_ctx *cx, int device, uint64_t seed, struct dse_err *err) {
    memset(cx, 0, sizeof *cx);
    dse_err_set(&cx->err, DSE_ERR_UNSUPPORTED, NULL, 0, "%s", NO_CUDA);
    if (err) *err = cx->err;
    return DSE_ERR_UNSUPPORTED;
}

void dse_cuda_ctx_deinit(struct dse_cuda_ctx *cx) {
    if (cx) memset(cx, 0, sizeof *cx);
}

/* Nothing below can be reached without a ctx, which cannot be made: each says so. */
static enum dse_status no_cuda(struct dse_cuda_ctx *cx, struct dse_err *err) {
    struct dse_err e;
    dse_err_set(&e, DSE_ERR_UNSUPPORTED, NULL, 0, "%s", NO_CUDA);
    if (cx) cx->err = e;
    if (err) *err = e;
    return DSE_ERR_UNSUPPORTED;
}

enum dse_status dse_cuda_sync(struct dse_cuda_ctx *cx, struct dse_err *err) { return no_cuda(cx, err); }

enum dse_status dse_cuda_alloc(struct dse_cuda_ctx *cx, size_t bytes, void **out, struct dse_err *err) {
    *out = NULL;
    return no_cuda(cx, err);
}

void dse_cuda_free(struct dse_cuda_ctx *cx, void *p) {}

enum dse_status dse_cuda_host_alloc(struct dse_cuda_ctx *cx, size_t bytes, void **out, struct dse_err *err) {
    *out = NULL;
    return no_cuda(cx, err);
}

void dse_cuda_host_free(struct dse_cuda_ctx *cx, void *p) {}

enum dse_status dse_cuda_upload(struct dse_cuda_ctx *cx, void *dst, const void *src, size_t bytes,
                                struct dse_err *err) {
    return no_cuda(cx, err);
}

enum dse_status dse_cuda_download(struct dse_cuda_ctx *cx, void *dst, const void *src, size_t bytes,
                                  struct dse_err *err) {
    return no_cuda(cx, err);
}

enum dse_status dse_cuda_zero(struct dse_cuda_ctx *cx, void *dst, size_t bytes, struct dse_err *err) {
    return no_cuda(cx, err);
}

enum dse_status dse_cuda_tensor_upload(struct dse_cuda_ctx *cx, struct dse_tensor *dev,
                                       const struct dse_tensor *host, int with_grad, struct dse_err *err) {
    return no_cuda(cx, err);
}

enum dse_status dse_cuda_tensor_download(struct dse_cuda_ctx *cx, struct dse_tensor *host,
                                         const struct dse_tensor *dev, int with_grad, struct dse_err *err) {
    return no_cuda(cx, err);
}

enum dse_status dse_cuda_node_prepare(struct dse_cuda_ctx *cx, struct dse_node *n, struct dse_err *err) {
    return no_cuda(cx, err);
}

void dse_cuda_node_release(struct dse_cuda_ctx *cx, struct dse_node *n) {}

enum dse_status dse_cuda_forward(struct dse_cuda_ctx *cx, struct dse_node *n) { return no_cuda(cx, NULL); }
enum dse_status dse_cuda_backward(struct dse_cuda_ctx *cx, struct dse_node *n) { return no_cuda(cx, NULL); }

enum dse_status dse_cuda_conv2d_choose(struct dse_cuda_ctx *cx, struct dse_node *n,
                                       struct dse_cuda_conv_choice *out) {
    return no_cuda(cx, NULL);
}

const char *dse_cuda_conv_algo_str(int direction, int algo) { return "?"; }

enum dse_status dse_cuda_conv_cache_load(struct dse_cuda_ctx *cx, const char *path, struct dse_cuda_conv_load *out,
                                         struct dse_err *err) {
    memset(out, 0, sizeof *out);
    return no_cuda(cx, err);
}

enum dse_status dse_cuda_conv_cache_save(struct dse_cuda_ctx *cx, const char *path, struct dse_err *err) {
    return no_cuda(cx, err);
}

enum dse_status dse_cuda_sgd(struct dse_cuda_ctx *cx, float *w, const float *g, float *v, int64_t n, float lr,
                             float momentum, float wd, float gscale) {
    return no_cuda(cx, NULL);
}

enum dse_status dse_cuda_sumsq(struct dse_cuda_ctx *cx, const float *p, int64_t n, double *out) {
    *out = 0;
    return no_cuda(cx, NULL);
}

enum dse_status dse_cuda_nonfinite(struct dse_cuda_ctx *cx, const float *p, int64_t n, int *out) {
    *out = 0;
    return no_cuda(cx, NULL);
}
enum dse_status dse_cuda_tally_loss(struct dse_cuda_ctx *cx, const float *loss) { return no_cuda(cx, NULL); }
enum dse_status dse_cuda_tally_scale(struct dse_cuda_ctx *cx, const float *g, int64_t n, double clip_norm) {
    return no_cuda(cx, NULL);
}
enum dse_status dse_cuda_sgd_tallied(struct dse_cuda_ctx *cx, float *w, const float *g, float *v, int64_t n,
                                     float lr, float momentum, float wd) {
    return no_cuda(cx, NULL);
}
enum dse_status dse_cuda_tally_take(struct dse_cuda_ctx *cx, struct dse_step_tally *out, int reset,
                                    struct dse_err *err) {
    memset(out, 0, sizeof *out);
    out->diverged_at = -1;
    return no_cuda(cx, err);
}
enum dse_status dse_cuda_slot_upload(struct dse_cuda_ctx *cx, int slot, void *dst, const void *src, size_t bytes,
                                     struct dse_err *err) {
    return no_cuda(cx, err);
}
enum dse_status dse_cuda_slot_release(struct dse_cuda_ctx *cx, int slot, struct dse_err *err) {
    return no_cuda(cx, err);
}
enum dse_status dse_cuda_slot_wait_host(struct dse_cuda_ctx *cx, int slot, struct dse_err *err) {
    return no_cuda(cx, err);
}
#endif
