/* The vigil tool interface, version 4 (2 adds the predicate counter services at the end, 3
 * batched accesses, 4 options tables; the runtime accepts tools built for 1 to 4).
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

#define VIGIL_TOOL_API_VERSION 4

struct vigil_option_set;                /* common/options.h */

typedef uint32_t vigil_site_t;          /* process-wide site id; VIGIL_NO_SITE when unknown */
#define VIGIL_NO_SITE 0xffffffffu

enum vigil_event {
    /* rare events, always recorded (checking and instrumented copies alike) */
    VIGIL_EV_ALLOC   = 1u << 0,   /* malloc family, including realloc's new block */
    VIGIL_EV_FREE    = 1u << 1,   /* free, and realloc's release of the old block */
    VIGIL_EV_LOCK    = 1u << 2,   /* mutex / rwlock / spinlock acquire and release, condvar wait */
    VIGIL_EV_THREAD  = 1u << 3,   /* thread start, exit, join; fork in the child */
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

/* Where an allocation happened: return addresses, innermost first. */
#define VIGIL_MAX_STACK 16
struct vigil_stack {
    uint32_t depth;
    uintptr_t pc[VIGIL_MAX_STACK];
};

struct vigil_site_info {
    const char *kind;       /* "entry", "backedge", "load", "store", "branch", "return", "call" */
    const char *function;
    const char *file;       /* "" when unknown */
    uint32_t line, column;
};

/* A sampled access, as on_accesses receives it (size << 1 | is_store in one word). */
struct vigil_access {
    const void *addr;
    uint32_t site;           /* vigil_site_t */
    uint32_t size_store;
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
    void (*on_access)(const void *addr, size_t size, int is_store, vigil_site_t site);
    void (*on_branch)(vigil_site_t site, int taken);
    void (*on_return)(vigil_site_t site, int64_t value);
    void (*on_call)(vigil_site_t site, const void *callee);
    /* Version 3: sampled accesses in batches, in program order (a tool with this hook gets
     * no on_access calls): one call per batch instead of one per access. */
    void (*on_accesses)(const struct vigil_access *accesses, uint32_t n);
    /* Version 4: the tool's options table (tools/<name>/options.inc, through common/optset.h)
     * and the struct of its values. Before init, the runtime fills the values with the
     * defaults and the "<tool>.<key>=value" items of VIGIL_OPTIONS, rejects a bad value or an
     * unknown key with one message as it does the core's options, and lists the options in
     * help=1. NULL: the tool has no options. */
    const struct vigil_option_set *options;
    void *option_values;
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
/* The value of a tool option: VIGIL_OPTIONS item "<tool>.<key>=value", or NULL. */
const char *vigil_tool_option(const struct vigil_tool *tool, const char *key);
/* Open a file in this process's report directory for the tool's output (called from fini).
 * The file becomes visible atomically with the rest of the report. NULL on failure. */
FILE *vigil_report_open(const struct vigil_tool *tool, const char *filename);
/* From fini, during the final report: the frame where the runtime's report writing begins
 * (the stack grows down). Above it are the program's frames and those of the exit path that
 * called the runtime (its callee-saved registers are pushed just below it); below it only the
 * runtime's and the tools' own, whose uninitialized slots hold stale program data. When main
 * has returned (a vigil-cc main), the frame of main's caller instead: below it are only exit's
 * frames. NULL elsewhere. A leak scan of the calling thread's stack starts there. */
void *vigil_report_frame(void);
/* Call fn (a signal handler's rules apply) when sig arrives from outside the process while the
 * program leaves sig at its default (call from init). The program keeps seeing SIG_DFL; a
 * handler it installs replaces fn, and the sig the process sends itself (raise, kill of its
 * own pid) has the default action, as without vigil. 0, or -1 when the program has a
 * disposition of its own for sig. */
int vigil_on_signal(int sig, void (*fn)(int));
/* From fini, when the tool found something: a few words on it ("3 objects, 96 bytes leaked").
 * With findings_summary=1 the runtime prints them at exit in one line
 * "SUMMARY: vigil: <tool>: <text>; <tool2>: ...", as the sanitizers' SUMMARY line. */
void vigil_tool_summary(const struct vigil_tool *tool, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* One diagnostic line on stderr, prefixed "vigil: <tool>: ". */
void vigil_tool_message(const struct vigil_tool *tool, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- Version 2: predicate counters (seed 002, tools/preds/DESIGN.md) ----
 * Counted by emitted code in both copies (vigil-cc VIGIL_CC_PRED_COUNTERS=1) at the sites the
 * runtime enabled: every branch/return site (VIGIL_OPTIONS preds=all) or the sites of the plan
 * file VIGIL_PLAN (preds=plan). */

/* The collection mode in force: "sampled", "all" or "plan"; *binary = 1 when counters are
 * flags (preds_binary=1: a predicate's probe switches itself off once it has been true). */
const char *vigil_pred_collect(int *binary);

/* One monitored predicate site: its id, kind ("branch": count[0] false, count[1] true;
 * "return": count[0..2] < 0, == 0, > 0) and counts (flags in binary mode). */
struct vigil_pred_site {
    vigil_site_t site;
    const char *kind;
    uint64_t count[3];
};
/* Call fn for every monitored predicate site, ids increasing, including sites never reached
 * (all counts 0). A non-zero return from fn stops the walk. Returns the number of sites
 * visited. For fini: counts are read with relaxed loads while other threads may still run. */
size_t vigil_pred_sites_each(int (*fn)(const struct vigil_pred_site *s, void *arg), void *arg);

#endif
