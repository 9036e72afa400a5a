// Loads and stores of every probe size, in the program and in a shared library: the count
// tool's load_bytes and store_bytes check what the module stubs pass on (e2e-cmd/access-sizes).
// Usage: access_sizes [REPEATS] (default 1000).
// e2e-shlib: access_sizes_lib.c
#include <stdio.h>
#include <stdlib.h>

#define TOUCH_SIZES touch_sizes_local
#include "access_sizes_lib.c"
#undef TOUCH_SIZES

void touch_sizes_shared(volatile unsigned char *b, volatile unsigned short *h, volatile unsigned *w,
                        volatile unsigned long long *q, volatile unsigned __int128 *o, char *dst,
                        const char *src, size_t n);

int main(int argc, char **argv) {
    long repeats = argc > 1 ? atol(argv[1]) : 1000;
    static unsigned char b;
    static unsigned short h;
    static unsigned w;
    static unsigned long long q;
    static unsigned __int128 o;
    static char dst[8];
    size_t n = (size_t)(argc + 2);   // 3, unknown to the compiler
    for (long i = 0; i < repeats; i++) {
        touch_sizes_local(&b, &h, &w, &q, &o, dst, "abcdefg", n);
        touch_sizes_shared(&b, &h, &w, &q, &o, dst, "gfedcba", n);
    }
    printf("%u %u %u %llu %llu %.3s\n", b, h, w, q, (unsigned long long)o, dst);
    return 0;
}
