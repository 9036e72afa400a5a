// leak-test: idle_pause -- with leak.clock=active a pause is not idleness: sessions read until the
// program sleeps are not stale after a pause four times stale_after long, while a record left
// alone as the program worked is. (With the default wall clock the sessions would be reported.)
// options: leak.clock=active
// expect: absent make_session
// expect: found make_orphan stale
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "common.h"

#define N 64
struct session { long id, requests; };
static struct session *sessions[N];   /* live to the end, read until the pause */
static long *orphan;                  /* reachable, never read again */

static __attribute__((noinline)) struct session *make_session(long id)
{
    struct session *s = malloc(sizeof *s);
    s->id = id;
    s->requests = 0;
    return s;
}

static __attribute__((noinline)) long *make_orphan(void)
{
    long *p = malloc(4 * sizeof *p);
    p[0] = 42;
    return p;
}

static __attribute__((noinline)) long serve(void)
{
    long total = 0;
    for (int i = 0; i < N; i++)
        total += sessions[i]->id + sessions[i]->requests++;
    return total;
}

int main(void)
{
    for (int i = 0; i < N; i++)
        sessions[i] = make_session(i);
    orphan = make_orphan();
    double end = seconds_now() + 1.2;
    long total = 0;
    while (seconds_now() < end) {
        total += serve();
        busy_work(200);
    }
    /* The pause: a server waiting for its next request. */
    struct timespec pause = {2, 0};
    nanosleep(&pause, NULL);
    printf("total %d\n", total > 0);
    return 0;
}
