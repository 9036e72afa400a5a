/* calloc (zeros: silent), realloc growth (the old part keeps its bytes: silent; the new part
 * is uninitialized), strdup (copied: silent), memset (initializes), memcpy of uninitialized
 * bytes into another block (still uninitialized where used), use after free. */
#include "common.h"

__attribute__((noinline)) static int positive(const int *a, int i)
{
    return a[i] > 0;                  // MC uninitialized-read
}
__attribute__((noinline)) static int byte_is(const char *s, int i, char c)
{
    return s[i] == c;
}
__attribute__((noinline)) static int read_freed(const int *p)
{
    return p[3];                      // MC use-after-free
}

int main(void)
{
    int *z = opaque(calloc(16, sizeof *z));
    int hits = 0;
    for (int i = 0; i < 16; i++)
        hits += byte_is((const char *)z, i, 0);
    int *g = opaque(malloc(8 * sizeof *g));
    for (int i = 0; i < 8; i++)
        g[i] = i + 1;
    g = opaque(realloc(g, 64 * sizeof *g));
    for (int i = 0; i < 8; i++)
        hits += g[i] > 0;             /* the old part: silent */
    mc_sink_int = positive(g, 40);    /* the new part */
    char *d = opaque(strdup("duplicate"));
    hits += byte_is(d, 3, 'l');
    char *m = opaque(malloc(64));
    memset(m, 'm', 64);
    hits += byte_is(m, 63, 'm');
    int *src = opaque(malloc(32 * sizeof *src)), *dst = opaque(malloc(32 * sizeof *dst));
    memcpy(dst, src, 32 * sizeof *src);
    mc_sink_int = positive(dst, 5);   /* same line as above: reported once */
    int *f = opaque(malloc(10 * sizeof *f));
    memset(f, 0, 10 * sizeof *f);
    free(f);
    mc_sink_int = read_freed(f);
    printf("%d\n", hits);
    free(z), free(g), free(d), free(m), free(src), free(dst);
    return 0;
}
