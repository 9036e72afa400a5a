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
 * in straight-line code (gzip's longest_match ran far slower). When a burst
 * ends at an inner loop's back-edge, the copy goes on in a third copy of the body, without
 * probes or checks ("coast"), until an outermost back-edge of that copy returns to f. Coasting
 * in the instrumented copy with probes that test the burst made bzip2 much slower in adaptive
 * mode: its outer loops run for long (sendMTFValues). While a thread coasts, the inner loops'
 * checks do not count, and plan-mode predicate counters do not count either.
 *
 * The state: after demotion (demote.c) every value used across blocks lives in a stack slot
 * of the prologue. A slot used only by loads and stores travels by value in the frame, and
 * only where it is live into the header (saving every slot at every check would keep every
 * value alive around every loop: spills in the hot path, and PHIs at every header that made
 * the back end take minutes); any other (the program may hold its address: a local buffer,
 * a variable passed by pointer) is shared: it moves into the frame itself, where f and the
 * copy both reach it at a fixed offset. Passing its address instead cost a store per shared
 * object at every transfer: lua's dumpFunction, 21 transfers of some 30 addresses, was 9x
 * its plain size. Lifetime markers of shared objects are dropped: f must not reuse their
 * memory while the copy runs.
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
    struct valvec shared;       /* prologue allocas f and the copy share, in frame order */
    unsigned char *shared_wrapped;   /* per shared: its field is {[0 x align carrier], object} */
    LLVMTypeRef frame_type;     /* {i32 resume, shared objects..., by-value contents...} */
    LLVMValueRef frame;         /* f's frame (an alloca in the prologue) */
    LLVMValueRef frame_param;   /* the copy's last parameter */
    LLVMValueRef resume_switch; /* in the copy: resume point -> clone of a loop header */
    LLVMBasicBlockRef leave;    /* in the copy: return to f (the state is saved) */
    /* x86-64: f calls the copy through `thunk` (<f>.vigil.xfer(frame)) and a runtime entry that
     * keeps f's registers (xe_call_keeping_registers): f's parameters travel in the frame and
     * the copy's result comes back in it, so no value of f lives across a call. */
    LLVMValueRef thunk;
    struct valvec *live;        /* per resume target: by-value slots live into it */
    unsigned char *zeros;       /* per by-value slot: low bits known zero in all it holds (demote.c) */
    size_t ntargets;            /* resume targets: back-edge i's header (i < nedges), then the
                                   heads of inlined calls with checks (inlined.c) */
    unsigned char *outermost;   /* per back-edge: its header is in no other loop */
    struct ptrmap coast;        /* original block -> its coasting copy (when some loop is inner) */
    int coasting;
    /* The original body's blocks (indexes of f->blocks) for the reload sets. */
    struct ptrmap block_index;  /* block -> index + 1 */
    struct valvec *preds, *succs;   /* per block: block indexes + 1, as pointers */
    uint64_t *kill;             /* per block, `words` words: by-value slots it stores */
    size_t words;
    unsigned char **reaches;    /* per back-edge, made on demand: blocks with a path into its header */
};

/* Resume points: 0 is the function's entry, i + 1 resume target i (target_block). */
static LLVMValueRef resume_point(struct vigil_xform *x, size_t backedge)
{
    return LLVMConstInt(x->i32, backedge + 1, 0);
}

/* Resume target i: back-edge i's header, or (after the back-edges) an inlined call's head. */
static LLVMValueRef target_block(const struct xfunc *f, size_t i)
{
    size_t nedges = f->backedge_from.n;
    return i < nedges ? f->backedge_to.v[i] : f->inlined_heads.v[i - nedges];
}

static int has_param_attribute(LLVMValueRef fn, unsigned param, const char *name)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    return kind && LLVMGetEnumAttributeAtIndex(fn, param + 1, kind) != NULL;
}

static uint64_t *index_body(struct xfunc *f, struct xt_transfer *t);
static LLVMTypeRef shared_field_type(struct vigil_xform *x, LLVMValueRef a, unsigned char *wrapped);
static int travels_by_value(LLVMValueRef alloca);
static int find_outermost(struct xfunc *f, struct xt_transfer *t);

/* The number of distinct outermost loop headers: where a copy may come back to f. */
static size_t count_outermost_loops(struct xfunc *f)
{
    struct xt_transfer *t = xf_calloc(1, sizeof *t);
    f->transfer = t;
    free(index_body(f, t));   /* no slots: only the blocks and edges */
    find_outermost(f, t);
    struct ptrmap headers;
    ptrmap_init(&headers);
    size_t n = 0;
    for (size_t i = 0; i < f->backedge_from.n; i++)
        if (t->outermost[i] && !ptrmap_get(&headers, f->backedge_to.v[i])) {
            ptrmap_put(&headers, f->backedge_to.v[i], f->backedge_to.v[i]);
            n++;
        }
    ptrmap_free(&headers);
    xt_free(f);
    return n;
}

static const char *reason_not_to_transfer(struct xfunc *f)
{
    if (!f->x->settings->outline || !f->x->settings->outline_loops)
        return "disabled";
    if (f->backedge_from.n == 0)
        return "no loops";
    if (xf_instruction_count(f->fn) > f->x->settings->dual_max) {
        size_t outermost = count_outermost_loops(f);
        if (f->x->settings->debug)
            fprintf(stderr, "vigil-cc: note: %s: over VIGIL_CC_DUAL_MAX, %zu outermost loops\n", f->name, outermost);
        if ((long)outermost > f->x->settings->giant_loops)
            return "giant";   /* every outermost header merges the state (bzip2's BZ2_decompress) */
    }
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
    for (LLVMValueRef inst = LLVMGetFirstInstruction(f->prologue); inst; inst = LLVMGetNextInstruction(inst)) {
        unsigned char wrapped;
        if (LLVMIsAAllocaInst(inst) && !travels_by_value(inst) && !shared_field_type(f->x, inst, &wrapped))
            return "shared local of variable size or unsupported alignment";
    }
    return NULL;
}

int xt_can_transfer(struct xfunc *f)
{
    const char *reason = reason_not_to_transfer(f);
    if (reason && f->x->settings->debug && f->backedge_from.n && strcmp(reason, "disabled") != 0)
        fprintf(stderr, "vigil-cc: note: %s: no transfers (%s)\n", f->name, reason);
    f->giant_transfers = !reason && xf_instruction_count(f->fn) > f->x->settings->dual_max;
    return reason == NULL;
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

/* A prologue slot that the transfer carries by value (else it is shared, in the frame). */
static int travels_by_value(LLVMValueRef alloca)
{
    return xf_is_private_slot(alloca) && is_single_slot(alloca);
}

static LLVMValueRef frame_field(struct vigil_xform *x, struct xt_transfer *t, LLVMValueRef frame, unsigned index)
{
    return LLVMBuildStructGEP2(x->builder, t->frame_type, frame, index, "");
}

/* Shared object i in frame (f's frame, or the copy's parameter). */
static LLVMValueRef shared_object(struct vigil_xform *x, struct xt_transfer *t, LLVMValueRef frame, size_t i)
{
    LLVMValueRef field = frame_field(x, t, frame, 1 + (unsigned)i);
    if (!t->shared_wrapped[i])
        return field;
    return LLVMBuildStructGEP2(x->builder, LLVMStructGetTypeAtIndex(t->frame_type, 1 + (unsigned)i), field, 1, "");
}

/* A type that takes no room and is aligned to `align` (a power of two), or NULL. */
static LLVMTypeRef align_carrier(struct vigil_xform *x, unsigned align)
{
    LLVMTypeRef carrier = align <= 8 ? LLVMIntTypeInContext(x->ctx, 8 * align)
                                     : LLVMVectorType(x->i32, align / 4);
    return LLVMABIAlignmentOfType(x->layout, carrier) == align ? LLVMArrayType(carrier, 0) : NULL;
}

/* The frame field of shared alloca a: its object, wrapped with an alignment carrier when the
 * alloca asks for more than its type's alignment (clang aligns local arrays to 16). Sets
 * *wrapped; NULL when no field can hold it. */
static LLVMTypeRef shared_field_type(struct vigil_xform *x, LLVMValueRef a, unsigned char *wrapped)
{
    LLVMValueRef count = LLVMGetOperand(a, 0);
    if (!LLVMIsAConstantInt(count))
        return NULL;
    LLVMTypeRef type = LLVMGetAllocatedType(a);
    uint64_t n = LLVMConstIntGetZExtValue(count);
    if (n != 1)
        type = LLVMArrayType(type, (unsigned)n);
    unsigned align = LLVMGetAlignment(a);
    *wrapped = align > LLVMABIAlignmentOfType(x->layout, type);
    if (!*wrapped)
        return type;
    LLVMTypeRef carrier = align_carrier(x, align);
    if (!carrier)
        return NULL;
    LLVMTypeRef parts[2] = {carrier, type};
    return LLVMStructTypeInContext(x->ctx, parts, 2, 0);
}

static unsigned by_value_field(struct xt_transfer *t, size_t i)
{
    return 1 + (unsigned)t->shared.n + (unsigned)i;
}

/* With a thunk, the frame also holds f's parameters and the copy's result, after the slots. */
static unsigned param_field(struct xt_transfer *t, unsigned i)
{
    return by_value_field(t, t->by_value.n) + i;
}

/* The by-value slots in `live` (f's, or their clones through map) stored into frame (save), or
 * loaded back from it (!save). */
static void move_state(struct vigil_xform *x, struct xt_transfer *t, LLVMValueRef frame, struct ptrmap *map,
                       const struct valvec *live, int save)
{
    for (size_t i = 0; i < live->n; i++) {
        size_t index = (size_t)live->v[i];
        LLVMValueRef slot = map ? ptrmap_get(map, t->by_value.v[index]) : t->by_value.v[index];
        LLVMValueRef field = frame_field(x, t, frame, by_value_field(t, index));
        LLVMValueRef from = save ? slot : field, to = save ? field : slot;
        LLVMBuildStore(x->builder, LLVMBuildLoad2(x->builder, LLVMGetAllocatedType(slot), from, ""), to);
    }
}

static size_t block_number(struct xt_transfer *t, LLVMValueRef block)
{
    return (size_t)ptrmap_get(&t->block_index, block) - 1;
}

/* Blocks and edges of the original body, and per block the by-value slots it stores (kill)
 * and those it loads before storing them (gen, returned for compute_liveness). */
static uint64_t *index_body(struct xfunc *f, struct xt_transfer *t)
{
    size_t nblocks = f->blocks.n;
    ptrmap_init(&t->block_index);
    for (size_t b = 0; b < nblocks; b++)
        ptrmap_put(&t->block_index, f->blocks.v[b], (void *)(b + 1));
    t->preds = xf_calloc(nblocks, sizeof *t->preds);
    t->succs = xf_calloc(nblocks, sizeof *t->succs);
    size_t words = t->words = (t->by_value.n + 63) / 64;
    t->kill = xf_calloc(nblocks * words + 1, sizeof *t->kill);
    uint64_t *gen = xf_calloc(nblocks * words + 1, sizeof *gen);
    struct ptrmap slot_index;
    ptrmap_init(&slot_index);
    for (size_t i = 0; i < t->by_value.n; i++)
        ptrmap_put(&slot_index, t->by_value.v[i], (void *)(i + 1));
    for (size_t b = 0; b < nblocks; b++) {
        LLVMBasicBlockRef block = LLVMValueAsBasicBlock(f->blocks.v[b]);
        LLVMValueRef term = LLVMGetBasicBlockTerminator(block);
        unsigned nsucc = term ? LLVMGetNumSuccessors(term) : 0;
        for (unsigned k = 0; k < nsucc; k++) {
            size_t to = (size_t)ptrmap_get(&t->block_index, LLVMBasicBlockAsValue(LLVMGetSuccessor(term, k)));
            if (!to)
                continue;
            valvec_push(&t->succs[b], (LLVMValueRef)to);
            valvec_push(&t->preds[to - 1], (LLVMValueRef)(b + 1));
        }
        uint64_t *g = gen + b * words, *kill = t->kill + b * words;
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst; inst = LLVMGetNextInstruction(inst)) {
            int is_load = LLVMIsALoadInst(inst) != NULL;
            if (!is_load && !LLVMIsAStoreInst(inst))
                continue;
            size_t slot = (size_t)ptrmap_get(&slot_index, LLVMGetOperand(inst, is_load ? 0 : 1));
            if (!slot--)
                continue;
            uint64_t bit = 1ull << (slot % 64);
            if (!is_load)
                kill[slot / 64] |= bit;
            else if (!(kill[slot / 64] & bit))
                g[slot / 64] |= bit;
        }
    }
    ptrmap_free(&slot_index);
    return gen;
}

/* Which by-value slots are live into each back-edge's header in the original body: a load
 * reachable from the header's top without a store to the slot in between (backward dataflow
 * over the blocks; slots are only loaded and stored). t->live[i] lists indexes into by_value,
 * stored as pointer-sized integers. Frees gen. */
static void compute_liveness(struct xfunc *f, struct xt_transfer *t, uint64_t *gen)
{
    size_t nblocks = f->blocks.n, nslots = t->by_value.n, words = t->words;
    t->ntargets = f->backedge_from.n + f->inlined_heads.n;
    t->live = xf_calloc(t->ntargets + 1, sizeof *t->live);
    uint64_t *in = xf_calloc(nblocks * words + 1, sizeof *in);
    uint64_t *out = xf_calloc(words + 1, sizeof *out);
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t b = nblocks; b-- > 0;) {
            memset(out, 0, words * sizeof *out);
            for (size_t k = 0; k < t->succs[b].n; k++) {
                size_t succ = (size_t)t->succs[b].v[k] - 1;
                for (size_t w = 0; w < words; w++)
                    out[w] |= in[succ * words + w];
            }
            for (size_t w = 0; w < words; w++) {
                uint64_t v = gen[b * words + w] | (out[w] & ~t->kill[b * words + w]);
                if (v != in[b * words + w]) {
                    in[b * words + w] = v;
                    changed = 1;
                }
            }
        }
    }
    for (size_t i = 0; i < t->ntargets; i++) {
        size_t header = block_number(t, target_block(f, i));
        for (size_t slot = 0; slot < nslots; slot++)
            if (in[header * words + slot / 64] & (1ull << (slot % 64)))
                valvec_push(&t->live[i], (LLVMValueRef)(slot));
    }
    free(gen);
    free(in);
    free(out);
}

/* Blocks reachable from `start` following succs (forward) or preds (xf_reach). */
static unsigned char *reach_around(struct xfunc *f, struct xt_transfer *t, size_t start, int forward,
                                   int with_start, size_t barrier)
{
    return xf_reach(forward ? t->succs : t->preds, f->blocks.n, start, with_start, barrier);
}

static unsigned char *reach(struct xfunc *f, struct xt_transfer *t, size_t start, int forward, int with_start)
{
    return reach_around(f, t, start, forward, with_start, SIZE_MAX);
}

/* The slots to reload when the copy, resumed at back-edge i's header (from = the blocks
 * reachable from there), returns at back-edge k's: those live there that some block on a
 * path between the two may store. The others still hold, in f, what they held when f called
 * the copy (for a loop's invariants: the same SSA value, so the loop keeps its registers). */
static void reload_set(struct xfunc *f, struct xt_transfer *t, const unsigned char *from, size_t k, struct valvec *out)
{
    size_t nblocks = f->blocks.n, words = t->words;
    if (!t->reaches[k])
        t->reaches[k] = reach(f, t, block_number(t, f->backedge_to.v[k]), 0, 0);
    uint64_t stored[words + 1];
    memset(stored, 0, sizeof stored);
    for (size_t b = 0; b < nblocks; b++)
        if (from[b] && t->reaches[k][b])
            for (size_t w = 0; w < words; w++)
                stored[w] |= t->kill[b * words + w];
    for (size_t i = 0; i < t->live[k].n; i++) {
        size_t slot = (size_t)t->live[k].v[i];
        if (stored[slot / 64] & (1ull << (slot % 64)))
            valvec_push(out, (LLVMValueRef)slot);
    }
}

/* Whether each back-edge's header lies in no other back-edge's loop (the blocks that reach
 * its source without passing its header; a loop whose body holds the function's entry is
 * irreducible and contains nothing here). Returns whether some header is not outermost. */
static int find_outermost(struct xfunc *f, struct xt_transfer *t)
{
    size_t nedges = f->backedge_from.n;
    t->outermost = xf_calloc(nedges, 1);
    memset(t->outermost, 1, nedges);
    int nested = 0;
    for (size_t j = 0; j < nedges; j++) {
        size_t header = block_number(t, f->backedge_to.v[j]), source = block_number(t, f->backedge_from.v[j]);
        if (source == header)
            continue;   /* a one-block loop holds no header but its own */
        unsigned char *body = reach_around(f, t, source, 0, 1, header);
        for (size_t i = 0; i < nedges && !(body[0] && header != 0); i++) {   /* body[0]: irreducible */
            size_t h = block_number(t, f->backedge_to.v[i]);
            if (h != header && body[h] && t->outermost[i]) {
                t->outermost[i] = 0;
                nested = 1;
            }
        }
        free(body);
    }
    return nested;
}

/* The coasting copy: the body once more in the copy's function, on the same slots and
 * parameters, left out of the probes (f->cloned) and of the burst entries (instr_calls). */
static void clone_coasting_copy(struct xfunc *f, struct xt_transfer *t)
{
    struct vigil_xform *x = f->x;
    ptrmap_init(&t->coast);
    unsigned nparams = LLVMCountParams(f->fn);
    for (unsigned i = 0; i < nparams; i++)
        ptrmap_put(&t->coast, LLVMGetParam(f->fn, i), LLVMGetParam(f->instr_fn, i));
    for (size_t i = 0; i < t->by_value.n; i++)
        ptrmap_put(&t->coast, t->by_value.v[i], ptrmap_get(&f->clones, t->by_value.v[i]));
    for (size_t i = 0; i < t->shared.n; i++)
        ptrmap_put(&t->coast, t->shared.v[i], ptrmap_get(&f->clones, t->shared.v[i]));
    struct ptrmap instrumented = f->clones;
    size_t cloned = f->cloned.n, calls = x->instr_calls.n;
    f->clones = t->coast;
    xf_clone_blocks_into(f, f->instr_fn);
    t->coast = f->clones;
    f->clones = instrumented;
    f->cloned.n = cloned;
    x->instr_calls.n = calls;
}

/* <f>.vigil.xfer(frame): calls the copy with the parameters in the frame and leaves its result
 * there. Not inlined: it is called only through the runtime's register-keeping entry. */
static void build_thunk(struct xfunc *f, struct xt_transfer *t)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    LLVMTypeRef frame_ptr = vigil_pointer_to(t->frame_type);
    t->thunk = xf_new_companion(f, ".vigil.xfer", LLVMFunctionType(x->void_t, &frame_ptr, 1, 0), 0);
    xf_remove_fn_attribute(t->thunk, "noreturn");   /* it returns whenever the copy does */
    LLVMSetFunctionCallConv(t->thunk, LLVMCCallConv);   /* called from the runtime, as C */
    static const char *const attrs[] = {"noinline", "nounwind"};
    for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++)
        if (i == 0 || xf_has_fn_attribute(f->fn, attrs[i]))
            LLVMAddAttributeAtIndex(t->thunk, LLVMAttributeFunctionIndex,
                                    LLVMCreateEnumAttribute(x->ctx, LLVMGetEnumAttributeKindForName(attrs[i], strlen(attrs[i])), 0));
    LLVMValueRef frame = LLVMGetParam(t->thunk, 0);
    unsigned nparams = LLVMCountParams(f->fn);
    LLVMValueRef *args = xf_calloc(nparams + 1, sizeof *args);
    LLVMSetCurrentDebugLocation2(b, NULL);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(x->ctx, t->thunk, "vigil.thunk"));
    for (unsigned i = 0; i < nparams; i++)
        args[i] = LLVMBuildLoad2(b, LLVMTypeOf(LLVMGetParam(f->fn, i)), frame_field(x, t, frame, param_field(t, i)), "");
    args[nparams] = frame;
    LLVMValueRef result = LLVMBuildCall2(b, LLVMGlobalGetValueType(f->instr_fn), f->instr_fn, args, nparams + 1, "");
    LLVMSetInstructionCallConv(result, LLVMGetFunctionCallConv(f->instr_fn));
    if (LLVMGetTypeKind(LLVMTypeOf(result)) != LLVMVoidTypeKind)
        LLVMBuildStore(b, result, frame_field(x, t, frame, param_field(t, nparams)));
    LLVMBuildRetVoid(b);
    free(args);
}

/* The copy: `<f>.vigil.instr`, f's parameters and the frame. Its entry block holds its own
 * by-value slots and the pointers to the shared ones, reads the resume point (and resets it,
 * so that a return leaves 0) and goes to the body's entry or through a reload of the state
 * to the header named; `leave` saves the state and returns. */
/* f keeps its frame where leaves may go without (VIGIL_CC_FRAME_POINTERS=nonleaf): its calls
 * of the transfer entry are inline assembly, which the back end does not count as calls, yet
 * f stays on the stack while its instrumented copy runs, and the stacks that the tools' hooks
 * walk from there go up through f's frame to its caller. */
static void keep_frame(struct vigil_xform *x, LLVMValueRef fn)
{
    static const char key[] = "frame-pointer";
    LLVMAttributeRef a = LLVMGetStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, key, sizeof key - 1);
    unsigned len = 0;
    const char *value = a ? LLVMGetStringAttributeValue(a, &len) : NULL;
    if (!value || len != 8 || strncmp(value, "non-leaf", 8) != 0)
        return;
    LLVMRemoveStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, key, sizeof key - 1);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(x->ctx, key, sizeof key - 1, "all", 3));
}

void xt_outline_body(struct xfunc *f)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    struct xt_transfer *t = xf_calloc(1, sizeof *t);
    f->transfer = t;
    keep_frame(x, f->fn);
    for (LLVMValueRef inst = LLVMGetFirstInstruction(f->prologue); inst; inst = LLVMGetNextInstruction(inst)) {
        if (!LLVMIsAAllocaInst(inst))
            continue;
        if (travels_by_value(inst)) {
            valvec_push(&t->by_value, inst);
        } else {
            drop_lifetime_markers(inst);
            valvec_push(&t->shared, inst);
        }
    }
    unsigned nparams = LLVMCountParams(f->fn);
    LLVMTypeRef fn_type = LLVMGlobalGetValueType(f->fn), ret = LLVMGetReturnType(fn_type);
    int thunk = xe_can_call_keeping_registers(x), has_result = LLVMGetTypeKind(ret) != LLVMVoidTypeKind;
    size_t nfields = 1 + t->shared.n + t->by_value.n + (thunk ? nparams + has_result : 0);
    LLVMTypeRef *fields = xf_calloc(nfields, sizeof *fields);
    LLVMTypeRef *params = xf_calloc(nparams + 1, sizeof *params);
    LLVMGetParamTypes(fn_type, params);
    fields[0] = x->i32;
    t->shared_wrapped = xf_calloc(t->shared.n, 1);
    for (size_t i = 0; i < t->shared.n; i++)
        fields[1 + i] = shared_field_type(x, t->shared.v[i], &t->shared_wrapped[i]);
    for (size_t i = 0; i < t->by_value.n; i++)
        fields[by_value_field(t, i)] = LLVMGetAllocatedType(t->by_value.v[i]);
    for (unsigned i = 0; thunk && i < nparams + has_result; i++)
        fields[param_field(t, i)] = i < nparams ? params[i] : ret;
    t->frame_type = LLVMStructTypeInContext(x->ctx, fields, (unsigned)nfields, 0);
    free(fields);
    compute_liveness(f, t, index_body(f, t));
    t->zeros = xf_calloc(t->by_value.n + 1, 1);
    xf_slot_trailing_zeros(&t->by_value, t->zeros);
    t->coasting = find_outermost(f, t);
    t->reaches = xf_calloc(f->backedge_from.n, sizeof *t->reaches);

    params[nparams] = vigil_pointer_to(t->frame_type);
    LLVMTypeRef instr_type = LLVMFunctionType(LLVMGetReturnType(fn_type), params, nparams + 1, 0);
    free(params);
    f->instr_fn = xf_new_companion(f, VIGIL_INSTR_SUFFIX, instr_type, 0);
    /* A noreturn f (gawk's main, make's die) has loops: its copy returns to f when a burst
     * ends at a back-edge, and a noreturn copy would let the back end drop what follows. */
    xf_remove_fn_attribute(f->instr_fn, "noreturn");
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
    for (size_t i = 0; i < t->shared.n; i++)
        ptrmap_put(&f->clones, t->shared.v[i], shared_object(x, t, t->frame_param, i));
    xf_clone_blocks_into(f, f->instr_fn);
    if (t->coasting)
        clone_coasting_copy(f, t);

    t->leave = LLVMAppendBasicBlockInContext(x->ctx, f->instr_fn, "vigil.leave");
    LLVMPositionBuilderAtEnd(b, f->instr_prologue);
    LLVMValueRef resume_ptr = frame_field(x, t, t->frame_param, 0);
    LLVMValueRef point = LLVMBuildLoad2(b, x->i32, resume_ptr, "vigil.resume.point");
    LLVMBuildStore(b, LLVMConstInt(x->i32, 0, 0), resume_ptr);
    LLVMBasicBlockRef entry = xf_clone_block(f, LLVMValueAsBasicBlock(f->blocks.v[0]));
    t->resume_switch = LLVMBuildSwitch(b, point, entry, (unsigned)f->backedge_from.n);

    LLVMPositionBuilderAtEnd(b, t->leave);
    if (LLVMGetTypeKind(ret) == LLVMVoidTypeKind)
        LLVMBuildRetVoid(b);
    else
        LLVMBuildRet(b, LLVMGetUndef(ret));
    if (thunk)
        build_thunk(f, t);
}

/* Whether f's parameter i is used in the body's blocks marked in `from` (NULL: anywhere in the
 * body). The copy resumed at a header needs only those: leaving the others out of the
 * transfer lets f reuse their registers, as the plain function does. */
static int param_used(struct xfunc *f, struct xt_transfer *t, unsigned i, const unsigned char *from)
{
    for (LLVMUseRef use = LLVMGetFirstUse(LLVMGetParam(f->fn, i)); use; use = LLVMGetNextUse(use)) {
        LLVMValueRef user = LLVMGetUser(use);
        if (!LLVMIsAInstruction(user))
            continue;
        size_t block = (size_t)ptrmap_get(&t->block_index, LLVMBasicBlockAsValue(LLVMGetInstructionParent(user)));
        if (block && (!from || from[block - 1]))
            return 1;   /* users outside the body (prologue, other transfers) do not count */
    }
    return 0;
}

/* f's side of a transfer, in the empty block `transfer`: save the state live at the resume
 * point (back-edge `site`'s header, or the entry: SIZE_MAX), name it, call the copy; then
 * return what it returned, or reload what the copy may have changed and go on at the
 * outermost header it returned at (backs[k]: f's way back to back-edge k's header). */
static void build_transfer(struct xfunc *f, LLVMBasicBlockRef transfer, size_t site, LLVMBasicBlockRef *backs,
                           LLVMMetadataRef loc)
{
    struct vigil_xform *x = f->x;
    struct xt_transfer *t = f->transfer;
    LLVMBuilderRef b = x->builder;
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.transfer.done");
    LLVMBasicBlockRef back = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.transfer.back");
    LLVMBasicBlockRef nowhere = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.transfer.nowhere");
    LLVMSetCurrentDebugLocation2(b, NULL);
    LLVMPositionBuilderAtEnd(b, transfer);
    LLVMValueRef point = LLVMConstInt(x->i32, 0, 0);
    if (site != SIZE_MAX) {
        move_state(x, t, t->frame, NULL, &t->live[site], 1);
        point = resume_point(x, site);
    }
    LLVMBuildStore(b, point, frame_field(x, t, t->frame, 0));
    unsigned nparams = LLVMCountParams(f->fn);
    LLVMValueRef result = NULL;
    LLVMTypeRef ret = LLVMGetReturnType(LLVMGlobalGetValueType(f->fn));
    unsigned char *from = site == SIZE_MAX ? NULL : reach(f, t, block_number(t, target_block(f, site)), 1, 1);
    if (t->thunk) {
        for (unsigned i = 0; i < nparams; i++)
            if (param_used(f, t, i, from))
                LLVMBuildStore(b, LLVMGetParam(f->fn, i), frame_field(x, t, t->frame, param_field(t, i)));
        xe_call_keeping_registers(x, t->thunk, t->frame);
    } else {
        LLVMValueRef *args = xf_calloc(nparams + 1, sizeof *args);
        for (unsigned i = 0; i < nparams; i++) {
            LLVMValueRef param = LLVMGetParam(f->fn, i);
            args[i] = param_used(f, t, i, from) ? param : LLVMGetUndef(LLVMTypeOf(param));
        }
        args[nparams] = t->frame;
        LLVMSetCurrentDebugLocation2(b, loc);   /* a call to a function with debug info needs one */
        result = LLVMBuildCall2(b, LLVMGlobalGetValueType(f->instr_fn), f->instr_fn, args, nparams + 1, "");
        LLVMSetInstructionCallConv(result, LLVMGetFunctionCallConv(f->instr_fn));   /* fastcc after -O: must match */
        LLVMSetCurrentDebugLocation2(b, NULL);
        free(args);
    }
    LLVMValueRef returned_at = LLVMBuildLoad2(b, x->i32, frame_field(x, t, t->frame, 0), "");
    LLVMValueRef returned = LLVMBuildICmp(b, LLVMIntEQ, returned_at, LLVMConstInt(x->i32, 0, 0), "");
    LLVMBuildCondBr(b, returned, done, back);

    LLVMPositionBuilderAtEnd(b, done);
    if (LLVMGetTypeKind(ret) == LLVMVoidTypeKind)
        LLVMBuildRetVoid(b);
    else
        LLVMBuildRet(b, result ? result : LLVMBuildLoad2(b, ret, frame_field(x, t, t->frame, param_field(t, nparams)), ""));

    LLVMPositionBuilderAtEnd(b, back);
    LLVMValueRef sw = LLVMBuildSwitch(b, returned_at, nowhere, 4);
    for (size_t k = 0; k < f->backedge_from.n; k++) {
        if (!t->outermost[k] || (from && !from[block_number(t, f->backedge_to.v[k])]))
            continue;
        struct valvec reload = {0};
        if (from)
            reload_set(f, t, from, k, &reload);
        LLVMBasicBlockRef load = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.transfer.resume");
        LLVMPositionBuilderAtEnd(b, load);
        move_state(x, t, t->frame, NULL, from ? &reload : &t->live[k], 0);
        LLVMBuildBr(b, backs[k]);
        LLVMAddCase(sw, resume_point(x, k), load);
        valvec_free(&reload);
    }
    free(from);
    LLVMPositionBuilderAtEnd(b, nowhere);
    LLVMBuildUnreachable(b);
}

/* Whether v's value enters a computation other than an address: through integer arithmetic
 * and casts, some user that is not a GEP, a comparison or a store. A vectorized loop's indexes
 * (`i | 8` plus a start, into a GEP) only address memory, which loop strength reduction handles
 * from a base pointer whatever it knows of i; masking them moved registers in bzip2's
 * BZ2_blockSort (more instructions in all). */
static int computes_with(LLVMValueRef v, int depth)
{
    for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        if (LLVMIsAGetElementPtrInst(user) || LLVMIsAICmpInst(user) || LLVMIsAStoreInst(user))
            continue;
        switch (LLVMIsAInstruction(user) ? LLVMGetInstructionOpcode(user) : LLVMRet) {
        case LLVMAdd: case LLVMSub: case LLVMOr: case LLVMShl: case LLVMMul:
        case LLVMTrunc: case LLVMZExt: case LLVMSExt:
            if (depth < 4 && !computes_with(user, depth + 1))
                continue;   /* on the way to an address only */
            return 1;
        default:
            return 1;
        }
    }
    return 0;
}

/* Whether a load of slot (in f's body), directly or through a store into another slot, feeds
 * an `or` with a constant inside its `zeros` low bits (an add in disguise) in a block of
 * `body`: the only use the back end makes of the known zeros. */
static int feeds_small_or(struct xt_transfer *t, LLVMValueRef slot, unsigned zeros, const unsigned char *body,
                          int depth)
{
    for (LLVMUseRef use = LLVMGetFirstUse(slot); use; use = LLVMGetNextUse(use)) {
        LLVMValueRef load = LLVMGetUser(use);
        if (!LLVMIsALoadInst(load))
            continue;
        for (LLVMUseRef u = LLVMGetFirstUse(load); u; u = LLVMGetNextUse(u)) {
            LLVMValueRef user = LLVMGetUser(u);
            if (!LLVMIsAInstruction(user))
                continue;
            if (LLVMIsAStoreInst(user) && LLVMGetOperand(user, 0) == load) {
                LLVMValueRef to = LLVMGetOperand(user, 1);
                if (depth < 2 && LLVMIsAAllocaInst(to) && to != slot && feeds_small_or(t, to, zeros, body, depth + 1))
                    return 1;
                continue;
            }
            size_t block = (size_t)ptrmap_get(&t->block_index, LLVMBasicBlockAsValue(LLVMGetInstructionParent(user)));
            if (!block || !body[block - 1] || LLVMGetInstructionOpcode(user) != LLVMOr)
                continue;
            LLVMValueRef c = LLVMGetOperand(user, LLVMGetOperand(user, 0) == load ? 1 : 0);
            if (LLVMIsAConstantInt(c) && zeros < 64 && (LLVMConstIntGetZExtValue(c) >> zeros) == 0 &&
                computes_with(user, 0))
                return 1;
        }
    }
    return 0;
}

/* At the top of `back`, f's way back to back-edge i's header from its check's slow path and
 * from the copy: each slot live there with low bits known zero (xf_slot_trailing_zeros) is
 * masked, so that the back end sees at the header what it sees on the loop's own edges (an
 * induction variable that stays a multiple of its step) and not a value with nothing known. */
static void mask_known_zeros(struct xfunc *f, struct xt_transfer *t, size_t i, LLVMBasicBlockRef back)
{
    LLVMBuilderRef b = f->x->builder;
    LLVMValueRef first = LLVMGetFirstInstruction(back);
    LLVMMetadataRef loc = LLVMGetCurrentDebugLocation2(b);   /* positioning before `first` takes its */
    unsigned char *body = NULL;   /* the loop's blocks, made when some slot has known zeros */
    for (size_t k = 0; f->x->settings->known_zeros && k < t->live[i].n; k++) {
        size_t index = (size_t)t->live[i].v[k];
        unsigned zeros = t->zeros[index];
        if (!zeros)
            continue;
        if (!body)
            body = reach_around(f, t, block_number(t, f->backedge_from.v[i]), 0, 1,
                                block_number(t, f->backedge_to.v[i]));
        /* Elsewhere the mask only costs: a value of its own on the way back, where the loop's
         * edge brought the same one, moved registers in bzip2's BZ2_blockSort (more
         * instructions with every slot with known zeros masked). */
        if (!feeds_small_or(t, t->by_value.v[index], zeros, body, 0))
            continue;
        LLVMValueRef slot = t->by_value.v[index];
        LLVMTypeRef type = LLVMGetAllocatedType(slot);
        if (f->x->settings->debug)
            fprintf(stderr, "vigil-cc: note: %s: loop at line %u: a slot's %u low zero bits kept on the way back\n",
                    f->name, LLVMGetDebugLocLine(LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(f->backedge_from.v[i]))),
                    zeros);
        if (first)
            LLVMPositionBuilderBefore(b, first);
        else
            LLVMPositionBuilderAtEnd(b, back);
        LLVMSetCurrentDebugLocation2(b, NULL);
        LLVMValueRef mask = LLVMConstInt(type, zeros >= 64 ? 0 : ~0ull << zeros, 1);   /* width <= 64 */
        LLVMBuildStore(b, LLVMBuildAnd(b, LLVMBuildLoad2(b, type, slot, ""), mask, ""), slot);
    }
    free(body);
    LLVMSetCurrentDebugLocation2(b, loc);
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
        move_state(x, f->transfer, frame, map, &f->transfer->live[backedge], 1);
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
    move_state(x, f->transfer, frame, map, &f->transfer->live[backedge], 0);
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
    size_t nedges = f->backedge_from.n;
    LLVMBasicBlockRef *to_copy = xf_calloc(nedges + 1, sizeof *to_copy);   /* [nedges]: entry */
    LLVMBasicBlockRef *backs = xf_calloc(nedges, sizeof *backs);
    uint32_t *sites = xf_calloc(nedges, sizeof *sites);

    LLVMPositionBuilder(b, f->prologue, LLVMGetFirstInstruction(f->prologue));
    t->frame = LLVMBuildAlloca(b, t->frame_type, "vigil.frame");
    /* f's shared objects move into the frame; the old allocas are left without uses (the
     * clone map still names them) for the cleanup to remove. */
    for (size_t i = 0; i < t->shared.n; i++) {
        LLVMValueRef a = t->shared.v[i], object = shared_object(x, t, t->frame, i);
        if (LLVMGetAlignment(a) > LLVMGetAlignment(t->frame))
            LLVMSetAlignment(t->frame, LLVMGetAlignment(a));
        LLVMReplaceAllUsesWith(a, object);
    }

    /* The entry: callers inside a burst call f itself, so the entry check tests the burst. */
    uint32_t site = f->entry_site = xs_add_entry(x, f->name, f->subprogram);
    struct xl_loops *loops = xl_plan(f);
    to_copy[nedges] = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.transfer.entry");
    LLVMBasicBlockRef check = xc_build_check(f, site, entry_loc, entry, to_copy[nedges], NULL, 1, NULL, NULL);
    LLVMPositionBuilderAtEnd(b, f->prologue);
    LLVMBuildBr(b, check);
    x->stats->entry_checks++;

    for (size_t i = 0; i < nedges; i++) {
        LLVMBasicBlockRef from = LLVMValueAsBasicBlock(f->backedge_from.v[i]);
        LLVMBasicBlockRef to = LLVMValueAsBasicBlock(f->backedge_to.v[i]);
        LLVMValueRef term = LLVMGetBasicBlockTerminator(from);
        LLVMMetadataRef loc = xf_debug_loc(f, term);
        site = sites[i] = xs_add(x, VIGIL_SITE_BACKEDGE, f->name, LLVMInstructionGetDebugLoc(term), 0);
        LLVMValueRef local = xl_local(loops, i);

        /* The checking copy: count down; a burst goes to the copy, resuming at `to`. */
        to_copy[i] = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.transfer.loop");
        check = xc_build_check(f, site, loc, to, to_copy[i], local, XC_BACKEDGE_TESTS_BURST, NULL,
                               &backs[i]);
        xc_redirect(term, to, check);
        xl_note_check(loops, check, to);
        mask_known_zeros(f, t, i, backs[i]);

        /* The copy: the burst goes on at `to`; when it has ended (in a callee), the copy counts
         * this execution (f resumes past its check) and returns to f there, or coasts on at an
         * inner loop: b = burst_left; if (b == 0) { count; goto end; } burst path. The coasting
         * copy's outermost back-edges return to f. */
        LLVMBasicBlockRef to_clone = xf_clone_block(f, to), end;
        if (t->outermost[i]) {
            end = save_and_go(f, f->instr_fn, t->frame_param, &f->clones, i, t->leave, "vigil.leave.loop");
            if (t->coasting) {
                LLVMBasicBlockRef coast_to = LLVMValueAsBasicBlock(ptrmap_get(&t->coast, f->backedge_to.v[i]));
                LLVMValueRef coast_from = ptrmap_get(&t->coast, f->backedge_from.v[i]);
                xc_redirect(LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(coast_from)), coast_to, end);
            }
        } else {
            end = LLVMValueAsBasicBlock(ptrmap_get(&t->coast, f->backedge_to.v[i]));
        }
        LLVMBasicBlockRef copy_check = LLVMAppendBasicBlockInContext(x->ctx, f->instr_fn, "vigil.check.loop");
        LLVMBasicBlockRef copy_burst = LLVMAppendBasicBlockInContext(x->ctx, f->instr_fn, "vigil.burst.loop");
        LLVMBasicBlockRef copy_ended = LLVMAppendBasicBlockInContext(x->ctx, f->instr_fn, "vigil.ended.loop");
        LLVMSetCurrentDebugLocation2(b, loc ? xf_outlined_loc(f, loc) : NULL);
        LLVMPositionBuilderAtEnd(b, copy_check);
        LLVMValueRef left = LLVMBuildLoad2(b, x->i32, x->burst_left, "");
        LLVMValueRef ended = LLVMBuildICmp(b, LLVMIntEQ, left, LLVMConstInt(x->i32, 0, 0), "");
        LLVMBuildCondBr(b, ended, copy_ended, copy_burst);
        LLVMPositionBuilderAtEnd(b, copy_ended);
        xc_count_instr_exec(x, site);
        LLVMBuildBr(b, xc_build_idle_path(x, f->instr_fn, f->entry_site, to_clone, end));
        xc_build_burst_path(x, f->instr_fn, site, f->entry_site, copy_burst, to_clone, end);
        LLVMSetCurrentDebugLocation2(b, NULL);
        xc_redirect(LLVMGetBasicBlockTerminator(xf_clone_block(f, from)), to_clone, copy_check);
        LLVMAddCase(t->resume_switch, resume_point(x, i),
                    load_and_go(f, f->instr_fn, t->frame_param, &f->clones, i, to_clone, "vigil.resume.loop"));
        x->stats->backedge_checks++;
        if (local)
            x->stats->batched_checks++;
    }
    /* Inlined calls with checks of their own: a transfer resumes the copy at their head. */
    size_t ninlined = f->inlined_heads.n;
    LLVMBasicBlockRef *to_inlined = xf_calloc(ninlined, sizeof *to_inlined);
    uint32_t *inlined_sites = xf_calloc(ninlined, sizeof *inlined_sites);
    for (size_t j = 0; j < ninlined; j++)
        to_inlined[j] = LLVMAppendBasicBlockInContext(x->ctx, f->fn, "vigil.transfer.inlined");
    xi_insert_checks(f, loops, to_inlined, inlined_sites);
    for (size_t j = 0; j < ninlined; j++) {
        LLVMBasicBlockRef head = LLVMValueAsBasicBlock(f->inlined_heads.v[j]);
        LLVMAddCase(t->resume_switch, resume_point(x, nedges + j),
                    load_and_go(f, f->instr_fn, t->frame_param, &f->clones, nedges + j, xf_clone_block(f, head),
                                "vigil.resume.inlined"));
    }
    /* Transfers last: they go back through the batched loops' reload blocks. */
    build_transfer(f, to_copy[nedges], SIZE_MAX, backs, entry_loc);
    for (size_t i = 0; i < nedges; i++)
        build_transfer(f, to_copy[i], i, backs, entry_loc);
    for (size_t j = 0; j < ninlined; j++)
        build_transfer(f, to_inlined[j], nedges + j, backs, entry_loc);
    free(to_inlined);
    free(inlined_sites);
    xl_rewire(f, loops, sites);
    xl_free(loops);
    free(sites);
    free(to_copy);
    free(backs);
}

int xt_coasts(const struct xfunc *f)
{
    return f->transfer && f->transfer->coasting;
}

LLVMValueRef xt_coasting_copy(const struct xfunc *f, LLVMValueRef original)
{
    return xt_coasts(f) ? ptrmap_get(&f->transfer->coast, original) : NULL;
}

void xt_free(struct xfunc *f)
{
    if (!f->transfer)
        return;
    valvec_free(&f->transfer->by_value);
    valvec_free(&f->transfer->shared);
    free(f->transfer->shared_wrapped);
    for (size_t i = 0; f->transfer->live && i < f->transfer->ntargets; i++)
        valvec_free(&f->transfer->live[i]);
    free(f->transfer->live);
    free(f->transfer->outermost);
    free(f->transfer->zeros);
    if (f->transfer->coasting)
        ptrmap_free(&f->transfer->coast);
    for (size_t i = 0; f->transfer->reaches && i < f->backedge_from.n; i++)
        free(f->transfer->reaches[i]);
    free(f->transfer->reaches);
    for (size_t b = 0; f->transfer->preds && b < f->blocks.n; b++) {
        valvec_free(&f->transfer->preds[b]);
        valvec_free(&f->transfer->succs[b]);
    }
    free(f->transfer->preds);
    free(f->transfer->succs);
    free(f->transfer->kill);
    ptrmap_free(&f->transfer->block_index);
    free(f->transfer);
    f->transfer = NULL;
}
