/* tensor.c: float32 NCHW tensors: allocation, wrapping borrowed memory, channel views
 * (how concat becomes free), fills. The layout rules are in engine/engine.h. */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

#define ALIGN 64

/* aligned_alloc needs a size that is a multiple of the alignment. Zeroed. */
static float *alloc_floats(int64_t count) {
    size_t bytes = ((size_t)count * sizeof(float) + ALIGN - 1) / ALIGN * ALIGN;
    float *p = aligned_alloc(ALIGN, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

enum dse_status dse_tensor_init(struct dse_tensor *t, int n, int c, int h, int w, unsigned flags,
                                struct dse_err *err) {
    memset(t, 0, sizeof *t);
    if (n < 1 || c < 1 || h < 1 || w < 1)
        return dse_err_set(err, DSE_ERR_SHAPE, NULL, 0, "tensor %dx%dx%dx%d: every dimension must be >= 1",
                           n, c, h, w);
    int64_t img = (int64_t)c * h * w;
    /* Keep byte counts well inside size_t and int64 (2^40 values = 4 TiB). */
    if ((int64_t)c * h > ((int64_t)1 << 40) || img > ((int64_t)1 << 40) / n)
        return dse_err_set(err, DSE_ERR_SHAPE, NULL, 0, "tensor %dx%dx%dx%d is too large", n, c, h, w);
    t->n = n, t->c = c, t->h = h, t->w = w;
    t->stride_n = img;
    t->mem = DSE_MEM_HOST;
    t->data = alloc_floats(img * n);
    if (!t->data) goto nomem;
    t->owns = DSE_TENSOR_OWNS_DATA;
    if (flags & DSE_TENSOR_GRAD) {
        t->grad = alloc_floats(img * n);
        if (!t->grad) goto nomem;
        t->owns |= DSE_TENSOR_OWNS_GRAD;
    }
    return DSE_OK;
nomem:
    dse_tensor_deinit(t);
    return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a %dx%dx%dx%d tensor", n, c, h, w);
}

void dse_tensor_deinit(struct dse_tensor *t) {
    if (!t) return;
    DSE_ASSERT(t->mem == DSE_MEM_HOST || t->owns == 0);
    if (t->owns & DSE_TENSOR_OWNS_DATA) free(t->data);
    if (t->owns & DSE_TENSOR_OWNS_GRAD) free(t->grad);
    memset(t, 0, sizeof *t);
}

enum dse_status dse_tensor_new(int n, int c, int h, int w, unsigned flags, struct dse_tensor **out,
                               struct dse_err *err) {
    *out = NULL;
    struct dse_tensor *t = malloc(sizeof *t);
    if (!t) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a tensor");
    enum dse_status st = dse_tensor_init(t, n, c, h, w, flags, err);
    if (st) {
        free(t);
        return st;
    }
    *out = t;
    return DSE_OK;
}

void dse_tensor_free(struct dse_tensor *t) {
    if (!t) return;
    dse_tensor_deinit(t);
    free(t);
}

enum dse_status dse_tensor_alloc_grad(struct dse_tensor *t, struct dse_err *err) {
    DSE_ASSERT(t->mem == DSE_MEM_HOST && (t->owns & DSE_TENSOR_OWNS_DATA) && !t->grad);
    t->grad = alloc_floats(t->stride_n * t->n);
    if (!t->grad)
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a %dx%dx%dx%d gradient",
                           t->n, t->c, t->h, t->w);
    t->owns |= DSE_TENSOR_OWNS_GRAD;
    return DSE_OK;
}

void dse_tensor_wrap(struct dse_tensor *t, int n, int c, int h, int w, int64_t stride_n, float *data,
                     float *grad, enum dse_mem mem) {
    DSE_ASSERT(n >= 1 && c >= 1 && h >= 1 && w >= 1 && stride_n >= (int64_t)c * h * w);
    t->n = n, t->c = c, t->h = h, t->w = w;
    t->stride_n = stride_n;
    t->data = data;
    t->grad = grad;
    t->mem = mem;
    t->owns = 0;
    t->bf16 = 0;
    t->grad16 = 0, t->gsum = NULL, t->gsum_ld = 0;
}

void dse_tensor_view_channels(struct dse_tensor *v, const struct dse_tensor *parent, int c0, int c) {
    DSE_ASSERT(c0 >= 0 && c >= 1 && c0 + c <= parent->c);
    int64_t off = (int64_t)c0 * parent->h * parent->w;
    dse_tensor_wrap(v, parent->n, c, parent->h, parent->w, parent->stride_n, parent->data + off,
                    parent->grad ? parent->grad + off : NULL, parent->mem);
}

int64_t dse_tensor_count(const struct dse_tensor *t) { return (int64_t)t->n * t->c * t->h * t->w; }

int64_t dse_tensor_image(const struct dse_tensor *t) { return (int64_t)t->c * t->h * t->w; }

int dse_tensor_contiguous(const struct dse_tensor *t) { return t->stride_n == dse_tensor_image(t); }

static void fill(float *p, const struct dse_tensor *t, float v) {
    int64_t img = dse_tensor_image(t);
    for (int i = 0; i < t->n; i++) {
        float *q = p + i * t->stride_n;
        for (int64_t j = 0; j < img; j++) q[j] = v;
    }
}

void dse_tensor_fill(struct dse_tensor *t, float v) {
    DSE_ASSERT(t->mem == DSE_MEM_HOST);
    fill(t->data, t, v);
}

void dse_tensor_zero_grad(struct dse_tensor *t) {
    DSE_ASSERT(t->mem == DSE_MEM_HOST);
    if (!t->grad) return;
    if (dse_tensor_contiguous(t))
        memset(t->grad, 0, (size_t)dse_tensor_count(t) * sizeof(float));
    else
        fill(t->grad, t, 0.0f);
}
