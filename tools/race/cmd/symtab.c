/* Data symbols of a binary (libelf): the global or static variable that holds a link-time
 * address, for the race tool's findings ("data race on counter"). The symbol table (.symtab)
 * names static variables too; a stripped binary has only .dynsym, or nothing. */
#include "racecmd.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sym {
    uint64_t value, size;
    char *name;
};
struct race_symtab {
    struct sym *syms;
    size_t n;
};

static int add_symbols(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, struct race_symtab *t, size_t *cap)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || sh->sh_entsize == 0)
        return 0;
    size_t count = sh->sh_size / sh->sh_entsize;
    for (size_t i = 0; i < count; i++) {
        GElf_Sym s;
        if (!gelf_getsym(data, (int)i, &s))
            continue;
        int type = GELF_ST_TYPE(s.st_info);
        if ((type != STT_OBJECT && type != STT_COMMON) || s.st_shndx == SHN_UNDEF)
            continue;
        const char *name = elf_strptr(elf, sh->sh_link, s.st_name);
        if (!name || !name[0])
            continue;
        if (t->n == *cap) {
            size_t c = *cap ? *cap * 2 : 256;
            struct sym *g = realloc(t->syms, c * sizeof *g);
            if (!g)
                return -1;
            t->syms = g;
            *cap = c;
        }
        char *copy = strdup(name);
        if (!copy)
            return -1;
        t->syms[t->n++] = (struct sym){s.st_value, s.st_size, copy};
    }
    return 0;
}

struct race_symtab *race_symtab_open(const char *path)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    struct race_symtab *t = calloc(1, sizeof *t);
    size_t cap = 0;
    if (elf && t) {
        /* .symtab when there is one (it holds .dynsym's names too), else .dynsym */
        for (int pass = 0; pass < 2 && t->n == 0; pass++) {
            Elf_Scn *scn = NULL;
            while ((scn = elf_nextscn(elf, scn)) != NULL) {
                GElf_Shdr sh;
                if (gelf_getshdr(scn, &sh) && sh.sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
                    add_symbols(elf, scn, &sh, t, &cap);
            }
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return t;
}

const char *race_symtab_find(const struct race_symtab *t, uint64_t addr, uint64_t *offset)
{
    const struct sym *best = NULL;
    for (size_t i = 0; t && i < t->n; i++) {
        const struct sym *s = &t->syms[i];
        if (addr < s->value || (s->size ? addr - s->value >= s->size : addr != s->value))
            continue;
        if (!best || s->size < best->size)
            best = s;
    }
    if (!best)
        return NULL;
    *offset = addr - best->value;
    return best->name;
}

void race_symtab_close(struct race_symtab *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->syms[i].name);
    free(t->syms);
    free(t);
}
