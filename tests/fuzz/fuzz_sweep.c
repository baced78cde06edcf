/* fuzz_sweep: a sweep directory read whole (sweep/sweep_read.c dse_sweep_read): the
 * manifest and one candidate record. The input is DIR/sweep.json, then, after a line
 * "--", the candidate, written as DIR/candidates/<its id>.json (so that mutated records
 * get past the id-equals-file-name check) or c0.json. DIR is one temporary folder per
 * process, removed at exit. */
#include <sys/stat.h>

#include "sweep/json_read.h"
#include "sweep/sweep_read.h"
#include "tests/fuzz/fuzz.h"

static char dir[64], cdir[80], manifest[96], cand[160];

static void put(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
}

static void cleanup(void)
{
    if (cand[0])
        unlink(cand);
    unlink(manifest);
    rmdir(cdir);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/dse-fuzz-sweep-XXXXXX");
        if (!mkdtemp(dir)) {
            perror(dir);
            exit(2);
        }
        snprintf(cdir, sizeof cdir, "%s/candidates", dir);
        snprintf(manifest, sizeof manifest, "%s/sweep.json", dir);
        if (mkdir(cdir, 0700) != 0) {
            perror(cdir);
            exit(2);
        }
        atexit(cleanup);
    }
    if (cand[0]) {
        unlink(cand);
        cand[0] = 0;
    }
    const uint8_t *sep = NULL;
    for (size_t i = 0; i + 4 <= size && !sep; i++)
        if (memcmp(data + i, "\n--\n", 4) == 0)
            sep = data + i;
    size_t n_manifest = sep ? (size_t)(sep - data) + 1 : size;
    put(manifest, data, n_manifest);
    if (sep) {
        const uint8_t *c = sep + 4;
        size_t         n = size - (size_t)(c - data);
        char           id[64] = "c0";
        struct dse_json_doc *doc = NULL;
        struct dse_err       err = {0};
        if (dse_json_parse((const char *)c, n, "c.json", &doc, &err) == DSE_OK) {
            const struct dse_json *v = dse_json_get(dse_json_root(doc), "id");
            if (v && v->type == DSE_JSON_STRING && v->len > 0 && v->len < sizeof id && strlen(v->str) == v->len &&
                !strchr(v->str, '/') && v->str[0] != '.')
                snprintf(id, sizeof id, "%s", v->str);
            dse_json_free(doc);
        }
        snprintf(cand, sizeof cand, "%s/%s.json", cdir, id);
        put(cand, c, n);
    }
    struct dse_sweep_view s;
    struct dse_err        err = {0};
    enum dse_status       st = dse_sweep_read(&s, dir, &err);
    if (getenv("DSE_FUZZ_VERBOSE")) /* do the seeds read? */
        fprintf(stderr, "fuzz_sweep: %s%s%s\n", dse_status_str(st), st ? ": " : "", st ? err.msg : "");
    dse_sweep_view_free(&s);
    return 0;
}
