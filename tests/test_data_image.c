/* test_data_image.c: data/image.c and data/synth.c. Files of every mode the decoder
 * handles are written here with libpng and libjpeg directly (not with the code under
 * test), decoded, and compared with exact values (PNG) or with libjpeg's own decode
 * (JPEG); broken files must fail with their messages; the resampler is compared with an
 * integer copy of the filter (exact) and a double one (within a level); synth folders are
 * checked for layout, determinism and decodability. */
#include "data/image.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jpeglib.h>
#include <png.h>
#include <tiffio.h>
#include <webp/decode.h>
#include <webp/encode.h>
#include <zlib.h>

#include "base/base.h"
#include "base/fs.h"
#include "base/pcg32.h"
#include "data/synth.h"
#include "tests/check.h"
#include "tests/testfs.h"

/* ---- helpers: scratch folder, files written with the libraries ---------------------- */

/* The test's scratch folder, made once per process; removed at the end unless a check failed. */
static const char *scratch(void) {
    static char dir[64] = "";
    if (!dir[0]) tmpdir_make(dir);
    return dir;
}

/* An encoded file in memory. */
struct blob {
    uint8_t *p;
    size_t   n;
};

static void png_out(png_structp png, png_bytep data, size_t n) {
    struct blob *b = png_get_io_ptr(png);
    b->p = realloc(b->p, b->n + n);
    DSE_ASSERT(b->p != NULL);
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void png_noflush(png_structp png) {
    (void)png;
}

/* What write_png writes: rows of packed samples (16-bit big-endian, sub-byte packed). */
struct png_spec {
    int            w, h, ctype, depth, interlace;
    const uint8_t *data;
    const png_color *pal;
    int            npal;
    const uint8_t *trns;
    int            ntrns;
    const png_color_16 *key; /* tRNS colour key of a gray or RGB image */
};

static int png_write_guarded(png_structp png, png_infop info, const struct png_spec *s,
                             struct blob *b) {
    if (setjmp(png_jmpbuf(png))) return -1;
    png_set_write_fn(png, b, png_out, png_noflush);
    png_set_IHDR(png, info, (png_uint_32)s->w, (png_uint_32)s->h, s->depth, s->ctype, s->interlace,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (s->npal) png_set_PLTE(png, info, s->pal, s->npal);
    if (s->ntrns || s->key) png_set_tRNS(png, info, s->trns, s->ntrns, s->key);
    png_write_info(png, info);
    int ch = s->ctype == PNG_COLOR_TYPE_RGB_ALPHA ? 4 : s->ctype == PNG_COLOR_TYPE_RGB ? 3
           : s->ctype == PNG_COLOR_TYPE_GRAY_ALPHA ? 2 : 1;
    size_t stride = ((size_t)s->w * (size_t)ch * (size_t)s->depth + 7) / 8;
    int passes = png_set_interlace_handling(png);
    for (int p = 0; p < passes; p++)
        for (int y = 0; y < s->h; y++) png_write_row(png, s->data + (size_t)y * stride);
    png_write_end(png, NULL);
    return 0;
}

static struct blob write_png(const struct png_spec *s) {
    struct blob b = { 0 };
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    DSE_ASSERT(png && info);
    DSE_ASSERT(png_write_guarded(png, info, s, &b) == 0);
    png_destroy_write_struct(&png, &info);
    return b;
}

/* A JPEG of comps components given in space in, stored in space stored. */
static struct blob write_jpeg(int w, int h, int comps, J_COLOR_SPACE in, J_COLOR_SPACE stored,
                              int quality, const uint8_t *px) {
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    unsigned char *buf = NULL;
    unsigned long len = 0;
    c.err = jpeg_std_error(&e); /* exits on error: fine for a test writing valid data */
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &buf, &len);
    c.image_width = (JDIMENSION)w, c.image_height = (JDIMENSION)h;
    c.input_components = comps, c.in_color_space = in;
    jpeg_set_defaults(&c);
    jpeg_set_colorspace(&c, stored);
    jpeg_set_quality(&c, quality, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(px + (size_t)c.next_scanline * (size_t)w * (size_t)comps);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return (struct blob){ buf, len };
}

/* libjpeg's own decode into out space at scale 1/denom: the exact pixels expected. */
static uint8_t *ref_jpeg(const struct blob *b, J_COLOR_SPACE out, int denom, int *w, int *h, int *comps) {
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr e;
    d.err = jpeg_std_error(&e);
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, b->p, (unsigned long)b->n);
    jpeg_read_header(&d, TRUE);
    d.out_color_space = out;
    d.scale_num = 1, d.scale_denom = (unsigned)denom;
    jpeg_start_decompress(&d);
    *w = (int)d.output_width, *h = (int)d.output_height, *comps = d.output_components;
    size_t stride = (size_t)*w * (size_t)*comps;
    uint8_t *px = malloc(stride * (size_t)*h);
    DSE_ASSERT(px != NULL);
    while (d.output_scanline < d.output_height) {
        JSAMPROW row = px + (size_t)d.output_scanline * stride;
        jpeg_read_scanlines(&d, &row, 1);
    }
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    return px;
}

static unsigned luma(unsigned r, unsigned g, unsigned b) {
    return (r * 299 + g * 587 + b * 114 + 500) / 1000;
}

/* A deterministic test picture: smooth gradients plus a little texture. */
static uint8_t pattern(int x, int y, int ch) {
    return (uint8_t)((x * (7 + 5 * ch) + y * (3 + 11 * ch) + ((x * y) % (13 + ch)) * 3) & 255);
}

static void fill_random(uint8_t *p, size_t n, uint64_t seed) {
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, seed, 7);
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)dse_pcg32_next(&r);
}

/* Decode and check the shape; returns the status. */
static enum dse_status decode(const struct blob *b, int channels, int min_short, struct dse_image *im,
                              struct dse_err *err) {
    memset(err, 0, sizeof *err);
    return dse_image_decode(b->p, b->n, channels, min_short, 0, im, err);
}

/* ---- sniffing ---------------------------------------------------------------------- */

static void test_sniff(void) {
    static const uint8_t jpg[4] = { 0xFF, 0xD8, 0xFF, 0xE0 };
    static const uint8_t png[8] = { 0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A };
    CHECK_INT_EQ(dse_image_sniff(jpg, 4), DSE_IMAGE_JPEG);
    CHECK_INT_EQ(dse_image_sniff(jpg, 2), DSE_IMAGE_UNKNOWN);
    CHECK_INT_EQ(dse_image_sniff(png, 8), DSE_IMAGE_PNG);
    CHECK_INT_EQ(dse_image_sniff(png, 7), DSE_IMAGE_UNKNOWN);
    CHECK_INT_EQ(dse_image_sniff((const uint8_t *)"GIF89a", 6), DSE_IMAGE_UNKNOWN);
    CHECK_INT_EQ(dse_image_sniff(jpg, 0), DSE_IMAGE_UNKNOWN);
}

/* ---- PNG: every colour type, exact values -------------------------------------------- */

enum { PW = 13, PH = 9 }; /* odd sizes: rows of 1-bit samples do not end on a byte */

/* Decode b both ways and compare with the RGB picture rgb (PW x PH): 3 channels exactly,
 * 1 channel its luma (which is the value itself where R = G = B). */
static void check_png_rgb(const struct blob *b, const uint8_t *rgb, const char *what) {
    struct dse_image im = { 0 };
    struct dse_err err;
    int bad = 0;
    CHECK_OK(decode(b, 3, 0, &im, &err));
    CHECK(im.w == PW && im.h == PH && im.c == 3);
    for (int i = 0; i < PW * PH * 3 && im.c == 3; i++) bad += im.px[i] != rgb[i];
    CHECK_OK(decode(b, 1, 0, &im, &err));
    CHECK(im.w == PW && im.h == PH && im.c == 1);
    for (int i = 0; i < PW * PH && im.c == 1; i++)
        bad += im.px[i] != luma(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
    if (bad) fprintf(stderr, "  %s: %d values differ\n", what, bad);
    CHECK_INT_EQ(bad, 0);
    dse_image_deinit(&im);
}

static void test_png_modes(void) {
    uint8_t rgb[PH][PW][3], gray[PH][PW], grgb[PH][PW][3], rgba[PH][PW][4], ga[PH][PW][2];
    uint8_t rgb16[PH][PW][6], gray16[PH][PW][2], bits[PH][(PW + 7) / 8], bitsrgb[PH][PW][3];
    uint8_t idx[PH][PW], palrgb[PH][PW][3];
    png_color pal[20];
    uint8_t trns[20];
    for (int e = 0; e < 20; e++) {
        pal[e] = (png_color){ (png_byte)(e * 13), (png_byte)(255 - e * 11), (png_byte)(e * e) };
        trns[e] = (uint8_t)(e * 13); /* entry 0 fully transparent */
    }
    memset(bits, 0, sizeof bits);
    for (int y = 0; y < PH; y++)
        for (int x = 0; x < PW; x++) {
            for (int ch = 0; ch < 3; ch++) {
                uint8_t v = pattern(x, y, ch);
                rgb[y][x][ch] = rgba[y][x][ch] = v;
                rgb16[y][x][2 * ch] = v, rgb16[y][x][2 * ch + 1] = (uint8_t)(255 - v);
            }
            rgba[y][x][3] = (uint8_t)(x * 40 + y * 3); /* 0 at the left edge */
            uint8_t g = pattern(x, y, 1);
            gray[y][x] = ga[y][x][0] = g;
            ga[y][x][1] = (uint8_t)(255 - x * 20);
            gray16[y][x][0] = g, gray16[y][x][1] = (uint8_t)(255 - g);
            for (int ch = 0; ch < 3; ch++) grgb[y][x][ch] = g;
            int bit = (x + y * 3) % 5 < 2;
            if (bit) bits[y][x / 8] |= (uint8_t)(0x80 >> (x % 8));
            for (int ch = 0; ch < 3; ch++) bitsrgb[y][x][ch] = bit ? 255 : 0;
            idx[y][x] = (uint8_t)((x + y * PW) % 20);
            palrgb[y][x][0] = pal[idx[y][x]].red, palrgb[y][x][1] = pal[idx[y][x]].green;
            palrgb[y][x][2] = pal[idx[y][x]].blue;
        }
    static const png_color_16 key = { .red = 0, .green = 7, .blue = 5, .gray = 0 };
#define SPEC(ct, bits, px, ...) \
    { .w = PW, .h = PH, .ctype = PNG_COLOR_TYPE_##ct, .depth = bits, .data = px, __VA_ARGS__ }
    struct {
        const char     *name;
        struct png_spec s;
        const void     *want; /* PW x PH x 3 */
    } cases[] = {
        { "rgb8",             SPEC(RGB, 8, &rgb[0][0][0], .interlace = PNG_INTERLACE_NONE), rgb },
        { "rgb8-interlaced",  SPEC(RGB, 8, &rgb[0][0][0], .interlace = PNG_INTERLACE_ADAM7), rgb },
        { "rgb8-colour-key",  SPEC(RGB, 8, &rgb[0][0][0], .key = &key), rgb },
        { "rgba8",            SPEC(RGB_ALPHA, 8, &rgba[0][0][0], .interlace = PNG_INTERLACE_NONE), rgb },
        { "rgb16",            SPEC(RGB, 16, &rgb16[0][0][0], .interlace = PNG_INTERLACE_NONE), rgb },
        { "gray8",            SPEC(GRAY, 8, &gray[0][0], .interlace = PNG_INTERLACE_NONE), grgb },
        { "gray8-interlaced", SPEC(GRAY, 8, &gray[0][0], .interlace = PNG_INTERLACE_ADAM7), grgb },
        { "gray-alpha8",      SPEC(GRAY_ALPHA, 8, &ga[0][0][0], .interlace = PNG_INTERLACE_NONE), grgb },
        { "gray16",           SPEC(GRAY, 16, &gray16[0][0][0], .interlace = PNG_INTERLACE_NONE), grgb },
        { "gray1",            SPEC(GRAY, 1, &bits[0][0], .interlace = PNG_INTERLACE_NONE), bitsrgb },
        { "palette8",         SPEC(PALETTE, 8, &idx[0][0], .pal = pal, .npal = 20), palrgb },
        { "palette8-trns",    SPEC(PALETTE, 8, &idx[0][0], .pal = pal, .npal = 20, .trns = trns, .ntrns = 20),
          palrgb },
    };
#undef SPEC
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        struct blob b = write_png(&cases[i].s);
        check_png_rgb(&b, cases[i].want, cases[i].name);
        free(b.p);
    }
}

/* Alpha is dropped, not blended: a fully transparent pixel keeps its colour. */
static void test_png_alpha(void) {
    static const uint8_t px[4][4] = { { 200, 100, 50, 0 }, { 10, 20, 30, 128 },
                                      { 255, 255, 255, 0 }, { 0, 0, 0, 255 } };
    struct png_spec s = { .w = 4, .h = 1, .ctype = PNG_COLOR_TYPE_RGB_ALPHA, .depth = 8, .data = &px[0][0] };
    struct blob b = write_png(&s);
    struct dse_image im = { 0 };
    struct dse_err err;
    CHECK_OK(decode(&b, 3, 0, &im, &err));
    for (int i = 0; i < 4; i++)
        for (int ch = 0; ch < 3; ch++) CHECK_INT_EQ(im.px[3 * i + ch], px[i][ch]);
    free(b.p);
    dse_image_deinit(&im);
}

/* 16-bit samples keep their high byte: 0x12FF is 0x12, not 0x13 (rounding would say). */
static void test_png_16bit(void) {
    static const uint8_t px[3][2] = { { 0x12, 0xFF }, { 0x00, 0xFF }, { 0xFF, 0x00 } };
    struct png_spec s = { .w = 3, .h = 1, .ctype = PNG_COLOR_TYPE_GRAY, .depth = 16, .data = &px[0][0] };
    struct blob b = write_png(&s);
    struct dse_image im = { 0 };
    struct dse_err err;
    CHECK_OK(decode(&b, 1, 0, &im, &err));
    CHECK_INT_EQ(im.px[0], 0x12);
    CHECK_INT_EQ(im.px[1], 0x00);
    CHECK_INT_EQ(im.px[2], 0xFF);
    free(b.p);
    dse_image_deinit(&im);
}

/* RGB -> gray is (R*299 + G*587 + B*114 + 500) / 1000; gray -> RGB repeats the value. */
static void test_gray_rgb(void) {
    static const uint8_t px[7][3] = { { 255, 0, 0 }, { 0, 255, 0 }, { 0, 0, 255 }, { 255, 255, 255 },
                                      { 1, 1, 1 }, { 100, 150, 200 }, { 3, 2, 1 } };
    static const int want[7] = { 76, 150, 29, 255, 1, 141, 2 };
    struct png_spec s = { .w = 7, .h = 1, .ctype = PNG_COLOR_TYPE_RGB, .depth = 8, .data = &px[0][0] };
    struct blob b = write_png(&s);
    struct dse_image im = { 0 }, back = { 0 };
    struct dse_err err;
    CHECK_OK(decode(&b, 1, 0, &im, &err));
    CHECK_INT_EQ(im.c, 1);
    for (int i = 0; i < 7; i++) CHECK_INT_EQ(im.px[i], want[i]);
    /* and back: a gray PNG of those values to 3 channels */
    uint8_t g[7];
    for (int i = 0; i < 7; i++) g[i] = (uint8_t)want[i];
    struct png_spec gs = { .w = 7, .h = 1, .ctype = PNG_COLOR_TYPE_GRAY, .depth = 8, .data = g };
    struct blob gb = write_png(&gs);
    CHECK_OK(decode(&gb, 3, 0, &back, &err));
    for (int i = 0; i < 7; i++)
        CHECK(back.px[3 * i] == want[i] && back.px[3 * i + 1] == want[i] && back.px[3 * i + 2] == want[i]);
    free(b.p);
    free(gb.p);
    dse_image_deinit(&im);
    dse_image_deinit(&back);
}

/* ---- JPEG: equal to libjpeg's own decode, near the picture --------------------------- */

enum { JW = 61, JH = 45 };

static double mean_abs(const uint8_t *a, const uint8_t *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += abs((int)a[i] - (int)b[i]);
    return s / (double)n;
}

static int count_diff(const uint8_t *a, const uint8_t *b, size_t n) {
    int d = 0;
    for (size_t i = 0; i < n; i++) d += a[i] != b[i];
    return d;
}

static void test_jpeg_modes(void) {
    static uint8_t rgb[JH][JW][3], gray[JH][JW], cmyk[JH][JW][4], lum[JH][JW];
    for (int y = 0; y < JH; y++)
        for (int x = 0; x < JW; x++) {
            for (int ch = 0; ch < 3; ch++) rgb[y][x][ch] = (uint8_t)(40 + x * 2 + y * (ch + 1) + ch * 20);
            gray[y][x] = (uint8_t)(30 + x * 2 + y * 2);
            lum[y][x] = (uint8_t)luma(rgb[y][x][0], rgb[y][x][1], rgb[y][x][2]);
            /* inverted Adobe CMYK of the picture: K = max, C = R*255/K (as synth writes) */
            unsigned r = rgb[y][x][0], g = rgb[y][x][1], b = rgb[y][x][2];
            unsigned k = r > g ? (r > b ? r : b) : (g > b ? g : b);
            cmyk[y][x][0] = (uint8_t)((r * 255 + k / 2) / k), cmyk[y][x][1] = (uint8_t)((g * 255 + k / 2) / k);
            cmyk[y][x][2] = (uint8_t)((b * 255 + k / 2) / k), cmyk[y][x][3] = (uint8_t)k;
        }
    const size_t n = (size_t)JW * JH;
    struct dse_image im = { 0 };
    struct dse_err err;
    int w, h, comps;

    /* RGB (stored YCbCr 4:2:0): 3 channels as libjpeg gives them; 1 channel their luma. */
    struct blob b = write_jpeg(JW, JH, 3, JCS_RGB, JCS_YCbCr, 95, &rgb[0][0][0]);
    uint8_t *ref = ref_jpeg(&b, JCS_RGB, 1, &w, &h, &comps);
    CHECK_OK(decode(&b, 3, 0, &im, &err));
    CHECK(im.w == JW && im.h == JH && im.c == 3);
    CHECK_INT_EQ(count_diff(im.px, ref, n * 3), 0);
    CHECK(mean_abs(im.px, &rgb[0][0][0], n * 3) < 3.0); /* 2.39 */
    CHECK_OK(decode(&b, 1, 0, &im, &err));
    CHECK_INT_EQ(im.c, 1);
    int bad = 0;
    for (size_t i = 0; i < n; i++) bad += im.px[i] != luma(ref[3 * i], ref[3 * i + 1], ref[3 * i + 2]);
    CHECK_INT_EQ(bad, 0);
    CHECK(mean_abs(im.px, &lum[0][0], n) < 2.0);
    free(ref);
    free(b.p);

    /* gray: 1 channel as stored, 3 channels the value repeated */
    b = write_jpeg(JW, JH, 1, JCS_GRAYSCALE, JCS_GRAYSCALE, 95, &gray[0][0]);
    ref = ref_jpeg(&b, JCS_GRAYSCALE, 1, &w, &h, &comps);
    CHECK_OK(decode(&b, 1, 0, &im, &err));
    CHECK(im.w == JW && im.h == JH && im.c == 1);
    CHECK_INT_EQ(count_diff(im.px, ref, n), 0);
    CHECK(mean_abs(im.px, &gray[0][0], n) < 1.5);
    CHECK_OK(decode(&b, 3, 0, &im, &err));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += im.px[3 * i] != ref[i] || im.px[3 * i + 1] != ref[i] || im.px[3 * i + 2] != ref[i];
    CHECK_INT_EQ(bad, 0);
    free(ref);
    free(b.p);

    /* CMYK and YCCK (Adobe, inverted): R = C*K/255 rounded, from libjpeg's CMYK */
    for (int ycck = 0; ycck < 2; ycck++) {
        b = write_jpeg(JW, JH, 4, JCS_CMYK, ycck ? JCS_YCCK : JCS_CMYK, 95, &cmyk[0][0][0]);
        ref = ref_jpeg(&b, JCS_CMYK, 1, &w, &h, &comps);
        CHECK_INT_EQ(comps, 4);
        CHECK_OK(decode(&b, 3, 0, &im, &err));
        CHECK(im.w == JW && im.h == JH && im.c == 3);
        bad = 0;
        for (size_t i = 0; i < n; i++)
            for (int ch = 0; ch < 3; ch++)
                bad += im.px[3 * i + ch] != (ref[4 * i + ch] * ref[4 * i + 3] + 127) / 255;
        CHECK_INT_EQ(bad, 0);
        CHECK(mean_abs(im.px, &rgb[0][0][0], n * 3) < 3.0);
        uint8_t rgb3[3];
        memcpy(rgb3, im.px, 3);
        CHECK_OK(decode(&b, 1, 0, &im, &err));
        CHECK_INT_EQ(im.px[0], luma(rgb3[0], rgb3[1], rgb3[2]));
        free(ref);
        free(b.p);
    }

    /* a flat CMYK colour: C=200 M=100 Y=50 K=128 is R=100 G=50 B=25 */
    static uint8_t flat[16][16][4];
    for (int i = 0; i < 256; i++) memcpy(&flat[0][0][0] + 4 * i, (uint8_t[4]){ 200, 100, 50, 128 }, 4);
    b = write_jpeg(16, 16, 4, JCS_CMYK, JCS_CMYK, 100, &flat[0][0][0]);
    CHECK_OK(decode(&b, 3, 0, &im, &err));
    CHECK(abs(im.px[0] - 100) <= 1 && abs(im.px[1] - 50) <= 1 && abs(im.px[2] - 25) <= 1);
    free(b.p);
    dse_image_deinit(&im);
}

/* min_short: the smallest of 1/8, 1/4, 1/2 whose short side (rounded up) is >= min_short. */
static void test_jpeg_scale(void) {
    static const struct { int w, h, min_short, ow, oh; } cases[] = {
        { 400, 300, 0, 400, 300 },   { 400, 300, 300, 400, 300 }, { 400, 300, 301, 400, 300 },
        { 400, 300, 150, 200, 150 }, { 400, 300, 149, 200, 150 }, { 400, 300, 76, 200, 150 },
        { 400, 300, 75, 100, 75 },   { 400, 300, 38, 50, 38 },    { 400, 300, 1, 50, 38 },
        { 401, 301, 151, 201, 151 }, { 301, 401, 76, 76, 101 },   { 301, 401, 77, 151, 201 },
    };
    uint8_t *px = malloc(401 * 401 * 3);
    DSE_ASSERT(px != NULL);
    struct dse_image im = { 0 };
    struct dse_err err;
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        int w = cases[i].w, h = cases[i].h;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                for (int ch = 0; ch < 3; ch++) px[((size_t)y * w + x) * 3 + ch] = pattern(x, y, ch);
        struct blob b = write_jpeg(w, h, 3, JCS_RGB, JCS_YCbCr, 90, px);
        CHECK_OK(decode(&b, 3, cases[i].min_short, &im, &err));
        if (im.w != cases[i].ow || im.h != cases[i].oh)
            fprintf(stderr, "  %dx%d min_short %d: got %dx%d\n", w, h, cases[i].min_short, im.w, im.h);
        CHECK(im.w == cases[i].ow && im.h == cases[i].oh);
        int rw, rh, rc;
        uint8_t *ref = ref_jpeg(&b, JCS_RGB, (w + cases[i].ow / 2) / cases[i].ow, &rw, &rh, &rc);
        CHECK(rw == im.w && rh == im.h);
        if (rw == im.w && rh == im.h) CHECK_INT_EQ(count_diff(im.px, ref, (size_t)rw * rh * 3), 0);
        free(ref);
        free(b.p);
    }
    /* PNG has no DCT scaling: full size */
    struct png_spec s = { .w = 40, .h = 30, .ctype = PNG_COLOR_TYPE_RGB, .depth = 8, .data = px };
    struct blob b = write_png(&s);
    CHECK_OK(decode(&b, 3, 10, &im, &err));
    CHECK(im.w == 40 && im.h == 30);
    free(b.p);
    free(px);
    dse_image_deinit(&im);
}

/* ---- broken files ------------------------------------------------------------------ */

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* Offset of the first chunk of type t in a PNG (its length field), or 0. */
static size_t png_chunk(const struct blob *b, const char *t) {
    for (size_t at = 8; at + 12 <= b->n; at += 12 + be32(b->p + at))
        if (memcmp(b->p + at + 4, t, 4) == 0) return at;
    return 0;
}

static void png_fix_crc(struct blob *b, size_t at) {
    uint32_t len = be32(b->p + at);
    put_be32(b->p + at + 8 + len, (uint32_t)crc32(0, b->p + at + 4, len + 4));
}

static struct blob copy_blob(const struct blob *b, size_t n) {
    struct blob c = { malloc(n ? n : 1), n };
    DSE_ASSERT(c.p != NULL);
    memcpy(c.p, b->p, n);
    return c;
}

/* A 64x48 RGB test pattern as a quality-90 JPEG and as an 8-bit PNG: the error and budget
 * tests damage copies of them. */
static void sample_jpeg_png(struct blob *jpg, struct blob *png) {
    static uint8_t rgb[48][64][3];
    for (int y = 0; y < 48; y++)
        for (int x = 0; x < 64; x++)
            for (int ch = 0; ch < 3; ch++) rgb[y][x][ch] = pattern(x, y, ch);
    *jpg = write_jpeg(64, 48, 3, JCS_RGB, JCS_YCbCr, 90, &rgb[0][0][0]);
    const struct png_spec s = { .w = 64, .h = 48, .ctype = PNG_COLOR_TYPE_RGB, .depth = 8, .data = &rgb[0][0][0] };
    *png = write_png(&s);
}

static void test_decode_errors(void) {
    struct blob jpg, png;
    sample_jpeg_png(&jpg, &png);

    struct blob empty = copy_blob(&jpg, 0), noise = copy_blob(&jpg, 1000);
    fill_random(noise.p, noise.n, 3);
    noise.p[0] = 'x';
    struct blob jnoise = copy_blob(&jpg, 1000); /* a JPEG signature, then noise */
    fill_random(jnoise.p + 4, jnoise.n - 4, 4);
    struct blob jhalf = copy_blob(&jpg, jpg.n / 2), jhead = copy_blob(&jpg, 30);
    struct blob phalf = copy_blob(&png, png.n / 2), phead = copy_blob(&png, 20);
    struct blob pcrc = copy_blob(&png, png.n);
    size_t idat = png_chunk(&pcrc, "IDAT");
    DSE_ASSERT(idat > 0);
    pcrc.p[idat + 8 + be32(pcrc.p + idat) + 2] ^= 0x55; /* the CRC, the data intact */
    struct blob pdata = copy_blob(&png, png.n);
    pdata.p[idat + 8 + 5] ^= 0x55; /* a data byte changed: zlib sees it before the CRC */
    struct blob pzip = copy_blob(&png, png.n);
    pzip.p[idat + 8 + 40] ^= 0x55; /* a data byte changed and the CRC recomputed */
    png_fix_crc(&pzip, idat);
    struct blob pbig = copy_blob(&png, png.n);
    size_t ihdr = png_chunk(&pbig, "IHDR");
    put_be32(pbig.p + ihdr + 8, 40000), put_be32(pbig.p + ihdr + 12, 3);
    png_fix_crc(&pbig, ihdr);
    struct blob jbig = copy_blob(&jpg, jpg.n);
    for (size_t i = 2; i + 9 < jbig.n; i++)
        if (jbig.p[i] == 0xFF && jbig.p[i + 1] == 0xC0) { /* SOF0: P, height, width */
            jbig.p[i + 5] = 0, jbig.p[i + 6] = 3, jbig.p[i + 7] = 40000 >> 8, jbig.p[i + 8] = 40000 & 255;
            break;
        }
    struct {
        const char  *name;
        struct blob *b;
        const char  *msg;
    } cases[] = {
        { "empty", &empty, "not a JPEG, PNG, BMP, PPM, PGM, TIFF or WebP file" },
        { "noise", &noise, "not a JPEG, PNG, BMP, PPM, PGM, TIFF or WebP file" },
        { "jpeg-noise", &jnoise, "JPEG" },
        { "jpeg-half", &jhalf, "truncated JPEG data" },
        { "jpeg-header", &jhead, "truncated JPEG data" },
        { "jpeg-huge", &jbig, "image of 40000x3 pixels is larger than 32768 a side" },
        { "png-half", &phalf, "truncated PNG data" },
        { "png-header", &phead, "truncated PNG data" },
        { "png-crc", &pcrc, "corrupt PNG: IDAT: CRC error" },
        { "png-data", &pdata, "corrupt PNG: IDAT: " },
        { "png-zlib", &pzip, "corrupt PNG: IDAT: " },
        { "png-huge", &pbig, "image of 40000x3 pixels is larger than 32768 a side" },
    };
    struct dse_image im = { 0 };
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++)
        for (int channels = 1; channels <= 3; channels += 2) {
            struct dse_err err;
            enum dse_status st = decode(cases[i].b, channels, 0, &im, &err);
            if (st != DSE_ERR_IO || !strstr(err.msg, cases[i].msg))
                fprintf(stderr, "  %s: status %d, \"%s\"; expected \"%s\"\n", cases[i].name, st, err.msg,
                        cases[i].msg);
            CHECK_INT_EQ(st, DSE_ERR_IO);
            CHECK(strstr(err.msg, cases[i].msg) != NULL);
            CHECK(!err.file[0]);
            /* the image stays usable */
            CHECK_OK(decode(&png, channels, 0, &im, &err));
            CHECK(im.w == 64 && im.h == 48 && im.c == channels);
        }
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) free(cases[i].b->p);
    free(jpg.p);
    free(png.p);
    dse_image_deinit(&im);
}

/* The pixel budget, checked from the header before decoding (issue #31: an 875 KB PNG
 * declaring 30000x30000 cost 2.65 GB a decoding thread): for JPEG and PNG, at the default
 * and at a budget given, one pixel below and at the image's size. */
static void test_decode_budget(void) {
    struct blob jpg, png;
    sample_jpeg_png(&jpg, &png);
    struct blob pbomb = copy_blob(&png, png.n), jbomb = copy_blob(&jpg, jpg.n);
    size_t ihdr = png_chunk(&pbomb, "IHDR");
    put_be32(pbomb.p + ihdr + 8, 30000), put_be32(pbomb.p + ihdr + 12, 30000);
    png_fix_crc(&pbomb, ihdr);
    for (size_t i = 2; i + 9 < jbomb.n; i++)
        if (jbomb.p[i] == 0xFF && jbomb.p[i + 1] == 0xC0) { /* SOF0: P, height, width */
            jbomb.p[i + 5] = 30000 >> 8, jbomb.p[i + 6] = 30000 & 255;
            jbomb.p[i + 7] = 30000 >> 8, jbomb.p[i + 8] = 30000 & 255;
            break;
        }
    const struct blob *bombs[2] = { &pbomb, &jbomb }, *good[2] = { &png, &jpg };
    struct dse_image im = { 0 };
    struct dse_err err = { 0 };
    for (int k = 0; k < 2; k++) {
        CHECK_INT_EQ(dse_image_decode(bombs[k]->p, bombs[k]->n, 3, 0, 0, &im, &err), DSE_ERR_IO);
        CHECK_STR_EQ(err.msg, "image of 30000x30000 pixels is over the budget of 89478485 pixels an image "
                              "(--max-pixels): a decompression bomb, or raise the budget");
        CHECK(im.cap < (size_t)30000 * 30000); /* nothing allocated for it */
        CHECK_INT_EQ(dse_image_decode(good[k]->p, good[k]->n, 3, 0, 64 * 48 - 1, &im, &err), DSE_ERR_IO);
        CHECK_STR_EQ(err.msg, "image of 64x48 pixels is over the budget of 3071 pixels an image (--max-pixels): a "
                              "decompression bomb, or raise the budget");
        CHECK_OK(dse_image_decode(good[k]->p, good[k]->n, 1, 0, 64 * 48, &im, &err));
        CHECK(im.w == 64 && im.h == 48);
    }
    free(pbomb.p), free(jbomb.p), free(jpg.p), free(png.p);
    dse_image_deinit(&im);
}

/* ---- BMP, PGM and PPM (our own readers) --------------------------------------------- */

static void put_le(uint8_t *p, uint32_t v, int n) {
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t le32v(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Palette entry k of the test BMPs (B, G, R as stored). */
static void pal_rgb(int k, unsigned rgb[3]) {
    rgb[0] = (unsigned)(k * 37 + 11) & 255, rgb[1] = (unsigned)(k * 91 + 5) & 255, rgb[2] = (unsigned)(k * 53) & 255;
}

/* A w x h BMP written as Windows does, the pixel at (x, y) being pattern(x, y, ch) (24, 32
 * bits) or palette entry (x + 2y) mod 2^bpp (1, 4, 8 bits); its expected RGB into want.
 * fields: 32 bits as BI_BITFIELDS with the usual masks; top_down: a negative height. */
static struct blob write_bmp(int w, int h, int bpp, int top_down, int fields, uint8_t *want) {
    const int pal_n = bpp <= 8 ? 1 << bpp : 0, hsize = 40, masks = fields ? 12 : 0;
    const size_t stride = ((size_t)bpp * (size_t)w + 31) / 32 * 4;
    const size_t off = 14 + (size_t)hsize + (size_t)masks + 4u * (size_t)pal_n;
    struct blob b = { calloc(1, off + stride * (size_t)h), off + stride * (size_t)h };
    DSE_ASSERT(b.p != NULL);
    b.p[0] = 'B', b.p[1] = 'M';
    put_le(b.p + 2, (uint32_t)b.n, 4), put_le(b.p + 10, (uint32_t)off, 4), put_le(b.p + 14, (uint32_t)hsize, 4);
    put_le(b.p + 18, (uint32_t)w, 4), put_le(b.p + 22, (uint32_t)(top_down ? -h : h), 4);
    put_le(b.p + 26, 1, 2), put_le(b.p + 28, (uint32_t)bpp, 2), put_le(b.p + 30, fields ? 3 : 0, 4);
    if (fields) put_le(b.p + 54, 0xFF0000u, 4), put_le(b.p + 58, 0xFF00u, 4), put_le(b.p + 62, 0xFFu, 4);
    for (int k = 0; k < pal_n; k++) {
        unsigned c[3];
        pal_rgb(k, c);
        uint8_t *e = b.p + 14 + hsize + masks + 4 * k;
        e[0] = (uint8_t)c[2], e[1] = (uint8_t)c[1], e[2] = (uint8_t)c[0];
    }
    for (int y = 0; y < h; y++) {
        uint8_t *row = b.p + off + stride * (size_t)(top_down ? y : h - 1 - y);
        for (int x = 0; x < w; x++) {
            unsigned c[3];
            if (bpp > 8) {
                for (int ch = 0; ch < 3; ch++) c[ch] = pattern(x, y, ch);
                uint8_t *q = row + (size_t)x * (size_t)(bpp / 8);
                q[0] = (uint8_t)c[2], q[1] = (uint8_t)c[1], q[2] = (uint8_t)c[0];
                if (bpp == 32) q[3] = 0x5A; /* alpha or padding: dropped */
            } else {
                const int k = (x + 2 * y) % pal_n, bit = x * bpp;
                row[bit / 8] |= (uint8_t)(k << (8 - bpp - bit % 8));
                pal_rgb(k, c);
            }
            for (int ch = 0; ch < 3; ch++) want[((size_t)y * (size_t)w + (size_t)x) * 3 + ch] = (uint8_t)c[ch];
        }
    }
    return b;
}

/* Decoded as want (RGB) with 3 channels, and as its luma with 1. */
static void check_rgb(const struct blob *b, int w, int h, const uint8_t *want, const char *what) {
    struct dse_image im = { 0 };
    struct dse_err err = { 0 };
    for (int c = 1; c <= 3; c += 2) {
        enum dse_status st = decode(b, c, 0, &im, &err);
        if (st) fprintf(stderr, "  %s: %s\n", what, err.msg);
        CHECK_OK(st);
        if (st) continue;
        CHECK(im.w == w && im.h == h && im.c == c);
        int bad = 0;
        for (int i = 0; i < w * h; i++) {
            const uint8_t *q = want + 3 * i;
            if (c == 3) bad += memcmp(im.px + 3 * i, q, 3) != 0;
            else bad += im.px[i] != luma(q[0], q[1], q[2]);
        }
        if (bad) fprintf(stderr, "  %s, %d channels: %d pixels differ\n", what, c, bad);
        CHECK_INT_EQ(bad, 0);
    }
    dse_image_deinit(&im);
}

/* torchvision's ImageFolder also reads .bmp, .ppm and .pgm (issue #31): every BMP kind
 * Windows and PIL write uncompressed (palette of 1, 4, 8 bits, 24 and 32 bits, bottom-up and
 * top-down, odd widths for row padding), PGM and PPM binary and plain, maxval 255, 15 and
 * 65535; the kinds not read are refused naming themselves, and the pixel budget holds. */
static void test_bmp_pnm(void) {
    enum { W = 7, H = 5 };
    static uint8_t want[H][W][3], want2[H][W][3];
    static const struct { int bpp, top_down, fields; } bmps[] = {
        { 24, 0, 0 }, { 24, 1, 0 }, { 32, 0, 0 }, { 32, 1, 1 }, { 8, 0, 0 }, { 4, 0, 0 }, { 1, 1, 0 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(bmps); i++) {
        char what[64];
        struct blob b = write_bmp(W, H, bmps[i].bpp, bmps[i].top_down, bmps[i].fields, &want[0][0][0]);
        snprintf(what, sizeof what, "BMP %d bits%s%s", bmps[i].bpp, bmps[i].top_down ? ", top-down" : "",
                 bmps[i].fields ? ", bit fields" : "");
        check_rgb(&b, W, H, &want[0][0][0], what);
        free(b.p);
    }
    /* PPM and PGM: the same pixels as text and as bytes */
    char text[4096];
    int at = snprintf(text, sizeof text, "P3\n# a comment\n%d %d\n255\n", W, H);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int ch = 0; ch < 3; ch++) {
                want[y][x][ch] = pattern(x, y, ch);
                at += snprintf(text + at, sizeof text - (size_t)at, "%d%c", want[y][x][ch], ch == 2 ? '\n' : ' ');
            }
    struct blob p3 = { (uint8_t *)text, (size_t)at };
    check_rgb(&p3, W, H, &want[0][0][0], "PPM P3");
    uint8_t bin[64 + 2 * 3 * W * H];
    int hl = snprintf((char *)bin, 64, "P6 %d\t%d #c\n255\n", W, H);
    memcpy(bin + hl, want, sizeof want);
    struct blob p6 = { bin, (size_t)hl + sizeof want };
    check_rgb(&p6, W, H, &want[0][0][0], "PPM P6");
    /* PGM, maxval 15: v * 255 / 15 rounded (= 17 v); maxval 65535, two bytes big-endian */
    hl = snprintf((char *)bin, 64, "P5\n%d %d\n15\n", W, H);
    for (int i = 0; i < W * H; i++) {
        const uint8_t v = (uint8_t)(i % 16);
        bin[hl + i] = v;
        for (int ch = 0; ch < 3; ch++) want2[i / W][i % W][ch] = (uint8_t)(17 * v);
    }
    struct blob p5 = { bin, (size_t)hl + W * H };
    check_rgb(&p5, W, H, &want2[0][0][0], "PGM P5 maxval 15");
    hl = snprintf((char *)bin, 64, "P5\n%d %d\n65535\n", W, H);
    for (int i = 0; i < W * H; i++) {
        const unsigned v = (unsigned)i * 1871u; /* (v * 255 + 32767) / 65535 */
        bin[hl + 2 * i] = (uint8_t)(v >> 8), bin[hl + 2 * i + 1] = (uint8_t)v;
        for (int ch = 0; ch < 3; ch++) want2[i / W][i % W][ch] = (uint8_t)((v * 255u + 32767u) / 65535u);
    }
    struct blob p16 = { bin, (size_t)hl + 2 * W * H };
    check_rgb(&p16, W, H, &want2[0][0][0], "PGM P5 16-bit");
    at = snprintf(text, sizeof text, "P2 %d %d 255", W, H);
    for (int i = 0; i < W * H; i++) {
        at += snprintf(text + at, sizeof text - (size_t)at, " %d", (i * 7) & 255);
        for (int ch = 0; ch < 3; ch++) want2[i / W][i % W][ch] = (uint8_t)((i * 7) & 255);
    }
    struct blob p2 = { (uint8_t *)text, (size_t)at };
    check_rgb(&p2, W, H, &want2[0][0][0], "PGM P2");

    /* refused, naming what they are; a bomb before anything is allocated */
    struct blob rle = write_bmp(W, H, 8, 0, 0, &want[0][0][0]), b16 = write_bmp(W, H, 24, 0, 0, &want[0][0][0]);
    struct blob bshort = copy_blob(&b16, b16.n - 1), bbomb = copy_blob(&b16, b16.n);
    put_le(rle.p + 30, 1, 4);
    put_le(b16.p + 28, 16, 2);
    put_le(bbomb.p + 18, 30000, 4), put_le(bbomb.p + 22, 30000, 4);
    static char pbomb_text[] = "P6 30000 30000 255\n\1\2\3", pshort_text[] = "P6 7 5 255\n\1\2\3",
                pbad_text[] = "P5 7 5 0\n\1\2\3", p3short_text[] = "P3 1 2 255\n1 2 3 4 5";
    struct blob pbomb = { (uint8_t *)pbomb_text, sizeof pbomb_text - 1 };
    struct blob pshort = { (uint8_t *)pshort_text, sizeof pshort_text - 1 };
    struct blob pbad = { (uint8_t *)pbad_text, sizeof pbad_text - 1 };
    struct blob p3short = { (uint8_t *)p3short_text, sizeof p3short_text - 1 };
    const struct { const struct blob *b; const char *msg; } bad[] = {
        { &rle, "RLE-compressed BMP is not supported; save it uncompressed" },
        { &b16, "16-bit BMP is not supported (1, 4, 8, 24 and 32 are)" },
        { &bshort, "truncated BMP: 173 bytes; 7x5 pixels of 24 bits need 174" },
        { &bbomb, "image of 30000x30000 pixels is over the budget of 89478485 pixels an image (--max-pixels): a "
                  "decompression bomb, or raise the budget" },
        { &pbomb, "image of 30000x30000 pixels is over the budget of 89478485 pixels an image (--max-pixels): a "
                  "decompression bomb, or raise the budget" },
        { &pshort, "truncated PPM: 14 bytes for 7x5 pixels" },
        { &pbad, "corrupt PGM: 7x5 pixels, maxval 0 (1 to 65535)" },
        { &p3short, "truncated PPM: sample 5 of 6 missing" },
    };
    struct dse_image im = { 0 };
    for (int i = 0; i < DSE_ARRAY_LEN(bad); i++) {
        struct dse_err err = { 0 };
        CHECK_INT_EQ(decode(bad[i].b, 3, 0, &im, &err), DSE_ERR_IO);
        CHECK_STR_EQ(err.msg, bad[i].msg);
    }
    CHECK(im.cap < 1000); /* nothing allocated for the bombs */
    dse_image_deinit(&im);
    free(rle.p), free(b16.p), free(bshort.p), free(bbomb.p);
}

/* ---- TIFF and WebP (libtiff, libwebp) ------------------------------------------------- */

/* What write_tiff writes: w x h pixels of spp samples of bps bits (8 or 16, 32 for float),
 * data interleaved (16-bit as native uint16_t), written as strips by libtiff itself. */
struct tiff_spec {
    int         w, h, spp, bps, photometric, extra, compression, separate, sfloat;
    const void *data;
    const uint16_t *cmap; /* palette: 3 x 256 entries of 16 bits */
};

static struct blob write_tiff(const struct tiff_spec *s) {
    char path[256];
    snprintf(path, sizeof path, "%s/t.tif", scratch());
    TIFF *t = TIFFOpen(path, "w");
    DSE_ASSERT(t != NULL);
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)s->w), TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)s->h);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)s->spp);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)s->bps);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, (uint16_t)s->photometric);
    TIFFSetField(t, TIFFTAG_COMPRESSION, (uint16_t)(s->compression ? s->compression : COMPRESSION_NONE));
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, (uint16_t)(s->separate ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG));
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, (uint32_t)2);
    if (s->sfloat) TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, (uint16_t)SAMPLEFORMAT_IEEEFP);
    if (s->extra) {
        uint16_t e = (uint16_t)s->extra;
        TIFFSetField(t, TIFFTAG_EXTRASAMPLES, (uint16_t)1, &e);
    }
    if (s->cmap) TIFFSetField(t, TIFFTAG_COLORMAP, s->cmap, s->cmap + 256, s->cmap + 512);
    const size_t bytes = (size_t)s->bps / 8, row = (size_t)s->w * (size_t)s->spp * bytes;
    uint8_t *line = malloc(row);
    DSE_ASSERT(line != NULL);
    for (int p = 0; p < (s->separate ? s->spp : 1); p++)
        for (int y = 0; y < s->h; y++) {
            const uint8_t *src = (const uint8_t *)s->data + (size_t)y * row;
            if (!s->separate) memcpy(line, src, row);
            else
                for (int x = 0; x < s->w; x++)
                    memcpy(line + (size_t)x * bytes, src + ((size_t)x * (size_t)s->spp + (size_t)p) * bytes, bytes);
            DSE_ASSERT(TIFFWriteScanline(t, line, (uint32_t)y, (uint16_t)p) == 1);
        }
    free(line);
    TIFFClose(t);
    struct blob b;
    b.p = read_all(path, &b.n);
    DSE_ASSERT(b.p != NULL);
    return b;
}

/* Set tag `tag` of the first directory of a little-endian TIFF (a SHORT or LONG) to v. */
static void tiff_patch(struct blob *b, unsigned tag, uint32_t v) {
    DSE_ASSERT(b->n >= 8 && b->p[0] == 'I');
    const uint32_t ifd = le32v(b->p + 4), n = b->p[ifd] | (uint32_t)b->p[ifd + 1] << 8;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *e = b->p + ifd + 2 + 12 * i;
        if ((e[0] | e[1] << 8) != (int)tag) continue;
        put_le(e + 8, v, (e[2] | e[3] << 8) == TIFF_SHORT ? 2 : 4);
        return;
    }
    DSE_ASSERT(!"tag not found");
}

/* torchvision's ImageFolder also reads .tif and .webp (issue #31): TIFFs of each kind
 * libtiff writes (gray, RGB with LZW, planar RGB, RGBA with unassociated alpha, palette,
 * 16 bits) decode to exact pixels (16 bits scaled as (v + 128) / 257); 32-bit float is
 * refused naming why. */
static void test_tiff(void) {
    enum { W = 7, H = 5 };
    static uint8_t want[H][W][3], rgba[H][W][4], gray[H][W], pal[H][W];
    static uint16_t rgb16[H][W][3], cmap[3 * 256];
    static float fl[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            for (int ch = 0; ch < 3; ch++) rgba[y][x][ch] = pattern(x, y, ch);
            rgba[y][x][3] = (uint8_t)(x * 40); /* alpha 0 too: the colour under it is kept */
            gray[y][x] = pattern(x, y, 1), pal[y][x] = (uint8_t)(x + 7 * y);
        }
    for (int k = 0; k < 256; k++)
        for (int ch = 0; ch < 3; ch++) cmap[256 * ch + k] = (uint16_t)(257 * ((k * (31 + 40 * ch) + 9) & 255));
    struct tiff_spec specs[] = {
        { .w = W, .h = H, .spp = 1, .bps = 8, .photometric = PHOTOMETRIC_MINISBLACK, .data = gray },
        { .w = W, .h = H, .spp = 4, .bps = 8, .photometric = PHOTOMETRIC_RGB, .data = rgba,
          .extra = EXTRASAMPLE_UNASSALPHA },
        { .w = W, .h = H, .spp = 4, .bps = 8, .photometric = PHOTOMETRIC_RGB, .data = rgba,
          .extra = EXTRASAMPLE_UNASSALPHA, .compression = COMPRESSION_LZW, .separate = 1 },
        { .w = W, .h = H, .spp = 1, .bps = 8, .photometric = PHOTOMETRIC_PALETTE, .data = pal, .cmap = cmap },
        { .w = W, .h = H, .spp = 3, .bps = 16, .photometric = PHOTOMETRIC_RGB, .data = rgb16,
          .compression = COMPRESSION_ADOBE_DEFLATE },
    };
    static const char *const names[] = { "gray", "RGBA", "RGBA planar LZW", "palette", "RGB 16-bit" };
    for (int i = 0; i < DSE_ARRAY_LEN(specs); i++) {
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                for (int ch = 0; ch < 3; ch++) {
                    const unsigned v16 = (unsigned)(x * 9001 + y * 3607 + ch * 20011) & 0xFFFF;
                    rgb16[y][x][ch] = (uint16_t)v16;
                    want[y][x][ch] = i == 0 ? gray[y][x] : i < 3 ? rgba[y][x][ch]
                                   : i == 3 ? (uint8_t)(cmap[256 * ch + pal[y][x]] >> 8) : (uint8_t)((v16 + 128) / 257);
                }
        struct blob b = write_tiff(&specs[i]);
        CHECK_INT_EQ(dse_image_sniff(b.p, b.n), DSE_IMAGE_TIFF);
        check_rgb(&b, W, H, &want[0][0][0], names[i]);
        free(b.p);
    }
    /* refused: truncated, float samples, a bomb declared in the header (nothing allocated) */
    struct blob good = write_tiff(&specs[1]);
    struct blob half = copy_blob(&good, good.n / 2), head = copy_blob(&good, 8), bomb = copy_blob(&good, good.n);
    tiff_patch(&bomb, TIFFTAG_IMAGEWIDTH, 30000), tiff_patch(&bomb, TIFFTAG_IMAGELENGTH, 30000);
    struct tiff_spec fs = { .w = W, .h = H, .spp = 1, .bps = 32, .sfloat = 1, .photometric = PHOTOMETRIC_MINISBLACK,
                            .data = fl };
    struct blob flt = write_tiff(&fs);
    const struct { const struct blob *b; const char *msg; } bad[] = {
        { &half, "truncated TIFF data" },
        { &head, "truncated TIFF data" },
        { &flt, "unsupported TIFF: " },
        { &bomb, "image of 30000x30000 pixels is over the budget of 89478485 pixels an image (--max-pixels): a "
                 "decompression bomb, or raise the budget" },
    };
    struct dse_image im = { 0 };
    for (int i = 0; i < DSE_ARRAY_LEN(bad); i++) {
        struct dse_err err = { 0 };
        CHECK_INT_EQ(decode(bad[i].b, 3, 0, &im, &err), DSE_ERR_IO);
        if (!strstr(err.msg, bad[i].msg)) fprintf(stderr, "  TIFF %d: \"%s\"\n", i, err.msg);
        CHECK(strstr(err.msg, bad[i].msg) == err.msg);
    }
    CHECK(im.cap == 0); /* nothing allocated for any of them */
    struct dse_err err = { 0 };
    CHECK_INT_EQ(dse_image_decode(good.p, good.n, 3, 0, W * H - 1, &im, &err), DSE_ERR_IO);
    CHECK(strstr(err.msg, "image of 7x5 pixels is over the budget of 34 pixels") != NULL);
    dse_image_deinit(&im);
    free(good.p), free(half.p), free(head.p), free(bomb.p), free(flt.p);
}

/* WebP: lossless RGB and RGBA (alpha dropped, the colour under alpha 0 kept: encoded with
 * `exact`) decode to the encoded pixels; lossy to libwebp's own decode; truncated data,
 * an animation and headers declaring 30000x30000 (an animation's canvas) or 16384x16384
 * (a lossless image) are refused, the bombs before anything is allocated. */
static void test_webp(void) {
    enum { W = 9, H = 6 };
    static uint8_t rgb[H][W][3], rgba[H][W][4];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            for (int ch = 0; ch < 3; ch++) rgb[y][x][ch] = rgba[y][x][ch] = pattern(x, y, ch);
            rgba[y][x][3] = (uint8_t)(x * 30);
        }
    struct blob ll = { 0 }, lossy = { 0 };
    ll.n = WebPEncodeLosslessRGB(&rgb[0][0][0], W, H, 3 * W, &ll.p);
    DSE_ASSERT(ll.n > 0);
    CHECK_INT_EQ(dse_image_sniff(ll.p, ll.n), DSE_IMAGE_WEBP);
    check_rgb(&ll, W, H, &rgb[0][0][0], "WebP lossless RGB");
    WebPConfig cfg;
    WebPPicture pic;
    WebPMemoryWriter wr;
    DSE_ASSERT(WebPConfigInit(&cfg) && WebPPictureInit(&pic));
    cfg.lossless = 1, cfg.exact = 1;
    pic.use_argb = 1, pic.width = W, pic.height = H;
    WebPMemoryWriterInit(&wr);
    pic.writer = WebPMemoryWrite, pic.custom_ptr = &wr;
    DSE_ASSERT(WebPPictureImportRGBA(&pic, &rgba[0][0][0], 4 * W) && WebPEncode(&cfg, &pic));
    WebPPictureFree(&pic);
    struct blob la = { wr.mem, wr.size };
    check_rgb(&la, W, H, &rgb[0][0][0], "WebP lossless RGBA");
    lossy.n = WebPEncodeRGB(&rgb[0][0][0], W, H, 3 * W, 90, &lossy.p);
    DSE_ASSERT(lossy.n > 0);
    int lw, lh;
    uint8_t *ref = WebPDecodeRGB(lossy.p, lossy.n, &lw, &lh);
    DSE_ASSERT(ref != NULL && lw == W && lh == H);
    check_rgb(&lossy, W, H, ref, "WebP lossy");
    WebPFree(ref);

    /* refused */
    struct blob half = copy_blob(&ll, ll.n / 2), head = copy_blob(&ll, 16), big = copy_blob(&ll, ll.n);
    DSE_ASSERT(!memcmp(big.p + 12, "VP8L", 4) && big.p[20] == 0x2f);
    put_le(big.p + 21, (le32v(big.p + 21) & 0xF0000000u) | 16383u | 16383u << 14, 4); /* 14 bits a side, less 1 */
    uint8_t anim[30] = { 'R', 'I', 'F', 'F', 22, 0, 0, 0, 'W', 'E', 'B', 'P', 'V', 'P', '8', 'X', 10, 0, 0, 0, 0x02 };
    put_le(anim + 24, 30000 - 1, 3), put_le(anim + 27, 30000 - 1, 3); /* canvas: 24 bits a side, less 1 */
    struct blob bomb = { anim, sizeof anim };
    uint8_t anim2[30];
    memcpy(anim2, anim, sizeof anim2);
    put_le(anim2 + 24, W - 1, 3), put_le(anim2 + 27, H - 1, 3);
    struct blob animated = { anim2, sizeof anim2 };
    const struct { const struct blob *b; const char *msg; } bad[] = {
        { &half, "truncated WebP data" },
        { &head, "truncated WebP data" },
        { &animated, "animated WebP is not supported; save its first frame as a still image" },
        { &bomb, "image of 30000x30000 pixels is over the budget of 89478485 pixels an image (--max-pixels): a "
                 "decompression bomb, or raise the budget" },
        { &big, "image of 16384x16384 pixels is over the budget of 89478485 pixels an image (--max-pixels): a "
                "decompression bomb, or raise the budget" },
    };
    struct dse_image im = { 0 };
    for (int i = 0; i < DSE_ARRAY_LEN(bad); i++) {
        struct dse_err err = { 0 };
        dse_image_deinit(&im);
        CHECK_INT_EQ(decode(bad[i].b, 3, 0, &im, &err), DSE_ERR_IO);
        if (strcmp(err.msg, bad[i].msg)) fprintf(stderr, "  WebP %d: \"%s\"\n", i, err.msg);
        CHECK_STR_EQ(err.msg, bad[i].msg);
        if (i >= 2) CHECK(im.cap == 0); /* refused from the headers alone */
    }
    dse_image_deinit(&im);
    WebPFree(ll.p), WebPFree(lossy.p), WebPMemoryWriterClear(&wr);
    free(half.p), free(head.p), free(big.p);
}

/* ---- encoders ---------------------------------------------------------------------- */

static void test_encode(void) {
    struct dse_image im = { 0 }, back = { 0 };
    struct dse_err err = { 0 };
    uint8_t *buf;
    size_t len;
    for (int c = 1; c <= 3; c += 2) {
        CHECK_OK(dse_image_reserve(&im, 37, 29, c, &err));
        for (int i = 0; i < 37 * 29 * c; i++) /* smooth, as a photo: JPEG keeps it well */
            im.px[i] = (uint8_t)(20 + 2 * (i / c % 37) + 2 * (i / c / 37) + 40 * (i % c));
        CHECK_OK(dse_image_encode_png(&im, &buf, &len, &err));
        CHECK_INT_EQ(dse_image_sniff(buf, len), DSE_IMAGE_PNG);
        CHECK_OK(dse_image_decode(buf, len, c, 0, 0, &back, &err));
        CHECK(back.w == 37 && back.h == 29 && back.c == c);
        CHECK_INT_EQ(count_diff(back.px, im.px, (size_t)37 * 29 * c), 0);
        free(buf);
        CHECK_OK(dse_image_encode_jpeg(&im, 95, &buf, &len, &err));
        CHECK_INT_EQ(dse_image_sniff(buf, len), DSE_IMAGE_JPEG);
        CHECK_OK(dse_image_decode(buf, len, c, 0, 0, &back, &err));
        CHECK(back.w == 37 && back.h == 29 && back.c == c);
        CHECK(mean_abs(back.px, im.px, (size_t)37 * 29 * c) < 2.0);
        free(buf);
    }
    buf = (uint8_t *)&err;
    CHECK_INT_EQ(dse_image_encode_jpeg(&im, 0, &buf, &len, &err), DSE_ERR_CONFIG);
    CHECK(buf == NULL && strstr(err.msg, "JPEG quality 0 is out of range") != NULL);
    CHECK_INT_EQ(dse_image_encode_jpeg(&im, 101, &buf, &len, &err), DSE_ERR_CONFIG);
    im.c = 2;
    CHECK_INT_EQ(dse_image_encode_png(&im, &buf, &len, &err), DSE_ERR_SHAPE);
    CHECK(buf == NULL);
    dse_image_deinit(&im);
    dse_image_deinit(&back);
}

/* ---- resampling ---------------------------------------------------------------------- */

/* The filter of image.h written out plainly: weights per output (triangle of support
 * max(1, scale), PIL's window bounds), normalized in double; q14: rounded to 14 bits. */
static void ref_weights(int in, int out, int o, int q14, int *lo, int *n, double *wd, int *wi) {
    double scale = (double)in / out, fs = scale > 1 ? scale : 1, center = (o + 0.5) * scale;
    int a = (int)(center - fs + 0.5), b = (int)(center + fs + 0.5);
    if (a < 0) a = 0;
    if (b > in) b = in;
    double sum = 0;
    for (int j = a; j < b; j++) {
        double t = fabs((j - center + 0.5) * (1.0 / fs));
        wd[j - a] = t < 1 ? 1 - t : 0;
        sum += wd[j - a];
    }
    for (int j = 0; j < b - a; j++) {
        wd[j] /= sum;
        if (q14) wi[j] = (int)(0.5 + wd[j] * 16384);
    }
    *lo = a, *n = b - a;
}

/* q14 = 1: the integer algorithm (8-bit intermediate image, round, clamp): must be exact.
 * q14 = 0: all in double, rounded once at the end: within 1 level. */
static void ref_resize(const struct dse_image *s, int x0, int y0, int cw, int ch, int ow, int oh,
                       int q14, uint8_t *out) {
    int c = s->c, lo, n, wi[4096];
    double wd[4096];
    double *mid = malloc(sizeof(double) * (size_t)ch * ow * c);
    DSE_ASSERT(mid != NULL);
    for (int x = 0; x < ow; x++) {
        ref_weights(cw, ow, x, q14, &lo, &n, wd, wi);
        for (int y = 0; y < ch; y++)
            for (int k = 0; k < c; k++) {
                double acc = q14 ? 8192 : 0;
                for (int j = 0; j < n; j++) {
                    int v = s->px[((size_t)(y0 + y) * s->w + x0 + lo + j) * c + k];
                    acc += q14 ? (double)(v * wi[j]) : v * wd[j];
                }
                if (q14) {
                    int r = (int)acc >> 14;
                    acc = cw == ow ? s->px[((size_t)(y0 + y) * s->w + x0 + x) * c + k]
                                   : r > 255 ? 255 : r;
                }
                mid[((size_t)y * ow + x) * c + k] = acc;
            }
    }
    for (int y = 0; y < oh; y++) {
        ref_weights(ch, oh, y, q14, &lo, &n, wd, wi);
        for (int x = 0; x < ow * c; x++) {
            double acc = q14 ? 8192 : 0;
            for (int j = 0; j < n; j++) {
                double v = mid[(size_t)(lo + j) * ow * c + x];
                acc += q14 ? (double)((int)v * wi[j]) : v * wd[j];
            }
            int r = q14 ? (int)acc >> 14 : (int)floor(acc + 0.5);
            if (q14 && ch == oh) r = (int)mid[(size_t)y * ow * c + x];
            out[(size_t)y * ow * c + x] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
        }
    }
    free(mid);
}

static void random_image(struct dse_image *im, int w, int h, int c, uint64_t seed) {
    struct dse_err err;
    DSE_ASSERT(dse_image_reserve(im, w, h, c, &err) == DSE_OK);
    fill_random(im->px, (size_t)w * h * c, seed);
}

static void test_resize_constant(void) {
    static const int sizes[][2] = { { 5, 3 }, { 80, 61 }, { 18, 11 }, { 37, 23 }, { 1, 1 }, { 200, 7 } };
    struct dse_image src = { 0 }, dst = { 0 };
    struct dse_image_work w = { 0 };
    struct dse_err err;
    for (int c = 1; c <= 3; c += 2)
        for (int v = 0; v <= 255; v += 51) {
            CHECK_OK(dse_image_reserve(&src, 37, 23, c, &err));
            memset(src.px, v, (size_t)37 * 23 * c);
            for (int i = 0; i < DSE_ARRAY_LEN(sizes); i++) {
                CHECK_OK(dse_image_resize(&src, 0, 0, 37, 23, sizes[i][0], sizes[i][1], &dst, &w, &err));
                CHECK(dst.w == sizes[i][0] && dst.h == sizes[i][1] && dst.c == c);
                int bad = 0;
                for (int j = 0; j < dst.w * dst.h * c; j++) bad += dst.px[j] != v;
                CHECK_INT_EQ(bad, 0);
            }
        }
    dse_image_deinit(&src);
    dse_image_deinit(&dst);
    dse_image_work_deinit(&w);
}

static void test_resize_identity(void) {
    struct dse_image src = { 0 }, dst = { 0 };
    struct dse_image_work w = { 0 };
    struct dse_err err;
    for (int c = 1; c <= 3; c += 2) {
        random_image(&src, 31, 17, c, 11);
        CHECK_OK(dse_image_resize(&src, 3, 2, 20, 11, 20, 11, &dst, &w, &err));
        int bad = 0;
        for (int y = 0; y < 11; y++)
            bad += memcmp(dst.px + (size_t)y * 20 * c, src.px + ((size_t)(y + 2) * 31 + 3) * c, (size_t)20 * c) != 0;
        CHECK_INT_EQ(bad, 0);
        CHECK_OK(dse_image_resize(&src, 0, 0, 31, 17, 31, 17, &dst, &w, &err));
        CHECK_INT_EQ(memcmp(dst.px, src.px, (size_t)31 * 17 * c), 0);
    }
    dse_image_deinit(&src);
    dse_image_deinit(&dst);
    dse_image_work_deinit(&w);
}

/* Boxes and sizes that take every path: 2x, odd ratios, enlarging, one axis only, windows of
 * more than 8 taps (no SIMD), boxes touching the image's right and bottom edges, weights
 * rounded to 0 at a window's start (3 -> 47) and end (2x). */
static void test_resize_reference(void) {
    static const struct { int w, h, x0, y0, cw, ch, ow, oh; } cases[] = {
        { 64, 48, 0, 0, 64, 48, 32, 24 },  { 64, 48, 0, 0, 64, 48, 45, 37 },
        { 64, 48, 5, 7, 59, 41, 27, 19 },  { 20, 15, 0, 0, 20, 15, 53, 41 },
        { 50, 40, 10, 5, 40, 35, 40, 13 }, { 50, 40, 10, 5, 40, 35, 17, 35 },
        { 120, 30, 0, 0, 120, 30, 11, 9 }, { 292, 256, 0, 0, 292, 256, 227, 227 },
        { 97, 71, 3, 2, 7, 5, 64, 50 },    { 9, 9, 0, 0, 9, 9, 2, 7 },
        { 40, 30, 39, 29, 1, 1, 3, 2 },    { 33, 21, 1, 1, 32, 20, 29, 19 },
        { 9, 5, 2, 1, 3, 3, 47, 47 }, /* windows whose first weight rounds to 0 */
    };
    struct dse_image src = { 0 }, dst = { 0 };
    struct dse_image_work w = { 0 };
    struct dse_err err;
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++)
        for (int c = 1; c <= 3; c += 2) {
            random_image(&src, cases[i].w, cases[i].h, c, 100 + (uint64_t)i);
            int ow = cases[i].ow, oh = cases[i].oh;
            CHECK_OK(dse_image_resize(&src, cases[i].x0, cases[i].y0, cases[i].cw, cases[i].ch, ow, oh, &dst,
                                      &w, &err));
            CHECK(dst.w == ow && dst.h == oh && dst.c == c);
            uint8_t *exact = malloc((size_t)ow * oh * c), *dbl = malloc((size_t)ow * oh * c);
            DSE_ASSERT(exact && dbl);
            ref_resize(&src, cases[i].x0, cases[i].y0, cases[i].cw, cases[i].ch, ow, oh, 1, exact);
            ref_resize(&src, cases[i].x0, cases[i].y0, cases[i].cw, cases[i].ch, ow, oh, 0, dbl);
            int diff = count_diff(dst.px, exact, (size_t)ow * oh * c), far = 0;
            for (size_t j = 0; j < (size_t)ow * oh * c; j++) far += abs(dst.px[j] - dbl[j]) > 1;
            if (diff || far) fprintf(stderr, "  case %d, %d channels: %d differ from the integer "
                                     "reference, %d by more than 1 from the double one\n", i, c, diff, far);
            CHECK_INT_EQ(diff, 0);
            CHECK_INT_EQ(far, 0);
            free(exact);
            free(dbl);
        }
    dse_image_deinit(&src);
    dse_image_deinit(&dst);
    dse_image_work_deinit(&w);
}

/* The bytes of a fixed resize, pinned: a change of the filter, its rounding or its order
 * shows here. FNV-1a 64 of the output of (pattern 97x71, box 80x60 at (5, 3)) -> 57x43. */
static void test_resize_checksum(void) {
    struct dse_image src = { 0 }, dst = { 0 };
    struct dse_image_work w = { 0 };
    struct dse_err err;
    static const uint64_t want[2] = { 0x7ba3442026fc1bd1ULL, 0xa466ebdec410efd8ULL }; /* 1, 3 channels */
    for (int k = 0; k < 2; k++) {
        int c = k ? 3 : 1;
        CHECK_OK(dse_image_reserve(&src, 97, 71, c, &err));
        for (int y = 0; y < 71; y++)
            for (int x = 0; x < 97; x++)
                for (int ch = 0; ch < c; ch++) src.px[((size_t)y * 97 + x) * c + ch] = pattern(x, y, ch);
        CHECK_OK(dse_image_resize(&src, 5, 3, 80, 60, 57, 43, &dst, &w, &err));
        uint64_t h = dse_fnv1a64(DSE_FNV64_INIT, dst.px, (uint64_t)57 * 43 * c);
        if (h != want[k]) fprintf(stderr, "  %d channels: checksum 0x%016llxULL\n", c, (unsigned long long)h);
        CHECK(h == want[k]);
    }
    dse_image_deinit(&src);
    dse_image_deinit(&dst);
    dse_image_work_deinit(&w);
}

static void test_resize_errors(void) {
    struct dse_image src = { 0 }, dst = { 0 };
    struct dse_image_work w = { 0 };
    struct dse_err err;
    random_image(&src, 10, 8, 3, 1);
    CHECK_INT_EQ(dse_image_resize(&src, 5, 0, 6, 8, 4, 4, &dst, &w, &err), DSE_ERR_SHAPE);
    CHECK(strstr(err.msg, "cannot resize the box 6x8 at (5, 0) of a 10x8x3 image to 4x4") != NULL);
    CHECK_INT_EQ(dse_image_resize(&src, 0, 0, 0, 8, 4, 4, &dst, &w, &err), DSE_ERR_SHAPE);
    CHECK_INT_EQ(dse_image_resize(&src, -1, 0, 5, 5, 4, 4, &dst, &w, &err), DSE_ERR_SHAPE);
    CHECK_INT_EQ(dse_image_resize(&src, 0, 0, 5, 5, 0, 4, &dst, &w, &err), DSE_ERR_SHAPE);
    CHECK_INT_EQ(dse_image_resize(&src, 0, 0, 5, 5, 40000, 4, &dst, &w, &err), DSE_ERR_SHAPE);
    CHECK_INT_EQ(dse_image_resize(&src, 0, 0, 5, 5, 4, 4, &src, &w, &err), DSE_ERR_SHAPE);
    CHECK(strstr(err.msg, "in place") != NULL);
    dse_image_deinit(&src);
    dse_image_deinit(&dst);
    dse_image_work_deinit(&w);
}

/* ---- synthetic folders --------------------------------------------------------------- */

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static void test_synth_layout(void) {
    char dir[256], p[512];
    struct dse_synth_opts o;
    struct dse_err err = { 0 };
    dse_synth_opts_default(&o);
    CHECK(o.classes == 10 && o.train_per_class == 20 && o.val_per_class == 5 && o.min_side == 48 &&
          o.max_side == 96 && o.mixed == 0 && o.seed == 1);
    snprintf(dir, sizeof dir, "%s/layout/a/b", scratch());
    o.classes = 3, o.train_per_class = 10, o.val_per_class = 2, o.min_side = 16, o.max_side = 24, o.mixed = 1;
    CHECK_OK(dse_synth_folder(dir, &o, &err));
    snprintf(p, sizeof p, "%s/train", dir);
    CHECK_INT_EQ(count_entries(p), 3);
    snprintf(p, sizeof p, "%s/val", dir);
    CHECK_INT_EQ(count_entries(p), 3);
    for (int k = 0; k < 3; k++) {
        snprintf(p, sizeof p, "%s/train/class_%02d", dir, k);
        CHECK_INT_EQ(count_entries(p), 10);
        snprintf(p, sizeof p, "%s/val/class_%02d", dir, k);
        CHECK_INT_EQ(count_entries(p), 2);
    }
    /* the mixed cycle: image i is format i % 8 */
    static const char *const ext[8] = { "jpg", "png", "png", "png", "jpg", "jpg", "png", "png" };
    for (int i = 0; i < 10; i++) {
        snprintf(p, sizeof p, "%s/train/class_01/img_%05d.%s", dir, i, ext[i % 8]);
        CHECK(exists(p));
    }
    /* 101 classes: three digits; no val folder when val_per_class is 0 */
    snprintf(dir, sizeof dir, "%s/layout101", scratch());
    o.classes = 101, o.train_per_class = 1, o.val_per_class = 0, o.mixed = 0, o.min_side = o.max_side = 8;
    CHECK_OK(dse_synth_folder(dir, &o, &err));
    snprintf(p, sizeof p, "%s/train", dir);
    CHECK_INT_EQ(count_entries(p), 101);
    snprintf(p, sizeof p, "%s/train/class_100/img_00000.jpg", dir);
    CHECK(exists(p));
    snprintf(p, sizeof p, "%s/train/class_000/img_00000.jpg", dir);
    CHECK(exists(p));
    snprintf(p, sizeof p, "%s/val", dir);
    CHECK(!exists(p));
}

/* Same seed, same bytes (in another folder); another seed, other bytes. */
static void test_synth_deterministic(void) {
    char a[256], b[256], c[256], pa[512], pb[512], pc[512];
    struct dse_synth_opts o;
    struct dse_err err = { 0 };
    dse_synth_opts_default(&o);
    o.classes = 2, o.train_per_class = 8, o.val_per_class = 1, o.min_side = 20, o.max_side = 40, o.mixed = 1;
    o.seed = 42;
    snprintf(a, sizeof a, "%s/det_a", scratch());
    snprintf(b, sizeof b, "%s/det_b", scratch());
    snprintf(c, sizeof c, "%s/det_c", scratch());
    CHECK_OK(dse_synth_folder(a, &o, &err));
    CHECK_OK(dse_synth_folder(b, &o, &err));
    o.seed = 43;
    CHECK_OK(dse_synth_folder(c, &o, &err));
    int same = 0, other = 0, files = 0;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 8; i++) {
            const char *e = (i % 8 == 0 || i % 8 == 4 || i % 8 == 5) ? "jpg" : "png";
            snprintf(pa, sizeof pa, "%s/train/class_%02d/img_%05d.%s", a, k, i, e);
            snprintf(pb, sizeof pb, "%s/train/class_%02d/img_%05d.%s", b, k, i, e);
            snprintf(pc, sizeof pc, "%s/train/class_%02d/img_%05d.%s", c, k, i, e);
            char *da, *db, *dc;
            size_t na, nb, nc;
            if (dse_fs_read(pa, &da, &na, &err) || dse_fs_read(pb, &db, &nb, &err) ||
                dse_fs_read(pc, &dc, &nc, &err)) {
                CHECK(0);
                continue;
            }
            files++;
            same += na == nb && memcmp(da, db, na) == 0;
            other += na != nc || memcmp(da, dc, na) != 0;
            free(da), free(db), free(dc);
        }
    CHECK_INT_EQ(files, 16);
    CHECK_INT_EQ(same, 16);
    CHECK_INT_EQ(other, 16);
}

/* Every file decodes, as 1 and 3 channels, to a size in range; the two classes' mean
 * colours are far apart (what a CNN will pick up first). */
static void test_synth_decode(void) {
    char dir[256], p[512];
    struct dse_synth_opts o;
    struct dse_err err = { 0 };
    dse_synth_opts_default(&o);
    o.classes = 2, o.train_per_class = 16, o.val_per_class = 0, o.min_side = 24, o.max_side = 70, o.mixed = 1;
    snprintf(dir, sizeof dir, "%s/decode", scratch());
    CHECK_OK(dse_synth_folder(dir, &o, &err));
    struct dse_image im = { 0 };
    double mean[2][3] = { { 0 } };
    int kinds[3] = { 0 };
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 16; i++) {
            const char *e = (i % 8 == 0 || i % 8 == 4 || i % 8 == 5) ? "jpg" : "png";
            snprintf(p, sizeof p, "%s/train/class_%02d/img_%05d.%s", dir, k, i, e);
            char *data;
            size_t n;
            if (dse_fs_read(p, &data, &n, &err)) {
                CHECK(0);
                continue;
            }
            kinds[dse_image_sniff((uint8_t *)data, n)]++;
            CHECK_OK(dse_image_decode((uint8_t *)data, n, 1, 0, 0, &im, &err));
            CHECK_OK(dse_image_decode((uint8_t *)data, n, 3, 0, 0, &im, &err));
            CHECK(im.w >= 24 && im.w <= 70 && im.h >= 24 && im.h <= 70 && im.c == 3);
            double s[3] = { 0 };
            for (int j = 0; j < im.w * im.h; j++)
                for (int ch = 0; ch < 3; ch++) s[ch] += im.px[3 * j + ch];
            for (int ch = 0; ch < 3; ch++) mean[k][ch] += s[ch] / (im.w * im.h) / 16;
            free(data);
        }
    CHECK_INT_EQ(kinds[DSE_IMAGE_JPEG], 12);
    CHECK_INT_EQ(kinds[DSE_IMAGE_PNG], 20);
    double d2 = 0;
    for (int ch = 0; ch < 3; ch++) d2 += (mean[0][ch] - mean[1][ch]) * (mean[0][ch] - mean[1][ch]);
    CHECK(sqrt(d2) > 40);
    dse_image_deinit(&im);
}

static void test_synth_errors(void) {
    char dir[256];
    struct dse_synth_opts o;
    struct dse_err err = { 0 };
    dse_synth_opts_default(&o);
    o.classes = 1;
    CHECK_INT_EQ(dse_synth_folder("/nonexistent", &o, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "classes = 1 is out of range; expected 2 to 1000");
    dse_synth_opts_default(&o);
    o.min_side = 50, o.max_side = 40;
    CHECK_INT_EQ(dse_synth_folder("/nonexistent", &o, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "max_side = 40 is out of range") != NULL);
    /* a folder under a regular file */
    dse_synth_opts_default(&o);
    o.classes = 2, o.train_per_class = 1, o.val_per_class = 0;
    snprintf(dir, sizeof dir, "%s/plainfile", scratch());
    FILE *f = fopen(dir, "w");
    DSE_ASSERT(f != NULL);
    fclose(f);
    strcat(dir, "/sub");
    CHECK_INT_EQ(dse_synth_folder(dir, &o, &err), DSE_ERR_IO);
    CHECK(strstr(err.msg, dir) != NULL);
    CHECK(!err.file[0]);
}

static const struct check_case cases[] = {
    { "image-sniff",              test_sniff },
    { "image-decode-png-modes",   test_png_modes },
    { "image-decode-png-alpha",   test_png_alpha },
    { "image-decode-png-16bit",   test_png_16bit },
    { "image-decode-gray-rgb",    test_gray_rgb },
    { "image-decode-jpeg-modes",  test_jpeg_modes },
    { "image-decode-jpeg-scale",  test_jpeg_scale },
    { "image-decode-errors",      test_decode_errors },
    { "image-decode-budget",      test_decode_budget },
    { "image-decode-bmp-pnm",     test_bmp_pnm },
    { "image-decode-tiff",        test_tiff },
    { "image-decode-webp",        test_webp },
    { "image-encode",             test_encode },
    { "image-resize-constant",    test_resize_constant },
    { "image-resize-identity",    test_resize_identity },
    { "image-resize-reference",   test_resize_reference },
    { "image-resize-checksum",    test_resize_checksum },
    { "image-resize-errors",      test_resize_errors },
    { "synth-layout",             test_synth_layout },
    { "synth-deterministic",      test_synth_deterministic },
    { "synth-decode",             test_synth_decode },
    { "synth-errors",             test_synth_errors },
};

int main(int argc, char **argv) {
    int rc = check_main(cases, DSE_ARRAY_LEN(cases), argc, argv);
    if (!check_failures) tmpdir_remove(scratch());
    return rc;
}
