/* vigil plan: the next plan of adaptive bug isolation (seed 002, procedure 1), a forward search
 * on the interprocedural control dependence graph built from the binary's control-flow facts
 * (site table version 2) and the scores of the report store.
 *
 *   monitored = explored = {}; plan = getInitialSet()
 *   each call:  monitored += plan (after waitForSufficientData)
 *               best = the expandable predicate of highest score in monitored \ explored
 *               explored += best; plan = vicinity(best) \ monitored
 * getInitialSet: the sites of the blocks that depend on main's entry; vicinity(p): the sites of
 * the blocks that depend on p's edge (p = branch site s true/false, or a case taken); for a
 * call's result predicate (forward only), the callee's body: seed 002's design alternative of
 * opening a callee when its result predicts failure (a wrong value is computed there, which
 * no edge of the caller leads to). A call in such a block
 * brings in the callee's entry region (interprocedural CDG), recursively: a direct call its
 * callee's, a block that hands a function's address on (a callback, recorded as a call) that
 * function's, an indirect call every address-taken function's. A gate (a predicate true in
 * every run that reached it) is explored with the score of the predicate whose vicinity planned
 * it, one gate a round (see cmd_plan). The search state
 * (monitored, explored, iteration, where each planned site came from) is kept in a small text
 * file beside the plan (--state; planstate.h).
 *
 * --direction backward starts from a crash site instead (seed 002, backward analysis): the
 * failing runs are grouped by where the fault struck (the store's `crashes`); for one cause
 * (--cause N, most frequent first) the faulting instruction is mapped to its function and line,
 * then to the predicate site of that function nearest before it; getInitialSet is that block's
 * sites plus the branches it is control dependent on, and vicinity(p) the branches p's block
 * depends on, up through the callers when it depends on the function's entry. Failing runs of
 * other causes are left out of the scores; each cause has its own state file. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdg.h"
#include "cmd.h"
#include "elfsites.h"
#include "plan.h"
#include "planstate.h"
#include "savefile.h"
#include "store.h"
#include "symbolize.h"

struct fn_graph {                /* one function of one table */
    uint32_t table, index;
    const struct vigil_cfg_function *f;
    struct vigil_cdep *deps;
    size_t ndeps;
};

struct program {
    struct vigil_elf_sites elf;
    struct vigil_cfg *cfg;       /* per table */
    struct fn_graph *fns;
    size_t nfns;
    uint32_t *fn_base;           /* per table: index of its first function in fns */
    uint64_t total_pred_sites;
    struct vigil_state_table *view;   /* per table: tu_hash and nsites (the state file's view) */
};

static int is_pred_site(const struct program *p, uint32_t t, uint32_t i)
{
    struct vigil_site_view v;
    vigil_sitefmt_get(&p->elf.tables[t], i, &v);
    return v.kind == VIGIL_SITE_BRANCH || v.kind == VIGIL_SITE_RETURN || v.kind == VIGIL_SITE_CASE;
}

/* A branch site whose condition has no CFG edge (a select's, a comparison used as a number):
 * its predicates have no dependents. */
static int has_no_edge(const struct program *p, uint32_t t, uint32_t i)
{
    struct vigil_site_view v;
    vigil_sitefmt_get(&p->elf.tables[t], i, &v);
    return v.kind == VIGIL_SITE_BRANCH && v.aux != 0;
}

static const struct fn_graph *find_function(const struct program *p, const char *name)
{
    for (size_t i = 0; i < p->nfns; i++)
        if (strcmp(p->fns[i].f->name, name) == 0)
            return &p->fns[i];
    return NULL;
}

/* Add the predicate sites of block b of function g, and the entry regions of its callees. */
static void add_region_of_function(const struct program *p, const struct fn_graph *g, uint8_t *visited, struct vigil_siteset *out);

static void add_block_sites(const struct program *p, const struct fn_graph *g, uint32_t b, struct vigil_siteset *out)
{
    const struct vigil_cfg *cfg = &p->cfg[g->table];
    for (uint32_t i = 0; i < cfg->nsites; i++)
        if (cfg->site_function[i] == g->index && cfg->site_block[i] == b && is_pred_site(p, g->table, i))
            vigil_siteset_add(out, g->table, i);
}

/* Backward vicinity of block b of g: its own sites, the branches it is control dependent on
 * and, when it depends on g's entry, the blocks that call g (direct calls by name). */
static void add_backward(const struct program *p, const struct fn_graph *g, uint32_t b, struct vigil_siteset *out)
{
    add_block_sites(p, g, b, out);
    for (size_t k = 0; k < g->ndeps; k++) {
        if (g->deps[k].block != b)
            continue;
        if (g->deps[k].from != VIGIL_CDG_ENTRY) {
            add_block_sites(p, g, g->deps[k].from, out);
            continue;
        }
        for (size_t t = 0; t < p->elf.ntables; t++)
            for (uint32_t c = 0; c < p->cfg[t].ncalls; c++)
                if (strcmp(p->cfg[t].calls[c].callee, g->f->name) == 0)
                    add_block_sites(p, &p->fns[p->fn_base[t] + p->cfg[t].calls[c].function], p->cfg[t].calls[c].block, out);
    }
}

static void add_block(const struct program *p, const struct fn_graph *g, uint32_t b, uint8_t *visited, struct vigil_siteset *out)
{
    const struct vigil_cfg *cfg = &p->cfg[g->table];
    add_block_sites(p, g, b, out);
    for (uint32_t c = 0; c < cfg->ncalls; c++) {
        if (cfg->calls[c].function != g->index || cfg->calls[c].block != b)
            continue;
        if (!cfg->calls[c].callee[0]) {   /* an indirect call: any function whose address is taken */
            for (size_t k = 0; k < p->nfns; k++)
                if (p->fns[k].f->flags & VIGIL_CFG_ADDRESS_TAKEN)
                    add_region_of_function(p, &p->fns[k], visited, out);
            continue;
        }
        const struct fn_graph *callee = find_function(p, cfg->calls[c].callee);
        if (callee)
            add_region_of_function(p, callee, visited, out);
    }
}

/* The blocks that depend on edge (from, label) of g (from = VIGIL_CDG_ENTRY: g's entry). */
static void add_dependents(const struct program *p, const struct fn_graph *g, uint32_t from, uint32_t label,
                           uint8_t *visited, struct vigil_siteset *out)
{
    for (size_t k = 0; k < g->ndeps; k++)
        if (g->deps[k].from == from && g->deps[k].label == label)
            add_block(p, g, g->deps[k].block, visited, out);
}

/* The bodies of the functions called in block b of g (direct calls of functions with
 * control-flow facts): where the value that a call's return predicate tests was computed.
 * Their entry regions came in with b; this adds every other block. */
static void add_callee_bodies(const struct program *p, const struct fn_graph *g, uint32_t b, uint8_t *visited,
                              struct vigil_siteset *out)
{
    const struct vigil_cfg *cfg = &p->cfg[g->table];
    for (uint32_t c = 0; c < cfg->ncalls; c++) {
        if (cfg->calls[c].function != g->index || cfg->calls[c].block != b || !cfg->calls[c].callee[0])
            continue;
        const struct fn_graph *callee = find_function(p, cfg->calls[c].callee);
        for (uint32_t k = 0; callee && k < callee->f->nblocks; k++)
            add_block(p, callee, k, visited, out);
    }
}

/* The CFG edge whose dependents a predicate's truth leads to: a branch's true or false edge,
 * a case site's switch successor (the site's aux). */
static uint32_t edge_of(const struct program *p, uint32_t t, const struct vigil_store_pred *pr)
{
    if (pr->kind == VIGIL_SITE_CASE) {
        struct vigil_site_view v;
        vigil_sitefmt_get(&p->elf.tables[t], pr->site_index, &v);
        return VIGIL_EDGE_CASE0 + v.aux;
    }
    return pr->pred ? VIGIL_EDGE_TRUE : VIGIL_EDGE_FALSE;
}

static void add_region_of_function(const struct program *p, const struct fn_graph *g, uint8_t *visited, struct vigil_siteset *out)
{
    size_t id = (size_t)(g - p->fns);
    if (visited[id])
        return;
    visited[id] = 1;
    add_dependents(p, g, VIGIL_CDG_ENTRY, VIGIL_EDGE_ALWAYS, visited, out);
}

static int load_program(const char *path, struct program *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (vigil_elf_sites_load(path, &p->elf, err, errlen) != 0)
        return -1;
    if (!p->elf.has_section || !p->elf.ntables) {
        snprintf(err, errlen, "%s: no site tables; expected a binary built with vigil-cc", path);
        return -1;
    }
    p->cfg = calloc(p->elf.ntables, sizeof *p->cfg);
    p->fn_base = calloc(p->elf.ntables, sizeof *p->fn_base);
    p->view = calloc(p->elf.ntables, sizeof *p->view);
    size_t total = 0;
    for (size_t t = 0; t < p->elf.ntables; t++) {
        p->view[t] = (struct vigil_state_table){vigil_sitefmt_tu_hash(&p->elf.tables[t]), p->elf.tables[t].nsites};
        char why[200];
        int rc = vigil_sitefmt_cfg(&p->elf.tables[t], &p->cfg[t], why, sizeof why);
        if (rc <= 0) {
            snprintf(err, errlen, "%s: site table %zu (tu %016" PRIx64 "): %s", path, t,
                     vigil_sitefmt_tu_hash(&p->elf.tables[t]),
                     rc == 0 ? "no control-flow facts (expected site table version 2: rebuild with this vigil-cc)" : why);
            return -1;
        }
        p->fn_base[t] = (uint32_t)total;
        total += p->cfg[t].nfunctions;
        for (uint32_t i = 0; i < p->elf.tables[t].nsites; i++)
            p->total_pred_sites += is_pred_site(p, (uint32_t)t, i);
    }
    p->fns = calloc(total + 1, sizeof *p->fns);
    for (size_t t = 0; t < p->elf.ntables; t++)
        for (uint32_t f = 0; f < p->cfg[t].nfunctions; f++) {
            struct fn_graph *g = &p->fns[p->nfns++];
            g->table = (uint32_t)t, g->index = f, g->f = &p->cfg[t].functions[f];
            if (vigil_control_dependences(g->f->nblocks, g->f->edges, g->f->nedges, g->f->exits, g->f->nexits,
                                          &g->deps, &g->ndeps) != 0) {
                snprintf(err, errlen, "%s: function %s: cannot compute control dependences", path, g->f->name);
                return -1;
            }
        }
    return 0;
}

static void free_program(struct program *p)
{
    for (size_t i = 0; i < p->nfns; i++)
        free(p->fns[i].deps);
    for (size_t t = 0; p->cfg && t < p->elf.ntables; t++)
        vigil_cfg_free(&p->cfg[t]);
    free(p->fns);
    free(p->cfg);
    free(p->fn_base);
    free(p->view);
    vigil_elf_sites_free(&p->elf);
}

/* ---- Site tables by tu_hash (the store names them so; the search state is in planstate.h) ---- */

static int table_of(const struct program *p, const char *hash)
{
    for (size_t t = 0; t < p->elf.ntables; t++) {
        char h[17];
        snprintf(h, sizeof h, "%016" PRIx64, vigil_sitefmt_tu_hash(&p->elf.tables[t]));
        if (strcmp(h, hash) == 0)
            return (int)t;
    }
    return -1;
}

static size_t set_count(const struct program *p, const struct vigil_siteset *s)
{
    size_t n = 0;
    for (size_t t = 0; t < p->elf.ntables; t++)
        for (uint32_t i = 0; i < p->elf.tables[t].nsites; i++)
            n += vigil_siteset_has(s, (uint32_t)t, i);
    return n;
}

/* A branch site with predicates vigil-cc left out is only complete with the sites its counts
 * are reconstructed from (sitefmt.h, "removed"): plan those too, transitively. */
static void add_reconstruction_sources(const struct program *p, struct vigil_siteset *plan)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t t = 0; t < p->elf.ntables; t++)
            for (uint32_t k = 0; k < p->cfg[t].nremoved; k++) {
                const struct vigil_cfg_removed *r = &p->cfg[t].removed[k];
                if (vigil_siteset_has(plan, (uint32_t)t, r->site) && !vigil_siteset_has(plan, (uint32_t)t, r->source)) {
                    vigil_siteset_add(plan, (uint32_t)t, r->source);
                    changed = 1;
                }
            }
    }
}

static int write_plan_file(FILE *f, void *plan)
{
    return vigil_plan_write(f, plan);
}

/* The plan file, replaced whole (a torn plan would make the program count nothing). */
static int write_plan(const char *path, const struct program *p, const struct vigil_siteset *plan, char *err,
                      size_t errlen)
{
    struct vigil_plan out = {0};
    out.modules = calloc(p->elf.ntables + 1, sizeof *out.modules);
    out.sites = calloc(set_count(p, plan) + 1, sizeof *out.sites);
    for (size_t t = 0; t < p->elf.ntables; t++) {
        int used = 0;
        for (uint32_t i = 0; i < p->elf.tables[t].nsites; i++) {
            if (!vigil_siteset_has(plan, (uint32_t)t, i))
                continue;
            if (!used)
                out.modules[out.nmodules++] = (struct vigil_plan_module){vigil_sitefmt_tu_hash(&p->elf.tables[t]),
                                                                        p->elf.tables[t].nsites, 0};
            used = 1;
            out.sites[out.nsites++] = (struct vigil_plan_site){(uint32_t)out.nmodules - 1, i, 0};
        }
    }
    int rc = vigil_save_file(path, write_plan_file, &out, err, errlen);
    free(out.modules);
    free(out.sites);
    return rc;
}

/* ---- Backward search: from a failure cause to a block ---- */

/* The block to start from: the faulting instruction's function and line, then the predicate
 * site of that function with the greatest line not after it (its entry block when none). */
static int crash_block(const struct program *p, const struct vigil_store_cause *c, const struct fn_graph **g_out,
                       uint32_t *block, char *where, size_t wlen, char *err, size_t errlen)
{
    struct vigil_symbolizer *sym = vigil_symbolizer_open(c->path, err, errlen);
    if (!sym)
        return -1;
    struct vigil_source_location loc;
    int rc = vigil_symbolize_file_offset(sym, c->file_offset, &loc);
    vigil_symbolizer_close(sym);
    if (rc != 0 || !loc.function[0])
        return snprintf(err, errlen, "%s+0x%" PRIx64 ": no function there (stripped binary?)", c->path,
                        c->file_offset), -1;
    const struct fn_graph *g = find_function(p, loc.function);
    if (!g && loc.container[0])   /* inlined into another function before vigil-cc saw it */
        g = find_function(p, loc.container);
    if (!g)
        return snprintf(err, errlen, "the crash is in %s (%s+0x%" PRIx64 "), a function without control-flow "
                        "facts (not built by vigil-cc?)", loc.function, c->path, c->file_offset), -1;
    const struct vigil_cfg *cfg = &p->cfg[g->table];
    uint32_t best_line = 0;
    *block = 0;
    for (uint32_t i = 0; i < cfg->nsites; i++) {
        if (cfg->site_function[i] != g->index || cfg->site_block[i] == VIGIL_CFG_NONE || !is_pred_site(p, g->table, i))
            continue;
        struct vigil_site_view v;
        vigil_sitefmt_get(&p->elf.tables[g->table], i, &v);
        if (v.line <= (uint32_t)loc.line && v.line >= best_line)
            best_line = v.line, *block = cfg->site_block[i];
    }
    snprintf(where, wlen, "signal %d in %s at %s:%d, block %u", c->signal, loc.function, loc.file, loc.line, *block);
    *g_out = g;
    return 0;
}

/* A failure cause is where the fault struck in the source (function, file, line, column), not
 * the faulting address: the checking copy and the instrumented copy of one instruction are one
 * cause (a plan pins the functions it monitors to their instrumented copy, common/abi.h). The
 * store's crash places (path, offset), merged by that key, most runs first. */
struct cause {
    struct vigil_store_cause c;     /* the first place seen (most runs), runs summed */
    char key[1400];
    uint64_t *offsets;              /* every offset of c.path with this key */
    size_t noffsets;
};

static void free_causes(struct cause *causes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(causes[i].offsets);
    free(causes);
}

static int by_runs(const void *a, const void *b)
{
    const struct cause *x = a, *y = b;
    return x->c.runs != y->c.runs ? (x->c.runs < y->c.runs ? 1 : -1) : (x < y ? -1 : x > y);
}

static int read_causes(const char *db, struct cause **out, size_t *nout, char *err, size_t errlen)
{
    *out = NULL;
    *nout = 0;
    struct vigil_store *s = vigil_store_open(db, err, errlen);
    if (!s)
        return -1;
    struct vigil_store_cause *places = NULL;
    size_t nplaces = 0;
    int rc = vigil_store_read_begin(s, err, errlen) == 0 &&
             vigil_store_crash_causes(s, &places, &nplaces, err, errlen) == 0 ? 0 : -1;
    vigil_store_read_end(s);
    vigil_store_close(s);
    struct cause *causes = rc == 0 ? calloc(nplaces + 1, sizeof *causes) : NULL;
    if (rc == 0 && !causes)
        rc = -1, snprintf(err, errlen, "out of memory");
    size_t n = 0;
    struct vigil_symbolizer *sym = NULL;
    const char *sym_path = NULL;
    for (size_t i = 0; rc == 0 && i < nplaces; i++) {
        const struct vigil_store_cause *pl = &places[i];
        if (!sym_path || strcmp(sym_path, pl->path) != 0) {
            if (sym)
                vigil_symbolizer_close(sym);
            char ignored[256];
            sym = vigil_symbolizer_open(pl->path, ignored, sizeof ignored);
            sym_path = pl->path;
        }
        char key[sizeof causes->key];
        struct vigil_source_location loc;
        if (sym && vigil_symbolize_file_offset(sym, pl->file_offset, &loc) == 0 && loc.function[0] && loc.line)
            snprintf(key, sizeof key, "%s %s:%d:%d", loc.function, loc.file, loc.line, loc.column);
        else   /* nothing to go by but the address */
            snprintf(key, sizeof key, "+0x%" PRIx64, pl->file_offset);
        size_t k = 0;
        while (k < n && (strcmp(causes[k].c.path, pl->path) != 0 || strcmp(causes[k].key, key) != 0))
            k++;
        struct cause *c = &causes[k];
        uint64_t *grown = realloc(c->offsets, (c->noffsets + 1) * sizeof *grown);
        if (!grown) {
            rc = -1, snprintf(err, errlen, "out of memory");
            break;
        }
        c->offsets = grown;
        c->offsets[c->noffsets++] = pl->file_offset;
        if (k == n) {
            c->c = *pl;
            snprintf(c->key, sizeof c->key, "%s", key);
            n++;
        } else {
            c->c.runs += pl->runs;
        }
    }
    if (sym)
        vigil_symbolizer_close(sym);
    free(places);
    if (rc != 0) {
        free_causes(causes, n);
        return -1;
    }
    qsort(causes, n, sizeof *causes, by_runs);
    *out = causes;
    *nout = n;
    return 0;
}

/* The cause a new backward search follows: the n-th most frequent (1-based). */
static int pick_cause(const char *db, unsigned n, struct vigil_store_cause *out, size_t *ncauses, char *err, size_t errlen)
{
    struct cause *causes;
    if (read_causes(db, &causes, ncauses, err, errlen) != 0)
        return -1;
    int rc = 0;
    if (*ncauses == 0) {
        struct vigil_store_totals t = {0};
        struct vigil_store *s = vigil_store_open(db, err, errlen);
        if (s && vigil_store_read_begin(s, err, errlen) == 0) {
            vigil_store_totals(s, &t, err, errlen);
            vigil_store_read_end(s);
        }
        if (s)
            vigil_store_close(s);
        rc = -1, snprintf(err, errlen, "the store has 0 failure causes: none of its %llu failing runs (of %llu) "
                          "has a crash site (a `crash` line in run.txt). vigil records one when a run dies of "
                          "SIGSEGV, SIGBUS, SIGILL or SIGFPE, or raises a signal itself (abort, assert, raise); "
                          "runs that fail by their exit status or an oracle's label have none: use "
                          "--direction forward", (unsigned long long)t.num_f,
                          (unsigned long long)(t.num_f + t.num_s));
    } else if (n == 0 || n > *ncauses) {
        rc = -1, snprintf(err, errlen, "--cause %u: the store has %zu failure causes (failing runs with a crash "
                          "site); expected 1 to %zu", n, *ncauses, *ncauses);
    }
    if (rc == 0)
        *out = causes[n - 1].c;
    free_causes(causes, *ncauses);
    return rc;
}

/* The offsets of the cause that the state follows (c: one of its places), in a new array. */
static int cause_offsets(const char *db, const struct vigil_store_cause *c, uint64_t **offsets, size_t *n,
                         char *err, size_t errlen)
{
    struct cause *causes;
    size_t ncauses;
    *offsets = NULL;
    *n = 0;
    if (read_causes(db, &causes, &ncauses, err, errlen) != 0)
        return -1;
    for (size_t k = 0; k < ncauses && !*offsets; k++)
        for (size_t i = 0; i < causes[k].noffsets; i++)
            if (causes[k].offsets[i] == c->file_offset && !strcmp(causes[k].c.path, c->path)) {
                *offsets = causes[k].offsets, *n = causes[k].noffsets;
                causes[k].offsets = NULL;
                break;
            }
    free_causes(causes, ncauses);
    return 0;   /* none: no run failed of it (any more); every failure is left out */
}

/* ---- Scores ---- */

static double score_of(const char *heuristic, const struct vigil_store_pred *pr, uint64_t num_f)
{
    const struct vigil_pred_counts *c = &pr->counts;
    if (!strcmp(heuristic, "failcount")) return vigil_score_failcount(c);
    if (!strcmp(heuristic, "importance")) return vigil_score_importance(c, num_f);
    if (!strcmp(heuristic, "maxImportance")) return vigil_score_max_importance(c, num_f);
    if (!strcmp(heuristic, "ttest")) return vigil_score_ttest(c);
    if (!strcmp(heuristic, "random")) return (double)rand();
    return 0;   /* bfs: every candidate is explored */
}

/* A gate: a branch predicate with an edge, or a case taken, true in every run that reached its
 * site (and in at least one failing run). */
static int is_gate(const struct program *p, int t, const struct vigil_store_pred *pr)
{
    int expandable = (pr->kind == VIGIL_SITE_BRANCH && t >= 0 && !has_no_edge(p, (uint32_t)t, pr->site_index)) ||
                     (pr->kind == VIGIL_SITE_CASE && pr->pred == 1);
    return t >= 0 && expandable && pr->counts.f > 0 && pr->counts.f == pr->counts.f_obs && pr->counts.s == pr->counts.s_obs;
}

struct search {
    const struct program *p;
    const struct vigil_plan_state *st;
    const struct vigil_store_pred *preds;
    size_t n;
    const char *heuristic;
    long **rows;        /* per table, site * 3 + pred: index in preds, -1 when not in the store */
    double root;        /* the score a gate of the initial set inherits */
};

static void index_rows(struct search *q)
{
    q->rows = calloc(q->p->elf.ntables + 1, sizeof *q->rows);
    for (size_t t = 0; t < q->p->elf.ntables; t++) {
        q->rows[t] = malloc((q->p->elf.tables[t].nsites * 3 + 1) * sizeof **q->rows);
        for (size_t i = 0; i < q->p->elf.tables[t].nsites * 3; i++)
            q->rows[t][i] = -1;
    }
    for (size_t k = 0; k < q->n; k++) {
        int t = table_of(q->p, q->preds[k].tu_hash);
        if (t >= 0 && q->preds[k].pred < 3 && q->preds[k].site_index < q->p->elf.tables[t].nsites)
            q->rows[t][q->preds[k].site_index * 3 + q->preds[k].pred] = (long)k;
    }
}

static void free_rows(struct search *q)
{
    for (size_t t = 0; q->rows && t < q->p->elf.ntables; t++)
        free(q->rows[t]);
    free(q->rows);
}

/* The score a gate at site (t, i) is explored with: that of the predicate whose exploration
 * planned the site, or if that is a gate, the score it inherited; q->root for the initial set. */
static double inherited_score(const struct search *q, uint32_t t, uint32_t i, int depth)
{
    const struct vigil_plan_origin *o = &q->st->origin[t][i];
    long k = o->set && depth < 64 ? q->rows[o->table][o->site * 3 + o->pred] : -1;
    if (k < 0)
        return q->root;
    const struct vigil_store_pred *pr = &q->preds[k];
    if (is_gate(q->p, (int)o->table, pr))
        return inherited_score(q, o->table, o->site, depth + 1);
    double sc = score_of(q->heuristic, pr, pr->num_f);
    return isnan(sc) ? -1e300 : sc;
}

int cmd_plan(int argc, char **argv)
{
    const char *db = VIGIL_STORE_DEFAULT, *heuristic = "importance", *direction = "forward";
    const char *binary = NULL, *out = NULL, *state_path = NULL;
    double confidence = 0;
    unsigned cause_n = 1;   /* backward: which failure cause, most frequent first */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 < argc && !strcmp(a, "--db")) db = argv[++i];
        else if (i + 1 < argc && !strcmp(a, "--heuristic")) heuristic = argv[++i];
        else if (i + 1 < argc && !strcmp(a, "--direction")) direction = argv[++i];
        else if (i + 1 < argc && !strcmp(a, "--confidence")) confidence = atof(argv[++i]);
        else if (i + 1 < argc && !strcmp(a, "--state")) state_path = argv[++i];
        else if (i + 1 < argc && !strcmp(a, "--cause")) cause_n = (unsigned)atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(a, "-o")) out = argv[++i];
        else if (a[0] == '-') return cmd_usage_error(argv[0], "unknown option or missing value \"%s\"", a);
        else if (binary) return cmd_usage_error(argv[0], "expected one BINARY, got \"%s\" and \"%s\"", binary, a);
        else binary = a;
    }
    const char *known[] = {"failcount", "importance", "maxImportance", "ttest", "bfs", "random"};
    int ok = 0;
    for (size_t k = 0; k < sizeof known / sizeof *known; k++)
        ok |= !strcmp(heuristic, known[k]);
    if (!ok)
        return cmd_usage_error(argv[0], "--heuristic %s: expected failcount, importance, maxImportance, ttest, bfs or random", heuristic);
    int backward = strcmp(direction, "backward") == 0;
    if (!backward && strcmp(direction, "forward") != 0)
        return cmd_usage_error(argv[0], "--direction %s: expected forward or backward", direction);
    if (!binary || !out)
        return cmd_usage_error(argv[0], "expected BINARY and -o PLAN");
    char state_buf[4200];
    if (!state_path) {
        if (backward)
            snprintf(state_buf, sizeof state_buf, "%s.cause%u.state", binary, cause_n);
        else
            snprintf(state_buf, sizeof state_buf, "%s.state", binary);
        state_path = state_buf;
    }
    srand(20240501u);
    char err[1024];
    struct program p;
    if (load_program(binary, &p, err, sizeof err) != 0) {
        free_program(&p);
        return cmd_error(argv[0], "%s", err);
    }
    struct vigil_plan_state st;
    struct vigil_siteset plan;
    if (vigil_plan_state_init(&st, p.view, p.elf.ntables) != 0) {
        free_program(&p);
        return cmd_error(argv[0], "out of memory");
    }
    if (vigil_siteset_init(&plan, p.view, p.elf.ntables) != 0) {
        vigil_plan_state_free(&st);
        free_program(&p);
        return cmd_error(argv[0], "out of memory");
    }
    uint8_t *visited = calloc(p.nfns + 1, 1);
    int rc = vigil_plan_state_load(state_path, &st, err, sizeof err);
    const char *what = "";
    if (rc < 0) {
        rc = cmd_error(argv[0], "%s", err);
        goto done;
    }
    if (rc == 0 && backward) {   /* getInitialSet, backward: from the crash site */
        static char where[1600];
        size_t ncauses = 0;
        const struct fn_graph *g;
        uint32_t block;
        if (pick_cause(db, cause_n, &st.cause, &ncauses, err, sizeof err) != 0 ||
            crash_block(&p, &st.cause, &g, &block, where, sizeof where - 64, err, sizeof err) != 0) {
            rc = cmd_error(argv[0], "%s", err);
            goto done;
        }
        st.has_cause = 1;
        add_backward(&p, g, block, &plan);
        size_t len = strlen(where);
        snprintf(where + len, sizeof where - len, " (cause %u of %zu, %" PRIu64 " failing runs)", cause_n, ncauses,
                 st.cause.runs);
        what = where;
    } else if (rc == 0) {   /* getInitialSet */
        const struct fn_graph *main_fn = find_function(&p, "main");
        if (!main_fn) {
            rc = cmd_error(argv[0], "%s: no function `main` with control-flow facts", binary);
            goto done;
        }
        add_region_of_function(&p, main_fn, visited, &plan);
        what = "initial set (entry region of main)";
    } else {
        struct vigil_store *s = vigil_store_open(db, err, sizeof err);
        if (!s) {
            rc = cmd_error(argv[0], "%s", err);
            goto done;
        }
        struct vigil_store_pred *preds = NULL;
        size_t n = 0, noffsets = 0;
        uint64_t *offsets = NULL;
        struct vigil_store_totals totals;
        rc = (!st.has_cause || cause_offsets(db, &st.cause, &offsets, &noffsets, err, sizeof err) == 0) &&
             vigil_store_read_begin(s, err, sizeof err) == 0 &&
             (!st.has_cause ||
              vigil_store_exclude_other_failures(s, st.cause.path, offsets, noffsets, err, sizeof err) == 0) &&
             vigil_store_aggregate(s, &preds, &n, &totals, err, sizeof err) == 0 ? 0 : -1;
        vigil_store_read_end(s);
        vigil_store_close(s);
        free(offsets);
        if (rc != 0) {
            rc = cmd_error(argv[0], "%s", err);
            goto done;
        }
        /* monitored += last plan */
        for (size_t t = 0; t < p.elf.ntables; t++)
            for (uint32_t i = 0; i < p.elf.tables[t].nsites; i++)
                if (vigil_siteset_has(&st.last_plan, (uint32_t)t, i))
                    vigil_siteset_add(&st.monitored, (uint32_t)t, i);
        /* Gates: a predicate true in every run that reached its site (an assertion that holds,
         * the way on past an error exit that never happened, a loop every run enters, a case
         * every input has) tells failing runs from passing ones no better than the region it
         * is in: it scores no Increase, and the code behind it would wait for the end of the
         * search. Forward search only, it is explored with the score of the predicate whose
         * vicinity planned it (that predicate's region is what every run goes on from); the
         * initial set's gates with the best score among the initial set's predicates. A round
         * explores the best gate first when its score is at least the best predicate's, then
         * the best predicate: one gate a round, so the code behind a gate is planned when the
         * search has come to that gate's score, not as soon as the gate is counted. */
        struct search q = {&p, &st, preds, n, heuristic, NULL, -1e300};
        int gates = !st.has_cause && strcmp(heuristic, "bfs") != 0;
        index_rows(&q);
        for (size_t k = 0; gates && k < n; k++) {   /* the initial set's score */
            int t = table_of(&p, preds[k].tu_hash);
            if (t < 0 || st.origin[t][preds[k].site_index].set || is_gate(&p, t, &preds[k]) || preds[k].counts.f == 0)
                continue;
            double sc = score_of(heuristic, &preds[k], preds[k].num_f);
            if (!isnan(sc) && sc > q.root)
                q.root = sc;
        }
        size_t gate_sites = 0;   /* sites planned by this round's gate */
        static char what_buf[2600];
        char best_text[1200] = "", gate_text[1200] = "";
        /* waitForSufficientData: the best candidate's t-test confidence must reach --confidence */
        for (;;) {
            const struct vigil_store_pred *best = NULL;
            double best_score = -INFINITY;
            int best_is_gate = 0;
            for (size_t k = 0; k < n; k++) {
                const struct vigil_store_pred *pr = &preds[k];
                int t = table_of(&p, pr->tu_hash);
                /* expandable: a branch predicate (with an edge), a case taken (its edge has
                 * dependents), or forward, a call's result (the callee's body; one for all three
                 * predicates of the site, recorded as explored true) */
                int is_return = pr->kind == VIGIL_SITE_RETURN && !st.has_cause;
                int expandable = (pr->kind == VIGIL_SITE_BRANCH && t >= 0 && !has_no_edge(&p, (uint32_t)t, pr->site_index)) ||
                                 (pr->kind == VIGIL_SITE_CASE && pr->pred == 1) || is_return;
                if (t < 0 || !expandable || !vigil_siteset_has(&st.monitored, (uint32_t)t, pr->site_index) ||
                    vigil_siteset_has(pr->pred || is_return ? &st.explored_true : &st.explored_false, (uint32_t)t, pr->site_index) ||
                    pr->counts.f == 0)
                    continue;
                int gate = gates && is_gate(&p, t, pr);
                if (gate && gate_sites)   /* this round has its gate */
                    continue;
                double sc = gate ? inherited_score(&q, (uint32_t)t, pr->site_index, 0) : score_of(heuristic, pr, pr->num_f);
                if (isnan(sc))
                    sc = -1e300;
                if (!best || sc > best_score || (sc == best_score && gate && !best_is_gate))
                    best = pr, best_score = sc, best_is_gate = gate;
            }
            if (!best) {
                what = !set_count(&p, &plan) ? "search complete (no unexplored predicate true in a failing run)"
                       : gate_sites ? what_buf : "vicinity of every unexplored predicate (bfs)";
                break;
            }
            if (confidence > 0 && !best_is_gate && vigil_ttest_confidence(&best->counts) < confidence &&
                set_count(&p, &plan) == gate_sites) {
                /* not enough data: monitor the same sites again (and the gate's vicinity) */
                for (size_t t = 0; t < p.elf.ntables; t++)
                    for (uint32_t i = 0; i < p.elf.tables[t].nsites / 8 + 1; i++)
                        plan.bits[t][i] |= st.last_plan.bits[t][i];
                what = "waiting for sufficient data (same plan again)";
                break;
            }
            int t = table_of(&p, best->tu_hash);
            int best_is_return = best->kind == VIGIL_SITE_RETURN;
            vigil_siteset_add(best->pred || best_is_return ? &st.explored_true : &st.explored_false, (uint32_t)t, best->site_index);
            const struct vigil_cfg *cfg = &p.cfg[t];
            uint32_t fn = cfg->site_function[best->site_index], block = cfg->site_block[best->site_index];
            if (fn != VIGIL_CFG_NONE && block != VIGIL_CFG_NONE) {
                const struct fn_graph *g = &p.fns[p.fn_base[t] + fn];
                memset(visited, 0, p.nfns);
                if (st.has_cause)
                    add_backward(&p, g, block, &plan);
                else if (best_is_return)
                    add_callee_bodies(&p, g, block, visited, &plan);
                else
                    add_dependents(&p, g, block, edge_of(&p, (uint32_t)t, best), visited, &plan);
            }
            for (size_t tt = 0; tt < p.elf.ntables; tt++)   /* vicinity \ monitored */
                for (uint32_t i = 0; i < p.elf.tables[tt].nsites / 8 + 1; i++)
                    plan.bits[tt][i] &= (uint8_t)~st.monitored.bits[tt][i];
            for (size_t tt = 0; gates && tt < p.elf.ntables; tt++)   /* where the new sites came from */
                for (uint32_t i = 0; i < p.elf.tables[tt].nsites; i++)
                    if (vigil_siteset_has(&plan, (uint32_t)tt, i) && !st.origin[tt][i].set)
                        st.origin[tt][i] = (struct vigil_plan_origin){1, (uint32_t)t, best->site_index, best->pred};
            snprintf(best_is_gate ? gate_text : best_text, sizeof best_text, "%s %s at %s:%u in %s",
                     vigil_site_kind_name(best->kind), vigil_pred_name(best->kind, best->pred),
                     best->file[0] ? best->file : "?", best->line, best->function[0] ? best->function : "?");
            if (best_is_gate) {
                gate_sites = set_count(&p, &plan);
                snprintf(what_buf, sizeof what_buf, "vicinity of a gate (true in every run: %s)", gate_text);
                continue;   /* and the best predicate */
            }
            if (strcmp(heuristic, "bfs") != 0 && set_count(&p, &plan) > 0) {
                if (gate_sites)
                    snprintf(what_buf, sizeof what_buf, "vicinity of the best predicate (%s%s) and of a gate (true in every run: %s)",
                             best_text, best_is_return ? ": the callee's body" : "", gate_text);
                else
                    snprintf(what_buf, sizeof what_buf, "vicinity of the best predicate (%s%s)", best_text,
                             best_is_return ? ": the callee's body" : "");
                what = what_buf;
                break;
            }
        }
        free_rows(&q);
        free(preds);
        rc = 0;
    }
    st.iteration++;
    add_reconstruction_sources(&p, &plan);
    for (size_t t = 0; t < p.elf.ntables; t++)
        memcpy(st.last_plan.bits[t], plan.bits[t], p.elf.tables[t].nsites / 8 + 1);
    if (write_plan(out, &p, &plan, err, sizeof err) != 0) {
        rc = cmd_error(argv[0], "%s", err);
        goto done;
    }
    if (vigil_plan_state_save(state_path, &st, err, sizeof err) != 0) {
        rc = cmd_error(argv[0], "%s", err);
        goto done;
    }
    size_t planned = set_count(&p, &plan);
    for (size_t t = 0; t < p.elf.ntables; t++)   /* monitored after this plan has run */
        for (uint32_t i = 0; i < p.elf.tables[t].nsites / 8 + 1; i++)
            st.monitored.bits[t][i] |= plan.bits[t][i];
    size_t monitored = set_count(&p, &st.monitored);
    printf("iteration %u: %s: %zu sites planned; %zu of %llu predicate sites monitored so far (%.1f%%)\n",
           st.iteration, what, planned, monitored, (unsigned long long)p.total_pred_sites,
           p.total_pred_sites ? 100.0 * (double)monitored / (double)p.total_pred_sites : 0.0);
done:
    free(visited);
    vigil_siteset_free(&plan);
    vigil_plan_state_free(&st);
    free_program(&p);
    return rc;
}
