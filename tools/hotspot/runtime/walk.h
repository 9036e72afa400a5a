/* The hot-spot walker (runtime/walk.c; tools/hotspot/README.md, "The walk"): hooks inserted
 * at run time into the hot functions' patchable entries, measuring them and moving up their
 * callers one level at a time. */
#ifndef HS_WALK_H
#define HS_WALK_H
#include <stdint.h>

struct vigil_json;
struct vigil_loadmap;

struct hs_walk_options {
    uint32_t share;         /* hotspot.walk_share: percent of self samples that makes a hot spot */
    uint32_t spots;         /* hotspot.walk_spots: hot spots walked at once (0: no walk) */
    uint32_t calls;         /* hotspot.walk_calls: calls measured per level */
    uint32_t min_share;     /* hotspot.walk_min_share: a caller below this share of calls ends the walk */
    uint32_t min_samples;   /* hotspot.walk_samples: samples before the hot spots are chosen */
    uint32_t timeout_ms;    /* hotspot.walk_timeout_ms: a level that gets no call for this long ends */
    uint32_t trace;         /* hotspot.walk_trace: hook events kept per thread */
};

/* Init (main thread, before sampling starts): the loaded modules' entries, the trampolines. */
void hs_walk_init(const struct hs_walk_options *o);
/* A thread starts, on the stack lo..hi (0, 0: unknown): modules loaded since are added, its
 * trace buffer mapped. */
void hs_walk_thread_start_stack(uintptr_t lo, uintptr_t hi);
/* From the sampling signal handler, after each sample: the walker's step (trylock; at most
 * every few milliseconds). Async-signal-safe. */
void hs_walk_step(void);
/* A return address read from the calling thread's stack at slot: the real one where a measured
 * call replaced it with the exit trampoline's (async-signal-safe; for stack walks). */
uintptr_t hs_walk_real_return(uintptr_t ret, uintptr_t slot);
/* Toggle (the walk signal): stop every walk and remove its hooks, or start choosing again. */
void hs_walk_toggle(void);
/* Whether a step stopped the walks (the walk signal) or saw the last one end since the last
 * call: the tool then writes hotspot.json while the program runs. Async-signal-safe. */
int hs_walk_report_wanted(void);
/* A fork child: its walks end (their hooks removed in the child; counts as the parent had them). */
void hs_walk_fork_child(void);
/* The end: every hook removed. */
void hs_walk_end(void);
/* "walk" in hotspot.json (at the end, or while the program runs: then under the step's lock). */
void hs_walk_report(struct vigil_json *j, const struct vigil_loadmap *ms);

#endif
