// Functions with loops that never return (LLVM infers `noreturn` on main here, as on gawk's
// main and make's die): their instrumented copy does return to them when a burst ends at a
// back-edge, so neither it nor its transfer stub may keep `noreturn`.
#include <stdio.h>
#include <stdlib.h>

volatile int sink;

__attribute__((noreturn, noinline)) static void die(const char *why, int status)
{
    int n = 0;
    for (const char *p = why; *p; p++)
        n += *p == ' ';
    fprintf(stderr, "fatal: %s (%d spaces)\n", why, n);
    fflush(stdout);
    exit(status);
}

__attribute__((noreturn, noinline)) static void finish(long sum)
{
    for (int i = 0; i < 3; i++)
        printf("sum/%d = %ld\n", i + 1, sum / (i + 1));
    if (sum % 7 == 3)
        die("sum is three mod seven", 5);
    exit(0);
}

int main(int argc, char **argv)
{
    (void)argv;
    long sum = 0;
    for (int i = 0; i < 200000; i++) {
        sum += (long)i * argc;
        sink = i;
    }
    printf("sum=%ld\n", sum);
    if (argc > 3)
        die("too many arguments", 2);
    finish(sum + (sum % 7 == 3 ? 0 : 3 - sum % 7 + (sum % 7 > 3 ? 7 : 0)));
}
