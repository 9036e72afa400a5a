// Report check program: rare_path is a small static function, not marked noinline, that the
// optimizer inlines into main's loop, where it runs 3 times (a rare condition) in 200 million
// iterations (the argument; the comparison with plain clang runs 2 million). Its code has no
// entry check of its own after inlining: vigil-cc gives the inlined call one (its site names
// rare_path), which must stay at rate 1 while the loop's back-edge falls to the floor.
// The LINE markers are read by tests/e2e/report_check.py.
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

static unsigned long rare_path(unsigned long x) { /* LINE:rare_path */
    if (x % 3 == 0) /* LINE:rare_branch */
        sink += x;
    else
        sink = sink * 7 + sink;
    return x * 3 + 1;
}

int main(int argc, char **argv) {
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
    unsigned long h = 0, r = 0, step = n / 4, next = step;
    for (unsigned long i = 0; i < n; i++) { /* LINE:loop_start */
        h = h * 31 + (i ^ (h >> 7));
        if (i == next) {
            r += rare_path(i + (unsigned long)argc);
            next += step;
        }
    } /* LINE:loop_end */
    printf("rare=%lu hot=%lx\n", r, h);
    return 0;
}
