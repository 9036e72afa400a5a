/* A thread's shadow stack of measured calls (runtime/walk.c): pure, so that
 * tests/test_shadow.c checks it. An entry hook that measures its call replaces the return
 * address in the caller's frame (its slot: the address of that word on the stack) with the exit
 * trampoline's and pushes {real return address, slot}; the exit trampoline, reached by the
 * function's `ret` with the stack pointer just above the slot, pops it. Fixed size, no
 * allocation; async-signal-safe for one thread (a signal handler's calls nest above the
 * interrupted ones: an entry is written before the count that publishes it, and the count
 * is lowered only after the entry was read).
 *
 * Frames that end without their `ret` (longjmp, a thread's unwinding) leave entries behind:
 * a push drops entries of the same stack whose slot is at or below the new one (they are dead:
 * a live caller's slot lies above its callees'), and a pop takes the entry whose slot is the
 * one just popped, dropping those above it. An exit is thus paired with its own entry or with
 * none, never another's. */
#ifndef HS_SHADOW_H
#define HS_SHADOW_H
#include <stdint.h>

#define HS_SHADOW_MAX 128

struct hs_shadow_entry {
    uintptr_t ret;              /* the real return address */
    uintptr_t slot;             /* where it was on the stack */
    void *what;                 /* the measured function's record */
    uint64_t t0_ns, tsc0;       /* at entry */
};

struct hs_shadow {
    struct hs_shadow_entry e[HS_SHADOW_MAX];
    volatile uint32_t n;
    uint64_t dropped;           /* entries dropped (their frame ended without a return) */
    uint64_t full;              /* calls not measured: the stack was full */
};

/* Drop the entries that a call whose return address is at slot shows dead: those of the same
 * stack (lo..hi: the thread's stack; 0, 0: unknown, any) at or below slot. */
static inline void hs_shadow_prune(struct hs_shadow *s, uintptr_t slot, uintptr_t lo, uintptr_t hi)
{
    int same_stack = !hi || (slot >= lo && slot < hi);
    while (same_stack && s->n > 0) {
        const struct hs_shadow_entry *top = &s->e[s->n - 1];
        if (top->slot > slot || (hi && (top->slot < lo || top->slot >= hi)))
            break;
        s->n = s->n - 1;
        s->dropped++;
    }
}

/* A new entry (after pruning): 0, or -1 when the stack is full. */
static inline int hs_shadow_push(struct hs_shadow *s, const struct hs_shadow_entry *e)
{
    uint32_t n = s->n;
    if (n >= HS_SHADOW_MAX) {
        s->full++;
        return -1;
    }
    s->e[n] = *e;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    s->n = n + 1;
    return 0;
}

/* The entry of the return whose address was at slot, copied to *out; entries above it dropped.
 * 0, or -1 when there is none (then nothing is changed). */
static inline int hs_shadow_pop(struct hs_shadow *s, uintptr_t slot, struct hs_shadow_entry *out)
{
    uint32_t n = s->n;
    for (uint32_t i = n; i-- > 0;) {
        if (s->e[i].slot != slot)
            continue;
        *out = s->e[i];
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        s->dropped += n - 1 - i;
        s->n = i;
        return 0;
    }
    return -1;
}

/* Whether what is already on the stack (a recursive call of a measured function). */
static inline int hs_shadow_holds(const struct hs_shadow *s, const void *what)
{
    for (uint32_t i = s->n; i-- > 0;)
        if (s->e[i].what == what)
            return 1;
    return 0;
}

#endif
