/* fuzz_netcfg: network .cfg files (dse/netcfg.c through libconfig, sweep/cfgfile.c). */
#include "dse/netfile.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".cfg");
    struct dse_net net;
    struct dse_err err = {0};
    if (dse_netcfg_load(path, NULL, &net, &err) == DSE_OK)
        dse_net_deinit(&net);
    return 0;
}
