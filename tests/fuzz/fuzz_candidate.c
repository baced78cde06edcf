/* fuzz_candidate: a candidate record (DIR/candidates/<id>.json) through the one reader of
 * its keys, dse_rec_from_json (sweep/record.c), after the JSON reader. The record's
 * id must equal its file name: the path is made from the document's own "id" (when it is a
 * short string) so that mutated records get past that check to the rest of the keys. */
#include "sweep/json_read.h"
#include "sweep/sweep_impl.h"
#include "sweep/sweep_read.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dse_json_doc *doc = NULL;
    struct dse_err err = {0};
    if (dse_json_parse((const char *)data, size, "candidates/c.json", &doc, &err) != DSE_OK)
        return 0;
    const struct dse_json *root = dse_json_root(doc);
    const struct dse_json *id = dse_json_get(root, "id");
    char path[128] = "candidates/c.json";
    if (id && id->type == DSE_JSON_STRING && id->len < 64 && strlen(id->str) == id->len)
        snprintf(path, sizeof path, "candidates/%s.json", id->str);
    struct dse_rec r;
    dse_rec_init(&r);
    (void)dse_rec_from_json(path, root, &r, &err);
    dse_rec_deinit(&r);
    dse_json_free(doc);
    return 0;
}
