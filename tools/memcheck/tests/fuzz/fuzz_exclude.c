// fuzz-extra: tools/memcheck/runtime/exclude.c
/* libFuzzer harness for the memory checker's exclusion options (memcheck.exclude_ranges,
 * .exclude_kinds) and its reader of /proc/self/maps: any text is accepted or rejected with a
 * message; accepted ranges are non-empty; the maps reader keeps only well-formed shared lines. */
#include "../../runtime/exclude.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[256];
    size_t len = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, len);
    text[len] = 0;
    struct mc_range r[MC_RANGES_MAX];
    size_t n;
    char err[200];
    err[0] = 0;
    if (mc_ranges_parse(text, r, &n, err, sizeof err) == 0) {
        if (n > MC_RANGES_MAX)
            abort();
        for (size_t i = 0; i < n; i++)
            if (r[i].lo >= r[i].hi || !mc_in_ranges(r, n, r[i].lo, 1))
                abort();
    } else if (!err[0]) {
        abort();   /* a rejection says what was expected */
    }
    unsigned k;
    err[0] = 0;
    if (mc_kinds_parse(text, &k, err, sizeof err) == 0 ? (k & ~15u) != 0 : !err[0])
        abort();
    struct mc_range s[8];
    struct mc_maps_reader rd;
    uint8_t sh[8];
    mc_maps_begin(&rd, s, (data[0] & 1) ? sh : NULL, 8);
    mc_maps_feed(&rd, (const char *)data, size);
    mc_maps_end(&rd);
    if (rd.n > 8)
        abort();
    for (size_t i = 0; i < rd.n; i++)
        if (s[i].lo >= s[i].hi)
            abort();
    return 0;
}
