/* Uninitialized heap bytes used in a branch, as an address, passed to a call, returned; the
 * struct is allocated in one function and used in others, as real bugs are. */
#include "common.h"

struct rec { int id; int count; int index; int flags; char name[16]; };
static int table[16];

__attribute__((noinline)) static struct rec *make(void)
{
    struct rec *r = malloc(sizeof *r);
    r->id = 7;                        /* count, index, flags, name: never written */
    return opaque(r);
}
__attribute__((noinline)) static int in_branch(struct rec *r)
{
    if (r->count > 3)                 // MC uninitialized-read
        return 1;
    return 0;
}
__attribute__((noinline)) static int as_address(struct rec *r)
{
    return table[r->index & 15];      // MC uninitialized-read
}
__attribute__((noinline)) static void to_call(struct rec *r)
{
    sink(r->flags);                   // MC uninitialized-read
}
__attribute__((noinline)) static int returned(struct rec *r)
{
    return r->name[2];                // MC uninitialized-read
}
__attribute__((noinline)) static int initialized(struct rec *r)
{
    return r->id == 7;                /* written: no report */
}

int main(void)
{
    struct rec *r = make();
    for (int i = 0; i < 16; i++)
        table[i] = i;
    mc_sink_int = in_branch(r) + as_address(r) + returned(r);
    to_call(r);
    printf("id ok: %d\n", initialized(r));
    free(r);
    return 0;
}
