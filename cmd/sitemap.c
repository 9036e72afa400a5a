/* Report sites -> source, through the binaries' site tables. */
#include "sitemap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vigil_sitemap_build(const struct vigil_run_report *r, struct vigil_sitemap *m)
{
    memset(m, 0, sizeof *m);
    m->modules = calloc(r->nmodules ? r->nmodules : 1, sizeof *m->modules);
    m->binaries = calloc(r->nmodules ? r->nmodules : 1, sizeof *m->binaries);
    const char **binary_paths = calloc(r->nmodules ? r->nmodules : 1, sizeof *binary_paths);
    int *binary_ok = calloc(r->nmodules ? r->nmodules : 1, sizeof *binary_ok);
    char (*binary_err)[512] = calloc(r->nmodules ? r->nmodules : 1, sizeof *binary_err);
    if (!m->modules || !m->binaries || !binary_paths || !binary_ok || !binary_err) {
        free(binary_paths), free(binary_ok), free(binary_err);
        vigil_sitemap_free(m);
        return -1;
    }
    m->nmodules = r->nmodules;
    for (size_t i = 0; i < r->nmodules; i++) {
        const struct vigil_run_module *mod = &r->modules[i];
        size_t b = 0;
        while (b < m->nbinaries && strcmp(binary_paths[b], mod->path) != 0)
            b++;
        if (b == m->nbinaries) {   /* first module from this binary: read it once */
            binary_paths[b] = mod->path;
            binary_ok[b] = vigil_elf_sites_load(mod->path, &m->binaries[b], binary_err[b],
                                                sizeof binary_err[b]) == 0;
            m->nbinaries++;
        }
        struct vigil_sitemap_module *sm = &m->modules[i];
        if (!binary_ok[b]) {
            snprintf(sm->problem, sizeof sm->problem, "%s", binary_err[b]);
            continue;
        }
        sm->table = vigil_elf_sites_find(&m->binaries[b], mod->tu_hash, mod->nsites);
        if (!sm->table)
            snprintf(sm->problem, sizeof sm->problem,
                     "%s: no site table with tu %016llx and %u sites (the binary changed since "
                     "the run?)", mod->path, (unsigned long long)mod->tu_hash, mod->nsites);
    }
    free(binary_paths);
    free(binary_ok);
    free(binary_err);
    return 0;
}

int vigil_sitemap_lookup(const struct vigil_sitemap *m, uint32_t module, uint32_t index,
                         struct vigil_site_view *view)
{
    if (module >= m->nmodules || !m->modules[module].table ||
        index >= m->modules[module].table->nsites)
        return -1;
    vigil_sitefmt_get(m->modules[module].table, index, view);
    return 0;
}

void vigil_sitemap_free(struct vigil_sitemap *m)
{
    for (size_t i = 0; i < m->nbinaries; i++)
        vigil_elf_sites_free(&m->binaries[i]);
    free(m->binaries);
    free(m->modules);
    memset(m, 0, sizeof *m);
}

static const struct vigil_run_report *sort_report;   /* qsort has no context argument */

static uint64_t global_id(const struct vigil_run_report *r, size_t site)
{
    return (uint64_t)r->modules[r->sites[site].module].base_id + r->sites[site].index;
}

static int compare_execs(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    const struct vigil_run_site *sx = &sort_report->sites[x], *sy = &sort_report->sites[y];
    if (sx->execs != sy->execs)
        return sx->execs > sy->execs ? -1 : 1;
    uint64_t ix = global_id(sort_report, x), iy = global_id(sort_report, y);
    return ix < iy ? -1 : ix > iy;
}

size_t *vigil_sites_by_execs(const struct vigil_run_report *r)
{
    size_t *order = malloc((r->nsites ? r->nsites : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (size_t i = 0; i < r->nsites; i++)
        order[i] = i;
    sort_report = r;
    qsort(order, r->nsites, sizeof *order, compare_execs);
    sort_report = NULL;
    return order;
}

void vigil_format_rate(double rate, char *buf, size_t len)
{
    snprintf(buf, len, "%.3g%%", rate * 100.0);
}
