/* The leak tool's report (leak.json, written by tools/leak/runtime/report.c) as the `vigil leaks` and
 * `vigil html` commands see it: loaded, symbolized (allocation stacks through the binaries'
 * debug info), groups with the same source stack merged (the checking and instrumented copies
 * of a function call malloc from two PCs), suppressions applied, sorted worst first. */
#ifndef VIGIL_CMD_LEAKREPORT_H
#define VIGIL_CMD_LEAKREPORT_H
#include <stddef.h>
#include <stdint.h>

#include "runreport.h"

#define LEAK_REPORT_FILE "leak.json"   /* in each run directory (tools/leak/runtime/report.c) */

struct leak_frame {
    uint64_t pc, offset;        /* runtime return address; link-time address in its module */
    int module;                 /* index into modules, -1 when unknown */
    char *function, *file;      /* "" when unknown (malloc'd) */
    int line, column;
    int inlined;                /* inlined into the next frame (which has the same pc) */
};

struct leak_access {
    int present;                /* 0: no sampled access seen */
    uint32_t site;              /* process-wide vigil site id */
    char *kind, *function, *file;
    uint32_t line, column;      /* line 0: the access has no line of its own */
    uint32_t nearest_line;      /* then the nearest line of its function that is known, or 0 */
    uint64_t t_ms;              /* most recent: when */
    uint64_t objects;           /* most common: how many objects */
    double rate;                /* sampling rate of the function's entry check; < 0 unknown */
};

struct leak_group_view {
    char *kind;                 /* "unreachable", "stale", "both" */
    double score;
    size_t nframes;
    struct leak_frame *frames;
    uint64_t objects, bytes, stale_objects, stale_bytes, unreachable_objects, unreachable_bytes;
    uint64_t both_objects, both_bytes, live_objects, live_bytes;
    uint64_t indirect_objects, indirect_bytes;   /* of the unreachable: held by other leaked objects */
    uint64_t age_max_ms, age_min_ms, idle_min_ms, idle_max_ms, idle_avg_ms, never_accessed;
    uint64_t site_allocs, site_frees, site_accesses_sampled, snapshots_flagged;
    struct leak_access recent, common;
    int merged;                 /* raw groups merged into this one */
    int unsampled;              /* stale only, allocated outside instrumented code: accesses
                                   there are never sampled, so staleness says nothing */
    char *suppressed_by;        /* the suppression pattern that matched, or NULL */
};

struct leak_snapshot_view {
    char *reason;
    uint64_t t_ms, live_objects, live_bytes, stale_objects, stale_bytes;
    int64_t unreachable_objects;   /* -1: no reachability in this snapshot */
};

struct leak_module_view { char *path; uint64_t bias; int instrumented; char *problem; };

struct leak_report_view {
    char *dir;
    struct vigil_run_report run;    /* run.txt beside leak.json (have_run) */
    int have_run;
    double stale_after_s, gap_factor, snapshot_every_s;
    uint64_t stale_allocs, depth;
    int active_clock;               /* leak.clock=active: times are active time, not wall time */
    int reach_enabled, reach_done;
    char *reach_method;
    char *reach_error;              /* why a scan that was enabled did not finish, or "" */
    uint64_t reach_root_bytes, reach_marked, reach_threads;
    uint64_t allocs, frees, unknown_frees, realloc_moves, live_objects, live_bytes, peak_live_bytes;
    uint64_t model_mapped_bytes, model_resident_bytes, sites;
    uint64_t accesses_sampled, accesses_heap;
    uint64_t duration_ms;
    size_t nmodules;
    struct leak_module_view *modules;
    size_t nsnapshots;
    struct leak_snapshot_view *snapshots;
    size_t ngroups;
    struct leak_group_view *groups;   /* worst first after leak_report_prepare */
    int running;                      /* written while the program ran (SIGUSR2, vigil_flush_report) */
    int short_run;                    /* the run was shorter than stale_after: nothing could be stale */
    uint64_t in_use_objects, in_use_bytes, in_use_sites;   /* live at the end (or the snapshot) */
    size_t nin_use;
    struct leak_group_view *in_use;   /* the largest sites (frames, live_objects, live_bytes,
                                         site_allocs, site_frees), largest first */
};

/* Load RUNDIR/leak.json (and RUNDIR/run.txt when present). 0, or -1 with a message. */
int leak_report_load(const char *rundir, struct leak_report_view *r, char *err, size_t errlen);
/* Symbolize, merge, mark unsampled groups, apply the suppression file (NULL: none), sort.
 * 0, or -1 with a message (a bad suppression file). */
int leak_report_prepare(struct leak_report_view *r, const char *suppress_path, char *err, size_t errlen);
void leak_report_free(struct leak_report_view *r);
/* After prepare: every reported group has at most one frame while the run asked for more, as
 * when the program was built without frame pointers (the runtime walks them). */
int leak_report_stacks_shallow(const struct leak_report_view *r);

/* Parse a suppression file's text: lines "leak:PAT", "function:PAT", "file:PAT" ('#' comments;
 * PAT is a substring, or a glob when it holds '*' or '?'). Returns the number of patterns, or
 * -1 with "NAME:LINE: reason" in err. Patterns are appended to *kinds / *pats (malloc'd). */
int leak_suppressions_parse(const char *text, const char *name, char ***kinds, char ***pats,
                            size_t *n, char *err, size_t errlen);
/* Does the pattern (kind "leak" = function or file) match the group's stack? */
int leak_suppression_matches(const char *kind, const char *pat, const struct leak_group_view *g);

/* The prepared report's groups as findings (common/findings.h): those `vigil leaks` shows, or
 * all of them. 0, or -1 when out of memory. */
struct vigil_findings;
int leak_findings_from_report(const struct leak_report_view *r, int all, struct vigil_findings *out);

#endif
