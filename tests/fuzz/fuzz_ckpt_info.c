/* fuzz_ckpt_info: a checkpoint's header and text block (engine/train.c
 * dse_checkpoint_info), as dse train --resume and the sweep workers read it first. */
#include "engine/train.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".ckpt");
    struct dse_ckpt_info info;
    memset(&info, 0, sizeof info);
    struct dse_err err = {0};
    if (dse_checkpoint_info(path, &info, &err) == DSE_OK)
        free(info.class_names);
    return 0;
}
