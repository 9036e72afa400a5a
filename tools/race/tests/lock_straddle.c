// race-test: a race beside a lock operation: the counter is updated after the unlock, out of
// the critical section. The runtime hands a burst's accesses over in batches, and not before a
// lock event: without that (include/vigil/tool.h VIGIL_TOOL_ACCESSES_BEFORE_LOCKS), the tool
// cannot tell an access just after the unlock from one just before it, takes the earlier one
// (so as never to invent a race) and misses this one. Marked RACE-EXACT: required only when the
// run's race.json says "exact_windows": true.
#include <pthread.h>
#include <stdio.h>

long guarded;
long hits;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static __attribute__((noinline)) void update(void)
{
    pthread_mutex_lock(&m);
    guarded++;
    pthread_mutex_unlock(&m);
    hits++; // RACE-EXACT
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++)
        update();
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("guarded %ld\n", guarded);
    return 0;
}
