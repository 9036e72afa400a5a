build16/obj/host/compiler/ptrmap.o: compiler/ptrmap.c compiler/ptrmap.h

compiler/ptrmap.h:
