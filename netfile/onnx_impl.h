/* onnx_impl.h: what netfile/onnx_read.c (the model, its graph, the first ops) and
 * netfile/onnx_ops.c (the ops of issue #34's second part) share: onnx.proto's field numbers,
 * the reader's state, and its helpers (defined in onnx_read.c, documented there). Private
 * to netfile/ (docs/architecture.md); the helpers keep their short names in the source and
 * link as dse_onnx_* (the defines below), as external symbols start with dse_. */
#ifndef DSE_NETFILE_ONNX_IMPL_H
#define DSE_NETFILE_ONNX_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "base/pb.h"
#include "netfile/netfile.h"

#define str_is         dse_onnx_str_is
#define sn             dse_onnx_sn
#define node_fail      dse_onnx_node_fail
#define tensor_int64s  dse_onnx_tensor_int64s
#define find_value     dse_onnx_find_value
#define add_value      dse_onnx_add_value
#define in_layer       dse_onnx_in_layer
#define in_tensor      dse_onnx_in_tensor
#define has_in         dse_onnx_has_in
#define attr           dse_onnx_attr
#define attr_int       dse_onnx_attr_int
#define attr_ints      dse_onnx_attr_ints
#define attr_float     dse_onnx_attr_float
#define attr_str       dse_onnx_attr_str
#define begin_layer    dse_onnx_begin_layer
#define finish         dse_onnx_finish
#define shape_of       dse_onnx_shape_of
#define check_dims     dse_onnx_check_dims
#define check_bias     dse_onnx_check_bias
#define reshape5       dse_onnx_reshape5
#define op_leaky       dse_onnx_op_leaky
#define op_prelu       dse_onnx_op_prelu
#define op_clip        dse_onnx_op_clip
#define op_hard        dse_onnx_op_hard
#define op_mul         dse_onnx_op_mul
#define op_reduce      dse_onnx_op_reduce
#define op_squeeze     dse_onnx_op_squeeze
#define op_transpose   dse_onnx_op_transpose
#define op_split       dse_onnx_op_split
#define op_slice       dse_onnx_op_slice
#define op_resize      dse_onnx_op_resize
#define op_deconv      dse_onnx_op_deconv
#define op_shape       dse_onnx_op_shape
#define op_gather      dse_onnx_op_gather
#define fold_arith     dse_onnx_fold_arith

/* onnx.proto field numbers */
enum {
    MODEL_GRAPH = 7, MODEL_OPSET = 8,
    OPSET_DOMAIN = 1, OPSET_VERSION = 2,
    GRAPH_NODE = 1, GRAPH_NAME = 2, GRAPH_INITIALIZER = 5, GRAPH_INPUT = 11,
    NODE_INPUT = 1, NODE_OUTPUT = 2, NODE_NAME = 3, NODE_OP = 4, NODE_ATTR = 5, NODE_DOMAIN = 7,
    ATTR_NAME = 1, ATTR_F = 2, ATTR_I = 3, ATTR_S = 4, ATTR_T = 5, ATTR_FLOATS = 7, ATTR_INTS = 8,
    TENSOR_DIMS = 1, TENSOR_TYPE = 2, TENSOR_INT64_DATA = 7, TENSOR_NAME = 8, TENSOR_RAW = 9,
    VALUE_NAME = 1, VALUE_TYPE = 2, TYPE_TENSOR = 1, TTENSOR_SHAPE = 2, SHAPE_DIM = 1, DIM_VALUE = 1,
};
enum { ELEM_FLOAT = 1, ELEM_INT32 = 6, ELEM_INT64 = 7 }; /* TensorProto.DataType */

#define MAX_DIMS     8  /* a tensor's rank */
#define MAX_NODE_IN  DSE_MAX_INPUTS /* a node's inputs: a Concat's are the most */
#define NUM_STR_(x)  #x
#define NUM_STR(x)   NUM_STR_(x) /* a number macro as a string literal */
#define MAX_NODE_OUT 4
#define MAX_NODE_ATTR 16 /* attribute names a node indexes; past them attr() reads its bytes */

struct str {
    const char *p;
    size_t      n;
};

/* An initializer or a Constant node's value. */
struct tensor {
    struct str     name;
    int64_t        dims[MAX_DIMS];
    int            nd, type;
    int64_t        count;     /* elements: the product of dims */
    const uint8_t *msg;       /* the TensorProto, for its values */
    size_t         len;
    int            computed;  /* an int64 value computed from shapes (Shape, Gather, Add, ...): */
    int64_t        iv[MAX_DIMS]; /* its values, not msg's */
    int            read;      /* a layer reads it as its weights or bias (finish: tied weights) */
};

/* A named value of the graph: a layer's output (or the network input), or a tensor. */
enum vkind { VAL_LAYER, VAL_TENSOR };
struct value {
    struct str name;
    uint32_t   hash;   /* of name (str_hash): find_value compares it first */
    enum vkind kind;
    int        layer;  /* VAL_LAYER: layer index or DSE_INPUT_DATA */
    int        tensor; /* VAL_TENSOR: index into rd.t */
    int        rank;   /* VAL_LAYER: 4, or 2 after Flatten, Gemm and MatMul */
    int64_t    pad[4]; /* VAL_LAYER: zeros Pad nodes put around H and W (top, left, bottom,
                          right), taken into the pads of the conv or pooling that reads it */
    int        groups; /* rank 5 (a channel shuffle's [N, g, C/g, H, W]): g */
};

struct node {
    struct str     name, op, domain, in[MAX_NODE_IN], out[MAX_NODE_OUT];
    int            n_in, n_out;
    const uint8_t *msg;
    size_t         len;
    struct {
        struct str          name; /* a name field of the attribute a, in the bytes' order */
        struct dse_pb_field a;
    } attr[MAX_NODE_ATTR];        /* read once (read_node): an op asks for several */
    int            n_attr;        /* -1: more names than attr[] holds */
};

/* A node's bytes, read again where a layer's node is needed after the graph (dse import). */
struct node_ref {
    const uint8_t *msg;
    size_t         len;
};

struct rd {
    const char                   *path;
    const struct dse_input_shape *ov;
    struct dse_net               *net;
    struct dse_err               *err;
    int                           opset;
    struct tensor                *t;
    int                           nt, cap_t;
    struct value                 *v;
    int                           nv, cap_v;
    int                          *vt;            /* the values by name (open addressing): 1 + the index
                                                    of the newest of each name, 0 empty */
    int                           cap_vt;        /* a power of two, over 2 nv */
    int                          *weight, *bias; /* [layer]: tensor index of its weights / bias, -1 */
    int                          *matmul;        /* [layer]: an fc read from MatMul (its bias may follow) */
    uint32_t                     *name_h;        /* [layer]: str_hash of its name (begin_layer's look-up) */
    struct node_ref              *src;           /* [layer]: the node it was read from (dse import's weights) */
    int                          *lt;            /* the layers by name (open addressing): 1 + index, 0 empty */
    int                           cap_lt;        /* a power of two, over 2 x the most layers */
    int                           dup_name;      /* a layer has an earlier one's name: dse_net_check_names */
    struct dse_pb_field          *fields;        /* read_graph's nodes and inputs, read after the initializers */
    const struct node            *cur;           /* the node being read, for messages */
    int                           read5;         /* the op being read takes a 5-d value (a channel shuffle's) */
    int                           skip_unknown;  /* an op not in ops[]: a zero-cost layer (--skip-unknown) */
};

struct op;
typedef enum dse_status (*op_fn)(struct rd *r, const struct node *nd, const struct op *op);
struct op {
    const char         *name;
    op_fn               fn;
    enum dse_layer_type type; /* the layer it becomes, where fn makes one of several */
};

/* helpers (onnx_read.c) */
int str_is(struct str s, const char *lit);
int sn(struct str s);
__attribute__((format(printf, 3, 4))) enum dse_status node_fail(struct rd *r, enum dse_status code, const char *fmt, ...);
int tensor_int64s(const struct tensor *t, int64_t *out, size_t cap, size_t *n);
struct value *find_value(struct rd *r, struct str name);
enum dse_status add_value(struct rd *r, struct value v);
enum dse_status in_layer(struct rd *r, const struct node *nd, int k, int *layer, int *rank);
const struct tensor *in_tensor(struct rd *r, const struct node *nd, int k, const char *what);
int has_in(const struct node *nd, int k);
int attr(const struct node *nd, const char *name, struct dse_pb_field *a);
enum dse_status attr_int(struct rd *r, const struct node *nd, const char *name, int64_t def, int64_t lo, int64_t hi, int64_t *out);
enum dse_status attr_ints(struct rd *r, const struct node *nd, const char *name, int n, int64_t lo, int64_t hi, int64_t *out, int *have);
float attr_float(const struct node *nd, const char *name, float def);
void attr_str(const struct node *nd, const char *name, char *out, size_t cap);
struct dse_layer *begin_layer(struct rd *r, const struct node *nd, enum dse_layer_type t, int input);
enum dse_status finish(struct rd *r, const struct node *nd, int rank, int weight, int bias);
enum dse_status shape_of(struct rd *r, int layer, int *c, int *h, int *w);
enum dse_status check_dims(struct rd *r, const struct tensor *t, int nd, const char *what);
enum dse_status check_bias(struct rd *r, const struct tensor *t, int64_t n);

/* ops (onnx_ops.c): each reads one node into layers or values (struct op in ops[]) */
enum dse_status op_leaky(struct rd *r, const struct node *nd, const struct op *op);
enum dse_status op_prelu(struct rd *r, const struct node *nd, const struct op *op);
enum dse_status op_clip(struct rd *r, const struct node *nd, const struct op *op);
enum dse_status op_hard(struct rd *r, const struct node *nd, const struct op *op);
enum dse_status op_mul(struct rd *r, const struct node *nd, const struct op *op);
enum dse_status op_reduce(struct rd *r, const struct node *nd, const struct op *op);
enum dse_status op_squeeze(struct rd *r, const struct node *nd, const struct op *op);
enum dse_status op_transpose(struct rd *r, const struct node *nd, const struct op *op);
enum dse_status op_split(struct rd *r, const struct node *nd, const struct op *op);
enum dse_status op_slice(struct rd *r, const struct node *nd, const struct op *op);
enum dse_status op_resize(struct rd *r, const struct node *nd, const struct op *op);
enum dse_status op_deconv(struct rd *r, const struct node *nd, const struct op *op);
/* Reshape to or from a channel shuffle's [N, g, C/g, H, W] (op_reshape hands it those). */
/* Shape, Gather, and Add, Sub, Mul, Div of two int64 constants: the shape arithmetic
 * PyTorch writes for x.chunk() and x.size() folded into constants (onnx_ops.c). 1 in *done
 * where the node was such arithmetic (op_add, op_mul, op_normalize ask first). Gather of a
 * float codebook by int32 or int64 constant indices (a compressed model's weights, dse
 * export's) is a float constant of the indices' shape. */
enum dse_status op_shape(struct rd *r, const struct node *nd, const struct op *op);
enum dse_status op_gather(struct rd *r, const struct node *nd, const struct op *op);
enum dse_status fold_arith(struct rd *r, const struct node *nd, int *done);
enum dse_status reshape5(struct rd *r, const struct node *nd, int in, int rank, const int64_t *shape, int n);

#endif
