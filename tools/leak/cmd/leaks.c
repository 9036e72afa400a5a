/* vigil leaks [--json|--sarif] [--suppress FILE] [--all] [RUNDIR|OUTDIR]: the leak tool's report, worst
 * first, with allocation stacks and last accesses mapped to source. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "findings.h"
#include "json.h"
#include "leakreport.h"
#include "report.h"


static const char *kind_text(const struct leak_group_view *g)
{
    if (strcmp(g->kind, "both") == 0)
        return "unreachable and stale";
    if (strcmp(g->kind, "unreachable") == 0)
        return g->indirect_objects == g->unreachable_objects ? "unreachable (indirect leak: held only by other leaked objects)"
                                                             : "unreachable (definite leak)";
    return "stale but reachable";
}

static void human_bytes(uint64_t b, char *buf, size_t len)
{
    if (b >= (10ull << 20))
        snprintf(buf, len, "%.1f MiB", b / 1048576.0);
    else if (b >= (10ull << 10))
        snprintf(buf, len, "%.1f KiB", b / 1024.0);
    else
        snprintf(buf, len, "%llu bytes", (unsigned long long)b);
}

/* A frame without source: its module and the offset there (what addr2line or a debug-info
 * package needs), not the run's address. */
static void print_frame(const struct leak_report_view *r, const struct leak_frame *f)
{
    printf("%s  ", f->function[0] ? f->function : "?");
    if (f->file[0] && f->line)
        printf("%s:%d", f->file, f->line);
    else if (f->file[0])
        printf("%s (no line)", f->file);
    else if (f->module >= 0 && (size_t)f->module < r->nmodules && r->modules[f->module].path) {
        const char *path = r->modules[f->module].path, *slash = strrchr(path, '/');
        printf("(%s+0x%llx, no line information)", slash ? slash + 1 : path, (unsigned long long)f->offset);
    } else
        printf("(pc 0x%llx, no line information)", (unsigned long long)f->pc);
    if (f->inlined)
        printf("  (inlined)");
}

static void print_access(const char *label, const struct leak_access *a, uint64_t now_ms, int running)
{
    printf("    last access (%s): ", label);
    if (!a->present) {
        printf("none sampled\n");
        return;
    }
    printf("%s  %s", a->function, a->file[0] ? a->file : "?");
    if (a->line)
        printf(":%u", a->line);
    else if (a->nearest_line)
        printf(":%u (nearest known line)", a->nearest_line);
    else
        printf(" (no line)");
    printf(" (%s)", a->kind);
    if (strcmp(label, "most recent") == 0)
        printf(", %.2f s before the %s", (now_ms - a->t_ms) / 1000.0, running ? "snapshot" : "end");
    else
        printf(", last access of %llu object%s", (unsigned long long)a->objects, a->objects == 1 ? "" : "s");
    if (a->rate >= 0)
        printf(", function sampled at %.3g%%", a->rate * 100);
    putchar('\n');
}

/* "in use at exit" by allocation site, largest first: all sites with --all, else the first 5
 * (or 10 when the run was too short for staleness). */
static void print_in_use(const struct leak_report_view *r, int all)
{
    if (!r->in_use_sites)
        return;
    char b[32];
    human_bytes(r->in_use_bytes, b, sizeof b);
    printf("in use at %s: %s in %llu object%s from %llu allocation site%s\n", r->running ? "the snapshot" : "exit", b,
           (unsigned long long)r->in_use_objects, r->in_use_objects == 1 ? "" : "s",
           (unsigned long long)r->in_use_sites, r->in_use_sites == 1 ? "" : "s");
    size_t limit = all ? r->nin_use : r->short_run ? 10 : 5;
    for (size_t i = 0; i < r->nin_use && i < limit; i++) {
        const struct leak_group_view *g = &r->in_use[i];
        human_bytes(g->live_bytes, b, sizeof b);
        printf("    %10s in %6llu object%s  ", b, (unsigned long long)g->live_objects, g->live_objects == 1 ? " " : "s");
        for (size_t k = 0; k < g->nframes && k < 3; k++) {
            if (k)
                printf(" <- ");
            print_frame(r, &g->frames[k]);
        }
        printf("  (%llu allocation%s, %llu free%s)\n", (unsigned long long)g->site_allocs,
               g->site_allocs == 1 ? "" : "s", (unsigned long long)g->site_frees, g->site_frees == 1 ? "" : "s");
    }
}

static int shown(const struct leak_group_view *g, int all)
{
    return all || (!g->suppressed_by && !g->unsampled);
}

static void print_text(const struct leak_report_view *r, int all)
{
    size_t nshown = 0, nsupp = 0, nunsampled = 0;
    uint64_t objects = 0, bytes = 0;
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct leak_group_view *g = &r->groups[i];
        nsupp += g->suppressed_by != NULL;
        nunsampled += !g->suppressed_by && g->unsampled;
        if (shown(g, all)) {
            nshown++;
            objects += g->objects;
            bytes += g->bytes;
        }
    }
    char b1[32], b2[32];
    human_bytes(bytes, b1, sizeof b1);
    printf("vigil leaks: %s", r->dir);
    if (r->have_run)
        printf(" (%s, pid %lld)", r->run.program, (long long)r->run.pid);
    printf("\n%zu leak group%s: %llu objects, %s", nshown, nshown == 1 ? "" : "s",
           (unsigned long long)objects, b1);
    if (nsupp)
        printf("; %zu suppressed", nsupp);
    if (nunsampled && !all)
        printf("; %zu stale group%s allocated in uninstrumented code hidden (--all shows them)",
               nunsampled, nunsampled == 1 ? "" : "s");
    putchar('\n');
    if (r->stale_allocs)
        printf("stale: idle for more than %llu allocations", (unsigned long long)r->stale_allocs);
    else
        printf("stale: idle for more than %.3g s%s and %.3g x the object's longest gap", r->stale_after_s,
               r->active_clock ? " of active time (leak.clock=active)" : "", r->gap_factor);
    printf("; reachability at %s: %s", r->running ? "the snapshot" : "exit",
           r->reach_done ? "done" : r->reach_enabled ? "failed" : "off");
    if (!r->reach_done && r->reach_enabled)
        printf(" (%s)", r->reach_error && r->reach_error[0] ? r->reach_error : "no reason recorded");
    putchar('\n');
    human_bytes(r->model_resident_bytes, b1, sizeof b1);
    human_bytes(r->peak_live_bytes, b2, sizeof b2);
    printf("heap: %llu allocations, %llu frees, %llu frees of unknown pointers, %llu realloc moves; "
           "peak live %s; heap model %s resident\n", (unsigned long long)r->allocs,
           (unsigned long long)r->frees, (unsigned long long)r->unknown_frees,
           (unsigned long long)r->realloc_moves, b2, b1);
    printf("sampling: %llu accesses sampled, %llu of them in heap objects; %zu snapshot%s\n",
           (unsigned long long)r->accesses_sampled, (unsigned long long)r->accesses_heap,
           r->nsnapshots, r->nsnapshots == 1 ? "" : "s");
    for (size_t m = 0; m < r->nmodules; m++)
        if (r->modules[m].problem)
            printf("note: %s\n", r->modules[m].problem);
    if (r->running)
        printf("note: a snapshot of the running program, %.2f s after it started (SIGUSR2 or "
               "vigil_flush_report); the report at exit replaces it\n", r->duration_ms / 1000.0);
    if (r->short_run)
        printf("note: the %s lasted %.2f s, less than leak.stale_after (%.3g s): no object could be "
               "stale yet; below, what is in use by site (a shorter leak.stale_after, e.g. "
               "VIGIL_OPTIONS=tools=leak:leak.stale_after=%.3g, gives a staleness verdict)\n",
               r->running ? "run so far" : "run", r->duration_ms / 1000.0, r->stale_after_s,
               r->duration_ms >= 2000 ? (double)(r->duration_ms / 2000) : 0.5);
    print_in_use(r, all);
    if (leak_report_stacks_shallow(r))
        printf("note: allocation stacks are one frame deep, not %llu: the runtime follows frame pointers, "
               "and this program's were left out (vigil-cc keeps them unless told -fomit-frame-pointer or "
               "VIGIL_CC_FRAME_POINTERS=0; code built by another compiler needs -fno-omit-frame-pointer)\n",
               (unsigned long long)r->depth);
    size_t rank = 0;
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct leak_group_view *g = &r->groups[i];
        if (!shown(g, all))
            continue;
        human_bytes(g->bytes, b1, sizeof b1);
        printf("\n#%zu %s: %s in %llu object%s", ++rank, kind_text(g), b1,
               (unsigned long long)g->objects, g->objects == 1 ? "" : "s");
        if (g->suppressed_by)
            printf(" [suppressed by %s]", g->suppressed_by);
        if (g->unsampled)
            printf(" [allocated in uninstrumented code: accesses there are not sampled]");
        printf("\n    unreachable %llu", (unsigned long long)g->unreachable_objects);
        if (g->unreachable_objects)
            printf(" (direct %llu, indirect %llu)", (unsigned long long)(g->unreachable_objects - g->indirect_objects),
                   (unsigned long long)g->indirect_objects);
        printf(", stale %llu, both %llu; score %.0f\n", (unsigned long long)g->stale_objects,
               (unsigned long long)g->both_objects, g->score);
        for (size_t k = 0; k < g->nframes; k++) {
            printf(k ? "                  " : "    allocated at  ");
            print_frame(r, &g->frames[k]);
            putchar('\n');
        }
        printf("    age %.2f-%.2f s, idle %.2f-%.2f s; this site: %llu allocations, %llu frees, %llu live\n",
               g->age_min_ms / 1000.0, g->age_max_ms / 1000.0, g->idle_min_ms / 1000.0,
               g->idle_max_ms / 1000.0, (unsigned long long)g->site_allocs,
               (unsigned long long)g->site_frees, (unsigned long long)g->live_objects);
        if (g->site_frees && g->site_frees >= g->objects)
            printf("    note: this site usually frees its objects (%llu frees): the leaked ones "
                   "took another path\n", (unsigned long long)g->site_frees);
        print_access("most recent", &g->recent, r->duration_ms, r->running);
        print_access("most common", &g->common, r->duration_ms, r->running);
        printf("    coverage: %llu sampled accesses to this site's objects; %llu of these objects "
               "never seen accessed\n", (unsigned long long)g->site_accesses_sampled,
               (unsigned long long)g->never_accessed);
    }
}

static void json_access(struct vigil_json *j, const char *key, const struct leak_access *a)
{
    vigil_json_key(j, key);
    if (!a->present) {
        vigil_json_null(j);
        return;
    }
    vigil_json_object_begin(j);
    vigil_json_key(j, "site"); vigil_json_uint(j, a->site);
    vigil_json_key(j, "kind"); vigil_json_string(j, a->kind);
    vigil_json_key(j, "function"); vigil_json_string(j, a->function);
    vigil_json_key(j, "file"); vigil_json_string(j, a->file);
    vigil_json_key(j, "line"); vigil_json_uint(j, a->line);
    vigil_json_key(j, "nearest_line"); vigil_json_uint(j, a->line ? a->line : a->nearest_line);
    vigil_json_key(j, "t_ms"); vigil_json_uint(j, a->t_ms);
    vigil_json_key(j, "objects"); vigil_json_uint(j, a->objects);
    vigil_json_key(j, "function_rate");
    if (a->rate >= 0) vigil_json_double(j, a->rate); else vigil_json_null(j);
    vigil_json_object_end(j);
}

static void print_json(const struct leak_report_view *r, int all)
{
    struct vigil_json j;
    vigil_json_init(&j, stdout, 1);
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "report"); vigil_json_string(&j, r->dir);
    vigil_json_key(&j, "program"); vigil_json_string(&j, r->have_run ? r->run.program : "");
    vigil_json_key(&j, "stale_after_s"); vigil_json_double(&j, r->stale_after_s);
    vigil_json_key(&j, "clock"); vigil_json_string(&j, r->active_clock ? "active" : "wall");
    vigil_json_key(&j, "reachability"); vigil_json_bool(&j, r->reach_done);
    vigil_json_key(&j, "running"); vigil_json_bool(&j, r->running);
    vigil_json_key(&j, "run_ms"); vigil_json_uint(&j, r->duration_ms);
    vigil_json_key(&j, "short_run"); vigil_json_bool(&j, r->short_run);
    vigil_json_key(&j, "in_use");
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "objects"); vigil_json_uint(&j, r->in_use_objects);
    vigil_json_key(&j, "bytes"); vigil_json_uint(&j, r->in_use_bytes);
    vigil_json_key(&j, "sites"); vigil_json_uint(&j, r->in_use_sites);
    vigil_json_key(&j, "largest");
    vigil_json_array_begin(&j);
    for (size_t i = 0; i < r->nin_use; i++) {
        const struct leak_group_view *g = &r->in_use[i];
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "objects"); vigil_json_uint(&j, g->live_objects);
        vigil_json_key(&j, "bytes"); vigil_json_uint(&j, g->live_bytes);
        vigil_json_key(&j, "site_allocs"); vigil_json_uint(&j, g->site_allocs);
        vigil_json_key(&j, "site_frees"); vigil_json_uint(&j, g->site_frees);
        vigil_json_key(&j, "function"); vigil_json_string(&j, g->nframes ? g->frames[0].function : "");
        vigil_json_key(&j, "file"); vigil_json_string(&j, g->nframes ? g->frames[0].file : "");
        vigil_json_key(&j, "line"); vigil_json_uint(&j, g->nframes ? (uint64_t)g->frames[0].line : 0);
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);
    vigil_json_object_end(&j);
    vigil_json_key(&j, "allocs"); vigil_json_uint(&j, r->allocs);
    vigil_json_key(&j, "frees"); vigil_json_uint(&j, r->frees);
    vigil_json_key(&j, "unknown_frees"); vigil_json_uint(&j, r->unknown_frees);
    vigil_json_key(&j, "realloc_moves"); vigil_json_uint(&j, r->realloc_moves);
    vigil_json_key(&j, "accesses_sampled"); vigil_json_uint(&j, r->accesses_sampled);
    vigil_json_key(&j, "accesses_heap"); vigil_json_uint(&j, r->accesses_heap);
    vigil_json_key(&j, "model_resident_bytes"); vigil_json_uint(&j, r->model_resident_bytes);
    vigil_json_key(&j, "groups");
    vigil_json_array_begin(&j);
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct leak_group_view *g = &r->groups[i];
        if (!shown(g, all))
            continue;
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "kind"); vigil_json_string(&j, g->kind);
        vigil_json_key(&j, "score"); vigil_json_double(&j, g->score);
        vigil_json_key(&j, "objects"); vigil_json_uint(&j, g->objects);
        vigil_json_key(&j, "bytes"); vigil_json_uint(&j, g->bytes);
        vigil_json_key(&j, "unreachable_objects"); vigil_json_uint(&j, g->unreachable_objects);
        vigil_json_key(&j, "indirect_objects"); vigil_json_uint(&j, g->indirect_objects);
        vigil_json_key(&j, "stale_objects"); vigil_json_uint(&j, g->stale_objects);
        vigil_json_key(&j, "age_max_ms"); vigil_json_uint(&j, g->age_max_ms);
        vigil_json_key(&j, "idle_min_ms"); vigil_json_uint(&j, g->idle_min_ms);
        vigil_json_key(&j, "site_allocs"); vigil_json_uint(&j, g->site_allocs);
        vigil_json_key(&j, "site_frees"); vigil_json_uint(&j, g->site_frees);
        vigil_json_key(&j, "site_accesses_sampled"); vigil_json_uint(&j, g->site_accesses_sampled);
        vigil_json_key(&j, "never_accessed"); vigil_json_uint(&j, g->never_accessed);
        vigil_json_key(&j, "suppressed_by"); vigil_json_string(&j, g->suppressed_by);
        vigil_json_key(&j, "unsampled"); vigil_json_bool(&j, g->unsampled);
        vigil_json_key(&j, "stack");
        vigil_json_array_begin(&j);
        for (size_t k = 0; k < g->nframes; k++) {
            const struct leak_frame *f = &g->frames[k];
            vigil_json_object_begin(&j);
            vigil_json_key(&j, "function"); vigil_json_string(&j, f->function);
            vigil_json_key(&j, "file"); vigil_json_string(&j, f->file);
            vigil_json_key(&j, "line"); vigil_json_uint(&j, (uint64_t)f->line);
            vigil_json_key(&j, "pc"); vigil_json_uint(&j, f->pc);
            vigil_json_key(&j, "inlined"); vigil_json_bool(&j, f->inlined);
            vigil_json_object_end(&j);
        }
        vigil_json_array_end(&j);
        json_access(&j, "last_access_recent", &g->recent);
        json_access(&j, "last_access_common", &g->common);
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);
    vigil_json_object_end(&j);
    vigil_json_finish(&j);
}

/* SARIF: the common findings writer, over the same groups as the text (one rule per kind). */
static int print_sarif(const struct leak_report_view *r, int all)
{
    struct vigil_findings l;
    vigil_findings_init(&l);
    int rc = leak_findings_from_report(r, all, &l);
    if (rc == 0)
        vigil_findings_write_sarif(stdout, &l, VIGIL_VERSION);
    vigil_findings_free(&l);
    return rc;
}

int cmd_leaks(int argc, char **argv)
{
    const char *format = "text", *suppress = NULL, *dir = NULL;
    int all = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "--sarif") == 0)
            format = argv[i] + 2;
        else if (strcmp(argv[i], "--all") == 0)
            all = 1;
        else if (strcmp(argv[i], "--suppress") == 0 && i + 1 < argc)
            suppress = argv[++i];
        else if (argv[i][0] == '-')
            return cmd_usage_error("leaks", "unknown option \"%s\"", argv[i]);
        else if (dir)
            return cmd_usage_error("leaks", "one run directory expected, got \"%s\" too", argv[i]);
        else
            dir = argv[i];
    }
    char rundir[4200];
    if (cmd_run_holding(dir, LEAK_REPORT_FILE, rundir, sizeof rundir) != 0)
        return cmd_error("leaks", "%s: no run with " LEAK_REPORT_FILE " in it (run a program with `vigil run --tool "
                         "leak` or VIGIL_OPTIONS=tools=leak)", rundir);
    struct leak_report_view r;
    char err[1024];
    if (leak_report_load(rundir, &r, err, sizeof err) != 0) {
        leak_report_free(&r);
        return cmd_error("leaks", "%s", err);
    }
    if (leak_report_prepare(&r, suppress, err, sizeof err) != 0) {
        leak_report_free(&r);
        return cmd_error("leaks", "%s", err);
    }
    if (strcmp(format, "json") == 0)
        print_json(&r, all);
    else if (strcmp(format, "sarif") == 0 && print_sarif(&r, all) != 0) {
        leak_report_free(&r);
        return cmd_error("leaks", "out of memory");
    }
    else
        print_text(&r, all);
    leak_report_free(&r);
    return 0;
}
