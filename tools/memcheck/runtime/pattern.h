/* The memory checker's fill pattern (pure: no runtime, unit-tested and fuzzed on its own).
 * Byte a of fresh heap memory holds pattern[a % 8]: a pattern that depends on the address
 * keeps a copy of uninitialized bytes recognizable wherever alignment mod 8 is kept (malloc's
 * blocks, struct copies), while program data equal to it by chance is rare. */
#ifndef MC_PATTERN_H
#define MC_PATTERN_H
#include <stddef.h>
#include <stdint.h>

struct mc_block {   /* a heap block, as the checks see it */
    uintptr_t start;
    size_t size;
};

/* "random" (8 distinct bytes 0x80..0xfe drawn from seed) or 1, 2, 4 or 8 bytes in hex with or
 * without 0x ("0xde": every byte 0xde), into pattern. 0, or -1 for anything else. */
int mc_pattern_parse(const char *text, uint64_t seed, uint8_t pattern[8]);
/* Fill [from, to) with the pattern. */
void mc_pattern_fill(const uint8_t pattern[8], uintptr_t from, uintptr_t to);
/* Whether a load of size bytes at a, using the bytes of mask (bit i: byte i; 0: all), reads
 * uninitialized bytes of block b: 4 consecutive used bytes that hold the pattern or, for a
 * load that uses fewer bytes, its used bytes, the bytes just before and after them and all of
 * their aligned 4-byte group (within the block) holding it. The pattern alone is not enough: a
 * byte of data may equal it by chance (1 in 128), and the bytes on one side of a load may be
 * padding, or the never-written end of a buffer, a list growing into unwritten memory.
 * *first: the first such byte's offset in the block. */
int mc_pattern_read(const uint8_t pattern[8], const struct mc_block *b, uintptr_t a, size_t size, uint32_t mask,
                    size_t *first);
/* The same for the value a load of size bytes (at most 8) read at a earlier: its bytes are
 * value's (little-endian), the bytes around them are read from memory now. */
int mc_pattern_value(const uint8_t pattern[8], const struct mc_block *b, uintptr_t a, size_t size, uint32_t mask,
                     uint64_t value, size_t *first);

#endif
