/* The walk's known chain: main -> round -> from_a (3 calls of leaf) / from_b (1 call of leaf);
 * leaf is the hot spot, from_a makes 75% of its calls, round calls from_a, main calls round. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) double leaf(double x, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x * i / (i + 1.0);
    return s;
}

__attribute__((noinline)) double from_a(int k)
{
    double s = 0;
    for (int i = 0; i < 3; i++)
        s += leaf(k + i, 1500);
    return s;
}

__attribute__((noinline)) double from_b(int k)
{
    double s = 0;
    for (int i = 0; i < 1; i++)
        s += leaf(k - i, 1500);
    return s;
}

__attribute__((noinline)) double round_(int r, int inner)
{
    double s = 0;
    for (int i = 0; i < inner; i++)
        s += from_a(r + i) + from_b(r - i);
    return s;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 6000;
    double s = 0;
    for (int r = 0; r < rounds; r++)
        s += round_(r, 10);
    printf("%.6g\n", s);
    return (int)s & 7;
}
