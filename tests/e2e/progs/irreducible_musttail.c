// Control flow the transform must handle: irreducible loops (a cycle with two entries, so
// back-edges depend on the DFS), goto into and out of loops, a self-loop, and musttail
// calls (nothing may be placed between a musttail call and its return).
#include <stdio.h>

static int irreducible(int a, int n) {
    int x = a;
    if (a & 1) goto second;
first:
    x += 3;
    if (x > n) return x;
second:
    x *= 2;
    if (x < n * 4) goto first;
    return x - 1;
}

static int goto_maze(int n) {
    int i = 0, acc = 0;
top:
    if (i >= n) goto done;
    for (int j = 0; j < 5; j++) {
        acc += i * j + 1;
        if (acc % 11 == 3) { i += 2; goto top; }
        if (j > i % 5) goto next;
    }
next:
    i++;
    goto top;
done:
    return acc;
}

static int count_down(int n, long acc);
static int step(int n, long acc) {
    if (n == 0) return (int)(acc % 100003);
    __attribute__((musttail)) return count_down(n - 1, acc + n);
}
static int count_down(int n, long acc) {
    __attribute__((musttail)) return step(n, acc ^ 1);
}

int main(void) {
    long total = 0;
    for (int a = 0; a < 40; a++) total += irreducible(a, a * 17 + 1);
    printf("irreducible %ld\n", total);
    printf("goto_maze %d %d\n", goto_maze(50), goto_maze(500));
    printf("musttail %d\n", step(2000000, 0));
    return 0;
}
