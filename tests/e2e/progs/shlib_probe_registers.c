// A shared library's probes reached through lazily bound PLT entries: the first call of each
// ran the dynamic linker's resolver, which does not keep r10 and r11, where a preserve_most
// caller may hold values (e2e-cmd/shlib-probe-registers runs it with tools that take every
// probe; the first and second calls must agree).
// e2e-shlib: shlib_probe_registers_lib.c
#include <stdio.h>

long keep_many(const long *p, const long *q, long t, void (*callback)(long));
long keep_many_variadic(const long *p, const long *q, ...);

static void callback(long x)
{
    if (x == 12345)
        puts("never");
}

int main(void)
{
    long p[8] = {1, 2, 3, 4, 5, 6, 7, 8}, q[6] = {9, 10, 11, 12, 13, 14};
    for (int round = 0; round < 2; round++)
        printf("%ld %ld\n", keep_many(p, q, 20, callback), keep_many_variadic(p, q, 1000L));
    return 0;
}
