/* Site table encoder, used by vigil-cc (and by tests): records, strings and the control-flow
 * facts, grown with malloc (sitefmt.h). */
#include "sitefmt_layout.h"

#include <stdlib.h>
#include <string.h>

struct vigil_sitefmt_builder {
    unsigned char *records;         /* encoded records (version 3 layout until finish) */
    uint32_t nsites, records_cap;
    uint8_t *flags;                 /* per site, made by the first vigil_sitefmt_set_flags; NULL: none */
    uint32_t flags_cap;
    int has_flags;                  /* some site has flags: the table is written as version 4 */
    uint32_t *inlined;              /* per site: its source function's string (0: not inlined);
                                       made by the first vigil_sitefmt_set_inlined */
    uint32_t inlined_cap;
    int has_inlined;                /* some site is in inlined code: version 5 */
    char *strings;                  /* string table, offset 0 = "" */
    uint32_t strings_len, strings_cap;
    uint32_t *slots;                /* open-addressing set of string offsets (0 = empty) */
    uint32_t nslots, nused;
    uint32_t source;
    int failed;                     /* an allocation failed: finish returns NULL */
    /* control-flow facts, as uint32 words per section (see sitefmt.h) */
    struct words { uint32_t *v; uint32_t n, cap; } functions, edges, exits, calls, sites, removed;
    int has_cfg;
};

static uint32_t hash_string(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int grow(void **buf, uint32_t *cap, uint64_t need)
{
    if (need <= *cap)
        return 0;
    uint64_t ncap = *cap ? *cap : 256;
    while (ncap < need)
        ncap *= 2;
    if (ncap > UINT32_MAX)
        return -1;
    void *n = realloc(*buf, ncap);
    if (!n)
        return -1;
    *buf = n;
    *cap = (uint32_t)ncap;
    return 0;
}

static int rehash(struct vigil_sitefmt_builder *b)
{
    uint32_t nslots = b->nslots ? b->nslots * 2 : 64;
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t i = 0; i < b->nslots; i++) {
        uint32_t off = b->slots[i];
        if (!off)
            continue;
        uint32_t j = hash_string(b->strings + off) & (nslots - 1);
        while (slots[j])
            j = (j + 1) & (nslots - 1);
        slots[j] = off;
    }
    free(b->slots);
    b->slots = slots;
    b->nslots = nslots;
    return 0;
}

/* The offset of s in the string table, adding it once. */
static uint32_t intern(struct vigil_sitefmt_builder *b, const char *s)
{
    if (!s || !*s || b->failed)
        return 0;
    if ((b->nused + 1) * 2 > b->nslots && rehash(b) != 0) {
        b->failed = 1;
        return 0;
    }
    uint32_t j = hash_string(s) & (b->nslots - 1);
    for (; b->slots[j]; j = (j + 1) & (b->nslots - 1))
        if (strcmp(b->strings + b->slots[j], s) == 0)
            return b->slots[j];
    size_t n = strlen(s) + 1;
    if (grow((void **)&b->strings, &b->strings_cap, (uint64_t)b->strings_len + n) != 0) {
        b->failed = 1;
        return 0;
    }
    uint32_t off = b->strings_len;
    memcpy(b->strings + off, s, n);
    b->strings_len += (uint32_t)n;
    b->slots[j] = off;
    b->nused++;
    return off;
}

struct vigil_sitefmt_builder *vigil_sitefmt_builder_new(const char *source)
{
    struct vigil_sitefmt_builder *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    if (grow((void **)&b->strings, &b->strings_cap, 1) != 0) {
        free(b);
        return NULL;
    }
    b->strings[0] = '\0';
    b->strings_len = 1;
    b->source = intern(b, source);
    return b;
}

uint32_t vigil_sitefmt_add(struct vigil_sitefmt_builder *b, enum vigil_site_kind kind,
                           const char *function, const char *file, uint32_t line,
                           uint32_t column, uint32_t aux)
{
    uint32_t index = b->nsites;
    uint32_t function_off = intern(b, function), file_off = intern(b, file);
    if (b->failed || grow((void **)&b->records, &b->records_cap,
                          (uint64_t)(b->nsites + 1) * RECORD_SIZE) != 0) {
        b->failed = 1;
        b->nsites++;    /* keep indices consistent; the table will not be produced */
        return index;
    }
    write_record(b->records + (size_t)index * RECORD_SIZE,
                 &(struct record){(uint32_t)kind, function_off, file_off, line, column, aux, 0}, 3);
    b->nsites++;
    return index;
}

uint32_t vigil_sitefmt_count(const struct vigil_sitefmt_builder *b)
{
    return b->nsites;
}

void vigil_sitefmt_set_flags(struct vigil_sitefmt_builder *b, uint32_t index, uint32_t flags)
{
    flags &= VIGIL_SITE_FLAGS_ALL;
    if (b->failed || index >= b->nsites || (!flags && !b->flags))
        return;
    if (index >= b->flags_cap) {
        uint32_t old = b->flags_cap;
        if (grow((void **)&b->flags, &b->flags_cap, (uint64_t)index + 1) != 0) {
            b->failed = 1;
            return;
        }
        memset(b->flags + old, 0, b->flags_cap - old);
    }
    b->flags[index] = (uint8_t)flags;
    b->has_flags |= flags != 0;
}

void vigil_sitefmt_set_inlined(struct vigil_sitefmt_builder *b, uint32_t index, const char *function)
{
    if (b->failed || index >= b->nsites || !function || !function[0])
        return;
    uint32_t name = intern(b, function);
    if (index >= b->inlined_cap) {
        uint32_t old = b->inlined_cap, bytes = old * (uint32_t)sizeof *b->inlined;
        if (grow((void **)&b->inlined, &bytes, ((uint64_t)index + 1) * sizeof *b->inlined) != 0) {
            b->failed = 1;
            return;
        }
        b->inlined_cap = bytes / (uint32_t)sizeof *b->inlined;
        memset(b->inlined + old, 0, (b->inlined_cap - old) * sizeof *b->inlined);
    }
    b->inlined[index] = name;
    b->has_inlined = 1;
}

static void push(struct vigil_sitefmt_builder *b, struct words *w, const uint32_t *v, uint32_t n)
{
    if (b->failed)
        return;
    if (w->n + n > w->cap) {
        uint32_t cap = w->cap ? w->cap * 2 : 64;
        while (cap < w->n + n)
            cap *= 2;
        uint32_t *grown = realloc(w->v, (size_t)cap * sizeof *grown);
        if (!grown) {
            b->failed = 1;
            return;
        }
        w->v = grown;
        w->cap = cap;
    }
    memcpy(w->v + w->n, v, n * sizeof *v);
    w->n += n;
}

uint32_t vigil_sitefmt_add_function(struct vigil_sitefmt_builder *b, const char *name, uint32_t nblocks,
                                    uint32_t flags)
{
    b->has_cfg = 1;
    uint32_t row[CFG_FUNCTION_WORDS] = {intern(b, name), nblocks, flags, b->edges.n / CFG_EDGE_WORDS, 0,
                                        b->exits.n, 0};
    push(b, &b->functions, row, CFG_FUNCTION_WORDS);
    return b->functions.n / CFG_FUNCTION_WORDS - 1;
}

void vigil_sitefmt_add_edge(struct vigil_sitefmt_builder *b, uint32_t from, uint32_t to, uint32_t label)
{
    uint32_t row[CFG_EDGE_WORDS] = {from, to, label};
    push(b, &b->edges, row, CFG_EDGE_WORDS);
    if (!b->failed && b->functions.n)
        b->functions.v[b->functions.n - CFG_FUNCTION_WORDS + 4]++;
}

void vigil_sitefmt_add_exit(struct vigil_sitefmt_builder *b, uint32_t block)
{
    push(b, &b->exits, &block, 1);
    if (!b->failed && b->functions.n)
        b->functions.v[b->functions.n - CFG_FUNCTION_WORDS + 6]++;
}

void vigil_sitefmt_add_call(struct vigil_sitefmt_builder *b, uint32_t function, uint32_t block, const char *callee)
{
    uint32_t row[CFG_CALL_WORDS] = {function, block, intern(b, callee)};
    push(b, &b->calls, row, CFG_CALL_WORDS);
}

void vigil_sitefmt_set_block(struct vigil_sitefmt_builder *b, uint32_t site, uint32_t function, uint32_t block)
{
    while (!b->failed && b->sites.n / CFG_SITE_WORDS <= site) {
        uint32_t none[CFG_SITE_WORDS] = {VIGIL_CFG_NONE, VIGIL_CFG_NONE};
        push(b, &b->sites, none, CFG_SITE_WORDS);
    }
    if (!b->failed) {
        b->sites.v[site * CFG_SITE_WORDS] = function;
        b->sites.v[site * CFG_SITE_WORDS + 1] = block;
    }
}

void vigil_sitefmt_add_removed(struct vigil_sitefmt_builder *b, uint32_t site, uint32_t predicate, uint32_t source)
{
    uint32_t row[CFG_REMOVED_WORDS] = {site, predicate, source};
    push(b, &b->removed, row, CFG_REMOVED_WORDS);
}

static void builder_free(struct vigil_sitefmt_builder *b)
{
    free(b->removed.v);
    free(b->functions.v);
    free(b->edges.v);
    free(b->exits.v);
    free(b->calls.v);
    free(b->sites.v);
    free(b->records);
    free(b->flags);
    free(b->inlined);
    free(b->strings);
    free(b->slots);
    free(b);
}

/* The control-flow facts as a "vigil_cfg" blob (sitefmt.h), or NULL when there are none. */
static unsigned char *encode_cfg(struct vigil_sitefmt_builder *b, uint64_t tu_hash, size_t *len)
{
    if (!b->has_cfg || b->failed)
        return NULL;
    uint32_t none[CFG_SITE_WORDS] = {VIGIL_CFG_NONE, VIGIL_CFG_NONE};   /* every site gets its row */
    while (!b->failed && b->sites.n / CFG_SITE_WORDS < b->nsites)
        push(b, &b->sites, none, CFG_SITE_WORDS);
    uint64_t words = CFG_COUNTS + (uint64_t)b->functions.n + b->edges.n + b->exits.n + b->calls.n +
                     (uint64_t)b->nsites * CFG_SITE_WORDS + 1 + b->removed.n;
    uint64_t total = (CFG_HEADER_SIZE + words * 4 + 7) & ~(uint64_t)7;
    unsigned char *out = NULL;
    if (!b->failed && words * 4 <= UINT32_MAX)
        out = calloc(1, total);
    if (!out)
        return NULL;
    memcpy(out + C_MAGIC, VIGIL_CFGFMT_MAGIC, 8);
    put32(out + C_VERSION, VIGIL_CFGFMT_VERSION);
    put32(out + C_HEADER_SIZE, CFG_HEADER_SIZE);
    put64(out + C_TU_HASH, tu_hash);
    put32(out + C_NSITES, b->nsites);
    put32(out + C_CFG_SIZE, (uint32_t)(words * 4));
    uint32_t counts[CFG_COUNTS] = {b->functions.n / CFG_FUNCTION_WORDS, b->edges.n / CFG_EDGE_WORDS,
                                   b->exits.n, b->calls.n / CFG_CALL_WORDS};
    uint32_t nremoved = b->removed.n / CFG_REMOVED_WORDS;
    const struct words parts[] = {{counts, CFG_COUNTS, 0}, b->functions, b->edges, b->exits, b->calls,
                                  {b->sites.v, b->nsites * CFG_SITE_WORDS, 0}, {&nremoved, 1, 0}, b->removed};
    unsigned char *w = out + CFG_HEADER_SIZE;
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
        for (uint32_t i = 0; i < parts[k].n; i++, w += 4)
            put32(w, parts[k].v[i]);
    *len = (size_t)total;
    return out;
}

unsigned char *vigil_sitefmt_finish(struct vigil_sitefmt_builder *b, uint64_t tu_hash, size_t *len,
                                    unsigned char **cfg, size_t *cfg_len)
{
    if (cfg)
        *cfg = encode_cfg(b, tu_hash, cfg_len);
    /* The oldest version that holds the table: 5 when a site is in inlined code, 4 when a site
     * has flags, else 3. */
    uint32_t version = b->has_inlined ? 5 : b->has_flags ? 4 : 3, rsize = record_size_of(version);
    uint64_t used = HEADER_SIZE + (uint64_t)b->nsites * rsize + b->strings_len;
    uint64_t total = (used + 7) & ~(uint64_t)7;
    unsigned char *out = NULL;
    if (!b->failed && total <= UINT32_MAX)
        out = calloc(1, total);
    if (out) {
        memcpy(out + H_MAGIC, VIGIL_SITEFMT_MAGIC, 8);
        put32(out + H_VERSION, version);
        put32(out + H_HEADER_SIZE, HEADER_SIZE);
        put64(out + H_TU_HASH, tu_hash);
        put32(out + H_NSITES, b->nsites);
        put32(out + H_RECORD_SIZE, rsize);
        put32(out + H_STRTAB_SIZE, b->strings_len);
        put32(out + H_TOTAL_SIZE, (uint32_t)total);
        put32(out + H_SOURCE, b->source);
        put32(out + H_FLAGS, 0);
        put32(out + H_CFG_SIZE, 0);   /* the facts live in their own section */
        for (uint32_t i = 0; i < b->nsites; i++) {
            struct record v = read_record(b->records + (size_t)i * RECORD_SIZE, 3);
            v.flags = i < b->flags_cap ? b->flags[i] : 0;
            v.inlined = i < b->inlined_cap ? b->inlined[i] : 0;
            /* a name beyond version 4's 24 bits becomes unknown */
            write_record(out + HEADER_SIZE + (size_t)i * rsize, &v, version);
        }
        memcpy(out + HEADER_SIZE + (size_t)b->nsites * rsize, b->strings, b->strings_len);
        *len = (size_t)total;
    } else if (cfg) {
        free(*cfg);
        *cfg = NULL;
    }
    builder_free(b);
    return out;
}

