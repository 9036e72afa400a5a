/* Dispatch checks (code shape in common/abi.h). Each check site s gets two entry blocks:
 *   check.s  reached from the checking copy (and from the prologue for the entry site);
 *   burst.s  reached from the instrumented copy, and from check.s when the thread is already
 *            inside a burst (for example, called from instrumented code).
 * Both end in a branch to the site's target block in one copy or the other. */
#include "xform.h"

#include "abi.h"

#include <stdio.h>
#include <stdlib.h>

/* Weights for the dispatch branches: the checking copy is the overwhelmingly likely path
 * (a check fires: UNLIKELY against xk_fired_weight), and a burst usually goes on (LIKELY). */
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

LLVMValueRef xc_load_counter(struct vigil_xform *x, uint32_t site)
{
    return xe_relaxed_load(x, x->i32, gep_i32(x, x->counters, x->i32, xs_dispatch(x, site)), 4);
}

void xc_store_counter(struct vigil_xform *x, uint32_t site, LLVMValueRef value)
{
    xe_relaxed_store(x, value, gep_i32(x, x->counters, x->i32, xs_dispatch(x, site)), 4);
}

/* Branch on a runtime call's answer: non-zero -> the instrumented copy. */
static void branch_on_call(struct vigil_xform *x, const struct rt_fn *fn, uint32_t site,
                           LLVMBasicBlockRef instrumented, LLVMBasicBlockRef checking)
{
    LLVMValueRef answer = xe_call_slow_path(x, fn, xs_dispatch(x, site));
    LLVMValueRef go = LLVMBuildICmp(x->builder, LLVMIntNE, answer, LLVMConstInt(x->i32, 0, 0), "");
    LLVMBuildCondBr(x->builder, go, instrumented, checking);
}

/* At the builder's position: counters[s] -= 1 (plain load and store, racy on purpose, see
 * below); returns whether it went negative. */
static LLVMValueRef count_down(struct vigil_xform *x, uint32_t site)
{
    LLVMBuilderRef b = x->builder;
    LLVMValueRef counter = gep_i32(x, x->counters, x->i32, xs_dispatch(x, site));
    LLVMValueRef c = LLVMBuildSub(b, LLVMBuildLoad2(b, x->i32, counter, ""), LLVMConstInt(x->i32, 1, 0), "");
    LLVMBuildStore(b, c, counter);
    return LLVMBuildICmp(b, LLVMIntSLT, c, LLVMConstInt(x->i32, 0, 0), "");
}

/* The checking copy's fast path of a plain check:
 *   check: if (__vigil_burst_left != 0) goto burst;
 *   count: c = counters[s] - 1; counters[s] = c; if (c < 0) goto enter; goto checking;
 * A plain (non-atomic) load and store, racy on purpose (common/abi.h): x86 folds them and the
 * sign test into `decl counters+4s(%rip); js enter`. Without `burst` (the entry of an outlined
 * function, see xf_insert_outlined_entry_check) there is no burst test. */
static void build_memory_countdown(struct xfunc *f, LLVMBasicBlockRef check, LLVMBasicBlockRef count,
                                   LLVMBasicBlockRef enter, LLVMBasicBlockRef decrement, LLVMBasicBlockRef burst,
                                   LLVMBasicBlockRef checking, uint32_t site)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    LLVMValueRef zero = LLVMConstInt(x->i32, 0, 0);
    if (burst) {
        LLVMPositionBuilderAtEnd(b, check);
        LLVMValueRef left = LLVMBuildLoad2(b, x->i32, x->burst_left, "");
        LLVMValueRef in_burst = LLVMBuildICmp(b, LLVMIntNE, left, zero, "");
        xe_set_weights(x, LLVMBuildCondBr(b, in_burst, burst, count), UNLIKELY, xk_fired_weight(f));
    } else {
        count = check;   /* no burst test: callers inside a burst come in through a burst entry */
    }

    LLVMPositionBuilderAtEnd(b, count);
    xe_set_weights(x, LLVMBuildCondBr(b, count_down(x, site), enter, decrement), UNLIKELY, xk_fired_weight(f));

    LLVMPositionBuilderAtEnd(b, decrement);
    LLVMBuildBr(b, checking);
}

/* The same for a batched loop (loops.c): the countdown lives in `local`, no burst test:
 *   check: c = local - 1; local = c; if (c < 0) goto enter; goto checking;
 * x86 makes it `add $-1, reg; js enter`. `enter` reloads the local from the counter that the
 * runtime reset, so a local that went negative is never stored back. Against the earlier
 * `test; je enter; dec` (bench/run.py, mode=off instructions): bzip2 compress 1.211 -> 1.176,
 * bc 1.211 -> 1.172, gzip decompress 1.102 -> 1.157 (its CRC loop loses a hoisted address). */
static void build_local_countdown(struct vigil_xform *x, LLVMBasicBlockRef check, LLVMBasicBlockRef enter,
                                  LLVMBasicBlockRef decrement, LLVMBasicBlockRef checking, LLVMValueRef local)
{
    LLVMBuilderRef b = x->builder;
    LLVMValueRef zero = LLVMConstInt(x->i32, 0, 0), one = LLVMConstInt(x->i32, 1, 0);
    LLVMPositionBuilderAtEnd(b, check);
    LLVMValueRef c = LLVMBuildSub(b, LLVMBuildLoad2(b, x->i32, local, ""), one, "");
    LLVMBuildStore(b, c, local);
    LLVMValueRef expired = LLVMBuildICmp(b, LLVMIntSLT, c, zero, "");
    /* Not xk_fired_weight: this path stays in the function (coldsplit.c). The loop is an innermost
     * call-free one, the hottest code there is; with its fired path split off, bc ran markedly
     * slower in adaptive mode with the same instruction count. */
    xe_set_weights(x, LLVMBuildCondBr(b, expired, enter, decrement), UNLIKELY, LIKELY);
    LLVMPositionBuilderAtEnd(b, decrement);
    LLVMBuildBr(b, checking);
}

LLVMBasicBlockRef xc_build_idle_path(struct vigil_xform *x, LLVMValueRef fn, uint32_t pin_site,
                                     LLVMBasicBlockRef instrumented, LLVMBasicBlockRef checking)
{
    if (!xp_pins(x))
        return checking;
    LLVMBuilderRef b = x->builder;
    LLVMBasicBlockRef was = LLVMGetInsertBlock(b);   /* the caller goes on building there */
    char name[48];
    snprintf(name, sizeof name, "vigil.idle.%u", pin_site);
    LLVMBasicBlockRef idle = LLVMAppendBasicBlockInContext(x->ctx, fn, name);
    LLVMPositionBuilderAtEnd(b, idle);
    LLVMValueRef index = LLVMConstInt(x->i64, pin_site, 0);
    LLVMValueRef enable = xe_relaxed_load(x, x->i8, LLVMBuildInBoundsGEP2(b, x->i8, x->pred_enable, &index, 1, ""), 1);
    LLVMValueRef pinned = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, enable, LLVMConstInt(x->i8, VIGIL_PRED_PINNED, 0), ""),
                                        LLVMConstInt(x->i8, 0, 0), "");
    LLVMBuildCondBr(b, pinned, instrumented, checking);
    if (was)
        LLVMPositionBuilderAtEnd(b, was);
    return idle;
}

/* At the builder's position: state[s].instr_execs += 1 (relaxed load and store, no lock:
 * common/abi.h), an execution of dispatch site s counted by the instrumented copy. */
void xc_count_instr_exec(struct vigil_xform *x, uint32_t site)
{
    LLVMValueRef execs_ptr = gep_i32(x, x->state, x->i64, (uint64_t)xs_dispatch(x, site) * 4);
    LLVMValueRef execs = xe_relaxed_load(x, x->i64, execs_ptr, 8);
    xe_relaxed_store(x, LLVMBuildAdd(x->builder, execs, LLVMConstInt(x->i64, 1, 0), ""), execs_ptr, 8);
}

/* burst (a block of fn, empty): the thread is in a burst, or was until a callee ended it, or
 * runs a pinned function (common/abi.h):
 *   state[s].instr_execs += 1; b = burst_left;
 *   if (b > 1) { burst_left = b - 1; goto instrumented; }
 *   if (b == 0) goto idle;                     // with pins only (xc_build_idle_path)
 *   if (__vigil_burst_end(&m, s)) goto instrumented; else goto checking; */
void xc_build_burst_path(struct vigil_xform *x, LLVMValueRef fn, uint32_t site, uint32_t pin_site,
                         LLVMBasicBlockRef burst, LLVMBasicBlockRef instrumented, LLVMBasicBlockRef checking)
{
    LLVMBuilderRef b = x->builder;
    LLVMValueRef one = LLVMConstInt(x->i32, 1, 0);
    char name[48];
    snprintf(name, sizeof name, "vigil.burst.next.%u", site);
    LLVMBasicBlockRef burst_next = LLVMAppendBasicBlockInContext(x->ctx, fn, name);
    snprintf(name, sizeof name, "vigil.burst.end.%u", site);
    LLVMBasicBlockRef burst_end = LLVMAppendBasicBlockInContext(x->ctx, fn, name);

    LLVMPositionBuilderAtEnd(b, burst);
    xc_count_instr_exec(x, site);
    LLVMValueRef burst_left = LLVMBuildLoad2(b, x->i32, x->burst_left, "");
    LLVMValueRef more = LLVMBuildICmp(b, LLVMIntUGT, burst_left, one, "");
    xe_set_weights(x, LLVMBuildCondBr(b, more, burst_next, burst_end), LIKELY, UNLIKELY);

    LLVMPositionBuilderAtEnd(b, burst_next);
    LLVMBuildStore(b, LLVMBuildSub(b, burst_left, one, ""), x->burst_left);
    LLVMBuildBr(b, instrumented);

    LLVMPositionBuilderAtEnd(b, burst_end);
    if (xp_pins(x)) {   /* b <= 1 here: 0 is no burst at all, nothing for the runtime to end */
        snprintf(name, sizeof name, "vigil.burst.last.%u", site);
        LLVMBasicBlockRef last = LLVMAppendBasicBlockInContext(x->ctx, fn, name);
        LLVMValueRef none = LLVMBuildICmp(b, LLVMIntEQ, burst_left, LLVMConstInt(x->i32, 0, 0), "");
        LLVMBuildCondBr(b, none, xc_build_idle_path(x, fn, pin_site, instrumented, checking), last);
        LLVMPositionBuilderAtEnd(b, last);
    }
    branch_on_call(x, &x->burst_end, site, instrumented, checking);
}

LLVMBasicBlockRef xc_build_countdown(struct xfunc *f, uint32_t site, LLVMMetadataRef loc,
                                     LLVMBasicBlockRef checking, LLVMBasicBlockRef instrumented,
                                     LLVMValueRef local, LLVMBasicBlockRef burst, LLVMBasicBlockRef *back)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    LLVMBasicBlockRef check = new_block(f, "check", site);
    LLVMBasicBlockRef enter = new_block(f, "enter", site), decrement = new_block(f, "decrement", site);
    LLVMSetCurrentDebugLocation2(b, loc);

    *back = checking;
    if (local) {
        *back = new_block(f, "reload", site);
        LLVMPositionBuilderAtEnd(b, *back);
        LLVMBuildStore(b, xc_load_counter(x, site), local);
        LLVMBuildBr(b, checking);
        build_local_countdown(x, check, enter, decrement, checking, local);
    } else {
        /* A way back of its own, where the caller may restore what the slow path loses
         * (transfer.c masks the slots' known zeros there); an empty block otherwise. */
        *back = new_block(f, "back", site);
        LLVMPositionBuilderAtEnd(b, *back);
        LLVMBuildBr(b, checking);
        build_memory_countdown(f, check, burst ? new_block(f, "countdown", site) : NULL, enter, decrement, burst,
                               checking, site);
    }
    LLVMPositionBuilderAtEnd(b, enter);
    branch_on_call(x, &x->dispatch_enter, site, instrumented, *back);
    LLVMSetCurrentDebugLocation2(b, NULL);
    return check;
}

LLVMBasicBlockRef xc_build_check(struct xfunc *f, uint32_t site, LLVMMetadataRef loc,
                                 LLVMBasicBlockRef checking, LLVMBasicBlockRef instrumented,
                                 LLVMValueRef local, int test_burst, LLVMBasicBlockRef *burst_out,
                                 LLVMBasicBlockRef *back_out)
{
    LLVMBasicBlockRef burst = test_burst || burst_out ? new_block(f, "burst", site) : NULL, back;
    LLVMBasicBlockRef check = xc_build_countdown(f, site, loc, checking, instrumented, local,
                                                 test_burst ? burst : NULL, &back);
    if (burst) {
        LLVMSetCurrentDebugLocation2(f->x->builder, loc);
        xc_build_burst_path(f->x, f->fn, site, f->entry_site, burst, instrumented, back);
        LLVMSetCurrentDebugLocation2(f->x->builder, NULL);
    }
    if (burst_out)
        *burst_out = burst;
    if (back_out)
        *back_out = back;
    return check;
}

void xc_redirect(LLVMValueRef terminator, LLVMBasicBlockRef from, LLVMBasicBlockRef to)
{
    unsigned n = LLVMGetNumSuccessors(terminator);
    for (unsigned i = 0; i < n; i++)
        if (LLVMGetSuccessor(terminator, i) == from)
            LLVMSetSuccessor(terminator, i, to);
}

/* An interpreter's dispatch: a block that ends in a computed goto to an address loaded from a
 * jump table of f that labels.c gave the clone a copy of, after at most DISPATCH_MAX
 * instructions besides debug intrinsics and loads and stores of demotion slots (registers once
 * promoted). Returns the address of the table entry, with the table and its clone. */
enum { DISPATCH_MAX = 16 };

static LLVMValueRef dispatch_entry(struct xfunc *f, LLVMBasicBlockRef block, LLVMValueRef *table,
                                   LLVMValueRef *clone_table)
{
    LLVMValueRef term = LLVMGetBasicBlockTerminator(block);
    if (!f->labels_mapped || !term || LLVMGetInstructionOpcode(term) != LLVMIndirectBr)
        return NULL;
    unsigned n = 0;
    for (LLVMValueRef i = LLVMGetFirstInstruction(block); i != term; i = LLVMGetNextInstruction(i)) {
        int slot_access = LLVMIsALoadInst(i) ? LLVMIsAAllocaInst(LLVMGetOperand(i, 0)) != NULL
                        : LLVMIsAStoreInst(i) && LLVMIsAAllocaInst(LLVMGetOperand(i, 1)) != NULL;
        if (!slot_access && !xf_is_call_to_prefix(i, "llvm.dbg.") && ++n > DISPATCH_MAX)
            return NULL;
    }
    LLVMValueRef load = xf_strip_bitcasts(LLVMGetOperand(term, 0));
    if (!LLVMIsALoadInst(load) || LLVMGetInstructionParent(load) != block)
        return NULL;
    LLVMValueRef entry = LLVMGetOperand(load, 0);
    if (!LLVMIsAGetElementPtrInst(entry))
        return NULL;
    *table = xf_strip_bitcasts(LLVMGetOperand(entry, 0));
    *clone_table = LLVMIsAGlobalVariable(*table) ? ptrmap_get(&f->clones, *table) : NULL;
    return *clone_table ? entry : NULL;
}

/* The back-edge check of a loop whose header is an interpreter's dispatch, folded into its
 * computed goto: a check between the two would keep the back end from copying the dispatch
 * into every handler (threaded code). The dispatch block becomes
 *     c = counters[s] - 1; counters[s] = c; ...; goto *(c < 0 ? &&enter : table[i]);
 * and `enter` calls the runtime, then jumps through the same entry of the clone's table.
 * It goes to the clone even when no burst starts (mode=off): a way back to the checking
 * copy's handlers would make them join two paths, and the copies that joining costs would
 * land in the dispatch itself. Such an excursion ends at the clone's next back-edge, and its
 * probes test the thread's burst (f->dispatch_folded, probes.c), so it reports nothing.
 * lua's luaV_execute keeps its many indirect jumps, as in plain, for a few more instructions
 * (docs/performance.md). Returns 0 when `to` is
 * no such block. */
static int fold_check_into_dispatch(struct xfunc *f, uint32_t site, LLVMMetadataRef loc,
                                    LLVMBasicBlockRef to, LLVMBasicBlockRef *burst)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    LLVMValueRef table, clone_table, entry = dispatch_entry(f, to, &table, &clone_table);
    if (!entry)
        return 0;
    LLVMValueRef term = LLVMGetBasicBlockTerminator(to);
    LLVMValueRef address = LLVMGetOperand(term, 0);
    LLVMTypeRef entry_type = LLVMTypeOf(entry), address_type = LLVMTypeOf(address);
    unsigned ndest = LLVMGetNumSuccessors(term);

    LLVMBasicBlockRef entry_block = LLVMGetEntryBasicBlock(f->fn);
    LLVMPositionBuilder(b, entry_block, LLVMGetFirstInstruction(entry_block));
    LLVMValueRef slot = LLVMBuildAlloca(b, entry_type, "vigil.dispatch.entry");

    LLVMBasicBlockRef enter = new_block(f, "enter", site);
    LLVMSetCurrentDebugLocation2(b, loc);
    LLVMPositionBuilderBefore(b, term);
    LLVMValueRef expired = count_down(x, site);
    LLVMBuildStore(b, entry, slot);
    LLVMValueRef enter_address = LLVMBuildBitCast(b, LLVMBlockAddress(f->fn, enter), address_type, "");
    LLVMSetOperand(term, 0, LLVMBuildSelect(b, expired, enter_address, address, ""));
    LLVMAddDestination(term, enter);

    LLVMPositionBuilderAtEnd(b, enter);
    xe_call_slow_path(x, &x->dispatch_enter, xs_dispatch(x, site));
    LLVMValueRef offset = LLVMBuildSub(b, LLVMBuildPtrToInt(b, LLVMBuildLoad2(b, entry_type, slot, ""), x->i64, ""),
                                       LLVMBuildPtrToInt(b, table, x->i64, ""), "");
    LLVMValueRef clone_entry = LLVMBuildInBoundsGEP2(b, x->i8, LLVMBuildBitCast(b, clone_table, x->ptr, ""), &offset, 1, "");
    clone_entry = LLVMBuildBitCast(b, clone_entry, entry_type, "");
    LLVMValueRef jump = LLVMBuildIndirectBr(b, LLVMBuildLoad2(b, address_type, clone_entry, ""), ndest);
    for (unsigned k = 0; k < ndest; k++)
        LLVMAddDestination(jump, xf_clone_block(f, LLVMGetSuccessor(term, k)));

    *burst = new_block(f, "burst", site);
    xc_build_burst_path(x, f->fn, site, f->entry_site, *burst, xf_clone_block(f, to), to);
    LLVMSetCurrentDebugLocation2(b, NULL);
    f->dispatch_folded = 1;
    return 1;
}

void xf_insert_checks(struct xfunc *f)
{
    struct vigil_xform *x = f->x;
    LLVMBasicBlockRef entry = LLVMValueAsBasicBlock(f->blocks.v[0]);
    LLVMBasicBlockRef check, burst;
    uint32_t site = f->entry_site = xs_add_entry(x, f->name, f->subprogram);
    struct xl_loops *loops = xl_plan(f);
    check = xc_build_check(f, site, xf_debug_loc(f, LLVMGetFirstInstruction(entry)), entry,
                           xf_clone_block(f, entry), NULL, 1, &burst, NULL);
    LLVMPositionBuilderAtEnd(x->builder, f->prologue);
    LLVMBuildBr(x->builder, check);
    x->stats->entry_checks++;

    uint32_t *sites = xf_calloc(f->backedge_from.n, sizeof *sites);
    for (size_t i = 0; i < f->backedge_from.n; i++) {
        LLVMBasicBlockRef from = LLVMValueAsBasicBlock(f->backedge_from.v[i]);
        LLVMBasicBlockRef to = LLVMValueAsBasicBlock(f->backedge_to.v[i]);
        LLVMValueRef term = LLVMGetBasicBlockTerminator(from);
        if (LLVMGetInstructionOpcode(term) == LLVMIndirectBr)
            continue;   /* never reached: clone.c moved these checks to the target's top */
        LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(term);
        site = sites[i] = xs_add(x, VIGIL_SITE_BACKEDGE, f->name, loc, 0);
        if (fold_check_into_dispatch(f, site, xf_debug_loc(f, term), to, &burst)) {
            xc_redirect(LLVMGetBasicBlockTerminator(xf_clone_block(f, from)), xf_clone_block(f, to), burst);
            x->stats->backedge_checks++;
            continue;
        }
        LLVMValueRef local = xl_local(loops, i);
        check = xc_build_check(f, site, xf_debug_loc(f, term), to, xf_clone_block(f, to), local,
                               XC_BACKEDGE_TESTS_BURST, &burst, NULL);
        xc_redirect(term, to, check);
        xl_note_check(loops, check, to);
        xc_redirect(LLVMGetBasicBlockTerminator(xf_clone_block(f, from)), xf_clone_block(f, to), burst);
        x->stats->backedge_checks++;
        if (local)
            x->stats->batched_checks++;
    }
    size_t ninlined = f->inlined_heads.n;
    LLVMBasicBlockRef *clones = xf_calloc(ninlined, sizeof *clones);
    uint32_t *inlined_sites = xf_calloc(ninlined, sizeof *inlined_sites);
    for (size_t j = 0; j < ninlined; j++)
        clones[j] = xf_clone_block(f, LLVMValueAsBasicBlock(f->inlined_heads.v[j]));
    xi_insert_checks(f, loops, clones, inlined_sites);
    free(clones);
    free(inlined_sites);
    xl_rewire(f, loops, sites);
    xl_free(loops);
    free(sites);
}

/* The entry check of a function whose instrumented copy is outlined (outline.c): a countdown
 * without burst test, whose slow path tail-calls the outlined copy when a burst starts. A
 * caller inside a burst comes in through the burst entry instead (outline.c), which continues
 * the burst in the outlined copy or, at its end, tail-calls the function (a giant function's
 * always tail-calls it). */
void xf_insert_outlined_entry_check(struct xfunc *f)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    LLVMBasicBlockRef entry = LLVMValueAsBasicBlock(f->blocks.v[0]);
    LLVMMetadataRef loc = xf_debug_loc(f, LLVMGetFirstInstruction(entry));
    uint32_t site = f->entry_site = xs_add_entry(x, f->name, f->subprogram);
    LLVMBasicBlockRef call = new_block(f, "outlined", site), check = new_block(f, "check", site);
    LLVMBasicBlockRef enter = new_block(f, "enter", site), decrement = new_block(f, "decrement", site);
    LLVMSetCurrentDebugLocation2(b, loc);
    xf_build_tail_call(f, call, f->fn, f->instr_fn);
    build_memory_countdown(f, check, NULL, enter, decrement, NULL, entry, site);
    LLVMPositionBuilderAtEnd(b, enter);
    branch_on_call(x, &x->dispatch_enter, site, call, entry);
    LLVMPositionBuilderAtEnd(b, f->prologue);
    LLVMBuildBr(b, check);
    x->stats->entry_checks++;

    /* The burst entry: a function of its own, with the function's type. A giant function's
     * outlined copy (f->big) runs to its return once entered, so a burst that followed a call
     * there would coast through the whole call (bzip2's BZ2_decompress: a block's worth of
     * input per call); its burst entry goes to the checking copy instead, whose entry check
     * samples it on its own schedule (and pins), as for a call from outside a burst. */
    LLVMValueRef burst_fn = xf_new_burst_entry(f);
    LLVMSetCurrentDebugLocation2(b, NULL);
    if (f->big) {
        xf_build_tail_call(f, LLVMAppendBasicBlockInContext(x->ctx, burst_fn, "vigil.to.checking"), burst_fn, f->fn);
        return;
    }
    LLVMBasicBlockRef burst = LLVMAppendBasicBlockInContext(x->ctx, burst_fn, "vigil.burst");
    LLVMBasicBlockRef to_instr = LLVMAppendBasicBlockInContext(x->ctx, burst_fn, "vigil.to.instr");
    LLVMBasicBlockRef to_check = LLVMAppendBasicBlockInContext(x->ctx, burst_fn, "vigil.to.checking");
    xf_build_tail_call(f, to_instr, burst_fn, f->instr_fn);
    xf_build_tail_call(f, to_check, burst_fn, f->fn);
    xc_build_burst_path(x, burst_fn, site, site, burst, to_instr, to_check);
    LLVMSetCurrentDebugLocation2(b, NULL);
}
