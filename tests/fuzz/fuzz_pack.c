/* fuzz_pack: an image pack (data/pack.c dse_pack_open: header, index, class names,
 * statistics, their CRC-32s), then every record verified and decoded (dse_pack_verify,
 * dse_pack_image for the first few). The CRCs stop most mutations early; the seeds
 * (corpus/pack/, made by dse data pack from tests/bad_data/rgb_2classes at --size 8)
 * reach the records. */
#include "data/image.h"
#include "data/pack.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".pack");
    struct dse_pack *p = NULL;
    struct dse_err   err = {0};
    enum dse_status  st = dse_pack_open(path, &p, &err);
    if (st == DSE_OK) {
        st = dse_pack_verify(p, 1, &err);
        for (int i = 0; i < p->n && i < 4; i++) {
            struct dse_image im;
            memset(&im, 0, sizeof im);
            (void)dse_pack_image(p, i, &im, &err);
            dse_image_deinit(&im);
        }
    }
    if (getenv("DSE_FUZZ_VERBOSE")) /* do the seeds read? */
        fprintf(stderr, "fuzz_pack: %s%s%s\n", dse_status_str(st), st ? ": " : "", st ? err.msg : "");
    dse_pack_close(p);
    return 0;
}
