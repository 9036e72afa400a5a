// fuzz-extra: tools/hotspot/cmd/profile.c
/* libFuzzer harness for `vigil hot`'s reader of hotspot.json (tools/hotspot/cmd/profile.c and
 * its JSON reader common/jsontree.c): any input is parsed or rejected with a message naming a line; an
 * accepted profile is named (each frame by its module and address modulo 4, so that stacks
 * merge), ranked, and written as folded stacks and as trace events, which must parse back. */
#include "jsontree.h"
#include "../../cmd/profile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hs_profile p;
    char err[300];
    if (hs_profile_parse((const char *)data, size, "fuzz.json", &p, err, sizeof err) != 0) {
        if (strncmp(err, "fuzz.json:", 10) != 0)
            abort();   /* every message names the file and line */
        return 0;
    }
    struct hs_view v;
    hs_view_init(&v);
    for (size_t s = 0; s < p.nstacks; s++) {
        size_t n = p.stacks[s].nframes;
        uint32_t *funcs = malloc((n ? n : 1) * sizeof *funcs);
        if (!funcs)
            break;
        for (size_t k = 0; k < n; k++) {
            char name[64];
            const struct hs_frame *f = &p.stacks[s].frames[n - 1 - k];
            snprintf(name, sizeof name, "m%d;f %llu", f->module, (unsigned long long)(f->address % 4));
            size_t idx = hs_view_func(&v, name, f->module >= 0 ? p.modules[f->module].path : "", (int)(f->address % 7));
            funcs[k] = idx == SIZE_MAX ? 0 : (uint32_t)idx;
        }
        if (v.nfuncs)
            hs_view_add_stack(&v, s, funcs, v.nfuncs ? n : 0, p.stacks[s].count);
        free(funcs);
    }
    hs_view_finish(&v);
    free(hs_view_ranking(&v, 0));
    free(hs_view_ranking(&v, 1));
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        hs_view_write_folded(&v, null);
        fclose(null);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f) {
        hs_view_write_trace(&v, &p, f, 1, "fuzz");
        fclose(f);
        struct vigil_jv j;
        if (vigil_jv_parse(buf, len, &j, err, sizeof err) != 0)
            abort();   /* the trace writer wrote something that is not JSON */
        vigil_jv_free(&j);
        free(buf);
    }
    hs_view_free(&v);
    hs_profile_free(&p);
    return 0;
}
