/* dsez.c: the .dsez file of a compressed model (issue #35; docs/dsez.md byte by byte): a header,
 * the checkpoint's text block (engine/ckpt_impl.h), then each tensor in checkpoint order, raw
 * float32 or weight-shared: its codebook, the Huffman-coded codebook indices of its stored
 * entries and the Huffman-coded relative sparse indices (Han et al.'s gaps, with filler zeros
 * where a gap overflows the index width); one CRC-32 over everything. */
#include "engine/compress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/fs.h"
#include "base/huff.h"
#include "engine/ckpt_impl.h"

#define DSEZ_VERSION       1u
#define DSEZ_SPARSE_MAX    8   /* the widest relative index the writer tries */

struct dsez_header {
    char     magic[8];         /* DSE_DSEZ_MAGIC */
    uint32_t version;          /* 1 */
    uint32_t header_bytes;     /* 40 */
    uint32_t text_bytes;       /* T */
    uint32_t tensors;          /* the text block's param and state lines */
    uint64_t payload_bytes;    /* P: everything after the text block */
    uint32_t crc;              /* CRC-32 of this header (crc = 0), the text, the payload */
    uint32_t reserved;         /* 0 */
};
_Static_assert(sizeof(struct dsez_header) == 40, "dsez header layout");

struct dsez_record {           /* ahead of each tensor's data */
    uint8_t  bits;             /* 0: raw float32; 1..16 */
    uint8_t  sparse_bits;      /* 0: an index per value; 1..8: per stored entry, the gap before it */
    uint16_t reserved;         /* 0 */
    uint32_t codebook_n;       /* bits > 0: float32 values, the first 0 */
    uint64_t count;            /* the tensor's values */
    uint64_t entries;          /* stored entries (fillers included); count when dense or raw */
    uint32_t index_bytes;      /* the codebook indices' stream */
    uint32_t gap_bytes;        /* the gaps' stream; 0 when dense */
};
_Static_assert(sizeof(struct dsez_record) == 32, "dsez record layout");

/* ---- entries: what a weight-shared tensor stores ------------------------------------------ */

/* The entries of index[count] with gaps of sb bits (sb 0: every value, no gaps): into sym[]
 * and gap[] when given, their number returned. */
static uint64_t entries_of(const uint16_t *index, int64_t count, int sb, uint16_t *sym, uint16_t *gap) {
    if (sb == 0) {
        if (sym) memcpy(sym, index, sizeof *sym * (size_t)count);
        return (uint64_t)count;
    }
    const int64_t maxgap = ((int64_t)1 << sb) - 1;
    int64_t last = -1;
    uint64_t n = 0;
    for (int64_t i = 0; i < count; i++) {
        if (!index[i]) continue;
        while (i - last - 1 > maxgap) { /* a filler zero where the gap overflows */
            if (sym) sym[n] = 0, gap[n] = (uint16_t)maxgap;
            n++, last += maxgap + 1;
        }
        if (sym) sym[n] = index[i], gap[n] = (uint16_t)(i - last - 1);
        n++, last = i;
    }
    while (count - 1 - last > maxgap) { /* fillers until at most maxgap zeros end the tensor: its size is
                                           then bounded by its entries, so a reader can refuse a record whose
                                           count its bytes could not hold before allocating */
        if (sym) sym[n] = 0, gap[n] = (uint16_t)maxgap;
        n++, last += maxgap + 1;
    }
    return n;
}

/* Counts of each symbol of a stream. */
static void count_syms(const uint16_t *s, uint64_t n, uint64_t *counts, int alphabet) {
    memset(counts, 0, sizeof *counts * (size_t)alphabet);
    for (uint64_t i = 0; i < n; i++) counts[s[i]]++;
}

/* A stream's bytes: its code lengths and its codes, padded to a byte. */
static uint64_t stream_bytes(const uint64_t *counts, uint8_t *lens, int alphabet, struct dse_err *err, int *bad) {
    if (dse_huff_lengths(counts, alphabet, lens, err)) {
        *bad = 1;
        return 0;
    }
    return (dse_huff_stream_bits(counts, lens, alphabet) + 7) / 8;
}

/* Writes a stream of n symbols into out[cap] (lengths, then codes); its bytes, or 0 on overflow. */
static size_t put_stream(uint8_t *out, size_t cap, const uint16_t *s, uint64_t n, const uint8_t *lens, int alphabet,
                         uint32_t *codes) {
    struct dse_bitw w;
    dse_bitw_init(&w, out, cap);
    dse_huff_codes(lens, alphabet, codes);
    if (dse_huff_put_lengths(&w, lens, alphabet)) return 0;
    for (uint64_t i = 0; i < n; i++)
        if (dse_bitw_put(&w, codes[s[i]], lens[s[i]])) return 0;
    return dse_bitw_bytes(&w);
}

/* ---- writing -------------------------------------------------------------------------------- */

/* The model's k-th tensor in checkpoint order: its layer, role and count. */
static int model_tensor(const struct dse_model *m, int want, const char **layer, const char **role, int64_t *count) {
    struct dse_ckpt_tensor c;
    for (int at = 0, k = 0; dse_ckpt_tensor_next(m, &at, &c); k++)
        if (k == want) {
            *layer = m->net.layers[c.layer].name, *role = c.role, *count = dse_tensor_count(c.t);
            return 1;
        }
    return 0;
}

/* Checks tensor t against the model's k-th and its codebook and indices. */
static enum dse_status check_tensor(const struct dse_dsez_tensor *t, const struct dse_model *m, int k, const char *path,
                                    struct dse_err *err) {
    const char *layer, *role;
    int64_t count;
    if (!model_tensor(m, k, &layer, &role, &count))
        return dse_err_set(err, DSE_ERR_INTERNAL, path, 0, "compressed model: tensor %d of %s %s is not the model's",
                           k, t->layer, t->role);
    if (strcmp(layer, t->layer) || strcmp(role, t->role) || count != t->count)
        return dse_err_set(err, DSE_ERR_INTERNAL, path, 0, "compressed model: tensor %d is %s %s (%lld values) where "
                           "the model has %s %s (%lld)", k, t->layer, t->role, (long long)t->count, layer, role,
                           (long long)count);
    if (t->bits < 0 || t->bits > 16 || (t->bits ? !t->codebook || !t->index : !t->raw))
        return dse_err_set(err, DSE_ERR_INTERNAL, path, 0, "compressed model: %s %s has %d bits and no values",
                           t->layer, t->role, t->bits);
    if (t->bits) {
        if (t->codebook_n < 1 || t->codebook_n > (1 << t->bits) || t->codebook[0] != 0.0f)
            return dse_err_set(err, DSE_ERR_INTERNAL, path, 0, "compressed model: %s %s's codebook of %d entries for "
                               "%d bits must hold 1..%d, the first 0", t->layer, t->role, t->codebook_n, t->bits,
                               1 << t->bits);
        for (int64_t i = 0; i < t->count; i++)
            if (t->index[i] >= t->codebook_n)
                return dse_err_set(err, DSE_ERR_INTERNAL, path, 0, "compressed model: %s %s value %lld has index "
                                   "%u of a codebook of %d", t->layer, t->role, (long long)i, t->index[i], t->codebook_n);
    }
    return DSE_OK;
}

/* Appends tensor t's record and data to buf (grown as needed); fills its byte counts. */
struct buf {
    uint8_t *p;
    size_t   len, cap;
};
static int buf_room(struct buf *b, size_t more) {
    if (b->len + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p, b->cap = cap;
    return 0;
}
static int buf_put(struct buf *b, const void *src, size_t n) {
    if (buf_room(b, n)) return -1;
    memcpy(b->p + b->len, src, n);
    b->len += n;
    return 0;
}

static enum dse_status put_tensor(struct buf *b, struct dse_dsez_tensor *t, const char *path, struct dse_err *err) {
    struct dsez_record rec = { .bits = (uint8_t)t->bits, .codebook_n = (uint32_t)t->codebook_n,
                               .count = (uint64_t)t->count };
    t->weight_bytes = t->index_bytes = t->codebook_bytes = t->raw_bytes = 0;
    t->sparse_bits = 0, t->nonzero = 0;
    if (!t->bits) {
        for (int64_t i = 0; i < t->count; i++) t->nonzero += t->raw[i] != 0;
        rec.entries = (uint64_t)t->count;
        t->raw_bytes = 4 * t->count;
        if (buf_put(b, &rec, sizeof rec) || buf_put(b, t->raw, sizeof(float) * (size_t)t->count)) goto nomem;
        return DSE_OK;
    }
    for (int64_t i = 0; i < t->count; i++) t->nonzero += t->index[i] && t->codebook[t->index[i]] != 0;
    const int alpha = t->codebook_n;
    uint64_t *counts = calloc((size_t)(alpha > 256 ? alpha : 256), sizeof *counts);
    uint8_t *lens = calloc((size_t)(alpha > 256 ? alpha : 256), 1), *glens = calloc(256, 1);
    uint32_t *codes = calloc((size_t)(alpha > 256 ? alpha : 256), sizeof *codes);
    uint16_t *sym = malloc(sizeof *sym * (size_t)(t->count + 1)), *gap = malloc(sizeof *gap * (size_t)(t->count + 1));
    enum dse_status st = DSE_OK;
    if (!counts || !lens || !glens || !codes || !sym || !gap) goto nomem_free;
    /* The width of the relative index that makes the tensor smallest (0: dense), the first on ties. */
    uint64_t best = UINT64_MAX;
    int best_sb = 0, bad = 0;
    for (int sb = 0; sb <= DSEZ_SPARSE_MAX && !bad; sb++) {
        uint64_t n = entries_of(t->index, t->count, sb, sym, gap), bytes;
        count_syms(sym, n, counts, alpha);
        bytes = stream_bytes(counts, lens, alpha, err, &bad);
        if (sb && !bad) {
            count_syms(gap, n, counts, 1 << sb);
            bytes += stream_bytes(counts, glens, 1 << sb, err, &bad);
        }
        if (!bad && bytes < best) best = bytes, best_sb = sb;
    }
    if (bad) {
        st = err && err->code ? err->code : DSE_ERR_INTERNAL;
        goto done;
    }
    const int sb = best_sb;
    rec.sparse_bits = (uint8_t)sb;
    rec.entries = entries_of(t->index, t->count, sb, sym, gap);
    count_syms(sym, rec.entries, counts, alpha);
    if (dse_huff_lengths(counts, alpha, lens, err)) goto fail;
    size_t icap = (size_t)((dse_huff_stream_bits(counts, lens, alpha) + 7) / 8) + 8, gcap = 0;
    if (sb) {
        count_syms(gap, rec.entries, counts, 1 << sb);
        if (dse_huff_lengths(counts, 1 << sb, glens, err)) goto fail;
        gcap = (size_t)((dse_huff_stream_bits(counts, glens, 1 << sb) + 7) / 8) + 8;
    }
    size_t at = b->len;
    if (buf_room(b, sizeof rec + sizeof(float) * (size_t)alpha + icap + gcap)) goto nomem_free;
    b->len += sizeof rec;
    memcpy(b->p + b->len, t->codebook, sizeof(float) * (size_t)alpha);
    b->len += sizeof(float) * (size_t)alpha;
    size_t ib = put_stream(b->p + b->len, icap, sym, rec.entries, lens, alpha, codes);
    b->len += ib;
    size_t gb = sb ? put_stream(b->p + b->len, gcap, gap, rec.entries, glens, 1 << sb, codes) : 0;
    b->len += gb;
    if (!ib || (sb && !gb) || ib > UINT32_MAX || gb > UINT32_MAX) {
        st = dse_err_set(err, DSE_ERR_INTERNAL, path, 0, "compressed model: %s %s's streams do not fit", t->layer,
                         t->role);
        goto done;
    }
    rec.index_bytes = (uint32_t)ib, rec.gap_bytes = (uint32_t)gb;
    memcpy(b->p + at, &rec, sizeof rec);
    t->sparse_bits = sb;
    t->codebook_bytes = 4 * (int64_t)alpha, t->weight_bytes = (int64_t)ib, t->index_bytes = (int64_t)gb;
    goto done;
fail:
    st = err && err->code ? err->code : DSE_ERR_INTERNAL;
    goto done;
nomem_free:
    st = dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory writing the compressed model");
done:
    free(counts), free(lens), free(glens), free(codes), free(sym), free(gap);
    return st;
nomem:
    return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory writing the compressed model");
}

static uint32_t dsez_crc(const struct dsez_header *h, const uint8_t *rest, size_t rest_len) {
    struct dsez_header z = *h;
    z.crc = 0;
    uLong crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)&z, sizeof z);
    for (size_t at = 0; at < rest_len;) { /* zlib's crc32 takes uInt lengths */
        size_t n = rest_len - at > (1u << 30) ? (1u << 30) : rest_len - at;
        crc = crc32(crc, rest + at, (uInt)n);
        at += n;
    }
    return (uint32_t)crc;
}

enum dse_status dse_dsez_write(struct dse_dsez *z, const struct dse_model *m, const struct dse_ckpt_meta *meta,
                               const char *path, struct dse_err *err) {
    size_t text_len = 0;
    char *text = dse_ckpt_text(m, meta, &text_len);
    struct buf b = { 0 };
    enum dse_status st = DSE_OK;
    int64_t tensors = 0;
    const char *l, *r;
    int64_t c;
    while (model_tensor(m, (int)tensors, &l, &r, &c)) tensors++;
    if (!text || buf_room(&b, sizeof(struct dsez_header) + text_len)) {
        st = dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory writing the compressed model");
        goto done;
    }
    if (z->n != tensors) {
        st = dse_err_set(err, DSE_ERR_INTERNAL, path, 0, "compressed model: %d tensors where the model has %lld", z->n,
                         (long long)tensors);
        goto done;
    }
    b.len = sizeof(struct dsez_header);
    memcpy(b.p + b.len, text, text_len);
    b.len += text_len;
    for (int k = 0; k < z->n && !st; k++)
        if (!(st = check_tensor(&z->t[k], m, k, path, err))) st = put_tensor(&b, &z->t[k], path, err);
    if (st) goto done;
    struct dsez_header h = { .version = DSEZ_VERSION, .header_bytes = sizeof h, .text_bytes = (uint32_t)text_len,
                             .tensors = (uint32_t)z->n,
                             .payload_bytes = b.len - sizeof h - text_len };
    memcpy(h.magic, DSE_DSEZ_MAGIC, 8);
    h.crc = dsez_crc(&h, b.p + sizeof h, b.len - sizeof h);
    memcpy(b.p, &h, sizeof h);
    if (!(st = dse_fs_write_atomic(path, b.p, b.len, err))) z->file_bytes = (int64_t)b.len;
done:
    free(text);
    free(b.p);
    return st;
}

/* ---- reading -------------------------------------------------------------------------------- */

void dse_dsez_free(struct dse_dsez *z) {
    for (int k = 0; z->t && k < z->n; k++) free(z->t[k].codebook), free(z->t[k].index), free(z->t[k].raw);
    free(z->t);
    free(z->info.class_names);
    memset(z, 0, sizeof *z);
}

int dse_dsez_is(const char *path) {
    char magic[8];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int is = fread(magic, 1, 8, f) == 8 && !memcmp(magic, DSE_DSEZ_MAGIC, 8);
    fclose(f);
    return is;
}

static enum dse_status corrupt(const char *path, struct dse_err *err, const char *what) {
    return dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt compressed model: %s", what);
}

/* The text block's tensor lines ("param L R NxCxHxW ...", "state L R NxCxHxW") into t[]: names
 * and counts. Returns how many, or -1 where a line does not parse or there are more than max. */
static int text_tensors(const char *text, size_t len, struct dse_dsez_tensor *t, int max) {
    int n = 0;
    for (const char *p = text, *end = text + len; p < end;) {
        size_t l = strcspn(p, "\n");
        if (p + l > end) l = (size_t)(end - p);
        if (l > 6 && (!strncmp(p, "param ", 6) || !strncmp(p, "state ", 6))) {
            char line[512], layer[DSE_NAME_MAX], role[16];
            long long d[4];
            snprintf(line, sizeof line, "%.*s", (int)(l < sizeof line ? l : sizeof line - 1), p);
            if (n >= max || sscanf(line + 6, "%95s %15s %lldx%lldx%lldx%lld", layer, role, &d[0], &d[1], &d[2],
                                   &d[3]) != 6)
                return -1;
            long long count = 1;
            for (int i = 0; i < 4; i++) {
                if (d[i] < 1 || d[i] > (1LL << 31)) return -1;
                count *= d[i];
                if (count > (1LL << 40)) return -1;
            }
            dse_strlcpy(t[n].layer, layer, (int)sizeof t[n].layer);
            dse_strlcpy(t[n].role, role, (int)sizeof t[n].role);
            t[n++].count = count;
        }
        p += l + 1;
    }
    return n;
}

/* Decodes one stream of n symbols over alphabet from in[len] into out. */
static int get_stream(const uint8_t *in, size_t len, int alphabet, uint64_t n, uint16_t *out, struct dse_err *err) {
    struct dse_huff_dec d;
    struct dse_bitr r;
    dse_bitr_init(&r, in, len);
    if (dse_huff_dec_read(&d, &r, alphabet, err)) {
        dse_huff_dec_free(&d);
        return -1;
    }
    int bad = 0;
    for (uint64_t i = 0; i < n && !bad; i++) {
        uint32_t s;
        if (dse_huff_decode(&d, &r, &s) || s >= (uint32_t)alphabet) bad = 1;
        else out[i] = (uint16_t)s;
    }
    dse_huff_dec_free(&d);
    return bad || !dse_bitr_done(&r) ? -1 : 0;
}

/* How much of a file read_file decodes. */
enum depth {
    HEAD,    /* the header, the CRC and the text block */
    SIZES,   /* and every stream, checked, but no sparse tensor's values in place (t->index NULL):
                what a file of a few kilobytes may claim is then bounded by its own size */
    VALUES   /* and every tensor's values */
};

/* The payload's tensor k from p[*at..len) into t (names and count from the text block); at
 * depth SIZES a sparse tensor's entries are counted, not placed. */
static enum dse_status get_tensor(const uint8_t *p, size_t len, size_t *at, struct dse_dsez_tensor *t, enum depth d,
                                  const char *path, struct dse_err *err) {
    struct dsez_record rec;
    char what[DSE_NAME_MAX + 96];
    snprintf(what, sizeof what, "%s %s's data", t->layer, t->role);
    if (len - *at < sizeof rec) return corrupt(path, err, what);
    memcpy(&rec, p + *at, sizeof rec);
    *at += sizeof rec;
    if (rec.count != (uint64_t)t->count || rec.reserved || rec.bits > 16 || rec.sparse_bits > DSEZ_SPARSE_MAX ||
        (!rec.bits && (rec.sparse_bits || rec.codebook_n || rec.entries != rec.count || rec.index_bytes ||
                       rec.gap_bytes)) ||
        (rec.bits && (rec.codebook_n < 1 || rec.codebook_n > (1u << rec.bits) || (!rec.sparse_bits &&
                      (rec.entries != rec.count || rec.gap_bytes)))))
        return corrupt(path, err, what);
    t->bits = rec.bits, t->sparse_bits = rec.sparse_bits, t->codebook_n = (int)rec.codebook_n;
    if (!rec.bits) {
        if ((len - *at) / 4 < rec.count) return corrupt(path, err, what);
        if (!(t->raw = malloc(sizeof(float) * (size_t)(rec.count + 1))))
            return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory reading the compressed model");
        memcpy(t->raw, p + *at, sizeof(float) * (size_t)rec.count);
        *at += sizeof(float) * (size_t)rec.count;
        t->raw_bytes = 4 * t->count;
        for (int64_t i = 0; i < t->count; i++) t->nonzero += t->raw[i] != 0;
        return DSE_OK;
    }
    /* Each stored entry costs at least one bit of the index stream, and at most 2^s - 1 zeros
     * follow the last entry, so a count past (entries + 1) 2^s is no writer's. */
    if ((len - *at) / 4 < rec.codebook_n || rec.entries > (uint64_t)rec.index_bytes * 8 ||
        (rec.sparse_bits && rec.count > (rec.entries + 1) << rec.sparse_bits) ||
        rec.index_bytes > len - *at - 4 * (size_t)rec.codebook_n ||
        rec.gap_bytes > len - *at - 4 * (size_t)rec.codebook_n - rec.index_bytes)
        return corrupt(path, err, what);
    const int place = d == VALUES || !rec.sparse_bits; /* a dense tensor's entries are its values */
    t->codebook = malloc(sizeof(float) * rec.codebook_n);
    t->index = place ? calloc((size_t)rec.count + 1, sizeof *t->index) : NULL;
    uint16_t *sym = malloc(sizeof *sym * (size_t)(rec.entries + 1)), *gap = malloc(sizeof *gap * (size_t)(rec.entries + 1));
    enum dse_status st = DSE_OK;
    if (!t->codebook || (place && !t->index) || !sym || !gap) {
        st = dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory reading the compressed model");
        goto done;
    }
    memcpy(t->codebook, p + *at, sizeof(float) * rec.codebook_n);
    *at += sizeof(float) * rec.codebook_n;
    if (t->codebook[0] != 0.0f) {
        st = corrupt(path, err, what);
        goto done;
    }
    if (get_stream(p + *at, rec.index_bytes, (int)rec.codebook_n, rec.entries, sym, err) ||
        (rec.sparse_bits && get_stream(p + *at + rec.index_bytes, rec.gap_bytes, 1 << rec.sparse_bits, rec.entries,
                                       gap, err))) {
        st = corrupt(path, err, what);
        goto done;
    }
    *at += rec.index_bytes + rec.gap_bytes;
    if (!rec.sparse_bits) {
        memcpy(t->index, sym, sizeof *sym * (size_t)rec.count);
    } else {
        int64_t pos = -1;
        for (uint64_t i = 0; i < rec.entries && !st; i++) {
            pos += (int64_t)gap[i] + 1;
            if (pos >= t->count) st = corrupt(path, err, what);
            else if (place) t->index[pos] = sym[i];
        }
        if (!st && t->count - 1 - pos >= (int64_t)1 << rec.sparse_bits) st = corrupt(path, err, what);
        if (st) goto done;
    }
    if (place)
        for (int64_t i = 0; i < t->count; i++) t->nonzero += t->index[i] && t->codebook[t->index[i]] != 0;
    else /* every value not stored is a zero; a stored one may be a filler's zero */
        for (uint64_t i = 0; i < rec.entries; i++) t->nonzero += sym[i] && t->codebook[sym[i]] != 0;
    t->codebook_bytes = 4 * (int64_t)rec.codebook_n, t->weight_bytes = rec.index_bytes, t->index_bytes = rec.gap_bytes;
done:
    free(sym), free(gap);
    return st;
}

/* Reads path into z to depth d; with m, the text block must name m's tensors (else the
 * error of a checkpoint of another network) before any stream is decoded, so that what a
 * file claims is bounded by the model it is loaded into. */
static enum dse_status read_file(const char *path, struct dse_dsez *z, enum depth d, const struct dse_model *m,
                                 struct dse_err *err) {
    char *file;
    size_t len;
    struct dsez_header h;
    memset(z, 0, sizeof *z);
    enum dse_status st = dse_fs_read(path, &file, &len, err);
    if (st) return st;
    const uint8_t *p = (const uint8_t *)file;
    if (len < 8 || memcmp(file, DSE_DSEZ_MAGIC, 8)) {
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "not a compressed model (.dsez): bad magic");
        goto done;
    }
    if (len < sizeof h) {
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "truncated compressed model: %zu bytes", len);
        goto done;
    }
    memcpy(&h, file, sizeof h);
    if (h.version != DSEZ_VERSION) {
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "compressed model format version %u; this dse reads version %u",
                         h.version, DSEZ_VERSION);
        goto done;
    }
    if (h.header_bytes != sizeof h || h.text_bytes > len - sizeof h || h.payload_bytes != len - sizeof h - h.text_bytes) {
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "truncated or corrupt compressed model: %zu bytes, the header says "
                         "%llu", len, (unsigned long long)sizeof h + h.text_bytes + h.payload_bytes);
        goto done;
    }
    uint32_t crc = dsez_crc(&h, p + sizeof h, len - sizeof h);
    if (crc != h.crc) {
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "corrupt compressed model: CRC-32 %08x, expected %08x (it covers "
                         "the whole file)", (unsigned)crc, h.crc);
        goto done;
    }
    const char *tx = file + sizeof h;
    /* a tensor's line is at least "param L R 1x1x1x1\n", 17 bytes */
    if (h.tensors > h.text_bytes / 17 || !(z->t = calloc((size_t)h.tensors + 1, sizeof *z->t))) {
        st = h.tensors > h.text_bytes / 17 ? corrupt(path, err, "its tensor count")
                                           : dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
        goto done;
    }
    int n = text_tensors(tx, h.text_bytes, z->t, (int)h.tensors);
    if (n != (int)h.tensors) {
        st = corrupt(path, err, "its text block's tensors are not the header's");
        goto done;
    }
    z->n = n;
    if ((st = dse_ckpt_text_info(path, tx, h.text_bytes, &z->info, err))) goto done;
    z->info.version = (int)h.version;
    if (m && (st = dse_ckpt_text_match(m, path, "compressed model", tx, h.text_bytes, err))) goto done;
    size_t at = sizeof h + h.text_bytes;
    for (int k = 0; k < z->n && !st && d != HEAD; k++) st = get_tensor(p, len, &at, &z->t[k], d, path, err);
    if (!st && d != HEAD && at != len) st = corrupt(path, err, "bytes after the last tensor");
    if (!st) z->file_bytes = (int64_t)len;
done:
    free(file);
    if (st) dse_dsez_free(z);
    return st;
}

enum dse_status dse_dsez_read(const char *path, struct dse_dsez *z, struct dse_err *err) {
    return read_file(path, z, VALUES, NULL, err);
}

enum dse_status dse_dsez_read_sizes(const char *path, struct dse_dsez *z, struct dse_err *err) {
    return read_file(path, z, SIZES, NULL, err);
}

enum dse_status dse_dsez_info(const char *path, struct dse_ckpt_info *out, struct dse_err *err) {
    struct dse_dsez z;
    memset(out, 0, sizeof *out);
    enum dse_status st = read_file(path, &z, HEAD, NULL, err);
    if (st) return st;
    *out = z.info;
    z.info.class_names = NULL; /* handed to out */
    dse_dsez_free(&z);
    return DSE_OK;
}

enum dse_status dse_dsez_load(struct dse_model *m, const char *path, struct dse_err *err) {
    struct dse_dsez z;
    enum dse_status st = read_file(path, &z, VALUES, m, err);
    if (st) return st;
    float *state = NULL;
    uint64_t n = dse_model_state_count(m);
    if (!(state = calloc((size_t)n + 1, sizeof *state))) {
        st = dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
        goto done;
    }
    /* Checkpoint order: each parameter then its momentum (zero here), then running statistics;
     * the text block matched the model's, so z.t[k] is the model's k-th */
    uint64_t at = 0;
    struct dse_ckpt_tensor c;
    for (int k = 0, walk = 0; k < z.n; k++) {
        const struct dse_dsez_tensor *t = &z.t[k];
        const int param = dse_ckpt_tensor_next(m, &walk, &c) && c.param;
        if (at + (uint64_t)t->count * (param ? 2u : 1u) > n) {
            st = corrupt(path, err, "more values than the network holds");
            goto done;
        }
        for (int64_t i = 0; i < t->count; i++) state[at + (uint64_t)i] = t->bits ? t->codebook[t->index[i]] : t->raw[i];
        at += (uint64_t)t->count * (param ? 2u : 1u);
    }
    if (at != n) {
        st = corrupt(path, err, "fewer values than the network holds");
        goto done;
    }
    st = dse_model_state_put(m, state, err);
done:
    free(state);
    dse_dsez_free(&z);
    return st;
}
