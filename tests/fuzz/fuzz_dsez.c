/* fuzz_dsez: a compressed model's file (engine/dsez.c: header, text block, codebooks,
 * Huffman-coded index and gap streams) read as dse analyze --compressed reads it
 * (dse_dsez_read_sizes) and loaded, as dse eval, predict and export do, into the model of
 * tests/fuzz/tiny.cfg (dse_dsez_load). The input's CRC-32 is set right before reading, so that mutations
 * reach the decoder instead of stopping at the checksum (the seed, corpus/dsez/, is a
 * tests/fuzz/tiny.cfg model from dse compress). */
#include <zlib.h>

#include "engine/compress.h"
#include "tests/fuzz/fuzz_model.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_model_make("fuzz_dsez");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    if (size >= 40) { /* docs/dsez.md: the CRC at offset 32, over the header with it zero and the rest */
        memset(copy + 32, 0, 4);
        uLong crc = crc32(crc32(0L, Z_NULL, 0), copy, 40);
        crc = crc32(crc, copy + 40, (uInt)(size - 40));
        uint32_t c = (uint32_t)crc;
        memcpy(copy + 32, &c, 4);
    }
    const char *path = fuzz_file(copy, size, ".dsez");
    free(copy);
    struct dse_dsez z;
    struct dse_err err = {0};
    if (dse_dsez_read_sizes(path, &z, &err) == DSE_OK) dse_dsez_free(&z);
    enum dse_status st = dse_dsez_load(fuzz_model, path, &err);
    if (getenv("DSE_FUZZ_VERBOSE")) /* does a seed load? (it must, or the values go unread) */
        fprintf(stderr, "fuzz_dsez: %s%s%s\n", dse_status_str(st), st ? ": " : "", st ? err.msg : "");
    return 0;
}
