/* The race tool's part of the `vigil` command (tools/race/cmd/), shared between its files. */
#ifndef RACE_CMD_H
#define RACE_CMD_H
#include <stdint.h>

struct vigil_findings;

/* race.json of the run in rundir as findings (findings.c). */
int race_findings(const char *rundir, struct vigil_findings *out);

#endif
