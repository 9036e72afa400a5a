/* Data that equals a fill pattern, written on purpose: the classic 0xDEDEDEDE, runs of every
 * byte value, 0xDE bytes; all read in branches. Nothing may be reported. */
#include "common.h"

int main(void)
{
    unsigned *w = opaque(malloc(64 * sizeof *w));
    for (int i = 0; i < 64; i++)
        w[i] = 0xDEDEDEDEu;
    unsigned char *bytes = opaque(malloc(256 * 16));
    for (int v = 0; v < 256; v++)
        memset(bytes + 16 * v, v, 16);
    int hits = 0;
    for (int i = 0; i < 64; i++)
        if (w[i] == 0xDEDEDEDEu)
            hits++;
    for (int i = 0; i < 256 * 16; i++)
        if (bytes[i] == (unsigned char)(i / 16))
            hits++;
    long *l = opaque(malloc(32 * sizeof *l));
    for (int i = 0; i < 32; i++)
        l[i] = (long)0xfedcba9876543210ull ^ i;
    for (int i = 0; i < 32; i++)
        if ((l[i] & 0xff) > 0x0f)
            hits++;
    printf("%d\n", hits);
    free(w), free(bytes), free(l);
    return 0;
}
