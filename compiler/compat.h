/* Every difference between the LLVM versions vigil-cc builds with (14, 15, 16) lives here.
 * The rest of the compiler uses the *2 builder functions (explicit types), which behave the
 * same with typed pointers (14) and opaque pointers (15+): pointer casts between pointer types
 * fold away when pointers are opaque. */
#ifndef VIGIL_COMPAT_H
#define VIGIL_COMPAT_H
#include <llvm-c/Core.h>
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
 * before that, a musttail call is also a tail call, so print only those calls. Printing an
 * instruction of a function numbers the whole module for its operands, which made this
 * quadratic (most calls are tail calls after -O2): what is printed is a detached clone whose
 * operands are undef, which is then inserted and erased (the C API cannot delete a detached
 * instruction before 18). */
static inline int vigil_is_musttail(LLVMValueRef call)
{
#if VIGIL_LLVM_VERSION >= 18
    return LLVMGetTailCallKind(call) == LLVMTailCallKindMustTail;
#else
    if (!LLVMIsTailCall(call))
        return 0;
    LLVMValueRef callee = LLVMGetCalledValue(call);
    if (LLVMIsAFunction(callee) && LLVMGetIntrinsicID(callee) != 0)
        return 0;   /* intrinsics may take metadata operands, which have no undef */
    LLVMValueRef clone = LLVMInstructionClone(call);
    int n = LLVMGetNumOperands(clone);
    for (int i = 0; i < n; i++)
        LLVMSetOperand(clone, (unsigned)i, LLVMGetUndef(LLVMTypeOf(LLVMGetOperand(clone, (unsigned)i))));
    char *text = LLVMPrintValueToString(clone);
    int musttail = strstr(text, "musttail call") != NULL;
    LLVMDisposeMessage(text);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetTypeContext(LLVMTypeOf(call)));
    LLVMPositionBuilderBefore(b, call);
    LLVMInsertIntoBuilder(b, clone);
    LLVMInstructionEraseFromParent(clone);
    LLVMDisposeBuilder(b);
    return musttail;
#endif
}

#endif
