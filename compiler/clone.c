/* Back-edges of the original body, and the instrumented copy of it. */
#include "xform.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Moves every instruction of block into a new block after it and leaves `br new` in block.
 * Safe here because demotion left no PHIs and no values used across blocks. */
static LLVMBasicBlockRef split_top(struct xfunc *f, LLVMBasicBlockRef block)
{
    LLVMBuilderRef b = f->x->builder;
    char name[128];
    snprintf(name, sizeof name, "%s.body", LLVMGetBasicBlockName(block));
    LLVMBasicBlockRef body = LLVMInsertBasicBlockInContext(f->x->ctx, LLVMGetNextBasicBlock(block), name);
    if (!body)  /* block was the last one */
        body = LLVMAppendBasicBlockInContext(f->x->ctx, f->fn, name);
    LLVMPositionBuilderAtEnd(b, body);
    LLVMValueRef inst;
    while ((inst = LLVMGetFirstInstruction(block))) {
        size_t len = 0;
        char *inst_name = strdup(LLVMGetValueName2(inst, &len));
        LLVMInstructionRemoveFromParent(inst);
        xf_insert_keeping_loc(b, inst, inst_name);   /* inserting clears the name */
        free(inst_name);
    }
    LLVMPositionBuilderAtEnd(b, block);
    LLVMValueRef br = LLVMBuildBr(b, body);
    for (inst = LLVMGetFirstInstruction(body); inst; inst = LLVMGetNextInstruction(inst))
        if (LLVMInstructionGetDebugLoc(inst)) {   /* the check's site gets the body's position */
            LLVMInstructionSetDebugLoc(br, LLVMInstructionGetDebugLoc(inst));
            break;
        }
    return body;
}

/* An indirectbr cannot be redirected to a check block (its destinations are the blocks that
 * blockaddress constants name), so a back-edge from one is checked at the top of its target
 * instead: the target is split, and the edge into its body gets the check. Other entries to
 * the target pass the check too, which is harmless. */
static void check_indirect_targets(struct xfunc *f)
{
    struct ptrmap split;
    ptrmap_init(&split);
    for (size_t i = 0; i < f->backedge_from.n; i++) {
        /* A source split earlier in this loop keeps its terminator in its body. */
        LLVMValueRef holder = ptrmap_get(&split, f->backedge_from.v[i]);
        if (!holder)
            holder = f->backedge_from.v[i];
        LLVMValueRef term = LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(holder));
        if (LLVMGetInstructionOpcode(term) != LLVMIndirectBr)
            continue;
        LLVMValueRef target = f->backedge_to.v[i];
        LLVMValueRef body = ptrmap_get(&split, target);
        if (!body) {
            body = LLVMBasicBlockAsValue(split_top(f, LLVMValueAsBasicBlock(target)));
            ptrmap_put(&split, target, body);
            valvec_push(&f->blocks, body);
            /* Recorded as an ordinary edge to check; duplicates are skipped below. */
            f->backedge_from.v[i] = target;
            f->backedge_to.v[i] = body;
        } else {
            f->backedge_from.v[i] = NULL;   /* this target is already checked */
        }
    }
    /* Back-edges leaving a split block now leave from its body, which holds the terminator. */
    for (size_t i = 0; i < f->backedge_from.n; i++) {
        LLVMValueRef body = f->backedge_from.v[i] ? ptrmap_get(&split, f->backedge_from.v[i]) : NULL;
        if (body && f->backedge_to.v[i] != body)
            f->backedge_from.v[i] = body;
    }
    size_t kept = 0;
    for (size_t i = 0; i < f->backedge_from.n; i++)
        if (f->backedge_from.v[i]) {
            f->backedge_from.v[kept] = f->backedge_from.v[i];
            f->backedge_to.v[kept++] = f->backedge_to.v[i];
        }
    f->backedge_from.n = f->backedge_to.n = kept;
    ptrmap_free(&split);
}

/* Back-edges by depth-first search from blocks[0]: an edge to a block that is still on the DFS
 * stack. Every cycle contains one, irreducible ones included, so checking them makes every loop
 * iteration pass a dispatch check. Each (from, to) pair is recorded once even if several
 * successor slots of a switch lead there. `index` maps each block (as a value) to its
 * position + 1. */
void xf_back_edges(LLVMBasicBlockRef *blocks, size_t n, const struct ptrmap *index, struct valvec *from,
                   struct valvec *to)
{
    enum { UNSEEN, ON_STACK, DONE };
    unsigned char *state = xf_calloc(n, 1);
    size_t *stack = xf_calloc(n, sizeof *stack);
    unsigned *next_succ = xf_calloc(n, sizeof *next_succ);
    size_t depth = 0;
    stack[depth++] = 0;
    state[0] = ON_STACK;
    while (depth) {
        size_t u = stack[depth - 1];
        LLVMValueRef term = LLVMGetBasicBlockTerminator(blocks[u]);
        unsigned nsucc = term ? LLVMGetNumSuccessors(term) : 0;
        if (next_succ[u] == nsucc) {
            state[u] = DONE;
            depth--;
            continue;
        }
        LLVMValueRef target = LLVMBasicBlockAsValue(LLVMGetSuccessor(term, next_succ[u]++));
        size_t v = (size_t)ptrmap_get(index, target) - 1;
        if (state[v] == UNSEEN) {
            state[v] = ON_STACK;
            stack[depth++] = v;
        } else if (state[v] == ON_STACK) {
            LLVMValueRef source = LLVMBasicBlockAsValue(blocks[u]);
            int seen = 0;
            for (size_t i = 0; i < from->n && !seen; i++)
                seen = from->v[i] == source && to->v[i] == target;
            if (!seen) {
                valvec_push(from, source);
                valvec_push(to, target);
            }
        }
    }
    free(state);
    free(stack);
    free(next_succ);
}

/* Blocks reachable from `start` along `edges` (per block: block indexes + 1, as pointers),
 * never through `barrier` (SIZE_MAX: none), which is marked. `start` is marked when
 * `with_start` or when a path leads back to it; when it is the barrier, nothing else is.
 * With predecessor edges, from a latch, with its header as the barrier and with_start: the
 * body of that loop. */
unsigned char *xf_reach(const struct valvec *edges, size_t nblocks, size_t start, int with_start, size_t barrier)
{
    unsigned char *seen = xf_calloc(nblocks, 1);
    size_t *work = xf_calloc(nblocks + 1, sizeof *work);   /* start unmarked, then each block once */
    size_t n = 0;
    if (barrier != SIZE_MAX)
        seen[barrier] = 1;
    if (with_start)
        seen[start] = 1;
    if (start != barrier)
        work[n++] = start;
    while (n) {
        size_t b = work[--n];
        for (size_t k = 0; k < edges[b].n; k++) {
            size_t next = (size_t)edges[b].v[k] - 1;
            if (!seen[next]) {
                seen[next] = 1;
                work[n++] = next;
            }
        }
    }
    free(work);
    return seen;
}

/* The back-edges of the body, but those of short loops (shortloops.c), which get no check. */
void xf_find_backedges(struct xfunc *f)
{
    size_t n = f->blocks.n;
    struct ptrmap index;
    ptrmap_init(&index);
    LLVMBasicBlockRef *blocks = xf_calloc(n, sizeof *blocks);
    for (size_t i = 0; i < n; i++) {
        blocks[i] = LLVMValueAsBasicBlock(f->blocks.v[i]);
        ptrmap_put(&index, f->blocks.v[i], (void *)(i + 1));
    }
    xf_back_edges(blocks, n, &index, &f->backedge_from, &f->backedge_to);
    size_t kept = 0;
    for (size_t i = 0; i < f->backedge_from.n; i++)
        if (!ptrmap_get(&f->short_headers, f->backedge_to.v[i])) {
            f->backedge_from.v[kept] = f->backedge_from.v[i];
            f->backedge_to.v[kept++] = f->backedge_to.v[i];
        }
    f->x->stats->short_loops += f->backedge_from.n - kept;
    f->backedge_from.n = f->backedge_to.n = kept;
    free(blocks);
    ptrmap_free(&index);
    check_indirect_targets(f);
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
 * else (arguments, constants, prologue allocas) is shared, but jump tables (labels.c). An
 * indirectbr keeps the original destinations unless labels.c gave the clone jump tables of its
 * own: blockaddress constants name the checking copy's blocks, so a computed goto taken during
 * a burst lands in the checking copy (whose next check resumes the burst). */
void xf_remap_operands(struct xfunc *f, LLVMValueRef clone)
{
    int keep_blocks = LLVMGetInstructionOpcode(clone) == LLVMIndirectBr && !f->labels_mapped;
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

/* One instruction cloned at the builder's position, named after the original with ".i", with
 * the original's debug location (moved into the outlined function's scope when there is one). */
LLVMValueRef xf_clone_instruction(struct xfunc *f, LLVMValueRef inst)
{
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
    LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(inst);
    LLVMInstructionSetDebugLoc(clone, f->instr_fn && loc ? xf_outlined_loc(f, loc) : loc);
    if (f->instr_fn)   /* loop hints name locations of the original scope (a loop unrolled away) */
        LLVMSetMetadata(clone, LLVMGetMDKindIDInContext(f->x->ctx, "llvm.loop", 9), NULL);
    xf_insert_keeping_loc(f->x->builder, clone, name);
    free(name);
    if (LLVMIsACallInst(clone))
        valvec_push(&f->x->instr_calls, clone);
    return clone;
}

/* Clones every original body block, appended to `target`, recording original -> clone in
 * f->clones (already holding whatever else must be renamed, e.g. arguments), then redirects
 * the clones' operands. */
void xf_clone_blocks_into(struct xfunc *f, LLVMValueRef target)
{
    LLVMBuilderRef b = f->x->builder;
    size_t n = f->blocks.n;
    for (size_t i = 0; i < n; i++) {
        LLVMBasicBlockRef original = LLVMValueAsBasicBlock(f->blocks.v[i]);
        char name[128];
        snprintf(name, sizeof name, "%s.instr", LLVMGetBasicBlockName(original));
        LLVMBasicBlockRef copy = LLVMAppendBasicBlockInContext(f->x->ctx, target, name);
        ptrmap_put(&f->clones, f->blocks.v[i], LLVMBasicBlockAsValue(copy));
    }
    f->labels_mapped = xf_map_labels(f);
    size_t first_clone = f->cloned.n;
    for (size_t i = 0; i < n; i++) {
        LLVMBasicBlockRef original = LLVMValueAsBasicBlock(f->blocks.v[i]);
        LLVMPositionBuilderAtEnd(b, xf_clone_block(f, original));
        for (LLVMValueRef inst = LLVMGetFirstInstruction(original); inst; inst = LLVMGetNextInstruction(inst)) {
            if (is_debug_intrinsic(inst))
                continue;
            LLVMValueRef clone = xf_clone_instruction(f, inst);
            ptrmap_put(&f->clones, inst, clone);
            valvec_push(&f->cloned, clone);
        }
    }
    for (size_t i = first_clone; i < f->cloned.n; i++)
        xf_remap_operands(f, f->cloned.v[i]);
}

void xf_clone_body(struct xfunc *f)
{
    xf_clone_blocks_into(f, f->fn);
}

/* The outlined instrumented copy (xf_outline_body): a new internal function with fn's type,
 * attributes and a debug scope of its own, whose entry block holds clones of the prologue's
 * stack slots and jumps to the clone of the body's entry. */
void xf_outline_body(struct xfunc *f)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    f->instr_fn = xf_new_outlined_function(f);
    unsigned nparams = LLVMCountParams(f->fn);
    for (unsigned i = 0; i < nparams; i++)
        ptrmap_put(&f->clones, LLVMGetParam(f->fn, i), LLVMGetParam(f->instr_fn, i));
    f->instr_prologue = LLVMAppendBasicBlockInContext(x->ctx, f->instr_fn, "vigil.prologue.instr");
    LLVMSetCurrentDebugLocation2(b, NULL);   /* locations of this function's scope stay out */
    LLVMPositionBuilderAtEnd(b, f->instr_prologue);
    for (LLVMValueRef inst = LLVMGetFirstInstruction(f->prologue); inst; inst = LLVMGetNextInstruction(inst)) {
        if (!LLVMIsAAllocaInst(inst))
            continue;
        LLVMValueRef clone = xf_clone_instruction(f, inst);
        ptrmap_put(&f->clones, inst, clone);
        xf_remap_operands(f, clone);
    }
    xf_clone_blocks_into(f, f->instr_fn);
    LLVMPositionBuilderAtEnd(b, f->instr_prologue);
    LLVMBuildBr(b, xf_clone_block(f, LLVMValueAsBasicBlock(f->blocks.v[0])));
}
