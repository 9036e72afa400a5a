/* The hot-spot profiler's part of the `vigil` command: `vigil hot` (hot.c), and the function
 * symbols it reads (funcsyms.c). */
#ifndef HS_HOTCMD_H
#define HS_HOTCMD_H
#include <stdint.h>

struct hs_funcsyms;

/* The function symbols of the ELF file path (NULL when it cannot be read). */
struct hs_funcsyms *hs_funcsyms_open(const char *path);
/* The link-time address where the function called name starts: 0, or -1 when none is named so
 * (the lowest address when several are). */
int hs_funcsyms_find(const struct hs_funcsyms *t, const char *name, uint64_t *start);
void hs_funcsyms_close(struct hs_funcsyms *t);

int hs_cmd_hot(int argc, char **argv);

#endif
