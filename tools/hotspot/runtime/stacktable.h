/* The hot-spot profiler's stack table: distinct sampled stacks and how often each was seen,
 * filled from signal handlers of any thread at once. Lock-free and allocation-free: the
 * caller gives the memory (hs_table_bytes of it, zeroed) once; an insert claims a slot of an
 * open-addressed index by compare-and-swap, takes the next stack id, copies the frames and
 * publishes them (release); a lookup that finds its stack counts it with an atomic add.
 * Nothing is ever removed (reset only where no other thread can run: a fork child).
 * Pure: no dependency on the runtime (tests/test_stacktable.c). */
#ifndef HS_STACKTABLE_H
#define HS_STACKTABLE_H
#include <stddef.h>
#include <stdint.h>

#define HS_MAX_DEPTH 64
#define HS_MAX_STACKS (1u << 20)
#define HS_NO_STACK 0xffffffu          /* no id: the table is full, or the slot was busy */

struct hs_slot {
    uint64_t key;                      /* the stack's hash (never 0); 0: free */
    uint32_t id1;                      /* stack id + 1, published last; 0: being written */
    uint32_t pad;
};

struct hs_table {
    struct hs_slot *slots;             /* mask + 1 of them */
    size_t mask;
    uintptr_t *frames;                 /* max_stacks * depth */
    uint64_t *counts;                  /* max_stacks: sums of the samples' weights */
    uint8_t *depths;                   /* max_stacks; 0 until the stack is published */
    uint32_t max_stacks, depth;
    uint32_t nstacks;                  /* ids handed out (may pass max_stacks: those are dead) */
    uint64_t dropped_full;             /* weights of samples of a new stack when no id was left */
    uint64_t dropped_busy;             /* weights of samples of a stack another thread was inserting */
};

/* Bytes of memory a table of max_stacks stacks of depth frames needs. */
size_t hs_table_bytes(uint32_t max_stacks, uint32_t depth);
/* Lay a table out in mem (hs_table_bytes, zero-filled). max_stacks 1..HS_MAX_STACKS, depth
 * 1..HS_MAX_DEPTH. */
void hs_table_init(struct hs_table *t, void *mem, uint32_t max_stacks, uint32_t depth);
/* Count one sample of the stack pcs[0..n) (n >= 1; more than depth frames are cut) as weight
 * (counts and dropped_* are sums of weights): its id, or HS_NO_STACK when it could not be kept
 * (counted in dropped_*). Async-signal-safe. */
uint32_t hs_table_add(struct hs_table *t, const uintptr_t *pcs, uint32_t n, uint64_t weight);
/* Stack id's frames and count: its depth, or 0 when id was never published. */
uint32_t hs_table_get(const struct hs_table *t, uint32_t id, const uintptr_t **pcs, uint64_t *count);
/* Ids that may be published: 0..hs_table_size-1. */
uint32_t hs_table_size(const struct hs_table *t);
/* Empty the table (no other thread may use it meanwhile). */
void hs_table_reset(struct hs_table *t);

#endif
