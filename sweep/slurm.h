/* slurm.h: a sweep's workers as a Slurm job array (docs/cluster.md). The launcher writes
 * DIR/slurm/sweep.sbatch, a bash script whose every array task runs one more `dse sweep
 * SPACE --out DIR` worker (the leases of sweep/lease.h share the work out), submits it
 * with sbatch, records the job in DIR/slurm/jobs, and later asks squeue/sacct how the
 * tasks stand and scancel to stop them. Slurm's commands are run with fork/exec, never
 * through a shell. */
#ifndef DSE_SWEEP_SLURM_H
#define DSE_SWEEP_SLURM_H

#include <stdio.h>

#include "base/base.h"

#define DSE_SLURM_ARRAY_MAX 100000 /* --array N: tasks 0 .. N-1 (a site's MaxArraySize may allow fewer) */
#define DSE_SLURM_GPUS_MAX  64     /* --gpus-per-task K */
#define DSE_SLURM_JOBS_MAX  256    /* submissions recorded in DIR/slurm/jobs that are looked at */

/* What the script says. Every path absolute: a task may start in any directory. */
struct dse_slurm_job {
    const char        *dse;           /* the dse binary the tasks run */
    const char        *space;         /* the space file */
    const char        *dir;           /* the sweep directory */
    const char        *name;          /* the job's name (--job-name) */
    int                array;         /* tasks, 1 to DSE_SLURM_ARRAY_MAX */
    int                cpus_per_task; /* 0: not asked for */
    int                gpus_per_task; /* 0: no --gres */
    int                ranks;         /* --ranks-per-candidate P > 1: each task is P ranks
                                         (--ntasks=P) and runs the worker under mpirun -np P;
                                         cpus_per_task is then per rank */
    const char        *sbatch;        /* further sbatch options, one #SBATCH line; NULL or "": none */
    const char *const *args;          /* the worker's further arguments, after SPACE --out DIR */
    int                n_args;
    int                array_command; /* 1: each task's worker also gets --command-id
                                         slurm-$SLURM_ARRAY_JOB_ID (bash expands it), so the
                                         array's tasks count crashes as one command */
};

/* The text of DIR/slurm/sweep.sbatch for j (malloc'ed into *text). DSE_ERR_CONFIG: a
 * path that an #SBATCH line cannot hold (white space, quotes, '%'), a newline in
 * j->sbatch, an array or GPU count out of range. */
enum dse_status dse_slurm_script(const struct dse_slurm_job *j, char **text, struct dse_err *err);

/* DIR/slurm/sweep.sbatch into buf. */
void dse_slurm_script_path(const char *dir, char *buf, int size);

/* Write text to DIR/slurm/sweep.sbatch atomically (DIR/slurm/ made if missing). */
enum dse_status dse_slurm_script_write(const char *dir, const char *text, struct dse_err *err);

/* path made absolute against the working directory (not resolved further) into buf;
 * "/proc/self/exe" gives this program's own file. -1 if it does not fit or cannot be told. */
int dse_slurm_abspath(const char *path, char *buf, int size);

/* 1 if cmd ("sbatch") is an executable file in a directory of PATH. */
int dse_slurm_have(const char *cmd);

/* Submit DIR/slurm/sweep.sbatch, an array of `array` tasks, with `sbatch --parsable`;
 * write the job id ("1234") into job_id and add a line for it to DIR/slurm/jobs (the file
 * rewritten atomically). DSE_ERR_UNSUPPORTED: no sbatch on PATH; DSE_ERR_CONFIG: sbatch
 * refused (the message holds what it said) or printed no job id; DSE_ERR_IO: the record. */
enum dse_status dse_slurm_submit(const char *dir, int array, char *job_id, int size, struct dse_err *err);

/* One submission recorded in DIR/slurm/jobs: "<job id> <tasks> <UTC time>" per line. */
struct dse_slurm_rec {
    char id[32];
    int  array;
    char when[32];
};

/* Every submission recorded in dir, oldest first, at most max of them (the newest ones).
 * *n = 0 and DSE_OK when there is no DIR/slurm/jobs. DSE_ERR_CONFIG at the line that
 * does not parse. */
enum dse_status dse_slurm_jobs(const char *dir, struct dse_slurm_rec *jobs, int max, int *n, struct dse_err *err);

/* `dse status DIR`'s Slurm part: for each recorded job, each array task's state as squeue
 * shows it (sacct for those squeue no longer lists, if it answers; else "not in squeue
 * (finished or gone)"), written to f. Nothing when no job is recorded; one line when
 * squeue is not on PATH. */
enum dse_status dse_slurm_status(FILE *f, const char *dir, struct dse_err *err);

/* scancel every recorded job, a line for each to f. DSE_ERR_CONFIG: none is recorded;
 * DSE_ERR_UNSUPPORTED: no scancel on PATH. A job scancel no longer knows (it ended) is
 * said, not an error. */
enum dse_status dse_slurm_cancel(FILE *f, const char *dir, struct dse_err *err);

#endif
