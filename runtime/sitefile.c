/* Site tables read from the program's files. vigil-cc puts a module's site table in the
 * "vigil_sites" section, which is not loaded (no SHF_ALLOC): the table names sites for
 * reports, like debug info, and loaded it was a third of a vigil binary's mapped image (lua:
 * 221 KB of 1.85 MB). A report that names a site maps the section of that module's file, once
 * per file, and finds the module's table in it by identity (tu_hash and site count), so a file
 * replaced on disk since the program started gives unnamed sites, never wrong names. */
#include "internal.h"

#include "elfsection.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* One mapped section per file. A slot goes EMPTY -> CLAIMED (by the thread that maps it) ->
 * READY, or FAILED when the file has no usable section (said once, for the first of its
 * modules). Slots are never unmapped; two threads racing on one file may
 * map it twice, which costs an extra mapping, not a wrong answer. No lock: this runs in
 * signal handlers (the crash report), which must not wait for the thread they interrupted. */
enum { SLOT_EMPTY, SLOT_CLAIMED, SLOT_READY, SLOT_FAILED };
struct mapped_section {
    int state;
    const char *path;              /* the module node's path (never freed) */
    const unsigned char *bytes;    /* the section's bytes in the mapping */
    size_t len;
    int mismatch_said;             /* a module without its table here was reported */
};
#define MAX_FILES 64
/* Written by the thread that claims a slot, published with a release store of state. */
static struct mapped_section sections[MAX_FILES];

/* Maps the "vigil_sites" section of the file at path; 0 on success, else a reason in err. */
static int map_section(const char *path, const unsigned char **bytes, size_t *len, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open it: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    uint64_t offset = 0, size = 0;
    int rc = -1;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot stat it: %s", strerror(errno));
        goto out;
    }
    int found = vigil_elf_find_section(vigil_read_fd, &fd, (uint64_t)st.st_size, VIGIL_SITES_SECTION, &offset, &size,
                                       err, errlen);
    if (found == 1)
        snprintf(err, errlen, "it has no \"%s\" section (stripped with --remove-section?)", VIGIL_SITES_SECTION);
    if (found != 0)
        goto out;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), start = offset - offset % page;
    void *map = mmap(NULL, (size_t)(offset + size - start), PROT_READ, MAP_PRIVATE, fd, (off_t)start);
    if (map == MAP_FAILED) {
        snprintf(err, errlen, "cannot map its \"%s\" section: %s", VIGIL_SITES_SECTION, strerror(errno));
        goto out;
    }
    *bytes = (const unsigned char *)map + (offset - start);
    *len = (size_t)size;
    rc = 0;
out:
    close(fd);
    return rc;
}

/* The section of path: a mapped slot, or a new one. NULL with a reason in err, or with an
 * empty err when the reason was given before. */
static const struct mapped_section *section_of(const char *path, char *err, size_t errlen)
{
    for (int i = 0; i < MAX_FILES; i++) {
        struct mapped_section *s = &sections[i];
        int state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if ((state == SLOT_READY || state == SLOT_FAILED) && strcmp(s->path, path) == 0) {
            err[0] = '\0';
            return state == SLOT_READY ? s : NULL;
        }
    }
    for (int i = 0; i < MAX_FILES; i++) {
        struct mapped_section *s = &sections[i];
        int empty = SLOT_EMPTY;
        if (!__atomic_compare_exchange_n(&s->state, &empty, SLOT_CLAIMED, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            continue;
        s->path = path;
        int ok = map_section(path, &s->bytes, &s->len, err, errlen) == 0;
        __atomic_store_n(&s->state, ok ? SLOT_READY : SLOT_FAILED, __ATOMIC_RELEASE);
        return ok ? s : NULL;
    }
    snprintf(err, errlen, "more than %d files with site tables", MAX_FILES);
    return NULL;
}

int __vigil_site_table_from_file(const char *path, uint64_t tu_hash, uint32_t nsites,
                                 struct vigil_sitefmt_table *t, char *err, size_t errlen)
{
    struct mapped_section *s = (struct mapped_section *)section_of(path, err, errlen);
    if (!s)
        return -1;
    char why[160];
    int found = vigil_sitefmt_find(s->bytes, s->len, tu_hash, nsites, t, why, sizeof why);
    err[0] = '\0';
    if (found != 0 && !__atomic_exchange_n(&s->mismatch_said, 1, __ATOMIC_RELAXED)) {
        if (found < 0)
            snprintf(err, errlen, "its \"%s\" section is malformed: %s", VIGIL_SITES_SECTION, why);
        else
            snprintf(err, errlen, "some of its modules have no site table there (the file changed since "
                     "the program started?)");
    }
    return found == 0 ? 0 : -1;
}
