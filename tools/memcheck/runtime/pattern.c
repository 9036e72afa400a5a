/* The memory checker's fill pattern (pattern.h). */
#include "pattern.h"

#include <string.h>

int mc_pattern_parse(const char *text, uint64_t seed, uint8_t pattern[8])
{
    if (strcmp(text, "random") == 0) {
        unsigned n = 0;
        while (n < 8) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint8_t b = (uint8_t)(0x80 + (seed >> 33) % 0x7f);   /* 0x80..0xfe */
            int dup = 0;
            for (unsigned i = 0; i < n; i++)
                dup |= pattern[i] == b;
            if (!dup)
                pattern[n++] = b;
        }
        return 0;
    }
    const char *p = text;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        p += 2;
    size_t len = strlen(p);
    if (len != 2 && len != 4 && len != 8 && len != 16)
        return -1;
    unsigned nbytes = (unsigned)len / 2;
    uint8_t bytes[8];
    for (unsigned i = 0; i < nbytes; i++) {
        unsigned v = 0;
        for (int k = 0; k < 2; k++) {
            char c = p[2 * i + k];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
            else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
            else return -1;
        }
        bytes[i] = (uint8_t)v;
    }
    for (unsigned i = 0; i < 8; i++)
        pattern[i] = bytes[i % nbytes];
    return 0;
}

void mc_pattern_fill(const uint8_t pattern[8], uintptr_t from, uintptr_t to)
{
    uint64_t word;
    memcpy(&word, pattern, 8);   /* little-endian: byte i of an aligned word is pattern[i] */
    while (from < to && (from & 7))
        *(uint8_t *)from = pattern[from & 7], from++;
    for (; from + 8 <= to; from += 8)
        *(uint64_t *)from = word;
    for (; from < to; from++)
        *(uint8_t *)from = pattern[from & 7];
}

/* The bytes a load read: those of value (little-endian) for [a, a + n), n at most 8; memory
 * for the others (all when n is 0). */
struct loaded {
    uintptr_t a;
    uint64_t value;
    size_t n;
};

static inline int is_pattern(const uint8_t pattern[8], const struct loaded *l, uintptr_t c)
{
    uint8_t byte = c - l->a < l->n ? (uint8_t)(l->value >> 8 * (c - l->a)) : *(const uint8_t *)c;
    return byte == pattern[c & 7];
}

static int pattern_read(const uint8_t pattern[8], const struct mc_block *b, uintptr_t a, size_t size, uint32_t mask,
                        struct loaded l, size_t *first)
{
    uintptr_t lo = b->start, hi = b->start + b->size;
    size_t used = 0, run = 0;
    for (size_t i = 0; i < size; i++) {
        int is_used = i >= 8 ? !mask : !mask || (mask >> i & 1);
        uintptr_t c = a + i;
        if (!is_used || c < lo || c >= hi)
            continue;
        used++;
        run = is_pattern(pattern, &l, c) ? run + 1 : 0;
        if (run == 4) {
            *first = c - 3 - lo;
            return 1;
        }
    }
    if (used >= 4 || used == 0)
        return 0;
    uintptr_t first_used = 0, last_used = 0;
    for (size_t i = 0; i < size && i < 8; i++)
        if ((!mask || (mask >> i & 1)) && a + i >= lo && a + i < hi) {
            if (!is_pattern(pattern, &l, a + i))
                return 0;
            if (!first_used)
                first_used = a + i;
            last_used = a + i;
        }
    /* the bytes on both sides too: at the edge of written data (a list growing into
     * never-written memory) a data byte equal to the pattern has never-written bytes on one side */
    if ((first_used > lo && !is_pattern(pattern, &l, first_used - 1)) || (last_used + 1 < hi && !is_pattern(pattern, &l, last_used + 1)))
        return 0;
    uintptr_t g = a & ~(uintptr_t)3, gl = g < lo ? lo : g, gh = g + 4 > hi ? hi : g + 4;
    if (gh <= gl || gh - gl < (b->size < 4 ? b->size : 4))
        return 0;
    for (uintptr_t c = gl; c < gh; c++)
        if (!is_pattern(pattern, &l, c))
            return 0;
    *first = (a > gl ? a : gl) - lo;
    return 1;
}

int mc_pattern_read(const uint8_t pattern[8], const struct mc_block *b, uintptr_t a, size_t size, uint32_t mask,
                    size_t *first)
{
    return pattern_read(pattern, b, a, size, mask, (struct loaded){0}, first);
}

int mc_pattern_value(const uint8_t pattern[8], const struct mc_block *b, uintptr_t a, size_t size, uint32_t mask,
                     uint64_t value, size_t *first)
{
    size = size < 8 ? size : 8;
    return pattern_read(pattern, b, a, size, mask, (struct loaded){a, value, size}, first);
}
