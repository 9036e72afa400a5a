// race-test: a condition-variable hand-off, several rounds: the producer fills a buffer
// (without holding the mutex), then signals under the mutex; the consumer waits, then reads
// the buffer outside the mutex and hands it back the same way: safe
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 5
int buffer[8];
int full;   /* 1: the consumer's turn, 0: the producer's */
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void wait_for(int value)
{
    pthread_mutex_lock(&m);
    while (full != value)
        pthread_cond_wait(&cv, &m);
    pthread_mutex_unlock(&m);
}

static void set_turn(int value)
{
    pthread_mutex_lock(&m);
    full = value;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&m);
}

static __attribute__((noinline)) void fill(int round)
{
    for (int i = 0; i < 8; i++)
        buffer[i] = round * 8 + i;
}

static __attribute__((noinline)) int drain(void)
{
    int sum = 0;
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
        wait_for(0);
        fill(r);
        set_turn(1);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, producer, NULL);
    long total = 0;
    for (int r = 0; r < ROUNDS; r++) {
        wait_for(1);
        total += drain();
        set_turn(0);
    }
    pthread_join(t, NULL);
    printf("total %ld\n", total);
    return 0;
}
