/* Modules and their per-site counters as tools see them (include/vigil/tool.h, version 4):
 * each registered module is announced to the enabled tools' on_module hooks, and the tool that
 * owns the counters sets their enable bytes, pins functions and reads the counts through the
 * services here. The emitted code does the counting (common/abi.h, ABI 2). */
#include "internal.h"

#include <string.h>

_Static_assert(VIGIL_COUNTER_SLOTS == VIGIL_PRED_SLOTS && VIGIL_COUNTER_BINARY == VIGIL_PRED_BINARY &&
               VIGIL_COUNTER_MONITORED == VIGIL_PRED_MONITORED,
               "tool.h's counter constants are common/abi.h's");

static struct vigil_module_node *node_of(const struct vigil_module_info *m)
{
    return (struct vigil_module_node *)m->handle;
}

void __vigil_module_info_init(struct vigil_module_node *n)
{
    n->info = (struct vigil_module_info){
        .path = n->path,
        .tu_hash = n->tu_hash,
        .nsites = n->nsites,
        .base = n->base_id,
        .counters = n->m->pred_enable != NULL,
        .counters_instr_only = (n->m->flags & VIGIL_MODULE_PRED_INSTR_ONLY) != 0,
        .handle = n,
    };
}

const char *vigil_plan_file(void)
{
    return __vigil_plan_path();
}

void vigil_counter_enable(const struct vigil_module_info *m, uint32_t index, uint8_t enable)
{
    struct vigil_module_node *n = node_of(m);
    if (n && !RELAXED_LOAD(&n->unloaded) && n->m->pred_enable && index < n->nsites)
        RELAXED_STORE(&n->m->pred_enable[index], enable);
}

/* Pin dispatch site d: its check always goes to the instrumented copy (common/abi.h). */
static void pin_dispatch(struct __vigil_module *m, uint32_t d)
{
    uint32_t site = m->dispatch_sites[d] & VIGIL_DISPATCH_SITE;
    RELAXED_STORE(&m->pred_enable[site], (uint8_t)(RELAXED_LOAD(&m->pred_enable[site]) | VIGIL_PRED_PINNED));
    /* The next check goes to __vigil_dispatch_enter: this thread's, when the counters are
     * thread-local; another thread's when its countdown next runs out. */
    uint32_t *counters = __vigil_counters_here(m), *started = counters + m->ndispatch;
    uint32_t pending = vigil_schedule_pending(RELAXED_LOAD(&started[d]), RELAXED_LOAD(&counters[d]));
    if (pending)
        __atomic_fetch_add(&m->state[d].check_execs, pending, __ATOMIC_RELAXED);
    RELAXED_STORE(&counters[d], 0);
    RELAXED_STORE(&started[d], 0);
}

/* The compiler adds a function's sites together, entry first: the function's dispatch sites
 * are the last entry of its name at or before the site and its back-edges after it
 * (dispatch_sites is in site order). Checks of inlined calls are entry sites named after the
 * callee, among their host's sites (one per callee in the module, shared by its hosts): they
 * are passed over, and need no pin (a pinned host runs its instrumented copy, where they only
 * count). A computed goto that labels.c could not keep in the clone lands in the checking
 * copy, at a back-edge check: pinned too. */
int vigil_counter_pin_function(const struct vigil_module_info *info, uint32_t index)
{
    struct vigil_module_node *n = node_of(info);
    if (!n || RELAXED_LOAD(&n->unloaded) || !n->m->pred_enable || index >= n->nsites)
        return -1;
    struct __vigil_module *m = n->m;
    if (!(m->flags & VIGIL_MODULE_PRED_INSTR_ONLY))
        return 0;   /* the checking copy counts too: nothing to pin */
    const struct vigil_sitefmt_table *t = __vigil_module_table(n);
    if (!t)
        return -1;
    uint32_t lo = 0, hi = m->ndispatch;   /* first d whose site is after index */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((m->dispatch_sites[mid] & VIGIL_DISPATCH_SITE) <= index)
            lo = mid + 1;
        else
            hi = mid;
    }
    struct vigil_site_view site, v;
    vigil_sitefmt_get(t, index, &site);
    uint32_t entry = lo;
    while (entry-- > 0) {
        if (m->dispatch_sites[entry] & VIGIL_DISPATCH_BACKEDGE)
            continue;
        vigil_sitefmt_get(t, m->dispatch_sites[entry] & VIGIL_DISPATCH_SITE, &v);
        if (strcmp(v.function, site.function) == 0)
            break;
    }
    if (entry == UINT32_MAX)
        return -1;
    pin_dispatch(m, entry);
    for (uint32_t d = entry + 1; d < m->ndispatch; d++) {
        if (!(m->dispatch_sites[d] & VIGIL_DISPATCH_BACKEDGE))
            continue;   /* an inlined call's check, or a later function's entry */
        vigil_sitefmt_get(t, m->dispatch_sites[d] & VIGIL_DISPATCH_SITE, &v);
        if (strcmp(v.function, site.function) != 0)
            break;      /* a later function's back-edge */
        pin_dispatch(m, d);
    }
    return 0;
}

void vigil_counter_pin_all(const struct vigil_module_info *info)
{
    struct vigil_module_node *n = node_of(info);
    if (!n || RELAXED_LOAD(&n->unloaded) || !n->m->pred_enable || !(n->m->flags & VIGIL_MODULE_PRED_INSTR_ONLY))
        return;
    for (uint32_t d = 0; d < n->m->ndispatch; d++)
        pin_dispatch(n->m, d);
}

uint8_t vigil_counter_read(const struct vigil_module_info *info, uint32_t index, uint64_t count[VIGIL_COUNTER_SLOTS])
{
    struct vigil_module_node *n = node_of(info);
    memset(count, 0, VIGIL_COUNTER_SLOTS * sizeof *count);
    if (!n || RELAXED_LOAD(&n->unloaded) || !n->m->pred_enable || index >= n->nsites)
        return 0;
    for (unsigned p = 0; p < VIGIL_PRED_SLOTS; p++)
        count[p] = RELAXED_LOAD(&n->m->pred_counts[(size_t)index * VIGIL_PRED_SLOTS + p]);
    return RELAXED_LOAD(&n->m->pred_enable[index]);
}

void vigil_modules_each(int (*fn)(const struct vigil_module_info *m, void *arg), void *arg)
{
    for (struct vigil_module_node *n = __vigil_modules(); n; n = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE))
        if (!RELAXED_LOAD(&n->unloaded) && fn(&n->info, arg))
            return;
}
