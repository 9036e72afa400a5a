/* Locals whose address escapes, in functions with loops: the transfer between the checking
 * copy and the instrumented copy keeps them in its frame (compiler/transfer.c), so both copies
 * must see the same object, aligned as declared, across bursts that begin and end mid-loop,
 * and across recursion (each activation has its own frame). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) static void bump(int *p, int by) { *p += by; }
__attribute__((noinline)) static void fill(char *buf, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)('a' + (seed + i) % 26);
}
__attribute__((noinline)) static int aligned_to(const void *p, uintptr_t align) { return ((uintptr_t)p & (align - 1)) == 0; }

/* An over-aligned array, a plain array, an int and a struct, all passed by address in a loop. */
static unsigned long mix(int rounds)
{
    _Alignas(64) unsigned char block[192];
    char name[37];
    int counter = 0;
    struct { long a; short b; char c[3]; } rec = {1, 2, "xy"};
    unsigned long h = 5381;
    int misaligned = 0;
    for (int r = 0; r < rounds; r++) {
        memset(block, r & 0xff, sizeof block);
        fill(name, sizeof name - 1, r);
        name[sizeof name - 1] = 0;
        bump(&counter, r % 7);
        bump((int *)&rec.a, 1);
        misaligned += !aligned_to(block, 64);
        for (size_t i = 0; i < sizeof name - 1; i++)
            h = h * 33 + (unsigned char)name[i] + block[i];
    }
    return h ^ (unsigned long)counter ^ (unsigned long)rec.a ^ (unsigned long)misaligned << 40;
}

/* Recursion: every activation keeps its own buffer while the deeper ones run. */
static unsigned walk(int depth, unsigned seed)
{
    char buf[24];
    int calls = 0;
    unsigned sum = 0;
    for (int i = 0; i < 3; i++) {
        fill(buf, sizeof buf, (int)seed + i);
        bump(&calls, 1);
        if (depth > 0)
            sum += walk(depth - 1, seed * 31 + (unsigned)i);
        for (size_t k = 0; k < sizeof buf; k++)
            sum = sum * 131 + (unsigned char)buf[k];
    }
    return sum + (unsigned)calls;
}

int main(void)
{
    unsigned long total = 0;
    for (int i = 0; i < 300; i++)
        total += mix(50 + i % 13);
    printf("mix %lu\n", total);
    unsigned w = 0;
    for (int i = 0; i < 40; i++)
        w ^= walk(5, (unsigned)i);
    printf("walk %u\n", w);
    return (int)(total % 7);
}
