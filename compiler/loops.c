/* Loop-local countdown ("batched" back-edge checks).
 *
 * A back-edge check normally decrements its per-site counter in memory and tests the
 * thread's burst on every iteration. For an innermost loop the checking copy instead counts
 * down a local slot, which SROA/mem2reg turn into a register: the counter is loaded on every
 * edge that enters the loop and stored back on every edge that leaves it. The slow path
 * (countdown at zero) is the usual runtime call.
 *
 * Why only such loops:
 *   - the thread-local burst test is dropped: a burst that a callee starts (its entry check
 *     fired) covers the callee and what it calls, and ends when it returns to this checking
 *     loop, as it would at a back-edge check that ends it. A loop whose calls may recurse
 *     into this same site counts with a stale local there, and the outer store overwrites the
 *     inner count: decrements are lost, as they may be between threads. Loops with calls
 *     are batched only with VIGIL_CC_LOOP_CALLS=1; by default, call-free loops only;
 *   - innermost, with a header that is not the function's entry, every
 *     other body block entered only from the body, no indirectbr in the function: then the
 *     only ways into the body are edges into the header from outside (which load the local)
 *     and this site's own return from the instrumented copy (which reloads it), so the local
 *     is always defined when the check reads it.
 * Counts made by another thread meanwhile may be lost, as the plain check may lose them. */
#include "xform.h"

#include <stdio.h>
#include <stdlib.h>

struct xl_loops {
    size_t n;                    /* back-edge sites, indexed like f->backedge_from */
    struct ptrmap *body;         /* per site: original body blocks -> non-NULL */
    LLVMValueRef *local;         /* per site: the local countdown slot, or NULL */
    struct ptrmap edge_target;   /* check or edge block -> the original block it leads to */
    struct ptrmap edge_blocks;   /* blocks inserted on an edge -> non-NULL */
};

static int has_real_call(LLVMBasicBlockRef block)
{
    for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst; inst = LLVMGetNextInstruction(inst))
        if (xf_is_real_call(inst))
            return 1;
    return 0;
}

/* Predecessor lists of the original blocks (by index), from the original terminators. */
static struct valvec *predecessors(struct xfunc *f, struct ptrmap *index)
{
    struct valvec *preds = xf_calloc(f->blocks.n, sizeof *preds);
    for (size_t i = 0; i < f->blocks.n; i++)
        ptrmap_put(index, f->blocks.v[i], (void *)(i + 1));
    for (size_t i = 0; i < f->blocks.n; i++) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(f->blocks.v[i]));
        unsigned nsucc = term ? LLVMGetNumSuccessors(term) : 0;
        for (unsigned k = 0; k < nsucc; k++) {
            size_t to = (size_t)ptrmap_get(index, LLVMBasicBlockAsValue(LLVMGetSuccessor(term, k)));
            if (to)
                valvec_push(&preds[to - 1], f->blocks.v[i]);
        }
    }
    return preds;
}

/* The natural body of back-edge (from -> to): `to` and every block that reaches `from`, or the
 * source of another back-edge into `to`, without passing `to`. Returns 0 when the loop does
 * not qualify (see the top comment). Outer loops were tried too (their local live across the
 * inner loops): bzip2 compress took more instructions. */
static int natural_body(struct xfunc *f, size_t site, struct valvec *preds, struct ptrmap *index,
                        struct ptrmap *body)
{
    LLVMValueRef to = f->backedge_to.v[site];
    if (to == f->blocks.v[0])
        return 0;
    struct valvec work = {0}, members = {0};
    ptrmap_put(body, to, to);
    valvec_push(&members, to);
    /* Every back-edge into the same header (a `continue`, say) belongs to one loop: its
     * blocks are in the body too, so that going round by either edge stays in registers. */
    for (size_t j = 0; j < f->backedge_to.n; j++)
        if (f->backedge_to.v[j] == to && f->backedge_from.v[j] != to)
            valvec_push(&work, f->backedge_from.v[j]);
    while (work.n) {
        LLVMValueRef block = work.v[--work.n];
        if (ptrmap_get(body, block))
            continue;
        ptrmap_put(body, block, block);
        valvec_push(&members, block);
        struct valvec *p = &preds[(size_t)ptrmap_get(index, block) - 1];
        for (size_t k = 0; k < p->n; k++)
            if (!ptrmap_get(body, p->v[k]))
                valvec_push(&work, p->v[k]);
    }
    int ok = !ptrmap_get(body, f->blocks.v[0]);
    for (size_t i = 0; i < members.n && ok; i++) {
        LLVMValueRef block = members.v[i];
        ok = f->x->settings->loop_calls || !has_real_call(LLVMValueAsBasicBlock(block));
        if (block == to)
            continue;
        struct valvec *p = &preds[(size_t)ptrmap_get(index, block) - 1];
        for (size_t k = 0; k < p->n && ok; k++)
            ok = ptrmap_get(body, p->v[k]) != NULL;
    }
    /* Innermost: no other loop's header inside this body. */
    for (size_t j = 0; j < f->backedge_to.n && ok; j++)
        if (f->backedge_to.v[j] != to && ptrmap_get(body, f->backedge_to.v[j]))
            ok = 0;
    valvec_free(&work);
    valvec_free(&members);
    return ok;
}

struct xl_loops *xl_plan(struct xfunc *f)
{
    struct xl_loops *loops = xf_calloc(1, sizeof *loops);
    size_t n = f->backedge_from.n;
    loops->body = xf_calloc(n, sizeof *loops->body);
    loops->local = xf_calloc(n, sizeof *loops->local);
    loops->n = n;
    ptrmap_init(&loops->edge_target);
    ptrmap_init(&loops->edge_blocks);
    for (size_t i = 0; i < n; i++)
        ptrmap_init(&loops->body[i]);
    if (!f->x->settings->loop_counters || !n || xf_has_indirectbr(f))
        return loops;
    struct ptrmap index;
    ptrmap_init(&index);
    struct valvec *preds = predecessors(f, &index);
    LLVMBuilderRef b = f->x->builder;
    for (size_t i = 0; i < n; i++) {
        if (!natural_body(f, i, preds, &index, &loops->body[i])) {
            ptrmap_clear(&loops->body[i]);
            continue;
        }
        LLVMPositionBuilder(b, f->prologue, LLVMGetFirstInstruction(f->prologue));
        loops->local[i] = LLVMBuildAlloca(b, f->x->i32, "vigil.countdown");
    }
    for (size_t i = 0; i < f->blocks.n; i++)
        valvec_free(&preds[i]);
    free(preds);
    ptrmap_free(&index);
    return loops;
}

LLVMValueRef xl_local(const struct xl_loops *loops, size_t site_index)
{
    return site_index < loops->n ? loops->local[site_index] : NULL;
}

/* What an edge's current successor stands for: blocks inserted on edges and check blocks
 * are looked through to the original block they lead to. */
static LLVMValueRef original_target(struct xl_loops *loops, LLVMBasicBlockRef succ)
{
    LLVMValueRef target = ptrmap_get(&loops->edge_target, LLVMBasicBlockAsValue(succ));
    return target ? target : LLVMBasicBlockAsValue(succ);
}

void xl_note_check(struct xl_loops *loops, LLVMBasicBlockRef check, LLVMBasicBlockRef target)
{
    ptrmap_put(&loops->edge_target, LLVMBasicBlockAsValue(check), LLVMBasicBlockAsValue(target));
}

/* A block on the edge from `block` through successor slot k (every slot with the same
 * successor moves with it), reused when the edge already has one. Returns its terminator, to
 * insert before. */
static LLVMValueRef edge_position(struct xfunc *f, struct xl_loops *loops, LLVMBasicBlockRef block, unsigned k)
{
    LLVMValueRef term = LLVMGetBasicBlockTerminator(block);
    LLVMBasicBlockRef succ = LLVMGetSuccessor(term, k);
    LLVMValueRef succ_value = LLVMBasicBlockAsValue(succ);
    if (ptrmap_get(&loops->edge_blocks, succ_value))   /* one predecessor: this block */
        return LLVMGetBasicBlockTerminator(succ);
    LLVMBasicBlockRef edge = LLVMAppendBasicBlockInContext(f->x->ctx, f->fn, "vigil.edge");
    LLVMBuilderRef b = f->x->builder;
    LLVMPositionBuilderAtEnd(b, edge);
    LLVMValueRef br = LLVMBuildBr(b, succ);
    unsigned nsucc = LLVMGetNumSuccessors(term);
    for (unsigned j = 0; j < nsucc; j++)
        if (LLVMGetSuccessor(term, j) == succ)
            LLVMSetSuccessor(term, j, edge);
    LLVMValueRef edge_value = LLVMBasicBlockAsValue(edge);
    ptrmap_put(&loops->edge_target, edge_value, original_target(loops, succ));
    ptrmap_put(&loops->edge_blocks, edge_value, edge_value);
    return br;
}

/* Runs fn on a block inserted on each distinct edge out of block whose original target is
 * `target` (leaving = 0), or outside body (leaving = 1). */
static void for_each_edge(struct xfunc *f, struct xl_loops *loops, LLVMBasicBlockRef block,
                          const struct ptrmap *body, LLVMValueRef target, int leaving,
                          void (*fn)(struct vigil_xform *x, LLVMValueRef local, uint32_t site), LLVMValueRef local,
                          uint32_t site)
{
    LLVMValueRef term = LLVMGetBasicBlockTerminator(block);
    unsigned nsucc = LLVMGetNumSuccessors(term);
    for (unsigned k = 0; k < nsucc; k++) {
        LLVMBasicBlockRef succ = LLVMGetSuccessor(term, k);
        int seen = 0;
        for (unsigned j = 0; j < k && !seen; j++)
            seen = LLVMGetSuccessor(term, j) == succ;
        if (seen)
            continue;
        LLVMValueRef orig = original_target(loops, succ);
        if (leaving ? ptrmap_get(body, orig) != NULL : orig != target)
            continue;
        LLVMPositionBuilderBefore(f->x->builder, edge_position(f, loops, block, k));
        fn(f->x, local, site);
        term = LLVMGetBasicBlockTerminator(block);   /* unchanged; successors moved */
    }
}

static void load_countdown(struct vigil_xform *x, LLVMValueRef local, uint32_t site)
{
    LLVMBuildStore(x->builder, xc_load_counter(x, site), local);
}

static void store_countdown(struct vigil_xform *x, LLVMValueRef local, uint32_t site)
{
    xc_store_counter(x, site, LLVMBuildLoad2(x->builder, x->i32, local, ""));
}

/* Counted loops (shortloops.c plan_counted_loop): each edge into the loop, after loading the
 * countdown, computes the back-edges B the loop takes this time; when B <= local, local -= B and
 * a copy of the body without the check runs (its exits store local back like the loop's own);
 * else the checked loop runs, and fires where it would have. The copy is made of the checking
 * copy's body blocks as they are now: demoted, the latch's back-edge going to its check. */

/* The back-edges per entry, as an i64, at the builder's position (see struct xf_counted). */
static LLVMValueRef build_trip_count(struct vigil_xform *x, const struct xf_counted *c, LLVMValueRef start,
                                     LLVMValueRef limit)
{
    LLVMBuilderRef b = x->builder;
    LLVMTypeRef type = LLVMTypeOf(start);
    int up = c->step > 0;
    uint64_t size = up ? (uint64_t)c->step : (uint64_t)-c->step;
    unsigned shift = 0;
    while ((UINT64_C(1) << shift) != size)
        shift++;
    LLVMValueRef zero = LLVMConstInt(type, 0, 0), one = LLVMConstInt(type, 1, 0),
                 by = LLVMConstInt(type, shift, 0);
    LLVMValueRef distance = up ? LLVMBuildSub(b, limit, start, "") : LLVMBuildSub(b, start, limit, "");
    LLVMValueRef trips;
    if (c->pred == LLVMIntNE) {
        /* Counter meets the limit: distance / step back-edges testing the counter, one fewer
         * testing its next value (distance 0 then wraps: a count no countdown holds). */
        trips = LLVMBuildLShr(b, distance, by, "");
        if (c->tests_next)
            trips = LLVMBuildSub(b, trips, one, "");
    } else {
        int strict = c->pred == LLVMIntULT || c->pred == LLVMIntSLT || c->pred == LLVMIntUGT || c->pred == LLVMIntSGT;
        /* The values the counter goes on with: start + k*step for k >= 1 (tests_next) or k >= 0. */
        LLVMValueRef inside = LLVMBuildICmp(b, c->pred, start, limit, "");
        if (strict) {
            /* while (x < limit): k*step < distance, k <= (distance - 1) / step */
            trips = LLVMBuildLShr(b, LLVMBuildSub(b, distance, one, ""), by, "");
        } else {
            /* while (x <= limit): k <= distance / step */
            trips = LLVMBuildLShr(b, distance, by, "");
        }
        if (!c->tests_next)
            trips = LLVMBuildAdd(b, trips, one, "");
        trips = LLVMBuildSelect(b, inside, trips, zero, "");   /* none when start is past the limit */
    }
    if (LLVMGetIntTypeWidth(type) < 64)
        trips = LLVMBuildZExt(b, trips, x->i64, "");
    return trips;
}

/* Whether every successor of the loop's body blocks is a body block, the loop's back-edge check
 * (from its latch), or an edge block leaving the loop; sets *check. */
static int counted_loop_shape(struct xfunc *f, struct xl_loops *loops, size_t site, LLVMBasicBlockRef *check)
{
    const struct ptrmap *body = &loops->body[site];
    LLVMValueRef header = f->backedge_to.v[site], latch = f->backedge_from.v[site];
    for (size_t j = 0; j < f->backedge_to.n; j++)
        if (j != site && f->backedge_to.v[j] == header)
            return 0;
    for (size_t j = 0; j < f->inlined_heads.n; j++)
        if (ptrmap_get(body, f->inlined_heads.v[j]))
            return 0;
    *check = NULL;
    for (size_t k = 0; k < f->blocks.n; k++) {
        if (!ptrmap_get(body, f->blocks.v[k]))
            continue;
        LLVMBasicBlockRef block = LLVMValueAsBasicBlock(f->blocks.v[k]);
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst; inst = LLVMGetNextInstruction(inst))
            if (LLVMIsAPHINode(inst))
                return 0;
        LLVMValueRef term = LLVMGetBasicBlockTerminator(block);
        LLVMOpcode op = LLVMGetInstructionOpcode(term);
        if (op != LLVMBr && op != LLVMSwitch)
            return 0;
        for (unsigned i = 0; i < LLVMGetNumSuccessors(term); i++) {
            LLVMBasicBlockRef succ = LLVMGetSuccessor(term, i);
            LLVMValueRef value = LLVMBasicBlockAsValue(succ);
            if (ptrmap_get(body, value))
                continue;
            LLVMValueRef target = original_target(loops, succ);
            if (target == header && f->blocks.v[k] == latch && !ptrmap_get(&loops->edge_blocks, value) &&
                (!*check || *check == succ))
                *check = succ;
            else if (!ptrmap_get(&loops->edge_blocks, value) || ptrmap_get(body, target))
                return 0;
        }
    }
    return *check != NULL;
}

static void version_counted_loop(struct xfunc *f, struct xl_loops *loops, size_t site, const struct xf_counted *c)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    const struct ptrmap *body = &loops->body[site];
    LLVMBasicBlockRef header = LLVMValueAsBasicBlock(f->backedge_to.v[site]), check;
    if (!counted_loop_shape(f, loops, site, &check))
        return;
    /* An entering block in another counted loop (its latch) gets a copy there, which would
     * enter this loop too, where the start and limit frozen in the original do not reach. */
    for (size_t k = 0; k < c->from.n; k++)
        for (size_t j = 0; j < loops->n; j++)
            if (j != site && loops->local[j] && ptrmap_get(&f->counted_headers, f->backedge_to.v[j]) &&
                ptrmap_get(&loops->body[j], c->from.v[k]))
                return;
    /* The edge blocks that load the countdown on the way in from each entering block. */
    struct valvec entries = {0}, starts = {0}, limits = {0};
    for (size_t k = 0; k < c->from.n; k++) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(c->from.v[k]));
        for (unsigned i = 0; i < LLVMGetNumSuccessors(term); i++) {
            LLVMBasicBlockRef succ = LLVMGetSuccessor(term, i);
            LLVMValueRef succ_term = LLVMGetBasicBlockTerminator(succ);
            if (!ptrmap_get(&loops->edge_blocks, LLVMBasicBlockAsValue(succ)) ||
                LLVMGetInstructionOpcode(succ_term) != LLVMBr || LLVMIsConditional(succ_term) ||
                LLVMGetSuccessor(succ_term, 0) != header)
                continue;
            int seen = 0;
            for (size_t j = 0; j < entries.n && !seen; j++)
                seen = entries.v[j] == LLVMBasicBlockAsValue(succ);
            if (seen)
                continue;
            valvec_push(&entries, LLVMBasicBlockAsValue(succ));
            valvec_push(&starts, c->start.v[k]);
            valvec_push(&limits, c->limit.v[k]);
        }
    }
    if (!entries.n)
        goto out;
    /* The copy, after the loop's last block. */
    struct ptrmap copy;
    ptrmap_init(&copy);
    LLVMBasicBlockRef after = NULL;
    for (size_t k = 0; k < f->blocks.n; k++)
        if (ptrmap_get(body, f->blocks.v[k]))
            after = LLVMValueAsBasicBlock(f->blocks.v[k]);
    for (size_t k = 0; k < f->blocks.n; k++) {
        if (!ptrmap_get(body, f->blocks.v[k]))
            continue;
        char name[128];
        snprintf(name, sizeof name, "%s.counted", LLVMGetBasicBlockName(LLVMValueAsBasicBlock(f->blocks.v[k])));
        LLVMBasicBlockRef next = LLVMGetNextBasicBlock(after);
        LLVMBasicBlockRef block = next ? LLVMInsertBasicBlockInContext(x->ctx, next, name)
                                       : LLVMAppendBasicBlockInContext(x->ctx, f->fn, name);
        after = block;
        ptrmap_put(&copy, f->blocks.v[k], LLVMBasicBlockAsValue(block));
    }
    unsigned loop_md = LLVMGetMDKindIDInContext(x->ctx, "llvm.loop", 9);
    for (size_t k = 0; k < f->blocks.n; k++) {
        if (!ptrmap_get(body, f->blocks.v[k]))
            continue;
        LLVMBasicBlockRef original = LLVMValueAsBasicBlock(f->blocks.v[k]);
        LLVMPositionBuilderAtEnd(b, LLVMValueAsBasicBlock(ptrmap_get(&copy, f->blocks.v[k])));
        for (LLVMValueRef inst = LLVMGetFirstInstruction(original); inst; inst = LLVMGetNextInstruction(inst)) {
            LLVMValueRef clone = LLVMInstructionClone(inst);
            xf_insert_keeping_loc(b, clone, "");
            ptrmap_put(&copy, inst, clone);
            int nops = LLVMGetNumOperands(clone);
            for (int i = 0; i < nops; i++) {
                LLVMValueRef op = LLVMGetOperand(clone, (unsigned)i), mapped = op ? ptrmap_get(&copy, op) : NULL;
                if (mapped)
                    LLVMSetOperand(clone, (unsigned)i, mapped);
                else if (op && LLVMValueIsBasicBlock(op) && LLVMValueAsBasicBlock(op) == check)
                    LLVMSetOperand(clone, (unsigned)i, ptrmap_get(&copy, LLVMBasicBlockAsValue(header)));
            }
            if (LLVMIsATerminatorInst(clone))
                LLVMSetMetadata(clone, loop_md, NULL);   /* one loop per loop ID */
        }
    }
    LLVMBasicBlockRef unchecked = LLVMValueAsBasicBlock(ptrmap_get(&copy, LLVMBasicBlockAsValue(header)));
    ptrmap_free(&copy);
    /* Each way in: local -= B when B <= local, into the copy; else the checked loop. */
    LLVMValueRef local = loops->local[site];
    for (size_t k = 0; k < entries.n; k++) {
        LLVMBasicBlockRef entry = LLVMValueAsBasicBlock(entries.v[k]);
        LLVMValueRef br = LLVMGetBasicBlockTerminator(entry);
        LLVMPositionBuilderBefore(b, br);
        LLVMValueRef trips = build_trip_count(x, c, starts.v[k], limits.v[k]);
        LLVMValueRef count = LLVMBuildLoad2(b, x->i32, local, "");
        LLVMValueRef zero = LLVMConstInt(x->i32, 0, 0);
        LLVMValueRef held = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, count, zero, ""), zero, count, "");
        LLVMValueRef fits = LLVMBuildICmp(b, LLVMIntULE, trips, LLVMBuildZExt(b, held, x->i64, ""), "");
        LLVMValueRef less = LLVMBuildSub(b, count, LLVMBuildTrunc(b, trips, x->i32, ""), "");
        LLVMBuildStore(b, LLVMBuildSelect(b, fits, less, count, ""), local);
        LLVMInstructionEraseFromParent(br);
        LLVMPositionBuilderAtEnd(b, entry);
        LLVMBuildCondBr(b, fits, unchecked, header);
    }
    x->stats->counted_loops++;
out:
    valvec_free(&entries);
    valvec_free(&starts);
    valvec_free(&limits);
}

void xl_rewire(struct xfunc *f, struct xl_loops *loops, const uint32_t *sites)
{
    LLVMSetCurrentDebugLocation2(f->x->builder, NULL);
    for (size_t i = 0; i < loops->n; i++) {
        LLVMValueRef local = loops->local[i];
        if (!local)
            continue;
        const struct ptrmap *body = &loops->body[i];
        LLVMValueRef header = f->backedge_to.v[i];
        for (size_t k = 0; k < f->blocks.n; k++) {
            LLVMBasicBlockRef block = LLVMValueAsBasicBlock(f->blocks.v[k]);
            if (!ptrmap_get(body, f->blocks.v[k])) {
                for_each_edge(f, loops, block, body, header, 0, load_countdown, local, sites[i]);
                continue;
            }
            LLVMValueRef term = LLVMGetBasicBlockTerminator(block);
            if (LLVMGetInstructionOpcode(term) == LLVMRet) {
                LLVMPositionBuilderBefore(f->x->builder, term);
                store_countdown(f->x, local, sites[i]);
            }
            for_each_edge(f, loops, block, body, NULL, 1, store_countdown, local, sites[i]);
        }
    }
    for (size_t i = 0; i < loops->n; i++) {
        const struct xf_counted *c = ptrmap_get(&f->counted_headers, f->backedge_to.v[i]);
        if (loops->local[i] && c)
            version_counted_loop(f, loops, i, c);
    }
}

void xl_free(struct xl_loops *loops)
{
    for (size_t i = 0; i < loops->n; i++)
        ptrmap_free(&loops->body[i]);
    free(loops->body);
    free(loops->local);
    ptrmap_free(&loops->edge_target);
    ptrmap_free(&loops->edge_blocks);
    free(loops);
}
