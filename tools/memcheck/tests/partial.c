/* Partial initialization: the first half of an array and some fields of a struct are written;
 * reads of the written parts are silent, reads of the others are reported. */
#include "common.h"

struct cfg { short mode; short level; int limit; long budget; };

__attribute__((noinline)) static int sum_first(const int *a, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += a[i];                    /* written half: silent (a sum is not a use: see below) */
    return s;
}
__attribute__((noinline)) static int count_positive(const int *a, int from, int to)
{
    int n = 0;
    for (int i = from; i < to; i++)
        if (a[i] > 0)                 // MC uninitialized-read
            n++;
    return n;
}
__attribute__((noinline)) static int check(struct cfg *c)
{
    int bad = 0;
    if (c->mode != 2)                 /* written */
        bad++;
    if (c->budget > 100)              // MC uninitialized-read
        bad++;
    return bad;
}

int main(int argc, char **argv)
{
    (void)argv;
    int n = 64 + zero();
    int *a = opaque(malloc(n * sizeof *a));
    for (int i = 0; i < n / 2; i++)
        a[i] = i + argc;
    printf("sum %d\n", sum_first(a, n / 2));
    mc_sink_int = count_positive(a, n / 2, n);
    struct cfg *c = opaque(malloc(sizeof *c));
    c->mode = 2;
    c->level = 1;
    c->limit = 10;                    /* budget: never written */
    mc_sink_int = check(c);
    free(a);
    free(c);
    return 0;
}
