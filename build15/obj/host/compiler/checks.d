build15/obj/host/compiler/checks.o: compiler/checks.c compiler/xform.h \
  compiler/compat.h /usr/lib/llvm-15/include/llvm-c/Core.h \
  /usr/lib/llvm-15/include/llvm-c/Deprecated.h \
  /usr/lib/llvm-15/include/llvm-c/ErrorHandling.h \
  /usr/lib/llvm-15/include/llvm-c/ExternC.h \
  /usr/lib/llvm-15/include/llvm-c/Types.h \
  /usr/lib/llvm-15/include/llvm-c/DataTypes.h \
  /usr/lib/llvm-15/include/llvm/Config/llvm-config.h compiler/ptrmap.h \
  common/sitefmt.h compiler/transform.h \
  /usr/lib/llvm-15/include/llvm-c/DebugInfo.h \
  /usr/lib/llvm-15/include/llvm-c/Target.h \
  /usr/lib/llvm-15/include/llvm/Config/Targets.def \
  /usr/lib/llvm-15/include/llvm/Config/AsmPrinters.def \
  /usr/lib/llvm-15/include/llvm/Config/AsmParsers.def \
  /usr/lib/llvm-15/include/llvm/Config/Disassemblers.def

compiler/xform.h:

compiler/compat.h:

/usr/lib/llvm-15/include/llvm-c/Core.h:

/usr/lib/llvm-15/include/llvm-c/Deprecated.h:

/usr/lib/llvm-15/include/llvm-c/ErrorHandling.h:

/usr/lib/llvm-15/include/llvm-c/ExternC.h:

/usr/lib/llvm-15/include/llvm-c/Types.h:

/usr/lib/llvm-15/include/llvm-c/DataTypes.h:

/usr/lib/llvm-15/include/llvm/Config/llvm-config.h:

compiler/ptrmap.h:

common/sitefmt.h:

compiler/transform.h:

/usr/lib/llvm-15/include/llvm-c/DebugInfo.h:

/usr/lib/llvm-15/include/llvm-c/Target.h:

/usr/lib/llvm-15/include/llvm/Config/Targets.def:

/usr/lib/llvm-15/include/llvm/Config/AsmPrinters.def:

/usr/lib/llvm-15/include/llvm/Config/AsmParsers.def:

/usr/lib/llvm-15/include/llvm/Config/Disassemblers.def:
