/* cmd.h: private to the dse command (dse/main.c and dse/cmd_*.c): what the commands share,
 * and the commands that live outside main.c. Every command is
 * int cmd_NAME(const struct dse_opt_cmd *c, const struct dse_opt_args *a): 0 success, 2 bad
 * input (usage, network or space file, shapes), 1 anything else. */
#ifndef DSE_CMD_H
#define DSE_CMD_H

#include "dse/options.h"
#include "dse/report.h"
#include "netfile/netfile.h"

#define EXIT_BAD_INPUT 2

/* Option o of a command's dse_opt_args a: its text (NULL if not given), its value if an
 * integer (d if not given), or whether the flag was given. */
#define OPT(o)        (a->val[DSE_OPT_##o])
#define OPT_INT(o, d) (OPT(o) ? (int)a->num[DSE_OPT_##o] : (d))
#define FLAG(o)       (OPT(o) != NULL)
/* An option's value, else its default from the command's line: as text (dse_opts_text), or
 * an INT's number (dse_opts_int). */
#define OPT_DEF(o)    dse_opts_text(c, a, DSE_OPT_##o)
#define OPT_NUM(o)    dse_opts_int(c, a, DSE_OPT_##o)

/* dse/cmd_common.c */
int             bad_usage(const char *cmd, const char *fmt, const char *arg);
int             parse_ll(const char *s, long long lo, long long hi, long long *out);
int             opt_fit(const char *cmd, const struct dse_opt_args *a, struct dse_input_shape *in);
int             fail(const struct dse_err *err);
int             fail_net(struct dse_err *err, const char *net_path);
enum dse_format opt_format(const char *v, enum dse_format dflt);
int             opt_conv(const char *cmd, const char *v, int *algo);
int             conv_in_bf16(const char *cmd, const char *conv, const struct dse_model_device_opts *d);
double          now_s(void);
int             opt_progress_every(const char *cmd, const char *v, double *seconds);
int             opt_ckpt_every(const char *cmd, const char *v, double *seconds, int *steps);

/* dse/cmd_sweep.c */
int cmd_sweep(const struct dse_opt_cmd *c, const struct dse_opt_args *a);
int cmd_status(const struct dse_opt_cmd *c, const struct dse_opt_args *a);
int cmd_report(const struct dse_opt_cmd *c, const struct dse_opt_args *a);

/* dse/cmd_train.c */
int cmd_train(const struct dse_opt_cmd *c, const struct dse_opt_args *a);
int cmd_bench(const struct dse_opt_cmd *c, const struct dse_opt_args *a);
int cmd_profile(const struct dse_opt_cmd *c, const struct dse_opt_args *a);
int cmd_eval(const struct dse_opt_cmd *c, const struct dse_opt_args *a);
int cmd_predict(const struct dse_opt_cmd *c, const struct dse_opt_args *a);
int cmd_compress(const struct dse_opt_cmd *c, const struct dse_opt_args *a);
int analyze_comm(const struct dse_opt_cmd *c, const struct dse_opt_args *a); /* dse analyze --workers */

#endif
