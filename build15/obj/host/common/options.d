build15/obj/host/common/options.o: common/options.c common/options.h \
  common/options.inc

common/options.h:

common/options.inc:
