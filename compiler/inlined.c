/* Dispatch checks of inlined calls whose frequency can differ from their host's.
 *
 * The transform runs after the -O pipeline, so a function the optimizer inlined has no entry
 * check of its own: its code runs in the checking or instrumented copy of its host, and a rare
 * path inlined into a hot loop was sampled only when a burst of the loop's back-edge check
 * (at the floor rate) happened to cover it. Here an inlined call gets a check of its own,
 * with its own counter and schedule, when it runs on a conditional path: its head (the block
 * that dominates every block holding its code) can be skipped by an iteration of the
 * innermost loop around it (or by a call of the function, outside loops). An inlined call
 * that runs on every iteration has its host's frequency and shares its host's check.
 *
 * The inlined calls are told apart by the debug locations' inlined-at scopes: every level of
 * a location's inlined-at chain is one inlined call (nested ones included), named after the
 * callee's subprogram. The site is an entry site of that callee, at its declaration line, one
 * per callee in the module: all its inlined calls there share one counter and schedule, so
 * that the rate follows how often the source function runs, as its own entry check's would
 * (a check per call made 72 sites of bzip2's compress.c, 55 of them for bsW, each starting at
 * 100%).
 *
 * Code shape, for head H of the original body:
 *   checking copy:  every edge into H goes through the countdown of the site (no burst test,
 *                   as at back-edges): c = counters[s] - 1; counters[s] = c;
 *                   if (c < 0 && __vigil_dispatch_enter(&m, s)) -> H in the instrumented copy
 *                   (the clone, or a transfer into the outlined copy resumed at H);
 *   instrumented copy: edges into H's clone count the execution and the burst down, without
 *                   ending it (the next back-edge or entry check does): the copy is never left
 *                   in the middle of a loop, where the checking copy would no longer see a loop.
 * With transfers (transfer.c), only heads outside loops or in outermost loops get a check:
 * the copy returns to the checking copy at an outermost back-edge only, so a burst begun in an
 * inner loop coasts on (in the copy without probes) until its outer loop's iteration ends, and
 * a check in an inner loop of a long outer loop (bzip2's compression loops) kept the thread
 * there for most of the run.
 * Interpreters' dispatch loops (computed gotos, giant functions given transfers) get none: each
 * handler is a conditional path, and a check there would run with every opcode.
 * Functions whose instrumented copy is outlined without transfers (loop-free functions and
 * functions over VIGIL_CC_DUAL_MAX) have no way into their copy but the entry: their inlined
 * calls share the entry check. */
#include "xform.h"

#include "abi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The callee's subprogram of a local scope (a lexical block's enclosing one), or NULL. */
static LLVMMetadataRef subprogram_of(struct vigil_xform *x, LLVMMetadataRef scope)
{
    for (int depth = 0; scope && depth < 256; depth++) {
        LLVMMetadataKind kind = LLVMGetMetadataKind(scope);
        if (kind == LLVMDISubprogramMetadataKind)
            return scope;
        if (kind != LLVMDILexicalBlockMetadataKind && kind != LLVMDILexicalBlockFileMetadataKind)
            return NULL;
        LLVMValueRef node = LLVMMetadataAsValue(x->ctx, scope);   /* operand 1: the enclosing scope */
        unsigned nops = LLVMGetMDNodeNumOperands(node);
        if (nops < 2)
            return NULL;
        LLVMValueRef ops[nops];
        LLVMGetMDNodeOperands(node, ops);
        scope = ops[1] ? LLVMValueAsMetadata(ops[1]) : NULL;
    }
    return NULL;
}

/* A subprogram's name (operand 2 of a DISubprogram), copied into buf; "" when unknown. */
static const char *subprogram_name(struct vigil_xform *x, LLVMMetadataRef sp, char *buf, size_t size)
{
    buf[0] = 0;
    LLVMValueRef node = LLVMMetadataAsValue(x->ctx, sp);
    unsigned n = LLVMGetMDNodeNumOperands(node);
    if (n < 3)
        return buf;
    LLVMValueRef ops[n];
    LLVMGetMDNodeOperands(node, ops);
    unsigned len = 0;
    const char *name = ops[2] ? LLVMGetMDString(ops[2], &len) : NULL;
    if (name)
        snprintf(buf, size, "%.*s", (int)len, name);
    return buf;
}

static int is_debug_intrinsic(LLVMValueRef inst)
{
    return xf_is_call_to_prefix(inst, "llvm.dbg.") || xf_is_call_to_prefix(inst, "llvm.lifetime.");
}

/* One inlined call: its inlined-at location (the key), its callee, the blocks holding its code
 * and how many instructions. */
struct call {
    LLVMMetadataRef at, callee, loc;
    size_t head;      /* nearest common dominator of its blocks (index into f->blocks) */
    long instructions;
};

/* xform.h */
size_t *xf_dominators(size_t n, const struct valvec *succs, const struct valvec *preds)
{
    size_t *order = xf_calloc(n, sizeof *order), *rpo = xf_calloc(n, sizeof *rpo);
    size_t *stack = xf_calloc(n, sizeof *stack), *next = xf_calloc(n, sizeof *next);
    unsigned char *seen = xf_calloc(n, 1);
    size_t depth = 0, count = 0;
    stack[depth++] = 0;
    seen[0] = 1;
    while (depth) {
        size_t u = stack[depth - 1];
        if (next[u] < succs[u].n) {
            size_t v = (size_t)succs[u].v[next[u]++] - 1;
            if (!seen[v]) {
                seen[v] = 1;
                stack[depth++] = v;
            }
            continue;
        }
        order[count++] = u;   /* postorder */
        depth--;
    }
    for (size_t i = 0; i < n; i++)
        rpo[i] = SIZE_MAX;
    for (size_t i = 0; i < count; i++)
        rpo[order[count - 1 - i]] = i;
    size_t *idom = xf_calloc(n, sizeof *idom);
    for (size_t i = 0; i < n; i++)
        idom[i] = SIZE_MAX;
    idom[0] = 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 1; i < count; i++) {
            size_t b = order[count - 1 - i], dom = SIZE_MAX;
            for (size_t k = 0; k < preds[b].n; k++) {
                size_t p = (size_t)preds[b].v[k] - 1;
                if (idom[p] == SIZE_MAX)
                    continue;
                if (dom == SIZE_MAX) {
                    dom = p;
                    continue;
                }
                size_t a = p, c = dom;
                while (a != c) {
                    while (rpo[a] > rpo[c])
                        a = idom[a];
                    while (rpo[c] > rpo[a])
                        c = idom[c];
                }
                dom = a;
            }
            if (dom != idom[b]) {
                idom[b] = dom;
                changed = 1;
            }
        }
    }
    free(order);
    free(rpo);
    free(stack);
    free(next);
    free(seen);
    return idom;
}

static size_t common_dominator(const size_t *idom, const size_t *depth, size_t a, size_t b)
{
    while (a != b) {
        if (depth[a] >= depth[b])
            a = idom[a];
        else
            b = idom[b];
    }
    return a;
}

/* Whether `head` can be skipped by one pass through its host: the innermost checked loop
 * around it (the smallest body of a back-edge that holds it) or, outside loops, the function.
 * Skipped: a path from the host's header (the entry) that avoids head reaches a return, the
 * header again or the loop's exit. Paths into `unreachable` (abort, a failed assertion) do not
 * count: a call after `if (!p) abort();` runs whenever its host runs on. */
static int is_conditional(struct xfunc *f, size_t head, const struct valvec *succs, const struct valvec *preds,
                          const size_t *block_of, int *nested)
{
    size_t n = f->blocks.n, header = 0;
    unsigned char *body = NULL;
    size_t body_size = SIZE_MAX;
    for (size_t i = 0; i < f->backedge_from.n; i++) {
        size_t h = block_of[i * 2 + 1], s = block_of[i * 2];
        unsigned char *b = xf_reach(preds, n, s, 1, h);
        if (!b[head]) {
            free(b);
            continue;
        }
        size_t size = 0;
        for (size_t k = 0; k < n; k++)
            size += b[k];
        if (size < body_size) {
            free(body);
            body = b;
            body_size = size;
            header = h;
        } else {
            free(b);
        }
    }
    *nested = 0;
    for (size_t i = 0; body && i < f->backedge_from.n && !*nested; i++) {
        size_t h = block_of[i * 2 + 1], s = block_of[i * 2];
        if (h == header)
            continue;
        unsigned char *b = xf_reach(preds, n, s, 1, h);
        *nested = b[header];
        free(b);
    }
    if (header == head) {
        free(body);
        return 0;
    }
    unsigned char *seen = xf_reach(succs, n, header, 1, head);
    int conditional = 0;
    for (size_t b = 0; b < n && !conditional; b++) {
        if (!seen[b] || b == head)
            continue;
        LLVMValueRef term = LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(f->blocks.v[b]));
        if (term && LLVMIsAReturnInst(term))
            conditional = 1;
        for (size_t k = 0; k < succs[b].n && !conditional; k++) {
            size_t to = (size_t)succs[b].v[k] - 1;
            conditional = (body && !body[to]) || (body && to == header);
        }
    }
    free(seen);
    free(body);
    return conditional;
}

static struct call *find_call(struct call **calls, size_t *ncalls, size_t *cap, LLVMMetadataRef at)
{
    for (size_t i = 0; i < *ncalls; i++)
        if ((*calls)[i].at == at)
            return &(*calls)[i];
    if (*ncalls == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *calls = realloc(*calls, *cap * sizeof **calls);
        if (!*calls) {
            fputs("vigil-cc: out of memory\n", stderr);
            abort();
        }
    }
    struct call *c = &(*calls)[(*ncalls)++];
    memset(c, 0, sizeof *c);
    c->at = at;
    c->head = SIZE_MAX;
    return c;
}

void xf_find_inlined_calls(struct xfunc *f, int outermost_only)
{
    struct vigil_xform *x = f->x;
    long min = x->settings->inlined_checks;
    size_t n = f->blocks.n;
    /* An interpreter's loop (computed gotos, or a giant function given transfers): its handlers
     * all run on conditional paths of the dispatch loop, and checks there would cost every
     * opcode (lua's luaV_execute had 38). */
    if (min <= 0 || !f->subprogram || n < 2 || f->giant_transfers || xf_has_indirectbr(f))
        return;
    struct ptrmap index;
    ptrmap_init(&index);
    for (size_t i = 0; i < n; i++)
        ptrmap_put(&index, f->blocks.v[i], (void *)(i + 1));
    struct valvec *succs = xf_calloc(n, sizeof *succs), *preds = xf_calloc(n, sizeof *preds);
    unsigned char *indirect = xf_calloc(n, 1);   /* a target of an indirectbr: no check before it */
    for (size_t b = 0; b < n; b++) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(f->blocks.v[b]));
        unsigned nsucc = term ? LLVMGetNumSuccessors(term) : 0;
        for (unsigned k = 0; k < nsucc; k++) {
            size_t to = (size_t)ptrmap_get(&index, LLVMBasicBlockAsValue(LLVMGetSuccessor(term, k)));
            if (!to)
                continue;
            if (LLVMGetInstructionOpcode(term) == LLVMIndirectBr)
                indirect[to - 1] = 1;
            valvec_push(&succs[b], (LLVMValueRef)to);
            valvec_push(&preds[to - 1], (LLVMValueRef)(b + 1));
        }
    }
    size_t *idom = xf_dominators(n, succs, preds);
    size_t *depth = xf_calloc(n, sizeof *depth);
    for (size_t b = 0; b < n; b++) {
        size_t d = 0;
        for (size_t a = b; idom[a] != SIZE_MAX && a != 0 && d <= n; a = idom[a])
            d++;
        depth[b] = idom[b] == SIZE_MAX ? SIZE_MAX : d;
    }

    /* Every level of every location's inlined-at chain. */
    struct call *calls = NULL;
    size_t ncalls = 0, cap = 0;
    for (size_t b = 0; b < n; b++) {
        if (depth[b] == SIZE_MAX)
            continue;
        for (LLVMValueRef inst = LLVMGetFirstInstruction(LLVMValueAsBasicBlock(f->blocks.v[b])); inst;
             inst = LLVMGetNextInstruction(inst)) {
            LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(inst);
            if (!loc || is_debug_intrinsic(inst))
                continue;
            for (int level = 0; level < 64; level++) {
                LLVMMetadataRef at = LLVMDILocationGetInlinedAt(loc);
                if (!at)
                    break;
                struct call *c = find_call(&calls, &ncalls, &cap, at);
                if (!c->callee) {
                    c->callee = subprogram_of(x, LLVMDILocationGetScope(loc));
                    c->loc = at;
                }
                c->instructions++;
                c->head = c->head == SIZE_MAX ? b : common_dominator(idom, depth, c->head, b);
                loc = at;
            }
        }
    }

    size_t *block_of = xf_calloc(2 * f->backedge_from.n + 1, sizeof *block_of);
    unsigned char *header = xf_calloc(n, 1);
    for (size_t i = 0; i < f->backedge_from.n; i++) {
        block_of[2 * i] = (size_t)ptrmap_get(&index, f->backedge_from.v[i]) - 1;
        block_of[2 * i + 1] = (size_t)ptrmap_get(&index, f->backedge_to.v[i]) - 1;
        header[block_of[2 * i + 1]] = 1;
    }
    unsigned char *taken = xf_calloc(n, 1);
    for (size_t i = 0; i < ncalls; i++) {
        struct call *c = &calls[i];
        size_t h = c->head;
        int nested = 0;
        if (!c->callee || c->instructions < min || h == 0 || taken[h] || header[h] || indirect[h] ||
            !is_conditional(f, h, succs, preds, block_of, &nested) || (nested && outermost_only))
            continue;
        taken[h] = 1;
        if (x->settings->debug) {
            char name[256];
            fprintf(stderr, "vigil-cc: note: %s: a check for its inlined call of %s (%ld instructions)\n", f->name,
                    subprogram_name(x, c->callee, name, sizeof name), c->instructions);
        }
        valvec_push(&f->inlined_heads, f->blocks.v[h]);
        valvec_push(&f->inlined_callees, LLVMMetadataAsValue(x->ctx, c->callee));
    }
    free(taken);
    free(header);
    free(block_of);
    free(calls);
    free(depth);
    free(idom);
    free(indirect);
    for (size_t b = 0; b < n; b++) {
        valvec_free(&succs[b]);
        valvec_free(&preds[b]);
    }
    free(succs);
    free(preds);
    ptrmap_free(&index);
}

/* The instrumented copy's side: state[d].instr_execs += 1; b = burst_left;
 * if (b > 1) burst_left = b - 1; -> clone. */
static LLVMBasicBlockRef build_copy_count(struct xfunc *f, LLVMValueRef fn, uint32_t site, LLVMBasicBlockRef clone)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    char name[48];
    snprintf(name, sizeof name, "vigil.inlined.burst.%u", site);
    LLVMBasicBlockRef count = LLVMAppendBasicBlockInContext(x->ctx, fn, name);
    LLVMPositionBuilderAtEnd(b, count);
    xc_count_instr_exec(x, site);
    LLVMValueRef left = LLVMBuildLoad2(b, x->i32, x->burst_left, "");
    LLVMValueRef one = LLVMConstInt(x->i32, 1, 0);
    LLVMValueRef more = LLVMBuildICmp(b, LLVMIntUGT, left, one, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, more, LLVMBuildSub(b, left, one, ""), left, ""), x->burst_left);
    LLVMBuildBr(b, clone);
    return count;
}

void xi_insert_checks(struct xfunc *f, struct xl_loops *loops, LLVMBasicBlockRef *instrumented, uint32_t *sites)
{
    struct vigil_xform *x = f->x;
    for (size_t j = 0; j < f->inlined_heads.n; j++) {
        LLVMBasicBlockRef head = LLVMValueAsBasicBlock(f->inlined_heads.v[j]);
        LLVMMetadataRef callee = LLVMValueAsMetadata(f->inlined_callees.v[j]);
        /* One site per callee in the module: its inlined calls count down one counter, as
         * the calls of a function count down its entry check's. */
        uint32_t site = (uint32_t)(uintptr_t)ptrmap_get(&x->inlined_sites, callee);
        if (site--) {
            sites[j] = site;
        } else {
            char name[512];
            site = sites[j] = xs_add_entry(x, subprogram_name(x, callee, name, sizeof name), callee);
            ptrmap_put(&x->inlined_sites, callee, (void *)(uintptr_t)(site + 1));
        }
        LLVMMetadataRef loc = xf_debug_loc(f, LLVMGetFirstInstruction(head));
        LLVMBasicBlockRef back;
        LLVMBasicBlockRef check = xc_build_countdown(f, site, loc, head, instrumented[j], NULL, NULL, &back);
        LLVMBasicBlockRef clone = xf_clone_block(f, head);
        LLVMBasicBlockRef count = build_copy_count(f, LLVMGetBasicBlockParent(clone), site, clone);
        /* Every original edge into head (and its clone's) goes through the check. */
        for (size_t i = 0; i < f->blocks.n; i++) {
            LLVMBasicBlockRef from = LLVMValueAsBasicBlock(f->blocks.v[i]);
            LLVMValueRef term = LLVMGetBasicBlockTerminator(from);
            int into = 0;
            for (unsigned k = 0, nsucc = term ? LLVMGetNumSuccessors(term) : 0; k < nsucc && !into; k++)
                into = LLVMGetSuccessor(term, k) == head;
            if (!into)
                continue;
            xc_redirect(term, head, check);
            LLVMBasicBlockRef from_clone = xf_clone_block(f, from);
            if (from_clone)
                xc_redirect(LLVMGetBasicBlockTerminator(from_clone), clone, count);
        }
        if (loops)
            xl_note_check(loops, check, head);
        x->stats->entry_checks++;
        x->stats->inlined_checks++;
    }
}
