/* OpenMP: a shared counter and a maximum updated with atomic (update, capture, write/read), the
 * results read after the region: safe. */
#include <stdio.h>

long count;
int flag;

int main(void)
{
    long seen = 0;
#pragma omp parallel for num_threads(4) reduction(+ : seen)
    for (int i = 0; i < 1000; i++) {
#pragma omp atomic
        count++;
        long before;
#pragma omp atomic capture
        before = count++;
        seen += before > 0;
        if (i == 500) {
#pragma omp atomic write
            flag = 1;
        }
        int f;
#pragma omp atomic read
        f = flag;
        (void)f;
    }
    printf("%ld %ld %d\n", count, seen, flag);
    return 0;
}
