/* common/savefile.c: a file is replaced whole or not at all. */
#include "savefile.h"
#include "textfmt.h"

#include <signal.h>
#include <sys/resource.h>
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

/* The file's text (static buffer), or "" when it cannot be read. */
static const char *text_of(const char *path)
{
    static char *text;
    size_t len;
    char err[256];
    free(text);
    text = NULL;
    return vigil_text_load_file(path, 1 << 16, &text, &len, err, sizeof err) == 0 ? text : "";
}


int main(void)
{
    char dir[] = "/tmp/vigil-savefile.XXXXXX", path[128], err[512];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/out.txt", dir);

    CHECK(vigil_save_file(path, write_text, "first\n", err, sizeof err) == 0, "%s", err);
    CHECK(strcmp(text_of(path), "first\n") == 0);
    struct stat st;
    mode_t mask = umask(0);
    umask(mask);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == (0666 & ~mask), "mode %o", st.st_mode & 0777);

    CHECK(vigil_save_file(path, write_text, "second\n", err, sizeof err) == 0, "%s", err);
    CHECK(strcmp(text_of(path), "second\n") == 0);

    /* A writer that fails: the old file stays, no temporary file is left, err says which file. */
    err[0] = '\0';
    CHECK(vigil_save_file(path, write_then_fail, "half", err, sizeof err) == -1);
    CHECK(strncmp(err, path, strlen(path)) == 0 && strstr(err, "previous file is kept"), "%s", err);
    CHECK(strcmp(text_of(path), "second\n") == 0);
    CHECK(check_dir_entries(dir) == 1, "%d entries", check_dir_entries(dir));

    /* A write the file size limit cuts short: the same. */
    struct rlimit old, small;
    getrlimit(RLIMIT_FSIZE, &old);
    small = old;
    small.rlim_cur = 4;
    signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    int rc = vigil_save_file(path, write_text, "longer than four bytes\n", err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old);
    CHECK(rc == -1 && strstr(err, "previous file is kept"), "rc %d: %s", rc, err);
    CHECK(strcmp(text_of(path), "second\n") == 0);
    CHECK(check_dir_entries(dir) == 1);

    /* A directory that does not exist: an error naming the path, nothing created. */
    char missing[160];
    snprintf(missing, sizeof missing, "%s/no/such/file", dir);
    CHECK(vigil_save_file(missing, write_text, "x", err, sizeof err) == -1);
    CHECK(strncmp(err, missing, strlen(missing)) == 0, "%s", err);
    CHECK(check_dir_entries(dir) == 1);

    unlink(path);
    rmdir(dir);
    return CHECK_DONE("savefile");
}
