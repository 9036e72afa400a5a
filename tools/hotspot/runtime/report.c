/* hotspot.json, the hot-spot profiler's part of the run report (format: tools/hotspot/README.md,
 * "Report"). Frames are given as module (an index into "modules", -1: in no loaded object) and
 * link-time address, so that `vigil hot` can name them from the binaries' debug information;
 * frame 0 of a stack is the interrupted PC, the others are return addresses. Each thread's
 * timeline is written as runs: consecutive samples of one stack with no gap longer than three
 * periods between them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsint.h"
#include "json.h"
#include "loadmap.h"
#include "walk.h"

#define MAX_MODULES 256

static void num(struct vigil_json *j, const char *key, uint64_t v)
{
    vigil_json_key(j, key);
    vigil_json_uint(j, v);
}

static void str(struct vigil_json *j, const char *key, const char *v)
{
    vigil_json_key(j, key);
    vigil_json_string(j, v);
}

static void hex(struct vigil_json *j, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
    vigil_json_string(j, buf);
}

static void write_frame(struct vigil_json *j, const struct vigil_loadmap *ms, uintptr_t pc)
{
    int m = vigil_loadmap_find(ms, pc, NULL);
    vigil_json_array_begin(j);
    vigil_json_int(j, m);
    hex(j, m >= 0 ? pc - ms->o[m].bias : pc);
    vigil_json_array_end(j);
}

/* Runs: consecutive samples of one stack and one period with no gap over three periods; a run
 * of late samples says its period (a fifth element) and counts their weight. */
static void write_runs(struct vigil_json *j, const struct hs_rec *r)
{
    uint32_t n = __atomic_load_n(&r->timeline_n, __ATOMIC_ACQUIRE);
    uint64_t late_weight = hs.late_period_us / hs.period_us;
    vigil_json_key(j, "runs");
    vigil_json_array_begin(j);
    for (uint32_t i = 0; i < n;) {
        uint64_t first = r->timeline[i] >> HS_TIMELINE_SHIFT, last = first;
        uint32_t key = (uint32_t)(r->timeline[i] & (HS_TIMELINE_ID | HS_TIMELINE_LATE)), k = i + 1;
        uint32_t stack = key & HS_TIMELINE_ID;
        int late = (key & HS_TIMELINE_LATE) != 0;
        uint64_t gap = 3ull * (late ? hs.late_period_us : hs.period_us);
        while (k < n && (uint32_t)(r->timeline[k] & (HS_TIMELINE_ID | HS_TIMELINE_LATE)) == key &&
               (r->timeline[k] >> HS_TIMELINE_SHIFT) - last <= gap)
            last = r->timeline[k++] >> HS_TIMELINE_SHIFT;
        vigil_json_array_begin(j);
        vigil_json_uint(j, first);
        vigil_json_uint(j, last);
        if (stack == HS_TIMELINE_ID)
            vigil_json_int(j, -1);
        else
            vigil_json_uint(j, stack);
        vigil_json_uint(j, (k - i) * (late ? late_weight : 1));
        if (late)
            vigil_json_uint(j, hs.late_period_us);
        vigil_json_array_end(j);
        i = k;
    }
    vigil_json_array_end(j);
}

void hs_report_write(void)
{
    struct vigil_loadmap ms = {calloc(MAX_MODULES, sizeof(struct vigil_loaded_object)), 0, MAX_MODULES};
    if (!ms.o) {
        vigil_tool_message(&hs_tool, "out of memory: no hotspot.json");
        return;
    }
    vigil_loadmap_read(&ms);
    FILE *f = vigil_report_open(&hs_tool, "hotspot.json");
    if (!f) {
        free(ms.o);
        return;
    }
    struct vigil_json j;
    vigil_json_init(&j, f, 0);
    vigil_json_object_begin(&j);
    str(&j, "format", "vigil-hotspot");
    num(&j, "version", 1);
    str(&j, "method", hs.method == HS_PERF ? "perf" : hs.method == HS_TIMER ? "timer" : "none");
    str(&j, "note", hs.why);
    num(&j, "signal", (uint64_t)hs.signo);
    num(&j, "period_us", hs.period_us);
    num(&j, "depth", hs.depth);
    num(&j, "max_stacks", hs.max_stacks);
    num(&j, "delay_ms", hs.delay_ms);
    num(&j, "duration_us", (hs_mono_ns() - hs.start_ns) / 1000u);
    num(&j, "late_period_us", hs.late_period_us);
    num(&j, "late_after", hs.late_after);
    num(&j, "samples", __atomic_load_n(&hs.samples, __ATOMIC_RELAXED));
    num(&j, "signals", __atomic_load_n(&hs.signals, __ATOMIC_RELAXED));
    vigil_json_key(&j, "stepped_back");
    vigil_json_bool(&j, hs.stepped_back);
    vigil_json_key(&j, "dropped");
    vigil_json_object_begin(&j);
    num(&j, "table_full", __atomic_load_n(&hs.table.dropped_full, __ATOMIC_RELAXED));
    num(&j, "busy", __atomic_load_n(&hs.table.dropped_busy, __ATOMIC_RELAXED));
    num(&j, "untracked_thread", __atomic_load_n(&hs.samples_unrecorded, __ATOMIC_RELAXED));
    vigil_json_object_end(&j);
    vigil_json_key(&j, "threads");
    vigil_json_object_begin(&j);
    num(&j, "sampled", __atomic_load_n(&hs.threads, __ATOMIC_RELAXED));
    num(&j, "blocked", __atomic_load_n(&hs.threads_blocked, __ATOMIC_RELAXED));
    num(&j, "failed", __atomic_load_n(&hs.threads_failed, __ATOMIC_RELAXED));
    num(&j, "timer_fallback", __atomic_load_n(&hs.threads_fallback, __ATOMIC_RELAXED));
    num(&j, "rearm_failed", __atomic_load_n(&hs.rearm_failed, __ATOMIC_RELAXED));
    vigil_json_object_end(&j);

    vigil_json_key(&j, "modules");
    vigil_json_array_begin(&j);
    for (unsigned i = 0; i < ms.n; i++) {
        vigil_json_object_begin(&j);
        str(&j, "path", ms.o[i].path);
        vigil_json_key(&j, "bias");
        hex(&j, ms.o[i].bias);
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);

    /* Stacks in id order (the timelines name them by id); an id never published has none. */
    vigil_json_key(&j, "stacks");
    vigil_json_array_begin(&j);
    uint32_t nstacks = hs.table.slots ? hs_table_size(&hs.table) : 0;
    for (uint32_t id = 0; id < nstacks; id++) {
        const uintptr_t *pcs = NULL;
        uint64_t count = 0;
        uint32_t n = hs_table_get(&hs.table, id, &pcs, &count);
        vigil_json_object_begin(&j);
        num(&j, "count", n ? count : 0);
        vigil_json_key(&j, "frames");
        vigil_json_array_begin(&j);
        for (uint32_t k = 0; k < n; k++)
            write_frame(&j, &ms, pcs[k]);
        vigil_json_array_end(&j);
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);

    vigil_json_key(&j, "thread_list");
    vigil_json_array_begin(&j);
    uint32_t nrecs = __atomic_load_n(&hs.nrecs, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < nrecs && i < HS_MAX_RECS; i++) {
        const struct hs_rec *r = &hs.recs[i];
        vigil_json_object_begin(&j);
        num(&j, "index", r->index);
        num(&j, "tid", (uint64_t)r->tid);
        num(&j, "samples", __atomic_load_n(&r->samples, __ATOMIC_RELAXED));
        num(&j, "timeline_dropped", __atomic_load_n(&r->timeline_dropped, __ATOMIC_RELAXED));
        write_runs(&j, r);
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);
    hs_walk_report(&j, &ms);
    vigil_json_object_end(&j);
    vigil_json_finish(&j);
    fclose(f);
    free(ms.o);
}
