/* The count tool's test program (tools/count/tests/run.sh): a known number of each event.
 *
 * argv[1] = ROUNDS (default 1). Each round allocates 100 ints three calls below main
 * (deep1 -> deep2 -> deep3 -> malloc), stores and loads each through a volatile pointer,
 * frees it, and locks and unlocks a mutex once. Then one malloc, one realloc and one free,
 * and one thread that locks and unlocks the mutex once. So, whatever ROUNDS is:
 *   lock = unlock = ROUNDS + 1; thread_start = thread_exit = thread_join = 1; fork_child = 0;
 *   realloc_free = realloc_alloc = 1;
 * and each extra round adds exactly one alloc of 400 bytes, one free, at least 100 loads
 * and 100 stores of 4 bytes, and, in a build with VIGIL_CC_PROBE_CALLS=1, exactly 7 calls
 * (deep1, deep2, deep3, malloc, free, lock, unlock). stdout gets a buffer of its own (no
 * allocation by stdio). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long total;
static char outbuf[4096];

static void *worker(void *arg)
{
    pthread_mutex_lock(&mu);
    total += (long)arg;
    pthread_mutex_unlock(&mu);
    return NULL;
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
    if (pthread_create(&th, NULL, worker, (void *)sum) != 0 || pthread_join(th, NULL) != 0)
        return 1;
    printf("rounds %d sum %ld total %ld\n", rounds, sum, total);
    return 0;
}
