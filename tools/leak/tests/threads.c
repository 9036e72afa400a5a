// leak-test: threads -- objects allocated while the process has one thread and freed by threads
// started later, churn in four threads at once, 50 records per thread dropped unfreed, and a
// thread that allocates a few objects and is still blocked when the program exits
// expect: found thread_leak unreachable
// expect: found parked_alloc stale
// expect: absent shared_alloc
// expect: absent churn_alloc
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common.h"

#define THREADS 4
#define SHARED 4000
#define LEAKED_PER_THREAD 50

static char *shared[SHARED];   /* allocated by main alone, freed by the threads */

static __attribute__((noinline)) char *shared_alloc(int i)
{
    char *p = malloc(24 + (size_t)(i % 40));
    snprintf(p, 24, "shared-%d", i);
    return p;
}

static __attribute__((noinline)) char *churn_alloc(int i)
{
    char *p = malloc(16 + (size_t)(i % 200));
    memset(p, i & 0x7f, 16);
    return p;
}

static __attribute__((noinline)) void thread_leak(int id, int i)
{
    char *p = malloc(48);
    snprintf(p, 48, "thread %d record %d", id, i);
    leak_test_sink += strlen(p);   /* the pointer is dropped here */
}

#define PARKED 10
static char *parked[PARKED];   /* still referenced at exit, never read again: stale */

static __attribute__((noinline)) char *parked_alloc(int i)
{
    char *p = malloc(32);
    snprintf(p, 32, "parked %d", i);
    return p;
}

static void *parked_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < PARKED; i++)
        parked[i] = parked_alloc(i);
    for (;;)
        pause();   /* blocked when main exits: its site's counts must be in the report all the same */
    return NULL;
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    unsigned long sum = 0;
    for (int i = id; i < SHARED; i += THREADS) {   /* frees of objects modelled before any thread */
        sum += strlen(shared[i]);
        free(shared[i]);
    }
    double end = seconds_now() + 1.0;
    for (int round = 0; seconds_now() < end; round++) {
        char *keep[64];
        for (int k = 0; k < 64; k++)
            keep[k] = churn_alloc(round * 64 + k);
        for (int k = 0; k < 64; k++) {
            sum += (unsigned char)keep[k][3];
            free(keep[k]);
        }
        if (round < LEAKED_PER_THREAD)
            thread_leak(id, round);
        busy_work(500);
    }
    leak_test_sink += sum;
    return NULL;
}

int main(void)
{
    for (int i = 0; i < SHARED; i++)
        shared[i] = shared_alloc(i);
    pthread_t t[THREADS], parker;
    if (pthread_create(&parker, NULL, parked_thread, NULL) != 0)
        return 1;
    for (long i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            return 1;
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("done\n");
    return 0;
}
