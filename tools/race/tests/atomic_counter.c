// race-test: counters updated only by atomic instructions (relaxed GNU builtins, C11 relaxed
// and default seq_cst read-modify-writes, a relaxed compare-and-exchange loop keeping a
// maximum), by four threads in a hot loop; main reads them after joining: safe
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define THREADS 4
#define ITERS 20000
long hits;
atomic_long c11_hits;
atomic_int seq_hits;
long max_seen;

static __attribute__((noinline)) void note_max(long v)
{
    long cur = __atomic_load_n(&max_seen, __ATOMIC_RELAXED);
    while (v > cur && !__atomic_compare_exchange_n(&max_seen, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static void *worker(void *arg)
{
    long id = (long)arg;
    for (long i = 0; i < ITERS; i++) {
        __atomic_fetch_add(&hits, 1, __ATOMIC_RELAXED);
        atomic_fetch_add_explicit(&c11_hits, 2, memory_order_relaxed);
        if (i % 100 == 0)
            atomic_fetch_add(&seq_hits, 1);
        note_max(id * ITERS + i);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("hits %ld c11 %ld seq %d max %ld\n", hits, atomic_load(&c11_hits), atomic_load(&seq_hits), max_seen);
    return 0;
}
