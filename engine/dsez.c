/* STAND-IN for CODEC's dsez.c: dropped at merge */
/* dsez.c (stand-in): a raw dump of struct dse_dsez's tensors, enough for engine/compress.c
 * to link and its tests to round-trip a model; CODEC's Huffman-coded file replaces it. */
#include "engine/compress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"

static const char magic[8] = { 'D', 'S', 'E', 'Z', 'S', 'T', 'N', 'D' };

enum dse_status dse_dsez_write(struct dse_dsez *z, const struct dse_model *m, const struct dse_ckpt_meta *meta,
                               const char *path, struct dse_err *err) {
    (void)m;
    size_t cap = sizeof magic + sizeof(int) + sizeof meta->seed, len = 0;
    for (int k = 0; k < z->n; k++)
        cap += 96 + (size_t)z->t[k].codebook_n * 4 + (size_t)z->t[k].count * 4;
    char *buf = malloc(cap);
    if (!buf) return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
#define PUT(p, bytes) (memcpy(buf + len, (p), (bytes)), len += (bytes))
    PUT(magic, sizeof magic);
    PUT(&z->n, sizeof z->n);
    PUT(&meta->seed, sizeof meta->seed);
    for (int k = 0; k < z->n; k++) {
        struct dse_dsez_tensor *t = &z->t[k];
        PUT(t->layer, sizeof t->layer);
        PUT(t->role, sizeof t->role);
        PUT(&t->count, sizeof t->count);
        PUT(&t->bits, sizeof t->bits);
        PUT(&t->codebook_n, sizeof t->codebook_n);
        t->nonzero = 0;
        if (t->bits) {
            PUT(t->codebook, sizeof(float) * (size_t)t->codebook_n);
            PUT(t->index, sizeof(uint16_t) * (size_t)t->count);
            for (int64_t i = 0; i < t->count; i++) t->nonzero += t->index[i] != 0;
            t->index_bytes = 2 * t->count, t->codebook_bytes = 4 * t->codebook_n;
        } else {
            PUT(t->raw, sizeof(float) * (size_t)t->count);
            for (int64_t i = 0; i < t->count; i++) t->nonzero += t->raw[i] != 0;
            t->raw_bytes = 4 * t->count;
        }
    }
#undef PUT
    enum dse_status st = dse_fs_write_atomic(path, buf, len, err);
    free(buf);
    z->file_bytes = (int64_t)len;
    return st;
}

enum dse_status dse_dsez_read(const char *path, struct dse_dsez *z, struct dse_err *err) {
    char *buf;
    size_t len, at = sizeof magic;
    enum dse_status st = dse_fs_read(path, &buf, &len, err);
    memset(z, 0, sizeof *z);
    if (st) return st;
#define GET(p, bytes) (at + (bytes) <= len ? (memcpy((p), buf + at, (bytes)), at += (bytes), 1) : 0)
    uint64_t seed = 0;
    int ok = len >= sizeof magic && !memcmp(buf, magic, sizeof magic) && GET(&z->n, sizeof z->n) &&
             GET(&seed, sizeof seed) && z->n >= 0 && (z->t = calloc((size_t)z->n + 1, sizeof *z->t));
    for (int k = 0; ok && k < z->n; k++) {
        struct dse_dsez_tensor *t = &z->t[k];
        ok = GET(t->layer, sizeof t->layer) && GET(t->role, sizeof t->role) && GET(&t->count, sizeof t->count) &&
             GET(&t->bits, sizeof t->bits) && GET(&t->codebook_n, sizeof t->codebook_n) && t->count >= 0 &&
             t->count <= (int64_t)len && t->codebook_n >= 0 && t->codebook_n <= 65536;
        if (ok && t->bits)
            ok = (t->codebook = malloc(4 * (size_t)t->codebook_n + 4)) &&
                 (t->index = malloc(2 * (size_t)t->count + 2)) && GET(t->codebook, 4 * (size_t)t->codebook_n) &&
                 GET(t->index, 2 * (size_t)t->count);
        else if (ok)
            ok = (t->raw = malloc(4 * (size_t)t->count + 4)) && GET(t->raw, 4 * (size_t)t->count);
        for (int64_t i = 0; ok && t->bits && i < t->count; i++) ok = t->index[i] < t->codebook_n;
    }
#undef GET
    free(buf);
    z->info.seed = seed;
    z->file_bytes = (int64_t)len;
    if (!ok) {
        dse_dsez_free(z);
        return dse_err_set(err, DSE_ERR_IO, path, 0, "not a .dsez (stand-in) file, or truncated");
    }
    return DSE_OK;
}

void dse_dsez_free(struct dse_dsez *z) {
    for (int k = 0; z->t && k < z->n; k++) free(z->t[k].codebook), free(z->t[k].index), free(z->t[k].raw);
    free(z->t);
    free(z->info.class_names);
    memset(z, 0, sizeof *z);
}

int dse_dsez_is(const char *path) {
    char head[sizeof magic];
    FILE *f = fopen(path, "rb");
    int is = f && fread(head, 1, sizeof head, f) == sizeof head && !memcmp(head, magic, sizeof magic);
    if (f) fclose(f);
    return is;
}

enum dse_status dse_dsez_load(struct dse_model *m, const char *path, struct dse_err *err) {
    struct dse_dsez z;
    enum dse_status st = dse_dsez_read(path, &z, err);
    if (st) return st;
    int k = 0;
    for (int i = 0; i < m->net.n_layers && !st; i++) {
        struct dse_tensor *ts[4] = { m->nodes[i].weight, m->nodes[i].bias, m->nodes[i].run_mean, m->nodes[i].run_var };
        for (int r = 0; r < 4 && !st; r++) {
            if (!ts[r]) continue;
            if (k >= z.n || z.t[k].count != dse_tensor_count(ts[r]) || strcmp(z.t[k].layer, m->net.layers[i].name)) {
                st = dse_err_set(err, DSE_ERR_IO, path, 0, "a .dsez of another network (tensor %d)", k);
                break;
            }
            const struct dse_dsez_tensor *t = &z.t[k++];
            for (int64_t j = 0; j < t->count; j++) ts[r]->data[j] = t->bits ? t->codebook[t->index[j]] : t->raw[j];
        }
    }
    for (int p = 0; p < m->n_params && !st && m->momentum && m->momentum[p]; p++)
        memset(m->momentum[p], 0, sizeof(float) * (size_t)dse_tensor_count(m->params[p]));
    dse_dsez_free(&z);
    return st;
}

enum dse_status dse_dsez_info(const char *path, struct dse_ckpt_info *out, struct dse_err *err) {
    struct dse_dsez z;
    enum dse_status st = dse_dsez_read(path, &z, err);
    memset(out, 0, sizeof *out);
    if (st) return st;
    out->version = 1, out->seed = z.info.seed;
    dse_dsez_free(&z);
    return DSE_OK;
}
