/* The hot-spot profiler's part of the `vigil` command: `vigil hot` (hot.c). */
#ifndef HS_HOTCMD_H
#define HS_HOTCMD_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int hs_cmd_hot(int argc, char **argv);

/* `vigil observe`'s part (struct vigil_cmd_tool observe_write): [hotspot.entries], the
 * functions with at least HS_OBSERVE_SHARE percent of the samples, inclusive, over the
 * processes' hotspot.json, but those called more than HS_OBSERVE_MAX_RATE times per CPU
 * second of the run (their nop would cost most of all). */
#define HS_OBSERVE_SHARE 1
#define HS_OBSERVE_MAX_RATE 1e6
int hs_observe_write(const char *const *rundirs, size_t n, uint64_t (*calls)(const char *function, void *arg),
                     void *calls_arg, FILE *f);

#endif
