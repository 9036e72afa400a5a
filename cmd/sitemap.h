/* Maps the sites of a run report to source through the binaries named in its module lines.
 * A module whose binary is gone or changed (no table with the report's tu_hash and site
 * count) keeps a message saying so; its sites are then shown by id only. */
#ifndef VIGIL_CMD_SITEMAP_H
#define VIGIL_CMD_SITEMAP_H
#include <stddef.h>
#include <stdint.h>

#include "elfsites.h"
#include "runreport.h"

struct vigil_sitemap_module {
    const struct vigil_sitefmt_table *table;   /* NULL when unresolved */
    char problem[512];                         /* why unresolved ("" when resolved) */
};

struct vigil_sitemap {
    size_t nmodules;
    struct vigil_sitemap_module *modules;      /* parallel to the report's modules */
    size_t nbinaries;
    struct vigil_elf_sites *binaries;          /* one per distinct path, owning the tables */
};

/* Never fails on bad binaries (see problem); -1 only when out of memory. */
int vigil_sitemap_build(const struct vigil_run_report *r, struct vigil_sitemap *m);
/* 0 and *view, or -1 when the site's module is unresolved. */
int vigil_sitemap_lookup(const struct vigil_sitemap *m, uint32_t module, uint32_t index,
                         struct vigil_site_view *view);
void vigil_sitemap_free(struct vigil_sitemap *m);

/* Site indices of the report sorted by executions, most first (ties: process-wide id);
 * malloc'd, r->nsites entries. */
size_t *vigil_sites_by_execs(const struct vigil_run_report *r);
/* A rate as a short percentage: "100%", "10%", "0.1%", "0.0123%". */
void vigil_format_rate(double rate, char *buf, size_t len);

#endif
