/* Linked with sig_early_lib.so, whose constructor took SIGRTMIN+3 before vigil started: the
 * profiler must say once that it does not sample, and the program run as without it. */
#include <signal.h>
#include <stdio.h>

extern volatile sig_atomic_t sig_early_calls;
static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long spin(unsigned long n)
{
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = x * 6364136223846793005ul + i;
    return x;
}

int main(void)
{
    raise(SIGRTMIN + 3);
    sink += spin(100000000);
    printf("sig_early: the library's handler ran %d time(s)\n", (int)sig_early_calls);
    return 0;
}
