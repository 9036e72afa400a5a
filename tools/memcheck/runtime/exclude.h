/* What the user excludes from the memory checker (memcheck.exclude_ranges, .exclude_kinds):
 * the option parsers and the reader of the process's shared mappings (pure: no runtime,
 * unit-tested in tests/test_exclude.c and fuzzed in tests/fuzz/fuzz_exclude.c). */
#ifndef MC_EXCLUDE_H
#define MC_EXCLUDE_H
#include <stddef.h>
#include <stdint.h>

#define MC_RANGES_MAX 16

struct mc_range {
    uintptr_t lo, hi;   /* [lo, hi) */
};

/* Memory kinds, as exclude_kinds names them. */
enum { MC_MEM_STACK = 1, MC_MEM_HEAP = 2, MC_MEM_GLOBALS = 4, MC_MEM_SHARED = 8 };

/* "LO-HI,LO-HI" (hex with 0x, or decimal; HI excluded; LO below HI; at most MC_RANGES_MAX;
 * "" none) into out[*n]. 0, or -1 with what was expected in err. */
int mc_ranges_parse(const char *text, struct mc_range *out, size_t *n, char *err, size_t errlen);
/* "stack,heap,globals,shared" (any of them, "" none) into a mask of MC_MEM_*. 0, or -1 with
 * what was expected in err. */
int mc_kinds_parse(const char *text, unsigned *kinds, char *err, size_t errlen);
/* Whether [a, a + size) meets one of the n ranges. */
static inline int mc_in_ranges(const struct mc_range *r, size_t n, uintptr_t a, size_t size)
{
    for (size_t i = 0; i < n; i++)
        if (a < r[i].hi && a + (size ? size : 1) > r[i].lo)
            return 1;
    return 0;
}

/* An incremental reader of /proc/self/maps text: feed it bytes as read; it keeps the shared
 * mappings ('s' in the permissions) in out, up to max (the rest are counted in dropped) or,
 * given shared (max flags), every mapping, shared[i] saying whether out[i] is shared. */
struct mc_maps_reader {
    char line[512];
    size_t len;
    struct mc_range *out;
    uint8_t *shared;
    size_t n, max, dropped;
};
void mc_maps_begin(struct mc_maps_reader *r, struct mc_range *out, uint8_t *shared, size_t max);
void mc_maps_feed(struct mc_maps_reader *r, const char *text, size_t len);
void mc_maps_end(struct mc_maps_reader *r);   /* a last line without its newline */

#endif
