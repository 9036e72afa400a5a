/* Short loops: innermost loops that provably run at most VIGIL_CC_SHORT_LOOP_MAX iterations
 * each time they are entered get no back-edge check.
 *
 * Such a loop is a bounded piece of its function's body, like straight-line code: the entry
 * check already decides which copy runs it, and a burst begun there covers it. Its back-edge
 * check was what made the function "a function with loops" (transfer frame, burst test at
 * entry, a countdown per iteration): sqlite3's vdbeSorterCompareInt compares at most 8 bytes
 * in a loop. What is lost: a burst cannot start or end inside such a loop, only around it.
 *
 * The proof is read from the SSA form before demotion (the pattern the -O pipeline leaves):
 *   - the header has exactly one back-edge (its latch), and its loop body (the blocks that
 *     reach the latch without passing the header) holds no other back-edge's source or
 *     target: innermost, so elided loops do not nest and their bounds do not multiply;
 *   - a PHI of the header counts by a step of 1 to 64 (up or down): the latch brings
 *     `add phi, step`, every other predecessor a start value of known range;
 *   - a conditional branch in the header or the latch (both run on every iteration) leaves
 *     the loop unless `phi` or `phi +- 1` compares (<, <=, !=, or their mirrors) with a value
 *     defined outside the loop, of known range.
 * Ranges come from constants, zext of narrow types, masks, umin/umax, lshr, urem and select,
 * and from the guard of a rotated loop (`n == 0` skips it). */
#include "xform.h"

#include <stdlib.h>
#include <string.h>

struct range {
    uint64_t lo, hi;    /* unsigned, inclusive */
};

static struct range full_range(LLVMTypeRef type)
{
    unsigned bits = LLVMGetTypeKind(type) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(type) : 64;
    return (struct range){0, bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1};
}

static int is_constant(LLVMValueRef v, uint64_t *out)
{
    if (!LLVMIsAConstantInt(v) || LLVMGetIntTypeWidth(LLVMTypeOf(v)) > 64)
        return 0;
    *out = LLVMConstIntGetZExtValue(v);
    return 1;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* What is known of an integer value's unsigned range, looking `depth` definitions deep. */
static struct range value_range(LLVMValueRef v, int depth)
{
    struct range full = full_range(LLVMTypeOf(v));
    uint64_t c;
    if (is_constant(v, &c))
        return (struct range){c, c};
    if (!LLVMIsAInstruction(v) || depth == 0)
        return full;
    struct range a, b;
    switch (LLVMGetInstructionOpcode(v)) {
    case LLVMZExt:
        return value_range(LLVMGetOperand(v, 0), depth - 1);
    case LLVMAnd:
        for (unsigned k = 0; k < 2; k++)
            if (is_constant(LLVMGetOperand(v, k), &c))
                return (struct range){0, min_u64(c, value_range(LLVMGetOperand(v, 1 - k), depth - 1).hi)};
        return full;
    case LLVMLShr:
        if (!is_constant(LLVMGetOperand(v, 1), &c) || c >= 64)
            return full;
        a = value_range(LLVMGetOperand(v, 0), depth - 1);
        return (struct range){a.lo >> c, a.hi >> c};
    case LLVMURem:
        if (!is_constant(LLVMGetOperand(v, 1), &c) || c == 0)
            return full;
        return (struct range){0, min_u64(c - 1, value_range(LLVMGetOperand(v, 0), depth - 1).hi)};
    case LLVMSelect:
        a = value_range(LLVMGetOperand(v, 1), depth - 1);
        b = value_range(LLVMGetOperand(v, 2), depth - 1);
        return (struct range){min_u64(a.lo, b.lo), max_u64(a.hi, b.hi)};
    case LLVMCall: {
        const char *name = xf_callee_name(v);
        int umin = !strncmp(name, "llvm.umin.", 10), umax = !strncmp(name, "llvm.umax.", 10);
        if (!umin && !umax)
            return full;
        a = value_range(LLVMGetOperand(v, 0), depth - 1);
        b = value_range(LLVMGetOperand(v, 1), depth - 1);
        if (umin)
            return (struct range){min_u64(a.lo, b.lo), min_u64(a.hi, b.hi)};
        return (struct range){max_u64(a.lo, b.lo), max_u64(a.hi, b.hi)};
    }
    default:
        return full;
    }
}

static int block_in_loop(LLVMBasicBlockRef block, const unsigned char *body, const struct ptrmap *index)
{
    size_t i = (size_t)ptrmap_get(index, LLVMBasicBlockAsValue(block));
    return i && body[i - 1];
}

static int in_loop(LLVMValueRef v, const unsigned char *body, const struct ptrmap *index)
{
    return LLVMIsAInstruction(v) && block_in_loop(LLVMGetInstructionParent(v), body, index);
}

/* Whether v is a multiple of m (a power of two) by its form: what the loop unroller leaves
 * (`and n, -4`). */
static int known_multiple(LLVMValueRef v, uint64_t m)
{
    uint64_t c;
    if (is_constant(v, &c))
        return c % m == 0;
    if (!LLVMIsAInstruction(v))
        return 0;
    switch (LLVMGetInstructionOpcode(v)) {
    case LLVMAnd: case LLVMMul:
        for (unsigned k = 0; k < 2; k++)
            if (is_constant(LLVMGetOperand(v, k), &c) && c % m == 0)
                return 1;
        return 0;
    case LLVMShl:
        return is_constant(LLVMGetOperand(v, 1), &c) && c < 64 && (UINT64_C(1) << c) % m == 0;
    default:
        return 0;
    }
}

/* Whether the edge from -> header is taken only when `v` is not 0: the guard a rotated loop
 * gets, `br (icmp eq v, 0), skip, loop` (v or what v is the zext of). */
static int edge_excludes_zero(LLVMBasicBlockRef from, LLVMBasicBlockRef header, LLVMValueRef v)
{
    LLVMValueRef narrow = LLVMIsAZExtInst(v) ? LLVMGetOperand(v, 0) : v;
    LLVMValueRef term = LLVMGetBasicBlockTerminator(from);
    /* A preheader with one way in: the guard is on the edge into it. */
    for (int depth = 0; depth < 4 && LLVMGetInstructionOpcode(term) == LLVMBr && !LLVMIsConditional(term); depth++) {
        LLVMUseRef use = LLVMGetFirstUse(LLVMBasicBlockAsValue(from));
        if (!use || LLVMGetNextUse(use) || !LLVMIsATerminatorInst(LLVMGetUser(use)))
            return 0;
        header = from;
        from = LLVMGetInstructionParent(LLVMGetUser(use));
        term = LLVMGetBasicBlockTerminator(from);
    }
    if (LLVMGetInstructionOpcode(term) != LLVMBr || !LLVMIsConditional(term) ||
        LLVMGetSuccessor(term, 0) == LLVMGetSuccessor(term, 1))
        return 0;
    LLVMValueRef cond = LLVMGetCondition(term);
    uint64_t c;
    if (!LLVMIsAICmpInst(cond) || !is_constant(LLVMGetOperand(cond, 1), &c) || c != 0)
        return 0;
    LLVMValueRef tested = LLVMGetOperand(cond, 0);
    if (tested != v && tested != narrow)
        return 0;
    LLVMIntPredicate pred = LLVMGetICmpPredicate(cond);
    int into_loop_on_true = LLVMGetSuccessor(term, 0) == header;
    return (pred == LLVMIntEQ && !into_loop_on_true) || ((pred == LLVMIntNE || pred == LLVMIntUGT) && into_loop_on_true);
}

/* Whether every edge into the loop from outside (into `header` from blocks other than
 * `latch`) is taken only when `v` is not 0. */
static int entries_exclude_zero(LLVMBasicBlockRef header, LLVMBasicBlockRef latch, LLVMValueRef v)
{
    LLVMValueRef phi = LLVMGetFirstInstruction(header);
    if (!phi || !LLVMIsAPHINode(phi))
        return 0;
    for (unsigned k = 0; k < LLVMCountIncoming(phi); k++) {
        LLVMBasicBlockRef from = LLVMGetIncomingBlock(phi, k);
        if (from != latch && !edge_excludes_zero(from, header, v))
            return 0;
    }
    return 1;
}

/* v, or X when v is `and X, 2^k - 1` and X is the counter or its next value (*mask = 2^k - 1). */
static LLVMValueRef unmask(LLVMValueRef v, LLVMValueRef phi, LLVMValueRef next, uint64_t *mask)
{
    uint64_t c;
    if (!LLVMIsAInstruction(v) || LLVMGetInstructionOpcode(v) != LLVMAnd ||
        !is_constant(LLVMGetOperand(v, 1), &c) || (c & (c + 1)) != 0)
        return v;
    LLVMValueRef x = LLVMGetOperand(v, 0);
    if (x != phi && x != next)
        return v;
    *mask = c;
    return x;
}

/* The exit test `term` (in the header or the latch) read as the condition under which the loop
 * goes on: `*tested pred *limit`, tested the counter `phi` or its next value `next`, limit a
 * value defined outside the loop (*mask: see unmask). 0 when term is no such test. */
static int continue_condition(LLVMValueRef term, const unsigned char *body, const struct ptrmap *index,
                              LLVMValueRef phi, LLVMValueRef next, LLVMIntPredicate *pred_out,
                              LLVMValueRef *tested, LLVMValueRef *limit, uint64_t *mask)
{
    if (LLVMGetInstructionOpcode(term) != LLVMBr || !LLVMIsConditional(term))
        return 0;
    LLVMValueRef cond = LLVMGetCondition(term);
    if (!LLVMIsAICmpInst(cond))
        return 0;
    LLVMBasicBlockRef on_true = LLVMGetSuccessor(term, 0), on_false = LLVMGetSuccessor(term, 1);
    int stay_true = block_in_loop(on_true, body, index), stay_false = block_in_loop(on_false, body, index);
    if (stay_true == stay_false)
        return 0;   /* no exit here */
    LLVMIntPredicate pred = LLVMGetICmpPredicate(cond);
    LLVMValueRef lhs = LLVMGetOperand(cond, 0), rhs = LLVMGetOperand(cond, 1);
    *mask = UINT64_MAX;
    lhs = unmask(lhs, phi, next, mask);
    rhs = unmask(rhs, phi, next, mask);
    if (lhs != phi && lhs != next) {   /* counter on the right: mirror the comparison */
        LLVMValueRef t = lhs;
        lhs = rhs;
        rhs = t;
        static const LLVMIntPredicate mirror[] = {
            [LLVMIntEQ] = LLVMIntEQ, [LLVMIntNE] = LLVMIntNE, [LLVMIntUGT] = LLVMIntULT,
            [LLVMIntUGE] = LLVMIntULE, [LLVMIntULT] = LLVMIntUGT, [LLVMIntULE] = LLVMIntUGE,
            [LLVMIntSGT] = LLVMIntSLT, [LLVMIntSGE] = LLVMIntSLE, [LLVMIntSLT] = LLVMIntSGT,
            [LLVMIntSLE] = LLVMIntSGE};
        pred = mirror[pred];
    }
    if ((lhs != phi && lhs != next) || in_loop(rhs, body, index))
        return 0;
    if (!stay_true) {   /* the condition under which the loop goes on */
        static const LLVMIntPredicate invert[] = {
            [LLVMIntEQ] = LLVMIntNE, [LLVMIntNE] = LLVMIntEQ, [LLVMIntUGT] = LLVMIntULE,
            [LLVMIntUGE] = LLVMIntULT, [LLVMIntULT] = LLVMIntUGE, [LLVMIntULE] = LLVMIntUGT,
            [LLVMIntSGT] = LLVMIntSLE, [LLVMIntSGE] = LLVMIntSLT, [LLVMIntSLT] = LLVMIntSGE,
            [LLVMIntSLE] = LLVMIntSGT};
        pred = invert[pred];
    }
    *pred_out = pred;
    *tested = lhs;
    *limit = rhs;
    return 1;
}

/* The most iterations the loop can run per entry when `term` (in the header or the latch)
 * tests the counter `phi` (start range `start`, step `step`, next value `next`); UINT64_MAX
 * when the test says nothing. */
static uint64_t bound_from_test(LLVMValueRef term, const unsigned char *body, const struct ptrmap *index,
                                LLVMBasicBlockRef header, LLVMBasicBlockRef latch, LLVMValueRef phi,
                                LLVMValueRef next, int64_t step, struct range start)
{
    LLVMIntPredicate pred;
    LLVMValueRef lhs, rhs;
    uint64_t mask;
    if (!continue_condition(term, body, index, phi, next, &pred, &lhs, &rhs, &mask))
        return UINT64_MAX;
    struct range limit = value_range(rhs, 6);
    if (limit.lo == 0 && entries_exclude_zero(header, latch, rhs))
        limit.lo = 1;
    /* The tested value on the first iteration: the counter, or the counter after one step. */
    uint64_t first_lo = start.lo, first_hi = start.hi, size = step > 0 ? (uint64_t)step : (uint64_t)-step;
    if (lhs == next) {
        if (step > 0 ? first_hi > UINT64_MAX - size : first_lo < size)
            return UINT64_MAX;
        first_lo += step;
        first_hi += step;
    }
    /* A masked counter (`(n - 1) & 255`, LLVM 16) is the counter while both stay in the mask. */
    if (mask != UINT64_MAX && (first_hi > mask || limit.hi > mask))
        return UINT64_MAX;
    /* With a step above 1, `!=` ends the loop only if the counter meets the limit exactly. */
    int power_of_two = (size & (size - 1)) == 0, exact = first_lo == first_hi;
    uint64_t distance = limit.lo > first_lo ? limit.lo - first_lo : first_lo - limit.lo;
    int meets = size == 1 || (exact && limit.lo == limit.hi && distance % size == 0) ||
                (exact && power_of_two && first_lo % size == 0 && known_multiple(rhs, size));
    /* Signed comparisons mean the same as unsigned ones when every value is far from the sign. */
    const uint64_t small = UINT64_C(1) << 62;
    int is_signed = pred == LLVMIntSLT || pred == LLVMIntSLE || pred == LLVMIntSGT || pred == LLVMIntSGE;
    if (is_signed && (limit.hi >= small || first_hi >= small))
        return UINT64_MAX;
    if (pred == LLVMIntSLT) pred = LLVMIntULT;
    if (pred == LLVMIntSLE) pred = LLVMIntULE;
    if (pred == LLVMIntSGT) pred = LLVMIntUGT;
    if (pred == LLVMIntSGE) pred = LLVMIntUGE;
    if (step > 0) {
        /* Goes on while tested < limit (or <=, or != when it starts at or below the limit). */
        uint64_t top;
        if (pred == LLVMIntULT || (pred == LLVMIntNE && meets && first_hi <= limit.lo))
            top = limit.hi;
        else if (pred == LLVMIntULE && limit.hi < UINT64_MAX)
            top = limit.hi + 1;
        else
            return UINT64_MAX;
        return top > first_lo ? (top - first_lo) / size + 1 : 1;
    }
    /* Counting down: goes on while tested > limit (or >=, or != when it starts at or above it). */
    uint64_t bottom;
    if (pred == LLVMIntUGT || (pred == LLVMIntNE && meets && first_lo >= limit.hi))
        bottom = limit.lo;
    else if (pred == LLVMIntUGE && limit.lo > 0)
        bottom = limit.lo - 1;
    else
        return UINT64_MAX;
    return first_hi > bottom ? (first_hi - bottom) / size + 1 : 1;
}

/* Whether phi (an integer PHI of the loop's header, 64 bits at most) counts by a constant step:
 * the latch brings next = `add phi, step`, 0 < |step| <= max_step. */
static int induction_step(LLVMValueRef phi, LLVMBasicBlockRef latch, int64_t max_step, LLVMValueRef *next_out,
                          int64_t *step)
{
    if (LLVMGetTypeKind(LLVMTypeOf(phi)) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(LLVMTypeOf(phi)) > 64)
        return 0;
    LLVMValueRef next = NULL;
    for (unsigned k = 0; k < LLVMCountIncoming(phi); k++) {
        LLVMValueRef value = LLVMGetIncomingValue(phi, k);
        if (LLVMGetIncomingBlock(phi, k) != latch)
            continue;
        if (next && next != value)
            return 0;
        next = value;
    }
    if (!next || !LLVMIsAInstruction(next) || LLVMGetInstructionOpcode(next) != LLVMAdd ||
        (LLVMGetOperand(next, 0) != phi && LLVMGetOperand(next, 1) != phi))
        return 0;
    LLVMValueRef other = LLVMGetOperand(next, 0) == phi ? LLVMGetOperand(next, 1) : LLVMGetOperand(next, 0);
    if (!LLVMIsAConstantInt(other))
        return 0;
    int64_t s = LLVMConstIntGetSExtValue(other);
    if (s == 0 || s > max_step || s < -max_step)
        return 0;
    *next_out = next;
    *step = s;
    return 1;
}

/* The most iterations per entry of the loop at `header` with the single latch `latch`. */
static uint64_t loop_bound(LLVMBasicBlockRef header, LLVMBasicBlockRef latch, const unsigned char *body,
                           const struct ptrmap *index)
{
    uint64_t best = UINT64_MAX;
    for (LLVMValueRef phi = LLVMGetFirstInstruction(header); phi && LLVMIsAPHINode(phi);
         phi = LLVMGetNextInstruction(phi)) {
        LLVMValueRef next;
        int64_t s;
        if (!induction_step(phi, latch, 64, &next, &s))   /* steps of 1 to 64: the unroller's */
            continue;
        struct range start = {UINT64_MAX, 0};
        for (unsigned k = 0; k < LLVMCountIncoming(phi); k++) {
            LLVMValueRef value = LLVMGetIncomingValue(phi, k);
            if (LLVMGetIncomingBlock(phi, k) == latch)
                continue;
            struct range r = value_range(value, 6);
            if (r.lo == 0 && r.hi > 0 && edge_excludes_zero(LLVMGetIncomingBlock(phi, k), header, value))
                r.lo = 1;
            start.lo = min_u64(start.lo, r.lo);
            start.hi = max_u64(start.hi, r.hi);
        }
        if (start.lo > start.hi)
            continue;
        LLVMBasicBlockRef tests[] = {header, latch};
        for (int t = 0; t < 2; t++) {
            uint64_t bound = bound_from_test(LLVMGetBasicBlockTerminator(tests[t]), body, index, header, latch,
                                             phi, next, s, start);
            best = min_u64(best, bound);
        }
    }
    return best;
}

/* Counted loops: an innermost loop whose only exit is its latch's test of an induction variable
 * against a value defined outside the loop takes a number of back-edges per entry that is known
 * where it is entered (loops.c xl_version_counted_loops uses it). The start and the limit are
 * frozen at the end of each block that enters the loop, so that they survive demotion as
 * values of that block. */
static int is_power_of_two(uint64_t v) { return v && !(v & (v - 1)); }

static void plan_counted_loop(struct xfunc *f, LLVMBasicBlockRef header, LLVMBasicBlockRef latch,
                              const unsigned char *body, const struct ptrmap *index, LLVMBasicBlockRef *blocks,
                              size_t n)
{
    /* The latch is the only way out, by a conditional branch whose other side is the header. */
    for (size_t i = 0; i < n; i++) {
        if (!body[i])
            continue;
        LLVMValueRef term = LLVMGetBasicBlockTerminator(blocks[i]);
        unsigned nsucc = LLVMGetNumSuccessors(term);
        for (unsigned k = 0; k < nsucc; k++)
            if (!block_in_loop(LLVMGetSuccessor(term, k), body, index) && blocks[i] != latch)
                return;
        for (LLVMValueRef inst = LLVMGetFirstInstruction(blocks[i]); inst; inst = LLVMGetNextInstruction(inst))
            if (xf_is_real_call(inst) || LLVMIsAAllocaInst(inst))
                return;
    }
    LLVMValueRef term = LLVMGetBasicBlockTerminator(latch);
    for (LLVMValueRef phi = LLVMGetFirstInstruction(header); phi && LLVMIsAPHINode(phi);
         phi = LLVMGetNextInstruction(phi)) {
        LLVMValueRef next, tested, limit;
        int64_t step;
        LLVMIntPredicate pred;
        uint64_t mask;
        if (!induction_step(phi, latch, INT64_C(1) << 20, &next, &step) ||
            !continue_condition(term, body, index, phi, next, &pred, &tested, &limit, &mask) ||
            mask != UINT64_MAX)
            continue;
        unsigned width = LLVMGetIntTypeWidth(LLVMTypeOf(phi));
        uint64_t size = step > 0 ? (uint64_t)step : (uint64_t)-step;
        if ((width != 32 && width != 64) || !is_power_of_two(size))
            continue;
        int up = step > 0;
        int ok = pred == LLVMIntNE || (up ? (pred == LLVMIntULT || pred == LLVMIntSLT || pred == LLVMIntULE ||
                                             pred == LLVMIntSLE)
                                          : (pred == LLVMIntUGT || pred == LLVMIntSGT || pred == LLVMIntUGE ||
                                             pred == LLVMIntSGE));
        /* With a step above 1, `!=` ends the loop only if the counter meets the limit exactly. */
        if (pred == LLVMIntNE && size > 1 && !known_multiple(limit, size))
            ok = 0;
        struct xf_counted *c = xf_calloc(1, sizeof *c);
        for (unsigned k = 0; ok && k < LLVMCountIncoming(phi); k++) {
            LLVMBasicBlockRef from = LLVMGetIncomingBlock(phi, k);
            if (from == latch)
                continue;
            LLVMValueRef start = LLVMGetIncomingValue(phi, k);
            if (pred == LLVMIntNE && size > 1 && !known_multiple(start, size))
                ok = 0;
            valvec_push(&c->from, LLVMBasicBlockAsValue(from));
            valvec_push(&c->start, start);
            valvec_push(&c->limit, limit);
        }
        if (!ok || !c->from.n) {
            xf_free_counted(c);
            continue;
        }
        LLVMBuilderRef b = f->x->builder;
        for (size_t k = 0; k < c->from.n; k++) {
            LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(c->from.v[k])));
            if (!LLVMIsAConstant(c->start.v[k]))
                c->start.v[k] = LLVMBuildFreeze(b, c->start.v[k], "vigil.trip.start");
            if (!LLVMIsAConstant(c->limit.v[k]))
                c->limit.v[k] = LLVMBuildFreeze(b, c->limit.v[k], "vigil.trip.limit");
        }
        c->step = step;
        c->pred = pred;
        c->tests_next = tested == next;
        ptrmap_put(&f->counted_headers, LLVMBasicBlockAsValue(header), c);
        return;
    }
}

void xf_free_counted(struct xf_counted *c)
{
    valvec_free(&c->from);
    valvec_free(&c->start);
    valvec_free(&c->limit);
    free(c);
}

void xf_find_short_loops(struct xfunc *f)
{
    ptrmap_init(&f->short_headers);
    ptrmap_init(&f->counted_headers);
    long max = f->x->settings->short_loop_max;
    int counted = f->x->settings->counted_loops && f->x->settings->loop_counters &&
                  f->x->settings->pred_counters != VIGIL_PRED_COUNTERS_BOTH;
    if ((max <= 0 && !counted) || xf_has_indirectbr(f))
        return;
    size_t n = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f->fn); b; b = LLVMGetNextBasicBlock(b))
        n++;
    LLVMBasicBlockRef *blocks = xf_calloc(n, sizeof *blocks);
    struct valvec *preds = xf_calloc(n, sizeof *preds);
    struct ptrmap index;
    ptrmap_init(&index);
    n = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f->fn); b; b = LLVMGetNextBasicBlock(b)) {
        blocks[n++] = b;
        ptrmap_put(&index, LLVMBasicBlockAsValue(b), (void *)n);
    }
    for (size_t i = 0; i < n; i++) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(blocks[i]);
        for (unsigned k = 0; term && k < LLVMGetNumSuccessors(term); k++) {
            size_t to = (size_t)ptrmap_get(&index, LLVMBasicBlockAsValue(LLVMGetSuccessor(term, k)));
            valvec_push(&preds[to - 1], (LLVMValueRef)(i + 1));   /* as xf_reach reads them */
        }
    }
    struct valvec from = {0}, to = {0};
    xf_back_edges(blocks, n, &index, &from, &to);
    unsigned char *source = xf_calloc(n, 1), *target = xf_calloc(n, 1);
    size_t *latch_count = xf_calloc(n, sizeof *latch_count);
    for (size_t e = 0; e < from.n; e++) {
        source[(size_t)ptrmap_get(&index, from.v[e]) - 1] = 1;
        size_t h = (size_t)ptrmap_get(&index, to.v[e]) - 1;
        target[h] = 1;
        latch_count[h]++;
    }
    for (size_t e = 0; e < from.n; e++) {
        size_t h = (size_t)ptrmap_get(&index, to.v[e]) - 1, l = (size_t)ptrmap_get(&index, from.v[e]) - 1;
        if (latch_count[h] != 1)
            continue;
        unsigned char *body = xf_reach(preds, n, l, 1, h);   /* the latch's loop, header included */
        int innermost = 1;
        for (size_t i = 0; i < n && innermost; i++)
            innermost = !body[i] || ((!source[i] || i == l) && (!target[i] || i == h));
        if (innermost && max > 0 && loop_bound(blocks[h], blocks[l], body, &index) <= (uint64_t)max)
            ptrmap_put(&f->short_headers, to.v[e], (void *)1);
        else if (innermost && counted)
            plan_counted_loop(f, blocks[h], blocks[l], body, &index, blocks, n);
        free(body);
    }
    free(source);
    free(target);
    free(latch_count);
    valvec_free(&from);
    valvec_free(&to);
    for (size_t i = 0; i < n; i++)
        valvec_free(&preds[i]);
    free(preds);
    free(blocks);
    ptrmap_free(&index);
}
