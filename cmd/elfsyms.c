/* The symbols of an ELF file (elfsyms.h), kept sorted by name. */
#include "elfsyms.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sym {
    char *name;
    uint64_t value, size;
};
struct vigil_elfsyms {
    struct sym *v;
    size_t n;
};

static int wanted(const GElf_Sym *s, unsigned kinds)
{
    int type = GELF_ST_TYPE(s->st_info);
    if (s->st_shndx == SHN_UNDEF)
        return 0;
    return ((kinds & VIGIL_ELFSYMS_DATA) && (type == STT_OBJECT || type == STT_COMMON)) ||
           ((kinds & VIGIL_ELFSYMS_FUNCTIONS) && type == STT_FUNC);
}

static int add_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, unsigned kinds, struct vigil_elfsyms *t,
                       size_t *cap)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || sh->sh_entsize == 0)
        return 0;
    size_t count = sh->sh_size / sh->sh_entsize;
    for (size_t i = 0; i < count; i++) {
        GElf_Sym s;
        if (!gelf_getsym(data, (int)i, &s) || !wanted(&s, kinds))
            continue;
        const char *name = elf_strptr(elf, sh->sh_link, s.st_name);
        if (!name || !name[0])
            continue;
        if (t->n == *cap) {
            size_t c = *cap ? *cap * 2 : 256;
            struct sym *g = realloc(t->v, c * sizeof *g);
            if (!g)
                return -1;
            t->v = g;
            *cap = c;
        }
        char *copy = strdup(name);
        if (!copy)
            return -1;
        t->v[t->n++] = (struct sym){copy, s.st_value, s.st_size};
    }
    return 0;
}

static int by_name(const void *x, const void *y)
{
    const struct sym *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : a->value < b->value ? -1 : a->value > b->value;
}

struct vigil_elfsyms *vigil_elfsyms_open(const char *path, unsigned kinds)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    struct vigil_elfsyms *t = calloc(1, sizeof *t);
    size_t cap = 0;
    if (elf && t)
        for (int pass = 0; pass < 2 && t->n == 0; pass++) {
            Elf_Scn *scn = NULL;
            while ((scn = elf_nextscn(elf, scn)) != NULL) {
                GElf_Shdr sh;
                if (gelf_getshdr(scn, &sh) && sh.sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
                    add_symbols(elf, scn, &sh, kinds, t, &cap);
            }
        }
    if (elf)
        elf_end(elf);
    close(fd);
    if (t && t->n)
        qsort(t->v, t->n, sizeof *t->v, by_name);
    return t;
}

const char *vigil_elfsyms_at(const struct vigil_elfsyms *t, uint64_t addr, uint64_t *offset)
{
    const struct sym *best = NULL;
    for (size_t i = 0; t && i < t->n; i++) {
        const struct sym *s = &t->v[i];
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

int vigil_elfsyms_named(const struct vigil_elfsyms *t, const char *name, uint64_t *start)
{
    size_t lo = 0, hi = t ? t->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(t->v[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!t || lo >= t->n || strcmp(t->v[lo].name, name) != 0)
        return -1;
    *start = t->v[lo].value;
    return 0;
}

void vigil_elfsyms_close(struct vigil_elfsyms *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].name);
    free(t->v);
    free(t);
}
