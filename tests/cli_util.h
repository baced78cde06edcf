/* cli_util.h: what test_cli's files (tests/test_cli.c, test_cli_space.c, test_cli_opts.c)
 * share: the headers they use, a comparison of two networks, a strict JSON checker, a scratch
 * folder, a file's text and a command's --help text (cli_util.c). */
#ifndef DSE_TESTS_CLI_UTIL_H
#define DSE_TESTS_CLI_UTIL_H

#include "netfile/netfile.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "base/fs.h"
#include "dse/options.h"
#include "dse/ratecache.h"
#include "engine/model.h"
#include "engine/train.h"
#include "dse/report.h"
#include "dse/trainlog.h"
#include "sweep/json_read.h"
#include "sweep/space.h"
#include "sweep/sweep.h"
#include "metaparams/metaparams.h"
#define CHECK_SHARED_COUNTS /* one set of counts for both of test_cli's files: cli_util.c */
#include "tests/check.h"
#include "tests/nets.h"
#include "tests/testfs.h"

void check_same_net(const struct dse_net *a, const struct dse_net *b, const char *what);
const char *json_ws(const char *p);
const char *json_value(const char *p);
const char *tmpdir(void);
void write_text(const char *path, const char *text);
/* What `dse NAME --help` prints for command c (dse_opts_usage), to free; "" if no memory. */
char *usage_text(const struct dse_opt_cmd *c);

#endif
