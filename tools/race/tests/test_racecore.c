/* Unit tests of the race tool's pure parts (tools/race/runtime/racecore.c): lockset operations,
 * vector clocks (join, publish, ordering, slot reuse) and the cell state machine.
 */
// unit-extra: tools/race/runtime/racecore.c
#include "../../../tests/unit/check.h"
#include "tools/race/runtime/racecore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static race_lockset ls(unsigned n, ...);
#include <stdarg.h>
static race_lockset ls(unsigned n, ...)
{
    uint16_t ids[16];
    va_list ap;
    va_start(ap, n);
    for (unsigned i = 0; i < n; i++)
        ids[i] = (uint16_t)va_arg(ap, int);
    va_end(ap);
    return race_ls_make(ids, n);
}

static void test_locksets(void)
{
    uint16_t ids[RACE_LS_MAX];
    CHECK(ls(0) == RACE_LS_EMPTY);
    CHECK(ls(2, 7, 3) == ls(2, 3, 7));                    /* order does not matter */
    CHECK(ls(3, 3, 3, 7) == ls(2, 3, 7));                 /* nor duplicates */
    CHECK(race_ls_ids(ls(3, 9, 1, 5), ids) == 3 && ids[0] == 1 && ids[1] == 5 && ids[2] == 9);
    CHECK(ls(4, 1, 2, 3, 4) != RACE_LS_ALL);
    CHECK(ls(5, 1, 2, 3, 4, 5) == RACE_LS_ALL);           /* overflow: unknown, as large as can be */
    CHECK(race_ls_ids(RACE_LS_ALL, ids) == 0);
    CHECK(race_ls_has(ls(2, 3, 7), 7) && !race_ls_has(ls(2, 3, 7), 4));
    CHECK(race_ls_has(RACE_LS_ALL, 1234));
    CHECK(!race_ls_has(RACE_LS_EMPTY, 1));
    /* adding and removing one id (held sets change this way at each lock event) */
    CHECK(race_ls_add(RACE_LS_EMPTY, 9) == ls(1, 9));
    CHECK(race_ls_add(ls(2, 3, 9), 5) == ls(3, 3, 5, 9));
    CHECK(race_ls_add(ls(2, 3, 9), 1) == ls(3, 1, 3, 9));
    CHECK(race_ls_add(ls(2, 3, 9), 12) == ls(3, 3, 9, 12));
    CHECK(race_ls_add(ls(2, 3, 9), 9) == ls(2, 3, 9));
    CHECK(race_ls_add(ls(4, 1, 2, 3, 4), 5) == RACE_LS_ALL);
    CHECK(race_ls_add(ls(4, 1, 2, 3, 4), 3) == ls(4, 1, 2, 3, 4));
    CHECK(race_ls_add(RACE_LS_ALL, 3) == RACE_LS_ALL);
    CHECK(race_ls_add(ls(1, 3), 0) == ls(1, 3));
    CHECK(race_ls_add(ls(1, 3), 0xffff) == RACE_LS_ALL);   /* not an id */
    CHECK(race_ls_remove(ls(3, 3, 5, 9), 5) == ls(2, 3, 9));
    CHECK(race_ls_remove(ls(3, 3, 5, 9), 3) == ls(2, 5, 9));
    CHECK(race_ls_remove(ls(3, 3, 5, 9), 7) == ls(3, 3, 5, 9));
    CHECK(race_ls_remove(ls(1, 3), 3) == RACE_LS_EMPTY);
    CHECK(race_ls_remove(RACE_LS_ALL, 3) == RACE_LS_ALL);   /* unknown stays unknown */
    /* intersection */
    CHECK(race_ls_intersect(ls(3, 1, 2, 3), ls(2, 2, 3)) == ls(2, 2, 3));
    CHECK(race_ls_intersect(ls(2, 1, 2), ls(2, 3, 4)) == RACE_LS_EMPTY);
    CHECK(race_ls_intersect(ls(1, 9), RACE_LS_EMPTY) == RACE_LS_EMPTY);
    CHECK(race_ls_intersect(RACE_LS_ALL, ls(2, 5, 6)) == ls(2, 5, 6));   /* ALL: the identity */
    CHECK(race_ls_intersect(ls(2, 5, 6), RACE_LS_ALL) == ls(2, 5, 6));
    CHECK(race_ls_intersect(RACE_LS_ALL, RACE_LS_ALL) == RACE_LS_ALL);
    CHECK(race_ls_intersect(ls(1, 0xfffe), ls(2, 1, 0xfffe)) == ls(1, 0xfffe));
    /* union */
    CHECK(race_ls_union(ls(1, 4), ls(1, 2)) == ls(2, 2, 4));
    CHECK(race_ls_union(ls(2, 1, 2), ls(2, 2, 3)) == ls(3, 1, 2, 3));
    CHECK(race_ls_union(ls(3, 1, 2, 3), ls(2, 4, 5)) == RACE_LS_ALL);   /* five: overflow */
    CHECK(race_ls_union(RACE_LS_EMPTY, ls(1, 8)) == ls(1, 8));
    CHECK(race_ls_union(ls(1, 8), RACE_LS_ALL) == RACE_LS_ALL);
}

static void test_clocks(void)
{
    struct race_clock a, b;
    race_clock_init(&a, 0, 1);
    race_clock_init(&b, 1, 1);
    CHECK(a.vc[0] == 1 && a.vc[1] == 0 && a.known_prev == 0);
    /* an access of a at epoch 1 is not ordered before b ... */
    CHECK(!race_clock_ordered(&b, 0, 1));
    /* ... until a releases a lock (publish, then its epoch moves on) that b acquires */
    uint64_t lock[RACE_SLOTS] = {0};
    race_clock_publish(&a, 0, lock, RACE_SLOTS);
    a.vc[0]++;
    race_clock_join(&b, 0, lock, RACE_SLOTS);
    CHECK(race_clock_ordered(&b, 0, 1));
    CHECK(!race_clock_ordered(&b, 0, 2));                 /* what a did after the release */
    CHECK(b.vc[0] == 1 && b.vc[1] == 1);
    /* joining is a component-wise maximum, never going back */
    uint64_t older[RACE_SLOTS] = {0};
    race_clock_join(&b, 0, older, RACE_SLOTS);
    CHECK(b.vc[0] == 1);
    CHECK(race_vc_leq(lock, b.vc, RACE_SLOTS));
    CHECK(!race_vc_leq(a.vc, b.vc, RACE_SLOTS));
    /* a block of slots (locks' clocks are stored in blocks of eight slots) */
    uint64_t block[8] = {0};
    block[0] = 7;   /* slot 8 */
    block[5] = 9;   /* slot 13 */
    race_clock_join(&b, 8, block, 8);
    CHECK(b.vc[8] == 7 && b.vc[13] == 9 && b.vc[0] == 1);
    a.vc[9] = 4;
    race_clock_publish(&a, 8, block, 8);
    CHECK(block[1] == 4 && block[0] == 7);
    race_clock_join(&b, 60, block, 8);             /* clipped at the last slot */
    CHECK(b.vc[63] == 0 && b.vc[61] == 4);
    /* no slot: nothing is ordered */
    struct race_clock none;
    race_clock_init(&none, RACE_NOSLOT, 0);
    CHECK(!race_clock_ordered(&none, 0, 0));
    CHECK(!race_clock_ordered(&b, RACE_NOSLOT, 0));
    CHECK(!race_clock_ordered(NULL, 0, 0));
    /* slot reuse: a second occupant of slot 0 starts after the first's last epoch (10); what
     * the first did is ordered before it only when it learned so through a join */
    struct race_clock c;
    race_clock_init(&c, 0, 11);
    CHECK(!race_clock_ordered(&c, 0, 10));
    uint64_t joined[RACE_SLOTS] = {0};
    joined[0] = 10;   /* e.g. the exit clock of the first occupant, through its joiner */
    race_clock_join(&c, 0, joined, RACE_SLOTS);
    CHECK(c.known_prev == 10 && c.vc[0] == 11);
    CHECK(race_clock_ordered(&c, 0, 10));
    joined[0] = 15;   /* our own later epochs coming back: not about earlier occupants */
    race_clock_join(&c, 0, joined, RACE_SLOTS);
    CHECK(c.known_prev == 10 && c.vc[0] == 11);
}

#define H 3
/* A cell and its history, as shadow.c lays them out. */
struct cellbuf {
    _Alignas(8) unsigned char bytes[sizeof(struct race_cell) + H * sizeof(struct race_rec)];
    struct race_cell *c;
};

static void fresh(struct cellbuf *b)
{
    memset(b->bytes, 0, sizeof b->bytes);
    b->c = (struct race_cell *)b->bytes;
    race_cell_reset(b->c, H);
}

static struct race_access acc(uint32_t tid, int write, race_lockset held, uint32_t site)
{
    return (struct race_access){.tid = tid, .slot = tid - 1, .epoch = 1, .held = held, .site = site,
                                .mask = 0xff, .write = (uint8_t)write};
}

/* race_before_fn of the late-delivery checks: snapshot 7 knew slot 1 up to epoch 1 */
static int knows_slot1_epoch1(const struct race_rec *r, const struct race_access *a, void *arg)
{
    (void)arg;
    return r->snap == 7 && a->slot == 1 && a->epoch <= 1;
}

static void test_cells(void)
{
    struct cellbuf b;
    struct race_rec prev;
    struct race_clock t1, t2, t3;
    race_clock_init(&t1, 0, 1);
    race_clock_init(&t2, 1, 1);
    race_clock_init(&t3, 2, 1);

    /* virgin -> exclusive; the owner's accesses never race */
    fresh(&b);
    CHECK(b.c->state == RACE_VIRGIN);
    struct race_access a = acc(1, 1, RACE_LS_EMPTY, 10);
    CHECK(!race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev));
    CHECK(b.c->state == RACE_EXCLUSIVE && b.c->owner == 1);
    a.site = 11;
    CHECK(!race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev));
    CHECK(b.c->state == RACE_EXCLUSIVE);

    /* unordered write by another thread, no locks: shared-modified, race with the last write */
    a = acc(2, 1, RACE_LS_EMPTY, 20);
    CHECK(race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev));
    CHECK(b.c->state == RACE_SHARED_MODIFIED && b.c->cand == RACE_LS_EMPTY);
    CHECK(prev.tid == 1 && prev.write && prev.site == 11);

    /* the same under one lock: no race, the candidate set keeps the lock */
    fresh(&b);
    a = acc(1, 1, ls(1, 5), 10);
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(2, 1, ls(2, 5, 6), 20);
    CHECK(!race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev));
    CHECK(b.c->state == RACE_SHARED_MODIFIED && b.c->cand == ls(1, 5));
    a = acc(1, 0, ls(1, 5), 12);
    CHECK(!race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev));

    /* two different locks: the lockset of unordered accesses is empty at once */
    fresh(&b);
    a = acc(1, 1, ls(1, 5), 10);
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(2, 1, ls(1, 6), 20);
    CHECK(race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev));
    CHECK(prev.site == 10);

    /* initialization then read-only sharing: a write ordered before the readers (the owner
     * published its clock, the readers joined it) hands the cell over, reads share it */
    fresh(&b);
    a = acc(1, 1, RACE_LS_EMPTY, 10);
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    struct race_clock r2 = t2, r3 = t3;
    r2.vc[0] = 1;
    r3.vc[0] = 1;
    a = acc(2, 0, RACE_LS_EMPTY, 20);
    CHECK(!race_cell_step(b.c, H, &a, &r2, NULL, NULL, &prev));
    CHECK(b.c->state == RACE_EXCLUSIVE && b.c->owner == 2);   /* handed over */
    a = acc(3, 0, RACE_LS_EMPTY, 30);
    CHECK(!race_cell_step(b.c, H, &a, &r3, NULL, NULL, &prev));
    CHECK(b.c->state == RACE_SHARED_READ);
    a = acc(2, 0, RACE_LS_EMPTY, 21);
    CHECK(!race_cell_step(b.c, H, &a, &r2, NULL, NULL, &prev));
    /* a later unordered write by thread 1 races with the readers */
    a = acc(1, 1, RACE_LS_EMPTY, 12);
    a.epoch = 2;
    CHECK(race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev));
    CHECK(!prev.write && (prev.tid == 2 || prev.tid == 3));

    /* a write, then an unordered read by another thread: Eraser would wait in shared-read;
     * the hybrid reports it at once */
    fresh(&b);
    a = acc(1, 1, RACE_LS_EMPTY, 10);
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(2, 0, RACE_LS_EMPTY, 20);
    CHECK(race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev));
    CHECK(b.c->state == RACE_SHARED_MODIFIED && prev.site == 10);

    /* read-only sharing from the start: never a race */
    fresh(&b);
    for (uint32_t t = 1; t <= 3; t++) {
        a = acc(t, 0, RACE_LS_EMPTY, 10 * t);
        CHECK(!race_cell_step(b.c, H, &a, t == 1 ? &t1 : t == 2 ? &t2 : &t3, NULL, NULL, &prev));
    }
    CHECK(b.c->state == RACE_SHARED_READ);

    /* different bytes of one granule (per-thread slots of an array): no race */
    fresh(&b);
    a = acc(1, 1, RACE_LS_EMPTY, 10);
    a.mask = 0x0f;
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(2, 1, RACE_LS_EMPTY, 20);
    a.mask = 0xf0;
    CHECK(!race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev));
    CHECK(b.c->state == RACE_SHARED_MODIFIED && b.c->cand == RACE_LS_EMPTY);
    a = acc(1, 1, RACE_LS_EMPTY, 11);
    a.mask = 0x0f;
    CHECK(!race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev));
    a = acc(2, 0, RACE_LS_EMPTY, 21);
    a.mask = 0x18;   /* straddles both halves: races with thread 1's bytes */
    CHECK(race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev));
    CHECK(prev.tid == 1);

    /* rwlock: writers hold lock 7 for writing, readers for reading only */
    fresh(&b);
    a = acc(1, 1, ls(1, 7), 10);               /* write under the write lock */
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(2, 0, ls(1, 7), 20);               /* read under the read lock (held_any has it) */
    CHECK(!race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev));
    CHECK(b.c->cand == ls(1, 7));
    a = acc(3, 1, RACE_LS_EMPTY, 30);          /* a write under the read lock: held_write is empty */
    CHECK(race_cell_step(b.c, H, &a, &t3, NULL, NULL, &prev));

    /* happens-before: empty lockset but ordered accesses (create/join, hand-offs): no race */
    fresh(&b);
    a = acc(1, 1, RACE_LS_EMPTY, 10);
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(2, 1, RACE_LS_EMPTY, 20);
    race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev);   /* races (reported above) */
    struct race_clock joined = t1;
    joined.vc[1] = 1;                               /* thread 1 joined thread 2 */
    a = acc(1, 0, RACE_LS_EMPTY, 12);
    a.epoch = 2;
    CHECK(!race_cell_step(b.c, H, &a, &joined, NULL, NULL, &prev));
    CHECK(b.c->state == RACE_SHARED_MODIFIED && b.c->cand == RACE_LS_EMPTY);

    /* checked late: thread 2's write is delivered after thread 1's read was recorded, but
     * thread 1 had learnt of it (its snapshot 7 knows thread 2's epoch 1): ordered the other
     * way round, no race. Without the callback it would be one. */
    fresh(&b);
    a = acc(1, 0, RACE_LS_EMPTY, 10);
    a.snap = 7;
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(2, 1, RACE_LS_EMPTY, 20);
    CHECK(!race_cell_step(b.c, H, &a, &t2, knows_slot1_epoch1, NULL, &prev));
    fresh(&b);
    a = acc(1, 0, RACE_LS_EMPTY, 10);
    a.snap = 7;
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(2, 1, RACE_LS_EMPTY, 20);
    CHECK(race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev));
    fresh(&b);   /* a later epoch of thread 2 was not known */
    a = acc(1, 0, RACE_LS_EMPTY, 10);
    a.snap = 7;
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(2, 1, RACE_LS_EMPTY, 20);
    a.epoch = 2;
    CHECK(race_cell_step(b.c, H, &a, &t2, knows_slot1_epoch1, NULL, &prev));

    /* lockset only (no clock): Eraser, the owner's accesses count as initialization */
    fresh(&b);
    a = acc(1, 1, RACE_LS_EMPTY, 10);
    race_cell_step(b.c, H, &a, NULL, NULL, NULL, &prev);
    a = acc(2, 1, ls(1, 4), 20);
    CHECK(!race_cell_step(b.c, H, &a, NULL, NULL, NULL, &prev));
    CHECK(b.c->state == RACE_SHARED_MODIFIED && b.c->cand == ls(1, 4));
    a = acc(3, 1, RACE_LS_EMPTY, 30);
    CHECK(race_cell_step(b.c, H, &a, NULL, NULL, NULL, &prev));
    CHECK(prev.tid == 1 || prev.tid == 2);

    /* benign cells are never reported */
    fresh(&b);
    b.c->benign = 1;
    a = acc(1, 1, RACE_LS_EMPTY, 10);
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(2, 1, RACE_LS_EMPTY, 20);
    CHECK(!race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev));

    /* history: a thread's newer access replaces its older one; others stay */
    fresh(&b);
    for (int i = 0; i < 5; i++) {
        a = acc(1, 0, RACE_LS_EMPTY, 100 + (uint32_t)i);
        race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    }
    int ones = 0;
    for (int i = 0; i < H; i++)
        ones += b.c->rec[i].tid == 1;
    CHECK(ones == 1);
    a = acc(2, 0, RACE_LS_EMPTY, 200);
    race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev);
    a = acc(3, 0, RACE_LS_EMPTY, 300);
    race_cell_step(b.c, H, &a, &t3, NULL, NULL, &prev);
    ones = 0;
    for (int i = 0; i < H; i++)
        ones += b.c->rec[i].tid != 0;
    CHECK(ones == 3);

    /* reset: virgin again */
    race_cell_reset(b.c, H);
    CHECK(b.c->state == RACE_VIRGIN && b.c->rec[0].tid == 0 && b.c->rec[2].tid == 0);
}

/* Atomic accesses: never a race with each other, one with a plain access; an atomic record
 * does not replace the same thread's plain one. */
static void test_atomics(void)
{
    struct cellbuf b;
    struct race_rec prev;
    struct race_clock t1, t2;
    race_clock_init(&t1, 0, 1);
    race_clock_init(&t2, 1, 1);

    /* two threads' atomic writes, unordered, no lock: shared-modified, no race */
    fresh(&b);
    struct race_access a = acc(1, 1, RACE_LS_EMPTY, 10);
    a.atomic = 1;
    CHECK(!race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev));
    a = acc(2, 1, RACE_LS_EMPTY, 20);
    a.atomic = 1;
    CHECK(!race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev));
    CHECK(b.c->state == RACE_SHARED_MODIFIED && b.c->cand == RACE_LS_EMPTY);
    a = acc(1, 0, RACE_LS_EMPTY, 11);   /* an atomic read of thread 1 */
    a.atomic = 1;
    CHECK(!race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev));
    /* a plain read by thread 2 races with thread 1's atomic write */
    a = acc(2, 0, RACE_LS_EMPTY, 21);
    CHECK(race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev));
    CHECK(prev.tid == 1 && prev.write && prev.atomic && prev.site == 10);

    /* a plain write, then an atomic read by another thread: a race (the plain write's) */
    fresh(&b);
    a = acc(1, 1, RACE_LS_EMPTY, 10);
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(2, 0, RACE_LS_EMPTY, 20);
    a.atomic = 1;
    CHECK(race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev));
    CHECK(prev.site == 10 && !prev.atomic);

    /* thread 1 writes plainly, then atomically: the plain record stays, and thread 2's atomic
     * read still finds the plain write */
    fresh(&b);
    a = acc(1, 1, RACE_LS_EMPTY, 10);
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(1, 1, RACE_LS_EMPTY, 11);
    a.atomic = 1;
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(2, 0, RACE_LS_EMPTY, 20);
    a.atomic = 1;
    CHECK(race_cell_step(b.c, H, &a, &t2, NULL, NULL, &prev));
    CHECK(prev.site == 10 && !prev.atomic);
    /* the other way round, a plain access replaces the atomic one it covers */
    fresh(&b);
    a = acc(1, 1, RACE_LS_EMPTY, 11);
    a.atomic = 1;
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    a = acc(1, 1, RACE_LS_EMPTY, 10);
    race_cell_step(b.c, H, &a, &t1, NULL, NULL, &prev);
    unsigned kept = 0;
    for (unsigned i = 0; i < H; i++)
        kept += b.c->rec[i].tid != 0;
    CHECK(kept == 1 && b.c->rec[0].site == 10 && !b.c->rec[0].atomic);
}

static void test_masks(void)
{
    CHECK(race_mask(0, 8, 8) == 0xff);
    CHECK(race_mask(0, 4, 8) == 0x0f);
    CHECK(race_mask(4, 4, 8) == 0xf0);
    CHECK(race_mask(3, 1, 8) == 0x08);
    CHECK(race_mask(6, 16, 8) == 0xc0);        /* clipped at the granule's end */
    CHECK(race_mask(0, 0, 8) == 0x01);
    CHECK(race_mask(0, 8, 64) == 0x01);        /* one bit per eight bytes */
    CHECK(race_mask(8, 9, 64) == 0x06);
    CHECK(race_mask(2, 2, 16) == 0x02);
}

int main(void)
{
    test_locksets();
    test_clocks();
    test_cells();
    test_atomics();
    test_masks();
    return CHECK_DONE("race/test_racecore");
}
