/* The race tool's pure parts (racecore.h): no runtime, no threads, no atomics. */
#include "racecore.h"

#include <string.h>

/* ---- locksets ---- */

unsigned race_ls_ids(race_lockset s, uint16_t ids[RACE_LS_MAX])
{
    unsigned n = 0;
    if (s == RACE_LS_ALL)
        return 0;
    for (unsigned i = 0; i < RACE_LS_MAX; i++) {
        uint16_t id = (uint16_t)(s >> (16 * i));
        if (id)
            ids[n++] = id;
    }
    return n;
}

static race_lockset pack(const uint16_t *ids, unsigned n)
{
    race_lockset s = 0;
    for (unsigned i = 0; i < n; i++)
        s |= (race_lockset)ids[i] << (16 * i);
    return s;
}

race_lockset race_ls_add(race_lockset s, uint16_t id)
{
    if (id == 0 || s == RACE_LS_ALL)
        return s;
    if (id > RACE_LOCK_ID_MAX || (uint16_t)(s >> (16 * (RACE_LS_MAX - 1))))
        return race_ls_has(s, id) ? s : RACE_LS_ALL;   /* full: a fifth id does not fit */
    race_lockset out = 0;
    unsigned n = 0, placed = 0;
    for (unsigned i = 0; i < RACE_LS_MAX; i++) {
        uint16_t cur = (uint16_t)(s >> (16 * i));
        if (!cur)
            break;
        if (cur == id)
            return s;
        if (!placed && id < cur) {
            out |= (race_lockset)id << (16 * n++);
            placed = 1;
        }
        out |= (race_lockset)cur << (16 * n++);
    }
    if (!placed)
        out |= (race_lockset)id << (16 * n);
    return out;
}

race_lockset race_ls_remove(race_lockset s, uint16_t id)
{
    if (s == RACE_LS_ALL || id == 0)
        return s;
    race_lockset out = 0;
    unsigned n = 0;
    for (unsigned i = 0; i < RACE_LS_MAX; i++) {
        uint16_t cur = (uint16_t)(s >> (16 * i));
        if (cur && cur != id)
            out |= (race_lockset)cur << (16 * n++);
    }
    return out;
}

race_lockset race_ls_make(const uint16_t *ids, unsigned n)
{
    race_lockset s = RACE_LS_EMPTY;
    for (unsigned i = 0; i < n && s != RACE_LS_ALL; i++)
        s = race_ls_add(s, ids[i]);
    return s;
}

int race_ls_has(race_lockset s, uint16_t id)
{
    if (s == RACE_LS_ALL)
        return 1;
    for (unsigned i = 0; i < RACE_LS_MAX; i++)
        if (id && (uint16_t)(s >> (16 * i)) == id)
            return 1;
    return 0;
}

race_lockset race_ls_intersect(race_lockset a, race_lockset b)
{
    if (a == RACE_LS_ALL)
        return b;
    if (b == RACE_LS_ALL || a == b)
        return a;
    uint16_t ids[RACE_LS_MAX], out[RACE_LS_MAX];
    unsigned n = race_ls_ids(a, ids), m = 0;
    for (unsigned i = 0; i < n; i++)
        if (race_ls_has(b, ids[i]))
            out[m++] = ids[i];
    return pack(out, m);   /* a subset of a sorted set stays sorted */
}

race_lockset race_ls_union(race_lockset a, race_lockset b)
{
    if (a == RACE_LS_ALL || b == RACE_LS_ALL)
        return RACE_LS_ALL;
    for (unsigned i = 0; i < RACE_LS_MAX && a != RACE_LS_ALL; i++) {
        uint16_t id = (uint16_t)(b >> (16 * i));
        if (id)
            a = race_ls_add(a, id);
    }
    return a;
}

/* ---- vector clocks ---- */

void race_clock_init(struct race_clock *c, uint32_t slot, uint64_t start)
{
    memset(c, 0, sizeof *c);
    c->slot = slot;
    c->start = start;
    if (slot < RACE_SLOTS)
        c->vc[slot] = start;
}

void race_clock_join(struct race_clock *c, unsigned first, const uint64_t *src, unsigned n)
{
    if (first >= RACE_SLOTS)
        return;
    if (n > RACE_SLOTS - first)
        n = RACE_SLOTS - first;
    for (unsigned k = 0; k < n; k++) {
        unsigned i = first + k;
        uint64_t v = src[k];
        if (i == c->slot) {
            /* about an earlier occupant of this slot (our own epochs we know already) */
            if (v < c->start && v > c->known_prev)
                c->known_prev = v;
        } else if (v > c->vc[i]) {
            c->vc[i] = v;
        }
    }
}

void race_clock_publish(const struct race_clock *c, unsigned first, uint64_t *dst, unsigned n)
{
    if (first >= RACE_SLOTS)
        return;
    if (n > RACE_SLOTS - first)
        n = RACE_SLOTS - first;
    for (unsigned k = 0; k < n; k++)
        if (c->vc[first + k] > dst[k])
            dst[k] = c->vc[first + k];
}

int race_clock_ordered(const struct race_clock *c, uint32_t slot, uint64_t epoch)
{
    if (!c || c->slot >= RACE_SLOTS || slot >= RACE_SLOTS)
        return 0;   /* a thread without a slot: nothing is known to be ordered */
    if (slot == c->slot)
        return epoch <= c->known_prev;   /* an earlier occupant of our slot */
    return epoch <= c->vc[slot];
}

int race_vc_leq(const uint64_t *a, const uint64_t *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (a[i] > b[i])
            return 0;
    return 1;
}

/* ---- cells ---- */

void race_cell_reset(struct race_cell *cell, unsigned history)
{
    cell->owner = 0;
    cell->state = RACE_VIRGIN;
    cell->next = 0;
    cell->benign = 0;
    cell->cand = RACE_LS_ALL;
    memset(cell->rec, 0, history * sizeof cell->rec[0]);
}

/* Another thread's access p to a common byte, one of the two a write, not both atomic. */
static int conflicts(const struct race_rec *p, const struct race_access *a)
{
    return p->tid && p->tid != a->tid && (p->mask & a->mask) && (p->write || a->write) && !(p->atomic && a->atomic);
}

struct order {
    const struct race_clock *clock;
    race_before_fn before;
    void *arg;
};

/* p and a are ordered one way or the other */
static int ordered(const struct race_rec *p, const struct race_access *a, const struct order *o)
{
    if (!o->clock)
        return 0;
    return race_clock_ordered(o->clock, p->slot, p->epoch) || (o->before && o->before(p, a, o->arg));
}

static void record(struct race_cell *cell, unsigned history, const struct race_access *a)
{
    struct race_rec r = {.epoch = a->epoch, .held = a->held, .site = a->site, .tid = a->tid, .snap = a->snap,
                         .slot = (uint8_t)(a->slot < RACE_SLOTS ? a->slot : RACE_NOSLOT),
                         .mask = a->mask, .write = a->write, .atomic = a->atomic};
    /* An earlier access of the same thread that this one covers: the newer one finds every
     * race the older would (a later epoch is ordered before fewer accesses), so it replaces it.
     * An atomic access does not cover a plain one (which races with more). */
    for (unsigned i = 0; i < history; i++) {
        struct race_rec *p = &cell->rec[i];
        if (p->tid == a->tid && (p->mask & ~a->mask) == 0 && (!p->write || a->write) && (p->atomic || !a->atomic)) {
            *p = r;
            return;
        }
    }
    for (unsigned i = 0; i < history; i++)
        if (!cell->rec[i].tid) {
            cell->rec[i] = r;
            return;
        }
    unsigned k = cell->next % history;
    cell->rec[k] = r;
    cell->next = (uint8_t)((k + 1) % history);
}

int race_cell_step(struct race_cell *cell, unsigned history, const struct race_access *a,
                   const struct race_clock *clock, race_before_fn before, void *arg, struct race_rec *conflict)
{
    const struct order o = {clock, before, arg};
    if (history == 0 || history > RACE_MAX_HISTORY)
        history = history ? RACE_MAX_HISTORY : 1;
    switch (cell->state) {
    case RACE_VIRGIN:
        cell->state = RACE_EXCLUSIVE;
        cell->owner = a->tid;
        cell->cand = RACE_LS_ALL;
        break;
    case RACE_EXCLUSIVE: {
        if (cell->owner == a->tid)
            break;
        if (!clock) {
            /* Eraser: the owner's accesses were initialization; the lockset starts here */
            cell->cand = a->held;
            cell->state = a->write ? RACE_SHARED_MODIFIED : RACE_SHARED_READ;
            break;
        }
        /* The owner's accesses that happen before this one were initialization (or a hand-off:
         * the cell stays exclusive, to its new owner). The others are concurrent with this
         * one: the lockset starts with the locks they all held, and a conflict among them
         * makes the cell shared-modified at once (a write, then an unordered read). */
        race_lockset cand = a->held;
        int all_ordered = 1, conflict_seen = 0;
        for (unsigned i = 0; i < history; i++) {
            const struct race_rec *p = &cell->rec[i];
            if (!p->tid || p->tid == a->tid || ordered(p, a, &o))
                continue;
            all_ordered = 0;
            cand = race_ls_intersect(cand, p->held);
            conflict_seen |= conflicts(p, a);
        }
        if (all_ordered) {
            cell->owner = a->tid;
            break;
        }
        cell->cand = cand;
        cell->state = a->write || conflict_seen ? RACE_SHARED_MODIFIED : RACE_SHARED_READ;
        break;
    }
    case RACE_SHARED_READ:
        cell->cand = race_ls_intersect(cell->cand, a->held);
        if (a->write)
            cell->state = RACE_SHARED_MODIFIED;
        break;
    default:
        cell->cand = race_ls_intersect(cell->cand, a->held);
        break;
    }
    int race = 0;
    if (cell->state == RACE_SHARED_MODIFIED && cell->cand == RACE_LS_EMPTY && !cell->benign) {
        const struct race_rec *best = NULL;
        for (unsigned i = 0; i < history; i++) {
            const struct race_rec *p = &cell->rec[i];
            if (!conflicts(p, a) || race_ls_intersect(p->held, a->held) != RACE_LS_EMPTY || ordered(p, a, &o))
                continue;
            if (!best || (p->write && !best->write))
                best = p;
        }
        if (best) {
            *conflict = *best;
            race = 1;
        }
    }
    record(cell, history, a);
    return race;
}
