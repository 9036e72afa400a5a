/* The byte layout of site tables and control-flow facts (sitefmt.h), shared by the decoder
 * (sitefmt.c), the facts' decoder (sitefmt_cfg.c) and the encoder (sitefmt_build.c). Not a
 * contract of its own: only those three include it. They are three files so that a program
 * links only the decoder (the runtime reads its tables; libvigil_common.a is linked on demand).
 * Every multi-byte field is written and read byte by byte in little-endian order, so tables
 * read from a file need not be aligned and the format does not depend on the host. */
#ifndef VIGIL_SITEFMT_LAYOUT_H
#define VIGIL_SITEFMT_LAYOUT_H
#include "sitefmt.h"

#include <stdarg.h>
#include <stdio.h>

#define HEADER_SIZE_V1 48u
#define HEADER_SIZE 56u
#define RECORD_SIZE 12u      /* versions 3 and 4 */
#define RECORD_SIZE_V5 16u   /* version 5: a fourth word, the source function */
#define RECORD_SIZE_V2 24u   /* versions 1 and 2 */
#define CFG_HEADER_SIZE 32u
_Static_assert(sizeof(struct vigil_sitefmt_header) == HEADER_SIZE, "header layout");
_Static_assert(sizeof(struct vigil_cfgfmt_header) == CFG_HEADER_SIZE, "cfg header layout");

/* The fields of a version 3 record (sitefmt.h): widths, and the shift of the field that shares
 * a word with another. Version 4 takes the flags from the function name's top four bits. */
enum { R_FUNCTION_BITS = 28, R_FILE_BITS = 24, R_LINE_BITS = 22, R_COLUMN_BITS = 10, R_AUX_BITS = 8,
       R_FUNCTION_BITS_V4 = 24, R_FLAGS_BITS = 4 };
_Static_assert(VIGIL_SITE_KIND_MAX < 1u << (32 - R_FUNCTION_BITS), "kind fits beside the function name");
_Static_assert(VIGIL_SITE_FLAGS_ALL < 1u << R_FLAGS_BITS && R_FUNCTION_BITS_V4 + R_FLAGS_BITS == R_FUNCTION_BITS,
               "version 4 flags fit between the function name and the kind");

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

static inline uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static inline void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static inline int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static inline uint32_t low_bits(uint32_t v, unsigned bits)
{
    return v & ((UINT32_C(1) << bits) - 1);
}

/* v when it fits in `bits` bits, else 0 (unknown). */
static inline uint32_t fit(uint32_t v, unsigned bits)
{
    return v >> bits ? 0 : v;
}

/* The linker may pad between the tables (or blobs) it concatenates: where the next one starts. */
static inline size_t skip_padding(const unsigned char *p, size_t len, size_t pos)
{
    while (pos < len && p[pos] == 0)
        pos++;
    return pos;
}

struct record {
    uint32_t kind, function, file, line, column, aux, flags, inlined;
};

/* Bytes per record of a version. */
static inline uint32_t record_size_of(uint32_t version)
{
    return version < 3 ? RECORD_SIZE_V2 : version < 5 ? RECORD_SIZE : RECORD_SIZE_V5;
}

/* A record of a table of the given version (its record size follows from the version, checked
 * at open). */
static inline struct record read_record(const unsigned char *r, uint32_t version)
{
    if (version < 3)
        return (struct record){get32(r), get32(r + 4), get32(r + 8), get32(r + 12), get32(r + 16), get32(r + 20), 0};
    uint32_t w0 = get32(r), w1 = get32(r + 4), w2 = get32(r + 8);
    unsigned function_bits = version >= 4 ? R_FUNCTION_BITS_V4 : R_FUNCTION_BITS;
    return (struct record){.kind = w0 >> R_FUNCTION_BITS, .function = low_bits(w0, function_bits),
                           .flags = version >= 4 ? low_bits(w0 >> R_FUNCTION_BITS_V4, R_FLAGS_BITS) : 0,
                           .file = low_bits(w1, R_FILE_BITS), .aux = w1 >> R_FILE_BITS,
                           .line = low_bits(w2, R_LINE_BITS), .column = w2 >> R_LINE_BITS,
                           .inlined = version >= 5 ? get32(r + 12) : 0};
}

/* A version 3, 4 or 5 record (v->flags is written from version 4, v->inlined in version 5). */
static inline void write_record(unsigned char *r, const struct record *v, uint32_t version)
{
    if (version >= 4)
        put32(r, v->kind << R_FUNCTION_BITS | low_bits(v->flags, R_FLAGS_BITS) << R_FUNCTION_BITS_V4 |
                     fit(v->function, R_FUNCTION_BITS_V4));
    else
        put32(r, v->kind << R_FUNCTION_BITS | fit(v->function, R_FUNCTION_BITS));
    put32(r + 4, fit(v->aux, R_AUX_BITS) << R_FILE_BITS | fit(v->file, R_FILE_BITS));
    put32(r + 8, fit(v->column, R_COLUMN_BITS) << R_LINE_BITS | fit(v->line, R_LINE_BITS));
    if (version >= 5)
        put32(r + 12, v->inlined);
}

#endif
