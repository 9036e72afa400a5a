/* Reading site tables from an ELF file on disk (libelf). The runtime reads the same tables
 * from memory; this is the command's view of a binary. */
#ifndef VIGIL_CMD_ELFSITES_H
#define VIGIL_CMD_ELFSITES_H
#include <stddef.h>
#include <stdint.h>

#include "sitefmt.h"

struct vigil_elf_sites {
    int has_section;                     /* the binary has a "vigil_sites" section */
    int has_runtime_symbol;              /* __vigil_register_module is defined or referenced */
    unsigned char *section;              /* copy of the section's bytes (tables point into it) */
    size_t section_size;
    unsigned char *cfg_section;          /* copy of "vigil_cfg" (the tables' control-flow facts) */
    size_t cfg_section_size;
    size_t ntables;
    struct vigil_sitefmt_table *tables;  /* in section order */
};

/* Open path and decode its site tables. A binary without the section is not an error
 * (has_section = 0, ntables = 0). Returns 0, or -1 with "PATH: what was expected" in err. */
int vigil_elf_sites_load(const char *path, struct vigil_elf_sites *s, char *err, size_t errlen);
void vigil_elf_sites_free(struct vigil_elf_sites *s);
/* The table with this identity (tu_hash and site count), or NULL. */
const struct vigil_sitefmt_table *vigil_elf_sites_find(const struct vigil_elf_sites *s,
                                                       uint64_t tu_hash, uint32_t nsites);

#endif
