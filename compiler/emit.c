/* Module-level emission (common/abi.h): the runtime interface the emitted code calls, and per
 * translation unit the site table, counters, state, descriptor and registering constructor.
 * Counters and state are sized only when every site is known, so the code refers to
 * placeholder globals that xe_emit_tables replaces. */
#include "xform.h"

#include "abi.h"

#include <vigil/tool.h>

#include <llvm-c/TargetMachine.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct __vigil_site_state) == 32, "site state is 4 x i64 in emitted code");
_Static_assert(offsetof(struct __vigil_site_state, instr_execs) == 0, "instr_execs is word 0");
_Static_assert(offsetof(struct __vigil_module, counters) == 16 && offsetof(struct __vigil_module, tu_hash) == 32 &&
               offsetof(struct __vigil_module, next) == 48 && offsetof(struct __vigil_module, pred_enable) == 56 &&
               offsetof(struct __vigil_module, flags) == 72 && offsetof(struct __vigil_module, dispatch_sites) == 80 &&
               offsetof(struct __vigil_module, ndispatch) == 88 &&
               offsetof(struct __vigil_module, thread_counters) == 96 && sizeof(struct __vigil_module) == 104,
               "descriptor layout matches module_type on LP64");

/* Priority of the registering constructor: before ordinary constructors (65535), so that
 * instrumented code they run finds its module registered; 0-100 are reserved. */
#define REGISTER_PRIORITY 101

static void declare(struct vigil_xform *x, struct rt_fn *out, const char *name, LLVMTypeRef ret,
                    LLVMTypeRef *params, unsigned nparams)
{
    LLVMTypeRef type = LLVMFunctionType(ret, params, nparams, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(x->module, name);
    if (!fn) {
        fn = LLVMAddFunction(x->module, name, type);
        unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(x->ctx, nounwind, 0));
    }
    out->fn = fn;
    out->type = type;
}

static LLVMValueRef placeholder(struct vigil_xform *x, LLVMTypeRef type, const char *name)
{
    LLVMValueRef g = LLVMAddGlobal(x->module, type, name);
    LLVMSetLinkage(g, LLVMExternalLinkage);
    return g;
}

/* m's target triple (the host's when the module names none), in a new string: free it. */
static char *target_triple(LLVMModuleRef m)
{
    const char *triple = LLVMGetTarget(m);
    if (triple && *triple)
        return strdup(triple);
    char *host = LLVMGetDefaultTargetTriple();
    char *copy = strdup(host);
    LLVMDisposeMessage(host);
    return copy;
}

/* The section of the functions that run only in bursts (instrumented copies, thunks, burst
 * entries: outline.c), on ELF targets. GNU ld's default script gathers `.text.unlikely.*` at
 * the head of .text, so the checking copies, which run all the time, sit together and fill
 * fewer pages and cache lines than when each function's companions follow it. */
#define VIGIL_COLD_SECTION ".text.unlikely.vigil"
/* The registering constructors: GNU ld gathers `.text.startup.*` next to the cold section. */
#define VIGIL_STARTUP_SECTION ".text.startup.vigil"

static const char *cold_section(LLVMModuleRef m)
{
    char *triple = target_triple(m);
    static const char *const not_elf[] = {"darwin", "macos", "ios", "windows", "win32", "mingw", "cygwin"};
    int elf = triple != NULL;
    for (size_t i = 0; elf && i < sizeof not_elf / sizeof *not_elf; i++)
        elf = !strstr(triple, not_elf[i]);
    free(triple);
    return elf ? VIGIL_COLD_SECTION : NULL;
}

/* The target's architecture, as far as the calling conventions of common/abi.h care. */
enum target_arch { ARCH_OTHER, ARCH_X86_64 };
static enum target_arch target_arch(LLVMModuleRef m)
{
    char *triple = target_triple(m);
    enum target_arch arch = ARCH_OTHER;
    if (triple && !strncmp(triple, "x86_64-", 7) && !strstr(triple, "-gnux32"))
        arch = ARCH_X86_64;
    free(triple);
    return arch;
}

/* Whether the function being built may use AVX-512 registers (its "target-features"). */
static int has_avx512(struct vigil_xform *x)
{
    LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(x->builder));
    LLVMAttributeRef features = LLVMGetStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, "target-features", 15);
    unsigned len = 0;
    const char *value = features ? LLVMGetStringAttributeValue(features, &len) : NULL;
    for (unsigned i = 0; value && i + 8 <= len; i++)
        if (memcmp(value + i, "+avx512f", 8) == 0)
            return 1;
    return 0;
}

/* Whether `v` is a symbol this object defines (internal or private): its address can go into
 * the asm text as `sym(%rip)` through an "i" operand, in PIC code too. */
static int is_local_symbol(LLVMValueRef v)
{
    if (!LLVMIsAGlobalValue(v))
        return 0;
    LLVMLinkage linkage = LLVMGetLinkage(v);
    return linkage == LLVMInternalLinkage || linkage == LLVMPrivateLinkage;
}

/* An x86-64 call into the runtime through one of its register-keeping entries (abi.h,
 * runtime/sampler.c): step over the red zone, call `entry` with `in_rax` in rax and `in_r11`
 * in r11. Vector and x87 registers are clobbered (the code behind the entry may use them);
 * general-purpose ones other than rax and r11 survive. Returns rax after the call.
 * The inputs are plain register inputs with r11 clobbered, not outputs tied to inputs: with
 * tied operands, LLVM 14 sometimes put both inputs into other registers (the thunk address
 * in rax, the frame in rcx) when the inputs were constants it rematerialized.
 * A local symbol for r11 (the module descriptor, a transfer thunk) is loaded inside the asm:
 * as a register input, the back end hoisted its `lea` out of loops into a callee-saved
 * register, which every call of the function then saved and restored for a call that runs
 * only when a burst starts (sqlite3's moveToRoot: 6 pushes against plain's 2). */
static LLVMValueRef x86_kept_registers_call(struct vigil_xform *x, const char *entry, LLVMValueRef in_rax,
                                            LLVMValueRef in_r11, int rax_is_frame)
{
    int r11_symbol = is_local_symbol(in_r11);
    LLVMTypeRef params[] = {LLVMTypeOf(in_rax), LLVMTypeOf(in_r11)};
    LLVMTypeRef type = LLVMFunctionType(rax_is_frame ? x->ptr : params[0], params, 2, 0);
    char text[220];
    /* Through the GOT, not a PLT stub: lazy binding may clobber r11. The linker relaxes it to a
     * direct call when the entry is in the same executable. A frame (a stack object) is a
     * memory operand whose address the asm takes itself: as a register input, its `lea` was
     * hoisted out of loops into a callee-saved register (59 of lua's 608 transfer calls, among
     * them luaD_precall's, whose `nresults` then lived on the stack). */
    snprintf(text, sizeof text, "%s%slea -128(%%rsp), %%rsp\n\tcall *%s@GOTPCREL(%%rip)\n\tlea 128(%%rsp), %%rsp",
             rax_is_frame ? "lea $1, %rax\n\t" : "", r11_symbol ? "lea ${2:P}(%rip), %r11\n\t" : "", entry);
    static const char clobbers[] =
        "~{r11},~{dirflag},~{fpsr},~{flags},~{memory},"
        "~{xmm0},~{xmm1},~{xmm2},~{xmm3},~{xmm4},~{xmm5},~{xmm6},~{xmm7},"
        "~{xmm8},~{xmm9},~{xmm10},~{xmm11},~{xmm12},~{xmm13},~{xmm14},~{xmm15},"
        "~{st},~{st(1)},~{st(2)},~{st(3)},~{st(4)},~{st(5)},~{st(6)},~{st(7)}";
    /* With AVX-512 the code behind the entry (a transfer runs program code) may use the upper
     * vector registers and the mask registers too. */
    static const char avx512[] =
        ",~{xmm16},~{xmm17},~{xmm18},~{xmm19},~{xmm20},~{xmm21},~{xmm22},~{xmm23},"
        "~{xmm24},~{xmm25},~{xmm26},~{xmm27},~{xmm28},~{xmm29},~{xmm30},~{xmm31},"
        "~{k0},~{k1},~{k2},~{k3},~{k4},~{k5},~{k6},~{k7}";
    char all[40 + sizeof clobbers + sizeof avx512];
    snprintf(all, sizeof all, "={ax},%s,%s,%s%s", rax_is_frame ? "*m" : "{ax}", r11_symbol ? "i" : "{r11}", clobbers,
             has_avx512(x) ? avx512 : "");
    LLVMValueRef asm_fn = LLVMGetInlineAsm(type, text, strlen(text), all, strlen(all), 1, 0, LLVMInlineAsmDialectATT, 0);
    LLVMValueRef args[] = {in_rax, in_r11};
    LLVMValueRef call = LLVMBuildCall2(x->builder, type, asm_fn, args, 2, "");
    if (rax_is_frame) {   /* an indirect operand names the type it points to */
        unsigned kind = LLVMGetEnumAttributeKindForName("elementtype", 11);
        LLVMAddCallSiteAttribute(call, 1, LLVMCreateTypeAttribute(x->ctx, kind, x->i8));
    }
    return call;
}

/* The x86-64 slow-path call: the module in r11 and the site in eax, the answer in eax. */
static LLVMValueRef x86_slow_call(struct vigil_xform *x, const char *entry, uint32_t site)
{
    return x86_kept_registers_call(x, entry, LLVMConstInt(x->i32, site, 0), x->descriptor, 0);
}

int xe_can_call_keeping_registers(struct vigil_xform *x)
{
    return x->slow_call == XE_SLOW_X86_ASM;
}

void xe_call_keeping_registers(struct vigil_xform *x, LLVMValueRef fn, LLVMValueRef arg)
{
    x86_kept_registers_call(x, "__vigil_call_keeping_registers_x86", LLVMBuildPointerCast(x->builder, arg, x->ptr, ""), fn,
                            LLVMIsAAllocaInst(arg) != NULL);
}

LLVMValueRef xe_call_slow_path(struct vigil_xform *x, const struct rt_fn *fn, uint32_t site)
{
    if (x->slow_call == XE_SLOW_X86_ASM)
        return x86_slow_call(x, fn == &x->dispatch_enter ? "__vigil_dispatch_enter_x86" : "__vigil_burst_end_x86", site);
    LLVMValueRef args[] = {x->descriptor, LLVMConstInt(x->i32, site, 0)};
    return xe_call(x, fn, args, 2);
}

/* Whether m's code goes into an executable (PIE or not PIC), which has libvigil.a linked in:
 * then it may refer to the runtime's variables directly. Code that may go into a shared
 * library (PIC, not PIE) reaches the runtime through the GOT. */
static int code_for_executable(LLVMModuleRef m)
{
    return LLVMGetModuleFlag(m, "PIE Level", 9) || !LLVMGetModuleFlag(m, "PIC Level", 9);
}

/* The TLS model of __vigil_burst_left: in an executable's own TLS block at a constant offset
 * from %fs, one instruction; otherwise initial-exec through the GOT (libvigil is loaded at
 * start-up, so the offset is fixed). */
static LLVMThreadLocalMode burst_tls_model(LLVMModuleRef m)
{
    return code_for_executable(m) ? LLVMLocalExecTLSModel : LLVMInitialExecTLSModel;
}

/* ---- probes through module stubs (x86-64 ELF) ----
 * A probe calls a stub of its own module with the site in edi and its value in rsi: `mov
 * $site, %edi; <value into %rsi>; call stub`, where the runtime's probe also took the module
 * (a 7-byte lea). An access probe's value is the address and, unless the size is one of
 * stub_sizes, the size follows in rdx: 13-14 bytes instead of 25-26. The stub (module asm,
 * emit_module_stubs) puts the module in r11 and jumps to the runtime entry `<probe>_m`
 * (runtime/probes.c, common/abi.h). */
static const unsigned stub_sizes[XE_STUB_SIZE_CLASSES] = {0, 1, 2, 4, 8, 16};   /* 0: the size is an argument */

static unsigned stub_size_class(LLVMValueRef size)
{
    if (!LLVMIsAConstantInt(size))
        return 0;
    unsigned long long bytes = LLVMConstIntGetZExtValue(size);
    for (unsigned k = 1; k < XE_STUB_SIZE_CLASSES; k++)
        if (bytes == stub_sizes[k])
            return k;
    return 0;
}

/* "__vigil_mprobe_load4" (the module's stub, declared by xe_access_probe) or "__vigil_probe_load4_m"
 * (the runtime's entry, named by emit_module_stubs). */
static void stub_name(char *out, size_t len, const char *prefix, int is_store, unsigned k, const char *suffix)
{
    char bytes[8] = "";
    if (stub_sizes[k])
        snprintf(bytes, sizeof bytes, "%u", stub_sizes[k]);
    snprintf(out, len, "%s%s%s%s", prefix, is_store ? "store" : "load", bytes, suffix);
}

/* The event probes' names after "__vigil_mprobe_" / "__vigil_probe_", and their events. */
static const char *const event_names[XE_EVENT_KINDS] = {"branch", "return", "call"};
static const unsigned event_bits[XE_EVENT_KINDS] = {VIGIL_EV_BRANCH, VIGIL_EV_RETURN, VIGIL_EV_CALL};

/* Declare a module stub, preserve_most like the runtime's probes. */
static void declare_stub(struct vigil_xform *x, struct rt_fn *stub, const char *name, LLVMTypeRef *params,
                         unsigned nparams)
{
    declare(x, stub, name, x->void_t, params, nparams);
    LLVMSetFunctionCallConv(stub->fn, LLVMPreserveMostCallConv);
    LLVMSetVisibility(stub->fn, LLVMHiddenVisibility);   /* defined in this object: a direct call */
}

LLVMValueRef xe_access_probe(struct vigil_xform *x, int is_store, uint32_t site, LLVMValueRef address,
                             LLVMValueRef size, int may_use_stub)
{
    LLVMValueRef args[] = {x->descriptor, LLVMConstInt(x->i32, site, 0),
                           LLVMBuildPointerCast(x->builder, address, x->ptr, ""), size};
    if (!x->x86_64_elf || !may_use_stub)
        return xe_call(x, is_store ? &x->probe_store : &x->probe_load, args, 4);
    unsigned k = stub_size_class(size);
    struct rt_fn *stub = &x->access_stubs[is_store][k];
    if (!stub->fn) {
        char name[48];
        stub_name(name, sizeof name, "__vigil_mprobe_", is_store, k, "");
        LLVMTypeRef params[] = {x->i32, x->ptr, x->i64};
        declare_stub(x, stub, name, params, k ? 2 : 3);
    }
    return xe_call(x, stub, args + 1, k ? 2 : 3);
}

LLVMValueRef xe_atomic_probe(struct vigil_xform *x, int is_store, uint32_t site, LLVMValueRef address,
                             LLVMValueRef size)
{
    LLVMValueRef args[] = {x->descriptor, LLVMConstInt(x->i32, site, 0),
                           LLVMBuildPointerCast(x->builder, address, x->ptr, ""), size};
    return xe_call(x, is_store ? &x->probe_atomic_store : &x->probe_atomic_load, args, 4);
}

LLVMValueRef xe_event_probe(struct vigil_xform *x, enum xe_event_kind kind, uint32_t site, LLVMValueRef value,
                            int may_use_stub)
{
    LLVMValueRef args[] = {x->descriptor, LLVMConstInt(x->i32, site, 0), value};
    if (!x->x86_64_elf || !may_use_stub) {
        const struct rt_fn *probes[XE_EVENT_KINDS] = {&x->probe_branch, &x->probe_return, &x->probe_call};
        return xe_call(x, probes[kind], args, 3);
    }
    struct rt_fn *stub = &x->event_stubs[kind];
    if (!stub->fn) {
        char name[48];
        snprintf(name, sizeof name, "__vigil_mprobe_%s", event_names[kind]);
        LLVMTypeRef params[] = {x->i32, LLVMTypeOf(value)};
        declare_stub(x, stub, name, params, 2);
    }
    return xe_call(x, stub, args + 1, 2);
}

int xe_probe_guarded(const struct vigil_xform *x, unsigned event)
{
    return x->settings->guard_probes && (event != VIGIL_EV_ACCESS || x->settings->guard_accesses);
}

/* The module asm of one stub: `stub` puts the module in r11 and jumps to the runtime's `entry`.
 * In an executable whose probes are not guarded (probes.c `probe`) the stub tests the event bit
 * itself, so that a probe nobody listens to costs the call, the test and the return, as the
 * runtime's own probe stubs do; a guarded probe was tested before the call. A shared library's
 * stub reaches the entry through the GOT (not a PLT stub: lazy binding may clobber r11). */
static void emit_stub(struct vigil_xform *x, const char *stub, const char *entry, unsigned event)
{
    size_t module_len = 0;
    const char *module = LLVMGetValueName2(x->descriptor, &module_len);
    int executable = code_for_executable(x->module);
    char test[96] = "";
    if (executable && !xe_probe_guarded(x, event))
        snprintf(test, sizeof test, "\ttestl $0x%x, __vigil_active_events(%%rip)\n\tjnz 1f\n\tret\n", event);
    char text[1024];
    snprintf(text, sizeof text,
             "\t.pushsection %s,\"ax\",@progbits\n"
             "\t.p2align 4\n"
             "\t.type %s,@function\n"
             "%s:\n"
             "\t.cfi_startproc\n"
             "%s"
             "1:\tleaq %.*s(%%rip), %%r11\n"
             "\tjmp %s%s%s\n"
             "\t.cfi_endproc\n"
             "\t.size %s, .-%s\n"
             "\t.popsection\n",
             x->cold_section, stub, stub, test, (int)module_len, module, executable ? "" : "*", entry,
             executable ? "" : "@GOTPCREL(%rip)", stub, stub);
    LLVMAppendModuleInlineAsm(x->module, text, strlen(text));
}

/* The stubs the probes of this module call, under the names they were declared with. */
static void emit_module_stubs(struct vigil_xform *x)
{
    char entry[48];
    size_t len = 0;
    for (int is_store = 0; is_store < 2; is_store++)
        for (unsigned k = 0; k < XE_STUB_SIZE_CLASSES; k++) {
            LLVMValueRef stub = x->access_stubs[is_store][k].fn;
            if (!stub)
                continue;
            stub_name(entry, sizeof entry, "__vigil_probe_", is_store, k, "_m");
            emit_stub(x, LLVMGetValueName2(stub, &len), entry, VIGIL_EV_ACCESS);
        }
    for (int kind = 0; kind < XE_EVENT_KINDS; kind++) {
        LLVMValueRef stub = x->event_stubs[kind].fn;
        if (!stub)
            continue;
        snprintf(entry, sizeof entry, "__vigil_probe_%s_m", event_names[kind]);
        emit_stub(x, LLVMGetValueName2(stub, &len), entry, event_bits[kind]);
    }
}

/* Bytes (a multiple of 4 long) into an ELF section that is not loaded (no SHF_ALLOC): only
 * the vigil command reads it, from the file. Module asm, because a global always gets an
 * allocated section from the back end. */
static void emit_unloaded_blob(struct vigil_xform *x, const char *section, const unsigned char *bytes, size_t len)
{
    /* ".long" lines of 16 decimal words: at most 11 characters a word, 8 more a line */
    size_t words = len / 4, used = 0;
    char *text = xf_calloc(1, 128 + words * 11 + (words / 16 + 1) * 8);
    used += (size_t)sprintf(text, "\t.pushsection %s,\"\",@progbits\n\t.p2align 3\n", section);
    for (size_t i = 0; i < len; i += 4) {
        uint32_t w = (uint32_t)bytes[i] | (uint32_t)bytes[i + 1] << 8 | (uint32_t)bytes[i + 2] << 16 |
                     (uint32_t)bytes[i + 3] << 24;
        used += (size_t)sprintf(text + used, "%s%u%s", i % 64 == 0 ? "\t.long " : "", w,
                                i % 64 == 60 || i + 4 == len ? "\n" : ",");
    }
    used += (size_t)sprintf(text + used, "\t.popsection\n");
    LLVMAppendModuleInlineAsm(x->module, text, used);
    free(text);
}

LLVMValueRef xe_runtime_i32(struct vigil_xform *x, const char *name)
{
    LLVMValueRef g = LLVMGetNamedGlobal(x->module, name);
    if (!g) {
        g = LLVMAddGlobal(x->module, x->i32, name);
        LLVMSetAlignment(g, 4);
    }
    return g;
}

void xe_declare_runtime(struct vigil_xform *x)
{
    LLVMTypeRef p = x->ptr, i32 = x->i32, i64 = x->i64;
    LLVMTypeRef fields[] = {i32, i32, p, vigil_pointer_to(i32), p, i64, i32, i32, p,
                            vigil_pointer_to(x->i8), vigil_pointer_to(i64), i64, vigil_pointer_to(i32), i32, i32, p};
    x->module_type = LLVMStructTypeInContext(x->ctx, fields, 16, 0);
    LLVMTypeRef m = vigil_pointer_to(x->module_type);

    x->burst_left = LLVMGetNamedGlobal(x->module, "__vigil_burst_left");
    if (!x->burst_left) {
        x->burst_left = LLVMAddGlobal(x->module, i32, "__vigil_burst_left");
        LLVMSetAlignment(x->burst_left, 4);
    }
    LLVMSetThreadLocal(x->burst_left, 1);
    LLVMSetThreadLocalMode(x->burst_left, burst_tls_model(x->module));

    x->active_events = xe_runtime_i32(x, "__vigil_active_events");

    x->descriptor = LLVMAddGlobal(x->module, x->module_type, "__vigil_module");
    LLVMSetLinkage(x->descriptor, LLVMInternalLinkage);
    LLVMSetAlignment(x->descriptor, 8);
    x->counters = placeholder(x, i32, "__vigil_counters.placeholder");
    x->state = placeholder(x, i64, "__vigil_state.placeholder");
    if (x->settings->pred_counters) {
        x->pred_enable = placeholder(x, x->i8, "__vigil_pred_enable.placeholder");
        x->pred_counts = placeholder(x, i64, "__vigil_pred_counts.placeholder");
    }

    declare(x, &x->register_module, "__vigil_register_module", x->void_t, &m, 1);
    LLVMTypeRef site_args[] = {m, i32};
    declare(x, &x->dispatch_enter, "__vigil_dispatch_enter", i32, site_args, 2);
    declare(x, &x->burst_end, "__vigil_burst_end", i32, site_args, 2);

    LLVMTypeRef access_args[] = {m, i32, p, i64};
    declare(x, &x->probe_load, "__vigil_probe_load", x->void_t, access_args, 4);
    declare(x, &x->probe_store, "__vigil_probe_store", x->void_t, access_args, 4);
    LLVMTypeRef branch_args[] = {m, i32, i32};
    declare(x, &x->probe_branch, "__vigil_probe_branch", x->void_t, branch_args, 3);
    LLVMTypeRef return_args[] = {m, i32, i64};
    declare(x, &x->probe_return, "__vigil_probe_return", x->void_t, return_args, 3);
    LLVMTypeRef call_args[] = {m, i32, p};
    declare(x, &x->probe_call, "__vigil_probe_call", x->void_t, call_args, 3);
    declare(x, &x->probe_atomic_load, "__vigil_probe_atomic_load", x->void_t, access_args, 4);
    declare(x, &x->probe_atomic_store, "__vigil_probe_atomic_store", x->void_t, access_args, 4);
    LLVMTypeRef sync_args[] = {p, i32};
    declare(x, &x->sync_atomic, "__vigil_sync_atomic", x->void_t, sync_args, 2);
    /* Calling conventions of common/abi.h on x86-64: slow paths through trampolines, probes
     * preserve_most. */
    enum target_arch arch = target_arch(x->module);
    x->slow_call = arch == ARCH_X86_64 ? XE_SLOW_X86_ASM : XE_SLOW_C;
    if (arch == ARCH_X86_64) {
        const struct rt_fn *probes[] = {&x->probe_load, &x->probe_store, &x->probe_branch, &x->probe_return,
                                        &x->probe_call, &x->probe_atomic_load, &x->probe_atomic_store,
                                        &x->sync_atomic};
        /* nonlazybind: called through the GOT, bound at load time. A lazy PLT entry's first
         * call runs the dynamic linker's resolver, which keeps the argument registers but not
         * r10 or r11, which a preserve_most caller keeps values in (a vigil-cc -shared library
         * lost its caller's r10 on each probe's first call). An executable has the runtime
         * linked in: its calls are direct. */
        unsigned nonlazybind = LLVMGetEnumAttributeKindForName("nonlazybind", 11);
        for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
            LLVMSetFunctionCallConv(probes[i]->fn, LLVMPreserveMostCallConv);
            if (!code_for_executable(x->module))
                LLVMAddAttributeAtIndex(probes[i]->fn, LLVMAttributeFunctionIndex,
                                        LLVMCreateEnumAttribute(x->ctx, nonlazybind, 0));
        }
    }
    x->prof_kind = LLVMGetMDKindIDInContext(x->ctx, "prof", 4);
    x->cold_section = cold_section(x->module);
    x->x86_64_elf = arch == ARCH_X86_64 && x->cold_section;
    x->split_cold = x->settings->split_cold && x->x86_64_elf;
}

LLVMValueRef xe_call(struct vigil_xform *x, const struct rt_fn *f, LLVMValueRef *args, unsigned nargs)
{
    LLVMValueRef call = LLVMBuildCall2(x->builder, f->type, f->fn, args, nargs, "");
    LLVMSetInstructionCallConv(call, LLVMGetFunctionCallConv(f->fn));
    return call;
}

void xe_set_weights(struct vigil_xform *x, LLVMValueRef branch, uint32_t first, uint32_t second)
{
    LLVMMetadataRef ops[] = {
        LLVMMDStringInContext2(x->ctx, "branch_weights", 14),
        LLVMValueAsMetadata(LLVMConstInt(x->i32, first, 0)),
        LLVMValueAsMetadata(LLVMConstInt(x->i32, second, 0)),
    };
    LLVMSetMetadata(branch, x->prof_kind, LLVMMetadataAsValue(x->ctx, LLVMMDNodeInContext2(x->ctx, ops, 3)));
}

/* Replace a placeholder by a zeroed internal array of `count` elements. */
static LLVMValueRef replace_placeholder(struct vigil_xform *x, LLVMValueRef placeholder, LLVMTypeRef element,
                                        uint64_t count, const char *name)
{
    LLVMTypeRef type = LLVMArrayType(element, (unsigned)count);
    LLVMValueRef g = LLVMAddGlobal(x->module, type, name);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetInitializer(g, LLVMConstNull(type));
    LLVMSetAlignment(g, 8);
    LLVMReplaceAllUsesWith(placeholder, LLVMConstPointerCast(g, LLVMTypeOf(placeholder)));
    LLVMDeleteGlobal(placeholder);
    return g;
}

/* Append {priority, ctor, null} to @llvm.global_ctors, creating it if needed; the C API has
 * no helper, so the appending array is rebuilt. */
static void add_constructor(struct vigil_xform *x, LLVMValueRef ctor)
{
    LLVMValueRef old = LLVMGetNamedGlobal(x->module, "llvm.global_ctors");
    LLVMTypeRef entry_type;
    unsigned nold = 0;
    if (old) {
        LLVMTypeRef array_type = LLVMGlobalGetValueType(old);
        entry_type = LLVMGetElementType(array_type);
        nold = LLVMGetArrayLength(array_type);
        LLVMSetValueName2(old, "llvm.global_ctors.old", 21);
    } else {
        LLVMTypeRef fields[] = {x->i32, vigil_pointer_to(LLVMFunctionType(x->void_t, NULL, 0, 0)), x->ptr};
        entry_type = LLVMStructTypeInContext(x->ctx, fields, 3, 0);
    }
    unsigned nfields = LLVMCountStructElementTypes(entry_type);
    LLVMTypeRef field_types[3];
    LLVMGetStructElementTypes(entry_type, field_types);
    LLVMValueRef fields[3] = {
        LLVMConstInt(x->i32, REGISTER_PRIORITY, 0),
        LLVMConstPointerCast(ctor, field_types[1]),
        nfields > 2 ? LLVMConstNull(field_types[2]) : NULL,
    };
    LLVMValueRef *entries = calloc(nold + 1, sizeof *entries);
    if (!entries) {
        fputs("vigil-cc: out of memory\n", stderr);
        abort();
    }
    LLVMValueRef old_init = old ? LLVMGetInitializer(old) : NULL;
    for (unsigned i = 0; i < nold; i++)
        entries[i] = LLVMGetOperand(old_init, i);
    entries[nold] = LLVMConstNamedStruct(entry_type, fields, nfields);
    LLVMValueRef array = LLVMConstArray(entry_type, entries, nold + 1);
    LLVMValueRef g = LLVMAddGlobal(x->module, LLVMTypeOf(array), "llvm.global_ctors");
    LLVMSetLinkage(g, LLVMAppendingLinkage);
    LLVMSetInitializer(g, array);
    if (old)
        LLVMDeleteGlobal(old);
    free(entries);
}

/* Thread-local countdowns (common/abi.h, ABI 7) where VIGIL_CC_THREAD_COUNTERS says: by default
 * in code for an executable, whose TLS block is static (local-exec: the check stays one
 * instruction); code for a shared library keeps the shared array, as a library loaded with
 * dlopen after start-up may find no room in the static TLS block for initial-exec variables. */
static int counters_per_thread(struct vigil_xform *x)
{
    switch (x->settings->thread_counters) {
    case VIGIL_THREAD_COUNTERS_ALL:
        return 1;
    case VIGIL_THREAD_COUNTERS_NONE:
        return 0;
    default:
        return code_for_executable(x->module);
    }
}

/* `uint32_t *__vigil_thread_counters(void) { return counters; }`: the calling thread's copy,
 * for the runtime's slow paths (descriptor field thread_counters). */
static LLVMValueRef thread_counters_function(struct vigil_xform *x, LLVMValueRef counters)
{
    LLVMTypeRef type = LLVMFunctionType(vigil_pointer_to(x->i32), NULL, 0, 0);
    LLVMValueRef fn = LLVMAddFunction(x->module, "__vigil_thread_counters", type);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(x->ctx, nounwind, 0));
    if (x->cold_section)
        LLVMSetSection(fn, x->cold_section);   /* for slow paths only: not among the hot code */
    LLVMBasicBlockRef saved = LLVMGetInsertBlock(x->builder);
    LLVMPositionBuilderAtEnd(x->builder, LLVMAppendBasicBlockInContext(x->ctx, fn, "entry"));
    LLVMSetCurrentDebugLocation2(x->builder, NULL);
    LLVMBuildRet(x->builder, LLVMConstPointerCast(counters, vigil_pointer_to(x->i32)));
    if (saved)
        LLVMPositionBuilderAtEnd(x->builder, saved);
    return fn;
}

static LLVMValueRef make_constructor(struct vigil_xform *x)
{
    LLVMValueRef ctor = LLVMAddFunction(x->module, "__vigil_module_ctor", LLVMFunctionType(x->void_t, NULL, 0, 0));
    LLVMSetLinkage(ctor, LLVMInternalLinkage);
    unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(ctor, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(x->ctx, nounwind, 0));
    /* With the other units' constructors, not in this unit's .text: run once at start-up, a
     * constructor in every unit's code made the kernel map (fault-around) the pages around it
     * in every unit, most of the executable segment of a program of many units. */
    if (x->cold_section)
        LLVMSetSection(ctor, VIGIL_STARTUP_SECTION);
    LLVMPositionBuilderAtEnd(x->builder, LLVMAppendBasicBlockInContext(x->ctx, ctor, "entry"));
    LLVMSetCurrentDebugLocation2(x->builder, NULL);
    LLVMValueRef arg = x->descriptor;
    xe_call(x, &x->register_module, &arg, 1);
    LLVMBuildRetVoid(x->builder);
    return ctor;
}

int xe_emit_tables(struct vigil_xform *x, char *err, size_t errlen)
{
    uint32_t nsites = vigil_sitefmt_count(x->sites);
    x->stats->sites = nsites;
    if (nsites == 0) {   /* nothing instrumented: leave no trace in the module */
        LLVMDeleteGlobal(x->counters);
        LLVMDeleteGlobal(x->state);
        LLVMDeleteGlobal(x->descriptor);
        if (x->pred_enable) {
            LLVMDeleteGlobal(x->pred_enable);
            LLVMDeleteGlobal(x->pred_counts);
        }
        free(vigil_sitefmt_finish(x->sites, 0, &(size_t){0}, NULL, NULL));
        x->sites = NULL;
        return 0;
    }
    size_t len = 0, cfg_len = 0;
    unsigned char *cfg = NULL;
    /* The control-flow facts go to a section that is not loaded (ELF; elsewhere they are left out). */
    unsigned char *blob = vigil_sitefmt_finish(x->sites, x->hash, &len, x->cold_section ? &cfg : NULL, &cfg_len);
    x->sites = NULL;
    if (!blob) {
        snprintf(err, errlen, "vigil-cc: cannot encode the site table (%u sites)", nsites);
        return -1;
    }
    if (cfg)
        emit_unloaded_blob(x, VIGIL_CFG_SECTION, cfg, cfg_len);
    free(cfg);
    /* On x86-64 ELF the table stays in the file too: only reports read it, and the runtime maps
     * it from the file when one does (runtime/sitefile.c reads 64-bit little-endian ELF); the
     * descriptor's pointer is null. */
    LLVMValueRef table = LLVMConstNull(x->ptr);
    if (x->x86_64_elf) {
        emit_unloaded_blob(x, VIGIL_SITES_SECTION, blob, len);
    } else {
        table = LLVMAddGlobal(x->module, LLVMArrayType(x->i8, (unsigned)len), "__vigil_sites");
        LLVMSetLinkage(table, LLVMPrivateLinkage);
        LLVMSetGlobalConstant(table, 1);
        LLVMSetInitializer(table, LLVMConstStringInContext(x->ctx, (const char *)blob, (unsigned)len, 1));
        LLVMSetSection(table, VIGIL_SITES_SECTION);
        LLVMSetAlignment(table, 8);
    }
    free(blob);

    /* Countdowns, then the value each was last set to (common/abi.h). */
    LLVMValueRef counters = replace_placeholder(x, x->counters, x->i32, (uint64_t)x->ndispatch * 2, "__vigil_counters");
    LLVMValueRef shared_counters = LLVMConstPointerCast(counters, vigil_pointer_to(x->i32));
    LLVMValueRef thread_counters = LLVMConstNull(x->ptr);
    if (counters_per_thread(x)) {
        LLVMSetThreadLocal(counters, 1);
        LLVMSetThreadLocalMode(counters, burst_tls_model(x->module));
        thread_counters = LLVMConstPointerCast(thread_counters_function(x, counters), x->ptr);
        shared_counters = LLVMConstNull(vigil_pointer_to(x->i32));
    }
    LLVMValueRef state = replace_placeholder(x, x->state, x->i64, (uint64_t)x->ndispatch * 4, "__vigil_state");
    LLVMValueRef *dispatch = xf_calloc(x->ndispatch, sizeof *dispatch);
    for (uint32_t d = 0; d < x->ndispatch; d++)
        dispatch[d] = LLVMConstInt(x->i32, x->dispatch_sites[d], 0);
    LLVMValueRef dispatch_init = LLVMConstArray(x->i32, dispatch, x->ndispatch);
    free(dispatch);
    LLVMValueRef dispatch_sites = LLVMAddGlobal(x->module, LLVMTypeOf(dispatch_init), "__vigil_dispatch_sites");
    LLVMSetLinkage(dispatch_sites, LLVMPrivateLinkage);
    LLVMSetGlobalConstant(dispatch_sites, 1);
    LLVMSetInitializer(dispatch_sites, dispatch_init);
    LLVMSetAlignment(dispatch_sites, 4);
    LLVMValueRef pred_enable = LLVMConstNull(vigil_pointer_to(x->i8)), pred_counts = LLVMConstNull(vigil_pointer_to(x->i64));
    if (x->pred_enable) {
        pred_enable = LLVMConstPointerCast(replace_placeholder(x, x->pred_enable, x->i8, nsites, "__vigil_pred_enable"),
                                           vigil_pointer_to(x->i8));
        pred_counts = LLVMConstPointerCast(replace_placeholder(x, x->pred_counts, x->i64,
                                                               (uint64_t)nsites * VIGIL_PRED_SLOTS, "__vigil_pred_counts"),
                                           vigil_pointer_to(x->i64));
    }
    LLVMValueRef fields[] = {
        LLVMConstInt(x->i32, VIGIL_ABI_VERSION, 0),
        LLVMConstInt(x->i32, nsites, 0),
        LLVMConstPointerCast(table, x->ptr),
        shared_counters,
        LLVMConstPointerCast(state, x->ptr),
        LLVMConstInt(x->i64, x->hash, 0),
        LLVMConstInt(x->i32, 0, 0),
        LLVMConstInt(x->i32, 0, 0),
        LLVMConstNull(x->ptr),
        pred_enable,
        pred_counts,
        LLVMConstInt(x->i64, xp_pins(x) ? VIGIL_MODULE_PRED_INSTR_ONLY : 0, 0),
        LLVMConstPointerCast(dispatch_sites, vigil_pointer_to(x->i32)),
        LLVMConstInt(x->i32, x->ndispatch, 0),
        LLVMConstInt(x->i32, 0, 0),
        thread_counters,
    };
    LLVMSetInitializer(x->descriptor, LLVMConstStructInContext(x->ctx, fields, 16, 0));
    add_constructor(x, make_constructor(x));
    emit_module_stubs(x);
    return 0;
}

LLVMValueRef xe_relaxed_load(struct vigil_xform *x, LLVMTypeRef type, LLVMValueRef ptr, unsigned align)
{
    LLVMValueRef load = LLVMBuildLoad2(x->builder, type, ptr, "");
    LLVMSetOrdering(load, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(load, align);
    return load;
}

void xe_relaxed_store(struct vigil_xform *x, LLVMValueRef value, LLVMValueRef ptr, unsigned align)
{
    LLVMValueRef store = LLVMBuildStore(x->builder, value, ptr);
    LLVMSetOrdering(store, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(store, align);
}
