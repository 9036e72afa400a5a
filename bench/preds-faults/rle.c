/* rle: run-length coding of stdin. `rle e` encodes (a run of 3 to 130 equal bytes becomes
 * 0x80 + length - 3 and the byte; other bytes go in literal blocks of 1 to 128: length - 1,
 * then the bytes), `rle d` decodes, `rle t` encodes, decodes and checks the round trip,
 * printing sizes and a checksum. A seeded-fault program of bench/preds-faults (FAULT=k
 * selects fault k; 0 is the reference). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAULT
#define FAULT 0
#endif
#define MAX_INPUT (1 << 20)

static unsigned char in[MAX_INPUT], enc[MAX_INPUT * 2], dec[MAX_INPUT];

static inline size_t run_length(const unsigned char *p, size_t left)
{
    size_t n = 1;
#if FAULT == 1
    while (n < left && n < 131 && p[n] == p[0])        /* FAULT-1: a run may be one too long */
#else
    while (n < left && n < 130 && p[n] == p[0])        /* FAULT-1 */
#endif
        n++;
    return n;
}

static size_t encode(const unsigned char *src, size_t n, unsigned char *out)
{
    size_t o = 0, lit_start = 0, lit = 0;
    for (size_t i = 0; i < n;) {
        size_t run = run_length(src + i, n - i);
#if FAULT == 2
        if (run >= 4) {                                /* FAULT-2: runs of 3 stay literal */
#else
        if (run >= 3) {                                /* FAULT-2 */
#endif
            if (lit) {
                out[o++] = (unsigned char)(lit - 1);
                memcpy(out + o, src + lit_start, lit);
                o += lit, lit = 0;
            }
            out[o++] = (unsigned char)(0x80 + run - 3);
            out[o++] = src[i];
            i += run;
            continue;
        }
        if (!lit)
            lit_start = i;
        lit++, i++;
#if FAULT == 5
        if (lit == 129) {                              /* FAULT-5: literal blocks one byte too long */
#else
        if (lit == 128) {                              /* FAULT-5 */
#endif
            out[o++] = (unsigned char)(lit - 1);
            memcpy(out + o, src + lit_start, lit);
            o += lit, lit = 0;
        }
    }
    if (lit) {
        out[o++] = (unsigned char)(lit - 1);
        memcpy(out + o, src + lit_start, lit);
        o += lit;
    }
    return o;
}

/* The decoded size, or -1 on a malformed stream. */
static long decode(const unsigned char *src, size_t n, unsigned char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        unsigned char h = src[i++];
        switch (h >> 7) {
        case 1: {
            size_t len = (size_t)(h & 0x7f) + 3;
            if (i >= n || o + len > cap)
                return -1;
#if FAULT == 3
            memset(out + o, src[i++], len - (len > 100));  /* FAULT-3: long runs lose a byte */
            o += len - (len > 100);
#else
            memset(out + o, src[i++], len);                /* FAULT-3 */
            o += len;
#endif
            break;
        }
        default: {
            size_t len = (size_t)h + 1;
            if (i + len > n || o + len > cap)
                return -1;
            memcpy(out + o, src + i, len);
            i += len, o += len;
            break;
        }
        }
    }
    return (long)o;
}

static unsigned checksum(const unsigned char *p, size_t n)
{
    unsigned s = 0;
    for (size_t i = 0; i < n; i++)
#if FAULT == 4
        s = s * 31 + (p[i] & 0x7f);                    /* FAULT-4: the top bit is not summed */
#else
        s = s * 31 + p[i];                             /* FAULT-4 */
#endif
    return s;
}

int main(int argc, char **argv)
{
    char mode = argc > 1 ? argv[1][0] : 't';
    size_t n = fread(in, 1, sizeof in, stdin);
    if (mode == 'e') {
        fwrite(enc, 1, encode(in, n, enc), stdout);
        return 0;
    }
    if (mode == 'd') {
        long m = decode(in, n, dec, sizeof dec);
        if (m < 0) {
            fprintf(stderr, "rle: malformed input\n");
            return 1;
        }
        fwrite(dec, 1, (size_t)m, stdout);
        return 0;
    }
    size_t e = encode(in, n, enc);
    long m = decode(enc, e, dec, sizeof dec);
    if (m != (long)n || memcmp(in, dec, n) != 0) {
        fprintf(stderr, "rle: round trip failed\n");
        abort();
    }
    printf("%zu bytes, %zu encoded, checksum %08x\n", n, e, checksum(in, n));
    return 0;
}
