/* delta.c: the view of thesis Tables 4.3-4.8: two networks' report rows matched by
 * name, what changed, and how far the change reaches (thesis ch. 4: local vs global
 * changes). */
#include "analysis/analysis.h"

#include <string.h>

static const char *const reach_names[] = {
    [DSE_REACH_NONE] = "none", [DSE_REACH_LOCAL] = "local", [DSE_REACH_REGIONAL] = "regional",
    [DSE_REACH_GLOBAL] = "global",
};

static const char *const delta_kind_names[] = {
    [DSE_DELTA_SAME] = "same", [DSE_DELTA_CHANGED] = "changed", [DSE_DELTA_ADDED] = "added",
    [DSE_DELTA_REMOVED] = "removed",
};

const char *dse_reach_str(enum dse_reach r) {
    return dse_name_of(reach_names, DSE_ARRAY_LEN(reach_names), (int)r, "?");
}

const char *dse_delta_kind_str(enum dse_delta_kind k) {
    return dse_name_of(delta_kind_names, DSE_ARRAY_LEN(delta_kind_names), (int)k, "?");
}

static int row_differs(const struct dse_cost_row *a, const struct dse_cost_row *b) {
    return a->in_c != b->in_c || a->in_h != b->in_h || a->in_w != b->in_w ||
           a->out_c != b->out_c || a->out_h != b->out_h || a->out_w != b->out_w ||
           a->cost.params != b->cost.params || a->cost.flops != b->cost.flops ||
           a->cost.other_ops != b->cost.other_ops ||
           strcmp(a->type, b->type) != 0;
}

static int find_row(const struct dse_cost_row *rows, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0) return i;
    return -1;
}

/* Has base row b already been paired with a variant row (names may repeat in Caffe
 * files, where only blob names must be unique)? */
static int base_used(const struct dse_delta_row *out, int n, const struct dse_cost_row *b) {
    for (int i = 0; i < n; i++)
        if (out[i].base == b) return 1;
    return 0;
}

/* First base row named like v not yet paired, or -1. */
static int match_row(const struct dse_cost_row *base, int nb, const struct dse_delta_row *out,
                     int n, const char *name) {
    for (int i = 0; i < nb; i++)
        if (strcmp(base[i].name, name) == 0 && !base_used(out, n, &base[i])) return i;
    return -1;
}

static const struct dse_cost_row *row_of(const struct dse_delta_row *r) {
    return r->variant ? r->variant : r->base;
}

void dse_delta_rows(const struct dse_cost_row *base, int nb, const struct dse_cost_row *variant,
                    int nv, struct dse_delta_row *out, struct dse_delta *d) {
    int n = 0, next_base = 0; /* base rows before next_base are placed */
    memset(d, 0, sizeof *d);
    for (int v = 0; v < nv; v++) {
        int b = match_row(base, nb, out, n, variant[v].name);
        if (b >= next_base) { /* base rows skipped over were removed */
            for (; next_base < b; next_base++)
                if (find_row(variant, nv, base[next_base].name) < 0)
                    out[n++] = (struct dse_delta_row){ DSE_DELTA_REMOVED, &base[next_base], NULL };
            next_base = b + 1;
        }
        if (b < 0)
            out[n++] = (struct dse_delta_row){ DSE_DELTA_ADDED, NULL, &variant[v] };
        else
            out[n++] = (struct dse_delta_row){
                row_differs(&base[b], &variant[v]) ? DSE_DELTA_CHANGED : DSE_DELTA_SAME,
                &base[b], &variant[v] };
    }
    for (int b = 0; b < nb; b++) /* every base row not paired was removed */
        if (!base_used(out, n, &base[b])) {
            int at = n; /* place it after the row that preceded it in the base */
            for (int k = 0; k < n; k++)
                if (b > 0 && out[k].base == &base[b - 1]) at = k + 1;
            for (int k = n; k > at; k--) out[k] = out[k - 1];
            out[at] = (struct dse_delta_row){ DSE_DELTA_REMOVED, &base[b], NULL };
            n++;
        }
    d->n_rows = n;
    d->first_changed = d->last_changed = -1;
    for (int i = 0; i < n; i++) {
        if (out[i].kind == DSE_DELTA_SAME) continue;
        if (d->first_changed < 0) d->first_changed = i;
        d->last_changed = i;
    }
    if (d->first_changed < 0) {
        d->reach = DSE_REACH_NONE;
        return;
    }
    /* Thesis ch. 4 (Iandola 2016, "local and global changes"): a local change alters one
     * layer and the input of the next; a global change alters every layer from it to the
     * network's output (more input pixels, a pool removed). The output is the last row
     * that does work (an in-place ReLU changes with its producer), a head at the end
     * aside: a softmax, loss or accuracy learns nothing and turns the classifier's scores
     * into probabilities, a loss or a hit rate, so it changes only when the class count
     * does and must not hide a change that reaches the classifier (SqueezeNet v1.0 ->
     * v1.1 changes conv1 .. pool10 and is global, its loss the same). */
    int output = -1;
    for (int i = 0; i < n; i++)
        if (!row_of(&out[i])->in_place && !row_of(&out[i])->head) output = i;
    int last = d->last_changed;
    if (output >= d->first_changed && last > output) last = output; /* the head follows the output */
    d->span = 0;
    for (int i = d->first_changed; i <= last; i++)
        if (!row_of(&out[i])->in_place) d->span++;
    if (d->span <= 2)
        d->reach = DSE_REACH_LOCAL;
    else if (last >= output)
        d->reach = DSE_REACH_GLOBAL;
    else
        d->reach = DSE_REACH_REGIONAL;
}
