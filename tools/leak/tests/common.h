/* Shared by the leak test programs: a busy clock (the programs keep working so that sampling
 * has something to sample) and a sink the optimizer cannot see through. */
#ifndef LEAK_TEST_COMMON_H
#define LEAK_TEST_COMMON_H
#include <time.h>

static inline double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

volatile unsigned long leak_test_sink;

/* Unrelated hot work: a loop that touches only the stack. */
static __attribute__((noinline)) void busy_work(int rounds)
{
    unsigned long x = 1;
    for (int i = 0; i < rounds; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    leak_test_sink += x;
}
#endif
