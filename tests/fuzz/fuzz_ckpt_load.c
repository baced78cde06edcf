/* fuzz_ckpt_load: a whole checkpoint (engine/train.c dse_checkpoint_load: header, text
 * block, zlib-compressed values, CRC) loaded into the model of a fixed small network, the
 * one of tests/fuzz/tiny.cfg, whose checkpoints are the seeds (corpus/ckpt_load/). The
 * model is built once and reused: a load that fails leaves it as it was, one that
 * succeeds overwrites its values, neither changes what the reader checks. */
#include "engine/train.h"
#include "tests/fuzz/fuzz_model.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_model_make("fuzz_ckpt_load");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".ckpt");
    int next_epoch = 0;
    int64_t iter = 0;
    struct dse_err err = {0};
    enum dse_status st = dse_checkpoint_load(fuzz_model, path, &next_epoch, &iter, &err);
    if (getenv("DSE_FUZZ_VERBOSE")) /* does a seed load? (it must, or the values go unread) */
        fprintf(stderr, "fuzz_ckpt_load: %s%s%s\n", dse_status_str(st), st ? ": " : "", st ? err.msg : "");
    return 0;
}
