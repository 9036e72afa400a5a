// leak-test: overwritten -- a global pointer overwritten without freeing the old buffer
// expect: found alloc_buffer unreachable
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

static char *current;

static __attribute__((noinline)) char *alloc_buffer(size_t n)
{
    char *b = malloc(n);
    memset(b, 'x', n);
    return b;
}

int main(void)
{
    double end = seconds_now() + 1.2;
    unsigned long total = 0;
    for (int i = 0; seconds_now() < end; i++) {
        if (i % 50 == 0 && i < 5000)
            current = alloc_buffer(256);   /* the previous buffer is lost */
        total += (unsigned char)current[i % 256];
        busy_work(1000);
    }
    printf("total %lu\n", total);
    return 0;
}
