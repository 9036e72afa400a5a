/* See profile.h. */
#include "profile.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "jsontree.h"
#include "json.h"

/* ---- hotspot.json ---- */

struct parse {
    const char *name;
    char *err;
    size_t errlen;
};

static int bad(struct parse *ps, const struct vigil_jv *at, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(ps->err, ps->errlen, "%s:%d: expected %s", ps->name, at ? at->line : 1, what);
    return -1;
}

/* A non-negative integer that a double holds exactly. */
static int is_uint(const struct vigil_jv *v)
{
    return v && v->type == VIGIL_JV_NUMBER && v->number >= 0 && v->number <= 9007199254740992.0 &&
           v->number == (double)(uint64_t)v->number;
}

static int get_uint(struct parse *ps, const struct vigil_jv *o, const char *key, uint64_t *out)
{
    const struct vigil_jv *v = vigil_jv_get(o, key);
    if (!is_uint(v))
        return bad(ps, v ? v : o, "\"%s\": a non-negative integer", key);
    *out = (uint64_t)v->number;
    return 0;
}

/* An optional integer: *out keeps its value when key is absent. */
static int get_uint_opt(struct parse *ps, const struct vigil_jv *o, const char *key, uint64_t *out)
{
    return vigil_jv_get(o, key) ? get_uint(ps, o, key, out) : 0;
}

static int get_string(struct parse *ps, const struct vigil_jv *o, const char *key, char **out)
{
    const struct vigil_jv *v = vigil_jv_get(o, key);
    if (!v || v->type != VIGIL_JV_STRING)
        return bad(ps, v ? v : o, "\"%s\": a string", key);
    *out = strdup(v->string);
    return *out ? 0 : bad(ps, v, "less data (out of memory)");
}

static const struct vigil_jv *get_array(struct parse *ps, const struct vigil_jv *o, const char *key)
{
    const struct vigil_jv *v = vigil_jv_get(o, key);
    if (!v || v->type != VIGIL_JV_ARRAY) {
        bad(ps, v ? v : o, "\"%s\": an array", key);
        return NULL;
    }
    return v;
}

/* "0x1a2b" (at most 16 hex digits). */
static int parse_hex(const struct vigil_jv *v, uint64_t *out)
{
    if (!v || v->type != VIGIL_JV_STRING || v->string[0] != '0' || v->string[1] != 'x' || !v->string[2])
        return -1;
    uint64_t x = 0;
    size_t n = 0;
    for (const char *s = v->string + 2; *s; s++, n++) {
        int h = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
        if (h < 0 || n >= 16)
            return -1;
        x = x << 4 | (uint64_t)h;
    }
    *out = x;
    return 0;
}

static void *alloc_array(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

/* An index into a table of n entries, or -1 (none): a whole number in [-1, n). */
static int is_index_or_none(const struct vigil_jv *v, size_t n)
{
    return v->type == VIGIL_JV_NUMBER && v->number >= -1 && v->number < (double)n &&
           v->number == (double)(int64_t)v->number;
}

static int parse_frame(struct parse *ps, const struct vigil_jv *f, const struct hs_profile *p, struct hs_frame *out)
{
    const struct vigil_jv *m = f && f->type == VIGIL_JV_ARRAY && f->n == 2 ? &f->items[0] : NULL;
    if (!m || !is_index_or_none(m, p->nmodules) || parse_hex(&f->items[1], &out->address) != 0)
        return bad(ps, f, "a frame [MODULE, \"0xADDRESS\"] (MODULE -1 or one of the %zu modules)", p->nmodules);
    out->module = (int)m->number;
    return 0;
}

static int parse_stacks(struct parse *ps, const struct vigil_jv *arr, struct hs_profile *p)
{
    p->stacks = alloc_array(arr->n, sizeof *p->stacks);
    if (!p->stacks)
        return bad(ps, arr, "less data (out of memory)");
    for (size_t i = 0; i < arr->n; i++) {
        const struct vigil_jv *s = &arr->items[i];
        struct hs_pstack *st = &p->stacks[i];
        if (s->type != VIGIL_JV_OBJECT)
            return bad(ps, s, "a stack (an object)");
        const struct vigil_jv *frames = get_array(ps, s, "frames");
        if (get_uint(ps, s, "count", &st->count) != 0 || !frames)
            return -1;
        st->frames = alloc_array(frames->n, sizeof *st->frames);
        if (!st->frames)
            return bad(ps, frames, "less data (out of memory)");
        p->nstacks++;   /* from here on, hs_profile_free frees its frames */
        for (size_t k = 0; k < frames->n; k++, st->nframes++)
            if (parse_frame(ps, &frames->items[k], p, &st->frames[k]) != 0)
                return -1;
    }
    return 0;
}

static int parse_threads(struct parse *ps, const struct vigil_jv *arr, struct hs_profile *p)
{
    p->threads = alloc_array(arr->n, sizeof *p->threads);
    if (!p->threads)
        return bad(ps, arr, "less data (out of memory)");
    for (size_t i = 0; i < arr->n; i++) {
        const struct vigil_jv *t = &arr->items[i];
        struct hs_pthread *th = &p->threads[i];
        if (t->type != VIGIL_JV_OBJECT)
            return bad(ps, t, "a thread (an object)");
        const struct vigil_jv *runs = get_array(ps, t, "runs");
        if (get_uint(ps, t, "index", &th->index) != 0 || get_uint(ps, t, "tid", &th->tid) != 0 ||
            get_uint(ps, t, "samples", &th->samples) != 0 ||
            get_uint(ps, t, "timeline_dropped", &th->timeline_dropped) != 0 || !runs)
            return -1;
        th->runs = alloc_array(runs->n, sizeof *th->runs);
        if (!th->runs)
            return bad(ps, runs, "less data (out of memory)");
        p->nthreads++;
        uint64_t prev = 0;
        for (size_t k = 0; k < runs->n; k++, th->nruns++) {
            const struct vigil_jv *r = &runs->items[k];
            const struct vigil_jv *sv = r->type == VIGIL_JV_ARRAY && (r->n == 4 || r->n == 5) ? &r->items[2] : NULL;
            if (!sv || !is_uint(&r->items[0]) || !is_uint(&r->items[1]) || !is_uint(&r->items[3]) ||
                (r->n == 5 && (!is_uint(&r->items[4]) || r->items[4].number < 1)) ||
                !is_index_or_none(sv, p->nstacks))
                return bad(ps, r, "a run [FIRST_US, LAST_US, STACK, SAMPLES] or [..., PERIOD_US] (STACK -1 or one "
                           "of the %zu stacks)", p->nstacks);
            struct hs_run *run = &th->runs[k];
            run->first_us = (uint64_t)r->items[0].number;
            run->last_us = (uint64_t)r->items[1].number;
            run->stack = (int64_t)sv->number;
            run->samples = (uint64_t)r->items[3].number;
            run->period_us = r->n == 5 ? (uint64_t)r->items[4].number : p->period_us;
            if (run->last_us < run->first_us || run->first_us < prev || run->samples == 0)
                return bad(ps, r, "runs in time order, each of at least one sample, its last after its first");
            prev = run->last_us;
        }
    }
    return 0;
}


static int parse_level(struct parse *ps, const struct vigil_jv *o, const struct hs_profile *p, struct hs_plevel *l)
{
    if (o->type != VIGIL_JV_OBJECT)
        return bad(ps, o, "a level (an object)");
    const struct vigil_jv *callers = get_array(ps, o, "callers");
    if (!callers || parse_frame(ps, vigil_jv_get(o, "function"), p, &l->function) != 0 ||
        get_uint(ps, o, "id", &l->id) != 0 || get_uint(ps, o, "calls", &l->calls) != 0 ||
        get_uint(ps, o, "measured", &l->measured) != 0 || get_uint(ps, o, "wall_ns", &l->wall_ns) != 0 ||
        get_uint(ps, o, "wall_max_ns", &l->wall_max_ns) != 0 || get_uint(ps, o, "cycles", &l->cycles) != 0 ||
        get_uint(ps, o, "recursive", &l->recursive) != 0 || get_uint(ps, o, "tail", &l->tail) != 0 ||
        get_uint(ps, o, "unmeasured", &l->unmeasured) != 0 || get_uint(ps, o, "callers_other", &l->callers_other) != 0)
        return -1;
    l->callers = alloc_array(callers->n, sizeof *l->callers);
    if (!l->callers)
        return bad(ps, callers, "less data (out of memory)");
    for (size_t i = 0; i < callers->n; i++, l->ncallers++) {
        const struct vigil_jv *c = &callers->items[i];
        if (c->type != VIGIL_JV_ARRAY || c->n != 2 || !is_uint(&c->items[1]))
            return bad(ps, c, "a caller [FRAME, COUNT]");
        if (parse_frame(ps, &c->items[0], p, &l->callers[i].site) != 0)
            return -1;
        l->callers[i].count = (uint64_t)c->items[1].number;
    }
    return 0;
}

static int parse_walk(struct parse *ps, const struct vigil_jv *w, struct hs_profile *p)
{
    const struct vigil_jv *walks, *traces;
    if (w->type != VIGIL_JV_OBJECT)
        return bad(ps, w, "\"walk\": an object");
    if (get_string(ps, w, "instructions", &p->instructions) != 0 ||
        get_string(ps, w, "refused_why", &p->walk_refused_why) != 0 || get_uint(ps, w, "calls", &p->walk_calls) != 0 ||
        get_uint(ps, w, "hooked", &p->walk_hooked) != 0 || get_uint(ps, w, "refused", &p->walk_refused) != 0 ||
        get_uint(ps, w, "entries", &p->walk_entries) != 0 || !(walks = get_array(ps, w, "walks")) ||
        !(traces = get_array(ps, w, "trace")))
        return -1;
    p->has_walk = 1;
    p->walks = alloc_array(walks->n, sizeof *p->walks);
    p->traces = alloc_array(traces->n, sizeof *p->traces);
    if (!p->walks || !p->traces)
        return bad(ps, w, "less data (out of memory)");
    for (size_t i = 0; i < walks->n; i++) {
        const struct vigil_jv *o = &walks->items[i], *levels;
        struct hs_pwalk *wk = &p->walks[i];
        if (o->type != VIGIL_JV_OBJECT)
            return bad(ps, o, "a walk (an object)");
        p->nwalks++;
        if (parse_frame(ps, vigil_jv_get(o, "hot"), p, &wk->hot) != 0 ||
            get_uint(ps, o, "hot_samples", &wk->hot_samples) != 0 ||
            get_uint(ps, o, "total_samples", &wk->total_samples) != 0 || get_string(ps, o, "end", &wk->end) != 0 ||
            !(levels = get_array(ps, o, "levels")))
            return -1;
        wk->levels = alloc_array(levels->n, sizeof *wk->levels);
        if (!wk->levels)
            return bad(ps, levels, "less data (out of memory)");
        for (size_t k = 0; k < levels->n; k++) {
            wk->nlevels++;
            if (parse_level(ps, &levels->items[k], p, &wk->levels[k]) != 0)
                return -1;
        }
    }
    for (size_t i = 0; i < traces->n; i++) {
        const struct vigil_jv *o = &traces->items[i], *events;
        struct hs_ptrace *t = &p->traces[i];
        if (o->type != VIGIL_JV_OBJECT)
            return bad(ps, o, "a thread's measured calls (an object)");
        p->ntraces++;
        if (get_uint(ps, o, "tid", &t->tid) != 0 || get_uint(ps, o, "lost", &t->lost) != 0 ||
            !(events = get_array(ps, o, "events")))
            return -1;
        t->events = alloc_array(events->n, sizeof *t->events);
        if (!t->events)
            return bad(ps, events, "less data (out of memory)");
        for (size_t k = 0; k < events->n; k++, t->nevents++) {
            const struct vigil_jv *e = &events->items[k];
            if (e->type != VIGIL_JV_ARRAY || e->n != 3 || !is_uint(&e->items[0]) || !is_uint(&e->items[1]) ||
                !is_uint(&e->items[2]))
                return bad(ps, e, "a measured call [START_NS, DURATION_NS, LEVEL]");
            t->events[k] = (struct hs_pevent){(uint64_t)e->items[0].number, (uint64_t)e->items[1].number,
                                              (uint64_t)e->items[2].number};
        }
    }
    return 0;
}

int hs_profile_parse(const char *text, size_t len, const char *name, struct hs_profile *p, char *err,
                     size_t errlen)
{
    memset(p, 0, sizeof *p);
    struct parse ps = {name, err, errlen};
    struct vigil_jv doc;
    char jerr[160];
    if (vigil_jv_parse(text, len, &doc, jerr, sizeof jerr) != 0) {
        snprintf(err, errlen, "%s:%s", name, jerr);
        return -1;
    }
    int rc = -1;
    const struct vigil_jv *fmt = vigil_jv_get(&doc, "format"), *dropped, *threads, *modules, *stacks, *list;
    uint64_t version;
    if (doc.type != VIGIL_JV_OBJECT) {
        bad(&ps, &doc, "an object");
    } else if (!fmt || fmt->type != VIGIL_JV_STRING || strcmp(fmt->string, "vigil-hotspot") != 0) {
        bad(&ps, fmt ? fmt : &doc, "\"format\": \"vigil-hotspot\"");
    } else if (get_uint(&ps, &doc, "version", &version) != 0) {
    } else if (version != 1) {
        bad(&ps, vigil_jv_get(&doc, "version"), "\"version\": 1 (this vigil reads version 1)");
    } else if (get_string(&ps, &doc, "method", &p->method) != 0 || get_string(&ps, &doc, "note", &p->note) != 0 ||
               get_uint(&ps, &doc, "signal", &p->signal) != 0 || get_uint(&ps, &doc, "period_us", &p->period_us) != 0 ||
               get_uint(&ps, &doc, "depth", &p->depth) != 0 || get_uint(&ps, &doc, "max_stacks", &p->max_stacks) != 0 ||
               get_uint(&ps, &doc, "delay_ms", &p->delay_ms) != 0 ||
               get_uint(&ps, &doc, "duration_us", &p->duration_us) != 0 ||
               get_uint(&ps, &doc, "samples", &p->samples) != 0 ||
               (p->late_period_us = p->period_us, p->late_after = 0, p->signals = p->samples,
                get_uint_opt(&ps, &doc, "late_period_us", &p->late_period_us) != 0) ||
               get_uint_opt(&ps, &doc, "late_after", &p->late_after) != 0 ||
               get_uint_opt(&ps, &doc, "signals", &p->signals) != 0) {
    } else if (strcmp(p->method, "perf") != 0 && strcmp(p->method, "timer") != 0 && strcmp(p->method, "none") != 0) {
        bad(&ps, vigil_jv_get(&doc, "method"), "\"method\": \"perf\", \"timer\" or \"none\"");
    } else if (p->period_us == 0) {
        bad(&ps, vigil_jv_get(&doc, "period_us"), "\"period_us\": a period of at least 1");
    } else if (!vigil_jv_get(&doc, "stepped_back") || vigil_jv_get(&doc, "stepped_back")->type != VIGIL_JV_BOOL) {
        bad(&ps, &doc, "\"stepped_back\": true or false");
    } else if (!(dropped = vigil_jv_get(&doc, "dropped")) || dropped->type != VIGIL_JV_OBJECT) {
        bad(&ps, dropped ? dropped : &doc, "\"dropped\": an object");
    } else if (get_uint(&ps, dropped, "table_full", &p->dropped_full) != 0 ||
               get_uint(&ps, dropped, "busy", &p->dropped_busy) != 0 ||
               get_uint(&ps, dropped, "untracked_thread", &p->dropped_untracked) != 0) {
    } else if (!(threads = vigil_jv_get(&doc, "threads")) || threads->type != VIGIL_JV_OBJECT) {
        bad(&ps, threads ? threads : &doc, "\"threads\": an object");
    } else if (get_uint(&ps, threads, "sampled", &p->threads_sampled) != 0 ||
               get_uint(&ps, threads, "blocked", &p->threads_blocked) != 0 ||
               get_uint(&ps, threads, "failed", &p->threads_failed) != 0 ||
               get_uint(&ps, threads, "timer_fallback", &p->threads_fallback) != 0 ||
               get_uint(&ps, threads, "rearm_failed", &p->rearm_failed) != 0) {
    } else if (!(modules = get_array(&ps, &doc, "modules")) || !(stacks = get_array(&ps, &doc, "stacks")) ||
               !(list = get_array(&ps, &doc, "thread_list"))) {
    } else {
        p->stepped_back = vigil_jv_get(&doc, "stepped_back")->number != 0;
        p->modules = alloc_array(modules->n, sizeof *p->modules);
        rc = p->modules ? 0 : bad(&ps, modules, "less data (out of memory)");
        for (size_t i = 0; rc == 0 && i < modules->n; i++) {
            const struct vigil_jv *m = &modules->items[i];
            if (m->type != VIGIL_JV_OBJECT)
                rc = bad(&ps, m, "a module (an object)");
            else if (get_string(&ps, m, "path", &p->modules[i].path) != 0)
                rc = -1;
            else if (p->nmodules++, parse_hex(vigil_jv_get(m, "bias"), &p->modules[i].bias) != 0)
                rc = bad(&ps, vigil_jv_get(m, "bias") ? vigil_jv_get(m, "bias") : m, "\"bias\": \"0xHEX\"");
        }
        if (rc == 0)
            rc = parse_stacks(&ps, stacks, p);
        if (rc == 0)
            rc = parse_threads(&ps, list, p);
        if (rc == 0 && vigil_jv_get(&doc, "walk"))
            rc = parse_walk(&ps, vigil_jv_get(&doc, "walk"), p);
    }
    vigil_jv_free(&doc);
    if (rc != 0)
        hs_profile_free(p);
    return rc;
}

void hs_profile_free(struct hs_profile *p)
{
    free(p->method);
    free(p->note);
    for (size_t i = 0; i < p->nmodules; i++)
        free(p->modules[i].path);
    free(p->modules);
    for (size_t i = 0; i < p->nstacks; i++)
        free(p->stacks[i].frames);
    free(p->stacks);
    for (size_t i = 0; i < p->nthreads; i++)
        free(p->threads[i].runs);
    free(p->threads);
    free(p->instructions);
    free(p->walk_refused_why);
    for (size_t i = 0; i < p->nwalks; i++) {
        free(p->walks[i].end);
        for (size_t k = 0; k < p->walks[i].nlevels; k++)
            free(p->walks[i].levels[k].callers);
        free(p->walks[i].levels);
    }
    free(p->walks);
    for (size_t i = 0; i < p->ntraces; i++)
        free(p->traces[i].events);
    free(p->traces);
    memset(p, 0, sizeof *p);
}

/* ---- named stacks ---- */

/* Lookups by (name, file) and by function list: open addressing over indices + 1. */
struct index {
    size_t *funcs, fmask;
    size_t *stacks, smask;
};

static uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *s = data;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t func_hash(const char *name, const char *file)
{
    uint64_t h = hash_bytes(0xcbf29ce484222325ull, name, strlen(name) + 1);
    return hash_bytes(h, file, strlen(file));
}

static uint64_t stack_hash(const uint32_t *funcs, size_t n)
{
    return hash_bytes(0xcbf29ce484222325ull ^ n, funcs, n * sizeof *funcs);
}

void hs_view_init(struct hs_view *v)
{
    memset(v, 0, sizeof *v);
}

void hs_view_free(struct hs_view *v)
{
    for (size_t i = 0; i < v->nfuncs; i++) {
        free(v->funcs[i].name);
        free(v->funcs[i].file);
    }
    free(v->funcs);
    for (size_t i = 0; i < v->nstacks; i++)
        free(v->stacks[i].funcs);
    free(v->stacks);
    free(v->of_profile);
    free(v->level_funcs);
    struct index *ix = v->index;
    if (ix) {
        free(ix->funcs);
        free(ix->stacks);
        free(ix);
    }
    memset(v, 0, sizeof *v);
}

static struct index *index_of(struct hs_view *v)
{
    if (!v->index)
        v->index = calloc(1, sizeof(struct index));
    return v->index;
}

/* Make room for one more entry in a table of n entries (load at most one half); rehash. */
static int index_room(size_t **table, size_t *mask, size_t n, uint64_t (*hash)(const struct hs_view *, size_t),
                      const struct hs_view *v)
{
    if (*table && 2 * (n + 1) <= *mask + 1)
        return 0;
    size_t cap = *table ? (*mask + 1) * 2 : 64;
    size_t *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < n; i++)
        for (size_t h = (size_t)hash(v, i);; h++)
            if (!t[h & (cap - 1)]) {
                t[h & (cap - 1)] = i + 1;
                break;
            }
    free(*table);
    *table = t;
    *mask = cap - 1;
    return 0;
}

static uint64_t func_hash_at(const struct hs_view *v, size_t i)
{
    return func_hash(v->funcs[i].name, v->funcs[i].file);
}

static uint64_t stack_hash_at(const struct hs_view *v, size_t i)
{
    return stack_hash(v->stacks[i].funcs, v->stacks[i].n);
}

size_t hs_view_func(struct hs_view *v, const char *name, const char *file, int line)
{
    struct index *ix = index_of(v);
    if (!ix || index_room(&ix->funcs, &ix->fmask, v->nfuncs, func_hash_at, v) != 0)
        return SIZE_MAX;
    size_t h = (size_t)func_hash(name, file);
    for (;; h++) {
        size_t *slot = &ix->funcs[h & ix->fmask];
        if (!*slot)
            break;
        struct hs_func *f = &v->funcs[*slot - 1];
        if (strcmp(f->name, name) == 0 && strcmp(f->file, file) == 0) {
            if (!f->line && line > 0)
                f->line = line;
            return *slot - 1;
        }
    }
    if (v->nfuncs == v->funcs_cap) {
        size_t cap = v->funcs_cap ? v->funcs_cap * 2 : 64;
        struct hs_func *grown = realloc(v->funcs, cap * sizeof *grown);
        if (!grown)
            return SIZE_MAX;
        v->funcs = grown;
        v->funcs_cap = cap;
    }
    struct hs_func *f = &v->funcs[v->nfuncs];
    f->name = strdup(name);
    f->file = strdup(file);
    f->line = line > 0 ? line : 0;
    f->self = f->total = 0;
    if (!f->name || !f->file) {
        free(f->name);
        free(f->file);
        return SIZE_MAX;
    }
    ix->funcs[h & ix->fmask] = ++v->nfuncs;
    return v->nfuncs - 1;
}

int hs_view_add_stack(struct hs_view *v, size_t pstack, const uint32_t *funcs, size_t n, uint64_t count)
{
    struct index *ix = index_of(v);
    if (!ix || index_room(&ix->stacks, &ix->smask, v->nstacks, stack_hash_at, v) != 0)
        return -1;
    if (pstack != SIZE_MAX && pstack >= v->nof_profile) {
        size_t cap = pstack + 1 > 2 * v->nof_profile ? pstack + 1 : 2 * v->nof_profile;
        size_t *grown = realloc(v->of_profile, cap * sizeof *grown);
        if (!grown)
            return -1;
        for (size_t i = v->nof_profile; i < cap; i++)
            grown[i] = SIZE_MAX;
        v->of_profile = grown;
        v->nof_profile = cap;
    }
    size_t h = (size_t)stack_hash(funcs, n), at = SIZE_MAX;
    for (;; h++) {
        size_t *slot = &ix->stacks[h & ix->smask];
        if (!*slot)
            break;
        struct hs_vstack *s = &v->stacks[*slot - 1];
        if (s->n == n && (n == 0 || memcmp(s->funcs, funcs, n * sizeof *funcs) == 0)) {
            at = *slot - 1;
            break;
        }
    }
    if (at == SIZE_MAX) {
        if (v->nstacks == v->stacks_cap) {
            size_t cap = v->stacks_cap ? v->stacks_cap * 2 : 64;
            struct hs_vstack *grown = realloc(v->stacks, cap * sizeof *grown);
            if (!grown)
                return -1;
            v->stacks = grown;
            v->stacks_cap = cap;
        }
        struct hs_vstack *s = &v->stacks[v->nstacks];
        s->count = 0;
        s->n = n;
        s->funcs = malloc(n ? n * sizeof *funcs : 1);
        if (!s->funcs)
            return -1;
        if (n)
            memcpy(s->funcs, funcs, n * sizeof *funcs);
        at = v->nstacks;
        ix->stacks[h & ix->smask] = ++v->nstacks;
    }
    v->stacks[at].count += count;
    v->samples += count;
    if (pstack != SIZE_MAX)
        v->of_profile[pstack] = at;
    return 0;
}

/* For sorting: the view being sorted (qsort has no argument). */
static const struct hs_view *sorting;

static int stack_order(const void *x, const void *y)
{
    const struct hs_vstack *a = &sorting->stacks[*(const size_t *)x], *b = &sorting->stacks[*(const size_t *)y];
    if (a->count != b->count)
        return a->count < b->count ? 1 : -1;
    for (size_t i = 0; i < a->n && i < b->n; i++) {
        int c = strcmp(sorting->funcs[a->funcs[i]].name, sorting->funcs[b->funcs[i]].name);
        if (c)
            return c;
    }
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    return *(const size_t *)x < *(const size_t *)y ? -1 : *(const size_t *)x > *(const size_t *)y;
}

void hs_view_finish(struct hs_view *v)
{
    for (size_t i = 0; i < v->nfuncs; i++)
        v->funcs[i].self = v->funcs[i].total = 0;
    unsigned char *seen = calloc(v->nfuncs ? v->nfuncs : 1, 1);
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct hs_vstack *s = &v->stacks[i];
        if (!s->n)
            continue;
        v->funcs[s->funcs[s->n - 1]].self += s->count;
        for (size_t k = 0; k < s->n; k++) {
            uint32_t f = s->funcs[k];
            if (seen && seen[f])
                continue;
            if (seen)
                seen[f] = 1;
            v->funcs[f].total += s->count;
        }
        for (size_t k = 0; seen && k < s->n; k++)
            seen[s->funcs[k]] = 0;
    }
    free(seen);
    /* Sort the stacks; of_profile and the index follow them to their new places. */
    size_t n = v->nstacks ? v->nstacks : 1;
    size_t *perm = malloc(n * sizeof *perm), *place = malloc(n * sizeof *place);
    struct hs_vstack *sorted = malloc(n * sizeof *sorted);
    if (perm && place && sorted) {
        for (size_t i = 0; i < v->nstacks; i++)
            perm[i] = i;
        sorting = v;
        qsort(perm, v->nstacks, sizeof *perm, stack_order);
        for (size_t k = 0; k < v->nstacks; k++) {
            sorted[k] = v->stacks[perm[k]];
            place[perm[k]] = k;
        }
        memcpy(v->stacks, sorted, v->nstacks * sizeof *sorted);
        for (size_t i = 0; i < v->nof_profile; i++)
            if (v->of_profile[i] != SIZE_MAX)
                v->of_profile[i] = place[v->of_profile[i]];
        struct index *ix = v->index;
        if (ix && ix->stacks) {
            memset(ix->stacks, 0, (ix->smask + 1) * sizeof *ix->stacks);
            for (size_t i = 0; i < v->nstacks; i++)
                for (size_t h = (size_t)stack_hash_at(v, i);; h++)
                    if (!ix->stacks[h & ix->smask]) {
                        ix->stacks[h & ix->smask] = i + 1;
                        break;
                    }
        }
    }
    free(perm);
    free(place);
    free(sorted);
}

static int by_total_flag;

static int func_order(const void *x, const void *y)
{
    const struct hs_func *a = &sorting->funcs[*(const size_t *)x], *b = &sorting->funcs[*(const size_t *)y];
    uint64_t ka = by_total_flag ? a->total : a->self, kb = by_total_flag ? b->total : b->self;
    if (ka != kb)
        return ka < kb ? 1 : -1;
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->file, b->file);
}

size_t *hs_view_ranking(const struct hs_view *v, int by_total)
{
    size_t *r = malloc((v->nfuncs ? v->nfuncs : 1) * sizeof *r);
    if (!r)
        return NULL;
    for (size_t i = 0; i < v->nfuncs; i++)
        r[i] = i;
    sorting = v;
    by_total_flag = by_total;
    qsort(r, v->nfuncs, sizeof *r, func_order);
    return r;
}

static void put_folded_name(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(*s == ';' || *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' ? '_' : *s, out);
}

void hs_view_write_folded(const struct hs_view *v, FILE *out)
{
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct hs_vstack *s = &v->stacks[i];
        if (!s->n || !s->count)
            continue;
        for (size_t k = 0; k < s->n; k++) {
            if (k)
                fputc(';', out);
            put_folded_name(out, v->funcs[s->funcs[k]].name);
        }
        fprintf(out, " %llu\n", (unsigned long long)s->count);
    }
}

/* ---- Chrome trace events ---- */

struct open_frame {
    uint32_t func;
    uint64_t start, samples;
};

static void put_event(struct vigil_json *j, const struct hs_view *v, const struct open_frame *f, uint64_t end,
                      uint64_t tid, int64_t pid)
{
    const struct hs_func *fn = &v->funcs[f->func];
    vigil_json_object_begin(j);
    vigil_json_key(j, "name");
    vigil_json_string(j, fn->name);
    vigil_json_key(j, "cat");
    vigil_json_string(j, "hotspot");
    vigil_json_key(j, "ph");
    vigil_json_string(j, "X");
    vigil_json_key(j, "ts");
    vigil_json_uint(j, f->start);
    vigil_json_key(j, "dur");
    vigil_json_uint(j, end - f->start);
    vigil_json_key(j, "pid");
    vigil_json_int(j, pid);
    vigil_json_key(j, "tid");
    vigil_json_uint(j, tid);
    vigil_json_key(j, "args");
    vigil_json_object_begin(j);
    vigil_json_key(j, "samples");
    vigil_json_uint(j, f->samples);
    if (fn->file[0]) {
        char where[1100];
        snprintf(where, sizeof where, "%s:%d", fn->file, fn->line);
        vigil_json_key(j, "location");
        vigil_json_string(j, where);
    }
    vigil_json_object_end(j);
    vigil_json_object_end(j);
}

static void put_metadata(struct vigil_json *j, const char *what, int64_t pid, uint64_t tid, const char *name)
{
    vigil_json_object_begin(j);
    vigil_json_key(j, "name");
    vigil_json_string(j, what);
    vigil_json_key(j, "ph");
    vigil_json_string(j, "M");
    vigil_json_key(j, "pid");
    vigil_json_int(j, pid);
    vigil_json_key(j, "tid");
    vigil_json_uint(j, tid);
    vigil_json_key(j, "args");
    vigil_json_object_begin(j);
    vigil_json_key(j, "name");
    vigil_json_string(j, name);
    vigil_json_object_end(j);
    vigil_json_object_end(j);
}

void hs_view_write_trace(struct hs_view *v, const struct hs_profile *p, FILE *out, int64_t pid,
                         const char *program)
{
    struct vigil_json j;
    vigil_json_init(&j, out, 0);
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "displayTimeUnit");
    vigil_json_string(&j, "ms");
    vigil_json_key(&j, "otherData");
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "producer");
    vigil_json_string(&j, "vigil hot --trace");
    vigil_json_key(&j, "method");
    vigil_json_string(&j, p->method ? p->method : "");
    vigil_json_key(&j, "period_us");
    vigil_json_uint(&j, p->period_us);
    vigil_json_object_end(&j);
    vigil_json_key(&j, "traceEvents");
    vigil_json_array_begin(&j);
    put_metadata(&j, "process_name", pid, 0, program ? program : "program");
    uint32_t unknown = 0;
    int have_unknown = 0;
    size_t cap = 16;
    struct open_frame *open = malloc(cap * sizeof *open);
    for (size_t t = 0; open && t < p->nthreads; t++) {
        const struct hs_pthread *th = &p->threads[t];
        uint64_t tid = th->tid ? th->tid : th->index + 1;
        char tname[64];
        snprintf(tname, sizeof tname, "thread %llu (tid %llu)", (unsigned long long)th->index,
                 (unsigned long long)th->tid);
        put_metadata(&j, "thread_name", pid, tid, tname);
        size_t depth = 0;
        uint64_t prev_end = 0;
        for (size_t r = 0; r < th->nruns; r++) {
            const struct hs_run *run = &th->runs[r];
            uint64_t start = run->first_us > run->period_us ? run->first_us - run->period_us : 0;
            if (depth && start > prev_end + run->period_us) {   /* a gap: the thread did not run */
                while (depth)
                    put_event(&j, v, &open[--depth], prev_end, tid, pid);
            } else if (depth) {
                start = prev_end;   /* contiguous: the timer's jitter either way is absorbed */
            }
            /* The run's functions, root first. */
            const uint32_t *funcs = NULL;
            size_t n = 0;
            size_t vs = run->stack >= 0 && (size_t)run->stack < v->nof_profile ? v->of_profile[run->stack] : SIZE_MAX;
            if (vs != SIZE_MAX && vs < v->nstacks) {
                funcs = v->stacks[vs].funcs;
                n = v->stacks[vs].n;
            }
            if (!n) {
                if (!have_unknown) {
                    size_t u = hs_view_func(v, "[stack not kept]", "", 0);
                    if (u == SIZE_MAX)
                        continue;
                    unknown = (uint32_t)u;
                    have_unknown = 1;
                }
                funcs = &unknown;
                n = 1;
            }
            size_t common = 0;
            while (common < depth && common < n && open[common].func == funcs[common])
                common++;
            while (depth > common)
                put_event(&j, v, &open[--depth], start, tid, pid);
            if (n > cap) {
                struct open_frame *grown = realloc(open, n * 2 * sizeof *open);
                if (!grown)
                    break;
                open = grown;
                cap = n * 2;
            }
            for (; depth < n; depth++)
                open[depth] = (struct open_frame){funcs[depth], start, 0};
            for (size_t k = 0; k < n; k++)
                open[k].samples += run->samples;
            prev_end = run->last_us > start ? run->last_us : start + 1;
        }
        while (depth)
            put_event(&j, v, &open[--depth], prev_end, tid, pid);
    }
    free(open);
    /* The walk's measured calls: real calls, so they nest on their own track. */
    for (size_t t = 0; v->level_funcs && t < p->ntraces; t++) {
        const struct hs_ptrace *tr = &p->traces[t];
        uint64_t tid = 1000000000u + tr->tid;
        char tname[80];
        snprintf(tname, sizeof tname, "tid %llu: measured calls", (unsigned long long)tr->tid);
        put_metadata(&j, "thread_name", pid, tid, tname);
        for (size_t k = 0; k < tr->nevents; k++) {
            const struct hs_pevent *e = &tr->events[k];
            if (e->level >= v->nlevel_funcs || v->level_funcs[e->level] == SIZE_MAX)
                continue;
            const struct hs_func *fn = &v->funcs[v->level_funcs[e->level]];
            vigil_json_object_begin(&j);
            vigil_json_key(&j, "name");
            vigil_json_string(&j, fn->name);
            vigil_json_key(&j, "cat");
            vigil_json_string(&j, "hotspot.walk");
            vigil_json_key(&j, "ph");
            vigil_json_string(&j, "X");
            vigil_json_key(&j, "ts");
            vigil_json_double(&j, (double)e->start_ns / 1000.0);
            vigil_json_key(&j, "dur");
            vigil_json_double(&j, (double)e->dur_ns / 1000.0);
            vigil_json_key(&j, "pid");
            vigil_json_int(&j, pid);
            vigil_json_key(&j, "tid");
            vigil_json_uint(&j, tid);
            vigil_json_key(&j, "args");
            vigil_json_object_begin(&j);
            vigil_json_key(&j, "level");
            vigil_json_uint(&j, e->level);
            vigil_json_object_end(&j);
            vigil_json_object_end(&j);
        }
    }
    vigil_json_array_end(&j);
    vigil_json_object_end(&j);
    vigil_json_finish(&j);
}
