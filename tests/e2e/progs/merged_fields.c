// Loads of one block through one pointer at constant offsets share one probe per run of adjacent
// bytes they read (compiler/probes.c, VIGIL_CC_MERGE_SPAN: digest's two runs are id..links[0]
// and links[3]); a call between two loads, a volatile load and a store keep their own.
#include <stdio.h>
#include <stdlib.h>

struct record { long id; int kind, flags; double weight; long links[4]; };

__attribute__((noinline)) static long digest(const struct record *r)
{
    return r->id * 31 + r->kind * 7 + r->flags + (long)r->weight + r->links[0] + r->links[3];
}

static volatile long seen;
__attribute__((noinline)) static long note(long v) { seen = v; return v * 3; }

__attribute__((noinline)) static long digest_with_call(const struct record *r)
{
    long a = r->id;
    long b = note(a);   /* a call, which may write *r: the next load gets a probe of its own */
    return b + r->kind;
}

__attribute__((noinline)) static void fill(struct record *r, int i)
{
    r->id = i; r->kind = i % 3; r->flags = i & 5; r->weight = i * 0.5;
    for (int k = 0; k < 4; k++) r->links[k] = i * k;
}

int main(void)
{
    struct record *rs = calloc(64, sizeof *rs);
    if (!rs) return 1;
    for (int i = 0; i < 64; i++)
        fill(&rs[i], i);
    long total = 0;
    for (int round = 0; round < 100; round++)
        for (int i = 0; i < 64; i++)
            total += digest(&rs[i]) + digest_with_call(&rs[i]);
    printf("total %ld\n", total);
    free(rs);
    return 0;
}
