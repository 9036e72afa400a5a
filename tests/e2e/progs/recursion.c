// Direct, mutual and deep recursion.
#include <stdio.h>

static int is_odd(unsigned n);
static int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
static int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static unsigned long ackermann(unsigned long m, unsigned long n) {
    if (m == 0) return n + 1;
    if (n == 0) return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}

static void hanoi(int n, int from, int to, int via, long *moves, long *digest) {
    if (n == 0) return;
    hanoi(n - 1, from, via, to, moves, digest);
    ++*moves;
    *digest = *digest * 31 + from * 3 + to;
    hanoi(n - 1, via, to, from, moves, digest);
}

static int depth(int n) { volatile char pad[64]; pad[0] = (char)n; return n == 0 ? pad[0] : 1 + depth(n - 1); }

int main(void) {
    printf("fib(25)=%ld\n", fib(25));
    printf("even(10001)=%d odd(7777)=%d\n", is_even(10001), is_odd(7777));
    printf("ackermann(2,3)=%lu ackermann(3,4)=%lu\n", ackermann(2, 3), ackermann(3, 4));
    long moves = 0, digest = 0;
    hanoi(16, 1, 3, 2, &moves, &digest);
    printf("hanoi moves=%ld digest=%ld\n", moves, digest);
    printf("depth=%d\n", depth(20000));
    return 0;
}
