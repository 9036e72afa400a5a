/* libFuzzer harness for the plan file parser (common/plan.c): any input is rejected with a
 * "name:line:" message or parses; a parsed plan written back out parses to the same plan. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

/* Line numbers are where each line stood in the file: the writer puts every module line first,
 * so they legitimately change in a rewrite. */
static int same_plan(const struct vigil_plan *a, const struct vigil_plan *b)
{
    for (size_t i = 0; i < a->nmodules; i++)
        if (a->modules[i].tu_hash != b->modules[i].tu_hash || a->modules[i].nsites != b->modules[i].nsites)
            return 0;
    for (size_t i = 0; i < a->nsites; i++)
        if (a->sites[i].module != b->sites[i].module || a->sites[i].index != b->sites[i].index)
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct vigil_plan p, again;
    char err[256];
    if (vigil_plan_parse((const char *)data, size, "fuzz", &p, err, sizeof err) != 0) {
        if (strncmp(err, "fuzz:", 5) != 0)
            abort();
        return 0;
    }
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f || vigil_plan_write(f, &p) != 0)
        abort();
    fclose(f);
    if (vigil_plan_parse(out, len, "rewritten", &again, err, sizeof err) != 0 ||
        again.nmodules != p.nmodules || again.nsites != p.nsites ||
        !same_plan(&p, &again))
        abort();
    vigil_plan_free(&again);
    vigil_plan_free(&p);
    free(out);
    return 0;
}
