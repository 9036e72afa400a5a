/* One line of /proc/self/maps, as the leak tool's exit scan reads it (reach.c): a pure parser,
 * unit-tested and fuzzed on its own. */
#ifndef VIGIL_LEAK_MAPS_H
#define VIGIL_LEAK_MAPS_H
#include <stdint.h>

/* line: "lo-hi perms offset dev inode [path]" (NUL-terminated, without its newline). 1 and
 * [*lo, *hi) when it is a mapping the scan may read: readable, lo < hi, and not [vvar] or
 * [vsyscall] (kernel pages whose reads may fault); 0 otherwise, and for a line that does not
 * parse (lo and hi: lowercase or uppercase hex digits, at most 16 each). */
int leak_maps_line(const char *line, uintptr_t *lo, uintptr_t *hi);

#endif
