/* The objects loaded in this process (executable, shared libraries), as a report writer maps
 * its addresses to files: each object's path, load bias and loaded segments. Used by tools'
 * runtime parts at exit (dl_iterate_phdr: no allocation; the caller gives the storage). */
#ifndef VIGIL_LOADMAP_H
#define VIGIL_LOADMAP_H
#include <stdint.h>

#define VIGIL_LOADMAP_SEGMENTS 8

struct vigil_loaded_object {
    char path[512];
    uintptr_t bias;              /* load bias: runtime address - link-time address */
    unsigned nseg;
    struct { uintptr_t lo, hi; int exec; } seg[VIGIL_LOADMAP_SEGMENTS];
};

struct vigil_loadmap {
    struct vigil_loaded_object *o;   /* cap entries, the caller's */
    unsigned n, cap;
};

/* The objects loaded now, the executable first (vDSO and unnamed objects left out), at most
 * map->cap of them. */
void vigil_loadmap_read(struct vigil_loadmap *map);
/* The index of the object whose loaded segments hold addr, or -1; *exec (if not NULL): the
 * segment is executable. */
int vigil_loadmap_find(const struct vigil_loadmap *map, uintptr_t addr, int *exec);

#endif
