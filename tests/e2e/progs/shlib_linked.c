// A program linked normally against a shared library built with the same compiler.
// e2e-shlib: shlib_math.c
#include <stdio.h>

long gcd(long a, long b);
long count_primes(int limit);
extern const char shlib_version[];

int main(void) {
    long g = 0;
    for (long i = 1; i < 300; i++) g += gcd(i * 84, 36 * (i % 17 + 1));
    printf("gcd sum=%ld primes=%ld version=%s\n", g, count_primes(20000), shlib_version);
    return 0;
}
