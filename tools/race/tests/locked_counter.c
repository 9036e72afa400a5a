// race-test: the same counter, every increment under one mutex: safe
#include <pthread.h>
#include <stdio.h>

long counter;
pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;

static __attribute__((noinline)) void bump(void)
{
    pthread_mutex_lock(&counter_lock);
    counter++;
    pthread_mutex_unlock(&counter_lock);
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++)
        bump();
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("counter %ld\n", counter);   /* after the joins: ordered */
    return 0;
}
