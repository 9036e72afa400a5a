/* Computed gotos in the instrumented copy (in-function clone only: functions with an indirectbr
 * are never outlined). Label addresses (blockaddress constants) name the checking copy's
 * blocks, so a clone that loads them from the function's jump table would leave for the
 * checking copy at its first computed goto. Here the clone gets a jump table of its own, whose
 * entries name the clones of the same blocks, and every indirectbr of the function may go to
 * both sets of blocks: an address that crosses from one copy to the other through a stack
 * slot shared by both stays a valid destination. Branch weights keep each copy's own set the
 * likely one, so the checking copy's layout does not change.
 *
 * Applies when every label address of the function sits in a jump table: an internal constant
 * array of label addresses and other constants, used only by instructions of the function
 * (lua's `disptab`, the usual `static void *table[] = {&&a, &&b}`). A label address used any
 * other way (stored by the program, as direct threaded code does) keeps the old behaviour:
 * the clone reaches the checking copy at its computed gotos. */
#include "xform.h"

#include <stdlib.h>
#include <string.h>

/* The block a blockaddress constant of f names, or NULL when c is not one of f's. */
static LLVMBasicBlockRef label_of(struct xfunc *f, LLVMValueRef c)
{
    if (!c || !LLVMIsABlockAddress(c) || LLVMGetOperand(c, 0) != f->fn)
        return NULL;
    return LLVMValueAsBasicBlock(LLVMGetOperand(c, 1));
}

/* Whether constant c holds one of f's label addresses anywhere inside. */
static int holds_label(struct xfunc *f, LLVMValueRef c)
{
    if (label_of(f, c))
        return 1;
    if (!LLVMIsAConstantArray(c) && !LLVMIsAConstantStruct(c) && !LLVMIsAConstantVector(c) &&
        !LLVMIsAConstantExpr(c))
        return 0;
    int n = LLVMGetNumOperands(c);
    for (int i = 0; i < n; i++)
        if (holds_label(f, LLVMGetOperand(c, (unsigned)i)))
            return 1;
    return 0;
}

/* g is a jump table of f: internal constant array whose label elements are plain label
 * addresses of f, used by instructions of f only. */
static int is_jump_table(struct xfunc *f, LLVMValueRef g)
{
    LLVMValueRef init = LLVMGetInitializer(g);
    LLVMLinkage linkage = LLVMGetLinkage(g);
    if (!init || !LLVMIsGlobalConstant(g) || !LLVMIsAConstantArray(init) ||
        (linkage != LLVMInternalLinkage && linkage != LLVMPrivateLinkage))
        return 0;
    int n = LLVMGetNumOperands(init);
    for (int i = 0; i < n; i++) {
        LLVMValueRef e = LLVMGetOperand(init, (unsigned)i);
        if (!label_of(f, e) && holds_label(f, e))
            return 0;
    }
    for (LLVMUseRef u = LLVMGetFirstUse(g); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        if (!LLVMIsAInstruction(user) || LLVMGetBasicBlockParent(LLVMGetInstructionParent(user)) != f->fn)
            return 0;
    }
    return 1;
}

/* Every original block that an indirectbr of f may reach. */
static void indirect_destinations(struct xfunc *f, struct valvec *out)
{
    for (size_t i = 0; i < f->blocks.n; i++) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(f->blocks.v[i]));
        if (!term || LLVMGetInstructionOpcode(term) != LLVMIndirectBr)
            continue;
        for (unsigned k = 0; k < LLVMGetNumSuccessors(term); k++) {
            LLVMValueRef dest = LLVMBasicBlockAsValue(LLVMGetSuccessor(term, k));
            int seen = 0;
            for (size_t j = 0; j < out->n && !seen; j++)
                seen = out->v[j] == dest;
            if (!seen)
                valvec_push(out, dest);
        }
    }
}

int xf_map_labels(struct xfunc *f)
{
    struct vigil_xform *x = f->x;
    if (f->instr_fn || !xf_has_indirectbr(f))
        return 0;
    /* No label address of f outside its jump tables, and none used directly by an instruction. */
    struct valvec tables = {0};
    for (LLVMValueRef g = LLVMGetFirstGlobal(x->module); g; g = LLVMGetNextGlobal(g)) {
        LLVMValueRef init = LLVMGetInitializer(g);
        if (!init || !holds_label(f, init))
            continue;
        if (!is_jump_table(f, g)) {
            valvec_free(&tables);
            return 0;
        }
        valvec_push(&tables, g);
    }
    for (size_t i = 0; i < f->blocks.n; i++)
        for (LLVMValueRef inst = LLVMGetFirstInstruction(LLVMValueAsBasicBlock(f->blocks.v[i])); inst;
             inst = LLVMGetNextInstruction(inst))
            for (int k = 0; k < LLVMGetNumOperands(inst); k++) {
                LLVMValueRef op = LLVMGetOperand(inst, (unsigned)k);
                if (op && !LLVMValueIsBasicBlock(op) && LLVMIsAConstant(op) && holds_label(f, op)) {
                    valvec_free(&tables);
                    return 0;
                }
            }
    if (!tables.n) {
        valvec_free(&tables);
        return 0;
    }
    /* The clone's tables: the same entries, naming the clones (recorded in f->clones, so that
     * xf_remap_operands points the clone's loads at them). */
    for (size_t t = 0; t < tables.n; t++) {
        LLVMValueRef g = tables.v[t], init = LLVMGetInitializer(g);
        unsigned n = (unsigned)LLVMGetNumOperands(init);
        LLVMValueRef *elems = xf_calloc(n, sizeof *elems);
        for (unsigned i = 0; i < n; i++) {
            LLVMValueRef e = LLVMGetOperand(init, i);
            LLVMBasicBlockRef label = label_of(f, e);
            elems[i] = label ? LLVMBlockAddress(f->fn, xf_clone_block(f, label)) : e;
        }
        LLVMValueRef init_copy = LLVMConstArray(LLVMGetElementType(LLVMTypeOf(init)), elems, n);
        free(elems);
        size_t len = 0;
        const char *name = LLVMGetValueName2(g, &len);
        char *copy_name = xf_calloc(len + sizeof VIGIL_INSTR_SUFFIX, 1);
        memcpy(copy_name, name, len);
        strcpy(copy_name + len, VIGIL_INSTR_SUFFIX);
        LLVMValueRef copy = LLVMAddGlobal(x->module, LLVMTypeOf(init_copy), copy_name);
        free(copy_name);
        LLVMSetInitializer(copy, init_copy);
        LLVMSetGlobalConstant(copy, 1);
        LLVMSetLinkage(copy, LLVMPrivateLinkage);
        LLVMSetAlignment(copy, LLVMGetAlignment(g));
        LLVMSetUnnamedAddress(copy, LLVMGlobalUnnamedAddr);
        ptrmap_put(&f->clones, g, copy);
    }
    valvec_free(&tables);
    return 1;
}

/* br (an indirectbr) built anew with dests added to its own destinations, weighted so that
 * its own (mine_first) or the added ones are likely; br is erased. Built anew rather than
 * grown: LLVM 14's copy of an indirectbr (LLVMInstructionClone, and passes that clone one)
 * reserves no room to add a destination. */
static LLVMValueRef widened(struct vigil_xform *x, LLVMValueRef br, const struct valvec *dests, int mine_first)
{
    unsigned n = LLVMGetNumSuccessors(br), total = n + (unsigned)dests->n;
    LLVMPositionBuilderBefore(x->builder, br);
    LLVMValueRef wide = LLVMBuildIndirectBr(x->builder, LLVMGetOperand(br, 0), total);
    LLVMMetadataRef *weights = xf_calloc(total + 1, sizeof *weights);
    weights[0] = LLVMMDStringInContext2(x->ctx, "branch_weights", 14);
    for (unsigned k = 0; k < total; k++) {
        LLVMAddDestination(wide, k < n ? LLVMGetSuccessor(br, k) : LLVMValueAsBasicBlock(dests->v[k - n]));
        weights[k + 1] = LLVMValueAsMetadata(LLVMConstInt(x->i32, (k < n) == mine_first ? 2000 : 1, 0));
    }
    LLVMSetMetadata(wide, x->prof_kind, LLVMMetadataAsValue(x->ctx, LLVMMDNodeInContext2(x->ctx, weights, total + 1)));
    free(weights);
    LLVMInstructionSetDebugLoc(wide, LLVMInstructionGetDebugLoc(br));
    LLVMInstructionEraseFromParent(br);
    return wide;
}

void xf_widen_indirect_branches(struct xfunc *f)
{
    struct valvec dests = {0}, clone_dests = {0};
    indirect_destinations(f, &dests);
    for (size_t d = 0; d < dests.n; d++)
        valvec_push(&clone_dests, LLVMBasicBlockAsValue(xf_clone_block(f, LLVMValueAsBasicBlock(dests.v[d]))));
    for (size_t i = 0; i < f->blocks.n; i++) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(f->blocks.v[i]));
        if (!term || LLVMGetInstructionOpcode(term) != LLVMIndirectBr)
            continue;
        /* Each copy goes to the other's blocks too; the clone's list is the original's (kept by
         * xf_remap_operands), so both add the clones. */
        LLVMValueRef clone = ptrmap_get(&f->clones, term);
        ptrmap_put(&f->clones, term, NULL);   /* term is erased: its address may come back */
        LLVMValueRef wide = widened(f->x, term, &clone_dests, 1);
        if (!clone)
            continue;
        LLVMValueRef wide_clone = widened(f->x, clone, &clone_dests, 0);
        for (size_t c = 0; c < f->cloned.n; c++)
            if (f->cloned.v[c] == clone)
                f->cloned.v[c] = wide_clone;
        ptrmap_put(&f->clones, wide, wide_clone);
    }
    valvec_free(&dests);
    valvec_free(&clone_dests);
}
