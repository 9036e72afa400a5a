// Report check program: rare_path runs 3 times (its entry check must stay at rate 1), the loop
// in hot_loop runs 30 million back-edges (its check must fall to the floor, 0.001).
// The LINE markers are read by tests/e2e/report_check.py.
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long rare_path(unsigned long x) { /* LINE:rare_path */
    sink += x;
    return x * 3 + 1;
}

__attribute__((noinline)) static unsigned long hot_loop(unsigned long n) { /* LINE:hot_loop */
    unsigned long h = 0;
    for (unsigned long i = 0; i < n; i++) { /* LINE:hot_loop_start */
        h = h * 31 + (i ^ (h >> 7));
        sink = h;
    } /* LINE:hot_loop_end */
    return h;
}

int main(int argc, char **argv) {
    (void)argv;
    unsigned long r = 0;
    for (int i = 0; i < 3; i++) r += rare_path((unsigned long)i + (unsigned long)argc);
    unsigned long h = hot_loop(30000000UL);
    printf("rare=%lu hot=%lx\n", r, h);
    return 0;
}
