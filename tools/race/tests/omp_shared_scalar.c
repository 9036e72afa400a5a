/* OpenMP: a parallel for that adds to a shared scalar without reduction, atomic or critical:
 * racy. Then the same loop with reduction, read after the region: safe. */
#include <stdio.h>

int total;

/* Out of line, so that the optimizer cannot keep total in a register across the loop (its load
 * would then sit before the loop, where it has no line). */
static __attribute__((noinline)) void add(int i)
{
    total += i;   // RACE
}

int main(void)
{
#pragma omp parallel for num_threads(4)
    for (int i = 0; i < 16; i++)
        add(i);
    int sum = 0;
#pragma omp parallel for num_threads(4) reduction(+ : sum)
    for (int i = 0; i < 16; i++)
        sum += i;
    printf("sum %d\n", sum);
    return total < 0;
}
