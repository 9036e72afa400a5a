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
 * the granule's eight parts), read or write, atomic or plain, and the locks held. */
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
race_lockset race_ls_add(race_lockset s, uint16_t id);      /* a fifth id: RACE_LS_ALL */
race_lockset race_ls_remove(race_lockset s, uint16_t id);   /* RACE_LS_ALL stays so */
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
/* c := c joined with src[i], the epochs of slots first + i for i < n (an acquire). */
void race_clock_join(struct race_clock *c, unsigned first, const uint64_t *src, unsigned n);
/* dst[i] := max(dst[i], c's epoch of slot first + i) for i < n (a release publishes). */
void race_clock_publish(const struct race_clock *c, unsigned first, uint64_t *dst, unsigned n);
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
    uint32_t snap;               /* the thread's clock when recorded (race.c's snapshots); 0: none */
    uint8_t slot, mask, write;
    uint8_t atomic;              /* an atomic instruction's access: races with plain accesses only */
};

struct race_cell {
    uint32_t lock;               /* spin lock (shadow.c, which keeps the cells' keys apart) */
    uint32_t owner;              /* RACE_EXCLUSIVE: the thread */
    uint32_t gen;                /* reset generation (shadow.c, race.c); kept by race_cell_reset */
    uint8_t state;               /* enum race_state */
    uint8_t next;                /* history slot replaced next when none is subsumed */
    uint8_t benign;              /* vigil_race_benign covered it: never reported */
    uint8_t pad;
    race_lockset cand;           /* candidate lockset (RACE_LS_ALL before the first refinement) */
    struct race_rec rec[];       /* history entries follow */
};

struct race_access {
    uint32_t tid;
    uint32_t slot;               /* RACE_NOSLOT when the thread has none */
    uint64_t epoch;
    race_lockset held;           /* as struct race_rec */
    uint32_t site;
    uint32_t snap;               /* as struct race_rec */
    uint8_t mask;                /* bytes of the granule, one bit per eighth */
    uint8_t write;
    uint8_t atomic;              /* as struct race_rec */
};

/* Accesses may be checked in another order than they happened (race.c: they arrive in late
 * batches): an earlier record may be of an access that came after this one. before(r, a, arg):
 * whether access a is known to happen before record r (r's thread had learnt of a's epoch when
 * r was recorded). NULL: only the forward direction is checked. */
typedef int (*race_before_fn)(const struct race_rec *r, const struct race_access *a, void *arg);

/* Back to virgin (memory allocated again). */
void race_cell_reset(struct race_cell *cell, unsigned history);
/* One access to the cell: Eraser's transitions, the candidate lockset refined, the race check,
 * and the access recorded. clock: the accessing thread's clock, NULL for lockset only (the
 * thread has no slot, or race.hb=0). Returns 1 when the access races with a previous one (copied
 * to *conflict): the cell is shared-modified, its candidate lockset is empty, and a previous
 * access by another thread to a common byte, one of the two a write, has no lock in common with
 * this one and is ordered with it in neither direction (the clock; before). Two atomic
 * accesses never race (C11: atomic operations are not data races); an atomic and a plain one
 * do, as two plain ones. */
int race_cell_step(struct race_cell *cell, unsigned history, const struct race_access *a,
                   const struct race_clock *clock, race_before_fn before, void *arg, struct race_rec *conflict);

/* The mask of bytes [offset, offset + size) of a granule of granule_size bytes (8, 16, 32 or
 * 64: one bit per granule_size / 8 bytes). */
static inline uint8_t race_mask(unsigned offset, unsigned size, unsigned granule_size)
{
    if (offset == 0 && size >= granule_size)
        return 0xff;   /* the common case: a whole granule */
    /* bytes per mask bit, a power of two: a shift (a division costs tens of cycles) */
    unsigned unit_shift = granule_size > 8 ? (unsigned)__builtin_ctz(granule_size) - 3 : 0;
    unsigned end = offset + (size ? size : 1);
    if (end > granule_size)
        end = granule_size;
    unsigned first = offset >> unit_shift, last = (end - 1) >> unit_shift;
    if (first > 7)
        return 0;
    if (last > 7)
        last = 7;
    return (uint8_t)((0xffu >> (7 - last)) & (0xffu << first));
}

#endif
