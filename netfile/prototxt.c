/* prototxt.c: Caffe prototxt import and export. A hand-written reader for protobuf text
 * format builds a tree of fields, checks every field against the parts of caffe.proto
 * (BVLC master) that describe networks, then turns the TRAIN-phase layers into the shared
 * struct dse_net. What is imported, what is assumed and how errors read: docs/prototxt.md.
 * The reader never trusts its input: text need not be NUL-terminated, any byte may appear. */
#include "netfile/netfile.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH     64         /* nested blocks; deeper is an error, not a stack overflow */
#define MAX_VALUE     1000000    /* largest size/count we accept for a hyper-parameter */
#define MAX_FILE      (64 << 20) /* bytes dse_prototxt_load reads at most */

/* ---------------------------------------------------------------------------------------
 * Errors */

static enum dse_status fail(struct dse_err *err, enum dse_status code, const char *path,
                            int line, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static enum dse_status fail(struct dse_err *err, enum dse_status code, const char *path,
                            int line, const char *fmt, ...) {
    char buf[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return dse_err_set(err, code, path, line, "%s", buf);
}

/* Copy len bytes of s into buf for a message: control bytes become '?', long text is cut
 * and ends in "...". Returns buf. */
static const char *show(char *buf, size_t size, const char *s, size_t len) {
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

/* Closest candidate to word for "did you mean"; NULL if none is close enough. */
struct suggest {
    const char *word;
    const char *best;
    int         dist;
};

static void suggest_init(struct suggest *s, const char *word) {
    s->word = word;
    s->best = NULL;
    s->dist = 1000;
}

static void suggest_add(struct suggest *s, const char *cand) {
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

enum tok_kind { TK_EOF, TK_IDENT, TK_NUMBER, TK_STRING, TK_PUNCT };

struct tok {
    enum tok_kind kind;
    size_t        start, len; /* TK_STRING: the raw text between the quotes */
    int           line;
    char          ch;         /* TK_PUNCT: one of { } < > : [ ] , ; */
};

static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alnum(int c) { return is_alpha(c) || is_digit(c); }
static int is_hex(int c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/* One field of the tree: a message (children) or a scalar (one value). */
struct pnode {
    size_t        name, name_len;  /* field name, in the text */
    int           line;            /* line of the field name */
    int           is_msg;
    enum tok_kind vkind;           /* scalar: TK_IDENT, TK_NUMBER or TK_STRING */
    size_t        val, val_len;    /* TK_STRING: unescaped, in the string pool; else text */
    int           first, last, next; /* children and next sibling; -1 if none */
    long long     ival;            /* integers, bools; set by check_msg */
    double        dval;            /* floats; set by check_msg */
};

struct ptree {
    const char     *text;
    size_t          len, pos;
    int             line;
    const char     *path;
    struct dse_err *err;
    struct tok      look;
    int             have_look;
    struct pnode   *nodes;
    int             n_nodes, cap_nodes;
    char           *pool;          /* unescaped strings, each followed by a NUL */
    size_t          pool_len, pool_cap;
};

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
    case TK_IDENT:  snprintf(buf, size, "'%s'", show(s, sizeof s, t->text + k->start, k->len)); break;
    case TK_NUMBER: snprintf(buf, size, "number %s", show(s, sizeof s, t->text + k->start, k->len)); break;
    case TK_STRING: snprintf(buf, size, "string \"%s\"", show(s, sizeof s, t->text + k->start, k->len)); break;
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

static enum dse_status nomem(struct ptree *t) {
    return dse_err_set(t->err, DSE_ERR_NOMEM, t->path, 0, "out of memory reading the network");
}

static enum dse_status add_node(struct ptree *t, int parent, const struct tok *name, int *out) {
    if (t->n_nodes == t->cap_nodes) {
        int cap = t->cap_nodes ? t->cap_nodes * 2 : 256;
        struct pnode *p;
        if (t->cap_nodes > INT_MAX / 2) return nomem(t);
        p = realloc(t->nodes, sizeof *p * (size_t)cap);
        if (!p) return nomem(t);
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
        if (!p) return nomem(t);
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
                    show(s, sizeof s, t->text + name->start, name->len), tok_desc(t, &v, d, sizeof d));
    if (v.kind != TK_IDENT && v.kind != TK_NUMBER && v.kind != TK_STRING)
        return perr(t, v.line, "expected a value after '%s:', found %s",
                    show(s, sizeof s, t->text + name->start, name->len), tok_desc(t, &v, d, sizeof d));
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
                        close, show(s, sizeof s, t->text + p->name, p->name_len), p->line);
        }
        if (is_punct(&k, ',') || is_punct(&k, ';')) continue;
        if (close && is_punct(&k, close)) return DSE_OK;
        if (is_punct(&k, '}') || is_punct(&k, '>')) {
            if (!close) return perr(t, k.line, "unexpected '%c'; no block is open here", k.ch);
            return perr(t, k.line, "unexpected '%c'; expected '%c' to close '%s' opened at line %d",
                        k.ch, close, show(s, sizeof s, t->text + p->name, p->name_len), p->line);
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
                        show(s, sizeof s, t->text + k.start, k.len), tok_desc(t, &c, d, sizeof d));
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
                            show(s, sizeof s, t->text + k.start, k.len), tok_desc(t, &v, d, sizeof d));
        }
    }
}

static int name_is(const struct ptree *t, const struct pnode *nd, const char *name) {
    size_t n = strlen(name);
    return nd->name_len == n && memcmp(t->text + nd->name, name, n) == 0;
}

/* Identifier or number value equal to word. */
static int val_is(const struct ptree *t, const struct pnode *nd, const char *word) {
    size_t n = strlen(word);
    return !nd->is_msg && nd->vkind != TK_STRING && nd->val_len == n &&
           memcmp(t->text + nd->val, word, n) == 0;
}

static const char *str_val(const struct ptree *t, const struct pnode *nd) { return t->pool + nd->val; }

/* Last child named name (protobuf: the last value of an optional field wins); -1 if none. */
static int child(const struct ptree *t, int node, const char *name) {
    int found = -1;
    if (node < 0) return -1;
    for (int c = t->nodes[node].first; c >= 0; c = t->nodes[c].next)
        if (name_is(t, &t->nodes[c], name)) found = c;
    return found;
}

static int child_count(const struct ptree *t, int node, const char *name) {
    int n = 0;
    if (node < 0) return 0;
    for (int c = t->nodes[node].first; c >= 0; c = t->nodes[c].next)
        n += name_is(t, &t->nodes[c], name);
    return n;
}

/* k-th (0-based) child named name; -1 if none. */
static int child_nth(const struct ptree *t, int node, const char *name, int k) {
    if (node < 0) return -1;
    for (int c = t->nodes[node].first; c >= 0; c = t->nodes[c].next)
        if (name_is(t, &t->nodes[c], name) && k-- == 0) return c;
    return -1;
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
    show(name, sizeof name, t->text + nd->name, nd->name_len);
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
    if (nd->vkind == TK_STRING) show(val, sizeof val, t->pool + nd->val, nd->val_len);
    else show(val, sizeof val, t->text + nd->val, nd->val_len);
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

static int type_known(const struct ptree *t, int layer, int v1);

/* "<x>_param { }" in a layer whose type dse does not know: that type's parameter block,
 * left for the type check to report (an unknown type), or skipped with a layer Caffe
 * does not build. */
static int param_of_unknown_type(const struct ptree *t, int layer, const struct mspec *spec,
                                 const struct pnode *nd) {
    static const char sfx[] = "_param";
    return (spec == &layer_v2 || spec == &layer_v1) && nd->is_msg && nd->name_len > sizeof sfx - 1 &&
           memcmp(t->text + nd->name + nd->name_len - (sizeof sfx - 1), sfx, sizeof sfx - 1) == 0 &&
           !type_known(t, layer, spec == &layer_v1);
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
            show(name, sizeof name, t->text + nd->name, nd->name_len);
            suggest_init(&sg, name);
            for (const struct fspec *s = spec->fields; s->name; s++) suggest_add(&sg, s->name);
            if (sg.best) snprintf(hint, sizeof hint, " (did you mean '%s'?)", sg.best);
            return perr(t, nd->line, "unknown field '%s' %s%s", name, where, hint);
        }
        enum dse_status st = check_field(t, c, f, where);
        if (st) return st;
    }
    return DSE_OK;
}

/* ---------------------------------------------------------------------------------------
 * Building the network */

enum kind {
    K_INPUT, K_DATA, K_IMAGE_DATA, K_MEMORY_DATA, K_HDF5_DATA, /* data layers first */
    K_CONV, K_POOL, K_RELU, K_DROPOUT, K_CONCAT, K_ELTWISE, K_FC, K_SOFTMAX, K_SOFTMAX_LOSS,
    K_ACCURACY, K_LRN, K_BATCHNORM, K_SCALE, K_DEPTHWISE, K_FLATTEN, K_RESHAPE, K_SLICE, K_SIGMOID,
    K_TANH, K_POWER
};

static const struct {
    const char *v2, *v1; /* type names: LayerParameter string, V1LayerParameter enum */
    enum kind   kind;
} layer_types[] = {
    { "Input",           NULL,            K_INPUT },
    { "Data",            "DATA",          K_DATA },
    { "ImageData",       "IMAGE_DATA",    K_IMAGE_DATA },
    { "MemoryData",      "MEMORY_DATA",   K_MEMORY_DATA },
    { "HDF5Data",        "HDF5_DATA",     K_HDF5_DATA },
    { "Convolution",     "CONVOLUTION",   K_CONV },
    { "Pooling",         "POOLING",       K_POOL },
    { "ReLU",            "RELU",          K_RELU },
    { "Dropout",         "DROPOUT",       K_DROPOUT },
    { "Concat",          "CONCAT",        K_CONCAT },
    { "Eltwise",         "ELTWISE",       K_ELTWISE },
    { "InnerProduct",    "INNER_PRODUCT", K_FC },
    { "Softmax",         "SOFTMAX",       K_SOFTMAX },
    { "SoftmaxWithLoss", "SOFTMAX_LOSS",  K_SOFTMAX_LOSS },
    { "Accuracy",        "ACCURACY",      K_ACCURACY },
    { "LRN",             "LRN",           K_LRN },
    { "BatchNorm",       NULL,            K_BATCHNORM },
    { "Scale",           NULL,            K_SCALE },
    /* Caffe-fork depthwise convolutions: a Convolution with one group per input channel */
    { "ConvolutionDepthwise", NULL,       K_DEPTHWISE },
    { "DepthwiseConvolution", NULL,       K_DEPTHWISE },
    { "Flatten",         "FLATTEN",       K_FLATTEN },
    { "Reshape",         NULL,            K_RESHAPE },
    { "Slice",           "SLICE",         K_SLICE },
    { "Sigmoid",         "SIGMOID",       K_SIGMOID },
    { "TanH",            "TANH",          K_TANH },
    { "Power",           "POWER",         K_POWER },
};

/* 1 if the layer's type is one of layer_types (0 without a type). */
/* The kind of a layer's type value tn (a V2 string or a V1 enum name); -1 if it names none. */
static int type_kind(const struct ptree *t, const struct pnode *tn, int v1) {
    if (tn->is_msg || tn->vkind != (v1 ? TK_IDENT : TK_STRING)) return -1;
    const char *v = v1 ? t->text + tn->val : str_val(t, tn);
    for (int i = 0; i < DSE_ARRAY_LEN(layer_types); i++) {
        const char *n = v1 ? layer_types[i].v1 : layer_types[i].v2;
        if (n && strlen(n) == tn->val_len && memcmp(n, v, tn->val_len) == 0) return (int)layer_types[i].kind;
    }
    return -1;
}

static int type_known(const struct ptree *t, int layer, int v1) {
    int tc = child(t, layer, "type");
    return tc >= 0 && type_kind(t, &t->nodes[tc], v1) >= 0;
}

/* Names kept in an array (at base + i * stride, NUL-terminated), found by hash: indices in
 * open-addressed slots (-1 empty), cap a power of 2 above twice the names. The reader's
 * blobs and the writer's tops; a deep net goes in linear time. */
struct name_index {
    int *slots;
    int  cap, n;
};

static size_t ni_slot(const struct name_index *x, const char *name) {
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 1099511628211u;
    return (size_t)h & (size_t)(x->cap - 1);
}

/* The index of name, or -1. */
static int ni_find(const struct name_index *x, const char *base, size_t stride, const char *name) {
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

/* Add name i (not in yet); -1 if out of memory. */
static int ni_add(struct name_index *x, const char *base, size_t stride, int i) {
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

struct blob {
    char name[DSE_NAME_MAX];
    int  layer; /* producing layer index, or DSE_INPUT_DATA */
    int  label; /* a label blob: consumers drop it */
};

struct build {
    struct ptree                 *t;
    const char                   *path;
    struct dse_err               *err;
    struct dse_net               *net;
    const struct dse_input_shape *ov;
    struct blob                  *blobs;
    int                           n_blobs, cap_blobs;
    struct name_index             by_name;     /* the blobs by name: a deep net reads in linear time */
    int                           have_input, input_line;
    char                          input_name[DSE_NAME_MAX];
};

static int find_blob(const struct build *b, const char *name) {
    return ni_find(&b->by_name, (const char *)b->blobs, sizeof *b->blobs, name);
}

/* Name (or re-produce) blob `name` as the output of `layer`. */
static enum dse_status set_blob(struct build *b, const char *name, int layer, int label) {
    int i = find_blob(b, name);
    if (i < 0) {
        if (b->n_blobs == b->cap_blobs) {
            int cap = b->cap_blobs ? b->cap_blobs * 2 : 64;
            struct blob *p = realloc(b->blobs, sizeof *p * (size_t)cap);
            if (!p) return nomem(b->t);
            b->blobs = p;
            b->cap_blobs = cap;
        }
        i = b->n_blobs++;
        dse_strlcpy(b->blobs[i].name, name, DSE_NAME_MAX);
        if (ni_add(&b->by_name, (const char *)b->blobs, sizeof *b->blobs, i)) return b->n_blobs--, nomem(b->t);
    }
    b->blobs[i].layer = layer;
    b->blobs[i].label = label;
    return DSE_OK;
}

/* Copy a string field into a DSE_NAME_MAX buffer. */
static enum dse_status get_name(struct build *b, int node, char *out, const char *what) {
    const struct pnode *nd = &b->t->nodes[node];
    char s[48];
    if (memchr(str_val(b->t, nd), '\0', nd->val_len))
        return fail(b->err, DSE_ERR_CONFIG, b->path, nd->line, "%s '%s' contains a NUL byte", what,
                    show(s, sizeof s, str_val(b->t, nd), nd->val_len));
    if (nd->val_len >= DSE_NAME_MAX)
        return fail(b->err, DSE_ERR_CONFIG, b->path, nd->line,
                    "%s '%s' is %zu characters long; expected at most %d", what,
                    show(s, sizeof s, str_val(b->t, nd), nd->val_len), nd->val_len, DSE_NAME_MAX - 1);
    memcpy(out, str_val(b->t, nd), nd->val_len + 1);
    return DSE_OK;
}

/* Integer field of msg (a *_param node, or -1) within [lo, MAX_VALUE]; *out keeps its
 * default when the field is absent. */
static enum dse_status get_int(struct build *b, int msg, const char *field, int lo, int *out) {
    int c = child(b->t, msg, field);
    if (c < 0) return DSE_OK;
    long long v = b->t->nodes[c].ival;
    if (v < lo || v > MAX_VALUE)
        return fail(b->err, DSE_ERR_CONFIG, b->path, b->t->nodes[c].line,
                    "'%s: %lld' is out of range; expected %d to %d", field, v, lo, MAX_VALUE);
    *out = (int)v;
    return DSE_OK;
}

static int get_bool(const struct ptree *t, int msg, const char *field, int dflt) {
    int c = child(t, msg, field);
    return c < 0 ? dflt : (int)t->nodes[c].ival;
}

/* A size given as `base` (repeated: one value for both, or height then width) or as
 * hname/wname. both: the _h/_w form needs both (kernel, stride: Caffe has no default for
 * the other). *given says if any was there. */
static enum dse_status get_hw(struct build *b, int msg, const char *ctx, const char *base,
                              const char *hname, const char *wname, int both, int lo, int *h,
                              int *w, int *given) {
    const struct ptree *t = b->t;
    enum dse_status st;
    int n = child_count(t, msg, base);
    int hc = hname ? child(t, msg, hname) : -1, wc = wname ? child(t, msg, wname) : -1;
    *given = n > 0 || hc >= 0 || wc >= 0;
    if (n > 2)
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[child_nth(t, msg, base, 2)].line,
                    "%s has %d '%s' values; only 2-D layers are supported (one value, or height "
                    "then width)", ctx, n, base);
    if (n > 0 && (hc >= 0 || wc >= 0))
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[hc >= 0 ? hc : wc].line,
                    "%s gives both '%s' and '%s'/'%s'; expected one or the other", ctx, base, hname, wname);
    if (n > 0) {
        long long v[2];
        for (int i = 0; i < n; i++) {
            const struct pnode *nd = &t->nodes[child_nth(t, msg, base, i)];
            v[i] = nd->ival;
            if (v[i] < lo || v[i] > MAX_VALUE)
                return fail(b->err, DSE_ERR_CONFIG, b->path, nd->line,
                            "'%s: %lld' is out of range; expected %d to %d", base, v[i], lo, MAX_VALUE);
        }
        *h = (int)v[0];
        *w = (int)v[n - 1];
        return DSE_OK;
    }
    if (both && (hc >= 0) != (wc >= 0))
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[hc >= 0 ? hc : wc].line,
                    "%s gives only one of '%s' and '%s'; expected both", ctx, hname, wname);
    if (hname && (st = get_int(b, msg, hname, lo, h))) return st;
    if (wname && (st = get_int(b, msg, wname, lo, w))) return st;
    return DSE_OK;
}

/* Caffe's NetStateRule test against the state we import: phase TRAIN, level 0, no stages. */
static int rule_met(const struct ptree *t, int r) {
    int c;
    if ((c = child(t, r, "phase")) >= 0 && !val_is(t, &t->nodes[c], "TRAIN")) return 0;
    if ((c = child(t, r, "min_level")) >= 0 && t->nodes[c].ival > 0) return 0;
    if ((c = child(t, r, "max_level")) >= 0 && t->nodes[c].ival < 0) return 0;
    return child_count(t, r, "stage") == 0;
}

/* The dims of a BlobShape node (N, C, H, W) as the network input. */
static enum dse_status shape_dims(struct build *b, int shape, const char *what, int *c, int *h,
                                  int *w) {
    const struct ptree *t = b->t;
    int n = child_count(t, shape, "dim");
    long long d[4];
    if (n != 4)
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[shape].line,
                    "%s has %d dims; expected 4 (N, C, H, W)", what, n);
    for (int i = 0; i < 4; i++) {
        const struct pnode *nd = &t->nodes[child_nth(t, shape, "dim", i)];
        d[i] = nd->ival;
        if (d[i] < 1 || d[i] > MAX_VALUE)
            return fail(b->err, DSE_ERR_CONFIG, b->path, nd->line,
                        "'dim: %lld' is out of range; expected 1 to %d", d[i], MAX_VALUE);
    }
    *c = (int)d[1], *h = (int)d[2], *w = (int)d[3]; /* batch size d[0] does not matter */
    return DSE_OK;
}

/* Make blob `name` the network input with shape c x h x w (0 = unknown), after the
 * --input override. missing says what the file lacks when a size stays unknown. */
static enum dse_status set_input(struct build *b, int line, const char *name, int c, int h, int w,
                                 const char *missing) {
    if (b->have_input)
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, line,
                    "second network input '%s' (the first is '%s' at line %d); expected one input",
                    name, b->input_name, b->input_line);
    if (b->ov) {
        if (b->ov->c > 0) c = b->ov->c;
        if (b->ov->h > 0) h = b->ov->h;
        if (b->ov->w > 0) w = b->ov->w;
    }
    if (c <= 0 || h <= 0 || w <= 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, line, "%s; pass the input size with --input C,H,W",
                    missing);
    b->have_input = 1;
    b->input_line = line;
    dse_strlcpy(b->input_name, name, DSE_NAME_MAX);
    b->net->in_c = c, b->net->in_h = h, b->net->in_w = w;
    return set_blob(b, name, DSE_INPUT_DATA, 0);
}

/* Top-level "input:" blobs with input_dim or input_shape (deploy files, V1 files). */
static enum dse_status build_inputs(struct build *b) {
    const struct ptree *t = b->t;
    enum dse_status st;
    int n_in = child_count(t, 0, "input"), n_dim = child_count(t, 0, "input_dim");
    int n_shape = child_count(t, 0, "input_shape");
    if (n_in == 0 && (n_dim > 0 || n_shape > 0)) {
        int c = n_dim > 0 ? child(t, 0, "input_dim") : child(t, 0, "input_shape");
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[c].line,
                    "'%s' without 'input'; expected input: \"data\" naming the blob",
                    n_dim > 0 ? "input_dim" : "input_shape");
    }
    if (n_dim > 0 && n_shape > 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[child(t, 0, "input_dim")].line,
                    "both 'input_shape' and 'input_dim'; expected one of them (Caffe's rule)");
    if (n_dim > 0 && n_dim != 4 * n_in)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[child(t, 0, "input_dim")].line,
                    "%d 'input_dim' values for %d input%s; expected 4 per input (N, C, H, W)",
                    n_dim, n_in, n_in == 1 ? "" : "s");
    for (int i = 0; i < n_in; i++) {
        int node = child_nth(t, 0, "input", i);
        char name[DSE_NAME_MAX], what[DSE_NAME_MAX + 64];
        int c = 0, h = 0, w = 0;
        if ((st = get_name(b, node, name, "input name"))) return st;
        if (strcmp(name, "label") == 0) {
            if ((st = set_blob(b, name, DSE_INPUT_DATA, 1))) return st;
            continue;
        }
        snprintf(what, sizeof what, "input_shape of '%s'", name);
        if (n_shape > 0) {
            int s = child_nth(t, 0, "input_shape", i);
            if (s < 0)
                return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line,
                            "input '%s' has no input_shape; expected one input_shape per input", name);
            if ((st = shape_dims(b, s, what, &c, &h, &w))) return st;
        } else if (n_dim > 0) {
            long long d[4];
            for (int k = 0; k < 4; k++) {
                const struct pnode *nd = &t->nodes[child_nth(t, 0, "input_dim", 4 * i + k)];
                d[k] = nd->ival;
                if (d[k] < 1 || d[k] > MAX_VALUE)
                    return fail(b->err, DSE_ERR_CONFIG, b->path, nd->line,
                                "'input_dim: %lld' is out of range; expected 1 to %d", d[k], MAX_VALUE);
            }
            c = (int)d[1], h = (int)d[2], w = (int)d[3];
        }
        snprintf(what, sizeof what, "input '%s' has no input_dim or input_shape", name);
        if ((st = set_input(b, t->nodes[node].line, name, c, h, w, what))) return st;
    }
    return DSE_OK;
}

static enum dse_status unknown_type(struct build *b, int node, const char *type, int v1) {
    char list[400] = "", hint[96] = "";
    size_t used = 0;
    struct suggest sg;
    suggest_init(&sg, type);
    for (int i = 0; i < DSE_ARRAY_LEN(layer_types); i++) {
        const char *n = v1 ? layer_types[i].v1 : layer_types[i].v2;
        if (!n) continue;
        suggest_add(&sg, n);
        int k = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", n);
        if (k > 0 && (size_t)k < sizeof list - used) used += (size_t)k;
    }
    if (sg.best) snprintf(hint, sizeof hint, " (did you mean '%s'?)", sg.best);
    return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, b->t->nodes[node].line,
                "unknown layer type '%.40s'%s; supported: %s", type, hint, list);
}

/* A data layer: its first top is the network input, a second top is the label. */
static enum dse_status build_data(struct build *b, int node, enum kind k, const char *name,
                                  const char *type, int n_top) {
    const struct ptree *t = b->t;
    enum dse_status st;
    int line = t->nodes[node].line;
    int c = 0, h = 0, w = 0, crop = 0;
    char missing[256], top[DSE_NAME_MAX];
    int tp = child(t, node, "transform_param");
    if (child(t, node, "bottom") >= 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[child(t, node, "bottom")].line,
                    "%s layer '%s' has a bottom; expected none", type, name);
    if (n_top == 0 || n_top > 2)
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, line,
                    "%s layer '%s' has %d tops; expected the data and optionally a label", type,
                    name, n_top);
    if ((st = get_int(b, tp, "crop_size", 0, &crop))) return st;
    switch (k) {
    case K_INPUT: {
        int shape = child(t, child(t, node, "input_param"), "shape");
        if (shape >= 0) {
            char what[DSE_NAME_MAX + 40];
            snprintf(what, sizeof what, "shape of Input layer '%s'", name);
            if ((st = shape_dims(b, child_nth(t, child(t, node, "input_param"), "shape", 0), what,
                                 &c, &h, &w)))
                return st;
        }
        snprintf(missing, sizeof missing, "Input layer '%s' gives no input size (no input_param "
                 "{ shape { dim ... } })", name);
        break;
    }
    case K_DATA:
    case K_IMAGE_DATA: {
        /* Caffe decodes to 3 channels unless told otherwise (docs/prototxt.md). */
        int p = child(t, node, k == K_DATA ? "data_param" : "image_data_param");
        if (!crop && (st = get_int(b, p, "crop_size", 0, &crop))) return st; /* deprecated place */
        c = 3;
        if (get_bool(t, tp, "force_gray", 0)) c = 1;
        if (k == K_IMAGE_DATA && !get_bool(t, p, "is_color", 1)) c = 1;
        if (crop > 0) {
            h = w = crop;
        } else if (k == K_IMAGE_DATA) {
            if ((st = get_int(b, p, "new_height", 0, &h))) return st;
            if ((st = get_int(b, p, "new_width", 0, &w))) return st;
        }
        snprintf(missing, sizeof missing, "%s layer '%s' gives no input size (no transform_param "
                 "{ crop_size }%s)", type, name, k == K_IMAGE_DATA ? " or new_height/new_width" : "");
        break;
    }
    case K_MEMORY_DATA: {
        int p = child(t, node, "memory_data_param");
        if ((st = get_int(b, p, "channels", 0, &c))) return st;
        if ((st = get_int(b, p, "height", 0, &h))) return st;
        if ((st = get_int(b, p, "width", 0, &w))) return st;
        snprintf(missing, sizeof missing, "MemoryData layer '%s' gives no input size (memory_data_param "
                 "needs channels, height and width)", name);
        break;
    }
    default:
        snprintf(missing, sizeof missing, "%s layer '%s' gives no input size (it is in the data files)",
                 type, name);
        break;
    }
    if ((st = get_name(b, child_nth(t, node, "top", 0), top, "top"))) return st;
    if ((st = set_input(b, line, top, c, h, w, missing))) return st;
    if (n_top == 2) {
        if ((st = get_name(b, child_nth(t, node, "top", 1), top, "top"))) return st;
        if ((st = set_blob(b, top, DSE_INPUT_DATA, 1))) return st;
    }
    return DSE_OK;
}

/* Hyper-parameters of a layer that is not a data layer. */
static enum dse_status build_params(struct build *b, int node, enum kind k, struct dse_layer *l,
                                    const char *type) {
    const struct ptree *t = b->t;
    enum dse_status st;
    char ctx[DSE_NAME_MAX + 64];
    int given, p, c;
    snprintf(ctx, sizeof ctx, "%s layer '%s'", type, l->name);
    switch (k) {
    case K_CONV:
    case K_DEPTHWISE:
        p = child(t, node, "convolution_param");
        l->type = DSE_LAYER_CONV;
        l->num_output = 0;
        if (child(t, p, "num_output") < 0)
            return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line,
                        "%s has no num_output; expected convolution_param { num_output: N }", ctx);
        if ((st = get_int(b, p, "num_output", 1, &l->num_output))) return st;
        if ((st = get_hw(b, p, ctx, "kernel_size", "kernel_h", "kernel_w", 1, 1, &l->kernel_h,
                         &l->kernel_w, &given)))
            return st;
        if (!given)
            return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line,
                        "%s has no kernel size; expected convolution_param { kernel_size: K } or "
                        "kernel_h and kernel_w", ctx);
        if ((st = get_hw(b, p, ctx, "stride", "stride_h", "stride_w", 1, 1, &l->stride_h, &l->stride_w,
                         &given)))
            return st;
        if ((st = get_hw(b, p, ctx, "pad", "pad_h", "pad_w", 0, 0, &l->pad_h, &l->pad_w, &given)))
            return st;
        if ((st = get_hw(b, p, ctx, "dilation", NULL, NULL, 0, 1, &l->dilation_h, &l->dilation_w,
                         &given)))
            return st;
        if ((st = get_int(b, p, "group", 1, &l->groups))) return st;
        l->depthwise = k == K_DEPTHWISE; /* groups = input channels (dse_net_infer) */
        l->bias = get_bool(t, p, "bias_term", 1);
        if ((c = child(t, p, "axis")) >= 0 && t->nodes[c].ival != 1)
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                        "%s: convolution over axis %lld is not supported; expected axis 1 (channels)",
                        ctx, t->nodes[c].ival);
        return DSE_OK;
    case K_POOL:
        p = child(t, node, "pooling_param");
        l->type = DSE_LAYER_MAXPOOL;
        if ((c = child(t, p, "pool")) >= 0) {
            if (val_is(t, &t->nodes[c], "AVE")) l->type = DSE_LAYER_AVGPOOL;
            if (val_is(t, &t->nodes[c], "STOCHASTIC"))
                return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                            "%s: STOCHASTIC pooling is not supported; expected pool: MAX or AVE", ctx);
        }
        l->global = get_bool(t, p, "global_pooling", 0);
        if ((st = get_hw(b, p, ctx, "kernel_size", "kernel_h", "kernel_w", 1, 1, &l->kernel_h,
                         &l->kernel_w, &given)))
            return st;
        if (!given && !l->global)
            return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line,
                        "%s has no kernel size; expected pooling_param { kernel_size: K } or "
                        "global_pooling: true", ctx);
        if ((st = get_hw(b, p, ctx, "stride", "stride_h", "stride_w", 1, 1, &l->stride_h, &l->stride_w,
                         &given)))
            return st;
        if ((st = get_hw(b, p, ctx, "pad", "pad_h", "pad_w", 0, 0, &l->pad_h, &l->pad_w, &given)))
            return st;
        if ((c = child(t, p, "round_mode")) >= 0 && val_is(t, &t->nodes[c], "FLOOR"))
            l->round = DSE_ROUND_FLOOR;
        if ((given = child(t, p, "ceil_mode")) >= 0) {
            enum dse_round r = t->nodes[given].ival ? DSE_ROUND_CEIL : DSE_ROUND_FLOOR;
            if (c >= 0 && r != l->round)
                return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[given].line,
                            "%s: 'ceil_mode: %s' contradicts 'round_mode: %s' (line %d); expected one of them",
                            ctx, r == DSE_ROUND_CEIL ? "true" : "false",
                            l->round == DSE_ROUND_CEIL ? "CEIL" : "FLOOR", t->nodes[c].line);
            l->round = r;
        }
        return DSE_OK;
    case K_FC:
        p = child(t, node, "inner_product_param");
        l->type = DSE_LAYER_FC;
        if (child(t, p, "num_output") < 0)
            return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line,
                        "%s has no num_output; expected inner_product_param { num_output: N }", ctx);
        if ((st = get_int(b, p, "num_output", 1, &l->num_output))) return st;
        l->bias = get_bool(t, p, "bias_term", 1);
        if ((c = child(t, p, "axis")) >= 0 && t->nodes[c].ival != 1)
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                        "%s: inner product from axis %lld is not supported; expected axis 1", ctx,
                        t->nodes[c].ival);
        return DSE_OK;
    case K_DROPOUT:
        l->type = DSE_LAYER_DROPOUT;
        if ((c = child(t, child(t, node, "dropout_param"), "dropout_ratio")) >= 0)
            l->dropout_ratio = (float)t->nodes[c].dval;
        return DSE_OK;
    case K_CONCAT: {
        p = child(t, node, "concat_param");
        l->type = DSE_LAYER_CONCAT;
        int cd = child(t, p, "concat_dim"), ax = child(t, p, "axis");
        c = cd >= 0 ? cd : ax; /* Caffe: concat_dim, if given, wins */
        if (c >= 0 && t->nodes[c].ival != 1)
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                        "%s: concatenation along axis %lld is not supported; expected axis 1 (channels)",
                        ctx, t->nodes[c].ival);
        return DSE_OK;
    }
    case K_ELTWISE:
        l->type = DSE_LAYER_ELTWISE;
        l->eltwise_op = DSE_ELTWISE_SUM;
        if ((c = child(t, child(t, node, "eltwise_param"), "operation")) >= 0) {
            if (val_is(t, &t->nodes[c], "PROD")) l->eltwise_op = DSE_ELTWISE_PROD;
            if (val_is(t, &t->nodes[c], "MAX")) l->eltwise_op = DSE_ELTWISE_MAX;
        }
        return DSE_OK;
    case K_LRN:
        l->type = DSE_LAYER_LRN;
        return get_int(b, child(t, node, "lrn_param"), "local_size", 1, &l->lrn_size);
    case K_BATCHNORM:
        l->type = DSE_LAYER_BATCHNORM;
        l->affine = 0; /* Caffe's BatchNorm only normalizes; a Scale layer learns gamma, beta */
        return DSE_OK;
    case K_SCALE:
        p = child(t, node, "scale_param");
        l->type = DSE_LAYER_SCALE;
        l->bias = get_bool(t, p, "bias_term", 0);
        if (((c = child(t, p, "axis")) >= 0 && t->nodes[c].ival != 1) ||
            ((c = child(t, p, "num_axes")) >= 0 && t->nodes[c].ival != 1))
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                        "%s: only per-channel scaling (axis: 1, num_axes: 1) is supported", ctx);
        return DSE_OK;
    case K_FLATTEN:
        p = child(t, node, "flatten_param");
        l->type = DSE_LAYER_FLATTEN;
        if (((c = child(t, p, "axis")) >= 0 && t->nodes[c].ival != 1) ||
            ((c = child(t, p, "end_axis")) >= 0 && t->nodes[c].ival != -1 && t->nodes[c].ival != 3))
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                        "%s: only flattening from axis 1 to the last (axis: 1, end_axis: -1) is supported", ctx);
        return DSE_OK;
    case K_RESHAPE: {
        p = child(t, node, "reshape_param");
        l->type = DSE_LAYER_RESHAPE;
        int shape = child(t, p, "shape"), nd = child_count(t, shape, "dim");
        if (((c = child(t, p, "axis")) >= 0 && t->nodes[c].ival != 0) ||
            ((c = child(t, p, "num_axes")) >= 0 && t->nodes[c].ival != -1))
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                        "%s: only a reshape of all axes (axis: 0, num_axes: -1) is supported", ctx);
        if (shape < 0 || nd < 1 || nd > 4)
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, shape < 0 ? t->nodes[node].line : t->nodes[shape].line,
                        "%s: reshape_param { shape } has %d dims; dse networks are N x C x H x W, so expected "
                        "1 to 4 dims", ctx, nd);
        for (int d = 0; d < nd; d++) {
            const struct pnode *dn = &t->nodes[child_nth(t, shape, "dim", d)];
            if (dn->ival < -1 || dn->ival > MAX_VALUE)
                return fail(b->err, DSE_ERR_CONFIG, b->path, dn->line,
                            "%s: 'dim: %lld' is out of range; expected -1 (infer), 0 (copy) or 1 to %d", ctx,
                            dn->ival, MAX_VALUE);
            if (d == 0 && dn->ival != 0)
                return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, dn->line,
                            "%s: the first dim is %lld; expected 0 (keep the batch): dse costs one image", ctx,
                            dn->ival);
            if (d > 0) l->dims[d - 1] = (int)dn->ival;
        }
        for (int d = nd - 1; d < 3; d++) l->dims[d] = 1; /* missing trailing dims: 1 */
        return DSE_OK;
    }
    case K_SLICE:
        p = child(t, node, "slice_param");
        l->type = DSE_LAYER_SLICE;
        if (((c = child(t, p, "axis")) >= 0 && t->nodes[c].ival != 1) ||
            ((c = child(t, p, "slice_dim")) >= 0 && t->nodes[c].ival != 1))
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[c].line,
                        "%s: slicing along axis %lld is not supported; expected axis 1 (channels)", ctx,
                        t->nodes[c].ival);
        return DSE_OK;
    case K_POWER:
        p = child(t, node, "power_param");
        l->type = DSE_LAYER_POWER;
        if ((c = child(t, p, "power")) >= 0) l->power = (float)t->nodes[c].dval;
        if ((c = child(t, p, "scale")) >= 0) l->power_scale = (float)t->nodes[c].dval;
        if ((c = child(t, p, "shift")) >= 0) l->power_shift = (float)t->nodes[c].dval;
        return DSE_OK;
    case K_SIGMOID:      l->type = DSE_LAYER_SIGMOID;      return DSE_OK;
    case K_TANH:         l->type = DSE_LAYER_TANH;         return DSE_OK;
    case K_RELU:         l->type = DSE_LAYER_RELU;         return DSE_OK;
    case K_SOFTMAX:      l->type = DSE_LAYER_SOFTMAX;      return DSE_OK;
    case K_SOFTMAX_LOSS: l->type = DSE_LAYER_SOFTMAX_LOSS; return DSE_OK;
    case K_ACCURACY:     l->type = DSE_LAYER_ACCURACY;     return DSE_OK;
    default:
        break;
    }
    return fail(b->err, DSE_ERR_INTERNAL, b->path, t->nodes[node].line, "%s: not a computing layer", ctx);
}

/* A Slice layer: one dse layer per top, each a channel range of the bottom. With several
 * tops they are named "<layer>:<k>"; slice_point gives the ranges' ends, or without it the
 * channels split into equal parts. */
static enum dse_status build_slice(struct build *b, int node, struct dse_layer *l, int n_top) {
    const struct ptree *t = b->t;
    enum dse_status st;
    char base[DSE_NAME_MAX], top[DSE_NAME_MAX];
    int p = child(t, node, "slice_param"), n_pt = child_count(t, p, "slice_point");
    if (n_top == 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line, "Slice layer '%s' has no top", l->name);
    if (l->n_inputs != 1)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line, "Slice layer '%s' has %d bottoms; "
                    "expected 1", l->name, l->n_inputs);
    if (n_pt && n_pt != n_top - 1)
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[child(t, p, "slice_point")].line,
                    "Slice layer '%s' has %d slice_point for %d tops; expected %d (one fewer than the tops)",
                    l->name, n_pt, n_top, n_top - 1);
    memcpy(base, l->name, sizeof base);
    for (int k = 0, prev = 0; k < n_top; k++) {
        struct dse_layer s = *l;
        if (n_pt) {
            int end = k < n_pt ? (int)t->nodes[child_nth(t, p, "slice_point", k)].ival : 0;
            if (k < n_pt && end <= prev)
                return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[child_nth(t, p, "slice_point", k)].line,
                            "Slice layer '%s': slice_point %d is not above the one before (%d); expected "
                            "increasing channel indices", base, end, prev);
            s.slice_begin = prev, s.slice_end = end;
            prev = end;
        } else if (n_top > 1) {
            s.slice_part = k, s.slice_parts = n_top;
        }
        if (n_top > 1) {
            char nm[DSE_NAME_MAX + 16];
            snprintf(nm, sizeof nm, "%s:%d", base, k);
            if (strlen(nm) >= DSE_NAME_MAX)
                return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[node].line, "Slice layer name '%.40s...' "
                            "is too long; at most %d characters", base, DSE_NAME_MAX - 5);
            memcpy(s.name, nm, DSE_NAME_MAX);
        }
        if ((st = get_name(b, child_nth(t, node, "top", k), top, "top"))) return st;
        if ((st = dse_net_add(b->net, &s, b->err))) {
            dse_err_name_file(b->err, b->path);
            return st;
        }
        if ((st = set_blob(b, top, b->net->n_layers - 1, 0))) return st;
    }
    return DSE_OK;
}

static enum dse_status build_layer(struct build *b, int node, int v1) {
    const struct ptree *t = b->t;
    enum dse_status st;
    int line = t->nodes[node].line;
    int tc = child(t, node, "type");
    int n_inc = child_count(t, node, "include"), n_exc = child_count(t, node, "exclude");
    int n_top = child_count(t, node, "top"), n_bot = child_count(t, node, "bottom");
    char name[DSE_NAME_MAX], type[48], s[48];
    int k = -1;

    /* Phase first: a TEST-only layer may be of any type. */
    if (n_inc > 0 && n_exc > 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, line,
                    "layer has both include and exclude rules; expected one kind (Caffe's rule)");
    if (n_inc > 0) {
        int met = 0;
        for (int i = 0; i < n_inc; i++) met |= rule_met(t, child_nth(t, node, "include", i));
        if (!met) return DSE_OK;
    }
    for (int i = 0; i < n_exc; i++)
        if (rule_met(t, child_nth(t, node, "exclude", i))) return DSE_OK;

    if (child(t, node, "name") >= 0) {
        if ((st = get_name(b, child(t, node, "name"), name, "layer name"))) return st;
    } else if (n_top > 0) {
        if ((st = get_name(b, child_nth(t, node, "top", 0), name, "top"))) return st;
    } else {
        snprintf(name, sizeof name, "layer%d", b->net->n_layers);
    }
    if (tc < 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, line, "layer '%s' has no type; expected %s",
                    name, v1 ? "type: CONVOLUTION or another V1 type" : "type: \"Convolution\" or another type");
    const struct pnode *tn = &t->nodes[tc];
    show(type, sizeof type, v1 ? t->text + tn->val : str_val(t, tn), tn->val_len);
    if ((k = type_kind(t, tn, v1)) < 0) return unknown_type(b, tc, type, v1);
    if (k <= K_HDF5_DATA) return build_data(b, node, (enum kind)k, name, type, n_top);

    struct dse_layer l = dse_layer_make(DSE_LAYER_RELU, name);
    l.line = line;
    const char *slash = strrchr(name, '/'); /* "<fire>/<part>": a part of Fire module <fire> */
    if (slash && slash != name && (l.role = dse_role_from_suffix(slash + 1)) != DSE_ROLE_NONE) {
        memcpy(l.module, name, (size_t)(slash - name));
        l.module[slash - name] = '\0';
    }
    if ((st = build_params(b, node, (enum kind)k, &l, type))) return st;

    if (n_top > 1 && k != K_SLICE)
        return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[child_nth(t, node, "top", 1)].line,
                    "layer '%s' has %d tops; only data and Slice layers may have more than one", name, n_top);
    if (n_bot == 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, line,
                    "layer '%s' has no bottom; expected bottom: \"<blob>\" naming its input", name);
    char first_bottom[DSE_NAME_MAX] = "";
    for (int i = 0; i < n_bot; i++) {
        int bn = child_nth(t, node, "bottom", i);
        char bot[DSE_NAME_MAX];
        if ((st = get_name(b, bn, bot, "bottom"))) return st;
        int bi = find_blob(b, bot);
        if (bi < 0) {
            char hint[200] = "";
            struct suggest sg;
            suggest_init(&sg, bot);
            for (int j = 0; j < b->n_blobs; j++) suggest_add(&sg, b->blobs[j].name);
            if (sg.best) snprintf(hint, sizeof hint, " (did you mean '%s'?)", sg.best);
            if (!b->have_input)
                snprintf(hint, sizeof hint, "; no network input is defined before it (expected an "
                         "Input or Data layer, or input: \"%s\" with input_dim)", show(s, sizeof s, bot, strlen(bot)));
            return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[bn].line,
                        "layer '%s': bottom '%s' is not the top of any earlier layer%s", name,
                        show(s, sizeof s, bot, strlen(bot)), hint);
        }
        if (i == 0) memcpy(first_bottom, bot, sizeof bot);
        if (b->blobs[bi].label) continue; /* the label feeds only loss/accuracy: not modeled */
        if (l.n_inputs == DSE_MAX_INPUTS)
            return fail(b->err, DSE_ERR_UNSUPPORTED, b->path, t->nodes[bn].line,
                        "layer '%s' has more than %d bottoms", name, DSE_MAX_INPUTS);
        l.inputs[l.n_inputs++] = b->blobs[bi].layer;
    }
    if (l.n_inputs == 0)
        return fail(b->err, DSE_ERR_CONFIG, b->path, line,
                    "layer '%s' takes only the label; expected a data bottom too", name);
    if (k == K_SLICE) return build_slice(b, node, &l, n_top);
    char top[DSE_NAME_MAX] = "";
    if (n_top == 1 && (st = get_name(b, child(t, node, "top"), top, "top"))) return st;
    l.in_place = n_top == 1 && strcmp(top, first_bottom) == 0 && !b->blobs[find_blob(b, top)].label;

    st = dse_net_add(b->net, &l, b->err);
    if (st) {
        dse_err_name_file(b->err, b->path);
        return st;
    }
    return n_top == 1 ? set_blob(b, top, b->net->n_layers - 1, 0) : DSE_OK;
}

/* A module is a Fire module only if it has a squeeze layer: "inception_3a/concat" alone
 * is a layer of its own, not a module. */
static void drop_non_fire_modules(struct dse_net *net) {
    for (int i = 0; i < net->n_layers; i++) {
        struct dse_layer *l = &net->layers[i];
        int fire = 0;
        for (int j = 0; j < net->n_layers && l->module[0] && !fire; j++)
            fire = net->layers[j].role == DSE_ROLE_SQUEEZE && !strcmp(net->layers[j].module, l->module);
        if (!fire) l->module[0] = '\0', l->role = DSE_ROLE_NONE;
    }
}

static enum dse_status build_net(struct build *b) {
    const struct ptree *t = b->t;
    enum dse_status st;
    int c, first_v2 = -1, first_v1 = -1;
    if ((c = child(t, 0, "name")) >= 0) {
        const struct pnode *nd = &t->nodes[c];
        char s[48];
        if (nd->val_len >= DSE_NAME_MAX || memchr(str_val(t, nd), '\0', nd->val_len))
            return fail(b->err, DSE_ERR_CONFIG, b->path, nd->line,
                        "network name '%s' is longer than %d characters or holds a NUL byte",
                        show(s, sizeof s, str_val(t, nd), nd->val_len), DSE_NAME_MAX - 1);
        memcpy(b->net->name, str_val(t, nd), nd->val_len + 1);
    }
    for (c = t->nodes[0].first; c >= 0; c = t->nodes[c].next) {
        if (first_v2 < 0 && name_is(t, &t->nodes[c], "layer")) first_v2 = c;
        if (first_v1 < 0 && name_is(t, &t->nodes[c], "layers")) first_v1 = c;
    }
    if (first_v2 >= 0 && first_v1 >= 0) {
        int later = first_v2 > first_v1 ? first_v2 : first_v1;
        return fail(b->err, DSE_ERR_CONFIG, b->path, t->nodes[later].line,
                    "the file mixes 'layer' (line %d) and 'layers' (V1, line %d); expected one format",
                    t->nodes[first_v2].line, t->nodes[first_v1].line);
    }
    if ((st = build_inputs(b))) return st;
    for (c = t->nodes[0].first; c >= 0; c = t->nodes[c].next) {
        int v1 = name_is(t, &t->nodes[c], "layers");
        if (!v1 && !name_is(t, &t->nodes[c], "layer")) continue;
        if ((st = build_layer(b, c, v1))) return st;
    }
    if (!b->have_input)
        return fail(b->err, DSE_ERR_CONFIG, b->path, 0,
                    "no network input; expected an Input or Data layer, or input: \"data\" with "
                    "input_dim or input_shape");
    return DSE_OK;
}

enum dse_status dse_prototxt_parse(const char *text, size_t len, const char *path,
                                   const struct dse_input_shape *ov, struct dse_net *out,
                                   struct dse_err *err) {
    struct ptree t;
    struct build b;
    enum dse_status st;
    int root;
    dse_net_init(out, "", 0, 0, 0);
    memset(&t, 0, sizeof t);
    t.text = text ? text : "";
    t.len  = text ? len : 0;
    t.line = 1;
    t.path = path;
    t.err  = err;
    memset(&b, 0, sizeof b);
    b.t = &t, b.path = path, b.err = err, b.net = out, b.ov = ov;

    st = add_node(&t, -1, NULL, &root);
    if (!st) st = parse_block(&t, root, 0, 0);
    if (!st) st = check_msg(&t, root, &net_spec, "at top level");
    if (!st) st = build_net(&b);
    if (!st) drop_non_fire_modules(out);
    if (!st && (st = dse_net_check_names(out, err))) dse_err_name_file(err, path);
    if (!st) st = dse_net_infer(out, path, err);
    free(t.nodes);
    free(t.pool);
    free(b.blobs);
    free(b.by_name.slots);
    if (st) dse_net_deinit(out);
    return st;
}

enum dse_status dse_prototxt_load(const char *path, const struct dse_input_shape *ov,
                                  struct dse_net *out, struct dse_err *err) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    enum dse_status st;
    dse_net_init(out, "", 0, 0, 0);
    if (!f) return dse_err_set(err, DSE_ERR_IO, path, 0, "cannot open: %s", strerror(errno));
    for (;;) {
        if (len == cap) {
            if (cap >= MAX_FILE) {
                free(buf);
                fclose(f);
                return dse_err_set(err, DSE_ERR_IO, path, 0, "file is larger than %d MiB; expected "
                                   "a network description", MAX_FILE >> 20);
            }
            cap = cap ? cap * 2 : 65536;
            char *p = realloc(buf, cap);
            if (!p) {
                free(buf);
                fclose(f);
                return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory reading the file");
            }
            buf = p;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) break;
    }
    if (ferror(f)) {
        int e = errno;
        free(buf);
        fclose(f);
        return dse_err_set(err, DSE_ERR_IO, path, 0, "cannot read: %s", strerror(e));
    }
    fclose(f);
    st = dse_prototxt_parse(buf, len, path, ov, out, err);
    free(buf);
    return st;
}

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

enum dse_status dse_prototxt_write(FILE *f, const struct dse_net *net, struct dse_err *err) {
    int n = net->n_layers, label = 0;
    char (*tops)[DSE_NAME_MAX + 16] = NULL;
    int *own = NULL; /* 1: the layer writes its own top; 0: in place on its input's blob */
    if (n > 0) {
        tops = calloc((size_t)n, sizeof *tops);
        own  = calloc((size_t)n, sizeof *own);
        if (!tops || !own) {
            free(tops);
            free(own);
            return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory writing prototxt");
        }
    }
    int *last = n > 0 ? malloc(sizeof *last * (size_t)n) : NULL; /* the last layer reading layer i's output */
    struct name_index own_tops = { 0 };
    if (n > 0 && !last) {
        free(tops), free(own);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory writing prototxt");
    }
    for (int i = 0; i < n; i++) last[i] = -1;
    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &net->layers[i];
        if (l->type == DSE_LAYER_SOFTMAX_LOSS || l->type == DSE_LAYER_ACCURACY) label = 1;
        for (int k = 0; k < l->n_inputs; k++)
            if (l->inputs[k] >= 0) last[l->inputs[k]] = i;
    }
    /* Blob names. An in-place layer reuses its input's blob, unless a later layer still
     * reads that input (then the in-place write would change what it reads). Other layers
     * write a blob named after the layer, made unique so a bottom names exactly one. */
    for (int i = 0; i < n; i++) {
        const struct dse_layer *l = &net->layers[i];
        int p = l->inputs[0];
        own[i] = 1;
        if (l->in_place && l->n_inputs >= 1 && p >= 0) own[i] = last[p] > i;
        if (!own[i]) {
            memcpy(tops[i], tops[p], sizeof tops[i]);
            continue;
        }
        snprintf(tops[i], sizeof tops[i], "%s", l->name);
        for (int tries = 0;; tries++) {
            int clash = strcmp(tops[i], "data") == 0 || (label && strcmp(tops[i], "label") == 0) ||
                        tops[i][0] == '\0';
            if (!clash) clash = ni_find(&own_tops, (const char *)tops, sizeof *tops, tops[i]) >= 0;
            if (!clash) break;
            char base[DSE_NAME_MAX];
            dse_strlcpy(base, l->name, DSE_NAME_MAX - 12);
            snprintf(tops[i], sizeof tops[i], "%s_%d", base[0] ? base : "blob", i + tries);
        }
        if (ni_add(&own_tops, (const char *)tops, sizeof *tops, i)) {
            free(tops), free(own), free(last), free(own_tops.slots);
            return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory writing prototxt");
        }
    }
    free(last), free(own_tops.slots);

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
        const char *type = "?";
        if (l->type == DSE_LAYER_SLICE) {
            i = write_slice(f, net, i, tops);
            continue;
        }
        switch (l->type) {
        case DSE_LAYER_CONV:         type = "Convolution"; break;
        case DSE_LAYER_MAXPOOL:
        case DSE_LAYER_AVGPOOL:      type = "Pooling"; break;
        case DSE_LAYER_RELU:         type = "ReLU"; break;
        case DSE_LAYER_DROPOUT:      type = "Dropout"; break;
        case DSE_LAYER_CONCAT:       type = "Concat"; break;
        case DSE_LAYER_ELTWISE:      type = "Eltwise"; break;
        case DSE_LAYER_FC:           type = "InnerProduct"; break;
        case DSE_LAYER_SOFTMAX:      type = "Softmax"; break;
        case DSE_LAYER_SOFTMAX_LOSS: type = "SoftmaxWithLoss"; break;
        case DSE_LAYER_ACCURACY:     type = "Accuracy"; break;
        case DSE_LAYER_BATCHNORM:    type = "BatchNorm"; break;
        case DSE_LAYER_SCALE:        type = "Scale"; break;
        case DSE_LAYER_LRN:          type = "LRN"; break;
        case DSE_LAYER_FLATTEN:      type = "Flatten"; break;
        case DSE_LAYER_RESHAPE:      type = "Reshape"; break;
        case DSE_LAYER_SLICE:        type = "Slice"; break;
        case DSE_LAYER_SIGMOID:      type = "Sigmoid"; break;
        case DSE_LAYER_TANH:         type = "TanH"; break;
        case DSE_LAYER_POWER:        type = "Power"; break;
        case DSE_LAYER_COUNT:        break;
        }
        if (l->type == DSE_LAYER_BATCHNORM && l->affine)
            fprintf(f, "# '%s' learns gamma and beta: Caffe writes that as BatchNorm + Scale with bias.\n",
                    l->name);
        fprintf(f, "layer {\n");
        put_field(f, "name", l->name);
        fprintf(f, "  type: \"%s\"\n", type);
        for (int k = 0; k < l->n_inputs; k++)
            put_field(f, "bottom", l->inputs[k] == DSE_INPUT_DATA ? "data" : tops[l->inputs[k]]);
        if (l->type == DSE_LAYER_SOFTMAX_LOSS || l->type == DSE_LAYER_ACCURACY)
            put_field(f, "bottom", "label");
        put_field(f, "top", tops[i]);
        switch (l->type) {
        case DSE_LAYER_CONV:
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
        case DSE_LAYER_LRN:
            fprintf(f, "  lrn_param { local_size: %d }\n", l->lrn_size);
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
    free(own);
    if (fflush(f) != 0 || ferror(f))
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "cannot write prototxt: %s", strerror(errno));
    return DSE_OK;
}
