/* libFuzzer harness for vigil-cc's configuration parser (common/ccconfig.c): any input is
 * rejected with a "name:line:" message or parses; a parsed config written back out parses to
 * the same sections and entries, and matching never reads out of bounds. */
#include "ccconfig.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct vigil_ccconfig c, again;
    char err[256];
    if (vigil_ccconfig_parse((const char *)data, size, "fuzz", &c, err, sizeof err) != 0) {
        if (strncmp(err, "fuzz:", 5) != 0)
            abort();
        return 0;
    }
    for (size_t k = 0; k < c.nsections; k++)
        (void)vigil_ccconfig_match(&c, c.sections[k].name, "main", "src/a.c");
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f || vigil_ccconfig_write(f, &c) != 0)
        abort();
    fclose(f);
    if (vigil_ccconfig_parse(out, len, "rewritten", &again, err, sizeof err) != 0 ||
        again.nsections != c.nsections || again.nentries != c.nentries)
        abort();
    /* the writer groups each section's entries: in that order, the same entries */
    size_t j = 0;
    for (size_t k = 0; k < c.nsections; k++) {
        if (strcmp(c.sections[k].name, again.sections[k].name))
            abort();
        for (size_t i = 0; i < c.nentries; i++)
            if (c.entries[i].section == k) {
                if (strcmp(c.entries[i].glob, again.entries[j].glob) || c.entries[i].kind != again.entries[j].kind ||
                    again.entries[j].section != k)
                    abort();
                j++;
            }
    }
    vigil_ccconfig_free(&again);
    vigil_ccconfig_free(&c);
    free(out);
    return 0;
}
