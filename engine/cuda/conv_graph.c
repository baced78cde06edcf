/* conv_graph.c: convolutions through cuDNN's graph (backend) API, the way PyTorch drives
 * cuDNN 9. cuDNN's legacy entry points (cudnnFindConvolution*AlgorithmEx and
 * cudnnConvolution*) reach only the eight algorithms of the old enums, and pay a plan
 * lookup on the host at every call; the graph API reaches every engine cuDNN has for a
 * shape (the sm80+ xmma implicit-GEMM kernels among them) and runs a plan made once.
 *
 * For one (node shape, direction): describe the operation as a one-node operation graph,
 * ask cuDNN's heuristics (modes A and fallback) for engine configurations, read each one's
 * identity (global engine index and knob choices: struct dse_cuda_conv_engine) and build
 * the configuration again from it, drop those the ctx rules out (tensor-core math in FP32
 * mode, run-time compiled engines, workspace over the limit), finalize an execution plan
 * for each (the first MAX_TIMED that qualify, in the heuristics' order), time each on the
 * node's own buffers (CUDA events, one warm-up, median of three), and keep the fastest:
 * deterministic first when the ctx asks, as conv.c's legacy pick does. conv.c then weighs
 * it against the legacy API's best and caches the winner per shape. Every plan that runs
 * is built from its identity (dse_cuda_plan_make does the same for a choice file's entry),
 * so a run that loads pinned choices runs the plans of the run that found them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/cuda_impl.h"

enum { UID_X = 'x', UID_W = 'w', UID_Y = 'y' };
enum { MAX_CFGS = 160, MAX_TIMED = 40, TIMED_RUNS = 3 };

/* Everything one plan needs alive: cuDNN's finalized descriptors refer to the ones they
 * were made from. */
struct dse_cuda_plan {
    cudnnBackendDescriptor_t x, w, y, conv, op, graph;     /* the operation graph */
    cudnnBackendDescriptor_t engine, cfg, plan;            /* the configuration and its plan */
    cudnnBackendDescriptor_t knobs[DSE_CUDA_CONV_KNOBS];   /* its knob choices */
    int                      n_knob_desc;                  /* knobs[] made */
    struct dse_cuda_conv_engine id;                        /* engine index, knob choices */
    int                      dir;     /* 0 fwd, 1 bwd data, 2 bwd filter */
    int                      deterministic;
    size_t                   ws_bytes;
};

static void destroy(cudnnBackendDescriptor_t *d) {
    if (*d) (void)cudnnBackendDestroyDescriptor(*d);
    *d = NULL;
}

/* The configuration's descriptors (not the graph's). */
static void free_config(struct dse_cuda_plan *p) {
    destroy(&p->plan), destroy(&p->cfg);
    for (int k = 0; k < p->n_knob_desc; k++) destroy(&p->knobs[k]);
    p->n_knob_desc = 0;
    destroy(&p->engine);
}

void dse_cuda_plan_free(struct dse_cuda_plan *p) {
    if (!p) return;
    free_config(p);
    destroy(&p->graph), destroy(&p->op), destroy(&p->conv), destroy(&p->y), destroy(&p->w), destroy(&p->x);
    free(p);
}

const struct dse_cuda_conv_engine *dse_cuda_plan_config(const struct dse_cuda_plan *p) { return &p->id; }
int dse_cuda_plan_deterministic(const struct dse_cuda_plan *p) { return p->deterministic; }
size_t dse_cuda_plan_ws(const struct dse_cuda_plan *p) { return p->ws_bytes; }

static int64_t align_of(const void *a, const void *b) {
    uintptr_t v = (uintptr_t)a | (uintptr_t)b;
    return v % 16 == 0 ? 16 : v % 8 == 0 ? 8 : 4;
}

static cudnnStatus_t tensor(cudnnBackendDescriptor_t *d, int64_t uid, cudnnDataType_t dt, const int64_t dims[4],
                            const int64_t strides[4], int64_t align) {
    cudnnStatus_t s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, d);
    if (!s) s = cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    if (!s) s = cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    if (!s) s = cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    if (!s) s = cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    if (!s) s = cudnnBackendSetAttribute(*d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    if (!s) s = cudnnBackendFinalize(*d);
    return s;
}

/* The operation graph of direction dir of n's conv, in p (x, w, y, conv, op, graph). */
static cudnnStatus_t make_graph(struct dse_cuda_ctx *cx, const struct dse_node *n, int dir, struct dse_cuda_plan *p) {
    const struct dse_layer *l = n->layer;
    const struct dse_tensor *x = n->in[0], *y = n->out;
    const int64_t g = l->groups, cg = x->c / g;
    /* Mixed precision (engine/cuda/conv.c, "mixed precision"): 16-bit copies, packed, written with beta 0 and added to
     * the float tensors after. */
    const int mp = dse_cuda_math_is16(cx->math);
    const cudnnDataType_t dt = !mp ? CUDNN_DATA_FLOAT : cx->math == DSE_CUDA_MATH_FP16 ? CUDNN_DATA_HALF
                                                                                      : CUDNN_DATA_BFLOAT16;
    const int64_t sxn = mp ? dse_tensor_image(x) : x->stride_n, syn = mp ? dse_tensor_image(y) : y->stride_n;
    const int64_t xd[4] = { x->n, x->c, x->h, x->w }, xs[4] = { sxn, (int64_t)x->h * x->w, x->w, 1 };
    const int64_t wd[4] = { y->c, cg, l->kernel_h, l->kernel_w };
    const int64_t ws[4] = { cg * l->kernel_h * l->kernel_w, (int64_t)l->kernel_h * l->kernel_w, l->kernel_w, 1 };
    const int64_t yd[4] = { y->n, y->c, y->h, y->w }, ys[4] = { syn, (int64_t)y->h * y->w, y->w, 1 };
    const float *xg = dir == 1 ? x->grad : x->data, *yg = dir == 0 ? y->data : y->grad;
    const float *wg = dir == 2 ? n->weight->grad : n->weight->data;
    cudnnStatus_t s = tensor(&p->x, UID_X, dt, xd, xs, mp ? 16 : align_of(xg, x->data));
    if (!s) s = tensor(&p->w, UID_W, dt, wd, ws, mp ? 16 : align_of(wg, n->weight->data));
    if (!s) s = tensor(&p->y, UID_Y, dt, yd, ys, mp ? 16 : align_of(yg, y->data));
    if (s) return s;
    const int64_t dims = 2, dil[2] = { l->dilation_h, l->dilation_w }, str[2] = { l->stride_h, l->stride_w };
    const int64_t pad[2] = { l->pad_h, l->pad_w };
    cudnnDataType_t ct = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &p->conv);
    if (!s) s = cudnnBackendSetAttribute(p->conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct);
    if (!s) s = cudnnBackendSetAttribute(p->conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1,
                                         &mode);
    if (!s) s = cudnnBackendSetAttribute(p->conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
    if (!s) s = cudnnBackendSetAttribute(p->conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
    if (!s) s = cudnnBackendSetAttribute(p->conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, str);
    if (!s) s = cudnnBackendSetAttribute(p->conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    if (!s) s = cudnnBackendSetAttribute(p->conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    if (!s) s = cudnnBackendFinalize(p->conv);
    if (s) return s;
    /* Forward overwrites y; the backward passes accumulate into dx and dw (engine.h), but
     * into 16-bit scratch that conv.c (mixed precision) adds to the float gradients. */
    const float alpha = 1.0f, beta = dir == 0 || mp ? 0.0f : 1.0f;
    static const cudnnBackendDescriptorType_t kinds[3] = {
        CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
        CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
        CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
    };
    /* alpha, beta, conv, x, w, y attributes per direction */
    static const cudnnBackendAttributeName_t at[3][6] = {
        { CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y },
        { CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY },
        { CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY },
    };
    s = cudnnBackendCreateDescriptor(kinds[dir], &p->op);
    if (!s) s = cudnnBackendSetAttribute(p->op, at[dir][0], CUDNN_TYPE_FLOAT, 1, &alpha);
    if (!s) s = cudnnBackendSetAttribute(p->op, at[dir][1], CUDNN_TYPE_FLOAT, 1, &beta);
    if (!s) s = cudnnBackendSetAttribute(p->op, at[dir][2], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p->conv);
    if (!s) s = cudnnBackendSetAttribute(p->op, at[dir][3], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p->x);
    if (!s) s = cudnnBackendSetAttribute(p->op, at[dir][4], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p->w);
    if (!s) s = cudnnBackendSetAttribute(p->op, at[dir][5], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p->y);
    if (!s) s = cudnnBackendFinalize(p->op);
    if (s) return s;
    cudnnHandle_t h = cx->impl->cudnn;
    s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &p->graph);
    if (!s) s = cudnnBackendSetAttribute(p->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                         &p->op);
    if (!s) s = cudnnBackendSetAttribute(p->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    if (!s) s = cudnnBackendFinalize(p->graph);
    return s;
}

/* Engine configurations for the graph from heuristics mode `mode`, appended to cfgs
 * (at most MAX_CFGS in all); returns the new count. */
static int heuristics(cudnnBackendDescriptor_t graph, cudnnBackendHeurMode_t mode, cudnnBackendDescriptor_t *cfgs,
                      int have) {
    cudnnBackendDescriptor_t heur = NULL;
    int64_t count = 0;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur)) return have;
    if (cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                 &graph) ||
        cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode) ||
        cudnnBackendFinalize(heur) ||
        cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL)) {
        destroy(&heur);
        return have;
    }
    if (count > MAX_CFGS - have) count = MAX_CFGS - have;
    int made = 0;
    while (made < count && !cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[have + made]))
        made++;
    int64_t got = 0;
    if (made == 0 || cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                              made, &got, &cfgs[have]))
        got = 0;
    for (int i = (int)got; i < made; i++) destroy(&cfgs[have + i]);
    destroy(&heur);
    return have + (int)got;
}

/* The identity of a configuration the heuristics made: its engine's global index and its
 * knob choices, in order. 0, or -1 if cuDNN does not say (or it has more knobs than an
 * identity holds): such a configuration could not be pinned, and is not used. */
static int config_of(cudnnBackendDescriptor_t cfg, struct dse_cuda_conv_engine *id) {
    cudnnBackendDescriptor_t engine = NULL, k[DSE_CUDA_CONV_KNOBS];
    int64_t got = 0, count = 0;
    int made = 0, bad = 0;
    memset(id, 0, sizeof *id);
    id->id = -1;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine)) return -1;
    bad = cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got,
                                   &engine) || got != 1 ||
          cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got, &id->id) ||
          got != 1 || id->id < 0 ||
          cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                   NULL) ||
          count < 0 || count > DSE_CUDA_CONV_KNOBS;
    destroy(&engine);
    while (!bad && made < count && !cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &k[made]))
        made++;
    bad = bad || made < count ||
          (count > 0 && (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, k) ||
                         got != count));
    for (int i = 0; i < made && !bad; i++) {
        cudnnBackendKnobType_t type = CUDNN_KNOB_TYPE_COUNTS;
        int64_t value = 0, g1 = 0, g2 = 0;
        bad = cudnnBackendGetAttribute(k[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &g1, &type) ||
              cudnnBackendGetAttribute(k[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &g2, &value) ||
              g1 != 1 || g2 != 1;
        id->knob_type[i] = (int64_t)type, id->knob_value[i] = value;
    }
    for (int i = 0; i < made; i++) destroy(&k[i]);
    id->n_knobs = bad ? 0 : (int)count;
    return bad ? -1 : 0;
}

/* Build p's configuration from p->id on p->graph, in two steps (the engine's notes are read
 * in between, before a plan is finalized, which is what costs): build_engine, the engine by
 * its global index; build_plan, the knob choices, the configuration, the execution plan and
 * its workspace. On failure the status and, in *step, what failed ("engine", "knob choice",
 * "engine config", "execution plan"); the caller frees what was made (free_config). */
static cudnnStatus_t build_engine(struct dse_cuda_plan *p, const char **step) {
    *step = "engine";
    cudnnStatus_t s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &p->engine);
    if (!s) s = cudnnBackendSetAttribute(p->engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                         1, &p->graph);
    if (!s) s = cudnnBackendSetAttribute(p->engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &p->id.id);
    if (!s) s = cudnnBackendFinalize(p->engine);
    return s;
}

static cudnnStatus_t build_plan(cudnnHandle_t h, struct dse_cuda_plan *p, const char **step) {
    int64_t got = 0, wsb = 0;
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    *step = "knob choice";
    for (int k = 0; k < p->id.n_knobs && !s; k++) {
        const cudnnBackendKnobType_t type = (cudnnBackendKnobType_t)p->id.knob_type[k];
        s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &p->knobs[k]);
        if (s) break;
        p->n_knob_desc = k + 1;
        s = cudnnBackendSetAttribute(p->knobs[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &type);
        if (!s) s = cudnnBackendSetAttribute(p->knobs[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1,
                                             &p->id.knob_value[k]);
        if (!s) s = cudnnBackendFinalize(p->knobs[k]);
    }
    if (s) return s;
    *step = "engine config";
    s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &p->cfg);
    if (!s) s = cudnnBackendSetAttribute(p->cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                         &p->engine);
    if (!s && p->id.n_knobs > 0)
        s = cudnnBackendSetAttribute(p->cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                     p->id.n_knobs, p->knobs);
    if (!s) s = cudnnBackendFinalize(p->cfg);
    if (s) return s;
    *step = "execution plan";
    s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &p->plan);
    if (!s) s = cudnnBackendSetAttribute(p->plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    if (!s) s = cudnnBackendSetAttribute(p->plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p->cfg);
    if (!s) s = cudnnBackendFinalize(p->plan);
    if (!s) s = cudnnBackendGetAttribute(p->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &got,
                                         &wsb);
    if (!s && wsb < 0) s = CUDNN_STATUS_INTERNAL_ERROR;
    p->ws_bytes = (size_t)(wsb > 0 ? wsb : 0);
    return s;
}

/* Whether engine may run under the ctx's rules (its notes), and whether it is
 * deterministic. NULL if it may, else why not. */
static const char *ruled_out(struct dse_cuda_ctx *cx, cudnnBackendDescriptor_t engine, int *deterministic) {
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    int64_t nn = 0;
    if (cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                 CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &nn, notes))
        nn = 0;
    *deterministic = 1;
    for (int64_t i = 0; i < nn; i++) {
        if (notes[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC) *deterministic = 0;
        /* float data on tensor cores is TF32: not in FP32 mode; nothing reduced in precision
         * (FP16 / BF16 data: float accumulation) */
        if (cx->math == DSE_CUDA_MATH_FP32 &&
            (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE || notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS))
            return "tensor-core math, and the precision is fp32";
        if (notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION) return "reduced-precision reduction";
    }
    cudnnBackendBehaviorNote_t behave[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    if (cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                 CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &nn, behave))
        nn = 0;
    for (int64_t i = 0; i < nn; i++) /* compiled at run time: seconds per shape */
        if (behave[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) return "compiled at run time";
    return NULL;
}

/* Run plan with the three device pointers in the order x, w, y of its graph. */
static cudnnStatus_t execute(cudnnHandle_t h, cudnnBackendDescriptor_t plan, void *x, void *w, void *y, void *ws) {
    cudnnBackendDescriptor_t vp = NULL;
    int64_t uids[3] = { UID_X, UID_W, UID_Y };
    void *ptrs[3] = { x, w, y };
    cudnnStatus_t s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &vp);
    if (!s) s = cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    if (!s) s = cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
    if (!s) s = cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    if (!s) s = cudnnBackendFinalize(vp);
    if (!s) s = cudnnBackendExecute(h, plan, vp);
    if (vp) (void)cudnnBackendDestroyDescriptor(vp);
    return s;
}

enum dse_status dse_cuda_plan_run(struct dse_cuda_ctx *cx, const struct dse_node *n, struct dse_cuda_plan *p,
                                  void *x, void *w, void *y, void *ws) {
    DSE_CUDNN_TRY(cx, n, execute(cx->impl->cudnn, p->plan, x, w, y, ws));
    return DSE_OK;
}

/* Median of TIMED_RUNS runs of plan after one warm-up, in ms; < 0 if it failed to run. */
static float time_plan(struct dse_cuda_ctx *cx, cudnnBackendDescriptor_t plan, void *x, void *w, void *y, void *ws,
                       cudaEvent_t ev[TIMED_RUNS + 1]) {
    cudnnHandle_t h = cx->impl->cudnn;
    cudaStream_t s = cx->impl->stream;
    if (execute(h, plan, x, w, y, ws)) return -1.0f;
    float t[TIMED_RUNS];
    if (cudaEventRecord(ev[0], s)) return (void)cudaGetLastError(), -1.0f;
    for (int i = 0; i < TIMED_RUNS; i++)
        if (execute(h, plan, x, w, y, ws) || cudaEventRecord(ev[i + 1], s)) return (void)cudaGetLastError(), -1.0f;
    if (cudaEventSynchronize(ev[TIMED_RUNS])) return (void)cudaGetLastError(), -1.0f;
    for (int i = 0; i < TIMED_RUNS; i++)
        if (cudaEventElapsedTime(&t[i], ev[i], ev[i + 1])) return (void)cudaGetLastError(), -1.0f;
    for (int i = 1; i < TIMED_RUNS; i++) /* insertion sort: three values */
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            float v = t[j];
            t[j] = t[j - 1], t[j - 1] = v;
        }
    return t[TIMED_RUNS / 2];
}

enum dse_status dse_cuda_plan_find(struct dse_cuda_ctx *cx, const struct dse_node *n, int dir, void *x, void *w,
                                   void *y, void *ws, size_t ws_bytes, struct dse_cuda_plan **out, float *ms) {
    *out = NULL, *ms = 0.0f;
    struct dse_cuda_plan base = { .dir = dir }, cand;
    cudnnBackendDescriptor_t cfgs[MAX_CFGS];
    int ncfg = 0;
    cudaEvent_t ev[TIMED_RUNS + 1] = { 0 };
    int nev = 0;
    struct dse_cuda_plan *best = NULL;
    float best_ms = 0.0f;
    if (make_graph(cx, n, dir, &base)) goto done; /* cuDNN has no graph for it: legacy API */
    ncfg = heuristics(base.graph, CUDNN_HEUR_MODE_A, cfgs, 0);
    ncfg = heuristics(base.graph, CUDNN_HEUR_MODE_FALLBACK, cfgs, ncfg);
    while (nev < TIMED_RUNS + 1 && cudaEventCreate(&ev[nev]) == cudaSuccess) nev++;
    if (nev < TIMED_RUNS + 1) {
        (void)cudaGetLastError();
        goto done;
    }
    for (int i = 0, timed = 0; i < ncfg && timed < MAX_TIMED; i++) {
        const char *step;
        int det = 0;
        memset(&cand, 0, sizeof cand);
        cand.graph = base.graph; /* borrowed */
        /* the configuration as a choice file would rebuild it: what runs is what is pinned */
        if (config_of(cfgs[i], &cand.id) || build_engine(&cand, &step) || ruled_out(cx, cand.engine, &det) ||
            build_plan(cx->impl->cudnn, &cand, &step))
            goto skip;
        if (cand.ws_bytes > ws_bytes || cand.ws_bytes > cx->ws_limit_bytes) goto skip;
        const float t = time_plan(cx, cand.plan, x, w, y, ws, ev);
        timed++;
        if (t < 0) goto skip;
        /* Deterministic first when the ctx asks: a nondeterministic plan wins only over
         * nothing, or over another nondeterministic one. */
        const int better = !best || (cx->deterministic && det != best->deterministic ? det : t < best_ms);
        if (!better) goto skip;
        if (!best && !(best = calloc(1, sizeof *best))) goto skip;
        free_config(best);
        cand.graph = NULL, cand.deterministic = det;
        *best = cand; /* the configuration's descriptors move to best */
        best_ms = t;
        continue;
    skip:
        (void)cudaGetLastError();
        free_config(&cand);
    }
done:
    for (int i = 0; i < ncfg; i++) destroy(&cfgs[i]);
    for (int i = 0; i < nev; i++) (void)cudaEventDestroy(ev[i]);
    (void)cudaGetLastError();
    if (best) {
        best->x = base.x, best->w = base.w, best->y = base.y, best->conv = base.conv, best->op = base.op;
        best->graph = base.graph, best->dir = dir;
        *out = best, *ms = best_ms;
    } else {
        destroy(&base.graph), destroy(&base.op), destroy(&base.conv), destroy(&base.y), destroy(&base.w),
            destroy(&base.x);
    }
    return DSE_OK;
}

enum dse_status dse_cuda_plan_make(struct dse_cuda_ctx *cx, const struct dse_node *n, int dir,
                                   const struct dse_cuda_conv_engine *id, struct dse_cuda_plan **out, char *why,
                                   int why_size) {
    *out = NULL;
    why[0] = '\0';
    struct dse_cuda_plan *p = calloc(1, sizeof *p);
    if (!p) return snprintf(why, (size_t)why_size, "out of memory"), DSE_ERR_NOMEM;
    p->dir = dir, p->id = *id;
    const char *step = "operation graph", *rule = NULL;
    cudnnStatus_t s = make_graph(cx, n, dir, p);
    if (!s) s = build_engine(p, &step);
    if (!s && !(rule = ruled_out(cx, p->engine, &p->deterministic))) s = build_plan(cx->impl->cudnn, p, &step);
    if (rule) {
        snprintf(why, (size_t)why_size, "the engine is ruled out in %s: %s", dse_cuda_math_str(cx->math), rule);
    } else if (s) {
        char last[200] = "";
        cudnnGetLastErrorString(last, sizeof last);
        snprintf(why, (size_t)why_size, "cuDNN does not build its %s: %s%s%s", step, cudnnGetErrorString(s),
                 last[0] ? "; " : "", last);
    }
    (void)cudaGetLastError();
    if (why[0]) {
        dse_cuda_plan_free(p);
        return s == CUDNN_STATUS_ALLOC_FAILED ? DSE_ERR_NOMEM : DSE_ERR_CUDA;
    }
    *out = p;
    return DSE_OK;
}
