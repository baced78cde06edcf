/* fuzz_model.h: the model of tests/fuzz/tiny.cfg that the loading targets (fuzz_ckpt_load,
 * fuzz_dsez) read their inputs into, built once per process in LLVMFuzzerInitialize and
 * freed at exit. */
#ifndef DSE_FUZZ_MODEL_H
#define DSE_FUZZ_MODEL_H

#include "netfile/netfile.h"
#include "engine/model.h"
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

static struct dse_model *fuzz_model;

static inline void fuzz_model_free(void) { dse_model_free(fuzz_model); }

/* Build fuzz_model (who: the target, for the message of a failure, which exits 2). */
static inline void fuzz_model_make(const char *who)
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
        fprintf(stderr, "%s: the fixed network: %s\n", who, err.msg);
        exit(2);
    }
    struct dse_model_opts o = {.batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA};
    st = dse_model_new(&net, &o, &fuzz_model, &err);
    dse_net_deinit(&net);
    if (st != DSE_OK) {
        fprintf(stderr, "%s: the model: %s\n", who, err.msg);
        exit(2);
    }
    atexit(fuzz_model_free);
}

#endif
