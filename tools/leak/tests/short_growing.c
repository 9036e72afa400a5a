// Not in the labelled set (run.sh checks it on its own, with the default leak.stale_after of
// 30 s): a 2 s run whose list grows to 8.5 MB and is never read. Nothing can be stale in 2 s and
// the list stays reachable, so no group is reported; the report must show the list's site first
// in what is in use at exit, and say that the run was shorter than leak.stale_after.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct item { struct item *next; char payload[1000]; };
static struct item *head;

static __attribute__((noinline)) void grow_list(int n)
{
    for (int i = 0; i < n; i++) {
        struct item *it = malloc(sizeof *it);
        memset(it->payload, i, sizeof it->payload);
        it->next = head;
        head = it;
    }
}

int main(void)
{
    for (int step = 0; step < 20; step++) {   /* 20 x 100 ms, 425 items of 1 KB each time */
        grow_list(425);
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    }
    char *scratch = malloc(100);                 /* a small site that frees: not among the first */
    snprintf(scratch, 100, "%p", (void *)head);
    free(scratch);
    printf("grown\n");
    return 0;
}
