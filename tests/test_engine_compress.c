/* test_engine_compress.c: Deep Compression (engine/compress.c, issue #35): pruning's kept
 * counts and tie rule, k-means on known values, masked retraining keeping pruned weights zero,
 * codebook fine-tuning keeping ties, determinism, a stopped run resumed to the same bytes, and
 * bad settings refused. Trainings: a tiny Fire net, 256 Fashion-MNIST images, 1 epoch. */
#define CHECK_SHARED_COUNTS /* one set of counts for test_engine_compress's files, defined here */
#include "engine/compress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "engine/compress_impl.h"
#include "metaparams/metaparams.h"
#include "tests/check.h"
#include "tests/nets.h"
#include "tests/testfs.h"

int check_failures, check_count, check_skips;

static int data_installed(void) {
    return access("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", R_OK) == 0;
}

/* Pruning: the round(d n) largest |w| kept, ties to the lower index. */
static void test_prune(void) {
    static const struct {
        const char *id;
        float       w[8];
        int         n;
        double      d;
        uint8_t     mask[8];
    } cases[] = {
        { .id = "ties-to-lower", .w = { 0.5f, -0.5f, 0.1f, 0.5f }, .n = 4, .d = 0.5, .mask = { 1, 1, 0, 0 } },
        { .id = "round-half-up", .w = { 1, 2, 3 }, .n = 3, .d = 0.5, .mask = { 0, 1, 1 } },
        { .id = "third", .w = { -6, 5, -4, 3, -2, 1 }, .n = 6, .d = 0.33, .mask = { 1, 1, 0, 0, 0, 0 } },
        { .id = "all", .w = { 0, 0, 1 }, .n = 3, .d = 1.0, .mask = { 1, 1, 1 } },
        { .id = "none-rounds-to-0", .w = { 1, 2, 3 }, .n = 3, .d = 0.1, .mask = { 0, 0, 0 } },
        { .id = "zeros-tie", .w = { 0, 0, 0, 0, 0, 0, 0, 0 }, .n = 8, .d = 0.25, .mask = { 1, 1, 0, 0, 0, 0, 0, 0 } },
    };
    for (size_t c = 0; c < DSE_ARRAY_LEN(cases); c++) {
        uint8_t mask[8];
        int64_t kept = dse_compress_prune_mask(cases[c].w, cases[c].n, cases[c].d, mask);
        int64_t want = 0;
        for (int i = 0; i < cases[c].n; i++) want += cases[c].mask[i];
        CHECK_INT_EQ(kept, want);
        if (memcmp(mask, cases[c].mask, (size_t)cases[c].n)) {
            CHECK(!"mask");
            fprintf(stderr, "  prune case %s\n", cases[c].id);
        }
    }
}

/* k-means: linear initialization over [min, max], Lloyd's iterations to convergence. */
static void test_kmeans(void) {
    static const struct {
        const char *id;
        float       x[8];
        int         n, k, iters;
        double      c[4];
    } cases[] = {
        /* init {0, 12}: split at 6 at once, means {1, 11}; the next pass moves nothing */
        { .id = "two-groups", .x = { 12, 0, 11, 1, 10, 2 }, .n = 6, .k = 2, .iters = 1, .c = { 1, 11 } },
        /* init {0, 50, 100}: the middle cluster empty, keeping 50 */
        { .id = "empty-keeps", .x = { 0, 1, 2, 3, 100 }, .n = 5, .k = 3, .iters = 1, .c = { 1.5, 50, 100 } },
        /* init {0, 3, 6}: {0,1} {2,3,4} {6} -> {0.5, 3, 6}: split at 1.75 and 4.5 -> the same */
        { .id = "converges", .x = { 0, 1, 2, 3, 4, 6 }, .n = 6, .k = 3, .iters = 1, .c = { 0.5, 3, 6 } },
        /* init {0, 1, 2, 3}; 1.5 ties between 1 and 2: to the lower */
        { .id = "tie-lower", .x = { 0, 1.5f, 3 }, .n = 3, .k = 4, .iters = 1, .c = { 0, 1.5, 2, 3 } },
        { .id = "one", .x = { -1, 2, 5 }, .n = 3, .k = 1, .iters = 1, .c = { 2 } },
        /* init {0, 10}: {0, 4.5} {5.5, 10 x4} -> {2.25, 9.1}: 5.5 moves below 5.675 -> {10/3, 10} */
        { .id = "moves", .x = { 0, 4.5f, 5.5f, 10, 10, 10, 10 }, .n = 7, .k = 2, .iters = 2, .c = { 10.0 / 3, 10 } },
    };
    for (size_t c = 0; c < DSE_ARRAY_LEN(cases); c++) {
        double cen[4];
        int    iters = -1;
        CHECK_INT_EQ(dse_compress_kmeans(cases[c].x, cases[c].n, cases[c].k, cen, &iters), 0);
        CHECK_INT_EQ(iters, cases[c].iters);
        for (int j = 0; j < cases[c].k; j++)
            if (fabs(cen[j] - cases[c].c[j]) > 1e-6) {
                CHECK(!"centroid");
                fprintf(stderr, "  kmeans case %s: c[%d] = %g, expected %g\n", cases[c].id, j, cen[j], cases[c].c[j]);
            }
    }
}

/* A tiny Fire net on Fashion-MNIST trained one epoch into dir/model.ckpt. */
static void setup(const char *dir, struct dse_net *net, struct dse_compress_opts *o, char *ckpt) {
    struct dse_mp mp = tiny_fire_mp();
    mp.input_h = mp.input_w = 28, mp.classes = 10;
    dse_net_init(net, "t", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, net, NULL));
    dse_compress_opts_default(o);
    struct dse_train_opts *t = &o->train;
    t->epochs = 1, t->batch = 32, t->limit_train = 256, t->limit_test = 64, t->init = DSE_INIT_MSRA;
    t->threads = 2, t->conv_algo = DSE_CPU_CONV_GEMM_BATCH;
    char tdir[300];
    snprintf(tdir, sizeof tdir, "%s/train", dir);
    struct dse_train_opts tr = *t;
    tr.checkpoint_dir = tdir;
    struct dse_train_result *r = malloc(sizeof *r);
    struct dse_err err = { 0 };
    CHECK_OK(dse_train_run(net, &tr, r, &err));
    free(r);
    sprintf(ckpt, "%s/epoch-1.ckpt", tdir);
    o->density = 0.5, o->bits = 4, o->finetune = 1;
}

/* Values of layer's weight in checkpoint path. */
static float *weights_of(const struct dse_net *net, const char *path, const char *layer, int64_t *n) {
    struct dse_model *m = NULL;
    struct dse_err err = { 0 };
    struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1 };
    int e;
    int64_t it;
    CHECK_OK(dse_model_new(net, &mo, &m, &err));
    CHECK_OK(dse_checkpoint_load(m, path, &e, &it, &err));
    const struct dse_tensor *t = m->nodes[dse_net_find(&m->net, layer)].weight;
    *n = dse_tensor_count(t);
    float *w = malloc(sizeof *w * (size_t)*n);
    memcpy(w, t->data, sizeof *w * (size_t)*n);
    dse_model_free(m);
    return w;
}

static int stop_at(void *arg) { return --*(int *)arg < 0; }

/* A stage callback counting restarts in *arg. */
static void said(void *arg, const char *stage) { *(int *)arg += !strncmp(stage, "restart", 7); }

/* The whole run: masked retraining keeps the pruned zeros, fine-tuning keeps every weight on
 * its codebook value, two runs give the same bytes, and a run stopped within each training
 * stage goes on from its work folder to them too. */
static void test_run(void) {
    if (!data_installed()) {
        CHECK_SKIP("dataset-fashion-mnist not installed");
        return;
    }
    char dir[64], ckpt[300], out[5][300], work[5][300];
    tmpdir_make(dir);
    struct dse_net net;
    struct dse_compress_opts o;
    setup(dir, &net, &o, ckpt);
    struct dse_compress_result r;
    struct dse_err err = { 0 };
    for (int k = 0; k < 5; k++) {
        snprintf(out[k], sizeof out[k], "%s/m%d.dsez", dir, k);
        snprintf(work[k], sizeof work[k], "%s/w%d", dir, k);
    }
    o.work_dir = work[0];
    CHECK_OK(dse_compress_run(&net, ckpt, &o, out[0], &r, &err));
    CHECK(r.file_bytes > 0 && r.float_bytes > 0 && r.top1_float > 0.1f && r.top1_compressed > 0.1f);
    CHECK(r.density > 0.45 && r.density < 0.6); /* conv1 and conv4 (the classifier) keep sqrt(0.5) */
    /* masked retraining: the original's pruned weights are still zero; fine-tuned: tied */
    static const char *const layers[] = { "conv1", "fire2/squeeze1x1", "fire3/expand3x3", "conv4" };
    for (size_t l = 0; l < DSE_ARRAY_LEN(layers); l++) {
        char p[400];
        int64_t n, n2;
        float *w0 = weights_of(&net, ckpt, layers[l], &n);
        snprintf(p, sizeof p, "%s/retrain/epoch-1.ckpt", work[0]);
        float *w1 = weights_of(&net, p, layers[l], &n2);
        uint8_t *mask = malloc((size_t)n);
        int i = dse_net_find(&net, layers[l]);
        dse_compress_prune_mask(w0, n, dse_net_prune_density(&net, i, o.density), mask);
        int64_t revived = 0, moved = 0;
        for (int64_t j = 0; j < n; j++) revived += !mask[j] && w1[j] != 0, moved += mask[j] && w1[j] != w0[j];
        CHECK_INT_EQ(revived, 0);
        CHECK(moved > 0);
        snprintf(p, sizeof p, "%s/finetune/epoch-1.ckpt", work[0]);
        float *w2 = weights_of(&net, p, layers[l], &n2);
        float seen[64];
        int k = 0;
        for (int64_t j = 0; j < n && k < 64; j++) {
            int known = 0;
            for (int q = 0; q < k; q++) known |= seen[q] == w2[j];
            if (!known) seen[k++] = w2[j];
            CHECK(mask[j] || w2[j] == 0);
        }
        CHECK(k <= 1 << o.bits); /* 0 and at most 15 centroids: the ties held through SGD */
        free(w0), free(w1), free(w2), free(mask);
    }
    /* determinism: another work folder and thread count, the same bytes */
    o.work_dir = work[1], o.train.threads = 1;
    CHECK_OK(dse_compress_run(&net, ckpt, &o, out[1], &r, &err));
    o.train.threads = 2;
    char *a, *b;
    size_t la, lb;
    CHECK_OK(dse_fs_read(out[0], &a, &la, &err));
    CHECK_OK(dse_fs_read(out[1], &b, &lb, &err));
    CHECK(la == lb && !memcmp(a, b, la));
    free(b);
    /* stopped in retraining (after 5 of 8 steps, checkpointed every 2), then in fine-tuning:
     * each rerun goes on from the work folder; the end is the same bytes */
    o.work_dir = work[2], o.train.ckpt_every_steps = 2, o.train.cancel = stop_at;
    int left = 5;
    o.train.progress_arg = &left;
    CHECK(dse_compress_run(&net, ckpt, &o, out[2], &r, &err) != DSE_OK);
    left = 4 + 5; /* retraining's last 4 steps (from step 4's checkpoint), then 5 of fine-tuning's */
    CHECK(dse_compress_run(&net, ckpt, &o, out[2], &r, &err) != DSE_OK);
    char p[400];
    snprintf(p, sizeof p, "%s/retrain/epoch-1.ckpt", work[2]);
    CHECK(access(p, R_OK) == 0);
    o.train.cancel = NULL;
    CHECK_OK(dse_compress_run(&net, ckpt, &o, out[2], &r, &err));
    CHECK_OK(dse_fs_read(out[2], &b, &lb, &err));
    CHECK(la == lb && !memcmp(a, b, la));
    free(a), free(b);
    /* a work folder left by a run of other settings (here work[0]'s, density 0.5) is cleared,
     * said, and the run is a fresh one's: the same bytes as in an empty folder */
    int restarts = 0;
    o.density = 0.3, o.work_dir = work[3], o.stage = said, o.train.progress_arg = &restarts;
    CHECK_OK(dse_compress_run(&net, ckpt, &o, out[3], &r, &err));
    CHECK_INT_EQ(restarts, 0);
    o.work_dir = work[0];
    CHECK_OK(dse_compress_run(&net, ckpt, &o, out[4], &r, &err));
    CHECK_INT_EQ(restarts, 1);
    CHECK_OK(dse_fs_read(out[3], &a, &la, &err));
    CHECK_OK(dse_fs_read(out[4], &b, &lb, &err));
    CHECK(la == lb && !memcmp(a, b, la));
    free(b);
    /* the same settings again, or fewer test images (evaluation only): the stamp matches, the
     * stages' files are used as they are, the same bytes */
    o.train.limit_test = 32;
    CHECK_OK(dse_compress_run(&net, ckpt, &o, out[4], &r, &err));
    CHECK_INT_EQ(restarts, 1);
    CHECK_OK(dse_fs_read(out[4], &b, &lb, &err));
    CHECK(la == lb && !memcmp(a, b, la));
    free(a), free(b);
    o.train.limit_test = 64;
    o.density = 0.5, o.stage = NULL;
    /* the default work folder (OUT.work) goes once done */
    o.work_dir = NULL, o.finetune = 0, o.train.ckpt_every_steps = 0;
    CHECK_OK(dse_compress_run(&net, ckpt, &o, out[1], &r, &err));
    snprintf(p, sizeof p, "%s.work", out[1]);
    CHECK(access(p, F_OK) != 0);
    CHECK(r.top1_pruned > 0 && r.ratio > 0);
    dse_net_deinit(&net);
    tmpdir_remove(dir);
}

/* Settings refused before any work, with words that say what is allowed. */
static void test_bad_settings(void) {
    if (!data_installed()) {
        CHECK_SKIP("dataset-fashion-mnist not installed");
        return;
    }
    char dir[64], ckpt[300], out[300];
    tmpdir_make(dir);
    struct dse_net net, other;
    struct dse_compress_opts base;
    setup(dir, &net, &base, ckpt);
    snprintf(out, sizeof out, "%s/m.dsez", dir);
    struct dse_mp mp = tiny_fire_mp();
    mp.input_h = mp.input_w = 28, mp.classes = 10, mp.base_e = 16;
    dse_net_init(&other, "other", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, &other, NULL));
    static const struct dse_compress_layer nolayer[] = { { .layer = "nope", .density = 0.5 } };
    static const struct dse_compress_layer noweights[] = { { .layer = "pool1", .density = 0.5 } };
    static const struct dse_compress_layer badd[] = { { .layer = "conv1", .density = 2 } };
    static const struct {
        const char *id;
        double      density;
        int         bits, other, same_out;
        const struct dse_compress_layer *layers;
        enum dse_status code;
        const char *msg;
    } cases[] = {
        { .id = "density-0", .density = 0, .bits = 8, .code = DSE_ERR_CONFIG,
          .msg = "density 0 is out of range; expected 0 < density <= 1" },
        { .id = "density-1.5", .density = 1.5, .bits = 8, .code = DSE_ERR_CONFIG,
          .msg = "density 1.5 is out of range; expected 0 < density <= 1" },
        { .id = "bits-0", .density = 0.5, .bits = 0, .code = DSE_ERR_CONFIG,
          .msg = "bits 0 is out of range; expected 1 to 16" },
        { .id = "bits-17", .density = 0.5, .bits = 17, .code = DSE_ERR_CONFIG,
          .msg = "bits 17 is out of range; expected 1 to 16" },
        { .id = "no-layer", .density = 0.5, .bits = 8, .layers = nolayer, .code = DSE_ERR_CONFIG,
          .msg = "a layer density names 'nope', which is no layer of t" },
        { .id = "no-weights", .density = 0.5, .bits = 8, .layers = noweights, .code = DSE_ERR_CONFIG,
          .msg = "a layer density names 'pool1', a maxpool layer; only conv, fc and deconv weights are pruned" },
        { .id = "layer-density", .density = 0.5, .bits = 8, .layers = badd, .code = DSE_ERR_CONFIG,
          .msg = "layer 'conv1' density 2 is out of range; expected 0 < density <= 1" },
        { .id = "out-is-ckpt", .density = 0.5, .bits = 8, .same_out = 1, .code = DSE_ERR_CONFIG,
          .msg = "the output is the checkpoint" },
        { .id = "other-net", .density = 0.5, .bits = 8, .other = 1, .code = DSE_ERR_IO,
          .msg = "checkpoint of another network" },
    };
    for (size_t c = 0; c < DSE_ARRAY_LEN(cases); c++) {
        struct dse_compress_opts o = base;
        struct dse_compress_result r;
        struct dse_err err = { 0 };
        o.density = cases[c].density, o.bits = cases[c].bits, o.layers = cases[c].layers;
        o.n_layers = cases[c].layers ? 1 : 0;
        enum dse_status st = dse_compress_run(cases[c].other ? &other : &net, ckpt, &o,
                                              cases[c].same_out ? ckpt : out, &r, &err);
        CHECK_INT_EQ(st, cases[c].code);
        if (!strstr(err.msg, cases[c].msg)) {
            CHECK(!"message");
            fprintf(stderr, "  case %s: '%s'\n", cases[c].id, err.msg);
        }
    }
    CHECK(access(out, F_OK) != 0);
    char work[320]; /* a refused run leaves no work folder either */
    snprintf(work, sizeof work, "%s.work", out);
    CHECK(access(work, F_OK) != 0);
    dse_net_deinit(&net);
    dse_net_deinit(&other);
    tmpdir_remove(dir);
}

static void no_hook(void *arg, struct dse_model *m) { (void)arg, (void)m; }

/* The gradient hook runs on the CPU only: a device with one is refused before any work. */
static void test_hook_device(void) {
    struct dse_net net;
    struct dse_mp mp = tiny_fire_mp();
    dse_net_init(&net, "t", 1, 1, 1);
    CHECK_OK(dse_mp_build(&mp, &net, NULL));
    struct dse_train_opts o;
    dse_train_opts_default(&o);
    o.dev.device.kind = DSE_DEVICE_CUDA, o.grad_hook = no_hook;
    struct dse_train_result *r = malloc(sizeof *r);
    struct dse_err err = { 0 };
    CHECK_INT_EQ(dse_train_run(&net, &o, r, &err), DSE_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "runs on the CPU only") != NULL);
    free(r);
    dse_net_deinit(&net);
}

/* The .dsez file's cases: tests/test_engine_compress_dsez.c. */
void test_dsez_roundtrip(void);
void test_dsez_fillers(void);
void test_dsez_damage(void);
void test_dsez_other_net(void);

static const struct check_case cases[] = {
    { "compress-hook-device", test_hook_device },
    { "compress-prune",  test_prune },
    { "compress-kmeans", test_kmeans },
    { "compress-run",    test_run },
    { "compress-bad",    test_bad_settings },
    { "dsez-roundtrip",  test_dsez_roundtrip },
    { "dsez-fillers",    test_dsez_fillers },
    { "dsez-damage",     test_dsez_damage },
    { "dsez-other-net",  test_dsez_other_net },
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }
