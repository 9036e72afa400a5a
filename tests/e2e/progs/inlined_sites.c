/* Sites in code the optimizer inlines carry the inlined function's name and lines: the loop and
 * the branches of del_ele, inlined into unblock_process, inlined into main at -O2, are del_ele's
 * in `vigil sites` and `vigil stats` (tests/e2e/run.sh inlined_sites_check). */
#include <stdio.h>
#include <stdlib.h>

static int del_ele(int *list, int n, int x)
{
    for (int i = 0; i < n; i++) {
        if (list[i] == x) {   /* LINE:del_ele_test */
            list[i] = list[n - 1];
            return n - 1;
        }
    }
    return n;
}

static int unblock_process(int *list, int n, int x)
{
    if (x % 3 == 1)   /* LINE:unblock_test */
        n = del_ele(list, n, x);
    return n;
}

int main(int argc, char **argv)
{
    int list[64];
    int n = 64, rounds = argc > 1 ? atoi(argv[1]) : 100;
    for (int i = 0; i < 64; i++)
        list[i] = i * 7 % 64;
    for (int r = 0; r < rounds && n > 0; r++)
        n = unblock_process(list, n, r % 64);
    printf("%d left\n", n);
    return 0;
}
