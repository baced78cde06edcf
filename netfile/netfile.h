/* netfile.h: the network file formats, the one door of netfile/ (docs/architecture.md):
 * our libconfig .cfg format (docs/network-format.md) and Caffe's prototxt text format
 * (docs/prototxt.md), read into and written from the shared struct dse_net of
 * metaparams/net.h, shapes inferred, and an ONNX model's graph read into one (docs/onnx.md);
 * a trained model out as ONNX or a .caffemodel, and a .caffemodel's weights in
 * (docs/export.md); and the one way dse reads a libconfig file, shared with space files
 * (sweep/). Below it: engine, metaparams, base. */
#ifndef DSE_NETFILE_H
#define DSE_NETFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "metaparams/net.h"

struct config_t;            /* <libconfig.h> */
struct dse_ckpt_info;       /* engine/train.h */
struct dse_data_norm;       /* data/data.h */
struct dse_dsez;            /* engine/compress.h */
struct dse_model;           /* engine/model.h */

/* ---- Network files: .cfg, prototxt and ONNX (netcfg.c, prototxt*.c, onnx_read.c, netfile.c) */

/* Input shape given on the command line (--input C,H,W); a zero field means "as the
 * file says". Applied before any layer is built. classes (--classes K): the classifier
 * (dse_net_classifier) gets K outputs after the file is read; 0: as the file says. */
struct dse_input_shape {
    int c, h, w;
    int classes;
    int skip_unknown; /* --skip-unknown: an ONNX op dse does not read is kept as a zero-cost
                         `unknown` layer (its op type in dse_layer.op_type), not refused */
};

/* What a checkpoint records of its network's fit (--input, --classes) fills the parts of fit
 * the command line left 0: its input C,H,W and its classifier's outputs, so that dse eval,
 * predict and export load NET as it was trained without asking again. Parts info does not
 * record (a format-1 checkpoint) stay 0: as NET's file says. */
void dse_netfile_fit_checkpoint(struct dse_input_shape *fit, const struct dse_ckpt_info *info);

/* Load PATH by its extension: .cfg -> dse_netcfg_load, .prototxt/.pt -> dse_prototxt_load,
 * .onnx -> dse_onnx_load.
 * On success *out is initialized and inferred (dse_net_infer); the caller deinits it.
 * On failure *out holds nothing to free and err says file:line and what was expected.
 * ov may be NULL. */
enum dse_status dse_netfile_load(const char *path, const struct dse_input_shape *ov,
                                 struct dse_net *out, struct dse_err *err);

enum dse_status dse_netcfg_load(const char *path, const struct dse_input_shape *ov,
                                struct dse_net *out, struct dse_err *err);

enum dse_status dse_prototxt_load(const char *path, const struct dse_input_shape *ov,
                                  struct dse_net *out, struct dse_err *err);

/* An ONNX model (ModelProto, any opset; docs/onnx.md): its graph's nodes as dse layers named
 * by the nodes' names (or their first outputs'), the first graph input that is not an
 * initializer as the network input ([N, C, H, W]; ov fills or replaces C, H, W), shapes
 * inferred. Each weighted layer's initializers must hold what its inferred shape needs, so
 * params are the initializers' counts. Errors: bytes that are not a model (DSE_ERR_CONFIG),
 * an op dse does not read or reads only in some forms (DSE_ERR_CONFIG or
 * DSE_ERR_UNSUPPORTED naming the node, its op and the model's opset), no input shape.
 * path is only used in messages (borrowed). */
enum dse_status dse_onnx_parse(const void *data, size_t len, const char *path, const struct dse_input_shape *ov,
                               struct dse_net *out, struct dse_err *err);
enum dse_status dse_onnx_load(const char *path, const struct dse_input_shape *ov, struct dse_net *out,
                              struct dse_err *err);

/* ---- ONNX weights in: dse import MODEL.onnx (onnx_read.c's sources, onnx_weights.c) ------ */

/* A TensorProto inside an ONNX model's bytes (borrowed: valid while they are); len 0: none. */
struct dse_onnx_tensor {
    const uint8_t *msg;
    size_t         len;
};

/* Where one layer read from ONNX finds its learned values. */
struct dse_onnx_src {
    struct dse_onnx_tensor t[4]; /* conv, fc: weight, bias; batchnorm: scale, bias, mean, variance */
    int                    k_by_n;      /* fc: the weight is [K, N] (MatMul, Gemm transB 0), not [N, K] */
    float                  alpha, beta; /* fc from Gemm: factors of the weight and of the bias; else 1 */
};

/* What dse_onnx_parse_sources finds beside the network. */
struct dse_onnx_sources {
    struct dse_onnx_src   *layer;   /* [n_layers], one per layer of the network read */
    int                    n_layers;
    struct dse_onnx_tensor norm[4]; /* the Sub and Div nodes of the network input, in order: */
    int                    norm_div[4]; /* 1 for a Div (x / t), 0 for a Sub (x - t) */
    int                    n_norm;
};

/* dse_onnx_parse, and where each layer's values are in data (*src, freed with
 * dse_onnx_sources_free; zeroed when it fails). */
enum dse_status dse_onnx_parse_sources(const void *data, size_t len, const char *path,
                                       const struct dse_input_shape *ov, struct dse_net *out,
                                       struct dse_onnx_sources *src, struct dse_err *err);
void dse_onnx_sources_free(struct dse_onnx_sources *src);

/* The float values of a tensor t (raw_data or float_data, data type FLOAT) into out[n]:
 * it must hold n. Errors name path and the tensor (DSE_ERR_CONFIG: another data type,
 * external data, another count). */
enum dse_status dse_onnx_tensor_floats(const struct dse_onnx_tensor *t, float *out, int64_t n, const char *path,
                                       struct dse_err *err);

/* The value of the ONNX model at path's metadata_props entry `key` (what dse export writes:
 * "class_names", one a line), malloc'd and NUL-terminated into *value; NULL where the model
 * has none. Errors: the file unreadable, bytes that are not a message. */
enum dse_status dse_onnx_metadata(const char *path, const char *key, char **value, struct dse_err *err);

/* The ONNX model at path's initializers into m's weights (a CPU model): each layer of m that
 * learns takes the values of the model's layer of the same name (conv [M, C/g, kh, kw]; fc
 * from Gemm's [N, K] or MatMul's [K, N], times alpha and beta; batchnorm's scale, bias,
 * mean and variance into its gamma, beta and running statistics); the model's own layers
 * m lacks are counted in *skipped (may be NULL). The Sub and Div of its input become *norm:
 * x' = (x - mean) / std, c = 0 where the model has none (norm may be NULL). m's classifier
 * fitted to other classes (ov->classes) keeps m's initialization and is counted in *refit;
 * any other layer whose inputs or outputs differ from the model's is refused (an fc's inputs
 * compared by count: C*H*W after a Flatten dse leaves out, the same values). ov reads the model
 * as dse_onnx_load does. Errors name the file and the layer: a layer of m not in the model,
 * a tensor of another size. */
enum dse_status dse_onnx_weights_load(struct dse_model *m, const char *path, const struct dse_input_shape *ov,
                                      struct dse_data_norm *norm, int *skipped, int *refit, struct dse_err *err);

/* Parse prototxt text of length len; path is only used in error messages (borrowed). */
enum dse_status dse_prototxt_parse(const char *text, size_t len, const char *path,
                                   const struct dse_input_shape *ov, struct dse_net *out,
                                   struct dse_err *err);

/* Write net as our .cfg format: Fire modules (layers named "<m>/squeeze1x1", ...) as one
 * `fire` layer, everything else as primitive layers with every setting spelled out.
 * Reading the result back gives a network with the same layers, shapes and costs. */
enum dse_status dse_netcfg_write(FILE *f, const struct dse_net *net, struct dse_err *err);

/* Write net as Caffe prototxt (layer { } format, an Input layer of shape 1xCxHxW).
 * Reading the result back gives a network with the same layers, shapes and costs. */
enum dse_status dse_prototxt_write(FILE *f, const struct dse_net *net, struct dse_err *err);

/* ---- Trained models out and Caffe weights in: ONNX, .caffemodel (onnx.c, caffemodel.c) ------
 * ONNX (opset 13) with the weights as initializers, the input normalization as its first
 * two nodes and what the model is in metadata; Caffe's .caffemodel (NetParameter with
 * one layer per weighted layer, matched by name as Caffe's CopyTrainedLayersFrom does),
 * written and read. All three work on a CPU model (dse_model_new) holding the weights,
 * e.g. loaded from a checkpoint; files are written atomically. */

#define DSE_ONNX_OPSET 13
#define DSE_ONNX_IR    8   /* the IR version of ONNX 1.10-1.12, which opset 13 needs at least 7 of */

/* What an exported model says about itself: ONNX metadata_props (docs/export.md lists the
 * keys). Every field may be empty / NULL / 0. */
struct dse_export_meta {
    const char                 *candidate;   /* sweep candidate id */
    const char                 *metaparams;  /* a JSON object of the candidate's metaparameters */
    const char                 *data;        /* what it was trained on */
    const struct dse_data_norm *norm;        /* input normalization: becomes the model's Sub and
                                                Div nodes; NULL or c = 0: the input is used as is */
    int                         classes;
    const char                (*class_names)[64]; /* [classes] */
    double                      top1;        /* < 0: not known */
    const char                 *checkpoint;  /* the file the weights came from */
    const struct dse_dsez      *dsez;        /* NULL, or the compressed model (.dsez, engine/compress.h)
                                                the weights were decoded from: each of its weight-shared
                                                tensors is written as codebook indices (uint8, or uint16
                                                above 8 bits) and a float codebook, Cast and Gather giving
                                                the values (docs/export.md, "Compressed models") */
};

/* The model as ONNX bytes (malloc'd into *buf, *len) or written to path. The graph takes
 * "data" [N, C, H, W] float (pixel / 255 when meta->norm is set: the model normalizes) and
 * gives "prob" [N, classes], the softmax the dse model's loss layer computes. Dropout is
 * left out (inference). Errors: a layer with no ONNX form here (DSE_ERR_UNSUPPORTED naming
 * it: lrn, eltwise prod/max, a pooling whose Caffe output size ONNX's pads cannot give); a
 * meta->dsez tensor whose count or decoded values are not the model's (DSE_ERR_CONFIG naming
 * it: the graph would compute another model). */
enum dse_status dse_onnx_write(const struct dse_model *m, const struct dse_export_meta *meta, uint8_t **buf,
                               size_t *len, struct dse_err *err);
enum dse_status dse_onnx_save(const struct dse_model *m, const struct dse_export_meta *meta, const char *path,
                              struct dse_err *err);

/* Caffe's NetParameter, binary (.caffemodel): for every layer with weights its name, type
 * and blobs in Caffe's shapes (conv [K, C/g, kh, kw] + [K]; InnerProduct [K, D] + [K];
 * BatchNorm mean, variance, factor 1; Scale gamma (+ beta)). A batch norm that learns gamma
 * and beta is Caffe's BatchNorm "<name>" + Scale "<name>/scale", as dse_prototxt_write
 * names them. */
enum dse_status dse_caffemodel_save(const struct dse_model *m, const char *path, struct dse_err *err);

/* Read a .caffemodel (the `layer` field, or V1's `layers`) into m's weights, layer by layer
 * by name; blobs' shapes must be m's (Caffe's 4-d legacy shapes are accepted where the
 * counts and trailing dims agree). Source layers m does not have are skipped (*skipped
 * counts them, may be NULL). Errors name the file and the layer: a weighted layer of m
 * missing from the file, a blob count or shape that differs, bytes that are not a
 * NetParameter. */
enum dse_status dse_caffemodel_load(struct dse_model *m, const char *path, int *skipped, struct dse_err *err);

/* ---- libconfig files (cfgfile.c): network .cfg files (netcfg.c) and space files (sweep/) ----
 * The one way dse reads a libconfig file. It refuses, with path:line, what libconfig 1.5
 * would otherwise mishandle (issue #18 item 4); the syntax is docs/network-format.md and
 * docs/space-format.md. */

/* What the caller reads, for its messages. */
struct dse_cfgfile {
    const char *what;       /* "network file": named when a path is not a regular file */
    const char *doc;        /* "docs/network-format.md": named by a syntax error */
    const char *no_include; /* NULL: @include allowed; else why it is refused (the message's tail) */
};

/* Read PATH into cfg (config_init'ed by the caller, who config_destroy's it whatever this
 * returns). Before libconfig sees the text:
 *  - PATH, and each file an @include line names, must be a regular file: libconfig 1.5
 *    ends the process ("input in flex scanner failed") on a directory;
 *  - an integer that libconfig 1.5 would read wrapped is refused: one without an L suffix
 *    beyond 32 bits (4294967304 would read as 8), one with L beyond 64 bits;
 *  - @include lines are refused if how->no_include is set; else each included file is
 *    checked as PATH is, found as libconfig finds it (relative to the working directory).
 * An error names PATH and the line at fault; inside an included file, the line of PATH's
 * @include and, in the message, the chain of includes and the included file's line.
 * text, if not NULL, receives the file's bytes, NUL-terminated (the caller frees them;
 * NULL after a failure), and len their count. Fails with DSE_ERR_IO (PATH unreadable or
 * not a regular file), DSE_ERR_CONFIG (the text), DSE_ERR_NOMEM. */
enum dse_status dse_cfgfile_read(struct config_t *cfg, const char *path, const struct dse_cfgfile *how, char **text,
                                 size_t *len, struct dse_err *err);

#endif
