/* The race tool's pure parts: locksets, vector clocks and the per-cell state machine. Nothing
 * here knows the runtime, threads or atomics: the callers (race.c, shadow.c) lock a cell, call
 * race_cell_step and unlock. Unit tests: tools/race/tests/test_racecore.c.
 *
 * Locksets. A lock is a small id (1..0xfffe, interned by race.c from its address). A lockset is
 * a packed uint64_t of up to four ids, ascending, zero-padded: the empty set is 0. A set that
 * would need more than four ids becomes RACE_LS_ALL, "unknown, as large as can be": it
 * intersects as the identity, so an overflow can hide a race but never invent one.
 *
 * Vector clocks. Each live thread owns one of RACE_SLOTS slots; its clock holds one epoch per
 * slot. A thread that takes a slot over continues the slot's epochs (start = the last
 * occupant's final epoch + 1), so an epoch names one point of one occupant. What the thread
 * learns about the slot's earlier occupants (epochs < start) goes to known_prev instead of its
 * own entry. An access recorded as (slot, epoch) happens before the clock's owner when
 * epoch <= vc[slot] (known_prev for its own slot).
 *
 * Cells. One per granule (8 bytes by default) that sampled accesses touched: Eraser's state
 * (virgin, exclusive to one thread, shared-read, shared-modified), the candidate lockset, and
 * the last few accesses (history), each with its thread, slot, epoch, site, bytes (a mask of
 * the granule's eight parts), read or write and the locks held. */
#ifndef RACE_CORE_H
#define RACE_CORE_H
#include <stddef.h>
#include <stdint.h>

/* ---- locksets ---- */
typedef uint64_t race_lockset;
#define RACE_LS_EMPTY 0ull
#define RACE_LS_ALL (~0ull)
#define RACE_LS_MAX 4
#define RACE_LOCK_ID_MAX 0xfffeu   /* ids 1..0xfffe; 0 pads, 0xffff only in RACE_LS_ALL */

/* The set's ids, ascending, into ids[RACE_LS_MAX]; returns how many (0 for RACE_LS_ALL). */
unsigned race_ls_ids(race_lockset s, uint16_t ids[RACE_LS_MAX]);
/* The set of n ids (any order, duplicates allowed; 0 ignored); more than four: RACE_LS_ALL. */
race_lockset race_ls_make(const uint16_t *ids, unsigned n);
int race_ls_has(race_lockset s, uint16_t id);   /* RACE_LS_ALL has every id */
race_lockset race_ls_intersect(race_lockset a, race_lockset b);
race_lockset race_ls_union(race_lockset a, race_lockset b);

/* ---- vector clocks ---- */
#define RACE_SLOTS 64
#define RACE_NOSLOT 0xffu

struct race_clock {
    uint32_t slot;               /* RACE_NOSLOT: the thread has no slot (lockset only) */
    uint64_t start;              /* first epoch of this occupant of the slot */
    uint64_t known_prev;         /* latest epoch of earlier occupants of the slot known here */
    uint64_t vc[RACE_SLOTS];
};

/* A fresh clock for the occupant of slot that starts at epoch start. */
void race_clock_init(struct race_clock *c, uint32_t slot, uint64_t start);
/* c := c joined with the n epochs src[0], src[stride], ... (an acquire). */
void race_clock_join(struct race_clock *c, const uint64_t *src, size_t stride, unsigned n);
/* dst[i * stride] := max(dst[i * stride], c->vc[i]) for i < n (a release publishes). */
void race_clock_publish(const struct race_clock *c, uint64_t *dst, size_t stride, unsigned n);
/* Whether the access of (slot, epoch) by another thread happens before c's owner's present. */
int race_clock_ordered(const struct race_clock *c, uint32_t slot, uint64_t epoch);
/* Component-wise a <= b over n entries (for tests and checks). */
int race_vc_leq(const uint64_t *a, const uint64_t *b, unsigned n);

/* ---- cells ---- */
enum race_state { RACE_VIRGIN, RACE_EXCLUSIVE, RACE_SHARED_READ, RACE_SHARED_MODIFIED };
#define RACE_MAX_HISTORY 8

struct race_rec {
    uint64_t epoch;              /* of the access's thread in its slot (window start: see race.c) */
    race_lockset held;           /* locks held (write mode for a write, any mode for a read) */
    uint32_t site;               /* vigil site id */
    uint32_t tid;                /* thread number, 1 = first; 0: empty record */
    uint8_t slot, mask, write, pad;
};

struct race_cell {
    uint64_t key;                /* granule number + 1; 0: free (shadow.c) */
    uint32_t lock;               /* spin lock (shadow.c) */
    uint32_t owner;              /* RACE_EXCLUSIVE: the thread */
    uint8_t state;               /* enum race_state */
    uint8_t next;                /* history slot replaced next when none is subsumed */
    uint8_t benign;              /* vigil_race_benign covered it: never reported */
    uint8_t pad[5];
    race_lockset cand;           /* candidate lockset (RACE_LS_ALL before the first refinement) */
    struct race_rec rec[];       /* history entries follow */
};

struct race_access {
    uint32_t tid;
    uint32_t slot;               /* RACE_NOSLOT when the thread has none */
    uint64_t epoch;
    race_lockset held;           /* as struct race_rec */
    uint32_t site;
    uint8_t mask;                /* bytes of the granule, one bit per eighth */
    uint8_t write;
};

/* Back to virgin (freed or allocated memory), the key kept. */
void race_cell_reset(struct race_cell *cell, unsigned history);
/* One access to the cell: Eraser's transitions, the candidate lockset refined, the race check,
 * and the access recorded. clock: the accessing thread's clock, NULL for lockset only (the
 * thread has no slot, or race.hb=0). Returns 1 when the access races with a previous one (copied
 * to *conflict): the cell is shared-modified, its candidate lockset is empty, and a previous
 * access by another thread to a common byte, one of the two a write, has no lock in common with
 * this one and is not ordered before it by the clocks. */
int race_cell_step(struct race_cell *cell, unsigned history, const struct race_access *a,
                   const struct race_clock *clock, struct race_rec *conflict);

/* The mask of bytes [offset, offset + size) of a granule of granule_size bytes (8, 16, 32 or
 * 64: one bit per granule_size / 8 bytes). */
uint8_t race_mask(unsigned offset, unsigned size, unsigned granule_size);

#endif
