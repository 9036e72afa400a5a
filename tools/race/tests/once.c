// race-test: lazy initialization by pthread_once: whichever of four threads comes first fills
// a table and allocates a configuration; every thread reads them once its pthread_once has
// returned (the init routine happens before each return): safe
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4
int table[64];
struct config { int scale; int offset; } *config;
pthread_once_t once = PTHREAD_ONCE_INIT;
long results[THREADS];

static void init(void)
{
    for (int i = 0; i < 64; i++)
        table[i] = i * 3;
    config = malloc(sizeof *config);
    config->scale = 2;
    config->offset = 1;
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    pthread_once(&once, init);
    long sum = 0;
    for (int i = 0; i < 64; i++)
        sum += table[i] * config->scale + config->offset;
    results[id] = sum;
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    long sum = 0;
    for (int i = 0; i < THREADS; i++)
        sum += results[i];
    printf("sum %ld\n", sum);
    free(config);
    return 0;
}
