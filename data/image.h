/* image.h: still images for the data pipeline (issue #13): JPEG (libjpeg-turbo), PNG
 * (libpng), TIFF (libtiff), WebP (libwebp), BMP, PGM and PPM (our own readers) decoded from
 * memory into 8-bit interleaved pixels with 1 or 3 channels,
 * encoded back (JPEG for packs, PNG and JPEG for generated test folders), and resampled
 * with an antialiasing filter. Everything here is integer arithmetic with a fixed order,
 * so the same input gives the same bytes on every machine and thread count.
 * docs/data.md ("Image folders and packs") has the larger picture. Outside data/, reached
 * through data/data.h (tests/layering.sh). */
#ifndef DSE_DATA_IMAGE_H
#define DSE_DATA_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

#define DSE_IMAGE_DIM_MAX 32768 /* larger sides are refused as corrupt or hostile */
/* The default pixel budget of one image (--max-pixels): PIL's Image.MAX_IMAGE_PIXELS, above
 * which it warns of a decompression bomb (about 256 MB of RGB; PIL refuses at twice this). */
#define DSE_IMAGE_PIXELS_DEFAULT 89478485

enum dse_image_kind { DSE_IMAGE_UNKNOWN = 0, DSE_IMAGE_JPEG, DSE_IMAGE_PNG, DSE_IMAGE_BMP, DSE_IMAGE_PNM,
                      DSE_IMAGE_TIFF, DSE_IMAGE_WEBP };

/* An 8-bit image, pixels interleaved: px[(y * w + x) * c + ch]. c is 1 (gray) or 3 (RGB).
 * px is owned and may be larger than w * h * c (cap bytes): decoders and the resampler
 * reuse it, growing it with realloc, so a loop over many images allocates only at first.
 * Zero-initialize before first use; dse_image_deinit frees px. */
struct dse_image {
    int      w, h, c;
    uint8_t *px;
    size_t   cap;
};

void dse_image_deinit(struct dse_image *im); /* frees px; accepts a zeroed image */

/* Make room for w x h x c pixels (reusing px when it is large enough) and set the shape.
 * DSE_ERR_NOMEM on failure (im is unchanged then). */
enum dse_status dse_image_reserve(struct dse_image *im, int w, int h, int c, struct dse_err *err);

/* What the first bytes say: JPEG (FF D8 FF), PNG (89 'P' 'N' 'G' 0D 0A 1A 0A), BMP ("BM"),
 * PGM or PPM ("P2", "P3", "P5" or "P6", then whitespace or '#'), TIFF ("II" 42 0 or "MM" 0 42;
 * 43 for BigTIFF), WebP ("RIFF", 4 bytes, "WEBP"), else unknown. */
enum dse_image_kind dse_image_sniff(const uint8_t *buf, size_t len);

/* Decode a JPEG, PNG, BMP, PGM, PPM, TIFF or WebP held in buf[0..len) into *out with
 * `channels` channels (1 or 3). BMP, PGM and PPM are read by our own readers (the kinds
 * torchvision's ImageFolder takes through PIL): BMP of 1, 4, 8 (palette), 24 or 32 bits,
 * uncompressed (RLE and 16-bit refused); PGM and PPM plain or binary, samples scaled to 8
 * bits from maxval. TIFF: the first image of the file, through libtiff's RGBA interface
 * (gray, RGB, palette, CMYK, YCbCr; 1 to 16 bits a sample, 16 scaled to 8 as
 * (v + 128) / 257; 32-bit and floating-point samples refused). WebP: a still image, lossy
 * or lossless (animations refused).
 * For every format:
 * - gray in, 3 out: the value repeated; RGB in, 1 out: ITU-R 601-2 luma
 *   L = (R*299 + G*587 + B*114 + 500) / 1000 (PIL's convert("L") uses the same weights in
 *   16-bit fixed point and differs by 1 level on about 0.05% of colours);
 * - an alpha channel (PNG RGBA, gray+alpha, palette with tRNS; TIFF and WebP RGBA) is
 *   dropped, as PIL's convert("RGB") does (no blending); a palette is expanded;
 * - 16-bit PNG samples keep their high byte (v >> 8; PIL does so for RGB, and clips 16-bit
 *   gray to 255 instead);
 * - CMYK and YCCK JPEGs (Adobe, stored inverted) become RGB: R = C*K/255 etc. with
 *   C, M, Y, K as stored (the inverted values), rounded to nearest;
 * - EXIF orientation is ignored (the stored pixel order is used), as torchvision's
 *   default loader (PIL) does, so a folder gives the same pixels to both.
 * min_short > 0 lets a JPEG decode at a reduced size through libjpeg's DCT scaling
 * (scale 1/2, 1/4 or 1/8, the smallest whose short side stays >= min_short): a cheap
 * first downscale when the caller will resize to min_short anyway. 0: full size.
 * max_pixels: the pixel budget (0: DSE_IMAGE_PIXELS_DEFAULT). The width and height the
 * header declares are checked against it before any pixel memory is allocated or any
 * data decoded: an 875 KB PNG may declare 30000x30000 and cost 2.7 GB to decode.
 * Errors are DSE_ERR_IO (DSE_ERR_NOMEM when out of memory) with a message saying what is
 * wrong ("not a JPEG, PNG, BMP, PPM, PGM, TIFF or WebP file", "truncated JPEG data",
 * "truncated TIFF data", "corrupt PNG: <libpng's words>", "corrupt TIFF: <libtiff's words>",
 * "image of 40000x3 pixels is larger than 32768 a side", "image of 30000x30000 pixels is over the budget of ...");
 * err->file is left empty for the caller to set.
 * libjpeg warnings about recoverable damage (premature end of data) are errors here:
 * a half-grey image must not be trained on silently. */
enum dse_status dse_image_decode(const uint8_t *buf, size_t len, int channels, int min_short, int64_t max_pixels,
                                 struct dse_image *out, struct dse_err *err);

/* Encode im as baseline JPEG of quality 1..100 (4:2:0 chroma subsampling for 3 channels,
 * as PIL's default) or as PNG (no filtering choice beyond libpng's default, compression
 * level 1: fast). *out is malloc'd; the caller frees it. */
enum dse_status dse_image_encode_jpeg(const struct dse_image *im, int quality, uint8_t **out,
                                      size_t *len, struct dse_err *err);
enum dse_status dse_image_encode_png(const struct dse_image *im, uint8_t **out, size_t *len,
                                     struct dse_err *err);

/* Scratch memory of the resampler (filter coefficients, the intermediate image).
 * Zero-initialize; reused across calls; dse_image_work_deinit frees it. */
struct dse_image_work {
    void  *buf;
    size_t cap;
};
void dse_image_work_deinit(struct dse_image_work *w);

/* Resample the box [x0, x0 + cw) x [y0, y0 + ch) of src (inside it, cw, ch >= 1) to
 * dst_w x dst_h pixels into *dst (same channels as src): separable, the triangle
 * (bilinear) filter widened by the scale factor when shrinking so that every source pixel
 * contributes (antialiased, the filter PIL's resize(BILINEAR) uses), 14-bit fixed-point
 * coefficients normalized per output pixel, results rounded and clamped to 0..255.
 * Sample centers follow PIL: output x maps to source x0 + (x + 0.5) * cw / dst_w - 0.5.
 * Horizontal pass first, then vertical. src and dst must differ. PIL computes with 22-bit
 * coefficients: results agree with its resize to within 1 level. A box outside src, a size
 * below 1 or src == dst is DSE_ERR_SHAPE. */
enum dse_status dse_image_resize(const struct dse_image *src, int x0, int y0, int cw, int ch,
                                 int dst_w, int dst_h, struct dse_image *dst,
                                 struct dse_image_work *w, struct dse_err *err);

#endif
