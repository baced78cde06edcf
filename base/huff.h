/* huff.h: canonical Huffman codes (Deep Compression's last stage, issue #35; the .dsez file,
 * docs/dsez.md) and the bit streams they travel in. Bits are written most significant first;
 * a code's lengths are chosen from symbol counts with deterministic tie breaks and limited to
 * DSE_HUFF_BITS_MAX, the codes then assigned canonically (DEFLATE's rule, RFC 1951 3.2.2:
 * shorter codes first, equal lengths in symbol order), so the lengths alone give the code. */
#ifndef DSE_BASE_HUFF_H
#define DSE_BASE_HUFF_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

#define DSE_HUFF_SYMBOLS_MAX 65536 /* the alphabet: a 16-bit codebook index */
#define DSE_HUFF_BITS_MAX    24    /* the longest code the decoder takes */

/* ---- bit streams ---------------------------------------------------------------------- */

/* Writes into buf[cap], which init zeroes; bits counts what was written. */
struct dse_bitw {
    uint8_t *buf;
    size_t   cap;
    uint64_t bits;
};
void   dse_bitw_init(struct dse_bitw *w, uint8_t *buf, size_t cap);
/* The low n bits of v (n 0..32), most significant first. -1 (nothing written) where they do
 * not fit in cap. */
int    dse_bitw_put(struct dse_bitw *w, uint32_t v, int n);
/* Bytes written: bits rounded up; the last byte's spare bits are 0. */
size_t dse_bitw_bytes(const struct dse_bitw *w);

/* Reads buf[len]; never past its end. */
struct dse_bitr {
    const uint8_t *buf;
    size_t         len;
    uint64_t       pos;  /* bits read */
};
void dse_bitr_init(struct dse_bitr *r, const uint8_t *buf, size_t len);
/* The next n bits (0..32) into *v. -1 (nothing read) past the end. */
int  dse_bitr_get(struct dse_bitr *r, int n, uint32_t *v);
/* 1 if the stream is read to its end: fewer than 8 bits left and all of them 0 (a writer's
 * padding), else 0. */
int  dse_bitr_done(const struct dse_bitr *r);

/* ---- codes ---------------------------------------------------------------------------- */

/* The code lengths of n symbols (1..DSE_HUFF_SYMBOLS_MAX) from their counts into lens[n]:
 * 0 for a count of 0; a lone used symbol gets 1. Huffman's construction over the used symbols
 * ordered by (count, symbol), a leaf taken before an equal inner node; a code longer than
 * DSE_HUFF_BITS_MAX halves the counts (a used one stays >= 1) and builds again. Errors: n out of
 * range (DSE_ERR_INTERNAL), no memory. */
enum dse_status dse_huff_lengths(const uint64_t *counts, int n, uint8_t *lens, struct dse_err *err);

/* Canonical codes from lengths (a valid set: dse_huff_lengths', or one dse_huff_dec_read took). */
void dse_huff_codes(const uint8_t *lens, int n, uint32_t *codes);

/* The lengths as a stream holds them ahead of the codes: per symbol, bit 0 = the previous
 * symbol's length again (the first's "previous" is 0), else bit 1 and the length in 5 bits.
 * -1 where the writer is full. */
int dse_huff_put_lengths(struct dse_bitw *w, const uint8_t *lens, int n);

/* Bits a stream of these counts takes: its lengths (dse_huff_put_lengths) and its codes. */
uint64_t dse_huff_stream_bits(const uint64_t *counts, const uint8_t *lens, int n);

/* A decoder: a table of the first DSE_HUFF_FAST_BITS bits of every code (one look-up for
 * most symbols), longer codes resolved by the canonical counts per length. */
#define DSE_HUFF_FAST_BITS 10
struct dse_huff_dec {
    int       n, max_len;
    uint32_t *fast;                          /* [1 << DSE_HUFF_FAST_BITS]: len << 16 | symbol; 0: longer or invalid */
    uint32_t  first[DSE_HUFF_BITS_MAX + 1];  /* the first code of each length */
    uint32_t  count[DSE_HUFF_BITS_MAX + 1];  /* codes of each length */
    uint32_t  start[DSE_HUFF_BITS_MAX + 1];  /* where their symbols begin in sorted */
    uint16_t *sorted;                        /* the used symbols in code order */
};

/* Read n symbols' lengths (dse_huff_put_lengths) from r and build d. A length over
 * DSE_HUFF_BITS_MAX, a stream that ends, or lengths that are no prefix code (oversubscribed,
 * or incomplete except one symbol of length 1 or none used) is DSE_ERR_IO with a message that
 * names no file (the caller's dse_err_name_file adds it). dse_huff_dec_free(d) in every case. */
enum dse_status dse_huff_dec_read(struct dse_huff_dec *d, struct dse_bitr *r, int n, struct dse_err *err);
/* The next symbol into *sym: 0, or -1 where the bits are no code or the stream ends. */
int  dse_huff_decode(const struct dse_huff_dec *d, struct dse_bitr *r, uint32_t *sym);
void dse_huff_dec_free(struct dse_huff_dec *d);

#endif
