/* Which predicate counters count (preds.collect=all|plan): the emitted counters of every
 * branch and return site (all), or of the sites of the plan file VIGIL_PLAN (plan), set as
 * each module registers (tool.h, "per-site counters"); modules with counters in the
 * instrumented copy only get the functions of counted sites pinned there. */
#include "preds.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan.h"

/* Written by preds_counters_start (the tool's init, before any module is announced), read
 * after; plan_rejected and plan_module_seen also by on_module, under the registry's lock. */
static enum preds_collect collect;
static int binary;
static const char *plan_file;
static struct vigil_plan plan;
static int plan_rejected;          /* 1: the plan did not match: nothing is counted */
static uint8_t *plan_module_seen;  /* per plan module: a module with its tu_hash registered */
static int warned_no_counters;     /* "built without counters" said once */

static char *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger, cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r < 0)
                free(buf), buf = NULL;
            break;
        }
        n += (size_t)r;
    }
    int saved = errno;
    close(fd);
    errno = saved;
    *len = n;
    return buf;
}

static void load_plan(void)
{
    size_t len = 0;
    char *text = read_file(plan_file, &len);
    if (!text) {
        vigil_tool_message(&preds_tool, "VIGIL_PLAN=%s: cannot read the plan (%s): counting nothing", plan_file,
                           strerror(errno));
        plan_rejected = 1;
        return;
    }
    char err[300];
    int rc = vigil_plan_parse(text, len, plan_file, &plan, err, sizeof err);
    if (rc == 0 && plan.nmodules && !(plan_module_seen = calloc(plan.nmodules, 1)))
        rc = -1, snprintf(err, sizeof err, "%s: out of memory", plan_file);
    free(text);
    if (rc != 0) {
        vigil_tool_message(&preds_tool, "VIGIL_PLAN: %s: plan rejected, counting nothing", err);
        plan_rejected = 1;
    }
}

enum preds_collect preds_counters_start(const char *asked, int binary_flags)
{
    binary = binary_flags;
    plan_file = vigil_plan_file();
    if (strcmp(asked, "all") == 0) {
        collect = PREDS_ALL;
        if (plan_file)
            vigil_tool_message(&preds_tool, "preds.collect=all: VIGIL_PLAN=%s ignored", plan_file);
    } else if (plan_file) {
        collect = PREDS_PLAN;
        load_plan();
    } else if (strcmp(asked, "plan") == 0) {
        collect = PREDS_PLAN;
        plan_rejected = 1;
        vigil_tool_message(&preds_tool, "preds.collect=plan needs the plan file in VIGIL_PLAN=file: counting nothing");
    } else {
        collect = PREDS_SAMPLED;
    }
    return collect;
}

/* The enable byte of a site of this kind, 0 for sites without predicates. */
static uint8_t enable_value(const struct vigil_module_info *m, uint32_t index, const char **kind)
{
    struct vigil_site_info info;
    *kind = "?";
    if (vigil_site_lookup(m->base + index, &info) != 0 || !info.kind)
        return 0;
    *kind = info.kind;
    uint8_t preds = strcmp(info.kind, "branch") == 0 || strcmp(info.kind, "case") == 0 ? 0x3
                    : strcmp(info.kind, "return") == 0                                 ? 0x7
                                                                                       : 0;
    if (!preds)
        return 0;
    return (uint8_t)(preds | VIGIL_COUNTER_MONITORED | (binary ? VIGIL_COUNTER_BINARY : 0));
}

static int switch_off(const struct vigil_module_info *m, void *arg)
{
    (void)arg;
    if (m->counters)
        for (uint32_t i = 0; i < m->nsites; i++)
            vigil_counter_enable(m, i, 0);
    return 0;
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
    vigil_tool_message(&preds_tool, "VIGIL_PLAN: %s: plan rejected, counting nothing", why);
    plan_rejected = 1;
    vigil_modules_each(switch_off, NULL);
}

static void apply_plan(const struct vigil_module_info *m)
{
    size_t k = 0;
    while (k < plan.nmodules && plan.modules[k].tu_hash != m->tu_hash)
        k++;
    if (k == plan.nmodules)
        return;
    plan_module_seen[k] = 1;
    const struct vigil_plan_module *pm = &plan.modules[k];
    if (pm->nsites != m->nsites) {
        reject_plan("%s:%u: module %016" PRIx64 " has %u sites in the plan, but %u in %s (plan made for another build?)",
                    plan_file, pm->line, pm->tu_hash, pm->nsites, m->nsites, m->path);
        return;
    }
    if (!m->counters) {
        reject_plan("%s:%u: module %016" PRIx64 " (%s) was built without predicate counters (expected a build with "
                    "VIGIL_CC_PRED_COUNTERS=1)", plan_file, pm->line, pm->tu_hash, m->path);
        return;
    }
    for (size_t i = 0; i < plan.nsites; i++) {
        const struct vigil_plan_site *ps = &plan.sites[i];
        if (ps->module != k)
            continue;
        const char *kind;
        uint8_t e = ps->index < m->nsites ? enable_value(m, ps->index, &kind) : 0;
        if (!e) {
            reject_plan("%s:%u: site %016" PRIx64 " %u is of kind %s, expected a branch, case or return site",
                        plan_file, ps->line, pm->tu_hash, ps->index, kind);
            return;
        }
        vigil_counter_enable(m, ps->index, e);
        if (vigil_counter_pin_function(m, ps->index) != 0) {
            reject_plan("%s:%u: site %016" PRIx64 " %u: its function has no entry site in %s", plan_file, ps->line,
                        pm->tu_hash, ps->index, m->path);
            return;
        }
    }
}

void preds_on_module(const struct vigil_module_info *m)
{
    if (collect == PREDS_SAMPLED || plan_rejected)
        return;
    if (collect == PREDS_PLAN) {
        apply_plan(m);
        return;
    }
    if (!m->counters) {
        if (!warned_no_counters)
            vigil_tool_message(&preds_tool, "preds.collect=all: %s was built without predicate counters "
                               "(VIGIL_CC_PRED_COUNTERS=1): its predicates are not counted", m->path);
        warned_no_counters = 1;
        return;
    }
    for (uint32_t i = 0; i < m->nsites; i++) {
        const char *kind;
        uint8_t e = enable_value(m, i, &kind);
        if (e)
            vigil_counter_enable(m, i, e);
    }
    vigil_counter_pin_all(m);   /* every function runs its instrumented copy, where it counts */
}

void preds_counters_fini(int verbose)
{
    if (collect != PREDS_PLAN || plan_rejected || !verbose)
        return;
    for (size_t k = 0; k < plan.nmodules; k++)
        if (!plan_module_seen[k])
            vigil_tool_message(&preds_tool, "VIGIL_PLAN: %s:%u: module %016" PRIx64 " never registered in this process",
                               plan_file, plan.modules[k].line, plan.modules[k].tu_hash);
}

struct each_site { int (*fn)(const struct preds_site *, void *); void *arg; size_t visited; int stop; };

static int each_site_of(const struct vigil_module_info *m, void *arg)
{
    struct each_site *e = arg;
    if (!m->counters)
        return 0;
    for (uint32_t i = 0; i < m->nsites && !e->stop; i++) {
        uint64_t count[VIGIL_COUNTER_SLOTS];
        if (!(vigil_counter_read(m, i, count) & VIGIL_COUNTER_MONITORED))
            continue;
        struct vigil_site_info info;
        struct preds_site s = {.site = m->base + i,
                               .kind = vigil_site_lookup(m->base + i, &info) == 0 && info.kind ? info.kind : "?"};
        for (unsigned p = 0; p < VIGIL_COUNTER_SLOTS; p++)
            s.count[p] = binary && count[p] > 1 ? 1 : count[p];   /* racing threads may both have stored */
        e->visited++;
        e->stop = e->fn(&s, e->arg) != 0;
    }
    return e->stop;
}

size_t preds_counted_sites_each(int (*fn)(const struct preds_site *s, void *arg), void *arg)
{
    struct each_site e = {fn, arg, 0, 0};
    vigil_modules_each(each_site_of, &e);
    return e.visited;
}
