/* The checking copy without its cold blocks (VIGIL_CC_SPLIT_COLD, x86-64 ELF).
 *
 * What runs in f only when a burst starts or ends (the state a transfer saves and reloads, the
 * call of the instrumented copy, the instrumented half of a function kept in one) was two
 * thirds of some checking copies (bzip2's sendMTFValues: 44 KB against 13.8 KB plain), and it
 * sat between f's hot blocks: more pages resident and more cache lines for the code that runs
 * all the time. LLVM's machine function splitter moves the blocks that a profile says never
 * run into a section of their own, without changing their code; it wants a profile, so the
 * module gets a synthetic one here:
 *   - every function defined here has the same entry count, SPLIT_ENTRY_COUNT;
 *   - a check's fired branch has the least probability a branch weight can state
 *     (xk_fired_weight: 1 against 2^31 - 1), except in loops whose countdown is batched in a
 *     register (checks.c build_local_countdown: measured slower split off) and in giant
 *     functions with transfers (xk_fired_weight);
 *   - the module's summary makes no count hot and only a count of 0 cold.
 * The back end derives a block's count from its frequency relative to the entry (rounded down):
 * the fired paths of checks in loops up to four deep (static estimates: about 32 iterations a
 * loop) get 0, and so do the blocks that the program's own hints make rarer than one in 1,024
 * entries (a __builtin_expect outside loops, a call of a noreturn function), as GCC moves
 * them to its .cold parts.
 * pipeline.c then runs the back end with -fsplit-machine-functions and names the cold part
 * `.text.unlikely.<f>`, which GNU ld gathers with the instrumented copies. */
#include "xform.h"

#include <string.h>

#define SPLIT_ENTRY_COUNT 1024

/* The weight of the not-fired side of f's checks. Not the least probability in a giant function
 * given transfers (an interpreter's dispatch loop): with its loops' fired paths split off, the
 * register allocator kept sqlite3VdbeExec's opcode pointer in a stack slot, loaded and stored
 * at every opcode, which cost more instructions than splitting saved (its blocks the program's
 * hints make rare are split off all the same). */
uint32_t xk_fired_weight(const struct xfunc *f)
{
    return f->x->split_cold && !f->giant_transfers ? 0x7fffffffu : 2000u;
}

static LLVMMetadataRef md_string(struct vigil_xform *x, const char *s)
{
    return LLVMMDStringInContext2(x->ctx, s, strlen(s));
}

static LLVMMetadataRef md_u64(struct vigil_xform *x, LLVMTypeRef type, uint64_t v)
{
    return LLVMValueAsMetadata(LLVMConstInt(type, v, 0));
}

static LLVMMetadataRef md_pair(struct vigil_xform *x, const char *key, uint64_t v)
{
    LLVMMetadataRef ops[] = {md_string(x, key), md_u64(x, x->i64, v)};
    return LLVMMDNodeInContext2(x->ctx, ops, 2);
}

/* {cutoff (per million), minimum count, number of counts}: the hot threshold is read at
 * 990000, the cold one at 999999, the splitter's at 999950. */
static LLVMMetadataRef summary_entry(struct vigil_xform *x, uint32_t cutoff, uint64_t min_count)
{
    LLVMMetadataRef ops[] = {md_u64(x, x->i32, cutoff), md_u64(x, x->i64, min_count), md_u64(x, x->i32, 1)};
    return LLVMMDNodeInContext2(x->ctx, ops, 3);
}

void xk_mark_synthetic_profile(struct vigil_xform *x)
{
    if (!x->split_cold)
        return;
    unsigned functions = 0;
    LLVMMetadataRef entry_ops[] = {md_string(x, "function_entry_count"), md_u64(x, x->i64, SPLIT_ENTRY_COUNT)};
    LLVMMetadataRef entry_count = LLVMMDNodeInContext2(x->ctx, entry_ops, 2);
    for (LLVMValueRef fn = LLVMGetFirstFunction(x->module); fn; fn = LLVMGetNextFunction(fn))
        if (!LLVMIsDeclaration(fn)) {
            LLVMGlobalSetMetadata(fn, x->prof_kind, entry_count);
            functions++;
        }
    LLVMMetadataRef detail[] = {
        summary_entry(x, 990000, UINT64_C(1) << 62),   /* nothing is hot */
        summary_entry(x, 999999, 0),                   /* only a count of 0 is cold */
    };
    LLVMMetadataRef fields[] = {
        LLVMMDNodeInContext2(x->ctx, (LLVMMetadataRef[]){md_string(x, "ProfileFormat"), md_string(x, "InstrProf")}, 2),
        md_pair(x, "TotalCount", (uint64_t)SPLIT_ENTRY_COUNT * functions),
        md_pair(x, "MaxCount", SPLIT_ENTRY_COUNT),
        md_pair(x, "MaxInternalCount", SPLIT_ENTRY_COUNT),
        md_pair(x, "MaxFunctionCount", SPLIT_ENTRY_COUNT),
        md_pair(x, "NumCounts", functions),
        md_pair(x, "NumFunctions", functions),
        LLVMMDNodeInContext2(x->ctx, (LLVMMetadataRef[]){md_string(x, "DetailedSummary"),
                                                          LLVMMDNodeInContext2(x->ctx, detail, 2)}, 2),
    };
    LLVMAddModuleFlag(x->module, LLVMModuleFlagBehaviorError, "ProfileSummary", 14,
                      LLVMMDNodeInContext2(x->ctx, fields, sizeof fields / sizeof *fields));
    x->stats->split_cold = 1;
}
