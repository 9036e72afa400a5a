/* The memory checker's runtime part, shared between its files (memcheck.c: hooks, fill and
 * checks; report.c: the errors and memcheck.json). Only include/vigil/, common/ and this
 * folder. */
#ifndef MC_INT_H
#define MC_INT_H
#include <stddef.h>
#include <stdint.h>

#include "heapmap.h"
#include "vigil/tool.h"
#include <vigil/mcevents.h>

#define MC_HIDDEN __attribute__((visibility("hidden")))

struct mc_config {
    int fill, check_once, print;
    uint32_t fill_max, freed, depth, max_reports, events, quarantine, quarantine_bytes;
};
extern struct mc_config mc_cfg MC_HIDDEN;          /* by init */
extern struct vigil_heapmap *mc_heap MC_HIDDEN;    /* by init */
extern struct vigil_tool mc_tool MC_HIDDEN;

/* The kinds of error, as memcheck.json and the event log name them (vigil/mcevents.h). */
enum mc_kind { MC_OVERFLOW = VIGIL_MCK_OVERFLOW, MC_UNDERFLOW = VIGIL_MCK_UNDERFLOW, MC_USE_AFTER_FREE = VIGIL_MCK_USE_AFTER_FREE,
               MC_UNINIT = VIGIL_MCK_UNINIT, MC_INDEX = VIGIL_MCK_INDEX, MC_OBJECT = VIGIL_MCK_OBJECT, MC_KINDS = VIGIL_MCK_KINDS };

struct mc_error {
    enum mc_kind kind;
    const void *module;                  /* the module's descriptor and its local site: the */
    uint32_t local_site;                 /* process-wide site is looked up when it is kept */
    vigil_site_t site;                   /* (by mc_report) */
    uintptr_t addr;
    uint32_t size;
    int is_store;
    unsigned use;                        /* enum vigil_mc_use, uninitialized reads */
    int have_obj;
    struct vigil_heap_object obj;        /* the block (live, or freed for a use after free) */
    uint32_t free_stack;                 /* use after free of a quarantined block: its free stack (mc_heap's id), 0: none */
    size_t uninit_offset;                /* the first uninitialized byte used, in obj */
    uint64_t index, bound;               /* MC_INDEX: index, length; MC_OBJECT: offset, size */
    int stack_object;                    /* MC_OBJECT: a stack object (else a global) */
    uintptr_t caller;                    /* return address of the check's call: the stack starts there */
};

/* What the checks did, for memcheck.txt (memcheck.c adds each thread's counts now and then,
 * and the exiting thread's at the end: a few thousand checks of other threads may be left out). */
struct mc_counts {
    uint64_t accesses;                   /* checks while on: calls and fast-path passes */
    uint64_t in_blocks;                  /* calls whose base was in a live heap block */
    uint64_t uninit_checks;              /* loads whose bytes were compared with the fill */
    uint64_t fast;                       /* checks the compiled fast path passed (no call) */
    uint64_t excluded_range;             /* checks skipped: memcheck.exclude_ranges */
    uint64_t excluded[4];                /* checks skipped: memcheck.exclude_kinds, by kind (stack, heap, globals, shared) */
};
extern struct mc_counts mc_counts MC_HIDDEN;

/* report.c */
int mc_report_init(void) MC_HIDDEN;
/* Count e; the first of its (site, kind) is kept with the access's stack. */
void mc_report(const struct mc_error *e) MC_HIDDEN;
/* memcheck.json and the summary (from fini, final, and flush); pattern: the fill, named in the
 * report. Only the final one gives the run's summary line and prints the errors (print=1). */
void mc_write_report(const uint8_t pattern[8], int final) MC_HIDDEN;
void *mc_map(size_t bytes) MC_HIDDEN;   /* zeroed anonymous memory, or NULL */

/* events.c: the event log (vigil/mcevents.h). */
int mc_events_init(uint32_t max_events) MC_HIDDEN;   /* 0, or -1 when the pool cannot be mapped */
/* Log one occurrence of e (its site already looked up): no lock, no allocation. */
void mc_event(const struct mc_error *e) MC_HIDDEN;
/* Write memcheck.events.zst (all events so far) through vigil_report_open. */
void mc_events_write(void) MC_HIDDEN;
uint64_t mc_events_logged(void) MC_HIDDEN;
uint64_t mc_events_dropped(void) MC_HIDDEN;

#endif
