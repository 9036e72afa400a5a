/* OpenMP: a race in a hot loop, a parallel for of 100000 iterations (20 times) whose body adds
 * to a shared counter without reduction: adaptive sampling must catch both sides (up to 10 runs,
 * the number needed is printed). */
#include <stdio.h>

long hits;

static __attribute__((noinline)) void step(long i)
{
    hits += i & 1; // RACE
}

int main(void)
{
    for (int r = 0; r < 20; r++) {
#pragma omp parallel for num_threads(4)
        for (long i = 0; i < 100000; i++)
            step(i);
    }
    printf("%d\n", hits > 0);
    return 0;
}
