/* race: data races by a lockset refined on sampled accesses (seed 000, Figure 5), combined
 * with happens-before (a hybrid, in the manner of RaceTrack and of ThreadSanitizer v1's hybrid
 * mode). Lock acquisitions and releases, thread creation and joins, allocations and frees
 * arrive always; loads and stores only from bursts, in batches.
 *
 * Threads. Each thread gets a number (1 = the first) and, while it lives, one of 64 clock
 * slots (racecore.h); a thread beyond 64 live ones has none and is checked by lockset alone.
 * Edges: creation -> start (the creator leaves its clock in a slot of its own; the new thread,
 * which cannot know its creator, joins the clocks of every creator with a creation pending),
 * exit -> join (the exiting thread leaves its clock under its pthread id), and, with
 * race.hb_locks=1, release -> acquire of the same lock (a rwlock has a second clock for its
 * readers' releases, which only a writer's acquisition joins). Condition-variable hand-offs
 * go through their mutex and are ordered by it. With race.hb_sync=1, the synchronization
 * events of tool.h (VIGIL_EV_SYNC: atomic release/acquire, semaphores, barriers, pthread_once,
 * condition-variable signal -> wake) are edges too: a release joins the thread's clock into
 * the object's (a table like the locks', keyed by address), an acquire joins the object's into
 * the thread's. Accesses of atomic instructions (VIGIL_ACCESS_ATOMIC) are recorded and race
 * with plain accesses, never with each other.
 *
 * Accesses arrive late. The runtime buffers a burst's accesses and hands them over when the
 * buffer fills, the burst ends or before an allocation, a free or a thread event, but not
 * before a lock event: a batch may hold accesses from before and after lock operations. So a
 * batch is taken as one window since the last point where the buffer was known to be empty:
 * its accesses are recorded with the thread's epoch at the window's start (the earliest they
 * can have) and the union of the locks held in the window, and checked against the thread's
 * present clock. And as one thread's batch may be checked after a later access of another
 * thread was recorded, a record names a snapshot of its thread's clock, and an access that
 * snapshot knew is ordered before it (before_record). A batch begun before a cell was reset
 * (its block allocated again) skips the cell. These choices can only hide races, never invent
 * them. A runtime that delivers the buffered accesses before each lock event
 * (VIGIL_TOOL_ACCESSES_BEFORE_LOCKS defined by include/vigil/tool.h) makes every window end at
 * the lock event, and the checks exact.
 *
 * OpenMP (LLVM's libomp): ompt.c turns the OMPT callbacks into synchronization and lock events
 * of the tool's own (race_sync_exact, race_lock_exact), after the thread's buffered accesses.
 *
 * Single-threaded programs: until the first pthread_create every hook returns at once. */
#include "raceint.h"
#include "filter.h"

#include <vigil/race.h>

#include <pthread.h>
#include <string.h>

#define VIGIL_OPTSET_TOOL race
#define VIGIL_OPTSET_ROWS "tools/race/options.inc"
#include "optset.h"

static struct race_options race_opts;     /* written by the runtime before init */
struct race_config race_cfg;              /* from race_opts, by init */
struct race_stats race_stats;             /* tallies, relaxed atomics */
int race_multi;                           /* see raceint.h */
static int race_enabled;                  /* set by init when it succeeded (the API's test) */

/* ---- locks: id = index + 1. Their clocks are stored in blocks of eight slots, the blocks of
 * slots 0-7 of all locks first: with up to eight threads a lock's clock is one cache line, and
 * a program with many locks touches little memory ---- */
#define LOCK_BITS 14
#define NLOCKS (1u << LOCK_BITS)           /* hashed entries; entry NLOCKS stands for the rest */
#define LOCK_STRIDE (NLOCKS + 1)
#define BLOCK 8
struct lock_entry {
    uintptr_t addr;                        /* 0: free; set once by compare-and-swap */
    uint32_t lock;                         /* guards its clocks where the lock itself does not:
                                              readers' releases, the overflow entry */
    uint32_t shared;                       /* released from read mode once: lock_rvc is in use */
};
static struct lock_entry *locks;           /* LOCK_STRIDE entries, mapped by init; addr by lock_index */
static uint64_t *lock_vc, *lock_rvc;       /* writers' / readers' releases, by block (vc_block) */
/* Synchronization objects (on_sync): the same layout, apart from the locks (their ids never
 * enter a lockset, and a release may come from many threads at once: under the entry's lock). */
static struct lock_entry *syncs;           /* LOCK_STRIDE entries, mapped by init; addr by sync_index */
static uint64_t *sync_vc;                  /* releases, by block (vc_block) */

static inline uint64_t *vc_block(uint64_t *base, unsigned block, unsigned k)
{
    return base + ((size_t)block * LOCK_STRIDE + k) * BLOCK;
}

/* The thread's clock joined with lock k's (an acquisition), or published into it (a release),
 * for the slots in use. */
static void lock_join(struct race_clock *c, uint64_t *base, unsigned k, unsigned n)
{
    for (unsigned b = 0; b * BLOCK < n; b++)
        race_clock_join(c, b * BLOCK, vc_block(base, b, k), n - b * BLOCK < BLOCK ? n - b * BLOCK : BLOCK);
}

static void lock_publish(const struct race_clock *c, uint64_t *base, unsigned k, unsigned n)
{
    for (unsigned b = 0; b * BLOCK < n; b++)
        race_clock_publish(c, b * BLOCK, vc_block(base, b, k), n - b * BLOCK < BLOCK ? n - b * BLOCK : BLOCK);
}

/* addr's entry in table (locks or syncs), made on first use; NLOCKS when the table has no room
 * near its home: every address beyond the table shares that entry (one lock: more protection;
 * one synchronization object: more ordering; fewer reports either way). *added: a new entry. */
static unsigned table_index(struct lock_entry *table, uintptr_t addr, int *added)
{
    size_t home = (size_t)race_hash64(addr);
    *added = 0;
    for (unsigned i = 0; i < 64; i++) {
        unsigned k = (unsigned)((home + i) & (NLOCKS - 1));
        uintptr_t cur = __atomic_load_n(&table[k].addr, __ATOMIC_ACQUIRE);
        if (cur == addr)
            return k;
        if (cur)
            continue;
        if (__atomic_compare_exchange_n(&table[k].addr, &cur, addr, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            *added = 1;
            return k;
        }
        if (cur == addr)
            return k;
    }
    return NLOCKS;
}

static unsigned lock_index(uintptr_t addr)
{
    int added;
    unsigned k = table_index(locks, addr, &added);
    if (added)
        RACE_COUNT(locks, 1);
    else if (k == NLOCKS)
        RACE_COUNT(locks_untracked, 1);
    return k;
}

static unsigned sync_index(uintptr_t addr)
{
    int added;
    unsigned k = table_index(syncs, addr, &added);
    if (added)
        RACE_COUNT(sync_objects, 1);
    else if (k == NLOCKS)
        RACE_COUNT(sync_untracked, 1);
    return k;
}

uintptr_t race_lock_address(uint16_t id)
{
    if (!locks || id == 0 || id > NLOCKS)
        return 0;
    return __atomic_load_n(&locks[id - 1].addr, __ATOMIC_RELAXED);
}

/* ---- threads ---- */
#define MAX_HELD 32
struct held {
    uint16_t id;
    uint8_t shared;                        /* a rwlock held for reading */
    uint32_t count;                        /* recursive acquisitions */
};
enum { T_UNKNOWN, T_LIVE, T_EXITED };
struct race_thread {
    int state;
    int started;                           /* the creation clock was joined */
    uint32_t tid;
    uint64_t pthread;
    struct race_clock clk;
    race_lockset held_any, held_write;     /* now */
    race_lockset win_any, win_write;       /* since the window began */
    uint64_t win_epoch;                    /* own epoch when it began */
    uint32_t win_gen;                      /* race_reset_gen when it began */
    struct race_filter_window fwin;        /* the filter's number for the window (filter.h) */
    unsigned nheld;
    struct held held[MAX_HELD];
    uintptr_t stack_lo, stack_hi;
    /* the last cell step, to skip its repetitions (a loop's accesses in one window) */
    uint64_t last_g, last_epoch;
    race_lockset last_held;
    uint32_t last_site;
    uint8_t last_mask, last_write, last_atomic;
    uint32_t pending_accesses;             /* not yet added to race_stats */
    uint32_t pending_syncs, pending_atomics;   /* sync events, atomic accesses: the same */
    uint32_t snap_seq;                     /* the last snapshot taken (0: none) */
    int clock_changed;                     /* since that snapshot */
};
static __thread struct race_thread tl;

static uint32_t next_tid;                  /* threads numbered so far */
static uint32_t slot_used[RACE_SLOTS];     /* taken by a live thread (compare-and-swap) */
static uint64_t slot_last_epoch[RACE_SLOTS];   /* the last occupant's final epoch, written before it frees the slot */
static uint32_t slot_hw;                   /* highest slot ever taken + 1 */
static uint32_t live_slots;                /* slots taken now (claim_slot, thread_exited) */
static int noslot_said;                    /* the message about threads without a slot was printed */

/* Creation clocks, by creator slot: the creator's clock at its latest creation and how many of
 * its creations no thread has started from yet. Under create_lock. */
static uint32_t create_lock;               /* spin lock of pending */
static struct pending {
    uint32_t count;
    uint64_t vc[RACE_SLOTS];
} pending[RACE_SLOTS];

/* Clocks of exited threads, by pthread id, until joined; the oldest is dropped when full. */
#define EXITS 256
static uint32_t exit_lock;                 /* spin lock of exits and exit_next */
static unsigned exit_next;                 /* the next exit record to (over)write */
static struct exit_rec {
    uint64_t pthread;
    uint32_t used;
    uint64_t vc[RACE_SLOTS];
} exits[EXITS];

/* A filter per clock slot, direct-mapped by granule (filter.h): the thread's last cell step on
 * each granule it met lately, while the step's window holds (the same own epoch, the same locks,
 * no reset anywhere since the window began: race_reset_gen). Checking it reads nothing of the
 * shared table. A later access of the thread to that granule that the step covers is skipped,
 * cell lock and all: any access of another thread that races with it also races with the
 * record, and was checked against it or will be. What is lost: the later access's own site and
 * count (the report names the earlier one), and its record when the history or the table
 * dropped the earlier one meanwhile (another location took the cell over). An acquisition
 * leaves the epoch alone: the records from before it are the more concurrent ones. */
#define FILTER_BITS 11
static struct race_filter_entry *filters;  /* [slot << FILTER_BITS | (g & mask)], mapped by init; a slot's
                                            * rows by its thread (cleared when a thread takes the slot) */

/* Snapshots of threads' clocks, a ring per slot: a record names the snapshot of its thread's
 * clock when it was made (struct race_rec.snap), so that an access checked later than it
 * happened can be found ordered before the record (before_record). A thread takes a snapshot
 * when it records accesses and its clock changed since its last one. An entry is invalid while
 * its seq is 0 (being written) or names another snapshot (overwritten). */
#define SNAPS 64
struct snap {
    uint32_t seq, tid;
    uint64_t vc[RACE_SLOTS];
};
static struct snap *snaps;                 /* [slot * SNAPS + seq % SNAPS], mapped by init */

/* Each slot's thread stack, and whether another thread made a cell in it (a local shared by
 * address): until then the owner's accesses to its own stack skip the table altogether. */
static uintptr_t slot_stack_lo[RACE_SLOTS], slot_stack_hi[RACE_SLOTS];   /* by the slot's thread (relaxed) */
static uint8_t slot_stack_shared[RACE_SLOTS];                            /* set by any thread (relaxed) */
static uintptr_t stacks_lo = UINTPTR_MAX, stacks_hi;   /* bounds of every stack ever seen, by thread_init (relaxed) */

static inline unsigned hw(void)
{
    return __atomic_load_n(&slot_hw, __ATOMIC_ACQUIRE);
}

static inline uint64_t own_epoch(const struct race_thread *th)
{
    return th->clk.slot < RACE_SLOTS ? th->clk.vc[th->clk.slot] : 0;
}

static inline void window_restart(struct race_thread *th)
{
    th->win_epoch = own_epoch(th);
    th->win_any = th->held_any;
    th->win_write = th->held_write;
    th->win_gen = __atomic_load_n(&race_reset_gen, __ATOMIC_RELAXED);
    race_filter_window_begin(&th->fwin, th->win_epoch, th->win_any, th->win_write, th->win_gen);
    th->last_g = UINT64_MAX;
}

__thread struct race_tally race_tally;   /* raceint.h; this thread's */

void race_flush_tally(void)
{
    struct race_tally t = race_tally;
    memset(&race_tally, 0, sizeof race_tally);
    if (t.checked)
        RACE_COUNT(checked, t.checked);
    if (t.stack_skipped)
        RACE_COUNT(stack_skipped, t.stack_skipped);
    if (t.stale_skipped)
        RACE_COUNT(stale_skipped, t.stale_skipped);
    if (t.evicted)
        RACE_COUNT(evicted, t.evicted);
    if (t.cells)
        RACE_COUNT(cells, t.cells);
    if (t.filtered)
        RACE_COUNT(filtered, t.filtered);
}

static void flush_tallies(struct race_thread *th)
{
    race_flush_tally();
    if (th->pending_accesses) {
        RACE_COUNT(accesses, th->pending_accesses);
        th->pending_accesses = 0;
    }
    if (th->pending_syncs) {
        RACE_COUNT(sync_events, th->pending_syncs);
        th->pending_syncs = 0;
    }
    if (th->pending_atomics) {
        RACE_COUNT(atomic_accesses, th->pending_atomics);
        th->pending_atomics = 0;
    }
}

static uint32_t claim_slot(void)
{
    for (uint32_t s = 0; s < RACE_SLOTS; s++) {
        uint32_t free_ = 0;
        if (__atomic_load_n(&slot_used[s], __ATOMIC_RELAXED) == 0 &&
            __atomic_compare_exchange_n(&slot_used[s], &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            uint32_t h = __atomic_load_n(&slot_hw, __ATOMIC_RELAXED);
            while (h < s + 1 && !__atomic_compare_exchange_n(&slot_hw, &h, s + 1, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
                ;
            uint32_t live = __atomic_add_fetch(&live_slots, 1, __ATOMIC_RELAXED);
            uint64_t max = __atomic_load_n(&race_stats.max_live, __ATOMIC_RELAXED);
            while (live > max && !__atomic_compare_exchange_n(&race_stats.max_live, &max, live, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                ;
            return s;
        }
    }
    return RACE_NOSLOT;
}

static void thread_init(struct race_thread *th)
{
    memset(th, 0, sizeof *th);
    th->tid = __atomic_add_fetch(&next_tid, 1, __ATOMIC_RELAXED);
    RACE_COUNT(threads, 1);
    th->pthread = (uint64_t)pthread_self();
    uint32_t slot = race_cfg.hb ? claim_slot() : RACE_NOSLOT;
    if (race_cfg.hb && slot == RACE_NOSLOT) {
        RACE_COUNT(noslot_threads, 1);
        if (!__atomic_exchange_n(&noslot_said, 1, __ATOMIC_RELAXED))
            vigil_tool_message(&race_tool, "more than %d threads at once: thread %u and later ones beyond %d are "
                               "checked by lockset only (no happens-before)", RACE_SLOTS, th->tid, RACE_SLOTS);
    }
    uint64_t start = slot < RACE_SLOTS ? __atomic_load_n(&slot_last_epoch[slot], __ATOMIC_ACQUIRE) + 1 : 0;
    race_clock_init(&th->clk, slot, start);
    if (slot < RACE_SLOTS && filters && start > 1)   /* the slot had an occupant: its entries must go (the
                                                      * window numbers start again); untouched rows stay unmapped */
        memset(&filters[(size_t)slot << FILTER_BITS], 0, sizeof *filters << FILTER_BITS);
    th->state = T_LIVE;
    th->clock_changed = 1;
    window_restart(th);
    /* Last: pthread_getattr_np may allocate (the events of an API call would come back here). */
    pthread_attr_t attr;
    void *lo;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
            th->stack_lo = (uintptr_t)lo;
            th->stack_hi = (uintptr_t)lo + size;
        }
        pthread_attr_destroy(&attr);
    }
    if (th->stack_hi) {
        uintptr_t lo = __atomic_load_n(&stacks_lo, __ATOMIC_RELAXED), hi = __atomic_load_n(&stacks_hi, __ATOMIC_RELAXED);
        while (th->stack_lo < lo && !__atomic_compare_exchange_n(&stacks_lo, &lo, th->stack_lo, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            ;
        while (th->stack_hi > hi && !__atomic_compare_exchange_n(&stacks_hi, &hi, th->stack_hi, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            ;
    }
    if (slot < RACE_SLOTS) {
        __atomic_store_n(&slot_stack_shared[slot], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&slot_stack_lo[slot], th->stack_lo, __ATOMIC_RELAXED);
        __atomic_store_n(&slot_stack_hi[slot], th->stack_hi, __ATOMIC_RELAXED);
    }
}

/* A cell was made for addr, outside the calling thread's stack: if it lies in another live
 * thread's stack, that thread's own-stack accesses look for cells from now on. */
static void note_foreign_stack(const struct race_thread *th, uintptr_t addr)
{
    if (addr < __atomic_load_n(&stacks_lo, __ATOMIC_RELAXED) || addr >= __atomic_load_n(&stacks_hi, __ATOMIC_RELAXED))
        return;   /* in no thread's stack (the heap, globals): most cells */
    for (unsigned s = 0, n = hw(); s < n; s++)
        if (s != th->clk.slot && addr - __atomic_load_n(&slot_stack_lo[s], __ATOMIC_RELAXED) <
                                     __atomic_load_n(&slot_stack_hi[s], __ATOMIC_RELAXED) -
                                         __atomic_load_n(&slot_stack_lo[s], __ATOMIC_RELAXED) &&
            !__atomic_load_n(&slot_stack_shared[s], __ATOMIC_RELAXED))
            __atomic_store_n(&slot_stack_shared[s], 1, __ATOMIC_RELAXED);
}

static inline struct race_thread *self(void)
{
    struct race_thread *th = &tl;
    if (__builtin_expect(th->state == T_UNKNOWN, 0))
        thread_init(th);
    return th;
}

/* ---- locks held ---- */

static void recompute_held(struct race_thread *th)
{
    uint16_t any[MAX_HELD], wr[MAX_HELD];
    unsigned na = 0, nw = 0;
    for (unsigned i = 0; i < th->nheld; i++) {
        any[na++] = th->held[i].id;
        if (!th->held[i].shared)
            wr[nw++] = th->held[i].id;
    }
    th->held_any = race_ls_make(any, na);
    th->held_write = race_ls_make(wr, nw);
}

/* exact: the runtime delivered this thread's buffered accesses before the event (pthread locks
 * with VIGIL_TOOL_ACCESSES_BEFORE_LOCKS; never the API's announcements, which arrive from the
 * program's code with accesses still buffered). */
static void lock_event(struct race_thread *th, uintptr_t addr, enum vigil_lock_op op, int exact)
{
    unsigned k = lock_index(addr);
    uint16_t id = (uint16_t)(k + 1);
    int clocks = race_cfg.hb && race_cfg.hb_locks && th->clk.slot < RACE_SLOTS;
    unsigned i;
    for (i = 0; i < th->nheld && th->held[i].id != id; i++)
        ;
    if (op == VIGIL_LOCK_RELEASE) {
        int shared = 0;
        if (i < th->nheld) {
            shared = th->held[i].shared;
            if (--th->held[i].count == 0) {
                th->held[i] = th->held[--th->nheld];
                if (th->held_any == RACE_LS_ALL || th->held_write == RACE_LS_ALL) {
                    recompute_held(th);   /* more than four were held */
                } else {
                    th->held_any = race_ls_remove(th->held_any, id);
                    th->held_write = race_ls_remove(th->held_write, id);
                }
            }
        }
        /* the window keeps the lock: accesses before the release may be in it */
        if (clocks) {
            /* The program's lock already keeps an exclusive holder's release apart from other
             * acquisitions (the release is reported before the real one, an acquisition after
             * it); readers release concurrently, and the overflow entry is many locks. */
            int spin = shared || k == NLOCKS;
            if (spin)
                race_spin_lock(&locks[k].lock);
            lock_publish(&th->clk, shared ? lock_rvc : lock_vc, k, hw());
            if (shared && !locks[k].shared)
                __atomic_store_n(&locks[k].shared, 1, __ATOMIC_RELAXED);
            if (spin)
                race_spin_unlock(&locks[k].lock);
            th->clk.vc[th->clk.slot]++;   /* what follows is not covered by this release */
            th->clock_changed = 1;
        }
    } else {
        int shared = op == VIGIL_LOCK_ACQUIRE_SHARED;
        if (i < th->nheld) {
            th->held[i].count++;
        } else if (th->nheld < MAX_HELD) {
            th->held[th->nheld++] = (struct held){.id = id, .shared = (uint8_t)shared, .count = 1};
            th->held_any = race_ls_add(th->held_any, id);
            th->win_any = race_ls_add(th->win_any, id);
            if (!shared) {
                th->held_write = race_ls_add(th->held_write, id);
                th->win_write = race_ls_add(th->win_write, id);
            }
        } else {   /* too many to follow: protected by anything */
            th->held_any = th->held_write = th->win_any = th->win_write = RACE_LS_ALL;
        }
        if (clocks) {
            /* Readers join only the writers' clock, which no one writes while they hold the
             * lock; a writer joins the readers' too, when they all let go. */
            int spin = k == NLOCKS;
            if (spin)
                race_spin_lock(&locks[k].lock);
            lock_join(&th->clk, lock_vc, k, hw());
            if (!shared && __atomic_load_n(&locks[k].shared, __ATOMIC_RELAXED))
                lock_join(&th->clk, lock_rvc, k, hw());
            if (spin)
                race_spin_unlock(&locks[k].lock);
            th->clock_changed = 1;
        }
    }
    th->last_g = UINT64_MAX;
    if (exact)
        window_restart(th);
}

#ifdef VIGIL_TOOL_ACCESSES_BEFORE_LOCKS
#define LOCK_EVENTS_EXACT 1
#else
#define LOCK_EVENTS_EXACT 0
#endif

static void lock_op(const void *lock, enum vigil_lock_op op, int exact)
{
    if (!__atomic_load_n(&race_multi, __ATOMIC_ACQUIRE))
        return;
    struct race_thread *th = self();
    if (th->state == T_LIVE)
        lock_event(th, (uintptr_t)lock, op, exact);
}

static void on_lock(const void *lock, enum vigil_lock_op op)
{
    lock_op(lock, op, LOCK_EVENTS_EXACT);
}

/* ---- synchronization events (tool.h, VIGIL_EV_SYNC) ----
 * A release publishes the thread's clock into the object's and starts a new epoch (what
 * follows is not covered by it); an acquire joins the object's clock. A barrier's rounds share
 * one clock: a thread that leaves round n after another already arrived for round n + 1 joins
 * that arrival too, which can only hide races. The runtime delivered the thread's accesses
 * before the event: the window restarts here. */
static void on_sync(const void *object, enum vigil_sync_op op)
{
    if (!__atomic_load_n(&race_multi, __ATOMIC_ACQUIRE))
        return;
    struct race_thread *th = self();
    if (th->state != T_LIVE)
        return;
    if (++th->pending_syncs >= 4096)
        flush_tallies(th);
    if (race_cfg.hb && race_cfg.hb_sync && th->clk.slot < RACE_SLOTS) {
        unsigned k = sync_index((uintptr_t)object);
        race_spin_lock(&syncs[k].lock);
        if (vigil_sync_is_release(op))
            lock_publish(&th->clk, sync_vc, k, hw());
        else
            lock_join(&th->clk, sync_vc, k, hw());
        race_spin_unlock(&syncs[k].lock);
        if (vigil_sync_is_release(op))
            th->clk.vc[th->clk.slot]++;
        th->clock_changed = 1;
    }
    window_restart(th);
}

/* ---- thread events ---- */

static void thread_created(struct race_thread *th)
{
    uint32_t s = th->clk.slot;
    if (s >= RACE_SLOTS)
        return;   /* no clock to pass on */
    race_spin_lock(&create_lock);
    memcpy(pending[s].vc, th->clk.vc, sizeof pending[s].vc);
    pending[s].count++;
    race_spin_unlock(&create_lock);
    th->clk.vc[s]++;
    th->clock_changed = 1;
}

static void thread_started(struct race_thread *th)
{
    if (th->clk.slot >= RACE_SLOTS)
        return;
    /* The creator is unknown here (the START event names the new thread only): join every
     * pending creation and take one creation from the first creator. Joining too much can
     * only hide races. */
    race_spin_lock(&create_lock);
    int taken = 0;
    for (unsigned s = 0; s < RACE_SLOTS; s++) {
        if (!pending[s].count)
            continue;
        race_clock_join(&th->clk, 0, pending[s].vc, RACE_SLOTS);
        if (!taken) {
            pending[s].count--;
            taken = 1;
        }
    }
    race_spin_unlock(&create_lock);
    th->clock_changed = 1;
}

static void thread_exited(struct race_thread *th)
{
    uint32_t s = th->clk.slot;
    if (s < RACE_SLOTS) {
        race_spin_lock(&exit_lock);
        struct exit_rec *e = &exits[exit_next++ % EXITS];
        e->pthread = th->pthread;
        e->used = 1;
        memcpy(e->vc, th->clk.vc, sizeof e->vc);
        race_spin_unlock(&exit_lock);
        __atomic_store_n(&slot_last_epoch[s], th->clk.vc[s], __ATOMIC_RELEASE);
        __atomic_sub_fetch(&live_slots, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&slot_used[s], 0, __ATOMIC_RELEASE);
    }
    flush_tallies(th);
    th->state = T_EXITED;
}

static void thread_joined(struct race_thread *th, uint64_t id)
{
    if (th->clk.slot >= RACE_SLOTS)
        return;
    race_spin_lock(&exit_lock);
    for (unsigned n = 0; n < EXITS; n++) {
        struct exit_rec *e = &exits[(exit_next - 1 - n) % EXITS];
        if (e->used && e->pthread == id) {
            race_clock_join(&th->clk, 0, e->vc, RACE_SLOTS);
            e->used = 0;
            th->clock_changed = 1;
            break;
        }
    }
    race_spin_unlock(&exit_lock);
}

static void forked_child(struct race_thread *th)
{
    /* One thread again: forget the parent's other threads, their cells and pairs (the parent
     * reports those). */
    __atomic_store_n(&race_multi, 0, __ATOMIC_RELEASE);
    race_shadow_clear();
    race_report_clear();
    memset(pending, 0, sizeof pending);
    memset(exits, 0, sizeof exits);
    for (unsigned s = 0; s < RACE_SLOTS; s++)
        if (s != th->clk.slot) {
            if (filters && s < hw() && slot_used[s])   /* the parent's thread's filter: a new thread here starts the numbers again */
                memset(&filters[(size_t)s << FILTER_BITS], 0, sizeof *filters << FILTER_BITS);
            slot_used[s] = 0;
        }
    live_slots = th->clk.slot < RACE_SLOTS;
    th->pthread = (uint64_t)pthread_self();
}

static void on_thread(enum vigil_thread_op op, uint64_t id)
{
    struct race_thread *th = &tl;
    switch (op) {
    case VIGIL_THREAD_CREATE:
        th = self();
        if (!__atomic_load_n(&race_multi, __ATOMIC_RELAXED)) {
            __atomic_store_n(&race_multi, 1, __ATOMIC_RELEASE);
            vigil_tool_events(&race_tool, race_tool.events);   /* everything, from now on */
        }
        if (th->state == T_LIVE)
            thread_created(th);
        break;
    case VIGIL_THREAD_START:
        th = self();
        if (th->state == T_LIVE && !th->started) {
            th->started = 1;
            thread_started(th);
        }
        break;
    case VIGIL_THREAD_EXIT:
        if (th->state == T_LIVE)
            thread_exited(th);
        break;
    case VIGIL_THREAD_JOIN:
        if (!__atomic_load_n(&race_multi, __ATOMIC_ACQUIRE))
            return;
        th = self();
        if (th->state == T_LIVE)
            thread_joined(th, id);
        break;
    case VIGIL_THREAD_FORK_CHILD:
        if (race_heap)   /* its locks: another thread of the parent may have held one */
            vigil_heapmap_after_fork(race_heap);
        if (th->state == T_LIVE)
            forked_child(th);
        break;
    }
    if (th->state == T_LIVE)
        window_restart(th);   /* the runtime delivered the buffered accesses first */
}

/* ---- heap events ----
 * A block's cells go back to virgin when it is allocated again: what its previous life left
 * must not race with its new one (malloc and free are no synchronization here). At a free only
 * blocks the allocator may give back to the system are reset (a mapping made later without
 * malloc would find their cells): resetting every block twice cost a reset's cache misses on
 * every free. */
#define FREE_RESET_MIN (128 * 1024)

struct vigil_heapmap *race_heap;   /* made by init (race.heap=1), then read by every thread */

static void on_alloc(void *ptr, size_t size, const struct vigil_stack *where)
{
    if (!__atomic_load_n(&race_multi, __ATOMIC_ACQUIRE) || !ptr)
        return;
    struct race_thread *th = self();
    if (race_cfg.heap)
        vigil_heapmap_add(race_heap, (uintptr_t)ptr, size, where ? where->pc : NULL, where ? where->depth : 0);
    race_shadow_reset((uintptr_t)ptr, size);
    if (th->state == T_LIVE)
        window_restart(th);
}

static void on_free(void *ptr)
{
    if (!__atomic_load_n(&race_multi, __ATOMIC_ACQUIRE) || !ptr)
        return;
    struct race_thread *th = self();
    size_t size = race_cfg.heap ? vigil_heapmap_remove(race_heap, (uintptr_t)ptr, NULL) : 0;
    if (size >= FREE_RESET_MIN)
        race_shadow_reset((uintptr_t)ptr, size);
    if (th->state == T_LIVE)
        window_restart(th);
}

/* ---- sampled accesses ---- */

#define MAX_GRANULES 16   /* of one access (vigil-cc merges neighbouring accesses up to 128 bytes) */

/* The snapshot of the thread's present clock, taken if it changed since the last one. */
static uint32_t snapshot(struct race_thread *th)
{
    uint32_t slot = th->clk.slot;
    if (slot >= RACE_SLOTS || !snaps)
        return 0;
    if (th->clock_changed || !th->snap_seq) {
        uint32_t seq = th->snap_seq + 1 ? th->snap_seq + 1 : 1;
        struct snap *e = &snaps[slot * SNAPS + seq % SNAPS];
        unsigned n = hw();
        __atomic_store_n(&e->seq, 0, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        e->tid = th->tid;
        for (unsigned i = 0; i < n; i++)
            __atomic_store_n(&e->vc[i], th->clk.vc[i], __ATOMIC_RELAXED);
        __atomic_store_n(&e->seq, seq, __ATOMIC_RELEASE);
        th->snap_seq = seq;
        th->clock_changed = 0;
    }
    return th->snap_seq;
}

/* race_before_fn: access a (its window's first epoch) was known to r's thread when r was
 * recorded. Unknown (no snapshot, overwritten): not ordered. */
static int before_record(const struct race_rec *r, const struct race_access *a, void *arg)
{
    (void)arg;
    if (!r->snap || r->slot >= RACE_SLOTS || a->slot >= RACE_SLOTS || r->slot == a->slot || a->slot >= hw())
        return 0;
    const struct snap *e = &snaps[r->slot * SNAPS + r->snap % SNAPS];
    if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != r->snap || e->tid != r->tid)
        return 0;
    uint64_t known = __atomic_load_n(&e->vc[a->slot], __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != r->snap)
        return 0;   /* overwritten meanwhile */
    return a->epoch <= known;
}

/* What the granules of one batch share (on_accesses -> check_granule). */
struct batch {
    struct race_thread *th;
    const struct race_clock *clock;
    uint32_t snap, win;
    int held_same;                         /* the window's two locksets are equal */
    uint64_t checked;
};

/* The cell step of one granule of an access the filter did not skip (fe: its filter entry, NULL
 * for a thread without a slot). */
static inline void check_granule(struct batch *b, uint64_t g, uint32_t site, uint8_t mask, uint8_t write,
                                 uint8_t atomic, int own_stack, struct race_filter_entry *fe)
{
    struct race_thread *th = b->th;
    struct race_access a = {.tid = th->tid, .slot = th->clk.slot, .epoch = th->win_epoch, .snap = b->snap,
                            .held = write ? th->win_write : th->win_any, .site = site, .mask = mask,
                            .write = write, .atomic = atomic};
    if (!fe) {   /* no slot: the last step only */
        if (g == th->last_g && site == th->last_site && mask == th->last_mask && write == th->last_write &&
            a.epoch == th->last_epoch && a.held == th->last_held && atomic == th->last_atomic)
            return;   /* the same step again: it would find nothing new */
        th->last_g = g, th->last_site = site, th->last_mask = mask, th->last_write = write;
        th->last_atomic = atomic;
        th->last_epoch = a.epoch, th->last_held = a.held;
    }
    /* The thread's own stack: only the cells another thread made (a local shared by address);
     * its private locals, the bulk of accesses, get none. */
    uint32_t index;
    struct race_cell *cell = race_shadow_lock(g, !own_stack, &index);
    if (!cell) {
        if (own_stack)
            RACE_TALLY(stack_skipped, 1);
        return;
    }
    struct race_rec prev;
    if ((int32_t)(cell->gen - th->win_gen) > 0) {
        race_spin_unlock(&cell->lock);   /* reset since the window began: maybe the block's past */
        RACE_TALLY(stale_skipped, 1);
        return;
    }
    const unsigned gs = race_cfg.granule_shift, gsize = 1u << gs;
    uintptr_t base = (uintptr_t)g << gs;
    int was_virgin = cell->state == RACE_VIRGIN;
    int same = fe && race_filter_same(fe, g, b->win, write, b->held_same);
    int race = race_cell_step(cell, race_cfg.history, &a, b->clock, before_record, NULL, &prev);
    if (was_virgin)
        race_shadow_note_used(index, g);
    race_spin_unlock(&cell->lock);
    if (was_virgin && !own_stack)
        note_foreign_stack(th, base);
    b->checked++;
    if (fe)
        race_filter_note(fe, g, b->win, mask, write, atomic, same);
    if (race) {
        unsigned unit = gsize / 8, first = (unsigned)__builtin_ctz((unsigned)(prev.mask & a.mask));
        struct race_side s1 = {.site = prev.site, .tid = prev.tid, .write = prev.write, .slot = prev.slot,
                               .held = prev.held, .atomic = prev.atomic};
        struct race_side s2 = {.site = a.site, .tid = a.tid, .write = write, .slot = (uint8_t)a.slot,
                               .held = a.held, .atomic = atomic};
        uintptr_t where = base + (uintptr_t)first * unit;
        if (race_benign(where)) {
            RACE_COUNT(benign, 1);
            race_spin_lock(&cell->lock);
            cell->benign = 1;
            race_spin_unlock(&cell->lock);
        } else {
            race_report(where, &s1, &s2);
        }
    }
}

static void on_accesses(const struct vigil_access *acc, uint32_t n)
{
    if (!__atomic_load_n(&race_multi, __ATOMIC_RELAXED))
        return;   /* one thread: nothing can race */
    struct race_thread *th = self();
    if (th->state != T_LIVE)
        return;
    const struct race_clock *clock = race_cfg.hb && th->clk.slot < RACE_SLOTS ? &th->clk : NULL;
    struct batch b = {.th = th, .clock = clock, .snap = clock ? snapshot(th) : 0, .win = th->fwin.id,
                      .held_same = th->win_write == th->win_any};
    const unsigned gs = race_cfg.granule_shift, gsize = 1u << gs;
    struct race_filter_entry *filter =
        th->clk.slot < RACE_SLOTS ? &filters[(size_t)th->clk.slot << FILTER_BITS] : NULL;
    uint64_t filtered = 0;
    uint32_t atomics = 0;
    /* The window's fields, in locals: nothing in the loop changes them. */
    const uint32_t win = b.win;
    const int held_same = b.held_same;
    const uintptr_t stack_lo = th->stack_lo, stack_span = th->stack_hi - th->stack_lo;
    const uint8_t *stack_shared = th->clk.slot < RACE_SLOTS ? &slot_stack_shared[th->clk.slot] : NULL;
    for (uint32_t k = 0; k < n; k++) {
        uintptr_t addr = (uintptr_t)acc[k].addr;
        uint32_t size = VIGIL_ACCESS_SIZE(&acc[k]);
        uint8_t write = VIGIL_ACCESS_IS_STORE(&acc[k]) != 0, atomic = (acc[k].size_store & VIGIL_ACCESS_ATOMIC) != 0;
        atomics += atomic;
        if (size == 0)
            size = 1;
        if (addr + size < addr)
            continue;
        int own_stack = addr - stack_lo < stack_span;
        if (own_stack && stack_shared && !__atomic_load_n(stack_shared, __ATOMIC_RELAXED)) {
            RACE_TALLY(stack_skipped, 1);   /* no other thread made a cell in this stack */
            continue;
        }
        /* the granules g to last, from byte off of the first (race_mask clips each at its end) */
        uint64_t g = addr >> gs, last = (addr + size - 1) >> gs;
        if (last - g >= MAX_GRANULES)
            last = g + MAX_GRANULES - 1;
        unsigned off = (unsigned)addr & (gsize - 1), left = size;
        for (;;) {
            uint8_t mask = race_mask(off, left, gsize);
            struct race_filter_entry *fe = NULL;
            if (filter)
                fe = &filter[g & ((1u << FILTER_BITS) - 1)];
            if (fe && race_filter_covers(fe, g, win, mask, write, atomic, held_same))
                filtered++;
            else
                check_granule(&b, g, acc[k].site, mask, write, atomic, own_stack, fe);
            if (g == last)
                break;
            left -= gsize - off;
            off = 0;
            g++;
        }
    }
    if (b.checked)
        RACE_TALLY(checked, b.checked);
    if (filtered)
        RACE_TALLY(filtered, filtered);
    th->pending_atomics += atomics;
    th->pending_accesses += n;
    if (th->pending_accesses >= 4096)
        flush_tallies(th);
    window_restart(th);   /* the buffer is empty now */
}

/* ---- the public API (include/vigil/race.h) ---- */

void vigil_race_benign(const volatile void *addr, size_t size)
{
    if (__atomic_load_n(&race_enabled, __ATOMIC_ACQUIRE) && addr && size)
        race_benign_add((uintptr_t)addr, size);
}

/* The program's announcement arrives from its own code: its buffered accesses are delivered
 * first, and the event is exact as the runtime's lock events are. */
static void annotated_lock(const volatile void *lock, enum vigil_lock_op op)
{
    if (!__atomic_load_n(&race_enabled, __ATOMIC_ACQUIRE) || !lock)
        return;
    race_lock_exact((const void *)lock, op);
}

/* raceint.h: for the OMPT callbacks (ompt.c) and the annotations. */
int race_is_enabled(void)
{
    return __atomic_load_n(&race_enabled, __ATOMIC_ACQUIRE);
}

void race_lock_exact(const void *lock, enum vigil_lock_op op)
{
    vigil_tool_deliver_accesses();
    lock_op(lock, op, 1);
}

void race_sync_exact(const void *object, int release)
{
    vigil_tool_deliver_accesses();
    on_sync(object, release ? VIGIL_SYNC_BARRIER_ARRIVE : VIGIL_SYNC_BARRIER_DEPART);
}

void vigil_race_lock_acquired(const volatile void *lock)
{
    annotated_lock(lock, VIGIL_LOCK_ACQUIRE);
}

void vigil_race_lock_acquired_shared(const volatile void *lock)
{
    annotated_lock(lock, VIGIL_LOCK_ACQUIRE_SHARED);
}

void vigil_race_lock_released(const volatile void *lock)
{
    annotated_lock(lock, VIGIL_LOCK_RELEASE);
}

/* ---- init and fini ---- */

static int race_init(void);
static void race_fini(void);

struct vigil_tool race_tool = {
    .api_version = VIGIL_TOOL_API_VERSION,
    .name = "race",
    .description = "data races: lockset refined on sampled accesses, with happens-before; writes race.json",
    .events = VIGIL_EV_ALLOC | VIGIL_EV_FREE | VIGIL_EV_LOCK | VIGIL_EV_THREAD | VIGIL_EV_SYNC | VIGIL_EV_ACCESS,
    .init = race_init,
    .fini = race_fini,
    .on_alloc = on_alloc,
    .on_free = on_free,
    .on_lock = on_lock,
    .on_thread = on_thread,
    .on_accesses = on_accesses,
    .options = &race_option_set,
    .option_values = &race_opts,
    .on_sync = on_sync,
    .bursts = VIGIL_BURSTS_NEEDED,
};
VIGIL_REGISTER_TOOL(race_tool);

/* A value the table's type allows but the tool cannot use: the default, with a message. */
static unsigned in_range(const char *key, unsigned v, unsigned lo, unsigned hi, unsigned def)
{
    if (v >= lo && v <= hi)
        return v;
    vigil_tool_message(&race_tool, "race.%s=%u: expected %u to %u; using %u", key, v, lo, hi, def);
    return def;
}

static int race_init(void)
{
    unsigned granule = race_opts.granule;
    if (granule != 8 && granule != 16 && granule != 32 && granule != 64) {
        vigil_tool_message(&race_tool, "race.granule=%u: expected 8, 16, 32 or 64; using 8", granule);
        granule = 8;
    }
    race_cfg.granule_shift = (unsigned)__builtin_ctz(granule);
    race_cfg.history = in_range("history", race_opts.history, 1, RACE_MAX_HISTORY, 3);
    race_cfg.table_bits = in_range("table", race_opts.table, 12, 26, 16);
    race_cfg.max_reports = in_range("max_reports", race_opts.max_reports, 1, 100000, 1000);
    race_cfg.depth = in_range("depth", race_opts.depth, 1, VIGIL_MAX_STACK, 6);
    race_cfg.hb = race_opts.hb;
    race_cfg.hb_locks = race_opts.hb_locks;
    race_cfg.hb_sync = race_opts.hb_sync;
    race_cfg.heap = race_opts.heap;
    race_cfg.print = race_opts.print;
    race_cfg.ompt = race_opts.ompt;
    locks = race_map(sizeof *locks * LOCK_STRIDE);
    lock_vc = race_map(sizeof *lock_vc * LOCK_STRIDE * RACE_SLOTS);
    lock_rvc = race_map(sizeof *lock_rvc * LOCK_STRIDE * RACE_SLOTS);
    snaps = race_map(sizeof *snaps * SNAPS * RACE_SLOTS);
    syncs = race_map(sizeof *syncs * LOCK_STRIDE);
    filters = race_map(sizeof *filters * RACE_SLOTS << FILTER_BITS);
    sync_vc = race_map(sizeof *sync_vc * LOCK_STRIDE * RACE_SLOTS);
    if (!locks || !lock_vc || !lock_rvc || !snaps || !syncs || !sync_vc || !filters || race_shadow_init() != 0 ||
        (race_cfg.heap && !(race_heap = vigil_heapmap_new(race_cfg.depth))) ||
        race_report_init() != 0) {
        vigil_tool_message(&race_tool, "cannot map its tables (race.table=%u)", race_cfg.table_bits);
        return -1;
    }
    if (race_cfg.heap)
        vigil_want_alloc_stack(race_cfg.depth);
    self();   /* the thread that starts the runtime is thread 1 */
    /* One thread, nothing can race: thread events only, until the first creation asks for the
     * rest (allocations, locks, synchronization, sampled accesses), which a program with one
     * thread then never collects. */
    vigil_tool_events(&race_tool, VIGIL_EV_THREAD);
    __atomic_store_n(&race_enabled, 1, __ATOMIC_RELEASE);
    race_ompt_check();
    return 0;
}

static void race_fini(void)
{
    race_ompt_fini_check();
    flush_tallies(&tl);
    race_report_write();
}
