/* conv_file.c: the text of a cuDNN choice file (the format is on dse_cuda_conv_file in
 * engine/cuda/cuda.h): parsing, with path:line for anything wrong, and writing. Plain C
 * with no CUDA, built in every build, so the reader is tested without a device; the ctx's
 * side (what a loaded choice runs, the header against this GPU) is conv.c's
 * dse_cuda_conv_cache_load / _save. docs/gpu.md, "Determinism", says why the file exists. */
#include "engine/cuda/cuda.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "dse-cudnn-choices"
#define HEADER_FORM "'" MAGIC " 1 cudnn VERSION cc MAJOR.MINOR sms COUNT device NAME'"
#define DIRECTION_FORM "none, fp32, 'legacy ALGO math MATH ws BYTES' or 'engine ID ws BYTES knobs [TYPE=VALUE]...'"

static const char *const dir_names[3] = { "forward", "backward data", "backward filter" };

const char *dse_cuda_conv_dir_str(int dir) { return dir >= 0 && dir < 3 ? dir_names[dir] : "?"; }

void dse_cuda_conv_file_deinit(struct dse_cuda_conv_file *f) {
    if (!f) return;
    free(f->choices);
    free(f->lines);
    f->choices = NULL, f->lines = NULL, f->n = 0;
}

/* ---- reading ----------------------------------------------------------------------------- */

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

/* The next integer at *p (after blanks) into *v, *p past it: 0, or -1 if there is none. */
static int num(const char **p, int64_t *v) {
    const char *s = skip_space(*p);
    char *end;
    if (!(*s == '-' || (*s >= '0' && *s <= '9'))) return -1;
    long long x = strtoll(s, &end, 10);
    if (end == s) return -1;
    *v = x, *p = end;
    return 0;
}

/* 0 if the next word at *p is w (followed by a blank or the end), *p past it. */
static int word_is(const char **p, const char *w) {
    const char *s = skip_space(*p);
    const size_t n = strlen(w);
    if (strncmp(s, w, n) || (s[n] && s[n] != ' ' && s[n] != '\t')) return -1;
    *p = s + n;
    return 0;
}

static int at_end(const char *p) { return *skip_space(p) == '\0'; }

/* One direction's field (NUL-terminated, no ';'); fills c's direction d. 0, -1 if it does
 * not parse, -2 for too many knobs. */
static int parse_direction(const char *p, struct dse_cuda_conv_choice *c, int d) {
    int *algo = &c->algo[d];
    size_t *ws = &c->ws[d];
    struct dse_cuda_conv_engine *e = &c->engine[d];
    int64_t a, m, w;
    e->id = -1, e->n_knobs = 0, c->math[d] = 0;
    if (!word_is(&p, "none")) {
        *algo = -1;
        return at_end(p) ? 0 : -1;
    }
    if (!word_is(&p, "fp32")) {
        *algo = DSE_CUDA_CONV_FP32;
        return at_end(p) ? 0 : -1;
    }
    if (!word_is(&p, "legacy")) {
        if (num(&p, &a) || word_is(&p, "math") || num(&p, &m) || word_is(&p, "ws") || num(&p, &w) || !at_end(p))
            return -1;
        if (a < 0 || a >= DSE_CUDA_CONV_FP32 || m < 0 || m > 255 || w < 0) return -1;
        *algo = (int)a, c->math[d] = (int)m, *ws = (size_t)w;
        return 0;
    }
    if (!word_is(&p, "engine")) {
        if (num(&p, &a) || word_is(&p, "ws") || num(&p, &w) || word_is(&p, "knobs")) return -1;
        if (a < 0 || a > INT_MAX - DSE_CUDA_CONV_ENGINE || w < 0) return -1;
        e->id = a, *algo = DSE_CUDA_CONV_ENGINE + (int)a, *ws = (size_t)w;
        while (!at_end(p)) {
            int64_t t, v;
            if (num(&p, &t) || *p != '=') return -1;
            p++;
            if (*p == ' ' || *p == '\t' || num(&p, &v) || (*p && *p != ' ' && *p != '\t') || t < 0) return -1;
            if (e->n_knobs == DSE_CUDA_CONV_KNOBS) return -2;
            e->knob_type[e->n_knobs] = t, e->knob_value[e->n_knobs] = v;
            e->n_knobs++;
        }
        return 0;
    }
    return -1;
}

/* Line `line` (NUL-terminated, no newline) as an entry into *c. 0, or DSE_ERR_IO with err
 * set. */
static enum dse_status parse_entry(const char *path, int line, char *text, struct dse_cuda_conv_choice *c,
                                   struct dse_err *err) {
    char *field[4];
    int n = 0;
    for (char *p = text; n < 4;) {
        field[n++] = p;
        char *semi = strchr(p, ';');
        if (!semi) break;
        *semi = '\0', p = semi + 1;
        if (n == 4) return dse_err_set(err, DSE_ERR_IO, path, line, "more than 4 fields separated by ';'; "
                                       "expected 'KEY ; FORWARD ; BACKWARD-DATA ; BACKWARD-FILTER'");
    }
    if (n < 4)
        return dse_err_set(err, DSE_ERR_IO, path, line, "%d field%s; expected 'KEY ; FORWARD ; BACKWARD-DATA ; "
                           "BACKWARD-FILTER' (4 fields separated by ';')", n, n == 1 ? "" : "s");
    memset(c, 0, sizeof *c);
    const char *p = field[0];
    int k = 0;
    for (; k < DSE_CUDA_CONV_KEY && !num(&p, &c->key[k]); k++) {}
    if (k < DSE_CUDA_CONV_KEY || !at_end(p))
        return dse_err_set(err, DSE_ERR_IO, path, line, "the shape key is not %d integers", DSE_CUDA_CONV_KEY);
    for (int d = 0; d < 3; d++) {
        const int r = parse_direction(field[d + 1], c, d);
        if (r == -2)
            return dse_err_set(err, DSE_ERR_IO, path, line, "%s: more than %d knobs", dir_names[d],
                               DSE_CUDA_CONV_KNOBS);
        if (r) {
            const char *t = skip_space(field[d + 1]);
            int len = (int)strlen(t);
            while (len > 0 && (t[len - 1] == ' ' || t[len - 1] == '\t')) len--;
            return dse_err_set(err, DSE_ERR_IO, path, line, "%s: '%.*s' does not parse; expected %s", dir_names[d],
                               len > 60 ? 60 : len, t, DIRECTION_FORM);
        }
    }
    return DSE_OK;
}

static enum dse_status parse_header(const char *path, const char *text, struct dse_cuda_conv_file *out,
                                    struct dse_err *err) {
    const char *p = text;
    int64_t v, major, minor, sms;
    if (word_is(&p, MAGIC))
        return dse_err_set(err, DSE_ERR_IO, path, 1, "not a cuDNN choice file; expected the header " HEADER_FORM);
    if (num(&p, &v) || (*p && *p != ' ' && *p != '\t'))
        return dse_err_set(err, DSE_ERR_IO, path, 1, "no format version after '" MAGIC "'; expected " HEADER_FORM);
    if (v != 1)
        return dse_err_set(err, DSE_ERR_IO, path, 1, "choice file format %lld; this dse reads format 1 (delete the "
                           "file to choose again)", (long long)v);
    out->version = 1;
    if (word_is(&p, "cudnn") || num(&p, &out->cudnn) || out->cudnn < 0 || word_is(&p, "cc") || num(&p, &major) ||
        *p != '.' || (p++, num(&p, &minor)) || major < 0 || major > 1000 || minor < 0 || minor > 1000 ||
        word_is(&p, "sms") || num(&p, &sms) || sms < 0 || sms > 100000 || word_is(&p, "device") || at_end(p))
        return dse_err_set(err, DSE_ERR_IO, path, 1, "the header does not parse; expected " HEADER_FORM);
    out->cc_major = (int)major, out->cc_minor = (int)minor, out->sms = (int)sms;
    p = skip_space(p);
    snprintf(out->device, sizeof out->device, "%s", p);
    return DSE_OK;
}

enum dse_status dse_cuda_conv_file_parse(const char *path, const char *text, struct dse_cuda_conv_file *out,
                                         struct dse_err *err) {
    memset(out, 0, sizeof *out);
    const size_t len = strlen(text);
    char *buf = malloc(len + 1);
    int cap = 0;
    if (!buf) return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
    memcpy(buf, text, len + 1);
    enum dse_status st = DSE_OK;
    int line = 0;
    for (char *p = buf; p && !st;) {
        char *end = strchr(p, '\n');
        if (end) *end = '\0';
        const size_t l = strlen(p);
        if (l && p[l - 1] == '\r') p[l - 1] = '\0';
        line++;
        if (line == 1) {
            st = parse_header(path, p, out, err);
        } else if (*skip_space(p) && *skip_space(p) != '#') {
            if (out->n == cap) {
                cap = cap ? 2 * cap : 32;
                struct dse_cuda_conv_choice *c = realloc(out->choices, (size_t)cap * sizeof *c);
                if (c) out->choices = c;
                int *ln = c ? realloc(out->lines, (size_t)cap * sizeof *ln) : NULL;
                if (ln) out->lines = ln;
                if (!c || !ln) {
                    st = dse_err_set(err, DSE_ERR_NOMEM, path, line, "out of memory");
                    break;
                }
            }
            struct dse_cuda_conv_choice *c = &out->choices[out->n];
            if ((st = parse_entry(path, line, p, c, err))) break;
            for (int i = 0; i < out->n && !st; i++)
                if (!memcmp(out->choices[i].key, c->key, sizeof c->key))
                    st = dse_err_set(err, DSE_ERR_IO, path, line, "the shape key of line %d again", out->lines[i]);
            out->lines[out->n++] = line;
        }
        p = end ? end + 1 : NULL;
    }
    free(buf);
    if (st) {
        dse_cuda_conv_file_deinit(out);
        memset(out, 0, sizeof *out);
    }
    return st;
}

void dse_cuda_conv_choice_copy_dir(struct dse_cuda_conv_choice *to, const struct dse_cuda_conv_choice *from, int dir) {
    to->algo[dir] = from->algo[dir], to->ms[dir] = from->ms[dir], to->ws[dir] = from->ws[dir];
    to->math[dir] = from->math[dir], to->engine[dir] = from->engine[dir];
}

/* ---- writing ----------------------------------------------------------------------------- */

static void write_direction(FILE *f, const struct dse_cuda_conv_choice *c, int d) {
    const int algo = c->algo[d];
    const size_t ws = c->ws[d];
    const struct dse_cuda_conv_engine *e = &c->engine[d];
    if (algo < 0) {
        fputs(" none", f);
    } else if (algo == DSE_CUDA_CONV_FP32) {
        fputs(" fp32", f);
    } else if (algo >= DSE_CUDA_CONV_ENGINE) {
        fprintf(f, " engine %lld ws %zu knobs", (long long)e->id, ws);
        for (int k = 0; k < e->n_knobs; k++)
            fprintf(f, " %lld=%lld", (long long)e->knob_type[k], (long long)e->knob_value[k]);
    } else {
        fprintf(f, " legacy %d math %d ws %zu", algo, c->math[d], ws);
    }
}

char *dse_cuda_conv_file_format(const struct dse_cuda_conv_file *fl) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    fprintf(f, MAGIC " 1 cudnn %lld cc %d.%d sms %d device %s\n", (long long)fl->cudnn, fl->cc_major, fl->cc_minor,
            fl->sms, fl->device);
    fprintf(f, "# cuDNN's conv choices, pinned (engine/cuda/cuda.h, dse_cuda_conv_file): per shape, its %d key "
            "numbers;\n", DSE_CUDA_CONV_KEY);
    fputs("# then forward; backward data; backward filter: none, fp32, legacy ALGO math MATH ws BYTES, or\n"
          "# engine ID ws BYTES knobs TYPE=VALUE... (cuDNN's global engine index and knob choices)\n", f);
    for (int i = 0; i < fl->n; i++) {
        const struct dse_cuda_conv_choice *c = &fl->choices[i];
        if (c->algo[0] < 0 && c->algo[1] < 0 && c->algo[2] < 0) continue;
        for (int k = 0; k < DSE_CUDA_CONV_KEY; k++) fprintf(f, "%s%lld", k ? " " : "", (long long)c->key[k]);
        for (int d = 0; d < 3; d++) {
            fputs(" ;", f);
            write_direction(f, c, d);
        }
        fputc('\n', f);
    }
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}
