/* An error in a hot loop: every iteration reads one past the end of a block. Adaptive
 * sampling samples the loop less and less often, yet the error is found within 10 runs. */
#include "common.h"

__attribute__((noinline)) static long scan(const int *a, int n, long rounds)
{
    long s = 0;
    for (long r = 0; r < rounds; r++)
        for (int i = 0; i <= n; i++)  /* one too many */
            s += a[i];                // MC heap-buffer-overflow
    return s;
}

int main(void)
{
    int n = 31 + zero();              /* 124 bytes: the slack takes a[31] */
    int *a = opaque(malloc(n * sizeof *a));
    for (int i = 0; i < n; i++)
        a[i] = i;
    long s = scan(a, n, 300000);
    printf("%d\n", s != 0);
    free(a);
    return 0;
}
