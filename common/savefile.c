/* See savefile.h. */
#include "savefile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int vigil_save_file(const char *path, int (*write)(FILE *f, void *arg), void *arg, char *err, size_t errlen)
{
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", path) >= sizeof tmp)
        return snprintf(err, errlen, "%s: path too long", path), -1;
    int fd = mkstemp(tmp);
    if (fd < 0)
        return snprintf(err, errlen, "%s: cannot create a temporary file beside it: %s", path, strerror(errno)), -1;
    mode_t mask = umask(0);   /* the mode fopen would have given it; mkstemp's is 0600 */
    umask(mask);
    FILE *f = fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    errno = 0;
    int bad = write(f, arg) != 0;
    int saved = errno;
    bad |= fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
    if (!saved)
        saved = errno;
    bad |= fclose(f) != 0;
    if (!saved)
        saved = errno;
    if (bad || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s (the previous file is kept)", path,
                 strerror(bad ? (saved ? saved : EIO) : errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}
