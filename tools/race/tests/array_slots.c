// race-test: per-thread slots of one array (4-byte elements: two threads' slots share each
// 8-byte granule) and per-thread counters of one struct: safe
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
int slots[THREADS];
struct { short hits[THREADS]; } stats;

static __attribute__((noinline)) void work(int id)
{
    for (int k = 1; k <= 5; k++) {
        slots[id] += k;
        stats.hits[id]++;
    }
}

static void *worker(void *arg)
{
    work((int)(long)arg);
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    int sum = 0;
    for (int i = 0; i < THREADS; i++)
        sum += slots[i] + stats.hits[i];
    printf("sum %d\n", sum);
    return 0;
}
