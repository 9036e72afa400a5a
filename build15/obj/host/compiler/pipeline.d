build15/obj/host/compiler/pipeline.o: compiler/pipeline.c \
  compiler/pipeline.h compiler/args.h compiler/settings.inc \
  compiler/transform.h /usr/lib/llvm-15/include/llvm-c/Core.h \
  /usr/lib/llvm-15/include/llvm-c/Deprecated.h \
  /usr/lib/llvm-15/include/llvm-c/ErrorHandling.h \
  /usr/lib/llvm-15/include/llvm-c/ExternC.h \
  /usr/lib/llvm-15/include/llvm-c/Types.h \
  /usr/lib/llvm-15/include/llvm-c/DataTypes.h \
  /usr/lib/llvm-15/include/llvm-c/Analysis.h \
  /usr/lib/llvm-15/include/llvm-c/BitReader.h \
  /usr/lib/llvm-15/include/llvm-c/BitWriter.h \
  /usr/lib/llvm-15/include/llvm-c/Support.h \
  /usr/lib/llvm-15/include/llvm-c/Target.h \
  /usr/lib/llvm-15/include/llvm/Config/llvm-config.h \
  /usr/lib/llvm-15/include/llvm/Config/Targets.def \
  /usr/lib/llvm-15/include/llvm/Config/AsmPrinters.def \
  /usr/lib/llvm-15/include/llvm/Config/AsmParsers.def \
  /usr/lib/llvm-15/include/llvm/Config/Disassemblers.def \
  /usr/lib/llvm-15/include/llvm-c/TargetMachine.h \
  /usr/lib/llvm-15/include/llvm-c/Transforms/PassBuilder.h \
  /usr/lib/llvm-15/include/llvm-c/Error.h

compiler/pipeline.h:

compiler/args.h:

compiler/settings.inc:

compiler/transform.h:

/usr/lib/llvm-15/include/llvm-c/Core.h:

/usr/lib/llvm-15/include/llvm-c/Deprecated.h:

/usr/lib/llvm-15/include/llvm-c/ErrorHandling.h:

/usr/lib/llvm-15/include/llvm-c/ExternC.h:

/usr/lib/llvm-15/include/llvm-c/Types.h:

/usr/lib/llvm-15/include/llvm-c/DataTypes.h:

/usr/lib/llvm-15/include/llvm-c/Analysis.h:

/usr/lib/llvm-15/include/llvm-c/BitReader.h:

/usr/lib/llvm-15/include/llvm-c/BitWriter.h:

/usr/lib/llvm-15/include/llvm-c/Support.h:

/usr/lib/llvm-15/include/llvm-c/Target.h:

/usr/lib/llvm-15/include/llvm/Config/llvm-config.h:

/usr/lib/llvm-15/include/llvm/Config/Targets.def:

/usr/lib/llvm-15/include/llvm/Config/AsmPrinters.def:

/usr/lib/llvm-15/include/llvm/Config/AsmParsers.def:

/usr/lib/llvm-15/include/llvm/Config/Disassemblers.def:

/usr/lib/llvm-15/include/llvm-c/TargetMachine.h:

/usr/lib/llvm-15/include/llvm-c/Transforms/PassBuilder.h:

/usr/lib/llvm-15/include/llvm-c/Error.h:
