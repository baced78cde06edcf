/* test_sweep_slurm.c: test_sweep's cases on `dse sweep --slurm` (sweep/slurm.c). */
#include "tests/sweep_util.h"

/* ---- Slurm (sweep/slurm.c): the script, and the commands against stand-in sbatch, squeue
 * and scancel (shell scripts in a PATH of their own); a real Slurm: tests/slurm_test.sh ---- */

void test_slurm_script(void) {
    const char *args[] = { "--data-root", "/data/it's here", "--workers", "1" };
    struct dse_slurm_job j = { .dse = "/opt/dse", .space = "/s/a b.cfg", .dir = "/shared/sw", .name = "dse-x",
                               .array = 3, .cpus_per_task = 2, .gpus_per_task = 1, .sbatch = " -p gpu -t 10",
                               .args = args, .n_args = 4 };
    char *text = NULL;
    struct dse_err err = { 0 };
    CHECK_OK(dse_slurm_script(&j, &text, &err));
    CHECK(text && strstr(text, "#SBATCH --array=0-2\n") && strstr(text, "#SBATCH --output=/shared/sw/slurm/%A_%a.out\n") &&
          strstr(text, "#SBATCH --cpus-per-task=2\n") && strstr(text, "#SBATCH --gres=gpu:1\n") &&
          strstr(text, "#SBATCH -p gpu -t 10\n"));
    CHECK(text && strstr(text, "exec /opt/dse sweep '/s/a b.cfg' --out /shared/sw --data-root '/data/it'\\''s here' "
                               "--workers 1\n"));
    free(text);
    j.array_command = 1; /* the array's tasks: one command (issue #31), bash expanding the job id in each */
    CHECK_OK(dse_slurm_script(&j, &text, &err));
    CHECK(text && strstr(text, " --workers 1 --command-id \"slurm-$SLURM_ARRAY_JOB_ID\"\n"));
    free(text);
    j.array_command = 0;
    j.dir = "/shared/my sweep";
    CHECK(dse_slurm_script(&j, &text, &err) == DSE_ERR_CONFIG && !text && strstr(err.msg, "white space"));
    j.dir = "/shared/sw", j.sbatch = "-p a\n-t 1";
    CHECK(dse_slurm_script(&j, &text, &err) == DSE_ERR_CONFIG && strstr(err.msg, "line break"));
}

/* A stand-in for a Slurm command: dir/name, a shell script with body. */
static void fake_cmd(const char *dir, const char *name, const char *body) {
    char path[400], text[800];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int n = snprintf(text, sizeof text, "#!/bin/sh\n%s\n", body);
    CHECK_OK(dse_fs_write_atomic(path, text, (size_t)n, NULL));
    chmod(path, 0755);
}

/* dse with PATH=bin (only the stand-ins there), stdout and stderr into log (replaced). */
static int run_slurm(const char *bin, const char *log, const char *const *args) {
    char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    unlink(log);
    setenv("PATH", bin, 1);
    int rc = run_dse(log, args, 120);
    if (old) setenv("PATH", old, 1), free(old);
    return rc;
}

static int file_has(const char *path, const char *what) {
    char *text = NULL;
    int has = !dse_fs_read(path, &text, NULL, NULL) && strstr(text, what);
    if (!has) printf("  %s does not hold '%s':\n%s\n", path, what, text ? text : "(no file)");
    free(text);
    return has;
}

void test_slurm_fake(void) {
    if (!data_installed()) {
        printf("SKIP: dataset-fashion-mnist not installed\n");
        return;
    }
    char none[300], ok[300], refuse[300], dir[300], log[300], jobs[400], script[400], args_file[400], body[600];
    snprintf(none, sizeof none, "%s/bin-none", scratch());
    snprintf(ok, sizeof ok, "%s/bin-ok", scratch());
    snprintf(refuse, sizeof refuse, "%s/bin-refuse", scratch());
    snprintf(dir, sizeof dir, "%s/slurm-sweep", scratch());
    snprintf(log, sizeof log, "%s/slurm.log", scratch());
    snprintf(jobs, sizeof jobs, "%s/slurm/jobs", dir);
    snprintf(script, sizeof script, "%s/slurm/sweep.sbatch", dir);
    snprintf(args_file, sizeof args_file, "%s/scancel.args", ok);
    mkdir(none, 0755), mkdir(ok, 0755), mkdir(refuse, 0755);
    fake_cmd(ok, "sbatch", "[ \"$1\" = --parsable ] || exit 9\necho 'sbatch: warning: a note first' >&2\necho '4242;fake'");
    fake_cmd(ok, "squeue", "echo '4242_0|RUNNING|node7'");
    snprintf(body, sizeof body, "echo \"$@\" > '%s'", args_file);
    fake_cmd(ok, "scancel", body);
    fake_cmd(refuse, "sbatch", "echo 'sbatch: error: Batch job submission failed: Invalid account' >&2\nexit 1");
    const char *submit[] = { "sweep", TINY, "--out", dir, "--slurm", "--array", "3", "--workers", "1", NULL };
    const char *dry[] = { "sweep", TINY, "--out", dir, "--slurm", "--array", "3", "--workers", "1", "--dry-run", NULL };
    const char *status[] = { "status", dir, NULL };
    const char *cancel[] = { "sweep", dir, "--slurm", "--cancel", NULL };
    struct stat sb;
    /* no sbatch: refused before anything is written */
    CHECK_INT_EQ(run_slurm(none, log, submit), 2);
    CHECK(file_has(log, "dse: sbatch is not on PATH: submitting needs Slurm's client commands (Debian: slurm-client); "
                        "--dry-run writes and prints DIR/slurm/sweep.sbatch anyway"));
    CHECK(stat(dir, &sb) != 0);
    /* --dry-run: the script, printed and written, nothing submitted */
    CHECK_INT_EQ(run_slurm(none, log, dry), 0);
    CHECK(file_has(log, "#SBATCH --array=0-2") && file_has(log, "--- dry run:"));
    CHECK(file_has(script, " --out ") && file_has(script, " --workers 1 --command-id \"slurm-$SLURM_ARRAY_JOB_ID\"\n"));
    CHECK(stat(jobs, &sb) != 0);
    /* --cancel with nothing recorded */
    CHECK_INT_EQ(run_slurm(ok, log, cancel), 2);
    CHECK(file_has(log, "no Slurm job is recorded there"));
    /* sbatch refuses: its message, exit 2, nothing recorded */
    CHECK_INT_EQ(run_slurm(refuse, log, submit), 2);
    CHECK(file_has(log, "dse: sbatch refused the job (exit status 1): sbatch: error: Batch job submission failed: "
                        "Invalid account\n"));
    CHECK(stat(jobs, &sb) != 0);
    /* submitted: the id after sbatch's warning, recorded */
    CHECK_INT_EQ(run_slurm(ok, log, submit), 0);
    CHECK(file_has(log, "Submitted Slurm job 4242: 3 tasks") && file_has(log, "dse sweep ") &&
          file_has(jobs, "4242 3 20"));
    /* status: squeue's task, the others gone; without squeue, one line */
    CHECK_INT_EQ(run_slurm(ok, log, status), 0);
    CHECK(file_has(log, "  job 4242, 3 tasks, submitted 20") && file_has(log, "    4242_0       RUNNING node7\n") &&
          file_has(log, "    4242_2       not in squeue (finished or gone)\n"));
    CHECK_INT_EQ(run_slurm(none, log, status), 0);
    CHECK(file_has(log, "Slurm: squeue is not on PATH, so the tasks' states are not shown (job 4242, recorded in "));
    /* cancel: scancel 4242 */
    CHECK_INT_EQ(run_slurm(ok, log, cancel), 0);
    CHECK(file_has(log, "cancelled job 4242 (3 tasks, submitted 20") && file_has(args_file, "4242\n"));
    if (check_failures) show_log(log);
}
