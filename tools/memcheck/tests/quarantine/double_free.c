/* A block freed twice while the quarantine holds it: the second free reaches the allocator
 * right after the first, as without vigil (glibc aborts with "double free"), and a realloc of
 * a held block does not leave it to be released again later. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile keep;

int main(int argc, char **argv)
{
    (void)argv;
    char *r = malloc(32);
    keep = r;
    free(r);
    for (int i = 0; i < 10; i++)
        free(malloc(16));
    if (argc > 1) {
        printf("before\n");
        fflush(stdout);
        free(keep);   /* the double free: glibc's abort, with or without vigil */
        printf("after\n");
    }
    printf("done\n");
    return 0;
}
