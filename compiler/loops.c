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
    for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst; inst = LLVMGetNextInstruction(inst)) {
        if (!LLVMIsACallInst(inst))
            continue;
        LLVMValueRef callee = LLVMGetCalledValue(inst);
        if (!callee || !LLVMIsAFunction(callee) || LLVMGetIntrinsicID(callee) == 0)
            return 1;   /* a call, inline asm included */
    }
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
 * inner loops): bzip2 compress took more instructions, 1.20x plain instead of 1.175x. */
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
