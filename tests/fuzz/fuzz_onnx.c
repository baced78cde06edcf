/* fuzz_onnx: an ONNX model (netfile/onnx_read.c) through its in-memory entry points: the
 * network alone, or with where each layer's weights are (dse import's read, onnx_weights.c's
 * float reader on each tensor found). */
#include "netfile/netfile.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dse_net net;
    struct dse_err err = {0};
    const struct dse_input_shape ov = {.skip_unknown = (int)(size & 1)}; /* --skip-unknown on half the inputs */
    if (size % 3 != 2) {
        if (dse_onnx_parse(data, size, "fuzz.onnx", &ov, &net, &err) == DSE_OK)
            dse_net_deinit(&net);
        return 0;
    }
    struct dse_onnx_sources src;
    if (dse_onnx_parse_sources(data, size, "fuzz.onnx", &ov, &net, &src, &err) != DSE_OK)
        return 0;
    float buf[64];
    for (int i = 0; i < src.n_layers; i++)
        for (int k = 0; k < 4; k++)
            if (src.layer[i].t[k].len)
                (void)dse_onnx_tensor_floats(&src.layer[i].t[k], buf, 1 + (int64_t)(size % 64), "fuzz.onnx", &err);
    for (int k = 0; k < src.n_norm; k++)
        (void)dse_onnx_tensor_floats(&src.norm[k], buf, 3, "fuzz.onnx", &err);
    dse_onnx_sources_free(&src);
    dse_net_deinit(&net);
    return 0;
}
