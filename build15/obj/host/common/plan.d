build15/obj/host/common/plan.o: common/plan.c common/plan.h

common/plan.h:
