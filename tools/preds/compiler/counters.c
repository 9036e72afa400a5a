/* The compiler part of statistical debugging: predicate counters (seed 002, tools/preds/DESIGN.md): at every branch (and edgeless condition) and return site, in
 * the instrumented copy (and in the checking copy with VIGIL_PRED_COUNTERS_BOTH), a guarded
 * inline counter
 *     e = enable[s];                                   // relaxed load
 *     if (e & (1 << pred)) {
 *         counts[3 * s + pred] += 1;                   // relaxed load + store, no lock
 *         if (e & VIGIL_PRED_BINARY) enable[s] = e & ~(1 << pred);   // seen once: probe off
 *     }
 * The runtime sets enable[] at module registration (all sites, or those of a plan), so a site
 * that is not monitored costs one load and a predictable branch.
 *
 * Static removal (seed 002 section 3.1): counters are placed once all sites of a function are
 * known; a branch predicate whose edge count equals the total count of another site (common/
 * cdg.c, vigil_redundant_edges) gets no counter, and the site table records which site to
 * sum instead (sitefmt.h, "removed"); `vigil ingest` fills the count in.
 *
 * Switches: one case site per edge (distinct successor block), counted like a branch whose
 * condition is "the switch goes to that block" (the value is one of the cases going there, or,
 * if the default goes there, none of those going elsewhere): predicates false (it went
 * elsewhere) and true. Each is counted before the switch, so a switch to n blocks executes n
 * guarded counters in the copies that count. */
#include "xform.h"

#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "cdg.h"

struct pending_counter {
    LLVMValueRef at, original;
    uint32_t site, block;
    LLVMValueRef (*as_i64)(struct vigil_xform *, LLVMValueRef);   /* NULL: a branch or a case */
    int successor;                                                 /* a case: its index k; else -1 */
};

struct xp_pending {
    struct pending_counter *v;
    size_t n, cap;
};

static LLVMValueRef element(struct vigil_xform *x, LLVMTypeRef type, LLVMValueRef base, LLVMValueRef index)
{
    return LLVMBuildInBoundsGEP2(x->builder, type, base, &index, 1, "");
}

/* The guarded counter, built at the end of `from` (no terminator yet), continuing to cont.
 * pred: i8 predicate index computed in `from`. */
static void emit_counter(struct xfunc *f, LLVMBasicBlockRef from, LLVMBasicBlockRef cont, uint32_t site,
                         LLVMValueRef pred, unsigned keep)
{
    struct vigil_xform *x = f->x;
    LLVMValueRef fn = LLVMGetBasicBlockParent(from);   /* the checking or an outlined copy */
    LLVMBasicBlockRef bump = LLVMAppendBasicBlockInContext(x->ctx, fn, "vigil.pred.count");
    LLVMBasicBlockRef off = LLVMAppendBasicBlockInContext(x->ctx, fn, "vigil.pred.off");
    LLVMMoveBasicBlockAfter(bump, from);
    LLVMMoveBasicBlockAfter(off, bump);

    LLVMPositionBuilderAtEnd(x->builder, from);
    LLVMValueRef enable_at = element(x, x->i8, x->pred_enable, LLVMConstInt(x->i64, site, 0));
    LLVMValueRef enable = xe_relaxed_load(x, x->i8, enable_at, 1);
    LLVMValueRef bit = LLVMBuildShl(x->builder, LLVMConstInt(x->i8, 1, 0), pred, "");
    if (keep != 0xff)   /* left-out predicates never count, whatever enable says */
        bit = LLVMBuildAnd(x->builder, bit, LLVMConstInt(x->i8, keep, 0), "");
    LLVMValueRef on = LLVMBuildICmp(x->builder, LLVMIntNE, LLVMBuildAnd(x->builder, enable, bit, ""),
                                    LLVMConstInt(x->i8, 0, 0), "");
    LLVMBuildCondBr(x->builder, on, bump, cont);

    LLVMPositionBuilderAtEnd(x->builder, bump);
    LLVMValueRef index = LLVMBuildAdd(x->builder, LLVMConstInt(x->i64, (uint64_t)site * VIGIL_PRED_SLOTS, 0),
                                      LLVMBuildZExt(x->builder, pred, x->i64, ""), "");
    LLVMValueRef count_at = element(x, x->i64, x->pred_counts, index);
    LLVMValueRef count = xe_relaxed_load(x, x->i64, count_at, 8);
    xe_relaxed_store(x, LLVMBuildAdd(x->builder, count, LLVMConstInt(x->i64, 1, 0), ""), count_at, 8);
    LLVMValueRef binary = LLVMBuildICmp(x->builder, LLVMIntNE,
                                        LLVMBuildAnd(x->builder, enable, LLVMConstInt(x->i8, VIGIL_PRED_BINARY, 0), ""),
                                        LLVMConstInt(x->i8, 0, 0), "");
    LLVMBuildCondBr(x->builder, binary, off, cont);

    LLVMPositionBuilderAtEnd(x->builder, off);
    xe_relaxed_store(x, LLVMBuildAnd(x->builder, enable, LLVMBuildNot(x->builder, bit, ""), ""), enable_at, 1);
    LLVMBuildBr(x->builder, cont);
}

/* A branch's condition, or an edgeless one's (operand 0 of a select, zext or sext), counted
 * before it. */
static void count_branch(struct xfunc *f, LLVMValueRef br, uint32_t site, unsigned keep)
{
    struct vigil_xform *x = f->x;
    LLVMBasicBlockRef from = LLVMGetInstructionParent(br);
    LLVMValueRef cond = LLVMIsABranchInst(br) ? LLVMGetCondition(br) : LLVMGetOperand(br, 0);
    LLVMBasicBlockRef cont = xf_split_before(f, br, "vigil.pred.cont");
    if (!cont)
        return;
    LLVMPositionBuilderAtEnd(x->builder, from);
    emit_counter(f, from, cont, site, LLVMBuildZExt(x->builder, cond, x->i8, ""), keep);
}

/* i1: switch sw goes to the block of its successor k: the value is one of the cases that go
 * there, or, when the default goes there too, none of the cases that go elsewhere. */
static LLVMValueRef takes_successor(struct vigil_xform *x, LLVMValueRef sw, unsigned k)
{
    LLVMValueRef cond = LLVMGetOperand(sw, 0);
    LLVMBasicBlockRef target = LLVMGetSuccessor(sw, k);
    LLVMValueRef here = LLVMConstInt(LLVMInt1TypeInContext(x->ctx), 0, 0), elsewhere = here;
    /* operands: condition, default, then (value, successor) pairs: successor j >= 1 is case j */
    for (unsigned j = 1; j < LLVMGetNumSuccessors(sw); j++) {
        LLVMValueRef is = LLVMBuildICmp(x->builder, LLVMIntEQ, cond, LLVMGetOperand(sw, 2 * j), "");
        if (LLVMGetSuccessor(sw, j) == target)
            here = LLVMBuildOr(x->builder, here, is, "");
        else
            elsewhere = LLVMBuildOr(x->builder, elsewhere, is, "");
    }
    if (LLVMGetSuccessor(sw, 0) != target)
        return here;
    /* the default goes there too: any value that no case sends elsewhere */
    return LLVMBuildNot(x->builder, elsewhere, "");
}

static void count_case(struct xfunc *f, LLVMValueRef sw, uint32_t site, unsigned successor)
{
    struct vigil_xform *x = f->x;
    LLVMBasicBlockRef from = LLVMGetInstructionParent(sw);
    LLVMBasicBlockRef cont = xf_split_before(f, sw, "vigil.pred.cont");
    if (!cont)
        return;
    LLVMPositionBuilderAtEnd(x->builder, from);
    emit_counter(f, from, cont, site, LLVMBuildZExt(x->builder, takes_successor(x, sw, successor), x->i8, ""), 3);
}

static void count_return(struct xfunc *f, LLVMValueRef call, uint32_t site, LLVMValueRef (*as_i64)(struct vigil_xform *, LLVMValueRef))
{
    struct vigil_xform *x = f->x;
    LLVMValueRef next = LLVMGetNextInstruction(call);
    if (!next)
        return;
    LLVMBasicBlockRef from = LLVMGetInstructionParent(call);
    LLVMBasicBlockRef cont = xf_split_before(f, next, "vigil.pred.cont");
    if (!cont)
        return;
    LLVMPositionBuilderAtEnd(x->builder, from);
    LLVMValueRef value = as_i64(x, call);
    /* < 0 -> 0, == 0 -> 1, > 0 -> 2 */
    LLVMValueRef zero = LLVMConstInt(x->i64, 0, 0);
    LLVMValueRef not_negative = LLVMBuildZExt(x->builder, LLVMBuildICmp(x->builder, LLVMIntSGE, value, zero, ""), x->i8, "");
    LLVMValueRef positive = LLVMBuildZExt(x->builder, LLVMBuildICmp(x->builder, LLVMIntSGT, value, zero, ""), x->i8, "");
    emit_counter(f, from, cont, site, LLVMBuildAdd(x->builder, not_negative, positive, ""), 0xff);
}

static const struct vigil_cc_tool preds_cc_tool;

/* A counter is placed once every site of the function is known (place_counters), so that
 * branch predicates whose count follows from another site's are left out (seed 002 3.1). */
static void defer(struct xfunc *f, struct pending_counter c)
{
    void **state = xcc_state(f, &preds_cc_tool);
    struct xp_pending *p = state ? *state : NULL;
    if (!state || (!p && !(p = *state = calloc(1, sizeof *p))))
        return;
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        struct pending_counter *grown = realloc(p->v, cap * sizeof *grown);
        if (!grown)
            return;
        p->v = grown;
        p->cap = cap;
    }
    p->v[p->n++] = c;
}

static void defer_counter(struct xfunc *f, LLVMValueRef at, LLVMValueRef original, uint32_t site, uint32_t block,
                          LLVMValueRef (*as_i64)(struct vigil_xform *, LLVMValueRef))
{
    defer(f, (struct pending_counter){at, original, site, block, as_i64, -1});
}

static void defer_case(struct xfunc *f, LLVMValueRef at, LLVMValueRef original, uint32_t site, uint32_t block,
                       unsigned successor)
{
    defer(f, (struct pending_counter){at, original, site, block, NULL, (int)successor});
}

/* Whether the code of inst's block before inst cannot stop the process or leave the block
 * (no call other than vigil's and intrinsics, no access through a pointer that may fault): a
 * counter there counts every entry into the block, even in a run that crashes right after. A
 * return site's counter follows its call, so it never qualifies. */
static int reached_whenever_entered(LLVMValueRef inst)
{
    for (LLVMValueRef i = LLVMGetFirstInstruction(LLVMGetInstructionParent(inst)); i && i != inst;
         i = LLVMGetNextInstruction(i)) {
        LLVMValueRef address = NULL;
        if (LLVMIsACallInst(i) || LLVMIsAInvokeInst(i)) {
            if (LLVMIsAInlineAsm(LLVMGetCalledValue(i)))
                return 0;
            const char *callee = xf_callee_name(i);
            if (strncmp(callee, "llvm.", 5) != 0 && strncmp(callee, "__vigil_", 8) != 0)
                return 0;
        } else if (LLVMIsALoadInst(i)) {
            address = LLVMGetOperand(i, 0);
        } else if (LLVMIsAStoreInst(i)) {
            address = LLVMGetOperand(i, 1);
        } else if (LLVMIsAAtomicRMWInst(i) || LLVMIsAAtomicCmpXchgInst(i)) {
            return 0;
        }
        while (address && (LLVMIsABitCastInst(address) || LLVMIsAConstantExpr(address)))
            address = LLVMGetOperand(address, 0);
        if (address && !LLVMIsAAllocaInst(address) && !LLVMIsAGlobalVariable(address))
            return 0;
    }
    return 1;
}

/* keep[i]: the predicates of pending counter i that need a counter (bit p = predicate p);
 * the others are recorded in the site table with the site that reconstructs them. */
static void find_redundant(struct xfunc *f, const struct xp_pending *p, unsigned *keep)
{
    uint32_t nblocks = (uint32_t)f->blocks.n;
    for (size_t i = 0; i < p->n; i++)
        keep[i] = p->v[i].as_i64 ? 0xff : 3;
    if (!f->x->settings->pred_remove_redundant || !f->cfg_nedges || !nblocks)
        return;
    uint32_t *block_site = malloc(nblocks * sizeof *block_site), *branch_at = malloc(nblocks * sizeof *branch_at);
    uint32_t *source = malloc(f->cfg_nedges * sizeof *source);
    if (!block_site || !branch_at || !source)
        goto out;
    for (uint32_t b = 0; b < nblocks; b++)
        block_site[b] = branch_at[b] = VIGIL_CFG_NONE;
    for (size_t i = 0; i < p->n; i++) {
        uint32_t b = p->v[i].block;
        if (b >= nblocks)
            continue;
        /* a branch site that counts every entry into its block (crashing runs included) */
        if (p->v[i].as_i64 || p->v[i].successor >= 0 || !LLVMIsABranchInst(p->v[i].at))   /* only branches stand for a block */
            continue;
        if (reached_whenever_entered(p->v[i].original ? p->v[i].original : p->v[i].at))
            block_site[b] = p->v[i].site;
        branch_at[b] = (uint32_t)i;
    }
    if (vigil_redundant_edges(nblocks, f->cfg_edges, f->cfg_nedges, f->cfg_exits, f->cfg_nexits, block_site, source) != 0)
        goto out;
    for (uint32_t e = 0; e < f->cfg_nedges; e++) {
        uint32_t i = branch_at[f->cfg_edges[e].from];
        if (source[e] == VIGIL_CFG_NONE || i == VIGIL_CFG_NONE)
            continue;
        unsigned pred = f->cfg_edges[e].label == VIGIL_EDGE_TRUE ? 1 : 0;   /* pred = the condition */
        keep[i] &= ~(1u << pred);
        vigil_sitefmt_add_removed(f->x->sites, p->v[i].site, pred, source[e]);
        f->x->stats->pred_removed++;
    }
out:
    free(block_site), free(branch_at), free(source);
}

static void place_counters(struct xfunc *f)
{
    void **state = xcc_state(f, &preds_cc_tool);
    struct xp_pending *p = state ? *state : NULL;
    if (!p)
        return;
    /* Pinning keeps a function in its instrumented copy, except where a computed goto jumps
     * to label addresses of the checking copy (labels.c could not give the clone its own):
     * there the checking copy counts too. */
    int copies = xp_pins(f->x) && (!xf_has_indirectbr(f) || f->labels_mapped) ? 1 : 2;
    unsigned *keep = calloc(p->n + 1, sizeof *keep);
    if (keep) {
        find_redundant(f, p, keep);
        for (size_t i = 0; i < p->n; i++) {
            const struct pending_counter *c = &p->v[i];
            if (!keep[i])
                continue;
            for (int copy = 0; copy < copies; copy++) {
                LLVMValueRef at = copy ? c->original : c->at;
                if (!at)
                    continue;
                /* each copy's own location: an outlined copy has a scope of its own */
                LLVMSetCurrentDebugLocation2(f->x->builder, xf_debug_loc(f, at));
                if (c->as_i64)
                    count_return(f, at, c->site, c->as_i64);
                else if (c->successor >= 0)
                    count_case(f, at, c->site, (unsigned)c->successor);
                else
                    count_branch(f, at, c->site, keep[i]);
            }
            f->x->stats->pred_counters++;
        }
        LLVMSetCurrentDebugLocation2(f->x->builder, NULL);
    }
    free(keep);
    free(p->v);
    free(p);
    *state = NULL;
}

/* Counters go where the module has the arrays for them (VIGIL_CC_PRED_COUNTERS=1 or 2). */
static int counters_wanted(const struct vigil_xform *x)
{
    return x->pred_enable != NULL;
}

static const struct vigil_cc_tool preds_cc_tool = {
    .name = "preds",
    .active = counters_wanted,
    .at_site = defer_counter,
    .at_case = defer_case,
    .function_done = place_counters,
};
VIGIL_REGISTER_CC_TOOL(preds_cc_tool);
