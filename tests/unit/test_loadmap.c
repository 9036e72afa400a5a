/* common/loadmap: the objects loaded in this test process, and which one holds an address. */
#include "check.h"
#include "loadmap.h"

#include <stdlib.h>
#include <string.h>

static int data_here = 7;

int main(void)
{
    static struct vigil_loaded_object objects[64];
    struct vigil_loadmap map = {objects, 0, 64};
    vigil_loadmap_read(&map);
    CHECK(map.n >= 2, "%u objects: the executable and libc at least", map.n);
    CHECK(strstr(map.o[0].path, "test_loadmap") != NULL, "the executable first: %s", map.o[0].path);
    int exec = 0;
    CHECK(vigil_loadmap_find(&map, (uintptr_t)&main, &exec) == 0 && exec, "main is in the executable's code");
    exec = 1;
    CHECK(vigil_loadmap_find(&map, (uintptr_t)&data_here, &exec) == 0 && !exec, "a global is in its data");
    int m = vigil_loadmap_find(&map, (uintptr_t)&malloc, &exec);
    CHECK(m > 0 && exec && strstr(map.o[m].path, "libc") != NULL, "malloc is in libc's code: %d %s", m,
          m >= 0 ? map.o[m].path : "");
    CHECK(vigil_loadmap_find(&map, 16, NULL) == -1, "page 0 is in no object");
    struct vigil_loadmap one = {objects, 0, 1};
    vigil_loadmap_read(&one);
    CHECK(one.n == 1, "at most cap objects: %u", one.n);
    return CHECK_DONE("test_loadmap");
}
