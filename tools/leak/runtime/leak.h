/* Shared by the files of the leak tool (tools/leak/). The tool sees the program only through
 * include/vigil/tool.h; see leak.c for the event hooks and the options. */
#ifndef VIGIL_LEAK_H
#define VIGIL_LEAK_H
#include <vigil/tool.h>

#include <stdatomic.h>
#include <stdint.h>

#include "heap.h"

/* Options ("leak.<key>=value" in VIGIL_OPTIONS), read once by init. */
struct leak_config {
    double stale_after_s;        /* stale_after: idle seconds before an object is stale */
    uint32_t stale_after_ms;
    uint64_t stale_allocs;       /* stale_allocs: > 0 measures idleness in allocations instead */
    double gap_factor;           /* gap_factor: idle must also exceed this x the longest gap seen */
    uint32_t snapshot_every_ms;  /* snapshot_every (seconds): 0 = only on demand and at exit */
    uint32_t depth;              /* depth: allocation stack frames kept (1..VIGIL_MAX_STACK) */
    int reach;                   /* reach: reachability scan at exit */
    int use_signal;              /* signal: SIGUSR2 requests a snapshot */
    int active_clock;            /* clock=active: time counts only while the process runs */
};
extern struct leak_config leak_cfg;     /* written by init only */
extern struct vigil_tool leak_tool;

/* The tool's clocks: milliseconds since init (coarse monotonic wall time, or active time with
 * clock=active), and allocations so far. */
uint32_t leak_now_ms(void);
extern _Atomic uint64_t leak_alloc_clock __attribute__((visibility("hidden")));   /* read on every sampled access */
/* Sampled-access tallies, flushed from per-thread counters. */
extern _Atomic uint64_t leak_accesses_sampled, leak_accesses_heap;
/* Allocations recognised as a realloc of a known object (the object keeps its history). */
extern _Atomic uint64_t leak_realloc_moves;

/* ---- allocation sites (sites.c): one per distinct stack of `depth` return addresses ---- */
struct leak_site {
    uint64_t hash;
    uint32_t depth;
    uint32_t from_loader;                    /* called from the dynamic loader (leak_site_intern) */
    uintptr_t pc[VIGIL_MAX_STACK];           /* return addresses, innermost first */
    /* Allocations and their bytes (a realloc move adds its new size, no allocation). Frees are
     * not counted: a site's frees are its allocations less its live objects (leak_site_frees),
     * so the free path updates no site. */
    _Atomic uint64_t allocs, bytes_allocated;
    _Atomic uint64_t accesses;               /* sampled accesses to objects from this site (lossy) */
    /* snapshot tallies, written only by the thread holding the snapshot lock */
    uint32_t snapshots_flagged, first_flagged_ms, last_flagged_ms, pad2;
    uint64_t max_flagged_bytes;
};
#define LEAK_SITE_UNKNOWN 0                  /* no stack, or the site table is full */
int leak_sites_init(void);
/* The site of the first `depth` frames of st (LEAK_SITE_UNKNOWN for an empty stack or a full table).
 * Each thread remembers the stacks it interned last, direct-mapped by their first two return
 * addresses (an allocation wrapper's callers do not share an entry): a program allocates from
 * a few sites again and again, and a hit costs a compare per frame, inline in the allocation
 * hook, instead of the hash, the probe and the entry's compare. Deeper stacks (leak.depth
 * above LEAK_RECENT_DEPTH) go to the table each time. */
#define LEAK_RECENT_BITS 6
#define LEAK_RECENT_DEPTH 8
struct leak_recent_site {
    uintptr_t pc[LEAK_RECENT_DEPTH];
    uint32_t depth, idx;        /* depth 0: empty */
};
/* Written by the owning thread (leak_site_intern_slow). */
extern __thread struct leak_recent_site leak_recent_sites[1u << LEAK_RECENT_BITS] __attribute__((visibility("hidden")));
uint32_t leak_site_intern_slow(const struct vigil_stack *st, uint32_t depth);

static inline struct leak_recent_site *leak_recent_of(const uintptr_t *pc, uint32_t depth)
{
    uintptr_t key = (pc[0] ^ (depth > 1 ? pc[1] * 0x9E3779B97F4A7C15ull : 0)) * 0x9E3779B97F4A7C15ull;
    return &leak_recent_sites[key >> (8 * sizeof key - LEAK_RECENT_BITS)];
}

static inline uint32_t leak_site_intern(const struct vigil_stack *st, uint32_t depth)
{
    if (depth > st->depth)
        depth = st->depth;
    if (depth - 1 < LEAK_RECENT_DEPTH) {
        const struct leak_recent_site *r = leak_recent_of(st->pc, depth);
        if (r->depth == depth) {
            uint32_t i = 0;
            while (i < depth && r->pc[i] == st->pc[i])
                i++;
            if (i == depth)
                return r->idx;
        }
    }
    return leak_site_intern_slow(st, depth);
}
#define LEAK_MAX_SITES (1u << 16)       /* beyond this, allocations count under LEAK_SITE_UNKNOWN */
extern struct leak_site *leak_site_entries;   /* written once by leak_sites_init */
/* Inline: every sampled heap access bumps its site's counter. */
static inline struct leak_site *leak_site_get(uint32_t index)
{
    if (index >= LEAK_MAX_SITES)
        return leak_site_entries;   /* entry 0, or NULL before init */
    return &leak_site_entries[index];
}
/* The frees of a site with `live` objects in the model now (a snapshot's count); an
 * allocation counted but not yet in the model (another thread's, under way) counts none. */
static inline uint64_t leak_site_frees(const struct leak_site *s, uint64_t live)
{
    uint64_t allocs = atomic_load_explicit(&s->allocs, memory_order_relaxed);
    return allocs > live ? allocs - live : 0;
}
uint32_t leak_site_count(void);
uint64_t leak_sites_mapped_bytes(void);

/* ---- snapshots (snapshot.c) ---- */
enum leak_reason { LEAK_REASON_TIMER, LEAK_REASON_SIGNAL, LEAK_REASON_API, LEAK_REASON_EXIT };
const char *leak_reason_name(enum leak_reason r);

/* One group: the reported objects of one allocation site. */
struct leak_group {
    uint32_t site;
    uint32_t oldest_alloc_ms, newest_alloc_ms;
    uint32_t idle_min_ms, idle_max_ms;
    uint32_t recent_access_ms, recent_access_site;   /* most recent sampled access in the group */
    uint32_t common_access_site, common_access_count;
    uint64_t idle_sum_ms;
    uint64_t objects, bytes;                         /* reported = stale or unreachable */
    uint64_t stale_objects, stale_bytes;             /* stale (reachable or not) */
    uint64_t unreachable_objects, unreachable_bytes; /* unreachable (stale or not) */
    uint64_t both_objects, both_bytes;               /* stale and unreachable */
    uint64_t indirect_objects, indirect_bytes;       /* unreachable, held by other unreachable ones */
    uint64_t never_accessed;                         /* reported objects without a sampled access */
    uint64_t live_objects, live_bytes;               /* every live object of the site */
    double score;
};

/* What is in use (live) at a snapshot, by allocation site: the largest sites. */
#define LEAK_IN_USE_MAX 100   /* raw sites: the command merges those with one source stack (unrolled calls) */
struct leak_in_use {
    uint32_t site;
    uint64_t objects, bytes;
};

struct leak_snapshot {
    enum leak_reason reason;
    int with_reach;
    uint32_t t_ms;
    uint64_t alloc_clock;
    uint64_t live_objects, live_bytes;
    uint64_t reported_objects, reported_bytes;
    uint64_t stale_objects, stale_bytes, unreachable_objects, unreachable_bytes;
    uint64_t indirect_objects, indirect_bytes;
    uint32_t ngroups;
    struct leak_group *groups;                       /* sorted worst first (mmap'd) */
    uint32_t in_use_sites, nin_use;                  /* sites with live objects; in in_use */
    struct leak_in_use in_use[LEAK_IN_USE_MAX];      /* the largest by live bytes, largest first */
    size_t groups_mapped;
};

enum { LEAK_SNAPSHOT_BUSY = -1, LEAK_SNAPSHOT_NO_MEMORY = -2 };   /* leak_snapshot_take failures */
/* Take a snapshot now. With reach, the objects' marks (reach.c) decide reachability.
 * Fills *out (free with leak_snapshot_release) and appends a line to the history. */
int leak_snapshot_take(enum leak_reason reason, int with_reach, uint32_t scan_start_ms,
                       struct leak_snapshot *out);
void leak_snapshot_release(struct leak_snapshot *s);
/* History of every snapshot's totals (groups dropped), for the report. */
uint32_t leak_history_count(void);
const struct leak_snapshot *leak_history_get(uint32_t i);

/* ---- reachability (reach.c) ---- */
struct leak_reach_stats {
    int done;
    const char *method;          /* how memory was read: "direct" (in place) or "process_vm_readv" */
    const char *error;           /* why the scan did not finish (done = 0), or NULL */
    uint64_t root_bytes, heap_bytes_scanned, marked_objects, threads;
    uint64_t untouched_bytes;    /* of large objects, in pages never touched: not read */
    uint64_t indirect_objects;   /* unreachable objects held by other unreachable ones */
    uint32_t scan_start_ms, duration_ms;
};
void leak_thread_started(void);   /* on the new thread: remember its stack */
void leak_thread_exited(void);
/* Mark every object reachable from the roots (HEAP_FLAG_MARKED), then flag the unreachable ones
 * that other unreachable ones point to (HEAP_FLAG_INDIRECT). */
void leak_reach_run(struct leak_reach_stats *st);

/* ---- report (report.c): leak.json in the run report directory ---- */
/* final: the snapshot reported (at exit, or of the running program when running is 1). */
void leak_report_write(const struct leak_snapshot *final, const struct leak_reach_stats *reach, int running);

#endif
