/* The bytes of a hook (runtime/patch.c): pure, so that tests/test_patchbytes.c checks them.
 * A patchable entry is the 5-byte nop vigil-cc's compiler part puts at a function's first
 * instruction (0f 1f 44 00 08). A hook replaces it with `call rel32` (e8 + the 32-bit offset
 * from the next instruction to the target); removing it puts the nop back. Both are written
 * with one aligned 8-byte store, so that a thread fetching the entry meanwhile sees either the
 * whole nop or the whole call: the 5 bytes must lie in one aligned 8-byte word (offset 0 to 3
 * in it; functions are 16-byte aligned, so the entry is at offset 0). */
#ifndef HS_PATCHBYTES_H
#define HS_PATCHBYTES_H
#include <stdint.h>
#include <string.h>

#define HS_ENTRY_BYTES 5
static const uint8_t hs_entry_nop[HS_ENTRY_BYTES] = {0x0f, 0x1f, 0x44, 0x00, 0x08};

/* What a hook at entry finds (the entry's 5 bytes at p). */
enum hs_entry_kind { HS_ENTRY_NOP, HS_ENTRY_CALL, HS_ENTRY_OTHER };

static inline enum hs_entry_kind hs_entry_kind(const uint8_t *p, uintptr_t entry, uintptr_t target)
{
    if (memcmp(p, hs_entry_nop, HS_ENTRY_BYTES) == 0)
        return HS_ENTRY_NOP;
    int32_t rel;
    memcpy(&rel, p + 1, 4);
    if (p[0] == 0xe8 && entry + HS_ENTRY_BYTES + (intptr_t)rel == target)
        return HS_ENTRY_CALL;
    return HS_ENTRY_OTHER;
}

/* The aligned word holding entry's 5 bytes, or 0 when they cross an 8-byte boundary. */
static inline uintptr_t hs_entry_word(uintptr_t entry)
{
    return (entry & 7) <= 8 - HS_ENTRY_BYTES ? entry & ~(uintptr_t)7 : 0;
}

/* word (the 8 bytes at hs_entry_word(entry)) with the entry's 5 bytes made a call of target
 * (call = 1) or the nop (call = 0); the other 3 bytes kept. 0 and *out set, or -1 when the
 * call cannot reach target (more than 2 GiB away) or the entry is not in one word. */
static inline int hs_entry_patch(uint64_t word, uintptr_t entry, uintptr_t target, int call, uint64_t *out)
{
    uintptr_t at = hs_entry_word(entry);
    if (!at)
        return -1;
    uint8_t b[8];
    memcpy(b, &word, 8);
    uint8_t *p = b + (entry - at);
    if (call) {
        intptr_t rel = (intptr_t)target - (intptr_t)(entry + HS_ENTRY_BYTES);
        if (rel < INT32_MIN || rel > INT32_MAX)
            return -1;
        int32_t r32 = (int32_t)rel;
        p[0] = 0xe8;
        memcpy(p + 1, &r32, 4);
    } else {
        memcpy(p, hs_entry_nop, HS_ENTRY_BYTES);
    }
    memcpy(out, b, 8);
    return 0;
}

/* An entry whose 5 bytes cross an 8-byte boundary (after an endbr64: offset 4) is written in
 * three steps, each separated by serializing every thread (membarrier SYNC_CORE):
 *   1. its first 2 bytes become `jmp .+5` (eb 03), a 2-byte store within one word: a thread
 *      that fetches the entry now jumps over the other 3 bytes;
 *   2. those 3 bytes get their new values (never executed meanwhile);
 *   3. the first 2 bytes get theirs.
 * hs_entry_steps gives the entry's 5 bytes after each step (from cur to want), or -1 when the
 * first 2 bytes lie across a word boundary too (offset 7). */
static inline int hs_entry_steps(uintptr_t entry, const uint8_t cur[HS_ENTRY_BYTES], const uint8_t want[HS_ENTRY_BYTES],
                                 uint8_t steps[3][HS_ENTRY_BYTES])
{
    if ((entry & 7) == 7)
        return -1;
    steps[0][0] = 0xeb;
    steps[0][1] = 0x03;
    memcpy(steps[0] + 2, cur + 2, 3);
    memcpy(steps[1], steps[0], 2);
    memcpy(steps[1] + 2, want + 2, 3);
    memcpy(steps[2], want, HS_ENTRY_BYTES);
    return 0;
}

/* The 5 bytes of the call of target at entry (call = 1), or the nop: into out. -1 when the call
 * cannot reach. */
static inline int hs_entry_bytes(uintptr_t entry, uintptr_t target, int call, uint8_t out[HS_ENTRY_BYTES])
{
    if (!call) {
        memcpy(out, hs_entry_nop, HS_ENTRY_BYTES);
        return 0;
    }
    intptr_t rel = (intptr_t)target - (intptr_t)(entry + HS_ENTRY_BYTES);
    if (rel < INT32_MIN || rel > INT32_MAX)
        return -1;
    int32_t r32 = (int32_t)rel;
    out[0] = 0xe8;
    memcpy(out + 1, &r32, 4);
    return 0;
}

#endif
