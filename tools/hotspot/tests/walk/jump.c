/* longjmp out of hooked functions: thrower (hot, measured) jumps back to catcher's setjmp every
 * 8th call, from inside deep (another function); the exits of the frames it skips never come. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf env;
static volatile long sink;

__attribute__((noinline)) void deep(int k)
{
    if ((k & 7) == 7)
        longjmp(env, k);
}

__attribute__((noinline)) long thrower(int k)
{
    long s = 0;
    for (int i = 0; i < 3000; i++)
        s += (k ^ i) % 13;
    sink = s;
    deep(k);
    return s;
}

__attribute__((noinline)) long catcher(int k)
{
    volatile long s = 0;
    if (setjmp(env) != 0)
        return -1;
    s += thrower(k);
    return s;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 40000;
    long s = 0, jumps = 0;
    for (int i = 0; i < n; i++) {
        long r = catcher(i);
        if (r < 0)
            jumps++;
        else
            s += r;
    }
    printf("%ld %ld\n", s, jumps);
    return 3;
}
