// race-test: barrier phases: each of four threads writes its own slot, all meet at a barrier,
// each reads every other slot, all meet again, 200 times (pthread_barrier_wait orders every
// arrival before every departure): safe
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define PHASES 200
long slot[THREADS];
long seen[THREADS];
pthread_barrier_t barrier;

static __attribute__((noinline)) void publish(int id, int phase)
{
    slot[id] = (long)phase * THREADS + id;
}

static __attribute__((noinline)) long gather(int id)
{
    long sum = 0;
    for (int k = 0; k < THREADS; k++)
        if (k != id)
            sum += slot[k];
    return sum;
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    long total = 0;
    for (int phase = 0; phase < PHASES; phase++) {
        publish(id, phase);
        pthread_barrier_wait(&barrier);
        total += gather(id);
        pthread_barrier_wait(&barrier);
    }
    seen[id] = total;
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    long sum = 0;
    for (int i = 0; i < THREADS; i++)
        sum += seen[i];
    printf("sum %ld\n", sum);
    return 0;
}
