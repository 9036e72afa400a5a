// Threads: a bounded queue with a mutex and two condition variables, a shared counter under a
// mutex, thread-local storage and C11 atomics. Output is printed after the joins only.
// e2e-link: -pthread
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define QUEUE_SIZE 8
#define ITEMS_PER_PRODUCER 20000
#define PRODUCERS 3
#define CONSUMERS 2

static struct {
    long items[QUEUE_SIZE];
    int head, tail, count, producers_left;
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
} queue = { .lock = PTHREAD_MUTEX_INITIALIZER, .not_empty = PTHREAD_COND_INITIALIZER,
            .not_full = PTHREAD_COND_INITIALIZER, .producers_left = PRODUCERS };

static _Atomic long atomic_total;
static __thread long thread_local_sum;

static void *produce(void *arg) {
    long base = (long)arg * 1000000;
    for (long i = 0; i < ITEMS_PER_PRODUCER; i++) {
        pthread_mutex_lock(&queue.lock);
        while (queue.count == QUEUE_SIZE) pthread_cond_wait(&queue.not_full, &queue.lock);
        queue.items[queue.tail] = base + i;
        queue.tail = (queue.tail + 1) % QUEUE_SIZE;
        queue.count++;
        pthread_cond_signal(&queue.not_empty);
        pthread_mutex_unlock(&queue.lock);
    }
    pthread_mutex_lock(&queue.lock);
    queue.producers_left--;
    pthread_cond_broadcast(&queue.not_empty);
    pthread_mutex_unlock(&queue.lock);
    return NULL;
}

static void *consume(void *arg) {
    (void)arg;
    long consumed = 0;
    for (;;) {
        pthread_mutex_lock(&queue.lock);
        while (queue.count == 0 && queue.producers_left > 0) pthread_cond_wait(&queue.not_empty, &queue.lock);
        if (queue.count == 0) { pthread_mutex_unlock(&queue.lock); break; }
        long item = queue.items[queue.head];
        queue.head = (queue.head + 1) % QUEUE_SIZE;
        queue.count--;
        pthread_cond_signal(&queue.not_full);
        pthread_mutex_unlock(&queue.lock);
        thread_local_sum += item;
        consumed++;
    }
    atomic_fetch_add_explicit(&atomic_total, thread_local_sum, memory_order_relaxed);
    return (void *)consumed;
}

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static void *count_up(void *arg) {
    for (int i = 0; i < 50000; i++) {
        pthread_mutex_lock(&counter_lock);
        counter += (long)arg;
        pthread_mutex_unlock(&counter_lock);
    }
    return NULL;
}

int main(void) {
    pthread_t producers[PRODUCERS], consumers[CONSUMERS], counters[4];
    for (long i = 0; i < CONSUMERS; i++) pthread_create(&consumers[i], NULL, consume, NULL);
    for (long i = 0; i < PRODUCERS; i++) pthread_create(&producers[i], NULL, produce, (void *)i);
    for (long i = 0; i < 4; i++) pthread_create(&counters[i], NULL, count_up, (void *)(i + 1));
    long consumed = 0;
    for (int i = 0; i < PRODUCERS; i++) pthread_join(producers[i], NULL);
    for (int i = 0; i < CONSUMERS; i++) { void *r; pthread_join(consumers[i], &r); consumed += (long)r; }
    for (int i = 0; i < 4; i++) pthread_join(counters[i], NULL);
    printf("consumed=%ld total=%ld counter=%ld main_tls=%ld\n", consumed, atomic_load(&atomic_total), counter, thread_local_sum);
    return 0;
}
