/* Line-oriented text formats: the scaffolding shared by run reports, feedback reports and plan
 * files (see textfmt.h). Strict on purpose: a file that parses "mostly" would give numbers
 * nobody can trust, so every deviation is an error naming the file and the line. */
#include "textfmt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vigil_text_begin(struct vigil_text_reader *r, const struct vigil_text_format *format,
                      const char *text, size_t len, const char *name, char *err, size_t errlen)
{
    *r = (struct vigil_text_reader){.format = format, .name = name, .err = err,
                                    .errlen = errlen, .text = text, .len = len};
}

int vigil_text_vfail(struct vigil_text_reader *r, const char *fmt, va_list ap)
{
    if (!r->err || !r->errlen)
        return -1;
    /* an error before the first line (out of memory) still names a line: readers match on it */
    int n = snprintf(r->err, r->errlen, "%s:%u: ", r->name, r->line ? r->line : 1);
    if (n >= 0 && (size_t)n < r->errlen)
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    return -1;
}

int vigil_text_fail(struct vigil_text_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vigil_text_vfail(r, fmt, ap);
    va_end(ap);
    return -1;
}

int vigil_text_header(struct vigil_text_reader *r, const char *line)
{
    const struct vigil_text_format *f = r->format;
    char q = f->quote;
    size_t m = strlen(f->magic);
    if (strncmp(line, f->magic, m) != 0 || line[m] != ' ')
        return vigil_text_fail(r, "expected %c%s %u%c, the header line; this is not a %s (got %c%.40s%c)",
                               q, f->magic, f->max_version, q, f->what, q, line, q);
    uint64_t version;
    if (vigil_text_decimal(line + m + 1, UINT32_MAX, &version) != 0)
        return vigil_text_fail(r, "expected %c%s %u%c, the header line, with the format version as "
                               "a decimal number (got %c%.40s%c)",
                               q, f->magic, f->max_version, q, q, line, q);
    if (version < f->min_version || version > f->max_version) {
        if (f->min_version == f->max_version)
            return vigil_text_fail(r, "%s version %llu is not supported; this vigil reads version %u",
                                   f->what, (unsigned long long)version, f->max_version);
        return vigil_text_fail(r, "%s version %llu is not supported; this vigil reads versions %u..%u",
                               f->what, (unsigned long long)version, f->min_version, f->max_version);
    }
    r->version = (uint32_t)version;
    return 0;
}

int vigil_text_next_line(struct vigil_text_reader *r, char *buf, size_t size)
{
    const struct vigil_text_format *f = r->format;
    char q = f->quote;
    for (;;) {
        if (r->pos >= r->len) {
            if (r->line == 0) {
                r->line = 1;
                return vigil_text_fail(r, "empty file; expected the header %c%s %u%c", q, f->magic,
                                       f->max_version, q);
            }
            if (!r->ended) {
                if (!f->torn_on_last_line)
                    r->line++;
                return vigil_text_fail(r, "missing %cend%c: the %s is torn (truncated)", q, q, f->what);
            }
            return VIGIL_TEXT_DONE;
        }
        r->line++;
        const char *start = r->text + r->pos;
        const char *nl = memchr(start, '\n', r->len - r->pos);
        if (!nl)
            return vigil_text_fail(r, "last line has no newline: the %s is truncated (torn?)", f->what);
        size_t n = (size_t)(nl - start);
        if (n >= size)
            return vigil_text_fail(r, "line longer than %zu bytes", size - 1);
        /* a NUL would cut the line short unseen; a CR means a file edited into CRLF */
        if (memchr(start, '\0', n) || memchr(start, '\r', n))
            return vigil_text_fail(r, "NUL or carriage return in line; expected text");
        memcpy(buf, start, n);
        buf[n] = '\0';
        r->pos += n + 1;
        if (r->ended)
            return vigil_text_fail(r, "text after %cend%c; expected %cend%c to be the last line",
                                   q, q, q, q);
        if (r->line == 1) {
            if (vigil_text_header(r, buf) != 0)
                return -1;
            continue;
        }
        if (strcmp(buf, "end") == 0) {
            r->ended = 1;
            return VIGIL_TEXT_END;
        }
        return VIGIL_TEXT_LINE;
    }
}

int vigil_text_decimal(const char *s, uint64_t max, uint64_t *out)
{
    if (*s == '\0' || (s[0] == '0' && s[1] != '\0'))
        return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (d > max || v > (max - d) / 10)   /* v * 10 + d would exceed max */
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int vigil_text_expect_decimal(struct vigil_text_reader *r, const char *s, uint64_t max,
                              const char *what, uint64_t *out)
{
    if (vigil_text_decimal(s, max, out) == 0)
        return 0;
    char q = r->format ? r->format->quote : '"';
    return vigil_text_fail(r, "expected %s (a decimal number 0..%llu), got %c%.40s%c", what,
                           (unsigned long long)max, q, s, q);
}

int vigil_text_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int vigil_text_hex(const char *s, unsigned flags, size_t min_digits, size_t max_digits,
                   uint64_t *out)
{
    if (flags & VIGIL_TEXT_HEX_0X) {
        if (s[0] != '0' || s[1] != 'x')
            return -1;
        s += 2;
    }
    size_t n = strlen(s);
    if (n < min_digits || n > max_digits || max_digits > 16)
        return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        int d = vigil_text_hex_digit(*s);
        if (d < 0 || ((flags & VIGIL_TEXT_HEX_LOWERCASE) && *s >= 'A' && *s <= 'F'))
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return 0;
}

int vigil_text_split(struct vigil_text_reader *r, char *line, char **fields, int max)
{
    int n = 0;
    for (char *s = line;; ) {
        if (*s == '\0' || *s == ' ')
            return vigil_text_fail(r, "malformed line: expected a key and fields separated by "
                                   "single spaces (no empty field, no space at either end)");
        if (n == max)
            return vigil_text_fail(r, "malformed line: more than %d fields (the key included)", max);
        fields[n++] = s;
        char *space = strchr(s, ' ');
        if (!space)
            return n;
        *space = '\0';
        s = space + 1;
    }
}

int vigil_text_grow(void **items, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap : 16;
    while (ncap <= n) {
        if (ncap > SIZE_MAX / 2)
            return -1;
        ncap *= 2;
    }
    if (ncap > SIZE_MAX / size)
        return -1;
    void *bigger = realloc(*items, ncap * size);
    if (!bigger)
        return -1;
    *items = bigger;
    *cap = ncap;
    return 0;
}

int vigil_text_load_file(const char *path, size_t max_bytes, char **text, size_t *len,
                         char *err, size_t errlen)
{
    *text = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        int saved = errno;
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(saved));
        errno = saved;
        return -1;
    }
    /* Read one byte more than allowed: that tells a file of max_bytes from a larger one. */
    size_t limit = max_bytes < SIZE_MAX - 1 ? max_bytes + 1 : SIZE_MAX - 1;
    size_t cap = 0, n = 0;
    char *buf = NULL;
    const char *problem = NULL;
    for (;;) {
        if (n == cap) {
            if (cap == limit)
                break;
            size_t ncap = cap ? cap * 2 : 1 << 16;
            if (ncap > limit || ncap < cap)
                ncap = limit;
            char *bigger = realloc(buf, ncap + 1);   /* + 1: the terminating NUL */
            if (!bigger) {
                problem = "out of memory";
                break;
            }
            buf = bigger;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (!problem && ferror(f))
        problem = "read error";
    fclose(f);
    if (!problem && n > max_bytes) {
        snprintf(err, errlen, "%s: larger than %zu bytes, the most this reader takes", path, max_bytes);
        free(buf);
        return -2;
    }
    if (problem) {
        snprintf(err, errlen, "%s: %s", path, problem);
        free(buf);
        return -2;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

/* ---- Percent-escaped fields ---- */

static const char hex_digits[] = "0123456789ABCDEF";

/* Bytes that may appear raw in an escaped field; everything else is %XX. */
static int is_plain_byte(unsigned char c)
{
    return c > 0x20 && c < 0x7f && c != '%';
}

size_t vigil_escape(const char *s, char *out, size_t outlen)
{
    size_t n = 0;
#define PUT(ch) do { if (n + 1 < outlen) out[n] = (ch); n++; } while (0)
    if (*s == '\0') {
        PUT('%');
    } else {
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
            if (is_plain_byte(*p)) {
                PUT((char)*p);
            } else {
                PUT('%');
                PUT(hex_digits[*p >> 4]);
                PUT(hex_digits[*p & 15]);
            }
        }
    }
#undef PUT
    if (outlen > 0)
        out[n < outlen ? n : outlen - 1] = '\0';
    return n;
}

int vigil_unescape(char *s)
{
    if (strcmp(s, "%") == 0) {
        s[0] = '\0';
        return 0;
    }
    char *w = s;
    for (const char *r = s; *r; ) {
        unsigned char c = (unsigned char)*r;
        if (c == '%') {
            int hi = vigil_text_hex_digit(r[1]), lo = hi < 0 ? -1 : vigil_text_hex_digit(r[2]);
            /* %00 would cut the string short: vigil_escape never writes it. */
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                return -1;
            *w++ = (char)(hi << 4 | lo);
            r += 3;
        } else if (is_plain_byte(c)) {
            *w++ = *r++;
        } else {
            return -1;   /* a raw byte that vigil_escape would have escaped */
        }
    }
    *w = '\0';
    return 0;
}
