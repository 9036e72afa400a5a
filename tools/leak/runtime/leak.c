/* leak: memory leaks by staleness (seed 000, Figure 4) plus reachability at exit.
 *
 * The heap model (heap.c) follows every allocation and free, which the runtime reports always.
 * Sampled accesses (bursts) update the last-access time and site of the object they fall in,
 * interior addresses included. Snapshots (snapshot.c) report objects idle for longer than
 * stale_after, grouped by allocation site; at exit a conservative mark phase (reach.c) also
 * tells unreachable objects apart. leak.json (report.c) stores raw return addresses with the
 * module path and load bias of each: `vigil leaks` symbolizes them with the binary's debug
 * info, so the program itself never parses DWARF.
 *
 * Options, "leak.<key>=value" in VIGIL_OPTIONS (a key the tool does not ask for gets a warning):
 *   stale_after=S      idle seconds before an object is stale (default 30; fractions allowed)
 *   stale_allocs=N     measure idleness in allocations instead of time (default 0: time)
 *   clock=wall|active  time is wall-clock time since start (default), or active time: time in
 *                      which the process used the CPU, so that a pause (a server waiting for
 *                      requests, a filter waiting for input) does not make its data stale
 *   gap_factor=F       an object must also be idle for F x its longest gap seen (default 2)
 *   snapshot_every=S   periodic snapshot interval in seconds, 0 = off (default 10)
 *   depth=N            allocation stack depth, 1..16 (default 4)
 *   reach=0|1          reachability scan at exit (default 1)
 *   signal=0|1         SIGUSR2 sent to the process requests a snapshot, when the program has no
 *                      handler (default 1); the program still sees SIG_DFL, and a SIGUSR2 it
 *                      raises itself ends it as without vigil
 * Periodic and SIGUSR2 snapshots are taken at the next allocation or free after the deadline
 * (or the signal): the tool starts no thread, and an idle program has nothing new to report. */
#include "leak.h"
#include "options.h"

#include <vigil/leak.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct leak_config leak_cfg;   /* from leak_opts, by init */

_Atomic uint64_t leak_alloc_clock;                        /* bumped by every allocation */
_Atomic uint64_t leak_accesses_sampled, leak_accesses_heap; /* flushed per-thread tallies */
_Atomic uint64_t leak_realloc_moves;                      /* bumped by on_alloc */

static atomic_int enabled;                /* init succeeded */
static atomic_int snapshot_requested;     /* set by the SIGUSR2 handler */
static _Atomic uint32_t next_snapshot_ms; /* periodic deadline */
static uint64_t start_ms;                  /* CLOCK_MONOTONIC_COARSE in ms at init; written by init */

/* Per-thread state of the access path (see leak_on_accesses): one TLS block, so that the hot path
 * finds all of it from one thread-pointer offset. */
#define SLOT_BITS 8       /* 256 slots, 11 KB of TLS per thread: 32 evicted each other on sqlite3's working set */
#define SLOT_SHIFT 8      /* indexed by 256-byte granule: small objects on one page no longer evict each other */
#define CLOCK_EVERY 64    /* sampled accesses per read of the tool clock */
#define FLUSH_EVERY 4096  /* sampled accesses between flushes of the tallies to the globals */
struct access_slot {
    uintptr_t neg_start;      /* the slot matches [start, start + len), start stored negated:
                                 the exit scan reads TLS as roots, and the objects last
                                 accessed must not look reachable from their slots */
    uint64_t len;             /* ... 0: empty */
    uint64_t stamp;           /* (allocation clock << 32) ^ tick of the tool clock at the last touch */
    uint32_t hits;            /* accesses not yet added to the site's tally */
    vigil_site_t last;        /* vigil site of the last hit, not yet in the record */
};   /* 32 bytes: what the fast path reads and writes, on one cache line */
struct leak_tls {
    uint32_t now_ms;          /* this thread's view of the tool clock */
    uint32_t since_clock;     /* sampled accesses since now_ms was read */
    uint32_t sampled, nonheap;/* tallies not yet flushed */
    uint32_t frees_unchecked; /* frees since one looked for a due snapshot (leak_on_free) */
    uint64_t clock_key;       /* now_ms >> stamp_shift, as mixed into the slots' stamps */
    struct access_slot slot[1u << SLOT_BITS];
    struct heap_obj *slot_obj[1u << SLOT_BITS];   /* each slot's record; tl.outside for a page outside the heap */
    uint32_t slot_site[1u << SLOT_BITS];          /* allocation site of each slot's object */
    struct heap_obj outside;  /* stands for "no object" in negative slots; takes dead stores */
};
static __thread struct leak_tls tl;

/* Allocation-site counters, gathered per thread: atomic adds on a shared site per allocation
 * were a quarter of the tool's cost on lua's allocation path. While the process has one
 * thread, it keeps a few sites' pending counts (direct-mapped by site index) and adds them to
 * the site when the entry is taken by another site, after TALLY_EVERY events, at a snapshot it
 * takes and at its exit; the thread that writes the final report flushes its own, so the
 * counts are exact. With other threads each event is added at once. Frees count nothing here
 * (leak_site_frees). */
#define TALLY_BITS 4
#define TALLY_EVERY 64
struct site_tally {
    uint32_t site, events;
    uint32_t allocs;
    uint64_t bytes_allocated;
};
static __thread struct site_tally tl_tally[1u << TALLY_BITS];

static void tally_flush(struct site_tally *t)
{
    if (!t->events)
        return;
    struct leak_site *s = leak_site_get(t->site);
    if (t->allocs)
        atomic_fetch_add_explicit(&s->allocs, t->allocs, memory_order_relaxed);
    if (t->bytes_allocated)
        atomic_fetch_add_explicit(&s->bytes_allocated, t->bytes_allocated, memory_order_relaxed);
    *t = (struct site_tally){.site = t->site};
}

static void flush_site_tallies(void)
{
    for (unsigned i = 0; i < (1u << TALLY_BITS); i++)
        tally_flush(&tl_tally[i]);
}

/* The pending counts of `site`, after the entry's previous site was flushed. */
static inline struct site_tally *tally_of(uint32_t site)
{
    struct site_tally *t = &tl_tally[site & ((1u << TALLY_BITS) - 1)];
    if (__builtin_expect(t->site != site, 0)) {
        tally_flush(t);
        t->site = site;
    }
    return t;
}

static inline void tally_done(struct site_tally *t)
{
    /* With other threads, at once: a thread blocked at exit (a worker pool) would otherwise keep
     * its last counts, and the report would show sites with more live objects than allocations. */
    if (__builtin_expect(++t->events >= TALLY_EVERY || !heap_one_thread(), 0))
        tally_flush(t);
}

/* The slots' stamps change once per tick of 2^stamp_shift ms of the tool clock, not every ms:
 * a slot's object then has its record touched at most once a tick, and an access in between
 * takes the fast path. At most 1/64 of stale_after and 256 ms (a record's touch time lags its
 * object's last access by that at most, under 1% of the idle time that makes an object stale).
 * Written by init. */
#define STAMP_SHIFT_MAX 8
static unsigned stamp_shift;

static inline void set_now(uint32_t now)
{
    tl.now_ms = now;
    tl.clock_key = now >> stamp_shift;
}

static void flush_slots(void);
static void flush_frees(void);
static void slots_forget(uintptr_t addr, uint64_t size, struct heap_history *moving);

static void flush_tallies(void)
{
    atomic_fetch_add_explicit(&leak_accesses_sampled, tl.sampled, memory_order_relaxed);
    /* modulo 2^64: a negative slot's accesses may reach nonheap a flush after they were sampled */
    atomic_fetch_add_explicit(&leak_accesses_heap, (uint64_t)tl.sampled - tl.nonheap, memory_order_relaxed);
    tl.sampled = tl.nonheap = 0;
}

static inline uint64_t clock_ms(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * 1000 + (uint32_t)t->tv_nsec / 1000000u;   /* unsigned: a multiply, no sign fix-up */
}

static uint32_t wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    return (uint32_t)(clock_ms(&t) - start_ms);
}

/* The active clock (clock=active): wall time, except that an interval between two checkpoints
 * counts only as long as the process's CPU time advanced in it. Checkpoints are taken by the
 * first reading of the clock at least ACTIVE_TICK_MS after the last one: so a pause, in which
 * nothing reads the clock, ends in a checkpoint whose CPU time has hardly moved. Between
 * checkpoints a reading is the last checkpoint's value plus the wall time since (the process is
 * running: it reads the clock), capped below one tick, so the clock never goes back; a pause
 * costs at most one tick. One CPU-time system call per tick, not per reading. */
#define ACTIVE_TICK_MS 100
static _Atomic uint64_t active_checkpoint;   /* wall_ms << 32 | active_ms, by the tick's taker */
static uint64_t active_cpu_ns;               /* process CPU time at the checkpoint, under active_lock */
static atomic_flag active_lock = ATOMIC_FLAG_INIT;

static uint64_t process_cpu_ns(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0)
        return 0;
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Wall time since the checkpoint; 0 for a reading taken just before another thread's checkpoint. */
static inline uint32_t wall_since(uint32_t wall, uint64_t checkpoint)
{
    uint32_t since = wall - (uint32_t)(checkpoint >> 32);
    return since > UINT32_MAX - 60000 ? 0 : since;
}

/* Only with leak.clock=active. */
static COLD uint32_t active_ms(uint32_t wall)
{
    uint64_t c = atomic_load_explicit(&active_checkpoint, memory_order_acquire);
    uint32_t since = wall_since(wall, c), base = (uint32_t)c;
    if (since < ACTIVE_TICK_MS)
        return base + since;
    if (atomic_flag_test_and_set_explicit(&active_lock, memory_order_acquire))
        return base + ACTIVE_TICK_MS - 1;   /* another thread is taking the checkpoint */
    c = atomic_load_explicit(&active_checkpoint, memory_order_relaxed);
    since = wall_since(wall, c);
    base = (uint32_t)c;
    if (since >= ACTIVE_TICK_MS) {
        uint64_t cpu = process_cpu_ns();
        /* A forked child's CPU time starts again from zero: no time counted across the fork. */
        uint64_t cpu_ms = cpu > active_cpu_ns ? (cpu - active_cpu_ns) / 1000000 : 0;
        uint32_t step = cpu_ms < since ? (uint32_t)cpu_ms : since;
        if (step < ACTIVE_TICK_MS)
            step = ACTIVE_TICK_MS;          /* readings before this one went up to a tick */
        active_cpu_ns = cpu;
        base += step;
        since = 0;
        atomic_store_explicit(&active_checkpoint, (uint64_t)wall << 32 | base, memory_order_release);
    }
    atomic_flag_clear_explicit(&active_lock, memory_order_release);
    return base + since;
}

uint32_t leak_now_ms(void)
{
    /* Read at every allocation and free: a vDSO read of the coarse clock, 5 ns here. Gating it
     * on the time-stamp counter (reuse the last reading for half a millisecond of ticks) ran
     * fewer instructions but took longer: rdtsc cost 10 ns on these virtual machines. */
    uint32_t wall = wall_ms();
    return __builtin_expect(leak_cfg.active_clock, 0) ? active_ms(wall) : wall;
}

/* ---- options (tools/leak/options.inc; the runtime fills leak_opts before init) ---- */
#define VIGIL_OPTSET_TOOL leak
#define VIGIL_OPTSET_ROWS "tools/leak/options.inc"
#include "optset.h"

static struct leak_options leak_opts;   /* written by the runtime before init; read by init */

/* A value the table's type allows but the tool cannot use: the table's default, with a message. */
static double in_range(const char *key, double v, double lo, double hi)
{
    if (v >= lo && v <= hi)
        return v;
    double def = 0;
    for (size_t i = 0; i < leak_option_set.count; i++)
        if (strcmp(leak_option_set.table[i].name, key) == 0)
            vigil_parse_decimal(leak_option_set.table[i].def, &def);
    vigil_tool_message(&leak_tool, "leak.%s=%g: expected a number in [%g, %g]; using %g", key, v, lo, hi, def);
    return def;
}

static void read_options(void)
{
    leak_cfg.stale_after_s = in_range("stale_after", leak_opts.stale_after, 0, 4e6);
    leak_cfg.stale_after_ms = (uint32_t)(leak_cfg.stale_after_s * 1000);
    leak_cfg.stale_allocs = (uint64_t)in_range("stale_allocs", leak_opts.stale_allocs, 0, 4e9);
    leak_cfg.gap_factor = in_range("gap_factor", leak_opts.gap_factor, 0, 1e6);
    leak_cfg.snapshot_every_ms = (uint32_t)(in_range("snapshot_every", leak_opts.snapshot_every, 0, 4e6) * 1000);
    leak_cfg.depth = (uint32_t)in_range("depth", leak_opts.depth, 1, VIGIL_MAX_STACK);
    leak_cfg.reach = leak_opts.reach;
    leak_cfg.use_signal = leak_opts.signal;
    leak_cfg.active_clock = strcmp(leak_opts.clock, "active") == 0;
    stamp_shift = 0;
    while (stamp_shift < STAMP_SHIFT_MAX && (2u << stamp_shift) * 64 <= leak_cfg.stale_after_ms)
        stamp_shift++;
}

/* ---- snapshots on demand ---- */
/* Why the next report written while running is: LEAK_REASON_SIGNAL while SIGUSR2's is being
 * written, else the program's own vigil_flush_report (api). Written by the thread that asks. */
static _Atomic int flush_reason = LEAK_REASON_API;

/* SIGUSR2: a report of the running program (leak.json with a snapshot, and reachability while
 * the process has one thread) written now when the signal interrupted a safe place (a sleeping
 * or computing program), else at the next allocation or free. */
/* When the signal came at an unsafe moment, a one-shot timer sends it again a little later, so
 * that a program that waits without allocating still gets its report (the next allocation or
 * free takes it first). Created by init with the SIGUSR2 handler; retry_timer_ok says so. */
static timer_t retry_timer;
static int retry_timer_ok;
#define RETRY_NS (2 * 1000 * 1000)

static void on_sigusr2(int sig)
{
    (void)sig;
    atomic_store(&flush_reason, LEAK_REASON_SIGNAL);
    int written = vigil_signal_report();
    atomic_store(&flush_reason, LEAK_REASON_API);
    if (written == 0) {
        atomic_store_explicit(&snapshot_requested, 1, memory_order_relaxed);
        if (retry_timer_ok)
            timer_settime(retry_timer, 0, &(struct itimerspec){.it_value = {0, RETRY_NS}}, NULL);
    }
}

static COLD void snapshot_now(enum leak_reason reason)
{
    flush_frees();
    flush_site_tallies();
    struct leak_snapshot s;
    if (leak_snapshot_take(reason, 0, 0, &s) == 0)
        leak_snapshot_release(&s);
}

/* A SIGUSR2 that came at an unsafe moment: its report, from a hook. */
static COLD void signal_report_now(void)
{
    atomic_store(&flush_reason, LEAK_REASON_SIGNAL);
    vigil_signal_report();   /* outside the signal's handler: at once */
    atomic_store(&flush_reason, LEAK_REASON_API);
}

/* Called from the allocation hooks: cheap unless a snapshot is due. */
static inline void maybe_snapshot(uint32_t now)
{
    if (__builtin_expect(atomic_load_explicit(&snapshot_requested, memory_order_relaxed), 0) &&
        atomic_exchange(&snapshot_requested, 0)) {
        signal_report_now();
        return;
    }
    uint32_t due = atomic_load_explicit(&next_snapshot_ms, memory_order_relaxed);
    if (__builtin_expect(leak_cfg.snapshot_every_ms && (int32_t)(now - due) >= 0, 0) &&
        atomic_compare_exchange_strong(&next_snapshot_ms, &due, now + leak_cfg.snapshot_every_ms))
        snapshot_now(LEAK_REASON_TIMER);
}

int vigil_leak_snapshot(void)
{
    if (!atomic_load(&enabled))
        return -1;
    flush_frees();
    flush_site_tallies();
    struct leak_snapshot s;
    if (leak_snapshot_take(LEAK_REASON_API, 0, 0, &s) != 0)
        return -1;
    int n = s.stale_objects > INT32_MAX ? INT32_MAX : (int)s.stale_objects;
    leak_snapshot_release(&s);
    return n;
}

/* ---- hooks ---- */

/* realloc moves. The runtime reports a realloc as the old block's release followed by the new
 * block, both from the one call (vigil_alloc_is_realloc says so). The release keeps the old
 * object's history; the allocation that follows it in the same realloc inherits it: allocation
 * site, age and access history. (Before, every free captured the stack above it so that the
 * allocation could recognise its own call site there: a walk of six frames per free.) */
struct released {
    int valid;
    struct heap_history history;
};
static __thread struct released tl_released;   /* this thread's realloc in progress, if any */

/* The block a realloc moved (or resized) to: the object lives on, with its history; its site
 * counts the bytes it has now, and no allocation. */
static COLD void alloc_moved(void *ptr, size_t size, uint32_t now, uint32_t seq)
{
    struct site_tally *t = tally_of(tl_released.history.site);
    t->bytes_allocated += size;
    tally_done(t);
    struct heap_obj *o = heap_insert((uintptr_t)ptr, size, tl_released.history.site, now, seq);
    if (o)
        heap_inherit(o, &tl_released.history);
    atomic_fetch_add_explicit(&leak_realloc_moves, 1, memory_order_relaxed);
}

/* The allocation site of an event the runtime delivered without a stack. */
static COLD uint32_t site_of_own_stack(void)
{
    struct vigil_stack own;
    vigil_capture_stack(&own, leak_cfg.depth);
    return leak_site_intern(&own, leak_cfg.depth);
}

static void leak_on_alloc(void *ptr, size_t size, const struct vigil_stack *where)
{
    flush_frees();   /* the allocation may reuse a queued address */
    int moved = tl_released.valid && vigil_alloc_is_realloc();
    tl_released.valid = 0;
    if (!ptr)
        return;
    uint32_t seq = (uint32_t)heap_count_up(&leak_alloc_clock);
    uint32_t now = leak_now_ms();
    set_now(now);
    if (__builtin_expect(moved, 0)) {
        alloc_moved(ptr, size, now, seq);
    } else {
        uint32_t site = __builtin_expect(where && where->depth, 1) ? leak_site_intern(where, leak_cfg.depth)
                                                                  : site_of_own_stack();
        struct site_tally *t = tally_of(site);
        t->allocs++;
        t->bytes_allocated += size;
        tally_done(t);
        heap_insert((uintptr_t)ptr, size, site, now, seq);
    }
    maybe_snapshot(now);
}

/* Frees, batched while the process has one thread. An object freed long after its allocation
 * has its record, and often its hash bucket, out of cache: looking them up (remove_object) was
 * lua's largest cost of the tool per free. A free is queued with a prefetch of its bucket; the
 * queue is emptied before anything that needs the model as it stands (an allocation, which may
 * get a queued address back; a realloc's release; a free while other threads run; any thread
 * event, VIGIL_THREAD_CREATE among them, before the new thread can allocate; a snapshot; the
 * exit), the records of the whole batch prefetched before the first removal. An access to a
 * queued object (a use after free) meanwhile touches its record as if it were live. The
 * addresses are kept bit-inverted: the exit scan reads TLS as roots. */
#define FREE_BATCH 32
#define FREE_CHECK_EVERY 64
static __thread struct {
    uint32_t n;
    uintptr_t inverted[FREE_BATCH];
} tl_frees;

static void free_now(uintptr_t ptr, int realloc_release)
{
    /* Only a realloc's release needs the object's access history (its next allocation inherits
     * it); a plain free reads the record's first line alone. */
    struct heap_history plain, *h = realloc_release ? &tl_released.history : &plain;
    if (realloc_release ? heap_remove_history(ptr, h) : heap_remove(ptr, &h->site, &h->size)) {
        slots_forget(ptr, h->size, realloc_release ? h : NULL);
        if (realloc_release)
            tl_released.valid = 1;   /* a queued free flushed meanwhile leaves it alone */
    }
}

static void flush_frees(void)
{
    uint32_t n = tl_frees.n;
    if (!n)
        return;
    /* A lone free (a program that frees and allocates in turn) has nothing to overlap its
     * record's fetch with: removed at once. */
    for (uint32_t i = 0; n > 1 && i < n; i++)
        heap_prefetch_record(~tl_frees.inverted[i]);
    for (uint32_t i = 0; i < n; i++)
        free_now(~tl_frees.inverted[i], 0);
    tl_frees.n = 0;
}

static void leak_on_free(void *ptr)
{
    tl_released.valid = 0;
    if (!ptr)
        return;
    int realloc_release = vigil_alloc_is_realloc();
    if (!realloc_release && heap_one_thread()) {
        /* The buckets are prefetched once a batch forms: a lone free (a program that frees and
         * allocates in turn) is removed at the next allocation, too soon for a prefetch to
         * help, and its hash would be computed twice. */
        uint32_t n = tl_frees.n;
        if (n) {
            if (n == 1)
                heap_prefetch_bucket(~tl_frees.inverted[0]);
            heap_prefetch_bucket((uintptr_t)ptr);
        }
        tl_frees.inverted[n] = ~(uintptr_t)ptr;
        if ((tl_frees.n = n + 1) == FREE_BATCH)
            flush_frees();
    } else {
        flush_frees();
        free_now((uintptr_t)ptr, realloc_release);
    }
    /* The thread's clock as its last allocation or batch of samples read it: a snapshot falls due
     * that much late at most, and a free reads no clock (bc with the tool: 0.9% of its time in
     * clock reads before, 0.4% now). Every allocation looks for a due snapshot; a free, one in
     * FREE_CHECK_EVERY (a program that only frees for a while is that many frees late). */
    if (__builtin_expect(++tl.frees_unchecked >= FREE_CHECK_EVERY, 0)) {
        tl.frees_unchecked = 0;
        if (leak_cfg.snapshot_every_ms || atomic_load_explicit(&snapshot_requested, memory_order_relaxed))
            maybe_snapshot(tl.now_ms);
    }
}

/* Sampled accesses are by far the most frequent event (tens of millions in a burst-heavy run),
 * and bursts touch the same few objects again and again. Each thread keeps a small direct-mapped
 * cache of the objects it touched last (slot by 256-byte granule of the address), and each
 * slot remembers the tick of the tool clock of its last touch (its stamp, set_now), and with
 * stale_allocs the allocation clock too. An access that falls in a slot's object while the
 * stamp holds has nothing new to tell the record (its touch time is already of this tick;
 * ticks of a few ms, not 1, so that a program running slowly, under valgrind say, does not
 * find a new tick at every read of the clock and take the slow path): that path is a few
 * compares in thread-local memory, and the access's site is kept in the slot until the slot is
 * flushed (refilled, its object freed, thread exit) or its stamp expires. Otherwise the slow
 * path looks the object up, touches the record and refills the slot.
 * - The slot must still name a live object. While the process has one thread, every free runs
 *   here and clears the freed object's slots (slots_forget), so the fast path does not read the
 *   record: that read was a cache miss on a third of the tool's accesses in sqlite3. With other
 *   threads, which free objects too, the fast path checks that the slot's record still holds an
 *   object that starts at the slot's start and covers the address (a freed object's record has
 *   start 0; a recycled one, another start, or the same start when the new object is there).
 *   Before, the allocation clock in every stamp stood for that check: lua and sqlite3 allocate
 *   between most batches of samples, so most accesses took the slow path.
 * - With stale_allocs, idleness is counted in allocations: the stamp includes the allocation
 *   clock, so that the first access after an allocation stores it in the record.
 * - A page entirely outside the bounds of every object seen (stack, globals) gets a negative
 *   slot pointing at tl.outside, valid while the page stays outside the bounds (heap.h); with
 *   one thread, until the stamp expires (an object allocated in such a page since then has its
 *   allocation time as its touch until the next tick).
 * - The tool clock is read at the start of a batch once CLOCK_EVERY accesses have gone by since
 *   the last read (and on every allocation of the thread): a touch time is at most that many
 *   samples plus one batch and one tick old, far below stale_after. The allocation clock is read once
 *   per batch too, so the fast path is the slot's compares and two thread-local stores.
 * - Counters: sampled accesses are counted by batches, heap accesses as the sampled ones minus
 *   the misses; each slot counts the accesses to its object for the allocation site's (lossy)
 *   tally, added when the slot is refilled, at a flush and at thread exit. */
static inline uint64_t stamp_of(uint64_t seq)
{
    return (leak_cfg.stale_allocs ? seq << 32 : 0) ^ tl.clock_key;
}

/* Whether slot i still names the object (or the outside page) it was filled with. */
static inline int slot_holds(unsigned i, uintptr_t addr)
{
    const struct access_slot *sl = &tl.slot[i];
    const struct heap_obj *o = tl.slot_obj[i];
    if (o == &tl.outside)
        return !heap_maybe_overlaps(-sl->neg_start, -sl->neg_start + 4096);
    uintptr_t start = atomic_load_explicit(&o->addr, memory_order_relaxed);
    uint64_t size = atomic_load_explicit(&o->size, memory_order_relaxed);
    return start + sl->neg_start == 0 && addr - start < (size ? size : 1);
}

/* Add slot i's hits to the tallies, and give its object the last hit's access site. */
static void slot_flush_hits(unsigned i)
{
    struct access_slot *sl = &tl.slot[i];
    uint32_t hits = sl->hits;
    if (!hits)
        return;
    sl->hits = 0;
    if (tl.slot_obj[i] == &tl.outside) {
        tl.nonheap += (uint32_t)hits;
        return;
    }
    /* With one thread the slot is known to hold its object (slots_forget), and the store goes
     * without reading the record, whose line is seldom in cache by the time a slot is refilled. */
    if (sl->len && (heap_one_thread() || slot_holds(i, -sl->neg_start)))
        atomic_store_explicit(&tl.slot_obj[i]->access_site, sl->last, memory_order_relaxed);
    struct leak_site *s = leak_site_get(tl.slot_site[i]);
    if (s)   /* lossy counter: a load and a store, no lock prefix */
        atomic_store_explicit(&s->accesses, atomic_load_explicit(&s->accesses, memory_order_relaxed) + hits,
                              memory_order_relaxed);
}

static void flush_slots(void)
{
    for (unsigned i = 0; i < (1u << SLOT_BITS); i++)
        slot_flush_hits(i);
}

/* The access missed its slot, or the slot's stamp is older than the batch's: look the object up,
 * touch its record and refill the slot. */
__attribute__((noinline)) static void access_slow(uintptr_t addr, vigil_site_t site, unsigned i, uint32_t seq,
                                                  uint64_t stamp)
{
    struct access_slot *sl = &tl.slot[i];
    struct heap_obj *o = tl.slot_obj[i];
    if (!(sl->len && addr + sl->neg_start < sl->len && o != &tl.outside && slot_holds(i, addr)))
        o = NULL;
    if (!o) {
        uintptr_t page = addr & ~(uintptr_t)4095;
        int inside = heap_maybe_overlaps(page, page + 4096);
        o = inside ? heap_find(addr) : NULL;
        if (!o && inside) {
            tl.nonheap++;
            return;
        }
        slot_flush_hits(i);
        if (o) {
            uint64_t size = atomic_load_explicit(&o->size, memory_order_relaxed);
            sl->neg_start = -atomic_load_explicit(&o->addr, memory_order_relaxed);
            sl->len = size ? size : 1;
            tl.slot_obj[i] = o;
            tl.slot_site[i] = atomic_load_explicit(&o->site_flags, memory_order_relaxed) & HEAP_SITE_MASK;
        } else {   /* the whole page lies outside the heap: a negative slot */
            sl->neg_start = -page;
            sl->len = 4096;
            tl.slot_obj[i] = &tl.outside;
            sl->stamp = stamp;
            tl.slot[i].hits++;
            return;
        }
    }
    /* The fast path does not look at the count: past 2^31 (a slot hit all the time, its stamp
     * renewed here each tick) it goes to the tallies. */
    if (__builtin_expect(++tl.slot[i].hits >= 1u << 31, 0))
        slot_flush_hits(i);
    tl.slot[i].last = site;
    heap_touch(o, tl.now_ms, seq, site);
    sl->stamp = stamp;
}

/* Empty slot i without touching its record, which may no longer be its object's: its hits
 * still go to the tallies, its pending last site is dropped (emptied first, the slot gets none). */
static void slot_drop(unsigned i)
{
    tl.slot[i].len = 0;
    slot_flush_hits(i);
}

/* The object [addr, addr + size) was freed by this thread: its slots let go of its record, which
 * the next allocation may reuse for another object. While the process has one thread, frees
 * happen here only, and the fast path relies on this instead of reading the record. A realloc's
 * release passes the history that the moved object inherits: it gets the last hit's site. */
static void slots_forget(uintptr_t addr, uint64_t size, struct heap_history *moving)
{
    uintptr_t g = addr >> SLOT_SHIFT, last = (addr + (size ? size : 1) - 1) >> SLOT_SHIFT;
    if (last - g >= (1u << SLOT_BITS))
        last = g + (1u << SLOT_BITS) - 1;
    for (; g <= last; g++) {
        unsigned i = g & ((1u << SLOT_BITS) - 1);
        const struct access_slot *sl = &tl.slot[i];
        if (sl->neg_start == -addr && tl.slot_obj[i] != &tl.outside) {
            if (moving && tl.slot[i].hits)
                moving->access_site = tl.slot[i].last;
            slot_drop(i);
        }
    }
}

/* The loop of leak_on_accesses, inlined once per value of one_thread. */
static inline __attribute__((always_inline)) void accesses_loop(const struct vigil_access *accesses, uint32_t n,
                                                                uint32_t seq, uint64_t stamp, int one_thread)
{
    for (uint32_t k = 0; k < n; k++) {
        uintptr_t a = (uintptr_t)accesses[k].addr;
        vigil_site_t site = accesses[k].site;
        unsigned i = (a >> SLOT_SHIFT) & ((1u << SLOT_BITS) - 1);
        struct access_slot *sl = &tl.slot[i];
        if (__builtin_expect(a + sl->neg_start < sl->len && sl->stamp == stamp &&
                             (one_thread || slot_holds(i, a)), 1)) {
            sl->hits++;
            sl->last = site;
            continue;
        }
        access_slow(a, site, i, seq, stamp);
    }
}

/* A batch of sampled accesses (the runtime buffers them per thread): the loop over the batch is
 * here, so each access costs the cache lookup alone, with no call; the clocks are read once per
 * batch. */
static void leak_on_accesses(const struct vigil_access *accesses, uint32_t n)
{
    tl.since_clock += n;
    if (tl.since_clock >= CLOCK_EVERY) {
        tl.since_clock = 0;
        set_now(leak_now_ms());
    }
    tl.sampled += n;
    if (__builtin_expect(tl.sampled >= FLUSH_EVERY, 0))
        flush_tallies();
    uint32_t seq = (uint32_t)atomic_load_explicit(&leak_alloc_clock, memory_order_relaxed);
    uint64_t stamp = stamp_of(seq);
    /* Two copies of the loop: with one thread the fast path has no test of it. */
    if (heap_one_thread())
        accesses_loop(accesses, n, seq, stamp, 1);
    else
        accesses_loop(accesses, n, seq, stamp, 0);
}

static void leak_on_thread(enum vigil_thread_op op, uint64_t thread_id)
{
    (void)thread_id;
    if (op == VIGIL_THREAD_FORK_CHILD)
        heap_after_fork();   /* before anything here takes a lock of the model */
    flush_frees();
    if (op == VIGIL_THREAD_START)
        leak_thread_started();
    else if (op == VIGIL_THREAD_EXIT) {
        flush_slots();
        flush_tallies();
        flush_site_tallies();
        leak_thread_exited();
    } else if (op == VIGIL_THREAD_FORK_CHILD) {
        /* The child has one thread, so its access fast path (and a flush) would trust its
         * slots: objects the parent's other threads freed may still sit in them. */
        for (unsigned i = 0; i < (1u << SLOT_BITS); i++)
            slot_drop(i);
    }
}

static int leak_init(void)
{
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &start);
    start_ms = clock_ms(&start);
    read_options();
    active_cpu_ns = process_cpu_ns();
    if (heap_init() != 0 || leak_sites_init() != 0) {
        vigil_tool_message(&leak_tool, "cannot map memory for the heap model; leak tool disabled");
        return -1;
    }
    atomic_store(&next_snapshot_ms, leak_cfg.snapshot_every_ms);
    vigil_want_alloc_stack(leak_cfg.depth);
    /* The program keeps SIGUSR2 where it has a handler. */
    if (leak_cfg.use_signal && vigil_on_signal(SIGUSR2, on_sigusr2) == 0) {
        struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR2};
        retry_timer_ok = timer_create(CLOCK_MONOTONIC, &ev, &retry_timer) == 0;
    }
    atomic_store(&enabled, 1);
    return 0;
}

/* What threads' buffers still hold (frees, slots, tallies) into the heap model, before a report. */
static void flush_pending(void)
{
    flush_frees();
    flush_slots();
    flush_tallies();
    flush_site_tallies();
}

/* A report while the program runs (SIGUSR2, vigil_flush_report): leak.json of the moment. The
 * reachability scan only while the process has one thread: other threads' registers are not
 * read, and mid-run they hold pointers that are nowhere else. */
static void leak_flush(void)
{
    if (!atomic_load(&enabled))
        return;
    flush_pending();
    struct leak_reach_stats reach;
    memset(&reach, 0, sizeof reach);
    if (leak_cfg.reach && heap_one_thread())
        leak_reach_run(&reach);
    else if (leak_cfg.reach)
        reach.error = "not done while the program runs with other threads (only at exit)";
    struct leak_snapshot s;
    int failed = leak_snapshot_take((enum leak_reason)atomic_load(&flush_reason), reach.done, reach.scan_start_ms, &s);
    if (failed) {
        vigil_tool_message(&leak_tool, "no leak.json in this report: %s", failed == LEAK_SNAPSHOT_NO_MEMORY
                                           ? "no memory for the snapshot (mmap failed)"
                                           : "another snapshot was in progress");
        return;
    }
    leak_report_write(&s, &reach, 1);
    leak_snapshot_release(&s);
}

static void leak_fini(void)
{
    if (!atomic_load(&enabled))
        return;
    flush_pending();
    struct leak_reach_stats reach;
    memset(&reach, 0, sizeof reach);
    if (leak_cfg.reach)
        leak_reach_run(&reach);
    struct leak_snapshot final;
    int failed = leak_snapshot_take(LEAK_REASON_EXIT, reach.done, reach.scan_start_ms, &final);
    if (failed) {
        vigil_tool_message(&leak_tool, failed == LEAK_SNAPSHOT_NO_MEMORY
                                           ? "no final snapshot (no memory for it: mmap failed)"
                                           : "no final snapshot (another one was in progress)");
        memset(&final, 0, sizeof final);
    }
    leak_report_write(&final, &reach, 0);
    if (final.reported_objects)
        vigil_tool_summary(&leak_tool, "%llu bytes in %llu objects leaked (%llu unreachable at exit, %llu stale)",
                           (unsigned long long)final.reported_bytes, (unsigned long long)final.reported_objects,
                           (unsigned long long)final.unreachable_objects, (unsigned long long)final.stale_objects);
    leak_snapshot_release(&final);
}

struct vigil_tool leak_tool = {
    .api_version = VIGIL_TOOL_API_VERSION,
    .name = "leak",
    .description = "memory leaks: stale objects (sampled last access) and unreachable objects at exit",
    .events = VIGIL_EV_ALLOC | VIGIL_EV_FREE | VIGIL_EV_THREAD | VIGIL_EV_ACCESS,
    .init = leak_init,
    .fini = leak_fini,
    .on_alloc = leak_on_alloc,
    .on_free = leak_on_free,
    .on_thread = leak_on_thread,
    .on_accesses = leak_on_accesses,
    .options = &leak_option_set,
    .option_values = &leak_opts,
    .flush = leak_flush,
    .bursts = VIGIL_BURSTS_NEEDED,
};
VIGIL_REGISTER_TOOL(leak_tool);
