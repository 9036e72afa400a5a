// leak-test: stale_cache -- a cache that keeps growing, still referenced, never read again
// expect: found cache_insert stale
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include <vigil/leak.h>

/* Weak: the program also builds and runs without the vigil runtime. */
#pragma weak vigil_leak_snapshot

struct entry { struct entry *next; int key; char value[56]; };
static struct entry *cache_head;   /* reachable to the end: only staleness can tell */

static __attribute__((noinline)) void cache_insert(int key)
{
    struct entry *e = malloc(sizeof *e);
    e->key = key;
    snprintf(e->value, sizeof e->value, "value of %d", key);
    e->next = cache_head;
    cache_head = e;
}

int main(void)
{
    double start = seconds_now();
    int n = 0, asked = 0;
    while (seconds_now() < start + 2.0) {
        if (!asked && seconds_now() > start + 1.3 && vigil_leak_snapshot) {
            asked = 1;
            printf("api snapshot: %s\n", vigil_leak_snapshot() >= 0 ? "taken" : "refused");
        }
        if (seconds_now() < start + 0.6 && n < 2000)
            cache_insert(n++);   /* filled early, then forgotten */
        busy_work(5000);
    }
    printf("cached %d\n", n > 0);
    return 0;
}
