/* Whether the bytes just before a code address end with a call instruction: the frame walk
 * (stack.c) accepts a return address only then. Pure, no state: unit-tested with byte
 * sequences (tests/unit/test_callinsn.c). */
#ifndef VIGIL_RUNTIME_CALLINSN_H
#define VIGIL_RUNTIME_CALLINSN_H
#include <stddef.h>
#include <stdint.h>

#define VIGIL_CALL_MAX_BYTES 7   /* the longest call form looked for (prefixes not counted) */

/* The `avail` bytes before pc are readable (at most VIGIL_CALL_MAX_BYTES are read). x86-64:
 * E8 rel32 (5 bytes), or FF /2, a call through a register or memory, whose length follows
 * from its ModRM byte (and SIB byte, and displacement); a prefix before the opcode (REX,
 * segment) changes nothing after it. Elsewhere: always 1 (no check). */
static inline int vigil_follows_call(const uint8_t *pc, size_t avail)
{
#if defined(__x86_64__)
    if (avail >= 5 && pc[-5] == 0xe8)
        return 1;
    for (unsigned len = 2; len <= VIGIL_CALL_MAX_BYTES && len <= avail; len++) {
        const uint8_t *op = pc - len;
        if (op[0] != 0xff || ((op[1] >> 3) & 7) != 2)
            continue;
        unsigned mod = op[1] >> 6, rm = op[1] & 7, want;
        if (mod == 3) {
            want = 2;   /* call *%reg */
        } else {
            unsigned sib = rm == 4;
            unsigned disp = mod == 1 ? 1 : mod == 2 ? 4 : 0;
            if (mod == 0 && rm == 5)
                disp = 4;   /* rip-relative */
            if (mod == 0 && sib && len >= 3 && (op[2] & 7) == 5)
                disp = 4;   /* SIB without a base register */
            want = 2 + sib + disp;
        }
        if (want == len)
            return 1;
    }
    return 0;
#else
    (void)pc, (void)avail;
    return 1;
#endif
}

#endif
