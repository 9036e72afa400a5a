/* Shadow cells of the race tool: a fixed-size open-addressed hash table keyed by granule,
 * mapped at init (race.table: log2 of its cells). Cells are created by a compare-and-swap of
 * their key, so a lookup needs no lock and the access path allocates nothing; each cell has its
 * own spin lock for its state (racecore.h). A key lives in one of the PROBES slots of its
 * home's line of keys (one cache line: a lookup reads one line); when they are all taken, a new key evicts one of them (a virgin cell if there is one): the table
 * is a cache of the locations sampled last, and an eviction can only lose a race, never invent
 * one (the location starts again from virgin). A key changes only under its cell's lock, so
 * race_shadow_lock checks it again once it holds the lock.
 *
 * The keys live apart from the cells, and the eight granules of a 64-byte chunk have
 * neighbouring homes: the keys of a chunk share a cache line. A key's top bit says that its
 * cell left the virgin state. A reset (a block allocated again, a large one freed) skips the
 * pages that hold no used cell (counts per hashed 4 KiB page, changed under the cell's lock, so
 * never too low), and reads one line of keys per chunk of the other pages, touching only the
 * cells that were used; when so many pages have used cells that their lines would hold more
 * keys than the table, one pass over all keys instead. Its cost follows the pages with used
 * cells, not the block's size: in a program whose accesses are sampled, almost every
 * allocation reads only its pages' counts. */
#include "raceint.h"

#include <sys/mman.h>

#define PROBES 8   /* the slots of one line of keys: a lookup reads one cache line of them */
#define PAGE_BUCKET_BITS 16
#define USED (1ull << 63)

static unsigned char *cells;       /* (1 << table_bits) cells of cell_size bytes; by init */
static uint64_t *keys;             /* granule + 1 (| USED), 0: free; by compare-and-swap */
static size_t cell_size, table_mask, cells_bytes;   /* by init */
static unsigned cell_shift;        /* log2 of cell_size when it is a power of two, else 0; by init */
static uint32_t *page_count;       /* used cells per hashed page (atomic) */
uint32_t race_reset_gen;           /* resets so far (atomic): see raceint.h */

void *race_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int race_shadow_init(void)
{
    /* whole cache lines: a cell of 120 bytes at any offset spans three lines in most places */
    cell_size = (sizeof(struct race_cell) + race_cfg.history * sizeof(struct race_rec) + 63) & ~(size_t)63;
    cell_shift = (cell_size & (cell_size - 1)) == 0 ? (unsigned)__builtin_ctzl(cell_size) : 0;
    table_mask = ((size_t)1 << race_cfg.table_bits) - 1;
    cells_bytes = (table_mask + 1) * cell_size;
    cells = race_map(cells_bytes);
    keys = race_map((table_mask + 1) * sizeof *keys);
    page_count = race_map(sizeof(uint32_t) << PAGE_BUCKET_BITS);
    return cells && keys && page_count ? 0 : -1;
}

static inline size_t home_of(uint64_t g)
{
    return (size_t)((race_hash64(g >> 3) << 3) | (g & 7));
}

/* The n-th slot where granule g of home may live: the slots of home's line of keys, from home on. */
static inline size_t probe(size_t home, size_t n, size_t mask)
{
    return ((home & ~(size_t)(PROBES - 1)) | ((home + n) & (PROBES - 1))) & mask;
}

static inline struct race_cell *cell_at(size_t i)
{
    return (struct race_cell *)(cells + (cell_shift ? i << cell_shift : i * cell_size));
}

static inline uint32_t *page_bucket(uintptr_t page);

static __thread uint32_t victim_seed;   /* this thread's choices of victims (xorshift) */

/* A victim among the PROBES slots of a full window: a virgin cell, else one at random. */
static inline size_t victim_of(const uint64_t *kt, size_t mask, size_t home, uint64_t g)
{
    for (size_t n = 0; n < PROBES; n++) {   /* a virgin cell loses nothing */
        size_t i = probe(home, n, mask);
        if (!(__atomic_load_n(&kt[i], __ATOMIC_RELAXED) & USED))
            return i;
    }
    uint32_t x = victim_seed ? victim_seed : (uint32_t)g | 1;
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    victim_seed = x;
    return probe(home, x % PROBES, mask);
}

/* The cell of granule g (made when create is set), not locked; NULL when absent. The keys are
 * read relaxed, into locals: the caller locks the cell found and checks its key again, and an
 * acquiring load in the loop would make the compiler reload the table's globals at every probe. */
__attribute__((noinline))   /* inlined into race_shadow_lock, its only caller, it cost more */
static struct race_cell *find(uint64_t g, int create, size_t *index)
{
    uint64_t *const kt = keys;
    const size_t mask = table_mask;
    const uint64_t key = g + 1;
    const size_t home = home_of(g);
    for (size_t n = 0; n < PROBES; n++) {
        size_t i = probe(home, n, mask);
        uint64_t k = __atomic_load_n(&kt[i], __ATOMIC_RELAXED);
        if ((k & ~USED) == key) {
            *index = i;
            return cell_at(i);
        }
        if (k != 0)
            continue;
        if (!create)
            return NULL;   /* keys are never removed: an empty slot ends the search */
        if (__atomic_compare_exchange_n(&kt[i], &k, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            RACE_TALLY(cells, 1);
            *index = i;
            return cell_at(i);
        }
        if ((k & ~USED) == key) {
            *index = i;
            return cell_at(i);   /* another thread made it */
        }
    }
    if (!create)
        return NULL;
    /* the window is full: take a cell over */
    size_t i = victim_of(kt, mask, home, g);
    struct race_cell *c = cell_at(i);
    race_spin_lock(&c->lock);
    uint64_t k = __atomic_load_n(&keys[i], __ATOMIC_RELAXED);
    if ((k & ~USED) != key) {
        if (k & USED) {
            uint64_t old = (k & ~USED) - 1;
            __atomic_fetch_sub(page_bucket(((uintptr_t)old << race_cfg.granule_shift) >> 12), 1, __ATOMIC_RELAXED);
        }
        race_cell_reset(c, race_cfg.history);
        __atomic_store_n(&keys[i], key, __ATOMIC_RELEASE);
        RACE_TALLY(evicted, 1);
    }
    race_spin_unlock(&c->lock);
    *index = i;
    return c;
}

struct race_cell *race_shadow_lock(uint64_t g, int create, uint32_t *index)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        size_t i;
        struct race_cell *c = find(g, create, &i);
        if (!c)
            return NULL;
        race_spin_lock(&c->lock);
        if ((__atomic_load_n(&keys[i], __ATOMIC_RELAXED) & ~USED) == g + 1) {
            *index = (uint32_t)i;
            return c;
        }
        race_spin_unlock(&c->lock);   /* taken over meanwhile */
    }
    return NULL;
}

static inline uint32_t *page_bucket(uintptr_t page)
{
    return &page_count[(page * 0x9e3779b97f4a7c15ull) >> (64 - PAGE_BUCKET_BITS)];
}

static inline size_t index_of(const struct race_cell *c)
{
    size_t off = (size_t)((const unsigned char *)c - cells);
    return cell_shift ? off >> cell_shift : off / cell_size;
}

void race_shadow_note_used(uint32_t index, uint64_t g)
{
    __atomic_fetch_or(&keys[index], USED, __ATOMIC_RELAXED);
    __atomic_fetch_add(page_bucket(((uintptr_t)g << race_cfg.granule_shift) >> 12), 1, __ATOMIC_RELAXED);
}

/* Cell c (locked) of granule g back to virgin, if it is not. */
static void reset_locked(struct race_cell *c, uint64_t g)
{
    if (c->state != RACE_VIRGIN) {
        race_cell_reset(c, race_cfg.history);
        c->gen = __atomic_add_fetch(&race_reset_gen, 1, __ATOMIC_RELAXED);
        __atomic_fetch_and(&keys[index_of(c)], ~USED, __ATOMIC_RELAXED);
        __atomic_fetch_sub(page_bucket(((uintptr_t)g << race_cfg.granule_shift) >> 12), 1, __ATOMIC_RELAXED);
        RACE_COUNT(resets, 1);
    }
}

/* Slot i's used cell of granule g (key k) back to virgin, if the key is still g's. */
__attribute__((noinline)) static void reset_slot_slow(size_t i, uint64_t g)
{
    struct race_cell *c = cell_at(i);
    race_spin_lock(&c->lock);
    if ((__atomic_load_n(&keys[i], __ATOMIC_RELAXED) & ~USED) == g + 1)
        reset_locked(c, g);
    race_spin_unlock(&c->lock);
}

/* Slot i back to virgin if it holds a used cell of a granule in [g0, g1]. */
static inline __attribute__((always_inline)) void reset_slot(size_t i, uint64_t g0, uint64_t g1)
{
    uint64_t k = __atomic_load_n(&keys[i], __ATOMIC_RELAXED);
    if ((k & USED) && (k & ~USED) - 1 >= g0 && (k & ~USED) - 1 <= g1)
        reset_slot_slow(i, (k & ~USED) - 1);
}

/* Every key of the table: cheaper than the chunks' lines when many pages have used cells. */
static void reset_by_scan(uint64_t g0, uint64_t g1)
{
    for (size_t i = 0; i <= table_mask; i++)
        reset_slot(i, g0, g1);
}

/* The granules of [g0, g1] in the 4 KiB page at page << 12: the cells of a 64-byte chunk's
 * granules can only live in its home's line of keys, so one line per chunk is read. */
static void reset_page(uintptr_t page, uint64_t g0, uint64_t g1)
{
    unsigned gs = race_cfg.granule_shift;
    uint64_t lo = (uint64_t)(page << 12) >> gs, hi = (uint64_t)(((page + 1) << 12) - 1) >> gs;
    if (lo < g0)
        lo = g0;
    if (hi > g1)
        hi = g1;
    for (uint64_t chunk = lo >> 3; chunk <= hi >> 3; chunk++) {
        size_t line = home_of(chunk << 3) & ~(size_t)(PROBES - 1);
        for (size_t n = 0; n < PROBES; n++)
            reset_slot((line + n) & table_mask, lo, hi);
    }
}

void race_shadow_reset(uintptr_t addr, size_t size)
{
    if (!size || addr + size < addr)
        return;
    unsigned gs = race_cfg.granule_shift;
    uintptr_t end = addr + size;   /* exclusive */
    uint64_t g0 = addr >> gs, g1 = (end - 1) >> gs;
    uintptr_t p0 = addr >> 12, p1 = (end - 1) >> 12;
    /* the cost of each way, in keys read: a pass over the table, or the lines of the chunks of
     * the pages whose count says they hold a used cell (one count read per page) */
    size_t scan_cost = table_mask + 1, page_keys = (4096 >> gs) / 8 * PROBES;
    if (p1 - p0 >= scan_cost) {
        reset_by_scan(g0, g1);
        return;
    }
    size_t used = 0;
    for (uintptr_t page = p0; page <= p1; page++)
        used += __atomic_load_n(page_bucket(page), __ATOMIC_RELAXED) != 0;
    if (!used)
        return;   /* in a sampled program, almost every block */
    if (used * page_keys >= scan_cost) {
        reset_by_scan(g0, g1);
        return;
    }
    for (uintptr_t page = p0; page <= p1; page++)
        if (__atomic_load_n(page_bucket(page), __ATOMIC_RELAXED))
            reset_page(page, g0, g1);
}

void race_shadow_clear(void)
{
    /* private anonymous memory reads as zeros again */
    madvise(cells, cells_bytes, MADV_DONTNEED);
    madvise(keys, (table_mask + 1) * sizeof *keys, MADV_DONTNEED);
    madvise(page_count, sizeof(uint32_t) << PAGE_BUCKET_BITS, MADV_DONTNEED);
    __atomic_store_n(&race_stats.cells, 0, __ATOMIC_RELAXED);
}
