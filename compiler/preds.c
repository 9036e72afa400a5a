/* Predicate counters (seed 002, docs/preds-design.md): at every branch and return site, in
 * the checking copy as well as the instrumented one, a guarded inline counter
 *     e = enable[s];                                   // relaxed load
 *     if (e & (1 << pred)) {
 *         counts[3 * s + pred] += 1;                   // relaxed load + store, no lock
 *         if (e & VIGIL_PRED_BINARY) enable[s] = e & ~(1 << pred);   // seen once: probe off
 *     }
 * The runtime sets enable[] at module registration (all sites, or those of a plan), so a site
 * that is not monitored costs one load and a predictable branch. */
#include "xform.h"

#include "abi.h"

/* The block after `inst`'s position: inst and everything after it move into a new block
 * placed right after the old one, which is left without a terminator (the caller ends it).
 * NULL when a successor has PHIs (they would name the old block; demotion removes them from
 * the bodies, so this does not happen in practice). */
static LLVMBasicBlockRef split_before(struct xfunc *f, LLVMValueRef inst)
{
    struct vigil_xform *x = f->x;
    LLVMBasicBlockRef old = LLVMGetInstructionParent(inst);
    LLVMValueRef term = LLVMGetBasicBlockTerminator(old);
    for (unsigned i = 0; term && i < LLVMGetNumSuccessors(term); i++) {
        LLVMValueRef first = LLVMGetFirstInstruction(LLVMGetSuccessor(term, i));
        if (first && LLVMIsAPHINode(first))
            return NULL;
    }
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.pred.cont");
    LLVMMoveBasicBlockAfter(cont, old);
    LLVMPositionBuilderAtEnd(x->builder, cont);
    for (LLVMValueRef i = inst, next; i; i = next) {
        next = LLVMGetNextInstruction(i);
        LLVMInstructionRemoveFromParent(i);
        xf_insert_keeping_loc(x->builder, i, "");
    }
    return cont;
}

static LLVMValueRef element(struct vigil_xform *x, LLVMTypeRef type, LLVMValueRef base, LLVMValueRef index)
{
    return LLVMBuildInBoundsGEP2(x->builder, type, base, &index, 1, "");
}

static LLVMValueRef relaxed_load(struct vigil_xform *x, LLVMTypeRef type, LLVMValueRef ptr, unsigned align)
{
    LLVMValueRef load = LLVMBuildLoad2(x->builder, type, ptr, "");
    LLVMSetOrdering(load, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(load, align);
    return load;
}

static void relaxed_store(struct vigil_xform *x, LLVMValueRef value, LLVMValueRef ptr, unsigned align)
{
    LLVMValueRef store = LLVMBuildStore(x->builder, value, ptr);
    LLVMSetOrdering(store, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(store, align);
}

/* The guarded counter, built at the end of `from` (no terminator yet), continuing to cont.
 * pred: i8 predicate index computed in `from`. */
static void emit_counter(struct xfunc *f, LLVMBasicBlockRef from, LLVMBasicBlockRef cont, uint32_t site,
                         LLVMValueRef pred)
{
    struct vigil_xform *x = f->x;
    LLVMBasicBlockRef bump = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.pred.count");
    LLVMBasicBlockRef off = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.pred.off");
    LLVMMoveBasicBlockAfter(bump, from);
    LLVMMoveBasicBlockAfter(off, bump);

    LLVMPositionBuilderAtEnd(x->builder, from);
    LLVMValueRef enable_at = element(x, x->i8, x->pred_enable, LLVMConstInt(x->i64, site, 0));
    LLVMValueRef enable = relaxed_load(x, x->i8, enable_at, 1);
    LLVMValueRef bit = LLVMBuildShl(x->builder, LLVMConstInt(x->i8, 1, 0), pred, "");
    LLVMValueRef on = LLVMBuildICmp(x->builder, LLVMIntNE, LLVMBuildAnd(x->builder, enable, bit, ""),
                                    LLVMConstInt(x->i8, 0, 0), "");
    LLVMBuildCondBr(x->builder, on, bump, cont);

    LLVMPositionBuilderAtEnd(x->builder, bump);
    LLVMValueRef index = LLVMBuildAdd(x->builder, LLVMConstInt(x->i64, (uint64_t)site * VIGIL_PRED_SLOTS, 0),
                                      LLVMBuildZExt(x->builder, pred, x->i64, ""), "");
    LLVMValueRef count_at = element(x, x->i64, x->pred_counts, index);
    LLVMValueRef count = relaxed_load(x, x->i64, count_at, 8);
    relaxed_store(x, LLVMBuildAdd(x->builder, count, LLVMConstInt(x->i64, 1, 0), ""), count_at, 8);
    LLVMValueRef binary = LLVMBuildICmp(x->builder, LLVMIntNE,
                                        LLVMBuildAnd(x->builder, enable, LLVMConstInt(x->i8, VIGIL_PRED_BINARY, 0), ""),
                                        LLVMConstInt(x->i8, 0, 0), "");
    LLVMBuildCondBr(x->builder, binary, off, cont);

    LLVMPositionBuilderAtEnd(x->builder, off);
    relaxed_store(x, LLVMBuildAnd(x->builder, enable, LLVMBuildNot(x->builder, bit, ""), ""), enable_at, 1);
    LLVMBuildBr(x->builder, cont);
    f->x->stats->pred_counters++;
}

void xp_count_branch(struct xfunc *f, LLVMValueRef br, uint32_t site)
{
    struct vigil_xform *x = f->x;
    LLVMBasicBlockRef from = LLVMGetInstructionParent(br);
    LLVMValueRef cond = LLVMGetCondition(br);
    LLVMBasicBlockRef cont = split_before(f, br);
    if (!cont)
        return;
    LLVMPositionBuilderAtEnd(x->builder, from);
    emit_counter(f, from, cont, site, LLVMBuildZExt(x->builder, cond, x->i8, ""));
}

void xp_count_return(struct xfunc *f, LLVMValueRef call, uint32_t site, LLVMValueRef (*as_i64)(struct vigil_xform *, LLVMValueRef))
{
    struct vigil_xform *x = f->x;
    LLVMValueRef next = LLVMGetNextInstruction(call);
    if (!next)
        return;
    LLVMBasicBlockRef from = LLVMGetInstructionParent(call);
    LLVMBasicBlockRef cont = split_before(f, next);
    if (!cont)
        return;
    LLVMPositionBuilderAtEnd(x->builder, from);
    LLVMValueRef value = as_i64(x, call);
    /* < 0 -> 0, == 0 -> 1, > 0 -> 2 */
    LLVMValueRef zero = LLVMConstInt(x->i64, 0, 0);
    LLVMValueRef not_negative = LLVMBuildZExt(x->builder, LLVMBuildICmp(x->builder, LLVMIntSGE, value, zero, ""), x->i8, "");
    LLVMValueRef positive = LLVMBuildZExt(x->builder, LLVMBuildICmp(x->builder, LLVMIntSGT, value, zero, ""), x->i8, "");
    emit_counter(f, from, cont, site, LLVMBuildAdd(x->builder, not_negative, positive, ""));
}
