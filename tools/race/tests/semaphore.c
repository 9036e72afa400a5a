// race-test: a buffer handed back and forth by two POSIX semaphores, 2000 rounds and no lock:
// the producer fills it and posts, the consumer waits, reads and clears it and posts back
// (sem_post -> sem_wait orders them): safe
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

#define ROUNDS 2000
int buffer[8];
sem_t filled, emptied;

static __attribute__((noinline)) void fill(int round)
{
    for (int i = 0; i < 8; i++)
        buffer[i] = round + i;
}

static __attribute__((noinline)) long drain(void)
{
    long sum = 0;
    for (int i = 0; i < 8; i++) {
        sum += buffer[i];
        buffer[i] = 0;
    }
    return sum;
}

static void *producer(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        sem_wait(&emptied);
        fill(r);
        sem_post(&filled);
    }
    return NULL;
}

int main(void)
{
    sem_init(&filled, 0, 0);
    sem_init(&emptied, 0, 1);
    pthread_t t;
    pthread_create(&t, NULL, producer, NULL);
    long total = 0;
    for (int r = 0; r < ROUNDS; r++) {
        while (sem_trywait(&filled) != 0)
            sched_yield();
        total += drain();
        sem_post(&emptied);
    }
    pthread_join(t, NULL);
    printf("total %ld\n", total);
    return 0;
}
