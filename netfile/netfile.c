/* netfile.c: pick the reader by file extension. */
#include "netfile/netfile.h"

#include <string.h>

#include "engine/train.h"

/* --classes: refit the loaded network's classifier. */
static enum dse_status fit_classes(const char *path, const struct dse_input_shape *ov, struct dse_net *out,
                                   enum dse_status st, struct dse_err *err) {
    if (st || !ov || ov->classes <= 0) return st;
    if ((st = dse_net_set_classes(out, ov->classes, path, err))) dse_net_deinit(out);
    return st;
}

enum dse_status dse_netfile_load(const char *path, const struct dse_input_shape *ov,
                                 struct dse_net *out, struct dse_err *err) {
    if (dse_has_ext(path, ".cfg"))
        return fit_classes(path, ov, out, dse_netcfg_load(path, ov, out, err), err);
    if (dse_has_ext(path, ".prototxt") || dse_has_ext(path, ".pt")) {
        return fit_classes(path, ov, out, dse_prototxt_load(path, ov, out, err), err);
    }
    if (dse_has_ext(path, ".onnx")) return fit_classes(path, ov, out, dse_onnx_load(path, ov, out, err), err);
    memset(out, 0, sizeof *out);
    return dse_err_set(err, DSE_ERR_CONFIG, path, 0,
                       "unknown network file type; expected a .cfg (dse network), .prototxt (Caffe) or .onnx file");
}

void dse_netfile_fit_checkpoint(struct dse_input_shape *fit, const struct dse_ckpt_info *info) {
    if (!fit->c && !fit->h && !fit->w && info->in_c > 0)
        fit->c = info->in_c, fit->h = info->in_h, fit->w = info->in_w;
    if (!fit->classes && info->outputs > 0) fit->classes = info->outputs;
}
