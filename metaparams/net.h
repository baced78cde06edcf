/* net.h: the one in-memory network every part of dse shares (analyzer, generator,
 * engine). A network is an input shape plus an ordered list of primitive layers; each
 * layer names its inputs by index of an earlier layer, so the list is a DAG in
 * topological order. Fire modules are expanded into primitive layers that remember
 * their module name. Shapes follow Caffe's rules exactly; see docs/conventions.md. */
#ifndef DSE_METAPARAMS_NET_H
#define DSE_METAPARAMS_NET_H

#include "base/base.h"

#define DSE_NAME_MAX   96
#define DSE_MAX_INPUTS 64 /* a layer's inputs: a DenseNet concat's (torchvision's DenseNet-201: 49) */
#define DSE_INPUT_DATA (-1)  /* input index that means "the network's input blob" */
#define DSE_DIM_MAX    (1 << 24) /* largest channel count, map size or hyper-parameter:
                                    keeps every shape product exact in int64 */

enum dse_layer_type {
#define DSE_LAYER(e, name, min_in, max_in, weighted, in_place, view, caffe) DSE_LAYER_##e,
#include "metaparams/layers.def"
#undef DSE_LAYER
    DSE_LAYER_COUNT
};

/* A layer's part in a Fire module (metaparams/roles.def); NONE outside one. */
enum dse_role {
    DSE_ROLE_NONE = 0,
#define DSE_ROLE(e, suffix) DSE_ROLE_##e,
#include "metaparams/roles.def"
#undef DSE_ROLE
    DSE_ROLE_COUNT
};

enum dse_round   { DSE_ROUND_CEIL = 0, DSE_ROUND_FLOOR };        /* pooling output size */
enum dse_eltwise { DSE_ELTWISE_SUM = 0, DSE_ELTWISE_PROD, DSE_ELTWISE_MAX };
enum dse_bypass  { DSE_BYPASS_NONE = 0, DSE_BYPASS_SIMPLE, DSE_BYPASS_COMPLEX };

struct dse_layer {
    enum dse_layer_type type;
    int   n_inputs;
    int   inputs[DSE_MAX_INPUTS]; /* indices of earlier layers, or DSE_INPUT_DATA */
    int   in_place;               /* output overwrites input 0 (Caffe top == bottom) */
    int   line;                   /* line in the file it was read from; 0 if none */
    enum dse_role role;           /* part of the Fire module `module`; NONE outside one */

    /* Hyper-parameters; which ones apply depends on type. */
    int   num_output;             /* conv filters, fc outputs */
    int   kernel_h, kernel_w;     /* conv, pool */
    int   stride_h, stride_w;
    int   pad_h, pad_w;
    int   dilation_h, dilation_w; /* conv */
    int   groups;                 /* conv, deconv; shuffle: the channel groups interleaved */
    int   depthwise;              /* conv: one group per input channel; dse_net_infer sets
                                     groups to the input's channels */
    int   bias;                   /* conv, fc, scale: has a bias term */
    int   shared;                 /* conv, fc, scale: its learned blobs that are an earlier
                                     layer's (bit 0 the weights, bit 1 the bias: Caffe's blob
                                     order), shared by name as Caffe's param { name: } shares
                                     them (siamese nets): counted there, not here (issue #34) */
    int   affine;                 /* batchnorm: learns gamma and beta (2C params); Caffe's
                                     BatchNorm does not (its Scale layer does) */
    int   global;                 /* pool: over the whole input (kernel = input size) */
    enum dse_round   round;       /* pool: Caffe's ceil (default) or floor */
    enum dse_eltwise eltwise_op;  /* eltwise */
    int   lrn_size;               /* lrn: local_size */
    float lrn_alpha, lrn_beta, lrn_k; /* lrn: Caffe's alpha, beta, k (ONNX's bias): y = x *
                                     (k + alpha/size * sum of x^2 over the window)^-beta */
    float bn_eps;                 /* batchnorm: added to the variance; 1e-5 unless the file
                                     says (Caffe's and ONNX's eps, Inception's 0.001) */
    float dropout_ratio;          /* dropout */
    int   dims[3];                /* reshape: output C, H, W; 0 copies the input's, -1 is
                                     inferred from the others (at most one) */
    int   slice_begin, slice_end; /* slice: channels [begin, end) of the input; end 0: to
                                     the last channel */
    int   slice_part, slice_parts;/* slice with parts > 0: part `part` of `parts` equal
                                     parts of the channels (Caffe's Slice without points) */
    float power, power_scale, power_shift; /* power: (shift + scale * x) ^ power */
    float negative_slope;         /* relu: the slope below 0 (Caffe's negative_slope; ONNX's
                                     LeakyRelu alpha); 0 is the plain ReLU */

    /* Inferred by dse_net_infer. */
    int   in_c, in_h, in_w;       /* shape of input 0 */
    int   out_c, out_h, out_w;
    int   rf_h, rf_w;             /* receptive field on the network input, in pixels */
    int   jump_h, jump_w;         /* input pixels between adjacent outputs */

    /* Names last: shape inference and costing never read them, so the fields they do
     * read share fewer cache lines. */
    char  name[DSE_NAME_MAX];
    char  module[DSE_NAME_MAX];  /* fire module this layer was expanded from (role != NONE);
                                    "" if none */

    /* The settings of types only ONNX models bring (issue #34), after the names for the same
     * reason: a SqueezeNet's layers never read them. */
    int   channel_shared;         /* prelu: one learned slope for all channels (else one per
                                     channel) */
    float clip_min, clip_max;     /* clip: min(max(x, clip_min), clip_max) (ReLU6: 0, 6) */
    float hs_alpha, hs_beta;      /* hardsigmoid: max(0, min(1, alpha * x + beta)) */
    int   resize_linear;          /* resize: 0 nearest, 1 (bi)linear interpolation */
    float resize_scale_h, resize_scale_w; /* resize: out = floor(in * scale) where the size
                                     below is 0 (ONNX's Resize and Upsample) */
    int   resize_h, resize_w;     /* resize: the output size where given (0: from the scale) */
    int   output_pad_h, output_pad_w; /* deconv: added at the end of the output (ONNX's
                                     output_padding; Caffe has none) */
    char  op_type[32];           /* unknown: the op it stands for (an ONNX op type read with
                                    --skip-unknown), printed as its type; "" otherwise */
};

struct dse_net {
    char  name[DSE_NAME_MAX];
    int   in_c, in_h, in_w;
    int   n_layers, cap_layers;
    struct dse_layer *layers;    /* owned */
};

/* Fire module (thesis ch. 5): squeeze 1x1 conv, then expand 1x1 and 3x3 convs
 * concatenated on channels, with ReLU after each conv and an optional bypass. */
struct dse_fire {
    char name[DSE_NAME_MAX];
    int  squeeze, expand1x1, expand3x3;
    enum dse_bypass bypass;  /* SIMPLE: identity add, needs in channels == out channels.
                                COMPLEX: identity where channels match, else 1x1 conv. */
    int  line;
};

/* Name of a layer type ("conv", "maxpool", ...); "?" if out of range. */
const char *dse_layer_type_str(enum dse_layer_type t);
/* Type by name; returns 0 and sets *out, or -1 if no type has that name. */
int  dse_layer_type_from_str(const char *s, enum dse_layer_type *out);
/* 1 if layers of this type hold learned weights. */
int  dse_layer_type_weighted(enum dse_layer_type t);
/* 1 if layers of this type may work in place (top == bottom). */
int  dse_layer_type_in_place(enum dse_layer_type t);
/* 1 if a layer of this type is a view of its input (flatten, reshape): no new values. */
int  dse_layer_type_view(enum dse_layer_type t);
/* Caffe's name of a layer type ("Convolution", "Pooling", ...); "?" if out of range or
 * Caffe has no such layer (layers.def's ""). */
const char *dse_layer_caffe_type(enum dse_layer_type t);
const char *dse_bypass_str(enum dse_bypass b);
/* A role's sub-layer name suffix ("squeeze1x1", ...); "" for NONE. */
const char *dse_role_suffix(enum dse_role r);
/* The role whose suffix is s; NONE if no role has it. */
enum dse_role dse_role_from_suffix(const char *s);

/* A layer of the given type with Caffe's defaults: stride 1, dilation 1, groups 1,
 * bias on, ceil rounding, one input: the previous layer (set by dse_net_add). */
struct dse_layer dse_layer_make(enum dse_layer_type t, const char *name);

void dse_net_init(struct dse_net *net, const char *name, int c, int h, int w);
void dse_net_deinit(struct dse_net *net);
/* Deep copy; dst must be uninitialized or deinitialized. */
enum dse_status dse_net_copy(struct dse_net *dst, const struct dse_net *src, struct dse_err *err);

/* Append a copy of *l. If l->n_inputs is 0 the layer takes the previous layer (or the
 * network input if it is the first). Checks input count and indices, not shapes.
 * in_place is allowed for relu, dropout, batchnorm, scale and softmax (shape-preserving
 * layers, as in Caffe). A layer that reads a tensor an earlier in-place layer has
 * overwritten (conv1 after an in-place relu1 of conv1) turns that layer out of place:
 * the value it reads must still exist. */
enum dse_status dse_net_add(struct dse_net *net, const struct dse_layer *l, struct dse_err *err);

/* The builders' fast path, with no copy of the layer: dse_net_push returns the slot
 * after the last layer holding dse_layer_make's defaults and an empty name (NULL if out
 * of memory); fill it in, then dse_net_commit checks it as dse_net_add does and appends
 * it. Nothing is appended until the commit. */
struct dse_layer *dse_net_push(struct dse_net *net, enum dse_layer_type t, struct dse_err *err);
enum dse_status   dse_net_commit(struct dse_net *net, struct dse_err *err);
/* Room for n layers in all, so that pushing up to n grows nothing (a reader that counted
 * its layers first); DSE_ERR_NOMEM if out of memory. */
enum dse_status   dse_net_reserve(struct dse_net *net, int n, struct dse_err *err);

/* Append the primitive layers of a Fire module taking input `input` (a layer index or
 * DSE_INPUT_DATA). Layer names are "<fire>/squeeze1x1", ... (docs/network-format.md).
 * Needs input's channel count, so the net must be inferable up to `input`. */
enum dse_status dse_net_add_fire(struct dse_net *net, const struct dse_fire *f, int input,
                                 struct dse_err *err);

/* The classifier: the last conv or fc layer in the list (SqueezeNet's conv10, AlexNet's
 * fc8), whose outputs are the classes; -1 if the network has none. */
int  dse_net_classifier(const struct dse_net *net);

/* Deep Compression's default density of layer i's weights for a target density d in (0, 1]
 * (issue #35, docs/compress.md): the first conv and the classifier keep sqrt(d), denser, as
 * Han et al. kept AlexNet's first and last layers; every other layer with weights d; a layer
 * without weights 1. The one owner of the rule: dse compress applies it, the analyzer's
 * estimate of a compressed size assumes it. */
double dse_net_prune_density(const struct dse_net *net, int i, double d);

/* Fit the classifier to `classes` outputs (>= 1) and infer shapes again (file names the
 * network in errors). A network without conv or fc is DSE_ERR_SHAPE. */
enum dse_status dse_net_set_classes(struct dse_net *net, int classes, const char *file, struct dse_err *err);

/* Index of the last layer named `name`, or -1. */
int  dse_net_find(const struct dse_net *net, const char *name);

/* Names are unique: layer names and fire modules' names together (a module's squeeze layer
 * stands for it), so that inputs, report rows and weights matched by name mean one layer.
 * The .cfg and prototxt readers call it once the layers are in; n log n. Fails with
 * DSE_ERR_CONFIG "layer name 'x' is used twice" at the line of the first repeat (err->file
 * NULL: the caller names the file), or DSE_ERR_NOMEM. */
enum dse_status dse_net_check_names(const struct dse_net *net, struct dse_err *err);

/* Shape inference and receptive fields for every layer, Caffe's rules. Fails with
 * DSE_ERR_SHAPE naming the layer (and its line) on the first layer that cannot be built. */
enum dse_status dse_net_infer(struct dse_net *net, const char *file, struct dse_err *err);

#endif
