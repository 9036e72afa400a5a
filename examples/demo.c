/* The 30-second tour: a hot loop, a rarely taken path, and a leak on that path.
 *
 * Built with vigil-cc, the hot loop's dispatch check falls to the floor rate (0.1%) while the
 * rare path stays sampled at 100%. The rare path keeps only its latest note: each earlier one
 * is lost without a free, and `vigil run --tool leak` reports them with the line that
 * allocated them and the line that last touched them. */
#include <stdio.h>
#include <stdlib.h>

struct note {
    int seq;
    char text[28];
};

static struct note *latest;   /* the newest note; the one it replaces is never freed */

/* noinline: vigil-cc checks the code as optimized, and an inlined rare path would be part of
 * main's loop instead of a site of its own. */
static __attribute__((noinline)) int rare_path(int i)   /* runs 4 times */
{
    struct note *note = malloc(sizeof *note);
    snprintf(note->text, sizeof note->text, "rare %d", i);
    note->seq = i;
    latest = note;            /* the leak: the previous note is lost here */
    return (int)note->text[5];
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
    printf("hash %lx rare %d (latest note: %s)\n", h, rare, latest->text);
    return 0;
}
