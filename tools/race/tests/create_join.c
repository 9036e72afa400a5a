// race-test: ordering by creation and join: main writes before pthread_create, the thread
// works on the data, main reads after pthread_join; then a second thread does it again: safe
#include <pthread.h>
#include <stdio.h>

long results[4];
long input;

static __attribute__((noinline)) void *work(void *arg)
{
    long k = (long)arg;
    results[k] = input * 2;
    results[3] += k;
    input = 0;
    return NULL;
}

int main(void)
{
    input = 21;
    pthread_t t;
    pthread_create(&t, NULL, work, (void *)1L);
    pthread_join(t, NULL);
    long first = results[1] + results[3];
    input = 5;
    pthread_create(&t, NULL, work, (void *)2L);
    pthread_join(t, NULL);
    printf("%ld %ld %ld %ld\n", first, results[2], results[3], input);
    return 0;
}
