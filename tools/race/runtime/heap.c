/* Heap objects for the race tool's reports and resets, followed only while threads run: a
 * sharded map from an object's start to its size and allocation stack (each shard an
 * open-addressed table with backward-shift deletion under its own spin lock), and a table of
 * distinct allocation stacks (created by compare-and-swap, never removed).
 *
 * The map keeps the allocator's locality: the objects of one 64 KiB region go to one shard, to
 * consecutive entries from a place that depends on the region (a random hash sent every
 * allocation and free to a cache miss: the map was a fifth of a malloc-heavy program's time).
 *
 * The object that contains an address is looked for only when a race is first seen: objects
 * start at 16-byte boundaries (malloc's alignment), so the starts up to 4 KiB below the
 * address are tried, then the few large objects, which are also kept in a short list. */
#include "raceint.h"

#include <string.h>

#define SHARD_BITS 6
#define SHARDS (1u << SHARD_BITS)
#define SHARD_CAP_BITS 14
#define REGION_SHIFT 16
#define SHARD_CAP (1u << SHARD_CAP_BITS)
#define SMALL_LIMIT 4096
#define LARGE_CAP 1024
#define STACK_BITS 13
#define STACK_CAP (1u << STACK_BITS)
#define STACK_DEPTH 16

struct obj {
    uintptr_t ptr;               /* 0: free */
    uint32_t size;               /* UINT32_MAX: that or more (the large list has it) */
    uint32_t stack;
};
struct big {
    uintptr_t ptr;
    uint64_t size;
    uint32_t stack;
};
struct shard {
    uint32_t lock;
    uint32_t n;
    struct obj *slot;            /* SHARD_CAP entries */
};
static struct shard shards[SHARDS];          /* slots mapped by init; entries under each lock */
static struct big large[LARGE_CAP];          /* objects of more than SMALL_LIMIT bytes, under large_lock */
static unsigned nlarge;                      /* entries of large, under large_lock */
static uint32_t large_lock;                  /* spin lock of large and nlarge */

struct stack_entry {
    uint64_t hash;               /* 0: free */
    uint32_t depth;
    uint32_t ready;              /* frames written (release) */
    uintptr_t pc[STACK_DEPTH];
};
static struct stack_entry *stacks;           /* STACK_CAP entries, mapped by init */

int race_heap_init(void)
{
    struct obj *all = race_map(sizeof(struct obj) * SHARDS * SHARD_CAP);
    stacks = race_map(sizeof(struct stack_entry) * STACK_CAP);
    if (!all || !stacks)
        return -1;
    for (unsigned i = 0; i < SHARDS; i++)
        shards[i].slot = all + (size_t)i * SHARD_CAP;
    return 0;
}

static uint32_t stack_intern(const struct vigil_stack *where)
{
    if (!where || where->depth == 0)
        return 0;
    uint32_t depth = where->depth < race_cfg.depth ? where->depth : race_cfg.depth;
    if (depth > STACK_DEPTH)
        depth = STACK_DEPTH;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ depth;
    for (uint32_t i = 0; i < depth; i++)
        h = race_hash64(h ^ where->pc[i]);
    if (!h)
        h = 1;
    for (uint32_t i = 0; i < 32; i++) {
        uint32_t k = (uint32_t)((h + i) & (STACK_CAP - 1));
        struct stack_entry *e = &stacks[k];
        uint64_t cur = __atomic_load_n(&e->hash, __ATOMIC_ACQUIRE);
        if (cur == h)
            return k + 1;
        if (cur)
            continue;
        if (__atomic_compare_exchange_n(&e->hash, &cur, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            e->depth = depth;
            memcpy(e->pc, where->pc, depth * sizeof e->pc[0]);
            __atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
            return k + 1;
        }
        if (cur == h)
            return k + 1;
    }
    return 0;
}

unsigned race_stack_get(uint32_t id, const uintptr_t **pcs)
{
    if (!stacks || id == 0 || id > STACK_CAP)
        return 0;
    struct stack_entry *e = &stacks[id - 1];
    if (!__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE))
        return 0;
    *pcs = e->pc;
    return e->depth;
}

static inline struct shard *shard_of(uintptr_t ptr, size_t *home)
{
    uint64_t h = race_hash64(ptr >> REGION_SHIFT);
    *home = (size_t)((ptr >> 4) + (h >> SHARD_BITS)) & (SHARD_CAP - 1);
    return &shards[h & (SHARDS - 1)];
}

void race_heap_add(uintptr_t ptr, size_t size, const struct vigil_stack *where)
{
    if (!ptr)
        return;
    uint32_t stack = stack_intern(where);
    size_t i;
    struct shard *s = shard_of(ptr, &i);
    race_spin_lock(&s->lock);
    if (s->n + 1 >= SHARD_CAP * 3 / 4) {
        race_spin_unlock(&s->lock);
        RACE_COUNT(heap_objects_lost, 1);
        return;
    }
    for (;; i = (i + 1) & (SHARD_CAP - 1)) {
        struct obj *o = &s->slot[i];
        if (o->ptr == ptr || o->ptr == 0) {
            if (o->ptr == 0)
                s->n++;
            *o = (struct obj){.ptr = ptr, .size = size < UINT32_MAX ? (uint32_t)size : UINT32_MAX, .stack = stack};
            break;
        }
    }
    race_spin_unlock(&s->lock);
    if (size > SMALL_LIMIT) {
        race_spin_lock(&large_lock);
        if (nlarge < LARGE_CAP)
            large[nlarge++] = (struct big){.ptr = ptr, .size = size, .stack = stack};
        race_spin_unlock(&large_lock);
    }
}

size_t race_heap_remove(uintptr_t ptr)
{
    size_t i, size = 0;
    struct shard *s = shard_of(ptr, &i);
    race_spin_lock(&s->lock);
    for (;; i = (i + 1) & (SHARD_CAP - 1)) {
        struct obj *o = &s->slot[i];
        if (o->ptr == 0)
            break;
        if (o->ptr != ptr)
            continue;
        size = o->size;
        /* backward-shift deletion: move up the entries that the hole would hide */
        size_t hole = i;
        for (size_t j = (i + 1) & (SHARD_CAP - 1);; j = (j + 1) & (SHARD_CAP - 1)) {
            struct obj *e = &s->slot[j];
            if (e->ptr == 0)
                break;
            size_t home;
            shard_of(e->ptr, &home);
            /* e may move to the hole when its home is not in (hole, j] (cyclically) */
            int between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
            if (!between) {
                s->slot[hole] = *e;
                hole = j;
            }
        }
        s->slot[hole] = (struct obj){0};
        s->n--;
        break;
    }
    race_spin_unlock(&s->lock);
    if (size > SMALL_LIMIT) {
        race_spin_lock(&large_lock);
        for (unsigned k = 0; k < nlarge; k++)
            if (large[k].ptr == ptr) {
                size = large[k].size;
                large[k] = large[--nlarge];
                break;
            }
        race_spin_unlock(&large_lock);
    }
    return size;
}

static int lookup(uintptr_t ptr, struct obj *out)
{
    size_t i;
    struct shard *s = shard_of(ptr, &i);
    int found = 0;
    race_spin_lock(&s->lock);
    for (;; i = (i + 1) & (SHARD_CAP - 1)) {
        struct obj *o = &s->slot[i];
        if (o->ptr == 0)
            break;
        if (o->ptr == ptr) {
            *out = *o;
            found = 1;
            break;
        }
    }
    race_spin_unlock(&s->lock);
    return found;
}

int race_heap_find(uintptr_t addr, struct race_object *out)
{
    if (!stacks)
        return -1;
    struct obj o;
    for (uintptr_t p = addr & ~(uintptr_t)15, n = 0; n <= SMALL_LIMIT / 16 && p; p -= 16, n++)
        if (lookup(p, &o) && addr - o.ptr < o.size) {
            *out = (struct race_object){.start = o.ptr, .size = o.size, .stack = o.stack};
            return 0;
        }
    int found = -1;
    race_spin_lock(&large_lock);
    for (unsigned k = 0; k < nlarge; k++)
        if (addr - large[k].ptr < large[k].size) {
            *out = (struct race_object){.start = large[k].ptr, .size = large[k].size, .stack = large[k].stack};
            found = 0;
            break;
        }
    race_spin_unlock(&large_lock);
    return found;
}
