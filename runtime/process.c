/* The process's life: the exit handler that writes the final report, the _exit/_Exit paths
 * that skip exit handlers, fork children (their own identity and report), and the public
 * vigil_flush_report. */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vigil/vigil.h"

/* getpid without a call through the PLT. A libc function's first call binds it lazily, some
 * microseconds, and _exit runs this first: in the plain build _exit ends every thread at once,
 * so the sooner this thread claims the final report, the less other threads run meanwhile
 * (pigz's worker saw the SIGINT handler's cleanup and called _exit with its own status). */
static pid_t current_pid(void)
{
#if defined(__x86_64__)
    long pid;
    __asm__ volatile("syscall" : "=a"(pid) : "0"((long)SYS_getpid) : "rcx", "r11", "memory");
    return (pid_t)pid;
#else
    return getpid();
#endif
}

int __vigil_is_our_process(void)
{
    return __vigil_is_ready() && current_pid() == __vigil_proc.pid;
}

/* common/abi.h: counted by main's own code (vigil-cc), 0 when main was not built by it. */
int32_t __vigil_main_active, __vigil_main_returned;
extern void *__libc_stack_end __attribute__((weak));   /* glibc: main's caller's frames end here */

void *__vigil_main_stack_end(void)
{
    if (!&__libc_stack_end || !__libc_stack_end || (pid_t)syscall(SYS_gettid) != current_pid() ||
        (uintptr_t)__libc_stack_end <= (uintptr_t)__builtin_frame_address(0))
        return NULL;
    return __libc_stack_end;
}

/* on_exit (not atexit): it receives the status given to exit() or returned by main. Registered
 * at start-up, before anything the program registers, so it runs after all of those. When main
 * has returned, the frames of this thread below __libc_stack_end are then exit's and ours: the
 * program's data there is dead, and a conservative scan must not take it for roots (a lost
 * list's node left in a slot of exit's frame looked reachable). */
static void exit_handler(int status, void *unused)
{
    (void)unused;
    if (!__vigil_is_our_process())
        return;
    struct vigil_thread *th = &__vigil_thread;
    if (__atomic_load_n(&__vigil_main_returned, __ATOMIC_RELAXED) &&
        __atomic_load_n(&__vigil_main_active, __ATOMIC_RELAXED) == 0)
        th->live_stack_from = __vigil_main_stack_end();
    __vigil_write_report(VIGIL_END_EXIT, status);
    th->live_stack_from = NULL;
}

static void reset_site_counts(void)
{
    /* The parent's executions stay in the parent's report: make every check count from zero
     * here, keeping its schedule (level, resets, countdown). */
    for (struct vigil_module_node *n = __vigil_modules(); n; n = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE)) {
        if (n->unloaded)
            continue;
        struct __vigil_module *m = n->m;
        const uint32_t *counters = __vigil_counters_here(m);   /* the forking thread's: the child's */
        for (uint32_t i = 0; i < m->ndispatch; i++) {
            struct __vigil_site_state *st = &m->state[i];
            uint64_t pending = vigil_schedule_pending(counters[m->ndispatch + i], counters[i]);
            st->instr_execs = 0;
            st->bursts = 0;
            st->check_execs = (uint64_t)0 - pending;   /* cancels the pending countdown (mod 2^64) */
        }
    }
}

static void fork_child(void)
{
    struct vigil_process *p = &__vigil_proc;
    p->pid = getpid();
    p->ppid = getppid();
    p->start_mono_ns = __vigil_mono_ns();
    p->start_unix_ns = __vigil_unix_ns();
    __vigil_report_after_fork();
    __vigil_registry_after_fork();
    __vigil_counters_after_fork();
    __vigil_text_after_fork();
    reset_site_counts();
    struct vigil_thread *th = &__vigil_thread;
    if (__vigil_wants(VIGIL_EV_THREAD) && !th->in_runtime) {
        th->in_runtime = 1;
        __vigil_deliver_thread(VIGIL_THREAD_FORK_CHILD, (uint64_t)pthread_self());
        __vigil_leave_runtime(th, 0);
    }
}

void __vigil_process_start(void)
{
    if (on_exit(exit_handler, NULL) != 0)
        __vigil_message("cannot register the exit handler: no report at exit");
    pthread_atfork(NULL, NULL, fork_child);
}

/* _exit and _Exit skip the exit handlers: write the report here, then end the process as
 * glibc does. */
__attribute__((noreturn)) static void exit_now(int status)
{
    if (__vigil_is_our_process())
        __vigil_write_report(VIGIL_END_EXIT, status);
    for (;;)
        syscall(SYS_exit_group, status);
}

INTERPOSE void _exit(int status)
{
    exit_now(status);
}

INTERPOSE void _Exit(int status)
{
    exit_now(status);
}

int vigil_flush_report(void)
{
    return __vigil_write_report(VIGIL_END_FLUSH, 0);
}
