// race-test: a single-threaded program (allocations, a mutex, a loop): the tool must change
// nothing, report nothing, and the exit status must be the program's
// single-threaded
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
long total;

int main(void)
{
    for (int i = 0; i < 20000; i++) {
        char *p = malloc(32 + i % 64);
        memset(p, i & 0xff, 32);
        pthread_mutex_lock(&m);
        total += (unsigned char)p[5];
        pthread_mutex_unlock(&m);
        free(p);
    }
    printf("total %ld\n", total);
    return 3;
}
