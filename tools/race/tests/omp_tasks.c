/* OpenMP tasks: a chain of tasks ordered by depend(out)/depend(in) on one variable, tasks
 * writing results that the creator reads after taskwait, a task reading what its creator wrote
 * before creating it: safe. Two sibling tasks without dependences that both write one variable:
 * racy. */
#include <sched.h>
#include <stdio.h>

int stage, result[8], input, a, b;
int racy, started;

/* The two racy tasks wait (relaxed atomics: no ordering) after their write until both have
 * started, so that two threads run them; a bounded wait, in case one thread runs both. The write
 * comes first: a long wait before it would end the sampling burst the task began in. */
static void meet(void)
{
    __atomic_fetch_add(&started, 1, __ATOMIC_RELAXED);
    for (int k = 0; k < 200000 && __atomic_load_n(&started, __ATOMIC_RELAXED) < 2; k++)
        sched_yield();
}

static int work(int x)
{
    return x * 3 + 1;
}

int main(void)
{
#pragma omp parallel num_threads(4)
#pragma omp single
    {
#pragma omp task depend(out : stage)
        stage = 1;
#pragma omp task depend(inout : stage)
        stage = work(stage);
#pragma omp task depend(in : stage)
        a = stage + 1;
#pragma omp task depend(in : stage)
        b = stage + 2;
        input = 5;
        for (int i = 0; i < 8; i++) {
#pragma omp task firstprivate(i)
            result[i] = work(input + i);
        }
#pragma omp taskwait
        int s = 0;
        for (int i = 0; i < 8; i++)
            s += result[i];
        printf("%d %d %d %d\n", s, stage, a, b);
#pragma omp task
        {
            racy = work(1);   // RACE
            meet();
        }
#pragma omp task
        {
            racy = work(2);   // RACE
            meet();
        }
    }
    return racy < 0;
}
