/* block.c: blocks of layers by name prefix (issue #34, item 2). Exporters name an ONNX node
 * after the module that made it (PyTorch: `layer1.0.conv1`, or `/layer1/layer1.0/conv1/Conv`
 * from its newer exporter; torchvision's SqueezeNet: `features.3.squeeze`), so the layers of
 * one block (a ResNet BasicBlock, a Fire module) share a prefix. dse analyze shows each run
 * of them as one row (dse_cost_rows, DSE_ROWS_BLOCKS); the rule: docs/cli.md, "Blocks". */
#include "analysis/analysis.h"

#include <string.h>

/* Appends the dot-separated components of s[0..n) (at offset off in the name) to the key,
 * up to DSE_BLOCK_DEPTH of them; *end receives the name offset where the last one ends. */
static void add_components(const char *s, size_t n, size_t off, char *key, size_t size, size_t *klen, int *depth,
                           size_t *end) {
    for (size_t i = 0; i < n && *depth < DSE_BLOCK_DEPTH;) {
        size_t j = i;
        while (j < n && s[j] != '.') j++;
        if (j > i) { /* an empty component ("a..b") adds nothing */
            size_t need = (*klen ? 1 : 0) + (j - i);
            if (*klen + need < size) {
                if (*klen) key[(*klen)++] = '.';
                memcpy(key + *klen, s + i, j - i);
                *klen += j - i;
                key[*klen] = '\0';
            }
            (*depth)++;
            *end = off + j;
        }
        i = j + 1;
    }
}

int dse_block_key(const char *name, char *key, size_t size) {
    size_t klen = 0, end = 0;
    int depth = 0;
    if (size) key[0] = '\0';
    if (!strchr(name, '/')) { /* dotted: the whole name is the module path */
        add_components(name, strlen(name), 0, key, size, &klen, &depth, &end);
        return depth ? (int)end : 0;
    }
    /* Slashed: the scopes, then the op (or a Caffe part name: fire2/squeeze1x1) last. */
    const char *prev = NULL;
    size_t prev_len = 0;
    for (const char *s = name; *s && depth < DSE_BLOCK_DEPTH;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (!e) break; /* the last segment: the op, not a scope */
        if (n > 0) {
            const char *c = s;
            size_t cn = n;
            /* PyTorch writes a scope's qualified name below its parent's: layer1/layer1.0 */
            if (prev && n > prev_len + 1 && !memcmp(s, prev, prev_len) && s[prev_len] == '.')
                c += prev_len + 1, cn -= prev_len + 1;
            add_components(c, cn, (size_t)(c - name), key, size, &klen, &depth, &end);
            prev = s, prev_len = n;
        }
        s = e + 1;
    }
    return depth ? (int)end : 0;
}

int dse_block_end(const struct dse_net *net, int first) {
    char k0[DSE_NAME_MAX], k[DSE_NAME_MAX];
    const struct dse_layer *l = &net->layers[first];
    if (l->module[0] || !dse_block_key(l->name, k0, sizeof k0)) return first;
    int last = first;
    while (last + 1 < net->n_layers) {
        const struct dse_layer *m = &net->layers[last + 1];
        if (m->module[0] || !dse_block_key(m->name, k, sizeof k) || strcmp(k, k0) != 0) break;
        last++;
    }
    return last;
}
