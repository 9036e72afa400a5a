/* See loadmap.h. */
#include "loadmap.h"

#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct vigil_loadmap *map = arg;
    if (map->n == map->cap)
        return 1;
    struct vigil_loaded_object *o = &map->o[map->n];
    memset(o, 0, sizeof *o);
    for (int i = 0; i < info->dlpi_phnum && o->nseg < VIGIL_LOADMAP_SEGMENTS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        o->seg[o->nseg].lo = info->dlpi_addr + ph->p_vaddr;
        o->seg[o->nseg].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        o->seg[o->nseg].exec = (ph->p_flags & PF_X) != 0;
        o->nseg++;
    }
    if (!o->nseg)
        return 0;
    o->bias = info->dlpi_addr;
    if (info->dlpi_name && info->dlpi_name[0]) {
        snprintf(o->path, sizeof o->path, "%s", info->dlpi_name);
    } else if (map->n == 0) {   /* the executable itself */
        ssize_t n = readlink("/proc/self/exe", o->path, sizeof o->path - 1);
        o->path[n > 0 ? n : 0] = 0;
    }
    if (!o->path[0] || strncmp(o->path, "linux-vdso", 10) == 0)
        return 0;
    map->n++;
    return 0;
}

void vigil_loadmap_read(struct vigil_loadmap *map)
{
    map->n = 0;
    dl_iterate_phdr(add_object, map);
}

int vigil_loadmap_find(const struct vigil_loadmap *map, uintptr_t addr, int *exec)
{
    for (unsigned i = 0; i < map->n; i++)
        for (unsigned s = 0; s < map->o[i].nseg; s++)
            if (addr >= map->o[i].seg[s].lo && addr < map->o[i].seg[s].hi) {
                if (exec)
                    *exec = map->o[i].seg[s].exec;
                return (int)i;
            }
    return -1;
}
