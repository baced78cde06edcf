/* analysis.h: closed-form costs of a network (thesis ch. 4): per-layer and total
 * parameters, FLOPs, activations, receptive fields and memory estimates at any batch
 * size; rows that show a Fire module (or an ONNX block) as one line; deltas between two networks with
 * the reach of each change (local / regional / global). Conventions and their
 * sources: docs/conventions.md. Nothing here allocates or prints. */
#ifndef DSE_ANALYSIS_H
#define DSE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "metaparams/net.h"

#define DSE_BYTES_PER_VALUE 4 /* float32 */

struct dse_cost_layer {
    int64_t weights;      /* learned weights */
    int64_t biases;       /* learned biases (and batchnorm/scale shifts) */
    int64_t params;       /* weights + biases */
    int64_t buffers;      /* stored but not learned: batchnorm running mean and variance */
    int64_t flops;        /* forward, whole batch, 2 per multiply-add; conv and fc only,
                             bias adds not counted (thesis ch. 4 convention) */
    int64_t other_ops;    /* forward, whole batch: bias adds, pooling, elementwise,
                             normalization and softmax work, one per basic operation */
    int64_t activations;  /* output values for the whole batch; 0 for in-place layers,
                             1 for a loss or accuracy (one scalar per batch) */
    /* Liveness, for the inference memory estimate. */
    int     buffer;       /* index of the layer that owns this layer's output tensor */
    int     last_use;     /* last layer reading that tensor (n_layers for the net output) */
    int64_t freed_after;  /* values of the tensors that die once this layer has run */
};

struct dse_cost_totals {
    int64_t batch;
    int64_t weights, biases, params, buffers;
    int64_t flops;            /* forward */
    int64_t flops_train;      /* 3 x forward: forward, data gradient, weight gradient (thesis 4.3.3) */
    int64_t other_ops;
    int64_t input_values;     /* batch x C x H x W */
    int64_t activations;      /* sum over layers, input excluded */
    int64_t param_bytes;      /* params x 4 */
    int64_t model_bytes;      /* (params + buffers) x 4: what a checkpoint of the weights holds */
    int64_t activation_bytes; /* activations x 4 */
    int64_t mem_infer_bytes;  /* estimate: model + the largest set of tensors alive at once */
    int64_t mem_train_bytes;  /* estimate: input + activations and their gradients + params,
                                 their gradients and momentum + buffers */
    int64_t peak_live_values; /* the largest set of tensors alive at once, in values */
};

/* Multiply-accumulates (MACs, what peers such as ptflops and fvcore count) from FLOPs:
 * FLOPs count 2 per multiply-add and only conv and fc have any (docs/conventions.md), so
 * MACs = FLOPs / 2 exactly, per layer and in total. The one place this rule is written:
 * reports, dse analyze and the search's "macs" objective (sweep/objective.def) call it. */
int64_t dse_cost_macs(int64_t flops);

/* Deep Compression's file size estimated before training (analysis/compress_est.c, issue
 * #35; docs/conventions.md, "Compressed size estimate": an estimate, labelled so). The
 * assumptions, each named once here: */
#define DSE_COMPRESS_EST_INDEX_BITS   4   /* a kept weight's relative sparse index, Huffman-coded
                                             (Han et al. store 4 to 8 bits before coding) */
#define DSE_COMPRESS_EST_TENSOR_BYTES 96  /* one stored tensor's own header: name, role, count,
                                             bits, stream lengths */
#define DSE_COMPRESS_EST_HEADER_BYTES 512 /* the file's header, text block (data, classes,
                                             normalization) and CRC */

struct dse_compress_est {
    int64_t weights_kept;   /* weights of weighted layers left after pruning */
    int64_t weight_bytes;   /* their codebook indices: kept x bits / 8 */
    int64_t index_bytes;    /* their sparse indices: kept x DSE_COMPRESS_EST_INDEX_BITS / 8 (none
                               for a layer kept whole) */
    int64_t codebook_bytes; /* min(2^bits, kept + 1) float32 per layer */
    int64_t raw_bytes;      /* biases, batchnorm's values and buffers, other weights: float32 */
    int64_t header_bytes;   /* the file's and each tensor's fixed headers */
    int64_t total_bytes;
};

/* The estimated bytes of net (inferred) compressed to target density (0, 1] and bits (1 to
 * 16): per weighted layer (metaparams/layers.def) the weights dse_net_prune_density keeps,
 * each bits + DSE_COMPRESS_EST_INDEX_BITS wide, and its codebook; every other value raw, 4
 * bytes; the fixed headers. layers: dse_cost_net's per-layer costs of net (any batch). The
 * parts into *out (may be NULL); returns the total. Allocates nothing. */
int64_t dse_cost_compressed_est(const struct dse_net *net, const struct dse_cost_layer *layers, double density,
                                int bits, struct dse_compress_est *out);

/* Costs of an inferred network (dse_net_infer) at the given batch. layers has room for
 * net->n_layers entries (it is also the scratch space: nothing is allocated).
 * Fails with DSE_ERR_CONFIG if batch < 1. */
enum dse_status dse_cost_net(const struct dse_net *net, int64_t batch,
                             struct dse_cost_layer *layers, struct dse_cost_totals *tot,
                             struct dse_err *err);

/* One line of a report: a primitive layer, or a run of consecutive layers of one
 * module (a Fire module) summed. */
struct dse_cost_row {
    char        name[DSE_NAME_MAX];
    const char *type;            /* the layer type's name, "fire" or "module" */
    int         first, last;     /* layer index range, inclusive */
    int         in_place;        /* every layer of the row works in place */
    int         head;            /* every layer of the row is a classifier's head: softmax,
                                    softmax_loss or accuracy (no parameters; turns scores
                                    into probabilities, a loss or a hit rate) */
    int         in_c, in_h, in_w;    /* input 0 of the row's first layer */
    int         out_c, out_h, out_w;
    int         rf_h, rf_w;
    struct dse_cost_layer cost;  /* summed over the row's layers (liveness fields unused) */
};

/* What one row of a report holds (dse analyze: docs/cli.md). 0 and 1 are the old `expand`. */
enum dse_rows {
    DSE_ROWS_MODULES = 0, /* a Fire module's layers one row, every other layer its own */
    DSE_ROWS_LAYERS  = 1, /* every layer its own row (--expand) */
    DSE_ROWS_BLOCKS  = 2, /* as MODULES, and each run of two or more consecutive layers outside
                             modules whose names have one block key (dse_block_key) one row of
                             type "block", named by the first layer's prefix that spells the key */
};

/* Rows of a report in the given view. rows has room for net->n_layers entries. Returns the
 * number of rows; every layer is in exactly one row, so the rows' costs sum to the totals. */
int dse_cost_rows(const struct dse_net *net, const struct dse_cost_layer *layers, enum dse_rows view,
                  struct dse_cost_row *rows);

/* Blocks by name prefix (analysis/block.c; issue #34). A layer name is a module path:
 * - with a '/', its segments (empty ones skipped) but the last, which names the op or part
 *   (`/layer1/layer1.0/conv1/Conv`, `fire2/squeeze1x1`); a segment that starts with the one
 *   before it and a '.' keeps only the rest (`layer1.0` below `layer1` is `0`), and each is
 *   split at '.';
 * - without one, all of its '.'-separated parts (`layer1.0.conv1`, `features.3.squeeze`).
 * The block key is the path's first DSE_BLOCK_DEPTH components joined by '.' (`layer1.0`,
 * `features.3`, `fire2`); a name without a '.' is its own key, so such names never share one
 * (`Conv_0`), and a slashed name without scopes (`/Flatten`) has none. Writes the key to key
 * (size bytes, DSE_NAME_MAX is enough) and returns the length of the name's prefix that spells
 * it (`/layer1/layer1.0`, the block's name in a report), 0 if the name has no key. */
#define DSE_BLOCK_DEPTH 2
int dse_block_key(const char *name, char *key, size_t size);

/* The last layer of the block that starts at layer first: the end of the run of layers
 * outside Fire modules with first's block key; first itself if it has none, is in a module
 * or the next layer's key differs. */
int dse_block_end(const struct dse_net *net, int first);

/* Deltas between two networks (thesis Tables 4.3-4.8). */
enum dse_delta_kind { DSE_DELTA_SAME = 0, DSE_DELTA_CHANGED, DSE_DELTA_ADDED, DSE_DELTA_REMOVED };
enum dse_reach      { DSE_REACH_NONE = 0, DSE_REACH_LOCAL, DSE_REACH_REGIONAL, DSE_REACH_GLOBAL };

struct dse_delta_row {
    enum dse_delta_kind        kind;
    const struct dse_cost_row *base;    /* NULL if added (borrowed from the caller's rows) */
    const struct dse_cost_row *variant; /* NULL if removed */
};

struct dse_delta {
    int            n_rows;
    int            first_changed, last_changed; /* indices into rows; -1 if nothing changed */
    int            span;    /* rows that do work in [first_changed, last_changed], up to
                               the output (a head at the end follows it and is not
                               counted): in-place rows (ReLU, dropout...) follow their
                               producer */
    enum dse_reach reach;   /* LOCAL: the changed row and at most its successor;
                               GLOBAL: reaches the output, the last row that does work
                               before a head (softmax, loss, accuracy); REGIONAL: in
                               between (thesis ch. 4: docs/cli.md, "dse diff") */
};

/* Match rows by name: variant order, removed base rows placed where they stood.
 * A row is changed if its type, input or output shape, params, FLOPs or other ops
 * differ. out has room for
 * nb + nv entries. */
void dse_delta_rows(const struct dse_cost_row *base, int nb, const struct dse_cost_row *variant,
                    int nv, struct dse_delta_row *out, struct dse_delta *d);

const char *dse_reach_str(enum dse_reach r);

/* Pareto frontier of n points: minimize x, and maximize y (maximize_y = 1, e.g.
 * accuracy) or minimize y (maximize_y = 0, e.g. FLOPs before training). A point is on
 * the frontier if no other point is at least as good in both and better in one; equal
 * points are all kept. Writes the frontier's indices to out (room for n), sorted by
 * increasing x, and returns their count. Points with a NaN coordinate are never on it.
 * scratch has room for n ints. O(n log n). */
int dse_pareto_front(const double *x, const double *y, int n, int maximize_y, int *out,
                     int *scratch);
const char *dse_delta_kind_str(enum dse_delta_kind k);

/* Communication model of synchronous data-parallel training (analysis/comm.c; FireCaffe,
 * thesis ch. 3; docs/comm-model.md). P workers each compute the weight gradients of their
 * share of a global batch; the gradients, |grad W| bytes (4 x params), are summed across
 * workers and every worker applies the same step. Hockney's model per message: latency
 * alpha plus bytes / BW. Parameter server (eq. 3.3): the server's link carries P messages
 * of |grad W| in turn (gradients in and weights out overlap on a full-duplex link, as eq.
 * 3.3 counts them once); reduction tree (eq. 3.4): ceil(log2 P) levels up (sum) and as many
 * down (broadcast), one message of |grad W| per level. One worker communicates nothing. */
#define DSE_COMM_WORKERS_MAX 65536
/* The global batch the communication model assumes unless told (dse analyze --workers P
 * without --batch; docs/comm-model.md). */
#define DSE_COMM_BATCH_DEFAULT 32

struct dse_comm_opts {
    int64_t grad_bytes;  /* |grad W|: bytes of one worker's gradients, 4 x params */
    double  bandwidth;   /* BW: bytes per second of one link, > 0 */
    double  latency_s;   /* alpha: seconds per message, >= 0 (0: eqs. 3.3 and 3.4 exactly) */
    int64_t batch;       /* global batch per step, >= 1, split as evenly as it goes */
    double  img_per_s;   /* one worker's training throughput, images per second, > 0 */
};

struct dse_comm_point {
    int64_t workers;
    int64_t images;          /* the largest share of the batch: ceil(batch / workers) */
    double  ps_s, tree_s;    /* communication per step: parameter server, reduction tree */
    double  compute_s;       /* images / img_per_s: the slowest worker sets the step */
    double  step_ps_s, step_tree_s;           /* compute + communication: no overlap */
    double  speedup_ps, speedup_tree;         /* one worker's step / this step */
    double  efficiency_ps, efficiency_tree;   /* speedup / workers */
};

/* ceil(log2 workers): the levels of a binomial reduction tree (0 for one worker); a number
 * of workers between two powers of two costs as many levels as the next power. */
int dse_comm_tree_levels(int64_t workers);

/* Seconds per step of the parameter server, P (|grad W| / BW + alpha), and of the reduction
 * tree, 2 ceil(log2 P) (|grad W| / BW + alpha); both 0 for P = 1. */
double dse_comm_ps_s(const struct dse_comm_opts *o, int64_t workers);
double dse_comm_tree_s(const struct dse_comm_opts *o, int64_t workers);

/* The model at `workers` workers. DSE_ERR_CONFIG, naming the setting, if an option is out
 * of range (bandwidth <= 0 or not finite, latency < 0, batch < 1, img_per_s <= 0,
 * grad_bytes < 0) or workers is not from 1 to min(batch, DSE_COMM_WORKERS_MAX). */
enum dse_status dse_comm_point(const struct dse_comm_opts *o, int64_t workers, struct dse_comm_point *out,
                               struct dse_err *err);

/* The worker counts of a report up to max: 1, 2, 4, ... below max, then max. Writes at most
 * cap of them to out and returns how many (18 is enough for DSE_COMM_WORKERS_MAX). */
int dse_comm_workers_list(int64_t max, int64_t *out, int cap);

#endif
