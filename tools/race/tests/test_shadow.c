/* Unit tests of the race tool's shadow table (tools/race/runtime/shadow.c): a reset puts back to
 * virgin every used cell of its block and no other, whether it visits the lines of the pages
 * with used cells (few of them) or passes over the whole table (many), for blocks aligned or not.
 */
// unit-extra: tools/race/runtime/shadow.c tools/race/runtime/racecore.c
#include "../../../tests/unit/check.h"
#include "tools/race/runtime/raceint.h"

#include <stdio.h>
#include <stdlib.h>

struct race_config race_cfg;
struct race_stats race_stats;
__thread struct race_tally race_tally;

/* Granule g's cell made and marked used (as an access's step leaves it). */
static void touch(uint64_t g)
{
    uint32_t index;
    struct race_cell *c = race_shadow_lock(g, 1, &index);
    CHECK(c != NULL);
    if (!c)
        return;
    if (c->state == RACE_VIRGIN) {
        c->state = RACE_EXCLUSIVE;
        race_shadow_note_used(index, g);
    }
    race_spin_unlock(&c->lock);
}

/* 1 when granule g's cell is used, 0 when virgin or absent. */
static int used(uint64_t g)
{
    uint32_t index;
    struct race_cell *c = race_shadow_lock(g, 0, &index);
    if (!c)
        return 0;
    int u = c->state != RACE_VIRGIN;
    race_spin_unlock(&c->lock);
    return u;
}

/* The address of the first granule of [addr, addr + size) whose cell is used, 0 when none is. */
static uintptr_t first_used(uintptr_t addr, size_t size)
{
    unsigned gs = race_cfg.granule_shift;
    for (uintptr_t p = addr & ~(uintptr_t)4095; p < addr + size; p += 4096)
        for (uintptr_t a = p; a < p + 4096; a += 1u << gs)
            if (a >= addr && a < addr + size && used(a >> gs))
                return a;
    return 0;
}

/* Cells in every stride-th page of [addr, addr + size) (two granules each: the page's first and
 * one in its middle), and next to the block on both sides; reset; check. */
static void one(uintptr_t addr, size_t size, size_t stride)
{
    unsigned gs = race_cfg.granule_shift;
    uint64_t g0 = addr >> gs, g1 = (addr + size - 1) >> gs, inside = 0;
    race_shadow_clear();
    race_stats.resets = 0;
    race_tally.evicted = 0;
    for (uintptr_t p = addr & ~(uintptr_t)4095; p < addr + size; p += 4096 * stride)
        for (uintptr_t a = p; a < p + 4096; a += 2048)
            if (a >= addr && a < addr + size)
                touch(a >> gs);
    touch(g0);
    touch(g1);
    touch(g0 - 1);
    touch(g1 + 1);
    for (uint64_t g = g0; g <= g1; g++)
        inside += used(g);
    CHECK(inside >= 2);
    CHECK(race_tally.evicted == 0);
    race_shadow_reset(addr, size);
    CHECK(race_stats.resets == inside);
    uintptr_t still = first_used(addr, size);
    CHECK(still == 0, "block %#lx+%zu stride %zu: granule at %#lx still used", (unsigned long)addr,
          size, stride, (unsigned long)still);
    if (still)
        return;
    CHECK(used(g0 - 1));   /* a neighbour's cells are kept */
    CHECK(used(g1 + 1));
    /* a second reset finds nothing to do */
    race_shadow_reset(addr, size);
    CHECK(race_stats.resets == inside);
}

int main(void)
{
    race_cfg.history = 3;
    race_cfg.table_bits = 16;
    for (unsigned gs = 3; gs <= 6; gs += 3) {
        race_cfg.granule_shift = gs;
        int init = race_shadow_init();
        CHECK(init == 0, "granule shift %u", gs);
        if (init != 0)
            return CHECK_DONE("race/test_shadow");
        one(0x10000000, 256 * 1024, 1);       /* 64 pages, all with cells: their lines */
        one(0x10000000, 256 * 1024, 16);      /* 4 of 64 pages */
        one(0x20000010, 2 * 1024 * 1024, 1);  /* 513 pages with cells: a pass over the keys */
        one(0x20000010, 2 * 1024 * 1024, 64); /* 9 of them: their lines */
        one(0x30000c08, 100, 1);              /* a small block within one page */
        one(0x30000ff8, 4096 + 16, 1);        /* across three pages, unaligned */
    }
    return CHECK_DONE("race/test_shadow");
}
