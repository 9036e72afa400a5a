// leak-test: queued_frees -- the leak tool batches a single-threaded program's frees and applies
// them before the next allocation. Here the program frees 16 objects and at once starts a thread
// that gets some of their addresses back (one malloc arena, no per-thread cache: GLIBC_TUNABLES, set by
// re-executing itself) and keeps its objects, still referenced, never read again. The tool
// must apply the queued frees before the new thread can allocate (VIGIL_THREAD_CREATE): applied
// later, they would remove the thread's objects from the model, and their group would be lost.
// expect: found make_kept stale last=- objects=16
// expect: absent make_temp
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common.h"

#define N 16
struct item { long words[5]; };        /* 40 bytes: a fast-bin chunk, handed back LIFO */
static struct item *temp[N];
static struct item *kept[N];           /* reachable to the end: only staleness can tell */

static __attribute__((noinline)) struct item *make_temp(void) { return malloc(sizeof(struct item)); }
static __attribute__((noinline)) struct item *make_kept(void) { return malloc(sizeof(struct item)); }

static void *keeper(void *arg)
{
    (void)arg;
    for (int i = 0; i < N; i++)
        kept[i] = make_kept();
    return NULL;
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *tunables = "glibc.malloc.tcache_count=0:glibc.malloc.arena_max=1";
    const char *now = getenv("GLIBC_TUNABLES");
    if (!now || strcmp(now, tunables) != 0) {
        setenv("GLIBC_TUNABLES", tunables, 1);
        execv("/proc/self/exe", argv);
        perror("queued_frees: execv");
        return 2;
    }
    for (int i = 0; i < N; i++) {
        temp[i] = make_temp();
        memset(temp[i], i, sizeof *temp[i]);
    }
    for (int i = 0; i < N; i++)
        free(temp[i]);
    pthread_t t;
    if (pthread_create(&t, NULL, keeper, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 2;
    int reused = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            reused += kept[i] == temp[j];
    if (reused == 0) {   /* the check below would test nothing (pthread_create takes some back) */
        fprintf(stderr, "queued_frees: the thread got %d of the %d freed addresses back\n", reused, N);
        return 3;
    }
    double end = seconds_now() + 1.2;
    while (seconds_now() < end)
        busy_work(1000);
    free(malloc(8));   /* an allocation of the main thread after the thread's */
    printf("%d addresses reused\n", reused);
    return 0;
}
