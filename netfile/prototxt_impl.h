/* prototxt_impl.h: what the parts of the prototxt code share, private to netfile/. Floors:
 * prototxt_text.c (lowest) reads protobuf text into a tree of fields and checks them against
 * caffe.proto; prototxt.c turns the tree into a dse_net; prototxt_write.c writes a dse_net.
 * The text floor asks the reader above it one thing, whether a layer's type is one dse
 * builds, through the callback ptree.type_known. Public API: netfile/netfile.h. */
#ifndef DSE_NETFILE_PROTOTXT_IMPL_H
#define DSE_NETFILE_PROTOTXT_IMPL_H

#include <stddef.h>
#include <string.h>

#include "base/base.h"

enum tok_kind { TK_EOF, TK_IDENT, TK_NUMBER, TK_STRING, TK_PUNCT };

struct tok {
    enum tok_kind kind;
    size_t        start, len; /* TK_STRING: the raw text between the quotes */
    int           line;
    char          ch;         /* TK_PUNCT: one of { } < > : [ ] , ; */
};

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
    /* The reader's answer (prototxt.c): is the type of this layer node one dse builds? A
     * "<x>_param" block in a layer of an unknown type is left for the type check. */
    int           (*type_known)(const struct ptree *t, int layer, int v1);
};

/* Read t->text (t->len bytes; t->line 1, t->path and t->err set, the rest zero but
 * t->type_known) into the tree: node 0 is the file, its fields below it. Every field is
 * checked against the parts of caffe.proto that describe networks: unknown fields, values
 * of the wrong kind and bad enum names are errors at their line. Fails with DSE_ERR_CONFIG
 * (t->path:line and what was expected) or DSE_ERR_NOMEM; the caller frees t->nodes and
 * t->pool either way. */
enum dse_status dse_pt_read(struct ptree *t);

/* DSE_ERR_NOMEM for t's file. */
enum dse_status dse_pt_nomem(struct ptree *t);

/* Copy len bytes of s into buf for a message: control bytes become '?', long text is cut
 * and ends in "...". Returns buf. */
const char *dse_pt_show(char *buf, size_t size, const char *s, size_t len);

/* Closest candidate to word for "did you mean"; NULL if none is close enough. */
struct suggest {
    const char *word;
    const char *best;
    int         dist;
};

void dse_pt_suggest_init(struct suggest *s, const char *word);
void dse_pt_suggest_add(struct suggest *s, const char *cand);

/* Names kept in an array (at base + i * stride, NUL-terminated), found by hash: indices in
 * open-addressed slots (-1 empty), cap a power of 2 above twice the names. The reader's
 * blobs and the writer's tops; a deep net goes in linear time. */
struct name_index {
    int *slots;
    int  cap, n;
};

/* The index of name in x, or -1. */
int dse_pt_names_find(const struct name_index *x, const char *base, size_t stride, const char *name);
/* Add name i (not in yet); -1 if out of memory. The caller frees x->slots. */
int dse_pt_names_add(struct name_index *x, const char *base, size_t stride, int i);

/* The tree's accessors. */
static inline int name_is(const struct ptree *t, const struct pnode *nd, const char *name) {
    size_t n = strlen(name);
    return nd->name_len == n && memcmp(t->text + nd->name, name, n) == 0;
}

/* Identifier or number value equal to word. */
static inline int val_is(const struct ptree *t, const struct pnode *nd, const char *word) {
    size_t n = strlen(word);
    return !nd->is_msg && nd->vkind != TK_STRING && nd->val_len == n &&
           memcmp(t->text + nd->val, word, n) == 0;
}

static inline const char *str_val(const struct ptree *t, const struct pnode *nd) { return t->pool + nd->val; }

/* Last child named name (protobuf: the last value of an optional field wins); -1 if none. */
static inline int child(const struct ptree *t, int node, const char *name) {
    int found = -1;
    if (node < 0) return -1;
    for (int c = t->nodes[node].first; c >= 0; c = t->nodes[c].next)
        if (name_is(t, &t->nodes[c], name)) found = c;
    return found;
}

static inline int child_count(const struct ptree *t, int node, const char *name) {
    int n = 0;
    if (node < 0) return 0;
    for (int c = t->nodes[node].first; c >= 0; c = t->nodes[c].next)
        n += name_is(t, &t->nodes[c], name);
    return n;
}

/* k-th (0-based) child named name; -1 if none. */
static inline int child_nth(const struct ptree *t, int node, const char *name, int k) {
    if (node < 0) return -1;
    for (int c = t->nodes[node].first; c >= 0; c = t->nodes[c].next)
        if (name_is(t, &t->nodes[c], name) && k-- == 0) return c;
    return -1;
}

#endif
