/* A compressor's memory at exit, for bench/leak-alloc.sh: it reserves large buffers for its
 * worst case (MIB MiB in all, default 512) and uses a small part of each, plus a few thousand
 * small work blocks; all stay allocated (reachable) until exit. Prints a checksum.
 * usage: bigbuf [MIB] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    long mib = argc > 1 ? atol(argv[1]) : 512;
    enum { BUFS = 8 };
    static unsigned char *bufs[BUFS];
    static void *blocks[4096];
    unsigned long sum = 0;
    for (int i = 0; i < BUFS; i++) {
        bufs[i] = malloc((size_t)mib * 1024 * 1024 / BUFS);
        memset(bufs[i], i + 1, 256 * 1024);   /* the part this input needs */
    }
    for (int round = 0; round < 200; round++)
        for (int b = 0; b < 4096; b++) {
            free(blocks[b]);
            blocks[b] = malloc(32 + (b * 7 + round) % 200);
            memset(blocks[b], round, 32);
        }
    for (int i = 0; i < BUFS; i++)
        for (size_t k = 0; k < 256 * 1024; k += 4096)
            sum += bufs[i][k];
    printf("checksum %lu\n", sum);
    return 0;
}
