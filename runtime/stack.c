/* Stack capture by walking frame pointers. Code built without frame pointers leaves garbage
 * in the frame register, so every step is checked and the walk stops at the first frame that
 * fails: the next frame must lie above the current one, within this thread's stack, aligned,
 * and not absurdly far; its return address must lie in an executable segment of a loaded
 * object and follow a call instruction. Reads stay inside the stack bounds and the text
 * segments, so a bad chain ends the walk, never the program; no frame that fails a check is
 * ever emitted. */
#include "internal.h"
#include "callinsn.h"

#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>

/* The main thread's bounds without pthread_getattr_np, which reads /proc/self/maps through
 * stdio and sscanf: more 64 KB windows of libc code made resident by the first allocation of
 * every process (docs/leaks.md, "Resident memory"). The walk starts at a frame of the caller's
 * and only goes up, so the top is what matters: main's frames all lie below __libc_stack_end;
 * the bottom only has to lie below every frame the thread will ever start a walk from. */
static int main_stack_bounds(uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t top = (uintptr_t)__vigil_main_stack_end(), here = (uintptr_t)__builtin_frame_address(0);
    struct rlimit limit;
    if (!top || getrlimit(RLIMIT_STACK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return 0;
    uintptr_t size = limit.rlim_cur > (8u << 20) ? (uintptr_t)limit.rlim_cur : (8u << 20);
    uintptr_t bottom = top > size ? top - size : 0;
    if (here < bottom)
        return 0;   /* below the limit: not on that stack after all */
    *lo = bottom;
    *hi = top;
    return 1;
}

/* Find this thread's stack bounds, once (pthread_getattr_np may allocate: our guard is held by
 * every caller, so that allocation is not reported). Cold: the walk runs on every allocation,
 * and its code is cache lines the program's own code loses. */
static __attribute__((cold, noinline)) void find_stack_bounds(struct vigil_thread *th)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    th->stack_hi = 1;   /* "tried": a failure is not retried on every allocation */
    if (!main_stack_bounds(&th->stack_lo, &th->stack_hi) && pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size) {
            th->stack_lo = (uintptr_t)addr;
            th->stack_hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
}

static inline int stack_bounds(uintptr_t *lo, uintptr_t *hi)
{
    struct vigil_thread *th = &__vigil_thread;
    if (unlikely(!th->stack_hi))
        find_stack_bounds(th);
    *lo = th->stack_lo;
    *hi = th->stack_hi;
    return *hi > *lo + 16;
}

/* ---- the executable segments of the loaded objects ----
 * Two tables, sorted by address: readers use the published one without a lock; a refresh
 * (one at a time, by a try-lock) fills the other and publishes it. Refreshes are rare (start-up,
 * then a return address outside every known segment: a dlopen'ed object, or garbage, after
 * exponentially more such misses each time a refresh finds nothing new), so a reader still on
 * the older table while a second refresh rewrites it is unlikely and costs one frame judged
 * wrongly at most, never a bad read: the return address itself is only read through a range
 * of the table that the entry's count covers. 256 segments: objects past that are not known
 * (their frames end walks). */
#define TEXT_RANGES_MAX 256
struct text_ranges {
    uint32_t n;
    struct { uintptr_t lo, hi; } r[TEXT_RANGES_MAX];
};
/* Written by refresh_text_ranges only (under text_refreshing), read by every walk. */
static struct text_ranges text_tables[2];
static uint32_t text_published;        /* index of the table in use; written by refresh */
static uint32_t text_filled;           /* 0 until the first refresh publishes a table */
static uint32_t text_refreshing;       /* try-lock of refresh_text_ranges (freed in a fork child) */
static uint64_t text_objects_seen;     /* dlpi_adds at the last refresh (refresh only) */
static uint32_t text_misses;           /* misses since the last refresh (relaxed, racy: a hint) */
static uint32_t text_miss_budget = 1;  /* misses that trigger the next refresh; refresh doubles
                                          it when nothing was loaded meanwhile */
static uint32_t text_unloading;        /* dlclose calls in progress (the dlclose hook): the
                                          table may hold segments being unmapped */
static uint32_t text_generation;       /* bumped by each dlclose's start and end: return
                                          addresses checked before may be unmapped code now */

/* Return addresses this thread's walks found valid, direct-mapped by address: a program
 * allocates from a few call chains again and again, and a hit skips the segment search and the
 * decoding of the call before it (half of an allocation's stack walk). Emptied when
 * text_generation moves. Written by the owning thread only. */
#define KNOWN_RETURN_BITS 8
static __thread struct {
    uint32_t generation;
    uintptr_t pc[1u << KNOWN_RETURN_BITS];
} known_returns;

static inline uintptr_t *known_return_slot(uintptr_t pc)
{
    return &known_returns.pc[(pc * 0x9E3779B97F4A7C15ull) >> (64 - KNOWN_RETURN_BITS)];
}

struct text_fill {
    struct text_ranges *t;
    uint64_t adds;
};

static int add_text_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct text_fill *f = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
        f->adds = info->dlpi_adds;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !ph->p_memsz)
            continue;
        if (f->t->n == TEXT_RANGES_MAX)
            return 1;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        /* insertion keeps the table sorted (a few dozen objects: no need for better) */
        uint32_t k = f->t->n++;
        while (k > 0 && f->t->r[k - 1].lo > lo) {
            f->t->r[k] = f->t->r[k - 1];
            k--;
        }
        f->t->r[k].lo = lo;
        f->t->r[k].hi = lo + ph->p_memsz;
    }
    return 0;
}

/* Re-read the loaded objects' executable segments. Not from a signal handler (the loader's
 * lock): only the allocation path calls it, and start-up. Returns 1 if new objects came. */
static __attribute__((cold, noinline)) int refresh_text_ranges(void)
{
    if (__atomic_exchange_n(&text_refreshing, 1, __ATOMIC_ACQUIRE))
        return 0;
    uint32_t spare = __atomic_load_n(&text_published, __ATOMIC_RELAXED) ^ 1;
    struct text_fill f = {&text_tables[spare], 0};
    f.t->n = 0;
    dl_iterate_phdr(add_text_segments, &f);
    int grew = f.adds != text_objects_seen;
    text_objects_seen = f.adds;
    __atomic_store_n(&text_published, spare, __ATOMIC_RELEASE);
    __atomic_store_n(&text_filled, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&text_refreshing, 0, __ATOMIC_RELEASE);
    return grew;
}

void __vigil_text_ranges_init(void)
{
    refresh_text_ranges();
}

void __vigil_text_unload_begin(void)
{
    __atomic_add_fetch(&text_unloading, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&text_generation, 1, __ATOMIC_SEQ_CST);
}

void __vigil_text_unload_end(void)
{
    refresh_text_ranges();   /* a refresh already under way leaves this one out: the next miss */
    __atomic_add_fetch(&text_generation, 1, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&text_unloading, 1, __ATOMIC_SEQ_CST);
}

void __vigil_text_after_fork(void)
{
    /* an unfinished refresh filled only the spare table, which it had not published */
    __atomic_store_n(&text_refreshing, 0, __ATOMIC_RELAXED);
}

/* The executable segment holding pc: [*lo, *hi), or 0. */
static inline int text_range_of(uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
    const struct text_ranges *t = &text_tables[__atomic_load_n(&text_published, __ATOMIC_ACQUIRE)];
    uint32_t a = 0, b = __atomic_load_n(&t->n, __ATOMIC_RELAXED);
    if (b > TEXT_RANGES_MAX)
        return 0;
    while (a < b) {   /* the first range with lo > pc */
        uint32_t m = (a + b) / 2;
        if (t->r[m].lo <= pc)
            a = m + 1;
        else
            b = m;
    }
    if (a == 0 || pc >= t->r[a - 1].hi)
        return 0;
    *lo = t->r[a - 1].lo;
    *hi = t->r[a - 1].hi;
    return 1;
}

/* A miss: a return address outside every known segment. On the allocation path, refresh the
 * table when the misses since the last refresh reach the budget (doubled after each refresh
 * that found no new object, back to 1 when one did). */
static __attribute__((cold, noinline)) int text_miss(uintptr_t pc, int may_refresh, uintptr_t *lo, uintptr_t *hi)
{
    if (!may_refresh)
        return 0;
    int first = !__atomic_load_n(&text_filled, __ATOMIC_ACQUIRE);
    uint32_t misses = __atomic_add_fetch(&text_misses, 1, __ATOMIC_RELAXED);
    if (!first && misses < __atomic_load_n(&text_miss_budget, __ATOMIC_RELAXED))
        return 0;
    __atomic_store_n(&text_misses, 0, __ATOMIC_RELAXED);
    uint32_t budget = __atomic_load_n(&text_miss_budget, __ATOMIC_RELAXED);
    if (refresh_text_ranges())
        budget = 1;
    else if (budget < (1u << 20))
        budget *= 2;
    __atomic_store_n(&text_miss_budget, budget, __ATOMIC_RELAXED);
    return text_range_of(pc, lo, hi);
}

/* Whether the instruction before pc, inside [lo, hi), is a call: pc is then a return address
 * and not a stale pointer into the code (a function pointer, a jump table's target) that a
 * frame of code without frame pointers left where the saved return address would be. */
static inline int after_call(uintptr_t pc, uintptr_t lo, uintptr_t hi)
{
    (void)hi;
    uintptr_t before = pc - lo < VIGIL_CALL_MAX_BYTES ? pc - lo : VIGIL_CALL_MAX_BYTES;
    return vigil_follows_call((const uint8_t *)pc, (size_t)before);
}

/* Whether pc can be a return address: inside an executable segment, just after a call.
 * [*lo, *hi) is the segment of the walk's previous frame: callers are mostly in the same
 * object, so the table is searched only when pc leaves it. A valid pc is remembered in *known. */
static inline int valid_return(uintptr_t pc, int may_refresh, uintptr_t *lo, uintptr_t *hi,
                                                  uintptr_t *known)
{
    if (pc - *lo >= *hi - *lo && !text_range_of(pc, lo, hi) && !text_miss(pc, may_refresh, lo, hi))
        return 0;
    /* While a dlclose unmaps an object, its segment may still be in the table: its bytes are
     * not read then (the frame is kept on the range alone, and not remembered). */
    if (unlikely(__atomic_load_n(&text_unloading, __ATOMIC_RELAXED)))
        return 1;
    if (!after_call(pc, *lo, *hi))
        return 0;
    *known = pc;
    return 1;
}

uintptr_t vigil_direct_call_target(uintptr_t ret)
{
#if defined(__x86_64__)
    uintptr_t lo, hi;
    if (!__atomic_load_n(&text_filled, __ATOMIC_ACQUIRE) || !text_range_of(ret, &lo, &hi) || ret - lo < 5 ||
        __atomic_load_n(&text_unloading, __ATOMIC_RELAXED))
        return 0;
    const uint8_t *call = (const uint8_t *)ret - 5;
    if (call[0] != 0xe8)
        return 0;
    int32_t rel;
    __builtin_memcpy(&rel, call + 1, sizeof rel);
    return ret + (uintptr_t)(intptr_t)rel;
#else
    (void)ret;
    return 0;
#endif
}

/* A return address not in the thread's known returns: whether it is one (and then remembered).
 * [*text_lo, *text_hi) is the segment the walk last searched. Out of line, so that the walk's
 * loop over known returns keeps its state in registers. */
static __attribute__((noinline)) int unknown_return(uintptr_t pc, uintptr_t stack_lo, uintptr_t stack_hi,
                                                    int may_refresh, uintptr_t *text_lo, uintptr_t *text_hi)
{
    if (pc < 4096 || (pc >= stack_lo && pc < stack_hi))
        return 0;
    return valid_return(pc, may_refresh, text_lo, text_hi, known_return_slot(pc));
}

uint32_t __vigil_walk_stack(void *frame, uintptr_t *pcs, uint32_t max, int may_refresh)
{
    uintptr_t lo, hi;
    uint32_t depth = 0;
    if (!frame || !stack_bounds(&lo, &hi))
        return 0;
    uintptr_t fp = (uintptr_t)frame, text_lo = 0, text_hi = 0;
    uint32_t generation = __atomic_load_n(&text_generation, __ATOMIC_ACQUIRE);
    if (unlikely(known_returns.generation != generation)) {
        memset(known_returns.pc, 0, sizeof known_returns.pc);
        known_returns.generation = generation;
    }
    const uintptr_t span = hi - 2 * sizeof(uintptr_t) - lo;   /* a record [fp, fp + 16) lies in the stack */
    int entry_frame = 0;   /* the record just read was a transfer entry's own */
    while (depth < max) {
        if (fp - lo > span || (fp & (sizeof(uintptr_t) - 1)))
            break;
        const uintptr_t *record = (const uintptr_t *)fp;   /* [saved frame pointer, return address] */
        uintptr_t pc = record[1], next = record[0];
        if (unlikely(*known_return_slot(pc) != pc) && !unknown_return(pc, lo, hi, may_refresh, &text_lo, &text_hi))
            break;   /* no call returns there: a record of a function built without frame pointers */
        if (__vigil_in_transfer_entry(pc)) {
            /* f -> transfer entry -> <f>.vigil.xfer -> <f>.vigil.instr: the program made one
             * call of f, not three. The thunk's return address came just before; the entry's
             * own frame (it always makes one) comes next and holds f's call of the entry,
             * which <f>.vigil.instr's frame already stands for. */
            depth -= depth > 0;
            entry_frame = 1;
        } else if (entry_frame) {
            entry_frame = 0;
        } else {
            pcs[depth++] = pc;
        }
        if (next <= fp || next - fp > (64u << 20))
            break;
        fp = next;
    }
    return depth;
}
