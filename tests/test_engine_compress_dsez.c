/* test_engine_compress_dsez.c: the .dsez file (engine/dsez.c, docs/dsez.md; issue #35): round
 * trips at every index width and density, filler zeros, exact byte counts, a flipped byte or a
 * truncation anywhere refused, a file of another network refused naming its tensor, and a .dsez
 * taken wherever a checkpoint is. Cases of test_engine_compress (its table). */
#define CHECK_SHARED_COUNTS /* the counts: test_engine_compress.c */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "base/fs.h"
#include "base/pcg32.h"
#include "engine/compress.h"
#include "tests/check.h"
#include "tests/dsez_share.h"
#include "tests/nets.h"
#include "tests/testfs.h"

void test_dsez_roundtrip(void);
void test_dsez_fillers(void);
void test_dsez_damage(void);
void test_dsez_other_net(void);

/* A small net with conv, batchnorm (running statistics) and fc, widths w: its model, weights
 * drawn by seed. */
static struct dse_model *small_model(int w, uint64_t seed) {
    struct dse_net net;
    struct dse_err err = { 0 };
    struct dse_model *m = NULL;
    dse_net_init(&net, "dsez_small", 2, 8, 8);
    DSE_ASSERT(!net_conv(&net, "conv1", w, 3, 1, 1));
    struct dse_layer l = dse_layer_make(DSE_LAYER_BATCHNORM, "bn1");
    l.in_place = 1;
    DSE_ASSERT(!dse_net_add(&net, &l, NULL));
    DSE_ASSERT(!net_simple(&net, DSE_LAYER_RELU, "relu1", 1));
    l = dse_layer_make(DSE_LAYER_FC, "fc2"), l.num_output = 10;
    DSE_ASSERT(!dse_net_add(&net, &l, NULL));
    DSE_ASSERT(!net_simple(&net, DSE_LAYER_SOFTMAX_LOSS, "loss", 0));
    DSE_ASSERT(!dse_net_infer(&net, NULL, &err));
    struct dse_model_opts mo = { .batch = 2, .threads = 1, .seed = seed, .init = DSE_INIT_MSRA, .inference = 1 };
    CHECK_OK(dse_model_new(&net, &mo, &m, &err));
    dse_net_deinit(&net);
    for (int i = 0; m && i < m->net.n_layers; i++) /* running statistics that are not the defaults */
        if (m->nodes[i].run_mean)
            for (int64_t j = 0; j < dse_tensor_count(m->nodes[i].run_mean); j++)
                m->nodes[i].run_mean->data[j] = 0.25f * (float)j, m->nodes[i].run_var->data[j] = 1.0f + (float)j;
    return m;
}

/* Every value of a and b equal, bit for bit (parameters and running statistics). */
static int same_values(const struct dse_model *a, const struct dse_model *b) {
    uint64_t n = dse_model_state_count(a);
    if (n != dse_model_state_count(b)) return 0;
    float *x = malloc(sizeof *x * n), *y = malloc(sizeof *y * n);
    DSE_ASSERT(x && y);
    int same = !dse_model_state_get(a, x, NULL) && !dse_model_state_get(b, y, NULL);
    /* momentum: a's inference model has none (zeros), b's the same */
    same = same && !memcmp(x, y, sizeof *x * n);
    free(x), free(y);
    return same;
}

/* A damaged copy, written plainly (no fsync: hundreds of them). */
static void put_file(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    DSE_ASSERT(f && fwrite(data, 1, len, f) == len && fclose(f) == 0);
}

static int64_t file_size(const char *path) {
    struct stat s;
    return stat(path, &s) ? -1 : (int64_t)s.st_size;
}

/* The header (40 bytes), the text block and 32 bytes a tensor, and each tensor's bytes, add up
 * to the file. */
static int64_t parts_bytes(const struct dse_dsez *z, int64_t text_bytes) {
    int64_t sum = 40 + text_bytes;
    for (int k = 0; k < z->n; k++)
        sum += 32 + z->t[k].weight_bytes + z->t[k].index_bytes + z->t[k].codebook_bytes + z->t[k].raw_bytes;
    return sum;
}

static int64_t text_bytes_of(const char *path) {
    char *f;
    size_t len;
    uint32_t t = 0;
    if (dse_fs_read(path, &f, &len, NULL)) return -1;
    if (len >= 20) memcpy(&t, f + 16, 4);
    free(f);
    return t;
}

void test_dsez_roundtrip(void) {
    static const int bits[] = { 1, 2, 4, 6, 8, 12, 16 };
    static const double density[] = { 1.0, 0.33, 0.05 };
    char dir[64], path[128];
    struct dse_err err = { 0 };
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/m.dsez", dir);
    for (size_t b = 0; b < DSE_ARRAY_LEN(bits); b++)
        for (size_t d = 0; d < DSE_ARRAY_LEN(density); d++) {
            struct dse_model *m = small_model(12, 7 + b), *back = small_model(12, 99);
            struct dse_dsez z, r;
            if (!m || !back) return;
            dsez_share(m, bits[b], density[d], &z); /* m's weights become the decoded values */
            struct dse_ckpt_meta meta = { .data = "fashion-mnist", .seed = 5, .classes = 10 };
            CHECK_OK(dse_dsez_write(&z, m, &meta, path, &err));
            CHECK_INT_EQ(z.file_bytes, file_size(path));
            CHECK_INT_EQ(parts_bytes(&z, text_bytes_of(path)), z.file_bytes);
            CHECK(dse_dsez_is(path));
            CHECK_OK(dse_dsez_read(path, &r, &err));
            CHECK_INT_EQ(r.n, z.n);
            CHECK_INT_EQ(r.file_bytes, z.file_bytes);
            CHECK_INT_EQ(r.info.classes, 10);
            CHECK(!strcmp(r.info.data, "fashion-mnist"));
            for (int k = 0; k < r.n && k < z.n; k++) {
                const struct dse_dsez_tensor *a = &z.t[k], *t = &r.t[k];
                CHECK(!strcmp(a->layer, t->layer) && !strcmp(a->role, t->role) && a->count == t->count);
                CHECK_INT_EQ(t->bits, a->bits);
                CHECK_INT_EQ(t->nonzero, a->nonzero);
                CHECK_INT_EQ(t->weight_bytes + t->index_bytes + t->codebook_bytes + t->raw_bytes,
                             a->weight_bytes + a->index_bytes + a->codebook_bytes + a->raw_bytes);
                if (a->bits) {
                    CHECK(t->codebook_n == a->codebook_n &&
                          !memcmp(t->codebook, a->codebook, sizeof(float) * (size_t)a->codebook_n));
                    CHECK(!memcmp(t->index, a->index, sizeof(uint16_t) * (size_t)a->count));
                } else {
                    CHECK(!memcmp(t->raw, a->raw, sizeof(float) * (size_t)a->count));
                }
            }
            /* loading: dse_dsez_load and dse_checkpoint_load give m's values */
            int next = -1;
            int64_t it = -1;
            CHECK_OK(dse_dsez_load(back, path, &err));
            CHECK(same_values(m, back));
            struct dse_model *back2 = small_model(12, 98);
            if (back2) {
                CHECK_OK(dse_checkpoint_load(back2, path, &next, &it, &err));
                CHECK(next == 0 && it == 0 && same_values(m, back2));
                dse_model_free(back2);
            }
            struct dse_ckpt_info info;
            CHECK_OK(dse_checkpoint_info(path, &info, &err));
            CHECK(info.classes == 10 && info.seed == 5 && info.in_c == 2 && info.in_h == 8 && info.outputs == 10);
            free(info.class_names);
            if (density[d] < 0.5 && bits[b] <= 8) /* sparse and narrow: far smaller than float32 */
                CHECK(z.file_bytes * 3 < (int64_t)dse_model_state_count(m) * 2);
            dse_dsez_free(&r);
            dsez_share_free(&z);
            dse_model_free(m), dse_model_free(back);
        }
    tmpdir_remove(dir);
}

/* Gaps wider than any index width (only the first and last weight kept: fillers), an all-zero
 * tensor and a codebook of one entry. */
void test_dsez_fillers(void) {
    static const struct {
        const char *id;
        int         keep;     /* 0: none; 1: the first and the last; 2: every 300th */
        int         codebook_n;
    } cases[] = {
        { .id = "ends", .keep = 1, .codebook_n = 4 },
        { .id = "zero", .keep = 0, .codebook_n = 1 },
        { .id = "every-300th", .keep = 2, .codebook_n = 3 },
    };
    char dir[64], path[128];
    struct dse_err err = { 0 };
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/f.dsez", dir);
    for (size_t c = 0; c < DSE_ARRAY_LEN(cases); c++) {
        struct dse_model *m = small_model(16, 3), *back = small_model(16, 4);
        struct dse_dsez z, r;
        if (!m || !back) return;
        dsez_share(m, 2, 1.0, &z);
        struct dse_dsez_tensor *t = &z.t[z.n - 2 - 2]; /* fc2's weight: params conv1 w b, fc2 w b; then bn's */
        for (int k = 0; k < z.n; k++)
            if (!strcmp(z.t[k].layer, "fc2") && !strcmp(z.t[k].role, "weight")) t = &z.t[k];
        CHECK(t->count > 2000);
        t->codebook_n = cases[c].codebook_n;
        t->codebook[1] = 0.5f, t->codebook[2] = -0.25f, t->codebook[3] = 1.5f;
        for (int64_t i = 0; i < t->count; i++) {
            int kept = cases[c].keep == 1 ? i == 0 || i == t->count - 1 : cases[c].keep == 2 ? i % 300 == 0 : 0;
            t->index[i] = (uint16_t)(kept ? 1 + i % (cases[c].codebook_n - 1 > 0 ? cases[c].codebook_n - 1 : 1) : 0);
            if (cases[c].codebook_n == 1) t->index[i] = 0;
        }
        struct dse_ckpt_meta meta = { .seed = 1 };
        CHECK_OK(dse_dsez_write(&z, m, &meta, path, &err));
        CHECK_OK(dse_dsez_read(path, &r, &err));
        for (int k = 0; k < r.n; k++)
            if (!strcmp(r.t[k].layer, "fc2") && !strcmp(r.t[k].role, "weight")) {
                CHECK(!memcmp(r.t[k].index, t->index, sizeof(uint16_t) * (size_t)t->count));
                CHECK_INT_EQ(r.t[k].nonzero, cases[c].keep == 1 ? 2 : cases[c].keep == 2 ? (t->count + 299) / 300 : 0);
                if (cases[c].keep) CHECK(r.t[k].sparse_bits > 0);   /* sparse pays here */
                /* a tensor of 2,000+ values stored in few bytes: fillers, not a dense index */
                CHECK(r.t[k].weight_bytes + r.t[k].index_bytes < t->count / 8);
            }
        dse_dsez_free(&r);
        /* read for its sizes (dse analyze --compressed): the same counts, no sparse tensor placed */
        struct dse_dsez q;
        CHECK_OK(dse_dsez_read(path, &r, &err));
        CHECK_OK(dse_dsez_read_sizes(path, &q, &err));
        CHECK(q.n == r.n && q.file_bytes == r.file_bytes);
        for (int k = 0; k < r.n && k < q.n; k++) {
            CHECK_INT_EQ(q.t[k].nonzero, r.t[k].nonzero);
            CHECK(q.t[k].weight_bytes == r.t[k].weight_bytes && q.t[k].index_bytes == r.t[k].index_bytes);
            CHECK(q.t[k].sparse_bits ? q.t[k].index == NULL : (q.t[k].bits == 0) == (q.t[k].index == NULL));
        }
        dse_dsez_free(&r), dse_dsez_free(&q);
        dsez_share_free(&z);
        dse_model_free(m), dse_model_free(back);
    }
    tmpdir_remove(dir);
}

/* Every byte flipped in turn, and every truncation: refused, the file named. */
void test_dsez_damage(void) {
    char dir[64], path[128], bad[128];
    struct dse_err err = { 0 };
    struct dse_model *m = small_model(4, 11);
    struct dse_dsez z, r;
    if (!m) return;
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/d.dsez", dir), snprintf(bad, sizeof bad, "%s/bad.dsez", dir);
    dsez_share(m, 3, 0.5, &z);
    CHECK_OK(dse_dsez_write(&z, m, NULL, path, &err));
    char *f;
    size_t len;
    CHECK_OK(dse_fs_read(path, &f, &len, &err));
    int flips_refused = 0, cuts_refused = 0;
    for (size_t i = 0; i < len; i++) {
        f[i] ^= 0x10;
        put_file(bad, f, len);
        struct dse_err e = { 0 };
        if (dse_dsez_read(bad, &r, &e) == DSE_ERR_IO && strstr(e.file, "bad.dsez")) flips_refused++;
        else dse_dsez_free(&r);
        f[i] ^= 0x10;
    }
    for (size_t cut = 0; cut < len; cut++) {
        put_file(bad, f, cut);
        struct dse_err e = { 0 };
        if (dse_dsez_read(bad, &r, &e) == DSE_ERR_IO) cuts_refused++;
        else dse_dsez_free(&r);
    }
    CHECK_INT_EQ(flips_refused, (long long)len);
    CHECK_INT_EQ(cuts_refused, (long long)len);
    /* an appended byte too */
    f = realloc(f, len + 1);
    f[len] = 0;
    put_file(bad, f, len + 1);
    CHECK(dse_dsez_read(bad, &r, &err) == DSE_ERR_IO);
    free(f);
    dsez_share_free(&z);
    dse_model_free(m);
    tmpdir_remove(dir);
}

/* A .dsez of another network: refused naming the first tensor that differs. */
void test_dsez_other_net(void) {
    char dir[64], path[128];
    struct dse_err err = { 0 };
    struct dse_model *m = small_model(4, 1), *other = small_model(6, 1);
    struct dse_dsez z;
    int next;
    int64_t it;
    if (!m || !other) return;
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/o.dsez", dir);
    dsez_share(m, 4, 0.5, &z);
    CHECK_OK(dse_dsez_write(&z, m, NULL, path, &err));
    CHECK(dse_checkpoint_load(other, path, &next, &it, &err) == DSE_ERR_IO);
    CHECK(strstr(err.msg, "compressed model of another network: it has 'param conv1 weight 4x2x3x3 +momentum' "
                          "where this network has 'param conv1 weight 6x2x3x3 +momentum'") != NULL);
    /* the text block is matched before any stream is decoded (what a file claims is then bounded
     * by the model): with a damaged stream under a right CRC, another network's model is told so,
     * the model's own that the file is corrupt */
    char *f;
    size_t len;
    CHECK_OK(dse_fs_read(path, &f, &len, &err));
    uint32_t text_bytes;
    memcpy(&text_bytes, f + 16, 4);
    f[40 + text_bytes] ^= 0x5a; /* the first tensor's record: its count */
    memset(f + 32, 0, 4); /* docs/dsez.md: the CRC at offset 32, over the file with it zero */
    uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)f, (uInt)len);
    memcpy(f + 32, &crc, 4);
    put_file(path, f, len);
    free(f);
    CHECK(dse_checkpoint_load(other, path, &next, &it, &err) == DSE_ERR_IO);
    CHECK(strstr(err.msg, "compressed model of another network") != NULL);
    CHECK(dse_checkpoint_load(m, path, &next, &it, &err) == DSE_ERR_IO);
    CHECK(strstr(err.msg, "corrupt compressed model") != NULL);
    /* a struct that is not the model's: refused before anything is written */
    z.t[0].count--;
    CHECK(dse_dsez_write(&z, m, NULL, path, &err) == DSE_ERR_INTERNAL);
    z.t[0].count++;
    z.t[0].index[0] = (uint16_t)z.t[0].codebook_n;
    CHECK(dse_dsez_write(&z, m, NULL, path, &err) == DSE_ERR_INTERNAL);
    dsez_share_free(&z);
    dse_model_free(m), dse_model_free(other);
    tmpdir_remove(dir);
}
