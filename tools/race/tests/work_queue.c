// race-test: a work queue between threads that stay alive (a thread pool): producers fill
// heap items without a lock and push them under a mutex, consumers pop them, read them
// without a lock and free them; the allocator hands the same blocks out again and again: safe
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITEMS 20000
struct item { struct item *next; int seq; char text[52]; };
struct item *head;
int produced_all;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;

static __attribute__((noinline)) struct item *make_item(int seq)
{
    struct item *it = malloc(sizeof *it);
    it->seq = seq;
    memset(it->text, 'a' + seq % 26, sizeof it->text);
    return it;
}

static __attribute__((noinline)) long use_item(struct item *it)
{
    long v = it->seq + it->text[it->seq % 52];
    free(it);
    return v;
}

static void *producer(void *arg)
{
    int base = (int)(long)arg;
    for (int i = 0; i < ITEMS / 2; i++) {
        struct item *it = make_item(base + i);
        pthread_mutex_lock(&m);
        it->next = head;
        head = it;
        pthread_cond_signal(&nonempty);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    long *sum = arg;
    for (;;) {
        pthread_mutex_lock(&m);
        while (!head && !produced_all)
            pthread_cond_wait(&nonempty, &m);
        struct item *it = head;
        if (it)
            head = it->next;
        pthread_mutex_unlock(&m);
        if (!it)
            return NULL;
        *sum += use_item(it);
    }
}

int main(void)
{
    pthread_t p[2], c[2];
    long sums[2] = {0};
    for (long i = 0; i < 2; i++)
        pthread_create(&c[i], NULL, consumer, &sums[i]);
    for (long i = 0; i < 2; i++)
        pthread_create(&p[i], NULL, producer, (void *)(i * ITEMS / 2));
    for (int i = 0; i < 2; i++)
        pthread_join(p[i], NULL);
    pthread_mutex_lock(&m);
    produced_all = 1;
    pthread_cond_broadcast(&nonempty);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < 2; i++)
        pthread_join(c[i], NULL);
    printf("sum %ld\n", sums[0] + sums[1]);
    return 0;
}
