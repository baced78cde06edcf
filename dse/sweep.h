/* sweep.h: `dse sweep --analytic-only`: every candidate of a space generated, costed
 * and checked against the constraints, recorded in a sweep directory built for many
 * concurrent writers (docs/sweep-dir.md). Training results join the same files later. */
#ifndef DSE_CLI_SWEEP_H
#define DSE_CLI_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#include "dse/space.h"

struct dse_sweep_summary {
    uint64_t candidates, pruned, kept, skipped; /* skipped: the file existed, left alone */
};

/* Cost every candidate of s and create DIR/sweep.json, DIR/space.cfg and
 * DIR/candidates/<id>.json. Every candidate is built first: an infeasible one (a map
 * that shrinks to nothing) stops the sweep before anything is written. A DIR holding a
 * sweep of another space (another file hash) is refused; files that exist are never
 * replaced (the same space again only adds what is missing; training results stay).
 * Several processes may run this on the same DIR at once. progress (may be NULL) gets a
 * line now and then. */
enum dse_status dse_sweep_analytic(const struct dse_space *s, const char *dir, FILE *progress,
                                   struct dse_sweep_summary *sum, struct dse_err *err);

#endif
