/* Loads a run report with the reader (common/runreport.c) and prints what tests/runtime/run.sh
 * checks, one fact per line. Exit 1 (with the reader's message) when the report is rejected. */
#include <stdio.h>

#include "runreport.h"
#include "sitefmt.h"

int main(int argc, char **argv)
{
    struct vigil_run_report r;
    char err[512];
    if (argc != 2) {
        fprintf(stderr, "usage: rt_report REPORT_DIR\n");
        return 2;
    }
    if (vigil_run_report_load(argv[1], &r, err, sizeof err) != 0) {
        printf("invalid %s\n", err);
        return 1;
    }
    if (r.exited)
        printf("exit %d\n", r.exit_status);
    else
        printf("signal %d\n", r.signal);
    printf("pid %lld\nppid %lld\nargc %d\n", (long long)r.pid, (long long)r.ppid, r.argc);
    printf("tools %s\n", r.tools[0] ? r.tools : "-");
    for (size_t i = 0; i < r.noptions; i++)
        printf("option %s %s\n", r.option_names[i], r.option_values[i]);
    for (size_t i = 0; i < r.nmodules; i++)
        printf("module %u %016llx %u %u\n", r.modules[i].index,
               (unsigned long long)r.modules[i].tu_hash, r.modules[i].nsites, r.modules[i].base_id);
    for (size_t i = 0; i < r.nsites; i++)
        printf("site %u %u %s %llu %llu %g\n", r.sites[i].module, r.sites[i].index,
               vigil_site_kind_name((enum vigil_site_kind)r.sites[i].kind),
               (unsigned long long)r.sites[i].execs, (unsigned long long)r.sites[i].bursts,
               r.sites[i].rate);
    vigil_run_report_free(&r);
    return 0;
}
