/* The walker's shadow stack (tools/hotspot/runtime/shadow.h): push and pop in order, an exit
 * paired with its own entry only, entries of frames left by longjmp dropped (at the next push
 * on the same stack, or at an exit further up), entries of another stack (a signal stack) kept,
 * recursion seen, a full stack refusing and counting. */
#include "../../../tests/unit/check.h"
#include "../runtime/shadow.h"

#include <string.h>

static struct hs_shadow s;

static struct hs_shadow_entry entry(uintptr_t ret, uintptr_t slot, void *what)
{
    struct hs_shadow_entry e = {ret, slot, what, 0, 0};
    return e;
}

int main(void)
{
    int a, b;
    struct hs_shadow_entry out;
    const uintptr_t lo = 0x10000, hi = 0x20000;

    /* nested calls: slots go down the stack */
    CHECK(hs_shadow_push(&s, &(struct hs_shadow_entry){0x401000, 0x1ff00, &a, 1, 2}) == 0, "push 1");
    hs_shadow_prune(&s, 0x1fe00, lo, hi);
    CHECK(s.n == 1 && s.dropped == 0, "a live caller kept (n %u)", s.n);
    CHECK(hs_shadow_push(&s, &(struct hs_shadow_entry){0x402000, 0x1fe00, &b, 3, 4}) == 0, "push 2");
    CHECK(hs_shadow_holds(&s, &a) && hs_shadow_holds(&s, &b) && !hs_shadow_holds(&s, &s), "holds");
    CHECK(hs_shadow_pop(&s, 0x1fe00, &out) == 0 && out.ret == 0x402000 && out.what == &b && out.t0_ns == 3,
          "pop the inner one");
    CHECK(hs_shadow_pop(&s, 0x1fe00, &out) == -1 && s.n == 1, "an exit without its entry changes nothing");
    CHECK(hs_shadow_pop(&s, 0x1ff00, &out) == 0 && out.ret == 0x401000 && s.n == 0, "pop the outer one");
    CHECK(s.dropped == 0, "nothing dropped (%llu)", (unsigned long long)s.dropped);

    /* longjmp: three frames left without returning; a new call at the slot of the outermost one
     * shows them dead */
    memset(&s, 0, sizeof s);
    hs_shadow_push(&s, &(struct hs_shadow_entry){1, 0x1f000, &a, 0, 0});
    hs_shadow_push(&s, &(struct hs_shadow_entry){2, 0x1e000, &b, 0, 0});
    hs_shadow_push(&s, &(struct hs_shadow_entry){3, 0x1d000, &a, 0, 0});
    hs_shadow_prune(&s, 0x1f000, lo, hi);
    CHECK(s.n == 0 && s.dropped == 3, "longjmp'd frames dropped at the next call (n %u, dropped %llu)", s.n,
          (unsigned long long)s.dropped);

    /* longjmp, then the outer frame returns: its exit drops the two above it */
    memset(&s, 0, sizeof s);
    hs_shadow_push(&s, &(struct hs_shadow_entry){1, 0x1f000, &a, 0, 0});
    hs_shadow_push(&s, &(struct hs_shadow_entry){2, 0x1e000, &b, 0, 0});
    hs_shadow_push(&s, &(struct hs_shadow_entry){3, 0x1d000, &a, 0, 0});
    CHECK(hs_shadow_pop(&s, 0x1f000, &out) == 0 && out.ret == 1 && s.n == 0 && s.dropped == 2,
          "an exit further up pairs with its own entry (ret %lu, n %u, dropped %llu)", (unsigned long)out.ret, s.n,
          (unsigned long long)s.dropped);

    /* a signal handler on another stack: its calls do not drop the interrupted ones */
    memset(&s, 0, sizeof s);
    hs_shadow_push(&s, &(struct hs_shadow_entry){1, 0x1f000, &a, 0, 0});
    hs_shadow_prune(&s, 0x90000, lo, hi);   /* a slot on the alternate stack, above */
    CHECK(s.n == 1 && s.dropped == 0, "another stack's call keeps the entries");
    hs_shadow_push(&s, &(struct hs_shadow_entry){7, 0x90000, &b, 0, 0});
    hs_shadow_prune(&s, 0x1e000, lo, hi);   /* back on the thread's stack, below its live caller */
    CHECK(s.n == 2 && s.dropped == 0, "an entry of the other stack is not judged by this one's slots");
    CHECK(hs_shadow_pop(&s, 0x90000, &out) == 0 && out.ret == 7, "the handler's call returns");
    CHECK(hs_shadow_pop(&s, 0x1f000, &out) == 0 && out.ret == 1, "the interrupted call returns");

    /* a tail call reuses its caller's slot: pruning below it (slot - 1) keeps the caller */
    memset(&s, 0, sizeof s);
    hs_shadow_push(&s, &(struct hs_shadow_entry){1, 0x1f000, &a, 0, 0});
    hs_shadow_prune(&s, 0x1f000 - 1, lo, hi);
    CHECK(s.n == 1, "a tail call keeps its caller's entry");
    hs_shadow_prune(&s, 0x1f000, lo, hi);
    CHECK(s.n == 0 && s.dropped == 1, "a fresh call at the same slot drops it");

    /* full */
    memset(&s, 0, sizeof s);
    for (int i = 0; i < HS_SHADOW_MAX; i++) {
        struct hs_shadow_entry e = entry((uintptr_t)i, 0x1ff00 - 16 * (uintptr_t)i, &a);
        CHECK(hs_shadow_push(&s, &e) == 0, "push %d", i);
    }
    struct hs_shadow_entry e = entry(999, 0x10100, &a);
    CHECK(hs_shadow_push(&s, &e) == -1 && s.full == 1 && s.n == HS_SHADOW_MAX, "a full stack refuses and counts");
    CHECK(hs_shadow_pop(&s, 0x1ff00 - 16 * (HS_SHADOW_MAX - 1), &out) == 0 && out.ret == HS_SHADOW_MAX - 1,
          "the top one pops");
    return CHECK_DONE("test_shadow");
}
