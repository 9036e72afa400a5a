/* Statically sized arrays indexed out of bounds (seed 000's invariant): a global, a local, a
 * struct member, a two-dimensional array; and a trailing one-element array used as a flexible
 * array member (the old idiom), which is not checked. */
#include "common.h"

int global_table[10];
struct packet { int kind; char name[8]; int crc; };
struct blob { int len; char data[1]; };
static int grid[4][5];

__attribute__((noinline)) static int get_global(int i)
{
    return global_table[i];           // MC index-out-of-bounds
}
__attribute__((noinline)) static int local_sum(int k)
{
    int local[6];
    for (int i = 0; i < 6; i++)
        local[i] = i;
    opaque(local);
    return local[k];                  // MC index-out-of-bounds
}
__attribute__((noinline)) static int name_at(struct packet *p, int i)
{
    return p->name[i];                // MC index-out-of-bounds
}
__attribute__((noinline)) static int cell(int r, int c)
{
    return grid[r][c];                // MC index-out-of-bounds
}
__attribute__((noinline)) static int last_of(int n)
{
    int *end = &global_table[n];      /* an end pointer (n == 10), stepped back from: C */
    return end[-1];
}
__attribute__((noinline)) static int blob_at(struct blob *b, int i)
{
    return b->data[i];                /* flexible: not checked */
}

int main(int argc, char **argv)
{
    (void)argv;
    struct packet pk = {1, "abcdefg", 2};
    for (int i = 0; i < 20; i++)
        grid[i / 5][i % 5] = i + argc;
    int s = get_global(9 + argc) + local_sum(5 + argc) + name_at(opaque(&pk), 7 + argc) + cell(1, 4 + argc);
    struct blob *b = opaque(malloc(sizeof *b + 15));
    b->len = 16;
    memset(b->data, 'x', 16);
    s += blob_at(b, 10 + argc) + get_global(3) + name_at(&pk, 2) + last_of(9 + argc);
    mc_sink_int = s;
    printf("done\n");
    free(b);
    return 0;
}
