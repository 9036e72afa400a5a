/* A workload for the race tool's resets of large blocks (issue 36): two threads each allocate a
 * block of SIZE KiB, write one int in every STRIDE-th page of it, read them back, and free it,
 * ROUNDS times; the allocator hands the same blocks out again, so every allocation and every
 * free of the block resets its cells. Prints a checksum.
 * usage: race_reuse [ROUNDS] [SIZE_KIB] [STRIDE] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long rounds = 2000, size_kib = 256, stride = 16;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *worker(void *arg)
{
    long seed = (long)(size_t)arg, sum = 0;
    size_t bytes = (size_t)size_kib * 1024, step = (size_t)stride * 4096;
    for (long r = 0; r < rounds; r++) {
        int *p = malloc(bytes);
        if (!p)
            return NULL;
        for (size_t off = 0; off < bytes; off += step)
            p[off / sizeof *p] = (int)(r + seed + (long)off);
        for (size_t off = 0; off < bytes; off += step)
            sum += p[off / sizeof *p];
        free(p);
    }
    pthread_mutex_lock(&lock);
    total += sum;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rounds = atol(argv[1]);
    if (argc > 2)
        size_kib = atol(argv[2]);
    if (argc > 3)
        stride = atol(argv[3]);
    if (rounds < 1 || size_kib < 1 || stride < 1) {
        fprintf(stderr, "usage: race_reuse [ROUNDS] [SIZE_KIB] [STRIDE]\n");
        return 2;
    }
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)(size_t)(i + 1));
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("%ld\n", total);
    return 0;
}
