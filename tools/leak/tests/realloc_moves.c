// leak-test: realloc_moves -- a log buffer grown by realloc (it moves), filled, grown once more,
// then forgotten while still referenced. The moved object must keep the allocation site of the
// original malloc and the last access made before the final move.
// expect: found make_log stale last=fill_log
// expect: absent grow_log
#include <stdio.h>
#include <stdlib.h>
#include "common.h"

static char *log_buf;       /* reachable to the end: only staleness can tell */
static char *other[64];     /* allocations in between, so that realloc has to move */

static __attribute__((noinline)) char *make_log(size_t n) { return malloc(n); }

static __attribute__((noinline)) void grow_log(size_t n)
{
    char *p = realloc(log_buf, n);
    if (p)
        log_buf = p;
}

static __attribute__((noinline)) void fill_log(size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        log_buf[i] = (char)('a' + i % 26);
}

int main(void)
{
    size_t len = 32;
    log_buf = make_log(len);
    fill_log(0, len);
    for (int i = 0; i < 10; i++) {
        other[i] = malloc(len);          /* sits right after the buffer: the next grow moves */
        grow_log(len * 2);
        fill_log(len, len * 2);
        len *= 2;
    }
    grow_log(len * 2);                   /* one last move, never written afterwards */
    for (int i = 0; i < 10; i++)
        free(other[i]);
    double end = seconds_now() + 1.2;
    while (seconds_now() < end)
        busy_work(1000);
    printf("log %p\n", (void *)log_buf);
    return 0;
}
