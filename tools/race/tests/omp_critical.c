/* OpenMP: shared counters updated in critical sections (unnamed and named), omp locks (simple
 * and nested), read after the region: safe. */
#include <omp.h>
#include <stdio.h>

long hits, misses, locked, nested;
omp_lock_t lock;
omp_nest_lock_t nlock;

static void bump_nested(int depth)
{
    omp_set_nest_lock(&nlock);
    if (depth)
        bump_nested(depth - 1);
    else
        nested++;
    omp_unset_nest_lock(&nlock);
}

int main(void)
{
    omp_init_lock(&lock);
    omp_init_nest_lock(&nlock);
#pragma omp parallel for num_threads(4)
    for (int i = 0; i < 400; i++) {
        if (i % 3) {
#pragma omp critical
            hits++;
        } else {
#pragma omp critical(miss)
            misses++;
        }
        omp_set_lock(&lock);
        locked += i;
        omp_unset_lock(&lock);
        if (i % 50 == 0)
            bump_nested(2);
    }
    omp_destroy_lock(&lock);
    omp_destroy_nest_lock(&nlock);
    printf("%ld %ld %ld %ld\n", hits, misses, locked, nested);
    return 0;
}
