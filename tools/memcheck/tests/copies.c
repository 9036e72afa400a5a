/* Uninitialized bytes only copied: struct padding through memcpy and assignment, a buffer
 * copied whole, a field passed along in memory: none is a use, nothing is reported. */
#include "common.h"

struct padded { char tag; /* 7 bytes of padding */ long value; char tail; };

__attribute__((noinline)) static void copy_structs(struct padded *dst, const struct padded *src, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = src[i];              /* padding and unset fields copied */
}

int main(void)
{
    int n = 8 + zero();
    struct padded *a = opaque(malloc(n * sizeof *a)), *b = opaque(malloc(n * sizeof *b));
    for (int i = 0; i < n; i++) {
        a[i].tag = 'a' + i;
        a[i].value = i;               /* tail and padding: never written */
    }
    copy_structs(b, a, n);
    char *buf = opaque(malloc(256)), *copy = opaque(malloc(256));
    memcpy(buf, "hello", 6);
    memcpy(copy, buf, 256);          /* 250 bytes never written, copied */
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum += b[i].value + b[i].tag;
    printf("%ld %s\n", sum, copy);
    free(a), free(b), free(buf), free(copy);
    return 0;
}
