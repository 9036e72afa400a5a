/* OpenMP: each thread writes its slot, a barrier, each reads a neighbour's slot, a barrier;
 * 100 phases. Then a single thread writes a shared value (single's implicit barrier) and all read
 * it, and a master writes one behind an explicit barrier: safe. */
#include <omp.h>
#include <stdio.h>

#define T 4
static int slot[T];
static long seen[T];
int shared_value, master_value;

int main(void)
{
#pragma omp parallel num_threads(T)
    {
        int me = omp_get_thread_num(), n = omp_get_num_threads();
        for (int phase = 0; phase < 100; phase++) {
            slot[me] = phase * 10 + me;
#pragma omp barrier
            seen[me] += slot[(me + 1) % n];
#pragma omp barrier
        }
#pragma omp single
        shared_value = 42;
        seen[me] += shared_value;
#pragma omp master
        master_value = 7;
#pragma omp barrier
        seen[me] += master_value;
    }
    long s = 0;
    for (int i = 0; i < T; i++)
        s += seen[i];
    printf("%ld\n", s);
    return 0;
}
