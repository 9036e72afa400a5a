/* Calls libhot.so's lib_work from app_loop (the executable): the chain crosses modules. */
#include <stdio.h>
#include <stdlib.h>

double lib_work(int k);

__attribute__((noinline)) double app_loop(int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += lib_work(i);
    return s;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 600;
    double s = 0;
    for (int r = 0; r < rounds; r++)
        s += app_loop(10);
    printf("%.6g\n", s);
    return 0;
}
