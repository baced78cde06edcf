/* huff.c: canonical Huffman codes and MSB-first bit streams (huff.h; the .dsez file that
 * uses them: docs/dsez.md). */
#include "base/huff.h"

#include <stdlib.h>
#include <string.h>

/* ---- bit streams ---------------------------------------------------------------------- */

void dse_bitw_init(struct dse_bitw *w, uint8_t *buf, size_t cap) {
    w->buf = buf, w->cap = cap, w->bits = 0;
    if (cap) memset(buf, 0, cap);
}

int dse_bitw_put(struct dse_bitw *w, uint32_t v, int n) {
    if (n <= 0) return 0;
    if (w->bits + (uint64_t)n > (uint64_t)w->cap * 8) return -1;
    for (int i = n - 1; i >= 0; i--, w->bits++)
        if ((v >> i) & 1u) w->buf[w->bits >> 3] |= (uint8_t)(0x80u >> (w->bits & 7));
    return 0;
}

size_t dse_bitw_bytes(const struct dse_bitw *w) { return (size_t)((w->bits + 7) >> 3); }

void dse_bitr_init(struct dse_bitr *r, const uint8_t *buf, size_t len) { r->buf = buf, r->len = len, r->pos = 0; }

/* The next n bits (0..32) without moving; bits past the end read as 0. */
static uint32_t peek(const struct dse_bitr *r, int n) {
    uint64_t acc = 0;
    size_t byte = (size_t)(r->pos >> 3);
    for (int k = 0; k < 5; k++) acc = acc << 8 | (byte + (size_t)k < r->len ? r->buf[byte + (size_t)k] : 0u);
    /* acc holds 40 bits from byte: skip the pos & 7 already read, keep n */
    return n ? (uint32_t)((acc << (24 + (r->pos & 7))) >> (64 - n)) : 0;
}

static uint64_t bits_left(const struct dse_bitr *r) { return (uint64_t)r->len * 8 - r->pos; }

int dse_bitr_get(struct dse_bitr *r, int n, uint32_t *v) {
    if (n < 0 || (uint64_t)n > bits_left(r)) return -1;
    *v = peek(r, n);
    r->pos += (uint64_t)n;
    return 0;
}

int dse_bitr_done(const struct dse_bitr *r) {
    uint64_t left = bits_left(r);
    return left < 8 && peek(r, (int)left) == 0;
}

/* ---- code lengths --------------------------------------------------------------------- */

struct leaf {
    uint64_t count;
    int      sym;
};

static int leaf_cmp(const void *a, const void *b) {
    const struct leaf *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? -1 : 1;
    return (x->sym > y->sym) - (x->sym < y->sym);
}

/* Huffman's construction over the m used leaves (sorted), by two queues (van Leeuwen): the
 * leaves in order and the inner nodes in the order they are made, which is by weight. Writes
 * the depth of each leaf into lens; returns the deepest. */
static int build(const struct leaf *lv, int m, uint64_t *weight, int *parent, uint8_t *lens) {
    int nodes = 2 * m - 1, next_leaf = 0, next_inner = m;
    for (int i = 0; i < m; i++) weight[i] = lv[i].count;
    for (int made = m; made < nodes; made++) {
        int pick[2];
        for (int k = 0; k < 2; k++) { /* a leaf before an equal inner node: the shallower tree */
            if (next_leaf < m && (next_inner >= made || weight[next_leaf] <= weight[next_inner]))
                pick[k] = next_leaf++;
            else pick[k] = next_inner++;
        }
        weight[made] = weight[pick[0]] + weight[pick[1]];
        parent[pick[0]] = parent[pick[1]] = made;
    }
    /* depths: a parent is made after its children, so walk down from the root */
    int *depth = parent + nodes, deepest = 0;
    depth[nodes - 1] = 0;
    for (int i = nodes - 2; i >= 0; i--) depth[i] = depth[parent[i]] + 1;
    for (int i = 0; i < m; i++) {
        lens[lv[i].sym] = (uint8_t)(depth[i] > 255 ? 255 : depth[i]);
        if (depth[i] > deepest) deepest = depth[i];
    }
    return deepest;
}

enum dse_status dse_huff_lengths(const uint64_t *counts, int n, uint8_t *lens, struct dse_err *err) {
    if (n < 1 || n > DSE_HUFF_SYMBOLS_MAX)
        return dse_err_set(err, DSE_ERR_INTERNAL, NULL, 0, "Huffman code of %d symbols; 1 to %d", n,
                           DSE_HUFF_SYMBOLS_MAX);
    memset(lens, 0, (size_t)n);
    struct leaf *lv = malloc((size_t)n * sizeof *lv);
    uint64_t *weight = malloc((size_t)2 * (size_t)n * sizeof *weight);
    int *parent = malloc((size_t)4 * (size_t)n * sizeof *parent); /* parents, then depths */
    enum dse_status st = DSE_OK;
    if (!lv || !weight || !parent) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory building a Huffman code");
        goto done;
    }
    int m = 0;
    for (int s = 0; s < n; s++)
        if (counts[s]) lv[m].count = counts[s], lv[m].sym = s, m++;
    if (m == 1) lens[lv[0].sym] = 1; /* one symbol still needs a bit to be counted */
    if (m < 2) goto done;
    for (;;) {
        qsort(lv, (size_t)m, sizeof *lv, leaf_cmp);
        if (build(lv, m, weight, parent, lens) <= DSE_HUFF_BITS_MAX) break;
        for (int i = 0; i < m; i++) lv[i].count = lv[i].count / 2 + (lv[i].count & 1); /* >= 1 stays >= 1 */
    }
done:
    free(lv);
    free(weight);
    free(parent);
    return st;
}

void dse_huff_codes(const uint8_t *lens, int n, uint32_t *codes) {
    uint32_t count[DSE_HUFF_BITS_MAX + 1] = { 0 }, next[DSE_HUFF_BITS_MAX + 2] = { 0 };
    for (int s = 0; s < n; s++)
        if (lens[s] && lens[s] <= DSE_HUFF_BITS_MAX) count[lens[s]]++;
    for (int l = 1; l <= DSE_HUFF_BITS_MAX; l++) next[l + 1] = (next[l] + count[l]) << 1;
    for (int s = 0; s < n; s++) codes[s] = lens[s] && lens[s] <= DSE_HUFF_BITS_MAX ? next[lens[s]]++ : 0;
}

int dse_huff_put_lengths(struct dse_bitw *w, const uint8_t *lens, int n) {
    int prev = 0;
    for (int s = 0; s < n; s++) {
        if (lens[s] == prev) {
            if (dse_bitw_put(w, 0, 1)) return -1;
        } else if (dse_bitw_put(w, 1, 1) || dse_bitw_put(w, lens[s], 5)) {
            return -1;
        }
        prev = lens[s];
    }
    return 0;
}

uint64_t dse_huff_stream_bits(const uint64_t *counts, const uint8_t *lens, int n) {
    uint64_t bits = 0;
    int prev = 0;
    for (int s = 0; s < n; s++) {
        bits += lens[s] == prev ? 1 : 6;
        prev = lens[s];
        bits += counts[s] * lens[s];
    }
    return bits;
}

/* ---- decoding ------------------------------------------------------------------------- */

void dse_huff_dec_free(struct dse_huff_dec *d) {
    free(d->fast);
    free(d->sorted);
    d->fast = NULL, d->sorted = NULL;
}

enum dse_status dse_huff_dec_read(struct dse_huff_dec *d, struct dse_bitr *r, int n, struct dse_err *err) {
    memset(d, 0, sizeof *d);
    if (n < 1 || n > DSE_HUFF_SYMBOLS_MAX)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "corrupt Huffman code: %d symbols; 1 to %d", n,
                           DSE_HUFF_SYMBOLS_MAX);
    uint8_t *lens = malloc((size_t)n);
    uint32_t *codes = malloc((size_t)n * sizeof *codes);
    d->n = n;
    d->fast = calloc((size_t)1 << DSE_HUFF_FAST_BITS, sizeof *d->fast);
    d->sorted = malloc((size_t)n * sizeof *d->sorted);
    enum dse_status st = DSE_OK;
    if (!lens || !codes || !d->fast || !d->sorted) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory reading a Huffman code");
        goto done;
    }
    uint32_t prev = 0, bit, len;
    for (int s = 0; s < n; s++) {
        if (dse_bitr_get(r, 1, &bit) || (bit && dse_bitr_get(r, 5, &len))) {
            st = dse_err_set(err, DSE_ERR_IO, NULL, 0, "corrupt Huffman code: its lengths end early");
            goto done;
        }
        if (bit) prev = len;
        if (prev > DSE_HUFF_BITS_MAX) {
            st = dse_err_set(err, DSE_ERR_IO, NULL, 0, "corrupt Huffman code: a length of %u bits; at most %d",
                             prev, DSE_HUFF_BITS_MAX);
            goto done;
        }
        lens[s] = (uint8_t)prev;
        d->count[prev]++;
        if (prev > (uint32_t)d->max_len) d->max_len = (int)prev;
    }
    /* Kraft's sum in units of 2^-24: a prefix code fills it exactly, or holds one code "0" */
    uint64_t kraft = 0;
    int used = n - (int)d->count[0];
    for (int l = 1; l <= DSE_HUFF_BITS_MAX; l++) kraft += (uint64_t)d->count[l] << (DSE_HUFF_BITS_MAX - l);
    if (!(kraft == (uint64_t)1 << DSE_HUFF_BITS_MAX || used == 0 || (used == 1 && d->count[1] == 1))) {
        st = dse_err_set(err, DSE_ERR_IO, NULL, 0, "corrupt Huffman code: its lengths are no prefix code");
        goto done;
    }
    d->count[0] = 0;
    uint32_t code = 0, at = 0;
    for (int l = 1; l <= DSE_HUFF_BITS_MAX; l++) {
        code = (code + (l > 1 ? d->count[l - 1] : 0)) << (l > 1); /* the canonical first code of length l */
        d->first[l] = code, d->start[l] = at, at += d->count[l];
    }
    dse_huff_codes(lens, n, codes);
    uint32_t fill[DSE_HUFF_BITS_MAX + 1] = { 0 };
    for (int s = 0; s < n; s++) {
        int l = lens[s];
        if (!l) continue;
        d->sorted[d->start[l] + fill[l]++] = (uint16_t)s;
        if (l <= DSE_HUFF_FAST_BITS) /* every table slot whose first l bits are this code */
            for (uint32_t k = 0, span = 1u << (DSE_HUFF_FAST_BITS - l); k < span; k++)
                d->fast[codes[s] << (DSE_HUFF_FAST_BITS - l) | k] = (uint32_t)l << 16 | (uint32_t)s;
    }
done:
    free(lens);
    free(codes);
    if (st) dse_huff_dec_free(d);
    return st;
}

int dse_huff_decode(const struct dse_huff_dec *d, struct dse_bitr *r, uint32_t *sym) {
    uint32_t e = d->fast[peek(r, DSE_HUFF_FAST_BITS)];
    if (e) {
        if ((uint64_t)(e >> 16) > bits_left(r)) return -1; /* a code made of the zeros past the end */
        r->pos += e >> 16;
        *sym = e & 0xffffu;
        return 0;
    }
    uint32_t code = 0, bit;
    uint64_t pos = r->pos;
    for (int l = 1; l <= d->max_len; l++) {
        if (dse_bitr_get(r, 1, &bit)) break;
        code = code << 1 | bit;
        if (code - d->first[l] < d->count[l]) { /* unsigned: below first wraps high */
            *sym = d->sorted[d->start[l] + code - d->first[l]];
            return 0;
        }
    }
    r->pos = pos;
    return -1;
}
