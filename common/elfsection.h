/* Where a named section lies in an ELF file: enough ELF for the runtime to find its site
 * tables, which are not loaded into memory (the "vigil_sites" section has no SHF_ALLOC).
 * The vigil command reads binaries with libelf (cmd/elfsites.c); a program cannot be made to
 * depend on libelf, so the runtime has this: no allocation, reads through a callback (pread
 * in the runtime, a buffer in tests and the fuzzer), every offset checked against the file's
 * size. 64-bit little-endian files only, the only kind vigil-cc writes tables into. */
#ifndef VIGIL_ELFSECTION_H
#define VIGIL_ELFSECTION_H
#include <stddef.h>
#include <stdint.h>

/* Reads len bytes at offset into buf; returns 0 when all of them were read. */
typedef int (*vigil_read_at_fn)(void *ctx, uint64_t offset, void *buf, size_t len);

/* A file already in memory, for vigil_read_memory (tests, the fuzzer). */
struct vigil_memory_file {
    const unsigned char *bytes;
    size_t len;
};
/* A vigil_read_at_fn over a struct vigil_memory_file: fails past its end. */
int vigil_read_memory(void *file, uint64_t offset, void *buf, size_t len);

/* A vigil_read_at_fn over an open file descriptor (ctx: a pointer to the int), with pread:
 * no allocation, retried on EINTR. */
int vigil_read_fd(void *fd, uint64_t offset, void *buf, size_t len);

/* Finds the section called name in a file of file_size bytes. Returns 0 and its file offset
 * and size (inside the file); 1 when the file has no such section with contents; -1 when the
 * file is not a 64-bit little-endian ELF file or is malformed, with a one-line reason in err. */
int vigil_elf_find_section(vigil_read_at_fn read_at, void *ctx, uint64_t file_size, const char *name,
                           uint64_t *offset, uint64_t *size, char *err, size_t errlen);

#endif
