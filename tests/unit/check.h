/* Minimal check macros for the unit tests (tests/unit/test_*.c, run by tests/run.sh).
 * Each failed CHECK prints one line; CHECK_DONE prints "<name>: N passed, N failed" and
 * evaluates to the exit code (0 when nothing failed). */
#ifndef VIGIL_TEST_CHECK_H
#define VIGIL_TEST_CHECK_H
#include <stdio.h>

static unsigned check_passed, check_failed;

#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (cond) {                                                              \
            check_passed++;                                                      \
        } else {                                                                 \
            check_failed++;                                                      \
            printf("%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);      \
            printf(__VA_ARGS__);                                                 \
            printf("\n");                                                        \
        }                                                                        \
    } while (0)

#define CHECK_DONE(name)                                                         \
    (printf("%s: %u passed, %u failed\n", (name), check_passed, check_failed),   \
     check_failed ? 1 : 0)

#endif
