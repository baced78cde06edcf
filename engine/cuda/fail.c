/* fail.c: the CUDA backend's error messages: "layer 'NAME' (OP): " + what went wrong,
 * and a failed library call with its name, error and file:line (the DSE_*_TRY macros of
 * cuda_impl.h). The lowest file of engine/cuda/: every other host file calls it, it calls
 * none of them, so the macros in the private header do not call back into ctx.c.
 * Interface: engine/cuda/cuda_impl.h. */
#include "engine/cuda/cuda_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int vprefix(char *buf, int size, const struct dse_node *n) {
    if (!n) return 0;
    int k = snprintf(buf, (size_t)size, "layer '%s' (%s): ", n->layer ? n->layer->name : "?", dse_op_str(n->op));
    return k < 0 ? 0 : k >= size ? size - 1 : k;
}

enum dse_status dse_cuda_fail(struct dse_cuda_ctx *cx, const struct dse_node *n, enum dse_status code,
                              const char *fmt, ...) {
    char msg[sizeof cx->err.msg];
    int k = vprefix(msg, (int)sizeof msg, n);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + k, sizeof msg - (size_t)k, fmt, ap);
    va_end(ap);
    return dse_err_set(&cx->err, code, NULL, n && n->layer ? n->layer->line : 0, "%s", msg);
}

enum dse_status dse_cuda_fail_call(struct dse_cuda_ctx *cx, const struct dse_node *n, const char *call,
                                   const char *what, int nomem, const char *detail, const char *file, int line) {
    const char *table = strncmp(call, "DSE_CUBLAS(", 11) == 0 ? strstr(call, ").") : NULL;
    if (table) call = table + 2; /* DSE_CUBLAS(cx).cublasSgemm_v2(...) -> cublasSgemm_v2 */
    const char *paren = strchr(call, '(');
    const int name_len = paren ? (int)(paren - call) : (int)strlen(call);
    const char *rel = strstr(file, "engine/cuda/"); /* __FILE__ may be absolute */
    return dse_cuda_fail(cx, n, nomem ? DSE_ERR_NOMEM : DSE_ERR_CUDA, "%.*s: %s (%s:%d)%s%s", name_len, call,
                         what ? what : "?", rel ? rel : file, line, detail ? "; " : "", detail ? detail : "");
}

enum dse_status dse_cuda_report(struct dse_cuda_ctx *cx, enum dse_status code, struct dse_err *err) {
    if (err && err != &cx->err) *err = cx->err;
    return code;
}
