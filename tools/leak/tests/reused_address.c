// leak-test: reused_address -- an object freed right after it was read, its address handed at
// once to another object of the same size, and its model record (the model reuses records per
// hash shard, so one of 64 objects of another size gets it); the new objects are forgotten
// while still referenced, the one at the old address after one write. Each must keep its own
// last access: the access cache of the thread that freed the first object must not carry that
// object's accesses over to the record's or the address's next owner.
// expect: found make_second stale last=write_second
// expect: found make_other stale last=-
// expect: absent make_first
#include <stdio.h>
#include <stdlib.h>
#include "common.h"

struct item { long words[6]; };        /* 48 bytes: the same size class for first and second */
static struct item *second;            /* reachable to the end: only staleness can tell */
static char *others[64];

static __attribute__((noinline)) struct item *make_first(void) { return malloc(sizeof(struct item)); }
static __attribute__((noinline)) struct item *make_second(void) { return malloc(sizeof(struct item)); }
static __attribute__((noinline)) char *make_other(void) { return malloc(200); }

static __attribute__((noinline)) long read_first(const struct item *p)
{
    long sum = 0;
    for (int i = 0; i < 6; i++)
        sum += p->words[i];
    return sum;
}

static __attribute__((noinline)) void write_second(struct item *p)
{
    for (int i = 0; i < 6; i++)
        p->words[i] = i;
}

int main(void)
{
    struct item *first = make_first();
    for (int i = 0; i < 6; i++)
        first->words[i] = i;
    leak_test_sink += (unsigned long)read_first(first);
    free(first);
    for (int i = 0; i < 64; i++)
        others[i] = make_other();      /* one of them gets the record the first object had */
    second = make_second();            /* the address the first object had */
    write_second(second);
    double end = seconds_now() + 1.2;
    while (seconds_now() < end)
        busy_work(1000);
    printf("%s\n", second == first ? "same address" : "other address");
    return 0;
}
