// Counted loops (compiler/loops.c): innermost call-free loops whose trip count is known where
// they are entered run without back-edge checks when the countdown holds the whole trip. Their
// sites must count every back-edge all the same, a loop of a rarely called function must stay
// sampled at 100% and a hot one must fall to the floor: hot_down runs n / 2 iterations per call
// (n even), n / 2 - 1 back-edges, 40,000 calls: 19,960,000 back-edges with n = 1000. The LINE
// markers are read by tests/e2e/report_check.py.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static unsigned rare_sum(const unsigned char *p, unsigned long n) { /* LINE:rare_sum */
    unsigned s = 0;
    for (unsigned long i = 0; i < n; i++)
        s += p[i] * 3u;
    return s;
}

__attribute__((noinline)) static unsigned hot_sum(const unsigned char *p, unsigned long n) { /* LINE:hot_sum */
    unsigned s = 0;
    for (unsigned long i = 0; i < n; i++)
        s += p[i] ^ 5u;
    return s;
}

__attribute__((noinline)) static long hot_down(const int *a, int n) { /* LINE:hot_down */
    long s = 0;
    for (int i = n - 1; i >= 0; i -= 2)
        s += a[i];
    return s;
}

int main(int argc, char **argv) {
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;   /* over the short-loop bound */
    unsigned long calls = argc > 2 ? strtoul(argv[2], NULL, 10) : 40000;
    unsigned long rare_n = 29 + (unsigned long)argc;   /* 30 with no arguments */
    unsigned char *bytes = malloc(n + rare_n);
    int *ints = malloc(n * sizeof *ints);
    if (!bytes || !ints)
        return 1;
    for (unsigned long i = 0; i < n + rare_n; i++)
        bytes[i] = (unsigned char)(i * 7);
    for (unsigned long i = 0; i < n; i++)
        ints[i] = (int)(i * 13);
    unsigned long total = 0;
    for (int r = 0; r < 3; r++)
        total += rare_sum(bytes + r, rare_n);
    for (unsigned long c = 0; c < calls; c++)
        total += hot_sum(bytes + (c & 7), n) + (unsigned long)hot_down(ints, (int)n);
    printf("%lu\n", total);
    free(bytes);
    free(ints);
    return 0;
}
