/* The memory checker's compiler part: for every load, store and memory intrinsic of the
 * instrumented copy, decide at compile time between no check, an inline bound, and the
 * runtime's check (seed 001's selective instrumentation; tools/memcheck/README.md):
 *
 *   read-only        the address is in a constant global: bypassed
 *   in bounds        constant offsets from a global or stack object, within it: bypassed
 *   stack slot       a stack slot only loaded and stored whole (xf_is_private_slot): bypassed
 *   repeated         an access to the same address, at least as wide, came before it in its
 *                    block with no call between them: checked there (its bounds; a store
 *                    there wrote the bytes, a load there was checked): bypassed
 *   tested load      a load in code named by VIGIL_CC_CONFIG's [tested] or [memcheck.tested]
 *                    (or VIGIL_CC_MEMCHECK_TESTED): bypassed (its stores keep their check)
 *   object bound     a variable offset from a global or stack object of known size: an
 *                    inline compare of the offset with the size; the runtime is called only
 *                    when it fails
 *   full             any other address (the heap, or memory the function was given): the
 *                    runtime's check of the access against the block of its base pointer and,
 *                    for a load whose value is used (a branch, an address, a call argument, a
 *                    return: not a copy), of its bytes against the fill. A load at a constant
 *                    offset from its base checks its bytes once only (the site's flag, set by
 *                    the runtime once it read initialized bytes); a load of which only some
 *                    bytes are used (a trunc, a constant mask) checks those bytes; a value
 *                    that goes through other bit operations (shifts, masks) is not followed:
 *                    they may keep only its defined bits, which only bit-precise tracking tells.
 *   array index      besides, a variable index of a statically sized array inside a type (a
 *                    struct member, a global or local array) is compared with the array's
 *                    length inline (seed 000's invariant), trailing arrays excepted (the
 *                    pre-C99 flexible array idiom).
 * A full check is a call of 4 arguments: the module's table of checks (vigil/memcheck.h, made
 * when the module is done: each check's site, size and flags, and its check-once flag), the
 * check's index, the address and the base; the runtime returns at once when the tool is off
 * (calls in bursts only). VIGIL_CC_MEMCHECK_STATS=1 prints each module's counts on stderr. */
#include "xform.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vigil/memcheck.h>

#include "ccconfig.h"

enum rule { R_READONLY, R_INBOUNDS, R_STACK_SLOT, R_REPEATED, R_TESTED, R_OBJECT_BOUND, R_FULL, R_UNKNOWN, R_RULES };
static const char *const rule_names[R_RULES] = {
    "read-only", "in-bounds", "stack-slot", "repeated", "tested-load", "object-bound", "full", "skipped",
};

/* This module's state: made on first use, printed and dropped by module_done. */
struct mc_module {
    struct vigil_xform *x;
    struct rt_fn access, range, index, value;
    LLVMValueRef on;                     /* the runtime's __vigil_memcheck_on */
    LLVMValueRef table;                  /* placeholder of the module's struct vigil_mc_table */
    uint32_t *checks;                    /* 2 per check: site, info */
    uint32_t nchecks, cap;
    uint64_t rule[R_RULES];
    uint64_t uninit, once, partial, copies, array_checks, deferred, deferred_checks;
    char *tested;                        /* VIGIL_CC_MEMCHECK_TESTED, or NULL */
    int configured;                      /* VIGIL_CC_CONFIG has [tested] or [memcheck.tested] */
};
static struct mc_module *cur;

static const struct vigil_cc_tool memcheck_cc_tool;

static struct mc_module *module_of(struct vigil_xform *x)
{
    if (cur && cur->x == x)
        return cur;
    if (cur) {
        free(cur->tested);
        free(cur->checks);
        free(cur);
    }
    cur = xf_calloc(1, sizeof *cur);
    cur->x = x;
    LLVMTypeRef m = LLVMTypeOf(x->descriptor);
    LLVMTypeRef access_args[] = {x->ptr, x->i32, x->ptr, x->ptr, x->i64};
    cur->access.type = LLVMFunctionType(x->void_t, access_args, 4, 0);
    cur->access.fn = LLVMGetNamedFunction(x->module, "__vigil_memcheck_access");
    if (!cur->access.fn)
        cur->access.fn = LLVMAddFunction(x->module, "__vigil_memcheck_access", cur->access.type);
    cur->range.type = LLVMFunctionType(x->void_t, access_args, 5, 0);
    cur->range.fn = LLVMGetNamedFunction(x->module, "__vigil_memcheck_range");
    if (!cur->range.fn)
        cur->range.fn = LLVMAddFunction(x->module, "__vigil_memcheck_range", cur->range.type);
    LLVMTypeRef value_args[] = {x->ptr, x->i32, x->ptr, x->i64};
    cur->value.type = LLVMFunctionType(x->void_t, value_args, 4, 0);
    cur->value.fn = LLVMGetNamedFunction(x->module, "__vigil_memcheck_value");
    if (!cur->value.fn)
        cur->value.fn = LLVMAddFunction(x->module, "__vigil_memcheck_value", cur->value.type);
    cur->on = xe_runtime_i32(x, "__vigil_memcheck_on");
    cur->table = LLVMAddGlobal(x->module, x->i8, "__vigil_mc_table.placeholder");
    LLVMTypeRef index_args[] = {m, x->i32, x->i64, x->i64, x->i32};
    cur->index.type = LLVMFunctionType(x->void_t, index_args, 5, 0);
    cur->index.fn = LLVMGetNamedFunction(x->module, "__vigil_memcheck_index");
    if (!cur->index.fn)
        cur->index.fn = LLVMAddFunction(x->module, "__vigil_memcheck_index", cur->index.type);
    LLVMAddAttributeAtIndex(cur->index.fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(x->ctx, LLVMGetEnumAttributeKindForName("cold", 4), 0));
    const char *tested = xcc_setting(&memcheck_cc_tool, "VIGIL_CC_MEMCHECK_TESTED");
    cur->tested = tested && *tested ? strdup(tested) : NULL;
    cur->configured = vigil_ccconfig_has(x->settings->config, "tested") ||
                      vigil_ccconfig_has(x->settings->config, "memcheck.tested");
    return cur;
}

/* ---- what an address is made of ---- */

struct array_index {
    LLVMValueRef index;
    uint64_t length;
};
#define MAX_ARRAY_INDICES 4

struct address {
    LLVMValueRef base;               /* the address without its inbounds GEPs and casts */
    int constant;                    /* every offset from base is a constant... */
    int pointer_step;                /* some GEP's first index is a variable (p + i) */
    int64_t offset;                  /* ...adding up to this */
    struct array_index arrays[MAX_ARRAY_INDICES];
    unsigned narrays;
};

static LLVMOpcode opcode_of(LLVMValueRef v)
{
    if (LLVMIsAConstantExpr(v))
        return LLVMGetConstOpcode(v);
    return LLVMIsAInstruction(v) ? LLVMGetInstructionOpcode(v) : LLVMRet;
}

/* The variable indices of gep into arrays of known length that are not a type's last member. */
static void array_indices(LLVMValueRef gep, struct address *a)
{
    LLVMTypeRef type = LLVMGetGEPSourceElementType(gep);
    LLVMTypeRef parent = NULL;
    unsigned member = 0;
    for (unsigned i = 2, n = (unsigned)LLVMGetNumOperands(gep); i < n; i++) {
        LLVMValueRef index = LLVMGetOperand(gep, i);
        LLVMTypeKind kind = LLVMGetTypeKind(type);
        if (kind == LLVMStructTypeKind) {
            if (!LLVMIsAConstantInt(index))
                return;
            parent = type;
            member = (unsigned)LLVMConstIntGetZExtValue(index);
            type = LLVMStructGetTypeAtIndex(type, member);
            continue;
        }
        if (kind != LLVMArrayTypeKind)
            return;
        uint64_t length = LLVMGetArrayLength(type);
        int trailing = parent && member + 1 == LLVMCountStructElementTypes(parent);
        if (!LLVMIsAConstantInt(index) && length > 1 && !trailing && a->narrays < MAX_ARRAY_INDICES &&
            LLVMGetTypeKind(LLVMTypeOf(index)) == LLVMIntegerTypeKind)
            a->arrays[a->narrays++] = (struct array_index){index, length};
        parent = NULL;
        type = LLVMGetElementType(type);
    }
}

static struct address split(struct vigil_xform *x, LLVMValueRef ptr)
{
    struct address a = {.base = ptr, .constant = 1};
    int geps = 0;
    for (int depth = 0; depth < 32; depth++) {
        LLVMOpcode op = opcode_of(a.base);
        if (op == LLVMBitCast || op == LLVMAddrSpaceCast) {
            a.base = LLVMGetOperand(a.base, 0);
            continue;
        }
        if (op != LLVMGetElementPtr || LLVMGetNumOperands(a.base) < 2 ||
            LLVMGetTypeKind(LLVMTypeOf(a.base)) != LLVMPointerTypeKind)
            break;
        if (!LLVMIsInBounds(a.base))
            break;   /* may step out of its object and back: the base does not bound it */
        int64_t add;
        if (a.constant && xf_gep_constant_offset(x, a.base, 1, &add))
            a.offset += add;
        else
            a.constant = 0;
        if (!LLVMIsAConstantInt(LLVMGetOperand(a.base, 1)))
            a.pointer_step = 1;
        /* only the GEP that makes the address: an inner one may form an end pointer that an
         * outer one steps back from (&a[n] - 1), which is C */
        if (geps++ == 0)
            array_indices(a.base, &a);
        a.base = LLVMGetOperand(a.base, 0);
    }
    return a;
}

/* The size of the global or stack object at base, or 0 when it has none we know. */
static uint64_t object_size(struct vigil_xform *x, LLVMValueRef base, enum vigil_mc_bound *what)
{
    LLVMTypeRef type = NULL;
    if (LLVMIsAGlobalVariable(base)) {
        type = LLVMGlobalGetValueType(base);
        *what = VIGIL_MC_GLOBAL;
        /* a definition others may replace (weak, common) or an extern array of unknown size */
        LLVMLinkage l = LLVMGetLinkage(base);
        if (l == LLVMWeakAnyLinkage || l == LLVMWeakODRLinkage || l == LLVMCommonLinkage ||
            l == LLVMLinkOnceAnyLinkage || l == LLVMExternalWeakLinkage)
            return 0;
    } else if (LLVMIsAAllocaInst(base)) {
        LLVMValueRef count = LLVMGetOperand(base, 0);
        if (!LLVMIsAConstantInt(count) || LLVMConstIntGetZExtValue(count) != 1)
            return 0;
        type = LLVMGetAllocatedType(base);
        *what = VIGIL_MC_STACK;
    }
    if (!type || !LLVMTypeIsSized(type))
        return 0;
    return LLVMABISizeOfType(x->layout, type);
}

/* ---- how a loaded value is used ---- */

static int is_intrinsic(LLVMValueRef call, const char *prefix)
{
    const char *name = xf_callee_name(call);
    return name && strncmp(name, prefix, strlen(prefix)) == 0;
}

/* The instructions where a loaded value is used (use_of's walk, when asked): each one that
 * needs the value (or one made from it) defined, and the value it has there: the load, or the
 * last load of a private slot the value was stored into or phi it went through on the way
 * (either may hold other values too). indirect: the walk went too deep, or found more than
 * USE_SITES: the sites do not say where the load's value is used. */
#define USE_SITES 8
struct use_sites {
    LLVMValueRef inst[USE_SITES];
    LLVMValueRef value[USE_SITES];   /* the load, or the load of a slot that holds its value */
    unsigned n;
    int indirect;
    LLVMValueRef cur;                /* during the walk: what value[] gets */
};

static void add_site(struct use_sites *w, LLVMValueRef inst)
{
    for (unsigned i = 0; i < w->n; i++)
        if (w->inst[i] == inst)
            return;
    if (w->n == USE_SITES) {
        w->indirect = 1;
        return;
    }
    w->inst[w->n] = inst;
    w->value[w->n++] = w->cur;
}

/* The first use of v that needs its value defined (enum vigil_mc_use), 0 when v is only
 * copied (stored, to memory other than a private slot whose loads are followed). w (if not
 * NULL) gets every such use. */
static unsigned use_of(LLVMValueRef v, int depth, struct use_sites *w)
{
    if (depth > 4) {
        if (w)
            w->indirect = 1;
        return VIGIL_MC_USE_OTHER;
    }
    unsigned found = 0;
    for (LLVMUseRef u = LLVMGetFirstUse(v); u && (w || found != VIGIL_MC_USE_BRANCH); u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        unsigned kind = 0, here = 0;   /* here: the user itself needs the value */
        if (!LLVMIsAInstruction(user))
            continue;
        switch (LLVMGetInstructionOpcode(user)) {
        case LLVMBr: case LLVMSwitch: case LLVMIndirectBr:
            kind = here = VIGIL_MC_USE_BRANCH;
            break;
        case LLVMICmp: case LLVMFCmp:
            kind = use_of(user, depth + 1, w);
            if (kind)
                kind = VIGIL_MC_USE_BRANCH;   /* a comparison decides */
            break;
        case LLVMSelect:
            if (LLVMGetOperand(user, 0) == v)
                kind = here = VIGIL_MC_USE_BRANCH;
            else
                kind = use_of(user, depth + 1, w);
            break;
        case LLVMGetElementPtr: case LLVMLoad:
            kind = here = VIGIL_MC_USE_ADDRESS;
            break;
        case LLVMStore:
            if (LLVMGetOperand(user, 1) == v) {
                kind = here = VIGIL_MC_USE_ADDRESS;
            } else if (LLVMIsAAllocaInst(LLVMGetOperand(user, 1)) && xf_is_private_slot(LLVMGetOperand(user, 1))) {
                /* a value the transform keeps in a slot: its uses are those of the slot's loads */
                LLVMValueRef slot = LLVMGetOperand(user, 1), cur = w ? w->cur : NULL;
                for (LLVMUseRef s = LLVMGetFirstUse(slot); s && (w || !kind); s = LLVMGetNextUse(s))
                    if (LLVMIsALoadInst(LLVMGetUser(s))) {
                        if (w)
                            w->cur = LLVMGetUser(s);
                        unsigned k = use_of(LLVMGetUser(s), depth + 1, w);
                        kind = kind ? kind : k;
                    }
                if (w)
                    w->cur = cur;
            }
            break;
        case LLVMCall:
            if (is_intrinsic(user, "llvm.dbg.") || is_intrinsic(user, "llvm.lifetime.") ||
                is_intrinsic(user, "llvm.assume") || is_intrinsic(user, "__vigil_"))
                kind = 0;   /* the runtime's probes are not the program's uses */
            else if (is_intrinsic(user, "llvm.mem"))
                kind = here = VIGIL_MC_USE_ADDRESS;
            else if (is_intrinsic(user, "llvm."))
                kind = use_of(user, depth + 1, w);
            else
                kind = here = VIGIL_MC_USE_CALL;
            break;
        case LLVMRet:
            kind = here = VIGIL_MC_USE_RETURN;
            break;
        case LLVMShl: case LLVMLShr: case LLVMAShr: case LLVMAnd: case LLVMOr:
            /* bit operations may keep only the defined bits (a bit buffer shifted and masked:
             * bzip2's bsBuff): without bit-precise tracking, only a load's own constant mask
             * (used_bytes) is followed */
            if (depth == 0 && LLVMGetInstructionOpcode(user) == LLVMAnd && LLVMIsAConstantInt(LLVMGetOperand(user, 1)))
                kind = use_of(user, depth + 1, w);
            break;
        case LLVMTrunc: case LLVMZExt: case LLVMSExt: case LLVMBitCast: case LLVMPtrToInt: case LLVMIntToPtr:
        case LLVMFPTrunc: case LLVMFPExt: case LLVMFPToUI: case LLVMFPToSI: case LLVMUIToFP: case LLVMSIToFP:
        case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMUDiv: case LLVMSDiv: case LLVMURem: case LLVMSRem:
        case LLVMXor:
        case LLVMFAdd: case LLVMFSub: case LLVMFMul: case LLVMFDiv: case LLVMFRem: case LLVMFNeg:
        case LLVMExtractElement: case LLVMInsertElement: case LLVMShuffleVector: case LLVMExtractValue:
        case LLVMInsertValue: case LLVMFreeze: case LLVMPHI:
            if ((LLVMGetInstructionOpcode(user) == LLVMUDiv || LLVMGetInstructionOpcode(user) == LLVMSDiv ||
                 LLVMGetInstructionOpcode(user) == LLVMURem || LLVMGetInstructionOpcode(user) == LLVMSRem) &&
                LLVMGetOperand(user, 1) == v)
                kind = here = VIGIL_MC_USE_BRANCH;
            else if (w && LLVMGetInstructionOpcode(user) == LLVMPHI) {
                LLVMValueRef cur = w->cur;
                w->cur = user;   /* its value may come from elsewhere too */
                kind = use_of(user, depth + 1, w);
                w->cur = cur;
            } else {
                kind = use_of(user, depth + 1, w);
            }
            break;
        default:
            kind = here = VIGIL_MC_USE_OTHER;
            break;
        }
        if (w && here)
            add_site(w, user);
        if (kind && (!found || kind == VIGIL_MC_USE_BRANCH || (found == VIGIL_MC_USE_OTHER)))
            found = kind;
    }
    return found;
}

/* The bytes of a load's value that its users keep (bit i: byte i), 0 for all: every user a
 * trunc, or an `and` with a constant. */
static unsigned used_bytes(struct vigil_xform *x, LLVMValueRef load)
{
    LLVMTypeRef type = LLVMTypeOf(load);
    if (LLVMGetTypeKind(type) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(type) > 64 ||
        LLVMByteOrder(x->layout) != LLVMLittleEndian)
        return 0;
    unsigned bytes = LLVMGetIntTypeWidth(type) / 8, mask = 0;
    for (LLVMUseRef u = LLVMGetFirstUse(load); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        if (LLVMIsATruncInst(user)) {
            unsigned keep = LLVMGetIntTypeWidth(LLVMTypeOf(user)) / 8;
            mask |= (1u << (keep ? keep : 1)) - 1;
        } else if (LLVMIsAInstruction(user) && LLVMGetInstructionOpcode(user) == LLVMAnd &&
                   LLVMIsAConstantInt(LLVMGetOperand(user, 1))) {
            uint64_t k = LLVMConstIntGetZExtValue(LLVMGetOperand(user, 1));
            for (unsigned i = 0; i < bytes; i++)
                if (k >> (8 * i) & 0xff)
                    mask |= 1u << i;
        } else {
            return 0;
        }
    }
    return mask == (1u << bytes) - 1 ? 0 : mask;
}

/* ---- code ---- */

/* Code named by VIGIL_CC_CONFIG's [tested] or [memcheck.tested] (the function or the file of
 * the access), or by VIGIL_CC_MEMCHECK_TESTED. */
static int tested(const struct mc_module *mc, struct xfunc *f, LLVMValueRef inst)
{
    if (!mc->tested && !mc->configured)
        return 0;
    char file[512] = "";
    LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(inst);
    LLVMMetadataRef scope = loc ? LLVMDILocationGetScope(loc) : f->subprogram;
    LLVMMetadataRef dfile = scope ? LLVMDIScopeGetFile(scope) : NULL;
    if (dfile) {
        unsigned dlen = 0, flen = 0;
        const char *dir = LLVMDIFileGetDirectory(dfile, &dlen), *name = LLVMDIFileGetFilename(dfile, &flen);
        if (name && flen && name[0] != '/' && dir && dlen)
            snprintf(file, sizeof file, "%.*s/%.*s", (int)dlen, dir, (int)flen, name);
        else if (name)
            snprintf(file, sizeof file, "%.*s", (int)flen, name);
    }
    if (mc->configured && xcc_config_match(f->x, &memcheck_cc_tool, "tested", f->name, file))
        return 1;
    if (!mc->tested)
        return 0;
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    char *list = strdup(mc->tested);
    int hit = 0;
    for (char *save = NULL, *p = strtok_r(list, ",", &save); p && !hit; p = strtok_r(NULL, ",", &save))
        hit = !fnmatch(p, f->name, 0) || (*file && (!fnmatch(p, file, 0) || !fnmatch(p, base, 0)));
    free(list);
    return hit;
}

/* if (!cond_ok) call index(...): at inst. */
static void bound_check(struct xfunc *f, struct mc_module *mc, LLVMValueRef inst, LLVMValueRef ok,
                        uint32_t site, LLVMValueRef index, LLVMValueRef bound, uint32_t what)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    LLVMBasicBlockRef before = LLVMGetInstructionParent(inst);
    LLVMBasicBlockRef after = xf_split_before(f, inst, "vigil.mc");
    if (!after)
        return;
    LLVMValueRef fn = LLVMGetBasicBlockParent(before);
    LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(x->ctx, fn, "vigil.mc.bound");
    LLVMMoveBasicBlockAfter(fail, before);
    LLVMPositionBuilderAtEnd(b, before);
    LLVMValueRef br = LLVMBuildCondBr(b, ok, after, fail);
    xe_set_weights(x, br, 1000, 1);
    LLVMPositionBuilderAtEnd(b, fail);
    LLVMValueRef args[] = {x->descriptor, LLVMConstInt(x->i32, site, 0), index, bound, LLVMConstInt(x->i32, what, 0)};
    xe_call(x, &mc->index, args, 5);
    LLVMBuildBr(b, after);
    LLVMPositionBuilderBefore(b, inst);
}

static LLVMValueRef as_i64(struct vigil_xform *x, LLVMValueRef v, int is_signed)
{
    unsigned w = LLVMGetIntTypeWidth(LLVMTypeOf(v));
    if (w == 64)
        return v;
    return w < 64 ? (is_signed ? LLVMBuildSExt : LLVMBuildZExt)(x->builder, v, x->i64, "")
                  : LLVMBuildTrunc(x->builder, v, x->i64, "");
}

/* `if (__vigil_memcheck_on) fn(args)` before inst (args made at the builder's place, before
 * it): when the tool is off, a load and a branch. When the block cannot be split, the call is
 * made unconditionally (the runtime tests the flag). */
static void guarded_call(struct xfunc *f, struct mc_module *mc, LLVMValueRef inst, const struct rt_fn *fn,
                         LLVMValueRef *args, unsigned nargs)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    LLVMBasicBlockRef before = LLVMGetInstructionParent(inst);
    LLVMBasicBlockRef after = xf_split_before(f, inst, "vigil.mc");
    if (after) {
        LLVMBasicBlockRef call = LLVMAppendBasicBlockInContext(x->ctx, LLVMGetBasicBlockParent(before), "vigil.mc.on");
        LLVMMoveBasicBlockAfter(call, before);
        LLVMPositionBuilderAtEnd(b, before);
        LLVMValueRef on = LLVMBuildLoad2(b, x->i32, mc->on, "");
        LLVMSetOrdering(on, LLVMAtomicOrderingMonotonic);
        LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, on, LLVMConstInt(x->i32, 0, 0), ""), call, after);
        LLVMPositionBuilderAtEnd(b, call);
    }
    xe_call(x, fn, args, nargs);
    if (after)
        LLVMBuildBr(b, after);
}

/* A full check of check k at inst, size bytes (size_bytes when it is constant, else 0):
 * access(table, k, ptr, base) (or range(..., size)), guarded. The runtime's own fast path
 * decides most checks without a lookup. */
static void full_check(struct xfunc *f, struct mc_module *mc, LLVMValueRef inst, LLVMValueRef ptr, LLVMValueRef base,
                       LLVMValueRef size, uint64_t size_bytes, uint32_t k)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    LLVMValueRef args[] = {LLVMConstPointerCast(mc->table, x->ptr), LLVMConstInt(x->i32, k, 0),
                           LLVMBuildPointerCast(b, ptr, x->ptr, ""), LLVMBuildPointerCast(b, base, x->ptr, ""), size};
    guarded_call(f, mc, inst, size_bytes ? &mc->access : &mc->range, args, size_bytes ? 4 : 5);
}

/* Whether a load's value fits the i64 that __vigil_memcheck_value takes: an integer of at
 * most 64 bits, a pointer, a float or a double. */
static int value_fits(LLVMValueRef load)
{
    LLVMTypeRef t = LLVMTypeOf(load);
    switch (LLVMGetTypeKind(t)) {
    case LLVMIntegerTypeKind: return LLVMGetIntTypeWidth(t) <= 64;
    case LLVMPointerTypeKind: case LLVMFloatTypeKind: case LLVMDoubleTypeKind: return 1;
    default: return 0;
    }
}

/* The loaded value as an i64, at the builder's place (value_fits). */
static LLVMValueRef value_bits(struct vigil_xform *x, LLVMValueRef v)
{
    LLVMBuilderRef b = x->builder;
    LLVMTypeRef t = LLVMTypeOf(v);
    switch (LLVMGetTypeKind(t)) {
    case LLVMPointerTypeKind: return LLVMBuildPtrToInt(b, v, x->i64, "");
    case LLVMFloatTypeKind: return LLVMBuildZExt(b, LLVMBuildBitCast(b, v, x->i32, ""), x->i64, "");
    case LLVMDoubleTypeKind: return LLVMBuildBitCast(b, v, x->i64, "");
    default: return as_i64(x, v, 0);
    }
}

/* The control flow of the function that holds the instrumented copy, as it is before the
 * checks split its blocks: made when a load that may be checked at its uses needs it. */
struct cfg {
    LLVMValueRef fn;
    struct ptrmap index;                 /* block (as a value) -> index + 1 */
    size_t n;
    struct valvec *succs;                /* per block: successors' index + 1 */
    size_t *idom;                        /* xf_dominators */
};

static void cfg_free(struct cfg *c)
{
    if (!c->fn)
        return;
    for (size_t k = 0; k < c->n; k++)
        valvec_free(&c->succs[k]);
    free(c->succs);
    free(c->idom);
    ptrmap_free(&c->index);
    c->fn = NULL;
}

/* The index + 1 of inst's block in c (made for inst's function), 0 if none. */
static size_t cfg_block(struct cfg *c, LLVMValueRef inst)
{
    LLVMBasicBlockRef block = LLVMGetInstructionParent(inst);
    LLVMValueRef fn = LLVMGetBasicBlockParent(block);
    if (c->fn != fn) {
        cfg_free(c);
        c->fn = fn;
        ptrmap_init(&c->index);
        c->n = LLVMCountBasicBlocks(fn);
        size_t i = 0;
        for (LLVMBasicBlockRef k = LLVMGetFirstBasicBlock(fn); k; k = LLVMGetNextBasicBlock(k))
            ptrmap_put(&c->index, LLVMBasicBlockAsValue(k), (void *)++i);
        c->succs = xf_calloc(c->n ? c->n : 1, sizeof *c->succs);
        struct valvec *preds = xf_calloc(c->n ? c->n : 1, sizeof *preds);
        i = 0;
        for (LLVMBasicBlockRef k = LLVMGetFirstBasicBlock(fn); k; k = LLVMGetNextBasicBlock(k), i++) {
            LLVMValueRef term = LLVMGetBasicBlockTerminator(k);
            for (unsigned e = 0; term && e < LLVMGetNumSuccessors(term); e++) {
                size_t to = (size_t)ptrmap_get(&c->index, LLVMBasicBlockAsValue(LLVMGetSuccessor(term, e)));
                valvec_push(&c->succs[i], (LLVMValueRef)to);
                valvec_push(&preds[to - 1], (LLVMValueRef)(i + 1));
            }
        }
        c->idom = xf_dominators(c->n, c->succs, preds);
        for (size_t k = 0; k < c->n; k++)
            valvec_free(&preds[k]);
        free(preds);
    }
    return (size_t)ptrmap_get(&c->index, LLVMBasicBlockAsValue(block));
}

/* Whether instruction a comes before instruction b in their block. */
static int before_in_block(LLVMValueRef a, LLVMValueRef b)
{
    for (LLVMValueRef i = a; i; i = LLVMGetNextInstruction(i))
        if (i == b)
            return 1;
    return 0;
}

static int same_function(LLVMValueRef a, LLVMValueRef b)
{
    return LLVMGetBasicBlockParent(LLVMGetInstructionParent(a)) == LLVMGetBasicBlockParent(LLVMGetInstructionParent(b));
}

/* Whether instruction a dominates instruction b. */
static int dominates(struct cfg *c, LLVMValueRef a, LLVMValueRef b)
{
    if (!same_function(a, b))
        return 0;
    size_t ia = cfg_block(c, a), ib = cfg_block(c, b);
    if (!ia || !ib)
        return 0;
    if (ia == ib)
        return before_in_block(a, b);
    for (size_t k = ib - 1; c->idom[k] != SIZE_MAX && k != 0;) {
        k = c->idom[k];
        if (k == ia - 1)
            return 1;
    }
    return 0;
}

/* Whether a path leads from instruction a to instruction b. */
static int reaches(struct cfg *c, LLVMValueRef a, LLVMValueRef b)
{
    if (!same_function(a, b))
        return 0;
    size_t ia = cfg_block(c, a), ib = cfg_block(c, b);
    if (!ia || !ib)
        return 1;
    if (ia == ib && before_in_block(a, b))
        return 1;
    unsigned char *seen = xf_reach(c->succs, c->n, ia - 1, 0, SIZE_MAX);
    int r = seen[ib - 1];
    free(seen);
    return r;
}

/* Whether the load's bytes are checked where its value is used (w's sites) rather than at the
 * load: when none of those uses is in the load's own block, the load may run where its value
 * is not used (a struct copied whole before a test of the mode that reads it: zstd's
 * ZSTD_checkOutBuffer; a load the optimizer hoisted above the test that guards its use). Each
 * site gets a check of the value it uses: only a site the program reaches reports it. A site
 * whose value (a slot's load, a phi) the load does not dominate is not one of its uses when
 * the load does not reach it (a copy of the code that has a load of its own: it is left out of
 * w); when it does, the load is checked where it is (a value check there could not have the
 * load's address). Not when a use is of a kind that cannot have a call put before it, or the
 * value is wider than 8 bytes. */
static int checked_at_uses(struct xfunc *f, struct cfg *c, LLVMValueRef load, struct use_sites *w)
{
    if (w->indirect || !w->n || !value_fits(load))
        return 0;
    void *block = ptrmap_get(&f->clone_block, load);
    if (!block)
        return 0;
    unsigned kept = 0;
    for (unsigned i = 0; i < w->n; i++) {
        if (w->value[i] != load && !dominates(c, load, w->value[i])) {
            if (reaches(c, load, w->value[i]))
                return 0;
            continue;   /* another load's value */
        }
        void *at = ptrmap_get(&f->clone_block, w->inst[i]);
        if (!at || at == block)
            return 0;   /* a use in the load's block runs whenever the load does */
        switch (LLVMGetInstructionOpcode(w->inst[i])) {
        case LLVMBr: case LLVMSwitch: case LLVMSelect: case LLVMGetElementPtr: case LLVMLoad: case LLVMStore:
        case LLVMRet: case LLVMUDiv: case LLVMSDiv: case LLVMURem: case LLVMSRem:
            break;
        case LLVMCall:
            if (!LLVMIsAInlineAsm(LLVMGetCalledValue(w->inst[i])))
                break;
            return 0;
        default:
            return 0;
        }
        w->inst[kept] = w->inst[i];
        w->value[kept++] = w->value[i];
    }
    w->n = kept;
    return 1;
}

static uint32_t add_check(struct mc_module *mc, uint32_t site, uint32_t info)
{
    if (mc->nchecks == mc->cap) {
        mc->cap = mc->cap ? 2 * mc->cap : 256;
        mc->checks = realloc(mc->checks, 2 * sizeof *mc->checks * mc->cap);
        if (!mc->checks) {
            fprintf(stderr, "vigil-cc: out of memory\n");
            abort();
        }
    }
    uint32_t k = mc->nchecks++;
    mc->checks[2 * k] = site;
    mc->checks[2 * k + 1] = info;
    return k;
}

/* use: how a load's value is used (use_of, 0 for stores and copies), mask: its bytes used
 * (used_bytes); both found before any check is placed, whose compares would be uses too.
 * at_uses: the uses where its bytes are checked instead of at the load (checked_at_uses), or
 * NULL. */
static void check_access(struct xfunc *f, struct mc_module *mc, LLVMValueRef inst, LLVMValueRef ptr,
                         LLVMValueRef size, int is_store, unsigned use, unsigned mask, int repeated,
                         const struct use_sites *at_uses)
{
    struct vigil_xform *x = f->x;
    LLVMBuilderRef b = x->builder;
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(ptr)) != 0) {
        mc->rule[R_UNKNOWN]++;
        return;
    }
    struct address a = split(x, ptr);
    uint64_t constant_size = LLVMIsAConstantInt(size) ? LLVMConstIntGetZExtValue(size) : 0;
    enum vigil_mc_bound what = VIGIL_MC_GLOBAL;
    uint64_t osize = object_size(x, a.base, &what);
    enum rule rule;
    if (LLVMIsAGlobalVariable(a.base) && LLVMIsGlobalConstant(a.base) && !is_store)
        rule = R_READONLY;
    else if (LLVMIsAAllocaInst(a.base) && xf_is_private_slot(a.base))
        rule = R_STACK_SLOT;
    else if (repeated)
        rule = R_REPEATED;
    else if (osize && a.constant && constant_size && a.offset >= 0 && (uint64_t)a.offset + constant_size <= osize)
        rule = R_INBOUNDS;
    else if (osize)
        rule = R_OBJECT_BOUND;
    else if (LLVMIsAGlobalVariable(a.base) || LLVMIsAAllocaInst(a.base))
        rule = R_UNKNOWN;   /* an object whose size is not known here (weak, extern [], VLA) */
    else if (!is_store && tested(mc, f, inst))
        rule = R_TESTED;
    else
        rule = R_FULL;
    mc->rule[rule]++;
    if (rule == R_READONLY || rule == R_STACK_SLOT || rule == R_REPEATED || rule == R_TESTED)
        return;

    LLVMMetadataRef loc = xf_debug_loc(f, inst);
    LLVMSetCurrentDebugLocation2(b, loc);
    uint32_t site = xs_add(x, is_store ? VIGIL_SITE_STORE : VIGIL_SITE_LOAD, f->name, loc,
                           constant_size <= UINT32_MAX ? (uint32_t)constant_size : 0);
    LLVMPositionBuilderBefore(b, inst);
    /* array indices, whatever the object */
    for (unsigned i = 0; i < a.narrays; i++) {
        LLVMValueRef index = as_i64(x, a.arrays[i].index, 1);
        LLVMValueRef bound = LLVMConstInt(x->i64, a.arrays[i].length, 0);
        LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntULT, index, bound, "");
        bound_check(f, mc, inst, ok, site, index, bound,
                    VIGIL_MC_ARRAY | (LLVMIsAGlobalVariable(a.base) ? VIGIL_MC_IN_GLOBAL
                                      : LLVMIsAAllocaInst(a.base) ? VIGIL_MC_IN_STACK
                                                                  : 0));
        mc->array_checks++;
    }
    if (rule == R_INBOUNDS || rule == R_UNKNOWN)
        return;
    LLVMValueRef size64 = as_i64(x, size, 0);
    if (rule == R_OBJECT_BOUND && a.narrays && !a.pointer_step)
        return;   /* the index checks bound every variable offset */
    if (rule == R_OBJECT_BOUND) {
        LLVMValueRef offset = LLVMBuildSub(b, LLVMBuildPtrToInt(b, ptr, x->i64, ""),
                                           LLVMBuildPtrToInt(b, a.base, x->i64, ""), "");
        LLVMValueRef end = LLVMBuildAdd(b, offset, size64, "");
        LLVMValueRef bound = LLVMConstInt(x->i64, osize, 0);
        /* unsigned: an offset before the start is a huge one */
        LLVMValueRef ok = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntULE, end, bound, ""),
                                       LLVMBuildICmp(b, LLVMIntULE, offset, bound, ""), "");
        bound_check(f, mc, inst, ok, site, offset, bound, what);
        return;
    }
    /* full: the runtime's check (it returns at once when the tool is off) */
    uint32_t info = is_store ? VIGIL_MC_STORE : 0, uninit = 0;
    if (!is_store) {
        if (use) {
            uninit = VIGIL_MC_UNINIT | use << VIGIL_MC_USE_SHIFT;
            uninit |= mask << VIGIL_MC_BYTES_SHIFT;
            mc->uninit++;
            mc->partial += mask != 0;
            if (a.constant) {
                uninit |= VIGIL_MC_ONCE;
                mc->once++;
            }
        } else {
            mc->copies++;
        }
    }
    uint32_t size_info = !constant_size ? 0 : constant_size < VIGIL_MC_SIZE_MAX ? (uint32_t)constant_size : VIGIL_MC_SIZE_MAX;
    if (!at_uses || !uninit)
        info |= uninit;
    uint32_t k = add_check(mc, site, info | size_info);
    full_check(f, mc, inst, ptr, a.base, size64, constant_size, k);
    if (at_uses && uninit) {
        /* the access is checked at the load, its bytes where the value is used */
        mc->deferred++;
        for (unsigned i = 0; i < at_uses->n; i++) {
            LLVMValueRef at = at_uses->inst[i];
            LLVMMetadataRef at_loc = LLVMInstructionGetDebugLoc(at);
            LLVMSetCurrentDebugLocation2(b, at_loc ? xf_debug_loc(f, at) : loc);
            LLVMPositionBuilderBefore(b, at);
            LLVMValueRef args[] = {LLVMConstPointerCast(mc->table, x->ptr),
                                   LLVMConstInt(x->i32, add_check(mc, site, uninit | size_info), 0),
                                   LLVMBuildPointerCast(b, ptr, x->ptr, ""), value_bits(x, at_uses->value[i])};
            guarded_call(f, mc, at, &mc->value, args, 4);
            mc->deferred_checks++;
        }
        LLVMSetCurrentDebugLocation2(b, loc);
    }
    LLVMPositionBuilderBefore(b, inst);
}

/* The address and width of a plain load or store, or 0. */
static uint64_t plain_access(struct vigil_xform *x, LLVMValueRef inst, LLVMValueRef *ptr)
{
    if (LLVMIsALoadInst(inst) && LLVMGetOrdering(inst) == LLVMAtomicOrderingNotAtomic) {
        *ptr = xf_strip_bitcasts(LLVMGetOperand(inst, 0));
        return LLVMStoreSizeOfType(x->layout, LLVMTypeOf(inst));
    }
    if (LLVMIsAStoreInst(inst) && LLVMGetOrdering(inst) == LLVMAtomicOrderingNotAtomic) {
        *ptr = xf_strip_bitcasts(LLVMGetOperand(inst, 1));
        return LLVMStoreSizeOfType(x->layout, LLVMTypeOf(LLVMGetOperand(inst, 0)));
    }
    return 0;
}

/* For each of todo's accesses, whether an access to the same address, at least as wide, came
 * before it in the same original block with no call between (the order of f->cloned is the
 * original order; probes added since are not in it). A load whose bytes are checked at its
 * uses (at_uses[i] set) is not such an access. */
static unsigned char *find_repeated(struct xfunc *f, const struct valvec *todo, const unsigned char *at_uses)
{
    enum { SEEN = 16 };
    unsigned char *repeated = xf_calloc(todo->n ? todo->n : 1, 1);
    LLVMValueRef seen_ptr[SEEN];
    uint64_t seen_size[SEEN];
    unsigned nseen = 0, next = 0;
    uintptr_t block = 0;
    size_t t = 0;
    for (size_t i = 0; i < f->cloned.n && t < todo->n; i++) {
        LLVMValueRef inst = f->cloned.v[i];
        uintptr_t b = (uintptr_t)ptrmap_get(&f->clone_block, inst);
        if (b != block || (LLVMIsACallInst(inst) && !is_intrinsic(inst, "llvm.dbg.") && !is_intrinsic(inst, "llvm.lifetime."))) {
            nseen = 0;   /* a new block, or a call (it may free) */
            block = b;
        }
        if (inst != todo->v[t])
            continue;
        LLVMValueRef ptr;
        uint64_t size = plain_access(f->x, inst, &ptr);
        if (size) {
            for (unsigned k = 0; k < nseen && !repeated[t]; k++)
                repeated[t] = seen_ptr[k] == ptr && seen_size[k] >= size;
            if (!repeated[t] && !at_uses[t]) {
                unsigned slot = nseen < SEEN ? nseen++ : next++ % SEEN;
                seen_ptr[slot] = ptr;
                seen_size[slot] = size;
            }
        }
        t++;
    }
    return repeated;
}

static void check_function(struct xfunc *f)
{
    struct vigil_xform *x = f->x;
    struct mc_module *mc = module_of(x);
    /* the list first: checks split the blocks as they go */
    struct valvec todo = {0};
    for (size_t i = 0; i < f->cloned.n; i++) {
        LLVMValueRef inst = f->cloned.v[i];
        LLVMOpcode op = LLVMGetInstructionOpcode(inst);
        if (op == LLVMLoad || op == LLVMStore || (op == LLVMCall && is_intrinsic(inst, "llvm.mem")))
            valvec_push(&todo, inst);
    }
    unsigned *uses = xf_calloc(todo.n, 2 * sizeof *uses);   /* [2i]: use_of, [2i+1]: used_bytes */
    struct use_sites *sites = xf_calloc(todo.n ? todo.n : 1, sizeof *sites);
    unsigned char *at_uses = xf_calloc(todo.n ? todo.n : 1, 1);
    struct cfg cfg = {0};
    for (size_t i = 0; i < todo.n; i++)
        if (LLVMIsALoadInst(todo.v[i]) && (sites[i].cur = todo.v[i], uses[2 * i] = use_of(todo.v[i], 0, &sites[i]))) {
            uses[2 * i + 1] = used_bytes(x, todo.v[i]);
            at_uses[i] = checked_at_uses(f, &cfg, todo.v[i], &sites[i]);
        }
    unsigned char *repeated = find_repeated(f, &todo, at_uses);
    for (size_t i = todo.n; i-- > 0;) {   /* backwards: a split moves only what follows */
        LLVMValueRef inst = todo.v[i];
        switch (LLVMGetInstructionOpcode(inst)) {
        case LLVMLoad:
            if (LLVMGetOrdering(inst) == LLVMAtomicOrderingNotAtomic && LLVMTypeIsSized(LLVMTypeOf(inst)))
                check_access(f, mc, inst, LLVMGetOperand(inst, 0),
                             LLVMConstInt(x->i64, LLVMStoreSizeOfType(x->layout, LLVMTypeOf(inst)), 0), 0,
                             uses[2 * i], uses[2 * i + 1], repeated[i], at_uses[i] ? &sites[i] : NULL);
            break;
        case LLVMStore:
            if (LLVMGetOrdering(inst) == LLVMAtomicOrderingNotAtomic)
                check_access(f, mc, inst, LLVMGetOperand(inst, 1),
                             LLVMConstInt(x->i64, LLVMStoreSizeOfType(x->layout, LLVMTypeOf(LLVMGetOperand(inst, 0))), 0),
                             1, 0, 0, repeated[i], NULL);
            break;
        default: {   /* llvm.memcpy / memmove / memset (dest, src or value, length, volatile) */
            const char *name = xf_callee_name(inst);
            if (!name || LLVMGetNumArgOperands(inst) < 3)
                break;
            LLVMValueRef len = LLVMGetOperand(inst, 2);
            if (LLVMGetTypeKind(LLVMTypeOf(len)) != LLVMIntegerTypeKind)
                break;
            if (!strncmp(name, "llvm.memcpy", 11) || !strncmp(name, "llvm.memmove", 12))
                check_access(f, mc, inst, LLVMGetOperand(inst, 1), len, 0, 0, 0, 0, NULL);
            if (!strncmp(name, "llvm.memcpy", 11) || !strncmp(name, "llvm.memmove", 12) ||
                !strncmp(name, "llvm.memset", 11))
                check_access(f, mc, inst, LLVMGetOperand(inst, 0), len, 1, 0, 0, 0, NULL);
            break;
        }
        }
    }
    free(uses);
    free(sites);
    free(at_uses);
    cfg_free(&cfg);
    free(repeated);
    valvec_free(&todo);
    LLVMSetCurrentDebugLocation2(x->builder, NULL);
}

/* The module's struct vigil_mc_table, in place of its placeholder: constant but the once
 * flags, which are an array of their own. */
static void emit_table(struct vigil_xform *x, struct mc_module *mc)
{
    uint32_t n = mc->nchecks;
    LLVMTypeRef once_type = LLVMArrayType(x->i8, n ? n : 1);
    LLVMValueRef once = LLVMAddGlobal(x->module, once_type, "__vigil_mc_once");
    LLVMSetLinkage(once, LLVMPrivateLinkage);
    LLVMSetInitializer(once, LLVMConstNull(once_type));
    LLVMTypeRef pair[] = {x->i32, x->i32};
    LLVMTypeRef check_type = LLVMStructTypeInContext(x->ctx, pair, 2, 0);
    LLVMValueRef *checks = xf_calloc(n ? n : 1, sizeof *checks);
    for (uint32_t k = 0; k < n; k++) {
        LLVMValueRef fields[] = {LLVMConstInt(x->i32, mc->checks[2 * k], 0), LLVMConstInt(x->i32, mc->checks[2 * k + 1], 0)};
        checks[k] = LLVMConstNamedStruct(check_type, fields, 2);
    }
    LLVMValueRef header[] = {
        LLVMConstPointerCast(x->descriptor, x->ptr), LLVMConstPointerCast(once, x->ptr),
        LLVMConstInt(x->i32, n, 0), LLVMConstInt(x->i32, 0, 0), LLVMConstArray(check_type, checks, n),
    };
    LLVMValueRef init = LLVMConstStructInContext(x->ctx, header, 5, 0);
    LLVMValueRef table = LLVMAddGlobal(x->module, LLVMTypeOf(init), "__vigil_mc_table");
    LLVMSetLinkage(table, LLVMPrivateLinkage);
    LLVMSetInitializer(table, init);
    LLVMSetGlobalConstant(table, 1);
    LLVMSetAlignment(table, 8);
    LLVMReplaceAllUsesWith(mc->table, LLVMConstPointerCast(table, LLVMTypeOf(mc->table)));
    LLVMDeleteGlobal(mc->table);
    free(checks);
}

static void module_done(struct vigil_xform *x)
{
    struct mc_module *mc = cur && cur->x == x ? cur : NULL;
    const char *stats = xcc_setting(&memcheck_cc_tool, "VIGIL_CC_MEMCHECK_STATS");
    if (mc && stats && !strcmp(stats, "1")) {
        uint64_t total = 0;
        for (int r = 0; r < R_RULES; r++)
            total += mc->rule[r];
        fprintf(stderr, "vigil-cc: memcheck: %s: %llu accesses:", x->settings->source_name ? x->settings->source_name : "?",
                (unsigned long long)total);
        for (int r = 0; r < R_RULES; r++)
            fprintf(stderr, " %s %llu", rule_names[r], (unsigned long long)mc->rule[r]);
        fprintf(stderr, "; loads checked for uninitialized bytes %llu (check-once %llu, some bytes %llu, at their uses %llu "
                "with %llu checks), copies %llu; array index checks %llu\n",
                (unsigned long long)mc->uninit, (unsigned long long)mc->once, (unsigned long long)mc->partial,
                (unsigned long long)mc->deferred, (unsigned long long)mc->deferred_checks,
                (unsigned long long)mc->copies, (unsigned long long)mc->array_checks);
    }
    if (mc) {
        emit_table(x, mc);
        free(mc->tested);
        free(mc->checks);
        free(mc);
        cur = NULL;
    }
}

static int wanted(const struct vigil_xform *x)
{
    (void)x;
    const char *on = xcc_setting(&memcheck_cc_tool, "VIGIL_CC_MEMCHECK");
    return on && strcmp(on, "0") != 0;
}

static const struct vigil_cc_setting settings[] = {
    {"VIGIL_CC_MEMCHECK", "1", "0: no memory checks in the instrumented copies (the memcheck tool then finds nothing)"},
    {"VIGIL_CC_MEMCHECK_TESTED", "", "comma-separated patterns (fnmatch) of functions or source files already tested: their loads are not checked, their stores are (the same as fun:/src: lines of [tested] in VIGIL_CC_CONFIG, the way to say it in a file)"},
    {"VIGIL_CC_MEMCHECK_STATS", "0", "1: print each module's counts of accesses per rule (bypassed, bounded inline, checked)"},
};

static const struct vigil_cc_tool memcheck_cc_tool = {
    .name = "memcheck",
    .active = wanted,
    .function_done = check_function,
    .module_done = module_done,
    .settings = settings,
    .nsettings = sizeof settings / sizeof settings[0],
    .config_sections = (const char *const[]){"tested", NULL},
};
VIGIL_REGISTER_CC_TOOL(memcheck_cc_tool);
