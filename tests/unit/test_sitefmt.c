/* Site table encoder/decoder: round trip, string sharing, and rejection of every kind of
 * malformed input without reading out of bounds (each mutated table is decoded from an exactly
 * sized heap copy, so an over-read shows up under ASan/valgrind). */
#include "check.h"
#include "sitefmt.h"

#include <stdlib.h>
#include <string.h>

static unsigned char *build(size_t *len, uint64_t hash)
{
    struct vigil_sitefmt_builder *b = vigil_sitefmt_builder_new("src/main.c");
    vigil_sitefmt_add(b, VIGIL_SITE_ENTRY, "main", "src/main.c", 10, 1, 0);
    vigil_sitefmt_add(b, VIGIL_SITE_BACKEDGE, "main", "src/main.c", 12, 5, 0);
    vigil_sitefmt_add(b, VIGIL_SITE_LOAD, "helper", "include/h.h", 3, 9, 8);
    vigil_sitefmt_add(b, VIGIL_SITE_CALL, "helper", "", 0, 0, 0);
    return vigil_sitefmt_finish(b, hash, len, NULL, NULL);
}

static int open_copy(const unsigned char *buf, size_t len, char *err, size_t errlen)
{
    unsigned char *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    struct vigil_sitefmt_table t;
    int rc = vigil_sitefmt_open(copy, len, &t, err, errlen);
    free(copy);
    return rc;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static int count_sites(const struct vigil_sitefmt_table *t, void *arg)
{
    *(uint32_t *)arg += t->nsites;
    return 0;
}

static int stop_at_first(const struct vigil_sitefmt_table *t, void *arg)
{
    (void)t;
    ++*(int *)arg;
    return 1;
}

static void test_round_trip(void)
{
    size_t len = 0;
    unsigned char *buf = build(&len, 0x1122334455667788ull);
    CHECK(buf != NULL, "finish returned NULL");
    CHECK(len % 8 == 0, "length %zu not a multiple of 8", len);
    struct vigil_sitefmt_table t;
    char err[200] = "";
    CHECK(vigil_sitefmt_open(buf, len, &t, err, sizeof err) == 0, "open failed: %s", err);
    CHECK(t.nsites == 4, "nsites %u", t.nsites);
    CHECK(t.header->tu_hash == 0x1122334455667788ull, "tu_hash %llx",
          (unsigned long long)t.header->tu_hash);
    CHECK(strcmp(t.strings + t.header->source, "src/main.c") == 0, "source name");
    struct vigil_site_view v;
    vigil_sitefmt_get(&t, 0, &v);
    CHECK(v.kind == VIGIL_SITE_ENTRY && strcmp(v.function, "main") == 0 &&
          strcmp(v.file, "src/main.c") == 0 && v.line == 10 && v.column == 1,
          "site 0: %d %s %s %u %u", v.kind, v.function, v.file, v.line, v.column);
    vigil_sitefmt_get(&t, 2, &v);
    CHECK(v.kind == VIGIL_SITE_LOAD && strcmp(v.function, "helper") == 0 && v.aux == 8 &&
          strcmp(v.file, "include/h.h") == 0 && v.line == 3 && v.column == 9,
          "site 2: %d %s %s %u", v.kind, v.function, v.file, v.aux);
    vigil_sitefmt_get(&t, 3, &v);
    CHECK(v.kind == VIGIL_SITE_CALL && strcmp(v.file, "") == 0 && v.line == 0, "site 3 file '%s'", v.file);
    /* "main", "src/main.c", "helper", "include/h.h" stored once each, plus the empty string. */
    CHECK(t.header->strtab_size == 1 + 5 + 11 + 7 + 12, "strtab_size %u", t.header->strtab_size);
    CHECK(len == 56 + 4 * 12 + 40, "version 3 records are 12 bytes: table of %zu bytes", len);
    CHECK(t.version == 3, "a table without site flags is version %u, not 3", t.version);
    CHECK(strcmp(vigil_site_kind_name(VIGIL_SITE_BACKEDGE), "backedge") == 0, "kind name");
    CHECK(strcmp(vigil_site_kind_name((enum vigil_site_kind)0), "?") == 0, "kind name 0");
    CHECK(strcmp(vigil_site_kind_name((enum vigil_site_kind)99), "?") == 0, "kind name 99");
    free(buf);
}

static void test_empty_table(void)
{
    size_t len = 0;
    unsigned char *buf = vigil_sitefmt_finish(vigil_sitefmt_builder_new(NULL), 7, &len, NULL, NULL);
    struct vigil_sitefmt_table t;
    char err[200] = "";
    CHECK(buf && vigil_sitefmt_open(buf, len, &t, err, sizeof err) == 0, "empty table: %s", err);
    CHECK(buf && t.nsites == 0 && t.strings[t.header->source] == '\0', "empty table contents");
    free(buf);
}

/* Values wider than their field in a version 3 record read back as 0 (unknown); the widest
 * that fit read back exactly. */
static void test_field_limits(void)
{
    struct vigil_sitefmt_builder *b = vigil_sitefmt_builder_new("big.c");
    vigil_sitefmt_add(b, VIGIL_SITE_LOAD, "f", "big.c", (1u << 22) - 1, 1023, 255);
    vigil_sitefmt_add(b, VIGIL_SITE_STORE, "f", "big.c", 1u << 22, 1024, 256);
    size_t len = 0;
    unsigned char *buf = vigil_sitefmt_finish(b, 3, &len, NULL, NULL);
    struct vigil_sitefmt_table t;
    char err[200] = "";
    CHECK(buf && vigil_sitefmt_open(buf, len, &t, err, sizeof err) == 0, "open: %s", err);
    struct vigil_site_view v;
    vigil_sitefmt_get(&t, 0, &v);
    CHECK(v.kind == VIGIL_SITE_LOAD && v.line == (1u << 22) - 1 && v.column == 1023 && v.aux == 255 &&
          strcmp(v.file, "big.c") == 0, "widest values: %u %u %u", v.line, v.column, v.aux);
    vigil_sitefmt_get(&t, 1, &v);
    CHECK(v.kind == VIGIL_SITE_STORE && v.line == 0 && v.column == 0 && v.aux == 0 && strcmp(v.function, "f") == 0,
          "too wide: %u %u %u", v.line, v.column, v.aux);
    free(buf);
}

/* Site flags (atomic accesses): a table with flags is version 4 and reads them back; one
 * without stays version 3, so that readers of versions 1 to 3 read it as before. */
static void test_site_flags(void)
{
    size_t len = 0;
    unsigned char *plain = build(&len, 5);
    struct vigil_sitefmt_table t;
    struct vigil_site_view v;
    char err[200] = "";
    CHECK(plain && vigil_sitefmt_open(plain, len, &t, err, sizeof err) == 0 && t.version == 3 &&
          t.header->version == 3, "a table without flags: version %u (%s)", plain ? t.header->version : 0, err);
    for (uint32_t i = 0; plain && i < t.nsites; i++) {
        vigil_sitefmt_get(&t, i, &v);
        CHECK(v.flags == 0, "version 3 site %u has flags %u", i, v.flags);
    }

    struct vigil_sitefmt_builder *b = vigil_sitefmt_builder_new("at.c");
    uint32_t load = vigil_sitefmt_add(b, VIGIL_SITE_LOAD, "consumer", "at.c", 7, 12, 4);
    uint32_t store = vigil_sitefmt_add(b, VIGIL_SITE_STORE, "producer", "at.c", 9, 3, 4);
    uint32_t rmw = vigil_sitefmt_add(b, VIGIL_SITE_STORE, "bump", "at.c", 11, 5, 8);
    uint32_t other = vigil_sitefmt_add(b, VIGIL_SITE_LOAD, "bump", "at.c", 12, 5, 8);
    vigil_sitefmt_set_flags(b, load, VIGIL_SITE_ATOMIC | VIGIL_SITE_ACQUIRE);
    vigil_sitefmt_set_flags(b, store, VIGIL_SITE_ATOMIC | VIGIL_SITE_RELEASE | 0xf0);   /* high bits dropped */
    vigil_sitefmt_set_flags(b, rmw, VIGIL_SITE_FLAGS_ALL);
    vigil_sitefmt_set_flags(b, 99, VIGIL_SITE_ATOMIC);   /* no such site: ignored */
    unsigned char *buf = vigil_sitefmt_finish(b, 6, &len, NULL, NULL);
    CHECK(buf && vigil_sitefmt_open(buf, len, &t, err, sizeof err) == 0, "version 4 open: %s", err);
    if (!buf)
        return;
    CHECK(t.version == 4 && t.header->version == 4 && t.header->record_size == 12 && t.nsites == 4,
          "a table with flags: version %u, record size %u", t.header->version, t.header->record_size);
    vigil_sitefmt_get(&t, load, &v);
    CHECK(v.kind == VIGIL_SITE_LOAD && v.flags == (VIGIL_SITE_ATOMIC | VIGIL_SITE_ACQUIRE) && !strcmp(v.function, "consumer") &&
          !strcmp(v.file, "at.c") && v.line == 7 && v.column == 12 && v.aux == 4,
          "atomic load: kind %d flags %u %s %s:%u:%u aux %u", v.kind, v.flags, v.function, v.file, v.line, v.column, v.aux);
    vigil_sitefmt_get(&t, store, &v);
    CHECK(v.kind == VIGIL_SITE_STORE && v.flags == (VIGIL_SITE_ATOMIC | VIGIL_SITE_RELEASE) && !strcmp(v.function, "producer"),
          "atomic store: flags %u %s", v.flags, v.function);
    vigil_sitefmt_get(&t, rmw, &v);
    CHECK(v.flags == VIGIL_SITE_FLAGS_ALL && !strcmp(v.function, "bump") && v.aux == 8, "rmw: flags %u", v.flags);
    vigil_sitefmt_get(&t, other, &v);
    CHECK(v.flags == 0 && v.kind == VIGIL_SITE_LOAD && !strcmp(v.function, "bump"), "plain load in a version 4 table: %u", v.flags);
    /* word 0 of the atomic load: kind, flags, function name offset */
    const unsigned char *r = t.records + (size_t)load * 12;
    uint32_t w0 = (uint32_t)r[0] | (uint32_t)r[1] << 8 | (uint32_t)r[2] << 16 | (uint32_t)r[3] << 24;
    CHECK(w0 >> 28 == VIGIL_SITE_LOAD && ((w0 >> 24) & 0xf) == (VIGIL_SITE_ATOMIC | VIGIL_SITE_ACQUIRE) &&
          !strcmp(t.strings + (w0 & 0xffffff), "consumer"), "version 4 word 0: %08x", w0);
    /* a reader that knows only versions 1 to 3 refuses it by its version; so does this one a 6 */
    unsigned char *copy = malloc(len);
    memcpy(copy, buf, len);
    put32(copy + 8, 6);
    CHECK(open_copy(copy, len, err, sizeof err) == -1 && strstr(err, "version 6, expected 1 to 5"), "version 6: %s", err);
    free(copy);
    free(buf);
    free(plain);

    /* Flags set to 0 only: still version 3. */
    b = vigil_sitefmt_builder_new("z.c");
    vigil_sitefmt_set_flags(b, vigil_sitefmt_add(b, VIGIL_SITE_LOAD, "f", "z.c", 1, 1, 4), 0);
    buf = vigil_sitefmt_finish(b, 7, &len, NULL, NULL);
    CHECK(buf && vigil_sitefmt_open(buf, len, &t, err, sizeof err) == 0 && t.version == 3, "zero flags: version %u", t.version);
    free(buf);

    /* A function name whose offset needs more than 24 bits reads back as unknown in version 4
     * (its site stays, with its kind, file and flags), and exactly in version 3. */
    for (int with_flags = 0; with_flags < 2; with_flags++) {
        b = vigil_sitefmt_builder_new("big.c");
        size_t n = (1u << 24) + 16;
        char *longname = malloc(n + 1);
        memset(longname, 'x', n);
        longname[n] = '\0';
        vigil_sitefmt_add(b, VIGIL_SITE_ENTRY, longname, "big.c", 1, 1, 0);   /* pushes "late" past 2^24 */
        uint32_t s = vigil_sitefmt_add(b, VIGIL_SITE_LOAD, "late", "big.c", 2, 1, 4);
        if (with_flags)
            vigil_sitefmt_set_flags(b, s, VIGIL_SITE_ATOMIC);
        buf = vigil_sitefmt_finish(b, 8, &len, NULL, NULL);
        CHECK(buf && vigil_sitefmt_open(buf, len, &t, err, sizeof err) == 0, "long names: %s", err);
        if (buf) {
            vigil_sitefmt_get(&t, s, &v);
            CHECK(t.version == (uint32_t)(3 + with_flags) && v.kind == VIGIL_SITE_LOAD && !strcmp(v.file, "big.c") &&
                  v.flags == (with_flags ? VIGIL_SITE_ATOMIC : 0u) && !strcmp(v.function, with_flags ? "" : "late"),
                  "version %u, a name past 2^24: '%s' flags %u", t.version, v.function, v.flags);
        }
        free(longname);
        free(buf);
    }
}

static void test_many_sites(void)
{
    struct vigil_sitefmt_builder *b = vigil_sitefmt_builder_new("many.c");
    char name[32];
    for (uint32_t i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "f%u", i % 700);
        uint32_t idx = vigil_sitefmt_add(b, VIGIL_SITE_STORE, name, "many.c", i, i % 80, 4);
        if (idx != i) {
            CHECK(idx == i, "index %u for site %u", idx, i);
            break;
        }
    }
    CHECK(vigil_sitefmt_count(b) == 5000, "count %u", vigil_sitefmt_count(b));
    size_t len = 0;
    unsigned char *buf = vigil_sitefmt_finish(b, 1, &len, NULL, NULL);
    struct vigil_sitefmt_table t;
    char err[200] = "";
    CHECK(vigil_sitefmt_open(buf, len, &t, err, sizeof err) == 0, "open: %s", err);
    struct vigil_site_view v;
    vigil_sitefmt_get(&t, 4321, &v);
    CHECK(strcmp(v.function, "f121") == 0 && v.line == 4321 && v.column == 4321 % 80,
          "site 4321: %s %u", v.function, v.line);
    free(buf);
}

static void test_truncation(void)
{
    size_t len = 0;
    unsigned char *buf = build(&len, 1);
    char err[200];
    int rejected = 1;
    for (size_t n = 0; n < len; n++)
        if (open_copy(buf, n, err, sizeof err) == 0) {
            rejected = 0;
            CHECK(0, "truncated to %zu of %zu bytes accepted", n, len);
        }
    CHECK(rejected, "every truncation rejected");
    CHECK(open_copy(buf, 10, err, sizeof err) != 0 && strstr(err, "truncated"), "reason: %s", err);
    free(buf);
}

static void test_bad_header(void)
{
    size_t len = 0;
    unsigned char *buf = build(&len, 1);
    unsigned char *bad = malloc(len);
    char err[200];

    memcpy(bad, buf, len);
    bad[0] = 'X';
    CHECK(open_copy(bad, len, err, sizeof err) != 0 && strstr(err, "magic"), "bad magic: %s", err);

    memcpy(bad, buf, len);
    put32(bad + 8, VIGIL_SITEFMT_VERSION + 1);
    CHECK(open_copy(bad, len, err, sizeof err) != 0 && strstr(err, "version"), "bad version: %s", err);

    memcpy(bad, buf, len);
    put32(bad + 24, 0xffffffffu);   /* nsites: would overflow a 32-bit size computation */
    CHECK(open_copy(bad, len, err, sizeof err) != 0, "huge nsites accepted");

    memcpy(bad, buf, len);
    put32(bad + 32, 0xfffffff0u);   /* strtab_size */
    CHECK(open_copy(bad, len, err, sizeof err) != 0, "huge strtab accepted");

    memcpy(bad, buf, len);
    put32(bad + 36, (uint32_t)len + 8);  /* total_size beyond the buffer */
    CHECK(open_copy(bad, len, err, sizeof err) != 0, "total_size beyond buffer accepted");

    memcpy(bad, buf, len);
    put32(bad + 48, 8);             /* version 3 with inline control-flow facts */
    CHECK(open_copy(bad, len, err, sizeof err) != 0 && strstr(err, "vigil_cfg"), "inline facts: %s", err);

    memcpy(bad, buf, len);
    put32(bad + 40, 4096);          /* source offset */
    CHECK(open_copy(bad, len, err, sizeof err) != 0 && strstr(err, "source"), "bad source: %s", err);
    free(bad);
    free(buf);
}

static void test_bad_records(void)
{
    size_t len = 0;
    unsigned char *buf = build(&len, 1);
    unsigned char *bad = malloc(len);
    char err[200];
    uint32_t strtab_size = ((const struct vigil_sitefmt_header *)buf)->strtab_size;
    const size_t rec1 = 56 + 12;    /* second record: word 0 = kind << 28 | function, word 1 = file */
    const uint32_t backedge = (uint32_t)VIGIL_SITE_BACKEDGE << 28;

    memcpy(bad, buf, len);
    put32(bad + rec1, backedge | strtab_size);        /* function offset just out of range */
    CHECK(open_copy(bad, len, err, sizeof err) != 0 && strstr(err, "site 1"), "function offset: %s", err);

    memcpy(bad, buf, len);
    put32(bad + rec1 + 4, 0x00800000u);               /* file offset */
    CHECK(open_copy(bad, len, err, sizeof err) != 0, "file offset accepted");

    memcpy(bad, buf, len);
    put32(bad + rec1, backedge | (strtab_size - 1));  /* last byte: the empty string, valid */
    CHECK(open_copy(bad, len, err, sizeof err) == 0, "last strtab offset rejected: %s", err);

    memcpy(bad, buf, len);
    put32(bad + rec1, 1);                             /* kind 0 */
    CHECK(open_copy(bad, len, err, sizeof err) != 0 && strstr(err, "kind"), "kind 0: %s", err);
    put32(bad + rec1, (uint32_t)(VIGIL_SITE_KIND_MAX + 1) << 28 | 1);
    CHECK(open_copy(bad, len, err, sizeof err) != 0, "kind max+1 accepted");

    /* A string table whose last string is not terminated. */
    memcpy(bad, buf, len);
    bad[56 + 4 * 12 + strtab_size - 1] = 'x';
    CHECK(open_copy(bad, len, err, sizeof err) != 0, "unterminated strtab accepted");
    free(bad);
    free(buf);
}

/* A section as the linker leaves it: tables of tu_hash 1 and 2 (bytes in *a, *b), 16 zero
 * bytes between them and 8 after. */
enum { SECTION_PAD = 16 };
static unsigned char *two_table_section(unsigned char **a, size_t *a_len, unsigned char **b, size_t *b_len,
                                        size_t *len)
{
    *a = build(a_len, 1);
    *b = build(b_len, 2);
    *len = *a_len + SECTION_PAD + *b_len + 8;
    unsigned char *section = calloc(1, *len);
    memcpy(section, *a, *a_len);
    memcpy(section + *a_len + SECTION_PAD, *b, *b_len);
    return section;
}

static void test_walk(void)
{
    size_t a_len = 0, b_len = 0, len = 0, pad = SECTION_PAD;
    unsigned char *a, *b, *section = two_table_section(&a, &a_len, &b, &b_len, &len);
    char err[200] = "";
    uint32_t nsites = 0;
    int n = vigil_sitefmt_walk(section, len, count_sites, &nsites, err, sizeof err);
    CHECK(n == 2, "walk found %d tables: %s", n, err);
    CHECK(nsites == 8, "walk saw %u sites", nsites);

    int calls = 0;
    n = vigil_sitefmt_walk(section, len, stop_at_first, &calls, err, sizeof err);
    CHECK(n == 1 && calls == 1, "stop: n=%d calls=%d", n, calls);

    CHECK(vigil_sitefmt_walk(section, 0, count_sites, &nsites, err, sizeof err) == 0, "empty section");

    section[a_len + 3] = 0x55;                 /* garbage inside the padding */
    CHECK(vigil_sitefmt_walk(section, len, NULL, NULL, err, sizeof err) == -1 && strstr(err, "offset"),
          "garbage between tables: %s", err);
    section[a_len + 3] = 0;
    /* Second table cut short. */
    CHECK(vigil_sitefmt_walk(section, a_len + pad + b_len - 8, NULL, NULL, err, sizeof err) == -1,
          "truncated second table accepted");
    /* Non-zero byte in a table's own padding. */
    memcpy(section, a, a_len);
    if (((const struct vigil_sitefmt_header *)a)->total_size >
        56 + 4 * 12 + ((const struct vigil_sitefmt_header *)a)->strtab_size) {
        section[a_len - 1] = 1;
        CHECK(vigil_sitefmt_walk(section, len, NULL, NULL, err, sizeof err) == -1, "dirty padding accepted");
    }
    free(section);
    free(a);
    free(b);
}

/* The runtime's lookup of one module's table in a section (runtime/sitefile.c): by tu_hash
 * and site count, past padding, with a malformed table on the way reported. */
static void test_find(void)
{
    size_t a_len = 0, b_len = 0, len = 0, pad = SECTION_PAD;
    unsigned char *a, *b, *section = two_table_section(&a, &a_len, &b, &b_len, &len);
    char err[200] = "";
    struct vigil_sitefmt_table t;
    CHECK(vigil_sitefmt_find(section, len, 2, 4, &t, err, sizeof err) == 0 &&
          t.header == (const void *)(section + a_len + pad), "second table not found: %s", err);
    struct vigil_site_view v;
    vigil_sitefmt_get(&t, 2, &v);
    CHECK(strcmp(v.function, "helper") == 0 && v.line == 3, "found table reads %s:%u", v.function, v.line);
    CHECK(vigil_sitefmt_find(section, len, 1, 4, &t, err, sizeof err) == 0 && t.header == (const void *)section,
          "first table not found");
    CHECK(vigil_sitefmt_find(section, len, 3, 4, &t, err, sizeof err) == 1, "unknown tu_hash found");
    CHECK(vigil_sitefmt_find(section, len, 2, 5, &t, err, sizeof err) == 1, "wrong site count accepted");
    section[a_len + pad] = 'X';   /* the second table's magic */
    CHECK(vigil_sitefmt_find(section, len, 2, 4, &t, err, sizeof err) == -1 && strstr(err, "magic"),
          "malformed table on the way: %s", err);
    CHECK(vigil_sitefmt_find(section, len, 1, 4, &t, err, sizeof err) == 0, "a table before the bad one");
    free(section);
    free(a);
    free(b);
}

/* Version 2 control-flow facts: round trip, absence, and out-of-range indices rejected. */
static void test_cfg(void)
{
    struct vigil_sitefmt_builder *b = vigil_sitefmt_builder_new("a.c");
    vigil_sitefmt_add(b, VIGIL_SITE_ENTRY, "f", "a.c", 1, 0, 0);
    uint32_t br = vigil_sitefmt_add(b, VIGIL_SITE_BRANCH, "f", "a.c", 2, 0, 0);
    uint32_t f = vigil_sitefmt_add_function(b, "f", 3, VIGIL_CFG_ADDRESS_TAKEN);
    vigil_sitefmt_add_edge(b, 0, 1, VIGIL_EDGE_TRUE);
    vigil_sitefmt_add_edge(b, 0, 2, VIGIL_EDGE_FALSE);
    vigil_sitefmt_add_edge(b, 1, 2, VIGIL_EDGE_ALWAYS);
    vigil_sitefmt_add_exit(b, 2);
    vigil_sitefmt_add_call(b, f, 1, "g");
    vigil_sitefmt_add_call(b, f, 2, "");
    vigil_sitefmt_set_block(b, br, f, 0);
    uint32_t g = vigil_sitefmt_add_function(b, "g", 1, 0);
    vigil_sitefmt_add_exit(b, 0);
    uint32_t ret = vigil_sitefmt_add(b, VIGIL_SITE_RETURN, "f", "a.c", 3, 0, 0);
    vigil_sitefmt_add_removed(b, br, 1, ret);
    size_t len = 0, cfg_len = 0;
    unsigned char *cfgblob = NULL;
    unsigned char *buf = vigil_sitefmt_finish(b, 7, &len, &cfgblob, &cfg_len);
    struct vigil_sitefmt_table t;
    char err[200] = "";
    CHECK(buf && cfgblob && vigil_sitefmt_open(buf, len, &t, err, sizeof err) == 0, "open: %s", err);
    if (!buf || !cfgblob)
        return;
    struct vigil_cfg cfg;
    CHECK(vigil_sitefmt_cfg(&t, &cfg, err, sizeof err) == 0, "facts not attached yet");
    CHECK(cfg_len % 8 == 0, "blob length %zu", cfg_len);
    /* a section: zero padding, a blob of another table, the table's own blob */
    size_t other_len = 0, section_len = 8 + 2 * cfg_len;
    unsigned char *other_cfg = NULL, *section = calloc(1, section_len);
    memcpy(section + 8, cfgblob, cfg_len);
    put32(section + 8 + 16, 8);                   /* another tu_hash */
    memcpy(section + 8 + cfg_len, cfgblob, cfg_len);
    size_t other_cfg_len = 0;
    free(vigil_sitefmt_finish(vigil_sitefmt_builder_new("x.c"), 8, &other_len, &other_cfg, &other_cfg_len));
    CHECK(other_cfg == NULL, "a table without functions has no facts");
    CHECK(vigil_sitefmt_attach_cfg(section, section_len, &t, 1, err, sizeof err) == 1, "attach: %s", err);
    CHECK(t.cfg == section + 8 + cfg_len + 32, "attached to the blob with the table's hash");
    CHECK(vigil_sitefmt_cfg(&t, &cfg, err, sizeof err) == 1, "cfg: %s", err);
    CHECK(cfg.nfunctions == 2 && g == 1, "functions %u", cfg.nfunctions);
    CHECK(strcmp(cfg.functions[0].name, "f") == 0 && cfg.functions[0].nblocks == 3 &&
          cfg.functions[0].flags == VIGIL_CFG_ADDRESS_TAKEN, "function 0");
    CHECK(cfg.functions[0].nedges == 3 && cfg.functions[0].edges[1].to == 2 &&
          cfg.functions[0].edges[1].label == VIGIL_EDGE_FALSE, "edges of f");
    CHECK(cfg.functions[0].nexits == 1 && cfg.functions[0].exits[0] == 2, "exits of f");
    CHECK(cfg.functions[1].nedges == 0 && cfg.functions[1].nexits == 1 && cfg.functions[1].exits[0] == 0, "g");
    CHECK(cfg.ncalls == 2 && strcmp(cfg.calls[0].callee, "g") == 0 && cfg.calls[1].callee[0] == 0, "calls");
    CHECK(cfg.site_function[1] == 0 && cfg.site_block[1] == 0 && cfg.site_function[0] == VIGIL_CFG_NONE,
          "site blocks");
    CHECK(cfg.nremoved == 1 && cfg.removed[0].site == br && cfg.removed[0].predicate == 1 &&
          cfg.removed[0].source == ret, "removed predicates: %u", cfg.nremoved);
    vigil_cfg_free(&cfg);
    /* an edge to block 9 of a 3-block function */
    unsigned char *edge_to = section + 8 + cfg_len + 32 + 4 * (4 + 2 * 7) + 4;
    put32(edge_to, 9);
    CHECK(vigil_sitefmt_cfg(&t, &cfg, err, sizeof err) == -1 && strstr(err, "out of range"), "bad edge: %s", err);
    /* malformed sections: every truncation, a bad magic, a size that is not a multiple of 4 */
    for (size_t n = 1; n < cfg_len; n++) {
        unsigned char *cut = malloc(n);
        memcpy(cut, cfgblob, n);
        t.cfg = NULL;
        if (vigil_sitefmt_attach_cfg(cut, n, &t, 1, err, sizeof err) != -1)
            CHECK(0, "blob cut to %zu of %zu bytes accepted", n, cfg_len);
        free(cut);
    }
    section[8] = 'X';
    CHECK(vigil_sitefmt_attach_cfg(section, section_len, &t, 1, err, sizeof err) == -1 && strstr(err, "offset 8"),
          "bad magic: %s", err);
    section[8] = cfgblob[0];
    put32(section + 8 + 28, 6);
    CHECK(vigil_sitefmt_attach_cfg(section, section_len, &t, 1, err, sizeof err) == -1 && strstr(err, "multiple of 4"),
          "bad size: %s", err);
    free(section);
    free(cfgblob);
    free(buf);
}

/* A table of an earlier version, by hand: 24-byte records; version 2 with its facts inline. */
static size_t legacy_table(unsigned char *out, uint32_t version)
{
    static const char strings[] = "\0f\0a.c";   /* "", "f" at 1, "a.c" at 3 */
    static const uint32_t records[2][6] = {{VIGIL_SITE_ENTRY, 1, 3, 7, 2, 0}, {VIGIL_SITE_LOAD, 1, 3, 8, 5, 4}};
    /* counts; function f: name, 1 block, flags, first edge, 0 edges, first exit, 1 exit; exit 0;
     * sites 0 and 1 in f's block 0 */
    static const uint32_t facts[] = {1, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
    uint32_t header = version == 1 ? 48 : 56, cfg = version == 1 ? 0 : sizeof facts;
    uint32_t used = header + 2 * 24 + sizeof strings + cfg, total = (used + 7) & ~7u;
    memset(out, 0, total);
    memcpy(out, "VGLSITES", 8);
    uint32_t fields[] = {version, header, 9, 0, 2, 24, sizeof strings, total, 3, 0, cfg, 0};
    for (size_t i = 0; i < (version == 1 ? 10 : 12); i++)
        put32(out + 8 + 4 * i, fields[i]);
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 6; k++)
            put32(out + header + 24 * r + 4 * k, records[r][k]);
    memcpy(out + header + 48, strings, sizeof strings);
    for (size_t i = 0; i < cfg / 4; i++)
        put32(out + header + 48 + sizeof strings + 4 * i, facts[i]);
    return total;
}

static void test_legacy_versions(void)
{
    unsigned char buf[256];
    struct vigil_sitefmt_table t;
    struct vigil_cfg cfg;
    struct vigil_site_view v;
    char err[200] = "";
    for (uint32_t version = 1; version <= 2; version++) {
        size_t len = legacy_table(buf, version);
        CHECK(vigil_sitefmt_open(buf, len, &t, err, sizeof err) == 0, "version %u rejected: %s", version, err);
        vigil_sitefmt_get(&t, 1, &v);
        CHECK(t.nsites == 2 && v.kind == VIGIL_SITE_LOAD && strcmp(v.function, "f") == 0 && strcmp(v.file, "a.c") == 0 &&
              v.line == 8 && v.column == 5 && v.aux == 4, "version %u site 1: %d %s %u", version, v.kind, v.function, v.line);
        int rc = vigil_sitefmt_cfg(&t, &cfg, err, sizeof err);
        CHECK(rc == (version == 2), "version %u facts: %d %s", version, rc, err);
        if (rc == 1) {
            CHECK(cfg.nfunctions == 1 && strcmp(cfg.functions[0].name, "f") == 0 && cfg.functions[0].nexits == 1 &&
                  cfg.site_function[1] == 0, "version 2 facts decoded");
            vigil_cfg_free(&cfg);
        }
    }
    size_t len = legacy_table(buf, 2);
    put32(buf + 28, 12);   /* version 2 with version 3's record size */
    CHECK(vigil_sitefmt_open(buf, len, &t, err, sizeof err) == -1 && strstr(err, "record size"), "v2 with 12: %s", err);
}

/* Version 5: sites in inlined code name their source function; a table with flags and
 * inlined sites keeps both; the inlined name's offset is checked at open. */
static void test_inlined(void)
{
    size_t len = 0;
    struct vigil_sitefmt_table t;
    struct vigil_site_view v;
    char err[200] = "";
    struct vigil_sitefmt_builder *b = vigil_sitefmt_builder_new("proc.c");
    uint32_t own = vigil_sitefmt_add(b, VIGIL_SITE_BRANCH, "unblock_process", "proc.c", 300, 7, 0);
    uint32_t in = vigil_sitefmt_add(b, VIGIL_SITE_BRANCH, "unblock_process", "proc.c", 125, 9, 0);
    uint32_t atomic = vigil_sitefmt_add(b, VIGIL_SITE_LOAD, "unblock_process", "list.h", 12, 3, 4);
    vigil_sitefmt_set_inlined(b, in, "del_ele");
    vigil_sitefmt_set_inlined(b, atomic, "list_head");
    vigil_sitefmt_set_inlined(b, own, "");      /* not inlined: nothing recorded */
    vigil_sitefmt_set_inlined(b, 77, "nowhere");   /* no such site: ignored */
    vigil_sitefmt_set_flags(b, atomic, VIGIL_SITE_ATOMIC);
    unsigned char *buf = vigil_sitefmt_finish(b, 9, &len, NULL, NULL);
    CHECK(buf && vigil_sitefmt_open(buf, len, &t, err, sizeof err) == 0, "version 5 open: %s", err);
    if (!buf)
        return;
    CHECK(t.version == 5 && t.header->record_size == 16 && t.nsites == 3, "version %u, record size %u, %u sites",
          t.version, t.header->record_size, t.nsites);
    vigil_sitefmt_get(&t, own, &v);
    CHECK(!strcmp(v.function, "unblock_process") && !strcmp(v.inlined, "") &&
          !strcmp(vigil_site_source_function(&v), "unblock_process") && v.line == 300, "own site: %s/%s:%u",
          v.function, v.inlined, v.line);
    vigil_sitefmt_get(&t, in, &v);
    CHECK(!strcmp(v.function, "unblock_process") && !strcmp(v.inlined, "del_ele") &&
          !strcmp(vigil_site_source_function(&v), "del_ele") && v.line == 125 && v.column == 9 &&
          v.kind == VIGIL_SITE_BRANCH, "inlined site: %s/%s:%u:%u", v.function, v.inlined, v.line, v.column);
    vigil_sitefmt_get(&t, atomic, &v);
    CHECK(!strcmp(v.inlined, "list_head") && v.flags == VIGIL_SITE_ATOMIC && v.aux == 4 && !strcmp(v.file, "list.h"),
          "inlined atomic load: %s flags %u aux %u", v.inlined, v.flags, v.aux);
    /* lazy open reads it the same */
    CHECK(vigil_sitefmt_open_lazy(buf, len, &t, err, sizeof err) == 0, "lazy open: %s", err);
    vigil_sitefmt_get(&t, in, &v);
    CHECK(!strcmp(vigil_site_source_function(&v), "del_ele"), "lazy: %s", v.inlined);
    /* word 3 of a record out of the string table: rejected by a full open, "" from a lazy one */
    unsigned char *bad = malloc(len);
    memcpy(bad, buf, len);
    put32(bad + t.header->header_size + (size_t)in * 16 + 12, 0x7fffffff);
    CHECK(open_copy(bad, len, err, sizeof err) != 0 && strstr(err, "string offset"), "bad inlined offset accepted: %s", err);
    CHECK(vigil_sitefmt_open_lazy(bad, len, &t, err, sizeof err) == 0, "lazy open of a bad record: %s", err);
    vigil_sitefmt_get(&t, in, &v);
    CHECK(!strcmp(v.inlined, "") && !strcmp(vigil_site_source_function(&v), "unblock_process"),
          "bad offset read lazily: '%s'", v.inlined);
    /* a version 5 table whose record size says 12 is refused */
    memcpy(bad, buf, len);
    put32(bad + 28, 12);
    CHECK(open_copy(bad, len, err, sizeof err) != 0 && strstr(err, "record size"), "version 5 with 12-byte records: %s", err);
    free(bad);
    free(buf);
    /* without inlined sites the table stays version 3 */
    b = vigil_sitefmt_builder_new("plain.c");
    vigil_sitefmt_add(b, VIGIL_SITE_ENTRY, "main", "plain.c", 1, 0, 0);
    buf = vigil_sitefmt_finish(b, 10, &len, NULL, NULL);
    CHECK(buf && vigil_sitefmt_open(buf, len, &t, err, sizeof err) == 0 && t.version == 3, "no inlined sites: version %u",
          buf ? t.version : 0);
    free(buf);
}

int main(void)
{
    test_round_trip();
    test_empty_table();
    test_field_limits();
    test_site_flags();
    test_many_sites();
    test_truncation();
    test_bad_header();
    test_bad_records();
    test_walk();
    test_find();
    test_cfg();
    test_legacy_versions();
    test_inlined();
    return CHECK_DONE("sitefmt");
}
