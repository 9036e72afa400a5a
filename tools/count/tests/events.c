/* The count tool's test program (tools/count/tests/run.sh): a known number of each event.
 *
 * argv[1] = ROUNDS (default 1). Each round allocates 100 ints three calls below main
 * (deep1 -> deep2 -> deep3 -> malloc), stores and loads each through a volatile pointer,
 * frees it, locks and unlocks a mutex once, and stores a flag with release and loads it with
 * acquire (atomic builtins, no call). Then one malloc, one realloc and one free, and one
 * thread that locks and unlocks the mutex once and waits on a condition variable (its mutex:
 * one lock, then the wait's release and acquisition, one unlock), which main signals once it
 * knows the thread waits (a semaphore, then that mutex: one lock, one unlock); and
 * pthread_once twice and a barrier of one thread once. So, whatever ROUNDS is:
 *   lock = unlock = ROUNDS + 4; thread_start = thread_exit = thread_join = 1; fork_child = 0;
 *   realloc_free = realloc_alloc = 1; sem_post = sem_wait = 1; barrier_arrive =
 *   barrier_depart = 1; once_done = 1, once_pass = 2; cond_signal = cond_wake = 1;
 *   atomic_release = atomic_acquire = ROUNDS (in every mode: they are recorded always);
 * and each extra round adds exactly one alloc of 400 bytes, one free, at least 100 loads
 * and 100 stores of 4 bytes, and, in a build with VIGIL_CC_PROBE_CALLS=1, exactly 7 calls
 * (deep1, deep2, deep3, malloc, free, lock, unlock). stdout gets a buffer of its own (no
 * allocation by stdio). */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long total;
static char outbuf[4096];

static pthread_mutex_t cv_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t waiting;
static int go, flag, once_runs;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *worker(void *arg)
{
    pthread_mutex_lock(&mu);
    total += (long)arg;
    pthread_mutex_unlock(&mu);
    pthread_mutex_lock(&cv_mu);
    sem_post(&waiting);            /* main takes cv_mu only once the wait below released it */
    while (!go)
        pthread_cond_wait(&cv, &cv_mu);
    pthread_mutex_unlock(&cv_mu);
    return NULL;
}

static void count_once(void)
{
    once_runs++;
}

/* Three frames of the program's own under main, so that an allocation stack has at least 4. */
__attribute__((noinline)) static int *deep3(size_t n)
{
    return malloc(n);
}

__attribute__((noinline)) static int *deep2(size_t n)
{
    int *p = deep3(n);
    __asm__ volatile("" ::: "memory");   /* not a tail call */
    return p;
}

__attribute__((noinline)) static int *deep1(size_t n)
{
    int *p = deep2(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    long sum = 0;
    for (int r = 0; r < rounds; r++) {
        volatile int *a = (volatile int *)deep1(100 * sizeof(int));
        if (!a)
            return 1;
        for (int i = 0; i < 100; i++)
            a[i] = i * 3 + r;
        for (int i = 0; i < 100; i++)
            sum += a[i];
        free((void *)a);
        pthread_mutex_lock(&mu);
        total++;
        pthread_mutex_unlock(&mu);
        __atomic_store_n(&flag, r, __ATOMIC_RELEASE);
        sum += __atomic_load_n(&flag, __ATOMIC_ACQUIRE) - r;
    }

    /* A block that grows past what can stay in place. */
    char *s = malloc(16);
    if (!s)
        return 1;
    strcpy(s, "grown");
    char *t = realloc(s, 1 << 20);
    if (!t)
        return 1;
    printf("%s\n", t);
    free(t);

    pthread_t th;
    sem_init(&waiting, 0, 0);
    if (pthread_create(&th, NULL, worker, (void *)sum) != 0)
        return 1;
    sem_wait(&waiting);
    pthread_mutex_lock(&cv_mu);
    go = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&cv_mu);
    if (pthread_join(th, NULL) != 0)
        return 1;
    pthread_once(&once, count_once);
    pthread_once(&once, count_once);
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 1);
    pthread_barrier_wait(&barrier);
    pthread_barrier_destroy(&barrier);
    total += once_runs;
    printf("rounds %d sum %ld total %ld\n", rounds, sum, total);
    return 0;
}
