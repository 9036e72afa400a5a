/* Shadow cells of the race tool: a fixed-size open-addressed hash table keyed by granule,
 * mapped at init (race.table: log2 of its cells). Cells are created by a compare-and-swap of
 * their key and never removed, so a lookup needs no lock and the access path allocates
 * nothing; each cell has its own spin lock for its state (racecore.h). When a key finds no
 * free cell within PROBES of its home, the access is not checked (counted in race.json).
 *
 * Resets (memory freed or allocated again) must not probe every granule of every object: two
 * levels of counts of the non-virgin cells, per hashed 4 KiB page and per hashed 64-byte
 * chunk, let a reset skip the pages and chunks that hold none (almost all, in a program whose
 * accesses are sampled). The counts change under the cell's lock, so they are exact. */
#include "raceint.h"

#include <sys/mman.h>

#define PROBES 48
#define PAGE_BUCKET_BITS 16
#define CHUNK_BUCKET_BITS 18
#define CHUNK_SHIFT 6

static unsigned char *cells;       /* the table: (1 << table_bits) cells of cell_size bytes; by init */
static size_t cell_size, table_mask, table_bytes;   /* by init */
static uint32_t *page_count;       /* non-virgin cells per hashed page (atomic) */
static uint32_t *chunk_count;      /* ... per hashed chunk (atomic) */

void *race_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int race_shadow_init(void)
{
    cell_size = sizeof(struct race_cell) + race_cfg.history * sizeof(struct race_rec);
    table_mask = ((size_t)1 << race_cfg.table_bits) - 1;
    table_bytes = (table_mask + 1) * cell_size;
    cells = race_map(table_bytes);
    page_count = race_map(sizeof(uint32_t) << PAGE_BUCKET_BITS);
    chunk_count = race_map(sizeof(uint32_t) << CHUNK_BUCKET_BITS);
    return cells && page_count && chunk_count ? 0 : -1;
}

static inline struct race_cell *cell_at(size_t i)
{
    return (struct race_cell *)(cells + (i & table_mask) * cell_size);
}

struct race_cell *race_shadow_cell(uint64_t g, int create)
{
    uint64_t key = g + 1;
    size_t home = (size_t)race_hash64(g);
    for (size_t i = 0; i < PROBES; i++) {
        struct race_cell *c = cell_at(home + i);
        uint64_t k = __atomic_load_n(&c->key, __ATOMIC_ACQUIRE);
        if (k == key)
            return c;
        if (k != 0)
            continue;
        if (!create)
            return NULL;   /* keys are never removed: an empty cell ends the search */
        if (__atomic_compare_exchange_n(&c->key, &k, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            RACE_COUNT(cells, 1);
            return c;
        }
        if (k == key)
            return c;      /* another thread created it */
    }
    if (create)
        RACE_COUNT(table_full, 1);
    return NULL;
}

static inline uint32_t *page_bucket(uint64_t page)
{
    return &page_count[race_hash64(page) >> (64 - PAGE_BUCKET_BITS)];
}

static inline uint32_t *chunk_bucket(uint64_t chunk)
{
    return &chunk_count[race_hash64(chunk ^ 0x5bd1e995u) >> (64 - CHUNK_BUCKET_BITS)];
}

void race_shadow_note_used(uint64_t g)
{
    uintptr_t addr = (uintptr_t)g << race_cfg.granule_shift;
    __atomic_fetch_add(page_bucket(addr >> 12), 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(chunk_bucket(addr >> CHUNK_SHIFT), 1, __ATOMIC_RELAXED);
}

static void note_reset(uint64_t g)
{
    uintptr_t addr = (uintptr_t)g << race_cfg.granule_shift;
    __atomic_fetch_sub(page_bucket(addr >> 12), 1, __ATOMIC_RELAXED);
    __atomic_fetch_sub(chunk_bucket(addr >> CHUNK_SHIFT), 1, __ATOMIC_RELAXED);
}

static void reset_granules(uint64_t g0, uint64_t g1)
{
    for (uint64_t g = g0; g <= g1; g++) {
        struct race_cell *c = race_shadow_cell(g, 0);
        if (!c)
            continue;
        race_spin_lock(&c->lock);
        if (c->state != RACE_VIRGIN) {
            race_cell_reset(c, race_cfg.history);
            note_reset(g);
            RACE_COUNT(resets, 1);
        }
        race_spin_unlock(&c->lock);
    }
}

void race_shadow_reset(uintptr_t addr, size_t size)
{
    if (!size || addr + size < addr)
        return;
    unsigned gs = race_cfg.granule_shift;
    uintptr_t end = addr + size;   /* exclusive */
    for (uintptr_t page = addr >> 12; page <= (end - 1) >> 12; page++) {
        if (!__atomic_load_n(page_bucket(page), __ATOMIC_RELAXED))
            continue;
        uintptr_t lo = page << 12 > addr ? page << 12 : addr;
        uintptr_t hi = (page + 1) << 12 < end ? (page + 1) << 12 : end;
        /* chunks of at least a granule */
        unsigned cs = gs > CHUNK_SHIFT ? gs : CHUNK_SHIFT;
        for (uintptr_t chunk = lo >> cs; chunk <= (hi - 1) >> cs; chunk++) {
            if (cs == CHUNK_SHIFT && !__atomic_load_n(chunk_bucket(chunk), __ATOMIC_RELAXED))
                continue;
            uintptr_t clo = chunk << cs > lo ? chunk << cs : lo;
            uintptr_t chi = (chunk + 1) << cs < hi ? (chunk + 1) << cs : hi;
            reset_granules(clo >> gs, (chi - 1) >> gs);
        }
    }
}

void race_shadow_clear(void)
{
    /* private anonymous memory reads as zeros again */
    madvise(cells, table_bytes, MADV_DONTNEED);
    madvise(page_count, sizeof(uint32_t) << PAGE_BUCKET_BITS, MADV_DONTNEED);
    madvise(chunk_count, sizeof(uint32_t) << CHUNK_BUCKET_BITS, MADV_DONTNEED);
    __atomic_store_n(&race_stats.cells, 0, __ATOMIC_RELAXED);
}
