/* A hot leaf: main -> work -> mix, mix a few instructions called 300 million times from work's
 * loop. Built with VIGIL_CC_FRAME_POINTERS=nonleaf, mix sets up no frame: a sample in it finds
 * work's frame in the frame register, and its caller only at the stack pointer. */
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long mix(unsigned long x)
{
    return (x * 0x9E3779B97F4A7C15ul) ^ (x >> 29);
}

__attribute__((noinline)) static void work(unsigned long n)
{
    unsigned long h = 0;
    for (unsigned long i = 0; i < n; i++)
        h += mix(h + i);
    sink = h;
}

int main(void)
{
    for (int r = 0; r < 100; r++)
        work(3000000);
    printf("leaf: done (%lu)\n", sink & 1);
    return 0;
}
