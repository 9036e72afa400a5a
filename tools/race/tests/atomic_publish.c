// race-test: plain data published through atomics, with no lock anywhere: a flag stored with
// release and loaded with acquire (GNU builtins), a heap object published by a C11 release
// store of its pointer, a seq_cst ping-pong, and a single-producer single-consumer ring of
// 64 slots carrying 100000 items (hot: the edges must be seen outside bursts too): safe
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define ITEMS 100000
#define RING 64
int payload[16];
int ready;
struct message { int id; int words[6]; };
_Atomic(struct message *) mailbox;
atomic_int turn;
int shared_counter;
int ring[RING];
unsigned head, tail;   /* head: consumer's, tail: producer's; both through __atomic builtins */

static __attribute__((noinline)) void fill(void)
{
    for (int i = 0; i < 16; i++)
        payload[i] = i * i;
}

static __attribute__((noinline)) long drain(void)
{
    long sum = 0;
    for (int i = 0; i < 16; i++)
        sum += payload[i];
    return sum;
}

static __attribute__((noinline)) void put(int value)
{
    unsigned t = __atomic_load_n(&tail, __ATOMIC_RELAXED);
    while (t - __atomic_load_n(&head, __ATOMIC_ACQUIRE) == RING)
        ;
    ring[t % RING] = value;
    __atomic_store_n(&tail, t + 1, __ATOMIC_RELEASE);
}

static __attribute__((noinline)) int get(void)
{
    unsigned h = __atomic_load_n(&head, __ATOMIC_RELAXED);
    while (__atomic_load_n(&tail, __ATOMIC_ACQUIRE) == h)
        ;
    int value = ring[h % RING];
    __atomic_store_n(&head, h + 1, __ATOMIC_RELEASE);
    return value;
}

static void *producer(void *arg)
{
    (void)arg;
    fill();
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    struct message *m = malloc(sizeof *m);
    m->id = 7;
    for (int i = 0; i < 6; i++)
        m->words[i] = i + 100;
    atomic_store_explicit(&mailbox, m, memory_order_release);
    for (int r = 0; r < 10; r++) {
        while (atomic_load(&turn) != 0)
            ;
        shared_counter += 3;
        atomic_store(&turn, 1);
    }
    for (int i = 0; i < ITEMS; i++)
        put(i);
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, producer, NULL);
    while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
        ;
    long sum = drain();
    struct message *m;
    while (!(m = atomic_load_explicit(&mailbox, memory_order_acquire)))
        ;
    for (int i = 0; i < 6; i++)
        sum += m->words[i] + m->id;
    free(m);
    for (int r = 0; r < 10; r++) {
        while (atomic_load(&turn) != 1)
            ;
        shared_counter *= 2;
        atomic_store(&turn, 0);
    }
    long items = 0;
    for (int i = 0; i < ITEMS; i++)
        items += get();
    pthread_join(t, NULL);
    printf("sum %ld counter %d items %ld\n", sum, shared_counter, items);
    return 0;
}
