/* memcheck: uninitialized reads, out-of-bounds accesses and uses after free, checked on the
 * accesses the sampler sends through the instrumented copy (tools/memcheck/README.md).
 *
 * Always on (every allocation and free): the heap map (common/heapmap) follows live blocks
 * and their allocation stacks, new blocks are filled with the pattern, and a ring remembers
 * recently freed blocks. In bursts only: vigil-cc's code calls __vigil_memcheck_access for the
 * accesses its compiler part did not prove safe (tools/memcheck/compiler/), and
 * __vigil_memcheck_index when a statically sized array's index fails its bound.
 *
 * An access is checked against the block of its base (the pointer before the access's own
 * offsets), not only against the block it lands in: a write past the end of one block that
 * lands in the next is caught. An uninitialized read is a used load whose bytes hold the
 * pattern (pattern.h: 4 consecutive used bytes, or a small load's whole aligned group); copies
 * are not checked (the compiler part passes only loads whose value is used). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <vigil/memcheck.h>

#include "exclude.h"
#include "heapmap.h"
#include "mcint.h"
#include "pattern.h"
#include "vigil/tool.h"

#define VIGIL_OPTSET_TOOL memcheck
#define VIGIL_OPTSET_ROWS "tools/memcheck/options.inc"
#include "optset.h"

static struct memcheck_options opts;     /* written by the runtime before init */
static int memcheck_init(void);
static void memcheck_fini(void);
static void memcheck_flush(void);
static void on_alloc(void *ptr, size_t size, const struct vigil_stack *where);
static void on_free(void *ptr);
static void on_thread(enum vigil_thread_op op, uint64_t id);

struct vigil_tool mc_tool = {
    .api_version = VIGIL_TOOL_API_VERSION,
    .name = "memcheck",
    .description = "uninitialized reads, out-of-bounds accesses and uses after free, on sampled accesses",
    .events = VIGIL_EV_ALLOC | VIGIL_EV_FREE | VIGIL_EV_THREAD,
    .init = memcheck_init,
    .fini = memcheck_fini,
    .flush = memcheck_flush,
    .on_alloc = on_alloc,
    .on_free = on_free,
    .on_thread = on_thread,
    .options = &memcheck_option_set,
    .option_values = &opts,
    .bursts = VIGIL_BURSTS_NEEDED,
};
VIGIL_REGISTER_TOOL(mc_tool);

/* 1 from a successful init to the final report (vigil/memcheck.h). */
uint32_t __vigil_memcheck_on;

struct mc_counts mc_counts;              /* every thread's checks (relaxed atomics) */

/* The fast path of a check (__vigil_memcheck_access, which says when it passes): the thread's
 * recent blocks, by base. hits counts the checks passed so. check() fills the entry when it
 * finds the base in a live block; a free by the thread clears the block's entries. A block
 * that another thread frees stays until a check of this thread misses its entry: the checks it
 * passes meanwhile may miss an error, never report a false one. Written by its own thread
 * only. */
#define LAST_BLOCKS 64
struct mc_last {
    uint64_t hits;
    struct {
        uintptr_t start, len;
    } block[LAST_BLOCKS];
};
static __thread struct mc_last mc_last;
static uint64_t fill_word;               /* by init: byte i is pattern[i] (the fill at a is byte a % 8) */
static uint32_t uninit_mask;             /* by init: VIGIL_MC_UNINIT when fill is on, else 0 */
static uint32_t once_mask;               /* by init: VIGIL_MC_ONCE when check_once and fill are on, else 0 */

struct mc_config mc_cfg;                 /* from opts, by init */
struct vigil_heapmap *mc_heap;           /* made by init */
static int q_on;                         /* by init: the quarantine holds blocks */
static uint8_t pattern[8];               /* by init: byte at address a is pattern[a % 8] */

/* Recently freed blocks, by start: a direct-mapped table written by every free, read when an
 * access's base is in no live block (an exact start: `free(p); p->x`, `free(a); a[i]`).
 * start is written last (release) and rechecked by readers. */
struct freed {
    uintptr_t start;
    size_t size;
    uint32_t stack;
};
static struct freed *freed_table;        /* freed_mask + 1 entries, mapped by init */
static uint32_t freed_mask;              /* by init */
/* The quarantine: the most recent frees, held back from the allocator (vigil_free_later) up to
 * quarantine blocks and quarantine_bytes, oldest released first (vigil_free_now). A held block
 * stays in mc_heap, tagged (vigil_heapmap_tag: an access anywhere in one finds it there as
 * freed, on the entry the live block had), and is in a ring in the order of the frees with its
 * free stack (mc_heap's id), under q_lock (a spin lock held for a few stores: frees are
 * always-on events, not the checks' hot path). A released entry has start 0. */
struct qentry {
    uintptr_t start;
    size_t size;
    uint32_t free_stack;
};
static struct qentry *q_ring;            /* mc_cfg.quarantine entries, mapped by init */
static uint32_t q_head, q_count;         /* under q_lock */
static size_t q_bytes;                   /* under q_lock */
static uint32_t q_lock;

static void q_acquire(void)
{
    while (__atomic_exchange_n(&q_lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&q_lock, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
}

static void q_release(void)
{
    __atomic_store_n(&q_lock, 0, __ATOMIC_RELEASE);
}

static inline uint32_t *epoch_of(uintptr_t start);

/* A held block leaves mc_heap (the threads' cached copies of it with it) and goes to the
 * allocator. */
static void q_free(uintptr_t p)
{
    vigil_heapmap_remove(mc_heap, p, NULL);
    __atomic_fetch_add(epoch_of(p), 1, __ATOMIC_RELEASE);
    vigil_free_now((void *)p);
}

/* Keep the block o, which the program frees now (on_free, not a realloc's), tagged in mc_heap
 * already: 1, or 0 when it is not held (the caller removes it). */
static int quarantine(const struct vigil_heap_object *o)
{
    if (o->size > mc_cfg.quarantine_bytes || !vigil_free_later())
        return 0;
    struct vigil_stack st;
    vigil_capture_stack(&st, mc_cfg.depth);
    uint32_t free_stack = vigil_heapmap_intern(mc_heap, st.pc, st.depth);
    q_acquire();
    while (q_count && (q_count == mc_cfg.quarantine || q_bytes + o->size > mc_cfg.quarantine_bytes)) {
        struct qentry old = q_ring[q_head];
        q_head = (q_head + 1) % mc_cfg.quarantine;
        q_count--;
        if (!old.start)
            continue;
        q_bytes -= old.size;
        q_release();
        q_free(old.start);
        q_acquire();
    }
    q_ring[(q_head + q_count) % mc_cfg.quarantine] = (struct qentry){o->start, o->size, free_stack};
    q_count++;
    q_bytes += o->size;
    q_release();
    return 1;
}

/* The free stack of the held block at p (0: none, or released meanwhile). */
static uint32_t q_free_stack(uintptr_t p)
{
    uint32_t stack = 0;
    q_acquire();
    for (uint32_t i = 0; i < q_count && !stack; i++) {
        struct qentry *e = &q_ring[(q_head + i) % mc_cfg.quarantine];
        if (e->start == p)
            stack = e->free_stack;
    }
    q_release();
    return stack;
}

/* The program frees (or reallocs) p again while it is in the quarantine: it leaves the ring,
 * and is released now when release is set (a second free then reaches the allocator as
 * without vigil, which may say "double free"; a realloc's caller has removed it from mc_heap).
 * 1 when p was there. */
static int unquarantine(uintptr_t p, int release)
{
    int found = 0;
    q_acquire();
    for (uint32_t i = 0; i < q_count && !found; i++) {
        struct qentry *e = &q_ring[(q_head + i) % mc_cfg.quarantine];
        if (e->start == p) {
            q_bytes -= e->size;
            e->start = 0;
            found = 1;
        }
    }
    q_release();
    if (!found)
        return 0;   /* released by another thread meanwhile */
    if (release)
        q_free(p);
    return 1;
}

/* What the user excludes (exclude.h), by init. */
static struct mc_range excl_ranges[MC_RANGES_MAX];
static size_t excl_nranges;
static unsigned excl_kinds;              /* MC_MEM_* */
/* The process's mappings, each marked shared or not (exclude_kinds=shared), read from
 * /proc/self/maps at init and again when an access is in none of them (a mapping made since),
 * at most every MAPS_REREAD_NS: two tables, the one in use named by maps_cur (written by the
 * thread that won maps_lock, a trylock: the others go on with the current table). */
#define MAPS_MAX 1024
#define MAPS_REREAD_NS 50000ull
static struct mc_range maps_table[2][MAPS_MAX];
static uint8_t maps_shared[2][MAPS_MAX];
static uint32_t maps_n[2], maps_cur, maps_lock;
static uint64_t maps_read_ns;            /* when last read (under maps_lock) */

static inline unsigned kind_index(unsigned kind)
{
    return (unsigned)__builtin_ctz(kind);
}

static void read_maps(void)
{
    if (__atomic_exchange_n(&maps_lock, 1, __ATOMIC_ACQUIRE))
        return;
    uint32_t next = !__atomic_load_n(&maps_cur, __ATOMIC_RELAXED);
    struct mc_maps_reader r;
    mc_maps_begin(&r, maps_table[next], maps_shared[next], MAPS_MAX);
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[2048];
        ssize_t got;
        while ((got = read(fd, buf, sizeof buf)) > 0)
            mc_maps_feed(&r, buf, (size_t)got);
        mc_maps_end(&r);
        close(fd);
        maps_n[next] = (uint32_t)r.n;
        __atomic_store_n(&maps_cur, next, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&maps_read_ns, vigil_now_ns(), __ATOMIC_RELAXED);
    __atomic_store_n(&maps_lock, 0, __ATOMIC_RELEASE);
}

/* The mapping that holds a in the current table: 1 shared, 0 not, -1 none. */
static int mapping_shared(uintptr_t a)
{
    uint32_t cur = __atomic_load_n(&maps_cur, __ATOMIC_ACQUIRE);
    const struct mc_range *m = maps_table[cur];
    size_t lo = 0, hi = maps_n[cur];
    while (lo < hi) {   /* the kernel lists mappings by address */
        size_t mid = (lo + hi) / 2;
        if (a < m[mid].lo)
            hi = mid;
        else if (a >= m[mid].hi)
            lo = mid + 1;
        else
            return maps_shared[cur][mid];
    }
    return -1;
}

/* Whether a is in a shared mapping (rereading the mappings when it is in none known). */
static int in_shared(uintptr_t a)
{
    int s = mapping_shared(a);
    if (s >= 0)
        return s;
    if (vigil_now_ns() - __atomic_load_n(&maps_read_ns, __ATOMIC_RELAXED) < MAPS_REREAD_NS)
        return 0;
    read_maps();
    return mapping_shared(a) == 1;
}

/* Bumped by every free of a block that starts in the region (64 KiB, hashed): a thread's
 * cached block is valid while its region's count has not moved. */
#define EPOCH_REGIONS 4096
static uint32_t region_epoch[EPOCH_REGIONS];

static inline uint32_t *epoch_of(uintptr_t start)
{
    return &region_epoch[(start >> 16) & (EPOCH_REGIONS - 1)];
}

static inline size_t freed_slot(uintptr_t start)
{
    return (size_t)((start >> 4) * 0x9e3779b97f4a7c15ull >> 40) & freed_mask;
}

/* What the checks did, per thread, added to mc_counts now and then (not at every check: a
 * shared counter's cache line would move between threads). */
#define COUNTS_FLUSH 4096
#define CACHE_BLOCKS 16
struct mc_thread_counts {
    uint64_t accesses, in_blocks, uninit_checks, fast, excluded_range, excluded[4];
};

struct mc_thread {
    int busy;                            /* in a hook or check of this tool (signal re-entry) */
    size_t realloc_old_size;             /* realloc: the old block's size, from its free */
    struct cached_block {                /* blocks found lately, by address (direct-mapped) */
        struct vigil_heap_object block;
        uint32_t epoch;                  /* its region's epoch then */
        int valid;
    } cache[CACHE_BLOCKS];
    struct mc_thread_counts counts;      /* not yet in mc_counts */
};
static __thread struct mc_thread mc_self;

static void flush_counts(struct mc_thread *t)
{
    __atomic_fetch_add(&mc_counts.accesses, t->counts.accesses, __ATOMIC_RELAXED);
    __atomic_fetch_add(&mc_counts.in_blocks, t->counts.in_blocks, __ATOMIC_RELAXED);
    __atomic_fetch_add(&mc_counts.uninit_checks, t->counts.uninit_checks, __ATOMIC_RELAXED);
    __atomic_fetch_add(&mc_counts.fast, t->counts.fast, __ATOMIC_RELAXED);
    __atomic_fetch_add(&mc_counts.excluded_range, t->counts.excluded_range, __ATOMIC_RELAXED);
    for (int i = 0; i < 4; i++)
        __atomic_fetch_add(&mc_counts.excluded[i], t->counts.excluded[i], __ATOMIC_RELAXED);
    t->counts = (struct mc_thread_counts){0};
}

/* ---- allocation and free ---- */

static void on_alloc(void *ptr, size_t size, const struct vigil_stack *where)
{
    struct mc_thread *t = &mc_self;
    if (!ptr || t->busy)
        return;
    t->busy = 1;
    vigil_heapmap_add(mc_heap, (uintptr_t)ptr, size, where ? where->pc : NULL, where ? where->depth : 0);
    if (mc_cfg.fill) {
        enum vigil_alloc_kind kind = vigil_alloc_kind();
        size_t from = kind == VIGIL_ALLOC_REALLOC ? t->realloc_old_size : kind == VIGIL_ALLOC_UNINIT ? 0 : size;
        size_t to = size < mc_cfg.fill_max ? size : mc_cfg.fill_max;
        if (from < to)
            mc_pattern_fill(pattern, (uintptr_t)ptr + from, (uintptr_t)ptr + to);
    }
    t->busy = 0;
}

/* The fast path's entries of the block at start, which the thread frees: an entry is indexed
 * by a base in the block (__vigil_memcheck_access), so a block of size bytes (0: unknown) has
 * its entries at the indexes of the 64-byte lines it spans; only a larger block (or one of
 * unknown size) needs a look at every entry. */
static void forget_block(uintptr_t start, size_t size)
{
    struct mc_last *l = &mc_last;
    if (size && size <= 64 * LAST_BLOCKS) {
        for (uintptr_t line = start >> 6; line <= (start + size - 1) >> 6; line++) {
            unsigned i = (line ^ (line >> 6)) % LAST_BLOCKS;
            if (l->block[i].start == start)
                l->block[i].len = 0;
        }
        return;
    }
    for (int i = 0; i < LAST_BLOCKS; i++)
        if (l->block[i].start == start)
            l->block[i].len = 0;
}

static void on_free(void *ptr)
{
    struct mc_thread *t = &mc_self;
    if (!ptr || t->busy)
        return;
    t->busy = 1;
    uintptr_t p = (uintptr_t)ptr;
    struct vigil_heap_object o = {0};
    size_t size = 0;
    int in_realloc = vigil_alloc_is_realloc();
    if (q_on && !in_realloc) {
        /* tagged first, so that no check finds it live meanwhile; then held, or removed */
        if (vigil_heapmap_tag(mc_heap, p, 1, &o) == 0) {
            if (o.tagged) {   /* freed again while held */
                unquarantine(p, 1);
                t->busy = 0;
                return;
            }
            size = o.size;
            if (!quarantine(&o))
                vigil_heapmap_remove(mc_heap, p, NULL);
        }
    } else {
        size = vigil_heapmap_remove(mc_heap, p, &o);
        if (size && o.tagged) {   /* a realloc of a held block: it leaves the quarantine */
            unquarantine(p, 0);
            size = 0;
        }
    }
    forget_block(p, size ? size : o.size);
    __atomic_fetch_add(epoch_of(p), 1, __ATOMIC_RELEASE);
    if (in_realloc)
        t->realloc_old_size = size;
    else if (size && mc_cfg.freed) {
        struct freed *f = &freed_table[freed_slot(o.start)];
        __atomic_store_n(&f->start, 0, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        f->size = o.size;
        f->stack = o.stack;
        __atomic_store_n(&f->start, o.start, __ATOMIC_RELEASE);
    }
    t->busy = 0;
}

/* In a forked child, the only thread: a lock another thread of the parent held at the fork is
 * free, the heap map's too (each allocation, free and check takes one of those), else the
 * child's first use of it spins forever. What a lock guarded is consistent enough: at worst a
 * quarantined block is never released (heapmap.c says what its tables may keep). The runtime
 * delivers this before the child's fork() returns. */
static void on_thread(enum vigil_thread_op op, uint64_t id)
{
    (void)id;
    if (op == VIGIL_THREAD_FORK_CHILD) {
        if (mc_heap)
            vigil_heapmap_after_fork(mc_heap);
        __atomic_store_n(&q_lock, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&maps_lock, 0, __ATOMIC_RELEASE);
    }
}

/* The block that holds p (live, or held by the quarantine: tagged), through the thread's
 * cache. A cached block is valid while its region's epoch has not moved (a free, and a held
 * block's release, move it): the epoch of p's region is read before the lookup, so a free
 * that completes after it moves it; a block that starts in another region is validated by a
 * second lookup instead (a free between the lookup and the epoch's read would go unseen). */
static int block_of(struct mc_thread *t, uintptr_t p, struct vigil_heap_object *out)
{
    struct cached_block *c = &t->cache[(p >> 6) & (CACHE_BLOCKS - 1)];
    if (c->valid && p - c->block.start < c->block.size &&
        __atomic_load_n(epoch_of(c->block.start), __ATOMIC_ACQUIRE) == c->epoch) {
        *out = c->block;
        return 0;
    }
    uint32_t *epoch = epoch_of(p);
    uint32_t before = __atomic_load_n(epoch, __ATOMIC_ACQUIRE);
    if (vigil_heapmap_find(mc_heap, p, out) != 0)
        return -1;
    c->block = *out;
    if (epoch_of(out->start) == epoch) {
        c->epoch = before;
        c->valid = 1;
    } else {
        c->epoch = __atomic_load_n(epoch_of(out->start), __ATOMIC_ACQUIRE);
        c->valid = vigil_heapmap_get(mc_heap, out->start, &c->block) == 0 && c->block.size == out->size;
    }
    return 0;
}

/* A recently freed block that starts at p, not allocated again since (the caller found no
 * live block there). */
static int freed_block_of(uintptr_t p, struct vigil_heap_object *out)
{
    struct freed *f = &freed_table[freed_slot(p)];
    uintptr_t start = __atomic_load_n(&f->start, __ATOMIC_ACQUIRE);
    size_t size = f->size;
    uint32_t stack = f->stack;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (start != p || __atomic_load_n(&f->start, __ATOMIC_RELAXED) != start)
        return -1;
    *out = (struct vigil_heap_object){.start = start, .size = size, .stack = stack};
    return 0;
}

/* ---- the checks ---- */

/* The end of the bytes after block o that belong to no other block: glibc's chunks round a
 * request up to 16 bytes with 8 of header (at least 24 usable). An address there that no live
 * block holds is past o's end, whichever allocator made o (another's next block would hold it). */
static uintptr_t slack_end(const struct vigil_heap_object *o)
{
    size_t usable = ((o->size + 8 + 15) & ~(size_t)15) - 8;
    return o->start + (usable < 24 ? 24 : usable);
}

/* o in the fast path's entry for base b (vigil/memcheck.h). */
static void remember_block(uintptr_t b, const struct vigil_heap_object *o)
{
    if (excl_nranges && mc_in_ranges(excl_ranges, excl_nranges, o->start, o->size))
        return;   /* its accesses go to check(), which counts the excluded ones */
    struct mc_last *l = &mc_last;
    unsigned i = ((b >> 6) ^ (b >> 12)) % LAST_BLOCKS;
    l->block[i].start = o->start;
    l->block[i].len = o->size;
}

/* Report an error of check k (o: its block, or NULL). */
static void report(enum mc_kind kind, const struct vigil_mc_table *tab, uint32_t k, uintptr_t a, size_t size,
                   const struct vigil_heap_object *o, size_t uninit_offset, uintptr_t caller)
{
    uint32_t info = tab->checks[k].info;
    struct mc_error e = {.kind = kind, .module = tab->module, .local_site = tab->checks[k].site, .addr = a,
                         .size = (uint32_t)size, .is_store = !!(info & VIGIL_MC_STORE),
                         .use = (info & VIGIL_MC_USE_MASK) >> VIGIL_MC_USE_SHIFT, .have_obj = o != NULL,
                         .uninit_offset = uninit_offset, .caller = caller};
    if (o)
        e.obj = *o;
    mc_report(&e);
}

/* A use after free of the held block o (its allocation stack; its free stack from the ring). */
static void report_freed(const struct vigil_mc_table *tab, uint32_t k, uintptr_t a, size_t size,
                         const struct vigil_heap_object *o, uintptr_t caller)
{
    uint32_t free_stack = q_free_stack(o->start);
    uint32_t info = tab->checks[k].info;
    struct mc_error e = {.kind = MC_USE_AFTER_FREE, .module = tab->module, .local_site = tab->checks[k].site,
                         .addr = a, .size = (uint32_t)size, .is_store = !!(info & VIGIL_MC_STORE), .have_obj = 1,
                         .obj = *o, .free_stack = free_stack, .caller = caller};
    mc_report(&e);
}

/* Whether the user excludes the check of size bytes at a (exclude_ranges, exclude_kinds): 1,
 * counted, or 0. */
static int excluded(struct mc_thread *t, uintptr_t a, size_t size)
{
    if (excl_nranges && mc_in_ranges(excl_ranges, excl_nranges, a, size)) {
        t->counts.excluded_range++;
        return 1;
    }
    unsigned kind = excl_kinds & MC_MEM_SHARED && in_shared(a) ? MC_MEM_SHARED
                    : excl_kinds & MC_MEM_HEAP                      ? MC_MEM_HEAP
                                                                    : 0;
    if (kind) {   /* every check here is of the heap, or of memory in no heap block */
        t->counts.excluded[kind_index(kind)]++;
        return 1;
    }
    return 0;
}

static __attribute__((noinline)) void check(const struct vigil_mc_table *tab, uint32_t k, uintptr_t a, uintptr_t b,
                                             size_t size, uintptr_t caller)
{
    struct mc_thread *t = &mc_self;
    if (!__atomic_load_n(&__vigil_memcheck_on, __ATOMIC_RELAXED) || t->busy || k >= tab->n)
        return;
    t->busy = 1;
    t->counts.accesses += 1 + mc_last.hits;
    t->counts.fast += mc_last.hits;
    mc_last.hits = 0;
    if (t->counts.accesses >= COUNTS_FLUSH)
        flush_counts(t);
    uint32_t info = tab->checks[k].info;
    if (!b)
        b = a;
    if (__builtin_expect(excl_kinds || excl_nranges, 0) && excluded(t, a, size)) {
        t->busy = 0;
        return;
    }
    if (!vigil_heapmap_spans(mc_heap, b) && !vigil_heapmap_spans(mc_heap, a)) {
        t->busy = 0;   /* a global or the main stack: no block is there */
        return;
    }
    struct vigil_heap_object o, q;
    int in_b = block_of(t, b, &o) == 0;
    if (in_b && o.tagged && a - o.start >= o.size && block_of(t, a, &q) == 0 && !q.tagged)
        o = q;   /* a live block reached through a stale base next to it: its bytes are checked */
    else if (in_b && o.tagged) {
        /* in a held block: its memory is not in use, the access is after its free */
        report_freed(tab, k, a, size, &o, caller);
        t->busy = 0;
        return;
    } else if (in_b) {
        t->counts.in_blocks++;
        if (a < o.start || a + size > o.start + o.size) {
            /* an end pointer used with a negative offset reads the block it ends */
            if (!(a < o.start && block_of(t, a, &q) == 0 && !q.tagged && q.start + q.size == o.start))
                report(a < o.start ? MC_UNDERFLOW : MC_OVERFLOW, tab, k, a, size, &o, 0, caller);
            t->busy = 0;
            return;
        }
        remember_block(b, &o);
    } else if (block_of(t, a, &o) == 0) {
        /* an access into a block through a base outside every block: its bytes are checked */
        if (o.tagged) {
            report_freed(tab, k, a, size, &o, caller);
            t->busy = 0;
            return;
        }
    } else {
        if (vigil_heapmap_below(mc_heap, a, &o) == 0 && !o.tagged && a >= o.start + o.size && a < slack_end(&o))
            /* a pointer that walked off the end of o (its base is past the end too) */
            report(MC_OVERFLOW, tab, k, a, size, &o, 0, caller);
        else if (mc_cfg.freed && (freed_block_of(b, &o) == 0 || (b != a && freed_block_of(a, &o) == 0)) &&
                 a - o.start < o.size + 64)
            report(MC_USE_AFTER_FREE, tab, k, a, size, &o, 0, caller);
        t->busy = 0;
        return;
    }
    uint8_t *once = (info & VIGIL_MC_ONCE) && mc_cfg.check_once ? &tab->once[k] : NULL;
    if ((info & VIGIL_MC_UNINIT) && mc_cfg.fill && !(once && __atomic_load_n(once, __ATOMIC_RELAXED))) {
        size_t at;
        t->counts.uninit_checks++;
        struct mc_block blk = {o.start, o.size};
        if (mc_pattern_read(pattern, &blk, a, size, info >> VIGIL_MC_BYTES_SHIFT, &at))
            report(MC_UNINIT, tab, k, a, size, &o, at, caller);
        else if (once)
            __atomic_store_n(once, 1, __ATOMIC_RELAXED);
    }
    t->busy = 0;
}

/* Bit i set when byte i of x and y are equal. */
static inline unsigned equal_bytes(uint64_t x, uint64_t y)
{
#ifdef __SSE2__
    __m128i eq = _mm_cmpeq_epi8(_mm_cvtsi64_si128((long long)x), _mm_cvtsi64_si128((long long)y));
    return (unsigned)_mm_movemask_epi8(eq) & 0xffu;
#else
    unsigned bits = 0;
    for (int i = 0; i < 8; i++)
        bits |= (unsigned)((uint8_t)(x >> 8 * i) == (uint8_t)(y >> 8 * i)) << i;
    return bits;
#endif
}

/* The fast path of a check (vigil/memcheck.h): the access and its base are in the block of
 * the thread's entry for the base (block[((base >> 6) ^ (base >> 12)) % LAST_BLOCKS]: line and
 * page mixed, so page-aligned blocks spread) and, for a load whose value is used, either its
 * check-once flag is set or none of its used bytes equals the fill's byte at its address: the
 * aligned 8-byte word that holds the load (an aligned word lies in one page) compared bytewise
 * with fill_word, whose byte i is the fill at every address i mod 8. A load across two words,
 * or of more than 8 bytes, goes to check(). A check-once load that passes is done, as in
 * check(). */
void __vigil_memcheck_access(const struct vigil_mc_table *t, uint32_t k, const void *addr, const void *base)
{
    if (__builtin_expect(k >= t->n, 0))
        return;
    uint32_t info = t->checks[k].info;
    size_t size = info & VIGIL_MC_SIZE_MAX;
    uintptr_t a = (uintptr_t)addr, b = base ? (uintptr_t)base : a;
    struct mc_last *l = &mc_last;
    unsigned i = ((b >> 6) ^ (b >> 12)) % LAST_BLOCKS;
    uintptr_t start = l->block[i].start, len = l->block[i].len;
    if (b - start < len && a - start < len && a - start + size <= len) {
        if (!(info & uninit_mask))
            goto pass;
        if ((info & once_mask) && __atomic_load_n(&t->once[k], __ATOMIC_RELAXED))
            goto pass;
        unsigned off = (unsigned)(a & 7);
        if (off + size <= 8) {
            uint64_t value;
            __builtin_memcpy(&value, (const void *)(a - off), 8);
            unsigned used = (info >> VIGIL_MC_BYTES_SHIFT ?: 0xffu) & ((1u << size) - 1);
            if (!(equal_bytes(value, fill_word) >> off & used)) {
                if (info & once_mask)
                    __atomic_store_n(&t->once[k], 1, __ATOMIC_RELAXED);
                goto pass;
            }
        }
    }
    check(t, k, a, b, size, (uintptr_t)__builtin_return_address(0));
    return;
pass:
    l->hits++;
}

/* A value check whose bytes look like the fill: an uninitialized read when the load's bytes
 * lay in a live heap block (the one there now: the value was read from it, or from a block
 * freed since at the same place) and pass mc_pattern_value's tests. */
static __attribute__((noinline)) void check_value(const struct vigil_mc_table *tab, uint32_t k, uintptr_t a,
                                                   uint64_t value, uintptr_t caller)
{
    struct mc_thread *t = &mc_self;
    if (!__atomic_load_n(&__vigil_memcheck_on, __ATOMIC_RELAXED) || t->busy)
        return;
    t->busy = 1;
    uint32_t info = tab->checks[k].info;
    size_t size = info & VIGIL_MC_SIZE_MAX;
    struct vigil_heap_object o;
    if (!(__builtin_expect(excl_kinds || excl_nranges, 0) && excluded(t, a, size)) && vigil_heapmap_spans(mc_heap, a) &&
        block_of(t, a, &o) == 0 && !o.tagged) {
        t->counts.uninit_checks++;
        size_t at;
        struct mc_block blk = {o.start, o.size};
        if (mc_pattern_value(pattern, &blk, a, size, info >> VIGIL_MC_BYTES_SHIFT, value, &at))
            report(MC_UNINIT, tab, k, a, size, &o, at, caller);
        else if ((info & VIGIL_MC_ONCE) && mc_cfg.check_once)
            __atomic_store_n(&tab->once[k], 1, __ATOMIC_RELAXED);
    }
    t->busy = 0;
}

/* A value check (vigil/memcheck.h): the bytes the load read (its used ones) are compared with
 * the fill at its address, the fill rotated to it; only when one of them equals it does
 * check_value look for the block. A check-once load that passes is done. */
void __vigil_memcheck_value(const struct vigil_mc_table *t, uint32_t k, const void *addr, uint64_t value)
{
    if (__builtin_expect(k >= t->n, 0))
        return;
    uint32_t info = t->checks[k].info;
    if (!(info & uninit_mask) || ((info & once_mask) && __atomic_load_n(&t->once[k], __ATOMIC_RELAXED)))
        return;
    uintptr_t a = (uintptr_t)addr;
    size_t size = info & VIGIL_MC_SIZE_MAX;
    unsigned off = (unsigned)(a & 7);
    uint64_t fill = off ? fill_word >> 8 * off | fill_word << (64 - 8 * off) : fill_word;   /* byte i: the fill at a + i */
    unsigned used = (info >> VIGIL_MC_BYTES_SHIFT ?: 0xffu) & (size < 8 ? (1u << size) - 1 : 0xffu);
    if (!(equal_bytes(value, fill) & used)) {
        if (info & once_mask)
            __atomic_store_n(&t->once[k], 1, __ATOMIC_RELAXED);
        return;
    }
    check_value(t, k, a, value, (uintptr_t)__builtin_return_address(0));
}

void __vigil_memcheck_range(const struct vigil_mc_table *t, uint32_t k, const void *addr, const void *base,
                            uint64_t size)
{
    check(t, k, (uintptr_t)addr, (uintptr_t)base, size < VIGIL_MC_SIZE_MAX ? size : VIGIL_MC_SIZE_MAX,
          (uintptr_t)__builtin_return_address(0));
}

void __vigil_memcheck_index(struct __vigil_module *m, uint32_t site, uint64_t index, uint64_t bound, uint32_t what)
{
    struct mc_thread *t = &mc_self;
    if (!__atomic_load_n(&__vigil_memcheck_on, __ATOMIC_RELAXED) || t->busy)
        return;
    unsigned of = what & VIGIL_MC_BOUND_MASK;
    unsigned kind = of == VIGIL_MC_STACK || (what & VIGIL_MC_IN_STACK)    ? MC_MEM_STACK
                    : of == VIGIL_MC_GLOBAL || (what & VIGIL_MC_IN_GLOBAL) ? MC_MEM_GLOBALS
                                                                               : 0;
    if (kind & excl_kinds) {
        t->counts.excluded[kind_index(kind)]++;
        return;
    }
    t->busy = 1;
    struct mc_error e = {.kind = of == VIGIL_MC_ARRAY ? MC_INDEX : MC_OBJECT, .module = m, .local_site = site,
                         .index = index, .bound = bound, .stack_object = of == VIGIL_MC_STACK,
                         .caller = (uintptr_t)__builtin_return_address(0)};
    mc_report(&e);
    t->busy = 0;
}

/* ---- start and end ---- */

static int memcheck_init(void)
{
    mc_cfg = (struct mc_config){
        .fill = opts.fill, .fill_max = opts.fill_max, .check_once = opts.check_once,
        .freed = opts.freed, .depth = opts.depth, .max_reports = opts.max_reports, .print = opts.print,
        .events = opts.events, .quarantine = opts.quarantine, .quarantine_bytes = opts.quarantine_bytes,
    };
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&seed ^ vigil_now_ns();
    if (mc_pattern_parse(opts.pattern, seed, pattern) != 0) {
        vigil_tool_message(&mc_tool, "memcheck.pattern=%s: expected 'random' or 1, 2, 4 or 8 bytes in hex (0xde)",
                           opts.pattern);
        return -1;
    }
    if (mc_cfg.freed > 65536 || mc_cfg.depth < 1 || mc_cfg.depth > 16 || mc_cfg.max_reports < 1 ||
        mc_cfg.max_reports > 100000 || mc_cfg.events > 10000000 || mc_cfg.quarantine > 65536 ||
        mc_cfg.quarantine_bytes > (1u << 30)) {
        vigil_tool_message(&mc_tool, "expected memcheck.freed 0 to 65536, memcheck.depth 1 to 16, "
                           "memcheck.max_reports 1 to 100000, memcheck.events 0 to 10000000, memcheck.quarantine "
                           "0 to 65536, memcheck.quarantine_bytes 0 to 1073741824");
        return -1;
    }
    char err[200];
    if (mc_ranges_parse(opts.exclude_ranges, excl_ranges, &excl_nranges, err, sizeof err) != 0) {
        vigil_tool_message(&mc_tool, "memcheck.exclude_ranges=%s: %s", opts.exclude_ranges, err);
        return -1;
    }
    if (mc_kinds_parse(opts.exclude_kinds, &excl_kinds, err, sizeof err) != 0) {
        vigil_tool_message(&mc_tool, "memcheck.exclude_kinds=%s: %s", opts.exclude_kinds, err);
        return -1;
    }
    if (excl_kinds & MC_MEM_SHARED) {
        read_maps();
        /* the first address in no mapping read now is looked up again at once: a mapping
         * the program makes right after start-up would otherwise wait out MAPS_REREAD_NS */
        __atomic_store_n(&maps_read_ns, 0, __ATOMIC_RELAXED);
    }
    for (int i = 0; i < 8; i++)
        fill_word |= (uint64_t)pattern[i] << (8 * i);
    uninit_mask = mc_cfg.fill ? VIGIL_MC_UNINIT : 0;
    once_mask = mc_cfg.check_once && mc_cfg.fill ? VIGIL_MC_ONCE : 0;
    vigil_want_alloc_stack(mc_cfg.depth);
    mc_heap = vigil_heapmap_new(mc_cfg.depth);
    if (mc_cfg.freed) {
        freed_mask = 1;
        while (freed_mask + 1 < mc_cfg.freed)
            freed_mask = freed_mask * 2 + 1;
        freed_table = mc_map(sizeof *freed_table * (freed_mask + 1));
    }
    if (mc_cfg.quarantine && mc_cfg.quarantine_bytes) {
        q_ring = mc_map(sizeof *q_ring * mc_cfg.quarantine);
        q_on = q_ring != NULL;
        if (!q_ring) {
            vigil_tool_message(&mc_tool, "cannot map its quarantine");
            return -1;
        }
    }
    if (!mc_heap || (mc_cfg.freed && !freed_table) || mc_report_init() != 0 || mc_events_init(mc_cfg.events) != 0) {
        vigil_tool_message(&mc_tool, "cannot map its tables");
        return -1;
    }
    __atomic_store_n(&__vigil_memcheck_on, 1, __ATOMIC_RELEASE);
    return 0;
}

static void memcheck_fini(void)
{
    __atomic_store_n(&__vigil_memcheck_on, 0, __ATOMIC_RELEASE);
    mc_self.busy = 1;
    mc_self.counts.accesses += mc_last.hits;
    mc_self.counts.fast += mc_last.hits;
    mc_last = (struct mc_last){0};
    flush_counts(&mc_self);
    mc_write_report(pattern, 1);
    mc_events_write();
}

/* A report while the program runs (vigil_flush_report): the same files, of the moment. */
static void memcheck_flush(void)
{
    int was = mc_self.busy;
    mc_self.busy = 1;
    mc_self.counts.accesses += mc_last.hits;
    mc_self.counts.fast += mc_last.hits;
    mc_last.hits = 0;
    flush_counts(&mc_self);
    mc_write_report(pattern, 0);
    mc_events_write();
    mc_self.busy = was;
}
