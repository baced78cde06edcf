/* slurm.c: a sweep's workers as a Slurm job array (slurm.h, docs/cluster.md): the sbatch
 * script, its submission, the record of submitted jobs, and the tasks' states and their
 * cancellation through squeue, sacct and scancel, each run with fork/exec (no shell). */
#include "sweep/slurm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"

#define OUT_MAX (1 << 20) /* what is kept of a command's stdout or stderr */

void dse_slurm_script_path(const char *dir, char *buf, int size) {
    snprintf(buf, (size_t)size, "%s/slurm/sweep.sbatch", dir);
}

static void jobs_path(const char *dir, char *buf, int size) {
    snprintf(buf, (size_t)size, "%s/slurm/jobs", dir);
}

/* s as one word for bash: bare if it is plain, else in single quotes ('\'' for a quote). */
static void put_word(FILE *f, const char *s) {
    if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,:/@%") == strlen(s)) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++)
        if (*s == '\'') fputs("'\\''", f);
        else fputc(*s, f);
    fputc('\'', f);
}

/* Whether s can stand in an #SBATCH line as it is: sbatch splits those lines at white
 * space and reads quotes, and --output expands '%'. */
static int sbatch_plain(const char *s) {
    return !s[strcspn(s, " \t\n\r\"'\\%")];
}

enum dse_status dse_slurm_script(const struct dse_slurm_job *j, char **text, struct dse_err *err) {
    *text = NULL;
    if (j->array < 1 || j->array > DSE_SLURM_ARRAY_MAX)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "--array %d is out of range; expected 1 to %d tasks",
                           j->array, DSE_SLURM_ARRAY_MAX);
    if (j->gpus_per_task < 0 || j->gpus_per_task > DSE_SLURM_GPUS_MAX)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "--gpus-per-task %d is out of range; expected 1 to %d",
                           j->gpus_per_task, DSE_SLURM_GPUS_MAX);
    if (!sbatch_plain(j->dir))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "sweep directory '%s' holds white space, a quote, a "
                           "backslash or '%%', which an #SBATCH --output line cannot hold; choose another --out",
                           j->dir);
    if (!sbatch_plain(j->name))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "job name '%s' cannot stand in an #SBATCH line", j->name);
    if (j->sbatch && strpbrk(j->sbatch, "\n\r"))
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "--sbatch holds a line break; give the options on one line");
    size_t len = 0;
    FILE *f = open_memstream(text, &len);
    if (!f) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory writing the sbatch script");
    fprintf(f, "#!/bin/bash\n"
               "# A dse sweep as a Slurm job array, written by `dse sweep ... --slurm` (docs/cluster.md).\n"
               "# Every task of the array runs one more worker of the sweep in\n"
               "#   %s\n"
               "# Workers share the candidates through the leases in its leases/ folder, as any\n"
               "# `dse sweep` on any machine that shares the directory does, and a task ends when\n"
               "# every candidate has ended. So tasks may start late, run on different nodes, or be\n"
               "# cancelled or preempted: Slurm's SIGTERM (then SIGKILL) ends a worker as kill -9\n"
               "# would, its lease is no longer renewed, and another worker takes its candidate over\n"
               "# from the last checkpoint (at once on the same node; on another node once the lease\n"
               "# is two lease times old, --lease-seconds, 60 s by default).\n"
               "#\n"
               "# Edit it freely (partition, time limit, account...) and submit it again with\n"
               "#   sbatch %s/slurm/sweep.sbatch\n"
               "# (`dse sweep ... --slurm` submits it and records the job for `dse status` and\n"
               "# `dse sweep DIR --slurm --cancel`; a job submitted by hand is not recorded.)\n"
               "#\n"
               "#SBATCH --job-name=%s\n"
               "#SBATCH --array=0-%d\n"
               "#   each task's output (%%A: the job, %%a: the task):\n"
               "#SBATCH --output=%s/slurm/%%A_%%a.out\n",
            j->dir, j->dir, j->name, j->array - 1, j->dir);
    if (j->cpus_per_task > 0)
        fprintf(f, "#   cores: the worker processes times their engine threads (--workers x --threads)\n"
                   "#SBATCH --cpus-per-task=%d\n", j->cpus_per_task);
    if (j->ranks > 1)
        fprintf(f, "#   ranks of each task (--ranks-per-candidate): together one worker that trains each\n"
                   "#   candidate data-parallel over MPI (docs/training.md); cores above are per rank\n"
                   "#SBATCH --ntasks=%d\n", j->ranks);
    if (j->gpus_per_task > 0)
        fprintf(f, "#   GPUs of each task (--gpus-per-task): the worker trains on every GPU Slurm gives it\n"
                   "#SBATCH --gres=gpu:%d\n", j->gpus_per_task);
    if (j->sbatch && j->sbatch[strspn(j->sbatch, " \t")])
        fprintf(f, "#   given with --sbatch:\n#SBATCH %s\n", j->sbatch + strspn(j->sbatch, " \t"));
    fprintf(f, "\n"
               "# The worker: the same command on every task (exec, so that Slurm's signals reach it).\n"
               "exec ");
    /* OpenMPI takes the task's allocation; --bind-to none: it would pin each of 2 or fewer ranks
     * to one core, where a rank's --threads would then share it */
    if (j->ranks > 1) fprintf(f, "mpirun --bind-to none -np %d ", j->ranks);
    put_word(f, j->dse);
    fputs(" sweep ", f);
    put_word(f, j->space);
    fputs(" --out ", f);
    put_word(f, j->dir);
    for (int k = 0; k < j->n_args; k++) {
        fputc(' ', f);
        put_word(f, j->args[k]);
    }
    if (j->array_command) fputs(" --command-id \"slurm-$SLURM_ARRAY_JOB_ID\"", f);
    fputc('\n', f);
    if (fclose(f)) {
        free(*text);
        *text = NULL;
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory writing the sbatch script");
    }
    return DSE_OK;
}

enum dse_status dse_slurm_script_write(const char *dir, const char *text, struct dse_err *err) {
    char sub[4200], path[4200];
    enum dse_status st;
    snprintf(sub, sizeof sub, "%s/slurm", dir);
    dse_slurm_script_path(dir, path, (int)sizeof path);
    if ((st = dse_fs_mkdirs(sub, err))) return st;
    if ((st = dse_fs_write_atomic(path, text, strlen(text), err))) return st;
    chmod(path, 0755); /* a script to run; sbatch does not need it */
    return DSE_OK;
}

int dse_slurm_abspath(const char *path, char *buf, int size) {
    if (!strcmp(path, "/proc/self/exe")) {
        ssize_t n = readlink(path, buf, (size_t)size - 1);
        if (n <= 0 || n >= size - 1) return -1;
        buf[n] = '\0';
        return 0;
    }
    if (path[0] == '/') return dse_strlcpy(buf, path, size);
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return -1;
    while (path[0] == '.' && path[1] == '/') path += 2 + strspn(path + 2, "/"); /* "./x" is x */
    if (!strcmp(path, ".")) return dse_strlcpy(buf, cwd, size);
    int n = snprintf(buf, (size_t)size, "%s/%s", strcmp(cwd, "/") ? cwd : "", path);
    return n < 0 || n >= size ? -1 : 0;
}

int dse_slurm_have(const char *cmd) {
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/bin:/bin";
    for (const char *p = path;;) {
        size_t n = strcspn(p, ":");
        char full[4200];
        struct stat sb;
        snprintf(full, sizeof full, "%.*s/%s", n ? (int)n : 1, n ? p : ".", cmd);
        if (n < 4000 && !stat(full, &sb) && S_ISREG(sb.st_mode) && !access(full, X_OK)) return 1;
        if (!p[n]) return 0;
        p += n + 1;
    }
}

/* Append what fd gives to the malloc'ed buffer *b of *n bytes (NUL-terminated, at most
 * OUT_MAX kept). 0 at end of file. */
static int drain(int fd, char **b, size_t *n) {
    char chunk[4096];
    ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) return 1;
    if (got <= 0) return 0;
    if (*n + (size_t)got <= OUT_MAX) {
        char *nb = realloc(*b, *n + (size_t)got + 1);
        if (!nb) return 0;
        memcpy(nb + *n, chunk, (size_t)got);
        *n += (size_t)got;
        nb[*n] = '\0';
        *b = nb;
    }
    return 1;
}

/* Run argv (argv[0] looked up in PATH) with no shell; its stdout and stderr into *out and
 * *errtext (malloc'ed, NUL-terminated), its exit status into *rc (-1: killed by a signal,
 * 127: could not be started). */
static enum dse_status run(char *const argv[], char **out, char **errtext, int *rc, struct dse_err *err) {
    int po[2], pe[2];
    *out = calloc(1, 1), *errtext = calloc(1, 1), *rc = -1;
    if (!*out || !*errtext) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory running %s", argv[0]);
    if (pipe(po)) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: pipe: %s", argv[0], strerror(errno));
    if (pipe(pe)) {
        close(po[0]), close(po[1]);
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: pipe: %s", argv[0], strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: fork: %s", argv[0], strerror(errno));
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) dup2(null, 0);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(po[1]), close(pe[1]);
    size_t no = 0, ne = 0;
    struct pollfd fds[2] = { { .fd = po[0], .events = POLLIN }, { .fd = pe[0], .events = POLLIN } };
    for (int open_fds = 2; open_fds > 0;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int k = 0; k < 2; k++) {
            if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            if (!drain(fds[k].fd, k ? errtext : out, k ? &ne : &no)) {
                close(fds[k].fd);
                fds[k].fd = -1;
                open_fds--;
            }
        }
    }
    for (int k = 0; k < 2; k++)
        if (fds[k].fd >= 0) close(fds[k].fd);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: waitpid: %s", argv[0], strerror(errno));
    *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return DSE_OK;
}

/* s on one line into buf: its line breaks as "; ", no trailing white space (for a message). */
static const char *one_line(const char *s, char *buf, int size) {
    int n = 0;
    for (; *s && n < size - 3; s++)
        if (*s != '\n') buf[n++] = *s == '\r' || *s == '\t' ? ' ' : *s;
        else if (s[strspn(s, " \t\r\n")]) buf[n++] = ';', buf[n++] = ' ';
    while (n && buf[n - 1] == ' ') n--;
    buf[n] = '\0';
    return buf;
}

static enum dse_status need(const char *cmd, const char *what, struct dse_err *err) {
    if (dse_slurm_have(cmd)) return DSE_OK;
    return dse_err_set(err, DSE_ERR_UNSUPPORTED, NULL, 0, "%s is not on PATH: %s needs Slurm's client commands "
                       "(Debian: slurm-client)", cmd, what);
}

enum dse_status dse_slurm_jobs(const char *dir, struct dse_slurm_rec *jobs, int max, int *n, struct dse_err *err) {
    char path[4200], *text = NULL;
    struct stat sb;
    *n = 0;
    jobs_path(dir, path, (int)sizeof path);
    if (stat(path, &sb) && errno == ENOENT) return DSE_OK;
    enum dse_status st = dse_fs_read(path, &text, NULL, err);
    if (st) return st;
    int line = 0;
    for (char *p = text, *next; p && *p; p = next) {
        next = strchr(p, '\n');
        if (next) *next++ = '\0';
        line++;
        struct dse_slurm_rec r = { .array = 0 };
        char date[16], clock[16];
        if (!*p) continue;
        if (sscanf(p, "%31s %d %15s %15s", r.id, &r.array, date, clock) != 4 || r.array < 1 ||
            strspn(r.id, "0123456789") != strlen(r.id)) {
            char bad[120];
            dse_strlcpy(bad, p, (int)sizeof bad);
            free(text); /* the message holds path:line */
            return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s:%d: '%s' is not '<job id> <tasks> <date> <time>' "
                               "(a line dse sweep --slurm writes)", path, line, bad);
        }
        snprintf(r.when, sizeof r.when, "%s %s", date, clock);
        if (*n == max) memmove(jobs, jobs + 1, (size_t)(max - 1) * sizeof *jobs), --*n; /* keep the newest */
        jobs[(*n)++] = r;
    }
    free(text);
    return DSE_OK;
}

enum dse_status dse_slurm_submit(const char *dir, int array, char *job_id, int size, struct dse_err *err) {
    char script[4200], path[4200], *out = NULL, *msg = NULL, *old = NULL;
    int rc;
    enum dse_status st;
    job_id[0] = '\0';
    if ((st = need("sbatch", "submitting the job array", err))) return st;
    dse_slurm_script_path(dir, script, (int)sizeof script);
    char *argv[] = { "sbatch", "--parsable", script, NULL };
    if ((st = run(argv, &out, &msg, &rc, err))) goto done;
    if (rc != 0) {
        char said[400];
        st = dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "sbatch refused the job (exit status %d): %s", rc,
                         msg[strspn(msg, " \n")] ? one_line(msg, said, (int)sizeof said) : "(it said nothing)");
        goto done;
    }
    /* --parsable: "<id>" or "<id>;<cluster>" on the last line (warnings may come before) */
    size_t end = strlen(out);
    while (end && strchr(" \t\r\n", out[end - 1])) out[--end] = '\0';
    const char *last = strrchr(out, '\n') ? strrchr(out, '\n') + 1 : out;
    size_t digits = strspn(last, "0123456789");
    if (!digits || (last[digits] && last[digits] != ';') || (int)digits >= size) {
        char said[400];
        st = dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "sbatch printed no job id: '%s'",
                         one_line(out, said, (int)sizeof said));
        goto done;
    }
    memcpy(job_id, last, digits);
    job_id[digits] = '\0';
    /* the record: every submission, one line each, the file replaced atomically */
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    jobs_path(dir, path, (int)sizeof path);
    struct stat sb;
    size_t n_old = 0;
    if (!(stat(path, &sb) && errno == ENOENT) && (st = dse_fs_read(path, &old, &n_old, err))) goto done;
    char line[128];
    int n_line = snprintf(line, sizeof line, "%s %d %s\n", job_id, array, when);
    char *all = malloc(n_old + (size_t)n_line + 2);
    if (!all) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory recording job %s", job_id);
        goto done;
    }
    size_t n_all = n_old;
    if (n_old) memcpy(all, old, n_old);
    if (n_all && all[n_all - 1] != '\n') all[n_all++] = '\n';
    memcpy(all + n_all, line, (size_t)n_line);
    n_all += (size_t)n_line;
    if ((st = dse_fs_write_atomic(path, all, n_all, err)))
        dse_err_set(err, st, path, 0, "job %s was submitted but could not be recorded: %s (scancel %s stops it)",
                    job_id, err ? err->msg : "", job_id);
    free(all);
done:
    free(out), free(msg), free(old);
    return st;
}

/* A task's state in the lines "<task id>|<state>|<more>" of squeue or sacct, or NULL. */
static const char *state_of(char *lines, const char *task, char *buf, int size) {
    size_t n = strlen(task);
    for (char *p = lines; p && *p;) {
        char *next = strchr(p, '\n');
        if (!strncmp(p, task, n) && p[n] == '|') {
            int len = next ? (int)(next - p - (long)n - 1) : (int)strlen(p + n + 1);
            snprintf(buf, (size_t)size, "%.*s", len, p + n + 1);
            for (char *q = buf; *q; q++)
                if (*q == '|') *q = ' ';
            return buf;
        }
        p = next ? next + 1 : NULL;
    }
    return NULL;
}

/* squeue's rows "<task>|<state>|<node or reason>" for job id (every array task its own row)
 * into *rows; *known = 0 when squeue failed for another reason than not knowing the job
 * (which it says once the job has ended and been forgotten), its message in said. */
static enum dse_status squeue_rows(const char *id, char **rows, int *known, char *said, int size, struct dse_err *err) {
    char *msg = NULL;
    int rc;
    char *argv[] = { "squeue", "-h", "-r", "-j", (char *)id, "-o", "%i|%T|%R", NULL };
    enum dse_status st = run(argv, rows, &msg, &rc, err);
    *known = !st && (rc == 0 || strstr(msg, "Invalid job id"));
    if (!st && !*known) one_line(msg[0] ? msg : "failed", said, size);
    free(msg);
    return st;
}

enum dse_status dse_slurm_status(FILE *f, const char *dir, struct dse_err *err) {
    struct dse_slurm_rec jobs[DSE_SLURM_JOBS_MAX];
    int n;
    enum dse_status st = dse_slurm_jobs(dir, jobs, DSE_SLURM_JOBS_MAX, &n, err);
    if (st || !n) return st;
    char list[DSE_SLURM_JOBS_MAX * 33] = "";
    for (int k = 0; k < n; k++) {
        strcat(list, k ? "," : "");
        strcat(list, jobs[k].id);
    }
    if (!dse_slurm_have("squeue")) {
        fprintf(f, "Slurm: squeue is not on PATH, so the tasks' states are not shown (job%s %s, recorded in "
                   "%s/slurm/jobs)\n", n > 1 ? "s" : "", list, dir);
        return DSE_OK;
    }
    char *sa = NULL, *sa_err = NULL;
    int rc_sa = -1;
    if (dse_slurm_have("sacct")) { /* for the tasks squeue no longer lists; fails where there is no accounting */
        char *sa_argv[] = { "sacct", "-n", "-X", "-P", "-j", list, "-o", "JobID,State,ExitCode", NULL };
        if ((st = run(sa_argv, &sa, &sa_err, &rc_sa, err))) goto done;
    }
    fprintf(f, "Slurm (%s/slurm/jobs):\n", dir);
    for (int k = 0; k < n && !st; k++) {
        char *sq = NULL, said[300];
        int known;
        fprintf(f, "  job %s, %d task%s, submitted %s UTC\n", jobs[k].id, jobs[k].array, jobs[k].array > 1 ? "s" : "",
                jobs[k].when);
        if (!(st = squeue_rows(jobs[k].id, &sq, &known, said, (int)sizeof said, err)) && !known)
            fprintf(f, "    squeue: %s\n", said);
        for (int t = 0; t < jobs[k].array && !st; t++) {
            char task[64], buf[200];
            const char *s;
            snprintf(task, sizeof task, "%.31s_%d", jobs[k].id, t);
            if ((s = state_of(sq, task, buf, (int)sizeof buf)))
                fprintf(f, "    %-12s %s\n", task, s);
            else if (rc_sa == 0 && (s = state_of(sa, task, buf, (int)sizeof buf)))
                fprintf(f, "    %-12s %s (sacct: no longer in squeue)\n", task, s);
            else if (known)
                fprintf(f, "    %-12s not in squeue (finished or gone)\n", task);
            else
                fprintf(f, "    %-12s state unknown (squeue failed)\n", task);
        }
        free(sq);
    }
done:
    free(sa), free(sa_err);
    return st;
}

enum dse_status dse_slurm_cancel(FILE *f, const char *dir, struct dse_err *err) {
    struct dse_slurm_rec jobs[DSE_SLURM_JOBS_MAX];
    int n;
    char path[4200];
    enum dse_status st = dse_slurm_jobs(dir, jobs, DSE_SLURM_JOBS_MAX, &n, err);
    if (st) return st;
    jobs_path(dir, path, (int)sizeof path);
    if (!n)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%s: no Slurm job is recorded there (%s is missing or empty); "
                           "dse sweep SPACE --out %s --slurm submits one", dir, path, dir);
    if ((st = need("scancel", "cancelling the job", err))) return st;
    const int squeue = dse_slurm_have("squeue");
    for (int k = 0; k < n; k++) {
        char *out = NULL, *msg = NULL;
        int rc;
        char said[300];
        int known = 0;
        if (squeue && !(st = squeue_rows(jobs[k].id, &out, &known, said, (int)sizeof said, err)) && known &&
            !out[strspn(out, " \n")]) {
            fprintf(f, "job %s (submitted %s UTC) has ended already: not in squeue, nothing to cancel\n", jobs[k].id,
                    jobs[k].when); /* scancel would say nothing of it while Slurm remembers it (MinJobAge) */
            free(out);
            continue;
        }
        free(out);
        out = NULL;
        char *argv[] = { "scancel", jobs[k].id, NULL };
        if (st || (st = run(argv, &out, &msg, &rc, err))) {
            free(out), free(msg);
            return st;
        }
        if (rc == 0 && !msg[strspn(msg, " \n")])
            fprintf(f, "cancelled job %s (%d task%s, submitted %s UTC)\n", jobs[k].id, jobs[k].array,
                    jobs[k].array > 1 ? "s" : "", jobs[k].when);
        else
            fprintf(f, "job %s (submitted %s UTC): scancel says: %s\n", jobs[k].id, jobs[k].when,
                    one_line(msg[0] ? msg : "failed", said, (int)sizeof said));
        free(out), free(msg);
    }
    return DSE_OK;
}
