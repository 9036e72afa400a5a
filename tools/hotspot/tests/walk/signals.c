/* Signals: a SIGPROF handler (every 2 ms of CPU time) calls the hot leaf too, on the stack of
 * whatever it interrupted, possibly a measured call of leaf or of its caller; its calls nest
 * above the interrupted ones. Only the main loop's result is printed (the handler's count
 * varies from run to run). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

__attribute__((noinline)) double leaf(double x, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x * i / (i + 1.0);
    return s;
}

static volatile double in_handler;

static void on_prof(int sig)
{
    (void)sig;
    in_handler += leaf(1.5, 200);
}

__attribute__((noinline)) double work(int k)
{
    double s = 0;
    for (int i = 0; i < 4; i++)
        s += leaf(k + i, 1500);
    return s;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 40000;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 2000}, {0, 2000}};
    setitimer(ITIMER_PROF, &it, NULL);
    double s = 0;
    for (int i = 0; i < n; i++)
        s += work(i);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    printf("%.6g\n", s);
    return 0;
}
