/* vigil html [RUNDIR|OUTDIR] -o page.html: the findings page (cmd/html.c) of a leak report, with the
 * leak tool's own suppression file (as `vigil leaks --suppress`) and --all. The same page as
 * `vigil report --html`, only this tool's findings, and a paragraph of the leak report's settings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "findings.h"
#include "html.h"
#include "leakreport.h"
#include "report.h"


int cmd_html(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL, *suppress = NULL;
    int all = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--suppress") == 0 && i + 1 < argc)
            suppress = argv[++i];
        else if (strcmp(argv[i], "--all") == 0)
            all = 1;
        else if (argv[i][0] == '-')
            return cmd_usage_error("html", "unknown option \"%s\"", argv[i]);
        else if (dir)
            return cmd_usage_error("html", "one run directory expected, got \"%s\" too", argv[i]);
        else
            dir = argv[i];
    }
    if (!out)
        return cmd_usage_error("html", "missing -o FILE");
    char rundir[4200];
    if (cmd_run_holding(dir, LEAK_REPORT_FILE, rundir, sizeof rundir) != 0)
        return cmd_error("html", "%s: no run with " LEAK_REPORT_FILE " in it (run a program with `vigil run --tool "
                         "leak` or VIGIL_OPTIONS=tools=leak)", rundir);
    struct leak_report_view r;
    char err[1024];
    if (leak_report_load(rundir, &r, err, sizeof err) != 0 || leak_report_prepare(&r, suppress, err, sizeof err) != 0) {
        leak_report_free(&r);
        return cmd_error("html", "%s", err);
    }
    struct vigil_findings f;
    vigil_findings_init(&f);
    char *title = NULL, *intro = NULL, summary[512];
    int rc = leak_findings_from_report(&r, all, &f) != 0 || vigil_findings_set_run(&f, dir, r.have_run ? r.run.program : "") != 0;
    if (!rc) {
        vigil_findings_summary(&f, 0, summary, sizeof summary);
        if (asprintf(&title, "Leaks of %s", r.have_run ? r.run.program : dir) < 0)
            title = NULL;
        if (asprintf(&intro, "Report %s: %s.\nStale: idle for more than %.3g s%s (and %.3g x the object's longest "
                     "gap); reachability at exit: %s. %llu allocations, %llu frees, %llu frees of unknown pointers; "
                     "%llu accesses sampled, %llu in heap objects.", dir, summary, r.stale_after_s,
                     r.active_clock ? " of active time" : "", r.gap_factor, r.reach_done ? "done" : "not done",
                     (unsigned long long)r.allocs, (unsigned long long)r.frees, (unsigned long long)r.unknown_frees,
                     (unsigned long long)r.accesses_sampled, (unsigned long long)r.accesses_heap) < 0)
            intro = NULL;
        rc = !title || !intro;
    }
    if (rc)
        snprintf(err, sizeof err, "out of memory");
    else
        rc = cmd_findings_page(out, &f, title, intro, err, sizeof err) != 0;
    free(title);
    free(intro);
    vigil_findings_free(&f);
    leak_report_free(&r);
    return rc ? cmd_error("html", "%s", err) : 0;
}
