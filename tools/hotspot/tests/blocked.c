/* main blocks every signal but the fatal ones before it starts a worker (a common pattern: the
 * workers inherit the mask, one thread waits for signals), works a little itself, then unblocks
 * them. The worker starts with the profiler's signal blocked: it gets no clock. Main's clock
 * leaves its one expiry pending while blocked, sampled once unblocked. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long spin(unsigned long n)
{
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = (x ^ i) * 6364136223846793005ul;   /* a multiply per iteration, in plain code too */
    return x;
}

static void *worker(void *arg)
{
    (void)arg;
    sink += spin(60000000);
    return NULL;
}

int main(void)
{
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    sink += spin(30000000);
    pthread_join(t, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    sink += spin(30000001);   /* not the same call as above, which the compiler would reuse */
    printf("blocked: done (%lu)\n", sink & 1);
    return 0;
}
