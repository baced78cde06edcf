/* export.h: trained models out of dse and Caffe's weights in (issue #14, docs/export.md).
 * ONNX (opset 13) with the weights as initializers, the input normalization as its first
 * two nodes and what the model is in metadata; Caffe's .caffemodel (NetParameter with
 * one layer per weighted layer, matched by name as Caffe's CopyTrainedLayersFrom does),
 * written and read. All three work on a CPU model (dse_model_new) holding the weights,
 * e.g. loaded from a checkpoint; files are written atomically. */
#ifndef DSE_ENGINE_EXPORT_H
#define DSE_ENGINE_EXPORT_H

#include "data/data.h"
#include "engine/model.h"

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
};

/* The model as ONNX bytes (malloc'd into *buf, *len) or written to path. The graph takes
 * "data" [N, C, H, W] float (pixel / 255 when meta->norm is set: the model normalizes) and
 * gives "prob" [N, classes], the softmax the dse model's loss layer computes. Dropout is
 * left out (inference). Errors: a layer with no ONNX form here (DSE_ERR_UNSUPPORTED naming
 * it: lrn, eltwise prod/max, a pooling whose Caffe output size ONNX's pads cannot give). */
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

#endif
