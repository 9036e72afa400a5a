/* The leak tool's heap model: every live heap object the program allocated, found from any
 * address inside it.
 *
 * Exact addresses (free, realloc) go through a sharded chained hash keyed by the start
 * address; each shard has its own spin lock, taken by writers only (not while the process has
 * one thread: heap_one_thread). Interior addresses (sampled accesses, the reachability scan) go
 * through a page map: per 4 KiB page a bitmap of object starts at 16-byte granularity plus, for
 * pages covered by an object larger than a page, that object's start. A lookup reads at most
 * two bitmaps and one hash chain, without a lock.
 *
 * Everything lives in mmap'd memory that is never returned to the system, so a lock-free reader
 * racing with a free reads a stale or recycled record (a mis-attributed sample) but never
 * faults. The module knows nothing about vigil: it is unit-tested on its own. */
#ifndef VIGIL_LEAK_HEAP_H
#define VIGIL_LEAK_HEAP_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define HEAP_NO_SITE 0xffffffffu      /* access_site of an object never seen accessed */
#define HEAP_SITE_MASK 0x00ffffffu    /* allocation-site index bits of site_flags */
#define HEAP_FLAG_MARKED 0x01000000u  /* reachability: reached from a root */
#define HEAP_FLAG_INDIRECT 0x02000000u /* unreachable, but held by another unreachable object */

/* One live object, 48 bytes. Fields written after publication are atomics (relaxed): lock-free
 * readers update the access fields while writers hold the shard lock. */
struct heap_obj {
    _Atomic uintptr_t addr;               /* start address; 0 while the record is free */
    struct heap_obj *_Atomic next;        /* hash chain (left as it was while the record is free) */
    _Atomic uint64_t size;
    _Atomic uint32_t site_flags;          /* allocation-site index | HEAP_FLAG_* */
    uint32_t alloc_ms;                    /* allocation time (tool clock, ms) */
    _Atomic uint32_t touch_ms;            /* last sampled access, or allocation time */
    _Atomic uint32_t touch_seq;           /* allocation clock at that moment */
    _Atomic uint32_t access_site;         /* vigil site of the last sampled access, HEAP_NO_SITE */
    _Atomic uint32_t max_gap;             /* longest interval seen between touches, ms */
};

struct heap_stats {
    uint64_t live_objects, live_bytes, peak_live_bytes;
    uint64_t inserts, removes, unknown_removes, replaced;   /* replaced: insert over a live start */
    uint64_t mapped_bytes;                /* everything the model mmap'd */
    uint64_t resident_bytes;              /* of which resident now (mincore) */
    uint64_t record_bytes;                /* live records x sizeof(struct heap_obj) */
};

/* Whether the process has one thread (glibc keeps the flag; 0 where it is unknown). Only this
 * thread can then create another, so while it runs a model operation no other thread exists:
 * the operation may skip its locked instructions (shard lock, page-map bits, allocation clock),
 * which were most of an allocation's cost in programs whose heap stays in cache (bc). */
#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define HEAP_HAVE_SINGLE_THREADED 1
#endif
#endif
/* The allocation and free paths run on every event of the program, next to its own code: what
 * they run only now and then is kept out of line and in .text.unlikely, so that their common
 * path stays a few cache lines. lua with the leak tool had 2.4 times the instruction-cache
 * misses of the build without it (cachegrind), the tool's code evicting the interpreter's. */
#define COLD __attribute__((cold, noinline))

static inline int heap_one_thread(void)
{
#ifdef HEAP_HAVE_SINGLE_THREADED
    return __libc_single_threaded;
#else
    return 0;
#endif
}

/* *c += 1, returning the new value: a locked add only when another thread may race it. */
static inline uint64_t heap_count_up(_Atomic uint64_t *c)
{
    if (!heap_one_thread())
        return atomic_fetch_add_explicit(c, 1, memory_order_relaxed) + 1;
    uint64_t v = atomic_load_explicit(c, memory_order_relaxed) + 1;
    atomic_store_explicit(c, v, memory_order_relaxed);
    return v;
}

/* Set up the empty model; 0, or -1 when memory cannot be mapped. Idempotent. */
int heap_init(void);
/* In a fork child, its only thread: the locks another thread of the parent held at the fork are
 * free again, and a relink it was making counts as done (the chains stay walkable at every step
 * of one; what it was adding or removing may be missing). Call before the child's next event. */
void heap_after_fork(void);
/* From now on, objects inserted are born marked (HEAP_FLAG_MARKED): the exit scan calls it
 * before reading the roots, so that an object another thread allocates while the scan runs,
 * whose address may sit in memory already read, does not count as unreachable. */
void heap_mark_new_objects(void);
/* Add an object (ptr, size). A start already in the model is overwritten (counted as replaced).
 * Returns the record, or NULL when the model is out of memory (the object is not tracked). */
struct heap_obj *heap_insert(uintptr_t addr, size_t size, uint32_t site, uint32_t now_ms,
                             uint32_t now_seq);
/* Remove the object starting at addr. Returns 1 and its allocation site and size, or 0 when no
 * object starts there (counted as an unknown remove). */
int heap_remove(uintptr_t addr, uint32_t *site, uint64_t *size);

/* What the model knows about an object beyond its address: kept across a realloc move, so the
 * moved object keeps its allocation site, age and access history. */
struct heap_history {
    uint64_t size;
    uint32_t site, alloc_ms, touch_ms, touch_seq, access_site, max_gap;
};
/* heap_remove, also returning the removed object's history. */
int heap_remove_history(uintptr_t addr, struct heap_history *out);
/* Give a freshly inserted object the history of the one it replaces (a realloc move). */
void heap_inherit(struct heap_obj *o, const struct heap_history *from);
/* Prefetch what heap_remove(addr) reads first: its hash bucket; then, once that has arrived,
 * the record the bucket leads to (the chain's head: chains are short). Lock-free, no effect on
 * the model. */
void heap_prefetch_bucket(uintptr_t addr);
void heap_prefetch_record(uintptr_t addr);
/* The object containing addr (interior addresses included), or NULL. Lock-free. */
struct heap_obj *heap_find(uintptr_t addr);
/* The object starting exactly at addr, or NULL. Lock-free. */
struct heap_obj *heap_find_exact(uintptr_t addr);
/* The bounds of every object ever modelled; only widen (written by heap_insert). Kept
 * bit-inverted: they live in the program's data, which the exit scan reads as roots (reach.c),
 * and the lowest object's address stored as is would make that object reachable. */
extern _Atomic uintptr_t heap_addr_lo_inverted __attribute__((visibility("hidden")));
extern _Atomic uintptr_t heap_addr_hi_inverted __attribute__((visibility("hidden")));
static inline uintptr_t heap_addr_lo(void)
{
    return ~atomic_load_explicit(&heap_addr_lo_inverted, memory_order_relaxed);
}
static inline uintptr_t heap_addr_hi(void)
{
    return ~atomic_load_explicit(&heap_addr_hi_inverted, memory_order_relaxed);
}
/* Cheap pre-filter: could addr be inside a modelled object at all? */
static inline int heap_maybe_contains(uintptr_t addr)
{
    return addr >= heap_addr_lo() && addr < heap_addr_hi();
}
/* Could [lo, hi) hold part of a modelled object? 0 means no object of the model starts or ends
 * there; the answer stays valid until the next insert (which may widen the bounds). */
static inline int heap_maybe_overlaps(uintptr_t lo, uintptr_t hi)
{
    return hi > heap_addr_lo() && lo < heap_addr_hi();
}

/* Record a sampled access at now_ms (allocation clock seq) from site. */
static inline void heap_touch(struct heap_obj *o, uint32_t now_ms, uint32_t seq, uint32_t site)
{
    uint32_t last = atomic_load_explicit(&o->touch_ms, memory_order_relaxed);
    int32_t gap = (int32_t)(now_ms - last);   /* threads' clocks may lag a little: never backwards */
    if (gap > 0) {
        if ((uint32_t)gap > atomic_load_explicit(&o->max_gap, memory_order_relaxed))
            atomic_store_explicit(&o->max_gap, (uint32_t)gap, memory_order_relaxed);
        atomic_store_explicit(&o->touch_ms, now_ms, memory_order_relaxed);
    }
    /* Stores only when something changed: an unchanged record's cache line stays clean, so
     * threads sampling the same object do not bounce it between cores. */
    if (atomic_load_explicit(&o->touch_seq, memory_order_relaxed) != seq)
        atomic_store_explicit(&o->touch_seq, seq, memory_order_relaxed);
    if (atomic_load_explicit(&o->access_site, memory_order_relaxed) != site)
        atomic_store_explicit(&o->access_site, site, memory_order_relaxed);
}

/* Visit every live object, one shard at a time under that shard's lock (fn must not call the
 * insert/remove functions). */
void heap_foreach(void (*fn)(struct heap_obj *o, void *arg), void *arg);
void heap_get_stats(struct heap_stats *out);
/* The exact hash's shape: buckets in all shards' current arrays, how many hold a record, the
 * records chained, the longest chain. Walks every chain (each shard under its lock). */
struct heap_chain_stats { uint64_t buckets, used_buckets, records, longest; };
void heap_get_chain_stats(struct heap_chain_stats *out);

/* Anonymous memory for the tool (zeroed, page-granular, counted in mapped_bytes). */
void *heap_map(size_t bytes);
void heap_unmap(void *p, size_t bytes);

#endif
