/* The leak tool's findings (cmd/cmdtool.h): its report, leak.json, loaded and prepared through
 * leakreport.h (symbolized, merged, sorted) and turned into one finding per leak group:
 *   kind       "unreachable", "stale" or "both" (unreachable at exit and stale)
 *   severity   error when unreachable (or both), warning when only stale
 *   message    "12 objects, 480 bytes, allocated in make_record and never freed: ..."
 *   locations  [0] the allocation site (role "allocation"); related: the most recent sampled
 *              access (role "last-access") and the most common last access ("common-access")
 *   stacks     the allocation stack
 *   fields     objects and bytes (totals), the per-class counts, ages and idle times (ms), the
 *              site's allocations, frees and sampled accesses
 * Groups that `vigil leaks` hides by default (stale groups allocated in uninstrumented code,
 * whose accesses are never sampled) are left out, as are groups its own suppression file
 * matched (only `vigil html --suppress` passes one). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "findings.h"
#include "leakreport.h"

int leak_findings(const char *rundir, struct vigil_findings *out);

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

/* The first frame with a source file: where a reader looks at the allocation. */
static const struct leak_frame *site_frame(const struct leak_group_view *g)
{
    for (size_t k = 0; k < g->nframes; k++)
        if (g->frames[k].file[0])
            return &g->frames[k];
    return g->nframes ? &g->frames[0] : NULL;
}

static void describe(const struct leak_report_view *r, const struct leak_group_view *g, char *buf, size_t len)
{
    char bytes[32], where[300], idle[64], what[300];
    vigil_format_bytes((double)g->bytes, bytes, sizeof bytes);
    const struct leak_frame *f = site_frame(g);
    if (f && f->function[0])
        snprintf(where, sizeof where, "allocated in %s", f->function);
    else if (f)
        snprintf(where, sizeof where, "allocated at pc 0x%llx", (unsigned long long)f->pc);
    else
        snprintf(where, sizeof where, "allocated at an unknown site");
    if (r->stale_allocs)
        snprintf(idle, sizeof idle, "for more than %llu allocations", (unsigned long long)r->stale_allocs);
    else
        snprintf(idle, sizeof idle, "for %.1f s or more", g->idle_min_ms / 1000.0);
    if (strcmp(g->kind, "stale") == 0) {
        snprintf(what, sizeof what, " and not accessed %s: stale (still reachable, not freed)", idle);
    } else {
        char indirect[96] = "";
        const char *leak = "definite leak";
        if (g->indirect_objects && g->indirect_objects >= g->unreachable_objects)
            leak = "indirect leak: held only by other leaked objects";
        else if (g->indirect_objects)
            snprintf(indirect, sizeof indirect, "; %llu of them held only by other leaked objects",
                     (unsigned long long)g->indirect_objects);
        snprintf(what, sizeof what, " and never freed: unreachable at exit (%s)%s%s%s%s", leak, indirect,
                 strcmp(g->kind, "both") == 0 ? ", and not accessed " : "",
                 strcmp(g->kind, "both") == 0 ? idle : "", strcmp(g->kind, "both") == 0 ? " (stale)" : "");
    }
    snprintf(buf, len, "%llu object%s, %s, %s%s", (unsigned long long)g->objects, plural(g->objects), bytes,
             where, what);
}

static int add_access(struct vigil_finding *f, const char *role, const char *label, const struct leak_access *a,
                      const struct leak_report_view *r)
{
    if (!a->present)
        return 0;
    char msg[200];
    size_t n = (size_t)snprintf(msg, sizeof msg, "%s (%s", label, a->kind[0] ? a->kind : "access");
    if (strcmp(role, "last-access") == 0 && r->duration_ms >= a->t_ms)
        n += (size_t)snprintf(msg + n, sizeof msg - n, ", %.2f s before the %s", (r->duration_ms - a->t_ms) / 1000.0,
                              r->running ? "snapshot" : "end");
    else if (strcmp(role, "common-access") == 0)
        n += (size_t)snprintf(msg + n, sizeof msg - n, ", the last access of %llu object%s",
                              (unsigned long long)a->objects, plural(a->objects));
    if (n < sizeof msg && a->rate >= 0)
        n += (size_t)snprintf(msg + n, sizeof msg - n, "; function sampled at %.3g%%", a->rate * 100);
    if (n < sizeof msg && !a->line)
        n += (size_t)snprintf(msg + n, sizeof msg - n, a->nearest_line ? "; no line of its own: the nearest known line"
                                                                       : "; no line");
    if (n < sizeof msg)
        snprintf(msg + n, sizeof msg - n, ")");
    return vigil_finding_add_location(f, role, msg, a->function, a->file, a->line ? a->line : a->nearest_line,
                                      a->line ? a->column : 0) ? 0 : -1;
}

static int add_group(const struct leak_report_view *r, const struct leak_group_view *g, struct vigil_findings *out)
{
    char message[800];
    describe(r, g, message, sizeof message);
    struct vigil_finding *f = vigil_findings_append(out, "leak", g->kind,
                                                    strcmp(g->kind, "stale") == 0 ? VIGIL_WARNING : VIGIL_ERROR,
                                                    message, g->score);
    if (!f)
        return -1;
    const struct leak_frame *site = site_frame(g);
    if (site && !vigil_finding_add_location(f, "allocation", "allocated here", site->function, site->file,
                                            (uint32_t)site->line, (uint32_t)site->column))
        return -1;
    if (add_access(f, "last-access", "most recent sampled access", &g->recent, r) != 0)
        return -1;
    if (g->common.present && (!g->recent.present || g->common.site != g->recent.site) &&
        add_access(f, "common-access", "most common last access", &g->common, r) != 0)
        return -1;
    if (g->nframes) {
        struct vigil_stack *s = vigil_finding_add_stack(f, "allocation");
        if (!s)
            return -1;
        for (size_t k = 0; k < g->nframes; k++) {
            const struct leak_frame *fr = &g->frames[k];
            if (!vigil_stack_add_frame(s, fr->pc, fr->function, fr->file, (uint32_t)fr->line,
                                       (uint32_t)fr->column, fr->inlined))
                return -1;
        }
    }
    struct { const char *key; uint64_t value; const char *unit; int total; } nums[] = {
        {"objects", g->objects, "", 1},
        {"bytes", g->bytes, "bytes", 1},
        {"unreachable_objects", g->unreachable_objects, "", 0},
        {"indirect_objects", g->indirect_objects, "", 0},
        {"stale_objects", g->stale_objects, "", 0},
        {"both_objects", g->both_objects, "", 0},
        {"live_objects", g->live_objects, "", 0},
        {"age_min_ms", g->age_min_ms, "ms", 0},
        {"age_max_ms", g->age_max_ms, "ms", 0},
        {"idle_min_ms", g->idle_min_ms, "ms", 0},
        {"idle_max_ms", g->idle_max_ms, "ms", 0},
        {"idle_avg_ms", g->idle_avg_ms, "ms", 0},
        {"never_accessed", g->never_accessed, "", 0},
        {"site_allocs", g->site_allocs, "", 0},
        {"site_frees", g->site_frees, "", 0},
        {"site_accesses_sampled", g->site_accesses_sampled, "", 0},
        {"snapshots_flagged", g->snapshots_flagged, "", 0},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        if (!vigil_finding_add_number(f, nums[i].key, (double)nums[i].value, nums[i].unit, nums[i].total))
            return -1;
    if (g->unsampled && !vigil_finding_add_number(f, "unsampled", 1, "", 0))
        return -1;
    if (g->suppressed_by && !vigil_finding_add_string(f, "suppressed_by", g->suppressed_by))
        return -1;
    return 0;
}

int leak_findings_from_report(const struct leak_report_view *r, int all, struct vigil_findings *out)
{
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct leak_group_view *g = &r->groups[i];
        if (!all && (g->suppressed_by || g->unsampled))
            continue;
        if (add_group(r, g, out) != 0)
            return -1;
    }
    return 0;
}

/* The loader says "PATH: byte N: reason"; say PATH:LINE:COLUMN instead. */
static void report_damage(const char *path, const char *err)
{
    const char *at = strstr(err, ": byte ");
    long byte;
    if (at && sscanf(at, ": byte %ld:", &byte) == 1 && strchr(at + 7, ':')) {
        const char *reason = strchr(at + 7, ':') + 1;
        int line = 1, col = 1, c;
        FILE *f = fopen(path, "rb");
        for (long i = 0; f && i < byte && (c = getc(f)) != EOF; i++) {
            if (c == '\n')
                line++, col = 1;
            else
                col++;
        }
        if (f)
            fclose(f);
        fprintf(stderr, "vigil: leak: %s:%d:%d:%s\n", path, line, col, reason);
    } else if (strstr(err, "not a leak report")) {
        fprintf(stderr, "vigil: leak: %s:1: expected \"format\": \"vigil-leak\" and \"version\": 1\n", path);
    } else {
        fprintf(stderr, "vigil: leak: %s\n", err);
    }
}

int leak_findings(const char *rundir, struct vigil_findings *out)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/leak.json", rundir);
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return 0;   /* the run did not use the leak tool */
    struct leak_report_view r;
    char err[1024];
    if (leak_report_load(rundir, &r, err, sizeof err) != 0) {
        report_damage(path, err);
        leak_report_free(&r);
        return -1;
    }
    if (leak_report_prepare(&r, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "vigil: leak: %s\n", err);
        leak_report_free(&r);
        return -1;
    }
    int rc = leak_findings_from_report(&r, 0, out);
    leak_report_free(&r);
    if (rc != 0)
        fprintf(stderr, "vigil: leak: %s: out of memory\n", path);
    return rc;
}
