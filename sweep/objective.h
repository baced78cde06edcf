/* objective.h: the costs a multi-objective search may minimize (sweep/objective.def), a
 * floor below the space reader (sweep/space.c names them in a space's search section) and
 * the search (sweep/evolve.h computes them). */
#ifndef DSE_SWEEP_OBJECTIVE_H
#define DSE_SWEEP_OBJECTIVE_H

/* The costs an objective may minimize: sweep/objective.def. */
enum dse_evo_cost {
#define DSE_OBJ(E, name, kind, doc) DSE_EVO_##E,
#include "sweep/objective.def"
#undef DSE_OBJ
    DSE_EVO_COST_COUNT
};

#define DSE_EVO_OBJ_MAX (1 + DSE_EVO_COST_COUNT) /* top-1 and every cost */

const char *dse_evo_cost_name(enum dse_evo_cost c);
/* 1 if cost c is measured after training (objective.def's MEASURED): dse_evo_cost_value
 * gives NaN for it, and a search takes it from the candidate's records. */
int dse_evo_cost_measured(enum dse_evo_cost c);
/* The cost named name (objective.def's name column), or -1. */
int dse_evo_cost_find(const char *name);

#endif
