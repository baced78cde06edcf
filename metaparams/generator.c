/* generator.c: metaparameters -> Fire-module network (thesis §5.5-5.6, Table 5.1).
 * Hot path of design-space sweeps: no printf-family calls, no allocation once the
 * network's layer array has grown to size. */
#include "metaparams/metaparams.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct dse_mp dse_mp_squeezenet_v10(void) {
    struct dse_mp mp = {
#define DSE_MP(E, f, g, T, def, lo, hi, bnd, id, doc) .f = def,
#include "metaparams/mp.def"
#undef DSE_MP
    };
    return mp;
}

#define SECTION_FIRE  "metaparams"
#define SECTION_INPUT "macro"
#define SECTION_CONV1 "macro"
#define SECTION_BODY  "macro"

const struct dse_mp_info dse_mp_info[DSE_MP_COUNT] = {
#define DSE_MP(E, f, g, T, def, lo_, hi_, bnd_, id_, doc_)                                           \
    [DSE_MP_##E] = { .key = #f, .section = SECTION_##g, .group = DSE_MP_GROUP_##g,                  \
                     .type = DSE_MP_TYPE_##T, .lo = lo_, .hi = hi_, .bnd = DSE_MP_BND_##bnd_,         \
                     .id = DSE_MP_ID_##id_, .doc = doc_ },
#include "metaparams/mp.def"
#undef DSE_MP
};

int dse_mp_find(const char *key) {
    for (int k = 0; key && k < DSE_MP_COUNT; k++)
        if (!strcmp(key, dse_mp_info[k].key)) return k;
    return -1;
}

#define GET_INT(f)    v.num = mp->f
#define GET_REAL(f)   v.num = mp->f
#define GET_BYPASS(f) v.num = (double)mp->f
#define GET_POOLS(f)  v.mask = mp->f

struct dse_mp_value dse_mp_get(const struct dse_mp *mp, enum dse_mp_key k) {
    struct dse_mp_value v = { .num = 0, .mask = 0 };
    switch (k) {
#define DSE_MP(E, f, g, T, def, lo, hi, bnd, id, doc) case DSE_MP_##E: GET_##T(f); break;
#include "metaparams/mp.def"
#undef DSE_MP
    case DSE_MP_COUNT: break;
    }
    return v;
}

#define SET_INT(f)    mp->f = (int)v.num
#define SET_REAL(f)   mp->f = v.num
#define SET_BYPASS(f) mp->f = (enum dse_bypass)(int)v.num
#define SET_POOLS(f)  mp->f = v.mask

void dse_mp_set(struct dse_mp *mp, enum dse_mp_key k, struct dse_mp_value v) {
    switch (k) {
#define DSE_MP(E, f, g, T, def, lo, hi, bnd, id, doc) case DSE_MP_##E: SET_##T(f); break;
#include "metaparams/mp.def"
#undef DSE_MP
    case DSE_MP_COUNT: break;
    }
}

int dse_mp_is_default(const struct dse_mp *mp, enum dse_mp_key k) {
    struct dse_mp d = dse_mp_squeezenet_v10();
    struct dse_mp_value a = dse_mp_get(mp, k), b = dse_mp_get(&d, k);
    return a.num == b.num && a.mask == b.mask;
}

/* Round half up: 0.5 * 128 = 64 exactly, 0.01 * 128 = 1.28 -> 1, 0.125 * 96 = 12. */
static int round_half_up(double x) { return (int)floor(x + 0.5); }

struct dse_fire_filters dse_mp_fire_filters(const struct dse_mp *mp, int i) {
    struct dse_fire_filters f;
    /* e_i = base_e + incr_e * floor(i / freq); thesis §5.5. Integer division intended. */
    f.expand    = mp->base_e + mp->incr_e * (i / mp->freq);
    f.expand3x3 = round_half_up(mp->pct3x3 * f.expand);
    f.expand1x1 = f.expand - f.expand3x3;
    f.squeeze   = round_half_up(mp->sr * f.expand);
    if (f.squeeze < 1) f.squeeze = 1; /* a Fire module needs at least one squeeze filter */
    return f;
}

/* The range of metaparameter k, as "0 < sr <= 1" (REAL) or "1 to 60" (INT). */
static void range_str(enum dse_mp_key k, char *buf, size_t size) {
    const struct dse_mp_info *in = &dse_mp_info[k];
    if (in->type == DSE_MP_TYPE_REAL)
        snprintf(buf, size, "%g %s %s %s %g", in->lo, in->bnd == DSE_MP_BND_LO_OPEN ? "<" : "<=", in->key,
                 in->bnd == DSE_MP_BND_HI_OPEN ? "<" : "<=", in->hi);
    else
        snprintf(buf, size, "%d to %d", (int)in->lo, (int)in->hi);
}

/* Does metaparameter k of mp lie in its range? (NaN does not.) */
static int in_range(const struct dse_mp *mp, enum dse_mp_key k) {
    const struct dse_mp_info *in = &dse_mp_info[k];
    struct dse_mp_value v = dse_mp_get(mp, k);
    if (in->type == DSE_MP_TYPE_POOLS) /* conv1 and fire2 .. fire<fires+1> */
        return (v.mask & ~(DSE_MP_POOL_CONV1 | (((uint64_t)2 << (mp->fires + 1)) - 4))) == 0;
    return (in->bnd == DSE_MP_BND_LO_OPEN ? v.num > in->lo : v.num >= in->lo) &&
           (in->bnd == DSE_MP_BND_HI_OPEN ? v.num < in->hi : v.num <= in->hi);
}

enum dse_status dse_mp_check(const struct dse_mp *mp, const char **key, struct dse_err *err) {
    const char *dummy;
    char range[64];
    if (!key) key = &dummy;
    *key = NULL;
    for (int k = 0; k < DSE_MP_COUNT; k++) {
        const struct dse_mp_info *in = &dse_mp_info[k];
        if (in_range(mp, (enum dse_mp_key)k)) continue;
        *key = in->key;
        double v = dse_mp_get(mp, (enum dse_mp_key)k).num;
        range_str((enum dse_mp_key)k, range, sizeof range);
        switch (in->type) {
        case DSE_MP_TYPE_INT:
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s = %d is out of range; expected %s", in->key,
                               (int)v, range);
        case DSE_MP_TYPE_REAL:
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s = %g is out of range; expected %s", in->key, v,
                               range);
        case DSE_MP_TYPE_BYPASS:
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s = %d; expected none, simple or complex", in->key,
                               (int)v);
        case DSE_MP_TYPE_POOLS:
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s names a Fire module past the last one (fire%d)",
                               in->key, mp->fires + 1);
        }
    }
    /* Largest expand count, without overflow: base_e + incr_e * floor((fires-1)/freq). */
    int64_t emax = mp->base_e + (int64_t)mp->incr_e * ((mp->fires - 1) / mp->freq);
    if (emax > DSE_DIM_MAX) {
        *key = dse_mp_info[DSE_MP_INCR_E].key;
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "the last Fire module would have %lld expand filters; "
                           "at most %d", (long long)emax, DSE_DIM_MAX);
    }
    return DSE_OK;
}

/* Layer names from a prefix and a number, without snprintf. */
static void name_num(char *dst, const char *prefix, int k) {
    char digits[12];
    int n = 0;
    size_t lp = strlen(prefix);
    do digits[n++] = (char)('0' + k % 10); while ((k /= 10) > 0);
    memcpy(dst, prefix, lp);
    for (int i = 0; i < n; i++) dst[lp + (size_t)i] = digits[n - 1 - i];
    dst[lp + (size_t)n] = '\0';
}

/* Append a layer of type t named prefix<k> (or name, when prefix is NULL). */
static struct dse_layer *push(struct dse_net *net, enum dse_layer_type t, const char *prefix, int k,
                              const char *name, struct dse_err *err) {
    struct dse_layer *l = dse_net_push(net, t, err);
    if (!l) return NULL;
    if (prefix) name_num(l->name, prefix, k);
    else memcpy(l->name, name, strlen(name) + 1);
    return l;
}

static enum dse_status add_pool(struct dse_net *net, int k, struct dse_err *err) {
    struct dse_layer *l = push(net, DSE_LAYER_MAXPOOL, "pool", k, NULL, err);
    if (!l) return DSE_ERR_NOMEM;
    l->kernel_h = l->kernel_w = 3;
    l->stride_h = l->stride_w = 2;
    return dse_net_commit(net, err);
}

enum dse_status dse_mp_build(const struct dse_mp *mp, struct dse_net *net, struct dse_err *err) {
    enum dse_status st;
    struct dse_layer *l;
    if ((st = dse_mp_check(mp, NULL, err))) return st;
    net->n_layers = 0;
    net->in_c = mp->input_c, net->in_h = mp->input_h, net->in_w = mp->input_w;

    if (!(l = push(net, DSE_LAYER_CONV, NULL, 0, "conv1", err))) return DSE_ERR_NOMEM;
    l->num_output = mp->conv1_filters;
    l->kernel_h = l->kernel_w = mp->conv1_kernel;
    l->stride_h = l->stride_w = mp->conv1_stride;
    l->pad_h = l->pad_w = mp->conv1_pad;
    if ((st = dse_net_commit(net, err))) return st;
    if (!(l = push(net, DSE_LAYER_RELU, NULL, 0, "relu_conv1", err))) return DSE_ERR_NOMEM;
    l->in_place = 1;
    if ((st = dse_net_commit(net, err))) return st;
    if ((mp->pools & DSE_MP_POOL_CONV1) && (st = add_pool(net, 1, err))) return st;

    int in_c = mp->conv1_filters;
    for (int i = 0; i < mp->fires; i++) {
        struct dse_fire_filters ff = dse_mp_fire_filters(mp, i);
        struct dse_fire f;
        name_num(f.name, "fire", i + 2);
        f.line      = 0;
        f.squeeze   = ff.squeeze;
        f.expand1x1 = ff.expand1x1;
        f.expand3x3 = ff.expand3x3;
        f.bypass    = mp->bypass;
        if (mp->bypass == DSE_BYPASS_SIMPLE && in_c != ff.expand)
            f.bypass = DSE_BYPASS_NONE; /* simple bypass only where channels match */
        if ((st = dse_net_add_fire(net, &f, net->n_layers - 1, err))) return st;
        in_c = ff.expand;
        if (mp->fire_dropout > 0.0) { /* in place on the module's output, before its pool */
            if (!(l = push(net, DSE_LAYER_DROPOUT, "drop_fire", i + 2, NULL, err))) return DSE_ERR_NOMEM;
            l->dropout_ratio = (float)mp->fire_dropout;
            l->in_place = 1;
            if ((st = dse_net_commit(net, err))) return st;
        }
        if ((mp->pools & DSE_MP_POOL_FIRE(i + 2)) && (st = add_pool(net, i + 2, err))) return st;
    }
    int last = mp->fires + 2; /* conv10 in SqueezeNet */
    if (mp->dropout > 0.0) {
        if (!(l = push(net, DSE_LAYER_DROPOUT, "drop", last - 1, NULL, err))) return DSE_ERR_NOMEM;
        l->dropout_ratio = (float)mp->dropout;
        l->in_place = 1;
        if ((st = dse_net_commit(net, err))) return st;
    }
    if (!(l = push(net, DSE_LAYER_CONV, "conv", last, NULL, err))) return DSE_ERR_NOMEM;
    l->num_output = mp->classes;
    l->kernel_h = l->kernel_w = 1;
    if ((st = dse_net_commit(net, err))) return st;
    if (!(l = push(net, DSE_LAYER_RELU, "relu_conv", last, NULL, err))) return DSE_ERR_NOMEM;
    l->in_place = 1;
    if ((st = dse_net_commit(net, err))) return st;
    if (!(l = push(net, DSE_LAYER_AVGPOOL, "pool", last, NULL, err))) return DSE_ERR_NOMEM;
    l->global = 1;
    if ((st = dse_net_commit(net, err))) return st;
    if (!push(net, DSE_LAYER_SOFTMAX_LOSS, NULL, 0, "loss", err)) return DSE_ERR_NOMEM;
    if ((st = dse_net_commit(net, err))) return st;
    return dse_net_infer(net, NULL, err);
}

void dse_mp_pools_str(uint64_t pools, char *buf, int size) {
    char tmp[64 * 8], *p = tmp; /* at most 63 positions of at most 7 characters */
    for (int k = 0; k < 64; k++) {
        if (!(pools & ((uint64_t)1 << k)) || k == 1) continue;
        if (p > tmp) *p++ = ',';
        if (k == 0) {
            memcpy(p, "conv1", 5), p += 5;
        } else {
            name_num(p, "fire", k);
            p += strlen(p);
        }
    }
    int n = (int)(p - tmp) < size - 1 ? (int)(p - tmp) : size - 1;
    memcpy(buf, tmp, (size_t)n);
    buf[n] = '\0';
}

const char *dse_mp_value_str(enum dse_mp_key k, struct dse_mp_value v, char *buf, size_t size) {
    switch (dse_mp_info[k].type) {
    case DSE_MP_TYPE_INT:    snprintf(buf, size, "%d", (int)v.num); break;
    case DSE_MP_TYPE_REAL:   dse_fmt_real(buf, size, v.num); break;
    case DSE_MP_TYPE_BYPASS: snprintf(buf, size, "%s", dse_bypass_str((enum dse_bypass)(int)v.num)); break;
    case DSE_MP_TYPE_POOLS:  dse_mp_pools_str(v.mask, buf, size > INT_MAX ? INT_MAX : (int)size); break;
    }
    return buf;
}

int dse_mp_pools_parse(const char *s, uint64_t *out) {
    uint64_t m = 0;
    while (*s) {
        size_t n = strcspn(s, ",");
        if (n == 5 && !strncmp(s, "conv1", 5)) {
            m |= DSE_MP_POOL_CONV1;
        } else if (n > 4 && n < 7 && !strncmp(s, "fire", 4)) {
            int k = 0;
            for (size_t i = 4; i < n; i++) {
                if (s[i] < '0' || s[i] > '9') return -1;
                k = k * 10 + (s[i] - '0');
            }
            if (k < 2 || k > 63) return -1;
            m |= DSE_MP_POOL_FIRE(k);
        } else if (n > 0) {
            return -1;
        }
        s += n;
        if (*s == ',') s++;
    }
    *out = m;
    return 0;
}
