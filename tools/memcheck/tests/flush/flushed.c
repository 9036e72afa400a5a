/* The flush hook: an overflow, then a report written while the program runs
 * (vigil_flush_report), then _exit, which writes no final report: what the run directory holds
 * is the flushed report. */
#include <stdlib.h>
#include <unistd.h>
#include <vigil/vigil.h>

static void *volatile keep;

__attribute__((noinline)) static void overflow(int *a, int n)
{
    a[n] = n;   /* one past the end */
}

int main(void)
{
    int *a = malloc(9 * sizeof *a);   /* 36 bytes: a[9] lands in the allocator's slack, harmless */
    keep = a;
    overflow(keep, 9);
    if (vigil_flush_report() != 0)
        return 3;
    _exit(0);
}
