// Signal handlers that run instrumented code (loops, calls) while the interrupted code is in
// a hot loop, possibly inside a burst; and a thread that runs hot loops at the same time.
// e2e-link: -pthread
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;
static volatile unsigned long handler_work;

static unsigned long collatz_steps(unsigned long n) {
    unsigned long steps = 0;
    while (n != 1) { n = n % 2 ? 3 * n + 1 : n / 2; steps++; }
    return steps;
}

static void on_tick(int sig) {
    (void)sig;
    unsigned long w = 0;
    for (unsigned long i = 1; i < 200; i++) w += collatz_steps(i);
    handler_work = w;
    ticks++;
}

static void *worker(void *arg) {
    unsigned long sum = 0, limit = (unsigned long)arg;
    for (unsigned long i = 1; i < limit; i++) sum += collatz_steps(i) & 7;
    return (void *)sum;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_tick;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval timer = { { 0, 2000 }, { 0, 2000 } };
    setitimer(ITIMER_REAL, &timer, NULL);
    pthread_t thread;
    pthread_create(&thread, NULL, worker, (void *)200000UL);
    unsigned long total = 0;
    for (unsigned long round = 0; ticks < 20; round++) total += collatz_steps(round % 5000 + 1);
    struct itimerval stop = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &stop, NULL);
    void *result;
    pthread_join(thread, &result);
    printf("ticks>=20: %d handler_work=%lu worker=%lu total>0: %d\n", ticks >= 20, handler_work, (unsigned long)result, total > 0);
    return 0;
}
