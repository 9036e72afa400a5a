/* Heap out of bounds: a write one past the end (in the allocator's slack), a read far past
 * the end that lands in the next block, a read before the start, through an index and
 * through a moving pointer. In-bounds accesses beside them are silent. */
#include "common.h"

__attribute__((noinline)) static void fill(int *p, int n)
{
    for (int i = 0; i <= n; i++)
        p[i] = i;                     // MC heap-buffer-overflow
}
__attribute__((noinline)) static int far(const char *p, int off)
{
    return p[off];                    // MC heap-buffer-overflow
}
__attribute__((noinline)) static int before(const long *p, int k)
{
    return (int)p[-k];                // MC heap-buffer-underflow
}
__attribute__((noinline)) static int walk(const char *s, int n)
{
    int c = 0;
    const char *end = s + n;
    while (s <= end)                  /* one too many */
        c += *s++;                    // MC heap-buffer-overflow
    return c;
}
__attribute__((noinline)) static int last(const char *p, int n)
{
    const char *end = p + n;
    return end[-1];                   /* an end pointer read backwards: in bounds */
}

int main(int argc, char **argv)
{
    (void)argv;
    int n = 9 + zero();               /* 36 bytes: malloc's block has 40, the slack takes p[9] */
    int *p = opaque(malloc(n * sizeof *p));
    fill(p, n);
    char *a = opaque(malloc(100)), *b = opaque(malloc(100));
    memset(a, 1, 100);
    memset(b, 2, 100);
    mc_sink_int = far(a, 100 + 24 + argc);
    long *l = opaque(malloc(8 * sizeof *l));
    memset(l, 0, 8 * sizeof *l);
    mc_sink_int = before(l, argc);
    char *s = opaque(malloc(30));
    memset(s, 3, 30);
    mc_sink_int = walk(s, 30 - 1 + argc);
    printf("%d %d\n", p[0], last(a, 100));
    free(p), free(a), free(b), free(l), free(s);
    return 0;
}
