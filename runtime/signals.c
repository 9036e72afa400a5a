/* Fatal signals: write the report, then die of the same signal so that the exit status does
 * not change. A handler is installed only where the program (or its parent) left the default
 * disposition; the program may replace it later, and it reads SIG_DFL where ours stands.
 * SA_RESETHAND puts the default back on entry, so a second fault (in the report itself, or
 * another Ctrl-C) ends the process at once. */
#include "internal.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
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

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
                                    SIGTERM, SIGINT, SIGHUP};

static void fatal_handler(int sig, siginfo_t *info, void *context)
{
    (void)info;
    int saved = errno;
    uintptr_t pc = fault_pc(sig, context);
    if (pc) {
        __vigil_crash.pc = pc;
        __vigil_crash.signo = sig;
    }
    if (__vigil_is_ready() && getpid() == __vigil_proc.pid)
        __vigil_write_report(VIGIL_END_SIGNAL, sig);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    __sigaction(sig, &dfl, NULL);
    /* Blocked while this handler runs: delivered, with the default action, when it returns
     * (a faulting instruction would also fault again). */
    raise(sig);
    errno = saved;
}

/* The disposition that stands in for SIG_DFL on a fatal signal. */
static void standing_in(struct sigaction *sa)
{
    memset(sa, 0, sizeof *sa);
    sa->sa_sigaction = fatal_handler;
    sa->sa_flags = SA_SIGINFO | SA_RESETHAND | SA_RESTART;
    sigemptyset(&sa->sa_mask);
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

void __vigil_signals_install(void)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        struct sigaction old, sa;
        if (__sigaction(fatal_signals[i], NULL, &old) != 0 || !is_default(&old))
            continue;
        standing_in(&sa);
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
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == fatal_handler;
}

/* sigaction as the program sees it (both interposers below go through it). */
static int program_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    struct sigaction ours;
    if (act && is_default(act) && is_fatal(sig)) {
        standing_in(&ours);
        act = &ours;
    }
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
    if (handler == SIG_DFL && is_fatal(sig)) {
        struct sigaction dfl, was;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        if (program_sigaction(sig, &dfl, &was) != 0)
            return SIG_ERR;
        return (was.sa_flags & SA_SIGINFO) ? (__sighandler_t)(void *)was.sa_sigaction : was.sa_handler;
    }
    __sighandler_t old = install(sig, handler);
    return old == (__sighandler_t)(void *)fatal_handler ? SIG_DFL : old;
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
