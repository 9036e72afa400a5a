/* OpenMP: the main thread writes shared data between parallel regions (a scalar, a pointer
 * swapped between two buffers) and every thread reads it in the next region; the threads' writes
 * in one region are read by others after it: safe (fork and join order them). Two threads: with
 * more than the CPUs, libomp's workers sleep between regions and the pthread mutex that wakes
 * them orders the main thread's writes anyway, which would hide a missing fork edge. */
#include <stdio.h>

#define N 256
static int buf_a[N], buf_b[N];
int *src = buf_a, *dst = buf_b;
int scale;

int main(void)
{
    for (int i = 0; i < N; i++)
        buf_a[i] = i;
    for (int round = 1; round <= 40; round++) {
        scale = round % 3 + 1;
#pragma omp parallel for num_threads(2)
        for (int i = 0; i < N; i++)
            dst[i] = src[N - 1 - i] * scale % 1000;
        int *t = src;
        src = dst;
        dst = t;
    }
    long s = 0;
    for (int i = 0; i < N; i++)
        s += src[i];
    printf("%ld\n", s);
    return 0;
}
