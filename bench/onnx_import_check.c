/* onnx_import_check.c: an ONNX model imported by dse import (dse_import_onnx_run), run in dse's
 * engine in eval mode on random images, its inputs, logits and probabilities written for
 * bench/onnx_import_check.sh to set beside onnxruntime's (issue #34 item 3). Not a test
 * (docs/conventions.md#benchmarks).
 *
 * Usage: onnx_import_check MODEL.onnx DIR [--images N] [--threads T]
 * Writes DIR/import.cfg and DIR/import.ckpt (the import), DIR/inputs.f32 (N images as
 * float32 [N, C, H, W], what the ONNX model takes: x; dse gets (x - mean) / std where the
 * import recorded a normalization), DIR/logits.f32 (the loss layer's input, [N, K]) and
 * DIR/probs.f32 (dse's softmax of them, [N, K]). Prints
 *   name=import_run model=... images=N classes=K c=C h=H w=W forward_s=...
 * Images: uniform in [-2, 2) (PCG32 seed 42), about the range of normalized ImageNet pixels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pcg32.h"
#include "bench/bench.h"
#include "data/data.h"
#include "dse/exportcmd.h"
#include "engine/model.h"
#include "engine/train.h"
#include "netfile/netfile.h"

static int write_raw(const char *path, const void *p, size_t bytes) {
    FILE *f = fopen(path, "wb");
    if (!f) return fprintf(stderr, "%s: cannot write\n", path), 1;
    const int bad = fwrite(p, 1, bytes, f) != bytes;
    return (fclose(f) != 0 || bad) ? (fprintf(stderr, "%s: write failed\n", path), 1) : 0;
}

static int fail(const struct dse_err *err) {
    fprintf(stderr, "%s: %s\n", err->file[0] ? err->file : "onnx_import_check", err->msg);
    return 2;
}

int main(int argc, char **argv) {
    int images = 8, threads = 2;
    if (argc < 3) {
        fprintf(stderr, "usage: onnx_import_check MODEL.onnx DIR [--images N] [--threads T]\n");
        return 2;
    }
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--images")) images = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
        else return fprintf(stderr, "unexpected argument %s\n", argv[i]), 2;
    }
    if (images < 1 || threads < 1) return fprintf(stderr, "--images and --threads take N >= 1\n"), 2;
    const char *model = argv[1], *dir = argv[2];
    char ckpt[1024], cfg[1024], path[1024];
    struct dse_err err = { 0 };
    struct dse_ckpt_info info = { 0 };
    struct dse_net net;
    struct dse_model *m = NULL;
    int next;
    int64_t it;
    snprintf(ckpt, sizeof ckpt, "%s/import.ckpt", dir);
    snprintf(cfg, sizeof cfg, "%s/import.cfg", dir);
    if (dse_import_onnx_run(model, NULL, NULL, NULL, ckpt, cfg, stderr, &err)) return fail(&err);
    if (dse_checkpoint_info(ckpt, &info, &err) || dse_netfile_load(cfg, NULL, &net, &err)) return fail(&err);
    struct dse_model_opts mo = { .batch = images, .threads = threads, .seed = 3, .init = DSE_INIT_MSRA,
                                 .inference = 1 };
    if (dse_model_new(&net, &mo, &m, &err)) return fail(&err);
    dse_net_deinit(&net);
    if (dse_checkpoint_load(m, ckpt, &next, &it, &err)) return fail(&err);
    dse_model_set_training(m, 0);

    const int64_t per = dse_tensor_count(&m->input) / m->batch, hw = per / m->net.in_c;
    const struct dse_tensor *lt = m->nodes[m->loss].in[0];
    const int K = lt->c * lt->h * lt->w;
    float *x = malloc(sizeof *x * (size_t)(per * images)), *xn = malloc(sizeof *xn * (size_t)(per * images));
    float *logits = malloc(sizeof *logits * (size_t)images * (size_t)K), loss;
    int *labels = calloc((size_t)images, sizeof *labels);
    if (!x || !xn || !logits || !labels) return fprintf(stderr, "out of memory\n"), 2;
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 42, 7);
    for (int64_t i = 0; i < per * images; i++) {
        const int ch = (int)(i % per / hw);
        x[i] = ((float)dse_pcg32_next(&r) / 4294967296.0f - 0.5f) * 4.0f;
        xn[i] = info.norm.c ? (x[i] - info.norm.mean[ch]) / info.norm.std[ch] : x[i];
    }
    const double t0 = bench_now_ms();
    if (dse_model_forward(m, xn, labels, &loss, &err)) return fail(&err);
    const double dt = (bench_now_ms() - t0) / 1000.0;
    for (int b = 0; b < images; b++)
        memcpy(logits + (size_t)b * K, lt->data + b * lt->stride_n, sizeof *logits * (size_t)K);
    int rc = 0;
    snprintf(path, sizeof path, "%s/inputs.f32", dir);
    rc |= write_raw(path, x, sizeof *x * (size_t)(per * images));
    snprintf(path, sizeof path, "%s/logits.f32", dir);
    rc |= write_raw(path, logits, sizeof *logits * (size_t)images * K);
    snprintf(path, sizeof path, "%s/probs.f32", dir);
    rc |= write_raw(path, dse_model_probs(m), sizeof(float) * (size_t)images * K);
    printf("name=import_run model=%s images=%d classes=%d c=%d h=%d w=%d forward_s=%.2f\n", model, images, K,
           m->net.in_c, m->input.h, m->input.w, dt);
    free(x), free(xn), free(logits), free(labels), free(info.class_names);
    dse_model_free(m);
    return rc ? 2 : 0;
}
