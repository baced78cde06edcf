/* rank.h: early stopping's kinds and ranks (named enums), and ranking a rung of successive
 * halving, synchronous (SH) or asynchronous (ASHA), as pure functions over arrays
 * (sweep/rank.c): no directory, no record. In the search floor of sweep/ (the floors:
 * sweep/sweep.h, "the door"); the rungs' decisions (sweep/sweep_worker.c, sweep/asha.c)
 * call them. */
#ifndef DSE_SWEEP_RANK_H
#define DSE_SWEEP_RANK_H

#include <stdint.h>

/* The shape of sweep/'s named enums (early stopping and ranks, below): a table
 * X(E, name, what) lists each value once, E its full enum name, name its word on the command
 * line, in plan.json and in reports, what it is in words. Each shape comes from the table:
 * the enum's values (NAMED_ENUM), its names as one list "a b c " in enum order
 * (NAMED_WORD; dse_word_index gives the value), and the name and what tables
 * (NAMED_NAME, NAMED_WHAT; dse_name_of looks them up). */
#define DSE_SWEEP_NAMED_ENUM(E, name, what) E,
#define DSE_SWEEP_NAMED_WORD(E, name, what) name " "
#define DSE_SWEEP_NAMED_NAME(E, name, what) [E] = name,
#define DSE_SWEEP_NAMED_WHAT(E, name, what) [E] = what,

/* Early stopping (--early-stop): its name on the command line and in plan.json. SH decides
 * each rung once every candidate has reached it (bit-for-bit reproducible); ASHA promotes as
 * results arrive (not reproducible with more than one worker). docs/sweep-dir.md, "Early
 * stopping". How a rung is ranked (--rank): its name there and in reports. */
#define DSE_SWEEP_HALVINGS(X)                                                       \
    X(DSE_SWEEP_HALVING_NONE, "none", "no early stopping")                          \
    X(DSE_SWEEP_HALVING_SH,   "sh",   "successive halving")                         \
    X(DSE_SWEEP_HALVING_ASHA, "asha", "asynchronous successive halving")
#define DSE_SWEEP_RANKS(X)                                                          \
    X(DSE_SWEEP_RANK_PARETO, "pareto", "Pareto rank on top-1 and model size")       \
    X(DSE_SWEEP_RANK_TOP1,   "top1",   "top-1")

enum dse_sweep_halving { DSE_SWEEP_HALVINGS(DSE_SWEEP_NAMED_ENUM) DSE_SWEEP_HALVING_COUNT };
enum dse_sweep_rank { DSE_SWEEP_RANKS(DSE_SWEEP_NAMED_ENUM) DSE_SWEEP_RANK_COUNT };
#define DSE_SWEEP_HALVING_NAMES DSE_SWEEP_HALVINGS(DSE_SWEEP_NAMED_WORD) /* "none sh asha " */
#define DSE_SWEEP_RANK_NAMES    DSE_SWEEP_RANKS(DSE_SWEEP_NAMED_WORD)    /* "pareto top1 " */

/* The name of h or r, and what it is in words: "sh", "successive halving" ("?" if none). */
const char *dse_sweep_halving_str(enum dse_sweep_halving h);
const char *dse_sweep_halving_what(enum dse_sweep_halving h);
const char *dse_sweep_rank_str(enum dse_sweep_rank r);
const char *dse_sweep_rank_what(enum dse_sweep_rank r);

/* Successive halving's ranking of one rung, best first, written to order[] (indices
 * into the arrays). TOP1: by top-1, then smaller model, then id. PARETO: by Pareto rank
 * on (top-1 up, model size down), within a rank by NSGA-II crowding distance (the front's
 * two ends first), then top-1, model size, id. Deterministic for equal inputs. */
void dse_sweep_rank_rung(int n, const double *top1, const int64_t *model_bytes, const char *const *ids,
                         enum dse_sweep_rank rank, int *order, int *pareto_rank);

/* How many of n go on at a rung: max(1, floor(n / eta)), 0 if n is 0. */
int dse_sweep_keep(int n, int eta);

/* ASHA's promotion rule at one rung (Li et al., MLSys 2020, Algorithm 2): of the n candidates
 * that have reached it so far (top-1 at the rung's epoch, model size, id), ranked with
 * dse_sweep_rank_rung, those in the top quota that are not promoted[] yet are promotable
 * (promotable[i] = 1). quota = floor(n / eta) while the rung is open; once it is closed
 * (nobody else can reach it) max(1, floor(n / eta)) (dse_sweep_keep), so that a rung
 * reached by fewer than eta still sends its best on, as SH does. Returns the count of
 * promotable ones; *quota (may be NULL) gets the quota. */
int dse_asha_promotable(int n, const double *top1, const int64_t *model_bytes, const char *const *ids,
                        const int *promoted, int eta, enum dse_sweep_rank rank, int closed, int *promotable,
                        int *quota);

#endif
