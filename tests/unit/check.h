/* Minimal check macros for the unit tests (tests/unit/test_*.c and tools/<tool>/tests/test_*.c,
 * run by tests/run.sh). CHECK(cond) or CHECK(cond, "format", args...): each failed CHECK prints
 * one line, with the message when there is one; CHECK_DONE prints "<name>: N passed, N failed"
 * and evaluates to the exit code (0 when nothing failed). */
#ifndef VIGIL_TEST_CHECK_H
#define VIGIL_TEST_CHECK_H
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Written by CHECK (from one thread at a time), read by CHECK_DONE. */
static unsigned check_passed, check_failed;

/* fmt is ": " and the CHECK's message (a string literal, or nothing: then fmt is ": " alone). */
__attribute__((format(printf, 4, 5)))
static void check_report_failure(const char *file, int line, const char *cond, const char *fmt, ...)
{
    printf("%s:%d: check failed: %s", file, line, cond);
    if (fmt[2]) {
        va_list ap;
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
    }
    printf("\n");
}

#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (cond) {                                                              \
            check_passed++;                                                      \
        } else {                                                                 \
            check_failed++;                                                      \
            check_report_failure(__FILE__, __LINE__, #cond, ": " __VA_ARGS__);   \
        }                                                                        \
    } while (0)

#define CHECK_DONE(name)                                                         \
    (printf("%s: %u passed, %u failed\n", (name), check_passed, check_failed),   \
     check_failed ? 1 : 0)

/* Entries of dir other than . and .. (a test that files were not left behind). */
static int check_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

#endif
