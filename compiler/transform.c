/* vigil_transform_module: which functions are transformed, in which order the pieces run
 * (see xform.h), and verification. */
#include "xform.h"

#include <llvm-c/Analysis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void valvec_push(struct valvec *vec, LLVMValueRef value)
{
    if (vec->n == vec->cap) {
        size_t cap = vec->cap ? vec->cap * 2 : 16;
        LLVMValueRef *v = realloc(vec->v, cap * sizeof *v);
        if (!v) {
            fputs("vigil-cc: out of memory\n", stderr);
            abort();
        }
        vec->v = v;
        vec->cap = cap;
    }
    vec->v[vec->n++] = value;
}

void *xf_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fputs("vigil-cc: out of memory\n", stderr);
        abort();
    }
    return p;
}

void valvec_free(struct valvec *vec)
{
    free(vec->v);
    memset(vec, 0, sizeof *vec);
}

/* The called function's name, looking through pointer casts; "" for indirect calls. */
const char *xf_callee_name(LLVMValueRef call)
{
    LLVMValueRef callee = LLVMGetCalledValue(call);
    while (callee && LLVMIsAConstantExpr(callee) && LLVMGetConstOpcode(callee) == LLVMBitCast)
        callee = LLVMGetOperand(callee, 0);
    if (!callee || !LLVMIsAFunction(callee))
        return "";
    size_t len = 0;
    return LLVMGetValueName2(callee, &len);
}

int xf_is_call_to_prefix(LLVMValueRef inst, const char *prefix)
{
    return LLVMIsACallInst(inst) && strncmp(xf_callee_name(inst), prefix, strlen(prefix)) == 0;
}

int xf_is_real_call(LLVMValueRef inst)
{
    if (!LLVMIsACallInst(inst))
        return 0;
    LLVMValueRef callee = LLVMGetCalledValue(inst);
    return !callee || !LLVMIsAFunction(callee) || LLVMGetIntrinsicID(callee) == 0;   /* inline asm too */
}

int xf_is_noreturn_call(LLVMValueRef inst)
{
    if (!LLVMIsACallInst(inst))
        return 0;
    unsigned kind = LLVMGetEnumAttributeKindForName("noreturn", 8);
    if (LLVMGetCallSiteEnumAttribute(inst, LLVMAttributeFunctionIndex, kind))
        return 1;
    LLVMValueRef callee = LLVMGetCalledValue(inst);
    return callee && LLVMIsAFunction(callee) && LLVMGetEnumAttributeAtIndex(callee, LLVMAttributeFunctionIndex, kind);
}

int xf_has_fn_attribute(LLVMValueRef fn, const char *name)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    return kind && LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, kind) != NULL;
}

void xf_remove_fn_attribute(LLVMValueRef fn, const char *name)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    if (kind)
        LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, kind);
}

int xf_has_indirectbr(struct xfunc *f)
{
    for (size_t i = 0; i < f->blocks.n; i++) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(f->blocks.v[i]));
        if (term && LLVMGetInstructionOpcode(term) == LLVMIndirectBr)
            return 1;
    }
    return 0;
}

/* The block after `inst`'s position: inst and everything after it move into a new block
 * placed right after the old one, which is left without a terminator (the caller ends it).
 * NULL when a successor has PHIs (they would name the old block; demotion removes them from
 * the bodies, so this does not happen in practice). */
LLVMBasicBlockRef xf_split_before(struct xfunc *f, LLVMValueRef inst, const char *name)
{
    struct vigil_xform *x = f->x;
    LLVMBasicBlockRef old = LLVMGetInstructionParent(inst);
    LLVMValueRef term = LLVMGetBasicBlockTerminator(old);
    for (unsigned i = 0; term && i < LLVMGetNumSuccessors(term); i++) {
        LLVMValueRef first = LLVMGetFirstInstruction(LLVMGetSuccessor(term, i));
        if (first && LLVMIsAPHINode(first))
            return NULL;
    }
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(x->ctx, LLVMGetBasicBlockParent(old), name);
    LLVMMoveBasicBlockAfter(cont, old);
    LLVMPositionBuilderAtEnd(x->builder, cont);
    for (LLVMValueRef i = inst, next; i; i = next) {
        next = LLVMGetNextInstruction(i);
        LLVMInstructionRemoveFromParent(i);
        xf_insert_keeping_loc(x->builder, i, "");
    }
    return cont;
}

/* Whether VIGIL_CC_CONFIG's [skip] names fn: by its name (fun:), or by the unit's source file
 * or the file fn is defined in (src:; a function of a header counts as the header's too). */
static int configured_skip(struct vigil_xform *x, LLVMValueRef fn, const char *name)
{
    if (!x->settings->config)
        return 0;
    if (xcc_config_match(x, NULL, "skip", name, x->settings->source_name))
        return 1;
    LLVMMetadataRef subprogram = LLVMGetSubprogram(fn);
    if (!subprogram)
        return 0;
    char *file = xs_scope_file(subprogram);
    int hit = *file && xcc_config_match(x, NULL, "skip", NULL, file);
    free(file);
    return hit;
}

static const char config_skip[] = "[skip] of VIGIL_CC_CONFIG";

/* Why fn must be left as it is, or NULL when it can be transformed. */
static const char *reason_to_skip(struct vigil_xform *x, LLVMValueRef fn)
{
    size_t len = 0;
    const char *name = LLVMGetValueName2(fn, &len);
    if (configured_skip(x, fn, name))
        return config_skip;
    if (LLVMGetLinkage(fn) == LLVMAvailableExternallyLinkage)
        return "available_externally";
    if (strncmp(name, "__vigil_", 8) == 0)
        return "reserved __vigil_ name";
    if (xf_has_fn_attribute(fn, "naked"))
        return "naked function";
    for (LLVMBasicBlockRef block = LLVMGetFirstBasicBlock(fn); block; block = LLVMGetNextBasicBlock(block))
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst; inst = LLVMGetNextInstruction(inst)) {
            switch (LLVMGetInstructionOpcode(inst)) {
            case LLVMCallBr:
                return "asm goto (callbr)";
            case LLVMInvoke: case LLVMLandingPad: case LLVMResume: case LLVMCleanupRet:
            case LLVMCatchRet: case LLVMCatchSwitch: case LLVMCatchPad: case LLVMCleanupPad:
                return "exception handling";
            default:
                break;
            }
            if (LLVMGetTypeKind(LLVMTypeOf(inst)) == LLVMTokenTypeKind)
                return "token-typed value";
            if (LLVMIsACallInst(inst)) {
                LLVMValueRef callee = LLVMGetCalledValue(inst);
                if (LLVMIsAFunction(callee) && xf_has_fn_attribute(callee, "noduplicate"))
                    return "call to a noduplicate function";
            }
        }
    return NULL;
}

static void add_volatile(struct vigil_xform *x, LLVMValueRef global, int delta)
{
    LLVMValueRef old = LLVMBuildLoad2(x->builder, x->i32, global, "");
    LLVMSetVolatile(old, 1);
    LLVMValueRef sum = LLVMBuildAdd(x->builder, old, LLVMConstInt(x->i32, (unsigned long long)(long long)delta, 1), "");
    LLVMSetVolatile(LLVMBuildStore(x->builder, sum, global), 1);
}

/* A program's main counts its calls in progress and says when one returned (common/abi.h
 * __vigil_main_active): after that, the main thread's frames below main's caller are dead. Done
 * before the copies are made, so that every copy's entry and returns count alike. */
static void count_main_calls(struct vigil_xform *x, LLVMValueRef fn)
{
    size_t len = 0;
    const char *name = LLVMGetValueName2(fn, &len);
    if (strcmp(name, "main") != 0 || LLVMGetLinkage(fn) != LLVMExternalLinkage)
        return;
    LLVMValueRef active = xe_runtime_i32(x, "__vigil_main_active"), returned = xe_runtime_i32(x, "__vigil_main_returned");
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
    LLVMValueRef first = LLVMGetFirstInstruction(entry);
    while (first && LLVMIsAAllocaInst(first))
        first = LLVMGetNextInstruction(first);
    LLVMSetCurrentDebugLocation2(x->builder, NULL);
    LLVMPositionBuilderBefore(x->builder, first);
    add_volatile(x, active, 1);
    for (LLVMBasicBlockRef block = entry; block; block = LLVMGetNextBasicBlock(block)) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(block);
        if (!term || !LLVMIsAReturnInst(term))
            continue;
        LLVMPositionBuilderBefore(x->builder, term);
        add_volatile(x, active, -1);
        LLVMSetVolatile(LLVMBuildStore(x->builder, LLVMConstInt(x->i32, 1, 0), returned), 1);
    }
}

/* Returns how the function was compiled (struct vigil_function_report's how). */
static const char *transform_function(struct vigil_xform *x, LLVMValueRef fn)
{
    const char *how;
    struct xfunc f = {.x = x, .fn = fn};
    size_t len = 0;
    f.name = LLVMGetValueName2(fn, &len);
    f.subprogram = LLVMGetSubprogram(fn);
    ptrmap_init(&f.clones);
    ptrmap_init(&f.private_slots);
    LLVMSetCurrentDebugLocation2(x->builder, NULL);

    xf_find_short_loops(&f);
    xf_demote(&f);
    xf_make_prologue(&f);
    if (xf_has_indirectbr(&f))
        xf_split_computed_gotos(&f);
    xf_find_backedges(&f);
    if (xt_can_transfer(&f)) {
        xf_find_inlined_calls(&f, 1);
        xt_outline_body(&f);
        xs_record_cfg(&f);
        xf_find_private_slots(&f);
        xt_insert_checks(&f);
        x->stats->outlined++;
        x->stats->outlined_loops++;
        how = "transfer";
    } else if (xf_can_outline(&f)) {
        xf_outline_body(&f);   /* its copy is entered at the entry only: no inlined checks */
        xs_record_cfg(&f);
        xf_find_private_slots(&f);
        xf_insert_outlined_entry_check(&f);
        x->stats->outlined++;
        x->stats->outlined_big += f.big;
        how = f.big ? "outlined-entry" : "outlined";
    } else {
        xf_find_inlined_calls(&f, 0);
        xf_clone_body(&f);
        xs_record_cfg(&f);
        xf_find_private_slots(&f);
        xf_insert_checks(&f);
        how = "cloned";
    }
    xf_insert_probes(&f);

    xt_free(&f);
    ptrmap_free(&f.clones);
    ptrmap_free(&f.private_slots);
    valvec_free(&f.blocks);
    valvec_free(&f.cloned);
    valvec_free(&f.backedge_from);
    valvec_free(&f.backedge_to);
    valvec_free(&f.inlined_heads);
    valvec_free(&f.inlined_callees);
    ptrmap_free(&f.short_headers);
    for (size_t i = 0; i < f.counted_headers.cap; i++)
        if (f.counted_headers.keys[i])
            xf_free_counted(f.counted_headers.values[i]);
    ptrmap_free(&f.counted_headers);
    return how;
}

static void report_function(struct vigil_xform *x, LLVMValueRef fn, const char *how, const char *reason,
                            uint32_t sites_before, unsigned checks_before, unsigned probes_before)
{
    if (!x->settings->on_function)
        return;
    size_t len = 0;
    const char *name = LLVMGetValueName2(fn, &len);
    char copy[1024] = "";
    if (!strcmp(how, "transfer") || !strncmp(how, "outlined", 8))
        snprintf(copy, sizeof copy, "%s%s", name, VIGIL_INSTR_SUFFIX);
    struct vigil_function_report r = {
        .name = name,
        .how = how,
        .copy = copy[0] ? copy : NULL,
        .reason = reason,
        .sites = vigil_sitefmt_count(x->sites) - sites_before,
        .checks = x->stats->entry_checks + x->stats->backedge_checks - checks_before,
        .probes = x->stats->probes - probes_before,
    };
    x->settings->on_function(x->settings->on_function_ctx, &r);
}

static int verify(LLVMModuleRef m, const char *what, char *err, size_t errlen)
{
    char *message = NULL;
    if (!LLVMVerifyModule(m, LLVMReturnStatusAction, &message)) {
        LLVMDisposeMessage(message);
        return 0;
    }
    snprintf(err, errlen, "vigil-cc: %s does not verify: %s", what, message ? message : "?");
    LLVMDisposeMessage(message);
    return -1;
}

int vigil_transform_module(LLVMModuleRef m, const struct vigil_transform_settings *settings,
                           struct vigil_transform_stats *stats, char *err, size_t errlen)
{
    struct vigil_transform_stats ignored;
    if (!stats)
        stats = &ignored;
    memset(stats, 0, sizeof *stats);
    if (LLVMGetNamedGlobal(m, "__vigil_module")) {
        if (settings->debug)
            fprintf(stderr, "vigil-cc: note: module already instrumented, left as it is\n");
        return 0;
    }
    if (verify(m, "the input module", err, errlen) != 0)
        return -1;

    struct vigil_xform x = {.module = m, .settings = settings, .stats = stats};
    x.ctx = LLVMGetModuleContext(m);
    x.builder = LLVMCreateBuilderInContext(x.ctx);
    x.layout = LLVMGetModuleDataLayout(m);
    x.void_t = LLVMVoidTypeInContext(x.ctx);
    x.i1 = LLVMInt1TypeInContext(x.ctx);
    x.i8 = LLVMInt8TypeInContext(x.ctx);
    x.i32 = LLVMInt32TypeInContext(x.ctx);
    x.i64 = LLVMInt64TypeInContext(x.ctx);
    x.ptr = vigil_pointer_to(x.i8);
    ptrmap_init(&x.burst_entries);
    ptrmap_init(&x.inlined_sites);
    x.interposable = LLVMGetModuleFlag(m, "PIC Level", 9) && !LLVMGetModuleFlag(m, "PIE Level", 9);
    x.sites = vigil_sitefmt_builder_new(settings->source_name ? settings->source_name : "");
    if (!x.sites) {
        LLVMDisposeBuilder(x.builder);
        snprintf(err, errlen, "vigil-cc: out of memory");
        return -1;
    }

    /* The functions to visit, collected first: the transform adds declarations. */
    struct valvec functions = {0};
    for (LLVMValueRef fn = LLVMGetFirstFunction(m); fn; fn = LLVMGetNextFunction(fn))
        if (!LLVMIsDeclaration(fn))
            valvec_push(&functions, fn);
    xe_declare_runtime(&x);

    int rc = 0;
    for (size_t i = 0; i < functions.n && rc == 0; i++) {
        LLVMValueRef fn = functions.v[i];
        stats->functions_seen++;
        count_main_calls(&x, fn);
        const char *reason = reason_to_skip(&x, fn);
        uint32_t sites_before = vigil_sitefmt_count(x.sites);
        unsigned checks_before = stats->entry_checks + stats->backedge_checks, probes_before = stats->probes;
        if (reason) {
            if (reason == config_skip) {   /* the tools may still give it what needs no copy */
                const struct vigil_cc_tool *tools[VIGIL_MAX_CC_TOOLS];
                for (unsigned k = 0, n = xcc_active_tools(&x, tools); k < n; k++)
                    if (tools[k]->function_skipped)
                        tools[k]->function_skipped(&x, fn);
            }
            report_function(&x, fn, "skipped", reason, sites_before, checks_before, probes_before);
            stats->functions_skipped++;
            if (settings->debug) {
                size_t len = 0;
                fprintf(stderr, "vigil-cc: note: %s: not instrumented (%s)\n", LLVMGetValueName2(fn, &len), reason);
            }
            continue;
        }
        const char *how = transform_function(&x, fn);
        report_function(&x, fn, how, NULL, sites_before, checks_before, probes_before);
        stats->functions_transformed++;
        if (LLVMVerifyFunction(fn, LLVMReturnStatusAction)) {
            size_t len = 0;
            char what[300];
            snprintf(what, sizeof what, "function %s after the transform", LLVMGetValueName2(fn, &len));
            rc = verify(m, what, err, errlen);
            if (rc == 0) {  /* the function verifier and the module verifier disagree: be safe */
                snprintf(err, errlen, "vigil-cc: %s does not verify", what);
                rc = -1;
            }
        }
    }
    if (rc == 0) {
        const struct vigil_cc_tool *tools[VIGIL_MAX_CC_TOOLS];
        for (unsigned k = 0, n = xcc_active_tools(&x, tools); k < n; k++)
            if (tools[k]->module_done)
                tools[k]->module_done(&x);
        xf_redirect_instrumented_calls(&x);
        xf_export_burst_aliases(&x, &functions);
        xf_define_local_burst_entries(&x, &functions);
    }
    xf_finish_outlining(&x);
    ptrmap_free(&x.burst_entries);
    ptrmap_free(&x.inlined_sites);
    valvec_free(&x.instr_calls);
    if (rc == 0)
        rc = xe_emit_tables(&x, err, errlen);
    if (rc == 0)
        xk_mark_synthetic_profile(&x);
    else
        free(vigil_sitefmt_finish(x.sites, 0, &(size_t){0}, NULL, NULL));
    xs_free(&x);
    if (rc == 0)
        rc = verify(m, "the transformed module", err, errlen);
    valvec_free(&functions);
    LLVMDisposeBuilder(x.builder);
    return rc;
}
