/* fuzz_space: design-space files (sweep/space.c through libconfig, netfile/cfgfile.c). */
#include "sweep/space.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".cfg");
    struct dse_space s;
    struct dse_err err = {0};
    if (dse_space_load(path, &s, &err) == DSE_OK)
        dse_space_free(&s);
    return 0;
}
