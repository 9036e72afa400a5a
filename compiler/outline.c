/* The instrumented copy as a function of its own (VIGIL_CC_OUTLINE, docs/performance.md).
 *
 * A function without loops needs no dispatch check but the one at its entry, so its
 * instrumented copy does not have to live in the same function: the checking copy keeps the
 * original body and size (the inliner and the register allocator see the plain function; a
 * leaf stays a leaf, without the callee-saved pushes the probes' calls would need), and the
 * entry check's slow path tail-calls `<name>.vigil.instr` with the same arguments.
 *
 * The outlined copy gets a DISubprogram of its own (debug locations must be scoped to the
 * function that holds them) in a compile unit that vigil-cc adds to the module, so that its
 * PCs still map to the original file:line (leak sites, crash sites, stacks). */
#include "xform.h"

#include <llvm-c/Comdat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Function attributes the copy must not keep: it is never inlined (that would fold it back
 * into the checking copy) and is only reached through the rare path. */
static const char *const dropped_fn_attributes[] = {"alwaysinline", "inlinehint"};

long xf_instruction_count(LLVMValueRef fn)
{
    long n = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b))
        for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
            n++;
    return n;
}

/* Outlined: functions without loops; and giant functions with loops, whose two copies in one
 * function would make the back end's register coalescing take minutes (sqlite3VdbeExec): they
 * get an entry check only, so a burst that starts at their entry lasts until they return. */
int xf_can_outline(struct xfunc *f)
{
    if (!f->x->settings->outline)
        return 0;
    if (f->backedge_from.n != 0) {
        if (xf_instruction_count(f->fn) <= f->x->settings->dual_max)
            return 0;
        f->big = 1;
    }
    if (LLVMIsFunctionVarArg(LLVMGlobalGetValueType(f->fn)))
        return 0;   /* forwarding varargs needs musttail, which the C API cannot set before 18 */
    return !xf_has_indirectbr(f);   /* blockaddress constants name this function's blocks */
}

/* fn's attributes at index (function, return value or parameter), in a new array (free it). */
static LLVMAttributeRef *attributes_at(LLVMValueRef fn, LLVMAttributeIndex index, unsigned *n)
{
    *n = LLVMGetAttributeCountAtIndex(fn, index);
    LLVMAttributeRef *attrs = xf_calloc(*n, sizeof *attrs);
    if (*n)
        LLVMGetAttributesAtIndex(fn, index, attrs);
    return attrs;
}

static void copy_attributes(LLVMValueRef from, LLVMValueRef to, LLVMAttributeIndex index)
{
    unsigned n;
    LLVMAttributeRef *attrs = attributes_at(from, index, &n);
    for (unsigned i = 0; i < n; i++)
        LLVMAddAttributeAtIndex(to, index, attrs[i]);
    free(attrs);
}

static void add_enum_attribute(struct vigil_xform *x, LLVMValueRef fn, const char *name)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(x->ctx, kind, 0));
}

/* The compile unit for the outlined copies of this module, made once. */
static LLVMMetadataRef outline_unit(struct vigil_xform *x, LLVMMetadataRef file)
{
    if (x->outline_cu)
        return x->outline_cu;
    x->dib = LLVMCreateDIBuilder(x->module);
    static const char producer[] = "vigil-cc (instrumented copies)";
    x->outline_cu = LLVMDIBuilderCreateCompileUnit(
        x->dib, LLVMDWARFSourceLanguageC99, file, producer, sizeof producer - 1, 1, "", 0, 0, "", 0,
        LLVMDWARFEmissionLineTablesOnly, 0, 0, 0, "", 0, "", 0);
    return x->outline_cu;
}

LLVMMetadataRef xf_outlined_subprogram(struct xfunc *f)
{
    struct vigil_xform *x = f->x;
    if (!f->subprogram)
        return NULL;
    LLVMMetadataRef file = LLVMDIScopeGetFile(f->subprogram);
    if (!file)
        return NULL;
    outline_unit(x, file);
    unsigned line = LLVMDISubprogramGetLine(f->subprogram);
    LLVMMetadataRef type = LLVMDIBuilderCreateSubroutineType(x->dib, file, NULL, 0, LLVMDIFlagZero);
    size_t len = strlen(f->name);
    return LLVMDIBuilderCreateFunction(x->dib, file, f->name, len, f->name, len, file, line, type,
                                       1, 1, line, LLVMDIFlagZero, 1);
}

/* Function attributes about memory effects: the companions write memory the function may not
 * (probes, a transfer frame), and a caller must not reorder memory around their calls. */
static const char *const memory_fn_attributes[] = {
    "readnone", "readonly", "writeonly", "argmemonly", "inaccessiblememonly",
    "inaccessiblemem_or_argmemonly", "memory"};

LLVMValueRef xf_new_companion(struct xfunc *f, const char *suffix, LLVMTypeRef type, int interposable)
{
    struct vigil_xform *x = f->x;
    char *name = malloc(strlen(f->name) + strlen(suffix) + 1);
    if (!name) {
        fputs("vigil-cc: out of memory\n", stderr);
        abort();
    }
    strcpy(name, f->name);
    strcat(name, suffix);
    LLVMValueRef copy = LLVMAddFunction(x->module, name, type);
    free(name);
    /* Internal linkage also makes a function dso_local, which a later external linkage keeps
     * (the C API cannot clear it): a companion that may be interposed on stays external, as
     * LLVMAddFunction made it (the caller exports it). */
    if (!interposable)
        LLVMSetLinkage(copy, LLVMInternalLinkage);
    LLVMSetFunctionCallConv(copy, LLVMGetFunctionCallConv(f->fn));
    if (LLVMGetGC(f->fn))
        LLVMSetGC(copy, LLVMGetGC(f->fn));
    copy_attributes(f->fn, copy, LLVMAttributeFunctionIndex);
    if (type == LLVMGlobalGetValueType(f->fn)) {
        copy_attributes(f->fn, copy, LLVMAttributeReturnIndex);
        unsigned nparams = LLVMCountParams(f->fn);
        for (unsigned i = 0; i < nparams; i++)
            copy_attributes(f->fn, copy, i + 1);
    }
    for (size_t i = 0; i < sizeof dropped_fn_attributes / sizeof *dropped_fn_attributes; i++)
        xf_remove_fn_attribute(copy, dropped_fn_attributes[i]);
    for (size_t i = 0; i < sizeof memory_fn_attributes / sizeof *memory_fn_attributes; i++)
        xf_remove_fn_attribute(copy, memory_fn_attributes[i]);
    add_enum_attribute(x, copy, "noinline");
    if (x->cold_section)
        LLVMSetSection(copy, x->cold_section);
    return copy;
}

LLVMValueRef xf_new_outlined_function(struct xfunc *f)
{
    LLVMValueRef copy = xf_new_companion(f, VIGIL_INSTR_SUFFIX, LLVMGlobalGetValueType(f->fn), 0);
    f->instr_subprogram = xf_outlined_subprogram(f);
    if (f->instr_subprogram)
        LLVMSetSubprogram(copy, f->instr_subprogram);
    return copy;
}

/* The burst entry "<name>.vigil.b": where instrumented code calls the function (see
 * xf_redirect_instrumented_calls). It is visible where the function is, so that instrumented
 * code of other modules finds it; only an external function's entry is exported (other
 * linkages keep theirs internal, reached from this module only). */
LLVMValueRef xf_new_burst_entry(struct xfunc *f)
{
    struct vigil_xform *x = f->x;
    int external = LLVMGetLinkage(f->fn) == LLVMExternalLinkage;
    int interposable = external && x->interposable && LLVMGetVisibility(f->fn) == LLVMDefaultVisibility;
    LLVMValueRef entry = xf_new_companion(f, VIGIL_BURST_SUFFIX, LLVMGlobalGetValueType(f->fn), interposable);
    if (external) {   /* dso_local like f unless interposable */
        LLVMSetLinkage(entry, LLVMExternalLinkage);
        LLVMSetVisibility(entry, LLVMGetVisibility(f->fn));
        LLVMSetDLLStorageClass(entry, LLVMGetDLLStorageClass(f->fn));
    }
    xf_remove_fn_attribute(entry, "cold");
    ptrmap_put(&x->burst_entries, f->fn, entry);
    return entry;
}

/* "<name><suffix>" (VIGIL_BURST_SUFFIX, VIGIL_LOCAL_BURST_SUFFIX), in a new string (free it). */
static char *entry_name(const char *name, size_t len, const char *suffix)
{
    char *s = malloc(len + strlen(suffix) + 1);
    if (!s) {
        fputs("vigil-cc: out of memory\n", stderr);
        abort();
    }
    memcpy(s, name, len);
    strcpy(s + len, suffix);
    return s;
}

/* The dynamic linker must bind "<name>.vigil.b" to the module whose <name> it binds: when the
 * program defines a function that a library exports too, both calls go to the program's. So
 * every exported function of a vigil-built module exports a burst entry; one that has none of
 * its own (its instrumented copy stays in it, or it was not transformed) exports itself under
 * that name. Left: a plain-built module that interposes on a vigil-built library's function is
 * bypassed by the library's instrumented copies (docs/architecture.md). */
void xf_export_burst_aliases(struct vigil_xform *x, const struct valvec *functions)
{
    for (size_t i = 0; i < functions->n; i++) {
        LLVMValueRef fn = functions->v[i];
        size_t len = 0;
        const char *name = LLVMGetValueName2(fn, &len);
        if (LLVMGetLinkage(fn) != LLVMExternalLinkage || LLVMGetVisibility(fn) != LLVMDefaultVisibility ||
            ptrmap_get(&x->burst_entries, fn) || !len || strncmp(name, "__vigil_", 8) == 0)
            continue;
        char *alias_name = entry_name(name, len, VIGIL_BURST_SUFFIX);
        if (!LLVMGetNamedGlobalAlias(x->module, alias_name, strlen(alias_name)) && !LLVMGetNamedFunction(x->module, alias_name))
            LLVMAddAlias2(x->module, LLVMGlobalGetValueType(fn), 0, fn, alias_name);
        free(alias_name);
    }
}

/* ---- local burst entries (x86-64 ELF) ----
 * A call of another unit's function g from an instrumented copy used to test a weak reference
 * to g.vigil.b at every call (`lea g; lea g.vigil.b; test; cmovne; call *`, about 23 bytes).
 * Where it may, it now calls `g.vigil.b.local` directly (5 bytes), a hidden symbol that
 *  - the unit defining g, built by vigil-cc, defines strongly: an alias of g's burst entry, or
 *    of g when it has none (xf_define_local_burst_entries);
 *  - every calling unit defines weakly as `jmp g`, in a COMDAT group of its own, so that a link
 *    keeps one copy (local_burst_entry).
 * The linker takes the strong definition when g's unit is in the link (an archive member is
 * loaded for g itself, which the fallback references), else the fallback: the callee's burst
 * entry when there is one, g otherwise. Hidden, neither is exported nor binds across shared
 * objects: a call into another shared object goes through the fallback to g, as the plain call
 * does, and the burst does not follow it there. A name of its own, not a weak g.vigil.b: the
 * most constraining visibility of a symbol wins, so a hidden definition of g.vigil.b would hide
 * the callee's exported one and break interposition (tests/e2e/progs/interposition.c).
 * Binding g within the link is right where the plain call binds it so: in code for an
 * executable, whose own definitions come first, and for g declared hidden or protected. Calls
 * of exported functions from shared-library code keep the weak reference: the executable may
 * interpose on them. */

/* Whether `name` can be written into module asm as it is (LLVM names may carry a \1 prefix or
 * any other byte): a C identifier. */
static int plain_symbol(const char *name, size_t len)
{
    if (!len || (name[0] >= '0' && name[0] <= '9'))
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

static int has_local_burst_entries(struct vigil_xform *x)
{
    return x->settings->direct_calls && x->x86_64_elf;
}

void xf_define_local_burst_entries(struct vigil_xform *x, const struct valvec *functions)
{
    if (!has_local_burst_entries(x))
        return;
    for (size_t i = 0; i < functions->n; i++) {
        LLVMValueRef fn = functions->v[i];
        size_t len = 0;
        const char *name = LLVMGetValueName2(fn, &len);
        /* A weak g may be replaced by another unit's: its callers must not bind to this one. */
        if (LLVMGetLinkage(fn) != LLVMExternalLinkage || LLVMGetComdat(fn) || !plain_symbol(name, len) ||
            strncmp(name, "__vigil_", 8) == 0)
            continue;
        LLVMValueRef entry = ptrmap_get(&x->burst_entries, fn);
        char *local_name = entry_name(name, len, VIGIL_LOCAL_BURST_SUFFIX);
        if (!LLVMGetNamedGlobalAlias(x->module, local_name, strlen(local_name)) && !LLVMGetNamedFunction(x->module, local_name)) {
            LLVMValueRef alias = LLVMAddAlias2(x->module, LLVMGlobalGetValueType(fn), 0, entry ? entry : fn, local_name);
            LLVMSetVisibility(alias, LLVMHiddenVisibility);
        }
        free(local_name);
    }
}

/* The weak fallback of g.vigil.b.local: `jmp g` in module asm, which forwards every signature
 * (varargs, byval, sret) untouched, in the section of the companions. Through the PLT: g may be
 * in a shared object. */
static void emit_local_burst_fallback(struct vigil_xform *x, const char *local_name, const char *name, size_t len)
{
    char *text = xf_calloc(1, 512 + 6 * strlen(local_name));
    int used = sprintf(text,
                       "\t.pushsection %s,\"axG\",@progbits,%s,comdat\n"
                       "\t.weak %s\n"
                       "\t.hidden %s\n"
                       "\t.type %s,@function\n"
                       "%s:\n"
                       "\t.cfi_startproc\n"
                       "\tjmp %.*s@PLT\n"
                       "\t.cfi_endproc\n"
                       "\t.size %s, .-%s\n"
                       "\t.popsection\n",
                       x->cold_section, local_name, local_name, local_name, local_name, local_name, (int)len, name,
                       local_name, local_name);
    LLVMAppendModuleInlineAsm(x->module, text, (size_t)used);
    free(text);
}

/* The function a call of `callee` (another unit's) in an instrumented copy goes to directly,
 * or NULL where the weak reference stays. Declared with callee's attributes but those about
 * memory effects (as a companion, xf_new_companion): the burst entry writes the probes' state. */
static LLVMValueRef local_burst_entry(struct vigil_xform *x, LLVMValueRef callee)
{
    size_t len = 0;
    const char *name = LLVMGetValueName2(callee, &len);
    if (!has_local_burst_entries(x) || LLVMGetLinkage(callee) != LLVMExternalLinkage || !plain_symbol(name, len) ||
        (x->interposable && LLVMGetVisibility(callee) == LLVMDefaultVisibility))
        return NULL;
    char *local_name = entry_name(name, len, VIGIL_LOCAL_BURST_SUFFIX);
    LLVMValueRef local = LLVMGetNamedFunction(x->module, local_name);
    if (!local) {
        local = LLVMAddFunction(x->module, local_name, LLVMGlobalGetValueType(callee));
        LLVMSetVisibility(local, LLVMHiddenVisibility);
        LLVMSetFunctionCallConv(local, LLVMGetFunctionCallConv(callee));
        unsigned nparams = LLVMCountParams(callee);
        for (unsigned i = 0; i <= nparams + 1; i++)   /* return value, parameters, function */
            copy_attributes(callee, local, i <= nparams ? i : LLVMAttributeFunctionIndex);
        for (size_t i = 0; i < sizeof memory_fn_attributes / sizeof *memory_fn_attributes; i++)
            xf_remove_fn_attribute(local, memory_fn_attributes[i]);
        emit_local_burst_fallback(x, local_name, name, len);
    }
    free(local_name);
    return local;
}

/* Instrumented code calls a function through its burst entry, so that a burst goes on in the
 * callee: directly when the entry is in this module; through a local burst entry where the
 * target and the binding allow it (above); through a weak reference otherwise (the callee's
 * module may not be built by vigil-cc, or may have kept its instrumented copy in the function:
 * then the reference is null and the call goes to the function, whose own entry check tests
 * the burst). The reference has the callee's visibility: a hidden function binds
 * within its module, and so must its entry. Indirect calls go to the function: its burst waits
 * for the next check that tests it. */
void xf_redirect_instrumented_calls(struct vigil_xform *x)
{
    LLVMBuilderRef b = x->builder;
    for (size_t i = 0; i < x->instr_calls.n; i++) {
        LLVMValueRef call = x->instr_calls.v[i];
        LLVMValueRef callee = LLVMGetCalledValue(call);
        if (!callee || !LLVMIsAFunction(callee))
            continue;
        LLVMValueRef entry = ptrmap_get(&x->burst_entries, callee);
        if (entry) {
            LLVMSetOperand(call, LLVMGetNumOperands(call) - 1, entry);
            continue;
        }
        if (!LLVMIsDeclaration(callee) || LLVMGetIntrinsicID(callee) != 0 || vigil_is_musttail(call))
            continue;
        size_t len = 0;
        const char *name = LLVMGetValueName2(callee, &len);
        if (!len || strncmp(name, "__vigil_", 8) == 0 || LLVMIsFunctionVarArg(LLVMGlobalGetValueType(callee)) ||
            xf_has_fn_attribute(callee, "returns_twice"))   /* setjmp and friends stay direct calls */
            continue;
        LLVMValueRef local = local_burst_entry(x, callee);
        if (local) {
            LLVMSetOperand(call, LLVMGetNumOperands(call) - 1, local);
            continue;
        }
        char *weak_name = entry_name(name, len, VIGIL_BURST_SUFFIX);
        LLVMValueRef weak = LLVMGetNamedFunction(x->module, weak_name);
        if (!weak) {
            weak = LLVMAddFunction(x->module, weak_name, LLVMGlobalGetValueType(callee));
            LLVMSetLinkage(weak, LLVMExternalWeakLinkage);
            if (LLVMGetVisibility(callee) != LLVMDefaultVisibility)
                LLVMSetVisibility(weak, LLVMHiddenVisibility);
        }
        free(weak_name);
        LLVMPositionBuilderBefore(b, call);
        LLVMValueRef present = LLVMBuildICmp(b, LLVMIntNE, weak, LLVMConstNull(LLVMTypeOf(weak)), "");
        LLVMValueRef target = LLVMBuildSelect(b, present, LLVMBuildPointerCast(b, weak, LLVMTypeOf(callee), ""), callee, "");
        LLVMSetOperand(call, LLVMGetNumOperands(call) - 1, target);
    }
}

/* loc, as seen from the outlined copy: a location of the function itself moves to the new
 * subprogram; an inlined one keeps its callee's scope, and its chain of call sites ends in a
 * location of the function itself, which moves. Lexical blocks are flattened: line tables
 * need the line, not the block. */
LLVMMetadataRef xf_outlined_loc(struct xfunc *f, LLVMMetadataRef loc)
{
    if (!loc || !f->instr_subprogram)
        return NULL;
    LLVMMetadataRef inlined_at = LLVMDILocationGetInlinedAt(loc);
    LLVMMetadataRef scope = inlined_at ? LLVMDILocationGetScope(loc) : f->instr_subprogram;
    return LLVMDIBuilderCreateDebugLocation(f->x->ctx, LLVMDILocationGetLine(loc), LLVMDILocationGetColumn(loc),
                                            scope, inlined_at ? xf_outlined_loc(f, inlined_at) : NULL);
}

/* block (of `from`, which has the function's type) tail-calls `target` (the function, its
 * outlined copy or its burst entry) with from's own arguments and the call-site attributes the
 * ABI needs (byval, sret, zeroext, ...), and returns its result. */
void xf_build_tail_call(struct xfunc *f, LLVMBasicBlockRef block, LLVMValueRef from, LLVMValueRef target)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    LLVMPositionBuilderAtEnd(b, block);
    unsigned n = LLVMCountParams(from);
    LLVMValueRef *args = xf_calloc(n, sizeof *args);
    for (unsigned i = 0; i < n; i++)
        args[i] = LLVMGetParam(from, i);
    LLVMTypeRef type = LLVMGlobalGetValueType(f->fn);
    LLVMValueRef call = LLVMBuildCall2(b, type, target, args, n, "");
    free(args);
    LLVMSetInstructionCallConv(call, LLVMGetFunctionCallConv(f->fn));
    for (unsigned i = 0; i <= n; i++) {   /* 0: the return value, i: parameter i - 1 */
        unsigned count;
        LLVMAttributeRef *attrs = attributes_at(f->fn, i, &count);
        for (unsigned k = 0; k < count; k++)
            LLVMAddCallSiteAttribute(call, i, attrs[k]);
        free(attrs);
    }
    /* A byval copy lives in this frame: no tail call then (the back end decides anyway). */
    static const char *const frame_attributes[] = {"byval", "inalloca", "preallocated"};
    int tail = 1;
    for (unsigned i = 1; i <= n; i++)
        for (size_t k = 0; k < sizeof frame_attributes / sizeof *frame_attributes; k++) {
            const char *a = frame_attributes[k];
            unsigned kind = LLVMGetEnumAttributeKindForName(a, strlen(a));
            if (kind && LLVMGetEnumAttributeAtIndex(f->fn, i, kind))
                tail = 0;
        }
    LLVMSetTailCall(call, tail);
    if (LLVMGetTypeKind(LLVMGetReturnType(type)) == LLVMVoidTypeKind)
        LLVMBuildRetVoid(b);
    else
        LLVMBuildRet(b, call);
}

void xf_finish_outlining(struct vigil_xform *x)
{
    if (!x->dib)
        return;
    LLVMDIBuilderFinalize(x->dib);
    LLVMDisposeDIBuilder(x->dib);
    x->dib = NULL;
}
