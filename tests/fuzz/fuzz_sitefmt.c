/* libFuzzer harness: vigil_sitefmt_walk over arbitrary bytes (a whole "vigil_sites" section
 * as the vigil command reads it from a file) must never read out of bounds, and every site of
 * every table it accepts must decode to in-bounds, NUL-terminated strings. */
#include <stdlib.h>
#include <string.h>

#include "sitefmt.h"

static int visit_table(const struct vigil_sitefmt_table *t, void *arg)
{
    size_t *sites = arg;
    for (uint32_t i = 0; i < t->nsites; i++) {
        struct vigil_site_view v;
        vigil_sitefmt_get(t, i, &v);
        /* strlen walks to the NUL: ASan catches any string running past the buffer */
        *sites += strlen(v.function) + strlen(v.file) + strlen(vigil_site_kind_name(v.kind));
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    /* A private copy of exactly size bytes, so that ASan sees the true end of the buffer. */
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    char err[256];
    size_t sites = 0;
    int n = vigil_sitefmt_walk(copy, size, visit_table, &sites, err, sizeof err);
    if (n < 0 && err[0] == '\0')
        abort();   /* a rejection must say why */
    free(copy);
    return 0;
}
