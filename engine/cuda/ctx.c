/* ctx.c: the CUDA backend's context (stream, cuDNN and cuBLAS handles, workspace),
 * device memory and tensor copies, per-node state, SGD and the non-finite check. Below
 * the kernels: conv.c (cuDNN convolution, conv_graph.c its graph-API plans) and ops.c
 * (everything else) call it, it calls none of them; the kernel table and the dispatch
 * sit above them in table.c. Error messages: fail.c. Interface: engine/cuda/cuda.h. */
#include "engine/cuda/cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/cuda_impl.h"

#define ALIGN 256 /* device pieces: cuDNN and cuBLAS like 128-byte alignment or more */

const float dse_cuda_alpha1 = 1.0f, dse_cuda_beta0 = 0.0f;

/* ---- cuBLAS, loaded at run time ------------------------------------------------------- */

int dse_cublas_open(struct dse_cublas *b, char *why, int size) {
    memset(b, 0, sizeof *b);
    char soname[32];
    snprintf(soname, sizeof soname, "libcublas.so.%d", CUBLAS_VER_MAJOR);
#ifndef DSE_CUBLAS_LIBRARY
#define DSE_CUBLAS_LIBRARY "libcublas.so"
#endif
    const char *names[] = { DSE_CUBLAS_LIBRARY, soname, "libcublas.so" };
    for (int i = 0; i < DSE_ARRAY_LEN(names) && !b->lib; i++) b->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!b->lib) {
        const char *e = dlerror();
        snprintf(why, (size_t)size, "cannot load cuBLAS (%s, %s): %s", DSE_CUBLAS_LIBRARY, soname, e ? e : "?");
        return -1;
    }
    /* dlsym's void * to a function pointer: what POSIX requires to work. */
#define SYM(f) (*(void **)&b->f = dlsym(b->lib, #f)) == NULL
    if (SYM(cublasCreate_v2) || SYM(cublasDestroy_v2) || SYM(cublasSetStream_v2) || SYM(cublasSetMathMode) ||
        SYM(cublasSgemm_v2) || SYM(cublasGetStatusName) || SYM(cublasGetProperty)) {
        snprintf(why, (size_t)size, "cuBLAS at %s lacks a function this build needs", DSE_CUBLAS_LIBRARY);
        dse_cublas_close(b);
        return -1;
    }
#undef SYM
    return 0;
}

void dse_cublas_close(struct dse_cublas *b) {
    if (b->lib) dlclose(b->lib);
    memset(b, 0, sizeof *b);
}

/* ---- devices ------------------------------------------------------------------------- */

int dse_cuda_device_count(char *why, int size) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        if (why && size > 0)
            snprintf(why, (size_t)size, "cudaGetDeviceCount: %s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
        (void)cudaGetLastError();
        return 0;
    }
    if (count == 0 && why && size > 0) snprintf(why, (size_t)size, "cudaGetDeviceCount: 0 devices");
    return count;
}

static void version_str(int v, int scale, char *buf, size_t size) {
    /* CUDA: 1000 * major + 10 * minor; cuDNN 9: 10000 * major + 100 * minor + patch. */
    if (scale == 1000)
        snprintf(buf, size, "%d.%d", v / 1000, v % 1000 / 10);
    else
        snprintf(buf, size, "%d.%d.%d", v / 10000, v % 10000 / 100, v % 100);
}

const char *dse_cuda_versions(char *buf, int size) {
    int drv = 0, rt = 0, cb[3] = { 0, 0, 0 };
    (void)cudaDriverGetVersion(&drv);
    (void)cudaRuntimeGetVersion(&rt);
    (void)cudaGetLastError();
    char sd[32] = "none", sr[32], sc[32], sh[32], blas[200];
    if (drv) version_str(drv, 1000, sd, sizeof sd);
    version_str(rt, 1000, sr, sizeof sr);
    version_str((int)cudnnGetVersion(), 10000, sc, sizeof sc);
    version_str(CUDNN_VERSION, 10000, sh, sizeof sh);
    struct dse_cublas b;
    char why[160];
    if (dse_cublas_open(&b, why, (int)sizeof why) == 0) {
        (void)b.cublasGetProperty(MAJOR_VERSION, &cb[0]);
        (void)b.cublasGetProperty(MINOR_VERSION, &cb[1]);
        (void)b.cublasGetProperty(PATCH_LEVEL, &cb[2]);
        dse_cublas_close(&b);
        snprintf(blas, sizeof blas, "%d.%d.%d", cb[0], cb[1], cb[2]);
    } else {
        snprintf(blas, sizeof blas, "none (%s)", why);
    }
    snprintf(buf, (size_t)size, "driver=%s runtime=%s cudnn=%s cudnn_headers=%s cublas=%s", sd, sr, sc, sh, blas);
    return buf;
}

enum dse_status dse_cuda_device_info(int device, char *buf, int size, struct dse_err *err) {
    struct cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return dse_err_set(err, DSE_ERR_CUDA, NULL, 0, "cudaGetDeviceProperties: %s: %s (device %d)",
                           cudaGetErrorName(e), cudaGetErrorString(e), device);
    }
    char v[300];
    snprintf(buf, (size_t)size, "device=%d name=\"%s\" cc=%d.%d sms=%d mem_gib=%.1f %s", device, p.name, p.major,
             p.minor, p.multiProcessorCount, (double)p.totalGlobalMem / (1u << 30), dse_cuda_versions(v, sizeof v));
    return DSE_OK;
}

enum dse_status dse_cuda_mem_info(int device, size_t *free_bytes, size_t *total_bytes, struct dse_err *err) {
    *free_bytes = *total_bytes = 0;
    char why[256] = "";
    const int count = dse_cuda_device_count(why, (int)sizeof why);
    if (device < 0 || device >= count)
        return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "no CUDA device %d (%d found%s%s)", device, count,
                           why[0] ? ": " : "", why);
    int cur = -1;
    cudaError_t e = cudaGetDevice(&cur);
    if (e == cudaSuccess && cur != device) e = cudaSetDevice(device);
    if (e == cudaSuccess) e = cudaMemGetInfo(free_bytes, total_bytes);
    if (e == cudaSuccess && cur >= 0 && cur != device) e = cudaSetDevice(cur);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return dse_err_set(err, DSE_ERR_CUDA, NULL, 0, "cudaMemGetInfo: %s: %s (device %d)", cudaGetErrorName(e),
                           cudaGetErrorString(e), device);
    }
    return DSE_OK;
}

/* ---- context ------------------------------------------------------------------------- */

enum dse_status dse_cuda_use(struct dse_cuda_ctx *cx) {
    int cur = -1;
    DSE_CUDA_TRY(cx, NULL, cudaGetDevice(&cur));
    if (cur != cx->device) DSE_CUDA_TRY(cx, NULL, cudaSetDevice(cx->device));
    return DSE_OK;
}

static enum dse_status init_impl(struct dse_cuda_ctx *cx) {
    char why[256] = "";
    const int count = dse_cuda_device_count(why, (int)sizeof why);
    if (count == 0) return dse_cuda_fail(cx, NULL, DSE_ERR_UNSUPPORTED, "no CUDA device (%s)", why);
    if (cx->device < 0 || cx->device >= count)
        return dse_cuda_fail(cx, NULL, DSE_ERR_UNSUPPORTED, "CUDA device %d does not exist; this machine has %d "
                             "(cuda:0 to cuda:%d)", cx->device, count, count - 1);
    if (cudnnGetVersion() / 10000 != CUDNN_MAJOR)
        return dse_cuda_fail(cx, NULL, DSE_ERR_UNSUPPORTED, "cuDNN %zu found at run time; built with %d.%d",
                             cudnnGetVersion(), CUDNN_MAJOR, CUDNN_MINOR);
    struct dse_cuda_impl *m = calloc(1, sizeof *m);
    if (!m) return dse_cuda_fail(cx, NULL, DSE_ERR_NOMEM, "out of memory");
    cx->impl = m;
    DSE_CUDA_TRY(cx, NULL, cudaSetDevice(cx->device));
    DSE_CUDA_TRY(cx, NULL, cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
    DSE_CUDNN_TRY(cx, NULL, cudnnCreate(&m->cudnn));
    DSE_CUDNN_TRY(cx, NULL, cudnnSetStream(m->cudnn, m->stream));
    char why_blas[300];
    if (dse_cublas_open(&m->blas, why_blas, (int)sizeof why_blas))
        return dse_cuda_fail(cx, NULL, DSE_ERR_UNSUPPORTED, "%s", why_blas);
    DSE_CUBLAS_TRY(cx, NULL, DSE_CUBLAS(cx).cublasCreate_v2(&m->cublas));
    DSE_CUBLAS_TRY(cx, NULL, DSE_CUBLAS(cx).cublasSetStream_v2(m->cublas, m->stream));
    DSE_CUDA_TRY(cx, NULL, cudaMalloc((void **)&m->flag, sizeof(int)));
    DSE_CUDA_TRY(cx, NULL, cudaMalloc((void **)&m->mp_flag, sizeof(int)));
    DSE_CUDA_TRY(cx, NULL, cudaMalloc((void **)&m->sumsq, sizeof(double) * (DSE_SUMSQ_BLOCKS + 1)));
    DSE_CUDA_TRY(cx, NULL, cudaMemsetAsync(m->mp_flag, 0, sizeof(int), m->stream)); /* the stream does not
                                                                                 wait for the legacy one */
    DSE_CUDA_TRY(cx, NULL, cudaStreamSynchronize(m->stream));
    return DSE_OK;
}

enum dse_status dse_cuda_ctx_init(struct dse_cuda_ctx *cx, int device, uint64_t seed, struct dse_err *err) {
    memset(cx, 0, sizeof *cx);
    cx->device = device;
    cx->math = DSE_CUDA_MATH_FP32;
    cx->deterministic = 1;
    cx->ws_limit_bytes = (size_t)512 << 20;
    cx->loss_scale = DSE_LOSS_SCALE_INIT;
    const char *sync = getenv("DSE_CUDA_SYNC");
    cx->sync_each = sync && sync[0] == '1';
    cx->seed = seed;
    dse_pcg32_seed(&cx->rng, seed, 0x5eed);
    cx->dropout_rng = &cx->rng;
    enum dse_status st = init_impl(cx);
    if (st) {
        struct dse_err e = cx->err;
        dse_cuda_ctx_deinit(cx);
        if (err) *err = e;
        return st;
    }
    return DSE_OK;
}

void dse_cuda_ctx_deinit(struct dse_cuda_ctx *cx) {
    if (!cx) return;
    struct dse_cuda_impl *m = cx->impl;
    if (m) {
        (void)cudaSetDevice(cx->device);
        if (m->stream) (void)cudaStreamSynchronize(m->stream);
        if (m->cublas) (void)m->blas.cublasDestroy_v2(m->cublas);
        dse_cublas_close(&m->blas);
        for (int i = 0; m->plans && i < 3 * m->cache_n; i++) dse_cuda_plan_free(m->plans[i]); /* before the handle */
        free(m->plans);
        if (m->cudnn) (void)cudnnDestroy(m->cudnn);
        (void)cudaFree(m->ws);
        (void)cudaFree(m->flag);
        (void)cudaFree(m->mp_flag);
        (void)cudaFree(m->sumsq);
        (void)cudaFree(m->scratch16);
        (void)cudaFree(m->tally);
        for (int k = 0; k < 2; k++) {
            if (m->uploaded[k]) (void)cudaEventDestroy(m->uploaded[k]);
            if (m->released[k]) (void)cudaEventDestroy(m->released[k]);
        }
        if (m->copy) (void)cudaStreamSynchronize(m->copy), (void)cudaStreamDestroy(m->copy);
        if (m->stream) (void)cudaStreamDestroy(m->stream);
        (void)cudaGetLastError();
        free(m->cache);
        free(m->cache_line);
        free(m->pin_path);
        free(m);
    }
    memset(cx, 0, sizeof *cx);
}

static enum dse_status sync_(struct dse_cuda_ctx *cx) {
    if (!cx->impl) return dse_cuda_fail(cx, NULL, DSE_ERR_INTERNAL, "CUDA context not initialized");
    DSE_CUDA_TRY(cx, NULL, cudaStreamSynchronize(cx->impl->stream));
    return DSE_OK;
}

enum dse_status dse_cuda_sync(struct dse_cuda_ctx *cx, struct dse_err *err) {
    enum dse_status st = sync_(cx);
    return st ? dse_cuda_report(cx, st, err) : DSE_OK;
}

enum dse_status dse_cuda_workspace(struct dse_cuda_ctx *cx, const struct dse_node *n, size_t bytes, void **out) {
    struct dse_cuda_impl *m = cx->impl;
    if (bytes > m->ws_bytes) {
        size_t want = bytes > m->ws_bytes + m->ws_bytes / 4 ? bytes : m->ws_bytes + m->ws_bytes / 4;
        want = (want + ALIGN - 1) / ALIGN * ALIGN;
        DSE_CUDA_TRY(cx, n, cudaStreamSynchronize(m->stream)); /* no queued kernel still uses it */
        DSE_CUDA_TRY(cx, n, cudaFree(m->ws));
        m->ws = NULL, m->ws_bytes = 0, cx->stats.workspace_bytes = 0;
        DSE_CUDA_TRY(cx, n, cudaMalloc(&m->ws, want));
        m->ws_bytes = want, cx->stats.workspace_bytes = want;
    }
    *out = m->ws;
    return DSE_OK;
}

enum dse_status dse_cuda_desc4d(struct dse_cuda_ctx *cx, const struct dse_node *n, cudnnTensorDescriptor_t d,
                                int N, int C, int H, int W, int64_t stride_n) {
    if (stride_n > INT32_MAX || (int64_t)N * stride_n > ((int64_t)1 << 40))
        return dse_cuda_fail(cx, n, DSE_ERR_UNSUPPORTED, "tensor %dx%dx%dx%d with image stride %lld is too large "
                             "for cuDNN's int strides", N, C, H, W, (long long)stride_n);
    DSE_CUDNN_TRY(cx, n, cudnnSetTensor4dDescriptorEx(d, CUDNN_DATA_FLOAT, N, C, H, W, (int)stride_n, H * W, W, 1));
    return DSE_OK;
}

/* ---- memory ---------------------------------------------------------------------------- */

static enum dse_status alloc_(struct dse_cuda_ctx *cx, size_t bytes, void **out) {
    *out = NULL;
    enum dse_status st = dse_cuda_use(cx);
    if (st) return st;
    void *p = NULL;
    bytes = (bytes ? bytes + ALIGN - 1 : ALIGN) / ALIGN * ALIGN;
    DSE_CUDA_TRY(cx, NULL, cudaMalloc(&p, bytes));
    cudaError_t e = cudaMemsetAsync(p, 0, bytes, cx->impl->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(cx->impl->stream);
    if (e != cudaSuccess) {
        (void)cudaFree(p);
        DSE_CUDA_TRY(cx, NULL, e);
    }
    *out = p;
    return DSE_OK;
}

enum dse_status dse_cuda_alloc(struct dse_cuda_ctx *cx, size_t bytes, void **out, struct dse_err *err) {
    enum dse_status st = alloc_(cx, bytes, out);
    return st ? dse_cuda_report(cx, st, err) : DSE_OK;
}

void dse_cuda_free(struct dse_cuda_ctx *cx, void *p) {
    if (!p) return;
    (void)dse_cuda_use(cx);
    if (cx->impl) (void)cudaStreamSynchronize(cx->impl->stream); /* no queued kernel still uses it */
    (void)cudaFree(p);
    (void)cudaGetLastError();
}

enum dse_status dse_cuda_host_alloc(struct dse_cuda_ctx *cx, size_t bytes, void **out, struct dse_err *err) {
    *out = NULL;
    enum dse_status st = dse_cuda_use(cx);
    if (st) return dse_cuda_report(cx, st, err);
    void *p = NULL;
    cudaError_t e = cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocDefault);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return dse_err_set(err, DSE_ERR_CUDA, NULL, 0, "cudaHostAlloc of %zu bytes: %s", bytes, cudaGetErrorString(e));
    }
    *out = p;
    return DSE_OK;
}

void dse_cuda_host_free(struct dse_cuda_ctx *cx, void *p) {
    if (!p) return;
    (void)dse_cuda_use(cx);
    if (cx->impl) (void)cudaStreamSynchronize(cx->impl->stream); /* no queued copy still reads it */
    if (cx->impl && cx->impl->copy) (void)cudaStreamSynchronize(cx->impl->copy); /* nor an upload (step.c) */
    (void)cudaFreeHost(p);
    (void)cudaGetLastError();
}

static enum dse_status copy_(struct dse_cuda_ctx *cx, void *dst, const void *src, size_t bytes,
                             enum cudaMemcpyKind kind) {
    enum dse_status st = dse_cuda_use(cx);
    if (st || !bytes) return st;
    DSE_CUDA_TRY(cx, NULL, cudaMemcpyAsync(dst, src, bytes, kind, cx->impl->stream));
    if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToDevice)
        DSE_CUDA_TRY(cx, NULL, cudaStreamSynchronize(cx->impl->stream));
    return DSE_OK;
}

enum dse_status dse_cuda_upload(struct dse_cuda_ctx *cx, void *dst, const void *src, size_t bytes,
                                struct dse_err *err) {
    enum dse_status st = copy_(cx, dst, src, bytes, cudaMemcpyHostToDevice);
    return st ? dse_cuda_report(cx, st, err) : DSE_OK;
}

enum dse_status dse_cuda_download(struct dse_cuda_ctx *cx, void *dst, const void *src, size_t bytes,
                                  struct dse_err *err) {
    enum dse_status st = copy_(cx, dst, src, bytes, cudaMemcpyDeviceToHost);
    return st ? dse_cuda_report(cx, st, err) : DSE_OK;
}

static enum dse_status zero_(struct dse_cuda_ctx *cx, void *dst, size_t bytes) {
    enum dse_status st = dse_cuda_use(cx);
    if (st || !bytes) return st;
    DSE_CUDA_TRY(cx, NULL, cudaMemsetAsync(dst, 0, bytes, cx->impl->stream));
    return DSE_OK;
}

enum dse_status dse_cuda_zero(struct dse_cuda_ctx *cx, void *dst, size_t bytes, struct dse_err *err) {
    enum dse_status st = zero_(cx, dst, bytes);
    return st ? dse_cuda_report(cx, st, err) : DSE_OK;
}

/* One 2-D copy of a tensor's n images of c*h*w floats between two image strides. */
static enum dse_status copy_images(struct dse_cuda_ctx *cx, float *dst, int64_t sd, const float *src, int64_t ss,
                                   const struct dse_tensor *t, enum cudaMemcpyKind kind) {
    const size_t width = (size_t)dse_tensor_image(t) * sizeof(float);
    DSE_CUDA_TRY(cx, NULL, cudaMemcpy2DAsync(dst, (size_t)sd * sizeof(float), src, (size_t)ss * sizeof(float),
                                             width, (size_t)t->n, kind, cx->impl->stream));
    return DSE_OK;
}

static enum dse_status tensor_copy(struct dse_cuda_ctx *cx, struct dse_tensor *dst, const struct dse_tensor *src,
                                   int with_grad, enum cudaMemcpyKind kind) {
    if (dst->n != src->n || dst->c != src->c || dst->h != src->h || dst->w != src->w)
        return dse_cuda_fail(cx, NULL, DSE_ERR_SHAPE, "tensor copy between %dx%dx%dx%d and %dx%dx%dx%d", src->n,
                             src->c, src->h, src->w, dst->n, dst->c, dst->h, dst->w);
    const enum dse_mem want_dst = kind == cudaMemcpyHostToDevice ? DSE_MEM_DEVICE : DSE_MEM_HOST;
    if (dst->mem != want_dst || src->mem == want_dst)
        return dse_cuda_fail(cx, NULL, DSE_ERR_INTERNAL, "tensor copy: tensors are in the wrong memory");
    enum dse_status st = dse_cuda_use(cx);
    if (!st) st = copy_images(cx, dst->data, dst->stride_n, src->data, src->stride_n, src, kind);
    if (!st && with_grad && dst->grad && src->grad)
        st = copy_images(cx, dst->grad, dst->stride_n, src->grad, src->stride_n, src, kind);
    if (st) return st;
    DSE_CUDA_TRY(cx, NULL, cudaStreamSynchronize(cx->impl->stream));
    return DSE_OK;
}

enum dse_status dse_cuda_tensor_upload(struct dse_cuda_ctx *cx, struct dse_tensor *dev,
                                       const struct dse_tensor *host, int with_grad, struct dse_err *err) {
    enum dse_status st = tensor_copy(cx, dev, host, with_grad, cudaMemcpyHostToDevice);
    return st ? dse_cuda_report(cx, st, err) : DSE_OK;
}

enum dse_status dse_cuda_tensor_download(struct dse_cuda_ctx *cx, struct dse_tensor *host,
                                         const struct dse_tensor *dev, int with_grad, struct dse_err *err) {
    enum dse_status st = tensor_copy(cx, host, dev, with_grad, cudaMemcpyDeviceToHost);
    return st ? dse_cuda_report(cx, st, err) : DSE_OK;
}

/* ---- nodes ----------------------------------------------------------------------------- */

static size_t piece(int64_t count, size_t size) {
    return ((size_t)count * size + ALIGN - 1) / ALIGN * ALIGN;
}

static int all_on_device(const struct dse_node *n) {
    const struct dse_tensor *ts[] = { n->out, n->weight, n->bias, n->run_mean, n->run_var };
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i]->mem != DSE_MEM_DEVICE) return 0;
    for (int i = 0; i < DSE_ARRAY_LEN(ts); i++)
        if (ts[i] && ts[i]->mem != DSE_MEM_DEVICE) return 0;
    return 1;
}

static enum dse_status make_descriptors(struct dse_cuda_ctx *cx, struct dse_node *n, struct dse_cuda_node *d) {
    int x = 0, y = 0, b = 0, w = 0, conv = 0;
    switch (n->op) {
    case DSE_OP_CONV2D:       x = y = b = w = conv = 1; break;
    case DSE_OP_FC:           y = b = 1; break;
    default: break;
    }
    if (x && !d->x) DSE_CUDNN_TRY(cx, n, cudnnCreateTensorDescriptor(&d->x));
    if (y && !d->y) DSE_CUDNN_TRY(cx, n, cudnnCreateTensorDescriptor(&d->y));
    if (b && !d->b) DSE_CUDNN_TRY(cx, n, cudnnCreateTensorDescriptor(&d->b));
    if (w && !d->w) DSE_CUDNN_TRY(cx, n, cudnnCreateFilterDescriptor(&d->w));
    if (conv && !d->conv) DSE_CUDNN_TRY(cx, n, cudnnCreateConvolutionDescriptor(&d->conv));
    return DSE_OK;
}

static enum dse_status prepare_(struct dse_cuda_ctx *cx, struct dse_node *n) {
    enum dse_status st = dse_node_check(n, &cx->err);
    if (st) return st;
    if (!cx->impl) return dse_cuda_fail(cx, n, DSE_ERR_INTERNAL, "CUDA context not initialized");
    if (!all_on_device(n))
        return dse_cuda_fail(cx, n, DSE_ERR_INTERNAL, "a tensor of the node is in host memory; the CUDA backend "
                             "runs on device tensors only");
    if (n->st.block && n->st.mem != DSE_MEM_DEVICE)
        return dse_cuda_fail(cx, n, DSE_ERR_INTERNAL, "the node has CPU op state; release it first");
    if ((st = dse_cuda_use(cx))) return st;
    struct dse_cuda_node *d = dse_cuda_dev(n);
    if (!d) {
        if (!(d = calloc(1, sizeof *d))) return dse_cuda_fail(cx, n, DSE_ERR_NOMEM, "out of memory");
        n->dev = d;
    }
    if ((st = make_descriptors(cx, n, d))) return st;
    /* The pieces both backends keep (dse_node_state_plan), then the device's own: the
     * labels softmax_xent reads on the device, batchnorm backward's per-channel means. */
    const struct dse_tensor *x = n->in[0];
    struct dse_state_plan plan;
    const size_t s_labels = n->op == DSE_OP_SOFTMAX_XENT ? piece(x->n, sizeof(int32_t)) : 0;
    const size_t s_ab = n->op == DSE_OP_BATCHNORM ? piece(2 * (int64_t)x->c, sizeof(float)) : 0;
    const size_t bytes = dse_node_state_plan(n, ALIGN, &plan) + s_labels + s_ab;
    if (bytes > n->st.bytes) {
        if (n->st.block) {
            DSE_CUDA_TRY(cx, n, cudaStreamSynchronize(cx->impl->stream));
            DSE_CUDA_TRY(cx, n, cudaFree(n->st.block));
            cx->stats.state_bytes -= n->st.bytes;
        }
        memset(&n->st, 0, sizeof n->st);
        void *block = NULL;
        DSE_CUDA_TRY(cx, n, cudaMalloc(&block, bytes));
        n->st.block = block;
        n->st.bytes = bytes;
        n->st.mem = DSE_MEM_DEVICE;
        cx->stats.state_bytes += bytes;
        DSE_CUDA_TRY(cx, n, cudaMemsetAsync(block, 0, bytes, cx->impl->stream));
    }
    if (!n->st.block) return DSE_OK; /* an op without state */
    char *p = dse_node_state_carve(n, n->st.block, &plan);
    d->labels    = s_labels ? (int32_t *)p : NULL, p += s_labels;
    d->ab        = s_ab ? (float *)p : NULL;
    return DSE_OK;
}

enum dse_status dse_cuda_node_prepare(struct dse_cuda_ctx *cx, struct dse_node *n, struct dse_err *err) {
    enum dse_status st = prepare_(cx, n);
    return st ? dse_cuda_report(cx, st, err) : DSE_OK;
}

void dse_cuda_node_release(struct dse_cuda_ctx *cx, struct dse_node *n) {
    if (!n) return;
    struct dse_cuda_node *d = dse_cuda_dev(n);
    if (cx->impl) (void)dse_cuda_use(cx);
    if (d) {
        if (d->x) (void)cudnnDestroyTensorDescriptor(d->x);
        if (d->y) (void)cudnnDestroyTensorDescriptor(d->y);
        if (d->b) (void)cudnnDestroyTensorDescriptor(d->b);
        if (d->w) (void)cudnnDestroyFilterDescriptor(d->w);
        if (d->conv) (void)cudnnDestroyConvolutionDescriptor(d->conv);
        free(d);
        n->dev = NULL;
    }
    if (n->st.mem == DSE_MEM_DEVICE && n->st.block) {
        if (cx->impl) (void)cudaStreamSynchronize(cx->impl->stream); /* no queued kernel still uses it */
        (void)cudaFree(n->st.block);
        cx->stats.state_bytes -= n->st.bytes;
        memset(&n->st, 0, sizeof n->st);
    }
}

/* ---- training helpers -------------------------------------------------------------------- */

enum dse_status dse_cuda_sgd(struct dse_cuda_ctx *cx, float *w, const float *g, float *v, int64_t n, float lr,
                             float momentum, float wd, float gscale) {
    enum dse_status st = dse_cuda_use(cx);
    if (st || n <= 0) return st;
    DSE_CUDA_TRY(cx, NULL, dse_cuk_sgd(cx->impl->stream, w, g, v, n, lr, momentum, wd, gscale));
    return DSE_OK;
}

enum dse_status dse_cuda_sumsq(struct dse_cuda_ctx *cx, const float *p, int64_t n, double *out) {
    *out = 0;
    enum dse_status st = dse_cuda_use(cx);
    if (st || n <= 0) return st;
    cudaStream_t s = cx->impl->stream;
    DSE_CUDA_TRY(cx, NULL, dse_cuk_sumsq(s, p, n, cx->impl->sumsq));
    DSE_CUDA_TRY(cx, NULL, cudaMemcpyAsync(out, cx->impl->sumsq + DSE_SUMSQ_BLOCKS, sizeof(double),
                                           cudaMemcpyDeviceToHost, s));
    DSE_CUDA_TRY(cx, NULL, cudaStreamSynchronize(s));
    return DSE_OK;
}

enum dse_status dse_cuda_mp_clear(struct dse_cuda_ctx *cx, struct dse_err *err) {
    if (!dse_cuda_math_is16(cx->math)) return DSE_OK;
    enum dse_status st = cx->impl ? dse_cuda_use(cx) : dse_cuda_fail(cx, NULL, DSE_ERR_INTERNAL, "CUDA context not initialized");
    if (!st) {
        cudaError_t e = cudaMemsetAsync(cx->impl->mp_flag, 0, sizeof(int), cx->impl->stream);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            st = dse_cuda_fail(cx, NULL, DSE_ERR_CUDA, "cudaMemsetAsync: %s: %s (the overflow flag)",
                               cudaGetErrorName(e), cudaGetErrorString(e));
        }
    }
    return st ? dse_cuda_report(cx, st, err) : DSE_OK;
}

enum dse_status dse_cuda_mp_step(struct dse_cuda_ctx *cx, int *skip, struct dse_err *err) {
    *skip = 0;
    if (cx->math != DSE_CUDA_MATH_FP16) return DSE_OK; /* BF16 has float's range: an overflow there is divergence,
                                                          which the loss shows; nothing to wait for */
    struct dse_cuda_impl *m = cx->impl;
    enum dse_status st = m ? dse_cuda_use(cx) : dse_cuda_fail(cx, NULL, DSE_ERR_INTERNAL, "CUDA context not initialized");
    int bad = 0;
    cudaError_t e = cudaSuccess;
    if (!st) e = cudaMemcpyAsync(&bad, m->mp_flag, sizeof(int), cudaMemcpyDeviceToHost, m->stream);
    if (!st && e == cudaSuccess) e = cudaMemsetAsync(m->mp_flag, 0, sizeof(int), m->stream);
    if (!st && e == cudaSuccess) e = cudaStreamSynchronize(m->stream);
    if (!st && e != cudaSuccess) {
        (void)cudaGetLastError();
        st = dse_cuda_fail(cx, NULL, DSE_ERR_CUDA, "mixed precision overflow check: %s: %s", cudaGetErrorName(e),
                           cudaGetErrorString(e));
    }
    if (st) return dse_cuda_report(cx, st, err);
    cx->loss_scale = dse_loss_scale_next(cx->loss_scale, bad, &cx->mp_good_steps, DSE_LOSS_SCALE_INTERVAL);
    *skip = bad;
    cx->stats.mp_steps_skipped += bad;
    return DSE_OK;
}

enum dse_status dse_cuda_nonfinite(struct dse_cuda_ctx *cx, const float *p, int64_t n, int *out) {
    *out = 0;
    enum dse_status st = dse_cuda_use(cx);
    if (st || n <= 0) return st;
    struct dse_cuda_impl *m = cx->impl;
    DSE_CUDA_TRY(cx, NULL, cudaMemsetAsync(m->flag, 0, sizeof(int), m->stream));
    DSE_CUDA_TRY(cx, NULL, dse_cuk_nonfinite(m->stream, p, n, m->flag));
    DSE_CUDA_TRY(cx, NULL, cudaMemcpyAsync(out, m->flag, sizeof(int), cudaMemcpyDeviceToHost, m->stream));
    DSE_CUDA_TRY(cx, NULL, cudaStreamSynchronize(m->stream));
    return DSE_OK;
}
