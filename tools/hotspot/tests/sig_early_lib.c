/* Built with plain clang as a shared library: its constructor runs before vigil's start-up
 * and installs a handler for SIGRTMIN+3, the profiler's signal. */
#include <signal.h>
#include <string.h>

volatile sig_atomic_t sig_early_calls;

static void handler(int sig)
{
    (void)sig;
    sig_early_calls++;
}

__attribute__((constructor)) static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGRTMIN + 3, &sa, NULL);
}
