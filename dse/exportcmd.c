/* exportcmd.c: dse export and dse import (exportcmd.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "dse/exportcmd.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "dse/report.h"
#include "sweep/sweep.h"
#include "netfile/netfile.h"
#include "engine/compress.h"
#include "engine/train.h"

/* What an export starts from, once resolved. */
struct source {
    struct dse_net       net;
    char                 checkpoint[4200];
    char                 name[DSE_NAME_MAX];  /* default output name */
    char                 id[DSE_ID_SIZE];     /* sweep candidates */
    char                *metaparams;          /* JSON object, malloc'd; NULL if none */
    double               top1;                /* < 0: unknown */
};

static int file_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* The newest checkpoint of a candidate: epoch-<epochs_done>.ckpt, or the newest below. */
static enum dse_status sweep_checkpoint(const char *dir, const struct dse_rec *r, char *out, size_t size,
                                        struct dse_err *err) {
    for (int e = r->n_epochs; e >= 1; e--) {
        snprintf(out, size, "%s/checkpoints/%s/epoch-%d.ckpt", dir, r->id, e);
        if (file_exists(out)) return DSE_OK;
    }
    return dse_err_set(err, DSE_ERR_IO, dir, 0, "candidate %s has no checkpoint under %s/checkpoints/%s/", r->id, dir,
                       r->id);
}

static enum dse_status from_sweep(const struct dse_export_req *q, struct source *src, FILE *log, struct dse_err *err) {
    const char *dir = q->sweep_dir;
    char path[4200], id[DSE_ID_SIZE];
    struct dse_space s;
    struct dse_rec r;
    enum dse_status st;
    if (q->best) {
        struct dse_report_best best;
        if ((st = dse_report_best(dir, q->max_mb, &best, err))) return st;
        snprintf(id, sizeof id, "%.*s", DSE_ID_SIZE - 1, best.id);
    } else {
        snprintf(id, sizeof id, "%s", q->id);
    }
    snprintf(path, sizeof path, "%s/candidates/%s.json", dir, id);
    if (!file_exists(path)) {
        snprintf(path, sizeof path, "%s/sweep.json", dir);
        if (!file_exists(path))
            return dse_err_set(err, DSE_ERR_IO, dir, 0, "not a sweep directory (no sweep.json in it)");
        return dse_err_set(err, DSE_ERR_CONFIG, dir, 0, "no candidate '%s' in this sweep; 'dse report %s' lists "
                                                        "the candidates and their ids", id, dir);
    }
    dse_rec_init(&r);
    if ((st = dse_rec_read_path(path, &r, err))) return dse_rec_deinit(&r), st;
    if (r.status != DSE_REC_DONE && r.status != DSE_REC_STOPPED) {
        st = dse_err_set(err, DSE_ERR_CONFIG, path, 0, "candidate %s is %s: only trained candidates (done, or stopped "
                                                       "at a rung) have weights to export", id,
                         dse_rec_status_str(r.status));
        dse_rec_deinit(&r);
        return st;
    }
    snprintf(path, sizeof path, "%s/space.cfg", dir);
    if ((st = dse_space_load(path, &s, err))) return dse_rec_deinit(&r), st;
    struct dse_mp mp;
    char again[DSE_ID_SIZE];
    if (r.index < 0 || (!s.count_overflow && (uint64_t)r.index >= s.count)) {
        st = dse_err_set(err, DSE_ERR_CONFIG, dir, 0, "candidate %s has grid index %lld, outside its space", id,
                         (long long)r.index);
    } else {
        dse_space_candidate(&s, (uint64_t)r.index, &mp);
        dse_space_rep_id(&mp, r.replicate, again);
        if (strcmp(again, id))
            st = dse_err_set(err, DSE_ERR_CONFIG, dir, 0, "candidate %s's grid index %lld is %s in space.cfg: the "
                                                          "sweep directory is inconsistent", id, (long long)r.index, again);
    }
    if (!st) {
        dse_net_init(&src->net, s.name, 1, 1, 1);
        st = dse_space_build(&s, &mp, &src->net, err);
        if (st) dse_net_deinit(&src->net);
    }
    if (!st) st = sweep_checkpoint(dir, &r, src->checkpoint, sizeof src->checkpoint, err);
    if (!st) {
        snprintf(src->net.name, sizeof src->net.name, "%.70s_%s", s.name, id);
        snprintf(src->name, sizeof src->name, "%s", id);
        snprintf(src->id, sizeof src->id, "%s", id);
        src->metaparams = dse_sweep_candidate_metaparams(&s, (uint64_t)r.index);
        src->top1 = isfinite(dse_rec_top1(&r)) ? dse_rec_top1(&r) : -1;
        fprintf(log, "dse export: %s: candidate %s (grid index %lld, %s, top-1 %.4f, %.3f MB), %s\n", dir, id,
                (long long)r.index, dse_rec_status_str(r.status), dse_rec_top1(&r), (double)r.model_bytes / 1e6,
                src->checkpoint);
    } else if (src->net.layers) {
        dse_net_deinit(&src->net);
    }
    dse_space_free(&s);
    dse_rec_deinit(&r);
    return st;
}

static enum dse_status from_file(const struct dse_export_req *q, struct source *src, struct dse_err *err) {
    struct dse_input_shape fit = q->fit;
    struct dse_ckpt_info   info;
    enum dse_status        st = dse_checkpoint_info(q->checkpoint, &info, err);
    if (st) return st;
    free(info.class_names);
    dse_netfile_fit_checkpoint(&fit, &info); /* NET as it was trained, unless --input/--classes say */
    if ((st = dse_netfile_load(q->net_path, &fit, &src->net, err))) return st;
    snprintf(src->checkpoint, sizeof src->checkpoint, "%s", q->checkpoint);
    const char *base = strrchr(q->net_path, '/');
    base = base ? base + 1 : q->net_path;
    snprintf(src->name, sizeof src->name, "%.*s", (int)strcspn(base, "."), base);
    src->top1 = -1;
    return DSE_OK;
}

/* The deploy network Caffe loads: the model's own (loss attached, accuracy dropped) with
 * the loss made a Softmax named "prob". */
static enum dse_status deploy_prototxt(const struct dse_model *m, const char *path, struct dse_err *err) {
    struct dse_net net;
    enum dse_status st = dse_net_copy(&net, &m->net, err);
    if (st) return st;
    struct dse_layer *loss = &net.layers[m->loss];
    loss->type = DSE_LAYER_SOFTMAX;
    snprintf(loss->name, sizeof loss->name, "prob");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    if (!st) st = dse_net_infer(&net, NULL, err);
    if (!st) st = dse_prototxt_write(f, &net, err);
    if (f) fclose(f);
    if (!st) st = dse_fs_write_atomic(path, buf, len, err);
    free(buf);
    dse_net_deinit(&net);
    return st;
}

static int same_file(const char *a, const char *b);

/* The model's weights as a float checkpoint at path (--format ckpt), with what info records of
 * the data (its normalization, classes, evaluation box): dse eval and predict of it give what
 * they give of the checkpoint read, a compressed model's decoded values included. Next epoch
 * 0: dse train --resume fine-tunes it from the start of a schedule. */
static enum dse_status ckpt_save(const struct dse_model *m, const struct dse_ckpt_info *info, const char *from,
                                 const char *path, struct dse_err *err) {
    if (same_file(path, from))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "--out %s is the checkpoint the weights come from; name "
                           "another file", path);
    struct dse_ckpt_meta meta = { .seed = info->seed, .norm = info->norm, .classes = info->classes,
                                  .class_names = (const char(*)[64])info->class_names,
                                  .eval_center = info->eval_center };
    snprintf(meta.data, sizeof meta.data, "%s", info->data);
    return dse_checkpoint_save(m, 0, 0, &meta, path, err);
}

/* What a compressed model's ONNX weighs beside its float export's, which is made in memory to
 * count it. */
static void log_compressed(const struct dse_model *m, const struct dse_export_meta *meta, const char *path,
                           FILE *log) {
    struct dse_export_meta plain = *meta;
    struct dse_err err = { 0 };
    struct stat sb;
    uint8_t *buf;
    size_t len;
    int shared = 0;
    plain.dsez = NULL;
    for (int k = 0; k < meta->dsez->n; k++) shared += meta->dsez->t[k].bits > 0;
    if (stat(path, &sb) || dse_onnx_write(m, &plain, &buf, &len, &err)) return;
    free(buf);
    fprintf(log, "  %d weight-shared tensors as codebook indices (uint8, or uint16 above 8 bits) and codebooks "
                 "through Gather: %lld bytes, against %zu as float32 (%.2fx smaller); %s is %lld bytes\n", shared,
            (long long)sb.st_size, len, (double)len / (double)sb.st_size, meta->checkpoint,
            (long long)meta->dsez->file_bytes);
}

enum dse_status dse_export_run(const struct dse_export_req *q, FILE *log, struct dse_err *err) {
    struct source src = { .top1 = -1 };
    struct dse_dsez z = { 0 };
    struct dse_ckpt_info info = { 0 };
    struct dse_model *m = NULL;
    enum dse_status st = q->sweep_dir ? from_sweep(q, &src, log, err) : from_file(q, &src, err);
    if (st) return st;
    char path[4200], proto[4200];
    int next;
    int64_t it;
    struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA, .inference = 1 };
    if ((st = dse_checkpoint_info(src.checkpoint, &info, err)) || (st = dse_model_new(&src.net, &mo, &m, err)) ||
        (st = dse_checkpoint_load(m, src.checkpoint, &next, &it, err)))
        goto out;
    if (q->format == DSE_EXPORT_ONNX) {
        snprintf(path, sizeof path, "%.4000s", q->out ? q->out : src.name);
        if (!q->out) snprintf(path + strlen(path), sizeof path - strlen(path), ".onnx");
        struct dse_export_meta meta = {
            .candidate = src.id, .metaparams = src.metaparams, .data = info.data,
            .norm = info.norm.c == m->net.in_c ? &info.norm : NULL, .classes = info.classes,
            .class_names = (const char (*)[64])info.class_names, .top1 = src.top1, .checkpoint = src.checkpoint,
        };
        if (dse_dsez_is(src.checkpoint)) { /* keep its weight sharing: indices, codebooks, Gather */
            if ((st = dse_dsez_read(src.checkpoint, &z, err))) goto out;
            meta.dsez = &z;
        }
        if ((st = dse_onnx_save(m, &meta, path, err))) goto out;
        const int K = m->nodes[m->loss].in[0]->c;
        fprintf(log, "dse export: wrote %s (ONNX opset %d): input 'data' float [N, %d, %d, %d]%s, output 'prob' "
                     "[N, %d]\n", path, DSE_ONNX_OPSET, m->net.in_c, m->net.in_h, m->net.in_w,
                meta.norm ? " = pixel / 255, normalized in the model" : "", K);
        if (meta.dsez) log_compressed(m, &meta, path, log);
        fprintf(log, "next: python3 -c \"import onnxruntime as ort; s = ort.InferenceSession('%s'); "
                     "print(s.get_inputs()[0].shape)\"\n", path);
    } else if (q->format == DSE_EXPORT_CKPT) {
        snprintf(path, sizeof path, "%.4000s%s", q->out ? q->out : src.name, q->out ? "" : ".ckpt");
        if ((st = ckpt_save(m, &info, src.checkpoint, path, err))) goto out;
        fprintf(log, "dse export: wrote %s: the %d learned tensors of %s, float32, as dse eval loaded them\n", path,
                m->n_params, src.checkpoint);
        if (q->net_path) fprintf(log, "next: dse eval %s --checkpoint %s\n", q->net_path, path);
    } else {
        /* OUT, OUT.caffemodel or OUT.prototxt name the pair */
        snprintf(path, sizeof path, "%.4000s", q->out ? q->out : src.name);
        size_t n = strlen(path);
        if (n > 11 && !strcmp(path + n - 11, ".caffemodel")) path[n - 11] = '\0';
        else if (n > 9 && !strcmp(path + n - 9, ".prototxt")) path[n - 9] = '\0';
        snprintf(proto, sizeof proto, "%.4000s.prototxt", path);
        snprintf(path + strlen(path), sizeof path - strlen(path), ".caffemodel");
        if ((st = deploy_prototxt(m, proto, err)) || (st = dse_caffemodel_save(m, path, err))) goto out;
        fprintf(log, "dse export: wrote %s (deploy network) and %s (weights)\n", proto, path);
        char mean[256] = "", std[256] = "";
        for (int c = 0; c < info.norm.c; c++) {
            snprintf(mean + strlen(mean), sizeof mean - strlen(mean), "%s%.9g", c ? "," : "", (double)info.norm.mean[c]);
            snprintf(std + strlen(std), sizeof std - strlen(std), "%s%.9g", c ? "," : "", (double)info.norm.std[c]);
        }
        if (info.norm.c)
            fprintf(log, "  Caffe's files have no place for the input normalization: feed (pixel / 255 - mean) / std "
                         "with mean %s and std %s (RGB order)\n", mean, std);
        fprintf(log, "next: dse import %s %s --out roundtrip.ckpt%s%s%s%s  (back into a dse checkpoint)\n", path, proto,
                info.norm.c ? " --mean " : "", mean, info.norm.c ? " --std " : "", std);
    }
out:
    dse_dsez_free(&z);
    dse_model_free(m);
    free(info.class_names);
    free(src.metaparams);
    dse_net_deinit(&src.net);
    return st;
}

/* The class names of path, one a line (dse import --classes-file), into *names (malloc'd,
 * want of them); refused with the line at fault. A line may end in CR LF. */
static enum dse_status classes_read(const char *path, int want, char (**names)[DSE_PACK_CLASS_MAX],
                                    struct dse_err *err) {
    char  *text;
    size_t len;
    int    n = 0;
    enum dse_status st;
    *names = NULL;
    if ((st = dse_fs_check_input(path, err)) || (st = dse_fs_read(path, &text, &len, err))) return st;
    for (size_t i = 0; i < len; i++) n += text[i] == '\n';
    n += len && text[len - 1] != '\n'; /* a last line without its newline */
    if (n != want) {
        st = dse_err_set(err, DSE_ERR_CONFIG, path, 0, "%d class name%s (one a line); the network's classifier has "
                         "%d outputs", n, n == 1 ? "" : "s", want);
    } else if (!(*names = calloc((size_t)n, sizeof **names))) {
        st = dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
    }
    const char *p = text;
    for (int k = 0; k < n && !st; k++) {
        const char *e = memchr(p, '\n', len - (size_t)(p - text));
        size_t      l = e ? (size_t)(e - p) : len - (size_t)(p - text);
        if (l && p[l - 1] == '\r') l--;
        for (size_t i = 0; i < l && !st; i++)
            if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
                st = dse_err_set(err, DSE_ERR_CONFIG, path, k + 1, "a control byte (0x%02x) in a class name",
                                 (unsigned char)p[i]);
        if (!st && !l) st = dse_err_set(err, DSE_ERR_CONFIG, path, k + 1, "an empty class name");
        if (!st && l >= DSE_PACK_CLASS_MAX)
            st = dse_err_set(err, DSE_ERR_CONFIG, path, k + 1, "a class name of %zu bytes; at most %d", l,
                             DSE_PACK_CLASS_MAX - 1);
        if (!st) memcpy((*names)[k], p, l);
        p = e ? e + 1 : text + len;
    }
    free(text);
    if (st) free(*names), *names = NULL;
    return st;
}

enum dse_status dse_import_run(const char *caffemodel, const char *net_path, const struct dse_input_shape *fit,
                               const struct dse_data_norm *norm, const char *classes_file, const char *out, FILE *log,
                               struct dse_err *err) {
    struct dse_net net;
    struct dse_model *m = NULL;
    char (*names)[DSE_PACK_CLASS_MAX] = NULL;
    int skipped = 0;
    enum dse_status st = dse_netfile_load(net_path, fit, &net, err);
    if (st) return st;
    struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA, .inference = 1 };
    struct dse_ckpt_meta meta = { .data = "" };
    if (norm && norm->c) {
        if (norm->c != net.in_c) {
            st = dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "--mean and --std give %d channels; %s takes %d", norm->c,
                             net_path, net.in_c);
            dse_net_deinit(&net);
            return st;
        }
        meta.norm = *norm;
    }
    if (!(st = dse_model_new(&net, &mo, &m, err)) && classes_file) {
        meta.classes = m->nodes[m->loss].in[0]->c; /* the classifier's outputs, as predict reads them */
        if (!(st = classes_read(classes_file, meta.classes, &names, err)))
            meta.class_names = (const char(*)[64])names;
    }
    if (!st && !(st = dse_caffemodel_load(m, caffemodel, &skipped, err)) &&
        !(st = dse_checkpoint_save(m, 0, 0, &meta, out, err))) {
        fprintf(log, "dse import: wrote %s: the weights of %s's %d learned tensors from %s", out, net_path, m->n_params,
                caffemodel);
        if (names) fprintf(log, ", and %d class names from %s", meta.classes, classes_file);
        if (skipped) fprintf(log, " (%d layers of the file are not in the network: skipped, as Caffe skips them)",
                             skipped);
        if (!meta.norm.c)
            fprintf(log, "\n  It records no input normalization (give --mean and --std): evaluation will use the "
                         "data's own statistics");
        fprintf(log, "\nnext: dse eval %s --checkpoint %s --data DATA\n", net_path, out);
    }
    free(names);
    dse_model_free(m);
    dse_net_deinit(&net);
    return st;
}

/* ---- dse import MODEL.onnx (issue #34 item 3; docs/onnx.md, "Import") ------------------ */

/* A flatten (a .cfg has none) where dropping it changes no value: read only by fc layers (an
 * fc reads its input's C, H, W in that order, as Flatten lays them out) or, its input already
 * 1x1, last (the loss reads the classes): PyTorch's torch.flatten before a Linear, dse export's
 * Flatten before Gemm and Softmax. */
static int flatten_elided(const struct dse_net *net, int i) {
    const struct dse_layer *l = &net->layers[i];
    if (l->type != DSE_LAYER_FLATTEN) return 0;
    int readers = 0;
    for (int j = i + 1; j < net->n_layers; j++)
        for (int k = 0; k < net->layers[j].n_inputs; k++) {
            if (net->layers[j].inputs[k] != i) continue;
            const int softmax_last = net->layers[j].type == DSE_LAYER_SOFTMAX && j == net->n_layers - 1;
            if (net->layers[j].type != DSE_LAYER_FC && !(softmax_last && l->in_h == 1 && l->in_w == 1)) return 0;
            readers++;
        }
    return readers || (i == net->n_layers - 1 && l->in_h == 1 && l->in_w == 1);
}

/* The network the engine runs of the one read from ONNX: every layer needs an engine op
 * (engine/ops.def's layer column), all that lack one named in one error; flattens that change
 * no value are dropped (their readers read their input), so that the network has a .cfg form. */
static enum dse_status engine_net(const struct dse_net *src, const char *path, struct dse_net *dst,
                                  struct dse_err *err) {
    char list[768] = "";
    int missing = 0, *map = malloc(sizeof *map * ((size_t)src->n_layers + 1));
    enum dse_status st = DSE_OK;
    if (!map) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; i < src->n_layers; i++) {
        const struct dse_layer *l = &src->layers[i];
        enum dse_op op;
        if (flatten_elided(src, i) || (l->type == DSE_LAYER_SOFTMAX && i == src->n_layers - 1)) continue;
        if (dse_op_from_layer(l, &op, NULL) && missing++ < 12)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s' (%s)", missing > 1 ? ", " : "",
                     l->name, dse_layer_type_str(l->type));
    }
    if (missing) {
        char ops[256] = "";
        static const enum dse_layer_type runs[] = {
#define DSE_OP(e, name, layer, min_in, max_in, weights) DSE_LAYER_##layer,
#include "engine/ops.def"
#undef DSE_OP
        };
        for (int o = 0; o < DSE_ARRAY_LEN(runs); o++)
            snprintf(ops + strlen(ops), sizeof ops - strlen(ops), "%s%s", o ? ", " : "", dse_layer_type_str(runs[o]));
        st = dse_err_set(err, DSE_ERR_UNSUPPORTED, path, 0, "%d node%s %s no engine op, so dse can analyze this model "
                         "but not run it: %s%s; the engine runs %s", missing, missing == 1 ? "" : "s",
                         missing == 1 ? "has" : "have", list, missing > 12 ? ", ..." : "", ops);
        free(map);
        return st;
    }
    dse_net_init(dst, src->name, src->in_c, src->in_h, src->in_w);
    for (int i = 0; i < src->n_layers && !st; i++) {
        struct dse_layer l = src->layers[i];
        if (flatten_elided(src, i)) {
            map[i] = l.inputs[0] >= 0 ? map[l.inputs[0]] : l.inputs[0];
            continue;
        }
        for (int k = 0; k < l.n_inputs; k++) l.inputs[k] = l.inputs[k] >= 0 ? map[l.inputs[k]] : l.inputs[k];
        if (!(st = dse_net_add(dst, &l, err))) map[i] = dst->n_layers - 1;
    }
    free(map);
    return st ? st : dse_net_infer(dst, path, err);
}

/* The class names dse export wrote into an ONNX model's metadata ("class_names", one a line)
 * into *names and meta, where there is one a classifier output, each as a class name may be
 * (as classes_read takes them); else none, and the checkpoint records none. */
static enum dse_status model_class_names(const char *onnx, const struct dse_model *m, struct dse_ckpt_meta *meta,
                                         char (**names)[DSE_PACK_CLASS_MAX], struct dse_err *err) {
    char *text;
    enum dse_status st = dse_onnx_metadata(onnx, "class_names", &text, err);
    if (st || !text) return st;
    const int want = m->nodes[m->loss].in[0]->c;
    int n = 1, ok = 1;
    for (const char *c = text; *c; c++) n += *c == '\n';
    if (n == want && (*names = calloc((size_t)n, sizeof **names))) {
        const char *p = text;
        for (int k = 0; k < n && ok; k++) {
            const size_t l = strcspn(p, "\n");
            ok = l > 0 && l < DSE_PACK_CLASS_MAX;
            for (size_t i = 0; i < l && ok; i++) ok = (unsigned char)p[i] >= 0x20 && p[i] != 0x7f;
            if (ok) memcpy((*names)[k], p, l);
            p += l + (p[l] != '\0');
        }
        if (ok) meta->classes = n, meta->class_names = (const char(*)[64])*names;
        else free(*names), *names = NULL;
    }
    free(text);
    return DSE_OK;
}

/* net as a .cfg at path, atomically. */
static enum dse_status cfg_save(const struct dse_net *net, const char *path, struct dse_err *err) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    enum dse_status st = dse_netcfg_write(f, net, err);
    if (fclose(f) && !st) st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    if (!st) st = dse_fs_write_atomic(path, buf, len, err);
    free(buf);
    return st;
}

/* path with its folder resolved (realpath of the folder, then the name): two spellings of a
 * file that does not exist yet (x.cfg, ./x.cfg) come out alike. 0 where the folder cannot
 * be resolved or the result does not fit. */
static int canonical(const char *path, char *out, size_t cap) {
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX], real[PATH_MAX];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) >= sizeof dir) return 0;
    else memcpy(dir, path, (size_t)(slash - path)), dir[slash - path] = '\0';
    if (!realpath(dir, real)) return 0;
    const int n = snprintf(out, cap, "%s/%s", real, slash ? slash + 1 : path);
    return n > 0 && (size_t)n < cap;
}

/* Whether a and b name one file: the same path, the same resolved path, or the same device
 * and inode. */
static int same_file(const char *a, const char *b) {
    struct stat sa, sb;
    char ca[PATH_MAX + 256], cb[PATH_MAX + 256];
    if (!strcmp(a, b)) return 1;
    if (canonical(a, ca, sizeof ca) && canonical(b, cb, sizeof cb) && !strcmp(ca, cb)) return 1;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The hidden temporary name beside path (".name.import-PID.tmp" and ext, as base/fs.h's
 * writers name theirs; ext keeps the kind a reader knows files by) into out; 0 where it does
 * not fit. */
static int temp_beside(const char *path, const char *ext, char *out, size_t cap) {
    const char *slash = strrchr(path, '/');
    const int dir = slash ? (int)(slash - path + 1) : 0;
    const int n = snprintf(out, cap, "%.*s.%s.import-%ld.tmp%s", dir, path, path + dir, (long)getpid(), ext);
    return n > 0 && (size_t)n < cap;
}

/* Not a directory (a rename onto one fails after the other file was renamed). */
static enum dse_status not_a_dir(const char *path, const char *what, struct dse_err *err) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s %s is a folder; name a file", what, path);
    return DSE_OK;
}

enum dse_status dse_import_onnx_run(const char *onnx, const struct dse_input_shape *fit,
                                    const struct dse_data_norm *norm, const char *classes_file, const char *out,
                                    const char *net_out, FILE *log, struct dse_err *err) {
    struct dse_net read = { 0 }, net = { 0 }, back = { 0 };
    struct dse_model *m = NULL;
    char (*names)[DSE_PACK_CLASS_MAX] = NULL;
    struct dse_ckpt_meta meta = { .data = "" };
    struct dse_data_norm own = { 0 };
    int skipped = 0, refit = 0;
    char cfg_tmp[4200] = "", ckpt_tmp[4200] = "";
    /* both files written under temporary names beside them and renamed over them only once
     * everything is checked and written: a refused import leaves what was there */
    if (!temp_beside(net_out, ".cfg", cfg_tmp, sizeof cfg_tmp) || !temp_beside(out, "", ckpt_tmp, sizeof ckpt_tmp)) {
        cfg_tmp[0] = ckpt_tmp[0] = '\0';
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "--out %s or --net-out %s: a path too long", out, net_out);
    }
    if (same_file(onnx, out) || same_file(onnx, net_out) || same_file(out, net_out))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "--out %s and --net-out %s must be two files other than "
                           "the model %s", out, net_out, onnx);
    if (!dse_has_ext(net_out, ".cfg")) /* the prototxt writer splits batchnorm and scale */
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "--net-out %s: dse import writes the network as .cfg "
                           "(docs/network-format.md); name a .cfg file", net_out);
    enum dse_status st = dse_fs_check_target(out, err);
    if (!st) st = dse_fs_check_target(net_out, err);
    if (!st) st = not_a_dir(out, "--out", err);
    if (!st) st = not_a_dir(net_out, "--net-out", err);
    if (!st) st = dse_onnx_load(onnx, fit, &read, err);
    if (st) return st;
    if ((st = engine_net(&read, onnx, &net, err))) goto out;
    if (norm && norm->c && norm->c != net.in_c) {
        st = dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "--mean and --std give %d channels; %s takes %d", norm->c,
                         onnx, net.in_c);
        goto out;
    }
    /* the .cfg first, and the model from it read back: the checkpoint is of what dse will load */
    const struct dse_input_shape refit_to = { .classes = fit ? fit->classes : 0 };
    if ((st = cfg_save(&net, cfg_tmp, err))) {
        if (st == DSE_ERR_UNSUPPORTED) dse_err_name_file(err, onnx); /* a layer a .cfg cannot hold: the model's
                                                                         (an I/O error names the temporary's folder) */
        goto out;
    }
    if ((st = dse_netfile_load(cfg_tmp, &refit_to, &back, err))) goto out;
    struct dse_model_opts mo = { .batch = 1, .threads = 1, .seed = 1, .init = DSE_INIT_MSRA, .inference = 1 };
    if ((st = dse_model_new(&back, &mo, &m, err))) goto out;
    if (classes_file) {
        meta.classes = m->nodes[m->loss].in[0]->c; /* the classifier's outputs, as predict reads them */
        if ((st = classes_read(classes_file, meta.classes, &names, err))) goto out;
        meta.class_names = (const char(*)[64])names;
    }
    if ((st = dse_onnx_weights_load(m, onnx, fit, &own, &skipped, &refit, err))) goto out;
    if (!classes_file && !refit && (st = model_class_names(onnx, m, &meta, &names, err))) goto out;
    meta.norm = norm && norm->c ? *norm : own;
    if ((st = dse_checkpoint_save(m, 0, 0, &meta, ckpt_tmp, err))) goto out;
    if (rename(cfg_tmp, net_out)) {
        st = dse_err_set(err, DSE_ERR_IO, net_out, 0, "cannot rename the new network into place: %s", strerror(errno));
        goto out;
    }
    if (rename(ckpt_tmp, out)) { /* checked a file above; not reached but by a race */
        st = dse_err_set(err, DSE_ERR_IO, out, 0, "cannot rename the checkpoint into place (%s); %s is already the "
                         "new network", strerror(errno), net_out);
        goto out;
    }
    if ((st = dse_fs_sync_dir(net_out, err)) || (st = dse_fs_sync_dir(out, err))) goto out; /* the renames on disk */
    fprintf(log, "dse import: wrote %s (the network: %d layers, from %s's %d nodes that compute) and %s (the weights "
                 "of its %d learned tensors)", net_out, back.n_layers, onnx, read.n_layers, out, m->n_params);
    if (names) fprintf(log, ", and %d class names from %s", meta.classes, classes_file ? classes_file : onnx);
    if (skipped) fprintf(log, " (%d weighted layers of the model are not in the network: skipped)", skipped);
    if (refit) {
        const int k = dse_net_classifier(&back);
        fprintf(log, "\n  Fitted to %d classes: %d layer%s (the classifier '%s') initialized afresh, for "
                     "fine-tuning", refit_to.classes, refit, refit == 1 ? "" : "s",
                k < 0 ? "?" : back.layers[k].name);
    }
    if (!meta.norm.c)
        fprintf(log, "\n  The model normalizes no input (no Sub and Div of it; give --mean and --std): evaluation "
                     "will use the data's own statistics");
    else if (!(norm && norm->c))
        fprintf(log, "\n  The input normalization is the model's Sub and Div");
    if (refit_to.classes)
        fprintf(log, "\nnext: dse train %s --resume %s --data DATA --classes %d  (fine-tuning from epoch 0)\n",
                net_out, out, refit_to.classes);
    else
        fprintf(log, "\nnext: dse eval %s --checkpoint %s --data DATA\n", net_out, out);
out:
    if (cfg_tmp[0]) unlink(cfg_tmp); /* nothing there once renamed */
    if (ckpt_tmp[0]) unlink(ckpt_tmp);
    free(names);
    dse_model_free(m);
    dse_net_deinit(&back);
    dse_net_deinit(&net);
    dse_net_deinit(&read);
    return st;
}
