/* prototxt_write.c: a dse_net written as Caffe prototxt (layer { } format, an Input layer),
 * which the reader (prototxt.c) reads back to the same layers, shapes and costs
 * (docs/prototxt.md). */
#include "netfile/netfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netfile/prototxt_impl.h"

/* ---------------------------------------------------------------------------------------
 * Writing */

static void put_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f) fprintf(f, "\\%03o", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void put_field(FILE *f, const char *field, const char *s) {
    fprintf(f, "  %s: ", field);
    put_str(f, s);
    fputc('\n', f);
}

/* "kernel_size: 3" when h == w, else "kernel_h: 3  kernel_w: 1"; nothing if both equal dflt. */
static void put_hw(FILE *f, const char *base, const char *hname, const char *wname, int h, int w,
                   int dflt) {
    if (h == dflt && w == dflt) return;
    if (h == w) fprintf(f, "    %s: %d\n", base, h);
    else if (hname) fprintf(f, "    %s: %d\n    %s: %d\n", hname, h, wname, w);
    else fprintf(f, "    %s: %d\n    %s: %d\n", base, h, base, w);
}

/* Channels [*b, *e) that slice layer l takes of its (inferred) input. */
static void slice_range(const struct dse_layer *l, int *b, int *e) {
    if (l->slice_parts > 0) {
        *b = l->slice_part * (l->in_c / l->slice_parts), *e = *b + l->in_c / l->slice_parts;
    } else {
        *b = l->slice_begin, *e = l->slice_end ? l->slice_end : l->in_c;
    }
}

/* Slice layers i.. as Caffe Slice layers; returns the last layer written. Adjacent slices
 * of one input that tile its channels in order (what the reader makes of a Slice with
 * several tops) become one Slice again; a lone range gets placeholder tops for the
 * channels before and after it ("<top>_before", "<top>_after"). */
static int write_slice(FILE *f, const struct dse_net *net, int i, char (*tops)[DSE_NAME_MAX + 16]) {
    const struct dse_layer *l = &net->layers[i];
    int b, e, j = i, end;
    slice_range(l, &b, &e);
    end = e;
    while (b == 0 && j + 1 < net->n_layers && net->layers[j + 1].type == DSE_LAYER_SLICE &&
           net->layers[j + 1].inputs[0] == l->inputs[0]) {
        int b2, e2;
        slice_range(&net->layers[j + 1], &b2, &e2);
        if (b2 != end) break;
        j++, end = e2;
    }
    if (j > i && end != l->in_c) j = i, end = e; /* does not tile: one at a time */
    char name[DSE_NAME_MAX];
    dse_strlcpy(name, l->name, DSE_NAME_MAX);
    size_t nl = strlen(name);
    if (j > i && nl > 2 && strcmp(name + nl - 2, ":0") == 0) name[nl - 2] = '\0';
    fprintf(f, "layer {\n");
    put_field(f, "name", name);
    fprintf(f, "  type: \"Slice\"\n");
    put_field(f, "bottom", l->inputs[0] == DSE_INPUT_DATA ? "data" : tops[l->inputs[0]]);
    char extra[DSE_NAME_MAX + 32];
    if (j == i && b > 0) {
        snprintf(extra, sizeof extra, "%s_before", tops[i]);
        put_field(f, "top", extra);
    }
    for (int k = i; k <= j; k++) put_field(f, "top", tops[k]);
    if (j == i && e < l->in_c) {
        snprintf(extra, sizeof extra, "%s_after", tops[i]);
        put_field(f, "top", extra);
    }
    fprintf(f, "  slice_param {\n    axis: 1\n");
    if (j == i) {
        if (b > 0) fprintf(f, "    slice_point: %d\n", b);
        if (e < l->in_c) fprintf(f, "    slice_point: %d\n", e);
    } else {
        for (int k = i; k < j; k++) {
            int bk, ek;
            slice_range(&net->layers[k], &bk, &ek);
            fprintf(f, "    slice_point: %d\n", ek);
        }
    }
    fprintf(f, "  }\n}\n");
    return j;
}

/* The layer's <type>_param block, where it has settings Caffe's defaults do not give. */
static void put_params(FILE *f, const struct dse_layer *l) {
    switch (l->type) {
    case DSE_LAYER_CONV:
    case DSE_LAYER_DECONV:
        fprintf(f, "  convolution_param {\n    num_output: %d\n", l->num_output);
        if (!l->bias) fprintf(f, "    bias_term: false\n");
        put_hw(f, "kernel_size", "kernel_h", "kernel_w", l->kernel_h, l->kernel_w, -1);
        put_hw(f, "stride", "stride_h", "stride_w", l->stride_h, l->stride_w, 1);
        put_hw(f, "pad", "pad_h", "pad_w", l->pad_h, l->pad_w, 0);
        put_hw(f, "dilation", NULL, NULL, l->dilation_h, l->dilation_w, 1);
        if (l->groups != 1) fprintf(f, "    group: %d\n", l->groups);
        fprintf(f, "  }\n");
        break;
    case DSE_LAYER_MAXPOOL:
    case DSE_LAYER_AVGPOOL:
        fprintf(f, "  pooling_param {\n    pool: %s\n", l->type == DSE_LAYER_MAXPOOL ? "MAX" : "AVE");
        if (l->global) {
            fprintf(f, "    global_pooling: true\n");
        } else {
            put_hw(f, "kernel_size", "kernel_h", "kernel_w", l->kernel_h, l->kernel_w, -1);
            put_hw(f, "stride", "stride_h", "stride_w", l->stride_h, l->stride_w, 1);
            put_hw(f, "pad", "pad_h", "pad_w", l->pad_h, l->pad_w, 0);
        }
        if (l->round == DSE_ROUND_FLOOR) fprintf(f, "    round_mode: FLOOR\n");
        fprintf(f, "  }\n");
        break;
    case DSE_LAYER_RELU:
        if (l->negative_slope != 0.0f) fprintf(f, "  relu_param { negative_slope: %.9g }\n", (double)l->negative_slope);
        break;
    case DSE_LAYER_PRELU:
        if (l->channel_shared) fprintf(f, "  prelu_param { channel_shared: true }\n");
        break;
    case DSE_LAYER_CLIP:
        fprintf(f, "  clip_param { min: %.9g max: %.9g }\n", (double)l->clip_min, (double)l->clip_max);
        break;
    case DSE_LAYER_DROPOUT:
        fprintf(f, "  dropout_param { dropout_ratio: %.9g }\n", (double)l->dropout_ratio);
        break;
    case DSE_LAYER_ELTWISE:
        fprintf(f, "  eltwise_param { operation: %s }\n",
                l->eltwise_op == DSE_ELTWISE_PROD ? "PROD" : l->eltwise_op == DSE_ELTWISE_MAX ? "MAX" : "SUM");
        break;
    case DSE_LAYER_FC:
        fprintf(f, "  inner_product_param {\n    num_output: %d\n", l->num_output);
        if (!l->bias) fprintf(f, "    bias_term: false\n");
        fprintf(f, "  }\n");
        break;
    case DSE_LAYER_LRN: /* alpha, beta and k only where they are not Caffe's defaults */
        fprintf(f, "  lrn_param { local_size: %d", l->lrn_size);
        if (l->lrn_alpha != 1.0f) fprintf(f, " alpha: %.9g", (double)l->lrn_alpha);
        if (l->lrn_beta != 0.75f) fprintf(f, " beta: %.9g", (double)l->lrn_beta);
        if (l->lrn_k != 1.0f) fprintf(f, " k: %.9g", (double)l->lrn_k);
        fprintf(f, " }\n");
        break;
    case DSE_LAYER_BATCHNORM: /* eps only where it is not the default */
        if (l->bn_eps != 1e-5f) fprintf(f, "  batch_norm_param { eps: %.9g }\n", (double)l->bn_eps);
        break;
    case DSE_LAYER_SCALE:
        if (l->bias) fprintf(f, "  scale_param { bias_term: true }\n");
        break;
    case DSE_LAYER_RESHAPE:
        fprintf(f, "  reshape_param { shape { dim: 0 dim: %d dim: %d dim: %d } }\n", l->dims[0], l->dims[1],
                l->dims[2]);
        break;
    case DSE_LAYER_POWER:
        fprintf(f, "  power_param {");
        if (l->power != 1.0f) fprintf(f, " power: %.9g", (double)l->power);
        if (l->power_scale != 1.0f) fprintf(f, " scale: %.9g", (double)l->power_scale);
        if (l->power_shift != 0.0f) fprintf(f, " shift: %.9g", (double)l->power_shift);
        fprintf(f, " }\n");
        break;
    default:
        break;
    }
}

/* Blob names: tops[i] for layer i's output (n > 0 layers). An in-place layer reuses its
 * input's blob, unless a later layer still reads that input (then the in-place write would
 * change what it reads). Other layers write a blob named after the layer, made unique so a
 * bottom names exactly one ("data", and "label" where label is set, are taken). Returns -1
 * if out of memory. */
static int name_tops(const struct dse_net *net, int label, char (*tops)[DSE_NAME_MAX + 16]) {
    int n = net->n_layers;
    int *last = malloc(sizeof *last * (size_t)n); /* the last layer reading layer i's output */
    struct name_index own_tops = { 0 };
    if (!last) return -1;
    for (int i = 0; i < n; i++) last[i] = -1;
    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &net->layers[i];
        for (int k = 0; k < l->n_inputs; k++)
            if (l->inputs[k] >= 0) last[l->inputs[k]] = i;
    }
    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &net->layers[i];
        int p = l->inputs[0], own = 1; /* 1: the layer writes its own top; 0: in place on its input's blob */
        if (l->in_place && l->n_inputs >= 1 && p >= 0) own = last[p] > i;
        if (!own) {
            memcpy(tops[i], tops[p], sizeof tops[i]);
            continue;
        }
        snprintf(tops[i], sizeof tops[i], "%s", l->name);
        for (int tries = 0;; tries++) {
            int clash = strcmp(tops[i], "data") == 0 || (label && strcmp(tops[i], "label") == 0) ||
                        tops[i][0] == '\0';
            if (!clash) clash = dse_pt_names_find(&own_tops, (const char *)tops, sizeof *tops, tops[i]) >= 0;
            if (!clash) break;
            char base[DSE_NAME_MAX];
            dse_strlcpy(base, l->name, DSE_NAME_MAX - 12);
            snprintf(tops[i], sizeof tops[i], "%s_%d", base[0] ? base : "blob", i + tries);
        }
        if (dse_pt_names_add(&own_tops, (const char *)tops, sizeof *tops, i)) {
            free(last), free(own_tops.slots);
            return -1;
        }
    }
    free(last), free(own_tops.slots);
    return 0;
}

enum dse_status dse_prototxt_write(FILE *f, const struct dse_net *net, struct dse_err *err) {
    int n = net->n_layers, label = 0;
    char (*tops)[DSE_NAME_MAX + 16] = NULL;
    for (int i = 0; i < n; i++) /* before anything is written */
        if (!strcmp(dse_layer_caffe_type(net->layers[i].type), "?") || net->layers[i].output_pad_h ||
            net->layers[i].output_pad_w)
            return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, net->layers[i].line,
                               "layer '%s' (%s) has no Caffe form%s; it cannot be written as prototxt",
                               net->layers[i].name, dse_layer_type_str(net->layers[i].type),
                               strcmp(dse_layer_caffe_type(net->layers[i].type), "?") ? " (an output padding)" : "");
    for (int i = 0; i < n; i++)
        if (net->layers[i].type == DSE_LAYER_SOFTMAX_LOSS || net->layers[i].type == DSE_LAYER_ACCURACY) label = 1;
    if (n > 0 && (!(tops = calloc((size_t)n, sizeof *tops)) || name_tops(net, label, tops))) {
        free(tops);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory writing prototxt");
    }

    fprintf(f, "# Written by dse: %d layers; the input layer \"data\" is 1x%dx%dx%d.\n", n,
            net->in_c, net->in_h, net->in_w);
    fprintf(f, "name: ");
    put_str(f, net->name);
    fprintf(f, "\nlayer {\n  name: \"data\"\n  type: \"Input\"\n  top: \"data\"\n");
    if (label) fprintf(f, "  top: \"label\"\n");
    fprintf(f, "  input_param {\n    shape { dim: 1 dim: %d dim: %d dim: %d }\n", net->in_c,
            net->in_h, net->in_w);
    if (label) fprintf(f, "    shape { dim: 1 }\n");
    fprintf(f, "  }\n}\n");

    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &net->layers[i];
        if (l->type == DSE_LAYER_SLICE) {
            i = write_slice(f, net, i, tops);
            continue;
        }
        if (l->type == DSE_LAYER_BATCHNORM && l->affine)
            fprintf(f, "# '%s' learns gamma and beta: Caffe writes that as BatchNorm + Scale with bias.\n",
                    l->name);
        fprintf(f, "layer {\n");
        put_field(f, "name", l->name);
        fprintf(f, "  type: \"%s\"\n", dse_layer_caffe_type(l->type));
        for (int k = 0; k < l->n_inputs; k++)
            put_field(f, "bottom", l->inputs[k] == DSE_INPUT_DATA ? "data" : tops[l->inputs[k]]);
        if (l->type == DSE_LAYER_SOFTMAX_LOSS || l->type == DSE_LAYER_ACCURACY)
            put_field(f, "bottom", "label");
        put_field(f, "top", tops[i]);
        put_params(f, l);
        fprintf(f, "}\n");
        if (l->type == DSE_LAYER_BATCHNORM && l->affine) {
            char name[DSE_NAME_MAX + 8], base[DSE_NAME_MAX - 6];
            dse_strlcpy(base, l->name, (int)sizeof base);
            snprintf(name, sizeof name, "%s/scale", base);
            fprintf(f, "layer {\n");
            put_field(f, "name", name);
            fprintf(f, "  type: \"Scale\"\n");
            put_field(f, "bottom", tops[i]);
            put_field(f, "top", tops[i]);
            fprintf(f, "  scale_param { bias_term: true }\n}\n");
        }
    }
    free(tops);
    if (fflush(f) != 0 || ferror(f))
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "cannot write prototxt: %s", strerror(errno));
    return DSE_OK;
}
