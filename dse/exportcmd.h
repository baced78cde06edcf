/* exportcmd.h: what `dse export` and `dse import` do (issue #14; docs/export.md): find
 * the trained network (a network file and a checkpoint, or a sweep candidate by id or
 * the most accurate under a size limit), load its weights, write ONNX or Caffe files;
 * and a .caffemodel's weights into a dse checkpoint. */
#ifndef DSE_CLI_EXPORTCMD_H
#define DSE_CLI_EXPORTCMD_H

#include <stdio.h>

#include "netfile/netfile.h"
#include "data/data.h"

/* In --format's words' order (dse/options.c). CKPT: a float checkpoint of the weights, as
 * dse eval loads them: a compressed model (.dsez) decoded (docs/export.md). */
enum dse_export_format { DSE_EXPORT_ONNX = 0, DSE_EXPORT_CAFFE, DSE_EXPORT_CKPT };

struct dse_export_req {
    /* either a network file and its checkpoint ... */
    const char *net_path;
    struct dse_input_shape fit;     /* --input, --classes */
    const char *checkpoint;
    /* ... or a sweep directory and a candidate: by id, or the best (max_mb <= 0: any size) */
    const char *sweep_dir;
    const char *id;
    int         best;
    double      max_mb;
    enum dse_export_format format;
    const char *out;                /* NULL: <name>.onnx, <name>.prototxt + <name>.caffemodel, or
                                       <name>.ckpt */
};

/* Do it; what was written, and the next command, go to `log`. The checkpoint may be a
 * compressed model (.dsez, by its magic): every format gets its decoded weights, and ONNX
 * keeps its weight sharing (index and codebook initializers, Gather). Errors name the file
 * at fault (checkpoint of another network, truncated file, id not in the sweep, a layer ONNX
 * export cannot express, --format ckpt's --out naming the checkpoint it reads). */
enum dse_status dse_export_run(const struct dse_export_req *r, FILE *log, struct dse_err *err);

/* A .caffemodel's weights into a format-2 checkpoint of the network at net_path, recording
 * norm (NULL or c = 0: none) as the input normalization evaluation and export use, and the
 * class names of classes_file (NULL: none), one a line: as many lines as the classifier has
 * outputs, none empty, none of DSE_PACK_CLASS_MAX bytes or more or holding a control byte
 * (as an image folder's class names); a file that breaks this is refused with its line
 * (DSE_ERR_CONFIG, err->file classes_file) before the weights are read. */
enum dse_status dse_import_run(const char *caffemodel, const char *net_path, const struct dse_input_shape *fit,
                               const struct dse_data_norm *norm, const char *classes_file, const char *out, FILE *log,
                               struct dse_err *err);

/* An ONNX model (docs/onnx.md, "Import") as a dse network written to net_out as a .cfg and its
 * initializers as a format-2 checkpoint at out of that network (read back from net_out), with
 * the model's input normalization (its Sub and Div of the input) unless norm (c > 0) says
 * otherwise, and classes_file's class names as dse_import_run records them. fit's C, H, W
 * fill or replace the model's input size; fit's classes (> 0) fit the checkpoint's network
 * (not the .cfg) to that many classes, the layers whose shapes change (the classifier) keeping
 * their fresh initialization, for fine-tuning. Refused in one error (DSE_ERR_UNSUPPORTED naming
 * the file): every layer whose type has no engine op (engine/ops.def), each by its node's
 * name and type; a flatten only fc layers or the loss read is left out (a .cfg has none). */
enum dse_status dse_import_onnx_run(const char *onnx, const struct dse_input_shape *fit,
                                    const struct dse_data_norm *norm, const char *classes_file, const char *out,
                                    const char *net_out, FILE *log, struct dse_err *err);

#endif
