// What a program reads of its signal dispositions must not change under vigil: the runtime's
// report-writing handler stands in for SIG_DFL, and sigaction() and signal() must say SIG_DFL
// there (an interpreter installs its SIGINT handler only over SIG_DFL). Also: a handler the
// program installs reads back as its own, and the default it restores still ends the process.
// sysv_signal() is what signal() calls in a program built without _DEFAULT_SOURCE (-std=c11).
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>

static void on_signal(int sig) { (void)sig; }

static const char *name_of(void (*h)(int))
{
    return h == SIG_DFL ? "SIG_DFL" : h == SIG_IGN ? "SIG_IGN" : h == on_signal ? "on_signal" : "another handler";
}

int main(void)
{
    const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGINT, SIGHUP, SIGUSR1};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        memset(&old, 0xff, sizeof old);
        if (sigaction(sigs[i], NULL, &old) != 0)
            return 2;
        const char *by_sigaction = (old.sa_flags & SA_SIGINFO) ? "a siginfo handler" : name_of(old.sa_handler);
        void (*was)(int) = signal(sigs[i], on_signal);
        void (*now)(int) = signal(sigs[i], was);
        void (*sysv_was)(int) = sysv_signal(sigs[i], on_signal);
        void (*sysv_now)(int) = sysv_signal(sigs[i], sysv_was);
        printf("%d: sigaction %s (flags %#x), signal %s, then %s; sysv_signal %s, then %s\n", sigs[i],
               by_sigaction, (unsigned)old.sa_flags, name_of(was), name_of(now), name_of(sysv_was),
               name_of(sysv_now));
    }
    fflush(stdout);
    signal(SIGTERM, SIG_DFL);
    raise(SIGTERM);
    return 1;
}
