/* The 30-second tour: a hot loop and a rarely taken path. Built with vigil-cc, the hot loop's
 * dispatch check falls to the floor rate (0.1%) while the rare path stays sampled at 100%. */
#include <stdio.h>
#include <stdlib.h>

/* noinline: vigil-cc checks the code as optimized, and an inlined rare path would be part of
 * main's loop instead of a site of its own. */
static __attribute__((noinline)) int rare_path(int i)   /* runs 4 times */
{
    char *note = malloc(32);
    snprintf(note, 32, "rare %d", i);
    int n = (int)note[5];
    free(note);
    return n;
}

static unsigned long mix(unsigned long h, unsigned long v)   /* runs 20 million times */
{
    return (h ^ v) * 0x100000001b3ul;
}

int main(int argc, char **argv)
{
    unsigned long h = 1469598103934665603ul;
    int rare = 0;
    for (unsigned long i = 0; i < 20000000; i++) {
        h = mix(h, i);
        if (i % 5000000 == 4999999)
            rare += rare_path((int)(i / 5000000));
    }
    printf("hash %lx rare %d\n", h, rare);
    return 0;
}
