/* A named section's place in an ELF file (elfsection.h). Fields are decoded byte by byte, so
 * the code does not depend on the host's struct layout or alignment. */
#include "elfsection.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum {
    EHDR_SIZE = 64, SHDR_SIZE = 64,
    E_SHOFF = 0x28, E_SHENTSIZE = 0x3a, E_SHNUM = 0x3c, E_SHSTRNDX = 0x3e,
    SH_NAME = 0, SH_TYPE = 4, SH_OFFSET = 24, SH_SIZE = 32, SH_LINK = 40,
    SHT_NOBITS_TYPE = 8, SHN_XINDEX_INDEX = 0xffff,
    NAME_MAX_BYTES = 64,
};

static uint64_t get(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Section header i, read after checking that the table lies inside the file. */
static int read_shdr(vigil_read_at_fn read_at, void *ctx, uint64_t shoff, uint64_t i, unsigned char *sh)
{
    return read_at(ctx, shoff + i * SHDR_SIZE, sh, SHDR_SIZE);
}

int vigil_read_memory(void *file, uint64_t offset, void *buf, size_t len)
{
    const struct vigil_memory_file *f = file;
    if (offset > f->len || len > f->len - offset)
        return -1;
    memcpy(buf, f->bytes + offset, len);
    return 0;
}

int vigil_read_fd(void *fd, uint64_t offset, void *buf, size_t len)
{
    int f = *(int *)fd;
    for (size_t done = 0; done < len;) {
        ssize_t n = pread(f, (char *)buf + done, len - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

int vigil_elf_find_section(vigil_read_at_fn read_at, void *ctx, uint64_t file_size, const char *name,
                           uint64_t *offset, uint64_t *size, char *err, size_t errlen)
{
    unsigned char eh[EHDR_SIZE], sh[SHDR_SIZE];
    size_t name_len = strlen(name);
    if (name_len + 1 > NAME_MAX_BYTES)
        return fail(err, errlen, "section name \"%s\" too long", name);
    if (file_size < EHDR_SIZE || read_at(ctx, 0, eh, EHDR_SIZE) != 0)
        return fail(err, errlen, "too short for an ELF header (%llu bytes)", (unsigned long long)file_size);
    if (memcmp(eh, "\177ELF", 4) != 0)
        return fail(err, errlen, "not an ELF file");
    if (eh[4] != 2 || eh[5] != 1)
        return fail(err, errlen, "not a 64-bit little-endian ELF file (class %u, data %u)", eh[4], eh[5]);
    uint64_t shoff = get(eh + E_SHOFF, 8), shnum = get(eh + E_SHNUM, 2), shstrndx = get(eh + E_SHSTRNDX, 2);
    if (shoff == 0)
        return fail(err, errlen, "no section headers");
    if (get(eh + E_SHENTSIZE, 2) != SHDR_SIZE)
        return fail(err, errlen, "section header size %llu, expected %d",
                    (unsigned long long)get(eh + E_SHENTSIZE, 2), SHDR_SIZE);
    if (shoff > file_size || file_size - shoff < SHDR_SIZE)
        return fail(err, errlen, "section headers at %llu lie past the end of the file", (unsigned long long)shoff);
    /* Extended numbering: more sections than 16 bits hold keep their count and the names'
     * index in the first header. */
    if (shnum == 0 || shstrndx == SHN_XINDEX_INDEX) {
        if (read_shdr(read_at, ctx, shoff, 0, sh) != 0)
            return fail(err, errlen, "cannot read the first section header");
        if (shnum == 0)
            shnum = get(sh + SH_SIZE, 8);
        if (shstrndx == SHN_XINDEX_INDEX)
            shstrndx = get(sh + SH_LINK, 4);
    }
    if (shnum > (file_size - shoff) / SHDR_SIZE)
        return fail(err, errlen, "%llu section headers at %llu lie past the end of the file",
                    (unsigned long long)shnum, (unsigned long long)shoff);
    if (shstrndx >= shnum)
        return fail(err, errlen, "section name table index %llu out of range (%llu sections)",
                    (unsigned long long)shstrndx, (unsigned long long)shnum);
    if (read_shdr(read_at, ctx, shoff, shstrndx, sh) != 0)
        return fail(err, errlen, "cannot read the section name table's header");
    uint64_t names_at = get(sh + SH_OFFSET, 8), names_size = get(sh + SH_SIZE, 8);
    if (get(sh + SH_TYPE, 4) == SHT_NOBITS_TYPE || names_at > file_size || names_size > file_size - names_at)
        return fail(err, errlen, "section name table lies outside the file");
    for (uint64_t i = 1; i < shnum; i++) {
        if (read_shdr(read_at, ctx, shoff, i, sh) != 0)
            return fail(err, errlen, "cannot read section header %llu", (unsigned long long)i);
        uint64_t at = get(sh + SH_NAME, 4);
        if (at >= names_size || names_size - at < name_len + 1)
            continue;   /* a name too close to the table's end to be this one */
        char found[NAME_MAX_BYTES];
        if (read_at(ctx, names_at + at, found, name_len + 1) != 0)
            return fail(err, errlen, "cannot read the name of section %llu", (unsigned long long)i);
        if (memcmp(found, name, name_len + 1) != 0)
            continue;
        uint64_t where = get(sh + SH_OFFSET, 8), bytes = get(sh + SH_SIZE, 8);
        if (get(sh + SH_TYPE, 4) == SHT_NOBITS_TYPE || bytes == 0)
            return 1;
        if (where > file_size || bytes > file_size - where)
            return fail(err, errlen, "section \"%s\" (%llu bytes at %llu) lies past the end of the file", name,
                        (unsigned long long)bytes, (unsigned long long)where);
        *offset = where;
        *size = bytes;
        return 0;
    }
    return 1;
}
