/* libFuzzer harness: the runtime's reading of its site tables from a file (runtime/sitefile.c):
 * the input is the file. Finding a section must never read out of the file, must return a
 * range inside it, and must say why it rejects one; the table lookup in the section found
 * must do the same. */
#include <stdlib.h>
#include <string.h>

#include "elfsection.h"
#include "sitefmt.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    unsigned char *file = malloc(size ? size : 1);   /* exactly sized: ASan sees its end */
    if (!file)
        abort();
    memcpy(file, data, size);
    struct vigil_memory_file b = {file, size};
    const char *names[] = {VIGIL_SITES_SECTION, ".text", ".shstrtab"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        uint64_t offset = 0, bytes = 0;
        char err[200] = "";
        int rc = vigil_elf_find_section(vigil_read_memory, &b, size, names[k], &offset, &bytes, err, sizeof err);
        if (rc < 0 && err[0] == '\0')
            abort();   /* a rejection must say why */
        if (rc != 0)
            continue;
        if (offset > size || bytes > size - offset || bytes == 0)
            abort();   /* a range outside the file */
        if (k == 0) {
            struct vigil_sitefmt_table t;
            uint64_t hash = 0;
            if (bytes >= 24)
                memcpy(&hash, file + offset + 16, 8);   /* the first table's own identity */
            if (vigil_sitefmt_find(file + offset, (size_t)bytes, hash, bytes >= 28 ? file[offset + 24] : 0, &t, err,
                                   sizeof err) < 0 && err[0] == '\0')
                abort();
        }
    }
    free(file);
    return 0;
}
