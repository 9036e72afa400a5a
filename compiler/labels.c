/* Computed gotos in the instrumented copy (in-function clone only: functions with an indirectbr
 * are never outlined). Label addresses (blockaddress constants) name the checking copy's
 * blocks, so a clone that loads them from the function's jump table would leave for the
 * checking copy at its first computed goto. Here the clone gets jump tables of its own, whose
 * entries name the clones of the same blocks, and its indirectbrs go to the clones.
 *
 * That is only sound when no label address crosses from one copy to the other, and addresses
 * cross through stack slots shared by both copies at dispatch checks. clang gives a function
 * with computed gotos one dispatch block, `indirectbr (phi of addresses)`; after demotion the
 * phi is a slot, stored at the end of each handler, loaded in the dispatch block, and the
 * edge in between gets a back-edge check. So first (xf_split_computed_gotos) the dispatch
 * block is copied into every handler that branches to it, as the back end's tail duplication
 * would do: each handler loads its address and jumps. Then (xf_map_labels) every indirectbr
 * must jump to an address loaded from a jump table in its own block, directly or through a
 * slot stored earlier in that block; jump tables are internal constant arrays of label
 * addresses used by instructions of the function only (lua's `disptab`). Anything else
 * (label addresses stored by the program, as direct threaded code does) keeps the old
 * behaviour: the clone goes to the checking copy at its computed gotos.
 *
 * (Letting every indirectbr reach both copies' blocks instead would be sound too, but an edge
 * from the checking copy into the clone makes the clone's blocks part of the checking copy's
 * control flow: lua's luaV_execute ran twice as many instructions in mode=off.) */
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

/* block is reached from a block of f (the split leaves dispatch blocks without any), or is
 * the entry. */
static int has_predecessor(struct xfunc *f, LLVMBasicBlockRef block)
{
    if (LLVMBasicBlockAsValue(block) == f->blocks.v[0])
        return 1;
    for (size_t i = 0; i < f->blocks.n; i++) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(f->blocks.v[i]));
        for (unsigned k = 0; term && k < LLVMGetNumSuccessors(term); k++)
            if (LLVMGetSuccessor(term, k) == block)
                return 1;
    }
    return 0;
}

/* v without the casts and address arithmetic on top: the object it points into. */
static LLVMValueRef base_of(LLVMValueRef v)
{
    for (;;) {
        if (LLVMIsABitCastInst(v) || LLVMIsAGetElementPtrInst(v) ||
            (LLVMIsAConstantExpr(v) && (LLVMGetConstOpcode(v) == LLVMBitCast || LLVMGetConstOpcode(v) == LLVMGetElementPtr)))
            v = LLVMGetOperand(v, 0);
        else
            return v;
    }
}

LLVMValueRef xf_strip_bitcasts(LLVMValueRef v)
{
    while (LLVMIsABitCastInst(v) || (LLVMIsAConstantExpr(v) && LLVMGetConstOpcode(v) == LLVMBitCast))
        v = LLVMGetOperand(v, 0);
    return v;
}

static int in_list(const struct valvec *list, LLVMValueRef v)
{
    for (size_t i = 0; i < list->n; i++)
        if (list->v[i] == v)
            return 1;
    return 0;
}

/* v is a load from one of the jump tables. */
static int is_table_load(LLVMValueRef v, const struct valvec *tables)
{
    v = xf_strip_bitcasts(v);
    return LLVMIsALoadInst(v) && in_list(tables, base_of(LLVMGetOperand(v, 0)));
}

/* The address br (an indirectbr) jumps to was loaded from a jump table in br's own block:
 * directly, or through a stack slot that an earlier store of the block filled with one. */
static int jumps_within_block(LLVMValueRef br, const struct valvec *tables)
{
    LLVMValueRef addr = xf_strip_bitcasts(LLVMGetOperand(br, 0));
    if (!LLVMIsALoadInst(addr) || LLVMGetInstructionParent(addr) != LLVMGetInstructionParent(br))
        return 0;
    if (is_table_load(addr, tables))
        return 1;
    LLVMValueRef slot = LLVMGetOperand(addr, 0);
    if (!LLVMIsAAllocaInst(slot))
        return 0;
    for (LLVMValueRef i = LLVMGetPreviousInstruction(addr); i; i = LLVMGetPreviousInstruction(i)) {
        if (LLVMIsAStoreInst(i) && LLVMGetOperand(i, 1) == slot)
            return is_table_load(LLVMGetOperand(i, 0), tables) &&
                   LLVMGetInstructionParent(xf_strip_bitcasts(LLVMGetOperand(i, 0))) == LLVMGetInstructionParent(br);
        if (LLVMIsACallInst(i) && !xf_is_call_to_prefix(i, "llvm."))
            return 0;   /* a demoted slot does not escape, but stay on the safe side */
    }
    return 0;
}

/* A block made of `a = load slot; [casts]; indirectbr a` (debug intrinsics aside). */
static int is_dispatch_block(LLVMBasicBlockRef block)
{
    LLVMValueRef term = LLVMGetBasicBlockTerminator(block);
    if (!term || LLVMGetInstructionOpcode(term) != LLVMIndirectBr)
        return 0;
    for (LLVMValueRef i = LLVMGetFirstInstruction(block); i != term; i = LLVMGetNextInstruction(i)) {
        if (xf_is_call_to_prefix(i, "llvm.dbg."))
            continue;
        if (LLVMIsALoadInst(i) ? !LLVMIsAAllocaInst(LLVMGetOperand(i, 0)) : !LLVMIsABitCastInst(i))
            return 0;
    }
    return 1;
}

void xf_split_computed_gotos(struct xfunc *f)
{
    LLVMBuilderRef b = f->x->builder;
    size_t n = f->blocks.n;
    for (size_t d = 0; d < n; d++) {
        LLVMBasicBlockRef dispatch = LLVMValueAsBasicBlock(f->blocks.v[d]);
        if (!is_dispatch_block(dispatch))
            continue;
        LLVMValueRef term = LLVMGetBasicBlockTerminator(dispatch);
        unsigned ndest = LLVMGetNumSuccessors(term);
        for (size_t p = 0; p < n; p++) {
            LLVMBasicBlockRef pred = LLVMValueAsBasicBlock(f->blocks.v[p]);
            LLVMValueRef br = LLVMGetBasicBlockTerminator(pred);
            if (pred == dispatch || !br || LLVMGetInstructionOpcode(br) != LLVMBr || LLVMIsConditional(br) ||
                LLVMGetSuccessor(br, 0) != dispatch)
                continue;
            /* pred: the dispatch block's instructions in place of its branch there */
            LLVMPositionBuilderBefore(b, br);
            struct ptrmap copies;
            ptrmap_init(&copies);
            for (LLVMValueRef i = LLVMGetFirstInstruction(dispatch); i != term; i = LLVMGetNextInstruction(i)) {
                if (xf_is_call_to_prefix(i, "llvm.dbg."))
                    continue;
                LLVMValueRef c = LLVMInstructionClone(i);
                xf_insert_keeping_loc(b, c, "");
                for (int k = 0; k < LLVMGetNumOperands(c); k++) {
                    LLVMValueRef mapped = ptrmap_get(&copies, LLVMGetOperand(c, (unsigned)k));
                    if (mapped)
                        LLVMSetOperand(c, (unsigned)k, mapped);
                }
                ptrmap_put(&copies, i, c);
            }
            LLVMValueRef addr = LLVMGetOperand(term, 0), mapped = ptrmap_get(&copies, addr);
            LLVMValueRef jump = LLVMBuildIndirectBr(b, mapped ? mapped : addr, ndest);
            for (unsigned k = 0; k < ndest; k++)
                LLVMAddDestination(jump, LLVMGetSuccessor(term, k));
            LLVMInstructionSetDebugLoc(jump, LLVMInstructionGetDebugLoc(term));
            LLVMInstructionEraseFromParent(br);
            ptrmap_free(&copies);
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
    /* Every computed goto that can run jumps within its block (xf_split_computed_gotos). */
    for (size_t i = 0; tables.n && i < f->blocks.n; i++) {
        LLVMBasicBlockRef block = LLVMValueAsBasicBlock(f->blocks.v[i]);
        LLVMValueRef term = LLVMGetBasicBlockTerminator(block);
        if (term && LLVMGetInstructionOpcode(term) == LLVMIndirectBr && has_predecessor(f, block) &&
            !jumps_within_block(term, &tables))
            tables.n = 0;
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

