/* The race tool's per-thread filter (race.c), its pure part: a direct-mapped table per clock
 * slot of the thread's last cell step on each granule it met lately, valid while the step's
 * window holds. An access of the same window that a step covers (its bytes, a read after a
 * write, an atomic access after a plain one) finds no race the recorded access does not, so
 * race.c skips it without reading the shared table. Unit tests: tests/test_filter.c.
 *
 * A window's identity is its own epoch, the locks held in it (in write mode, in any mode) and
 * the reset generation: a number names it, changed only when one of those changes (epochs and
 * generations only grow, and the locks change back only across a release, which is a new
 * epoch), so an entry compares one number instead of four fields and an entry is 16 bytes.
 * The number wraps after 2^32 windows of one thread (0 is skipped: it marks an empty entry). */
#ifndef RACE_FILTER_H
#define RACE_FILTER_H
#include <stdint.h>

#include "racecore.h"

struct race_filter_entry {
    uint64_t g;                  /* the granule */
    uint32_t win;                /* the window's number; 0: empty */
    uint8_t mask, write, atomic, pad;
};

struct race_filter_window {
    uint64_t epoch;
    race_lockset any, write;
    uint32_t gen;
    uint32_t id;                 /* the window's number (0 before the first) */
};

/* A window begins with these fields: the same number as the last window when nothing changed. */
static inline void race_filter_window_begin(struct race_filter_window *w, uint64_t epoch, race_lockset any,
                                            race_lockset write, uint32_t gen)
{
    if (w->id && epoch == w->epoch && any == w->any && write == w->write && gen == w->gen)
        return;
    w->epoch = epoch, w->any = any, w->write = write, w->gen = gen;
    w->id = w->id + 1 ? w->id + 1 : 1;
}

/* e was made in window win by an access of g whose locks held were those of this one (the same
 * kind, or the window's two sets are equal: held_same). */
static inline int race_filter_same(const struct race_filter_entry *e, uint64_t g, uint32_t win, uint8_t write,
                                   int held_same)
{
    return e->g == g && e->win == win && (e->write == write || held_same);
}

/* The access (mask of g's bytes, write, atomic) in window win would find nothing new. */
static inline int race_filter_covers(const struct race_filter_entry *e, uint64_t g, uint32_t win, uint8_t mask,
                                     uint8_t write, uint8_t atomic, int held_same)
{
    return race_filter_same(e, g, win, write, held_same) && (mask & ~e->mask) == 0 && write <= e->write &&
           atomic >= e->atomic;
}

/* After the access's cell step: its record is in the cell. same: race_filter_same before the
 * step (the records of both steps are in the cell: their bytes add up). */
static inline void race_filter_note(struct race_filter_entry *e, uint64_t g, uint32_t win, uint8_t mask,
                                    uint8_t write, uint8_t atomic, int same)
{
    if (same && e->write == write && e->atomic == atomic)
        e->mask |= mask;
    else
        *e = (struct race_filter_entry){.g = g, .win = win, .mask = mask, .write = write, .atomic = atomic};
}

#endif
