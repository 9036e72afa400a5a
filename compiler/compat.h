/* Every difference between the LLVM versions vigil-cc builds with (14, 15, 16) lives here.
 * The rest of the compiler uses the *2 builder functions (explicit types), which behave the
 * same with typed pointers (14) and opaque pointers (15+): pointer casts between pointer types
 * fold away when pointers are opaque. */
#ifndef VIGIL_COMPAT_H
#define VIGIL_COMPAT_H
#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <llvm/Config/llvm-config.h>
#include <stdlib.h>
#include <string.h>

#define VIGIL_LLVM_VERSION LLVM_VERSION_MAJOR

/* The type `T *` in address space 0: a typed pointer in LLVM 14, `ptr` when the context uses
 * opaque pointers (15+ by default), where the element type is ignored. */
static inline LLVMTypeRef vigil_pointer_to(LLVMTypeRef element)
{
    return LLVMPointerType(element, 0);
}

/* Whether a call is marked musttail. The C API exposes the tail-call kind only from LLVM 18;
 * before that, a musttail call is also a tail call, so print only those calls, unlinked for
 * the moment: printing an instruction inside a function numbers the whole function first,
 * which made this quadratic in big functions (most calls are tail calls after -O2). */
static inline int vigil_is_musttail(LLVMValueRef call)
{
#if VIGIL_LLVM_VERSION >= 18
    return LLVMGetTailCallKind(call) == LLVMTailCallKindMustTail;
#else
    if (!LLVMIsTailCall(call))
        return 0;
    LLVMValueRef next = LLVMGetNextInstruction(call);   /* a call is never a block's last */
    if (!next)
        return 0;
    size_t len = 0;
    char *name = strdup(LLVMGetValueName2(call, &len));
    LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(call);
    LLVMInstructionRemoveFromParent(call);
    char *text = LLVMPrintValueToString(call);
    int musttail = strstr(text, "musttail call") != NULL;
    LLVMDisposeMessage(text);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetTypeContext(LLVMTypeOf(call)));
    LLVMPositionBuilderBefore(b, next);
    LLVMInsertIntoBuilderWithName(b, call, name ? name : "");
    LLVMInstructionSetDebugLoc(call, loc);
    LLVMDisposeBuilder(b);
    free(name);
    return musttail;
#endif
}

#endif
