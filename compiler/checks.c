/* Dispatch checks (code shape in common/abi.h). Each check site s gets two entry blocks:
 *   check.s  reached from the checking copy (and from the prologue for the entry site);
 *   burst.s  reached from the instrumented copy, and from check.s when the thread is already
 *            inside a burst (for example, called from instrumented code).
 * Both end in a branch to the site's target block in one copy or the other. */
#include "xform.h"

#include <stdio.h>

/* Weights for the dispatch branches: the checking copy is the overwhelmingly likely path. */
#define LIKELY 2000
#define UNLIKELY 1

static LLVMBasicBlockRef new_block(struct xfunc *f, const char *what, uint32_t site)
{
    char name[48];
    snprintf(name, sizeof name, "vigil.%s.%u", what, site);
    return LLVMAppendBasicBlockInContext(f->x->ctx, f->fn, name);
}

static LLVMValueRef gep_i32(struct vigil_xform *x, LLVMValueRef base, LLVMTypeRef type, uint64_t index)
{
    LLVMValueRef idx = LLVMConstInt(x->i64, index, 0);
    return LLVMBuildInBoundsGEP2(x->builder, type, base, &idx, 1, "");
}

static LLVMValueRef atomic_load(struct vigil_xform *x, LLVMTypeRef type, LLVMValueRef ptr, unsigned align)
{
    LLVMValueRef load = LLVMBuildLoad2(x->builder, type, ptr, "");
    LLVMSetOrdering(load, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(load, align);
    return load;
}

static void atomic_store(struct vigil_xform *x, LLVMValueRef value, LLVMValueRef ptr, unsigned align)
{
    LLVMValueRef store = LLVMBuildStore(x->builder, value, ptr);
    LLVMSetOrdering(store, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(store, align);
}

/* Branch on a runtime call's answer: non-zero -> the instrumented copy. */
static void branch_on_call(struct vigil_xform *x, const struct rt_fn *fn, uint32_t site,
                           LLVMBasicBlockRef instrumented, LLVMBasicBlockRef checking)
{
    LLVMValueRef args[] = {x->descriptor, LLVMConstInt(x->i32, site, 0)};
    LLVMValueRef answer = xe_call(x, fn, args, 2);
    LLVMValueRef go = LLVMBuildICmp(x->builder, LLVMIntNE, answer, LLVMConstInt(x->i32, 0, 0), "");
    LLVMBuildCondBr(x->builder, go, instrumented, checking);
}

/* Builds the blocks of site s; returns {check.s, burst.s} through the out parameters. */
static void build_check(struct xfunc *f, uint32_t site, LLVMMetadataRef loc,
                        LLVMBasicBlockRef checking, LLVMBasicBlockRef instrumented,
                        LLVMBasicBlockRef *check_out, LLVMBasicBlockRef *burst_out)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    LLVMBasicBlockRef check = new_block(f, "check", site), count = new_block(f, "count", site);
    LLVMBasicBlockRef enter = new_block(f, "enter", site), decrement = new_block(f, "decrement", site);
    LLVMBasicBlockRef burst = new_block(f, "burst", site), burst_next = new_block(f, "burst.next", site);
    LLVMBasicBlockRef burst_end = new_block(f, "burst.end", site);
    LLVMValueRef zero = LLVMConstInt(x->i32, 0, 0), one = LLVMConstInt(x->i32, 1, 0);
    LLVMSetCurrentDebugLocation2(b, loc);

    /* check: if (__vigil_burst_left != 0) goto burst; */
    LLVMPositionBuilderAtEnd(b, check);
    LLVMValueRef left = LLVMBuildLoad2(b, x->i32, x->burst_left, "");
    LLVMValueRef in_burst = LLVMBuildICmp(b, LLVMIntNE, left, zero, "");
    xe_set_weights(x, LLVMBuildCondBr(b, in_burst, burst, count), UNLIKELY, LIKELY);

    /* count: c = counters[s]; if (c == 0) goto enter; */
    LLVMPositionBuilderAtEnd(b, count);
    LLVMValueRef counter = gep_i32(x, x->counters, x->i32, site);
    LLVMValueRef c = atomic_load(x, x->i32, counter, 4);
    LLVMValueRef expired = LLVMBuildICmp(b, LLVMIntEQ, c, zero, "");
    xe_set_weights(x, LLVMBuildCondBr(b, expired, enter, decrement), UNLIKELY, LIKELY);

    LLVMPositionBuilderAtEnd(b, enter);
    branch_on_call(x, &x->dispatch_enter, site, instrumented, checking);

    LLVMPositionBuilderAtEnd(b, decrement);
    atomic_store(x, LLVMBuildSub(b, c, one, ""), counter, 4);
    LLVMBuildBr(b, checking);

    /* burst: state[s].instr_execs += 1; b = burst_left; if (b > 1) { burst_left = b - 1; ... } */
    LLVMPositionBuilderAtEnd(b, burst);
    LLVMValueRef execs_ptr = gep_i32(x, x->state, x->i64, (uint64_t)site * 4);
    LLVMValueRef execs = atomic_load(x, x->i64, execs_ptr, 8);
    atomic_store(x, LLVMBuildAdd(b, execs, LLVMConstInt(x->i64, 1, 0), ""), execs_ptr, 8);
    LLVMValueRef burst_left = LLVMBuildLoad2(b, x->i32, x->burst_left, "");
    LLVMValueRef more = LLVMBuildICmp(b, LLVMIntUGT, burst_left, one, "");
    xe_set_weights(x, LLVMBuildCondBr(b, more, burst_next, burst_end), LIKELY, UNLIKELY);

    LLVMPositionBuilderAtEnd(b, burst_next);
    LLVMBuildStore(b, LLVMBuildSub(b, burst_left, one, ""), x->burst_left);
    LLVMBuildBr(b, instrumented);

    LLVMPositionBuilderAtEnd(b, burst_end);
    branch_on_call(x, &x->burst_end, site, instrumented, checking);

    LLVMSetCurrentDebugLocation2(b, NULL);
    *check_out = check;
    *burst_out = burst;
}

static void redirect(LLVMValueRef terminator, LLVMBasicBlockRef from, LLVMBasicBlockRef to)
{
    unsigned n = LLVMGetNumSuccessors(terminator);
    for (unsigned i = 0; i < n; i++)
        if (LLVMGetSuccessor(terminator, i) == from)
            LLVMSetSuccessor(terminator, i, to);
}

void xf_insert_checks(struct xfunc *f)
{
    struct vigil_xform *x = f->x;
    LLVMBasicBlockRef entry = LLVMValueAsBasicBlock(f->blocks.v[0]);
    LLVMBasicBlockRef check, burst;
    uint32_t site = xs_add_entry(x, f->name, f->subprogram);
    build_check(f, site, xf_debug_loc(f, LLVMGetFirstInstruction(entry)), entry,
                xf_clone_block(f, entry), &check, &burst);
    LLVMPositionBuilderAtEnd(x->builder, f->prologue);
    LLVMBuildBr(x->builder, check);
    x->stats->entry_checks++;

    for (size_t i = 0; i < f->backedge_from.n; i++) {
        LLVMBasicBlockRef from = LLVMValueAsBasicBlock(f->backedge_from.v[i]);
        LLVMBasicBlockRef to = LLVMValueAsBasicBlock(f->backedge_to.v[i]);
        LLVMValueRef term = LLVMGetBasicBlockTerminator(from);
        if (LLVMGetInstructionOpcode(term) == LLVMIndirectBr)
            continue;   /* never reached: clone.c moved these checks to the target's top */
        LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(term);
        site = xs_add(x, VIGIL_SITE_BACKEDGE, f->name, loc, 0);
        build_check(f, site, xf_debug_loc(f, term), to, xf_clone_block(f, to), &check, &burst);
        redirect(term, to, check);
        redirect(LLVMGetBasicBlockTerminator(xf_clone_block(f, from)), xf_clone_block(f, to), burst);
        x->stats->backedge_checks++;
    }
}
