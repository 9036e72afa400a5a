// The accesses of access_sizes.c (not a program on its own): built into a shared library
// (code for a shared library: the module stubs reach the runtime through the GOT) and, under
// another name, into the program itself (code for an executable).
#include <stddef.h>
#include <string.h>

#ifndef TOUCH_SIZES
#define TOUCH_SIZES touch_sizes_shared
#endif

// Per call, one load and one store of each of 1, 2, 4, 8 and 16 bytes (volatile: none merged),
// then a copy of n bytes (a probe with the size as an argument): 6 loads and 6 stores of
// 31 + n bytes each.
__attribute__((noinline)) void TOUCH_SIZES(volatile unsigned char *b, volatile unsigned short *h,
                                           volatile unsigned *w, volatile unsigned long long *q,
                                           volatile unsigned __int128 *o, char *dst, const char *src, size_t n)
{
    *b = *b + 1;
    *h = *h + 1;
    *w = *w + 1;
    *q = *q + 1;
    *o = *o + 1;
    memcpy(dst, src, n);
}
