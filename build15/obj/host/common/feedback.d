build15/obj/host/common/feedback.o: common/feedback.c common/feedback.h \
  common/sitefmt.h

common/feedback.h:

common/sitefmt.h:
