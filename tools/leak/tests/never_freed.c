// leak-test: never_freed -- records allocated in a loop, used once, never freed
// expect: found make_record unreachable
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

struct record { int id; char name[40]; };

static __attribute__((noinline)) struct record *make_record(int id)
{
    struct record *r = malloc(sizeof *r);
    r->id = id;
    snprintf(r->name, sizeof r->name, "record-%d", id);
    return r;
}

int main(void)
{
    double end = seconds_now() + 1.2;
    unsigned long total = 0;
    for (int i = 0; seconds_now() < end; i++) {
        if (i < 500) {
            struct record *r = make_record(i);
            total += (unsigned long)r->id + strlen(r->name);   /* used, then dropped */
        }
        busy_work(2000);
    }
    printf("total %lu\n", total);
    return 0;
}
