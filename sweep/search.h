/* search.h: a search's state in its sweep directory (issue #16 item 2; docs/sweep-dir.md,
 * "Search"). An evolution sweep's candidates are not the grid but the proposals of
 * dse_evo_propose (sweep/evolve.h), written to DIR/search/log-<gen> before anything trains
 * them. Each log file is the whole log (a header line, then one line per proposal and per
 * recorded result, in the order they were made), created once by link() (create-only):
 * the highest gen is the current log, and a step from gen g to g + 1 is one link(), which
 * of any number of racing workers exactly one wins (the others read it and go on). A
 * killed worker leaves gen g or gen g + 1, nothing in between, so no proposal is lost,
 * torn or made twice; its candidate files are made from the log (create-only) by whoever
 * reads it next. The proposals are a function of the seed and the results in the log's
 * order: replaying a log (dse_search_replay) gives its proposals again. A bo sweep's
 * (sweep/bo.h) are made the same way, by dse_bo_propose. */
#ifndef DSE_SWEEP_SEARCH_H
#define DSE_SWEEP_SEARCH_H

#include <stdint.h>

#include "sweep/bo.h"
#include "sweep/evolve.h"
#include "sweep/space.h"

struct dse_rec;
struct dse_sweep_plan;

struct dse_search_prop {
    char     id[DSE_ID_SIZE];
    uint64_t index;
    int      recorded;  /* its result is in the log */
};

struct dse_search_log {
    int64_t                 gen;        /* 0: no log yet */
    int                     n_prop;
    struct dse_search_prop *prop;       /* in the order proposed */
    int                     n_res;
    struct dse_evo_result  *res;        /* in the order recorded */
    int                     n_part;
    struct dse_bo_partial  *part;       /* "rung" lines: results at a rung of --early-stop asha, in
                                           the order recorded */
    int                     closed;     /* "last" or "end" line: no more proposals */
    int                     ended;      /* "end" line: the budget is spent or the space exhausted */
    char                    strategy[16]; /* the header's: "evolution" or "bo" */
    int                     pop;        /* the header's pop=: the population the search began with (0: none) */
    int                     n_cost;     /* the costs minimized beside top-1, from the header's objectives */
    char                    cost[DSE_SEARCH_OBJ_MAX][32]; /* their names (sweep/objective.def) */
    char                   *text;       /* the file */
    size_t                  len;
};

void dse_search_log_free(struct dse_search_log *lg);

/* The current log of dir (lg->gen = 0 if none). DSE_ERR_CONFIG for a line it cannot read. */
enum dse_status dse_search_read(const char *dir, struct dse_search_log *lg, struct dse_err *err);

/* Evolution and bo sweeps, the analytic phase: create search/log-1 with the initial population
 * (dse_evo_propose with no results: min(pop, budget) candidates) or design (dse_bo_propose:
 * min(dse_bo_n_init(budget), budget)) unless a log exists, then
 * every candidate file of the current log that is missing. *n_prop: proposals in the log. */
enum dse_status dse_search_start(const struct dse_space *s, const char *dir, int *n_prop, struct dse_err *err);

/* Create the candidate files of lg's proposals that are missing (create-only). */
enum dse_status dse_search_files(const struct dse_space *s, const char *dir, const struct dse_search_log *lg,
                                 struct dse_err *err);

/* One step of the search, by a worker that found nothing to train (its proposer's
 * population the log header's pop=, so that a search begun with another rule or pop goes on
 * as it began): read the current log;
 * with plan's --early-stop asha (plan may be NULL: none), record, in the log's order, each
 * proposal's top-1 at each rung it has reached that is not recorded yet ("rung" lines: bo's
 * partial results); record, in the log's order, the results of its proposals that rec_of
 * says are final and are not recorded yet (one stopped at a rung: top-1 null, as a failed
 * one's: it is not a result of the full schedule); propose one more if the budget allows
 * (or, once the budget is spent or the space holds no more feasible candidates: end the
 * search when nothing is left pending, else say with a "last" line that nothing more will be
 * proposed, which closes asha's first rung); write the next gen if anything changed.
 * With asha a pending proposal counts, towards budget_epochs, the epochs it has trained or
 * is training to (the next rung; promotions after the last proposal may add more), without
 * it the full schedule's. rec_of(arg, id) gives the worker's
 * record of a candidate (NULL: not known yet, so not final). *changed = 1 if a log (this
 * worker's, or a racing worker's) newer than the one read exists now; what (may be NULL)
 * then says what this worker's step did ("" if another worker's won). */
enum dse_status dse_search_step(const struct dse_space *s, const char *dir, const struct dse_sweep_plan *plan,
                                const struct dse_rec *(*rec_of)(void *arg, const char *id), void *arg,
                                int *changed, char *what, int what_size, struct dse_err *err);

/* Replay lg from its start: every proposal again from the seed and the results in their
 * recorded order (evolution's population the header's). *same = 1 if they match the log's, in order. */
enum dse_status dse_search_replay(const struct dse_space *s, const struct dse_search_log *lg, int *same,
                                  struct dse_err *err);

/* The most candidates the search's budgets allow, known before anything trains: budget,
 * and budget_epochs over one candidate's train.epochs x replicates (the fewer of the two);
 * 0 when only budget_hours bounds it. What sweep.json lists as "candidates". */
int64_t dse_search_budget_candidates(const struct dse_space *s);

/* The proposers' options of a space's search section: evolution's (its pop the section's, else
 * dse_evo_pop_for_budget of dse_search_budget_candidates), bo's (its budget:
 * dse_search_budget_candidates, its cost the first objective). */
void dse_search_evo_opts(const struct dse_space *s, struct dse_evo_opts *o);
void dse_search_bo_opts(const struct dse_space *s, struct dse_bo_opts *o);

/* The strategy "auto" chooses for space s and a budget of `budget` candidates (0: unknown,
 * only budget_hours bounds it), and why, in words, into why (a sentence without a final
 * period; may be NULL). The rule (issue #36, item 2; the figures:
 * experiments/search_bench/README.md), on the feasible candidates (dse_sweep_prefilter does
 * not prune them, their networks build; counted for grids of up to DSE_EVO_SCAN_MAX):
 *   - grid when the budget covers every feasible candidate (and every candidate builds, as
 *     a grid sweep needs): nothing is left to chance;
 *   - else bo when the grid fits bo's pool whole (at most DSE_BO_SCAN_MAX candidates), the
 *     budget is at most DSE_BO_MODEL_MAX (the model's points) and the first objective is
 *     known before training: on the 96-candidate table bo led random and evolution at
 *     every budget from N/10 to N/2 (0.962 against 0.942 of the grid's hypervolume at 10),
 *     and at such budgets evolution's first generation is most of the search;
 *   - else evolution: a grid larger than bo's pool, which bo would see only through a
 *     random DSE_BO_POOL of it while evolution's moves reach all of it (on
 *     bench/large_space.cfg, 1.1 million candidates, evolution reached 0.884 of the
 *     hypervolume in 188 evaluations against random's 0.781; bo's 0.917 against
 *     evolution's 0.643 at 30 there, 11 seeds, is no evidence for bo: that replay's
 *     stand-in top-1 is FLOPs, one of bo's own features), or a budget past what bo
 *     models, or a measured first objective, which bo refuses.
 * Deterministic: the same space and budget always choose the same. Never random (every
 * replay measured it behind one of the others). */
enum dse_strategy dse_search_auto(const struct dse_space *s, int64_t budget, char *why, int why_size);

/* Before a sweep starts (dse sweep, dse count): a strategy "auto" is replaced by
 * dse_search_auto's choice for the search's budget (dse_search_budget_candidates) and
 * dse_space_set_strategy'd; said (may be NULL) gets the lines a sweep prints about its
 * search, each ending in a newline: "search: strategy auto chose X: why", and for evolution
 * with a pop given above a third of the budget, a note saying so ("" when there is nothing
 * to say). Errors as dse_space_set_strategy's. */
enum dse_status dse_search_resolve(struct dse_space *s, char *said, int said_size, struct dse_err *err);

/* The next k proposals of the space's strategy (evolution or bo) from the results in
 * recorded order, the partial results (bo only; evolution has none: dse_worker_plan_supported
 * refuses it with --early-stop) and the exclusions (proposed, not recorded): dse_evo_propose
 * or dse_bo_propose with the section's options. */
enum dse_status dse_search_propose(const struct dse_space *s, const struct dse_evo_result *res, int n_res,
                                   const struct dse_bo_partial *part, int n_part, const uint64_t *excl, int n_excl,
                                   int k, uint64_t *out, int *n_out, struct dse_err *err);

#endif
