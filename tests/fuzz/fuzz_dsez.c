/* fuzz_dsez: a compressed model's file (engine/dsez.c dse_dsez_read: header, text block,
 * codebooks, Huffman-coded index and gap streams), as dse eval, predict, export and analyze
 * --compressed read it. The input's CRC-32 is set right before reading, so that mutations
 * reach the decoder instead of stopping at the checksum (the seed, corpus/dsez/, is a
 * tests/fuzz/tiny.cfg model from dse compress). */
#include <zlib.h>

#include "engine/compress.h"
#include "tests/fuzz/fuzz.h"

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
    if (dse_dsez_read(path, &z, &err) == DSE_OK) dse_dsez_free(&z);
    return 0;
}
