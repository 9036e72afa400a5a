/* libFuzzer harness: the run report reader must reject or accept any bytes without crashing,
 * leaking or reading out of bounds, and every rejection must name the file and a line. An
 * accepted report must survive a round trip through vigil_escape / vigil_unescape. */
#include <stdlib.h>
#include <string.h>

#include "runreport.h"

#define NAME "fuzz/run.txt"

static void check_escape_round_trip(const char *s)
{
    char small[8], big[4096];
    size_t need = vigil_escape(s, small, sizeof small);
    if (need >= sizeof big)
        return;
    if (vigil_escape(s, big, sizeof big) != need || strlen(big) != need ||
        strncmp(small, big, sizeof small - 1) != 0)
        abort();
    if (vigil_unescape(big) != 0 || strcmp(big, s) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct vigil_run_report r;
    char err[512];
    err[0] = '\0';
    if (vigil_run_report_parse((const char *)data, size, NAME, &r, err, sizeof err) != 0) {
        /* "fuzz/run.txt:<line>: ..." */
        if (strncmp(err, NAME ":", sizeof NAME) != 0 || err[sizeof NAME] < '1' ||
            err[sizeof NAME] > '9')
            abort();
        if (r.program || r.argv || r.modules || r.sites || r.option_names)
            abort();
        return 0;
    }
    check_escape_round_trip(r.program);
    for (int i = 0; i < r.argc; i++)
        check_escape_round_trip(r.argv[i]);
    for (size_t i = 0; i < r.nsites; i++)
        if (r.sites[i].module >= r.nmodules ||
            r.sites[i].index >= r.modules[r.sites[i].module].nsites)
            abort();
    vigil_run_report_free(&r);
    return 0;
}
