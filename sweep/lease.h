/* lease.h: a worker's claim on one candidate of a sweep, safe on a filesystem shared by
 * several machines (NFS, Lustre): no flock, no shared clock needed, no pid checks across
 * hosts. The protocol (docs/sweep-dir.md, "Leases"): DIR/leases/<id>.<gen> files, the
 * highest gen is the current lease; a claim creates gen + 1 with link() (of two claimers
 * exactly one wins); the holder rewrites its file by atomic rename to renew it. */
#ifndef DSE_SWEEP_LEASE_H
#define DSE_SWEEP_LEASE_H

#include <stdint.h>

#include "base/base.h"

#define DSE_LEASE_ID_MAX 40
/* Gens above this are not lease files' (a JSON number holds every gen up to it exactly, no
 * sweep claims a candidate that often, and a claim must be able to make gen + 1): a file
 * named <id>.<gen> past it is ignored, as any file that is not a lease. */
#define DSE_LEASE_GEN_MAX (INT64_C(1) << 53)
/* The longest ttl a lease file may give, in seconds (a week): one past it does not read as a
 * lease (dse_lease_free_unreadable), so that no file can hold a candidate forever. */
#define DSE_LEASE_TTL_MAX (7 * 86400.0)

/* Who this worker is: host name, pid namespace (so that a pid is compared only inside
 * its own namespace), pid, its worker thread in the process, and a random token no other
 * worker shares (the token, not the pid, says whose a lease is: the worker threads of one
 * process share its pid). */
struct dse_lease_me {
    char host[64];
    char pidns[32];   /* "4026531836" from /proc/self/ns/pid; "" if unknown */
    long pid;
    int  thread;      /* 0: the process's only worker; k >= 1: worker thread k of several */
    char token[40];   /* 32 hex digits */
    char cmd[40];     /* the dse sweep command this worker belongs to (a token its worker
                         processes share); "" unknown. Crashes are counted per command */
};

/* One lease file. */
struct dse_lease {
    char    id[DSE_LEASE_ID_MAX];
    int64_t gen;             /* >= 1 */
    char    token[40], host[64], pidns[32];
    long    pid;
    int     thread;          /* the holder's worker thread in its process (dse_lease_me) */
    int64_t beat;            /* renewals so far: a change means the holder is alive */
    double  renewed;         /* the holder's wall clock at the last renewal, Unix seconds */
    double  ttl_s;           /* the holder's time to live: it renews every ttl_s / 10 */
    int     released;        /* 1: the holder let go; anyone may claim gen + 1 */
    int     crashes;         /* holders of its command in a row that died without progress */
    int     deaths;          /* holders of any command in a row that died without progress */
    int     epochs_at_claim; /* the candidate's epochs when this lease was taken */
    int64_t saved_at_claim;  /* the iteration of its checkpoint within the next epoch then
                                (0: none), to tell progress inside an epoch */
    char    cmd[40];         /* the holder's command (dse_lease_me.cmd) */
    /* progress of the training under this lease, for dse status (0 if none yet) */
    int     epoch, iter, iters; /* 0-based epoch, iteration within it, iterations per epoch */
    double  epoch_s;         /* estimated seconds per epoch at the current speed */
    char    device[16];      /* where it trains, "cpu" or "cuda:N", for dse status ("" until its
                                first renewal) */
};

/* Fill me for this process (a new random token each call; thread 0). */
void dse_lease_me_init(struct dse_lease_me *me);

/* "host:pid", or "host:pid.k" for worker thread k of a process that runs several: how
 * logs, attempts and dse status name a worker. */
void dse_lease_me_name(const struct dse_lease_me *me, char *buf, int size);
/* The same name for the holder of l. */
void dse_lease_holder_name(const struct dse_lease *l, char *buf, int size);

/* DIR/leases/<id>.<gen> into buf. */
void dse_lease_path(const char *dir, const char *id, int64_t gen, char *buf, int size);

/* Read a lease file. DSE_ERR_IO if missing (*missing = 1) or unreadable (a directory, say);
 * DSE_ERR_CONFIG if it does not parse, or its id, gen, token or ttl (0 < ttl_s <=
 * DSE_LEASE_TTL_MAX) are not a lease's. */
enum dse_status dse_lease_read(const char *dir, const char *id, int64_t gen, struct dse_lease *l,
                               int *missing, struct dse_err *err);

/* The highest gen of every id with a lease file in DIR/leases (one readdir). Calls
 * fn(arg, id, gen) once per id, in no particular order. A missing leases/ is no leases. */
enum dse_status dse_lease_scan(const char *dir, void (*fn)(void *arg, const char *id, int64_t gen),
                               void *arg, struct dse_err *err);

/* Where a candidate stands when a worker claims it, recorded in its lease. */
struct dse_lease_count {
    int     crashes; /* holders of the claimer's command in a row that died without progress */
    int     deaths;  /* holders of any command in a row that died without progress */
    int     epochs;  /* the candidate's epochs */
    int64_t saved;   /* the iteration of its checkpoint within the next epoch; 0: none */
};

/* Claim id, whose highest lease gen is cur_gen (0: none): create DIR/leases/<id>.<cur_gen+1>
 * (create-only), then check by readdir that no higher gen exists. *won = 1 and *out
 * filled if this process holds the lease now. count (NULL: all 0) is recorded in it. On a
 * win, gens <= cur_gen - 1 are removed (the previous one is kept: see docs). */
enum dse_status dse_lease_claim(const char *dir, const char *id, int64_t cur_gen, const struct dse_lease_me *me,
                                double ttl_s, const struct dse_lease_count *count, struct dse_lease *out, int *won,
                                struct dse_err *err);

/* The counts of a claim by me that takes over l, whose holder died (l not released), the
 * candidate now at n->epochs epochs and n->saved (its checkpoint within the next epoch):
 * the holder made progress (an epoch, or a checkpoint within one, past where it started)
 * if so 1 death in a row, else l->deaths + 1; and n->crashes the same count among me's
 * command's holders: 0 if the holder was another command's (an earlier command killed from
 * outside costs this command nothing: it retries at once). What a claim does with them:
 * dse_lease_verdict. */
void dse_lease_crashes(const struct dse_lease *l, const struct dse_lease_me *me, struct dse_lease_count *n);

/* The deaths in a row, of any commands, at which a candidate fails: DSE_LEASE_DEATHS_PER_CRASH
 * x --max-crashes. Every dse sweep process is a command of its own (a lone worker, a host, a
 * run in a loop), and a candidate that kills its process kills the command with it, so its
 * crashes never reach --max-crashes; deaths do. Twice: a command that finds up to
 * --max-crashes outside kills (commands killed in the candidate's first epoch) still
 * retries it itself, and one that kills its process costs at most 2N commands. */
#define DSE_LEASE_DEATHS_PER_CRASH 2

/* What a claim with the counts n does, --max-crashes max_crashes: DSE_LEASE_TRAIN;
 * DSE_LEASE_LAST, claimed only after every other candidate (max_crashes deaths or more),
 * then trained; DSE_LEASE_FAIL_CRASHES (max_crashes of this command's) and
 * DSE_LEASE_FAIL_DEATHS (DSE_LEASE_DEATHS_PER_CRASH x max_crashes of any commands'),
 * claimed last too: marked failed, retryable by a later command. */
enum dse_lease_verdict { DSE_LEASE_TRAIN, DSE_LEASE_LAST, DSE_LEASE_FAIL_CRASHES, DSE_LEASE_FAIL_DEATHS };
enum dse_lease_verdict dse_lease_verdict(const struct dse_lease_count *n, int max_crashes);

/* Whether l is still held: its file holds its token and gen + 1 does not exist. Reads only. */
enum dse_status dse_lease_check(const char *dir, const struct dse_lease *l, int *held, struct dse_err *err);

/* Renew l (beat + 1, renewed = now) if still held; *held says whether it was. */
enum dse_status dse_lease_renew(const char *dir, struct dse_lease *l, int *held, struct dse_err *err);

/* Let go of l (released = 1) if still held. */
enum dse_status dse_lease_release(const char *dir, struct dse_lease *l, struct dse_err *err);

/* 1 if l's holder runs on this host, in this pid namespace, and its pid is gone: its
 * lease may be taken at once. 0 when that cannot be told (another host or namespace),
 * and for a holder in me's own process (another worker thread of it: alive while me is). */
int dse_lease_holder_dead(const struct dse_lease *l, const struct dse_lease_me *me);

/* What an observer remembers of a lease, to tell a dead holder from a live one without
 * trusting another host's clock: the (gen, beat) last seen and when (its own monotonic
 * clock). Zero it for a candidate never looked at. */
struct dse_lease_obs {
    int64_t gen, beat;
    double  since;
};

/* Whether lease l may be taken over now, judged by an observer at wall time now_wall
 * and monotonic time now_mono: it is released; its holder is on this host and pid
 * namespace and gone; it is stale by the holder's own clock by more than a second ttl
 * (hosts' clocks may differ by up to a ttl); or obs has seen the same (gen, beat) for
 * more than a ttl of the observer's clock (needs no clock agreement at all). Updates
 * obs. *why (if taken over from a holder) names the rule. */
int dse_lease_free(const struct dse_lease *l, struct dse_lease_obs *obs, const struct dse_lease_me *me,
                   double now_wall, double now_mono, const char **why);

/* The same for gen's lease file when it exists but does not read as a lease (garbage,
 * empty, a directory): it names no holder and no ttl, so it is stale once obs has seen it
 * unreadable for ttl_s (the observer's own lease time) of the observer's clock. */
int dse_lease_free_unreadable(int64_t gen, struct dse_lease_obs *obs, double ttl_s, double now_mono,
                              const char **why);

/* Unix wall-clock seconds and monotonic seconds. */
double dse_lease_wall(void);
double dse_lease_mono(void);

#endif
