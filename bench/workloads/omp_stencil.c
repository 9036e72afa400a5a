/* An OpenMP workload for bench/race-omp.sh: a Jacobi sweep over a grid (a parallel for per
 * sweep: a fork, a join and their barriers each), a histogram with atomics, a sum in critical
 * sections per thread, and a task tree with dependences. Prints a checksum.
 * usage: omp_stencil [N] [SWEEPS] */
#include <stdio.h>
#include <stdlib.h>

static double *grid, *next;
static long histogram[64];
static double total;

static long fib_tasks(int n)
{
    if (n < 12) {
        long a = 0, b = 1;
        for (int i = 0; i < n; i++) {
            long t = a + b;
            a = b;
            b = t;
        }
        return a;
    }
    long x = 0, y = 0;
#pragma omp task shared(x) depend(out : x)
    x = fib_tasks(n - 1);
#pragma omp task shared(y) depend(out : y)
    y = fib_tasks(n - 2);
#pragma omp taskwait
    return x + y;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 512, sweeps = argc > 2 ? atoi(argv[2]) : 100;
    grid = calloc((size_t)n * n, sizeof *grid);
    next = calloc((size_t)n * n, sizeof *next);
    if (!grid || !next)
        return 1;
    for (int i = 0; i < n; i++)
        grid[i] = 100.0;   /* a hot top edge */
    for (int s = 0; s < sweeps; s++) {
#pragma omp parallel for num_threads(2)
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                next[i * n + j] = 0.25 * (grid[(i - 1) * n + j] + grid[(i + 1) * n + j] + grid[i * n + j - 1] +
                                          grid[i * n + j + 1]);
        double *t = grid;
        grid = next;
        next = t;
        for (int i = 0; i < n; i++)
            grid[i] = 100.0;
    }
#pragma omp parallel num_threads(2)
    {
        double mine = 0;
#pragma omp for
        for (int i = 0; i < n * n; i++) {
            int b = (int)grid[i] & 63;
#pragma omp atomic
            histogram[b]++;
            mine += grid[i];
        }
#pragma omp critical
        total += mine;
    }
    long f = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    f = fib_tasks(22);
    long h = 0;
    for (int i = 0; i < 64; i++)
        h += histogram[i] * i;
    printf("%.3f %ld %ld\n", total, h, f);
    free(grid);
    free(next);
    return 0;
}
