/* Predicate counters (common/abi.h, ABI 2): which sites count, decided at module registration
 * from VIGIL_OPTIONS preds=all|plan and the plan file VIGIL_PLAN; and the tool services that
 * read the counts (include/vigil/tool.h, version 2). The emitted code does the counting. */
#include "internal.h"
#include "plan.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

enum collect { COLLECT_SAMPLED, COLLECT_ALL, COLLECT_PLAN };

/* All written once by decide() (start-up, single-threaded: init runs before any module
 * registers), read-only after, except plan_rejected and plan_module_seen (registry lock). */
static int decided;
static enum collect collect;
static int binary;
static const char *plan_file;
static struct vigil_plan plan;
static int plan_rejected;          /* 1: the plan did not match: nothing is counted */
static uint8_t *plan_module_seen;  /* per plan module: a module with its tu_hash registered */
static int warned_no_counters;     /* "built without counters" said once (registry lock) */

static char *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = __libc_malloc(cap);
    while (buf) {
        if (n == cap) {
            char *bigger = __libc_malloc(cap * 2);
            if (bigger)
                memcpy(bigger, buf, n);
            __libc_free(buf);
            buf = bigger;
            cap *= 2;
            if (!buf)
                break;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r < 0) {
                __libc_free(buf);
                buf = NULL;
            }
            break;
        }
        n += (size_t)r;
    }
    close(fd);
    *len = n;
    return buf;
}

static void load_plan(void)
{
    size_t len = 0;
    char *text = read_file(plan_file, &len);
    if (!text) {
        __vigil_message("VIGIL_PLAN=%s: cannot read the plan (%s): counting nothing", plan_file, strerror(errno));
        plan_rejected = 1;
        return;
    }
    char err[300];
    struct vigil_thread *th = &__vigil_thread;
    int was = th->in_runtime;
    th->in_runtime = 1;   /* the parser's allocations are the runtime's, not the program's */
    int rc = vigil_plan_parse(text, len, plan_file, &plan, err, sizeof err);
    if (rc == 0 && plan.nmodules && !(plan_module_seen = __libc_malloc(plan.nmodules)))
        rc = -1, snprintf(err, sizeof err, "%s: out of memory", plan_file);
    __vigil_leave_runtime(th, was);
    __libc_free(text);
    if (rc != 0) {
        __vigil_message("VIGIL_PLAN: %s: plan rejected, counting nothing", err);
        plan_rejected = 1;
        return;
    }
    memset(plan_module_seen, 0, plan.nmodules);
}

static void decide(void)
{
    if (decided)
        return;
    decided = 1;
    binary = __vigil_opts.preds_binary;
    plan_file = __vigil_plan_path();
    if (strcmp(__vigil_opts.preds, "all") == 0) {
        collect = COLLECT_ALL;
        if (plan_file)
            __vigil_message("preds=all: VIGIL_PLAN=%s ignored", plan_file);
    } else if (plan_file) {
        collect = COLLECT_PLAN;
        load_plan();
    } else if (strcmp(__vigil_opts.preds, "plan") == 0) {
        collect = COLLECT_PLAN;
        plan_rejected = 1;
        __vigil_message("preds=plan needs the plan file in VIGIL_PLAN=file: counting nothing");
    }
}

const char *vigil_pred_collect(int *binary_out)
{
    decide();
    if (binary_out)
        *binary_out = binary;
    return collect == COLLECT_ALL ? "all" : collect == COLLECT_PLAN ? "plan" : "sampled";
}

/* The enable byte of a site of this kind, 0 for sites without predicates. */
static uint8_t enable_value(struct vigil_module_node *n, uint32_t index)
{
    struct vigil_site_view v;
    vigil_sitefmt_get(__vigil_module_table(n), index, &v);
    uint8_t preds = v.kind == VIGIL_SITE_BRANCH ? 0x3 : v.kind == VIGIL_SITE_RETURN ? 0x7 : 0;
    if (!preds)
        return 0;
    return (uint8_t)(preds | VIGIL_PRED_MONITORED | (binary ? VIGIL_PRED_BINARY : 0));
}

/* Pin dispatch site d: its check always goes to the instrumented copy (common/abi.h). */
static void pin_dispatch(struct __vigil_module *m, uint32_t d)
{
    uint32_t site = m->dispatch_sites[d] & VIGIL_DISPATCH_SITE;
    RELAXED_STORE(&m->pred_enable[site], (uint8_t)(RELAXED_LOAD(&m->pred_enable[site]) | VIGIL_PRED_PINNED));
    RELAXED_STORE(&m->counters[d], 0);   /* the next check goes to __vigil_dispatch_enter */
}

/* Modules built with counters in the instrumented copy only count a site while its function
 * runs that copy: pin the function, that is its entry and back-edge checks (a computed goto
 * that labels.c could not keep in the clone lands in the checking copy, at a back-edge check).
 * The compiler adds a function's sites together, entry first: the function's dispatch sites
 * are the last entry at or before the site and the back-edges after it (dispatch_sites is in
 * site order). 0 when that entry is not the site's function (a table not made by vigil-cc). */
static int pin_function_of(struct vigil_module_node *n, uint32_t index)
{
    struct __vigil_module *m = n->m;
    if (!(m->flags & VIGIL_MODULE_PRED_INSTR_ONLY))
        return 1;
    uint32_t lo = 0, hi = m->ndispatch;   /* first d whose site is after index */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((m->dispatch_sites[mid] & VIGIL_DISPATCH_SITE) <= index)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t entry = lo;
    while (entry-- > 0 && (m->dispatch_sites[entry] & VIGIL_DISPATCH_BACKEDGE))
        ;
    if (entry == UINT32_MAX)
        return 0;
    struct vigil_site_view site, v;
    vigil_sitefmt_get(__vigil_module_table(n), index, &site);
    vigil_sitefmt_get(__vigil_module_table(n), m->dispatch_sites[entry] & VIGIL_DISPATCH_SITE, &v);
    if (strcmp(v.function, site.function) != 0)
        return 0;
    pin_dispatch(m, entry);
    for (uint32_t d = entry + 1; d < m->ndispatch && (m->dispatch_sites[d] & VIGIL_DISPATCH_BACKEDGE); d++)
        pin_dispatch(m, d);
    return 1;
}

/* The plan does not fit this binary: say why once, and switch off what was switched on. */
static void reject_plan(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void reject_plan(const char *fmt, ...)
{
    char why[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    __vigil_message("VIGIL_PLAN: %s: plan rejected, counting nothing", why);
    plan_rejected = 1;
    for (struct vigil_module_node *n = __vigil_modules(); n; n = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE))
        if (!n->unloaded && n->m->pred_enable)
            for (uint32_t i = 0; i < n->nsites; i++)
                RELAXED_STORE(&n->m->pred_enable[i], 0);
}

static void apply_plan(struct vigil_module_node *n)
{
    size_t k = 0;
    while (k < plan.nmodules && plan.modules[k].tu_hash != n->tu_hash)
        k++;
    if (k == plan.nmodules)
        return;
    plan_module_seen[k] = 1;
    const struct vigil_plan_module *pm = &plan.modules[k];
    if (pm->nsites != n->nsites) {
        reject_plan("%s:%u: module %016" PRIx64 " has %u sites in the plan, but %u in %s (plan made for another build?)",
                    plan_file, pm->line, pm->tu_hash, pm->nsites, n->nsites, n->path);
        return;
    }
    if (!n->m->pred_enable) {
        reject_plan("%s:%u: module %016" PRIx64 " (%s) was built without predicate counters (expected a build with "
                    "VIGIL_CC_PRED_COUNTERS=1)", plan_file, pm->line, pm->tu_hash, n->path);
        return;
    }
    for (size_t i = 0; i < plan.nsites; i++) {
        const struct vigil_plan_site *ps = &plan.sites[i];
        if (ps->module != k)
            continue;
        uint8_t e = enable_value(n, ps->index);
        if (!e) {
            struct vigil_site_view v;
            vigil_sitefmt_get(__vigil_module_table(n), ps->index, &v);
            reject_plan("%s:%u: site %016" PRIx64 " %u is of kind %s, expected a branch or return site",
                        plan_file, ps->line, pm->tu_hash, ps->index, vigil_site_kind_name(v.kind));
            return;
        }
        RELAXED_STORE(&n->m->pred_enable[ps->index], e);
        if (!pin_function_of(n, ps->index)) {
            reject_plan("%s:%u: site %016" PRIx64 " %u: its function has no entry site in %s", plan_file, ps->line,
                        pm->tu_hash, ps->index, n->path);
            return;
        }
    }
}

void __vigil_preds_register(struct vigil_module_node *n)
{
    decide();
    if (collect == COLLECT_SAMPLED || plan_rejected)
        return;
    if (!__vigil_module_table(n))
        return;   /* kinds unknown: registry.c has said so */
    if (collect == COLLECT_PLAN) {
        apply_plan(n);
        return;
    }
    if (!n->m->pred_enable) {
        if (!warned_no_counters)
            __vigil_message("preds=all: %s was built without predicate counters (VIGIL_CC_PRED_COUNTERS=1): "
                            "its predicates are not counted", n->path);
        warned_no_counters = 1;
        return;
    }
    for (uint32_t i = 0; i < n->nsites; i++) {
        uint8_t e = enable_value(n, i);
        if (e)
            RELAXED_STORE(&n->m->pred_enable[i], e);
    }
    if (n->m->flags & VIGIL_MODULE_PRED_INSTR_ONLY)   /* every function runs its instrumented copy */
        for (uint32_t d = 0; d < n->m->ndispatch; d++)
            pin_dispatch(n->m, d);
}

void __vigil_preds_fini(void)
{
    if (collect != COLLECT_PLAN || plan_rejected || __vigil_opts.verbosity < 1)
        return;
    for (size_t k = 0; k < plan.nmodules; k++)
        if (!plan_module_seen[k])
            __vigil_message("VIGIL_PLAN: %s:%u: module %016" PRIx64 " never registered in this process",
                            plan_file, plan.modules[k].line, plan.modules[k].tu_hash);
}

size_t vigil_pred_sites_each(int (*fn)(const struct vigil_pred_site *s, void *arg), void *arg)
{
    size_t visited = 0;
    for (struct vigil_module_node *n = __vigil_modules(); n; n = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE)) {
        const struct vigil_sitefmt_table *t;
        if (RELAXED_LOAD(&n->unloaded) || !n->m->pred_enable || !(t = __vigil_module_table(n)))
            continue;
        for (uint32_t i = 0; i < n->nsites; i++) {
            if (!(RELAXED_LOAD(&n->m->pred_enable[i]) & VIGIL_PRED_MONITORED))
                continue;
            struct vigil_site_view v;
            vigil_sitefmt_get(t, i, &v);
            struct vigil_pred_site s = {.site = n->base_id + i, .kind = vigil_site_kind_name(v.kind)};
            for (unsigned p = 0; p < VIGIL_PRED_SLOTS; p++) {
                uint64_t c = RELAXED_LOAD(&n->m->pred_counts[(size_t)i * VIGIL_PRED_SLOTS + p]);
                s.count[p] = binary && c > 1 ? 1 : c;   /* racing threads may both have stored */
            }
            visited++;
            if (fn(&s, arg))
                return visited;
        }
    }
    return visited;
}
