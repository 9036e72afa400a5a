/* The quarantine (memcheck.quarantine): a read through a pointer into the middle of a freed
 * block, and a write to a freed block after other blocks came and went, are uses after free
 * (the memory was not handed out again); a block whose memory was reused once it left the
 * quarantine is a live block, not reported. */
#include "common.h"

struct node { int key; int vals[15]; };

__attribute__((noinline)) static int read_mid(const int *p)
{
    return p[2];                      // MC use-after-free
}
__attribute__((noinline)) static void write_freed(struct node *n)
{
    n->vals[3] = 7;                   // MC use-after-free
}
__attribute__((noinline)) static int use_block(int *p, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        p[i] = i;                     /* a reused block: live, silent */
    for (int i = 0; i < n; i++)
        s += p[i];
    return s;
}

int main(void)
{
    int *a = opaque(malloc(64 * sizeof *a));
    memset(a, 0, 64 * sizeof *a);
    int *mid = opaque(a + 20);        /* into the middle: the freed-block table alone misses it */
    free(a);
    mc_sink_int = read_mid(mid);
    struct node *n = opaque(malloc(sizeof *n));
    n->key = 1;
    free(n);
    for (int i = 0; i < 50; i++)      /* others come and go: fewer than the quarantine holds */
        free(opaque(malloc(24)));
    write_freed(n);
    /* reuse: free a block, then allocate the same size until its memory comes back (after it
     * left the quarantine), and use it */
    int *old = opaque(malloc(40 * sizeof *old));
    free(old);
    int reused = 0, s = 0;
    for (int i = 0; i < 100000 && !reused; i++) {
        int *p = opaque(malloc(40 * sizeof *p));
        if (p == old) {
            reused = 1;
            s = use_block(p, 40);
        }
        free(p);
    }
    printf("%s %d\n", reused ? "reused" : "not reused", s);
    return 0;
}
