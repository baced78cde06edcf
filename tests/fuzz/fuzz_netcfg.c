/* fuzz_netcfg: network .cfg files (netfile/netcfg.c through libconfig, netfile/cfgfile.c). */
#include "netfile/netfile.h"
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
