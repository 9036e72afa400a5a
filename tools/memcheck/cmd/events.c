/* The memory checker's event log reader (events.h; the format in vigil/mcevents.h). */
#include "events.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static uint64_t rd(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

void mc_events_free(struct mc_event_log *l)
{
    free(l->ev);
    *l = (struct mc_event_log){0};
}

int mc_events_parse(const uint8_t *data, size_t size, const char *name, struct mc_event_log *out, char *err,
                    size_t errlen)
{
    *out = (struct mc_event_log){0};
    if (size < VIGIL_MCEV_HEADER_SIZE)
        return fail(err, errlen, "%s: byte %zu: the log ends inside its %d-byte header", name, size,
                    VIGIL_MCEV_HEADER_SIZE);
    if (memcmp(data, VIGIL_MCEV_MAGIC, 8) != 0)
        return fail(err, errlen, "%s: byte 0: expected the magic \"%s\" (a memcheck event log)", name,
                    VIGIL_MCEV_MAGIC);
    uint64_t version = rd(data + 8, 4), rsize = rd(data + 12, 4), n = rd(data + 24, 8);
    if (version != VIGIL_MCEV_VERSION)
        return fail(err, errlen, "%s: byte 8: version %llu, expected %d", name, (unsigned long long)version,
                    VIGIL_MCEV_VERSION);
    if (rsize != VIGIL_MCEV_RECORD_SIZE)
        return fail(err, errlen, "%s: byte 12: record size %llu, expected %d", name, (unsigned long long)rsize,
                    VIGIL_MCEV_RECORD_SIZE);
    size_t body = size - VIGIL_MCEV_HEADER_SIZE;
    if (body % VIGIL_MCEV_RECORD_SIZE != 0)
        return fail(err, errlen, "%s: byte %zu: a partial record (%zu bytes after the last whole one)", name,
                    size - body % VIGIL_MCEV_RECORD_SIZE, body % VIGIL_MCEV_RECORD_SIZE);
    if (n != body / VIGIL_MCEV_RECORD_SIZE)
        return fail(err, errlen, "%s: byte 24: the header counts %llu records, the log holds %zu", name,
                    (unsigned long long)n, body / VIGIL_MCEV_RECORD_SIZE);
    out->dropped = rd(data + 16, 8);
    out->ev = malloc((n ? n : 1) * sizeof *out->ev);
    if (!out->ev)
        return fail(err, errlen, "%s: out of memory for %llu records", name, (unsigned long long)n);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *r = data + VIGIL_MCEV_HEADER_SIZE + i * VIGIL_MCEV_RECORD_SIZE;
        size_t at = (size_t)(r - data);
        struct vigil_mcev *e = &out->ev[i];
        *e = (struct vigil_mcev){.ns = rd(r, 8), .addr = rd(r + 8, 8), .block = rd(r + 16, 8),
                                 .block_size = (uint32_t)rd(r + 24, 4), .site = (uint32_t)rd(r + 28, 4),
                                 .thread = (uint32_t)rd(r + 32, 4), .size = (uint16_t)rd(r + 36, 2),
                                 .kind = r[38], .flags = r[39]};
        if (e->kind >= VIGIL_MCK_KINDS) {
            mc_events_free(out);
            return fail(err, errlen, "%s: byte %zu: record %zu has kind %u, expected 0 to %d", name, at + 38, i,
                        r[38], VIGIL_MCK_KINDS - 1);
        }
        if (e->flags & ~VIGIL_MCEV_FLAGS) {
            mc_events_free(out);
            return fail(err, errlen, "%s: byte %zu: record %zu has flags 0x%02x, expected only 0x%02x's bits", name,
                        at + 39, i, r[39], VIGIL_MCEV_FLAGS);
        }
        if (!(e->flags & VIGIL_MCEV_BLOCK) && (e->block || e->block_size)) {
            mc_events_free(out);
            return fail(err, errlen, "%s: byte %zu: record %zu has a block but not its flag", name, at + 16, i);
        }
        if (e->thread == 0) {
            mc_events_free(out);
            return fail(err, errlen, "%s: byte %zu: record %zu has thread 0, expected 1 or more", name, at + 32, i);
        }
    }
    out->n = n;
    return 0;
}

int mc_events_decode(const uint8_t *data, size_t size, const char *name, struct mc_event_log *out, char *err,
                     size_t errlen)
{
    *out = (struct mc_event_log){0};
    if (size < 4 || rd(data, 4) != ZSTD_MAGICNUMBER)
        return fail(err, errlen, "%s: byte 0: expected zstd-compressed data (magic 28 b5 2f fd)", name);
    ZSTD_DStream *d = ZSTD_createDStream();
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    if (!d || !buf) {
        ZSTD_freeDStream(d);
        free(buf);
        return fail(err, errlen, "%s: out of memory", name);
    }
    ZSTD_initDStream(d);
    ZSTD_inBuffer in = {data, size, 0};
    size_t left = 0;
    int rc = 0;
    while (in.pos < in.size || left > 0) {
        if (len == cap) {
            if (cap >= MC_EVENTS_MAX_BYTES) {
                rc = fail(err, errlen, "%s: decompresses to more than %llu bytes, expected a memcheck event log", name,
                          (unsigned long long)MC_EVENTS_MAX_BYTES);
                break;
            }
            uint8_t *grown = realloc(buf, cap * 2);
            if (!grown) {
                rc = fail(err, errlen, "%s: out of memory", name);
                break;
            }
            buf = grown, cap *= 2;
        }
        ZSTD_outBuffer o = {buf + len, cap - len, 0};
        size_t before = in.pos;
        left = ZSTD_decompressStream(d, &o, &in);
        if (ZSTD_isError(left)) {
            rc = fail(err, errlen, "%s: byte %zu: damaged zstd data (%s)", name, in.pos, ZSTD_getErrorName(left));
            break;
        }
        len += o.pos;
        if (left > 0 && in.pos == in.size && o.pos == 0 && before == in.pos) {
            rc = fail(err, errlen, "%s: byte %zu: truncated: the compressed data ends inside a zstd frame", name,
                      size);
            break;
        }
    }
    ZSTD_freeDStream(d);
    if (rc == 0)
        rc = mc_events_parse(buf, len, name, out, err, errlen);
    free(buf);
    return rc;
}

int mc_events_load(const char *path, struct mc_event_log *out, char *err, size_t errlen)
{
    *out = (struct mc_event_log){0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(err, errlen, "%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0, got;
    uint8_t *data = malloc(cap);
    while (data && (got = fread(data + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *grown = cap < MC_EVENTS_MAX_BYTES ? realloc(data, cap * 2) : NULL;
            if (!grown) {
                free(data);
                data = NULL;
                break;
            }
            data = grown, cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!data)
        return fail(err, errlen, "%s: too large or out of memory", path);
    if (bad) {
        free(data);
        return fail(err, errlen, "%s: read error", path);
    }
    int rc = mc_events_decode(data, len, path, out, err, errlen);
    free(data);
    return rc;
}
