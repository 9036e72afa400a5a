// unit-extra: tools/leak/runtime/heap.c
// unit-libs: -lpthread
/* The leak tool's heap model: insert, exact and interior lookup, remove, realloc moves, unknown
 * frees, accounting, and a concurrent smoke test. Addresses are synthetic (the model never
 * dereferences them). */
#include "check.h"
#include "../runtime/heap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BASE 0x10000000ul

static uintptr_t found_start(uintptr_t addr)
{
    struct heap_obj *o = heap_find(addr);
    return o ? atomic_load(&o->addr) : 0;
}

static void count_cb(struct heap_obj *o, void *arg) { (void)o; ++*(unsigned long *)arg; }

/* Reference model for the randomized test: objects laid out without overlap. */
struct ref { uintptr_t addr; size_t size; int live; };

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_basic(void)
{
    struct heap_stats st0, st;
    heap_get_stats(&st0);
    uintptr_t a = BASE + 0x100, b = BASE + 0x140;
    CHECK(heap_insert(a, 40, 7, 100, 5) != NULL, "insert a");
    CHECK(heap_insert(b, 16, 8, 101, 6) != NULL, "insert b");
    CHECK(found_start(a) == a, "start of a: got %#lx", (unsigned long)found_start(a));
    CHECK(found_start(a + 39) == a, "last byte of a");
    CHECK(found_start(a + 40) == 0, "gap after a is nobody's: got %#lx", (unsigned long)found_start(a + 40));
    CHECK(found_start(b + 8) == b, "interior of b");
    CHECK(found_start(b + 16) == 0, "one past b");
    CHECK(found_start(a - 1) == 0, "before a");
    CHECK(heap_find_exact(a + 16) == NULL, "exact lookup ignores interior addresses");
    struct heap_obj *o = heap_find_exact(a);
    CHECK(o && (atomic_load(&o->site_flags) & HEAP_SITE_MASK) == 7, "site of a");
    CHECK(o && atomic_load(&o->access_site) == HEAP_NO_SITE, "fresh object never accessed");
    heap_touch(o, 150, 9, 1234);
    CHECK(atomic_load(&o->touch_ms) == 150 && atomic_load(&o->access_site) == 1234 &&
          atomic_load(&o->touch_seq) == 9 && atomic_load(&o->max_gap) == 50, "touch updates");
    heap_touch(o, 160, 10, 1235);
    CHECK(atomic_load(&o->max_gap) == 50, "max gap kept: %u", atomic_load(&o->max_gap));

    uint32_t site = 0;
    uint64_t size = 0;
    CHECK(heap_remove(a, &site, &size) == 1 && site == 7 && size == 40, "remove a");
    CHECK(found_start(a + 4) == 0, "a gone");
    CHECK(heap_remove(a, NULL, NULL) == 0, "double free is unknown");
    CHECK(heap_remove(BASE + 0x9990, NULL, NULL) == 0, "never-allocated pointer is unknown");
    heap_get_stats(&st);
    CHECK(st.unknown_removes - st0.unknown_removes == 2, "unknown removes counted: %lu",
          (unsigned long)(st.unknown_removes - st0.unknown_removes));
    CHECK(heap_remove(b, NULL, NULL) == 1, "remove b");
}

static void test_pages(void)
{
    /* a small object crossing into the next page */
    uintptr_t x = BASE + 0x10000 + 4096 - 32;
    heap_insert(x, 100, 1, 0, 0);
    CHECK(found_start(x + 90) == x, "cross-page small object found from the next page");
    /* an object starting later in that next page must win for addresses past its start */
    uintptr_t y = x + 112;
    heap_insert(y, 32, 2, 0, 0);
    CHECK(found_start(y + 4) == y && found_start(x + 99) == x && found_start(x + 104) == 0,
          "neighbours on the second page");
    /* a large object covering many pages, with small objects after it */
    uintptr_t big = BASE + 0x100000, big_size = 1 << 20;
    heap_insert(big, big_size, 3, 0, 0);
    CHECK(found_start(big + 12345) == big, "interior of large object");
    CHECK(found_start(big + big_size - 1) == big, "last byte of large object");
    CHECK(found_start(big + big_size) == 0, "past the large object");
    uintptr_t after = big + big_size + 16;
    heap_insert(after, 64, 4, 0, 0);
    CHECK(found_start(after + 10) == after, "small object right after a large one");
    CHECK(heap_remove(big, NULL, NULL) == 1, "remove large");
    CHECK(found_start(big + 500000) == 0, "large object's pages cleared");
    CHECK(found_start(after + 10) == after, "neighbour survives");
    /* realloc move: free of the old block, a new block elsewhere */
    uintptr_t r0 = BASE + 0x300000, r1 = BASE + 0x380000;
    heap_insert(r0, 64, 5, 0, 0);
    heap_remove(r0, NULL, NULL);
    heap_insert(r1, 8192, 5, 0, 0);
    CHECK(found_start(r0 + 8) == 0 && found_start(r1 + 8000) == r1, "realloc move");
    /* the moved object keeps the original's site, age and access history */
    struct heap_obj *mo = heap_find_exact(r1);
    heap_touch(mo, 700, 40, 4321);
    struct heap_history hist;
    uintptr_t r2 = BASE + 0x400000;
    CHECK(heap_remove_history(r1, &hist) == 1 && hist.size == 8192 && hist.site == 5 &&
          hist.touch_ms == 700 && hist.access_site == 4321 && hist.touch_seq == 40, "history of a removed object");
    struct heap_obj *moved = heap_insert(r2, 9000, 11, 900, 50);
    heap_inherit(moved, &hist);
    CHECK(moved && (atomic_load(&moved->site_flags) & HEAP_SITE_MASK) == 5 && moved->alloc_ms == 0 &&
          atomic_load(&moved->touch_ms) == 700 && atomic_load(&moved->access_site) == 4321 &&
          atomic_load(&moved->max_gap) == 700 && atomic_load(&moved->size) == 9000, "moved object inherits");
    heap_remove(r2, NULL, NULL);
    heap_insert(r1, 8192, 5, 0, 0);
    /* realloc in place reported as a new block over a live start */
    struct heap_stats st0, st;
    heap_get_stats(&st0);
    heap_insert(r1, 100, 6, 0, 0);
    heap_get_stats(&st);
    CHECK(st.replaced == st0.replaced + 1, "replacement counted");
    CHECK(found_start(r1 + 99) == r1 && found_start(r1 + 5000) == 0, "replaced with new size");
    CHECK(st.live_bytes == st0.live_bytes - 8192 + 100, "live bytes follow the replacement");
    /* addresses above the page map's range still work exactly */
    uintptr_t high = (1ul << 47) + 0x1000;
    heap_insert(high, 32, 9, 0, 0);
    CHECK(heap_find(high) != NULL && heap_find_exact(high) != NULL, "high address exact");
    heap_remove(high, NULL, NULL);
    heap_remove(x, NULL, NULL);
    heap_remove(y, NULL, NULL);
    heap_remove(after, NULL, NULL);
    heap_remove(r1, NULL, NULL);
}

static void test_random(void)
{
    enum { N = 60000 };
    struct ref *refs = calloc(N, sizeof *refs);
    uintptr_t cursor = BASE + 0x10000000;
    for (int i = 0; i < N; i++) {
        size_t size = (rng() % 8 == 0) ? 1 + rng() % 20000 : 1 + rng() % 200;
        refs[i] = (struct ref){ cursor, size, 1 };
        cursor += (size + 15 + (rng() % 3) * 16) & ~15ul;   /* gaps between some objects */
        heap_insert(refs[i].addr, size, i & HEAP_SITE_MASK, 0, 0);
    }
    for (int i = 0; i < N; i += 2) {
        heap_remove(refs[i].addr, NULL, NULL);
        refs[i].live = 0;
    }
    unsigned long wrong = 0, visited = 0;
    for (int i = 0; i < N; i++) {
        uintptr_t probe = refs[i].addr + rng() % refs[i].size;
        uintptr_t want = refs[i].live ? refs[i].addr : 0, got = found_start(probe);
        if (got != want && wrong++ < 5)
            CHECK(0, "object %d probe %#lx: want %#lx got %#lx", i, (unsigned long)probe,
                  (unsigned long)want, (unsigned long)got);
    }
    CHECK(wrong == 0, "%lu wrong lookups", wrong);
    heap_foreach(count_cb, &visited);
    CHECK(visited == N / 2, "foreach visits live objects: %lu", visited);
    struct heap_stats st;
    heap_get_stats(&st);
    CHECK(st.live_objects == N / 2, "live objects %lu", (unsigned long)st.live_objects);
    CHECK(st.mapped_bytes > 0 && st.resident_bytes > 0 && st.resident_bytes <= st.mapped_bytes,
          "memory cost: mapped %lu resident %lu", (unsigned long)st.mapped_bytes, (unsigned long)st.resident_bytes);
    for (int i = 1; i < N; i += 2)
        heap_remove(refs[i].addr, NULL, NULL);
    free(refs);
}

/* Threads allocate, look up and free their own objects while others do the same: first in
 * separate regions (they meet only in the hash shards), then interleaved so that neighbouring
 * objects in every page belong to different threads. */
#define THREADS 4
#define PER_THREAD 20000
struct worker_args { uintptr_t base; uintptr_t stride; };

static void *worker(void *arg)
{
    const struct worker_args *w = arg;
    unsigned long *bad = calloc(1, sizeof *bad);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < PER_THREAD; i++)
            heap_insert(w->base + (uintptr_t)i * w->stride, 48, 1, 0, 0);
        for (int i = 0; i < PER_THREAD; i++) {
            uintptr_t start = w->base + (uintptr_t)i * w->stride;
            struct heap_obj *o = heap_find(start + 40);
            if (!o || atomic_load(&o->addr) != start)
                ++*bad;
            else
                heap_touch(o, (uint32_t)round, 0, (uint32_t)i);
            if (heap_find(start + 50))
                ++*bad;
        }
        for (int i = 0; i < PER_THREAD; i++)
            if (heap_remove(w->base + (uintptr_t)i * w->stride, NULL, NULL) != 1)
                ++*bad;
    }
    return bad;
}

static void run_threads(const char *what, int interleaved)
{
    struct heap_stats st0, st;
    heap_get_stats(&st0);
    pthread_t t[THREADS];
    struct worker_args args[THREADS];
    for (long i = 0; i < THREADS; i++) {
        if (interleaved)
            args[i] = (struct worker_args){ BASE + 0x80000000ul + (uintptr_t)i * 64, 64 * THREADS };
        else
            args[i] = (struct worker_args){ BASE + 0x40000000ul + (uintptr_t)i * 0x10000000ul, 64 };
        pthread_create(&t[i], NULL, worker, &args[i]);
    }
    unsigned long total_bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        total_bad += *(unsigned long *)r;
        free(r);
    }
    heap_get_stats(&st);
    CHECK(total_bad == 0, "%s: %lu wrong results under threads", what, total_bad);
    CHECK(st.live_objects == st0.live_objects, "%s: threads leave no objects: %lu vs %lu", what,
          (unsigned long)st.live_objects, (unsigned long)st0.live_objects);
    CHECK(st.inserts - st0.inserts == 3ul * THREADS * PER_THREAD, "%s: inserts counted", what);
}

static void test_threads(void)
{
    run_threads("separate regions", 0);
    run_threads("interleaved neighbours", 1);
}

/* Freed records are reused: once a round of 200,000 objects is freed, a second round of as
 * many maps no memory (records come back from the shards' free stacks, which outgrow the arena
 * here), and every record still answers for its own object. */
static void test_record_reuse(void)
{
    enum { N = 200000 };
    const uintptr_t base = BASE + 0x7000000000ul;   /* clear of the other tests' objects */
    struct heap_stats before, after;
    for (int round = 0; round < 2; round++) {
        for (uintptr_t i = 0; i < N; i++)
            heap_insert(base + i * 64 + round * 16, 40, (uint32_t)(i & HEAP_SITE_MASK), 0, 0);
        unsigned long wrong = 0;
        for (uintptr_t i = 0; i < N; i++) {
            struct heap_obj *o = heap_find_exact(base + i * 64 + round * 16);
            if (!o || (atomic_load(&o->site_flags) & HEAP_SITE_MASK) != (i & HEAP_SITE_MASK) ||
                atomic_load(&o->size) != 40)
                wrong++;
        }
        CHECK(wrong == 0, "round %d: every object has its own record (%lu wrong)", round, wrong);
        if (round == 1)
            heap_get_stats(&after);
        unsigned long missing = 0;
        for (uintptr_t i = 0; i < N; i++)
            missing += heap_remove(base + i * 64 + round * 16, NULL, NULL) != 1;
        CHECK(missing == 0, "round %d: every object removed (%lu missing)", round, missing);
        if (round == 0)
            heap_get_stats(&before);
    }
    CHECK(after.mapped_bytes == before.mapped_bytes,
          "the second round reuses the first round's records: mapped %llu then %llu bytes",
          (unsigned long long)before.mapped_bytes, (unsigned long long)after.mapped_bytes);
    CHECK(heap_find_exact(base) == NULL && heap_find_exact(base + 16) == NULL, "both rounds removed");
}

/* Blocks at one alignment (large aligned buffers, page-aligned chunks, densely packed small
 * objects) spread over the buckets: no long chains, and about as many buckets in use as a
 * random spread would fill (at the model's load of up to two records a bucket, over 40% of the
 * record count). */
static void test_chain_spread(void)
{
    enum { N = 20000 };
    static const struct { uintptr_t stride; size_t size; const char *what; } pattern[] = {
        {65536, 256, "64 KiB-aligned blocks"},
        {4096, 4096, "page-aligned pages"},
        {1 << 20, 1 << 20, "1 MiB-aligned buffers"},
        {16, 16, "packed 16-byte objects"},
        {48, 40, "40-byte objects"},
    };
    const uintptr_t base = BASE + 0x10000000000ul;   /* clear of the other tests' objects */
    for (size_t k = 0; k < sizeof pattern / sizeof *pattern; k++) {
        struct heap_chain_stats before, with;
        heap_get_chain_stats(&before);
        for (uintptr_t i = 0; i < N; i++)
            heap_insert(base + i * pattern[k].stride, pattern[k].size, 1, 0, 0);
        heap_get_chain_stats(&with);
        CHECK(with.records == before.records + N, "%s: all chained (%lu)", pattern[k].what,
              (unsigned long)(with.records - before.records));
        CHECK(with.longest <= 16, "%s: longest chain %lu", pattern[k].what, (unsigned long)with.longest);
        CHECK(with.used_buckets >= before.used_buckets + N * 2 / 5, "%s: %lu more buckets used for %d records",
              pattern[k].what, (unsigned long)(with.used_buckets - before.used_buckets), N);
        unsigned long missing = 0;
        for (uintptr_t i = 0; i < N; i++)
            missing += heap_remove(base + i * pattern[k].stride, NULL, NULL) != 1;
        CHECK(missing == 0, "%s: every block removed (%lu missing)", pattern[k].what, missing);
    }
}

int main(void)
{
    CHECK(heap_init() == 0, "init");
    CHECK(heap_find(BASE) == NULL, "empty model finds nothing");
    test_chain_spread();   /* first: at the shards' initial sizes */
    test_basic();
    test_pages();
    test_random();
    test_threads();
    test_record_reuse();
    return CHECK_DONE("test_heap");
}
