/* The vigil tool interface, version 10 (3 adds batched accesses; 4 options tables, modules
 * and their per-site counters; 5 synchronization events and atomic accesses; 6 what a new
 * allocation holds, vigil_alloc_kind, and vigil_site_of for the calls a tool's compiler part
 * places; 7 reports written while the program runs: the flush hook and vigil_signal_report;
 * 8 blocks a tool keeps from the allocator after their free: vigil_free_later, vigil_free_now;
 * 9 whether the tool needs bursts; 10 the interrupted code's registers and stack in a report a
 * signal asked for: vigil_report_registers, vigil_report_frame from flush, and
 * vigil_direct_call_target; the runtime accepts tools built for 1 to 10).
 *
 * A tool is a folder tools/<name>/ whose runtime part (tools/<name>/runtime/) fills a struct
 * vigil_tool and registers it with VIGIL_REGISTER_TOOL (docs/architecture.md, "Adding a
 * tool"). It opts into events with a mask; the runtime calls only the hooks
 * of enabled tools (`tools=a,b` in VIGIL_OPTIONS) that asked for the event. A tool sees events
 * and the services below, never the sampler's internals (counters, rates, module descriptors).
 *
 * Threading: hooks run on the thread that caused the event, possibly concurrently; they must
 * not call back into instrumented code. Memory allocated by a tool with the ordinary malloc
 * is not reported to tools (the runtime suppresses re-entrant events).
 */
#ifndef VIGIL_TOOL_H
#define VIGIL_TOOL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define VIGIL_TOOL_API_VERSION 10
#define VIGIL_TOOL_ACCESSES_BEFORE_LOCKS 1   /* see on_accesses */

struct vigil_option_set;                /* common/options.h */
struct vigil_module_info;               /* below, "per-site counters" */

typedef uint32_t vigil_site_t;          /* process-wide site id; VIGIL_NO_SITE when unknown */
#define VIGIL_NO_SITE 0xffffffffu

enum vigil_event {
    /* rare events, always recorded (checking and instrumented copies alike) */
    VIGIL_EV_ALLOC   = 1u << 0,   /* malloc family, including realloc's new block */
    VIGIL_EV_FREE    = 1u << 1,   /* free, and realloc's release of the old block */
    VIGIL_EV_LOCK    = 1u << 2,   /* mutex / rwlock / spinlock acquire and release, condvar wait */
    VIGIL_EV_THREAD  = 1u << 3,   /* thread start, exit, join; fork in the child */
    VIGIL_EV_SYNC    = 1u << 4,   /* version 5: synchronization other than locks (on_sync):
                                     semaphores, barriers, pthread_once, condition-variable
                                     signals, and the atomic instructions of vigil-cc's code */
    /* frequent events, recorded only inside bursts */
    VIGIL_EV_ACCESS  = 1u << 8,   /* loads and stores */
    VIGIL_EV_BRANCH  = 1u << 9,
    VIGIL_EV_RETURN  = 1u << 10,  /* integer or pointer result of a call */
    VIGIL_EV_CALL    = 1u << 11,
};

enum vigil_lock_op { VIGIL_LOCK_ACQUIRE, VIGIL_LOCK_RELEASE, VIGIL_LOCK_ACQUIRE_SHARED };
/* START and EXIT in the thread itself; JOIN in the joining thread; FORK_CHILD in the child;
 * CREATE in the creating thread before the new thread exists (it may not come to exist). */
enum vigil_thread_op { VIGIL_THREAD_START, VIGIL_THREAD_EXIT, VIGIL_THREAD_JOIN, VIGIL_THREAD_FORK_CHILD,
                       VIGIL_THREAD_CREATE };

/* Version 5: synchronization that is not a lock, as on_sync receives it. Each operation is a
 * release or an acquire of one object (vigil_sync_is_release): what the thread did before a
 * release happens before what any thread does after a later acquire of the same object. So
 * a tool that follows happens-before keeps a clock per object: a release joins the thread's
 * clock into it, an acquire joins it into the thread's. A release is delivered before the real
 * operation, an acquire after it, so that an acquire always finds the releases it synchronizes
 * with; and, as before lock events, the thread's buffered accesses are delivered first.
 *   ATOMIC_RELEASE / _ACQUIRE  an atomic instruction of code built with vigil-cc, from every
 *                  copy (always, not only in bursts: common/abi.h __vigil_sync_atomic): a store
 *                  or read-modify-write with release semantics (release, acq_rel, seq_cst; the
 *                  object is the atomic's address) / a load or read-modify-write with acquire
 *                  semantics (acquire, acq_rel, seq_cst; a compare-and-exchange's failure ordering
 *                  counts). A read-modify-write with both gives both, release first. Relaxed
 *                  atomics give none; fences are not events; code not built with vigil-cc (the
 *                  C library's own atomics) gives none.
 *   SEM_POST / SEM_WAIT        sem_post / a successful sem_wait, sem_trywait, sem_timedwait
 *                  (the object: the sem_t).
 *   BARRIER_ARRIVE / _DEPART   every thread entering pthread_barrier_wait / leaving it (all
 *                  arrivals of a round happen before all departures from it; the rounds of one
 *                  barrier name the same object).
 *   ONCE_DONE / ONCE_PASS      the thread that ran pthread_once's init routine, when the routine
 *                  returned (before pthread_once marks it done) / every thread whose
 *                  pthread_once returned 0, the one that ran it too (the init routine happens
 *                  before each return).
 *   COND_SIGNAL / COND_WAKE    pthread_cond_signal or _broadcast / a pthread_cond_wait or
 *                  _timedwait that returned 0 (the object: the pthread_cond_t; the mutex's
 *                  release and acquisition come as lock events as before). */
enum vigil_sync_op {
    VIGIL_SYNC_ATOMIC_RELEASE, VIGIL_SYNC_ATOMIC_ACQUIRE,
    VIGIL_SYNC_SEM_POST, VIGIL_SYNC_SEM_WAIT,
    VIGIL_SYNC_BARRIER_ARRIVE, VIGIL_SYNC_BARRIER_DEPART,
    VIGIL_SYNC_ONCE_DONE, VIGIL_SYNC_ONCE_PASS,
    VIGIL_SYNC_COND_SIGNAL, VIGIL_SYNC_COND_WAKE,
    VIGIL_SYNC_OPS
};
/* Releases have even numbers, acquires odd ones. */
static inline int vigil_sync_is_release(enum vigil_sync_op op)
{
    return ((unsigned)op & 1u) == 0;
}

/* Where an allocation happened: return addresses, innermost first. */
#define VIGIL_MAX_STACK 16
struct vigil_stack {
    uint32_t depth;
    uintptr_t pc[VIGIL_MAX_STACK];
};

struct vigil_site_info {
    const char *kind;       /* "entry", "backedge", "load", "store", "branch", "return", "call", "case" */
    const char *function;   /* the function the site is written in: the inlined one when the
                               optimizer inlined it into another */
    const char *file;       /* "" when unknown */
    uint32_t line, column;
};

/* A sampled access, as on_accesses receives it: size << 1 | is_store in one word and, from
 * version 5, flags in its top four bits (so the size is at most VIGIL_ACCESS_SIZE_MAX, 128 MiB
 * less a byte: a larger memcpy is cut there). Read it with the macros below. A tool built for
 * an earlier version receives no flags: the runtime gives it a copy of a batch that has some,
 * with them cleared (size_store >> 1 is then the size, as it always was). */
struct vigil_access {
    const void *addr;
    uint32_t site;           /* vigil_site_t */
    uint32_t size_store;
};
#define VIGIL_ACCESS_STORE 1u                   /* a store (a read-modify-write is one) */
#define VIGIL_ACCESS_ATOMIC (1u << 31)          /* an atomic instruction's access (load, store,
                                                   read-modify-write, compare-and-exchange) */
#define VIGIL_ACCESS_FLAGS 0xf0000000u          /* bits 28-30 are 0, reserved */
#define VIGIL_ACCESS_SIZE_MAX 0x07ffffffu
#define VIGIL_ACCESS_SIZE(a) (((a)->size_store >> 1) & VIGIL_ACCESS_SIZE_MAX)
#define VIGIL_ACCESS_IS_STORE(a) ((a)->size_store & VIGIL_ACCESS_STORE)

/* Version 9: whether a tool needs the adaptive core's bursts (struct vigil_tool.bursts). */
enum vigil_tool_bursts {
    VIGIL_BURSTS_NEEDED = 0,   /* it uses what only bursts give: the instrumented copies, sampled
                                  events (accesses, branches, returns, calls), counters kept in
                                  the instrumented copy; tools built for versions 1 to 8 */
    VIGIL_BURSTS_UNUSED = 1,   /* it uses none of that: when no enabled tool needs bursts and the
                                  user did not set mode=, the checks run as in mode=off (no
                                  burst starts; executions are still counted) */
};

struct vigil_tool {
    uint32_t api_version;   /* VIGIL_TOOL_API_VERSION */
    const char *name;       /* as written in tools=... */
    const char *description;
    uint32_t events;        /* mask of enum vigil_event */

    /* Called once at start-up when enabled; non-zero return disables the tool (with a message). */
    int (*init)(void);
    /* Called once at exit (or fatal signal): write the tool's part of the run report. */
    void (*fini)(void);

    void (*on_alloc)(void *ptr, size_t size, const struct vigil_stack *where);
    void (*on_free)(void *ptr);
    void (*on_lock)(const void *lock, enum vigil_lock_op op);
    void (*on_thread)(enum vigil_thread_op op, uint64_t thread_id);
    void (*on_access)(const void *addr, size_t size, int is_store, vigil_site_t site);   /* no flags */
    void (*on_branch)(vigil_site_t site, int taken);
    void (*on_return)(vigil_site_t site, int64_t value);
    void (*on_call)(vigil_site_t site, const void *callee);
    /* Version 3: sampled accesses in batches, in program order (a tool with this hook gets
     * no on_access calls): one call per batch instead of one per access. A thread's batch is
     * delivered before its free, thread, lock and (version 5) sync events
     * (VIGIL_TOOL_ACCESSES_BEFORE_LOCKS), so the accesses a tool receives happened before the
     * event that follows them. Version 5: size_store carries VIGIL_ACCESS_* flags. */
    void (*on_accesses)(const struct vigil_access *accesses, uint32_t n);
    /* Version 4: the tool's options table (tools/<name>/options.inc, through common/optset.h)
     * and the struct of its values. Before init, the runtime fills the values with the
     * defaults and the "<tool>.<key>=value" items of VIGIL_OPTIONS, rejects a bad value or an
     * unknown key with one message as it does the core's options, and lists the options in
     * help=1. NULL: the tool has no options. */
    const struct vigil_option_set *options;
    void *option_values;
    /* Version 4: every module built with vigil-cc as it registers (see "per-site counters"
     * below). Modules registered before the tool started come at its start. */
    void (*on_module)(const struct vigil_module_info *m);
    /* Version 5: synchronization events (VIGIL_EV_SYNC, enum vigil_sync_op above). */
    void (*on_sync)(const void *object, enum vigil_sync_op op);
    /* Version 7: a report written while the program runs (vigil_flush_report() from the
     * program, vigil_signal_report() from a tool): write the tool's files of the moment through
     * vigil_report_open, as fini does; they become visible with that report's run.txt, at once,
     * replacing the previous one. Events keep coming meanwhile, from other threads. NULL: the
     * tool has nothing to say before the end. */
    void (*flush)(void);
    /* Version 9: whether the tool needs bursts (enum vigil_tool_bursts). */
    enum vigil_tool_bursts bursts;
};

/* Built-in tools place a pointer to their descriptor in the section "vigil_tools". Retained:
 * nothing refers to an entry but the runtime's __start_/__stop_ symbols, which lld (13 and
 * later) does not count as references under --gc-sections, so a program linked with
 * `-fuse-ld=lld -Wl,--gc-sections` had no tools. */
#if defined(__has_attribute) && __has_attribute(retain)
#define VIGIL_TOOL_SECTION_RETAIN retain,
#else
#define VIGIL_TOOL_SECTION_RETAIN
#endif
#define VIGIL_REGISTER_TOOL(tool) \
    static const struct vigil_tool *const vigil_tool_ptr_##tool \
        __attribute__((used, VIGIL_TOOL_SECTION_RETAIN section("vigil_tools"), aligned(sizeof(void *)))) = &tool

/* ---- Services the runtime offers to tools ---- */

/* Monotonic time since the process started, in nanoseconds. */
uint64_t vigil_now_ns(void);
/* Describe a site; returns 0, or -1 for an unknown id (info then says "?"). */
int vigil_site_lookup(vigil_site_t site, struct vigil_site_info *info);
/* Capture the caller's return addresses (skip frames inside the runtime). */
void vigil_capture_stack(struct vigil_stack *out, uint32_t max_depth);
/* Version 10: the target of the direct call (E8 rel32, x86-64) that ret returns from, or 0: ret is not
 * inside a loaded object's executable segment (as last seen; never refreshed here) or does not
 * follow such a call. Reads only those segments' code: safe in a signal handler. For a sampler
 * that must tell a return address from any value on a stack (a leaf without a frame). */
uintptr_t vigil_direct_call_target(uintptr_t ret);
/* The depth of the stack on_alloc receives: the deepest any tool asked for (call from init),
 * VIGIL_MAX_STACK when no tool asks. Every frame costs a step of the walk on every allocation. */
void vigil_want_alloc_stack(uint32_t depth);
/* The burst length (nInstr0, in dispatch checks) a tool's analysis needs; call from init. The
 * longest asked for applies unless the user set ninstr=; with no request the runtime's default
 * (10) applies. Longer bursts see more events per burst and cost more in every check's warm-up. */
void vigil_want_burst_length(uint32_t checks);
/* Whether the free or allocation being delivered is a realloc's: it reports the old block
 * freed, then the new block allocated (the old one again if it failed), both from one call. */
int vigil_alloc_is_realloc(void);
/* Version 6: what the block of the allocation being delivered holds (from on_alloc):
 *   UNINIT   nothing yet (malloc, the memalign family, valloc, realloc of NULL);
 *   ZEROED   zeros (calloc);
 *   COPY     its whole content was written before the event (strdup, strndup);
 *   REALLOC  realloc's new block: the old block's content up to the smaller of the two sizes
 *            (the tool knows the old size from its free, delivered just before), then nothing. */
enum vigil_alloc_kind { VIGIL_ALLOC_UNINIT, VIGIL_ALLOC_ZEROED, VIGIL_ALLOC_COPY, VIGIL_ALLOC_REALLOC };
enum vigil_alloc_kind vigil_alloc_kind(void);
/* Version 8: from on_free, keep the block being freed from the allocator: the program's free
 * returns without releasing it, so that its memory is not handed out again while the tool
 * watches it (a quarantine of recent frees, for uses after free); the tool releases it later
 * with vigil_free_now (from any thread, hook or not). The other tools saw the free as usual.
 * 1 when granted; 0 when not: a realloc's old block (realloc releases it itself), or another
 * tool keeps it already. */
int vigil_free_later(void);
/* Version 8: release to the allocator a block kept by vigil_free_later; no event is raised. */
void vigil_free_now(void *p);
/* Version 6: the process-wide id of site index of a module built with vigil-cc, given the
 * module's descriptor (the __vigil_module that code placed by a tool's compiler part passes
 * to the tool's runtime calls); VIGIL_NO_SITE when the module is not registered yet. */
vigil_site_t vigil_site_of(const void *module, uint32_t index);
/* The value of a tool option: VIGIL_OPTIONS item "<tool>.<key>=value", or NULL. */
const char *vigil_tool_option(const struct vigil_tool *tool, const char *key);
/* Open a file in this process's report directory for the tool's output (called from fini, or
 * from flush). The file becomes visible atomically with the rest of the report. NULL on failure. */
FILE *vigil_report_open(const struct vigil_tool *tool, const char *filename);
/* From fini or flush, during a report: the frame where the runtime's report writing begins
 * (the stack grows down). Above it are the program's frames and those of the exit path that
 * called the runtime (its callee-saved registers are pushed just below it); below it only the
 * runtime's and the tools' own, whose uninitialized slots hold stale program data. When main
 * has returned (a vigil-cc main), the frame of main's caller instead: below it are only exit's
 * frames. Version 10: from flush, in a report that a tool's signal function asked for
 * (vigil_signal_report): the interrupted code's stack pointer less its red zone; below it the
 * kernel's signal frame (saved vector registers: stale data) and the handlers' frames, and
 * vigil_report_registers gives that code's registers; in other reports written while the program
 * runs (vigil_flush_report, a hook), the frame of the report writer, as in the final report.
 * NULL outside a report. A leak scan of the calling thread's stack starts there. */
void *vigil_report_frame(void);
/* Version 10: during a report a tool's signal
 * function asked for, the interrupted code's general registers (at most max of them, the stack
 * pointer last) into out; the count, 0 elsewhere (and on other architectures than x86-64). */
size_t vigil_report_registers(uintptr_t *out, size_t max);
/* Call fn (a signal handler's rules apply) when sig arrives from outside the process while the
 * program leaves sig at its default (call from init). The program keeps seeing SIG_DFL; a
 * handler it installs replaces fn, and the sig the process sends itself (raise, kill of its
 * own pid) has the default action, as without vigil. 0, or -1 when the program has a
 * disposition of its own for sig. */
int vigil_on_signal(int sig, void (*fn)(int));
/* Version 7: from a function given to vigil_on_signal: write a report of the running program
 * now (run.txt and every tool's flush), when the signal interrupted this thread where that is
 * safe: outside the runtime and the tools, and outside the C library or in one of its system
 * calls (a server waiting in accept or poll, a program computing in its own code). 1: written;
 * 0: not now (inside malloc, say, whose lock this thread may hold), ask again later (from a hook,
 * vigil_flush_report()); -1: the report could not be written (one message says why). Outside
 * such a function it writes at once. Never after the final report has begun. */
int vigil_signal_report(void);
/* From fini, when the tool found something: a few words on it ("3 objects, 96 bytes leaked").
 * With findings_summary=1 the runtime prints them at exit in one line
 * "SUMMARY: vigil: <tool>: <text>; <tool2>: ...", as the sanitizers' SUMMARY line. */
void vigil_tool_summary(const struct vigil_tool *tool, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Version 5: the events the tool wants from now on, a subset of its `events` (other bits are
 * ignored); callable from init (then it applies from the start) and from any hook or thread.
 * The runtime collects an event only while some tool wants it, and delivers it only to those
 * that do: a tool that needs nothing until some condition holds asks for less in init and for
 * more then (the race tool takes allocations, locks, synchronization and sampled accesses
 * only once a second thread is created, so that a program with one thread pays for none of
 * them). Other threads see the change soon after, not at once. No effect after the final
 * report stopped the events. */
void vigil_tool_events(const struct vigil_tool *tool, uint32_t events);
/* The calling thread's buffered sampled accesses to the tools now (on_accesses), unless the
 * thread is inside the runtime or a tool's hook (there they are delivered anyway before the
 * event). For a tool's own entry points, which the program or a library calls directly (an
 * annotation, a callback of the OpenMP runtime): the accesses made before the call then reach
 * the tools before what the entry point does, as they do before lock and sync events. */
void vigil_tool_deliver_accesses(void);
/* The runtime's verbosity option (0 quiet, 1 notes, 2 debug): how much a tool may say. */
unsigned vigil_verbosity(void);
/* One diagnostic line on stderr, prefixed "vigil: <tool>: ". */
void vigil_tool_message(const struct vigil_tool *tool, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- Version 4: per-site counters (common/abi.h, ABI 2) ----
 * vigil-cc can emit, at every branch and call-result site, a guarded counter of 3 slots
 * (a tool's compiler part puts them there: tools/preds/compiler/; VIGIL_CC_PRED_COUNTERS=1
 * or 2). A site counts only while its enable byte says so: the tool that owns the counters
 * sets the bytes of the sites it wants, from its on_module hook, which every module built
 * with vigil-cc reaches as it registers (under the registry's lock: call only the services
 * below from there). Branch sites count {false, true}, call results {< 0, == 0, > 0}. */
#define VIGIL_COUNTER_SLOTS 3
#define VIGIL_COUNTER_BINARY 0x80     /* enable byte: flags; a slot switches itself off once set */
#define VIGIL_COUNTER_MONITORED 0x40  /* enable byte: the site is monitored (reported if reached or not) */
/* Low bits of the enable byte: which slots count (branch 0x3, return 0x7). */

struct vigil_module_info {
    const char *path;            /* the file holding the module */
    uint64_t tu_hash;            /* its translation unit's hash (plans name modules by it) */
    uint32_t nsites;
    vigil_site_t base;           /* process-wide id of its site 0 */
    int counters;                /* built with counters */
    int counters_instr_only;     /* counters in the instrumented copy only: a site counts on
                                    every execution only once its function is pinned */
    const void *handle;          /* the runtime's */
};

/* The plan file named by the environment variable VIGIL_PLAN, or NULL. */
const char *vigil_plan_file(void);
/* Set the enable byte of m's site index (0 switches it off). */
void vigil_counter_enable(const struct vigil_module_info *m, uint32_t index, uint8_t enable);
/* Keep the function of m's site index in its instrumented copy from now on (every entry and
 * back-edge check goes there), so that counters_instr_only sites count on every execution.
 * 0, or -1 when the site's function has no entry site (a table not made by vigil-cc). */
int vigil_counter_pin_function(const struct vigil_module_info *m, uint32_t index);
/* Pin every function of m. */
void vigil_counter_pin_all(const struct vigil_module_info *m);
/* The enable byte of m's site index and its counts (relaxed loads; others may still run). */
uint8_t vigil_counter_read(const struct vigil_module_info *m, uint32_t index,
                           uint64_t count[VIGIL_COUNTER_SLOTS]);
/* Call fn for every registered module, in registration order, until it returns non-zero. */
void vigil_modules_each(int (*fn)(const struct vigil_module_info *m, void *arg), void *arg);

#endif
