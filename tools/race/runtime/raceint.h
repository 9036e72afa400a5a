/* The race tool's runtime part, shared between its files (race.c: hooks, threads, locks and
 * clocks; shadow.c: the cells; report.c: race pairs and race.json; heap objects through
 * common/heapmap). Only include/vigil/tool.h, common/ and this folder. */
#ifndef RACE_INT_H
#define RACE_INT_H
#include <stdint.h>
#include <stddef.h>

#include "heapmap.h"
#include "vigil/tool.h"
#include "racecore.h"

#define RACE_HIDDEN __attribute__((visibility("hidden")))

extern struct vigil_tool race_tool RACE_HIDDEN;

/* From the options, by init; read-only afterwards. */
struct race_config {
    unsigned granule_shift;      /* log2 of the granule (3 to 6) */
    unsigned history;            /* records per cell */
    unsigned table_bits;
    unsigned max_reports;
    int hb, hb_locks, hb_sync, heap, print;
    int ompt;                    /* follow OpenMP through OMPT (ompt.c) */
    unsigned depth;
};
extern struct race_config race_cfg RACE_HIDDEN;

/* Set by the first thread creation (in the creating thread, before the new thread exists);
 * cleared in a forked child. While 0 the hooks return at once. */
extern int race_multi RACE_HIDDEN;

/* Tallies, relaxed atomics; read by the report. */
struct race_stats {
    uint64_t accesses;           /* sampled accesses seen while threads ran */
    uint64_t checked;            /* cell steps */
    uint64_t stack_skipped;      /* accesses to the thread's own stack with no cell */
    uint64_t evicted;            /* cells taken over for other locations (the table was full there) */
    uint64_t stale_skipped;      /* accesses of a window begun before their cell's reset */
    uint64_t cells;              /* cells in use */
    uint64_t races;              /* racing accesses (all pairs) */
    uint64_t pairs_dropped;      /* racing accesses of pairs beyond max_reports */
    uint64_t benign;             /* racing accesses in ranges marked benign */
    uint64_t threads;            /* threads numbered */
    uint64_t noslot_threads;     /* threads that found no clock slot (lockset only) */
    uint64_t max_live;           /* most threads with a slot at once */
    uint64_t locks;              /* distinct locks */
    uint64_t locks_untracked;    /* lock events of locks beyond the table */
    uint64_t resets;             /* cells reset by allocation and free */
    uint64_t atomic_accesses;    /* sampled accesses of atomic instructions (in accesses too) */
    uint64_t sync_events;        /* synchronization events (on_sync) while threads ran */
    uint64_t sync_objects;       /* distinct objects they named */
    uint64_t sync_untracked;     /* events of objects beyond the table (one object for all) */
    uint64_t filtered;           /* cell steps skipped: the thread's recent step covered them */
};
extern struct race_stats race_stats RACE_HIDDEN;
#define RACE_COUNT(field, n) __atomic_fetch_add(&race_stats.field, (n), __ATOMIC_RELAXED)
/* The access path's tallies, per thread: a shared counter bumped on every access bounced its
 * cache line between the cores. race_flush_tally adds them to race_stats (race.c: with the
 * thread's other tallies, every few thousand accesses, at its exit and at the report). */
struct race_tally {
    uint64_t checked, stack_skipped, stale_skipped, evicted, cells, filtered;
};
extern __thread struct race_tally race_tally RACE_HIDDEN;
#define RACE_TALLY(field, n) (race_tally.field += (n))
void race_flush_tally(void) RACE_HIDDEN;

/* ---- spin locks (rare contention: a cell, a lock's clock, a heap shard) ----
 * A holder may be preempted (more threads than CPUs): after a short spin, yield. */
int sched_yield(void);
static inline void race_spin_lock(uint32_t *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
        unsigned spins = 0;
        while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
            if (++spins < 64)
                __builtin_ia32_pause();
            else
                sched_yield();
        }
    }
}
static inline void race_spin_unlock(uint32_t *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static inline uint64_t race_hash64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

void *race_map(size_t bytes) RACE_HIDDEN;   /* zeroed anonymous memory, or NULL */

/* ---- shadow.c: cells ---- */
int race_shadow_init(void) RACE_HIDDEN;
/* The cell of granule g (address >> granule_shift), locked, and its index; made when create is
 * set (taking another location's cell over if need be); NULL when it does not exist. */
struct race_cell *race_shadow_lock(uint64_t g, int create, uint32_t *index) RACE_HIDDEN;
/* Cell index of granule g left the virgin state (call under its lock). */
void race_shadow_note_used(uint32_t index, uint64_t g) RACE_HIDDEN;
/* Every cell of [addr, addr + size) back to virgin; a reset cell takes the next generation.
 * Accesses arrive late: a thread's batch may hold accesses to a block that another thread
 * freed and a third allocated again since. A batch whose window began before a cell's reset
 * (its generation then was older) skips that cell: what it holds may be the block's past. */
extern uint32_t race_reset_gen RACE_HIDDEN;
void race_shadow_reset(uintptr_t addr, size_t size) RACE_HIDDEN;
/* Forget every cell (a forked child). */
void race_shadow_clear(void) RACE_HIDDEN;

/* ---- heap objects and allocation stacks (common/heapmap.h) ---- */
extern struct vigil_heapmap *race_heap RACE_HIDDEN;   /* made by init when race.heap=1 */

/* ---- race.c: locks ---- */
/* A lock's address by id (0 when unknown). */
uintptr_t race_lock_address(uint16_t id) RACE_HIDDEN;

/* The tool is enabled (its init succeeded). */
int race_is_enabled(void) RACE_HIDDEN;
/* A lock event, or a synchronization event on object (release: the thread's clock goes into
 * the object's; else the object's into the thread's, under race.hb_sync), from one of the
 * tool's own entry points: the thread's buffered accesses are delivered first. */
void race_lock_exact(const void *lock, enum vigil_lock_op op) RACE_HIDDEN;
void race_sync_exact(const void *object, int release) RACE_HIDDEN;

/* ---- ompt.c: OpenMP ---- */
/* From init: one message when the program runs on GCC's libgomp (no OMPT). */
void race_ompt_check(void) RACE_HIDDEN;
/* From fini: one message when libomp ran threads but never started the OMPT part. */
void race_ompt_fini_check(void) RACE_HIDDEN;

/* ---- report.c: pairs and race.json ---- */
struct race_side {
    uint32_t site, tid;
    uint8_t write, slot, atomic;
    race_lockset held;
};
/* A race between the earlier access first and the current access second on addr (the cell's
 * address + the first byte both touched). Counted; kept once per pair of sites. */
void race_report(uintptr_t addr, const struct race_side *first, const struct race_side *second) RACE_HIDDEN;
/* Whether addr lies in a range the program marked benign (vigil_race_benign). */
int race_benign(uintptr_t addr) RACE_HIDDEN;
void race_benign_add(uintptr_t addr, size_t size) RACE_HIDDEN;
int race_report_init(void) RACE_HIDDEN;
void race_report_write(void) RACE_HIDDEN;
void race_report_clear(void) RACE_HIDDEN;

#endif
