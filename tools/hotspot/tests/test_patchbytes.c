/* The bytes of a hook (tools/hotspot/runtime/patchbytes.h): the nop made a call whose target is
 * right, the other 3 bytes of the word kept, the nop restored byte for byte, entries that cross
 * an 8-byte boundary or targets out of reach refused, and what a hook finds recognised. */
#include "../../../tests/unit/check.h"
#include "../runtime/patchbytes.h"

#include <string.h>

int main(void)
{
    /* an entry at offset 0 of its word, followed by "push %rbp; mov %rsp,%rbp" */
    uint8_t text[16] = {0x0f, 0x1f, 0x44, 0x00, 0x08, 0x55, 0x48, 0x89, 0xe5, 0xc3};
    uintptr_t entry = 0x401000, stub = 0x400000;
    uint64_t word, patched, back;
    memcpy(&word, text, 8);
    CHECK(hs_entry_word(entry) == entry, "aligned entry");
    CHECK(hs_entry_kind(text, entry, stub) == HS_ENTRY_NOP, "the nop recognised");
    CHECK(hs_entry_patch(word, entry, stub, 1, &patched) == 0, "patch");
    uint8_t p[8];
    memcpy(p, &patched, 8);
    int32_t rel;
    memcpy(&rel, p + 1, 4);
    CHECK(p[0] == 0xe8 && entry + 5 + (intptr_t)rel == stub, "a call of the stub (rel %d)", rel);
    CHECK(p[5] == 0x55 && p[6] == 0x48 && p[7] == 0x89, "the next instruction's bytes kept");
    CHECK(hs_entry_kind(p, entry, stub) == HS_ENTRY_CALL, "our call recognised");
    CHECK(hs_entry_kind(p, entry, stub + 16) == HS_ENTRY_OTHER, "a call elsewhere is not ours");
    CHECK(hs_entry_patch(patched, entry, stub, 0, &back) == 0 && back == word, "the nop restored byte for byte");

    /* offsets 1..3 of a word hold the 5 bytes; 4..7 do not */
    for (uintptr_t off = 1; off < 8; off++) {
        uintptr_t e = 0x401000 + off;
        uint64_t w = 0x1122334455667788ull, out = 0;
        int rc = hs_entry_patch(w, e, stub, 1, &out);
        if (off <= 3) {
            uint8_t b[8], o[8];
            memcpy(b, &w, 8);
            memcpy(o, &out, 8);
            int kept = 1;
            for (uintptr_t i = 0; i < 8; i++)
                if ((i < off || i >= off + 5) && b[i] != o[i])
                    kept = 0;
            CHECK(rc == 0 && hs_entry_word(e) == 0x401000 && o[off] == 0xe8 && kept, "offset %lu patched in place",
                  (unsigned long)off);
        } else {
            CHECK(rc == -1 && hs_entry_word(e) == 0, "offset %lu refused (crosses the word)", (unsigned long)off);
        }
    }

    /* out of a rel32's reach */
    uint64_t out;
    CHECK(hs_entry_patch(word, 0x7f0000000000ull, 0x400000, 1, &out) == -1, "a far stub refused");
    CHECK(hs_entry_patch(word, 0x500000000ull, 0x500000000ull + 0x7fff0000ull, 1, &out) == 0, "2 GiB minus a bit: in reach");
    CHECK(hs_entry_patch(word, 0x500000000ull, 0x500000000ull + 0x80000010ull, 1, &out) == -1, "past 2 GiB: refused");
    /* an entry after endbr64 (offset 4): three steps behind a 2-byte jump over the rest */
    uint8_t want[5], steps[3][5];
    uintptr_t cet = 0x401004;
    CHECK(hs_entry_bytes(cet, stub, 1, want) == 0 && want[0] == 0xe8, "the call's bytes");
    CHECK(hs_entry_steps(cet, hs_entry_nop, want, steps) == 0, "steps");
    CHECK(steps[0][0] == 0xeb && steps[0][1] == 0x03 && memcmp(steps[0] + 2, hs_entry_nop + 2, 3) == 0,
          "step 1: jmp .+5, the rest untouched");
    CHECK(memcmp(steps[1], steps[0], 2) == 0 && memcmp(steps[1] + 2, want + 2, 3) == 0,
          "step 2: the jump kept, the skipped bytes written");
    CHECK(memcmp(steps[2], want, 5) == 0 && hs_entry_kind(steps[2], cet, stub) == HS_ENTRY_CALL, "step 3: the call");
    uint8_t undo[3][5];
    CHECK(hs_entry_steps(cet, want, hs_entry_nop, undo) == 0 && memcmp(undo[2], hs_entry_nop, 5) == 0 &&
          undo[0][0] == 0xeb && memcmp(undo[0] + 2, want + 2, 3) == 0, "and back to the nop the same way");
    CHECK(hs_entry_steps(0x401007, hs_entry_nop, want, steps) == -1, "offset 7: the jump itself would cross");
    return CHECK_DONE("test_patchbytes");
}
