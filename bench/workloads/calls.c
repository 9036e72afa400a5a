/* bench/hotspot.sh's per-call cost of the walker: main -> loop -> work, work called N times
 * (argv[1], 20000000), each call a few nanoseconds of arithmetic in a loop of 8 (so that vigil-cc
 * gives work a patchable entry). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) unsigned work(unsigned x)
{
    for (int i = 0; i < 8; i++)
        x = x * 2654435761u + (unsigned)i;
    return x;
}

__attribute__((noinline)) unsigned loop(long n)
{
    unsigned s = 1;
    for (long i = 0; i < n; i++)
        s = work(s) + (unsigned)i;
    return s;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000000;
    printf("%u\n", loop(n));
    return 0;
}
