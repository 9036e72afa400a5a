/* vigil hot [-n N] [--json | --folded] [--trace FILE] [RUN]: the hot spots of a run profiled by
 * the hotspot tool. Reads RUN/hotspot.json (profile.h), names every frame from its binary's
 * debug information (cmd/symbolize.h; the function's own line from its symbol, cmd/elfsyms.h),
 * merges vigil-cc's companions into the user's functions (a checking copy's call into its
 * outlined instrumented copy is one frame; transfer thunks are none), and prints the functions
 * with the most samples in themselves (self) and in themselves and their callees (inclusive),
 * or the folded stacks of flame graphs, or writes Chrome trace events. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "elfsyms.h"
#include "hotcmd.h"
#include "json.h"
#include "options.h"
#include "profile.h"
#include "report.h"
#include "runreport.h"
#include "symbolize.h"

#define HOTSPOT_FILE "hotspot.json"

/* ---- which run ---- */

static int has_file(const char *dir, const char *name)
{
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

static char *read_all(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int failed = ferror(f);
    fclose(f);
    if (!buf || failed) {
        free(buf);
        snprintf(err, errlen, "%s: %s", path, buf ? "read error" : "out of memory");
        return NULL;
    }
    *len = n;
    return buf;
}

/* ---- naming frames ---- */

struct module {
    const char *path;
    int tried;
    struct vigil_symbolizer *sym;
    struct vigil_elfsyms *fsyms;
    char problem[400];
};

/* A frame once named: one function, or an inlined one inside its container (two, outer first). */
struct named {
    int module;
    uint64_t address;
    uint32_t funcs[2];
    uint8_t n, outlined, thunk, used;
};

/* (module, function name) -> where it is defined */
struct defined {
    char *key;
    char *file;
    int line;
};

struct ctx {
    const struct hs_profile *p;
    struct module *modules;
    struct hs_view view;
    struct named *frames;        /* cache by (module, address), open addressing */
    size_t fmask, nframes;
    struct defined *defs;        /* cache by "module\001name" */
    size_t dmask, ndefs;
    int oom;
};

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static uint64_t str_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return mix(h);
}

static struct module *module_at(struct ctx *c, int m)
{
    if (m < 0 || (size_t)m >= c->p->nmodules)
        return NULL;
    struct module *mod = &c->modules[m];
    if (!mod->tried) {
        mod->tried = 1;
        mod->sym = vigil_symbolizer_open(mod->path, mod->problem, sizeof mod->problem);
        mod->fsyms = vigil_elfsyms_open(mod->path, VIGIL_ELFSYMS_FUNCTIONS);
    }
    return mod;
}

/* Where function name (of module m) is defined: the line of its first instruction. */
static const struct defined *defined_at(struct ctx *c, int m, const char *name)
{
    char key[600];
    snprintf(key, sizeof key, "%d\001%s", m, name);
    if (2 * (c->ndefs + 1) > c->dmask + 1) {
        size_t cap = c->defs ? (c->dmask + 1) * 2 : 256;
        struct defined *t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; c->defs && i <= c->dmask; i++)
            if (c->defs[i].key)
                for (size_t h = (size_t)str_hash(c->defs[i].key);; h++)
                    if (!t[h & (cap - 1)].key) {
                        t[h & (cap - 1)] = c->defs[i];
                        break;
                    }
        free(c->defs);
        c->defs = t;
        c->dmask = cap - 1;
    }
    size_t h = (size_t)str_hash(key);
    for (;; h++) {
        struct defined *d = &c->defs[h & c->dmask];
        if (d->key && strcmp(d->key, key) == 0)
            return d;
        if (!d->key)
            break;
    }
    struct defined *d = &c->defs[h & c->dmask];
    struct module *mod = module_at(c, m);
    uint64_t start;
    struct vigil_source_location loc;
    const char *file = "";
    int line = 0;
    if (mod && mod->sym && vigil_elfsyms_named(mod->fsyms, name, &start) == 0 &&
        vigil_symbolize(mod->sym, start, &loc) == 0 && loc.file[0]) {
        file = loc.file;
        line = loc.line;
    }
    d->key = strdup(key);
    d->file = strdup(file);
    d->line = line;
    if (!d->key || !d->file) {
        free(d->key);
        free(d->file);
        d->key = NULL;
        return NULL;
    }
    c->ndefs++;
    return d;
}

static void base_name(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, len, "%s", slash ? slash + 1 : path);
}

/* Name the frame at (module, address): address is the PC for the leaf, else the return address
 * (its call is the instruction before). */
static const struct named *name_frame(struct ctx *c, int m, uint64_t address, int leaf)
{
    uint64_t at = leaf || address == 0 ? address : address - 1;
    if (2 * (c->nframes + 1) > c->fmask + 1) {
        size_t cap = c->frames ? (c->fmask + 1) * 2 : 1024;
        struct named *t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; c->frames && i <= c->fmask; i++)
            if (c->frames[i].used)
                for (size_t h = (size_t)mix(c->frames[i].address * 31 + (uint64_t)(c->frames[i].module + 1));; h++)
                    if (!t[h & (cap - 1)].used) {
                        t[h & (cap - 1)] = c->frames[i];
                        break;
                    }
        free(c->frames);
        c->frames = t;
        c->fmask = cap - 1;
    }
    size_t h = (size_t)mix(at * 31 + (uint64_t)(m + 1));
    for (;; h++) {
        struct named *f = &c->frames[h & c->fmask];
        if (!f->used)
            break;
        if (f->module == m && f->address == at)
            return f;
    }
    struct named *f = &c->frames[h & c->fmask];
    memset(f, 0, sizeof *f);
    f->module = m;
    f->address = at;
    struct module *mod = module_at(c, m);
    struct vigil_source_location loc;
    size_t idx[2];
    if (mod && mod->sym && vigil_symbolize(mod->sym, at, &loc) == 0 && (loc.function[0] || loc.container[0])) {
        f->outlined = (uint8_t)loc.outlined;
        f->thunk = (uint8_t)loc.thunk;
        const char *outer = loc.container[0] ? loc.container : loc.function;
        const struct defined *d = defined_at(c, m, outer);
        /* The function's own file: its definition's, else the file of this address's line. */
        idx[0] = hs_view_func(&c->view, outer, d && d->file[0] ? d->file : loc.file, d ? d->line : 0);
        f->n = 1;
        if (loc.function[0] && strcmp(loc.function, outer) != 0) {   /* inlined into outer */
            const struct defined *di = defined_at(c, m, loc.function);
            idx[1] = hs_view_func(&c->view, loc.function, di && di->file[0] ? di->file : loc.file,
                                  di && di->file[0] ? di->line : 0);
            f->n = 2;
        }
    } else {
        char name[600], base[512];
        if (mod) {
            base_name(mod->path, base, sizeof base);
            snprintf(name, sizeof name, "[%s+0x%llx]", base, (unsigned long long)at);
        } else {
            snprintf(name, sizeof name, "[0x%llx]", (unsigned long long)at);
        }
        idx[0] = hs_view_func(&c->view, name, "", 0);
        f->n = 1;
    }
    for (int i = 0; i < f->n; i++) {
        if (idx[i] == SIZE_MAX)
            return NULL;
        f->funcs[i] = (uint32_t)idx[i];
    }
    f->used = 1;
    c->nframes++;
    return f;
}

/* Every stack of the profile into the view, named, root first. */
static int name_stacks(struct ctx *c)
{
    const struct hs_profile *p = c->p;
    size_t cap = 64;
    uint32_t *funcs = malloc(cap * sizeof *funcs);
    if (!funcs)
        return -1;
    for (size_t s = 0; s < p->nstacks; s++) {
        const struct hs_pstack *st = &p->stacks[s];
        size_t n = 0;
        if (2 * st->nframes + 1 > cap) {
            uint32_t *grown = realloc(funcs, (2 * st->nframes + 1) * sizeof *grown);
            if (!grown)
                break;
            funcs = grown;
            cap = 2 * st->nframes + 1;
        }
        int outlined_in = -1;   /* the previous frame ran in this function's outlined copy */
        for (size_t k = 0; k < st->nframes; k++) {
            const struct named *f = name_frame(c, st->frames[k].module, st->frames[k].address, k == 0);
            if (!f) {
                free(funcs);
                return -1;
            }
            if (f->thunk)
                continue;   /* vigil's transfer thunk: no frame of the user's */
            if (outlined_in >= 0 && !f->outlined && f->funcs[0] == (uint32_t)outlined_in) {
                outlined_in = -1;   /* the checking copy's call into its outlined copy: one frame */
                continue;
            }
            outlined_in = f->outlined ? (int)f->funcs[0] : -1;
            for (int i = f->n; i-- > 0;)   /* leaf first for now: the inlined one, then its container */
                funcs[n++] = f->funcs[i];
        }
        for (size_t i = 0; i < n / 2; i++) {
            uint32_t t = funcs[i];
            funcs[i] = funcs[n - 1 - i];
            funcs[n - 1 - i] = t;
        }
        if (st->count && hs_view_add_stack(&c->view, s, funcs, n, st->count) != 0) {
            free(funcs);
            return -1;
        }
    }
    free(funcs);
    hs_view_finish(&c->view);
    return 0;
}

static void ctx_free(struct ctx *c)
{
    for (size_t i = 0; c->modules && i < c->p->nmodules; i++) {
        if (c->modules[i].sym)
            vigil_symbolizer_close(c->modules[i].sym);
        vigil_elfsyms_close(c->modules[i].fsyms);
    }
    free(c->modules);
    free(c->frames);
    for (size_t i = 0; c->defs && i <= c->dmask; i++) {
        free(c->defs[i].key);
        free(c->defs[i].file);
    }
    free(c->defs);
    hs_view_free(&c->view);
}

/* ---- output ---- */

struct args {
    int json, folded;
    long top;
    const char *trace, *target;
};

static double percent(uint64_t n, uint64_t base)
{
    return base ? 100.0 * (double)n / (double)base : 0;
}

static const char *short_file(const char *file)
{
    const char *slash = strrchr(file, '/');
    return slash ? slash + 1 : file;
}

static void print_table(const struct ctx *c, const char *title, int by_total, long top, uint64_t base)
{
    const struct hs_view *v = &c->view;
    size_t *rank = hs_view_ranking(v, by_total);
    if (!rank)
        return;
    size_t shown = 0, width = 8;
    for (size_t i = 0; i < v->nfuncs && (long)shown < top; i++) {
        const struct hs_func *f = &v->funcs[rank[i]];
        if (!(by_total ? f->total : f->self))
            break;
        shown++;
        if (strlen(f->name) > width)
            width = strlen(f->name) > 60 ? 60 : strlen(f->name);
    }
    printf("\n%s, top %zu:\n", title, shown);
    printf("  %7s  %8s  %-*s  %s\n", by_total ? "total" : "self", "samples", (int)width, "function", "defined at");
    for (size_t i = 0; i < shown; i++) {
        const struct hs_func *f = &v->funcs[rank[i]];
        uint64_t n = by_total ? f->total : f->self;
        printf("  %6.1f%%  %8llu  %-*s  ", percent(n, base), (unsigned long long)n, (int)width, f->name);
        if (f->file[0] && f->line)
            printf("%s:%d\n", short_file(f->file), f->line);
        else if (f->file[0])
            printf("%s\n", short_file(f->file));
        else
            printf("?\n");
    }
    free(rank);
}

static const char *method_text(const char *m)
{
    return strcmp(m, "perf") == 0 ? "perf_event task clock" : strcmp(m, "timer") == 0 ? "timer_create thread CPU clock"
                                                                                          : "no clock";
}

static void print_notes(const struct hs_profile *p)
{
    if (strcmp(p->method, "none") == 0)
        printf("  not sampled: %s\n", p->note);
    else if (p->note[0])
        printf("  note: %s\n", p->note);
    if (p->stepped_back)
        printf("  note: the program took the signal over during the run: sampling stopped there\n");
    uint64_t dropped = p->dropped_full + p->dropped_busy;
    if (dropped)
        printf("  note: %llu samples of stacks not kept (hotspot.max_stacks=%llu reached: %llu; busy: %llu)\n",
               (unsigned long long)dropped, (unsigned long long)p->max_stacks, (unsigned long long)p->dropped_full,
               (unsigned long long)p->dropped_busy);
    if (p->threads_blocked)
        printf("  note: %llu thread%s started with the signal blocked: not sampled\n",
               (unsigned long long)p->threads_blocked, p->threads_blocked == 1 ? "" : "s");
    if (p->threads_failed)
        printf("  note: %llu thread%s had no clock (perf_event_open and timer_create failed)\n",
               (unsigned long long)p->threads_failed, p->threads_failed == 1 ? "" : "s");
}

/* ---- the walks ---- */

/* A walked function or caller, named: the innermost function at the address (leaf: the address
 * is an entry, not a return address). SIZE_MAX when unnamed (out of memory). */
static size_t walk_name(struct ctx *c, const struct hs_frame *f, int leaf)
{
    const struct named *n = name_frame(c, f->module, f->address, leaf);
    return n ? n->funcs[n->n - 1] : SIZE_MAX;
}

struct named_caller {
    size_t func;
    uint64_t count;
};

/* A level's callers by function, most calls first; *total gets every call counted (the other
 * callers too). The caller frees. */
static struct named_caller *level_callers(struct ctx *c, const struct hs_plevel *l, size_t *n, uint64_t *total)
{
    struct named_caller *out = calloc(l->ncallers ? l->ncallers : 1, sizeof *out);
    *n = 0;
    *total = l->callers_other;
    for (size_t i = 0; out && i < l->ncallers; i++) {
        size_t f = walk_name(c, &l->callers[i].site, 0);
        *total += l->callers[i].count;
        size_t k = 0;
        while (k < *n && out[k].func != f)
            k++;
        if (k == *n)
            out[(*n)++] = (struct named_caller){f, 0};
        out[k].count += l->callers[i].count;
    }
    for (size_t i = 1; out && i < *n; i++)   /* insertion sort: a handful */
        for (size_t k = i; k > 0 && out[k].count > out[k - 1].count; k--) {
            struct named_caller t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    return out;
}

static const char *func_name(const struct ctx *c, size_t f)
{
    return f < c->view.nfuncs ? c->view.funcs[f].name : "?";
}

/* Each level's function into view->level_funcs (for the trace). */
static int name_levels(struct ctx *c)
{
    const struct hs_profile *p = c->p;
    size_t max = 0;
    for (size_t w = 0; w < p->nwalks; w++)
        for (size_t k = 0; k < p->walks[w].nlevels; k++)
            if (p->walks[w].levels[k].id + 1 > max && p->walks[w].levels[k].id < 1000000)
                max = p->walks[w].levels[k].id + 1;
    if (!max)
        return 0;
    c->view.level_funcs = malloc(max * sizeof *c->view.level_funcs);
    if (!c->view.level_funcs)
        return -1;
    c->view.nlevel_funcs = max;
    for (size_t i = 0; i < max; i++)
        c->view.level_funcs[i] = SIZE_MAX;
    for (size_t w = 0; w < p->nwalks; w++)
        for (size_t k = 0; k < p->walks[w].nlevels; k++)
            if (p->walks[w].levels[k].id < max)
                c->view.level_funcs[p->walks[w].levels[k].id] = walk_name(c, &p->walks[w].levels[k].function, 1);
    return 0;
}

static void print_walks(struct ctx *c)
{
    const struct hs_profile *p = c->p;
    if (!p->has_walk)
        return;
    printf("\nwalks: each hot spot's hook moved up its callers, %llu calls measured per level; instructions: %s\n",
           (unsigned long long)p->walk_calls, p->instructions);
    if (!p->nwalks)
        printf("  none (%llu patchable entries in the loaded modules%s%s)\n", (unsigned long long)p->walk_entries,
               p->walk_refused ? "; refused: " : "", p->walk_refused ? p->walk_refused_why : "");
    for (size_t w = 0; w < p->nwalks; w++) {
        const struct hs_pwalk *wk = &p->walks[w];
        printf("  walk %zu: hot spot %s (%.1f%% of %llu samples), ended: %s\n", w + 1,
               func_name(c, walk_name(c, &wk->hot, 1)), percent(wk->hot_samples, wk->total_samples),
               (unsigned long long)wk->total_samples, wk->end);
        printf("    %5s  %-24s %10s %9s %12s %12s %12s  %s\n", "level", "function", "calls", "measured", "mean wall",
               "max wall", "mean cycles", "callers (share of calls)");
        for (size_t k = 0; k < wk->nlevels; k++) {
            const struct hs_plevel *l = &wk->levels[k];
            char mean[32] = "-", max[32] = "-", cyc[32] = "-";
            if (l->measured) {
                snprintf(mean, sizeof mean, "%.3f us", (double)l->wall_ns / (double)l->measured / 1000.0);
                snprintf(max, sizeof max, "%.3f us", (double)l->wall_max_ns / 1000.0);
                snprintf(cyc, sizeof cyc, "%.0f", (double)l->cycles / (double)l->measured);
            }
            printf("    %5zu  %-24s %10llu %9llu %12s %12s %12s  ", k, func_name(c, walk_name(c, &l->function, 1)),
                   (unsigned long long)l->calls, (unsigned long long)l->measured, mean, max, cyc);
            size_t n;
            uint64_t total;
            struct named_caller *callers = level_callers(c, l, &n, &total);
            for (size_t i = 0; callers && i < n && i < 4; i++)
                printf("%s%s %.1f%%", i ? ", " : "", func_name(c, callers[i].func), percent(callers[i].count, total));
            if (callers && n > 4)
                printf(", %zu more", n - 4);
            if (l->recursive)
                printf("; %llu recursive", (unsigned long long)l->recursive);
            printf("\n");
            free(callers);
        }
    }
}

/* KEY: sum / n, or null when nothing was measured. */
static void json_mean(struct vigil_json *j, const char *key, uint64_t sum, uint64_t n)
{
    vigil_json_key(j, key);
    if (n)
        vigil_json_double(j, (double)sum / (double)n);
    else
        vigil_json_null(j);
}

static void json_walks(struct ctx *c, struct vigil_json *j)
{
    const struct hs_profile *p = c->p;
    vigil_json_key(j, "instructions");
    vigil_json_string(j, p->instructions ? p->instructions : "");
    vigil_json_key(j, "walks");
    vigil_json_array_begin(j);
    for (size_t w = 0; w < p->nwalks; w++) {
        const struct hs_pwalk *wk = &p->walks[w];
        vigil_json_object_begin(j);
        vigil_json_key(j, "hot");
        vigil_json_string(j, func_name(c, walk_name(c, &wk->hot, 1)));
        vigil_json_key(j, "hot_percent");
        vigil_json_double(j, percent(wk->hot_samples, wk->total_samples));
        vigil_json_key(j, "end");
        vigil_json_string(j, wk->end);
        vigil_json_key(j, "levels");
        vigil_json_array_begin(j);
        for (size_t k = 0; k < wk->nlevels; k++) {
            const struct hs_plevel *l = &wk->levels[k];
            size_t f = walk_name(c, &l->function, 1);
            vigil_json_object_begin(j);
            vigil_json_key(j, "function");
            vigil_json_string(j, func_name(c, f));
            vigil_json_key(j, "file");
            vigil_json_string(j, f < c->view.nfuncs ? c->view.funcs[f].file : "");
            vigil_json_key(j, "line");
            vigil_json_int(j, f < c->view.nfuncs ? c->view.funcs[f].line : 0);
            vigil_json_key(j, "calls");
            vigil_json_uint(j, l->calls);
            vigil_json_key(j, "measured");
            vigil_json_uint(j, l->measured);
            json_mean(j, "mean_wall_ns", l->wall_ns, l->measured);
            vigil_json_key(j, "max_wall_ns");
            vigil_json_uint(j, l->wall_max_ns);
            json_mean(j, "mean_cycles", l->cycles, l->measured);
            vigil_json_key(j, "recursive");
            vigil_json_uint(j, l->recursive);
            vigil_json_key(j, "tail");
            vigil_json_uint(j, l->tail);
            vigil_json_key(j, "callers");
            vigil_json_array_begin(j);
            size_t n;
            uint64_t total;
            struct named_caller *callers = level_callers(c, l, &n, &total);
            for (size_t i = 0; callers && i < n; i++) {
                vigil_json_object_begin(j);
                vigil_json_key(j, "function");
                vigil_json_string(j, func_name(c, callers[i].func));
                vigil_json_key(j, "calls");
                vigil_json_uint(j, callers[i].count);
                vigil_json_key(j, "percent");
                vigil_json_double(j, percent(callers[i].count, total));
                vigil_json_object_end(j);
            }
            free(callers);
            vigil_json_array_end(j);
            vigil_json_object_end(j);
        }
        vigil_json_array_end(j);
        vigil_json_object_end(j);
    }
    vigil_json_array_end(j);
}

static void print_text(struct ctx *c, const char *dir, const struct vigil_run_report *run, long top)
{
    const struct hs_profile *p = c->p;
    uint64_t base = p->samples > c->view.samples ? p->samples : c->view.samples;
    printf("vigil hot: %s (%s, pid %lld)\n", dir, run ? run->program : "?", run ? (long long)run->pid : 0ll);
    printf("  %llu samples, one per %llu us of a thread's CPU time (%s), %llu thread%s, %.2f s\n",
           (unsigned long long)p->samples, (unsigned long long)p->period_us, method_text(p->method),
           (unsigned long long)p->threads_sampled, p->threads_sampled == 1 ? "" : "s", p->duration_us / 1e6);
    if (p->late_period_us > p->period_us && p->signals < p->samples)
        printf("  (%llu taken: every %llu us for the first %llu, then every %llu us, each counting %llu)\n",
               (unsigned long long)p->signals, (unsigned long long)p->period_us, (unsigned long long)p->late_after,
               (unsigned long long)p->late_period_us, (unsigned long long)(p->late_period_us / p->period_us));
    print_notes(p);
    if (!c->view.samples)
        return;
    print_table(c, "self: samples in the function itself", 0, top, base);
    print_table(c, "inclusive: samples in the function and its callees", 1, top, base);
    print_walks(c);
}

static void json_funcs(struct vigil_json *j, const struct hs_view *v, int by_total, long top, uint64_t base)
{
    size_t *rank = hs_view_ranking(v, by_total);
    vigil_json_array_begin(j);
    for (size_t i = 0; rank && i < v->nfuncs && (long)i < top; i++) {
        const struct hs_func *f = &v->funcs[rank[i]];
        uint64_t n = by_total ? f->total : f->self;
        if (!n)
            break;
        vigil_json_object_begin(j);
        vigil_json_key(j, "function");
        vigil_json_string(j, f->name);
        vigil_json_key(j, "file");
        vigil_json_string(j, f->file);
        vigil_json_key(j, "line");
        vigil_json_int(j, f->line);
        vigil_json_key(j, "samples");
        vigil_json_uint(j, n);
        vigil_json_key(j, "percent");
        vigil_json_double(j, percent(n, base));
        vigil_json_object_end(j);
    }
    vigil_json_array_end(j);
    free(rank);
}

static void print_json(struct ctx *c, const char *dir, const struct vigil_run_report *run, long top)
{
    const struct hs_profile *p = c->p;
    const struct hs_view *v = &c->view;
    uint64_t base = p->samples > v->samples ? p->samples : v->samples;
    struct vigil_json j;
    vigil_json_init(&j, stdout, 1);
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "run");
    vigil_json_string(&j, dir);
    vigil_json_key(&j, "program");
    vigil_json_string(&j, run ? run->program : "");
    vigil_json_key(&j, "pid");
    vigil_json_int(&j, run ? run->pid : 0);
    vigil_json_key(&j, "method");
    vigil_json_string(&j, p->method);
    vigil_json_key(&j, "note");
    vigil_json_string(&j, p->note);
    vigil_json_key(&j, "period_us");
    vigil_json_uint(&j, p->period_us);
    vigil_json_key(&j, "samples");
    vigil_json_uint(&j, p->samples);
    vigil_json_key(&j, "late_period_us");
    vigil_json_uint(&j, p->late_period_us);
    vigil_json_key(&j, "signals");
    vigil_json_uint(&j, p->signals);
    vigil_json_key(&j, "samples_named");
    vigil_json_uint(&j, v->samples);
    vigil_json_key(&j, "threads");
    vigil_json_uint(&j, p->threads_sampled);
    vigil_json_key(&j, "duration_us");
    vigil_json_uint(&j, p->duration_us);
    vigil_json_key(&j, "self");
    json_funcs(&j, v, 0, top, base);
    vigil_json_key(&j, "inclusive");
    json_funcs(&j, v, 1, top, base);
    vigil_json_key(&j, "stacks");
    vigil_json_array_begin(&j);
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct hs_vstack *s = &v->stacks[i];
        if (!s->count)
            continue;
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "count");
        vigil_json_uint(&j, s->count);
        vigil_json_key(&j, "frames");
        vigil_json_array_begin(&j);
        for (size_t k = 0; k < s->n; k++)
            vigil_json_string(&j, v->funcs[s->funcs[k]].name);
        vigil_json_array_end(&j);
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);
    json_walks(c, &j);
    vigil_json_object_end(&j);
    vigil_json_finish(&j);
}

static int write_trace(struct ctx *c, const char *path, const struct vigil_run_report *run)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return cmd_error("hot", "%s: %s", tmp, strerror(errno));
    hs_view_write_trace(&c->view, c->p, f, run ? run->pid : 1, run ? run->program : NULL);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return cmd_error("hot", "writing %s: %s", path, strerror(e));
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct args *a)
{
    a->top = 20;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--json") == 0) {
            a->json = 1;
        } else if (strcmp(arg, "--folded") == 0) {
            a->folded = 1;
        } else if (strcmp(arg, "-n") == 0 || strncmp(arg, "-n", 2) == 0 || strncmp(arg, "--top=", 6) == 0 ||
                   strcmp(arg, "--top") == 0) {
            const char *value = strncmp(arg, "--top=", 6) == 0 ? arg + 6
                                : arg[1] == 'n' && arg[2] ? arg + 2
                                : i + 1 < argc ? argv[++i]
                                               : NULL;
            char *end;
            errno = 0;
            long n = value ? strtol(value, &end, 10) : 0;
            if (!value || !*value || *end || errno || n < 1 || n > 1000000)
                return cmd_usage_error("hot", "-n expects a number of functions, 1 to 1000000 (got \"%s\")",
                                       value ? value : "nothing");
            a->top = n;
        } else if (strcmp(arg, "--trace") == 0 || strncmp(arg, "--trace=", 8) == 0) {
            const char *value = arg[7] == '=' ? arg + 8 : i + 1 < argc ? argv[++i] : NULL;
            if (!value || !*value)
                return cmd_usage_error("hot", "--trace expects a FILE");
            a->trace = value;
        } else if (strcmp(arg, "--") == 0 && i + 2 == argc && !a->target) {
            a->target = argv[++i];
        } else if (arg[0] == '-') {
            return cmd_usage_error("hot", "unknown option \"%s\"", arg);
        } else if (a->target) {
            return cmd_usage_error("hot", "one run expected, got \"%s\" too", arg);
        } else {
            a->target = arg;
        }
    }
    if (a->json && a->folded)
        return cmd_usage_error("hot", "one of --json and --folded");
    return 0;
}

int hs_cmd_hot(int argc, char **argv)
{
    struct args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    char out_dir[VIGIL_OPT_STRING_MAX + 32], dir[4200];
    const char *where = a.target;
    if (!where) {
        cmd_default_out_dir(out_dir, sizeof out_dir);
        where = out_dir;
    }
    struct stat st;
    if (stat(where, &st) != 0)
        return a.target ? cmd_error("hot", "%s: %s", where, strerror(errno))
                        : cmd_error("hot", "no runs: %s: %s (run a program with `vigil run --tool hotspot`, or "
                                           "name a run)", where, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return cmd_error("hot", "%s: not a directory (expected a run directory, or a directory of runs)", where);
    if (has_file(where, VIGIL_RUN_FILE))
        snprintf(dir, sizeof dir, "%s", where);
    else if (cmd_newest_run(where, HOTSPOT_FILE, dir, sizeof dir) != 0)
        return cmd_error("hot", "%s: no run with %s in it (run a program with `vigil run --tool hotspot` or "
                                "VIGIL_OPTIONS=tools=hotspot)", where, HOTSPOT_FILE);
    char path[4300], err[1024];
    snprintf(path, sizeof path, "%s/%s", dir, HOTSPOT_FILE);
    if (!has_file(dir, HOTSPOT_FILE))
        return cmd_error("hot", "%s: no %s: the run did not use the hotspot tool (vigil run --tool hotspot)", dir,
                         HOTSPOT_FILE);
    size_t len;
    char *text = read_all(path, &len, err, sizeof err);
    if (!text)
        return cmd_error("hot", "%s", err);
    struct hs_profile p;
    int parsed = hs_profile_parse(text, len, path, &p, err, sizeof err);
    free(text);
    if (parsed != 0)
        return cmd_error("hot", "%s", err);
    struct vigil_run_report run;
    char rerr[512], rpath[4300];
    snprintf(rpath, sizeof rpath, "%s/%s", dir, VIGIL_RUN_FILE);
    int have_run = vigil_run_report_load(rpath, &run, rerr, sizeof rerr) == 0;

    struct ctx c;
    memset(&c, 0, sizeof c);
    c.p = &p;
    hs_view_init(&c.view);
    c.modules = calloc(p.nmodules ? p.nmodules : 1, sizeof *c.modules);
    for (size_t i = 0; c.modules && i < p.nmodules; i++)
        c.modules[i].path = p.modules[i].path;
    if (!c.modules || name_stacks(&c) != 0 || name_levels(&c) != 0) {
        rc = cmd_error("hot", "out of memory");
    } else {
        for (size_t i = 0; i < p.nmodules; i++)
            if (c.modules[i].tried && !c.modules[i].sym)
                fprintf(stderr, "vigil hot: %s: frames left unnamed\n", c.modules[i].problem);
        if (a.trace && (rc = write_trace(&c, a.trace, have_run ? &run : NULL)) == 0 && !a.json && !a.folded)
            printf("vigil hot: wrote %s: %llu samples of %zu thread%s as trace events (open it in "
                   "https://ui.perfetto.dev or chrome://tracing)\n",
                   a.trace, (unsigned long long)p.samples, p.nthreads, p.nthreads == 1 ? "" : "s");
        if (rc == 0 && a.folded)
            hs_view_write_folded(&c.view, stdout);
        else if (rc == 0 && a.json)
            print_json(&c, dir, have_run ? &run : NULL, a.top);
        else if (rc == 0 && !a.trace)
            print_text(&c, dir, have_run ? &run : NULL, a.top);
        if (rc == 0 && fflush(stdout) != 0)
            rc = cmd_error("hot", "writing the output: %s", strerror(errno));
    }
    ctx_free(&c);
    hs_profile_free(&p);
    vigil_run_report_free(&run);
    return rc;
}

/* ---- vigil observe: [hotspot.entries] ---- */

/* A function's samples over the observed processes. */
struct observed_func {
    char *name, *file;
    int line;
    uint64_t total, self;
};

static int by_total_desc(const void *a, const void *b)
{
    const struct observed_func *x = a, *y = b;
    if (x->total != y->total)
        return x->total < y->total ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* Add the functions of one process's profile (rundir/hotspot.json) to *fs. 0 (also when the
 * process has no profile), or -1 after a message. */
static int observe_one(const char *rundir, struct observed_func **fs, size_t *n, uint64_t *samples, double *cpu_s)
{
    char path[4300], err[1024];
    snprintf(path, sizeof path, "%s/%s", rundir, HOTSPOT_FILE);
    if (!has_file(rundir, HOTSPOT_FILE))
        return 0;
    size_t len;
    char *text = read_all(path, &len, err, sizeof err);
    if (!text)
        return cmd_error("observe", "%s", err);
    struct hs_profile p;
    int parsed = hs_profile_parse(text, len, path, &p, err, sizeof err);
    free(text);
    if (parsed != 0)
        return cmd_error("observe", "%s", err);
    struct ctx c;
    memset(&c, 0, sizeof c);
    c.p = &p;
    hs_view_init(&c.view);
    c.modules = calloc(p.nmodules ? p.nmodules : 1, sizeof *c.modules);
    for (size_t i = 0; c.modules && i < p.nmodules; i++)
        c.modules[i].path = p.modules[i].path;
    int rc = 0;
    if (!c.modules || name_stacks(&c) != 0)
        rc = cmd_error("observe", "out of memory");
    *samples += c.view.samples;
    *cpu_s += (double)p.samples * (double)p.period_us / 1e6;
    for (size_t i = 0; rc == 0 && i < c.view.nfuncs; i++) {
        const struct hs_func *f = &c.view.funcs[i];
        if (!f->total || f->name[0] == '[' || f->name[0] == '?')
            continue;   /* "[stack not kept]", unnamed frames */
        size_t k = 0;
        while (k < *n && strcmp((*fs)[k].name, f->name) != 0)
            k++;
        if (k == *n) {
            struct observed_func *grown = realloc(*fs, (*n + 1) * sizeof **fs);
            if (!grown || !(grown[k].name = strdup(f->name)) || !(grown[k].file = strdup(f->file))) {
                if (grown)
                    free(grown[k].name), *fs = grown;
                rc = cmd_error("observe", "out of memory");
                break;
            }
            *fs = grown;
            grown[k].line = f->line;
            grown[k].total = grown[k].self = 0;
            (*n)++;
        }
        (*fs)[k].total += f->total;
        (*fs)[k].self += f->self;
    }
    ctx_free(&c);
    hs_profile_free(&p);
    return rc;
}

int hs_observe_write(const char *const *rundirs, size_t nruns, uint64_t (*calls)(const char *function, void *arg),
                     void *calls_arg, FILE *f)
{
    struct observed_func *fs = NULL;
    size_t n = 0;
    uint64_t samples = 0;
    double cpu_s = 0;
    int rc = 0;
    for (size_t r = 0; r < nruns && rc == 0; r++)
        rc = observe_one(rundirs[r], &fs, &n, &samples, &cpu_s);
    if (rc == 0) {
        qsort(fs, n, sizeof *fs, by_total_desc);
        size_t listed = 0, frequent = 0;
        for (size_t k = 0; k < n; k++) {
            if (fs[k].total * 100 < samples * HS_OBSERVE_SHARE)
                continue;
            uint64_t c = calls(fs[k].name, calls_arg);
            if (c != UINT64_MAX && cpu_s > 0 && (double)c / cpu_s > HS_OBSERVE_MAX_RATE)
                frequent++;
            else
                listed++;
        }
        fprintf(f, "# [hotspot.entries]: the functions with at least %d%% of the %llu samples in themselves and their\n"
                   "# callees, but those called over %.0f times per CPU second; only they get the hot-spot walker's\n"
                   "# patchable entries (a nop at each entry, executed by every call).\n",
                HS_OBSERVE_SHARE, (unsigned long long)samples, (double)HS_OBSERVE_MAX_RATE);
        if (!listed) {
            fprintf(f, "# (no samples: the section is left out, every function keeps its entry)\n");
        } else {
            fprintf(f, "[hotspot.entries]\n");
            for (size_t k = 0; k < n; k++) {
                if (fs[k].total * 100 < samples * HS_OBSERVE_SHARE)
                    continue;
                uint64_t c = calls(fs[k].name, calls_arg);
                double rate = c != UINT64_MAX && cpu_s > 0 ? (double)c / cpu_s : 0;
                char count[64] = "";
                if (c != UINT64_MAX)
                    snprintf(count, sizeof count, ", %llu calls", (unsigned long long)c);
                fprintf(f, "# %.1f%% inclusive, %.1f%% self%s; %s:%d\n", 100.0 * (double)fs[k].total / (double)samples,
                        100.0 * (double)fs[k].self / (double)samples, count,
                        fs[k].file[0] ? short_file(fs[k].file) : "?", fs[k].line);
                if (rate > HS_OBSERVE_MAX_RATE) {
                    fprintf(f, "#   left out: %.1f M calls per CPU second (a walk ends below it)\n", rate / 1e6);
                    fputs("# ", f);
                }
                fputs("fun:", f);
                for (const char *s = fs[k].name; *s; s++) {   /* a literal glob */
                    if (strchr("*?[]\\", *s))
                        fputc('\\', f);
                    fputc(*s, f);
                }
                fputc('\n', f);
            }
        }
    }
    for (size_t k = 0; k < n; k++)
        free(fs[k].name), free(fs[k].file);
    free(fs);
    return rc;
}
