/* Values loaded on every path and used on some only. zstd's ZSTD_checkOutBuffer copies a
 * struct of its context, one that only a mode the program did not ask for ever writes, and
 * compares its fields only in that mode: loaded, never used, nothing to report. The same code
 * in that mode, with the struct never written, uses uninitialized fields (reported, at the
 * copy's line). A value loaded before its memory is written, or freed and allocated again, is
 * the value the program uses: the check is of the value loaded, not of the memory at its use. */
#include "common.h"

enum mode { BUFFERED, STABLE };
enum stage { INIT, LOAD };
struct buf { void *dst; long size; long pos; };
struct ctx { int mode; int stage; long frames; struct buf expected; };

/* One body for two functions: the one run in BUFFERED mode only, and the one run in STABLE
 * mode (with expected never written: a real error). A macro's code has its invocation's line. */
#define CHECK_OUT(name)                                                                                   \
    __attribute__((noinline)) static int name(const struct ctx *c, const struct buf *out)                 \
    {                                                                                                     \
        struct buf const expect = c->expected;                                                            \
        if (c->mode != STABLE)                                                                            \
            return 0;                                                                                     \
        if (c->stage == INIT)                                                                             \
            return 0;                                                                                     \
        if (expect.dst == out->dst && expect.pos == out->pos && expect.size == out->size)                \
            return 0;                                                                                     \
        return 1;                                                                                         \
    }
CHECK_OUT(check_buffered)
CHECK_OUT(check_stable)               // MC uninitialized-read

/* Loaded first, then its memory written: the value used is the uninitialized one. */
__attribute__((noinline)) static void old_value(long *slot, int use)
{
    long v = *slot;                   // MC uninitialized-read
    *slot = 7;
    if (use)
        sink(v > 3);
}

/* Loaded from a written block that is then freed and allocated again (filled anew): the value
 * used was written. */
__attribute__((noinline)) static void after_reuse(long *p, int use)
{
    long v = p[1];
    free(p);
    long *q = opaque(malloc(4 * sizeof *q));
    if (use)
        sink(v > 3);
    free(q);
}

int main(void)
{
    struct buf out = {opaque(&out), 100, 0};
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        struct ctx *c = opaque(malloc(sizeof *c));
        c->mode = BUFFERED;
        c->stage = i ? LOAD : INIT;
        c->frames = i;                /* expected: never written (buffered mode) */
        bad += check_buffered(c, &out);
        free(c);
    }
    struct ctx *s = opaque(malloc(sizeof *s));
    s->mode = STABLE;
    s->stage = LOAD;                  /* expected: never written, in the mode that compares it */
    bad += check_stable(s, &out);
    free(s);
    long *slot = opaque(malloc(sizeof *slot));
    old_value(slot, 1 + zero());
    free(slot);
    long *p = opaque(malloc(4 * sizeof *p));
    p[0] = p[1] = 1;
    after_reuse(p, 1 + zero());
    printf("%d\n", bad);
    return 0;
}
