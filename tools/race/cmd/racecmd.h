/* The race tool's part of the `vigil` command (tools/race/cmd/), shared between its files. */
#ifndef RACE_CMD_H
#define RACE_CMD_H
#include <stdint.h>

struct vigil_findings;

/* Data symbols of a binary (symtab.c). */
struct race_symtab;
struct race_symtab *race_symtab_open(const char *path);   /* NULL when unreadable */
/* The variable that holds link-time address addr (NULL when none), and addr's offset in it. */
const char *race_symtab_find(const struct race_symtab *t, uint64_t addr, uint64_t *offset);
void race_symtab_close(struct race_symtab *t);

/* race.json of the run in rundir as findings (findings.c). */
int race_findings(const char *rundir, struct vigil_findings *out);

#endif
