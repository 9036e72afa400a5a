/* Streaming JSON writer, see json.h. */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void vigil_json_init(struct vigil_json *j, FILE *out, int pretty)
{
    memset(j, 0, sizeof *j);
    j->out = out;
    j->pretty = pretty;
}

static void newline(struct vigil_json *j)
{
    if (!j->pretty)
        return;
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->out);
}

/* Separator before a value or a key: none after a key, a comma between siblings. */
static void before_item(struct vigil_json *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth == 0)
        return;
    if (j->has_items[j->depth - 1])
        fputc(',', j->out);
    j->has_items[j->depth - 1] = 1;
    newline(j);
}

static void open_container(struct vigil_json *j, char c)
{
    before_item(j);
    fputc(c, j->out);
    if (j->depth < VIGIL_JSON_MAX_DEPTH)
        j->has_items[j->depth] = 0;
    j->depth++;
}

static void close_container(struct vigil_json *j, char c)
{
    int had_items = j->depth <= VIGIL_JSON_MAX_DEPTH && j->depth > 0 && j->has_items[j->depth - 1];
    if (j->depth > 0)
        j->depth--;
    if (had_items)
        newline(j);
    fputc(c, j->out);
}

void vigil_json_object_begin(struct vigil_json *j) { open_container(j, '{'); }
void vigil_json_object_end(struct vigil_json *j) { close_container(j, '}'); }
void vigil_json_array_begin(struct vigil_json *j) { open_container(j, '['); }
void vigil_json_array_end(struct vigil_json *j) { close_container(j, ']'); }

/* Length of the valid UTF-8 sequence at s, or 0 when it is invalid (overlong forms,
 * surrogates and code points above U+10FFFF included). */
static int utf8_sequence_length(const unsigned char *s)
{
    unsigned c = s[0];
    int n;
    uint32_t cp, min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07, min = 0x10000;
    else
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)   /* also stops at the terminating NUL */
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

static void write_string(FILE *out, const char *str)
{
    fputc('"', out);
    for (const unsigned char *s = (const unsigned char *)str; *s; ) {
        unsigned c = *s;
        if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc((int)c, out);
            s++;
        } else if (c == '\n') {
            fputs("\\n", out), s++;
        } else if (c == '\t') {
            fputs("\\t", out), s++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(out, "\\u%04x", c), s++;
        } else {
            int n = utf8_sequence_length(s);
            if (n == 0) {
                fputs("\\ufffd", out);
                s++;
            } else {
                fwrite(s, 1, (size_t)n, out);
                s += n;
            }
        }
    }
    fputc('"', out);
}

void vigil_json_key(struct vigil_json *j, const char *key)
{
    before_item(j);
    write_string(j->out, key);
    fputs(j->pretty ? ": " : ":", j->out);
    j->after_key = 1;
}

void vigil_json_string(struct vigil_json *j, const char *s)
{
    if (!s) {
        vigil_json_null(j);
        return;
    }
    before_item(j);
    write_string(j->out, s);
}

void vigil_json_uint(struct vigil_json *j, uint64_t v)
{
    before_item(j);
    fprintf(j->out, "%" PRIu64, v);
}

void vigil_json_int(struct vigil_json *j, int64_t v)
{
    before_item(j);
    fprintf(j->out, "%" PRId64, v);
}

void vigil_json_double(struct vigil_json *j, double v)
{
    if (!isfinite(v)) {
        vigil_json_null(j);
        return;
    }
    /* The shortest of %.15g and %.17g that reads back as the same double: 0.1, not
     * 0.10000000000000001. */
    char buf[32];
    snprintf(buf, sizeof buf, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, sizeof buf, "%.17g", v);
    before_item(j);
    fputs(buf, j->out);
}

void vigil_json_bool(struct vigil_json *j, int v)
{
    before_item(j);
    fputs(v ? "true" : "false", j->out);
}

void vigil_json_null(struct vigil_json *j)
{
    before_item(j);
    fputs("null", j->out);
}

void vigil_json_finish(struct vigil_json *j)
{
    fputc('\n', j->out);
}
