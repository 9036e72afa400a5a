/* Replacing a file whole or not at all: what the commands write (plans, search states, labels,
 * pages) is written to a temporary file beside the target, flushed to disk and renamed into
 * place, so that a reader never sees half a file and a failed write keeps the old one. */
#ifndef VIGIL_SAVEFILE_H
#define VIGIL_SAVEFILE_H
#include <stddef.h>
#include <stdio.h>

/* Call write(f, arg) on a new temporary file beside path (mode as fopen "w" gives), then put
 * it in path's place. write returns 0, or non-zero when what it wrote is not to be kept.
 * Returns 0; or -1 with "PATH: reason (the previous file is kept)" in err, the temporary file
 * removed. */
int vigil_save_file(const char *path, int (*write)(FILE *f, void *arg), void *arg, char *err, size_t errlen);

#endif
