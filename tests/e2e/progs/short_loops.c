// Loops that vigil-cc proves short (at most 256 iterations per entry) get no back-edge check;
// the others keep theirs (tests/e2e/run.sh, e2e-cmd/short-loops). The checksum depends on
// every iteration.
#include <stdio.h>
#include <stdlib.h>

static const unsigned char widths[] = {0, 1, 2, 3, 4, 6, 8, 0, 0, 0};

/* Short: at most 8 bytes (the bound is a byte from a table, at least 1). */
__attribute__((noinline)) int short_compare(const unsigned char *a, const unsigned char *b, int type)
{
    int res = 0;
    unsigned char n = widths[type];
    for (int i = 0; i < n; i++)
        if ((res = a[i] - b[i]) != 0)
            break;
    return res;
}

/* Short: counts down from a byte. */
__attribute__((noinline)) long short_countdown(unsigned char n, const long *p)
{
    long s = 0;
    while (n--)
        s += p[n] ^ (s >> 3);
    return s;
}

/* Not short: the bound is any long. */
__attribute__((noinline)) long long_sum(long n, const long *p)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += p[i % 300] ^ (s >> 5);
    return s;
}

/* Not short: the counter steps by 3 and `!=` may never meet the byte bound. */
__attribute__((noinline)) long odd_steps(unsigned char n, const long *p)
{
    long s = 0;
    unsigned i = 0;
    while (i != n) {
        s += p[i % 300];
        i += 3;
        if (i > 1000)
            break;
    }
    return s;
}

int main(int argc, char **argv)
{
    (void)argv;
    unsigned char a[16], b[16];
    long p[300];
    for (int i = 0; i < 16; i++)
        a[i] = b[i] = (unsigned char)(i * 7);
    b[5] = 1;
    for (int i = 0; i < 300; i++)
        p[i] = i * 13 + 1;
    long total = 0;
    for (int k = 0; k < 20000; k++)
        total += short_compare(a, b, k % 6 + 1) + short_countdown((unsigned char)k, p) +
                 long_sum(argc + 400 + k % 7, p) + odd_steps((unsigned char)(k * 5), p);
    printf("%ld\n", total);
    return 0;
}
