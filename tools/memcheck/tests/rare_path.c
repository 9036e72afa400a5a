/* An error on a rarely executed path (adaptive sampling: found in one run): the hot loop
 * falls to the floor rate, the error path keeps its 100% rate. Also inlined: the rare
 * function is static and small, the optimizer may put it into its caller. */
#include "common.h"

struct item { int key; int weight; };

static int on_error(struct item *it)
{
    if (it->weight > 10)              // MC uninitialized-read
        return 2;
    return 1;
}

int main(int argc, char **argv)
{
    (void)argv;
    long n = 20000000 + zero();
    struct item *items = opaque(malloc(16 * sizeof *items));
    for (int i = 0; i < 16; i++)
        items[i].key = i;             /* weight: never written */
    long sum = 0;
    for (long i = 0; i < n; i++) {
        sum += items[i & 15].key;
        if (i % 7000000 == 3 * argc)
            sum += on_error(&items[i & 15]);
    }
    printf("%ld\n", sum > 0 ? 1L : 0L);
    free(items);
    return 0;
}
