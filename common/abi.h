/* The contract between code emitted by vigil-cc and libvigil.
 * Everything here is versioned by VIGIL_ABI_VERSION: the compiler stores the version in each
 * module descriptor and the runtime refuses (with one message, program runs on) a mismatch.
 *
 * Per translation unit the compiler emits:
 *   - an encoded site table (common/sitefmt.h) in the allocated ELF section "vigil_sites";
 *   - uint32_t dispatch_sites[ndispatch]: the dispatch sites (entry and back-edge checks) in
 *                                       site order, as site index | VIGIL_DISPATCH_BACKEDGE for
 *                                       a back-edge; a dispatch site's dispatch index d is its
 *                                       position here (ABI 6: the arrays below have one entry
 *                                       per dispatch site, not per site, so that the few pages
 *                                       they fill are all in use and nothing at run time reads
 *                                       the site table to tell an entry from a back-edge);
 *   - uint32_t counters[2 * ndispatch]: nCheck countdown of each dispatch site (zero at start:
 *                                       nCheck0 = 0, the first execution starts a burst), then
 *                                       the value each countdown was last set to (runtime: the
 *                                       executions a countdown stands for, common/abi.h ABI 7);
 *                                       thread-local (ABI 7, see below) or one array shared by
 *                                       every thread;
 *   - struct __vigil_site_state[ndispatch]: zeroed cold state, owned by the runtime;
 *   - struct __vigil_module            : the descriptor below;
 *   - a constructor calling __vigil_register_module(&descriptor).
 *
 * Code shape of a dispatch check in the checking copy (dispatch index s of module m):
 *     if (__vigil_burst_left != 0) goto instrumented_check;     // thread is inside a burst
 *     c = (int32_t)counters[s] - 1;                             // plain load and store: x86
 *     counters[s] = c;                                          //   folds them into one `decl`
 *     if (c < 0) { if (__vigil_dispatch_enter(&m, s)) goto instrumented; else goto checking; }
 *     goto checking;
 * Thread-local countdowns (ABI 7, thread_counters not NULL): in code for an executable
 * the array is thread_local (local-exec: the check stays one `addl $-1, %fs:off`), so threads
 * running the same code do not write the same cache lines at every check; each thread's copy
 * starts at 0 (its first pass through a check takes the slow path, which sets its countdown
 * from the shared per-site schedule). The descriptor's counters pointer is then NULL and
 * thread_counters() returns the calling thread's copy (the runtime's slow paths use it). Code
 * for a shared library keeps one shared array (a dlopen'ed library cannot count on room in the
 * static TLS block): its countdown is racy on purpose, as gcov's counters are: threads sharing
 * a site may lose decrements, which only moves that site's next burst a little.
 * A countdown stays in 0..VIGIL_COUNTER_MAX (the runtime never stores more), so "went
 * negative" is "was 0".
 * A back-edge check of an innermost call-free loop counts down a register instead (loaded from
 * counters[s] on entering the loop, stored back on leaving it) and skips the burst test.
 * and in the instrumented copy (and instrumented_check above):
 *     state[s].instr_execs += 1;                                // relaxed load + store, no lock
 *     b = __vigil_burst_left;
 *     if (b > 1) { __vigil_burst_left = b - 1; goto instrumented; }
 *     if (__vigil_burst_end(&m, s)) goto instrumented; else goto checking;
 *
 * Predicate counters (ABI 2, only when built with VIGIL_CC_PRED_COUNTERS=1; else both pointers
 * are NULL). At a branch site (pred = taken) or a return site (pred = 0/1/2 for < 0 / == 0 /
 * > 0), in both copies:
 *     e = pred_enable[s];                                       // relaxed atomic load
 *     if (e & (1 << pred)) {
 *         pred_counts[3 * s + pred] += 1;                       // relaxed load + store
 *         if (e & VIGIL_PRED_BINARY) pred_enable[s] = e & ~(1 << pred);   // probe removes itself
 *     }
 * The runtime writes pred_enable at registration (preds.collect=all|plan); VIGIL_PRED_MONITORED marks
 * the sites it enabled and is never cleared, so readers know what was monitored.
 *
 * Counters in the instrumented copy only (ABI 5, VIGIL_CC_PRED_COUNTERS=1, flag
 * VIGIL_MODULE_PRED_INSTR_ONLY; =2 keeps them in both copies): the checking copy has none, so
 * a build with counters costs what one without costs until something is monitored. To count
 * a site on every execution the runtime pins its function: it sets VIGIL_PRED_PINNED in the
 * enable bytes of the function's entry and back-edge sites. Then
 *   - the entry check's slow path (__vigil_dispatch_enter) answers "instrumented" every time
 *     (the runtime keeps that site's counter at 0, so every call reaches it);
 *   - a check in the instrumented copy (and a burst entry) outside a burst stays in it:
 *         b = __vigil_burst_left;
 *         if (b > 1) { ...as above... }
 *         else if (b == 0) { if (pred_enable[entry] & VIGIL_PRED_PINNED) goto instrumented;
 *                            else goto checking; }        // no burst: nothing to end
 *         else ...__vigil_burst_end as above, which answers "instrumented" for a pinned
 *              function's check: a burst begun elsewhere may end inside it...
 * so a pinned function never runs its checking copy, and its callees keep theirs.
 */
#ifndef VIGIL_ABI_H
#define VIGIL_ABI_H
#include <stdint.h>

#define VIGIL_ABI_VERSION 7

#define VIGIL_COUNTER_MAX 0x7fffffffu  /* largest countdown the runtime stores (see above) */
#define VIGIL_PRED_SLOTS 3         /* counters per site in pred_counts */
#define VIGIL_PRED_BINARY 0x80     /* enable byte: flags, and switch a predicate off once seen */
#define VIGIL_PRED_MONITORED 0x40  /* enable byte: set by the runtime for a monitored site */
#define VIGIL_PRED_PINNED 0x20     /* enable byte of an entry site: its function runs only its
                                    * instrumented copy (VIGIL_MODULE_PRED_INSTR_ONLY, see above) */

/* struct __vigil_module flags (ABI 5). */
#define VIGIL_MODULE_PRED_INSTR_ONLY 0x1   /* predicate counters in the instrumented copy only */

/* Per-dispatch-site cold state. The compiler emits it zeroed (ndispatch * 32 bytes, 8-aligned);
 * only the runtime writes it, except instr_execs which the instrumented copy bumps. */
struct __vigil_site_state {
    uint64_t instr_execs;   /* executions of this dispatch check inside bursts (emitted code) */
    uint64_t check_execs;   /* executions in the checking copy, accumulated at each reset (runtime) */
    uint64_t bursts;        /* bursts started at this check (runtime) */
    uint32_t resets;        /* nCheck resets so far (runtime) */
    uint8_t level;          /* rate level n: r = 1/decr^(n-1), starts at 1 (0 = untouched) */
    uint8_t pad[3];
};

/* One per translation unit. Fields marked (runtime) start zeroed and are written only by the
 * runtime, under its module-registration lock. */
struct __vigil_module {
    uint32_t abi_version;                 /* VIGIL_ABI_VERSION at compile time */
    uint32_t nsites;
    const unsigned char *site_blob;       /* encoded site table (common/sitefmt.h), or NULL: in the
                                             file's "vigil_sites" section, not loaded */
    uint32_t *counters;                   /* 2 * ndispatch entries (see above), or NULL when
                                             thread-local (thread_counters) */
    struct __vigil_site_state *state;     /* ndispatch entries */
    uint64_t tu_hash;                     /* identity of the table (same value as in the blob) */
    uint32_t base_id;                     /* (runtime) global site id = base_id + local index */
    uint32_t registered;                  /* (runtime) */
    struct __vigil_module *next;          /* (runtime) list of registered modules */
    uint8_t *pred_enable;                 /* nsites entries, or NULL: no predicate counters */
    uint64_t *pred_counts;                /* VIGIL_PRED_SLOTS * nsites entries, or NULL */
    uint64_t flags;                       /* VIGIL_MODULE_* (compile time) */
    const uint32_t *dispatch_sites;       /* ndispatch entries, see above */
    uint32_t ndispatch;
    uint32_t reserved;                    /* 0 */
    uint32_t *(*thread_counters)(void);   /* (ABI 7) the calling thread's counters (2 * ndispatch
                                             entries), or NULL: counters is shared */
};

#define VIGIL_DISPATCH_BACKEDGE 0x80000000u   /* dispatch_sites[d]: a back-edge check */
#define VIGIL_DISPATCH_SITE 0x7fffffffu       /* dispatch_sites[d]: the site index */

/* Thread-local burst counter: dispatch checks left in the current burst, 0 = not in a burst.
 * Accessed with the initial-exec TLS model from instrumented code. */
extern __thread uint32_t __vigil_burst_left;

/* The events (enum vigil_event of <vigil/tool.h>) some enabled tool wants; 0 = nobody listens.
 * Written by the runtime at start-up and exit. Instrumented code reads it before each probe
 * (VIGIL_CC_GUARD_PROBES), shared libraries included: default visibility. */
extern uint32_t __vigil_active_events __attribute__((visibility("default")));

/* main's calls in progress and whether one has returned: vigil-cc counts them in a program's
 * main (entry +1, each return -1 and returned = 1). Once main has returned, the main thread's
 * frames below __libc_stack_end are exit's and the runtime's, and whatever program data they
 * hold is dead (the exit scan of the leak tool skips them, vigil_report_frame). Written only
 * by main's code; both stay 0 when main was not built by vigil-cc. */
extern int32_t __vigil_main_active, __vigil_main_returned;

/* On x86-64 the emitted code reaches the two slow paths through inline asm, as
 *     call __vigil_dispatch_enter_x86 / __vigil_burst_end_x86
 * with the module in r11 and the site in eax, the answer in eax, and only r11, the flags and
 * the vector and x87 registers clobbered (runtime/sampler.c): no argument register of the
 * caller has to move, and a function that is a leaf in its checking copy stays a leaf,
 * without callee-saved pushes for a call it almost never makes. Other targets call the C
 * functions below. (clang's preserve_most would do the same in C, but clang 14 restores rax
 * over the return value of such a function.) */

/* Transfers into an outlined instrumented copy (compiler/transfer.c, ABI 4) go, on x86-64,
 * through `call __vigil_call_keeping_registers_x86` from inline asm: the frame in rax, the
 * thunk `<f>.vigil.xfer(frame)` in r11, every general-purpose register but rax and r11 kept,
 * so that no value of the checking copy needs a callee-saved register for a transfer. */

/* Runtime entry points called by emitted code. They never allocate on the common path. */
void __vigil_register_module(struct __vigil_module *m);
uint32_t __vigil_dispatch_enter(struct __vigil_module *m, uint32_t d);  /* counter d hit 0 */
uint32_t __vigil_burst_end(struct __vigil_module *m, uint32_t d);       /* burst counter ran out */

/* Probes, emitted only in the instrumented copy. `site` is the local index in module m.
 * On x86-64 they keep every general-purpose register but r11 (clang's preserve_most; the
 * compiler emits the calls with that convention, compiler/emit.c): a value live across a probe
 * needs no callee-saved register, so the instrumented copy does not make its function save
 * more registers than the plain one. Each is a stub that returns at once when no tool wants
 * its event (runtime/probes.c). */
#if defined(__clang__) && defined(__x86_64__)
#define VIGIL_PROBE_CC __attribute__((preserve_most))
#else
#define VIGIL_PROBE_CC
#endif
VIGIL_PROBE_CC void __vigil_probe_load(struct __vigil_module *m, uint32_t site, const void *addr, uint64_t size);
VIGIL_PROBE_CC void __vigil_probe_store(struct __vigil_module *m, uint32_t site, const void *addr, uint64_t size);
VIGIL_PROBE_CC void __vigil_probe_branch(struct __vigil_module *m, uint32_t site, uint32_t taken);
VIGIL_PROBE_CC void __vigil_probe_return(struct __vigil_module *m, uint32_t site, int64_t value); /* call result */
VIGIL_PROBE_CC void __vigil_probe_call(struct __vigil_module *m, uint32_t site, const void *callee);
/* The access of an atomic instruction (load; store, read-modify-write or compare-and-exchange):
 * as the probes above, and marked VIGIL_ACCESS_ATOMIC for the tools (<vigil/tool.h>). Called
 * directly (no module stub): atomics are few. */
VIGIL_PROBE_CC void __vigil_probe_atomic_load(struct __vigil_module *m, uint32_t site, const void *addr, uint64_t size);
VIGIL_PROBE_CC void __vigil_probe_atomic_store(struct __vigil_module *m, uint32_t site, const void *addr, uint64_t size);
/* A synchronizing atomic instruction, in every copy (checking, instrumented, coasting), not
 * only in bursts: op is VIGIL_SYNC_ATOMIC_RELEASE (0, called before a store or
 * read-modify-write with release semantics) or VIGIL_SYNC_ATOMIC_ACQUIRE (1, after a load or
 * read-modify-write with acquire semantics) of <vigil/tool.h>. Behind a test of
 *     __vigil_active_events & VIGIL_EV_SYNC
 * where the compiler could split the block; the runtime tests the bit again.
 * These three entries were added without a change of VIGIL_ABI_VERSION: the descriptor and
 * every earlier entry are unchanged, objects built before them run with this runtime as they
 * did, and an object that calls them needs a runtime that has them, which its link checks. */
VIGIL_PROBE_CC void __vigil_sync_atomic(const void *addr, uint32_t op);

/* Access probes of code built for x86-64 ELF call a stub of their own module instead
 * (compiler/emit.c, module asm, a local symbol `__vigil_mprobe_<load|store>[N]`, N = 1, 2, 4,
 * 8 or 16 bytes, none when the size is an argument): edi = site, rsi = address, rdx = size
 * (no N only), preserve_most. In code for an executable built with VIGIL_CC_GUARD_PROBES=0 the
 * stub first returns at once when no tool wants accesses (a guarded probe tested that before
 * the call); it puts the module in r11 and jumps to
 * `__vigil_probe_<load|store>[N]_m` (runtime/probes.c), which tests the bit, handles the access
 * and keeps every register but r11. The call is 13-14 bytes instead of 25-26. Branch, return
 * and call probes do the same through `__vigil_mprobe_<branch|return|call>` (edi = site, rsi =
 * the value: taken, the result, the callee) and `__vigil_probe_<branch|return|call>_m`: 7 bytes
 * less than the lea of the module. An instrumented copy that shares its function with the
 * checking copy calls the probes above. */

#endif
