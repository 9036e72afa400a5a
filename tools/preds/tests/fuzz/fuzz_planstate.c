// fuzz-extra: tools/preds/cmd/planstate.c
/* libFuzzer harness for the search state file of `vigil plan` (tools/preds/cmd/planstate.c):
 * any input either is rejected with a "name:line:" message or parses; a parsed state written
 * back out must parse again to the same state (the writer and the parser agree on the grammar).
 * The binary is a fixed view of three site tables, the hashes of the seeds. */
#include "../../cmd/planstate.h"

#include <stdlib.h>
#include <string.h>

static const struct vigil_state_table tables[] = {
    {0xaa, 10}, {0x1234567890abcdefull, 300}, {0xffffffffffffffffull, 1},
};
#define NT (sizeof tables / sizeof tables[0])

static void same_set(const struct vigil_siteset *a, const struct vigil_siteset *b)
{
    for (size_t t = 0; t < NT; t++)
        if (memcmp(a->bits[t], b->bits[t], tables[t].nsites / 8 + 1) != 0)
            abort();
}

static void same(const struct vigil_plan_state *a, const struct vigil_plan_state *b)
{
    if (a->iteration != b->iteration || a->has_cause != b->has_cause ||
        (a->has_cause && (a->cause.signal != b->cause.signal || a->cause.file_offset != b->cause.file_offset ||
                          strcmp(a->cause.path, b->cause.path) != 0)))
        abort();
    same_set(&a->monitored, &b->monitored);
    same_set(&a->last_plan, &b->last_plan);
    same_set(&a->explored_true, &b->explored_true);
    same_set(&a->explored_false, &b->explored_false);
    for (size_t t = 0; t < NT; t++)
        if (memcmp(a->origin[t], b->origin[t], tables[t].nsites * sizeof **a->origin) != 0)
            abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct vigil_plan_state st, again;
    char err[256];
    if (vigil_plan_state_init(&st, tables, NT) != 0 || vigil_plan_state_init(&again, tables, NT) != 0)
        abort();
    if (vigil_plan_state_parse((const char *)data, size, "fuzz", &st, err, sizeof err) != 0) {
        if (strncmp(err, "fuzz:", 5) != 0 || !strchr("123456789", err[5]))
            abort();
        goto out;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f || vigil_plan_state_write(f, &st) != 0)
        abort();
    fclose(f);
    if (vigil_plan_state_parse(text, len, "rewritten", &again, err, sizeof err) != 0)
        abort();
    same(&st, &again);
    free(text);
out:
    vigil_plan_state_free(&again);
    vigil_plan_state_free(&st);
    return 0;
}
