build15/obj/host/common/scores.o: common/scores.c common/scores.h

common/scores.h:
