/* See stacktable.h. */
#include "stacktable.h"

#include <string.h>

static size_t slot_count(uint32_t max_stacks)
{
    size_t n = 16;
    while (n < 2 * (size_t)max_stacks)   /* at most half full: probes stay short and end */
        n <<= 1;
    return n;
}

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

size_t hs_table_bytes(uint32_t max_stacks, uint32_t depth)
{
    return slot_count(max_stacks) * sizeof(struct hs_slot) + (size_t)max_stacks * depth * sizeof(uintptr_t) +
           (size_t)max_stacks * sizeof(uint64_t) + align8(max_stacks);
}

void hs_table_init(struct hs_table *t, void *mem, uint32_t max_stacks, uint32_t depth)
{
    char *p = mem;
    size_t nslots = slot_count(max_stacks);
    memset(t, 0, sizeof *t);
    t->slots = (struct hs_slot *)p;
    p += nslots * sizeof(struct hs_slot);
    t->frames = (uintptr_t *)p;
    p += (size_t)max_stacks * depth * sizeof(uintptr_t);
    t->counts = (uint64_t *)p;
    p += (size_t)max_stacks * sizeof(uint64_t);
    t->depths = (uint8_t *)p;
    t->mask = nslots - 1;
    t->max_stacks = max_stacks;
    t->depth = depth;
}

static uint64_t hash_stack(const uintptr_t *pcs, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h ^= (uint64_t)pcs[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h ? h : 1;
}

static int same_stack(const struct hs_table *t, uint32_t id, const uintptr_t *pcs, uint32_t n)
{
    if (__atomic_load_n(&t->depths[id], __ATOMIC_ACQUIRE) != n)
        return 0;
    const uintptr_t *f = &t->frames[(size_t)id * t->depth];
    for (uint32_t i = 0; i < n; i++)
        if (f[i] != pcs[i])
            return 0;
    return 1;
}

#define DEAD_ID1 0xffffffffu   /* a slot claimed when no id was left: skipped by lookups */

uint32_t hs_table_add(struct hs_table *t, const uintptr_t *pcs, uint32_t n, uint64_t weight)
{
    if (n > t->depth)
        n = t->depth;
    if (n == 0)
        return HS_NO_STACK;
    uint64_t key = hash_stack(pcs, n);
    for (size_t i = 0; i <= t->mask; i++) {
        struct hs_slot *s = &t->slots[(key + i) & t->mask];
        uint64_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
        if (k == 0) {
            if (__atomic_load_n(&t->nstacks, __ATOMIC_RELAXED) >= t->max_stacks) {
                __atomic_add_fetch(&t->dropped_full, weight, __ATOMIC_RELAXED);
                return HS_NO_STACK;
            }
            if (__atomic_compare_exchange_n(&s->key, &k, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                uint32_t id = __atomic_fetch_add(&t->nstacks, 1, __ATOMIC_RELAXED);
                if (id >= t->max_stacks) {
                    __atomic_store_n(&s->id1, DEAD_ID1, __ATOMIC_RELEASE);
                    __atomic_add_fetch(&t->dropped_full, weight, __ATOMIC_RELAXED);
                    return HS_NO_STACK;
                }
                memcpy(&t->frames[(size_t)id * t->depth], pcs, n * sizeof *pcs);
                __atomic_store_n(&t->counts[id], weight, __ATOMIC_RELAXED);
                __atomic_store_n(&t->depths[id], (uint8_t)n, __ATOMIC_RELEASE);
                __atomic_store_n(&s->id1, id + 1, __ATOMIC_RELEASE);
                return id;
            }
            /* another thread took the slot first: k is its key, go on as for a used slot */
        }
        if (k != key)
            continue;
        uint32_t id1 = __atomic_load_n(&s->id1, __ATOMIC_ACQUIRE);
        if (id1 == 0) {   /* its frames are being written: maybe this very stack */
            __atomic_add_fetch(&t->dropped_busy, weight, __ATOMIC_RELAXED);
            return HS_NO_STACK;
        }
        if (id1 == DEAD_ID1 || !same_stack(t, id1 - 1, pcs, n))
            continue;   /* a dead slot, or another stack of the same hash */
        __atomic_add_fetch(&t->counts[id1 - 1], weight, __ATOMIC_RELAXED);
        return id1 - 1;
    }
    __atomic_add_fetch(&t->dropped_full, weight, __ATOMIC_RELAXED);
    return HS_NO_STACK;
}

uint32_t hs_table_get(const struct hs_table *t, uint32_t id, const uintptr_t **pcs, uint64_t *count)
{
    if (id >= t->max_stacks)
        return 0;
    uint32_t n = __atomic_load_n(&t->depths[id], __ATOMIC_ACQUIRE);
    if (n) {
        *pcs = &t->frames[(size_t)id * t->depth];
        *count = __atomic_load_n(&t->counts[id], __ATOMIC_RELAXED);
    }
    return n;
}

uint32_t hs_table_size(const struct hs_table *t)
{
    uint32_t n = __atomic_load_n(&t->nstacks, __ATOMIC_ACQUIRE);
    return n < t->max_stacks ? n : t->max_stacks;
}

void hs_table_reset(struct hs_table *t)
{
    memset(t->slots, 0, (t->mask + 1) * sizeof *t->slots);
    memset(t->depths, 0, t->max_stacks);
    t->nstacks = 0;
    t->dropped_full = t->dropped_busy = 0;
}
