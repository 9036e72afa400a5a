// Calls from instrumented code into other units (compiler/outline.c, local burst entries):
// (a) a unit built by vigil-cc, (b) a member of an archive built by vigil-cc, (c) a member of an
// archive built by plain clang, (d) libc, (e) a shared library built by vigil-cc. Every mode
// prints what the plain build prints; e2e-cmd/burst-calls checks that the burst goes on in the
// callees of (a) and (b). Usage: burst_calls [REPEATS] (default 10000).
// e2e-sources: burst_calls_other.c
// e2e-archive: burst_calls_archive.c
// e2e-plain-archive: burst_calls_plain.c
// e2e-shlib: burst_calls_lib.c
#include <stdio.h>
#include <stdlib.h>

int other_unit(int x);     /* burst_calls_other.c */
int archive_unit(int x);   /* burst_calls_archive.c */
int plain_unit(int x);     /* burst_calls_plain.c */
int shared_unit(int x);    /* burst_calls_lib.c */

int main(int argc, char **argv) {
    long repeats = argc > 1 ? atol(argv[1]) : 10000;
    char number[] = "40";
    long sum = 0;
    for (long i = 0; i < repeats; i++) {
        number[1] = (char)('0' + i % 10);
        sum += other_unit((int)i) + archive_unit((int)i) + plain_unit((int)i) + shared_unit((int)i);
        sum += strtol(number, NULL, 10);
    }
    printf("%ld calls, sum %ld\n", repeats, sum);
    return 0;
}
