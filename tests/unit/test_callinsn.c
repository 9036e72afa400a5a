/* The frame walk's call-instruction test (runtime/callinsn.h): each x86-64 call form, placed
 * right before a "return address", is recognized; jumps, returns and other bytes are not;
 * nothing before the readable window is read (each case sits at the start of an exactly sized
 * heap copy, so an over-read shows up under ASan/valgrind). */
#include "check.h"
#include "runtime/callinsn.h"

#include <stdlib.h>
#include <string.h>

struct form {
    const char *name;
    uint8_t bytes[8];
    size_t len;
    int is_call;
};

static const struct form forms[] = {
    {"call rel32", {0xe8, 0x10, 0x20, 0x30, 0x40}, 5, 1},
    {"call *%rax", {0xff, 0xd0}, 2, 1},
    {"call *%r11 (REX.B)", {0x41, 0xff, 0xd3}, 3, 1},
    {"call *(%rax)", {0xff, 0x10}, 2, 1},
    {"call *8(%rax)", {0xff, 0x50, 0x08}, 3, 1},
    {"call *8(%rsp) (SIB, disp8)", {0xff, 0x54, 0x24, 0x08}, 4, 1},
    {"call *0x100(%rbx) (disp32)", {0xff, 0x93, 0x00, 0x01, 0x00, 0x00}, 6, 1},
    {"call *0x100(%rsp) (SIB, disp32)", {0xff, 0x94, 0x24, 0x00, 0x01, 0x00, 0x00}, 7, 1},
    {"call *x(%rip)", {0xff, 0x15, 0x00, 0x10, 0x00, 0x00}, 6, 1},
    {"call *tab(,%rax,8) (SIB, no base)", {0xff, 0x14, 0xc5, 0x00, 0x10, 0x00, 0x00}, 7, 1},
    {"call *(%rax,%rbx,1) (SIB)", {0xff, 0x14, 0x18}, 3, 1},
    {"jmp rel32", {0xe9, 0x10, 0x20, 0x30, 0x40}, 5, 0},
    {"jmp *%rax", {0xff, 0xe0}, 2, 0},
    {"push 8(%rax)", {0xff, 0x70, 0x08}, 3, 0},
    {"ret", {0x90, 0x90, 0xc3}, 3, 0},
    {"nops", {0x0f, 0x1f, 0x44, 0x00, 0x00}, 5, 0},
    /* FF /2 whose length does not end at the address: the bytes after it are not this call's */
    {"call *%rax, then a byte", {0xff, 0xd0, 0x90}, 3, 0},
    {"call *8(%rax) cut short", {0xff, 0x50}, 2, 0},
};

int main(void)
{
#if defined(__x86_64__)
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        const struct form *f = &forms[i];
        uint8_t *copy = malloc(f->len);
        memcpy(copy, f->bytes, f->len);
        int got = vigil_follows_call(copy + f->len, f->len);
        CHECK(got == f->is_call, "%s: %d, expected %d", f->name, got, f->is_call);
        free(copy);
        /* behind 7 bytes of int3 padding, the same answer */
        uint8_t *padded = malloc(VIGIL_CALL_MAX_BYTES + f->len);
        memset(padded, 0xcc, VIGIL_CALL_MAX_BYTES);
        memcpy(padded + VIGIL_CALL_MAX_BYTES, f->bytes, f->len);
        got = vigil_follows_call(padded + VIGIL_CALL_MAX_BYTES + f->len, VIGIL_CALL_MAX_BYTES);
        CHECK(got == f->is_call, "%s after padding: %d, expected %d", f->name, got, f->is_call);
        free(padded);
    }
    /* fewer readable bytes than the call's length: not a call (and nothing before is read) */
    uint8_t *short_copy = malloc(4);
    memcpy(short_copy, forms[0].bytes + 1, 4);
    CHECK(!vigil_follows_call(short_copy + 4, 4), "4 bytes of a call rel32 taken for a call");
    free(short_copy);
    CHECK(!vigil_follows_call(NULL, 0), "nothing readable taken for a call");
#else
    CHECK(vigil_follows_call(NULL, 0), "other targets: no check");
#endif
    return CHECK_DONE("callinsn");
}
