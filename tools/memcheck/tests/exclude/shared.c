/* memcheck.exclude_kinds=shared: accesses through a pointer into a MAP_SHARED mapping (made
 * after start-up, so the tool rereads the mappings) are skipped and counted; a heap overflow
 * beside them is still found. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static void *volatile keep;

__attribute__((noinline)) static int sum(const int *p, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += p[i];
    return s;
}

__attribute__((noinline)) static void fill(int *p, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = i;
}

int main(void)
{
    int *shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shm == MAP_FAILED)
        return 1;
    keep = shm;
    fill(keep, 100);
    int s = sum(keep, 100);
    int *h = malloc(9 * sizeof *h);   /* 36 bytes: h[9] lands in the allocator's slack */
    keep = h;
    fill(keep, 10);
    printf("%d\n", s);
    free(h);
    return 0;
}
