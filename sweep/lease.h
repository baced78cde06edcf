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
    int     crashes;         /* holders in a row that died without finishing an epoch */
    int     epochs_at_claim; /* the candidate's epochs when this lease was taken */
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

/* Read a lease file. DSE_ERR_IO if missing (*missing = 1) or unreadable; DSE_ERR_CONFIG
 * if it does not parse. */
enum dse_status dse_lease_read(const char *dir, const char *id, int64_t gen, struct dse_lease *l,
                               int *missing, struct dse_err *err);

/* The highest gen of every id with a lease file in DIR/leases (one readdir). Calls
 * fn(arg, id, gen) once per id, in no particular order. A missing leases/ is no leases. */
enum dse_status dse_lease_scan(const char *dir, void (*fn)(void *arg, const char *id, int64_t gen),
                               void *arg, struct dse_err *err);

/* Claim id, whose highest lease gen is cur_gen (0: none): create DIR/leases/<id>.<cur_gen+1>
 * (create-only), then check by readdir that no higher gen exists. *won = 1 and *out
 * filled if this process holds the lease now. crashes and epochs are recorded in it. On
 * a win, gens <= cur_gen - 1 are removed (the previous one is kept: see docs). */
enum dse_status dse_lease_claim(const char *dir, const char *id, int64_t cur_gen, const struct dse_lease_me *me,
                                double ttl_s, int crashes, int epochs, struct dse_lease *out, int *won,
                                struct dse_err *err);

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

/* Unix wall-clock seconds and monotonic seconds. */
double dse_lease_wall(void);
double dse_lease_mono(void);

#endif
