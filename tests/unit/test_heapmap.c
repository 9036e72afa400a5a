/* Live heap objects (common/heapmap.c): add, replace, remove, the object at a start, the one
 * that contains an address (small: the starts below it; large: the list), the nearest below,
 * allocation stacks interned once, two maps kept apart, and addresses far from any object. */
#include "check.h"
#include "heapmap.h"

#include <stdlib.h>
#include <string.h>

int main(void)
{
    struct vigil_heapmap *m = vigil_heapmap_new(4), *other = vigil_heapmap_new(4);
    CHECK(m && other, "maps made");
    if (!m || !other)
        return CHECK_DONE("test_heapmap");
    char *arena = aligned_alloc(4096, 1 << 20);   /* addresses to name, never touched */
    uintptr_t base = (uintptr_t)arena;
    uintptr_t pcs[6] = {0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000};
    struct vigil_heap_object o;

    CHECK(vigil_heapmap_add(m, base + 64, 40, pcs, 6) == 0, "add");
    CHECK(vigil_heapmap_get(m, base + 64, &o) == 0 && o.start == base + 64 && o.size == 40, "get at the start");
    CHECK(vigil_heapmap_get(m, base + 80, &o) == -1, "get inside is not a start");
    CHECK(vigil_heapmap_find(m, base + 64 + 39, &o) == 0 && o.start == base + 64, "find the last byte");
    CHECK(vigil_heapmap_find(m, base + 64 + 40, &o) == -1, "one past the end is in no object");
    CHECK(vigil_heapmap_below(m, base + 64 + 40, &o) == 0 && o.start == base + 64, "below: the object that ends there");
    CHECK(vigil_heapmap_find(other, base + 64, &o) == -1, "another map does not see it");
    const uintptr_t *got;
    unsigned depth = vigil_heapmap_stack(m, o.stack, &got);
    CHECK(depth == 4 && got[0] == 0x1000 && got[3] == 0x4000, "stack kept to 4 frames (%u)", depth);
    CHECK(vigil_heapmap_add(m, base + 256, 8, pcs, 6) == 0 && vigil_heapmap_get(m, base + 256, &o) == 0, "second object");
    uint32_t first = o.stack;
    CHECK(vigil_heapmap_get(m, base + 64, &o) == 0 && o.stack == first, "the same stack interned once");
    CHECK(vigil_heapmap_add(m, base + 64, 48, NULL, 0) == 0 && vigil_heapmap_get(m, base + 64, &o) == 0 &&
              o.size == 48 && o.stack == 0, "replace");
    struct vigil_heap_object removed;
    CHECK(vigil_heapmap_remove(m, base + 64, &removed) == 48 && removed.start == base + 64 && removed.size == 48, "remove");
    CHECK(vigil_heapmap_remove(m, base + 64, NULL) == 0 && vigil_heapmap_get(m, base + 64, &o) == -1, "removed once");
    CHECK(vigil_heapmap_find(m, base + 256, &o) == 0, "the other object stays");

    /* tags: an object tagged stays found, with its tag and stack, until removed or added again */
    CHECK(vigil_heapmap_add(m, base + 512, 40, pcs, 6) == 0, "tag: add");
    struct vigil_heap_object was;
    CHECK(vigil_heapmap_tag(m, base + 512, 1, &was) == 0 && !was.tagged && was.size == 40 && was.stack == first,
          "tag: the object as it was, untagged");
    CHECK(vigil_heapmap_find(m, base + 512 + 30, &o) == 0 && o.tagged && o.size == 40 && o.stack == first,
          "tag: found tagged from inside, its stack kept");
    CHECK(vigil_heapmap_tag(m, base + 512, 1, &was) == 0 && was.tagged, "tag: tagged again says it was");
    CHECK(vigil_heapmap_tag(m, base + 520, 1, NULL) == -1, "tag: not an object's start");
    CHECK(vigil_heapmap_tag(m, base + 512, 0, NULL) == 0 && vigil_heapmap_get(m, base + 512, &o) == 0 && !o.tagged,
          "tag: untagged");
    vigil_heapmap_tag(m, base + 512, 1, NULL);
    CHECK(vigil_heapmap_add(m, base + 512, 24, NULL, 0) == 0 && vigil_heapmap_get(m, base + 512, &o) == 0 &&
              !o.tagged && o.size == 24, "tag: cleared by adding the object again");
    vigil_heapmap_tag(m, base + 512, 1, NULL);
    CHECK(vigil_heapmap_remove(m, base + 512, &removed) == 24 && removed.tagged, "tag: remove says it was tagged");
    uint32_t id = vigil_heapmap_intern(m, pcs + 1, 3);
    CHECK(id && vigil_heapmap_stack(m, id, &got) == 3 && got[0] == pcs[1], "intern: a stack without an object");
    CHECK(vigil_heapmap_add(m, base + 8192, 300000, pcs, 2) == 0 && vigil_heapmap_tag(m, base + 8192, 1, &was) == 0 &&
              was.size == 300000 && vigil_heapmap_find(m, base + 8192 + 250000, &o) == 0 && o.tagged,
          "tag: a large object, found tagged far inside");
    CHECK(vigil_heapmap_tag(m, base + 8192, 0, NULL) == 0 && vigil_heapmap_find(m, base + 8192 + 250000, &o) == 0 &&
              !o.tagged, "tag: a large object untagged");
    vigil_heapmap_remove(m, base + 8192, NULL);

    /* large objects: found far from their start */
    CHECK(vigil_heapmap_add(m, base + 8192, 300000, pcs, 2) == 0, "large");
    CHECK(vigil_heapmap_find(m, base + 8192 + 250000, &o) == 0 && o.start == base + 8192 && o.size == 300000,
          "large found 250000 bytes in");
    CHECK(vigil_heapmap_get(m, base + 8192, &o) == 0 && o.size == 300000, "large by its start: its whole size");
    CHECK(vigil_heapmap_remove(m, base + 8192, NULL) == 300000 &&
              vigil_heapmap_find(m, base + 8192 + 250000, &o) == -1, "large removed");

    /* more than a thousand objects over 4 KiB: every one found from deep inside it (a list
     * of large objects capped at 1,024 once lost the others, and memcheck then took reads
     * through sqlite3's page pointers for uses after free) */
    char *big_arena = aligned_alloc(4096, 1100 * 5008 + 4096);
    uintptr_t big = (uintptr_t)big_arena;
    for (int i = 0; i < 1100; i++)
        vigil_heapmap_add(m, big + 5008 * (uintptr_t)i, 5000, NULL, 0);
    int deep = 1;
    for (int i = 0; i < 1100; i++)
        deep &= vigil_heapmap_find(m, big + 5008 * (uintptr_t)i + 4500, &o) == 0 && o.start == big + 5008 * (uintptr_t)i;
    CHECK(deep, "1100 objects of 5000 bytes, each found 4500 bytes in");
    CHECK(vigil_heapmap_find(m, big + 5008 * 7 + 5002, &o) == -1, "the gap between two of them is in neither");
    for (int i = 0; i < 1100; i++)
        vigil_heapmap_remove(m, big + 5008 * (uintptr_t)i, NULL);
    /* over 1 MiB: found through the list of large objects, 3 MiB in */
    char *huge = aligned_alloc(4096, 8 << 20);
    CHECK(vigil_heapmap_add(m, (uintptr_t)huge + 4096, 6 << 20, NULL, 0) == 0 &&
              vigil_heapmap_find(m, (uintptr_t)huge + 4096 + (3 << 20), &o) == 0 && o.size == 6u << 20,
          "a 6 MiB object found 3 MiB in");
    vigil_heapmap_add(m, (uintptr_t)huge + 4096 + (6 << 20) + 64, 100, NULL, 0);
    CHECK(vigil_heapmap_find(m, (uintptr_t)huge + 4096 + (6 << 20) + 100, &o) == 0 && o.size == 100,
          "a small object just after it");
    CHECK(vigil_heapmap_find(m, (uintptr_t)huge + 4096 + (6 << 20) + 8, &o) == -1, "between them: neither");
    vigil_heapmap_remove(m, (uintptr_t)huge + 4096, NULL);
    CHECK(vigil_heapmap_find(m, (uintptr_t)huge + 4096 + (3 << 20), &o) == -1, "removed: gone");
    free(huge);
    free(big_arena);

    /* many objects in one region: backward-shift deletion keeps the others reachable */
    for (int i = 0; i < 2000; i++)
        vigil_heapmap_add(m, base + 16384 + 32 * (uintptr_t)i, 24, NULL, 0);
    for (int i = 0; i < 2000; i += 2)
        vigil_heapmap_remove(m, base + 16384 + 32 * (uintptr_t)i, NULL);
    int all = 1;
    for (int i = 0; i < 2000; i++) {
        int found = vigil_heapmap_find(m, base + 16384 + 32 * (uintptr_t)i + 5, &o) == 0;
        all &= (i % 2) ? found && o.start == base + 16384 + 32 * (uintptr_t)i : !found;
    }
    CHECK(all, "1000 of 2000 objects removed, the others found");

    /* objects of 256 bytes and more have a table of their own (a home per 256): mixed with small
     * ones in one region, replaced by an object of the other size at the same start, removed
     * with others of their table around them */
    uintptr_t mixed = base + 131072;
    for (int i = 0; i < 40; i++) {   /* 2048, 4104, ... bytes, each followed by a 32-byte one */
        uintptr_t at = mixed + 8192 * (uintptr_t)i;
        vigil_heapmap_add(m, at, i % 2 ? 4104 : 2048, pcs, 2);
        vigil_heapmap_add(m, at + 4176, 32, NULL, 0);
    }
    int mixed_ok = vigil_heapmap_get(m, mixed, &o) == 0 && o.stack != 0;
    uint32_t two_frames = o.stack;
    for (int i = 0; i < 40; i++) {
        uintptr_t at = mixed + 8192 * (uintptr_t)i;
        size_t size = i % 2 ? 4104 : 2048;
        mixed_ok &= vigil_heapmap_find(m, at + size - 1, &o) == 0 && o.start == at && o.size == size && o.stack == two_frames;
        mixed_ok &= vigil_heapmap_find(m, at + 4176 + 31, &o) == 0 && o.start == at + 4176 && o.size == 32;
        mixed_ok &= vigil_heapmap_find(m, at + size, &o) == -1;
    }
    CHECK(mixed_ok, "40 objects of 2048 and 4104 bytes and 40 of 32 in one region, each found by its last byte");
    CHECK(vigil_heapmap_add(m, mixed, 100, NULL, 0) == 0 && vigil_heapmap_get(m, mixed, &o) == 0 && o.size == 100 &&
              vigil_heapmap_find(m, mixed + 200, &o) == -1, "a 2048-byte object replaced by a 100-byte one");
    CHECK(vigil_heapmap_add(m, mixed + 208, 256, NULL, 0) == 0 && vigil_heapmap_find(m, mixed + 208 + 255, &o) == 0 &&
              o.start == mixed + 208 && vigil_heapmap_find(m, mixed + 99, &o) == 0 && o.start == mixed &&
              vigil_heapmap_remove(m, mixed + 208, NULL) == 256, "a 256-byte object 208 bytes after it, the 100-byte one found");
    CHECK(vigil_heapmap_add(m, mixed, 3000, NULL, 0) == 0 && vigil_heapmap_get(m, mixed, &o) == 0 && o.size == 3000 &&
              vigil_heapmap_remove(m, mixed, NULL) == 3000 && vigil_heapmap_get(m, mixed, &o) == -1,
          "and by a 3000-byte one again, removed once");
    CHECK(vigil_heapmap_tag(m, mixed + 8192, 1, &was) == 0 && was.size == 4104 && vigil_heapmap_find(m, mixed + 8192 + 4000, &o) == 0 &&
              o.tagged, "a 4104-byte object tagged");
    for (int i = 1; i < 40; i += 2)
        vigil_heapmap_remove(m, mixed + 8192 * (uintptr_t)i, NULL);
    mixed_ok = 1;
    for (int i = 1; i < 40; i++) {
        uintptr_t at = mixed + 8192 * (uintptr_t)i;
        int found = vigil_heapmap_find(m, at + 2000, &o) == 0;
        mixed_ok &= i % 2 ? !found : found && o.start == at;
        mixed_ok &= vigil_heapmap_get(m, at + 4176, &o) == 0;
    }
    CHECK(mixed_ok, "every other large one removed: the rest, and the small ones, found");
    for (int i = 0; i < 40; i++) {
        vigil_heapmap_remove(m, mixed + 8192 * (uintptr_t)i, NULL);
        vigil_heapmap_remove(m, mixed + 8192 * (uintptr_t)i + 4176, NULL);
    }

    /* an address in a MiB that never held an object */
    int stack_var;
    CHECK(vigil_heapmap_find(m, (uintptr_t)&stack_var, &o) == -1 &&
              vigil_heapmap_below(m, (uintptr_t)&stack_var, &o) == -1, "the stack is in no object");
    CHECK(vigil_heapmap_lost(m) == 0, "nothing lost");
    free(arena);
    return CHECK_DONE("test_heapmap");
}
