/* Site tables from an ELF file, with libelf. */
#include "elfsites.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RUNTIME_SYMBOL "__vigil_register_module"

struct collect {
    struct vigil_elf_sites *s;
    size_t cap;
};

static int collect_table(const struct vigil_sitefmt_table *t, void *arg)
{
    struct collect *c = arg;
    if (c->s->ntables == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 8;
        void *n = realloc(c->s->tables, ncap * sizeof *c->s->tables);
        if (!n)
            return -1;
        c->s->tables = n;
        c->cap = ncap;
    }
    c->s->tables[c->s->ntables++] = *t;
    return 0;
}

static int symtab_has(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || sh->sh_entsize == 0)
        return 0;
    size_t n = sh->sh_size / sh->sh_entsize;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym))
            break;
        const char *sname = elf_strptr(elf, sh->sh_link, sym.st_name);
        if (sname && strcmp(sname, name) == 0)
            return 1;
    }
    return 0;
}

static int fail(char *err, size_t errlen, const char *path, const char *what)
{
    snprintf(err, errlen, "%s: %s", path, what);
    return -1;
}

/* A copy of a section's bytes into *bytes (they must outlive the Elf handle, and a section
 * may come in several Elf_Data buffers). An empty section yields *size = 0. */
static int copy_section(const char *path, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
                        unsigned char **bytes, size_t *size, char *err, size_t errlen)
{
    if (sh->sh_type == SHT_NOBITS) {
        snprintf(err, errlen, "%s: the \"%s\" section has no contents (a stripped debug file?); "
                 "expected the binary itself", path, name);
        return -1;
    }
    for (Elf_Data *d = elf_getdata(scn, NULL); d; d = elf_getdata(scn, d)) {
        if (!d->d_buf || d->d_size == 0)
            continue;
        unsigned char *n = realloc(*bytes, *size + d->d_size);
        if (!n)
            return fail(err, errlen, path, "out of memory");
        *bytes = n;
        memcpy(*bytes + *size, d->d_buf, d->d_size);
        *size += d->d_size;
    }
    if (elf_errno() != 0 && *size == 0) {
        snprintf(err, errlen, "%s: cannot read the \"%s\" section: %s", path, name, elf_errmsg(-1));
        return -1;
    }
    return 0;
}

int vigil_elf_sites_load(const char *path, struct vigil_elf_sites *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (elf_version(EV_CURRENT) == EV_NONE)
        return fail(err, errlen, path, "libelf is too old");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    int rc = -1;
    size_t shstrndx;
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        fail(err, errlen, path, "not an ELF file; expected an executable or shared object");
        goto out;
    }
    GElf_Ehdr ehdr;
    struct stat st;
    if (!gelf_getehdr(elf, &ehdr) || fstat(fd, &st) != 0 ||
        ehdr.e_shoff + (uint64_t)ehdr.e_shnum * ehdr.e_shentsize > (uint64_t)st.st_size) {
        fail(err, errlen, path, "truncated ELF file: the section headers lie past its end");
        goto out;
    }
    if (elf_getshdrstrndx(elf, &shstrndx) != 0) {
        snprintf(err, errlen, "%s: malformed ELF section headers: %s", path, elf_errmsg(-1));
        goto out;
    }
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) && !s->has_runtime_symbol)
            s->has_runtime_symbol = symtab_has(elf, scn, &sh, RUNTIME_SYMBOL);
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (name && strcmp(name, VIGIL_SITES_SECTION) == 0) {
            if (s->has_section) {
                fail(err, errlen, path, "two \"" VIGIL_SITES_SECTION "\" sections; expected one");
                goto out;
            }
            s->has_section = 1;
            if (copy_section(path, scn, &sh, VIGIL_SITES_SECTION, &s->section, &s->section_size, err, errlen) != 0)
                goto out;
        } else if (name && strcmp(name, VIGIL_CFG_SECTION) == 0) {
            if (s->cfg_section) {
                fail(err, errlen, path, "two \"" VIGIL_CFG_SECTION "\" sections; expected one");
                goto out;
            }
            if (copy_section(path, scn, &sh, VIGIL_CFG_SECTION, &s->cfg_section, &s->cfg_section_size, err,
                             errlen) != 0)
                goto out;
        }
    }
    char why[256];
    if (s->section_size) {
        struct collect c = {s, 0};
        if (vigil_sitefmt_walk(s->section, s->section_size, collect_table, &c, why,
                               sizeof why) < 0) {
            snprintf(err, errlen, "%s: section \"%s\": %s", path, VIGIL_SITES_SECTION, why);
            goto out;
        }
    }
    if (s->cfg_section_size &&
        vigil_sitefmt_attach_cfg(s->cfg_section, s->cfg_section_size, s->tables, s->ntables, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s: section \"%s\": %s", path, VIGIL_CFG_SECTION, why);
        goto out;
    }
    rc = 0;
out:
    if (elf)
        elf_end(elf);
    close(fd);
    if (rc)
        vigil_elf_sites_free(s);
    return rc;
}

void vigil_elf_sites_free(struct vigil_elf_sites *s)
{
    free(s->section);
    free(s->cfg_section);
    free(s->tables);
    memset(s, 0, sizeof *s);
}

const struct vigil_sitefmt_table *vigil_elf_sites_find(const struct vigil_elf_sites *s,
                                                       uint64_t tu_hash, uint32_t nsites)
{
    for (size_t i = 0; i < s->ntables; i++)
        if (vigil_sitefmt_tu_hash(&s->tables[i]) == tu_hash && s->tables[i].nsites == nsites)
            return &s->tables[i];
    return NULL;
}
