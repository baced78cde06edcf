/* prototxt_text.c: protobuf text format, the lowest floor of the prototxt reader
 * (prototxt_impl.h): a hand-written lexer and parser build a tree of fields, and every
 * field is checked against the parts of caffe.proto (BVLC master) that describe networks.
 * It never trusts its input: text need not be NUL-terminated, any byte may appear.
 * What is read and how errors read: docs/prototxt.md. */
#include "netfile/prototxt_impl.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH     64         /* nested blocks; deeper is an error, not a stack overflow */

/* ---------------------------------------------------------------------------------------
 * Messages */

const char *dse_pt_show(char *buf, size_t size, const char *s, size_t len) {
    size_t max = size - 1, n = len < max ? len : max;
    if (len > max && max >= 3) n = max - 3;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (len > n) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
    return buf;
}

void dse_pt_suggest_init(struct suggest *s, const char *word) {
    s->word = word;
    s->best = NULL;
    s->dist = 1000;
}

void dse_pt_suggest_add(struct suggest *s, const char *cand) {
    int len = (int)strlen(s->word);
    int d   = dse_edit_distance(s->word, cand);
    int max = len / 3 > 1 ? len / 3 : 1;
    if (d > 0 && d <= max && d < s->dist) {
        s->dist = d;
        s->best = cand;
    }
}

/* ---------------------------------------------------------------------------------------
 * Tokens */

static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alnum(int c) { return is_alpha(c) || is_digit(c); }
static int is_hex(int c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

static enum dse_status perr(struct ptree *t, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum dse_status perr(struct ptree *t, int line, const char *fmt, ...) {
    char buf[sizeof t->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return dse_err_set(t->err, DSE_ERR_CONFIG, t->path, line, "%s", buf);
}

static const char *tok_desc(const struct ptree *t, const struct tok *k, char *buf, size_t size) {
    char s[48];
    switch (k->kind) {
    case TK_EOF:    snprintf(buf, size, "end of file"); break;
    case TK_PUNCT:  snprintf(buf, size, "'%c'", k->ch); break;
    case TK_IDENT:  snprintf(buf, size, "'%s'", dse_pt_show(s, sizeof s, t->text + k->start, k->len)); break;
    case TK_NUMBER: snprintf(buf, size, "number %s", dse_pt_show(s, sizeof s, t->text + k->start, k->len)); break;
    case TK_STRING: snprintf(buf, size, "string \"%s\"", dse_pt_show(s, sizeof s, t->text + k->start, k->len)); break;
    }
    return buf;
}

static enum dse_status lex(struct ptree *t, struct tok *k) {
    const char *s = t->text;
    size_t n = t->len;
    for (;;) {
        while (t->pos < n) {
            char c = s[t->pos];
            if (c == '\n') t->line++;
            else if (c != ' ' && c != '\t' && c != '\r' && c != '\v' && c != '\f') break;
            t->pos++;
        }
        if (t->pos < n && s[t->pos] == '#') {
            while (t->pos < n && s[t->pos] != '\n') t->pos++;
            continue;
        }
        break;
    }
    memset(k, 0, sizeof *k);
    k->line  = t->line;
    k->start = t->pos;
    if (t->pos >= n) {
        k->kind = TK_EOF;
        return DSE_OK;
    }
    unsigned char c = (unsigned char)s[t->pos];
    unsigned char c1 = t->pos + 1 < n ? (unsigned char)s[t->pos + 1] : 0;
    if (is_alpha(c)) {
        while (t->pos < n && is_alnum((unsigned char)s[t->pos])) t->pos++;
        k->kind = TK_IDENT;
    } else if (is_digit(c) || (c == '.' && is_digit(c1)) ||
               (c == '-' && (is_alnum(c1) || c1 == '.'))) {
        /* Take the longest run that can belong to a number ("1e-4", "0x1F", "-inf", "1.5f");
         * whether it is one is decided when a field asks for its value. */
        int hex = 0;
        t->pos++;
        while (t->pos < n) {
            unsigned char d = (unsigned char)s[t->pos];
            unsigned char prev = (unsigned char)s[t->pos - 1];
            if (d == 'x' || d == 'X') hex = 1;
            if (is_alnum(d) || d == '.' ||
                ((d == '+' || d == '-') && !hex && (prev == 'e' || prev == 'E')))
                t->pos++;
            else
                break;
        }
        k->kind = TK_NUMBER;
    } else if (c == '"' || c == '\'') {
        size_t p = t->pos + 1;
        for (;;) {
            if (p >= n || s[p] == '\n')
                return perr(t, k->line, "unterminated string; expected a closing %c on the same line", c);
            if (s[p] == '\\') {
                if (p + 1 >= n || s[p + 1] == '\n')
                    return perr(t, k->line, "unterminated string; expected a closing %c on the same line", c);
                p += 2;
                continue;
            }
            if ((unsigned char)s[p] == c) break;
            p++;
        }
        k->kind  = TK_STRING;
        k->start = t->pos + 1;
        k->len   = p - k->start;
        t->pos   = p + 1;
        return DSE_OK;
    } else if (strchr("{}<>:[],;", c) && c != '\0') {
        t->pos++;
        k->kind = TK_PUNCT;
        k->ch   = (char)c;
    } else if (c == '-') {
        return perr(t, k->line, "unexpected '-'; expected a number right after it");
    } else if (c >= 0x21 && c < 0x7f) {
        return perr(t, k->line, "unexpected character '%c'; expected a field name, value or "
                    "one of { } : [ ]", c);
    } else {
        return perr(t, k->line, "unexpected byte 0x%02x; expected a field name, value or "
                    "one of { } : [ ]", c);
    }
    k->len = t->pos - k->start;
    return DSE_OK;
}

static enum dse_status next_tok(struct ptree *t, struct tok *k) {
    if (t->have_look) {
        *k = t->look;
        t->have_look = 0;
        return DSE_OK;
    }
    return lex(t, k);
}

static enum dse_status peek_tok(struct ptree *t, struct tok *k) {
    if (!t->have_look) {
        enum dse_status st = lex(t, &t->look);
        if (st) return st;
        t->have_look = 1;
    }
    *k = t->look;
    return DSE_OK;
}

static int is_punct(const struct tok *k, char ch) { return k->kind == TK_PUNCT && k->ch == ch; }

/* ---------------------------------------------------------------------------------------
 * Tree */

enum dse_status dse_pt_nomem(struct ptree *t) {
    return dse_err_set(t->err, DSE_ERR_NOMEM, t->path, 0, "out of memory reading the network");
}

static enum dse_status add_node(struct ptree *t, int parent, const struct tok *name, int *out) {
    if (t->n_nodes == t->cap_nodes) {
        int cap = t->cap_nodes ? t->cap_nodes * 2 : 256;
        struct pnode *p;
        if (t->cap_nodes > INT_MAX / 2) return dse_pt_nomem(t);
        p = realloc(t->nodes, sizeof *p * (size_t)cap);
        if (!p) return dse_pt_nomem(t);
        t->nodes = p;
        t->cap_nodes = cap;
    }
    int i = t->n_nodes++;
    struct pnode *nd = &t->nodes[i];
    memset(nd, 0, sizeof *nd);
    nd->first = nd->last = nd->next = -1;
    if (name) {
        nd->name     = name->start;
        nd->name_len = name->len;
        nd->line     = name->line;
    }
    if (parent >= 0) {
        struct pnode *p = &t->nodes[parent];
        if (p->last >= 0) t->nodes[p->last].next = i;
        else p->first = i;
        p->last = i;
    }
    *out = i;
    return DSE_OK;
}

static enum dse_status pool_put(struct ptree *t, char c) {
    if (t->pool_len == t->pool_cap) {
        size_t cap = t->pool_cap ? t->pool_cap * 2 : 1024;
        char *p = realloc(t->pool, cap);
        if (!p) return dse_pt_nomem(t);
        t->pool = p;
        t->pool_cap = cap;
    }
    t->pool[t->pool_len++] = c;
    return DSE_OK;
}

/* Append the unescaped contents of string token k to the pool (protobuf text escapes). */
static enum dse_status unescape(struct ptree *t, const struct tok *k) {
    const char *s = t->text + k->start;
    size_t n = k->len;
    enum dse_status st;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\') {
            char e = s[++i]; /* the lexer guarantees a character after a backslash */
            int v = 0;
            switch (e) {
            case 'a': c = '\a'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'v': c = '\v'; break;
            case '\\': case '\'': case '"': case '?': c = e; break;
            case 'x': case 'X':
                if (i + 1 >= n || !is_hex((unsigned char)s[i + 1]))
                    return perr(t, k->line, "bad escape '\\x' in string; expected hex digits after it");
                for (int d = 0; d < 2 && i + 1 < n && is_hex((unsigned char)s[i + 1]); d++) {
                    char h = s[++i];
                    v = v * 16 + (is_digit((unsigned char)h) ? h - '0' : (h | 0x20) - 'a' + 10);
                }
                c = (char)v;
                break;
            default:
                if (e >= '0' && e <= '7') {
                    v = e - '0';
                    for (int d = 0; d < 2 && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7'; d++)
                        v = v * 8 + (s[++i] - '0');
                    c = (char)(unsigned char)v;
                    break;
                }
                if ((unsigned char)e >= 0x21 && (unsigned char)e < 0x7f)
                    return perr(t, k->line, "bad escape '\\%c' in string; expected one of "
                                "\\n \\t \\\\ \\\" \\' \\xHH \\NNN", e);
                return perr(t, k->line, "bad escape in string; expected one of "
                            "\\n \\t \\\\ \\\" \\' \\xHH \\NNN");
            }
        }
        if ((st = pool_put(t, c))) return st;
    }
    return DSE_OK;
}

static enum dse_status parse_block(struct ptree *t, int parent, int depth, char close);

/* A scalar value or a message after "name:" or "name", as node under parent. */
static enum dse_status parse_value(struct ptree *t, int parent, const struct tok *name, int depth,
                                   int colon) {
    enum dse_status st;
    struct tok v;
    char d[80], s[48];
    int nd;
    if ((st = next_tok(t, &v))) return st;
    if (is_punct(&v, '{') || is_punct(&v, '<')) {
        if (depth >= MAX_DEPTH)
            return perr(t, v.line, "blocks nested more than %d deep; expected a '}'", MAX_DEPTH);
        if ((st = add_node(t, parent, name, &nd))) return st;
        t->nodes[nd].is_msg = 1;
        return parse_block(t, nd, depth + 1, v.ch == '{' ? '}' : '>');
    }
    if (!colon)
        return perr(t, v.line, "expected ':' or '{' after field '%s', found %s",
                    dse_pt_show(s, sizeof s, t->text + name->start, name->len), tok_desc(t, &v, d, sizeof d));
    if (v.kind != TK_IDENT && v.kind != TK_NUMBER && v.kind != TK_STRING)
        return perr(t, v.line, "expected a value after '%s:', found %s",
                    dse_pt_show(s, sizeof s, t->text + name->start, name->len), tok_desc(t, &v, d, sizeof d));
    if ((st = add_node(t, parent, name, &nd))) return st;
    struct pnode *p = &t->nodes[nd];
    p->vkind = v.kind;
    if (v.kind != TK_STRING) {
        p->val = v.start;
        p->val_len = v.len;
        return DSE_OK;
    }
    size_t start = t->pool_len;
    if ((st = unescape(t, &v))) return st;
    for (;;) { /* "a" "b" is one string, as in C */
        struct tok more;
        if ((st = peek_tok(t, &more))) return st;
        if (more.kind != TK_STRING) break;
        next_tok(t, &more);
        if ((st = unescape(t, &more))) return st;
    }
    p = &t->nodes[nd];
    p->val = start;
    p->val_len = t->pool_len - start;
    return pool_put(t, '\0');
}

/* Fields until close ('}' or '>'), or until end of file for the top level (close 0). */
static enum dse_status parse_block(struct ptree *t, int parent, int depth, char close) {
    enum dse_status st;
    char d[80], s[48];
    for (;;) {
        struct tok k, c;
        if ((st = next_tok(t, &k))) return st;
        const struct pnode *p = &t->nodes[parent];
        if (k.kind == TK_EOF) {
            if (!close) return DSE_OK;
            return perr(t, k.line, "unexpected end of file; expected '%c' to close '%s' opened at line %d",
                        close, dse_pt_show(s, sizeof s, t->text + p->name, p->name_len), p->line);
        }
        if (is_punct(&k, ',') || is_punct(&k, ';')) continue;
        if (close && is_punct(&k, close)) return DSE_OK;
        if (is_punct(&k, '}') || is_punct(&k, '>')) {
            if (!close) return perr(t, k.line, "unexpected '%c'; no block is open here", k.ch);
            return perr(t, k.line, "unexpected '%c'; expected '%c' to close '%s' opened at line %d",
                        k.ch, close, dse_pt_show(s, sizeof s, t->text + p->name, p->name_len), p->line);
        }
        if (is_punct(&k, '['))
            return perr(t, k.line, "extension fields ('[name]') are not supported; expected a field name");
        if (k.kind != TK_IDENT)
            return perr(t, k.line, "expected a field name, found %s", tok_desc(t, &k, d, sizeof d));
        if ((st = next_tok(t, &c))) return st;
        if (is_punct(&c, '{') || is_punct(&c, '<')) {
            t->look = c; /* hand the brace to parse_value */
            t->have_look = 1;
            if ((st = parse_value(t, parent, &k, depth, 0))) return st;
            continue;
        }
        if (!is_punct(&c, ':'))
            return perr(t, c.line, "expected ':' or '{' after field '%s', found %s",
                        dse_pt_show(s, sizeof s, t->text + k.start, k.len), tok_desc(t, &c, d, sizeof d));
        struct tok v;
        if ((st = peek_tok(t, &v))) return st;
        if (!is_punct(&v, '[')) {
            if ((st = parse_value(t, parent, &k, depth, 1))) return st;
            continue;
        }
        next_tok(t, &v); /* "name: [v1, v2]" is name: v1 name: v2 */
        if ((st = peek_tok(t, &v))) return st;
        if (is_punct(&v, ']')) {
            next_tok(t, &v);
            continue;
        }
        for (;;) {
            if ((st = parse_value(t, parent, &k, depth, 1))) return st;
            if ((st = next_tok(t, &v))) return st;
            if (is_punct(&v, ']')) break;
            if (!is_punct(&v, ','))
                return perr(t, v.line, "expected ',' or ']' in the list for '%s', found %s",
                            dse_pt_show(s, sizeof s, t->text + k.start, k.len), tok_desc(t, &v, d, sizeof d));
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * Schema: the fields caffe.proto (BVLC/caffe master, src/caffe/proto/caffe.proto) defines
 * in the messages a network file uses. A field of kind VK_SKIP is a message we accept
 * without looking inside (fillers, blobs, parameters of layers we never build). */

enum vkind { VK_MSG, VK_SKIP, VK_STR, VK_INT, VK_UINT, VK_FLOAT, VK_BOOL, VK_ENUM };

struct mspec;
struct fspec {
    const char         *name;
    enum vkind          kind;
    const struct mspec *msg;   /* VK_MSG */
    const char         *enums; /* VK_ENUM: allowed values, space-separated; NULL = any */
};
struct mspec {
    const struct fspec *fields; /* ends with a NULL name */
};

#define F_S(n)    { n, VK_STR, NULL, NULL }
#define F_I(n)    { n, VK_INT, NULL, NULL }
#define F_U(n)    { n, VK_UINT, NULL, NULL }
#define F_F(n)    { n, VK_FLOAT, NULL, NULL }
#define F_B(n)    { n, VK_BOOL, NULL, NULL }
#define F_E(n, e) { n, VK_ENUM, NULL, e }
#define F_M(n, m) { n, VK_MSG, &m, NULL }
#define F_X(n)    { n, VK_SKIP, NULL, NULL }
#define F_END     { NULL, VK_SKIP, NULL, NULL }

#define ENGINE "DEFAULT CAFFE CUDNN"

static const struct fspec blob_shape_f[] = { F_I("dim"), F_END };
static const struct mspec blob_shape = { blob_shape_f };

static const struct fspec net_state_f[] = {
    F_E("phase", "TRAIN TEST"), F_I("level"), F_S("stage"), F_END };
static const struct mspec net_state = { net_state_f };

static const struct fspec rule_f[] = {
    F_E("phase", "TRAIN TEST"), F_I("min_level"), F_I("max_level"), F_S("stage"),
    F_S("not_stage"), F_END };
static const struct mspec rule = { rule_f };

static const struct fspec param_spec_f[] = {
    F_S("name"), F_E("share_mode", "STRICT PERMISSIVE"), F_F("lr_mult"), F_F("decay_mult"),
    F_END };
static const struct mspec param_spec = { param_spec_f };

static const struct fspec transform_f[] = {
    F_F("scale"), F_B("mirror"), F_U("crop_size"), F_S("mean_file"), F_F("mean_value"),
    F_B("force_color"), F_B("force_gray"), F_END };
static const struct mspec transform = { transform_f };

static const struct fspec loss_f[] = {
    F_I("ignore_label"), F_E("normalization", "FULL VALID BATCH_SIZE NONE"), F_B("normalize"),
    F_END };
static const struct mspec loss = { loss_f };

static const struct fspec accuracy_f[] = { F_U("top_k"), F_I("axis"), F_I("ignore_label"), F_END };
static const struct mspec accuracy = { accuracy_f };

static const struct fspec batch_norm_f[] = {
    F_B("use_global_stats"), F_F("moving_average_fraction"), F_F("eps"), F_END };
static const struct mspec batch_norm = { batch_norm_f };

static const struct fspec concat_f[] = { F_I("axis"), F_U("concat_dim"), F_END };
static const struct mspec concat = { concat_f };

static const struct fspec conv_f[] = {
    F_U("num_output"), F_B("bias_term"), F_U("pad"), F_U("kernel_size"), F_U("stride"),
    F_U("dilation"), F_U("pad_h"), F_U("pad_w"), F_U("kernel_h"), F_U("kernel_w"),
    F_U("stride_h"), F_U("stride_w"), F_U("group"), F_X("weight_filler"), F_X("bias_filler"),
    F_E("engine", ENGINE), F_I("axis"), F_B("force_nd_im2col"), F_END };
static const struct mspec conv = { conv_f };

static const struct fspec data_f[] = {
    F_S("source"), F_U("batch_size"), F_U("rand_skip"), F_E("backend", "LEVELDB LMDB"),
    F_F("scale"), F_S("mean_file"), F_U("crop_size"), F_B("mirror"), F_B("force_encoded_color"),
    F_U("prefetch"), F_END };
static const struct mspec data = { data_f };

static const struct fspec dropout_f[] = { F_F("dropout_ratio"), F_END };
static const struct mspec dropout = { dropout_f };

static const struct fspec eltwise_f[] = {
    F_E("operation", "PROD SUM MAX"), F_F("coeff"), F_B("stable_prod_grad"), F_END };
static const struct mspec eltwise = { eltwise_f };

static const struct fspec hdf5_data_f[] = { F_S("source"), F_U("batch_size"), F_B("shuffle"), F_END };
static const struct mspec hdf5_data = { hdf5_data_f };

static const struct fspec image_data_f[] = {
    F_S("source"), F_U("batch_size"), F_U("rand_skip"), F_B("shuffle"), F_U("new_height"),
    F_U("new_width"), F_B("is_color"), F_F("scale"), F_S("mean_file"), F_U("crop_size"),
    F_B("mirror"), F_S("root_folder"), F_END };
static const struct mspec image_data = { image_data_f };

static const struct fspec inner_product_f[] = {
    F_U("num_output"), F_B("bias_term"), F_X("weight_filler"), F_X("bias_filler"), F_I("axis"),
    F_B("transpose"), F_END };
static const struct mspec inner_product = { inner_product_f };

static const struct fspec input_f[] = { F_M("shape", blob_shape), F_END };
static const struct mspec input = { input_f };

static const struct fspec lrn_f[] = {
    F_U("local_size"), F_F("alpha"), F_F("beta"), F_E("norm_region", "ACROSS_CHANNELS WITHIN_CHANNEL"),
    F_F("k"), F_E("engine", ENGINE), F_END };
static const struct mspec lrn = { lrn_f };

static const struct fspec memory_data_f[] = {
    F_U("batch_size"), F_U("channels"), F_U("height"), F_U("width"), F_END };
static const struct mspec memory_data = { memory_data_f };

static const struct fspec pooling_f[] = {
    F_E("pool", "MAX AVE STOCHASTIC"), F_U("pad"), F_U("pad_h"), F_U("pad_w"), F_U("kernel_size"),
    F_U("kernel_h"), F_U("kernel_w"), F_U("stride"), F_U("stride_h"), F_U("stride_w"),
    F_E("engine", ENGINE), F_B("global_pooling"), F_E("round_mode", "CEIL FLOOR"),
    F_B("ceil_mode"), /* a Caffe-fork extension (DenseNet, SSD): true = CEIL, false = FLOOR */
    F_END };
static const struct mspec pooling = { pooling_f };

static const struct fspec flatten_f[] = { F_I("axis"), F_I("end_axis"), F_END };
static const struct mspec flatten = { flatten_f };

static const struct fspec reshape_f[] = { F_M("shape", blob_shape), F_I("axis"), F_I("num_axes"), F_END };
static const struct mspec reshape = { reshape_f };

static const struct fspec slice_f[] = { F_I("axis"), F_U("slice_point"), F_U("slice_dim"), F_END };
static const struct mspec slice = { slice_f };

static const struct fspec neuron_f[] = { F_E("engine", ENGINE), F_END }; /* sigmoid_param, tanh_param */
static const struct mspec neuron = { neuron_f };

static const struct fspec power_f[] = { F_F("power"), F_F("scale"), F_F("shift"), F_END };
static const struct mspec power = { power_f };

static const struct fspec relu_f[] = { F_F("negative_slope"), F_E("engine", ENGINE), F_END };
static const struct mspec relu = { relu_f };

static const struct fspec scale_f[] = {
    F_I("axis"), F_I("num_axes"), F_X("filler"), F_B("bias_term"), F_X("bias_filler"), F_END };
static const struct mspec scale = { scale_f };

static const struct fspec softmax_f[] = { F_E("engine", ENGINE), F_I("axis"), F_END };
static const struct mspec softmax = { softmax_f };

/* LayerParameter (the V2 "layer { }" message). */
static const struct fspec layer_f[] = {
    F_S("name"), F_S("type"), F_S("bottom"), F_S("top"), F_E("phase", "TRAIN TEST"),
    F_F("loss_weight"), F_M("param", param_spec), F_X("blobs"), F_B("propagate_down"),
    F_M("include", rule), F_M("exclude", rule), F_M("transform_param", transform),
    F_M("loss_param", loss), F_M("accuracy_param", accuracy), F_X("argmax_param"),
    F_M("batch_norm_param", batch_norm), F_X("bias_param"), F_X("clip_param"),
    F_M("concat_param", concat), F_X("contrastive_loss_param"), F_M("convolution_param", conv),
    F_X("crop_param"), F_M("data_param", data), F_M("dropout_param", dropout),
    F_X("dummy_data_param"), F_M("eltwise_param", eltwise), F_X("elu_param"), F_X("embed_param"),
    F_X("exp_param"), F_M("flatten_param", flatten), F_M("hdf5_data_param", hdf5_data),
    F_X("hdf5_output_param"), F_X("hinge_loss_param"), F_M("image_data_param", image_data),
    F_X("infogain_loss_param"), F_M("inner_product_param", inner_product),
    F_M("input_param", input), F_X("log_param"), F_M("lrn_param", lrn),
    F_M("memory_data_param", memory_data), F_X("mvn_param"), F_X("parameter_param"),
    F_M("pooling_param", pooling), F_M("power_param", power), F_X("prelu_param"), F_X("python_param"),
    F_X("recurrent_param"), F_X("reduction_param"), F_M("relu_param", relu),
    F_M("reshape_param", reshape), F_M("scale_param", scale), F_M("sigmoid_param", neuron),
    F_M("softmax_param", softmax), F_X("spp_param"), F_M("slice_param", slice), F_X("swish_param"),
    F_M("tanh_param", neuron), F_X("threshold_param"), F_X("tile_param"), F_X("window_data_param"),
    F_END };
static const struct mspec layer_v2 = { layer_f };

/* V1LayerParameter (the deprecated "layers { }" message; type is an enum, checked later). */
static const struct fspec layers_f[] = {
    F_S("bottom"), F_S("top"), F_S("name"), F_M("include", rule), F_M("exclude", rule),
    F_E("type", NULL), F_X("blobs"), F_S("param"), F_E("blob_share_mode", "STRICT PERMISSIVE"),
    F_F("blobs_lr"), F_F("weight_decay"), F_F("loss_weight"), F_M("accuracy_param", accuracy),
    F_X("argmax_param"), F_M("concat_param", concat), F_X("contrastive_loss_param"),
    F_M("convolution_param", conv), F_M("data_param", data), F_M("dropout_param", dropout),
    F_X("dummy_data_param"), F_M("eltwise_param", eltwise), F_X("exp_param"),
    F_M("hdf5_data_param", hdf5_data), F_X("hdf5_output_param"), F_X("hinge_loss_param"),
    F_M("image_data_param", image_data), F_X("infogain_loss_param"),
    F_M("inner_product_param", inner_product), F_M("lrn_param", lrn),
    F_M("memory_data_param", memory_data), F_X("mvn_param"), F_M("pooling_param", pooling),
    F_M("power_param", power), F_M("relu_param", relu), F_M("sigmoid_param", neuron),
    F_M("softmax_param", softmax), F_M("slice_param", slice), F_M("tanh_param", neuron),
    F_X("threshold_param"), F_X("window_data_param"), F_M("transform_param", transform),
    F_M("loss_param", loss), F_X("layer"), F_END };
static const struct mspec layer_v1 = { layers_f };

/* NetParameter: the file itself. */
static const struct fspec net_f[] = {
    F_S("name"), F_S("input"), F_M("input_shape", blob_shape), F_I("input_dim"),
    F_B("force_backward"), F_M("state", net_state), F_B("debug_info"), F_M("layer", layer_v2),
    F_M("layers", layer_v1), F_END };
static const struct mspec net_spec = { net_f };

static const char *kind_word(enum vkind k) {
    switch (k) {
    case VK_STR:   return "a quoted string";
    case VK_INT:   return "an integer";
    case VK_UINT:  return "a non-negative integer";
    case VK_FLOAT: return "a number";
    case VK_BOOL:  return "true or false";
    case VK_ENUM:  return "an enum name";
    case VK_MSG:
    case VK_SKIP:  break;
    }
    return "a block";
}

/* Number token (or inf/nan word) as a NUL-terminated copy; 0 if too long to be a number. */
static int num_text(const struct ptree *t, const struct pnode *nd, char *buf, size_t size) {
    if (nd->val_len == 0 || nd->val_len >= size) return 0;
    memcpy(buf, t->text + nd->val, nd->val_len);
    buf[nd->val_len] = '\0';
    return 1;
}

static int parse_int(const char *s, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (end == s || *end != '\0' || errno == ERANGE) return -1;
    *out = v;
    return 0;
}

static int parse_float(const char *s, double *out) {
    long long i;
    char buf[64];
    size_t n = strlen(s);
    if (parse_int(s, &i) == 0) {
        *out = (double)i;
        return 0;
    }
    if (n >= sizeof buf || n == 0) return -1;
    memcpy(buf, s, n + 1);
    if ((buf[n - 1] == 'f' || buf[n - 1] == 'F') && n > 1 && !strchr(buf, 'x') && !strchr(buf, 'X') &&
        (is_digit((unsigned char)buf[n - 2]) || buf[n - 2] == '.'))
        buf[n - 1] = '\0'; /* "1.5f" */
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    if (end == buf || *end != '\0') return -1;
    if (strchr(buf, 'x') || strchr(buf, 'X')) return -1; /* hex floats are not protobuf */
    if (d > FLT_MAX) d = INFINITY; /* values are stored as float; keep the cast defined */
    if (d < -FLT_MAX) d = -INFINITY;
    *out = d;
    return 0;
}

static enum dse_status check_msg(struct ptree *t, int node, const struct mspec *spec,
                                 const char *where);

/* where: "in convolution_param", "at top level", ... for messages. */
static enum dse_status check_field(struct ptree *t, int c, const struct fspec *f, const char *where) {
    struct pnode *nd = &t->nodes[c];
    char name[48], val[48], buf[64];
    dse_pt_show(name, sizeof name, t->text + nd->name, nd->name_len);
    if (f->kind == VK_MSG || f->kind == VK_SKIP) {
        if (!nd->is_msg)
            return perr(t, nd->line, "field '%s' %s is a block; expected '%s { ... }'", name, where, name);
        if (f->kind == VK_SKIP) return DSE_OK;
        char sub[64];
        snprintf(sub, sizeof sub, "in %s", name);
        return check_msg(t, c, f->msg, sub);
    }
    if (nd->is_msg)
        return perr(t, nd->line, "field '%s' %s takes a value, not a block; expected '%s: <%s>'",
                    name, where, name, f->kind == VK_STR ? "string" : f->kind == VK_ENUM ? "name" : "value");
    if (nd->vkind == TK_STRING) dse_pt_show(val, sizeof val, t->pool + nd->val, nd->val_len);
    else dse_pt_show(val, sizeof val, t->text + nd->val, nd->val_len);
    switch (f->kind) {
    case VK_STR:
        if (nd->vkind != TK_STRING)
            return perr(t, nd->line, "'%s: %s': expected a quoted string, e.g. %s: \"%s\"", name, val,
                        name, val);
        return DSE_OK;
    case VK_INT:
    case VK_UINT:
        if (nd->vkind != TK_NUMBER || !num_text(t, nd, buf, sizeof buf) || parse_int(buf, &nd->ival)) {
            if (nd->vkind == TK_STRING)
                return perr(t, nd->line, "'%s: \"%s\"': expected %s, without quotes", name, val,
                            kind_word(f->kind));
            return perr(t, nd->line, "'%s: %s': expected %s", name, val, kind_word(f->kind));
        }
        if (f->kind == VK_UINT && nd->ival < 0)
            return perr(t, nd->line, "'%s: %s': expected a non-negative integer", name, val);
        if (nd->ival > INT_MAX || nd->ival < INT_MIN)
            return perr(t, nd->line, "'%s: %s': value out of range; expected at most %d", name, val,
                        INT_MAX);
        nd->dval = (double)nd->ival;
        return DSE_OK;
    case VK_FLOAT:
        if (nd->vkind == TK_STRING || !num_text(t, nd, buf, sizeof buf) || parse_float(buf, &nd->dval))
            return perr(t, nd->line, "'%s: %s': expected a number", name, val);
        return DSE_OK;
    case VK_BOOL:
        if (val_is(t, nd, "true") || val_is(t, nd, "True") || val_is(t, nd, "t") || val_is(t, nd, "1"))
            nd->ival = 1;
        else if (val_is(t, nd, "false") || val_is(t, nd, "False") || val_is(t, nd, "f") ||
                 val_is(t, nd, "0"))
            nd->ival = 0;
        else
            return perr(t, nd->line, "'%s: %s': expected true or false", name, val);
        return DSE_OK;
    case VK_ENUM: {
        if (nd->vkind != TK_IDENT)
            return perr(t, nd->line, "'%s: %s': expected an enum name without quotes%s%s", name, val,
                        f->enums ? ", one of " : "", f->enums ? f->enums : "");
        if (!f->enums) return DSE_OK;
        const char *e = f->enums;
        while (*e) {
            size_t n = strcspn(e, " ");
            if (n == nd->val_len && memcmp(e, t->text + nd->val, n) == 0) return DSE_OK;
            e += n;
            while (*e == ' ') e++;
        }
        char list[128] = "";
        size_t used = 0;
        for (e = f->enums; *e;) { /* "MAX AVE STOCHASTIC" -> "MAX, AVE or STOCHASTIC" */
            size_t n = strcspn(e, " ");
            const char *sep = used == 0 ? "" : e[n] == '\0' ? " or " : ", ";
            int k = snprintf(list + used, sizeof list - used, "%s%.*s", sep, (int)n, e);
            if (k > 0 && (size_t)k < sizeof list - used) used += (size_t)k;
            e += n;
            while (*e == ' ') e++;
        }
        return perr(t, nd->line, "'%s: %s' is not a valid value; expected %s", name, val, list);
    }
    case VK_MSG:
    case VK_SKIP:
        break;
    }
    return DSE_OK;
}

/* "<x>_param { }" in a layer whose type dse does not know: that type's parameter block,
 * left for the type check to report (an unknown type), or skipped with a layer Caffe
 * does not build. */
static int param_of_unknown_type(const struct ptree *t, int layer, const struct mspec *spec,
                                 const struct pnode *nd) {
    static const char sfx[] = "_param";
    return (spec == &layer_v2 || spec == &layer_v1) && nd->is_msg && nd->name_len > sizeof sfx - 1 &&
           memcmp(t->text + nd->name + nd->name_len - (sizeof sfx - 1), sfx, sizeof sfx - 1) == 0 &&
           !t->type_known(t, layer, spec == &layer_v1);
}

static enum dse_status check_msg(struct ptree *t, int node, const struct mspec *spec,
                                 const char *where) {
    for (int c = t->nodes[node].first; c >= 0; c = t->nodes[c].next) {
        const struct pnode *nd = &t->nodes[c];
        const struct fspec *f = NULL;
        for (const struct fspec *s = spec->fields; s->name; s++)
            if (name_is(t, nd, s->name)) {
                f = s;
                break;
            }
        if (!f && param_of_unknown_type(t, node, spec, nd)) continue;
        if (!f) {
            char name[48], hint[96] = "";
            struct suggest sg;
            dse_pt_show(name, sizeof name, t->text + nd->name, nd->name_len);
            dse_pt_suggest_init(&sg, name);
            for (const struct fspec *s = spec->fields; s->name; s++) dse_pt_suggest_add(&sg, s->name);
            if (sg.best) snprintf(hint, sizeof hint, " (did you mean '%s'?)", sg.best);
            return perr(t, nd->line, "unknown field '%s' %s%s", name, where, hint);
        }
        enum dse_status st = check_field(t, c, f, where);
        if (st) return st;
    }
    return DSE_OK;
}

/* The tree of a whole file, checked: the reader's entry (prototxt_impl.h). */
enum dse_status dse_pt_read(struct ptree *t) {
    int root = -1; /* add_node sets it; GCC 12 at -O3 cannot see that */
    enum dse_status st = add_node(t, -1, NULL, &root);
    if (!st) st = parse_block(t, root, 0, 0);
    if (!st) st = check_msg(t, root, &net_spec, "at top level");
    return st;
}

/* ---------------------------------------------------------------------------------------
 * Names by hash (struct name_index): the reader's blobs and the writer's tops */

static size_t ni_slot(const struct name_index *x, const char *name) {
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 1099511628211u;
    return (size_t)h & (size_t)(x->cap - 1);
}

int dse_pt_names_find(const struct name_index *x, const char *base, size_t stride, const char *name) {
    if (!x->cap) return -1;
    for (size_t k = ni_slot(x, name);; k = (k + 1) & (size_t)(x->cap - 1)) {
        const int i = x->slots[k];
        if (i < 0 || strcmp(base + (size_t)i * stride, name) == 0) return i;
    }
}

static void ni_put(struct name_index *x, const char *base, size_t stride, int i) {
    size_t k = ni_slot(x, base + (size_t)i * stride);
    while (x->slots[k] >= 0) k = (k + 1) & (size_t)(x->cap - 1);
    x->slots[k] = i;
}

int dse_pt_names_add(struct name_index *x, const char *base, size_t stride, int i) {
    if (2 * (x->n + 1) >= x->cap) {
        const struct name_index old = *x;
        x->cap = old.cap ? 2 * old.cap : 128;
        if (!(x->slots = malloc(sizeof *x->slots * (size_t)x->cap))) return *x = old, -1;
        for (int k = 0; k < x->cap; k++) x->slots[k] = -1;
        for (int k = 0; k < old.cap; k++)
            if (old.slots[k] >= 0) ni_put(x, base, stride, old.slots[k]);
        free(old.slots);
    }
    ni_put(x, base, stride, i);
    x->n++;
    return 0;
}
