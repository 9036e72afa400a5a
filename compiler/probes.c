/* Probes of the instrumented copy: memory accesses, conditional branches, call results and
 * calls. The checking copy never gets any; the tools' compiler parts (cctool.h) get every
 * branch and call-result site too (tools/preds/compiler/: guarded counters in both copies,
 * under the same site id). */
#include "xform.h"

#include <vigil/tool.h>

#include <stdlib.h>
#include <string.h>

int xf_is_lifetime_marker(LLVMValueRef inst)
{
    return xf_is_call_to_prefix(inst, "llvm.lifetime.");
}

/* A pointer-typed cast whose every user is a lifetime marker (typed-pointer IR casts a slot to
 * i8* for llvm.lifetime.start/end). */
static int only_feeds_lifetime_markers(LLVMValueRef cast)
{
    for (LLVMUseRef use = LLVMGetFirstUse(cast); use; use = LLVMGetNextUse(use))
        if (!xf_is_lifetime_marker(LLVMGetUser(use)))
            return 0;
    return 1;
}

/* A stack slot nobody else can see: used only as the address of loads and stores, and by
 * lifetime markers. Its accesses are not probed. Must run before probes take addresses. */
int xf_is_private_slot(LLVMValueRef alloca)
{
    for (LLVMUseRef use = LLVMGetFirstUse(alloca); use; use = LLVMGetNextUse(use)) {
        LLVMValueRef user = LLVMGetUser(use);
        if (LLVMIsALoadInst(user) && LLVMGetOperand(user, 0) == alloca)
            continue;
        if (LLVMIsAStoreInst(user) && LLVMGetOperand(user, 1) == alloca && LLVMGetOperand(user, 0) != alloca)
            continue;
        if (xf_is_lifetime_marker(user) || (LLVMIsABitCastInst(user) && only_feeds_lifetime_markers(user)))
            continue;
        return 0;
    }
    return 1;
}

void xf_find_private_slots(struct xfunc *f)
{
    /* Probes go into the instrumented copy: an outlined one has its own slots. */
    LLVMBasicBlockRef slots = f->instr_fn ? f->instr_prologue : f->prologue;
    for (LLVMValueRef inst = LLVMGetFirstInstruction(slots); inst; inst = LLVMGetNextInstruction(inst))
        if (LLVMIsAAllocaInst(inst) && xf_is_private_slot(inst))
            ptrmap_put(&f->private_slots, inst, inst);
}

/* Addresses whose accesses are not worth a probe: private slots, vigil's own globals, and
 * non-default address spaces (the probes take a generic pointer). */
static int skip_address(struct xfunc *f, LLVMValueRef address)
{
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(address)) != 0)
        return 1;
    LLVMValueRef base = address;
    while (LLVMIsAConstantExpr(base) || LLVMIsABitCastInst(base))
        base = LLVMGetOperand(base, 0);
    if (ptrmap_get(&f->private_slots, base))
        return 1;
    if (LLVMIsAGlobalValue(base)) {
        size_t len = 0;
        const char *name = LLVMGetValueName2(base, &len);
        return strncmp(name, "__vigil_", 8) == 0;
    }
    return 0;
}

/* clone -> original instruction (a site's counter also goes into the checking copy) and
 * clone -> original block index (the site's block in the control-flow facts), taken before
 * counters split blocks. */
static void map_originals(struct xfunc *f)
{
    for (size_t i = 0; i < f->blocks.n; i++) {
        LLVMBasicBlockRef block = LLVMValueAsBasicBlock(f->blocks.v[i]);
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst; inst = LLVMGetNextInstruction(inst)) {
            LLVMValueRef clone = ptrmap_get(&f->clones, inst);
            if (!clone)
                continue;
            ptrmap_put(&f->originals, clone, inst);
            ptrmap_put(&f->clone_block, clone, (void *)(uintptr_t)(i + 1));
        }
    }
}

/* Record which original block holds the site placed at clone instruction `at`; returns it
 * (VIGIL_CFG_NONE when not in a body block). */
static uint32_t locate(struct xfunc *f, LLVMValueRef at, uint32_t site)
{
    uintptr_t block = (uintptr_t)ptrmap_get(&f->clone_block, at);
    if (block)
        vigil_sitefmt_set_block(f->x->sites, site, f->cfg_function, (uint32_t)(block - 1));
    return block ? (uint32_t)(block - 1) : VIGIL_CFG_NONE;
}

static uint32_t access_size(struct vigil_xform *x, LLVMTypeRef type)
{
    unsigned long long size = LLVMStoreSizeOfType(x->layout, type);
    return size > UINT32_MAX ? 0 : (uint32_t)size;
}

/* Whether f's instrumented copy shares its function with the checking copy (an indirectbr
 * keeps lua's luaV_execute whole). There the two copies share one register allocation, and
 * probes that cost the instrumented copy nothing cost the checking copy's loop: merged
 * accesses gave luaV_execute more instructions in mode=off, and so did the module stubs'
 * registers. Such a copy keeps single accesses and the runtime's probes. */
static int shares_function_with_checking_copy(const struct xfunc *f)
{
    return f->instr_fn == NULL;
}

/* Whether f's instrumented copy runs outside bursts, so that its probes test the thread's
 * burst: the outlined copy of a giant function (outline.c, f->big) runs to its return once
 * entered, and a folded dispatch check (checks.c) enters the clone when no burst starts. */
static int probes_test_burst(const struct xfunc *f)
{
    return f->big || f->dispatch_folded;
}

/* Whether the function of f's instrumented copy holds code that runs outside bursts besides
 * the probed copy: a coasting copy (transfer.c) or the checking copy it shares the function
 * with. Its access probes then stay out of line behind the events test, so that they cost that
 * code no registers: with them inline, BZ2_blockSort's copy, whose coasting copy runs a third
 * of bzip2's instructions in adaptive mode, spilled more (+2.8% instructions). Not for a giant
 * function's copy that runs whole once entered (its probes test the burst, out of line anyway):
 * there the events test made it worse, holding the events' address in a register across a
 * state machine (bzip2's BZ2_decompress). */
static int copy_runs_unprobed_code(const struct xfunc *f)
{
    return shares_function_with_checking_copy(f) || xt_coasts(f);
}

/* A probe call just inserted moves into a block of its own behind a test, made of:
 * - where probes_test_burst, `__vigil_burst_left != 0`: it fires only while the thread's burst
 *   lasts;
 * - where xe_probe_guarded (VIGIL_CC_GUARD_PROBES; accesses only with VIGIL_CC_GUARD_ACCESSES),
 *   `__vigil_active_events & event`: with no tool wanting the event, the copy skips the call
 *   and its arguments (the module's stubs then test nothing themselves, emit.c). The leak tool
 *   wants no branch or return events: those tests are predicted unlikely, as the burst test
 *   is; access tests are left to the hardware (a tool that wants them wants all). */
static void probe(struct xfunc *f, LLVMValueRef call, unsigned event)
{
    struct vigil_xform *x = f->x;
    int guard = xe_probe_guarded(x, event) || (x->settings->guard_probes && copy_runs_unprobed_code(f));
    if (!probes_test_burst(f) && !guard)
        return;
    LLVMBuilderRef b = x->builder;
    LLVMBasicBlockRef old = LLVMGetInstructionParent(call);
    LLVMBasicBlockRef cont = xf_split_before(f, LLVMGetNextInstruction(call), "vigil.probe.cont");
    if (!cont)
        return;   /* a successor with PHIs (not after demotion): the probe stays unguarded */
    LLVMBasicBlockRef fire = LLVMInsertBasicBlockInContext(x->ctx, cont, "vigil.probe");
    LLVMPositionBuilderAtEnd(b, fire);
    LLVMInstructionRemoveFromParent(call);
    xf_insert_keeping_loc(b, call, "");
    LLVMBuildBr(b, cont);
    LLVMPositionBuilderAtEnd(b, old);
    LLVMValueRef zero = LLVMConstInt(x->i32, 0, 0), on = NULL;
    if (probes_test_burst(f))
        on = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildLoad2(b, x->i32, x->burst_left, ""), zero, "");
    if (guard) {
        LLVMValueRef events = LLVMBuildLoad2(b, x->i32, x->active_events, "");
        LLVMValueRef wanted = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, events, LLVMConstInt(x->i32, event, 0), ""),
                                            zero, "");
        on = on ? LLVMBuildAnd(b, on, wanted, "") : wanted;
    }
    LLVMValueRef br = LLVMBuildCondBr(b, on, fire, cont);
    if (probes_test_burst(f) || event != VIGIL_EV_ACCESS)
        xe_set_weights(x, br, 1, 2000);
}

/* The outlined copy of a giant function has no dispatch checks; its back-edges count the
 * burst down instead (b = burst_left; burst_left = b - (b != 0)), so that a burst begun at its
 * entry ends after as many checks as anywhere else, and its guarded probes stop. */
static void count_burst_on_backedges(struct xfunc *f)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    for (size_t i = 0; i < f->backedge_from.n; i++) {
        LLVMBasicBlockRef from = xf_clone_block(f, LLVMValueAsBasicBlock(f->backedge_from.v[i]));
        LLVMValueRef term = LLVMGetBasicBlockTerminator(from);
        LLVMPositionBuilderBefore(b, term);
        LLVMValueRef left = LLVMBuildLoad2(b, x->i32, x->burst_left, "");
        LLVMValueRef some = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, left, LLVMConstInt(x->i32, 0, 0), ""),
                                          x->i32, "");
        LLVMBuildStore(b, LLVMBuildSub(b, left, some, ""), x->burst_left);
    }
}

/* flags: the site's VIGIL_SITE_* flags (sitefmt.h); an atomic instruction's access goes to the
 * runtime's atomic probe, which marks it VIGIL_ACCESS_ATOMIC for the tools. */
static void probe_access_from(struct xfunc *f, LLVMValueRef at, LLVMValueRef source, int is_store, LLVMValueRef address,
                              LLVMValueRef size, uint32_t aux, unsigned flags)
{
    struct vigil_xform *x = f->x;
    if (!x->settings->probe_accesses || skip_address(f, address))
        return;
    uint32_t site = xs_add(x, is_store ? VIGIL_SITE_STORE : VIGIL_SITE_LOAD, f->name,
                           LLVMInstructionGetDebugLoc(source), aux);
    if (flags)
        xs_set_flags(x, site, flags);
    locate(f, at, site);
    LLVMPositionBuilderBefore(x->builder, at);
    LLVMValueRef call = flags & VIGIL_SITE_ATOMIC ? xe_atomic_probe(x, is_store, site, address, size)
                                                   : xe_access_probe(x, is_store, site, address, size,
                                                                     !shares_function_with_checking_copy(f));
    probe(f, call, VIGIL_EV_ACCESS);
    x->stats->probes++;
}

/* The probe of at's own access (its site names at's source position). */
static void probe_access(struct xfunc *f, LLVMValueRef at, int is_store, LLVMValueRef address,
                         LLVMValueRef size, uint32_t aux, unsigned flags)
{
    probe_access_from(f, at, at, is_store, address, size, aux, flags);
}

static void probe_fixed_access(struct xfunc *f, LLVMValueRef at, int is_store, LLVMValueRef address,
                               LLVMTypeRef type, unsigned flags)
{
    uint32_t size = access_size(f->x, type);
    probe_access(f, at, is_store, address, LLVMConstInt(f->x->i64, size, 0), size, flags);
}

/* ---- atomic instructions ----
 * An atomic load, store, read-modify-write or compare-and-exchange is probed as any access, with
 * its site marked (VIGIL_SITE_ATOMIC, and the ordering) and through the runtime's atomic probes:
 * tools learn that it cannot race with another atomic access. Those that synchronize (acquire,
 * release or both) also tell the runtime in every copy of the function, always, as the pthread
 * hooks tell it of lock operations (insert_sync_events): an edge seen only in bursts would be
 * missed whenever the data it orders was sampled and the flag's store or load was not. */

static int orders_acquire(LLVMAtomicOrdering o)
{
    return o == LLVMAtomicOrderingAcquire || o == LLVMAtomicOrderingAcquireRelease ||
           o == LLVMAtomicOrderingSequentiallyConsistent;
}

static int orders_release(LLVMAtomicOrdering o)
{
    return o == LLVMAtomicOrderingRelease || o == LLVMAtomicOrderingAcquireRelease ||
           o == LLVMAtomicOrderingSequentiallyConsistent;
}

/* The VIGIL_SITE_* flags of inst's access: 0 unless it is an atomic instruction. */
static unsigned atomic_flags(LLVMValueRef inst)
{
    LLVMAtomicOrdering o;
    switch (LLVMGetInstructionOpcode(inst)) {
    case LLVMLoad:
        o = LLVMGetOrdering(inst);
        return o == LLVMAtomicOrderingNotAtomic ? 0 : VIGIL_SITE_ATOMIC | (orders_acquire(o) ? VIGIL_SITE_ACQUIRE : 0);
    case LLVMStore:
        o = LLVMGetOrdering(inst);
        return o == LLVMAtomicOrderingNotAtomic ? 0 : VIGIL_SITE_ATOMIC | (orders_release(o) ? VIGIL_SITE_RELEASE : 0);
    case LLVMAtomicRMW:
        o = LLVMGetOrdering(inst);
        return VIGIL_SITE_ATOMIC | VIGIL_SITE_RMW | (orders_acquire(o) ? VIGIL_SITE_ACQUIRE : 0) |
               (orders_release(o) ? VIGIL_SITE_RELEASE : 0);
    case LLVMAtomicCmpXchg: {
        LLVMAtomicOrdering ok = LLVMGetCmpXchgSuccessOrdering(inst), failed = LLVMGetCmpXchgFailureOrdering(inst);
        return VIGIL_SITE_ATOMIC | VIGIL_SITE_RMW | (orders_acquire(ok) || orders_acquire(failed) ? VIGIL_SITE_ACQUIRE : 0) |
               (orders_release(ok) ? VIGIL_SITE_RELEASE : 0);
    }
    default:
        return 0;
    }
}

static LLVMValueRef address_of(LLVMValueRef inst)
{
    return LLVMGetOperand(inst, LLVMIsAStoreInst(inst) ? 1 : 0);
}

/* One synchronization event (VIGIL_SYNC_ATOMIC_RELEASE before inst, _ACQUIRE after it) in the
 * copy that holds inst, behind a test of __vigil_active_events (no test where the block
 * cannot be split: the runtime's entry tests the bit itself). */
static void sync_event(struct xfunc *f, LLVMValueRef inst, int acquire)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    LLVMValueRef at = acquire ? LLVMGetNextInstruction(inst) : inst;
    if (!at)
        return;
    LLVMPositionBuilderBefore(b, at);
    LLVMSetCurrentDebugLocation2(b, LLVMInstructionGetDebugLoc(inst));
    LLVMValueRef args[] = {LLVMBuildPointerCast(b, address_of(inst), x->ptr, ""),
                           LLVMConstInt(x->i32, acquire ? VIGIL_SYNC_ATOMIC_ACQUIRE : VIGIL_SYNC_ATOMIC_RELEASE, 0)};
    LLVMValueRef call = xe_call(x, &x->sync_atomic, args, 2);
    x->stats->probes++;
    LLVMBasicBlockRef old = LLVMGetInstructionParent(call);
    LLVMBasicBlockRef cont = xf_split_before(f, LLVMGetNextInstruction(call), "vigil.sync.cont");
    if (!cont)
        return;
    LLVMBasicBlockRef fire = LLVMInsertBasicBlockInContext(x->ctx, cont, "vigil.sync");
    LLVMPositionBuilderAtEnd(b, fire);
    LLVMInstructionRemoveFromParent(call);
    xf_insert_keeping_loc(b, call, "");
    LLVMBuildBr(b, cont);
    LLVMPositionBuilderAtEnd(b, old);
    LLVMValueRef events = LLVMBuildLoad2(b, x->i32, x->active_events, "");
    LLVMValueRef wanted = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, events, LLVMConstInt(x->i32, VIGIL_EV_SYNC, 0), ""),
                                        LLVMConstInt(x->i32, 0, 0), "");
    xe_set_weights(x, LLVMBuildCondBr(b, wanted, fire, cont), 1, 2000);
}

/* inst (any copy) is a synchronizing atomic: its release before it, its acquire after it. */
static void sync_events_at(struct xfunc *f, LLVMValueRef inst, unsigned flags)
{
    if (flags & VIGIL_SITE_RELEASE)
        sync_event(f, inst, 0);
    if (flags & VIGIL_SITE_ACQUIRE)
        sync_event(f, inst, 1);
}

/* Every synchronizing atomic of f, in the instrumented copy, the checking copy and the coasting
 * copy. Last, once the probes and the tools' counters are in place. */
static void insert_sync_events(struct xfunc *f)
{
    for (size_t i = 0; i < f->cloned.n; i++) {
        LLVMValueRef inst = f->cloned.v[i];
        unsigned flags = atomic_flags(inst);
        if (!(flags & (VIGIL_SITE_ACQUIRE | VIGIL_SITE_RELEASE)) || skip_address(f, address_of(inst)))
            continue;
        sync_events_at(f, inst, flags);
        LLVMValueRef original = ptrmap_get(&f->originals, inst);
        if (!original)
            continue;
        sync_events_at(f, original, flags);
        LLVMValueRef coasting = xt_coasting_copy(f, original);
        if (coasting)
            sync_events_at(f, coasting, flags);
    }
}

/* llvm.memcpy/memmove (dst, src, len, ...) read src and write dst; llvm.memset writes dst. */
static void probe_mem_intrinsic(struct xfunc *f, LLVMValueRef call, const char *name)
{
    struct vigil_xform *x = f->x;
    LLVMValueRef len = LLVMGetOperand(call, 2);
    uint32_t aux = 0;
    if (LLVMIsAConstantInt(len) && LLVMConstIntGetZExtValue(len) <= UINT32_MAX)
        aux = (uint32_t)LLVMConstIntGetZExtValue(len);
    LLVMPositionBuilderBefore(x->builder, call);
    LLVMValueRef len64 = LLVMBuildZExtOrBitCast(x->builder, len, x->i64, "");
    if (strncmp(name, "llvm.memset", 11) != 0)
        probe_access(f, call, 0, LLVMGetOperand(call, 1), len64, aux, 0);
    probe_access(f, call, 1, LLVMGetOperand(call, 0), len64, aux, 0);
}

/* The result of a call as the int64_t the probe takes: integers sign-extended (i1 and wider
 * than 64 bits: zero-extended / truncated), pointers converted. NULL for other types. */
static LLVMValueRef result_as_i64(struct vigil_xform *x, LLVMValueRef value)
{
    LLVMTypeRef type = LLVMTypeOf(value);
    switch (LLVMGetTypeKind(type)) {
    case LLVMPointerTypeKind:
        return LLVMBuildPtrToInt(x->builder, value, x->i64, "");
    case LLVMIntegerTypeKind: {
        unsigned width = LLVMGetIntTypeWidth(type);
        if (width == 1)
            return LLVMBuildZExt(x->builder, value, x->i64, "");
        if (width < 64)
            return LLVMBuildSExt(x->builder, value, x->i64, "");
        if (width > 64)
            return LLVMBuildTrunc(x->builder, value, x->i64, "");
        return value;
    }
    default:
        return NULL;
    }
}

static void probe_call(struct xfunc *f, LLVMValueRef call)
{
    struct vigil_xform *x = f->x;
    LLVMValueRef callee = LLVMGetCalledValue(call);
    const char *name = xf_callee_name(call);
    if (strncmp(name, "llvm.mem", 8) == 0 &&
        (!strncmp(name, "llvm.memcpy", 11) || !strncmp(name, "llvm.memmove", 12) || !strncmp(name, "llvm.memset", 11))) {
        probe_mem_intrinsic(f, call, name);
        return;
    }
    if (strncmp(name, "llvm.", 5) == 0 || strncmp(name, "__vigil_", 8) == 0 || LLVMIsAInlineAsm(callee))
        return;
    LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(call);
    if (x->settings->probe_calls) {
        uint32_t site = xs_add(x, VIGIL_SITE_CALL, f->name, loc, 0);
        locate(f, call, site);
        LLVMPositionBuilderBefore(x->builder, call);
        LLVMValueRef target = LLVMBuildPointerCast(x->builder, callee, x->ptr, "");
        probe(f, xe_event_probe(x, XE_EVENT_CALL, site, target, !shares_function_with_checking_copy(f)), VIGIL_EV_CALL);
        x->stats->probes++;
    }
    /* Nothing may come between a musttail call and its ret. */
    const struct vigil_cc_tool *tools[VIGIL_MAX_CC_TOOLS];
    unsigned ntools = xcc_active_tools(x, tools);
    if ((x->settings->probe_returns || ntools) && !vigil_is_musttail(call)) {
        LLVMTypeKind kind = LLVMGetTypeKind(LLVMTypeOf(call));
        if (kind != LLVMIntegerTypeKind && kind != LLVMPointerTypeKind)
            return;
        uint32_t site = xs_add(x, VIGIL_SITE_RETURN, f->name, loc, 0);
        uint32_t block = locate(f, call, site);
        for (unsigned t = 0; t < ntools; t++)
            if (tools[t]->at_site)
                tools[t]->at_site(f, call, ptrmap_get(&f->originals, call), site, block, result_as_i64);
        if (x->settings->probe_returns) {
            LLVMPositionBuilderBefore(x->builder, LLVMGetNextInstruction(call));
            probe(f, xe_event_probe(x, XE_EVENT_RETURN, site, result_as_i64(x, call), !shares_function_with_checking_copy(f)),
                  VIGIL_EV_RETURN);
            x->stats->probes++;
        }
    }
}

static void probe_branch(struct xfunc *f, LLVMValueRef br)
{
    struct vigil_xform *x = f->x;
    const struct vigil_cc_tool *tools[VIGIL_MAX_CC_TOOLS];
    unsigned ntools = xcc_active_tools(x, tools);
    if (!x->settings->probe_branches && !ntools)
        return;
    uint32_t site = xs_add(x, VIGIL_SITE_BRANCH, f->name, LLVMInstructionGetDebugLoc(br), 0);
    uint32_t block = locate(f, br, site);
    if (x->settings->probe_branches) {
        LLVMPositionBuilderBefore(x->builder, br);
        LLVMValueRef taken = LLVMBuildZExt(x->builder, LLVMGetCondition(br), x->i32, "");
        probe(f, xe_event_probe(x, XE_EVENT_BRANCH, site, taken, !shares_function_with_checking_copy(f)), VIGIL_EV_BRANCH);
        x->stats->probes++;
    }
    for (unsigned t = 0; t < ntools; t++)
        if (tools[t]->at_site)
            tools[t]->at_site(f, br, ptrmap_get(&f->originals, br), site, block, NULL);
}

/* A condition with no edge of its own: the i1 condition of a select (clang -O2 folds a small
 * if/else or ?: into one), or a comparison turned into a number (zext/sext of an i1: `i =
 * s[0] == '-'`, `len - (len > 100)`). A branch site with aux VIGIL_BRANCH_SELECT or
 * VIGIL_BRANCH_VALUE for the tools that count branches (no probe event: no edge is taken).
 * None where its predicates would repeat another site's: a constant condition, the condition
 * of its block's own branch, or of an earlier such site of the block. */
static void probe_edgeless_condition(struct xfunc *f, LLVMValueRef inst, uint32_t aux)
{
    struct vigil_xform *x = f->x;
    const struct vigil_cc_tool *tools[VIGIL_MAX_CC_TOOLS];
    unsigned ntools = xcc_active_tools(x, tools), want = 0;
    for (unsigned t = 0; t < ntools; t++)
        want |= tools[t]->at_site != NULL;
    LLVMValueRef cond = LLVMGetOperand(inst, 0);
    LLVMTypeRef type = LLVMTypeOf(cond);
    if (!want || LLVMGetTypeKind(type) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(type) != 1 || LLVMIsAConstant(cond))
        return;
    LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(inst);   /* a zext often has none: its comparison's */
    if (!loc && LLVMIsAInstruction(cond))
        loc = LLVMInstructionGetDebugLoc(cond);
    if (!loc)
        return;   /* not the user's code */
    LLVMBasicBlockRef block_of_inst = LLVMGetInstructionParent(inst);
    LLVMValueRef term = LLVMGetBasicBlockTerminator(block_of_inst);
    if (term && LLVMIsABranchInst(term) && LLVMIsConditional(term) && LLVMGetCondition(term) == cond)
        return;
    for (LLVMValueRef i = LLVMGetFirstInstruction(block_of_inst); i && i != inst; i = LLVMGetNextInstruction(i))
        if ((LLVMIsASelectInst(i) || LLVMIsAZExtInst(i) || LLVMIsASExtInst(i)) && LLVMGetOperand(i, 0) == cond)
            return;
    uint32_t site = xs_add(x, VIGIL_SITE_BRANCH, f->name, loc, aux);
    uint32_t block = locate(f, inst, site);
    for (unsigned t = 0; t < ntools; t++)
        if (tools[t]->at_site)
            tools[t]->at_site(f, inst, ptrmap_get(&f->originals, inst), site, block, NULL);
}

/* The location of a switch successor: its first instruction with one (the case's first
 * statement), else the switch's own. */
static LLVMMetadataRef case_location(LLVMValueRef sw, LLVMBasicBlockRef to)
{
    for (LLVMValueRef i = LLVMGetFirstInstruction(to); i; i = LLVMGetNextInstruction(i)) {
        LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(i);
        if (loc)
            return loc;
    }
    return LLVMInstructionGetDebugLoc(sw);
}

/* Successor k of sw goes to a block no earlier successor goes to. */
static int first_to_its_block(LLVMValueRef sw, unsigned k)
{
    for (unsigned j = 0; j < k; j++)
        if (LLVMGetSuccessor(sw, j) == LLVMGetSuccessor(sw, k))
            return 0;
    return 1;
}

/* A switch: one case site per CFG edge, i.e. per distinct successor block (named by its first
 * successor index k, 0 = default), for the tools that count them. */
static void probe_switch(struct xfunc *f, LLVMValueRef sw)
{
    struct vigil_xform *x = f->x;
    const struct vigil_cc_tool *tools[VIGIL_MAX_CC_TOOLS];
    unsigned ntools = xcc_active_tools(x, tools), nsucc = LLVMGetNumSuccessors(sw), want = 0, nedges = 0;
    for (unsigned t = 0; t < ntools; t++)
        want |= tools[t]->at_case != NULL;
    for (unsigned k = 0; want && k < nsucc && nedges <= VIGIL_MAX_CASE_SITES; k++)
        nedges += first_to_its_block(sw, k);
    if (!want || nedges < 2 || nedges > VIGIL_MAX_CASE_SITES)
        return;
    LLVMValueRef original = ptrmap_get(&f->originals, sw);
    for (unsigned k = 0; k < nsucc; k++) {
        if (!first_to_its_block(sw, k))
            continue;
        uint32_t site = xs_add(x, VIGIL_SITE_CASE, f->name, case_location(sw, LLVMGetSuccessor(sw, k)), k);
        uint32_t block = locate(f, sw, site);
        for (unsigned t = 0; t < ntools; t++)
            if (tools[t]->at_case)
                tools[t]->at_case(f, sw, original, site, block, k);
    }
}

/* ---- merged accesses ----
 * Loads (or stores) of one block through one base pointer at constant offsets, with no call
 * between them, share probes placed at the first of them: one per run of bytes they cover
 * without a gap (struct fields read one after another, an unrolled loop's array elements), its
 * site the first access of the run. Not one probe for the whole range: the bytes between two
 * fields read are not read (another thread may write them under a lock this one does not take,
 * and a race detector would take the range for an access to them). Constant offsets from one
 * pointer stay inside one object in C, so a tool that maps an address to its heap object sees
 * the same objects. Volatile and atomic accesses keep their own probes; any call ends every
 * group (it may free the object or not return). */
#define MAX_OPEN_GROUPS 8
#define GROUP_MEMBERS 32            /* accesses one group takes at most */
#define GROUP_WINDOW 384            /* bytes of its coverage map, from 128 before its first access */
struct access_group {
    LLVMValueRef base, index;   /* the address is (index ? &((type *)base)[index] : base) + offset */
    LLVMTypeRef type;
    LLVMValueRef first;         /* the access the probe goes before; NULL: slot free */
    LLVMValueRef first_address; /* its address operand, used as is when the group has one member */
    int64_t lo, hi;             /* covered bytes lie in [base + lo, base + hi) */
    int64_t anchor;             /* offset of the coverage map's byte 0 */
    uint64_t cover[GROUP_WINDOW / 64];   /* the bytes a member accesses */
    struct { LLVMValueRef inst; int64_t lo, hi; } member[GROUP_MEMBERS];   /* in program order */
    uint32_t first_size;
    unsigned members;
    int is_store;
};
struct access_groups {
    struct access_group open[MAX_OPEN_GROUPS];
    uintptr_t block;            /* original block index + 1 of the open groups */
    unsigned next_victim;
};

int xf_gep_constant_offset(struct vigil_xform *x, LLVMValueRef gep, unsigned first, int64_t *offset)
{
    if (LLVMGetTypeKind(LLVMTypeOf(gep)) != LLVMPointerTypeKind)
        return 0;   /* a vector of pointers */
    LLVMTypeRef type = LLVMGetGEPSourceElementType(gep);
    int64_t total = 0;
    for (unsigned i = first, n = (unsigned)LLVMGetNumOperands(gep); i < n; i++) {
        LLVMValueRef index = LLVMGetOperand(gep, i);
        if (!LLVMIsAConstantInt(index))
            return 0;
        int64_t k = LLVMConstIntGetSExtValue(index);
        if (i > 1 && LLVMGetTypeKind(type) == LLVMStructTypeKind) {
            if (k < 0 || (unsigned)k >= LLVMCountStructElementTypes(type))
                return 0;
            total += (int64_t)LLVMOffsetOfElement(x->layout, type, (unsigned)k);
            type = LLVMStructGetTypeAtIndex(type, (unsigned)k);
            continue;
        }
        if (i > 1) {
            if (LLVMGetTypeKind(type) != LLVMArrayTypeKind)
                return 0;
            type = LLVMGetElementType(type);
        }
        if (!LLVMTypeIsSized(type))
            return 0;
        total += k * (int64_t)LLVMABISizeOfType(x->layout, type);
        if (total > INT32_MAX || total < INT32_MIN)
            return 0;
    }
    *offset = total;
    return 1;
}

/* address = (index ? &((type *)base)[index] : base) + offset: base stripped of casts and
 * constant-index GEPs, and of one GEP whose first index only is a variable (&p[i].field). */
struct split_address {
    LLVMValueRef base, index;
    LLVMTypeRef type;
    int64_t offset;
};

static struct split_address split_address(struct vigil_xform *x, LLVMValueRef address)
{
    struct split_address a = {.base = address};
    for (int depth = 0; depth < 16; depth++) {
        int is_expr = LLVMIsAConstantExpr(a.base) != NULL;
        LLVMOpcode op = is_expr ? LLVMGetConstOpcode(a.base)
                                : LLVMIsAInstruction(a.base) ? LLVMGetInstructionOpcode(a.base) : LLVMRet;
        int64_t add;
        if (op == LLVMBitCast) {
            a.base = LLVMGetOperand(a.base, 0);
            continue;
        }
        if (op != LLVMGetElementPtr || LLVMGetNumOperands(a.base) < 2)
            break;
        int variable = !LLVMIsAConstantInt(LLVMGetOperand(a.base, 1));
        if (!xf_gep_constant_offset(x, a.base, variable ? 2 : 1, &add) || a.offset + add >= INT32_MAX ||
            a.offset + add <= INT32_MIN)
            break;
        a.offset += add;
        if (variable) {
            a.index = LLVMGetOperand(a.base, 1);
            a.type = LLVMGetGEPSourceElementType(a.base);
            a.base = LLVMGetOperand(a.base, 0);
            break;
        }
        a.base = LLVMGetOperand(a.base, 0);
    }
    return a;
}

static int covered(const struct access_group *g, int64_t offset)
{
    uint64_t i = (uint64_t)(offset - g->anchor);
    return i < GROUP_WINDOW && (g->cover[i / 64] >> (i % 64) & 1);
}

static void cover(struct access_group *g, int64_t lo, int64_t hi)
{
    for (uint64_t i = (uint64_t)(lo - g->anchor); i < (uint64_t)(hi - g->anchor); i++)
        g->cover[i / 64] |= 1ull << (i % 64);
}

static void emit_group(struct xfunc *f, struct access_group *g)
{
    struct vigil_xform *x = f->x;
    if (!g->first)
        return;
    if (g->members == 1) {
        probe_access(f, g->first, g->is_store, g->first_address, LLVMConstInt(x->i64, g->first_size, 0), g->first_size, 0);
        g->first = NULL;
        return;
    }
    LLVMPositionBuilderBefore(x->builder, g->first);
    LLVMValueRef base = g->base;
    if (g->index)
        base = LLVMBuildGEP2(x->builder, g->type, base, &g->index, 1, "");
    base = LLVMBuildPointerCast(x->builder, base, x->ptr, "");
    unsigned runs = 0;
    for (int64_t lo = g->lo; lo < g->hi;) {
        if (!covered(g, lo)) {
            lo++;
            continue;
        }
        int64_t hi = lo + 1;
        while (hi < g->hi && covered(g, hi))
            hi++;
        LLVMValueRef source = g->first;   /* the run's first access in program order */
        for (unsigned m = 0; m < g->members; m++)
            if (g->member[m].lo < hi && g->member[m].hi > lo) {
                source = g->member[m].inst;
                break;
            }
        LLVMPositionBuilderBefore(x->builder, g->first);
        LLVMValueRef offset = LLVMConstInt(x->i64, (unsigned long long)lo, 1);
        LLVMValueRef address = LLVMBuildGEP2(x->builder, x->i8, base, &offset, 1, "");
        uint32_t size = (uint32_t)(hi - lo);
        probe_access_from(f, g->first, source, g->is_store, address, LLVMConstInt(x->i64, size, 0), size, 0);
        runs++;
        lo = hi;
    }
    x->stats->merged_accesses += g->members - runs;
    g->first = NULL;
}

static void emit_groups(struct xfunc *f, struct access_groups *gs)
{
    LLVMBuilderRef b = f->x->builder;
    for (unsigned i = 0; i < MAX_OPEN_GROUPS; i++)
        if (gs->open[i].first) {
            LLVMSetCurrentDebugLocation2(b, xf_debug_loc(f, gs->open[i].first));
            emit_group(f, &gs->open[i]);
        }
}

/* Whether the open groups are emitted before inst's own probe: a call other than a debug
 * intrinsic or lifetime marker, a fence, an atomic, an access that joined no group, the end
 * of the block. */
static int ends_groups(LLVMValueRef inst)
{
    switch (LLVMGetInstructionOpcode(inst)) {
    case LLVMCall:
        return !xf_is_call_to_prefix(inst, "llvm.dbg.") && !xf_is_lifetime_marker(inst);
    case LLVMInvoke: case LLVMFence: case LLVMAtomicRMW: case LLVMAtomicCmpXchg: case LLVMLoad: case LLVMStore:
        return 1;
    default:
        return LLVMIsATerminatorInst(inst) != NULL;
    }
}

/* Adds a plain load or store to a group when it can join one; returns 0 when it must be
 * probed as any other instruction (after the open groups were emitted if it ends them). */
static int group_access(struct xfunc *f, struct access_groups *gs, LLVMValueRef inst)
{
    struct vigil_xform *x = f->x;
    int is_store = LLVMIsAStoreInst(inst) != NULL;
    if (!x->settings->merge_span || !x->settings->probe_accesses || shares_function_with_checking_copy(f) ||
        LLVMGetVolatile(inst) ||
        LLVMGetOrdering(inst) != LLVMAtomicOrderingNotAtomic)
        return 0;
    LLVMValueRef address = LLVMGetOperand(inst, is_store ? 1 : 0);
    if (skip_address(f, address))
        return 1;   /* no probe at all, as probe_access would decide */
    uint32_t size = access_size(x, LLVMTypeOf(is_store ? LLVMGetOperand(inst, 0) : inst));
    if (size == 0 || size > (uint32_t)x->settings->merge_span)
        return 0;
    struct split_address a = split_address(x, address);
    int64_t offset = a.offset;
    struct access_group *free_slot = NULL;
    for (unsigned i = 0; i < MAX_OPEN_GROUPS; i++) {
        struct access_group *g = &gs->open[i];
        if (!g->first) {
            free_slot = free_slot ? free_slot : g;
            continue;
        }
        if (g->base != a.base || g->index != a.index || g->type != a.type || g->is_store != is_store)
            continue;
        int64_t lo = offset < g->lo ? offset : g->lo, hi = offset + size > g->hi ? offset + (int64_t)size : g->hi;
        if (hi - lo <= x->settings->merge_span && g->members < GROUP_MEMBERS && offset >= g->anchor &&
            offset + (int64_t)size <= g->anchor + GROUP_WINDOW) {
            g->lo = lo, g->hi = hi;
            g->member[g->members].inst = inst;
            g->member[g->members].lo = offset;
            g->member[g->members].hi = offset + size;
            g->members++;
            cover(g, offset, offset + size);
            return 1;
        }
        emit_group(f, g);   /* too far apart: this access starts the group anew */
        free_slot = g;
        break;
    }
    if (!free_slot) {
        free_slot = &gs->open[gs->next_victim++ % MAX_OPEN_GROUPS];
        emit_group(f, free_slot);
    }
    *free_slot = (struct access_group){.base = a.base, .index = a.index, .type = a.type, .first = inst, .first_address = address, .lo = offset,
                                       .hi = offset + size, .anchor = offset - 128, .first_size = size, .members = 1,
                                       .is_store = is_store};
    free_slot->member[0].inst = inst;
    free_slot->member[0].lo = offset;
    free_slot->member[0].hi = offset + size;
    if (size <= GROUP_WINDOW - 128)
        cover(free_slot, offset, offset + size);
    else
        free_slot->anchor = INT64_MAX / 2;   /* too large for the map: nothing joins it */
    return 1;
}

static void probe_instruction(struct xfunc *f, LLVMValueRef inst)
{
    switch (LLVMGetInstructionOpcode(inst)) {
    case LLVMLoad:
        probe_fixed_access(f, inst, 0, LLVMGetOperand(inst, 0), LLVMTypeOf(inst), atomic_flags(inst));
        break;
    case LLVMStore:
        probe_fixed_access(f, inst, 1, LLVMGetOperand(inst, 1), LLVMTypeOf(LLVMGetOperand(inst, 0)), atomic_flags(inst));
        break;
    case LLVMAtomicRMW:     /* read-modify-write: reported as the write */
        probe_fixed_access(f, inst, 1, LLVMGetOperand(inst, 0), LLVMTypeOf(LLVMGetOperand(inst, 1)), atomic_flags(inst));
        break;
    case LLVMAtomicCmpXchg:
        probe_fixed_access(f, inst, 1, LLVMGetOperand(inst, 0), LLVMTypeOf(LLVMGetOperand(inst, 2)), atomic_flags(inst));
        break;
    case LLVMCall:
        probe_call(f, inst);
        break;
    case LLVMBr:
        if (LLVMIsConditional(inst))
            probe_branch(f, inst);
        break;
    case LLVMSwitch:
        probe_switch(f, inst);
        break;
    case LLVMSelect:
        probe_edgeless_condition(f, inst, VIGIL_BRANCH_SELECT);
        break;
    case LLVMZExt:
    case LLVMSExt:
        probe_edgeless_condition(f, inst, VIGIL_BRANCH_VALUE);
        break;
    default:
        break;
    }
}

void xf_insert_probes(struct xfunc *f)
{
    LLVMBuilderRef b = f->x->builder;
    ptrmap_init(&f->originals);
    ptrmap_init(&f->clone_block);
    map_originals(f);
    if (f->big)   /* before probes split the blocks */
        count_burst_on_backedges(f);
    struct access_groups groups = {0};
    for (size_t i = 0; i < f->cloned.n; i++) {
        LLVMValueRef inst = f->cloned.v[i];
        uintptr_t block = (uintptr_t)ptrmap_get(&f->clone_block, inst);
        if (block != groups.block) {
            emit_groups(f, &groups);
            groups.block = block;
        }
        LLVMOpcode op = LLVMGetInstructionOpcode(inst);
        if ((op == LLVMLoad || op == LLVMStore) && group_access(f, &groups, inst))
            continue;
        if (ends_groups(inst))
            emit_groups(f, &groups);
        LLVMSetCurrentDebugLocation2(b, xf_debug_loc(f, inst));
        probe_instruction(f, inst);
    }
    emit_groups(f, &groups);
    LLVMSetCurrentDebugLocation2(b, NULL);
    const struct vigil_cc_tool *tools[VIGIL_MAX_CC_TOOLS];
    for (unsigned t = 0, n = xcc_active_tools(f->x, tools); t < n; t++)
        if (tools[t]->function_done)
            tools[t]->function_done(f);
    insert_sync_events(f);
    LLVMSetCurrentDebugLocation2(b, NULL);
    free(f->cfg_edges);
    free(f->cfg_exits);
    ptrmap_free(&f->originals);
    ptrmap_free(&f->clone_block);
    ptrmap_free(&f->block_index);   /* made by xs_record_cfg */
}
