/* The symbols of an ELF file (libelf), for the tools' command parts: the variable that holds a
 * link-time address (the race tool names globals and locks), where a function of a given name
 * starts (`vigil hot` gives a function's line). .symtab when there is one (static symbols
 * too; it holds .dynsym's names as well), else .dynsym. */
#ifndef VIGIL_CMD_ELFSYMS_H
#define VIGIL_CMD_ELFSYMS_H
#include <stdint.h>

enum vigil_elfsyms_kind { VIGIL_ELFSYMS_DATA = 1, VIGIL_ELFSYMS_FUNCTIONS = 2 };

struct vigil_elfsyms;
/* The symbols of the kinds asked for (a mask of the above) in path; NULL when it cannot be
 * read. */
struct vigil_elfsyms *vigil_elfsyms_open(const char *path, unsigned kinds);
/* The smallest symbol that holds link-time address addr (NULL when none), and addr's offset in it. */
const char *vigil_elfsyms_at(const struct vigil_elfsyms *t, uint64_t addr, uint64_t *offset);
/* Where the symbol called name starts: 0, or -1 when none is named so (the lowest address
 * when several are). */
int vigil_elfsyms_named(const struct vigil_elfsyms *t, const char *name, uint64_t *start);
void vigil_elfsyms_close(struct vigil_elfsyms *t);

#endif
