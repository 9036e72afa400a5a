/* Fatal signals: write the report, then die of the same signal so that the exit status does
 * not change. A handler is installed only where the program (or its parent) left the default
 * disposition; the program may replace it later, and it reads SIG_DFL where ours stands.
 * SA_RESETHAND puts the default back on entry, so a second fault (in the report itself, or
 * another Ctrl-C) ends the process at once. */
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

struct vigil_crash __vigil_crash;

/* glibc's own entry points, under names the program does not define. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
extern __sighandler_t bsd_signal(int sig, __sighandler_t handler);

/* The interrupted PC, for the signals whose PC is the culprit. */
static uintptr_t fault_pc(int sig, void *context)
{
    if (!context || (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE))
        return 0;
    const ucontext_t *uc = context;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

/* The program's own call of abort(), raise() or __assert_fail() (assert): where it called (the
 * return address minus one, inside the call instruction, so that it maps to the call's line),
 * and the signal it raises. Written by the interposers below just before the signal is raised,
 * read by the fatal-signal handler. The glibc functions they forward to are resolved by
 * __vigil_signals_install (NULL before, or in a -static link). */
static struct {
    _Atomic int signo;
    _Atomic uintptr_t pc;
} self_raise;
static void (*real_abort)(void);
static int (*real_raise)(int);
static void (*real_assert_fail)(const char *, const char *, unsigned, const char *);

static void note_self_raise(int sig, void *return_address)
{
    atomic_store_explicit(&self_raise.pc, (uintptr_t)return_address - 1, memory_order_relaxed);
    atomic_store_explicit(&self_raise.signo, sig, memory_order_release);
}

/* The call site of a signal the process sent itself through abort/raise/assert, or 0. */
static uintptr_t self_raised_pc(int sig, const siginfo_t *info)
{
    if (!info || (info->si_code != SI_TKILL && info->si_code != SI_USER) || info->si_pid != getpid() ||
        atomic_load_explicit(&self_raise.signo, memory_order_acquire) != sig)
        return 0;
    return atomic_load_explicit(&self_raise.pc, memory_order_relaxed);
}

static void raise_unresolved(int sig)
{
    syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}

/* sig's default action, unblocked in this thread: the next sig ends the process. */
static void default_action_unblocked(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    __sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
}

INTERPOSE int raise(int sig)
{
    note_self_raise(sig, __builtin_return_address(0));
    int (*fn)(int) = real_raise;
    if (fn)
        return fn(sig);
    raise_unresolved(sig);
    return 0;
}

INTERPOSE __attribute__((noreturn)) void abort(void)
{
    note_self_raise(SIGABRT, __builtin_return_address(0));
    void (*fn)(void) = real_abort;
    if (fn)
        fn();
    /* No glibc abort to forward to: its essentials (the default action if the handler returns). */
    raise_unresolved(SIGABRT);
    default_action_unblocked(SIGABRT);
    raise_unresolved(SIGABRT);
    _exit(128 + SIGABRT);
}

/* assert(): the crash site is the failing assertion's call, whose line is the assert's. */
INTERPOSE __attribute__((noreturn)) void __assert_fail(const char *assertion, const char *file, unsigned line,
                                                     const char *function)
{
    note_self_raise(SIGABRT, __builtin_return_address(0));
    void (*fn)(const char *, const char *, unsigned, const char *) = real_assert_fail;
    if (fn)
        fn(assertion, file, line, function);
    char text[1024];
    int n = snprintf(text, sizeof text, "%s: %u: %s: Assertion `%s' failed.\n", file, line,
                     function ? function : "?", assertion);
    ssize_t ignored = write(2, text, n > 0 && (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
    (void)ignored;
    abort();
}

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
                                    SIGTERM, SIGINT, SIGHUP, SIGPIPE};

/* The C library's code: [lo, hi), found by __vigil_signals_install (written once, then read
 * by the handler). */
static uintptr_t libc_text_lo, libc_text_hi;
extern void *__libc_malloc(size_t);

static int find_libc_text(struct dl_phdr_info *info, size_t size, void *unused)
{
    (void)size, (void)unused;
    uintptr_t probe = (uintptr_t)&__libc_malloc;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && probe >= lo && probe < lo + ph->p_memsz) {
            libc_text_lo = lo;
            libc_text_hi = lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

/* Why the tools must not write their reports from this handler, or NULL. They allocate and
 * use stdio: a signal that interrupted this thread inside the runtime, or inside the C library
 * (malloc holding its arena lock, as SIGTERM found a threaded program), would make them wait
 * for a lock this thread holds, for ever. A thread blocked in a system call (a server in
 * accept, a filter in read) is let through, the common case of Ctrl-C: the kernel shows it
 * with the PC back on the `syscall` instruction (to restart it: our handler is SA_RESTART), or
 * just after it with -EINTR. Just after it with a result is a call that completed, malloc's
 * mmap or brk among them: not let through, except calls that delivered the signal
 * themselves: a write that failed with EPIPE (SIGPIPE: `prog | head`), tgkill (raise, abort,
 * assert) and rt_sigprocmask (a pending signal unblocked: diff re-raises SIGPIPE that way),
 * recognised by the `mov $nr, %eax` before the `syscall`. glibc's
 * malloc aborts on a corrupted heap holding its arena lock: that report then waits for the
 * watchdog (10 s) and ends without the tools, as before. */
#if defined(__x86_64__)
static int raised_by_completed_call(const unsigned char *after_syscall, greg_t result)
{
    if (result == -EPIPE)
        return 1;
    if (result != 0 || (uintptr_t)after_syscall < libc_text_lo + 7 || after_syscall[-7] != 0xb8 ||
        after_syscall[-4] != 0 || after_syscall[-3] != 0)
        return 0;
    unsigned nr = after_syscall[-6] | (unsigned)after_syscall[-5] << 8;
    return nr == SYS_tgkill || nr == SYS_rt_sigprocmask;
}
#endif

static const char *tools_unsafe(void *context)
{
    if (__vigil_thread.in_runtime)
        return "the signal interrupted vigil itself";
#if defined(__x86_64__)
    if (!context)
        return NULL;
    const greg_t *regs = ((const ucontext_t *)context)->uc_mcontext.gregs;
    uintptr_t pc = (uintptr_t)regs[REG_RIP];
    if (pc < libc_text_lo + 2 || pc + 2 > libc_text_hi)
        return NULL;
    const unsigned char *code = (const unsigned char *)pc;
    if (code[0] == 0x0f && code[1] == 0x05)
        return NULL;
    if (code[-2] == 0x0f && code[-1] == 0x05 &&
        (regs[REG_RAX] == -EINTR || raised_by_completed_call(code, regs[REG_RAX])))
        return NULL;
    return "the signal interrupted the C library, whose locks this thread may hold";
#else
    (void)context;
    return NULL;
#endif
}

/* The fatal signal being reported (report_watchdog), 0 before. */
static volatile sig_atomic_t reporting_signal;
#define REPORT_WATCHDOG_SECONDS 10

/* The report for a fatal signal did not end in time (a lock another part of the program holds
 * while it waits for this thread): die of the signal as the program would have, without it. */
static void report_watchdog(int unused)
{
    (void)unused;
    int sig = reporting_signal;
    static const char msg[] = "vigil: the report did not end within 10 s of the fatal signal: not written\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    default_action_unblocked(sig);
    kill(getpid(), sig);
}

/* The program is dying: its SIGALRM (and alarm) no longer matter. */
static void arm_report_watchdog(int sig)
{
    reporting_signal = sig;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = report_watchdog;
    sigemptyset(&sa.sa_mask);
    __sigaction(SIGALRM, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    alarm(REPORT_WATCHDOG_SECONDS);
}

/* The report for fatal signal sig (context: the interrupted state, NULL when deferred). */
static void report_fatal(int sig, void *context)
{
    if (!__vigil_is_our_process())
        return;
    const char *unsafe = tools_unsafe(context);
    if (unsafe)
        __vigil_report_without_tools(unsafe);
    arm_report_watchdog(sig);
    __vigil_write_report(VIGIL_END_SIGNAL, sig);
    alarm(0);
}

/* A signal sent to the process (kill, Ctrl-C, a timer), not raised by the instruction that
 * was running: it can wait until the thread leaves the runtime. */
static int is_asynchronous(int sig, const siginfo_t *info)
{
    return (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) && (!info || info->si_code <= 0 ||
                                                                  info->si_code == SI_KERNEL);
}

void __vigil_deferred_fatal(void)
{
    struct vigil_thread *th = &__vigil_thread;
    int sig = th->deferred_signal;
    th->deferred_signal = 0;
    report_fatal(sig, NULL);
    default_action_unblocked(sig);
    for (;;)
        raise(sig);
}

static void fatal_handler(int sig, siginfo_t *info, void *context)
{
    int saved = errno;
    uintptr_t pc = fault_pc(sig, context);
    if (!pc)
        pc = self_raised_pc(sig, info);
    if (pc) {
        __vigil_crash.pc = pc;
        __vigil_crash.signo = sig;
    }
    /* Inside a tool's hook (a shard lock held, say): act when the hook returns, so that the
     * tools can still write their reports. Not inside the report itself: it ends as before. */
    struct vigil_thread *th = &__vigil_thread;
    if (th->in_runtime && is_asynchronous(sig, info) && !th->deferred_signal && !__vigil_report_in_progress()) {
        th->deferred_signal = sig;
        errno = saved;
        return;
    }
    report_fatal(sig, context);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    __sigaction(sig, &dfl, NULL);
    /* Blocked while this handler runs: delivered, with the default action, when it returns
     * (a faulting instruction would also fault again). */
    raise(sig);
    errno = saved;
}

/* Tools' signals (vigil_on_signal): sig -> the tool's function. Written by the tools' init,
 * read by tool_signal_handler and the sigaction interposers. */
static void (*_Atomic tool_signal_fn[NSIG])(int);

/* The interrupted state while a tool's signal function runs (vigil_signal_report), else NULL.
 * Written by tool_signal_handler on its own thread. */
static __thread void *tool_signal_context;
static __thread int in_tool_signal;

/* A signal a tool asked for: its function, unless the process sent it to itself (the program
 * raising a signal it left at its default expects the default action). */
static void tool_signal_handler(int sig, siginfo_t *info, void *context)
{
    int saved = errno;
    void (*fn)(int) = atomic_load_explicit(&tool_signal_fn[sig], memory_order_relaxed);
    int self_sent = info && (info->si_code == SI_USER || info->si_code == SI_TKILL) && info->si_pid == getpid();
    if (fn && !self_sent) {
        void *outer = tool_signal_context;
        int outer_in = in_tool_signal;
        tool_signal_context = context;
        in_tool_signal = 1;
        fn(sig);
        tool_signal_context = outer;
        in_tool_signal = outer_in;
        errno = saved;
        return;
    }
    int default_ends = sig != SIGCHLD && sig != SIGURG && sig != SIGWINCH && sig != SIGCONT &&
                       sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU;
    if (default_ends)
        report_fatal(sig, context);
    struct sigaction ours;
    __sigaction(sig, NULL, &ours);
    default_action_unblocked(sig);
    raise(sig);
    __sigaction(sig, &ours, NULL);   /* a default that ignores the signal: back to standing in */
    errno = saved;
}

static int is_fatal(int sig)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        if (fatal_signals[i] == sig)
            return 1;
    return 0;
}

static int is_default(const struct sigaction *sa)
{
    return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_DFL;
}

static int is_tools(int sig)
{
    return sig > 0 && sig < NSIG && atomic_load_explicit(&tool_signal_fn[sig], memory_order_relaxed);
}

/* The disposition that stands in for SIG_DFL on sig: the fatal handler (reset on entry, so that
 * a second fault ends the process), a tool's handler, or none (0). */
static int standing_in(int sig, struct sigaction *sa)
{
    memset(sa, 0, sizeof *sa);
    sigemptyset(&sa->sa_mask);
    if (is_fatal(sig)) {
        sa->sa_sigaction = fatal_handler;
        sa->sa_flags = SA_SIGINFO | SA_RESETHAND | SA_RESTART;
        return 1;
    }
    if (is_tools(sig)) {
        sa->sa_sigaction = tool_signal_handler;
        sa->sa_flags = SA_SIGINFO | SA_RESTART;
        return 1;
    }
    return 0;
}

static int is_our_handler(void (*handler)(int, siginfo_t *, void *))
{
    return handler == fatal_handler || handler == tool_signal_handler;
}

void __vigil_signals_install(void)
{
    dl_iterate_phdr(find_libc_text, NULL);
    real_abort = (void (*)(void))dlsym(RTLD_NEXT, "abort");
    real_raise = (int (*)(int))dlsym(RTLD_NEXT, "raise");
    real_assert_fail = (void (*)(const char *, const char *, unsigned, const char *))dlsym(RTLD_NEXT, "__assert_fail");
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        struct sigaction old, sa;
        if (__sigaction(fatal_signals[i], NULL, &old) != 0 || !is_default(&old))
            continue;
        standing_in(fatal_signals[i], &sa);
        __sigaction(fatal_signals[i], &sa, NULL);
    }
}

/* The program sees the disposition it would have without vigil: where the runtime's handler
 * stands in for the default, a query answers SIG_DFL, and setting SIG_DFL puts the handler back
 * (it ends the process as the default would, after the report). Interpreters install their
 * SIGINT handler only over SIG_DFL (an inherited SIG_IGN means "run in the background"), so a
 * handler of ours that showed through would change what Ctrl-C does. */
static int is_ours(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) && is_our_handler(sa->sa_sigaction);
}

/* While a tool's signal function runs on this thread: where the interrupted code's stack ends,
 * below its red zone (x86-64: 128 bytes a leaf may use under its stack pointer), and its general
 * registers. Below that lies the kernel's signal frame, whose saved vector registers hold
 * whatever the code left there last (stale heap addresses a leak scan must not count), then the
 * handlers' frames. NULL and 0 elsewhere. */
void *__vigil_signal_interrupted_stack(void)
{
#if defined(__x86_64__)
    if (in_tool_signal && tool_signal_context)
        return (void *)((uintptr_t)((const ucontext_t *)tool_signal_context)->uc_mcontext.gregs[REG_RSP] - 128);
#endif
    return NULL;
}

size_t vigil_report_registers(uintptr_t *out, size_t max)
{
#if defined(__x86_64__)
    if (!__vigil_report_in_progress() || !in_tool_signal || !tool_signal_context)
        return 0;
    const greg_t *regs = ((const ucontext_t *)tool_signal_context)->uc_mcontext.gregs;
    size_t n = 0;
    for (int r = REG_R8; r <= REG_RCX && n < max; r++)   /* r8-r15, rdi, rsi, rbp, rbx, rdx, rax, rcx */
        out[n++] = (uintptr_t)regs[r];
    if (n < max)
        out[n++] = (uintptr_t)regs[REG_RSP];
    return n;
#else
    (void)out, (void)max;
    return 0;
#endif
}

int vigil_signal_report(void)
{
    if (!__vigil_is_our_process())
        return -1;
    if (in_tool_signal && tools_unsafe(tool_signal_context))
        return 0;
    return __vigil_write_report(VIGIL_END_FLUSH, 0) == 0 ? 1 : -1;
}

int vigil_on_signal(int sig, void (*fn)(int))
{
    struct sigaction old, ours;
    if (sig <= 0 || sig >= NSIG || is_fatal(sig) || !fn || __sigaction(sig, NULL, &old) != 0 || !is_default(&old))
        return -1;
    atomic_store_explicit(&tool_signal_fn[sig], fn, memory_order_relaxed);
    standing_in(sig, &ours);
    return __sigaction(sig, &ours, NULL);
}

/* sigaction as the program sees it (both interposers below go through it). */
static int program_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    struct sigaction ours;
    if (act && is_default(act) && standing_in(sig, &ours))
        act = &ours;
    int r = __sigaction(sig, act, old);
    if (r == 0 && old && is_ours(old)) {
        memset(old, 0, sizeof *old);
        old->sa_handler = SIG_DFL;
    }
    return r;
}

INTERPOSE int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    return program_sigaction(sig, act, old);
}

/* signal() in its two flavours: a handler replaced through `install` (glibc's own, for its flags
 * and mask), SIG_DFL on a fatal signal through program_sigaction. */
static __sighandler_t program_signal(int sig, __sighandler_t handler, __sighandler_t (*install)(int, __sighandler_t))
{
    struct sigaction ours;
    if (handler == SIG_DFL && standing_in(sig, &ours)) {
        struct sigaction dfl, was;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        if (program_sigaction(sig, &dfl, &was) != 0)
            return SIG_ERR;
        return (was.sa_flags & SA_SIGINFO) ? (__sighandler_t)(void *)was.sa_sigaction : was.sa_handler;
    }
    __sighandler_t old = install(sig, handler);
    return is_our_handler((void (*)(int, siginfo_t *, void *))(void *)old) ? SIG_DFL : old;
}

/* System V semantics (one-shot, not masked while it runs, no restart), as glibc's __sysv_signal
 * sets them: both of its names are interposed, so the real one cannot be called by name. */
static __sighandler_t sysv_install(int sig, __sighandler_t handler)
{
    struct sigaction sa, old;
    if (handler == SIG_ERR || sig <= 0 || sig >= NSIG) {
        errno = EINVAL;
        return SIG_ERR;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    if (__sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (__sighandler_t)(void *)old.sa_sigaction : old.sa_handler;
}

INTERPOSE __sighandler_t signal(int sig, __sighandler_t handler)
{
    return program_signal(sig, handler, bsd_signal);
}

/* A program built without _DEFAULT_SOURCE (-std=c11) calls __sysv_signal for signal(). */
INTERPOSE __sighandler_t __sysv_signal(int sig, __sighandler_t handler)
{
    return program_signal(sig, handler, sysv_install);
}

INTERPOSE __sighandler_t sysv_signal(int sig, __sighandler_t handler)
{
    return program_signal(sig, handler, sysv_install);
}
