// The shared library linked by shlib_linked.c (not a program on its own).
const char shlib_version[] = "1.2";

long gcd(long a, long b) {
    while (b != 0) { long t = a % b; a = b; b = t; }
    return a;
}

long count_primes(int limit) {
    long count = 0;
    for (int n = 2; n < limit; n++) {
        int prime = 1;
        for (int d = 2; d * d <= n; d++)
            if (n % d == 0) { prime = 0; break; }
        count += prime;
    }
    return count;
}
