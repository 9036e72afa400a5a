/* The runtime's ELF section finder (common/elfsection.c): every named section of real files
 * (this test, the C library, a vigil-built binary if there is one) where libelf says it is,
 * and each kind of malformed header rejected with a reason, from an exactly sized buffer. */
// unit-libs: -lelf
#include "check.h"
#include "elfsection.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return NULL;
    unsigned char *p = malloc((size_t)st.st_size ? (size_t)st.st_size : 1);
    size_t done = 0;
    while (p && done < (size_t)st.st_size) {
        ssize_t n = read(fd, p + done, (size_t)st.st_size - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    close(fd);
    *len = done;
    return p;
}

/* Every section with a name and contents: found at libelf's offset and size. */
static void compare_with_libelf(const char *path)
{
    size_t len = 0;
    unsigned char *bytes = slurp(path, &len);
    if (!bytes) {
        printf("(skipped %s: unreadable)\n", path);
        return;
    }
    struct vigil_memory_file b = {bytes, len};
    elf_version(EV_CURRENT);
    Elf *elf = elf_memory((char *)bytes, len);
    size_t shstrndx = 0, checked = 0;
    CHECK(elf && elf_getshdrstrndx(elf, &shstrndx) == 0, "%s: libelf cannot read it", path);
    for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *name;
        if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) || !name[0] ||
            strlen(name) >= 60)
            continue;
        uint64_t offset = 0, size = 0;
        char err[200] = "";
        int rc = vigil_elf_find_section(vigil_read_memory, &b, len, name, &offset, &size, err, sizeof err);
        if (sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
            CHECK(rc == 1, "%s: section %s without contents: rc %d", path, name, rc);
        else
            CHECK(rc == 0 && offset == sh.sh_offset && size == sh.sh_size, "%s: section %s: rc %d at %llu+%llu, "
                  "libelf %llu+%llu (%s)", path, name, rc, (unsigned long long)offset, (unsigned long long)size,
                  (unsigned long long)sh.sh_offset, (unsigned long long)sh.sh_size, err);
        checked++;
    }
    CHECK(checked > 10, "%s: only %zu sections compared", path, checked);
    uint64_t offset, size;
    CHECK(vigil_elf_find_section(vigil_read_memory, &b, len, "no.such.section", &offset, &size, NULL, 0) == 1,
          "%s: a section that is not there", path);
    if (elf)
        elf_end(elf);
    free(bytes);
}

/* A copy of the file cut or changed, read from a buffer of exactly its size. */
static int find_in_mutation(const unsigned char *bytes, size_t len, const char *name, char *err, size_t errlen)
{
    unsigned char *copy = malloc(len ? len : 1);
    memcpy(copy, bytes, len);
    struct vigil_memory_file b = {copy, len};
    uint64_t offset, size;
    int rc = vigil_elf_find_section(vigil_read_memory, &b, len, name, &offset, &size, err, errlen);
    free(copy);
    return rc;
}

static void put(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void test_malformed(const char *path)
{
    size_t len = 0;
    unsigned char *orig = slurp(path, &len), *m = malloc(len);
    char err[200];
    CHECK(orig && len > 4096, "%s unreadable", path);
    if (!orig)
        return;
    CHECK(find_in_mutation(orig, len, ".text", err, sizeof err) == 0, "the unchanged file: %s", err);
    CHECK(find_in_mutation(orig, 40, ".text", err, sizeof err) == -1 && strstr(err, "too short"), "40 bytes: %s", err);
    CHECK(find_in_mutation((const unsigned char *)"#!/bin/sh\necho not an ELF file at all, but long enough for "
                           "its header to be read\n", 80, ".text", err, sizeof err) == -1 && strstr(err, "not an ELF"),
          "a script: %s", err);
    uint64_t shoff = 0;
    for (int i = 7; i >= 0; i--)
        shoff = shoff << 8 | orig[0x28 + i];
    struct { const char *what; size_t at; uint64_t value; int bytes; const char *reason; } cases[] = {
        {"32-bit class", 4, 1, 1, "64-bit"},
        {"big-endian", 5, 2, 1, "little-endian"},
        {"no section headers", 0x28, 0, 8, "no section headers"},
        {"headers past the end", 0x28, len, 8, "past the end"},
        {"header size", 0x3a, 40, 2, "header size"},
        {"too many sections", 0x3c, 60000, 2, "past the end"},
        {"names index out of range", 0x3e, 5000, 2, "out of range"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memcpy(m, orig, len);
        put(m + cases[k].at, cases[k].value, cases[k].bytes);
        err[0] = '\0';
        int rc = find_in_mutation(m, len, ".text", err, sizeof err);
        CHECK(rc == -1 && strstr(err, cases[k].reason), "%s: rc %d \"%s\"", cases[k].what, rc, err);
    }
    /* The section headers cut off by the end of the file. */
    CHECK(find_in_mutation(orig, (size_t)shoff + 100, ".text", err, sizeof err) == -1, "headers cut short");
    /* A section whose contents lie past the end: make every section's offset huge. */
    memcpy(m, orig, len);
    uint64_t shnum = (uint64_t)m[0x3c] | (uint64_t)m[0x3d] << 8, shstrndx = (uint64_t)m[0x3e] | (uint64_t)m[0x3f] << 8;
    for (uint64_t i = 1; i < shnum; i++)
        if (i != shstrndx)
            put(m + shoff + i * 64 + 24, (uint64_t)1 << 40, 8);
    CHECK(find_in_mutation(m, len, ".text", err, sizeof err) == -1 && strstr(err, "past the end"),
          "contents past the end: %s", err);
    /* The section name table past the end. */
    memcpy(m, orig, len);
    put(m + shoff + shstrndx * 64 + 24, len - 2, 8);
    CHECK(find_in_mutation(m, len, ".text", err, sizeof err) == -1 && strstr(err, "name table"),
          "name table past the end: %s", err);
    free(m);
    free(orig);
}

int main(int argc, char **argv)
{
    (void)argc;
    compare_with_libelf("/proc/self/exe");
    const char *libc[] = {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"};
    for (size_t i = 0; i < 2; i++)
        if (access(libc[i], R_OK) == 0) {
            compare_with_libelf(libc[i]);
            break;
        }
    test_malformed(argv[0]);
    return CHECK_DONE("elfsection");
}
