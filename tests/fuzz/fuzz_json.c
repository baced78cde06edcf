/* fuzz_json: the strict JSON reader of sweep directories (sweep/json_read.c), in memory;
 * every value of a document that parses is walked (objects by key as dse_json_get reads). */
#include "sweep/json_read.h"
#include "tests/fuzz/fuzz.h"

static void walk(const struct dse_json *v, int depth)
{
    (void)dse_json_type_str(v->type);
    if (depth > 64)
        return;
    for (int i = 0; i < v->n; i++) {
        if (v->type == DSE_JSON_ARRAY) {
            walk(&v->items[i], depth + 1);
        } else if (v->type == DSE_JSON_OBJECT) {
            walk(&v->members[i].value, depth + 1);
            if (dse_json_get(v, v->members[i].key) == NULL && strlen(v->members[i].key) == v->members[i].key_len)
                __builtin_trap(); /* a key of the object not found by its own name */
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dse_json_doc *doc = NULL;
    struct dse_err err = {0};
    if (dse_json_parse((const char *)data, size, "fuzz.json", &doc, &err) == DSE_OK) {
        walk(dse_json_root(doc), 0);
        dse_json_free(doc);
    }
    return 0;
}
