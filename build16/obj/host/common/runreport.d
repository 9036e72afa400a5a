build16/obj/host/common/runreport.o: common/runreport.c \
  common/runreport.h common/sitefmt.h

common/runreport.h:

common/sitefmt.h:
