/* A known call structure: main -> work -> hot_a (about 70% of the CPU time) and
 * main -> work -> hot_b (about 25%), about 1 s of CPU in all. The multiply-add chains, which
 * clang unrolls by 8 and strength-reduces to one multiply per 8 iterations, are also the case
 * of docs/notes/2026-11-28-transfer-reentry.md. */
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long hot_a(unsigned long n)
{
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = x * 6364136223846793005ul + i;
    return x;
}

__attribute__((noinline)) static unsigned long hot_b(unsigned long n)
{
    unsigned long x = 3;
    for (unsigned long i = 0; i < n; i++)
        x = x * 2862933555777941757ul + i;
    return x;
}

__attribute__((noinline)) static void work(unsigned long n)
{
    sink += hot_a(n * 70);
    sink += hot_b(n * 25);
}

int main(void)
{
    for (int r = 0; r < 300; r++)
        work(100000);
    printf("callers: done (%lu)\n", sink & 1);
    return 0;
}
