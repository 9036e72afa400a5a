/* Loading and preparing leak.json for `vigil leaks` and `vigil html`; see leakreport.h. */
#include "leakreport.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfsites.h"
#include "jsontree.h"
#include "sitemap.h"
#include "textfmt.h"
#include "symbolize.h"

/* ---- typed reads of leak.json's members (absent or of another type: 0, "" or def) ---- */
static const struct vigil_jv *jget(const struct vigil_jv *o, const char *key)
{
    return o ? vigil_jv_get(o, key) : NULL;
}
static uint64_t ju(const struct vigil_jv *o, const char *key)
{
    const struct vigil_jv *n = jget(o, key);
    return n && (n->type == VIGIL_JV_NUMBER || n->type == VIGIL_JV_BOOL) && n->number > 0 ? (uint64_t)n->number : 0;
}
static int64_t ji(const struct vigil_jv *o, const char *key, int64_t def)
{
    const struct vigil_jv *n = jget(o, key);
    return n && n->type == VIGIL_JV_NUMBER ? (int64_t)n->number : def;
}
static double jd(const struct vigil_jv *o, const char *key)
{
    const struct vigil_jv *n = jget(o, key);
    return n && n->type == VIGIL_JV_NUMBER ? n->number : 0;
}
static char *js(const struct vigil_jv *o, const char *key)
{
    const struct vigil_jv *n = jget(o, key);
    return strdup(n && n->type == VIGIL_JV_STRING ? n->string : "");
}
static uint64_t jhex(const struct vigil_jv *o, const char *key)
{
    const struct vigil_jv *n = jget(o, key);
    return n && n->type == VIGIL_JV_STRING ? strtoull(n->string, NULL, 16) : 0;
}
static int jtrue(const struct vigil_jv *o, const char *key)
{
    const struct vigil_jv *n = jget(o, key);
    return n && n->type == VIGIL_JV_BOOL && n->number != 0;
}

/* ---- loading ---- */
static void load_access(const struct vigil_jv *n, struct leak_access *a)
{
    memset(a, 0, sizeof *a);
    a->rate = -1;
    if (!n || n->type != VIGIL_JV_OBJECT)
        return;
    a->present = 1;
    a->site = (uint32_t)ju(n, "site");
    a->kind = js(n, "kind");
    a->function = js(n, "function");
    a->file = js(n, "file");
    a->line = (uint32_t)ju(n, "line");
    a->column = (uint32_t)ju(n, "column");
    a->nearest_line = (uint32_t)ju(n, "nearest_line");
    a->t_ms = ju(n, "t_ms");
    a->objects = ju(n, "objects");
}

static void load_group(const struct vigil_jv *n, struct leak_group_view *g)
{
    memset(g, 0, sizeof *g);
    g->kind = js(n, "kind");
    g->score = jd(n, "score");
    const struct vigil_jv *st = jget(n, "stack");
    if (st && st->type == VIGIL_JV_ARRAY && st->n) {
        g->frames = calloc(st->n, sizeof *g->frames);
        for (size_t i = 0; g->frames && i < st->n; i++) {
            struct leak_frame *f = &g->frames[g->nframes++];
            f->pc = jhex(&st->items[i], "pc");
            f->offset = jhex(&st->items[i], "offset");
            f->module = (int)ji(&st->items[i], "module", -1);
            f->function = strdup("");
            f->file = strdup("");
        }
    }
#define U(field) g->field = ju(n, #field)
    U(objects); U(bytes); U(stale_objects); U(stale_bytes); U(unreachable_objects);
    U(unreachable_bytes); U(both_objects); U(both_bytes); U(live_objects); U(live_bytes);
    U(indirect_objects); U(indirect_bytes); U(age_max_ms); U(age_min_ms); U(idle_min_ms); U(idle_max_ms); U(idle_avg_ms);
    U(never_accessed); U(site_allocs); U(site_frees); U(site_accesses_sampled); U(snapshots_flagged);
#undef U
    load_access(jget(n, "last_access_recent"), &g->recent);
    load_access(jget(n, "last_access_common"), &g->common);
    g->merged = 1;
}

int leak_report_load(const char *rundir, struct leak_report_view *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->dir = strdup(rundir);
    char path[4200];
    snprintf(path, sizeof path, "%s/" LEAK_REPORT_FILE, rundir);
    char *text;
    size_t len;
    int rc = vigil_text_load_file(path, SIZE_MAX, &text, &len, err, errlen);
    if (rc == -1 && errno == ENOENT) {
        snprintf(err, errlen, "%s: %s (was the program run with VIGIL_OPTIONS=tools=leak?)", path, strerror(ENOENT));
        return -1;
    }
    if (rc != 0)
        return -1;
    struct vigil_jv root;
    char jerr[300];
    if (vigil_jv_parse(text, len, &root, jerr, sizeof jerr) != 0) {
        snprintf(err, errlen, "%s:%s", path, jerr);
        free(text);
        return -1;
    }
    free(text);
    const struct vigil_jv *fmt = jget(&root, "format");
    if (root.type != VIGIL_JV_OBJECT || !fmt || fmt->type != VIGIL_JV_STRING || strcmp(fmt->string, "vigil-leak") != 0 ||
        ju(&root, "version") != 1) {
        snprintf(err, errlen, "%s: not a leak report of format version 1", path);
        vigil_jv_free(&root);
        return -1;
    }
    const struct vigil_jv *o = jget(&root, "options");
    r->stale_after_s = jd(o, "stale_after_s");
    r->gap_factor = jd(o, "gap_factor");
    r->snapshot_every_s = jd(o, "snapshot_every_s");
    r->stale_allocs = ju(o, "stale_allocs");
    r->depth = ju(o, "depth");
    r->reach_enabled = (int)ju(o, "reach");
    const struct vigil_jv *clock = jget(o, "clock");   /* absent before clock=active: wall */
    r->active_clock = clock && clock->type == VIGIL_JV_STRING && strcmp(clock->string, "active") == 0;
    const struct vigil_jv *h = jget(&root, "heap");
    r->allocs = ju(h, "allocs");
    r->frees = ju(h, "frees");
    r->unknown_frees = ju(h, "unknown_frees");
    r->realloc_moves = ju(h, "realloc_moves");   /* absent in older reports: 0 */
    r->live_objects = ju(h, "live_objects");
    r->live_bytes = ju(h, "live_bytes");
    r->peak_live_bytes = ju(h, "peak_live_bytes");
    r->model_mapped_bytes = ju(h, "model_mapped_bytes");
    r->model_resident_bytes = ju(h, "model_resident_bytes");
    r->sites = ju(h, "sites");
    const struct vigil_jv *s = jget(&root, "sampling");
    r->accesses_sampled = ju(s, "accesses_sampled");
    r->accesses_heap = ju(s, "accesses_heap");
    const struct vigil_jv *re = jget(&root, "reachability");
    r->reach_done = (int)ju(re, "done");
    r->reach_method = js(re, "method");
    r->reach_error = js(re, "error");
    r->reach_root_bytes = ju(re, "root_bytes");
    r->reach_marked = ju(re, "marked_objects");
    r->reach_threads = ju(re, "threads");
    r->duration_ms = ju(jget(&root, "final"), "t_ms");
    const struct vigil_jv *mods = jget(&root, "modules");
    if (mods && mods->type == VIGIL_JV_ARRAY) {
        r->modules = calloc(mods->n ? mods->n : 1, sizeof *r->modules);
        for (size_t i = 0; r->modules && i < mods->n; i++) {
            r->modules[i].path = js(&mods->items[i], "path");
            r->modules[i].bias = jhex(&mods->items[i], "bias");
            r->modules[i].problem = NULL;
            r->nmodules++;
        }
    }
    const struct vigil_jv *snaps = jget(&root, "snapshots");
    if (snaps && snaps->type == VIGIL_JV_ARRAY) {
        r->snapshots = calloc(snaps->n ? snaps->n : 1, sizeof *r->snapshots);
        for (size_t i = 0; r->snapshots && i < snaps->n; i++) {
            const struct vigil_jv *k = &snaps->items[i];
            struct leak_snapshot_view *v = &r->snapshots[r->nsnapshots++];
            v->reason = js(k, "reason");
            v->t_ms = ju(k, "t_ms");
            v->live_objects = ju(k, "live_objects");
            v->live_bytes = ju(k, "live_bytes");
            v->stale_objects = ju(k, "stale_objects");
            v->stale_bytes = ju(k, "stale_bytes");
            v->unreachable_objects = jget(k, "unreachable_objects") ? (int64_t)ju(k, "unreachable_objects") : -1;
        }
    }
    r->running = jtrue(&root, "running");
    r->short_run = jtrue(&root, "short_run");
    const struct vigil_jv *in_use = jget(&root, "in_use");   /* absent in older reports */
    r->in_use_objects = ju(in_use, "objects");
    r->in_use_bytes = ju(in_use, "bytes");
    r->in_use_sites = ju(in_use, "sites");
    const struct vigil_jv *largest = jget(in_use, "largest");
    if (largest && largest->type == VIGIL_JV_ARRAY) {
        r->in_use = calloc(largest->n ? largest->n : 1, sizeof *r->in_use);
        for (size_t i = 0; r->in_use && i < largest->n; i++) {
            struct leak_group_view *g = &r->in_use[r->nin_use++];
            load_group(&largest->items[i], g);
            g->live_objects = ju(&largest->items[i], "objects");
            g->live_bytes = ju(&largest->items[i], "bytes");
        }
    }
    const struct vigil_jv *groups = jget(&root, "groups");
    if (groups && groups->type == VIGIL_JV_ARRAY) {
        r->groups = calloc(groups->n ? groups->n : 1, sizeof *r->groups);
        for (size_t i = 0; r->groups && i < groups->n; i++)
            load_group(&groups->items[i], &r->groups[r->ngroups++]);
    }
    vigil_jv_free(&root);
    char rerr[512];
    snprintf(path, sizeof path, "%s/run.txt", rundir);
    r->have_run = vigil_run_report_load(path, &r->run, rerr, sizeof rerr) == 0;
    return 0;
}

/* ---- preparing ---- */

/* Sampling rate of the entry check of the function holding a vigil site, from run.txt. */
static double function_rate(const struct leak_report_view *r, const struct vigil_sitemap *map, uint32_t site)
{
    if (!r->have_run)
        return -1;
    for (size_t m = 0; m < r->run.nmodules; m++) {
        const struct vigil_run_module *mod = &r->run.modules[m];
        if (site < mod->base_id || site >= mod->base_id + mod->nsites)
            continue;
        struct vigil_site_view target;
        if (vigil_sitemap_lookup(map, (uint32_t)m, site - mod->base_id, &target) != 0)
            return -1;
        for (size_t i = 0; i < r->run.nsites; i++) {
            const struct vigil_run_site *s = &r->run.sites[i];
            struct vigil_site_view v;
            if (s->module == m && s->kind == VIGIL_SITE_ENTRY &&
                vigil_sitemap_lookup(map, s->module, s->index, &v) == 0 &&
                strcmp(v.function, target.function) == 0)
                return s->rate;
        }
        return -1;
    }
    return -1;
}

static int same_stack(const struct leak_group_view *a, const struct leak_group_view *b)
{
    if (a->nframes != b->nframes)
        return 0;
    for (size_t i = 0; i < a->nframes; i++) {
        const struct leak_frame *x = &a->frames[i], *y = &b->frames[i];
        if (!x->line || !y->line) {   /* unknown source: only the same PC is the same site */
            if (x->pc != y->pc)
                return 0;
        } else if (x->line != y->line || strcmp(x->file, y->file) != 0 || strcmp(x->function, y->function) != 0) {
            return 0;
        }
    }
    return 1;
}

static void merge_access(struct leak_access *into, struct leak_access *from, int by_time)
{
    if (!from->present)
        return;
    int take = !into->present || (by_time ? from->t_ms > into->t_ms : from->objects > into->objects);
    if (!take)
        return;
    free(into->kind), free(into->function), free(into->file);
    *into = *from;
    memset(from, 0, sizeof *from);
}

static void free_group(struct leak_group_view *g)
{
    for (size_t i = 0; i < g->nframes; i++)
        free(g->frames[i].function), free(g->frames[i].file);
    free(g->frames);
    free(g->kind);
    free(g->recent.kind), free(g->recent.function), free(g->recent.file);
    free(g->common.kind), free(g->common.function), free(g->common.file);
}

static void merge_into(struct leak_group_view *a, struct leak_group_view *b)
{
    a->score += b->score;
#define SUM(f) a->f += b->f
    SUM(objects); SUM(bytes); SUM(stale_objects); SUM(stale_bytes); SUM(unreachable_objects);
    SUM(unreachable_bytes); SUM(both_objects); SUM(both_bytes); SUM(live_objects); SUM(live_bytes);
    SUM(indirect_objects); SUM(indirect_bytes); SUM(never_accessed); SUM(site_allocs); SUM(site_frees); SUM(site_accesses_sampled);
#undef SUM
    a->idle_avg_ms = a->objects ? (a->idle_avg_ms * (a->objects - b->objects) + b->idle_avg_ms * b->objects) / a->objects : 0;
    if (b->age_max_ms > a->age_max_ms) a->age_max_ms = b->age_max_ms;
    if (b->age_min_ms < a->age_min_ms) a->age_min_ms = b->age_min_ms;
    if (b->idle_max_ms > a->idle_max_ms) a->idle_max_ms = b->idle_max_ms;
    if (b->idle_min_ms < a->idle_min_ms) a->idle_min_ms = b->idle_min_ms;
    if (b->snapshots_flagged > a->snapshots_flagged) a->snapshots_flagged = b->snapshots_flagged;
    merge_access(&a->recent, &b->recent, 1);
    merge_access(&a->common, &b->common, 0);
    a->merged += b->merged;
    a->unsampled = a->unsampled && b->unsampled;
    free(a->kind);
    a->kind = strdup(a->both_objects || (a->unreachable_objects && a->stale_objects) ? "both"
                     : a->unreachable_objects ? "unreachable" : "stale");
}

static int worse_first(const void *x, const void *y)
{
    const struct leak_group_view *a = x, *b = y;
    if (a->score != b->score)
        return a->score < b->score ? 1 : -1;
    return a->bytes < b->bytes ? 1 : a->bytes > b->bytes ? -1 : 0;
}

static int pattern_match(const char *pat, const char *s)
{
    if (!s || !s[0])
        return 0;
    if (strpbrk(pat, "*?["))
        return fnmatch(pat, s, 0) == 0;
    return strstr(s, pat) != NULL;
}

int leak_suppression_matches(const char *kind, const char *pat, const struct leak_group_view *g)
{
    int fun = strcmp(kind, "file") != 0, file = strcmp(kind, "function") != 0;
    for (size_t i = 0; i < g->nframes; i++)
        if ((fun && pattern_match(pat, g->frames[i].function)) || (file && pattern_match(pat, g->frames[i].file)))
            return 1;
    return 0;
}

int leak_suppressions_parse(const char *text, const char *name, char ***kinds, char ***pats,
                            size_t *n, char *err, size_t errlen)
{
    int lineno = 0, count = 0;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        lineno++;
        char buf[1024];
        if (len >= sizeof buf) {
            snprintf(err, errlen, "%s:%d: line too long", name, lineno);
            return -1;
        }
        memcpy(buf, line, len);
        buf[len] = 0;
        line = nl ? nl + 1 : NULL;
        char *s = buf;
        while (isspace((unsigned char)*s)) s++;
        char *e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
        if (!*s || *s == '#')
            continue;
        char *colon = strchr(s, ':');
        if (!colon || colon[1] == 0) {
            snprintf(err, errlen, "%s:%d: expected leak:PATTERN, function:PATTERN or file:PATTERN", name, lineno);
            return -1;
        }
        *colon = 0;
        if (strcmp(s, "leak") && strcmp(s, "function") && strcmp(s, "file")) {
            snprintf(err, errlen, "%s:%d: unknown suppression kind \"%s\" (leak, function, file)", name, lineno, s);
            return -1;
        }
        char **k = realloc(*kinds, (*n + 1) * sizeof *k);
        if (k) *kinds = k;
        char **p = realloc(*pats, (*n + 1) * sizeof *p);
        if (p) *pats = p;
        if (!k || !p) {
            snprintf(err, errlen, "%s: out of memory", name);
            return -1;
        }
        (*kinds)[*n] = strdup(s);
        (*pats)[*n] = strdup(colon + 1);
        (*n)++;
        count++;
    }
    return count;
}

/* Symbolize a stack's frames through its modules' debug info; a checking copy's call into its
 * outlined copy is one frame in the user's terms. */
static void symbolize_stack(const struct leak_report_view *r, struct vigil_symbolizer **syms, struct leak_group_view *g)
{
    struct vigil_source_location locs[VIGIL_MAX_INLINED];
    char outlined_in[256] = "";   /* the previous frame ran in this function's outlined copy */
    /* The frames as the user sees them: a return address in inlined code stands for the
     * inlined calls too, innermost first, each with its function, file and line. */
    struct leak_frame *shown = NULL;
    size_t nshown = 0, cap = 0;
    for (size_t k = 0; k < g->nframes; k++) {
        struct leak_frame *f = &g->frames[k];
        int n = 0;
        if (f->module >= 0 && (size_t)f->module < r->nmodules && syms[f->module])
            n = vigil_symbolize_inlined(syms[f->module], f->offset - 1, locs, VIGIL_MAX_INLINED);   /* -1: the call, not the return */
        if (n == 0) {
            outlined_in[0] = '\0';
            n = 1;   /* kept as it is: an address without a name */
            locs[0].function[0] = locs[0].file[0] = '\0';
            locs[0].line = locs[0].column = 0;
        } else if (locs[0].thunk || (outlined_in[0] && strcmp(locs[0].container, outlined_in) == 0 && !locs[0].outlined)) {
            /* The checking copy's call into its outlined copy: the same call of the
             * function, one frame in the user's terms (and one site, whichever copy ran). */
            if (!locs[0].thunk)   /* a thunk (seen in code without frame pointers) keeps the merge going */
                outlined_in[0] = '\0';
            free(f->function), free(f->file);
            continue;
        } else {
            snprintf(outlined_in, sizeof outlined_in, "%s", locs[0].outlined ? locs[0].container : "");
        }
        if (nshown + (size_t)n > cap) {
            cap = (nshown + (size_t)n) * 2;
            struct leak_frame *grown = realloc(shown, cap * sizeof *grown);
            if (!grown) {
                free(f->function), free(f->file);
                continue;
            }
            shown = grown;
        }
        for (int m = 0; m < n; m++) {
            struct leak_frame *to = &shown[nshown++];
            *to = *f;
            if (m == 0 && !locs[0].function[0] && !locs[0].file[0])
                break;   /* unknown: f's own strings stay */
            to->function = strdup(locs[m].function);
            to->file = strdup(locs[m].file);
            to->line = locs[m].line;
            to->column = locs[m].column;
            to->inlined = m + 1 < n;
        }
        if (locs[0].function[0] || locs[0].file[0])
            free(f->function), free(f->file);
    }
    free(g->frames);
    g->frames = shown;
    g->nframes = nshown;
}

static int larger_first(const void *a, const void *b)
{
    const struct leak_group_view *x = a, *y = b;
    return x->live_bytes != y->live_bytes ? (x->live_bytes < y->live_bytes ? 1 : -1) : 0;
}

int leak_report_prepare(struct leak_report_view *r, const char *suppress_path, char *err, size_t errlen)
{
    /* Symbolize every frame through its module's debug info. */
    struct vigil_symbolizer **syms = calloc(r->nmodules ? r->nmodules : 1, sizeof *syms);
    for (size_t m = 0; m < r->nmodules; m++) {
        char serr[512];
        syms[m] = vigil_symbolizer_open(r->modules[m].path, serr, sizeof serr);
        if (!syms[m])
            r->modules[m].problem = strdup(serr);
        struct vigil_elf_sites es;
        char eerr[512];
        if (vigil_elf_sites_load(r->modules[m].path, &es, eerr, sizeof eerr) == 0) {
            r->modules[m].instrumented = es.ntables > 0;
            vigil_elf_sites_free(&es);
        }
    }
    for (size_t i = 0; i < r->ngroups; i++) {
        struct leak_group_view *g = &r->groups[i];
        symbolize_stack(r, syms, g);
        int f0 = g->nframes ? g->frames[0].module : -1;
        g->unsampled = strcmp(g->kind, "stale") == 0 &&
                       (f0 < 0 || (size_t)f0 >= r->nmodules || !r->modules[f0].instrumented);
    }
    for (size_t i = 0; i < r->nin_use; i++)
        symbolize_stack(r, syms, &r->in_use[i]);
    for (size_t m = 0; m < r->nmodules; m++)
        if (syms[m])
            vigil_symbolizer_close(syms[m]);
    free(syms);

    /* In use: sites with the same source stack are one (both copies of a function). */
    size_t kept = 0;
    for (size_t i = 0; i < r->nin_use; i++) {
        size_t k = 0;
        while (k < kept && !same_stack(&r->in_use[k], &r->in_use[i]))
            k++;
        if (k < kept) {
            r->in_use[k].live_objects += r->in_use[i].live_objects;
            r->in_use[k].live_bytes += r->in_use[i].live_bytes;
            r->in_use[k].site_allocs += r->in_use[i].site_allocs;
            r->in_use[k].site_frees += r->in_use[i].site_frees;
            free_group(&r->in_use[i]);
        } else {
            r->in_use[kept++] = r->in_use[i];
        }
    }
    /* Every site was listed: count them as merged. */
    if (r->in_use_sites <= r->nin_use)
        r->in_use_sites = kept;
    r->nin_use = kept;
    qsort(r->in_use, r->nin_use, sizeof *r->in_use, larger_first);

    /* Merge groups with the same source stack (dual copies call malloc from two PCs). */
    size_t out = 0;
    for (size_t i = 0; i < r->ngroups; i++) {
        size_t k = 0;
        while (k < out && !same_stack(&r->groups[k], &r->groups[i]))
            k++;
        if (k < out) {
            merge_into(&r->groups[k], &r->groups[i]);
            free_group(&r->groups[i]);
        } else {
            r->groups[out++] = r->groups[i];
        }
    }
    r->ngroups = out;
    qsort(r->groups, r->ngroups, sizeof *r->groups, worse_first);

    /* Coverage: the rate of the functions holding the last accesses. */
    struct vigil_sitemap map;
    if (r->have_run && vigil_sitemap_build(&r->run, &map) == 0) {
        for (size_t i = 0; i < r->ngroups; i++) {
            if (r->groups[i].recent.present)
                r->groups[i].recent.rate = function_rate(r, &map, r->groups[i].recent.site);
            if (r->groups[i].common.present)
                r->groups[i].common.rate = function_rate(r, &map, r->groups[i].common.site);
        }
        vigil_sitemap_free(&map);
    }

    if (!suppress_path)
        return 0;
    FILE *f = fopen(suppress_path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", suppress_path, strerror(errno));
        return -1;
    }
    char *text = calloc(1, 1 << 20);
    size_t len = text ? fread(text, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    text[len] = 0;
    char **kinds = NULL, **pats = NULL;
    size_t n = 0;
    int rc = leak_suppressions_parse(text, suppress_path, &kinds, &pats, &n, err, errlen);
    free(text);
    for (size_t i = 0; rc >= 0 && i < r->ngroups; i++)
        for (size_t k = 0; k < n && !r->groups[i].suppressed_by; k++)
            if (leak_suppression_matches(kinds[k], pats[k], &r->groups[i])) {
                size_t need = strlen(kinds[k]) + strlen(pats[k]) + 2;
                r->groups[i].suppressed_by = malloc(need);
                if (r->groups[i].suppressed_by)
                    snprintf(r->groups[i].suppressed_by, need, "%s:%s", kinds[k], pats[k]);
            }
    for (size_t k = 0; k < n; k++)
        free(kinds[k]), free(pats[k]);
    free(kinds);
    free(pats);
    return rc < 0 ? -1 : 0;
}

int leak_report_stacks_shallow(const struct leak_report_view *r)
{
    if (r->depth <= 1 || r->ngroups == 0)
        return 0;
    for (size_t i = 0; i < r->ngroups; i++)
        if (r->groups[i].nframes > 1)
            return 0;
    return 1;
}

void leak_report_free(struct leak_report_view *r)
{
    for (size_t i = 0; i < r->ngroups; i++) {
        free_group(&r->groups[i]);
        free(r->groups[i].suppressed_by);
    }
    free(r->groups);
    for (size_t i = 0; i < r->nin_use; i++)
        free_group(&r->in_use[i]);
    free(r->in_use);
    for (size_t i = 0; i < r->nmodules; i++)
        free(r->modules[i].path), free(r->modules[i].problem);
    free(r->modules);
    for (size_t i = 0; i < r->nsnapshots; i++)
        free(r->snapshots[i].reason);
    free(r->snapshots);
    free(r->reach_method);
    free(r->reach_error);
    free(r->dir);
    if (r->have_run)
        vigil_run_report_free(&r->run);
    memset(r, 0, sizeof *r);
}
