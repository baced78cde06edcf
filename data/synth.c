/* synth.c: synthetic class-per-folder image sets (synth.h). Class k is a colour pair and a
 * stripe frequency and orientation; each image adds its own phase, a little tilt,
 * brightness jitter and pixel noise. The mixed folders write every format the decoder
 * reads; the exotic ones (RGBA, 16-bit and palette PNG, CMYK JPEG) are written here with
 * libpng and libjpeg directly, the plain ones through data/image.h. */
#include "data/synth.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>
#include <png.h>

#include "base/fs.h"
#include "base/pcg32.h"
#include "data/image.h"

#define SYNTH_PER_CLASS_MAX 1000000
#define SYNTH_PI            3.14159265358979323846

void dse_synth_opts_default(struct dse_synth_opts *o) {
    *o = (struct dse_synth_opts){ .classes = 10, .train_per_class = 20, .val_per_class = 5,
                                  .min_side = 48, .max_side = 96, .mixed = 0, .seed = 1 };
}

/* The formats of a mixed folder, in the order image i % 8 takes them (synth.h). */
enum fmt { FMT_JPEG_RGB, FMT_PNG_GRAY, FMT_PNG_RGBA, FMT_PNG_RGB16, FMT_JPEG_GRAY, FMT_JPEG_CMYK,
           FMT_PNG_PALETTE, FMT_PNG_RGB, FMT_COUNT };

/* ---- raw encoders for the formats data/image.h does not write -------------------------- */

/* A growing malloc'd output and the error a library callback reports into it. */
struct sink {
    uint8_t *buf;
    size_t   cap, len;
    int      nomem;
    char     msg[256];
};

static int sink_put(struct sink *s, const void *data, size_t n) {
    if (n > s->cap - s->len) {
        size_t cap = s->cap ? s->cap : 65536;
        while (n > cap - s->len) cap *= 2;
        uint8_t *nb = realloc(s->buf, cap);
        if (!nb) return -1;
        s->buf = nb;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    return 0;
}

static void raw_png_fail(png_structp png, png_const_charp words) {
    struct sink *s = png_get_error_ptr(png);
    snprintf(s->msg, sizeof s->msg, "%s", words);
    png_longjmp(png, 1);
}

static void raw_png_warn(png_structp png, png_const_charp words) {
    (void)png;
    (void)words;
}

static void raw_png_put(png_structp png, png_bytep data, size_t n) {
    struct sink *s = png_get_io_ptr(png);
    if (sink_put(s, data, n)) {
        s->nomem = 1;
        png_error(png, "out of memory");
    }
}

static void raw_png_flush(png_structp png) {
    (void)png;
}

struct png_raw {
    png_structp    png;
    png_infop      info;
    struct sink    out;
    int            w, h, ctype, depth;
    const uint8_t *px; /* rows of w * bytes-per-pixel, packed */
    png_color      pal[256];
    png_byte       trns[256];
    int            npal, ntrns;
};

static int png_raw_guarded(struct png_raw *p) {
    if (setjmp(png_jmpbuf(p->png))) return -1;
    png_set_write_fn(p->png, &p->out, raw_png_put, raw_png_flush);
    png_set_compression_level(p->png, 1);
    png_set_IHDR(p->png, p->info, (png_uint_32)p->w, (png_uint_32)p->h, p->depth, p->ctype,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (p->npal) png_set_PLTE(p->png, p->info, p->pal, p->npal);
    if (p->ntrns) png_set_tRNS(p->png, p->info, p->trns, p->ntrns, NULL);
    png_write_info(p->png, p->info);
    int chans = p->ctype == PNG_COLOR_TYPE_RGB_ALPHA ? 4 : p->ctype == PNG_COLOR_TYPE_RGB ? 3 : 1;
    size_t stride = (size_t)p->w * (size_t)chans * (size_t)(p->depth / 8);
    for (int y = 0; y < p->h; y++) png_write_row(p->png, p->px + (size_t)y * stride);
    png_write_end(p->png, NULL);
    return 0;
}

/* Encode p (filled but for png, info and out) into p->out.buf; the caller frees it. */
static enum dse_status png_raw_encode(struct png_raw *p, struct dse_err *err) {
    p->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &p->out, raw_png_fail, raw_png_warn);
    if (p->png) p->info = png_create_info_struct(p->png);
    int bad = !p->png || !p->info || png_raw_guarded(p);
    png_destroy_write_struct(&p->png, &p->info);
    if (!bad) return DSE_OK;
    if (p->out.nomem || !p->out.msg[0])
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory encoding a PNG");
    return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "cannot encode PNG: %s", p->out.msg);
}

/* libjpeg: errors jump back with the message in the sink; output grows the sink. */
struct jpeg_raw {
    struct jpeg_compress_struct cinfo;
    struct jpeg_error_mgr       jerr;
    struct jpeg_destination_mgr dest;
    jmp_buf                     jmp;
    struct sink                 out;
    uint8_t                     chunk[16384];
    int                         w, h, quality;
    const uint8_t              *px; /* inverted CMYK, 4 bytes a pixel */
};

static void raw_jpeg_fail(j_common_ptr cinfo) {
    struct jpeg_raw *j = (struct jpeg_raw *)cinfo->client_data;
    (*cinfo->err->format_message)(cinfo, j->out.msg);
    j->out.nomem = cinfo->err->msg_code == JERR_OUT_OF_MEMORY;
    longjmp(j->jmp, 1);
}

static void raw_jpeg_dest_init(j_compress_ptr cinfo) {
    struct jpeg_raw *j = (struct jpeg_raw *)cinfo->client_data;
    j->dest.next_output_byte = j->chunk;
    j->dest.free_in_buffer = sizeof j->chunk;
}

static boolean raw_jpeg_dest_flush(j_compress_ptr cinfo) {
    struct jpeg_raw *j = (struct jpeg_raw *)cinfo->client_data;
    if (sink_put(&j->out, j->chunk, sizeof j->chunk)) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
    raw_jpeg_dest_init(cinfo);
    return TRUE;
}

static void raw_jpeg_dest_term(j_compress_ptr cinfo) {
    struct jpeg_raw *j = (struct jpeg_raw *)cinfo->client_data;
    if (sink_put(&j->out, j->chunk, sizeof j->chunk - j->dest.free_in_buffer))
        ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
}

static int jpeg_cmyk_guarded(struct jpeg_raw *j) {
    j_compress_ptr cinfo = &j->cinfo;
    cinfo->err = jpeg_std_error(&j->jerr);
    j->jerr.error_exit = raw_jpeg_fail;
    cinfo->client_data = j; /* kept by jpeg_create_compress, needed by its errors */
    if (setjmp(j->jmp)) return -1;
    jpeg_create_compress(cinfo);
    j->dest.init_destination = raw_jpeg_dest_init;
    j->dest.empty_output_buffer = raw_jpeg_dest_flush;
    j->dest.term_destination = raw_jpeg_dest_term;
    cinfo->dest = &j->dest;
    cinfo->image_width = (JDIMENSION)j->w;
    cinfo->image_height = (JDIMENSION)j->h;
    cinfo->input_components = 4;
    cinfo->in_color_space = JCS_CMYK;
    jpeg_set_defaults(cinfo); /* CMYK stays CMYK, with an Adobe marker */
    jpeg_set_quality(cinfo, j->quality, TRUE);
    jpeg_start_compress(cinfo, TRUE);
    while (cinfo->next_scanline < cinfo->image_height) {
        JSAMPROW row = (JSAMPROW)(j->px + (size_t)cinfo->next_scanline * (size_t)j->w * 4);
        jpeg_write_scanlines(cinfo, &row, 1);
    }
    jpeg_finish_compress(cinfo);
    return 0;
}

/* Encode j (w, h, quality, px set) into j->out.buf; the caller frees it. */
static enum dse_status jpeg_cmyk_encode(struct jpeg_raw *j, struct dse_err *err) {
    int bad = jpeg_cmyk_guarded(j);
    jpeg_destroy_compress(&j->cinfo);
    if (!bad) return DSE_OK;
    if (j->out.nomem)
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory encoding a JPEG");
    return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "cannot encode CMYK JPEG: %s", j->out.msg);
}

/* ---- the pictures ---------------------------------------------------------------------- */

static void hsv_to_rgb(double h, double s, double v, double rgb[3]) {
    h = (h - floor(h)) * 6.0;
    int i = (int)h % 6;
    double f = h - floor(h), p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
    double r[6] = { v, q, p, p, t, v }, g[6] = { t, v, v, q, p, p }, b[6] = { p, p, t, v, v, q };
    rgb[0] = r[i], rgb[1] = g[i], rgb[2] = b[i];
}

static uint8_t clamp255(double v) {
    return (uint8_t)(v <= 0 ? 0 : v >= 255 ? 255 : (int)(v + 0.5));
}

/* Class k of n: a bright colour of hue k/n against a dark one a third of the wheel away
 * (hue separates few classes best), stripes whose angle and frequency follow the R2
 * low-discrepancy sequence (so neighbours in k differ in both when there are many). */
struct look {
    double a[3], b[3];
    double angle, cycles; /* radians; stripe periods across the short side */
};

static struct look class_look(int k, int n) {
    struct look l;
    double hue = (double)k / n;
    hsv_to_rgb(hue, 0.85, 0.95, l.a);
    hsv_to_rgb(hue + 0.35, 0.8, 0.35, l.b);
    double u = k * 0.7548776662466927, v = k * 0.5698402909980532;
    l.angle = SYNTH_PI * (u - floor(u));
    l.cycles = 1.5 + 4.5 * (v - floor(v));
    return l;
}

/* One image into rgb (w x h x 3), its draws from r: phase, tilt, brightness, then noise. */
static void draw_image(const struct look *l, int w, int h, struct dse_pcg32 *r, uint8_t *rgb) {
    uint32_t phase = dse_pcg32_next(r);
    double tilt = ((double)dse_pcg32_bounded(r, 1001) / 1000.0 - 0.5) * 0.3;
    double bright = 0.8 + 0.4 * (double)dse_pcg32_bounded(r, 1001) / 1000.0;
    double side = w < h ? w : h, per_px = l->cycles / side * 4294967296.0;
    uint32_t dx = (uint32_t)(int64_t)llround(cos(l->angle + tilt) * per_px);
    uint32_t dy = (uint32_t)(int64_t)llround(sin(l->angle + tilt) * per_px);
    uint8_t lut[1024][3]; /* the colour at each stripe phase, squared-off sine */
    for (int t = 0; t < 1024; t++) {
        double s = 0.5 + 0.8 * sin(2.0 * SYNTH_PI * t / 1024.0);
        s = s < 0 ? 0 : s > 1 ? 1 : s;
        for (int ch = 0; ch < 3; ch++)
            lut[t][ch] = clamp255(255.0 * bright * (l->b[ch] + (l->a[ch] - l->b[ch]) * s));
    }
    for (int y = 0; y < h; y++) {
        uint32_t u = phase + (uint32_t)y * dy;
        uint8_t *p = rgb + (size_t)y * (size_t)w * 3;
        for (int x = 0; x < w; x++, u += dx, p += 3) {
            const uint8_t *c = lut[u >> 22];
            uint32_t noise = dse_pcg32_next(r);
            for (int ch = 0; ch < 3; ch++) {
                int v = c[ch] + (int)((noise >> (8 * ch)) & 31) - 16;
                p[ch] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
    }
}

/* ---- the folder ------------------------------------------------------------------------ */

struct synth_job {
    struct dse_image rgb;
    uint8_t         *aux; /* the other encodings' pixels */
    size_t           aux_cap;
};

static enum dse_status check_opts(const struct dse_synth_opts *o, struct dse_err *err) {
#define SYNTH_RANGE(field, lo, hi)                                                               \
    if (o->field < (lo) || o->field > (hi))                                                      \
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, #field " = %d is out of range; "      \
                           "expected %d to %d", o->field, (lo), (hi));
    SYNTH_RANGE(classes, 2, 1000)
    SYNTH_RANGE(train_per_class, 1, SYNTH_PER_CLASS_MAX)
    SYNTH_RANGE(val_per_class, 0, SYNTH_PER_CLASS_MAX)
    SYNTH_RANGE(min_side, 8, 4096)
    SYNTH_RANGE(max_side, o->min_side, 4096)
    SYNTH_RANGE(mixed, 0, 1)
#undef SYNTH_RANGE
    return DSE_OK;
}

static enum dse_status write_file(const char *path, const uint8_t *data, size_t len,
                                  struct dse_err *err) {
    FILE *f = fopen(path, "wb");
    if (!f)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "cannot create %s: %s", path, strerror(errno));
    int ok = fwrite(data, 1, len, f) == len;
    int e = errno;
    if (fclose(f) != 0 && ok) ok = 0, e = errno;
    if (!ok) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "cannot write %s: %s", path, strerror(e));
    return DSE_OK;
}

static enum dse_status aux_reserve(struct synth_job *j, size_t n, struct dse_err *err) {
    if (n <= j->aux_cap) return DSE_OK;
    uint8_t *nb = realloc(j->aux, n);
    if (!nb)
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a %zu-byte image", n);
    j->aux = nb;
    j->aux_cap = n;
    return DSE_OK;
}

/* Encode the RGB picture in j->rgb as format f into *out (malloc'd). Each format derives
 * its extra data from the picture alone, so the decoded pixels are the picture's (PNG) or
 * near it (JPEG): alpha and 16-bit low bytes are patterns the decoder must drop. */
static enum dse_status encode(struct synth_job *j, enum fmt f, uint8_t **out, size_t *len,
                              struct dse_err *err) {
    const struct dse_image *im = &j->rgb;
    int w = im->w, h = im->h;
    size_t n = (size_t)w * (size_t)h;
    const uint8_t *s = im->px;
    enum dse_status st;
    *out = NULL, *len = 0;
    if (f == FMT_JPEG_RGB) return dse_image_encode_jpeg(im, 90, out, len, err);
    if (f == FMT_PNG_RGB) return dse_image_encode_png(im, out, len, err);
    if ((st = aux_reserve(j, n * 6, err))) return st;
    uint8_t *a = j->aux;
    if (f == FMT_PNG_GRAY || f == FMT_JPEG_GRAY) {
        for (size_t i = 0; i < n; i++)
            a[i] = (uint8_t)((s[3 * i] * 299 + s[3 * i + 1] * 587 + s[3 * i + 2] * 114 + 500) /
                             1000); /* the luma of image.h */
        struct dse_image g = { .w = w, .h = h, .c = 1, .px = a, .cap = n };
        return f == FMT_PNG_GRAY ? dse_image_encode_png(&g, out, len, err)
                                 : dse_image_encode_jpeg(&g, 90, out, len, err);
    }
    if (f == FMT_JPEG_CMYK) {
        /* Inverted Adobe CMYK the decoder turns back with R = C*K/255: K = max(R,G,B). */
        for (size_t i = 0; i < n; i++) {
            unsigned r = s[3 * i], g = s[3 * i + 1], b = s[3 * i + 2];
            unsigned k = r > g ? (r > b ? r : b) : (g > b ? g : b);
            uint8_t *p = a + 4 * i;
            p[3] = (uint8_t)k;
            p[0] = (uint8_t)(k ? (r * 255 + k / 2) / k : 0);
            p[1] = (uint8_t)(k ? (g * 255 + k / 2) / k : 0);
            p[2] = (uint8_t)(k ? (b * 255 + k / 2) / k : 0);
        }
        struct jpeg_raw *jr = calloc(1, sizeof *jr);
        if (!jr)
            return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a JPEG encoder");
        jr->w = w, jr->h = h, jr->quality = 90, jr->px = a;
        st = jpeg_cmyk_encode(jr, err);
        if (st) free(jr->out.buf);
        else *out = jr->out.buf, *len = jr->out.len;
        free(jr);
        return st;
    }
    struct png_raw *p = calloc(1, sizeof *p);
    if (!p) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory for a PNG encoder");
    p->w = w, p->h = h, p->depth = 8, p->px = a;
    if (f == FMT_PNG_RGBA) {
        p->ctype = PNG_COLOR_TYPE_RGB_ALPHA;
        for (size_t i = 0; i < n; i++) {
            memcpy(a + 4 * i, s + 3 * i, 3);
            a[4 * i + 3] = (uint8_t)((i % (size_t)w) * 7 + (i / (size_t)w) * 11);
        }
    } else if (f == FMT_PNG_RGB16) {
        p->ctype = PNG_COLOR_TYPE_RGB, p->depth = 16;
        for (size_t i = 0; i < 3 * n; i++) a[2 * i] = s[i], a[2 * i + 1] = (uint8_t)(255 - s[i]);
    } else {
        /* The 6x6x6 colour cube; entries with no red are partly transparent (tRNS). */
        p->ctype = PNG_COLOR_TYPE_PALETTE, p->npal = 216, p->ntrns = 36;
        for (int e = 0; e < 216; e++) {
            p->pal[e] = (png_color){ (png_byte)(e / 36 * 51), (png_byte)(e / 6 % 6 * 51),
                                     (png_byte)(e % 6 * 51) };
            if (e < 36) p->trns[e] = (png_byte)(e * 7);
        }
        for (size_t i = 0; i < n; i++) {
            unsigned q[3];
            for (int ch = 0; ch < 3; ch++) q[ch] = (s[3 * i + ch] * 5u + 127) / 255;
            a[i] = (uint8_t)(q[0] * 36 + q[1] * 6 + q[2]);
        }
    }
    st = png_raw_encode(p, err);
    if (st) free(p->out.buf);
    else *out = p->out.buf, *len = p->out.len;
    free(p);
    return st;
}

static enum dse_status make_dir(const char *path, struct dse_err *err) {
    struct dse_err e = { 0 };
    if (dse_fs_mkdirs(path, &e) == DSE_OK) return DSE_OK;
    /* only e's message: path names the error */
    return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: %s", path, e.msg);
}

static enum dse_status synth_split(const char *dir, const char *split, int split_id, int per_class,
                                   const struct dse_synth_opts *o, struct synth_job *j,
                                   struct dse_err *err) {
    int kw = 2;
    for (int m = o->classes - 1; m >= 100; m /= 10) kw++;
    char path[4096];
    for (int k = 0; k < o->classes; k++) {
        struct look l = class_look(k, o->classes);
        if (snprintf(path, sizeof path, "%s/%s/class_%0*d", dir, split, kw, k) >= (int)sizeof path)
            return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: path too long", dir);
        enum dse_status st = make_dir(path, err);
        if (st) return st;
        size_t dlen = strlen(path);
        for (int i = 0; i < per_class; i++) {
            /* One stream per image: its bytes do not depend on the others. */
            struct dse_pcg32 r;
            dse_pcg32_seed(&r, o->seed,
                           ((uint64_t)split_id << 40) | ((uint64_t)k << 20) | (uint64_t)i);
            uint32_t span = (uint32_t)(o->max_side - o->min_side + 1);
            int w = o->min_side + (int)dse_pcg32_bounded(&r, span);
            int h = o->min_side + (int)dse_pcg32_bounded(&r, span);
            if ((st = dse_image_reserve(&j->rgb, w, h, 3, err))) return st;
            draw_image(&l, w, h, &r, j->rgb.px);
            enum fmt f = o->mixed ? (enum fmt)(i % FMT_COUNT) : FMT_JPEG_RGB;
            int jpeg = f == FMT_JPEG_RGB || f == FMT_JPEG_GRAY || f == FMT_JPEG_CMYK;
            if (snprintf(path + dlen, sizeof path - dlen, "/img_%05d.%s", i,
                         jpeg ? "jpg" : "png") >= (int)(sizeof path - dlen))
                return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: path too long", dir);
            uint8_t *buf;
            size_t len;
            if ((st = encode(j, f, &buf, &len, err))) return st;
            st = write_file(path, buf, len, err);
            free(buf);
            if (st) return st;
        }
    }
    return DSE_OK;
}

enum dse_status dse_synth_folder(const char *dir, const struct dse_synth_opts *o,
                                 struct dse_err *err) {
    enum dse_status st = check_opts(o, err);
    if (st) return st;
    if (!dir || !dir[0]) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "empty folder name");
    struct synth_job j;
    memset(&j, 0, sizeof j);
    st = synth_split(dir, "train", 0, o->train_per_class, o, &j, err);
    if (!st && o->val_per_class > 0) st = synth_split(dir, "val", 1, o->val_per_class, o, &j, err);
    dse_image_deinit(&j.rgb);
    free(j.aux);
    return st;
}
