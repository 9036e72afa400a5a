/* Site table encoder and bounds-checked decoder (layout in sitefmt.h).
 * Every multi-byte field is written and read byte by byte in little-endian order, so tables
 * read from a file need not be aligned and the format does not depend on the host. */
#include "sitefmt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_SIZE_V1 48u
#define HEADER_SIZE 56u
#define RECORD_SIZE 12u      /* version 3 */
#define RECORD_SIZE_V2 24u   /* versions 1 and 2 */
#define CFG_HEADER_SIZE 32u
_Static_assert(sizeof(struct vigil_sitefmt_header) == HEADER_SIZE, "header layout");
_Static_assert(sizeof(struct vigil_cfgfmt_header) == CFG_HEADER_SIZE, "cfg header layout");

/* The fields of a version 3 record (sitefmt.h): widths, and the shift of the field that shares
 * a word with another. */
enum { R_FUNCTION_BITS = 28, R_FILE_BITS = 24, R_LINE_BITS = 22, R_COLUMN_BITS = 10, R_AUX_BITS = 8 };
_Static_assert(VIGIL_SITE_KIND_MAX < 1u << (32 - R_FUNCTION_BITS), "kind fits beside the function name");

/* Byte offsets of the header fields (same as the struct, stated once for the byte codec). */
enum {
    H_MAGIC = 0, H_VERSION = 8, H_HEADER_SIZE = 12, H_TU_HASH = 16, H_NSITES = 24,
    H_RECORD_SIZE = 28, H_STRTAB_SIZE = 32, H_TOTAL_SIZE = 36, H_SOURCE = 40, H_FLAGS = 44,
    H_CFG_SIZE = 48, H_RESERVED = 52,
};
/* Control-flow facts: counts, then fixed-size rows (in uint32 words). */
enum { CFG_COUNTS = 4, CFG_FUNCTION_WORDS = 7, CFG_EDGE_WORDS = 3, CFG_CALL_WORDS = 3, CFG_SITE_WORDS = 2,
       CFG_REMOVED_WORDS = 3 };
enum { C_MAGIC = 0, C_VERSION = 8, C_HEADER_SIZE = 12, C_TU_HASH = 16, C_NSITES = 24, C_CFG_SIZE = 28 };

static const char *const kind_names[] = {
    [VIGIL_SITE_ENTRY] = "entry",   [VIGIL_SITE_BACKEDGE] = "backedge",
    [VIGIL_SITE_LOAD] = "load",     [VIGIL_SITE_STORE] = "store",
    [VIGIL_SITE_BRANCH] = "branch", [VIGIL_SITE_RETURN] = "return",
    [VIGIL_SITE_CALL] = "call",
};

const char *vigil_site_kind_name(enum vigil_site_kind kind)
{
    if ((unsigned)kind == 0 || (unsigned)kind > VIGIL_SITE_KIND_MAX)
        return "?";
    return kind_names[kind];
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static uint32_t low_bits(uint32_t v, unsigned bits)
{
    return v & ((UINT32_C(1) << bits) - 1);
}

/* v when it fits in `bits` bits, else 0 (unknown). */
static uint32_t fit(uint32_t v, unsigned bits)
{
    return v >> bits ? 0 : v;
}

/* ---- Decoder ---- */

struct record {
    uint32_t kind, function, file, line, column, aux;
};

static struct record read_record(const unsigned char *r, uint32_t record_size)
{
    if (record_size == RECORD_SIZE_V2)
        return (struct record){get32(r), get32(r + 4), get32(r + 8), get32(r + 12), get32(r + 16), get32(r + 20)};
    uint32_t w0 = get32(r), w1 = get32(r + 4), w2 = get32(r + 8);
    return (struct record){.kind = w0 >> R_FUNCTION_BITS, .function = low_bits(w0, R_FUNCTION_BITS),
                           .file = low_bits(w1, R_FILE_BITS), .aux = w1 >> R_FILE_BITS,
                           .line = low_bits(w2, R_LINE_BITS), .column = w2 >> R_LINE_BITS};
}

static void write_record(unsigned char *r, const struct record *v)
{
    put32(r, v->kind << R_FUNCTION_BITS | fit(v->function, R_FUNCTION_BITS));
    put32(r + 4, fit(v->aux, R_AUX_BITS) << R_FILE_BITS | fit(v->file, R_FILE_BITS));
    put32(r + 8, fit(v->column, R_COLUMN_BITS) << R_LINE_BITS | fit(v->line, R_LINE_BITS));
}

static int open_table(const void *buf, size_t len, struct vigil_sitefmt_table *t, int check_records,
                      char *err, size_t errlen)
{
    const unsigned char *p = buf;
    if (!buf || len < HEADER_SIZE)
        return fail(err, errlen, "site table truncated: %zu bytes, header needs %u", len, HEADER_SIZE);
    if (memcmp(p + H_MAGIC, VIGIL_SITEFMT_MAGIC, 8) != 0)
        return fail(err, errlen, "not a site table (bad magic)");
    uint32_t version = get32(p + H_VERSION);
    if (version < 1 || version > VIGIL_SITEFMT_VERSION)
        return fail(err, errlen, "site table version %u, expected 1 to %u", version, VIGIL_SITEFMT_VERSION);
    uint32_t expected_header = version == 1 ? HEADER_SIZE_V1 : HEADER_SIZE;
    uint32_t expected_record = version < 3 ? RECORD_SIZE_V2 : RECORD_SIZE;
    uint32_t header_size = get32(p + H_HEADER_SIZE), record_size = get32(p + H_RECORD_SIZE);
    if (header_size != expected_header || record_size != expected_record)
        return fail(err, errlen, "site table header/record size %u/%u, expected %u/%u for version %u",
                    header_size, record_size, expected_header, expected_record, version);
    if (len < header_size)
        return fail(err, errlen, "site table truncated: %zu bytes, header needs %u", len, header_size);
    uint32_t cfg_size = version == 1 ? 0 : get32(p + H_CFG_SIZE);
    if (cfg_size % 4 != 0 || (version > 1 && get32(p + H_RESERVED) != 0))
        return fail(err, errlen, "site table control-flow size %u not a multiple of 4 (or reserved field set)", cfg_size);
    uint32_t nsites = get32(p + H_NSITES), strtab_size = get32(p + H_STRTAB_SIZE);
    uint32_t total_size = get32(p + H_TOTAL_SIZE);
    /* 64-bit sums: 32-bit fields cannot overflow them. */
    uint64_t strings_at = (uint64_t)header_size + (uint64_t)nsites * record_size;
    uint64_t used = strings_at + strtab_size + cfg_size;
    if (total_size % 8 != 0 || total_size < used || used + 8 <= total_size)
        return fail(err, errlen, "site table size %u inconsistent with %u sites and %u string bytes",
                    total_size, nsites, strtab_size);
    if (total_size > len)
        return fail(err, errlen, "site table truncated: %zu bytes, table says %u", len, total_size);
    for (uint64_t i = used; i < total_size; i++)
        if (p[i] != 0)
            return fail(err, errlen, "site table padding is not zero");
    const char *strings = (const char *)p + strings_at;
    if (strtab_size == 0 || strings[0] != '\0' || strings[strtab_size - 1] != '\0')
        return fail(err, errlen, "site table string table malformed");
    uint32_t source = get32(p + H_SOURCE);
    if (source >= strtab_size)
        return fail(err, errlen, "site table source name offset %u out of range", source);
    for (uint32_t i = 0; check_records && i < nsites; i++) {
        struct record r = read_record(p + header_size + (uint64_t)i * record_size, record_size);
        if (r.kind == 0 || r.kind > VIGIL_SITE_KIND_MAX)
            return fail(err, errlen, "site %u: unknown kind %u", i, r.kind);
        if (r.function >= strtab_size || r.file >= strtab_size)
            return fail(err, errlen, "site %u: string offset out of range", i);
    }
    t->header = buf;
    t->records = p + header_size;
    t->strings = strings;
    t->nsites = nsites;
    t->strtab_size = strtab_size;
    t->record_size = record_size;
    t->cfg = cfg_size ? (const unsigned char *)strings + strtab_size : NULL;
    t->cfg_size = cfg_size;
    return 0;
}

int vigil_sitefmt_open(const void *buf, size_t len, struct vigil_sitefmt_table *t, char *err, size_t errlen)
{
    return open_table(buf, len, t, 1, err, errlen);
}

int vigil_sitefmt_open_lazy(const void *buf, size_t len, struct vigil_sitefmt_table *t, char *err, size_t errlen)
{
    return open_table(buf, len, t, 0, err, errlen);
}

void vigil_sitefmt_get(const struct vigil_sitefmt_table *t, uint32_t i, struct vigil_site_view *out)
{
    struct record r = read_record(t->records + (size_t)i * t->record_size, t->record_size);
    int bad = r.kind > VIGIL_SITE_KIND_MAX || r.function >= t->strtab_size || r.file >= t->strtab_size;
    out->kind = bad ? (enum vigil_site_kind)0 : (enum vigil_site_kind)r.kind;
    out->function = t->strings + (bad ? 0 : r.function);   /* strings[0] is the empty string */
    out->file = t->strings + (bad ? 0 : r.file);
    out->line = r.line;
    out->column = r.column;
    out->aux = r.aux;
}

int vigil_sitefmt_walk(const void *buf, size_t len,
                       int (*fn)(const struct vigil_sitefmt_table *t, void *arg), void *arg,
                       char *err, size_t errlen)
{
    const unsigned char *p = buf;
    size_t pos = 0;
    int ntables = 0;
    while (pos < len) {
        if (p[pos] == 0) {          /* padding the linker put between tables */
            pos++;
            continue;
        }
        struct vigil_sitefmt_table t;
        char why[160];
        if (vigil_sitefmt_open(p + pos, len - pos, &t, why, sizeof why) != 0)
            return fail(err, errlen, "at offset %zu: %s", pos, why);
        ntables++;
        if (fn && fn(&t, arg) != 0)
            break;
        pos += get32(p + pos + H_TOTAL_SIZE);
    }
    return ntables;
}

int vigil_sitefmt_attach_cfg(const void *buf, size_t len, struct vigil_sitefmt_table *tables, size_t ntables,
                             char *err, size_t errlen)
{
    const unsigned char *p = buf;
    size_t pos = 0;
    int attached = 0;
    while (pos < len) {
        if (p[pos] == 0) {          /* padding the linker put between blobs */
            pos++;
            continue;
        }
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
            if (t->cfg || t->nsites != nsites || get64((const unsigned char *)t->header + H_TU_HASH) != tu_hash)
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

/* ---- Encoder ---- */

struct vigil_sitefmt_builder {
    unsigned char *records;         /* encoded records */
    uint32_t nsites, records_cap;
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
                 &(struct record){(uint32_t)kind, function_off, file_off, line, column, aux});
    b->nsites++;
    return index;
}

uint32_t vigil_sitefmt_count(const struct vigil_sitefmt_builder *b)
{
    return b->nsites;
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
    uint64_t used = HEADER_SIZE + (uint64_t)b->nsites * RECORD_SIZE + b->strings_len;
    uint64_t total = (used + 7) & ~(uint64_t)7;
    unsigned char *out = NULL;
    if (!b->failed && total <= UINT32_MAX)
        out = calloc(1, total);
    if (out) {
        memcpy(out + H_MAGIC, VIGIL_SITEFMT_MAGIC, 8);
        put32(out + H_VERSION, VIGIL_SITEFMT_VERSION);
        put32(out + H_HEADER_SIZE, HEADER_SIZE);
        put64(out + H_TU_HASH, tu_hash);
        put32(out + H_NSITES, b->nsites);
        put32(out + H_RECORD_SIZE, RECORD_SIZE);
        put32(out + H_STRTAB_SIZE, b->strings_len);
        put32(out + H_TOTAL_SIZE, (uint32_t)total);
        put32(out + H_SOURCE, b->source);
        put32(out + H_FLAGS, 0);
        put32(out + H_CFG_SIZE, 0);   /* the facts live in their own section */
        if (b->nsites)
            memcpy(out + HEADER_SIZE, b->records, (size_t)b->nsites * RECORD_SIZE);
        memcpy(out + HEADER_SIZE + (size_t)b->nsites * RECORD_SIZE, b->strings, b->strings_len);
        *len = (size_t)total;
    } else if (cfg) {
        free(*cfg);
        *cfg = NULL;
    }
    builder_free(b);
    return out;
}

/* ---- Control-flow facts ---- */

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
