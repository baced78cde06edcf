/* model.c: network -> nodes and tensors (one arena), initialization, forward, backward
 * and SGD on the CPU backend, or on a CUDA device (issue #6: the same arena layout in
 * device memory, parameters in one device block, nodes run by engine/cuda/). See
 * engine/model.h; tensor and gradient rules: engine.h. */
#include "engine/model.h"
#include "engine/slices.h"

#include "engine/kernels_shared.h" /* dse_clip_factor, the device step's too */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The model's own copy of the net: without accuracy layers and a final softmax (a
 * deploy file's "prob"), with softmax cross-entropy on the last layer if none exists. */
static enum dse_status training_net(const struct dse_net *src, struct dse_net *dst, int *loss,
                                    struct dse_err *err) {
    int *map = malloc(sizeof *map * (size_t)(src->n_layers + 1));
    enum dse_status st = DSE_OK;
    if (!map) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    dse_net_init(dst, src->name, src->in_c, src->in_h, src->in_w);
    *loss = -1;
    for (int i = 0; i < src->n_layers && !st; i++) {
        struct dse_layer l = src->layers[i];
        int last = i == src->n_layers - 1 || (i == src->n_layers - 2 &&
                                              src->layers[i + 1].type == DSE_LAYER_ACCURACY);
        map[i] = -2; /* dropped */
        if (l.type == DSE_LAYER_ACCURACY || (l.type == DSE_LAYER_SOFTMAX && last && *loss < 0))
            continue;
        for (int k = 0; k < l.n_inputs; k++) {
            int in = l.inputs[k];
            if (in >= 0 && map[in] == -2) {
                st = dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, l.line,
                                 "layer '%s' reads '%s', which training drops", l.name,
                                 src->layers[in].name);
                break;
            }
            l.inputs[k] = in >= 0 ? map[in] : in;
        }
        if (st) break;
        if (l.type == DSE_LAYER_SOFTMAX_LOSS) {
            if (*loss >= 0) {
                st = dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, l.line,
                                 "layer '%s': the engine trains nets with one loss", l.name);
                break;
            }
            *loss = dst->n_layers;
        }
        if ((st = dse_net_add(dst, &l, err))) break;
        map[i] = dst->n_layers - 1;
    }
    if (!st && *loss < 0) { /* a deploy-style net: attach the loss to its last layer */
        struct dse_layer l = dse_layer_make(DSE_LAYER_SOFTMAX_LOSS, "loss");
        st = dse_net_add(dst, &l, err);
        *loss = dst->n_layers - 1;
    }
    if (!st && *loss != dst->n_layers - 1)
        st = dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, dst->layers[*loss].line,
                         "layer '%s': the loss must be the last layer the engine runs",
                         dst->layers[*loss].name);
    if (!st) st = dse_net_infer(dst, NULL, err);
    free(map);
    if (st) dse_net_deinit(dst);
    return st;
}

/* Standard normal from two uniform draws (Box-Muller). */
static float gauss(struct dse_pcg32 *r) {
    double u1 = (dse_pcg32_next(r) + 1.0) / 4294967297.0, u2 = dse_pcg32_next(r) / 4294967296.0;
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

static void init_weights(struct dse_tensor *w, int64_t fan_in, double gain, const struct dse_model_opts *o,
                         struct dse_pcg32 *r) {
    int64_t n = dse_tensor_count(w);
    double a = gain * sqrt(3.0 / (double)fan_in), s = gain * sqrt(2.0 / (double)fan_in);
    for (int64_t i = 0; i < n; i++) {
        switch (o->init) {
        case DSE_INIT_XAVIER:   w->data[i] = (float)(a * (2.0 * dse_pcg32_next(r) / 4294967296.0 - 1.0)); break;
        case DSE_INIT_MSRA:     w->data[i] = (float)(s * gauss(r)); break;
        case DSE_INIT_GAUSSIAN: w->data[i] = (float)gain * o->init_std * gauss(r); break;
        }
    }
}

void dse_model_free(struct dse_model *m) {
    if (!m) return;
    const int on_gpu = m->device.kind == DSE_DEVICE_CUDA;
    for (int i = 0; m->nodes && i < m->net.n_layers; i++) {
        if (m->gpu) dse_cuda_node_release(m->gpu, &m->nodes[i]);
        free(m->nodes[i].db_part), free(m->nodes[i].dw_blocks);
        dse_node_deinit(&m->nodes[i]);
    }
    /* Device tensors are wrapped (own nothing); host ones not yet moved free themselves. */
    for (int i = 0; m->owned && i < 4 * m->net.n_layers; i++) dse_tensor_deinit(&m->owned[i]);
    for (int i = 0; m->momentum && !on_gpu && i < m->n_params; i++) free(m->momentum[i]);
    free(m->momentum);
    free(m->params);
    free(m->decay);
    free(m->owned);
    free(m->outs);
    free(m->nodes);
    free(m->labels);
    free(m->host_prob);
    free(m->dist_f);
    free(m->dist_d);
    free(m->dist_loss);
    for (int k = 0; k < 2; k++)
        if (m->batch_host[k]) dse_model_host_free(m, m->batch_host[k], m->batch_pinned[k]);
    if (on_gpu) {
        if (m->gpu) {
            dse_cuda_free(m->gpu, m->batch_dev[1]);
            dse_cuda_free(m->gpu, m->arena);
            dse_cuda_free(m->gpu, m->dev_block);
        }
    } else {
        free(m->arena);
    }
    free(m->gsums);
    dse_tensor_deinit(&m->input);
    if (m->gpu) dse_cuda_ctx_deinit(m->gpu);
    free(m->gpu);
    dse_cpu_ctx_deinit(&m->cx);
    dse_net_deinit(&m->net);
    free(m);
}

/* Init gain of layer i: 1, except in Fire modules with a bypass. Without batchnorm,
 * adding a ReLU branch onto its input grows the activations' mean at every bypassed
 * module, and a complex bypass's 1x1 conv has no ReLU after it (MSRA's factor 2 would
 * double the variance): with gain 1, SqueezeNet-FMNIST with complex bypass started at a
 * loss of 23.6 and diverged within 20 iterations (lr 0.01), and 1/sqrt(2) on both was
 * not enough. So the expands of a bypassed module start small (each module starts
 * close to its shortcut; a zero init, as for residual branches, would leave them dead:
 * the ReLU after an expand passes no gradient at exactly 0) and the 1x1 bypass conv
 * gets a linear layer's gain. */
#define DSE_BYPASS_BRANCH_GAIN 0.2
static double init_gain(const struct dse_net *net, int i) {
    const struct dse_layer *l = &net->layers[i];
    if (l->role == DSE_ROLE_BYPASS_CONV) return sqrt(0.5);
    if (l->role != DSE_ROLE_EXPAND1X1 && l->role != DSE_ROLE_EXPAND3X3) return 1.0;
    for (int j = i + 1; j < net->n_layers && !strcmp(net->layers[j].module, l->module); j++)
        if (net->layers[j].role == DSE_ROLE_BYPASS_ADD) return DSE_BYPASS_BRANCH_GAIN;
    return 1.0;
}

/* 1 if layer i is the last conv/fc layer and a ReLU comes after it (SqueezeNet's conv10,
 * whose ReLU feeds the global average pool and the loss). A class whose pre-activation is
 * negative for every image gets no gradient through that ReLU and is never predicted
 * again; dse_model_opts.classifier_bias starts them all above zero. */
static int classifier_behind_relu(const struct dse_net *net, int i) {
    int relu = 0;
    for (int j = i + 1; j < net->n_layers; j++) {
        enum dse_layer_type t = net->layers[j].type;
        if (t == DSE_LAYER_CONV || t == DSE_LAYER_FC) return 0;
        relu |= t == DSE_LAYER_RELU;
    }
    return relu;
}

/* Layer i's weights [out_c, c, kh, kw] (fan-in c * kh * kw, the init's gain) and, if it has
 * one, its bias [1, out_c, 1, 1]: a conv's and an fc's parameters. */
static enum dse_status weights_and_bias(struct dse_model *m, int i, int c, int kh, int kw, double gain,
                                        const struct dse_model_opts *o, struct dse_pcg32 *r, struct dse_err *err) {
    const struct dse_layer *l = &m->net.layers[i];
    const unsigned gradf = o->inference ? 0u : DSE_TENSOR_GRAD; /* inference: no gradients */
    struct dse_node *n = &m->nodes[i];
    struct dse_tensor *t = &m->owned[4 * i];
    enum dse_status st;
    if ((st = dse_tensor_init(&t[0], l->out_c, c, kh, kw, gradf, err))) return st;
    init_weights(&t[0], (int64_t)c * kh * kw, gain, o, r);
    n->weight = &t[0];
    if (l->bias) {
        if ((st = dse_tensor_init(&t[1], 1, l->out_c, 1, 1, gradf, err))) return st;
        n->bias = &t[1];
        if (classifier_behind_relu(&m->net, i)) dse_tensor_fill(&t[1], o->classifier_bias);
    }
    return DSE_OK;
}

/* Parameter tensors of layer i (weights, bias, batchnorm running statistics). */
static enum dse_status make_params(struct dse_model *m, int i, const struct dse_model_opts *o,
                                   struct dse_pcg32 *r, struct dse_err *err) {
    const struct dse_layer *l = &m->net.layers[i];
    const unsigned gradf = o->inference ? 0u : DSE_TENSOR_GRAD; /* inference: no gradients */
    struct dse_node *n = &m->nodes[i];
    struct dse_tensor *t = &m->owned[4 * i];
    enum dse_status st = DSE_OK;
    switch (l->type) {
    case DSE_LAYER_CONV: {
        int cg = l->in_c / l->groups;
        if ((st = weights_and_bias(m, i, cg, l->kernel_h, l->kernel_w, init_gain(&m->net, i), o, r, err))) return st;
        break;
    }
    case DSE_LAYER_FC: {
        int64_t d = (int64_t)l->in_c * l->in_h * l->in_w;
        if (d > DSE_DIM_MAX) return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, l->line, "fc '%s' too wide", l->name);
        if ((st = weights_and_bias(m, i, (int)d, 1, 1, 1.0, o, r, err))) return st;
        break;
    }
    case DSE_LAYER_BATCHNORM:
        if (l->affine) {
            if ((st = dse_tensor_init(&t[0], 1, l->out_c, 1, 1, gradf, err)) ||
                (st = dse_tensor_init(&t[1], 1, l->out_c, 1, 1, gradf, err)))
                return st;
            dse_tensor_fill(&t[0], 1.0f);
            n->weight = &t[0], n->bias = &t[1];
        }
        if ((st = dse_tensor_init(&t[2], 1, l->out_c, 1, 1, 0, err)) ||
            (st = dse_tensor_init(&t[3], 1, l->out_c, 1, 1, 0, err)))
            return st;
        dse_tensor_fill(&t[3], 1.0f);
        n->run_mean = &t[2], n->run_var = &t[3];
        break;
    case DSE_LAYER_SCALE:
        if ((st = dse_tensor_init(&t[0], 1, l->out_c, 1, 1, gradf, err))) return st;
        dse_tensor_fill(&t[0], 1.0f);
        n->weight = &t[0];
        if (l->bias) {
            if ((st = dse_tensor_init(&t[1], 1, l->out_c, 1, 1, gradf, err))) return st;
            n->bias = &t[1];
        }
        break;
    default:
        break;
    }
    if (n->weight) {
        m->params[m->n_params] = n->weight;
        m->decay[m->n_params++] = l->type == DSE_LAYER_CONV || l->type == DSE_LAYER_FC;
    }
    if (n->bias) {
        m->params[m->n_params] = n->bias;
        m->decay[m->n_params++] = 0;
    }
    return st;
}

/* Floats of layer i's output buffer, rounded up to 64 bytes. */
static size_t buffer_floats(const struct dse_net *net, int B, int i) {
    const struct dse_layer *l = &net->layers[i];
    return ((size_t)B * l->out_c * l->out_h * l->out_w + 15) & ~(size_t)15;
}

/* Buffers (layers i with own[i] == i and no concat view) one after another. */
static size_t stack_buffers(const struct dse_net *net, int B, const int *own, const int *view_of, size_t *offset) {
    size_t total = 0;
    for (int i = 0; i < net->n_layers; i++) {
        if (own[i] != i || view_of[i] >= 0) continue;
        offset[i] = total;
        total += buffer_floats(net, B, i);
    }
    return total;
}

/* The buffer layer i's output lives in: its owner's, or the concat's its owner is a view of. */
static int buf_of(const int *own, const int *view_of, int i) {
    return view_of[own[i]] >= 0 ? view_of[own[i]] : own[i];
}

/* Whether input in (a layer index, or < 0 for the net's input) of concat i is one of its views,
 * written by its producer straight into i's buffer, rather than copied by i. */
static int view_input(const int *own, const int *view_of, int i, int in) {
    return in >= 0 && view_of[own[in]] == i;
}

/* The buffer layer i reads as its input k: -1 for the net's input or, for a concat, one of
 * its own views (written into its buffer by their producers, not read by it). */
static int read_buf(const struct dse_net *net, const int *own, const int *view_of, int i, int k) {
    const struct dse_layer *l = &net->layers[i];
    const int in = l->inputs[k];
    return in < 0 || (l->type == DSE_LAYER_CONCAT && view_input(own, view_of, i, in)) ? -1 : buf_of(own, view_of, in);
}

/* Inference: a buffer lives from the first layer that writes it (a concat buffer: its
 * first view's producer) to the last layer that reads it; buffers are placed first-fit,
 * in order of their first write, into space no live buffer holds. Returns the arena's
 * floats. The loss layer is last, so what it reads lives to the end. */
static size_t share_buffers(const struct dse_net *net, int B, const int *own, const int *view_of, size_t *offset) {
    const int n = net->n_layers;
    int *first = malloc(sizeof *first * (size_t)n * 3), *last = first ? first + n : NULL, *order = last ? last + n : NULL;
    if (!first) return stack_buffers(net, B, own, view_of, offset);
    for (int i = 0; i < n; i++) first[i] = n, last[i] = -1;
    for (int j = 0; j < n; j++) {
        const struct dse_layer *l = &net->layers[j];
        const int b = buf_of(own, view_of, j);
        if (j < first[b]) first[b] = j;
        if (j > last[b]) last[b] = j;
        for (int k = 0; k < l->n_inputs; k++)
            if (l->inputs[k] >= 0 && last[buf_of(own, view_of, l->inputs[k])] < j)
                last[buf_of(own, view_of, l->inputs[k])] = j;
    }
    int nb = 0;
    for (int i = 0; i < n; i++)
        if (own[i] == i && view_of[i] < 0) order[nb++] = i;
    for (int a = 1; a < nb; a++) /* by first write; few buffers: insertion sort */
        for (int b = a; b > 0 && first[order[b]] < first[order[b - 1]]; b--) {
            int t = order[b];
            order[b] = order[b - 1], order[b - 1] = t;
        }
    size_t total = 0;
    for (int a = 0; a < nb; a++) {
        const int i = order[a];
        const size_t size = buffer_floats(net, B, i);
        /* Lowest offset free of every earlier-placed buffer still live at first[i]. */
        size_t at = 0;
        for (int moved = 1; moved;) {
            moved = 0;
            for (int c = 0; c < a; c++) {
                const int o = order[c];
                if (last[o] < first[i]) continue; /* dead by then */
                const size_t os = buffer_floats(net, B, o);
                if (at < offset[o] + os && offset[o] < at + size) {
                    at = offset[o] + os;
                    moved = 1;
                }
            }
        }
        offset[i] = at;
        if (at + size > total) total = at + size;
    }
    free(first);
    return total;
}

/* ---- device models ------------------------------------------------------------------- */

/* Floats rounded up to 256 bytes (cuDNN and cuBLAS like aligned tensors). */
static size_t dev_round(size_t floats) { return (floats + 63) & ~(size_t)63; }

/* The CUDA context of a device model, on opts->device. */
static enum dse_status gpu_init(struct dse_model *m, const struct dse_model_opts *o,
                                const struct dse_model_device_opts *dev, struct dse_err *err) {
    struct dse_cuda_ctx *g = calloc(1, sizeof *g);
    if (!g) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    enum dse_status st = dse_cuda_ctx_init(g, dev->device.index, o->seed, err);
    if (st) {
        free(g);
        return st;
    }
    g->math = dev->math;
    g->deterministic = !dev->nondeterministic;
    if (dev->ws_limit_bytes) g->ws_limit_bytes = dev->ws_limit_bytes;
    g->conv_pool = dev->conv_pool;
    g->dropout_rng = &m->cx.rng; /* one dropout stream, the one checkpoints store */
    m->gpu = g;
    return DSE_OK;
}

/* Move a host tensor's data into device memory at dev (grad at dev_grad, zeroed, or
 * none): upload, free the host copy, wrap the device memory. */
static enum dse_status move_tensor(struct dse_model *m, struct dse_tensor *t, float *dev, float *dev_grad,
                                   struct dse_err *err) {
    enum dse_status st = dse_cuda_upload(m->gpu, dev, t->data, (size_t)dse_tensor_count(t) * sizeof(float), err);
    if (st) return st;
    const int n = t->n, c = t->c, h = t->h, w = t->w;
    dse_tensor_deinit(t);
    dse_tensor_wrap(t, n, c, h, w, (int64_t)c * h * w, dev, dev_grad, DSE_MEM_DEVICE);
    return DSE_OK;
}

/* Parameters (initialized on the host), running statistics and the input into one device
 * block: [decayed params | other params] data, then grads and momentum in the same
 * layout (so zeroing grads is one memset and SGD two launches), then statistics, input. */
static enum dse_status params_to_device(struct dse_model *m, struct dse_err *err) {
    const int n = m->net.n_layers;
    size_t *off = calloc((size_t)(m->n_params ? m->n_params : 1), sizeof *off), at = 0;
    if (!off) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int pass = 0; pass < 2; pass++) { /* weights with decay first */
        for (int p = 0; p < m->n_params; p++) {
            if (m->decay[p] != (pass == 0)) continue;
            off[p] = at;
            at += dev_round((size_t)dse_tensor_count(m->params[p]));
        }
        if (pass == 0) m->decay_floats = at;
    }
    m->param_floats = at;
    size_t total = m->inference ? at : 3 * at;
    for (int i = 0; i < n; i++) {
        if (m->nodes[i].run_mean) total += dev_round((size_t)dse_tensor_count(m->nodes[i].run_mean));
        if (m->nodes[i].run_var) total += dev_round((size_t)dse_tensor_count(m->nodes[i].run_var));
    }
    const size_t input_at = total;
    total += dev_round((size_t)dse_tensor_count(&m->input));
    void *block = NULL;
    enum dse_status st = dse_cuda_alloc(m->gpu, total * sizeof(float), &block, err);
    if (st) {
        free(off);
        return st;
    }
    m->dev_block = block, m->dev_floats = total;
    float *base = m->dev_block;
    for (int p = 0; p < m->n_params && !st; p++) {
        float *grad = m->inference ? NULL : base + at + off[p];
        st = move_tensor(m, m->params[p], base + off[p], grad, err);
        if (!m->inference) m->momentum[p] = base + 2 * at + off[p];
    }
    size_t s = m->inference ? at : 3 * at;
    for (int i = 0; i < n && !st; i++) {
        struct dse_tensor *rs[2] = { m->nodes[i].run_mean, m->nodes[i].run_var };
        for (int k = 0; k < 2 && !st; k++) {
            if (!rs[k]) continue;
            const size_t c = (size_t)dse_tensor_count(rs[k]);
            st = move_tensor(m, rs[k], base + s, NULL, err);
            s += dev_round(c);
        }
    }
    if (!st) st = move_tensor(m, &m->input, base + input_at, NULL, err);
    free(off);
    return st;
}

enum dse_status dse_model_new(const struct dse_net *net, const struct dse_model_opts *opts,
                              struct dse_model **out, struct dse_err *err) {
    return dse_model_new_on(net, opts, NULL, out, err);
}

/* Both backends: a conv whose output an in-place ReLU right after it reads (SqueezeNet's
 * every conv) applies that ReLU itself (dse_node.relu_out); the ReLU node is marked fused.
 * Same values and gradients, bit for bit (tests fused-relu on the CPU, op-conv-relu on a
 * GPU), fewer passes over the output: on the CPU one each way, on a GPU the bias and the
 * ReLU in one pass forward, the mask and the bias gradient in one backward.
 * DSE_NO_FUSE=1 turns it off. */
static void fuse_relus(struct dse_model *m, const int *own) {
    const char *off = getenv("DSE_NO_FUSE");
    if (off && off[0] && off[0] != '0') return;
    for (int i = 1; i < m->net.n_layers; i++) {
        const struct dse_layer *l = &m->net.layers[i];
        struct dse_node *conv = &m->nodes[i - 1];
        if (m->nodes[i].op == DSE_OP_RELU && l->in_place && l->inputs[0] == i - 1 && conv->op == DSE_OP_CONV2D &&
            own[i - 1] == i - 1)
            conv->relu_out = 1, m->nodes[i].fused = 1;
    }
}

/* A ReLU'd output read only by max pooling (SqueezeNet's conv1 -> pool1 and the concats of
 * fire4 and fire8 -> pool4, pool8): on the CPU the pools pass a window's gradient only where
 * its maximum is > 0 (dse_node.pool_relu), which is the ReLU's mask on every value the pools
 * give gradient to; the others get none, zero as the mask would leave them. So the convs
 * writing that buffer skip their mask's pass over y and dy (dse_node.relu_dy_masked): the
 * same bits (test fused-relu: the whole arena against separate ReLU layers), two passes
 * fewer over v1.0's largest tensors. A buffer qualifies where every layer writing it is a
 * conv with its ReLU fused (a concat only through its views) and every layer reading it a
 * max pool. */
static void plan_relu_pools(struct dse_model *m, const int *own, const int *view_of) {
    const int n = m->net.n_layers;
    if (m->gpu) return;
    char *ok = malloc((size_t)n), *read = calloc((size_t)n, 1);
    if (!ok || !read) { /* the masks' passes stay: the same bits */
        free(ok), free(read);
        return;
    }
    memset(ok, 1, (size_t)n);
    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &m->net.layers[i];
        const struct dse_node *nd = &m->nodes[i];
        if (nd->fused) continue; /* a ReLU its conv applies */
        const int b = buf_of(own, view_of, i);
        if (l->type == DSE_LAYER_CONCAT) {
            for (int k = 0; k < l->n_inputs; k++)
                if (!view_input(own, view_of, i, l->inputs[k])) ok[b] = 0; /* a copy: not a conv's */
        } else if (own[i] != i || nd->op != DSE_OP_CONV2D || !nd->relu_out)
            ok[b] = 0; /* in place on it, or a writer without the ReLU */
        for (int k = 0; k < l->n_inputs; k++) {
            const int rb = read_buf(&m->net, own, view_of, i, k);
            if (rb < 0) continue;
            if (nd->op == DSE_OP_MAXPOOL && k == 0) read[rb] = 1;
            else ok[rb] = 0;
        }
    }
    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &m->net.layers[i];
        struct dse_node *nd = &m->nodes[i];
        if (nd->fused) continue;
        if (nd->op == DSE_OP_CONV2D && nd->relu_out && own[i] == i) {
            const int b = buf_of(own, view_of, i);
            nd->relu_dy_masked = ok[b] && read[b];
        }
        if (nd->op == DSE_OP_MAXPOOL && l->inputs[0] >= 0) {
            const int b = buf_of(own, view_of, l->inputs[0]);
            nd->pool_relu = ok[b] && read[b];
        }
    }
    free(ok), free(read);
}

/* A buffer whose one reader takes it whole (not a view of it): its gradient is that layer's
 * dx alone, as backward runs in reverse and nothing has added to it before, so where the
 * layer's op can write dx without reading it (dse_cpu_writes_dx: a max pool zeroes each plane
 * as it begins it, a bf16 1x1 conv stores its products) it does (dse_node.dx_whole) and
 * dse_model_zero_grad leaves the buffer out: the step's largest gradients (at batch 16,
 * v1.0's conv1, fire4's and fire8's concats under their pools, 150 MB, and the squeeze
 * convs' inputs, 133 MB) written once instead of zeroed through memory first and then read
 * back (the pools' not written at all where plan_pool_dy gives their backward to the
 * convs before them); the same bits (+0 plus each term in the same order). CPU only. */
static void plan_whole_grads(struct dse_model *m, const int *own, const int *view_of) {
    const int n = m->net.n_layers;
    int *readers = m->gpu ? NULL : calloc((size_t)n, sizeof *readers);
    if (!readers) return; /* every gradient zeroed: the same bits */
    for (int i = 0; i < n; i++)
        for (int k = 0; !m->nodes[i].fused && k < m->net.layers[i].n_inputs; k++) { /* fused: a ReLU its conv applies */
            const int rb = read_buf(&m->net, own, view_of, i, k);
            if (rb >= 0) readers[rb]++;
        }
    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &m->net.layers[i];
        struct dse_node *nd = &m->nodes[i];
        if (nd->fused || l->inputs[0] < 0 || !nd->in[0]->grad || !dse_cpu_writes_dx(&m->cx, nd)) continue;
        const int in = l->inputs[0], b = buf_of(own, view_of, in);
        nd->dx_whole = readers[b] == 1 && b == own[in]; /* own[in]: a fused ReLU's is its conv's */
    }
    free(readers);
}

/* The number of layers writing buffer b if every one is a conv that takes(cx, node) allows
 * (a concat only through its views; none in place), else 0: plan_pool_dy's and plan_grad16's
 * condition on a buffer's writers. */
static int writers_all(const struct dse_model *m, const int *own, const int *view_of, int b,
                       int (*takes)(const struct dse_cpu_ctx *, const struct dse_node *)) {
    int convs = 0;
    for (int i = 0; i < m->net.n_layers; i++) {
        const struct dse_layer *l = &m->net.layers[i];
        if (m->nodes[i].fused || buf_of(own, view_of, i) != b) continue; /* fused: a ReLU its conv applies */
        if (l->type == DSE_LAYER_CONCAT) {
            for (int k = 0; k < l->n_inputs; k++)
                if (!view_input(own, view_of, i, l->inputs[k])) return 0;
            continue;
        }
        if (own[i] != i || !takes(&m->cx, &m->nodes[i])) return 0;
        convs++;
    }
    return convs;
}

/* A max pool whose input's gradient is its dx alone (dse_node.dx_whole) and whose input every
 * writer is a conv taking dy in its weight gradient's one pass (dse_cpu_takes_pool_dy; a
 * concat only through its views): the pool's backward is left to those convs
 * (dse_node.dy_pool, dx_to_writers), each making its dy a plane at a time in cache from the
 * pool's dy and argmaxes, the same additions in the same order. The pool's input gradient
 * (v1.0 at batch 16: conv1's 76 MB, fire4's and fire8's concats' 74 MB) is then never
 * written and read back; nothing else reads it. CPU only, in training. */
static void plan_pool_dy(struct dse_model *m, const int *own, const int *view_of) {
    const int n = m->net.n_layers;
    for (int p = 0; p < n && !m->gpu; p++) {
        struct dse_node *pool = &m->nodes[p];
        const int in = m->net.layers[p].inputs[0];
        if (pool->op != DSE_OP_MAXPOOL || !pool->dx_whole || in < 0) continue;
        const int b = buf_of(own, view_of, in);
        if (!writers_all(m, own, view_of, b, dse_cpu_takes_pool_dy)) continue;
        pool->dx_to_writers = 1;
        for (int i = 0; i < n; i++)
            if (!m->nodes[i].fused && buf_of(own, view_of, i) == b && m->net.layers[i].type != DSE_LAYER_CONCAT)
                m->nodes[i].dy_pool = pool;
    }
}

/* Activations stored in bf16 (issue #37; dse_tensor.bf16): in a CPU model in bf16, a buffer
 * (an owner's output, or a concat's with its views) holds bfloat16 values where every layer
 * that writes it and every layer that reads it takes them (dse_cpu_bf16_io: the bf16 convs,
 * max pooling; a concat whose inputs are all its views), so SqueezeNet's convs and pools pass
 * 16-bit values and each pass moves half the bytes; their gradients stay float (but
 * plan_grad16's). The products
 * are the same bits: a bf16 conv rounds its input to the same values either way, and a
 * ReLU's mask reads y > 0 from the 16 bits (a positive denormal, flushed, the one exception).
 * A max pool reading a bf16 conv's output gives the same maxima (of rounded values, the
 * rounded maxima), but where inputs differ as floats and are equal once rounded the first
 * wins (Caffe's rule on the stored values, as PyTorch's autocast pools bf16 tensors), so its
 * gradient may go to another of them than with float storage: since 2026-11-30, measured on
 * accuracy (docs/training.md). A buffer's
 * conditions are its own layers' (no reader's answer depends on another buffer's choice), so
 * one pass over the layers settles them. DSE_CPU_BF16_FLOAT_ACTS=1 keeps every activation in float32. */
static void plan_bf16(struct dse_model *m, const int *own, const int *view_of, const int *view_c0) {
    const char *off = getenv("DSE_CPU_BF16_FLOAT_ACTS");
    const int n = m->net.n_layers;
    if (m->gpu || m->cx.bf16 != DSE_CPU_BF16_BY_RULE || (off && off[0] && off[0] != '0')) return;
    char *keep = calloc((size_t)n, 1);
    if (!keep) return; /* float32 throughout: the same products */
    for (int i = 0; i < n; i++) keep[buf_of(own, view_of, i)] = 1;
    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &m->net.layers[i];
        const struct dse_node *nd = &m->nodes[i];
        const int b = buf_of(own, view_of, i);
        if (nd->fused) continue; /* a ReLU its conv applies */
        if (l->type == DSE_LAYER_CONCAT) { /* writes only through its views; copies others as floats */
            for (int k = 0; k < l->n_inputs; k++)
                if (!view_input(own, view_of, i, l->inputs[k])) {
                    keep[b] = 0;
                    if (l->inputs[k] >= 0) keep[buf_of(own, view_of, l->inputs[k])] = 0;
                }
            continue;
        }
        if (own[i] != i || !dse_cpu_bf16_io(&m->cx, nd, 1)) keep[b] = 0; /* in place, or not a bf16 writer */
        for (int k = 0; k < l->n_inputs; k++)
            if (l->inputs[k] >= 0 && (k > 0 || !dse_cpu_bf16_io(&m->cx, nd, 0)))
                keep[buf_of(own, view_of, l->inputs[k])] = 0;
    }
    for (int i = 0; i < n; i++) { /* in layer order: owners and views, then their aliases */
        const struct dse_layer *l = &m->net.layers[i];
        struct dse_tensor *t = &m->outs[i];
        if (own[i] != i) {
            t->data = m->outs[l->inputs[0]].data, t->bf16 = m->outs[l->inputs[0]].bf16;
            continue;
        }
        t->bf16 = keep[buf_of(own, view_of, i)];
        if (t->bf16 && view_of[i] >= 0) /* channel c0's plane in 16-bit units */
            t->data = (float *)(void *)((uint16_t *)(void *)m->outs[view_of[i]].data +
                                        (int64_t)view_c0[i] * t->h * t->w);
    }
    free(keep);
}

/* A writer of a gradient kept in bf16 (plan_grad16): dy taken as bf16 rows, from no pool. */
static int grad16_writer(const struct dse_cpu_ctx *cx, const struct dse_node *n) {
    return dse_cpu_takes_dy16(cx, n) && !n->dy_pool;
}

/* Gradients kept in bf16 (dse_tensor.grad16): a bf16 buffer whose one reader is a bf16 1x1
 * conv writing its gradient whole (dse_node.dx_whole: a squeeze on its concat) and whose every
 * writer is a bf16 conv taking dy in its weight gradient's one pass with its fused ReLU's mask
 * on bf16 outputs (dse_cpu_takes_dy16; a concat only through its views; none a pool's dy_pool
 * conv): the reader masks its products by those ReLUs, rounds them and sums each channel as
 * the writers' take_dy did (dse_bf16_pack_dy, on the products while in cache), and the
 * writers take the bf16 rows and the sums as they are. The same bits: the same function on
 * the same floats, only where it runs; the gradient (v1.0 at batch 16: fire2's, fire3's,
 * fire5-7's concats, 24 million values) then goes through memory in 16 bits once instead of
 * 32 bits written and read back. CPU only, in training; out of memory, every gradient stays
 * float (the same bits). DSE_CPU_BF16_FLOAT_GRADS=1 keeps every gradient in float32. */
static void plan_grad16(struct dse_model *m, const int *own, const int *view_of, const int *view_c0) {
    const char *off = getenv("DSE_CPU_BF16_FLOAT_GRADS");
    const int n = m->net.n_layers;
    if (m->gpu || m->inference || m->cx.bf16 != DSE_CPU_BF16_BY_RULE || (off && off[0] && off[0] != '0')) return;
    char *keep = calloc((size_t)n, 1);
    if (!keep) return; /* every gradient float: the same bits */
    int64_t total = 0;
    for (int r = 0; r < n; r++) {
        const struct dse_node *rd = &m->nodes[r];
        const int in = m->net.layers[r].inputs[0];
        if (rd->fused || in < 0 || !rd->dx_whole || rd->op != DSE_OP_CONV2D || !dse_cpu_writes_dx(&m->cx, rd))
            continue;
        const int b = buf_of(own, view_of, in);
        if (!m->outs[b].bf16 || !writers_all(m, own, view_of, b, grad16_writer)) continue;
        if (!keep[b]) keep[b] = 1, total += (int64_t)m->outs[b].n * m->outs[b].c;
    }
    if (total && !(m->gsums = calloc((size_t)total, sizeof *m->gsums))) {
        free(keep);
        return; /* every gradient float: the same bits */
    }
    m->n_gsums = total;
    int64_t at = 0;
    for (int b = 0; b < n; b++) /* the buffers' own tensors first: their views point into them */
        if (keep[b]) {
            struct dse_tensor *t = &m->outs[b];
            t->grad16 = 1, t->gsum = m->gsums + at, t->gsum_ld = t->c;
            at += (int64_t)t->n * t->c;
        }
    for (int i = 0; i < n; i++) { /* in layer order: views, then their aliases */
        const struct dse_layer *l = &m->net.layers[i];
        struct dse_tensor *t = &m->outs[i];
        if (own[i] != i) {
            const struct dse_tensor *o = &m->outs[l->inputs[0]];
            if (o->grad16) t->grad = o->grad, t->grad16 = 1, t->gsum = o->gsum, t->gsum_ld = o->gsum_ld;
            continue;
        }
        if (view_of[i] < 0 || !keep[view_of[i]]) continue;
        const struct dse_tensor *p = &m->outs[view_of[i]];
        t->grad16 = 1, t->gsum = p->gsum + view_c0[i], t->gsum_ld = p->gsum_ld;
        t->grad = (float *)(void *)((uint16_t *)(void *)p->grad + (int64_t)view_c0[i] * t->h * t->w);
    }
    free(keep);
}

/* 1 if layer i (a flatten or reshape) runs as a view of its input: the same memory in its
 * own shape, nothing moved (a Flatten before an fc). Only where no other layer reads that
 * input, so that nothing else (an in-place layer's write, its gradient's overwrite) meets
 * the shared memory; otherwise the op copies its input into a tensor of its own. */
static int runs_as_view(const struct dse_net *net, int i) {
    const struct dse_layer *l = &net->layers[i];
    if (!dse_layer_type_view(l->type) || l->inputs[0] < 0) return 0;
    for (int j = l->inputs[0] + 1; j < net->n_layers; j++)
        for (int k = 0; k < net->layers[j].n_inputs; k++)
            if (j != i && net->layers[j].inputs[k] == l->inputs[0]) return 0;
    return 1;
}

/* Who owns each layer's output (own[i]: the layer whose tensor it is; consumers: how many
 * layers read each owner) and which outputs are views of a concat buffer (view_of[i]: the
 * concat, view_c0[i]: the first channel; -1: none). */
static void plan_outputs(const struct dse_net *net, int *own, int *consumers, int *view_of, int *view_c0) {
    const int n = net->n_layers;
    /* Who owns each layer's output: in-place layers write into their input's tensor, views
     * (runs_as_view) see it. A view counts as a reader: no concat writes through one. */
    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &net->layers[i];
        own[i] = (l->in_place && l->inputs[0] >= 0) || runs_as_view(net, i) ? own[l->inputs[0]] : i;
        view_of[i] = -1;
        for (int k = 0; k < l->n_inputs; k++)
            if (l->inputs[k] >= 0 && !(l->in_place && k == 0)) consumers[own[l->inputs[k]]]++;
    }
    /* A concat input read by nothing else is written straight into its channel slice
     * of the concat buffer (Fire modules' expands): no copy forward or backward. */
    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &net->layers[i];
        if (l->type != DSE_LAYER_CONCAT) continue;
        int c0 = 0;
        for (int k = 0; k < l->n_inputs; k++) {
            int in = l->inputs[k];
            int o = in >= 0 ? own[in] : -1;
            if (o >= 0 && consumers[o] == 1 && view_of[o] < 0 && net->layers[o].type != DSE_LAYER_CONCAT) {
                view_of[o] = i;
                view_c0[o] = c0;
            }
            c0 += in >= 0 ? net->layers[in].out_c : net->in_c;
        }
    }
}

/* The arena (device memory on a GPU) and every layer's output tensor in it, by
 * plan_outputs' plan; offset[i]: owner i's place in the arena. */
static enum dse_status place_outputs(struct dse_model *m, const struct dse_model_opts *opts, const int *own,
                                     const int *view_of, const int *view_c0, size_t *offset, int on_gpu,
                                     struct dse_err *err) {
    const int n = m->net.n_layers, B = opts->batch;
    const enum dse_mem mem = on_gpu ? DSE_MEM_DEVICE : DSE_MEM_HOST;
    enum dse_status st;
    /* One arena: every owned output's data, then every gradient. Training keeps every
     * output for backward; inference lets outputs whose lives do not overlap share. */
    size_t total = opts->inference ? share_buffers(&m->net, B, own, view_of, offset)
                                   : stack_buffers(&m->net, B, own, view_of, offset);
    m->arena_floats = opts->inference ? total : 2 * total; /* inference: no gradient half */
    m->grad_floats  = opts->inference ? 0 : total;
    const size_t arena_bytes = (m->arena_floats ? m->arena_floats : 16) * sizeof(float);
    if (on_gpu) { /* zeroed */
        void *p = NULL;
        if ((st = dse_cuda_alloc(m->gpu, arena_bytes, &p, err))) return st;
        m->arena = p;
    } else {
        m->arena = dse_alloc_big(arena_bytes);
        if (!m->arena)
            return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for %zu activation values",
                               m->arena_floats);
        memset(m->arena, 0, m->arena_floats * sizeof(float));
    }
    m->grad_base = m->arena + total;
    for (int i = 0; i < n; i++) { /* owners first (concat buffers exist before their views) */
        const struct dse_layer *l = &m->net.layers[i];
        if (own[i] != i || view_of[i] >= 0) continue;
        int64_t img = (int64_t)l->out_c * l->out_h * l->out_w;
        dse_tensor_wrap(&m->outs[i], B, l->out_c, l->out_h, l->out_w, img, m->arena + offset[i],
                        opts->inference ? NULL : m->grad_base + offset[i], mem);
    }
    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &m->net.layers[i];
        if (own[i] == i && view_of[i] >= 0)
            dse_tensor_view_channels(&m->outs[i], &m->outs[view_of[i]], view_c0[i], l->out_c);
    }
    for (int i = 0; i < n; i++) { /* in layer order: a view's input is placed before it */
        const struct dse_layer *l = &m->net.layers[i];
        if (own[i] == i) continue;
        m->outs[i] = m->outs[l->inputs[0]];
        m->outs[i].c = l->out_c, m->outs[i].h = l->out_h, m->outs[i].w = l->out_w; /* a view's shape */
    }
    return DSE_OK;
}

enum dse_status dse_model_new_on(const struct dse_net *net, const struct dse_model_opts *opts,
                                 const struct dse_model_device_opts *dev, struct dse_model **out,
                                 struct dse_err *err) {
    static const struct dse_model_device_opts cpu = { .device = { .kind = DSE_DEVICE_CPU },
                                                      .math = DSE_CUDA_MATH_FP32 };
    enum dse_status st;
    if (!dev) dev = &cpu;
    *out = NULL;
    const int cpu_bf16 = dev->device.kind == DSE_DEVICE_CPU && dev->math == DSE_CUDA_MATH_BF16;
    if (dev->device.kind == DSE_DEVICE_CPU && dev->math != DSE_CUDA_MATH_FP32 && !cpu_bf16)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "precision %s needs a CUDA device; the CPU backend "
                           "computes in fp32 or bf16 only", dse_cuda_math_str(dev->math));
    if (cpu_bf16 && dse_cpu_bf16_why())
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "precision bf16 on the CPU needs AVX512-BF16: %s",
                           dse_cpu_bf16_why());
    struct dse_model *m = calloc(1, sizeof *m);
    if (m) m->tally.diverged_at = -1;
    if (!m) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    m->grad_scale = 1.0f;
    if (opts->batch < 1 || opts->threads < 1) {
        free(m);
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "batch and threads must be >= 1");
    }
    if ((st = training_net(net, &m->net, &m->loss, err))) {
        free(m);
        return st;
    }
    if ((st = dse_cpu_ctx_init(&m->cx, opts->threads, opts->seed, err))) {
        dse_net_deinit(&m->net);
        free(m);
        return st;
    }
    m->cx.bf16 = cpu_bf16 ? DSE_CPU_BF16_BY_RULE : DSE_CPU_BF16_OFF; /* convs (by the rule) and fc in bf16 (engine/cpu/conv_bf16.c) */
    const int n = m->net.n_layers, B = opts->batch;
    const int on_gpu = dev->device.kind == DSE_DEVICE_CUDA;
    m->device = dev->device;
    if (on_gpu && (st = gpu_init(m, opts, dev, err))) {
        dse_cpu_ctx_deinit(&m->cx);
        dse_net_deinit(&m->net);
        free(m);
        return st;
    }
    m->batch  = B;
    m->inference = opts->inference;
    m->nodes  = calloc((size_t)n, sizeof *m->nodes);
    m->outs   = calloc((size_t)n, sizeof *m->outs);
    m->owned  = calloc((size_t)n * 4, sizeof *m->owned);
    m->params = calloc((size_t)n * 2, sizeof *m->params);
    m->decay  = calloc((size_t)n * 2, sizeof *m->decay);
    m->labels = calloc((size_t)B, sizeof *m->labels);
    int *own = calloc((size_t)n, sizeof *own), *consumers = calloc((size_t)n, sizeof *consumers);
    int *view_of = calloc((size_t)n, sizeof *view_of), *view_c0 = calloc((size_t)n, sizeof *view_c0);
    size_t *offset = calloc((size_t)n, sizeof *offset);
    if (!m->nodes || !m->outs || !m->owned || !m->params || !m->decay || !m->labels || !own ||
        !consumers || !view_of || !view_c0 || !offset) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto fail;
    }
    if ((st = dse_tensor_init(&m->input, B, m->net.in_c, m->net.in_h, m->net.in_w, 0, err))) goto fail;

    plan_outputs(&m->net, own, consumers, view_of, view_c0);
    if ((st = place_outputs(m, opts, own, view_of, view_c0, offset, on_gpu, err))) goto fail;

    /* Nodes and parameters, in layer order (initialization order is part of the seed's
     * meaning: same seed, same weights, on every device). */
    struct dse_pcg32 rng;
    dse_pcg32_seed(&rng, opts->seed, 0x1417);
    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &m->net.layers[i];
        struct dse_node *nd = &m->nodes[i];
        enum dse_op op;
        if ((st = dse_op_from_layer(l, &op, err))) goto fail;
        dse_node_init(nd, op, l);
        nd->n_in = l->n_inputs;
        for (int k = 0; k < l->n_inputs; k++)
            nd->in[k] = l->inputs[k] >= 0 ? &m->outs[l->inputs[k]] : &m->input;
        nd->out = &m->outs[i];
        if (op == DSE_OP_SOFTMAX_XENT) nd->labels = m->labels;
        if ((st = make_params(m, i, opts, &rng, err))) goto fail;
        if (!on_gpu && (st = dse_cpu_node_prepare(&m->cx, nd, err))) goto fail;
    }
    fuse_relus(m, own);
    plan_relu_pools(m, own, view_of);
    plan_whole_grads(m, own, view_of);
    plan_pool_dy(m, own, view_of);
    plan_bf16(m, own, view_of, view_c0);
    plan_grad16(m, own, view_of, view_c0);
    m->momentum = calloc((size_t)(m->n_params ? m->n_params : 1), sizeof *m->momentum);
    if (!m->momentum) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto fail;
    }
    if (on_gpu) {
        const struct dse_layer *l = &m->net.layers[m->loss];
        m->host_prob = calloc((size_t)B * (size_t)(l->in_c > 0 ? l->in_c : 1), sizeof *m->host_prob);
        if (!m->host_prob) {
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            goto fail;
        }
        if ((st = params_to_device(m, err))) goto fail;
    }
    for (int p = 0; p < m->n_params && !opts->inference && !on_gpu; p++)
        if (!(m->momentum[p] = calloc((size_t)dse_tensor_count(m->params[p]), sizeof(float)))) {
            st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
            goto fail;
        }
    for (int i = 0; i < n && on_gpu; i++) /* the parameters are on the device now */
        if ((st = dse_cuda_node_prepare(m->gpu, &m->nodes[i], err))) goto fail;
    m->batch_dev[0] = on_gpu ? m->input.data : NULL;
    free(own), free(consumers), free(view_of), free(view_c0), free(offset);
    *out = m;
    return DSE_OK;
fail:
    free(own), free(consumers), free(view_of), free(view_c0), free(offset);
    dse_model_free(m);
    return st;
}

enum dse_status dse_model_set_dist(struct dse_model *m, struct dse_dist *d, enum dse_dist_reduce how,
                                   int64_t global_batch, struct dse_err *err) {
    const int P = dse_dist_size(d), r = dse_dist_rank(d);
    int s0, s1;
    int64_t first, count;
    dse_slice_rank(global_batch, r, P, &s0, &s1, &first, &count);
    const int total = dse_slices(global_batch, P), blocks = dse_slice_blocks(total, s0, s1, NULL, NULL);
    if (m->gpu)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "data-parallel training on a CUDA device is not built yet; "
                           "train the ranks on the CPU (--device cpu)");
    if (P > DSE_SLICES_MAX)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%d ranks on one batch; at most %d", P, DSE_SLICES_MAX);
    if (m->inference || count != m->batch)
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "rank %d's model has batch %d, not its share %lld of %lld",
                           r, m->batch, (long long)count, (long long)global_batch);
    int64_t nf = 0, nd = total; /* the loss's slices first */
    for (int i = 0; i < m->net.n_layers; i++) {
        const struct dse_node *n = &m->nodes[i];
        if (n->op == DSE_OP_BATCHNORM)
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "layer %s is batchnorm: its statistics would be each "
                               "rank's share's, not the batch's; data-parallel training takes nets without it",
                               n->layer->name);
        if (n->weight && n->weight->grad) nf += dse_tensor_count(n->weight);
        if (n->bias && n->bias->grad) nd += total * dse_tensor_count(n->bias);
    }
    m->dist_f = malloc(sizeof *m->dist_f * (size_t)(nf ? blocks * nf : 1));
    m->dist_d = malloc(sizeof *m->dist_d * (size_t)nd);
    m->dist_loss = calloc((size_t)total, sizeof *m->dist_loss);
    if (!m->dist_f || !m->dist_d || !m->dist_loss) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; i < m->net.n_layers; i++) {
        struct dse_node *n = &m->nodes[i];
        if (n->bias && n->bias->grad &&
            !(n->db_part = calloc((size_t)(total * dse_tensor_count(n->bias)), sizeof *n->db_part)))
            return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        if (blocks > 1 && n->op == DSE_OP_CONV2D && n->weight->grad &&
            !(n->dw_blocks = malloc(sizeof *n->dw_blocks * (size_t)((blocks - 1) * dse_tensor_count(n->weight)))))
            return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    }
    m->dist = d, m->dist_how = how, m->dist_nf = nf, m->dist_nd = nd, m->dist_blocks = blocks;
    m->cx.dist_first = first, m->cx.dist_batch = global_batch, m->cx.dist_loss = m->dist_loss;
    m->cx.slice_total = total, m->cx.slice_first = s0, m->cx.slice_count = s1 - s0;
    return DSE_OK;
}

enum dse_status dse_model_dist_bcast(struct dse_model *m, struct dse_err *err) {
    enum dse_status st = dse_dist_bcast(m->dist, &m->cx.rng, sizeof m->cx.rng, 0, err);
    for (int p = 0; p < m->n_params && !st; p++) {
        const size_t bytes = sizeof(float) * (size_t)dse_tensor_count(m->params[p]);
        st = dse_dist_bcast(m->dist, m->params[p]->data, bytes, 0, err);
        if (!st && m->momentum[p]) st = dse_dist_bcast(m->dist, m->momentum[p], bytes, 0, err);
    }
    return st;
}

/* The ranks' loss: each slice's sum (only its rank's is not 0) added across the ranks, then
 * the slices' by the slice tree, over the global batch: one process's bits. */
static enum dse_status dist_loss(struct dse_model *m, float *loss, struct dse_err *err) {
    const int total = m->cx.slice_total;
    memcpy(m->dist_d, m->dist_loss, sizeof *m->dist_d * (size_t)total);
    enum dse_status st = dse_dist_sum_d(m->dist, m->dist_d, total, err);
    if (!st) *loss = (float)(dse_slice_sum_d(m->dist_d, total) / (double)m->cx.dist_batch);
    return st;
}

/* The weight gradients into dist_f, block after block of this rank's run of slices (the
 * first block is weight->grad, the others a conv's dw_blocks, other ops' 0: their kernels
 * sum the rank's share at once), and the bias gradients' slices (db_part) into dist_d
 * (out = 1); or the sums back (out = 0): the weights' from the first block, every bias
 * channel's slices summed by the slice tree and rounded once to float. One walk, so both
 * directions share one layout. *nf, *nd: the values of each (one block's, for nf). */
static void dist_pack(struct dse_model *m, int out, int64_t *nf, int64_t *nd) {
    const int total = m->cx.slice_total;
    int64_t f = 0, d = 0;
    for (int i = 0; i < m->net.n_layers; i++) {
        const struct dse_node *n = &m->nodes[i];
        if (n->weight && n->weight->grad) {
            const int64_t c = dse_tensor_count(n->weight);
            float *g = n->weight->grad, *b = m->dist_f + f;
            memcpy(out ? b : g, out ? g : b, sizeof(float) * (size_t)c);
            for (int k = 1; out && k < m->dist_blocks; k++) {
                float *bk = b + k * m->dist_nf;
                if (n->dw_blocks) memcpy(bk, n->dw_blocks + (k - 1) * c, sizeof(float) * (size_t)c);
                else memset(bk, 0, sizeof(float) * (size_t)c);
            }
            f += c;
        }
        if (n->db_part) {
            const int64_t c = dse_tensor_count(n->bias);
            if (out) memcpy(m->dist_d + total + d, n->db_part, sizeof(double) * (size_t)(total * c));
            for (int64_t k = 0; !out && k < c; k++) {
                double part[DSE_SLICES_MAX];
                for (int s = 0; s < total; s++) part[s] = m->dist_d[total + d + s * c + k];
                n->bias->grad[k] = (float)dse_slice_sum_d(part, total);
            }
            d += total * c;
        }
    }
    *nf = f, *nd = d;
}

/* The ranks' gradients summed: the weights' blocks added where the slice tree adds them (or
 * by MPI, dist_how), the biases' slices as doubles, each slot only one rank's not 0, then
 * summed by the tree: as one process's threads add (engine/cpu/conv2d.c). */
static enum dse_status dist_grads(struct dse_model *m, struct dse_err *err) {
    int64_t f, d;
    dist_pack(m, 1, &f, &d);
    enum dse_status st = dse_dist_sum_slices(m->dist, m->dist_how, m->dist_f, f, m->cx.slice_total, err);
    if (!st) st = dse_dist_sum_d(m->dist, m->dist_d + m->cx.slice_total, d, err);
    if (!st) dist_pack(m, 0, &f, &d);
    return st;
}

void dse_model_set_training(struct dse_model *m, int training) {
    for (int i = 0; i < m->net.n_layers; i++) m->nodes[i].training = training;
}

void *dse_model_host_alloc(struct dse_model *m, size_t bytes, int *pinned) {
    void *p = NULL;
    *pinned = m->gpu && dse_cuda_host_alloc(m->gpu, bytes, &p, NULL) == DSE_OK;
    return *pinned ? p : malloc(bytes ? bytes : 1);
}

void dse_model_host_free(struct dse_model *m, void *p, int pinned) {
    if (pinned) dse_cuda_host_free(m->gpu, p);
    else free(p);
}

enum dse_status dse_model_load_batch(struct dse_model *m, const float *x, const int *labels,
                                     struct dse_err *err) {
    for (int b = 0; b < m->batch; b++) m->labels[b] = labels[b];
    const size_t bytes = sizeof(float) * (size_t)dse_tensor_count(&m->input);
    if (m->gpu) return dse_cuda_upload(m->gpu, m->input.data, x, bytes, err);
    memcpy(m->input.data, x, bytes);
    return DSE_OK;
}

enum dse_status dse_model_zero_grad(struct dse_model *m, struct dse_err *err) {
    if (m->inference)
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "backward on a model built for inference only");
    if (m->gpu) {
        enum dse_status st = dse_cuda_mp_clear(m->gpu, err);
        if (!st) st = dse_cuda_zero(m->gpu, m->grad_base, m->grad_floats * sizeof(float), err);
        return st ? st : dse_cuda_zero(m->gpu, m->dev_block + m->param_floats, m->param_floats * sizeof(float), err);
    }
    /* the runs between the buffers their one writers write whole (plan_whole_grads), in address order */
    float *at = m->grad_base, *const end = m->grad_base + m->grad_floats;
    for (;;) {
        const struct dse_tensor *next = NULL;
        for (int i = 0; i < m->net.n_layers; i++) {
            const struct dse_tensor *x = m->nodes[i].dx_whole ? m->nodes[i].in[0] : NULL;
            if (x && x->grad >= at && (!next || x->grad < next->grad)) next = x;
        }
        float *const stop = next ? next->grad : end;
        if (stop > at) dse_cpu_zero(&m->cx, at, (int64_t)(stop - at));
        if (!next) break;
        at = next->grad + dse_tensor_count(next);
    }
    for (int p = 0; p < m->n_params; p++) dse_tensor_zero_grad(m->params[p]);
    return DSE_OK;
}

enum dse_status dse_model_forward(struct dse_model *m, const float *x, const int *labels,
                                  float *loss, struct dse_err *err) {
    if (m->pending) { /* an SGD step that failed on the device */
        if (err) *err = m->pending_err;
        return m->pending;
    }
    enum dse_status st = dse_model_load_batch(m, x, labels, err);
    for (int i = 0; i < m->net.n_layers && !st; i++) st = dse_model_node_forward(m, i, err);
    /* On a device the input is one of dse_model_step's slots: a later upload into it must
     * wait for this forward too (the downloads below wait anyway, but say so). */
    for (int k = 0; m->gpu && k < 2; k++)
        if (m->input.data == m->batch_dev[k]) {
            enum dse_status rst = dse_cuda_slot_release(m->gpu, k, st ? NULL : err);
            if (!st) st = rst;
        }
    if (st) return st;
    if (!m->gpu) {
        *loss = m->outs[m->loss].data[0];
        return DSE_OK;
    }
    /* The loss, and the probabilities for dse_model_hits. */
    const struct dse_node *ln = &m->nodes[m->loss];
    if ((st = dse_cuda_download(m->gpu, loss, m->outs[m->loss].data, sizeof(float), err))) return st;
    return dse_cuda_download(m->gpu, m->host_prob, ln->st.prob,
                             sizeof(float) * (size_t)m->batch * (size_t)ln->in[0]->c, err);
}

enum dse_status dse_model_backward(struct dse_model *m, struct dse_err *err) {
    enum dse_status st = dse_model_zero_grad(m, err);
    for (int i = m->net.n_layers - 1; i >= 0 && !st; i--) st = dse_model_node_backward(m, i, err);
    return st;
}

void dse_model_sgd(struct dse_model *m, float lr, float momentum, float weight_decay) {
    const float s = m->grad_scale; /* this step's only: 1 * g == g, so unclipped steps are unchanged */
    m->grad_scale = 1.0f;
    if (m->gpu) { /* the decayed parameters, then the rest: each one contiguous run */
        if (m->inference || m->pending) return;
        int skip = 0; /* FP16: a conv gradient overflowed at this loss scale */
        if (dse_cuda_mp_step(m->gpu, &skip, NULL)) {
            m->pending = m->gpu->err.code, m->pending_err = m->gpu->err;
            return;
        }
        if (skip) return;
        float *w = m->dev_block, *g = w + m->param_floats, *v = g + m->param_floats;
        const size_t d = m->decay_floats, rest = m->param_floats - d;
        enum dse_status st = dse_cuda_sgd(m->gpu, w, g, v, (int64_t)d, lr, momentum, weight_decay, s);
        if (!st) st = dse_cuda_sgd(m->gpu, w + d, g + d, v + d, (int64_t)rest, lr, momentum, 0.0f, s);
        if (st) m->pending = st, m->pending_err = m->gpu->err;
        return;
    }
    for (int p = 0; p < m->n_params && !m->inference; p++) {
        struct dse_tensor *t = m->params[p];
        dse_cpu_sgd(&m->cx, t->data, t->grad, m->momentum[p], dse_tensor_count(t), lr, momentum,
                    m->decay[p] ? weight_decay : 0.0f, s);
    }
}

/* ---- training steps that do not wait ---------------------------------------------------- */

float *dse_model_batch_buffer(struct dse_model *m, struct dse_err *err) {
    const size_t bytes = sizeof(float) * (size_t)dse_tensor_count(&m->input);
    const int k = m->gpu ? m->slot : 0;
    if (!m->batch_host[k] && !(m->batch_host[k] = dse_model_host_alloc(m, bytes, &m->batch_pinned[k]))) {
        dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory (a batch buffer of %zu bytes)", bytes);
        return NULL;
    }
    if (m->gpu && dse_cuda_slot_wait_host(m->gpu, k, err)) return NULL; /* its last batch has left it */
    return m->batch_host[k];
}

/* The CPU's step: what engine/train.c's loop did before steps were queued. */
static enum dse_status cpu_step(struct dse_model *m, const float *x, const int *labels, float lr, float momentum,
                                float weight_decay, double clip_norm, struct dse_err *err) {
    struct dse_step_tally *t = &m->tally;
    if (t->diverged_at >= 0) { /* nothing more until the tally is reset */
        t->steps++;
        return DSE_OK;
    }
    float loss;
    enum dse_status st = dse_model_forward(m, x, labels, &loss, err);
    if (st) return st;
    if (m->dist && (st = dist_loss(m, &loss, err))) return st; /* every rank sees the batch's loss */
    t->loss_sum += loss;
    if (!isfinite(loss)) {
        t->diverged_at = t->steps++;
        return DSE_OK;
    }
    t->steps++;
    if ((st = dse_model_backward(m, err))) return st;
    if (m->dist && (st = dist_grads(m, err))) return st;
    if (m->grad_hook) m->grad_hook(m->grad_hook_arg, m);
    if (clip_norm > 0) {
        double norm;
        int clipped;
        if ((st = dse_model_clip_grad(m, clip_norm, &norm, &clipped, err))) return st;
        t->clipped += clipped;
    }
    dse_model_sgd(m, lr, momentum, weight_decay);
    return DSE_OK;
}

/* A failure the device's ctx recorded, as the caller's. */
static enum dse_status gpu_fail(const struct dse_cuda_ctx *g, struct dse_err *err) {
    if (err) *err = g->err;
    return g->err.code ? g->err.code : DSE_ERR_CUDA;
}

/* A device's step, queued: the input on the copy stream (or copied now), forward, the
 * loss into the tally, backward, the clip factor and SGD reading the tally. */
static enum dse_status gpu_step(struct dse_model *m, const float *x, const int *labels, float lr, float momentum,
                                float weight_decay, double clip_norm, struct dse_err *err) {
    struct dse_cuda_ctx *g = m->gpu;
    const size_t bytes = sizeof(float) * (size_t)dse_tensor_count(&m->input);
    const int k = m->slot;
    enum dse_status st;
    if (m->pending) { /* an SGD step that failed on the device */
        if (err) *err = m->pending_err;
        return m->pending;
    }
    if (m->inference)
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "a training step on a model built for inference only");
    if (!m->batch_dev[k] && (st = dse_cuda_alloc(g, bytes, (void **)&m->batch_dev[k], err))) return st;
    m->input.data = m->batch_dev[k];
    for (int b = 0; b < m->batch; b++) m->labels[b] = labels[b];
    st = x == m->batch_host[k] && m->batch_pinned[k] ? dse_cuda_slot_upload(g, k, m->input.data, x, bytes, err)
                                                      : dse_cuda_upload(g, m->input.data, x, bytes, err);
    for (int i = 0; i < m->net.n_layers && !st; i++) st = dse_model_node_forward(m, i, err);
    if (!st && dse_cuda_tally_loss(g, m->outs[m->loss].data)) st = gpu_fail(g, err);
    if (!st) st = dse_model_backward(m, err);
    int skip = 0; /* FP16: a conv gradient overflowed at this loss scale (this waits) */
    if (!st) st = dse_cuda_mp_step(g, &skip, err);
    float *w = m->dev_block, *gr = w + m->param_floats, *v = gr + m->param_floats;
    const size_t d = m->decay_floats, rest = m->param_floats - d;
    m->grad_scale = 1.0f;
    if (!st && !skip &&
        (dse_cuda_tally_scale(g, gr, (int64_t)m->param_floats, clip_norm) ||
         dse_cuda_sgd_tallied(g, w, gr, v, (int64_t)d, lr, momentum, weight_decay) ||
         dse_cuda_sgd_tallied(g, w + d, gr + d, v + d, (int64_t)rest, lr, momentum, 0.0f)))
        st = gpu_fail(g, err);
    /* The slot is free again after whatever this step queued, failed or not; the next step
     * takes the other one. */
    enum dse_status rst = dse_cuda_slot_release(g, k, st ? NULL : err);
    m->slot ^= 1;
    return st ? st : rst;
}

enum dse_status dse_model_step(struct dse_model *m, const float *x, const int *labels, float lr, float momentum,
                               float weight_decay, double clip_norm, struct dse_err *err) {
    return m->gpu ? gpu_step(m, x, labels, lr, momentum, weight_decay, clip_norm, err)
                  : cpu_step(m, x, labels, lr, momentum, weight_decay, clip_norm, err);
}

enum dse_status dse_model_tally(struct dse_model *m, struct dse_step_tally *t, int reset, struct dse_err *err) {
    if (m->gpu) return dse_cuda_tally_take(m->gpu, t, reset, err);
    *t = m->tally;
    if (reset) {
        memset(&m->tally, 0, sizeof m->tally);
        m->tally.diverged_at = -1;
    }
    return DSE_OK;
}

enum dse_status dse_model_clip_grad(struct dse_model *m, double max_norm, double *norm, int *clipped,
                                    struct dse_err *err) {
    double sum = 0;
    *norm = 0, *clipped = 0;
    m->grad_scale = 1.0f; /* a factor set before but never stepped with does not carry over */
    if (m->inference) return DSE_OK;
    if (m->gpu) { /* the gradients are one run after the parameters in dev_block */
        enum dse_status st = dse_cuda_sumsq(m->gpu, m->dev_block + m->param_floats, (int64_t)m->param_floats, &sum);
        if (st) {
            if (err) *err = m->gpu->err;
            return st;
        }
    } else {
        for (int p = 0; p < m->n_params; p++) sum += dse_cpu_sumsq(m->params[p]->grad, dse_tensor_count(m->params[p]));
    }
    m->grad_scale = dse_clip_factor(sum, max_norm, norm, clipped);
    return DSE_OK;
}

const float *dse_model_probs(const struct dse_model *m) {
    return m->gpu ? m->host_prob : m->nodes[m->loss].st.prob; /* a device model downloads it */
}

void dse_model_hits(const struct dse_model *m, int count, int *top1, int *top5) {
    const struct dse_node *ln = &m->nodes[m->loss];
    int k = ln->in[0]->c;
    *top1 = *top5 = 0;
    const float *prob = dse_model_probs(m);
    for (int b = 0; b < count && b < m->batch; b++) {
        const float *p = prob + (size_t)b * (size_t)k;
        int label = m->labels[b], rank = 0;
        for (int j = 0; j < k; j++) /* classes strictly more likely, ties to the lower index */
            if (p[j] > p[label] || (p[j] == p[label] && j < label)) rank++;
        *top1 += rank == 0;
        *top5 += rank < 5;
    }
}

int dse_model_bf16_acts(const struct dse_model *m) {
    int count = 0;
    for (int i = 0; i < m->net.n_layers; i++) count += m->outs[i].bf16;
    return count;
}

int dse_model_bf16_grads(const struct dse_model *m) {
    int count = 0;
    for (int i = 0; i < m->net.n_layers; i++) count += m->outs[i].grad16;
    return count;
}

int dse_model_bf16_fp32(const struct dse_model *m, char *buf, size_t size) {
    enum { TAIL = 48 }; /* room kept for ", and 1234 more compute in float32" */
    int count = 0, more = 0;
    size_t at = 0;
    if (size) buf[0] = 0;
    for (int i = 0; !m->gpu && m->cx.bf16 == DSE_CPU_BF16_BY_RULE && i < m->net.n_layers; i++) {
        char why[64], one[200];
        if (m->nodes[i].op != DSE_OP_CONV2D || !dse_cpu_conv_bf16_fp32(&m->nodes[i], why, sizeof why)) continue;
        const int k = snprintf(one, sizeof one, "%s%s (%s)", count ? ", " : "bf16: ", m->net.layers[i].name, why);
        if (!more && k > 0 && at + (size_t)k + TAIL < size) memcpy(buf + at, one, (size_t)k + 1), at += (size_t)k;
        else more++; /* no room: counted, not named */
        count++;
    }
    if (more && at + TAIL < size) at += (size_t)snprintf(buf + at, size - at, ", and %d more", more);
    if (count && at + TAIL < size + 1) snprintf(buf + at, size - at, " compute%s in float32", count == 1 ? "s" : "");
    return count;
}

int dse_model_nonfinite(const struct dse_model *m) {
    if (m->gpu) { /* every parameter value is in the first run of dev_block */
        int bad = 0;
        enum dse_status st = dse_cuda_nonfinite(m->gpu, m->dev_block, (int64_t)m->param_floats, &bad);
        return bad || st; /* a device that cannot say counts as diverged; forward reports why */
    }
    for (int p = 0; p < m->n_params; p++) {
        const struct dse_tensor *t = m->params[p];
        int64_t n = dse_tensor_count(t);
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(t->data[i])) return 1;
    }
    return 0;
}

size_t dse_model_bytes(const struct dse_model *m) {
    if (m->gpu) { /* device memory: arena, parameter block, node state, workspace */
        size_t b = (m->arena_floats + m->dev_floats) * sizeof(float);
        if (m->batch_dev[1]) b += (size_t)dse_tensor_count(&m->input) * sizeof(float);
        for (int i = 0; i < m->net.n_layers; i++) b += m->nodes[i].st.bytes;
        return b + m->gpu->stats.workspace_bytes + m->gpu->stats.scratch16_bytes;
    }
    size_t b = m->arena_floats * sizeof(float) + (size_t)dse_tensor_count(&m->input) * sizeof(float);
    for (int p = 0; p < m->n_params; p++) /* weights, and for training their grads and momentum */
        b += (m->inference ? 1 : 3) * (size_t)dse_tensor_count(m->params[p]) * sizeof(float);
    for (int i = 0; i < m->net.n_layers; i++) b += m->nodes[i].st.bytes;
    return b + (size_t)m->n_gsums * sizeof(double) + m->cx.ws_bytes;
}

/* ---- devices (issue #6) ------------------------------------------------------------------ */

enum dse_status dse_model_node_forward(struct dse_model *m, int i, struct dse_err *err) {
    DSE_ASSERT(i >= 0 && i < m->net.n_layers);
    enum dse_status st = m->gpu ? dse_cuda_forward(m->gpu, &m->nodes[i]) : dse_cpu_forward(&m->cx, &m->nodes[i]);
    if (st && err) *err = m->gpu ? m->gpu->err : m->cx.err;
    return st;
}

enum dse_status dse_model_node_backward(struct dse_model *m, int i, struct dse_err *err) {
    DSE_ASSERT(i >= 0 && i < m->net.n_layers);
    enum dse_status st = m->gpu ? dse_cuda_backward(m->gpu, &m->nodes[i]) : dse_cpu_backward(&m->cx, &m->nodes[i]);
    if (st && err) *err = m->gpu ? m->gpu->err : m->cx.err;
    return st;
}

enum dse_status dse_model_sync(struct dse_model *m, struct dse_err *err) {
    return m->gpu ? dse_cuda_sync(m->gpu, err) : DSE_OK;
}

/* Walk the checkpointed values in checkpoint order, copying them into buf or from src
 * (neither: only count). Returns the count; stops at the first failure (*st). */
static uint64_t state_walk(const struct dse_model *m, float *buf, const float *src, enum dse_status *st,
                           struct dse_err *err) {
    uint64_t n = 0;
    *st = DSE_OK;
    for (int p = 0; p < m->n_params && !*st; p++) {
        const size_t c = (size_t)dse_tensor_count(m->params[p]);
        float *where[2] = { m->params[p]->data, m->momentum[p] };
        for (int k = 0; k < 2 && !*st; k++, n += c) {
            if (!buf && !src) continue;
            if (!where[k]) continue; /* inference: no momentum; zeros */
            if (m->gpu)
                *st = buf ? dse_cuda_download(m->gpu, buf + n, where[k], c * sizeof(float), err)
                          : dse_cuda_upload(m->gpu, where[k], src + n, c * sizeof(float), err);
            else if (buf)
                memcpy(buf + n, where[k], c * sizeof(float));
            else
                memcpy(where[k], src + n, c * sizeof(float));
        }
    }
    for (int i = 0; i < m->net.n_layers && !*st; i++) {
        struct dse_tensor *rs[2] = { m->nodes[i].run_mean, m->nodes[i].run_var };
        for (int k = 0; k < 2 && !*st; k++) {
            if (!rs[k]) continue;
            const size_t c = (size_t)dse_tensor_count(rs[k]);
            if (m->gpu && (buf || src))
                *st = buf ? dse_cuda_download(m->gpu, buf + n, rs[k]->data, c * sizeof(float), err)
                          : dse_cuda_upload(m->gpu, rs[k]->data, src + n, c * sizeof(float), err);
            else if (buf)
                memcpy(buf + n, rs[k]->data, c * sizeof(float));
            else if (src)
                memcpy(rs[k]->data, src + n, c * sizeof(float));
            n += c;
        }
    }
    return n;
}

uint64_t dse_model_state_count(const struct dse_model *m) {
    enum dse_status st;
    return state_walk(m, NULL, NULL, &st, NULL);
}

enum dse_status dse_model_state_get(const struct dse_model *m, float *buf, struct dse_err *err) {
    enum dse_status st;
    uint64_t n = 0;
    for (int p = 0; p < m->n_params; p++) n += 2 * (uint64_t)dse_tensor_count(m->params[p]);
    if (m->inference) memset(buf, 0, (size_t)n * sizeof(float)); /* no momentum to copy: zeros */
    state_walk(m, buf, NULL, &st, err);
    return st;
}

enum dse_status dse_model_state_put(struct dse_model *m, const float *buf, struct dse_err *err) {
    enum dse_status st;
    state_walk(m, NULL, buf, &st, err);
    return st;
}
