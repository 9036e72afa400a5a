/* Two threads, each in a hot function of its own (spin_left, spin_right), about 0.4 s of CPU
 * each; main waits for them. */
#include <pthread.h>
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long spin_left(unsigned long n)
{
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = (x ^ i) * 6364136223846793005ul;   /* no strength reduction: as long as spin_right */
    return x;
}

__attribute__((noinline)) static unsigned long spin_right(unsigned long n)
{
    unsigned long x = 7;
    for (unsigned long i = 0; i < n; i++)
        x = (x ^ i) * 2862933555777941757ul;
    return x;
}

static void *left(void *arg)
{
    (void)arg;
    sink += spin_left(2800000000ul / 10);
    return NULL;
}

static void *right(void *arg)
{
    (void)arg;
    sink += spin_right(2800000000ul / 10);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    if (pthread_create(&a, NULL, left, NULL) != 0 || pthread_create(&b, NULL, right, NULL) != 0)
        return 1;
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("threads: done (%lu)\n", sink & 1);
    return 0;
}
