/* fuzz_onnx: an ONNX model (netfile/onnx_read.c) through its in-memory entry point. */
#include "netfile/netfile.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dse_net net;
    struct dse_err err = {0};
    const struct dse_input_shape ov = {.skip_unknown = (int)(size & 1)}; /* --skip-unknown on half the inputs */
    if (dse_onnx_parse(data, size, "fuzz.onnx", &ov, &net, &err) == DSE_OK)
        dse_net_deinit(&net);
    return 0;
}
