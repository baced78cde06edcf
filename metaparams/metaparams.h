/* metaparams.h: the metaparameter generator (thesis §5.5-5.6). A handful of numbers —
 * base_e, incr_e, freq, pct3x3, SR, the bypass type — and the macro choices (input,
 * classes, conv1, number of Fire modules, where the pools sit, dropout) expand into a
 * whole Fire-module network (metaparams/net.h). The one list of them, with ranges and
 * defaults: metaparams/mp.def. Rounding rules: docs/space-format.md. */
#ifndef DSE_METAPARAMS_H
#define DSE_METAPARAMS_H

#include <stdint.h>

#include "metaparams/net.h"

#define DSE_MP_MAX_FIRES 60

/* Pool positions: bit 0 = a max-pool after conv1, bit k (2 <= k <= fires + 1) = after
 * the Fire module named fire<k> (modules are named fire2, fire3, ... as in SqueezeNet). */
#define DSE_MP_POOL_CONV1 ((uint64_t)1)
#define DSE_MP_POOL_FIRE(k) ((uint64_t)1 << (k))

/* SqueezeNet v1.0's pools: after conv1, fire4 and fire8 (mp.def's default). */
#define DSE_MP_POOLS_V10 (DSE_MP_POOL_CONV1 | DSE_MP_POOL_FIRE(4) | DSE_MP_POOL_FIRE(8))

/* The metaparameters, in mp.def's order (the canonical order of candidate ids). */
enum dse_mp_key {
#define DSE_MP(E, f, g, T, def, lo, hi, bnd, id, doc) DSE_MP_##E,
#include "metaparams/mp.def"
#undef DSE_MP
    DSE_MP_COUNT
};

enum dse_mp_type  { DSE_MP_TYPE_INT, DSE_MP_TYPE_REAL, DSE_MP_TYPE_BYPASS, DSE_MP_TYPE_POOLS };
enum dse_mp_group { DSE_MP_GROUP_FIRE, DSE_MP_GROUP_INPUT, DSE_MP_GROUP_CONV1, DSE_MP_GROUP_BODY };
enum dse_mp_bnd   { DSE_MP_BND_CLOSED, DSE_MP_BND_LO_OPEN, DSE_MP_BND_HI_OPEN };
enum dse_mp_id    { DSE_MP_ID_ALWAYS, DSE_MP_ID_IF_SET };

#define DSE_MP_CTYPE_INT    int
#define DSE_MP_CTYPE_REAL   double
#define DSE_MP_CTYPE_BYPASS enum dse_bypass
#define DSE_MP_CTYPE_POOLS  uint64_t

/* Fire modules: module i (0-based) has e_i = base_e + incr_e * floor(i / freq) expand
 * filters, round(pct3x3 * e_i) of them 3x3, and round(sr * e_i) squeeze filters. bypass
 * SIMPLE: identity around modules whose input and output channels match; COMPLEX: also
 * 1x1 convs around the others. pools: 3x3 stride-2 max-pools, DSE_MP_POOL_* bits. The
 * fields, their ranges and meanings: metaparams/mp.def. */
struct dse_mp {
#define DSE_MP(E, f, g, T, def, lo, hi, bnd, id, doc) DSE_MP_CTYPE_##T f;
#include "metaparams/mp.def"
#undef DSE_MP
};

/* One row of mp.def. */
struct dse_mp_info {
    const char        *key;     /* the field's name: the key in space files and records */
    const char        *section; /* the space file's group: "metaparams" or "macro" */
    enum dse_mp_group  group;
    enum dse_mp_type   type;
    double             lo, hi;  /* allowed range (INT, REAL; BYPASS: the enum's values) */
    enum dse_mp_bnd    bnd;
    enum dse_mp_id     id;
    const char        *doc;
};
extern const struct dse_mp_info dse_mp_info[DSE_MP_COUNT];

/* The index of key, or -1 if no metaparameter is named key. */
int dse_mp_find(const char *key);

/* One metaparameter's value: num for INT, REAL and BYPASS (the enum's value), mask for
 * POOLS (the other member 0). */
struct dse_mp_value {
    double   num;
    uint64_t mask;
};
struct dse_mp_value dse_mp_get(const struct dse_mp *mp, enum dse_mp_key k);
void dse_mp_set(struct dse_mp *mp, enum dse_mp_key k, struct dse_mp_value v);

/* 1 if metaparameter k of mp has its default value (dse_mp_squeezenet_v10's). */
int dse_mp_is_default(const struct dse_mp *mp, enum dse_mp_key k);

/* SqueezeNet v1.0's metaparameters (thesis Table 5.1): base_e 128, incr_e 128, freq 2,
 * pct3x3 0.5, SR 0.125, no bypass; 3x227x227 input, 1000 classes, conv1 96 7x7/2,
 * 8 Fire modules, pools after conv1, fire4 and fire8, dropout 0.5: mp.def's defaults. */
struct dse_mp dse_mp_squeezenet_v10(void);

/* Range checks, mp.def's ranges in its order, then the checks across keys (pools
 * against fires, the last module's width). On failure returns DSE_ERR_CONFIG with a
 * message "key = value is out of range; expected ..." and sets *key to the name of the
 * setting at fault (a constant string), so the caller can add the file and line it came
 * from. */
enum dse_status dse_mp_check(const struct dse_mp *mp, const char **key, struct dse_err *err);

/* Filters of Fire module i (0-based). */
struct dse_fire_filters {
    int expand, expand1x1, expand3x3, squeeze;
};
struct dse_fire_filters dse_mp_fire_filters(const struct dse_mp *mp, int i);

/* Build the network of mp into net (initialized by the caller; its layers are replaced,
 * its allocation reused), shapes inferred. Layer names follow SqueezeNet's release:
 * conv1, relu_conv1, pool1, fire2.., drop_fire<k> (fire_dropout > 0; not in SqueezeNet),
 * pool<k>, drop<fires+1>, conv<fires+2>,
 * relu_conv<fires+2>, pool<fires+2> (global average), loss. Fails if mp does not pass
 * dse_mp_check or the shapes do not work out (a map shrinks to nothing). */
enum dse_status dse_mp_build(const struct dse_mp *mp, struct dse_net *net, struct dse_err *err);

/* Pools bitmask to text "conv1,fire4,fire8" and back. Returns 0, or -1 if a name is
 * not conv1 or fire<k> with 2 <= k <= 63. */
void dse_mp_pools_str(uint64_t pools, char *buf, int size);
int  dse_mp_pools_parse(const char *s, uint64_t *out);

/* Metaparameter k's value v as text, by its mp.def type: INT "128", REAL by dse_fmt_real
 * ("1.0", "0.125"), BYPASS "simple", POOLS "conv1,fire4". The one writer of metaparameter
 * values in records, reports and labels (the canonical text, the id's source, writes
 * reals' bits instead). Returns buf. */
const char *dse_mp_value_str(enum dse_mp_key k, struct dse_mp_value v, char *buf, size_t size);

#endif
