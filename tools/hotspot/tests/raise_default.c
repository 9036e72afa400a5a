/* The program raises SIGRTMIN+3 (the profiler's signal) at its default disposition: it must
 * die of it, as without vigil. */
#include <signal.h>
#include <stdio.h>

static volatile unsigned long sink;

int main(void)
{
    for (unsigned long i = 0; i < 30000000; i++)
        sink += i;
    printf("raise_default: raising\n");
    fflush(stdout);
    raise(SIGRTMIN + 3);
    printf("raise_default: still alive\n");
    return 0;
}
