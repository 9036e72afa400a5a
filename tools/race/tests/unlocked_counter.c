// race-test: a counter incremented by two threads without a lock, in a rarely executed
// function (its dispatch checks are still at 100%: every call is sampled)
// expect-message: data race on counter:
#include <pthread.h>
#include <stdio.h>

long counter;

static __attribute__((noinline)) void bump(void)
{
    counter++; // RACE
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
    printf("done\n");
    return 0;
}
