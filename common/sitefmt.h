/* Site table encoding: written by vigil-cc into the ELF section "vigil_sites" (one table per
 * translation unit; the linker concatenates them, possibly with zero padding in between),
 * read from the ELF file by the `vigil` command and, when a report names sites, by libvigil
 * (runtime/sitefile.c). On x86-64 the section is not loaded; elsewhere it is, and libvigil
 * reads it from memory.
 *
 * Layout, little-endian, every table 8-byte aligned and a multiple of 8 bytes long:
 *   header   struct vigil_sitefmt_header
 *   records  nsites x record (version 5: 16 bytes; 3-4: 12 bytes, see below; 1-2: 24 bytes)
 *   strings  strtab_size bytes of NUL-terminated strings (offset 0 is the empty string)
 *   cfg      (version 2 only) cfg_size bytes of control-flow facts, all uint32 (see below)
 *   padding  zero bytes up to total_size
 *
 * A version 3 record is three uint32 words; a value too wide for its field is written as 0
 * (unknown), which costs a name or a column in a report, never a site:
 *   word 0   function name (strtab offset, bits 0-27) | kind (bits 28-31)
 *   word 1   file name (strtab offset, bits 0-23) | aux (bits 24-31)
 *   word 2   line (bits 0-21) | column (bits 22-31)
 * A version 4 record is the same but for word 0, which also holds the site's flags
 * (VIGIL_SITE_ATOMIC...: what kind of access a load or store site is):
 *   word 0   function name (strtab offset, bits 0-23) | flags (bits 24-27) | kind (bits 28-31)
 * A version 5 record is a version 4 record and a fourth word:
 *   word 3   the source function (strtab offset; 0: the same as the function): the function
 *            the site's code was written in, when the optimizer inlined it into `function`
 *            (the innermost scope of the site's debug location, which has an inlined-at
 *            chain); the line, column and file are then that function's
 * The encoder writes the oldest version that holds the table: 5 when some site is in inlined
 * code, else 4 when some site has flags (a translation unit with atomic accesses), else 3:
 * readers that know fewer versions keep reading every table that needs nothing new, and
 * refuse the others by their version number.
 * Versions 1 and 2 wrote six uint32 words: kind, function, file, line, column, aux.
 *
 * Control-flow facts: the facts `vigil plan` needs for post-dominators and the
 * interprocedural control dependence graph, about the ORIGINAL code (the checking copy before
 * any vigil code is added; block 0 = the function's entry). Only the vigil command reads them,
 * so since version 3 they live in a section of their own, "vigil_cfg", that is not loaded
 * into memory: one blob per table (struct vigil_cfgfmt_header, then cfg_size bytes, zero
 * padding to 8), found by the table's tu_hash and site count. Version 2 tables carry them
 * inline, after the strings. Names in them are offsets into the table's strings.
 *   nfunctions, nedges, nexits, ncalls
 *   functions  nfunctions x {name (strtab), nblocks, flags, first_edge, nedges, first_exit, nexits}
 *   edges      nedges x {from block, to block, label}   label: VIGIL_EDGE_* or 3 + k = switch
 *                                                       successor k (0 = default)
 *   exits      nexits x {block}   blocks ending in ret / unreachable / a noreturn call
 *   calls      ncalls x {function index, block, callee name (strtab; 0 = indirect call)};
 *              a block that hands a function's address on (a callback) calls it too
 *   sites      nsites x {function index, block}   (VIGIL_CFG_NONE when not in a body block)
 *   nremoved, then nremoved x {branch site, predicate (0 false, 1 true), source site}:
 *              branch predicates whose counter vigil-cc left out (seed 002 section 3.1); the
 *              count of one is the sum of all predicate counts of its source site. Optional:
 *              facts written before it end after `sites`.
 * Version 1 tables are still read (they have no control-flow facts).
 */
#ifndef VIGIL_SITEFMT_H
#define VIGIL_SITEFMT_H
#include <stddef.h>
#include <stdint.h>

#define VIGIL_SITEFMT_MAGIC "VGLSITES"
#define VIGIL_SITEFMT_VERSION 5          /* the newest this code reads and writes */
#define VIGIL_SITES_SECTION "vigil_sites"
#define VIGIL_CFG_SECTION "vigil_cfg"
#define VIGIL_CFGFMT_MAGIC "VGLCFLOW"
#define VIGIL_CFGFMT_VERSION 1

enum vigil_site_kind {
    VIGIL_SITE_ENTRY = 1,    /* dispatch check at function entry */
    VIGIL_SITE_BACKEDGE = 2, /* dispatch check on a loop back-edge */
    VIGIL_SITE_LOAD = 3,
    VIGIL_SITE_STORE = 4,
    VIGIL_SITE_BRANCH = 5,   /* conditional branch: predicates taken / not taken; aux
                                nonzero: a condition with no CFG edge (VIGIL_BRANCH_*) */
    VIGIL_SITE_RETURN = 6,   /* call returning an integer or pointer: <0, ==0, >0 */
    VIGIL_SITE_CALL = 7,
    VIGIL_SITE_CASE = 8,     /* one successor of a switch (aux: its index k, 0 = default):
                                predicates the switch went elsewhere / took it */
    VIGIL_SITE_KIND_MAX = 8
};

/* aux of a BRANCH site whose condition has no edge: predicates false / true all the same */
#define VIGIL_BRANCH_SELECT 1   /* a select's condition (an if/else or ?: folded into one) */
#define VIGIL_BRANCH_VALUE 2    /* a comparison used as a number (zext/sext of an i1) */

/* Flags of a site (version 4 records; 0 in earlier versions). Load and store sites of atomic
 * instructions: an atomic load is a LOAD site, an atomic store, read-modify-write (atomicrmw)
 * or compare-and-exchange a STORE site. ACQUIRE and RELEASE give the ordering: neither for
 * relaxed (monotonic, unordered), ACQUIRE for acquire, RELEASE for release, both for
 * acq_rel and seq_cst (a compare-and-exchange's failure ordering adds ACQUIRE when it has it). */
enum vigil_site_flag {
    VIGIL_SITE_ATOMIC = 1u << 0,    /* an atomic instruction's access: never a data race with another atomic */
    VIGIL_SITE_ACQUIRE = 1u << 1,
    VIGIL_SITE_RELEASE = 1u << 2,
    VIGIL_SITE_RMW = 1u << 3,       /* read-modify-write or compare-and-exchange (a STORE site that also reads) */
    VIGIL_SITE_FLAGS_ALL = 0xf
};

struct vigil_sitefmt_header {
    char magic[8];          /* VIGIL_SITEFMT_MAGIC, not NUL-terminated */
    uint32_t version;       /* VIGIL_SITEFMT_VERSION */
    uint32_t header_size;   /* sizeof(struct vigil_sitefmt_header) */
    uint64_t tu_hash;       /* identity: hash of the source path and the module's IR */
    uint32_t nsites;
    uint32_t record_size;   /* bytes per record: 16 (version 5), 12 (versions 3-4), 24 (1-2) */
    uint32_t strtab_size;
    uint32_t total_size;    /* header + records + strings + padding */
    uint32_t source;        /* strtab offset: the translation unit's main source file */
    uint32_t flags;         /* reserved, 0 */
    uint32_t cfg_size;      /* version 2: bytes of control-flow facts after the strings; 3: 0 */
    uint32_t reserved;      /* version 2 and later: 0 */
};

/* The header of one table's control-flow facts in the "vigil_cfg" section. */
struct vigil_cfgfmt_header {
    char magic[8];          /* VIGIL_CFGFMT_MAGIC, not NUL-terminated */
    uint32_t version;       /* VIGIL_CFGFMT_VERSION */
    uint32_t header_size;   /* sizeof(struct vigil_cfgfmt_header) */
    uint64_t tu_hash;       /* the site table's */
    uint32_t nsites;        /* the site table's */
    uint32_t cfg_size;      /* bytes of facts after this header (a multiple of 4) */
};

/* A decoded view; pointers point into the encoded buffer (no copies, no allocation). */
struct vigil_site_view {
    enum vigil_site_kind kind;
    const char *function, *file;
    uint32_t line, column, aux;   /* aux: access size in bytes for LOAD/STORE (0 = variable);
                                     the switch successor's index for CASE */
    uint32_t flags;               /* VIGIL_SITE_ATOMIC...; 0 before version 4 */
    const char *inlined;          /* the function the site was written in when it was inlined
                                     into `function` (the compiled function that holds it), ""
                                     otherwise (and before version 5) */
};

/* The function a user wrote the site in: the inlined one if any, else the compiled one. */
static inline const char *vigil_site_source_function(const struct vigil_site_view *v)
{
    return v->inlined && v->inlined[0] ? v->inlined : v->function;
}

struct vigil_sitefmt_table {
    const struct vigil_sitefmt_header *header;
    const unsigned char *records;
    const char *strings;
    uint32_t nsites;
    uint32_t strtab_size;
    uint32_t record_size;
    uint32_t version;           /* the table's format version (1 to VIGIL_SITEFMT_VERSION) */
    const unsigned char *cfg;   /* control-flow facts: inline (version 2), attached (3), or NULL */
    uint32_t cfg_size;
};

const char *vigil_site_kind_name(enum vigil_site_kind kind);   /* "entry", "backedge", ... */
/* An atomic site's ordering from its flags: "relaxed", "acquire", "release" or "acq_rel" (which
 * includes seq_cst); NULL when the flags do not say atomic. */
const char *vigil_site_ordering_name(uint32_t flags);

/* Validate one table at buf (len bytes available). Returns 0 and fills *t, or -1 and writes a
 * one-line reason into err. Never reads out of bounds, whatever buf holds. */
int vigil_sitefmt_open(const void *buf, size_t len, struct vigil_sitefmt_table *t,
                       char *err, size_t errlen);
/* The same without the pass over every record: for the runtime, which opens the tables of its
 * own process at start-up and reads few records (the pass made a program's whole site table
 * resident: lua's is 940 KB). vigil_sitefmt_get stays in bounds all the same. */
int vigil_sitefmt_open_lazy(const void *buf, size_t len, struct vigil_sitefmt_table *t,
                            char *err, size_t errlen);
/* Header fields of an open table: its identity and its main source file. */
uint64_t vigil_sitefmt_tu_hash(const struct vigil_sitefmt_table *t);
const char *vigil_sitefmt_source(const struct vigil_sitefmt_table *t);
/* Site i of an open table (i < t->nsites). A record that a lazy open did not check reads as
 * kind 0 ("?") with empty names when its kind or a string offset is out of range. */
void vigil_sitefmt_get(const struct vigil_sitefmt_table *t, uint32_t i, struct vigil_site_view *out);
/* Walk a concatenation of tables (a whole section): skips zero padding between tables.
 * Calls fn for each valid table (a non-zero return stops the walk); returns the number of
 * tables visited, or -1 on a malformed one. */
int vigil_sitefmt_walk(const void *buf, size_t len,
                       int (*fn)(const struct vigil_sitefmt_table *t, void *arg), void *arg,
                       char *err, size_t errlen);

/* The table with this identity in a concatenation of tables, each opened lazily (the runtime
 * reads its tables from the file's section: only the headers on the way are touched).
 * Returns 0 and fills *t; 1 when no table has it; -1 on a malformed table on the way. */
int vigil_sitefmt_find(const void *buf, size_t len, uint64_t tu_hash, uint32_t nsites,
                       struct vigil_sitefmt_table *t, char *err, size_t errlen);

/* ---- Control-flow facts ---- */
#define VIGIL_CFG_NONE 0xffffffffu
enum { VIGIL_EDGE_ALWAYS = 0, VIGIL_EDGE_TRUE = 1, VIGIL_EDGE_FALSE = 2, VIGIL_EDGE_CASE0 = 3 };
enum { VIGIL_CFG_ADDRESS_TAKEN = 1 };   /* function flags */

struct vigil_cfg_edge { uint32_t from, to, label; };
struct vigil_cfg_function {
    const char *name;
    uint32_t nblocks, flags;
    uint32_t nedges, nexits;
    const struct vigil_cfg_edge *edges;   /* into vigil_cfg.edges */
    const uint32_t *exits;                /* into vigil_cfg.exits */
};
struct vigil_cfg_call { uint32_t function, block; const char *callee; };   /* callee "" = indirect */
struct vigil_cfg_removed { uint32_t site, predicate, source; };
struct vigil_cfg {
    uint32_t nfunctions, nedges, nexits, ncalls, nsites, nremoved;
    struct vigil_cfg_function *functions;
    struct vigil_cfg_edge *edges;
    uint32_t *exits;
    struct vigil_cfg_call *calls;
    uint32_t *site_function, *site_block;   /* nsites each */
    struct vigil_cfg_removed *removed;      /* nremoved */
};
/* Give each table of tables[0..ntables) its control-flow facts from a "vigil_cfg" section
 * (buf, len bytes: blobs, possibly with zero padding in between; the section must outlive the
 * tables). A blob whose table is not among them is skipped. Returns the number of tables
 * given facts, or -1 with a reason when the section is malformed (never reads out of bounds). */
int vigil_sitefmt_attach_cfg(const void *buf, size_t len, struct vigil_sitefmt_table *tables, size_t ntables,
                             char *err, size_t errlen);
/* Decode the control-flow facts of a validated table into malloc'd arrays (strings point into
 * the table). Returns 1, 0 when the table has none (version 1, built without, or not
 * attached), or -1 with a reason when they are malformed (every index is checked). */
int vigil_sitefmt_cfg(const struct vigil_sitefmt_table *t, struct vigil_cfg *cfg, char *err, size_t errlen);
void vigil_cfg_free(struct vigil_cfg *cfg);

/* Encoder, used by vigil-cc. Grows its own buffers with malloc. */
struct vigil_sitefmt_builder;
struct vigil_sitefmt_builder *vigil_sitefmt_builder_new(const char *source);
uint32_t vigil_sitefmt_add(struct vigil_sitefmt_builder *b, enum vigil_site_kind kind,
                           const char *function, const char *file, uint32_t line,
                           uint32_t column, uint32_t aux);   /* returns the local index */
uint32_t vigil_sitefmt_count(const struct vigil_sitefmt_builder *b);
/* The flags of site index (VIGIL_SITE_ATOMIC...; bits beyond VIGIL_SITE_FLAGS_ALL are dropped).
 * A table with a site that has flags is written as version 4. */
void vigil_sitefmt_set_flags(struct vigil_sitefmt_builder *b, uint32_t index, uint32_t flags);
/* Site index is in code inlined from `function` (its source function, sitefmt.h); "" or
 * NULL: not inlined. A table with such a site is written as version 5. */
void vigil_sitefmt_set_inlined(struct vigil_sitefmt_builder *b, uint32_t index, const char *function);
/* Control-flow facts: a function (returns its index), then its edges and exits, in order;
 * calls and site blocks at any time after the function was added. */
uint32_t vigil_sitefmt_add_function(struct vigil_sitefmt_builder *b, const char *name, uint32_t nblocks,
                                    uint32_t flags);
void vigil_sitefmt_add_edge(struct vigil_sitefmt_builder *b, uint32_t from, uint32_t to, uint32_t label);
void vigil_sitefmt_add_exit(struct vigil_sitefmt_builder *b, uint32_t block);
void vigil_sitefmt_add_call(struct vigil_sitefmt_builder *b, uint32_t function, uint32_t block, const char *callee);
void vigil_sitefmt_set_block(struct vigil_sitefmt_builder *b, uint32_t site, uint32_t function, uint32_t block);
/* Branch predicate `predicate` of `site` is not counted: its count is source's total. */
void vigil_sitefmt_add_removed(struct vigil_sitefmt_builder *b, uint32_t site, uint32_t predicate, uint32_t source);
/* Produces the encoded table (malloc'd, *len bytes, multiple of 8) and, when cfg is not NULL,
 * its control-flow facts as a "vigil_cfg" blob (*cfg malloc'd, *cfg_len bytes, multiple of 8;
 * NULL when no function was added); the builder is freed. */
unsigned char *vigil_sitefmt_finish(struct vigil_sitefmt_builder *b, uint64_t tu_hash, size_t *len,
                                    unsigned char **cfg, size_t *cfg_len);

#endif
