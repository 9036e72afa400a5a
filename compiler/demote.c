/* Demotion to stack slots, so that the two copies can be plain block-by-block clones.
 *
 * After xf_demote no PHI remains and every SSA value is used only inside its defining block,
 * except entry-block allocas and arguments; those stay valid in both copies because the static
 * allocas move into the prologue, which dominates everything. SROA/mem2reg in the -O pipeline
 * promotes the slots back into registers. */
#include "xform.h"

#include <stdlib.h>
#include <string.h>

static LLVMValueRef new_slot(struct xfunc *f, LLVMTypeRef type)
{
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(f->fn);
    LLVMPositionBuilder(f->x->builder, entry, LLVMGetFirstInstruction(entry));
    return LLVMBuildAlloca(f->x->builder, type, "vigil.slot");
}

static LLVMValueRef first_non_phi(LLVMBasicBlockRef block)
{
    LLVMValueRef inst = LLVMGetFirstInstruction(block);
    while (inst && LLVMIsAPHINode(inst))
        inst = LLVMGetNextInstruction(inst);
    return inst;
}

/* Each PHI p becomes: an "incoming" slot stored at the end of every predecessor, and a load
 * of it where p was. The load replaces p, and is demoted like any other value if it is used
 * elsewhere: keeping the two slots apart is what makes a PHI's value survive a later store on
 * the same edge (for example, after the loop that computed it). */
static void demote_phis(struct xfunc *f)
{
    LLVMBuilderRef b = f->x->builder;
    struct valvec phis = {0}, slots = {0};
    for (LLVMBasicBlockRef block = LLVMGetFirstBasicBlock(f->fn); block; block = LLVMGetNextBasicBlock(block))
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst && LLVMIsAPHINode(inst);
             inst = LLVMGetNextInstruction(inst))
            valvec_push(&phis, inst);
    if (!phis.n)
        return;
    for (size_t i = 0; i < phis.n; i++) {
        LLVMValueRef phi = phis.v[i];
        LLVMTypeRef type = LLVMTypeOf(phi);
        LLVMValueRef slot = new_slot(f, type);
        valvec_push(&slots, slot);
        LLVMBasicBlockRef block = LLVMGetInstructionParent(phi);
        LLVMPositionBuilder(b, block, first_non_phi(block));
        LLVMValueRef value = LLVMBuildLoad2(b, type, slot, "vigil.phi");
        LLVMReplaceAllUsesWith(phi, value);
    }
    /* Incoming values are read only now, after every PHI was replaced, so an incoming value
     * that was itself a PHI of the same block is the (old) load, not the new store. */
    for (size_t i = 0; i < phis.n; i++) {
        LLVMValueRef phi = phis.v[i];
        unsigned n = LLVMCountIncoming(phi);
        for (unsigned k = 0; k < n; k++) {
            LLVMBasicBlockRef pred = LLVMGetIncomingBlock(phi, k);
            LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(pred));
            LLVMBuildStore(b, LLVMGetIncomingValue(phi, k), slots.v[i]);
        }
    }
    for (size_t i = 0; i < phis.n; i++)
        LLVMInstructionEraseFromParent(phis.v[i]);
    valvec_free(&phis);
    valvec_free(&slots);
}

static int is_static_alloca_in(LLVMValueRef inst, LLVMBasicBlockRef entry)
{
    return LLVMIsAAllocaInst(inst) && LLVMGetInstructionParent(inst) == entry &&
           LLVMIsAConstantInt(LLVMGetOperand(inst, 0));
}

static int used_outside_block(LLVMValueRef inst)
{
    LLVMBasicBlockRef block = LLVMGetInstructionParent(inst);
    for (LLVMUseRef use = LLVMGetFirstUse(inst); use; use = LLVMGetNextUse(use))
        if (LLVMGetInstructionParent(LLVMGetUser(use)) != block)
            return 1;
    return 0;
}

/* A value used in another block gets a slot: stored right after its definition, loaded right
 * before each user in another block. */
static void demote_value(struct xfunc *f, LLVMValueRef inst)
{
    LLVMBuilderRef b = f->x->builder;
    LLVMBasicBlockRef block = LLVMGetInstructionParent(inst);
    LLVMTypeRef type = LLVMTypeOf(inst);
    struct valvec users = {0};
    struct ptrmap seen;
    ptrmap_init(&seen);
    for (LLVMUseRef use = LLVMGetFirstUse(inst); use; use = LLVMGetNextUse(use)) {
        LLVMValueRef user = LLVMGetUser(use);
        if (LLVMGetInstructionParent(user) == block || ptrmap_get(&seen, user))
            continue;
        ptrmap_put(&seen, user, user);
        valvec_push(&users, user);
    }
    ptrmap_free(&seen);
    LLVMValueRef slot = new_slot(f, type);
    LLVMPositionBuilderBefore(b, LLVMGetNextInstruction(inst));
    LLVMBuildStore(b, inst, slot);
    for (size_t i = 0; i < users.n; i++) {
        LLVMValueRef user = users.v[i];
        LLVMPositionBuilderBefore(b, user);
        LLVMValueRef value = LLVMBuildLoad2(b, type, slot, "vigil.reload");
        int nops = LLVMGetNumOperands(user);
        for (int k = 0; k < nops; k++)
            if (LLVMGetOperand(user, (unsigned)k) == inst)
                LLVMSetOperand(user, (unsigned)k, value);
    }
    valvec_free(&users);
}

/* An address computed from one value by constant offsets (a GEP with constant indices, a
 * pointer cast): recomputed where it is used rather than kept in a slot. */
static int is_rematerializable(LLVMValueRef inst)
{
    if (LLVMIsABitCastInst(inst))
        return LLVMGetTypeKind(LLVMTypeOf(inst)) == LLVMPointerTypeKind;
    if (!LLVMIsAGetElementPtrInst(inst))
        return 0;
    int n = LLVMGetNumOperands(inst);
    for (int k = 1; k < n; k++)
        if (!LLVMIsAConstant(LLVMGetOperand(inst, (unsigned)k)))
            return 0;
    return 1;
}

/* Each block that uses such an address from another block gets its own copy, placed before
 * its first user there, so only the base crosses blocks. Were the address itself kept in a
 * slot, it would be a value of its own in every transfer's state (transfer.c) and, reloaded
 * there, a PHI at the loop header that the back end can no longer fold into the accesses'
 * addressing modes: sqlite3's moveToLeftmost spilled four such addresses (`pCur + 0x46`) and
 * reloaded them from the stack on every iteration. Returns whether it made any copy. */
static int rematerialize_addresses(struct xfunc *f)
{
    LLVMBuilderRef b = f->x->builder;
    struct valvec cheap = {0};
    for (LLVMBasicBlockRef block = LLVMGetFirstBasicBlock(f->fn); block; block = LLVMGetNextBasicBlock(block))
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst; inst = LLVMGetNextInstruction(inst))
            if (is_rematerializable(inst) && used_outside_block(inst))
                valvec_push(&cheap, inst);
    struct ptrmap users, copies;
    ptrmap_init(&users);
    ptrmap_init(&copies);
    for (size_t i = 0; i < cheap.n; i++) {
        LLVMValueRef inst = cheap.v[i];
        LLVMBasicBlockRef home = LLVMGetInstructionParent(inst);
        ptrmap_clear(&users);
        ptrmap_clear(&copies);
        struct valvec blocks = {0};
        for (LLVMUseRef use = LLVMGetFirstUse(inst); use; use = LLVMGetNextUse(use)) {
            LLVMValueRef user = LLVMGetUser(use);
            LLVMBasicBlockRef block = LLVMGetInstructionParent(user);
            if (block == home)
                continue;
            ptrmap_put(&users, user, user);
            if (!ptrmap_get(&copies, LLVMBasicBlockAsValue(block))) {
                ptrmap_put(&copies, LLVMBasicBlockAsValue(block), inst);   /* placeholder */
                valvec_push(&blocks, LLVMBasicBlockAsValue(block));
            }
        }
        for (size_t k = 0; k < blocks.n; k++) {
            LLVMBasicBlockRef block = LLVMValueAsBasicBlock(blocks.v[k]);
            LLVMValueRef first = LLVMGetFirstInstruction(block);
            while (!ptrmap_get(&users, first))
                first = LLVMGetNextInstruction(first);
            LLVMValueRef copy = LLVMInstructionClone(inst);
            LLVMPositionBuilderBefore(b, first);
            xf_insert_keeping_loc(b, copy, "vigil.addr");
            for (LLVMValueRef user = first; user; user = LLVMGetNextInstruction(user)) {
                if (!ptrmap_get(&users, user))
                    continue;
                int nops = LLVMGetNumOperands(user);
                for (int op = 0; op < nops; op++)
                    if (LLVMGetOperand(user, (unsigned)op) == inst)
                        LLVMSetOperand(user, (unsigned)op, copy);
            }
        }
        valvec_free(&blocks);
    }
    ptrmap_free(&users);
    ptrmap_free(&copies);
    int changed = cheap.n > 0;
    valvec_free(&cheap);
    return changed;
}

void xf_demote(struct xfunc *f)
{
    demote_phis(f);
    /* A copy's base may itself be such an address from another block: repeat. */
    while (rematerialize_addresses(f))
        ;
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(f->fn);
    struct valvec escaping = {0};
    for (LLVMBasicBlockRef block = entry; block; block = LLVMGetNextBasicBlock(block))
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst; inst = LLVMGetNextInstruction(inst))
            if (LLVMGetTypeKind(LLVMTypeOf(inst)) != LLVMVoidTypeKind &&
                !is_static_alloca_in(inst, entry) && used_outside_block(inst))
                valvec_push(&escaping, inst);
    for (size_t i = 0; i < escaping.n; i++)
        demote_value(f, escaping.v[i]);
    valvec_free(&escaping);
}

/* The prologue becomes the entry block and takes every static alloca of the old entry block,
 * so both copies share one set of stack slots and the allocas stay static. Its terminator is
 * added by xf_insert_checks (the entry check). */
void xf_make_prologue(struct xfunc *f)
{
    LLVMBuilderRef b = f->x->builder;
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(f->fn);
    f->prologue = LLVMInsertBasicBlockInContext(f->x->ctx, entry, "vigil.prologue");
    struct valvec allocas = {0};
    for (LLVMValueRef inst = LLVMGetFirstInstruction(entry); inst; inst = LLVMGetNextInstruction(inst))
        if (is_static_alloca_in(inst, entry))
            valvec_push(&allocas, inst);
    LLVMPositionBuilderAtEnd(b, f->prologue);
    for (size_t i = 0; i < allocas.n; i++) {
        size_t len = 0;
        char *name = strdup(LLVMGetValueName2(allocas.v[i], &len));
        LLVMInstructionRemoveFromParent(allocas.v[i]);
        xf_insert_keeping_loc(b, allocas.v[i], name);  /* inserting clears the name */
        free(name);
    }
    valvec_free(&allocas);
    for (LLVMBasicBlockRef block = entry; block; block = LLVMGetNextBasicBlock(block))
        valvec_push(&f->blocks, LLVMBasicBlockAsValue(block));
}
