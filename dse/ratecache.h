/* ratecache.h: this machine's training speed, measured once (dse analyze --workers P
 * --measure) and kept, so that later analyses estimate a worker's compute from a network's
 * FLOPs in milliseconds instead of training for minutes (issue #31). docs/comm-model.md
 * ("Compute") says how dse analyze uses it. */
#ifndef DSE_CLI_RATECACHE_H
#define DSE_CLI_RATECACHE_H

#include <stddef.h>

#include "base/base.h"

/* The file: $XDG_CACHE_HOME/dse/train-rate.txt, else $HOME/.cache/dse/train-rate.txt (a home
 * shared by a cluster's machines holds each CPU model's line). One line per CPU model (with
 * its BLAS kernels) and thread count: "<threads> <training FLOP/s> <CPU model>", FLOP/s as forward + backward
 * FLOPs (analysis's flops_train) per second. Returns 0, or -1 when the path does not fit. */
int dse_ratecache_path(char *buf, size_t size);

/* This CPU's model name (/proc/cpuinfo's "model name", else its architecture, else
 * "unknown"), the key of its lines. */
void dse_ratecache_cpu(char *buf, size_t size);

/* The training FLOP/s kept in path for cpu and threads into *flops_per_s; 0 when none is
 * (no file, no such line). A line that does not parse is DSE_ERR_IO naming path:line. */
enum dse_status dse_ratecache_get(const char *path, const char *cpu, int threads, double *flops_per_s,
                                  struct dse_err *err);

/* Keep flops_per_s (> 0) for cpu and threads in path, replacing the line of the same key;
 * the other lines stay. The folder is made if missing; the file is replaced atomically. */
enum dse_status dse_ratecache_put(const char *path, const char *cpu, int threads, double flops_per_s,
                                  struct dse_err *err);

/* One worker's training images/s for net on this machine (1 thread), estimated in
 * microseconds: this CPU's FLOP/s kept in path over net's training FLOPs per image
 * (analysis's flops_train at batch 1), into *img_per_s, and in words into how ("estimated:
 * ..."). *img_per_s = 0 when path keeps nothing for this CPU. A network without conv or fc
 * FLOPs is DSE_ERR_CONFIG. */
struct dse_net;
enum dse_status dse_ratecache_estimate(const char *path, const struct dse_net *net, double *img_per_s, char *how,
                                       size_t how_size, struct dse_err *err);

/* Keep img_per_s, measured for net here with 1 thread, as this CPU's training FLOP/s in path. */
enum dse_status dse_ratecache_keep(const char *path, const struct dse_net *net, double img_per_s,
                                   struct dse_err *err);

#endif
