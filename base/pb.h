/* pb.h: Protocol Buffers' wire format (https://protobuf.dev/programming-guides/encoding/),
 * the part ONNX and Caffe files need: a writer of varints, 32-bit floats, length-delimited
 * bytes and nested messages, and a reader that walks a message's fields. No schema, no
 * generated code: netfile/onnx.c and netfile/caffemodel.c name their fields by number, each
 * beside the .proto line it writes (docs/export.md says why this and not protobuf-c). */
#ifndef DSE_BASE_PB_H
#define DSE_BASE_PB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"

enum dse_pb_wire { DSE_PB_VARINT = 0, DSE_PB_I64 = 1, DSE_PB_LEN = 2, DSE_PB_I32 = 5 };

#define DSE_PB_DEPTH 16 /* nested messages open at once */

/* A message being written into one growing buffer. Calls after an allocation failure do
 * nothing; dse_pb_finish reports it. */
struct dse_pb {
    uint8_t *buf;
    size_t   len, cap;
    int      nomem;
    int      depth;
    size_t   open[DSE_PB_DEPTH]; /* where each open message's content starts */
};

void dse_pb_init(struct dse_pb *w);
void dse_pb_free(struct dse_pb *w);

void dse_pb_varint(struct dse_pb *w, int field, uint64_t v);       /* int32/int64/bool/enum */
void dse_pb_float(struct dse_pb *w, int field, float v);           /* float (fixed32) */
void dse_pb_bytes(struct dse_pb *w, int field, const void *p, size_t n);
void dse_pb_string(struct dse_pb *w, int field, const char *s);
/* Packed repeated fields: one length-delimited field holding every value. */
void dse_pb_packed_floats(struct dse_pb *w, int field, const float *v, size_t n);
void dse_pb_packed_varints(struct dse_pb *w, int field, const int64_t *v, size_t n);
/* A nested message: fields written between begin and end are its content. */
void dse_pb_begin(struct dse_pb *w, int field);
void dse_pb_end(struct dse_pb *w);

/* DSE_OK with every message closed, else DSE_ERR_NOMEM or DSE_ERR_INTERNAL (unbalanced). */
enum dse_status dse_pb_finish(struct dse_pb *w, struct dse_err *err);

/* ---- reading ------------------------------------------------------------------------ */
struct dse_pb_reader {
    const uint8_t *p, *end;
};

struct dse_pb_field {
    int              field;
    enum dse_pb_wire wire;
    uint64_t         v;      /* VARINT, I64 and I32 (the raw bits) */
    const uint8_t   *data;   /* LEN: the bytes (a string, a message, packed values) */
    size_t           len;
};

void dse_pb_reader_init(struct dse_pb_reader *r, const void *data, size_t len);
/* The next field: 1 and *f set, 0 at the end, -1 if the bytes are not a well-formed
 * message (a varint over 10 bytes, a length past the end, wire types 3 and 4 (groups), 6, 7,
 * field number 0). Inline for the fields most of an ONNX graph is made of (field numbers
 * 1 to 2047, a VARINT under 128 or a LEN under 128 bytes: a key of one or two bytes and a
 * value of one), so that the caller keeps *f in registers (issue #34: >= 10^5 ONNX reads
 * per second, bench_analysis); dse_pb_next_any reads any field (the others). */
int dse_pb_next_any(struct dse_pb_reader *r, struct dse_pb_field *f);

/* field and wire written as one 8-byte word: a caller that reads them as one (GCC merges
 * `f.field == a && f.wire == b`) then reads them from one store, not two (a store
 * forwarding stall, a dozen cycles a field: 40% of read_node's time). Little-endian hosts,
 * as pb.c: field in the low half. */
_Static_assert(offsetof(struct dse_pb_field, field) == 0 && offsetof(struct dse_pb_field, wire) == 4 &&
               sizeof(enum dse_pb_wire) == 4, "dse_pb_field_head writes field and wire as one uint64_t");
static inline void dse_pb_field_head(struct dse_pb_field *f, uint64_t field, uint64_t wire) {
    const uint64_t head = field | wire << 32;
    memcpy(f, &head, sizeof head);
}

static inline int dse_pb_next(struct dse_pb_reader *r, struct dse_pb_field *f) {
    const uint8_t *p = r->p;
    const ptrdiff_t left = r->end - p;
    if (left <= 0) return 0;
    unsigned key = p[0], k = 1; /* a key of one byte, or two (field numbers 16 to 2047) */
    if (key >= 0x80) key = left >= 2 && p[1] < 0x80 ? (key & 0x7fu) | (unsigned)p[1] << 7 : 0, k = 2;
    if (key >= 8 && key < 0x4000 && left > k && p[k] < 0x80) {
        const unsigned wire = key & 7u;
        if (wire == DSE_PB_VARINT || (wire == DSE_PB_LEN && p[k] <= left - k - 1)) {
            const size_t len = wire == DSE_PB_LEN ? p[k] : 0;
            dse_pb_field_head(f, key >> 3, wire);
            f->v = p[k], f->data = wire == DSE_PB_LEN ? p + k + 1 : NULL, f->len = len;
            r->p = p + k + 1 + len;
            return 1;
        }
    }
    return dse_pb_next_any(r, f);
}

/* A float field's value: I32 bits as a float. */
float dse_pb_as_float(const struct dse_pb_field *f);
/* Packed or unpacked repeated values of f appended to out[*n] (at most cap): floats from
 * a LEN field of 4-byte values or one I32 field; varints from a LEN field of varints or
 * one VARINT field. -1 if f has another wire type, the bytes do not divide, or cap is
 * exceeded (*n then is what fitted). */
int dse_pb_floats(const struct dse_pb_field *f, float *out, size_t cap, size_t *n);
int dse_pb_varints(const struct dse_pb_field *f, int64_t *out, size_t cap, size_t *n);

#endif
