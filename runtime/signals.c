/* Fatal signals: write the report, then die of the same signal so that the exit status does
 * not change. A handler is installed only where the program (or its parent) left the default
 * disposition; the program may replace it later. SA_RESETHAND puts the default back on entry,
 * so a second fault (in the report itself, or another Ctrl-C) ends the process at once. */
#include "internal.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

struct vigil_crash __vigil_crash;

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
    sigaction(sig, &dfl, NULL);
    /* Blocked while this handler runs: delivered, with the default action, when it returns
     * (a faulting instruction would also fault again). */
    raise(sig);
    errno = saved;
}

void __vigil_signals_install(void)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(fatal_signals[i], NULL, &old) != 0)
            continue;
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = fatal_handler;
        sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(fatal_signals[i], &sa, NULL);
    }
}
