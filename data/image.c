/* image.c: JPEG (libjpeg-turbo), PNG (libpng), TIFF (libtiff) and WebP (libwebp) decoding
 * from memory into 8-bit gray or RGB, BMP, PGM and PPM by small readers of our own, JPEG and
 * PNG encoding into memory, and
 * the separable antialiased resampler. The
 * contracts are in image.h; docs/data.md ("Image folders and packs") has the overview.
 * libjpeg and libpng report errors by longjmp: each guarded function keeps its state in a
 * struct owned by its caller, so nothing the jump skips over is left indeterminate. libtiff
 * reports to a handler of its handle, libwebp returns a status. */
#include "data/image.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>
#include <png.h>
#include <tiffio.h>
#include <webp/decode.h>

void dse_image_deinit(struct dse_image *im) {
    free(im->px);
    memset(im, 0, sizeof *im);
}

enum dse_status dse_image_reserve(struct dse_image *im, int w, int h, int c, struct dse_err *err) {
    DSE_ASSERT(w >= 1 && h >= 1 && w <= DSE_IMAGE_DIM_MAX && h <= DSE_IMAGE_DIM_MAX);
    DSE_ASSERT(c == 1 || c == 3);
    uint64_t bytes = (uint64_t)w * (uint64_t)h * (uint64_t)c;
    if (bytes > (uint64_t)SIZE_MAX / 2)
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "image of %dx%dx%d is too large", w, h, c);
    if (bytes > im->cap) {
        uint8_t *px = realloc(im->px, (size_t)bytes);
        if (!px)
            return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0,
                               "out of memory for an image of %dx%dx%d", w, h, c);
        im->px = px;
        im->cap = (size_t)bytes;
    }
    im->w = w, im->h = h, im->c = c;
    return DSE_OK;
}

enum dse_image_kind dse_image_sniff(const uint8_t *buf, size_t len) {
    static const uint8_t png_sig[8] = { 0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A };
    if (len >= 3 && buf[0] == 0xFF && buf[1] == 0xD8 && buf[2] == 0xFF) return DSE_IMAGE_JPEG;
    if (len >= 8 && memcmp(buf, png_sig, 8) == 0) return DSE_IMAGE_PNG;
    if (len >= 2 && buf[0] == 'B' && buf[1] == 'M') return DSE_IMAGE_BMP;
    if (len >= 3 && buf[0] == 'P' && (buf[1] == '2' || buf[1] == '3' || buf[1] == '5' || buf[1] == '6') &&
        (buf[2] == ' ' || buf[2] == '\t' || buf[2] == '\n' || buf[2] == '\r' || buf[2] == '#'))
        return DSE_IMAGE_PNM;
    if (len >= 4 && ((buf[0] == 'I' && buf[1] == 'I' && (buf[2] == 42 || buf[2] == 43) && buf[3] == 0) ||
                     (buf[0] == 'M' && buf[1] == 'M' && buf[2] == 0 && (buf[3] == 42 || buf[3] == 43))))
        return DSE_IMAGE_TIFF; /* classic (42) or BigTIFF (43), either byte order */
    if (len >= 12 && !memcmp(buf, "RIFF", 4) && !memcmp(buf + 8, "WEBP", 4)) return DSE_IMAGE_WEBP;
    return DSE_IMAGE_UNKNOWN;
}

/* ITU-R 601-2 luma, as PIL's convert("L") (image.h). */
static inline uint8_t luma(unsigned r, unsigned g, unsigned b) {
    return (uint8_t)((r * 299 + g * 587 + b * 114 + 500) / 1000);
}

static void rgb_to_gray(const uint8_t *rgb, uint8_t *gray, size_t n) {
    for (size_t i = 0; i < n; i++) gray[i] = luma(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

static enum dse_status too_large(struct dse_err *err, unsigned long w, unsigned long h) {
    return dse_err_set(err, DSE_ERR_IO, NULL, 0, "image of %lux%lu pixels is larger than %d a side",
                       w, h, DSE_IMAGE_DIM_MAX);
}

/* The size a header declares, checked before anything is allocated for the pixels: each
 * side at most DSE_IMAGE_DIM_MAX, w * h at most the budget (0: DSE_IMAGE_PIXELS_DEFAULT). */
static enum dse_status check_size(struct dse_err *err, unsigned long w, unsigned long h, int64_t max_pixels) {
    if (w > DSE_IMAGE_DIM_MAX || h > DSE_IMAGE_DIM_MAX) return too_large(err, w, h);
    if (max_pixels <= 0) max_pixels = DSE_IMAGE_PIXELS_DEFAULT;
    if ((uint64_t)w * h > (uint64_t)max_pixels)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "image of %lux%lu pixels is over the budget of %lld pixels an "
                           "image (--max-pixels): a decompression bomb, or raise the budget",
                           w, h, (long long)max_pixels);
    return DSE_OK;
}

/* ---- JPEG ---------------------------------------------------------------------------- */

/* libjpeg's error manager, turned into a longjmp that carries a status and a message. */
struct jpeg_fail {
    struct jpeg_error_mgr pub;
    jmp_buf               jmp;
    enum dse_status       code;
    const char           *what; /* "corrupt JPEG" or "cannot encode JPEG" */
    char                  msg[JMSG_LENGTH_MAX + 64];
};

static void jpeg_fail_exit(j_common_ptr cinfo) {
    struct jpeg_fail *f = (struct jpeg_fail *)cinfo->err;
    char words[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, words);
    f->code = cinfo->err->msg_code == JERR_OUT_OF_MEMORY ? DSE_ERR_NOMEM : DSE_ERR_IO;
    if (cinfo->err->msg_code == JWRN_JPEG_EOF || cinfo->err->msg_code == JERR_INPUT_EOF)
        snprintf(f->msg, sizeof f->msg, "truncated JPEG data");
    else
        snprintf(f->msg, sizeof f->msg, "%s: %s", f->what, words);
    longjmp(f->jmp, 1);
}

/* Warnings (level -1) are errors: libjpeg "recovers" from damaged data by filling the rest
 * of the image with grey (image.h). Spared are the ones that leave every pixel as stored:
 * an unknown JFIF revision, a bad ICC marker (colour profiles are ignored anyway) and junk
 * between the last scan and the end marker (EOI, 0xD9), which some ImageNet files have and
 * PIL reads without complaint. Trace messages (level >= 0) are dropped. */
static void jpeg_fail_emit(j_common_ptr cinfo, int level) {
    struct jpeg_error_mgr *e = cinfo->err;
    if (level >= 0) return;
    if (e->msg_code == JWRN_JFIF_MAJOR || e->msg_code == JWRN_BOGUS_ICC ||
        (e->msg_code == JWRN_EXTRANEOUS_DATA && e->msg_parm.i[1] == 0xD9)) {
        e->num_warnings++;
        return;
    }
    jpeg_fail_exit(cinfo);
}

static void jpeg_fail_init(struct jpeg_fail *f, const char *what) {
    jpeg_std_error(&f->pub);
    f->pub.error_exit = jpeg_fail_exit;
    f->pub.emit_message = jpeg_fail_emit;
    f->code = DSE_ERR_IO;
    f->what = what;
    f->msg[0] = '\0';
}

struct jpeg_dec {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_fail              fail;
    const uint8_t                *buf;
    size_t                        len;
    int                           channels, min_short;
    int64_t                       max_pixels;
    struct dse_image             *out;
    struct dse_err               *err;
};

/* The decode itself; errors from libjpeg jump back into jpeg_decode_guarded. */
static enum dse_status jpeg_decode_body(struct jpeg_dec *d) {
    j_decompress_ptr cinfo = &d->cinfo;
    jpeg_mem_src(cinfo, d->buf, (unsigned long)d->len);
    if (jpeg_read_header(cinfo, TRUE) != JPEG_HEADER_OK)
        return dse_err_set(d->err, DSE_ERR_IO, NULL, 0, "corrupt JPEG: tables only, no image");
    enum dse_status size_st = check_size(d->err, cinfo->image_width, cinfo->image_height, d->max_pixels);
    if (size_st) return size_st;
    int comps = 3;
    switch (cinfo->jpeg_color_space) {
    case JCS_GRAYSCALE:
        cinfo->out_color_space = d->channels == 1 ? JCS_GRAYSCALE : JCS_EXT_RGB;
        comps = d->channels;
        break;
    case JCS_YCbCr:
    case JCS_RGB:
        cinfo->out_color_space = JCS_EXT_RGB;
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        cinfo->out_color_space = JCS_CMYK; /* libjpeg turns YCCK into CMYK */
        comps = 4;
        break;
    default:
        return dse_err_set(d->err, DSE_ERR_IO, NULL, 0,
                           "unsupported JPEG: %d components in an unknown colour space",
                           cinfo->num_components);
    }
    /* The smallest of 1/8, 1/4, 1/2 whose short side (libjpeg rounds up) stays >= min_short. */
    if (d->min_short > 0) {
        unsigned s = cinfo->image_width < cinfo->image_height ? cinfo->image_width
                                                              : cinfo->image_height;
        for (unsigned denom = 8; denom >= 2; denom /= 2)
            if ((s + denom - 1) / denom >= (unsigned)d->min_short) {
                cinfo->scale_num = 1;
                cinfo->scale_denom = denom;
                break;
            }
    }
    jpeg_start_decompress(cinfo);
    int ow = (int)cinfo->output_width, oh = (int)cinfo->output_height;
    if (cinfo->output_components != comps) /* libjpeg refuses such files itself, so far */
        return dse_err_set(d->err, DSE_ERR_IO, NULL, 0,
                           "unsupported JPEG: %d components in colour space %d",
                           cinfo->num_components, (int)cinfo->jpeg_color_space);
    enum dse_status st = dse_image_reserve(d->out, ow, oh, d->channels, d->err);
    if (st) return st;
    size_t stride = (size_t)ow * (size_t)d->channels;
    JSAMPARRAY tmp = NULL; /* a row in libjpeg's pool when the output needs converting */
    if (comps != d->channels)
        tmp = (*cinfo->mem->alloc_sarray)((j_common_ptr)cinfo, JPOOL_IMAGE,
                                          (JDIMENSION)ow * (JDIMENSION)comps, 1);
    while (cinfo->output_scanline < cinfo->output_height) {
        uint8_t *dst = d->out->px + (size_t)cinfo->output_scanline * stride;
        JSAMPROW row = tmp ? tmp[0] : dst;
        if (jpeg_read_scanlines(cinfo, &row, 1) != 1)
            return dse_err_set(d->err, DSE_ERR_IO, NULL, 0, "truncated JPEG data");
        if (!tmp) continue;
        if (comps == 3) {
            rgb_to_gray(row, dst, (size_t)ow);
            continue;
        }
        /* Adobe CMYK, stored inverted: R = C*K/255 rounded to nearest (image.h). */
        for (int x = 0; x < ow; x++) {
            unsigned cc = row[4 * x], m = row[4 * x + 1], y = row[4 * x + 2], k = row[4 * x + 3];
            unsigned r = (cc * k + 127) / 255, g = (m * k + 127) / 255, b = (y * k + 127) / 255;
            if (d->channels == 3) {
                dst[3 * x] = (uint8_t)r, dst[3 * x + 1] = (uint8_t)g, dst[3 * x + 2] = (uint8_t)b;
            } else {
                dst[x] = luma(r, g, b);
            }
        }
    }
    jpeg_finish_decompress(cinfo);
    return DSE_OK;
}

static enum dse_status jpeg_decode_guarded(struct jpeg_dec *d) {
    d->cinfo.err = &d->fail.pub;
    if (setjmp(d->fail.jmp)) return dse_err_set(d->err, d->fail.code, NULL, 0, "%s", d->fail.msg);
    jpeg_create_decompress(&d->cinfo);
    return jpeg_decode_body(d);
}

static enum dse_status decode_jpeg(const uint8_t *buf, size_t len, int channels, int min_short,
                                   int64_t max_pixels, struct dse_image *out, struct dse_err *err) {
    struct jpeg_dec d;
    memset(&d, 0, sizeof d);
    jpeg_fail_init(&d.fail, "corrupt JPEG");
    d.buf = buf, d.len = len, d.channels = channels, d.min_short = min_short, d.max_pixels = max_pixels;
    d.out = out, d.err = err;
    enum dse_status st = jpeg_decode_guarded(&d);
    jpeg_destroy_decompress(&d.cinfo); /* safe after a failed create: it checks mem */
    return st;
}

/* A destination that grows a malloc'd buffer (jpeg_mem_dest leaks its buffer when an
 * error interrupts the compression, so it is not used). */
struct jpeg_sink {
    struct jpeg_destination_mgr pub;
    uint8_t                    *buf;
    size_t                      cap, len;
};

static void jpeg_sink_init(j_compress_ptr cinfo) {
    struct jpeg_sink *s = (struct jpeg_sink *)cinfo->dest;
    s->cap = 65536;
    s->buf = malloc(s->cap);
    if (!s->buf) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
    s->pub.next_output_byte = s->buf;
    s->pub.free_in_buffer = s->cap;
}

static boolean jpeg_sink_grow(j_compress_ptr cinfo) {
    struct jpeg_sink *s = (struct jpeg_sink *)cinfo->dest;
    uint8_t *nb = realloc(s->buf, s->cap * 2);
    if (!nb) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
    s->buf = nb;
    s->pub.next_output_byte = nb + s->cap; /* the whole old buffer is full here */
    s->pub.free_in_buffer = s->cap;
    s->cap *= 2;
    return TRUE;
}

static void jpeg_sink_term(j_compress_ptr cinfo) {
    struct jpeg_sink *s = (struct jpeg_sink *)cinfo->dest;
    s->len = s->cap - s->pub.free_in_buffer;
}

struct jpeg_enc {
    struct jpeg_compress_struct cinfo;
    struct jpeg_fail            fail;
    struct jpeg_sink            sink;
    const struct dse_image     *im;
    int                         quality;
    struct dse_err             *err;
};

static enum dse_status jpeg_encode_guarded(struct jpeg_enc *e) {
    j_compress_ptr cinfo = &e->cinfo;
    cinfo->err = &e->fail.pub;
    if (setjmp(e->fail.jmp)) return dse_err_set(e->err, e->fail.code, NULL, 0, "%s", e->fail.msg);
    jpeg_create_compress(cinfo);
    e->sink.pub.init_destination = jpeg_sink_init;
    e->sink.pub.empty_output_buffer = jpeg_sink_grow;
    e->sink.pub.term_destination = jpeg_sink_term;
    cinfo->dest = &e->sink.pub;
    cinfo->image_width = (JDIMENSION)e->im->w;
    cinfo->image_height = (JDIMENSION)e->im->h;
    cinfo->input_components = e->im->c;
    cinfo->in_color_space = e->im->c == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(cinfo); /* YCbCr with 2x2 luma sampling: 4:2:0, as PIL */
    jpeg_set_quality(cinfo, e->quality, TRUE);
    jpeg_start_compress(cinfo, TRUE);
    size_t stride = (size_t)e->im->w * (size_t)e->im->c;
    while (cinfo->next_scanline < cinfo->image_height) {
        JSAMPROW row = e->im->px + (size_t)cinfo->next_scanline * stride;
        jpeg_write_scanlines(cinfo, &row, 1);
    }
    jpeg_finish_compress(cinfo);
    return DSE_OK;
}

static enum dse_status check_encodable(const struct dse_image *im, struct dse_err *err) {
    if (!im->px || im->w < 1 || im->h < 1 || im->w > DSE_IMAGE_DIM_MAX ||
        im->h > DSE_IMAGE_DIM_MAX || (im->c != 1 && im->c != 3))
        return dse_err_set(err, DSE_ERR_SHAPE, NULL, 0,
                           "cannot encode an image of %dx%d with %d channels; expected 1 to %d "
                           "a side and 1 or 3 channels", im->w, im->h, im->c, DSE_IMAGE_DIM_MAX);
    return DSE_OK;
}

enum dse_status dse_image_encode_jpeg(const struct dse_image *im, int quality, uint8_t **out,
                                      size_t *len, struct dse_err *err) {
    *out = NULL;
    *len = 0;
    if (quality < 1 || quality > 100)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0,
                           "JPEG quality %d is out of range; expected 1 to 100", quality);
    enum dse_status st = check_encodable(im, err);
    if (st) return st;
    struct jpeg_enc e;
    memset(&e, 0, sizeof e);
    jpeg_fail_init(&e.fail, "cannot encode JPEG");
    e.im = im, e.quality = quality, e.err = err;
    st = jpeg_encode_guarded(&e);
    jpeg_destroy_compress(&e.cinfo);
    if (st) {
        free(e.sink.buf);
        return st;
    }
    *out = e.sink.buf;
    *len = e.sink.len;
    return DSE_OK;
}

/* ---- PNG ----------------------------------------------------------------------------- */

/* libpng's side of a decode or encode: the bytes, and the error its callbacks report. */
struct png_io {
    const uint8_t  *src; /* decode: the file */
    size_t          len, pos;
    uint8_t        *dst; /* encode: the growing output */
    size_t          cap;
    int             truncated;
    enum dse_status code;
    const char     *what; /* "corrupt PNG" or "cannot encode PNG" */
    char            msg[300];
};

static void png_io_fail(png_structp png, png_const_charp words) {
    struct png_io *io = png_get_error_ptr(png);
    if (io->truncated) {
        snprintf(io->msg, sizeof io->msg, "truncated PNG data");
    } else {
        if (strstr(words, "ut of memory") || strstr(words, "nsufficient memory"))
            io->code = DSE_ERR_NOMEM;
        snprintf(io->msg, sizeof io->msg, "%s: %s", io->what, words);
    }
    png_longjmp(png, 1);
}

/* Warnings are about ancillary chunks (a bad iCCP profile, a text chunk with a bad CRC,
 * which libpng then drops) and leave the pixels alone: ignored. Except one: libpng checks
 * the end of the image data (zlib's Adler-32 among it) after the last row, and reports
 * damage found there only as a warning ("benign error"): "IDAT: incorrect data check".
 * Extra data after a complete image is harmless and stays a warning. */
static void png_io_warn(png_structp png, png_const_charp words) {
    if (strncmp(words, "IDAT: ", 6) == 0 && !strstr(words, "Extra compressed data") &&
        !strstr(words, "Too much image data"))
        png_io_fail(png, words);
}

static void png_io_read(png_structp png, png_bytep data, size_t n) {
    struct png_io *io = png_get_io_ptr(png);
    if (n > io->len - io->pos) {
        io->truncated = 1;
        png_error(png, "truncated");
    }
    memcpy(data, io->src + io->pos, n);
    io->pos += n;
}

static void png_io_write(png_structp png, png_bytep data, size_t n) {
    struct png_io *io = png_get_io_ptr(png);
    if (n > io->cap - io->len) {
        size_t cap = io->cap ? io->cap : 65536;
        while (n > cap - io->len) cap *= 2;
        uint8_t *nb = realloc(io->dst, cap);
        if (!nb) png_error(png, "out of memory");
        io->dst = nb;
        io->cap = cap;
    }
    memcpy(io->dst + io->len, data, n);
    io->len += n;
}

static void png_io_flush(png_structp png) {
    (void)png;
}

struct png_dec {
    png_structp       png;
    png_infop         info;
    struct png_io     io;
    int               channels;
    int64_t           max_pixels;
    struct dse_image *out;
    struct dse_err   *err;
};

static enum dse_status png_decode_body(struct png_dec *d) {
    png_structp png = d->png;
    png_infop info = d->info;
    png_set_read_fn(png, &d->io, png_io_read);
    png_set_user_limits(png, 0x7fffffffU, 0x7fffffffU); /* the size check is ours, below */
    png_read_info(png, info);
    png_uint_32 w, h;
    int depth, ctype, interlace;
    png_get_IHDR(png, info, &w, &h, &depth, &ctype, &interlace, NULL, NULL);
    enum dse_status size_st = check_size(d->err, w, h, d->max_pixels);
    if (size_st) return size_st;
    /* No gamma, no background: each sample as stored, alpha dropped (image.h). */
    if (depth == 16) png_set_strip_16(png); /* keeps the high byte */
    if (ctype == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (ctype == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if ((ctype & PNG_COLOR_MASK_ALPHA) || ctype == PNG_COLOR_TYPE_PALETTE) png_set_strip_alpha(png);
    int color = (ctype & PNG_COLOR_MASK_COLOR) != 0;
    if (!color && d->channels == 3) png_set_gray_to_rgb(png);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int oc = color ? 3 : d->channels;
    if (png_get_channels(png, info) != oc || png_get_bit_depth(png, info) != 8 ||
        png_get_rowbytes(png, info) != (size_t)w * (size_t)oc)
        return dse_err_set(d->err, DSE_ERR_INTERNAL, NULL, 0,
                           "libpng delivers %d channels of %d bits for PNG colour type %d, "
                           "depth %d",
                           png_get_channels(png, info), png_get_bit_depth(png, info), ctype, depth);
    /* A colour image wanted gray is read as RGB, then turned to luma in place. */
    enum dse_status st = dse_image_reserve(d->out, (int)w, (int)h, oc, d->err);
    if (st) return st;
    size_t stride = (size_t)w * (size_t)oc;
    for (int p = 0; p < passes; p++)
        for (png_uint_32 y = 0; y < h; y++) png_read_row(png, d->out->px + y * stride, NULL);
    /* The last IDAT's CRC was checked when its last row came in; later chunks are not read. */
    if (oc != d->channels) {
        rgb_to_gray(d->out->px, d->out->px, (size_t)w * h);
        d->out->c = 1;
    }
    return DSE_OK;
}

static enum dse_status png_decode_guarded(struct png_dec *d) {
    if (setjmp(png_jmpbuf(d->png)))
        return dse_err_set(d->err, d->io.code, NULL, 0, "%s", d->io.msg);
    return png_decode_body(d);
}

static enum dse_status decode_png(const uint8_t *buf, size_t len, int channels, int64_t max_pixels,
                                  struct dse_image *out, struct dse_err *err) {
    struct png_dec d;
    memset(&d, 0, sizeof d);
    d.io.src = buf, d.io.len = len, d.io.code = DSE_ERR_IO, d.io.what = "corrupt PNG";
    d.channels = channels, d.max_pixels = max_pixels, d.out = out, d.err = err;
    d.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &d.io, png_io_fail, png_io_warn);
    if (d.png) d.info = png_create_info_struct(d.png);
    if (!d.png || !d.info) {
        png_destroy_read_struct(&d.png, &d.info, NULL);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a PNG decoder");
    }
    enum dse_status st = png_decode_guarded(&d);
    png_destroy_read_struct(&d.png, &d.info, NULL);
    return st;
}

struct png_enc {
    png_structp             png;
    png_infop               info;
    struct png_io           io;
    const struct dse_image *im;
    struct dse_err         *err;
};

static enum dse_status png_encode_guarded(struct png_enc *e) {
    if (setjmp(png_jmpbuf(e->png)))
        return dse_err_set(e->err, e->io.code, NULL, 0, "%s", e->io.msg);
    png_set_write_fn(e->png, &e->io, png_io_write, png_io_flush);
    png_set_compression_level(e->png, 1);
    png_set_IHDR(e->png, e->info, (png_uint_32)e->im->w, (png_uint_32)e->im->h, 8,
                 e->im->c == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(e->png, e->info);
    size_t stride = (size_t)e->im->w * (size_t)e->im->c;
    for (int y = 0; y < e->im->h; y++) png_write_row(e->png, e->im->px + (size_t)y * stride);
    png_write_end(e->png, NULL);
    return DSE_OK;
}

enum dse_status dse_image_encode_png(const struct dse_image *im, uint8_t **out, size_t *len,
                                     struct dse_err *err) {
    *out = NULL;
    *len = 0;
    enum dse_status st = check_encodable(im, err);
    if (st) return st;
    struct png_enc e;
    memset(&e, 0, sizeof e);
    e.io.code = DSE_ERR_IO, e.io.what = "cannot encode PNG";
    e.im = im, e.err = err;
    e.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &e.io, png_io_fail, png_io_warn);
    if (e.png) e.info = png_create_info_struct(e.png);
    if (!e.png || !e.info) {
        png_destroy_write_struct(&e.png, &e.info);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a PNG encoder");
    }
    st = png_encode_guarded(&e);
    png_destroy_write_struct(&e.png, &e.info);
    if (st) {
        free(e.io.dst);
        return st;
    }
    *out = e.io.dst;
    *len = e.io.len;
    return DSE_OK;
}

/* ---- BMP (our own reader) ------------------------------------------------------------- */

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return le16(p) | le16(p + 2) << 16; }

/* Put one RGB pixel into row y, column x of out (c = 1: its luma). */
static inline void put_rgb(struct dse_image *out, int x, int y, unsigned r, unsigned g, unsigned b) {
    uint8_t *p = out->px + ((size_t)y * (size_t)out->w + (size_t)x) * (size_t)out->c;
    if (out->c == 1) p[0] = luma(r, g, b);
    else p[0] = (uint8_t)r, p[1] = (uint8_t)g, p[2] = (uint8_t)b;
}

/* Windows BMP, the kinds PIL reads that cameras and tools write: a BITMAPINFOHEADER or a
 * later one (V4, V5); 1, 4 or 8 bits through a palette, 24 bits (BGR) or 32 bits (BGRX, the
 * fourth byte dropped as PIL's convert("RGB") drops alpha); uncompressed (BI_RGB, or
 * BI_BITFIELDS with the usual 32-bit masks); rows bottom-up, top-down for a negative
 * height. The size is checked against the budget and the file's length before anything is
 * allocated. RLE, 16-bit and OS/2 BMPs are refused, naming what they are. */
static enum dse_status decode_bmp(const uint8_t *b, size_t len, int channels, int64_t max_pixels,
                                  struct dse_image *out, struct dse_err *err) {
    if (len < 14 + 40) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "truncated BMP: %zu bytes", len);
    const uint32_t off = le32(b + 10), hsize = le32(b + 14);
    if (hsize == 12) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "OS/2 BMP (12-byte header) is not supported");
    if (hsize < 40 || hsize > len - 14)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "corrupt BMP: a header of %u bytes", hsize);
    const int32_t sw = (int32_t)le32(b + 18), sh = (int32_t)le32(b + 22);
    const uint32_t planes = le16(b + 26), bpp = le16(b + 28), comp = le32(b + 30);
    uint32_t ncolors = le32(b + 46);
    if (sw <= 0 || sh == 0 || sh == INT32_MIN || planes != 1)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "corrupt BMP: %d x %d pixels, %u planes", (int)sw, (int)sh,
                           planes);
    const uint32_t w = (uint32_t)sw, h = sh < 0 ? (uint32_t)-sh : (uint32_t)sh;
    enum dse_status st = check_size(err, w, h, max_pixels);
    if (st) return st;
    if (comp == 1 || comp == 2)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "RLE-compressed BMP is not supported; save it uncompressed");
    if (comp == 3 && !(bpp == 32 && len >= 66 && le32(b + 54) == 0xFF0000u && le32(b + 58) == 0xFF00u &&
                       le32(b + 62) == 0xFFu))
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "BMP with %u-bit fields other than 8-8-8 is not supported", bpp);
    if (comp != 0 && comp != 3)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "BMP compression %u is not supported", comp);
    if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 24 && bpp != 32)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%u-bit BMP is not supported (1, 4, 8, 24 and 32 are)", bpp);
    const uint8_t *pal = b + 14 + hsize;
    if (bpp <= 8) {
        if (ncolors == 0 || ncolors > (1u << bpp)) ncolors = 1u << bpp;
        if ((uint64_t)14 + hsize + 4ull * ncolors > off)
            return dse_err_set(err, DSE_ERR_IO, NULL, 0, "corrupt BMP: its palette overlaps its pixels");
    }
    const uint64_t stride = ((uint64_t)bpp * w + 31) / 32 * 4;
    if (off > len || stride * h > len - off)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "truncated BMP: %zu bytes; %dx%d pixels of %u bits need %llu",
                           len, (int)w, (int)h, bpp, (unsigned long long)(off + stride * h));
    if ((st = dse_image_reserve(out, (int)w, (int)h, channels, err))) return st;
    for (uint32_t r = 0; r < h; r++) {
        const uint8_t *row = b + off + stride * r;
        const int y = sh < 0 ? (int)r : (int)(h - 1 - r);
        for (uint32_t x = 0; x < w; x++) {
            if (bpp >= 24) {
                const uint8_t *q = row + (size_t)x * (bpp / 8);
                put_rgb(out, (int)x, y, q[2], q[1], q[0]);
                continue;
            }
            const uint32_t bit = x * bpp, k = (row[bit / 8] >> (8 - bpp - bit % 8)) & ((1u << bpp) - 1);
            if (k < ncolors) put_rgb(out, (int)x, y, pal[4 * k + 2], pal[4 * k + 1], pal[4 * k]);
            else put_rgb(out, (int)x, y, 0, 0, 0); /* past the palette: black, as PIL pads it */
        }
    }
    return DSE_OK;
}

/* ---- PGM and PPM (our own reader) ------------------------------------------------------ */

/* The next header number of a Netpbm file at *at: whitespace and # comments skipped, then
 * decimal digits (at most 65535 for a sample, DSE_IMAGE_DIM_MAX for a size: lim). -1 if
 * there is none or it is larger. */
static long pnm_number(const uint8_t *b, size_t len, size_t *at, long lim) {
    size_t i = *at;
    for (;;) {
        while (i < len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r' || b[i] == '\v' || b[i] == '\f'))
            i++;
        if (i < len && b[i] == '#')
            while (i < len && b[i] != '\n' && b[i] != '\r') i++;
        else break;
    }
    long v = 0;
    size_t start = i;
    while (i < len && b[i] >= '0' && b[i] <= '9' && v <= lim) v = 10 * v + (b[i++] - '0');
    if (i == start || v > lim) return -1;
    *at = i;
    return v;
}

/* Netpbm PGM (P2 plain, P5 binary) and PPM (P3, P6), as PIL reads them: width, height and
 * maxval (1..65535) in text with # comments, then the samples, binary (one byte each, two
 * big-endian above 255) or plain text. Each sample is scaled to 8 bits as
 * (v * 255 + maxval / 2) / maxval, clipped at maxval first; maxval 255 keeps it. */
static enum dse_status decode_pnm(const uint8_t *b, size_t len, int channels, int64_t max_pixels,
                                  struct dse_image *out, struct dse_err *err) {
    const int kind = b[1] - '0', plain = kind == 2 || kind == 3, comps = kind == 3 || kind == 6 ? 3 : 1;
    const char *name = comps == 3 ? "PPM" : "PGM";
    size_t at = 2;
    long w = pnm_number(b, len, &at, DSE_IMAGE_DIM_MAX + 1L), h = pnm_number(b, len, &at, DSE_IMAGE_DIM_MAX + 1L);
    if (w < 0 || h < 0) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "corrupt %s: no width and height", name);
    enum dse_status st = check_size(err, (unsigned long)w, (unsigned long)h, max_pixels);
    if (st) return st;
    long maxval = pnm_number(b, len, &at, 65535);
    if (w < 1 || h < 1 || maxval < 1)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "corrupt %s: %ldx%ld pixels, maxval %ld (1 to 65535)", name, w,
                           h, maxval);
    if (at >= len) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "truncated %s: no pixels", name);
    at++; /* the one whitespace byte after maxval */
    const uint64_t samples = (uint64_t)w * (uint64_t)h * (uint64_t)comps, bps = maxval > 255 ? 2 : 1;
    if ((plain ? samples : samples * bps) > len - at) /* plain text: a digit a sample at least */
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "truncated %s: %zu bytes for %ldx%ld pixels", name, len, w, h);
    if ((st = dse_image_reserve(out, (int)w, (int)h, channels, err))) return st;
    unsigned lut_max = (unsigned)maxval, v[3];
    for (long y = 0; y < h; y++)
        for (long x = 0; x < w; x++) {
            for (int k = 0; k < comps; k++) {
                long s;
                if (plain) {
                    if ((s = pnm_number(b, len, &at, 65535)) < 0)
                        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "truncated %s: sample %lld of %llu missing", name,
                                           (long long)((y * w + x) * comps + k), (unsigned long long)samples);
                } else {
                    s = bps == 2 ? (long)b[at] << 8 | b[at + 1] : b[at];
                    at += bps;
                }
                if (s > (long)lut_max) s = (long)lut_max;
                v[k] = lut_max == 255 ? (unsigned)s : (unsigned)(((uint64_t)s * 255 + lut_max / 2) / lut_max);
            }
            if (comps == 1) v[1] = v[2] = v[0]; /* gray: luma(v, v, v) is v */
            put_rgb(out, (int)x, (int)y, v[0], v[1], v[2]);
        }
    return DSE_OK;
}

/* ---- TIFF (libtiff) ------------------------------------------------------------------- */

/* libtiff's side of a decode: the bytes, and the first error its handler reported. Errors
 * go to a handler of this handle (libtiff 4.5's TIFFOpenOptions), not the process-wide
 * one, so decoding threads do not share it. */
struct tiff_io {
    const uint8_t *src;
    size_t         len, pos;
    int            truncated; /* a read asked for bytes past the end */
    char           msg[300];
};

static tmsize_t tiff_io_read(thandle_t h, void *data, tmsize_t n) {
    struct tiff_io *io = h;
    if (n < 0) return -1;
    size_t want = (size_t)n, have = io->pos < io->len ? io->len - io->pos : 0;
    if (want > have) io->truncated = 1, want = have;
    if (want) memcpy(data, io->src + io->pos, want);
    io->pos += want;
    return (tmsize_t)want;
}

static tmsize_t tiff_io_write(thandle_t h, void *data, tmsize_t n) {
    (void)h, (void)data, (void)n;
    return -1;
}

static toff_t tiff_io_seek(thandle_t h, toff_t off, int whence) {
    struct tiff_io *io = h;
    uint64_t base = whence == SEEK_CUR ? io->pos : whence == SEEK_END ? io->len : 0;
    if (off > UINT64_MAX - base || base + off > SIZE_MAX) return (toff_t)-1; /* past the end: reads come short */
    io->pos = (size_t)(base + off);
    return io->pos;
}

static int tiff_io_close(thandle_t h) {
    (void)h;
    return 0;
}

static toff_t tiff_io_size(thandle_t h) {
    return ((struct tiff_io *)h)->len;
}

static int tiff_io_map(thandle_t h, void **base, toff_t *size) {
    (void)h, (void)base, (void)size;
    return 0; /* not mapped: every read goes through tiff_io_read, which sees truncation */
}

static void tiff_io_unmap(thandle_t h, void *base, toff_t size) {
    (void)h, (void)base, (void)size;
}

static int tiff_io_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif, (void)module;
    struct tiff_io *io = user;
    if (!io->msg[0]) vsnprintf(io->msg, sizeof io->msg, fmt, ap); /* the first says most */
    return 1;
}

static int tiff_io_warn(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif, (void)user, (void)module, (void)fmt, (void)ap;
    return 1; /* unknown tags and the like: the pixels are read regardless */
}

static enum dse_status tiff_fail(struct tiff_io *io, struct dse_err *err, const char *what) {
    if (io->truncated) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "truncated TIFF data");
    if (strstr(io->msg, "ut of memory")) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "%s: %s", what, io->msg);
    return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: %s", what, io->msg[0] ? io->msg : "libtiff gave no reason");
}

/* The first image of a TIFF (PIL reads the first too) through TIFFReadRGBAImageOriented:
 * gray, RGB, palette, CMYK, YCbCr, 1 to 16 bits a sample (libtiff scales 16-bit samples to
 * 8 as (v + 128) / 257), strips or tiles, any compression libtiff was built with. An alpha
 * channel is dropped as stored: libtiff would premultiply an unassociated one, so it is
 * declared associated before reading. Width and height are checked against the budget
 * before anything is allocated for the pixels, and libtiff's own allocations are held to
 * what an image of the budget needs. */
static enum dse_status decode_tiff(const uint8_t *buf, size_t len, int channels, int64_t max_pixels,
                                   struct dse_image *out, struct dse_err *err) {
    struct tiff_io io = { .src = buf, .len = len };
    if (max_pixels <= 0) max_pixels = DSE_IMAGE_PIXELS_DEFAULT;
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a TIFF decoder");
    TIFFOpenOptionsSetErrorHandlerExtR(opts, tiff_io_error, &io);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, tiff_io_warn, &io);
    /* 8 bytes a pixel (16-bit RGBA) of an image at the budget, and 1 MiB for tables */
    TIFFOpenOptionsSetMaxSingleMemAlloc(opts, (tmsize_t)(8 * max_pixels + (1 << 20)));
    TIFF *tif = TIFFClientOpenExt("TIFF", "rm", &io, tiff_io_read, tiff_io_write, tiff_io_seek, tiff_io_close,
                                  tiff_io_size, tiff_io_map, tiff_io_unmap, opts);
    TIFFOpenOptionsFree(opts);
    if (!tif) return tiff_fail(&io, err, "corrupt TIFF");
    uint32_t w = 0, h = 0, *raster = NULL;
    uint16_t nextra = 0, *extra = NULL;
    char why[1024] = "";
    enum dse_status st = DSE_OK;
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h) || !w || !h) {
        st = dse_err_set(err, DSE_ERR_IO, NULL, 0, "corrupt TIFF: %ux%u pixels", w, h);
        goto done;
    }
    if ((st = check_size(err, w, h, max_pixels))) goto done;
    if (!TIFFRGBAImageOK(tif, why)) { /* 32-bit or floating-point samples, an unknown colour space */
        st = io.truncated ? tiff_fail(&io, err, "corrupt TIFF")
                          : dse_err_set(err, DSE_ERR_IO, NULL, 0, "unsupported TIFF: %s", why);
        goto done;
    }
    if (TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &nextra, &extra) && nextra >= 1 && nextra <= 32 &&
        extra[0] == EXTRASAMPLE_UNASSALPHA) { /* more: left as they are, never a shorter list */
        uint16_t assoc[32];
        memcpy(assoc, extra, nextra * sizeof *assoc);
        assoc[0] = EXTRASAMPLE_ASSOCALPHA;
        TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, nextra, assoc);
    }
    raster = malloc((size_t)w * h * sizeof *raster);
    if (!raster) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a TIFF of %ux%u pixels", w, h);
        goto done;
    }
    if (!TIFFReadRGBAImageOriented(tif, w, h, raster, ORIENTATION_TOPLEFT, 1)) {
        st = tiff_fail(&io, err, "corrupt TIFF");
        goto done;
    }
    if ((st = dse_image_reserve(out, (int)w, (int)h, channels, err))) goto done;
    for (size_t i = 0, n = (size_t)w * h; i < n; i++) {
        const uint32_t p = raster[i];
        if (channels == 3)
            out->px[3 * i] = (uint8_t)TIFFGetR(p), out->px[3 * i + 1] = (uint8_t)TIFFGetG(p),
            out->px[3 * i + 2] = (uint8_t)TIFFGetB(p);
        else
            out->px[i] = luma(TIFFGetR(p), TIFFGetG(p), TIFFGetB(p));
    }
done:
    free(raster);
    TIFFClose(tif);
    return st;
}

/* ---- WebP (libwebp) ------------------------------------------------------------------- */

/* libwebp's status in words, for messages. */
static const char *webp_words(VP8StatusCode vs) {
    switch (vs) {
    case VP8_STATUS_BITSTREAM_ERROR:     return "bad bitstream";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "a feature libwebp does not support";
    case VP8_STATUS_INVALID_PARAM:       return "invalid parameters";
    default:                             return "decoder error";
    }
}

/* A still WebP, lossy or lossless, decoded straight into out as RGB (alpha dropped, not
 * blended: MODE_RGB); gray is the luma of that. Width and height come from the headers
 * (WebPGetFeatures reads no pixel data) and are checked against the budget first.
 * Animated WebPs are refused. */
static enum dse_status decode_webp(const uint8_t *buf, size_t len, int channels, int64_t max_pixels,
                                   struct dse_image *out, struct dse_err *err) {
    WebPDecoderConfig cfg;
    if (!WebPInitDecoderConfig(&cfg))
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "libwebp's decoder does not match its header");
    VP8StatusCode vs = WebPGetFeatures(buf, len, &cfg.input);
    if (vs == VP8_STATUS_NOT_ENOUGH_DATA) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "truncated WebP data");
    if (vs != VP8_STATUS_OK)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "corrupt WebP: %s in its headers", webp_words(vs));
    const int w = cfg.input.width, h = cfg.input.height;
    if (w < 1 || h < 1) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "corrupt WebP: %dx%d pixels", w, h);
    enum dse_status st = check_size(err, (unsigned long)w, (unsigned long)h, max_pixels);
    if (st) return st;
    if (cfg.input.has_animation)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0,
                           "animated WebP is not supported; save its first frame as a still image");
    if ((st = dse_image_reserve(out, w, h, 3, err))) return st; /* RGB, then luma in place */
    cfg.output.colorspace = MODE_RGB;
    cfg.output.is_external_memory = 1;
    cfg.output.u.RGBA.rgba = out->px;
    cfg.output.u.RGBA.stride = 3 * w;
    cfg.output.u.RGBA.size = (size_t)w * (size_t)h * 3;
    vs = WebPDecode(buf, len, &cfg);
    WebPFreeDecBuffer(&cfg.output); /* frees nothing of ours: the memory is external */
    if (vs == VP8_STATUS_NOT_ENOUGH_DATA) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "truncated WebP data");
    if (vs == VP8_STATUS_OUT_OF_MEMORY)
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory decoding a WebP of %dx%d pixels", w, h);
    if (vs != VP8_STATUS_OK) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "corrupt WebP: %s", webp_words(vs));
    if (channels == 1) {
        rgb_to_gray(out->px, out->px, (size_t)w * (size_t)h);
        out->c = 1;
    }
    return DSE_OK;
}

/* ---- decode -------------------------------------------------------------------------- */

enum dse_status dse_image_decode(const uint8_t *buf, size_t len, int channels, int min_short, int64_t max_pixels,
                                 struct dse_image *out, struct dse_err *err) {
    DSE_ASSERT(channels == 1 || channels == 3);
    switch (dse_image_sniff(buf, len)) {
    case DSE_IMAGE_JPEG: return decode_jpeg(buf, len, channels, min_short, max_pixels, out, err);
    case DSE_IMAGE_PNG:  return decode_png(buf, len, channels, max_pixels, out, err);
    case DSE_IMAGE_BMP:  return decode_bmp(buf, len, channels, max_pixels, out, err);
    case DSE_IMAGE_PNM:  return decode_pnm(buf, len, channels, max_pixels, out, err);
    case DSE_IMAGE_TIFF: return decode_tiff(buf, len, channels, max_pixels, out, err);
    case DSE_IMAGE_WEBP: return decode_webp(buf, len, channels, max_pixels, out, err);
    case DSE_IMAGE_UNKNOWN: break;
    }
    if (len == 0)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "not a JPEG, PNG, BMP, PPM, PGM, TIFF or WebP file: empty");
    return dse_err_set(err, DSE_ERR_IO, NULL, 0,
                       "not a JPEG, PNG, BMP, PPM, PGM, TIFF or WebP file: starts with %02x %02x %02x", buf[0],
                       len > 1 ? buf[1] : 0, len > 2 ? buf[2] : 0);
}

/* ---- resampling ---------------------------------------------------------------------- */

/* Coefficients carry RS_BITS fractional bits: 14 leaves room for 8-bit samples times a
 * sum of weights a little above 1 in 32-bit sums (and in 16-bit lanes, should a SIMD path
 * want them). */
#define RS_BITS  14
#define RS_ONE   (1 << RS_BITS)
#define RS_ROUND (1 << (RS_BITS - 1))
#define RS_CHUNK 1024 /* bytes of an output row the vertical pass sums at a time */

/* One axis: output i reads in[lo[i] .. lo[i] + n[i]) of the box with weights cf[i*k ..].
 * taps > 0: every n[i] is taps (windows padded with zero weights), so the horizontal pass
 * can run a loop of fixed length that the compiler unrolls. */
struct rs_axis {
    int32_t *lo, *n;
    int16_t *cf;
    int      k, taps;
};

/* The taps of the triangle filter widened by the scale when shrinking: PIL's
 * precompute_coeffs (Resample.c) with support 1, weights normalized in double, then each
 * rounded to RS_BITS bits. Taps whose rounded weight is 0 at either end are dropped; then,
 * if pad, shorter windows are padded with zero weights to the longest (moved left at the
 * right edge of the box), which changes no sum. */
static void rs_coeffs(int in, int out, int pad, struct rs_axis *a, double *wt) {
    double scale = (double)in / out;
    double fs = scale > 1.0 ? scale : 1.0;
    double support = fs, inv = 1.0 / fs;
    int taps = 0;
    for (int i = 0; i < out; i++) {
        double center = (i + 0.5) * scale;
        int lo = (int)(center - support + 0.5), hi = (int)(center + support + 0.5);
        if (lo < 0) lo = 0;
        if (hi > in) hi = in;
        int n = hi - lo;
        DSE_ASSERT(n >= 1 && n <= a->k);
        double sum = 0.0;
        for (int j = 0; j < n; j++) {
            double t = fabs((j + lo - center + 0.5) * inv);
            wt[j] = t < 1.0 ? 1.0 - t : 0.0;
            sum += wt[j];
        }
        int16_t *cf = a->cf + (size_t)i * (size_t)a->k;
        for (int j = 0; j < n; j++)
            cf[j] = (int16_t)(int)(0.5 + (sum > 0 ? wt[j] / sum : 0) * RS_ONE);
        int first = 0, last = n;
        while (first < last - 1 && cf[first] == 0) first++;
        while (last - 1 > first && cf[last - 1] == 0) last--;
        if (first) memmove(cf, cf + first, (size_t)(last - first) * sizeof *cf);
        a->lo[i] = lo + first;
        a->n[i] = last - first;
        if (a->n[i] > taps) taps = a->n[i];
    }
    a->taps = pad && taps <= in ? taps : 0;
    for (int i = 0; i < out && a->taps; i++) {
        int16_t *cf = a->cf + (size_t)i * (size_t)a->k;
        int n = a->n[i], shift = a->lo[i] + taps > in ? a->lo[i] + taps - in : 0;
        if (shift) {
            memmove(cf + shift, cf, (size_t)n * sizeof *cf);
            memset(cf, 0, (size_t)shift * sizeof *cf);
            a->lo[i] -= shift;
        }
        for (int j = shift + n; j < taps; j++) cf[j] = 0;
        a->n[i] = taps;
    }
}

static inline uint8_t rs_clamp(int32_t v) {
    v >>= RS_BITS;
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Horizontal pass over `rows` rows of c channels: src and dst point at the box's left
 * edge. K > 0 is a->taps as a constant, so each case of rs_horiz compiles to an unrolled
 * loop; K == 0 reads each window's length. */
static inline __attribute__((always_inline)) void
rs_horiz_k(const uint8_t *src, size_t sstride, int rows, uint8_t *dst, size_t dstride, int ow,
           const struct rs_axis *a, const int c, const int K) {
    for (int y = 0; y < rows; y++) {
        const uint8_t *s = src + (size_t)y * sstride;
        uint8_t *d = dst + (size_t)y * dstride;
        for (int i = 0; i < ow; i++) {
            const uint8_t *p = s + (size_t)a->lo[i] * (size_t)c;
            const int16_t *w = a->cf + (size_t)i * (size_t)a->k;
            int n = K ? K : a->n[i];
            if (c == 3) {
                int32_t r = RS_ROUND, g = RS_ROUND, b = RS_ROUND;
                for (int j = 0; j < n; j++) {
                    r += p[3 * j] * w[j];
                    g += p[3 * j + 1] * w[j];
                    b += p[3 * j + 2] * w[j];
                }
                d[3 * i] = rs_clamp(r), d[3 * i + 1] = rs_clamp(g), d[3 * i + 2] = rs_clamp(b);
            } else {
                int32_t v = RS_ROUND;
                for (int j = 0; j < n; j++) v += p[j] * w[j];
                d[i] = rs_clamp(v);
            }
        }
    }
}

static void rs_horiz(const uint8_t *src, size_t sstride, int rows, uint8_t *dst, size_t dstride,
                     int ow, const struct rs_axis *a, int c) {
#define RS_CASE(C, K) rs_horiz_k(src, sstride, rows, dst, dstride, ow, a, C, K); break
    if (c == 3) {
        switch (a->taps) {
        case 2:  RS_CASE(3, 2);
        case 3:  RS_CASE(3, 3);
        case 4:  RS_CASE(3, 4);
        case 5:  RS_CASE(3, 5);
        default: RS_CASE(3, 0);
        }
    } else {
        switch (a->taps) {
        case 2:  RS_CASE(1, 2);
        case 3:  RS_CASE(1, 3);
        case 4:  RS_CASE(1, 4);
        case 5:  RS_CASE(1, 5);
        default: RS_CASE(1, 0);
        }
    }
#undef RS_CASE
}

/* RGB rows with SSSE3 where the CPU has it (x86 only): per output pixel, pshufb spreads
 * 4 taps of R, G, B into 16-bit pairs and pmaddwd multiplies them with pairs of weights:
 * the same integer sums as rs_horiz_k, in fewer instructions (0.27 -> 0.1 ms for the
 * 292x256 -> 227x227 horizontal pass). */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define RS_SSSE3   1
#define RS_GROUPS  2 /* of 4 taps: windows of up to 8 taps (shrinking by up to 3.5) */

/* The weights of output i, group g (taps 4g..4g+3): {w0,w1,w0,w1,w0,w1,0,0} and
 * {w2,w3,w2,w3,w2,w3,0,0}, taps past a->taps weighing 0. */
static void rs_pairs(const struct rs_axis *a, int ow, int16_t *pr) {
    int groups = (a->taps + 3) / 4;
    for (int i = 0; i < ow; i++) {
        const int16_t *cf = a->cf + (size_t)i * (size_t)a->k;
        for (int t = 0; t < groups * 4; t += 2) {
            int16_t w0 = t < a->taps ? cf[t] : 0, w1 = t + 1 < a->taps ? cf[t + 1] : 0;
            int16_t *v = pr + ((size_t)i * (size_t)groups * 2 + (size_t)t / 2) * 8;
            v[0] = v[2] = v[4] = w0;
            v[1] = v[3] = v[5] = w1;
            v[6] = v[7] = 0;
        }
    }
}

__attribute__((target("ssse3"))) static void
rs_horiz3_ssse3(const uint8_t *src, size_t sstride, int rows, uint8_t *dst, size_t dstride, int ow,
                const struct rs_axis *a, const int16_t *pr, const uint8_t *end) {
    const __m128i lo = _mm_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
    const __m128i hi = _mm_setr_epi8(6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1);
    const __m128i rnd = _mm_set1_epi32(RS_ROUND);
    int groups = (a->taps + 3) / 4;
    for (int y = 0; y < rows; y++) {
        const uint8_t *s = src + (size_t)y * sstride;
        uint8_t *d = dst + (size_t)y * dstride;
        for (int i = 0; i < ow; i++) {
            const uint8_t *p = s + (size_t)a->lo[i] * 3;
            if (end - p < 12 * groups + 4) { /* the 16-byte loads would pass the image's end */
                const int16_t *w = a->cf + (size_t)i * (size_t)a->k;
                int32_t r = RS_ROUND, g = RS_ROUND, b = RS_ROUND;
                for (int j = 0; j < a->taps; j++)
                    r += p[3 * j] * w[j], g += p[3 * j + 1] * w[j], b += p[3 * j + 2] * w[j];
                d[3 * i] = rs_clamp(r), d[3 * i + 1] = rs_clamp(g), d[3 * i + 2] = rs_clamp(b);
                continue;
            }
            const __m128i *w = (const __m128i *)(pr + (size_t)i * (size_t)groups * 16);
            __m128i acc = rnd;
            for (int g = 0; g < groups; g++) {
                __m128i v = _mm_loadu_si128((const __m128i *)(p + 12 * g));
                acc = _mm_add_epi32(acc, _mm_madd_epi16(_mm_shuffle_epi8(v, lo), w[2 * g]));
                acc = _mm_add_epi32(acc, _mm_madd_epi16(_mm_shuffle_epi8(v, hi), w[2 * g + 1]));
            }
            acc = _mm_srai_epi32(acc, RS_BITS);
            acc = _mm_packus_epi16(_mm_packs_epi32(acc, acc), acc); /* clamps as rs_clamp */
            uint32_t px = (uint32_t)_mm_cvtsi128_si32(acc);
            memcpy(d + 3 * (size_t)i, &px, 3);
        }
    }
}
#endif

/* Vertical pass: output row i sums rows lo[i].. of src (row 0 = the first row held), each
 * `bytes` long, in chunks that stay in L1 and vectorize. */
static void rs_vert(const uint8_t *src, size_t sstride, uint8_t *dst, size_t dstride, int oh,
                    size_t bytes, const struct rs_axis *a) {
    int32_t acc[RS_CHUNK];
    for (int i = 0; i < oh; i++) {
        const int16_t *w = a->cf + (size_t)i * (size_t)a->k;
        const uint8_t *s = src + (size_t)a->lo[i] * sstride;
        uint8_t *d = dst + (size_t)i * dstride;
        for (size_t x0 = 0; x0 < bytes; x0 += RS_CHUNK) {
            size_t m = bytes - x0 < RS_CHUNK ? bytes - x0 : RS_CHUNK;
            for (size_t x = 0; x < m; x++) acc[x] = RS_ROUND;
            for (int j = 0, n = a->n[i]; j < n; j++) {
                const uint8_t *r = s + (size_t)j * sstride + x0;
                int32_t wj = w[j];
                for (size_t x = 0; x < m; x++) acc[x] += r[x] * wj;
            }
            for (size_t x = 0; x < m; x++) d[x0 + x] = rs_clamp(acc[x]);
        }
    }
}

static void rs_horiz_any(const uint8_t *src, size_t sstride, int rows, uint8_t *dst,
                         size_t dstride, int ow, const struct rs_axis *a, int c, int simd,
                         const int16_t *pairs, const uint8_t *end) {
#ifdef RS_SSSE3
    if (simd) {
        rs_horiz3_ssse3(src, sstride, rows, dst, dstride, ow, a, pairs, end);
        return;
    }
#endif
    (void)simd, (void)pairs, (void)end;
    rs_horiz(src, sstride, rows, dst, dstride, ow, a, c);
}

void dse_image_work_deinit(struct dse_image_work *w) {
    free(w->buf);
    memset(w, 0, sizeof *w);
}

/* Carve n bytes, 64-aligned, at *off of the work buffer (base NULL: just count). */
static void *rs_carve(uint8_t *base, size_t *off, size_t n) {
    size_t at = (*off + 63) & ~(size_t)63;
    *off = at + n;
    return base ? base + at : NULL;
}

enum dse_status dse_image_resize(const struct dse_image *src, int x0, int y0, int cw, int ch,
                                 int dst_w, int dst_h, struct dse_image *dst,
                                 struct dse_image_work *w, struct dse_err *err) {
    if (src == dst || !src->px || (src->c != 1 && src->c != 3) || cw < 1 || ch < 1 || x0 < 0 ||
        y0 < 0 || x0 > src->w - cw || y0 > src->h - ch || dst_w < 1 || dst_h < 1 ||
        dst_w > DSE_IMAGE_DIM_MAX || dst_h > DSE_IMAGE_DIM_MAX)
        return dse_err_set(err, DSE_ERR_SHAPE, NULL, 0,
                           "cannot resize the box %dx%d at (%d, %d) of a %dx%dx%d image to %dx%d%s",
                           cw, ch, x0, y0, src->w, src->h, src->c, dst_w, dst_h,
                           src == dst ? " in place" : "");
    int c = src->c;
    size_t sstride = (size_t)src->w * (size_t)c, dstride = (size_t)dst_w * (size_t)c;
    const uint8_t *box = src->px + (size_t)y0 * sstride + (size_t)x0 * (size_t)c;
    int horiz = cw != dst_w, vert = ch != dst_h;
    double hs = (double)cw / dst_w, vs = (double)ch / dst_h;
    int hk = (int)ceil(hs > 1.0 ? hs : 1.0) * 2 + 1, vk = (int)ceil(vs > 1.0 ? vs : 1.0) * 2 + 1;

    /* Lay out the work buffer: two coefficient tables, a double scratch row for them and
     * the intermediate image (the rows the vertical pass reads, each dst_w wide). The rows
     * held are not known before the vertical table exists, so reserve the whole box. */
    uint8_t *base = NULL;
    size_t need = 0;
    struct rs_axis ha = { .k = hk }, va = { .k = vk };
    double *wt = NULL;
    uint8_t *mid = NULL;
    int16_t *pairs = NULL;
    for (int pass = 0; pass < 2; pass++) {
        size_t off = 0;
        ha.lo = rs_carve(base, &off, (size_t)dst_w * sizeof(int32_t));
        ha.n = rs_carve(base, &off, (size_t)dst_w * sizeof(int32_t));
        ha.cf = rs_carve(base, &off, (size_t)dst_w * (size_t)hk * sizeof(int16_t));
        va.lo = rs_carve(base, &off, (size_t)dst_h * sizeof(int32_t));
        va.n = rs_carve(base, &off, (size_t)dst_h * sizeof(int32_t));
        va.cf = rs_carve(base, &off, (size_t)dst_h * (size_t)vk * sizeof(int16_t));
        wt = rs_carve(base, &off, (size_t)(hk > vk ? hk : vk) * sizeof(double));
#ifdef RS_SSSE3
        pairs = rs_carve(base, &off, c == 3 ? (size_t)dst_w * RS_GROUPS * 16 * sizeof(int16_t) : 0);
#endif
        mid = rs_carve(base, &off, horiz && vert ? (size_t)ch * dstride : 0);
        need = off;
        if (base) break;
        if (need > w->cap) {
            void *nb = realloc(w->buf, need);
            if (!nb)
                return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0,
                                   "out of memory for %zu bytes of resampler scratch", need);
            w->buf = nb;
            w->cap = need;
        }
        base = w->buf;
    }
    enum dse_status st = dse_image_reserve(dst, dst_w, dst_h, c, err);
    if (st) return st;
    if (horiz) rs_coeffs(cw, dst_w, 1, &ha, wt);
    if (vert) rs_coeffs(ch, dst_h, 0, &va, wt);

    const uint8_t *end = src->px + (size_t)src->h * sstride;
    int simd = 0;
#ifdef RS_SSSE3
    simd = horiz && c == 3 && ha.taps >= 1 && ha.taps <= 4 * RS_GROUPS &&
           __builtin_cpu_supports("ssse3");
    if (simd) rs_pairs(&ha, dst_w, pairs);
#endif
    if (horiz && vert) {
        /* Only rows some output row reads go through the horizontal pass (PIL does too). */
        int first = va.lo[0], last = va.lo[0] + va.n[0];
        for (int i = 1; i < dst_h; i++) {
            if (va.lo[i] < first) first = va.lo[i];
            if (va.lo[i] + va.n[i] > last) last = va.lo[i] + va.n[i];
        }
        rs_horiz_any(box + (size_t)first * sstride, sstride, last - first, mid, dstride, dst_w,
                     &ha, c, simd, pairs, end);
        for (int i = 0; i < dst_h; i++) va.lo[i] -= first;
        rs_vert(mid, dstride, dst->px, dstride, dst_h, dstride, &va);
    } else if (horiz) {
        rs_horiz_any(box, sstride, dst_h, dst->px, dstride, dst_w, &ha, c, simd, pairs, end);
    } else if (vert) {
        rs_vert(box, sstride, dst->px, dstride, dst_h, dstride, &va);
    } else {
        for (int y = 0; y < dst_h; y++)
            memcpy(dst->px + (size_t)y * dstride, box + (size_t)y * sstride, dstride);
    }
    return DSE_OK;
}
