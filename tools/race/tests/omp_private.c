/* OpenMP: parallel for whose temporaries are private (a global and a local named in private,
 * firstprivate, lastprivate), each iteration writing its own slot of a shared array, summed by another
 * parallel for: safe. */
#include <stdio.h>

#define N 512
int tmp;
static int out[N];

int main(void)
{
    int scale = 3, last = 0, t2 = 0;
#pragma omp parallel for num_threads(4) private(tmp, t2) firstprivate(scale) lastprivate(last)
    for (int i = 0; i < N; i++) {
        tmp = i * scale;
        t2 = tmp + 1;
        out[i] = t2;
        last = i;
    }
    long s = 0;
#pragma omp parallel for num_threads(4) reduction(+ : s)
    for (int i = 0; i < N; i++)
        s += out[N - 1 - i];   /* another thread's slots */
    printf("%ld %d\n", s, last);
    return 0;
}
