/* leak.json: the leak tool's part of the run report (written at exit). Format in
 * docs/formats.md ("Leak report"). Allocation stacks are raw return addresses plus, per address,
 * the loaded module and its load bias, so that `vigil leaks` can symbolize them offline with the
 * binary's debug info; last-access sites are vigil site ids, described here from the site
 * tables already in memory. */
#include "leak.h"

#include "json.h"
#include "loadmap.h"

#include <string.h>
#include <unistd.h>

#define MAX_MODULES 512

/* The object whose executable segments hold pc, or -1. */
static int module_of(const struct vigil_loadmap *ms, uintptr_t pc)
{
    int exec = 0, m = vigil_loadmap_find(ms, pc, &exec);
    return exec ? m : -1;
}

static void hex(struct vigil_json *j, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
    vigil_json_string(j, buf);
}

/* An access without a line of its own (the optimizer merged loads from two lines, and the merged
 * instruction has line 0): the line of the nearest site of the same function that has one. Sites
 * are numbered in the order of the function's instructions, so the nearest in number is nearest
 * in the code; before wins a tie. 0 when no site within NEAREST_MAX has a line. */
#define NEAREST_MAX 64
static uint32_t nearest_line(uint32_t site, const struct vigil_site_info *of)
{
    for (uint32_t d = 1; d <= NEAREST_MAX; d++)
        for (int dir = -1; dir <= 1; dir += 2) {
            if (dir < 0 && site < d)
                continue;
            struct vigil_site_info n;
            if (vigil_site_lookup(site + (uint32_t)dir * d, &n) == 0 && n.line && strcmp(n.function, of->function) == 0 &&
                strcmp(n.file, of->file) == 0)
                return n.line;
        }
    return 0;
}

static void access_site(struct vigil_json *j, uint32_t site, uint32_t t_ms, uint64_t count, int with_count)
{
    if (site == HEAP_NO_SITE) {
        vigil_json_null(j);
        return;
    }
    struct vigil_site_info info;
    int known = vigil_site_lookup(site, &info) == 0;
    uint32_t near_line = known && !info.line ? nearest_line(site, &info) : 0;
    vigil_json_object_begin(j);
    vigil_json_key(j, "site");
    vigil_json_uint(j, site);
    vigil_json_key(j, "kind");
    vigil_json_string(j, known ? info.kind : "?");
    vigil_json_key(j, "function");
    vigil_json_string(j, known ? info.function : "?");
    vigil_json_key(j, "file");
    vigil_json_string(j, known ? info.file : "");
    vigil_json_key(j, "line");
    vigil_json_uint(j, known ? info.line : 0);
    vigil_json_key(j, "column");
    vigil_json_uint(j, known ? info.column : 0);
    if (near_line) {   /* the access has no line of its own (code the optimizer merged) */
        vigil_json_key(j, "nearest_line");
        vigil_json_uint(j, near_line);
    }
    if (with_count) {
        vigil_json_key(j, "objects");
        vigil_json_uint(j, count);
    } else {
        vigil_json_key(j, "t_ms");
        vigil_json_uint(j, t_ms);
    }
    vigil_json_object_end(j);
}

static void u(struct vigil_json *j, const char *key, uint64_t v)
{
    vigil_json_key(j, key);
    vigil_json_uint(j, v);
}

static void totals(struct vigil_json *j, const struct leak_snapshot *s)
{
    vigil_json_key(j, "reason");
    vigil_json_string(j, leak_reason_name(s->reason));
    u(j, "t_ms", s->t_ms);
    u(j, "alloc_clock", s->alloc_clock);
    u(j, "live_objects", s->live_objects);
    u(j, "live_bytes", s->live_bytes);
    u(j, "stale_objects", s->stale_objects);
    u(j, "stale_bytes", s->stale_bytes);
    if (s->with_reach) {
        u(j, "unreachable_objects", s->unreachable_objects);
        u(j, "unreachable_bytes", s->unreachable_bytes);
        u(j, "indirect_objects", s->indirect_objects);
        u(j, "indirect_bytes", s->indirect_bytes);
    }
    u(j, "groups", s->ngroups);
}

static const char *group_kind(const struct leak_group *g)
{
    if (g->both_objects || (g->unreachable_objects && g->stale_objects))
        return "both";
    return g->unreachable_objects ? "unreachable" : "stale";
}

/* "stack": the allocation site's return addresses, each with its module and link-time offset. */
static void stack(struct vigil_json *j, const struct leak_site *site, const struct vigil_loadmap *ms)
{
    vigil_json_key(j, "stack");
    vigil_json_array_begin(j);
    for (uint32_t i = 0; site && i < site->depth; i++) {
        int m = module_of(ms, site->pc[i]);
        vigil_json_object_begin(j);
        vigil_json_key(j, "pc");
        hex(j, site->pc[i]);
        vigil_json_key(j, "module");
        vigil_json_int(j, m);
        vigil_json_key(j, "offset");   /* link-time address: pc - load bias */
        hex(j, m >= 0 ? site->pc[i] - ms->o[m].bias : site->pc[i]);
        vigil_json_object_end(j);
    }
    vigil_json_array_end(j);
}

static void group(struct vigil_json *j, const struct leak_group *g, uint32_t now_ms, const struct vigil_loadmap *ms)
{
    const struct leak_site *site = leak_site_get(g->site);
    vigil_json_object_begin(j);
    u(j, "site", g->site);
    vigil_json_key(j, "kind");
    vigil_json_string(j, group_kind(g));
    vigil_json_key(j, "score");
    vigil_json_double(j, g->score);
    stack(j, site, ms);
    u(j, "objects", g->objects);
    u(j, "bytes", g->bytes);
    u(j, "stale_objects", g->stale_objects);
    u(j, "stale_bytes", g->stale_bytes);
    u(j, "unreachable_objects", g->unreachable_objects);
    u(j, "unreachable_bytes", g->unreachable_bytes);
    u(j, "indirect_objects", g->indirect_objects);
    u(j, "indirect_bytes", g->indirect_bytes);
    u(j, "both_objects", g->both_objects);
    u(j, "both_bytes", g->both_bytes);
    u(j, "live_objects", g->live_objects);
    u(j, "live_bytes", g->live_bytes);
    u(j, "age_max_ms", now_ms - g->oldest_alloc_ms);
    u(j, "age_min_ms", now_ms - g->newest_alloc_ms);
    u(j, "idle_min_ms", g->idle_min_ms);
    u(j, "idle_max_ms", g->idle_max_ms);
    u(j, "idle_avg_ms", g->objects ? g->idle_sum_ms / g->objects : 0);
    u(j, "never_accessed", g->never_accessed);
    if (site) {
        u(j, "site_allocs", atomic_load(&site->allocs));
        u(j, "site_frees", leak_site_frees(site, g->live_objects));
        u(j, "site_bytes_allocated", atomic_load(&site->bytes_allocated));
        u(j, "site_accesses_sampled", atomic_load(&site->accesses));
        u(j, "snapshots_flagged", site->snapshots_flagged);
        u(j, "first_flagged_ms", site->first_flagged_ms);
    }
    vigil_json_key(j, "last_access_recent");
    access_site(j, g->recent_access_site, g->recent_access_ms, 0, 0);
    vigil_json_key(j, "last_access_common");
    access_site(j, g->common_access_site, 0, g->common_access_count, 1);
    vigil_json_object_end(j);
}

void leak_report_write(const struct leak_snapshot *final, const struct leak_reach_stats *reach, int running)
{
    FILE *f = vigil_report_open(&leak_tool, "leak.json");
    if (!f) {
        vigil_tool_message(&leak_tool, "cannot open leak.json in the run report directory");
        return;
    }
    static struct vigil_loaded_object module_buf[MAX_MODULES];   /* only fini writes it */
    struct vigil_loadmap ms = {module_buf, 0, MAX_MODULES};
    vigil_loadmap_read(&ms);
    struct heap_stats hs;
    heap_get_stats(&hs);

    struct vigil_json j;
    vigil_json_init(&j, f, 1);
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "format");
    vigil_json_string(&j, "vigil-leak");
    u(&j, "version", 1);
    vigil_json_key(&j, "running");   /* written while the program ran (SIGUSR2, vigil_flush_report) */
    vigil_json_bool(&j, running);

    vigil_json_key(&j, "options");
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "stale_after_s");
    vigil_json_double(&j, leak_cfg.stale_after_s);
    u(&j, "stale_allocs", leak_cfg.stale_allocs);
    vigil_json_key(&j, "gap_factor");
    vigil_json_double(&j, leak_cfg.gap_factor);
    vigil_json_key(&j, "snapshot_every_s");
    vigil_json_double(&j, leak_cfg.snapshot_every_ms / 1000.0);
    u(&j, "depth", leak_cfg.depth);
    vigil_json_key(&j, "reach");
    vigil_json_bool(&j, leak_cfg.reach);
    vigil_json_key(&j, "clock");
    vigil_json_string(&j, leak_cfg.active_clock ? "active" : "wall");
    vigil_json_object_end(&j);

    vigil_json_key(&j, "heap");
    vigil_json_object_begin(&j);
    u(&j, "allocs", hs.inserts);
    u(&j, "frees", hs.removes);
    u(&j, "unknown_frees", hs.unknown_removes);
    u(&j, "replaced", hs.replaced);
    u(&j, "realloc_moves", atomic_load(&leak_realloc_moves));
    u(&j, "live_objects", hs.live_objects);
    u(&j, "live_bytes", hs.live_bytes);
    u(&j, "peak_live_bytes", hs.peak_live_bytes);
    u(&j, "sites", leak_site_count());
    u(&j, "model_mapped_bytes", hs.mapped_bytes);
    u(&j, "model_resident_bytes", hs.resident_bytes);
    u(&j, "record_bytes", hs.record_bytes);
    vigil_json_object_end(&j);

    vigil_json_key(&j, "sampling");
    vigil_json_object_begin(&j);
    u(&j, "accesses_sampled", atomic_load(&leak_accesses_sampled));
    u(&j, "accesses_heap", atomic_load(&leak_accesses_heap));
    vigil_json_object_end(&j);

    vigil_json_key(&j, "reachability");
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "done");
    vigil_json_bool(&j, reach->done);
    if (reach->done) {
        vigil_json_key(&j, "method");
        vigil_json_string(&j, reach->method);
        u(&j, "root_bytes", reach->root_bytes);
        u(&j, "heap_bytes_scanned", reach->heap_bytes_scanned);
        u(&j, "untouched_bytes", reach->untouched_bytes);
        u(&j, "marked_objects", reach->marked_objects);
        u(&j, "indirect_objects", reach->indirect_objects);
        u(&j, "threads", reach->threads);
        u(&j, "duration_ms", reach->duration_ms);
    } else if (reach->error) {   /* or why it was not done */
        vigil_json_key(&j, "error");
        vigil_json_string(&j, reach->error);
    }
    vigil_json_object_end(&j);

    vigil_json_key(&j, "modules");
    vigil_json_array_begin(&j);
    for (unsigned i = 0; i < ms.n; i++) {
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "path");
        vigil_json_string(&j, ms.o[i].path);
        vigil_json_key(&j, "bias");
        hex(&j, ms.o[i].bias);
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);

    vigil_json_key(&j, "snapshots");
    vigil_json_array_begin(&j);
    for (uint32_t i = 0; i < leak_history_count(); i++) {
        vigil_json_object_begin(&j);
        totals(&j, leak_history_get(i));
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);

    vigil_json_key(&j, "final");
    vigil_json_object_begin(&j);
    totals(&j, final);
    vigil_json_object_end(&j);

    /* Short runs: what is in use by site, and whether the run lasted long enough for any object
     * to become stale (stale_after, in time). */
    u(&j, "run_ms", final->t_ms);
    vigil_json_key(&j, "short_run");
    vigil_json_bool(&j, !leak_cfg.stale_allocs && final->t_ms < leak_cfg.stale_after_ms);
    vigil_json_key(&j, "in_use");
    vigil_json_object_begin(&j);
    u(&j, "objects", final->live_objects);
    u(&j, "bytes", final->live_bytes);
    u(&j, "sites", final->in_use_sites);
    vigil_json_key(&j, "largest");
    vigil_json_array_begin(&j);
    for (uint32_t i = 0; i < final->nin_use; i++) {
        const struct leak_in_use *e = &final->in_use[i];
        const struct leak_site *site = leak_site_get(e->site);
        vigil_json_object_begin(&j);
        u(&j, "site", e->site);
        stack(&j, site, &ms);
        u(&j, "objects", e->objects);
        u(&j, "bytes", e->bytes);
        if (site) {
            u(&j, "site_allocs", atomic_load(&site->allocs));
            u(&j, "site_frees", leak_site_frees(site, e->objects));
        }
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);
    vigil_json_object_end(&j);

    vigil_json_key(&j, "groups");
    vigil_json_array_begin(&j);
    for (uint32_t i = 0; i < final->ngroups; i++)
        group(&j, &final->groups[i], final->t_ms, &ms);
    vigil_json_array_end(&j);
    vigil_json_object_end(&j);
    vigil_json_finish(&j);
    fclose(f);
}
