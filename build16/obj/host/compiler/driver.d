build16/obj/host/compiler/driver.o: compiler/driver.c compiler/pipeline.h \
  compiler/args.h compiler/settings.inc \
  /usr/lib/llvm-16/include/llvm/Config/llvm-config.h

compiler/pipeline.h:

compiler/args.h:

compiler/settings.inc:

/usr/lib/llvm-16/include/llvm/Config/llvm-config.h:
