// race-test: a race in a hot loop: two threads bump a shared counter millions of times (the
// function's checks fall to the 0.1% floor); the driver counts the runs needed to find it
// options: hot
// expect-message: data race on hits:
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

long hits;
static long iterations = 2000000;

static __attribute__((noinline)) void step(void)
{
    hits++; // RACE
}

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < iterations; i++)
        step();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        iterations = atol(argv[1]);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("done\n");
    return 0;
}
