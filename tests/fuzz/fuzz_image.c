/* fuzz_image: JPEG, PNG, TIFF, WebP, BMP, PGM and PPM decoding (data/image.c
 * dse_image_decode, libjpeg-turbo, libpng, libtiff and libwebp underneath, our own readers
 * for the rest) of the bytes an image
 * folder or a pack holds, in memory: full size and with the DCT-scaled first downscale,
 * 3 channels and 1, at the default pixel budget. */
#include "data/image.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int channels = size && (data[size - 1] & 1) ? 1 : 3;
    int min_short = size > 1 && (data[size - 2] & 1) ? 8 : 0;
    struct dse_image im;
    memset(&im, 0, sizeof im);
    struct dse_err err = {0};
    (void)dse_image_decode(data, size, channels, min_short, 0, &im, &err);
    dse_image_deinit(&im);
    return 0;
}
