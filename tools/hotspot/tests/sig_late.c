/* The program installs its own handler for the profiler's signal (SIGRTMIN+3) in main, after
 * vigil's start-up, raises it once, then works a little and starts a thread. The profiler must
 * step back (one message) and the program run as without it. The handler's count goes to
 * stderr: the tests compare it with what the tool promises (at most one signal of a clock that
 * was armed when the program took the signal over, per thread). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t calls;
static volatile unsigned long sink;

static void handler(int sig)
{
    (void)sig;
    calls++;
}

__attribute__((noinline)) static unsigned long spin(unsigned long n)
{
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = x * 6364136223846793005ul + i;
    return x;
}

static void *worker(void *arg)
{
    (void)arg;
    sink += spin(20000000);
    return NULL;
}

int main(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGRTMIN + 3, &sa, &old) != 0)
        return 2;
    raise(SIGRTMIN + 3);
    sink += spin(100000000);
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 3;
    pthread_join(t, NULL);
    printf("sig_late: own handler installed, raised once, handler ran at least once: %s\n", calls >= 1 ? "yes" : "no");
    fprintf(stderr, "sig_late: handler calls %d\n", (int)calls);
    return 0;
}
