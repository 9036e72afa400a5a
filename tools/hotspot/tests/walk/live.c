/* A running program's report: the chain of chain.c (leaf <- from_a <- round_ <- main) computed
 * for a while, then the program waits for its standard input to end before it prints and exits,
 * so that the test reads hotspot.json while it still runs. With "flush" it asks for the report
 * itself (vigil_flush_report, present only in a vigil build) after its work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vigil_flush_report(void) __attribute__((weak));

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
    return leaf(k, 1500);
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
    if (argc > 2 && strcmp(argv[2], "flush") == 0 && vigil_flush_report && vigil_flush_report() != 0)
        return 99;
    int c;
    while ((c = getchar()) != EOF)
        ;
    printf("%.6g\n", s);
    return (int)s & 7;
}
