/* Site table decoder, bounds-checked (layout in sitefmt.h and sitefmt_layout.h). */
#include "sitefmt_layout.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {
    [VIGIL_SITE_ENTRY] = "entry",   [VIGIL_SITE_BACKEDGE] = "backedge",
    [VIGIL_SITE_LOAD] = "load",     [VIGIL_SITE_STORE] = "store",
    [VIGIL_SITE_BRANCH] = "branch", [VIGIL_SITE_RETURN] = "return",
    [VIGIL_SITE_CALL] = "call",     [VIGIL_SITE_CASE] = "case",
};

const char *vigil_site_kind_name(enum vigil_site_kind kind)
{
    if ((unsigned)kind == 0 || (unsigned)kind > VIGIL_SITE_KIND_MAX)
        return "?";
    return kind_names[kind];
}

const char *vigil_site_ordering_name(uint32_t flags)
{
    static const char *const names[] = {"relaxed", "acquire", "release", "acq_rel"};
    if (!(flags & VIGIL_SITE_ATOMIC))
        return NULL;
    return names[(flags & VIGIL_SITE_ACQUIRE ? 1 : 0) | (flags & VIGIL_SITE_RELEASE ? 2 : 0)];
}

/* ---- Decoder ---- */

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
    uint32_t expected_record = record_size_of(version);
    uint32_t header_size = get32(p + H_HEADER_SIZE), record_size = get32(p + H_RECORD_SIZE);
    if (header_size != expected_header || record_size != expected_record)
        return fail(err, errlen, "site table header/record size %u/%u, expected %u/%u for version %u",
                    header_size, record_size, expected_header, expected_record, version);
    if (len < header_size)
        return fail(err, errlen, "site table truncated: %zu bytes, header needs %u", len, header_size);
    uint32_t cfg_size = version == 1 ? 0 : get32(p + H_CFG_SIZE);
    if (cfg_size % 4 != 0 || (version > 1 && get32(p + H_RESERVED) != 0))
        return fail(err, errlen, "site table control-flow size %u not a multiple of 4 (or reserved field set)", cfg_size);
    if (version >= 3 && cfg_size != 0)
        return fail(err, errlen, "site table version %u with %u bytes of inline control-flow facts; "
                    "expected 0 (they live in the \"" VIGIL_CFG_SECTION "\" section)", version, cfg_size);
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
        struct record r = read_record(p + header_size + (uint64_t)i * record_size, version);
        if (r.kind == 0 || r.kind > VIGIL_SITE_KIND_MAX)
            return fail(err, errlen, "site %u: unknown kind %u", i, r.kind);
        if (r.function >= strtab_size || r.file >= strtab_size || r.inlined >= strtab_size)
            return fail(err, errlen, "site %u: string offset out of range", i);
    }
    t->header = buf;
    t->records = p + header_size;
    t->strings = strings;
    t->nsites = nsites;
    t->strtab_size = strtab_size;
    t->record_size = record_size;
    t->version = version;
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

uint64_t vigil_sitefmt_tu_hash(const struct vigil_sitefmt_table *t)
{
    return get64((const unsigned char *)t->header + H_TU_HASH);
}

const char *vigil_sitefmt_source(const struct vigil_sitefmt_table *t)
{
    return t->strings + get32((const unsigned char *)t->header + H_SOURCE);   /* checked at open */
}

void vigil_sitefmt_get(const struct vigil_sitefmt_table *t, uint32_t i, struct vigil_site_view *out)
{
    struct record r = read_record(t->records + (size_t)i * t->record_size, t->version);
    int bad = r.kind > VIGIL_SITE_KIND_MAX || r.function >= t->strtab_size || r.file >= t->strtab_size;
    out->kind = bad ? (enum vigil_site_kind)0 : (enum vigil_site_kind)r.kind;
    out->function = t->strings + (bad ? 0 : r.function);   /* strings[0] is the empty string */
    out->file = t->strings + (bad ? 0 : r.file);
    out->line = r.line;
    out->column = r.column;
    out->aux = r.aux;
    out->flags = bad ? 0 : r.flags;
    out->inlined = t->strings + (bad || r.inlined >= t->strtab_size ? 0 : r.inlined);
}

/* Each valid table of a section in turn; lazy: without the pass over every record. */
static int walk_tables(const void *buf, size_t len, int lazy,
                       int (*fn)(const struct vigil_sitefmt_table *t, void *arg), void *arg,
                       char *err, size_t errlen)
{
    const unsigned char *p = buf;
    size_t pos = 0;
    int ntables = 0;
    while ((pos = skip_padding(p, len, pos)) < len) {
        struct vigil_sitefmt_table t;
        char why[160];
        if (open_table(p + pos, len - pos, &t, !lazy, why, sizeof why) != 0)
            return fail(err, errlen, "at offset %zu: %s", pos, why);
        ntables++;
        if (fn && fn(&t, arg) != 0)
            break;
        pos += get32(p + pos + H_TOTAL_SIZE);
    }
    return ntables;
}

int vigil_sitefmt_walk(const void *buf, size_t len,
                       int (*fn)(const struct vigil_sitefmt_table *t, void *arg), void *arg,
                       char *err, size_t errlen)
{
    return walk_tables(buf, len, 0, fn, arg, err, errlen);
}

struct wanted_table {
    uint64_t tu_hash;
    uint32_t nsites;
    struct vigil_sitefmt_table *out;
    int found;
};

static int take_if_wanted(const struct vigil_sitefmt_table *t, void *arg)
{
    struct wanted_table *w = arg;
    if (vigil_sitefmt_tu_hash(t) != w->tu_hash || t->nsites != w->nsites)
        return 0;
    *w->out = *t;
    w->found = 1;
    return 1;
}

int vigil_sitefmt_find(const void *buf, size_t len, uint64_t tu_hash, uint32_t nsites,
                       struct vigil_sitefmt_table *t, char *err, size_t errlen)
{
    struct wanted_table w = {tu_hash, nsites, t, 0};
    if (walk_tables(buf, len, 1, take_if_wanted, &w, err, errlen) < 0)
        return -1;
    return w.found ? 0 : 1;
}
