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
 * starts at its caller instead (runtime/walk.c). */
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

/* Instructions of f's original body (f->blocks: the checking copy's blocks as they were);
 * *calls: whether it calls a function (intrinsics and inline assembly are not calls). */
static long original_instructions(const struct xfunc *f, int *calls)
{
    long n = 0;
    *calls = 0;
    for (size_t i = 0; i < f->blocks.n; i++)
        for (LLVMValueRef inst = LLVMGetFirstInstruction(LLVMValueAsBasicBlock(f->blocks.v[i])); inst;
             inst = LLVMGetNextInstruction(inst)) {
            n++;
            if (LLVMGetInstructionOpcode(inst) != LLVMCall && LLVMGetInstructionOpcode(inst) != LLVMInvoke)
                continue;
            LLVMValueRef callee = LLVMGetCalledValue(inst);
            if (LLVMIsAInlineAsm(callee) || (LLVMIsAFunction(callee) && LLVMGetIntrinsicID(callee)))
                continue;
            *calls = 1;
        }
    return n;
}

static void function_done(struct xfunc *f)
{
    long min = setting_number("VIGIL_CC_HOTSPOT_MIN", 24);
    int calls;
    long size = original_instructions(f, &calls);
    if (size < setting_number("VIGIL_CC_HOTSPOT_BODY_MIN", 0))
        return;   /* under the floor, loops and calls or not */
    if (f->backedge_from.n == 0 && size < min && (!calls || !setting_number("VIGIL_CC_HOTSPOT_CALLERS", 1)))
        return;   /* a small leaf without a loop (or any small function without one) */
    static const char key[] = "patchable-function-entry";
    LLVMAddAttributeAtIndex(f->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(f->x->ctx, key, sizeof key - 1, "5", 1));
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

static const struct vigil_cc_tool hotspot_cc_tool = {
    .name = "hotspot",
    .active = wanted,
    .function_done = function_done,
    .settings = settings,
    .nsettings = sizeof settings / sizeof settings[0],
};
VIGIL_REGISTER_CC_TOOL(hotspot_cc_tool);
