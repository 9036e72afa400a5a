// race-test: atomic and plain accesses to the same variables: a plain store racing the atomic
// loads of another thread, a plain load racing an atomic store; the racy line is the plain
// one ("// PARTNER" marks the atomic access a reported pair may name beside it). Two atomic
// accesses never race: the relaxed counter both threads bump is safe
// expect-message: atomic read at atomic_plain.c:38
// expect-message: atomic write at atomic_plain.c:48
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int flag;
int level;
long bumps;

static __attribute__((noinline)) void raise_flag(void)
{
    flag = 1; // RACE
}

static __attribute__((noinline)) int read_level(void)
{
    return level; // RACE
}

static void *writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++)
        __atomic_fetch_add(&bumps, 1, __ATOMIC_RELAXED);
    usleep(2000);
    raise_flag();
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE)) // PARTNER
        ;
    for (int i = 0; i < 100; i++)
        __atomic_fetch_add(&bumps, 1, __ATOMIC_RELAXED);
    return NULL;
}

static void *setter(void *arg)
{
    (void)arg;
    __atomic_store_n(&level, 3, __ATOMIC_RELAXED); // PARTNER
    return NULL;
}

int main(void)
{
    pthread_t a, b, c;
    pthread_create(&b, NULL, reader, NULL);
    pthread_create(&a, NULL, writer, NULL);
    pthread_create(&c, NULL, setter, NULL);
    usleep(1000);
    int seen = read_level();
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    pthread_join(c, NULL);
    printf("bumps %ld level %d\n", bumps, seen >= 0 ? 1 : 0);
    return 0;
}
