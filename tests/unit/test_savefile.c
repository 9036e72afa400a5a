/* common/savefile.c: a file is replaced whole or not at all. */
#include "savefile.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static int write_text(FILE *f, void *arg)
{
    return fputs((const char *)arg, f) < 0;
}

static int write_then_fail(FILE *f, void *arg)
{
    fputs((const char *)arg, f);
    return 1;
}

static char *slurp(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Entries of dir other than . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

int main(void)
{
    char dir[] = "/tmp/vigil-savefile.XXXXXX", path[128], err[512];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/out.txt", dir);

    CHECK(vigil_save_file(path, write_text, "first\n", err, sizeof err) == 0, "%s", err);
    CHECK(slurp(path) && strcmp(slurp(path), "first\n") == 0);
    struct stat st;
    mode_t mask = umask(0);
    umask(mask);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == (0666 & ~mask), "mode %o", st.st_mode & 0777);

    CHECK(vigil_save_file(path, write_text, "second\n", err, sizeof err) == 0, "%s", err);
    CHECK(slurp(path) && strcmp(slurp(path), "second\n") == 0);

    /* A writer that fails: the old file stays, no temporary file is left, err says which file. */
    err[0] = '\0';
    CHECK(vigil_save_file(path, write_then_fail, "half", err, sizeof err) == -1);
    CHECK(strncmp(err, path, strlen(path)) == 0 && strstr(err, "previous file is kept"), "%s", err);
    CHECK(slurp(path) && strcmp(slurp(path), "second\n") == 0);
    CHECK(entries(dir) == 1, "%d entries", entries(dir));

    /* A directory that does not exist: an error naming the path, nothing created. */
    char missing[160];
    snprintf(missing, sizeof missing, "%s/no/such/file", dir);
    CHECK(vigil_save_file(missing, write_text, "x", err, sizeof err) == -1);
    CHECK(strncmp(err, missing, strlen(missing)) == 0, "%s", err);
    CHECK(entries(dir) == 1);

    unlink(path);
    rmdir(dir);
    return CHECK_DONE("savefile");
}
