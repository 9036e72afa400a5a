/* libFuzzer harness for the plan file parser (common/plan.c): any input is rejected with a
 * "name:line:" message or parses; a parsed plan written back out parses to the same plan. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

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
        (p.nmodules && memcmp(again.modules, p.modules, p.nmodules * sizeof *p.modules) != 0) ||
        (p.nsites && memcmp(again.sites, p.sites, p.nsites * sizeof *p.sites) != 0))
        abort();
    vigil_plan_free(&again);
    vigil_plan_free(&p);
    free(out);
    return 0;
}
