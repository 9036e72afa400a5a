// Not in the labelled set (run.sh builds it at -O2 and checks it on its own): the last access
// to the lost record is a load the optimizer hoisted out of both arms of an if (the same field
// read on two lines), whose debug location has line 0. The report must not say "file.c:0": it
// gives the nearest known line of the function (or says there is no line).
#include <stdio.h>
#include <stdlib.h>

struct rec { long a, b; char pad[48]; };

static __attribute__((noinline)) long pick(struct rec *p, int c)
{
    long v;
    if (c)
        v = p->a * 3;
    else
        v = p->a * 5;
    return v;
}

static __attribute__((noinline)) struct rec *make_rec(void)
{
    return calloc(1, sizeof(struct rec));
}

int main(int argc, char **argv)
{
    (void)argv;
    struct rec *r = make_rec();
    printf("%ld\n", pick(r, argc > 1));
    return 0;
}
