/* Unit tests of the race tool's per-thread filter (tools/race/runtime/filter.h): a window keeps
 * its number while its epoch, locks and reset generation stay, and gets a new one when any of
 * them changes; an entry covers what its step's record covers (its bytes, a read after a write,
 * an atomic access after a plain one) in its own window only, and a read after a write only when
 * the window's locks are the same in both modes. */
#include "../../../tests/unit/check.h"
#include "tools/race/runtime/filter.h"

#include <stdio.h>

static void test_window_numbers(void)
{
    struct race_filter_window w = {0};
    race_filter_window_begin(&w, 5, 0, 0, 0);
    uint32_t first = w.id;
    CHECK(first != 0);
    race_filter_window_begin(&w, 5, 0, 0, 0);
    CHECK(w.id == first);   /* nothing changed: the entries of the last window still hold */
    race_filter_window_begin(&w, 6, 0, 0, 0);
    CHECK(w.id != first);   /* a new epoch (a release) */
    uint32_t second = w.id;
    race_filter_window_begin(&w, 6, 0x1, 0, 0);
    CHECK(w.id != second);  /* a lock held in read mode */
    uint32_t third = w.id;
    race_filter_window_begin(&w, 6, 0x1, 0x1, 0);
    CHECK(w.id != third);   /* and in write mode */
    uint32_t fourth = w.id;
    race_filter_window_begin(&w, 6, 0x1, 0x1, 1);
    CHECK(w.id != fourth);  /* a cell reset somewhere */
    /* the number skips 0 (an empty entry) when it wraps */
    struct race_filter_window last = {.id = UINT32_MAX};
    race_filter_window_begin(&last, 1, 0, 0, 0);
    CHECK(last.id == 1);
}

static void test_cover(void)
{
    struct race_filter_entry empty = {0}, e = {0};
    const uint64_t g = 1000;
    const uint32_t win = 7;
    /* an empty entry covers nothing, not even granule 0 in window 0's place */
    CHECK(!race_filter_covers(&empty, 0, 1, 0x01, 0, 0, 1));
    /* a plain write of bytes 0-3 */
    race_filter_note(&e, g, win, 0x0f, 1, 0, race_filter_same(&e, g, win, 1, 1));
    CHECK(race_filter_covers(&e, g, win, 0x0f, 1, 0, 1));   /* the same again */
    CHECK(race_filter_covers(&e, g, win, 0x03, 0, 0, 1));   /* a read of fewer bytes */
    CHECK(race_filter_covers(&e, g, win, 0x03, 1, 1, 1));   /* an atomic write: races with less */
    CHECK(!race_filter_covers(&e, g, win, 0x1f, 1, 0, 1));  /* a byte more */
    CHECK(!race_filter_covers(&e, g + 1, win, 0x0f, 1, 0, 1));   /* another granule */
    CHECK(!race_filter_covers(&e, g, win + 1, 0x0f, 1, 0, 1));   /* another window */
    /* a read holds the window's locks of any mode, the write held those of write mode: covered
     * only when they are the same set */
    CHECK(!race_filter_covers(&e, g, win, 0x03, 0, 0, 0));
    CHECK(race_filter_covers(&e, g, win, 0x0f, 1, 0, 0));   /* another write: the same locks */

    /* a write of bytes 4-7 in the same window adds its bytes to the entry */
    race_filter_note(&e, g, win, 0xf0, 1, 0, race_filter_same(&e, g, win, 1, 1));
    CHECK(race_filter_covers(&e, g, win, 0xff, 1, 0, 1));
    /* a plain read after an atomic read: the entry of the atomic read does not cover it */
    struct race_filter_entry r = {0};
    race_filter_note(&r, g, win, 0xff, 0, 1, 0);
    CHECK(!race_filter_covers(&r, g, win, 0xff, 0, 0, 1));
    CHECK(race_filter_covers(&r, g, win, 0xff, 0, 1, 1));
    CHECK(!race_filter_covers(&r, g, win, 0xff, 1, 1, 1));   /* a write after a read */
    /* the plain read's step replaces the entry (another kind: the bytes do not add up) */
    race_filter_note(&r, g, win, 0x01, 0, 0, race_filter_same(&r, g, win, 0, 1));
    CHECK(r.mask == 0x01 && !r.atomic);
    CHECK(!race_filter_covers(&r, g, win, 0x02, 0, 1, 1));
    /* a step in a new window replaces the entry whatever it was */
    race_filter_note(&r, g, win + 1, 0x02, 0, 0, race_filter_same(&r, g, win + 1, 0, 1));
    CHECK(r.win == win + 1 && r.mask == 0x02);
    CHECK(!race_filter_covers(&r, g, win, 0x02, 0, 0, 1));
}

int main(void)
{
    test_window_numbers();
    test_cover();
    return CHECK_DONE("race/test_filter");
}
