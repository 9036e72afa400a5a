// unit-extra: tools/hotspot/runtime/stacktable.c
/* The hot-spot profiler's stack table (tools/hotspot/runtime/stacktable.c): distinct stacks
 * and their counts, stacks cut at the depth, a full table counting what it drops, stacks that
 * share a hash, reset, and four threads adding the same and different stacks at once (every
 * sample counted or dropped, none lost). */
#include "../../../tests/unit/check.h"
#include "../runtime/stacktable.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static struct hs_table *make(uint32_t max_stacks, uint32_t depth)
{
    struct hs_table *t = calloc(1, sizeof *t);
    void *mem = calloc(1, hs_table_bytes(max_stacks, depth));
    hs_table_init(t, mem, max_stacks, depth);
    return t;
}

static void unmake(struct hs_table *t)
{
    free(t->slots);   /* the start of the memory given to hs_table_init */
    free(t);
}

static uint64_t count_of(const struct hs_table *t, uint32_t id)
{
    const uintptr_t *pcs;
    uint64_t c = 0;
    return hs_table_get(t, id, &pcs, &c) ? c : 0;
}

#define THREADS 4
#define PER_THREAD 200000
static struct hs_table *shared;
static uint64_t added[THREADS], kept[THREADS];

static void *adder(void *arg)
{
    long me = (long)arg;
    uintptr_t pcs[8];
    unsigned seed = (unsigned)me * 7919u + 1;
    for (long i = 0; i < PER_THREAD; i++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t which = (seed >> 8) % 300;   /* 300 distinct stacks, shared by all threads */
        for (int k = 0; k < 8; k++)
            pcs[k] = 0x400000 + which * 16 + (uintptr_t)k;
        added[me]++;
        if (hs_table_add(shared, pcs, 1 + which % 8, 1) != HS_NO_STACK)
            kept[me]++;
    }
    return NULL;
}

int main(void)
{
    struct hs_table *t = make(64, 4);
    uintptr_t a[] = {0x1000, 0x2000, 0x3000}, b[] = {0x1000, 0x2000, 0x3001}, c[] = {0x1000, 0x2000};
    uint32_t ia = hs_table_add(t, a, 3, 1), ib = hs_table_add(t, b, 3, 1), ic = hs_table_add(t, c, 2, 1);
    CHECK(ia != HS_NO_STACK && ib != HS_NO_STACK && ic != HS_NO_STACK, "three stacks kept");
    CHECK(ia != ib && ib != ic && ia != ic, "three ids: %u %u %u", ia, ib, ic);
    CHECK(hs_table_add(t, a, 3, 1) == ia && hs_table_add(t, a, 3, 1) == ia, "the same stack, the same id");
    CHECK(count_of(t, ia) == 3 && count_of(t, ib) == 1 && count_of(t, ic) == 1, "counts %llu %llu %llu",
          (unsigned long long)count_of(t, ia), (unsigned long long)count_of(t, ib), (unsigned long long)count_of(t, ic));
    CHECK(hs_table_add(t, c, 2, 10) == ic && count_of(t, ic) == 11, "a sample of weight 10 counts 10: %llu",
          (unsigned long long)count_of(t, ic));
    const uintptr_t *pcs;
    uint64_t n;
    CHECK(hs_table_get(t, ib, &pcs, &n) == 3 && pcs[2] == 0x3001, "frames kept");
    CHECK(hs_table_size(t) == 3, "size %u", hs_table_size(t));
    uintptr_t deep[] = {1, 2, 3, 4, 5, 6};
    uint32_t id = hs_table_add(t, deep, 6, 1);
    CHECK(hs_table_get(t, id, &pcs, &n) == 4 && pcs[3] == 4, "cut at the depth");
    CHECK(hs_table_add(t, deep, 4, 1) == id, "the cut stack is the same as its first frames");
    CHECK(hs_table_add(t, deep, 0, 1) == HS_NO_STACK, "an empty stack is not kept");
    CHECK(hs_table_get(t, 1000, &pcs, &n) == 0, "no such id");

    /* A full table drops new stacks, keeps counting old ones. */
    struct hs_table *small = make(16, 2);
    uint32_t ids[16];
    for (uintptr_t i = 0; i < 16; i++) {
        uintptr_t s[] = {0x100 + i, 0x200};
        ids[i] = hs_table_add(small, s, 2, 1);
    }
    uintptr_t extra[] = {0x999, 0x200}, first[] = {0x100, 0x200};
    CHECK(ids[15] != HS_NO_STACK && hs_table_size(small) == 16, "16 stacks fit");
    CHECK(hs_table_add(small, extra, 2, 1) == HS_NO_STACK && small->dropped_full == 1, "the 17th is dropped");
    CHECK(hs_table_add(small, first, 2, 1) == ids[0] && count_of(small, ids[0]) == 2, "an old one still counts");
    hs_table_reset(small);
    CHECK(hs_table_size(small) == 0 && small->dropped_full == 0, "reset empties it");
    CHECK(hs_table_add(small, extra, 2, 1) == 0 && count_of(small, 0) == 1, "and it fills again from id 0");

    /* Many stacks: all distinct ids, all found again (probing past hash neighbours). */
    struct hs_table *big = make(4096, 3);
    int all_found = 1;
    for (uintptr_t i = 0; i < 4096; i++) {
        uintptr_t s[] = {i * 4096, i, 7};
        if (hs_table_add(big, s, 3, 1) != i)
            all_found = 0;
    }
    for (uintptr_t i = 0; i < 4096; i++) {
        uintptr_t s[] = {i * 4096, i, 7};
        if (hs_table_add(big, s, 3, 1) != i || count_of(big, (uint32_t)i) != 2)
            all_found = 0;
    }
    CHECK(all_found, "4096 stacks: ids in order of first sight, each found again");

    /* Threads at once: every sample is counted or dropped. */
    shared = make(1024, 8);
    pthread_t th[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, adder, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    uint64_t total_added = 0, total_kept = 0, counted = 0;
    for (int i = 0; i < THREADS; i++)
        total_added += added[i], total_kept += kept[i];
    for (uint32_t i = 0; i < hs_table_size(shared); i++)
        counted += count_of(shared, i);
    CHECK(hs_table_size(shared) == 300, "300 distinct stacks from 4 threads: %u", hs_table_size(shared));
    CHECK(counted == total_kept, "counts %llu = samples kept %llu", (unsigned long long)counted,
          (unsigned long long)total_kept);
    CHECK(total_kept + shared->dropped_busy + shared->dropped_full == total_added,
          "kept %llu + busy %llu + full %llu = added %llu", (unsigned long long)total_kept,
          (unsigned long long)shared->dropped_busy, (unsigned long long)shared->dropped_full,
          (unsigned long long)total_added);
    CHECK(shared->dropped_busy < 100, "few dropped as busy: %llu", (unsigned long long)shared->dropped_busy);
    unmake(t);
    unmake(small);
    unmake(big);
    unmake(shared);
    return CHECK_DONE("test_stacktable");
}
