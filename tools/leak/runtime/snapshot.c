/* Leak snapshots (seed 000, Figure 4, block 410): visit every object of the heap model, apply
 * the staleness predicate (and, at exit, the reachability marks), and group what is reported by
 * allocation site, worst first.
 *
 * Staleness: an object is stale when it has not been touched (allocated or seen in a sampled
 * access) for longer than stale_after AND for longer than gap_factor times the longest interval
 * between two of its touches. The second condition spares objects used in rare phases: once a
 * phase has been seen to come back after T, the object is not stale before gap_factor x T.
 * With stale_allocs > 0 idleness is counted in allocations instead (a logical clock). */
#include "leak.h"

#include <string.h>
#include <time.h>

#define HISTORY_MAX 4096

static struct leak_snapshot *history;   /* HISTORY_MAX entries, mapped on first use */
static uint32_t history_len;            /* written under snapshot_lock */
static atomic_int snapshot_lock;        /* one snapshot at a time */

const char *leak_reason_name(enum leak_reason r)
{
    switch (r) {
    case LEAK_REASON_TIMER: return "timer";
    case LEAK_REASON_SIGNAL: return "signal";
    case LEAK_REASON_API: return "api";
    case LEAK_REASON_EXIT: return "exit";
    }
    return "?";
}

/* (allocation site, last-access site) -> count, for each group's most common last access. */
struct pair_slot { uint32_t site, access_site, count, used; };

struct walk {
    uint32_t now_ms, scan_start_ms;
    uint32_t now_seq;
    int with_reach;
    uint32_t nsites;
    struct leak_group *by_site;          /* nsites entries */
    struct pair_slot *pairs;
    size_t npairs_mask;
    struct leak_snapshot *snap;
};

static int is_stale(const struct heap_obj *o, uint32_t now_ms, uint32_t now_seq)
{
    if (leak_cfg.stale_allocs)
        return (uint32_t)(now_seq - atomic_load_explicit(&o->touch_seq, memory_order_relaxed)) > leak_cfg.stale_allocs;
    uint32_t idle = now_ms - atomic_load_explicit(&o->touch_ms, memory_order_relaxed);
    uint32_t gap = atomic_load_explicit(&o->max_gap, memory_order_relaxed);
    return idle > leak_cfg.stale_after_ms && (double)idle > leak_cfg.gap_factor * gap;
}

static void count_pair(struct walk *w, uint32_t site, uint32_t access_site)
{
    uint64_t h = ((uint64_t)site * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)access_site * 0xC2B2AE3D27D4EB4Full);
    for (size_t probe = 0; probe <= w->npairs_mask; probe++) {
        struct pair_slot *p = &w->pairs[(h + probe) & w->npairs_mask];
        if (!p->used) {
            *p = (struct pair_slot){ site, access_site, 1, 1 };
            return;
        }
        if (p->site == site && p->access_site == access_site) {
            p->count++;
            return;
        }
    }   /* table full: this access is left out of the "most common" vote */
}

static void visit(struct heap_obj *o, void *arg)
{
    struct walk *w = arg;
    uint32_t flags = atomic_load_explicit(&o->site_flags, memory_order_relaxed);
    uint32_t site = flags & HEAP_SITE_MASK;
    if (site >= w->nsites)
        site = LEAK_SITE_UNKNOWN;
    uint64_t size = atomic_load_explicit(&o->size, memory_order_relaxed);
    struct leak_group *g = &w->by_site[site];
    g->live_objects++;
    g->live_bytes += size;
    w->snap->live_objects++;
    w->snap->live_bytes += size;

    if (leak_site_get(site)->from_loader)
        return;   /* the loader's bookkeeping (sites.c): live, never a leak */
    int stale = is_stale(o, w->now_ms, w->now_seq);
    /* Objects allocated once the scan began are born marked (heap_mark_new_objects). */
    int unreachable = w->with_reach && !(flags & HEAP_FLAG_MARKED) &&
                      (int32_t)(o->alloc_ms - w->scan_start_ms) <= 0;
    if (!stale && !unreachable)
        return;
    uint32_t idle = w->now_ms - atomic_load_explicit(&o->touch_ms, memory_order_relaxed);
    uint32_t access_site = atomic_load_explicit(&o->access_site, memory_order_relaxed);
    if (g->objects == 0) {
        g->oldest_alloc_ms = g->newest_alloc_ms = o->alloc_ms;
        g->idle_min_ms = g->idle_max_ms = idle;
        g->recent_access_site = HEAP_NO_SITE;
        g->common_access_site = HEAP_NO_SITE;
    }
    g->objects++;
    g->bytes += size;
    if (o->alloc_ms < g->oldest_alloc_ms) g->oldest_alloc_ms = o->alloc_ms;
    if (o->alloc_ms > g->newest_alloc_ms) g->newest_alloc_ms = o->alloc_ms;
    if (idle < g->idle_min_ms) g->idle_min_ms = idle;
    if (idle > g->idle_max_ms) g->idle_max_ms = idle;
    g->idle_sum_ms += idle;
    if (stale) {
        g->stale_objects++;
        g->stale_bytes += size;
    }
    if (unreachable) {
        g->unreachable_objects++;
        g->unreachable_bytes += size;
        if (flags & HEAP_FLAG_INDIRECT) {
            g->indirect_objects++;
            g->indirect_bytes += size;
        }
    }
    if (stale && unreachable) {
        g->both_objects++;
        g->both_bytes += size;
    }
    if (access_site == HEAP_NO_SITE) {
        g->never_accessed++;
    } else {
        uint32_t t = atomic_load_explicit(&o->touch_ms, memory_order_relaxed);
        if (g->recent_access_site == HEAP_NO_SITE || t >= g->recent_access_ms) {
            g->recent_access_ms = t;
            g->recent_access_site = access_site;
        }
        count_pair(w, site, access_site);
    }
}

/* Worst first: definite (unreachable) bytes count fully; stale-only bytes count by how far past
 * the threshold they are (idle / (idle + stale_after): 0.5 just past it, towards 1 after). */
static void score(struct leak_group *g)
{
    double idle_avg = g->objects ? (double)g->idle_sum_ms / (double)g->objects : 0;
    double threshold = leak_cfg.stale_allocs ? idle_avg : (double)leak_cfg.stale_after_ms;
    double weight = idle_avg + threshold > 0 ? idle_avg / (idle_avg + threshold) : 0.5;
    g->score = (double)g->unreachable_bytes + (double)(g->stale_bytes - g->both_bytes) * weight;
}

/* x before y? (score, then bytes, then site id: deterministic) */
static int worse(const struct leak_group *x, const struct leak_group *y)
{
    if (x->score != y->score)
        return x->score > y->score;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes;
    return x->site < y->site;
}

/* Heap sort, worst first: qsort may call malloc, which this tool avoids (it can run outside a
 * hook, e.g. from vigil_leak_snapshot()). */
static void sift(struct leak_group *g, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && worse(&g[c], &g[c + 1]))   /* a min-heap on "worse": least bad on top */
            c++;
        if (!worse(&g[i], &g[c]))
            return;
        struct leak_group t = g[i];
        g[i] = g[c];
        g[c] = t;
        i = c;
    }
}

static void sort_worst_first(struct leak_group *g, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift(g, i, n);
    for (size_t end = n; end > 1; end--) {
        struct leak_group t = g[0];
        g[0] = g[end - 1];
        g[end - 1] = t;
        sift(g, 0, end - 1);
    }
}

static void history_append(const struct leak_snapshot *s)
{
    if (!history)
        history = heap_map(sizeof *history * HISTORY_MAX);
    if (!history)
        return;
    uint32_t i = history_len < HISTORY_MAX ? history_len++ : HISTORY_MAX - 1;   /* keep the last */
    history[i] = *s;
    history[i].groups = NULL;
    history[i].groups_mapped = 0;
}

uint32_t leak_history_count(void) { return history_len; }
const struct leak_snapshot *leak_history_get(uint32_t i) { return i < history_len ? &history[i] : NULL; }

int leak_snapshot_take(enum leak_reason reason, int with_reach, uint32_t scan_start_ms,
                       struct leak_snapshot *out)
{
    memset(out, 0, sizeof *out);
    /* Another thread is taking one right now: a periodic one gives way, the final one waits
     * for it (a signal's report came while a timer snapshot ran), within reason. */
    for (int waited_ms = 0; atomic_exchange_explicit(&snapshot_lock, 1, memory_order_acquire); waited_ms++) {
        if (reason != LEAK_REASON_EXIT || waited_ms >= 5000)
            return LEAK_SNAPSHOT_BUSY;
        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    }
    struct heap_stats hs;
    heap_get_stats(&hs);
    struct walk w = { .now_ms = leak_now_ms(), .scan_start_ms = scan_start_ms,
                      .now_seq = (uint32_t)atomic_load(&leak_alloc_clock),
                      .with_reach = with_reach, .nsites = leak_site_count(), .snap = out };
    size_t group_bytes = sizeof(struct leak_group) * w.nsites;
    w.by_site = heap_map(group_bytes);
    size_t npairs = 1024;
    while (npairs < 2 * hs.live_objects && npairs < (1u << 22))
        npairs <<= 1;
    w.pairs = heap_map(sizeof(struct pair_slot) * npairs);
    w.npairs_mask = npairs - 1;
    if (!w.by_site || !w.pairs) {
        heap_unmap(w.by_site, group_bytes);
        heap_unmap(w.pairs, sizeof(struct pair_slot) * npairs);
        atomic_store_explicit(&snapshot_lock, 0, memory_order_release);
        return LEAK_SNAPSHOT_NO_MEMORY;
    }
    for (uint32_t i = 0; i < w.nsites; i++)
        w.by_site[i].site = i;
    out->reason = reason;
    out->with_reach = with_reach;
    out->t_ms = w.now_ms;
    out->alloc_clock = atomic_load(&leak_alloc_clock);
    heap_foreach(visit, &w);

    for (size_t i = 0; i <= w.npairs_mask; i++) {
        struct pair_slot *p = &w.pairs[i];
        if (!p->used || p->site >= w.nsites)
            continue;
        struct leak_group *g = &w.by_site[p->site];
        if (p->count > g->common_access_count ||
            (p->count == g->common_access_count && p->access_site < g->common_access_site)) {
            g->common_access_count = p->count;
            g->common_access_site = p->access_site;
        }
    }
    heap_unmap(w.pairs, sizeof(struct pair_slot) * npairs);

    /* What is in use, by site (the loader's left out): the largest, before the compaction. */
    for (uint32_t i = 0; i < w.nsites; i++) {
        const struct leak_group *g = &w.by_site[i];
        const struct leak_site *site = leak_site_get(i);
        if (!g->live_objects || (site && site->from_loader))
            continue;
        out->in_use_sites++;
        uint32_t k = out->nin_use < LEAK_IN_USE_MAX ? out->nin_use++ : LEAK_IN_USE_MAX;
        while (k > 0 && out->in_use[k - 1].bytes < g->live_bytes) {
            if (k < LEAK_IN_USE_MAX)
                out->in_use[k] = out->in_use[k - 1];
            k--;
        }
        if (k < LEAK_IN_USE_MAX)
            out->in_use[k] = (struct leak_in_use){i, g->live_objects, g->live_bytes};
    }

    /* Compact the reported groups to the front, tally, sort. */
    uint32_t n = 0;
    for (uint32_t i = 0; i < w.nsites; i++) {
        struct leak_group *g = &w.by_site[i];
        struct leak_site *site = leak_site_get(i);
        if (!g->objects)
            continue;
        score(g);
        out->reported_objects += g->objects;
        out->reported_bytes += g->bytes;
        out->stale_objects += g->stale_objects;
        out->stale_bytes += g->stale_bytes;
        out->unreachable_objects += g->unreachable_objects;
        out->unreachable_bytes += g->unreachable_bytes;
        out->indirect_objects += g->indirect_objects;
        out->indirect_bytes += g->indirect_bytes;
        if (site) {
            if (!site->snapshots_flagged)
                site->first_flagged_ms = w.now_ms;
            site->snapshots_flagged++;
            site->last_flagged_ms = w.now_ms;
            if (g->bytes > site->max_flagged_bytes)
                site->max_flagged_bytes = g->bytes;
        }
        w.by_site[n++] = *g;
    }
    sort_worst_first(w.by_site, n);
    out->ngroups = n;
    out->groups = w.by_site;
    out->groups_mapped = group_bytes;
    history_append(out);
    atomic_store_explicit(&snapshot_lock, 0, memory_order_release);
    return 0;
}

void leak_snapshot_release(struct leak_snapshot *s)
{
    heap_unmap(s->groups, s->groups_mapped);
    s->groups = NULL;
    s->groups_mapped = 0;
}
