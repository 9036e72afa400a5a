/* Live heap objects, for a tool's runtime part: a map from an object's start to its size and
 * allocation stack, the live object that contains an address, and a table of distinct
 * allocation stacks. Each tool that follows the heap owns one map (the race and memory
 * tools may run together, each adding and removing every object).
 *
 * No allocation on the way: the tables are anonymous memory, mapped by vigil_heapmap_new and,
 * for object starts, a bitmap per MiB of address space mapped when an object first starts in
 * it. Any thread may call any function; each shard of the map has its own spin lock, held for
 * a few probes; the start bitmaps are read and written with atomics. The object that contains
 * an address is the one at the nearest start below it (objects do not overlap), found in the
 * bitmaps up to 1 MiB below, else in a list of the objects larger than that; an address in
 * no MiB where an object starts is answered at once. */
#ifndef VIGIL_HEAPMAP_H
#define VIGIL_HEAPMAP_H
#include <stddef.h>
#include <stdint.h>

#define VIGIL_HEAPMAP_STACK_DEPTH 16
#define VIGIL_HEAPMAP_BELOW 4096   /* how far below an address vigil_heapmap_below looks */

struct vigil_heapmap;
struct vigil_heap_object {
    uintptr_t start;
    size_t size;
    uint32_t stack;              /* vigil_heapmap_stack id; 0: none */
    uint32_t tagged;             /* 1: the owner tagged it (vigil_heapmap_tag), 0: not */
};

/* A new, empty map; stacks are kept to stack_depth frames (at most VIGIL_HEAPMAP_STACK_DEPTH).
 * NULL when the memory cannot be mapped. Never freed: a map lives as long as the process. */
struct vigil_heapmap *vigil_heapmap_new(unsigned stack_depth);
/* Add (or replace) the object at ptr; pcs: its allocation stack, innermost first. 0, or -1
 * when the map has no room (the object is then unknown to it). */
int vigil_heapmap_add(struct vigil_heapmap *m, uintptr_t ptr, size_t size, const uintptr_t *pcs, unsigned depth);
/* Remove the object that starts at ptr: its size, or 0 when it is not known; *out (if not
 * NULL) gets the object when it was known. */
size_t vigil_heapmap_remove(struct vigil_heapmap *m, uintptr_t ptr, struct vigil_heap_object *out);
/* Tag (tagged 1) or untag (0) the object that starts at ptr, which stays in the map: the
 * lookups return it with its tag (a tool keeps a freed block known so, as freed). 0, *out (if
 * not NULL) getting the object as it was before (with its former tag); -1 when ptr is unknown.
 * Adding an object at ptr again clears its tag. */
int vigil_heapmap_tag(struct vigil_heapmap *m, uintptr_t ptr, unsigned tagged, struct vigil_heap_object *out);
/* Intern a stack in the map's table of stacks without an object: its id (vigil_heapmap_stack),
 * 0 when the table is full or depth is 0. */
uint32_t vigil_heapmap_intern(struct vigil_heapmap *m, const uintptr_t *pcs, unsigned depth);
/* The live object that starts at ptr: 0, or -1 when none does. */
int vigil_heapmap_get(struct vigil_heapmap *m, uintptr_t ptr, struct vigil_heap_object *out);
/* The live object that contains addr: 0, or -1 when none is known. */
int vigil_heapmap_find(struct vigil_heapmap *m, uintptr_t addr, struct vigil_heap_object *out);
/* The live object with the greatest start at or below addr, up to 4 KiB below it (whether or
 * not it contains addr): 0, or -1 when none is known. */
int vigil_heapmap_below(struct vigil_heapmap *m, uintptr_t addr, struct vigil_heap_object *out);
/* An allocation stack by id: its frames (innermost first) and their number; 0 when unknown. */
unsigned vigil_heapmap_stack(struct vigil_heapmap *m, uint32_t id, const uintptr_t **pcs);
/* Whether addr lies between the lowest start and the highest end (plus 64 bytes) of every
 * object the map was ever given: outside it (a global, the main thread's stack) no object,
 * live or freed, is. */
int vigil_heapmap_spans(const struct vigil_heapmap *m, uintptr_t addr);
/* How many objects the map had no room for. */
uint64_t vigil_heapmap_lost(const struct vigil_heapmap *m);
/* In a fork child, before its first use there (the owner's VIGIL_THREAD_FORK_CHILD): free
 * every lock of the map, which a thread of the parent that the child does not have may have
 * held at the fork. */
void vigil_heapmap_after_fork(struct vigil_heapmap *m);

#endif
