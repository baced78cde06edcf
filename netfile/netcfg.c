/* netcfg.c: our network files (libconfig .cfg): an input shape and an ordered list of
 * layers, Fire modules included. Every setting is checked against the keys its layer
 * type allows, and every error names path:line. Format: docs/network-format.md. */
#include "netfile/netfile.h"

#include <libconfig.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct type_spec {
    const char         *name;     /* type as written in the file */
    enum dse_layer_type type;     /* primitive type; ignored for "fire" */
    const char         *keys;     /* allowed settings besides name, type, inputs */
};

/* The aliases on the left are what users write; docs/network-format.md lists them. */
static const struct type_spec type_specs[] = {
    { "conv",           DSE_LAYER_CONV,         "filters kernel kernel_h kernel_w stride stride_h stride_w pad pad_h pad_w dilation dilation_h dilation_w groups bias" },
    { "maxpool",        DSE_LAYER_MAXPOOL,      "kernel kernel_h kernel_w stride stride_h stride_w pad pad_h pad_w round global" },
    { "avgpool",        DSE_LAYER_AVGPOOL,      "kernel kernel_h kernel_w stride stride_h stride_w pad pad_h pad_w round global" },
    { "global_avgpool", DSE_LAYER_AVGPOOL,      "" },
    { "global_maxpool", DSE_LAYER_MAXPOOL,      "" },
    { "relu",           DSE_LAYER_RELU,         "in_place" },
    { "dropout",        DSE_LAYER_DROPOUT,      "ratio in_place" },
    { "concat",         DSE_LAYER_CONCAT,       "" },
    { "add",            DSE_LAYER_ELTWISE,      "" },
    { "eltwise",        DSE_LAYER_ELTWISE,      "op" },
    { "fc",             DSE_LAYER_FC,           "outputs bias" },
    { "softmax",        DSE_LAYER_SOFTMAX,      "" },
    { "softmax_loss",   DSE_LAYER_SOFTMAX_LOSS, "" },
    { "accuracy",       DSE_LAYER_ACCURACY,     "" },
    { "batchnorm",      DSE_LAYER_BATCHNORM,    "affine in_place eps" },
    { "scale",          DSE_LAYER_SCALE,        "bias in_place" },
    { "lrn",            DSE_LAYER_LRN,          "size alpha beta k" },
    { "flatten",        DSE_LAYER_FLATTEN,      "" },
    { "reshape",        DSE_LAYER_RESHAPE,      "dims" },
    { "slice",          DSE_LAYER_SLICE,        "begin end part parts" },
    { "fire",           DSE_LAYER_COUNT,        "squeeze expand1x1 expand3x3 bypass" },
};

struct ctx {
    const char     *path;
    struct dse_err *err;
};

__attribute__((format(printf, 4, 5)))
static enum dse_status cfg_err(struct ctx *cx, const config_setting_t *s, enum dse_status code,
                               const char *fmt, ...) {
    char msg[sizeof cx->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return dse_err_set(cx->err, code, cx->path, s ? (int)config_setting_source_line(s) : 0, "%s", msg);
}

static enum dse_status unknown_key(struct ctx *cx, const config_setting_t *s, const char *where,
                                   const char *allowed) {
    char sug[64], buf[sizeof cx->err->msg];
    const char *key = config_setting_name(s);
    dse_word_suggest(allowed, key, sug, sizeof sug);
    if (sug[0])
        snprintf(buf, sizeof buf, "unknown setting '%s' in %s (did you mean '%s'?)", key, where, sug);
    else
        snprintf(buf, sizeof buf, "unknown setting '%s' in %s; allowed: %s", key, where, allowed);
    return dse_err_set(cx->err, DSE_ERR_CONFIG, cx->path, (int)config_setting_source_line(s), "%s", buf);
}

/* Integer setting key of g into *out if present. Returns DSE_OK if absent. */
static enum dse_status get_int(struct ctx *cx, const config_setting_t *g, const char *key, int *out,
                               int *present) {
    const config_setting_t *s = config_setting_get_member(g, key);
    if (present) *present = s != NULL;
    if (!s) return DSE_OK;
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
        return cfg_err(cx, s, DSE_ERR_CONFIG, "%s must be an integer", key);
    long long v = t == CONFIG_TYPE_INT ? (long long)config_setting_get_int(s)
                                       : (long long)config_setting_get_int64(s);
    if (v < -DSE_DIM_MAX || v > DSE_DIM_MAX)
        return cfg_err(cx, s, DSE_ERR_CONFIG, "%s = %lld is out of range; expected at most %d",
                       key, v, DSE_DIM_MAX);
    *out = (int)v;
    return DSE_OK;
}

/* A number (float or integer) setting key of g into *out if present, within [lo, hi] (lo_open:
 * above lo). Returns DSE_OK if absent. */
static enum dse_status get_real(struct ctx *cx, const config_setting_t *g, const char *key, float *out, double lo,
                                int lo_open, double hi) {
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s) return DSE_OK;
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_FLOAT && t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
        return cfg_err(cx, s, DSE_ERR_CONFIG, "%s must be a number", key);
    double v = t == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
                                      : (double)(t == CONFIG_TYPE_INT ? config_setting_get_int(s)
                                                                      : config_setting_get_int64(s));
    if (!(lo_open ? v > lo : v >= lo) || !(v <= hi))
        return cfg_err(cx, s, DSE_ERR_CONFIG, "%s = %g is out of range; expected %s %g and at most %g", key, v,
                       lo_open ? "above" : "at least", lo, hi);
    *out = (float)v;
    return DSE_OK;
}

static enum dse_status get_bool(struct ctx *cx, const config_setting_t *g, const char *key, int *out) {
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s) return DSE_OK;
    if (config_setting_type(s) != CONFIG_TYPE_BOOL)
        return cfg_err(cx, s, DSE_ERR_CONFIG, "%s must be true or false", key);
    *out = config_setting_get_bool(s);
    return DSE_OK;
}

static enum dse_status get_string(struct ctx *cx, const config_setting_t *g, const char *key,
                                  const char **out) {
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s) return DSE_OK;
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return cfg_err(cx, s, DSE_ERR_CONFIG, "%s must be a string in double quotes", key);
    *out = config_setting_get_string(s);
    return DSE_OK;
}

/* kernel = k sets both; kernel_h / kernel_w set one each. */
static enum dse_status get_hw(struct ctx *cx, const config_setting_t *g, const char *key, int *h,
                              int *w, int *present) {
    char kh[32], kw[32];
    int v = 0, p1 = 0, p2 = 0, p3 = 0;
    enum dse_status st;
    if ((st = get_int(cx, g, key, &v, &p1))) return st;
    if (p1) *h = *w = v;
    snprintf(kh, sizeof kh, "%s_h", key);
    snprintf(kw, sizeof kw, "%s_w", key);
    if ((st = get_int(cx, g, kh, h, &p2))) return st;
    if ((st = get_int(cx, g, kw, w, &p3))) return st;
    if (p1 && (p2 || p3))
        return cfg_err(cx, config_setting_get_member(g, key), DSE_ERR_CONFIG,
                       "give either %s or %s_h and %s_w, not both", key, key, key);
    if (p2 != p3)
        return cfg_err(cx, g, DSE_ERR_CONFIG, "give both %s_h and %s_w", key, key);
    if (present) *present = p1 || p2;
    return DSE_OK;
}

static enum dse_status resolve(struct ctx *cx, const struct dse_net *net, const config_setting_t *s,
                               const char *name, int *idx) {
    if (strcmp(name, "data") == 0 && dse_net_find(net, "data") < 0) {
        *idx = DSE_INPUT_DATA;
        return DSE_OK;
    }
    *idx = dse_net_find(net, name);
    for (int i = net->n_layers - 1; *idx < 0 && i >= 0; i--)
        if (strcmp(net->layers[i].module, name) == 0) *idx = i; /* a fire module: its output */
    if (*idx < 0)
        return cfg_err(cx, s, DSE_ERR_CONFIG,
                       "input '%s' is not an earlier layer; inputs name layers above this one "
                       "(or \"data\" for the network input)", name);
    return DSE_OK;
}

static enum dse_status read_inputs(struct ctx *cx, const struct dse_net *net,
                                   const config_setting_t *g, struct dse_layer *l) {
    const config_setting_t *s = config_setting_get_member(g, "inputs");
    if (!s) return DSE_OK;
    int t = config_setting_type(s);
    if (t == CONFIG_TYPE_STRING) {
        l->n_inputs = 1;
        return resolve(cx, net, s, config_setting_get_string(s), &l->inputs[0]);
    }
    if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
        return cfg_err(cx, s, DSE_ERR_CONFIG, "inputs must be a layer name or a list of names, "
                       "e.g. [\"fire2\", \"fire3\"]");
    int n = config_setting_length(s);
    if (n < 1 || n > DSE_MAX_INPUTS)
        return cfg_err(cx, s, DSE_ERR_CONFIG, "inputs has %d names; expected 1 to %d", n,
                       DSE_MAX_INPUTS);
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        if (config_setting_type(e) != CONFIG_TYPE_STRING)
            return cfg_err(cx, e, DSE_ERR_CONFIG, "inputs must hold layer names in quotes");
        enum dse_status st = resolve(cx, net, s, config_setting_get_string(e), &l->inputs[i]);
        if (st) return st;
    }
    l->n_inputs = n;
    return DSE_OK;
}

/* A fire layer: a Fire module of three convolutions and its bypass (dse_net_add_fire). */
static enum dse_status read_fire(struct ctx *cx, struct dse_net *net, const config_setting_t *g,
                                 const char *name, int line) {
    enum dse_status st;
    struct dse_fire f;
    struct dse_layer tmp = dse_layer_make(DSE_LAYER_CONV, name);
    const char *bypass = "none";
    memset(&f, 0, sizeof f);
    dse_strlcpy(f.name, name, DSE_NAME_MAX);
    f.line = line;
    int have_sq = 0;
    if ((st = get_int(cx, g, "squeeze", &f.squeeze, &have_sq))) return st;
    if ((st = get_int(cx, g, "expand1x1", &f.expand1x1, NULL))) return st;
    if ((st = get_int(cx, g, "expand3x3", &f.expand3x3, NULL))) return st;
    if ((st = get_string(cx, g, "bypass", &bypass))) return st;
    if (!have_sq)
        return cfg_err(cx, g, DSE_ERR_CONFIG, "fire '%s' needs squeeze = <filters>", name);
    if (!strcmp(bypass, "none")) f.bypass = DSE_BYPASS_NONE;
    else if (!strcmp(bypass, "simple")) f.bypass = DSE_BYPASS_SIMPLE;
    else if (!strcmp(bypass, "complex")) f.bypass = DSE_BYPASS_COMPLEX;
    else
        return cfg_err(cx, config_setting_get_member(g, "bypass"), DSE_ERR_CONFIG,
                       "bypass = \"%s\"; expected \"none\", \"simple\" or \"complex\"", bypass);
    tmp.inputs[0] = net->n_layers - 1;
    if ((st = read_inputs(cx, net, g, &tmp))) return st;
    if (tmp.n_inputs > 1)
        return cfg_err(cx, g, DSE_ERR_CONFIG, "fire '%s' takes one input", name);
    st = dse_net_add_fire(net, &f, tmp.inputs[0], cx->err); /* its layers' names: dse_net_check_names */
    if (st) dse_err_name_file(cx->err, cx->path);
    return st;
}

/* The settings of a layer of spec's type (not fire) into l. */
static enum dse_status read_settings(struct ctx *cx, const config_setting_t *g, const struct type_spec *spec,
                                     const char *name, struct dse_layer *l) {
    enum dse_status st;
    int have = 0;
    const char *s = NULL;
    switch (spec->type) {
    case DSE_LAYER_CONV:
        if ((st = get_int(cx, g, "filters", &l->num_output, &have))) return st;
        if (!have) return cfg_err(cx, g, DSE_ERR_CONFIG, "conv '%s' needs filters = <count>", name);
        if ((st = get_hw(cx, g, "kernel", &l->kernel_h, &l->kernel_w, &have))) return st;
        if (!have) return cfg_err(cx, g, DSE_ERR_CONFIG, "conv '%s' needs kernel = <size> (or kernel_h and kernel_w)", name);
        if ((st = get_hw(cx, g, "stride", &l->stride_h, &l->stride_w, NULL))) return st;
        if ((st = get_hw(cx, g, "pad", &l->pad_h, &l->pad_w, NULL))) return st;
        if ((st = get_hw(cx, g, "dilation", &l->dilation_h, &l->dilation_w, NULL))) return st;
        if ((st = get_int(cx, g, "groups", &l->groups, NULL))) return st;
        if ((st = get_bool(cx, g, "bias", &l->bias))) return st;
        break;
    case DSE_LAYER_MAXPOOL:
    case DSE_LAYER_AVGPOOL:
        if (strncmp(spec->name, "global_", 7) == 0) {
            l->global = 1;
            break;
        }
        if ((st = get_bool(cx, g, "global", &l->global))) return st;
        if ((st = get_hw(cx, g, "kernel", &l->kernel_h, &l->kernel_w, &have))) return st;
        if (!have && !l->global)
            return cfg_err(cx, g, DSE_ERR_CONFIG, "%s '%s' needs kernel = <size> (or global = true)", spec->name, name);
        if (l->global && (have || config_setting_get_member(g, "stride") || config_setting_get_member(g, "pad")))
            return cfg_err(cx, g, DSE_ERR_CONFIG, "%s '%s': global pooling takes no kernel, stride or pad "
                           "(as in Caffe)", spec->name, name);
        if ((st = get_hw(cx, g, "stride", &l->stride_h, &l->stride_w, NULL))) return st;
        if ((st = get_hw(cx, g, "pad", &l->pad_h, &l->pad_w, NULL))) return st;
        if ((st = get_string(cx, g, "round", &s))) return st;
        if (s && !strcmp(s, "floor")) l->round = DSE_ROUND_FLOOR;
        else if (s && strcmp(s, "ceil"))
            return cfg_err(cx, config_setting_get_member(g, "round"), DSE_ERR_CONFIG,
                           "round = \"%s\"; expected \"ceil\" (Caffe's default) or \"floor\"", s);
        break;
    case DSE_LAYER_RELU:
    case DSE_LAYER_DROPOUT:
    case DSE_LAYER_BATCHNORM:
    case DSE_LAYER_SCALE:
        l->in_place = 1;
        if ((st = get_bool(cx, g, "in_place", &l->in_place))) return st;
        if (spec->type == DSE_LAYER_BATCHNORM && (st = get_bool(cx, g, "affine", &l->affine))) return st;
        if (spec->type == DSE_LAYER_BATCHNORM && (st = get_real(cx, g, "eps", &l->bn_eps, 0, 1, 1e6))) return st;
        if (spec->type == DSE_LAYER_SCALE) {
            l->bias = 0;
            if ((st = get_bool(cx, g, "bias", &l->bias))) return st;
        }
        if (spec->type == DSE_LAYER_DROPOUT) {
            const config_setting_t *r = config_setting_get_member(g, "ratio");
            if (r) {
                int t = config_setting_type(r);
                if (t != CONFIG_TYPE_FLOAT && t != CONFIG_TYPE_INT)
                    return cfg_err(cx, r, DSE_ERR_CONFIG, "ratio must be a number in [0, 1)");
                l->dropout_ratio = t == CONFIG_TYPE_FLOAT ? (float)config_setting_get_float(r)
                                                         : (float)config_setting_get_int(r);
            }
        }
        break;
    case DSE_LAYER_ELTWISE:
        if ((st = get_string(cx, g, "op", &s))) return st;
        if (s && !strcmp(s, "prod")) l->eltwise_op = DSE_ELTWISE_PROD;
        else if (s && !strcmp(s, "max")) l->eltwise_op = DSE_ELTWISE_MAX;
        else if (s && strcmp(s, "sum"))
            return cfg_err(cx, config_setting_get_member(g, "op"), DSE_ERR_CONFIG,
                           "op = \"%s\"; expected \"sum\", \"prod\" or \"max\"", s);
        break;
    case DSE_LAYER_FC:
        if ((st = get_int(cx, g, "outputs", &l->num_output, &have))) return st;
        if (!have) return cfg_err(cx, g, DSE_ERR_CONFIG, "fc '%s' needs outputs = <count>", name);
        if ((st = get_bool(cx, g, "bias", &l->bias))) return st;
        break;
    case DSE_LAYER_LRN:
        if ((st = get_int(cx, g, "size", &l->lrn_size, NULL))) return st;
        if ((st = get_real(cx, g, "alpha", &l->lrn_alpha, 0, 0, 1e6))) return st;
        if ((st = get_real(cx, g, "beta", &l->lrn_beta, -1e6, 0, 1e6))) return st;
        if ((st = get_real(cx, g, "k", &l->lrn_k, 0, 1, 1e6))) return st;
        break;
    case DSE_LAYER_RESHAPE: {
        const config_setting_t *d = config_setting_get_member(g, "dims");
        if (!d || !config_setting_is_array(d) || config_setting_length(d) != 3)
            return cfg_err(cx, d ? d : g, DSE_ERR_CONFIG, "reshape '%s' needs dims = [C, H, W] (0 copies the "
                           "input's, -1 is inferred)", name);
        for (int k = 0; k < 3; k++) {
            const config_setting_t *e = config_setting_get_elem(d, (unsigned)k);
            if (config_setting_type(e) != CONFIG_TYPE_INT)
                return cfg_err(cx, d, DSE_ERR_CONFIG, "reshape '%s': dims must be integers", name);
            const int v = config_setting_get_int(e);
            if (v < -1 || v > DSE_DIM_MAX)
                return cfg_err(cx, d, DSE_ERR_CONFIG, "reshape '%s': dim %d is out of range", name, v);
            l->dims[k] = v;
        }
        break;
    }
    case DSE_LAYER_SLICE: {
        int hb = 0, he = 0, hp = 0, hn = 0;
        if ((st = get_int(cx, g, "begin", &l->slice_begin, &hb)) || (st = get_int(cx, g, "end", &l->slice_end, &he)) ||
            (st = get_int(cx, g, "part", &l->slice_part, &hp)) || (st = get_int(cx, g, "parts", &l->slice_parts, &hn)))
            return st;
        if ((hb || he) == (hp || hn) || hp != hn || (hn && (l->slice_parts < 1 || l->slice_part < 0 ||
                                                           l->slice_part >= l->slice_parts)))
            return cfg_err(cx, g, DSE_ERR_CONFIG, "slice '%s' needs begin = B; (and end = E;: channels [B, E)) or "
                           "part = P; parts = N; (0 <= P < N)", name);
        break;
    }
    default:
        break;
    }
    return DSE_OK;
}

static enum dse_status read_layer(struct ctx *cx, struct dse_net *net, const config_setting_t *g) {
    const char *name = NULL, *type = NULL;
    enum dse_status st;
    int line = (int)config_setting_source_line(g);
    char where[DSE_NAME_MAX + 32];

    if (!config_setting_is_group(g))
        return cfg_err(cx, g, DSE_ERR_CONFIG, "each layer must be a group { name = ...; type = ...; }");
    if ((st = get_string(cx, g, "name", &name))) return st;
    if ((st = get_string(cx, g, "type", &type))) return st;
    if (!name || !name[0])
        return cfg_err(cx, g, DSE_ERR_CONFIG, "layer has no name; add name = \"...\";");
    if (strlen(name) >= DSE_NAME_MAX)
        return cfg_err(cx, g, DSE_ERR_CONFIG, "layer name '%.40s...' is too long; at most %d characters",
                       name, DSE_NAME_MAX - 1);
    if (!strcmp(name, "data")) /* names repeated: dse_net_check_names, once all are in */
        return cfg_err(cx, g, DSE_ERR_CONFIG, "layer name 'data' names the network input; choose another");
    if (!type)
        return cfg_err(cx, g, DSE_ERR_CONFIG, "layer '%s' has no type; add type = \"conv\" (or %s)", name,
                       "another type of docs/network-format.md");
    const struct type_spec *spec = NULL;
    char types[400] = "";
    for (int i = 0; i < DSE_ARRAY_LEN(type_specs); i++) {
        if (strcmp(type_specs[i].name, type) == 0) spec = &type_specs[i];
        strcat(types, i ? " " : "");
        strcat(types, type_specs[i].name);
    }
    if (!spec) {
        char sug[64], buf[600];
        dse_word_suggest(types, type, sug, sizeof sug);
        if (sug[0])
            snprintf(buf, sizeof buf, "layer '%s': unknown type '%s' (did you mean '%s'?)", name, type, sug);
        else
            snprintf(buf, sizeof buf, "layer '%s': unknown type '%s'; allowed: %s", name, type, types);
        return dse_err_set(cx->err, DSE_ERR_CONFIG, cx->path,
                           (int)config_setting_source_line(config_setting_get_member(g, "type")), "%s", buf);
    }
    snprintf(where, sizeof where, "%s layer '%s'", spec->name, name);
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        const char *key = config_setting_name(s);
        if (strcmp(key, "name") && strcmp(key, "type") && strcmp(key, "inputs") && dse_word_index(spec->keys, key) < 0) {
            char allowed[300];
            snprintf(allowed, sizeof allowed, "name type inputs%s%s", spec->keys[0] ? " " : "", spec->keys);
            return unknown_key(cx, s, where, allowed);
        }
    }

    if (strcmp(spec->name, "fire") == 0) return read_fire(cx, net, g, name, line);

    struct dse_layer l = dse_layer_make(spec->type, name);
    l.line = line;
    if ((st = read_settings(cx, g, spec, name, &l))) return st;
    if ((st = read_inputs(cx, net, g, &l))) return st;
    if (l.n_inputs == 0) {
        l.n_inputs = 1;
        l.inputs[0] = net->n_layers - 1;
    }
    if ((spec->type == DSE_LAYER_CONCAT || spec->type == DSE_LAYER_ELTWISE) &&
        !config_setting_get_member(g, "inputs"))
        return cfg_err(cx, g, DSE_ERR_CONFIG, "%s '%s' needs inputs = [\"a\", \"b\", ...]", spec->name, name);
    st = dse_net_add(net, &l, cx->err);
    if (st) dse_err_name_file(cx->err, cx->path);
    return st;
}

enum dse_status dse_netcfg_load(const char *path, const struct dse_input_shape *ov,
                                struct dse_net *out, struct dse_err *err) {
    config_t cfg;
    struct ctx cx = { .path = path, .err = err };
    enum dse_status st = DSE_OK;
    static const char top_keys[] = "name input layers";

    static const struct dse_cfgfile how = { .what = "network file", .doc = "docs/network-format.md" };

    memset(out, 0, sizeof *out);
    config_init(&cfg);
    if ((st = dse_cfgfile_read(&cfg, path, &how, NULL, NULL, err))) {
        config_destroy(&cfg);
        return st;
    }
    config_setting_t *root = config_root_setting(&cfg);
    for (int i = 0; i < config_setting_length(root); i++)
        if (dse_word_index(top_keys, config_setting_name(config_setting_get_elem(root, (unsigned)i))) < 0) {
            st = unknown_key(&cx, config_setting_get_elem(root, (unsigned)i), "the network file", top_keys);
            goto done;
        }
    const char *name = "";
    if ((st = get_string(&cx, root, "name", &name))) goto done;
    if (strlen(name) >= DSE_NAME_MAX) { /* as the prototxt reader refuses it: never cut */
        st = cfg_err(&cx, config_setting_get_member(root, "name"), DSE_ERR_CONFIG,
                     "network name '%.40s...' is longer than %d characters", name, DSE_NAME_MAX - 1);
        goto done;
    }
    const config_setting_t *in = config_setting_get_member(root, "input");
    if (!in || !config_setting_is_group(in)) {
        st = dse_err_set(err, DSE_ERR_CONFIG, path, in ? (int)config_setting_source_line(in) : 0,
                         "missing input = { channels = C; height = H; width = W; };");
        goto done;
    }
    int c = 0, h = 0, w = 0, pc = 0, ph = 0, pw = 0;
    for (int i = 0; i < config_setting_length(in); i++)
        if (dse_word_index("channels height width", config_setting_name(config_setting_get_elem(in, (unsigned)i))) < 0) {
            st = unknown_key(&cx, config_setting_get_elem(in, (unsigned)i), "input", "channels height width");
            goto done;
        }
    if ((st = get_int(&cx, in, "channels", &c, &pc)) || (st = get_int(&cx, in, "height", &h, &ph)) ||
        (st = get_int(&cx, in, "width", &w, &pw)))
        goto done;
    if (!pc || !ph || !pw || c <= 0 || h <= 0 || w <= 0) {
        st = dse_err_set(err, DSE_ERR_CONFIG, path, (int)config_setting_source_line(in),
                         "input needs channels, height and width, each >= 1");
        goto done;
    }
    if (ov && ov->c > 0) c = ov->c;
    if (ov && ov->h > 0) h = ov->h;
    if (ov && ov->w > 0) w = ov->w;
    dse_net_init(out, name, c, h, w);
    const config_setting_t *layers = config_setting_get_member(root, "layers");
    if (!layers || !config_setting_is_list(layers) || config_setting_length(layers) == 0) {
        st = dse_err_set(err, DSE_ERR_CONFIG, path, layers ? (int)config_setting_source_line(layers) : 0,
                         "missing layers = ( { name = ...; type = ...; }, ... ); a non-empty list in parentheses");
        goto done;
    }
    for (int i = 0; i < config_setting_length(layers); i++)
        if ((st = read_layer(&cx, out, config_setting_get_elem(layers, (unsigned)i)))) goto done;
    if ((st = dse_net_check_names(out, err))) {
        dse_err_name_file(err, path);
        goto done;
    }
    st = dse_net_infer(out, path, err);
done:
    config_destroy(&cfg);
    if (st) dse_net_deinit(out);
    return st;
}

/* ---- writing ---------------------------------------------------------------------- */

static void write_name(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The name other layers use for layer i's output: a fire module's name for its last
 * layer, else the layer's own name. */
static const char *output_name(const struct dse_net *net, int i) {
    if (i == DSE_INPUT_DATA) return "data";
    const struct dse_layer *l = &net->layers[i];
    if (l->module[0] && (i + 1 == net->n_layers || strcmp(net->layers[i + 1].module, l->module)))
        return l->module;
    return l->name;
}

static void write_hw(FILE *f, const char *key, int h, int w, int dflt) {
    if (h == w && h != dflt) fprintf(f, " %s = %d;", key, h);
    else if (h != w) fprintf(f, " %s_h = %d; %s_w = %d;", key, h, key, w);
}

static void write_inputs(FILE *f, const struct dse_net *net, int i, const struct dse_layer *l) {
    /* the reader asks a concat or eltwise for its inputs even where there is one (DenseNet's
     * first concat of a block, torch.cat([x])) */
    const int listed = l->type == DSE_LAYER_CONCAT || l->type == DSE_LAYER_ELTWISE;
    if (!listed && l->n_inputs == 1 && l->inputs[0] == i - 1 && i > 0) return;
    if (!listed && l->n_inputs == 1 && l->inputs[0] == DSE_INPUT_DATA && i == 0) return;
    fputs(" inputs = [", f);
    for (int k = 0; k < l->n_inputs; k++) {
        if (k) fputs(", ", f);
        write_name(f, output_name(net, l->inputs[k]));
    }
    fputs("];", f);
}

/* 1 if the .cfg format (type_specs) has a layer of this type. */
static int cfg_has_type(enum dse_layer_type t) {
    for (int i = 0; i < DSE_ARRAY_LEN(type_specs); i++)
        if (type_specs[i].type == t) return 1;
    return 0;
}

enum dse_status dse_netcfg_write(FILE *f, const struct dse_net *net, struct dse_err *err) {
    for (int i = 0; i < net->n_layers; i++) /* before anything is written */
        if (!cfg_has_type(net->layers[i].type) || net->layers[i].negative_slope != 0.0f)
            return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, net->layers[i].line,
                               "layer '%s' (%s%s) has no .cfg form (docs/network-format.md lists the layers a .cfg holds)",
                               net->layers[i].name, dse_layer_type_str(net->layers[i].type),
                               net->layers[i].negative_slope != 0.0f ? " with a negative slope" : "");
    fputs("# written by dse (docs/network-format.md)\nname = ", f);
    write_name(f, net->name);
    fprintf(f, ";\ninput = { channels = %d; height = %d; width = %d; };\nlayers = (\n",
            net->in_c, net->in_h, net->in_w);
    for (int i = 0; i < net->n_layers; i++) {
        const struct dse_layer *l = &net->layers[i];
        fputs(i ? ",\n  { name = " : "  { name = ", f);
        if (l->module[0]) { /* a fire module: its layers are contiguous */
            int j = i, sq = -1, e1 = 0, e3 = 0, bypass = 0, conv_bypass = 0;
            while (j + 1 < net->n_layers && !strcmp(net->layers[j + 1].module, l->module)) j++;
            for (int k = i; k <= j; k++) {
                const struct dse_layer *p = &net->layers[k];
                if (p->role == DSE_ROLE_SQUEEZE) sq = p->num_output;
                if (p->role == DSE_ROLE_EXPAND1X1) e1 = p->num_output;
                if (p->role == DSE_ROLE_EXPAND3X3) e3 = p->num_output;
                if (p->role == DSE_ROLE_BYPASS_ADD) bypass = 1;
                if (p->role == DSE_ROLE_BYPASS_CONV) conv_bypass = 1;
            }
            if (sq < 0)
                return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0,
                                   "module '%s' is not a fire module; only fire modules can be written "
                                   "as .cfg", l->module);
            write_name(f, l->module);
            fprintf(f, "; type = \"fire\"; squeeze = %d; expand1x1 = %d; expand3x3 = %d;", sq, e1, e3);
            if (bypass) fprintf(f, " bypass = \"%s\";", conv_bypass ? "complex" : "simple");
            write_inputs(f, net, i, l);
            fputs(" }", f);
            i = j;
            continue;
        }
        write_name(f, l->name);
        switch (l->type) {
        case DSE_LAYER_CONV:
            fprintf(f, "; type = \"conv\"; filters = %d;", l->num_output);
            if (l->kernel_h == l->kernel_w) fprintf(f, " kernel = %d;", l->kernel_h);
            else fprintf(f, " kernel_h = %d; kernel_w = %d;", l->kernel_h, l->kernel_w);
            write_hw(f, "stride", l->stride_h, l->stride_w, 1);
            write_hw(f, "pad", l->pad_h, l->pad_w, 0);
            write_hw(f, "dilation", l->dilation_h, l->dilation_w, 1);
            if (l->groups != 1) fprintf(f, " groups = %d;", l->groups);
            if (!l->bias) fputs(" bias = false;", f);
            break;
        case DSE_LAYER_MAXPOOL:
        case DSE_LAYER_AVGPOOL:
            if (l->global) {
                fprintf(f, "; type = \"global_%s\";", dse_layer_type_str(l->type));
                break;
            }
            fprintf(f, "; type = \"%s\";", dse_layer_type_str(l->type));
            if (l->kernel_h == l->kernel_w) fprintf(f, " kernel = %d;", l->kernel_h);
            else fprintf(f, " kernel_h = %d; kernel_w = %d;", l->kernel_h, l->kernel_w);
            write_hw(f, "stride", l->stride_h, l->stride_w, 1);
            write_hw(f, "pad", l->pad_h, l->pad_w, 0);
            if (l->round == DSE_ROUND_FLOOR) fputs(" round = \"floor\";", f);
            break;
        case DSE_LAYER_RELU:
        case DSE_LAYER_DROPOUT:
        case DSE_LAYER_BATCHNORM:
        case DSE_LAYER_SCALE:
            fprintf(f, "; type = \"%s\";", dse_layer_type_str(l->type));
            if (l->type == DSE_LAYER_DROPOUT) fprintf(f, " ratio = %.9g;", l->dropout_ratio);
            if (l->type == DSE_LAYER_BATCHNORM && !l->affine) fputs(" affine = false;", f);
            if (l->type == DSE_LAYER_BATCHNORM && l->bn_eps != 1e-5f) fprintf(f, " eps = %.9g;", (double)l->bn_eps);
            if (l->type == DSE_LAYER_SCALE && l->bias) fputs(" bias = true;", f);
            if (!l->in_place) fputs(" in_place = false;", f);
            break;
        case DSE_LAYER_ELTWISE:
            fprintf(f, "; type = \"eltwise\"; op = \"%s\";",
                    l->eltwise_op == DSE_ELTWISE_PROD ? "prod" : l->eltwise_op == DSE_ELTWISE_MAX ? "max" : "sum");
            break;
        case DSE_LAYER_FC:
            fprintf(f, "; type = \"fc\"; outputs = %d;%s", l->num_output, l->bias ? "" : " bias = false;");
            break;
        case DSE_LAYER_LRN:
            fprintf(f, "; type = \"lrn\"; size = %d;", l->lrn_size);
            if (l->lrn_alpha != 1.0f) fprintf(f, " alpha = %.9g;", (double)l->lrn_alpha);
            if (l->lrn_beta != 0.75f) fprintf(f, " beta = %.9g;", (double)l->lrn_beta);
            if (l->lrn_k != 1.0f) fprintf(f, " k = %.9g;", (double)l->lrn_k);
            break;
        case DSE_LAYER_RESHAPE:
            fprintf(f, "; type = \"reshape\"; dims = [%d, %d, %d];", l->dims[0], l->dims[1], l->dims[2]);
            break;
        case DSE_LAYER_SLICE:
            if (l->slice_parts > 0) fprintf(f, "; type = \"slice\"; part = %d; parts = %d;", l->slice_part, l->slice_parts);
            else fprintf(f, "; type = \"slice\"; begin = %d;", l->slice_begin);
            if (l->slice_parts <= 0 && l->slice_end) fprintf(f, " end = %d;", l->slice_end);
            break;
        default:
            fprintf(f, "; type = \"%s\";", dse_layer_type_str(l->type));
            break;
        }
        write_inputs(f, net, i, l);
        fputs(" }", f);
    }
    fputs("\n);\n", f);
    if (ferror(f)) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "write error");
    return DSE_OK;
}
