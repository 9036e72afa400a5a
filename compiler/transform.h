/* The vigil transform: the interface between the driver (stages, files, processes) and the
 * IR work (dual copies, dispatch checks, probes, site table emission). */
#ifndef VIGIL_TRANSFORM_H
#define VIGIL_TRANSFORM_H
#include <llvm-c/Core.h>
#include <stddef.h>

/* Where predicate counters go (VIGIL_CC_PRED_COUNTERS, common/abi.h). */
enum vigil_pred_counters {
    VIGIL_PRED_COUNTERS_NONE,
    VIGIL_PRED_COUNTERS_INSTR,   /* instrumented copy only: the runtime pins monitored functions */
    VIGIL_PRED_COUNTERS_BOTH,    /* both copies */
};

/* What the transform did with one function with a body (for the cache's metadata). */
struct vigil_function_report {
    const char *name;
    const char *how;         /* "transfer": instrumented copy outlined, entered and left at checks;
                              * "outlined": outlined copy entered at the entry check;
                              * "outlined-entry": the same for a big function with loops (entry
                              * check only); "cloned": both copies in the function's body;
                              * "skipped": left as it is (reason) */
    const char *copy;        /* the instrumented copy's symbol, NULL when it has none of its own */
    const char *reason;      /* "skipped": why */
    unsigned sites, checks, probes;
};

struct vigil_ccconfig;

/* VIGIL_CC_THREAD_COUNTERS: thread-local countdowns in code for an executable only, everywhere,
 * or nowhere (common/abi.h, ABI 7). */
enum vigil_thread_counters { VIGIL_THREAD_COUNTERS_AUTO, VIGIL_THREAD_COUNTERS_ALL, VIGIL_THREAD_COUNTERS_NONE };

struct vigil_transform_settings {
    int debug;               /* VIGIL_DEBUG: one note per function left uninstrumented */
    int probe_accesses;      /* loads/stores (default 1) */
    int probe_branches;      /* conditional branches (default 1) */
    int probe_returns;       /* integer/pointer call results (default 1) */
    int probe_calls;         /* calls (default 0: only the count tool uses them) */
    int guard_probes;        /* each probe behind a test of the enabled tools' events (default 1) */
    int guard_accesses;      /* access probes too (default 0) */
    int direct_calls;        /* x86-64 ELF: calls of other units' burst entries through local ones (outline.c) */
    long merge_span;         /* accesses of a block through one pointer within this many bytes: one probe (0: off) */
    int loop_counters;       /* batched countdown in innermost loops (default 1) */
    int loop_calls;          /* ... also in those that make calls (default 0) */
    int counted_loops;       /* ... counted ones: trip count subtracted at entry, unchecked copy (default 1) */
    int outline;             /* loop-free functions: instrumented copy as its own function (default 1) */
    int outline_loops;       /* functions with loops too, left and re-entered at checks (transfer.c) */
    int known_zeros;         /* transfer.c's ways back mask the slots' known low zero bits (default 1) */
    long dual_max;           /* functions with loops above this many instructions: outlined, entry check only */
    long giant_loops;        /* ... unless they have at most this many outermost loops (transfers then) */
    long inlined_checks;     /* conditional inlined calls of at least this many instructions: own check (0: off) */
    long short_loop_max;     /* innermost loops of at most this many iterations per entry: no check (0: off) */
    int split_cold;          /* x86-64 ELF: burst-only blocks out of the checking copy (coldsplit.c) */
    int pred_counters;       /* enum vigil_pred_counters (default NONE, seed 002) */
    int pred_remove_redundant; /* with pred_counters: leave out redundant branch predicates */
    int thread_counters;     /* enum vigil_thread_counters: where the countdowns live (emit.c) */
    const char *source_name; /* the main source file, for the site table and the tu hash */
    /* VIGIL_CC_CONFIG (common/ccconfig.h), or NULL: [skip] functions are left as they are;
     * tools read their sections with xcc_config_match. */
    const struct vigil_ccconfig *config;
    /* Optional: called once per function with a body, after it was transformed or skipped. */
    void (*on_function)(void *ctx, const struct vigil_function_report *report);
    void *on_function_ctx;
};

struct vigil_transform_stats {
    unsigned functions_seen, functions_transformed, functions_skipped;
    unsigned entry_checks, backedge_checks, probes;
    unsigned merged_accesses;/* loads and stores covered by another access's probe (probes.c) */
    unsigned batched_checks; /* back-edge checks counting down a local (loops.c) */
    unsigned counted_loops;  /* of those, loops with an unchecked copy run when the trip count allows (loops.c) */
    unsigned inlined_checks; /* checks of conditional inlined calls (inlined.c), also in entry_checks */
    unsigned short_loops;    /* back-edges of short loops, left without a check (shortloops.c) */
    unsigned outlined;       /* functions whose instrumented copy is a function of its own */
    unsigned outlined_loops; /* of those, functions with loops entered and left at checks */
    unsigned outlined_big;   /* of those, functions with loops over dual_max (entry check only) */
    unsigned pred_counters;  /* predicate sites with a counter */
    int split_cold;          /* the module has the synthetic profile: run the back end's splitter */
    unsigned pred_removed;   /* branch predicates left out: count reconstructed (seed 002 3.1) */
    unsigned sites;          /* records in the module's site table */
};

/* Transform every eligible function of m in place and emit the site table, counters, state,
 * module descriptor and constructor (common/abi.h). Functions it cannot transform safely are
 * left as they are (noted under settings->debug). Returns 0, or -1 with a reason in err when
 * the module as a whole could not be transformed (the driver then compiles it uninstrumented). */
int vigil_transform_module(LLVMModuleRef m, const struct vigil_transform_settings *settings,
                           struct vigil_transform_stats *stats, char *err, size_t errlen);

#endif
