/* libvigil internals shared between the runtime sources. Tools never include this (tool.h only).
 * Every symbol here is hidden: the runtime's exported surface is abi.h, tool.h and vigil.h. */
#ifndef VIGIL_RT_INTERNAL_H
#define VIGIL_RT_INTERNAL_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "abi.h"
#include "options.h"
#include "schedule.h"
#include "sitefmt.h"
#include "vigil/tool.h"

#define HIDDEN __attribute__((visibility("hidden")))
/* Our definitions of libc functions (malloc, pthread_mutex_lock, _exit, ...) are weak: the
 * dynamic linker treats them as strong, so they interpose as usual, but a program that brings
 * its own malloc, or a -static link against libc.a, gets no duplicate-symbol error (the other
 * definition wins and those events are simply not seen). */
#define INTERPOSE __attribute__((weak))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define RELAXED_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define RELAXED_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* ---- init.c: start-up, options in force, process identity ---- */

/* Options in force. Written once by __vigil_init (under the init-once guard), read-only after. */
extern struct vigil_options __vigil_opts HIDDEN;
/* The schedule built from __vigil_opts; written by __vigil_init, read by the sampler. */
extern struct vigil_schedule __vigil_sched HIDDEN;

struct vigil_process {
    pid_t pid, ppid;                 /* this process (reset in a fork child) */
    uint64_t start_unix_ns;          /* CLOCK_REALTIME at start (reset in a fork child) */
    uint64_t start_mono_ns;          /* CLOCK_MONOTONIC at start (reset in a fork child) */
    char exe[4096];                  /* /proc/self/exe, or argv[0] when unreadable */
    const char *name;                /* basename of exe: the report directory's prefix */
    int argc;
    char **argv;                     /* deep copy taken by the constructor (before getopt) */
    char out_dir[4096];              /* absolute report directory (out made absolute at init) */
};
/* Written by __vigil_init (and the constructor for argv, the fork child handler for the
 * identity fields); read by the report writer and vigil_now_ns. */
extern struct vigil_process __vigil_proc HIDDEN;

/* Where a fault signal (SEGV, BUS, ILL, FPE) struck, or where the program raised a fatal
 * signal itself (the call of abort, raise or assert). Written once by the fatal-signal handler
 * before it writes the report; read by the report writer. signo 0: no crash site. */
struct vigil_crash {
    int signo;
    uintptr_t pc;
};
extern struct vigil_crash __vigil_crash HIDDEN;

/* Run the one-time start-up now if it has not run (any entry point may call it). */
void __vigil_ensure_init(void) HIDDEN;
/* 1 once start-up has completed. */
int __vigil_is_ready(void) HIDDEN;
/* One diagnostic line on stderr: "vigil: " + text + "\n", one write(2). */
void __vigil_message(const char *fmt, ...) HIDDEN __attribute__((format(printf, 1, 2)));
uint64_t __vigil_mono_ns(void) HIDDEN;
uint64_t __vigil_unix_ns(void) HIDDEN;
/* The tool options part of VIGIL_OPTIONS ("tool.key=value" items), kept by init. */
const char *__vigil_find_tool_option(const char *tool, const char *key) HIDDEN;
/* The next "tool.key=value" item of VIGIL_OPTIONS that no tool has asked for, from *cursor
 * (start at 0); NULL at the end. */
const char *__vigil_unread_tool_option(size_t *cursor) HIDDEN;
/* The keys a tool has asked for so far, comma-separated, into buf. */
void __vigil_tool_keys_asked(const char *tool, char *buf, size_t len) HIDDEN;

/* ---- config.c: reading VIGIL_OPTIONS (the one place the environment is read) ---- */
void __vigil_read_options(struct vigil_options *o) HIDDEN;
int __vigil_option_given(const char *name) HIDDEN;   /* VIGIL_OPTIONS has an item "name=..." */
/* The plan file named by VIGIL_PLAN, or NULL. */
const char *__vigil_plan_path(void) HIDDEN;


/* ---- registry.c: modules ---- */
struct vigil_module_node {
    struct __vigil_module *m;
    struct vigil_sitefmt_table table;   /* read through __vigil_module_table() only */
    int table_state;                    /* registry.c: opened on first use, atomically */
    int unloaded;                       /* its object was dlclose'd: m must not be touched */
    const char *path;                   /* the binary holding the module (copied) */
    int in_main_program;                /* path is the executable's: read it as /proc/self/exe */
    uint64_t tu_hash;                   /* copied from m: still known after an unload */
    uint32_t nsites, base_id;           /* copied from m */
    struct vigil_module_node *next;     /* registration order */
    struct vigil_module_info info;      /* what tools see of it (counters.c) */
};
/* n's site table, opened on first use (opening reads it; a program's tables are many, and
 * all read at start-up they would all be resident: lua's 940 KB). NULL when malformed (said
 * once). Safe from any thread and from signal handlers. */
const struct vigil_sitefmt_table *__vigil_module_table(struct vigil_module_node *n) HIDDEN;
/* ---- counters.c: modules and their per-site counters as tools see them ---- */
/* n->info, filled at registration once n is complete. */
void __vigil_module_info_init(struct vigil_module_node *n) HIDDEN;
/* sitefile.c: a module's site table from its file's "vigil_sites" section (not loaded), mapped
 * on first use. 0 and *t; -1 with a one-line reason in err, or an empty err when the file's
 * trouble was reported before. Safe from signal handlers (no lock, no malloc). */
int __vigil_site_table_from_file(const char *path, uint64_t tu_hash, uint32_t nsites,
                                 struct vigil_sitefmt_table *t, char *err, size_t errlen) HIDDEN;
/* First registered module (acquire load); nodes are never freed. */
struct vigil_module_node *__vigil_modules(void) HIDDEN;
/* Register m if needed; 0 when m is refused (ABI mismatch). */
int __vigil_ensure_registered(struct __vigil_module *m) HIDDEN;
/* In a fork child: release the registration lock. */
void __vigil_registry_after_fork(void) HIDDEN;
/* The calling thread's counters of a registered module m (common/abi.h: 2 * ndispatch entries,
 * the countdowns, then the value each countdown was last set to). */
static inline uint32_t *__vigil_counters_here(const struct __vigil_module *m)
{
    return m->thread_counters ? m->thread_counters() : m->counters;
}
/* Adds the executions the calling thread's countdowns stand for, not yet in the sites' state
 * (check_execs), to it: at its exit, so that they are not lost with its counters (sampler.c). */
void __vigil_counters_fold_thread(void) HIDDEN;
/* The report's view of the other live threads' countdowns (threads of a pool run until the
 * process ends): between _begin (0 when the list is busy: a report from a signal handler that
 * interrupted a thread's start or exit goes without them) and _end, the executions the other
 * threads' countdowns of dispatch site d of m have counted and not yet added. Read only. */
int __vigil_counters_others_begin(void) HIDDEN;
uint64_t __vigil_counters_pending_others(const struct __vigil_module *m, uint32_t d) HIDDEN;
void __vigil_counters_others_end(void) HIDDEN;
/* In a fork child: the parent's other threads are gone (their counts stay the parent's). */
void __vigil_counters_after_fork(void) HIDDEN;
/* After dlclose: mark the modules whose object is gone. */
void __vigil_modules_check_unloaded(void) HIDDEN;

/* ---- tools.c: enabled tools and event delivery ---- */

/* __vigil_active_events (common/abi.h): the OR of the event masks of the enabled tools.
 * Written by __vigil_tools_start (init) and __vigil_tools_fini (exit); read everywhere,
 * inside the runtime through this hidden alias (tools.c). */
extern uint32_t __vigil_events_here HIDDEN;
static inline uint32_t __vigil_wants(uint32_t ev)
{
    return RELAXED_LOAD(&__vigil_events_here) & ev;
}

/* Sampled accesses wait in a per-thread buffer and reach the tools in batches (probes.c,
 * tools.c): the probe then makes no call, and saves no registers for one. The buffer is
 * delivered when full, when a burst ends, before this thread's next allocation, free or exit
 * event, and at the final report. 32 events (512 bytes of TLS): a batch of 32 already takes
 * the per-event cost of a delivery down to a few instructions. */
#define VIGIL_ACCESS_BATCH 32

/* Per-thread runtime state (kept small: it is static TLS even when libvigil.so is dlopened). */
struct vigil_thread {
    int in_runtime;          /* re-entrancy guard: events raised while set are not delivered */
    int exit_reported;       /* VIGIL_THREAD_EXIT already delivered for this thread */
    int in_realloc;          /* set by this thread's realloc hook around its free and alloc events */
    int alloc_kind;          /* enum vigil_alloc_kind of the allocation event being raised (heap_hooks.c) */
    int free_kept;           /* a tool keeps the block of the free event being raised (vigil_free_later) */
    struct vigil_thread *counts_next, *counts_prev;   /* armed threads (sampler.c, under its lock) */
    int counts_fold_armed;   /* this thread's countdowns are folded into the sites' state at
                                its exit (sampler.c; thread-local counters only) */
    void *hook_frame;        /* frame of the hook delivering an event (stack capture starts there) */
    uintptr_t stack_lo, stack_hi;   /* this thread's stack bounds, 0 until first needed */
    uint32_t naccess;        /* buffered accesses (written by this thread only) */
    uint32_t access_flagged; /* an access with VIGIL_ACCESS_* flags was buffered since the last
                                delivery (tools built for tool API < 5 get a copy without them) */
    struct vigil_access access[VIGIL_ACCESS_BATCH];   /* include/vigil/tool.h */
    volatile int deferred_signal;   /* a fatal signal that arrived while in_runtime (signals.c) */
    void *live_stack_from;   /* set by the exit handler once main has returned: the lowest
                                address of this thread's stack that may hold live program data
                                (vigil_report_frame); NULL: the report's own frame */
};
extern __thread struct vigil_thread __vigil_thread HIDDEN;
/* A fatal signal deferred by the handler while this thread was inside the runtime or a tool
 * (whose locks it may hold): the report, then death by that signal (signals.c). */
void __vigil_deferred_fatal(void) HIDDEN __attribute__((noreturn));
/* Leave the runtime: the guard back to `was` (its value on entry); out of it altogether, a
 * fatal signal deferred meanwhile is acted on. */
static inline void __vigil_leave_runtime(struct vigil_thread *th, int was)
{
    th->in_runtime = was;
    if (unlikely(th->deferred_signal) && !was)
        __vigil_deferred_fatal();
}

void __vigil_tools_start(void) HIDDEN;          /* from init: enable and init tools */
uint32_t __vigil_tools_burst_length(void) HIDDEN; /* longest burst the enabled tools asked for; 0: none */
unsigned __vigil_tools_enabled(void) HIDDEN;     /* how many tools are enabled (after __vigil_tools_start) */
int __vigil_tools_need_bursts(void) HIDDEN;      /* some enabled tool needs bursts (tool.h, version 8) */
void __vigil_tools_help(void) HIDDEN;           /* help=1: one line per built-in tool */
void __vigil_tools_fini(void) HIDDEN;
void __vigil_tools_flush(void) HIDDEN;   /* each tool's flush, for a report while running */
/* A module registered (under the registry lock): the enabled tools' on_module hooks. */
void __vigil_tools_module(const struct vigil_module_info *m) HIDDEN;           /* from the final report: stop events, fini */
/* With findings_summary=1: the tools' vigil_tool_summary texts in one SUMMARY line on stderr. */
void __vigil_tools_summary_line(void) HIDDEN;
void __vigil_tools_names(char *buf, size_t len) HIDDEN;   /* "a,b" of running tools */
/* Delivery; callers have checked __vigil_wants() and the guard, and hold the guard. */
void __vigil_deliver_alloc(void *p, size_t size, void *frame) HIDDEN;
void __vigil_deliver_free(void *p) HIDDEN;
void __vigil_deliver_lock(const void *lock, enum vigil_lock_op op) HIDDEN;
void __vigil_deliver_thread(enum vigil_thread_op op, uint64_t id) HIDDEN;
void __vigil_deliver_sync(const void *object, enum vigil_sync_op op) HIDDEN;
/* This thread's buffered accesses to the tools (any caller; takes the guard itself). Inline:
 * most callers (allocation and free hooks) find the buffer empty. */
void __vigil_deliver_buffered(void) HIDDEN;
static inline void __vigil_deliver_accesses(void)
{
    if (__vigil_thread.naccess)
        __vigil_deliver_buffered();
}

/* ---- stack.c ---- */
/* Walk frame pointers from frame (a frame of this thread), with bounds checks; every return
 * address kept lies in an executable segment, after a call. may_refresh: the caller is not in
 * a signal handler and may have the loader's object list re-read (the allocation path). */
uint32_t __vigil_walk_stack(void *frame, uintptr_t *pcs, uint32_t max, int may_refresh) HIDDEN;
/* The executable segments the walk accepts return addresses in, read at start-up. */
void __vigil_text_ranges_init(void) HIDDEN;
/* Around a dlclose (thread_hooks.c): while it runs, the walk reads no code bytes (the object's
 * segment may be unmapped under it); after it, the table is read again. */
void __vigil_text_unload_begin(void) HIDDEN;
void __vigil_text_unload_end(void) HIDDEN;
/* In a fork child: free the table's refresh try-lock (a thread the child lacks may have held
 * it, and the child would never refresh the table). */
void __vigil_text_after_fork(void) HIDDEN;
/* Whether pc is a return address inside the runtime's transfer entry (sampler.c): that frame
 * and the thunk frame before it are vigil's, not the program's. Inline: the walk runs on every
 * sampled allocation. The entry keeps default visibility (instrumented shared libraries call it
 * through the executable); its end label is the runtime's own. */
#if defined(__x86_64__)
extern const char __vigil_call_keeping_registers_x86[];
extern const char __vigil_call_keeping_registers_x86_end[] HIDDEN;
static inline int __vigil_in_transfer_entry(uintptr_t pc)
{
    return pc > (uintptr_t)__vigil_call_keeping_registers_x86 && pc <= (uintptr_t)__vigil_call_keeping_registers_x86_end;
}
#else
static inline int __vigil_in_transfer_entry(uintptr_t pc)
{
    (void)pc;
    return 0;
}
#endif

/* ---- thread_hooks.c ---- */
void __vigil_resolve_real_functions(void) HIDDEN;
/* A synchronization event (tool.h, VIGIL_EV_SYNC) from this thread: delivered unless the thread
 * is inside the runtime; the caller has checked __vigil_wants(VIGIL_EV_SYNC). */
void __vigil_sync_event(const void *object, enum vigil_sync_op op) HIDDEN;
/* signals.c: during a tool signal function, the interrupted stack below its red zone, else NULL. */
void *__vigil_signal_interrupted_stack(void) HIDDEN;

/* ---- report.c ---- */
enum vigil_report_end { VIGIL_END_EXIT, VIGIL_END_SIGNAL, VIGIL_END_FLUSH };
/* Write the report. Final reports (exit, signal) are written once per process and run the
 * tools' fini; a flush is written any number of times and is replaced by the final one. */
int __vigil_write_report(enum vigil_report_end how, int status) HIDDEN;
/* The final report is to be written without the tools' reports (their fini is not called):
 * why, in one line on stderr. From a fatal signal's handler, before __vigil_write_report. */
void __vigil_report_without_tools(const char *why) HIDDEN;
/* Whether this thread is writing a report now. */
int __vigil_report_in_progress(void) HIDDEN;
void __vigil_report_after_fork(void) HIDDEN;

/* ---- process.c / signals.c ---- */
void __vigil_process_start(void) HIDDEN;    /* on_exit, atfork: from init */
void __vigil_signals_install(void) HIDDEN;  /* fatal-signal handlers: from init */
/* Whether the runtime is up and this is the process it started or a fork child of it: a vfork
 * child (or a raw clone) shares the parent's memory and never ran the fork handler, so it
 * must not write anything. */
int __vigil_is_our_process(void) HIDDEN;
/* On the process's main thread, running below main's caller: glibc's __libc_stack_end (the top
 * of main's caller's frames). NULL on any other thread or stack (a signal stack, the child of a
 * fork made by another thread) and without glibc. */
void *__vigil_main_stack_end(void) HIDDEN;

#endif
