/* objective.c: the costs a search may minimize, named once in sweep/objective.def
 * (sweep/objective.h): their names and kinds. Below the space reader, which checks a
 * space's objectives against them, and the search, which computes them (sweep/evolve.c). */
#include "sweep/objective.h"

#include <string.h>

#include "base/base.h"

static const char *const cost_names[] = {
#define DSE_OBJ(E, name, kind, doc) [DSE_EVO_##E] = name,
#include "sweep/objective.def"
#undef DSE_OBJ
};

#define ANALYTIC 0
#define MEASURED 1
static const char cost_measured[] = {
#define DSE_OBJ(E, name, kind, doc) [DSE_EVO_##E] = kind,
#include "sweep/objective.def"
#undef DSE_OBJ
};
#undef ANALYTIC
#undef MEASURED

int dse_evo_cost_measured(enum dse_evo_cost c) {
    return (unsigned)c < DSE_EVO_COST_COUNT && cost_measured[c];
}

const char *dse_evo_cost_name(enum dse_evo_cost c) {
    return dse_name_of(cost_names, DSE_EVO_COST_COUNT, (int)c, "?");
}

int dse_evo_cost_find(const char *name) {
    return dse_name_find(cost_names, DSE_EVO_COST_COUNT, name);
}
