/* OpenMP: parallel for with reduction (a sum and a max) over a shared array filled by another
 * parallel for, the results read by the main thread after the regions: safe. */
#include <stdio.h>

#define N 4096
static double v[N];

int main(void)
{
#pragma omp parallel for num_threads(4)
    for (int i = 0; i < N; i++)
        v[i] = (i * 7919) % 1000 / 10.0;
    double sum = 0, max = 0;
    long count = 0;
#pragma omp parallel for num_threads(4) reduction(+ : sum, count) reduction(max : max)
    for (int i = 0; i < N; i++) {
        double x = v[N - 1 - i];   /* another thread's chunk of the first loop */
        sum += x;
        count++;
        if (x > max)
            max = x;
    }
    printf("sum %.1f count %ld max %.1f\n", sum, count, max);
    return 0;
}
