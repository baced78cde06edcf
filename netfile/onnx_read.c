/* onnx_read.c: an ONNX model read into a dse network (netfile.h; docs/onnx.md), the first
 * part of issue #34: the graph's nodes become dse layers (the op table `ops` below; the
 * functions of the ops issue #34 added later are in netfile/onnx_ops.c), its
 * initializers and Constant nodes are the layers' weights and the shapes some ops read,
 * and the first graph input that is not an initializer is the network input. Read with
 * base/pb.h's wire reader; every field number is onnx/onnx.proto's, named beside it as
 * netfile/onnx.c (the writer) names them. Costs come from dse's own layers and shape
 * inference (docs/conventions.md), so each weighted layer's initializers are checked
 * against the shape the layer infers: params equal the initializers' element counts. */
#include "netfile/onnx_impl.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"

/* ---- small helpers ------------------------------------------------------------------- */

int str_is(struct str s, const char *lit) {
    size_t n = strlen(lit);
    return s.n == n && !memcmp(s.p, lit, n);
}

static int str_eq(struct str a, struct str b) {
    return a.n == b.n && (!a.n || !memcmp(a.p, b.p, a.n));
}

/* Names are looked up by it, then compared byte for byte (issue #34 asks >= 10^5 analyses
 * per second of a SqueezeNet read from ONNX: bench_analysis). Eight bytes a step, each
 * mixed by a multiply (MurmurHash3's fmix64 constants): a byte-at-a-time hash (FNV-1a)
 * waited a multiply per byte, a sixth of a read's time. */
static uint32_t str_hash(struct str s) {
    uint64_t h = 0x9e3779b97f4a7c15u ^ s.n, w;
    size_t i = 0;
    for (; i + 8 <= s.n; i += 8) {
        memcpy(&w, s.p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    for (w = 0; i < s.n; i++) w = w << 8 | (uint8_t)s.p[i];
    h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
    return (uint32_t)(h ^ h >> 32);
}

static struct str str_of(const struct dse_pb_field *f) {
    return (struct str){ .p = (const char *)f->data, .n = f->len };
}

/* The printf precision that prints s (at most 200 bytes of it). */
int sn(struct str s) {
    return s.n > 200 ? 200 : (int)s.n;
}

static void str_copy(char *dst, size_t cap, struct str s) {
    size_t n = s.n < cap - 1 ? s.n : cap - 1;
    memcpy(dst, s.p, n);
    dst[n] = '\0';
}

/* An error about the node being read: "path: node 'name' (Op, opset N): ...". */
__attribute__((format(printf, 3, 4))) enum dse_status node_fail(struct rd *r, enum dse_status code,
                                                                       const char *fmt, ...) {
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const struct node *nd = r->cur;
    struct str name = nd->name.n ? nd->name : nd->n_out ? nd->out[0] : (struct str){ .p = "", .n = 0 };
    return dse_err_set(r->err, code, r->path, 0, "node '%.*s' (%.*s, opset %d): %s", sn(name), name.p, sn(nd->op),
                       nd->op.p, r->opset, what);
}

static enum dse_status malformed(struct rd *r, const char *what) {
    return dse_err_set(r->err, DSE_ERR_CONFIG, r->path, 0, "not a well-formed ONNX model: %s", what);
}

static enum dse_status nomem(struct rd *r) {
    return dse_err_set(r->err, DSE_ERR_NOMEM, r->path, 0, "out of memory");
}

/* Every field of a message and of its LEN fields named in nested[] (one level) well formed. */
static int well_formed(const uint8_t *p, size_t n, int nested) {
    struct dse_pb_reader rr;
    struct dse_pb_field f;
    int got;
    dse_pb_reader_init(&rr, p, n);
    while ((got = dse_pb_next(&rr, &f)) == 1)
        if (nested && f.field == nested && f.wire == DSE_PB_LEN && !well_formed(f.data, f.len, 0)) return 0;
    return got == 0;
}

/* ---- tensors and values ---------------------------------------------------------------- */

static enum dse_status read_tensor(struct rd *r, const uint8_t *p, size_t n, struct tensor *t) {
    struct dse_pb_reader rr;
    struct dse_pb_field f;
    size_t nd = 0;
    int got;
    *t = (struct tensor){ .msg = p, .len = n, .count = 1 };
    dse_pb_reader_init(&rr, p, n);
    while ((got = dse_pb_next(&rr, &f)) == 1) {
        if (f.field == TENSOR_DIMS && dse_pb_varints(&f, t->dims, MAX_DIMS, &nd))
            return malformed(r, "a tensor of more than 8 dimensions");
        if (f.field == TENSOR_TYPE && f.wire == DSE_PB_VARINT) t->type = (int)(f.v & 0xff);
        if (f.field == TENSOR_NAME && f.wire == DSE_PB_LEN) t->name = str_of(&f);
    }
    if (got < 0) return malformed(r, "a tensor's bytes");
    t->nd = (int)nd;
    for (int i = 0; i < t->nd; i++) {
        if (t->dims[i] < 0 || t->dims[i] > INT32_MAX) return malformed(r, "a tensor dimension out of range");
        if (t->dims[i] && t->count > INT64_MAX / 4 / t->dims[i]) return malformed(r, "a tensor too large");
        t->count *= t->dims[i];
    }
    return DSE_OK;
}

/* An int64 tensor's values (raw_data or int64_data) into out[cap]; -1 if it holds others. */
int tensor_int64s(const struct tensor *t, int64_t *out, size_t cap, size_t *n) {
    struct dse_pb_reader rr;
    struct dse_pb_field f;
    *n = 0;
    if (t->type != ELEM_INT64 || t->count > (int64_t)cap) return -1;
    if (t->computed) {
        memcpy(out, t->iv, sizeof *out * (size_t)t->count), *n = (size_t)t->count;
        return 0;
    }
    dse_pb_reader_init(&rr, t->msg, t->len);
    while (dse_pb_next(&rr, &f) == 1) {
        if (f.field == TENSOR_INT64_DATA && dse_pb_varints(&f, out, cap, n)) return -1;
        if (f.field == TENSOR_RAW && f.wire == DSE_PB_LEN) {
            if (*n || f.len != (size_t)t->count * 8) return -1; /* once, alone: a repeated field would overrun out */
            for (size_t i = 0; i < f.len / 8; i++) {
                uint64_t u = 0;
                for (int b = 7; b >= 0; b--) u = u << 8 | f.data[i * 8 + (size_t)b];
                out[(*n)++] = (int64_t)u;
            }
        }
    }
    return (int64_t)*n == t->count ? 0 : -1;
}

/* The newest value named name, NULL if none. */
struct value *find_value(struct rd *r, struct str name) {
    const uint32_t h = str_hash(name), m = (uint32_t)r->cap_vt - 1;
    for (uint32_t k = h & m; r->cap_vt && r->vt[k]; k = (k + 1) & m) {
        struct value *v = &r->v[r->vt[k] - 1];
        if (v->hash == h && str_eq(v->name, name)) return v;
    }
    return NULL;
}

/* Value i into the table, in the place of an older value of its name. */
static void vt_put(struct rd *r, int i) {
    const struct value *v = &r->v[i];
    const uint32_t m = (uint32_t)r->cap_vt - 1;
    uint32_t k = v->hash & m;
    while (r->vt[k] && (r->v[r->vt[k] - 1].hash != v->hash || !str_eq(r->v[r->vt[k] - 1].name, v->name)))
        k = (k + 1) & m;
    r->vt[k] = i + 1;
}

enum dse_status add_value(struct rd *r, struct value v) {
    if (r->nv == r->cap_v) {
        int cap = r->cap_v ? 2 * r->cap_v : 64;
        struct value *nv = realloc(r->v, sizeof *nv * (size_t)cap);
        if (!nv) return nomem(r);
        r->v = nv, r->cap_v = cap;
    }
    v.hash = str_hash(v.name);
    r->v[r->nv++] = v;
    if (2 * r->nv > r->cap_vt) { /* a table twice the size, the values put in order: the newest wins */
        int cap = r->cap_vt ? 2 * r->cap_vt : 128;
        int *vt = calloc((size_t)cap, sizeof *vt);
        if (!vt) return nomem(r);
        free(r->vt);
        r->vt = vt, r->cap_vt = cap;
        for (int i = 0; i < r->nv; i++) vt_put(r, i);
    } else {
        vt_put(r, r->nv - 1);
    }
    return DSE_OK;
}

/* Input k of the node as a layer's output (or the network input): *layer, *rank, and the
 * padding Pad nodes put around it into pad[4] (NULL: a padded value is refused). */
static enum dse_status in_padded(struct rd *r, const struct node *nd, int k, int *layer, int *rank, int64_t *pad) {
    if (k >= nd->n_in || !nd->in[k].n) return node_fail(r, DSE_ERR_CONFIG, "input %d is missing", k + 1);
    const struct value *v = find_value(r, nd->in[k]);
    if (!v)
        return node_fail(r, DSE_ERR_CONFIG, "input '%.*s' is made by no earlier node (graph nodes must be in "
                         "topological order)", sn(nd->in[k]), nd->in[k].p);
    if (v->kind != VAL_LAYER)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "input '%.*s' is a constant; dse reads it only as weights",
                         sn(nd->in[k]), nd->in[k].p);
    if (!pad && (v->pad[0] || v->pad[1] || v->pad[2] || v->pad[3]))
        return node_fail(r, DSE_ERR_UNSUPPORTED, "its input '%.*s' comes from a Pad; dse reads a Pad only before "
                         "a Conv or a pooling", sn(nd->in[k]), nd->in[k].p);
    if (v->rank == 5 && !r->read5)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "its input '%.*s' is 5-d; dse reads a 5-d value only as a channel "
                         "shuffle (Reshape, Transpose, Reshape)", sn(nd->in[k]), nd->in[k].p);
    if (pad) memcpy(pad, v->pad, sizeof v->pad);
    *layer = v->layer;
    if (rank) *rank = v->rank;
    return DSE_OK;
}

enum dse_status in_layer(struct rd *r, const struct node *nd, int k, int *layer, int *rank) {
    return in_padded(r, nd, k, layer, rank, NULL);
}

/* Input k as a tensor (an initializer or a Constant); NULL with err set if it is not one. */
const struct tensor *in_tensor(struct rd *r, const struct node *nd, int k, const char *what) {
    if (k >= nd->n_in || !nd->in[k].n) {
        node_fail(r, DSE_ERR_CONFIG, "its %s (input %d) is missing", what, k + 1);
        return NULL;
    }
    const struct value *v = find_value(r, nd->in[k]);
    if (!v || v->kind != VAL_TENSOR) {
        node_fail(r, DSE_ERR_UNSUPPORTED, "its %s '%.*s' is not an initializer or a Constant; dse reads weights "
                  "and shapes only from those", what, sn(nd->in[k]), nd->in[k].p);
        return NULL;
    }
    return &r->t[v->tensor];
}

int has_in(const struct node *nd, int k) {
    return k < nd->n_in && nd->in[k].n;
}

/* ---- attributes ------------------------------------------------------------------------ */

/* The attribute named name (its AttributeProto's bytes in *a): the first with a name field
 * that says name; 0 if the node has none. */
int attr(const struct node *nd, const char *name, struct dse_pb_field *a) {
    struct dse_pb_reader rr, ar;
    struct dse_pb_field f, g;
    const size_t n = strlen(name); /* once, not once an attribute */
    for (int i = 0; i < nd->n_attr; i++)
        if (nd->attr[i].name.n == n && !memcmp(nd->attr[i].name.p, name, n)) {
            *a = nd->attr[i].a;
            return 1;
        }
    if (nd->n_attr >= 0) return 0;
    dse_pb_reader_init(&rr, nd->msg, nd->len);
    while (dse_pb_next(&rr, &f) == 1) {
        if (f.field != NODE_ATTR || f.wire != DSE_PB_LEN) continue;
        dse_pb_reader_init(&ar, f.data, f.len);
        while (dse_pb_next(&ar, &g) == 1)
            if (g.field == ATTR_NAME && g.wire == DSE_PB_LEN && str_is(str_of(&g), name)) {
                *a = f;
                return 1;
            }
    }
    return 0;
}

/* Field `field` of attribute a (its last occurrence); 0 if absent. */
static int attr_field(const struct dse_pb_field *a, int field, struct dse_pb_field *out) {
    struct dse_pb_reader rr;
    struct dse_pb_field g;
    int found = 0;
    dse_pb_reader_init(&rr, a->data, a->len);
    while (dse_pb_next(&rr, &g) == 1)
        if (g.field == field) *out = g, found = 1;
    return found;
}

/* An int attribute in [lo, hi], def if absent. */
enum dse_status attr_int(struct rd *r, const struct node *nd, const char *name, int64_t def, int64_t lo,
                                int64_t hi, int64_t *out) {
    struct dse_pb_field a, g;
    *out = def;
    if (!attr(nd, name, &a)) return DSE_OK;
    if (!attr_field(&a, ATTR_I, &g) || g.wire != DSE_PB_VARINT)
        return node_fail(r, DSE_ERR_CONFIG, "attribute '%s' is not an int", name);
    *out = (int64_t)g.v;
    if (*out < lo || *out > hi)
        return node_fail(r, DSE_ERR_CONFIG, "attribute '%s' is %lld; expected %lld to %lld", name, (long long)*out,
                         (long long)lo, (long long)hi);
    return DSE_OK;
}

/* An int list attribute of exactly n values, each in [lo, hi]; *have 0 (and out
 * untouched) if absent. */
enum dse_status attr_ints(struct rd *r, const struct node *nd, const char *name, int n, int64_t lo,
                                 int64_t hi, int64_t *out, int *have) {
    struct dse_pb_reader rr;
    struct dse_pb_field a, g;
    int64_t v[MAX_DIMS];
    size_t got = 0;
    *have = 0;
    if (!attr(nd, name, &a)) return DSE_OK;
    dse_pb_reader_init(&rr, a.data, a.len);
    while (dse_pb_next(&rr, &g) == 1)
        if (g.field == ATTR_INTS && dse_pb_varints(&g, v, MAX_DIMS, &got))
            return node_fail(r, DSE_ERR_CONFIG, "attribute '%s' holds more than %d values", name, MAX_DIMS);
    if ((int)got != n)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "attribute '%s' holds %d values; dse reads 2-d images (%d)", name,
                         (int)got, n);
    for (int i = 0; i < n; i++)
        if (v[i] < lo || v[i] > hi)
            return node_fail(r, DSE_ERR_CONFIG, "attribute '%s' has %lld; expected %lld to %lld", name,
                             (long long)v[i], (long long)lo, (long long)hi);
    memcpy(out, v, sizeof *v * (size_t)n);
    *have = 1;
    return DSE_OK;
}

float attr_float(const struct node *nd, const char *name, float def) {
    struct dse_pb_field a, g;
    if (!attr(nd, name, &a) || !attr_field(&a, ATTR_F, &g) || g.wire != DSE_PB_I32) return def;
    return dse_pb_as_float(&g);
}

/* A string attribute ("" if absent) into out[cap]. */
void attr_str(const struct node *nd, const char *name, char *out, size_t cap) {
    struct dse_pb_field a, g;
    out[0] = '\0';
    if (attr(nd, name, &a) && attr_field(&a, ATTR_S, &g) && g.wire == DSE_PB_LEN) str_copy(out, cap, str_of(&g));
}

/* ---- layers ------------------------------------------------------------------------------ */

/* A layer named name (of hash h) among those committed: by the names' table. */
static int layer_named(const struct rd *r, const char *name, uint32_t h) {
    const uint32_t m = (uint32_t)r->cap_lt - 1;
    for (uint32_t k = h & m; r->lt[k]; k = (k + 1) & m)
        if (r->name_h[r->lt[k] - 1] == h && !strcmp(r->net->layers[r->lt[k] - 1].name, name)) return 1;
    return 0;
}

/* A new layer of type t named after the node (its name, else its first output's; a name a
 * layer already has: the output's), reading `input`; commit with finish. A type that may
 * work in place does, as Caffe's ReLU after a conv (so activations count as for a .cfg);
 * dse_net_commit turns it out of place where a later layer reads its input. */
struct dse_layer *begin_layer(struct rd *r, const struct node *nd, enum dse_layer_type t, int input) {
    char name[DSE_NAME_MAX];
    struct str s = nd->name.n ? nd->name : nd->out[0];
    str_copy(name, sizeof name, s);
    uint32_t h = str_hash((struct str){ .p = name, .n = strlen(name) });
    if (layer_named(r, name, h)) { /* dse_net_find, by hash */
        str_copy(name, sizeof name, s = nd->out[0]);
        h = str_hash((struct str){ .p = name, .n = strlen(name) });
    }
    if (s.n >= DSE_NAME_MAX) { /* never cut short, as in a .cfg or .prototxt */
        node_fail(r, DSE_ERR_CONFIG, "its name '%.*s' is over %d characters", sn(s), s.p, DSE_NAME_MAX - 1);
        return NULL;
    }
    if (r->net->n_layers >= r->cap_lt / 2) { /* more layers than read_graph counted room for */
        dse_err_set(r->err, DSE_ERR_INTERNAL, r->path, 0, "more layers than the graph's nodes make");
        return NULL;
    }
    struct dse_layer *l = dse_net_push(r->net, t, r->err);
    if (!l) return NULL;
    memcpy(l->name, name, sizeof name);
    r->name_h[r->net->n_layers] = h; /* the slot dse_net_commit (finish) fills */
    l->n_inputs = 1;
    l->inputs[0] = input;
    l->in_place = input != DSE_INPUT_DATA && dse_layer_type_in_place(t);
    return l;
}

/* Commit the pushed layer; the node's first output is its value, of rank `rank`. */
enum dse_status finish(struct rd *r, const struct node *nd, int rank, int weight, int bias) {
    enum dse_status st = dse_net_commit(r->net, r->err);
    if (st) { /* the layer table's refusal, said of the node */
        char msg[sizeof r->err->msg];
        snprintf(msg, sizeof msg, "%s", r->err->msg);
        return node_fail(r, st, "%s", msg);
    }
    const int i = r->net->n_layers - 1;
    r->weight[i] = weight, r->bias[i] = bias, r->matmul[i] = 0;
    r->src[i] = (struct node_ref){ .msg = nd->msg, .len = nd->len };
    /* an initializer an earlier layer reads too (tied weights): counted there */
    if (weight >= 0 && r->t[weight].read) r->net->layers[i].shared |= 1;
    if (bias >= 0 && r->t[bias].read) r->net->layers[i].shared |= 2;
    if (weight >= 0) r->t[weight].read = 1;
    if (bias >= 0) r->t[bias].read = 1;
    const uint32_t h = r->name_h[i], m = (uint32_t)r->cap_lt - 1; /* into the names' table */
    uint32_t k = h & m;
    while (r->lt[k] && (r->name_h[r->lt[k] - 1] != h || strcmp(r->net->layers[r->lt[k] - 1].name,
                                                              r->net->layers[i].name)))
        k = (k + 1) & m;
    if (r->lt[k]) r->dup_name = 1; /* dse_net_check_names names it, as for a .cfg */
    else r->lt[k] = i + 1;
    return add_value(r, (struct value){ .name = nd->out[0], .kind = VAL_LAYER, .layer = i, .rank = rank });
}

/* The shapes of the layers so far (for ops whose reading needs their input's size). */
enum dse_status shape_of(struct rd *r, int layer, int *c, int *h, int *w) {
    if (layer == DSE_INPUT_DATA) {
        *c = r->net->in_c, *h = r->net->in_h, *w = r->net->in_w;
        return DSE_OK;
    }
    enum dse_status st = dse_net_infer(r->net, r->path, r->err);
    if (st) return st;
    const struct dse_layer *l = &r->net->layers[layer];
    *c = l->out_c, *h = l->out_h, *w = l->out_w;
    return DSE_OK;
}

/* ONNX's auto_pad: NOTSET (pads as given), VALID (none), SAME_UPPER/SAME_LOWER (out =
 * ceil(in / stride)): the total padding of each dimension into pads[4]. 0 = NOTSET. */
static enum dse_status auto_pad(struct rd *r, const struct node *nd, int input, const int64_t k_eff[2],
                                const int64_t stride[2], const int64_t pre[4], int64_t pads[4]) {
    char mode[32];
    attr_str(nd, "auto_pad", mode, sizeof mode);
    if (!mode[0] || !strcmp(mode, "NOTSET")) {
        for (int d = 0; d < 4; d++) pads[d] += pre[d];
        return DSE_OK;
    }
    if (pre[0] || pre[1] || pre[2] || pre[3])
        return node_fail(r, DSE_ERR_UNSUPPORTED, "auto_pad '%s' on the output of a Pad", mode);
    if (!strcmp(mode, "VALID")) {
        memset(pads, 0, sizeof *pads * 4);
        return DSE_OK;
    }
    int upper = !strcmp(mode, "SAME_UPPER");
    if (!upper && strcmp(mode, "SAME_LOWER"))
        return node_fail(r, DSE_ERR_CONFIG, "auto_pad '%s' is not known; expected NOTSET, VALID, SAME_UPPER or "
                         "SAME_LOWER", mode);
    int c, hw[2];
    enum dse_status st = shape_of(r, input, &c, &hw[0], &hw[1]);
    if (st) return st;
    for (int d = 0; d < 2; d++) {
        int64_t out = (hw[d] + stride[d] - 1) / stride[d];
        int64_t total = (out - 1) * stride[d] + k_eff[d] - hw[d];
        if (total < 0) total = 0;
        pads[d] = upper ? total / 2 : total - total / 2;
        pads[d + 2] = total - pads[d];
    }
    return DSE_OK;
}

/* The dims of a weight: rank nd, each 1 to DSE_DIM_MAX. */
enum dse_status check_dims(struct rd *r, const struct tensor *t, int nd, const char *what) {
    if (t->nd != nd)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "its %s '%.*s' has %d dimensions; dse reads %d", what, sn(t->name),
                         t->name.p, t->nd, nd);
    for (int i = 0; i < nd; i++)
        if (t->dims[i] < 1 || t->dims[i] > DSE_DIM_MAX)
            return node_fail(r, DSE_ERR_CONFIG, "its %s '%.*s' has dimension %lld; expected 1 to %d", what,
                             sn(t->name), t->name.p, (long long)t->dims[i], DSE_DIM_MAX);
    return DSE_OK;
}

/* A bias: its element count must be n. */
enum dse_status check_bias(struct rd *r, const struct tensor *t, int64_t n) {
    if (t->count != n)
        return node_fail(r, DSE_ERR_SHAPE, "its bias '%.*s' holds %lld values; the layer has %lld outputs",
                         sn(t->name), t->name.p, (long long)t->count, (long long)n);
    return DSE_OK;
}

static enum dse_status op_conv(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank, have;
    int64_t pre[4];
    enum dse_status st = in_padded(r, nd, 0, &in, &rank, pre);
    if (st) return st;
    const struct tensor *w = in_tensor(r, nd, 1, "weight"), *b = NULL;
    if (!w) return r->err->code;
    if ((st = check_dims(r, w, 4, "weight"))) return st;
    if (has_in(nd, 2) && (!(b = in_tensor(r, nd, 2, "bias")) || (st = check_bias(r, b, w->dims[0]))))
        return b ? st : r->err->code;
    int64_t kernel[2] = { w->dims[2], w->dims[3] }, stride[2] = { 1, 1 }, dil[2] = { 1, 1 }, pads[4] = { 0 }, k2[2],
            group;
    if ((st = attr_ints(r, nd, "kernel_shape", 2, 1, DSE_DIM_MAX, k2, &have))) return st;
    if (have && (k2[0] != kernel[0] || k2[1] != kernel[1]))
        return node_fail(r, DSE_ERR_SHAPE, "kernel_shape %lldx%lld differs from its weight's %lldx%lld",
                         (long long)k2[0], (long long)k2[1], (long long)kernel[0], (long long)kernel[1]);
    if ((st = attr_ints(r, nd, "strides", 2, 1, DSE_DIM_MAX, stride, &have)) ||
        (st = attr_ints(r, nd, "dilations", 2, 1, DSE_DIM_MAX, dil, &have)) ||
        (st = attr_ints(r, nd, "pads", 4, 0, DSE_DIM_MAX, pads, &have)) ||
        (st = attr_int(r, nd, "group", 1, 1, DSE_DIM_MAX, &group)))
        return st;
    const int64_t k_eff[2] = { dil[0] * (kernel[0] - 1) + 1, dil[1] * (kernel[1] - 1) + 1 };
    if ((st = auto_pad(r, nd, in, k_eff, stride, pre, pads))) return st;
    if (pads[0] != pads[2] || pads[1] != pads[3])
        return node_fail(r, DSE_ERR_UNSUPPORTED, "asymmetric pads [%lld, %lld, %lld, %lld]; a dse conv pads both "
                         "sides of a dimension alike", (long long)pads[0], (long long)pads[1], (long long)pads[2],
                         (long long)pads[3]);
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->num_output = (int)w->dims[0];
    l->kernel_h = (int)kernel[0], l->kernel_w = (int)kernel[1];
    l->stride_h = (int)stride[0], l->stride_w = (int)stride[1];
    l->dilation_h = (int)dil[0], l->dilation_w = (int)dil[1];
    l->pad_h = (int)pads[0], l->pad_w = (int)pads[1];
    l->groups = (int)group;
    l->bias = b != NULL;
    return finish(r, nd, 4, (int)(w - r->t), b ? (int)(b - r->t) : -1);
}

/* ONNX's pooling output size of one dimension (ceil_mode as onnxruntime: a last window
 * that would start in the end padding is dropped, as Caffe does). */
static int64_t onnx_pool_out(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int ceil_mode) {
    int64_t span = in + p0 + p1 - k;
    if (span < 0) return 0;
    int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (out - 1) * s >= in + p0) out--;
    return out;
}

/* Caffe's (docs/conventions.md, "Shapes"). */
static int64_t caffe_pool_out(int64_t in, int64_t k, int64_t s, int64_t pad, int any_pad, enum dse_round round) {
    int64_t span = in + 2 * pad - k;
    if (span < 0) return 0;
    int64_t out = (round == DSE_ROUND_CEIL ? (span + s - 1) / s : span / s) + 1;
    if (any_pad && (out - 1) * s >= in + pad) out--;
    return out;
}

/* MaxPool, AveragePool: ONNX's begin pads are Caffe's pad (the windows start at the same
 * places); its end pads and ceil_mode become Caffe's rounding where one of ceil and floor
 * gives ONNX's output size in both dimensions, as dse's exporter writes Caffe's pooling.
 * count_include_pad changes no cost and no shape. */
static enum dse_status op_pool(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank, have;
    int64_t pre[4];
    enum dse_status st = in_padded(r, nd, 0, &in, &rank, pre);
    if (st) return st;
    int64_t kernel[2], stride[2] = { 1, 1 }, dil[2] = { 1, 1 }, pads[4] = { 0 }, ceil_mode, cip;
    if ((st = attr_ints(r, nd, "kernel_shape", 2, 1, DSE_DIM_MAX, kernel, &have))) return st;
    if (!have) return node_fail(r, DSE_ERR_CONFIG, "attribute 'kernel_shape' is missing");
    if ((st = attr_ints(r, nd, "strides", 2, 1, DSE_DIM_MAX, stride, &have)) ||
        (st = attr_ints(r, nd, "dilations", 2, 1, 1, dil, &have)) ||
        (st = attr_ints(r, nd, "pads", 4, 0, DSE_DIM_MAX, pads, &have)) ||
        (st = attr_int(r, nd, "ceil_mode", 0, 0, 1, &ceil_mode)) ||
        (st = attr_int(r, nd, "count_include_pad", 0, 0, 1, &cip)))
        return st;
    if ((st = auto_pad(r, nd, in, kernel, stride, pre, pads))) return st;
    enum dse_round round = ceil_mode ? DSE_ROUND_CEIL : DSE_ROUND_FLOOR;
    if (pads[0] != pads[2] || pads[1] != pads[3] || ceil_mode) { /* ceil: ONNX and Caffe drop a last window differently */
        int c, hw[2], fits[2] = { 1, 1 };
        if ((st = shape_of(r, in, &c, &hw[0], &hw[1]))) return st;
        for (int m = 0; m < 2; m++)
            for (int d = 0; d < 2; d++)
                fits[m] &= onnx_pool_out(hw[d], kernel[d], stride[d], pads[d], pads[d + 2], (int)ceil_mode) ==
                           caffe_pool_out(hw[d], kernel[d], stride[d], pads[d], pads[0] || pads[1],
                                          m ? DSE_ROUND_FLOOR : DSE_ROUND_CEIL);
        if (!fits[0] && !fits[1])
            return node_fail(r, DSE_ERR_UNSUPPORTED, "pads [%lld, %lld, %lld, %lld] on a %dx%d input give an output "
                             "size that no dse pooling (pad at both sides, ceil or floor) gives", (long long)pads[0],
                             (long long)pads[1], (long long)pads[2], (long long)pads[3], hw[0], hw[1]);
        round = fits[ceil_mode ? 0 : 1] ? round : fits[0] ? DSE_ROUND_CEIL : DSE_ROUND_FLOOR;
    }
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->kernel_h = (int)kernel[0], l->kernel_w = (int)kernel[1];
    l->stride_h = (int)stride[0], l->stride_w = (int)stride[1];
    l->pad_h = (int)pads[0], l->pad_w = (int)pads[1];
    l->round = round;
    return finish(r, nd, 4, -1, -1);
}

static enum dse_status op_global(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st) return st;
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->global = 1;
    return finish(r, nd, 4, -1, -1);
}

/* Relu, Sigmoid, Tanh, Dropout, Softmax: one input, the shape kept. */
static enum dse_status op_simple(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st) return st;
    if (op->type == DSE_LAYER_SOFTMAX) {
        int64_t axis;
        if ((st = attr_int(r, nd, "axis", r->opset < 13 ? 1 : -1, -rank, rank - 1, &axis))) return st;
        if (axis < 0) axis += rank;
        if (axis != 1 && !(r->opset < 13 && axis == rank - 1))
            return node_fail(r, DSE_ERR_UNSUPPORTED, "softmax over axis %lld of a rank-%d value; dse's softmax is "
                             "over the channels (axis 1)", (long long)axis, rank);
    }
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    if (op->type == DSE_LAYER_DROPOUT) l->dropout_ratio = attr_float(nd, "ratio", 0.5f);
    return finish(r, nd, rank, -1, -1);
}

static enum dse_status op_concat(struct rd *r, const struct node *nd, const struct op *op) {
    int in[DSE_MAX_INPUTS], rank = 4;
    enum dse_status st;
    if (nd->n_in < 1 || nd->n_in > DSE_MAX_INPUTS)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "%d inputs; dse's concat takes 1 to %d", nd->n_in,
                         DSE_MAX_INPUTS);
    for (int k = 0; k < nd->n_in; k++)
        if ((st = in_layer(r, nd, k, &in[k], &rank))) return st;
    int64_t axis;
    if ((st = attr_int(r, nd, "axis", 1, -rank, rank - 1, &axis))) return st;
    if (axis < 0) axis += rank;
    if (axis != 1)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "concat along axis %lld; dse concatenates channels (axis 1)",
                         (long long)axis);
    struct dse_layer *l = begin_layer(r, nd, op->type, in[0]);
    if (!l) return r->err->code;
    l->n_inputs = nd->n_in;
    memcpy(l->inputs, in, sizeof *in * (size_t)nd->n_in);
    return finish(r, nd, rank, -1, -1);
}

/* Add, Sum of computed values: eltwise sum. Add of a constant: the bias of the fc a MatMul
 * just made (PyTorch's Linear without Gemm). */
static enum dse_status op_add(struct rd *r, const struct node *nd, const struct op *op) {
    int in[DSE_MAX_INPUTS], rank = 4, done;
    enum dse_status st;
    if ((st = fold_arith(r, nd, &done)) || done) return st;
    if (nd->n_in > DSE_MAX_INPUTS || nd->n_in < 2)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "%d inputs; dse's eltwise sum takes 2 to %d", nd->n_in,
                         DSE_MAX_INPUTS);
    if (str_is(nd->op, "Add")) {
        for (int k = 0; k < 2; k++) {
            const struct value *a = find_value(r, nd->in[k]), *c = find_value(r, nd->in[1 - k]);
            if (!a || !c || a->kind != VAL_LAYER || c->kind != VAL_TENSOR) continue;
            const int i = a->layer;
            if (i != r->net->n_layers - 1 || i < 0 || !r->matmul[i] || r->net->layers[i].bias)
                return node_fail(r, DSE_ERR_UNSUPPORTED, "adds the constant '%.*s'; dse reads an Add of a constant "
                                 "only as the bias of the MatMul just before it", sn(nd->in[1 - k]),
                                 nd->in[1 - k].p);
            if ((st = check_bias(r, &r->t[c->tensor], r->net->layers[i].num_output))) return st;
            r->net->layers[i].bias = 1;
            r->bias[i] = c->tensor;
            if (r->t[c->tensor].read) r->net->layers[i].shared |= 2; /* finish's mark: an earlier layer's */
            r->t[c->tensor].read = 1;
            return add_value(r, (struct value){ .name = nd->out[0], .kind = VAL_LAYER, .layer = i, .rank = a->rank });
        }
    }
    for (int k = 0; k < nd->n_in; k++)
        if ((st = in_layer(r, nd, k, &in[k], &rank))) return st;
    struct dse_layer *l = begin_layer(r, nd, op->type, in[0]);
    if (!l) return r->err->code;
    l->n_inputs = nd->n_in;
    memcpy(l->inputs, in, sizeof *in * (size_t)nd->n_in);
    l->eltwise_op = DSE_ELTWISE_SUM;
    return finish(r, nd, rank, -1, -1);
}

/* Gemm (A x B^T + C as PyTorch's Linear writes it, or A x B + C) and MatMul: fc. */
static enum dse_status op_fc(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st) return st;
    const int gemm = str_is(nd->op, "Gemm");
    if (!gemm && rank != 2)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "a MatMul of a rank-%d value; dse reads MatMul as an fc on [N, K] "
                         "(after a Flatten or Reshape)", rank);
    const struct tensor *w = in_tensor(r, nd, 1, "weight"), *b = NULL;
    if (!w) return r->err->code;
    if ((st = check_dims(r, w, 2, "weight"))) return st;
    int64_t trans_a = 0, trans_b = 0;
    if (gemm && ((st = attr_int(r, nd, "transA", 0, 0, 0, &trans_a)) ||
                 (st = attr_int(r, nd, "transB", 0, 0, 1, &trans_b))))
        return st;
    const int64_t n_out = trans_b ? w->dims[0] : w->dims[1];
    if (gemm && has_in(nd, 2) && (!(b = in_tensor(r, nd, 2, "bias")) || (st = check_bias(r, b, n_out))))
        return b ? st : r->err->code;
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->num_output = (int)n_out;
    l->bias = b != NULL;
    if ((st = finish(r, nd, 2, (int)(w - r->t), b ? (int)(b - r->t) : -1))) return st;
    r->matmul[r->net->n_layers - 1] = !gemm;
    return DSE_OK;
}

static enum dse_status op_flatten(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st) return st;
    int64_t axis;
    if ((st = attr_int(r, nd, "axis", 1, -rank, rank, &axis))) return st;
    if (axis < 0) axis += rank;
    if (axis != 1)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "flatten from axis %lld; dse flattens from axis 1",
                         (long long)axis);
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    return finish(r, nd, 2, -1, -1);
}

/* Reshape to [N, K] (a flatten, as before an fc) or to [N, C, H, W] (0 copies, -1 inferred,
 * as dse's reshape); the batch dimension stays. */
static enum dse_status op_reshape(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank;
    r->read5 = 1;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    r->read5 = 0;
    if (st) return st;
    int64_t shape[MAX_DIMS];
    size_t n = 0;
    const struct tensor *s = in_tensor(r, nd, 1, "shape");
    if (!s) return r->err->code;
    if (tensor_int64s(s, shape, MAX_DIMS, &n))
        return node_fail(r, DSE_ERR_CONFIG, "its shape '%.*s' is not an int64 tensor of at most %d values",
                         sn(s->name), s->name.p, MAX_DIMS);
    if ((n == 5 || rank == 5) && (shape[0] == 0 || shape[0] == -1 || shape[0] == 1))
        return reshape5(r, nd, in, rank, shape, (int)n);
    if ((n != 2 && n != 4) || (shape[0] != 0 && shape[0] != -1 && shape[0] != 1))
        return node_fail(r, DSE_ERR_UNSUPPORTED, "a reshape to %d dimensions (batch %lld); dse reads [N, K] and "
                         "[N, C, H, W] with the batch kept", (int)n, n ? (long long)shape[0] : 0LL);
    for (size_t i = 1; i < n; i++)
        if (shape[i] < -1 || shape[i] > DSE_DIM_MAX)
            return node_fail(r, DSE_ERR_CONFIG, "shape value %lld; expected -1 to %d", (long long)shape[i],
                             DSE_DIM_MAX);
    if (n == 2) {
        int c, h, w;
        if ((st = shape_of(r, in, &c, &h, &w))) return st;
        if (shape[1] > 0 && shape[1] != (int64_t)c * h * w)
            return node_fail(r, DSE_ERR_SHAPE, "a reshape of %dx%dx%d values to %lld", c, h, w, (long long)shape[1]);
    }
    struct dse_layer *l = begin_layer(r, nd, n == 2 ? DSE_LAYER_FLATTEN : op->type, in);
    if (!l) return r->err->code;
    for (size_t i = 1; n == 4 && i < 4; i++) l->dims[i - 1] = (int)shape[i];
    return finish(r, nd, (int)n, -1, -1);
}

static enum dse_status op_bn(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st) return st;
    static const char *const what[4] = { "scale", "bias", "mean", "variance" };
    const struct tensor *t[4];
    for (int k = 0; k < 4; k++)
        if (!(t[k] = in_tensor(r, nd, k + 1, what[k]))) return r->err->code;
    for (int k = 1; k < 4; k++)
        if (t[k]->count != t[0]->count)
            return node_fail(r, DSE_ERR_SHAPE, "its %s holds %lld values, its scale %lld", what[k],
                             (long long)t[k]->count, (long long)t[0]->count);
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->affine = 1; /* ONNX's BatchNormalization has its scale and bias: 2C params */
    l->bn_eps = attr_float(nd, "epsilon", 1e-5f);
    if (!(l->bn_eps > 0.0f) || !isfinite(l->bn_eps))
        return node_fail(r, DSE_ERR_CONFIG, "epsilon %g; expected a number > 0", (double)l->bn_eps);
    return finish(r, nd, rank, (int)(t[0] - r->t), -1);
}

static enum dse_status op_lrn(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank;
    enum dse_status st = in_layer(r, nd, 0, &in, &rank);
    if (st) return st;
    int64_t size;
    if ((st = attr_int(r, nd, "size", 0, 1, DSE_DIM_MAX, &size))) return st;
    if (!size) return node_fail(r, DSE_ERR_CONFIG, "attribute 'size' is missing");
    struct dse_layer *l = begin_layer(r, nd, op->type, in);
    if (!l) return r->err->code;
    l->lrn_size = (int)size;
    l->lrn_alpha = attr_float(nd, "alpha", 1e-4f), l->lrn_beta = attr_float(nd, "beta", 0.75f);
    l->lrn_k = attr_float(nd, "bias", 1.0f);
    if (!(l->lrn_k > 0.0f) || !(l->lrn_alpha >= 0.0f) || !isfinite(l->lrn_k + l->lrn_alpha + l->lrn_beta))
        return node_fail(r, DSE_ERR_CONFIG, "bias %g, alpha %g, beta %g; expected bias > 0, alpha >= 0",
                         (double)l->lrn_k, (double)l->lrn_alpha, (double)l->lrn_beta);
    return finish(r, nd, rank, -1, -1);
}

/* A float tensor's one value (raw_data or float_data); -1 if it holds another. */
static int tensor_float(const struct tensor *t, float *out) {
    struct dse_pb_reader rr;
    struct dse_pb_field f;
    size_t n = 0;
    if (t->type != 1 || t->count != 1) return -1; /* TensorProto.FLOAT */
    dse_pb_reader_init(&rr, t->msg, t->len);
    while (dse_pb_next(&rr, &f) == 1) {
        if (f.field == 4 && dse_pb_floats(&f, out, 1, &n)) return -1; /* float_data */
        if (f.field == TENSOR_RAW && f.wire == DSE_PB_LEN && f.len == 4) memcpy(out, f.data, 4), n = 1;
    }
    return n == 1 ? 0 : -1;
}

/* Pad with zeros around H and W: no layer; the conv or pooling that reads it pads so
 * (as dse's exporter writes a Caffe average pooling whose padding counts in the average). */
static enum dse_status op_pad(struct rd *r, const struct node *nd, const struct op *op) {
    int in, rank;
    int64_t pre[4], p[8];
    size_t n = 0;
    char mode[32];
    enum dse_status st = in_padded(r, nd, 0, &in, &rank, pre);
    if (st) return st;
    attr_str(nd, "mode", mode, sizeof mode);
    if (mode[0] && strcmp(mode, "constant"))
        return node_fail(r, DSE_ERR_UNSUPPORTED, "mode '%s'; dse reads Pad with zeros only", mode);
    if (r->opset < 11) {
        int have;
        if ((st = attr_ints(r, nd, "pads", 8, 0, DSE_DIM_MAX, p, &have))) return st;
        n = have ? 8 : 0;
    } else {
        const struct tensor *t = in_tensor(r, nd, 1, "pads");
        if (!t) return r->err->code;
        if (tensor_int64s(t, p, 8, &n)) n = 0;
    }
    if (has_in(nd, 3)) /* opset 18's axes: the pads of those axes only */
        return node_fail(r, DSE_ERR_UNSUPPORTED, "dse reads Pad without its axes input (every axis's pads)");
    if (has_in(nd, 2)) {
        const struct tensor *t = in_tensor(r, nd, 2, "constant value");
        float v = 1;
        if (!t) return r->err->code;
        if (tensor_float(t, &v) || v != 0)
            return node_fail(r, DSE_ERR_UNSUPPORTED, "dse reads Pad with zeros only");
    }
    if (n != 8 || rank != 4 || p[0] || p[1] || p[4] || p[5])
        return node_fail(r, DSE_ERR_UNSUPPORTED, "dse reads Pad of a [N, C, H, W] value around H and W only "
                         "(8 pads, those of N and C 0)");
    const int64_t add[4] = { p[2], p[3], p[6], p[7] };
    struct value v = { .name = nd->out[0], .kind = VAL_LAYER, .layer = in, .rank = rank };
    for (int d = 0; d < 4; d++) {
        if (add[d] < 0 || add[d] > DSE_DIM_MAX)
            return node_fail(r, DSE_ERR_UNSUPPORTED, "a pad of %lld; dse reads 0 to %d", (long long)add[d],
                             DSE_DIM_MAX);
        v.pad[d] = pre[d] + add[d];
        if (v.pad[d] > DSE_DIM_MAX) /* Pads after Pads: their sum, as one */
            return node_fail(r, DSE_ERR_UNSUPPORTED, "pads summing to %lld; dse reads 0 to %d", (long long)v.pad[d],
                             DSE_DIM_MAX);
    }
    return add_value(r, v);
}

/* Identity: no layer; its output is its input. */
static enum dse_status op_identity(struct rd *r, const struct node *nd, const struct op *op) {
    const struct value *v = has_in(nd, 0) ? find_value(r, nd->in[0]) : NULL;
    if (!v) return node_fail(r, DSE_ERR_CONFIG, "its input is made by no earlier node");
    struct value alias = *v;
    alias.name = nd->out[0];
    return add_value(r, alias);
}

/* Sub and Div of the network input by constants: the input normalization dse's exporter
 * writes (its data layer's work in Caffe, not a layer): no layer, no cost. */
static enum dse_status op_normalize(struct rd *r, const struct node *nd, const struct op *op) {
    int done;
    enum dse_status st = fold_arith(r, nd, &done);
    if (st || done) return st;
    const struct value *a = has_in(nd, 0) ? find_value(r, nd->in[0]) : NULL;
    const struct value *b = has_in(nd, 1) ? find_value(r, nd->in[1]) : NULL;
    if (!a || !b || a->kind != VAL_LAYER || a->layer != DSE_INPUT_DATA || b->kind != VAL_TENSOR)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "dse reads %.*s only as the input's normalization: the network "
                         "input and a constant", sn(nd->op), nd->op.p);
    return op_identity(r, nd, op);
}

/* Constant: its value (attribute 'value', a tensor) becomes a tensor of the graph. */
static enum dse_status op_constant(struct rd *r, const struct node *nd, const struct op *op) {
    struct dse_pb_field a, g;
    if (!attr(nd, "value", &a) || !attr_field(&a, ATTR_T, &g) || g.wire != DSE_PB_LEN)
        return node_fail(r, DSE_ERR_UNSUPPORTED, "dse reads a Constant's 'value' tensor only");
    if (r->nt == r->cap_t) return nomem(r); /* cap_t counts every node: never */
    enum dse_status st = read_tensor(r, g.data, g.len, &r->t[r->nt]);
    if (st) return st;
    r->t[r->nt].name = nd->out[0];
    return add_value(r, (struct value){ .name = nd->out[0], .kind = VAL_TENSOR, .tensor = r->nt++ });
}

static enum dse_status unknown_op(struct rd *r);
static enum dse_status skip_op(struct rd *r, const struct node *nd);

/* Cast of a constant: the same tensor as type 'to', for its shape (the values are read only
 * where the type stays), as dse export casts a compressed model's codebook indices to int32
 * for Gather (docs/export.md, "Compressed models"). A Cast of a computed value is an op dse
 * does not read, as before it read any Cast. */
static enum dse_status op_cast(struct rd *r, const struct node *nd, const struct op *op) {
    const struct value *v = has_in(nd, 0) ? find_value(r, nd->in[0]) : NULL;
    int64_t to;
    (void)op;
    if (!v || v->kind != VAL_TENSOR) return r->skip_unknown ? skip_op(r, nd) : unknown_op(r);
    enum dse_status st = attr_int(r, nd, "to", 0, 1, 255, &to);
    if (st) return st;
    if (r->nt == r->cap_t) return nomem(r); /* cap_t counts every node: never */
    struct tensor *t = &r->t[r->nt];
    *t = r->t[v->tensor];
    t->name = nd->out[0], t->read = 0;
    if (to != t->type) t->type = (int)to, t->msg = NULL, t->len = 0, t->computed = 0;
    return add_value(r, (struct value){ .name = nd->out[0], .kind = VAL_TENSOR, .tensor = r->nt++ });
}

/* The ops dse reads, and the layer each becomes (docs/onnx.md's table). */
static const struct op ops[] = {
    { .name = "Conv",               .fn = op_conv,      .type = DSE_LAYER_CONV      },
    { .name = "Relu",               .fn = op_simple,    .type = DSE_LAYER_RELU      },
    { .name = "Sigmoid",            .fn = op_simple,    .type = DSE_LAYER_SIGMOID   },
    { .name = "Tanh",               .fn = op_simple,    .type = DSE_LAYER_TANH      },
    { .name = "MaxPool",            .fn = op_pool,      .type = DSE_LAYER_MAXPOOL   },
    { .name = "AveragePool",        .fn = op_pool,      .type = DSE_LAYER_AVGPOOL   },
    { .name = "GlobalAveragePool",  .fn = op_global,    .type = DSE_LAYER_AVGPOOL   },
    { .name = "GlobalMaxPool",      .fn = op_global,    .type = DSE_LAYER_MAXPOOL   },
    { .name = "Concat",             .fn = op_concat,    .type = DSE_LAYER_CONCAT    },
    { .name = "Add",                .fn = op_add,       .type = DSE_LAYER_ELTWISE   },
    { .name = "Sum",                .fn = op_add,       .type = DSE_LAYER_ELTWISE   },
    { .name = "Gemm",               .fn = op_fc,        .type = DSE_LAYER_FC        },
    { .name = "MatMul",             .fn = op_fc,        .type = DSE_LAYER_FC        },
    { .name = "Flatten",            .fn = op_flatten,   .type = DSE_LAYER_FLATTEN   },
    { .name = "Reshape",            .fn = op_reshape,   .type = DSE_LAYER_RESHAPE   },
    { .name = "Dropout",            .fn = op_simple,    .type = DSE_LAYER_DROPOUT   },
    { .name = "Softmax",            .fn = op_simple,    .type = DSE_LAYER_SOFTMAX   },
    { .name = "BatchNormalization", .fn = op_bn,        .type = DSE_LAYER_BATCHNORM },
    { .name = "LRN",                .fn = op_lrn,       .type = DSE_LAYER_LRN       },
    { .name = "Pad",                .fn = op_pad,       .type = DSE_LAYER_COUNT     },
    { .name = "LeakyRelu",          .fn = op_leaky,     .type = DSE_LAYER_RELU      },
    { .name = "PRelu",              .fn = op_prelu,     .type = DSE_LAYER_PRELU     },
    { .name = "Clip",               .fn = op_clip,      .type = DSE_LAYER_CLIP      },
    { .name = "HardSigmoid",        .fn = op_hard,      .type = DSE_LAYER_HARDSIGMOID },
    { .name = "HardSwish",          .fn = op_hard,      .type = DSE_LAYER_HARDSWISH },
    { .name = "Mul",                .fn = op_mul,       .type = DSE_LAYER_ELTWISE   },
    { .name = "ReduceMean",         .fn = op_reduce,    .type = DSE_LAYER_AVGPOOL   },
    { .name = "Squeeze",            .fn = op_squeeze,   .type = DSE_LAYER_COUNT     },
    { .name = "Unsqueeze",          .fn = op_squeeze,   .type = DSE_LAYER_COUNT     },
    { .name = "Transpose",          .fn = op_transpose, .type = DSE_LAYER_SHUFFLE   },
    { .name = "Split",              .fn = op_split,     .type = DSE_LAYER_SLICE     },
    { .name = "Slice",              .fn = op_slice,     .type = DSE_LAYER_SLICE     },
    { .name = "Resize",             .fn = op_resize,    .type = DSE_LAYER_RESIZE    },
    { .name = "Upsample",           .fn = op_resize,    .type = DSE_LAYER_RESIZE    },
    { .name = "ConvTranspose",      .fn = op_deconv,    .type = DSE_LAYER_DECONV    },
    { .name = "Shape",              .fn = op_shape,     .type = DSE_LAYER_COUNT     },
    { .name = "Gather",             .fn = op_gather,    .type = DSE_LAYER_COUNT     },
    { .name = "Cast",               .fn = op_cast,      .type = DSE_LAYER_COUNT     },
    { .name = "Identity",           .fn = op_identity,  .type = DSE_LAYER_COUNT     },
    { .name = "Constant",           .fn = op_constant,  .type = DSE_LAYER_COUNT     },
    { .name = "Sub",                .fn = op_normalize, .type = DSE_LAYER_COUNT     },
    { .name = "Div",                .fn = op_normalize, .type = DSE_LAYER_COUNT     },
};

/* The ops dse reads are too many for a message: docs/onnx.md lists them (ops[] above). */
static enum dse_status unknown_op(struct rd *r) {
    return node_fail(r, DSE_ERR_CONFIG, "op '%.*s%s%.*s' is not read by dse (docs/onnx.md lists the ops it reads); "
                     "--skip-unknown reads it as a layer that costs nothing", sn(r->cur->domain), r->cur->domain.p,
                     r->cur->domain.n ? "." : "", sn(r->cur->op), r->cur->op.p);
}

/* --skip-unknown: an op dse does not read becomes an `unknown` layer of its first computed
 * input's shape, costing nothing, that keeps the op type for printing; its computed
 * inputs (at most DSE_MAX_INPUTS; constants are left out) are its inputs and every output is its value. */
static enum dse_status skip_op(struct rd *r, const struct node *nd) {
    int in[DSE_MAX_INPUTS], n = 0, rank = 4;
    for (int k = 0; k < nd->n_in; k++) {
        const struct value *v = nd->in[k].n ? find_value(r, nd->in[k]) : NULL;
        if (!v || v->kind != VAL_LAYER || n == DSE_MAX_INPUTS) continue;
        if (!n) rank = v->rank;
        in[n++] = v->layer;
    }
    if (!n) return unknown_op(r);
    struct dse_layer *l = begin_layer(r, nd, DSE_LAYER_UNKNOWN, in[0]);
    if (!l) return r->err->code;
    l->n_inputs = n;
    memcpy(l->inputs, in, sizeof *in * (size_t)n);
    char op[sizeof l->op_type + 1];
    str_copy(op, sizeof op, nd->op);
    if (strlen(op) >= sizeof l->op_type) memcpy(op + sizeof l->op_type - 4, "...", 4); /* a long name, cut */
    memcpy(l->op_type, op, sizeof l->op_type);
    enum dse_status st = finish(r, nd, rank, -1, -1);
    for (int k = 1; !st && k < nd->n_out; k++) {
        struct value v = r->v[r->nv - 1];
        v.name = nd->out[k];
        st = add_value(r, v);
    }
    return st;
}

/* ---- the graph ----------------------------------------------------------------------- */

/* One pass over the node's bytes and its attributes' names (attr() asks them, often several
 * times a node): malformed bytes anywhere are refused before a count over its limit, as when
 * the bytes were checked whole first. */
static enum dse_status read_node(struct rd *r, const uint8_t *p, size_t n, struct node *nd) {
    struct dse_pb_reader rr, ar;
    struct dse_pb_field f, g;
    const char *over = NULL; /* the first count past its limit */
    int got, bad = 0;
    nd->name = nd->op = nd->domain = (struct str){ 0 }; /* in[], out[] and attr[] are read up to their counts */
    nd->n_in = nd->n_out = nd->n_attr = 0;
    nd->msg = p, nd->len = n;
    dse_pb_reader_init(&rr, p, n);
    while ((got = dse_pb_next(&rr, &f)) == 1) {
        if (f.wire != DSE_PB_LEN) continue;
        if (f.field == NODE_NAME) nd->name = str_of(&f);
        if (f.field == NODE_OP) nd->op = str_of(&f);
        if (f.field == NODE_DOMAIN) nd->domain = str_of(&f);
        if (f.field == NODE_INPUT) {
            if (nd->n_in == MAX_NODE_IN) over = over ? over : "more than " NUM_STR(MAX_NODE_IN) " inputs";
            else nd->in[nd->n_in++] = str_of(&f);
        }
        if (f.field == NODE_OUTPUT) {
            if (nd->n_out == MAX_NODE_OUT) over = over ? over : "more than " NUM_STR(MAX_NODE_OUT) " outputs";
            else nd->out[nd->n_out++] = str_of(&f);
        }
        if (f.field == NODE_ATTR) {
            int ag;
            dse_pb_reader_init(&ar, f.data, f.len);
            while ((ag = dse_pb_next(&ar, &g)) == 1) {
                if (g.field != ATTR_NAME || g.wire != DSE_PB_LEN || nd->n_attr < 0) continue;
                if (nd->n_attr == MAX_NODE_ATTR) nd->n_attr = -1;
                else nd->attr[nd->n_attr].name = str_of(&g), nd->attr[nd->n_attr++].a = f;
            }
            bad |= ag < 0;
        }
    }
    if (got < 0 || bad) return malformed(r, "a node's bytes");
    if (over) { /* well-formed, but past what a dse layer holds: the node named */
        r->cur = nd;
        return node_fail(r, DSE_ERR_UNSUPPORTED, "%s; dse reads a node of up to %d inputs and %d outputs", over,
                         MAX_NODE_IN, MAX_NODE_OUT);
    }
    for (int k = nd->n_in; k < 4; k++) nd->in[k] = (struct str){ 0 }; /* ops ask inputs 0 to 3 by position */
    for (int k = nd->n_out; k < MAX_NODE_OUT; k++) nd->out[k] = (struct str){ 0 };
    if (!nd->op.n) return malformed(r, "a node without an op type");
    return DSE_OK;
}

/* The network input's shape: [N, C, H, W] with C, H, W known (or given by --input). */
static enum dse_status read_input(struct rd *r, const struct dse_pb_field *vi, struct str *name, int chw[3]) {
    struct dse_pb_reader a, b, c, d, e;
    struct dse_pb_field f, g, h, i, j;
    int64_t dims[MAX_DIMS] = { 0 };
    int nd = 0, shaped = 0;
    dse_pb_reader_init(&a, vi->data, vi->len);
    while (dse_pb_next(&a, &f) == 1) {
        if (f.field == VALUE_NAME && f.wire == DSE_PB_LEN) *name = str_of(&f);
        if (f.field != VALUE_TYPE || f.wire != DSE_PB_LEN) continue;
        dse_pb_reader_init(&b, f.data, f.len);
        while (dse_pb_next(&b, &g) == 1) {
            if (g.field != TYPE_TENSOR || g.wire != DSE_PB_LEN) continue;
            dse_pb_reader_init(&c, g.data, g.len);
            while (dse_pb_next(&c, &h) == 1) {
                if (h.field != TTENSOR_SHAPE || h.wire != DSE_PB_LEN) continue;
                shaped = 1;
                dse_pb_reader_init(&d, h.data, h.len);
                while (dse_pb_next(&d, &i) == 1) {
                    if (i.field != SHAPE_DIM || i.wire != DSE_PB_LEN) continue;
                    if (nd == MAX_DIMS) return malformed(r, "an input of more than 8 dimensions");
                    dse_pb_reader_init(&e, i.data, i.len);
                    while (dse_pb_next(&e, &j) == 1)
                        if (j.field == DIM_VALUE && j.wire == DSE_PB_VARINT) dims[nd] = (int64_t)j.v;
                    nd++;
                }
            }
        }
    }
    if (shaped && nd != 4)
        return dse_err_set(r->err, DSE_ERR_UNSUPPORTED, r->path, 0, "input '%.*s' has %d dimensions; dse reads "
                           "images [N, C, H, W]", sn(*name), name->p, nd);
    for (int k = 0; k < 3; k++) {
        int64_t given = k == 0 ? (r->ov ? r->ov->c : 0) : k == 1 ? (r->ov ? r->ov->h : 0) : (r->ov ? r->ov->w : 0);
        int64_t v = given > 0 ? given : dims[k + 1];
        if (v < 1 || v > DSE_DIM_MAX)
            return dse_err_set(r->err, DSE_ERR_CONFIG, r->path, 0, "input '%.*s' has %s; pass the input size with "
                               "--input C,H,W", sn(*name), name->p,
                               !shaped ? "no shape" : v < 1 ? "no size for C, H or W" : "a size over 2^24");
        chw[k] = (int)v;
    }
    return DSE_OK;
}

/* Check each weighted layer's initializers against the shape it inferred: what dse
 * counts as its params is what the file holds. */
static enum dse_status check_weights(struct rd *r) {
    for (int i = 0; i < r->net->n_layers; i++) {
        const struct dse_layer *l = &r->net->layers[i];
        if (r->weight[i] < 0) continue;
        const struct tensor *w = &r->t[r->weight[i]];
        const int conv = l->type == DSE_LAYER_CONV || l->type == DSE_LAYER_DECONV;
        const int64_t f[4] = { l->type == DSE_LAYER_CONV ? l->in_c / l->groups
                               : l->type == DSE_LAYER_PRELU && l->channel_shared ? 1 : l->in_c,
                               conv ? l->kernel_h : l->type == DSE_LAYER_FC ? l->in_h : 1,
                               conv ? l->kernel_w : l->type == DSE_LAYER_FC ? l->in_w : 1,
                               l->type == DSE_LAYER_BATCHNORM || l->type == DSE_LAYER_PRELU ? 1
                               : l->type == DSE_LAYER_DECONV ? l->num_output / l->groups : l->num_output };
        int64_t want = 1;
        int over = 0;
        for (int k = 0; k < 4; k++) over |= __builtin_mul_overflow(want, f[k], &want); /* sizes up to 2^24 each */
        if (over || w->count != want)
            return dse_err_layer(r->err, DSE_ERR_SHAPE, r->path, 0, l->name, dse_layer_type_str(l->type),
                                 "its weights '%.*s' hold %lld values; its input %dx%dx%d needs %s%lld",
                                 sn(w->name), w->name.p, (long long)w->count, l->in_c, l->in_h, l->in_w,
                                 over ? "over " : "", over ? (long long)INT64_MAX : (long long)want);
    }
    return DSE_OK;
}

/* Room for the graph's values and layers, counted first: no table grows while it is read
 * (a node makes at most MAX_NODE_OUT layers: a Split's slices). */
static enum dse_status make_room(struct rd *r, int64_t n_nodes, int64_t n_init, int64_t n_inputs) {
    /* the tables' int sizes: the value table holds initializers and nodes' values, doubled */
    if (n_nodes > INT_MAX / 4 / MAX_NODE_OUT || n_init + n_nodes + n_inputs > INT_MAX / 8)
        return dse_err_set(r->err, DSE_ERR_UNSUPPORTED, r->path, 0, "a graph of %lld nodes, %lld initializers and "
                           "%lld inputs; dse reads up to %d nodes and %d of all three", (long long)n_nodes,
                           (long long)n_init, (long long)n_inputs, INT_MAX / 4 / MAX_NODE_OUT, INT_MAX / 8);
    const size_t max_l = (size_t)n_nodes * MAX_NODE_OUT + 1;
    size_t lt = 64, vt = 128;
    while (lt < 2 * max_l) lt *= 2;
    while (vt < 2 * ((size_t)n_init + (size_t)n_nodes + 1)) vt *= 2;
    r->cap_t = n_init + n_nodes;
    r->t = calloc((size_t)r->cap_t + 1, sizeof *r->t);
    r->cap_lt = (int)lt;
    r->lt = calloc(lt, sizeof *r->lt);
    r->weight = malloc(sizeof *r->weight * lt / 2);
    r->bias = malloc(sizeof *r->bias * lt / 2);
    r->matmul = malloc(sizeof *r->matmul * lt / 2);
    r->name_h = malloc(sizeof *r->name_h * lt / 2);
    r->src = malloc(sizeof *r->src * lt / 2);
    r->cap_v = (int)vt / 2;
    r->v = malloc(sizeof *r->v * vt / 2);
    r->cap_vt = (int)vt;
    r->vt = calloc(vt, sizeof *r->vt);
    if (!r->t || !r->lt || !r->weight || !r->bias || !r->matmul || !r->name_h || !r->src || !r->v || !r->vt)
        return nomem(r);
    return DSE_OK;
}

/* Two passes over the graph's fields: one counts (and checks) them, one reads the
 * initializers and keeps the inputs and nodes, read after them. */
static enum dse_status read_graph(struct rd *r, const struct dse_pb_field *graph) {
    struct dse_pb_reader rr;
    struct dse_pb_field f;
    int64_t n_nodes = 0, n_init = 0, n_inputs = 0; /* int64: counted before make_room bounds them */
    int got;
    enum dse_status st;
    char name[DSE_NAME_MAX] = "onnx";
    dse_pb_reader_init(&rr, graph->data, graph->len);
    while ((got = dse_pb_next(&rr, &f)) == 1) {
        n_nodes += f.field == GRAPH_NODE;
        n_init += f.field == GRAPH_INITIALIZER;
        n_inputs += f.field == GRAPH_INPUT && f.wire == DSE_PB_LEN;
        if (f.field == GRAPH_NAME && f.wire == DSE_PB_LEN && f.len) str_copy(name, sizeof name, str_of(&f));
    }
    if (got < 0) return malformed(r, "the graph's bytes");
    if ((st = make_room(r, n_nodes, n_init, n_inputs))) return st;
    r->fields = malloc(sizeof *r->fields * ((size_t)n_nodes + (size_t)n_inputs + 1));
    if (!r->fields) return nomem(r);
    struct dse_pb_field *nodes = r->fields, *inputs = r->fields + n_nodes;
    int i_node = 0, i_input = 0;

    /* the initializers; the nodes and inputs kept, read after them */
    dse_pb_reader_init(&rr, graph->data, graph->len);
    while (dse_pb_next(&rr, &f) == 1) {
        if (f.field == GRAPH_NODE) nodes[i_node++] = f;
        if (f.field == GRAPH_INPUT && f.wire == DSE_PB_LEN) inputs[i_input++] = f;
        if (f.field != GRAPH_INITIALIZER) continue;
        if (f.wire != DSE_PB_LEN) return malformed(r, "an initializer that is not a message");
        if ((st = read_tensor(r, f.data, f.len, &r->t[r->nt]))) return st;
        if ((st = add_value(r, (struct value){ .name = r->t[r->nt].name, .kind = VAL_TENSOR, .tensor = r->nt })))
            return st;
        r->nt++;
    }
    /* the network input: the first graph input that is not an initializer */
    struct str in_name = { 0 };
    int chw[3], have_input = 0;
    for (int k = 0; !have_input && k < n_inputs; k++) {
        f = inputs[k];
        struct str nm = { 0 };
        struct dse_pb_reader vr;
        struct dse_pb_field g;
        if (!well_formed(f.data, f.len, 0)) return malformed(r, "a graph input's bytes");
        dse_pb_reader_init(&vr, f.data, f.len);
        while (dse_pb_next(&vr, &g) == 1)
            if (g.field == VALUE_NAME && g.wire == DSE_PB_LEN) nm = str_of(&g);
        const struct value *v = find_value(r, nm);
        if (v && v->kind == VAL_TENSOR) continue;
        if ((st = read_input(r, &f, &in_name, chw))) return st;
        have_input = 1;
    }
    if (!have_input)
        return dse_err_set(r->err, DSE_ERR_CONFIG, r->path, 0, "the graph has no input that is not an initializer");
    dse_net_init(r->net, name, chw[0], chw[1], chw[2]);
    if ((st = dse_net_reserve(r->net, (int)n_nodes, r->err))) return st;
    if ((st = add_value(r, (struct value){ .name = in_name, .kind = VAL_LAYER, .layer = DSE_INPUT_DATA, .rank = 4 })))
        return st;

    /* the nodes, in order */
    for (int k = 0; k < n_nodes; k++) {
        f = nodes[k];
        struct node nd;
        if (f.wire != DSE_PB_LEN) return malformed(r, "a node that is not a message");
        if ((st = read_node(r, f.data, f.len, &nd))) return st;
        r->cur = &nd;
        if (!nd.n_out || !nd.out[0].n) return node_fail(r, DSE_ERR_CONFIG, "it has no output");
        const struct op *op = NULL;
        for (int i = 0; i < DSE_ARRAY_LEN(ops) && !op; i++)
            if (nd.op.p[0] == ops[i].name[0] && str_is(nd.op, ops[i].name)) op = &ops[i];
        if (!op || (nd.domain.n && !str_is(nd.domain, "ai.onnx"))) {
            if ((st = r->skip_unknown ? skip_op(r, &nd) : unknown_op(r))) return st;
            continue;
        }
        if ((st = op->fn(r, &nd, op))) return st;
    }
    r->cur = NULL;
    if (!r->net->n_layers) return dse_err_set(r->err, DSE_ERR_CONFIG, r->path, 0, "the graph has no layers dse reads");
    if (r->dup_name && (st = dse_net_check_names(r->net, r->err))) { /* finish saw a name taken */
        dse_err_name_file(r->err, r->path);
        return st;
    }
    if ((st = dse_net_infer(r->net, r->path, r->err))) return st;
    return check_weights(r);
}

static enum dse_status sources_of(struct rd *r, const struct dse_pb_field *graph, struct dse_onnx_sources *src);

static enum dse_status parse_model(const void *data, size_t len, const char *path, const struct dse_input_shape *ov,
                                   struct dse_net *out, struct dse_onnx_sources *src, struct dse_err *err) {
    struct dse_err none;
    if (!err) err = &none; /* the readers below read the status back from it */
    struct rd r = { .path = path, .ov = ov, .net = out, .err = err, .opset = 1, .skip_unknown = ov && ov->skip_unknown };
    struct dse_pb_reader rr;
    struct dse_pb_field f, graph = { 0 };
    int got, have_graph = 0;
    enum dse_status st;
    memset(out, 0, sizeof *out);
    dse_pb_reader_init(&rr, data, len);
    while ((got = dse_pb_next(&rr, &f)) == 1) {
        if (f.field == MODEL_GRAPH && f.wire == DSE_PB_LEN) graph = f, have_graph = 1;
        if (f.field == MODEL_OPSET && f.wire == DSE_PB_LEN) {
            struct dse_pb_reader o;
            struct dse_pb_field g;
            struct str domain = { 0 };
            int64_t version = 0;
            dse_pb_reader_init(&o, f.data, f.len);
            while (dse_pb_next(&o, &g) == 1) {
                if (g.field == OPSET_DOMAIN && g.wire == DSE_PB_LEN) domain = str_of(&g);
                if (g.field == OPSET_VERSION && g.wire == DSE_PB_VARINT) version = (int64_t)g.v;
            }
            if ((!domain.n || str_is(domain, "ai.onnx")) && version > 0 && version < 1000) r.opset = (int)version;
        }
    }
    if (got < 0 || !len) {
        st = dse_err_set(err, DSE_ERR_CONFIG, path, 0, "not an ONNX model (the bytes are not a protobuf message: "
                         "a truncated or other file)");
        goto out;
    }
    if (!have_graph) {
        st = dse_err_set(err, DSE_ERR_CONFIG, path, 0, "not an ONNX model (no graph)");
        goto out;
    }
    st = read_graph(&r, &graph);
    if (!st && src) st = sources_of(&r, &graph, src);
out:
    if (st) {
        dse_net_deinit(out);
        memset(out, 0, sizeof *out);
    }
    free(r.t), free(r.v), free(r.vt), free(r.weight), free(r.bias), free(r.matmul), free(r.name_h), free(r.lt), free(r.src);
    free(r.fields);
    return st;
}

enum dse_status dse_onnx_parse(const void *data, size_t len, const char *path, const struct dse_input_shape *ov,
                               struct dse_net *out, struct dse_err *err) {
    return parse_model(data, len, path, ov, out, NULL, err);
}

enum dse_status dse_onnx_load(const char *path, const struct dse_input_shape *ov, struct dse_net *out,
                              struct dse_err *err) {
    char *data;
    size_t len;
    memset(out, 0, sizeof *out);
    enum dse_status st = dse_fs_read(path, &data, &len, err);
    if (st) return st;
    st = dse_onnx_parse(data, len, path, ov, out, err);
    free(data);
    return st;
}

/* ---- where each layer's values are: dse import MODEL.onnx (issue #34 item 3) ------------ */

static struct dse_onnx_tensor tensor_ref(const struct rd *r, int k) {
    return k < 0 ? (struct dse_onnx_tensor){ 0 } : (struct dse_onnx_tensor){ .msg = r->t[k].msg, .len = r->t[k].len };
}

/* The tensor a node's input k names (checked a weight when the node was read). */
static struct dse_onnx_tensor input_ref(struct rd *r, const struct node *nd, int k) {
    const struct value *v = has_in(nd, k) ? find_value(r, nd->in[k]) : NULL;
    return v && v->kind == VAL_TENSOR ? tensor_ref(r, v->tensor) : (struct dse_onnx_tensor){ 0 };
}

/* After read_graph: each layer's tensors from the node it was read from, and the Sub and
 * Div nodes of the network input (op_normalize let only those through), in graph order. */
static enum dse_status sources_of(struct rd *r, const struct dse_pb_field *graph, struct dse_onnx_sources *src) {
    const int n = r->net->n_layers;
    enum dse_status st = DSE_OK;
    *src = (struct dse_onnx_sources){ .layer = calloc((size_t)n + 1, sizeof *src->layer), .n_layers = n };
    if (!src->layer) return nomem(r);
    for (int i = 0; i < n && !st; i++) {
        struct dse_onnx_src *s = &src->layer[i];
        struct node node;
        const struct node *nd = &node;
        int64_t trans_b = 0;
        if ((st = read_node(r, r->src[i].msg, r->src[i].len, &node))) break;
        r->cur = nd;
        *s = (struct dse_onnx_src){ .t = { tensor_ref(r, r->weight[i]), tensor_ref(r, r->bias[i]) },
                                    .alpha = 1.0f, .beta = 1.0f };
        if (r->net->layers[i].type == DSE_LAYER_BATCHNORM)
            for (int k = 1; k < 4; k++) s->t[k] = input_ref(r, nd, k + 1);
        if (r->net->layers[i].type != DSE_LAYER_FC) continue;
        if (str_is(nd->op, "Gemm")) {
            st = attr_int(r, nd, "transB", 0, 0, 1, &trans_b);
            s->alpha = attr_float(nd, "alpha", 1.0f), s->beta = attr_float(nd, "beta", 1.0f);
        }
        s->k_by_n = !trans_b;
    }
    r->cur = NULL;
    /* the input normalization: Sub and Div nodes, each of the input (or what the last made) */
    struct dse_pb_reader gr;
    struct dse_pb_field g;
    dse_pb_reader_init(&gr, graph->data, graph->len);
    while (!st && dse_pb_next(&gr, &g) == 1) {
        struct node nd;
        if (g.field != GRAPH_NODE || (st = read_node(r, g.data, g.len, &nd))) continue;
        const int div = str_is(nd.op, "Div");
        const struct value *x = has_in(&nd, 0) ? find_value(r, nd.in[0]) : NULL;
        if ((!div && !str_is(nd.op, "Sub")) || !x || x->kind != VAL_LAYER || x->layer != DSE_INPUT_DATA) continue;
        if (src->n_norm == DSE_ARRAY_LEN(src->norm)) {
            r->cur = &nd;
            st = node_fail(r, DSE_ERR_UNSUPPORTED, "more than %d Sub and Div nodes normalize the input",
                           DSE_ARRAY_LEN(src->norm));
            r->cur = NULL;
            break;
        }
        src->norm_div[src->n_norm] = div;
        src->norm[src->n_norm++] = input_ref(r, &nd, 1);
    }
    if (st) dse_onnx_sources_free(src);
    return st;
}

enum dse_status dse_onnx_parse_sources(const void *data, size_t len, const char *path,
                                       const struct dse_input_shape *ov, struct dse_net *out,
                                       struct dse_onnx_sources *src, struct dse_err *err) {
    *src = (struct dse_onnx_sources){ 0 };
    return parse_model(data, len, path, ov, out, src, err);
}

void dse_onnx_sources_free(struct dse_onnx_sources *src) {
    if (!src) return;
    free(src->layer);
    *src = (struct dse_onnx_sources){ 0 };
}
