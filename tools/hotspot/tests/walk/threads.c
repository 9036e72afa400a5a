/* Threads: four workers (the thread start routine) each call step, which calls the hot leaf;
 * the walk ends at worker, whose caller is libc's thread start. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) double leaf(double x, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x * i / (i + 2.0);
    return s;
}

__attribute__((noinline)) double step(int k)
{
    double s = 0;
    for (int i = 0; i < 2; i++)
        s += leaf(k + i, 2000);
    return s;
}

static double results[4];

static void *worker(void *arg)
{
    long id = (long)arg;
    double s = 0;
    for (int i = 0; i < 4000; i++)
        s += step((int)id * 1000 + i);
    results[id] = s;
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    double s = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        s += results[i];
    }
    printf("%.6g\n", s);
    return 0;
}
