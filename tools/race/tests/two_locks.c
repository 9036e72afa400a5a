// race-test: one object updated under two different locks (each thread takes its own): racy
// expect-message: data race on account:
#include <pthread.h>
#include <stdio.h>

struct { long balance; } account;
pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;

static __attribute__((noinline)) void deposit_a(void)
{
    pthread_mutex_lock(&lock_a);
    account.balance += 10; // RACE
    pthread_mutex_unlock(&lock_a);
}

static __attribute__((noinline)) void deposit_b(void)
{
    pthread_mutex_lock(&lock_b);
    account.balance += 5; // RACE
    pthread_mutex_unlock(&lock_b);
}

static void *worker_a(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++)
        deposit_a();
    return NULL;
}

static void *worker_b(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++)
        deposit_b();
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, worker_a, NULL);
    pthread_create(&b, NULL, worker_b, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("done\n");
    return 0;
}
