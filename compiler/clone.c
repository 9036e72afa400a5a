/* Back-edges of the original body, and the instrumented copy of it. */
#include "xform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *checked_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fputs("vigil-cc: out of memory\n", stderr);
        abort();
    }
    return p;
}

/* Back-edges by depth-first search from the entry: an edge to a block that is still on the DFS
 * stack. Every cycle contains one, irreducible ones included, so every loop iteration passes a
 * dispatch check. Each (from, to) pair is recorded once even if several successor slots of a
 * switch lead there. */
void xf_find_backedges(struct xfunc *f)
{
    size_t n = f->blocks.n;
    struct ptrmap index;
    ptrmap_init(&index);
    for (size_t i = 0; i < n; i++)
        ptrmap_put(&index, f->blocks.v[i], (void *)(i + 1));
    enum { UNSEEN, ON_STACK, DONE };
    unsigned char *state = checked_calloc(n, 1);
    size_t *stack = checked_calloc(n, sizeof *stack);
    unsigned *next_succ = checked_calloc(n, sizeof *next_succ);
    size_t depth = 0;
    stack[depth++] = 0;
    state[0] = ON_STACK;
    while (depth) {
        size_t u = stack[depth - 1];
        LLVMValueRef term = LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(f->blocks.v[u]));
        unsigned nsucc = LLVMGetNumSuccessors(term);
        if (next_succ[u] == nsucc) {
            state[u] = DONE;
            depth--;
            continue;
        }
        LLVMValueRef to = LLVMBasicBlockAsValue(LLVMGetSuccessor(term, next_succ[u]++));
        size_t v = (size_t)ptrmap_get(&index, to) - 1;
        if (state[v] == UNSEEN) {
            state[v] = ON_STACK;
            stack[depth++] = v;
        } else if (state[v] == ON_STACK) {
            int seen = 0;
            for (size_t i = 0; i < f->backedge_from.n && !seen; i++)
                seen = f->backedge_from.v[i] == f->blocks.v[u] && f->backedge_to.v[i] == to;
            if (!seen) {
                valvec_push(&f->backedge_from, f->blocks.v[u]);
                valvec_push(&f->backedge_to, to);
            }
        }
    }
    free(state);
    free(stack);
    free(next_succ);
    ptrmap_free(&index);
}

LLVMBasicBlockRef xf_clone_block(struct xfunc *f, LLVMBasicBlockRef original)
{
    return LLVMValueAsBasicBlock(ptrmap_get(&f->clones, LLVMBasicBlockAsValue(original)));
}

static int is_debug_intrinsic(LLVMValueRef inst)
{
    return xf_is_call_to_prefix(inst, "llvm.dbg.");
}

/* Operands that name original instructions or blocks are redirected to their clones; anything
 * else (arguments, constants, prologue allocas) is shared. An indirectbr keeps the original
 * destinations: blockaddress constants name the checking copy's blocks, so a computed goto
 * taken during a burst lands in the checking copy (whose next check resumes the burst). */
static void remap_operands(struct xfunc *f, LLVMValueRef clone)
{
    int keep_blocks = LLVMGetInstructionOpcode(clone) == LLVMIndirectBr;
    int nops = LLVMGetNumOperands(clone);
    for (int k = 0; k < nops; k++) {
        LLVMValueRef op = LLVMGetOperand(clone, (unsigned)k);
        if (!op)
            continue;
        if (LLVMValueIsBasicBlock(op) && keep_blocks)
            continue;
        LLVMValueRef mapped = ptrmap_get(&f->clones, op);
        if (mapped)
            LLVMSetOperand(clone, (unsigned)k, mapped);
    }
}

void xf_clone_body(struct xfunc *f)
{
    LLVMBuilderRef b = f->x->builder;
    size_t n = f->blocks.n;
    for (size_t i = 0; i < n; i++) {
        LLVMBasicBlockRef original = LLVMValueAsBasicBlock(f->blocks.v[i]);
        char name[128];
        snprintf(name, sizeof name, "%s.instr", LLVMGetBasicBlockName(original));
        LLVMBasicBlockRef copy = LLVMAppendBasicBlockInContext(f->x->ctx, f->fn, name);
        ptrmap_put(&f->clones, f->blocks.v[i], LLVMBasicBlockAsValue(copy));
    }
    size_t first_clone = f->cloned.n;
    for (size_t i = 0; i < n; i++) {
        LLVMBasicBlockRef original = LLVMValueAsBasicBlock(f->blocks.v[i]);
        LLVMPositionBuilderAtEnd(b, xf_clone_block(f, original));
        for (LLVMValueRef inst = LLVMGetFirstInstruction(original); inst; inst = LLVMGetNextInstruction(inst)) {
            if (is_debug_intrinsic(inst))
                continue;
            LLVMValueRef clone = LLVMInstructionClone(inst);
            size_t len = 0;
            const char *orig_name = LLVMGetValueName2(inst, &len);
            char *name = malloc(len + 3);
            if (!name) {
                fputs("vigil-cc: out of memory\n", stderr);
                abort();
            }
            if (len)
                snprintf(name, len + 3, "%s.i", orig_name);
            else
                name[0] = '\0';
            LLVMInsertIntoBuilderWithName(b, clone, name);
            free(name);
            ptrmap_put(&f->clones, inst, clone);
            valvec_push(&f->cloned, clone);
        }
    }
    for (size_t i = first_clone; i < f->cloned.n; i++)
        remap_operands(f, f->cloned.v[i]);
}
