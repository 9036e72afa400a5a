// race-test: data written without a lock, then a flag set under a mutex; the consumer polls
// the flag under the mutex and reads the data once it is set: safe (the mutex orders them)
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

int data[4];
int ready;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static __attribute__((noinline)) void produce(void)
{
    for (int i = 0; i < 4; i++)
        data[i] = 10 * (i + 1);
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_mutex_unlock(&m);
}

static __attribute__((noinline)) int consume(void)
{
    for (;;) {
        pthread_mutex_lock(&m);
        int r = ready;
        pthread_mutex_unlock(&m);
        if (r)
            break;
        sched_yield();
    }
    int sum = 0;
    for (int i = 0; i < 4; i++)
        sum += data[i];
    data[0] = -1;   /* the consumer owns the data now */
    return sum;
}

static void *producer(void *arg)
{
    (void)arg;
    produce();
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, producer, NULL);
    int sum = consume();
    pthread_join(t, NULL);
    printf("sum %d\n", sum);
    return 0;
}
