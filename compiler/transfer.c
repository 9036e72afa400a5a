/* Functions with loops: the instrumented copy as a function of its own, entered and left at
 * dispatch checks (VIGIL_CC_OUTLINE_LOOPS, docs/performance.md).
 *
 * Two copies in one function cost the checking copy registers: the register allocator sees
 * the instrumented half too, and the hot loop spills. Here the checking copy f keeps its own
 * body and its checks. When the runtime starts a burst at the entry check or at a back-edge
 * check, f saves its state in a frame and calls `<f>.vigil.instr(args..., frame)`, which
 * resumes at the same point of the instrumented copy: the function's entry, or the header the
 * back-edge leads to. When the burst ends at one of that copy's back-edges, the copy saves the
 * state, names the header and returns; f reloads the state and goes on at that header in the
 * checking copy. A return of the copy is f's return.
 *
 * The copy returns to f only at back-edges of outermost loops. Were f to go on at the header
 * of an inner loop, it would enter the outer loop from outside its header: the outer loop
 * would no longer be a loop for the back end, which then spills and rematerializes in it as
 * in straight-line code. When a burst ends at an inner loop's back-edge, the copy runs on
 * ("coasts", probes silent: each tests the burst) to the next outermost back-edge or return.
 *
 * The state: after demotion (demote.c) every value used across blocks lives in a stack slot
 * of the prologue. A slot used only by loads and stores travels by value in the frame, and
 * only where it is live into the header (saving every slot at every check would keep every
 * value alive around every loop: spills in the hot path, and PHIs at every header that made
 * the back end take minutes); any other (the program may hold its address) stays in f's
 * frame, and the copy reaches it through a pointer in the frame. Lifetime markers of those
 * are dropped: f must not reuse their memory while the copy runs.
 *
 * Not for: varargs (the copy cannot forward them), indirectbr (blockaddress names f's blocks),
 * setjmp and friends (a longjmp into f would skip the copy's state), musttail calls (the copy's
 * type differs), allocas outside the prologue and stacksave (memory the copy allocates dies
 * with it), inalloca/preallocated parameters. Those functions keep both copies in one. */
#include "xform.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct xt_transfer {
    struct valvec by_value;     /* prologue slots carried by value, in frame order */
    struct valvec shared;       /* prologue allocas reached through a pointer, in frame order */
    LLVMTypeRef frame_type;     /* {i32 resume, shared pointers..., by-value contents...} */
    LLVMValueRef frame;         /* f's frame (an alloca in the prologue) */
    LLVMValueRef frame_param;   /* the copy's last parameter */
    LLVMValueRef resume_switch; /* in the copy: resume point -> clone of a loop header */
    LLVMBasicBlockRef leave;    /* in the copy: return to f (the state is saved) */
    struct valvec *live;        /* per back-edge: by-value slots live into its header */
    unsigned char *outermost;   /* per back-edge: its header is in no other loop */
};

/* Resume points: 0 is the function's entry, i + 1 the target of back-edge i. */
static LLVMValueRef resume_point(struct vigil_xform *x, size_t backedge)
{
    return LLVMConstInt(x->i32, backedge + 1, 0);
}

static int has_param_attribute(LLVMValueRef fn, unsigned param, const char *name)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    return kind && LLVMGetEnumAttributeAtIndex(fn, param + 1, kind) != NULL;
}

static const char *reason_not_to_transfer(struct xfunc *f)
{
    if (!f->x->settings->outline || !f->x->settings->outline_loops)
        return "disabled";
    if (f->backedge_from.n == 0)
        return "no loops";
    if (xf_instruction_count(f->fn) > f->x->settings->dual_max)
        return "giant";   /* its state's PHIs at every header make the back end take minutes */
    if (LLVMIsFunctionVarArg(LLVMGlobalGetValueType(f->fn)))
        return "varargs";
    unsigned nparams = LLVMCountParams(f->fn);
    for (unsigned i = 0; i < nparams; i++)
        if (has_param_attribute(f->fn, i, "inalloca") || has_param_attribute(f->fn, i, "preallocated") ||
            has_param_attribute(f->fn, i, "swifterror"))
            return "parameter attribute";
    for (size_t i = 0; i < f->blocks.n; i++) {
        LLVMBasicBlockRef block = LLVMValueAsBasicBlock(f->blocks.v[i]);
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst; inst = LLVMGetNextInstruction(inst)) {
            if (LLVMGetInstructionOpcode(inst) == LLVMIndirectBr)
                return "indirectbr";
            if (LLVMIsAAllocaInst(inst))
                return "alloca outside the prologue";
            if (!LLVMIsACallInst(inst))
                continue;
            if (xf_is_call_to_prefix(inst, "llvm.stacksave") || xf_is_call_to_prefix(inst, "llvm.stackrestore"))
                return "stacksave";
            LLVMValueRef callee = LLVMGetCalledValue(inst);
            if (LLVMIsAFunction(callee) && xf_has_fn_attribute(callee, "returns_twice"))
                return "returns_twice call";
            unsigned twice = LLVMGetEnumAttributeKindForName("returns_twice", 13);
            if (LLVMGetCallSiteEnumAttribute(inst, LLVMAttributeFunctionIndex, twice))
                return "returns_twice call";
            if (vigil_is_musttail(inst))
                return "musttail call";
        }
    }
    return NULL;
}

int xt_can_transfer(struct xfunc *f)
{
    return reason_not_to_transfer(f) == NULL;
}

/* Lifetime markers of a shared alloca, and casts that only feed them, are erased. */
static void drop_lifetime_markers(LLVMValueRef alloca)
{
    struct valvec dead = {0};
    for (LLVMUseRef use = LLVMGetFirstUse(alloca); use; use = LLVMGetNextUse(use)) {
        LLVMValueRef user = LLVMGetUser(use);
        if (xf_is_lifetime_marker(user)) {
            valvec_push(&dead, user);
        } else if (LLVMIsABitCastInst(user)) {
            int only_markers = LLVMGetFirstUse(user) != NULL;
            for (LLVMUseRef u = LLVMGetFirstUse(user); u && only_markers; u = LLVMGetNextUse(u))
                only_markers = xf_is_lifetime_marker(LLVMGetUser(u));
            if (only_markers) {
                for (LLVMUseRef u = LLVMGetFirstUse(user); u; u = LLVMGetNextUse(u))
                    valvec_push(&dead, LLVMGetUser(u));
            }
        }
    }
    for (size_t i = 0; i < dead.n; i++)
        LLVMInstructionEraseFromParent(dead.v[i]);
    valvec_free(&dead);
}

static int is_single_slot(LLVMValueRef alloca)
{
    LLVMValueRef count = LLVMGetOperand(alloca, 0);
    return LLVMIsAConstantInt(count) && LLVMConstIntGetZExtValue(count) == 1;
}

static LLVMValueRef frame_field(struct vigil_xform *x, struct xt_transfer *t, LLVMValueRef frame, unsigned index)
{
    return LLVMBuildStructGEP2(x->builder, t->frame_type, frame, index, "");
}

static unsigned by_value_field(struct xt_transfer *t, size_t i)
{
    return 1 + (unsigned)t->shared.n + (unsigned)i;
}

/* Stores of the by-value slots in `live` (f's, or their clones through map) into frame. */
static void save_state(struct vigil_xform *x, struct xt_transfer *t, LLVMValueRef frame, struct ptrmap *map,
                       const struct valvec *live)
{
    for (size_t i = 0; i < live->n; i++) {
        size_t index = (size_t)live->v[i];
        LLVMValueRef slot = t->by_value.v[index];
        if (map)
            slot = ptrmap_get(map, slot);
        LLVMValueRef value = LLVMBuildLoad2(x->builder, LLVMGetAllocatedType(slot), slot, "");
        LLVMBuildStore(x->builder, value, frame_field(x, t, frame, by_value_field(t, index)));
    }
}

static void load_state(struct vigil_xform *x, struct xt_transfer *t, LLVMValueRef frame, struct ptrmap *map,
                       const struct valvec *live)
{
    for (size_t i = 0; i < live->n; i++) {
        size_t index = (size_t)live->v[i];
        LLVMValueRef slot = t->by_value.v[index];
        if (map)
            slot = ptrmap_get(map, slot);
        LLVMTypeRef type = LLVMGetAllocatedType(slot);
        LLVMValueRef field = frame_field(x, t, frame, by_value_field(t, index));
        LLVMBuildStore(x->builder, LLVMBuildLoad2(x->builder, type, field, ""), slot);
    }
}

/* Which by-value slots are live into each back-edge's header in the original body: a load
 * reachable from the header's top without a store to the slot in between (backward dataflow
 * over the blocks; slots are only loaded and stored). t->live[i] lists indexes into by_value,
 * stored as pointer-sized integers. */
static void compute_liveness(struct xfunc *f, struct xt_transfer *t)
{
    size_t nblocks = f->blocks.n, nslots = t->by_value.n, words = (nslots + 63) / 64;
    t->live = calloc(f->backedge_from.n ? f->backedge_from.n : 1, sizeof *t->live);
    uint64_t *gen = calloc(nblocks * words + 1, sizeof *gen);
    uint64_t *kill = calloc(nblocks * words + 1, sizeof *kill);
    uint64_t *in = calloc(nblocks * words + 1, sizeof *in);
    uint64_t *out = calloc(words + 1, sizeof *out);
    if (!t->live || !gen || !kill || !in || !out) {
        fputs("vigil-cc: out of memory\n", stderr);
        abort();
    }
    struct ptrmap slot_index, block_index;
    ptrmap_init(&slot_index);
    ptrmap_init(&block_index);
    for (size_t i = 0; i < nslots; i++)
        ptrmap_put(&slot_index, t->by_value.v[i], (void *)(i + 1));
    for (size_t b = 0; b < nblocks; b++) {
        ptrmap_put(&block_index, f->blocks.v[b], (void *)(b + 1));
        uint64_t *g = gen + b * words, *k = kill + b * words;
        LLVMBasicBlockRef block = LLVMValueAsBasicBlock(f->blocks.v[b]);
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst; inst = LLVMGetNextInstruction(inst)) {
            int is_load = LLVMIsALoadInst(inst) != NULL;
            if (!is_load && !LLVMIsAStoreInst(inst))
                continue;
            size_t slot = (size_t)ptrmap_get(&slot_index, LLVMGetOperand(inst, is_load ? 0 : 1));
            if (!slot--)
                continue;
            uint64_t bit = 1ull << (slot % 64);
            if (is_load && !(k[slot / 64] & bit))
                g[slot / 64] |= bit;
            else if (!is_load)
                k[slot / 64] |= bit;
        }
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t b = nblocks; b-- > 0;) {
            memset(out, 0, words * sizeof *out);
            LLVMValueRef term = LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(f->blocks.v[b]));
            unsigned nsucc = term ? LLVMGetNumSuccessors(term) : 0;
            for (unsigned k = 0; k < nsucc; k++) {
                size_t succ = (size_t)ptrmap_get(&block_index, LLVMBasicBlockAsValue(LLVMGetSuccessor(term, k)));
                for (size_t w = 0; succ && w < words; w++)
                    out[w] |= in[(succ - 1) * words + w];
            }
            for (size_t w = 0; w < words; w++) {
                uint64_t v = gen[b * words + w] | (out[w] & ~kill[b * words + w]);
                if (v != in[b * words + w]) {
                    in[b * words + w] = v;
                    changed = 1;
                }
            }
        }
    }
    for (size_t i = 0; i < f->backedge_from.n; i++) {
        size_t header = (size_t)ptrmap_get(&block_index, f->backedge_to.v[i]) - 1;
        for (size_t slot = 0; slot < nslots; slot++)
            if (in[header * words + slot / 64] & (1ull << (slot % 64)))
                valvec_push(&t->live[i], (LLVMValueRef)(slot));
    }
    ptrmap_free(&slot_index);
    ptrmap_free(&block_index);
    free(gen);
    free(kill);
    free(in);
    free(out);
}

/* Whether each back-edge's header lies in no other back-edge's loop (the blocks that reach
 * its source without passing its header; a loop whose body holds the function's entry is
 * irreducible and contains nothing here). Returns whether some header is not outermost. */
static int find_outermost(struct xfunc *f, struct xt_transfer *t)
{
    size_t nblocks = f->blocks.n, nedges = f->backedge_from.n;
    t->outermost = malloc(nedges ? nedges : 1);
    struct valvec *preds = calloc(nblocks ? nblocks : 1, sizeof *preds);
    unsigned char *in_body = calloc(nblocks ? nblocks : 1, 1);
    size_t *work = calloc(nblocks + 1, sizeof *work);
    if (!t->outermost || !preds || !in_body || !work) {
        fputs("vigil-cc: out of memory\n", stderr);
        abort();
    }
    memset(t->outermost, 1, nedges ? nedges : 1);
    struct ptrmap index;
    ptrmap_init(&index);
    for (size_t b = 0; b < nblocks; b++)
        ptrmap_put(&index, f->blocks.v[b], (void *)(b + 1));
    for (size_t b = 0; b < nblocks; b++) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(f->blocks.v[b]));
        unsigned nsucc = term ? LLVMGetNumSuccessors(term) : 0;
        for (unsigned k = 0; k < nsucc; k++) {
            size_t to = (size_t)ptrmap_get(&index, LLVMBasicBlockAsValue(LLVMGetSuccessor(term, k)));
            if (to)
                valvec_push(&preds[to - 1], (LLVMValueRef)(b + 1));
        }
    }
    int nested = 0;
    for (size_t j = 0; j < nedges; j++) {
        memset(in_body, 0, nblocks);
        size_t header = (size_t)ptrmap_get(&index, f->backedge_to.v[j]) - 1;
        size_t n = 0;
        in_body[header] = 1;
        work[n++] = (size_t)ptrmap_get(&index, f->backedge_from.v[j]) - 1;
        while (n) {
            size_t b = work[--n];
            if (in_body[b])
                continue;
            in_body[b] = 1;
            for (size_t k = 0; k < preds[b].n; k++)
                if (!in_body[(size_t)preds[b].v[k] - 1])
                    work[n++] = (size_t)preds[b].v[k] - 1;
        }
        if (in_body[0] && header != 0)
            continue;   /* irreducible: entered other than through its header */
        for (size_t i = 0; i < nedges; i++) {
            size_t h = (size_t)ptrmap_get(&index, f->backedge_to.v[i]) - 1;
            if (h != header && in_body[h] && t->outermost[i]) {
                t->outermost[i] = 0;
                nested = 1;
            }
        }
    }
    for (size_t b = 0; b < nblocks; b++)
        valvec_free(&preds[b]);
    free(preds);
    free(in_body);
    free(work);
    ptrmap_free(&index);
    return nested;
}

/* The copy: `<f>.vigil.instr`, f's parameters and the frame. Its entry block holds its own
 * by-value slots and the pointers to the shared ones, reads the resume point (and resets it,
 * so that a return leaves 0) and goes to the body's entry or through a reload of the state
 * to the header named; `leave` saves the state and returns. */
void xt_outline_body(struct xfunc *f)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    struct xt_transfer *t = calloc(1, sizeof *t);
    if (!t) {
        fputs("vigil-cc: out of memory\n", stderr);
        abort();
    }
    f->transfer = t;
    for (LLVMValueRef inst = LLVMGetFirstInstruction(f->prologue); inst; inst = LLVMGetNextInstruction(inst)) {
        if (!LLVMIsAAllocaInst(inst))
            continue;
        if (xf_is_private_slot(inst) && is_single_slot(inst)) {
            valvec_push(&t->by_value, inst);
        } else {
            drop_lifetime_markers(inst);
            valvec_push(&t->shared, inst);
        }
    }
    size_t nfields = 1 + t->shared.n + t->by_value.n;
    LLVMTypeRef *fields = calloc(nfields, sizeof *fields);
    unsigned nparams = LLVMCountParams(f->fn);
    LLVMTypeRef *params = calloc(nparams + 1, sizeof *params);
    if (!fields || !params) {
        fputs("vigil-cc: out of memory\n", stderr);
        abort();
    }
    fields[0] = x->i32;
    for (size_t i = 0; i < t->shared.n; i++)
        fields[1 + i] = LLVMTypeOf(t->shared.v[i]);
    for (size_t i = 0; i < t->by_value.n; i++)
        fields[by_value_field(t, i)] = LLVMGetAllocatedType(t->by_value.v[i]);
    t->frame_type = LLVMStructTypeInContext(x->ctx, fields, (unsigned)nfields, 0);
    free(fields);
    compute_liveness(f, t);
    f->coasts = find_outermost(f, t);

    LLVMTypeRef fn_type = LLVMGlobalGetValueType(f->fn);
    LLVMGetParamTypes(fn_type, params);
    params[nparams] = vigil_pointer_to(t->frame_type);
    LLVMTypeRef instr_type = LLVMFunctionType(LLVMGetReturnType(fn_type), params, nparams + 1, 0);
    free(params);
    f->instr_fn = xf_new_companion(f, VIGIL_INSTR_SUFFIX, instr_type);
    f->instr_subprogram = xf_outlined_subprogram(f);
    if (f->instr_subprogram)
        LLVMSetSubprogram(f->instr_fn, f->instr_subprogram);
    t->frame_param = LLVMGetParam(f->instr_fn, nparams);
    for (unsigned i = 0; i < nparams; i++)
        ptrmap_put(&f->clones, LLVMGetParam(f->fn, i), LLVMGetParam(f->instr_fn, i));

    f->instr_prologue = LLVMAppendBasicBlockInContext(x->ctx, f->instr_fn, "vigil.prologue.instr");
    LLVMSetCurrentDebugLocation2(b, NULL);
    LLVMPositionBuilderAtEnd(b, f->instr_prologue);
    for (size_t i = 0; i < t->by_value.n; i++) {
        LLVMValueRef clone = xf_clone_instruction(f, t->by_value.v[i]);
        ptrmap_put(&f->clones, t->by_value.v[i], clone);
    }
    for (size_t i = 0; i < t->shared.n; i++) {
        LLVMValueRef slot = t->shared.v[i];
        LLVMValueRef ptr = LLVMBuildLoad2(b, LLVMTypeOf(slot), frame_field(x, t, t->frame_param, 1 + (unsigned)i), "");
        ptrmap_put(&f->clones, slot, ptr);
    }
    xf_clone_blocks_into(f, f->instr_fn);

    t->leave = LLVMAppendBasicBlockInContext(x->ctx, f->instr_fn, "vigil.leave");
    LLVMPositionBuilderAtEnd(b, f->instr_prologue);
    LLVMValueRef resume_ptr = frame_field(x, t, t->frame_param, 0);
    LLVMValueRef point = LLVMBuildLoad2(b, x->i32, resume_ptr, "vigil.resume.point");
    LLVMBuildStore(b, LLVMConstInt(x->i32, 0, 0), resume_ptr);
    LLVMBasicBlockRef entry = xf_clone_block(f, LLVMValueAsBasicBlock(f->blocks.v[0]));
    t->resume_switch = LLVMBuildSwitch(b, point, entry, (unsigned)f->backedge_from.n);

    LLVMPositionBuilderAtEnd(b, t->leave);
    LLVMTypeRef ret = LLVMGetReturnType(fn_type);
    if (LLVMGetTypeKind(ret) == LLVMVoidTypeKind)
        LLVMBuildRetVoid(b);
    else
        LLVMBuildRet(b, LLVMGetUndef(ret));
}

/* f's side: the block every transfer goes through (the state is saved before it). It saves
 * the shared pointers, calls the copy, and returns what the copy returned or switches to the
 * header the copy named (through a reload of the state). Returns that switch. */
static LLVMValueRef build_transfer(struct xfunc *f, LLVMBasicBlockRef transfer, LLVMMetadataRef loc)
{
    struct vigil_xform *x = f->x;
    struct xt_transfer *t = f->transfer;
    LLVMBuilderRef b = x->builder;
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.transfer.done");
    LLVMBasicBlockRef back = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.transfer.back");
    LLVMBasicBlockRef nowhere = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.transfer.nowhere");
    LLVMSetCurrentDebugLocation2(b, NULL);
    LLVMPositionBuilderAtEnd(b, transfer);
    for (size_t i = 0; i < t->shared.n; i++)
        LLVMBuildStore(b, t->shared.v[i], frame_field(x, t, t->frame, 1 + (unsigned)i));
    unsigned nparams = LLVMCountParams(f->fn);
    LLVMValueRef *args = calloc(nparams + 1, sizeof *args);
    if (!args) {
        fputs("vigil-cc: out of memory\n", stderr);
        abort();
    }
    for (unsigned i = 0; i < nparams; i++)
        args[i] = LLVMGetParam(f->fn, i);
    args[nparams] = t->frame;
    LLVMSetCurrentDebugLocation2(b, loc);   /* a call to a function with debug info needs one */
    LLVMValueRef result = LLVMBuildCall2(b, LLVMGlobalGetValueType(f->instr_fn), f->instr_fn, args, nparams + 1, "");
    LLVMSetInstructionCallConv(result, LLVMGetFunctionCallConv(f->instr_fn));   /* fastcc after -O: must match */
    LLVMSetCurrentDebugLocation2(b, NULL);
    free(args);
    LLVMValueRef point = LLVMBuildLoad2(b, x->i32, frame_field(x, t, t->frame, 0), "");
    LLVMValueRef returned = LLVMBuildICmp(b, LLVMIntEQ, point, LLVMConstInt(x->i32, 0, 0), "");
    LLVMBuildCondBr(b, returned, done, back);

    LLVMPositionBuilderAtEnd(b, done);
    if (LLVMGetTypeKind(LLVMTypeOf(result)) == LLVMVoidTypeKind)
        LLVMBuildRetVoid(b);
    else
        LLVMBuildRet(b, result);
    LLVMPositionBuilderAtEnd(b, back);
    LLVMValueRef sw = LLVMBuildSwitch(b, point, nowhere, (unsigned)f->backedge_from.n);
    LLVMPositionBuilderAtEnd(b, nowhere);
    LLVMBuildUnreachable(b);
    return sw;
}

/* A block of fn that saves the state live at back-edge `backedge`'s header (none for the
 * entry: SIZE_MAX) into frame (the copy's slots through map), sets the resume point and goes
 * on to `next`. */
static LLVMBasicBlockRef save_and_go(struct xfunc *f, LLVMValueRef fn, LLVMValueRef frame, struct ptrmap *map,
                                     size_t backedge, LLVMBasicBlockRef next, const char *name)
{
    struct vigil_xform *x = f->x;
    LLVMBasicBlockRef block = LLVMAppendBasicBlockInContext(x->ctx, fn, name);
    LLVMPositionBuilderAtEnd(x->builder, block);
    LLVMValueRef point = LLVMConstInt(x->i32, 0, 0);
    if (backedge != SIZE_MAX) {
        save_state(x, f->transfer, frame, map, &f->transfer->live[backedge]);
        point = resume_point(x, backedge);
    }
    LLVMBuildStore(x->builder, point, frame_field(x, f->transfer, frame, 0));
    LLVMBuildBr(x->builder, next);
    return block;
}

/* A block of fn that loads the state live at back-edge `backedge`'s header from frame and
 * goes on to `next`. */
static LLVMBasicBlockRef load_and_go(struct xfunc *f, LLVMValueRef fn, LLVMValueRef frame, struct ptrmap *map,
                                     size_t backedge, LLVMBasicBlockRef next, const char *name)
{
    struct vigil_xform *x = f->x;
    LLVMBasicBlockRef block = LLVMAppendBasicBlockInContext(x->ctx, fn, name);
    LLVMPositionBuilderAtEnd(x->builder, block);
    load_state(x, f->transfer, frame, map, &f->transfer->live[backedge]);
    LLVMBuildBr(x->builder, next);
    return block;
}

void xt_insert_checks(struct xfunc *f)
{
    struct vigil_xform *x = f->x;
    struct xt_transfer *t = f->transfer;
    LLVMBuilderRef b = x->builder;
    LLVMBasicBlockRef entry = LLVMValueAsBasicBlock(f->blocks.v[0]);
    LLVMMetadataRef entry_loc = xf_debug_loc(f, LLVMGetFirstInstruction(entry));

    LLVMPositionBuilder(b, f->prologue, LLVMGetFirstInstruction(f->prologue));
    t->frame = LLVMBuildAlloca(b, t->frame_type, "vigil.frame");
    LLVMBasicBlockRef transfer = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.transfer");
    LLVMValueRef back_switch = build_transfer(f, transfer, entry_loc);

    /* The entry: callers inside a burst call f itself, so the entry check tests the burst. */
    uint32_t site = xs_add_entry(x, f->name, f->subprogram);
    struct xl_loops *loops = xl_plan(f);
    LLVMBasicBlockRef to_copy = save_and_go(f, f->fn, t->frame, NULL, SIZE_MAX, transfer, "vigil.transfer.entry");
    LLVMBasicBlockRef burst = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.burst.entry"), back;
    LLVMBasicBlockRef check = xc_build_countdown(f, site, entry_loc, entry, to_copy, NULL, burst, &back);
    LLVMSetCurrentDebugLocation2(b, entry_loc);
    xc_build_burst_path(x, f->fn, site, burst, to_copy, back);
    LLVMSetCurrentDebugLocation2(b, NULL);
    LLVMPositionBuilderAtEnd(b, f->prologue);
    LLVMBuildBr(b, check);
    x->stats->entry_checks++;

    uint32_t *sites = calloc(f->backedge_from.n + 1, sizeof *sites);
    if (!sites) {
        fputs("vigil-cc: out of memory\n", stderr);
        abort();
    }
    for (size_t i = 0; i < f->backedge_from.n; i++) {
        LLVMBasicBlockRef from = LLVMValueAsBasicBlock(f->backedge_from.v[i]);
        LLVMBasicBlockRef to = LLVMValueAsBasicBlock(f->backedge_to.v[i]);
        LLVMValueRef term = LLVMGetBasicBlockTerminator(from);
        LLVMMetadataRef loc = xf_debug_loc(f, term);
        site = sites[i] = xs_add(x, VIGIL_SITE_BACKEDGE, f->name, LLVMInstructionGetDebugLoc(term), 0);
        LLVMValueRef local = xl_local(loops, i);
        LLVMValueRef point = resume_point(x, i);

        /* The checking copy: count down; a burst goes to the copy, resuming at `to`. */
        to_copy = save_and_go(f, f->fn, t->frame, NULL, i, transfer, "vigil.transfer.loop");
        LLVMBasicBlockRef own_burst = NULL;
        if (xc_backedge_tests_burst(f) && !local)
            own_burst = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.burst.checking");
        check = xc_build_countdown(f, site, loc, to, to_copy, local, own_burst, &back);
        if (own_burst) {
            LLVMSetCurrentDebugLocation2(b, loc);
            xc_build_burst_path(x, f->fn, site, own_burst, to_copy, back);
            LLVMSetCurrentDebugLocation2(b, NULL);
        }
        xc_redirect(term, to, check);
        xl_note_check(loops, check, to);
        if (t->outermost[i])
            LLVMAddCase(back_switch, point, load_and_go(f, f->fn, t->frame, NULL, i, back, "vigil.transfer.resume"));

        /* The copy: the burst goes on at `to`; when it has ended, the copy returns to f there,
         * or coasts on at an inner loop: b = burst_left; if (b == 0) goto end; burst path. */
        LLVMBasicBlockRef to_clone = xf_clone_block(f, to);
        LLVMBasicBlockRef end = to_clone;
        if (t->outermost[i])
            end = save_and_go(f, f->instr_fn, t->frame_param, &f->clones, i, t->leave, "vigil.leave.loop");
        LLVMBasicBlockRef copy_check = LLVMAppendBasicBlockInContext(x->ctx, f->instr_fn, "vigil.check.loop");
        LLVMBasicBlockRef copy_burst = LLVMAppendBasicBlockInContext(x->ctx, f->instr_fn, "vigil.burst.loop");
        LLVMSetCurrentDebugLocation2(b, loc ? xf_outlined_loc(f, loc) : NULL);
        LLVMPositionBuilderAtEnd(b, copy_check);
        LLVMValueRef left = LLVMBuildLoad2(b, x->i32, x->burst_left, "");
        LLVMValueRef ended = LLVMBuildICmp(b, LLVMIntEQ, left, LLVMConstInt(x->i32, 0, 0), "");
        LLVMBuildCondBr(b, ended, end, copy_burst);
        xc_build_burst_path(x, f->instr_fn, site, copy_burst, to_clone, end);
        LLVMSetCurrentDebugLocation2(b, NULL);
        xc_redirect(LLVMGetBasicBlockTerminator(xf_clone_block(f, from)), to_clone, copy_check);
        LLVMAddCase(t->resume_switch, point,
                    load_and_go(f, f->instr_fn, t->frame_param, &f->clones, i, to_clone, "vigil.resume.loop"));
        x->stats->backedge_checks++;
        if (local)
            x->stats->batched_checks++;
    }
    xl_rewire(f, loops, sites);
    xl_free(loops);
    free(sites);
}

void xt_free(struct xfunc *f)
{
    if (!f->transfer)
        return;
    valvec_free(&f->transfer->by_value);
    valvec_free(&f->transfer->shared);
    for (size_t i = 0; f->transfer->live && i < f->backedge_from.n; i++)
        valvec_free(&f->transfer->live[i]);
    free(f->transfer->live);
    free(f->transfer->outermost);
    free(f->transfer);
    f->transfer = NULL;
}
