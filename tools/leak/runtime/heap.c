/* The leak tool's heap model; see heap.h for the design. */
#include "heap.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE_SHIFT 12
#define PAGE_SIZE_ (1ul << PAGE_SHIFT)
#define GRANULE_SHIFT 4                 /* malloc alignment: object starts are 16-aligned */
#define ADDR_BITS 47                    /* user space; higher addresses use exact lookups only */
#define LEAF_BITS 12
#define MID_BITS 12
#define TOP_BITS (ADDR_BITS - PAGE_SHIFT - LEAF_BITS - MID_BITS)
/* 32 shards (there were 256): the shard a writer takes, and the records it frees and reuses,
 * stay in cache more often; writers seldom meet on 32 locks with a few cores. */
#define SHARD_BITS 5
#define NSHARDS (1u << SHARD_BITS)
#define INITIAL_BUCKETS_LOG (12 - SHARD_BITS)   /* 4096 buckets in all: grown past 2 records per bucket */
#define RECORD_BATCH 4                  /* records a shard takes from the chunk at a time (x NSHARDS idle) */
#define RECORD_CHUNK (1u << 16)         /* records per mmap'd chunk */
#define MAX_CHAIN_WALK 4096             /* lock-free readers give up after this (never in practice) */
#define OPTIMISTIC_ATTEMPTS 4           /* lock-free walks before a lookup takes the shard lock */

/* ---- spin lock: writers only, held for a few hundred instructions at most ---- */
/* Contended: out of line, like every branch of the allocation and free paths that runs only
 * now and then (COLD, heap.h). */
static COLD void spin_wait(atomic_int *l)
{
    for (unsigned n = 0;; n++) {
        if (!atomic_load_explicit(l, memory_order_relaxed) &&
            !atomic_exchange_explicit(l, 1, memory_order_acquire))
            return;
        if (n > 64)
            sched_yield();
    }
}
static inline void spin_lock(atomic_int *l)
{
    if (__builtin_expect(atomic_exchange_explicit(l, 1, memory_order_acquire), 0))
        spin_wait(l);
}
static inline void spin_unlock(atomic_int *l) { atomic_store_explicit(l, 0, memory_order_release); }

/* ---- memory: mmap only, so the model never re-enters the program's malloc ---- */
static _Atomic uint64_t mapped_bytes;   /* written by heap_map/heap_unmap, any thread */

void *heap_map(size_t bytes)
{
    bytes = (bytes + PAGE_SIZE_ - 1) & ~(PAGE_SIZE_ - 1);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    atomic_fetch_add_explicit(&mapped_bytes, bytes, memory_order_relaxed);
    return p;
}

void heap_unmap(void *p, size_t bytes)
{
    bytes = (bytes + PAGE_SIZE_ - 1) & ~(PAGE_SIZE_ - 1);
    if (p && munmap(p, bytes) == 0)
        atomic_fetch_sub_explicit(&mapped_bytes, bytes, memory_order_relaxed);
}

/* ---- page map: top -> mid -> leaf -> per-page entry ---- */
struct page_entry {
    _Atomic uint64_t starts[PAGE_SIZE_ >> GRANULE_SHIFT >> 6];  /* one bit per 16-byte granule */
    _Atomic uintptr_t span;   /* start of a multi-page object covering this page (not its first) */
};
struct pm_leaf { struct page_entry page[1u << LEAF_BITS]; };
struct pm_mid { struct pm_leaf *_Atomic leaf[1u << MID_BITS]; };
/* Written (once per slot, CAS) by whichever thread first touches that address range. */
static struct pm_mid *_Atomic page_top[1u << TOP_BITS];

/* Page pn's slot at each level of the page map. */
static inline uintptr_t top_index(uintptr_t pn) { return pn >> (LEAF_BITS + MID_BITS); }
static inline uintptr_t mid_index(uintptr_t pn) { return (pn >> LEAF_BITS) & ((1u << MID_BITS) - 1); }
static inline uintptr_t leaf_index(uintptr_t pn) { return pn & ((1u << LEAF_BITS) - 1); }

/* The entry of page pn when one of its levels is missing (page_get): mapped when asked. */
static COLD struct page_entry *page_create(uintptr_t pn, int create)
{
    uintptr_t ti = top_index(pn), mi = mid_index(pn);
    struct pm_mid *mid = atomic_load_explicit(&page_top[ti], memory_order_acquire);
    if (!mid) {
        if (!create)
            return NULL;
        struct pm_mid *fresh = heap_map(sizeof *fresh), *expected = NULL;
        if (!fresh)
            return NULL;
        if (atomic_compare_exchange_strong(&page_top[ti], &expected, fresh))
            mid = fresh;
        else {
            heap_unmap(fresh, sizeof *fresh);
            mid = expected;
        }
    }
    struct pm_leaf *leaf = atomic_load_explicit(&mid->leaf[mi], memory_order_acquire);
    if (!leaf) {
        if (!create)
            return NULL;
        struct pm_leaf *fresh = heap_map(sizeof *fresh), *expected = NULL;
        if (!fresh)
            return NULL;
        if (atomic_compare_exchange_strong(&mid->leaf[mi], &expected, fresh))
            leaf = fresh;
        else {
            heap_unmap(fresh, sizeof *fresh);
            leaf = expected;
        }
    }
    return &leaf->page[leaf_index(pn)];
}

static inline struct page_entry *page_get(uintptr_t pn, int create)
{
    struct pm_mid *mid = atomic_load_explicit(&page_top[top_index(pn)], memory_order_acquire);
    struct pm_leaf *leaf = mid ? atomic_load_explicit(&mid->leaf[mid_index(pn)], memory_order_acquire) : NULL;
    if (__builtin_expect(!leaf, 0))
        return page_create(pn, create);
    return &leaf->page[leaf_index(pn)];
}

static inline int in_page_map(uintptr_t addr) { return addr < (1ul << ADDR_BITS); }

/* Highest object start in page p at or below granule index g (0..255); 0 when none. */
static uintptr_t page_highest_start(struct page_entry *p, uintptr_t page_base, unsigned g)
{
    for (int w = (int)(g >> 6); w >= 0; w--) {
        uint64_t bits = atomic_load_explicit(&p->starts[w], memory_order_acquire);
        if (w == (int)(g >> 6))
            bits &= (2ull << (g & 63)) - 1;     /* g & 63 == 63 wraps to all ones: intended */
        if (bits)
            return page_base + ((((uintptr_t)w << 6) + (63 - __builtin_clzll(bits))) << GRANULE_SHIFT);
    }
    return 0;
}

/* The page entry holding addr's start bit, created when asked; NULL outside the page map (or
 * when the entry cannot be mapped). */
static inline struct page_entry *start_page(uintptr_t addr, int create)
{
    return in_page_map(addr) ? page_get(addr >> PAGE_SHIFT, create) : NULL;
}

static inline int start_bit_test(struct page_entry *p, uintptr_t addr)
{
    unsigned g = (addr & (PAGE_SIZE_ - 1)) >> GRANULE_SHIFT;
    return (atomic_load_explicit(&p->starts[g >> 6], memory_order_relaxed) >> (g & 63)) & 1;
}

/* Set or clear addr's start bit: a locked instruction only when another thread may race it
 * (another shard's writer on a neighbouring object's bit of the same word). */
static inline void start_bit_set(struct page_entry *p, uintptr_t addr, int on)
{
    unsigned g = (addr & (PAGE_SIZE_ - 1)) >> GRANULE_SHIFT;
    _Atomic uint64_t *w = &p->starts[g >> 6];
    uint64_t bit = 1ull << (g & 63);
    if (heap_one_thread()) {
        uint64_t v = atomic_load_explicit(w, memory_order_relaxed);
        atomic_store_explicit(w, on ? v | bit : v & ~bit, memory_order_relaxed);
    } else if (on) {
        atomic_fetch_or_explicit(w, bit, memory_order_release);
    } else {
        atomic_fetch_and_explicit(w, ~bit, memory_order_release);
    }
}

/* The pages after the first of an object [addr, addr + size) larger than a page: each names the
 * object's start (on), or stops naming it (off). Smaller objects are found from their start page
 * or the next. */
static COLD void page_spans_set(uintptr_t addr, uint64_t size, int on)
{
    uintptr_t last = (addr + size - 1) >> PAGE_SHIFT;
    for (uintptr_t q = (addr >> PAGE_SHIFT) + 1; q <= last && q < (1ul << (ADDR_BITS - PAGE_SHIFT)); q++) {
        struct page_entry *e = page_get(q, on);
        uintptr_t expected = addr;
        if (e && on)
            atomic_store_explicit(&e->span, addr, memory_order_release);
        else if (e)
            atomic_compare_exchange_strong(&e->span, &expected, 0);
    }
}

/* Enter the object [addr, addr + size) whose start page entry is p. */
static inline void page_map_add(struct page_entry *p, uintptr_t addr, uint64_t size)
{
    start_bit_set(p, addr, 1);
    if (__builtin_expect(size > PAGE_SIZE_, 0))
        page_spans_set(addr, size, 1);
}

static inline void page_map_del(uintptr_t addr, uint64_t size)
{
    struct page_entry *p = start_page(addr, 0);
    if (!p)
        return;
    start_bit_set(p, addr, 0);
    if (__builtin_expect(size > PAGE_SIZE_, 0))
        page_spans_set(addr, size, 0);
}

/* ---- exact hash, sharded ---- */
/* A shard's buckets; replaced (never unmapped) when the shard grows, so readers holding an old
 * array stay safe. The size travels with the array so a reader never pairs it with another. */
struct bucket_array {
    uint64_t log;
    struct heap_obj *_Atomic b[];
};
/* Lock-free readers walk chains whose links writers rewrite: a removed record joins the free
 * list, a recycled one moves to another chain, a grown shard relinks every record. A reader
 * standing on such a record follows the wrong links and misses an object that is there. So
 * writers make `seq` odd while they relink (a sequence lock); a reader trusts a miss only when
 * `seq` was even and unchanged across its walk, and retries otherwise. Hits need no check: the
 * record held the address when the reader compared it. */
struct shard {
    atomic_int lock;
    _Atomic uint32_t seq;                     /* odd while a writer relinks; written under lock */
    struct bucket_array *_Atomic buckets;     /* written under lock, read lock-free */
    uint64_t count, bytes;                    /* under lock */
    /* Records free for reuse (under lock), linked by next. The shard keeps the head's next
     * too, and a pop prefetches the record after that: the record a pop reads was freed long
     * ago (frees come in bursts) and is seldom in cache, and reading it when it is needed was
     * three quarters of heap_insert's time in lua with the leak tool (now a third as much). A
     * stack of pointers did about as well but cost 8 bytes per free record. */
    struct heap_obj *free_head, *free_next;
    /* Statistics, under lock: a global atomic for each cost a locked instruction per event
     * (lua with the leak tool: a quarter of the tool's time per allocation was such adds). */
    uint64_t inserts, removes, unknown, replaced;
    char pad[128 - 8 - 8 - 16 - 16 - 32];
};
_Static_assert(sizeof(struct shard) == 128, "a shard fills two cache lines");
static struct shard shards[NSHARDS];          /* buckets set up by heap_init */

/* A writer's hold on a shard; 0 when the process has one thread and needs no lock. */
static inline int shard_lock(struct shard *s)
{
    if (heap_one_thread())
        return 0;
    spin_lock(&s->lock);
    return 1;
}
static inline void shard_unlock(struct shard *s, int held)
{
    if (held)
        spin_unlock(&s->lock);
}

#define MAX_RECORD_CHUNKS 4096
static atomic_int record_lock;                /* guards the fields below */
static struct heap_obj *record_chunk;         /* current chunk, bump-allocated */
static unsigned record_chunk_used;
static struct heap_obj *record_chunks[MAX_RECORD_CHUNKS];   /* every chunk, for accounting */
static unsigned record_nchunks;

/* Live bytes are the shards' sum; for the peak, each thread gathers its inserts' and removes'
 * bytes and adds them to live_estimate once they pass LIVE_FLUSH either way, so the peak is
 * exact to within LIVE_FLUSH per thread. */
#define LIVE_FLUSH (64 << 10)
static _Thread_local int64_t live_pending;    /* this thread's bytes not yet in live_estimate */
static _Atomic int64_t live_estimate;         /* by every thread, at a flush */
static _Atomic uint64_t peak_live_bytes;      /* max of live_estimate, by every thread */
static _Atomic uint64_t n_unknown_early;      /* removes before the model was set up */
_Atomic uintptr_t heap_addr_lo_inverted = 0, heap_addr_hi_inverted = UINTPTR_MAX;   /* heap.h: ~lo, ~hi */
static atomic_int initialized;
static _Atomic uint32_t new_object_flags;     /* HEAP_FLAG_MARKED once the exit scan begins */

static inline void shard_write_begin(struct shard *s)
{
    atomic_store_explicit(&s->seq, atomic_load_explicit(&s->seq, memory_order_relaxed) + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}
static inline void shard_write_end(struct shard *s)
{
    atomic_store_explicit(&s->seq, atomic_load_explicit(&s->seq, memory_order_relaxed) + 1, memory_order_release);
}

/* An address's shard and bucket, as one 64-bit value: the shard in the top SHARD_BITS bits,
 * the bucket index (within the shard) in the low bits. Both come from a hash of the address's
 * page, except the index's low 8 bits, which are the object's granule within its page XORed
 * with that hash: the objects of one page share a shard and a 256-bucket block, and objects
 * within 128 bytes of each other (8 granules) share a bucket cache line. Objects allocated
 * together are mostly freed together, so one bucket line brought in serves several of them
 * (a hash of the whole address made every insert and remove a bucket cache miss once the
 * arrays outgrew the cache). Page-aligned and larger aligned blocks, whose granule bits are
 * all zero, still spread over every bucket by their page hash. */
static inline uint64_t addr_hash(uintptr_t addr)
{
    uint64_t ph = (uint64_t)(addr >> PAGE_SHIFT) * 0x9E3779B97F4A7C15ull;
    uint64_t in_page = (addr & (PAGE_SIZE_ - 1)) >> GRANULE_SHIFT;
    return (ph & ~(~0ull >> SHARD_BITS)) | ((ph >> 16) ^ in_page);
}
static inline struct shard *shard_of(uint64_t h) { return &shards[h >> (64 - SHARD_BITS)]; }
static inline size_t bucket_of(uint64_t h, unsigned log) { return (size_t)h & ((1ul << log) - 1); }
/* The bucket of hash h in array a (a shard's current or a new one). */
static inline struct heap_obj *_Atomic *bucket_in(struct bucket_array *a, uint64_t h) { return &a->b[bucket_of(h, a->log)]; }

/* Bucket arrays up to ARENA_MAX bytes come from a bump arena of ARENA_CHUNK mappings: a shard's
 * array is 2 KiB when it first grows, and every shard mapping pages of its own at each growth
 * would make small programs pay whole pages (there were 256 shards once: a megabyte resident
 * for a few thousand objects). Nothing is returned (a grown shard's old array stays readable
 * for lock-free readers). */
#define ARENA_CHUNK (64u << 10)
#define ARENA_MAX (16u << 10)
#define MAX_ARENA_CHUNKS 1024
static atomic_int arena_lock;                 /* guards the fields below */
static unsigned char *arena_cur;
static size_t arena_left;
static unsigned char *arena_chunks[MAX_ARENA_CHUNKS];   /* for the memory-cost figure */
static unsigned arena_nchunks;

static void *arena_alloc(size_t bytes)
{
    bytes = (bytes + 63) & ~(size_t)63;
    if (bytes > ARENA_MAX)
        return heap_map(bytes);
    spin_lock(&arena_lock);
    if (arena_left < bytes) {
        unsigned char *chunk = arena_nchunks < MAX_ARENA_CHUNKS ? heap_map(ARENA_CHUNK) : NULL;
        if (!chunk) {
            spin_unlock(&arena_lock);
            return NULL;
        }
        arena_chunks[arena_nchunks++] = chunk;
        arena_cur = chunk;
        arena_left = ARENA_CHUNK;
    }
    void *p = arena_cur;
    arena_cur += bytes;
    arena_left -= bytes;
    spin_unlock(&arena_lock);
    return p;
}

static struct bucket_array *bucket_array_new(uint64_t log)
{
    struct bucket_array *a = arena_alloc(sizeof *a + (sizeof(struct heap_obj *) << log));
    if (a)
        a->log = log;
    return a;
}

static size_t bucket_array_bytes(const struct bucket_array *a) { return sizeof *a + (sizeof(void *) << a->log); }

static unsigned char *initial_block;          /* the shards' first bucket arrays (heap_init) */
#define INITIAL_BLOCK_BYTES ((sizeof(struct bucket_array) + (sizeof(struct heap_obj *) << INITIAL_BUCKETS_LOG)) * NSHARDS)

COLD int heap_init(void)
{
    static atomic_int init_lock;
    if (atomic_load(&initialized))
        return 0;
    spin_lock(&init_lock);
    int rc = 0;
    /* The shards' first bucket arrays share one mapping: small programs stay small. */
    size_t one = sizeof(struct bucket_array) + (sizeof(struct heap_obj *) << INITIAL_BUCKETS_LOG);
    unsigned char *block = atomic_load(&initialized) ? NULL : heap_map(one * NSHARDS);
    initial_block = block;
    if (!atomic_load(&initialized) && !block)
        rc = -1;
    for (unsigned i = 0; block && i < NSHARDS; i++) {
        struct bucket_array *b = (struct bucket_array *)(block + i * one);
        b->log = INITIAL_BUCKETS_LOG;
        atomic_store(&shards[i].buckets, b);
    }
    if (rc == 0)
        atomic_store(&initialized, 1);
    spin_unlock(&init_lock);
    return rc;
}

/* Return a removed record to s's free list (caller holds the lock). */
static void record_put(struct shard *s, struct heap_obj *o)
{
    atomic_store_explicit(&o->next, s->free_head, memory_order_relaxed);
    s->free_next = s->free_head;
    s->free_head = o;
}

/* Refill s's free list with a batch of records from the global chunk (caller holds s's lock). */
static COLD void records_refill(struct shard *s)
{
    spin_lock(&record_lock);
    for (int i = 0; i < RECORD_BATCH; i++) {
        if (!record_chunk || record_chunk_used == RECORD_CHUNK) {
            if (record_nchunks == MAX_RECORD_CHUNKS)
                break;
            record_chunk = heap_map(sizeof(struct heap_obj) * RECORD_CHUNK);
            record_chunk_used = 0;
            if (!record_chunk)
                break;
            record_chunks[record_nchunks++] = record_chunk;
        }
        record_put(s, &record_chunk[record_chunk_used++]);
    }
    spin_unlock(&record_lock);
}

static inline struct heap_obj *record_get(struct shard *s)
{
    if (__builtin_expect(!s->free_head, 0)) {
        records_refill(s);
        if (!s->free_head)
            return NULL;
    }
    struct heap_obj *r = s->free_head;
    s->free_head = s->free_next;
    s->free_next = s->free_head ? atomic_load_explicit(&s->free_head->next, memory_order_relaxed) : NULL;
    if (s->free_next)
        __builtin_prefetch(s->free_next, 1);   /* the line the next pop reads */
    return r;
}

static COLD void shard_grow(struct shard *s)
{
    struct bucket_array *old = atomic_load_explicit(&s->buckets, memory_order_relaxed);
    struct bucket_array *fresh = bucket_array_new(old->log + 1);
    if (!fresh)
        return;   /* keep the longer chains */
    for (size_t i = 0; i < (1ul << old->log); i++) {
        struct heap_obj *o = atomic_load_explicit(&old->b[i], memory_order_relaxed);
        while (o) {
            struct heap_obj *next = atomic_load_explicit(&o->next, memory_order_relaxed);
            size_t b = bucket_of(addr_hash(atomic_load_explicit(&o->addr, memory_order_relaxed)), fresh->log);
            atomic_store_explicit(&o->next, atomic_load_explicit(&fresh->b[b], memory_order_relaxed), memory_order_relaxed);
            atomic_store_explicit(&fresh->b[b], o, memory_order_relaxed);
            o = next;
        }
    }
    /* The old array stays mapped: a lock-free reader may still be walking it. One mapped on its
     * own gives its pages back: such a reader then reads empty buckets, a miss, and misses are
     * trusted only when the shard's seq did not move (this grow moved it: heap_insert's write
     * section). */
    atomic_store_explicit(&s->buckets, fresh, memory_order_release);
    if (bucket_array_bytes(old) > ARENA_MAX)
        madvise(old, bucket_array_bytes(old), MADV_DONTNEED);
}

static COLD void bounds_widen_to(uintptr_t lo, uintptr_t hi)
{
    uintptr_t cur = atomic_load_explicit(&heap_addr_lo_inverted, memory_order_relaxed);
    while (~lo > cur && !atomic_compare_exchange_weak(&heap_addr_lo_inverted, &cur, ~lo))
        ;
    cur = atomic_load_explicit(&heap_addr_hi_inverted, memory_order_relaxed);
    while (~hi < cur && !atomic_compare_exchange_weak(&heap_addr_hi_inverted, &cur, ~hi))
        ;
}

static inline void bounds_widen(uintptr_t lo, uintptr_t hi)
{
    if (__builtin_expect(~lo > atomic_load_explicit(&heap_addr_lo_inverted, memory_order_relaxed) ||
                         ~hi < atomic_load_explicit(&heap_addr_hi_inverted, memory_order_relaxed), 0))
        bounds_widen_to(lo, hi);
}

/* Unlink the record starting at addr from its chain; caller holds the shard lock. */
static struct heap_obj *shard_unlink(struct shard *s, uintptr_t addr, uint64_t h)
{
    struct bucket_array *a = atomic_load_explicit(&s->buckets, memory_order_relaxed);
    struct heap_obj *_Atomic *link = bucket_in(a, h);
    for (struct heap_obj *o; (o = atomic_load_explicit(link, memory_order_relaxed)); link = &o->next)
        if (atomic_load_explicit(&o->addr, memory_order_relaxed) == addr) {
            atomic_store_explicit(link, atomic_load_explicit(&o->next, memory_order_relaxed), memory_order_release);
            return o;
        }
    return NULL;
}

static COLD void live_flush(void)
{
    int64_t now = atomic_fetch_add_explicit(&live_estimate, live_pending, memory_order_relaxed) + live_pending;
    live_pending = 0;
    uint64_t peak = atomic_load_explicit(&peak_live_bytes, memory_order_relaxed);
    while (now > 0 && (uint64_t)now > peak && !atomic_compare_exchange_weak(&peak_live_bytes, &peak, (uint64_t)now))
        ;
}

static inline void live_add(int64_t delta)
{
    live_pending += delta;
    if (__builtin_expect(live_pending >= LIVE_FLUSH || live_pending <= -LIVE_FLUSH, 0))
        live_flush();
}

void heap_mark_new_objects(void)
{
    atomic_store(&new_object_flags, HEAP_FLAG_MARKED);
}

/* An object already starting at addr: a free we never saw (e.g. realloc in place reported as a
 * fresh block). Its record goes back to the free list; caller holds the shard for writing. */
static COLD void drop_replaced(struct shard *s, uintptr_t addr, uint64_t h)
{
    struct heap_obj *old = shard_unlink(s, addr, h);
    if (!old)
        return;
    uint64_t old_size = atomic_load_explicit(&old->size, memory_order_relaxed);
    s->count--;
    s->bytes -= old_size;
    live_add(-(int64_t)old_size);
    page_map_del(addr, old_size);
    atomic_store_explicit(&old->addr, 0, memory_order_relaxed);
    record_put(s, old);
    s->replaced++;
}

struct heap_obj *heap_insert(uintptr_t addr, size_t size, uint32_t site, uint32_t now_ms, uint32_t now_seq)
{
    if (!addr || (__builtin_expect(!atomic_load_explicit(&initialized, memory_order_acquire), 0) && heap_init() != 0))
        return NULL;
    uint64_t h = addr_hash(addr);
    struct shard *s = shard_of(h);
    struct page_entry *pe = start_page(addr, 1);
    int held = shard_lock(s);
    shard_write_begin(s);
    /* An object already starting at addr (a free we never saw) has its start bit set: only then
     * walk the chain, whose records are cache misses. The bit changes under this shard's lock.
     * Without a page entry (outside the page map, or no memory for it) the chain is walked. */
    if (__builtin_expect(!pe || start_bit_test(pe, addr), 0))
        drop_replaced(s, addr, h);
    struct heap_obj *o = record_get(s);
    if (!o) {
        shard_write_end(s);
        shard_unlock(s, held);
        return NULL;
    }
    atomic_store_explicit(&o->size, size, memory_order_relaxed);
    atomic_store_explicit(&o->site_flags, (site & HEAP_SITE_MASK) |
                          atomic_load_explicit(&new_object_flags, memory_order_relaxed), memory_order_relaxed);
    o->alloc_ms = now_ms;
    atomic_store_explicit(&o->touch_ms, now_ms, memory_order_relaxed);
    atomic_store_explicit(&o->touch_seq, now_seq, memory_order_relaxed);
    atomic_store_explicit(&o->access_site, HEAP_NO_SITE, memory_order_relaxed);
    atomic_store_explicit(&o->max_gap, 0, memory_order_relaxed);
    atomic_store_explicit(&o->addr, addr, memory_order_relaxed);
    struct bucket_array *a = atomic_load_explicit(&s->buckets, memory_order_relaxed);
    struct heap_obj *_Atomic *bucket = bucket_in(a, h);
    atomic_store_explicit(&o->next, atomic_load_explicit(bucket, memory_order_relaxed), memory_order_relaxed);
    atomic_store_explicit(bucket, o, memory_order_release);   /* publish the filled record */
    s->count++;
    s->bytes += size;
    s->inserts++;
    if (__builtin_expect(s->count > (2ul << a->log), 0))
        shard_grow(s);
    shard_write_end(s);
    if (pe)
        page_map_add(pe, addr, size);
    shard_unlock(s, held);
    bounds_widen(addr, addr + (size ? size : 1));
    live_add((int64_t)size);
    return o;
}

/* Unlink the record of the object starting at addr and return it to the free list. The record's
 * first fields (address, size, site) are read anyway; the access history, which may sit on the
 * record's next cache line, only when `history` asks for it (a realloc's release). */
static inline __attribute__((always_inline)) int remove_object(uintptr_t addr, struct heap_history *out, int history)
{
    if (!addr || !atomic_load_explicit(&initialized, memory_order_acquire)) {
        atomic_fetch_add_explicit(&n_unknown_early, 1, memory_order_relaxed);
        return 0;
    }
    uint64_t h = addr_hash(addr);
    struct shard *s = shard_of(h);
    int held = shard_lock(s);
    struct heap_obj *o = shard_unlink(s, addr, h);
    if (!o) {
        s->unknown++;
        shard_unlock(s, held);
        return 0;
    }
    uint64_t sz = atomic_load_explicit(&o->size, memory_order_relaxed);
    out->size = sz;
    out->site = atomic_load_explicit(&o->site_flags, memory_order_relaxed) & HEAP_SITE_MASK;
    if (history) {
        out->alloc_ms = o->alloc_ms;
        out->touch_ms = atomic_load_explicit(&o->touch_ms, memory_order_relaxed);
        out->touch_seq = atomic_load_explicit(&o->touch_seq, memory_order_relaxed);
        out->access_site = atomic_load_explicit(&o->access_site, memory_order_relaxed);
        out->max_gap = atomic_load_explicit(&o->max_gap, memory_order_relaxed);
    }
    s->count--;
    s->bytes -= sz;
    s->removes++;
    page_map_del(addr, sz);
    /* A reader standing on o now walks the free list and misses: seq makes it retry. */
    shard_write_begin(s);
    atomic_store_explicit(&o->addr, 0, memory_order_relaxed);
    record_put(s, o);
    shard_write_end(s);
    shard_unlock(s, held);
    live_add(-(int64_t)sz);
    return 1;
}

/* The bucket addr hashes to in the shard's current array (NULL before heap_init). */
static struct heap_obj *_Atomic *bucket_for(uintptr_t addr)
{
    uint64_t h = addr_hash(addr);
    struct bucket_array *a = atomic_load_explicit(&shard_of(h)->buckets, memory_order_acquire);
    return a ? bucket_in(a, h) : NULL;
}

void heap_prefetch_bucket(uintptr_t addr)
{
    struct heap_obj *_Atomic *bucket = bucket_for(addr);
    if (bucket)
        __builtin_prefetch(bucket);
}

void heap_prefetch_record(uintptr_t addr)
{
    struct heap_obj *_Atomic *bucket = bucket_for(addr);
    struct heap_obj *o = bucket ? atomic_load_explicit(bucket, memory_order_relaxed) : NULL;
    if (o)
        __builtin_prefetch(o);
}

int heap_remove_history(uintptr_t addr, struct heap_history *out)
{
    struct heap_history h;
    return remove_object(addr, out ? out : &h, 1);
}

int heap_remove(uintptr_t addr, uint32_t *site, uint64_t *size)
{
    struct heap_history h;
    if (!remove_object(addr, &h, 0))
        return 0;
    if (site)
        *site = h.site;
    if (size)
        *size = h.size;
    return 1;
}

void heap_inherit(struct heap_obj *o, const struct heap_history *from)
{
    uint32_t flags = atomic_load_explicit(&o->site_flags, memory_order_relaxed) & ~HEAP_SITE_MASK;
    atomic_store_explicit(&o->site_flags, flags | (from->site & HEAP_SITE_MASK), memory_order_relaxed);
    o->alloc_ms = from->alloc_ms;
    atomic_store_explicit(&o->touch_ms, from->touch_ms, memory_order_relaxed);
    atomic_store_explicit(&o->touch_seq, from->touch_seq, memory_order_relaxed);
    atomic_store_explicit(&o->access_site, from->access_site, memory_order_relaxed);
    atomic_store_explicit(&o->max_gap, from->max_gap, memory_order_relaxed);
}

static struct heap_obj *chain_find(struct shard *s, uintptr_t addr, uint64_t h)
{
    struct bucket_array *a = atomic_load_explicit(&s->buckets, memory_order_acquire);
    struct heap_obj *o = atomic_load_explicit(bucket_in(a, h), memory_order_acquire);
    for (int n = 0; o && n < MAX_CHAIN_WALK; n++) {
        if (atomic_load_explicit(&o->addr, memory_order_relaxed) == addr)
            return o;
        o = atomic_load_explicit(&o->next, memory_order_acquire);
    }
    return NULL;
}

void heap_after_fork(void)
{
    for (unsigned i = 0; i < NSHARDS; i++) {
        struct shard *s = &shards[i];
        uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
        if (seq & 1)   /* a writer's relink cut short: readers would retry, then wait for its lock */
            atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
        atomic_store_explicit(&s->lock, 0, memory_order_relaxed);
    }
    atomic_store_explicit(&record_lock, 0, memory_order_relaxed);
    atomic_store_explicit(&arena_lock, 0, memory_order_relaxed);
}

struct heap_obj *heap_find_exact(uintptr_t addr)
{
    if (!addr || !atomic_load_explicit(&initialized, memory_order_acquire))
        return NULL;
    uint64_t h = addr_hash(addr);
    struct shard *s = shard_of(h);
    for (int attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
        uint32_t before = atomic_load_explicit(&s->seq, memory_order_acquire);
        struct heap_obj *o = chain_find(s, addr, h);
        if (o)
            return o;
        atomic_thread_fence(memory_order_acquire);
        if (!(before & 1) && atomic_load_explicit(&s->seq, memory_order_relaxed) == before)
            return NULL;   /* a clean walk: the object is really not there */
        if (attempt > 0)
            sched_yield();   /* a writer holds the shard; let it finish */
    }
    /* Writers kept relinking: walk once under their lock (rare, and still per shard). */
    spin_lock(&s->lock);
    struct heap_obj *o = chain_find(s, addr, h);
    spin_unlock(&s->lock);
    return o;
}

static inline struct heap_obj *covering(uintptr_t start, uintptr_t addr)
{
    if (!start)
        return NULL;
    struct heap_obj *o = heap_find_exact(start);
    if (!o)
        return NULL;
    uint64_t size = atomic_load_explicit(&o->size, memory_order_relaxed);
    return addr < start + (size ? size : 1) ? o : NULL;
}

struct heap_obj *heap_find(uintptr_t addr)
{
    if (!heap_maybe_contains(addr))
        return NULL;
    if (!in_page_map(addr))
        return heap_find_exact(addr);
    uintptr_t pn = addr >> PAGE_SHIFT, base = pn << PAGE_SHIFT;
    struct page_entry *p = page_get(pn, 0);
    if (!p)
        return NULL;
    uintptr_t start = page_highest_start(p, base, (addr & (PAGE_SIZE_ - 1)) >> GRANULE_SHIFT);
    if (start)
        return covering(start, addr);
    uintptr_t span = atomic_load_explicit(&p->span, memory_order_acquire);
    if (span)
        return covering(span, addr);
    struct page_entry *prev = pn ? page_get(pn - 1, 0) : NULL;
    if (!prev)
        return NULL;
    return covering(page_highest_start(prev, base - PAGE_SIZE_, (PAGE_SIZE_ >> GRANULE_SHIFT) - 1), addr);
}

/* Call fn with the head of every bucket's chain (NULL for an empty bucket), one shard at a
 * time under that shard's lock. */
static inline __attribute__((always_inline)) void each_chain(void (*fn)(struct heap_obj *head, void *arg), void *arg)
{
    if (!atomic_load(&initialized))
        return;
    for (unsigned i = 0; i < NSHARDS; i++) {
        struct shard *s = &shards[i];
        spin_lock(&s->lock);
        struct bucket_array *a = atomic_load_explicit(&s->buckets, memory_order_relaxed);
        for (size_t k = 0; k < (1ul << a->log); k++)
            fn(atomic_load_explicit(&a->b[k], memory_order_relaxed), arg);
        spin_unlock(&s->lock);
    }
}

static inline struct heap_obj *chain_next(struct heap_obj *o)
{
    return atomic_load_explicit(&o->next, memory_order_relaxed);
}

struct foreach_arg { void (*fn)(struct heap_obj *o, void *arg); void *arg; };
static void foreach_chain(struct heap_obj *o, void *arg)
{
    struct foreach_arg *f = arg;
    for (; o; o = chain_next(o))
        f->fn(o, f->arg);
}

void heap_foreach(void (*fn)(struct heap_obj *o, void *arg), void *arg)
{
    struct foreach_arg f = {fn, arg};
    each_chain(foreach_chain, &f);
}

static void chain_stats_add(struct heap_obj *o, void *arg)
{
    struct heap_chain_stats *out = arg;
    uint64_t n = 0;
    for (; o; o = chain_next(o))
        n++;
    out->buckets++;
    out->used_buckets += n != 0;
    out->records += n;
    if (n > out->longest)
        out->longest = n;
}

void heap_get_chain_stats(struct heap_chain_stats *out)
{
    memset(out, 0, sizeof *out);
    each_chain(chain_stats_add, out);
}

/* Resident part of one of our mappings (mincore), for the memory-cost figure. */
static uint64_t resident_of(const void *p, size_t bytes)
{
    unsigned char vec[64];
    uint64_t resident = 0;
    uintptr_t a = (uintptr_t)p & ~(PAGE_SIZE_ - 1), end = (uintptr_t)p + bytes;
    while (a < end) {
        size_t n = (end - a + PAGE_SIZE_ - 1) >> PAGE_SHIFT;
        if (n > sizeof vec)
            n = sizeof vec;
        if (mincore((void *)a, n << PAGE_SHIFT, vec) != 0)
            break;
        for (size_t i = 0; i < n; i++)
            resident += (vec[i] & 1) ? PAGE_SIZE_ : 0;
        a += n << PAGE_SHIFT;
    }
    return resident;
}

void heap_get_stats(struct heap_stats *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i < NSHARDS; i++) {
        spin_lock(&shards[i].lock);
        out->live_objects += shards[i].count;
        out->live_bytes += shards[i].bytes;
        out->inserts += shards[i].inserts;
        out->removes += shards[i].removes;
        out->unknown_removes += shards[i].unknown;
        out->replaced += shards[i].replaced;
        struct bucket_array *a = atomic_load(&shards[i].buckets);
        if (a && bucket_array_bytes(a) > ARENA_MAX)   /* mapped on its own */
            out->resident_bytes += resident_of(a, bucket_array_bytes(a));
        spin_unlock(&shards[i].lock);
    }
    if (initial_block)
        out->resident_bytes += resident_of(initial_block, INITIAL_BLOCK_BYTES);
    spin_lock(&arena_lock);
    for (unsigned i = 0; i < arena_nchunks; i++)
        out->resident_bytes += resident_of(arena_chunks[i], ARENA_CHUNK);
    spin_unlock(&arena_lock);
    for (unsigned t = 0; t < (1u << TOP_BITS); t++) {
        struct pm_mid *mid = atomic_load(&page_top[t]);
        if (!mid)
            continue;
        out->resident_bytes += resident_of(mid, sizeof *mid);
        for (unsigned m = 0; m < (1u << MID_BITS); m++) {
            struct pm_leaf *leaf = atomic_load(&mid->leaf[m]);
            if (leaf)
                out->resident_bytes += resident_of(leaf, sizeof *leaf);
        }
    }
    live_flush();
    out->peak_live_bytes = atomic_load(&peak_live_bytes);
    if (out->peak_live_bytes < out->live_bytes)
        out->peak_live_bytes = out->live_bytes;
    out->unknown_removes += atomic_load(&n_unknown_early);
    out->mapped_bytes = atomic_load(&mapped_bytes);
    out->record_bytes = out->live_objects * sizeof(struct heap_obj);
    spin_lock(&record_lock);
    for (unsigned i = 0; i < record_nchunks; i++)
        out->resident_bytes += resident_of(record_chunks[i], sizeof(struct heap_obj) * RECORD_CHUNK);
    spin_unlock(&record_lock);
}
