/* Control-flow facts: found in a "vigil_cfg" section and decoded, bounds-checked (sitefmt.h).
 * Only the vigil command reads them. */
#include "sitefmt_layout.h"

#include <stdlib.h>
#include <string.h>

int vigil_sitefmt_attach_cfg(const void *buf, size_t len, struct vigil_sitefmt_table *tables, size_t ntables,
                             char *err, size_t errlen)
{
    const unsigned char *p = buf;
    size_t pos = 0;
    int attached = 0;
    while ((pos = skip_padding(p, len, pos)) < len) {
        if (len - pos < CFG_HEADER_SIZE || memcmp(p + pos + C_MAGIC, VIGIL_CFGFMT_MAGIC, 8) != 0)
            return fail(err, errlen, "at offset %zu: not control-flow facts (bad magic or truncated header)", pos);
        uint32_t version = get32(p + pos + C_VERSION), header_size = get32(p + pos + C_HEADER_SIZE);
        uint32_t cfg_size = get32(p + pos + C_CFG_SIZE);
        if (version != VIGIL_CFGFMT_VERSION || header_size != CFG_HEADER_SIZE || cfg_size % 4 != 0)
            return fail(err, errlen, "at offset %zu: control-flow facts version %u, header size %u, size %u; "
                        "expected version %u, header size %u and a multiple of 4", pos, version, header_size,
                        cfg_size, VIGIL_CFGFMT_VERSION, CFG_HEADER_SIZE);
        uint64_t used = (uint64_t)CFG_HEADER_SIZE + cfg_size, total = (used + 7) & ~(uint64_t)7;
        if (total > len - pos)
            return fail(err, errlen, "at offset %zu: control-flow facts truncated: %zu bytes, header says %llu",
                        pos, len - pos, (unsigned long long)total);
        for (uint64_t i = used; i < total; i++)
            if (p[pos + i] != 0)
                return fail(err, errlen, "at offset %zu: control-flow facts padding is not zero", pos);
        uint64_t tu_hash = get64(p + pos + C_TU_HASH);
        uint32_t nsites = get32(p + pos + C_NSITES);
        for (size_t k = 0; k < ntables; k++) {
            struct vigil_sitefmt_table *t = &tables[k];
            if (t->cfg || t->nsites != nsites || vigil_sitefmt_tu_hash(t) != tu_hash)
                continue;
            t->cfg = p + pos + CFG_HEADER_SIZE;
            t->cfg_size = cfg_size;
            attached++;
            break;
        }
        pos += (size_t)total;
    }
    return attached;
}

void vigil_cfg_free(struct vigil_cfg *cfg)
{
    free(cfg->functions);
    free(cfg->edges);
    free(cfg->exits);
    free(cfg->calls);
    free(cfg->site_function);
    free(cfg->site_block);
    free(cfg->removed);
    memset(cfg, 0, sizeof *cfg);
}

int vigil_sitefmt_cfg(const struct vigil_sitefmt_table *t, struct vigil_cfg *cfg, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    if (!t->cfg || t->cfg_size == 0)
        return 0;
    uint32_t strtab_size = t->strtab_size;
    uint64_t nwords = t->cfg_size / 4;
    const unsigned char *w = t->cfg;
    if (nwords < CFG_COUNTS)
        return fail(err, errlen, "control-flow facts truncated");
    uint32_t nf = get32(w), ne = get32(w + 4), nx = get32(w + 8), nc = get32(w + 12);
    uint64_t need = CFG_COUNTS + (uint64_t)nf * CFG_FUNCTION_WORDS + (uint64_t)ne * CFG_EDGE_WORDS + nx +
                    (uint64_t)nc * CFG_CALL_WORDS + (uint64_t)t->nsites * CFG_SITE_WORDS;
    /* optional trailer: removed branch predicates (older tables end before it) */
    uint32_t nr = 0;
    const unsigned char *rw = w + 4 * need;
    if (nwords > need)
        nr = get32(rw);
    if (need + (nwords > need) + (uint64_t)nr * CFG_REMOVED_WORDS != nwords)
        return fail(err, errlen, "control-flow facts: %llu words, counts say %llu",
                    (unsigned long long)nwords, (unsigned long long)(need + (nwords > need) + (uint64_t)nr * CFG_REMOVED_WORDS));
    cfg->nfunctions = nf, cfg->nedges = ne, cfg->nexits = nx, cfg->ncalls = nc, cfg->nsites = t->nsites;
    cfg->functions = calloc(nf + 1, sizeof *cfg->functions);
    cfg->edges = calloc(ne + 1, sizeof *cfg->edges);
    cfg->exits = calloc(nx + 1, sizeof *cfg->exits);
    cfg->calls = calloc(nc + 1, sizeof *cfg->calls);
    cfg->site_function = calloc(t->nsites + 1, sizeof *cfg->site_function);
    cfg->site_block = calloc(t->nsites + 1, sizeof *cfg->site_block);
    if (!cfg->functions || !cfg->edges || !cfg->exits || !cfg->calls || !cfg->site_function || !cfg->site_block) {
        vigil_cfg_free(cfg);
        return fail(err, errlen, "out of memory");
    }
    const unsigned char *fw = w + 4 * CFG_COUNTS, *ew = fw + 4 * (size_t)nf * CFG_FUNCTION_WORDS;
    const unsigned char *xw = ew + 4 * (size_t)ne * CFG_EDGE_WORDS, *cw = xw + 4 * (size_t)nx;
    const unsigned char *sw = cw + 4 * (size_t)nc * CFG_CALL_WORDS;
    for (uint32_t i = 0; i < ne; i++)
        cfg->edges[i] = (struct vigil_cfg_edge){get32(ew + 12 * (size_t)i), get32(ew + 12 * (size_t)i + 4),
                                                get32(ew + 12 * (size_t)i + 8)};
    for (uint32_t i = 0; i < nx; i++)
        cfg->exits[i] = get32(xw + 4 * (size_t)i);
    const char *why = NULL;
    uint32_t bad = 0;
    for (uint32_t i = 0; i < nf && !why; i++) {
        const unsigned char *r = fw + 4 * (size_t)i * CFG_FUNCTION_WORDS;
        uint32_t name = get32(r), first_edge = get32(r + 12), first_exit = get32(r + 20);
        struct vigil_cfg_function *f = &cfg->functions[i];
        f->nblocks = get32(r + 4), f->flags = get32(r + 8), f->nedges = get32(r + 16), f->nexits = get32(r + 24);
        if (name >= strtab_size || (uint64_t)first_edge + f->nedges > ne || (uint64_t)first_exit + f->nexits > nx) {
            why = "name or edge/exit range out of bounds", bad = i;
            break;
        }
        f->name = t->strings + name;
        f->edges = cfg->edges + first_edge;
        f->exits = cfg->exits + first_exit;
        for (uint32_t k = 0; k < f->nedges && !why; k++)
            if (f->edges[k].from >= f->nblocks || f->edges[k].to >= f->nblocks)
                why = "edge names a block out of range", bad = i;
        for (uint32_t k = 0; k < f->nexits && !why; k++)
            if (f->exits[k] >= f->nblocks)
                why = "exit block out of range", bad = i;
    }
    if (why) {
        vigil_cfg_free(cfg);
        return fail(err, errlen, "control-flow facts: function %u: %s", bad, why);
    }
    for (uint32_t i = 0; i < nc; i++) {
        const unsigned char *r = cw + 12 * (size_t)i;
        uint32_t fn = get32(r), block = get32(r + 4), callee = get32(r + 8);
        if (fn >= nf || block >= cfg->functions[fn].nblocks || callee >= strtab_size) {
            vigil_cfg_free(cfg);
            return fail(err, errlen, "control-flow facts: call %u out of range", i);
        }
        cfg->calls[i] = (struct vigil_cfg_call){fn, block, t->strings + callee};
    }
    for (uint32_t i = 0; i < t->nsites; i++) {
        uint32_t fn = get32(sw + 8 * (size_t)i), block = get32(sw + 8 * (size_t)i + 4);
        if (fn != VIGIL_CFG_NONE && (fn >= nf || (block != VIGIL_CFG_NONE && block >= cfg->functions[fn].nblocks))) {
            vigil_cfg_free(cfg);
            return fail(err, errlen, "control-flow facts: site %u names function %u block %u out of range", i, fn, block);
        }
        cfg->site_function[i] = fn;
        cfg->site_block[i] = block;
    }
    cfg->nremoved = nr;
    cfg->removed = calloc(nr + 1, sizeof *cfg->removed);
    if (!cfg->removed) {
        vigil_cfg_free(cfg);
        return fail(err, errlen, "out of memory");
    }
    for (uint32_t i = 0; i < nr; i++) {
        const unsigned char *r = rw + 4 + 12 * (size_t)i;
        struct vigil_cfg_removed *x = &cfg->removed[i];
        *x = (struct vigil_cfg_removed){get32(r), get32(r + 4), get32(r + 8)};
        struct vigil_site_view site, source;
        if (x->site < t->nsites && x->source < t->nsites) {
            vigil_sitefmt_get(t, x->site, &site);
            vigil_sitefmt_get(t, x->source, &source);
        }
        if (x->site >= t->nsites || x->source >= t->nsites || x->site == x->source || site.kind != VIGIL_SITE_BRANCH ||
            x->predicate >= 2 || (source.kind != VIGIL_SITE_BRANCH && source.kind != VIGIL_SITE_RETURN)) {
            vigil_cfg_free(cfg);
            return fail(err, errlen, "control-flow facts: removed predicate %u: expected a branch site, "
                        "predicate 0 or 1 and a branch or return source site", i);
        }
    }
    return 1;
}
