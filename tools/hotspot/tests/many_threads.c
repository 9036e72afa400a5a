/* 40 short threads, one after the other, then the number of open file descriptors below 256 (on
 * stdout: the program's own, as in the plain build) and in all (on stderr: the profiler keeps
 * one, the main thread's clock, up high). A clock left open by a thread that ended would show. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

static void *worker(void *arg)
{
    unsigned long x = (unsigned long)arg;
    for (unsigned long i = 0; i < 3000000; i++)
        x = x * 6364136223846793005ul + i;
    sink += x;
    return NULL;
}

int main(void)
{
    for (long i = 0; i < 40; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, (void *)i) != 0)
            return 1;
        pthread_join(t, NULL);
    }
    int low = 0, all = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.') {
            all++;
            low += atoi(e->d_name) < 256;
        }
    if (d)
        closedir(d);
    printf("many_threads: 40 threads joined, %d descriptors open below 256\n", low);
    fprintf(stderr, "many_threads: %d descriptors open\n", all);
    return 0;
}
