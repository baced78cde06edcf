/* sweep.h: `dse sweep --analytic-only`: every candidate of a space generated, costed
 * and checked against the constraints, recorded in a sweep directory built for many
 * concurrent writers (docs/sweep-dir.md). Training results join the same files later. */
#ifndef DSE_CLI_SWEEP_H
#define DSE_CLI_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#include "dse/space.h"

struct dse_sweep_summary {
    uint64_t candidates, pruned, kept, skipped; /* skipped: already trained, left alone */
};

/* Cost every candidate of s and write DIR/sweep.json, DIR/space.cfg and
 * DIR/candidates/<id>.json. A DIR holding a sweep of another space (another file
 * hash) is refused; the same space again rewrites pending and pruned candidates and
 * leaves trained ones alone. progress (may be NULL) gets a line now and then. */
enum dse_status dse_sweep_analytic(const struct dse_space *s, const char *dir, FILE *progress,
                                   struct dse_sweep_summary *sum, struct dse_err *err);

#endif
