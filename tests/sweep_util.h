/* sweep_util.h: what test_sweep's files (tests/test_sweep*.c) share: the headers they use, the
 * spaces they sweep, running the dse binary, a scratch folder, a sweep's records and report and
 * the reference sweeps (sweep_util.c). */
#ifndef DSE_TESTS_SWEEP_UTIL_H
#define DSE_TESTS_SWEEP_UTIL_H

#include "sweep/sweep_impl.h"
#include "engine/train.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/pcg32.h"
#include "analysis/analysis.h"
#include "sweep/evolve.h"
#include "sweep/json_read.h"
#include "sweep/search.h"
#include "sweep/slurm.h"
#include "netfile/netfile.h"
#include "engine/cuda/cuda.h"
#define CHECK_SHARED_COUNTS /* one set of counts for all of test_sweep's files: sweep_util.c */
#include "tests/check.h"

#ifndef DSE_BINARY
#define DSE_BINARY "build/dse"
/* The proposers' made-up grid (evolve-*, bo-*): EVO_SPACE with each candidate's params and the
 * constraints' verdict, a made-up top-1 over it, and the repeated indices of results. */
#define EVO_SPACE "tests/spaces/evolve_small.cfg"
struct evo_grid {
    struct dse_space s;
    uint64_t n;
    double  *params;
    int     *pruned;
    int      n_feasible;
};
int    evo_grid_load(struct evo_grid *g, const char *path);
void   evo_grid_free(struct evo_grid *g);
double evo_top1(const struct evo_grid *g, uint64_t k);
int    evo_dups(const struct dse_evo_result *r, int n);

#endif

#define TINY    "tests/spaces/sweep_tiny.cfg"
#define DIVERGE "tests/spaces/sweep_diverge.cfg"
#define EVO     "tests/spaces/sweep_evo.cfg"
#define BO_SPACE "tests/spaces/sweep_bo.cfg"

/* Running things */
int  data_installed(void);
double now_s(void);
void nap(double s);
void rm_rf(const char *dir);
const char *scratch(void);
pid_t spawn_in(const char *log, const char *const *args, int group);
pid_t spawn(const char *log, const char *const *args);
int  wait_for(pid_t p, double limit);
int  run_dse(const char *log, const char *const *args, double limit);
void show_log(const char *log);

/* A sweep's records, report and reference runs */
struct recs {
    struct dse_rec r[16];
    int            n;
};

void recs_load(const char *dir, struct recs *x);
void recs_free(struct recs *x);
int  recs_same(const struct recs *a, const struct recs *b);
int  count_lines_of(const char *s);
char *report_csv(const char *dir);
const char *reference(int halving);

void crash_rng(struct dse_pcg32 *rng, uint64_t stream);

/* Looking into a sweep's folder and logs */
int holds_lease(const char *dir, pid_t pid, double limit);
int count_in(const char *path, const char *needle);
int count_candidates(const char *dir);

/* The proposers' made-up grid (evolve-*, bo-*): EVO_SPACE with each candidate's params and the
 * constraints' verdict, a made-up top-1 over it, and the repeated indices of results. */
#define EVO_SPACE "tests/spaces/evolve_small.cfg"
struct evo_grid {
    struct dse_space s;
    uint64_t n;
    double  *params;
    int     *pruned;
    int      n_feasible;
};
int    evo_grid_load(struct evo_grid *g, const char *path);
void   evo_grid_free(struct evo_grid *g);
double evo_top1(const struct evo_grid *g, uint64_t k);
int    evo_dups(const struct dse_evo_result *r, int n);

#endif
