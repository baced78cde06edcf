/* fuzz_ckpt_load: a whole checkpoint (engine/train.c dse_checkpoint_load: header, text
 * block, zlib-compressed values, CRC) loaded into the model of a fixed small network, the
 * one of tests/fuzz/tiny.cfg, whose checkpoints are the seeds (corpus/ckpt_load/). The
 * model is built once and reused: a load that fails leaves it as it was, one that
 * succeeds overwrites its values, neither changes what the reader checks. */
#include "netfile/netfile.h"
#include "engine/model.h"
#include "engine/train.h"
#include "tests/fuzz/fuzz.h"

/* tests/fuzz/tiny.cfg, the same layers. */
static const char tiny_cfg[] =
    "name = \"fuzz_tiny\";\n"
    "input = { channels = 1; height = 28; width = 28; };\n"
    "layers = (\n"
    "  { name = \"conv1\"; type = \"conv\"; filters = 4; kernel = 3; stride = 2; },\n"
    "  { name = \"relu1\"; type = \"relu\"; },\n"
    "  { name = \"fire2\"; type = \"fire\"; squeeze = 2; expand1x1 = 4; expand3x3 = 4; },\n"
    "  { name = \"conv10\"; type = \"conv\"; filters = 10; kernel = 1; },\n"
    "  { name = \"pool10\"; type = \"global_avgpool\"; },\n"
    "  { name = \"loss\"; type = \"softmax_loss\"; }\n"
    ");\n";

static struct dse_model *model;

static void model_free(void) { dse_model_free(model); }

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/dse-fuzz-net-%ld.cfg", (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f || fputs(tiny_cfg, f) < 0 || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
    struct dse_net net;
    struct dse_err err = {0};
    enum dse_status st = dse_netcfg_load(path, NULL, &net, &err);
    unlink(path);
    if (st != DSE_OK) {
        fprintf(stderr, "fuzz_ckpt_load: the fixed network: %s\n", err.msg);
        exit(2);
    }
    struct dse_model_opts o = {.batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA};
    st = dse_model_new(&net, &o, &model, &err);
    dse_net_deinit(&net);
    if (st != DSE_OK) {
        fprintf(stderr, "fuzz_ckpt_load: the model: %s\n", err.msg);
        exit(2);
    }
    atexit(model_free);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".ckpt");
    int next_epoch = 0;
    int64_t iter = 0;
    struct dse_err err = {0};
    enum dse_status st = dse_checkpoint_load(model, path, &next_epoch, &iter, &err);
    if (getenv("DSE_FUZZ_VERBOSE")) /* does a seed load? (it must, or the values go unread) */
        fprintf(stderr, "fuzz_ckpt_load: %s%s%s\n", dse_status_str(st), st ? ": " : "", st ? err.msg : "");
    return 0;
}
