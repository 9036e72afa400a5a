/* Recursion: rec (recursive, the hot spot) is called by itself and by outer; outer by main. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long rec(long n)
{
    if (n < 2) {
        long s = 0;
        for (int i = 0; i < 40; i++)
            s += (n + i) * i % 7;
        return s;
    }
    return rec(n - 1) + rec(n - 2) + (n & 3);
}

__attribute__((noinline)) long outer(int k)
{
    long s = 0;
    for (int i = 0; i < 2; i++)
        s += rec(12 + (k + i) % 3);
    return s;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3000;
    long s = 0;
    for (int i = 0; i < n; i++)
        s += outer(i);
    printf("%ld\n", s);
    return 0;
}
