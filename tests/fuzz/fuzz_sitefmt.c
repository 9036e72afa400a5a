/* libFuzzer harness: the site tables and control-flow facts the vigil command reads from a
 * file. The input is a "vigil_sites" section, optionally followed by a "vigil_cfg" section
 * starting at the first VIGIL_CFGFMT_MAGIC. Decoding must never read out of bounds; every site
 * of every table accepted must decode to in-bounds, NUL-terminated strings, and every table's
 * facts must decode or be rejected with a reason. */
#include <stdlib.h>
#include <string.h>

#include "sitefmt.h"

struct tables {
    struct vigil_sitefmt_table t[64];
    size_t n;
    size_t bytes;
};

static int visit_table(const struct vigil_sitefmt_table *t, void *arg)
{
    struct tables *all = arg;
    for (uint32_t i = 0; i < t->nsites; i++) {
        struct vigil_site_view v;
        vigil_sitefmt_get(t, i, &v);
        /* strlen walks to the NUL: ASan catches any string running past the buffer */
        all->bytes += strlen(v.function) + strlen(v.file) + strlen(v.inlined) + strlen(vigil_site_kind_name(v.kind));
    }
    if (all->n < sizeof all->t / sizeof all->t[0])
        all->t[all->n++] = *t;
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    size_t sites_len = size;
    for (size_t i = 0; i + 8 <= size; i++)
        if (memcmp(data + i, VIGIL_CFGFMT_MAGIC, 8) == 0) {
            sites_len = i;
            break;
        }
    /* Private copies of exactly the sections' sizes, so that ASan sees their true ends. */
    unsigned char *sites = malloc(sites_len ? sites_len : 1), *cfg = malloc(size - sites_len + 1);
    if (!sites || !cfg)
        abort();
    memcpy(sites, data, sites_len);
    memcpy(cfg, data + sites_len, size - sites_len);
    char err[256] = "";
    struct tables *all = calloc(1, sizeof *all);
    int n = vigil_sitefmt_walk(sites, sites_len, visit_table, all, err, sizeof err);
    if (n < 0 && err[0] == '\0')
        abort();   /* a rejection must say why */
    err[0] = '\0';
    if (size > sites_len && vigil_sitefmt_attach_cfg(cfg, size - sites_len, all->t, all->n, err, sizeof err) < 0 &&
        err[0] == '\0')
        abort();
    for (size_t k = 0; k < all->n; k++) {
        struct vigil_cfg facts;
        err[0] = '\0';
        int rc = vigil_sitefmt_cfg(&all->t[k], &facts, err, sizeof err);
        if (rc < 0 && err[0] == '\0')
            abort();
        for (uint32_t i = 0; rc == 1 && i < facts.nfunctions; i++)
            all->bytes += strlen(facts.functions[i].name);
        for (uint32_t i = 0; rc == 1 && i < facts.ncalls; i++)
            all->bytes += strlen(facts.calls[i].callee);
        if (rc == 1)
            vigil_cfg_free(&facts);
    }
    free(all);
    free(sites);
    free(cfg);
    return 0;
}
