// race-test: a rwlock: one writer updates the configuration under the write lock, three
// readers read it under the read lock: safe
#include <pthread.h>
#include <stdio.h>

pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
struct { int version; int limit; } config = {1, 100};

static __attribute__((noinline)) void update(int i)
{
    pthread_rwlock_wrlock(&rw);
    config.version++;
    config.limit += i;
    pthread_rwlock_unlock(&rw);
}

static __attribute__((noinline)) int lookup(void)
{
    pthread_rwlock_rdlock(&rw);
    int v = config.version + config.limit;
    pthread_rwlock_unlock(&rw);
    return v;
}

static void *writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4; i++)
        update(i);
    return NULL;
}

static void *reader(void *arg)
{
    long *out = arg;
    for (int i = 0; i < 6; i++)
        *out += lookup() > 0;
    return NULL;
}

int main(void)
{
    pthread_t w, r[3];
    long seen[3] = {0};
    pthread_create(&w, NULL, writer, NULL);
    for (int i = 0; i < 3; i++)
        pthread_create(&r[i], NULL, reader, &seen[i]);
    pthread_join(w, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(r[i], NULL);
    printf("%d %d %ld\n", config.version, config.limit, seen[0] + seen[1] + seen[2]);
    return 0;
}
