/* Live heap objects (heapmap.h): a sharded map from an object's start to its size and
 * allocation stack (each shard two open-addressed tables, for small and for larger objects, with
 * backward-shift deletion, under its own spin lock), a short list of large objects, and a table of distinct allocation stacks
 * (created by compare-and-swap, never removed).
 *
 * The map keeps the allocator's locality: the objects of one 64 KiB region go to one shard, to
 * consecutive entries from a place that depends on the region (a random hash sent every
 * allocation and free to a cache miss: the map was a fifth of a malloc-heavy program's time). */
#include "heapmap.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#define SHARD_BITS 6
#define SHARDS (1u << SHARD_BITS)
#define SHARD_CAP_BITS 14
#define REGION_SHIFT 16
/* Two tables per shard, by the object's size. Small objects: a home slot per 32 bytes of a
 * region (glibc's smallest chunk): the objects of one region take consecutive entries, about
 * one per home, so a region's entries fill a few pages of the table rather than a page per few
 * objects, and a lookup probes one or two. (Coarser homes sent dense small objects probing
 * through runs of hundreds of entries.) Objects of BIG_MIN bytes or more: a home per BIG_MIN
 * bytes (their starts are that far apart, so at most one per home). With 32-byte homes for
 * every object, a page of the table covered 8 KiB of heap, whatever the objects' sizes: the
 * table's resident pages were half the heap's (sqlite3's pages of 1 and 4 KiB). */
#define HOME_SHIFT 5
#define BIG_HOME_SHIFT 8
#define BIG_MIN (1u << BIG_HOME_SHIFT)
#define SHARD_CAP (1u << SHARD_CAP_BITS)
#define LARGE_CAP 1024
#define STACK_BITS 13
#define STACK_CAP (1u << STACK_BITS)
/* Object starts: one bit per 16-byte granule, in a bitmap per MiB of address space (a leaf,
 * 8 KiB) made when an object first starts there, under a two-level directory of the 47-bit
 * user address space (x86-64, 4-level paging). The object that contains an address is the one
 * at the nearest start below it, if it reaches that far. */
#define ADDR_BITS 47
#define LEAF_SHIFT 20
#define LEAF_WORDS (1u << (LEAF_SHIFT - 4 - 6))
#define MID_BITS 13
#define TOP_BITS (ADDR_BITS - LEAF_SHIFT - MID_BITS)
#define SCAN_LIMIT (1u << 20)    /* starts further below are looked for in the large list */

struct obj {
    uintptr_t ptr;               /* 0: free */
    uint32_t size;               /* UINT32_MAX: that or more (the large list has it) */
    uint32_t stack;              /* stack id | TAG_BIT when tagged */
};
#define TAG_BIT 0x80000000u      /* stack ids stay below STACK_CAP */
struct big {
    uintptr_t ptr;
    uint64_t size;
    uint32_t stack;
};
struct table {
    uint32_t n;                  /* entries in use */
    unsigned home_shift;         /* HOME_SHIFT or BIG_HOME_SHIFT */
    struct obj *slot;            /* SHARD_CAP entries */
};
struct shard {
    uint32_t lock;
    struct table small, big;     /* objects under BIG_MIN bytes, and the others */
};
struct stack_entry {
    uint32_t depth;
    uint32_t ready;              /* frames written (release) */
    uintptr_t pc[VIGIL_HEAPMAP_STACK_DEPTH];
};
struct vigil_heapmap {
    struct shard shards[SHARDS];         /* entries under each shard's lock */
    struct big large[LARGE_CAP];         /* objects over SCAN_LIMIT bytes, under large_lock */
    unsigned nlarge;                     /* entries of large, under large_lock */
    uint32_t large_lock;
    unsigned depth;                      /* set by vigil_heapmap_new */
    uint64_t lost;                       /* relaxed atomic */
    struct stack_entry *stacks;          /* STACK_CAP entries, used in order (nstacks: atomic) */
    uint32_t nstacks;
    uint64_t *stack_hash;                /* STACK_CAP slots by hash: a stack's hash (0: free), */
    uint32_t *stack_id;                  /* and its entry's index + 1 (0: being written) */
    uint64_t **top[1u << TOP_BITS];      /* -> mid tables (1 << MID_BITS leaves) -> leaf bitmaps;
                                            made on first use (compare-and-swap), never freed */
    uintptr_t large_lo, large_hi;        /* a range that holds every large object (under large_lock) */
    uintptr_t span_lo, span_hi;          /* every object ever added lies in [span_lo, span_hi):
                                            widened by add (compare-and-swap), never narrowed */
};

/* A holder may be preempted (more threads than CPUs): after a short spin, yield. */
static void spin_lock(uint32_t *l)
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
static void spin_unlock(uint32_t *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static uint64_t hash64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static void *map_zeroed(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

struct vigil_heapmap *vigil_heapmap_new(unsigned stack_depth)
{
    struct vigil_heapmap *m = map_zeroed(sizeof *m);
    struct obj *all = map_zeroed(sizeof(struct obj) * 2 * SHARDS * SHARD_CAP);
    struct stack_entry *stacks = map_zeroed(sizeof(struct stack_entry) * STACK_CAP);
    uint64_t *stack_hash = map_zeroed(sizeof(uint64_t) * STACK_CAP);
    uint32_t *stack_id = map_zeroed(sizeof(uint32_t) * STACK_CAP);
    if (!m || !all || !stacks || !stack_hash || !stack_id) {
        if (stack_hash) munmap(stack_hash, sizeof(uint64_t) * STACK_CAP);
        if (stack_id) munmap(stack_id, sizeof(uint32_t) * STACK_CAP);
        if (m) munmap(m, sizeof *m);
        if (all) munmap(all, sizeof(struct obj) * 2 * SHARDS * SHARD_CAP);
        if (stacks) munmap(stacks, sizeof(struct stack_entry) * STACK_CAP);
        return NULL;
    }
    for (unsigned i = 0; i < SHARDS; i++) {
        m->shards[i].small = (struct table){.home_shift = HOME_SHIFT, .slot = all + (size_t)i * SHARD_CAP};
        m->shards[i].big = (struct table){.home_shift = BIG_HOME_SHIFT, .slot = all + (size_t)(SHARDS + i) * SHARD_CAP};
    }
    m->stacks = stacks;
    m->stack_hash = stack_hash;
    m->stack_id = stack_id;
    m->depth = stack_depth < VIGIL_HEAPMAP_STACK_DEPTH ? stack_depth : VIGIL_HEAPMAP_STACK_DEPTH;
    return m;
}

static uint32_t stack_intern(struct vigil_heapmap *m, const uintptr_t *pcs, unsigned depth)
{
    if (!pcs || depth == 0)
        return 0;
    if (depth > m->depth)
        depth = m->depth;
    if (depth == 0)
        return 0;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ depth;
    for (uint32_t i = 0; i < depth; i++)
        h = hash64(h ^ pcs[i]);
    if (!h)
        h = 1;
    /* entries are taken in order, so the distinct stacks fill few pages; the slots by hash
     * only point to them */
    for (uint32_t i = 0; i < 32; i++) {
        uint32_t k = (uint32_t)((h + i) & (STACK_CAP - 1));
        uint64_t cur = __atomic_load_n(&m->stack_hash[k], __ATOMIC_ACQUIRE);
        if (cur == h)
            return __atomic_load_n(&m->stack_id[k], __ATOMIC_ACQUIRE);
        if (cur)
            continue;
        if (__atomic_compare_exchange_n(&m->stack_hash[k], &cur, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            uint32_t id = __atomic_add_fetch(&m->nstacks, 1, __ATOMIC_RELAXED);
            if (id > STACK_CAP)
                return 0;
            struct stack_entry *e = &m->stacks[id - 1];
            e->depth = depth;
            memcpy(e->pc, pcs, depth * sizeof e->pc[0]);
            __atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
            __atomic_store_n(&m->stack_id[k], id, __ATOMIC_RELEASE);
            return id;
        }
        if (cur == h)
            return __atomic_load_n(&m->stack_id[k], __ATOMIC_ACQUIRE);
    }
    return 0;
}

uint32_t vigil_heapmap_intern(struct vigil_heapmap *m, const uintptr_t *pcs, unsigned depth)
{
    return stack_intern(m, pcs, depth);
}

unsigned vigil_heapmap_stack(struct vigil_heapmap *m, uint32_t id, const uintptr_t **pcs)
{
    if (id == 0 || id > STACK_CAP)
        return 0;
    struct stack_entry *e = &m->stacks[id - 1];
    if (!__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE))
        return 0;
    *pcs = e->pc;
    return e->depth;
}

/* The start bitmap of addr's MiB (made when create is set), or NULL. */
static uint64_t *leaf_of(struct vigil_heapmap *m, uintptr_t addr, int create)
{
    if (addr >> ADDR_BITS)
        return NULL;
    uintptr_t t = addr >> (LEAF_SHIFT + MID_BITS), mid = (addr >> LEAF_SHIFT) & ((1u << MID_BITS) - 1);
    uint64_t **table = __atomic_load_n(&m->top[t], __ATOMIC_ACQUIRE);
    if (!table) {
        if (!create)
            return NULL;
        uint64_t **made = map_zeroed(sizeof(uint64_t *) << MID_BITS);
        if (!made)
            return NULL;
        if (!__atomic_compare_exchange_n(&m->top[t], &table, made, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            munmap(made, sizeof(uint64_t *) << MID_BITS);
        else
            table = made;
    }
    uint64_t *leaf = __atomic_load_n(&table[mid], __ATOMIC_ACQUIRE);
    if (!leaf && create) {
        uint64_t *made = map_zeroed(LEAF_WORDS * sizeof(uint64_t));
        if (!made)
            return NULL;
        if (!__atomic_compare_exchange_n(&table[mid], &leaf, made, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            munmap(made, LEAF_WORDS * sizeof(uint64_t));
        else
            leaf = made;
    }
    return leaf;
}

static void set_start(struct vigil_heapmap *m, uintptr_t ptr, int on)
{
    uint64_t *leaf = leaf_of(m, ptr, on);
    if (!leaf)
        return;
    uint32_t g = (uint32_t)(ptr >> 4) & ((1u << (LEAF_SHIFT - 4)) - 1);
    if (on)
        __atomic_fetch_or(&leaf[g / 64], 1ull << (g % 64), __ATOMIC_RELAXED);
    else
        __atomic_fetch_and(&leaf[g / 64], ~(1ull << (g % 64)), __ATOMIC_RELAXED);
}

/* The nearest object start at or below addr, at most limit bytes below it: 0 if none. */
static uintptr_t nearest_start(struct vigil_heapmap *m, uintptr_t addr, uintptr_t limit)
{
    uintptr_t lowest = addr > limit ? addr - limit : 0;
    uintptr_t g = addr >> 4;
    while (1) {
        uint64_t *leaf = leaf_of(m, g << 4, 0);
        uintptr_t leaf_first = (g << 4) & ~(((uintptr_t)1 << LEAF_SHIFT) - 1);
        if (leaf) {
            uint32_t i = (uint32_t)g & ((1u << (LEAF_SHIFT - 4)) - 1);
            uint32_t w = i / 64;
            uint64_t bits = __atomic_load_n(&leaf[w], __ATOMIC_RELAXED) & (~0ull >> (63 - i % 64));
            while (1) {
                if (bits) {
                    uintptr_t start = leaf_first + (((uintptr_t)w * 64 + 63 - (uintptr_t)__builtin_clzll(bits)) << 4);
                    return start >= lowest ? start : 0;
                }
                if (w == 0 || leaf_first + ((uintptr_t)w * 64 << 4) <= lowest)
                    break;
                bits = __atomic_load_n(&leaf[--w], __ATOMIC_RELAXED);
            }
        }
        if (leaf_first <= lowest || leaf_first == 0)
            return 0;
        g = (leaf_first >> 4) - 1;   /* the last granule of the MiB below */
    }
}

static inline uint64_t region_hash(uintptr_t ptr)
{
    return hash64(ptr >> REGION_SHIFT);
}

static inline struct shard *shard_of(struct vigil_heapmap *m, uint64_t h)
{
    return &m->shards[h & (SHARDS - 1)];
}

/* ptr's home slot in t (a table of its shard); h: region_hash(ptr) */
static inline size_t home_of(const struct table *t, uintptr_t ptr, uint64_t h)
{
    return (size_t)((ptr >> t->home_shift) + (h >> SHARD_BITS)) & (SHARD_CAP - 1);
}

/* The entry of the object at ptr in t, or NULL (under its shard's lock); h: region_hash(ptr). */
static struct obj *table_find(struct table *t, uintptr_t ptr, uint64_t h)
{
    for (size_t i = home_of(t, ptr, h);; i = (i + 1) & (SHARD_CAP - 1)) {
        struct obj *o = &t->slot[i];
        if (o->ptr == ptr)
            return o;
        if (o->ptr == 0)
            return NULL;
    }
}

/* The entry of the object at ptr in either table of s (*t: which), or NULL. */
static struct obj *shard_find(struct shard *s, uintptr_t ptr, uint64_t h, struct table **t)
{
    struct obj *o = table_find(&s->small, ptr, h);
    *t = &s->small;
    if (!o) {
        o = table_find(&s->big, ptr, h);
        *t = &s->big;
    }
    return o;
}

/* Remove entry o of t: backward-shift deletion moves up the entries that the hole would hide. */
static void table_delete(struct table *t, struct obj *o)
{
    size_t hole = (size_t)(o - t->slot);
    for (size_t j = (hole + 1) & (SHARD_CAP - 1);; j = (j + 1) & (SHARD_CAP - 1)) {
        struct obj *e = &t->slot[j];
        if (e->ptr == 0)
            break;
        size_t home = home_of(t, e->ptr, region_hash(e->ptr));
        /* e may move to the hole when its home is not in (hole, j] (cyclically) */
        int between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!between) {
            t->slot[hole] = *e;
            hole = j;
        }
    }
    t->slot[hole] = (struct obj){0};
    t->n--;
}

static void widen_span(struct vigil_heapmap *m, uintptr_t lo, uintptr_t hi)
{
    uintptr_t cur = __atomic_load_n(&m->span_lo, __ATOMIC_RELAXED);
    while ((cur == 0 || lo < cur) &&
           !__atomic_compare_exchange_n(&m->span_lo, &cur, lo, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    cur = __atomic_load_n(&m->span_hi, __ATOMIC_RELAXED);
    while (hi > cur && !__atomic_compare_exchange_n(&m->span_hi, &cur, hi, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

int vigil_heapmap_spans(const struct vigil_heapmap *m, uintptr_t addr)
{
    return addr >= __atomic_load_n(&m->span_lo, __ATOMIC_RELAXED) && addr < __atomic_load_n(&m->span_hi, __ATOMIC_RELAXED);
}

int vigil_heapmap_add(struct vigil_heapmap *m, uintptr_t ptr, size_t size, const uintptr_t *pcs, unsigned depth)
{
    if (!ptr)
        return 0;
    widen_span(m, ptr, ptr + size + 64);   /* and what an access just past the end reaches */
    uint32_t stack = stack_intern(m, pcs, depth);
    uint64_t h = region_hash(ptr);
    struct shard *s = shard_of(m, h);
    struct table *t = size >= BIG_MIN ? &s->big : &s->small, *other = t == &s->big ? &s->small : &s->big;
    spin_lock(&s->lock);
    struct obj *was = table_find(other, ptr, h);   /* replaced by an object of the other table's sizes */
    if (was)
        table_delete(other, was);
    if (t->n + 1 >= SHARD_CAP * 3 / 4) {
        spin_unlock(&s->lock);
        __atomic_fetch_add(&m->lost, 1, __ATOMIC_RELAXED);
        return -1;
    }
    for (size_t i = home_of(t, ptr, h);; i = (i + 1) & (SHARD_CAP - 1)) {
        struct obj *o = &t->slot[i];
        if (o->ptr == ptr || o->ptr == 0) {
            if (o->ptr == 0)
                t->n++;
            *o = (struct obj){.ptr = ptr, .size = size < UINT32_MAX ? (uint32_t)size : UINT32_MAX, .stack = stack};
            break;
        }
    }
    set_start(m, ptr, 1);
    spin_unlock(&s->lock);
    if (size > SCAN_LIMIT) {
        spin_lock(&m->large_lock);
        if (!m->large_lo || ptr < m->large_lo)
            __atomic_store_n(&m->large_lo, ptr, __ATOMIC_RELAXED);
        if (ptr + size > m->large_hi)
            __atomic_store_n(&m->large_hi, ptr + size, __ATOMIC_RELAXED);
        int kept = 0;
        for (unsigned k = 0; k < m->nlarge && !kept; k++)
            if (m->large[k].ptr == ptr) {
                m->large[k] = (struct big){.ptr = ptr, .size = size, .stack = stack};
                kept = 1;
            }
        if (!kept && m->nlarge < LARGE_CAP)
            m->large[m->nlarge++] = (struct big){.ptr = ptr, .size = size, .stack = stack};
        else if (!kept)
            __atomic_fetch_add(&m->lost, 1, __ATOMIC_RELAXED);
        spin_unlock(&m->large_lock);
    }
    return 0;
}

size_t vigil_heapmap_remove(struct vigil_heapmap *m, uintptr_t ptr, struct vigil_heap_object *out)
{
    size_t size = 0;
    uint32_t stack = 0;
    uint64_t h = region_hash(ptr);
    struct shard *s = shard_of(m, h);
    struct table *t;
    spin_lock(&s->lock);
    struct obj *o = shard_find(s, ptr, h, &t);
    if (o) {
        size = o->size;
        stack = o->stack;   /* with its tag bit */
        table_delete(t, o);
        set_start(m, ptr, 0);
    }
    spin_unlock(&s->lock);
    if (size > SCAN_LIMIT) {
        spin_lock(&m->large_lock);
        for (unsigned k = 0; k < m->nlarge; k++)
            if (m->large[k].ptr == ptr) {
                size = m->large[k].size;
                m->large[k] = m->large[--m->nlarge];
                break;
            }
        spin_unlock(&m->large_lock);
    }
    if (out && size)
        *out = (struct vigil_heap_object){.start = ptr, .size = size, .stack = stack & ~TAG_BIT,
                                          .tagged = !!(stack & TAG_BIT)};
    return size;
}

int vigil_heapmap_tag(struct vigil_heapmap *m, uintptr_t ptr, unsigned tagged, struct vigil_heap_object *out)
{
    uint64_t h = region_hash(ptr);
    struct shard *s = shard_of(m, h);
    struct table *t;
    struct obj was = {0};
    spin_lock(&s->lock);
    struct obj *o = shard_find(s, ptr, h, &t);
    if (o) {
        was = *o;
        o->stack = tagged ? o->stack | TAG_BIT : o->stack & ~TAG_BIT;
    }
    spin_unlock(&s->lock);
    if (!was.ptr)
        return -1;
    uint64_t size = was.size;
    if (size == UINT32_MAX) {   /* the large list's entry gets the tag too */
        spin_lock(&m->large_lock);
        for (unsigned k = 0; k < m->nlarge; k++)
            if (m->large[k].ptr == ptr) {
                size = m->large[k].size;
                m->large[k].stack = tagged ? m->large[k].stack | TAG_BIT : m->large[k].stack & ~TAG_BIT;
                break;
            }
        spin_unlock(&m->large_lock);
    }
    if (out) {
        *out = (struct vigil_heap_object){.start = ptr, .size = size, .stack = was.stack & ~TAG_BIT,
                                          .tagged = !!(was.stack & TAG_BIT)};
    }
    return 0;
}

static int lookup(struct vigil_heapmap *m, uintptr_t ptr, struct obj *out)
{
    uint64_t h = region_hash(ptr);
    struct shard *s = shard_of(m, h);
    struct table *t;
    spin_lock(&s->lock);
    struct obj *o = shard_find(s, ptr, h, &t);
    if (o)
        *out = *o;
    spin_unlock(&s->lock);
    return o != NULL;
}

static int large_find(struct vigil_heapmap *m, uintptr_t addr, int exact, struct vigil_heap_object *out)
{
    int found = -1;
    if (!__atomic_load_n(&m->nlarge, __ATOMIC_RELAXED))
        return -1;
    spin_lock(&m->large_lock);
    for (unsigned k = 0; k < m->nlarge && addr >= m->large_lo && addr < m->large_hi; k++)
        if (exact ? addr == m->large[k].ptr : addr - m->large[k].ptr < m->large[k].size) {
            *out = (struct vigil_heap_object){.start = m->large[k].ptr, .size = m->large[k].size,
                                              .stack = m->large[k].stack & ~TAG_BIT,
                                              .tagged = !!(m->large[k].stack & TAG_BIT)};
            found = 0;
            break;
        }
    spin_unlock(&m->large_lock);
    return found;
}

int vigil_heapmap_get(struct vigil_heapmap *m, uintptr_t ptr, struct vigil_heap_object *out)
{
    struct obj o;
    if (!ptr || !lookup(m, ptr, &o))
        return -1;
    if (o.size == UINT32_MAX)
        return large_find(m, ptr, 1, out);
    *out = (struct vigil_heap_object){.start = o.ptr, .size = o.size, .stack = o.stack & ~TAG_BIT,
                                      .tagged = !!(o.stack & TAG_BIT)};
    return 0;
}

int vigil_heapmap_find(struct vigil_heapmap *m, uintptr_t addr, struct vigil_heap_object *out)
{
    /* inside the range of the large objects: those first (a scan of the bitmaps through a
     * large object would read a word per KiB up to the limit) */
    if (__atomic_load_n(&m->nlarge, __ATOMIC_RELAXED) && addr >= __atomic_load_n(&m->large_lo, __ATOMIC_RELAXED) &&
        addr < __atomic_load_n(&m->large_hi, __ATOMIC_RELAXED) && large_find(m, addr, 0, out) == 0)
        return 0;
    uintptr_t start = nearest_start(m, addr, SCAN_LIMIT);
    if (start) {   /* objects do not overlap: only the nearest start below can hold addr */
        if (vigil_heapmap_get(m, start, out) == 0 && addr - out->start < out->size)
            return 0;
        return -1;
    }
    return large_find(m, addr, 0, out);
}

int vigil_heapmap_below(struct vigil_heapmap *m, uintptr_t addr, struct vigil_heap_object *out)
{
    uintptr_t start = nearest_start(m, addr, VIGIL_HEAPMAP_BELOW);
    return start ? vigil_heapmap_get(m, start, out) : -1;
}

uint64_t vigil_heapmap_lost(const struct vigil_heapmap *m)
{
    return __atomic_load_n(&m->lost, __ATOMIC_RELAXED);
}

/* The child has only the thread that forked, which held none of the locks (a map's functions
 * do not fork). A table that another thread was changing at the fork stays as that thread left
 * it, which the lookups still read right: an add has stored the entry or not (its start bit
 * may be set without one: no object is found there); a deletion's backward shift copies an
 * entry into the hole before it moves on and empties a slot only at its end, so every entry
 * stays reachable from its home, one of them perhaps twice (the first copy is found, and is
 * the one removed), and the block being removed may stay in the map: the runtime tells the
 * tools of a free before the allocator has the block, so in the child it was never freed. The
 * large list may have lost one entry (that object is then unknown, as when the list is full). */
void vigil_heapmap_after_fork(struct vigil_heapmap *m)
{
    for (unsigned i = 0; i < SHARDS; i++)
        __atomic_store_n(&m->shards[i].lock, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&m->large_lock, 0, __ATOMIC_RELAXED);
}
