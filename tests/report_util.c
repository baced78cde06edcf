/* report_util.c: what test_report's files share (tests/report_util.h); and check.h's counts,
 * one set for them all. */
#include "tests/report_util.h"

int check_failures, check_count, check_skips;

/* The memstream's pointer and size live on the heap: with them on the stack, gcc -O2
 * takes every pointer into the report for a pointer to a local (-Wdangling-pointer). */
struct membuf {
    char  *buf;
    size_t len;
};

char *run_report(const char *dir, enum dse_format fmt, const char *plot, enum dse_status *st,
                 struct dse_err *err) {
    struct membuf *m = calloc(1, sizeof *m);
    FILE          *f = m ? open_memstream(&m->buf, &m->len) : NULL;
    if (!f) {
        free(m);
        *st = DSE_ERR_NOMEM;
        return NULL;
    }
    *st = dse_report_sweep(f, dir, fmt, plot, NULL, err);
    fclose(f);
    char *out = m->buf;
    free(m);
    return out;
}

char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    struct membuf *mb = calloc(1, sizeof *mb);
    FILE          *m = mb ? open_memstream(&mb->buf, &mb->len) : NULL;
    char           chunk[4096];
    size_t         got;
    if (!m) {
        free(mb);
        fclose(f);
        return NULL;
    }
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, got, m);
    fclose(f);
    fclose(m);
    char *out = mb->buf;
    free(mb);
    return out;
}

void write_file(const char *dir, const char *rel, const char *text) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

void rm_tree(const char *path) {
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char sub[1024];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rm_tree(sub);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

int starts_with(const char *s, const char *prefix) {
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

int count_of(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

void check_golden(const char *name, const char *text) {
    char path[256];
    snprintf(path, sizeof path, "tests/sweeps/golden/%s", name);
    const char *upd = getenv("DSE_UPDATE_GOLDEN");
    if (upd && *upd && strcmp(upd, "0") != 0) {
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (f) fputs(text, f), fclose(f);
        return;
    }
    char *want = slurp(path);
    CHECK(want != NULL);
    if (want && strcmp(want, text) != 0) {
        size_t i = 0;
        while (want[i] && want[i] == text[i]) i++;
        fprintf(stderr, "  %s differs at byte %zu (DSE_UPDATE_GOLDEN=1 rewrites it):\n  got  "
                "\"%.60s\"\n  want \"%.60s\"\n", path, i, text + i, want + i);
        CHECK(!"output matches the golden file");
    }
    free(want);
}

struct dse_json_doc *parse(const char *text, struct dse_err *err) {
    struct dse_json_doc *d = NULL;
    dse_json_parse(text, strlen(text), "t.json", &d, err);
    return d;
}

void put_candidate(const char *dir, const char *id, int index, double sr, long params, long flops,
                   const char *status, double top1) {
    char text[1200], rel[64], t1[32];
    if (top1 < 0) snprintf(t1, sizeof t1, "null");
    else snprintf(t1, sizeof t1, "%g", top1);
    snprintf(text, sizeof text,
             "{\"id\": \"%s\", \"index\": %d,\n \"metaparams\": {\"sr\": %g, \"bypass\": \"none\"},\n"
             " \"params\": %ld, \"model_bytes\": %ld, \"flops\": %ld,\n"
             " \"train_mem_bytes\": null, \"status\": \"%s\", \"pruned_by\": %s,\n"
             " \"top1\": %s, \"top5\": null}\n",
             id, index, sr, params, 4 * params, flops, status,
             strcmp(status, "pruned") ? "null" : "\"max_params = 1\"", t1);
    snprintf(rel, sizeof rel, "candidates/%s.json", id);
    write_file(dir, rel, text);
}

void put_sweep(const char *dir, const char *space, int n, const char *varied) {
    char text[400];
    snprintf(text, sizeof text, "{\"format\": \"dse-sweep-1\", \"space\": \"%s\",\n"
             "\"candidates\": %d, \"varied\": [%s]}\n", space, n, varied);
    write_file(dir, "sweep.json", text);
    char sub[512];
    snprintf(sub, sizeof sub, "%s/candidates", dir);
    mkdir(sub, 0777);
}

int well_formed_xml(const char *s) {
    const char *stack[64];
    int         depth = 0, seen_root = 0;
    for (const char *p = s; (p = strchr(p, '<'));) {
        const char *e = strchr(p, '>');
        if (!e) return 0;
        if (p[1] == '?' || p[1] == '!') {
            p = e + 1;
            continue;
        }
        for (const char *q = p + 1; q < e; q++)
            if (*q == '<') return 0;
        if (p[1] == '/') {
            size_t n = strcspn(p + 2, " >");
            if (!depth || strncmp(stack[depth - 1], p + 2, n) != 0) return 0;
            if (!strchr(" >\n", stack[depth - 1][n])) return 0; /* <g> closed by </gx> */
            depth--;
        } else if (e[-1] != '/') {
            if (depth == 64 || (depth == 0 && seen_root)) return 0;
            stack[depth++] = p + 1;
            seen_root = 1;
        }
        p = e + 1;
    }
    return depth == 0 && seen_root;
}

void check_svg(const char *path, int n_cand, const char *space) {
    char *s = slurp(path);
    CHECK(s != NULL);
    if (!s) return;
    size_t n = strlen(s);
    CHECK(starts_with(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""));
    CHECK(n > 7 && !strcmp(s + n - 7, "</svg>\n"));
    CHECK(well_formed_xml(s));
    CHECK_INT_EQ(count_of(s, "<circle"), n_cand);
    CHECK_INT_EQ(count_of(s, "<polyline"), 1);
    CHECK(strstr(s, space) != NULL);
    CHECK(!strstr(s, "nan") && !strstr(s, "inf"));
    free(s);
}
