build16/obj/host/common/sitefmt.o: common/sitefmt.c common/sitefmt.h

common/sitefmt.h:
