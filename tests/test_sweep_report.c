/* test_sweep_report.c: test_sweep's cases on what a sweep reports: a diverged candidate,
 * dse report and dse status on a finished sweep, and dse export of its candidates. */
#include "tests/sweep_util.h"

/* A candidate that diverges: status diverged with the epoch and iteration, its file is
 * strict JSON (no NaN), and the report and status read it. */
void test_diverge(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char dir[200], log[260];
    snprintf(dir, sizeof dir, "%s/diverge", scratch());
    snprintf(log, sizeof log, "%s.log", dir);
    const char *args[] = { "sweep", DIVERGE, "--out", dir, "--workers", "1", "--conv", "gemm_batch", NULL };
    CHECK_INT_EQ(run_dse(log, args, 120), 0);
    struct recs x;
    recs_load(dir, &x);
    CHECK_INT_EQ(x.n, 1);
    if (x.n == 1) {
        CHECK_INT_EQ(x.r[0].status, DSE_REC_DIVERGED);
        CHECK(x.r[0].diverged_epoch >= 1);
        char path[400], *text = NULL;
        snprintf(path, sizeof path, "%s/candidates/%s.json", dir, x.r[0].id);
        struct dse_json_doc *doc = NULL;
        CHECK_OK(dse_json_load(path, &doc, NULL)); /* strict: NaN would not parse */
        dse_json_free(doc);
        CHECK_OK(dse_fs_read(path, &text, NULL, NULL));
        CHECK(text && !strstr(text, "nan") && !strstr(text, "NaN") && !strstr(text, "inf"));
        free(text);
    }
    recs_free(&x);
    const char *rep[] = { "report", dir, NULL };
    CHECK_INT_EQ(run_dse(log, rep, 60), 0);
    char *text = NULL;
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "diverged in epoch"));
    free(text);
}

/* What dse report and dse status say of a finished successive-halving sweep: 4
 * candidates, eta 2: two stop at rung 0, one at rung 1, 7 epochs of 12. */
void test_report(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *ref = reference(1);
    char log[300], *text = NULL;
    snprintf(log, sizeof log, "%s/report.log", scratch());
    unlink(log);
    const char *rep[] = { "report", ref, NULL };
    CHECK_INT_EQ(run_dse(log, rep, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "# Sweep sweep_tiny: 4 candidates (0 pruned, 0 pending, 1 done, 3 stopped)"));
    CHECK(text && strstr(text, "3 stopped"));
    CHECK(text && strstr(text, "stopped at rung 0 (epoch 1)"));
    CHECK(text && strstr(text, "stopped at rung 1 (epoch 2)"));
    CHECK(text && strstr(text, "## Training"));
    CHECK(text && strstr(text, "Epochs trained: 7; full training of every candidate: 12 (early stopping saved 5 "
                              "epochs, 42%)"));
    free(text);
    unlink(log);
    /* the finished sweep drew its figures: top-1 against size and against FLOPs, the curves */
    static const char *const figs[] = { "frontier.svg", "frontier_flops.svg", "curves.svg" };
    for (int k = 0; k < DSE_ARRAY_LEN(figs); k++) {
        char fig[300];
        snprintf(fig, sizeof fig, "%s/%s", ref, figs[k]);
        CHECK(access(fig, R_OK) == 0);
    }
    snprintf(log, sizeof log, "%s/frontier_flops.svg", ref);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "frontier (max top1, min FLOPs)"));
    free(text);
    snprintf(log, sizeof log, "%s/report.log", scratch());
    const char *st[] = { "status", ref, NULL };
    CHECK_INT_EQ(run_dse(log, st, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "Finished 4 of 4: 1 done, 3 stopped (rung 0 at epoch 1: 2, rung 1 at epoch 2: 1)"));
    CHECK(text && strstr(text, "early stopping saved 5 epochs, 42%"));
    free(text);
}

/* dse export from a trained sweep (issue #14): the best candidate to ONNX and to Caffe,
 * Caffe's files read back by dse import and evaluated to the top-1 the sweep recorded; a
 * stopped candidate by id; an id not in the sweep, a checkpoint of another network and a
 * truncated checkpoint refused with exit 2 and the file named. */
void test_export(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    const char *ref = reference(1);
    char log[300], onnx[300], caffe[300], model[320], proto[320], ckpt[320], other[400], trunc[320];
    char *text = NULL, done_id[DSE_ID_SIZE] = "", stopped_id[DSE_ID_SIZE] = "";
    float done_top1 = 0;
    struct recs x;
    recs_load(ref, &x);
    for (int i = 0; i < x.n; i++) {
        if (x.r[i].status == DSE_REC_DONE) snprintf(done_id, sizeof done_id, "%s", x.r[i].id),
                                           done_top1 = x.r[i].ep[x.r[i].n_epochs - 1].top1;
        if (x.r[i].status == DSE_REC_STOPPED && !stopped_id[0]) snprintf(stopped_id, sizeof stopped_id, "%s", x.r[i].id);
    }
    CHECK(done_id[0] && stopped_id[0]);
    snprintf(log, sizeof log, "%s/export.log", scratch());
    snprintf(onnx, sizeof onnx, "%s/best.onnx", scratch());
    snprintf(caffe, sizeof caffe, "%s/best", scratch());
    snprintf(model, sizeof model, "%s.caffemodel", caffe);
    snprintf(proto, sizeof proto, "%s.prototxt", caffe);
    snprintf(ckpt, sizeof ckpt, "%s/imported.ckpt", scratch());
    const char *a1[] = { "export", ref, "--best", "--out", onnx, NULL };
    CHECK_INT_EQ(run_dse(log, a1, 60), 0);
    CHECK(access(onnx, R_OK) == 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, done_id));
    free(text), text = NULL;
    const char *a2[] = { "export", ref, "--best", "--max-mb", "1000", "--format", "caffe", "--out", caffe, NULL };
    CHECK_INT_EQ(run_dse(log, a2, 60), 0);
    CHECK(access(model, R_OK) == 0 && access(proto, R_OK) == 0);
    /* the normalization the sweep trained with, as dse export printed it */
    char best_ckpt[400], mean[64], std[64];
    struct dse_ckpt_info info;
    snprintf(best_ckpt, sizeof best_ckpt, "%s/checkpoints/%s/epoch-%d.ckpt", ref, done_id, 3);
    CHECK_OK(dse_checkpoint_info(best_ckpt, &info, NULL));
    free(info.class_names);
    CHECK_INT_EQ(info.norm.c, 1);
    snprintf(mean, sizeof mean, "%.9g", (double)info.norm.mean[0]);
    snprintf(std, sizeof std, "%.9g", (double)info.norm.std[0]);
    const char *a3[] = { "import", model, proto, "--out", ckpt, "--mean", mean, "--std", std, NULL };
    CHECK_INT_EQ(run_dse(log, a3, 60), 0);
    /* the imported weights evaluate to the sweep's recorded top-1 on the same 200 test images */
    const char *a4[] = { "eval", proto, "--checkpoint", ckpt, "--data", "fashion-mnist", "--limit-test", "200", "--json",
                         NULL };
    CHECK_INT_EQ(run_dse(log, a4, 60), 0);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    char want[64];
    snprintf(want, sizeof want, "\"top1\": %.6f", (double)done_top1);
    CHECK(text && strstr(text, want));
    if (text && !strstr(text, want)) fprintf(stderr, "expected %s in: %s\n", want, text);
    free(text), text = NULL;
    /* the ONNX file in onnxruntime over the same 200 test images: the sweep's top-1 */
    if (system("/usr/bin/python3 -c 'import onnxruntime' 2>/dev/null") != 0) {
        printf("SKIP (part): onnxruntime is not installed for /usr/bin/python3 (tools/install-test-tools)\n");
    } else {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/onnx_idx_eval.py %s "
                 "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz "
                 "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz 200 > %s 2>&1", onnx, log);
        CHECK_INT_EQ(system(cmd), 0);
        snprintf(want, sizeof want, "top1=%.6f", (double)done_top1);
        CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
        CHECK(text && strstr(text, want));
        if (text && !strstr(text, want)) fprintf(stderr, "expected %s in: %s\n", want, text);
        free(text), text = NULL;
    }
    const char *a5[] = { "export", ref, "--id", stopped_id, "--out", onnx, NULL };
    CHECK_INT_EQ(run_dse(log, a5, 60), 0);
    /* bad inputs */
    const char *b1[] = { "export", ref, "--id", "c0123456789abcdef", NULL };
    CHECK_INT_EQ(run_dse(log, b1, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "no candidate 'c0123456789abcdef' in this sweep"));
    free(text), text = NULL;
    const char *b2[] = { "export", ref, "--best", "--max-mb", "0.0001", NULL };
    CHECK_INT_EQ(run_dse(log, b2, 60), 2);
    snprintf(other, sizeof other, "%s/checkpoints/%s/epoch-1.ckpt", ref, stopped_id);
    const char *b3[] = { "export", proto, "--checkpoint", other, NULL };
    CHECK_INT_EQ(run_dse(log, b3, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, "checkpoint of another network"));
    free(text), text = NULL;
    char *bytes = NULL;
    size_t len = 0;
    snprintf(trunc, sizeof trunc, "%s/trunc.ckpt", scratch());
    CHECK_OK(dse_fs_read(ckpt, &bytes, &len, NULL));
    if (bytes) CHECK_OK(dse_fs_write_atomic(trunc, bytes, len / 2, NULL));
    free(bytes);
    const char *b4[] = { "export", proto, "--checkpoint", trunc, NULL };
    CHECK_INT_EQ(run_dse(log, b4, 60), 2);
    CHECK_OK(dse_fs_read(log, &text, NULL, NULL));
    CHECK(text && strstr(text, trunc));
    free(text);
    recs_free(&x);
}
