/* Site table encoder and bounds-checked decoder (layout in sitefmt.h).
 * Every multi-byte field is written and read byte by byte in little-endian order, so tables
 * read from a file need not be aligned and the format does not depend on the host. */
#include "sitefmt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_SIZE 48u
#define RECORD_SIZE 24u
_Static_assert(sizeof(struct vigil_sitefmt_header) == HEADER_SIZE, "header layout");
_Static_assert(sizeof(struct vigil_sitefmt_record) == RECORD_SIZE, "record layout");

/* Byte offsets of the header fields (same as the struct, stated once for the byte codec). */
enum {
    H_MAGIC = 0, H_VERSION = 8, H_HEADER_SIZE = 12, H_TU_HASH = 16, H_NSITES = 24,
    H_RECORD_SIZE = 28, H_STRTAB_SIZE = 32, H_TOTAL_SIZE = 36, H_SOURCE = 40, H_FLAGS = 44,
};
enum { R_KIND = 0, R_FUNCTION = 4, R_FILE = 8, R_LINE = 12, R_COLUMN = 16, R_AUX = 20 };

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

/* ---- Decoder ---- */

int vigil_sitefmt_open(const void *buf, size_t len, struct vigil_sitefmt_table *t,
                       char *err, size_t errlen)
{
    const unsigned char *p = buf;
    if (!buf || len < HEADER_SIZE)
        return fail(err, errlen, "site table truncated: %zu bytes, header needs %u", len, HEADER_SIZE);
    if (memcmp(p + H_MAGIC, VIGIL_SITEFMT_MAGIC, 8) != 0)
        return fail(err, errlen, "not a site table (bad magic)");
    uint32_t version = get32(p + H_VERSION);
    if (version != VIGIL_SITEFMT_VERSION)
        return fail(err, errlen, "site table version %u, expected %u", version, VIGIL_SITEFMT_VERSION);
    uint32_t header_size = get32(p + H_HEADER_SIZE), record_size = get32(p + H_RECORD_SIZE);
    if (header_size != HEADER_SIZE || record_size != RECORD_SIZE)
        return fail(err, errlen, "site table header/record size %u/%u, expected %u/%u",
                    header_size, record_size, HEADER_SIZE, RECORD_SIZE);
    uint32_t nsites = get32(p + H_NSITES), strtab_size = get32(p + H_STRTAB_SIZE);
    uint32_t total_size = get32(p + H_TOTAL_SIZE);
    /* 64-bit sums: 32-bit fields cannot overflow them. */
    uint64_t strings_at = (uint64_t)HEADER_SIZE + (uint64_t)nsites * RECORD_SIZE;
    uint64_t used = strings_at + strtab_size;
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
    for (uint32_t i = 0; i < nsites; i++) {
        const unsigned char *r = p + HEADER_SIZE + (uint64_t)i * RECORD_SIZE;
        uint32_t kind = get32(r + R_KIND);
        if (kind == 0 || kind > VIGIL_SITE_KIND_MAX)
            return fail(err, errlen, "site %u: unknown kind %u", i, kind);
        if (get32(r + R_FUNCTION) >= strtab_size || get32(r + R_FILE) >= strtab_size)
            return fail(err, errlen, "site %u: string offset out of range", i);
    }
    t->header = buf;
    t->records = p + HEADER_SIZE;
    t->strings = strings;
    t->nsites = nsites;
    return 0;
}

void vigil_sitefmt_get(const struct vigil_sitefmt_table *t, uint32_t i, struct vigil_site_view *out)
{
    const unsigned char *r = t->records + (size_t)i * RECORD_SIZE;
    out->kind = (enum vigil_site_kind)get32(r + R_KIND);
    out->function = t->strings + get32(r + R_FUNCTION);
    out->file = t->strings + get32(r + R_FILE);
    out->line = get32(r + R_LINE);
    out->column = get32(r + R_COLUMN);
    out->aux = get32(r + R_AUX);
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
    unsigned char *r = b->records + (size_t)index * RECORD_SIZE;
    put32(r + R_KIND, (uint32_t)kind);
    put32(r + R_FUNCTION, function_off);
    put32(r + R_FILE, file_off);
    put32(r + R_LINE, line);
    put32(r + R_COLUMN, column);
    put32(r + R_AUX, aux);
    b->nsites++;
    return index;
}

uint32_t vigil_sitefmt_count(const struct vigil_sitefmt_builder *b)
{
    return b->nsites;
}

static void builder_free(struct vigil_sitefmt_builder *b)
{
    free(b->records);
    free(b->strings);
    free(b->slots);
    free(b);
}

unsigned char *vigil_sitefmt_finish(struct vigil_sitefmt_builder *b, uint64_t tu_hash, size_t *len)
{
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
        if (b->nsites)
            memcpy(out + HEADER_SIZE, b->records, (size_t)b->nsites * RECORD_SIZE);
        memcpy(out + HEADER_SIZE + (size_t)b->nsites * RECORD_SIZE, b->strings, b->strings_len);
        *len = (size_t)total;
    }
    builder_free(b);
    return out;
}
