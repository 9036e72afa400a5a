/* The hot-spot walker's compiler part: patchable function entries (tools/hotspot/README.md,
 * "Hooks"). A function the walker may hook gets LLVM's "patchable-function-entry" attribute:
 * a 5-byte nop at its first instruction, listed in the module's __patchable_function_entries
 * section, which the runtime part (runtime/patch.c) turns into a call of its entry trampoline
 * while the program runs and back into the nop when the hook is removed.
 *
 * Where: the checking copy only, the function that keeps the original's name and that every
 * call from plain code, a function pointer or another module reaches. The instrumented copy
 * (<name>.vigil.instr) is entered from it, and burst entries (<name>.vigil.b) are reached only
 * from instrumented copies, during bursts: a hook sees every call but those made from inside a
 * burst. Which functions: those with a loop, those that call a function (every caller a walk
 * may climb to), and those of at least VIGIL_CC_HOTSPOT_MIN instructions (LLVM IR, before the
 * transform); small leaves without a loop are left without a nop: they are the most called,
 * a nop at their entry would be most of the unpatched cost, and a walk that starts in one
 * starts at its caller instead (runtime/walk.c). Functions that VIGIL_CC_CONFIG's [skip]
 * leaves plain get their entry by the same rule: a run can still hook them. A config with a
 * [hotspot.entries] section gives entries to the functions it lists and to no other (vigil
 * observe writes it from where a sampled run found the time). */
#include "xform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct vigil_cc_tool hotspot_cc_tool;

static long setting_number(const char *name, long def)
{
    const char *v = xcc_setting(&hotspot_cc_tool, name);
    if (!v || !*v)
        return def;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 0) {
        static int said;   /* once per compilation */
        if (!said++)
            fprintf(stderr, "vigil-cc: %s=%s: expected a non-negative number; using %ld\n", name, v, def);
        return def;
    }
    return n;
}

/* Instructions of a body's blocks; *calls: whether it calls a function (intrinsics, inline
 * assembly and calls that never return are not: no hot stack passes through them). */
static long count_instructions(LLVMBasicBlockRef first, const struct valvec *blocks, int *calls)
{
    long n = 0;
    *calls = 0;
    size_t i = 0;
    for (LLVMBasicBlockRef b = blocks ? (blocks->n ? LLVMValueAsBasicBlock(blocks->v[0]) : NULL) : first; b;
         b = blocks ? (++i < blocks->n ? LLVMValueAsBasicBlock(blocks->v[i]) : NULL) : LLVMGetNextBasicBlock(b))
        for (LLVMValueRef inst = LLVMGetFirstInstruction(b); inst; inst = LLVMGetNextInstruction(inst)) {
            n++;
            if (LLVMGetInstructionOpcode(inst) != LLVMCall && LLVMGetInstructionOpcode(inst) != LLVMInvoke)
                continue;
            LLVMValueRef callee = LLVMGetCalledValue(inst);
            if (LLVMIsAInlineAsm(callee) || (LLVMIsAFunction(callee) && LLVMGetIntrinsicID(callee)) ||
                xf_is_noreturn_call(inst))
                continue;
            *calls = 1;
        }
    return n;
}

/* Whether fn gets a patchable entry: size (LLVM instructions), whether it calls and loops. */
static int wants_entry(struct vigil_xform *x, LLVMValueRef fn, long size, int calls, int loops)
{
    static const char section[] = "entries";
    if (xcc_config_has(x, &hotspot_cc_tool, section)) {
        size_t len = 0;
        const char *name = LLVMGetValueName2(fn, &len);
        return xcc_config_match(x, &hotspot_cc_tool, section, name, x->settings->source_name);
    }
    if (size < setting_number("VIGIL_CC_HOTSPOT_BODY_MIN", 0))
        return 0;   /* under the floor, loops and calls or not */
    if (!loops && size < setting_number("VIGIL_CC_HOTSPOT_MIN", 24) &&
        (!calls || !setting_number("VIGIL_CC_HOTSPOT_CALLERS", 1)))
        return 0;   /* a small leaf without a loop (or any small function without one) */
    return 1;
}

static void add_entry(struct vigil_xform *x, LLVMValueRef fn)
{
    static const char key[] = "patchable-function-entry";
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateStringAttribute(x->ctx, key, sizeof key - 1, "5", 1));
}

static void function_done(struct xfunc *f)
{
    int calls;
    long size = count_instructions(NULL, &f->blocks, &calls);   /* the checking copy's blocks as they were */
    if (wants_entry(f->x, f->fn, size, calls, f->backedge_from.n != 0))
        add_entry(f->x, f->fn);
}

/* A function [skip] leaves plain: its loops found on its own blocks (the transform did not). */
static void function_skipped(struct vigil_xform *x, LLVMValueRef fn)
{
    int calls;
    long size = count_instructions(LLVMGetFirstBasicBlock(fn), NULL, &calls);
    size_t n = LLVMCountBasicBlocks(fn);
    LLVMBasicBlockRef *blocks = xf_calloc(n, sizeof *blocks);
    struct ptrmap index;
    ptrmap_init(&index);
    size_t i = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b && i < n; b = LLVMGetNextBasicBlock(b), i++) {
        blocks[i] = b;
        ptrmap_put(&index, LLVMBasicBlockAsValue(b), (void *)(i + 1));
    }
    struct valvec from = {0}, to = {0};
    xf_back_edges(blocks, i, &index, &from, &to);
    if (wants_entry(x, fn, size, calls, from.n != 0))
        add_entry(x, fn);
    valvec_free(&from);
    valvec_free(&to);
    ptrmap_free(&index);
    free(blocks);
}

static int wanted(const struct vigil_xform *x)
{
    (void)x;
    const char *on = xcc_setting(&hotspot_cc_tool, "VIGIL_CC_HOTSPOT_ENTRIES");
    return on && strcmp(on, "0") != 0;
}

static const struct vigil_cc_setting settings[] = {
    {"VIGIL_CC_HOTSPOT_ENTRIES", "1", "0: no patchable entries (a 5-byte nop in each function with a loop, a call, or VIGIL_CC_HOTSPOT_MIN instructions), so the hotspot tool samples but cannot hook and walk"},
    {"VIGIL_CC_HOTSPOT_CALLERS", "1", "0: small functions that call (under VIGIL_CC_HOTSPOT_MIN instructions, no loop) get no patchable entry either: a lower unpatched cost, but a walk ends at such a caller"},
    {"VIGIL_CC_HOTSPOT_MIN", "24", "leaf functions without a loop get a patchable entry from this many LLVM instructions on (0: every function)"},
    {"VIGIL_CC_HOTSPOT_BODY_MIN", "0", "no patchable entry in a function of fewer LLVM instructions, whatever its loops and calls: a lower unpatched cost, but a walk cannot start or pass there"},
};

static const char *const config_sections[] = {"entries", NULL};

static const struct vigil_cc_tool hotspot_cc_tool = {
    .name = "hotspot",
    .active = wanted,
    .function_done = function_done,
    .function_skipped = function_skipped,
    .settings = settings,
    .nsettings = sizeof settings / sizeof settings[0],
    .config_sections = config_sections,
};
VIGIL_REGISTER_CC_TOOL(hotspot_cc_tool);
