/* Threads running the same code (tests/e2e/run.sh thread_counts_check): every site's executions
 * must be counted exactly, whichever thread ran them and however it ended (returned from its
 * start routine, pthread_exit from a nested call, or still running at the report: the main
 * thread, and a pool thread that waits for work forever), in mode=off and adaptive. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CALLS 3000
#define ITERS 2000

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long hot(unsigned long seed)
{
    unsigned long s = seed;
    for (int i = 0; i < ITERS; i++)   /* a call-free loop: its countdown is batched in a register */
        s = s * 6364136223846793005ul + (s >> 29);
    return s;
}

__attribute__((noinline)) static void rare(int id)
{
    sink += (unsigned long)id;
}

__attribute__((noinline)) static void leave(void *ret)
{
    pthread_exit(ret);
}

__attribute__((noinline)) static void *worker(void *arg)
{
    long id = (long)arg;
    unsigned long t = 0;
    for (int k = 0; k < CALLS; k++)
        t += hot(t + (unsigned long)k);
    rare((int)id);
    sink += t;
    if (id == 1)
        leave(NULL);   /* this thread ends by pthread_exit */
    return NULL;
}

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_done = PTHREAD_COND_INITIALIZER;
static int pool_finished;

/* A pool's thread: does its share, then waits for work that never comes (never joined). */
static void *pool_thread(void *arg)
{
    worker(arg);
    pthread_mutex_lock(&pool_lock);
    pool_finished = 1;
    pthread_cond_broadcast(&pool_done);
    for (;;)
        pthread_cond_wait(&pool_done, &pool_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 4;
    pthread_t th[16], pool;
    if (nthreads < 1 || nthreads > 16)
        return 2;
    if (pthread_create(&pool, NULL, pool_thread, (void *)100) != 0)
        return 1;
    pthread_mutex_lock(&pool_lock);
    while (!pool_finished)
        pthread_cond_wait(&pool_done, &pool_lock);
    pthread_mutex_unlock(&pool_lock);
    for (long i = 0; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)(i + 1)) != 0)
            return 1;
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    worker((void *)0);   /* the main thread too: its countdowns are read by the report */
    printf("%d threads done\n", nthreads);
    return 0;
}
