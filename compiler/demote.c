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

/* Known trailing zeros of the slots (xf_slot_trailing_zeros).
 *
 * A loop that the optimizer unrolled by 8 from 0 counts `i += 8` and computes `i | 1` ...
 * `i | 7` for i + 1 ... i + 7: an `or` is an add only while i's low bits are known zero. The
 * back end learns that from i's recurrence at the loop's header (start 0, step 8); a way into
 * the header from a dispatch check's slow path or from the instrumented copy (transfer.c)
 * brings a value with nothing known, the `or`s stop being adds, and loop strength reduction
 * keeps the unrolled work (a multiply-add chain: 8 multiplies where plain keeps 1). The slots
 * hold the same facts on every path: each value stored into a slot comes from one of its
 * stores, in f or in a clone of it; a value reloaded on a way back can be masked with them. */
struct zeros {
    struct ptrmap index;   /* slot -> its index + 1 */
    unsigned char *zeros;  /* the current estimate per slot (starts high, only falls) */
};

enum { ZEROS_DEPTH = 8 };

static unsigned int_width(LLVMValueRef v)
{
    LLVMTypeRef type = LLVMTypeOf(v);
    return LLVMGetTypeKind(type) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(type) : 0;
}

static unsigned min_u(unsigned a, unsigned b)
{
    return a < b ? a : b;
}

/* Low bits known zero in v (an integer of `width` bits); 0 when nothing is known. */
static unsigned value_zeros(struct zeros *z, LLVMValueRef v, unsigned width, int depth)
{
    if (LLVMIsAConstantInt(v)) {
        unsigned long long c = LLVMConstIntGetZExtValue(v);
        return width > 64 ? 0 : c == 0 ? width : min_u(width, (unsigned)__builtin_ctzll(c));
    }
    if (LLVMIsAUndefValue(v))
        return width;   /* any value will do */
    if (!LLVMIsAInstruction(v) || depth >= ZEROS_DEPTH)
        return 0;
    LLVMOpcode op = LLVMGetInstructionOpcode(v);
    if (op == LLVMLoad) {
        size_t slot = (size_t)ptrmap_get(&z->index, LLVMGetOperand(v, 0));
        return slot && int_width(v) == width ? z->zeros[slot - 1] : 0;
    }
    unsigned a, b;
    switch (op) {
    case LLVMAdd: case LLVMSub: case LLVMOr: case LLVMXor:
        a = value_zeros(z, LLVMGetOperand(v, 0), width, depth + 1);
        return a ? min_u(a, value_zeros(z, LLVMGetOperand(v, 1), width, depth + 1)) : 0;
    case LLVMAnd:
        a = value_zeros(z, LLVMGetOperand(v, 0), width, depth + 1);
        b = value_zeros(z, LLVMGetOperand(v, 1), width, depth + 1);
        return a > b ? a : b;
    case LLVMMul:
        a = value_zeros(z, LLVMGetOperand(v, 0), width, depth + 1);
        b = value_zeros(z, LLVMGetOperand(v, 1), width, depth + 1);
        return min_u(width, a + b);
    case LLVMShl: {
        LLVMValueRef by = LLVMGetOperand(v, 1);
        if (!LLVMIsAConstantInt(by) || LLVMConstIntGetZExtValue(by) >= width)
            return 0;
        return min_u(width, value_zeros(z, LLVMGetOperand(v, 0), width, depth + 1) + (unsigned)LLVMConstIntGetZExtValue(by));
    }
    case LLVMZExt: case LLVMSExt: {
        LLVMValueRef from = LLVMGetOperand(v, 0);
        unsigned w = int_width(from), k = w ? value_zeros(z, from, w, depth + 1) : 0;
        return k == w && w ? width : k;   /* all zero stays all zero */
    }
    case LLVMTrunc: {
        LLVMValueRef from = LLVMGetOperand(v, 0);
        unsigned w = int_width(from);
        return w ? min_u(width, value_zeros(z, from, w, depth + 1)) : 0;
    }
    case LLVMSelect:
        a = value_zeros(z, LLVMGetOperand(v, 1), width, depth + 1);
        return a ? min_u(a, value_zeros(z, LLVMGetOperand(v, 2), width, depth + 1)) : 0;
    default:
        return 0;
    }
}

void xf_slot_trailing_zeros(const struct valvec *slots, unsigned char *zeros)
{
    struct zeros z;
    ptrmap_init(&z.index);
    z.zeros = zeros;
    for (size_t i = 0; i < slots->n; i++) {
        LLVMTypeRef type = LLVMGetAllocatedType(slots->v[i]);
        unsigned width = LLVMGetTypeKind(type) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(type) : 0;
        zeros[i] = width <= 64 ? (unsigned char)width : 0;
        if (zeros[i])
            ptrmap_put(&z.index, slots->v[i], (void *)(i + 1));
    }
    /* The greatest solution: every slot starts with all its bits known zero, and each pass
     * lowers a slot to what its stored values show, until nothing changes (each pass lowers
     * some slot, so at most the sum of the widths passes; a cap falls back to nothing known). */
    int changed = 1;
    for (int pass = 0; changed && pass < 64; pass++) {
        changed = 0;
        for (size_t i = 0; i < slots->n; i++) {
            if (!zeros[i])
                continue;
            unsigned width = LLVMGetIntTypeWidth(LLVMGetAllocatedType(slots->v[i])), known = zeros[i];
            for (LLVMUseRef use = LLVMGetFirstUse(slots->v[i]); use && known; use = LLVMGetNextUse(use)) {
                LLVMValueRef user = LLVMGetUser(use);
                if (LLVMIsAStoreInst(user) && LLVMGetOperand(user, 1) == slots->v[i])
                    known = min_u(known, value_zeros(&z, LLVMGetOperand(user, 0), width, 0));
            }
            if (known != zeros[i]) {
                zeros[i] = (unsigned char)known;
                changed = 1;
            }
        }
    }
    if (changed)
        memset(zeros, 0, slots->n);
    ptrmap_free(&z.index);
}
