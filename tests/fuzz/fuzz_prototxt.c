/* fuzz_prototxt: Caffe prototxt text (netfile/prototxt*.c) through its in-memory entry point. */
#include "netfile/netfile.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dse_net net;
    struct dse_err err = {0};
    if (dse_prototxt_parse((const char *)data, size, "fuzz.prototxt", NULL, &net, &err) == DSE_OK)
        dse_net_deinit(&net);
    return 0;
}
