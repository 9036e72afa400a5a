/* The hot-spot profiler's part of the `vigil` command: `vigil hot` (hot.c). */
#ifndef HS_HOTCMD_H
#define HS_HOTCMD_H
#include <stdint.h>

int hs_cmd_hot(int argc, char **argv);

#endif
