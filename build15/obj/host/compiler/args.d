build15/obj/host/compiler/args.o: compiler/args.c compiler/args.h

compiler/args.h:
