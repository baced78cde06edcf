/* pb.c: the Protocol Buffers wire format, written and read (pb.h). Little-endian hosts
 * only, as the rest of dse's file formats (floats are copied byte for byte). */
#include "base/pb.h"

#include <stdlib.h>
#include <string.h>

void dse_pb_init(struct dse_pb *w) { memset(w, 0, sizeof *w); }

void dse_pb_free(struct dse_pb *w) {
    free(w->buf);
    memset(w, 0, sizeof *w);
}

static int reserve(struct dse_pb *w, size_t more) {
    if (w->nomem) return -1;
    if (w->len + more <= w->cap) return 0;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->len + more) cap *= 2;
    uint8_t *b = realloc(w->buf, cap);
    if (!b) {
        w->nomem = 1;
        return -1;
    }
    w->buf = b, w->cap = cap;
    return 0;
}

static int varint_size(uint64_t v) {
    int n = 1;
    while (v >= 0x80) v >>= 7, n++;
    return n;
}

static void put_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80) *p++ = (uint8_t)(v | 0x80), v >>= 7;
    *p = (uint8_t)v;
}

static void raw_varint(struct dse_pb *w, uint64_t v) {
    if (reserve(w, 10)) return;
    put_varint(w->buf + w->len, v);
    w->len += (size_t)varint_size(v);
}

static void raw(struct dse_pb *w, const void *p, size_t n) {
    if (!n || reserve(w, n)) return;
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

static void tag(struct dse_pb *w, int field, enum dse_pb_wire wire) {
    raw_varint(w, (uint64_t)field << 3 | (uint64_t)wire);
}

void dse_pb_varint(struct dse_pb *w, int field, uint64_t v) {
    tag(w, field, DSE_PB_VARINT);
    raw_varint(w, v);
}

void dse_pb_float(struct dse_pb *w, int field, float v) {
    tag(w, field, DSE_PB_I32);
    raw(w, &v, 4);
}

void dse_pb_bytes(struct dse_pb *w, int field, const void *p, size_t n) {
    tag(w, field, DSE_PB_LEN);
    raw_varint(w, n);
    raw(w, p, n);
}

void dse_pb_string(struct dse_pb *w, int field, const char *s) { dse_pb_bytes(w, field, s, strlen(s)); }

void dse_pb_packed_floats(struct dse_pb *w, int field, const float *v, size_t n) {
    dse_pb_bytes(w, field, v, n * sizeof *v);
}

void dse_pb_packed_varints(struct dse_pb *w, int field, const int64_t *v, size_t n) {
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += (size_t)varint_size((uint64_t)v[i]);
    tag(w, field, DSE_PB_LEN);
    raw_varint(w, bytes);
    for (size_t i = 0; i < n; i++) raw_varint(w, (uint64_t)v[i]);
}

/* The content's length is known only at the end: 5 bytes are kept for it (enough for any
 * length below 2^35) and the content moved down over the ones its varint does not need. */
void dse_pb_begin(struct dse_pb *w, int field) {
    tag(w, field, DSE_PB_LEN);
    if (w->depth >= DSE_PB_DEPTH) {
        w->depth = DSE_PB_DEPTH + 1; /* too deep: reported by finish */
        return;
    }
    if (!reserve(w, 5)) w->len += 5;
    w->open[w->depth++] = w->len;
}

void dse_pb_end(struct dse_pb *w) {
    if (w->depth <= 0 || w->depth > DSE_PB_DEPTH) {
        w->depth = DSE_PB_DEPTH + 1; /* unbalanced: reported by finish */
        return;
    }
    size_t start = w->open[--w->depth];
    if (w->nomem) return;
    size_t n = w->len - start;
    int k = varint_size(n);
    put_varint(w->buf + start - 5, n);
    memmove(w->buf + start - 5 + k, w->buf + start, n);
    w->len -= (size_t)(5 - k);
}

enum dse_status dse_pb_finish(struct dse_pb *w, struct dse_err *err) {
    if (w->nomem) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory writing a protobuf message");
    if (w->depth) return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "protobuf message: begin and end unbalanced");
    return DSE_OK;
}

/* ---- reading ------------------------------------------------------------------------ */
void dse_pb_reader_init(struct dse_pb_reader *r, const void *data, size_t len) {
    r->p = data;
    r->end = r->p + len;
}

static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    uint64_t x = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*p >= end) return -1;
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 0);
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1; /* more than 10 bytes */
}

int dse_pb_next_any(struct dse_pb_reader *r, struct dse_pb_field *f) {
    uint64_t key, v = 0;
    const uint8_t *p = r->p, *end = r->end, *data = NULL;
    if (p >= end) return 0;
    if (get_varint(&p, end, &key) || key >> 3 == 0 || key >> 3 > 0x1fffffff) return -1;
    switch (key & 7) {
    case DSE_PB_VARINT:
        if (get_varint(&p, end, &v)) return -1;
        break;
    case DSE_PB_I64:
    case DSE_PB_I32: {
        size_t n = (key & 7) == DSE_PB_I64 ? 8 : 4;
        if ((size_t)(end - p) < n) return -1;
        memcpy(&v, p, n); /* little-endian: the low bytes */
        p += n;
        break;
    }
    case DSE_PB_LEN:
        if (get_varint(&p, end, &v) || v > (uint64_t)(end - p)) return -1;
        data = p;
        p += v;
        break;
    default:
        return -1; /* groups (3, 4) and wire types 6, 7 */
    }
    dse_pb_field_head(f, key >> 3, key & 7);
    f->v = v, f->data = data, f->len = data ? (size_t)v : 0;
    r->p = p;
    return 1;
}

float dse_pb_as_float(const struct dse_pb_field *f) {
    uint32_t bits = (uint32_t)f->v;
    float x;
    memcpy(&x, &bits, 4);
    return x;
}

int dse_pb_floats(const struct dse_pb_field *f, float *out, size_t cap, size_t *n) {
    if (f->wire == DSE_PB_I32) {
        if (*n >= cap) return -1;
        out[(*n)++] = dse_pb_as_float(f);
        return 0;
    }
    if (f->wire != DSE_PB_LEN || f->len % 4) return -1;
    size_t k = f->len / 4;
    if (k > cap - *n) return -1;
    memcpy(out + *n, f->data, f->len);
    *n += k;
    return 0;
}

int dse_pb_varints(const struct dse_pb_field *f, int64_t *out, size_t cap, size_t *n) {
    if (f->wire == DSE_PB_VARINT) {
        if (*n >= cap) return -1;
        out[(*n)++] = (int64_t)f->v;
        return 0;
    }
    if (f->wire != DSE_PB_LEN) return -1;
    const uint8_t *p = f->data, *end = f->data + f->len;
    while (p < end) {
        uint64_t v;
        if (*n >= cap || get_varint(&p, end, &v)) return -1;
        out[(*n)++] = (int64_t)v;
    }
    return 0;
}
