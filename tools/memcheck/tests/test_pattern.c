// unit-extra: tools/memcheck/runtime/pattern.c
/* The memory checker's fill pattern (tools/memcheck/runtime/pattern.c): parsing, filling at
 * any alignment, and the rule that tells uninitialized bytes from data that equals them. */
#include "../../../tests/unit/check.h"
#include "../runtime/pattern.h"

#include <stdlib.h>
#include <string.h>

static int distinct_high(const uint8_t p[8])
{
    for (int i = 0; i < 8; i++) {
        if (p[i] < 0x80 || p[i] == 0xff)
            return 0;
        for (int k = 0; k < i; k++)
            if (p[k] == p[i])
                return 0;
    }
    return 1;
}

int main(void)
{
    uint8_t p[8], q[8];
    /* parsing */
    CHECK(mc_pattern_parse("random", 1, p) == 0 && distinct_high(p), "random: 8 distinct bytes 0x80-0xfe");
    CHECK(mc_pattern_parse("random", 2, q) == 0 && memcmp(p, q, 8) != 0, "another seed, another pattern");
    CHECK(mc_pattern_parse("0xde", 0, p) == 0 && p[0] == 0xde && p[7] == 0xde, "0xde: every byte");
    CHECK(mc_pattern_parse("A1B2", 0, p) == 0 && p[0] == 0xa1 && p[1] == 0xb2 && p[6] == 0xa1 && p[7] == 0xb2,
          "two bytes repeat");
    CHECK(mc_pattern_parse("0x0102030405060708", 0, p) == 0 && p[0] == 1 && p[7] == 8, "eight bytes");
    const char *bad[] = {"", "0x", "0xd", "0x123456", "0xzz", "0x010203040506070809", "random2", "0x-1", "de de"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(mc_pattern_parse(bad[i], 0, p) == -1, "'%s' rejected", bad[i]);

    /* filling: byte at address a is pattern[a % 8], whatever the alignment of the range */
    mc_pattern_parse("random", 7, p);
    uint8_t *mem = aligned_alloc(64, 256);
    memset(mem, 0, 256);
    mc_pattern_fill(p, (uintptr_t)mem + 3, (uintptr_t)mem + 203);
    int right = 1;
    for (int i = 0; i < 256; i++) {
        uintptr_t a = (uintptr_t)mem + i;
        right &= (i >= 3 && i < 203) ? mem[i] == p[a & 7] : mem[i] == 0;
    }
    CHECK(right, "fill [3, 203) by address, nothing outside");

    struct mc_block b = {(uintptr_t)mem, 256};
    size_t at = 99;
    /* a used 4-byte load of filled bytes */
    CHECK(mc_pattern_read(p, &b, (uintptr_t)mem + 40, 4, 0, &at) == 1 && at == 40, "4 filled bytes: uninitialized at 40");
    /* written data */
    memset(mem + 48, 0x11, 8);
    CHECK(mc_pattern_read(p, &b, (uintptr_t)mem + 48, 8, 0, &at) == 0, "written bytes: initialized");
    /* one byte equal to the pattern by chance, beside never-written padding: not reported */
    const uint8_t pointer[8] = {p[((uintptr_t)mem + 64) & 7], 0x12, 0x34, 0x55, 0x55, 0, 0, 0};
    memcpy(mem + 64, pointer, 8);   /* 56..63 never written, as padding before a pointer field */
    CHECK(mc_pattern_read(p, &b, (uintptr_t)mem + 64, 8, 0, &at) == 0,
          "a pointer whose low byte equals the pattern, beside padding: initialized");
    /* a used byte of a 4-byte load (mask) */
    memset(mem + 100, 0x22, 3);   /* bytes 100..102 written, 103 not */
    CHECK(mc_pattern_read(p, &b, (uintptr_t)mem + 100, 4, 0x8, &at) == 0,
          "its used byte is filled but its group is partly written: not reported");
    CHECK(mc_pattern_read(p, &b, (uintptr_t)mem + 100, 4, 0x1, &at) == 0, "its used byte is written");
    CHECK(mc_pattern_read(p, &b, (uintptr_t)mem + 120, 4, 0x1, &at) == 1 && at == 120, "a used byte of a filled group");
    CHECK(mc_pattern_read(p, &b, (uintptr_t)mem + 121, 1, 0, &at) == 1 && at == 121, "a char of a filled group");
    /* a byte of data that equals the pattern, in a group of data */
    memset(mem + 140, 0x33, 4);
    mem[141] = p[((uintptr_t)mem + 141) & 7];
    CHECK(mc_pattern_read(p, &b, (uintptr_t)mem + 141, 1, 0, &at) == 0, "a data byte equal to the pattern: not reported");
    /* the edge of written data: a list growing down into never-written memory whose first
     * element equals the pattern (bzip2's move-to-front list) */
    mc_pattern_fill(p, (uintptr_t)mem + 192, (uintptr_t)mem + 256);
    memset(mem + 211, 0x44, 8);
    mem[211] = p[((uintptr_t)mem + 211) & 7];
    CHECK(mc_pattern_read(p, &b, (uintptr_t)mem + 211, 1, 0, &at) == 0,
          "the first written byte equals the pattern, never-written bytes before it: not reported");
    CHECK(mc_pattern_read(p, &b, (uintptr_t)mem + 205, 1, 0, &at) == 1, "a byte of the never-written part");
    /* the block bounds the group: a 2-byte block that is filled */
    struct mc_block small = {(uintptr_t)mem + 180, 2};
    CHECK(mc_pattern_read(p, &small, (uintptr_t)mem + 180, 1, 0, &at) == 1, "a filled 2-byte block");
    /* runs of every byte value are data, never the pattern (4 in a row must follow a % 8) */
    int reported = 0;
    for (int v = 0; v < 256; v++) {
        memset(mem, v, 256);
        for (int i = 0; i + 8 <= 256; i += 4)
            reported += mc_pattern_read(p, &b, (uintptr_t)mem + i, 4, 0, &at);
    }
    CHECK(reported == 0, "runs of one byte value are never the pattern (%d reported)", reported);
    /* copied with alignment mod 8 kept: still recognized */
    mc_pattern_fill(p, (uintptr_t)mem, (uintptr_t)mem + 64);
    memcpy(mem + 128, mem + 8, 32);
    CHECK(mc_pattern_read(p, &b, (uintptr_t)mem + 136, 8, 0, &at) == 1, "a copy that keeps alignment mod 8");

    /* mc_pattern_value: the bytes a load read earlier, whatever the memory holds now */
    uint64_t filled, written = 0x0102030405060708ull;
    memcpy(&filled, mem + 136, 8);   /* the fill at 136..143, as a load there read it */
    memset(mem + 136, 0x55, 8);      /* written since */
    CHECK(mc_pattern_value(p, &b, (uintptr_t)mem + 136, 8, 0, filled, &at) == 1 && at == 136,
          "a value read from filled bytes, written since: uninitialized at 136");
    mc_pattern_fill(p, (uintptr_t)mem + 136, (uintptr_t)mem + 144);   /* freed and filled again since */
    CHECK(mc_pattern_value(p, &b, (uintptr_t)mem + 136, 8, 0, written, &at) == 0,
          "a value read from written bytes, filled since: initialized");
    CHECK(mc_pattern_value(p, &b, (uintptr_t)mem + 137, 8, 0, filled, &at) == 0,
          "the fill of another alignment: initialized");
    uint32_t four;
    memcpy(&four, mem + 136, 4);
    CHECK(mc_pattern_value(p, &b, (uintptr_t)mem + 136, 4, 0, four, &at) == 1, "a 4-byte value of the fill");
    /* a small load: its neighbours are read from memory */
    memset(mem + 150, 0x66, 4);
    uint8_t one = p[((uintptr_t)mem + 141) & 7];
    CHECK(mc_pattern_value(p, &b, (uintptr_t)mem + 141, 1, 0, one, &at) == 1, "a char of the fill in a filled group");
    CHECK(mc_pattern_value(p, &b, (uintptr_t)mem + 151, 1, 0, p[((uintptr_t)mem + 151) & 7], &at) == 0,
          "a char equal to the fill among written bytes: initialized");
    free(mem);
    return CHECK_DONE("test_pattern");
}
