/* Allocation sites of the leak tool: each distinct stack of return addresses gets a small index,
 * stored in every object record. Lookup is lock-free (open addressing over published indices);
 * a new site is filled completely before its index is published with a CAS. */
#include "leak.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>

#define SITE_SLOTS_LOG 17
#define SITE_SLOTS (1u << SITE_SLOTS_LOG)
/* Two levels in one slot array, so that a program with a few hundred sites touches a few pages
 * of it rather than one page per site: a site first probes a window of NEAR_WINDOW slots in the
 * first NEAR_SLOTS (16 KiB), and only when that whole window is taken goes on to the rest of the
 * array. Slots are never emptied, so a window once full stays full and every thread looking for
 * the same stack follows the same path. */
#define NEAR_SLOTS 4096u
#define NEAR_WINDOW 32u
#define MAX_SITES LEAK_MAX_SITES

/* Written once by leak_sites_init; the entries and slots themselves are updated atomically. */
struct leak_site *leak_site_entries;    /* LEAK_MAX_SITES entries, touched as they are used */
#define site_entries leak_site_entries
static _Atomic uint32_t *site_slots;    /* 0 = empty, else entry index */
static _Atomic uint32_t site_count = 1; /* entry 0 is LEAK_SITE_UNKNOWN */

/* The dynamic loader's code, [lo, hi): what it allocates (a thread's DTV, dlopen's and dynamic
 * TLS's bookkeeping) is held from memory no root scan reads (a cached thread stack's TCB), so
 * such objects are never reported, and the reachability scan starts from them, as LeakSanitizer
 * does. Written once by leak_sites_init. */
static uintptr_t loader_lo, loader_hi;

static int find_loader(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (info->dlpi_addr != *(uintptr_t *)arg)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (!loader_hi || lo < loader_lo) loader_lo = lo;
        if (hi > loader_hi) loader_hi = hi;
    }
    return 1;
}

int leak_sites_init(void)
{
    uintptr_t base = (uintptr_t)getauxval(AT_BASE);   /* 0: linked statically, no loader */
    if (base)
        dl_iterate_phdr(find_loader, &base);
    site_entries = heap_map(sizeof(struct leak_site) * MAX_SITES);
    site_slots = heap_map(sizeof(uint32_t) * SITE_SLOTS);
    return site_entries && site_slots ? 0 : -1;
}

uint64_t leak_sites_mapped_bytes(void)
{
    return sizeof(struct leak_site) * (uint64_t)MAX_SITES + sizeof(uint32_t) * (uint64_t)SITE_SLOTS;
}

static uint64_t stack_hash(const uintptr_t *pc, uint32_t depth)
{
    uint64_t h = 0xcbf29ce484222325ull ^ depth;
    for (uint32_t i = 0; i < depth; i++) {
        h ^= pc[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

__thread struct leak_recent_site leak_recent_sites[1u << LEAK_RECENT_BITS];   /* leak.h */

static uint32_t intern_in_table(const struct vigil_stack *st, uint32_t depth);

/* A stack the thread's recent entry did not hold (leak_site_intern): the table, and the entry
 * takes it. */
uint32_t leak_site_intern_slow(const struct vigil_stack *st, uint32_t depth)
{
    if (!site_entries || !st || st->depth == 0)
        return LEAK_SITE_UNKNOWN;
    if (depth > st->depth)
        depth = st->depth;
    if (depth > VIGIL_MAX_STACK)
        depth = VIGIL_MAX_STACK;
    if (depth > LEAK_RECENT_DEPTH)
        return intern_in_table(st, depth);
    uint32_t idx = intern_in_table(st, depth);
    if (idx != LEAK_SITE_UNKNOWN) {
        struct leak_recent_site *r = leak_recent_of(st->pc, depth);
        memcpy(r->pc, st->pc, depth * sizeof(uintptr_t));
        r->depth = depth;
        r->idx = idx;
    }
    return idx;
}

static uint32_t intern_in_table(const struct vigil_stack *st, uint32_t depth)
{
    uint64_t h = stack_hash(st->pc, depth);
    uint32_t reserved = 0;   /* an entry we filled but could not publish yet */
    for (uint32_t probe = 0; probe < NEAR_WINDOW + (SITE_SLOTS - NEAR_SLOTS); probe++) {
        uint32_t pos = probe < NEAR_WINDOW ? (uint32_t)((h + probe) & (NEAR_SLOTS - 1))
                                           : NEAR_SLOTS + (uint32_t)((h + probe - NEAR_WINDOW) % (SITE_SLOTS - NEAR_SLOTS));
        _Atomic uint32_t *slot = &site_slots[pos];
        uint32_t idx = atomic_load_explicit(slot, memory_order_acquire);
        if (idx == 0) {
            if (!reserved) {
                reserved = atomic_fetch_add_explicit(&site_count, 1, memory_order_relaxed);
                if (reserved >= MAX_SITES)
                    return LEAK_SITE_UNKNOWN;
                struct leak_site *e = &site_entries[reserved];
                e->hash = h;
                e->depth = depth;
                e->from_loader = st->pc[0] - loader_lo < loader_hi - loader_lo;
                memcpy(e->pc, st->pc, depth * sizeof(uintptr_t));
            }
            uint32_t expected = 0;
            if (atomic_compare_exchange_strong_explicit(slot, &expected, reserved,
                                                        memory_order_release, memory_order_acquire))
                return reserved;
            idx = expected;   /* another thread published here first: compare with theirs */
        }
        struct leak_site *e = &site_entries[idx];
        if (e->hash == h && e->depth == depth && memcmp(e->pc, st->pc, depth * sizeof(uintptr_t)) == 0)
            return idx;       /* a reserved entry of ours, if any, stays unused (no allocs) */
    }
    return LEAK_SITE_UNKNOWN;
}

uint32_t leak_site_count(void)
{
    uint32_t n = atomic_load_explicit(&site_count, memory_order_acquire);
    return n > MAX_SITES ? MAX_SITES : n;
}
