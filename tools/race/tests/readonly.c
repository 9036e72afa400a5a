// race-test: a table initialized by main before the threads start, then only read by three
// threads and by main: safe (initialization is ordered by creation; reads do not race)
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int table[64];
int *squares;   /* heap, allocated while one thread runs */

static __attribute__((noinline)) long sum_table(void)
{
    long s = 0;
    for (int i = 0; i < 64; i++)
        s += table[i] + squares[i];
    return s;
}

static void *reader(void *arg)
{
    long *out = arg;
    for (int k = 0; k < 4; k++)
        *out += sum_table();
    return NULL;
}

int main(void)
{
    squares = malloc(64 * sizeof *squares);
    for (int i = 0; i < 64; i++) {
        table[i] = i;
        squares[i] = i * i;
    }
    pthread_t t[3];
    long sums[3] = {0};
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, reader, &sums[i]);
    long mine = sum_table();
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("%ld %ld %ld %ld\n", sums[0], sums[1], sums[2], mine);
    free(squares);
    return 0;
}
