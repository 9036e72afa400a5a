build15/obj/host/common/json.o: common/json.c common/json.h

common/json.h:
